"""Outputs never replace inputs: every command that writes refuses (exit 2, one sentence)
an output naming a file it reads, however it is spelled (relative, absolute, ``./x``,
``dir/../x``, a symlink, a hard link), and an existing output is replaced atomically,
so an interrupted write leaves the old file whole and no partial file behind."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from anonlib.__main__ import main
from anonlib.cli import common
from anonlib.core.samples import load_sample

SPELLINGS = ("same", "dot", "dotdot", "absolute", "symlink", "hardlink")


def adult_file(folder: Path, rows: int = 300, name: str = "in.csv") -> Path:
    """Adult's first rows: the quasi-identifiers these tests shield (age, sex) and the income; the
    other guessed quasi-identifiers are left out, as anonymize refuses to release them unchanged."""
    frame = load_sample("adult").frame.head(rows)[["age", "sex", "income"]]
    path = folder / name
    frame.to_csv(path, index=False)
    return path


def spelled(path: Path, how: str, cwd: Path) -> str:
    """Another name of ``path`` (relative ones are relative to ``cwd``)."""
    name = path.name
    if how == "same":
        return name
    if how == "dot":
        return f"./{name}"
    if how == "dotdot":
        (cwd / "sub").mkdir(exist_ok=True)
        return f"sub/../{name}"
    if how == "absolute":
        return str(path.resolve())
    link = cwd / f"link-{how}-{name}"
    if not link.exists():
        (os.symlink if how == "symlink" else os.link)(path, link)
    return link.name


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.rglob("*") if p.is_file() and not p.is_symlink()}


def one_sentence(capsys) -> str:
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    return err[len("error: ") :].strip()


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> dict[str, tuple[bytes, int]]:
    """The files of a working folder after ``anonymize ... --recipe recipe.json`` (each file's bytes
    and mode), made once: each test starts from a copy of them, the folder its own run would make."""
    folder = tmp_path_factory.mktemp("made")
    with pytest.MonkeyPatch.context() as patch:  # a store of its own, as every test has (conftest)
        patch.delenv("ANONLIB_STORE", raising=False)
        patch.setenv("ANONLIB_HOME", str(tmp_path_factory.mktemp("made-home")))
        patch.chdir(folder)
        adult_file(folder)
        assert main(["anonymize", "in.csv", "--shield", "age,sex", "--k", "3", "--recipe", "recipe.json"]) == 0
    (folder / "age.csv").write_text("age\n")  # a hierarchy file read by anonymize
    return {p.name: (p.read_bytes(), p.stat().st_mode & 0o777) for p in folder.iterdir()}


@pytest.fixture
def workdir(tmp_path, monkeypatch, made):
    monkeypatch.chdir(tmp_path)
    for name, (data, mode) in made.items():
        (tmp_path / name).write_bytes(data)
        os.chmod(tmp_path / name, mode)
    return tmp_path


# command line writing to OUTPUT, and the input file it must not replace
CASES = {
    "anonymize --out": (["anonymize", "in.csv", "--shield", "age,sex", "--k", "3", "--out", "OUTPUT"], "in.csv"),
    "anonymize --recipe": (["anonymize", "in.csv", "--shield", "age,sex", "--k", "3", "--recipe", "OUTPUT"], "in.csv"),
    "anonymize --package": (
        ["anonymize", "in.csv", "--shield", "age,sex", "--k", "3", "--package", "OUTPUT"],
        "in.csv",
    ),
    "anonymize --out = --hierarchy": (
        ["anonymize", "in.csv", "--shield", "age,sex", "--k", "3", "--hierarchy", "age=age.csv", "--out", "OUTPUT"],
        "age.csv",
    ),
    "apply --out = file": (["apply", "recipe.json", "in.csv", "--out", "OUTPUT"], "in.csv"),
    "apply --out = recipe": (["apply", "recipe.json", "in.csv", "--out", "OUTPUT"], "recipe.json"),
    "apply --package = recipe": (["apply", "recipe.json", "in.csv", "--package", "OUTPUT"], "recipe.json"),
    "report --out": (["report", "in.csv", "--qi", "age,sex", "--out", "OUTPUT"], "in.csv"),
    "leakage --csv": (["leakage", "in.csv", "--attributes", "age,sex", "--csv", "OUTPUT"], "in.csv"),
    "privacy --out": (["privacy", "in.csv", "--sensitive", "income", "--aux", "age,sex", "--out", "OUTPUT"], "in.csv"),
}


@pytest.mark.parametrize("how", SPELLINGS)
@pytest.mark.parametrize("case", list(CASES))
def test_an_output_naming_an_input_is_refused_and_the_input_stays_byte_identical(workdir, capsys, case, how):
    argv, protected = CASES[case]
    output = spelled(workdir / protected, how, workdir)
    before = snapshot(workdir)
    assert main([output if a == "OUTPUT" else a for a in argv]) == 2
    sentence = one_sentence(capsys)
    assert "names the input file" in sentence and protected in sentence
    assert snapshot(workdir) == before  # nothing replaced, nothing new (no temporary file either)


def test_the_two_cases_of_the_issue_end_with_exit_2(workdir, capsys):
    before = (workdir / "in.csv").read_bytes()
    assert main(["anonymize", "in.csv", "--shield", "age,sex", "--k", "3", "--out", "in.csv"]) == 2
    assert "never replaces a file it reads" in one_sentence(capsys)
    assert (workdir / "in.csv").read_bytes() == before


def test_two_outputs_naming_one_file_are_refused(workdir, capsys):
    before = snapshot(workdir)
    assert (
        main(["anonymize", "in.csv", "--shield", "age,sex", "--k", "3", "--out", "x.csv", "--recipe", "./x.csv"]) == 2
    )
    assert "--out and --recipe name the same file" in one_sentence(capsys)
    assert snapshot(workdir) == before


def test_dotdot_follows_the_folders_as_the_operating_system_does(workdir, capsys):
    (workdir / "out").mkdir()
    assert (
        main(["anonymize", "in.csv", "--shield", "age,sex", "--k", "3", "--out", "sub2/../out/a.csv"]) == 2
    )  # no sub2
    assert "Could not write" in one_sentence(capsys)
    assert main(["anonymize", "in.csv", "--shield", "age,sex", "--k", "3", "--out", "out/../a.csv"]) == 0
    assert (workdir / "a.csv").read_bytes().startswith(b"age,sex")


def test_an_existing_output_is_replaced_whole_keeping_its_mode(workdir, capsys):
    out = workdir / "released.csv"
    out.write_bytes(b"old contents\n")
    os.chmod(out, 0o640)
    assert main(["apply", "recipe.json", "in.csv", "--out", "released.csv"]) == 0
    assert out.read_bytes().startswith(b"age,sex") and oct(out.stat().st_mode & 0o777) == oct(0o640)
    assert sorted(p.name for p in workdir.iterdir() if p.name.startswith(".")) == []


def test_an_output_that_is_a_symlink_replaces_the_file_it_points_to(workdir, capsys):
    (workdir / "target.csv").write_bytes(b"old\n")
    os.symlink("target.csv", workdir / "pointer.csv")
    assert main(["apply", "recipe.json", "in.csv", "--out", "pointer.csv"]) == 0
    assert (workdir / "pointer.csv").is_symlink()
    assert (workdir / "target.csv").read_bytes().startswith(b"age,sex")


def _interrupted(exception):
    """A writer that writes half of the data, then fails."""

    def copy_out(out, data):
        out.write(data[: len(data) // 2])
        out.flush()
        raise exception

    return copy_out


@pytest.mark.parametrize(
    "exception, code", [(OSError(errno.ENOSPC, "No space left on device"), 2), (KeyboardInterrupt(), 130)]
)
def test_an_interrupted_write_leaves_the_old_file_whole_and_no_partial_file(
    workdir, capsys, monkeypatch, exception, code
):
    old = b"the earlier release\n" * 100
    (workdir / "released.csv").write_bytes(old)
    source = (workdir / "in.csv").read_bytes()
    monkeypatch.setattr(common, "_copy_out", _interrupted(exception))
    assert main(["apply", "recipe.json", "in.csv", "--out", "released.csv"]) == code
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    if code == 2:
        assert "No space left on device" in err and "unchanged" in err
    assert (workdir / "released.csv").read_bytes() == old
    assert (workdir / "in.csv").read_bytes() == source
    assert not [p.name for p in workdir.iterdir() if ".part" in p.name]


def test_a_failing_rename_leaves_no_partial_file(workdir, capsys, monkeypatch):
    (workdir / "r.html").write_bytes(b"old")

    def fail(*_):
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(common.os, "replace", fail)
    assert main(["report", "in.csv", "--qi", "age,sex", "--k", "2", "--out", "r.html"]) == 2
    assert "Could not write 'r.html'" in one_sentence(capsys)
    assert (workdir / "r.html").read_bytes() == b"old"
    assert not [p.name for p in workdir.iterdir() if ".part" in p.name]


def test_report_out_is_written_through_the_one_writer(workdir, capsys):
    assert main(["report", "in.csv", "--qi", "age,sex", "--k", "2", "--out", "r.html"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and "written            r.html" in captured.err
    assert (workdir / "r.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_same_file_agrees_with_the_operating_system(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    a = tmp_path / "a.csv"
    a.write_text("x\n")
    os.link(a, tmp_path / "hard.csv")
    os.symlink(a, tmp_path / "soft.csv")
    (tmp_path / "d").mkdir()
    os.symlink(tmp_path / "d", tmp_path / "dlink")
    for name in ("a.csv", "./a.csv", "d/../a.csv", str(a), "hard.csv", "soft.csv", "dlink/../a.csv"):
        assert common.same_file(name, "a.csv") == os.path.samefile(name, "a.csv"), name
    assert not common.same_file("b.csv", "a.csv") and common.same_file("d/new.csv", "dlink/new.csv")


def test_engine_out_is_replaced_atomically(workdir, capsys):
    pytest.importorskip("duckdb")
    (workdir / "released.csv").write_bytes(b"old\n")
    assert main(["apply", "recipe.json", "in.csv", "--out", "released.csv", "--engine", "duckdb"]) == 0
    assert (workdir / "released.csv").read_bytes().startswith(b"age,sex")
    assert not [p.name for p in workdir.iterdir() if ".part" in p.name]
