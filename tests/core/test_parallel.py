"""The shared thread pool: the same results as a loop, in order, and no deadlock when a
piece asks for parallel work itself."""

from __future__ import annotations

import threading

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from anonlib.core import parallel
from anonlib.core.parallel import MIN_PARALLEL_ELEMENTS, each


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 50), max_size=12), st.sampled_from([1, MIN_PARALLEL_ELEMENTS]))
def test_each_equals_the_loop_in_order(sizes, elements):
    rng = np.random.default_rng(len(sizes))
    arrays = [rng.integers(0, 100, size) for size in sizes]
    out = [np.zeros(0)] * len(arrays)

    def square_sum(i: int) -> int:
        out[i] = arrays[i] ** 2
        return int(out[i].sum())

    assert each(square_sum, range(len(arrays)), elements=elements) == [int((a**2).sum()) for a in arrays]
    assert all(np.array_equal(o, a**2) for o, a in zip(out, arrays))


def test_large_pieces_run_on_the_pool_and_nested_work_runs_in_its_own_thread():
    if parallel._pool() is None:  # one core: everything runs in the caller's thread
        assert (
            each(lambda _: threading.current_thread().name, range(3), elements=MIN_PARALLEL_ELEMENTS)
            == [threading.current_thread().name] * 3
        )
        return

    def outer(i: int) -> tuple[str, list[str]]:
        inner = each(lambda _: threading.current_thread().name, range(4), elements=MIN_PARALLEL_ELEMENTS)
        return threading.current_thread().name, inner

    results = each(outer, range(6), elements=MIN_PARALLEL_ELEMENTS)
    for name, inner in results:
        assert name.startswith("anonlib-parallel")
        assert inner == [name] * 4  # the pool never waits on itself


def test_small_pieces_stay_in_the_callers_thread():
    me = threading.current_thread().name
    assert each(lambda _: threading.current_thread().name, range(5), elements=MIN_PARALLEL_ELEMENTS - 1) == [me] * 5


def test_a_forked_child_gets_a_pool_of_its_own():
    """A forked child has none of the parent's pool threads: work it asks for still completes."""
    import multiprocessing

    each(lambda _: None, range(2), elements=MIN_PARALLEL_ELEMENTS)  # the parent's pool started
    context = multiprocessing.get_context("fork")
    with context.Pool(1) as pool:
        result = pool.apply_async(_sum_of_squares_on_the_pool).get(timeout=60)
    assert result == sum(i * i for i in range(8))


def _sum_of_squares_on_the_pool() -> int:
    return sum(each(lambda i: i * i, range(8), elements=MIN_PARALLEL_ELEMENTS))


def test_every_piece_has_ended_when_a_piece_raises_and_the_first_error_is_raised():
    import time

    import pytest

    ended = []

    def piece(i: int) -> int:
        if i == 1:
            raise ValueError("piece 1")
        time.sleep(0.2)
        ended.append(i)
        return i

    with pytest.raises(ValueError, match="piece 1"):
        each(piece, range(3), elements=MIN_PARALLEL_ELEMENTS)
    assert sorted(ended) == [0, 2]


def test_at_most_bounds_the_pieces_running_at_once(monkeypatch):
    import os
    import time
    from concurrent.futures import ThreadPoolExecutor

    wide = ThreadPoolExecutor(4, thread_name_prefix="anonlib-parallel-test")
    monkeypatch.setitem(parallel._POOLS, os.getpid(), wide)
    running, most = [0], [0]
    lock = threading.Lock()

    def piece(_: int) -> None:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.05)
        with lock:
            running[0] -= 1

    try:
        each(piece, range(8), elements=MIN_PARALLEL_ELEMENTS, at_most=2)
        assert most[0] == 2
        most[0] = 0
        each(piece, range(8), elements=MIN_PARALLEL_ELEMENTS)
        assert most[0] == 4
    finally:
        wide.shutdown()
