"""People and histories counted on DuckDB equal the in-memory kernel's (``anonlib.core.histories``,
``anonlib.measures.profile``, ``anonlib.measures.linkage``): random panels with blanks, a count
column, and the command line's ``profile --person --engine duckdb``."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonlib import engine as eng
from anonlib.__main__ import main
from anonlib.core.dataset import Dataset
from anonlib.core.equivalence import encode, person_codes
from anonlib.core.errors import ColumnError, ParameterError
from anonlib.core.histories import owners_sharing
from anonlib.engine.owners import class_people, sharing
from anonlib.measures.linkage import linkage_risk
from anonlib.measures.profile import risk_profile


@pytest.fixture(scope="module")
def duck():
    with eng.connect("duckdb", memory_limit="1GB") as engine:
        yield engine


@st.composite
def panels(draw):
    """A panel of 1-30 records of up to 8 people on two quasi-identifiers with blanks, and a count column."""
    n = draw(st.integers(1, 30))
    pid = draw(st.lists(st.sampled_from(["p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8"]), min_size=n, max_size=n))
    age = draw(st.lists(st.one_of(st.none(), st.integers(30, 32)), min_size=n, max_size=n))
    sex = draw(st.lists(st.sampled_from(["f", "m", None]), min_size=n, max_size=n))
    count = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    return pd.DataFrame(
        {"pid": pid, "age": pd.array(age, dtype="Int64"), "sex": pd.array(sex, dtype="string"), "n": count}
    )


def _histogram(values: np.ndarray) -> list[list[int]]:
    values = values[values > 0]
    sizes, many = np.unique(values, return_counts=True)
    return [[int(s), int(c)] for s, c in zip(sizes, many)]


def _in_memory(frame: pd.DataFrame, power) -> list[list[int]]:
    """The kernel's owners sharing each history, as a histogram (owners of no record left out)."""
    table = encode(frame, ["age", "sex"], count="n")
    classes = table.classes()
    codes, n = person_codes(frame["pid"], "pid")
    return _histogram(owners_sharing(classes.ids, classes.n_classes, codes, n, table.weights, power=power))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(panels(), st.sampled_from([None, 1, 2, 3, 5]))
def test_sharing_equals_the_kernel(duck, frame, power):
    table = eng.from_frame(frame, duck).with_roles({"n": "count"})
    assert sharing(table, ["age", "sex"], "pid", power=power).tolist() == _in_memory(frame, power)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(panels(), st.sampled_from(["category", "drop"]))
def test_profile_and_history_in_people_equal_in_memory(duck, frame, missing):
    roles = {"pid": "person", "age": "quasi-identifier", "sex": "quasi-identifier", "n": "count"}
    dataset = Dataset.from_frame("panel", frame, roles).with_missing(missing)
    table = eng.from_frame(frame, duck).with_roles(roles).with_missing(missing)
    assert risk_profile(table) == risk_profile(dataset)
    assert linkage_risk(table, k=3) == linkage_risk(dataset, k=3)


def test_a_worked_panel(duck):
    # a and b were seen at 30/f twice; c once at 30/f and once at 31/m; d's only record weighs 0
    frame = pd.DataFrame(
        {"pid": list("aabbccd"), "age": [30, 30, 30, 30, 30, 31, 31], "sex": list("ffffffm"), "n": [1] * 6 + [0]}
    )
    table = eng.from_frame(frame, duck).with_roles({"n": "count"})
    classes, smallest, records, dropped = class_people(table, ["age", "sex"], "pid")
    assert classes.tolist() == [[1, 1], [3, 1]]  # 30/f holds 3 people, 31/m one
    assert smallest.tolist() == [[1, 1], [3, 2]]  # c's smallest class is 31/m
    assert (records, dropped) == (6, 0)
    assert sharing(table, ["age", "sex"], "pid").tolist() == [[1, 1], [2, 2]]
    assert sharing(table, ["age", "sex"], "pid", power=2).tolist() == [[1, 1], [2, 2]]


def test_a_blank_person_and_too_much_power_are_one_sentence(duck):
    frame = pd.DataFrame({"pid": ["a", None], "age": [30, 31]})
    with pytest.raises(ColumnError, match=r"^The person column 'pid' is blank in 1 record; every record"):
        sharing(eng.from_frame(frame, duck), ["age"], "pid")
    table = eng.from_frame(frame.fillna("b"), duck)
    with pytest.raises(ParameterError, match="counts combinations of at most 5 records; choose --power 5 or less"):
        sharing(table, ["age"], "pid", power=6)


def _run(argv) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(argv)
    return code, out.getvalue()


def test_profile_person_on_duckdb_equals_in_memory(tmp_path):
    rng = np.random.default_rng(3)
    n = 400
    frame = pd.DataFrame(
        {
            "pid": [f"p{i}" for i in rng.integers(0, 90, n)],
            "year": rng.integers(2000, 2004, n),
            "city": rng.choice(["x", "y", "z", ""], n),
        }
    )
    path = tmp_path / "panel.csv"
    frame.to_csv(path, index=False)
    argv = ["profile", str(path), "--qi", "year,city", "--person", "pid", "--json"]
    code, memory = _run(argv)
    assert code == 0
    code, duckdb = _run([*argv, "--engine", "duckdb"])
    assert code == 0
    result, expected = json.loads(duckdb), json.loads(memory)
    assert result == expected  # the guessed roles too: read off the engine's first 10^6 rows, here all of them
    assert result["roles"]["pid"] == "person"
    assert result["person"] == "pid" and result["persons"] == frame["pid"].nunique()
    assert sum(result["people_in_histories_below"].values()) > 0


def _panel(rng, n: int, people: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "pid": [f"p{i}" for i in rng.integers(0, people, n)],
            "age": rng.integers(30, 50, n),
            "sex": rng.choice(["f", "m"], n),
            "city": rng.choice(["x", "y", "z", ""], n),
        }
    )


@pytest.mark.parametrize("k", [2, 4])
def test_anonymize_in_people_on_duckdb_equals_in_memory(tmp_path, capsys, k):
    from tests.engine_cases import same_answer

    path = tmp_path / "panel.csv"
    _panel(np.random.default_rng(k), 300, 60).to_csv(path, index=False)
    argv = ["anonymize", str(path), "--shield", "age,sex,city", "--person", "pid", "--k", str(k)]
    memory, engine = same_answer([*argv, "--max-suppressed", "0.3"], tmp_path, capsys)
    # whole people suppressed, searched in people (the unit k, suppressed and the target are stated in); the
    # file withholds the person column, so its verdict is recounted on its records (as verify does)
    assert engine["suppressed_persons"] == memory["suppressed_persons"]
    assert engine["suppressed_persons"] > 0 or k != 2  # k = 2: two people suppressed whole
    assert engine["unit"] == memory["unit"] == "people" and engine["suppressed"] == engine["suppressed_persons"]
    assert f"{engine['released_records']:,} records" in engine["verdict"]  # the file, recounted in records


@pytest.mark.parametrize(
    "argv, sentence",
    [
        (["profile", "{blank}", "--qi", "age", "--person", "pid"], "The person column 'pid' is blank in 1 record;"),
        (["profile", "{blank}", "--qi", "age", "--person", "nosuch"], "--person names the column 'nosuch'"),
        (
            ["anonymize", "{blank}", "--shield", "age", "--k", "2", "--person", "pid", "--out", "{out}"],
            "The person column 'pid' is blank in 1 record;",
        ),
        (
            ["profile", "{blank}", "--qi", "age", "--household", "pid"],
            "Households are counted in memory only for now",
        ),
    ],
)
def test_bad_input_on_duckdb_is_one_sentence_and_nothing_written(tmp_path, capsys, argv, sentence):
    blank = tmp_path / "blank.csv"
    blank.write_text("pid,age\na,30\n,31\nb,32\n")
    out = tmp_path / "out.csv"
    code = main([a.format(blank=blank, out=out) for a in argv] + ["--engine", "duckdb"])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert sentence in err and "Traceback" not in err
    assert len([line for line in err.splitlines() if line.startswith("error:")]) == 1


@pytest.mark.parametrize("power", ["all", "2"])
def test_a_pseudonymized_person_on_duckdb_releases_the_histories_in_memory_releases(tmp_path, capsys, power):
    """--pseudonymize of the person column on DuckDB: the class table's people get their keyed
    pseudonyms in memory, the engine maps the file's values to them; the target counts histories
    and the released table (pseudonyms included) equals the in-memory one as a table."""
    from tests.engine_cases import same_answer

    path = tmp_path / "panel.csv"
    frame = _panel(np.random.default_rng(11), 300, 60)
    frame.to_csv(path, index=False)
    key = tmp_path / "project.key"
    key.write_text("3c" * 32 + "\n")
    key.chmod(0o600)
    argv = ["anonymize", str(path), "--shield", "age,sex", "--person", "pid", "--pseudonymize", "pid"]
    argv += ["--key-file", str(key), "--keep", "city", "--k", "3", "--power", power, "--max-suppressed", "0.5"]
    memory, engine = same_answer(argv, tmp_path, capsys)
    assert engine["unit"] == memory["unit"] == "histories"
    written = pd.read_csv(tmp_path / "engine-out.csv", dtype=str)
    import hashlib
    import hmac

    pseudonyms = {hmac.new(bytes.fromhex("3c" * 32), p.encode(), hashlib.sha256).hexdigest()[:16] for p in frame["pid"]}
    assert set(written["pid"]) <= pseudonyms and not set(written["pid"]) & set(frame["pid"])
    assert engine["released_persons"] == written["pid"].nunique() > 0


def test_a_recipe_with_a_person_pseudonym_replays_on_duckdb_under_its_key(tmp_path, capsys):
    path = tmp_path / "panel.csv"
    _panel(np.random.default_rng(12), 300, 60).to_csv(path, index=False)
    key = tmp_path / "project.key"
    key.write_text("5d" * 32 + "\n")
    key.chmod(0o600)
    argv = ["anonymize", str(path), "--shield", "age,sex", "--person", "pid", "--pseudonymize", "pid", "--keep", "city"]
    argv += ["--key-file", str(key), "--k", "3", "--max-suppressed", "0.5", "--recipe", str(tmp_path / "r.json")]
    assert main([*argv, "--out", str(tmp_path / "memory.csv")]) == 0
    apply = ["apply", str(tmp_path / "r.json"), str(path), "--engine", "duckdb", "--out", str(tmp_path / "engine.csv")]
    assert main(apply) == 2  # the pseudonyms need the key they were made with
    assert "needs the project key" in capsys.readouterr().err
    assert main([*apply, "--key-file", str(key)]) == 0
    tables = [pd.read_csv(tmp_path / f"{name}.csv", dtype=str) for name in ("memory", "engine")]
    tables = [t.sort_values(list(t.columns)).reset_index(drop=True) for t in tables]
    pd.testing.assert_frame_equal(tables[0], tables[1])
    assert tables[0]["pid"].str.fullmatch(r"[0-9a-f]{16}").all()
