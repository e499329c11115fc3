"""``python -m anonlib synthesize``: the contract's options make a release (OpenDP), ``--json``
is the one document on standard output with the contract's keys, the package it writes
verifies; bad input is one sentence with exit code 2 and nothing written; without the dp
extra (its import made to fail) one sentence says how to install it."""

from __future__ import annotations

import builtins
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from private_cases import HeldRelease

from anonlib.__main__ import main
from anonlib.core.samples import load_sample
from anonlib.transformations import synthesis
from anonlib.transformations.synthesis import INSTALL_SENTENCE, opendp_version
from anonlib.workflow import private_package

ROOT = Path(__file__).resolve().parents[2]
COLUMNS = "sex,race,relationship,income,age"
needs_opendp = pytest.mark.skipif(opendp_version() is None, reason="OpenDP (the dp extra) is not installed")


@pytest.fixture(scope="module")
def adult_csv(tmp_path_factory) -> Path:
    """800 Adult records (its categories and age) as an uploaded CSV."""
    path = tmp_path_factory.mktemp("synth") / "adult800.csv"
    frame = load_sample("adult").frame.sample(800, random_state=11)
    frame[COLUMNS.split(",")].to_csv(path, index=False)
    return path


def exit_code(argv: list[str]) -> int:
    """The command's exit code, also when argparse ends it (a usage error)."""
    try:
        return main(argv)
    except SystemExit as exit:
        return int(exit.code)


def cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "anonlib", *argv], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


@needs_opendp
@pytest.mark.slow
def test_json_is_alone_on_stdout_and_the_package_verifies(adult_csv, tmp_path, capsys):
    """The command line's one real release (OpenDP): MST alone on two columns, a category and a
    number (each column adds seconds of OpenDP's noise-scale searches; more columns and --predict
    are run below with OpenDP's output held)."""
    out, package = tmp_path / "synthetic.csv", tmp_path / "private.zip"
    columns = "sex,age"
    run = cli(
        "synthesize",
        str(adult_csv),
        "--columns",
        columns,
        "--cuts",
        "age=17:30,50:90",
        "--epsilon",
        "3",
        "--rows",
        "1200",
        "--values-from-data",
        "--out",
        str(out),
        "--package",
        str(package),
        "--report",
        str(tmp_path / "comparison.html"),
        "--json",
    )
    assert run.returncode in (0, 1), run.stderr
    data = json.loads(run.stdout)  # the whole of standard output is one JSON document
    assert {"method", "epsilon", "delta", "rho", "rows", "seconds", "library"} <= set(data)
    assert (data["method"], data["epsilon"], data["delta"], data["rho"], data["rows"]) == ("mst", 3.0, 0.0, 4.5, 1200)
    assert (data["unit"], data["ship"]) == ("record", "synthetic") and "records_per_person" not in data
    assert data["values_from"] == {"sex": "declared", "age": "cuts"}
    assert data["library"]["opendp"] == opendp_version() and data["seconds"] > 0
    assert data["cuts"] == [{"column": "age", "lower": 17.0, "upper": 90.0, "cuts": [30.0, 50.0]}]
    assert run.returncode == (0 if data["passed"] else 1)
    assert "%]" in run.stderr and "written" in run.stderr  # progress and notes go to standard error
    table = pd.read_csv(out)
    assert list(table.columns) == columns.split(",") and len(table) == 1200
    assert table["age"].between(17, 90).all()
    report = (tmp_path / "comparison.html").read_text()
    assert (
        "outside the release's privacy guarantee" in report and "report.html" not in zipfile.ZipFile(package).namelist()
    )
    assert main(["verify", str(package), str(adult_csv)]) == 0  # in this process: the same command
    assert "not re-derived from its source" in capsys.readouterr().out


@needs_opendp
def test_mst_with_delta_bounds_and_default_rows(adult_csv, tmp_path, capsys, monkeypatch):
    """The command's bookkeeping of δ, bounds and the default rows (the DP count), OpenDP's output
    held fixed (``HeldRelease``, whose model counts 500 records); OpenDP's own count with δ is the
    library's drawing test."""
    monkeypatch.setattr(synthesis, "opendp_release", lambda data, plan, keys, *a, **k: HeldRelease(plan, keys))
    out = tmp_path / "mst.csv"
    argv = ["synthesize", str(adult_csv), "--columns", "sex,race,age", "--method", "mst", "--epsilon", "2"]
    argv += ["--delta", "1e-6", "--cuts", "age=30,50", "--bounds", "age=17,90", "--out", str(out), "--json"]
    argv += ["--values", "sex=Female,Male", "--values-from-data"]
    code = main(argv)
    data = json.loads(capsys.readouterr().out)
    assert code == (0 if data["passed"] else 1)
    assert (data["method"], data["delta"]) == ("mst", 1e-6) and 0 < data["rho"] < 2.0  # δ > 0: zCDP, Gaussian
    assert data["noise"] == "Gaussian"
    assert data["cuts"] == [{"column": "age", "lower": 17.0, "upper": 90.0, "cuts": [30.0, 50.0]}]
    assert data["rows"] == round(data["records_estimate"]) == 500  # the DP count, the held model's total
    assert data["values_from"]["sex"] == "given" and data["values_from"]["race"] == "declared"
    table = pd.read_csv(out)
    assert len(table) == data["rows"] and table["age"].between(17, 90).all()


BAD = [
    (["--columns", "sex,nope", "--epsilon", "1", "--values-from-data"], "--columns names nope, not in the file"),
    (["--columns", "sex,income", "--epsilon", "0"], "ε must be between"),
    (["--columns", "sex,income", "--epsilon", "1", "--delta", "0.5"], "δ must be 0"),
    (["--columns", "sex,income", "--epsilon", "1", "--delta", "1e-5", "--values-from-data"], "at most 1e-06"),
    (["--columns", "sex,income", "--epsilon", "1"], "would be read from the records"),
    (["--columns", "sex,age", "--epsilon", "1", "--default-cuts"], "--default-cuts is gone"),
    (["--columns", "sex,income", "--epsilon", "1", "--delta", "1e-6"], "past the cap of 1e-06"),
    (
        ["--columns", "sex,income", "--epsilon", "1", "--values-from-data", "--person", "race"],
        "records kept per person",
    ),
    (["--columns", "sex,income", "--epsilon", "1", "--keep-failed"], "--keep-failed is gone"),
    (["--columns", "sex,income", "--epsilon", "1", "--values", "sex"], "Write --values as"),
    (["--columns", "sex,income", "--epsilon", "1", "--values", "age=1,2"], "not in --columns"),
    (["--columns", "sex,income", "--epsilon", "1", "--records-per-person", "2"], "needs --person"),
    (["--columns", "sex,income", "--epsilon", "1", "--person", "sex"], "never released"),
    (["--columns", "sex,income"], "Give the budget"),
    (["--columns", "sex,income", "--epsilon", "1", "--rows", "0"], "--rows must be at least 1"),
    (["--columns", "sex,age", "--epsilon", "1", "--values-from-data"], "age holds numbers: give its public bounds"),
    (["--columns", "sex,age", "--epsilon", "1", "--cuts", "age=a,b"], "must be numbers"),
    (["--columns", "sex,age", "--epsilon", "1", "--cuts", "age=40"], "give its public bounds"),
    (["--columns", "sex,age", "--epsilon", "1", "--cuts", "age=90:40:17"], "must lie between"),
    (["--columns", "sex,income", "--epsilon", "1", "--method", "magic"], "invalid choice"),
    (["--columns", "sex,income", "--epsilon", "1", "--pairs", "sex"], "Write --pairs as A:B"),
    (
        ["--columns", "sex,income", "--epsilon", "1", "--method", "aim", "--time-limit", "5", "--values-from-data"],
        "past the limit",
    ),
]


@needs_opendp
@pytest.mark.parametrize(("argv", "words"), BAD)
def test_bad_input_is_one_sentence_exit_2_and_nothing_written(adult_csv, tmp_path, capsys, argv, words):
    out = tmp_path / "out.csv"
    code = exit_code(["synthesize", str(adult_csv), *argv, "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("error: ") and words in err[0], err
    assert "Traceback" not in err[0] and err[0].endswith(".")
    assert not out.exists()


def test_the_output_may_not_replace_the_input(adult_csv, capsys):
    assert (
        main(["synthesize", str(adult_csv), "--columns", "sex,income", "--epsilon", "1", "--out", str(adult_csv)]) == 2
    )
    assert "never replaces a file it reads" in capsys.readouterr().err


def test_without_the_dp_extra_one_sentence_says_how_to_install_it(adult_csv, tmp_path, capsys, monkeypatch):
    real_import = builtins.__import__

    def no_opendp(name, *args, **kwargs):
        if name.split(".")[0] in ("opendp", "mbi", "polars"):
            raise ImportError(f"No module named '{name}'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_opendp)
    out = tmp_path / "out.csv"
    code = main(
        ["synthesize", str(adult_csv), "--columns", "sex,income", "--epsilon", "1", "--out", str(out), "--json"]
    )
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err.strip() == f"error: {INSTALL_SENTENCE}"
    assert "pip install '.[dp]'" in captured.err and not out.exists()


@needs_opendp
def test_neighbouring_files_give_the_same_package_when_opendps_output_is_held(adult_csv, tmp_path, monkeypatch):
    """Two files differing by one record (added at the end) give byte-identical packages when
    OpenDP's release is stubbed and the clock fixed: nothing else of the records reaches the
    package. The comparison differs (it reads the records), and it stays out of the package."""
    monkeypatch.setattr(synthesis, "opendp_release", lambda data, plan, keys, *a, **k: HeldRelease(plan, keys))
    monkeypatch.setattr(synthesis, "_fresh_rng", lambda: np.random.default_rng(7))
    monkeypatch.setattr(private_package, "now", lambda: "2026-01-01T00:00:00Z")
    neighbour = tmp_path / "neighbour.csv"
    neighbour.write_bytes(adult_csv.read_bytes() + b"Female,Other,Wife,>50K,40.5\n")
    packages, reports = [], []
    for source in (adult_csv, neighbour):
        package, report = tmp_path / f"{source.stem}.zip", tmp_path / f"{source.stem}.html"
        argv = ["synthesize", str(source), "--columns", COLUMNS, "--epsilon", "1", "--cuts", "age=17:30,50:90"]
        argv += ["--values", "sex=Female,Male", "--values", "race=Black,Other,White", "--values", "income=<=50K,>50K"]
        argv += ["--values", "relationship=Husband,Wife,Own-child", "--predict", "income"]
        argv += ["--out", str(tmp_path / f"{source.stem}-out.csv"), "--package", str(package), "--report", str(report)]
        assert exit_code(argv) in (0, 1)
        packages.append(package.read_bytes())
        reports.append(report.read_bytes())
    assert packages[0] == packages[1]
    assert reports[0] != reports[1]  # the officer's comparison reads the records: not in the package
    recipe = json.loads(zipfile.ZipFile(tmp_path / "neighbour.zip").read("recipe.json"))
    assert recipe["categories"]["race"] == ["Black", "Other", "White"] and recipe["rows"] == 500  # the DP count
