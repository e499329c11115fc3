"""The paper's Fig. 2: every record's minimum PPP (or PoAC) for every variable taken as
sensitive, and the heatmap columns that draw it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...core.budget import Progress, WorkEstimate, check_work
from ...core.equivalence import EncodedTable, combine
from ...core.errors import EmptySelectionError
from ...core.metrics import weighted_median
from ...core.numbers import whole_number
from .measures import MEASURE_NAMES, NARROW, Person, check_fraction, column_list, encoded, evaluate, persons_of
from .rollup import lattice_matrix
from .subsets import (
    Target,
    check_known,
    check_measure,
    distinct_rows,
    known_text,
    names_of,
    subset_search,
    walk_estimate,
    walk_size,
)

# ------------------------------------------------------- the paper's Fig. 2 matrix


def default_q(p: float, domain_size: int) -> float:
    """The paper's joint choice q = p / (|dom(s)| - 1) (p itself for a single value).

    >>> default_q(0.5, 3)
    0.25
    """
    p = check_fraction(p, "p")
    domain_size = whole_number(domain_size, "The number of sensitive values")
    return p / (domain_size - 1) if domain_size > 1 else p


@dataclass(frozen=True)
class PrivacyMatrix:
    """Fig. 2: every variable in turn sensitive, all others auxiliary, minimum over all subsets.

    ``values[v, i]`` is the minimum PPP (or PoAC) of individual i when
    ``variables[v]`` is sensitive; ``worst[v, i]`` the smallest subset attaining
    it (bit j = ``variables[j]``); ``npp[v, i]`` the NPP with maximum
    auxiliary information, which is also its minimum over all subsets (NPP
    never decreases when information is removed). ``q[v]`` is the PoAC
    threshold used for variable v; ``weights`` the records per row.
    """

    variables: tuple[str, ...]
    measure: str
    include_empty: bool
    q: tuple[float, ...]
    domain_sizes: tuple[int, ...]
    values: np.ndarray
    worst: np.ndarray
    npp: np.ndarray
    weights: np.ndarray

    @property
    def n_individuals(self) -> int:
        return int(self.values.shape[1])

    def subset(self, mask: int) -> tuple[str, ...]:
        """Variable names of a subset bitmask."""
        return names_of(int(mask), self.variables)

    def worst_subset(self, variable: str, row: int) -> tuple[str, ...]:
        """The smallest auxiliary subset giving row ``row`` its minimum when ``variable`` is sensitive."""
        return self.subset(self.worst[self.variables.index(variable), row])

    def worst_subset_names(self, nothing: str = "(nothing)") -> np.ndarray:
        """Per (variable, individual) cell, its worst auxiliary subset as text
        (names joined by ", "; ``nothing`` for the empty subset).

        >>> df = pd.DataFrame({"s": ["x", "y", "x"], "a": [1, 1, 2]})
        >>> privacy_matrix(df, ["s", "a"]).worst_subset_names().tolist()
        [['(nothing)', 'a', 'a'], ['(nothing)', 's', 's']]
        """
        distinct, inverse = np.unique(self.worst, return_inverse=True)
        names = np.array([", ".join(self.subset(m)) or nothing for m in distinct], dtype=object)
        return names[inverse.reshape(self.worst.shape)]

    def protected(self, p: float = 0.0) -> np.ndarray:
        """Boolean (variables x individuals): p-upward privacy (min PPP > p) or,
        for PoAC, q-downward privacy (min PoAC = 1)."""
        if self.measure == "poac":
            return self.values >= 1.0
        return self.values > p

    def summary(self, p: float = 0.0) -> pd.DataFrame:
        """Per variable: domain size, q, share of records protected, median of the
        minimum, and the NPP distribution (median, share with NPP 0)."""
        w = self.weights
        total = float(w.sum())
        protected = self.protected(p)
        rows = []
        for v, name in enumerate(self.variables):
            rows.append(
                {
                    "variable": name,
                    "domain size": self.domain_sizes[v],
                    "q": self.q[v],
                    "protected share": float((protected[v] * w).sum() / total),
                    f"median min {MEASURE_NAMES[self.measure]}": weighted_median(self.values[v], w),
                    "median NPP": weighted_median(self.npp[v], w),
                    "share NPP = 0": float(((self.npp[v] == 0) * w).sum() / total),
                }
            )
        return pd.DataFrame(rows)

    def table(self, frame: pd.DataFrame | None = None) -> pd.DataFrame:
        """One row per individual: (their values,) and per variable the minimum,
        the worst auxiliary subset and the NPP with maximum auxiliary information."""
        label = MEASURE_NAMES[self.measure]
        out = {} if frame is None else {c: frame[c].to_numpy() for c in frame.columns}
        worst = self.worst_subset_names()
        for v, name in enumerate(self.variables):
            out[f"min {label} [{name}]"] = self.values[v]
            out[f"worst subset [{name}]"] = worst[v]
            out[f"NPP [{name}]"] = self.npp[v]
        return pd.DataFrame(out)


def estimate_privacy_matrix(
    df: pd.DataFrame,
    variables: Sequence[str],
    *,
    count: str | None = None,
    max_known: int | None = None,
) -> WorkEstimate:
    """What ``privacy_matrix`` will cost, before it starts: one walk over the
    combinations of the variables, each evaluated for every sensitive variable not in it.

    >>> df = pd.DataFrame({"s": ["x", "y", "x"], "a": [1, 1, 2], "b": [3, 4, 3]})
    >>> e = estimate_privacy_matrix(df, ["s", "a", "b"])
    >>> e.what, e.operations
    ('12 (sensitive variable, auxiliary combination) pairs for 3 distinct records', 7)
    >>> estimate_privacy_matrix(df, ["s", "a", "b"], max_known=1).operations
    4
    """
    variables = column_list(variables, "variables")
    return _matrix_estimate(encoded(df, [], variables, count), len(variables), check_known(max_known))


def _matrix_estimate(table: EncodedTable, m: int, max_known: int | None, distinct: int | None = None) -> WorkEstimate:
    distinct = distinct_rows(table) if distinct is None else distinct
    known = m - 1 if max_known is None else min(max_known, m - 1)
    pairs = m * walk_size(m - 1, known)
    what = (
        f"{pairs:,} (sensitive variable, auxiliary combination) pairs{known_text(m - 1, max_known)} "
        f"for {distinct:,} distinct records"
    )
    return walk_estimate(what, distinct, table.n_rows, m, m / 2, known)


def privacy_matrix(
    df: pd.DataFrame,
    variables: Sequence[str],
    measure: str = "ppp",
    *,
    q: float | None = None,
    p: float = 0.0,
    include_empty: bool = True,
    count: str | None = None,
    progress: Progress | None = None,
    max_known: int | None = None,
    person: str | None = None,
) -> PrivacyMatrix:
    """The paper's Fig. 2: each variable in turn sensitive, all others auxiliary,
    the minimum PPP (or PoAC) over every subset of the others, per individual.

    ``q`` = None uses q = p / (|dom(s)| - 1) per sensitive variable. All
    m * 2^(m-1) (sensitive, subset) pairs come from one walk over the 2^m
    tables of distinct value combinations, each pair evaluated on its table's
    cells and the minimum lifted from table to table (``rollup.py``).
    ``max_known`` narrows the adversary to subsets of at most that many
    variables (a walk over the distinct records that stops at that depth). The work is estimated first
    (``estimate_privacy_matrix``) and refused with a sentence saying how to
    narrow it when it passes the limits of ``anonlib.core.budget``;
    ``progress(done, total, what)`` counts the auxiliary combinations walked. With a
    ``person`` column a record's peers are the record itself and other people's records
    (the walk over the distinct records, with the person among what makes them distinct).

    >>> df = pd.DataFrame({
    ...     "diagnosis": ["Cancer", "Cancer", "Cancer", "Arthrosis", "Diabetes"],
    ...     "gender": ["F", "M", "F", "M", "F"],
    ...     "age": ["45-54", "35-44", "35-44", "55-64", "45-54"]})
    >>> res = privacy_matrix(df, ["diagnosis", "gender", "age"], "poac")
    >>> res.values[:, 2].tolist(), res.worst_subset("diagnosis", 2)
    ([0.0, 1.0, 0.5], ('age',))
    """
    measure = check_measure(measure)
    p = check_fraction(p, "p")
    variables = column_list(variables, "variables")
    if len(variables) < 2:
        raise EmptySelectionError(
            "Choose at least two variables: one is sensitive while the others are auxiliary information."
        )
    max_known = check_known(max_known)
    table = encoded(df, [], variables, None if count is None else count)
    persons = persons_of(df, person, variables, count)
    cards = list(table.cardinalities)
    codes = [np.ascontiguousarray(table.codes[:, j]) for j in range(len(variables))]
    distinct = combine(codes, cards, ordered=False)  # the distinct records, for the estimate and the walk
    check_work(_matrix_estimate(table, len(variables), max_known, distinct[1]), narrow=NARROW)
    qs = [default_q(p, c) for c in cards] if q is None else [check_fraction(q, "q")] * len(variables)
    if persons is None and (max_known is None or max_known >= len(variables) - 1):
        # every subset: the walk over the lattice of distinct tables (rollup.py)
        values, masks, npp_max = lattice_matrix(
            codes, cards, qs, table.weights, measure, include_empty, progress, distinct=distinct
        )
    else:
        values, masks, npp_max = _record_walk(
            table,
            variables,
            codes,
            cards,
            qs,
            measure,
            include_empty,
            progress,
            len(variables) - 1 if max_known is None else max_known,
            persons,
        )
    weights = np.ones(table.n_rows, dtype=np.int64) if table.weights is None else table.weights
    return PrivacyMatrix(
        variables=tuple(variables),
        measure=measure,
        include_empty=include_empty,
        q=tuple(qs),
        domain_sizes=tuple(cards),
        values=values,
        worst=masks,
        npp=npp_max,
        weights=weights,
    )


def _record_walk(
    table: EncodedTable,
    variables: Sequence[str],
    codes: list[np.ndarray],
    cards: list[int],
    qs: list[float],
    measure: str,
    include_empty: bool,
    progress: Progress | None,
    max_known: int,
    person: Person | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Subsets of at most ``max_known`` variables: the depth-first walk over the distinct
    records (subsets.py), which stops at that depth; NPP from the full classes. With
    ``person``, among the record itself and other people's records."""
    targets = [Target(codes[j], cards[j], qs[j], 1 << j) for j in range(len(variables))]
    values, masks = subset_search(
        codes,
        cards,
        targets,
        table.weights,
        measure,
        include_empty,
        progress=progress,
        max_known=min(max_known, len(variables) - 1),
        person=person,
    )
    npp_max = np.vstack(
        [
            evaluate(
                table.classes([c for c in variables if c != s]), codes[j], cards[j], table.weights, "npp", 0.0, person
            )
            for j, s in enumerate(variables)
        ]
    )
    return values, masks, npp_max.astype(np.int64)


# ----------------------------------------------------------- heatmap columns


@dataclass(frozen=True)
class HeatmapColumns:
    """How individuals become heatmap columns.

    ``order`` lists row positions in display order. With ``bins`` None each
    column is one individual (ordered by hierarchical clustering, as R's
    heatmap.2 does); otherwise column j aggregates ``order[bins[j]:bins[j+1]]``.
    """

    order: np.ndarray
    bins: np.ndarray | None
    description: str

    @property
    def n_columns(self) -> int:
        return len(self.order) if self.bins is None else len(self.bins) - 1

    def aggregate(self, values: np.ndarray, how: str = "mean") -> np.ndarray:
        """(rows x columns): the individual's values, or per bin the mean, min or max.

        >>> HeatmapColumns(np.array([1, 0, 2]), np.array([0, 2, 3]), "").aggregate(np.array([[1.0, 0.0, 4.0]]))
        array([[0.5, 4. ]])
        """
        ordered = values[:, self.order]
        if self.bins is None:
            return ordered
        starts = self.bins[:-1]
        if how == "mean":
            return np.add.reduceat(ordered, starts, axis=1) / np.diff(self.bins)[None, :]
        return {"min": np.minimum, "max": np.maximum}[how].reduceat(ordered, starts, axis=1)


def heatmap_columns(values: np.ndarray, *, max_individuals: int = 1500, n_bins: int = 300) -> HeatmapColumns:
    """Column order for a (variables x individuals) matrix: complete-linkage
    hierarchical clustering for up to ``max_individuals`` individuals; beyond,
    individuals sorted by their mean value (then row by row) in ``n_bins`` bins.

    >>> cols = heatmap_columns(np.array([[0.0, 1.0, 0.0, 1.0]]))
    >>> sorted(cols.order.tolist()), cols.bins is None
    ([0, 1, 2, 3], True)
    >>> heatmap_columns(np.array([[0.0, 1.0, 0.5, 1.0]]), max_individuals=2, n_bins=2).order.tolist()
    [0, 2, 1, 3]
    """
    from scipy.cluster.hierarchy import leaves_list, linkage

    n = values.shape[1]
    if n <= 2:
        return HeatmapColumns(np.arange(n), None, "each column is one record")
    if n <= max_individuals:
        tree = linkage(values.T, method="complete", optimal_ordering=n <= 400)
        return HeatmapColumns(
            leaves_list(tree).astype(np.int64),
            None,
            "each column is one record, ordered by hierarchical clustering (complete linkage)",
        )
    keys = [values[r] for r in range(values.shape[0] - 1, -1, -1)] + [values.mean(axis=0)]
    order = np.lexsort(keys)
    bins = np.linspace(0, n, min(n_bins, n) + 1).round().astype(np.int64)
    return HeatmapColumns(
        order,
        bins,
        f"each column is a bin of about {n / (len(bins) - 1):,.0f} records sorted by their mean value; "
        "a cell shows the bin's mean",
    )
