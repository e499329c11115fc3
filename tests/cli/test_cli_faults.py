"""Faults leave nothing behind (``integrity.md`` part 2): SIGTERM and SIGINT in the middle
of writing an output remove the partial file (a project export with its key and raw records, a
released table, a release into a project), and a store path that is not a regular file (a named
pipe, a folder, a device) is refused at once by every command that opens the store, instead of
hanging on the pipe.

The signals are sent by the command's own process to itself at the moment named (half-way
through the one writer's copy of an output, or at a step of a release), in processes forked from
one that imported the command line (``cli_processes``)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from cli_processes import WRITING, run_in_processes
from project_files import patient_delivery

from anonlib.cli import main

SIGNALS = [signal.SIGTERM, signal.SIGINT]


def _said(number: int) -> str:
    if number == signal.SIGINT:
        return "error: Interrupted; nothing more was written (files being written were removed).\n"
    return f"error: Stopped by {signal.Signals(number).name}; nothing more was written (files being written were removed).\n"


@pytest.fixture
def work(tmp_path, monkeypatch, capsys) -> tuple[Path, str]:
    """A folder with a delivery, its recipe, and a store holding the project 'study' (and its key)."""
    folder = tmp_path / "work"
    folder.mkdir()
    url = f"sqlite:///{tmp_path / 'store' / 'projects.sqlite'}"
    monkeypatch.setenv("ANONLIB_STORE", url)
    (folder / "d.csv").write_bytes(patient_delivery(0, rows=2000))
    code = main(["anonymize", str(folder / "d.csv"), "--shield", "age,sex", "--keep", "zip", "--k", "5",
                 "--recipe", str(folder / "r.json"), "--out", str(folder / "first.csv"), "--project", "study"])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    return folder, url


def _left(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".part" in p.name)


@pytest.mark.parametrize("number", SIGNALS, ids=lambda n: signal.Signals(n).name)
def test_a_signal_while_writing_an_export_or_a_table_removes_the_partial_file(work, number):
    """SIGTERM during ``projects export --with-key`` left ``.x.zip.<rand>.part.zip`` holding the
    key and the raw records; during ``apply --out``, a partial ``.part.csv``."""
    folder, url = work
    runs = run_in_processes(
        [
            ["projects", "export", "study", "--out", folder / "x.zip", "--with-key"],
            ["apply", folder / "r.json", folder / "d.csv", "--out", folder / "a.csv"],
        ],
        {"ANONLIB_STORE": url},
        signal_at=(WRITING, number),
        timeout=120,
    )
    for run in runs:
        assert (run.exitcode, run.code, run.err) == (0, 128 + number, _said(number)), run
    assert _left(folder) == [] and not (folder / "x.zip").exists() and not (folder / "a.csv").exists()


@pytest.mark.parametrize("number", SIGNALS, ids=lambda n: signal.Signals(n).name)
def test_a_signal_during_a_release_into_a_project_removes_its_temporary_files(work, number):
    folder, url = work
    argv = ["apply", folder / "r.json", folder / "d.csv", "--out", folder / "a.csv", "--project", "study"]
    (run,) = run_in_processes([argv], {"ANONLIB_STORE": url}, signal_at=("after the table", number), timeout=120)
    assert (run.exitcode, run.code, run.err) == (0, 128 + number, _said(number)), run
    assert _left(folder) == [] and not (folder / "a.csv").exists()


STORE_COMMANDS = [
    ["projects", "list"],
    ["projects", "show", "study"],
    ["projects", "export", "study", "--out", "{folder}/x.zip"],
    ["projects", "import", "{folder}/d.csv"],
    ["projects", "delete", "study", "--yes"],
    ["projects", "budget", "study"],
    ["audit"],
    [
        "anonymize",
        "{folder}/d.csv",
        "--shield",
        "age,sex",
        "--keep",
        "zip",
        "--k",
        "5",
        "--out",
        "{folder}/o.csv",
        "--project",
        "p",
    ],
    ["apply", "{folder}/r.json", "{folder}/d.csv", "--out", "{folder}/o.csv", "--project", "study"],
]


def test_a_store_that_is_a_named_pipe_is_refused_at_once_by_every_command(work, tmp_path):
    """``audit`` on a FIFO hung forever (SQLite opening the pipe waits for a writer)."""
    folder, _ = work
    home = tmp_path / "fifo-home"
    home.mkdir()
    os.mkfifo(home / "projects.sqlite")
    argvs = [[a.format(folder=folder) for a in argv] for argv in STORE_COMMANDS]
    runs = run_in_processes(argvs, {"ANONLIB_HOME": str(home), "ANONLIB_STORE": ""}, timeout=30)
    said = (
        f"error: The project store {home / 'projects.sqlite'} is not a regular file (it is a named pipe (FIFO)); set "
        "ANONLIB_HOME to a folder for the store, or ANONLIB_STORE to a database file. Nothing was read or written.\n"
    )
    assert [(r.exitcode, r.code, r.err) for r in runs] == [(0, 2, said)] * len(argvs), runs
    assert not (folder / "o.csv").exists() and not (folder / "x.zip").exists()


@pytest.mark.parametrize("kind", ["folder", "device"])
def test_a_store_that_is_a_folder_or_a_device_is_refused_in_one_sentence(work, tmp_path, monkeypatch, capsys, kind):
    folder, _ = work
    if kind == "folder":
        path = tmp_path / "home" / "projects.sqlite"
        path.mkdir(parents=True)
        monkeypatch.delenv("ANONLIB_STORE")
        monkeypatch.setenv("ANONLIB_HOME", str(path.parent))
        what = "a folder"
    else:
        path = Path("/dev/null")
        monkeypatch.setenv("ANONLIB_STORE", "sqlite:////dev/null")
        what = "a character device"
    said = (
        f"error: The project store {path} is not a regular file (it is {what}); set ANONLIB_HOME to a folder for the "
        "store, or ANONLIB_STORE to a database file. Nothing was read or written.\n"
    )
    for argv in (["audit"], ["projects", "list"], STORE_COMMANDS[-2]):
        assert main([a.format(folder=folder) for a in argv]) == 2
        assert capsys.readouterr().err == said
