"""Models against a population table: k-map and δ-presence (the file is a sample of it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...core.equivalence import combine, encode, record_counts
from ...core.errors import EmptySelectionError, PopulationError, join_names
from ...core.population import aligned_like, population_count_column
from .summaries import checked_columns

# --------------------------------------------------------------------------- population table: k-map, δ-presence


@dataclass(frozen=True, eq=False)
class PopulationCounts:
    """The data's classes matched with a population table.

    ``sample[c]`` and ``population[c]`` are the records of the data and the people
    of the population in combination ``c`` of the quasi-identifiers (combinations
    of either table); ``ids`` gives each data row's combination.
    """

    ids: np.ndarray
    sample: np.ndarray
    population: np.ndarray

    @property
    def released(self) -> np.ndarray:
        """Combinations holding records of the data."""
        return self.sample > 0


def population_counts(
    df: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    population: pd.DataFrame,
    *,
    count: str | None = None,
    population_count: str | None = None,
) -> PopulationCounts:
    """Match the data's classes with ``population`` (the quasi-identifier columns, one row
    per person or a count column found as ``anonlib.transformations.frontier`` finds it). Every class must
    be covered by at least as many people as it has records; a ``PopulationError`` says
    which one is not.

    >>> data = pd.DataFrame({"zip": ["1", "1", "2"]})
    >>> pop = pd.DataFrame({"zip": ["1", "2", "3"], "people": [10, 4, 7]})
    >>> p = population_counts(data, ["zip"], pop)
    >>> p.sample.tolist(), p.population.tolist()
    ([2, 1, 0], [10, 4, 7])
    """

    qis = checked_columns(df, quasi_identifiers, [], count)
    if not isinstance(population, pd.DataFrame):
        raise PopulationError("The population must be a table with the quasi-identifier columns.")
    lacking = [c for c in qis if c not in population.columns]
    if lacking:
        raise PopulationError(f"The population table lacks the quasi-identifier columns {join_names(lacking)}.")
    if population_count is None:
        population_count = population_count_column(population, qis, count=count)
    people = record_counts(population, population_count)
    people = np.ones(len(population), dtype=np.int64) if people is None else people
    weights = record_counts(df, count)
    weights = np.ones(len(df), dtype=np.int64) if weights is None else weights
    joint = pd.concat([df[qis], aligned_like(population[qis], df[qis])], ignore_index=True)
    table = encode(joint, qis)
    ids, n = combine([table.codes[:, j] for j in range(len(qis))], table.cardinalities, len(joint))
    data_ids = ids[: len(df)]
    sample = np.rint(np.bincount(data_ids, weights=weights, minlength=n)).astype(np.int64)
    pop = np.rint(np.bincount(ids[len(df) :], weights=people, minlength=n)).astype(np.int64)
    unmatched = np.flatnonzero((sample > 0) & (pop == 0))
    short = unmatched if unmatched.size else np.flatnonzero(sample > pop)
    if short.size:
        first = int(np.flatnonzero(data_ids == short[0])[0])
        values = ", ".join(f"{a}={df[a].iloc[first]}" for a in qis)
        more = "" if short.size == 1 else f" (and {short.size - 1:,} other combination{'s' if short.size > 2 else ''})"
        if unmatched.size:
            raise PopulationError(
                f"The records with {values}{more} have no match in the population table; "
                "the population must contain everyone in the data, so check the population table."
            )
        found = int(pop[short[0]])
        raise PopulationError(
            f"The population table has {found:,} {'person' if found == 1 else 'people'} with {values} but the "
            f"data has {sample[short[0]]:,} such records{more}; the population must contain everyone in the data."
        )
    return PopulationCounts(ids=data_ids, sample=sample, population=pop)


def k_map(
    df: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    population: pd.DataFrame,
    *,
    count: str | None = None,
    population_count: str | None = None,
) -> int:
    """k-map: the fewest people of the population matching a released class.

    >>> k_map(pd.DataFrame({"zip": ["1", "1", "2"]}), ["zip"], pd.DataFrame({"zip": ["1", "2"], "n": [10, 4]}))
    4
    """
    p = population_counts(df, quasi_identifiers, population, count=count, population_count=population_count)
    released = p.population[p.released]
    if released.size == 0:
        raise EmptySelectionError("The table has no records, so k-map cannot be measured.")
    return int(released.min())


@dataclass(frozen=True)
class DeltaPresence:
    """δ-presence (Nergiz et al. 2007): the probability that a person of the population is
    in the released data lies in [lower, upper]; ``lower_released`` is the lowest over
    the combinations that occur in the data (``lower`` is 0 when some people of the
    population share their combination with no record of the data)."""

    lower: float
    upper: float
    lower_released: float


def delta_presence(
    df: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    population: pd.DataFrame,
    *,
    count: str | None = None,
    population_count: str | None = None,
) -> DeltaPresence:
    """The range of probabilities that a population record is in the release: per
    combination, records of the data / people of the population.

    >>> d = delta_presence(pd.DataFrame({"zip": ["1", "1", "2"]}), ["zip"], pd.DataFrame({"zip": ["1", "2", "3"], "n": [10, 4, 5]}))
    >>> d.lower, d.upper, d.lower_released
    (0.0, 0.25, 0.2)
    """
    p = population_counts(df, quasi_identifiers, population, count=count, population_count=population_count)
    covered = p.population > 0
    share = p.sample[covered] / p.population[covered]
    released = p.sample[covered] > 0
    if not released.any():
        raise EmptySelectionError("The table has no records, so δ-presence cannot be measured.")
    return DeltaPresence(float(share.min()), float(share.max()), float(share[released].min()))
