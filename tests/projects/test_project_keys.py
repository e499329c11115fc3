"""One key per project whatever happens (``integrity.md`` part 2): a project's key is
made once, in the transaction that creates it, and every delivery of the project is pseudonymized
with it or refused in one sentence: three first releases racing into a new project, a release
racing ``projects delete`` or a rename, a name typed in another Unicode form. Names without a
visible character or with a line break are refused, a deleted project's number is never given
again (its audit entries stay its own), and a key file others may read is refused unless
``--allow-shared-key`` says so. The store's cases run on SQLite and on the real PostgreSQL server
(``store_url``); each delivery is checked against pseudonyms recomputed here with ``hmac``."""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import os
from pathlib import Path

import pandas as pd
import pytest
from cli_processes import run_in_processes
from project_files import patient_delivery

from anonlib.cli import main
from anonlib.core.errors import ProjectError
from anonlib.projects import ProjectState, ProjectStore, audit_entries, releasing
from anonlib.projects.store import valid_name
from anonlib.workflow import WorkingCopy

NFC, NFD = "Caf\u00e9", "Cafe\u0301"


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def release_argv(folder: Path, project: str, out: str = "r.csv", *extra) -> list:
    return ["anonymize", folder / "d.csv", "--shield", "age,sex", "--keep", "zip", "--k", "5", "--pseudonymize", "pid",
            "--out", folder / out, "--project", project, *extra]  # fmt: skip


def pseudonyms_under(key: bytes, folder: Path, out: str) -> bool:
    """Whether ``out``'s pid column holds the pseudonyms of the delivery's under ``key`` (row by row)."""
    source = pd.read_csv(folder / "d.csv", dtype=str)["pid"]
    released = pd.read_csv(folder / out, dtype=str)["pid"]
    expected = [hmac.new(key, p.encode(), hashlib.sha256).hexdigest()[:16] for p in source]
    return released.tolist() == expected


@pytest.fixture
def folder(tmp_path) -> Path:
    out = tmp_path / "work"
    out.mkdir()
    (out / "d.csv").write_bytes(patient_delivery(0, rows=120))
    return out


@pytest.fixture
def cli_store(store_url, monkeypatch) -> str:
    """ANONLIB_STORE set to a fresh store: a SQLite file, then a database on a real PostgreSQL server."""
    monkeypatch.setenv("ANONLIB_STORE", store_url)
    return store_url


# ---------------------------------------------------------------------- first releases racing


OTHER_KEY = (
    "The project 'fresh' holds another pseudonym key than the one this release was made with (another command "
    "created it, or gave it its key, while this one ran); nothing was released: run the command again to release "
    "with the project's key.\n"
)


def test_three_concurrent_first_releases_end_with_one_key(folder, cli_store):
    """All three exited 0, each delivery pseudonymized under a key of its own: the study's linkage broke."""
    argvs = [release_argv(folder, "fresh", f"r{i}.csv") for i in range(3)]
    runs = run_in_processes(argvs, {"ANONLIB_STORE": cli_store}, together=True, timeout=120)
    store = ProjectStore(cli_store)
    assert [s.name for s in store.summaries()] == ["fresh"]
    key = store.key("fresh")
    done = [i for i, r in enumerate(runs) if r.code == 0]
    assert done and len(audit_entries(store, "fresh")) == len(done)
    for i, r in enumerate(runs):
        if i in done:
            assert pseudonyms_under(key, folder, f"r{i}.csv"), r
        else:  # refused in one sentence, nothing written
            assert (r.exitcode, r.code, r.err) == (0, 2, f"error: {OTHER_KEY}"), r
            assert not (folder / f"r{i}.csv").exists()


# ---------------------------------------------------------------------- a release racing a delete or rename


@pytest.mark.parametrize("race", ["delete", "rename"])
def test_a_release_racing_a_delete_or_rename_refuses_and_makes_no_new_key(folder, cli_store, capsys, monkeypatch, race):
    """It re-created the project under its old name with a fresh key."""
    assert run(capsys, *release_argv(folder, "study"))[0] == 0
    key = ProjectStore(cli_store).key("study")

    def meanwhile(step: str) -> None:
        if step == "before the table":
            other = ProjectStore(cli_store)  # another command, in another window
            other.delete("study") if race == "delete" else other.rename("study", "study 2025")

    monkeypatch.setattr(releasing, "reached", meanwhile)
    code, out, err = run(capsys, *release_argv(folder, "study", "again.csv"))
    said = (
        "The project 'study' was deleted while this release was being made; nothing was released (run the command "
        "again to start a new project of that name)."
        if race == "delete"
        else "The project 'study' was renamed to 'study 2025' while this release was being made; nothing was "
        "released (run the command again with the project's new name)."
    )
    assert (code, err) == (2, f"error: {said}\n") and "audit log" not in out
    assert not (folder / "again.csv").exists() and not [p for p in folder.iterdir() if ".part" in p.name]
    store = ProjectStore(cli_store)
    assert [s.name for s in store.summaries()] == ([] if race == "delete" else ["study 2025"])
    if race == "rename":
        assert store.key("study 2025") == key and len(audit_entries(store)) == 1


# ---------------------------------------------------------------------- names


def test_a_name_in_another_unicode_form_is_the_same_project(folder, cli_store, capsys):
    """ "Café" typed composed and decomposed made two projects that list alike, and the second
    delivery got a new key."""
    assert run(capsys, *release_argv(folder, NFC, "first.csv"))[0] == 0
    code, out, err = run(capsys, *release_argv(folder, NFD, "second.csv"))
    assert code == 0, err
    store = ProjectStore(cli_store)
    assert [s.name for s in store.summaries()] == [NFC]
    key = store.key(NFD)
    assert pseudonyms_under(key, folder, "first.csv") and pseudonyms_under(key, folder, "second.csv")
    assert f"entry 2 of project {NFC} " in out
    assert [e["id"] for e in json.loads(run(capsys, "audit", "--project", NFD, "--json")[1])] == [1, 2]
    assert run(capsys, "projects", "show", NFD)[1].startswith(f"project            {NFC}\n")
    assert run(capsys, "anonymize", *release_argv(folder, NFD, "third.csv")[1:], "--key-file", folder / "k")[0] == 2


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("two\nlines", "A project name is one line; 'two\\nlines' holds a line break (\\n). Choose a name without line breaks."),
        ("a\u2028b", "A project name is one line; 'a\\u2028b' holds a line break (\\u2028). Choose a name without line breaks."),
        ("\u200b", "A project name needs a visible character; this one holds only U+200B, which show as nothing."),
        ("\u3164", "A project name needs a visible character; this one holds only U+3164, which show as nothing."),
        ("\ufeff \u2800", "A project name needs a visible character; this one holds only U+FEFF, U+2800, which show as nothing."),
        ("\u115f\u1160\u200d", "A project name needs a visible character; this one holds only U+115F, U+1160, U+200D, which show as nothing."),
    ],
)  # fmt: skip
def test_names_with_a_line_break_or_nothing_visible_are_refused(folder, capsys, name, said):
    """A line break was recorded as "two lines", which could not be named again; names of
    invisible characters only were accepted and listed as blank."""
    code, out, err = run(capsys, *release_argv(folder, name))
    assert (code, out, err) == (2, "", f"error: {said}\n")
    assert sorted(p.name for p in folder.iterdir()) == ["d.csv"]
    with pytest.raises(ProjectError) as refused:
        valid_name(name)
    assert str(refused.value) == said
    assert valid_name("Z\u200bürich") == "Z\u200bürich"  # an invisible character beside visible ones is kept


# ---------------------------------------------------------------------- numbers


def test_a_deleted_projects_number_is_never_given_again(folder, cli_store, capsys):
    """SQLite gave a deleted project's number to the next one, whose listing then showed the
    deleted project's audit entries as its own."""
    store = ProjectStore(cli_store)
    copy = WorkingCopy.start(pd.read_csv(io.BytesIO((folder / "d.csv").read_bytes())).pipe(_dataset))
    first = store.create("first", ProjectState.of(copy, "upload:d.csv"))
    assert run(capsys, *release_argv(folder, "second"))[0] == 0
    second = store.summary("second").id
    store.delete("second")
    third = store.create("third", ProjectState.of(copy, "upload:d.csv"))
    store.delete(third)  # the last one, without any entry
    fourth = store.create("fourth", ProjectState.of(copy, "upload:d.csv"))
    assert (first.id, second, third.id, fourth.id) == (1, 2, 3, 4)
    (entry,) = audit_entries(store)
    assert (entry.project, entry.project_id, entry.project_deleted) == ("second", 2, True)
    assert "second (project deleted)" in run(capsys, "audit")[1]
    assert store.summary("fourth").releases == 0


def _dataset(frame: pd.DataFrame):
    from anonlib.core.dataset import Dataset

    return Dataset.from_frame("d.csv", frame, {"age": "quasi-identifier", "sex": "quasi-identifier"})


# ---------------------------------------------------------------------- key files


def test_a_key_file_others_may_read_is_refused_unless_allowed(folder, capsys):
    """A key file of mode 0644 was used silently."""
    key = folder / "shared.key"
    key.write_text("ab" * 32 + "\n")
    os.chmod(key, 0o644)
    argv = ["anonymize", folder / "d.csv", "--shield", "age,sex", "--keep", "zip", "--k", "5", "--pseudonymize", "pid",
            "--key-file", key, "--out", folder / "r.csv"]  # fmt: skip
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "") and err == (
        "error: The key file 'shared.key' can be read or changed by other users than its owner (mode 0644); make it "
        "private (chmod 600 'shared.key'), or add --allow-shared-key if others must share it. Nothing was written.\n"
    )
    assert not (folder / "r.csv").exists()
    code, out, err = run(capsys, *argv, "--allow-shared-key")
    assert code == 0 and err == (
        "warning: The key file 'shared.key' can be read or changed by other users than its owner (mode 0644); it was "
        "used because of --allow-shared-key.\n"
    )
    assert pseudonyms_under(bytes.fromhex("ab" * 32), folder, "r.csv")
    os.chmod(key, 0o600)
    assert run(capsys, *argv)[0] == 0
