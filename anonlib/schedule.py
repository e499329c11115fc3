"""Screening schedules that keep people anonymous (Caballero, Sen & Nygård, sections 4-7).

A screening programme sends a *population* (people described by quasi-identifier
values, e.g. ZIP, gender, age band) to *resources* (slots: centre, day, hour, each
with a capacity). Once the appointment is published with the data, the
quasi-identifier grows by the resource columns, and people who are alone with their
values in a slot become unique. An *assignment* is a Q x R matrix ``a[i, j]`` =
people with quasi-identifier value i sent to resource j (row sums = frequencies,
column sums <= capacities); its anonymity vector counts the non-zero cells by size.

Methods:

* ``random``  - each person gets a uniformly random free seat (the paper's baseline);
* ``heuristic`` - Algorithm 2: values by descending frequency, each kept together
  in one resource when possible (three rules for the ambiguous split case);
* ``optimal`` - Algorithm 1: lexicographic minimisation of the anonymity vector,
  one CP-SAT problem per vector position, warm-started with the heuristic.

``schedule_rank`` enumerates every feasible assignment of a small problem to rank
one of them (the paper's "simple program": 14,504 schedules for Table 7).

Assignments are sparse (``scipy.sparse.csr_array``): a schedule uses at most
Q + R cells, so a dense Q x R matrix would waste memory at registry scale.

Example (the paper's Table 7):
    >>> a = assign([4, 4, 5, 2], [4, 2, 4, 3, 2], "heuristic", rule="largest")
    >>> a.toarray().tolist()
    [[0, 0, 3, 1, 0], [0, 2, 0, 2, 0], [4, 0, 1, 0, 0], [0, 0, 0, 0, 2]]
    >>> matrix_vector(a)
    (2, 3, 1, 1)
"""

from __future__ import annotations

import bisect
import heapq
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterator, Sequence

import numpy as np
import pandas as pd
from scipy import sparse

from .avector import anonymity_vector, improvement, k_of, lex_compare, lex_index, population_of, scientific, vector_text
from .core.budget import Progress, WorkEstimate, check_work, report
from .core.equivalence import Classes, combine, encode
from .core.errors import (
    CapacityError,
    ColumnError,
    ParameterError,
    ProblemTooLargeError,
    join_names,
    require_columns,
)
from .core.numbers import real_number, seed_number, time_limit_seconds, whole_number, whole_numbers

METHODS = ("heuristic", "random", "optimal")
RULES = ("largest", "closest_half", "largest_at_most_half")
# Chosen by measurement on the Table 10 protocol (anonlib.schedule_experiments.
# compare_rules, 300 runs per N, seed 0): "closest_half" gives the most anonymous
# schedules on average at every N from 20 to 1000 (e.g. 73.6% vs 59.4% for
# "largest" at N = 50, 99.7% vs 94.4% at N = 1000), as the paper's text says.
DEFAULT_RULE = "closest_half"
RANK_LIMIT = 100_000  # partial schedules schedule_rank may visit before refusing (about 1 s)
RANK_RESOURCES = 8  # the limit is for partial schedules of this many resources; more resources cost more each
EXACT_INDEX_LIMIT = 50_000  # largest population whose exact index a result carries
OPTIMAL_LIMIT = 200_000  # decision variables the optimal method accepts per level


@dataclass(frozen=True)
class Cells:
    """The non-zero cells of an assignment matrix (sparse: Q x R can be huge)."""

    rows: np.ndarray
    cols: np.ndarray
    counts: np.ndarray
    shape: tuple[int, int]

    def dense(self) -> np.ndarray:
        """The full Q x R integer matrix (small problems only: the optimum's hints).

        >>> Cells(np.array([1]), np.array([0]), np.array([3]), (2, 2)).dense().tolist()
        [[0, 0], [3, 0]]
        """
        matrix = np.zeros(self.shape, dtype=np.int64)
        np.add.at(matrix, (self.rows, self.cols), self.counts)
        return matrix

    def sparse(self) -> sparse.csr_array:
        """The Q x R matrix as a ``scipy.sparse.csr_array``: memory O(cells used).

        >>> Cells(np.array([1, 1]), np.array([0, 0]), np.array([3, 1]), (2, 2)).sparse().toarray().tolist()
        [[0, 0], [4, 0]]
        """
        matrix = sparse.csr_array((self.counts, (self.rows, self.cols)), shape=self.shape, dtype=np.int64)
        matrix.sum_duplicates()
        return matrix

    @property
    def vector(self) -> tuple[int, ...]:
        """Anonymity vector of the schedule: non-zero cells counted by size."""
        return anonymity_vector(self.counts)

    def loads(self) -> np.ndarray:
        """People sent to each resource."""
        return np.bincount(self.cols, weights=self.counts, minlength=self.shape[1]).astype(np.int64)

    @classmethod
    def from_dense(cls, matrix: np.ndarray) -> "Cells":
        matrix = np.asarray(matrix, dtype=np.int64)
        rows, cols = np.nonzero(matrix)
        return cls(rows, cols, matrix[rows, cols], tuple(matrix.shape))

    @classmethod
    def from_matrix(cls, matrix) -> "Cells":
        """The non-zero cells of a sparse or dense matrix.

        >>> Cells.from_matrix(sparse.csr_array(np.array([[0, 2], [1, 0]]))).counts.tolist()
        [2, 1]
        """
        if not sparse.issparse(matrix):
            return cls.from_dense(matrix)
        coo = sparse.coo_array(matrix)
        coo.sum_duplicates()
        keep = coo.data != 0
        return cls(
            coo.row[keep].astype(np.int64), coo.col[keep].astype(np.int64),
            coo.data[keep].astype(np.int64), tuple(coo.shape),
        )


def matrix_vector(matrix) -> tuple[int, ...]:
    """Anonymity vector of an assignment matrix, sparse or dense (cells of 0 people do not count).

    >>> matrix_vector(np.array([[4, 0], [1, 2]]))
    (1, 1, 0, 1)
    >>> matrix_vector(sparse.csr_array(np.array([[4, 0], [1, 2]])))
    (1, 1, 0, 1)
    """
    if sparse.issparse(matrix):
        return Cells.from_matrix(matrix).vector
    return anonymity_vector(np.asarray(matrix).ravel())


# --- validation ----------------------------------------------------------------------


def _whole_numbers(values: Sequence, what: str) -> np.ndarray:
    return whole_numbers(values, f"The {what}")


def estimate_schedule(freqs: Sequence[int], capacities: Sequence[int], method: str, *, table_cells: int = 0) -> WorkEstimate:
    """What scheduling costs before it starts (measured on 2 cores): the random
    method shuffles every seat (10^7 people: 2 s, 0.5 GB), the heuristic works
    per value and resource, the optimum is bounded by ``OPTIMAL_LIMIT`` and its
    time limit; the anonymity vectors before and after have one entry per class
    size; ``table_cells`` counts the cells of a per-person result table.

    >>> estimate_schedule([2 * 10**8], [3 * 10**8], "random").peak_bytes > 8 * 1024**3
    True
    """
    f, c = _whole_numbers(freqs, "frequencies"), _whole_numbers(capacities, "capacities")
    people, seats, values = int(f.sum()), int(c.sum()), f.size + c.size
    if method == "random":
        seconds, peak = 1e-7 * (people + seats), 16 * seats + 48 * people
    else:
        seconds, peak = 2e-6 * values, 200 * values
    peak += 2 * 24 * int(f.max(initial=0))  # the vectors before and after, one entry per class size
    return WorkEstimate(
        f"scheduling {people:,} people onto {c.size:,} resources with the {method} method",
        operations=people + seats, seconds=seconds + 1e-6 * table_cells, peak_bytes=peak + 64 * table_cells,
    )


def _check_fit(freqs: np.ndarray, capacities: np.ndarray, where: str = "") -> None:
    people, seats = int(freqs.sum()), int(capacities.sum())
    if people and capacities.size == 0:
        raise CapacityError(f"There are no resources{where} for {people:,} people; add at least one slot.")
    if seats < people:
        raise CapacityError(
            f"The resources{where} have {seats:,} seats in total but {people:,} people need an "
            f"appointment: {people - seats:,} seats short. Add slots or raise capacities."
        )


def _groups_of(freqs: np.ndarray, capacities: np.ndarray, groups) -> list[tuple[np.ndarray, np.ndarray, str]]:
    """(rows, resources, label) per group; one group when ``groups`` is None. Checks capacity."""
    if groups is None:
        _check_fit(freqs, capacities)
        return [(np.arange(freqs.size), np.arange(capacities.size), "")]
    row_groups, resource_groups = (np.asarray(g, dtype=object) for g in groups)
    if row_groups.shape != freqs.shape or resource_groups.shape != capacities.shape:
        raise ParameterError("Give one group label per frequency and one per resource.")
    out = []
    for label in pd.unique(np.concatenate([row_groups, resource_groups])):
        rows = np.flatnonzero(row_groups == label)
        cols = np.flatnonzero(resource_groups == label)
        _check_fit(freqs[rows], capacities[cols], f" of group '{label}'")
        out.append((rows, cols, str(label)))
    return out


# --- Algorithm 2: the heuristic ----------------------------------------------------------


class _FreeSeats:
    """Resources bucketed by free seats: exact-size lookup, maximum and nearest value.

    Each bucket is a heap of resource indices, so ties go to the lowest index as in
    the paper's worked example.
    """

    def __init__(self, capacities: np.ndarray) -> None:
        self.free = capacities.astype(np.int64).tolist()
        self.buckets: dict[int, list[int]] = {}
        for j, c in enumerate(self.free):
            if c > 0:
                self.buckets.setdefault(c, []).append(j)
        self.values = sorted(self.buckets)  # distinct free-seat counts present

    def take(self, value: int, seats: int) -> int:
        """Use ``seats`` seats of the lowest-index resource with ``value`` free seats."""
        bucket = self.buckets[value]
        j = heapq.heappop(bucket)
        if not bucket:
            del self.buckets[value]
            self.values.pop(bisect.bisect_left(self.values, value))
        left = value - seats
        self.free[j] = left
        if left > 0:
            if left not in self.buckets:
                self.buckets[left] = []
                bisect.insort(self.values, left)
            heapq.heappush(self.buckets[left], j)
        return j

    def split_value(self, q: int, rule: str) -> int:
        """Free-seat count of the resource to fill completely (Algorithm 2, case 3)."""
        values = self.values
        if rule == "largest":
            return values[-1]
        if rule == "closest_half":
            at = bisect.bisect_left(values, q / 2)
            candidates = values[max(at - 1, 0) : at + 1]
            return min(candidates, key=lambda v: (abs(v - q / 2), -v))  # ties: the larger
        at = bisect.bisect_right(values, q // 2) - 1  # largest_at_most_half
        return values[at] if at >= 0 else values[-1]


def heuristic_cells(freqs: Sequence[int], capacities: Sequence[int], rule: str = DEFAULT_RULE) -> Cells:
    """Algorithm 2 (heuristic appointments) as sparse cells; handles 10^6 people in well under a second.

    Values are processed by descending frequency (ties in the given order); for the
    q people left of a value: case 1, a resource with exactly q free seats takes them
    all; case 2, otherwise the resource with the most free seats, if it has more
    than q; case 3, otherwise one resource chosen by ``rule`` is filled completely
    and the loop repeats.

    >>> heuristic_cells([5], [2, 2, 2], "largest").counts.tolist()
    [2, 2, 1]
    """
    f = _whole_numbers(freqs, "frequencies")
    c = _whole_numbers(capacities, "capacities")
    if rule not in RULES:
        raise ParameterError(f"Unknown split rule '{rule}'. Choose one of: {join_names(RULES)}.")
    _check_fit(f, c)
    seats = _FreeSeats(c)
    rows: list[int] = []
    cols: list[int] = []
    counts: list[int] = []
    for i in np.argsort(-f, kind="stable").tolist():  # o <- sort(f), descending
        q = int(f[i])
        while q > 0:
            if q in seats.buckets:  # case 1: a resource fits exactly
                value, put = q, q
            elif seats.values[-1] > q:  # case 2: the resource with most free seats
                value, put = seats.values[-1], q
            else:  # case 3: fill one resource completely, then repeat
                value = seats.split_value(q, rule)
                put = value
            rows.append(i)
            cols.append(seats.take(value, put))
            counts.append(put)
            q -= put
    return Cells(
        np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64),
        np.asarray(counts, dtype=np.int64), (f.size, c.size),
    )


# --- the random baseline ------------------------------------------------------------------


def random_cells(freqs: Sequence[int], capacities: Sequence[int], seed: int | None = None) -> Cells:
    """Each person gets a uniformly random free seat: shuffle all seats, hand them out.

    >>> random_cells([2, 1], [3], seed=1).counts.tolist()
    [2, 1]
    """
    f = _whole_numbers(freqs, "frequencies")
    c = _whole_numbers(capacities, "capacities")
    _check_fit(f, c)
    rng = np.random.default_rng(seed)
    seats = np.repeat(np.arange(c.size, dtype=np.int64), c)
    chosen = rng.permutation(seats)[: int(f.sum())]
    person_rows = np.repeat(np.arange(f.size, dtype=np.int64), f)
    return _cells_of(person_rows, chosen, (f.size, c.size))


def _cells_of(person_rows: np.ndarray, person_cols: np.ndarray, shape: tuple[int, int]) -> Cells:
    """Count people per (row, resource) cell with the counting kernel."""
    if person_rows.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Cells(empty, empty, empty, shape)
    ids, n = combine([person_rows, person_cols], [shape[0], shape[1]])
    classes = Classes.from_ids(ids, n)
    rows = np.empty(n, dtype=np.int64)
    cols = np.empty(n, dtype=np.int64)
    rows[ids], cols[ids] = person_rows, person_cols
    return Cells(rows, cols, classes.sizes, shape)


# --- Algorithm 1: the optimal schedule (CP-SAT) ----------------------------------------


@dataclass(frozen=True)
class OptimalOutcome:
    """The best schedule Algorithm 1 found, and whether every level was proven optimal."""

    cells: Cells
    proven_optimal: bool
    levels_solved: int
    seconds: float


def optimal_cells(
    freqs: Sequence[int],
    capacities: Sequence[int],
    *,
    time_limit: float | None = 10.0,
    allowed: np.ndarray | None = None,
    hint: np.ndarray | None = None,
    fair_labels: Sequence | None = None,
    max_share: float | None = None,
    progress: Progress | None = None,
    workers: int = 2,
) -> OptimalOutcome:
    """Algorithm 1: the lexicographically smallest anonymity vector, with OR-Tools CP-SAT.

    Level l fixes v[1..l-1] (constraint C3) and minimises the number of cells of
    exactly l people (C4), keeping rows = frequencies (C1) and columns <= capacities
    (C2). Each level is warm-started (``AddHint``) with the previous level's
    schedule, the first with the heuristic. ``allowed`` (Q x R booleans) forbids
    cells (regions, E1); ``fair_labels`` + ``max_share`` (ethical point E2) keep
    any label's share of each resource's people at most ``max_share``. When the
    time limit ends a level early, the best schedule found is returned with
    ``proven_optimal=False``. ``progress(done, total, what)`` is called after each
    level: ``done`` people are in groups whose count is fixed, of ``total`` people.

    >>> out = optimal_cells([4, 4, 5, 2], [4, 2, 4, 3, 2], time_limit=20)
    >>> out.cells.vector, out.proven_optimal
    ((0, 2, 1, 2), True)
    """
    from ortools.sat.python import cp_model

    f = _whole_numbers(freqs, "frequencies")
    c = _whole_numbers(capacities, "capacities")
    time_limit = time_limit_seconds(time_limit)
    _check_fit(f, c)
    q_count, r_count = f.size, c.size
    if q_count * r_count > OPTIMAL_LIMIT:
        _too_large(q_count * r_count, q_count, r_count)
    allowed = np.ones((q_count, r_count), dtype=bool) if allowed is None else np.asarray(allowed, dtype=bool)
    bounds = np.minimum.outer(f, c)
    usable = allowed & (bounds > 0)
    size = int((bounds[usable] + 1).sum())
    if size > OPTIMAL_LIMIT:
        _too_large(size, q_count, r_count)
    cells = list(zip(*(a.tolist() for a in np.nonzero(usable))))
    if hint is None:
        hint = _grouped_heuristic(f, c, allowed)
    current = np.asarray(hint, dtype=np.int64)
    population = int(f.sum())
    started = time.perf_counter()
    deadline = None if time_limit is None else started + float(time_limit)
    v: list[int] = []  # the anonymity vector fixed so far
    proven = True
    level = 1
    while sum(n * x for n, x in enumerate(v, start=1)) < population:  # Algorithm 1's loop
        remaining = None if deadline is None else deadline - time.perf_counter()
        if remaining is not None and remaining <= 0.01:
            proven = False
            break
        model = cp_model.CpModel()
        one_hot: dict[tuple[int, int], list] = {}
        amount: dict[tuple[int, int], object] = {}
        for i, j in cells:
            top = int(min(f[i], c[j]))
            bits = [model.NewBoolVar(f"x{i}_{j}_{s}") for s in range(top + 1)]
            model.AddExactlyOne(bits)
            one_hot[i, j] = bits
            amount[i, j] = sum(s * b for s, b in enumerate(bits) if s)
            for s, b in enumerate(bits):
                model.AddHint(b, s == int(current[i, j]))
        for i in range(q_count):  # (C1) everybody is appointed
            model.Add(sum(amount[i, j] for j in range(r_count) if (i, j) in amount) == int(f[i]))
        for j in range(r_count):  # (C2) capacities
            column = [amount[i, j] for i in range(q_count) if (i, j) in amount]
            if column:
                model.Add(sum(column) <= int(c[j]))
        for n, fixed in enumerate(v, start=1):  # (C3) keep v[1..l-1]
            model.Add(sum(bits[n] for bits in one_hot.values() if len(bits) > n) == fixed)
        level_count = sum(bits[level] for bits in one_hot.values() if len(bits) > level)
        model.Minimize(level_count)  # (C4) minimise v[l]
        if fair_labels is not None and max_share is not None:
            _add_fairness(model, amount, fair_labels, max_share, q_count, r_count)
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = workers
        solver.parameters.random_seed = 0
        if remaining is not None:
            solver.parameters.max_time_in_seconds = max(remaining, 0.01)
        status = solver.Solve(model)
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            if status == cp_model.INFEASIBLE:
                raise ParameterError(
                    "No schedule satisfies the fairness limit: raise the maximum share per "
                    "resource or add resources."
                )
            proven = False  # time ran out before any schedule of this level
            break
        proven = proven and status == cp_model.OPTIMAL
        current = np.zeros((q_count, r_count), dtype=np.int64)
        for (i, j), expr in amount.items():
            current[i, j] = int(solver.Value(expr))
        v.append(int(solver.Value(level_count)))
        settled = sum(n * x for n, x in enumerate(v, start=1))
        report(progress, settled, population, f"level {level} solved, vector so far {vector_text(v)}")
        level += 1
    return OptimalOutcome(Cells.from_dense(current), proven, len(v), time.perf_counter() - started)


def _too_large(size: int, q_count: int, r_count: int) -> None:
    raise ProblemTooLargeError(
        f"The optimal schedule would need at least {size:,} decision variables per level "
        f"({q_count:,} quasi-identifier values x {r_count:,} resources); the limit is "
        f"{OPTIMAL_LIMIT:,}. Use the heuristic, fewer quasi-identifier columns or fewer slots."
    )


def _add_fairness(model, amount, labels, max_share: float, q_count: int, r_count: int) -> None:
    """Ethical point E2: in each resource, no label has more than ``max_share`` of the people."""
    if not 0 < max_share <= 1:
        raise ParameterError(f"The maximum share per resource must be between 0 and 1; got {max_share}.")
    labels = np.asarray(labels, dtype=object)
    if labels.shape != (q_count,):
        raise ParameterError("Give one fairness label per quasi-identifier value.")
    permille = int(round(max_share * 1000))
    for j in range(r_count):
        everyone = [amount[i, j] for i in range(q_count) if (i, j) in amount]
        if not everyone:
            continue
        for label in pd.unique(labels):
            members = [amount[i, j] for i in np.flatnonzero(labels == label) if (i, j) in amount]
            if members:
                model.Add(1000 * sum(members) <= permille * sum(everyone))


def _grouped_heuristic(f: np.ndarray, c: np.ndarray, allowed: np.ndarray, rule: str = DEFAULT_RULE) -> np.ndarray:
    """Heuristic matrix respecting ``allowed`` when it is block-structured (regions)."""
    matrix = np.zeros((f.size, c.size), dtype=np.int64)
    keys = [allowed[i].tobytes() for i in range(f.size)]
    for key in dict.fromkeys(keys):
        rows = np.array([i for i, k in enumerate(keys) if k == key])
        cols = np.flatnonzero(allowed[rows[0]])
        part = heuristic_cells(f[rows], c[cols], rule)
        matrix[rows[part.rows], cols[part.cols]] = part.counts
    return matrix


# --- what a schedule costs ----------------------------------------------------------------

# Measured on 2 shared cores: the heuristic places about 300,000 cells a second,
# the random method about 10^6 people a second, and CP-SAT models take about
# 3 kB and 20 us to build per decision variable.
_HEURISTIC_CELL_SECONDS = 3e-6
_RANDOM_PERSON_SECONDS = 1e-6
_VARIABLE_BYTES = 3_000
_VARIABLE_SECONDS = 2e-5


def estimate_assign(
    freqs: Sequence[int], capacities: Sequence[int], method: str = "heuristic", *, time_limit: float | None = None
) -> WorkEstimate:
    """What ``assign`` (and ``make_schedule``) will cost, before starting: cells for the
    heuristic, people for the random method, decision variables for the optimum
    (whose solver stops at ``time_limit``, 10 s by default).

    >>> e = estimate_assign([4, 4, 5, 2], [4, 2, 4, 3, 2], "optimal")
    >>> e.what, e.operations, e.seconds <= 10.1
    ('solving an optimal schedule of 15 people with 75 decision variables per level', 75, True)
    >>> estimate_assign([10**6] * 10, [10**7], "random").operations
    10000000
    """
    if method not in METHODS:
        raise ParameterError(f"Unknown method '{method}'. Choose one of: {join_names(METHODS)}.")
    f = _whole_numbers(freqs, "frequencies")
    c = _whole_numbers(capacities, "capacities")
    people = int(f.sum())
    if method == "heuristic":
        cells = f.size + c.size
        return WorkEstimate(
            f"placing {people:,} people in at most {cells:,} cells", cells,
            cells * _HEURISTIC_CELL_SECONDS, cells * 8 * 8,
        )
    if method == "random":
        seats = int(c.sum())
        return WorkEstimate(
            f"drawing random seats for {people:,} people", people,
            seats * _RANDOM_PERSON_SECONDS, seats * 8 * 5,
        )
    if f.size * c.size > OPTIMAL_LIMIT:
        variables = f.size * c.size
    else:
        bounds = np.minimum.outer(f, c)
        variables = int((bounds[bounds > 0] + 1).sum())
    limit = 10.0 if time_limit is None else float(time_limit)
    return WorkEstimate(
        f"solving an optimal schedule of {people:,} people with {variables:,} decision variables per level",
        variables, limit + variables * _VARIABLE_SECONDS, variables * _VARIABLE_BYTES,
    )


# --- the contract entry point --------------------------------------------------------------


def assign(
    freqs: Sequence[int],
    capacities: Sequence[int],
    method: str = "heuristic",
    *,
    rule: str | None = None,
    seed: int | None = None,
    time_limit: float | None = None,
    groups: tuple[Sequence, Sequence] | None = None,
    progress: Progress | None = None,
) -> sparse.csr_array:
    """Assignment matrix: one row per frequency (given order), one column per capacity,
    as a ``scipy.sparse.csr_array`` (``.toarray()`` gives the dense matrix).

    Row sums equal ``freqs``; column sums stay within ``capacities``. ``method`` is
    "heuristic" (Algorithm 2, ``rule`` in RULES), "random" (seeded) or "optimal"
    (Algorithm 1, ``time_limit`` seconds, default 10). ``groups`` = (label per
    frequency, label per capacity) keeps people inside their own group (region).
    ``progress(done, total, what)`` reports the optimal method's solved levels.

    >>> a = assign([4, 4, 5, 2], [4, 2, 4, 3, 2], "optimal", time_limit=20)
    >>> type(a).__name__, a.sum(axis=1).tolist(), bool((a.sum(axis=0) <= [4, 2, 4, 3, 2]).all())
    ('csr_array', [4, 4, 5, 2], True)
    >>> assign([3], [2], "random")
    Traceback (most recent call last):
    ...
    anonlib.core.errors.CapacityError: The resources have 2 seats in total but 3 people need an appointment: 1 seats short. Add slots or raise capacities.
    """
    cells, _ = _solve(
        freqs, capacities, method, rule=rule, seed=seed, time_limit=time_limit, groups=groups, progress=progress,
    )
    return cells.sparse()


_NARROW_SCHEDULE = "use the heuristic, or schedule one region (--group) at a time"


def _solve(freqs, capacities, method, *, rule=None, seed=None, time_limit=None, groups=None,
           fair_labels=None, max_share=None, progress=None) -> tuple[Cells, bool | None]:
    """Cells of the schedule and whether it is proven optimal (None for non-optimal methods)."""
    if method not in METHODS:
        raise ParameterError(f"Unknown method '{method}'. Choose one of: {join_names(METHODS)}.")
    f = _whole_numbers(freqs, "frequencies")
    c = _whole_numbers(capacities, "capacities")
    seed, time_limit = seed_number(seed), time_limit_seconds(time_limit)
    check_work(estimate_schedule(f, c, method), narrow=_NARROW_SCHEDULE)
    parts = _groups_of(f, c, groups)
    shape = (f.size, c.size)
    if method == "optimal":
        if f.size * c.size > OPTIMAL_LIMIT:
            _too_large(f.size * c.size, f.size, c.size)
        allowed = np.zeros(shape, dtype=bool)
        for rows, cols, _ in parts:
            allowed[np.ix_(rows, cols)] = True
        outcome = optimal_cells(
            f, c, time_limit=10.0 if time_limit is None else time_limit, allowed=allowed,
            hint=_grouped_heuristic(f, c, allowed, rule or DEFAULT_RULE),
            fair_labels=fair_labels, max_share=max_share, progress=progress,
        )
        return outcome.cells, outcome.proven_optimal
    pieces = []
    for g, (rows, cols, _) in enumerate(parts):
        if method == "heuristic":
            part = heuristic_cells(f[rows], c[cols], rule or DEFAULT_RULE)
        else:
            part = random_cells(f[rows], c[cols], None if seed is None else [seed, g])
        pieces.append((rows[part.rows], cols[part.cols], part.counts))
    return Cells(*(np.concatenate([p[k] for p in pieces]) for k in range(3)), shape), None


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
    f = _whole_numbers(freqs, "frequencies").tolist()
    c = _whole_numbers(capacities, "capacities")
    _check_fit(np.asarray(f, dtype=np.int64), c)
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

    >>> heuristic = assign([4, 4, 5, 2], [4, 2, 4, 3, 2], rule="largest")
    >>> schedule_rank([4, 4, 5, 2], [4, 2, 4, 3, 2], heuristic)
    (339, 14504)
    """
    cells = Cells.from_matrix(matrix)
    f = _whole_numbers(freqs, "frequencies")
    c = _whole_numbers(capacities, "capacities")
    row_sums = np.bincount(cells.rows, weights=cells.counts, minlength=f.size)
    if cells.shape != (f.size, c.size) or (row_sums != f).any() or (cells.loads() > c).any():
        raise ParameterError(
            "The schedule does not fit the problem: it needs one row per frequency with that "
            "row sum, one column per resource, and no column above its capacity."
        )
    census = enumerate_schedules(f, c)
    return census.at_most(cells.vector), census.total


# --- schedules for a population table ----------------------------------------------------


@dataclass(frozen=True)
class ScheduleResult:
    """A schedule for a population table, with everything the page shows.

    ``classes`` has one row per quasi-identifier value (and group) with its
    ``frequency``; ``cells`` the non-zero cells of the assignment; ``assignment``
    each population row's resource (row of ``resources``; None when the population
    came with a count column). ``schedule`` builds the per-person table
    (population rows + resource columns), or, with a count column, one row per
    cell with that count; it is built on request, as ``schedule_chunks`` builds
    it in pieces, so a result for 10^7 people holds one small integer per person
    rather than a second copy of the population. ``index`` is the exact
    lexicographic index (None above ``EXACT_INDEX_LIMIT`` people);
    ``proven_optimal`` is None for the heuristic and random methods.
    """

    method: str
    rule: str | None
    classes: pd.DataFrame
    resources: pd.DataFrame
    cells: Cells
    base_vector: tuple[int, ...]
    vector: tuple[int, ...]
    index: int | None
    proven_optimal: bool | None
    seconds: float
    assignment: np.ndarray | None = field(default=None, repr=False, compare=False)
    population: pd.DataFrame | None = field(default=None, repr=False, compare=False)
    count: str | None = None
    slot_columns: tuple[str, ...] = ()

    @property
    def matrix(self) -> sparse.csr_array:
        """The Q x R assignment matrix (sparse, as ``assign`` returns it)."""
        return self.cells.sparse()

    @property
    def k(self) -> int:
        """k-anonymity with the appointment columns added."""
        return k_of(self.vector)

    @property
    def loads(self) -> pd.DataFrame:
        """Resources with their capacity and the number of people sent there."""
        out = self.resources.copy()
        out["assigned"] = self.cells.loads()
        return out

    @property
    def schedule(self) -> pd.DataFrame:
        """The whole schedule table (built now: keep it in a variable rather than asking twice)."""
        return pd.concat(list(self.schedule_chunks()), ignore_index=True)

    def schedule_chunks(self, size: int = 1_000_000) -> Iterator[pd.DataFrame]:
        """The schedule table in pieces of ``size`` rows (for writing large schedules)."""
        slots = self.resources[list(self.slot_columns)].reset_index(drop=True)
        if self.count is not None:
            key = [c for c in self.classes.columns if c != "frequency"]
            for start in range(0, max(self.cells.counts.size, 1), size):
                part = slice(start, start + size)
                out = self.classes.iloc[self.cells.rows[part]][key].reset_index(drop=True)
                out = pd.concat([out, slots.iloc[self.cells.cols[part]].reset_index(drop=True)], axis=1)
                out[self.count] = self.cells.counts[part]
                yield out
            return
        overlap = {c: f"{c} (slot)" for c in slots.columns if c in self.population.columns}
        slots = slots.rename(columns=overlap)
        for start in range(0, max(len(self.population), 1), size):
            part = slice(start, start + size)
            people = self.population.iloc[part].reset_index(drop=True)
            assigned = slots.iloc[self.assignment[part]].reset_index(drop=True)
            yield pd.concat([people, assigned], axis=1)


def make_schedule(
    population: pd.DataFrame,
    resources: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    *,
    count: str | None = None,
    capacity: str = "capacity",
    group: str | None = None,
    method: str = "heuristic",
    rule: str | None = None,
    seed: int | None = None,
    time_limit: float | None = None,
    fair_attribute: str | None = None,
    max_share: float | None = None,
    progress: Progress | None = None,
) -> ScheduleResult:
    """Schedule a population (one row per person, or rows with a ``count``) onto resources.

    ``resources`` has one row per slot and a ``capacity`` column; every other
    column (centre, day, hour...) describes the slot and is added to each
    person's row. With ``group`` (a column of both tables, e.g. region) people
    only go to resources of their own group. ``fair_attribute``/``max_share``
    add the E2 constraint to the optimal method.

    >>> pop = pd.DataFrame({"zip": ["1", "1", "2"], "n": [2, 2, 1]})
    >>> res = pd.DataFrame({"centre": ["A", "B"], "capacity": [4, 2]})
    >>> r = make_schedule(pop, res, ["zip"], count="n")
    >>> r.base_vector, r.vector, r.schedule["n"].tolist()
    ((1, 0, 0, 1), (1, 0, 0, 1), [4, 1])
    """
    started = time.perf_counter()
    qis = list(quasi_identifiers)
    if not qis:
        raise ParameterError("Choose at least one quasi-identifier column for the population.")
    require_columns(population, qis + ([group] if group else []))
    slot_columns = _resource_columns(resources, capacity, group)
    capacities = _capacity_values(resources, capacity)
    key = ([group] if group else []) + [q for q in qis if q != group]
    table = encode(population, key, count=count)
    classes = table.classes()
    order, freqs, first_rows = _first_appearance(classes)
    class_table = population.iloc[first_rows][key].reset_index(drop=True)
    class_table["frequency"] = freqs
    if method in METHODS:  # before the vector before: it alone may be too large
        cells_out = len(population) * (len(key) + len(slot_columns))
        check_work(estimate_schedule(freqs, capacities, method, table_cells=cells_out), narrow=_NARROW_SCHEDULE)
    base = anonymity_vector(classes.sizes if key == qis else table.classes(qis).sizes)
    del table
    groups = None
    if group:
        groups = (class_table[group].astype(str).to_numpy(), resources[group].astype(str).to_numpy())
        missing = sorted(set(groups[0]) - set(groups[1]))
        if missing:
            raise CapacityError(
                f"No resources for {join_names(missing)} in column '{group}'; every group of the "
                "population needs at least one resource of its own."
            )
    fair_labels = None
    if fair_attribute is not None:
        if fair_attribute not in key:
            raise ColumnError(f"The fairness attribute '{fair_attribute}' must be one of the quasi-identifiers.")
        fair_labels = class_table[fair_attribute].astype(str).to_numpy()
    cells, proven = _solve(
        freqs, capacities, method, rule=rule, seed=seed, time_limit=time_limit, groups=groups,
        fair_labels=fair_labels, max_share=max_share, progress=progress,
    )
    vector = cells.vector
    people = int(freqs.sum())
    index = lex_index(vector) if people <= EXACT_INDEX_LIMIT else None
    assignment = None if count is not None else _resource_per_record(classes.ids, order, cells)
    return ScheduleResult(
        method=method,
        rule=(rule or DEFAULT_RULE) if method != "random" else None,
        classes=class_table,
        resources=resources.reset_index(drop=True),
        cells=cells,
        base_vector=base,
        vector=vector,
        index=index,
        proven_optimal=proven,
        seconds=time.perf_counter() - started,
        assignment=assignment,
        population=None if count is not None else population.reset_index(drop=True),
        count=count,
        slot_columns=tuple(slot_columns),
    )


def _resource_columns(resources: pd.DataFrame, capacity: str, group: str | None) -> list[str]:
    if resources.shape[0] == 0:
        raise CapacityError("There are no resources: add at least one slot with a capacity.")
    require_columns(resources, [capacity] + ([group] if group else []))
    return [c for c in resources.columns if c not in (capacity, group)]


def _capacity_values(resources: pd.DataFrame, capacity: str) -> np.ndarray:
    raw = pd.to_numeric(resources[capacity], errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(raw) | (raw < 0) | (np.floor(raw) != raw)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ParameterError(
            f"Capacities must be whole numbers of 0 or more; resource row {row + 1} has "
            f"'{resources[capacity].iloc[row]}'."
        )
    return _whole_numbers(raw, "capacities")  # at most MAX_COUNT each and in total


def _first_appearance(classes: Classes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Classes renumbered in order of first appearance (as the paper's Table 7).

    Returns (new number of each kernel class id, frequencies in the new order, first row of each).
    """
    n = classes.n_classes
    first = np.full(n, classes.ids.size, dtype=np.int64)
    np.minimum.at(first, classes.ids, np.arange(classes.ids.size))
    by_first = np.argsort(first, kind="stable")
    order = np.empty(n, dtype=np.int64)
    order[by_first] = np.arange(n)
    return order, classes.sizes[by_first], first[by_first]


def _resource_per_record(ids: np.ndarray, order: np.ndarray, cells: Cells) -> np.ndarray:
    """Each record's resource: the records of a class take its cells' seats in row order.

    >>> cells = Cells(np.array([0, 0, 1]), np.array([1, 0, 1]), np.array([1, 2, 1]), (2, 2))
    >>> _resource_per_record(np.array([0, 1, 0, 0]), np.array([0, 1]), cells).tolist()
    [0, 1, 0, 1]
    """
    rows = order[ids]  # each record's class row
    by_class = np.argsort(rows, kind="stable")
    del rows
    sequence = np.lexsort((cells.cols, cells.rows))
    small = np.int32 if cells.shape[1] < 2**31 else np.int64
    resource = np.empty(by_class.size, dtype=small)
    resource[by_class] = np.repeat(cells.cols[sequence].astype(small), cells.counts[sequence])
    return resource


# --- comparing methods, generating slots (what the Screening page shows) -------------


@dataclass(frozen=True)
class ScheduleComparison:
    """Schedules of the same population by several methods, and the vector before any."""

    base_vector: tuple[int, ...]
    base_index: int | None
    results: dict[str, ScheduleResult]
    skipped: dict[str, str] = field(default_factory=dict)  # method -> why it was not computed

    def improvement(self, better: str, worse: str) -> float:
        """Anonymity improvement of method ``better`` over method ``worse`` (section 5.3)."""
        return improvement(self.results[better].vector, self.results[worse].vector, self.base_vector)

    def census(self) -> "ScheduleCensus":
        """Every feasible schedule of this (small, ungrouped) problem, by vector.

        Raises ``ProblemTooLargeError`` when enumeration would take too long.
        """
        first = next(iter(self.results.values()))
        return enumerate_schedules(first.classes["frequency"].to_numpy(), first.loads["capacity"].to_numpy())

    def summary(self) -> pd.DataFrame:
        """One row per schedule (and "before"): vector, k, exact index, improvement over random."""
        rows = [_summary_row("before appointments", self.base_vector, self.base_index, None, None, None)]
        for method, result in self.results.items():
            gain = self.improvement(method, "random") if "random" in self.results else None
            rows.append(_summary_row(method, result.vector, result.index, gain, result.proven_optimal, result.seconds))
        return pd.DataFrame(rows)


def _summary_row(name, vector, index, gain, proven, seconds) -> dict:
    return {
        "schedule": name,
        "anonymity vector": vector_text(vector, limit=12),
        "k": k_of(vector),
        "lexicographic index": "-" if index is None else str(index),
        "index (scientific)": "-" if index is None else scientific(index),
        "improvement over random (%)": None if gain is None else round(100 * gain, 4),
        "proven optimal": "-" if proven is None else ("yes" if proven else "no (time limit)"),
        "seconds": None if seconds is None else round(seconds, 3),
    }


def compare_methods(
    population: pd.DataFrame,
    resources: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    *,
    methods: Sequence[str] = ("random", "heuristic", "optimal"),
    count: str | None = None,
    capacity: str = "capacity",
    group: str | None = None,
    rule: str | None = None,
    seed: int | None = 0,
    time_limit: float | None = 10.0,
    fair_attribute: str | None = None,
    max_share: float | None = None,
    progress: Progress | None = None,
    skip_too_large: bool = False,
) -> ScheduleComparison:
    """``make_schedule`` with each method on the same data (random, heuristic, optimal...).

    With ``skip_too_large`` a method refusing the problem size (the optimum on
    large data) is left out and explained in ``skipped`` instead of failing all.

    >>> pop = pd.DataFrame({"zip": list("aaab"), "sex": list("fffm")})
    >>> res = pd.DataFrame({"slot": ["9h", "13h"], "capacity": [3, 1]})
    >>> c = compare_methods(pop, res, ["zip", "sex"], methods=("heuristic", "optimal"))
    >>> c.base_vector, c.results["heuristic"].vector, c.results["optimal"].vector
    ((1, 0, 1), (1, 0, 1), (1, 0, 1))
    """
    unknown = [m for m in methods if m not in METHODS]
    if unknown or not methods:
        raise ParameterError(f"Choose methods among {join_names(METHODS)}; got {join_names(unknown) or 'none'}.")
    results: dict[str, ScheduleResult] = {}
    skipped: dict[str, str] = {}
    for method in methods:
        try:
            results[method] = make_schedule(
                population, resources, quasi_identifiers, count=count, capacity=capacity, group=group,
                method=method, rule=rule, seed=seed, time_limit=time_limit,
                fair_attribute=fair_attribute if method == "optimal" else None,
                max_share=max_share if method == "optimal" else None,
                progress=progress if method == "optimal" else None,
            )
        except ProblemTooLargeError as err:
            if not skip_too_large or len(methods) == 1:
                raise
            skipped[method] = str(err)
    if not results:
        raise ProblemTooLargeError(" ".join(skipped.values()))
    base = next(iter(results.values())).base_vector
    people = population_of(base)
    return ScheduleComparison(base, lex_index(base) if people <= EXACT_INDEX_LIMIT else None, results, skipped)


def generate_slots(
    centres: int = 3,
    days: int = 5,
    hours: Sequence[int] = (9, 11, 13, 15),
    capacity: int = 10,
    noise: float = 0.2,
    seed: int | None = 0,
) -> pd.DataFrame:
    """A resource table: every centre x day x hour slot with a capacity around ``capacity``.

    Capacities are drawn around ``capacity`` with relative standard deviation
    ``noise`` (0 = all equal), rounded, at least 1.

    >>> generate_slots(centres=2, days=1, hours=(9,), capacity=5, noise=0)
      centre  day  hour  capacity
    0      A    1     9         5
    1      B    1     9         5
    """
    centres, days, capacity = (
        whole_number(value, f"The number of {name}", minimum=1, maximum=limit)
        for name, value, limit in (("centres", centres, 100_000), ("days", days, 100_000), ("capacity", capacity, 10**9))
    )
    if not hours:
        raise ParameterError("Give at least one hour for the slots.")
    hours = [whole_number(h, "Each hour", maximum=23) for h in hours]
    noise = real_number(noise, "The capacity noise", minimum=0.0, maximum=10.0)
    seed = seed_number(seed)
    names = [_centre_name(i) for i in range(int(centres))]
    grid = pd.MultiIndex.from_product(
        [names, range(1, int(days) + 1), [int(h) for h in hours]], names=["centre", "day", "hour"]
    ).to_frame(index=False)
    rng = np.random.default_rng(seed)
    drawn = np.rint(rng.normal(capacity, noise * capacity, len(grid))) if noise else np.full(len(grid), capacity)
    grid["capacity"] = np.maximum(1, drawn).astype(np.int64)
    return grid


def _centre_name(i: int) -> str:
    name = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        name = chr(65 + r) + name
    return name
