"""build_report(..., reuse=) takes the sections on the table (risk, leakage, individual privacy,
attacker models) from a report of the same table and p, so a change of k recomputes only what
depends on it: the result must equal a report built from scratch, and a report of another p,
table or adversary is not reused."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import anonlib.workflow.report as report_module
from anonlib.core.dataset import Dataset
from anonlib.core.samples import load_sample
from anonlib.measures.target import ReleaseTarget
from anonlib.workflow.report import build_report


def random_table(seed: int) -> Dataset:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(40, 200))
    frame = pd.DataFrame(
        {
            "age": rng.integers(20, 60, n),
            "sex": rng.choice(["F", "M"], n),
            "zip": rng.choice(["1000", "1001", "1002", "2000"], n),
            "dx": rng.choice(["flu", "asthma", "none"], n),
        }
    )
    return Dataset.from_frame(
        f"t{seed}",
        frame,
        {"age": "quasi-identifier", "sex": "quasi-identifier", "zip": "quasi-identifier", "dx": "sensitive"},
    )


@pytest.mark.parametrize("seed", range(6))
def test_a_reused_report_equals_one_built_from_scratch(seed):
    ds = random_table(seed)
    rng = np.random.default_rng(seed)
    p = float(rng.choice([0.0, 0.3]))
    first = build_report(ds, target=ReleaseTarget(k=2), p=p)
    for k in (3, 5, 2):
        target = ReleaseTarget(k=k)
        again = build_report(ds, target=target, p=p, reuse=first)
        assert again == build_report(ds, target=target, p=p)
        assert again.privacy is first.privacy and again.leakage is first.leakage  # taken, not recomputed


def test_reuse_skips_the_sections_on_the_table(monkeypatch):
    ds = load_sample("arca_table1")
    first = build_report(ds, k=3, p=0.2)
    calls = []
    real = report_module._privacy_section
    monkeypatch.setattr(report_module, "_privacy_section", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    build_report(ds, k=4, p=0.2, reuse=first)
    assert calls == []
    other_p = build_report(ds, k=4, p=0.3, reuse=first)  # another p: individual privacy is computed again
    assert calls == [1] and other_p.privacy == build_report(ds, k=4, p=0.3).privacy
    other_table = load_sample("caballero_table2b")
    assert build_report(other_table, k=2, reuse=first) == build_report(other_table, k=2)
    narrower = build_report(ds, k=4, p=0.2, max_known=1, reuse=first)  # another adversary
    assert narrower.privacy.max_known == 1 and narrower == build_report(ds, k=4, p=0.2, max_known=1)


def test_notes_of_reused_sections_stay_in_section_order():
    ds = load_sample("caballero_table2b")  # no sensitive attribute: an Individual privacy note
    first = build_report(ds, k=2, max_lattice=1)  # and a Suggested generalization note
    again = build_report(ds, k=3, max_lattice=1, reuse=first)
    assert [n.section for n in again.notes] == [n.section for n in build_report(ds, k=3, max_lattice=1).notes]
    assert again == build_report(ds, k=3, max_lattice=1)


@pytest.mark.parametrize("seed", range(8))
def test_the_generalization_cost_on_distinct_combinations_is_the_cost_on_every_record(seed):
    """The suggested generalization's cost is measured on the distinct combinations with their
    records; it must say what measuring every record says (the old way)."""
    from anonlib.core.dataset import Role
    from anonlib.core.default_hierarchy import default_hierarchy
    from anonlib.core.hierarchy import levels_of
    from anonlib.workflow.cost import step_cost
    from anonlib.workflow.steps import GeneralizationStep

    rng = np.random.default_rng(seed)
    ds = random_table(seed)
    frame = ds.frame.astype({"age": "Int64"}).copy()
    frame.loc[rng.random(len(frame)) < 0.1, "age"] = pd.NA
    frame.loc[rng.random(len(frame)) < 0.1, "zip"] = None
    qis = ("age", "sex", "zip")
    hierarchies = {a: default_hierarchy(frame[a], a)[1] for a in qis}
    levels = {a: int(rng.integers(0, levels_of(h) + 1)) for a, h in hierarchies.items()}
    step = GeneralizationStep(levels, hierarchies, method="manual")
    every = step_cost(step, Dataset.from_frame("analysed", frame, {a: Role.QUASI_IDENTIFIER for a in qis}))
    combined = step_cost(step, report_module._combinations(frame, qis, None))
    assert combined.sentences() == every.sentences()
    assert combined.removes_quasi_identifier == every.removes_quasi_identifier
    assert (combined.records_changed, combined.records_before) == (every.records_changed, every.records_before)
