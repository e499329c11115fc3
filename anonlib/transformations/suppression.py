"""Local suppression: blank a few quasi-identifier cells instead of removing records.

sdcMicro's ``localSuppression`` (Templ, Kowarik & Meindl 2015) reaches
k-anonymity by setting single cells of the quasi-identifiers to missing. Its
reading of a missing cell is the one used here: **a missing cell matches any
value**. A record's matches are the records that agree with it on every
quasi-identifier where neither of the two is missing (the record itself
included, each row weighted by its record count); the table meets k when every
record has at least k matches. Cells that were missing before suppression are
read the same way (they match anything too), as in sdcMicro; a caller that wants
original blanks to stay a value of their own replaces them by a category first
(``anonlib.workflow.local_steps`` does).

Matches are not a group-by: a record with a blank matches several classes. They
are counted with the shared kernel (``anonlib.core.equivalence.combine`` and
``Classes``): records are split by the pattern of their missing cells; a
record of pattern P matches a record of pattern M when their codes agree on the
columns missing in neither, so for each pair of patterns the kernel groups both
on those columns and the class sizes of the M-records are read at the
P-records. The cost is (patterns present) x (rows), and only rows still failing
are re-counted, because suppression only ever adds matches (a blank matches
more, never less): a record that meets k keeps meeting it.

The algorithm (greedy, in waves):

1. Count every record's matches; the records below k are failing.
2. A wave takes the failing records with the fewest matches (up to 1.5 times
   the fewest, so a large k needs few waves). For each of them
   and each of its non-missing quasi-identifiers, the matches it would have with
   that cell blanked are counted. It blanks the least important column whose
   blank alone lifts it to k; when no single column does, the column giving the
   most matches (ties: the least important).
3. Failing records are re-counted and the next wave starts, until none fails.

What it guarantees: the result meets k under the wildcard reading whenever the
table holds at least k records (a record with every cell blank matches every
record); only records failing k at the moment of their wave lose cells, so
the records touched are at most the records failing k before suppression
(which record suppression would remove); taking the neediest records first
lets their blanks lift others (a blanked record joins every class it now
matches), so often fewer records are touched than fail. It does not guarantee
the fewest cells: that problem is NP-hard (Meyerson & Williams 2004), and
sdcMicro's own algorithm is a heuristic too (it blanks, per failing record, the
least important column where the record differs from its nearest records).

``importance`` lists the quasi-identifiers most important (blanked last) first;
unlisted ones are less important than the listed. The default follows sdcMicro:
a column with more distinct values is less important.

Example:
    >>> df = pd.DataFrame({"age": [30, 30, 30, 40], "sex": ["f", "f", "m", "f"]})
    >>> result = local_suppression(df, ["age", "sex"], k=2)
    >>> result.table.isna().to_numpy().tolist()
    [[False, False], [False, False], [False, True], [True, False]]
    >>> result.cells, result.records, wildcard_matches(result.table, ["age", "sex"]).tolist()
    (2, 2, [4, 4, 4, 4])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.equivalence import Classes, combine, encode, encode_column
from ..core.errors import ColumnError, EmptySelectionError, ParameterError, join_names
from ..core.metrics import whole_k


@dataclass(frozen=True)
class LocalSuppression:
    """The table after local suppression and what it cost.

    ``table`` has ``df``'s rows, index and columns; a suppressed cell is
    missing. ``cells`` counts suppressed cells and ``records`` records with at
    least one (both in records: a row with count 3 counts 3). ``suppressed`` is
    a boolean frame (rows x quasi-identifiers) of the cells this call blanked;
    ``per_column`` the cells per quasi-identifier; ``importance`` the order used
    (most important first); ``failing_before`` the records that failed k.
    """

    table: pd.DataFrame
    cells: int
    records: int
    suppressed: pd.DataFrame
    per_column: tuple[tuple[str, int], ...]
    importance: tuple[str, ...]
    k: int
    failing_before: int
    waves: int

    @property
    def column_cells(self) -> dict[str, int]:
        """Cells suppressed per quasi-identifier (records)."""
        return dict(self.per_column)


class _Matches:
    """Codes, missing cells and weights of the quasi-identifiers, and the wildcard
    match counter (see the module text)."""

    def __init__(self, df: pd.DataFrame, columns: Sequence[str], count: str | None):
        table = encode(df, columns, count=count)
        self.codes = table.codes
        self.cardinalities = table.cardinalities
        self.missing = df[list(columns)].isna().to_numpy().copy()
        self.weights = (
            np.ones(len(df), dtype=np.int64) if table.weights is None else np.asarray(table.weights, dtype=np.int64)
        )
        self._distinct: tuple | None = None

    def blank(self, rows: np.ndarray, columns: np.ndarray) -> None:
        """Suppress one cell per row (``columns[i]`` of ``rows[i]``)."""
        self.missing[rows, columns] = True
        self._distinct = None

    def _rows(self, codes: np.ndarray, missing: np.ndarray) -> tuple[np.ndarray, Classes]:
        """Rows equal on codes and missing cells as one class each (kernel ids), so
        counting runs on distinct rows."""
        q = codes.shape[1]
        visible = np.where(missing, -1, codes) + 1
        ids, n = combine([visible[:, j] for j in range(q)], [c + 1 for c in self.cardinalities], len(codes))
        return ids, Classes.from_ids(ids, n)

    def _table(self) -> tuple:
        """The table as distinct rows: codes, missing cells, records, and the rows of each missing pattern."""
        if self._distinct is None:
            ids, rows = self._rows(self.codes, self.missing)
            first = rows.first_rows
            weights = Classes.from_ids(ids, rows.n_classes, self.weights).sizes
            codes, missing = self.codes[first], self.missing[first]
            pattern, masks = _patterns(missing)
            members = [np.flatnonzero(pattern == m) for m in range(len(masks))]
            self._distinct = (codes, weights, masks, members)
        return self._distinct

    def count(self, rows: np.ndarray, missing: np.ndarray) -> np.ndarray:
        """Records matching each of ``rows`` if its missing cells were ``missing``."""
        if not len(rows):
            return np.zeros(0, dtype=np.int64)
        table_codes, table_weights, table_masks, members = self._table()
        query_ids, queries_distinct = self._rows(self.codes[rows], missing)
        first = queries_distinct.first_rows
        query_codes, query_missing = self.codes[rows[first]], missing[first]
        out = np.zeros(len(first), dtype=np.int64)
        pattern, query_masks = _patterns(query_missing)
        for p, query_mask in enumerate(query_masks):
            queries = np.flatnonzero(pattern == p)
            codes = query_codes[queries]
            for m, table_mask in enumerate(table_masks):
                others = members[m]
                shared = np.flatnonzero(~query_mask & ~table_mask)
                weights = table_weights[others]
                if not shared.size:
                    out[queries] += int(weights.sum())
                    continue
                ids, n = combine(
                    [np.concatenate([table_codes[others, j], codes[:, j]]) for j in shared],
                    [self.cardinalities[j] for j in shared],
                )
                sizes = Classes.from_ids(ids[: len(others)], n, weights).sizes
                out[queries] += sizes[ids[len(others) :]]
        return out[query_ids]


def _patterns(missing: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A pattern id per row (its missing cells) and the missing-cell mask of each pattern."""
    ids, n = combine(
        [missing[:, j].astype(np.int64) for j in range(missing.shape[1])], [2] * missing.shape[1], missing.shape[0]
    )
    return ids, missing[Classes.from_ids(ids, n).first_rows]


def _importance(df: pd.DataFrame, qis: list[str], importance: Sequence[str] | None) -> list[str]:
    listed = list(importance or [])
    unknown = [c for c in listed if c not in qis]
    if unknown:
        raise ColumnError(f"The importance order names {join_names(unknown)}, which is not a quasi-identifier.")
    if len(set(listed)) != len(listed):
        raise ParameterError("The importance order names a column twice; name each quasi-identifier once.")
    rest = sorted((c for c in qis if c not in listed), key=lambda c: df[c].nunique(dropna=True))
    return listed + rest


def wildcard_matches(df: pd.DataFrame, quasi_identifiers: Sequence[str], *, count: str | None = None) -> np.ndarray:
    """Per row, the records that agree with it on every quasi-identifier where
    neither is missing (itself included; rows weighted by ``count``).

    >>> wildcard_matches(pd.DataFrame({"a": [1, 1, 2, None]}), ["a"]).tolist()
    [3, 3, 2, 4]
    """
    qis = list(quasi_identifiers)
    if not qis:
        raise EmptySelectionError("Choose at least one quasi-identifier.")
    matches = _Matches(df, qis, count)
    return matches.count(np.arange(len(df)), matches.missing)


def marked_codes(
    df: pd.DataFrame, quasi_identifiers: Sequence[str], mark: str, *, count: str | None = None
) -> pd.DataFrame:
    """The quasi-identifiers as integer codes where a blank of the file is a value of
    its own and a cell equal to ``mark`` (a suppressed cell, such as ``*``) is
    missing, so it matches any value; the count column is carried along.

    >>> codes = marked_codes(pd.DataFrame({"a": ["x", None, "*"]}), ["a"], "*")
    >>> codes["a"].tolist(), wildcard_matches(codes, ["a"]).tolist()
    ([1, 2, <NA>], [2, 2, 3])
    """
    out = pd.DataFrame(index=pd.RangeIndex(len(df)))
    for column in quasi_identifiers:
        codes, _ = encode_column(df[column])
        marked = df[column].astype(object).eq(mark).fillna(False).to_numpy(dtype=bool)
        out[column] = pd.array(codes, dtype="Int64")
        out.loc[marked, column] = pd.NA
    if count is not None:
        out[count] = df[count].to_numpy()
    return out


def local_suppression(
    df: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    k: int,
    *,
    importance: Sequence[str] | None = None,
    count: str | None = None,
) -> LocalSuppression:
    """Suppress quasi-identifier cells (set them missing) until every record has at
    least ``k`` matching records, a missing cell matching any value (see the
    module text for the algorithm and what it guarantees).

    >>> df = pd.DataFrame({"zip": ["1", "1", "2"], "sex": ["f", "f", "f"]})
    >>> result = local_suppression(df, ["zip", "sex"], 3)
    >>> result.table["zip"].isna().tolist(), result.column_cells
    ([False, False, True], {'zip': 1, 'sex': 0})
    """
    k = whole_k(k)
    qis = list(quasi_identifiers)
    if not qis:
        raise EmptySelectionError("Choose at least one quasi-identifier for local suppression.")
    if count in qis:
        raise ColumnError(f"The record-count column '{count}' cannot be a quasi-identifier.")
    matches = _Matches(df, qis, count)
    order = _importance(df, qis, importance)
    total = int(matches.weights.sum())
    if total < k and len(df):
        raise ParameterError(
            f"The table holds {total:,} records, fewer than k = {k}; no suppression can give every record "
            f"{k} matching records."
        )
    rank = np.array([order.index(c) for c in qis], dtype=np.int64)  # 0 = most important
    original = matches.missing.copy()
    judged = matches.weights > 0
    counts = matches.count(np.arange(len(df)), matches.missing)
    failing = np.flatnonzero(judged & (counts < k))
    failing_before = int(matches.weights[failing].sum())
    failing_counts = counts[failing]
    waves = 0
    while failing.size:
        waves += 1
        lowest = int(failing_counts.min())
        wave = failing[failing_counts <= max(lowest, lowest * 3 // 2)]
        matches.blank(wave, _choose(matches, wave, k, rank))
        failing_counts = matches.count(failing, matches.missing[failing])
        keep = failing_counts < k
        failing, failing_counts = failing[keep], failing_counts[keep]
    return _result(df, qis, order, k, matches, original, failing_before, waves)


def _choose(matches: _Matches, rows: np.ndarray, k: int, rank: np.ndarray) -> np.ndarray:
    """Per row, the column to blank (see step 2 of the module text)."""
    q = len(rank)
    after = np.full((len(rows), q), -1, dtype=np.int64)
    for j in range(q):
        open_rows = np.flatnonzero(~matches.missing[rows, j])
        if open_rows.size:
            missing = matches.missing[rows[open_rows]].copy()
            missing[:, j] = True
            after[open_rows, j] = matches.count(rows[open_rows], missing)
    reaches = after >= k
    any_reach = reaches.any(axis=1, keepdims=True)
    score = np.where(any_reach, np.where(reaches, rank, -1), after * (q + 1) + rank)
    score = np.where(after < 0, -1, score)  # already missing: never chosen
    return score.argmax(axis=1)


def _result(
    df: pd.DataFrame,
    qis: list[str],
    order: list[str],
    k: int,
    matches: _Matches,
    original: np.ndarray,
    failing_before: int,
    waves: int,
) -> LocalSuppression:
    new = matches.missing & ~original
    table = df.copy(deep=False)
    for j, column in enumerate(qis):
        if new[:, j].any():
            table[column] = _nullable(df[column]).mask(new[:, j])
    weights = matches.weights
    return LocalSuppression(
        table=table,
        cells=int((new * weights[:, None]).sum()),
        records=int(weights[new.any(axis=1)].sum()),
        suppressed=pd.DataFrame(new, index=df.index, columns=qis),
        per_column=tuple((c, int(weights[new[:, j]].sum())) for j, c in enumerate(qis)),
        importance=tuple(order),
        k=k,
        failing_before=failing_before,
        waves=waves,
    )


def _nullable(series: pd.Series) -> pd.Series:
    """``series`` in a dtype that holds a missing value without changing the others
    (numpy integers and booleans become pandas' nullable ones)."""
    if series.dtype.kind in "iu":
        return series.astype("Int64")
    if series.dtype.kind == "b":
        return series.astype("boolean")
    return series
