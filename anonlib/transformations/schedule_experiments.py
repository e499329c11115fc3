"""The paper's experiments (Caballero, Sen & Nygård, section 8), reproducible with a seed.

* ``reproduce_table10``: random populations (Table 10 protocol), improvement of the
  heuristic over random appointments and of the optimum over the heuristic.
* ``compare_rules``: the same protocol for the three split rules of Algorithm 2
  (how ``schedule.DEFAULT_RULE`` was chosen).
* ``registry_experiment``: the Cancer Registry of Norway fixture (one screening
  day, 4,541 people, 21 centres of 217 seats): heuristic vs the real assignment.
* ``table11_synthetic``: the shape of Table 11 on synthetic regional data.

Table 10 protocol (section 8.1): Q = N // 100 + 5 quasi-identifier values with
frequencies drawn around N / Q (standard deviation 20%, at least 1, adjusted to
sum to N); resource capacities drawn around 10 (standard deviation 20%, at least
1) until their total first reaches N, so total capacity is N plus less than one
resource (the schedule is nearly tight, as in a real screening day).

Example:
    >>> table = reproduce_table10(sizes=(20, 100), runs=5, optimal_runs=0, seed=1)
    >>> table.frame["N"].tolist(), table.frame["paper heuristic / random (%)"].tolist()
    ([20, 100], [24.0, 82.0])
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.budget import WorkEstimate, check_work
from ..core.errors import ParameterError
from ..core.numbers import whole_number
from ..core.samples import sample_path
from ..measures.avector import anonymity_vector, improvement, k_of, lex_index
from .schedule import DEFAULT_RULE, RULES, heuristic_cells, optimal_cells, random_cells

PAPER_TABLE10 = {  # N: (heuristic / random %, C.P. / heuristic % or None)
    20: (24, 1),
    25: (20, 2),
    30: (36, 5),
    35: (42, 12),
    40: (54, 14),
    45: (50, 14),
    50: (62, 10),
    100: (82, None),
    250: (93, None),
    500: (92, None),
    1000: (92, None),
}
PAPER_TABLE11 = pd.DataFrame(
    {
        "region": [1, 2, 3, 4, 9],
        "appointments": [1370100, 348487, 303226, 244990, 132395],
        "dates": [282] * 5,
        "centres": [13, 4, 3, 3, 3],
        "min (%)": [65.4, 1.7, 35.8, 9.5, 0.0],
        "max (%)": [96.9, 65.3, 92.2, 89.3, 21.4],
        "avg (%)": [82.6, 34.4, 58.8, 53.7, 3.6],
    }
)
Progress = Callable[[float, str], None]


PROTOCOLS = ("spec", "authors")


def table10_problem(n: int, rng: np.random.Generator, protocol: str = "spec") -> tuple[np.ndarray, np.ndarray]:
    """One random population and resource set of the Table 10 protocol: (freqs, capacities).

    ``protocol="spec"`` is the paper's text (normal, 20% standard deviations);
    ``"authors"`` follows the authors' published code: frequencies uniform in
    [N/Q - 5, N/Q + 10] and N/10 resources uniform in [5, 14] seats, then raised
    one by one from the first entry until they reach N (frequencies also lowered
    to sum to exactly N).

    >>> f, c = table10_problem(100, np.random.default_rng(0))
    >>> len(f), int(f.sum()), bool(c.sum() >= 100 > c.sum() - c[-1])
    (6, 100, True)
    >>> f, c = table10_problem(100, np.random.default_rng(0), "authors")
    >>> len(f), int(f.sum()), len(c), bool(c.sum() >= 100)
    (6, 100, 10, True)
    """
    if n < 5:
        raise ParameterError(
            f"The Table 10 protocol needs at least 5 people (Q = N/100 + 5 values, each held by someone); got {n}."
        )
    if protocol not in PROTOCOLS:
        raise ParameterError(f"Unknown protocol '{protocol}'. Choose one of: {', '.join(PROTOCOLS)}.")
    q = n // 100 + 5
    if protocol == "authors":
        low, high = max(1, n // q - 5), n // q + 10
        resources = max(1, n // 10)
        return (
            _authors_vector(rng, q, n, low, high, exact=True),
            _authors_vector(rng, resources, n, max(1, n // resources - 5), n // resources + 4, exact=False),
        )
    freqs = np.maximum(1, np.rint(rng.normal(n / q, 0.2 * n / q, q))).astype(np.int64)
    while freqs.sum() != n:  # adjust to exactly n, keeping every value >= 1 (n >= q)
        step = 1 if freqs.sum() < n else -1
        candidates = np.arange(q) if step > 0 else np.flatnonzero(freqs > 1)
        freqs[rng.choice(candidates)] += step
    capacities: list[int] = []
    total = 0
    while total < n:
        c = max(1, int(round(rng.normal(10, 2))))
        capacities.append(c)
        total += c
    return freqs, np.asarray(capacities, dtype=np.int64)


def _authors_vector(rng: np.random.Generator, size: int, n: int, low: int, high: int, exact: bool) -> np.ndarray:
    """Uniform integers in [low, high], raised (first entries below ``high`` first) to sum >= n,
    and when ``exact`` lowered (first entries above ``low`` first) to sum == n."""
    high = max(high, -(-n // size))
    values = rng.integers(low, high + 1, size).astype(np.int64)
    while values.sum() < n:
        below = np.flatnonzero(values < high)
        take = below[: n - int(values.sum())]
        values[take] += 1
    while exact and values.sum() > n:
        above = np.flatnonzero(values > low)
        values[above[: int(values.sum()) - n]] -= 1
    return values


@dataclass(frozen=True)
class Table10:
    """Mean improvements per N next to the paper's, and the protocol's parameters."""

    frame: pd.DataFrame
    seed: int
    runs: int
    optimal_runs: int
    rule: str
    protocol: str = "spec"


def estimate_table10(
    sizes: Sequence[int],
    runs: int,
    *,
    optimal_up_to: int = 50,
    optimal_runs: int = 10,
    optimal_time_limit: float = 5.0,
) -> WorkEstimate:
    """What ``reproduce_table10`` may cost: each random population with its random and
    heuristic schedules takes about 3 ms + 6 µs per person (measured on 2 shared cores:
    1.6 ms at N = 20, 5.2 ms at N = 1,000), and each optimum up to its time limit.

    >>> estimate_table10(tuple(PAPER_TABLE10), 20, optimal_runs=2).seconds < 100
    True
    >>> estimate_table10(tuple(PAPER_TABLE10), 10_000, optimal_runs=1000, optimal_time_limit=600).seconds > 10**6
    True
    """
    sizes = [whole_number(n, "A population size N", minimum=1) for n in sizes]
    runs = whole_number(runs, "The number of runs per N", minimum=1)
    optimal_runs = whole_number(optimal_runs, "The number of optima per N", minimum=0)
    optima = min(optimal_runs, runs) * sum(1 for n in sizes if n <= optimal_up_to)
    seconds = runs * sum(3e-3 + 6e-6 * n for n in sizes) + optima * float(optimal_time_limit)
    return WorkEstimate(
        f"reproducing Table 10 ({runs * len(sizes):,} random populations"
        + (f" and {optima:,} optima of up to {optimal_time_limit:g} s each)" if optima else ")"),
        operations=runs * len(sizes) + optima,
        seconds=seconds,
        peak_bytes=0,
    )


def reproduce_table10(
    sizes: Sequence[int] = tuple(PAPER_TABLE10),
    runs: int = 1000,
    *,
    seed: int = 0,
    rule: str = DEFAULT_RULE,
    optimal_up_to: int = 50,
    optimal_runs: int = 10,
    optimal_time_limit: float = 5.0,
    protocol: str = "spec",
    progress: Progress | None = None,
) -> Table10:
    """Table 10: mean improvement (%) of heuristic over random and of optimal over heuristic.

    ``runs`` random problems per N (``protocol`` as in ``table10_problem``); the optimum is computed for the first
    ``optimal_runs`` of them when N <= ``optimal_up_to`` and only proven optima
    (finished within ``optimal_time_limit`` s) enter its mean.
    """
    check_work(
        estimate_table10(
            sizes, runs, optimal_up_to=optimal_up_to, optimal_runs=optimal_runs, optimal_time_limit=optimal_time_limit
        ),
        narrow="choose fewer runs, fewer optima or a shorter time limit per optimum",
    )
    rng = np.random.default_rng(seed)
    rows = []
    for position, n in enumerate(sizes):
        if progress:
            progress(position / len(sizes), f"N = {n}: {runs} random populations")
        heuristic_gain, optimal_gain = [], []
        proven = 0
        for run in range(runs):
            freqs, capacities = table10_problem(n, rng, protocol)
            base = anonymity_vector(freqs)
            random_vector = random_cells(freqs, capacities, rng).vector
            heuristic = heuristic_cells(freqs, capacities, rule)
            heuristic_gain.append(improvement(heuristic.vector, random_vector, base))
            if n <= optimal_up_to and run < optimal_runs:
                outcome = optimal_cells(
                    freqs, capacities, time_limit=optimal_time_limit, hint=heuristic.dense(), workers=1
                )
                if outcome.proven_optimal:
                    proven += 1
                    optimal_gain.append(improvement(outcome.cells.vector, heuristic.vector, base))
        paper = PAPER_TABLE10.get(n, (None, None))
        rows.append(
            {
                "N": n,
                "runs": runs,
                "heuristic / random (%)": 100 * float(np.mean(heuristic_gain)),
                "paper heuristic / random (%)": None if paper[0] is None else float(paper[0]),
                "optimal / heuristic (%)": 100 * float(np.mean(optimal_gain)) if optimal_gain else None,
                "optimal runs proven": proven if n <= optimal_up_to and optimal_runs else None,
                "paper optimal / heuristic (%)": None if paper[1] is None else float(paper[1]),
            }
        )
    if progress:
        progress(1.0, "done")
    return Table10(pd.DataFrame(rows), seed, runs, optimal_runs, rule, protocol)


def compare_rules(
    sizes: Sequence[int] = (20, 30, 50, 100, 250, 1000),
    runs: int = 200,
    *,
    seed: int = 0,
    protocol: str = "spec",
) -> pd.DataFrame:
    """Mean improvement (%) over random of each split rule on the same Table 10 problems.

    >>> compare_rules(sizes=(50,), runs=3).columns.tolist()
    ['N', 'largest', 'closest_half', 'largest_at_most_half']
    """
    rng = np.random.default_rng(seed)
    rows = []
    for n in sizes:
        gains: dict[str, list[float]] = {r: [] for r in RULES}
        for _ in range(runs):
            freqs, capacities = table10_problem(n, rng, protocol)
            base = anonymity_vector(freqs)
            random_vector = random_cells(freqs, capacities, rng).vector
            for r in RULES:
                gains[r].append(improvement(heuristic_cells(freqs, capacities, r).vector, random_vector, base))
        rows.append({"N": n, **{r: 100 * float(np.mean(g)) for r, g in gains.items()}})
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class RegistryExperiment:
    """The registry day: vectors, k and exact indices of base, real and heuristic schedules."""

    people: int
    centres: int
    capacity_per_centre: int
    base: tuple[int, ...]
    actual: tuple[int, ...]
    heuristic: tuple[int, ...]
    indices: dict[str, int]
    improvement: float

    @property
    def k(self) -> dict[str, int]:
        return {"base": k_of(self.base), "actual": k_of(self.actual), "heuristic": k_of(self.heuristic)}


def registry_experiment(rule: str = DEFAULT_RULE) -> RegistryExperiment:
    """Heuristic vs the real assignment of one registry screening day (bundled fixture).

    >>> r = registry_experiment()
    >>> r.people, r.centres, r.capacity_per_centre, r.improvement > 0.5
    (4541, 21, 217, True)
    """
    data = json.loads(sample_path("caballero_registry_fixture.json").read_text())
    freqs = np.asarray(data["by_birth_year"], dtype=np.int64)
    capacities = np.full(int(data["centres"]), int(data["capacity_per_centre"]), dtype=np.int64)
    base = anonymity_vector(freqs)
    actual = anonymity_vector(data["by_birth_year_and_centre_actual"])
    heuristic = heuristic_cells(freqs, capacities, rule).vector
    indices = {"base": lex_index(base), "actual": lex_index(actual), "heuristic": lex_index(heuristic)}
    gain = (indices["heuristic"] - indices["actual"]) / indices["base"] if indices["base"] else 0.0
    return RegistryExperiment(
        int(freqs.sum()), int(capacities.size), int(capacities[0]), base, actual, heuristic, indices, float(gain)
    )


SYNTHETIC_REGIONS = (  # region, centres, people per screening date (Table 11 / 282 dates)
    (1, 13, 4858),
    (2, 4, 1236),
    (3, 3, 1075),
    (4, 3, 869),
    (9, 3, 469),
)


def table11_synthetic(
    dates: int = 12, *, seed: int = 0, rule: str = DEFAULT_RULE, progress: Progress | None = None
) -> pd.DataFrame:
    """Table 11's shape on synthetic data: per region, min/max/mean improvement (%).

    Each region screens on ``dates`` monthly dates; each date invites about the
    region's people per date (Poisson), with birth years 1946-1990 (cervical
    screening ages) as the quasi-identifier, weighted towards a random cohort
    profile. Centres get uneven capacities (Dirichlet shares, 2% slack). The
    "real" assignment is random; the improvement is that of the heuristic.

    >>> t = table11_synthetic(dates=2, seed=3)
    >>> t["region"].tolist(), bool((t["avg (%)"] >= t["min (%)"]).all())
    ([1, 2, 3, 4, 9], True)
    """
    rng = np.random.default_rng(seed)
    years = np.arange(1946, 1991)
    rows = []
    total = len(SYNTHETIC_REGIONS) * dates
    for r, (region, centres, per_date) in enumerate(SYNTHETIC_REGIONS):
        profile = rng.dirichlet(np.full(years.size, 4.0))
        shares = rng.dirichlet(np.full(centres, 3.0))
        gains, people = [], 0
        for d in range(dates):
            if progress:
                progress((r * dates + d) / total, f"region {region}, date {d + 1} of {dates}")
            n = int(rng.poisson(per_date))
            freqs = rng.multinomial(n, profile)
            freqs = freqs[freqs > 0]
            capacities = np.ceil(shares * n * 1.02).astype(np.int64) + 1
            base = anonymity_vector(freqs)
            actual = random_cells(freqs, capacities, rng).vector
            heuristic = heuristic_cells(freqs, capacities, rule).vector
            gains.append(100 * improvement(heuristic, actual, base))
            people += n
        rows.append(
            {
                "region": region,
                "appointments": people,
                "dates": dates,
                "centres": centres,
                "min (%)": min(gains),
                "max (%)": max(gains),
                "avg (%)": float(np.mean(gains)),
            }
        )
    if progress:
        progress(1.0, "done")
    return pd.DataFrame(rows)
