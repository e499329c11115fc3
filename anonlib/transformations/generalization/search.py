"""``search``: the generalization of a table that meets a release target, by one of four methods.

``search(df, shield, k, hierarchies, method)`` walks one ``GeneralizationSpace`` (``space``)
with the method asked for and returns a ``SearchResult``:

- ``"optimal"`` (``optimal``, the default everywhere in the product): the generalization
  with the least information loss (``measure`` of ``anonlib.measures.utility``) that meets
  the target, proven, with ARX's record suppression; the released table is the records
  kept, and every number of the result is measured on it as written.
- ``"iab"``, ``"exhaustive"``, ``"greedy"`` (``paper``): Arca & Hewett's searches, which keep
  the most distinct rows; each result's loss is measured on the records it would release,
  so the four are compared in one measure.

``shield`` is the contract's name for the quasi-identifiers (Arca & Hewett's S).

Example:
    >>> from anonlib.core.samples import load_sample
    >>> from anonlib.transformations.anonymize_experiments import arca_hierarchies
    >>> df = load_sample("arca_table1").frame
    >>> h = arca_hierarchies(df)
    >>> [(m, search(df, ["Zip", "Age", "AC"], 3, h, m, count="#Rec.").rows) for m in METHODS]
    [('iab', 21), ('exhaustive', 21), ('greedy', 18)]
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from ...core.budget import (
    EXHAUSTIVE_SECONDS,
    HISTORY_SEARCH_SECONDS,
    MAX_SECONDS,
    Progress,
    WorkEstimate,
    check_work,
    duration_text,
    lattice_size,
)
from ...core.cells import records_in
from ...core.equivalence import encode
from ...core.errors import EmptySelectionError, ParameterError, join_names
from ...measures.models import ModelRequirement, acceptance
from ...measures.target import ReleaseTarget, unit_k
from ...measures.utility import check_measure, measure_value
from .optimal import optimal_levels
from .paper import SEARCHES
from .space import GeneralizationSpace, SearchNode

METHODS = ("iab", "exhaustive", "greedy")  # the paper's methods; "optimal" is the release default
SEARCH_METHODS = ("optimal", *METHODS)
PRUNINGS = ("monotone", "paper")  # IAB: with the strengthenings of docs/leakage.md, or as written
METHOD_NAMES = {
    "optimal": "Optimal (least loss, proven)",
    "iab": "IAB (Arca & Hewett)",
    "exhaustive": "Exhaustive (Method 1)",
    "greedy": "Greedy (Method 2)",
}


@dataclass(frozen=True, eq=False)
class SearchResult:
    """Outcome of one search: the chosen generalization, its table and the search tree.

    ``levels`` maps each quasi-identifier to its level; ``rows`` and
    ``violations`` describe the generalized ``table``; ``generated`` counts the
    generalized tables evaluated (the root not included); ``seconds`` times the
    search and the building of the result table (not the one-off encoding of
    the data and hierarchies, common to all methods); ``tree`` lists every
    generated table in generation order (``tree[0]`` is the root; ``nodes`` holds it, or for the
    optimal search how to count it). With privacy
    models or a suppression limit, ``suppressed`` counts the records of the
    classes failing k or a model in ``table`` (which still holds them: the
    workflow's suppression step, or ``anonlib.measures.models.acceptance(...).kept``,
    removes them). ``utility`` is the ``measure`` of ``anonlib.measures.utility`` on the records
    released (those classes' records suppressed), for every method, so a paper's
    search and the optimal one are compared in the same measure.
    """

    method: str
    quasi_identifiers: tuple[str, ...]
    k: int
    levels: dict[str, int]
    rows: int
    violations: int
    table: pd.DataFrame
    generated: int
    seconds: float
    nodes: tuple[SearchNode, ...] | Callable[[], tuple[SearchNode, ...]]
    max_levels: dict[str, int]
    requirements: tuple[ModelRequirement, ...] = ()
    max_suppressed: float = 0.0
    suppressed: int = 0
    measure: str | None = None
    utility: float | None = None
    optimal: bool | None = None
    checked: int | None = None
    lattice_size: int | None = None
    bound: float | None = None
    released_k: int | None = None
    person: str | None = None
    persons: int | None = None  # people in the input, with a person column
    suppressed_persons: int | None = None  # people suppressed, measured on the released table
    target: ReleaseTarget | None = None  # the release target searched for (its unit included)

    @cached_property
    def tree(self) -> tuple[SearchNode, ...]:
        """Every table the search generated, in generation order (``tree[0]`` is the root). The
        optimal search's tree is its root and its answer, counted the paper's way when read."""
        return self.nodes() if callable(self.nodes) else self.nodes

    @property
    def root(self) -> SearchNode:
        return self.tree[0]

    @property
    def generalizations(self) -> int:
        """Total generalization steps of the result (sum of its levels)."""
        return int(sum(self.levels.values()))

    def summary(self) -> dict:
        """Plain numbers for tables and JSON downloads.

        >>> from anonlib.core.samples import load_sample
        >>> df = load_sample("arca_table1").frame
        >>> from anonlib.transformations.anonymize_experiments import arca_hierarchies
        >>> search(df, ["Zip", "Age", "AC"], 3, arca_hierarchies(df), "greedy", count="#Rec.").summary()["rows"]
        18
        """
        return {
            "method": self.method,
            "levels": dict(self.levels),
            "rows": self.rows,
            "violations": self.violations,
            "generated": self.generated,
            "seconds": self.seconds,
            "original_rows": self.root.rows,
            "original_violations": self.root.violations,
            "requirements": [r.describe() for r in self.requirements],
            "max_suppressed": self.max_suppressed,
            "suppressed_records": self.suppressed,
            **({"measure": self.measure, "utility": self.utility} if self.utility is not None else {}),
            **(
                {
                    "optimal": self.optimal,
                    "bound": self.bound,
                    "checked": self.checked,
                    "lattice_size": self.lattice_size,
                    "k_released": self.released_k,
                    **(
                        {"person": self.person, "persons": self.persons, "suppressed_persons": self.suppressed_persons}
                        if self.person
                        else {}
                    ),
                }
                if self.method == "optimal"
                else {}
            ),
        }


def estimate_search(
    df: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    hierarchies: Mapping[str, pd.DataFrame],
    method: str = "iab",
    *,
    requirements: Sequence[ModelRequirement] = (),
) -> WorkEstimate:
    """What ``search`` may cost, before anything is encoded: the number of
    generalized tables it may build (all of the lattice for exhaustive; at most
    that for IAB, usually far fewer; a path for greedy), and the seconds and
    memory that takes on this machine class.

    >>> from anonlib.core.samples import load_sample
    >>> df = load_sample("arca_table1").frame
    >>> from anonlib.transformations.anonymize_experiments import arca_hierarchies
    >>> e = estimate_search(df, ["Zip", "Age", "AC"], arca_hierarchies(df), "exhaustive")
    >>> e.what, e.operations, e.interactive
    ('checking 71 generalized tables', 71, True)
    """
    if method not in SEARCH_METHODS:
        raise ParameterError(f"Unknown search method '{method}'; choose one of {join_names(SEARCH_METHODS)}.")
    levels = [max(int(hierarchies[a].shape[1]) - 1, 0) if a in hierarchies else 0 for a in quasi_identifiers]
    lattice = lattice_size(m + 1 for m in levels)
    if method == "optimal":  # bounds for every node, classes counted for a few percent of them
        tables = max(lattice // 20, min(lattice, 64))
        what = f"checking a bound for each of {lattice:,} generalizations and counting some"
    elif method == "greedy":
        tables = sum(levels) * len(levels)
        what = f"checking up to {tables:,} generalized tables"
    else:
        tables = lattice - 1
        what = f"checking {'up to ' if method == 'iab' else ''}{tables:,} generalized tables"
    rows, columns = int(df.shape[0]), max(int(df.shape[1]), 1)
    # each privacy model adds one combine + bincount over the distinct rows per table
    per_table = _TABLE_SECONDS + _CELL_SECONDS * rows * (len(quasi_identifiers) + 2 + 2 * len(tuple(requirements)))
    peak = rows * columns * 8 * 3 + rows * 8 * (len(quasi_identifiers) + 6) + min(tables, 10**8) * _NODE_BYTES
    return WorkEstimate(what, operations=tables, seconds=tables * per_table, peak_bytes=peak)


# Measured on Adult (32,561 records x 15 columns, 8 quasi-identifiers: 3.3 ms per table)
# and on Cleveland (303 records, 4 quasi-identifiers: 0.3 ms), 2 shared cores.
_TABLE_SECONDS = 3e-4
_CELL_SECONDS = 1e-8
_NODE_BYTES = 400  # a SearchNode, its index entry and its place in W


def search(
    df: pd.DataFrame,
    shield: Sequence[str],
    k: int,
    hierarchies: Mapping[str, pd.DataFrame],
    method: str = "iab",
    *,
    count: str | None = None,
    pruning: str = "monotone",
    progress: Progress | None = None,
    requirements: Sequence[ModelRequirement] = (),
    max_suppressed: float = 0.0,
    measure: str = "loss",
    time_limit: float | None = None,
    person: str | None = None,
) -> SearchResult:
    """Generalize the quasi-identifiers ``shield`` of ``df`` until every class has at least
    ``k`` records and meets every privacy model in ``requirements``, after suppressing at
    most the share ``max_suppressed`` of the records (``GeneralizationSpace.status``).

    ``hierarchies`` maps each quasi-identifier to its hierarchy in ARX layout (column 0 the
    original value, column j its level-j generalization). ``method`` is ``"optimal"`` (the
    generalization with the least ``measure`` of ``anonlib.measures.utility`` that meets the
    target, proven, with record suppression as ARX does it; ``time_limit`` seconds make it a
    heuristic that says so in ``.optimal`` and ``.bound``), or one of the paper's methods
    ``"iab"``, ``"exhaustive"``, ``"greedy"`` (most distinct rows kept). Rows and violations
    count distinct rows over all columns of ``df`` (but ``count``). For ``"optimal"`` every
    number is measured on ``.table``, the released records (suppressed records removed):
    ``.rows``, ``.violations``, ``.suppressed``, ``.released_k`` and ``.utility``.
    ``pruning`` (IAB only): ``"monotone"`` adds result-preserving strengthenings to the
    paper's pruning; ``"paper"`` is Algorithm 1 as written, which keeps the most rows but may
    settle a tie differently from exhaustive. ``progress(done, total, what)`` is called as
    tables are counted. Work whose estimate (``estimate_search``) passes the limits of
    ``anonlib.core.budget`` (for the exhaustive method, which counts every node, its own
    ``EXHAUSTIVE_SECONDS``) is refused with a ``ProblemTooLargeError``. With ``person`` (a column
    of ``df`` naming the person of each record) classes are counted in distinct people, a person
    failing in any class is suppressed with all their records, and ``max_suppressed`` is a share
    of the people (``GeneralizationSpace``); the result's ``released_k`` then counts people and
    ``suppressed_persons`` says how many were suppressed.

    >>> from anonlib.core.samples import load_sample
    >>> from anonlib.transformations.anonymize_experiments import arca_hierarchies
    >>> df = load_sample("arca_table1").frame
    >>> h = arca_hierarchies(df)

    With a privacy model on the genetic risk, and at most 30% of the records suppressed:
    >>> from anonlib.measures.models import ModelRequirement
    >>> r = search(df, ["Zip", "Age", "AC"], 3, h, count="#Rec.", max_suppressed=0.3,
    ...            requirements=[ModelRequirement("distinct_l", "Genetic risk", 2)])
    >>> r.levels, r.rows, r.suppressed
    ({'Zip': 1, 'Age': 3, 'AC': 0}, 21, 10)

    The least loss instead of the most rows:
    >>> r = search(df, ["Zip", "Age", "AC"], 3, h, "optimal", count="#Rec.")
    >>> r.levels, round(r.utility, 4), r.optimal, r.checked <= r.lattice_size
    ({'Zip': 1, 'Age': 1, 'AC': 0}, 0.1907, True, True)

    The contract's signature; inside the library every search takes the one release target
    (``release_search(..., target=)``), which this builds from ``k``, ``requirements``,
    ``max_suppressed`` and ``person``.
    """
    target = ReleaseTarget(k, tuple(requirements), max_suppressed, person)
    return release_search(
        df,
        shield,
        hierarchies,
        method,
        target=target,
        count=count,
        pruning=pruning,
        progress=progress,
        measure=measure,
        time_limit=time_limit,
    )


def release_search(
    df: pd.DataFrame,
    shield: Sequence[str],
    hierarchies: Mapping[str, pd.DataFrame],
    method: str = "optimal",
    *,
    target: ReleaseTarget,
    count: str | None = None,
    pruning: str = "monotone",
    progress: Progress | None = None,
    measure: str = "loss",
    time_limit: float | None = None,
) -> SearchResult:
    """The generalization of ``df`` on ``shield`` meeting ``target`` (k, privacy models,
    suppression limit, unit), by ``method``: ``search`` with the release target as one object.
    Every page, command and suggestion searches through here.

    >>> from anonlib.core.samples import load_sample
    >>> from anonlib.transformations.anonymize_experiments import arca_hierarchies
    >>> df = load_sample("arca_table1").frame
    >>> r = release_search(df, ["Zip", "Age", "AC"], arca_hierarchies(df), target=ReleaseTarget(3), count="#Rec.")
    >>> r.levels, r.target.unit
    ({'Zip': 1, 'Age': 1, 'AC': 0}, 'records')
    """
    if pruning not in PRUNINGS:
        raise ParameterError(f"Unknown IAB pruning '{pruning}'; choose one of {join_names(PRUNINGS)}.")
    measure = check_measure(measure)
    if isinstance(df, pd.DataFrame) and (count is None or count in df.columns) and records_in(df, count) == 0:
        raise EmptySelectionError(
            "The table holds no records to release (no rows, or a record count of 0 on every row), so there is "
            "nothing to generalize."
        )
    check_work(  # the exhaustive method counts every node: its own, shorter limit (EXHAUSTIVE_SECONDS)
        estimate_search(df, shield, hierarchies, method, requirements=target.requirements),
        narrow="choose fewer quasi-identifiers or hierarchies with fewer levels"
        + (", or the IAB search, which finds the same table counting far fewer" if method == "exhaustive" else ""),
        max_seconds=EXHAUSTIVE_SECONDS if method == "exhaustive" else MAX_SECONDS,
    )
    if method == "optimal":
        space = GeneralizationSpace(df, shield, hierarchies, target=target, count=count, measure=measure)
        check_history_search(space, time_limit)
        return _optimal_search(space, time_limit, progress)
    space = GeneralizationSpace(df, shield, hierarchies, target=target, count=count, measure=None, rows=True)
    check_history_search(space, time_limit)
    start = time.perf_counter()  # the search itself; encoding the table and hierarchies is common to all methods
    best, tree = SEARCHES[method](space, progress, pruning) if method == "iab" else SEARCHES[method](space, progress)
    table = space.table(best.levels)
    seconds = time.perf_counter() - start
    # the paper's methods judge the table before suppression; their loss is measured on what they would release
    released = space.generalized(best.levels)[~space.failing_records(best.levels)]
    return SearchResult(
        method=method,
        quasi_identifiers=space.qis,
        k=space.k,
        levels=dict(zip(space.qis, best.levels)),
        rows=best.rows,
        violations=best.violations,
        table=table,
        generated=len(tree) - 1,
        seconds=seconds,
        nodes=tuple(tree),
        max_levels=dict(zip(space.qis, space.max_levels)),
        requirements=space.requirements,
        max_suppressed=space.max_suppressed,
        suppressed=best.suppressed,
        measure=measure,
        utility=measure_value(space.frame, released, space.qis, space.hierarchies, measure, count=space.count),
        person=space.person,
        persons=space.n_persons if space.person is not None else None,
        suppressed_persons=space.suppressed_in_unit(best.levels) if space.person is not None else None,
        target=space.target,
    )


@dataclass(frozen=True, eq=False)
class _RootAndAnswer:
    """The optimal search's tree, counted the paper's way when it is read (rows of the
    generalized table over every column, violations): its root and its answer."""

    frame: pd.DataFrame
    qis: tuple[str, ...]
    hierarchies: Mapping[str, pd.DataFrame]
    count: str | None
    target: ReleaseTarget
    levels: tuple[int, ...]

    def __call__(self) -> tuple[SearchNode, ...]:
        space = GeneralizationSpace(
            self.frame, self.qis, self.hierarchies, target=self.target, count=self.count, measure=None, rows=True
        )
        return space.node(tuple(0 for _ in self.qis)), space.node(self.levels)


def check_history_search(space: GeneralizationSpace, time_limit: float | None = None) -> WorkEstimate | None:
    """A search whose nodes compare sub-multisets of histories (power 2 or more), estimated before
    it starts: a node's check (``GeneralizationSpace.history_work``) times the nodes any search
    counts at least (a path from the bottom to the top of the lattice), within ``time_limit``
    (default ``HISTORY_SEARCH_SECONDS``) and the memory budget; else one sentence saying how to
    narrow it. None when no node compares histories.

    >>> from anonlib.core.hierarchy import flat_hierarchy
    >>> df = pd.DataFrame({"pid": [1, 1, 2, 2], "a": ["x", "y", "x", "y"]})
    >>> target = ReleaseTarget(k=2, person="pid", linked=("pid",), power=2)
    >>> space = GeneralizationSpace(df, ["a"], {"a": flat_hierarchy(["x", "y"])}, target=target)
    >>> check_history_search(space).operations  # 2 pairs of records, on each of the 2 nodes
    4
    """
    work = space.history_work
    if work is None:
        return None
    nodes = sum(h - 1 for h in space.heights) + 1
    limit = HISTORY_SEARCH_SECONDS if time_limit is None else float(time_limit)
    search = WorkEstimate(
        f"checking histories at power {space.power} on at least {nodes:,} generalizations ({work.what} "
        f"each, about {duration_text(work.seconds)})",
        work.operations * nodes,
        work.seconds * nodes,
        work.peak_bytes,
    )
    return check_work(
        search,
        narrow=f"choose a smaller adversary power than {space.power}, fewer quasi-identifiers or fewer records per "
        f"person{'' if limit >= MAX_SECONDS else ', or a longer --time-limit (at most ' + duration_text(MAX_SECONDS) + ')'}",
        max_seconds=limit,
    )


def _optimal_search(space: GeneralizationSpace, time_limit: float | None, progress: Progress | None) -> SearchResult:
    """The optimal walk's node, its released table (the failing classes' records suppressed),
    and every number of the result measured on that table as written."""
    start = time.perf_counter()
    found = optimal_levels(
        space.frame,
        space.qis,
        space.hierarchies,
        target=space.target,
        measure=space.measure,
        time_limit=time_limit,
        progress=progress,
        lattice=space,
    )
    # the generalized columns as categoricals: the same cells, read by the kernel from their codes
    released = space.generalized(found.levels, categorical=True)[~space.failing_records(found.levels)]
    # Every number below is read off the released table's cells, encoded once by the kernel (labels
    # in order of appearance but the sensitive attributes': only they are compared by order).
    columns = [*space.qis, *(c for c in space.columns if c not in space.qis)]
    cells = encode(released, columns, count=space.count, unordered=[c for c in columns if c not in space.sensitive])
    after = acceptance(
        released,
        space.qis,
        k=space.k,
        requirements=space.requirements,
        count=space.count,
        encoded=cells,
        **space.target.owner_arguments(),
    )
    rows = cells.n_distinct()  # the classes on the quasi-identifiers (counted above) split by the other columns
    if space.person is not None:  # k in people (or on histories), read off the released records
        released_k = unit_k(released, space.qis, space.target, space.count)
    else:
        sizes = cells.classes(space.qis).sizes if len(released) else np.zeros(0)
        released_k = int(sizes[sizes > 0].min()) if np.any(sizes > 0) else 0
    value = space.baseline().value(released, space.measure, encoded=cells)
    return SearchResult(
        method="optimal",
        quasi_identifiers=space.qis,
        k=space.k,
        levels=dict(zip(space.qis, found.levels)),
        rows=rows,
        violations=int(after.suppressed_records),
        table=released,
        generated=found.checked,
        seconds=time.perf_counter() - start,
        nodes=_RootAndAnswer(space.frame, space.qis, space.hierarchies, space.count, space.target, found.levels),
        max_levels=dict(zip(space.qis, space.max_levels)),
        requirements=space.requirements,
        max_suppressed=space.max_suppressed,
        suppressed=space.records - int(after.records),
        measure=space.measure,
        utility=value,
        optimal=found.optimal,
        checked=found.checked,
        lattice_size=found.lattice_size,
        bound=found.bound,
        released_k=released_k,
        person=space.person,
        persons=space.n_persons if space.person is not None else None,
        suppressed_persons=space.n_persons - int(after.persons) if space.person is not None else None,
        target=space.target,
    )


def compare_methods(
    df: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    hierarchies: Mapping[str, pd.DataFrame],
    methods: Sequence[str] = METHODS,
    *,
    target: ReleaseTarget,
    count: str | None = None,
) -> list[SearchResult]:
    """Run several methods for the same release target (the paper's Section 4 comparison).

    >>> from anonlib.core.samples import load_sample
    >>> df = load_sample("arca_table1").frame
    >>> from anonlib.transformations.anonymize_experiments import arca_hierarchies
    >>> found = compare_methods(df, ["Zip", "Age", "AC"], arca_hierarchies(df), target=ReleaseTarget(3), count="#Rec.")
    >>> [r.generated for r in found]
    [13, 71, 3]
    """
    return [release_search(df, quasi_identifiers, hierarchies, m, target=target, count=count) for m in methods]


def comparison_table(results: Sequence[SearchResult]) -> pd.DataFrame:
    """One row per method: levels, rows kept, violations, tables generated, seconds,
    records suppressed and the information loss (``measure``, ``utility``).

    >>> from anonlib.core.samples import load_sample
    >>> df = load_sample("arca_table1").frame
    >>> from anonlib.transformations.anonymize_experiments import arca_hierarchies
    >>> found = compare_methods(df, ["Zip", "Age", "AC"], arca_hierarchies(df), target=ReleaseTarget(3), count="#Rec.")
    >>> comparison_table(found)["levels"].tolist()
    ['Zip 1, Age 1, AC 0', 'Zip 1, Age 1, AC 0', 'Zip 0, Age 0, AC 1']
    """
    return pd.DataFrame(
        {
            "method": [METHOD_NAMES[r.method] for r in results],
            "levels": [", ".join(f"{a} {v}" for a, v in r.levels.items()) for r in results],
            "rows": [r.rows for r in results],
            "violations": [r.violations for r in results],
            "generalizations": [r.generalizations for r in results],
            "generated": [r.generated for r in results],
            "seconds": [r.seconds for r in results],
            "suppressed": [r.suppressed for r in results],
            "measure": [r.measure for r in results],
            "utility": [r.utility for r in results],
        }
    )
