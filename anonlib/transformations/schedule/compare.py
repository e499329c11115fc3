"""What the Screening page shows: the methods compared on one problem, and generated slots."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...core.budget import Progress
from ...core.errors import ParameterError, ProblemTooLargeError, join_names
from ...core.numbers import real_number, seed_number, whole_number
from ...measures.avector import improvement, k_of, lex_index, population_of, scientific, vector_text
from .cells import EXACT_INDEX_LIMIT, METHODS
from .population import ScheduleResult, make_schedule
from .rank import ScheduleCensus, enumerate_schedules

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

    def census(self) -> ScheduleCensus:
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
                population,
                resources,
                quasi_identifiers,
                count=count,
                capacity=capacity,
                group=group,
                method=method,
                rule=rule,
                seed=seed,
                time_limit=time_limit,
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
        for name, value, limit in (
            ("centres", centres, 100_000),
            ("days", days, 100_000),
            ("capacity", capacity, 10**9),
        )
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
