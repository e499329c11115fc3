"""The space of full-domain generalizations of one table, and the one rule for what meets a target.

A full-domain generalization raises every value of a quasi-identifier to the same level of
its hierarchy (ARX layout: column 0 the original value, column j its level-j
generalization), so a *node* of the space is a level vector, one level per
quasi-identifier; the nodes form a lattice from the bottom (every value as it is) to the
top (every quasi-identifier at its highest level). Every search in this package walks one
``GeneralizationSpace``:

- **Inputs checked once**: the quasi-identifiers, their hierarchies (each one a table that
  covers every value), k, the privacy models and the suppression limit.
- **Encoded once** by the counting kernel (``anonlib.core.equivalence``): the table is reduced
  to its distinct rows with their records; each quasi-identifier gets per-level lookup arrays
  (``lookup[j][code]`` is the level-j code of a value), so generalizing is an array lookup.
- **Classes counted by rolling up**: the classes of a node are unions of the classes of any
  node under it, so a node's class table is rolled up from the smallest table already counted
  under it, not recounted from the records. Each class is one integer key with a bit field
  per quasi-identifier; rolling up moves the fields of the attributes whose level differs and
  groups the keys in one hash pass (``ClassTable``, ``classes``).
- **One rule for an acceptable node** (``status``), as ARX and ``anonlib.measures.models.acceptance``
  apply it: the records of every class failing k or a privacy model are suppressed; the node
  is acceptable when they are at most the allowed share of the records. t-closeness,
  δ-disclosure and β-likeness compare each class with the whole table's distribution, which
  suppression changes, so with records suppressed they are measured again on the records
  released.
- **What a node costs** (``status``'s cost, ``bound``): for the cell measures of
  ``anonlib.measures.utility`` (loss metric, precision, non-uniform entropy) a node's cost is
  a sum over records and quasi-identifiers of a per-cell cost of the value at its level, a
  suppressed record paying in full; without suppression that sum is the node's ``bound``,
  computed for every node at once from per-level totals.
- **People, not rows** (``person``): with a column naming the person of each record, a
  class's size is its distinct people, a person failing in any class is suppressed with all
  their records, and the suppression limit is a share of the people (the kernel's
  ``person_codes`` and ``persons_per_class``, ``_people_out``); the same rule, counted in people.
  When records link (the target's unit is histories or households), a person (household) fails
  when its whole history (or any ``power`` of its records) is shared by fewer than k
  (``anonlib.measures.models.Owners``, the rule ``acceptance`` applies too); the owners ride
  along the class tables as carried columns, and ``person`` then names the column whose owners
  are suppressed whole (the household column in the households unit).
- **The paper's counts** (``row_status``): Arca & Hewett's searches judge a node by the
  distinct rows of the generalized table over all its columns and the rows in failing
  classes ("violations"): each input row's class at the node, with the other columns folded
  into one code per row (``rows=True`` counts them with every status).
- **The released table** (``generalized``, ``failing_records``): the generalized cells are
  written from the codes through ``anonlib.core.hierarchy.generalized_values``, the one way a
  generalized column is written, and the records of the failing classes are the ones a
  release suppresses.

A module of ~880 lines because the class-table cache and the rule that reads the tables keep
one invariant together: every count rolls up from a table under its node, and every status
is cached under its node's levels; split, each half would need the other's internals.

Example (a node fails k = 2 until the ages merge):
    >>> import pandas as pd
    >>> from anonlib.core.hierarchy import flat_hierarchy
    >>> space = GeneralizationSpace(pd.DataFrame({"a": ["x", "y", "y"]}), ["a"], {"a": flat_hierarchy(["x", "y"])}, target=ReleaseTarget(2))
    >>> space.size, space.status((0,))[:2], space.status((1,))[:2]
    (2, (False, 1), (True, 0))
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ...core.budget import WorkEstimate, lattice_size
from ...core.cells import is_number_column
from ...core.equivalence import Classes, combine, distinct_keys, encode, encode_column, stack_columns
from ...core.errors import ColumnError, EmptySelectionError, HierarchyError, ParameterError, join_names, require_columns
from ...core.hierarchy import generalized_values, level_lookup
from ...core.histories import check_history_work, joint_codes, owner_pairs
from ...measures.models import (
    Owners,
    checked_requirements,
    classes_failing,
    counts_from_codes,
    hierarchy_levels,
    requirements_monotone,
    within_limit,
)
from ...measures.models.summaries import checked_columns
from ...measures.target import ReleaseTarget
from ...measures.utility import CELL_MEASURES, Baseline, CellCosts, cell_costs, check_measure

MAX_NODES = 2_000_000  # nodes flagged at once (bounds and masks: ~100 bytes each)
CACHE_TABLES = 4096  # class tables kept for rolling up
_KEY_SPACE = 1 << 62  # keys of one int64
_TABLE_MODELS = ("t_closeness", "delta_disclosure", "beta_likeness", "enhanced_beta_likeness")  # vs the whole table
_NEVER = np.iinfo(np.int64).max


@dataclass(frozen=True)
class SearchNode:
    """One generated table: its level vector, violations and rows, and where it came from.

    ``parent`` is the index of the table it was generalized from (None for the
    root) and ``attribute`` the quasi-identifier(s) raised to get it. With privacy
    models and a suppression limit (the release target's),
    ``violations`` counts the distinct rows in classes failing k or a model,
    ``suppressed`` the records in them, and ``acceptable`` says whether those
    records are within the limit (``GeneralizationSpace.status``); without a limit (``acceptable`` None) a table
    satisfies when nothing fails.
    """

    levels: tuple[int, ...]
    violations: int
    rows: int
    parent: int | None = None
    attribute: str | None = None
    suppressed: int = 0
    acceptable: bool | None = None

    @property
    def satisfies(self) -> bool:
        """The table meets the requirement: no violating rows, or, with a suppression
        limit, the records of the failing classes within it.

        >>> SearchNode((1, 0), 0, 21).satisfies, SearchNode((1, 0), 2, 21, suppressed=3, acceptable=True).satisfies
        (True, True)
        """
        return self.violations == 0 if self.acceptable is None else self.acceptable

    @property
    def label(self) -> str:
        """The paper's node label T(violations, rows)."""
        return f"T({self.violations}, {self.rows})"


class ClassTable:
    """The classes of one node, for rolling up. Per row: the class's key at the node's levels
    (a bit field per quasi-identifier, ``GeneralizationSpace._moved``), or, when the fields
    would not fit one int64, a representative original code per quasi-identifier (offset by
    attribute, ``GeneralizationSpace._keys``); the carried codes (one array per sensitive
    attribute); the records; and
    (resolved when needed) each distinct original row's position in it, through the table it
    was rolled up from."""

    __slots__ = ("levels", "key", "rep", "carried", "weights", "rows", "_source", "_ids", "_members")

    def __init__(self, levels, key, rep, carried, weights, source=None, ids=None, members=None):
        self.levels = levels
        self.key = key
        self.rep = rep
        self.carried = carried
        self.weights = weights
        self.rows = len(weights)
        self._source, self._ids, self._members = source, ids, members

    @property
    def members(self) -> np.ndarray:
        """Per distinct original row, its row in this table."""
        if self._members is None:
            self._members = self._ids[self._source.members]
            self._source = self._ids = None
        return self._members


class GeneralizationSpace:
    """The full-domain generalizations of ``df`` on ``quasi_identifiers``, judged against the
    release ``target`` (``anonlib.measures.target.ReleaseTarget``: k, privacy models, a
    suppression limit and the unit). ``status`` is the node checker every search walks
    with: the target's acceptance rule counted on class tables. See the module text.

    ``measure`` (one of ``anonlib.measures.utility.MEASURES``, or None) prices the nodes;
    ``rows=True`` counts the distinct rows of each generalized table over all columns with
    every status (the paper's searches; ``row_status`` counts them on demand otherwise);
    ``rollup=False`` counts every node from the distinct rows (the brute-force reference).
    A target counted in people (``target.person``, a column of people): classes are then counted
    in distinct people, a person whose record is in a failing class is suppressed with all their
    records (again until nothing fails, as ``anonlib.measures.models.acceptance(..., person=)``
    does), and the suppression limit is a share of the people.

    >>> from anonlib.core.samples import load_sample
    >>> from anonlib.transformations.anonymize_experiments import arca_hierarchies
    >>> df = load_sample("arca_table1").frame
    >>> space = GeneralizationSpace(df, ["Zip", "Age", "AC"], arca_hierarchies(df), target=ReleaseTarget(3),
    ...                             count="#Rec.", rows=True)
    >>> space.evaluate((0, 0, 0)), space.evaluate((1, 1, 0)), space.max_levels
    ((5, 22), (0, 21), (5, 3, 2))
    """

    def __init__(
        self,
        df: pd.DataFrame,
        quasi_identifiers: Sequence[str],
        hierarchies: Mapping[str, pd.DataFrame],
        *,
        target: ReleaseTarget,
        count: str | None = None,
        measure: str | None = "loss",
        rows: bool = False,
        rollup: bool = True,
    ) -> None:
        self.qis = (quasi_identifiers,) if isinstance(quasi_identifiers, str) else tuple(quasi_identifiers)
        if not self.qis:
            raise EmptySelectionError("Choose at least one quasi-identifier to generalize.")
        if len(set(self.qis)) != len(self.qis):
            raise ColumnError("A quasi-identifier was chosen twice; choose each once.")
        if count is not None and count in self.qis:
            raise ColumnError(f"'{count}' is the record-count column; it cannot be a quasi-identifier.")
        lacking = [a for a in self.qis if a not in hierarchies]
        if lacking:
            raise HierarchyError(f"Every quasi-identifier needs a hierarchy; there is none for {join_names(lacking)}.")
        not_tables = [a for a in self.qis if not isinstance(hierarchies[a], pd.DataFrame)]
        if not_tables:
            raise HierarchyError(f"The hierarchy of {join_names(not_tables)} must be a table (ARX layout).")
        if not isinstance(target, ReleaseTarget):
            raise ParameterError("The search needs a release target (ReleaseTarget).")
        self.target = target
        self.k = target.k
        self.measure = None if measure is None else check_measure(measure)
        self.requirements = checked_requirements(target.requirements)
        self.max_suppressed = target.max_suppressed
        # whose records are suppressed whole (people, or households whose records link), and the
        # owners whose histories are judged (linked); None and () count records
        person = {"people": target.person, "histories": target.person, "households": target.household}.get(target.unit)
        self.linked = tuple(target.linked) if target.linkable else ()
        owners = list(dict.fromkeys([*([person] if person is not None else []), *self.linked]))
        self.sensitive = tuple(dict.fromkeys(r.sensitive for r in self.requirements))
        self.count = count
        self.rollup = rollup
        self._global = any(r.model in _TABLE_MODELS for r in self.requirements)
        checked_columns(df, self.qis, self.sensitive, count)  # a sensitive quasi-identifier: one sentence
        self.person = person
        for owner in owners:
            require_columns(df, [owner])
            if owner in self.qis or owner in self.sensitive or owner == count:
                what = "household" if owner == target.household else "person"
                raise ColumnError(
                    f"'{owner}' is the {what} column; it cannot also be a quasi-identifier, sensitive or the count."
                )
        self.frame = df
        self.hierarchies = {a: hierarchies[a] for a in self.qis}
        nq = len(self.qis)
        self.columns = [c for c in df.columns if c not in (count, *owners)]  # the paper's rows are over these
        # Quasi-identifiers' codes are only mapped through their hierarchies: their labels need no
        # sort, nor the distinct rows an order (sensitive labels stay sorted: ordered distances use it).
        table = encode(
            df, [*self.qis, *self.sensitive], count=count, unordered=[a for a in self.qis if a not in self.sensitive]
        )
        self.owner_counts: dict[str, int] = {}  # distinct owners per owner column (earlier deliveries' too)
        earlier = target.earlier if self.linked else None
        earlier_codes: dict[str, np.ndarray] = {}
        for owner in owners:  # the owners ride along the class tables as carried columns
            codes, earlier_codes[owner], self.owner_counts[owner] = joint_codes(df[owner], earlier, owner)
            table = replace(
                table,
                columns=(*table.columns, owner),
                codes=stack_columns([*table.codes.T, codes], table.n_rows),
                cardinalities=(*table.cardinalities, self.owner_counts[owner]),
                labels=(*table.labels, np.arange(self.owner_counts[owner])),
            )
        self.owner_columns = tuple(owners)
        self._earlier = None  # the earlier deliveries' records, judged with this table's (cumulative histories)
        if earlier is not None:
            ids, labels = encode_column(earlier.classes, ordered=False)
            self._earlier = (ids, len(labels), earlier.weights, earlier_codes)
        self.power = target.power
        self.encoded = table
        weights = table.weights if table.weights is not None else np.ones(table.n_rows, dtype=np.int64)
        # the people (households) of this table: the base of the suppressed share (a person whose
        # rows hold no records, a count column's 0, is no one's: ``Owners``)
        self.n_persons = int(df[person][weights > 0].nunique()) if person is not None else 0
        distinct = table.classes(ordered=False)  # distinct rows, with their records
        first = distinct.first_rows
        self.record_rows = distinct.ids  # each input row's distinct row
        self.codes = table.codes[first, :nq]
        self.weights = distinct.sizes
        self.records = int(weights.sum())
        carried_columns = [*self.sensitive, *owners]
        carried = [table.codes[first, table.position(s)] for s in carried_columns]
        self.carried_cards = tuple(int(table.cardinalities[table.position(s)]) for s in carried_columns)
        self._others: tuple[np.ndarray, int] | None = None  # the other columns, one code per input row
        if rows:
            self._other_codes()
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
        # Per quasi-identifier: level lookups and their labels, and the cell costs per level and
        # value (the records' total per level is a node's bound; a suppressed record pays its
        # ``full_cost``).
        self.lookups: list[np.ndarray] = []
        self.level_labels: list[list[np.ndarray]] = []
        self.costs: list[CellCosts] = []  # per quasi-identifier, for a cell measure
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
                lookup, labels = costs.lookup, list(costs.level_labels)
                self.costs.append(costs)
                self.cell_cost.append(costs.cost)
                self.full_cost.append(costs.full)
                # Sums over values in whatever order they were first seen: summed exactly
                # (``math.fsum``), so a node's cost has the same bits whatever the records' order
                # (an engine hands them over in its own).
                self.level_totals.append(np.array([math.fsum(row) for row in (costs.cost * freq).tolist()]))
                full_total += math.fsum((costs.full * freq).tolist())
            else:
                lookup, labels = level_lookup(hierarchies[attribute], table.labels[j], attribute)
            self.lookups.append(lookup)
            self.level_labels.append(labels)
        self.heights = tuple(int(lk.shape[0]) for lk in self.lookups)
        self.max_levels = tuple(h - 1 for h in self.heights)
        self.tops = self.max_levels  # the top node
        widest, tallest = max(lk.shape[1] for lk in self.lookups), max(self.heights)
        self._stacked = np.zeros((nq, tallest, widest), dtype=np.int64)  # [attribute, level, code]
        self._level_cards = np.ones((nq, tallest), dtype=np.int64)
        for a, lk in enumerate(self.lookups):
            self._stacked[a, : lk.shape[0], : lk.shape[1]] = lk
            self._level_cards[a, : lk.shape[0]] = lk.max(axis=1) + 1
        # Paths climb first by the attributes with the most original values (they shrink tables the most).
        self.climb_order = tuple(int(a) for a in np.argsort([-lk.shape[1] for lk in self.lookups], kind="stable"))
        self.size = lattice_size(self.heights)
        if self.measure == "nonuniform_entropy":
            self.scale = full_total or 1.0  # bits when everything is suppressed
        elif self.measure in CELL_MEASURES:
            self.scale = float(self.records * nq) or 1.0
        else:
            self.scale = 1.0
        # What raising each attribute one level adds to a node's bound, per level (the optimal walk's climbs).
        self.raise_cost = [(np.diff(t) / self.scale).tolist() for t in self.level_totals]
        self.checked = 0
        bottom = tuple(0 for _ in self.qis)
        # Representative codes are kept offset by attribute (code + attribute * widest), so one
        # flat gather maps every attribute at once (``_keys``).
        self._offsets = np.arange(nq, dtype=np.int64) * widest
        # Classes are keyed in one layout for every node, a bit field per attribute wide enough
        # for its widest level: a node's keys are its source's keys with, per attribute whose
        # level differs, that attribute's field moved up (``_moved``; a level's value
        # determines the value of every level above it, as validated hierarchies nest). When
        # the fields do not fit one int64, each class keeps representative original codes
        # instead (``_keys``).
        self._bits = np.array([max(int(c) - 1, 0).bit_length() for c in self._level_cards.max(axis=1)], dtype=np.int64)
        self._shift = np.concatenate([np.cumsum(self._bits[::-1])[::-1][1:], [0]]).astype(np.int64)
        self._carried_space = 1
        for card in self.carried_cards:
            self._carried_space *= card
        self._steps: dict[tuple[int, int, int], np.ndarray] = {}
        self.fits_one_key = int(self._bits.sum()) + max(self._carried_space - 1, 0).bit_length() < 62
        key = rep = None
        if self.fits_one_key:
            key = sum(self.codes[:, a] << self._shift[a] for a in range(nq))  # level 0: the codes
        else:
            rep = np.ascontiguousarray(self.codes.T + self._offsets[:, None])
        stacked = np.vstack(carried) if carried else np.zeros((0, len(first)), dtype=np.int64)
        self._tables = [
            ClassTable(bottom, key, rep, np.ascontiguousarray(stacked), self.weights, members=np.arange(len(first)))
        ]
        # To find the cached tables under a node at once, each table's levels are also packed
        # into one integer, a field per attribute with a guard bit on top: a table lies under
        # a node iff subtracting its fields from the node's (guards set) clears no guard
        # (``_source``; None when the fields would not fit one int64).
        widths = [max(h - 1, 0).bit_length() + 1 for h in self.heights]
        self._level_shifts = [sum(widths[:a]) for a in range(len(widths))]
        self._guard = sum(1 << (s + w - 1) for s, w in zip(self._level_shifts, widths)) if sum(widths) < 63 else None
        self._table_levels = np.zeros((nq, CACHE_TABLES), dtype=np.int16)  # one row per attribute
        self._table_packed = np.zeros(CACHE_TABLES, dtype=np.int64)
        self._table_rows = np.full(CACHE_TABLES, _NEVER, dtype=np.int64)
        self._table_rows[0] = len(first)
        self._status: dict[tuple[int, ...], tuple[bool, int, float | None]] = {}
        self._rows: dict[tuple[int, ...], tuple[int, int]] = {}  # the paper's (violations, rows)
        self._kept: dict[tuple[int, ...], ClassTable] = {}  # the cached tables but the bottom, by levels
        # Generalizations of the nodes counted acceptable, one axis per attribute (for ``acceptable``).
        self._above_accepted = np.zeros(self.heights, dtype=bool) if self.size <= MAX_NODES else None
        # what one node's history check costs (the bottom enumerates the most), None when no
        # node compares sub-multisets of histories (``check_history_search`` prices the search)
        self.history_work: WorkEstimate | None = None
        if self.linked and self.power is not None and self.power > 1:
            ids, n = combine(list(self.codes.T), [int(c) for c in self.encoded.cardinalities[:nq]], ordered=False)
            for owner in self.linked:
                codes = stacked[len(self.sensitive) + owners.index(owner)]
                pairs = owner_pairs(ids, n, codes, self.owner_counts[owner], self.weights)
                work = check_history_work(pairs.sizes, pairs.lengths, power=self.power)
                if self.history_work is None or work.seconds > self.history_work.seconds:
                    self.history_work = work

    # ------------------------------------------------------------------ the target

    @property
    def monotone(self) -> bool:
        """Whether the target is monotone: every generalization of an acceptable node is
        acceptable (so every specialization of a failing one fails). True for k, also with a
        suppression limit (a class of k records stays one); with privacy models as
        ``anonlib.measures.models.requirements_monotone`` says (δ-disclosure never; with a
        suppression limit, distinct l only).

        >>> from anonlib.core.hierarchy import flat_hierarchy
        >>> GeneralizationSpace(pd.DataFrame({"a": [1, 2]}), ["a"], {"a": flat_hierarchy([1, 2])}, target=ReleaseTarget(2)).monotone
        True
        """
        if self.person is not None:  # people suppressed again and again: shown monotone for k alone
            return not self.requirements
        return requirements_monotone(self.requirements, self.max_suppressed)

    @property
    def zero_monotone(self) -> bool:
        """A generalization of a node where nothing fails has nothing failing either."""
        if self.person is not None:
            return not self.requirements
        return requirements_monotone(self.requirements, 0.0)

    @property
    def limited(self) -> bool:
        """Whether records may be suppressed (a suppression limit above 0)."""
        return self.max_suppressed > 0

    def check_levels(self, levels: Sequence[int]) -> tuple[int, ...]:
        """``levels`` as a tuple of ints, or a ``ParameterError`` if they do not fit the hierarchies.

        >>> from anonlib.core.hierarchy import flat_hierarchy
        >>> GeneralizationSpace(pd.DataFrame({"a": [1, 2]}), ["a"], {"a": flat_hierarchy([1, 2])}, target=ReleaseTarget(2)).check_levels([1.0])
        (1,)
        """
        levels = tuple(int(v) for v in levels)
        if len(levels) != len(self.qis) or any(not 0 <= v <= m for v, m in zip(levels, self.max_levels)):
            raise ParameterError(
                f"Levels {levels} do not fit the hierarchies of {join_names(self.qis)} "
                f"(highest levels {self.max_levels})."
            )
        return levels

    def children(self, levels: tuple[int, ...]) -> list[tuple[int, tuple[int, ...]]]:
        """(attribute index, levels) of the nodes one generalization step above.

        >>> from anonlib.core.hierarchy import flat_hierarchy
        >>> space = GeneralizationSpace(pd.DataFrame({"a": [1, 2]}), ["a"], {"a": flat_hierarchy([1, 2])}, target=ReleaseTarget(2))
        >>> space.children((0,)), space.children((1,))
        ([(0, (1,))], [])
        """
        return [
            (i, levels[:i] + (levels[i] + 1,) + levels[i + 1 :])
            for i in range(len(levels))
            if levels[i] < self.max_levels[i]
        ]

    def bound(self, levels: Sequence[int]) -> float:
        """The cost of ``levels`` if nothing were suppressed: a lower bound of its cost."""
        if self.measure not in CELL_MEASURES:
            return 0.0
        return float(sum(t[level] for t, level in zip(self.level_totals, levels))) / self.scale

    def status(
        self, levels: Sequence[int], *, cost: bool = True, source: ClassTable | None = None
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
        if self.person is None:
            failed = self._failed(table, sizes, row_class)
            suppressed = int(np.dot(sizes, failed))  # exact: integer sizes, no float on the way
            acceptable = within_limit(suppressed, self.records, self.max_suppressed)
            if acceptable and suppressed and self._global:
                acceptable = self._release_meets(table, sizes, row_class, failed)
            out = (failed if row_class is None else failed[row_class]) if acceptable and cost else None
        else:
            out, people = self._people_out(table, sizes, row_class)
            failed = np.zeros(len(sizes), dtype=bool)
            failed[row_class[out]] = True  # the classes that lost records (the paper's violations)
            suppressed = int(table.weights[out].sum())
            acceptable = people is not None and within_limit(people, self.n_persons, self.max_suppressed)
        value = self._cost(levels, table, sizes, row_class, out, suppressed) if acceptable and cost else None
        self._status[levels] = (acceptable, suppressed, value)
        if self._others is not None and levels not in self._rows:
            self._rows[levels] = self._paper_counts(table, row_class, failed)
        if acceptable and known is None and self._above_accepted is not None:
            self._above_accepted[tuple(slice(level, None) for level in levels)] = True
        return self._status[levels]

    def _failed(self, table: ClassTable, sizes: np.ndarray, row_class: np.ndarray | None) -> np.ndarray:
        """Per class, whether it fails k or a privacy model (a class of no records, from a count
        column's zeros, suppresses nothing either way): ``anonlib.measures.models.classes_failing``."""
        failed = sizes < self.k
        if self.requirements:
            groups = Classes(ids=row_class, sizes=sizes, rows_per_class=np.ones(len(sizes), dtype=np.int64))
            counts = {
                s: counts_from_codes(groups, table.carried[i], n_values, labels, weights=table.weights, numeric=numeric)
                for i, (s, (n_values, labels, numeric)) in enumerate(zip(self.sensitive, self.sensitive_info))
            }
            failed |= classes_failing(sizes, self.k, self.requirements, counts, self.hierarchy_levels)[0]
        return failed

    def _owners(self, table: ClassTable) -> Owners:
        """The owners of ``table``'s rows (its carried owner columns) and the rule they are judged by."""
        carried = dict(zip(self.owner_columns, table.carried[len(self.sensitive) :]))
        linked = tuple((carried[c], self.owner_counts[c]) for c in self.linked)
        n = self.owner_counts[self.person]
        if self._earlier is None:
            return Owners(carried[self.person], n, linked, self.power, self.n_persons)
        ids, n_earlier, weights, codes = self._earlier
        kinds = tuple(codes[c] for c in self.linked)
        return Owners(
            carried[self.person],
            n,
            linked,
            self.power,
            self.n_persons,
            ids,
            n_earlier,
            weights,
            codes[self.person],
            kinds,
        )

    def _people_out(self, table: ClassTable, sizes: np.ndarray, row_class: np.ndarray) -> tuple[np.ndarray, int | None]:
        """Per table row, whether its person (household) is suppressed, and how many are (None when a
        privacy model cannot be judged on what is left): a class fails when it holds fewer than k
        people, or an owner when its history is shared by fewer than k (``Owners.short_rows``), or a
        class fails a model on its records; every person with a failing record is suppressed with all
        their records; the rule is applied again to what is left until nothing fails (removing a
        person's other records can leave another class, or a containing history, short)."""
        owners = self._owners(table)
        person = owners.codes
        n_classes = len(sizes)
        out = np.zeros(table.rows, dtype=bool)
        alive = np.arange(table.rows)  # a row of no records stays, naming no one (``Owners``)
        while alive.size:
            cls, who, weights = row_class[alive], person[alive], table.weights[alive]
            fails = owners.short_rows(cls, n_classes, weights, self.k, alive)
            if self.requirements:
                records = np.bincount(cls, weights=weights, minlength=n_classes).astype(np.int64)
                groups = Classes(ids=cls, sizes=records, rows_per_class=np.ones(n_classes, dtype=np.int64))
                counts = {
                    s: counts_from_codes(
                        groups, table.carried[i][alive], n_values, labels, weights=weights, numeric=numeric
                    )
                    for i, (s, (n_values, labels, numeric)) in enumerate(zip(self.sensitive, self.sensitive_info))
                }
                try:
                    fails |= classes_failing(records, 1, self.requirements, counts, self.hierarchy_levels)[0][cls]
                except ParameterError:  # e.g. t-closeness on what is left with one sensitive value
                    return out, None
            if not fails.any():
                break
            gone = np.zeros(owners.n, dtype=bool)
            gone[who[fails]] = True
            leaving = alive[gone[who]]
            out[leaving] = True
            alive = alive[~gone[who]]
        if owners.stuck(row_class[alive], n_classes, table.weights[alive], self.k, alive):
            return out, None  # an earlier delivery's person fails whatever this one releases
        people = np.zeros(owners.n, dtype=bool)
        people[person[out]] = True
        return out, int(people.sum())

    def suppressed_in_unit(self, levels: Sequence[int]) -> int:
        """What meeting the target at ``levels`` suppresses, in the target's unit: people with a
        person column (all of them when a privacy model cannot be judged on what is left), else
        records.

        >>> from anonlib.core.hierarchy import flat_hierarchy
        >>> df = pd.DataFrame({"a": [1, 1, 2, 2, 3], "pid": ["p", "q", "p", "q", "r"]})
        >>> h = {"a": flat_hierarchy([1, 2, 3])}
        >>> space = GeneralizationSpace(df, ["a"], h, target=ReleaseTarget(2, person="pid"))
        >>> space.suppressed_in_unit((0,)), space.status((0,), cost=False)[1]
        (1, 1)
        """
        levels = self.check_levels(levels)
        if self.person is None:
            return int(self.status(levels, cost=False)[1])
        table, sizes, row_class = self.classes(levels)
        _, people = self._people_out(table, sizes, row_class)
        return self.n_persons if people is None else int(people)

    def known_acceptable(self, levels: tuple[int, ...]) -> bool:
        """Whether a node counted acceptable lies under ``levels`` (so it is acceptable, for a
        monotone target), or ``levels`` itself was."""
        return self._above_accepted is not None and bool(self._above_accepted[levels])

    def counted(self, levels: tuple[int, ...]) -> bool:
        """Whether ``levels`` was counted."""
        return levels in self._status

    def acceptable(self, levels: tuple[int, ...], source: ClassTable | None = None) -> bool:
        """Whether the node meets the target, for a monotone target: without counting when
        a node already counted acceptable lies below it (its generalization is acceptable too);
        counted from ``source`` when given (``classes``)."""
        return self.known_acceptable(tuple(levels)) or self.status(levels, cost=False, source=source)[0]

    def row_status(self, levels: Sequence[int]) -> tuple[int, int, int]:
        """The paper's counts of a node (``rows=True``): (violations: distinct rows in classes
        failing k or a model, rows: distinct rows of the generalized table over every column but
        the count, records suppressed).

        >>> from anonlib.measures.models import ModelRequirement
        >>> from anonlib.core.hierarchy import flat_hierarchy
        >>> df = pd.DataFrame({"a": [1, 1, 2, 2], "dx": ["x", "y", "x", "x"]})
        >>> target = ReleaseTarget(2, requirements=[ModelRequirement("distinct_l", "dx", 2)])
        >>> space = GeneralizationSpace(df, ["a"], {"a": flat_hierarchy([1, 2])}, target=target, rows=True)
        >>> space.row_status((0,)), space.row_status((1,))
        ((1, 3, 2), (0, 2, 0))
        """
        levels = self.check_levels(levels)
        _, suppressed, _ = self.status(levels, cost=False)
        if levels not in self._rows:
            self._other_codes()
            table, sizes, row_class = self.classes(levels)
            self._rows[levels] = self._paper_counts(table, row_class, self._failed(table, sizes, row_class))
        violations, rows = self._rows[levels]
        return violations, rows, suppressed

    def _other_codes(self) -> tuple[np.ndarray, int]:
        """The columns but the quasi-identifiers and the count, folded into one code per input row."""
        if self._others is None:
            others = [c for c in self.columns if c not in self.qis]
            if others:
                table = encode(self.frame, others, unordered=others)
                self._others = combine(list(table.codes.T), list(table.cardinalities), table.n_rows, ordered=False)
            else:
                self._others = (np.zeros(len(self.frame), dtype=np.int64), 1)
        return self._others

    def _row_ids(self, table: ClassTable, row_class: np.ndarray | None) -> tuple[np.ndarray, int, np.ndarray]:
        """Per input row, its distinct row of the generalized table (class at the node and the
        other columns), the number of distinct rows, and each input row's class."""
        per_distinct = table.members if row_class is None else row_class[table.members]
        classes = per_distinct[self.record_rows]
        codes, n_codes = self._other_codes()
        n_classes = table.rows if row_class is None else int(row_class.max()) + 1 if len(row_class) else 0
        ids, n = combine([classes, codes], [max(n_classes, 1), n_codes], len(classes), ordered=False)
        return ids, n, classes

    def _paper_counts(self, table: ClassTable, row_class: np.ndarray | None, failed: np.ndarray) -> tuple[int, int]:
        """(violations, rows): the distinct rows of the generalized table in failing classes, and all of them."""
        ids, n, classes = self._row_ids(table, row_class)
        if n == 0:
            return 0, 0
        first = Classes.from_ids(ids, n).first_rows
        return int(np.count_nonzero(failed[classes[first]])), int(n)

    def node(self, levels: tuple[int, ...], parent: int | None = None, attribute: str | None = None) -> SearchNode:
        """The paper's search-tree node of a level vector (``rows=True``).

        >>> from anonlib.core.hierarchy import flat_hierarchy
        >>> space = GeneralizationSpace(pd.DataFrame({"a": [1, 2, 2]}), ["a"], {"a": flat_hierarchy([1, 2])}, target=ReleaseTarget(2), rows=True)
        >>> space.node((0,)).label
        'T(1, 2)'
        """
        violations, rows, suppressed = self.row_status(levels)
        acceptable = self.status(levels, cost=False)[0] if self.limited else None
        return SearchNode(tuple(levels), violations, rows, parent, attribute, suppressed, acceptable)

    def evaluate(self, levels: Sequence[int]) -> tuple[int, int]:
        """(violations, rows) of the table generalized to ``levels`` (``row_status``).

        >>> from anonlib.core.hierarchy import flat_hierarchy
        >>> space = GeneralizationSpace(pd.DataFrame({"a": [1, 2, 2]}), ["a"], {"a": flat_hierarchy([1, 2])}, target=ReleaseTarget(2), rows=True)
        >>> space.evaluate((0,)), space.evaluate((1,))
        ((1, 2), (0, 1))
        """
        return self.row_status(levels)[:2]

    def _release_meets(
        self, table: ClassTable, sizes: np.ndarray, row_class: np.ndarray | None, failed: np.ndarray
    ) -> bool:
        """Whether the released records (failing classes suppressed) meet the models measured
        on themselves: t-closeness, δ-disclosure and β-likeness compare each class with the
        table's distribution, which suppression changes, and a release is measured as written."""
        kept_sizes = np.where(failed, 0, sizes)
        rows = ~failed if row_class is None else ~failed[row_class]
        for i, s in enumerate(self.sensitive):  # as ``acceptance`` reads the file: t needs two values left
            if (
                any(r.model == "t_closeness" and r.sensitive == s for r in self.requirements)
                and np.unique(table.carried[i][rows & (table.weights > 0)]).size < 2
            ):
                return False
        ids = np.flatnonzero(rows) if row_class is None else row_class[rows]
        groups = Classes(ids=ids, sizes=kept_sizes, rows_per_class=np.ones(len(sizes), dtype=np.int64))
        counts, labels_left = {}, {}
        for i, (s, (_, labels, numeric)) in enumerate(zip(self.sensitive, self.sensitive_info)):
            # the released table's own values: an ordered distance spans the values it still holds
            codes = table.carried[i][rows]
            present = np.unique(codes)
            labels_left[s] = labels[present]
            counts[s] = counts_from_codes(
                groups,
                np.searchsorted(present, codes),
                len(present),
                labels_left[s],
                weights=table.weights[rows],
                numeric=numeric,
            )
        levels = [
            None if r.hierarchy is None else hierarchy_levels(r.hierarchy, labels_left[r.sensitive], r.sensitive)
            for r in self.requirements
        ]
        try:
            again, _ = classes_failing(kept_sizes, self.k, self.requirements, counts, levels)
        except ParameterError:  # e.g. t-closeness on a release left with one sensitive value
            return False
        return not again.any()

    def _cost(
        self,
        levels,
        table: ClassTable,
        sizes: np.ndarray,
        row_class: np.ndarray | None,
        out: np.ndarray,
        suppressed: int,
    ) -> float:
        """The node's cost in the space's measure, ``out`` marking the table rows suppressed."""
        if self.measure is None:
            return 0.0
        if self.measure in CELL_MEASURES:
            value = sum(float(t[level]) for t, level in zip(self.level_totals, levels))
            if suppressed:
                gone = np.flatnonzero(out[table.members])  # distinct original rows
                codes = self.codes[gone]
                paid = sum(
                    self.full_cost[a][codes[:, a]] - self.cell_cost[a][levels[a]][codes[:, a]]
                    for a in range(len(self.qis))
                )
                value += math.fsum((self.weights[gone] * paid).tolist())  # they pay in full (summed exactly, as above)
            return value / self.scale
        cls = np.arange(table.rows) if row_class is None else row_class
        kept = np.bincount(cls[~out], weights=table.weights[~out], minlength=len(sizes)).astype(np.int64)
        kept = kept[kept > 0]
        if self.measure == "discernibility":
            return float(sum(int(s) * int(s) for s in kept) + suppressed * self.records)
        classes = len(kept) + (1 if suppressed else 0)
        return self.records / classes if classes else 0.0

    # ------------------------------------------------------------------ class tables

    def _source(self, levels: tuple[int, ...]) -> ClassTable:
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

    def source_table(self, levels: tuple[int, ...]) -> ClassTable:
        """The table a count of ``levels`` would roll up from (``_source``), to pass on to
        ``status`` for a node above it (its ``levels`` say which)."""
        return self._source(tuple(map(int, levels)))

    def kept_table(self, levels: tuple[int, ...]) -> ClassTable | None:
        """The cached class table of ``levels``, if it is kept for rolling up (``_keep``)."""
        return self._kept.get(levels)

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

    def _moved(self, source: ClassTable, levels: tuple[int, ...]) -> np.ndarray:
        """The keys of ``source``'s classes at ``levels`` (a specialization's classes,
        keyed at its own levels, with the fields of the attributes that differ moved up)."""
        key = source.key
        for a, (was, now) in enumerate(zip(source.levels, levels)):
            if was != now:
                field = (key >> self._shift[a]) & ((1 << int(self._bits[a])) - 1)
                key = key + self._step(a, was, now).take(field)
        return key

    def classes(
        self, levels: tuple[int, ...], source: ClassTable | None = None
    ) -> tuple[ClassTable, np.ndarray, np.ndarray | None]:
        """The node's class table, the records of each class on the quasi-identifiers, and
        each table row's class (None when the rows are the classes: nothing carried).
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
            for codes, card in zip(source.carried, self.carried_cards):
                key, space = key * card + codes, space * card
            ids, n = combine([key], [space], source.rows, ordered=False)
            merged = Classes.from_ids(ids, n, source.weights)
            first = merged.first_rows
            table = ClassTable(levels, None, source.rep[:, first], source.carried[:, first], merged.sizes, source, ids)
        else:  # the source's keys moved up, grouped by one hash pass
            key = self._moved(source, levels)
            for codes, card in zip(source.carried, self.carried_cards):
                key = key * card + codes
            ids, keys = distinct_keys(key)
            weights = np.bincount(ids, weights=source.weights, minlength=len(keys)).astype(np.int64)  # exact
            if len(self.carried_cards):
                first = Classes.from_ids(ids, len(keys)).first_rows
                table = ClassTable(
                    levels, keys // self._carried_space, None, source.carried[:, first], weights, source, ids
                )
            else:
                table = ClassTable(levels, keys, None, source.carried[:, : len(keys)], weights, source, ids)
        if self.rollup and table.rows < source.rows:
            self._keep(table)
        if not len(self.carried_cards):
            return table, table.weights, None
        qkey, qspace = (
            self._keys(np.asarray(levels), table.rep) if table.key is None else (table.key, 1 << int(self._bits.sum()))
        )
        gids, gn = combine([qkey], [qspace], table.rows, ordered=False)
        return table, Classes.from_ids(gids, gn, table.weights).sizes, gids

    def _keep(self, table: ClassTable) -> None:
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

    # ------------------------------------------------------------------ the released table

    def generalized(self, levels: Sequence[int], *, categorical: bool = False) -> pd.DataFrame:
        """The input table with every quasi-identifier raised to its level (one row per input
        row, its index kept), each column written by ``anonlib.core.hierarchy.generalized_values``
        (``categorical``: as categorical columns, the level's labels their categories).

        >>> from anonlib.core.hierarchy import flat_hierarchy
        >>> space = GeneralizationSpace(pd.DataFrame({"a": ["x", None]}), ["a"], {"a": flat_hierarchy(["x"])}, target=ReleaseTarget(2))
        >>> space.generalized((1,))["a"].tolist()
        ['*', '*']
        """
        levels = self.check_levels(levels)
        out = self.frame.copy()
        for j, (attribute, level) in enumerate(zip(self.qis, levels)):
            if level > 0:
                codes = self.encoded.codes[:, j]
                out[attribute] = generalized_values(
                    self.frame[attribute],
                    self.lookups[j][level][codes],
                    self.level_labels[j][level],
                    categorical=categorical,
                )
        return out

    def baseline(self) -> Baseline:
        """The input table as ``anonlib.measures.utility`` measures a release against it, from this
        space's own encoding and cell costs (the input's cells are read once, here).

        >>> from anonlib.core.hierarchy import flat_hierarchy
        >>> space = GeneralizationSpace(pd.DataFrame({"a": ["x", "y"]}), ["a"], {"a": flat_hierarchy(["x", "y"])}, target=ReleaseTarget(1))
        >>> space.baseline().value(space.generalized((1,)), "loss")
        1.0
        """
        nq = len(self.qis)
        weights = self.encoded.weights if self.encoded.weights is not None else np.ones(len(self.frame), dtype=np.int64)
        return Baseline(
            index=self.frame.index,
            quasi_identifiers=self.qis,
            codes=np.ascontiguousarray(self.encoded.codes[:, :nq].T),
            labels=tuple(self.encoded.labels[:nq]),
            missing=np.vstack([self.frame[q].isna().to_numpy() for q in self.qis]),
            weights=weights,
            costs={self.measure: tuple(self.costs)} if self.costs else {},
        )

    def failing_records(self, levels: Sequence[int]) -> np.ndarray:
        """Per input row, whether its records are in a class failing k or a privacy model at
        ``levels``: the records a release at this node suppresses.

        >>> from anonlib.core.hierarchy import flat_hierarchy
        >>> space = GeneralizationSpace(pd.DataFrame({"a": ["x", "y", "y"]}), ["a"], {"a": flat_hierarchy(["x", "y"])}, target=ReleaseTarget(2))
        >>> space.failing_records((0,)).tolist(), space.failing_records((1,)).tolist()
        ([True, False, False], [False, False, False])
        """
        levels = self.check_levels(levels)
        table, sizes, row_class = self.classes(levels)
        if self.person is not None:
            return self._people_out(table, sizes, row_class)[0][table.members][self.record_rows]
        failed = self._failed(table, sizes, row_class) & (sizes > 0)  # a class of no records loses nothing
        per_row = failed if row_class is None else failed[row_class]
        return per_row[table.members][self.record_rows]

    def table(self, levels: Sequence[int]) -> pd.DataFrame:
        """The generalized table as the paper prints it: with a count column, identical rows
        merged and their counts added (the paper's Table 5); without, one row per input row.

        >>> from anonlib.core.hierarchy import flat_hierarchy
        >>> df = pd.DataFrame({"a": [1, 2], "n": [2, 3]})
        >>> GeneralizationSpace(df, ["a"], {"a": flat_hierarchy([1, 2])}, target=ReleaseTarget(5), count="n").table((1,)).values.tolist()
        [['*', 5]]
        """
        levels = self.check_levels(levels)
        out = self.generalized(levels)
        if self.count is None or out.empty:
            return out
        table, _, row_class = self.classes(levels)
        ids, n, _ = self._row_ids(table, row_class)
        merged_rows = Classes.from_ids(ids, n, self.encoded.weights)
        order = np.sort(merged_rows.first_rows)
        merged = out.iloc[order].reset_index(drop=True)
        merged[self.count] = merged_rows.sizes[ids[order]]
        return merged
