"""The engine benchmark (scale.md, "Beyond one machine"): 10^8 records x 4
quasi-identifiers in Parquet, profiled where they lie.

The records are drawn from Adult's marginals (age, sex, race, education, each
column independently) and written in chunks of 5 million to a temporary folder
of Parquet files (removed at exit, never committed), so generating them stays
within a few hundred MB. Each measurement runs in a fresh Python process,
which reports its wall time and its peak resident memory (for Spark also the
JVM's), so one run's memory does not hide in another's:

- DuckDB: ``risk_profile(scan(folder), qis)`` (target < 60 s and < 4 GB peak);
- Spark local mode: the same call with ``engine="spark"`` (reported beside it);
- the in-memory kernel: the same profile of 10^7 records read into pandas,
  and from its bytes per record the largest table that fits the loader's
  limits and the work budget's memory (the in-memory path's largest size).

Run: ``python -m bench engine`` (minutes: generation, then the three runs), or
``python -m bench.bench_engine [RECORDS]`` for a smaller try.
"""

from __future__ import annotations

import atexit
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench import Benchmark

RECORDS = 10**8
CHUNK = 5_000_000
IN_MEMORY_RECORDS = 10**7
QUASI_IDENTIFIERS = ["age", "sex", "race", "education"]
ROOT = Path(__file__).resolve().parents[1]
_FOLDERS: dict[int, Path] = {}


def adult_marginals() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each quasi-identifier's values and their shares in Adult."""
    from anonlib.core.samples import load_sample

    frame = load_sample("adult").frame
    out = {}
    for column in QUASI_IDENTIFIERS:
        shares = frame[column].value_counts(normalize=True, dropna=True).sort_index()
        out[column] = (shares.index.to_numpy(), shares.to_numpy(dtype=np.float64))
    return out


def generate(folder: Path, records: int = RECORDS, chunk: int = CHUNK, seed: int = 2026) -> Path:
    """``records`` records in Parquet parts of ``chunk`` records each (dictionary-encoded text)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    marginals = adult_marginals()
    for part, start in enumerate(range(0, records, chunk)):
        n = min(chunk, records - start)
        columns = {}
        for column, (values, shares) in marginals.items():
            codes = rng.choice(len(values), size=n, p=shares).astype(np.int32)
            if column == "age":
                columns[column] = pa.array(values.astype(np.int64)[codes])
            else:
                columns[column] = pa.DictionaryArray.from_arrays(pa.array(codes), pa.array(values.astype(str)))
        pq.write_table(pa.table(columns), folder / f"part-{part:05d}.parquet", row_group_size=1_000_000)
    return folder


def generated(records: int = RECORDS) -> Path:
    """The generated folder for ``records`` (made once per process, removed at exit)."""
    if records not in _FOLDERS:
        base = Path(tempfile.mkdtemp(prefix="anonlib-bench-engine-"))
        atexit.register(shutil.rmtree, base, True)
        _FOLDERS[records] = generate(base / "records", records)
    return _FOLDERS[records]


# --- one measurement per process ------------------------------------------------------


def _peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KB


def _jvm_peak() -> int:
    """Peak resident memory of Spark's JVM (this process's gateway child), in bytes."""
    from pyspark import SparkContext

    context = SparkContext._active_spark_context
    proc = getattr(getattr(context, "_gateway", None), "proc", None) if context else None
    if proc is None:
        return 0
    for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def measure(kind: str, folder: str, records: int = 0) -> dict:
    """One profile (``kind``: duckdb, spark or memory) timed in this process."""
    from anonlib import engine
    from anonlib.measures.profile import risk_profile

    jvm = 0
    if kind == "memory":
        import pyarrow.dataset as ds

        from anonlib.core.dataset import Dataset

        start = time.perf_counter()
        table = ds.dataset(folder, format="parquet").head(records) if records else ds.dataset(folder).to_table()
        frame = table.to_pandas()
        for column in QUASI_IDENTIFIERS[1:]:
            frame[column] = frame[column].astype(str)
        result = risk_profile(
            Dataset.from_frame("generated", frame, {c: "quasi-identifier" for c in QUASI_IDENTIFIERS})
        )
    else:
        running = engine.connect(kind, master="local[2]" if kind == "spark" else None)
        start = time.perf_counter()
        result = risk_profile(engine.scan(folder, engine=running), QUASI_IDENTIFIERS)
        if kind == "spark":
            jvm = _jvm_peak()
    seconds = time.perf_counter() - start
    return {
        "kind": kind,
        "seconds": seconds,
        "peak_rss": _peak_rss(),
        "jvm_peak_rss": jvm,
        "records": result.records,
        "classes": result.classes,
        "k": result.k,
    }


def _in_child(kind: str, folder: Path, records: int = 0) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_engine", "--measure", kind, str(folder), str(records)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{kind} measurement failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _gb(n: int) -> str:
    return f"{n / 1024**3:.2f} GB"


def _engine_note(result: dict) -> str:
    note = (
        f"{result['records']:,} records, {result['classes']:,} classes, k {result['k']}; peak {_gb(result['peak_rss'])}"
    )
    if result.get("jvm_peak_rss"):
        note += f" (Python) + {_gb(result['jvm_peak_rss'])} (JVM)"
    return note


def largest_in_memory(result: dict) -> str:
    """The in-memory path's largest table: the loader's cell limit and the memory budget,
    scaled from the measured bytes per record."""
    from anonlib.core.budget import MAX_BYTES
    from anonlib.core.loading import DEFAULT_MAX_CELLS

    per_record = result["peak_rss"] / result["records"]
    by_memory = int(MAX_BYTES / per_record)
    by_loader = DEFAULT_MAX_CELLS // len(QUASI_IDENTIFIERS)
    return (
        f"{result['records']:,} records in {result['seconds']:.1f} s, peak {_gb(result['peak_rss'])} "
        f"({per_record:.0f} B/record); largest: {min(by_memory, by_loader):,} records "
        f"(loader limit {by_loader:,} for 4 columns; memory budget {_gb(MAX_BYTES)}: {by_memory:,})"
    )


def _timed(kind: str, records: int = 0):
    """A Benchmark run whose time is the child's own measurement (process start-up excluded)."""

    def run(folder: Path) -> dict:
        return _in_child(kind, folder, records)

    return run


BENCHMARKS = [
    Benchmark(
        "engine: profile 10^8 records x 4 QIs, Parquet, DuckDB",
        60.0,
        lambda: generated(),
        _timed("duckdb"),
        repeat=1,
        reference="target < 60 s (a fresh process, imports included) and < 4 GB peak",
        note=_engine_note,
    ),
    Benchmark(
        "engine: profile 10^8 records x 4 QIs, Parquet, Spark local[2]",
        None,
        lambda: generated(),
        _timed("spark"),
        repeat=1,
        note=_engine_note,
    ),
    Benchmark(
        "engine: in-memory kernel, 10^7 records read into pandas",
        None,
        lambda: generated(),
        _timed("memory", IN_MEMORY_RECORDS),
        repeat=1,
        note=largest_in_memory,
    ),
]


def main(argv: list[str]) -> int:
    if argv[:1] == ["--measure"]:
        kind, folder, records = argv[1], argv[2], int(argv[3])
        print(json.dumps(measure(kind, folder, records)))
        return 0
    records = int(float(argv[0])) if argv else RECORDS
    start = time.perf_counter()
    folder = generated(records)
    print(f"generated {records:,} records in {time.perf_counter() - start:.1f} s", flush=True)
    for kind, n in (("duckdb", 0), ("spark", 0), ("memory", min(records, IN_MEMORY_RECORDS))):
        result = _in_child(kind, folder, n)
        note = largest_in_memory(result) if kind == "memory" else _engine_note(result)
        print(f"{kind:<7} {result['seconds']:8.1f} s  {note}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
