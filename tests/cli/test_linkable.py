"""Linked records on the command line: one panel release with the person column as a pseudonym
(power all and 2), yearly deliveries into one project, and a household file; every number
recounted with pandas on the files written (``linkable.md``)."""

from __future__ import annotations

import io
import itertools
import json
import zipfile
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from anonlib.cli import main
from tests.health_data import history_sharing

QIS = ["job", "married", "educ"]


def panel(seed: int = 0, people: int = 160, years: int = 4) -> pd.DataFrame:
    """One row per person and year: the job changes now and then, marriage once, education never."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(people):
        job = int(rng.integers(1, 7))
        married = 0
        educ = int(rng.integers(9, 17))
        for year in range(1990, 1990 + years):
            if rng.random() < 0.2:
                job = int(rng.integers(1, 7))
            if rng.random() < 0.15:
                married = 1
            rows.append({"pid": f"{p:05d}", "year": year, "job": job, "married": married, "educ": educ})
    return pd.DataFrame(rows)


def _json(capsys) -> dict:
    return json.loads(capsys.readouterr().out)


def _anonymize(source: Path, tmp_path: Path, *extra: str) -> list[str]:
    return [
        "anonymize",
        str(source),
        "--person",
        "pid",
        "--pseudonymize",
        "pid",
        "--key-file",
        str(tmp_path / "k.key"),
        "--shield",
        ",".join(QIS),
        "--k",
        "5",
        "--max-suppressed",
        "0.05",
        "--json",
        *extra,
    ]


def pairs_contained(released: pd.DataFrame) -> int:
    """The fewest histories containing one of a person's sub-multisets of min(2, |history|) rows."""
    rows = released[QIS].astype(str).agg("|".join, axis=1)
    histories = [Counter(r) for _, r in rows.groupby(released["pid"])]
    fewest = None
    for h in histories:
        size = min(2, sum(h.values()))
        for sub in {tuple(s) for s in itertools.combinations(sorted(h.elements()), size)}:
            need = Counter(sub)
            n = sum(all(g[c] >= m for c, m in need.items()) for g in histories)
            fewest = n if fewest is None else min(fewest, n)
    return fewest


def test_a_panel_released_with_pseudonyms_protects_each_whole_history_and_verify_recounts_it(tmp_path, capsys):
    source = tmp_path / "panel.csv"
    frame = panel()
    frame.to_csv(source, index=False)
    whole, pairs = tmp_path / "whole.zip", tmp_path / "pairs.zip"
    assert main(_anonymize(source, tmp_path, "--out", str(tmp_path / "whole.csv"), "--package", str(whole))) == 0
    stated = _json(capsys)
    assert (stated["unit"], stated["power"], stated["met"]) == ("histories", "all", True)
    written = pd.read_csv(tmp_path / "whole.csv", dtype=str)
    # pandas: every released person's whole history is shared by at least 5 people
    assert history_sharing(written, QIS, "pid").min() >= 5 == stated["k_target"]
    assert stated["k"] == history_sharing(written, QIS, "pid").min()
    gone = frame["pid"].nunique() - written["pid"].nunique()
    assert stated["suppressed_persons"] == gone <= 0.05 * frame["pid"].nunique()

    assert main(_anonymize(source, tmp_path, "--power", "2", "--package", str(pairs))) == 0
    two = _json(capsys)
    assert (two["unit"], two["power"]) == ("histories", 2)
    released = pd.read_csv(io.BytesIO(zipfile.ZipFile(pairs).read("released.csv")), dtype=str)
    assert pairs_contained(released) >= 5
    assert two["utility"] <= stated["utility"]  # knowing any 2 records asks less: at least as much is kept

    key = ["--key-file", str(tmp_path / "k.key")]
    assert main(["verify", str(whole), str(source), *key]) == 0
    capsys.readouterr()
    # a table edited so that one person's history is unique: the recount fails it
    archive = zipfile.ZipFile(whole)
    table = pd.read_csv(io.BytesIO(archive.read("released.csv")), dtype=str)
    first = table["pid"].iloc[0]
    table.loc[table["pid"] == first, "married"] = "edited"
    edited = tmp_path / "edited.zip"
    with zipfile.ZipFile(edited, "w") as out:
        for name in archive.namelist():
            data = archive.read(name)
            out.writestr(
                name, table.to_csv(index=False, lineterminator="\r\n").encode() if name == "released.csv" else data
            )
    assert main(["verify", str(edited), "--json"]) == 1
    result = _json(capsys)
    target = [c for c in result["checks"] if c["part"] == "target"]
    assert target and not target[0]["passed"] and "history shared by fewer than 5 people" in target[0]["sentence"]


def test_yearly_deliveries_into_one_project_meet_the_target_on_their_union(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ANONLIB_HOME", str(tmp_path / "home"))
    frame = panel(seed=1, people=200, years=4)
    years = sorted(frame["year"].unique())
    files = {}
    for year in years:
        files[year] = tmp_path / f"y{year}.csv"
        frame[frame["year"] == year].to_csv(files[year], index=False)
    recipe = tmp_path / "recipe.json"
    outs = {y: tmp_path / f"r{y}.csv" for y in years}
    assert (
        main(
            _anonymize(
                files[years[0]], tmp_path, "--out", str(outs[years[0]]), "--recipe", str(recipe), "--project", "wp"
            )
        )
        == 0
    )
    capsys.readouterr()
    refusals = 0
    for year in years[1:]:
        entries_before = len(json.loads(_audit(capsys)))
        code = main(["apply", str(recipe), str(files[year]), "--project", "wp", "--out", str(outs[year])])
        _, err = capsys.readouterr()
        if code == 2:  # the recipe's release would break the target on the cumulative history
            refusals += 1
            assert err.startswith("error: Refused, nothing written") and len(err.strip().splitlines()) == 1
            assert not outs[year].exists() and len(json.loads(_audit(capsys))) == entries_before
            extra = ("--out", str(outs[year]), "--recipe", str(recipe), "--project", "wp")
            assert main(_anonymize(files[year], tmp_path, *extra)) == 0
            stated = _json(capsys)
            assert stated["earlier_deliveries"] == years.index(year) and stated["met"]
        else:
            assert code == 0, err
    assert refusals >= 1
    union = pd.concat([pd.read_csv(outs[y], dtype=str).assign(delivery=str(y)) for y in years])
    sharing = history_sharing(union, ["delivery", *QIS], "pid")
    assert sharing.min() >= 5
    assert len(union) >= len(frame) / 2  # at least half of the person-years released


def _audit(capsys) -> str:
    main(["audit", "--json"])
    return capsys.readouterr().out


def households(seed: int = 2, n: int = 150) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for h in range(n):
        for _ in range(int(rng.integers(1, 5))):
            rows.append(
                {"hhid": f"h{h:04d}", "age": int(rng.choice([20, 30, 40, 60])), "sex": str(rng.choice(["F", "M"]))}
            )
    return pd.DataFrame(rows)


def test_household_risk_equals_the_formula_on_every_household_and_the_release_shares_signatures(tmp_path, capsys):
    frame = households()
    source = tmp_path / "hh.csv"
    frame.to_csv(source, index=False)
    assert main(["profile", str(source), "--qi", "age,sex", "--household", "hhid", "--json"]) == 0
    stated = _json(capsys)
    f = frame.groupby(["age", "sex"])["age"].transform("size")
    risk = (1 - 1 / f).groupby(frame["hhid"]).prod().rsub(1)  # 1 - prod(1 - 1/f_i) over each household's members
    assert stated["household_risk"]["max"] == pytest.approx(risk.max(), abs=1e-12)
    assert stated["household_risk"]["mean"] == pytest.approx(risk.mean(), abs=1e-12)
    assert stated["household_risk"]["above_threshold"] == int((risk > 0.2).sum())
    assert stated["households_unique"] == int((history_sharing(frame, ["age", "sex"], "hhid") == 1).sum())

    out = tmp_path / "released.csv"
    argv = [
        "anonymize",
        str(source),
        "--household",
        "hhid",
        "--pseudonymize",
        "hhid",
        "--key-file",
        str(tmp_path / "k.key"),
    ]
    argv += ["--shield", "age,sex", "--k", "3", "--max-suppressed", "0.2", "--out", str(out), "--json"]
    assert main(argv) == 0
    released = _json(capsys)
    assert (released["unit"], released["met"]) == ("households", True)
    written = pd.read_csv(out, dtype=str)
    assert history_sharing(written, ["age", "sex"], "hhid").min() >= 3  # every signature shared by >= 3 households
    assert released["suppressed_persons"] == frame["hhid"].nunique() - written["hhid"].nunique()
    # every count names its unit: the households as households (persons kept for the contract)
    assert released["households"] == released["persons"] == frame["hhid"].nunique()
    assert released["released_households"] == written["hhid"].nunique()
    assert released["suppressed_households"] == released["suppressed_persons"]
