"""Risk report benchmarks: the whole report (every section) and its HTML on Adult and Diabetes."""

from __future__ import annotations

from anonlib.core.samples import load_sample
from anonlib.workflow.report import build_report
from anonlib.workflow.report_html import render_html
from bench import Benchmark


def _report(key: str):
    def run(_: None) -> str:
        return render_html(build_report(load_sample(key), k=5))

    return run


BENCHMARKS = [
    Benchmark(
        "risk report + HTML, Adult (32,561 rows, 6 QIs, 2 sensitive)",
        2.0,
        lambda: None,
        _report("adult"),
        repeat=3,
        note=lambda page: f"{len(page):,} characters of HTML",
    ),
    Benchmark(
        "risk report + HTML, Diabetes (101,766 rows, 5 QIs, 3 sensitive)",
        5.0,
        lambda: None,
        _report("diabetes"),
        repeat=3,
        note=lambda page: f"{len(page):,} characters of HTML",
    ),
]
