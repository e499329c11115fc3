"""Spark (local mode, one session for this module, small data) counts what the in-memory
kernel counts; without Java, and on engine errors, the user reads one sentence."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from anonlib import engine as eng
from anonlib.core.errors import EngineError
from anonlib.core.samples import SAMPLES, load_sample
from anonlib.leakage import leakage_table
from anonlib.profile import risk_profile

ROOT = Path(__file__).resolve().parents[1]

pytest.importorskip("pyspark", reason="the Spark engine is the optional [spark] extra")
if not eng.java_available():  # .ci/run installs Java 17; a developer machine may lack it
    pytest.skip("Spark needs Java 17", allow_module_level=True)


@pytest.fixture(scope="module")
def spark():
    return eng.connect("spark", master="local[2]")


@pytest.fixture(scope="module")
def parquet(tmp_path_factory):
    """A bundled sample's analysed columns as Parquet (Spark splits Parquet; a gzip CSV it reads in one task)."""
    folder = tmp_path_factory.mktemp("samples")

    def write(key: str) -> Path:
        dataset = load_sample(key)
        path = folder / f"{key}.parquet"
        dataset.frame[list(dataset.quasi_identifiers + dataset.sensitive)].to_parquet(path)
        return path

    return write


def equal_to_in_memory(dataset, source, spark) -> None:
    """Profile and leakage (single quasi-identifiers and the pair of the first two) equal the kernel's."""
    qis = list(dataset.quasi_identifiers)
    assert risk_profile(source, qis, engine=spark) == risk_profile(dataset)
    columns = [*qis, *dataset.sensitive, tuple(qis[:2])]
    got = leakage_table(source, columns, engine=spark)
    pd.testing.assert_frame_equal(got, leakage_table(dataset.frame, columns), check_exact=True)


@pytest.mark.parametrize("key", ["adult", "diabetes"])
def test_profile_and_leakage_of_bundled_data_as_parquet_equal_in_memory(key, spark, parquet) -> None:
    equal_to_in_memory(load_sample(key), parquet(key), spark)


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
    with pytest.raises(EngineError, match="already runs Spark on 'local\\[2\\]'"):
        eng.connect("spark", master="local[1]")


def test_without_java_the_cli_says_so_in_one_sentence(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "PYSPARK_GATEWAY_PORT")}
    env["PATH"] = str(tmp_path)  # no java on it
    done = subprocess.run(
        [sys.executable, "-m", "anonlib", "profile", "--sample", "heart_cleveland", "--engine", "spark"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error: Spark needs Java 17") and done.stderr.count("\n") == 1
