"""Public cuts and bounds of number columns (``NumberCuts``): the bins OpenDP measures, their
labels, and values drawn uniformly inside a bin. Part of ``anonlib.transformations.synthesis``.

Example:
    >>> NumberCuts("age", (30, 50), 17, 90).labels
    ('17-30', '31-50', '51-90')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...core.default_hierarchy import default_intervals
from ...core.errors import SynthesisError
from .budget import finite_number

NUMBER_CATEGORIES = 20  # a number column with more different values is released in cuts


# --------------------------------------------------------------------------- numbers: cuts and bounds


@dataclass(frozen=True)
class NumberCuts:
    """Public cut points and bounds of a number column: bins [lower, c1], (c1, c2], ...,
    (ck, upper] (left-open, as OpenDP cuts). Values are clamped into the bounds first."""

    column: str
    cuts: tuple[float, ...]
    lower: float
    upper: float

    def __post_init__(self):
        cuts = tuple(finite_number(c, f"A cut of {self.column}") for c in self.cuts)
        lower = finite_number(self.lower, f"The lower bound of {self.column}")
        upper = finite_number(self.upper, f"The upper bound of {self.column}")
        if not cuts:
            raise SynthesisError(f"{self.column} needs at least one cut point inside its bounds.")
        if any(b <= a for a, b in zip(cuts, cuts[1:])):
            raise SynthesisError(f"The cuts of {self.column} must increase: {_values(cuts)}.")
        if not lower <= cuts[0] or not cuts[-1] < upper:
            raise SynthesisError(
                f"The cuts of {self.column} ({_values(cuts)}) must lie between its bounds {_value(lower)} and "
                f"{_value(upper)} (the first may equal the lower bound: a bin of that one value)."
            )
        object.__setattr__(self, "cuts", cuts)
        object.__setattr__(self, "lower", lower)
        object.__setattr__(self, "upper", upper)

    @property
    def whole(self) -> bool:
        """Whole-number cuts and bounds: the column is synthesized as whole numbers (its type
        comes from these declared numbers, never from the values)."""
        return all(float(v).is_integer() for v in (*self.cuts, self.lower, self.upper))

    @property
    def edges(self) -> tuple[float, ...]:
        return (self.lower, *self.cuts, self.upper)

    @property
    def labels(self) -> tuple[str, ...]:
        """The bins as a reader sees them (``17-30``, ``31-50`` for whole numbers)."""
        out = []
        for i, (a, b) in enumerate(zip(self.edges, self.edges[1:])):
            start = a if i == 0 or not self.whole else a + 1
            if self.whole:
                out.append(_value(b) if start == b else f"{_value(start)}-{_value(b)}")
            else:
                out.append(f"{'[' if i == 0 else '('}{a:g}, {b:g}]")
        return tuple(out)

    def draw(self, bins: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """A value drawn uniformly inside each bin (-1: missing, NaN): whole numbers
        ``a+1..b`` (the first bin ``lower..c1``), else uniform in ``(a, b]`` (the first
        ``[lower, c1]``), never outside the bin.

        >>> c = NumberCuts("a", (30,), 0, 90)
        >>> v = c.draw(np.array([0] * 500 + [1] * 500 + [-1]), np.random.default_rng(0))
        >>> bool((c.bins(pd.Series(v[:-1])) == [0] * 500 + [1] * 500).all()), bool(np.isnan(v[-1]))
        (True, True)
        """
        bins = np.asarray(bins, dtype=np.int64)
        edges = np.asarray(self.edges, dtype=float)
        known = bins >= 0
        b = np.where(known, bins, 0)
        low, high = edges[b], edges[b + 1]
        if self.whole:
            start = np.where(b == 0, low, low + 1)
            values = start + np.floor(rng.random(len(b)) * (high - start + 1))
            values = np.minimum(values, high)
        else:
            values = np.where(b == 0, low + rng.random(len(b)) * (high - low), high - rng.random(len(b)) * (high - low))
        return np.where(known, values, np.nan)

    def bins(self, values: pd.Series) -> np.ndarray:
        """Each value's bin (values clamped into the bounds first); -1 for a missing value.

        >>> NumberCuts("a", (30,), 0, 90).bins(pd.Series([-5, 30, 31, None])).tolist()
        [0, 0, 1, -1]
        """
        x = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        out = np.searchsorted(np.asarray(self.cuts, dtype=float), np.clip(x, self.lower, self.upper), side="left")
        return np.where(np.isnan(x), -1, out).astype(np.int64)

    def text(self) -> str:
        return f"{self.column}: bounds {_value(self.lower)} to {_value(self.upper)}, cuts {_values(self.cuts)}"


def _value(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


def _values(values: Sequence[float]) -> str:
    return ", ".join(_value(v) for v in values)


def parse_cuts(column: str, text: str, lower: float | None = None, upper: float | None = None) -> NumberCuts:
    """Cuts written ``20,30,40`` (bounds given, or written as the first and last of
    ``[17]20,30,40[90]``: ``17:20,30,40:90``).

    >>> parse_cuts("age", "17:20,30,40:90").text()
    'age: bounds 17 to 90, cuts 20, 30, 40'
    """
    body = text.strip()
    if ":" in body:
        parts = body.split(":")
        if len(parts) != 3:
            raise SynthesisError(f"Write the cuts of {column} as LOWER:c1,c2,...:UPPER or c1,c2,...; got '{text}'.")
        lower, body, upper = parts[0], parts[1], parts[2]
    cuts = [c.strip() for c in body.split(",") if c.strip()]
    if lower is None or upper is None:
        raise SynthesisError(
            f"{column} needs public bounds: write its cuts as LOWER:c1,c2,...:UPPER (e.g. 17:20,30,40:90)."
        )
    return NumberCuts(column, tuple(finite_number(c, f"A cut of {column}") for c in cuts), lower, upper)


def needs_cuts(values: pd.Series) -> bool:
    """Whether a column holds numbers with more than ``NUMBER_CATEGORIES`` different values:
    it is released in public cuts (bins) rather than value by value.

    >>> needs_cuts(pd.Series(range(60))), needs_cuts(pd.Series([1, 2, 3])), needs_cuts(pd.Series(list("ab")))
    (True, False, False)
    """
    numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
    return bool(numeric and values.dropna().nunique() > NUMBER_CATEGORIES)


def default_number_cuts(values: pd.Series, column: str) -> NumberCuts:
    """Cuts and bounds from the column's typed hierarchy: the first level of its default
    bands (``anonlib.core.default_hierarchy.default_intervals``), less the bands no value
    falls in. They are derived from the data (its range, rounded to round widths), so
    the user confirms them as public knowledge before a release.

    >>> default_number_cuts(pd.Series(range(17, 91)), "age").text()
    'age: bounds 15 to 94, cuts 19, 24, 29, 34, 39, 44, 49, 54, 59, 64, 69, 74, 79, 84, 89'
    """
    numbers = pd.to_numeric(values, errors="coerce").dropna()
    if numbers.nunique() < 2:
        raise SynthesisError(f"{column} needs at least two different numbers to be cut into bins.")
    low, high = float(numbers.min()), float(numbers.max())
    bands = [(a, b) for a, b in default_intervals(numbers)[0][0] if b >= low and a <= high]  # none left empty
    cuts = [float(b) for _, b in bands[:-1]]
    upper = float(bands[-1][1]) if bands else high
    # a top-coded tail: its own bin up to the largest value, never clamped into the last band
    if bands and high > upper:
        cuts.append(upper)
        upper = high
    if not cuts:
        raise SynthesisError(f"{column}'s first hierarchy level has one band; give its cuts.")
    return NumberCuts(column, tuple(cuts), min(float(bands[0][0]), low), upper)
