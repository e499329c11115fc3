"""Nothing lost, nothing leaked (``integrity.md``, classes 5 to 13): no output over the project
store or a key file, the key given at creation is the project's, every password masked, exports
0600 and ``--without-file``, one sentence for bad input (a port, a damaged export, mixed UTC
offsets, dates a shift cannot write, partial dates, two roles for one column, control characters
in names), zip bombs refused before memory is spent, and ``projects show`` saying what is true.
The store's classes run on SQLite and on a real PostgreSQL server (``store_url``)."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import stat
import struct
import tracemalloc
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from project_files import delivery

from anonlib.cli import main
from anonlib.core.dataset import Dataset
from anonlib.core.errors import KeyFileError, ParameterError, ProjectError
from anonlib.core.masking import mask_secrets, printable
from anonlib.projects import ProjectStore, export_project, import_project
from anonlib.projects.location import store_url as current_store_url
from anonlib.projects.schema import PROJECTS
from anonlib.workflow import ReleaseTarget
from anonlib.workflow.engine_search import release_roles
from anonlib.workflow.keys import read_key_file
from tests.health_data import visits

KEY_A, KEY_B = "0a" * 32, "0b" * 32
SECRET = "S3cret-Pw"


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_sentence(err: str) -> bool:
    return err.startswith("error: ") and err.count("\n") == 1 and "Something unexpected" not in err


@pytest.fixture
def work(tmp_path, monkeypatch):
    """A working folder with a survey delivery, a longitudinal file and two key files."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "survey.csv").write_bytes(delivery(0))
    visits(3, 60).to_csv(tmp_path / "visits.csv", index=False)
    (tmp_path / "a.key").write_text(KEY_A + "\n")
    (tmp_path / "a.key").chmod(0o600)  # a key file is its owner's only
    (tmp_path / "b.key").write_text(KEY_B + "\n")
    (tmp_path / "b.key").chmod(0o600)  # a key file is its owner's only
    return tmp_path


@pytest.fixture
def store_env(store_url, monkeypatch):
    """ANONLIB_STORE set to a fresh store: a SQLite file, then a database on a real PostgreSQL server."""
    monkeypatch.setenv("ANONLIB_STORE", store_url)
    return store_url


def release(capsys, t: Path, *extra) -> tuple[int, str, str]:
    return run(capsys, "anonymize", t / "survey.csv", "--shield", "age,sex", "--keep", "zip", "--k", "5", *extra)


# --------------------------------------------------------------------------- 5. output over the store


def store_file() -> Path:
    return Path(current_store_url().removeprefix("sqlite:///"))


@pytest.fixture(scope="module")
def released_store(tmp_path_factory) -> dict[str, bytes]:
    """The files of a SQLite store holding one release of the survey into the project 'survey' (made
    once; each test below starts from a copy of them, the same store its own release would make)."""
    from anonlib.projects import store as store_module

    home, folder = tmp_path_factory.mktemp("released-home"), tmp_path_factory.mktemp("released-work")
    (folder / "survey.csv").write_bytes(delivery(0))
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("ANONLIB_STORE", raising=False)
        patch.setenv("ANONLIB_HOME", str(home))
        argv = ["anonymize", folder / "survey.csv", "--shield", "age,sex", "--keep", "zip", "--k", "5"]
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            assert main([str(a) for a in [*argv, "--out", folder / "r.csv", "--project", "survey"]]) == 0
        store_module._ENGINES.pop(current_store_url()).dispose()  # closed: the file holds everything
    return {p.name: p.read_bytes() for p in home.iterdir() if p.is_file()}


@pytest.mark.parametrize("spelling", ["store", "wal", "shm", "journal", "symlink", "hardlink", "dotdot", "relative"])
@pytest.mark.parametrize("command", ["anonymize", "export", "recipe", "package"])
def test_no_output_names_the_store_in_any_spelling(work, capsys, released_store, spelling, command):
    t = work
    store = store_file()
    store.parent.mkdir(parents=True, exist_ok=True)
    for name, data in released_store.items():  # the store after `anonymize ... --project survey`
        (store.parent / name).write_bytes(data)
    assert [p.name for p in ProjectStore(current_store_url()).summaries()] == ["survey"]  # open, as after it
    names = {
        "store": store,
        "wal": store.with_name(store.name + "-wal"),
        "shm": store.with_name(store.name + "-shm"),
        "journal": store.with_name(store.name + "-journal"),
        "symlink": t / "link.csv",
        "hardlink": t / "hard.csv",
        "dotdot": store.parent / ".." / store.parent.name / store.name,
        "relative": Path(os.path.relpath(store, t)),
    }
    if spelling == "symlink":
        os.symlink(store, names["symlink"])
    if spelling == "hardlink":
        os.link(store, names["hardlink"])
    target = names[spelling]
    existed = {p: p.read_bytes() for p in store.parent.iterdir() if p.is_file()}
    if command == "export":
        code, out, err = run(capsys, "projects", "export", "survey", "--out", target)
    elif command == "anonymize":
        code, out, err = release(capsys, t, "--out", target, "--project", "survey")
    else:
        code, out, err = release(capsys, t, f"--{command}", target)
    assert code == 2 and one_sentence(err) and "project store's file" in err and out == ""
    assert {p: p.read_bytes() for p in store.parent.iterdir() if p.is_file()} == existed  # nothing written
    code, out, _ = run(capsys, "audit", "--json")
    assert code == 0 and len(json.loads(out)) == 1  # every entry still there


def test_an_output_under_anonlib_store_naming_its_file_is_refused(work, capsys, monkeypatch):
    t = work
    monkeypatch.setenv("ANONLIB_STORE", f"sqlite:///{t / 'team' / 'shared.sqlite'}")
    assert release(capsys, t, "--out", t / "r.csv", "--project", "p")[0] == 0
    before = (t / "team" / "shared.sqlite").read_bytes()
    code, _, err = run(capsys, "projects", "export", "p", "--out", "team/../team/shared.sqlite")
    assert code == 2 and one_sentence(err) and (t / "team" / "shared.sqlite").read_bytes() == before


def test_no_output_names_a_key_file(work, capsys, store_env):
    t = work
    key = (t / "a.key").read_bytes()
    code, _, err = release(capsys, t, "--out", t / "r.csv", "--project", "p", "--key-file", t / "a.key")
    assert code == 0
    code, _, err = run(capsys, "projects", "export", "p", "--out", t / "a.key")  # export knows no key option
    assert code == 2 and one_sentence(err) and "key file" in err and (t / "a.key").read_bytes() == key
    os.symlink(t / "b.key", t / "k.csv")
    code, _, err = release(capsys, t, "--out", t / "k.csv")
    assert code == 2 and "key file" in err and (t / "b.key").read_text() == KEY_B + "\n"
    code, _, err = release(capsys, t, "--out", t / "a.key", "--key-file", t / "a.key")
    assert code == 2 and "names the key file" in err and (t / "a.key").read_bytes() == key


# --------------------------------------------------------------------------- 6. keys


def pseudonymize(capsys, t: Path, key: str, out: str, project: str = "clinic") -> tuple[int, str, str]:
    return run(
        capsys, "anonymize", t / "visits.csv", "--shield", "age,sex", "--keep", "visit_date,discharge_date,zip", "--k", "2",
        "--person", "mrn", "--pseudonymize", "mrn", "--key-file", t / key, "--out", t / out, "--project", project,
    )  # fmt: skip


def test_the_key_file_given_at_creation_is_the_projects_key(work, capsys, store_env):
    t = work
    code, _, err = pseudonymize(capsys, t, "a.key", "r1.csv")
    assert code == 0, err
    assert ProjectStore(store_env).key("clinic") == bytes.fromhex(KEY_A)
    # the next delivery with the project's key links; without --key-file the project's key is used
    assert pseudonymize(capsys, t, "a.key", "r2.csv")[0] == 0
    assert (t / "r1.csv").read_bytes() == (t / "r2.csv").read_bytes()


def test_another_key_for_an_existing_project_is_refused_with_nothing_written(work, capsys, store_env):
    t = work
    assert pseudonymize(capsys, t, "a.key", "r1.csv")[0] == 0
    code, out, err = pseudonymize(capsys, t, "b.key", "r2.csv")
    assert code == 2 and one_sentence(err) and "is not the key of the project 'clinic'" in err
    assert not (t / "r2.csv").exists() and out == ""
    assert ProjectStore(store_env).key("clinic") == bytes.fromhex(KEY_A)
    assert len(json.loads(run(capsys, "audit", "--json")[1])) == 1
    # the same for apply, and for a key file given without a keyed step
    code, _, err = release(capsys, t, "--out", t / "r3.csv", "--project", "clinic", "--key-file", t / "b.key")
    assert code == 2 and "is not the key of the project" in err and not (t / "r3.csv").exists()


def test_a_key_file_for_a_project_created_without_steps_becomes_its_key(work, capsys, store_env):
    t = work
    assert release(capsys, t, "--out", t / "r.csv", "--project", "plain", "--key-file", t / "b.key")[0] == 0
    assert ProjectStore(store_env).key("plain") == bytes.fromhex(KEY_B)


def test_an_unreadable_key_file_is_said_to_be_unreadable(work, capsys, monkeypatch):
    t = work
    (t / "folder.key").mkdir()
    code, _, err = release(capsys, t, "--out", t / "r.csv", "--key-file", t / "folder.key", "--project", "p")
    assert code == 2 and one_sentence(err) and "cannot be read" in err and "not a project key" not in err
    real = Path.read_bytes

    def denied(self):
        if self.name == "a.key":
            raise PermissionError(13, "Permission denied")
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", denied)
    with pytest.raises(KeyFileError, match=r"cannot be read \(Permission denied\)"):
        read_key_file(t / "a.key")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_a_key_file_without_read_permission_is_said_to_be_unreadable(work):  # pragma: no cover - as a user
    os.chmod(work / "a.key", 0)
    with pytest.raises(KeyFileError, match="cannot be read"):
        read_key_file(work / "a.key")


# --------------------------------------------------------------------------- 7. secrets


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("postgresql://anna:S3cret-Pw@db:5432/p", "S3cret-Pw"),
        ("postgresql+psycopg://anna:p%40ss/w@db/p", "p%40ss/w"),
        ("postgresql://anna@db/p?sslmode=require&password=S3cret-Pw", "S3cret-Pw"),
        ("host=db user=anna password=S3cret-Pw dbname=p", "S3cret-Pw"),
        ("host=db password='S3cret Pw' dbname=p", "S3cret Pw"),
        ("(connection to 'dbname=p PASSWORD = S3cret-Pw' failed)", "S3cret-Pw"),
    ],
)
def test_mask_secrets_masks_every_url_and_dsn_password(text, secret):
    masked = mask_secrets(text)
    assert secret not in masked and "***" in masked
    assert masked.split("***")[0] in text  # what comes before the password stays readable


def test_no_password_is_printed_on_postgresql(work, capsys, monkeypatch, postgresql):
    from postgres_server import new_database

    url = new_database(postgresql).replace("postgresql+psycopg://postgres@", f"postgresql://postgres:{SECRET}@")
    t = work
    for given in (url, url.replace(f":{SECRET}@", "@") + f"?password={SECRET}"):
        monkeypatch.setenv("ANONLIB_STORE", given)
        code, out, err = release(capsys, t, "--out", t / "r.csv", "--project", "team", "--json")
        assert code == 0 and SECRET not in out + err and "postgresql://postgres" in err
        for argv in (["audit", "--json"], ["projects", "list", "--json"], ["projects", "show", "team"]):
            code, out, err = run(capsys, *argv)
            assert code == 0 and SECRET not in out + err
    port = url.rsplit(":", 1)[1].split("/")[0]
    for broken in (
        url.replace(f":{port}/", ":1/"),  # nothing listens there
        f"host=127.0.0.1 port={port} user=postgres password={SECRET}",  # a libpq DSN, not a URL
        url.replace(f":{port}/", ":notaport/"),
    ):
        monkeypatch.setenv("ANONLIB_STORE", broken)
        code, out, err = run(capsys, "projects", "list")
        assert code == 2 and one_sentence(err) and SECRET not in out + err


def test_log_lines_mask_passwords(caplog):
    with caplog.at_level(logging.ERROR):
        try:
            raise RuntimeError(f"cannot reach postgresql://anna:{SECRET}@db/p")
        except RuntimeError:
            logging.getLogger("dashboard").exception("store %s failed", f"host=db password={SECRET}")
    assert "failed" in caplog.text and "cannot reach" in caplog.text and SECRET not in caplog.text


def test_exports_are_owner_only_and_can_leave_the_file_out(work, capsys, store_env):
    t = work
    assert release(capsys, t, "--out", t / "r.csv", "--project", "survey")[0] == 0
    (t / "old.zip").write_bytes(b"an earlier file")
    os.chmod(t / "old.zip", 0o644)
    for name, extra in (("full.zip", ["--with-key"]), ("old.zip", []), ("bare.zip", ["--without-file"])):
        code, _, err = run(capsys, "projects", "export", "survey", "--out", t / name, *extra)
        assert code == 0, err
        assert stat.S_IMODE((t / name).stat().st_mode) == 0o600
    with zipfile.ZipFile(t / "bare.zip") as bare, zipfile.ZipFile(t / "old.zip") as full:
        assert sorted(bare.namelist()) == ["SHA256SUMS", "project.json"]
        assert "file" in full.namelist()
        assert json.loads(bare.read("project.json"))["keep_file"] is False
    code, out, err = run(capsys, "projects", "import", t / "bare.zip", "--name", "moved")
    assert code == 0, err
    code, out, _ = run(capsys, "projects", "show", "moved")
    assert code == 0 and "file kept          no: its SHA-256 only" in out
    assert json.loads(run(capsys, "projects", "show", "moved", "--json")[1])["file_kept"] is False


# --------------------------------------------------------------------------- 8. one sentence, not "Something unexpected"


def test_a_non_numeric_port_is_one_sentence(capsys, monkeypatch):
    monkeypatch.setenv("ANONLIB_STORE", f"postgresql://anna:{SECRET}@db.example:54x2/projects")
    code, _, err = run(capsys, "projects", "list")
    assert code == 2 and one_sentence(err) and "port that is not a number" in err and SECRET not in err


def swapped(data: bytes, member: str) -> bytes:
    """``data`` (a zip) with two bytes of ``member``'s compressed data swapped."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        info = archive.getinfo(member)
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    i = start + info.compress_size // 2
    assert data[i] != data[i + 1]
    return data[:i] + bytes([data[i + 1], data[i]]) + data[i + 2 :]


def test_an_export_with_two_bytes_swapped_is_one_sentence(work, capsys, store_env):
    t = work
    assert release(capsys, t, "--out", t / "r.csv", "--project", "survey")[0] == 0
    assert run(capsys, "projects", "export", "survey", "--out", t / "e.zip")[0] == 0
    data = (t / "e.zip").read_bytes()
    for member in ("file", "project.json"):
        (t / "bad.zip").write_bytes(swapped(data, member))
        code, _, err = run(capsys, "projects", "import", t / "bad.zip", "--name", "copy")
        assert code == 2 and one_sentence(err) and "damaged" in err, err
    assert run(capsys, "projects", "show", "copy")[0] == 2  # nothing imported


def test_mixed_utc_offsets_in_a_shifted_date_column_are_one_sentence(work, capsys):
    t = work
    frame = pd.DataFrame(
        {
            "mrn": ["1", "1", "2", "2"],
            "seen": [
                "2020-01-01T10:00:00+01:00",
                "2020-02-01T10:00:00+05:00",
                "2020-01-03T08:00:00+01:00",
                "2020-01-05T08:00:00+01:00",
            ],
            "age": [30, 30, 40, 40],
        }
    )
    frame.to_csv(t / "tz.csv", index=False)
    code, _, err = run(
        capsys, "anonymize", t / "tz.csv", "--shield", "age", "--k", "1", "--person", "mrn", "--shift-dates",
        "seen", "--key-file", t / "a.key", "--out", t / "o.csv",
    )  # fmt: skip
    assert code == 2 and one_sentence(err) and "different UTC offsets ('+01:00', '+05:00')" in err
    assert not (t / "o.csv").exists()


# --------------------------------------------------------------------------- 9. dates


@pytest.mark.parametrize(
    ("values", "said"),
    [
        (["9999-12-31", "9999-12-31"], "out of the dates that can be written"),
        (["0001-01-01", "0001-01-01"], "out of the dates that can be written"),
        (["2020", "2020-03-04"], "whole dates written as YYYY-MM-DD (e.g. '2020')"),
        (["2020-06", "2020-03-04"], "(e.g. '2020-06')"),
        (["20200131", "2020-03-04"], "(e.g. '20200131')"),
    ],
)
def test_dates_a_shift_cannot_write_are_refused(work, capsys, values, said):
    t = work
    frame = pd.DataFrame({"mrn": [str(i) for i in range(10)], "seen": values * 5, "age": [30] * 10})
    frame.to_csv(t / "d.csv", index=False)
    # with a large enough shift either way, both ends of the calendar are left for some person
    for key in ("a.key", "b.key"):
        code, out, err = run(
            capsys, "anonymize", t / "d.csv", "--shield", "age", "--k", "1", "--person", "mrn", "--shift-dates",
            "seen", "--shift-days", "3650", "--key-file", t / key, "--out", t / "o.csv",
        )  # fmt: skip
        if code == 2:
            break
    assert code == 2 and one_sentence(err) and said in err and "'seen'" in err
    assert not (t / "o.csv").exists()


# --------------------------------------------------------------------------- 10. roles


@pytest.mark.parametrize(
    "options",
    [
        ["--person", "mrn", "--shield", "age,mrn"],
        ["--pseudonymize", "zip", "--shield", "age,zip", "--key-file", "a.key"],
        ["--keep", "zip", "--shield", "age,zip"],
        ["--person", "mrn", "--keep", "mrn", "--shield", "age"],
        ["--role", "zip=sensitive", "--shield", "age,zip"],
    ],
)
def test_one_column_given_two_roles_is_refused(work, capsys, options):
    t = work
    code, out, err = run(capsys, "anonymize", t / "visits.csv", "--k", "2", "--out", t / "o.csv", *options)
    assert code == 2 and one_sentence(err) and "two roles" in err and not (t / "o.csv").exists()


def test_a_pseudonymised_person_column_stays_the_person_column(work, capsys):
    t = work
    code, _, err = pseudonymize(capsys, t, "a.key", "o.csv", project="p")
    assert code == 0, err


def test_release_roles_refuses_two_roles_for_one_column():
    frame = pd.DataFrame({"mrn": ["1", "2"], "age": [30, 40], "zip": ["1", "2"], "dx": ["a", "b"]})
    ds = Dataset.from_frame("v", frame, {"mrn": "person", "age": "quasi-identifier", "zip": "keep"})
    with pytest.raises(ParameterError, match="'mrn' is the person column"):
        release_roles(ds, ["age", "mrn"], ReleaseTarget(k=2))
    with pytest.raises(ParameterError, match="'zip' is kept"):
        release_roles(ds, ["age", "zip"], ReleaseTarget(k=2))
    assert release_roles(ds, ["age"], ReleaseTarget(k=2))["mrn"].value == "person"


# --------------------------------------------------------------------------- 11. control characters


NAMES = ["evil\x1b[2Jname", "bell\x07", "rtl\u202eemanelif", "iso\u2066x", "c1\x9bx", "del\x7f"]


@pytest.mark.parametrize("name", NAMES)
def test_control_characters_are_refused_in_project_names(work, capsys, store_env, name):
    t = work
    code, out, err = release(capsys, t, "--out", t / "r.csv", "--project", name)
    assert code == 2 and one_sentence(err) and "control characters" in err
    assert name not in err and printable(name) in err and not (t / "r.csv").exists()
    assert release(capsys, t, "--out", t / "r.csv", "--project", "fine")[0] == 0
    assert run(capsys, "projects", "export", "fine", "--out", t / "e.zip")[0] == 0
    code, _, err = run(capsys, "projects", "import", t / "e.zip", "--name", name)
    assert code == 2 and "control characters" in err and name not in err
    store = ProjectStore(store_env)
    with pytest.raises(ProjectError, match="control characters"):
        store.rename("fine", name)
    with pytest.raises(ProjectError, match="control characters"):
        import_project(store, export_project(store, "fine"), name=name)


def test_names_already_stored_are_printed_escaped(work, capsys, store_env):
    t = work
    assert release(capsys, t, "--out", t / "r.csv", "--project", "plain")[0] == 0
    store = ProjectStore(store_env)
    with store.engine.begin() as c:  # a name an older anonlib let in
        c.execute(PROJECTS.update().values(name="x\x1b]0;owned\x07\u202ey"))
    raw = ("\x1b", "\x07", "\u202e")
    for argv in (["projects", "list"], ["projects", "show", "x\x1b]0;owned\x07\u202ey"]):
        code, out, err = run(capsys, *argv)
        assert code == 0 and not any(c in out + err for c in raw) and "x\\x1b]0;owned\\x07\\u202ey" in out, argv
    code, out, _ = run(capsys, "projects", "list", "--json")
    assert code == 0 and not any(c in out for c in raw) and "\\u001b" in out and "\\u202e" in out
    assert json.loads(run(capsys, "projects", "list", "--json")[1])[0]["name"] == "x\x1b]0;owned\x07\u202ey"


# --------------------------------------------------------------------------- 12. zip bombs


def bomb(members: dict[str, bytes]) -> bytes:
    """A zip of ``members`` (the sizes its directory states are changed by ``declared``)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, payload in members.items():
            archive.writestr(name, payload)
    return buffer.getvalue()


def declared(data: bytes, member: str, size: int) -> bytes:
    """``data`` (a zip) with ``member``'s uncompressed size in the central directory set to ``size``."""
    entries = []
    i = data.index(b"PK\x01\x02")
    while i != -1:
        entries.append(i)
        i = data.find(b"PK\x01\x02", i + 4)
    for at in entries:
        length = struct.unpack_from("<H", data, at + 28)[0]
        if data[at + 46 : at + 46 + length].decode() == member:
            return data[: at + 24] + struct.pack("<I", size) + data[at + 28 :]
    raise AssertionError(member)


def test_a_member_declaring_gigabytes_is_refused_from_the_directory(store_url):
    store = ProjectStore(store_url)
    data = declared(bomb({"project.json": b"{}", "file": b"x" * 100, "SHA256SUMS": b""}), "file", 1_900_000_000)
    tracemalloc.start()
    with pytest.raises(ProjectError, match="declares 1,900,000,000 bytes unpacked"):
        import_project(store, data)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 5 * 1024**2


def test_a_real_bomb_is_refused_before_memory_is_spent(store_url):
    from crafted_zips import Member, crafted_zip  # a real deflate stream of 400 MB, built in milliseconds

    store = ProjectStore(store_url)
    data = crafted_zip(
        [Member("project.json", b"{}"), Member("SHA256SUMS"), Member("file", repeat=(bytes(1 << 20), 400))]
    )
    assert len(data) < 1024**2  # 400 MB of zeros in well under 1 MB
    tracemalloc.start()
    with pytest.raises(ProjectError, match="more than the"):
        import_project(store, data)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 20 * 1024**2


def test_a_member_unpacking_past_its_declared_size_stops(store_url):
    store = ProjectStore(store_url)
    data = declared(bomb({"project.json": b"{}", "file": b"y" * 300_000, "SHA256SUMS": b""}), "file", 1000)
    with pytest.raises(ProjectError, match="damaged|past its declared size"):
        import_project(store, data)


def test_the_cli_refuses_a_bomb_in_one_sentence(work, capsys):
    (work / "bomb.zip").write_bytes(declared(bomb({"project.json": b"{}", "file": b"z"}), "file", 1_900_000_000))
    code, _, err = run(capsys, "projects", "import", work / "bomb.zip")
    assert code == 2 and one_sentence(err) and "was not unpacked" in err


# --------------------------------------------------------------------------- 13. true statements


def test_show_says_a_bundled_sample_is_not_kept(work, capsys, store_env):
    t = work
    # a small bundled sample (15 records): any of them is a file anonlib ships (Adult's 32,561 records cost
    # seconds and say the same)
    code, _, err = run(capsys, "anonymize", "--sample", "caballero_table2b", "--shield", "ZIP,Gender,Age", "--k",
                       "3", "--out", t / "a.csv", "--project", "sample study")  # fmt: skip
    assert code == 0, err
    code, out, _ = run(capsys, "projects", "show", "sample study")
    assert (
        code == 0 and "file kept          no: the bundled sample 'caballero_table2b', which ships with anonlib" in out
    )
    assert "0 bytes" not in out
    shown = json.loads(run(capsys, "projects", "show", "sample study", "--json")[1])
    assert shown["file_kept"] is False and shown["origin"] == "sample:caballero_table2b"
    code, out, _ = release(capsys, t, "--out", t / "r.csv", "--project", "kept")
    size = (t / "survey.csv").stat().st_size
    assert f"file kept          yes ({size:,} bytes)" in run(capsys, "projects", "show", "kept")[1]


def test_an_export_file_larger_than_any_export_is_refused_unread(work, capsys):
    from anonlib.cli.projects import MAX_IMPORT_BYTES

    with open(work / "huge.zip", "wb") as file:  # sparse: no disk spent
        file.truncate(MAX_IMPORT_BYTES + 1)
    assert MAX_IMPORT_BYTES < 300 * 1024**2
    code, _, err = run(capsys, "projects", "import", work / "huge.zip")
    assert code == 2 and one_sentence(err) and "more than any project export holds" in err
