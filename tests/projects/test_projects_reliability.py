"""The project store when things go wrong (SQLite, the default store): a process killed
during a save, a store that is locked, read-only, full, damaged or of a newer schema (one
sentence each), and the dashboard still working on an unsaved copy, said in the sidebar."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from project_files import delivery, worked_copy
from sqlalchemy import event
from streamlit.testing.v1 import AppTest

from anonlib.core.errors import StoreError
from anonlib.core.samples import load_sample
from anonlib.projects import ProjectState, ProjectStore
from anonlib.projects import store as store_module
from anonlib.workflow import ReleaseTarget

ROOT = Path(__file__).resolve().parents[2]

SAVER = """
import sys
from anonlib.projects import ProjectState, ProjectStore
store = ProjectStore(sys.argv[1])
project = store.load("survey")
ref, state = project.ref, project.state
while True:  # save k = version + 1 again and again; say each version once it is committed
    state = ProjectState(state.origin, state.source, type(state.target)(k=ref.version + 1), state.steps)
    ref = store.save(ref, state, "k")
    print(ref.version, flush=True)
"""


def _store(tmp_path: Path) -> tuple[str, ProjectStore]:
    url = f"sqlite:///{tmp_path / 'home' / 'projects.sqlite'}"
    return url, ProjectStore(url)


@pytest.mark.parametrize("after", [5, 40, 120])
def test_kill_9_during_saves_loses_at_most_that_change(tmp_path, after):
    url, store = _store(tmp_path)
    data = delivery(0)
    store.create("survey", ProjectState.of(worked_copy(data), "upload:survey.csv"), data)
    saver = subprocess.Popen([sys.executable, "-c", SAVER, url], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    committed = 0
    for line in saver.stdout:
        committed = int(line)
        if committed >= after:
            break
    os.kill(saver.pid, signal.SIGKILL)  # most likely in the middle of the next save
    saver.wait(timeout=30)
    # the saves it said were committed after the one read above, before the signal reached it
    committed = max([committed, *(int(line) for line in saver.stdout.read().split())])
    store_module._ENGINES.pop(url).dispose()  # open the file afresh, as after a crash
    reopened = ProjectStore(url)
    assert reopened.integrity_ok()
    project = reopened.load("survey")
    assert project.ref.version in (committed, committed + 1)  # the change in flight is there whole or not at all
    assert project.state.target.k == project.ref.version
    assert project.state.restore(reopened.file("survey")).check is not None


def test_a_locked_store_is_one_sentence_and_works_again_once_released(tmp_path, monkeypatch):
    monkeypatch.setattr(store_module, "BUSY_SECONDS", 0.5)
    url = f"sqlite:///{tmp_path / 'locked' / 'projects.sqlite'}"
    store = ProjectStore(url)
    data = delivery(0)
    ref = store.create("survey", ProjectState.of(worked_copy(data), "upload:survey.csv"), data)
    holder = sqlite3.connect(store_module.sqlite_path(url), isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another program holds the write lock
    state = ProjectState.of(worked_copy(data).with_target(ReleaseTarget(k=3)), "upload:survey.csv")
    started = time.monotonic()
    with pytest.raises(
        StoreError, match=r"^The project store .* is locked by another program; this change is not saved yet"
    ):
        store.save(ref, state, "k = 3")
    assert time.monotonic() - started < 30
    holder.execute("ROLLBACK")
    holder.close()
    assert store.save(ref, state, "k = 3").version == 2


def test_a_read_only_store_is_one_sentence(tmp_path):
    url, store = _store(tmp_path)
    data = delivery(0)
    store.create("survey", ProjectState.of(worked_copy(data), "upload:survey.csv"), data)
    path = store_module.sqlite_path(url)
    read_only = f"sqlite:///file:{path}?mode=ro&uri=true"
    with pytest.raises(StoreError, match=r"is read-only; changes are not saved\.$"):
        ProjectStore(read_only).create("another", ProjectState.of(worked_copy(data), "upload:x.csv"), data)


def test_a_full_disk_is_one_sentence_and_the_store_stays_whole(tmp_path):
    url, store = _store(tmp_path)
    data = delivery(0)
    ref = store.create("survey", ProjectState.of(worked_copy(data), "upload:survey.csv"), data)
    pages = store._pragma("page_count")

    @event.listens_for(store.engine, "connect")
    def _small_disk(dbapi_connection, _record):  # the database may not grow past its size now
        dbapi_connection.execute(f"PRAGMA max_page_count = {pages + 2}")

    store.engine.dispose()
    big = delivery(1, rows=20_000)
    with pytest.raises(StoreError, match=r"^The disk holding the project store .* is full; changes are not saved\.$"):
        store.create("big", ProjectState.of(worked_copy(big), "upload:big.csv"), big)
    event.remove(store.engine, "connect", _small_disk)
    store.engine.dispose()
    assert [p.name for p in store.summaries()] == ["survey"] and store.integrity_ok()
    assert store.load(ref).state.target.k == 5


def test_a_damaged_store_is_one_sentence(tmp_path):
    path = tmp_path / "home" / "projects.sqlite"
    path.parent.mkdir()
    path.write_bytes(os.urandom(8192))
    with pytest.raises(StoreError, match=r"is damaged \(it is not a readable database\); move the file aside"):
        ProjectStore(f"sqlite:///{path}")


def test_a_store_of_a_newer_schema_is_one_sentence(tmp_path):
    url, _ = _store(tmp_path)
    with sqlite3.connect(store_module.sqlite_path(url)) as c:
        c.execute("UPDATE meta SET value = '7' WHERE key = 'schema_version'")
    store_module._ENGINES.pop(url).dispose()
    from anonlib.projects.schema import SCHEMA_VERSION

    with pytest.raises(StoreError, match=rf"newer anonlib \(schema version 7; this one reads up to {SCHEMA_VERSION}\)"):
        ProjectStore(url)


def test_two_threads_saving_through_one_store_object_lose_no_update(tmp_path):
    """The dashboard's tabs share one store object (one connection pool) per server process."""
    url, store = _store(tmp_path)
    data = delivery(0, rows=40)
    store.create("counter", ProjectState.of(worked_copy(data).with_target(ReleaseTarget(k=1)), "upload:x.csv"), data)

    def increments(n: int) -> None:
        from anonlib.core.errors import StaleProjectError

        for _ in range(n):
            while True:
                project = store.load("counter")
                s = project.state
                try:
                    store.save(
                        project.ref, ProjectState(s.origin, s.source, ReleaseTarget(k=s.target.k + 1), s.steps), "+1"
                    )
                    break
                except StaleProjectError:
                    continue

    threads = [threading.Thread(target=increments, args=(25,)) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert store.load("counter").state.target.k == 76


# ---------------------------------------------------------------- the dashboard on an unusable store

SCRIPT = """
import streamlit as st
from anonlib.core.hierarchy import flat_hierarchy
from anonlib.workflow import GeneralizationStep
from dashboard.state import apply_step_callback
from dashboard.ui import run_with_sidebar

def page():
    st.title("Test page")
    step = GeneralizationStep((("Gender", 1),), (("Gender", flat_hierarchy(["female", "male"])),))
    st.button("Generalize", key="generalize", on_click=apply_step_callback, args=(step, "Test page"))

run_with_sidebar([st.Page(page, title="Test page")])
"""


def _warnings(at: AppTest) -> str:
    return "\n".join(str(w.value).replace("\\", "") for w in at.sidebar.warning)


@pytest.mark.parametrize("problem", ["damaged", "newer schema"])
def test_the_dashboard_keeps_working_unsaved_when_the_store_cannot_be_used(tmp_path, monkeypatch, problem):
    home = tmp_path / "home"
    home.mkdir()
    path = home / "projects.sqlite"
    if problem == "damaged":
        path.write_bytes(b"this is not a database" * 400)
    else:
        ProjectStore(f"sqlite:///{path}")
        with sqlite3.connect(path) as c:
            c.execute("UPDATE meta SET value = '9' WHERE key = 'schema_version'")
        store_module._ENGINES.pop(f"sqlite:///{path}").dispose()
    monkeypatch.setenv("ANONLIB_HOME", str(home))
    at = AppTest.from_string(SCRIPT, default_timeout=120)
    at.session_state["active_dataset"] = load_sample("caballero_table2b")
    at.session_state["active_source"] = "sample:caballero_table2b"
    at.run()
    at.button(key="generalize").click().run()
    assert not at.exception and not at.error
    warning = _warnings(at)
    assert "Not saved: The project store " in warning and "You are working on an unsaved copy in this tab." in warning
    assert ("damaged" in warning) if problem == "damaged" else ("newer anonlib" in warning)
    steps = [str(m.value).replace("\\", "") for m in at.sidebar.markdown]
    assert any(s.startswith("1. Test page: Generalization") for s in steps), steps  # the step was applied
    assert "project" not in at.session_state or at.session_state["project"] is None
