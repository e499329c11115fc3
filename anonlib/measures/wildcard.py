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

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..core.equivalence import Classes, combine, encode, encode_column
from ..core.errors import EmptySelectionError

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
            pattern, masks = patterns(missing)
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
        pattern, query_masks = patterns(query_missing)
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
        codes, _ = encode_column(df[column])
        marked = df[column].astype(object).eq(mark).fillna(False).to_numpy(dtype=bool)
        out[column] = pd.array(codes, dtype="Int64")
        out.loc[marked, column] = pd.NA
    if count is not None:
        out[count] = df[count].to_numpy()
    return out
