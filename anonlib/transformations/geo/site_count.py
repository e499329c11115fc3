"""Step 1: the number of sites S, chosen directly or from a population cut-off G (fixed,
entropy model, max-combinations model, or a regression)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from ...core.equivalence import encode
from ...core.errors import GeometryError, ParameterError, join_names
from ...measures.leakage import partition_entropy

# --------------------------------------------------------------------------
# Step 1: the number of sites
# --------------------------------------------------------------------------

# Fixed population cut-offs the paper cites (Section 3.1).
FIXED_CUTOFFS = {
    "US Census (100,000)": 100_000,
    "Statistics Canada CCHS (70,000)": 70_000,
    "British Census (120,000)": 120_000,
}
CUTOFF_MODELS = ("fixed", "entropy", "max_combinations", "regression")
REGRESSION_FORMS = ("linear", "log-linear", "log-log")


@dataclass(frozen=True)
class Regression:
    """A user's regression of the population cut-off G on entropy H or MaxCombs X.

    ``linear``: G = a + b X; ``log-linear``: ln G = a + b X; ``log-log``:
    ln G = a + b ln X. (The paper fits such models on Canadian regions; its
    coefficients were lost, so none are built in.)

    >>> Regression("log-log", "max_combinations", a=0.0, b=1.0).cutoff(entropy_bits=3.0, max_combinations=40)
    40.0
    """

    form: Literal["linear", "log-linear", "log-log"]
    variable: Literal["entropy", "max_combinations"]
    a: float
    b: float

    def cutoff(self, *, entropy_bits: float, max_combinations: int) -> float:
        if self.form not in REGRESSION_FORMS:
            raise ParameterError(
                f"The regression form must be one of {join_names(REGRESSION_FORMS)}; got '{self.form}'."
            )
        value = entropy_bits if self.variable == "entropy" else float(max_combinations)
        if self.form == "linear":
            return self.a + self.b * value
        if self.form == "log-linear":
            return math.exp(self.a + self.b * value)
        if value <= 0:
            raise ParameterError("A log-log regression needs a positive entropy or number of combinations.")
        return math.exp(self.a + self.b * math.log(value))


@dataclass(frozen=True)
class SiteCount:
    """How many sites (aggregated regions) to place and why."""

    n_sites: int
    model: str
    cutoff: float | None
    explanation: str


def qi_entropy(records: pd.DataFrame, quasi_identifiers: Sequence[str], *, count: str | None = None) -> float:
    """Shannon entropy in bits of the records over their quasi-identifier classes (Eq. 1).

    ``H = -sum_e (|e|/N) log2(|e|/N)``.

    >>> qi_entropy(pd.DataFrame({"sex": ["f", "m", "f", "m"]}), ["sex"])
    1.0
    """
    return partition_entropy(encode(records, list(quasi_identifiers), count=count).classes().sizes)


def max_combinations(records: pd.DataFrame, quasi_identifiers: Sequence[str]) -> int:
    """MaxCombs: the product of the numbers of categories of the quasi-identifiers.

    >>> max_combinations(pd.DataFrame({"sex": ["f", "m"], "age": [1, 2]}), ["sex", "age"])
    4
    """
    return int(np.prod([int(c) for c in encode(records, list(quasi_identifiers)).cardinalities], dtype=object))


def site_count(
    total_population: int,
    n_regions: int,
    *,
    model: str = "fixed",
    cutoff: float | None = None,
    k: int = 5,
    entropy_bits: float | None = None,
    max_combs: int | None = None,
    regression: Regression | None = None,
) -> SiteCount:
    """Number of sites from a population cut-off G: ``S = clamp(round(N / G), 1, #regions)``.

    Models: ``fixed`` (``cutoff`` given, e.g. 100,000), ``entropy``
    (G = k * 2^H, ours), ``max_combinations`` (G = k * MaxCombs, ours),
    ``regression`` (the user's ``Regression``).

    >>> site_count(6_346_110, 625, cutoff=100_000).n_sites
    63
    >>> site_count(6_346_110, 625, model="max_combinations", k=5, max_combs=2 * 15 * 5).n_sites
    625
    """
    if n_regions < 1:
        raise GeometryError("There are no initial regions to aggregate.")
    if model == "fixed":
        if cutoff is None:
            raise ParameterError("The fixed cut-off model needs a population cut-off, e.g. 100,000.")
        g, why = float(cutoff), f"fixed population cut-off G = {cutoff:,.0f}"
    elif model == "entropy":
        if entropy_bits is None:
            raise ParameterError("The entropy model needs the entropy of the quasi-identifiers.")
        g = k * 2.0**entropy_bits
        why = f"entropy model (ours): G = k x 2^H = {k} x 2^{entropy_bits:.3f} = {g:,.0f}"
    elif model == "max_combinations":
        if max_combs is None:
            raise ParameterError("The max-combinations model needs the number of value combinations.")
        g = float(k * max_combs)
        why = f"max-combinations model (ours): G = k x MaxCombs = {k} x {max_combs:,} = {g:,.0f}"
    elif model == "regression":
        if regression is None or entropy_bits is None or max_combs is None:
            raise ParameterError("The regression model needs its coefficients, the entropy and MaxCombs.")
        g = regression.cutoff(entropy_bits=entropy_bits, max_combinations=max_combs)
        why = f"your {regression.form} regression on {regression.variable}: G = {g:,.0f}"
    else:
        raise ParameterError(f"The cut-off model must be one of {join_names(CUTOFF_MODELS)}; got '{model}'.")
    if not math.isfinite(g) or g <= 0:
        raise ParameterError(f"The population cut-off must be a positive number; the {model} model gave {g:g}.")
    raw = int(round(total_population / g))
    n = min(max(raw, 1), n_regions)
    clamp = "" if n == raw else f", kept between 1 and the {n_regions:,} regions: {n:,}"
    return SiteCount(
        n_sites=n, model=model, cutoff=g, explanation=f"{why}; S = round({total_population:,} / G) = {raw:,}{clamp}"
    )
