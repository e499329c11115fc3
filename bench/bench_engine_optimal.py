"""The optimal search and its release on an engine: every record of ARX's Adult
benchmark (30,162 records, 9 quasi-identifiers, ARX's hierarchies) repeated 332 times in
one Parquet file, 10,013,784 records.

Class sizes scale exactly, so k = 5 x 332 = 1,660 with at most 4% suppressed has the
optimum of the 30,162 records at k = 5: loss 0.29944 at levels (3,3,1,1,1,0,0,0,1),
1,032 x 332 records suppressed. The file is built in a temporary folder (removed at exit,
never committed). Each measurement runs in a fresh Python process, which reports its wall
time and peak resident memory (Spark: also its JVM's):

- ``anonymize --engine duckdb --method optimal`` with ``--out`` and ``--recipe`` (target:
  the optimum within 300 s and 4 GB on 2 cores);
- ``apply`` of that recipe ``--engine duckdb`` to the same file (target: 10,013,784 -
  1,032 x 332 records written, every class >= 1,660, within 120 s and 4 GB);
- references in the same run: the in-memory optimal search on the 30,162 records at k = 5
  (the answer to equal), and the in-memory ``anonymize`` of the records repeated 33 times
  (995,346 records) read into pandas;
- Spark local[2]: the same command on the records repeated 10 times (301,620), k = 50.

Run: ``python -m bench "engine: optimal"`` (minutes), or ``python -m bench.bench_engine_optimal
[REPEAT]`` for a smaller try (``REPEAT`` copies, k = 5 x REPEAT).
"""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from anonlib.measures.target import ReleaseTarget
from bench import Benchmark

REPEAT = 332
IN_MEMORY_REPEAT = 33
SPARK_REPEAT = 10
LEVELS = (3, 3, 1, 1, 1, 0, 0, 0, 1)
LOSS = 0.29944
SUPPRESSED = 1032  # records of the 30,162 suppressed at the optimum
ROOT = Path(__file__).resolve().parents[1]
_FOLDERS: dict[int, Path] = {}


def build(folder: Path, repeat: int) -> Path:
    """The benchmark's records ``repeat`` times over in one Parquet file, and ARX's hierarchies beside it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from anonlib.core.hierarchy import hierarchy_csv
    from anonlib.core.samples import arx_adult_benchmark

    bench = arx_adult_benchmark()
    qis = list(bench.quasi_identifiers)
    folder.mkdir(parents=True, exist_ok=True)
    one = pa.Table.from_pandas(bench.frame[qis], preserve_index=False).replace_schema_metadata(None)
    path = folder / f"adult-x{repeat}.parquet"
    with pq.ParquetWriter(path, one.schema) as writer:
        for start in range(0, repeat, 33):  # row groups of about a million records
            writer.write_table(pa.concat_tables([one] * min(33, repeat - start)))
    for q in qis:
        (folder / f"{q}.csv").write_bytes(hierarchy_csv(bench.hierarchies[q]))
    return path


def built(repeat: int) -> Path:
    """The file for ``repeat`` (made once per process, its folder removed at exit)."""
    if repeat not in _FOLDERS:
        base = Path(tempfile.mkdtemp(prefix="anonlib-bench-optimal-"))
        atexit.register(shutil.rmtree, base, True)
        _FOLDERS[repeat] = build(base, repeat)
    return _FOLDERS[repeat]


def anonymize_argv(path: Path, repeat: int, engine: str | None) -> list[str]:
    from anonlib.core.samples import ARX_ADULT_QUASI_IDENTIFIERS

    qis = list(ARX_ADULT_QUASI_IDENTIFIERS)
    argv = [
        "anonymize",
        str(path),
        "--shield",
        ",".join(qis),
        "--k",
        str(5 * repeat),
        "--max-suppressed",
        "0.04",
        "--method",
        "optimal",
        "--json",
        "--recipe",
        str(path.parent / f"recipe-{engine or 'memory'}.json"),
        "--out",
        str(path.parent / f"out-{engine or 'memory'}.parquet"),
    ]
    for q in qis:
        argv += ["--hierarchy", f"{q}={path.parent / f'{q}.csv'}"]
    argv += ["--engine", engine] if engine else []
    return argv + (["--spark-master", "local[2]"] if engine == "spark" else [])


# --- one measurement per process ------------------------------------------------------------


def _peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KB


def _jvm_peak() -> int:
    from bench.bench_engine import _jvm_peak as peak

    return peak()


def _cli(argv: list[str]) -> tuple[int, dict]:
    from anonlib.cli import main

    captured = io.StringIO()
    with contextlib.redirect_stdout(captured), contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
    text = captured.getvalue()
    return code, json.loads(text[text.index("{") :]) if "{" in text else {}


def measure(kind: str, path: str, repeat: int) -> dict:
    """One measurement (``kind``: anonymize-duckdb, apply-duckdb, anonymize-spark, memory-search,
    memory-anonymize) in this process."""
    file = Path(path)
    out: dict = {"kind": kind}
    if kind == "memory-search":
        from anonlib.core.samples import arx_adult_benchmark
        from anonlib.transformations.generalization import optimal_levels

        bench = arx_adult_benchmark()
        start = time.perf_counter()
        found = optimal_levels(
            bench.frame, list(bench.quasi_identifiers), bench.hierarchies, target=ReleaseTarget(5, max_suppressed=0.04)
        )
        out.update(
            levels=list(found.levels), utility=found.value, suppressed=found.suppressed, records=len(bench.frame)
        )
    elif kind.startswith("anonymize") or kind == "memory-anonymize":
        engine = None if kind == "memory-anonymize" else kind.split("-")[1]
        if engine == "spark":
            from anonlib.engine import connect

            connect("spark", master="local[2]")  # started before the clock, as a cluster would be
        start = time.perf_counter()
        code, stated = _cli(anonymize_argv(file, repeat, engine))
        out.update(
            code=code,
            levels=list(stated.get("levels", {}).values()),
            utility=stated.get("utility"),
            suppressed=stated.get("suppressed"),
            records=stated.get("records"),
            k=stated.get("k"),
            checked=stated.get("checked"),
            classes=stated.get("classes"),
            search_seconds=stated.get("seconds"),
        )
    else:  # apply-duckdb: the recipe written by anonymize-duckdb
        import pyarrow.parquet as pq

        start = time.perf_counter()
        released = file.parent / "applied.parquet"
        code, stated = _cli(
            [
                "apply",
                str(file.parent / "recipe-duckdb.json"),
                str(file),
                "--engine",
                "duckdb",
                "--out",
                str(released),
                "--json",
            ]
        )
        seconds = time.perf_counter() - start
        out.update(code=code, released=stated.get("released_records"), met=stated.get("met"), seconds=seconds)
        out["written_rows"] = pq.read_metadata(released).num_rows
        import duckdb  # the smallest class of the written file, counted apart from anonlib

        from anonlib.core.samples import ARX_ADULT_QUASI_IDENTIFIERS

        columns = ", ".join(f'"{q}"' for q in ARX_ADULT_QUASI_IDENTIFIERS)
        out["smallest_class"] = duckdb.sql(
            f"SELECT min(n) FROM (SELECT count(*) AS n FROM read_parquet('{released}') GROUP BY {columns})"
        ).fetchall()[0][0]
    out.setdefault("seconds", time.perf_counter() - start)
    out.update(peak_rss=_peak_rss(), jvm_peak_rss=_jvm_peak() if kind.endswith("spark") else 0)
    return out


def _in_child(kind: str, path: Path, repeat: int) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_engine_optimal", "--measure", kind, str(path), str(repeat)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{kind} measurement failed: {done.stderr.strip().splitlines()[-3:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _gb(n: int) -> str:
    return f"{n / 1024**3:.2f} GB"


def note(result: dict) -> str:
    """The answer, time and memory of a measurement, against the benchmark's targets."""
    repeat = result.get("repeat", REPEAT)
    text = f"{result['seconds']:.1f} s, peak {_gb(result['peak_rss'])}"
    if result.get("jvm_peak_rss"):
        text += f" + JVM {_gb(result['jvm_peak_rss'])}"
    if result["kind"] == "apply-duckdb":
        expected = 30_162 * repeat - SUPPRESSED * repeat
        same = result["written_rows"] == result["released"] == expected and result["met"] and result["code"] == 0
        same = same and result["smallest_class"] >= 5 * repeat
        return (
            f"{text}; {result['written_rows']:,} records written, smallest class {result['smallest_class']:,} "
            f"({'as expected' if same else f'EXPECTED {expected:,} records, classes >= {5 * repeat:,}'})"
        )
    if result.get("code", 0) != 0 or result.get("utility") is None:
        return f"{text}; FAILED (exit {result.get('code')})"
    levels, utility = tuple(result["levels"]), result["utility"]
    right = levels == LEVELS and utility is not None and round(utility, 5) == LOSS
    right = right and result["suppressed"] == SUPPRESSED * (1 if result["kind"] == "memory-search" else repeat)
    text += f"; levels {levels}, loss {utility:.5f}, {result['suppressed']:,} suppressed of {result['records']:,}"
    if result.get("classes"):
        text += f", {result['classes']:,} classes searched ({result['search_seconds']:.2f} s)"
    return f"{text}; {'the optimum' if right else 'NOT THE OPTIMUM'}"


def _timed(kind: str, repeat: int):
    def run(path: Path) -> dict:
        return {**_in_child(kind, path, repeat), "repeat": repeat}

    return run


BENCHMARKS = [
    Benchmark(
        "engine: optimal, Adult x332 (10,013,784 rec), DuckDB",
        300.0,
        lambda: built(REPEAT),
        _timed("anonymize-duckdb", REPEAT),
        repeat=1,
        note=note,
        reference="target: the optimum within 300 s and 4 GB (anonymize --engine duckdb, release written)",
    ),
    Benchmark(
        "engine: optimal, apply its recipe, DuckDB",
        120.0,
        lambda: built(REPEAT),
        _timed("apply-duckdb", REPEAT),
        repeat=1,
        note=note,
        reference="target: 10,013,784 - 1,032 x 332 records, every class >= 1,660, 120 s, 4 GB",
    ),
    Benchmark(
        "engine: optimal, reference: in memory, 30,162 records",
        None,
        lambda: built(REPEAT),
        _timed("memory-search", REPEAT),
        repeat=1,
        note=note,
    ),
    Benchmark(
        "engine: optimal, reference: in memory, Adult x33 (995,346)",
        None,
        lambda: built(IN_MEMORY_REPEAT),
        _timed("memory-anonymize", IN_MEMORY_REPEAT),
        repeat=1,
        note=note,
    ),
    Benchmark(
        "engine: optimal, Adult x10 (301,620 rec), Spark local[2]",
        None,
        lambda: built(SPARK_REPEAT),
        _timed("anonymize-spark", SPARK_REPEAT),
        repeat=1,
        note=note,
    ),
]


def main(argv: list[str]) -> int:
    if argv[:1] == ["--measure"]:
        print(json.dumps(measure(argv[1], argv[2], int(argv[3]))))
        return 0
    repeat = int(argv[0]) if argv else REPEAT
    start = time.perf_counter()
    path = built(repeat)
    print(f"built {30_162 * repeat:,} records in {time.perf_counter() - start:.1f} s", flush=True)
    for kind in ("anonymize-duckdb", "apply-duckdb", "memory-search"):
        result = {**_in_child(kind, path, repeat), "repeat": repeat}
        print(f"{kind:<18} {note(result)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
