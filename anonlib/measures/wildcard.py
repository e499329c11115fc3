"""Records matching under suppressed cells: the counting rule of local suppression.

A locally suppressed cell (missing, or written as a mark such as ``*``) matches any
value. A record's class is then the records that agree with it on every
quasi-identifier where neither holds a suppressed cell (itself included). The
release target's check (``anonlib.measures.target``) and local suppression
(``anonlib.transformations.suppression``) both count with this one rule.

Example:
    >>> wildcard_matches(pd.DataFrame({"a": [1, 1, 2, None]}), ["a"]).tolist()
    [3, 3, 2, 4]
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..core.equivalence import Classes, combine, encode, encode_column
from ..core.errors import EmptySelectionError

_KEY_LIMIT = 1 << 62  # a mixed-radix key at or above this is not formed (``_count_by_pattern``)
_LOOKUPS = 1 << 21  # keys looked up at a time (queries x missing patterns of the table): 16 MB

# A blanked cell matches any value record by record, so it cannot make a class hold k people.
NOT_IN_PEOPLE = (
    "Cells blanked by local suppression are matched record by record, not person by person; with a "
    "person column the target counts people, so suppress whole people instead."
)


class WildcardMatches:
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

    @classmethod
    def _of(
        cls, codes: np.ndarray, cardinalities: tuple[int, ...], missing: np.ndarray, weights: np.ndarray
    ) -> WildcardMatches:
        matches = cls.__new__(cls)
        matches.codes, matches.cardinalities = codes, cardinalities
        matches.missing, matches.weights = missing, weights
        matches._distinct = None
        return matches

    def distinct(self, flag: np.ndarray) -> tuple[np.ndarray, WildcardMatches]:
        """The rows equal on codes, missing cells and ``flag`` (a boolean per row) as one row each,
        weighted by their records: each row's distinct row, and the counter of the distinct rows.
        Equal rows have the same matches, so counting (and suppressing) them once is the same.

        >>> m = WildcardMatches(pd.DataFrame({"a": [1, 2, 1, None]}), ["a"], None)
        >>> ids, d = m.distinct(np.ones(4, dtype=bool))
        >>> ids.tolist(), d.weights.tolist(), d.count(np.arange(3), d.missing).tolist()
        ([1, 2, 1, 0], [1, 2, 1], [4, 3, 2])
        """
        ids, rows = self._grouped(np.asarray(flag, dtype=np.int64))
        first = rows.first_rows
        return ids, WildcardMatches._of(self.codes[first], self.cardinalities, self.missing[first].copy(), rows.sizes)

    def blank(self, rows: np.ndarray, columns: np.ndarray) -> None:
        """Suppress one cell per row (``columns[i]`` of ``rows[i]``)."""
        self.missing[rows, columns] = True
        self._distinct = None

    def _grouped(self, *flags: np.ndarray) -> tuple[np.ndarray, Classes]:
        """Rows equal on codes, missing cells (and ``flags``, 0 or 1 per row) as one class each."""
        visible = np.where(self.missing, 0, self.codes + 1)
        columns = [visible[:, j] for j in range(visible.shape[1])] + list(flags)
        cardinalities = [c + 1 for c in self.cardinalities] + [2] * len(flags)
        ids, n = combine(columns, cardinalities, len(visible), ordered=False)
        return ids, Classes.from_ids(ids, n, self.weights)

    def _table(self) -> tuple:
        """The table as distinct rows: records, visible codes (a code c as c + 1, a missing
        cell as 0), codes, the missing pattern of each row and the missing cells of each pattern."""
        if self._distinct is None:
            _, rows = self._grouped()
            first = rows.first_rows
            pattern, masks = patterns(self.missing[first])
            visible = np.where(self.missing[first], 0, self.codes[first] + 1)
            self._distinct = (rows.sizes, visible, self.codes[first], pattern, masks)
        return self._distinct

    def count(self, rows: np.ndarray, missing: np.ndarray) -> np.ndarray:
        """Records matching each of ``rows`` if its missing cells were ``missing``."""
        return self._matching(self.codes[rows], missing)

    def gained(self, rows: np.ndarray, changed: np.ndarray, before: np.ndarray) -> np.ndarray:
        """The matches each of ``rows`` (as it is now) gained when the rows ``changed`` went
        from the missing cells ``before`` to theirs now: the rows are counted against those rows
        alone, as they are (their records) and as they were (minus their records), so a
        re-count reads a few rows instead of the table.

        >>> m = WildcardMatches(pd.DataFrame({"a": [1, 2, 2], "b": ["x", "y", "z"]}), ["a", "b"], None)
        >>> m.blank(np.array([2]), np.array([1]))
        >>> m.gained(np.arange(3), np.array([2]), np.array([[False, False]])).tolist()
        [0, 1, 0]
        """
        weights = self.weights[changed]
        delta = WildcardMatches._of(
            np.concatenate([self.codes[changed], self.codes[changed]]),
            self.cardinalities,
            np.concatenate([self.missing[changed], before]),
            np.concatenate([weights, -weights]),
        )
        return delta._matching(self.codes[rows], self.missing[rows])

    def _matching(self, codes: np.ndarray, missing: np.ndarray) -> np.ndarray:
        """Records matching rows of ``codes`` with the missing cells ``missing``."""
        out = np.zeros(len(codes), dtype=np.int64)
        if not len(codes) or not len(self.codes):
            return out
        pattern, masks = patterns(missing)
        for p, mask in enumerate(masks):
            queries = np.flatnonzero(pattern == p)
            out[queries] = self._count_on(codes[queries], ~mask)
        return out

    def _count_on(self, codes: np.ndarray, shared: np.ndarray) -> np.ndarray:
        """Records matching each row of ``codes`` on the columns ``shared`` (a boolean per
        column: the query's non-missing ones), a missing cell of the table matching any value.

        The table's rows are keyed on those columns with a missing cell as 0 and a code c as
        c + 1 (mixed radix); a table row missing the cells E matches a query when its key equals
        the query's key with E set to 0. So each query is looked up once per missing pattern of
        the table (its patterns on ``shared``), all in one sorted search."""
        weights, visible, _, _, table_masks = self._table()
        if not shared.any():
            return np.full(len(codes), int(weights.sum()), dtype=np.int64)
        radix = np.where(shared, np.array(self.cardinalities) + 1, 1)
        if math.prod(radix.tolist()) >= _KEY_LIMIT:
            return self._count_by_pattern(codes, shared)
        strides = np.where(shared, np.cumprod(np.concatenate([[1], radix[:-1]])), 0).astype(np.int64)
        keys = visible @ strides
        order = np.argsort(keys)
        keys = keys[order]
        starts = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1], [True]]))
        present, records = keys[starts[:-1]], np.diff(np.concatenate([[0], np.cumsum(weights[order])])[starts])
        columns = np.flatnonzero(shared)  # fewer than 62: each adds a factor of 2 or more to the key space
        bits = np.unique(table_masks[:, columns] @ (1 << np.arange(len(columns), dtype=np.int64)))
        blanks = np.zeros((len(shared), len(bits)), dtype=np.int64)  # the table's missing patterns on ``shared``
        blanks[columns] = (bits[None, :] >> np.arange(len(columns))[:, None]) & 1
        dropped = strides[:, None] * blanks
        out = np.empty(len(codes), dtype=np.int64)
        step = max(1, _LOOKUPS // len(bits))
        for start in range(0, len(codes), step):  # a bounded block of lookups at a time
            query = codes[start : start + step] + 1
            keys = (query @ strides)[:, None] - query @ dropped
            at = np.minimum(np.searchsorted(present, keys), len(present) - 1)
            out[start : start + step] = np.where(present[at] == keys, records[at], 0).sum(axis=1)
        return out

    def _count_by_pattern(self, codes: np.ndarray, shared: np.ndarray) -> np.ndarray:
        """``_count_on`` when the mixed-radix key would not fit 64 bits: for each missing
        pattern of the table, both sides grouped on the columns missing in neither."""
        weights, _, table_codes, table_pattern, table_masks = self._table()
        out = np.zeros(len(codes), dtype=np.int64)
        for m, table_mask in enumerate(table_masks):
            others = np.flatnonzero(table_pattern == m)
            columns = np.flatnonzero(shared & ~table_mask)
            if not columns.size:
                out += int(weights[others].sum())
                continue
            ids, n = combine(
                [np.concatenate([table_codes[others, j], codes[:, j]]) for j in columns],
                [self.cardinalities[j] for j in columns],
                ordered=False,
            )
            sizes = Classes.from_ids(ids[: len(others)], n, weights[others]).sizes
            out += sizes[ids[len(others) :]]
        return out


def patterns(missing: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A pattern id per row (its missing cells) and the missing-cell mask of each pattern."""
    ids, n = combine(
        [missing[:, j].astype(np.int64) for j in range(missing.shape[1])], [2] * missing.shape[1], missing.shape[0]
    )
    return ids, missing[Classes.from_ids(ids, n).first_rows]


def wildcard_matches(df: pd.DataFrame, quasi_identifiers: Sequence[str], *, count: str | None = None) -> np.ndarray:
    """Per row, the records that agree with it on every quasi-identifier where
    neither is missing (itself included; rows weighted by ``count``).

    >>> wildcard_matches(pd.DataFrame({"a": [1, 1, 2, None]}), ["a"]).tolist()
    [3, 3, 2, 4]
    """
    qis = list(quasi_identifiers)
    if not qis:
        raise EmptySelectionError("Choose at least one quasi-identifier.")
    matches = WildcardMatches(df, qis, count)
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
        codes, labels = encode_column(df[column])
        # the mark is found among the distinct values (the last label of a column with blanks
        # names the blank, which is never the mark)
        is_mark = pd.Series(labels, dtype=object).eq(mark).to_numpy(dtype=bool)
        marked = is_mark[codes] & df[column].notna().to_numpy(dtype=bool)
        out[column] = pd.array(codes, dtype="Int64")
        out.loc[marked, column] = pd.NA
    if count is not None:
        out[count] = df[count].to_numpy()
    return out
