"""``python -m anonlib apply`` and ``anonymize --recipe``: a recipe re-applied to the file it
was made from reproduces the released table byte for byte; a smaller delivery that misses
the target exits 1 naming what fails; bad input exits 2 with one sentence."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from arca_release import ARCA_RELEASE

from anonlib.__main__ import main
from anonlib.core.samples import load_sample, sample_path
from anonlib.workflow import Recipe, ReleaseTarget


def adult_file(tmp_path: Path, rows: int, name: str = "patients.csv") -> Path:
    frame = load_sample("adult").frame.head(rows)[["age", "sex", "race", "education", "occupation", "income"]]
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path


def anonymize(tmp_path: Path, file: Path, capsys, *extra: str) -> tuple[Path, Path]:
    out, recipe = tmp_path / "anonymized.csv", tmp_path / "recipe.json"
    argv = [
        "anonymize",
        str(file),
        "--shield",
        "age,sex,race",
        "--keep",
        "education,occupation",
        "--k",
        "5",
        "--out",
        str(out),
        "--recipe",
        str(recipe),
        *extra,
    ]
    assert main(argv) == 0
    capsys.readouterr()
    return out, recipe


def stderr_sentence(capsys) -> str:
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    return err[len("error: ") :].strip()


def test_anonymize_recipe_reapplied_reproduces_out_exactly(tmp_path, capsys):
    file = adult_file(tmp_path, 2000)
    out, recipe_path = anonymize(tmp_path, file, capsys)
    recipe = Recipe.loads(recipe_path.read_bytes())
    assert recipe.target == ReleaseTarget(k=5) and [s.step.kind for s in recipe.steps] == ["generalization"]
    again = tmp_path / "again.csv"
    assert main(["apply", str(recipe_path), str(file), "--out", str(again)]) == 0
    printed = capsys.readouterr().out
    assert again.read_bytes() == out.read_bytes()
    assert "the file the recipe was made from" in printed and "reproduces release yes" in printed
    assert "Met: all 2,000 records are in classes meeting k = 5." in printed


@pytest.mark.parametrize("method", ["iab", "greedy"])
def test_anonymize_recipe_on_a_count_sample_reproduces_out(tmp_path, capsys, method):
    out, recipe = tmp_path / "a.csv", tmp_path / "r.json"
    assert (
        main(
            [
                *ARCA_RELEASE,
                "--k",
                "3",
                "--method",
                method,
                "--out",
                str(out),
                "--recipe",
                str(recipe),
            ]
        )
        == 0
    )
    again = tmp_path / "b.csv"
    capsys.readouterr()
    assert main(["apply", str(recipe), str(sample_path("arca_table1.csv")), "--out", str(again), "--json"]) == 0
    printed = capsys.readouterr().out
    result = json.loads(printed[printed.index("{") :])
    assert again.read_bytes() == out.read_bytes()
    assert result["same_file"] and result["reproduces_release"] and result["met"]
    assert result["released_records"] == result["loaded_records"] == 60


def test_a_smaller_delivery_that_misses_the_target_exits_1_naming_what_fails(tmp_path, capsys):
    _, recipe = anonymize(tmp_path, adult_file(tmp_path, 2000), capsys, "--method", "iab")
    delivery = adult_file(tmp_path, 60, "delivery.csv")
    released = tmp_path / "released.csv"
    assert main(["apply", str(recipe), str(delivery), "--out", str(released)]) == 1
    printed = capsys.readouterr().out
    assert "a new delivery (the recipe was made from" in printed
    assert "result             Not met:" in printed
    failing = [line for line in printed.splitlines() if line.startswith("failing ")]
    assert failing and failing[0].startswith("failing            k = 5: ")
    classes = [line for line in printed.splitlines() if line.startswith("failing class      ")]
    assert classes and "age=" in classes[0] and "sex=" in classes[0] and "record" in classes[0]
    assert released.is_file()  # written, and said not to meet the target
    assert main(["apply", str(recipe), str(delivery), "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert result["met"] is False and result["failing_records"] > 0
    assert result["failing"][0]["requirement"] == "k = 5"
    assert sum(c["records"] for c in result["smallest_failing_classes"]) <= result["failing_records"]
    # the numbers are the library's: records in classes smaller than 5 after the recipe's generalization
    table = pd.read_csv(released, dtype=str)
    sizes = table.groupby(["age", "sex", "race"]).size()
    assert result["failing_records"] == int(sizes[sizes < 5].sum())


def bad_inputs(tmp_path: Path, recipe: Path, file: Path) -> dict[str, tuple[list[str], str]]:
    good = json.loads(recipe.read_text())
    damaged = tmp_path / "damaged.json"
    damaged.write_text(recipe.read_text()[:300])
    edited = tmp_path / "edited.json"
    bad_level = json.loads(json.dumps(good))
    bad_level["steps"][0]["step"]["levels"][0]["level"] = 42
    edited.write_text(json.dumps(bad_level))
    other_layout = tmp_path / "other.csv"
    pd.read_csv(file, dtype=str).drop(columns=["race"]).to_csv(other_layout, index=False)
    new_values = tmp_path / "new_values.csv"
    frame = pd.read_csv(file, dtype=str)
    levels = good["steps"][0]["step"]["levels"]
    raised = next(item["attribute"] for item in levels if item["level"] > 0 and item["attribute"] != "age")
    frame.loc[0, raised] = "Unknown"  # a category its hierarchy does not list (a number is placed by the bands)
    frame.to_csv(new_values, index=False)
    return {
        "corrupted JSON": (["apply", str(damaged), str(file)], "not valid JSON"),
        "hand-edited level": (["apply", str(edited), str(file)], "levels 0 to"),
        "missing column": (["apply", str(recipe), str(other_layout)], "lacks race, which the recipe needs"),
        "value no hierarchy covers": (["apply", str(recipe), str(new_values)], "does not list the value 'Unknown'"),
        "no recipe file": (["apply", str(tmp_path / "nowhere.json"), str(file)], "does not exist"),
        "not a recipe": (["apply", str(file), str(file)], "not valid JSON"),
    }


def test_bad_recipes_and_files_exit_2_with_one_sentence(tmp_path, capsys):
    file = adult_file(tmp_path, 500)
    _, recipe = anonymize(tmp_path, file, capsys)
    for what, (argv, expected) in bad_inputs(tmp_path, recipe, file).items():
        assert main(argv) == 2, what
        sentence = stderr_sentence(capsys)
        assert expected in sentence and sentence.endswith("."), (what, sentence)
        assert not (tmp_path / "out.csv").exists()


def test_apply_help_names_the_exit_codes(capsys):
    with pytest.raises(SystemExit):
        main(["apply", "--help"])
    assert "(exit 0 met, 1 not met, 2 bad input)" in " ".join(capsys.readouterr().out.split())


def test_the_file_line_counts_the_file_s_records_in_memory_and_on_duckdb(tmp_path, capsys):
    """A recipe that suppresses records: the line about the file names the file's records (the
    base of the suppressed share), not the records left after the steps, in memory as on DuckDB."""
    file = adult_file(tmp_path, 2000)
    recipe = tmp_path / "r.json"
    assert main(
        [
            "anonymize",
            str(file),
            "--shield",
            "age,sex,race,education",
            "--keep",
            "occupation",
            "--k",
            "20",
            "--max-suppressed",
            "0.05",
            "--out",
            str(tmp_path / "o.csv"),
            "--recipe",
            str(recipe),
        ]
    ) in (0, 1)
    capsys.readouterr()
    lines = []
    for engine in ([], ["--engine", "duckdb"]):
        main(["apply", str(recipe), str(file), "--out", str(tmp_path / f"a{len(engine)}.csv"), *engine])
        printed = capsys.readouterr().out
        lines.append(next(line for line in printed.splitlines() if line.startswith("file ")))
        assert len(pd.read_csv(tmp_path / f"a{len(engine)}.csv")) < 2000  # the recipe does suppress records
    assert all("2,000 records" in line for line in lines), lines


def test_anonymize_and_apply_state_the_same_records_in_their_json(tmp_path, capsys):
    """One word, one meaning: ``records`` is the records assessed, ``released_records`` the
    records written, ``suppressed`` their difference, in both commands' --json."""
    file = adult_file(tmp_path, 2000)
    out, recipe = tmp_path / "a.csv", tmp_path / "r.json"
    assert (
        main(
            [
                "anonymize",
                str(file),
                "--shield",
                "age,sex,race,education",
                "--keep",
                "occupation",
                "--k",
                "5",
                "--max-suppressed",
                "0.05",
                "--out",
                str(out),
                "--recipe",
                str(recipe),
                "--json",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    made = json.loads(printed[printed.index("{") :])
    assert main(["apply", str(recipe), str(file), "--out", str(tmp_path / "b.csv"), "--json"]) == 0
    printed = capsys.readouterr().out
    applied = json.loads(printed[printed.index("{") :])
    written = len(pd.read_csv(out))
    assert made["suppressed"] > 0  # the case where the words could drift apart
    for key in ("records", "released_records", "suppressed"):
        assert made[key] == applied[key], key
    assert made["released_records"] == written == made["records"] - made["suppressed"] == 2000 - made["suppressed"]
