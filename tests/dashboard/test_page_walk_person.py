"""Defects found walking the dashboard with a longitudinal file (a person column, several records
per person), each seen on the page (AppTest) as the user saw it in the browser."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest

from anonlib.core.dataset import Dataset
from anonlib.measures.leakage import leakage_table
from anonlib.measures.peers import min_ppp
from anonlib.measures.risk import reidentification
from anonlib.transformations.geo import sample_regions
from anonlib.workflow import ReleaseTarget
from anonlib.workflow.report import build_report

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 180
ROLES = {"pid": "person", "age": "quasi-identifier", "sex": "quasi-identifier", "diagnosis": "sensitive"}


def panel(people: int = 60, seed: int = 3) -> pd.DataFrame:
    """Visits of ``people`` people: a person's age and sex repeat on each of their 1 to 4 visits."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(people):
        age, sex = int(rng.integers(20, 80)), str(rng.choice(["F", "M"]))
        for _ in range(int(rng.integers(1, 5))):
            rows.append({"pid": f"P{p:03d}", "age": age, "sex": sex, "diagnosis": str(rng.choice(["a", "b", "c"]))})
    return pd.DataFrame(rows)


def opened(page: str, frame: pd.DataFrame, target: ReleaseTarget) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / f"{page}.py"), default_timeout=TIMEOUT)
    at.session_state["active_dataset"] = Dataset.from_frame("panel.csv", frame, ROLES)
    at.session_state["active_source"] = "upload:panel.csv"
    at.session_state["release_target"] = target
    at.run()
    assert not at.exception, at.exception
    return at


def test_leakage_before_and_after_a_generalization_leaves_the_person_column_out():
    """The Leakage page's Table 8 (leakage before and after the chosen generalization) asked the
    working copy for every column of its search frame, the person column among them, and showed
    "'pid' is the person column: ... change its role first." in an error box instead of the table."""
    frame = panel()
    at = opened("leakage", frame, ReleaseTarget(k=2, max_suppressed=0.1))
    assert not at.error, [e.value for e in at.error]
    table = next(t.value for t in at.dataframe if {"before", "after", "change"} <= set(t.value.columns))
    assert table["attribute"].tolist() == leakage_table(frame, ["age", "sex", "diagnosis"])["attribute"].tolist()
    assert "pid" not in table["attribute"].tolist()


def test_the_report_counts_the_attacker_models_in_people_as_the_dataset_page_does():
    """With a person column the Dataset page gives the prosecutor and marketer risk in people (each
    person once, by the smallest class of their records); the Risk report gave them in records
    under the same names (on the walk's panel: average 18.32% and 83 "records at risk" on the
    report against 35.31% and 95 people at risk on the Dataset page)."""
    frame = panel()
    dataset = Dataset.from_frame("panel.csv", frame, ROLES)
    people = reidentification(frame, ["age", "sex"], person="pid")
    records = reidentification(frame, ["age", "sex"])
    assert people.prosecutor_average != records.prosecutor_average  # the file tells the two apart
    shown = {}
    for page in ("dataset", "report"):
        at = opened(page, frame, ReleaseTarget(k=2))
        shown[page] = {m.label: m.value for m in at.metric}
        # the risk bands count people too, and say so (the chart said "% of records")
        chart = json.loads(
            next(c.proto.spec for c in at.get("plotly_chart") if "Prosecutor risk of the" in c.proto.spec)
        )
        assert chart["layout"]["yaxis"]["title"]["text"] == "% of people", page
        assert [t["name"] for t in chart["data"]] == ["people in the band", "cumulative"], page
    for label in ("prosecutor: highest risk", "prosecutor: average risk", "people at risk > 20%", "marketer risk"):
        assert shown["report"][label] == shown["dataset"][label], label
    assert shown["report"]["prosecutor: average risk"] == f"{100 * people.prosecutor_average:.2f}%"
    assert shown["report"]["people at risk > 20%"] == f"{dict(people.records_above)[0.2]:,}"
    assert "records at risk > 20%" not in shown["report"]
    assert dataset.person == "pid"


def test_one_column_like_a_hipaa_identifier_is_said_in_the_singular():
    """The Dataset page said "1 column look like one of the 18 identifiers of HIPAA's Safe Harbor rule"."""
    frame = panel().assign(zip=lambda f: np.where(f["sex"] == "F", "37201", "02139"))
    at = opened("dataset", frame, ReleaseTarget(k=2))
    said = [c.value for c in at.caption if "identifiers of HIPAA" in c.value]
    assert said and said[0].startswith("1 column looks like one of the 18 identifiers of HIPAA's Safe Harbor rule")


def test_blank_area_ids_are_left_missing_and_the_aggregation_can_be_applied():
    """The Geography page read a blank ZIP as the area id 'missing' "that is not an area of" the
    Areas, and refused the step ("choose Areas that hold every id to apply it"), advice no choice of
    Areas can follow; the aggregation step leaves a missing id missing."""
    zips = sample_regions("tennessee_zcta").points["region_id"].to_numpy()[:40]
    frame = panel().assign(zip=lambda f: np.random.default_rng(5).choice(zips, len(f)).astype(object))
    frame.loc[[0, 7, 11], "zip"] = None
    roles = {**ROLES, "zip": "quasi-identifier"}
    at = AppTest.from_file(str(ROOT / "pages" / "geography.py"), default_timeout=TIMEOUT)
    at.session_state["active_dataset"] = Dataset.from_frame("panel.csv", frame, roles)
    at.session_state["active_source"] = "upload:panel.csv"
    at.session_state["release_target"] = ReleaseTarget(k=2)
    at.run()
    assert not at.exception and not at.error
    assert at.selectbox(key="geo_region_column").value == "zip"
    said = [i.value for i in [*at.info, *at.warning]]
    assert not any("would not know where to put them" in s or "are not areas of" in s for s in said), said
    assert any(s.startswith("3 records (") and "have no area id (a missing value)" in s for s in said), said
    at.button(key="geo_apply").click().run()
    assert not at.exception and not at.error
    released = at.session_state["working_copy"].current.frame["zip"]
    assert released.isna().tolist() == frame["zip"].isna().tolist()  # blanks stay missing
    assert released.dropna().str.fullmatch(r"A\d+").all()  # every other record in its region


def test_distinct_combinations_before_suppression_say_so():
    """With records to suppress, the Leakage page showed the same generalization (age and visit_year
    removed) with 36 distinct combinations under the optimal search and 40 under IAB and exhaustive,
    both as "distinct combinations": the paper's searches count the rows before suppression."""
    frame = panel()
    at = opened("leakage", frame, ReleaseTarget(k=3, max_suppressed=0.3))
    assert not at.error
    shown = [m.value for m in at.metric if m.label == "distinct combinations"]
    merged = [c.value for c in at.caption if c.value.startswith("from ")]
    assert len(shown) == len(merged) == 4  # optimal, IAB, exhaustive, greedy
    before = [("counted before suppression" in c) for c in merged]
    suppressed = [m.value != "0" for m in at.metric if m.label == "people suppressed"]
    assert before == [False, *suppressed[1:]] and any(suppressed[1:])


def test_bands_that_protect_no_more_records_are_not_preselected():
    """On the walk's panel every record of diagnosis was already protected (100.0% without bands), yet
    the Individual privacy page preselected '11 bands of width 3' of a 4-valued age (100.0%), a step that
    only relabels the values, with its Apply button."""
    ages = np.repeat(np.arange(20, 60), 4)
    frame = pd.DataFrame({"age": ages, "sex": np.tile(["F", "F", "M", "M"], 40), "diagnosis": np.tile(list("ab"), 80)})
    at = AppTest.from_file(str(ROOT / "pages" / "individuals.py"), default_timeout=TIMEOUT)
    roles = {"age": "quasi-identifier", "sex": "quasi-identifier", "diagnosis": "sensitive"}
    at.session_state["active_dataset"] = Dataset.from_frame("even.csv", frame, roles)
    at.session_state["active_source"] = "upload:even.csv"
    at.run()
    if [b for b in at.button if b.key == "peers_bands_run"]:
        at.button(key="peers_bands_run").click().run()
    assert not at.exception and not at.error
    assert any(c.value.startswith("Without bands: 100.0% of records protected") for c in at.caption)
    pick = next(s for s in at.selectbox if str(s.key).startswith("peers_pick:"))
    assert pick.options and pick.value is None  # offered, not chosen
    assert not [b for b in at.button if b.key == "peers_apply"]


def test_individual_privacy_counts_look_alikes_among_other_people_s_records():
    """On the walk's panel (397 "protected" of 404 records, 98.3%) 5 records were protected only by the
    same person's other visits: the page counted a person's own records as their look-alikes. With a
    person column a record's look-alikes are the record itself and other people's records, and the page
    says so. On this panel (60 people, their age and sex on each of 1 to 4 visits) counting rows gives
    110 of 142 records protected (77.5%); among other people's records 51 (35.9%)."""
    frame = panel()
    people = min_ppp(frame, "diagnosis", ["age", "sex"], person="pid") > 0
    rows = min_ppp(frame, "diagnosis", ["age", "sex"]) > 0
    assert (int(people.sum()), int(rows.sum()), len(frame)) == (51, 110, 142)
    at = opened("individuals", frame, ReleaseTarget(k=2))
    if [b for b in at.button if b.key == "peers_bands_run"]:
        at.button(key="peers_bands_run").click().run()
    assert not at.exception and not at.error
    assert {m.label: m.value for m in at.metric}["records protected: diagnosis"] == "35.9%"
    said = [c.value for c in at.caption]
    assert any("Look-alikes among other people's records" in c and "'pid' says whose record it is" in c for c in said)
    sentences = [i.value.replace("\\", "") for i in at.info]  # Markdown escapes taken off
    assert any("a share p of its look-alikes among other people's records" in i for i in sentences), sentences
    assert any(c.startswith("Without bands: 35.9% of records protected") for c in said)  # the bands' baseline too
    report = build_report(Dataset.from_frame("panel.csv", frame, ROLES), k=2)  # the report counts the same
    assert report.privacy.rows[0].protected_share == 51 / 142
    assert "look-alikes among other people's records" in report.attacker_model
