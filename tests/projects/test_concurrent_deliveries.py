"""Deliveries of one project released at the same time (``integrity.md`` part 3): each delivery's
cumulative check and its audit entry are one transaction per project, so ten deliveries released
from ten processes at once are each checked against every one recorded before them: the union of
what was released meets the cumulative target (recounted with pandas), on SQLite and on the real
PostgreSQL server the tests start."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from cli_processes import run_in_processes

from anonlib.cli import main
from anonlib.projects import ProjectStore, audit_entries, verify_chain
from tests.health_data import history_sharing

DELIVERIES = 10
K = 4


def delivery(split: int | None) -> pd.DataFrame:
    """32 people in two groups (``a``) of 16. The first delivery (``split`` None) halves each group
    by ``b``; a later one halves each half again, by split 0 or by split 1: either alone leaves
    every history shared by 4 people, the two together by 2 (they cut across each other)."""
    rows = []
    for person in range(32):
        group, j = divmod(person, 16)
        half, q = divmod(j, 8)
        b = half if split is None else (q // 4 if split == 0 else (q // 2) % 2)
        rows.append({"pid": f"p{person:03d}", "a": f"g{group}", "b": "xy"[b]})
    return pd.DataFrame(rows)


def test_ten_deliveries_released_at_once_meet_the_cumulative_target_on_their_union(
    tmp_path: Path, store_url, capsys, monkeypatch
):
    monkeypatch.setenv("ANONLIB_STORE", store_url)
    delivery(None).to_csv(tmp_path / "d0.csv", index=False)
    first = [
        "anonymize", tmp_path / "d0.csv", "--person", "pid", "--pseudonymize", "pid", "--shield", "a,b", "--k",
        K, "--max-suppressed", "0.1", "--out", tmp_path / "o0.csv", "--recipe", tmp_path / "r.json",
        "--project", "p",
    ]  # fmt: skip
    assert main([str(a) for a in first]) == 0, capsys.readouterr().err
    capsys.readouterr()
    argvs = []
    for i in range(1, DELIVERIES + 1):
        delivery(i % 2).to_csv(tmp_path / f"d{i}.csv", index=False)
        argvs.append(
            ["apply", tmp_path / "r.json", tmp_path / f"d{i}.csv", "--project", "p", "--out", tmp_path / f"o{i}.csv"]
        )
    done = run_in_processes(argvs, {"ANONLIB_STORE": store_url}, together=True)
    assert {d.code for d in done} <= {0, 2}, [d.err for d in done]
    for d in done:  # a refusal is one sentence, nothing of it written
        if d.code == 2:
            assert d.err.count("error:") == 1 and "error: Refused, nothing written" in d.err, d.err
    released = [0] + [i for i, d in enumerate(done, start=1) if d.code == 0]
    assert sorted(p.name for p in tmp_path.glob("o*.csv")) == sorted(f"o{i}.csv" for i in released)
    # the deliveries of the split recorded first pass, the other split's are refused: 5 and 5
    assert len(released) == 1 + DELIVERIES // 2 and len({i % 2 for i in released[1:]}) == 1
    # pandas: every person's history across everything released is shared by at least K people
    union = pd.concat([pd.read_csv(tmp_path / f"o{i}.csv", dtype=str).assign(delivery=str(i)) for i in released])
    assert history_sharing(union, ["delivery", "a", "b"], "pid").min() >= K
    store = ProjectStore(store_url)
    assert verify_chain(store) == [] and len(audit_entries(store, "p")) == len(released)
