"""The project store on SQLite and on a real PostgreSQL server (``store_url`` runs every test
on both): projects saved and reopened as they were, a stale view refused, two processes
writing one project, deletion that erases, the append-only audit log, migrations,
export and import, and twelve monthly deliveries released through one project."""

from __future__ import annotations

import io
import json
import sys
import textwrap
import zipfile

import pandas as pd
import pytest
from project_files import ROLES, delivery, drop_audit_triggers, patient_delivery, shared_release_views, worked_copy
from sqlalchemy import create_engine, text
from sqlalchemy.exc import DBAPIError

from anonlib.cli import main as cli
from anonlib.core.dataset import Dataset
from anonlib.core.errors import ProjectError, StaleProjectError, StoreError
from anonlib.core.loading import load_table
from anonlib.projects import (
    ProjectState,
    ProjectStore,
    audit_entries,
    deliver,
    export_project,
    import_project,
    record_package,
    verify_chain,
    verify_entry,
)
from anonlib.projects import store as store_module
from anonlib.projects.chain import GENESIS, LogHead, entry_of, head_extends, head_keys, log_head, project_head
from anonlib.projects.records import dumps
from anonlib.projects.schema import META
from anonlib.workflow import ReleaseTarget, WorkingCopy, release_csv, release_package
from anonlib.workflow.health_steps import PseudonymizeStep
from anonlib.workflow.recipe import Reading
from anonlib.workflow.release import digest


@pytest.fixture(autouse=True)
def _views_once(monkeypatch):
    """The tests read a package's digests, members and entries, not its report: the release view of
    each release is computed once (``shared_release_views``), for SQLite and PostgreSQL alike."""
    shared_release_views(monkeypatch)


def _released(copy) -> bytes:
    return release_csv(copy.release())


def test_a_reopened_project_is_the_working_copy_it_saved(store_url):
    data = delivery(0)
    copy = worked_copy(data)
    ref = ProjectStore(store_url).create("survey", ProjectState.of(copy, "upload:survey.csv"), data)
    again = ProjectStore(store_url)  # another opening of the same store
    project = again.load("survey")
    restored = project.state.restore(again.file(ref))
    assert project.summary.records == 300 and project.summary.file_bytes == len(data)
    assert restored.target == copy.target
    assert [a.summary() for a in restored.steps] == [a.summary() for a in copy.steps]
    assert restored.loaded.roles == copy.loaded.roles and restored.loaded.fingerprint == copy.loaded.fingerprint
    assert _released(restored) == _released(copy)
    assert restored.check.sentence() == copy.check.sentence()


def test_pseudonyms_replay_under_the_key_the_project_keeps(store_url):
    data = patient_delivery(0)
    table = load_table(data, name="study.csv")
    dataset = Dataset.from_frame("study.csv", table.frame, {**ROLES, "pid": "person"})
    start = WorkingCopy.start(dataset, ReleaseTarget(k=2), reading=Reading.of(table, data))
    store = ProjectStore(store_url)
    ref = store.create("study", ProjectState.of(start, "upload:study.csv"), data)
    key = store.key(ref)
    copy = start.apply(PseudonymizeStep.made("pid", key), "Dataset")
    ref = store.save(ref, ProjectState.of(copy, "upload:study.csv"), "pid as pseudonyms")
    saved = ProjectStore(store_url).load("study")  # as a reload or a restarted server opens it
    assert key.hex() not in saved.state.dumps()  # the state names the key by its id only
    with pytest.raises(ProjectError, match="need its key"):
        saved.state.restore(data)
    restored = saved.state.restore(store.file(ref), key=store.key(ref))
    assert _released(restored) == _released(copy)
    # the next delivery is pseudonymized under the same key: the same patients, the same pseudonyms
    first = dict(zip(dataset.frame["pid"], copy.current.frame["pid"], strict=True))
    nxt = deliver(store, ref, patient_delivery(1), "month1.csv")
    assert nxt.copy is not None, nxt.problem
    second = dict(zip(nxt.copy.loaded.frame["pid"], nxt.copy.current.frame["pid"], strict=True))
    shared = set(first) & set(second)
    assert len(shared) > 50 and all(first[p] == second[p] for p in shared)
    # another key would orphan the pseudonyms: refused while the steps hold them; a duplicate keeps the key
    with pytest.raises(ProjectError, match="undo them"):
        store.set_key(ref, bytes(32))
    assert store.key(store.duplicate(ref)) == key
    other = store.create("fresh", ProjectState.of(start, "upload:study.csv"), data)
    assert store.key(other) != key
    store.set_key(other, key)  # no pseudonyms yet: the key of earlier deliveries made elsewhere is taken
    assert store.key(other) == key


def test_a_stale_view_is_refused_and_the_newer_change_kept(store_url):
    data = delivery(0)
    store = ProjectStore(store_url)
    copy = worked_copy(data)
    tab_a = tab_b = store.create("survey", ProjectState.of(copy, "upload:survey.csv"), data)
    tab_a = store.save(tab_a, ProjectState.of(copy.with_target(ReleaseTarget(k=3)), "upload:survey.csv"), "k = 3")
    with pytest.raises(StaleProjectError, match="changed in another tab or window"):
        store.save(tab_b, ProjectState.of(copy.with_target(ReleaseTarget(k=7)), "upload:survey.csv"), "k = 7")
    latest = store.load(tab_b.id)
    assert latest.state.target.k == 3 and latest.ref.version == tab_a.version == 2
    # the stale tab reloads and its next change is saved on top of the newer one
    store.save(latest.ref, ProjectState.of(copy.with_target(ReleaseTarget(k=7)), "upload:survey.csv"), "k = 7")
    assert store.load("survey").state.target.k == 7


WRITER = """
import sys, time
from anonlib.core.errors import StaleProjectError
from anonlib.projects import ProjectState, ProjectStore
store = ProjectStore(sys.argv[1])
print("ready", flush=True)
sys.stdin.readline()  # both writers start together, once both are ready
stale = 0
for _ in range(int(sys.argv[2])):
    while True:  # read, change, compare-and-set; a stale read is read again
        project = store.load("counter")
        state = project.state
        raised = ProjectState(state.origin, state.source, type(state.target)(k=state.target.k + 1), state.steps)
        time.sleep(0.003)  # a page's work between reading the project and saving the change
        try:
            store.save(project.ref, raised, "k + 1")
            break
        except StaleProjectError:
            stale += 1
print(stale)
"""


class _Together:
    """The writer's standard input: its line comes once both writers are ready."""

    def __init__(self, barrier) -> None:
        self.barrier = barrier

    def readline(self) -> str:
        self.barrier.wait(timeout=120)
        return "go\n"


def _writer(url: str, each: int, barrier, results) -> None:
    """WRITER run as its own script (``__main__``, its arguments) in a process forked from one that
    imported the store once; its standard output to the test."""
    import contextlib
    import io

    sys.argv = ["-c", url, str(each)]
    sys.stdin = _Together(barrier)
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(WRITER, "writer", "exec"), {"__name__": "__main__"})
    except BaseException:  # said to the test, not lost with the process
        import traceback

        out.write(traceback.format_exc())
    results.put(out.getvalue())


def test_two_processes_writing_one_project_lose_no_update(store_url):
    """Two processes (forked from a server that imported the store once: a fresh interpreter spent
    1.5-3 CPU-seconds on imports, not what this checks) write one project at once."""
    import multiprocessing

    from cli_processes import PRELOAD, _no_script_as_main

    data = delivery(0, rows=40)
    store = ProjectStore(store_url)
    copy = worked_copy(data).with_target(ReleaseTarget(k=1))
    store.create("counter", ProjectState.of(copy, "upload:survey.csv"), data)
    each = 50
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)  # no effect once the server runs
    barrier, results = context.Barrier(2), context.Queue()
    writers = [context.Process(target=_writer, args=(store_url, each, barrier, results)) for _ in range(2)]
    with _no_script_as_main():
        for w in writers:
            w.start()
    try:
        outputs = [results.get(timeout=300) for _ in writers]
    finally:
        for w in writers:
            w.join(60)
            if w.is_alive():
                w.kill()
                w.join()
    assert [w.exitcode for w in writers] == [0, 0], outputs
    assert [o.splitlines()[0] for o in outputs] == ["ready", "ready"]
    assert sum(int(o.splitlines()[1]) for o in outputs) > 0  # they did collide: some reads were stale and read again
    project = store.load("counter")
    assert project.state.target.k == 1 + 2 * each  # every increment of both writers is there
    assert project.ref.version == 1 + 2 * each
    assert store.integrity_ok()


def test_deleting_a_project_erases_its_rows_and_its_file(store_url):
    marker = "MARKER-7f3a9c-diagnosis"
    data = delivery(0, marker=marker)
    store = ProjectStore(store_url)
    copy = worked_copy(data)
    ref = store.create("to delete", ProjectState.of(copy, "upload:survey.csv"), data)
    other = store.create("kept", ProjectState.of(worked_copy(delivery(1)), "upload:m1.csv"), delivery(1))
    entry = record_package(store, ref, release_package(copy), source=data, user="anna")
    store.delete(ref)
    engine = create_engine(store_url)
    with engine.connect() as c:
        assert c.execute(text("SELECT count(*) FROM projects WHERE id = :i"), {"i": ref.id}).scalar() == 0
        assert c.execute(text("SELECT count(*) FROM releases WHERE project_id = :i"), {"i": ref.id}).scalar() == 0
        assert c.execute(text("SELECT count(*) FROM blobs WHERE sha256 = :s"), {"s": digest(data)}).scalar() == 0
        assert c.execute(text("SELECT count(*) FROM blobs")).scalar() == 1  # the other project's file only
    engine.dispose()
    path = store_module.sqlite_path(store_url)
    if path is not None:  # the bytes are gone from the database file and its log, not just unlinked
        for part in store_module._sqlite_files(path):
            if part.exists():
                assert marker.encode() not in part.read_bytes(), part.name
    entries = audit_entries(store)
    assert [(e.id, e.project, e.project_deleted) for e in entries] == [(entry.id, "to delete", True)]
    assert verify_chain(store) == []
    with pytest.raises(ProjectError, match="deleted with its files"):
        verify_entry(store, entry.id)
    assert [p.name for p in store.summaries()] == [other.name]


def test_the_audit_log_is_append_only_and_its_chain_shows_a_change(store_url):
    data = delivery(0)
    store = ProjectStore(store_url)
    copy = worked_copy(data)
    ref = store.create("survey", ProjectState.of(copy, "upload:survey.csv"), data)
    first = record_package(store, ref, release_package(copy), source=data, user="anna")
    second = record_package(store, ref, release_package(copy.undo()), source=data, user="ben")
    assert second.previous == first.entry_sha256 and verify_chain(store) == []
    engine = create_engine(store_url)
    for statement in ("UPDATE audit SET met = NOT met", "DELETE FROM audit"):
        with pytest.raises(DBAPIError, match="append-only"), engine.begin() as c:
            c.execute(text(statement))
    assert [e.met for e in audit_entries(store)] == [first.met, second.met]
    # changed by other means (the triggers dropped by whoever can write the database): the chain says so
    engine.dispose()
    engine = drop_audit_triggers(store_url)
    with engine.begin() as c:
        c.execute(text("UPDATE audit SET released = released + 1 WHERE id = :i"), {"i": first.id})
    assert verify_chain(store) == [
        f"Audit entry {first.id} was changed after it was written (its digest does not match)."
    ]
    with engine.begin() as c:  # ... and so does an entry removed
        c.execute(text("DELETE FROM audit WHERE id = :i"), {"i": first.id})
    engine.dispose()
    assert verify_chain(store) == [
        f"Audit entry {second.id} does not follow the entry before it in its project (one was removed or changed).",
        f"The audit log's chain of project 'survey' is broken: the chain ends at entry {second.id} (1 entry) but its "
        f"head says entry {second.id} (2 entries); entries were removed from it.",
        f"The project 'survey' keeps the release of audit entry {first.id}, which the audit log lacks.",
    ]


def test_the_chain_is_per_project_and_a_broken_one_stops_only_its_own(store_url):
    """team.md part 2, 5: each entry follows the one before it in its own project; an entry
    removed from one project's chain stops that project's next release in one sentence naming
    it, while another project's releases are recorded, and the log's head folds them all."""
    data = delivery(0)
    store = ProjectStore(store_url)
    copy = worked_copy(data)
    a = store.create("survey", ProjectState.of(copy, "upload:survey.csv"), data)
    b = store.create("trial", ProjectState.of(copy, "upload:trial.csv"), data)
    a1 = record_package(store, a, release_package(copy), source=data)
    b1 = record_package(store, b, release_package(copy), source=data)
    a2 = record_package(store, a, release_package(copy.undo()), source=data)
    assert (a1.previous, b1.previous, a2.previous) == (GENESIS, GENESIS, a1.entry_sha256)
    assert [a1.id, b1.id, a2.id] == [1, 2, 3] and verify_chain(store) == []
    assert project_head(store, a.id) == LogHead(2, a2.id, a2.entry_sha256)
    folded = GENESIS
    for e in (a1, b1, a2):  # the log's head: every entry's digest folded in number order
        folded = digest((folded + e.entry_sha256).encode())
    assert log_head(store) == LogHead(3, 3, folded)
    engine = drop_audit_triggers(store_url)
    with engine.begin() as c:  # survey's last entry removed: its chain before it still links
        c.execute(text("DELETE FROM audit WHERE id = :i"), {"i": a2.id})
        c.execute(text("DELETE FROM releases WHERE audit_id = :i"), {"i": a2.id})
    engine.dispose()
    broken = (
        f"The audit log's chain of project 'survey' is broken: the chain ends at entry {a1.id} (1 entry) but its head "
        f"says entry {a2.id} (2 entries); entries were removed from its end."
    )
    assert verify_chain(store) == [broken] and verify_chain(store, "survey") == [broken]
    with pytest.raises(ProjectError) as refused:
        record_package(store, a, release_package(copy), source=data)
    assert str(refused.value) == f"{broken[:-1]}; no release is recorded while the log fails its check."
    b2 = record_package(store, b, release_package(copy.undo()), source=data)  # trial's release is recorded
    assert (b2.id, b2.previous) == (a2.id + 1, b1.entry_sha256) and verify_chain(store, "trial") == []
    assert [e.id for e in audit_entries(store)] == [a1.id, b1.id, b2.id]


def test_an_older_stores_one_chain_still_verifies_and_its_projects_chain_on(store_url):
    """A store written before the chains were per project: its entries hang on one chain across
    the log, with one head; it still verifies, a head kept from it (its last entry's SHA-256) is
    still extended, a change in it is still caught, and each project's next entry follows that
    project's last."""
    data = delivery(0)
    store = ProjectStore(store_url)
    copy = worked_copy(data)
    a = store.create("survey", ProjectState.of(copy, "upload:survey.csv"), data)
    b = store.create("trial", ProjectState.of(copy, "upload:trial.csv"), data)
    for ref, c_ in ((a, copy), (b, copy), (a, copy.undo())):
        record_package(store, ref, release_package(c_), source=data)
    engine = drop_audit_triggers(store_url)
    with engine.begin() as c:  # written as the older version wrote it: one chain, one head
        previous = GENESIS
        rows = c.execute(text("SELECT * FROM audit ORDER BY id")).mappings().all()
        for row in rows:
            entry = entry_of({**row, "user": row["username"]}, deleted=False)
            sealed = digest(dumps(entry.content() | {"previous": previous}).encode("utf-8"))
            c.execute(
                text("UPDATE audit SET previous = :p, entry_sha256 = :s WHERE id = :i"),
                {"p": previous, "s": sealed, "i": row["id"]},
            )
            previous = sealed
        c.execute(META.delete().where(META.c.key.like("audit_%")))
        c.execute(META.insert(), [{"key": k, "value": v} for k, v in zip(head_keys(), (previous, "3", "3"))])
    old_head = previous
    assert verify_chain(store) == [] and head_extends(store, old_head).extends
    a3 = record_package(store, a, release_package(copy), source=data)  # chained within survey from here
    assert a3.previous == audit_entries(store)[2].entry_sha256 and verify_chain(store) == []
    assert head_extends(store, old_head).entry == 3 and head_extends(store, log_head(store).sha256).after == 0
    with engine.begin() as c:  # an entry of the one chain changed: caught as before
        c.execute(text("UPDATE audit SET released = released + 1 WHERE id = 2"))
    engine.dispose()
    assert verify_chain(store) == ["Audit entry 2 was changed after it was written (its digest does not match)."]


def test_an_older_store_is_migrated_and_a_newer_one_refused(store_url, monkeypatch):
    store = ProjectStore(store_url)
    store.create("survey", ProjectState.of(worked_copy(delivery(0)), "upload:survey.csv"), delivery(0))
    added = []

    def next_version(connection):
        connection.execute(text("ALTER TABLE projects ADD COLUMN note TEXT"))
        added.append(connection.dialect.name)

    newer = store_module.SCHEMA_VERSION + 1
    monkeypatch.setitem(store_module.MIGRATIONS, newer, next_version)
    monkeypatch.setattr(store_module, "SCHEMA_VERSION", newer)
    migrated = ProjectStore(store_url)
    assert added and migrated.schema_version == newer and migrated.load("survey").state.target.k == 5
    engine = create_engine(store_url)
    with engine.connect() as c:
        assert c.execute(text("SELECT value FROM meta WHERE key = 'schema_version'")).scalar() == str(newer)
        assert c.execute(text("SELECT count(note) FROM projects")).scalar() == 0
    with engine.begin() as c:
        c.execute(META.update().where(META.c.key == "schema_version").values(value="99"))
    engine.dispose()
    with pytest.raises(StoreError, match=rf"newer anonlib \(schema version 99; this one reads up to {newer}\)"):
        ProjectStore(store_url)


def test_export_and_import_carry_the_project_and_the_key_only_when_asked(store_url, tmp_path):
    data = delivery(0)
    store = ProjectStore(store_url)
    ref = store.create("survey", ProjectState.of(worked_copy(data), "upload:survey.csv"), data)
    elsewhere = ProjectStore(f"sqlite:///{tmp_path / 'elsewhere' / 'projects.sqlite'}")
    plain = import_project(elsewhere, export_project(store, ref))
    keyed = import_project(elsewhere, export_project(store, ref, with_key=True), name="survey with key")
    assert elsewhere.load(plain).state == store.load(ref).state
    assert elsewhere.file(plain) == data
    assert elsewhere.key(plain) != store.key(ref) and elsewhere.key(keyed) == store.key(ref)
    assert b"key" not in zipfile.ZipFile(io.BytesIO(export_project(store, ref))).read("project.json")
    with pytest.raises(ProjectError, match="already a project named 'survey'"):
        import_project(elsewhere, export_project(store, ref))
    damaged = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(export_project(store, ref))) as source, zipfile.ZipFile(damaged, "w") as out:
        for name in source.namelist():
            payload = source.read(name)
            out.writestr(name, payload.replace(b"flu", b"FLU") if name == "file" else payload)
    with pytest.raises(ProjectError, match="file does not match its SHA-256"):
        import_project(elsewhere, damaged.getvalue(), name="damaged")


def test_twelve_monthly_deliveries_through_one_project_are_on_record_and_verify(store_url, tmp_path, capsys):
    first = delivery(0)
    store = ProjectStore(store_url)
    ref = store.create("monthly survey", ProjectState.of(worked_copy(first), "upload:month00.csv"), first)
    written = []
    for month in range(1, 13):
        data = delivery(month)
        source = tmp_path / f"month{month:02d}.csv"
        source.write_bytes(data)
        released = deliver(store, ref, data, source.name)
        assert released.differences == () and released.copy is not None, released.problem
        assert [s.step.kind for s in released.copy.steps] == ["bands", "suppression"]
        package = released.package()
        released.record(store, package)
        path = tmp_path / f"release{month:02d}.zip"
        path.write_bytes(package)
        written.append((path, source))
    entries = audit_entries(store, "monthly survey")
    assert len(entries) == 12 and verify_chain(store) == []
    for entry, (path, source) in zip(entries, written):
        package = path.read_bytes()
        members = zipfile.ZipFile(io.BytesIO(package))
        assert entry.package_sha256 == digest(package)
        assert entry.released_sha256 == digest(members.read("released.csv"))
        assert entry.source_sha256 == digest(source.read_bytes()) and entry.source_name == source.name
        recipe = json.loads(members.read("recipe.json"))
        assert entry.released == recipe["release"]["records"] and entry.records == 300
        assert entry.suppressed == 300 - entry.released
        assert verify_entry(store, entry.id).passed
        assert cli(["verify", str(path), str(source)]) == 0
    capsys.readouterr()
    assert store.summary(ref).releases == 12


def test_a_delivery_of_another_layout_is_refused_in_sentences(store_url):
    store = ProjectStore(store_url)
    ref = store.create("survey", ProjectState.of(worked_copy(delivery(0)), "upload:survey.csv"), delivery(0))
    data = delivery(1).replace(b"age,sex,zip,dx", b"age,gender,zip,dx,extra").replace(b"\n", b",x\n")
    data = data.replace(b"age,gender,zip,dx,extra,x\n", b"age,gender,zip,dx,extra\n")
    result = deliver(store, ref, data, "month01.csv")
    assert result.copy is None
    assert [d.sentence for d in result.differences] == [
        "The delivery lacks the column 'sex' (a quasi-identifier in the project).",
        "The delivery has a column 'gender' the project does not know; it is ignored and never released.",
        "The delivery has a column 'extra' the project does not know; it is ignored and never released.",
    ]
    assert audit_entries(store) == []


def test_a_project_keeping_only_the_fingerprint_asks_for_its_file(store_url):
    data = delivery(0)
    store = ProjectStore(store_url)
    ref = store.create("survey", ProjectState.of(worked_copy(data), "upload:survey.csv"), data, keep_file=False)
    project = store.load(ref)
    assert store.file(ref) is None and project.summary.file_bytes == 0
    with pytest.raises(ProjectError, match="keeps only the fingerprint of survey.csv"):
        project.state.restore(None)
    with pytest.raises(ProjectError, match="not survey.csv as the project read it"):
        project.state.restore(delivery(1))
    assert _released(project.state.restore(data)) == _released(worked_copy(data))
    store.set_keep_file(ref, True, data)  # kept after all: the same bytes only
    assert store.file(ref) == data and store.summary(ref).keep_file
    with pytest.raises(ProjectError, match="not survey.csv as the project read it"):
        store.set_keep_file(ref, True, delivery(1))
    store.set_keep_file(ref, False)  # and erased again
    assert store.file(ref) is None and store.usage().files == 0


def test_writer_script_is_what_the_concurrency_test_runs():
    # the script compiles (a syntax error would make the two-process test fail for the wrong reason)
    compile(textwrap.dedent(WRITER), "writer", "exec")


def test_a_delivery_released_from_the_dashboard_is_judged_on_the_cumulative_history(store_url):
    """Pseudonyms under the project's key link month 1 to month 0: the dashboard's delivery is judged
    with month 0's released records (as `apply --project`), and recorded only on the state it read."""
    from anonlib.core.histories import Earlier
    from anonlib.workflow.steps import BandsStep, SuppressionStep

    data = patient_delivery(0)
    table = load_table(data, name="study.csv")
    roles = {**ROLES, "zip": "ignore", "pid": "person"}
    dataset = Dataset.from_frame("study.csv", table.frame, roles)
    start = WorkingCopy.start(dataset, ReleaseTarget(k=2, max_suppressed=0.9), reading=Reading.of(table, data))
    store = ProjectStore(store_url)
    ref = store.create("study", ProjectState.of(start, "upload:study.csv"), data)
    copy = start.apply(PseudonymizeStep.made("pid", store.key(ref)), "Dataset")
    copy = copy.apply(BandsStep("age", 40, 0, 0, 120, True), "Individual privacy")
    copy = copy.apply(SuppressionStep.from_target(copy.release_target, copy.current), "Sidebar")
    ref = store.save(ref, ProjectState.of(copy, "upload:study.csv"), "pid as pseudonyms, failing people suppressed")
    month0 = release_package(copy)
    record_package(store, ref, month0, source=data)
    nxt = deliver(store, ref, patient_delivery(1), "month1.csv")
    assert nxt.copy is not None, nxt.problem
    check = nxt.copy.check
    assert nxt.links is not None and nxt.links.earlier is not None and nxt.links.earlier.deliveries == 1
    assert check.target.cumulative == " across this delivery and 1 earlier delivery linked by pseudonym"
    assert check.persons == check.loaded_persons - check.suppressed_persons > 0
    # pandas: the released histories of both months joined by pseudonym, each person's multiset of
    # (age band, sex) rows with its month; every person released this month shares it with k - 1 others
    earlier = pd.read_csv(io.BytesIO(zipfile.ZipFile(io.BytesIO(month0)).read("released.csv")), dtype=str)
    now = pd.read_csv(io.BytesIO(release_csv(nxt.copy.release())), dtype=str)
    both = pd.concat([earlier.assign(month=0), now.assign(month=1)])
    rows = both[["month", "age", "sex"]].astype(str).agg("|".join, axis=1)
    history = rows.groupby(both["pid"]).agg(lambda r: tuple(sorted(r)))
    sharing = history.map(history.value_counts())
    failing = {p for p in now["pid"].unique() if sharing[p] < 2}  # fewer than k = 2 share it across both months
    assert check.persons == now["pid"].nunique() and check.persons_in_failing == len(failing) > 0
    assert not check.met  # refused as `apply --project` refuses it, where month 1 alone would not show these
    # the people month 1 alone would release (their month-1 history shared) but whom month 0 sets apart
    before = nxt.copy.steps[1].frame  # month 1 pseudonymized and banded, before its suppression
    cells = before[["age", "sex"]].astype(str).agg("|".join, axis=1)
    alone = cells.groupby(before["pid"]).agg(lambda r: tuple(sorted(r)))
    joined = pd.concat([earlier.assign(month=0), before.astype(str).assign(month=1)])
    whole = joined[["month", "age", "sex"]].astype(str).agg("|".join, axis=1)
    cumulative = whole.groupby(joined["pid"]).agg(lambda r: tuple(sorted(r)))
    shared_alone = alone.map(alone.value_counts())
    set_apart = [p for p in alone.index if shared_alone[p] >= 2 and cumulative.map(cumulative.value_counts())[p] < 2]
    assert set_apart and set(set_apart) & set(now["pid"]) <= failing
    assert isinstance(nxt.copy.target.earlier, Earlier)
    # another delivery recorded meanwhile: this one is not recorded on the state it read
    other = deliver(store, ref, patient_delivery(2), "month2.csv")
    other.record(store, other.package())
    with pytest.raises(ProjectError):
        nxt.record(store, nxt.package())
