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
are counted by ``anonlib.measures.wildcard.WildcardMatches``: for the columns a
record holds a value in, each distinct row of the table is keyed with its blanks
as 0, and the record's key is looked up once per pattern of blanks in the table
(the record's key with that pattern's cells set to 0), all in one sorted search.
Equal rows have equal matches, so the waves below run on the distinct rows (each
weighted by its records) and only rows still failing are re-counted, because
suppression only ever adds matches (a blank matches more, never less): a record
that meets k keeps meeting it.

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
    >>> from anonlib.measures.wildcard import wildcard_matches
    >>> result.cells, result.records, wildcard_matches(result.table, ["age", "sex"]).tolist()
    (2, 2, [4, 4, 4, 4])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.budget import WorkEstimate
from ..core.errors import ColumnError, EmptySelectionError, ParameterError, join_names
from ..measures.target import ReleaseTarget
from ..measures.wildcard import NOT_IN_PEOPLE, WildcardMatches


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


def _importance(df: pd.DataFrame, qis: list[str], importance: Sequence[str] | None) -> list[str]:
    listed = list(importance or [])
    unknown = [c for c in listed if c not in qis]
    if unknown:
        raise ColumnError(f"The importance order names {join_names(unknown)}, which is not a quasi-identifier.")
    if len(set(listed)) != len(listed):
        raise ParameterError("The importance order names a column twice; name each quasi-identifier once.")
    rest = sorted((c for c in qis if c not in listed), key=lambda c: df[c].nunique(dropna=True))
    return listed + rest


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
    module text for the algorithm and what it guarantees). The contract's form of
    ``suppress_cells``, which takes the release target.

    >>> df = pd.DataFrame({"zip": ["1", "1", "2"], "sex": ["f", "f", "f"]})
    >>> result = local_suppression(df, ["zip", "sex"], 3)
    >>> result.table["zip"].isna().tolist(), result.column_cells
    ([False, False, True], {'zip': 1, 'sex': 0})
    """
    return suppress_cells(df, quasi_identifiers, target=ReleaseTarget(k), importance=importance, count=count)


def suppress_cells(
    df: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    *,
    target: ReleaseTarget,
    importance: Sequence[str] | None = None,
    count: str | None = None,
) -> LocalSuppression:
    """Local suppression reaching ``target``'s k in records (``local_suppression``); a target
    counted in people is refused in one sentence (a blanked cell matches record by record).

    >>> suppress_cells(pd.DataFrame({"a": ["x", "x", "y"]}), ["a"], target=ReleaseTarget(2)).cells
    1
    """
    if target.person is not None:
        raise ParameterError(NOT_IN_PEOPLE)
    k = target.k
    qis = list(quasi_identifiers)
    if not qis:
        raise EmptySelectionError("Choose at least one quasi-identifier for local suppression.")
    if count in qis:
        raise ColumnError(f"The record-count column '{count}' cannot be a quasi-identifier.")
    matches = WildcardMatches(df, qis, count)
    order = _importance(df, qis, importance)
    total = int(matches.weights.sum())
    if total < k and len(df):
        raise ParameterError(
            f"The table holds {total:,} records, fewer than k = {k}; no suppression can give every record "
            f"{k} matching records."
        )
    rank = np.array([order.index(c) for c in qis], dtype=np.int64)  # 0 = most important
    original = matches.missing.copy()
    # equal rows have equal matches, so they fail, are chosen in the same wave and lose the same
    # cell: the waves run on the distinct rows (a row of no record kept apart: it is never judged)
    ids, distinct = matches.distinct(matches.weights > 0)
    judged = distinct.weights > 0
    counts = distinct.count(np.arange(len(judged)), distinct.missing)
    failing = np.flatnonzero(judged & (counts < k))
    failing_before = int(distinct.weights[failing].sum())
    failing_counts = counts[failing]
    waves = 0
    while failing.size:
        waves += 1
        lowest = int(failing_counts.min())
        in_wave = failing_counts <= max(lowest, lowest * 3 // 2)
        wave = failing[in_wave]
        columns, reached = _choose(distinct, wave, k, rank)
        before = distinct.missing[wave].copy()
        distinct.blank(wave, columns)
        # the matches each failing row had on the table before the wave (a wave row: with its
        # new blank), plus what the wave's blanks changed
        failing_counts = np.where(in_wave, 0, failing_counts)
        failing_counts[in_wave] = reached
        failing_counts += distinct.gained(failing, wave, before)
        keep = failing_counts < k
        failing, failing_counts = failing[keep], failing_counts[keep]
    return _result(df, qis, order, k, matches.weights, original, distinct.missing[ids], failing_before, waves)


# Measured on this machine class (2 shared cores, under load), Adult resampled to 25,000, 100,000
# and 300,000 records with 6, 8, 10 and 11 quasi-identifiers, k from 2 to 20 (0.1 to 4.7 s):
# about 50 ms, plus 0.1 us per cell of the table (encoding, distinct rows), plus per record
# failing k 35 ns for each pattern of blanks its waves may meet (2^quasi-identifiers: a record
# is counted with each cell blanked, against every pattern of blanks in the table; counted
# up to 2^12 patterns, beyond what was measured).
_SECONDS_FIXED = 0.05
_SECONDS_PER_CELL = 1e-7
_SECONDS_PER_FAILING_PATTERN = 3.5e-8
_PATTERNS_MEASURED = 1 << 12


def estimate_suppress_cells(n_rows: int, failing: int, n_quasi_identifiers: int) -> WorkEstimate:
    """What ``suppress_cells`` costs on a table of ``n_rows`` rows and ``n_quasi_identifiers``
    quasi-identifiers of which ``failing`` records fail k (known before planning, from the
    release target's check).

    >>> round(estimate_suppress_cells(100_000, 25_000, 8).seconds, 2)
    0.35
    >>> round(estimate_suppress_cells(100_000, 80_000, 10).seconds, 1)
    3.0
    """
    cells = int(n_rows) * int(n_quasi_identifiers)
    patterns_met = min(2 ** int(n_quasi_identifiers), _PATTERNS_MEASURED)
    return WorkEstimate(
        "planning local suppression",
        operations=cells,
        seconds=_SECONDS_FIXED + _SECONDS_PER_CELL * cells + _SECONDS_PER_FAILING_PATTERN * patterns_met * int(failing),
        peak_bytes=40 * cells,
    )


def _choose(matches: WildcardMatches, rows: np.ndarray, k: int, rank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the column to blank (see step 2 of the module text) and the matches the row
    has with it blanked: the matches of every row with each of its open cells blanked, counted
    in one call."""
    q = len(rank)
    after = np.full((len(rows), q), -1, dtype=np.int64)
    row, column = np.nonzero(~matches.missing[rows])
    missing = matches.missing[rows[row]]
    missing[np.arange(len(row)), column] = True
    after[row, column] = matches.count(rows[row], missing)
    reaches = after >= k
    any_reach = reaches.any(axis=1, keepdims=True)
    score = np.where(any_reach, np.where(reaches, rank, -1), after * (q + 1) + rank)
    score = np.where(after < 0, -1, score)  # already missing: never chosen
    chosen = score.argmax(axis=1)
    return chosen, after[np.arange(len(rows)), chosen]


def _result(
    df: pd.DataFrame,
    qis: list[str],
    order: list[str],
    k: int,
    weights: np.ndarray,
    original: np.ndarray,
    missing: np.ndarray,
    failing_before: int,
    waves: int,
) -> LocalSuppression:
    new = missing & ~original
    table = df.copy(deep=False)
    for j, column in enumerate(qis):
        if new[:, j].any():
            table[column] = _nullable(df[column]).mask(new[:, j])
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
