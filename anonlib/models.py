"""Privacy models per sensitive attribute, and the acceptance test that makes them a release target.

The models every peer tool reports (ARX, sdcMicro, pycanon), each as defined in
its paper; the value of a table is its worst equivalence class:

- (α,k)-anonymity (Wong, Li, Fu & Wang 2006): α = the largest share of one
  sensitive value in a class;
- distinct l-diversity (Machanavajjhala, Kifer, Gehrke & Venkitasubramaniam
  2007, Def. 3.2 read as "l distinct values"): the fewest distinct values in a class;
- entropy l-diversity (same, Def. 4.1): l = exp(smallest class entropy, natural
  log); a table is entropy-l-diverse for every l up to it (not floored);
- recursive (c,l)-diversity (same, Def. 4.2): with a class's value counts sorted
  decreasing, r1 < c (r_l + ... + r_m); the table's value for a given l is the
  largest r1 / (r_l + ... + r_m), and the table meets (c,l) for every c above it;
- t-closeness (Li, Li & Venkatasubramanian 2007): the largest Earth Mover's
  Distance between a class's and the whole table's distribution, with equal
  distance (½ Σ abs difference), ordered distance (Σ abs cumulative difference
  / (m-1)) or hierarchical distance (a generalization hierarchy, ARX layout);
- δ-disclosure privacy (Brickell & Shmatikov 2008): the largest
  abs(ln(p_class(s) / p_table(s))) over classes and the values present in them;
- β-likeness (Cao & Karras 2012): the largest relative gain (p_class - p) / p
  over values with p_class > p; enhanced β-likeness also caps each value's gain
  at -ln p, so its value is the basic one when every gain is within that cap
  and infinite (no β works) otherwise;
- k-map (Sweeney; cloud DLP services) and δ-presence (Nergiz, Atzori & Clifton
  2007) against a population table in the form ``anonlib.frontier`` takes.

Computation (the PLAN's interface 3). The counting kernel turns the table into
small per-class summaries, ``SensitiveCounts``: class sizes and the non-empty
(class, sensitive value) cells with their record counts, sorted by (class,
value), values numbered by their rank among the table's sorted values (missing
last, as ``encode_column`` does). Every model is a small public function of
these summaries (``class_alpha``, ``class_distinct``, ``class_entropy``,
``class_recursive_c``, ``class_t``, ``class_delta``, ``class_beta``), so a
database engine that produces the same cells with a group-by
(``SensitiveCounts.from_cells``) gets bit-identical answers: float sums run in
the canonical (class, value) order, reductions over classes are max/min.

Acceptance (the PLAN's interface 1). A ``ModelRequirement`` is one switched-on
model for one sensitive attribute. ``acceptance`` suppresses the records of
every class that fails k or any requirement and says whether the suppressed
share is within the limit; a generalization meeting that is acceptable.
Reference distributions (t, δ, β) are always the whole table's, suppressed
records included, as in ARX.

Missing values are a value of their own ("missing") unless the caller dropped
them (``Dataset(missing="drop")``), as everywhere in the library. A count
column is honoured without expanding rows.

One module (past 800 lines) because every part reads the same per-class
summaries: the summaries, the models on them, the requirements and acceptance
built on the models, and the tables for pages and the report (``model_values``,
``model_table``); splitting them would split one data structure from its uses.

Example (Li et al. 2007, Table 4: salaries in thousands, three classes):
    >>> df = pd.DataFrame({"zip": ["476**"] * 3 + ["4790*"] * 3 + ["476**"] * 3,
    ...                    "age": ["2*"] * 3 + [">=40"] * 3 + ["3*"] * 3,
    ...                    "salary": [3, 4, 5, 6, 11, 8, 7, 9, 10]})
    >>> t_closeness(df, ["zip", "age"], "salary")   # the class {3K, 4K, 5K}
    0.375
    >>> l_diversity(df, ["zip", "age"], "salary"), alpha(df, ["zip", "age"], "salary")
    (3, 0.3333333333333333)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from .core.equivalence import Classes, EncodedTable, combine, encode, record_counts
from .core.errors import (
    EmptySelectionError,
    ParameterError,
    PopulationError,
    join_names,
    require_columns,
)
from .core.hierarchy import level_lookup
from .core.metrics import whole_k

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
_MONOTONE = {
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
    ) -> "SensitiveCounts":
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
    qis = _checked_columns(df, quasi_identifiers, [sensitive], count)
    table = encode(df, [*qis, sensitive], count=count)
    return _counts_from_table(table, table.classes(qis), sensitive, _is_numeric(df[sensitive]))


def _counts_from_table(table: EncodedTable, classes: Classes, sensitive: str, numeric: bool) -> SensitiveCounts:
    position = table.position(sensitive)
    return counts_from_codes(
        classes, table.codes[:, position], table.cardinalities[position], table.labels[position],
        weights=table.weights, numeric=numeric,
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


def _is_numeric(series: pd.Series) -> bool:
    return bool(pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series))


def _checked_columns(
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
        raise ParameterError(f"'{count}' is the record-count column; it cannot also be a quasi-identifier or sensitive attribute.")
    return qis


# --------------------------------------------------------------------------- the models, per class


def class_alpha(s: SensitiveCounts) -> np.ndarray:
    """Per class, the largest share of one sensitive value (NaN for empty classes).

    >>> class_alpha(SensitiveCounts.from_cells([0, 0, 1], [0, 1, 0], [3, 1, 2], ["a", "b"])).tolist()
    [0.75, 1.0]
    """
    if s.cell_count.size == 0:
        return np.full(s.n_classes, np.nan)
    top = np.maximum.reduceat(s.cell_count, s._starts)
    return s._per_class(top / s.class_sizes[s.cell_class[s._starts]], np.nan)


def class_distinct(s: SensitiveCounts) -> np.ndarray:
    """Per class, the number of distinct sensitive values (0 for empty classes).

    >>> class_distinct(SensitiveCounts.from_cells([0, 0, 1], [0, 1, 0], [3, 1, 2], ["a", "b"])).tolist()
    [2, 1]
    """
    out = np.zeros(s.n_classes, dtype=np.int64)
    out[s.cell_class[s._starts]] = s._lengths
    return out


def class_entropy(s: SensitiveCounts) -> np.ndarray:
    """Per class, the entropy (natural log) of its sensitive values; exp of it is its entropy l.

    >>> [round(float(np.exp(h)), 6) for h in class_entropy(SensitiveCounts.from_cells([0, 0], [0, 1], [1, 1], ["a", "b"]))]
    [2.0]
    """
    q = s._class_share
    return s._class_sum(-q * np.log(q))


def class_recursive_c(s: SensitiveCounts, l: int) -> np.ndarray:
    """Per class, r1 / (r_l + ... + r_m) with the value counts sorted decreasing
    (Machanavajjhala et al., Def. 4.2): the class is recursive (c,l)-diverse for
    every c above it; infinite when it has fewer than ``l`` values.

    >>> class_recursive_c(SensitiveCounts.from_cells([0, 0, 0], [0, 1, 2], [5, 3, 2], list("abc")), 2).tolist()
    [1.0]
    """
    l = _whole(l, "l", minimum=1)
    r1, tail = _recursive_parts(s, l)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(tail > 0, r1 / np.where(tail > 0, tail, 1), np.inf)
    out[~s.present] = np.nan
    return out


def _recursive_parts(s: SensitiveCounts, l: int) -> tuple[np.ndarray, np.ndarray]:
    """Per class r1 (the largest count) and r_l + ... + r_m (exact integers as floats)."""
    order = np.lexsort((-s.cell_count, s.cell_class))
    counts = s.cell_count[order].astype(np.float64)
    rank = np.arange(order.size) - np.repeat(s._starts, s._lengths)
    r1 = np.zeros(s.n_classes)
    r1[s.cell_class[s._starts]] = counts[s._starts]
    tail_cells = rank >= l - 1
    tail = np.bincount(s.cell_class[order][tail_cells], weights=counts[tail_cells], minlength=s.n_classes)
    return r1, tail


def class_t(
    s: SensitiveCounts, distance: str | None = None, hierarchy: "HierarchyLevels | None" = None
) -> np.ndarray:
    """Per class, the Earth Mover's Distance to the table's distribution (Li et al. 2007).

    ``distance`` is "equal", "ordered" (values in their sorted order) or
    "hierarchical" (needs ``hierarchy``, see ``hierarchy_levels``); by default
    hierarchical when a hierarchy is given, else ordered for numbers and equal
    for categories.

    >>> s = SensitiveCounts.from_cells([0, 0, 1, 1], [0, 1, 2, 3], [1, 1, 1, 1], [1, 2, 3, 4], numeric=True)
    >>> class_t(s).tolist(), class_t(s, "equal").tolist()
    ([0.3333333333333333, 0.3333333333333333], [0.5, 0.5])
    """
    distance = _distance(s, distance, hierarchy)
    if s.n_values < 2:
        raise ParameterError(
            "t-closeness compares each class with the whole table, which needs a sensitive attribute "
            "with at least two different values; this one has only one."
        )
    if distance == "ordered":
        out = _ordered_emd(s)
    elif distance == "equal":
        out = 0.5 * (1.0 + _level_excess(s, None))
    else:
        assert hierarchy is not None
        total = np.zeros(s.n_classes)
        for level, lookup in enumerate(hierarchy.levels):
            total += 1.0 + _level_excess(s, None if level == 0 else lookup)
        out = total / (2.0 * hierarchy.height)
    out = np.clip(out, 0.0, 1.0)
    out[~s.present] = np.nan
    return out


def _distance(s: SensitiveCounts, distance: str | None, hierarchy: "HierarchyLevels | None") -> str:
    if distance is None:
        return "hierarchical" if hierarchy is not None else ("ordered" if s.numeric else "equal")
    if distance not in DISTANCES:
        raise ParameterError(f"The t-closeness distance is one of {join_names(DISTANCES)}; got '{distance}'.")
    if distance == "hierarchical" and hierarchy is None:
        raise ParameterError("The hierarchical distance of t-closeness needs a hierarchy of the sensitive attribute.")
    return distance


def _level_excess(s: SensitiveCounts, lookup: np.ndarray | None) -> np.ndarray:
    """Per class, Σ over the nodes its records reach of (abs(P - Q) - P), nodes
    being values (``lookup`` None) or a hierarchy level's nodes. Adding Σ P = 1
    over all nodes gives Σ abs(P - Q) over every node of the level."""
    p = s.table_distribution
    if lookup is None:
        node_p = p[s.cell_value]
        q = s._class_share
        return s._class_sum(np.abs(node_p - q) - node_p)
    nodes = lookup[s.cell_value]
    n_nodes = int(lookup.max()) + 1
    node_total = np.bincount(lookup, weights=p, minlength=n_nodes)
    group, n_groups = combine([s.cell_class, nodes], [s.n_classes, n_nodes])
    first = Classes.from_ids(group, n_groups).first_rows
    group_class, group_node = s.cell_class[first], nodes[first]
    q = np.bincount(group, weights=s._class_share, minlength=n_groups)
    node_p = node_total[group_node]
    return np.bincount(group_class, weights=np.abs(node_p - q) - node_p, minlength=s.n_classes)


def _ordered_emd(s: SensitiveCounts) -> np.ndarray:
    """Σ_i abs(Q_i - P_i) / (m - 1) over all m values, Q and P cumulative.

    Between two values present in a class its cumulative share Q is constant,
    and P only grows, so each such run of values is summed in closed form with
    prefix sums of P (split where P passes Q): linear in the cells, not in
    classes x values.
    """
    m = s.n_values
    cum_p = np.cumsum(s.value_totals) / max(s.records, 1)
    prefix = np.concatenate([[0.0], np.cumsum(cum_p)])  # prefix[i] = Σ_{j<i} P_j
    cells = s.cell_count
    running = np.cumsum(cells)
    before = np.repeat(running[s._starts] - cells[s._starts], s._lengths)
    q = (running - before) / s.class_sizes[s.cell_class]  # Q after each present value
    start = s.cell_value
    end = np.r_[s.cell_value[1:], m]  # a run lasts until the class's next present value
    end[np.r_[s._starts[1:] - 1, start.size - 1] if start.size else s._starts] = m  # ... or the last value
    split = np.clip(np.searchsorted(cum_p, q, side="left"), start, end)
    runs = q * (split - start) - (prefix[split] - prefix[start]) + (prefix[end] - prefix[split]) - q * (end - split)
    head = np.zeros(s.n_classes)
    head[s.cell_class[s._starts]] = prefix[s.cell_value[s._starts]]  # values before the first present one: Q = 0
    return (head + s._class_sum(runs)) / (m - 1)


def class_delta(s: SensitiveCounts) -> np.ndarray:
    """Per class, the largest abs(ln(q / p)) over the values present in it (Brickell & Shmatikov).

    >>> class_delta(SensitiveCounts.from_cells([0, 1, 1], [0, 0, 1], [2, 1, 1], ["a", "b"])).round(4).tolist()
    [0.2877, 0.6931]
    """
    q = s._class_share
    p = s.table_distribution[s.cell_value]
    return s._class_max(np.abs(np.log(q / p)))


def class_beta(s: SensitiveCounts, enhanced: bool = False) -> np.ndarray:
    """Per class, the largest relative gain (q - p) / p over values with q > p
    (0 when there is none; Cao & Karras 2012). ``enhanced``: infinite for a
    class in which some value's gain exceeds -ln p, the cap of enhanced β-likeness.

    >>> class_beta(SensitiveCounts.from_cells([0, 1, 1], [0, 0, 1], [2, 1, 1], ["a", "b"])).tolist()
    [0.3333333333333333, 1.0]
    """
    q = s._class_share
    p = s.table_distribution[s.cell_value]
    gain = np.where(q > p, (q - p) / p, 0.0)
    out = s._class_max(gain)
    if enhanced:
        over = (q > p) & (gain > -np.log(p) + TOLERANCE)
        out[np.bincount(s.cell_class, weights=over, minlength=s.n_classes) > 0] = np.inf
    return out


@dataclass(frozen=True, eq=False)
class HierarchyLevels:
    """A sensitive attribute's hierarchy for the hierarchical distance: for each
    level below the root, the node number of every value (``levels[0]`` is the
    values themselves), and the tree's height H (an implicit root is added
    above a top level with more than one node). Two values meeting at level j
    are j / H apart (Li et al. 2007, Section 4.2)."""

    levels: tuple[np.ndarray, ...]
    height: int


def hierarchy_levels(hierarchy: pd.DataFrame, labels: Sequence[Any], attribute: str = "the sensitive attribute") -> HierarchyLevels:
    """The ``HierarchyLevels`` of an ARX-layout hierarchy for the values ``labels``
    (``SensitiveCounts.labels``); a ``HierarchyError`` names a value it lacks.

    >>> h = pd.DataFrame([["flu", "resp", "*"], ["cold", "resp", "*"], ["ulcer", "dig", "*"]])
    >>> lv = hierarchy_levels(h, ["cold", "flu", "ulcer"])
    >>> lv.height, [x.tolist() for x in lv.levels]
    (2, [[0, 1, 2], [0, 0, 1]])
    """
    lookup, _ = level_lookup(hierarchy, list(labels), attribute)
    top = lookup.shape[0] - 1
    if top == 0 or np.unique(lookup[top]).size > 1:
        return HierarchyLevels(tuple(lookup[j] for j in range(top + 1)), top + 1)
    return HierarchyLevels(tuple(lookup[j] for j in range(top)), top)


def worst(per_class: np.ndarray, s: SensitiveCounts, largest: bool = True) -> float:
    """The table's value: the largest (or smallest) per-class value over the classes with records."""
    values = per_class[s.present]
    if values.size == 0:
        raise EmptySelectionError("The table has no records, so no privacy model can be measured.")
    return float(values.max() if largest else values.min())


# --------------------------------------------------------------------------- the contract's functions


def alpha(df: pd.DataFrame, quasi_identifiers: Sequence[str], sensitive: str, *, count: str | None = None) -> float:
    """α of (α,k)-anonymity: the largest share of one sensitive value in a class (Wong et al. 2006).

    >>> alpha(pd.DataFrame({"zip": [1, 1, 1, 2], "dx": ["a", "a", "b", "b"]}), ["zip"], "dx")
    1.0
    """
    s = sensitive_counts(df, quasi_identifiers, sensitive, count=count)
    return worst(class_alpha(s), s)


def l_diversity(df: pd.DataFrame, quasi_identifiers: Sequence[str], sensitive: str, *, count: str | None = None) -> int:
    """Distinct l-diversity: the fewest distinct sensitive values in a class (Machanavajjhala et al. 2007).

    >>> l_diversity(pd.DataFrame({"zip": [1, 1, 1, 2], "dx": ["a", "a", "b", "b"]}), ["zip"], "dx")
    1
    """
    s = sensitive_counts(df, quasi_identifiers, sensitive, count=count)
    return int(worst(class_distinct(s).astype(np.float64), s, largest=False))


def entropy_l_diversity(
    df: pd.DataFrame, quasi_identifiers: Sequence[str], sensitive: str, *, count: str | None = None
) -> float:
    """Entropy l-diversity: exp of the smallest class entropy (natural log), not floored;
    the table is entropy-l-diverse for every l up to it (Machanavajjhala et al. 2007, Def. 4.1).

    >>> entropy_l_diversity(pd.DataFrame({"zip": [1, 1, 1, 1], "dx": list("aabb")}), ["zip"], "dx")
    2.0
    """
    s = sensitive_counts(df, quasi_identifiers, sensitive, count=count)
    return float(np.exp(worst(class_entropy(s), s, largest=False)))


def recursive_c(
    df: pd.DataFrame, quasi_identifiers: Sequence[str], sensitive: str, l: int, *, count: str | None = None
) -> float:
    """Recursive (c,l)-diversity for a given l: the largest r1 / (r_l + ... + r_m) over
    classes, counts sorted decreasing (Machanavajjhala et al. 2007, Def. 4.2). The table
    is recursive (c,l)-diverse for every c above it; infinite when a class has fewer than l values.

    >>> df = pd.DataFrame({"zip": [1] * 10, "dx": list("aaaaabbbcc")})
    >>> recursive_c(df, ["zip"], "dx", 2), recursive_c(df, ["zip"], "dx", 3)
    (1.0, 2.5)
    """
    s = sensitive_counts(df, quasi_identifiers, sensitive, count=count)
    return worst(class_recursive_c(s, l), s)


def t_closeness(
    df: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    sensitive: str,
    *,
    hierarchy: pd.DataFrame | None = None,
    count: str | None = None,
    distance: str | None = None,
) -> float:
    """t of t-closeness: the largest Earth Mover's Distance between a class's and the
    table's distribution of ``sensitive`` (Li, Li & Venkatasubramanian 2007).

    Numbers use the ordered distance, other values the equal distance, and an
    ARX-layout ``hierarchy`` the hierarchical distance; ``distance`` overrides.

    >>> df = pd.DataFrame({"zip": [1, 1, 2, 2], "dx": ["a", "b", "a", "a"]})
    >>> t_closeness(df, ["zip"], "dx")
    0.25
    """
    s = sensitive_counts(df, quasi_identifiers, sensitive, count=count)
    levels = None if hierarchy is None else hierarchy_levels(hierarchy, s.labels, sensitive)
    return worst(class_t(s, distance, levels), s)


def delta_disclosure(
    df: pd.DataFrame, quasi_identifiers: Sequence[str], sensitive: str, *, count: str | None = None
) -> float:
    """δ of δ-disclosure privacy: the largest abs(ln(p_class(s) / p_table(s))) over classes
    and the values present in them (Brickell & Shmatikov 2008).

    >>> round(delta_disclosure(pd.DataFrame({"zip": [1, 1, 2, 2], "dx": ["a", "b", "a", "a"]}), ["zip"], "dx"), 4)
    0.6931
    """
    s = sensitive_counts(df, quasi_identifiers, sensitive, count=count)
    return worst(class_delta(s), s)


def beta_likeness(
    df: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    sensitive: str,
    *,
    count: str | None = None,
    enhanced: bool = False,
) -> float:
    """β of β-likeness: the largest relative gain (p_class - p) / p over values with
    p_class > p (Cao & Karras 2012). ``enhanced``: the same, or infinite when some
    gain exceeds -ln p (enhanced β-likeness caps each value's gain there, so no β is met).

    >>> df = pd.DataFrame({"zip": [1, 1, 2, 2], "dx": ["a", "b", "a", "a"]})
    >>> beta_likeness(df, ["zip"], "dx"), beta_likeness(df, ["zip"], "dx", enhanced=True)
    (1.0, inf)
    """
    s = sensitive_counts(df, quasi_identifiers, sensitive, count=count)
    return worst(class_beta(s, enhanced), s)


# --------------------------------------------------------------------------- population table: k-map, δ-presence


@dataclass(frozen=True, eq=False)
class PopulationCounts:
    """The data's classes matched with a population table.

    ``sample[c]`` and ``population[c]`` are the records of the data and the people
    of the population in combination ``c`` of the quasi-identifiers (combinations
    of either table); ``ids`` gives each data row's combination.
    """

    ids: np.ndarray
    sample: np.ndarray
    population: np.ndarray

    @property
    def released(self) -> np.ndarray:
        """Combinations holding records of the data."""
        return self.sample > 0


def population_counts(
    df: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    population: pd.DataFrame,
    *,
    count: str | None = None,
    population_count: str | None = None,
) -> PopulationCounts:
    """Match the data's classes with ``population`` (the quasi-identifier columns, one row
    per person or a count column found as ``anonlib.frontier`` finds it). Every class must
    be covered by at least as many people as it has records; a ``PopulationError`` says
    which one is not.

    >>> data = pd.DataFrame({"zip": ["1", "1", "2"]})
    >>> pop = pd.DataFrame({"zip": ["1", "2", "3"], "people": [10, 4, 7]})
    >>> p = population_counts(data, ["zip"], pop)
    >>> p.sample.tolist(), p.population.tolist()
    ([2, 1, 0], [10, 4, 7])
    """
    from .frontier import _aligned, population_count_column  # one reading of population tables

    qis = _checked_columns(df, quasi_identifiers, [], count)
    if not isinstance(population, pd.DataFrame):
        raise PopulationError("The population must be a table with the quasi-identifier columns.")
    lacking = [c for c in qis if c not in population.columns]
    if lacking:
        raise PopulationError(f"The population table lacks the quasi-identifier columns {join_names(lacking)}.")
    if population_count is None:
        population_count = population_count_column(population, qis, count=count)
    people = record_counts(population, population_count)
    people = np.ones(len(population), dtype=np.int64) if people is None else people
    weights = record_counts(df, count)
    weights = np.ones(len(df), dtype=np.int64) if weights is None else weights
    joint = pd.concat([df[qis], _aligned(population[qis], df[qis])], ignore_index=True)
    table = encode(joint, qis)
    ids, n = combine([table.codes[:, j] for j in range(len(qis))], table.cardinalities, len(joint))
    data_ids = ids[: len(df)]
    sample = np.rint(np.bincount(data_ids, weights=weights, minlength=n)).astype(np.int64)
    pop = np.rint(np.bincount(ids[len(df):], weights=people, minlength=n)).astype(np.int64)
    unmatched = np.flatnonzero((sample > 0) & (pop == 0))
    short = unmatched if unmatched.size else np.flatnonzero(sample > pop)
    if short.size:
        first = int(np.flatnonzero(data_ids == short[0])[0])
        values = ", ".join(f"{a}={df[a].iloc[first]}" for a in qis)
        more = "" if short.size == 1 else f" (and {short.size - 1:,} other combination{'s' if short.size > 2 else ''})"
        if unmatched.size:
            raise PopulationError(
                f"The records with {values}{more} have no match in the population table; "
                "the population must contain everyone in the data, so check the population table."
            )
        found = int(pop[short[0]])
        raise PopulationError(
            f"The population table has {found:,} {'person' if found == 1 else 'people'} with {values} but the "
            f"data has {sample[short[0]]:,} such records{more}; the population must contain everyone in the data."
        )
    return PopulationCounts(ids=data_ids, sample=sample, population=pop)


def k_map(
    df: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    population: pd.DataFrame,
    *,
    count: str | None = None,
    population_count: str | None = None,
) -> int:
    """k-map: the fewest people of the population matching a released class.

    >>> k_map(pd.DataFrame({"zip": ["1", "1", "2"]}), ["zip"], pd.DataFrame({"zip": ["1", "2"], "n": [10, 4]}))
    4
    """
    p = population_counts(df, quasi_identifiers, population, count=count, population_count=population_count)
    released = p.population[p.released]
    if released.size == 0:
        raise EmptySelectionError("The table has no records, so k-map cannot be measured.")
    return int(released.min())


@dataclass(frozen=True)
class DeltaPresence:
    """δ-presence (Nergiz et al. 2007): the probability that a person of the population is
    in the released data lies in [lower, upper]; ``lower_released`` is the lowest over
    the combinations that occur in the data (``lower`` is 0 when some people of the
    population share their combination with no record of the data)."""

    lower: float
    upper: float
    lower_released: float


def delta_presence(
    df: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    population: pd.DataFrame,
    *,
    count: str | None = None,
    population_count: str | None = None,
) -> DeltaPresence:
    """The range of probabilities that a population record is in the release: per
    combination, records of the data / people of the population.

    >>> d = delta_presence(pd.DataFrame({"zip": ["1", "1", "2"]}), ["zip"], pd.DataFrame({"zip": ["1", "2", "3"], "n": [10, 4, 5]}))
    >>> d.lower, d.upper, d.lower_released
    (0.0, 0.25, 0.2)
    """
    p = population_counts(df, quasi_identifiers, population, count=count, population_count=population_count)
    covered = p.population > 0
    share = p.sample[covered] / p.population[covered]
    released = p.sample[covered] > 0
    if not released.any():
        raise EmptySelectionError("The table has no records, so δ-presence cannot be measured.")
    return DeltaPresence(float(share.min()), float(share.max()), float(share[released].min()))


# --------------------------------------------------------------------------- requirements and acceptance


def _whole(value: object, name: str, minimum: int) -> int:
    try:
        whole = not isinstance(value, bool) and float(value).is_integer()  # type: ignore[arg-type]
    except (TypeError, ValueError):
        whole = False
    if not whole or int(value) < minimum:  # type: ignore[call-overload]
        raise ParameterError(f"{name} must be a whole number of at least {minimum}; got {value}.")
    return int(value)  # type: ignore[call-overload]


def _number(value: object, what: str) -> float:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ParameterError(f"{what} must be a number; got '{value}'.") from None
    if math.isnan(number):
        raise ParameterError(f"{what} must be a number; got '{value}'.")
    return number


@dataclass(frozen=True)
class ModelRequirement:
    """One switched-on privacy model for one sensitive attribute.

    ``value`` is α (share, 0 < α <= 1), l (distinct: whole, >= 1; entropy: >= 1),
    l of recursive (c,l) (whole, >= 1, with ``c`` > 0), t (0..1), δ (> 0) or β (> 0).
    ``hierarchy`` (t-closeness only, ARX layout) selects the hierarchical distance.

    >>> r = ModelRequirement("distinct_l", "diagnosis", 3)
    >>> r.describe(), r.monotone
    ('distinct 3-diversity of diagnosis', True)
    >>> ModelRequirement.from_json(r.to_json()) == r
    True
    """

    model: str
    sensitive: str
    value: float
    c: float | None = None
    hierarchy: pd.DataFrame | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.model not in MODEL_NAMES:
            raise ParameterError(f"'{self.model}' is not a privacy model; use one of {join_names(MODELS)}.")
        if not isinstance(self.sensitive, str) or not self.sensitive:
            raise ParameterError("Name the sensitive attribute the privacy model protects.")
        name = MODEL_NAMES[self.model]
        value = _number(self.value, f"The value of {name}")
        if self.model in ("distinct_l", "recursive_cl"):
            value = float(_whole(value, f"l of {name}", 1))
        checks = {
            "alpha": (0.0 < value <= 1.0, "α must be above 0 and at most 1"),
            "distinct_l": (value >= 1, "l must be at least 1"),
            "entropy_l": (value >= 1.0 and math.isfinite(value), "l must be at least 1"),
            "recursive_cl": (value >= 1, "l must be at least 1"),
            "t_closeness": (0.0 <= value <= 1.0, "t must be between 0 and 1"),
            "delta_disclosure": (value > 0.0 and math.isfinite(value), "δ must be above 0"),
            "beta_likeness": (value > 0.0 and math.isfinite(value), "β must be above 0"),
            "enhanced_beta_likeness": (value > 0.0 and math.isfinite(value), "β must be above 0"),
        }
        ok, sentence = checks[self.model]
        if not ok:
            raise ParameterError(f"For {name} of {self.sensitive}, {sentence}; got {value:g}.")
        object.__setattr__(self, "value", value)
        if self.model == "recursive_cl":
            c = _number(self.c, f"c of {name}") if self.c is not None else None
            if c is None or not (c > 0 and math.isfinite(c)):
                raise ParameterError(f"Recursive (c,l)-diversity of {self.sensitive} needs a constant c above 0.")
            object.__setattr__(self, "c", c)
        elif self.c is not None:
            raise ParameterError(f"Only recursive (c,l)-diversity takes a constant c, not {name}.")
        if self.hierarchy is not None and self.model != "t_closeness":
            raise ParameterError(f"Only t-closeness takes a hierarchy, not {name}.")

    def describe(self) -> str:
        """The requirement in words, e.g. ``'0.2-closeness of diagnosis'``."""
        v, s = f"{self.value:g}", self.sensitive
        if self.model == "recursive_cl":
            return f"recursive ({self.c:g}, {v})-diversity of {s}"
        if self.model == "t_closeness" and self.hierarchy is not None:
            return f"{v}-closeness of {s} (hierarchical distance)"
        return {
            "alpha": f"(α = {v})-anonymity of {s}",
            "distinct_l": f"distinct {v}-diversity of {s}",
            "entropy_l": f"entropy {v}-diversity of {s}",
            "t_closeness": f"{v}-closeness of {s}",
            "delta_disclosure": f"{v}-disclosure privacy of {s}",
            "beta_likeness": f"basic {v}-likeness of {s}",
            "enhanced_beta_likeness": f"enhanced {v}-likeness of {s}",
        }[self.model]

    @property
    def monotone(self) -> bool:
        """Whether the requirement can only get easier to meet when classes merge by
        generalization: if two classes meet it, so does their union.

        - α: the union's share of each value is a weighted mean of the two shares, so
          the largest share cannot grow.
        - distinct l: the union holds every value of either class.
        - entropy l: entropy is concave, so the union's entropy is at least the
          weighted mean of the two (Machanavajjhala et al., Section 5).
        - recursive (c,l): shown monotone by Machanavajjhala et al. (Section 5): the
          union's counts are sums, r1 grows by at most the larger r1 and the tail by at
          least the tails.
        - t-closeness: the EMD to a fixed distribution is convex in the class
          distribution, so the union is at most the weighted mean of the two distances.
        - β-likeness (basic and enhanced): each value's share in the union is a
          weighted mean, so no gain grows, and the caps per value (-ln p) stay fixed.
        - δ-disclosure over the values present is NOT monotone: a value rare in one
          class and absent from the other becomes present with a tiny share in the
          union, and abs(ln(q/p)) of it can exceed δ.
        """
        return _MONOTONE[self.model]

    @property
    def monotone_with_suppression(self) -> bool:
        """Whether a class meeting the requirement still meets it after absorbing any
        other class, even one that fails it. Only then does merging never increase
        the suppressed records, so a search with a suppression limit may prune on it.
        True for distinct l only (the union keeps the passing class's values); a
        class failing α, entropy l, (c,l), t or β can drag a passing one over the limit."""
        return self.model == "distinct_l"

    def to_json(self) -> dict:
        """Plain values (the hierarchy as a list of rows of text)."""
        return {
            "model": self.model,
            "sensitive": self.sensitive,
            "value": self.value,
            "c": self.c,
            "hierarchy": None if self.hierarchy is None else self.hierarchy.astype(str).values.tolist(),
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "ModelRequirement":
        """The requirement written by ``to_json``; a sentence when a field is wrong."""
        if not isinstance(d, Mapping) or "model" not in d or "sensitive" not in d or "value" not in d:
            raise ParameterError("A privacy model needs a model name, a sensitive attribute and a value.")
        rows = d.get("hierarchy")
        hierarchy = None
        if rows is not None:
            if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows):
                raise ParameterError("A hierarchy is a list of rows of text.")
            hierarchy = pd.DataFrame(rows, dtype=object)
        return cls(str(d["model"]), str(d["sensitive"]), d["value"], d.get("c"), hierarchy)


def requirements_monotone(requirements: Iterable[ModelRequirement], max_suppressed: float = 0.0) -> bool:
    """Whether a generalization of an acceptable table is always acceptable, so a
    search may prune by monotonicity: every requirement monotone and, with a
    suppression limit above 0, monotone with suppression too (k always is).

    >>> requirements_monotone([ModelRequirement("entropy_l", "dx", 2)]), requirements_monotone([ModelRequirement("entropy_l", "dx", 2)], 0.05)
    (True, False)
    """
    requirements = list(requirements)
    if max_suppressed > 0:
        return all(r.monotone and r.monotone_with_suppression for r in requirements)
    return all(r.monotone for r in requirements)


def class_passes(requirement: ModelRequirement, s: SensitiveCounts, hierarchy: HierarchyLevels | None = None) -> np.ndarray:
    """Per class, whether it meets the requirement (classes without records pass).

    >>> s = SensitiveCounts.from_cells([0, 0, 1], [0, 1, 0], [1, 1, 2], ["a", "b"])
    >>> class_passes(ModelRequirement("distinct_l", "dx", 2), s).tolist()
    [True, False]
    """
    m, v = requirement.model, requirement.value
    if m == "alpha":
        ok = class_alpha(s) <= v + TOLERANCE
    elif m == "distinct_l":
        ok = class_distinct(s) >= v
    elif m == "entropy_l":
        ok = class_entropy(s) >= math.log(v) - TOLERANCE
    elif m == "recursive_cl":
        r1, tail = _recursive_parts(s, int(v))
        ok = r1 < requirement.c * tail
    elif m == "t_closeness":
        if hierarchy is None and requirement.hierarchy is not None:
            hierarchy = hierarchy_levels(requirement.hierarchy, s.labels, requirement.sensitive)
        ok = class_t(s, None, hierarchy) <= v + TOLERANCE
    elif m == "delta_disclosure":
        ok = class_delta(s) < v
    elif m == "beta_likeness":
        ok = class_beta(s) <= v + TOLERANCE
    else:  # enhanced β-likeness: each gain within min(β, -ln p)
        q, p = s._class_share, s.table_distribution[s.cell_value]
        over = (q > p) & ((q - p) / p > np.minimum(v, -np.log(p)) + TOLERANCE)
        ok = np.bincount(s.cell_class, weights=over, minlength=s.n_classes) == 0
    return np.asarray(ok, dtype=bool) | ~s.present


@dataclass(frozen=True)
class Acceptance:
    """Whether a table meets k and the requirements after suppressing the records of
    every class that fails one of them, with the suppressed share within the limit.

    ``failing`` lists, per criterion (``"k = 5"`` or a requirement's description), the
    records in classes failing it (a class may fail several); ``kept`` says per row
    whether its class meets everything.
    """

    acceptable: bool
    records: int
    suppressed_records: int
    suppressed_share: float
    failing: tuple[tuple[str, int], ...]
    kept: np.ndarray = field(compare=False, repr=False)


def acceptance(
    frame: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    *,
    k: int = 1,
    requirements: Iterable[ModelRequirement] = (),
    max_suppressed: float = 0.0,
    count: str | None = None,
    engine=None,
) -> Acceptance:
    """Suppress the records of every class failing k or a requirement; acceptable when
    the suppressed share is at most ``max_suppressed`` (a share of records, 0..1).
    ``frame`` may also be a path or a table on a data engine (``anonlib.engine``).

    >>> df = pd.DataFrame({"zip": [1, 1, 1, 2, 2], "dx": ["a", "b", "c", "a", "a"]})
    >>> a = acceptance(df, ["zip"], k=2, requirements=[ModelRequirement("distinct_l", "dx", 2)], max_suppressed=0.4)
    >>> a.acceptable, a.suppressed_records, a.failing, a.kept.tolist()
    (True, 2, (('k = 2', 0), ('distinct 2-diversity of dx', 2)), [True, True, True, False, False])
    """
    if engine is not None or not isinstance(frame, pd.DataFrame):
        # The engine sends back the (class, sensitive value) cells; ``kept`` is then per cell, not
        # per record (the records stay where they are; workflow.engine_replay suppresses them there).
        from .engine import WEIGHT, as_engine_table, summary_frame

        table = as_engine_table(frame, engine)
        sensitives = [r.sensitive for r in requirements if isinstance(r, ModelRequirement)]
        cells, _ = summary_frame(table, [*quasi_identifiers, *sensitives], count=count)
        return acceptance(cells, list(quasi_identifiers), k=k, requirements=requirements,
                          max_suppressed=max_suppressed, count=WEIGHT)
    k = whole_k(k)
    limit = suppression_limit(max_suppressed)
    requirements = checked_requirements(requirements)
    sensitives = list(dict.fromkeys(r.sensitive for r in requirements))
    qis = _checked_columns(frame, quasi_identifiers, sensitives, count)
    table = encode(frame, [*qis, *sensitives], count=count)
    classes = table.classes(qis)
    counts = {s: _counts_from_table(table, classes, s, _is_numeric(frame[s])) for s in sensitives}
    failed, failing = classes_failing(classes.sizes, k, requirements, counts)
    records = int(classes.sizes.sum())
    suppressed = int(classes.sizes[failed].sum())
    return Acceptance(
        acceptable=within_limit(suppressed, records, limit),
        records=records,
        suppressed_records=suppressed,
        suppressed_share=suppressed / records if records else 0.0,
        failing=failing,
        kept=~failed[classes.ids],
    )


def suppression_limit(value: object) -> float:
    """A suppression limit checked: a share of records between 0 and 1.

    >>> suppression_limit(0.05)
    0.05
    """
    limit = _number(value, "The suppression limit")
    if not 0.0 <= limit <= 1.0:
        raise ParameterError(f"The suppression limit is a share of records between 0 and 1; got {limit:g}.")
    return limit


def within_limit(suppressed: int, records: int, limit: float) -> bool:
    """Whether ``suppressed`` of ``records`` records is a share of at most ``limit``
    (with a margin of 10^-9 records per record for the float product).

    >>> within_limit(5, 100, 0.05), within_limit(6, 100, 0.05)
    (True, False)
    """
    return suppressed <= limit * records + 1e-9 * max(records, 1)


def checked_requirements(requirements: Iterable[ModelRequirement]) -> tuple[ModelRequirement, ...]:
    """The requirements as a tuple; a sentence when one is not a ``ModelRequirement``."""
    requirements = tuple(requirements)
    for r in requirements:
        if not isinstance(r, ModelRequirement):
            raise ParameterError("Each privacy model must be given as a ModelRequirement.")
    return requirements


def classes_failing(
    class_sizes: np.ndarray,
    k: int,
    requirements: Sequence[ModelRequirement],
    counts: Mapping[str, SensitiveCounts],
    hierarchies: Sequence[HierarchyLevels | None] | None = None,
) -> tuple[np.ndarray, tuple[tuple[str, int], ...]]:
    """Per class, whether it fails k or a requirement, and per criterion the records in
    classes failing it (``Acceptance.failing``). ``counts`` maps each requirement's
    sensitive attribute to its summaries over these classes; ``hierarchies`` (aligned
    with ``requirements``) may hold t-closeness hierarchies already matched to the labels.
    The one rule behind ``acceptance`` and the generalization search.

    >>> s = SensitiveCounts.from_cells([0, 0, 1], [0, 1, 0], [1, 1, 2], ["a", "b"])
    >>> failed, failing = classes_failing(s.class_sizes, 2, [ModelRequirement("distinct_l", "dx", 2)], {"dx": s})
    >>> failed.tolist(), failing
    ([False, True], (('k = 2', 0), ('distinct 2-diversity of dx', 2)))
    """
    failed = (class_sizes > 0) & (class_sizes < k)
    failing: list[tuple[str, int]] = []
    if k > 1:
        failing.append((f"k = {k}", int(class_sizes[failed].sum())))
    for i, r in enumerate(requirements):
        fails = ~class_passes(r, counts[r.sensitive], None if hierarchies is None else hierarchies[i])
        failing.append((r.describe(), int(class_sizes[fails].sum())))
        failed |= fails
    return failed, tuple(failing)


# --------------------------------------------------------------------------- every model at once (pages, report, CLI)


@dataclass(frozen=True)
class ModelValues:
    """Every model's value for one sensitive attribute (the table's worst class).

    ``recursive_c`` is for ``recursive_l``; ``t_distance`` says which distance t used;
    ``enhanced_beta`` is infinite when some gain exceeds its -ln p cap.
    """

    sensitive: str
    records: int
    classes: int
    values: int
    k: int
    alpha: float
    distinct_l: int
    entropy_l: float
    recursive_l: int
    recursive_c: float
    t: float | None
    t_distance: str
    delta: float
    beta: float
    enhanced_beta: float

    def as_dict(self) -> dict[str, object]:
        """Plain values for JSON (infinity as the text "inf").

        >>> model_values(pd.DataFrame({"z": [1, 1], "s": ["a", "b"]}), ["z"], "s").as_dict()["distinct_l"]
        2
        """
        return {k: ("inf" if isinstance(v, float) and math.isinf(v) else v) for k, v in self.__dict__.items()}


def model_values(
    df: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    sensitive: str,
    *,
    count: str | None = None,
    recursive_l: int = 2,
    hierarchy: pd.DataFrame | None = None,
    engine=None,
) -> ModelValues:
    """Every model of one sensitive attribute from one pass of the counting kernel.
    t is None when the attribute has a single value (t-closeness needs two).
    ``df`` may also be a path or a table on a data engine (``anonlib.engine``), or
    ``engine="duckdb"``/``"spark"`` be given: the cells are then counted there.

    >>> v = model_values(pd.DataFrame({"zip": [1, 1, 2, 2], "dx": ["a", "b", "a", "a"]}), ["zip"], "dx")
    >>> v.k, v.alpha, v.distinct_l, v.t, v.t_distance
    (2, 1.0, 1, 0.25, 'equal')
    """
    if engine is not None or not isinstance(df, pd.DataFrame):  # the cells from one group-by on the engine
        from .engine import WEIGHT, as_engine_table, summary_frame

        cells, _ = summary_frame(as_engine_table(df, engine), [*quasi_identifiers, sensitive], count=count)
        return model_values(cells, list(quasi_identifiers), sensitive, count=WEIGHT, recursive_l=recursive_l,
                            hierarchy=hierarchy)
    s = sensitive_counts(df, quasi_identifiers, sensitive, count=count)
    levels = None if hierarchy is None else hierarchy_levels(hierarchy, s.labels, sensitive)
    return _values_of(s, sensitive, recursive_l, levels)


def _values_of(s: SensitiveCounts, sensitive: str, recursive_l: int, levels: HierarchyLevels | None) -> ModelValues:
    distance = _distance(s, None, levels)
    recursive_l = _whole(recursive_l, "l of recursive (c,l)-diversity", 1)
    return ModelValues(
        sensitive=sensitive,
        records=s.records,
        classes=int(s.present.sum()),
        values=int((s.value_totals > 0).sum()),
        k=int(worst(s.class_sizes.astype(np.float64), s, largest=False)),
        alpha=worst(class_alpha(s), s),
        distinct_l=int(worst(class_distinct(s).astype(np.float64), s, largest=False)),
        entropy_l=float(np.exp(worst(class_entropy(s), s, largest=False))),
        recursive_l=recursive_l,
        recursive_c=worst(class_recursive_c(s, recursive_l), s),
        t=worst(class_t(s, distance, levels), s) if s.n_values >= 2 else None,
        t_distance=distance,
        delta=worst(class_delta(s), s),
        beta=worst(class_beta(s), s),
        enhanced_beta=worst(class_beta(s, enhanced=True), s),
    )


# the ModelValues field of each model, in the order tables list them
_VALUE_FIELDS = {
    "alpha": "alpha",
    "distinct_l": "distinct_l",
    "entropy_l": "entropy_l",
    "recursive_cl": "recursive_c",
    "t_closeness": "t",
    "delta_disclosure": "delta",
    "beta_likeness": "beta",
    "enhanced_beta_likeness": "enhanced_beta",
}
MODEL_TABLE_COLUMNS = ("sensitive", "model", "name", "value", "required", "failing_records")


def model_table(
    df: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    sensitive: Sequence[str],
    *,
    count: str | None = None,
    requirements: Iterable[ModelRequirement] = (),
    recursive_l: int = 2,
    hierarchies: Mapping[str, pd.DataFrame] | None = None,
) -> pd.DataFrame:
    """Per sensitive attribute, every model's value (the table's worst class) and, for the
    models switched on in ``requirements`` (a release target's), the records in classes
    failing them: the Dataset page's table and the report's. One row per attribute and
    model; columns ``sensitive``, ``model`` (key), ``name``, ``value`` (recursive (c,l): c
    for the required l, else for ``recursive_l``; t: None with a single value; β may be
    infinite), ``required`` (the requirement in words, "" when not switched on) and
    ``failing_records`` (<NA> when not switched on). ``hierarchies`` maps a sensitive
    attribute to its ARX hierarchy (hierarchical t-closeness; a requirement's own wins).

    >>> df = pd.DataFrame({"zip": [1, 1, 1, 2, 2], "dx": ["a", "b", "c", "a", "a"]})
    >>> t = model_table(df, ["zip"], ["dx"], requirements=[ModelRequirement("distinct_l", "dx", 2)])
    >>> t.loc[t["model"] == "distinct_l", ["value", "required", "failing_records"]].values.tolist()
    [[1, 'distinct 2-diversity of dx', 2]]
    >>> int(t["failing_records"].isna().sum())  # the models not switched on
    7
    """
    if isinstance(sensitive, str):
        sensitive = [sensitive]
    sensitive = list(dict.fromkeys(sensitive))
    requirements = checked_requirements(requirements)
    unknown = [r.sensitive for r in requirements if r.sensitive not in sensitive]
    sensitive += list(dict.fromkeys(unknown))
    if not sensitive:
        raise EmptySelectionError("Mark at least one sensitive attribute to see its privacy models.")
    qis = _checked_columns(df, quasi_identifiers, sensitive, count)
    table = encode(df, [*qis, *sensitive], count=count)
    classes = table.classes(qis)
    hierarchies = dict(hierarchies or {})
    rows: list[dict[str, object]] = []
    for attribute in sensitive:
        s = _counts_from_table(table, classes, attribute, _is_numeric(df[attribute]))
        required = {r.model: r for r in requirements if r.sensitive == attribute}
        t_rule = required.get("t_closeness")
        hierarchy = t_rule.hierarchy if t_rule is not None and t_rule.hierarchy is not None else hierarchies.get(attribute)
        levels = None if hierarchy is None else hierarchy_levels(hierarchy, s.labels, attribute)
        l_rule = required.get("recursive_cl")
        values = _values_of(s, attribute, int(l_rule.value) if l_rule is not None else recursive_l, levels)
        for model, field_name in _VALUE_FIELDS.items():
            rule = required.get(model)
            failing = pd.NA
            if rule is not None:
                fails = ~class_passes(rule, s, levels if model == "t_closeness" else None)
                failing = int(s.class_sizes[fails].sum())
            rows.append({
                "sensitive": attribute,
                "model": model,
                "name": MODEL_NAMES[model],
                "value": getattr(values, field_name),
                "required": "" if rule is None else rule.describe(),
                "failing_records": failing,
            })
    out = pd.DataFrame(rows, columns=list(MODEL_TABLE_COLUMNS))
    out["value"] = pd.Series([r["value"] for r in rows], dtype=object)  # l stays a whole number
    out["failing_records"] = out["failing_records"].astype("Int64")
    return out
