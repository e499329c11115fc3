"""Benchmarks: ``python -m bench [name-filter ...]`` prints timings against their targets.

Each ``bench/bench_*.py`` module defines ``BENCHMARKS``, a list of
``Benchmark`` objects; the runner discovers them, runs each one a few times
after its (untimed) setup, and prints the median next to the target.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Benchmark:
    """One timed piece of work.

    ``setup()`` builds the inputs (not timed) and returns them; ``run(inputs)``
    is timed ``repeat`` times and its median reported. ``target_s`` is the
    target in seconds (None = report only). ``note(result)`` may return
    a short text about the last run's result (sizes, scores) for the table.
    """

    name: str
    target_s: float | None
    setup: Callable[[], Any]
    run: Callable[[Any], Any]
    repeat: int = 5
    reference: str = ""
    note: Callable[[Any], str] | None = field(default=None)
