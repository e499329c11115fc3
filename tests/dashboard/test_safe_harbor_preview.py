"""The Dataset page's Safe Harbor preview counts what the step changes: with every
age at most 89 no age is changed, so the preview says no age is relabelled and counts only
the records whose dates or ZIP codes change (it said "age: values relabelled (40 values),
19,609 records changed (100%)" because 64 written as "64" counted as a change); the page and
the ``safe-harbor`` command say the same number of records for every change."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
from streamlit.testing.v1 import AppTest

from anonlib.__main__ import main
from anonlib.core.dataset import Dataset
from anonlib.workflow import step_cost
from anonlib.workflow.health_steps import SafeHarborStep
from tests.health_data import visits

ROOT = Path(__file__).resolve().parents[2]
YEAR = 2021


def young(seed: int = 4, people: int = 60) -> pd.DataFrame:
    """Visits whose oldest person is 64, with dates; ZIP codes as text (leading zeros)."""
    frame = visits(seed, people)
    return frame.assign(age=frame["age"].clip(upper=64)).drop(columns=["discharge_date"])


def test_no_age_over_89_means_no_age_changed_and_the_records_are_counted_by_hand():
    frame = young()
    ds = Dataset.from_frame("visits.csv", frame, {"mrn": "person"})
    step = SafeHarborStep.planned(ds.frame, reference_year=YEAR, leave=["mrn"])
    assert "age" in step.columns  # the rule is planned for age ...
    cost = step_cost(step, ds)
    assert "age" not in cost.changed_columns  # ... and changes no age
    assert not any(s.startswith("age") for s in cost.sentences())
    after = step.apply(ds.frame)
    changed = (after["visit_date"] != frame["visit_date"]) | (after["zip"] != frame["zip"])  # a ZIP is always cut
    assert cost.records_changed == int(changed.sum())
    assert f"{cost.records_changed:,} records changed" in " ".join(cost.sentences())
    cells = int((after["visit_date"] != frame["visit_date"]).sum() + (after["zip"] != frame["zip"]).sum())
    assert cost.cells_changed == cells
    assert step.changed_records(cost) == {
        "visit_date": int((after["visit_date"] != frame["visit_date"]).sum()),
        "age": 0,
        "zip": len(frame),
    }


def test_ages_over_89_are_counted_as_the_records_top_coded():
    frame = visits(4, 60)
    ds = Dataset.from_frame("visits.csv", frame, {"mrn": "person"})
    step = SafeHarborStep.planned(ds.frame, reference_year=YEAR, leave=["mrn"])
    counts = step.changed_records(step_cost(step, ds))
    assert counts["age"] == int((frame["age"] >= 90).sum()) > 0


def test_the_page_and_the_command_line_say_the_same_changes(tmp_path, monkeypatch, capsys):
    frame = young()
    monkeypatch.chdir(tmp_path)
    frame.to_csv("visits.csv", index=False)
    assert main(["safe-harbor", "visits.csv", "--reference-year", str(YEAR), "--role", "mrn=person"]) == 0
    printed = [
        line[len("change") :].strip() for line in capsys.readouterr().out.splitlines() if line.startswith("change")
    ]
    assert main(["safe-harbor", "visits.csv", "--reference-year", str(YEAR), "--role", "mrn=person", "--json"]) == 0
    changes = {c["column"]: c["records_changed"] for c in json.loads(capsys.readouterr().out)["changes"]}
    assert changes["age"] == 0 and changes["zip"] == len(frame)
    age_line = next(line for line in printed if line.startswith("age:"))
    assert age_line.endswith("; 0 records changed")

    loaded = pd.read_csv("visits.csv", dtype={"zip": str, "mrn": str})
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.session_state["active_dataset"] = Dataset.from_frame("visits.csv", loaded, {"mrn": "person"})
    at.session_state["active_source"] = "upload:visits.csv"
    at.run()
    assert not at.exception
    shown = [re.sub(r"\\(.)", r"\1", m.value) for m in at.markdown]
    at_preview = next(i for i, m in enumerate(shown) if m.startswith("What Safe Harbor"))
    preview = shown[at_preview].splitlines()[1:]
    assert [line[2:] for line in preview] == printed  # every change of the command, word for word, with its count
    # the Safe Harbor offer's cost: the first "what it does" after its list (other offers come before it)
    offer = next(m for m in shown[at_preview:] if m.startswith("What it does to the working copy")).splitlines()[1:]
    assert any(line.startswith("- zip: ") for line in offer), offer
    assert not any(line.startswith("- age") for line in offer), offer
    assert f"- {len(frame):,} records changed (100.0% of {len(frame):,}), " in "\n".join(offer)  # every ZIP is cut
