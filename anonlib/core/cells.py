"""How the cells of a table read: as records, as numbers, and as the text a reader sees.

One place for what several measures and views need from a column: the records each row
stands for (``record_weights``, ``records_in``; a record-count column, or one record per
row), a table's distinct rows with their records (``distinct_rows``), the numbers a column
holds (``numbers_in``, ``holds_numbers``: a generalized or locally suppressed column holds
``*`` and intervals beside its numbers), whether its type is a number
(``is_number_column``), and each cell as text with a missing cell shown as ``(blank)``
(``cell_texts``).

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


def distinct_rows(frame: pd.DataFrame, columns: list[str], weights, name: str) -> pd.DataFrame:
    """The distinct rows of ``columns`` (a missing value is a value; in the order they first
    appear) with the records each stands for, ``weights`` summed, in a column ``name``: a table
    of a few thousand rows that counts like the records it comes from.

    >>> distinct_rows(pd.DataFrame({"a": [1, 1, None]}), ["a"], [2, 3, 1], "n").to_dict("list")
    {'a': [1.0, nan], 'n': [5, 1]}
    """
    return (
        frame[columns]
        .assign(**{name: weights})
        .groupby(columns, dropna=False, sort=False, observed=True)[name]
        .sum()
        .reset_index()
    )


def cell_groups(series: pd.Series) -> tuple[np.ndarray, list[object], np.ndarray]:
    """(each cell's group, one cell of each group, whether that cell is missing): a group holds
    equal cells of one type, so whatever is read from a cell can be read once per group (in a
    column of mixed objects ``True == 1``, yet they are two groups).

    >>> groups, values, missing = cell_groups(pd.Series([True, 1, None, 1], dtype=object))
    >>> groups.tolist(), values, missing.tolist()
    ([0, 1, 2, 1], [True, 1, None], [False, False, True])
    """
    if series.dtype != object:  # one type: the typed values factorized, missing cells in a last group
        codes, uniques = pd.factorize(series)
        values = pd.Series(uniques).astype(object).tolist() + [None]  # as the cells read as objects
        groups = np.where(codes < 0, len(values) - 1, codes)
        return groups, values, np.array([bool(pd.isna(v)) for v in values], dtype=bool)
    cells = series.to_numpy()
    missing = series.isna().to_numpy()
    try:
        codes, _ = pd.factorize(cells)
    except TypeError:  # an unhashable cell (a list): each cell on its own
        return np.arange(len(cells)), cells.tolist(), missing
    kinds, types = pd.factorize(np.fromiter(map(type, cells), dtype=object, count=len(cells)))
    codes = np.where(missing, -1, codes).astype(np.int64)
    groups, _ = pd.factorize(codes * len(types) + kinds)  # one group per (value, type)
    first = np.empty(int(groups.max()) + 1 if len(groups) else 0, dtype=np.int64)
    first[groups[::-1]] = np.arange(len(groups) - 1, -1, -1)  # each group's first cell
    return groups, [cells[i] for i in first.tolist()], missing[first]


def cell_texts(series: pd.Series) -> pd.Series:
    """Cells as the reader sees them: text, ``(blank)`` for a missing cell, whole floats without ``.0``.

    Each distinct value is written once and mapped back to its cells (a column of 10^5 records
    with a few hundred values costs a few hundred conversions).

    >>> cell_texts(pd.Series([1.0, 2.5, None, "x"])).tolist()
    ['1', '2.5', '(blank)', 'x']
    >>> cell_texts(pd.Series([True, 1, 1.0, "1", float("nan")], dtype=object)).tolist()
    ['True', '1', '1', '1', '(blank)']
    """
    groups, values, missing = cell_groups(series)
    texts = np.array([BLANK if m else _text(v) for v, m in zip(values, missing)] + [BLANK], dtype=object)
    return pd.Series(texts[groups], index=series.index, dtype=object)


def _text(value: object) -> str:
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def _is_number(value: object, missing: bool) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool) and not missing


def _numbers(series: pd.Series) -> tuple[np.ndarray, np.ndarray, list[object], np.ndarray, np.ndarray]:
    """Per distinct group of a column that is neither numeric nor boolean: whether it is a number, its value."""
    groups, values, missing = cell_groups(series)
    number = np.array([_is_number(v, m) for v, m in zip(values, missing)], dtype=bool)
    value = np.array([float(v) if n else np.nan for v, n in zip(values, number)], dtype=float)
    return groups, number, values, missing, value


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
    groups, number, _, _, value = _numbers(series)
    return value[groups], number[groups]


def holds_numbers(series: pd.Series) -> bool:
    """Numbers, with at most ``*`` or blank cells besides them (a locally suppressed number column).

    >>> holds_numbers(pd.Series([1, "*", None], dtype=object)), holds_numbers(pd.Series(["30-39", 41], dtype=object))
    (True, False)
    """
    if pd.api.types.is_bool_dtype(series):
        return False
    if pd.api.types.is_numeric_dtype(series):
        return True
    groups, number, values, missing, _ = _numbers(series)
    present = np.zeros(len(values), dtype=bool)
    present[groups] = True  # the groups some cell is in (a typed column's blank group may hold none)
    return bool(number[present].any()) and all(
        n or m or v == SUPPRESSED for v, n, m, p in zip(values, number, missing, present) if p
    )


def is_number_column(series: pd.Series) -> bool:
    """Whether a column's type is a number (not a truth value): the ordered distance of
    t-closeness and the numeric summaries apply to it.

    >>> is_number_column(pd.Series([1, 2])), is_number_column(pd.Series([True])), is_number_column(pd.Series(["1"]))
    (True, False, False)
    """
    return bool(pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series))
