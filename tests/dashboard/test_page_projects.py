"""Projects in the dashboard under AppTest: every change saved, a new session (a reload, a
second tab, a restarted server) opens the project as it was, a stale tab is told and shown
the newer version, and the Projects page lists, renames, duplicates and deletes."""

from __future__ import annotations

import re
from pathlib import Path

from page_cases import SCRIPT  # a page that applies a step through the state API
from streamlit.testing.v1 import AppTest

from anonlib.core.samples import SAMPLES, load_sample
from anonlib.projects import ProjectStore, audit_entries, record_package
from anonlib.workflow import release_package

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 120
TITLE = SAMPLES["caballero_table2b"].title  # a sample's project is named after it


def tab(with_sample: bool = False) -> AppTest:
    """A browser tab: a new session of the app (nothing in its session state unless ``with_sample``)."""
    at = AppTest.from_string(SCRIPT, default_timeout=TIMEOUT)
    if with_sample:
        at.session_state["active_dataset"] = load_sample("caballero_table2b")
        at.session_state["active_source"] = "sample:caballero_table2b"
    at.run()
    assert not at.exception
    return at


def sidebar_words(at: AppTest) -> str:
    parts = [e.value for e in (*at.sidebar.warning, *at.sidebar.markdown, *at.sidebar.caption, *at.sidebar.text)]
    return "\n".join(re.sub(r"\\(.)", r"\1", str(p)) for p in parts)


def steps(at: AppTest) -> list[str]:
    return [line for line in sidebar_words(at).splitlines() if re.match(r"\d+\. ", line)]


def test_a_new_session_opens_the_last_project_as_it_was():
    first = tab(with_sample=True)
    assert "Not saved as a project yet" in sidebar_words(first)
    first.sidebar.number_input(key="target_k").set_value(3).run()
    first.button(key="apply_gender").click().run()
    ref = first.session_state["project"]
    assert ref is not None and ref.version == 2  # created by the target's change (1), then the step (2)
    assert "Project: Caballero" in sidebar_words(first)

    reload = tab()  # nothing in its session: it opens the project from the store
    assert reload.session_state["project"] == ref
    assert reload.session_state["active_source"] == "sample:caballero_table2b"
    assert reload.sidebar.number_input(key="target_k").value == 3
    assert steps(reload) == steps(first) and len(steps(reload)) == 1
    assert "current: ['*']" in [t.value for t in reload.main.text]
    assert reload.query_params["project"] in (str(ref.id), [str(ref.id)])


def test_the_address_names_the_project_a_reload_opens():
    first = tab(with_sample=True)
    first.button(key="apply_gender").click().run()
    one = first.session_state["project"]
    second = tab(with_sample=True)  # the sample opened again in another tab: a project of its own
    second.sidebar.number_input(key="target_k").set_value(2).run()
    assert second.session_state["project"].id != one.id
    reload = AppTest.from_string(SCRIPT, default_timeout=TIMEOUT)
    reload.query_params["project"] = str(one.id)  # the first tab's address, reloaded
    reload.run()
    assert reload.session_state["project"].id == one.id and len(steps(reload)) == 1


def test_a_stale_tab_is_told_and_shows_the_newer_version():
    a = tab(with_sample=True)
    a.button(key="apply_gender").click().run()
    b = tab()  # a second tab on the same project
    assert b.session_state["project"] == a.session_state["project"]
    a.sidebar.button(key="sidebar_undo").click().run()  # tab A undoes the step
    assert steps(a) == []
    b.sidebar.number_input(key="target_k").set_value(2).run()  # tab B changes the target from its stale view
    words = sidebar_words(b)
    assert "was changed in another tab or window" in words, words
    assert steps(b) == []  # tab B now shows tab A's version ...
    store = ProjectStore()
    saved = store.load(a.session_state["project"].id)
    assert saved.state.steps == () and saved.state.target.k == 5  # ... and nothing of A's change was lost
    assert b.sidebar.number_input(key="target_k").value == 5
    b.sidebar.number_input(key="target_k").set_value(2).run()  # made again on the latest version, it is saved
    assert ProjectStore().load(saved.ref.id).state.target.k == 2


def table_with(at: AppTest, column: str):
    """The page's table that has ``column``."""
    return next(d.value for d in at.main.dataframe if column in d.value.columns)


def test_the_projects_page_lists_renames_duplicates_and_deletes():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.session_state["active_dataset"] = load_sample("caballero_table2b")
    at.session_state["active_source"] = "sample:caballero_table2b"
    at.run()
    at.sidebar.number_input(key="target_k").set_value(2).run()
    store = ProjectStore()
    ref = at.session_state["project"]
    copy = store.load(ref).state.restore()
    record_package(store, ref, release_package(copy), user="anna")
    at.switch_page("pages/projects.py").run()
    assert not at.exception and not at.error
    assert at.title[0].value == "Projects"
    info = " ".join(str(i.value) for i in at.info).replace("\\", "")
    assert "It keeps 1 project" in info and "an audit log of 1 release" in info
    table = table_with(at, "releases")
    assert table["project"].tolist() == [TITLE] and table["releases"].tolist() == [1]
    audit = table_with(at, "user")
    assert audit["user"].tolist() == ["anna"] and audit["met"].tolist() == ["yes"]
    at.button(key="audit_verify").click().run()
    checks = table_with(at, "check")
    assert set(checks["result"]) == {"ok"} and {"released.csv", "recipe.json", "target"} <= set(checks["part"])

    assert "projects_forget_file" not in [b.key for b in at.main.button]  # a sample: no file is kept
    at.text_input(key=f"rename-{ref.id}").set_value("clinic").run()
    at.button(key="rename_project").click().run()
    assert store.summary(ref.id).name == "clinic" and at.session_state["project"].name == "clinic"
    at.button(key="projects_duplicate").click().run()
    assert sorted(p.name for p in store.summaries()) == ["clinic", "clinic (copy)"]

    at.selectbox(key="projects_choice").set_value(ref.id).run()
    assert at.button(key="projects_delete").disabled  # asks once
    at.checkbox(key=f"projects_confirm-{ref.id}").check().run()
    at.button(key="projects_delete").click().run()
    assert [p.name for p in store.summaries()] == ["clinic (copy)"]
    assert at.session_state["project"] is None
    entries = audit_entries(store)
    assert [(e.project, e.project_deleted) for e in entries] == [(TITLE, True)]
    assert "(deleted)" in table_with(at, "user")["project"].tolist()[0]
