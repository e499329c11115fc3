"""Deliveries need only the columns the recipe releases or uses: a delivery lacking
a column whose role is ignore (never released) is released with a note, not refused, and its
package verifies against it; a missing quasi-identifier still stops it. ``apply`` of a
recipe on such a file says the same. ``anonymize`` states one count of rows in its text and
its JSON, the released and the original rows counted over the same columns."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from project_files import ROLES, delivery, worked_copy

from anonlib.__main__ import main
from anonlib.core.dataset import Dataset
from anonlib.core.loading import load_table
from anonlib.projects import ProjectState, ProjectStore, deliver
from anonlib.workflow import ReleaseTarget, WorkingCopy, verify_package
from anonlib.workflow.recipe import Reading


def with_income(data: bytes, month: int) -> bytes:
    """The delivery with an ignored column ``hhninc`` and an identifier ``mrn``."""
    frame = pd.read_csv(io.BytesIO(data), dtype=str)
    rng = np.random.default_rng(month)
    frame["hhninc"] = rng.uniform(1, 5, len(frame)).round(2).astype(str)
    frame.insert(0, "mrn", [f"M{i:05d}" for i in range(len(frame))])
    return frame.to_csv(index=False).encode()


def without(data: bytes, *columns: str) -> bytes:
    return pd.read_csv(io.BytesIO(data), dtype=str).drop(columns=list(columns)).to_csv(index=False).encode()


@pytest.fixture
def project(tmp_path):
    first = with_income(delivery(0), 0)
    table = load_table(first, name="survey.csv")
    roles = {**ROLES, "hhninc": "ignore", "mrn": "identifier"}
    loaded = Dataset.from_frame("survey.csv", table.frame, roles)
    start = WorkingCopy.start(loaded, ReleaseTarget(k=5, max_suppressed=0.2), reading=Reading.of(table, first))
    steps = worked_copy(delivery(0)).steps  # age in bands, the failing records suppressed
    copy = start.apply(steps[0].step, "Individual privacy")
    from anonlib.workflow import SuppressionStep

    copy = copy.apply(SuppressionStep.from_target(copy.target, copy.current), "Sidebar")
    store = ProjectStore(f"sqlite:///{tmp_path}/projects.sqlite")
    ref = store.create("survey", ProjectState.of(copy, "upload:survey.csv"), first)
    return store, ref


def test_a_delivery_lacking_an_ignored_column_is_released_with_a_note(project, tmp_path):
    store, ref = project
    data = without(with_income(delivery(1), 1), "hhninc", "mrn")
    result = deliver(store, ref, data, "month01.csv")
    assert result.copy is not None, result.problem
    assert [(d.blocking, d.sentence) for d in result.differences] == [
        (
            False,
            "The delivery lacks mrn, hhninc, which the release never uses nor releases (ignored or an identifier); "
            "it is released without them.",
        )
    ]
    released = pd.read_csv(io.BytesIO(result.copy.release().to_csv(index=False).encode()))
    assert list(released.columns) == ["age", "sex", "zip", "dx"]
    package = result.package()
    (tmp_path / "month01.csv").write_bytes(data)
    assert verify_package(package, tmp_path / "month01.csv").passed


def test_a_delivery_lacking_a_column_the_release_uses_is_still_refused(project):
    store, ref = project
    result = deliver(store, ref, without(with_income(delivery(1), 1), "zip", "hhninc"), "month01.csv")
    assert result.copy is None
    assert [d.sentence for d in result.differences if d.blocking] == [
        "The delivery lacks the column 'zip' (a quasi-identifier in the project)."
    ]


def test_apply_on_a_file_lacking_an_ignored_column_notes_it(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    Path("in.csv").write_bytes(with_income(delivery(0), 0))
    Path("next.csv").write_bytes(without(with_income(delivery(1), 1), "hhninc"))
    Path("broken.csv").write_bytes(without(with_income(delivery(1), 1), "age"))
    argv = ["anonymize", "in.csv", "--shield", "age,sex,zip", "--k", "3", "--max-suppressed", "0.3"]
    assert main([*argv, "--role", "mrn=identifier", "--recipe", "r.json"]) in (0, 1)
    capsys.readouterr()
    code = main(["apply", "r.json", "next.csv", "--out", "next_out.csv"])
    out = capsys.readouterr().out
    assert code in (0, 1) and Path("next_out.csv").exists()
    assert "note               This file lacks hhninc, which the release never uses nor releases" in out
    code = main(["apply", "r.json", "next.csv", "--json"])
    assert json.loads(capsys.readouterr().out)["notes"] == [
        "This file lacks hhninc, which the release never uses nor releases (ignored or an identifier); it is "
        "released without it."
    ]
    code = main(
        ["apply", "r.json", "next.csv", "--engine", "duckdb", "--out", "next_engine.csv"]
    )  # where the file lies
    out = capsys.readouterr().out
    assert code in (0, 1) and "note               This file lacks hhninc" in out
    engine = pd.read_csv("next_engine.csv", dtype=str, keep_default_na=False)
    memory = pd.read_csv("next_out.csv", dtype=str, keep_default_na=False)
    assert list(engine.columns) == list(memory.columns) and len(engine) == len(memory)
    assert main(["apply", "r.json", "broken.csv", "--out", "z.csv"]) == 2
    assert "lacks age, which the recipe needs" in capsys.readouterr().err and not Path("z.csv").exists()


@pytest.mark.parametrize("extra", [["--keep", "hhninc"], ["--role", "mrn=person"], []])
def test_anonymize_states_one_count_of_rows_in_text_and_json(tmp_path, monkeypatch, capsys, extra):
    """The text's "rows X (original Y) distinct; Z records released" and the JSON's rows,
    original_rows and released_records are the same counts, the rows both over the columns written: released rows never outnumber the original ones (the
    "original" ones were counted over the searched columns only, without a kept column)."""
    monkeypatch.chdir(tmp_path)
    Path("in.csv").write_bytes(with_income(delivery(0), 0))
    argv = ["anonymize", "in.csv", "--shield", "age,sex,zip", "--k", "1", "--out", "out.csv", *extra]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert main([*argv, "--json"]) == 0
    stated = json.loads(capsys.readouterr().out)
    line = re.search(r"^rows +([\d,]+) \(original ([\d,]+)\) distinct; ([\d,]+) records released$", text, re.M)
    said = tuple(int(line[i].replace(",", "")) for i in (1, 2, 3))
    assert said == (stated["rows"], stated["original_rows"], stated["released_records"])
    written = pd.read_csv("out.csv", dtype=str, keep_default_na=False)
    source = pd.read_csv("in.csv", dtype=str, keep_default_na=False)
    assert stated["rows"] == len(written.drop_duplicates()) and stated["released_records"] == len(written)
    assert stated["original_rows"] == len(source[list(written.columns)].drop_duplicates())
    assert stated["rows"] <= stated["original_rows"]
