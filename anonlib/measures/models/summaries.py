"""Per-class summaries every model reads: for each equivalence class, the records of each
sensitive value (``SensitiveCounts``), counted once by the kernel; and the models' names."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from ...core.cells import is_number_column
from ...core.equivalence import Classes, EncodedTable, combine, encode
from ...core.errors import EmptySelectionError, ParameterError, join_names, require_columns

#: tolerance of the threshold comparisons (a uniform class over l values has
#: entropy ln l in exact arithmetic; its float may be one ulp below)
TOLERANCE = 1e-12

MODEL_NAMES = {
    "alpha": "(α,k)-anonymity",
    "distinct_l": "distinct l-diversity",
    "entropy_l": "entropy l-diversity",
    "recursive_cl": "recursive (c,l)-diversity",
    "t_closeness": "t-closeness",
    "delta_disclosure": "δ-disclosure privacy",
    "beta_likeness": "β-likeness",
    "enhanced_beta_likeness": "enhanced β-likeness",
}
MODELS = tuple(MODEL_NAMES)
DISTANCES = ("equal", "ordered", "hierarchical")

# Whether meeting the model in every class survives merging classes (generalization);
# the argument per model is in ModelRequirement.monotone's docstring.
MONOTONE = {
    "alpha": True,
    "distinct_l": True,
    "entropy_l": True,
    "recursive_cl": True,
    "t_closeness": True,
    "delta_disclosure": False,
    "beta_likeness": True,
    "enhanced_beta_likeness": True,
}


# --------------------------------------------------------------------------- per-class summaries


@dataclass(frozen=True, eq=False)
class SensitiveCounts:
    """Per-class summaries of one sensitive attribute: the input of every model.

    ``class_sizes[c]`` is the number of records of class ``c`` (0 for a class
    whose rows all have count 0). The non-empty cells are listed sorted by
    (class, value): cell ``i`` holds ``cell_count[i]`` records of class
    ``cell_class[i]`` with value number ``cell_value[i]`` (the rank of the value
    among the table's sorted distinct values, missing last; ``labels`` holds
    the values). ``numeric`` says whether the values are numbers (ordered
    distance by default).
    """

    class_sizes: np.ndarray
    cell_class: np.ndarray
    cell_value: np.ndarray
    cell_count: np.ndarray
    labels: np.ndarray
    numeric: bool = False

    @classmethod
    def from_cells(
        cls,
        class_ids: Sequence[int] | np.ndarray,
        value_ids: Sequence[int] | np.ndarray,
        counts: Sequence[int] | np.ndarray,
        labels: Sequence[Any],
        *,
        numeric: bool = False,
    ) -> SensitiveCounts:
        """Summaries from (class, value, records) cells in any order, e.g. a
        database group-by: cells are sorted canonically, duplicates added, empty
        ones dropped; classes are renumbered densely in the order of their ids.

        >>> s = SensitiveCounts.from_cells([7, 3, 7], [1, 0, 0], [2, 5, 1], ["a", "b"])
        >>> s.class_sizes.tolist(), s.cell_class.tolist(), s.cell_value.tolist(), s.cell_count.tolist()
        ([5, 3], [0, 1, 1], [0, 0, 1], [5, 1, 2])
        """
        class_ids = np.asarray(class_ids, dtype=np.int64)
        value_ids = np.asarray(value_ids, dtype=np.int64)
        counts = np.asarray(counts, dtype=np.int64)
        labels = np.asarray(list(labels), dtype=object)
        if not (class_ids.shape == value_ids.shape == counts.shape):
            raise ParameterError("Each cell needs a class, a value and a number of records.")
        if counts.size and counts.min() < 0:
            raise ParameterError("A cell cannot hold a negative number of records.")
        if value_ids.size and (value_ids.min() < 0 or value_ids.max() >= len(labels)):
            raise ParameterError("A cell refers to a sensitive value that is not among the labels.")
        dense_class, n_classes = combine([class_ids], [int(class_ids.max()) + 1 if class_ids.size else 1])
        cell_ids, n_cells = combine([dense_class, value_ids], [n_classes, len(labels)])
        cells = Classes.from_ids(cell_ids, n_cells, counts)
        first = cells.first_rows
        sizes = np.bincount(dense_class, weights=counts, minlength=n_classes)
        keep = cells.sizes > 0
        return cls(
            class_sizes=np.rint(sizes).astype(np.int64),
            cell_class=dense_class[first][keep],
            cell_value=value_ids[first][keep],
            cell_count=cells.sizes[keep],
            labels=labels,
            numeric=numeric,
        )

    @property
    def n_classes(self) -> int:
        return int(self.class_sizes.shape[0])

    @property
    def n_values(self) -> int:
        return int(len(self.labels))

    @cached_property
    def records(self) -> int:
        return int(self.class_sizes.sum())

    @cached_property
    def value_totals(self) -> np.ndarray:
        """Records per sensitive value over the whole table (exact integers)."""
        totals = np.bincount(self.cell_value, weights=self.cell_count, minlength=self.n_values)
        return np.rint(totals).astype(np.int64)

    @cached_property
    def table_distribution(self) -> np.ndarray:
        """Share of each sensitive value in the whole table (p)."""
        return self.value_totals / max(self.records, 1)

    @cached_property
    def present(self) -> np.ndarray:
        """Classes holding at least one record."""
        return self.class_sizes > 0

    @cached_property
    def _starts(self) -> np.ndarray:
        """Index of each class's first cell (one segment per non-empty class)."""
        c = self.cell_class
        if c.size == 0:
            return np.zeros(0, dtype=np.int64)
        return np.flatnonzero(np.r_[True, c[1:] != c[:-1]])

    @cached_property
    def _lengths(self) -> np.ndarray:
        return np.diff(np.r_[self._starts, self.cell_class.size])

    @cached_property
    def _class_share(self) -> np.ndarray:
        """q: the share of each cell's value in its class."""
        return self.cell_count / self.class_sizes[self.cell_class]

    def _per_class(self, segment_values: np.ndarray, fill: float) -> np.ndarray:
        out = np.full(self.n_classes, fill, dtype=np.float64)
        out[self.cell_class[self._starts]] = segment_values
        return out

    def _class_sum(self, cell_values: np.ndarray) -> np.ndarray:
        """Per class, the sum of a per-cell quantity in (class, value) order."""
        return np.bincount(self.cell_class, weights=cell_values, minlength=self.n_classes)

    def _class_max(self, cell_values: np.ndarray, fill: float = np.nan) -> np.ndarray:
        if cell_values.size == 0:
            return np.full(self.n_classes, fill)
        return self._per_class(np.maximum.reduceat(cell_values, self._starts), fill)


def sensitive_counts(
    df: pd.DataFrame, quasi_identifiers: Sequence[str], sensitive: str, *, count: str | None = None
) -> SensitiveCounts:
    """The per-class summaries of ``sensitive`` for the classes on ``quasi_identifiers``.

    >>> df = pd.DataFrame({"zip": [1, 1, 2], "dx": ["flu", "flu", "hiv"], "n": [2, 1, 4]})
    >>> s = sensitive_counts(df, ["zip"], "dx", count="n")
    >>> s.class_sizes.tolist(), s.cell_count.tolist(), s.labels.tolist()
    ([3, 4], [3, 4], ['flu', 'hiv'])
    """
    qis = checked_columns(df, quasi_identifiers, [sensitive], count)
    table = encode(df, [*qis, sensitive], count=count)
    return counts_from_table(table, table.classes(qis), sensitive, is_number_column(df[sensitive]))


def counts_from_table(table: EncodedTable, classes: Classes, sensitive: str, numeric: bool) -> SensitiveCounts:
    position = table.position(sensitive)
    return counts_from_codes(
        classes,
        table.codes[:, position],
        table.cardinalities[position],
        table.labels[position],
        weights=table.weights,
        numeric=numeric,
    )


def counts_from_codes(
    classes: Classes,
    codes: np.ndarray,
    n_values: int,
    labels: Sequence[Any],
    *,
    weights: np.ndarray | None = None,
    numeric: bool = False,
) -> SensitiveCounts:
    """The summaries from rows already coded: ``classes`` (the kernel's classes of the
    rows), each row's sensitive value number in ``codes`` (ranks, as ``encode`` gives
    them) and its records in ``weights`` (None = one each). The generalization search
    calls this on its distinct rows for every table it builds.

    >>> s = counts_from_codes(Classes.from_ids(np.array([0, 0, 1]), 2), np.array([1, 0, 1]), 2, ["a", "b"])
    >>> s.class_sizes.tolist(), s.cell_class.tolist(), s.cell_value.tolist(), s.cell_count.tolist()
    ([2, 1], [0, 0, 1], [0, 1, 1], [1, 1, 1])
    """
    cell_ids, n_cells = combine([classes.ids, codes], [classes.n_classes, n_values])
    cells = Classes.from_ids(cell_ids, n_cells, weights)
    first = cells.first_rows
    keep = cells.sizes > 0
    return SensitiveCounts(
        class_sizes=classes.sizes,
        cell_class=classes.ids[first][keep],
        cell_value=codes[first][keep],
        cell_count=cells.sizes[keep],
        labels=np.asarray(labels, dtype=object) if not isinstance(labels, np.ndarray) else labels,
        numeric=numeric,
    )


def checked_columns(
    df: pd.DataFrame, quasi_identifiers: Sequence[str], sensitive: Iterable[str], count: str | None
) -> list[str]:
    """The quasi-identifiers as a list, after checking every column named; one sentence per problem."""
    if isinstance(quasi_identifiers, str):
        quasi_identifiers = [quasi_identifiers]
    qis = list(quasi_identifiers)
    if not qis:
        raise EmptySelectionError("Choose at least one quasi-identifier to form equivalence classes.")
    sensitive = list(sensitive)
    require_columns(df, qis + sensitive)
    both = [s for s in sensitive if s in qis]
    if both:
        raise ParameterError(
            f"{join_names(both)} is both a quasi-identifier and a sensitive attribute; "
            "a column can only have one of the two roles."
        )
    if count is not None and count in qis + sensitive:
        raise ParameterError(
            f"'{count}' is the record-count column; it cannot also be a quasi-identifier or sensitive attribute."
        )
    return qis


def model_number(value: object, what: str) -> float:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ParameterError(f"{what} must be a number; got '{value}'.") from None
    if math.isnan(number):
        raise ParameterError(f"{what} must be a number; got '{value}'.")
    return number
