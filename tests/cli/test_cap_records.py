"""The records-per-person cap (``anonymize --cap-records N [--cap-order first|random] [--time COL]``):
at most N records per person released, the earliest by the time column or drawn under the
project key, counted in ``--json`` ``capped_records`` and stated among the steps; every count
recounted with pandas on the file written and the file read."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from anonlib.cli import main
from anonlib.core.errors import ParameterError
from anonlib.transformations.capping import cap_records, records_kept
from anonlib.workflow.health_steps import CapRecordsStep
from anonlib.workflow.power_choice import SUGGESTION_RULE
from anonlib.workflow.steps import step_from_json


def trial(seed: int = 2, people: int = 120) -> pd.DataFrame:
    """1 to 12 visits per patient, the visit day since enrolment (shuffled rows), the stage."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(people):
        day, stage = 0, int(rng.integers(1, 4))
        for _ in range(int(rng.integers(1, 13))):
            rows.append({"id": f"p{p:03d}", "day": day, "stage": stage})
            day += int(rng.integers(100, 400))
            stage = min(4, stage + int(rng.random() < 0.15))
    frame = pd.DataFrame(rows)
    return frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)


def test_the_earliest_records_are_kept_as_pandas_keeps_them():
    frame = trial()
    kept = records_kept(frame, "id", 3, time="day")
    expected = frame.sort_values(["id", "day"]).groupby("id").head(3).index
    assert sorted(np.flatnonzero(kept).tolist()) == sorted(expected.tolist())
    capped = cap_records(frame, "id", 3, time="day")
    sizes = frame.groupby("id").size()
    assert capped.records == int((sizes - 3).clip(lower=0).sum())
    assert capped.people == int((sizes > 3).sum())


def test_without_a_time_the_file_order_and_a_blank_time_last():
    frame = pd.DataFrame({"pid": ["a", "a", "a", "b"], "day": [None, 9.0, 3.0, 1.0]})
    assert records_kept(frame, "pid", 2, time="day").tolist() == [False, True, True, True]
    assert records_kept(frame, "pid", 2).tolist() == [True, True, False, True]


def test_random_draws_are_fixed_by_the_key_and_differ_between_keys():
    frame = trial()
    one = records_kept(frame, "id", 2, order="random", key=bytes(32))
    assert (one == records_kept(frame, "id", 2, order="random", key=bytes(32))).all()
    assert (one != records_kept(frame, "id", 2, order="random", key=bytes([1]) * 32)).any()
    per_person = pd.Series(one).groupby(frame["id"]).sum()
    assert (per_person == frame.groupby("id").size().clip(upper=2)).all()
    with pytest.raises(ParameterError, match="needs the project key"):
        records_kept(frame, "id", 2, order="random")


def test_the_step_reads_back_from_its_json_and_refuses_a_bad_cap():
    step = CapRecordsStep.made("id", 3, time="day")
    assert step_from_json(step.to_json()) == step
    assert step.describe() == (
        "At most 3 records per person (id) released, the earliest by day: a person's further records are left out"
    )
    drawn = CapRecordsStep.made("id", 3, order="random", key=bytes(32))
    back = step_from_json(drawn.to_json())
    assert back == drawn and back.key is None and "key" not in drawn.to_json()
    with pytest.raises(ParameterError, match="at least 1"):
        CapRecordsStep.made("id", 0)


def _anonymize(source: Path, tmp_path: Path, *extra: str) -> list[str]:
    return [
        "anonymize",
        str(source),
        "--person",
        "id",
        "--pseudonymize",
        "id",
        "--key-file",
        str(tmp_path / "k.key"),
        "--shield",
        "day,stage",
        "--k",
        "5",
        "--max-suppressed",
        "0.05",
        "--json",
        *extra,
    ]


def test_anonymize_caps_counts_and_states_it(tmp_path, capsys):
    frame = trial()
    source = tmp_path / "trial.csv"
    frame.to_csv(source, index=False)
    out = tmp_path / "capped.csv"
    package = tmp_path / "capped.zip"
    args = ["--cap-records", "2", "--time", "day", "--out", str(out), "--package", str(package)]
    code = main(_anonymize(source, tmp_path, *args))
    stated = json.loads(capsys.readouterr().out)
    assert code == (0 if stated["met"] else 1)
    sizes = frame.groupby("id").size()
    assert stated["capped_records"] == int((sizes - 2).clip(lower=0).sum())
    assert stated["capped_people"] == int((sizes > 2).sum())
    assert any(s.startswith("At most 2 records per person (id) released, the earliest by day") for s in stated["steps"])
    readme = zipfile.ZipFile(package).read("README.txt").decode()
    assert "At most 2 records per person (id) released, the earliest by day" in readme
    assert f"The target is counted over each person's whole history. {SUGGESTION_RULE}" in readme
    written = pd.read_csv(out)
    assert written.groupby("id").size().max() <= 2  # pseudonyms: the same person, the same pseudonym
    # without the cap, the longest histories hold the release back: it keeps less
    assert main(_anonymize(source, tmp_path)) in (0, 1)
    said = capsys.readouterr()
    whole = json.loads(said.out)
    assert "capped_records" not in whole
    assert stated["utility"] < whole["utility"] == 1.0  # every quasi-identifier generalized away
    median = int(sizes.median())
    assert f"{int((sizes > median).sum()):,} of {len(sizes):,} people have more than {median:,} records" in said.err
    assert f"--cap-records {median} releases at most {median} records per person" in said.err


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--cap-order", "random"], "--cap-order and --time say how --cap-records N"),
        (["--cap-records", "0"], "at least 1"),
        (["--cap-records", "2", "--time", "nowhere"], "--time names 'nowhere'"),
    ],
)
def test_bad_cap_options_are_one_sentence_and_write_nothing(tmp_path, capsys, extra, words):
    source = tmp_path / "trial.csv"
    trial(people=20).to_csv(source, index=False)
    out = tmp_path / "never.csv"
    assert main(_anonymize(source, tmp_path, *extra, "--out", str(out))) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err and not out.exists()


def test_a_cap_needs_a_person_column(tmp_path, capsys):
    source = tmp_path / "trial.csv"
    trial(people=20).to_csv(source, index=False)
    args = ["anonymize", str(source), "--shield", "day,stage", "--k", "2", "--cap-records", "2", "--keep", "id"]
    assert main(args) == 2
    assert "name the person column with --person" in capsys.readouterr().err


@pytest.mark.parametrize("engine", [[], ["--engine", "duckdb"]], ids=["in memory", "duckdb"])
def test_records_a_cap_left_out_are_not_suppressed_records_when_the_person_column_is_withheld(tmp_path, capsys, engine):
    """The person column not released: the target is recounted in records on the table written,
    and the records the cap left out by decision are not among the suppressed ones (before, they
    were: "116 records (52.7%) are suppressed" where the search suppressed 8 and the cap left out
    108). anonymize, apply and verify agree; the recipe records the cap's count."""
    frame = trial(seed=5, people=60)
    frame.assign(age=frame["stage"] * 10).to_csv(tmp_path / "trial.csv", index=False)
    sizes = frame.groupby("id").size()
    capped = int((sizes - 2).clip(lower=0).sum())
    argv = ["anonymize", str(tmp_path / "trial.csv"), "--shield", "age", "--k", "5", "--person", "id"]
    argv += ["--keep", "day", "--cap-records", "2", "--time", "day", "--max-suppressed", "0.1", "--json", *engine]
    argv += ["--out", str(tmp_path / "out.csv"), "--recipe", str(tmp_path / "recipe.json")]
    code = main(argv)
    stated = json.loads(capsys.readouterr().out)
    written = pd.read_csv(tmp_path / "out.csv")
    assert "id" not in written.columns and stated["capped_records"] == capped
    kept = int(sizes.clip(upper=2).sum())  # the records the cap kept: the base of the share suppressed
    assert stated["records"] == kept and stated["suppressed_records"] == kept - len(written)
    assert code == (0 if stated["met"] else 1)
    assert json.loads((tmp_path / "recipe.json").read_text())["release"]["capped_records"] == capped
    assert main(["apply", str(tmp_path / "recipe.json"), str(tmp_path / "trial.csv"), "--json", *engine]) == code
    applied = json.loads(capsys.readouterr().out)
    assert applied["met"] == stated["met"]


@pytest.mark.parametrize("engine", [[], ["--engine", "duckdb"]], ids=["in memory", "duckdb"])
def test_records_a_cap_left_out_are_not_suppressed_records_when_people_are_released(tmp_path, capsys, engine):
    """The person column pseudonymized and released (counted in histories): ``anonymize`` and
    ``apply`` (in memory and on DuckDB) state as records the ones the cap kept and as suppressed
    records only those the release removed (before, apply said 305 records suppressed where the
    cap had left out 305 and nothing was suppressed), recounted with pandas on the file written."""
    frame = trial(seed=5, people=60)
    frame.assign(age=frame["stage"] * 10).to_csv(tmp_path / "trial.csv", index=False)
    key = tmp_path / "key"
    key.write_text("ab" * 32 + "\n")
    key.chmod(0o600)
    sizes = frame.groupby("id").size()
    kept = int(sizes.clip(upper=2).sum())
    argv = ["anonymize", str(tmp_path / "trial.csv"), "--shield", "age", "--k", "5", "--person", "id"]
    argv += ["--pseudonymize", "id", "--key-file", str(key), "--keep", "day", "--cap-records", "2", "--time", "day"]
    argv += ["--max-suppressed", "0.1", "--json", "--out", str(tmp_path / "out.csv")]
    argv += ["--recipe", str(tmp_path / "recipe.json"), *engine]
    code = main(argv)
    stated = json.loads(capsys.readouterr().out)
    written = pd.read_csv(tmp_path / "out.csv")
    assert stated["unit"] == "histories" and "id" in written.columns
    assert stated["capped_records"] == len(frame) - kept == 305
    assert stated["records"] == kept and stated["suppressed_records"] == kept - len(written)
    recipe = json.loads((tmp_path / "recipe.json").read_text())["release"]
    assert recipe["loaded_records"] == len(frame) and recipe["capped_records"] == 305
    for again in ([], ["--engine", "duckdb"]):
        apply = ["apply", str(tmp_path / "recipe.json"), str(tmp_path / "trial.csv"), "--key-file", str(key)]
        assert main([*apply, "--json", *again]) == code
        applied = json.loads(capsys.readouterr().out)
        assert (applied["records"], applied["suppressed_records"]) == (kept, kept - len(written))
        assert applied["released_records"] == len(written) and applied["met"] == stated["met"]
