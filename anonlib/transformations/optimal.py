"""The least damaging full-domain generalization that meets a release target, proven.

Over the lattice of full-domain generalizations (one level per quasi-identifier,
ARX-layout hierarchies), find the node that minimizes a utility measure
(``anonlib.measures.utility``) subject to the release target: every class of at least k
records and meeting the privacy models, after suppressing the records of the
classes that do not, with at most the allowed share of records suppressed
(ARX's record suppression).

How it stays exact while checking few nodes (the ideas of OLA, El Emam et al.
2009; Flash, Kohlmayer et al. 2012; Incognito, LeFevre et al. 2005):

1. **A lower bound without counting.** For the cell measures (loss metric,
   precision, non-uniform entropy) a node's cost is the sum over records and
   quasi-identifiers of a per-cell cost that depends only on the cell's value and
   its level, except that a suppressed record pays its full cost. So
   ``bound(node) = sum of the cell costs at the node's levels`` is a lower bound of
   the node's cost, computed for every node at once from per-attribute totals, and
   it never decreases upwards in the lattice. Nodes are visited in order of their
   bound; once the bound passes the best cost found, nothing left can win.
2. **Monotonicity of the target.** With k and the monotone models, a node that
   fails makes every specialization fail (tagged without counting); a node with
   no record in a failing class makes every generalization suppress nothing, so
   their cost *is* their bound (no counting either). As in Flash, each node not yet
   settled starts a climb towards the top, and the highest node of the climb that fails
   tags everything under it; the climb follows the cheapest bound, and its probes go
   where a count is cheap (``_climb``, ``_highest_failing``). Models that are not monotone
   (t-closeness, δ-disclosure, β-likeness with suppression) get no tags: every
   node whose bound could still win is counted.
3. **Cheap counting.** A node's classes are rolled up from the smallest class
   table already counted below it (classes of a generalization are unions of
   classes), not recounted from the records. Each class is one integer key with a
   bit field per quasi-identifier, so rolling up moves the fields of the attributes
   whose level differs and groups the keys in one hash pass.

Discernibility and average class size are not sums of cell costs: for them every
node the tags do not settle is counted (exact, slower). A time limit stops the
walk early; the answer then says it is not proven optimal and how far the
lowest unchecked bound lies below it.

One module of 800-odd lines because the lattice's table cache, its tags and the walk
keep one invariant together (every probe keeps "the lower end fails, the upper end is
acceptable" true, and every count rolls up from a table under its node); split, each
half would have to know the other's internals.

Example (the ARX benchmark's case in miniature):
    >>> import pandas as pd
    >>> from anonlib.core.hierarchy import flat_hierarchy
    >>> df = pd.DataFrame({"age": ["31", "35", "47", "48"], "sex": ["F", "F", "M", "M"]})
    >>> h = {"age": pd.DataFrame([["31", "30-39", "*"], ["35", "30-39", "*"], ["47", "40-49", "*"], ["48", "40-49", "*"]]),
    ...      "sex": flat_hierarchy(["F", "M"])}
    >>> r = optimal_levels(df, ["age", "sex"], h, k=2)
    >>> r.levels, round(r.value, 4), r.optimal
    ((1, 0), 0.1667, True)
"""

from __future__ import annotations

import heapq
import math
import operator
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.budget import Progress, lattice_size, report
from ..core.cells import is_number_column
from ..core.equivalence import Classes, combine, distinct_keys, encode
from ..core.errors import ColumnError, EmptySelectionError, HierarchyError, NoSolutionError, ParameterError, join_names
from ..core.hierarchy import level_lookup
from ..core.metrics import whole_k
from ..measures.models import (
    ModelRequirement,
    checked_requirements,
    classes_failing,
    counts_from_codes,
    hierarchy_levels,
    requirements_monotone,
    suppression_limit,
    within_limit,
)
from ..measures.models.summaries import checked_columns
from ..measures.utility import CELL_MEASURES, cell_costs, check_measure

MAX_NODES = 2_000_000  # nodes enumerated at once (bounds and masks: ~100 bytes each)
CACHE_TABLES = 4096  # class tables kept for rolling up
_KEY_SPACE = 1 << 62  # keys of one int64
_TABLE_MODELS = ("t_closeness", "delta_disclosure", "beta_likeness", "enhanced_beta_likeness")  # vs the whole table
_NEVER = np.iinfo(np.int64).max
_CLIMB_BY_BOUND = ("loss", "nonuniform_entropy")  # measures whose climbs follow the bound (``_climb``)
RELATIVE_TIE = 1e-12  # costs this close are equal; ties go to fewer levels, then the smaller level vector


@dataclass(frozen=True)
class OptimalLevels:
    """The chosen node and how sure the search is of it.

    ``value`` is the measure's value the search computed for the node (the
    released table's own value is measured again by the caller); ``optimal`` is
    True when the walk proved no other node meets the target at a lower cost;
    ``bound`` is then ``value``, else the lowest cost any unchecked node could
    have. ``checked`` counts nodes whose classes were counted, ``lattice_size``
    all nodes.
    """

    levels: tuple[int, ...]
    measure: str
    value: float
    suppressed: int
    optimal: bool
    bound: float
    checked: int
    lattice_size: int
    seconds: float

    @property
    def gap(self) -> float:
        """How much lower than ``value`` an unchecked node could still be (0 when optimal)."""
        return max(self.value - self.bound, 0.0)


class _Table:
    """Classes of one node, for rolling up. Per row: the class's key at the node's levels (a
    bit field per quasi-identifier, ``Lattice._moved``), or, when the fields would not fit
    one int64, a representative original code per quasi-identifier (offset by attribute,
    ``Lattice._keys``); the sensitive codes (one array per attribute); the records; and
    (resolved when needed) each distinct original row's position in it, through the table
    it was rolled up from."""

    __slots__ = ("levels", "key", "rep", "sensitive", "weights", "rows", "_source", "_ids", "_members")

    def __init__(self, levels, key, rep, sensitive, weights, source=None, ids=None, members=None):
        self.levels = levels
        self.key = key
        self.rep = rep
        self.sensitive = sensitive
        self.weights = weights
        self.rows = len(weights)
        self._source, self._ids, self._members = source, ids, members

    @property
    def members(self) -> np.ndarray:
        if self._members is None:
            self._members = self._ids[self._source.members]
            self._source = self._ids = None
        return self._members


class Lattice:
    """The full-domain generalization lattice of one table, encoded once.

    >>> import pandas as pd
    >>> from anonlib.core.hierarchy import flat_hierarchy
    >>> lat = Lattice(pd.DataFrame({"a": ["x", "y", "y"]}), ["a"], {"a": flat_hierarchy(["x", "y"])}, k=2)
    >>> lat.size, lat.status((0,))[:2], lat.status((1,))[:2]
    (2, (False, 1), (True, 0))
    """

    def __init__(
        self,
        df: pd.DataFrame,
        quasi_identifiers: Sequence[str],
        hierarchies: Mapping[str, pd.DataFrame],
        *,
        k: int,
        requirements: Sequence[ModelRequirement] = (),
        max_suppressed: float = 0.0,
        count: str | None = None,
        measure: str = "loss",
        rollup: bool = True,
    ) -> None:
        self.rollup = rollup
        self.qis = (quasi_identifiers,) if isinstance(quasi_identifiers, str) else tuple(quasi_identifiers)
        if not self.qis:
            raise EmptySelectionError("Choose at least one quasi-identifier to generalize.")
        if len(set(self.qis)) != len(self.qis):
            raise ColumnError("A quasi-identifier was chosen twice; choose each once.")
        lacking = [a for a in self.qis if a not in hierarchies]
        if lacking:
            raise HierarchyError(f"Every quasi-identifier needs a hierarchy; there is none for {join_names(lacking)}.")
        self.k = whole_k(k)
        self.measure = check_measure(measure)
        self.requirements = checked_requirements(requirements)
        self.max_suppressed = suppression_limit(max_suppressed)
        self.sensitive = tuple(dict.fromkeys(r.sensitive for r in self.requirements))
        self._global = any(r.model in _TABLE_MODELS for r in self.requirements)
        checked_columns(df, self.qis, self.sensitive, count)
        # Quasi-identifiers' codes are only mapped through their hierarchies: their labels need no
        # sort, nor the distinct rows an order (sensitive labels stay sorted: ordered distances use it).
        table = encode(
            df,
            [*self.qis, *(s for s in self.sensitive if s not in self.qis)],
            count=count,
            unordered=[a for a in self.qis if a not in self.sensitive],
        )
        weights = table.weights if table.weights is not None else np.ones(table.n_rows, dtype=np.int64)
        rows = table.classes(ordered=False)  # distinct (quasi-identifiers, sensitive) rows, with their records
        first = rows.first_rows
        self.codes = table.codes[first, : len(self.qis)]
        self.weights = rows.sizes
        self.records = int(weights.sum())
        self.sensitive_codes = (
            np.column_stack([table.codes[first, table.position(s)] for s in self.sensitive])
            if self.sensitive
            else np.zeros((len(first), 0), dtype=np.int64)
        )
        self.sensitive_info = [
            (table.cardinalities[table.position(s)], table.labels[table.position(s)], is_number_column(df[s]))
            for s in self.sensitive
        ]
        self.hierarchy_levels = [
            None
            if r.hierarchy is None
            else hierarchy_levels(r.hierarchy, table.labels[table.position(r.sensitive)], r.sensitive)
            for r in self.requirements
        ]
        # Per quasi-identifier: level lookups, and the cell costs per level and value (the
        # records' total per level is a node's bound; a suppressed record pays its ``full_cost``).
        self.lookups: list[np.ndarray] = []
        self.cell_cost: list[np.ndarray] = []  # [a][level, code]
        self.full_cost: list[np.ndarray] = []  # [a][code]
        self.level_totals: list[np.ndarray] = []  # [a][level]
        full_total = 0.0
        for j, attribute in enumerate(self.qis):
            if self.measure in CELL_MEASURES:
                freq = np.bincount(self.codes[:, j], weights=self.weights, minlength=table.cardinalities[j])
                costs = cell_costs(
                    hierarchies[attribute], table.labels[j], self.measure, frequencies=freq, attribute=attribute
                )
                lookup = costs.lookup
                self.cell_cost.append(costs.cost)
                self.full_cost.append(costs.full)
                # Sums over values in whatever order they were first seen: summed exactly
                # (``math.fsum``), so a node's cost has the same bits whatever the records' order
                # (an engine hands them over in its own).
                self.level_totals.append(np.array([math.fsum(row) for row in (costs.cost * freq).tolist()]))
                full_total += math.fsum((costs.full * freq).tolist())
            else:
                lookup, _ = level_lookup(hierarchies[attribute], table.labels[j], attribute)
            self.lookups.append(lookup)
        self.heights = tuple(int(lk.shape[0]) for lk in self.lookups)
        widest, tallest = max(lk.shape[1] for lk in self.lookups), max(self.heights)
        self._stacked = np.zeros((len(self.qis), tallest, widest), dtype=np.int64)  # [attribute, level, code]
        self._level_cards = np.ones((len(self.qis), tallest), dtype=np.int64)
        for a, lk in enumerate(self.lookups):
            self._stacked[a, : lk.shape[0], : lk.shape[1]] = lk
            self._level_cards[a, : lk.shape[0]] = lk.max(axis=1) + 1
        # Paths climb first by the attributes with the most original values (they shrink tables the most).
        self.climb_order = tuple(int(a) for a in np.argsort([-lk.shape[1] for lk in self.lookups], kind="stable"))
        self.size = lattice_size(self.heights)
        self.tops = tuple(h - 1 for h in self.heights)  # the top node
        if self.measure == "nonuniform_entropy":
            self.scale = full_total or 1.0  # bits when everything is suppressed
        elif self.measure in CELL_MEASURES:
            self.scale = float(self.records * len(self.qis)) or 1.0
        else:
            self.scale = 1.0
        # What raising each attribute one level adds to a node's bound, per level (``_climb``).
        self.raise_cost = [(np.diff(t) / self.scale).tolist() for t in self.level_totals]
        self.checked = 0
        bottom = tuple(0 for _ in self.qis)
        # Representative codes are kept offset by attribute (code + attribute * widest), so one
        # flat gather maps every attribute at once (``_keys``).
        self._offsets = np.arange(len(self.qis), dtype=np.int64) * widest
        # Classes are keyed in one layout for every node, a bit field per attribute wide enough
        # for its widest level: a node's keys are its source's keys with, per attribute whose
        # level differs, that attribute's field moved up (``_moved``; a level's value
        # determines the value of every level above it, as validated hierarchies nest). When
        # the fields do not fit one int64, each class keeps representative original codes
        # instead (``_keys``).
        self._bits = np.array([max(int(c) - 1, 0).bit_length() for c in self._level_cards.max(axis=1)], dtype=np.int64)
        self._shift = np.concatenate([np.cumsum(self._bits[::-1])[::-1][1:], [0]]).astype(np.int64)
        self._sensitive_space = 1
        for info in self.sensitive_info:
            self._sensitive_space *= int(info[0])
        self._steps: dict[tuple[int, int, int], np.ndarray] = {}
        self.fits_one_key = int(self._bits.sum()) + max(self._sensitive_space - 1, 0).bit_length() < 62
        key = rep = None
        if self.fits_one_key:
            key = sum(self.codes[:, a] << self._shift[a] for a in range(len(self.qis)))  # level 0: the codes
        else:
            rep = np.ascontiguousarray(self.codes.T + self._offsets[:, None])
        self._tables = [
            _Table(
                bottom,
                key,
                rep,
                np.ascontiguousarray(self.sensitive_codes.T),
                self.weights,
                members=np.arange(len(first)),
            )
        ]
        # To find the cached tables under a node at once, each table's levels are also packed
        # into one integer, a field per attribute with a guard bit on top: a table lies under
        # a node iff subtracting its fields from the node's (guards set) clears no guard
        # (``_source``; None when the fields would not fit one int64).
        widths = [max(h - 1, 0).bit_length() + 1 for h in self.heights]
        self._level_shifts = [sum(widths[:a]) for a in range(len(widths))]
        self._guard = sum(1 << (s + w - 1) for s, w in zip(self._level_shifts, widths)) if sum(widths) < 63 else None
        self._table_levels = np.zeros((len(self.qis), CACHE_TABLES), dtype=np.int16)  # one row per attribute
        self._table_packed = np.zeros(CACHE_TABLES, dtype=np.int64)
        self._table_rows = np.full(CACHE_TABLES, _NEVER, dtype=np.int64)
        self._table_rows[0] = len(first)
        self._status: dict[tuple[int, ...], tuple[bool, int, float | None]] = {}
        self._kept: dict[tuple[int, ...], _Table] = {}  # the cached tables but the bottom, by levels
        # Generalizations of the nodes counted acceptable, one axis per attribute (for ``acceptable``).
        self._above_accepted = np.zeros(self.heights, dtype=bool) if self.size <= MAX_NODES else None

    @property
    def monotone(self) -> bool:
        """A generalization of an acceptable node is acceptable (k and monotone models)."""
        return requirements_monotone(self.requirements, self.max_suppressed)

    @property
    def zero_monotone(self) -> bool:
        """A generalization of a node where nothing fails has nothing failing either."""
        return requirements_monotone(self.requirements, 0.0)

    def bound(self, levels: Sequence[int]) -> float:
        """The cost of ``levels`` if nothing were suppressed: a lower bound of its cost."""
        if self.measure not in CELL_MEASURES:
            return 0.0
        return float(sum(t[level] for t, level in zip(self.level_totals, levels))) / self.scale

    def _source(self, levels: tuple[int, ...]) -> _Table:
        """The smallest cached class table of a specialization of ``levels``."""
        if not self.rollup:
            return self._tables[0]
        n = len(self._tables)
        if self._guard is not None:
            below = (((self._packed(levels) | self._guard) - self._table_packed[:n]) & self._guard) == self._guard
        else:
            below = (self._table_levels[:, :n] <= np.asarray(levels)[:, None]).all(axis=0)
        return self._tables[int(np.where(below, self._table_rows[:n], _NEVER).argmin())]

    def _packed(self, levels: tuple[int, ...]) -> int:
        """``levels`` as one integer, a field per attribute below its guard bit (``_source``)."""
        return sum(level << shift for level, shift in zip(levels, self._level_shifts))

    def source_table(self, levels: tuple[int, ...]) -> _Table:
        """The table a count of ``levels`` would roll up from (``_source``), to pass on to
        ``status`` for a node above it (its ``levels`` say which)."""
        return self._source(tuple(map(int, levels)))

    def _keys(self, levels: np.ndarray, rep: np.ndarray) -> tuple[np.ndarray, int]:
        """One mixed-radix key per row of ``rep`` for the quasi-identifiers at ``levels`` (the
        kernel's ``combine`` with the radix folded into the lookups: one gather for all
        attributes), and the size of the key space."""
        attributes = np.arange(len(self.qis))
        cards = self._level_cards[attributes, levels]
        space = 1
        for card in cards.tolist():
            space *= card
        if space >= _KEY_SPACE:  # too wide for one int64 key: the kernel folds it in steps
            codes = rep - self._offsets[:, None]
            ids, n = combine(
                [self.lookups[a][levels[a]][codes[a]] for a in attributes], cards.tolist(), rep.shape[1], ordered=False
            )
            return ids, n
        radix = np.ones(len(cards), dtype=np.int64)
        radix[:-1] = np.cumprod(cards[::-1])[::-1][1:]
        scaled = self._stacked[attributes, levels] * radix[:, None]
        return scaled.ravel().take(rep).sum(axis=0), space

    def _step(self, attribute: int, source: int, target: int) -> np.ndarray:
        """Per value of ``attribute`` at level ``source``, the amount that moves its field in a
        key to the value at level ``target``."""
        found = self._steps.get((attribute, source, target))
        if found is None:
            lookup = self.lookups[attribute]
            above = np.zeros(int(self._level_cards[attribute, source]), dtype=np.int64)  # the values at ``source``
            above[lookup[source]] = lookup[target]
            if not np.array_equal(above[lookup[source]], lookup[target]):  # validated hierarchies nest
                raise HierarchyError(
                    f"The hierarchy of {self.qis[attribute]} does not nest: a value at level "
                    f"{source} generalizes to two different values at level {target}."
                )
            found = (above - np.arange(above.size)) * (1 << int(self._shift[attribute]))
            self._steps[(attribute, source, target)] = found
        return found

    def _moved(self, source: _Table, levels: tuple[int, ...]) -> np.ndarray:
        """The keys of ``source``'s classes at ``levels`` (a specialization's classes,
        keyed at its own levels, with the fields of the attributes that differ moved up)."""
        key = source.key
        for a, (was, now) in enumerate(zip(source.levels, levels)):
            if was != now:
                field = (key >> self._shift[a]) & ((1 << int(self._bits[a])) - 1)
                key = key + self._step(a, was, now).take(field)
        return key

    def classes(
        self, levels: tuple[int, ...], source: _Table | None = None
    ) -> tuple[_Table, np.ndarray, np.ndarray | None]:
        """The node's class table, the records of each class on the quasi-identifiers, and
        each table row's class (None when the rows are the classes: no sensitive attribute).
        ``source``: a cached table under the node to roll up from (``source_table``), else
        the smallest one."""
        levels = tuple(map(int, levels))
        if source is None:
            source = self._source(levels)
        elif not all(map(operator.le, source.levels, levels)):
            raise ParameterError(
                f"A node's classes cannot be rolled up from {source.levels}, which is not under {levels}."
            )
        if source.levels == levels:  # the node's own table (the bottom, or a node counted before)
            table = source
        elif source.key is None:  # keys too wide for one int64: regroup the representatives
            key, space = self._keys(np.asarray(levels), source.rep)
            for codes, info in zip(source.sensitive, self.sensitive_info):
                key, space = key * info[0] + codes, space * info[0]
            ids, n = combine([key], [space], source.rows, ordered=False)
            merged = Classes.from_ids(ids, n, source.weights)
            first = merged.first_rows
            table = _Table(levels, None, source.rep[:, first], source.sensitive[:, first], merged.sizes, source, ids)
        else:  # the source's keys moved up, grouped by one hash pass
            key = self._moved(source, levels)
            for codes, info in zip(source.sensitive, self.sensitive_info):
                key = key * info[0] + codes
            ids, keys = distinct_keys(key)
            weights = np.bincount(ids, weights=source.weights, minlength=len(keys)).astype(np.int64)  # exact
            if self.sensitive:
                first = Classes.from_ids(ids, len(keys)).first_rows
                table = _Table(
                    levels, keys // self._sensitive_space, None, source.sensitive[:, first], weights, source, ids
                )
            else:
                table = _Table(levels, keys, None, source.sensitive[:, : len(keys)], weights, source, ids)
        if self.rollup and table.rows < source.rows:
            self._keep(table)
        if not self.sensitive:
            return table, table.weights, None
        qkey, qspace = (
            self._keys(np.asarray(levels), table.rep) if table.key is None else (table.key, 1 << int(self._bits.sum()))
        )
        gids, gn = combine([qkey], [qspace], table.rows, ordered=False)
        return table, Classes.from_ids(gids, gn, table.weights).sizes, gids

    def _keep(self, table: _Table) -> None:
        """Cache a class table to roll up from; when full, it replaces the largest (never the bottom)."""
        if len(self._tables) < CACHE_TABLES:
            slot = len(self._tables)
            self._tables.append(table)
        else:
            slot = 1 + int(np.argmax(self._table_rows[1:]))
            if self._table_rows[slot] <= table.rows:
                return
            del self._kept[self._tables[slot].levels]
            self._tables[slot] = table
        self._kept[table.levels] = table
        self._table_levels[:, slot] = table.levels
        self._table_packed[slot] = self._packed(table.levels)
        self._table_rows[slot] = table.rows

    def status(
        self, levels: Sequence[int], *, cost: bool = True, source: _Table | None = None
    ) -> tuple[bool, int, float | None]:
        """(acceptable, records suppressed, cost) of the node ``levels`` (cached; the cost
        is None for a node that fails, or when ``cost`` is False and it was not needed yet);
        counted from ``source`` when given (``classes``)."""
        levels = tuple(map(int, levels))
        known = self._status.get(levels)
        if known is not None and (known[2] is not None or not cost or not known[0]):
            return known
        self.checked += known is None  # nodes counted (a node counted again for its cost is one node)
        table, sizes, row_class = self.classes(levels, source)
        failed = sizes < self.k  # a class of no records (a count column's zeros) suppresses nothing either way
        if self.requirements:
            groups = Classes(ids=row_class, sizes=sizes, rows_per_class=np.ones(len(sizes), dtype=np.int64))
            counts = {
                s: counts_from_codes(
                    groups, table.sensitive[i], n_values, labels, weights=table.weights, numeric=numeric
                )
                for i, (s, (n_values, labels, numeric)) in enumerate(zip(self.sensitive, self.sensitive_info))
            }
            failed |= classes_failing(sizes, self.k, self.requirements, counts, self.hierarchy_levels)[0]
        suppressed = int(np.dot(sizes, failed))  # exact: integer sizes, no float on the way
        acceptable = within_limit(suppressed, self.records, self.max_suppressed)
        if acceptable and suppressed and self._global:
            acceptable = self._release_meets(table, sizes, row_class, failed)
        value = self._cost(levels, table, sizes, row_class, failed, suppressed) if acceptable and cost else None
        self._status[levels] = (acceptable, suppressed, value)
        if acceptable and known is None and self._above_accepted is not None:
            self._above_accepted[_at_least(levels)] = True
        return self._status[levels]

    def known_acceptable(self, levels: tuple[int, ...]) -> bool:
        """Whether a node counted acceptable lies under ``levels`` (so it is acceptable, for a
        monotone target), or ``levels`` itself was."""
        return self._above_accepted is not None and bool(self._above_accepted[levels])

    def counted(self, levels: tuple[int, ...]) -> bool:
        """Whether ``levels`` was counted."""
        return levels in self._status

    def kept_table(self, levels: tuple[int, ...]) -> _Table | None:
        """The cached class table of ``levels``, if it is kept for rolling up (``_keep``)."""
        return self._kept.get(levels)

    def acceptable(self, levels: tuple[int, ...], source: _Table | None = None) -> bool:
        """Whether the node meets the target, for a monotone target: without counting when
        a node already counted acceptable lies below it (its generalization is acceptable too);
        counted from ``source`` when given (``classes``)."""
        return self.known_acceptable(tuple(levels)) or self.status(levels, cost=False, source=source)[0]

    def _release_meets(
        self, table: _Table, sizes: np.ndarray, row_class: np.ndarray | None, failed: np.ndarray
    ) -> bool:
        """Whether the released records (failing classes suppressed) meet the models measured
        on themselves: t-closeness, δ-disclosure and β-likeness compare each class with the
        table's distribution, which suppression changes, and a release is measured as written."""
        kept_sizes = np.where(failed, 0, sizes)
        rows = ~failed if row_class is None else ~failed[row_class]
        for i, s in enumerate(self.sensitive):  # as ``acceptance`` reads the file: t needs two values left
            if (
                any(r.model == "t_closeness" and r.sensitive == s for r in self.requirements)
                and np.unique(table.sensitive[i][rows & (table.weights > 0)]).size < 2
            ):
                return False
        ids = np.flatnonzero(rows) if row_class is None else row_class[rows]
        groups = Classes(ids=ids, sizes=kept_sizes, rows_per_class=np.ones(len(sizes), dtype=np.int64))
        counts = {
            s: counts_from_codes(
                groups, table.sensitive[i][rows], n_values, labels, weights=table.weights[rows], numeric=numeric
            )
            for i, (s, (n_values, labels, numeric)) in enumerate(zip(self.sensitive, self.sensitive_info))
        }
        try:
            again, _ = classes_failing(kept_sizes, self.k, self.requirements, counts, self.hierarchy_levels)
        except ParameterError:  # e.g. t-closeness on a release left with one sensitive value
            return False
        return not again.any()

    def _cost(
        self,
        levels,
        table: _Table,
        sizes: np.ndarray,
        row_class: np.ndarray | None,
        failed: np.ndarray,
        suppressed: int,
    ) -> float:
        if self.measure in CELL_MEASURES:
            value = sum(float(t[level]) for t, level in zip(self.level_totals, levels))
            if suppressed:
                rows = table.members if row_class is None else row_class[table.members]
                gone = np.flatnonzero(failed[rows])  # distinct original rows
                codes = self.codes[gone]
                paid = sum(
                    self.full_cost[a][codes[:, a]] - self.cell_cost[a][levels[a]][codes[:, a]]
                    for a in range(len(self.qis))
                )
                value += math.fsum((self.weights[gone] * paid).tolist())  # they pay in full (summed exactly, as above)
            return value / self.scale
        kept = sizes[~failed & (sizes > 0)]
        if self.measure == "discernibility":
            return float(sum(int(s) * int(s) for s in kept) + suppressed * self.records)
        classes = len(kept) + (1 if suppressed else 0)
        return self.records / classes if classes else 0.0


def _no_solution(lat: Lattice, suppressed: int) -> NoSolutionError:
    """The sentence when not even the most general node meets the target."""
    if not lat.requirements and not lat.max_suppressed:
        return NoSolutionError(
            f"No generalization reaches {lat.k}-anonymity on {join_names(lat.qis)}: even the most general one "
            f"leaves {suppressed:,} of {lat.records:,} records in classes smaller than {lat.k}. Lower k, or give "
            "the hierarchies a top level that groups everything (such as '*')."
        )
    criteria = join_names([f"k = {lat.k}", *(r.describe() for r in lat.requirements)])
    return NoSolutionError(
        f"No generalization of {join_names(lat.qis)} meets {criteria} with at most "
        f"{100 * lat.max_suppressed:g}% suppressed records: even the most general one leaves {suppressed:,} of "
        f"{lat.records:,} records in classes failing it. Relax a model, allow more suppression, or give the "
        "hierarchies a top level that groups everything."
    )


def _heuristic(lat: Lattice, start: float, bound: float) -> OptimalLevels:
    """A good node found cheaply, not proven optimal (ARX's Lightning in spirit): from the
    top, step down to the acceptable child of lowest cost while there is one (high nodes
    have small class tables, so each step is cheap)."""
    current = tuple(h - 1 for h in lat.heights)
    acceptable, suppressed, cost = lat.status(current)
    if not acceptable:
        raise _no_solution(lat, suppressed)
    while True:
        steps = []
        for a in range(len(current)):
            if current[a] > 0:
                child = current[:a] + (current[a] - 1,) + current[a + 1 :]
                ok, child_suppressed, child_cost = lat.status(child)
                if ok:
                    steps.append((child_cost, sum(child), child, child_suppressed))
        if not steps:
            break
        cost, _, current, suppressed = min(steps)
    return OptimalLevels(
        levels=current,
        measure=lat.measure,
        value=cost,
        suppressed=suppressed,
        optimal=False,
        bound=min(bound, cost),
        checked=lat.checked,
        lattice_size=lat.size,
        seconds=time.perf_counter() - start,
    )


def _climb(lat: Lattice, levels: tuple[int, ...], bound: float, cutoff: float) -> list[tuple[int, ...]]:
    """A path from ``levels`` (whose bound is ``bound``) towards the top, stopping below the
    nodes whose bound already passes ``cutoff`` (``_cutoff``: they cannot win, so whether
    they fail does not matter).

    For the loss metric and non-uniform entropy each step raises the attribute whose next
    level adds the least to the bound (ties: the climb order), so the path stays among the
    cheap nodes the walk is about to visit and the failing box of its highest failing node
    rules out the most of them. Precision charges every level of an attribute the same, so
    that rule would raise one attribute to its top before the next (a path that rules out
    fewer nodes: on ARX's Adult benchmark 753 nodes counted instead of 636 at k = 5 with 4%);
    it, and the measures without a bound, raise the attributes in turn."""
    path = [levels]
    current = list(levels)
    tops = lat.tops
    if lat.measure in _CLIMB_BY_BOUND:
        costs = lat.raise_cost
        # The next raise of each attribute not at its top: the least added first, then the
        # first in the climb order.
        nexts = [(costs[a][current[a]], rank, a) for rank, a in enumerate(lat.climb_order) if current[a] < tops[a]]
        heapq.heapify(nexts)
        while nexts:
            added, rank, a = nexts[0]
            current[a] += 1
            bound += added
            if bound > cutoff:
                return path
            path.append(tuple(current))
            if current[a] < tops[a]:
                heapq.heapreplace(nexts, (costs[a][current[a]], rank, a))
            else:
                heapq.heappop(nexts)
        return path
    while any(c < t for c, t in zip(current, tops)):
        for a in lat.climb_order:
            if current[a] < tops[a]:
                current[a] += 1
                if lat.bound(current) > cutoff:
                    return path
                path.append(tuple(current))
    return path


def _highest_failing(lat: Lattice, levels: tuple[int, ...], bound: float, cutoff: float) -> tuple[int, ...] | None:
    """On a climb from ``levels`` (``_climb``; ``bound`` is its bound), the last node that
    fails the target (None when ``levels`` itself is acceptable): the target is monotone,
    so a path's failing nodes come first, and the search narrows the span between the
    highest node known to fail and the lowest known acceptable.

    What is known narrows it first, without counting: the lowest node known acceptable (by
    bisection: knowing a node acceptable is monotone along the path too) and the highest
    node under it already counted (it failed). Then each probe is the lowest node of the
    span that rolls up from the same smallest table as the span's highest: a count costs
    the rows of the table it rolls up from, and among nodes that cost the same the lowest
    one's table lies under all the others, so when it fails the next probe is the node
    above it, rolled up from its table (and when it is acceptable, no other node of the
    span needs counting). A count tells nothing new about the rest of the span, so what
    is known needs no second look."""
    path = _climb(lat, levels, bound, cutoff)
    # path[lo] fails (-1: nothing known); path[hi] is acceptable. The top of the lattice (where
    # the first climbs end) is taken to be, and only counted when no probe below it is: its
    # count would roll up from a large table.
    lo, hi = -1, len(path) - 1
    end = hi if path[hi] == lat.tops else -1
    if end < 0 and not lat.acceptable(path[hi]):
        return path[hi]
    first = lo + 1
    while first < hi:
        m = (first + hi) // 2
        if lat.known_acceptable(path[m]):
            hi = m
        else:
            first = m + 1
    lo = next((m for m in range(hi - 1, lo, -1) if lat.counted(path[m])), lo)
    source = None
    while hi - lo > 1:
        if (
            source is None
        ):  # the smallest table under the span's highest node is the smallest under each span node above it
            source = lat.source_table(path[hi - 1])
            mid = next(m for m in range(lo + 1, hi) if all(map(operator.le, source.levels, path[m])))
        else:
            mid = lo + 1
        if lat.acceptable(path[mid], source):
            hi, source = mid, None
        else:
            lo, source = mid, lat.kept_table(path[mid]) or source
    if hi == end and not lat.acceptable(path[hi]):
        return path[hi]
    return None if hi == 0 else path[lo]


def _outer_sum(per_attribute: Sequence[np.ndarray]) -> np.ndarray:
    """Per node, in flat (level-vector) order, the sum over attributes of ``per_attribute[a]``
    at the node's level of ``a`` (added attribute by attribute, as ``Lattice.bound`` does)."""
    total = per_attribute[0]
    for values in per_attribute[1:]:
        total = np.add.outer(total, values)
    return total.reshape(-1)


def _in_bound_order(bounds: np.ndarray, total_levels: np.ndarray, chunk: int = 2048):
    """The nodes' flat indices with their bounds, by bound, then fewer levels, then index,
    sorted a chunk of the lowest bounds at a time: the walk stops once a bound passes the
    best cost, usually after a small share of the lattice."""
    remaining = np.arange(bounds.size)
    while remaining.size:
        inside = None
        if remaining.size > chunk:
            lowest = bounds[remaining]
            inside = lowest <= np.partition(lowest, chunk - 1)[chunk - 1]  # every tie of the cut comes along
        if inside is not None and inside.any():  # (a NaN cut would take none: the rest is sorted at once)
            part, remaining = remaining[inside], remaining[~inside]
        else:
            part, remaining = remaining, remaining[:0]
        part = part[np.lexsort((part, total_levels[part], bounds[part]))]
        yield from zip(part.tolist(), bounds[part].tolist())


def _levels_at(index: int, heights: Sequence[int]) -> tuple[int, ...]:
    """The level vector of a node's flat index (``np.unravel_index`` for one node)."""
    levels = []
    for h in reversed(heights):
        index, level = divmod(index, h)
        levels.append(level)
    return tuple(reversed(levels))


def _at_most(levels: Sequence[int]) -> tuple[slice, ...]:
    """The specializations of ``levels``, as a box of the lattice (the flags indexed as an
    array of one axis per attribute, in level-vector order)."""
    return tuple(slice(0, level + 1) for level in levels)


def _at_least(levels: Sequence[int]) -> tuple[slice, ...]:
    """The generalizations of ``levels``, as a box of the lattice."""
    return tuple(slice(level, None) for level in levels)


def _cutoff(best: float) -> float:
    """A node whose bound passes this cannot beat or tie a cost of ``best``."""
    return best + RELATIVE_TIE * max(abs(best), 1.0)


def _better(value: float, levels: tuple[int, ...], best: tuple[float, tuple[int, ...]] | None) -> bool:
    """Lower cost wins; costs within ``RELATIVE_TIE`` tie, and ties go to fewer total
    levels, then the smaller level vector (the same rule as the brute-force reference)."""
    if best is None:
        return True
    b_value, b_levels = best
    if value < b_value - RELATIVE_TIE * max(abs(b_value), 1.0):
        return True
    if value > b_value + RELATIVE_TIE * max(abs(b_value), 1.0):
        return False
    return (sum(levels), levels) < (sum(b_levels), b_levels)


def optimal_levels(
    df: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    hierarchies: Mapping[str, pd.DataFrame],
    *,
    k: int,
    measure: str = "loss",
    max_suppressed: float = 0.0,
    requirements: Sequence[ModelRequirement] = (),
    count: str | None = None,
    time_limit: float | None = None,
    progress: Progress | None = None,
    lattice: Lattice | None = None,
    max_checked: int | None = None,
) -> OptimalLevels:
    """The node of the lattice with the lowest ``measure`` that meets the target.

    Raises ``NoSolutionError`` when no node meets the target. See the module text
    for how the walk stays exact. ``time_limit`` (seconds) or ``max_checked`` (nodes
    counted) cut the walk short: the answer is then the best found, with
    ``optimal`` False and ``bound`` the lowest cost a node not yet ruled out could have.

    >>> import pandas as pd
    >>> from anonlib.core.hierarchy import flat_hierarchy
    >>> df = pd.DataFrame({"a": ["x", "x", "y"], "b": ["u", "v", "v"]})
    >>> h = {"a": flat_hierarchy(["x", "y"]), "b": flat_hierarchy(["u", "v"])}
    >>> optimal_levels(df, ["a", "b"], h, k=2).levels, optimal_levels(df, ["a", "b"], h, k=2, max_suppressed=0.34).levels
    ((1, 1), (0, 1))
    """
    start = time.perf_counter()
    lat = lattice or Lattice(
        df,
        quasi_identifiers,
        hierarchies,
        k=k,
        requirements=requirements,
        max_suppressed=max_suppressed,
        count=count,
        measure=measure,
    )
    if lat.size > MAX_NODES:  # too many to walk: the heuristic alone, and the weakest bound
        return _heuristic(lat, start, lat.bound(tuple(0 for _ in lat.heights)))
    # Per node (flat index = level-vector order): its bound, and its total of levels.
    if lat.measure in CELL_MEASURES:
        bounds = _outer_sum([np.asarray(t, dtype=float) for t in lat.level_totals]) / lat.scale
    else:
        bounds = np.zeros(lat.size)
    total_levels = _outer_sum([np.arange(h, dtype=np.int16) for h in lat.heights])
    failing = np.zeros(lat.size, dtype=bool)  # known to fail the target
    clean = np.zeros(lat.size, dtype=bool)  # known to suppress nothing (cost = bound)
    failing_box, clean_box = failing.reshape(lat.heights), clean.reshape(lat.heights)  # views, one axis per attribute
    monotone, zero_monotone = lat.monotone, lat.zero_monotone
    best: tuple[float, tuple[int, ...]] | None = None
    best_suppressed, cutoff = 0, math.inf
    proven, lowest_open = True, None
    for done, (idx, bound) in enumerate(_in_bound_order(bounds, total_levels)):
        if bound > cutoff:
            break
        if failing[idx]:
            continue
        if (time_limit is not None and time.perf_counter() - start > time_limit) or (
            max_checked is not None and lat.checked >= max_checked
        ):
            proven, lowest_open = False, bound
            break
        levels = _levels_at(idx, lat.heights)
        if clean[idx]:
            if _better(bound, levels, best):
                best, best_suppressed = (bound, levels), 0
                cutoff = _cutoff(bound)
            continue
        if monotone:  # Flash: climb a path to the top, tag what lies below its highest failing node
            highest = _highest_failing(lat, levels, bound, cutoff)
            if highest is not None:
                failing_box[_at_most(highest)] = True
                continue
        acceptable, suppressed, cost = lat.status(levels)
        if progress is not None:
            report(progress, done, lat.size, "generalizations")
        if not acceptable:
            continue
        if suppressed == 0 and zero_monotone and lat.measure in CELL_MEASURES:
            clean_box[_at_least(levels)] = True
        if _better(cost, levels, best):
            best, best_suppressed = (cost, levels), suppressed
            cutoff = _cutoff(cost)
    if best is None and not proven:  # cut short before anything was found: the heuristic's answer
        return _heuristic(lat, start, lowest_open)
    if best is None:
        raise _no_solution(lat, lat.status(tuple(h - 1 for h in lat.heights))[1])
    report(progress, lat.size, lat.size, "generalizations")
    return OptimalLevels(
        levels=best[1],
        measure=lat.measure,
        value=best[0],
        suppressed=best_suppressed,
        optimal=proven,
        bound=best[0] if proven else min(best[0], lowest_open),
        checked=lat.checked,
        lattice_size=lat.size,
        seconds=time.perf_counter() - start,
    )


def brute_force(lattice: Lattice) -> tuple[tuple[int, ...], float, int] | None:
    """The reference: count every node, keep the best acceptable one (same tie rule).

    >>> import pandas as pd
    >>> from anonlib.core.hierarchy import flat_hierarchy
    >>> lat = Lattice(pd.DataFrame({"a": ["x", "y", "y"]}), ["a"], {"a": flat_hierarchy(["x", "y"])}, k=2)
    >>> brute_force(lat)
    ((1,), 1.0, 0)
    """
    best, best_suppressed = None, 0
    for flat in range(lattice.size):
        levels = _levels_at(flat, lattice.heights)
        acceptable, suppressed, cost = lattice.status(levels)
        if acceptable and _better(cost, levels, best):
            best, best_suppressed = (cost, levels), suppressed
    return None if best is None else (best[1], best[0], best_suppressed)
