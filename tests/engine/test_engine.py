"""The DuckDB engine counts what the in-memory kernel counts, to the last bit: on the
bundled Adult, diabetes and heart files read in place, on Parquet folders and
patterns, and on random tables; bad input gets one sentence."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from engine_cases import engine_recipe, first_records, model_requirements, released_rows
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonlib import engine as eng
from anonlib.__main__ import main
from anonlib.core.dataset import Dataset
from anonlib.core.equivalence import encode, size_histogram
from anonlib.core.errors import ColumnError, DataFileError, EngineError, ParameterError
from anonlib.core.loading import load_table
from anonlib.core.samples import SAMPLES, load_sample
from anonlib.measures.leakage import leakage_table
from anonlib.measures.models import acceptance, model_values
from anonlib.measures.profile import risk_profile
from anonlib.measures.risk import reidentification
from anonlib.workflow import (
    Recipe,
    apply_recipe,
    engine_replay,
)

EQUALITY_SAMPLES = ("adult", "diabetes", "heart_cleveland")
# diabetes's first records, its file otherwise as bundled (gzip, CRLF, '?' for missing cells, the
# same 50 columns): the engine reads every CSV as text (all_varchar, no type sniffing) and decides
# each column's kind from its values, so its reading, counting and writing run the same queries on
# the slice as on the 101,766 records, and the loader reads the same text in memory; the slice still
# has missing cells, unique records and classes failing the models, at a tenth of the records
DIABETES_SLICE = 10_000


@pytest.fixture(scope="module")
def duck():
    with eng.connect("duckdb", memory_limit="1GB") as engine:
        yield engine


@pytest.fixture(scope="module")
def bundled(tmp_path_factory):
    """A bundled sample's file and its dataset (the sample's roles): Adult and heart whole, diabetes's
    first DIABETES_SLICE records written as the bundled file is (``DIABETES_SLICE`` says why)."""
    folder = tmp_path_factory.mktemp("bundled")
    made: dict[Path, Dataset] = {}

    def file_and_dataset(key: str) -> tuple[Path, Dataset]:
        if key != "diabetes":
            return SAMPLES[key].path, load_sample(key)
        path = folder / SAMPLES[key].file
        if path not in made:
            made[path] = first_records(key, DIABETES_SLICE, path)
        return path, made[path]

    return file_and_dataset


class Recipes:
    """A sample's ``engine_recipe`` (made in memory on ``bundled``'s dataset) and its in-memory
    replay on the sample's file, each made once for the tests that apply it."""

    def __init__(self, bundled) -> None:
        self.bundled, self.made, self.replayed = bundled, {}, {}

    def recipe(self, key: str) -> Recipe:
        if key not in self.made:
            self.made[key] = engine_recipe(key, self.bundled(key)[1])
        return self.made[key]

    def in_memory(self, key: str):
        if key not in self.replayed:
            self.replayed[key] = apply_recipe(self.recipe(key), self.bundled(key)[0])
        return self.replayed[key]


@pytest.fixture(scope="module")
def recipes(bundled) -> Recipes:
    return Recipes(bundled)


def source_args(key: str, bundled) -> list[str]:
    """The command line's source: ``--sample key``, or the slice's file with the sample's roles."""
    path, dataset = bundled(key)
    if path == SAMPLES[key].path:
        return ["--sample", key]
    return [str(path), *(f"--role={c}={r.value}" for c, r in dataset.roles.items())]


def cli_json(argv: list[str], capsys) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


# --- equality with the in-memory kernel on the bundled data -----------------------------


@pytest.mark.parametrize("key", EQUALITY_SAMPLES)
def test_profile_json_of_a_bundled_file_read_in_place_equals_in_memory(key, capsys, bundled) -> None:
    """diabetes on its first DIABETES_SLICE records (the engine reads them as it reads them all)."""
    source = source_args(key, bundled)
    in_memory = cli_json(["profile", *source], capsys)
    on_duckdb = cli_json(["profile", *source, "--engine", "duckdb"], capsys)
    assert on_duckdb == in_memory
    assert in_memory["records"] == bundled(key)[1].n_records


@pytest.mark.parametrize("key", EQUALITY_SAMPLES)
def test_leakage_table_of_a_bundled_file_equals_in_memory_bit_for_bit(key, duck, bundled) -> None:
    """diabetes on its first DIABETES_SLICE records (the engine reads them as it reads them all)."""
    path, dataset = bundled(key)
    columns = list(dataset.quasi_identifiers + dataset.sensitive)
    expected = leakage_table(dataset.frame, columns, sizes=(1, 2))
    got = leakage_table(path, columns, sizes=(1, 2), engine=duck)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    assert got["loss"].to_numpy().tobytes() == expected["loss"].to_numpy().tobytes()


def test_leakage_cli_with_missing_rows_dropped_equals_in_memory(capsys) -> None:
    argv = ["leakage", "--sample", "adult", "--attributes", "occupation,native-country,age", "--drop-missing"]
    in_memory = cli_json(argv, capsys)
    on_duckdb = cli_json([*argv, "--engine", "duckdb"], capsys)
    assert on_duckdb == in_memory
    assert in_memory["rows_dropped"] == 2399  # Adult's '?' in occupation or native-country


def test_a_folder_and_a_pattern_of_parquet_parts_count_like_the_whole_table(tmp_path: Path, duck) -> None:
    dataset = load_sample("diabetes")
    columns = list(dataset.quasi_identifiers + dataset.sensitive)
    frame = dataset.frame[columns]
    folder = tmp_path / "encounters"
    (folder / "year=1999").mkdir(parents=True)
    for j, part in enumerate(np.array_split(np.arange(len(frame)), 4)):
        frame.iloc[part].to_parquet(folder / "year=1999" / f"part-{j}.parquet")
    (folder / "_SUCCESS").write_text("")
    expected = risk_profile(dataset)
    assert risk_profile(eng.scan(folder, engine=duck), dataset.quasi_identifiers) == expected
    assert risk_profile(str(folder / "*" / "part-*.parquet"), dataset.quasi_identifiers, engine=duck) == expected


def test_a_dataset_put_on_the_engine_keeps_its_roles_and_missing_policy(duck) -> None:
    dataset = load_sample("arca_table1").with_missing("drop")
    assert risk_profile(dataset, engine=duck) == risk_profile(dataset)
    assert risk_profile(dataset, engine=duck).records == 60  # the count column is summed


# --- the loader's reading rules --------------------------------------------------------


def test_text_is_read_as_the_loader_reads_it(tmp_path: Path, duck) -> None:
    csv = tmp_path / "visits.csv"
    csv.write_text("zip; age ;grp;n\n 0101 ;+30;a;2\n101;30;?;1\n0101;30.0; a ;3\nNA;40;;1\n101;1e1;b;0\n")
    table = eng.scan(csv, engine=duck).with_roles({"zip": "quasi-identifier", "age": "quasi-identifier", "n": "count"})
    frame, _ = table.analysis_frame(["zip", "age", "grp"])
    kinds = {c: str(t) for c, t in frame.schema().items()}
    assert kinds == {"zip": "string", "age": "float64", "grp": "string", "n": "int64"}  # leading zero stays text
    loaded = Dataset.from_frame(
        "visits.csv", load_table(csv).frame, {"zip": "quasi-identifier", "age": "quasi-identifier", "n": "count"}
    )
    assert risk_profile(table) == risk_profile(loaded)
    for qis in (["zip"], ["age"], ["grp"], ["zip", "age", "grp"]):
        assert risk_profile(table, qis) == risk_profile(loaded, qis)
    assert risk_profile(table, ["grp"]).vector == (
        0,
        1,
        0,
        0,
        1,
    )  # 'a' and ' a ' (5 records), '?' and '' missing (2), 'b' has 0


# the engine strips only a value whose first or last character could be stripped, and reads a column
# none of whose values its reading changes as stored: both against the rule written plainly
_EDGES = " \t\n\r\x0b\x0c"
_TEXTS = st.text(
    alphabet=st.sampled_from([*_EDGES, "\x01", "a", "N", "A", "/", "?", "l", "u", "é", "\u00a0"]), max_size=6
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(messy=st.lists(st.one_of(st.none(), _TEXTS), min_size=1, max_size=12), clean=st.booleans())
def test_text_values_read_as_stripped_with_markers_missing(messy, clean, tmp_path_factory, duck) -> None:
    from anonlib.core.loading import MISSING_MARKERS

    def reference(value):
        if value is None:
            return None
        text = value.strip(_EDGES)
        return None if text in MISSING_MARKERS else text

    plain = [f"v{j}" for j in range(len(messy))]  # a column its reading leaves as stored
    parquet = tmp_path_factory.mktemp("texts") / "t.parquet"
    pd.DataFrame({"messy": messy, "plain": plain if clean else messy}, dtype="string").to_parquet(parquet)
    table = eng.scan(parquet, engine=duck)
    read = duck.run(table.raw.select(table.value("messy"), table.value("plain"))).to_pandas()
    assert read["messy"].replace({np.nan: None}).tolist() == [reference(v) for v in messy]
    assert read["plain"].replace({np.nan: None}).tolist() == [reference(v) for v in (plain if clean else messy)]
    assert table._as_stored["plain"] is (clean or all(v is None or reference(v) == v for v in messy))


# 12 tables of up to 40 rows over 7 texts, 5 levels and blanks: each scans a CSV and a Parquet file,
# about a second of CPU; more examples repeat the same few shapes
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(["a", "b", " c", "?", "", "10", "010"]),
            st.one_of(st.none(), st.integers(0, 4)),
            st.integers(0, 3),
        ),
        min_size=1,
        max_size=40,
    )
)
def test_random_tables_through_csv_and_parquet_count_like_the_kernel(rows, tmp_path_factory, duck) -> None:
    folder = tmp_path_factory.mktemp("random")
    frame = pd.DataFrame(rows, columns=["code", "level", "n"]).astype({"level": "Int64"})
    csv, parquet = folder / "t.csv", folder / "t.parquet"
    frame.to_csv(csv, index=False)
    loaded = load_table(csv).frame
    loaded.to_parquet(parquet)
    qis = ["code", "level"]
    kernel_sizes = encode(loaded, qis, count="n").classes().sizes
    for path in (csv, parquet):
        table = eng.scan(path, engine=duck).with_roles(
            {"n": "count", "code": "quasi-identifier", "level": "quasi-identifier"}
        )
        frame_on_engine, _ = table.analysis_frame(qis)
        sizes, classes = eng.size_histogram(frame_on_engine, qis, count="n", engine=duck)
        expected = size_histogram(kernel_sizes)
        assert sizes.tolist() == expected[0].tolist() and classes.tolist() == expected[1].tolist()
        got = leakage_table(table, ["code", "level", ("code", "level")], count="n")
        want = leakage_table(loaded, ["code", "level", ("code", "level")], count="n")
        pd.testing.assert_frame_equal(got, want, check_exact=True)


def test_cell_counts_are_records_per_class_and_sensitive_value(duck) -> None:
    dataset = load_sample("heart_cleveland")
    qis, sensitive = ["age", "sex"], "num"
    cells = eng.cell_counts(eng.from_dataset(dataset, duck).raw, qis, sensitive, engine=duck)
    expected = dataset.frame.groupby([*qis, sensitive], dropna=False).size()
    assert cells[eng.counts.RECORDS].sum() == len(dataset.frame)
    got = cells.set_index([*qis, sensitive])[eng.counts.RECORDS]
    assert {k: int(v) for k, v in got.items()} == {k: int(v) for k, v in expected.items()}


# --- bad input: one sentence ------------------------------------------------------------


def test_a_path_matching_no_file(duck) -> None:
    with pytest.raises(DataFileError, match="No file matches 'nowhere/\\*.parquet'"):
        eng.scan("nowhere/*.parquet", engine=duck)


def test_a_parquet_schema_without_the_named_columns(tmp_path: Path, duck) -> None:
    pd.DataFrame({"age": [1, 2]}).to_parquet(tmp_path / "p.parquet")
    with pytest.raises(ColumnError, match="These columns are not in .*: zip, sex. Its columns: age."):
        risk_profile(tmp_path / "p.parquet", ["age", "zip", "sex"], engine=duck)


def test_an_engine_error_is_one_sentence(tmp_path: Path, duck) -> None:
    bad = tmp_path / "broken.parquet"
    bad.write_bytes(b"PAR1 this is not a parquet file PAR1")
    with pytest.raises(EngineError) as caught:
        risk_profile(eng.scan(bad, engine=duck), ["age"])
    message = str(caught.value)
    assert message.startswith("The duckdb engine could not run the query:") and "\n" not in message


def test_a_count_column_that_is_not_whole_numbers(tmp_path: Path, duck) -> None:
    pd.DataFrame({"age": [1, 2], "n": [1.5, 2.0]}).to_parquet(tmp_path / "p.parquet")
    table = eng.scan(tmp_path / "p.parquet", engine=duck).with_roles({"n": "count", "age": "quasi-identifier"})
    with pytest.raises(ColumnError, match="whole numbers of 0 or more; found 1.5"):
        risk_profile(table)


def test_unknown_engine_and_stray_master() -> None:
    with pytest.raises(ParameterError, match="'oracle' is not an engine"):
        eng.connect("oracle")
    with pytest.raises(ParameterError, match="only applies to --engine spark"):
        eng.connect("duckdb", master="local[1]")
    with pytest.raises(ParameterError, match="Give a table"):
        risk_profile([1, 2, 3], ["a"])


@pytest.mark.parametrize(
    "argv, phrase",
    [
        (["profile", "missing-folder/*.parquet", "--engine", "duckdb"], "No file matches"),
        (["profile", "--sample", "adult", "--qi", "age,zip", "--engine", "duckdb"], "not in Adult"),
        (["leakage", "--sample", "adult", "--spark-master", "local[1]"], "add --engine spark"),
        (["profile", "--engine", "duckdb"], "Give a file, folder or pattern"),
    ],
)
def test_cli_errors_are_one_sentence_and_exit_2(argv, phrase, capsys) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert phrase in err and err.count("\n") == 1 and "Traceback" not in err


def test_the_spill_folder_is_removed_on_close() -> None:
    engine = eng.connect("duckdb")
    folder = Path(engine._temp_directory)
    assert folder.is_dir()
    engine.close()
    assert not folder.exists()


# --- privacy models and re-identification risk --------------------------------------------


@pytest.mark.parametrize("key", EQUALITY_SAMPLES)
def test_models_and_acceptance_of_a_bundled_file_equal_in_memory(key, duck, bundled) -> None:
    """diabetes on its first DIABETES_SLICE records (the engine reads them as it reads them all)."""
    path, dataset = bundled(key)
    qis = list(dataset.quasi_identifiers[:3])
    frame, _ = dataset.analysis_frame(qis + list(dataset.sensitive))
    for sensitive in dataset.sensitive:
        assert model_values(path, qis, sensitive, engine=duck) == model_values(frame, qis, sensitive)
    requirements = model_requirements(dataset)
    expected = acceptance(frame, qis, k=3, requirements=requirements, max_suppressed=0.1)
    got = acceptance(eng.scan(path, engine=duck), qis, k=3, requirements=requirements, max_suppressed=0.1)
    assert got == expected and expected.suppressed_records > 0


@pytest.mark.parametrize("key", EQUALITY_SAMPLES)
def test_models_cli_json_equals_in_memory(key, capsys, bundled) -> None:
    """diabetes on its first DIABETES_SLICE records (the engine reads them as it reads them all)."""
    dataset = bundled(key)[1]
    argv = [
        "models",
        *source_args(key, bundled),
        "--k",
        "2",
        "--max-suppressed",
        "0.2",
        "--require",
        f"distinct_l:{dataset.sensitive[0]}=2",
        "--require",
        f"entropy_l:{dataset.sensitive[-1]}=1.5",
        "--json",
    ]
    assert main(argv) in (0, 1)
    in_memory = json.loads(capsys.readouterr().out)
    assert main([*argv, "--engine", "duckdb"]) in (0, 1)
    assert json.loads(capsys.readouterr().out) == in_memory


def test_reidentification_with_and_without_a_population_equals_in_memory(duck, capsys, bundled) -> None:
    """The command line's on diabetes's first DIABETES_SLICE records (the engine reads them as it
    reads them all)."""
    dataset = load_sample("adult")
    qis = ["age", "sex", "race"]
    frame, _ = dataset.analysis_frame(qis)
    population = frame.groupby(qis, dropna=False).size().mul(20).rename("people").reset_index()
    for options in ({"sampling_fraction": 0.05}, {"population": population, "population_count": "people"}):
        expected = reidentification(frame, qis, **options)
        assert reidentification(SAMPLES["adult"].path, qis, engine=duck, **options) == expected
    argv = ["risk", *source_args("diabetes", bundled), "--sampling-fraction", "0.1", "--drop-missing", "--json"]
    assert main(argv) == 0
    in_memory = json.loads(capsys.readouterr().out)
    assert main([*argv, "--engine", "duckdb"]) == 0
    on_duckdb = json.loads(capsys.readouterr().out)
    flagged = in_memory.pop("hipaa_identifiers")  # on an engine only column names are checked
    assert all(f in flagged for f in on_duckdb.pop("hipaa_identifiers"))
    assert on_duckdb == in_memory and in_memory["rows_dropped"] > 0


# --- recipes applied on the engine ---------------------------------------------------------


@pytest.mark.parametrize("key", EQUALITY_SAMPLES)
def test_a_recipe_applied_on_duckdb_releases_the_in_memory_table(key, tmp_path: Path, duck, bundled, recipes) -> None:
    """diabetes on its first DIABETES_SLICE records, the recipe made on them (the engine reads,
    generalizes, suppresses and writes them as it does them all)."""
    path = bundled(key)[0]
    recipe, expected = recipes.recipe(key), recipes.in_memory(key)
    got = engine_replay.apply_recipe(recipe, path, out=tmp_path / "released.csv", engine=duck)
    assert got.check == expected.check and got.check.suppressed_records > 0
    assert got.released_records == len(expected.table)
    pd.testing.assert_frame_equal(released_rows(tmp_path / "released.csv"), released_rows(expected.csv))
    if key != "adult":  # Parquet out once (the recipe's replay is the CSV's; diabetes took 10 s more)
        return
    engine_replay.apply_recipe(recipe, path, out=tmp_path / "released.parquet", engine=duck)
    parquet = pd.read_parquet(tmp_path / "released.parquet")
    assert len(parquet) == len(expected.table) and list(parquet.columns) == list(expected.table.columns)


def test_an_engine_failing_in_a_step_is_said_as_the_engine_s_failure(tmp_path: Path, duck, recipes, monkeypatch):
    """A query of a step the engine cannot run (Spark at 10^7 records: "Exception thrown in
    awaitResult") is named with its step as the engine's failure, not as a file the step does not fit."""
    from anonlib.core.errors import EngineError

    def fails(*args, **kwargs):
        raise EngineError("The duckdb engine could not run the query: out of memory.")

    monkeypatch.setattr(engine_replay, "_map_values", fails)
    with pytest.raises(EngineError) as failed:
        engine_replay.apply_recipe(recipes.recipe("adult"), SAMPLES["adult"].path, out=tmp_path / "r.csv", engine=duck)
    message = str(failed.value)
    assert (
        message.startswith("Step 1 (")
        and "stopped: The duckdb engine could not run the query: out of memory." in message
    )
    assert "does not fit" not in message and not (tmp_path / "r.csv").exists()


def test_apply_cli_on_duckdb_reports_what_in_memory_reports(tmp_path: Path, capsys, recipes) -> None:
    recipe_file = tmp_path / "recipe.json"
    recipe_file.write_text(recipes.recipe("adult").dumps())  # engine_recipe("adult"): Adult whole, as bundled
    argv = ["apply", str(recipe_file), str(SAMPLES["adult"].path), "--json"]
    assert main([*argv, "--out", str(tmp_path / "memory.csv")]) == 0
    in_memory = json.loads(capsys.readouterr().out)  # the JSON alone; "written" on standard error
    assert main([*argv, "--out", str(tmp_path / "engine.csv"), "--engine", "duckdb"]) == 0
    on_duckdb = json.loads(capsys.readouterr().out)  # the JSON alone; "written" on standard error
    for volatile in ("same_file", "reproduces_release", "engine"):
        in_memory.pop(volatile, None), on_duckdb.pop(volatile, None)
    assert on_duckdb == in_memory
    pd.testing.assert_frame_equal(released_rows(tmp_path / "engine.csv"), released_rows(tmp_path / "memory.csv"))


def test_a_recipe_on_a_file_of_another_layout_is_one_sentence(tmp_path: Path, duck, recipes) -> None:
    pd.DataFrame({"age": [1, 2]}).to_parquet(tmp_path / "other.parquet")
    with pytest.raises(ColumnError, match="This file lacks .*which the recipe needs"):
        engine_replay.apply_recipe(recipes.recipe("heart_cleveland"), tmp_path / "other.parquet", engine=duck)
