"""How the cells of a table read: as records, as numbers, and as the text a reader sees.

One place for what several measures and views need from a column: the records each row
stands for (``record_weights``, ``records_in``; a record-count column, or one record per
row), the numbers it holds (``numbers_in``, ``holds_numbers``: a generalized or locally
suppressed column holds ``*`` and intervals beside its numbers), whether its type is a
number (``is_number_column``), and each cell as text with a missing cell shown as
``(blank)`` (``cell_texts``).

Example:
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"age": [31, "*", None], "n": [2, 1, 3]})
    >>> records_in(frame, "n"), holds_numbers(frame["age"]), cell_texts(frame["age"]).tolist()
    (6, True, ['31', '*', '(blank)'])
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .equivalence import record_counts
from .hierarchy import SUPPRESSED

BLANK = "(blank)"  # how a missing cell is shown


def record_weights(frame: pd.DataFrame, count: str | None) -> np.ndarray:
    """The records each row stands for (int64): the validated record-count column, or ones.

    >>> record_weights(pd.DataFrame({"n": [2, 3]}), "n").tolist(), record_weights(pd.DataFrame({"a": [1]}), None).tolist()
    ([2, 3], [1])
    """
    weights = record_counts(frame, count)
    return np.ones(len(frame), dtype=np.int64) if weights is None else np.asarray(weights, dtype=np.int64)


def records_in(frame: pd.DataFrame, count: str | None) -> int:
    """The records a table stands for: its rows, or the sum of its record-count column.

    >>> records_in(pd.DataFrame({"n": [2, 3]}), "n"), records_in(pd.DataFrame({"a": [1, 2]}), None)
    (5, 2)
    """
    weights = record_counts(frame, count)
    return len(frame) if weights is None else int(weights.sum())


def cell_texts(series: pd.Series) -> pd.Series:
    """Cells as the reader sees them: text, ``(blank)`` for a missing cell, whole floats without ``.0``.

    >>> cell_texts(pd.Series([1.0, 2.5, None, "x"])).tolist()
    ['1', '2.5', '(blank)', 'x']
    """
    values = series.astype(object)
    missing = values.isna().to_numpy()

    def text(v: object) -> str:
        if isinstance(v, (float, np.floating)) and float(v).is_integer():
            return str(int(v))
        return str(v)

    return pd.Series(
        [BLANK if m else text(v) for v, m in zip(values.tolist(), missing)], index=series.index, dtype=object
    )


def numbers_in(series: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(numbers, mask of rows holding a number): text cells ('*', intervals) and blanks hold none.

    >>> values, mask = numbers_in(pd.Series([3, "*", None], dtype=object))
    >>> mask.tolist(), float(values[0])
    ([True, False, False], 3.0)
    """
    if pd.api.types.is_bool_dtype(series):
        return np.array([], dtype=float), np.zeros(len(series), dtype=bool)
    if pd.api.types.is_numeric_dtype(series):
        values = series.to_numpy(dtype=float, na_value=np.nan)
        return values, ~np.isnan(values)
    mask = np.array(
        [
            isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) and not pd.isna(v)
            for v in series.tolist()
        ],
        dtype=bool,
    )
    values = np.full(len(series), np.nan)
    values[mask] = [float(v) for v, m in zip(series.tolist(), mask) if m]
    return values, mask


def holds_numbers(series: pd.Series) -> bool:
    """Numbers, with at most ``*`` or blank cells besides them (a locally suppressed number column).

    >>> holds_numbers(pd.Series([1, "*", None], dtype=object)), holds_numbers(pd.Series(["30-39", 41], dtype=object))
    (True, False)
    """
    if pd.api.types.is_bool_dtype(series):
        return False
    if pd.api.types.is_numeric_dtype(series):
        return True
    _, mask = numbers_in(series)
    others = series[~mask]
    return bool(mask.any()) and all(pd.isna(v) or v == SUPPRESSED for v in others.tolist())


def is_number_column(series: pd.Series) -> bool:
    """Whether a column's type is a number (not a truth value): the ordered distance of
    t-closeness and the numeric summaries apply to it.

    >>> is_number_column(pd.Series([1, 2])), is_number_column(pd.Series([True])), is_number_column(pd.Series(["1"]))
    (True, False, False)
    """
    return bool(pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series))
