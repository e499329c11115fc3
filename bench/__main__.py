"""Run the benchmarks: ``python -m bench [--repeat N] [name-filter ...]``, or
``python -m bench people [--records N] ...`` (``bench/bench_people.py``)."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import bench  # noqa: E402


def discover() -> list[bench.Benchmark]:
    found: list[bench.Benchmark] = []
    for info in sorted(pkgutil.iter_modules(bench.__path__), key=lambda i: i.name):
        if info.name.startswith("bench_"):
            module = importlib.import_module(f"bench.{info.name}")
            found.extend(getattr(module, "BENCHMARKS", []))
    return found


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["people"]:  # the command line on a generated panel of people (bench/bench_people.py)
        from bench.bench_people import main as people

        return people(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("filters", nargs="*", help="run only benchmarks whose name contains one of these")
    parser.add_argument("--repeat", type=int, default=None, help="override the number of timed runs")
    args = parser.parse_args(argv)
    selected = [b for b in discover() if not args.filters or any(f in b.name for f in args.filters)]
    if not selected:
        print("No benchmark matches.")
        return 1
    rows = []
    failed = 0
    print(f"{'benchmark':<58} {'median s':>10} {'target s':>9}  status  note")
    print("-" * 110)
    for b in selected:
        inputs = b.setup()
        times = []
        result = None
        for _ in range(args.repeat or b.repeat):
            start = time.perf_counter()
            result = b.run(inputs)
            times.append(time.perf_counter() - start)
        median = statistics.median(times)
        ok = b.target_s is None or median < b.target_s
        failed += not ok
        status = "report" if b.target_s is None else ("ok" if ok else "SLOW")
        note = b.note(result) if b.note else ""
        if b.reference:
            note = f"{note}; {b.reference}" if note else b.reference
        target = f"{b.target_s:9.3f}" if b.target_s is not None else f"{'-':>9}"
        print(f"{b.name:<58} {median:10.4f} {target}  {status:<6}  {note}", flush=True)
        rows.append((b.name, median, b.target_s, status))
    print("-" * 110)
    print(f"{len(rows)} benchmarks, {failed} slower than target")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
