"""The Risk report's summary derives from the release target's check, as its box does: it
said "Every class already has at least 5 records; no generalization is needed" above
its own "Not met" box when k held in records but the target counted people, or when k held
but a privacy model failed. The summary now opens with the box's sentence and never says
nothing is needed while the target is not met."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from anonlib.core.dataset import Dataset
from anonlib.measures.models import ModelRequirement
from anonlib.workflow import ReleaseTarget, WorkingCopy
from anonlib.workflow.report import copy_report

ROOT = Path(__file__).resolve().parents[2]
NOTHING_NEEDED = "no generalization is needed"


def records_not_people() -> Dataset:
    """Four classes of 6 records on (age, sex), each from 2 people of 3 visits: k = 6 in
    records, 2 in people."""
    rows = []
    for c, (age, sex) in enumerate([(30, "F"), (30, "M"), (50, "F"), (50, "M")]):
        for person in range(2):
            rows += [{"pid": f"p{c}{person}", "age": age, "sex": sex, "dx": "flu"}] * 3
    frame = pd.DataFrame(rows)
    return Dataset.from_frame("visits.csv", frame, {"pid": "person", "age": "quasi-identifier",
                                                    "sex": "quasi-identifier", "dx": "ignore"})  # fmt: skip


def k_but_not_the_model() -> Dataset:
    """Two classes of 6 records; one holds a single diagnosis (fails distinct 2-diversity)."""
    frame = pd.DataFrame({"age": [30] * 6 + [50] * 6, "dx": ["flu"] * 6 + ["flu", "copd"] * 3, "sex": ["F"] * 12})
    return Dataset.from_frame("d.csv", frame, {"age": "quasi-identifier", "sex": "quasi-identifier",
                                               "dx": "sensitive"})  # fmt: skip


CASES = {
    "people": (records_not_people, ReleaseTarget(k=5)),
    "model": (k_but_not_the_model, ReleaseTarget(k=5, requirements=(ModelRequirement("distinct_l", "dx", 2),))),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_summary_says_what_the_box_says(case):
    make, target = CASES[case]
    copy = WorkingCopy.start(make(), target)
    check = copy.check
    assert not check.met  # the box: not met
    report = copy_report(copy)
    summary = " ".join(report.sentences)
    assert check.sentence() in summary and check.sentence().startswith("Not met")
    assert NOTHING_NEEDED not in summary
    # the suggested generalization is searched under the whole target in its unit (people, the
    # models), so it raises levels where k alone in records needed nothing
    assert report.generalization is not None and any(level for _, level, _, _ in report.generalization.levels)


def test_a_met_target_still_says_no_generalization_is_needed():
    frame = pd.DataFrame({"age": [30] * 6 + [50] * 6, "sex": ["F"] * 12})
    copy = WorkingCopy.start(Dataset.from_frame("d.csv", frame, {"age": "quasi-identifier"}), ReleaseTarget(k=5))
    summary = " ".join(copy_report(copy).sentences)
    assert copy.check.met and copy.check.sentence() in summary and NOTHING_NEEDED in summary


@pytest.mark.parametrize("case", list(CASES))
def test_the_report_page_summary_and_box_agree(case):
    make, target = CASES[case]
    at = AppTest.from_file(str(ROOT / "pages" / "report.py"), default_timeout=120)
    at.session_state["active_dataset"] = make()
    at.session_state["active_source"] = "upload:d.csv"
    at.session_state["release_target"] = target
    at.run()
    assert not at.exception
    box = [w.value for w in at.warning if "against the release target" in w.value]
    assert box and "Not met" in box[0]
    shown = [re.sub(r"\\(.)", r"\1", m.value) for m in at.markdown]  # plain() escapes markdown
    clean = next(m for m in shown if "against the release target (" in m)
    verdict = re.sub(r"\\(.)", r"\1", box[0]).split("against the release target. ", 1)[1]
    assert verdict in clean and NOTHING_NEEDED not in clean
