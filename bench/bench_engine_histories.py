"""People and histories where the data lives (scale.md part 2): ``profile`` in histories on a
generated Parquet panel through DuckDB, beside the in-memory kernel and Spark local mode.

The panel (``generate``): ``records`` records of ``records / 10`` people (each person's number
of records drawn around 10), 4 quasi-identifiers: age (Adult's marginal, moving by a year now and
then within a person), sex (fixed per person), a region of 30 (fixed per person, sometimes
moving) and the year of the record (2015-2024); written in Parquet parts of 5·10^6 records to a
temporary folder removed at exit (never committed). Each measurement runs in a fresh process
reporting its wall time and peak resident memory (Spark: and the JVM's):

- ``profile``: k and the people at risk in people (``risk_profile``), the people unique on and
  sharing their whole history (``linkage_risk``), and the people unique / below 5 at power 2
  (``anonlib.engine.owners.sharing``), on DuckDB, Spark local[2] or in memory.

Targets (scale.md part 2): 10^8 records of 10^7 people through DuckDB within 5 minutes and 8 GB; the
5·10^6-record panel in memory and through DuckDB side by side (ratio).

Run: ``python -m bench.bench_engine_histories [RECORDS] [duckdb,memory,spark]`` (default 10^6,
all three); ``python -m bench engine_histories`` runs 10^8 through DuckDB (long: not on a
shared machine).
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
QUASI_IDENTIFIERS = ["age", "sex", "region", "year"]
ROOT = Path(__file__).resolve().parents[1]
MINUTES_TARGET = 5.0
GB_TARGET = 8.0


def generate(folder: Path, records: int, chunk: int = CHUNK, seed: int = 67) -> Path:
    """The panel (module text) in Parquet parts; people never straddle two parts."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from bench.bench_engine import adult_marginals

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    ages, shares = adult_marginals()["age"]
    ages = ages.astype(np.int64)
    first_person = 0
    for part, start in enumerate(range(0, records, chunk)):
        n = min(chunk, records - start)
        people = max(n // 10, 1)
        owner = np.sort(rng.integers(0, people, n))
        first = np.r_[True, owner[1:] != owner[:-1]]
        person_age = ages[rng.choice(len(ages), size=people, p=shares)]
        moved = rng.random(n) < 0.1
        age = person_age[owner] + moved.astype(np.int64)
        sex = np.where(rng.random(people) < 0.5, "Female", "Male")[owner]
        region = rng.integers(0, 30, people)[owner]
        region = np.where(rng.random(n) < 0.05, rng.integers(0, 30, n), region)
        year = 2015 + rng.integers(0, 10, n)
        first[0] = True
        columns = {
            "pid": pa.array(owner + first_person),
            "age": pa.array(age),
            "sex": pa.array(sex),
            "region": pa.array([f"R{r:02d}" for r in region]),
            "year": pa.array(year),
        }
        first_person += people
        pq.write_table(pa.table(columns), folder / f"part-{part:05d}.parquet", row_group_size=1_000_000)
    return folder


def generated(records: int) -> Path:
    base = Path(tempfile.mkdtemp(prefix="anonlib-bench-histories-"))
    atexit.register(shutil.rmtree, base, True)
    return generate(base / "panel", records)


def measure(kind: str, folder: str) -> dict:
    """The profile in histories (``kind``: duckdb, spark or memory), timed in this process."""
    from anonlib import engine
    from anonlib.core.dataset import Dataset
    from anonlib.measures.linkage import linkage_risk
    from anonlib.measures.power import risk_by_power
    from anonlib.measures.profile import risk_profile

    roles = {"pid": "person", **{c: "quasi-identifier" for c in QUASI_IDENTIFIERS}}
    jvm = 0
    start = time.perf_counter()
    if kind == "memory":
        import pyarrow.dataset as ds

        frame = ds.dataset(folder, format="parquet").to_table().to_pandas()
        table = Dataset.from_frame("panel", frame, roles)
        source = frame
    else:
        running = engine.connect(kind, master="local[2]" if kind == "spark" else None)
        table = engine.scan(folder, engine=running).with_roles(roles)
        source = table
    profile = risk_profile(table)
    history = linkage_risk(table).history
    (power2,) = risk_by_power(source, QUASI_IDENTIFIERS, "pid", k=5, powers=(2,))
    seconds = time.perf_counter() - start
    if kind == "spark":
        from bench.bench_engine import _jvm_peak

        jvm = _jvm_peak()
    return {
        "kind": kind,
        "seconds": seconds,
        "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "jvm_peak_rss": jvm,
        "records": profile.records,
        "people": profile.persons,
        "k": profile.k,
        "history_unique": history.unique,
        "power2_unique": power2.people_unique,
        "power2_below_5": power2.people_below_k,
    }


def in_child(kind: str, folder: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_engine_histories", "--measure", kind, str(folder)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{kind} measurement failed: {done.stderr.strip().splitlines()[-3:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def line(result: dict) -> str:
    peak = result["peak_rss"] + result.get("jvm_peak_rss", 0)
    return (
        f"{result['kind']:<7} {result['seconds']:8.1f} s  peak {peak / 1024**3:5.2f} GB  "
        f"{result['records']:,} records, {result['people']:,} people, k {result['k']}, "
        f"{result['history_unique']:,} unique on history, power 2: {result['power2_unique']:,} unique, "
        f"{result['power2_below_5']:,} below 5"
    )


def _note(result: dict) -> str:
    within = result["seconds"] <= MINUTES_TARGET * 60 and result["peak_rss"] <= GB_TARGET * 1024**3
    return line(result) + f"; target {MINUTES_TARGET:g} min and {GB_TARGET:g} GB: {'ok' if within else 'MISSED'}"


BENCHMARKS = [
    Benchmark(
        "engine histories: profile in histories, 10^8 records of 10^7 people x 4 QIs, DuckDB",
        MINUTES_TARGET * 60,
        lambda: generated(RECORDS),
        lambda folder: in_child("duckdb", folder),
        repeat=1,
        reference="target 5 min and 8 GB peak (a fresh process)",
        note=_note,
    ),
]


def main(argv: list[str]) -> None:
    if argv[:1] == ["--measure"]:
        print(json.dumps(measure(argv[1], argv[2])))
        return
    records = int(float(argv[0])) if argv else 10**6
    kinds = argv[1].split(",") if len(argv) > 1 else ["duckdb", "memory", "spark"]
    start = time.perf_counter()
    folder = generated(records)
    print(f"generated {records:,} records in {time.perf_counter() - start:.1f} s", flush=True)
    found = {}
    for kind in kinds:
        found[kind] = in_child(kind, folder)
        print(line(found[kind]), flush=True)
    if "duckdb" in found and "memory" in found:
        ratio = found["duckdb"]["seconds"] / found["memory"]["seconds"]
        same = all(found["duckdb"][c] == found["memory"][c] for c in ("records", "people", "k", "history_unique"))
        print(f"DuckDB / in memory: {ratio:.2f}x the time; same figures: {same}")


if __name__ == "__main__":
    main(sys.argv[1:])
