"""Nothing lost (``integrity.md`` classes 1-4 and 14): a release into a project is one unit
(its files and its audit entry together or not at all, under faults and kills at every
step), concurrent first releases all join the project, the audit log's head catches a
log that lost its end (and packages state their entry), a broken chain says why in JSON,
a store deleted under a run is no success, and a read-only store can be audited. On SQLite
and on the real PostgreSQL server the tests start."""

from __future__ import annotations

import hashlib
import io
import json
import os
import pwd
import shutil
import signal
import tempfile
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from cli_processes import PACKAGE_PRELOAD, PRELOAD, run_in_processes
from project_files import delivery, drop_audit_triggers, known_release_views, shared_release_views, worked_copy
from sqlalchemy import create_engine, text

from anonlib.cli import main
from anonlib.core.errors import AnonlibError
from anonlib.projects import (
    ProjectState,
    ProjectStore,
    audit_entries,
    record_package,
    releasing,
    verify_chain,
    verify_entry,
)
from anonlib.projects import store as store_module
from anonlib.projects.audit import package_log_problems
from anonlib.projects.chain import GENESIS, log_head, project_head
from anonlib.workflow import release_package
from anonlib.workflow.package import AUDIT_FILE, package_stamp
from anonlib.workflow.verify import verify_package

OUTPUTS = ("r.csv", "r.json", "p.zip")


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def anonymize_argv(folder: Path, project: str = "survey", month: int = 0, prefix: str = "") -> list[str]:
    return [
        "anonymize", str(folder / f"month{month}.csv"), "--shield", "age,sex,zip", "--k", "5",
        "--max-suppressed", "0.1", "--out", str(folder / f"{prefix}r.csv"), "--recipe",
        str(folder / f"{prefix}r.json"), "--package", str(folder / f"{prefix}p.zip"), "--project", project,
    ]  # fmt: skip


@pytest.fixture(autouse=True)
def _views_once(monkeypatch):
    """The tests read a package's digests, stamp and entry, not its report: the release view of
    each release is computed once (``shared_release_views``)."""
    shared_release_views(monkeypatch)


@pytest.fixture
def folder(tmp_path):
    out = tmp_path / "work"
    out.mkdir()
    for month in range(2):
        (out / f"month{month}.csv").write_bytes(delivery(month))
    return out


@pytest.fixture(params=["sqlite", "postgresql"])
def cli_store(request, tmp_path, monkeypatch) -> str:
    """The URL of an empty store the command line uses (ANONLIB_STORE): SQLite, then PostgreSQL."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'store' / 'projects.sqlite'}"
    else:
        from postgres_server import new_database

        url = new_database(request.getfixturevalue("postgresql"))
    monkeypatch.setenv("ANONLIB_STORE", url)
    return url


def _temporary_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".part" in p.name)


def whole_or_nothing(folder: Path, url: str, prefix: str = "") -> str:
    """'whole' when every file of the release is in place with its entry (digests matching),
    'nothing' when neither a file nor an entry is; fails on anything in between."""
    store = ProjectStore(url)
    entries = audit_entries(store)
    files = [folder / f"{prefix}{name}" for name in OUTPUTS]
    assert _temporary_files(folder) == []
    assert verify_chain(store) == []
    if not entries:
        assert [f.name for f in files if f.exists()] == []
        return "nothing"
    assert len(entries) == 1 and all(f.exists() for f in files)
    entry = entries[0]
    assert entry.released_sha256 == sha(files[0]) and entry.package_sha256 == sha(files[2])
    assert package_stamp(files[2].read_bytes())["entry"] == entry.id
    return "whole"


# ---------------------------------------------------------------------- class 1: one unit


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("   ", "error: A project needs a name.\n"),
        ("x" * 201, "error: A project name is at most 200 characters; this one has 201.\n"),
    ],
)
def test_a_project_name_refused_writes_no_file(folder, capsys, name, said):
    code, out, err = run(capsys, *anonymize_argv(folder, name))
    assert (code, err) == (2, said)
    assert sorted(p.name for p in folder.iterdir()) == ["month0.csv", "month1.csv"]


def test_a_read_only_store_refuses_the_release_before_any_file_is_written(folder, capsys, tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'store' / 'projects.sqlite'}"
    ProjectStore(url)
    store_module._ENGINES.pop(url).dispose()
    monkeypatch.setenv("ANONLIB_STORE", f"sqlite:///file:{tmp_path / 'store' / 'projects.sqlite'}?mode=ro&uri=true")
    code, _, err = run(capsys, *anonymize_argv(folder))
    assert code == 2 and err.count("\n") == 1 and "is read-only; changes are not saved." in err
    assert sorted(p.name for p in folder.iterdir()) == ["month0.csv", "month1.csv"]


def test_a_full_disk_while_writing_the_package_records_nothing(folder, capsys, cli_store, monkeypatch):
    real = releasing.write_temporary

    def full(temporary, target, data):
        if target.suffix == ".zip":
            raise OSError(28, "No space left on device")
        real(temporary, target, data)

    monkeypatch.setattr(releasing, "write_temporary", full)
    code, _, err = run(capsys, *anonymize_argv(folder))
    assert code == 2 and err == (
        f"error: Could not write '{folder / 'p.zip'}': No space left on device; nothing was released and any "
        "earlier file there is unchanged.\n"
    )
    monkeypatch.undo()
    monkeypatch.setenv("ANONLIB_STORE", cli_store)
    assert whole_or_nothing(folder, cli_store) == "nothing"
    assert [p.name for p in ProjectStore(cli_store).summaries()] == []  # the project is made with its release


def test_apply_into_a_project_is_one_unit_too(folder, capsys, cli_store, monkeypatch):
    assert run(capsys, *anonymize_argv(folder))[0] == 0
    monkeypatch.setattr(releasing, "reached", _fail_at("before the commit"))
    argv = ["apply", folder / "r.json", folder / "month1.csv", "--out", folder / "a.csv", "--project", "survey"]
    code, _, err = run(capsys, *argv)
    assert code == 2 and "injected failure before the commit" in err
    assert not (folder / "a.csv").exists() and _temporary_files(folder) == []
    assert len(audit_entries(ProjectStore(cli_store))) == 1
    monkeypatch.setattr(releasing, "reached", lambda step: None)
    code, out, _ = run(capsys, *argv)
    assert code in (0, 1) and f"written            {folder / 'a.csv'}" in out and "entry 2 of project survey" in out
    assert audit_entries(ProjectStore(cli_store))[-1].released_sha256 == sha(folder / "a.csv")


def test_postgresql_gone_before_the_commit_records_nothing_and_writes_nothing(folder, capsys, monkeypatch, postgresql):
    from postgres_server import new_database

    url = new_database(postgresql)
    monkeypatch.setenv("ANONLIB_STORE", url)
    admin = create_engine(postgresql, isolation_level="AUTOCOMMIT")

    def server_drops_the_connection(step: str) -> None:
        if step == "before the commit":
            with admin.connect() as c:
                c.execute(
                    text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :d"),
                    {"d": url.rsplit("/", 1)[1]},
                )

    monkeypatch.setattr(releasing, "reached", server_drops_the_connection)
    code, out, err = run(capsys, *anonymize_argv(folder))
    admin.dispose()
    assert code == 2 and err.count("\n") == 1 and err.startswith("error: The PostgreSQL project store postgresql://")
    assert "audit log" not in out
    monkeypatch.setattr(releasing, "reached", lambda step: None)
    assert whole_or_nothing(folder, url) == "nothing"


def test_the_next_opening_leaves_the_release_of_a_running_process_alone(tmp_path):
    url = f"sqlite:///{tmp_path / 'store' / 'projects.sqlite'}"
    store = ProjectStore(url)
    temporary, target = tmp_path / ".r.csv.abc.part.csv", tmp_path / "r.csv"
    temporary.write_bytes(b"a\n")
    with store._transaction() as c:  # a release this (running) process is writing
        releasing.mark(c, "pending_release:running", [(str(temporary), str(target))])
    assert ProjectStore(url).recovered == [] and temporary.exists() and not target.exists()
    with store._transaction() as c:  # ... and one of a process that died (no process has that id)
        c.execute(
            text("UPDATE meta SET value = replace(value, '\"pid\": ' || :pid, '\"pid\": 999999999')"),
            {"pid": os.getpid()},
        )
    assert ProjectStore(url).recovered == [
        "A release interrupted before it was recorded was undone: its temporary files were removed."
    ]
    assert not temporary.exists() and not target.exists()


# ---------------------------------------------------------------------- fault injection


class InjectedFault(AnonlibError):
    """A failure injected at a step of the release (the command line says it in one sentence)."""


def _fail_at(wanted: str):
    def reached(step: str) -> None:
        if step == wanted:
            raise InjectedFault(f"injected failure {step}")

    return reached


@pytest.mark.parametrize("step", releasing.STEPS)
def test_a_release_failing_at_any_step_is_whole_or_nothing(folder, capsys, cli_store, monkeypatch, step):
    monkeypatch.setattr(releasing, "reached", _fail_at(step))
    code, _, err = run(capsys, *anonymize_argv(folder))
    assert (code, err) == (2, f"error: injected failure {step}\n")
    monkeypatch.setattr(releasing, "reached", lambda s: None)
    assert run(capsys, "projects", "list")[0] == 0  # the next command
    expected = "nothing" if releasing.STEPS.index(step) < releasing.STEPS.index("after the commit") else "whole"
    assert whole_or_nothing(folder, cli_store) == expected
    # and the next release goes on from there
    code, out, _ = run(capsys, *anonymize_argv(folder, month=1, prefix="next-"))
    assert code == 0 and f"entry {1 if expected == 'nothing' else 2} of project survey" in out
    assert verify_chain(ProjectStore(cli_store)) == []


@pytest.mark.parametrize("step", releasing.STEPS)
def test_a_release_killed_at_any_step_is_whole_or_nothing_after_the_next_command(
    folder, capsys, tmp_path, monkeypatch, step
):
    url = f"sqlite:///{tmp_path / 'store' / 'projects.sqlite'}"
    (killed,) = run_in_processes(
        [anonymize_argv(folder)],
        {"ANONLIB_STORE": url},
        kill_at=step,
        preload=PACKAGE_PRELOAD,
        views=known_release_views(),  # the classifiers of the releases the tests above made
    )
    assert (killed.exitcode, killed.code) == (-signal.SIGKILL, None), killed.err[-2000:]
    expected = "nothing" if releasing.STEPS.index(step) < releasing.STEPS.index("after the commit") else "whole"
    if expected == "nothing" and step != "before the table":
        assert _temporary_files(folder)  # the kill left files under temporary names ...
    monkeypatch.setenv("ANONLIB_STORE", url)
    code, out, err = run(capsys, "audit", "--json")  # ... which the next command finishes or removes, and says so
    assert code == 0 and len(json.loads(out)) == (0 if expected == "nothing" else 1)
    assert err == (
        "note: A release interrupted before it was recorded was undone: its temporary files were removed.\n"
        if expected == "nothing"
        else "note: The release of audit entry 1, interrupted after it was recorded, was completed: its files were "
        "renamed into place.\n"
    )
    assert whole_or_nothing(folder, url) == expected


# ---------------------------------------------------------------------- class 2: creating races


CONCURRENT = 10


def test_ten_concurrent_first_releases_into_a_new_project_all_record(folder, tmp_path, cli_store):
    """Ten processes release into a project none of them finds, all at once: each is recorded,
    numbered 1 to 10."""

    def argv(i: int) -> list:
        return [
            "anonymize", folder / "month0.csv", "--shield", "age,sex,zip", "--k", "5", "--max-suppressed",
            "0.1", "--out", folder / f"r{i}.csv", "--project", "fresh",
        ]  # fmt: skip

    argvs = [argv(i) for i in range(CONCURRENT)]
    done = run_in_processes(argvs, {"ANONLIB_STORE": cli_store}, together=True)
    assert [(d.exitcode, d.code, d.err) for d in done] == [(0, 0, "")] * CONCURRENT
    store = ProjectStore(cli_store)
    entries = audit_entries(store, "fresh")
    assert len(entries) == CONCURRENT and [e.id for e in entries] == list(range(1, CONCURRENT + 1))
    assert sorted(e.released_sha256 for e in entries) == sorted(sha(folder / f"r{i}.csv") for i in range(CONCURRENT))
    assert [(s.name, s.releases) for s in store.summaries()] == [("fresh", CONCURRENT)]
    assert verify_chain(store) == []


# ---------------------------------------------------------------------- class 3: the log's head


def test_the_last_entry_deleted_is_caught_and_no_release_reuses_its_number(folder, capsys, cli_store):
    assert run(capsys, *anonymize_argv(folder, prefix="a-"))[0] == 0
    assert run(capsys, *anonymize_argv(folder, month=1, prefix="b-"))[0] == 0
    second = (folder / "b-p.zip").read_bytes()
    assert package_stamp(second) == {
        "project": "survey",
        "entry": 2,
        "head_before": {
            "entries": 1,
            "last_entry": 1,
            "sha256": audit_entries(ProjectStore(cli_store))[0].entry_sha256,
        },
    }
    assert package_log_problems(ProjectStore(cli_store), second, "survey") == []
    engine = drop_audit_triggers(cli_store)
    with engine.begin() as c:  # the last entry and its release removed by someone who can write the database
        c.execute(text("DELETE FROM audit WHERE id = 2"))
        c.execute(text("DELETE FROM releases WHERE audit_id = 2"))
    engine.dispose()
    said = (
        "The audit log's chain of project 'survey' is broken: the chain ends at entry 1 (1 entry) but its head says "
        "entry 2 (2 entries); entries were removed from its end."
    )
    code, out, err = run(capsys, "audit")
    assert (code, err) == (1, "") and f"BROKEN             {said}" in out and "chain              intact" not in out
    code, out, _ = run(capsys, "audit", "--json")
    document = json.loads(out)
    assert code == 1 and document["error"] == said and document["problems"] == [said]
    assert [e["id"] for e in document["entries"]] == [1]
    store = ProjectStore(cli_store)
    assert [c.sentence for c in verify_entry(store, 1).checks if c.part == "audit log"] == [said]
    problems = package_log_problems(store, second, "survey")
    assert problems[0] == said and problems[1].startswith(
        "This package is audit entry 2 of project 'survey', but the audit log ends at entry 1 (its project's head says "
        "entry 2)"
    )
    # a new release into the project is refused in one sentence, and writes nothing
    code, _, err = run(capsys, *anonymize_argv(folder, prefix="c-"))
    assert code == 2 and err == f"error: {said[:-1]}; no release is recorded while the log fails its check.\n"
    assert not any((folder / f"c-{n}").exists() for n in OUTPUTS) and _temporary_files(folder) == []


def test_the_head_of_a_whole_log_matches_it_and_a_failed_record_leaves_it(cli_store):
    store = ProjectStore(cli_store)
    data = delivery(0)
    copy = worked_copy(data)
    ref = store.create("survey", ProjectState.of(copy, "upload:survey.csv"), data)
    first = record_package(store, ref, release_package(copy), source=data)
    # the project's chain head is its last entry; the log's head folds every entry's digest in order
    folded = hashlib.sha256((GENESIS + first.entry_sha256).encode()).hexdigest()
    assert project_head(store, ref.id).to_json() == {"entries": 1, "last_entry": first.id, "sha256": first.entry_sha256}
    assert log_head(store).to_json() == {"entries": 1, "last_entry": first.id, "sha256": folded}

    def fail(_package):
        raise OSError("no room")

    with pytest.raises(Exception, match="no room"):
        record_package(store, ref, release_package(copy.undo()), source=data, before_commit=fail)
    assert project_head(store, ref.id).to_json() == {"entries": 1, "last_entry": first.id, "sha256": first.entry_sha256}
    assert log_head(store).to_json() == {"entries": 1, "last_entry": first.id, "sha256": folded}
    assert [e.id for e in audit_entries(store)] == [first.id] and verify_chain(store) == []


def test_a_stamped_package_verifies_an_old_one_too_and_a_changed_stamp_is_caught(folder, capsys):
    assert run(capsys, *anonymize_argv(folder))[0] == 0
    stamped = (folder / "p.zip").read_bytes()
    assert verify_package(stamped, folder / "month0.csv").passed
    plain = release_package(worked_copy(delivery(0)))  # a package without audit.json verifies as before
    assert AUDIT_FILE not in zipfile.ZipFile(io.BytesIO(plain)).namelist() and verify_package(plain).passed
    members = {n: zipfile.ZipFile(io.BytesIO(stamped)).read(n) for n in zipfile.ZipFile(io.BytesIO(stamped)).namelist()}
    members[AUDIT_FILE] = members[AUDIT_FILE].replace(b'"entry": 1', b'"entry": 7')
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    result = verify_package(buffer.getvalue())
    assert not result.passed and result.failed_parts == (AUDIT_FILE,)


def test_a_package_downloaded_from_the_dashboard_states_its_entry(cli_store):
    from dashboard.release_download import recorded

    store = ProjectStore(cli_store)
    data = delivery(0)
    copy = worked_copy(data)
    ref = store.create("survey", ProjectState.of(copy, "upload:survey.csv"), data)
    handed = recorded(lambda: release_package(copy), store, ref)()
    (entry,) = audit_entries(store)
    assert package_stamp(handed)["entry"] == entry.id and entry.package_sha256 == hashlib.sha256(handed).hexdigest()
    assert package_log_problems(store, handed, "survey") == [] and verify_package(handed, data).passed


# ---------------------------------------------------------------------- class 4: failures say why


def test_audit_json_on_a_changed_entry_carries_the_sentence(folder, capsys, cli_store):
    assert run(capsys, *anonymize_argv(folder))[0] == 0
    engine = drop_audit_triggers(cli_store)
    with engine.begin() as c:
        c.execute(text("UPDATE audit SET released = released + 1"))
    engine.dispose()
    code, out, _ = run(capsys, "audit", "--json")
    document = json.loads(out)
    assert code == 1 and document["chain"] == "broken"
    assert document["error"] == "Audit entry 1 was changed after it was written (its digest does not match)."


@pytest.mark.parametrize("step", ["before the commit", "after the commit"])
def test_a_store_deleted_while_a_release_holds_it_is_no_success(folder, capsys, tmp_path, monkeypatch, step):
    url = f"sqlite:///{tmp_path / 'store' / 'projects.sqlite'}"
    monkeypatch.setenv("ANONLIB_STORE", url)
    path = store_module.sqlite_path(url)

    def delete_store(at: str) -> None:
        if at == step:
            for part in store_module._sqlite_files(path):
                part.unlink(missing_ok=True)

    monkeypatch.setattr(releasing, "reached", delete_store)
    code, out, err = run(capsys, *anonymize_argv(folder))
    assert code == 2 and err == (
        f"error: The project store {path} was deleted or replaced while this command was using it; nothing is "
        "recorded in it.\n"
    )
    assert "audit log" not in out and sorted(p.name for p in folder.iterdir()) == ["month0.csv", "month1.csv"]


def test_a_store_deleted_between_two_openings_in_one_process_is_opened_afresh(folder, capsys, tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'store' / 'projects.sqlite'}"
    monkeypatch.setenv("ANONLIB_STORE", url)
    ProjectStore(url).summaries()  # the process holds the store's connections ...
    for part in store_module._sqlite_files(store_module.sqlite_path(url)):
        part.unlink(missing_ok=True)  # ... when the store is deleted
    code, out, _ = run(capsys, *anonymize_argv(folder))
    assert code == 0 and "entry 1 of project survey" in out
    assert store_module.sqlite_path(url).exists() and whole_or_nothing(folder, url) == "whole"


# ---------------------------------------------------------------------- class 14: a read-only auditor


def _command_as(user: tuple[int, int] | None, home: str, argv: list[str], results) -> None:
    """In a process forked from one that imported the command line: become ``user`` (uid, gid;
    None: stay who this is), in ``/`` with only PATH, HOME and ANONLIB_HOME set, and run ``argv``."""
    import contextlib

    if user is not None:
        # what the store reads first imported as this user: the interpreter's own library may lie
        # where the other user cannot read (a private home), and that is not what is tested here
        import sqlite3  # noqa: F401

        import sqlalchemy.dialects.sqlite  # noqa: F401

        os.setgroups([])
        os.setgid(user[1])
        os.setuid(user[0])
    os.chdir("/")
    path = os.environ["PATH"]
    os.environ.clear()
    os.environ.update({"PATH": path, "HOME": home, "ANONLIB_HOME": home})
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    except BaseException:  # said to the test, not lost with the process
        import traceback

        code = None
        err.write(traceback.format_exc())
    results.put((code, out.getvalue(), err.getvalue()))


def command_as(user: tuple[int, int] | None, home: Path, *argv: str) -> tuple[int, str, str]:
    """``anonlib argv`` run by ``user`` in a process of its own (forked from the tests' server that
    imported the command line once, ``cli_processes``; a fresh interpreter as another user spent
    1.5-3 CPU-seconds importing it, and that import is not what these tests check): its exit code,
    output and error."""
    import multiprocessing

    from cli_processes import _no_script_as_main

    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([*PRELOAD, *PACKAGE_PRELOAD])  # no effect once the server runs
    results = context.Queue()
    process = context.Process(target=_command_as, args=(user, str(home), list(argv), results))
    with _no_script_as_main():
        process.start()
    try:
        said = results.get(timeout=300)
    finally:
        process.join(60)
        if process.is_alive():
            process.kill()
            process.join()
    assert process.exitcode == 0
    return said


@pytest.mark.parametrize("lock", ["file 0444", "folder 0555"])
def test_audit_reads_a_store_its_user_cannot_write(folder, capsys, monkeypatch, lock):
    """The store belongs to another user (root here) and this one (nobody) may only read it."""
    home = Path(tempfile.mkdtemp(prefix="anonlib-read-only-"))
    try:
        monkeypatch.setenv("ANONLIB_HOME", str(home))
        assert run(capsys, *anonymize_argv(folder))[0] == 0
        url = f"sqlite:///{home / 'projects.sqlite'}"
        store_module._ENGINES.pop(url).dispose()
        (home / "projects.sqlite").chmod(0o444)
        home.chmod(0o555 if lock == "folder 0555" else 0o755)
        user = None
        if os.geteuid() == 0:
            try:
                nobody = pwd.getpwnam("nobody")
            except KeyError:
                pytest.skip("a user 'nobody' is needed to read the store as another user")
            user = (nobody.pw_uid, nobody.pw_gid)
        code, out, err = command_as(user, home, "audit", "--json")
        assert (code, err) == (0, ""), err
        assert [e["released_sha256"] for e in json.loads(out)] == [sha(folder / "r.csv")]
        if user:  # and that user could not have written it
            code, _, said = command_as(user, home, "projects", "delete", "survey", "--yes")
            assert code == 2 and ("is read-only" in said or "cannot be opened" in said), said
            assert [s.name for s in ProjectStore(url, read_only=True).summaries()] == ["survey"]
    finally:
        home.chmod(0o755)
        shutil.rmtree(home, ignore_errors=True)


@pytest.mark.parametrize("command", ["anonymize", "apply"])
def test_a_blank_project_name_is_refused_before_anything_is_written(tmp_path, monkeypatch, capsys, command):
    """``--project ''`` was read as no project: the table and package were written and no audit
    entry was made (a release the log does not know)."""
    from anonlib.cli import main

    monkeypatch.chdir(tmp_path)
    pd.DataFrame({"age": [30, 31, 40, 41] * 5, "sex": ["F", "M"] * 10}).to_csv("in.csv", index=False)
    base = ["in.csv", "--shield", "age,sex", "--k", "5"]
    assert main(["anonymize", *base, "--out", "first.csv", "--recipe", "r.json"]) == 0
    capsys.readouterr()
    if command == "anonymize":
        argv = ["anonymize", *base, "--out", "o.csv", "--package", "p.zip", "--project", ""]
    else:
        argv = ["apply", "r.json", "in.csv", "--out", "o.csv", "--package", "p.zip", "--project", ""]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "needs a name" in err
    assert not (tmp_path / "o.csv").exists() and not (tmp_path / "p.zip").exists()
