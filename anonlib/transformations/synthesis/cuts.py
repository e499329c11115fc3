"""Public cuts and bounds of number columns (``NumberCuts``): the bins OpenDP measures, their
labels, and values drawn uniformly inside a bin. Part of ``anonlib.transformations.synthesis``.

Cuts and bounds are public inputs: declared by the user (``parse_cuts``), or round cuts
inside declared bounds (``cuts_within``). Nothing here reads them from the data: a suggestion
taken from a column's range would publish its extremes (one person's value).

Example:
    >>> NumberCuts("age", (30, 50), 17, 90).labels
    ('17-30', '31-50', '51-90')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

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
                joined = " to " if start < 0 or b < 0 else "-"  # -5 to -4, never -5--4
                out.append(_value(b) if start == b else f"{_value(start)}{joined}{_value(b)}")
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

    def outside(self, values: pd.Series) -> int:
        """How many values lie outside the bounds (counted in the end bins): for the privacy
        officer, never released.

        >>> NumberCuts("a", (30,), 0, 90).outside(pd.Series([-5, 30, 91, None]))
        2
        """
        x = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        return int(np.count_nonzero((x < self.lower) | (x > self.upper)))

    def text(self) -> str:
        return f"{self.column}: bounds {_value(self.lower)} to {_value(self.upper)}, cuts {_values(self.cuts)}"

    def written(self) -> str:
        """The cuts as a user writes them, ``LOWER:c1,c2,...:UPPER``.

        >>> NumberCuts("age", (30, 50), 17, 90).written()
        '17:30,50:90'
        """
        return f"{_value(self.lower)}:{','.join(_value(c) for c in self.cuts)}:{_value(self.upper)}"


def _value(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


def _values(values: Sequence[float]) -> str:
    return ", ".join(_value(v) for v in values)


def parse_cuts(column: str, text: str, lower: float | None = None, upper: float | None = None) -> NumberCuts:
    """Cuts written ``20,30,40`` (bounds given, or written as the first and last of
    ``[17]20,30,40[90]``: ``17:20,30,40:90``), or bounds alone, ``LOWER:UPPER``: round cuts
    inside them (``cuts_within``). Every number is the user's: nothing is read from the data.

    >>> parse_cuts("age", "17:20,30,40:90").text()
    'age: bounds 17 to 90, cuts 20, 30, 40'
    >>> parse_cuts("age", "0:120").text()
    'age: bounds 0 to 120, cuts 20, 40, 60, 80, 100'
    """
    body = text.strip()
    if ":" in body:
        parts = body.split(":")
        if len(parts) == 2:
            low = finite_number(parts[0].strip(), f"The lower bound of {column}")
            high = finite_number(parts[1].strip(), f"The upper bound of {column}")
            return cuts_within(column, low, high)
        if len(parts) != 3:
            raise SynthesisError(
                f"Write the cuts of {column} as LOWER:c1,c2,...:UPPER, or its bounds as LOWER:UPPER; got '{text}'."
            )
        lower, body, upper = parts[0], parts[1], parts[2]
    cuts = [c.strip() for c in body.split(",") if c.strip()]
    if lower is None or upper is None:
        raise SynthesisError(
            f"{column} needs public bounds: write its cuts as LOWER:c1,c2,...:UPPER (e.g. 17:20,30,40:90), or its "
            "bounds alone as LOWER:UPPER."
        )
    return NumberCuts(column, tuple(finite_number(c, f"A cut of {column}") for c in cuts), lower, upper)


def _round_step(width: float, bins: int) -> float:
    """The round width (1, 2 or 5 times a power of ten) giving about ``bins`` bins over ``width``.

    >>> _round_step(73, 8), _round_step(10, 8), _round_step(0.9, 8)
    (10.0, 1.0, 0.1)
    """
    raw = width / bins
    power = 10.0 ** np.floor(np.log10(raw))
    steps = [factor * power for factor in (1.0, 2.0, 5.0, 10.0)]
    return float(round(min(steps, key=lambda step: abs(np.log(step / raw))), 12))


def cuts_within(column: str, lower: float, upper: float, *, bins: int = 8) -> NumberCuts:
    """Round cuts inside declared bounds (about ``bins`` bins, at multiples of a round width):
    cut suggestions come from the bounds the user declares, never from the data.

    >>> cuts_within("age", 17, 90).text()
    'age: bounds 17 to 90, cuts 20, 30, 40, 50, 60, 70, 80'
    >>> cuts_within("share", 0, 1).labels[:2], cuts_within("lwage", -5, 5).labels[:2]
    (('[0, 0.1]', '(0.1, 0.2]'), ('-5 to -4', '-3'))
    """
    lower = finite_number(lower, f"The lower bound of {column}")
    upper = finite_number(upper, f"The upper bound of {column}")
    if not upper > lower:
        raise SynthesisError(
            f"The bounds of {column} must go from a lower to a higher number; got {lower:g} and {upper:g}."
        )
    step = _round_step(upper - lower, bins)
    decimals = max(0, int(-np.floor(np.log10(step))) + 1)  # multiples of the step, written as they read
    first = int(np.floor(lower / step)) + 1
    multiples = (round(k * step, decimals) for k in range(first, first + 4 * bins))
    cuts = [float(c) for c in multiples if lower < c < upper]
    if not cuts:
        cuts = [float(round((lower + upper) / 2, 12))]
    return NumberCuts(column, tuple(cuts), lower, upper)


def needs_cuts(values: pd.Series) -> bool:
    """Whether a column holds numbers with more than ``NUMBER_CATEGORIES`` different values:
    it is released in public cuts (bins) rather than value by value.

    >>> needs_cuts(pd.Series(range(60))), needs_cuts(pd.Series([1, 2, 3])), needs_cuts(pd.Series(list("ab")))
    (True, False, False)
    """
    numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
    return bool(numeric and values.dropna().nunique() > NUMBER_CATEGORIES)
