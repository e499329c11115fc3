"""The three ways to fill the resources: Algorithm 2 (the heuristic, with its rules), the
random baseline, and Algorithm 1 (the optimal schedule, proven with CP-SAT), each with its
work estimate; ``assign`` is the contract's entry point."""

from __future__ import annotations

import bisect
import heapq
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse

from ...core.budget import Progress, WorkEstimate, check_work, report
from ...core.equivalence import Classes, combine
from ...core.errors import ParameterError, ProblemTooLargeError, join_names
from ...core.numbers import seed_number, time_limit_seconds, whole_numbers
from ...measures.avector import vector_text
from .cells import (
    DEFAULT_RULE,
    METHODS,
    OPTIMAL_LIMIT,
    RULES,
    Cells,
    check_fit,
    estimate_schedule,
    groups_of,
)

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
    f = whole_numbers(freqs, "The frequencies")
    c = whole_numbers(capacities, "The capacities")
    if rule not in RULES:
        raise ParameterError(f"Unknown split rule '{rule}'. Choose one of: {join_names(RULES)}.")
    check_fit(f, c)
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
        np.asarray(rows, dtype=np.int64),
        np.asarray(cols, dtype=np.int64),
        np.asarray(counts, dtype=np.int64),
        (f.size, c.size),
    )


# --- the random baseline ------------------------------------------------------------------


def random_cells(freqs: Sequence[int], capacities: Sequence[int], seed: int | None = None) -> Cells:
    """Each person gets a uniformly random free seat: shuffle all seats, hand them out.

    >>> random_cells([2, 1], [3], seed=1).counts.tolist()
    [2, 1]
    """
    f = whole_numbers(freqs, "The frequencies")
    c = whole_numbers(capacities, "The capacities")
    check_fit(f, c)
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

    f = whole_numbers(freqs, "The frequencies")
    c = whole_numbers(capacities, "The capacities")
    time_limit = time_limit_seconds(time_limit)
    check_fit(f, c)
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
                    "No schedule satisfies the fairness limit: raise the maximum share per resource or add resources."
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
    f = whole_numbers(freqs, "The frequencies")
    c = whole_numbers(capacities, "The capacities")
    people = int(f.sum())
    if method == "heuristic":
        cells = f.size + c.size
        return WorkEstimate(
            f"placing {people:,} people in at most {cells:,} cells",
            cells,
            cells * _HEURISTIC_CELL_SECONDS,
            cells * 8 * 8,
        )
    if method == "random":
        seats = int(c.sum())
        return WorkEstimate(
            f"drawing random seats for {people:,} people",
            people,
            seats * _RANDOM_PERSON_SECONDS,
            seats * 8 * 5,
        )
    if f.size * c.size > OPTIMAL_LIMIT:
        variables = f.size * c.size
    else:
        bounds = np.minimum.outer(f, c)
        variables = int((bounds[bounds > 0] + 1).sum())
    limit = 10.0 if time_limit is None else float(time_limit)
    return WorkEstimate(
        f"solving an optimal schedule of {people:,} people with {variables:,} decision variables per level",
        variables,
        limit + variables * _VARIABLE_SECONDS,
        variables * _VARIABLE_BYTES,
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
    cells, _ = solve(
        freqs,
        capacities,
        method,
        rule=rule,
        seed=seed,
        time_limit=time_limit,
        groups=groups,
        progress=progress,
    )
    return cells.sparse()


NARROW_SCHEDULE = "use the heuristic, or schedule one region (--group) at a time"


def solve(
    freqs,
    capacities,
    method,
    *,
    rule=None,
    seed=None,
    time_limit=None,
    groups=None,
    fair_labels=None,
    max_share=None,
    progress=None,
) -> tuple[Cells, bool | None]:
    """Cells of the schedule and whether it is proven optimal (None for non-optimal methods)."""
    if method not in METHODS:
        raise ParameterError(f"Unknown method '{method}'. Choose one of: {join_names(METHODS)}.")
    f = whole_numbers(freqs, "The frequencies")
    c = whole_numbers(capacities, "The capacities")
    seed, time_limit = seed_number(seed), time_limit_seconds(time_limit)
    check_work(estimate_schedule(f, c, method), narrow=NARROW_SCHEDULE)
    parts = groups_of(f, c, groups)
    shape = (f.size, c.size)
    if method == "optimal":
        if f.size * c.size > OPTIMAL_LIMIT:
            _too_large(f.size * c.size, f.size, c.size)
        allowed = np.zeros(shape, dtype=bool)
        for rows, cols, _ in parts:
            allowed[np.ix_(rows, cols)] = True
        outcome = optimal_cells(
            f,
            c,
            time_limit=10.0 if time_limit is None else time_limit,
            allowed=allowed,
            hint=_grouped_heuristic(f, c, allowed, rule or DEFAULT_RULE),
            fair_labels=fair_labels,
            max_share=max_share,
            progress=progress,
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
