"""Each model's value per class, from the summaries: α, distinct/entropy/recursive
l-diversity, t-closeness (equal, ordered, hierarchical distance), δ-disclosure,
β-likeness; a table's value is its worst class (``worst``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ...core.equivalence import Classes, combine
from ...core.errors import EmptySelectionError, ParameterError, join_names
from ...core.hierarchy import level_lookup
from ...core.numbers import whole_number
from .summaries import DISTANCES, TOLERANCE, SensitiveCounts

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
    l = whole_number(l, "l", minimum=1, maximum=None)
    r1, tail = recursive_parts(s, l)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(tail > 0, r1 / np.where(tail > 0, tail, 1), np.inf)
    out[~s.present] = np.nan
    return out


def recursive_parts(s: SensitiveCounts, l: int) -> tuple[np.ndarray, np.ndarray]:
    """Per class r1 (the largest count) and r_l + ... + r_m (exact integers as floats)."""
    order = np.lexsort((-s.cell_count, s.cell_class))
    counts = s.cell_count[order].astype(np.float64)
    rank = np.arange(order.size) - np.repeat(s._starts, s._lengths)
    r1 = np.zeros(s.n_classes)
    r1[s.cell_class[s._starts]] = counts[s._starts]
    tail_cells = rank >= l - 1
    tail = np.bincount(s.cell_class[order][tail_cells], weights=counts[tail_cells], minlength=s.n_classes)
    return r1, tail


def class_t(s: SensitiveCounts, distance: str | None = None, hierarchy: HierarchyLevels | None = None) -> np.ndarray:
    """Per class, the Earth Mover's Distance to the table's distribution (Li et al. 2007).

    ``distance`` is "equal", "ordered" (values in their sorted order) or
    "hierarchical" (needs ``hierarchy``, see ``hierarchy_levels``); by default
    hierarchical when a hierarchy is given, else ordered for numbers and equal
    for categories.

    >>> s = SensitiveCounts.from_cells([0, 0, 1, 1], [0, 1, 2, 3], [1, 1, 1, 1], [1, 2, 3, 4], numeric=True)
    >>> class_t(s).tolist(), class_t(s, "equal").tolist()
    ([0.3333333333333333, 0.3333333333333333], [0.5, 0.5])
    """
    distance = distance_kind(s, distance, hierarchy)
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


def distance_kind(s: SensitiveCounts, distance: str | None, hierarchy: HierarchyLevels | None) -> str:
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


def hierarchy_levels(
    hierarchy: pd.DataFrame, labels: Sequence[Any], attribute: str = "the sensitive attribute"
) -> HierarchyLevels:
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
