"""Searching the lattice of policies for the frontier: SHS (sublattice heuristic), RCS
(random chains) and exhaustive search within a budget (``explore``)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...core.budget import WorkEstimate, check_work
from ...core.errors import ParameterError, ProblemTooLargeError, join_names
from ...core.numbers import seed_number
from .dominance import Frontier, frontier_area
from .policy_lattice import PrunedSublattices, random_maximal_chain, random_sublattice, search_non_overlapping
from .space import (
    DEFAULT_THRESHOLD,
    DRAWS_PER_POLICY,
    EXHAUSTIVE_MAX_BITS,
    METHODS,
    PolicySpace,
    ProgressCallback,
    prepare,
)

# --- searching the lattice --------------------------------------------------------


@dataclass(frozen=True)
class FrontierEntry:
    """A frontier policy: its bits per attribute, risk, raw and normalized KL loss."""

    bits: dict[str, tuple[int, ...]]
    risk: float
    loss: float
    loss_normalized: float

    @property
    def bitstring(self) -> str:
        """All attributes' bits concatenated, in quasi-identifier order."""
        return "".join("".join(map(str, b)) for b in self.bits.values())


@dataclass(frozen=True, eq=False)
class FrontierSearch:
    """A search's frontier plus everything it evaluated and how the area evolved.

    ``evaluated_bits`` holds one row per evaluated policy (in evaluation order)
    with ``evaluated_risk`` and ``evaluated_loss`` (normalized); ``trace`` is
    ``(policies evaluated, frontier area)`` after every frontier change.
    """

    method: str
    space: PolicySpace
    frontier: tuple[FrontierEntry, ...]
    frontier_ids: np.ndarray
    evaluated_bits: np.ndarray
    evaluated_risk: np.ndarray
    evaluated_loss: np.ndarray
    trace: tuple[tuple[int, float], ...]
    seconds: float
    budget: int
    seed: int | None
    threshold: float | None

    @property
    def n_evaluated(self) -> int:
        return int(self.evaluated_risk.size)

    @property
    def area(self) -> float:
        """Area under the final frontier (normalized R-U square)."""
        return frontier_area([e.risk for e in self.frontier], [e.loss_normalized for e in self.frontier])

    def area_after(self, n_policies: int) -> float:
        """Area of the frontier as it was after ``n_policies`` evaluations."""
        area = 1.0
        for n, value in self.trace:
            if n > n_policies:
                break
            area = value
        return area

    def frontier_table(self) -> pd.DataFrame:
        """One row per frontier policy: risk, loss, normalized loss, intervals, bits."""
        rows = []
        for i, e in enumerate(self.frontier):
            row = {"policy": i + 1, "risk": e.risk, "loss (KL, nats)": e.loss, "loss (normalized)": e.loss_normalized}
            row.update({f"{a} intervals": sum(b) + 1 for a, b in e.bits.items()})
            row["bits"] = e.bitstring
            rows.append(row)
        return pd.DataFrame(rows)


class _BudgetSpent(Exception):
    """Internal: the policy budget is used up."""


class _Run:
    """Bookkeeping shared by the searches: a cache of evaluated policies, the
    frontier, the area trace and progress reports. The budget counts distinct
    policies whose risk and loss were computed (a policy met again is free)."""

    def __init__(self, space: PolicySpace, budget: int, progress: ProgressCallback | None) -> None:
        self.space = space
        self.budget = budget
        self.progress = progress
        self.every = max(1, budget // 100)
        self.cache: dict[bytes, int] = {}
        self.bits = np.zeros((min(budget, 1024), space.n_bits), dtype=bool)  # grows by doubling
        self.risk: list[float] = []
        self.loss: list[float] = []
        self.frontier = Frontier()
        self.trace: list[tuple[int, float]] = []
        self.scale = 1.0 / space.top_loss if space.top_loss > 0 else 0.0

    @property
    def n(self) -> int:
        return len(self.risk)

    def visit(self, bits: np.ndarray, *, new: bool = False) -> tuple[float, float]:
        """Score a policy (once) and update the frontier. ``new=True`` skips the
        look-up for callers that never repeat a policy (the exhaustive search)."""
        if not new:
            key = np.packbits(bits).tobytes()
            known = self.cache.get(key)
            if known is not None:
                return self.risk[known], self.loss[known]
        if self.n >= self.budget:
            raise _BudgetSpent
        risk, loss = self.space.evaluate(bits)
        loss *= self.scale
        i = self.n
        if not new:
            self.cache[key] = i
        if i == self.bits.shape[0]:
            self.bits = np.concatenate([self.bits, np.zeros_like(self.bits)])
        self.bits[i] = bits
        self.risk.append(risk)
        self.loss.append(loss)
        if self.frontier.update(i, risk, loss):
            self.trace.append((i + 1, self.frontier.area()))
        if self.progress is not None and (i + 1) % self.every == 0:
            self.progress(i + 1, self.budget, self.trace[-1][1])
        return risk, loss


def _random_chain_search(run: _Run, rng: np.random.Generator) -> None:
    """Algorithm 1 (RCS): top, bottom, then random maximal chains walked from
    bottom to top until the budget is spent."""
    run.visit(run.space.top)
    run.visit(run.space.bottom)
    idle = 0
    for _ in range(DRAWS_PER_POLICY * run.budget):  # a bound on draws: late ones rarely find a new policy
        if idle >= 50:
            return
        before = run.n
        for policy in random_maximal_chain(run.space.n_bits, rng):
            run.visit(policy)
        idle = idle + 1 if run.n == before else 0


def _sublattice_heuristic_search(run: _Run, rng: np.random.Generator, threshold: float) -> None:
    """Algorithm 2 (SHS) with the Appendix's non-overlapping sublattices."""
    space = run.space
    run.visit(space.top)  # initializeFrontier(): top and bottom
    run.visit(space.bottom)
    pruned = PrunedSublattices(space.n_bits)
    idle = 0
    for _ in range(DRAWS_PER_POLICY * run.budget):  # a bound on draws: late ones rarely find a new policy
        if idle >= 1000:
            return
        literals = search_non_overlapping(pruned, rng)  # Algorithm 3 (SNL)
        if literals is None:
            return  # the pruned sublattices cover the whole lattice (or nearly: SNL gave up)
        sub = random_sublattice(space.n_bits, literals, rng)
        before = run.n
        upper = run.visit(sub.upper)
        lower = run.visit(sub.lower)
        p = run.frontier.update_probability(upper, lower)  # H(sublattice, f), Eq. 1
        if p > threshold:  # conditions 2 and 3: walk a random maximal chain of it
            for policy in sub.random_chain(rng)[1:-1]:
                run.visit(policy)
        elif p == 0:  # condition 1: entirely dominated, prune
            pruned.add(sub)
        idle = idle + 1 if run.n == before else 0


def _exhaustive(run: _Run, space: PolicySpace) -> None:
    """Every policy of the lattice, in binary counting order."""
    if space.n_bits > EXHAUSTIVE_MAX_BITS:
        raise ProblemTooLargeError(
            f"These quasi-identifiers give {space.n_bits} bits, so 2^{space.n_bits} = "
            f"{space.n_policies:,} policies; the exhaustive search stops at 2^{EXHAUSTIVE_MAX_BITS} "
            f"= {1 << EXHAUSTIVE_MAX_BITS:,}. Use SHS or RCS, or fewer or coarser attributes."
        )
    shifts = np.arange(space.n_bits - 1, -1, -1, dtype=np.int64)
    for number in range(space.n_policies):
        run.visit(((number >> shifts) & 1).astype(bool), new=True)


# Seconds per policy evaluated by a search (measured on Adult, 2 cores): a fixed part (the
# search's bookkeeping), one per distinct data or population row counted, one per bit of the
# policy (kept, hashed and walked). E.g. SHS on Adult's age and fnlwgt (29,147 rows, 21,719 bits):
# 3.5 ms per policy measured, 4.8 ms estimated; age, sex, race, education, marital-status
# (6,493 rows, 98 bits): 0.57 ms measured, 0.67 ms estimated.
_POLICY_SECONDS, _ROW_SECONDS, _BIT_SECONDS = 4e-4, 4e-8, 1.5e-7
# The exhaustive walk evaluates the lattice level by level without a heuristic's bookkeeping: sex,
# zip and diagnosis of a 2,000-record file (4,096 policies) took 0.1 s, 2.4e-5 s per policy.
_EXHAUSTIVE_POLICY_SECONDS = 3e-5


def estimate_explore(space: PolicySpace, method: str = "shs", budget: int = 1000) -> WorkEstimate:
    """What ``explore`` will cost: policies x (rows counted and bits kept per policy),
    and the evaluated policies' bits held in memory (twice, while their array grows).

    >>> space = prepare(pd.DataFrame({"age": [20, 30, 30, 40, 50]}), ["age"])
    >>> e = estimate_explore(space, "shs", 1000)
    >>> e.operations, e.seconds < 1
    (8, True)
    """
    policies = space.n_policies if method == "exhaustive" else min(int(budget), space.n_policies)
    rows = space._weights.shape[0] + (0 if space._population_weights is None else space._population_weights.shape[0])
    per_policy = _EXHAUSTIVE_POLICY_SECONDS if method == "exhaustive" else _POLICY_SECONDS
    seconds = policies * (per_policy + _ROW_SECONDS * rows + _BIT_SECONDS * space.n_bits)
    peak = 2 * policies * space.n_bits + 8 * rows * (len(space.attributes) + 4)
    return WorkEstimate(
        f"evaluating {policies:,} policies of {space.n_bits:,} bits on {rows:,} distinct rows", policies, seconds, peak
    )


def explore(
    space: PolicySpace,
    method: str = "shs",
    budget: int = 1000,
    *,
    seed: int | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    progress: ProgressCallback | None = None,
) -> FrontierSearch:
    """Search the policy lattice of ``space`` and return the frontier with the trace.

    ``budget`` is the number of distinct policies evaluated (ignored by
    ``"exhaustive"``, which evaluates all ``2 ** n_bits``). ``threshold`` is
    SHS's TH: a sublattice whose H exceeds it gets a random chain walked.
    ``progress(evaluated, budget, area)`` is called about 100 times.

    >>> df = pd.DataFrame({"age": [20, 30, 30, 40, 50], "sex": list("fmfmf")})
    >>> result = explore(prepare(df, ["age", "sex"]), "exhaustive")
    >>> result.n_evaluated, len(result.frontier), round(result.area, 4)
    (16, 8, 0.7885)
    """
    if method not in METHODS:
        raise ParameterError(f"Unknown search method '{method}'; choose one of {join_names(METHODS)}.")
    if method == "exhaustive":
        budget = space.n_policies
    elif not isinstance(budget, (int, np.integer)) or budget < 2:
        raise ParameterError(f"The budget must be a whole number of at least 2 policies (got {budget}).")
    if not 0.0 <= threshold <= 1.0:
        raise ParameterError(f"The threshold is a probability between 0 and 1 (got {threshold}).")
    budget = int(min(budget, space.n_policies))
    if method != "exhaustive" or space.n_bits <= EXHAUSTIVE_MAX_BITS:  # beyond, _exhaustive says why
        check_work(
            estimate_explore(space, method, budget),
            narrow="lower the budget, or choose fewer or coarser quasi-identifiers (an attribute with "
            "many values, such as a full ZIP code or a weight, adds a bit per value)",
        )
    seed = seed_number(seed)
    run = _Run(space, budget, progress)
    rng = np.random.default_rng(seed)
    started = time.perf_counter()
    try:
        if budget == space.n_policies and space.n_bits <= EXHAUSTIVE_MAX_BITS:
            # a budget covering the whole lattice: every policy, in order, which is where a random
            # search would end, without its long tail of draws that find nothing new
            _exhaustive(run, space)
        elif method == "rcs":
            _random_chain_search(run, rng)
        elif method == "shs":
            _sublattice_heuristic_search(run, rng, threshold)
        else:
            _exhaustive(run, space)
    except _BudgetSpent:
        pass
    seconds = time.perf_counter() - started
    if progress is not None:
        progress(run.n, budget, run.frontier.area())
    ids = run.frontier.ids.copy()
    top_loss = space.top_loss
    frontier = tuple(
        FrontierEntry(
            bits=space.split(run.bits[i]),
            risk=run.risk[i],
            loss=run.loss[i] * top_loss,
            loss_normalized=run.loss[i],
        )
        for i in ids
    )
    return FrontierSearch(
        method=method,
        space=space,
        frontier=frontier,
        frontier_ids=ids,
        evaluated_bits=run.bits[: run.n].copy(),
        evaluated_risk=np.array(run.risk),
        evaluated_loss=np.array(run.loss),
        trace=tuple(run.trace),
        seconds=seconds,
        budget=budget,
        seed=seed,
        threshold=threshold if method == "shs" else None,
    )


def search_frontier(
    df: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    *,
    method: str = "shs",
    budget: int = 1000,
    seed: int | None = None,
    orders: Mapping[str, Sequence] | None = None,
    population: pd.DataFrame | None = None,
    count: str | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    progress: ProgressCallback | None = None,
) -> list[FrontierEntry]:
    """The risk-utility frontier found by ``method`` ("shs", "rcs" or "exhaustive"),
    sorted by risk. See ``explore`` for the search and ``prepare`` for the inputs.

    >>> df = pd.DataFrame({"age": [20, 30, 30, 40], "sex": list("fmff")})
    >>> [(e.bits["age"], round(e.risk, 2)) for e in search_frontier(df, ["age"], method="exhaustive")]
    [((0, 0), 0.33), ((0, 1), 0.67), ((1, 0), 0.67), ((1, 1), 1.0)]
    """
    space = prepare(df, quasi_identifiers, orders=orders, population=population, count=count)
    return list(explore(space, method, budget, seed=seed, threshold=threshold, progress=progress).frontier)
