"""The counting kernel: equivalence classes of records on any set of columns.

Every capability counts equivalence classes (records that agree on chosen
columns). This module is the one place that does it, so it is fast and
correct once:

1. ``encode`` turns each column into integer codes ``0..card-1`` (missing values
   become a code of their own, shown as ``"missing"``), once per dataset.
2. ``combine`` folds several code columns into one dense class id per row with
   mixed-radix keys ``key = key * card + code``; when the key space would pass
   2**62 it re-densifies with a hash factorization, so any number of columns works.
3. ``bincount`` over the class ids, weighted by a record-count column if there is
   one, gives the class sizes; indexing them by the ids gives per-row sizes.
4. ``size_histogram`` condenses the sizes to "how many classes have each size":
   the summary that k, the anonymity vector, records at risk and the leakage are
   computed from. A data engine (``anonlib.engine``) produces the same summary
   with a group-by, so both paths feed one summary-to-result function each.

No Python loop runs over rows. A count column (a row standing for several
identical records) is honoured everywhere without expanding rows.

Example:
    >>> import pandas as pd
    >>> df = pd.DataFrame({"zip": ["1", "1", "2"], "sex": ["f", "f", "m"], "n": [2, 1, 3]})
    >>> cls = equivalence_classes(df, ["zip", "sex"], count="n")
    >>> cls.sizes.tolist(), cls.row_sizes.tolist()
    ([3, 3], [3, 3, 3])
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .errors import ColumnError, EmptySelectionError, ParameterError, join_names, require_columns
from .numbers import whole_numbers
from .parallel import each

MISSING_LABEL = "missing"
_KEY_LIMIT = 1 << 62
_KEPT_CLASSES = 2  # class tables an EncodedTable keeps (``EncodedTable.classes``)


@dataclass(frozen=True)
class EncodedTable:
    """Integer codes of some columns of a table, plus optional record counts.

    ``codes[:, j]`` holds codes ``0..cardinalities[j]-1`` of ``columns[j]``;
    ``labels[j][c]`` is the original value of code ``c`` (``"missing"`` for NA).
    ``weights`` is the record count of each row (None = one record per row). The codes are
    never changed in place, so the classes of the last two sets of columns counted are kept
    (``classes``): the measures of one release read the same classes, and a caller walking
    many subsets holds no more than two.
    """

    columns: tuple[str, ...]
    codes: np.ndarray
    cardinalities: tuple[int, ...]
    labels: tuple[np.ndarray, ...]
    weights: np.ndarray | None = None
    _counted: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def n_rows(self) -> int:
        return int(self.codes.shape[0])

    @property
    def n_records(self) -> int:
        """Number of records (sum of counts, or rows when there is no count)."""
        return self.n_rows if self.weights is None else int(self.weights.sum())

    def position(self, column: str) -> int:
        try:
            return self.columns.index(column)
        except ValueError:
            raise ColumnError(
                f"Column '{column}' is not among the encoded columns ({join_names(self.columns)})."
            ) from None

    def column_codes(self, column: str) -> np.ndarray:
        return self.codes[:, self.position(column)]

    def classes(self, columns: Sequence[str] | None = None, *, ordered: bool = True) -> Classes:
        """Equivalence classes on ``columns`` (all encoded columns when None); with
        ``ordered=False`` numbered in order of first appearance (``combine``). The last two sets
        of columns counted are kept: the measures of one release read the same classes.

        >>> t = encode(pd.DataFrame({"a": [1, 2, 1]}))
        >>> t.classes(["a"]).sizes.tolist(), t.classes(["a"]) is t.classes(["a"])
        ([2, 1], True)
        """
        cols = self.columns if columns is None else tuple(columns)
        found = self._counted.get((cols, ordered))
        if found is None:
            pos = [self.position(c) for c in cols]
            ids, n = combine(
                [self.codes[:, p] for p in pos], [self.cardinalities[p] for p in pos], self.n_rows, ordered=ordered
            )
            found = Classes.from_ids(ids, n, self.weights)
            if len(self._counted) >= _KEPT_CLASSES:
                self._counted.pop(next(iter(self._counted)), None)  # the oldest
            self._counted[(cols, ordered)] = found
        return found

    def n_distinct(self, columns: Sequence[str] | None = None) -> int:
        """How many distinct rows ``columns`` hold (all encoded columns when None). Only a
        count, so the classes of the longest leading columns already counted (``classes``)
        are split by the rest: no class is numbered or sized.

        >>> t = encode(pd.DataFrame({"a": [1, 1, 2], "b": ["x", "y", "x"]}))
        >>> t.classes(["a"]).n_classes, t.n_distinct()
        (2, 3)
        """
        cols = self.columns if columns is None else tuple(columns)
        positions = [self.position(c) for c in cols]  # an unknown column is named, even in an empty table
        if self.n_rows == 0:
            return 0
        lead = max((c for c, _ in self._counted if cols[: len(c)] == c), key=len, default=())
        code_columns, cardinalities = [], []
        if lead:
            kept = self.classes(lead, ordered=(lead, True) in self._counted)
            if len(lead) == len(cols):
                return kept.n_classes
            code_columns, cardinalities = [kept.ids], [kept.n_classes]
        for p in positions[len(lead) :]:
            code_columns.append(self.codes[:, p])
            cardinalities.append(self.cardinalities[p])
        return combine(code_columns, cardinalities, self.n_rows, ordered=False)[1]


@dataclass(frozen=True)
class Classes:
    """Equivalence classes of a table: a class id per row and a size per class.

    ``sizes`` counts records (honouring a count column); ``rows_per_class``
    counts table rows.
    """

    ids: np.ndarray
    sizes: np.ndarray
    rows_per_class: np.ndarray

    @classmethod
    def from_ids(cls, ids: np.ndarray, n_classes: int, weights: np.ndarray | None = None) -> Classes:
        rows = np.bincount(ids, minlength=n_classes).astype(np.int64)
        if weights is None:
            sizes = rows
        else:
            sizes = np.bincount(ids, weights=weights, minlength=n_classes)
            sizes = np.rint(sizes).astype(np.int64)
        return cls(ids=ids, sizes=sizes, rows_per_class=rows)

    @property
    def n_classes(self) -> int:
        return int(self.sizes.shape[0])

    @property
    def row_sizes(self) -> np.ndarray:
        """Size of each row's class (records, honouring counts)."""
        return self.sizes[self.ids]

    @property
    def first_rows(self) -> np.ndarray:
        """Index of the first row of each class, in class order: one
        representative row per class, e.g. to work on distinct rows only.

        >>> Classes.from_ids(np.array([1, 0, 1, 0]), 2).first_rows.tolist()
        [1, 0]
        """
        first = np.zeros(self.n_classes, dtype=np.int64)
        rows = np.arange(self.ids.shape[0], dtype=np.int64)
        first[self.ids[::-1]] = rows[::-1]  # the last write (the first row) wins
        return first

    @property
    def k(self) -> int:
        """Smallest class size (k-anonymity); 0 for an empty table."""
        nonzero = self.sizes[self.sizes > 0]
        return int(nonzero.min()) if nonzero.size else 0


def combine(
    code_columns: Sequence[np.ndarray],
    cardinalities: Sequence[int],
    n_rows: int | None = None,
    *,
    ordered: bool = True,
) -> tuple[np.ndarray, int]:
    """Fold integer code columns into one dense class id per row.

    Returns ``(ids, n_classes)`` with ids in ``0..n_classes-1``. With no columns
    every one of ``n_rows`` rows is in one class (the empty quasi-identifier).
    Ids follow the order of the combined codes; ``ordered=False`` numbers the
    classes in order of first appearance instead, which skips a sort when the
    key space is large (for callers that only count).

    >>> ids, n = combine([np.array([0, 1, 0]), np.array([2, 2, 2])], [2, 3])
    >>> ids.tolist(), n
    ([0, 1, 0], 2)
    """
    if len(code_columns) != len(cardinalities):
        raise ParameterError("Each code column needs its number of distinct values.")
    if not code_columns:
        n = int(n_rows or 0)
        return np.zeros(n, dtype=np.int64), (1 if n else 0)
    n_rows = len(code_columns[0])
    if n_rows == 0:
        return np.zeros(0, dtype=np.int64), 0
    key = np.asarray(code_columns[0], dtype=np.int64)
    space = max(int(cardinalities[0]), 1)
    for codes, card in zip(code_columns[1:], cardinalities[1:]):
        card = max(int(card), 1)
        if space * card >= _KEY_LIMIT:
            key, space = _densify(key, ordered)
        key = key * card + np.asarray(codes, dtype=np.int64)
        space *= card
    return _densify(key, ordered) if space > 4 * n_rows + 1024 else _compact(key, space)


@dataclass(frozen=True)
class Refinement:
    """Classes split by one more column (``refine``): each row's new class id, the
    records in each new class, and per new class the class it came from
    (``parent``) and its code in the column.

    New classes are numbered in the order of (parent class, code), so refining
    lexicographically numbered classes by a later column keeps them lexicographic.
    ``parent`` is the roll-up map: ``np.bincount(parent, weights=sizes)`` gives the
    parent classes' sizes back from the new table without touching the rows.
    """

    ids: np.ndarray
    n_classes: int
    sizes: np.ndarray
    parent: np.ndarray
    code: np.ndarray


def refine(
    ids: np.ndarray, n_classes: int, codes: np.ndarray, cardinality: int, weights: np.ndarray | None = None
) -> Refinement:
    """Split the classes ``ids`` (``0..n_classes-1``) by one more code column; ``weights``
    = records per row, each at least 1 (None: one each); the new classes' sizes are
    float64 record counts (exact up to 2**53).

    >>> r = refine(np.array([0, 0, 1, 1]), 2, np.array([1, 0, 1, 1]), 2)
    >>> r.ids.tolist(), r.n_classes, r.sizes.tolist(), r.parent.tolist(), r.code.tolist()
    ([1, 0, 2, 2], 3, [1.0, 1.0, 2.0], [0, 0, 1], [0, 1, 1])
    """
    card = max(int(cardinality), 1)
    space = max(int(n_classes), 1) * card
    if space >= _KEY_LIMIT:
        raise ParameterError("Too many classes to refine by one more column.")
    key = np.asarray(ids, dtype=np.int64) * card
    # an int64 loop (never float64), which widens narrow codes in its own buffer instead of copying them first
    np.add(key, np.asarray(codes), out=key, dtype=np.int64, casting="unsafe")
    if len(key) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Refinement(empty, 0, np.zeros(0), empty, empty)
    ones = np.ones(len(key)) if weights is None else np.asarray(weights, dtype=np.float64)
    if weights is not None and not ones.min() >= 1:  # a class is known by its records: none may stand for none
        raise ParameterError("Every row must stand for at least one record.")
    if space <= len(key):  # a bincount over the key space is cheaper than hashing
        counts = np.bincount(key, weights=ones, minlength=space)
        keys = np.flatnonzero(counts > 0)
        new_ids = np.take(_dense_ids(keys, space), key)
        sizes = counts[keys]
    elif space <= 8 * len(key) + (1 << 20):  # a wider key space: marked, then counted over the classes
        new_ids, keys = _marked(key, space)  # a byte per key, not a float64 count: a third faster
        sizes = np.bincount(new_ids, weights=ones, minlength=len(keys))
    else:
        new_ids, keys = pd.factorize(key, sort=True)
        new_ids = new_ids.astype(np.int64, copy=False)
        keys = np.asarray(keys, dtype=np.int64)
        sizes = np.bincount(new_ids, weights=ones, minlength=len(keys))
    parent = keys // card  # a division by one number: numpy's divide by a constant, faster than divmod
    return Refinement(new_ids, int(len(keys)), sizes, parent, keys - parent * card)


def distinct_keys(key: np.ndarray, *, ordered: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Dense ids of int64 keys (one hash pass), numbered in order of first appearance or,
    when ``ordered``, of the keys; and each id's key, for callers that keep the keys of the
    classes to roll them up later.

    >>> ids, keys = distinct_keys(np.array([70, 20, 70, 50]))
    >>> ids.tolist(), keys.tolist()
    ([0, 1, 0, 2], [70, 20, 50])
    """
    key = np.asarray(key, dtype=np.int64)
    if ordered:
        ids, keys = pd.factorize(key, sort=True)
        return ids.astype(np.int64, copy=False), np.asarray(keys, dtype=np.int64)
    ids, keys = _factorize(key * _SPREAD)
    return ids.astype(np.int64, copy=False), np.asarray(keys, dtype=np.int64) * _UNSPREAD


def _hash_table_factorize():
    """``pd.factorize`` for an int64 array, straight from pandas' int64 hash table: the same
    ids and keys without the public function's checks and wrapping (about 10 µs a call, a
    quarter of a small roll-up's count). The table's module is pandas' own, not public: it
    is used only if it answers a probe exactly as ``pd.factorize`` does, else the public
    function is."""
    try:
        from pandas._libs.hashtable import Int64HashTable

        def factorize(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            keys, ids = Int64HashTable(len(key)).factorize(key)
            return ids, keys

        probe = np.array([5, -3, 5, 2**62, -3], dtype=np.int64)
        ids, keys = factorize(probe)
        expected = pd.factorize(probe)
        if ids.tolist() == expected[0].tolist() and keys.tolist() == expected[1].tolist():
            return factorize
    except Exception:  # any change in pandas' internals: the public function
        pass
    return pd.factorize


_factorize = _hash_table_factorize()


def _signed(value: int) -> np.int64:
    """A 64-bit pattern as numpy's int64 (two's complement)."""
    return np.int64(value - (1 << 64) if value >= 1 << 63 else value)


# Keys are spread over all 64 bits before hashing, by an odd multiplier (a bijection of
# int64, undone on the distinct keys): pandas' int64 hash folds the high 32 bits into the
# low ones, so keys made of small bit fields would otherwise crowd into few buckets (on
# ARX's Adult benchmark, the optimal search at 4% groups its keys in 15 ms instead of 17).
_SPREAD = _signed(0x9E3779B97F4A7C15)  # 2**64 divided by the golden ratio, made odd
_UNSPREAD = _signed(pow(0x9E3779B97F4A7C15, -1, 1 << 64))


def _densify(key: np.ndarray, ordered: bool = True) -> tuple[np.ndarray, int]:
    """Dense ids for arbitrary int64 keys (``distinct_keys``), and how many there are."""
    ids, keys = distinct_keys(key, ordered=ordered)
    return ids, len(keys)


def _compact(key: np.ndarray, space: int) -> tuple[np.ndarray, int]:
    """Dense ids for keys in a small range (the keys present marked, then numbered in
    order; a boolean mark is a third faster than counting the keys with a bincount).

    >>> ids, n = _compact(np.array([7, 2, 7, 5]), 8)
    >>> ids.tolist(), n
    ([2, 0, 2, 1], 3)
    """
    ids, keys = _marked(key, space)
    return ids, len(keys)


def _marked(key: np.ndarray, space: int) -> tuple[np.ndarray, np.ndarray]:
    """Dense ids of keys in ``0..space-1`` and the keys present, in order: the keys marked in
    a boolean array, the marks found, and only those numbered.

    >>> ids, keys = _marked(np.array([7, 2, 7, 5]), 8)
    >>> ids.tolist(), keys.tolist()
    ([2, 0, 2, 1], [2, 5, 7])
    """
    present = np.zeros(space, dtype=bool)
    present[key] = True
    keys = np.flatnonzero(present)
    return np.take(_dense_ids(keys, space), key), keys


def _dense_ids(keys: np.ndarray, space: int) -> np.ndarray:
    """A map from each of the sorted ``keys`` (within ``0..space-1``) to its position; the
    entries of absent keys are left unset, never read (setting only the keys present,
    instead of a running count over the whole range, is several times faster: a large
    range is allocated but its untouched pages never written).

    >>> _dense_ids(np.array([1, 2, 4]), 5)[[1, 2, 4]].tolist()
    [0, 1, 2]
    """
    ids = np.empty(space, dtype=np.int64)
    ids[keys] = np.arange(len(keys))
    return ids


def encode_column(values: pd.Series | np.ndarray | Iterable, *, ordered: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes and labels of one column; missing values are one extra code.

    Labels are sorted (numbers numerically, text alphabetically); the missing
    code, if any, comes last with the label ``"missing"``. ``ordered=False`` keeps
    them in order of first appearance instead (no sort; text held by Arrow is
    encoded by Arrow's own dictionary encoding), for callers that only map codes.

    >>> codes, labels = encode_column(pd.Series(["b", None, "a", "b"]))
    >>> codes.tolist(), labels.tolist()
    ([1, 2, 0, 1], ['a', 'b', 'missing'])
    >>> encode_column(pd.Series(["b", None, "a", "b"]), ordered=False)[1].tolist()
    ['b', 'a', 'missing']
    """
    series = values if isinstance(values, pd.Series) else pd.Series(values)
    found = _category_codes(series, ordered) if isinstance(series.dtype, pd.CategoricalDtype) else None
    if found is None:
        found = _arrow_codes(series)
        if found is not None and ordered:  # Arrow's codes are in order of appearance: sort the labels
            found = _sorted_codes(*found)
    if found is not None:
        codes, uniques = found
    else:
        try:
            codes, uniques = pd.factorize(series, sort=ordered, use_na_sentinel=True)
        except TypeError:  # mixed types that cannot be ordered: order by text
            codes, uniques = pd.factorize(series.astype("string"), sort=ordered, use_na_sentinel=True)
    codes = codes.astype(np.int64, copy=False)
    labels = np.asarray(uniques, dtype=object)
    missing = codes < 0
    if missing.any():
        codes = np.where(missing, len(labels), codes)
        labels = np.append(labels, MISSING_LABEL).astype(object)
    return codes, labels


def _category_codes(series: pd.Series, ordered: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """Codes (-1 for missing) and labels of a categorical column from its own codes: the values
    present, sorted when ``ordered`` (as ``pd.factorize(..., sort=True)`` sorts values), else in
    the categories' order; None when its categories cannot be ordered (the general path then
    orders them as text)."""
    raw = np.asarray(series.array.codes, dtype=np.int64)
    categories = np.asarray(series.array.categories, dtype=object)
    used = np.zeros(len(categories) + 1, dtype=bool)
    used[raw] = True  # -1 marks the last slot
    present = np.flatnonzero(used[:-1])
    labels = categories[present]
    if ordered and len(labels) > 1:
        try:
            order = np.argsort(pd.Index(labels).to_numpy(), kind="stable")
        except TypeError:
            return None
        present, labels = present[order], labels[order]
    position = np.full(len(categories) + 1, -1, dtype=np.int64)
    position[present] = np.arange(len(present))
    return position[raw], labels


def _sorted_codes(codes: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``codes`` (-1 for missing) renumbered so that ``labels`` come sorted; None when the labels
    cannot be ordered."""
    try:
        order = np.argsort(labels, kind="stable")
    except TypeError:
        return None
    position = np.empty(len(labels) + 1, dtype=np.int64)
    position[order] = np.arange(len(labels))
    position[-1] = -1
    return position[codes], labels[order]


def _arrow_codes(series: pd.Series) -> tuple[np.ndarray, np.ndarray] | None:
    """Codes (-1 for missing) and labels in order of first appearance of a text column
    held by Arrow, from Arrow's dictionary encoding (over ARX Adult's nine
    quasi-identifiers, 4.2 ms against 4.7 for pandas' factorize without sorting and 5.9
    with); None for any other column."""
    dtype = series.dtype
    if not (isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow"):
        return None
    import pyarrow as pa  # present whenever a column is held by Arrow
    import pyarrow.compute as pc

    encoded = pc.dictionary_encode(pa.array(series.array))
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    codes = np.asarray(encoded.indices.fill_null(-1), dtype=np.int64)
    return codes, encoded.dictionary.to_numpy(zero_copy_only=False)


def size_histogram(sizes: np.ndarray | Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Distinct non-zero class sizes in ascending order, and how many classes have each.

    This is the canonical (sorted) form of the class sizes: float reductions over
    it give the same bits whichever engine counted the classes.

    >>> sizes, classes = size_histogram([3, 1, 0, 3, 2])
    >>> sizes.tolist(), classes.tolist()
    ([1, 2, 3], [1, 1, 2])
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    distinct, classes = np.unique(sizes[sizes > 0], return_counts=True)
    return distinct.astype(np.int64, copy=False), classes.astype(np.int64, copy=False)


def record_counts(df: pd.DataFrame, count: str | None) -> np.ndarray | None:
    """The record-count column as int64, validated (None when ``count`` is None):
    whole numbers of 0 or more adding up to at most ``MAX_COUNT`` (2**53, the
    largest total the float64 class sums count exactly), never wrapped.

    >>> record_counts(pd.DataFrame({"n": [1, 3]}), "n").tolist()
    [1, 3]
    >>> record_counts(pd.DataFrame({"n": [1, float("inf")]}), "n")
    Traceback (most recent call last):
    ...
    anonlib.core.errors.ColumnError: The counts in the record-count column 'n' must be whole numbers; found inf.
    """
    if count is None:
        return None
    if count not in df.columns:
        raise ColumnError(f"The record-count column '{count}' does not exist.")
    return whole_numbers(df[count], f"The counts in the record-count column '{count}'", error=ColumnError)


def encode(
    df: pd.DataFrame, columns: Sequence[str] | None = None, *, count: str | None = None, unordered: Iterable[str] = ()
) -> EncodedTable:
    """Encode ``columns`` of ``df`` (all but the count column when None) once.

    The labels of the ``unordered`` columns come in order of first appearance
    (``encode_column(..., ordered=False)``), for callers that only map their codes.

    >>> t = encode(pd.DataFrame({"a": [3, 1, 3], "b": ["x", "y", "x"]}))
    >>> t.codes.tolist(), t.cardinalities
    ([[1, 0], [0, 1], [1, 0]], (2, 2))
    """
    if columns is None:
        columns = [c for c in df.columns if c != count]
    columns = list(columns)
    require_columns(df, columns)
    if len(set(columns)) != len(columns):
        raise ColumnError("A column was selected twice; choose each column once.")
    weights = record_counts(df, count)
    unordered = set(unordered)
    series = [df[c] for c in columns]  # read in this thread; the columns are encoded on every core
    codes = np.empty((len(df), len(columns)), dtype=np.int64, order="F")  # as ``stack_columns`` lays them

    def encoded_column(j: int) -> np.ndarray:
        """Column ``j``'s labels; its codes written into their own column of ``codes``."""
        codes[:, j], labels = encode_column(series[j], ordered=columns[j] not in unordered)
        return labels

    labels = each(encoded_column, range(len(columns)), elements=len(df))
    return EncodedTable(
        columns=tuple(columns),
        codes=codes,
        cardinalities=tuple(map(len, labels)),
        labels=tuple(labels),
        weights=weights,
    )


def stack_columns(columns: Sequence[np.ndarray], n_rows: int) -> np.ndarray:
    """Code columns side by side as one int64 array, one column after the other in memory
    (Fortran order): every count reads codes a column at a time, which is then a contiguous
    read (five times faster than across rows), and stacking writes each column in one run.

    >>> stack_columns([np.array([1, 2]), np.array([3, 4])], 2).tolist()
    [[1, 3], [2, 4]]
    """
    out = np.empty((n_rows, len(columns)), dtype=np.int64, order="F")
    for j, column in enumerate(columns):
        out[:, j] = column
    return out


def equivalence_classes(df: pd.DataFrame, columns: Sequence[str], *, count: str | None = None) -> Classes:
    """Equivalence classes of ``df`` on ``columns`` (a one-off convenience).

    Modules that count many column subsets of the same data should ``encode``
    once and call ``EncodedTable.classes`` per subset.

    >>> df = pd.DataFrame({"age": [30, 30, 40]})
    >>> equivalence_classes(df, ["age"]).sizes.tolist()
    [2, 1]
    """
    if not list(columns):
        raise EmptySelectionError("Choose at least one quasi-identifier column to form equivalence classes.")
    return encode(df, columns, count=count).classes()


def class_sizes(df: pd.DataFrame, columns: Sequence[str], *, count: str | None = None) -> np.ndarray:
    """Records per equivalence class on ``columns``.

    >>> class_sizes(pd.DataFrame({"a": [1, 1, 2]}), ["a"]).tolist()
    [2, 1]
    """
    return equivalence_classes(df, columns, count=count).sizes


def row_class_sizes(df: pd.DataFrame, columns: Sequence[str], *, count: str | None = None) -> np.ndarray:
    """Per row, the number of records in its equivalence class on ``columns``.

    >>> row_class_sizes(pd.DataFrame({"a": [1, 1, 2]}), ["a"]).tolist()
    [2, 2, 1]
    """
    return equivalence_classes(df, columns, count=count).row_sizes


# --------------------------------------------------------------------------- people, not rows


def person_codes(values: pd.Series | np.ndarray | Iterable, column: str = "person") -> tuple[np.ndarray, int]:
    """Integer codes of a person column (one code per distinct person) and how many people
    there are. Every record needs its person: a blank is a one-sentence ``ColumnError``.

    >>> codes, n = person_codes(pd.Series(["p2", "p1", "p2"]))
    >>> codes.tolist(), n
    ([0, 1, 0], 2)
    """
    series = values if isinstance(values, pd.Series) else pd.Series(values)
    blanks = int(series.isna().sum())
    if blanks:
        raise ColumnError(
            f"The person column '{column}' is blank in {blanks:,} record{'s' if blanks != 1 else ''}; "
            "every record needs the person it belongs to (fill them in, or choose another person column)."
        )
    codes, labels = encode_column(series, ordered=False)
    return codes, len(labels)


def persons_per_class(ids: np.ndarray, n_classes: int, persons: np.ndarray, n_persons: int) -> np.ndarray:
    """Distinct persons in each class: the (class, person) pairs ``combine``d into one key,
    each distinct pair counted once for its class (one ``bincount``). A person whose
    records fall in several classes is counted in each.

    >>> persons_per_class(np.array([0, 0, 0, 1]), 2, np.array([5, 5, 6, 5]), 7).tolist()
    [2, 1]
    """
    ids = np.asarray(ids, dtype=np.int64)
    if ids.size == 0:
        return np.zeros(int(n_classes), dtype=np.int64)
    persons = np.asarray(persons, dtype=np.int64)
    first = _first_of_person_in_class(ids, persons)
    if first is not None:
        return np.bincount(ids[first], minlength=int(n_classes)).astype(np.int64)
    pairs, n_pairs = combine(  # only counted: pairs numbered as they come, no sort
        [ids, np.asarray(persons, dtype=np.int64)], [max(int(n_classes), 1), max(int(n_persons), 1)], ordered=False
    )
    pair_class = np.empty(n_pairs, dtype=np.int64)
    pair_class[pairs] = ids  # every row of a pair is in the same class
    return np.bincount(pair_class, minlength=int(n_classes)).astype(np.int64)


def others_in_class(
    ids: np.ndarray, n_classes: int, persons: np.ndarray, n_persons: int, weights: np.ndarray | None = None
) -> tuple[np.ndarray, Classes]:
    """Per row, the records of its class that belong to other people than the row's own (its
    class's records minus its person's records in that class, honouring ``weights``), and the
    (class, person) classes they were counted from (``ids`` numbers each pair).

    >>> others, own = others_in_class(np.array([0, 0, 0, 1]), 2, np.array([5, 5, 6, 5]), 7)
    >>> others.tolist(), own.sizes.tolist()
    ([1, 1, 2, 0], [2, 1, 1])
    """
    ids = np.asarray(ids, dtype=np.int64)
    classes = Classes.from_ids(ids, max(int(n_classes), 0), weights)
    pairs, n_pairs = combine(
        [ids, np.asarray(persons, dtype=np.int64)], [max(int(n_classes), 1), max(int(n_persons), 1)], ordered=False
    )
    own = Classes.from_ids(pairs, n_pairs, weights)
    return classes.sizes[ids] - own.sizes[pairs], own


_NEAR_ROWS = 8  # a person's rows compared with each other directly up to this many


def _first_of_person_in_class(ids: np.ndarray, persons: np.ndarray) -> np.ndarray | None:
    """Per row, whether no earlier row has its person and its class, when the rows list each
    person's rows together (person codes never decrease, as the codes of a table whose records
    are grouped by person) and no person has more than ``_NEAR_ROWS`` rows: each row is compared
    with the few rows before it, instead of hashing every (class, person) pair. None otherwise.

    >>> _first_of_person_in_class(np.array([0, 1, 0, 0, 1]), np.array([0, 0, 0, 1, 1])).tolist()
    [True, True, False, True, True]
    """
    if len(persons) > 1 and not np.all(persons[1:] >= persons[:-1]):
        return None
    if len(persons) > _NEAR_ROWS and np.any(persons[_NEAR_ROWS:] == persons[:-_NEAR_ROWS]):
        return None  # a person with more rows: hashing the pairs is cheaper
    first = np.ones(len(ids), dtype=bool)
    for back in range(1, min(_NEAR_ROWS, len(persons))):
        same = persons[back:] == persons[:-back]
        if not same.any():  # no person has more than ``back`` rows
            break
        first[back:] &= ~(same & (ids[back:] == ids[:-back]))
    return first


def persons_failing(row_fails: np.ndarray, persons: np.ndarray, n_persons: int) -> np.ndarray:
    """Per row: True when any record of its person fails (a person fails as a whole, so a
    suppression removes all of their records).

    >>> persons_failing(np.array([False, True, False]), np.array([0, 1, 1]), 2).tolist()
    [False, True, True]
    """
    fails = np.asarray(row_fails, dtype=bool)
    persons = np.asarray(persons, dtype=np.int64)
    if not fails.any():
        return fails
    failed = np.zeros(max(int(n_persons), 1), dtype=bool)
    failed[persons[fails]] = True
    return failed[persons]


@dataclass(frozen=True)
class PersonClasses:
    """Equivalence classes counted in distinct persons: ``classes`` (records, as
    ``Classes``), ``persons`` (each row's person code), ``sizes`` (distinct persons per
    class) and ``n_persons`` (distinct persons in the table).

    >>> df = pd.DataFrame({"age": [30, 30, 30, 40], "pid": ["a", "a", "b", "c"]})
    >>> pc = person_classes(df, ["age"], "pid")
    >>> pc.sizes.tolist(), pc.k, pc.classes.sizes.tolist(), pc.n_persons
    ([2, 1], 1, [3, 1], 3)
    """

    classes: Classes
    persons: np.ndarray
    sizes: np.ndarray
    n_persons: int

    @property
    def k(self) -> int:
        """Smallest number of distinct persons in a class; 0 for an empty table."""
        nonzero = self.sizes[self.sizes > 0]
        return int(nonzero.min()) if nonzero.size else 0

    @property
    def row_sizes(self) -> np.ndarray:
        """Persons in each row's class."""
        return self.sizes[self.classes.ids]

    def failing_rows(self, k: int) -> np.ndarray:
        """Per row: True when its person has a record in a class of fewer than ``k`` persons."""
        return persons_failing(self.row_sizes < k, self.persons, self.n_persons)


def person_classes(df: pd.DataFrame, columns: Sequence[str], person: str, *, count: str | None = None) -> PersonClasses:
    """Equivalence classes of ``df`` on ``columns`` counted in distinct values of ``person``
    (records still honour ``count``); the person column must have no blank."""
    require_columns(df, [person])
    classes = encode(df, list(columns), count=count).classes()
    codes, n = person_codes(df[person], person)
    return PersonClasses(classes, codes, persons_per_class(classes.ids, classes.n_classes, codes, n), n)
