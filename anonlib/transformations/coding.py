"""Top and bottom coding: the rare values in a numeric column's tails replaced by a threshold.

A 97-year-old or an income of 2 million is often unique on its own. Top coding
(sdcMicro's ``topBotCoding``) replaces every value above a threshold by the
threshold, bottom coding every value below one; the values between are
untouched. A threshold is given as a value or as a quantile of the column's
records (weighted by a count column), resolved to a value on the data the
coding is chosen on: ``thresholds`` returns that value, and the working copy's
step (``anonlib.workflow.local_steps.TopBottomStep``) stores it, so a recipe
applies the same cut-offs to the next delivery. Missing values stay missing.

Example:
    >>> df = pd.DataFrame({"age": [23, 35, 41, 58, 97]})
    >>> result = top_bottom_code(df, "age", top=80, bottom=25)
    >>> result.table["age"].tolist(), result.top_records, result.bottom_records
    ([25, 35, 41, 58, 80], 1, 1)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.equivalence import record_counts
from ..core.errors import ColumnError, ParameterError


@dataclass(frozen=True)
class TopBottomCoding:
    """The coded table, the thresholds used (None = that tail untouched) and the
    records whose value was replaced at each end."""

    table: pd.DataFrame
    column: str
    top: float | None
    bottom: float | None
    top_records: int
    bottom_records: int

    @property
    def records(self) -> int:
        return self.top_records + self.bottom_records


def _numbers(df: pd.DataFrame, column: str) -> pd.Series:
    if column not in df.columns:
        raise ColumnError(f"The column '{column}' does not exist in the data.")
    series = df[column]
    if not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
        raise ColumnError(f"Top and bottom coding apply to numbers; '{column}' is not a numeric column.")
    return series


def _quantile(values: np.ndarray, weights: np.ndarray, share: float) -> float:
    """The value below which ``share`` of the records lie (the lowest value whose
    cumulative share of records reaches it)."""
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(weights[order])
    position = int(np.searchsorted(cumulative, share * cumulative[-1], side="left"))
    return float(values[order][min(position, len(values) - 1)])


def thresholds(
    df: pd.DataFrame,
    column: str,
    *,
    top: float | None = None,
    bottom: float | None = None,
    top_quantile: float | None = None,
    bottom_quantile: float | None = None,
    count: str | None = None,
) -> tuple[float | None, float | None]:
    """(top, bottom) as values: given ones kept, quantiles resolved on ``df``'s records.

    >>> thresholds(pd.DataFrame({"x": range(1, 101)}), "x", top_quantile=0.95, bottom_quantile=0.05)
    (95.0, 5.0)
    """
    series = _numbers(df, column)
    for name, given, share in (("top", top, top_quantile), ("bottom", bottom, bottom_quantile)):
        if given is not None and share is not None:
            raise ParameterError(f"Give the {name} threshold as a value or as a quantile, not both.")
        if share is not None and not 0.0 <= float(share) <= 1.0:
            raise ParameterError(f"The {name} quantile is a share between 0 and 1; got {share:g}.")
        if given is not None and not np.isfinite(float(given)):
            raise ParameterError(f"The {name} threshold must be a finite number; got {given!r}.")
    present = series.notna().to_numpy()
    values = series.to_numpy(dtype=np.float64, na_value=np.nan)[present]
    weights = record_counts(df, count)
    weights = np.ones(len(values)) if weights is None else np.asarray(weights, dtype=np.float64)[present]
    values, weights = values[weights > 0], weights[weights > 0]  # rows standing for no record
    if (top_quantile is not None or bottom_quantile is not None) and not len(values):
        raise ParameterError(f"The column '{column}' has no values to take a quantile of.")
    if top_quantile is not None:
        top = _quantile(values, weights, float(top_quantile))
    if bottom_quantile is not None:
        bottom = _quantile(values, weights, float(bottom_quantile))
    top = None if top is None else float(top)
    bottom = None if bottom is None else float(bottom)
    if top is not None and bottom is not None and bottom > top:
        raise ParameterError(f"The bottom threshold ({bottom:g}) is above the top threshold ({top:g}).")
    return top, bottom


def top_bottom_code(
    df: pd.DataFrame,
    column: str,
    *,
    top: float | None = None,
    bottom: float | None = None,
    top_quantile: float | None = None,
    bottom_quantile: float | None = None,
    count: str | None = None,
) -> TopBottomCoding:
    """Values of ``column`` above ``top`` become ``top`` and below ``bottom`` become
    ``bottom`` (thresholds as values or as quantiles of the records); other
    columns unchanged; same index. An integer column given a fractional
    threshold becomes a float column.

    >>> r = top_bottom_code(pd.DataFrame({"x": [1.0, 2.0, 3.0, 100.0], "n": [1, 1, 1, 1]}), "x", top_quantile=0.75, count="n")
    >>> r.table["x"].tolist(), r.top
    ([1.0, 2.0, 3.0, 3.0], 3.0)
    """
    top, bottom = thresholds(
        df, column, top=top, bottom=bottom, top_quantile=top_quantile, bottom_quantile=bottom_quantile, count=count
    )
    series = _numbers(df, column)
    weights = record_counts(df, count)
    weights = np.ones(len(df), dtype=np.int64) if weights is None else np.asarray(weights)
    above = (series > top).fillna(False).to_numpy(dtype=bool) if top is not None else np.zeros(len(df), bool)
    below = (series < bottom).fillna(False).to_numpy(dtype=bool) if bottom is not None else np.zeros(len(df), bool)
    coded = series
    fractional = any(t is not None and not float(t).is_integer() for t in (top, bottom))
    if fractional and (series.dtype.kind in "iu" or str(series.dtype) == "Int64"):
        coded = coded.astype("float64")
    as_value = (lambda t: int(t)) if coded.dtype.kind in "iu" or str(coded.dtype) == "Int64" else float
    if above.any():
        coded = coded.mask(above, as_value(top))
    if below.any():
        coded = coded.mask(below, as_value(bottom))
    table = df.copy(deep=False)
    table[column] = coded
    return TopBottomCoding(table, column, top, bottom, int(weights[above].sum()), int(weights[below].sum()))
