"""Population tables (one row per person, or a count per row of quasi-identifier values),
read the one way the models (k-map, delta-presence) and the frontier read them."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .dataset import Role, guess_role


def aligned_like(population: pd.DataFrame, data: pd.DataFrame) -> pd.DataFrame:
    """The population's columns read like the data's: text in the data makes the
    population text (a ZIP read as the number 37813 matches "37813"), numbers in
    the data make the population numeric where its values are numbers.

    >>> aligned_like(pd.DataFrame({"zip": [37813]}), pd.DataFrame({"zip": ["37813"]}))["zip"].tolist()
    ['37813']
    """
    out = population.copy()
    for column in data.columns:
        ours, theirs = data[column], out[column]
        if pd.api.types.is_numeric_dtype(ours) and not pd.api.types.is_numeric_dtype(theirs):
            converted = pd.to_numeric(theirs, errors="coerce")
            if converted.notna().sum() == theirs.notna().sum():
                out[column] = converted
        elif not pd.api.types.is_numeric_dtype(ours) and pd.api.types.is_numeric_dtype(theirs):
            out[column] = theirs.astype("string")
    return out


def population_count_column(
    population: pd.DataFrame, quasi_identifiers: Sequence[str], *, count: str | None = None
) -> str | None:
    """The column of a population table that holds the number of people per row:
    the data's count column if the population has it, else its only other column
    when that holds whole numbers, else the one column named like a count
    ("count", "n", "freq", ...); None (one person per row) otherwise.

    >>> pop = pd.DataFrame({"zip": ["37010"], "age": [30], "people": [12]})
    >>> population_count_column(pop, ["zip", "age"]), population_count_column(pop[["zip", "age"]], ["zip", "age"])
    ('people', None)
    """
    if count is not None and count in population.columns:
        return count
    extra = [c for c in population.columns if c not in quasi_identifiers]
    if len(extra) == 1:
        values = pd.to_numeric(population[extra[0]], errors="coerce")
        if values.notna().all() and (values >= 0).all() and (values == np.floor(values)).all():
            return extra[0]
    named = [c for c in extra if guess_role(str(c), population[c]) is Role.COUNT]
    return named[0] if len(named) == 1 else None
