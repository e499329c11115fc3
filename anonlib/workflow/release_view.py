"""What the release is still good for: the working copy's released table set against the loaded file.

``release_view(copy)`` measures, in records, for the table a ``WorkingCopy``
releases (``copy.release()``) against the file as loaded (``copy.loaded``):

- the release target and whether it is met (``copy.check``), the records
  suppressed (absent from the release), and each step with the records failing
  the target before and after it and what it cost;
- per quasi-identifier and sensitive attribute, the distribution before and
  after (``ColumnView``): records per shown value for categories (generalized
  labels, ``*`` of a locally suppressed cell and ``(blank)`` for a missing cell
  are values like any other); for numbers the mean, standard deviation and
  quartiles before and after, and records per bin (the same bins before and
  after). A numeric column the steps turned into text intervals (``30-39``) is
  shown by its categories after, the loaded file's records counted into the
  same intervals;
- a contingency table of a chosen pair of columns, before and after;
- a classifier comparison (``ClassifierComparison``): a decision tree
  (scikit-learn, seeded) predicting a chosen column from the other released
  columns, trained and cross-validated (stratified 5-fold, seeded) on the
  released table and on the loaded file, each beside the accuracy of always
  guessing the most common value. Each table is subsampled (seeded) to at most
  ``max_rows`` records, and further when the run is estimated above
  ``time_limit`` seconds; the view says so.

The record-count column (a row standing for several records) weighs every
count, statistic and the classifier's rows. Inputs that cannot be answered (a
column to predict with one value, a pair of the same column, an empty release)
are one ``AnonlibError`` sentence.

The classifier lives in ``anonlib.workflow.classifier`` (shared with the private
release's train-on-release, test-on-real comparison); its results are re-exported here.
The private release (``anonlib.workflow.private_release``) reuses this module's column
views and contingency tables through ``column_view`` and ``contingency``.

Example:
    >>> import pandas as pd
    >>> from anonlib.core.dataset import Dataset
    >>> from anonlib.workflow import BandsStep, ReleaseTarget, WorkingCopy
    >>> frame = pd.DataFrame({"age": [31, 35, 38, 44, 41, 47], "sex": list("FMFMFM")})
    >>> ds = Dataset.from_frame("d", frame, {"age": "quasi-identifier", "sex": "sensitive"})
    >>> copy = WorkingCopy.start(ds, ReleaseTarget(k=3)).apply(BandsStep("age", 10, 1, 31, 47, True), "Individual privacy")
    >>> view = release_view(copy, classify=False)
    >>> view.met, view.released_records, view.suppressed_records
    (True, 6, 0)
    >>> age = view.column("age")
    >>> age.kind, age.distinct_before, age.distinct_after
    ('number → categories', 6, 2)
    >>> [(c.value, c.before, c.after) for c in age.counts]
    [('31-39', 3, 3), ('40-47', 3, 3)]
    >>> view.pair.columns, view.pair.after
    (('age', 'sex'), ((2, 1), (1, 2)))
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from ..core.cells import BLANK, cell_texts, holds_numbers, numbers_in, record_weights
from ..core.default_hierarchy import is_code_name
from ..core.errors import AnonlibError, ColumnError, EmptySelectionError, ParameterError, join_names
from ..core.hierarchy import SUPPRESSED
from .classifier import (
    MAX_ROWS,
    MIN_ROWS,
    Accuracy,
    ClassifierComparison,
    classifier_pipeline,
    compare_classifiers,
    comparison_seconds,
    cross_validated,
    model_inputs,
)
from .history import StepRow, WorkingCopy
from .release import default_release_columns

MAX_VALUES = 40  # values listed per column; the rest are one "(other ...)" row
MAX_PAIR_VALUES = 12  # values per side of a contingency table; the rest are "(other)"
MAX_BINS = 20  # bins of a numeric column's distribution
_INTERVAL = re.compile(r"^\s*[\[(]?\s*(-?\d+(?:\.\d+)?)\s*-\s*(-?\d+(?:\.\d+)?)\s*[\])]?\s*$")
_MASK = re.compile(r"^(\d*)(\*+)$")  # a masked code: 1000* covers 10000..10009


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class ValueCount:
    """Records showing ``value`` before (None: the value cannot be counted in the loaded file) and after."""

    value: str
    before: int | None
    after: int


@dataclass(frozen=True)
class NumberSummary:
    """Records with a number, their mean, standard deviation (n - 1) and quartiles (pandas' linear rule)."""

    records: int
    mean: float
    sd: float
    minimum: float
    q1: float
    median: float
    q3: float
    maximum: float


@dataclass(frozen=True)
class ColumnView:
    """One column before and after.

    ``kind``: ``category``, ``number`` (numbers before and after; ``*`` or blank
    cells counted in ``other_after``) or ``number → categories`` (the steps
    turned the numbers into text such as intervals). ``counts``: records per
    shown value (per bin for a number), in display order.
    """

    column: str
    role: str
    kind: str
    distinct_before: int
    distinct_after: int
    counts: tuple[ValueCount, ...]
    before: NumberSummary | None = None
    after: NumberSummary | None = None
    other_before: int = 0  # records without a number (blank) before
    other_after: int = 0  # records without a number (blank, '*') after
    edges: tuple[float, ...] = ()  # a number column's bins: their edges, or each value (``bins`` = exact)
    bins: str = ""  # exact, whole or float (see ``_bins``)

    def sentence(self) -> str:
        """What happened to the column, in plain words."""
        if self.kind == "number":
            same = self.before == self.after
            text = (
                f"{self.column}: numbers kept as they are"
                if same
                else f"{self.column}: numbers changed (mean {_num(self.before.mean)} → {_num(self.after.mean)}, "
                f"median {_num(self.before.median)} → {_num(self.after.median)})"
                if self.before and self.after
                else f"{self.column}: numbers"
            )
            if self.other_after > self.other_before:
                text += f"; {self.other_after - self.other_before:,} more records without a number (blank or *)"
            return text + "."
        if self.distinct_before == self.distinct_after:
            return f"{self.column}: {self.distinct_after:,} values, as many as before."
        return f"{self.column}: {self.distinct_before:,} values become {self.distinct_after:,}."


@dataclass(frozen=True)
class Contingency:
    """Records per pair of shown values of two columns, before and after (rows: the first column)."""

    columns: tuple[str, str]
    rows_before: tuple[str, ...]
    columns_before: tuple[str, ...]
    before: tuple[tuple[int, ...], ...]
    rows_after: tuple[str, ...]
    columns_after: tuple[str, ...]
    after: tuple[tuple[int, ...], ...]

    def frame(self, which: str = "after") -> pd.DataFrame:
        """The table as a DataFrame (``which``: ``before`` or ``after``)."""
        rows, cols, values = (
            (self.rows_before, self.columns_before, self.before)
            if which == "before"
            else (self.rows_after, self.columns_after, self.after)
        )
        return pd.DataFrame(list(values), index=list(rows), columns=list(cols))


@dataclass(frozen=True)
class ReleaseView:
    """Everything the Release view shows (see the module text)."""

    name: str
    target: str
    met: bool | None
    status: str
    loaded_records: int
    released_records: int
    suppressed_records: int
    steps: tuple[StepRow, ...]
    columns: tuple[ColumnView, ...]
    pair: Contingency | None
    classifier: ClassifierComparison | None
    notes: tuple[str, ...]
    seconds: float
    problems: tuple[str, ...] = ()  # parts refused with ``strict=False`` (a bad pair, a column with one value)

    def column(self, name: str) -> ColumnView:
        """The view of one column; a sentence when it is not shown."""
        for view in self.columns:
            if view.column == name:
                return view
        raise ColumnError(f"{name} is not a quasi-identifier or sensitive attribute of the release.")

    def sentences(self) -> tuple[str, ...]:
        """The view in plain words: the target, the records suppressed, each column, the classifier."""
        out = [self.status]
        if self.suppressed_records:
            out.append(
                f"{self.suppressed_records:,} of {self.loaded_records:,} records are suppressed: they are "
                "not in the release."
            )
        else:
            out.append(f"No record is suppressed: all {self.loaded_records:,} records are in the release.")
        out.extend(c.sentence() for c in self.columns)
        if self.classifier is not None:
            out.append(self.classifier.sentence())
        return tuple(out) + self.problems

    def to_json(self) -> dict[str, Any]:
        """Plain JSON values (NaN as null).

        >>> import pandas as pd
        >>> from anonlib.core.dataset import Dataset
        >>> ds = Dataset.from_frame("d", pd.DataFrame({"a": list("xxyy")}), {"a": "quasi-identifier"})
        >>> data = release_view(WorkingCopy.start(ds), classify=False).to_json()
        >>> data["released_records"], data["columns"][0]["counts"]
        (4, [{'value': 'x', 'before': 2, 'after': 2}, {'value': 'y', 'before': 2, 'after': 2}])
        """
        return _plain(asdict(self))


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if not math.isfinite(float(value)) else float(value)
    return value


def _num(value: float) -> str:
    """A number as a label or in a sentence: whole numbers in full, others to 4 significant digits.

    >>> _num(10001.0), _num(20.65), _num(0.123456)
    ('10001', '20.65', '0.1235')
    """
    value = float(value)
    if value.is_integer():
        return str(int(value))
    return f"{value:.4g}" if abs(value) < 1e4 else f"{value:.1f}"


# --------------------------------------------------------------------------- the frames


def shown_columns(copy: WorkingCopy) -> tuple[str, ...]:
    """The released quasi-identifiers and sensitive attributes, in the file's order (the columns the view shows).

    >>> import pandas as pd
    >>> from anonlib.core.dataset import Dataset
    >>> ds = Dataset.from_frame("d", pd.DataFrame({"id": [1], "age": [3], "dx": ["a"], "x": [0]}),
    ...                         {"id": "identifier", "age": "quasi-identifier", "dx": "sensitive", "x": "ignore"})
    >>> shown_columns(WorkingCopy.start(ds))
    ('age', 'dx')
    """
    current = copy.current
    released = default_release_columns(current)
    return tuple(
        str(c)
        for c in current.frame.columns
        if c in released and (c in current.quasi_identifiers or c in current.sensitive)
    )


def sensitive_columns(copy: WorkingCopy) -> tuple[str, ...]:
    """The shown columns that are sensitive attributes."""
    return tuple(c for c in shown_columns(copy) if c in copy.current.sensitive)


def _frames(copy: WorkingCopy) -> tuple[pd.DataFrame, pd.DataFrame, list[str], str | None]:
    """The loaded and released records (the assessed records, ``Dataset.assessed_frame``, a row
    per table row) and the columns shown."""
    current = copy.current
    columns = list(shown_columns(copy))
    if not columns:
        raise EmptySelectionError("Mark at least one column as quasi-identifier or sensitive to see the release.")
    before, _ = copy.loaded.assessed_frame(columns, copy.target.sensitive)
    after, _ = current.assessed_frame(columns, copy.target.sensitive)
    return before, after, columns, current.count


# --------------------------------------------------------------------------- statistics


def weighted_summary(values: np.ndarray, weights: np.ndarray) -> NumberSummary | None:
    """Mean, sd and quartiles of ``values`` each counted ``weights`` times (as pandas on the repeated values).

    >>> s = weighted_summary(np.array([1.0, 2.0, 4.0]), np.array([1, 2, 1]))
    >>> s.records, s.mean, s.median, s.q1, s.q3
    (4, 2.25, 2.0, 1.75, 2.5)
    >>> round(s.sd, 9) == round(float(pd.Series([1.0, 2, 2, 4]).std()), 9)
    True
    """
    keep = ~np.isnan(values) & (weights > 0)
    values, weights = values[keep], weights[keep]
    total = int(weights.sum())
    if total == 0:
        return None
    order = np.argsort(values, kind="stable")
    values, weights = values[order], weights[order]
    as_float = weights.astype(np.float64)  # exact: counts are below 2**53 (summed by numpy, not a BLAS dot)
    mean = float((values * as_float).sum() / total)
    sd = float(math.sqrt((as_float * (values - mean) ** 2).sum() / (total - 1))) if total > 1 else float("nan")
    ends = np.cumsum(weights)  # the repeated array's positions 0..ends[i]-1 hold values[i]

    def at(position: int) -> float:
        return float(values[np.searchsorted(ends, position, side="right")])

    def quantile(q: float) -> float:
        h = (total - 1) * q
        low = math.floor(h)
        a, b = at(low), at(min(low + 1, total - 1))
        return a + (h - low) * (b - a)

    return NumberSummary(
        total, mean, sd, float(values[0]), quantile(0.25), quantile(0.5), quantile(0.75), float(values[-1])
    )


def _counts(labels: pd.Series, weights: np.ndarray) -> dict[str, int]:
    """Records per label, in the order the labels first appear."""
    codes, uniques = pd.factorize(labels.to_numpy())
    totals = np.bincount(codes, weights=weights, minlength=len(uniques))
    return {str(k): int(round(v)) for k, v in zip(uniques.tolist(), totals.tolist())}


def _interval(label: str) -> tuple[float, float] | None:
    """The numbers an interval label covers (both ends included).

    >>> _interval("30-39"), _interval("[15-19]"), _interval("-5--1"), _interval("x")
    ((30.0, 39.0), (15.0, 19.0), (-5.0, -1.0), None)
    """
    match = _INTERVAL.match(label)
    if not match:
        return None
    low, high = float(match.group(1)), float(match.group(2))
    return (low, high) if low <= high else None


def _single(label: str) -> tuple[float, float] | None:
    """A label that is one number (a value kept as it is among intervals) as an interval of itself.

    >>> _single("1950"), _single("x")
    ((1950.0, 1950.0), None)
    """
    try:
        value = float(label)
    except ValueError:
        return None
    return (value, value) if math.isfinite(value) else None


def _order(labels: Sequence[str], totals: dict[str, int]) -> list[str]:
    """Intervals and numbers by their value, then other values by records (most first)."""

    def key(label: str):
        bounds = _interval(label)
        if bounds is not None:
            return (0, bounds[0], bounds[1], "")
        try:
            return (0, float(label), float(label), "")
        except ValueError:
            return (1, -totals.get(label, 0), 0.0, label)

    return sorted(labels, key=key)


def _limited(rows: list[ValueCount]) -> tuple[ValueCount, ...]:
    if len(rows) <= MAX_VALUES:
        return tuple(rows)
    by_size = sorted(range(len(rows)), key=lambda i: -(rows[i].after + (rows[i].before or 0)))
    kept = sorted(by_size[: MAX_VALUES - 1])
    rest = [rows[i] for i in by_size[MAX_VALUES - 1 :]]
    before = None if any(r.before is None for r in rest) else sum(r.before for r in rest)
    other = ValueCount(f"(other {len(rest):,} values)", before, sum(r.after for r in rest))
    return tuple(rows[i] for i in kept) + (other,)


def _bins(values: np.ndarray) -> tuple[np.ndarray, str]:
    """Bins for numbers: each value when there are at most ``MAX_BINS`` (``exact``), else at most
    ``MAX_BINS`` equal widths, whole-number edges for whole numbers (``whole``: bin [a, b) shown as
    ``a-(b-1)``) or ``float`` edges.

    >>> _bins(np.array([3.0, 1.0, 3.0]))
    (array([1., 3.]), 'exact')
    >>> edges, kind = _bins(np.arange(17.0, 91.0)); kind, _bin_labels(edges, kind)[:2], len(edges) - 1
    ('whole', ['17-20', '21-24'], 19)
    """
    distinct = np.unique(values)
    if len(distinct) <= MAX_BINS:  # one bar per value
        return distinct, "exact"
    low, high = float(distinct[0]), float(distinct[-1])
    if np.all(distinct == np.floor(distinct)):
        width = max(1, math.ceil((high - low + 1) / MAX_BINS))
        return np.arange(low, high + width + 1, width, dtype=float)[: math.ceil((high - low + 1) / width) + 1], "whole"
    return np.histogram_bin_edges(values, bins=MAX_BINS, range=(low, high)), "float"


def _bin_labels(edges: np.ndarray, kind: str) -> list[str]:
    if kind == "exact":
        return [_num(v) for v in edges]
    if kind == "whole":
        return [_num(a) if b - a == 1 else f"{_num(a)}-{_num(b - 1)}" for a, b in zip(edges[:-1], edges[1:])]
    return [f"{_num(a)} to {_num(b)}" for a, b in zip(edges[:-1], edges[1:])]


def _binned(values: np.ndarray, mask: np.ndarray, edges: np.ndarray, kind: str) -> np.ndarray:
    """Per row the bin index (-1: no number, or outside the bins)."""
    out = np.full(len(values), -1, dtype=np.int64)
    if kind == "exact":
        position = np.searchsorted(edges, values[mask])
        hit = (position < len(edges)) & (edges[np.minimum(position, len(edges) - 1)] == values[mask])
        out[np.flatnonzero(mask)[hit]] = position[hit]
        return out
    inside = mask & (values >= edges[0]) & (values <= edges[-1])
    index = np.clip(np.searchsorted(edges, values[inside], side="right") - 1, 0, len(edges) - 2)
    out[inside] = index
    return out


def column_view(
    column: str, role: str, before: pd.Series, after: pd.Series, w_before: np.ndarray, w_after: np.ndarray
) -> ColumnView:
    """One column before (``before``, each row ``w_before`` records) and after: the
    Release view's ``ColumnView`` (also of a private release against the loaded file).

    >>> v = column_view("sex", "quasi-identifier", pd.Series(list("FFM")), pd.Series(list("FMM")),
    ...                 np.ones(3, dtype=int), np.ones(3, dtype=int))
    >>> [(c.value, c.before, c.after) for c in v.counts]
    [('F', 2, 1), ('M', 1, 2)]
    >>> ages = column_view("age", "quasi-identifier", pd.Series([30, 40, 50]), pd.Series(["*", "*", "*"]),
    ...                    np.ones(3, dtype=int), np.ones(3, dtype=int))
    >>> [(c.value, c.before, c.after) for c in ages.counts]   # generalized to the top: every record was there
    [('*', 3, 3)]
    """
    shown_before, shown_after = cell_texts(before), cell_texts(after)
    distinct_before = int(before.dropna().nunique())
    distinct_after = int(after.dropna().nunique())
    numeric_before = holds_numbers(before) and pd.api.types.is_numeric_dtype(before)
    code = is_code_name(column)  # ZIP or FIPS codes read as numbers: values to count, never to average
    if numeric_before and not code and holds_numbers(after) and before.notna().any():
        v_before, m_before = numbers_in(before)
        v_after, m_after = numbers_in(after)
        summary_before = weighted_summary(v_before, w_before)
        summary_after = weighted_summary(v_after, w_after)
        both = np.concatenate([v_before[m_before], v_after[m_after]])
        edges, bins = _bins(both)
        labels = _bin_labels(edges, bins)
        n_before = np.bincount(
            _binned(v_before, m_before, edges, bins) + 1, weights=w_before, minlength=len(labels) + 1
        )
        n_after = np.bincount(_binned(v_after, m_after, edges, bins) + 1, weights=w_after, minlength=len(labels) + 1)
        rows = [ValueCount(label, int(b), int(a)) for label, b, a in zip(labels, n_before[1:], n_after[1:])]
        other_before = int(w_before[~m_before].sum())
        other_after = int(w_after[~m_after].sum())
        marks = _counts(shown_after[~m_after], w_after[~m_after]) if other_after else {}
        marks_before = _counts(shown_before[~m_before], w_before[~m_before]) if other_before else {}
        for label in _order(set(marks) | set(marks_before), {**marks_before, **marks}):
            rows.append(ValueCount(label, marks_before.get(label, 0), marks.get(label, 0)))
        return ColumnView(
            column,
            role,
            "number",
            distinct_before,
            distinct_after,
            tuple(rows),
            summary_before,
            summary_after,
            other_before,
            other_after,
            tuple(float(e) for e in edges),
            bins,
        )
    counts_after = _counts(shown_after, w_after)
    if numeric_before and before.notna().any() and not (code and holds_numbers(after)):
        # numbers (or codes) turned into text: count the loaded records per interval or mask
        v_before, m_before = numbers_in(before)
        summary_before = None if code else weighted_summary(v_before, w_before)
        intervals = {label: _interval(label) for label in counts_after}
        texts = cell_texts(before).to_numpy(dtype=str)
        # "*" beside no interval, number or masked code is the top of a hierarchy (the column generalized to
        # one value): every loaded number went there; beside them, cells suppressed one by one
        top = not any(
            label not in (SUPPRESSED, BLANK) and ((intervals[label] or _single(label)) or _MASK.match(label))
            for label in counts_after
        )
        rows = []
        for label in _order(list(counts_after), counts_after):
            bounds = intervals[label] or _single(label)
            mask = _MASK.match(label) if label != SUPPRESSED else None
            if bounds is not None:
                inside = m_before & (v_before >= bounds[0]) & (v_before <= bounds[1])
                n_before: int | None = int(w_before[inside].sum())
            elif mask is not None:  # masked digits: the loaded numbers written with that prefix and length
                inside = m_before & (np.char.str_len(texts) == len(label)) & np.char.startswith(texts, mask.group(1))
                n_before = int(w_before[inside].sum())
            elif label == BLANK:
                n_before = int(w_before[~m_before].sum())
            elif label == SUPPRESSED:
                n_before = int(w_before[m_before].sum()) if top else 0
            else:
                n_before = None
            rows.append(ValueCount(label, n_before, counts_after[label]))
        return ColumnView(
            column,
            role,
            "number → categories",
            distinct_before,
            distinct_after,
            _limited(rows),
            summary_before,
            None,
            int(w_before[~m_before].sum()),
            0,
        )
    counts_before = _counts(shown_before, w_before)
    labels = list(dict.fromkeys(list(counts_before) + list(counts_after)))
    totals = {label: counts_before.get(label, 0) + counts_after.get(label, 0) for label in labels}
    rows = [
        ValueCount(label, counts_before.get(label, 0), counts_after.get(label, 0)) for label in _order(labels, totals)
    ]
    return ColumnView(column, role, "category", distinct_before, distinct_after, _limited(rows))


# --------------------------------------------------------------------------- contingency


def _pair_labels(series: pd.Series, view: ColumnView, before: bool) -> np.ndarray:
    """Shown values of a column for a contingency table: a number column by the bins of its view;
    a number column turned into intervals, before, by those intervals."""
    shown = cell_texts(series).to_numpy()
    if view.kind == "number":
        values, mask = numbers_in(series)
        edges = np.asarray(view.edges, dtype=float)
        labels = np.array(_bin_labels(edges, view.bins), dtype=object)
        index = _binned(values, mask, edges, view.bins)
        shown = shown.copy()
        shown[index >= 0] = labels[index[index >= 0]]
        return shown
    if view.kind == "number → categories" and before:
        values, mask = numbers_in(series)
        shown = shown.copy()
        for c in view.counts:
            bounds = _interval(c.value)
            if bounds is not None:
                shown[mask & (values >= bounds[0]) & (values <= bounds[1])] = c.value
    return shown


def _top(labels: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row the code of its shown value, and the values: past ``MAX_PAIR_VALUES`` values, the
    ``MAX_PAIR_VALUES - 1`` with the most records and "(other)" for the rest."""
    codes, uniques = pd.factorize(labels)
    totals = np.rint(np.bincount(codes, weights=weights, minlength=len(uniques))).astype(np.int64)
    if len(uniques) <= MAX_PAIR_VALUES:
        return codes, np.asarray(uniques, dtype=object)
    ranked = pd.Series(totals, index=uniques).sort_index().sort_values(ascending=False)  # as a groupby, then by records
    keep = set(ranked.index[: MAX_PAIR_VALUES - 1])
    merged, values = pd.factorize(np.array([u if u in keep else "(other)" for u in uniques], dtype=object))
    return merged[codes], np.asarray(values, dtype=object)


def _crosstab(a: np.ndarray, b: np.ndarray, weights: np.ndarray) -> tuple[tuple[str, ...], tuple[str, ...], tuple]:
    (ca, va), (cb, vb) = _top(a, weights), _top(b, weights)
    flat = np.bincount(ca * len(vb) + cb, weights=weights, minlength=len(va) * len(vb))
    table = np.rint(flat).astype(np.int64).reshape(len(va), len(vb))
    names_a, names_b = [str(v) for v in va], [str(v) for v in vb]
    rows = _order(sorted(names_a), dict(zip(names_a, table.sum(axis=1).tolist())))
    cols = _order(sorted(names_b), dict(zip(names_b, table.sum(axis=0).tolist())))
    at_a, at_b = {n: i for i, n in enumerate(names_a)}, {n: i for i, n in enumerate(names_b)}
    table = table[np.ix_([at_a[r] for r in rows], [at_b[c] for c in cols])]
    return tuple(rows), tuple(cols), tuple(tuple(int(v) for v in r) for r in table)


def contingency(
    pair: Sequence[str],
    before: pd.DataFrame,
    after: pd.DataFrame,
    views: dict[str, ColumnView],
    w_before: np.ndarray,
    w_after: np.ndarray,
) -> Contingency:
    """Records per pair of shown values of ``pair`` before and after, numbers by the bins
    of their ``views`` (``column_view``).

    >>> before = pd.DataFrame({"a": list("xxy"), "b": list("ppq")})
    >>> w = np.ones(3, dtype=int)
    >>> views = {c: column_view(c, "quasi-identifier", before[c], before[c], w, w) for c in "ab"}
    >>> contingency(("a", "b"), before, before, views, w, w).after
    ((2, 0), (0, 1))
    """
    a, b = pair
    rb, cb, tb = _crosstab(_pair_labels(before[a], views[a], True), _pair_labels(before[b], views[b], True), w_before)
    ra, ca, ta = _crosstab(_pair_labels(after[a], views[a], False), _pair_labels(after[b], views[b], False), w_after)
    return Contingency((a, b), rb, cb, tb, ra, ca, ta)


# --------------------------------------------------------------------------- the view


def default_pair(columns: Sequence[str], sensitive: Sequence[str]) -> tuple[str, str] | None:
    """The first quasi-identifier with the first sensitive attribute (else the first two columns).

    >>> default_pair(["age", "sex", "dx"], ["dx"]), default_pair(["age"], [])
    (('age', 'dx'), None)
    """
    qis = [c for c in columns if c not in sensitive]
    if qis and sensitive:
        return qis[0], sensitive[0]
    return (columns[0], columns[1]) if len(columns) >= 2 else None


def default_predict(columns: Sequence[str], sensitive: Sequence[str]) -> str | None:
    """The first sensitive attribute, else the last column (None with a single column).

    >>> default_predict(["age", "sex", "dx"], ["dx"]), default_predict(["age", "sex"], [])
    ('dx', 'sex')
    """
    if len(columns) < 2:
        return None
    return sensitive[0] if sensitive else columns[-1]


def release_view(
    copy: WorkingCopy,
    *,
    pair: Sequence[str] | None = None,
    predict: str | None = None,
    seed: int = 0,
    time_limit: float = 20.0,
    classify: bool = True,
    max_rows: int = MAX_ROWS,
    strict: bool = True,
) -> ReleaseView:
    """The release view of ``copy`` (see the module text). ``pair``: the two columns of the
    contingency table (default ``default_pair``); ``predict``: the column the classifier
    predicts (default ``default_predict``); ``classify=False`` leaves the classifier out.
    The classifier sees at most ``max_rows`` records per table (a seeded subsample: the
    same numbers every run), fewer when its run is estimated above ``time_limit`` seconds.
    With ``strict=False`` a refused contingency table or classifier (a pair of one column,
    a column to predict with one value) is a sentence in ``problems`` and the rest of the
    view is kept (the page and the report); by default it is raised."""
    start = time.perf_counter()
    if not time_limit > 0:
        raise ParameterError(f"The time allowed for the classifier must be positive; got {time_limit:g} s.")
    if isinstance(max_rows, bool) or int(max_rows) != max_rows or max_rows < MIN_ROWS:
        raise ParameterError(f"The classifier needs at least {MIN_ROWS} rows per table; got {max_rows}.")
    before, after, columns, count = _frames(copy)
    w_before, w_after = record_weights(before, count), record_weights(after, count)
    released_records = int(w_after.sum())
    loaded_records = copy.loaded_records
    if released_records == 0:
        raise EmptySelectionError(
            f"The release holds no record: all {loaded_records:,} records of the loaded file are suppressed or "
            "left out. Undo the last step or choose a target the data can meet."
        )
    current = copy.current
    sensitive = [c for c in columns if c in current.sensitive]
    problems: list[str] = []

    def refused(err: AnonlibError) -> None:
        if strict:
            raise err
        problems.append(str(err))

    chosen: tuple[str, str] | None = None
    if pair is not None:
        try:
            chosen = _checked_pair(pair, columns)
        except AnonlibError as err:
            refused(err)
    else:
        chosen = default_pair(columns, sensitive)
    target: str | None = None
    try:
        target = _predicted(copy, predict, columns)
    except AnonlibError as err:
        refused(err)
        classify = False
    views = {
        c: column_view(
            c, "sensitive attribute" if c in sensitive else "quasi-identifier", before[c], after[c], w_before, w_after
        )
        for c in columns
    }
    notes: list[str] = []
    table = None
    if chosen is None and pair is None:
        notes.append(
            "A contingency table needs two columns; the release has one quasi-identifier or sensitive attribute."
        )
    elif chosen is not None:
        table = contingency(chosen, before, after, views, w_before, w_after)
    comparison = None
    if classify:
        if target is None:
            notes.append("A classifier needs a column to predict and at least one other column; the release has one.")
        else:
            try:
                comparison = _compared(target, columns, before, after, w_before, w_after, seed, time_limit, max_rows)
            except AnonlibError as err:
                refused(err)
    return ReleaseView(
        name=copy.loaded.name,
        loaded_records=loaded_records,
        released_records=released_records,
        **_target_fields(copy, loaded_records, released_records),
        columns=tuple(views[c] for c in columns),
        pair=table,
        classifier=comparison,
        notes=tuple(notes),
        seconds=time.perf_counter() - start,
        problems=tuple(problems),
    )


def _compared(
    target: str,
    columns: Sequence[str],
    before: pd.DataFrame,
    after: pd.DataFrame,
    w_before: np.ndarray,
    w_after: np.ndarray,
    seed: int,
    time_limit: float,
    max_rows: int,
) -> ClassifierComparison:
    features = [c for c in columns if c != target]
    return compare_classifiers(
        target, features, before, after, w_before, w_after, int(seed), float(time_limit), int(max_rows)
    )


def _predicted(copy: WorkingCopy, predict: str | None, columns: Sequence[str]) -> str | None:
    """The column the classifier predicts: ``predict`` (a sentence when it is not shown), else the default."""
    if predict is None:
        return default_predict(columns, [c for c in columns if c in copy.current.sensitive])
    if predict not in columns:
        raise ColumnError(
            f"{predict} is not a quasi-identifier or sensitive attribute of the release; choose "
            f"among {join_names(columns)}."
        )
    return predict


def release_classifier(
    copy: WorkingCopy,
    predict: str | None = None,
    *,
    seed: int = 0,
    time_limit: float = 20.0,
    max_rows: int = MAX_ROWS,
) -> ClassifierComparison | None:
    """The view's classifier comparison alone (``release_view`` without the rest), so a page can
    ask for it apart from the distributions; None when the release has a single column (nothing to
    predict it from). A column to predict that is not shown or that holds one value is a sentence.

    >>> from anonlib.core.dataset import Dataset
    >>> frame = pd.DataFrame({"age": [30, 40, 50, 60] * 5, "ill": ["no", "no", "yes", "yes"] * 5})
    >>> copy = WorkingCopy.start(Dataset.from_frame("d", frame, {"age": "quasi-identifier", "ill": "sensitive"}))
    >>> c = release_classifier(copy)
    >>> c.column, c.released.mean, c == replace(release_view(copy).classifier, seconds=c.seconds)
    ('ill', 1.0, True)
    """
    before, after, columns, count = _frames(copy)
    target = _predicted(copy, predict, columns)
    if target is None:
        return None
    w_before, w_after = record_weights(before, count), record_weights(after, count)
    return _compared(target, columns, before, after, w_before, w_after, seed, time_limit, max_rows)


def classifier_seconds(
    copy: WorkingCopy, released_records: int, *, time_limit: float = 20.0, max_rows: int = MAX_ROWS
) -> float:
    """About how long ``release_classifier`` takes for ``copy`` whose release holds
    ``released_records`` (``comparison_seconds``: from the records and the columns, before any work).

    >>> from anonlib.core.dataset import Dataset
    >>> ds = Dataset.from_frame("d", pd.DataFrame({"a": [1, 2] * 50, "b": list("xy") * 50}), {"a": "quasi-identifier", "b": "sensitive"})
    >>> classifier_seconds(WorkingCopy.start(ds), 100) < 0.5
    True
    """
    features = max(len(shown_columns(copy)) - 1, 1)
    return comparison_seconds(copy.loaded_records, released_records, features, time_limit, max_rows)


def _target_fields(copy: WorkingCopy, loaded_records: int, released_records: int) -> dict[str, Any]:
    """The fields of a view that the release target decides (the released table does not)."""
    check = copy.check
    return {
        "target": (copy.target if check is None else check.target).describe(),  # in the unit it was checked in
        "met": None if check is None else check.met,
        "status": check.sentence() if check is not None else f"The target could not be checked: {copy.problem}",
        "suppressed_records": (
            check.suppressed_records if check is not None else max(loaded_records - released_records, 0)
        ),
        "steps": copy.step_rows(),
    }


def restated(view: ReleaseView, copy: WorkingCopy) -> ReleaseView:
    """``view`` with what the release target decides stated again for ``copy``'s target: the
    target, whether it is met, the records suppressed and each step's failing records. The
    distributions, the contingency table and the classifier depend on the released table only
    (the loaded file, roles, steps and the columns the target reads as sensitive), so a page can
    keep them while k or a threshold changes.

    >>> from anonlib.core.dataset import Dataset
    >>> from anonlib.measures.target import ReleaseTarget
    >>> frame = pd.DataFrame({"age": [31, 35, 38, 44, 41, 47], "sex": list("FMFMFM")})
    >>> ds = Dataset.from_frame("d", frame, {"age": "quasi-identifier", "sex": "sensitive"})
    >>> copy = WorkingCopy.start(ds, ReleaseTarget(k=1))
    >>> view, stricter = release_view(copy, classify=False), copy.with_target(ReleaseTarget(k=2))
    >>> again = restated(view, stricter)
    >>> (view.target, view.met), (again.target, again.met)
    (('k = 1, no record suppressed', True), ('k = 2, no record suppressed', False))
    >>> replace(again, seconds=0.0) == replace(release_view(stricter, classify=False), seconds=0.0)
    True
    """
    return replace(view, **_target_fields(copy, view.loaded_records, view.released_records))


def _checked_pair(pair: Sequence[str], columns: Sequence[str]) -> tuple[str, str]:
    pair = tuple(pair)
    if len(pair) != 2:
        raise ParameterError("A contingency table needs exactly two columns.")
    if pair[0] == pair[1]:
        raise ParameterError(f"A contingency table needs two different columns; both are {pair[0]}.")
    unknown = [c for c in pair if c not in columns]
    if unknown:
        raise ColumnError(
            f"{join_names(unknown)} is not a quasi-identifier or sensitive attribute of the "
            f"release; choose among {join_names(columns)}."
        )
    return pair[0], pair[1]


__all__ = [
    "Accuracy",
    "ClassifierComparison",
    "ColumnView",
    "Contingency",
    "NumberSummary",
    "ReleaseView",
    "ValueCount",
    "classifier_pipeline",
    "classifier_seconds",
    "column_view",
    "contingency",
    "cross_validated",
    "default_pair",
    "default_predict",
    "model_inputs",
    "release_classifier",
    "release_view",
    "restated",
    "sensitive_columns",
    "shown_columns",
    "weighted_summary",
]
