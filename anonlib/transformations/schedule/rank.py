"""A schedule's rank among all schedules of a small problem (the paper's "simple program")."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ...core.errors import ParameterError, ProblemTooLargeError
from ...core.numbers import whole_numbers
from ...measures.avector import anonymity_vector, k_of, lex_compare
from .cells import RANK_LIMIT, RANK_RESOURCES, Cells, check_fit

# --- rank among all schedules (small problems) ------------------------------------------


@dataclass(frozen=True)
class ScheduleCensus:
    """Every feasible schedule of a small problem, counted by anonymity vector."""

    total: int
    by_vector: dict[tuple[int, ...], int]

    def at_most(self, vector: Sequence[int]) -> int:
        """Schedules whose vector is lexicographically <= ``vector`` (as or more anonymous)."""
        return sum(n for v, n in self.by_vector.items() if lex_compare(v, vector) <= 0)

    def at_least_k(self, k: int) -> int:
        """Schedules that are k-anonymous or better."""
        return sum(n for v, n in self.by_vector.items() if k_of(v) >= k)


def enumerate_schedules(freqs: Sequence[int], capacities: Sequence[int], limit: int = RANK_LIMIT) -> ScheduleCensus:
    """Count all feasible assignment matrices by anonymity vector (row by row, memoised).

    Refuses with ``ProblemTooLargeError`` before a row whose partial schedules would
    take the work past ``limit`` partial schedules of ``RANK_RESOURCES`` resources
    (each partial schedule costs one step per resource: 200 slots cost 25 times 8).

    >>> census = enumerate_schedules([2, 1], [2, 1])
    >>> census.total, sorted(census.by_vector.items())
    (2, [((1, 1), 1), ((3,), 1)])
    """
    f = whole_numbers(freqs, "The frequencies").tolist()
    c = whole_numbers(capacities, "The capacities")
    check_fit(np.asarray(f, dtype=np.int64), c)
    width = max(f, default=0)
    # state: remaining capacities -> Counter(partial vector as a tuple of cell-size counts)
    states: dict[tuple[int, ...], Counter] = {tuple(c.tolist()): Counter({(0,) * width: 1})}
    work, budget = 0.0, float(limit) * RANK_RESOURCES
    for q in f:
        following: dict[tuple[int, ...], Counter] = {}
        # the whole row's work is counted before any of it is done
        work += sum(_composition_count(q, free) * len(vectors) for free, vectors in states.items()) * max(len(c), 1)
        if work > budget:
            raise ProblemTooLargeError(
                f"Ranking this schedule needs more than {limit:,} steps of enumeration "
                f"({len(f)} quasi-identifier values, {len(c)} resources, {sum(f)} people). "
                "Use at most about 20 people and a handful of resources."
            )
        for free, vectors in states.items():
            for row in _compositions(q, free):
                left = tuple(a - b for a, b in zip(free, row))
                bucket = following.setdefault(left, Counter())
                sizes = [x for x in row if x]
                for vector, count in vectors.items():
                    new = list(vector)
                    for x in sizes:
                        new[x - 1] += 1
                    bucket[tuple(new)] += count
        states = following
    by_vector: Counter = Counter()
    for vectors in states.values():
        for vector, count in vectors.items():
            by_vector[anonymity_vector(np.repeat(np.arange(1, width + 1), vector))] += count
    return ScheduleCensus(sum(by_vector.values()), dict(by_vector))


@lru_cache(maxsize=65536)
def _composition_count(q: int, free: tuple[int, ...]) -> float:
    """How many ways to put q people into resources with these free seats (float: a size guard).

    The coefficient of x^q in prod_j (1 + x + ... + x^free_j), by windowed cumulative sums.
    """
    ways = np.zeros(q + 1)
    ways[0] = 1.0
    for c in free:
        total = np.cumsum(ways)
        shifted = np.concatenate([np.zeros(min(c + 1, q + 1)), total[: max(q - c, 0)]])
        ways = total - shifted
    return float(ways[q])


@lru_cache(maxsize=65536)
def _compositions(q: int, free: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """All ways to put q people into resources with these free seats (memoised)."""
    if not free:
        return ((),) if q == 0 else ()
    room_after = sum(free[1:])
    return tuple(
        (first, *rest)
        for first in range(max(0, q - room_after), min(q, free[0]) + 1)
        for rest in _compositions(q - first, free[1:])
    )


def schedule_rank(freqs: Sequence[int], capacities: Sequence[int], matrix) -> tuple[int, int]:
    """(schedules with a vector lexicographically <= this one's, all feasible schedules).
    ``matrix`` is sparse (as ``assign`` returns it) or dense.

    >>> from anonlib.transformations.schedule import assign
    >>> heuristic = assign([4, 4, 5, 2], [4, 2, 4, 3, 2], rule="largest")
    >>> schedule_rank([4, 4, 5, 2], [4, 2, 4, 3, 2], heuristic)
    (339, 14504)
    """
    cells = Cells.from_matrix(matrix)
    f = whole_numbers(freqs, "The frequencies")
    c = whole_numbers(capacities, "The capacities")
    row_sums = np.bincount(cells.rows, weights=cells.counts, minlength=f.size)
    if cells.shape != (f.size, c.size) or (row_sums != f).any() or (cells.loads() > c).any():
        raise ParameterError(
            "The schedule does not fit the problem: it needs one row per frequency with that "
            "row sum, one column per resource, and no column above its capacity."
        )
    census = enumerate_schedules(f, c)
    return census.at_most(cells.vector), census.total
