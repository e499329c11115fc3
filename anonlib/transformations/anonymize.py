"""Full-domain generalization search for k-anonymity: IAB, exhaustive, greedy.

Arca & Hewett (2021), Section 3.3 and Algorithm 1. A table is generalized on
an attribute B by raising the whole column B one level in its hierarchy (the
paper's Tables 4 and 5), so a state of the search is a vector of levels, one
per shield attribute. For the anonymity requirement R = <S, k>:

- **violations**: distinct rows of the generalized table (all its columns)
  whose S-projection occurs in fewer than k records;
- **rows**: distinct rows of the generalized table (its "data retention").

Both only shrink when a level is raised (generalization merges rows and
groups), which is what lets IAB prune. Privacy models (l, t, α, δ, β) and a
suppression limit can be required next to k, as ARX does: a class failing k or
a model is suppressed, and a table is acceptable when its suppressed records
are within the limit (``GeneralizationSpace``, docs/models.md). Three methods:

- ``iab`` (Algorithm 1): best-first; expand the open table with the most rows,
  ties by fewest violations; children raise one attribute by one level; a table
  no larger than the best satisfying table found is not expanded (its
  descendants cannot be larger); return the satisfying table with the most rows,
  ties to the fewest total levels (least generalized), then the smallest level
  vector. On real tables the row count barely falls, so by default two
  result-preserving strengthenings prune (docs/leakage.md): generalizations of a
  satisfying table are never built, and, when the criterion is monotone, Flash's
  tagging infers failing tables from a few probes along paths to the top.
- ``exhaustive`` (the paper's Method 1): every level vector, same objective.
- ``greedy`` (Method 2): from the root, move to the child with the fewest
  violations (ties: most rows) until one has none.

One module (past 800 lines) because it is one paper's method: the lattice
(``GeneralizationSpace``) and the three searches that walk it, sharing the same
space and objective; the optimal search (``anonlib.transformations.optimal``) is reached through
``search(..., method="optimal")``. The paper's example hierarchies and experiment
are in ``anonlib.transformations.anonymize_experiments``.

The data are encoded once by the counting kernel; generalizing is mapping each
shield column's integer codes through a per-level lookup array, and counting is
``combine`` + ``bincount`` on the distinct rows of the original table.

Example (the paper's illustration, R = <{Zip, Age, AC}, 3> on its Table 1):
    >>> from anonlib.core.samples import load_sample
    >>> from anonlib.transformations.anonymize_experiments import arca_hierarchies
    >>> df = load_sample("arca_table1").frame
    >>> result = search(df, ["Zip", "Age", "AC"], 3, arca_hierarchies(df), count="#Rec.")
    >>> result.levels, result.rows, result.violations
    ({'Zip': 1, 'Age': 1, 'AC': 0}, 21, 0)
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.budget import Progress, WorkEstimate, check_work, lattice_size, report
from ..core.cells import is_number_column
from ..core.equivalence import Classes, combine, encode
from ..core.errors import ColumnError, EmptySelectionError, HierarchyError, NoSolutionError, ParameterError, join_names
from ..core.hierarchy import generalize_column, level_lookup
from ..core.metrics import whole_k
from ..measures.models import (
    HierarchyLevels,
    ModelRequirement,
    acceptance,
    checked_requirements,
    classes_failing,
    counts_from_codes,
    hierarchy_levels,
    requirements_monotone,
    suppression_limit,
    within_limit,
)
from ..measures.models.summaries import checked_columns
from ..measures.utility import check_measure, measure_value
from .optimal import optimal_levels

METHODS = (
    "iab",
    "exhaustive",
    "greedy",
)  # the paper's methods; "optimal" (anonlib.transformations.optimal) is the release default
SEARCH_METHODS = ("optimal", *METHODS)
PRUNINGS = ("monotone", "paper")  # IAB: with the strengthenings of docs/leakage.md, or as written
METHOD_NAMES = {
    "optimal": "Optimal (least loss, proven)",
    "iab": "IAB (Arca & Hewett)",
    "exhaustive": "Exhaustive (Method 1)",
    "greedy": "Greedy (Method 2)",
}


@dataclass(frozen=True)
class SearchNode:
    """One generated table: its level vector, violations and rows, and where it came from.

    ``parent`` is the index of the table it was generalized from (None for the
    root) and ``attribute`` the shield attribute raised to get it. With privacy
    models and a suppression limit (``search(requirements=, max_suppressed=)``),
    ``violations`` counts the distinct rows in classes failing k or a model,
    ``suppressed`` the records in them, and ``acceptable`` says whether those
    records are within the limit; without a limit (``acceptable`` None) a table
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


@dataclass(frozen=True, eq=False)
class SearchResult:
    """Outcome of one search: the chosen generalization, its table and the search tree.

    ``levels`` maps each shield attribute to its level; ``rows`` and
    ``violations`` describe the generalized ``table``; ``generated`` counts the
    generalized tables evaluated (the root not included); ``seconds`` times the
    search and the building of the result table (not the one-off encoding of
    the data and hierarchies, common to all methods); ``tree`` lists every
    generated table in generation order (``tree[0]`` is the root). With privacy
    models or a suppression limit, ``suppressed`` counts the records of the
    classes failing k or a model in ``table`` (which still holds them: the
    workflow's suppression step, or ``anonlib.measures.models.acceptance(...).kept``,
    removes them). ``utility`` is the ``measure`` of ``anonlib.measures.utility`` on the records
    released (those classes' records suppressed), for every method, so a paper's
    search and the optimal one are compared in the same measure.
    """

    method: str
    shield: tuple[str, ...]
    k: int
    levels: dict[str, int]
    rows: int
    violations: int
    table: pd.DataFrame
    generated: int
    seconds: float
    tree: tuple[SearchNode, ...]
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
                }
                if self.method == "optimal"
                else {}
            ),
        }


class GeneralizationSpace:
    """The lattice of full-domain generalizations of one table for <S, k>.

    Built once: the table is encoded by the kernel, reduced to its distinct rows
    (with their record counts), and each shield column gets its per-level lookup
    arrays. ``evaluate(levels)`` then costs two ``combine`` and one ``bincount``.

    With privacy models (``requirements``, ``anonlib.measures.models.ModelRequirement``) and
    a suppression limit (``max_suppressed``, a share of records), a table is
    acceptable as ``anonlib.measures.models.acceptance`` says (ARX's rule): suppress the
    records of every class failing k or a model; acceptable when they are within the
    limit. The sensitive attributes are columns of the distinct rows, so each model
    costs one more ``combine`` + ``bincount`` per table (``models.counts_from_codes``);
    reference distributions (t, δ, β) are the whole table's, as in ``acceptance``.

    >>> from anonlib.core.samples import load_sample
    >>> df = load_sample("arca_table1").frame
    >>> from anonlib.transformations.anonymize_experiments import arca_hierarchies
    >>> space = GeneralizationSpace(df, ["Zip", "Age", "AC"], 3, arca_hierarchies(df), count="#Rec.")
    >>> space.evaluate((0, 0, 0)), space.evaluate((1, 1, 0)), space.max_levels
    ((5, 22), (0, 21), (5, 3, 2))
    """

    def __init__(
        self,
        df: pd.DataFrame,
        shield: Sequence[str],
        k: int,
        hierarchies: Mapping[str, pd.DataFrame],
        *,
        count: str | None = None,
        requirements: Sequence[ModelRequirement] = (),
        max_suppressed: float = 0.0,
    ) -> None:
        self.shield = (shield,) if isinstance(shield, str) else tuple(shield)
        self.k = whole_k(k)
        self.count = count
        self.requirements = checked_requirements(requirements)
        self.max_suppressed = suppression_limit(max_suppressed)
        if not self.shield:
            raise EmptySelectionError("Choose at least one shield (quasi-identifier) attribute.")
        if len(set(self.shield)) != len(self.shield):
            raise ColumnError("A shield attribute was chosen twice; choose each attribute once.")
        if count is not None and count in self.shield:
            raise ColumnError(f"'{count}' is the record-count column; it cannot be a shield attribute.")
        lacking = [a for a in self.shield if a not in hierarchies]
        if lacking:
            raise HierarchyError(f"Every shield attribute needs a hierarchy; there is none for {join_names(lacking)}.")
        not_tables = [a for a in self.shield if not isinstance(hierarchies[a], pd.DataFrame)]
        if not_tables:
            raise HierarchyError(f"The hierarchy of {join_names(not_tables)} must be a table (ARX layout).")
        self.sensitive = tuple(dict.fromkeys(r.sensitive for r in self.requirements))
        checked_columns(df, self.shield, self.sensitive, count)  # a sensitive shield attribute: one sentence
        self.frame = df
        self.hierarchies = {a: hierarchies[a] for a in self.shield}
        self.columns = [c for c in df.columns if c != count]
        table = encode(df, self.columns, count=count)
        self.encoded = table
        shield_pos = [table.position(a) for a in self.shield]
        rest_pos = [p for p in range(len(self.columns)) if p not in shield_pos]
        # Per-level lookup arrays: lookup[a][j][code] is attribute a's level-j code.
        self.lookups: list[np.ndarray] = []
        self.level_labels: list[list[np.ndarray]] = []
        for attribute, pos in zip(self.shield, shield_pos):
            lookup, labels = level_lookup(hierarchies[attribute], table.labels[pos], attribute)
            self.lookups.append(lookup)
            self.level_labels.append(labels)
        self.cards = [[len(lbl) for lbl in labels] for labels in self.level_labels]
        self.max_levels = tuple(len(c) - 1 for c in self.cards)
        # The non-shield columns never change: fold them into one id per row.
        base, n_base = combine(
            [table.codes[:, p] for p in rest_pos], [table.cardinalities[p] for p in rest_pos], table.n_rows
        )
        # Work on the distinct rows of the original table, weighted by their records.
        distinct, n_distinct = combine(
            [base] + [table.codes[:, p] for p in shield_pos],
            [n_base] + [table.cardinalities[p] for p in shield_pos],
            table.n_rows,
        )
        rows = Classes.from_ids(distinct, n_distinct, table.weights)
        first, self.weights = rows.first_rows, rows.sizes
        self.base = base[first]
        self.n_base = max(n_base, 1)
        self.shield_codes = [table.codes[first, p] for p in shield_pos]
        self.shield_positions = shield_pos
        # Each sensitive attribute on the distinct rows (for the models): value numbers,
        # how many values, their labels, whether they are numbers.
        self.sensitive_codes = {
            a: (
                table.codes[first, table.position(a)],
                table.cardinalities[table.position(a)],
                table.labels[table.position(a)],
                is_number_column(df[a]),
            )
            for a in self.sensitive
        }
        self.records = int(self.weights.sum())
        self.hierarchy_levels: list[HierarchyLevels | None] = [
            None
            if r.hierarchy is None
            else hierarchy_levels(r.hierarchy, table.labels[table.position(r.sensitive)], r.sensitive)
            for r in self.requirements
        ]
        self.evaluations = 0
        self._cache: dict[tuple[int, ...], tuple[int, int, int]] = {}

    @property
    def size(self) -> int:
        """Number of level vectors (tables) in the lattice.

        >>> from anonlib.core.samples import load_sample
        >>> df = load_sample("arca_table1").frame
        >>> from anonlib.transformations.anonymize_experiments import arca_hierarchies
        >>> GeneralizationSpace(df, ["Zip", "Age", "AC"], 3, arca_hierarchies(df), count="#Rec.").size
        72
        """
        return lattice_size(m + 1 for m in self.max_levels)

    @property
    def monotone(self) -> bool:
        """Whether the acceptance criterion is monotone: every generalization of a
        satisfying table satisfies (so every specialization of a failing one fails).
        True for <S, k>, since merging shield groups only makes them larger, also
        with a suppression limit (a class of k records stays one); with privacy
        models as ``anonlib.measures.models.requirements_monotone`` says (δ-disclosure never;
        with a suppression limit, distinct l only). When False, IAB builds every
        table it expands (no tagging); its other pruning needs only that rows shrink.

        >>> space = GeneralizationSpace(pd.DataFrame({"a": [1, 2]}), ["a"], 2, {"a": pd.DataFrame([["1", "*"], ["2", "*"]])})
        >>> space.monotone
        True
        """
        return requirements_monotone(self.requirements, self.max_suppressed)

    @property
    def limited(self) -> bool:
        """Whether records may be suppressed (a suppression limit above 0)."""
        return self.max_suppressed > 0

    def _shield_ids(self, levels: tuple[int, ...], codes: Sequence[np.ndarray]) -> tuple[np.ndarray, int]:
        columns = [lookup[level][c] for lookup, level, c in zip(self.lookups, levels, codes)]
        cards = [cards[level] for cards, level in zip(self.cards, levels)]
        return combine(columns, cards, len(codes[0]))

    def evaluate(self, levels: Sequence[int]) -> tuple[int, int]:
        """(violations, rows) of the table generalized to ``levels`` (cached).

        >>> space = GeneralizationSpace(pd.DataFrame({"a": [1, 2, 2]}), ["a"], 2, {"a": pd.DataFrame([["1", "*"], ["2", "*"]])})
        >>> space.evaluate((0,)), space.evaluate((1,))
        ((1, 2), (0, 1))
        """
        violations, rows, _ = self.status(levels)
        return violations, rows

    def status(self, levels: Sequence[int]) -> tuple[int, int, int]:
        """(violations, rows, suppressed records) of the table generalized to ``levels``
        (cached): the distinct rows and the records in classes failing k or a model.

        >>> from anonlib.measures.models import ModelRequirement
        >>> df = pd.DataFrame({"a": [1, 1, 2, 2], "dx": ["x", "y", "x", "x"]})
        >>> space = GeneralizationSpace(df, ["a"], 2, {"a": pd.DataFrame([["1", "*"], ["2", "*"]])},
        ...                             requirements=[ModelRequirement("distinct_l", "dx", 2)])
        >>> space.status((0,)), space.status((1,))
        ((1, 3, 2), (0, 2, 0))
        """
        levels = self.check_levels(levels)
        if levels not in self._cache:
            self.evaluations += 1
            sid, n_shield = self._shield_ids(levels, self.shield_codes)
            groups = Classes.from_ids(sid, n_shield, self.weights)
            rows, n_rows = combine([sid, self.base], [n_shield, self.n_base])
            shield_of_row = np.empty(n_rows, dtype=np.int64)
            shield_of_row[rows] = sid
            if not self.requirements:
                failed = groups.sizes < self.k
            else:
                counts = {
                    a: counts_from_codes(groups, codes, n_values, labels, weights=self.weights, numeric=numeric)
                    for a, (codes, n_values, labels, numeric) in self.sensitive_codes.items()
                }
                failed, _ = classes_failing(groups.sizes, self.k, self.requirements, counts, self.hierarchy_levels)
                failed |= groups.sizes < self.k  # classes without records, as <S, k> counts them
            violations = int(np.count_nonzero(failed[shield_of_row]))
            suppressed = int(groups.sizes[failed].sum())
            self._cache[levels] = (violations, n_rows, suppressed)
        return self._cache[levels]

    def check_levels(self, levels: Sequence[int]) -> tuple[int, ...]:
        """``levels`` as a tuple of ints, or a ``ParameterError`` if they do not fit the hierarchies.

        >>> space = GeneralizationSpace(pd.DataFrame({"a": [1, 2]}), ["a"], 2, {"a": pd.DataFrame([["1", "*"], ["2", "*"]])})
        >>> space.check_levels([1.0])
        (1,)
        """
        levels = tuple(int(v) for v in levels)
        if len(levels) != len(self.shield) or any(not 0 <= v <= m for v, m in zip(levels, self.max_levels)):
            raise ParameterError(
                f"Levels {levels} do not fit the hierarchies of {join_names(self.shield)} "
                f"(highest levels {self.max_levels})."
            )
        return levels

    def node(self, levels: tuple[int, ...], parent: int | None = None, attribute: str | None = None) -> SearchNode:
        """The search-tree node of a level vector.

        >>> space = GeneralizationSpace(pd.DataFrame({"a": [1, 2, 2]}), ["a"], 2, {"a": pd.DataFrame([["1", "*"], ["2", "*"]])})
        >>> space.node((0,)).label
        'T(1, 2)'
        """
        violations, rows, suppressed = self.status(levels)
        acceptable = within_limit(suppressed, self.records, self.max_suppressed) if self.limited else None
        return SearchNode(levels, violations, rows, parent, attribute, suppressed, acceptable)

    def table(self, levels: Sequence[int]) -> pd.DataFrame:
        """The generalized table. With a count column, identical rows are merged and
        their counts added (the paper's Table 5); without, one row per input row.

        >>> df = pd.DataFrame({"a": [1, 2], "n": [2, 3]})
        >>> space = GeneralizationSpace(df, ["a"], 5, {"a": pd.DataFrame([["1", "*"], ["2", "*"]])}, count="n")
        >>> space.table((1,)).values.tolist()
        [['*', 5]]
        """
        levels = self.check_levels(levels)
        out = self.frame.copy()
        codes = []
        for i, (attribute, pos) in enumerate(zip(self.shield, self.shield_positions)):
            codes.append(self.lookups[i][levels[i]][self.encoded.codes[:, pos]])
            if levels[i] > 0:
                out[attribute] = generalize_column(out[attribute], self.hierarchies[attribute], levels[i], attribute)
        if self.count is None or out.empty:
            return out
        rest = [self.encoded.codes[:, p] for p in range(len(self.columns)) if p not in self.shield_positions]
        rest_cards = [self.encoded.cardinalities[p] for p in range(len(self.columns)) if p not in self.shield_positions]
        cards = [self.cards[i][levels[i]] for i in range(len(self.shield))]
        ids, n = combine(codes + rest, cards + rest_cards, len(out))
        merged_rows = Classes.from_ids(ids, n, self.encoded.weights)
        order = np.sort(merged_rows.first_rows)
        merged = out.iloc[order].reset_index(drop=True)
        merged[self.count] = merged_rows.sizes[ids[order]]
        return merged

    def children(self, levels: tuple[int, ...]) -> list[tuple[int, tuple[int, ...]]]:
        """(attribute index, levels) of the tables one generalization step away.

        >>> space = GeneralizationSpace(pd.DataFrame({"a": [1, 2]}), ["a"], 2, {"a": pd.DataFrame([["1", "*"], ["2", "*"]])})
        >>> space.children((0,)), space.children((1,))
        ([(0, (1,))], [])
        """
        return [
            (i, levels[:i] + (levels[i] + 1,) + levels[i + 1 :])
            for i in range(len(levels))
            if levels[i] < self.max_levels[i]
        ]


def _objective(node: SearchNode) -> tuple:
    """Smaller is better: most rows, then fewest total levels, then fewest suppressed
    records (with a suppression limit), then smallest level vector. Rows count the
    generalized table before suppression, so they only shrink under generalization
    and IAB's bound holds whatever the acceptance criterion."""
    return (-node.rows, sum(node.levels), node.suppressed, node.levels)


def _no_solution(space: GeneralizationSpace, node: SearchNode) -> NoSolutionError:
    if not space.requirements and not space.limited:
        return NoSolutionError(
            f"No generalization reaches {space.k}-anonymity on {join_names(space.shield)}: even the most "
            f"general table tried (levels {node.levels}) has {node.violations} rows in groups smaller than "
            f"{space.k}. Lower k, or give the hierarchies a top level that groups everything (such as '*')."
        )
    criteria = join_names([f"k = {space.k}", *(r.describe() for r in space.requirements)])
    return NoSolutionError(
        f"No generalization of {join_names(space.shield)} meets {criteria} with at most "
        f"{100 * space.max_suppressed:g}% suppressed records: even the most general table tried (levels "
        f"{node.levels}) has {node.suppressed:,} of {space.records:,} records in classes failing them. "
        "Relax a model, allow more suppression, or give the hierarchies a top level that groups everything."
    )


def _step_label(shield: Sequence[str], lower: tuple[int, ...], upper: tuple[int, ...]) -> str:
    """The attributes raised between two level vectors: "Zip", or "Zip+2, Age" for a longer step.

    >>> _step_label(["Zip", "Age"], (0, 0), (2, 1))
    'Zip+2, Age'
    """
    return ", ".join(a if b - l == 1 else f"{a}+{b - l}" for a, l, b in zip(shield, lower, upper) if b > l)


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
        attribute = None if parent is None else _step_label(self.space.shield, self.tree[parent].levels, levels)
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
    """

    def __init__(self, width: int) -> None:
        self.satisfying = np.zeros((0, width), dtype=np.int64)
        self.failing = np.zeros((0, width), dtype=np.int64)

    def generalizes_satisfying(self, levels: tuple[int, ...]) -> bool:
        return bool(np.any(np.all(self.satisfying <= levels, axis=1)))

    def specializes_failing(self, levels: tuple[int, ...]) -> bool:
        return bool(np.any(np.all(self.failing >= levels, axis=1)))

    def add_satisfying(self, levels: tuple[int, ...]) -> None:
        keep = ~np.all(self.satisfying >= levels, axis=1)  # drop what the new one generalizes
        self.satisfying = np.vstack([self.satisfying[keep], levels])

    def add_failing(self, levels: tuple[int, ...]) -> None:
        keep = ~np.all(self.failing <= levels, axis=1)
        self.failing = np.vstack([self.failing[keep], levels])


def _iab(
    space: GeneralizationSpace, progress: Progress | None = None, pruning: str = "monotone"
) -> tuple[SearchNode, list[SearchNode]]:
    """Algorithm 1 (IAB): the paper's pruning as written, or strengthened (the default)."""
    search = _Search(space, progress)
    root = search.build(tuple(0 for _ in space.shield))
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
    tags = _Tags(len(space.shield))
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
    node = search.build(tuple(0 for _ in space.shield))
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


_SEARCHES = {"iab": _iab, "exhaustive": _exhaustive, "greedy": _greedy}


def estimate_search(
    df: pd.DataFrame,
    shield: Sequence[str],
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
    if method not in _SEARCHES and method != "optimal":
        raise ParameterError(f"Unknown search method '{method}'; choose one of {join_names(SEARCH_METHODS)}.")
    levels = [max(int(hierarchies[a].shape[1]) - 1, 0) if a in hierarchies else 0 for a in shield]
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
    per_table = _TABLE_SECONDS + _CELL_SECONDS * rows * (len(shield) + 2 + 2 * len(tuple(requirements)))
    peak = rows * columns * 8 * 3 + rows * 8 * (len(shield) + 6) + min(tables, 10**8) * _NODE_BYTES
    return WorkEstimate(what, operations=tables, seconds=tables * per_table, peak_bytes=peak)


# Measured on Adult (32,561 records x 15 columns, 8 shield attributes: 3.3 ms per table)
# and on Cleveland (303 records, 4 shield attributes: 0.3 ms), 2 shared cores.
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
) -> SearchResult:
    """Generalize ``df`` until every shield group has at least ``k`` records (and meets
    every privacy model in ``requirements``, after suppressing at most the share
    ``max_suppressed`` of the records: ``GeneralizationSpace``).

    ``hierarchies`` maps each shield attribute to its hierarchy in ARX layout
    (column 0 the original value, column j its level-j generalization).
    ``method`` is ``"optimal"`` (``anonlib.transformations.optimal``: the generalization with the
    least ``measure`` of ``anonlib.measures.utility`` that meets the target, proven, with
    record suppression as ARX does it; ``time_limit`` seconds make it a heuristic
    that says so in ``.optimal`` and ``.bound``), or one of the paper's methods
    ``"iab"``, ``"exhaustive"``, ``"greedy"`` (most distinct rows kept). Rows and
    violations count distinct rows over all columns of ``df`` (but ``count``).
    For ``"optimal"`` every number is measured on ``.table``, the released records
    (suppressed records removed): ``.rows``, ``.violations``, ``.suppressed``,
    ``.released_k`` and ``.utility``.
    ``pruning`` (IAB only): ``"monotone"`` adds result-preserving strengthenings to
    the paper's pruning (``_iab_with_tags``); ``"paper"`` is Algorithm 1 as written,
    which keeps the most rows but may settle a tie differently from exhaustive.
    ``progress(done, total, what)`` is called as tables are built. Work whose
    estimate (``estimate_search``) passes the limits of ``anonlib.core.budget``
    is refused with a ``ProblemTooLargeError``.

    >>> from anonlib.core.samples import load_sample
    >>> df = load_sample("arca_table1").frame
    >>> from anonlib.transformations.anonymize_experiments import arca_hierarchies
    >>> h = arca_hierarchies(df)
    >>> [(m, search(df, ["Zip", "Age", "AC"], 3, h, m, count="#Rec.").rows) for m in METHODS]
    [('iab', 21), ('exhaustive', 21), ('greedy', 18)]

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
    """
    if pruning not in PRUNINGS:
        raise ParameterError(f"Unknown IAB pruning '{pruning}'; choose one of {join_names(PRUNINGS)}.")
    requirements = tuple(requirements)
    check_work(
        estimate_search(df, shield, hierarchies, method, requirements=requirements),
        narrow="choose fewer shield attributes or hierarchies with fewer levels",
    )
    space = GeneralizationSpace(
        df, shield, k, hierarchies, count=count, requirements=requirements, max_suppressed=max_suppressed
    )
    if method == "optimal":
        return _optimal_search(space, check_measure(measure), time_limit, progress)
    start = time.perf_counter()  # the search itself; encoding the table and hierarchies is common to all methods
    if method == "iab":
        best, tree = _iab(space, progress, pruning)
    else:
        best, tree = _SEARCHES[method](space, progress)
    table = space.table(best.levels)
    seconds = time.perf_counter() - start
    released = _released(space, best.levels)  # for its utility; the paper's methods judge the table before suppression
    return SearchResult(
        method=method,
        shield=space.shield,
        k=space.k,
        levels=dict(zip(space.shield, best.levels)),
        rows=best.rows,
        violations=best.violations,
        table=table,
        generated=len(tree) - 1,
        seconds=seconds,
        tree=tuple(tree),
        max_levels=dict(zip(space.shield, space.max_levels)),
        requirements=space.requirements,
        max_suppressed=space.max_suppressed,
        suppressed=best.suppressed,
        measure=check_measure(measure),
        utility=measure_value(space.frame, released, space.shield, space.hierarchies, measure, count=space.count),
    )


def _optimal_search(
    space: GeneralizationSpace, measure: str, time_limit: float | None, progress: Progress | None
) -> SearchResult:
    """``anonlib.transformations.optimal``'s node, its released table, and every number measured on that table."""
    start = time.perf_counter()
    frame = space.frame
    found = optimal_levels(
        frame,
        space.shield,
        space.hierarchies,
        k=space.k,
        measure=measure,
        max_suppressed=space.max_suppressed,
        requirements=space.requirements,
        count=space.count,
        time_limit=time_limit,
        progress=progress,
    )
    released, after = _release(space, found.levels)
    rows = int(encode(released, space.columns).classes().n_classes) if len(released) else 0
    sizes = encode(released, list(space.shield), count=space.count).classes().sizes if len(released) else np.zeros(0)
    value = measure_value(frame, released, space.shield, space.hierarchies, measure, count=space.count)
    node = space.node(found.levels)
    return SearchResult(
        method="optimal",
        shield=space.shield,
        k=space.k,
        levels=dict(zip(space.shield, found.levels)),
        rows=rows,
        violations=int(after.suppressed_records),
        table=released,
        generated=found.checked,
        seconds=time.perf_counter() - start,
        tree=(space.node(tuple(0 for _ in space.shield)), node),
        max_levels=dict(zip(space.shield, space.max_levels)),
        requirements=space.requirements,
        max_suppressed=space.max_suppressed,
        suppressed=space.records - int(after.records),
        measure=measure,
        utility=value,
        optimal=found.optimal,
        checked=found.checked,
        lattice_size=found.lattice_size,
        bound=found.bound,
        released_k=int(sizes[sizes > 0].min()) if np.any(sizes > 0) else 0,
    )


def _released(space: GeneralizationSpace, levels: Sequence[int]) -> pd.DataFrame:
    """The records released at ``levels``: the one measurement
    (``anonlib.measures.models.acceptance``) on the written cells suppresses the records in
    classes failing k or a model; the rest is the release."""
    generalized = _generalized(space, levels)
    verdict = acceptance(
        generalized,
        space.shield,
        k=space.k,
        requirements=space.requirements,
        max_suppressed=space.max_suppressed,
        count=space.count,
    )
    return generalized[np.asarray(verdict.kept, dtype=bool)]


def _release(space: GeneralizationSpace, levels: Sequence[int]):
    """The records released at ``levels`` (``_released``) and their verdict, measured again on
    themselves (t-closeness, δ-disclosure and β-likeness compare with the table released)."""
    released = _released(space, levels)
    return released, acceptance(released, space.shield, k=space.k, requirements=space.requirements, count=space.count)


def _generalized(space: GeneralizationSpace, levels: Sequence[int]) -> pd.DataFrame:
    """The generalized table with one row per input row (rows are not merged by count,
    so the release keeps the input's index and utility can match rows)."""
    out = space.frame.copy()
    for attribute, level in zip(space.shield, levels):
        out[attribute] = generalize_column(out[attribute], space.hierarchies[attribute], level, attribute)
    return out


def compare_methods(
    df: pd.DataFrame,
    shield: Sequence[str],
    k: int,
    hierarchies: Mapping[str, pd.DataFrame],
    methods: Sequence[str] = METHODS,
    *,
    count: str | None = None,
) -> list[SearchResult]:
    """Run several methods on the same requirement (the paper's Section 4 comparison).

    >>> from anonlib.core.samples import load_sample
    >>> df = load_sample("arca_table1").frame
    >>> from anonlib.transformations.anonymize_experiments import arca_hierarchies
    >>> [r.generated for r in compare_methods(df, ["Zip", "Age", "AC"], 3, arca_hierarchies(df), count="#Rec.")]
    [13, 71, 3]
    """
    return [search(df, shield, k, hierarchies, m, count=count) for m in methods]


def comparison_table(results: Sequence[SearchResult]) -> pd.DataFrame:
    """One row per method: levels, rows kept, violations, tables generated, seconds,
    records suppressed and the information loss (``measure``, ``utility``).

    >>> from anonlib.core.samples import load_sample
    >>> df = load_sample("arca_table1").frame
    >>> from anonlib.transformations.anonymize_experiments import arca_hierarchies
    >>> comparison_table(compare_methods(df, ["Zip", "Age", "AC"], 3, arca_hierarchies(df), count="#Rec."))["levels"].tolist()
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
