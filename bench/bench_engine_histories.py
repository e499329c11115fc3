"""People, histories and households where the data lives (scale.md part 2): ``profile`` in
histories (or households) on a generated Parquet panel through DuckDB, beside the in-memory kernel
and Spark local mode.

The panel (``generate``): ``records`` records of ``records / 10`` people (each person's number
of records drawn around 10), 4 quasi-identifiers: age (Adult's marginal, moving by a year now and
then within a person), sex (fixed per person), a region of 30 (fixed per person, sometimes
moving) and the year of the record (2015-2024); written in Parquet parts of 5·10^6 records to a
temporary folder removed at exit (never committed). Each measurement runs in a fresh process
reporting its wall time and peak resident memory (Spark: and the JVM's):

- ``profile``: k and the people at risk in people (``risk_profile``), the people unique on and
  sharing their whole history (``linkage_risk``), and the people unique / below 5 at power 2
  (``anonlib.engine.owners.sharing``), on DuckDB, Spark local[2] or in memory.
- ``households`` (``--households``): a household file instead (``generate_households``: one
  record per person, households of 1-6 people, about 2.5; age from Adult's marginal, sex, a region
  of 30 and the survey year per household), the profile in records and the households by their
  members' rows together with sdcMicro's household risk (``linkage_risk``, ``hid`` the household).

Targets (scale.md part 2): 10^8 records of 10^7 people through DuckDB within 5 minutes and 8 GB; the
5·10^6-record panel in memory and through DuckDB side by side (ratio).

Run: ``python -m bench.bench_engine_histories [RECORDS] [duckdb,memory,spark] [--households]``
(default 10^6, all three); ``python -m bench engine_histories`` runs 10^8 through DuckDB (long: not on a
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


def generate_households(folder: Path, records: int, chunk: int = CHUNK, seed: int = 68) -> Path:
    """The household file (module text) in Parquet parts; households never straddle two parts."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from bench.bench_engine import adult_marginals

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    ages, shares = adult_marginals()["age"]
    ages = ages.astype(np.int64)
    first_household = 0
    for part, start in enumerate(range(0, records, chunk)):
        n = min(chunk, records - start)
        sizes = rng.choice(np.arange(1, 7), size=n, p=[0.28, 0.35, 0.15, 0.13, 0.06, 0.03])
        sizes = sizes[: int(np.searchsorted(np.cumsum(sizes), n)) + 1]
        owner = np.repeat(np.arange(len(sizes)), sizes)[:n]
        households = int(owner[-1]) + 1
        columns = {
            "hid": pa.array(owner + first_household),
            "age": pa.array(ages[rng.choice(len(ages), size=n, p=shares)]),
            "sex": pa.array(np.where(rng.random(n) < 0.5, "Female", "Male")),
            "region": pa.array([f"R{r:02d}" for r in rng.integers(0, 30, households)[owner]]),
            "year": pa.array((2015 + rng.integers(0, 10, households))[owner]),
        }
        first_household += households
        pq.write_table(pa.table(columns), folder / f"part-{part:05d}.parquet", row_group_size=1_000_000)
    return folder


def generated(records: int, unit: str = "histories") -> Path:
    base = Path(tempfile.mkdtemp(prefix="anonlib-bench-histories-"))
    atexit.register(shutil.rmtree, base, True)
    if unit == "households":
        return generate_households(base / "households", records)
    return generate(base / "panel", records)


def measure(kind: str, folder: str, unit: str = "histories") -> dict:
    """The profile in histories or households (``unit``; ``kind``: duckdb, spark or memory), timed
    in this process."""
    from anonlib import engine
    from anonlib.core.dataset import Dataset
    from anonlib.measures.linkage import linkage_risk
    from anonlib.measures.power import risk_by_power
    from anonlib.measures.profile import risk_profile

    owner = {"pid": "person"} if unit == "histories" else {"hid": "household"}
    roles = {**owner, **{c: "quasi-identifier" for c in QUASI_IDENTIFIERS}}
    jvm = 0
    start = time.perf_counter()
    if kind == "memory":
        import pyarrow.dataset as ds

        columns = [*owner, *QUASI_IDENTIFIERS]
        frame = ds.dataset(folder, format="parquet").to_table(columns=columns).to_pandas()
        table = Dataset.from_frame("panel", frame, roles)
        source = frame
    else:
        running = engine.connect(kind, master="local[2]" if kind == "spark" else None)
        table = engine.scan(folder, engine=running).with_roles(roles)
        source = table
    profile = risk_profile(table)
    found = {"kind": kind, "unit": unit, "records": profile.records, "k": profile.k}
    if unit == "households":
        h = linkage_risk(table).households
        found.update(
            people=h.households,  # the owners counted: households
            history_unique=h.unique,
            household_max=h.max,
            household_mean=h.mean,
            household_above=h.above,
        )
    else:
        history = linkage_risk(table).history
        (power2,) = risk_by_power(source, QUASI_IDENTIFIERS, "pid", k=5, powers=(2,))
        found.update(
            people=profile.persons,
            history_unique=history.unique,
            power2_unique=power2.people_unique,
            power2_below_5=power2.people_below_k,
        )
    seconds = time.perf_counter() - start
    if kind == "spark":
        from bench.bench_engine import _jvm_peak

        jvm = _jvm_peak()
    return {
        **found,
        "seconds": seconds,
        "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "jvm_peak_rss": jvm,
    }


def in_child(kind: str, folder: Path, unit: str = "histories") -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_engine_histories", "--measure", kind, str(folder), unit],
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
    head = f"{result['kind']:<7} {result['seconds']:8.1f} s  peak {peak / 1024**3:5.2f} GB  {result['records']:,} records, "
    if result.get("unit") == "households":
        return head + (
            f"{result['people']:,} households, k {result['k']}, {result['history_unique']:,} unique on their "
            f"members' rows, household risk max {result['household_max']:.4f}, mean {result['household_mean']:.6f}, "
            f"{result['household_above']:,} above 0.2"
        )
    return head + (
        f"{result['people']:,} people, k {result['k']}, "
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
        print(json.dumps(measure(argv[1], argv[2], *argv[3:4])))
        return
    unit = "households" if "--households" in argv else "histories"
    argv = [a for a in argv if a != "--households"]
    records = int(float(argv[0])) if argv else 10**6
    kinds = argv[1].split(",") if len(argv) > 1 else ["duckdb", "memory", "spark"]
    start = time.perf_counter()
    folder = generated(records, unit)
    print(f"generated {records:,} records in {time.perf_counter() - start:.1f} s", flush=True)
    found = {}
    for kind in kinds:
        found[kind] = in_child(kind, folder, unit)
        print(line(found[kind]), flush=True)
    if "duckdb" in found and "memory" in found:
        ratio = found["duckdb"]["seconds"] / found["memory"]["seconds"]
        figures = [c for c in found["memory"] if c not in ("kind", "seconds", "peak_rss", "jvm_peak_rss")]
        same = all(found["duckdb"][c] == found["memory"][c] for c in figures)
        print(f"DuckDB / in memory: {ratio:.2f}x the time; same figures: {same}")


if __name__ == "__main__":
    main(sys.argv[1:])
