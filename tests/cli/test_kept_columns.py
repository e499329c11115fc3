"""Nothing released that the target does not count (linkable.md part 2, 6; contract round 8)."""

import json
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from anonlib.cli import main


def _panel(folder: Path) -> Path:
    """Six people over three years: age changes, the birth year and city never do."""
    rows = []
    for person, (born, city) in enumerate([(51, "x"), (51, "x"), (52, "y"), (52, "x"), (53, "y"), (53, "y")]):
        for year in range(3):
            rows.append({"idcode": f"p{person}", "wave": year, "age": 20 + year + person % 2, "birth_yr": born,
                         "town_flag": city})  # fmt: skip
    path = folder / "panel.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


ARGS = ["--person", "idcode", "--pseudonymize", "idcode", "--shield", "age", "--k", "2"]


def test_an_unshielded_guessed_or_stable_column_is_refused_in_one_sentence_and_nothing_is_written(tmp_path, capsys):
    file = _panel(tmp_path)
    out = tmp_path / "o.csv"
    code = main(["anonymize", str(file), *ARGS, "--key-file", str(tmp_path / "k"), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert err.count("\n") == 1 and err.startswith("error: birth_yr is guessed")
    assert "--shield" in err and "--keep birth_yr" in err and "--role birth_yr=ignore" in err


def test_kept_columns_are_listed_and_people_unique_with_them_counted_on_the_release(tmp_path, capsys):
    file = _panel(tmp_path)
    out = tmp_path / "o.csv"
    argv = ["anonymize", str(file), *ARGS, "--key-file", str(tmp_path / "k"), "--out", str(out)]
    assert main([*argv, "--keep", "birth_yr", "--role", "town_flag=ignore", "--json"]) == 0
    stated = json.loads(capsys.readouterr().out)
    assert stated["kept"] == ["birth_yr"] and stated["kept_unit"] == "people"
    written = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert "town_flag" not in written.columns and "birth_yr" in written.columns
    # pandas: a person's history is the multiset of their (age, birth_yr) rows
    history = written.groupby("idcode").apply(lambda g: tuple(sorted(zip(g["age"], g["birth_yr"]))))
    assert stated["people_unique_with_kept"] == int((history.map(history.value_counts()) == 1).sum())


@pytest.mark.parametrize(
    "how", [["--shield", "age,birth_yr,town_flag"], ["--role", "birth_yr=ignore", "--role", "town_flag=ignore"]]
)
def test_shielding_or_leaving_out_releases_nothing_unkept(tmp_path, capsys, how):
    file = _panel(tmp_path)
    argv = ["anonymize", str(file), "--person", "idcode", "--pseudonymize", "idcode", "--k", "2"]
    argv += ["--key-file", str(tmp_path / "k"), "--json"]
    argv += how if how[0] != "--shield" else how
    if how[0] != "--shield":
        argv += ["--shield", "age"]
    assert main(argv) in (0, 1)
    assert json.loads(capsys.readouterr().out)["kept"] == []


def test_the_package_and_verify_state_the_kept_columns_with_the_figure_recounted_on_the_table(tmp_path, capsys):
    file = _panel(tmp_path)
    package = tmp_path / "p.zip"
    argv = ["anonymize", str(file), *ARGS, "--key-file", str(tmp_path / "k"), "--keep", "birth_yr,town_flag"]
    assert main([*argv, "--package", str(package), "--json"]) == 0
    stated = json.loads(capsys.readouterr().out)
    figure = f"with them an attacker finds {stated['people_unique_with_kept']} of 6 people unique on their history"
    readme = zipfile.ZipFile(package).read("README.txt").decode()
    assert "Kept unchanged, not counted by the target: birth_yr, town_flag" in readme and figure in readme
    assert main(["verify", str(package), "--json"]) == 0
    checks = json.loads(capsys.readouterr().out)["checks"]
    (kept,) = [c for c in checks if c["part"] == "kept columns"]
    assert "(birth_yr, town_flag) are released unchanged by decision and not counted by the target" in kept["sentence"]
    assert figure in kept["sentence"]
