"""A panel released per record with its person column unnamed as such (dp.md part 4):
``synthesize`` without ``--person`` warns in one sentence, naming the column found by the file's
structure and how many records its most frequent person has; with ``--person`` it does not.
OpenDP's output is held fixed (``HeldRelease``): the warning is what is tested."""

from __future__ import annotations

import numpy as np
import pytest
from private_cases import HeldRelease

from anonlib.cli import main
from anonlib.transformations import synthesis
from tests.panel_shapes import labour


@pytest.fixture
def held(monkeypatch):
    monkeypatch.setattr(synthesis, "opendp_release", lambda data, plan, keys, *a, **k: HeldRelease(plan, keys))
    monkeypatch.setattr(synthesis, "_fresh_rng", lambda: np.random.default_rng(0))


def test_a_labour_panel_released_per_record_warns_naming_its_person(tmp_path, capsys, held):
    frame = labour(people=60)
    path = tmp_path / "nlswork.csv"
    frame.to_csv(path, index=False)
    most = int(frame["idcode"].value_counts().max())
    argv = ["synthesize", str(path), "--columns", "race,c_city", "--values-from-data", "--epsilon", "1"]
    argv += ["--out", str(tmp_path / "a.csv")]
    assert main(argv) in (0, 1)  # released (1: OpenDP's output held fixed fails the quality checks)
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning: ")]
    assert warnings == [
        f"warning: idcode looks like a person column (year varies within its values): this release is per record, "
        f"so ε protects one record, not a person with up to {most} records (about {most}ε for them, and δ grows "
        "faster); give --person idcode (the person role) to protect the person."
    ]
    argv[-1] = str(tmp_path / "b.csv")
    assert main([*argv, "--person", "idcode", "--records-per-person", "15"]) in (0, 1)
    assert "warning: " not in capsys.readouterr().err
