"""Risk by the attacker's power on the Dataset page (AppTest): the table of people unique and below
k per power equals ``risk_by_power`` (itself equal to a pandas recount, tests/measures/test_power),
the least damaging release per power found on request with the suggested power and its rule, and
the chart beside the sidebar's power."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest

from anonlib.core.dataset import Dataset
from anonlib.core.default_hierarchy import default_hierarchy
from anonlib.measures.power import risk_by_power
from anonlib.workflow import ReleaseTarget
from anonlib.workflow.power_choice import SUGGESTION_RULE, least_damaging_by_power, suggested_power

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 240
ROLES = {"id": "person", "month": "quasi-identifier", "stage": "quasi-identifier"}


def trial(people: int = 80, seed: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(people):
        stage = int(rng.integers(1, 4))
        for visit in range(int(rng.integers(1, 7))):
            stage = min(4, stage + int(rng.random() < 0.2))
            rows.append({"id": f"p{p}", "month": 6 * visit, "stage": stage})
    return pd.DataFrame(rows)


def test_the_dataset_page_shows_risk_by_power_and_the_least_damaging_release_on_request():
    frame = trial()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.session_state["active_dataset"] = Dataset.from_frame("trial.csv", frame, ROLES)
    at.session_state["active_source"] = "upload:trial.csv"
    at.session_state["release_target"] = ReleaseTarget(k=5, max_suppressed=0.05, linked=("id",))
    at.run()
    assert not at.exception and not at.error
    table = next(t.value for t in at.dataframe if "an attacker knows" in t.value.columns)
    expected = risk_by_power(frame, ["month", "stage"], "id", k=5)
    people = frame["id"].nunique()
    assert table["people unique"].tolist() == [
        f"{r.people_unique:,} ({100 * r.people_unique / people:.1f}%)" for r in expected
    ]
    assert "least damaging release: loss" not in table.columns  # searched only on request
    # beside the sidebar's power: the same counts, as % of people
    chart = next(c for c in at.get("plotly_chart") if "People at risk by the attacker" in c.proto.spec)
    assert chart is not None

    at.button(key="power_releases").click().run()
    assert not at.exception and not at.error
    table = next(t.value for t in at.dataframe if "an attacker knows" in t.value.columns)
    hierarchies = {a: default_hierarchy(frame[a], a)[1] for a in ("month", "stage")}
    releases = least_damaging_by_power(frame, ["month", "stage"], hierarchies, "id", k=5, max_suppressed=0.05)
    assert table["least damaging release: loss"].tolist() == [f"{r.loss:.3f}" for r in releases]
    chosen = suggested_power(releases)
    said = [i.value for i in at.info]
    if chosen is not None:
        knows = "all" if chosen.power is None else f"any {chosen.power}"
        assert any(f"Suggested power: an attacker who knows {knows} of a person's records" in s for s in said)
    assert any(SUGGESTION_RULE in c.value for c in at.caption)


def test_on_a_first_delivery_of_one_record_each_the_page_suggests_power_2():
    """Every power's release is the same on one record per person; the suggestion is power 2, for
    the deliveries that will add records to the same people (SUGGESTION_RULE)."""
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"id": [f"p{i}" for i in range(60)], "stage": rng.integers(1, 4, 60), "month": 0})
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.session_state["active_dataset"] = Dataset.from_frame("year1.csv", frame, ROLES)
    at.session_state["active_source"] = "upload:year1.csv"
    at.session_state["release_target"] = ReleaseTarget(k=5, max_suppressed=0.05, linked=("id",))
    at.run()
    at.button(key="power_releases").click().run()
    assert not at.exception and not at.error
    table = next(t.value for t in at.dataframe if "an attacker knows" in t.value.columns)
    assert table["least damaging release: loss"].nunique() == 1  # the same release at every power
    said = [i.value for i in at.info]
    assert any("Suggested power: an attacker who knows any 2 of a person's records" in s for s in said), said
