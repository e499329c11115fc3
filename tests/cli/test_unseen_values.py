"""A recipe covers a later delivery's new values: numbers by their bands, new categories refused
or sent to the top with --unseen top, counted in --json unseen (linkable.md part 2, 7)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from anonlib.cli import main

BAND = re.compile(r"^\[(-?[\d.]+)-(-?[\d.]+)\]$")


REGIONS = ["n1", "n2", "n3", "n4", "s1", "s2", "s3", "s4"]


def _year(seed: int, ages: tuple[int, int], regions: list[str], n: int = 600) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(*ages, n),
            "region": rng.choice(regions, n),
            "dx": rng.choice(["flu", "copd", "asthma"], n),
        }
    )


def _run(argv, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def recipe(tmp_path: Path, capsys) -> Path:
    """The first year's recipe: age in bands (level 1 or more), region generalized too."""
    _year(1, (20, 81), REGIONS).to_csv(tmp_path / "first.csv", index=False)
    groups = pd.DataFrame([[r, "north" if r[0] == "n" else "south", "*"] for r in REGIONS])
    groups.to_csv(tmp_path / "region.csv", index=False, header=False)
    argv = ["anonymize", tmp_path / "first.csv", "--shield", "age,region", "--role", "dx=sensitive", "--k", "3"]
    argv += ["--hierarchy", f"region={tmp_path / 'region.csv'}"]
    code, out, err = _run([*argv, "--recipe", tmp_path / "r.json", "--json"], capsys)
    levels = json.loads(out)["levels"]
    assert code == 0 and levels["age"] >= 1 and levels["region"] >= 1, (levels, err)
    return tmp_path / "r.json"


def test_a_later_years_new_ages_fall_in_the_first_recipes_bands(recipe: Path, tmp_path: Path, capsys):
    later = _year(2, (35, 96), REGIONS)  # ages 81-95 the first year never had
    later.to_csv(tmp_path / "later.csv", index=False)
    first = pd.read_csv(tmp_path / "first.csv")
    code, out, err = _run(["apply", recipe, tmp_path / "later.csv", "--out", tmp_path / "o.csv", "--json"], capsys)
    result = json.loads(out)
    assert code in (0, 1), err  # judged, never refused for a number
    new_ages = ~later["age"].isin(first["age"])
    (entry,) = [u for u in result["unseen"] if u["column"] == "age"]
    assert entry["placed"] == "band" and entry["records"] == int(new_ages.sum())
    assert entry["distinct_values"] == later.loc[new_ages, "age"].nunique()
    written = pd.read_csv(tmp_path / "o.csv", dtype=str)
    assert len(written) == result["released_records"] and result["suppressed_records"] == len(later) - len(written)
    # each released label holds an age of the file: the records' ages and the labels, sorted alike per label
    labels = written["age"].value_counts()
    for label, n in labels.items():
        m = BAND.match(label)
        assert m is not None, label
        inside = later["age"].between(float(m.group(1)), float(m.group(2)))
        assert inside.sum() >= n, (label, n)
    assert written["age"].map(lambda t: float(BAND.match(t).group(2)) > 80).any()  # the new ages' bands released


def test_a_new_category_is_refused_by_name_or_goes_to_the_top_when_asked(recipe: Path, tmp_path: Path, capsys):
    later = _year(3, (20, 81), [*REGIONS, "islands"])
    later.to_csv(tmp_path / "later.csv", index=False)
    out_file = tmp_path / "o.csv"
    code, out, err = _run(["apply", recipe, tmp_path / "later.csv", "--out", out_file], capsys)
    assert code == 2 and not out_file.exists() and "Traceback" not in err
    (sentence,) = [line for line in err.splitlines() if line.startswith("error: ")]
    assert "region" in sentence and "'islands'" in sentence and "--unseen top" in sentence
    assert f"held by {int((later['region'] == 'islands').sum()):,} record" in sentence
    code, out, err = _run(
        ["apply", recipe, tmp_path / "later.csv", "--out", out_file, "--unseen", "top", "--json"], capsys
    )
    result = json.loads(out)
    assert code in (0, 1), err
    (entry,) = [u for u in result["unseen"] if u["column"] == "region"]
    assert entry == {
        "column": "region",
        "values": ["islands"],
        "distinct_values": 1,
        "records": int((later["region"] == "islands").sum()),
        "placed": "top",
    }
    written = pd.read_csv(out_file, dtype=str)
    assert "islands" not in set(written["region"])
    code, out, err = _run(["apply", recipe, tmp_path / "later.csv", "--unseen", "sometimes"], capsys)
    assert code == 2 and "--unseen is 'refuse' or 'top'" in err


def test_anonymize_with_a_given_hierarchy_places_new_values_alike_in_memory_and_on_duckdb(tmp_path: Path, capsys):
    later = _year(4, (20, 96), [*REGIONS, "islands"])
    later.to_csv(tmp_path / "later.csv", index=False)
    groups = pd.DataFrame([[r, "north" if r[0] == "n" else "south", "*"] for r in REGIONS])
    groups.to_csv(tmp_path / "region.csv", index=False, header=False)
    bands = pd.DataFrame([[str(a), f"[{a // 10 * 10}-{a // 10 * 10 + 9}]", "*"] for a in range(20, 81)])
    bands.to_csv(tmp_path / "age.csv", index=False, header=False)  # ages 81-95 not listed: placed by the bands
    argv = ["anonymize", tmp_path / "later.csv", "--shield", "age,region", "--role", "dx=sensitive", "--k", "3"]
    argv += ["--hierarchy", f"region={tmp_path / 'region.csv'}", "--hierarchy", f"age={tmp_path / 'age.csv'}"]
    code, _, err = _run([*argv, "--out", tmp_path / "refused.csv"], capsys)
    assert code == 2 and "'islands'" in err and "--unseen top" in err and not (tmp_path / "refused.csv").exists()
    stated = []
    for engine in ([], ["--engine", "duckdb"]):
        code, out, err = _run([*argv, "--unseen", "top", "--json", *engine], capsys)
        assert code in (0, 1), err
        stated.append(json.loads(out[out.index("{") :])["unseen"])
    assert stated[0] == stated[1]
    placed = {u["column"]: u for u in stated[0]}
    assert placed["region"]["records"] == int((later["region"] == "islands").sum())
    assert placed["age"]["placed"] == "band" and placed["age"]["records"] == int((later["age"] > 80).sum())


def test_apply_on_duckdb_places_new_values_as_in_memory(recipe: Path, tmp_path: Path, capsys):
    later = _year(5, (35, 96), [*REGIONS, "islands"])
    later.to_csv(tmp_path / "later.csv", index=False)
    stated, tables = [], []
    for name, engine in (("memory", []), ("duckdb", ["--engine", "duckdb"])):
        out = tmp_path / f"{name}.csv"
        argv = ["apply", recipe, tmp_path / "later.csv", "--unseen", "top", "--out", out, "--json", *engine]
        code, printed, err = _run(argv, capsys)
        assert code in (0, 1), err
        stated.append(json.loads(printed[printed.index("{") :])["unseen"])
        tables.append(pd.read_csv(out, dtype=str).sort_values(["age", "region", "dx"]).reset_index(drop=True))
    assert stated[0] == stated[1] and {u["column"] for u in stated[0]} == {"age", "region"}
    pd.testing.assert_frame_equal(tables[0], tables[1])
