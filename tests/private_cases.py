"""What the private-release tests share: OpenDP's output held fixed, so a test checks the bookkeeping
around OpenDP (packages, budgets, neighbouring files) without a minute of synthesis."""

from __future__ import annotations

import polars as pl


class HeldRelease:
    """OpenDP's output held fixed (whatever the records): a contingency table of a model
    with a fixed total, fixed keys, fixed marginals and a fixed draw."""

    def __init__(self, plan, keys):
        self.columns = list(plan.columns)
        self.cut = {c.column: len(c.cuts) + 1 for c in plan.cuts}  # OpenDP names a number column's bins itself
        self.keys = {
            c: pl.Series(
                c,
                [f"bin {i}" for i in range(self.cut[c])]
                if c in self.cut
                else [*(keys[c] if keys[c] is not None else ("found 0", "found 1")), None],  # None: OpenDP finds them
            )
            for c in self.columns
        }
        self.model = type("Model", (), {"total": 500.0})()

    def synthesize(self, rows, method):
        assert method == "sample"
        return pl.DataFrame(
            {c: [float(i % 3) if c in self.cut else self.keys[c][i % 2] for i in range(rows)] for c in self.columns}
        )

    def project_melted(self, clique):
        values = [self.keys[c].to_list()[:2] for c in clique]
        rows = [dict(zip(clique, cell)) for cell in zip(*values)]
        return pl.DataFrame([{**row, "len": 100.0 + i} for i, row in enumerate(rows)])
