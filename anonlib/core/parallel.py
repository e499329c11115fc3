"""Data-sized work split over the machine's cores.

numpy's gathers, counts and element-wise arithmetic release Python's lock while
they run, so independent pieces of one computation (the rows of a table of
maps, the blocks of a long array) run at once on threads (``each``), and a step
whose result is needed only later runs beside the caller's other work
(``start``); no process is started and nothing is copied. Small pieces run one
after the other, where a thread's hand-over would cost more than it saves. One
pool of threads serves the whole process; a piece that itself asks for parallel
work runs that work in its own thread, so the pool never waits on itself.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor, wait
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


_POOLS: dict[int, ThreadPoolExecutor | None] = {}  # by process: a forked child has none of its parent's threads
_STARTING = threading.Lock()


def _pool() -> ThreadPoolExecutor | None:
    """This process's pool (None on one core), started by the first caller."""
    pid = os.getpid()
    if pid not in _POOLS:
        with _STARTING:  # two threads asking first start one pool
            if pid not in _POOLS:
                workers = min(cores(), 8)
                _POOLS[pid] = ThreadPoolExecutor(workers, thread_name_prefix=_PREFIX) if workers > 1 else None
    return _POOLS[pid]


def _new_lock_in_child() -> None:
    global _STARTING
    _STARTING = threading.Lock()  # the parent's may have been held by a thread the child does not have


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_lock_in_child)


def _serial(pool: ThreadPoolExecutor | None, elements: int) -> bool:
    """Whether work of this size runs in the caller's thread: one core, a small piece, or
    a caller that is itself a piece on the pool."""
    return pool is None or elements < MIN_PARALLEL_ELEMENTS or threading.current_thread().name.startswith(_PREFIX)


def each(function: Callable[[T], R], pieces: Iterable[T], *, elements: int, at_most: int | None = None) -> list[R]:
    """``[function(p) for p in pieces]``, on every core when each piece handles at least
    ``MIN_PARALLEL_ELEMENTS`` array elements (``elements``, a typical piece's size) and
    there are two pieces or more; ``at_most`` pieces at once when given (each piece's
    memory then counts that many times, not once per core). The pieces must not write to
    the same memory. Every piece has ended when this returns or raises (the first error
    raised, in the pieces' order).

    >>> each(lambda x: x * x, range(4), elements=10)
    [0, 1, 4, 9]
    """
    pieces = list(pieces)
    pool = _pool()
    if len(pieces) < 2 or _serial(pool, elements) or at_most == 1:
        return [function(p) for p in pieces]
    if at_most is not None:
        turns = threading.BoundedSemaphore(at_most)
        unbounded = function

        def function(piece: T) -> R:
            with turns:
                return unbounded(piece)

    started = [pool.submit(function, p) for p in pieces]
    wait(started)
    return [f.result() for f in started]


def start(function: Callable[..., R], *args: object, elements: int) -> Future[R]:
    """``function(*args)`` started on the pool, to be collected with ``.result()`` while the
    caller goes on with other work; done at once, in the caller's thread, when it handles
    fewer than ``MIN_PARALLEL_ELEMENTS`` array elements or there is one core. An error it
    raises is raised again by ``.result()``.

    >>> start(sum, [1, 2, 3], elements=3).result()
    6
    """
    pool = _pool()
    if not _serial(pool, elements):
        return pool.submit(function, *args)
    done: Future[R] = Future()
    try:
        done.set_result(function(*args))
    except Exception as error:  # handed to .result(), as the pool would
        done.set_exception(error)
    return done
