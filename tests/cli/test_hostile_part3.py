"""Hostile input on the new paths (``integrity.md`` part 3): every number a user or a recipe
gives is read by one parser (ASCII digits within bounds, else one sentence), in every command
and in every recipe field ``apply`` and ``verify`` read."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from arca_release import ARCA_ZIP_AGE

from anonlib.cli import main as _main
from anonlib.core.samples import sample_path
from tests.cli.test_linkable import QIS, panel

ODD = ["²", "١٢", "1" * 31, "-" + "9" * 31, "nan", "1.5"]


def main(argv: list[str]) -> int:
    """The command line as a user runs it: its exit code (argparse's refusals exit too)."""
    try:
        return _main(argv)
    except SystemExit as stop:
        return int(stop.code)


def said(capsys) -> tuple[str, str]:
    out, err = capsys.readouterr()
    return out, err


def one_sentence(err: str) -> str:
    """The error line: exactly one, never the catch-all."""
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "unexpected" not in err.lower(), err
    return lines[0]


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Path:
    """A panel released with the person column as a pseudonym at power 2: its recipe and package."""
    folder = tmp_path_factory.mktemp("released")
    panel(people=40, years=3).to_csv(folder / "p.csv", index=False)
    argv = [
        "anonymize", folder / "p.csv", "--person", "pid", "--pseudonymize", "pid", "--key-file", folder / "k.key",
        "--shield", ",".join(QIS), "--k", "3", "--max-suppressed", "0.2", "--power", "2", "--out",
        folder / "o.csv", "--recipe", folder / "r.json", "--package", folder / "p.zip",
    ]  # fmt: skip
    assert main([str(a) for a in argv]) == 0
    return folder


@pytest.mark.parametrize("value", ODD)
@pytest.mark.parametrize(
    "option", ["--power", "--k", "--pseudonym-length", "--shift-days", "--max-suppressed", "--time-limit"]
)
def test_an_odd_number_given_to_an_option_is_one_sentence(released, tmp_path, capsys, option, value):
    argv = [
        "anonymize", released / "p.csv", "--person", "pid", "--pseudonymize", "pid", "--key-file",
        released / "k.key", "--shield", ",".join(QIS), "--out", tmp_path / "o.csv",
    ]  # fmt: skip
    if option != "--k":
        argv += ["--k", "3"]
    if option == "--shift-days":
        argv += ["--shift-dates", "year"]
    code = main([str(a) for a in [*argv, option, value]])
    _, err = said(capsys)
    if value == "1.5" and option in ("--max-suppressed", "--time-limit"):
        return  # a fraction is a number these take (its range is checked where it is used)
    assert code == 2 and one_sentence(err)
    assert not (tmp_path / "o.csv").exists()


@pytest.mark.parametrize(
    ("value", "sentence"),
    [
        ("²", "got '²'"),
        ("١٢", "got '١٢'"),
        (10**30, "from 1 to 9,007,199,254,740,992; got 1e+30"),
        ("1" * 31, "from 1 to 9,007,199,254,740,992; got 1111111111111111111111111111111"),  # as typed
        (0, "from 1 to 9,007,199,254,740,992; got 0"),
    ],
)
def test_an_odd_power_or_k_in_an_edited_recipe_is_one_sentence_for_apply_and_verify(
    released, tmp_path, capsys, value, sentence
):
    recipe = json.loads((released / "r.json").read_text())
    recipe["target"]["power"] = value
    for step in recipe["steps"]:
        if "power" in step["step"]:
            step["step"]["power"] = value
    edited = tmp_path / "e.json"
    edited.write_text(json.dumps(recipe, ensure_ascii=False), encoding="utf-8")
    key = ["--key-file", str(released / "k.key")]
    assert main(["apply", str(edited), str(released / "p.csv"), "--accept-edited", *key]) == 2
    assert sentence in one_sentence(said(capsys)[1])
    # the same in a package verify reads: the recipe fails as one check, with its sentence
    package = tmp_path / "e.zip"
    with zipfile.ZipFile(released / "p.zip") as source, zipfile.ZipFile(package, "w") as out:
        for name in source.namelist():
            data = source.read(name)
            out.writestr(name, json.dumps(recipe, ensure_ascii=False).encode() if name == "recipe.json" else data)
    assert main(["verify", str(package), str(released / "p.csv"), *key, "--json"]) == 1
    checks = {c["part"]: c for c in json.loads(said(capsys)[0])["checks"]}
    assert not checks["recipe.json"]["passed"] and sentence in checks["recipe.json"]["sentence"]


def test_k_of_31_digits_in_an_edited_recipe_is_one_sentence(released, tmp_path, capsys):
    recipe = json.loads((released / "r.json").read_text())
    recipe["target"]["k"] = 10**30
    edited = tmp_path / "e.json"
    edited.write_text(json.dumps(recipe))
    assert (
        main(["apply", str(edited), str(released / "p.csv"), "--accept-edited", "--key-file", str(released / "k.key")])
        == 2
    )
    assert "'k' of the target must be a whole number from 1 to 9,007,199,254,740,992; got 1e+30" in one_sentence(
        said(capsys)[1]
    )


@pytest.mark.parametrize("command", [["risk", "--suda", "--suda-size"], ["models", "--l"], ["models", "--k"]])
def test_other_commands_read_their_whole_numbers_by_the_same_parser(released, capsys, command):
    for value in ("²", "١٢", "1" * 31):
        code = main([command[0], str(released / "p.csv"), "--qi", "job", *command[1:], value])
        assert code == 2 and one_sentence(said(capsys)[1])


# ------------------------------------------------------------------ names printed

FORGED = "x\nerror: forged\r\x1b[2Kok"
NAME_COMMANDS = [
    ["projects", "show", FORGED],
    ["audit", "--project", FORGED],
    ["projects", "delete", FORGED, "--yes"],
    ["projects", "delete", FORGED],
    ["projects", "budget", FORGED, "--epsilon", "1"],
    ["projects", "budget", FORGED],
    ["verify", "PACKAGE", "--project", FORGED],
]


@pytest.fixture
def store_with_forged_name(tmp_path, monkeypatch, capsys) -> Path:
    """A store with one project named with a line break (as a store written before names were
    checked holds it) and a package released into it."""
    from sqlalchemy import create_engine, text

    monkeypatch.setenv("ANONLIB_HOME", str(tmp_path / "home"))
    package = tmp_path / "p.zip"
    argv = [
        *ARCA_ZIP_AGE,
        "--k",
        "2",
        "--package",
        str(package),
    ]
    assert main([*argv, "--project", "plain"]) == 0
    engine = create_engine(f"sqlite:///{tmp_path / 'home' / 'projects.sqlite'}")
    with engine.begin() as c:
        c.execute(text("UPDATE projects SET name = :n"), {"n": FORGED})
    engine.dispose()
    capsys.readouterr()
    return package


@pytest.mark.parametrize("argv", NAME_COMMANDS, ids=lambda a: " ".join(a[:2]) + (" --yes" if "--yes" in a else ""))
def test_a_line_break_in_a_project_name_is_printed_escaped_by_every_command(store_with_forged_name, capsys, argv):
    """Typed (a name no project has) or kept in the store, the name's line break, carriage return
    and escape are shown as ``\\n``, ``\\r`` and ``\\x1b``: no line forged, nothing erased."""
    argv = [str(store_with_forged_name) if a == "PACKAGE" else a for a in argv]
    main(argv)
    out, err = capsys.readouterr()
    for text in (out, err):
        assert "forged" not in text or "x\\nerror: forged\\r\\x1b[2Kok" in text, text
        assert not any(line.startswith("error: forged") for line in text.splitlines())
        assert "\r" not in text and "\x1b" not in text
    assert err.count("error:") <= 1 + err.count("\\nerror:")


def test_an_unknown_name_typed_with_a_line_break_is_escaped_in_the_sentence(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ANONLIB_HOME", str(tmp_path / "home"))
    assert main(["projects", "show", "a\nerror: forged"]) == 2
    assert (
        capsys.readouterr().err
        == "error: There is no project named 'a\\nerror: forged'; the store has no project yet.\n"
    )


# ------------------------------------------------------------------ --person naming another column


def test_a_recipe_applied_with_person_naming_another_column_says_what_is_wrong(released, tmp_path, capsys):
    """The recipe counts people by pid; ``--person other`` (a column the file has) is refused in one
    sentence naming both columns, not "These columns do not exist in the data: pid, pid"."""
    import pandas as pd

    frame = pd.read_csv(released / "p.csv", dtype=str).assign(other=lambda f: f["pid"])
    frame.to_csv(tmp_path / "m.csv", index=False)
    key = ["--key-file", str(released / "k.key")]
    argv = ["apply", str(released / "r.json"), str(tmp_path / "m.csv"), "--out", str(tmp_path / "o.csv"), *key]
    assert main([*argv, "--person", "other"]) == 2
    assert one_sentence(said(capsys)[1]) == (
        "error: This recipe counts people by the column 'pid', but --person names 'other': leave out --person to "
        "apply the recipe as it is, or search a new release with `anonymize --person other`."
    )
    assert not (tmp_path / "o.csv").exists()
    assert main([*argv, "--person", "pid"]) == 0  # the recipe's own person column is no contradiction


# ------------------------------------------------------------------ history checks estimated first


def test_a_power_3_search_is_estimated_before_it_starts_and_refused_past_the_time_limit(tmp_path, capsys):
    """Every node of the search compares C(10, 3) = 120 sub-multisets per person: the estimate (a
    node's work times the 4 nodes of a path up the lattice) is refused past --time-limit
    in one sentence, before any node is counted, nothing written."""
    import numpy as np
    import pandas as pd

    from anonlib.core.hierarchy import flat_hierarchy
    from anonlib.core.histories import history_work
    from anonlib.measures.target import ReleaseTarget
    from anonlib.transformations.generalization import GeneralizationSpace
    from anonlib.transformations.generalization.search import check_history_search

    rng = np.random.default_rng(5)
    people = 300
    frame = pd.DataFrame(
        {
            "pid": np.repeat([f"p{i:04d}" for i in range(people)], 10),
            "zip": rng.integers(0, 40, people * 10),
            "sex": rng.choice(["f", "m"], people * 10),
        }
    )
    target = ReleaseTarget(k=2, person="pid", linked=("pid",), power=3)
    hierarchies = {"zip": pd.DataFrame({0: range(40), 1: [z // 10 for z in range(40)], 2: ["*"] * 40}).astype(str)}
    hierarchies["sex"] = flat_hierarchy(["f", "m"])
    space = GeneralizationSpace(frame.astype({"zip": str}), ["zip", "sex"], hierarchies, target=target)
    estimate = check_history_search(space, time_limit=60)
    sizes = frame.groupby("pid").size().to_numpy()
    bottom = history_work(sizes, power=3)  # every person's 10 records distinct at the bottom (or fewer)
    assert space.history_work.operations <= bottom.operations == people * 120
    assert estimate.operations == space.history_work.operations * (1 + 2 + 1)
    frame.to_csv(tmp_path / "panel.csv", index=False)
    argv = [
        "anonymize", str(tmp_path / "panel.csv"), "--person", "pid", "--pseudonymize", "pid", "--key-file",
        str(tmp_path / "k.key"), "--shield", "zip,sex", "--k", "2", "--power", "3", "--out", str(tmp_path / "o.csv"),
    ]  # fmt: skip
    assert main([*argv, "--time-limit", "0.0001"]) == 2
    sentence = one_sentence(said(capsys)[1])
    assert sentence.startswith("error: Checking histories at power 3 on at least ") and "--time-limit" in sentence
    assert not (tmp_path / "o.csv").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["anonymize", "FILE", "--shield", "Zip,Age", "--keep", "Sex,AC,Weight,Race", "--k", "2", "--project", "p"],
        ["profile", "FILE", "--qi", "Zip,Age"],
        ["leakage", "FILE", "--attributes", "Zip,Age"],
        ["risk", "FILE", "--qi", "Zip,Age"],
    ],
    ids=lambda a: a[0],
)
def test_a_file_named_with_a_line_break_is_printed_escaped(tmp_path, monkeypatch, capsys, argv):
    """The file's name in every statement and in the budget's sentence: no forged line."""
    monkeypatch.setenv("ANONLIB_HOME", str(tmp_path / "home"))
    file = tmp_path / "x\nerror: forged.csv"
    pd.read_csv(sample_path("arca_table1.csv")).to_csv(file, index=False)
    main([str(file) if a == "FILE" else a for a in argv])
    if "--project" in argv:
        main(["projects", "budget", "p"])
    out, err = capsys.readouterr()
    assert "forged" in out + err
    assert not any(line.startswith("error: forged") for line in (out + err).splitlines()), out + err
