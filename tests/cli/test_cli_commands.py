"""``python -m anonlib`` batch commands: each prints the library's own numbers, writes files only when asked,
and answers bad input with one sentence and exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from arca_release import ARCA_RELEASE, ARCA_ZIP, ARCA_ZIP_AGE

from anonlib.__main__ import main
from anonlib.core.default_hierarchy import default_hierarchy
from anonlib.core.hierarchy import hierarchy_csv
from anonlib.core.loading import load_table, to_safe_csv
from anonlib.core.samples import load_sample, sample_path
from anonlib.measures.avector import anonymity_vector, improvement, k_of, lex_index, partition_count
from anonlib.measures.leakage import attribute_label, leakage_table
from anonlib.measures.peers import default_q, min_poac, min_ppp
from anonlib.transformations.anonymize_experiments import arca_hierarchies
from anonlib.transformations.generalization import search
from anonlib.transformations.schedule import assign, make_schedule, matrix_vector

COMMANDS = ("leakage", "privacy", "anonymize", "schedule", "vector", "index")


def run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


# --- schedule -------------------------------------------------------------------------


def test_schedule_of_the_papers_table7_heuristic(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["schedule", "--freqs", "4,4,5,2", "--capacities", "4,2,4,3,2", "--method", "heuristic", "--rule", "largest"]
    result = run_json(argv, capsys)
    matrix = assign([4, 4, 5, 2], [4, 2, 4, 3, 2], "heuristic", rule="largest")
    assert tuple(result["anonymity_vector"]) == matrix_vector(matrix) == (2, 3, 1, 1)
    assert result["matrix"] == matrix.toarray().tolist()
    assert result["shape"] == [4, 5]
    assert sorted(map(tuple, result["cells"])) == [
        (0, 2, 3),
        (0, 3, 1),
        (1, 1, 2),
        (1, 3, 2),
        (2, 0, 4),
        (2, 2, 1),
        (3, 4, 2),
    ]
    assert result["k"] == 1 and int(result["lexicographic_index"]) == lex_index((2, 3, 1, 1))
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "anonymity vector   (2, 3, 1, 1)" in out and f"lexicographic index {lex_index((2, 3, 1, 1))}" in out
    assert "   0  0  3  1  0" in out  # first matrix row as the paper's Table 7


@pytest.mark.parametrize("method, extra", [("random", ["--seed", "7"]), ("optimal", ["--time-limit", "20"])])
def test_schedule_other_methods_equal_the_library(method, extra, capsys: pytest.CaptureFixture[str]) -> None:
    result = run_json(
        ["schedule", "--freqs", "4,4,5,2", "--capacities", "4,2,4,3,2", "--method", method, *extra], capsys
    )
    matrix = assign([4, 4, 5, 2], [4, 2, 4, 3, 2], method, seed=7, time_limit=20)
    assert tuple(result["anonymity_vector"]) == matrix_vector(matrix)
    if method == "random":  # the optimum may be reached by another matrix of the same vector
        assert result["matrix"] == matrix.toarray().tolist()
    assert np.asarray(result["matrix"]).sum(axis=1).tolist() == [4, 4, 5, 2]


def test_a_large_schedule_is_written_as_cells(capsys: pytest.CaptureFixture[str]) -> None:
    freqs, capacities = [7] * 150, [10] * 110
    argv = ["schedule", "--freqs", ",".join(map(str, freqs)), "--capacities", ",".join(map(str, capacities))]
    result = run_json(argv, capsys)
    assert "matrix" not in result and result["shape"] == [150, 110]
    expected = assign(freqs, capacities)
    cells = np.asarray(result["cells"])
    assert len(cells) == expected.nnz <= 150 + 110
    assert (expected.toarray()[cells[:, 0], cells[:, 1]] == cells[:, 2]).all()
    assert main(argv) == 0
    assert (
        f"matrix             150 x 110, {expected.nnz:,} non-zero cells (too large to print)" in capsys.readouterr().out
    )


def test_schedule_of_a_population_file_with_resources(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    resources_file = sample_path("caballero_resources.csv")
    out = tmp_path / "schedule.csv"
    argv = [
        "schedule",
        "--population",
        str(sample_path("caballero_table2b.csv")),
        "--qi",
        "ZIP,Gender,Age",
        "--resources",
        str(resources_file),
        "--out",
        str(out),
    ]
    assert main([*argv, "--json"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)  # the JSON and nothing else; "written ..." on standard error
    assert captured.err.startswith("written ")
    qis = ["ZIP", "Gender", "Age"]
    population = load_table(sample_path("caballero_table2b.csv")).frame[qis]
    expected = make_schedule(population, load_table(resources_file).frame, qis)
    assert tuple(result["vector_before"]) == expected.base_vector == (0, 1, 0, 2, 1)
    assert tuple(result["anonymity_vector"]) == expected.vector
    assert result["matrix"] == expected.matrix.toarray().tolist()
    assert int(result["lexicographic_index"]) == expected.index
    assert out.read_bytes() == to_safe_csv(expected.schedule)
    assert len(pd.read_csv(out)) == 15


# --- vector and index ----------------------------------------------------------------


def test_vector_of_class_sizes(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_json(["vector", "--sizes", "4,4,5,2"], capsys)
    vector = anonymity_vector([4, 4, 5, 2])
    assert tuple(result["anonymity_vector"]) == vector and result["k"] == k_of(vector) == 2
    assert int(result["lexicographic_index"]) == lex_index(vector)
    assert result["people"] == 15 and int(result["possible_vectors"]) == partition_count(15) == 176


def test_index_and_improvement(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_json(["index", "--vector", "0,1,0,2,1"], capsys)
    assert int(result["lexicographic_index"]) == lex_index((0, 1, 0, 2, 1)) == 154
    result = run_json(["index", "--vector", "0,2,1,2", "--versus", "2,3,1,1", "--base", "0,1,0,2,1"], capsys)
    assert result["improvement"] == improvement((0, 2, 1, 2), (2, 3, 1, 1), (0, 1, 0, 2, 1))
    assert main(["index", "--vector", "0,2,1,2", "--versus", "2,3,1,1", "--base", "0,1,0,2,1"]) == 0
    assert "improvement        42.2078%" in capsys.readouterr().out


def test_index_of_a_large_vector_is_exact(capsys: pytest.CaptureFixture[str]) -> None:
    vector = (3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 40)
    result = run_json(["index", "--vector", ",".join(map(str, vector))], capsys)
    assert int(result["lexicographic_index"]) == lex_index(vector)  # a 19-digit number, printed whole


# --- leakage -------------------------------------------------------------------------


def test_leakage_of_the_arca_table_with_pairs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "leakage.csv"
    assert (
        main(
            [
                "leakage",
                "--sample",
                "arca_table1",
                "--attributes",
                "Age,Zip",
                "--sizes",
                "1,2",
                "--csv",
                str(out),
                "--json",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    result = json.loads(printed[printed.index("{") :])
    frame = load_sample("arca_table1").frame
    expected = leakage_table(frame, ["Age", "Zip"], count="#Rec.", sizes=[1, 2])
    assert [r["attribute"] for r in result["leakage"]] == ["Age", "Zip", "Age + Zip"]
    assert [r["partitions"] for r in result["leakage"]] == expected["partitions"].tolist() == [13, 8, 15]
    assert [r["loss"] for r in result["leakage"]] == expected["loss"].tolist()
    assert [r["normalized"] for r in result["leakage"]] == expected["normalized"].tolist()
    shown = expected.assign(attribute=[attribute_label(a) for a in expected["attribute"]])
    assert out.read_bytes() == to_safe_csv(shown)


def test_leakage_defaults_to_quasi_identifiers_and_sensitive(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["leakage", "--sample", "arca_table1"]) == 0
    out = capsys.readouterr().out
    dataset = load_sample("arca_table1")
    expected = leakage_table(dataset.frame, list(dataset.quasi_identifiers + dataset.sensitive), count="#Rec.")
    age = expected[expected["attribute"] == "Age"].iloc[0]
    lines = out.strip().splitlines()
    assert any(line.startswith("Age ") and f"{age.loss:>11.5f}" in line for line in lines)
    assert not any(line.startswith("#Rec.") for line in lines)  # the count column weighs, it is not measured
    assert len(out.strip().splitlines()) == 2 + len(expected)


# --- privacy -------------------------------------------------------------------------


def test_privacy_ppp_share_and_median_with_per_row_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rows.csv"
    argv = ["privacy", "--sample", "heart_cleveland", "--sensitive", "num", "--aux", "age,sex,chol,fbs", "--p", "0.2"]
    assert main([*argv, "--out", str(out), "--json"]) == 0
    printed = capsys.readouterr().out
    result = json.loads(printed[printed.index("{") :])
    frame = load_sample("heart_cleveland").frame
    values = min_ppp(frame, "num", ["age", "sex", "chol", "fbs"])
    assert result["protected_share"] == pytest.approx(float(np.mean(values > 0.2)))
    assert result["median_min_ppp"] == float(np.sort(values)[(len(values) - 1) // 2])  # lower median
    rows = pd.read_csv(out)
    assert len(rows) == len(frame) and np.allclose(rows["min PPP"], values)
    assert rows["protected"].tolist() == (values > 0.2).tolist()


def test_privacy_counts_records_as_the_expanded_table(capsys: pytest.CaptureFixture[str]) -> None:
    """A record-count column weighs each row as that many people (reference: the rows repeated)."""
    result = run_json(
        ["privacy", "--sample", "arca_table1", "--sensitive", "Genetic risk", "--aux", "Sex,AC", "--p", "0.1"], capsys
    )
    frame = load_sample("arca_table1").frame
    expanded = frame.loc[frame.index.repeat(frame["#Rec."])].reset_index(drop=True)
    values = min_ppp(expanded, "Genetic risk", ["Sex", "AC"])
    assert result["individuals"] == 60
    assert result["protected_share"] == pytest.approx(float(np.mean(values > 0.1)))


def test_privacy_poac_uses_the_papers_joint_q(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "privacy",
        "--sample",
        "kroes_table1_option1",
        "--sensitive",
        "Diagnosis",
        "--aux",
        "Gender,Age",
        "--measure",
        "poac",
        "--p",
        "0.5",
    ]
    result = run_json(argv, capsys)
    frame = load_sample("kroes_table1_option1").frame
    q = default_q(0.5, frame["Diagnosis"].nunique())
    values = min_poac(frame, "Diagnosis", ["Gender", "Age"], q)
    assert result["q"] == q and result["protected_share"] == pytest.approx(float(np.mean(values >= 1.0)))
    result = run_json([*argv, "--q", "0", "--no-empty"], capsys)
    values = min_poac(frame, "Diagnosis", ["Gender", "Age"], 0.0, include_empty=False)
    assert result["protected_share"] == pytest.approx(float(np.mean(values >= 1.0)))


def test_privacy_with_a_person_column_counts_look_alikes_among_other_people(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A's flu visit at (30, F) is protected only by A's own cold visit: with ``pid`` marked as the
    person, 5 of the 6 records are protected (the page's number), not 6."""
    path = tmp_path / "panel.csv"
    pd.DataFrame(
        {
            "pid": list("AABCCD"),
            "age": [30, 30, 30, 40, 40, 40],
            "sex": list("FFFMMM"),
            "dx": ["flu", "cold", "flu", "flu", "flu", "cold"],
        }
    ).to_csv(path, index=False)
    argv = ["privacy", str(path), "--sensitive", "dx", "--aux", "age,sex", "--out", str(tmp_path / "rows.csv")]
    rows = run_json([*argv, "--role", "pid=ignore"], capsys)
    assert rows["protected_share"] == 1.0 and rows["person"] is None and rows["look_alikes"] == "records"
    people = run_json([*argv, "--role", "pid=person"], capsys)
    assert people["protected_share"] == pytest.approx(5 / 6) and people["person"] == "pid"
    assert people["look_alikes"] == "the record itself and other people's records"
    assert pd.read_csv(tmp_path / "rows.csv").columns.tolist() == ["dx", "age", "sex", "min PPP", "protected"]
    assert main([*argv, "--role", "pid=person"]) == 0
    assert "look-alikes        among other people's records ('pid' says whose record it is)" in capsys.readouterr().out


# --- anonymize -----------------------------------------------------------------------


def test_anonymize_arca_with_the_papers_hierarchies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    frame = load_sample("arca_table1").frame
    hierarchies = arca_hierarchies(frame)
    argv = [
        *ARCA_RELEASE,
        "--k",
        "3",
        "--method",
        "iab",
    ]
    for attribute, table in hierarchies.items():
        path = tmp_path / f"{attribute}.csv"
        path.write_bytes(hierarchy_csv(table))
        argv += ["--hierarchy", f"{attribute}={path}"]
    out = tmp_path / "anonymized.csv"
    assert main([*argv, "--out", str(out), "--json"]) == 0
    printed = capsys.readouterr().out
    result = json.loads(printed[printed.index("{") :])
    expected = search(frame, ["Zip", "Age", "AC"], 3, hierarchies, "iab", count="#Rec.")
    assert result["levels"] == expected.levels == {"Zip": 1, "Age": 1, "AC": 0}
    assert result["rows"] == expected.rows == 21 and result["violations"] == 0
    assert result["generated"] == expected.generated
    assert out.read_bytes() == to_safe_csv(expected.table)
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "levels             Zip 1/5, Age 1/3, AC 0/2" in text and "rows               21 (original 22)" in text


@pytest.mark.parametrize("method", ["exhaustive", "greedy"])
def test_anonymize_with_default_hierarchies_equals_the_library(method, capsys: pytest.CaptureFixture[str]) -> None:
    result = run_json(
        [
            *ARCA_ZIP_AGE,
            "--k",
            "4",
            "--method",
            method,
        ],
        capsys,
    )
    frame = load_sample("arca_table1").frame
    hierarchies = {a: default_hierarchy(frame[a], a)[1] for a in ("Zip", "Age")}
    expected = search(frame, ["Zip", "Age"], 4, hierarchies, method, count="#Rec.")
    assert (result["levels"], result["rows"], result["generated"]) == (
        expected.levels,
        expected.rows,
        expected.generated,
    )


# --- files only when asked, help, errors ----------------------------------------------


def test_nothing_is_written_without_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert (
        main(
            ["anonymize", "--sample", "arca_table1", "--shield", "Zip,Age", "--keep", "Sex,AC,Weight,Race", "--k", "3"]
        )
        == 0
    )
    assert main(["privacy", "--sample", "kroes_table1_option2", "--sensitive", "Diagnosis"]) == 0
    assert main(["leakage", "--sample", "arca_table1"]) == 0
    assert (
        main(["schedule", "--sample", "caballero_table2b", "--resources", str(sample_path("caballero_resources.csv"))])
        == 0
    )
    assert list(tmp_path.iterdir()) == []
    assert "written" not in capsys.readouterr().out


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_with_an_example(command, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main([command, "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert f"Example: python -m anonlib {command}" in " ".join(out.split())


@pytest.mark.parametrize(
    "argv, phrase",
    [
        (["schedule", "--freqs", "4,x", "--capacities", "4"], "'x' is not one"),
        (["schedule", "--freqs", "4,4"], "Give --freqs and --capacities"),
        (["schedule", "--freqs", "5", "--capacities", "2,2"], "4 seats in total but 5 people"),
        (["schedule", "--sample", "caballero_table2b"], "--resources FILE"),
        (["vector", "--sizes", "2,-1"], "cannot be negative"),
        (["index", "--vector", "0,1", "--versus", "2"], "needs both --versus"),
        (["index", "--vector", "0,1", "--versus", "2", "--base", "1"], "different numbers of people"),
        (["leakage", "--sample", "arca_table1", "--attributes", "Agee"], "do not exist in the data: Agee"),
        (["privacy", "--sample", "arca_table1", "--sensitive", "Risk"], "do not exist in the data: Risk"),
        (
            [
                "privacy",
                "--sample",
                "arca_table1",
                "--sensitive",
                "Sex",
                "--p",
                "0.5",
                "--q",
                "1.5",
                "--measure",
                "poac",
            ],
            "threshold q must be at least 0 and below 1; got 1.5",
        ),
        (
            ["privacy", "--sample", "arca_table1", "--sensitive", "Sex", "--p", "1.5"],
            "threshold p must be at least 0 and below 1; got 1.5",
        ),
        (
            [
                *ARCA_ZIP,
                "--k",
                "3",
                "--hierarchy",
                "Zip",
            ],
            "ATTRIBUTE=file.csv",
        ),
        (
            [
                *ARCA_ZIP,
                "--k",
                "3",
                "--hierarchy",
                "Zip=nowhere.csv",
            ],
            "'nowhere.csv' does not exist",
        ),
        (
            [
                *ARCA_ZIP,
                "--k",
                "3",
                "--hierarchy",
                f"Age={sample_path('arca_table1.csv')}",
            ],
            "not a quasi-identifier of --shield",
        ),
        (
            ["anonymize", "--sample", "arca_table1", "--shield", "Zip", "--keep", "Sex,AC,Age,Weight,Race", "--k", "0"],
            "k must be a whole number of at least 1; got 0",
        ),
        (
            [
                *ARCA_ZIP,
                "--k",
                "100",
            ],
            "No generalization reaches 100-anonymity",
        ),
        (["leakage", "--sample", "arca_table1", "--sizes", "0"], "at least one attribute; got size 0"),
        (
            [
                *ARCA_ZIP,
                "--k",
                "3",
                "--out",
                "/nonexistent-dir/x.csv",
            ],
            "Could not write",
        ),
    ],
)
def test_bad_input_is_one_sentence_and_exit_2(argv, phrase, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("error: ") and phrase in captured.err and "Traceback" not in captured.err
    assert len(captured.err.strip().splitlines()) == 1
