"""The optimal search in people and histories with every node counted by the engine.

``engine_search.anonymize`` brings the class table into memory: one row per owner and distinct
row, so 10^8 rows for a panel of 10^8 records. When that table would pass ``MAX_CLASSES``, the
search runs here instead, for the targets the engine counts node by node (``supported``): k in
people, or on histories, whole (power all) or any m of their records (power m up to
``owners.MAX_POWER``; power 1 is k in people), no privacy model, no earlier delivery, the optimal
search.

- **What comes back** is the distinct rows of the quasi-identifiers with their records
  (``anonlib.engine.owners_out.owner_rows``: at most the product of the values' counts, 54,000 on
  the spec's panel), on which ``EnginePeopleSpace`` (a ``GeneralizationSpace`` counting records)
  builds the lattice, the hierarchies' lookups and the cells' costs exactly as in memory.
- **Each node** the optimal walk counts (``EnginePeopleSpace.status``) maps those rows to their
  classes in memory and hands the engine that small table; ``owners_out`` answers the owners and
  records suppressed whole and, for a node that meets the target, the records kept per row and
  the suppressed (row, records) pairs, from which the node's cost is the kernel's: a suppressed
  pair pays its records times its row's full cost, summed exactly.
- **The result** (``people_search``): the walk's node and its counts, the people searched and
  released, k in the target's unit among the people kept and the distinct rows of the searched
  records, all counted by the engine; what is written is then measured as written
  (``engine_search``).

Example:
    >>> import pandas as pd
    >>> from anonlib.core.hierarchy import flat_hierarchy
    >>> from anonlib.engine import connect, from_frame
    >>> df = pd.DataFrame({"pid": list("aabbccdd"), "age": [30, 31, 30, 31, 30, 32, 30, 32]})
    >>> target = ReleaseTarget(2, person="pid", linked=("pid",))
    >>> with connect("duckdb") as duck:
    ...     found = people_search(from_frame(df, duck), ["age"], {"age": flat_hierarchy([30, 31, 32])}, target)
    >>> found.result.levels, found.persons, found.released_persons, found.k
    ({'age': 0}, 4, 4, 2)
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from ..engine import WEIGHT, EngineTable
from ..engine.owners import MAX_POWER, SEARCH_COUNTS, check_power, owner_pairs, release
from ..engine.owners_out import Finer, OwnersOut, owner_rows, owners_in, owners_out, rows_in_classes
from ..measures.models import within_limit
from ..measures.target import ReleaseTarget
from ..measures.utility import CELL_MEASURES, measure_value
from ..transformations.generalization import SearchResult
from ..transformations.generalization.optimal import OptimalLevels, optimal_levels
from ..transformations.generalization.space import GeneralizationSpace, SearchNode


def supported(target: ReleaseTarget, method: str) -> bool:
    """Whether the engine counts this search node by node: the optimal search of k in people, or
    on histories (whole, or any m of their records up to ``MAX_POWER``), of the person column,
    with no privacy model and no earlier delivery."""
    if method != "optimal" or target.requirements or target.earlier is not None or target.person is None:
        return False
    if target.unit == "people":
        return True
    if target.unit != "histories" or tuple(target.linked) != (target.person,):
        return False
    return target.power is None or target.power <= MAX_POWER


class EnginePeopleSpace(GeneralizationSpace):
    """The lattice of ``shield`` over the distinct rows ``rows`` (``owner_rows``), each node's
    people counted by the engine (the module text). A ``GeneralizationSpace`` in records for
    everything else: lookups, bounds, costs, the walk's caches."""

    def __init__(
        self,
        table: EngineTable,
        rows: pd.DataFrame,
        shield: Sequence[str],
        hierarchies: Mapping[str, pd.DataFrame],
        *,
        target: ReleaseTarget,
        measure: str | None,
        persons: int,
        verify: bool | None = None,
        exact_root: bool = False,
    ) -> None:
        in_records = ReleaseTarget(k=target.k, max_suppressed=target.max_suppressed)
        super().__init__(rows[[*shield, WEIGHT]], shield, hierarchies, target=in_records, count=WEIGHT, measure=measure)
        self.target = target
        self.person = target.person
        self.n_persons = persons
        self.table = table
        self.rows = rows
        self.histories = target.unit == "histories" and target.power != 1
        self.power = target.power if self.histories else None
        # Whole histories grouped by their hashes alone at each node (``owners_out(verify=False)``):
        # a count that is a lower bound, and a cell measure's cost too (a suppressed record pays
        # more than one kept), so the walk searches a relaxation of the target whose optimum, once
        # counted exactly and found the same (``people_search``), is the target's. Discernibility
        # and average class size are not lower for fewer records suppressed: each node verified.
        relaxed = self.histories and self.power is None and (measure is None or measure in CELL_MEASURES)
        self.verify = not relaxed if verify is None else verify
        # the bottom counted to the last owner when the walk reaches it, not stopped at a bound: the
        # result's tree is read (``_Root``), and it would be counted again
        self.exact_root = exact_root
        self.out: dict[tuple[int, ...], OwnersOut] = {}  # each node counted: what it suppresses
        self.finer = Finer(table)  # the last node's (owner, class) pairs, grouped from by a node above it
        self.on_engine: list = []  # the owners of each acceptable node counted, left on the engine (``failing``)

    def failing(self, levels: tuple[int, ...] | None):
        """The owners the node at ``levels`` suppresses, left on the engine when it was counted
        (``OwnersOut.failing``; None when it suppresses nobody); every other node's dropped."""
        chosen = self.out[levels].failing if levels is not None and self.out[levels].owners else None
        release(self.table, *(t for t in self.on_engine if t is not None and t is not chosen))
        self.on_engine = [chosen] if chosen is not None else []
        return chosen

    def row_classes(self, levels: Sequence[int], source=None) -> np.ndarray:
        """Each row of ``rows``: its class at ``levels`` (the kernel's class table, rolled up)."""
        table, _, row_class = self.classes(tuple(map(int, levels)), source)
        per_distinct = table.members if row_class is None else row_class[table.members]
        return per_distinct[self.record_rows]

    def status(self, levels: Sequence[int], *, cost: bool = True, source=None) -> tuple[bool, int, float | None]:
        """(acceptable, records suppressed, cost) of the node, its owners counted by the engine."""
        levels = tuple(map(int, levels))
        known = self._status.get(levels)
        if known is not None and (known[2] is not None or not cost or not known[0]):
            return known
        self.checked += known is None
        classes = self.row_classes(levels, source)

        meets = self.within_limit
        # an acceptable node is costed at once (the walk prices most it finds acceptable; counting
        # the node again for it would cost a node); a failing one stops where its count fails it, but
        # the bottom of a tree that will be read
        root = self.exact_root and not any(levels)
        out = owners_out(
            self.table,
            self.qis,
            self.person,
            self.rows,
            classes,
            self.k,
            histories=self.histories,
            power=self.power,
            cost=True if root else meets,
            enough=None if root else lambda owners: not meets(owners),
            finer=self.finer,
            verify=root or self.verify,  # an exact count is a lower bound too, for a walk on hashes
            keep=meets,  # an acceptable node's owners left on the engine: the release may suppress them
        )
        acceptable = meets(out.owners)
        value = self._engine_cost(levels, classes, out) if acceptable else None
        self.out[levels] = out
        self.on_engine.append(out.failing)
        self._status[levels] = (acceptable, out.records, value)
        if acceptable and known is None and self._above_accepted is not None:
            self._above_accepted[tuple(slice(level, None) for level in levels)] = True
        return self._status[levels]

    def within_limit(self, owners: int) -> bool:
        """Whether suppressing ``owners`` of the people stays within the target's limit."""
        return within_limit(owners, self.n_persons, self.max_suppressed)

    def suppressed_in_unit(self, levels: Sequence[int]) -> int:
        """The people meeting the target at ``levels`` suppresses (counted to the last one, also
        where the search stopped at a bound that failed the node)."""
        levels = self.check_levels(levels)
        self.status(levels, cost=False)
        return self.exact_out(levels).owners

    def exact_out(self, levels: tuple[int, ...], keep: bool = False) -> OwnersOut:
        """The node's count made exact where the walk's was a bound or not verified (the node counted
        first); ``keep``: its owners left on the engine when it is acceptable (``failing``)."""
        out = self.out[levels]
        if not (out.exact and out.verified):
            self.out[levels] = out = self._exact(levels, keep)
            self.on_engine.append(out.failing)
        return out

    def _exact(self, levels: tuple[int, ...], keep: bool = False) -> OwnersOut:
        """The node's owners counted to the last one, with its cost (``owners_out`` with no bound)."""
        return owners_out(
            self.table, self.qis, self.person, self.rows, self.row_classes(levels), self.k,
            histories=self.histories, power=self.power, keep=self.within_limit if keep else False,
        )  # fmt: skip

    def _engine_cost(self, levels: tuple[int, ...], classes: np.ndarray, out: OwnersOut) -> float:
        """The node's cost as ``GeneralizationSpace._cost`` prices it on the owners' rows: a cell
        measure's level totals plus, per suppressed (row, records) pair, its records times its row's
        full cost less its cost at the node (summed exactly, as ``math.fsum`` sums the kernel's);
        else the classes of the records kept."""
        if self.measure is None:
            return 0.0
        if self.measure in CELL_MEASURES:
            value = sum(float(t[level]) for t, level in zip(self.level_totals, levels))
            if out.records:
                codes = self.codes[self.record_rows[out.paid[:, 0]]]
                paid = sum(
                    self.full_cost[a][codes[:, a]] - self.cell_cost[a][levels[a]][codes[:, a]]
                    for a in range(len(self.qis))
                )
                each = out.paid[:, 1] * paid  # one pair's cost, as the kernel multiplies it
                value += float(sum(Fraction(float(x)) * int(c) for x, c in zip(each, out.paid[:, 2])))
            return value / self.scale
        kept = np.bincount(classes, weights=out.kept).astype(np.int64)
        kept = kept[kept > 0]
        if self.measure == "discernibility":
            return float(sum(int(s) * int(s) for s in kept) + out.records * self.records)
        n = len(kept) + (1 if out.records else 0)
        return self.records / n if n else 0.0


@dataclass(frozen=True, eq=False)
class _Root:
    """The search's tree as the optimal search gives it when read: its root counted the paper's way
    (the distinct rows of the records, and those of the classes that lost records at the bottom),
    by the engine."""

    space: EnginePeopleSpace
    others: tuple[str, ...]

    def __call__(self) -> tuple[SearchNode, ...]:
        space = self.space
        bottom = tuple(0 for _ in space.qis)
        space.status(bottom, cost=False)
        # a failing node perhaps counted to a bound only, an acceptable one perhaps not verified
        out = space.exact_out(bottom)
        acceptable = space.within_limit(out.owners)
        suppressed = out.records
        lost = np.zeros(len(space.rows), dtype=bool)
        lost[out.paid[:, 0]] = True  # at the bottom each row is its own class
        count = (space.table, space.qis, space.person, space.rows)
        violations, every = rows_in_classes(*count, lost, self.others)
        return (SearchNode(bottom, violations, every, None, None, suppressed, acceptable),)


def _walk(space: EnginePeopleSpace, rows, shield, target, measure, time_limit) -> OptimalLevels:
    """The optimal walk over ``space``, its node counted (the kept (owner, class) pairs dropped after)."""
    try:
        found = optimal_levels(
            rows, shield, space.hierarchies, target=target, measure=measure, time_limit=time_limit, lattice=space
        )
        space.status(found.levels)
    finally:
        space.finer.close()
    return found


@dataclass(frozen=True)
class PeopleSearch:
    """The engine's search in people (``people_search``): the ``result`` (levels, counts, the
    utility of the records kept), the distinct rows of the quasi-identifiers searched (``rows``,
    with their records), the people searched and kept, and k among those kept in the target's
    unit, all counted by the engine; ``failing``, the owners the node suppresses, left on the engine
    for the release's step (None when it suppresses nobody)."""

    result: SearchResult
    rows: pd.DataFrame
    persons: int
    released_persons: int
    k: int
    failing: Any = field(default=None, compare=False)  # the node's owners suppressed, on the engine (``release`` it)


def people_search(
    table: EngineTable,
    shield: Sequence[str],
    hierarchies: Mapping[str, pd.DataFrame],
    target: ReleaseTarget,
    *,
    measure: str = "loss",
    time_limit: float | None = None,
    rows: pd.DataFrame | None = None,
    others: Sequence[str] = (),
    tree: bool = False,
) -> PeopleSearch:
    """The optimal generalization of ``shield`` meeting ``target`` in people or histories
    (``supported``), every node's owners counted by the engine (the module text). ``rows``: the
    ``owner_rows`` of the table, when already read; ``others``: the other columns released (the
    paper's rows of the root, counted when the result's tree is read); ``tree``: the tree will be
    read (its root counted exactly by the walk, which would otherwise stop it at a bound)."""
    start = time.perf_counter()
    shield = list(shield)
    rows = owner_rows(table, shield, target.person) if rows is None else rows
    persons = owners_in(table, shield, target.person)
    space = EnginePeopleSpace(
        table, rows, shield, hierarchies, target=target, measure=measure, persons=persons, exact_root=tree
    )
    if space.power is not None:  # a node's sub-multisets are at most the original rows': estimated once
        check_power(table, owner_pairs(table, shield, target.person)[0], space.power, counts=SEARCH_COUNTS)
    found = _walk(space, rows, shield, target, measure, time_limit)
    levels = found.levels
    if not space.verify:
        # the walk searched the histories' hashes: its node is counted exactly now (the (owner,
        # class) pairs grouped and each group verified). Every node's hashed count was a lower
        # bound, and so its cost: the same count here, and the node is the target's optimum, unless
        # two different histories hashing alike at another node misled the walk (about 2^-62 for a
        # pair of people, and only a merge that brings a group to k changes a count). Not the same
        # count: the walk again, every node verified.
        hashed = space.out[levels]
        out = space.exact_out(levels, keep=True)
        if (out.owners, out.records) != (hashed.owners, hashed.records):
            space.failing(None)
            space = EnginePeopleSpace(
                table, rows, shield, hierarchies, target=target, measure=measure, persons=persons, verify=True,
                exact_root=tree,
            )  # fmt: skip
            found = _walk(space, rows, shield, target, measure, time_limit)
            levels = found.levels
    out = space.out[levels]
    failing = space.failing(levels)
    # the utility of the records kept: each row's kept and suppressed records as rows of their own
    both = pd.concat(
        [rows[shield].assign(**{WEIGHT: out.kept}), rows[shield].assign(**{WEIGHT: rows[WEIGHT] - out.kept})]
    )
    both = both[both[WEIGHT] > 0].reset_index(drop=True)
    generalized = space.generalized(levels)
    kept_part = generalized.loc[out.kept > 0, shield].reset_index(drop=True)
    utility = measure_value(both, kept_part, shield, space.hierarchies, measure, count=WEIGHT)
    result = SearchResult(
        method="optimal",
        quasi_identifiers=space.qis,
        k=space.k,
        levels=dict(zip(space.qis, levels)),
        rows=int((out.kept > 0).sum()),
        violations=out.records,
        table=generalized.loc[out.kept > 0].assign(**{WEIGHT: out.kept[out.kept > 0]}).reset_index(drop=True),
        generated=found.checked,
        seconds=time.perf_counter() - start,
        nodes=_Root(space, tuple(others)),
        max_levels=dict(zip(space.qis, space.max_levels)),
        max_suppressed=space.max_suppressed,
        suppressed=out.records,
        measure=measure,
        utility=utility,
        optimal=found.optimal,
        checked=found.checked,
        lattice_size=found.lattice_size,
        bound=found.bound,
        released_k=out.smallest,
        person=target.person,
        persons=persons,
        suppressed_persons=out.owners,
        target=target,
    )
    return PeopleSearch(result, rows, persons, persons - out.owners, out.smallest, failing)
