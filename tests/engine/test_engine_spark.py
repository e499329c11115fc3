"""Spark (local mode, one session for this module, small data) counts what the in-memory
kernel counts: profile JSON, leakage, models, acceptance and a recipe's release on a slice of
Adult and on heart; counts in people, histories (power all and 2) and households, and the
optimal search in those units, equal the kernel's on random panels with blanks (hypothesis), and
the search in people with every node counted by Spark finds the in-memory node; it
writes a released CSV byte for byte as in memory (a file split into many partitions too), and a
package with a history target that ``verify`` passes; without Java, and on engine errors, the
user reads one sentence."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonlib import engine as eng
from anonlib.__main__ import main
from anonlib.core.dataset import Dataset
from anonlib.core.errors import ColumnError, EngineError, NoSolutionError
from anonlib.core.hierarchy import flat_hierarchy, interval_hierarchy
from anonlib.core.loading import load_table
from anonlib.core.samples import SAMPLES, load_sample
from anonlib.measures.leakage import leakage_table
from anonlib.measures.linkage import household_from_counts, linkage_risk
from anonlib.measures.models import acceptance, model_values
from anonlib.measures.profile import risk_profile
from anonlib.measures.target import ReleaseTarget
from anonlib.transformations.generalization import release_search
from anonlib.workflow import apply_recipe, engine_replay

ROOT = Path(__file__).resolve().parents[2]

pytest.importorskip("pyspark", reason="the Spark engine is the optional [spark] extra")
if not eng.java_available():  # .ci/run installs Java 17; a developer machine may lack it
    pytest.skip("Spark needs Java 17", allow_module_level=True)


from engine_cases import (  # noqa: E402
    QIS,
    engine_recipe,
    first_records,
    household_files,
    kernel_sharing,
    model_requirements,
    people_panel,
    released_table,
    same_answer,
)

# the CLI, model, recipe and anonymize tests read Adult's first 4,000 records (of 32,561) on Spark,
# cut from the bundled file as it is (gzip CSV, '?' for missing): the same code paths as all of
# Adult at an eighth of the records (Spark's cost here is per query, the in-memory side's per
# record); the heart data is read in place and with its missing values dropped below; all of
# Adult and the 101,766 diabetes records go through the same engine code in DuckDB's tests
# (tests/engine/test_engine.py)
ADULT_RECORDS = 4000


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    """The process's Spark session in local mode (the CLI's default master, so CLI calls share it),
    its shuffle and spill blocks in a folder of the test's (SPARK_LOCAL_DIRS, read when Java starts)."""
    os.environ.setdefault("SPARK_LOCAL_DIRS", str(tmp_path_factory.mktemp("spark-local")))
    engine = eng.connect("spark", master=eng.DEFAULT_SPARK_MASTER)
    # one partition after a shuffle: the tests' tables are small, and each partition is a task
    # Spark schedules (with the engine's 8, heart's profile and leakage queries took ~40% more CPU); the test of
    # a file split into many partitions sets several
    engine.backend._session.conf.set("spark.sql.shuffle.partitions", "1")
    return engine


class Slice(NamedTuple):
    csv: Path  # gzip CSV, the bundled file's first lines byte for byte
    parquet: Path  # the analysed columns
    dataset: Dataset  # the CSV read in memory, with the sample's roles


@pytest.fixture(scope="module")
def adult(tmp_path_factory) -> Slice:
    """Adult's first ``ADULT_RECORDS`` records as a gzip CSV and as Parquet, and in memory."""
    folder = tmp_path_factory.mktemp("adult")
    csv = folder / "adult.csv.gz"
    dataset = first_records("adult", ADULT_RECORDS, csv, title="Adult, first records")
    parquet = folder / "adult.parquet"
    dataset.frame[list(dataset.quasi_identifiers + dataset.sensitive)].to_parquet(parquet)
    return Slice(csv, parquet, dataset)


def equal_to_in_memory(dataset, source, spark) -> None:
    """Profile and leakage (single quasi-identifiers and the pair of the first two) equal the kernel's."""
    qis = list(dataset.quasi_identifiers)
    assert risk_profile(source, qis, engine=spark) == risk_profile(dataset)
    columns = [*qis, *dataset.sensitive, tuple(qis[:2])]
    got = leakage_table(source, columns, engine=spark)
    pd.testing.assert_frame_equal(got, leakage_table(dataset.frame, columns), check_exact=True)


def test_profile_and_leakage_of_adult_as_parquet_equal_in_memory(spark, adult) -> None:
    equal_to_in_memory(adult.dataset, adult.parquet, spark)


def test_profile_and_leakage_of_a_bundled_csv_read_in_place_equal_in_memory(spark) -> None:
    equal_to_in_memory(load_sample("heart_cleveland"), SAMPLES["heart_cleveland"].path, spark)


def test_missing_rows_dropped_and_a_count_column_on_spark(spark) -> None:
    arca = load_sample("arca_table1").with_missing("drop")
    assert risk_profile(arca, engine=spark) == risk_profile(arca)  # the #Rec. column is summed
    heart = load_sample("heart_cleveland").with_missing("drop")
    scanned = eng.scan(SAMPLES["heart_cleveland"].path, engine=spark, missing="drop")
    on_spark = risk_profile(scanned, ["age", "ca"])
    assert on_spark == risk_profile(heart, ["age", "ca"]) and on_spark.rows_dropped == 4  # '?' in ca


def test_an_engine_error_is_one_sentence_without_java_frames(tmp_path: Path, spark, capfd) -> None:
    bad = tmp_path / "broken.parquet"
    bad.write_bytes(b"PAR1 this is not a parquet file PAR1")
    with pytest.raises(EngineError) as caught:
        risk_profile(eng.scan(bad, engine=spark), ["age"])
    message = str(caught.value)
    assert message.startswith("The spark engine could not run the query:") and "\n" not in message
    assert "at org.apache" not in message and len(message) < 400
    printed = capfd.readouterr()
    assert "at org.apache" not in printed.out + printed.err and "WARN" not in printed.err


def test_a_second_master_in_one_process_is_refused(spark) -> None:
    with pytest.raises(EngineError, match="already runs Spark on 'local\\[\\*\\]'"):
        eng.connect("spark", master="local[1]")


def test_the_local_driver_has_a_quarter_of_memory_and_keeps_checkpoints_serialized(spark) -> None:
    """In local mode the tasks and the search's checkpoints live in the driver's Java heap: at 10^7
    records a 2 GB heap holding each checkpointed row as a Java object ran out (bench/NOTES.md)."""
    from anonlib.engine.backends import quarter_of_memory
    from anonlib.engine.owners import computed_once, release

    context = spark.backend._session.sparkContext
    heap = context._jvm.java.lang.Runtime.getRuntime().maxMemory() / 2**20  # what -Xmx gave Java, in MB
    assert 0.9 * quarter_of_memory() <= heap <= quarter_of_memory()

    def stored():  # the RDDs Spark keeps, by id: their storage levels
        return {int(i): rdd.getStorageLevel() for i, rdd in context._jsc.getPersistentRDDs().items()}

    before = stored()
    table = eng.from_frame(pd.DataFrame({"pid": np.arange(300) % 70, "age": np.arange(300) % 9}), spark)
    kept = computed_once(table, table.raw.group_by("pid").aggregate(n=table.raw.count()))
    try:
        assert int(spark.value(kept.n.sum())) == 300
        (level,) = [level for rdd, level in stored().items() if rdd not in before]
        assert level.useMemory() and level.useDisk() and not level.deserialized()
    finally:
        release(table, kept)
    assert stored().keys() == before.keys()  # given back


def test_without_java_the_cli_says_so_in_one_sentence(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "PYSPARK_GATEWAY_PORT")}
    env["PATH"] = str(tmp_path)  # no java on it
    done = subprocess.run(
        [sys.executable, "-m", "anonlib", "profile", "--sample", "heart_cleveland", "--engine", "spark"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error: Spark needs Java 17") and done.stderr.count("\n") == 1


def test_profile_json_from_the_cli_on_spark_equals_in_memory(spark, adult, capsys) -> None:
    argv = ["profile", str(adult.csv), "--qi", ",".join(adult.dataset.quasi_identifiers), "--json"]
    assert main(argv) == 0
    in_memory = json.loads(capsys.readouterr().out)
    assert main([*argv, "--engine", "spark"]) == 0  # the CLI's connect() returns this module's session
    assert json.loads(capsys.readouterr().out) == in_memory
    assert in_memory["records"] == ADULT_RECORDS


def test_models_and_acceptance_on_spark_equal_in_memory(spark, adult) -> None:
    dataset = adult.dataset
    qis = list(dataset.quasi_identifiers[:3])
    frame, _ = dataset.analysis_frame(qis + list(dataset.sensitive))
    source = eng.scan(adult.parquet, engine=spark)
    for sensitive in dataset.sensitive:
        assert model_values(source, qis, sensitive) == model_values(frame, qis, sensitive)
    requirements = model_requirements(dataset)
    expected = acceptance(frame, qis, k=3, requirements=requirements, max_suppressed=0.1)
    assert acceptance(source, qis, k=3, requirements=requirements, max_suppressed=0.1) == expected


def test_a_recipe_applied_on_spark_writes_the_in_memory_bytes(tmp_path: Path, spark, adult) -> None:
    recipe = engine_recipe("adult", adult.dataset)
    expected = apply_recipe(recipe, adult.csv)
    got = engine_replay.apply_recipe(recipe, adult.csv, out=tmp_path / "released.csv", engine=spark)
    assert got.check == expected.check and got.released_records == len(expected.table)
    assert got.in_source_order and (tmp_path / "released.csv").read_bytes() == expected.csv
    assert sorted(p.name for p in tmp_path.iterdir()) == ["released.csv"]  # the part files removed


def test_a_csv_split_into_many_partitions_is_written_in_the_files_order(tmp_path: Path, spark) -> None:
    """Spark reads the file in 16 KB splits (many partitions): the released CSV still has the
    in-memory bytes (records in the file's order, rows merged under a count column at their first
    record, decimals in Python's form, text quoted and neutralised, blanks)."""
    from anonlib.core.dataset import Dataset
    from anonlib.workflow import ReleaseTarget, WorkingCopy
    from anonlib.workflow.steps import BandsStep, SuppressionStep

    rng = np.random.default_rng(23)
    n = 3000
    source = tmp_path / "visits.csv"
    pd.DataFrame(
        {
            "age": pd.array(rng.choice([*range(20, 70), None], n), dtype="Int64"),
            "sex": rng.choice(["f", "m", None], n),
            "ward": rng.choice(["north", "south, east", 'the "annex"', "=cmd", "", "-2"], n),
            "dose": rng.choice([0.1, 2.5, 1e16, 1e-05, 3.0, 123456.789, np.nan], n),
            "n": rng.integers(0, 3, n),
        }
    ).to_csv(source, index=False)
    roles = {"age": "quasi-identifier", "sex": "quasi-identifier", "ward": "keep", "dose": "keep", "n": "count"}
    loaded = Dataset.from_frame("visits.csv", load_table(source).frame, roles)
    target = ReleaseTarget(k=3, max_suppressed=1.0)
    start = WorkingCopy.start(loaded, target).apply(BandsStep("age", 10, 0, 20, 70, True), "x")
    recipe = start.apply(SuppressionStep.from_target(target, start.current), "x").recipe()
    expected = apply_recipe(recipe, source)
    session = spark.backend._session
    session.conf.set("spark.sql.files.maxPartitionBytes", "16384")
    session.conf.set("spark.sql.shuffle.partitions", "2")  # and each shuffle's output in two
    try:
        numbered = spark.backend.compile(eng.scan(source, engine=spark).numbered())
        assert session.sql(numbered).rdd.getNumPartitions() >= 4
        got = engine_replay.apply_recipe(recipe, source, out=tmp_path / "released.csv", engine=spark)
    finally:
        session.conf.unset("spark.sql.files.maxPartitionBytes")
        session.conf.set("spark.sql.shuffle.partitions", "1")
    assert got.check == expected.check and expected.csv.count(b"\r\n") > 100
    assert (tmp_path / "released.csv").read_bytes() == expected.csv


def test_anonymize_on_spark_equals_in_memory(tmp_path: Path, spark, adult, capsys) -> None:
    """The optimal search on Spark's class table, the release written by Spark and measured as
    written: the in-memory command's levels, released rows, loss and exit code."""
    argv = [
        "anonymize",
        str(adult.parquet),
        "--shield",
        "age,sex,race,native-country",
        "--keep",
        "education,marital-status,occupation",  # released unchanged by decision
        "--k",
        "5",
        "--max-suppressed",
        "0.01",
    ]
    stated, _ = same_answer(argv, tmp_path, capsys, engine="spark")
    assert stated["levels"] == {"age": 2, "sex": 0, "race": 1, "native-country": 2}
    assert stated["met"] is True and stated["suppressed"] == 30
    not_met = tmp_path / "t.parquet"
    pd.DataFrame(
        {
            "q0": list("aaaaaaaaabcba"),
            "dx": ["flu", "hiv", "flu", "flu", "flu", "none", "none", "none", "none", "flu", "flu", "hiv", "none"],
        }
    ).to_parquet(not_met)
    stated, _ = same_answer(
        [
            "anonymize",
            str(not_met),
            "--shield",
            "q0",
            "--k",
            "1",
            "--require",
            "t_closeness:dx=0.4",
            "--max-suppressed",
            "0.1",
            "--method",
            "iab",
        ],
        tmp_path,
        capsys,
        engine="spark",
    )
    # every search measures 0.4-closeness on the records it releases: IAB's release meets it (engine and memory)
    assert stated["met"] is True and stated["failing_records"] == 0


def test_people_and_histories_on_spark_equal_in_memory(spark):
    # a panel with blanks and a count column: class sizes in people, whole histories and power 2
    from anonlib.core.dataset import Dataset
    from anonlib.engine.owners import sharing
    from anonlib.measures.linkage import linkage_risk
    from anonlib.measures.power import risk_by_power

    frame = pd.DataFrame(
        {
            "pid": list("aabbccddee"),
            "age": pd.array([30, 30, 30, 30, None, 31, 31, 31, 30, 30], dtype="Int64"),
            "sex": pd.array(list("ffffmmmmf") + [None], dtype="string"),
            "n": [1, 2, 1, 2, 1, 1, 1, 1, 1, 0],
        }
    )
    roles = {"pid": "person", "age": "quasi-identifier", "sex": "quasi-identifier", "n": "count"}
    dataset = Dataset.from_frame("panel", frame, roles)
    table = eng.from_frame(frame, spark).with_roles(roles)
    assert risk_profile(table) == risk_profile(dataset)
    assert linkage_risk(table, k=3) == linkage_risk(dataset, k=3)
    (power2,) = risk_by_power(table, ["age", "sex"], "pid", k=3, powers=(2,))
    assert power2 == risk_by_power(frame, ["age", "sex"], "pid", k=3, count="n", powers=(2,))[0]
    # a and b alike; c, d and e (its row of 0 records is no record) alone
    assert sharing(table, ["age", "sex"], "pid").tolist() == [[1, 3], [2, 2]]


# --- random panels with blanks (engine_cases.household_files, as on DuckDB) -------------------------

OWNER_ROLES = {"hh": "household", "pid": "person", "age": "quasi-identifier", "sex": "quasi-identifier", "n": "count"}
# Spark takes about a second of CPU per query here: a few files per test (derandomized, so every run
# and CI see the same ones), all of a file's counts made on its one table. Each file's counts are
# some ten queries (about 10 CPU-s: power 2 alone 4), the optimum's one (about 2 CPU-s with the searches)
FEW = {"deadline": None, "derandomize": True, "database": None}


# 3 files (derandomized: one record; 30 with a blank household, refused in the same sentence; 11
# records with blanks): a 4th was another file of the third's shape (6 records, blanks, missing
# values a category) at 11 CPU-s. The fixed panels below count the same on Spark: people, histories
# and power 2 (test_people_and_histories_on_spark_equal_in_memory), households with both policies
# for missing values (test_households_on_spark_equal_in_memory); DuckDB counts 15 such files
# (test_engine_owners).
@settings(max_examples=3, **FEW)
@given(household_files(), st.sampled_from(["category", "drop"]))
def test_people_histories_and_households_on_spark_equal_the_kernel(spark, frame, missing) -> None:
    """Class sizes in people and each person's smallest class, the people sharing their whole
    history and any 2 of their records, the households sharing their members' rows and their
    compositions (sdcMicro's risk): Spark's counts are the in-memory kernel's."""
    from anonlib.engine.owners import household_counts, sharing

    table = eng.from_frame(frame, spark).with_roles(OWNER_ROLES).with_missing(missing)
    try:
        dataset = Dataset.from_frame("households", frame, OWNER_ROLES).with_missing(missing)
    except ColumnError as refused:  # a blank household: the same sentence
        with pytest.raises(ColumnError) as on_spark:
            linkage_risk(table)
        assert str(on_spark.value) == str(refused)
        return
    assert risk_profile(table) == risk_profile(dataset)  # in people: k, the vector, people at risk
    kept = dataset.analysis_frame(QIS, person=True)[0]
    for power in (None, 2):
        assert sharing(table, QIS, "pid", power=power).tolist() == kernel_sharing(kept, "pid", power)
    households = household_counts(table, QIS, "hh")
    assert households.shared[:, :2].tolist() == kernel_sharing(kept, "hh", None)
    assert household_from_counts(households) == linkage_risk(dataset).households  # the risk to the last bit


HIERARCHIES = {"age": interval_hierarchy(range(30, 33), [[(30, 31), (32, 32)]], top=True), "sex": flat_hierarchy("fm")}


@settings(max_examples=5, **FEW)
@given(household_files(), st.sampled_from(["category", "drop"]))
def test_the_optimum_in_people_histories_and_households_on_spark_equals_in_memory(spark, frame, missing) -> None:
    """The optimal search in people, histories (power all and 2) and households, for k 2 and 3 and
    30% or all suppressed, on the class table Spark counts per household and person (the table
    ``engine_search.anonymize`` searches): the levels, loss and people suppressed of the search on
    the records, or its sentence when nothing meets the target. A row standing for no record is no
    one's (left out on the records too: the in-memory search still counts its person)."""
    frame = frame.assign(hh=frame["hh"].fillna("h1"))
    table = eng.from_frame(frame, spark).with_roles(OWNER_ROLES).with_missing(missing)
    dataset = Dataset.from_frame("households", frame, OWNER_ROLES).with_missing(missing)
    records, dropped = dataset.assessed_frame(QIS, person=True)
    records = records[records["n"] != 0]
    classes, on_spark = eng.summary_frame(table, ["hh", "pid", *QIS], complete=QIS)
    assert on_spark == dropped
    if records.empty:
        assert classes.empty
        return
    units = (([], None), (["pid"], None), (["pid"], 2), (["hh"], None))  # people, histories, households
    for (released, power), k, limit in itertools.product(units, (2, 3), (0.3, 1.0)):
        target = ReleaseTarget(k, max_suppressed=limit, power=power).in_unit_of(dataset, released=released)
        try:
            expected = release_search(records, QIS, HIERARCHIES, target=target, count="n")
        except NoSolutionError as refused:
            with pytest.raises(NoSolutionError) as none_on_spark:
                release_search(classes, QIS, HIERARCHIES, target=target, count=eng.WEIGHT)
            assert str(none_on_spark.value) == str(refused)
            continue
        got = release_search(classes, QIS, HIERARCHIES, target=target, count=eng.WEIGHT)
        assert (got.target.unit, got.levels) == (expected.target.unit, expected.levels)
        assert got.utility == pytest.approx(expected.utility, abs=1e-12)
        assert (got.persons, got.suppressed_persons) == (expected.persons, expected.suppressed_persons)
        assert got.suppressed == expected.suppressed


@pytest.mark.parametrize(
    "target",
    [
        ReleaseTarget(4, max_suppressed=0.3, person="pid"),
        ReleaseTarget(2, max_suppressed=0.3, person="pid", linked=("pid",)),
        ReleaseTarget(2, max_suppressed=0.3, person="pid", linked=("pid",), power=2),
    ],
    ids=["people", "histories", "power 2"],
)
def test_spark_counts_each_node_as_memory_does(spark, target):
    """The optimal search in people with every node counted by Spark (``engine_people.people_search``,
    as on DuckDB in ``test_engine_people_search``): the in-memory node, people and records
    suppressed, k among the people kept and utility, in people and on histories (whole, any 2
    records). A small lattice (sex and city: 6 nodes): Spark's cost is per query."""
    from anonlib.core.default_hierarchy import default_hierarchy
    from anonlib.workflow.engine_people import people_search

    shield = ["sex", "city"]
    frame = people_panel(2, 60, 20)
    hierarchies = {a: default_hierarchy(sorted(frame[a].unique()), a)[1] for a in shield}
    memory = release_search(frame, shield, hierarchies, target=target, count="n")
    found = people_search(eng.from_frame(frame, spark).with_roles({"n": "count"}), shield, hierarchies, target)
    engine = found.result
    assert engine.levels == memory.levels
    assert (engine.suppressed_persons, engine.suppressed) == (memory.suppressed_persons, memory.suppressed)
    assert found.k == memory.released_k and found.persons == memory.persons == frame["pid"].nunique()
    assert engine.utility == pytest.approx(memory.utility, rel=1e-12, abs=1e-12)


def test_a_pseudonymized_person_on_spark_releases_the_histories_in_memory_releases(tmp_path, spark, capsys) -> None:
    """The history target on Spark: the person column released as its keyed pseudonym, the released
    CSV byte for byte the in-memory one (``same_answer``); its package (``--package``, allowed on
    Spark) holds those bytes and ``verify`` passes it byte for byte, in memory and on Spark."""
    import zipfile

    from anonlib.workflow.recipe import Recipe
    from anonlib.workflow.verify import verify_package

    rng = np.random.default_rng(13)
    panel = tmp_path / "panel.parquet"
    pd.DataFrame(
        {
            "pid": [f"p{i}" for i in rng.integers(0, 50, 250)],
            "age": rng.integers(30, 50, 250),
            "sex": pd.array(rng.choice(["f", "m", None], 250), dtype="string"),  # blanks
            "dose": rng.choice([0.1, 1e16, 2.5, np.nan], 250),
        }
    ).to_parquet(panel)
    key = tmp_path / "project.key"
    key.write_text("7e" * 32 + "\n")
    key.chmod(0o600)
    argv = ["anonymize", str(panel), "--shield", "age,sex", "--person", "pid", "--pseudonymize", "pid"]
    argv += ["--keep", "dose", "--key-file", str(key), "--k", "3", "--power", "2", "--max-suppressed", "0.5"]
    package = ("--package", str(tmp_path / "s.zip"))  # written by the Spark run only
    memory, on_spark = same_answer(argv, tmp_path, capsys, engine="spark", engine_argv=package)
    assert on_spark["unit"] == memory["unit"] == "histories" and on_spark["met"] == memory["met"]
    with zipfile.ZipFile(tmp_path / "s.zip") as archive:
        table, recipe = archive.read("released.csv"), Recipe.loads(archive.read("recipe.json"))
    assert table == (tmp_path / "memory.csv").read_bytes() and recipe.written_by is None
    for engine_name in (None, "spark"):
        result = verify_package(tmp_path / "s.zip", panel, key=bytes.fromhex("7e" * 32), engine=engine_name)
        assert result.passed, [c for c in result.checks if not c.passed]
        (said,) = [c.sentence for c in result.checks if c.part == "source"]
        assert said.startswith("gives released.csv byte for byte")


@pytest.mark.spark
@pytest.mark.slow
def test_dates_shifted_per_person_on_spark_equal_in_memory(tmp_path, spark, capsys) -> None:
    """--shift-dates on Spark (scale.md part 2): each person's keyed offset and each (date, offset)
    pair's shifted date joined where the records are; blanks stay blank; the in-memory table."""
    rng = np.random.default_rng(17)
    dates = pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 300, 200), unit="D")
    visit = pd.Series(dates.strftime("%Y-%m-%d")).where(rng.random(200) > 0.1, None)
    panel = tmp_path / "panel.parquet"
    frame = pd.DataFrame({"pid": [f"p{i}" for i in rng.integers(0, 40, 200)], "visit": visit})
    frame.assign(age=rng.integers(30, 50, 200), sex=rng.choice(["f", "m"], 200)).to_parquet(panel)
    key = tmp_path / "project.key"
    key.write_text("5a" * 32 + "\n")
    key.chmod(0o600)
    argv = ["anonymize", str(panel), "--shield", "age,sex", "--person", "pid", "--shift-dates", "visit"]
    argv += ["--keep", "visit", "--key-file", str(key), "--k", "3", "--max-suppressed", "0.5"]
    memory, on_spark = same_answer(argv, tmp_path, capsys, engine="spark")
    assert on_spark["met"] == memory["met"] and on_spark["unit"] == "people"
    assert not set(released_table(tmp_path / "engine-out.csv")["visit"]) - {""} <= set(visit.dropna())
    # the key is in none of the files Spark keeps for the session (shuffle and spill blocks), as it
    # is in none of DuckDB's spill files (test_engine_key_files)
    kept = [p for p in Path(os.environ["SPARK_LOCAL_DIRS"]).rglob("*") if p.is_file()]
    assert kept and sum(p.stat().st_size for p in kept) > 0  # this run's shuffles are there to be read
    held = b"".join(p.read_bytes() for p in kept)
    assert bytes.fromhex("5a" * 32) not in held and b"5a" * 32 not in held and b"5A" * 32 not in held


@pytest.mark.spark
@pytest.mark.slow
def test_households_on_spark_equal_in_memory(tmp_path, spark, capsys) -> None:
    """Households on Spark: their figures (members' rows together, sdcMicro's household risk) on a
    file with blanks and a count column, and the household target's release, as in memory."""
    from anonlib.core.dataset import Dataset
    from anonlib.measures.linkage import linkage_risk

    frame = pd.DataFrame(
        {
            "hh": list("aabbccdde"),
            "age": pd.array([30, 30, 30, 30, None, 31, 31, 31, 30], dtype="Int64"),
            "sex": pd.array(list("fffmmmmf") + [None], dtype="string"),
            "n": [1, 2, 1, 2, 1, 1, 1, 0, 1],
        }
    )
    roles = {"hh": "household", "age": "quasi-identifier", "sex": "quasi-identifier", "n": "count"}
    for missing in ("category", "drop"):
        dataset = Dataset.from_frame("households", frame, roles).with_missing(missing)
        table = eng.from_frame(frame, spark).with_roles(roles).with_missing(missing)
        assert linkage_risk(table) == linkage_risk(dataset)  # the risk's maximum and mean to the last bit
    rng = np.random.default_rng(17)
    households = rng.integers(0, 60, 200)
    source = tmp_path / "households.parquet"
    pd.DataFrame(
        {"hhid": [f"h{h}" for h in households], "age": rng.integers(30, 40, 200), "sex": rng.choice(["f", "m"], 200)}
    ).to_parquet(source)
    key = tmp_path / "project.key"
    key.write_text("6b" * 32 + "\n")
    key.chmod(0o600)
    argv = ["anonymize", str(source), "--shield", "age,sex", "--household", "hhid", "--pseudonymize", "hhid"]
    argv += ["--key-file", str(key), "--k", "2", "--max-suppressed", "0.6"]
    memory, on_spark = same_answer(argv, tmp_path, capsys, engine="spark")
    assert on_spark["unit"] == memory["unit"] == "households" and on_spark["suppressed_households"] > 0
