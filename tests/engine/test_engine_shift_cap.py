"""Per-person date shifts and the records-per-person cap on DuckDB (scale.md part 2):
`anonymize --engine duckdb --shift-dates ... --cap-records N` and `apply --engine duckdb` of a
recipe holding those steps release the in-memory table (the same rows and values, the same exit
code and `--json` numbers), with blanks in the date and time columns and ties in the time; a cap
drawn at random, and a cap on Spark, stay refused in one sentence. ENGINE_EXAMPLES sets the
random panels (default 8, about a second of CPU each: panels of at most 6 people, where 8 reach
pseudonyms or not, a time of day or not and each time column; a larger value searches further)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from engine_cases import released_table, same_answer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonlib.__main__ import main
from anonlib.core.dataset import Dataset
from anonlib.core.errors import ParameterError
from anonlib.core.loading import load_table
from anonlib.engine import connect
from anonlib.workflow import ReleaseTarget, WorkingCopy, apply_recipe, engine_replay
from anonlib.workflow.health_steps import CapRecordsStep, PseudonymizeStep, ShiftDatesStep

EXAMPLES = int(os.environ.get("ENGINE_EXAMPLES", "8"))
KEY = bytes(range(32))


def _panel(path: Path, seed: int = 5, people: int = 60) -> pd.DataFrame:
    """1-7 visits per person in shuffled order: a visit date (some blank), the visit day since
    enrolment (some blank, ties), age and sex."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(people):
        age, sex = int(rng.integers(20, 80)), str(rng.choice(["f", "m"]))
        for _ in range(int(rng.integers(1, 8))):
            day = int(rng.integers(0, 40))
            visit = (pd.Timestamp("2019-03-01") + pd.Timedelta(days=day)).strftime("%Y-%m-%d")
            rows.append({"pid": f"P{p:03d}", "visit": visit, "day": day, "age": age, "sex": sex})
    frame = pd.DataFrame(rows).sample(frac=1.0, random_state=seed).reset_index(drop=True)
    frame.loc[rng.random(len(frame)) < 0.1, "visit"] = None
    frame.loc[rng.random(len(frame)) < 0.1, "day"] = None
    frame["day"] = frame["day"].astype("Int64")
    frame.to_csv(path, index=False)
    return frame


def _key_file(folder: Path) -> Path:
    path = folder / "project.key"
    path.write_text(KEY.hex() + "\n")
    path.chmod(0o600)
    return path


BASE = ["--shield", "age,sex", "--k", "3", "--max-suppressed", "0.5", "--person", "pid"]


@pytest.mark.parametrize(
    "extra",
    [
        ["--pseudonymize", "pid", "--shift-dates", "visit", "--keep", "visit"],
        ["--shift-dates", "visit,day", "--shift-days", "30", "--keep", "visit,day"],
        ["--pseudonymize", "pid", "--keep", "visit,day", "--cap-records", "2", "--time", "day"],
        ["--keep", "visit", "--cap-records", "3"],  # the file's order
        ["--pseudonymize", "pid", "--shift-dates", "visit", "--keep", "visit", "--cap-records", "2", "--time", "visit"],
        # the shifted date generalized (its hierarchy built on the shifted dates), blanks dropped before the cap
        ["--shield", "age,visit", "--role", "sex=ignore", "--shift-dates", "visit,day", "--keep", "day"]
        + ["--cap-records", "3", "--time", "visit", "--drop-missing"],
    ],
    ids=["shift-pseudonym", "shift-day-offsets", "cap-by-day", "cap-file-order", "shift-and-cap", "shielded-date"],
)
def test_anonymize_on_duckdb_shifts_and_caps_as_in_memory(extra, tmp_path: Path, capsys) -> None:
    frame = _panel(tmp_path / "panel.csv")
    argv = ["anonymize", str(tmp_path / "panel.csv"), *BASE, *extra, "--key-file", str(_key_file(tmp_path))]
    argv += ["--recipe", str(tmp_path / "recipe.json")]
    stated, _ = same_answer(argv, tmp_path, capsys)
    released = released_table(tmp_path / "engine-out.csv")
    if "--cap-records" in extra:
        cap = int(extra[extra.index("--cap-records") + 1])
        assessed = frame.dropna(subset=["visit"]) if "--drop-missing" in extra else frame  # capped after the drop
        sizes = assessed.groupby("pid").size()
        assert stated["capped_records"] == int((sizes - cap).clip(lower=0).sum()) > 0
        assert stated["capped_people"] == int((sizes > cap).sum())
    if "--shift-dates" in extra:  # every date moved (blanks stay blank), none left as it was read
        assert bool((released["visit"] == "").any()) == ("--drop-missing" not in extra)
        assert not set(released["visit"]) - {""} <= set(frame["visit"].dropna())
    # the engine's recipe applied on the engine releases the same table as in memory
    apply = ["apply", str(tmp_path / "recipe.json"), str(tmp_path / "panel.csv"), "--key-file"]
    apply.append(str(tmp_path / "project.key"))
    assert main([*apply, "--out", str(tmp_path / "a-m.csv")]) == 0
    assert main([*apply, "--out", str(tmp_path / "a-e.csv"), "--engine", "duckdb"]) == 0
    assert "Traceback" not in capsys.readouterr().err
    pd.testing.assert_frame_equal(released_table(tmp_path / "a-e.csv"), released_table(tmp_path / "a-m.csv"))
    pd.testing.assert_frame_equal(released_table(tmp_path / "a-e.csv"), released)


def test_a_package_shifted_and_capped_through_duckdb_verifies_in_memory_and_on_duckdb(tmp_path: Path, capsys) -> None:
    """--package through DuckDB holds the engine's table, byte for byte the in-memory release's;
    verify (in memory, and replaying the recipe's pseudonyms, shift and cap on DuckDB under the key)
    passes it byte for byte."""
    _panel(tmp_path / "panel.csv")
    key = str(_key_file(tmp_path))
    argv = ["anonymize", str(tmp_path / "panel.csv"), *BASE, "--pseudonymize", "pid", "--shift-dates", "visit"]
    argv += ["--keep", "visit", "--cap-records", "2", "--time", "day", "--key-file", key, "--engine", "duckdb"]
    assert main([*argv, "--package", str(tmp_path / "e.zip"), "--out", str(tmp_path / "e.csv")]) == 0
    for engine in ([], ["--engine", "duckdb"]):
        assert main(["verify", str(tmp_path / "e.zip"), str(tmp_path / "panel.csv"), "--key-file", key, *engine]) == 0
    out = capsys.readouterr().out
    assert out.count("all 10 checks passed") == 2 and out.count("gives released.csv byte for byte") == 2
    assert main([*argv[:-2], "--out", str(tmp_path / "m.csv")]) == 0  # in memory: the same bytes
    assert (tmp_path / "m.csv").read_bytes() == (tmp_path / "e.csv").read_bytes()


def test_apply_on_duckdb_with_pseudonyms_and_date_shifts_added_on_the_command_line(tmp_path: Path, capsys) -> None:
    """apply --engine duckdb --person --pseudonymize --shift-dates --keep (steps before the recipe's own,
    as in memory): the in-memory table and --json."""
    _panel(tmp_path / "panel.csv")
    source = str(tmp_path / "panel.csv")
    ignored = ["--role", "sex=ignore", "--role", "visit=ignore", "--role", "day=ignore"]
    made = ["anonymize", source, "--shield", "age", *ignored, "--k", "3", "--person", "pid"]
    assert main([*made, "--max-suppressed", "0.5", "--recipe", str(tmp_path / "r.json")]) == 0
    apply = ["apply", str(tmp_path / "r.json"), source, "--person", "pid", "--pseudonymize", "pid", "--json"]
    apply += ["--shift-dates", "visit,day", "--keep", "visit,day", "--key-file", str(_key_file(tmp_path))]
    capsys.readouterr()
    stated = []
    for out, engine in (("m.csv", []), ("e.csv", ["--engine", "duckdb"])):
        assert main([*apply, "--out", str(tmp_path / out), *engine]) == 0
        stated.append(json.loads(capsys.readouterr().out))
    for statement in stated:
        statement.pop("same_file"), statement.pop("engine", None)
    assert stated[0] == stated[1] and stated[0]["released_records"] > 0
    released = released_table(tmp_path / "e.csv")
    pd.testing.assert_frame_equal(released, released_table(tmp_path / "m.csv"))
    assert list(released.columns) == ["pid", "visit", "day", "age"] and released["pid"].str.len().eq(16).all()


@st.composite
def panels(draw):
    """Small panels: 1-6 people with 1-6 records each, dates (with a time of day or not) and a
    day with blanks and ties, rows in any order; a cap of 1-3, by the day, the date or the file."""
    people = draw(st.integers(1, 6))
    rows = []
    timed = draw(st.booleans())
    for p in range(people):
        for _ in range(draw(st.integers(1, 6))):
            day = draw(st.one_of(st.none(), st.integers(0, 5)))
            visit = draw(st.one_of(st.none(), st.integers(0, 400)))
            text = None
            if visit is not None:
                stamp = pd.Timestamp("1999-12-20") + pd.Timedelta(days=visit, hours=visit % 24 if timed else 0)
                text = stamp.strftime("%Y-%m-%d %H:%M:%S" if timed and visit % 3 else "%Y-%m-%d")
            rows.append({"pid": f"{p:03d}", "visit": text, "day": day, "age": 30 + p % 3})
    order = draw(st.permutations(range(len(rows))))
    frame = pd.DataFrame([rows[i] for i in order])
    frame["day"] = frame["day"].astype("Int64")
    cap = draw(st.integers(1, 3))
    time = draw(st.sampled_from([None, "day", "visit"]))
    return frame, cap, time, draw(st.booleans())


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(case=panels())
def test_random_panels_shifted_and_capped_on_duckdb_equal_in_memory(case, tmp_path: Path) -> None:
    frame, cap, time, pseudonymized = case
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    path = folder / "in.csv"
    frame.to_csv(path, index=False)
    roles = {"pid": "person", "age": "quasi-identifier", "visit": "keep", "day": "keep"}
    loaded = Dataset.from_frame("in.csv", load_table(path).frame, roles)
    copy = WorkingCopy.start(loaded, ReleaseTarget(k=1))
    if pseudonymized:
        copy = copy.apply(PseudonymizeStep.made("pid", KEY), "test")
    copy = copy.apply(ShiftDatesStep.made(["visit", "day"], "pid", KEY, days=20), "test")
    copy = copy.apply(CapRecordsStep.made("pid", cap, time=time), "test")
    recipe = copy.recipe(["pid", "age", "visit", "day"] if pseudonymized else ["age", "visit", "day"])
    expected = apply_recipe(recipe.with_key(KEY), path)
    (folder / "m.csv").write_bytes(expected.csv)
    got = engine_replay.apply_recipe(recipe.with_key(KEY), path, out=folder / "e.csv")
    assert (
        got.released_records
        == expected.check.records
        == len(frame) - int((frame.groupby("pid").size() - cap).clip(lower=0).sum())
    )
    pd.testing.assert_frame_equal(released_table(folder / "e.csv"), released_table(folder / "m.csv"))


@pytest.fixture(scope="module")
def big_file(tmp_path_factory):
    """200,000 records of 20,000 people as CSV and as Parquet, the cap's recipe made on them in memory
    and pandas' first two records per person: made once for both formats."""
    folder = tmp_path_factory.mktemp("big")
    rng = np.random.default_rng(3)
    n = 200_000
    frame = pd.DataFrame({"pid": rng.integers(0, 20_000, n).astype(str), "n": np.arange(n), "age": 30})
    frame.to_csv(folder / "big.csv", index=False)
    frame.to_parquet(folder / "big.parquet", row_group_size=10_000)
    loaded = Dataset.from_frame("big.csv", load_table(folder / "big.csv").frame, {"pid": "person", "n": "keep"})
    recipe = WorkingCopy.start(loaded, ReleaseTarget(k=1)).apply(CapRecordsStep.made("pid", 2), "t").recipe()
    return folder, recipe, frame.groupby("pid").head(2)["n"].sort_values().to_numpy()


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_the_file_order_is_the_scans_on_a_larger_file(suffix, big_file, tmp_path: Path) -> None:
    """Without a time column the first records in the file are kept: on 200,000 records in
    several threads' worth of CSV (or of Parquet row groups), the engine keeps exactly pandas'
    first two per person."""
    folder, recipe, first_two = big_file
    engine_replay.apply_recipe(recipe, folder / f"big{suffix}", out=tmp_path / "e.csv")
    kept = pd.read_csv(tmp_path / "e.csv")["n"].sort_values().to_numpy()
    assert np.array_equal(kept, first_two)


@pytest.mark.parametrize(
    "extra, engine, phrase",
    [
        (["--cap-records", "2", "--cap-order", "random"], "duckdb", "drawn at random ranks every record"),
        (["--cap-records", "2"], "spark", "which Spark does not keep"),
    ],
)
def test_a_cap_drawn_at_random_or_on_spark_stays_refused_in_one_sentence(extra, engine, phrase, tmp_path, capsys):
    _panel(tmp_path / "panel.csv")
    argv = ["anonymize", str(tmp_path / "panel.csv"), *BASE, *extra, "--key-file", str(tmp_path / "new.key")]
    code = main([*argv, "--out", str(tmp_path / "o.csv"), "--engine", engine])
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert code == 2 and len(errors) == 1 and phrase in errors[0] and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["panel.csv"]  # no key file made, nothing written
    recipe = CapRecordsStep.made("pid", 2, order="random", key=KEY)
    with pytest.raises(ParameterError, match="drawn at random"):
        engine_replay.require_queries(type("R", (), {"steps": (type("S", (), {"step": recipe})(),)})(), "duckdb")


def test_the_key_never_reaches_the_engine_and_bad_dates_are_refused_as_in_memory(tmp_path: Path, capsys) -> None:
    """The engine's tables hold persons, offsets and shifted dates, never the key; a partial date
    is the in-memory sentence (exit 2) on both paths."""
    frame = _panel(tmp_path / "panel.csv")
    loaded = Dataset.from_frame("panel.csv", load_table(tmp_path / "panel.csv").frame, {"pid": "person"})
    step = ShiftDatesStep.made(["visit"], "pid", KEY)
    recipe = WorkingCopy.start(loaded, ReleaseTarget(k=1)).apply(step, "t").recipe()
    with connect("duckdb") as duck:
        engine_replay.apply_recipe(recipe, tmp_path / "panel.csv", out=tmp_path / "e.csv", engine=duck)
        names = [r[0] for r in duck.backend.con.execute("SELECT table_name FROM duckdb_tables()").fetchall()]
        held = [duck.backend.con.execute(f'SELECT * FROM "{n}"').fetchall() for n in names]
    assert names and KEY.hex() not in repr(held) and repr(KEY)[2:-1] not in repr(held)
    assert len(pd.read_csv(tmp_path / "e.csv")) == len(frame)
    argv = ["anonymize", str(tmp_path / "panel.csv"), *BASE, "--shift-dates", "visit", "--keep", "visit"]
    argv += ["--key-file", str(_key_file(tmp_path)), "--json"]
    frame = pd.read_csv(tmp_path / "panel.csv", dtype=str)
    frame.loc[0, "visit"] = "2019-03"
    frame.to_csv(tmp_path / "partial.csv", index=False)
    argv[1] = str(tmp_path / "partial.csv")
    codes = [main(argv), main([*argv, "--engine", "duckdb"])]
    err = capsys.readouterr().err
    assert codes == [2, 2] and err.count("not a whole date written as YYYY-MM-DD") == 2 and "Traceback" not in err
