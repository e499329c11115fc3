"""Microaggregation of numeric quasi-identifiers: MDAV (Domingo-Ferrer & Mateo-Sanz 2002).

Records are put in groups of at least k records and each group's values are
replaced by the group's mean (or median), so no record's numbers are more
precise than a group of k. MDAV ("maximum distance to average vector") builds
the groups:

1. Each column is standardized (minus its mean, divided by its standard
   deviation over the records; a constant column is left unscaled), so a column
   in large units does not dominate the Euclidean distance, as MDAV prescribes.
2. While at least 3k records remain: r is the record farthest from the
   centroid of the remaining records; r and its k - 1 nearest remaining records
   form a group; s, the record farthest from r, and its k - 1 nearest form
   another.
3. With 2k to 3k - 1 records left, one group of k is formed around the record
   farthest from the centroid and the rest is the last group; with k to 2k - 1
   left, they are the last group. So every group has k to 2k - 1 records.

Decisions (see ``docs/local.md``):

- Records with the same values on the columns are merged first (the shared
  kernel, ``anonlib.core.equivalence``), and a value shared by at least k
  records forms groups of its own (k to 2k - 1 records each): they lose nothing
  and MDAV would take them as each other's nearest records anyway. This is what
  makes 10^6 records with repeated values feasible; MDAV proper, which is
  O(n^2 / k), runs on the rest.
- A record-count column is honoured as if each row were expanded into its
  records, except that a row is never split: a group is closed once it holds k
  records or more, so with counts a group can hold more than 2k - 1 records
  (never fewer than k). Without counts groups hold k to 2k - 1 records.
- A missing value in a column is refused (a one-sentence error): MDAV needs a
  number for every record. ``statistic="median"`` replaces values by the
  group's median (of its records) instead of its mean.
- Information loss is SSE / SST in the standardized space: the squared
  distances of the records to their released values, over the squared distances
  to the overall mean (0 = nothing lost, 1 = every record replaced by the mean).

Example:
    >>> df = pd.DataFrame({"age": [20, 21, 22, 60, 61, 62, 40], "dx": list("abcdefg")})
    >>> result = microaggregate(df, ["age"], target=ReleaseTarget(3))
    >>> result.table["age"].tolist(), result.group_sizes.tolist()
    ([25.75, 25.75, 25.75, 61.0, 61.0, 61.0, 25.75], [3, 4])
    >>> round(result.loss, 3), result.table["dx"].equals(df["dx"])
    (0.114, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.cells import record_weights
from ..core.equivalence import Classes, encode
from ..core.errors import ColumnError, EmptySelectionError, ParameterError, join_names
from ..measures.target import ReleaseTarget

STATISTICS = ("mean", "median")


@dataclass(frozen=True)
class Microaggregation:
    """The microaggregated table, each row's group, records per group, and the
    information loss (``sse``, ``sst`` in standardized units; ``loss`` = SSE/SST)."""

    table: pd.DataFrame
    groups: np.ndarray
    group_sizes: np.ndarray
    sse: float
    sst: float
    k: int
    columns: tuple[str, ...]
    statistic: str = "mean"

    @property
    def loss(self) -> float:
        """SSE / SST: 0 when nothing changed, 1 when every record became the overall mean."""
        return self.sse / self.sst if self.sst > 0 else 0.0


def mdav(
    df: pd.DataFrame, columns: Sequence[str], k: int, *, count: str | None = None, statistic: str = "mean"
) -> pd.DataFrame:
    """``df`` with ``columns`` microaggregated by MDAV: records in groups of at least
    k (at most 2k - 1 without a count column), each group's values replaced by
    its mean (or median); other columns unchanged; same index.

    >>> mdav(pd.DataFrame({"x": [1.0, 2.0, 9.0, 10.0]}), ["x"], 2)["x"].tolist()
    [1.5, 1.5, 9.5, 9.5]
    """
    return microaggregate(df, columns, target=ReleaseTarget(k), count=count, statistic=statistic).table


def _numbers(df: pd.DataFrame, columns: list[str]) -> np.ndarray:
    lacking = [c for c in columns if c not in df.columns]
    if lacking:
        raise ColumnError(f"These columns do not exist in the data: {join_names(lacking)}.")
    text = [c for c in columns if not pd.api.types.is_numeric_dtype(df[c]) or pd.api.types.is_bool_dtype(df[c])]
    if text:
        raise ColumnError(f"Microaggregation averages numbers; {join_names(text)} is not a numeric column.")
    values = df[columns].astype("float64").to_numpy()
    gaps = [c for j, c in enumerate(columns) if not np.isfinite(values[:, j]).all()]
    if gaps:
        raise ColumnError(
            f"{join_names(gaps)} has missing or infinite values; microaggregation needs a number in every "
            "record (leave those records out or fill them in first)."
        )
    return values


def _standardized(values: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Values minus the records' mean, over their standard deviation (1 for a constant column)."""
    total = weights.sum()
    mean = weights @ values / total if total else np.zeros(values.shape[1])
    spread = np.sqrt(weights @ (values - mean) ** 2 / total) if total else np.ones(values.shape[1])
    spread = np.where(spread > 0, spread, 1.0)
    return (values - mean) / spread, mean, spread


def information_loss(
    original: pd.DataFrame, released: pd.DataFrame, columns: Sequence[str], *, count: str | None = None
) -> tuple[float, float]:
    """(SSE, SST) of ``released`` against ``original`` on numeric ``columns``, in the
    original's standardized units, rows matched by position, weighted by ``count``.

    >>> a = pd.DataFrame({"x": [1.0, 2.0, 9.0, 10.0]})
    >>> information_loss(a, mdav(a, ["x"], 2), ["x"])
    (0.061538461538461466, 4.0)
    """
    columns = list(columns)
    values = _numbers(original, columns)
    after = _numbers(released, columns)
    weights = record_weights(original, count).astype(np.float64)
    z, mean, spread = _standardized(values, weights)
    z_after = (after - mean) / spread
    return float(weights @ ((z - z_after) ** 2).sum(axis=1)), float(weights @ (z**2).sum(axis=1))


def microaggregate(
    df: pd.DataFrame,
    columns: Sequence[str],
    *,
    target: ReleaseTarget,
    count: str | None = None,
    statistic: str = "mean",
) -> Microaggregation:
    """MDAV microaggregation of ``columns`` into groups of at least the target's k records,
    with its information loss (see the module text). Groups are formed of records: a target
    counted in people is refused in one sentence (``mdav`` is the contract's form, taking k).

    >>> r = microaggregate(pd.DataFrame({"x": [1, 1, 1, 5]}), ["x"], target=ReleaseTarget(2), statistic="median")
    >>> r.table["x"].tolist(), r.groups.tolist()
    ([3.0, 1.0, 1.0, 3.0], [1, 0, 0, 1])
    """
    if target.person is not None:
        raise ParameterError(
            "Microaggregation forms groups of records, not of people; with a person column the target counts "
            "people, so generalize or suppress whole people instead."
        )
    k = target.k
    columns = list(columns)
    if not columns:
        raise EmptySelectionError("Choose at least one numeric column to microaggregate.")
    if len(set(columns)) != len(columns):
        raise ColumnError("A column was chosen twice; choose each column once.")
    if count in columns:
        raise ColumnError(f"The record-count column '{count}' cannot be microaggregated.")
    if statistic not in STATISTICS:
        raise ParameterError(f"The group value is the 'mean' or the 'median'; got {statistic!r}.")
    values = _numbers(df, columns)
    weights = record_weights(df, count).astype(np.float64)
    total = int(weights.sum())
    if len(df) and total < k:
        raise ParameterError(f"The table holds {total:,} records, fewer than k = {k}; no group of k can be formed.")
    z, _, _ = _standardized(values, weights)
    groups = _Grouping(df, columns, count, z, weights, k).groups() if len(df) else np.zeros(0, dtype=np.int64)
    classes = Classes.from_ids(groups, int(groups.max()) + 1 if len(groups) else 0, weights)
    released = _group_values(values, weights, groups, classes, statistic)
    table = df.copy(deep=False)
    for j, column in enumerate(columns):
        table[column] = pd.Series(released[:, j], index=df.index, dtype="float64")
    sse, sst = information_loss(df, table, columns, count=count)
    return Microaggregation(table, groups, classes.sizes, sse, sst, k, tuple(columns), statistic)


def _group_values(
    values: np.ndarray, weights: np.ndarray, groups: np.ndarray, classes: Classes, statistic: str
) -> np.ndarray:
    """Each row's group mean or median (of the group's records), per column."""
    if not len(groups):
        return values
    sizes = classes.sizes.astype(np.float64)
    if statistic == "mean":
        sums = np.stack(
            [np.bincount(groups, weights=weights * values[:, j], minlength=len(sizes)) for j in range(values.shape[1])],
            axis=1,
        )
        return (sums / np.where(sizes > 0, sizes, 1.0)[:, None])[groups]
    out = np.empty_like(values)
    starts = np.concatenate([[0.0], np.cumsum(sizes)[:-1]])  # records before each group
    for j in range(values.shape[1]):
        order = np.lexsort((values[:, j], groups))
        cumulative = np.cumsum(weights[order])
        low = np.searchsorted(cumulative, starts + np.floor((sizes - 1) / 2), side="right")
        high = np.searchsorted(cumulative, starts + np.floor(sizes / 2), side="right")
        sorted_values = values[order, j]
        medians = (sorted_values[np.minimum(low, len(order) - 1)] + sorted_values[np.minimum(high, len(order) - 1)]) / 2
        out[:, j] = medians[groups]
    return out


class _Grouping:
    """MDAV on distinct points (rows with equal values merged), each holding a queue
    of rows; groups take whole rows, nearest points first."""

    def __init__(
        self, df: pd.DataFrame, columns: list[str], count: str | None, z: np.ndarray, weights: np.ndarray, k: int
    ):
        classes = encode(df, columns).classes()
        self.k = k
        self.points = z[classes.first_rows]
        self.weights = weights
        self.queue = np.argsort(classes.ids, kind="stable")  # rows of point p: queue[start[p]:end[p]]
        self.end = np.cumsum(classes.rows_per_class)
        self.start = self.end - classes.rows_per_class
        self.left = Classes.from_ids(classes.ids, classes.n_classes, weights).sizes.astype(np.float64)
        self.alive = self.start < self.end
        self.group = np.full(len(df), -1, dtype=np.int64)
        self.n_groups = 0
        self.carved_points: list[int] = []  # the point of each group of repeated values, in order

    def _take(self, p: int, need: float) -> float:
        """Whole rows of point p into the current group until ``need`` records are taken."""
        rows = self.queue[self.start[p] : self.end[p]]
        cumulative = np.cumsum(self.weights[rows])
        n = len(rows) if need >= cumulative[-1] else int(np.searchsorted(cumulative, need, side="left")) + 1
        self.group[rows[:n]] = self.n_groups
        self.start[p] += n
        taken = float(cumulative[n - 1])
        self.left[p] -= taken
        self.alive[p] = self.start[p] < self.end[p]
        return taken

    def _close(self, carved_point: int | None = None) -> None:
        if carved_point is not None:
            self.carved_points.append(carved_point)
        self.n_groups += 1

    def _carve_repeated(self) -> None:
        """Points holding at least k records become groups of their own."""
        for p in np.flatnonzero(self.left >= self.k):
            while self.alive[p]:
                self._take(p, self.k if self.left[p] >= 2 * self.k else self.left[p])
                if self.alive[p] and self.left[p] < self.k:  # whole rows overshot: the rest joins
                    self._take(p, self.left[p])
                self._close(p)

    def _around(self, center: np.ndarray) -> None:
        """A group of the k records nearest ``center`` (whole rows, nearest points first)."""
        alive = np.flatnonzero(self.alive)
        distance = ((self.points[alive] - center) ** 2).sum(axis=1)
        nearest = alive[np.lexsort((alive, distance))] if len(alive) <= self.k else None
        if nearest is None:
            part = np.argpartition(distance, self.k - 1)[: self.k]
            nearest = alive[part[np.lexsort((alive[part], distance[part]))]]
            if self.left[nearest].sum() < self.k:  # rows of zero records among them
                nearest = alive[np.lexsort((alive, distance))]
        need = float(self.k)
        for p in nearest:
            need -= self._take(p, need)
            if need <= 0:
                break
        self._close()

    def _farthest(self, center: np.ndarray) -> np.ndarray:
        alive = np.flatnonzero(self.alive)
        return self.points[alive[np.argmax(((self.points[alive] - center) ** 2).sum(axis=1))]]

    def _centroid(self) -> np.ndarray:
        alive = np.flatnonzero(self.alive)
        return self.left[alive] @ self.points[alive] / self.left[alive].sum()

    def groups(self) -> np.ndarray:
        self._carve_repeated()
        remaining = self.left[self.alive].sum()
        if 0 < remaining < self.k:
            self._join_nearest_group()
            return self.group
        while remaining >= 3 * self.k:
            r = self._farthest(self._centroid())
            self._around(r)
            remaining = self.left[self.alive].sum()
            if remaining >= 2 * self.k:  # always without a count column
                self._around(self._farthest(r))
                remaining = self.left[self.alive].sum()
        if remaining >= 2 * self.k:
            self._around(self._farthest(self._centroid()))
            remaining = self.left[self.alive].sum()
        if self.alive.any():
            last = self.n_groups
            for p in np.flatnonzero(self.alive):
                self._take(p, self.left[p])
            if remaining < self.k and last > 0:  # whole rows overshot (count column): join the last group
                self.group[self.group == last] = last - 1
            else:
                self._close()
        return self.group

    def _join_nearest_group(self) -> None:
        """Fewer than k records left after the repeated values were carved: they join the
        carved group nearest their centroid, which gives up records to them when the two
        together would pass 2k - 1 (its records are equal, so both parts keep k or more)."""
        center = self._centroid()
        rows = np.concatenate([self.queue[self.start[p] : self.end[p]] for p in np.flatnonzero(self.alive)])
        remaining = float(self.weights[rows].sum())
        carved = np.asarray(self.carved_points)
        g = int(np.argmin(((self.points[carved] - center) ** 2).sum(axis=1)))
        members = np.flatnonzero(self.group == g)
        size = float(self.weights[members].sum())
        cumulative = np.cumsum(self.weights[members])
        n = int(np.searchsorted(cumulative, self.k - remaining, side="left")) + 1
        if size + remaining > 2 * self.k - 1 and size - cumulative[n - 1] >= self.k:  # whole rows allow it
            self.group[members[:n]] = self.n_groups
            self.group[rows] = self.n_groups
            self._close()
        else:
            self.group[rows] = g
        self.alive[:] = False
