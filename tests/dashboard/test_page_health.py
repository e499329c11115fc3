"""The Dataset page on a longitudinal upload (AppTest): an identifier released as a pseudonym,
dates shifted per person, k counted in people, whole people suppressed, Safe Harbor offered
with its changes listed first, and the Release page listing released and left-out columns."""

from __future__ import annotations

import hashlib
import hmac
import re
from pathlib import Path

import pandas as pd
from streamlit.testing.v1 import AppTest

from anonlib.core.dataset import Dataset
from anonlib.workflow import ReleaseTarget
from tests.health_data import visits

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 240


def unescaped(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _app(frame: pd.DataFrame, roles: dict, target: ReleaseTarget | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.session_state["active_dataset"] = Dataset.from_frame("visits.csv", frame, roles)
    at.session_state["active_source"] = "upload:visits.csv"
    if target is not None:
        at.session_state["release_target"] = target
    return at.run()


def test_pseudonym_date_shift_and_people_on_the_dataset_page():
    frame = visits(21, 60)[["mrn", "visit_date", "age", "sex", "diagnosis"]]
    frame = frame.assign(age=(frame["age"] // 20 * 20).astype(str) + "+")  # age bands: classes of several people
    roles = {"mrn": "person", "age": "quasi-identifier", "sex": "quasi-identifier", "visit_date": "keep"}
    at = _app(frame, roles, ReleaseTarget(k=5, max_suppressed=0.3))  # 11 of 60 people in classes < 5
    assert not at.exception
    shown = metrics(at)
    assert shown["people"] == "60" and shown["records"] == f"{len(frame):,}"
    assert shown["k (people)"] == str(frame.groupby(["age", "sex"])["mrn"].nunique().min())

    key = at.session_state["project_key"]
    at.button(key="health_pseudonym_apply").click().run()
    assert not at.exception
    copy = at.session_state["working_copy"]
    released = copy.current.frame["mrn"]
    assert released.iloc[0] == hmac.new(key, frame["mrn"].iloc[0].encode(), hashlib.sha256).hexdigest()[:16]
    assert any("A pseudonym and a date shift are the same in every delivery only under the same key" in c.value
               for c in at.caption)  # fmt: skip

    at.button(key="health_shift_apply").click().run()
    assert not at.exception
    copy = at.session_state["working_copy"]
    shifted = pd.to_datetime(copy.current.frame["visit_date"]) - pd.to_datetime(frame["visit_date"])
    assert (shifted.groupby(frame["mrn"].to_numpy()).nunique() == 1).all()  # one offset per person

    # the person column released as a pseudonym links each person's visits: the target counts whole
    # histories; an attacker knowing any 1 of a person's visits is the class of 5 people again
    assert "over each person's whole history" in at.session_state["working_copy"].release_target.describe()
    at.sidebar.selectbox(key="target_power").set_value(1).run()
    assert at.session_state["working_copy"].release_target.power == 1
    at.button(key="sidebar_suppress").click().run()  # whole people suppressed until k holds
    assert not at.exception
    check = at.session_state["working_copy"].check
    assert check.by_person and check.failing_persons == 0 and check.target.unit == "histories"
    assert check.sentence().startswith("Met")
    recipe = at.session_state["working_copy"].recipe().dumps()
    assert key.hex() not in recipe

    at.switch_page("pages/release.py").run()
    assert not at.exception
    table = [t for t in at.dataframe if "in the release" in t.value.columns]
    assert table and set(table[0].value["column"]) == set(frame.columns)


def test_a_reload_replays_the_pseudonyms_under_the_key_the_project_keeps():
    from anonlib.core.loading import load_table
    from anonlib.projects import ProjectState, ProjectStore
    from anonlib.workflow import WorkingCopy
    from anonlib.workflow.recipe import Reading

    data = visits(22, 40)[["mrn", "age", "sex", "diagnosis"]].to_csv(index=False).encode("utf-8")
    table = load_table(data, name="visits.csv")
    roles = {"mrn": "person", "age": "quasi-identifier", "sex": "quasi-identifier"}
    start = WorkingCopy.start(Dataset.from_frame("visits.csv", table.frame, roles), ReleaseTarget(k=2),
                              reading=Reading.of(table, data))  # fmt: skip
    store = ProjectStore()  # the test's own store (conftest)
    ref = store.create("visits", ProjectState.of(start, "upload:visits.csv"), data)
    store.opened(ref)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()  # opens the last project
    assert not at.exception and at.session_state["project"].id == ref.id
    assert any("this project's, kept in the project store" in c.value for c in at.caption)
    at.button(key="health_pseudonym_apply").click().run()
    assert not at.exception
    released = at.session_state["working_copy"].current.frame["mrn"].tolist()
    mrn = table.frame["mrn"].iloc[0]
    assert released[0] == hmac.new(store.key(ref), mrn.encode(), hashlib.sha256).hexdigest()[:16]
    reload = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()  # a reload: a new session
    assert not reload.exception
    assert reload.session_state["working_copy"].current.frame["mrn"].tolist() == released


def test_safe_harbor_lists_its_changes_and_compares_on_request():
    frame = visits(22, 50)
    at = _app(frame, {"mrn": "identifier"})
    assert not at.exception
    text = " ".join(unescaped(m.value) for m in at.markdown)
    assert "What Safe Harbor (45 CFR 164.514(b)(2)) would change" in text
    assert "zip: cut to the first three digits" in text and "mrn: removed" in text
    at.toggle(key="health_safe_harbor_compare").set_value(True).run()
    assert not at.exception
    routes = [t for t in at.dataframe if "route" in t.value.columns]
    assert routes and list(routes[0].value["route"])[0] == "Safe Harbor"
    at.button(key="health_safe_harbor_apply").click().run()
    copy = at.session_state["working_copy"]
    assert copy.steps[-1].step.kind == "safe_harbor"
    assert copy.release()["visit_date"].astype(str).str.fullmatch(r"\d{4}").all()


def test_role_guesses_say_what_they_were_guessed_from():
    frame = pd.DataFrame(
        {"educ": ["a", "b"] * 5, "married": [0, 1] * 5, "hhexp": [1.5, 2.5] * 5, "pid": list("abcdefghij")}
    )
    at = _app(frame, {})
    assert not [t for t in at.dataframe if "guessed from" in t.value.columns]  # drawn only once opened
    at.session_state["dataset_role_reasons"] = True  # the expander opened
    at.run()
    reasons = [t.value for t in at.dataframe if "guessed from" in t.value.columns][0]
    assert dict(zip(reasons["column"], reasons["guessed from"]))["educ"] == "name 'educ' (education)"


def test_safe_harbor_is_planned_once_per_table_and_a_change_of_k_reads_it_back(monkeypatch):
    """The Safe Harbor plan and its cost scan every record and do not depend on the release target:
    changing k back and forth plans nothing again; a step applied (another table) plans again."""
    from anonlib.workflow.health_steps import SafeHarborStep
    from dashboard.memo import memo

    memo("health.safe_harbor").clear()
    planned = SafeHarborStep.planned.__func__
    calls = []

    def counted(cls, frame, **kwargs):
        calls.append(len(frame))
        return planned(cls, frame, **kwargs)

    monkeypatch.setattr(SafeHarborStep, "planned", classmethod(counted))
    frame = visits(23, 40)
    at = _app(frame, {"mrn": "identifier", "age": "quasi-identifier", "sex": "quasi-identifier"})
    assert not at.exception and calls == [len(frame)]
    for k in (5, 2, 5):
        at.number_input(key="target_k").set_value(k).run()
        assert not at.exception
    assert calls == [len(frame)]
    text = " ".join(unescaped(m.value) for m in at.markdown)
    assert "What Safe Harbor (45 CFR 164.514(b)(2)) would change" in text and "mrn: removed" in text
    at.button(key="health_safe_harbor_apply").click().run()
    assert not at.exception and len(calls) == 2
