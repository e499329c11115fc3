"""Arca & Hewett's searches over the generalization space: IAB, exhaustive and greedy.

Arca & Hewett (2021), Section 3.3 and Algorithm 1. A table is generalized on an
attribute B by raising the whole column B one level in its hierarchy (the paper's
Tables 4 and 5), so a state of the search is a node of the ``GeneralizationSpace``.
For the anonymity requirement R = <S, k> (S the quasi-identifiers):

- **violations**: distinct rows of the generalized table (all its columns) whose
  S-projection occurs in fewer than k records;
- **rows**: distinct rows of the generalized table (its "data retention").

Both only shrink when a level is raised (generalization merges rows and groups), which
is what lets IAB prune. With privacy models and a suppression limit, a node satisfies
when the space's one rule says it is acceptable (``GeneralizationSpace.status``). Three
methods, each returning the satisfying node with the most rows, ties to the fewest total
levels, then the fewest suppressed records, then the smallest level vector:

- ``iab`` (Algorithm 1): best-first; expand the open table with the most rows, ties by
  fewest violations; children raise one attribute by one level; a table no larger than
  the best satisfying table found is not expanded (its descendants cannot be larger). On
  real tables the row count barely falls, so by default two result-preserving
  strengthenings prune (docs/leakage.md): generalizations of a satisfying table are never
  built, and, when the target is monotone, Flash's tagging infers failing tables from a
  few probes along paths to the top (``pruning="monotone"``; ``"paper"`` runs Algorithm 1
  as written).
- ``exhaustive`` (the paper's Method 1): every level vector, same objective.
- ``greedy`` (Method 2): from the root, move to the child with the fewest violations
  (ties: most rows) until one has none.

Example (the paper's illustration, R = <{Zip, Age, AC}, 3> on its Table 1):
    >>> from anonlib.core.samples import load_sample
    >>> from anonlib.transformations.anonymize_experiments import arca_hierarchies
    >>> df = load_sample("arca_table1").frame
    >>> from anonlib.measures.target import ReleaseTarget
    >>> space = GeneralizationSpace(df, ["Zip", "Age", "AC"], arca_hierarchies(df), target=ReleaseTarget(3),
    ...                             count="#Rec.", rows=True)
    >>> best, tree = SEARCHES["iab"](space)
    >>> best.levels, best.rows, len(tree) - 1
    ((1, 1, 0), 21, 13)
"""

from __future__ import annotations

import heapq
import itertools
import operator
from collections.abc import Callable, Sequence

import numpy as np

from ...core.budget import Progress, report
from ...core.errors import NoSolutionError, join_names
from .space import GeneralizationSpace, SearchNode


def _objective(node: SearchNode) -> tuple:
    """Smaller is better: most rows, then fewest total levels, then fewest suppressed
    records (with a suppression limit), then smallest level vector. Rows count the
    generalized table before suppression, so they only shrink under generalization
    and IAB's bound holds whatever the acceptance criterion."""
    return (-node.rows, sum(node.levels), node.suppressed, node.levels)


def _no_solution(space: GeneralizationSpace, node: SearchNode) -> NoSolutionError:
    if not space.requirements and not space.limited:
        return NoSolutionError(
            f"No generalization reaches {space.k}-anonymity on {join_names(space.qis)}: even the most "
            f"general table tried (levels {node.levels}) has {node.violations} rows in groups smaller than "
            f"{space.k}. Lower k, or give the hierarchies a top level that groups everything (such as '*')."
        )
    criteria = join_names([f"k = {space.k}", *(r.describe() for r in space.requirements)])
    return NoSolutionError(
        f"No generalization of {join_names(space.qis)} meets {criteria} with at most "
        f"{100 * space.max_suppressed:g}% suppressed records: even the most general table tried (levels "
        f"{node.levels}) has {node.suppressed:,} of {space.records:,} records in classes failing them. "
        "Relax a model, allow more suppression, or give the hierarchies a top level that groups everything."
    )


def _step_label(quasi_identifiers: Sequence[str], lower: tuple[int, ...], upper: tuple[int, ...]) -> str:
    """The attributes raised between two level vectors: "Zip", or "Zip+2, Age" for a longer step.

    >>> _step_label(["Zip", "Age"], (0, 0), (2, 1))
    'Zip+2, Age'
    """
    return ", ".join(a if b - l == 1 else f"{a}+{b - l}" for a, l, b in zip(quasi_identifiers, lower, upper) if b > l)


class _Search:
    """What every search keeps: the tables built (the tree), where each is, and the best satisfying one."""

    PROGRESS_EVERY = 16

    def __init__(self, space: GeneralizationSpace, progress: Progress | None) -> None:
        self.space = space
        self.tree: list[SearchNode] = []
        self.index: dict[tuple[int, ...], int] = {}
        self.best: SearchNode | None = None
        self.progress = progress
        self.total = max(space.size - 1, 0)

    def build(self, levels: tuple[int, ...], parent: int | None = None) -> SearchNode:
        """Generate (evaluate) the table at ``levels`` and add it to the tree under ``parent``."""
        attribute = None if parent is None else _step_label(self.space.qis, self.tree[parent].levels, levels)
        node = self.space.node(levels, parent, attribute)
        self.index[levels] = len(self.tree)
        self.tree.append(node)
        if self.progress is not None and len(self.tree) % self.PROGRESS_EVERY == 1:
            report(self.progress, len(self.tree) - 1, self.total, "generalized tables")
        return node

    def consider(self, node: SearchNode) -> None:
        """Keep ``node`` if it satisfies and beats the best so far (the common objective)."""
        if node.satisfies and (self.best is None or _objective(node) < _objective(self.best)):
            self.best = node

    def cannot_beat(self, rows: int, total: int) -> bool:
        """A table of at most ``rows`` rows and ``total`` levels cannot lead to a better result:
        its generalizations have no more rows and more levels (tie-aware line 12)."""
        best = self.best
        return best is not None and (rows < best.rows or (rows == best.rows and total >= sum(best.levels)))

    def result(self) -> tuple[SearchNode, list[SearchNode]]:
        if self.best is None:
            raise _no_solution(self.space, self.space.node(self.space.max_levels))
        report(self.progress, len(self.tree) - 1, len(self.tree) - 1, "generalized tables")
        return self.best, self.tree


class _Antichain:
    """Level vectors, none at or above (``compare`` = ``operator.ge``) or at or below (``operator.le``)
    another: the minimal satisfying or the maximal failing ones of ``_Tags``. Asked about a vector
    tens of thousands of times per search, on a handful of rows (IAB on 30,000 Adult records: about
    25,000 questions, rarely 20 rows): compared in Python then, where a numpy call cost more than its
    comparisons (about 8 times as long); in numpy past ``SMALL`` rows.

    >>> chain = _Antichain(2, operator.le)  # minimal vectors: a vector at or above one is covered
    >>> for i in range(60):  # 60 rows: asked in numpy
    ...     chain.add((i, 60 - i))
    >>> chain.covers((10, 50)), chain.covers((10, 49)), len(chain.rows)
    (True, False, 60)
    >>> chain.add((0, 0)); chain.rows, chain.covers((10, 49))  # it covers every row: they go
    ([(0, 0)], True)
    """

    SMALL = 48

    def __init__(self, width: int, compare: Callable[[object, object], object]) -> None:
        self.compare = compare  # compare(row, levels) per attribute: the row covers the levels
        self.rows: list[tuple[int, ...]] = []
        self.width = width
        self._array: np.ndarray | None = None  # the rows in numpy, made when asked past SMALL rows

    def covers(self, levels: tuple[int, ...]) -> bool:
        """Whether some row covers ``levels`` (is at or below them for ``operator.le``)."""
        compare = self.compare
        if len(self.rows) <= self.SMALL:
            return any(all(map(compare, row, levels)) for row in self.rows)
        if self._array is None:
            self._array = np.array(self.rows, dtype=np.int64).reshape(-1, self.width)
        return bool(compare(self._array, levels).all(axis=1).any())

    def add(self, levels: tuple[int, ...]) -> None:
        """Add ``levels``, dropping the rows it covers (``compare(levels, row)``)."""
        compare = self.compare
        self.rows = [row for row in self.rows if not all(map(compare, levels, row))] + [tuple(levels)]
        self._array = None


class _Tags:
    """What monotonicity says about tables that were never built (Flash's tagging).

    ``satisfying`` holds the minimal level vectors known to satisfy the
    requirement, ``failing`` the maximal ones known to fail. A level vector at
    or above a satisfying one *generalizes* it; at or below a failing one it
    *specializes* it. With k-anonymity alone, every generalization of a
    satisfying table satisfies and every specialization of a failing one fails.

    >>> tags = _Tags(2)
    >>> tags.add_satisfying((1, 1)); tags.add_failing((2, 0))
    >>> tags.generalizes_satisfying((1, 2)), tags.generalizes_satisfying((0, 2))
    (True, False)
    >>> tags.specializes_failing((1, 0)), tags.specializes_failing((0, 1))
    (True, False)
    >>> tags.add_satisfying((0, 1)); tags.satisfying.rows  # (1, 1) generalizes (0, 1): dropped
    [(0, 1)]
    """

    def __init__(self, width: int) -> None:
        self.satisfying = _Antichain(width, operator.le)
        self.failing = _Antichain(width, operator.ge)

    def generalizes_satisfying(self, levels: tuple[int, ...]) -> bool:
        return self.satisfying.covers(levels)

    def specializes_failing(self, levels: tuple[int, ...]) -> bool:
        return self.failing.covers(levels)

    def add_satisfying(self, levels: tuple[int, ...]) -> None:
        self.satisfying.add(levels)  # drops what the new one generalizes

    def add_failing(self, levels: tuple[int, ...]) -> None:
        self.failing.add(levels)


def _iab(
    space: GeneralizationSpace, progress: Progress | None = None, pruning: str = "monotone"
) -> tuple[SearchNode, list[SearchNode]]:
    """Algorithm 1 (IAB): the paper's pruning as written, or strengthened (the default)."""
    search = _Search(space, progress)
    root = search.build(tuple(0 for _ in space.qis))
    if root.satisfies:
        search.consider(root)
        return search.result()
    if pruning == "paper":
        _iab_as_written(search, root)
    else:
        _iab_with_tags(search, root)
    return search.result()


def _iab_as_written(search: _Search, root: SearchNode) -> None:
    """Algorithm 1 line by line. W holds the violating tables (satisfying ones are never
    selected, line 6); the loop ends when no table in W has more rows than the best
    satisfying table (line 12); among the largest satisfying tables the first found
    is returned (line 13 and the text below it)."""
    space = search.space
    open_tables = [(-root.rows, root.violations, 0)]  # W: most rows, then fewest violations (line 6)
    while open_tables:
        rows, _, index = heapq.heappop(open_tables)
        if search.best is not None and -rows <= search.best.rows:  # line 12
            break
        for _, child_levels in space.children(search.tree[index].levels):  # lines 7-10
            if child_levels in search.index:  # the same generalizations in another order: keep one
                continue
            child = search.build(child_levels, index)
            if child.satisfies:
                if search.best is None or child.rows > search.best.rows:  # line 13: the first of the largest
                    search.best = child
            else:
                heapq.heappush(open_tables, (-child.rows, child.violations, len(search.tree) - 1))


def _iab_with_tags(search: _Search, root: SearchNode) -> None:
    """IAB with two result-preserving strengthenings (docs/leakage.md, "IAB pruning").

    1. *Dominated tables are not built*: a generalization of a satisfying table has
       no more rows and more levels, so it can never be the result. This only needs
       rows to shrink under generalization, true for any acceptance criterion.
    2. *Flash's tagging* (Kohlmayer et al. 2012), only when the criterion is monotone
       (``space.monotone``: every generalization of a satisfying table satisfies):
       before building a table whose status is unknown, walk a path from it up to
       the top (or to a table already known to satisfy) and binary-search the path
       for its lowest satisfying table. Every table built fails -> it and all its
       specializations are tagged failing; satisfies -> all its generalizations are
       dominated. A table tagged failing is expanded like a built one, with its
       parent's rows as the bound on its own (generalization never adds rows).

    The best-first order (most rows, then fewest violations) and the tie-aware line 12
    stay IAB's; only the bounds of tagged tables are inherited.
    """
    space = search.space
    tags = _Tags(len(space.qis))
    monotone = space.monotone

    def built(node: SearchNode) -> SearchNode:
        if node.satisfies:
            tags.add_satisfying(node.levels)
            search.consider(node)
        elif monotone:
            tags.add_failing(node.levels)
        return node

    built(root)
    # W: (-rows or its bound, violations or its bound, total levels, levels, nearest built ancestor)
    open_tables = [(-root.rows, root.violations, 0, root.levels, 0)]
    seen = {root.levels}
    while open_tables:
        rows, violations, total, levels, anchor = heapq.heappop(open_tables)
        if search.cannot_beat(-rows, total) or tags.generalizes_satisfying(levels):
            continue
        for _, child in space.children(levels):  # lines 7-10
            if child in seen:  # the same generalizations in another order: keep one
                continue
            seen.add(child)
            if tags.generalizes_satisfying(child):  # strengthening 1
                continue
            if not (monotone and tags.specializes_failing(child)):
                if monotone:
                    _check_path(search, tags, child, anchor, built)  # strengthening 2
                else:
                    built(search.build(child, anchor))
            if child in search.index:
                node = search.tree[search.index[child]]
                if not node.satisfies:
                    entry = (-node.rows, node.violations, total + 1, child, search.index[child])
                    heapq.heappush(open_tables, entry)
            else:  # tagged failing, never built: expand it with its parent's bounds
                heapq.heappush(open_tables, (rows, violations, total + 1, child, anchor))


def _check_path(search: _Search, tags: _Tags, start: tuple[int, ...], anchor: int, built) -> None:
    """Flash's path check: from ``start`` (status unknown) raise one attribute at a time,
    the least generalized one relative to its hierarchy, until the top or a table
    known to satisfy; binary-search the path for its lowest satisfying table. Tables
    below it on the path fail, tables from it up satisfy; only the probed ones are built."""
    space = search.space
    path = [start]
    while True:
        current = path[-1]
        steps = [(current[i] / space.max_levels[i], i, c) for i, c in space.children(current)]
        steps = [step for step in steps if not tags.generalizes_satisfying(step[2])]
        if not steps:
            break
        path.append(min(steps)[2])
    built_below = {-1: anchor}
    low, high = 0, len(path)  # path[:low] fail, path[high:] satisfy
    while low < high:
        middle = (low + high) // 2
        parent = built_below[max(p for p in built_below if p < middle)]
        node = built(search.build(path[middle], parent))
        built_below[middle] = search.index[path[middle]]
        if node.satisfies:
            high = middle
        else:
            low = middle + 1


def _exhaustive(space: GeneralizationSpace, progress: Progress | None = None) -> tuple[SearchNode, list[SearchNode]]:
    """Method 1: every level vector; the tree links each table to one parent."""
    search = _Search(space, progress)
    for levels in itertools.product(*(range(m + 1) for m in space.max_levels)):
        raised = [i for i, v in enumerate(levels) if v > 0]
        parent = None
        if raised:
            i = raised[-1]
            parent = search.index[levels[:i] + (levels[i] - 1,) + levels[i + 1 :]]
        search.consider(search.build(levels, parent))
    return search.result()


def _greedy(space: GeneralizationSpace, progress: Progress | None = None) -> tuple[SearchNode, list[SearchNode]]:
    """Method 2: follow the child with the fewest violations (ties: most rows)."""
    search = _Search(space, progress)
    node = search.build(tuple(0 for _ in space.qis))
    current = 0
    while not node.satisfies:
        children = []
        for _, levels in space.children(node.levels):
            search.build(levels, current)
            children.append(len(search.tree) - 1)
        if not children:
            if not space.monotone:  # a table below this path may still meet a model that is not monotone
                criteria = join_names([f"k = {space.k}", *(r.describe() for r in space.requirements)])
                raise NoSolutionError(
                    f"The greedy search (the paper's Method 2) followed the fewest failing classes to the most "
                    f"general table (levels {node.levels}) without meeting {criteria} with at most "
                    f"{100 * space.max_suppressed:g}% suppressed records. These models are not monotone, so a "
                    "table off its path may meet them: use the optimal search, IAB or exhaustive search."
                )
            raise _no_solution(space, node)
        current = min(children, key=lambda c: (search.tree[c].violations, -search.tree[c].rows, c))
        node = search.tree[current]
    search.best = node
    return search.result()


SEARCHES = {"iab": _iab, "exhaustive": _exhaustive, "greedy": _greedy}
