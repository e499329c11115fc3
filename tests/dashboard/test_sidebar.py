"""The working-copy sidebar under AppTest: the release target set once, whether the working
copy meets it in records, the steps with the risk before and after, undo, reset, suppress."""

from __future__ import annotations

import re
from pathlib import Path

from page_cases import SCRIPT
from streamlit.testing.v1 import AppTest

from anonlib.core.samples import load_sample

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 120


def app() -> AppTest:
    at = AppTest.from_string(SCRIPT, default_timeout=TIMEOUT)
    at.session_state["active_dataset"] = load_sample("caballero_table2b")
    at.session_state["active_source"] = "sample:caballero_table2b"
    at.run()
    assert not at.exception
    return at


def shown(elements) -> list[str]:
    """Texts as the reader sees them (Markdown backslash escapes removed)."""
    return [re.sub(r"\\(.)", r"\1", str(e.value)) for e in elements]


def sidebar_words(at: AppTest) -> str:
    parts = [
        e.value
        for e in (
            *at.sidebar.success,
            *at.sidebar.info,
            *at.sidebar.warning,
            *at.sidebar.markdown,
            *at.sidebar.caption,
            *at.sidebar.text,
        )
    ]
    return "\n".join(str(p).replace("\\", "") for p in parts)


def test_target_status_in_records_and_changing_k():
    at = app()
    assert at.sidebar.number_input(key="target_k").value == 5
    # Caballero Table 2(b): classes of 2, 4, 4 and 5 records on ZIP, gender, age
    assert shown(at.sidebar.warning) == [
        "Not met: 10 of 15 records (66.7%) are in classes failing k = 5; suppressing them would exceed the limit of 0%."
    ]
    at.sidebar.number_input(key="target_k").set_value(2).run()
    assert shown(at.sidebar.success) == ["Met: all 15 records are in classes meeting k = 2."]
    at.sidebar.number_input(key="target_k").set_value(5).run()
    at.sidebar.number_input(key="target_suppressed").set_value(70.0).run()
    assert shown(at.sidebar.info)[0].startswith("Met once they are suppressed: 10 of 15 records")


def test_apply_undo_and_reset_keep_the_loaded_file():
    at = app()
    loaded = at.session_state["active_dataset"]
    assert "No step yet" in sidebar_words(at)
    at.button(key="apply_gender").click().run()
    assert not at.exception
    copy = at.session_state["working_copy"]
    assert len(copy.steps) == 1 and copy.loaded is loaded
    words = sidebar_words(at)
    assert "1. Test page: Generalization: Gender is replaced by *" in words
    # on ZIP and age alone: classes of 4 (88888, 50-54), 2 (88888, 55-59), 9 (11111, 55-59)
    assert "records failing the target 10 -> 6" in words
    assert "current: ['*']" in [t.value for t in at.text]
    at.sidebar.button(key="sidebar_undo").click().run()
    copy = at.session_state["working_copy"]
    assert copy.steps == () and copy.current is loaded
    assert "current: ['female', 'male']" in [t.value for t in at.text]
    at.button(key="apply_gender").click().run()
    at.button(key="apply_gender").click().run()  # generalizing '*' again: the hierarchy does not know it
    assert not at.exception and len(at.session_state["working_copy"].steps) == 1
    assert any(
        "not applied: The hierarchy of Gender does not cover the value '*'" in w for w in shown(at.sidebar.warning)
    )
    at.sidebar.button(key="sidebar_reset").click().run()
    assert at.session_state["working_copy"].current is loaded
    assert at.session_state["active_dataset"] is loaded


def test_suppress_button_adds_a_suppression_step():
    at = app()
    at.button(key="apply_gender").click().run()
    at.sidebar.button(key="sidebar_suppress").click().run()
    assert not at.exception
    copy = at.session_state["working_copy"]
    assert [a.step.kind for a in copy.steps] == ["generalization", "suppression"]
    assert copy.steps[-1].suppressed_records == 6 and copy.check.failing_records == 0
    assert copy.current.n_records == 9
    # 6 of 15 records suppressed with a limit of 0%: not met; with 40% allowed: met
    assert any(w.startswith("Not met: 6 records (40%) are suppressed") for w in shown(at.sidebar.warning))
    at.sidebar.number_input(key="target_suppressed").set_value(40.0).run()
    assert shown(at.sidebar.success)[0].startswith("Met: all 9 records are in classes meeting k = 5.")


def test_a_privacy_model_on_a_sensitive_attribute_joins_the_target():
    at = AppTest.from_string(SCRIPT, default_timeout=TIMEOUT)
    at.session_state["active_dataset"] = load_sample("caballero_table2b").with_roles({"Age": "sensitive"})
    at.session_state["active_source"] = "sample:caballero_table2b"
    at.run()
    at.sidebar.number_input(key="target_k").set_value(2).run()
    at.sidebar.selectbox(key="target_model:Age").set_value("distinct_l").run()
    assert not at.exception
    target = at.session_state["release_target"]
    assert target.k == 2 and [(r.model, r.sensitive, r.value) for r in target.requirements] == [
        ("distinct_l", "Age", 2.0)
    ]
    # on ZIP and gender every class holds a single age band: all 15 records fail 2-diversity (k = 2 holds)
    assert shown(at.sidebar.warning)[0].startswith("Not met: 15 of 15 records (100%) are in classes failing distinct")


def test_the_sidebar_reads_at_1024_px():
    """Compact: the target inputs sit side by side and the dataset lines stay short."""
    at = app()
    lines = [t.value for t in at.sidebar.text]
    assert max(len(line) for line in lines) <= 60, lines
    assert len(at.sidebar.columns) >= 2


def test_local_suppression_is_offered_when_it_touches_fewer_records():
    from anonlib.workflow import LocalSuppressionStep

    at = app()
    # the loaded file: local suppression would change as many records as fail (10): not offered
    assert not [b for b in at.sidebar.button if b.key == "sidebar_suppress_cells"]
    at.button(key="apply_gender").click().run()
    copy = at.session_state["working_copy"]
    reference = LocalSuppressionStep.from_target(copy.target, copy.current).suppressed(copy.current.frame)
    touched = int(reference.any(axis=1).sum())
    assert (touched, copy.check.failing_records) == (2, 6)
    button = at.sidebar.button(key="sidebar_suppress_cells")
    assert button.label == "Suppress cells: 2 records touched"
    before = copy.current.frame[list(copy.current.quasi_identifiers)].astype(str)
    button.click().run()
    assert not at.exception
    copy = at.session_state["working_copy"]
    assert [a.step.kind for a in copy.steps] == ["generalization", "local_suppression"]
    assert copy.current.n_records == 15 and copy.check.met  # no record removed; every record matches 4 others
    written = copy.current.frame[list(copy.current.quasi_identifiers)].astype(str)
    assert int((written != before).any(axis=1).sum()) == 2 and set(
        written.to_numpy()[(written != before).to_numpy()]
    ) == {"*"}
    assert shown(at.sidebar.success)[0].startswith("Met: all 15 records")
    assert not [b for b in at.sidebar.button if b.key in ("sidebar_suppress_cells", "sidebar_suppress")]
    at.sidebar.button(key="sidebar_undo").click().run()
    assert [b.key for b in at.sidebar.button if b.key == "sidebar_suppress_cells"] == ["sidebar_suppress_cells"]


def test_local_suppression_is_not_offered_when_the_target_has_a_privacy_model():
    at = AppTest.from_string(SCRIPT, default_timeout=TIMEOUT)
    at.session_state["active_dataset"] = load_sample("caballero_table2b").with_roles({"Age": "sensitive"})
    at.session_state["active_source"] = "sample:caballero_table2b"
    at.run()
    at.sidebar.number_input(key="target_k").set_value(2).run()
    at.sidebar.selectbox(key="target_model:Age").set_value("distinct_l").run()
    assert not at.exception and at.session_state["working_copy"].check.failing_records
    # local suppression judges k alone, so it could not promise the model
    assert not [b for b in at.sidebar.button if b.key == "sidebar_suppress_cells"]
    assert [b.key for b in at.sidebar.button if b.key == "sidebar_suppress"] == ["sidebar_suppress"]


def test_records_left_out_for_a_missing_value_are_counted_in_the_sidebar():
    """With missing values dropped, the sidebar counts the file's records and says how many of
    them are left out of the release."""
    dataset = load_sample("caballero_table2b")
    frame = dataset.frame.copy()
    frame.loc[[0, 3], dataset.quasi_identifiers[0]] = None
    at = AppTest.from_string(SCRIPT, default_timeout=TIMEOUT)
    at.session_state["active_dataset"] = type(dataset)(
        name=dataset.name, frame=frame, roles=dataset.roles, missing="drop"
    ).validated()
    at.session_state["active_source"] = "sample:caballero_table2b"
    at.run()
    assert not at.exception
    words = sidebar_words(at)
    assert "15 records, " in words and "Records with missing values: 2 left out" in words


def _with_people():
    """caballero_table2b with a person column: rows 1-2, 3-4, ... belong to one person each."""
    dataset = load_sample("caballero_table2b")
    frame = dataset.frame.assign(pid=[f"p{i // 2}" for i in range(len(dataset.frame))])
    from anonlib.core.dataset import Dataset

    return Dataset.from_frame("people.csv", frame, {**dataset.roles, "Gender": "ignore", "pid": "person"})


def test_with_a_person_column_suppressing_cells_is_not_offered_and_the_button_counts_people():
    """Suppress cells was the primary button with a person column, and clicking it ended in
    'The target cannot be checked'; now a sentence says why it is not offered, and the
    suppression button counts the people it removes."""
    from anonlib.measures.target import ReleaseTarget
    from anonlib.workflow import LocalSuppressionStep

    dataset = _with_people()
    # the offer's own rule in records would offer it here: it touches fewer records than fail
    in_records = dataset.with_roles({"pid": "ignore"})
    step = LocalSuppressionStep.from_target(ReleaseTarget(), in_records)
    assert int(step.suppressed(in_records.frame).any(axis=1).sum()) < ReleaseTarget().check(in_records).failing_records
    at = AppTest.from_string(SCRIPT, default_timeout=TIMEOUT)
    at.session_state["active_dataset"] = dataset
    at.session_state["active_source"] = "upload:people.csv"
    at.run()
    assert not at.exception
    check = at.session_state["working_copy"].check
    assert check.by_person and check.failing_persons
    assert not [b for b in at.sidebar.button if b.key == "sidebar_suppress_cells"]
    assert "Suppressing cells is not offered" in sidebar_words(at)
    button = at.sidebar.button(key="sidebar_suppress")
    # what suppression removes, said apart from the people failing; here every person fails, and it says so
    assert check.failing_persons == check.persons
    assert button.label == (
        f"Suppress {check.failing_persons:,} people ({check.failing_records:,} records): what meeting the target removes"
        ", every one in the table"
    )
    button.click().run()
    assert not at.exception
    after = at.session_state["working_copy"].check  # whole people removed, as the button said
    assert after.suppressed_persons == check.failing_persons and after.suppressed_records == check.failing_records


def test_the_cells_offer_follows_the_quasi_identifiers_not_the_file_alone():
    """The planned 'records touched' was cached on the file's content and k: changing which
    columns are quasi-identifiers kept the old number."""
    from anonlib.measures.target import ReleaseTarget
    from anonlib.workflow import LocalSuppressionStep, WorkingCopy
    from dashboard.ui import _local_offer

    loaded = load_sample("caballero_table2b")
    target = ReleaseTarget(k=5)
    counts = []
    for roles in ({"Age": "ignore"}, {"Gender": "ignore"}):
        dataset = loaded.with_roles(roles)
        copy = WorkingCopy.start(dataset, target)
        planned = LocalSuppressionStep.from_target(target, dataset).suppressed(dataset.frame).any(axis=1).sum()
        assert _local_offer(copy) == planned  # offered: it touches fewer records than fail
        counts.append(int(planned))
    assert counts == [6, 2]  # the two roles plan different cells; each offer states its own


def test_planning_the_cells_over_the_instant_budget_waits_for_a_button_and_is_kept(monkeypatch):
    """Planning local suppression ran on every change of k to label the sidebar's button (2.4-4 s
    at 10^5 records); over ``INSTANT_SECONDS`` it now waits for a button saying how long it takes,
    and a plan made is kept for its content, roles and target: k changed back shows it at once."""
    from anonlib.workflow import local_steps
    from dashboard import memo as memos

    memos.memo("sidebar_cells").clear()
    monkeypatch.setattr(memos, "INSTANT_SECONDS", 0.0)  # as a table of 10^5 records would be estimated
    planned = []
    suppressed = local_steps.LocalSuppressionStep.suppressed
    monkeypatch.setattr(
        local_steps.LocalSuppressionStep,
        "suppressed",
        lambda self, frame: planned.append(self.k) or suppressed(self, frame),
    )
    at = app()
    at.button(key="apply_gender").click().run()
    assert not at.exception and planned == []
    assert not [b for b in at.sidebar.button if b.key == "sidebar_suppress_cells"]
    plan = at.sidebar.button(key="sidebar_plan_cells")
    assert plan.label == "Compute which cells to suppress (about 1 second)"
    plan.click().run()
    assert not at.exception and planned == [5]
    assert at.sidebar.button(key="sidebar_suppress_cells").label == "Suppress cells: 2 records touched"
    assert not [b for b in at.sidebar.button if b.key == "sidebar_plan_cells"]
    at.run()  # a rerun with nothing changed: the plan is not made again
    assert (
        planned == [5] and at.sidebar.button(key="sidebar_suppress_cells").label == "Suppress cells: 2 records touched"
    )
    at.sidebar.number_input(key="target_k").set_value(6).run()
    assert not at.exception and planned == [5]  # another target: not planned until asked
    assert [b.key for b in at.sidebar.button if b.key.startswith("sidebar_") and "cells" in b.key] == [
        "sidebar_plan_cells"
    ]
    at.sidebar.number_input(key="target_k").set_value(5).run()
    assert (
        planned == [5] and at.sidebar.button(key="sidebar_suppress_cells").label == "Suppress cells: 2 records touched"
    )
    at.sidebar.button(key="sidebar_suppress_cells").click().run()
    assert not at.exception and at.session_state["working_copy"].check.met


def test_records_not_linked_by_the_person_column_can_be_treated_as_linkable_and_the_choice_is_kept():
    """The person column is not released: the sidebar offers to treat each person's records as
    linkable (stable quasi-identifiers may link them); ticked, the target counts whole histories
    and offers the adversary's power; the saved target keeps both."""
    from anonlib.measures.target import ReleaseTarget

    at = AppTest.from_string(SCRIPT, default_timeout=TIMEOUT)
    at.session_state["active_dataset"] = _with_people()
    at.session_state["active_source"] = "upload:people.csv"
    at.run()
    assert not at.exception
    assert at.session_state["working_copy"].release_target.unit == "people"
    assert not [s for s in at.sidebar.selectbox if s.key == "target_power"]  # no power while records do not link
    at.sidebar.checkbox(key="target_linked").check().run()
    copy = at.session_state["working_copy"]
    assert copy.release_target.unit == "histories" and copy.check.target.unit == "histories"
    at.sidebar.selectbox(key="target_power").set_value(2).run()
    target = at.session_state["working_copy"].target
    assert (target.linked, target.power) == (("pid",), 2)
    assert ReleaseTarget.from_json(target.to_json()) == target  # what the project saves reads back the same
    assert "on any 2 of a person's records" in sidebar_words(at)
