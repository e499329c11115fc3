"""Full-domain generalization search for k-anonymity: IAB, exhaustive, greedy.

Arca & Hewett (2021), Section 3.3 and Algorithm 1. A table is generalized on
an attribute B by raising the whole column B one level in its hierarchy (the
paper's Tables 4 and 5), so a state of the search is a vector of levels, one
per shield attribute. For the anonymity requirement R = <S, k>:

- **violations**: distinct rows of the generalized table (all its columns)
  whose S-projection occurs in fewer than k records;
- **rows**: distinct rows of the generalized table (its "data retention").

Both only shrink when a level is raised (generalization merges rows and
groups), which is what lets IAB prune. Three methods:

- ``iab`` (Algorithm 1): best-first; expand the open table with the most rows,
  ties by fewest violations; children raise one attribute by one level; a table
  no larger than the best satisfying table found is not expanded (its
  descendants cannot be larger); return the satisfying table with the most rows,
  ties to the fewest total levels (least generalized), then the smallest level
  vector.
- ``exhaustive`` (the paper's Method 1): every level vector, same objective.
- ``greedy`` (Method 2): from the root, move to the child with the fewest
  violations (ties: most rows) until one has none.

The data are encoded once by the counting kernel; generalizing is mapping each
shield column's integer codes through a per-level lookup array, and counting is
``combine`` + ``bincount`` on the distinct rows of the original table.

Example (the paper's illustration, R = <{Zip, Age, AC}, 3> on its Table 1):
    >>> from anonlib.core.samples import load_sample
    >>> df = load_sample("arca_table1").frame
    >>> result = search(df, ["Zip", "Age", "AC"], 3, arca_hierarchies(df), count="#Rec.")
    >>> result.levels, result.rows, result.violations
    ({'Zip': 1, 'Age': 1, 'AC': 0}, 21, 0)
"""

from __future__ import annotations

import heapq
import itertools
import time
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from .core.budget import WorkEstimate, check_work, lattice_size
from .core.equivalence import Classes, combine, encode
from .core.errors import AnonlibError, ColumnError, EmptySelectionError, HierarchyError, ParameterError, join_names
from .core.hierarchy import (
    interval_hierarchy,
    level_lookup,
    masking_hierarchy,
    parse_bands,
    taxonomy_hierarchy,
    flat_hierarchy,
)
from .core.metrics import whole_k

METHODS = ("iab", "exhaustive", "greedy")
METHOD_NAMES = {"iab": "IAB (Arca & Hewett)", "exhaustive": "Exhaustive (Method 1)", "greedy": "Greedy (Method 2)"}


class NoSolutionError(AnonlibError):
    """No generalization of the table satisfies the anonymity requirement."""


@dataclass(frozen=True)
class SearchNode:
    """One generated table: its level vector, violations and rows, and where it came from.

    ``parent`` is the index of the table it was generalized from (None for the
    root) and ``attribute`` the shield attribute raised to get it.
    """

    levels: tuple[int, ...]
    violations: int
    rows: int
    parent: int | None = None
    attribute: str | None = None

    @property
    def satisfies(self) -> bool:
        """No violating rows: the table meets <S, k>.

        >>> SearchNode((1, 0), 0, 21).satisfies
        True
        """
        return self.violations == 0

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
    generated table in generation order (``tree[0]`` is the root).
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
        }


class GeneralizationSpace:
    """The lattice of full-domain generalizations of one table for <S, k>.

    Built once: the table is encoded by the kernel, reduced to its distinct rows
    (with their record counts), and each shield column gets its per-level lookup
    arrays. ``evaluate(levels)`` then costs two ``combine`` and one ``bincount``.

    >>> from anonlib.core.samples import load_sample
    >>> df = load_sample("arca_table1").frame
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
    ) -> None:
        self.shield = (shield,) if isinstance(shield, str) else tuple(shield)
        self.k = whole_k(k)
        self.count = count
        if not self.shield:
            raise EmptySelectionError("Choose at least one shield (quasi-identifier) attribute.")
        if len(set(self.shield)) != len(self.shield):
            raise ColumnError("A shield attribute was chosen twice; choose each attribute once.")
        if count is not None and count in self.shield:
            raise ColumnError(f"'{count}' is the record-count column; it cannot be a shield attribute.")
        lacking = [a for a in self.shield if a not in hierarchies]
        if lacking:
            raise HierarchyError(
                f"Every shield attribute needs a hierarchy; there is none for {join_names(lacking)}."
            )
        not_tables = [a for a in self.shield if not isinstance(hierarchies[a], pd.DataFrame)]
        if not_tables:
            raise HierarchyError(f"The hierarchy of {join_names(not_tables)} must be a table (ARX layout).")
        self.frame = df
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
        self.evaluations = 0
        self._cache: dict[tuple[int, ...], tuple[int, int]] = {}

    @property
    def size(self) -> int:
        """Number of level vectors (tables) in the lattice.

        >>> from anonlib.core.samples import load_sample
        >>> df = load_sample("arca_table1").frame
        >>> GeneralizationSpace(df, ["Zip", "Age", "AC"], 3, arca_hierarchies(df), count="#Rec.").size
        72
        """
        return lattice_size(m + 1 for m in self.max_levels)

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
        levels = self.check_levels(levels)
        if levels not in self._cache:
            self.evaluations += 1
            sid, n_shield = self._shield_ids(levels, self.shield_codes)
            groups = Classes.from_ids(sid, n_shield, self.weights)
            rows, n_rows = combine([sid, self.base], [n_shield, self.n_base])
            shield_of_row = np.empty(n_rows, dtype=np.int64)
            shield_of_row[rows] = sid
            violations = int(np.count_nonzero(groups.sizes[shield_of_row] < self.k))
            self._cache[levels] = (violations, n_rows)
        return self._cache[levels]

    def check_levels(self, levels: Sequence[int]) -> tuple[int, ...]:
        """``levels`` as a tuple of ints, or a ``ParameterError`` if they do not fit the hierarchies.

        >>> space = GeneralizationSpace(pd.DataFrame({"a": [1, 2]}), ["a"], 2, {"a": pd.DataFrame([["1", "*"], ["2", "*"]])})
        >>> space.check_levels([1.0])
        (1,)
        """
        levels = tuple(int(v) for v in levels)
        if len(levels) != len(self.shield) or any(
            not 0 <= v <= m for v, m in zip(levels, self.max_levels)
        ):
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
        violations, rows = self.evaluate(levels)
        return SearchNode(levels, violations, rows, parent, attribute)

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
            level_codes = self.lookups[i][levels[i]][self.encoded.codes[:, pos]]
            codes.append(level_codes)
            if levels[i] > 0:
                out[attribute] = pd.Series(self.level_labels[i][levels[i]][level_codes], index=out.index, dtype=object)
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
    """Smaller is better: most rows, then fewest total levels, then smallest level vector."""
    return (-node.rows, sum(node.levels), node.levels)


def _no_solution(space: GeneralizationSpace, node: SearchNode) -> NoSolutionError:
    return NoSolutionError(
        f"No generalization reaches {space.k}-anonymity on {join_names(space.shield)}: even the most "
        f"general table tried (levels {node.levels}) has {node.violations} rows in groups smaller than "
        f"{space.k}. Lower k, or give the hierarchies a top level that groups everything (such as '*')."
    )


def _iab(space: GeneralizationSpace) -> tuple[SearchNode, list[SearchNode]]:
    """Algorithm 1 (IAB) with monotonicity pruning."""
    root = space.node(tuple(0 for _ in space.shield))
    tree = [root]
    if root.satisfies:
        return root, tree
    best: SearchNode | None = None
    seen = {root.levels}
    # W, the open tables: most rows first, then fewest violations (Algorithm 1, line 6).
    open_tables = [(-root.rows, root.violations, 0, root.levels, 0)]
    while open_tables:
        _, _, total, levels, index = heapq.heappop(open_tables)
        node = tree[index]
        # Line 12: a table no larger than the best satisfying one cannot lead to a better one
        # (descendants have at most as many rows and more levels).
        if best is not None and (node.rows < best.rows or (node.rows == best.rows and total >= sum(best.levels))):
            continue
        for i, child_levels in space.children(levels):  # lines 7-10
            if child_levels in seen:  # the same generalizations in another order: keep one
                continue
            seen.add(child_levels)
            child = space.node(child_levels, index, space.shield[i])
            tree.append(child)
            if child.satisfies:
                if best is None or _objective(child) < _objective(best):
                    best = child
            else:
                heapq.heappush(
                    open_tables, (-child.rows, child.violations, sum(child_levels), child_levels, len(tree) - 1)
                )
    if best is None:
        raise _no_solution(space, space.node(space.max_levels))
    return best, tree


def _exhaustive(space: GeneralizationSpace) -> tuple[SearchNode, list[SearchNode]]:
    """Method 1: every level vector; the tree links each table to one parent."""
    tree: list[SearchNode] = []
    index: dict[tuple[int, ...], int] = {}
    best: SearchNode | None = None
    for levels in itertools.product(*(range(m + 1) for m in space.max_levels)):
        raised = [i for i, v in enumerate(levels) if v > 0]
        parent, attribute = None, None
        if raised:
            i = raised[-1]
            parent = index[levels[:i] + (levels[i] - 1,) + levels[i + 1 :]]
            attribute = space.shield[i]
        node = space.node(levels, parent, attribute)
        index[levels] = len(tree)
        tree.append(node)
        if node.satisfies and (best is None or _objective(node) < _objective(best)):
            best = node
    if best is None:
        raise _no_solution(space, tree[-1])
    return best, tree


def _greedy(space: GeneralizationSpace) -> tuple[SearchNode, list[SearchNode]]:
    """Method 2: follow the child with the fewest violations (ties: most rows)."""
    node = space.node(tuple(0 for _ in space.shield))
    tree = [node]
    current = 0
    while not node.satisfies:
        children = []
        for i, levels in space.children(node.levels):
            tree.append(space.node(levels, current, space.shield[i]))
            children.append(len(tree) - 1)
        if not children:
            raise _no_solution(space, node)
        current = min(children, key=lambda c: (tree[c].violations, -tree[c].rows, c))
        node = tree[current]
    return node, tree


_SEARCHES = {"iab": _iab, "exhaustive": _exhaustive, "greedy": _greedy}


def search(
    df: pd.DataFrame,
    shield: Sequence[str],
    k: int,
    hierarchies: Mapping[str, pd.DataFrame],
    method: str = "iab",
    *,
    count: str | None = None,
) -> SearchResult:
    """Generalize ``df`` until every shield group has at least ``k`` records.

    ``hierarchies`` maps each shield attribute to its hierarchy in ARX layout
    (column 0 the original value, column j its level-j generalization).
    ``method`` is ``"iab"``, ``"exhaustive"`` or ``"greedy"``. Rows and
    violations count distinct rows over all columns of ``df`` (but ``count``).

    >>> from anonlib.core.samples import load_sample
    >>> df = load_sample("arca_table1").frame
    >>> h = arca_hierarchies(df)
    >>> [(m, search(df, ["Zip", "Age", "AC"], 3, h, m, count="#Rec.").rows) for m in METHODS]
    [('iab', 21), ('exhaustive', 21), ('greedy', 18)]
    """
    if method not in _SEARCHES:
        raise ParameterError(f"Unknown search method '{method}'; choose one of {join_names(METHODS)}.")
    space = GeneralizationSpace(df, shield, k, hierarchies, count=count)
    if method == "exhaustive":
        check_work(estimate_exhaustive(space), narrow="choose fewer shield attributes or shorter hierarchies, or use IAB")
    start = time.perf_counter()  # the search itself; encoding the table and hierarchies is common to all methods
    best, tree = _SEARCHES[method](space)
    table = space.table(best.levels)
    return SearchResult(
        method=method,
        shield=space.shield,
        k=space.k,
        levels=dict(zip(space.shield, best.levels)),
        rows=best.rows,
        violations=best.violations,
        table=table,
        generated=len(tree) - 1,
        seconds=time.perf_counter() - start,
        tree=tuple(tree),
        max_levels=dict(zip(space.shield, space.max_levels)),
    )


def estimate_exhaustive(space: GeneralizationSpace) -> WorkEstimate:
    """The exhaustive search generates every table of the lattice (an exact
    Python integer); measured on 2 cores, a table costs about 0.1 ms plus 60 ns
    per distinct row and column, and about 500 bytes kept in the search tree.

    >>> space = GeneralizationSpace(pd.DataFrame({"a": [1, 2]}), ["a"], 2, {"a": pd.DataFrame([["1", "*"], ["2", "*"]])})
    >>> estimate_exhaustive(space).operations
    2
    """
    tables = space.size
    per_table = 1e-4 + 6e-8 * len(space.weights) * (len(space.shield) + 1)
    return WorkEstimate(
        f"the exhaustive search of {tables:,} generalizations", operations=tables,
        seconds=tables * per_table, peak_bytes=500 * tables,
    )


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
    >>> [r.generated for r in compare_methods(df, ["Zip", "Age", "AC"], 3, arca_hierarchies(df), count="#Rec.")]
    [13, 71, 3]
    """
    return [search(df, shield, k, hierarchies, m, count=count) for m in methods]


def comparison_table(results: Sequence[SearchResult]) -> pd.DataFrame:
    """One row per method: levels, rows kept, violations, tables generated, seconds.

    >>> from anonlib.core.samples import load_sample
    >>> df = load_sample("arca_table1").frame
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
        }
    )


# --- the paper's example hierarchies (Figure 2) ------------------------------------

ARCA_AGE_BANDS = "20-34, 35-44, 45-64, 65-85 | 20-44, 45-85 | 20-85"
ARCA_AC_GROUPS = {"Yes": ["High", "Med", "Low"], "No": ["No"], "Any": ["Yes", "No"]}


def arca_hierarchies(df: pd.DataFrame, zip_column: str = "Zip", age_column: str = "Age", ac_column: str | None = "AC") -> dict[str, pd.DataFrame]:
    """The paper's Figure 2 hierarchies for a table: Zip digit masking (levels 0-5),
    Age bands 20-34/35-44/45-64/65-85 -> 20-44/45-85 -> 20-85 (0-3), and AC
    High/Med/Low -> Yes, No -> No, -> Any (0-2).

    >>> from anonlib.core.samples import load_sample
    >>> {a: h.shape[1] - 1 for a, h in arca_hierarchies(load_sample("arca_table1").frame).items()}
    {'Zip': 5, 'Age': 3, 'AC': 2}
    """
    out = {
        zip_column: masking_hierarchy(df[zip_column].dropna()),
        age_column: interval_hierarchy(df[age_column].dropna(), parse_bands(ARCA_AGE_BANDS)),
    }
    if ac_column is not None:
        out[ac_column] = taxonomy_hierarchy(ARCA_AC_GROUPS)
    return out


# --- the paper's experiment (Section 4.2, Figures 8-10, Table 7) ----------------

HEART_SAMPLES = {"heart_cleveland": "1: Cleveland", "heart_hungarian": "2: Hungarian", "heart_va": "3: VA"}
EXPERIMENT_SHIELDS: tuple[tuple[str, ...], ...] = (
    ("Zip", "Smoker", "Sex", "Age"),
    ("Zip", "Smoker", "Sex"),
    ("Zip", "Smoker", "Age"),
    ("Zip", "Age"),
)
EXPERIMENT_SEED = 2021

# The paper's Table 7 (Cleveland, k = 5): (shield, method) -> (rows, generalizations).
PAPER_TABLE7 = {
    (("Zip", "Smoker", "Sex", "Age"), "exhaustive"): (297, 563),
    (("Zip", "Smoker", "Sex", "Age"), "greedy"): (274, 68),
    (("Zip", "Smoker", "Sex", "Age"), "iab"): (297, 304),
    (("Zip", "Smoker", "Sex"), "exhaustive"): (303, 11),
    (("Zip", "Smoker", "Sex"), "greedy"): (303, 6),
    (("Zip", "Smoker", "Sex"), "iab"): (303, 6),
    (("Zip", "Smoker", "Age"), "exhaustive"): (298, 93),
    (("Zip", "Smoker", "Age"), "greedy"): (274, 11),
    (("Zip", "Smoker", "Age"), "iab"): (298, 51),
    (("Zip", "Age"), "exhaustive"): (298, 14),
    (("Zip", "Age"), "greedy"): (274, 12),
    (("Zip", "Age"), "iab"): (298, 14),
}


def heart_table(frame: pd.DataFrame, seed: int = EXPERIMENT_SEED) -> pd.DataFrame:
    """The paper's seven heart-disease attributes from a UCI heart-disease file.

    Age, Sex (M/F), Smoker, Chol, BS (fasting blood sugar > 120 mg/dl: 1/0),
    Disease (Present when ``num`` > 0) and a synthetic Zip. The processed UCI
    files have no smoking column, so Smoker stands in with ``exang``
    (exercise-induced angina, 1/0): a real binary attribute of the same files
    whose leakage on Cleveland (0.11) is close to the paper's Smoker (0.12).
    Zip is drawn uniformly from 10000-99999 with a fixed seed (the paper adds a
    5-digit Zip without saying how).

    >>> from anonlib.core.samples import load_sample
    >>> t = heart_table(load_sample("heart_cleveland").frame)
    >>> t.columns.tolist(), len(t), t["Zip"].str.len().unique().tolist()
    (['Age', 'Sex', 'Smoker', 'Chol', 'BS', 'Disease', 'Zip'], 303, [5])
    """
    required = ["age", "sex", "exang", "chol", "fbs", "num"]
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise ColumnError(f"A heart-disease table needs the columns {join_names(required)}; missing {join_names(missing)}.")
    rng = np.random.default_rng(seed)

    def whole(column: str) -> pd.Series:
        return pd.to_numeric(frame[column], errors="coerce").round().astype("Int64")

    sex = whole("sex")
    return pd.DataFrame(
        {
            "Age": whole("age"),
            "Sex": sex.map({1: "M", 0: "F"}, na_action="ignore").astype(object),
            "Smoker": whole("exang"),
            "Chol": whole("chol"),
            "BS": whole("fbs"),
            "Disease": np.where(whole("num").fillna(0).to_numpy() > 0, "Present", "Absent"),
            "Zip": rng.integers(10000, 100000, len(frame)).astype(str),
        }
    )


def heart_hierarchies(table: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Hierarchies of the experiment: Zip masking (0-5), Age as in the paper's
    Figure 2 (0-3), Sex and Smoker flat (0-1).

    >>> from anonlib.core.samples import load_sample
    >>> h = heart_hierarchies(heart_table(load_sample("heart_va").frame))
    >>> {a: t.shape[1] - 1 for a, t in h.items()}
    {'Zip': 5, 'Age': 3, 'Sex': 1, 'Smoker': 1}
    """
    out = arca_hierarchies(table, ac_column=None)
    out["Sex"] = flat_hierarchy(table["Sex"])
    out["Smoker"] = flat_hierarchy(table["Smoker"])
    return out


def heart_experiment(
    samples: Sequence[str] = tuple(HEART_SAMPLES),
    shields: Sequence[Sequence[str]] = EXPERIMENT_SHIELDS,
    ks: Sequence[int] = (5,),
    methods: Sequence[str] = METHODS,
    *,
    seed: int = EXPERIMENT_SEED,
) -> pd.DataFrame:
    """The paper's comparison of IAB, exhaustive and greedy on the heart-disease data.

    One row per dataset, shield, k and method: rows kept, violations, total
    levels of the result, tables generated, seconds, and the paper's Table 7
    numbers where they are comparable (Cleveland, k = 5).

    >>> t = heart_experiment(["heart_cleveland"], [("Zip", "Age")], [5])
    >>> t[["method", "rows", "paper_rows"]].values.tolist()
    [['iab', 295, 298], ['exhaustive', 295, 298], ['greedy', 276, 274]]
    """
    from .core.samples import load_sample

    rows = []
    for key in samples:
        table = heart_table(load_sample(key).frame, seed)
        hierarchies = heart_hierarchies(table)
        for shield in shields:
            for k in ks:
                for method in methods:
                    result = search(table, list(shield), k, hierarchies, method)
                    paper = PAPER_TABLE7.get((tuple(shield), method)) if key == "heart_cleveland" and k == 5 else None
                    rows.append(
                        {
                            "dataset": HEART_SAMPLES.get(key, key),
                            "shield": ", ".join(shield),
                            "k": k,
                            "method": method,
                            "levels": ", ".join(f"{a} {v}" for a, v in result.levels.items()),
                            "rows": result.rows,
                            "violations": result.violations,
                            "generalizations": result.generalizations,
                            "generated": result.generated,
                            "seconds": result.seconds,
                            "paper_rows": paper[0] if paper else pd.NA,
                            "paper_generated": paper[1] if paper else pd.NA,
                        }
                    )
    out = pd.DataFrame(rows)
    for column in ("paper_rows", "paper_generated"):
        out[column] = out[column].astype("Int64")
    return out
