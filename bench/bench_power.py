"""Risk by the adversary's power (``linkable.md`` part 2, section 7): ``by_power`` on 10^6 records.

Target: counting people unique and below k at powers 1, 2 and 3 on 10^6 records
(10^5 people x 10 records) within 10x the power-all check on the same records; power 5 is
reported beside it. The records are ``bench_linkable``'s (a year, a job that changes now and
then, a region).
"""

from __future__ import annotations

import time

from anonlib.measures.power import risk_by_power
from bench import Benchmark
from bench.bench_linkable import _records

RATIO_TARGET = 10.0
QIS = ["year", "job", "region"]


def _inputs():
    dataset = _records()
    return dataset.frame


def _by_power(frame):
    seconds = {}
    found = {}
    for power in (None, 1, 2, 3, 5):
        start = time.perf_counter()
        (risk,) = risk_by_power(frame, QIS, "pid", k=5, powers=(power,))
        seconds[risk.label] = time.perf_counter() - start
        found[risk.label] = risk
    return seconds, found


def _note(result) -> str:
    seconds, found = result
    base = seconds["all"]
    parts = []
    for label, s in seconds.items():
        r = found[label]
        counted = "not counted" if r.refused else f"{r.people_unique:,} unique, {r.people_below_k:,} below 5"
        parts.append(f"power {label}: {s:.2f} s ({s / base:.1f}x; {counted})")
    worst = max(seconds[m] for m in ("1", "2", "3")) / base
    verdict = "ok" if worst <= RATIO_TARGET else "SLOW"
    return "; ".join(parts) + f". Powers 1-3 at most {worst:.1f}x power all, target {RATIO_TARGET:g}x: {verdict}"


BENCHMARKS = [
    Benchmark(
        "power: by_power on 10^6 records of 10^5 people (m = all, 1, 2, 3, 5)",
        None,
        _inputs,
        _by_power,
        repeat=1,
        note=_note,
    ),
]
