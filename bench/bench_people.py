"""The command line on a generated panel of people (scale.md part 2, "Done when"):
``python -m bench people [--records N] [--people N] [--folder DIR] [--phases ...] [--trace]``.

The panel: ``--records`` records (default 10^8) of ``--people`` people (default a tenth),
written as one Parquet file in row groups of 10^6 records, chunk by chunk with numpy and
pyarrow (never the whole panel in memory), into ``--folder`` (default a folder in the system's
temporary directory, outside the repository, never committed; reused when a finished panel of
that size is already there). Columns: ``pid`` (each person's records contiguous, about
records/people each), 4 quasi-identifiers (``age`` a five-year band of 18, moving to the next
band now and then; ``sex`` fixed per person; ``region`` one of 100, fixed per person but for 5%
of records; ``year`` 2010-2024 per record) and a sensitive ``diagnosis`` (one of 40).

Each phase runs ``python -m anonlib ...`` in a child process, timed here, its peak resident
memory the child's ``ru_maxrss`` from ``os.wait4`` (DuckDB runs inside the child; Spark's JVM is
the child's child, and the largest of the two is what ``ru_maxrss`` reports), with the load
average at its start:

- ``profile``: ``profile PANEL --engine duckdb --person pid --qi age,sex,region,year --json``
  (k and the people at risk in people and histories). Target 5 min and 8 GB.
- ``all`` / ``2``: ``anonymize PANEL --engine duckdb --person pid --pseudonymize pid --key-file K
  --shield age,sex,region,year --k 5 --power all|2 --max-suppressed 0.2 --out OUT.parquet``: the
  optimal search under a history target plus its release. Target 15 min.
- ``memory``: the same ``profile`` and ``--power 2`` anonymize of a 5·10^6-record panel in memory
  beside DuckDB (the ratio); in memory with ``--time-limit 600``, which its estimate of the
  histories' comparison needs at that size.
- ``spark``: ``profile`` with ``--engine spark`` (local[2]) beside DuckDB at ``--spark-records``.
- ``spark2``: the ``--power 2`` anonymize with ``--engine spark`` beside DuckDB at
  ``--spark-records``; whether the two releases hold the same rows is printed.

``--trace`` runs each DuckDB child with every engine call (``to_pyarrow``, ``raw_sql``,
``to_parquet`` ...) timed, and prints the slowest ones: where the time goes. A missed target is
reported, never an error: the exit status is 0.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
ROW_GROUP = 1_000_000
QUASI_IDENTIFIERS = "age,sex,region,year"
BYTES_PER_RECORD_FILE = 6.0  # measured: about 5-6 bytes per record in the Parquet file
PROFILE_TARGET = (300.0, 8.0)  # seconds, GB
ANONYMIZE_TARGET = (900.0, None)


def generate(path: Path, records: int, people: int, seed: int = 67) -> Path:
    """The panel (module text) as one Parquet file written row group by row group."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    done = path.with_suffix(".done")
    if path.exists() and done.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    bands = pa.array([f"{a}-{a + 4}" for a in range(0, 90, 5)])
    sexes = pa.array(["Female", "Male"])
    regions = pa.array([f"R{r:03d}" for r in range(100)])
    diagnoses = pa.array([f"D{d:02d}" for d in range(40)])
    # each person's number of records: a multinomial split of the records over the people
    per_person = rng.multinomial(records, np.full(people, 1.0 / people)) if people else np.zeros(0, np.int64)
    ends = np.cumsum(per_person)
    written_people = 0
    with pq.ParquetWriter(path, _schema()) as writer:
        for start in range(0, records, ROW_GROUP):
            n = min(ROW_GROUP, records - start)
            # the people whose records fall in [start, start + n)
            owner = np.searchsorted(ends, np.arange(start, start + n), side="right")
            first, last = int(owner[0]), int(owner[-1])
            local = owner - first
            m = last - first + 1
            prng = np.random.default_rng([seed, first])  # a person's fixed values: the same in every chunk
            band = prng.integers(0, 15, m)[local] + (rng.random(n) < 0.1)
            sex = prng.integers(0, 2, m)[local]
            region = np.where(rng.random(n) < 0.05, rng.integers(0, 100, n), prng.integers(0, 100, m)[local])
            columns = [
                pa.array(owner.astype(np.int64)),
                pa.DictionaryArray.from_arrays(pa.array(band.astype(np.int32)), bands),
                pa.DictionaryArray.from_arrays(pa.array(sex.astype(np.int32)), sexes),
                pa.DictionaryArray.from_arrays(pa.array(region.astype(np.int32)), regions),
                pa.array((2010 + rng.integers(0, 15, n)).astype(np.int64)),
                pa.DictionaryArray.from_arrays(pa.array(rng.integers(0, 40, n).astype(np.int32)), diagnoses),
            ]
            writer.write_table(pa.Table.from_arrays(columns, schema=_schema()), row_group_size=ROW_GROUP)
            written_people = last + 1
    done.write_text(f"{records} records, {written_people} people\n")
    return path


def _schema():
    import pyarrow as pa

    text = pa.dictionary(pa.int32(), pa.string())
    return pa.schema(
        [("pid", pa.int64()), ("age", text), ("sex", text), ("region", text), ("year", pa.int64()), ("diagnosis", text)]
    )


def fits(folder: Path, records: int, *, in_memory: int = 0) -> str | None:
    """One sentence when the disk or the memory would not hold the run, else None."""
    free_disk = shutil.disk_usage(folder).free
    # the panel, the two releases (Parquet, a little larger: pseudonyms) and DuckDB's spill (~the panel x 4)
    need = records * BYTES_PER_RECORD_FILE * 8
    if need > free_disk * 0.9:
        return f"{records:,} records need about {need / 1e9:.1f} GB on disk and {folder} has {free_disk / 1e9:.1f} GB free."
    available = _available_memory()
    need_memory = max(3e9, in_memory * 650)  # in memory: ~650 B per panel record (scale.md: 3.1 GB for 5·10^6)
    if available is not None and need_memory > available:
        return f"The run needs about {need_memory / 1e9:.1f} GB of memory and {available / 1e9:.1f} GB are available."
    return None


def _available_memory() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def run_child(argv: list[str], *, trace: bool) -> dict:
    """``python -m anonlib argv`` (traced: through this module's ``--child``) in a child process:
    wall seconds, peak resident GB, exit code, load average at start, the --json and the trace."""
    load = os.getloadavg()[0]
    command = (
        [sys.executable, "-m", "bench.bench_people", "--child", *argv]
        if trace
        else [
            sys.executable,
            "-m",
            "anonlib",
            *argv,
        ]
    )
    with tempfile.TemporaryFile("w+") as out_file, tempfile.TemporaryFile("w+") as err_file:
        start = time.perf_counter()
        child = subprocess.Popen(command, cwd=ROOT, stdout=out_file, stderr=err_file, text=True)
        _, status, usage = os.wait4(child.pid, 0)  # the child's own rusage: its peak memory
        seconds = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        out_file.seek(0)
        err_file.seek(0)
        out, err = out_file.read(), err_file.read()
    peak = usage.ru_maxrss * 1024
    found: dict = {"seconds": seconds, "peak_gb": peak / 1024**3, "code": child.returncode, "load": load}
    try:
        found["json"] = json.loads(out) if out.strip() else {}
    except json.JSONDecodeError:
        found["json"] = {}
    found["err"] = err
    return found


def traced_main(argv: list[str]) -> int:
    """The command line with every engine call timed; the slowest listed on stderr at exit."""
    import ibis.backends.duckdb as duck

    calls: list[tuple[float, str, str]] = []
    depth = [0]

    def wrap(name):
        original = getattr(duck.Backend, name)

        def timed(self, *args, **kwargs):
            depth[0] += 1
            start = time.perf_counter()
            try:
                return original(self, *args, **kwargs)
            finally:
                depth[0] -= 1
                if depth[0] == 0:
                    what = args[0] if args else ""
                    try:
                        text = what if isinstance(what, str) else str(self.compile(what))
                    except Exception:  # noqa: BLE001 - a label only
                        text = type(what).__name__
                    calls.append((time.perf_counter() - start, name, " ".join(text.split())[:400]))

        setattr(duck.Backend, name, timed)

    for name in ("raw_sql", "to_pyarrow", "to_pyarrow_batches", "to_parquet", "to_csv", "create_table", "execute"):
        wrap(name)
    from anonlib.cli import main as cli_main

    started = time.perf_counter()
    try:
        code = cli_main(argv)
    finally:
        total = time.perf_counter() - started
        engine = sum(c[0] for c in calls)
        print(f"trace: {total:.1f} s in all, {engine:.1f} s in {len(calls)} engine calls", file=sys.stderr)
        for seconds, name, text in sorted(calls, reverse=True)[:12]:
            print(f"trace: {seconds:7.1f} s {name}: {text}", file=sys.stderr)
    return code or 0


def anonymize_argv(panel: Path, out: Path, key: Path, power: str, engine: str | None) -> list[str]:
    argv = ["anonymize", str(panel), "--person", "pid", "--pseudonymize", "pid", "--key-file", str(key)]
    argv += ["--shield", QUASI_IDENTIFIERS, "--k", "5", "--power", power, "--max-suppressed", "0.2"]
    argv += ["--out", str(out), "--json"]
    return argv + (["--engine", engine] if engine else [])


def profile_argv(panel: Path, engine: str | None) -> list[str]:
    argv = ["profile", str(panel), "--person", "pid", "--qi", QUASI_IDENTIFIERS, "--json"]
    return argv + (["--engine", engine] if engine else [])


def summary(found: dict) -> str:
    if found["code"] != 0:
        lines = [ln for ln in found["err"].splitlines() if ln.strip() and not ln.startswith("trace:")]
        return f"exit {found['code']}: {lines[-1][:160] if lines else ''}"
    j = found["json"]
    if "levels" in j or "k" in j and "released_persons" in j:
        keys = ("unit", "k", "levels", "suppressed", "released_persons", "loss")
        return ", ".join(f"{k} {j[k]}" for k in keys if k in j)
    keys = ("records", "persons", "people", "k", "unique", "below_5", "history_unique")
    return ", ".join(f"{k} {j[k]}" for k in keys if k in j and not isinstance(j[k], dict | list))


def row(name: str, found: dict, target: tuple[float | None, float | None]) -> str:
    seconds, gb = target
    within = found["code"] == 0 and (seconds is None or found["seconds"] <= seconds)
    within = within and (gb is None or found["peak_gb"] <= gb)
    limit = " / ".join(x for x in (f"{seconds / 60:g} min" if seconds else "", f"{gb:g} GB" if gb else "") if x) or "-"
    status = "report" if limit == "-" else ("ok" if within else "MISSED")
    return (
        f"{name:<44} {found['seconds']:9.1f} {found['peak_gb']:7.2f} {found['load']:5.1f}  {limit:<13} {status:<6}  "
        f"{summary(found)}"
    )


def same_rows(first: Path, second: Path) -> str:
    """Whether two written releases hold the same multiset of rows (DuckDB's row hashes summed and
    counted, whatever the order or the files' layout); a sentence when one is missing."""
    import duckdb

    if not (first.exists() and second.exists()):
        return "not compared (a release was not written)"
    sums = [
        duckdb.sql(f"SELECT count(*), sum(hash(t)) FROM read_parquet('{path}') t").fetchall()[0]
        for path in (first, second)
    ]
    return "yes" if sums[0] == sums[1] else f"no ({sums[0][0]:,} against {sums[1][0]:,} rows)"


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        return traced_main(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m bench people", description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=float, default=1e8, help="records in the panel (default 10^8)")
    parser.add_argument("--people", type=float, default=None, help="people in the panel (default a tenth)")
    parser.add_argument("--folder", type=Path, default=Path(tempfile.gettempdir()) / "anonlib-bench-people")
    parser.add_argument(
        "--phases",
        default="profile,all,2,memory,spark,spark2",
        help="which of profile,all,2,memory,spark,spark2 (default all)",
    )
    parser.add_argument("--memory-records", type=float, default=5e6, help="the in-memory comparison's size")
    parser.add_argument("--spark-records", type=float, default=1e5, help="the Spark comparison's size")
    parser.add_argument("--trace", action="store_true", help="time every engine call and print the slowest")
    args = parser.parse_args(argv)
    records = int(args.records)
    people = int(args.people) if args.people else max(records // 10, 1)
    phases = set(args.phases.split(","))
    folder = args.folder.resolve()
    if ROOT in folder.parents or folder == ROOT:
        print(f"The panel's folder {folder} is inside the repository; choose one outside it (--folder).")
        return 0
    folder.mkdir(parents=True, exist_ok=True)
    memory_records = int(args.memory_records) if "memory" in phases else 0
    refusal = fits(folder, max(records, memory_records), in_memory=memory_records)
    if refusal:
        print(f"Not run: {refusal}")
        return 0
    key = folder / "bench.key"
    if not key.exists():
        key.write_text(os.urandom(32).hex() + "\n")
        key.chmod(0o600)
    print(f"{'phase':<44} {'seconds':>9} {'peak GB':>7} {'load':>5}  {'target':<13} status  figures", flush=True)
    print("-" * 130, flush=True)

    def panel_of(n: int, p: int) -> Path:
        start = time.perf_counter()
        path = folder / f"panel-{n}-{p}.parquet"
        fresh = not path.with_suffix(".done").exists()
        generate(path, n, p)
        if fresh:
            size = path.stat().st_size
            print(
                f"(generated {n:,} records of {p:,} people in {time.perf_counter() - start:.1f} s, {size / 1e6:.0f} MB)"
            )
        return path

    def show(name: str, found: dict, target=(None, None)) -> dict:
        print(row(name, found, target), flush=True)
        if args.trace:
            for line in found["err"].splitlines():
                if line.startswith("trace:"):
                    print("    " + line, flush=True)
        return found

    size = f"{records:.0e}".replace("e+0", "e")
    if phases & {"profile", "all", "2"}:
        panel = panel_of(records, people)
        if "profile" in phases:
            show(
                f"profile, histories, DuckDB, {size}",
                run_child(profile_argv(panel, "duckdb"), trace=args.trace),
                PROFILE_TARGET,
            )
        for power in ("all", "2"):
            if power in phases:
                out = folder / f"release-{records}-{power}.parquet"
                found = run_child(anonymize_argv(panel, out, key, power, "duckdb"), trace=args.trace)
                show(f"anonymize --power {power}, DuckDB, {size}", found, ANONYMIZE_TARGET)
                out.unlink(missing_ok=True)
    if "memory" in phases:
        n = int(args.memory_records)
        panel = panel_of(n, max(n // 10, 1))
        label = f"{n:.0e}".replace("e+0", "e")
        pairs = [("profile", profile_argv(panel, None), profile_argv(panel, "duckdb"))]
        out = folder / f"release-{n}-compare.parquet"
        pairs.append(
            (
                "anonymize --power 2",
                # in memory the comparison of 2 records over a search is estimated at about 3 minutes
                # at 5·10^6 records, past the default minute (DuckDB counts each node's people instead)
                [*anonymize_argv(panel, out.with_suffix(".csv"), key, "2", None), "--time-limit", "600"],
                anonymize_argv(panel, out, key, "2", "duckdb"),
            )
        )
        for what, memory_argv, duck_argv in pairs:
            memory = show(f"{what}, in memory, {label}", run_child(memory_argv, trace=False))
            duck = show(f"{what}, DuckDB, {label}", run_child(duck_argv, trace=args.trace))
            print(
                f"    DuckDB / in memory: {duck['seconds'] / memory['seconds']:.2f}x the time, "
                f"{duck['peak_gb'] / memory['peak_gb']:.2f}x the memory",
                flush=True,
            )
        out.unlink(missing_ok=True)
        out.with_suffix(".csv").unlink(missing_ok=True)
    if phases & {"spark", "spark2"}:
        n = int(args.spark_records)
        panel = panel_of(n, max(n // 10, 1))
        label = f"{n:.0e}".replace("e+0", "e")
    if "spark" in phases:
        duck = show(f"profile, DuckDB, {label}", run_child(profile_argv(panel, "duckdb"), trace=False))
        spark = show(f"profile, Spark local[2], {label}", run_child(profile_argv(panel, "spark"), trace=False))
        print(f"    Spark / DuckDB: {spark['seconds'] / duck['seconds']:.1f}x the time", flush=True)
    if "spark2" in phases:
        outs = {engine: folder / f"release-{n}-{engine}.parquet" for engine in ("duckdb", "spark")}
        duck = show(
            f"anonymize --power 2, DuckDB, {label}",
            run_child(anonymize_argv(panel, outs["duckdb"], key, "2", "duckdb"), trace=False),
        )
        spark = show(
            f"anonymize --power 2, Spark local[2], {label}",
            run_child(anonymize_argv(panel, outs["spark"], key, "2", "spark"), trace=False),
        )
        print(
            f"    Spark / DuckDB: {spark['seconds'] / duck['seconds']:.1f}x the time; "
            f"the same rows released: {same_rows(*outs.values())}",
            flush=True,
        )
        for out in outs.values():
            if out.is_dir():  # Spark writes a folder of parts
                shutil.rmtree(out)
            else:
                out.unlink(missing_ok=True)
    print("-" * 130)
    print(
        f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end; targets are reported, "
        "never an error"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
