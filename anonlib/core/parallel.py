"""Data-sized work split over the machine's cores.

numpy's gathers, counts and element-wise arithmetic release Python's lock while
they run, so independent pieces of one computation (the rows of a table of
maps, the blocks of a long array) run at once on threads; no process is
started and nothing is copied. Small pieces run one after the other, where a
thread's hand-over would cost more than it saves. One pool of threads serves the
whole process; a piece that itself asks for parallel work runs that work in its
own thread, so the pool never waits on itself.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

MIN_PARALLEL_ELEMENTS = 1 << 15  # per piece: below this, one thread is faster
_PREFIX = "anonlib-parallel"


def cores() -> int:
    """The cores this process may run on (its affinity where the system says so).

    >>> cores() >= 1
    True
    """
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):
        return max(os.cpu_count() or 1, 1)


@functools.cache
def _pool() -> ThreadPoolExecutor | None:
    workers = min(cores(), 8)
    return ThreadPoolExecutor(workers, thread_name_prefix=_PREFIX) if workers > 1 else None


if hasattr(os, "register_at_fork"):  # a forked child has none of the parent's threads: it starts its own pool
    os.register_at_fork(after_in_child=_pool.cache_clear)


def each(function: Callable[[T], R], pieces: Iterable[T], *, elements: int) -> list[R]:
    """``[function(p) for p in pieces]``, on every core when each piece handles at least
    ``MIN_PARALLEL_ELEMENTS`` array elements (``elements``, a typical piece's size) and
    there are two pieces or more. The pieces must not write to the same memory.

    >>> each(lambda x: x * x, range(4), elements=10)
    [0, 1, 4, 9]
    """
    pieces = list(pieces)
    pool = _pool()
    if (
        pool is None
        or len(pieces) < 2
        or elements < MIN_PARALLEL_ELEMENTS
        or threading.current_thread().name.startswith(_PREFIX)
    ):
        return [function(p) for p in pieces]
    return list(pool.map(function, pieces))
