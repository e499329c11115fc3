"""``python -m anonlib risk`` and ``models``: the library's own numbers, exit codes, one-sentence errors."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from arca_release import ARCA_RELEASE

from anonlib.__main__ import main
from anonlib.core.samples import load_sample
from anonlib.measures.identifiers import hipaa_identifiers
from anonlib.measures.models import ModelRequirement, acceptance, model_values
from anonlib.measures.risk import reidentification, suda


def run_json(argv: list[str], capsys: pytest.CaptureFixture[str], code: int = 0) -> dict:
    assert main([*argv, "--json"]) == code
    return json.loads(capsys.readouterr().out)


def test_risk_equals_the_library(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(
        [
            "risk",
            "--sample",
            "adult",
            "--qi",
            "age,sex,race",
            "--sampling-fraction",
            "0.01",
            "--suda",
            "--suda-size",
            "2",
        ],
        capsys,
    )
    frame = load_sample("adult").frame
    expected = reidentification(frame, ["age", "sex", "race"], sampling_fraction=0.01)
    assert out["prosecutor_highest"] == expected.prosecutor_highest
    assert out["records_above"] == {"0.2": expected.records_above[0][1], "0.5": expected.records_above[1][1]}
    assert out["population_uniques"] == expected.population_uniques and out["population_model"] == "pitman"
    assert out["k_map"] is None and out["marketer"] == expected.marketer
    special = suda(frame, ["age", "sex", "race"], max_size=2)
    assert out["special_uniques"]["records"] == special.special_unique_records
    assert [f["column"] for f in out["hipaa_identifiers"]] == [f.column for f in hipaa_identifiers(frame)]


def test_risk_with_a_population_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data.csv"
    pd.DataFrame({"zip": ["37010", "37010", "37012"], "age": [30, 30, 40]}).to_csv(data, index=False)
    population = tmp_path / "population.csv"
    pd.DataFrame({"zip": ["37010", "37012"], "age": [30, 40], "people": [20, 5]}).to_csv(population, index=False)
    out = run_json(["risk", str(data), "--qi", "zip,age", "--population", str(population)], capsys)
    assert out["k_map"] == 5 and out["journalist_highest"] == 0.2
    assert main(["risk", str(data), "--qi", "zip,age", "--population", str(population)]) == 0
    text = capsys.readouterr().out
    assert "(k-map 5)" in text and "highest risk       20.00%" in text


def test_models_equal_the_library_and_exit_1_when_the_target_is_not_met(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "models",
        "--sample",
        "adult",
        "--qi",
        "sex,race",
        "--sensitive",
        "income",
        "--k",
        "5",
        "--require",
        "distinct_l:income=2",
        "--require",
        "recursive_cl:income=2,c=20",
        "--max-suppressed",
        "0.05",
    ]
    out = run_json(argv, capsys)
    frame = load_sample("adult").frame
    values = model_values(frame, ["sex", "race"], "income")
    assert out["models"][0] == values.as_dict()
    target = acceptance(
        frame,
        ["sex", "race"],
        k=5,
        max_suppressed=0.05,
        requirements=[ModelRequirement("distinct_l", "income", 2), ModelRequirement("recursive_cl", "income", 2, c=20)],
    )
    assert out["target"]["acceptable"] is target.acceptable is True
    assert out["target"]["failing"] == dict(target.failing)
    strict = run_json([*argv[:-1], "0", "--require", "t_closeness:income=0.01"], capsys, code=1)
    assert strict["target"]["acceptable"] is False and strict["target"]["suppressed_records"] > 0


@pytest.mark.parametrize("command", ["risk", "models"])
def test_help_has_an_example(command, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main([command, "--help"])
    assert stop.value.code == 0 and f"Example: python -m anonlib {command}" in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize(
    "argv, phrase",
    [
        (["risk", "--sample", "adult", "--qi", "age", "--sampling-fraction", "0"], "above 0 and at most 1; got 0"),
        (["risk", "--sample", "adult", "--qi", "age", "--sampling-fraction", "2"], "got 2"),
        (["risk", "--sample", "adult", "--qi", "age", "--population", "nowhere.csv"], "'nowhere.csv' does not exist"),
        (
            ["risk", "--sample", "adult", "--qi", "age,sex,race", "--suda", "--suda-size", "4"],
            "from 1 to the number of quasi-identifiers (3)",
        ),
        (
            ["models", "--sample", "adult", "--qi", "sex,income", "--sensitive", "income"],
            "income is both a quasi-identifier and a sensitive attribute",
        ),
        (["models", "--sample", "adult", "--qi", "sex", "--require", "t_closeness:income"], "MODEL:SENSITIVE=VALUE"),
        (["models", "--sample", "adult", "--qi", "sex", "--require", "ldiv:income=2"], "'ldiv' is not a privacy model"),
        (["models", "--sample", "adult", "--qi", "sex", "--require", "alpha:income=x"], "is not a number"),
        (
            ["models", "--sample", "adult", "--qi", "sex", "--sensitive", "income", "--max-suppressed", "2"],
            "between 0 and 1; got 2",
        ),
    ],
)
def test_bad_input_is_one_sentence_and_exit_2(argv, phrase, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and phrase in err and len(err.strip().splitlines()) == 1


def test_anonymize_with_models_and_a_suppression_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--require and --max-suppressed as `models` takes them: the search's result, the released
    table without the failing classes' records, and a recipe that reproduces it."""
    out, recipe = tmp_path / "out.csv", tmp_path / "recipe.json"
    argv = [
        *ARCA_RELEASE,
        "--k",
        "3",
        "--require",
        "distinct_l:Genetic risk=2",
        "--max-suppressed",
        "0.3",
    ]
    assert main([*argv, "--out", str(out), "--recipe", str(recipe), "--json"]) == 0
    printed = capsys.readouterr().out
    summary = json.loads(printed[printed.index("{") :])  # after the "written" lines
    assert summary["requirements"] == ["distinct 2-diversity of Genetic risk"] and summary["max_suppressed"] == 0.3
    assert summary["suppressed_records"] == 10 and summary["levels"] == {"Zip": 1, "Age": 4, "AC": 0}
    released = pd.read_csv(out)
    total = int(load_sample("arca_table1").frame["#Rec."].sum())
    assert total - int(released["#Rec."].sum()) == 10
    verdict = acceptance(
        released,
        ["Zip", "Age", "AC"],
        k=3,
        count="#Rec.",
        requirements=[ModelRequirement("distinct_l", "Genetic risk", 2)],
    )
    assert verdict.suppressed_records == 0
    again = tmp_path / "again.csv"
    sample = Path(__file__).resolve().parents[2] / "data" / "samples" / "arca_table1.csv"
    assert main(["apply", str(recipe), str(sample), "--out", str(again)]) == 0
    assert again.read_bytes() == out.read_bytes()


@pytest.mark.parametrize(
    "extra, phrase",
    [
        (["--require", "distinct_l:Genetic risk=9"], "Relax a model, allow more suppression"),
        (["--max-suppressed", "2"], "share of records between 0 and 1"),
        (["--require", "distinct_l:Age=2"], "cannot also be the sensitive attribute"),
        (["--hierarchy", "Race=x.csv"], "does not exist"),
    ],
)
def test_anonymize_bad_models_are_one_sentence(extra, phrase, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        *ARCA_RELEASE,
        "--k",
        "3",
        *extra,
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert phrase in err and err.count("\n") == 1
