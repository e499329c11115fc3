"""Step 2 without ADC: balanced density (Section 3.2.1), population-weighted k-means
(a baseline) and the nearest site of each region (the Voronoi diagram)."""

from __future__ import annotations

import math

import numpy as np
from scipy.spatial import cKDTree

from ...core.errors import ParameterError

# --------------------------------------------------------------------------
# Step 2: site location
# --------------------------------------------------------------------------


def _walk(cumulative: np.ndarray, start: int, ideal: float) -> int:
    """End (exclusive) of the group starting at ``start`` whose population passes ``ideal``.

    Eq. 9: the point that crosses the ideal stays in the group when the sum with
    it is at least as close to the ideal as the sum without it. A group has at
    least one point.
    """
    base = cumulative[start - 1] if start else 0.0
    j = int(np.searchsorted(cumulative, base + ideal, side="left"))
    if j >= len(cumulative):
        return len(cumulative)
    after = cumulative[j] - base
    before = (cumulative[j - 1] - base) if j > start else 0.0
    keep = j == start or (after - ideal) <= (ideal - before)
    return j + 1 if keep else j


def _split_groups(cumulative: np.ndarray, start: int, stop: int, ideal: float) -> list[int]:
    """Boundaries of consecutive groups of about ``ideal`` population in ``[start, stop)``."""
    bounds = []
    while start < stop:
        end = min(_walk(cumulative, start, ideal), stop)
        bounds.append(end)
        start = end
    return bounds


def balanced_density(x: np.ndarray, y: np.ndarray, population: np.ndarray, n_sites: int) -> np.ndarray:
    """Site locations by balanced density (Section 3.2.1): ``n_sites`` x 2 array.

    Rows of about equal population (Eqs. 7-9), cells in each row in proportion
    to its population (Eqs. 10-11), one site per cell at the component-wise
    median of its points (Eqs. 12-13). Exactly ``n_sites`` sites whenever
    there are at least that many points.

    >>> x = np.array([0.0, 1.0, 0.0, 1.0]); y = np.array([0.0, 0.0, 1.0, 1.0])
    >>> balanced_density(x, y, np.array([1, 1, 1, 1]), 4).tolist()
    [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    pop = np.asarray(population, dtype=float)
    n = len(x)
    if n_sites < 1:
        raise ParameterError(f"The number of sites must be at least 1; got {n_sites}.")
    if n_sites > n:
        raise ParameterError(f"There are {n:,} initial regions, so at most {n:,} sites can be placed; got {n_sites:,}.")
    if pop.sum() <= 0:
        pop = np.ones(n)
    total = pop.sum()
    # Eq. 7-8: rows = round(sqrt(S)), ideal row population = round(P / rows).
    n_rows = max(1, int(round(math.sqrt(n_sites))))
    by_y = np.lexsort((x, y))
    cum_y = np.cumsum(pop[by_y])
    ideal_row = max(round(total / n_rows), 1)
    ends = _split_groups(cum_y, 0, n, ideal_row)
    # ASSUMED: a last remnant under half the ideal joins the row below (the paper
    # reduces the number of rows; too much population left makes extra rows).
    if len(ends) > 1 and cum_y[-1] - cum_y[ends[-2] - 1] < ideal_row / 2:
        ends = ends[:-2] + [ends[-1]]
    while len(ends) > n_sites:  # ASSUMED: never more rows than sites; merge the lightest row upwards
        pops = np.diff(np.concatenate([[0.0], cum_y[np.array(ends) - 1]]))
        i = int(np.argmin(pops))
        del ends[i if i < len(ends) - 1 else i - 1]
    starts = [0] + ends[:-1]
    row_pop = np.array([cum_y[e - 1] - (cum_y[s - 1] if s else 0.0) for s, e in zip(starts, ends)])
    row_points = np.array([e - s for s, e in zip(starts, ends)])
    cells = _cells_per_row(row_pop / total, row_points, n_sites)
    sites = []
    for s, e, c in zip(starts, ends, cells):
        members = by_y[s:e]
        order = members[np.lexsort((y[members], x[members]))]
        for group in _row_cells(pop[order], int(c)):
            idx = order[group]
            sites.append((float(np.median(x[idx])), float(np.median(y[idx]))))
    return np.array(sites, dtype=float).reshape(-1, 2)


def _cells_per_row(share: np.ndarray, row_points: np.ndarray, n_sites: int) -> np.ndarray:
    """Eqs. 10-11: cells = max(1, round(S * share)), at most the row's points, summing to S."""
    ideal = n_sites * share
    cells = np.minimum(np.maximum(1, np.rint(ideal)).astype(np.int64), row_points)
    while cells.sum() > n_sites:  # remove from the row most over its share
        excess = np.where(cells > 1, cells - ideal, -np.inf)
        cells[int(np.argmax(excess))] -= 1
    while cells.sum() < n_sites:  # add to the row most under its share (with points left)
        deficit = np.where(cells < row_points, ideal - cells, -np.inf)
        cells[int(np.argmax(deficit))] += 1
    return cells


def _row_cells(pop: np.ndarray, n_cells: int) -> list[slice]:
    """Split one row (points sorted by x) into exactly ``n_cells`` cells of about equal population."""
    n = len(pop)
    cumulative = np.cumsum(pop)
    total = cumulative[-1]
    ideal = max(round(total / n_cells), 1) if total > 0 else 1
    bounds, start = [], 0
    while start < n and len(bounds) < n_cells - 1:
        end = _walk(cumulative, start, ideal) if total > 0 else start + 1
        bounds.append((start, end))
        start = end
    if start < n:  # the final cell takes the rest, even when larger than ideal
        bounds.append((start, n))
    while len(bounds) < n_cells:  # too few cells: split the most populous cell in half
        sizes = [(cumulative[e - 1] - (cumulative[s - 1] if s else 0.0), e - s) for s, e in bounds]
        i = max((j for j in range(len(bounds)) if sizes[j][1] > 1), key=lambda j: sizes[j][0])
        s, e = bounds[i]
        base = cumulative[s - 1] if s else 0.0
        half = int(np.searchsorted(cumulative[s:e] - base, sizes[i][0] / 2.0, side="left")) + s + 1
        half = min(max(half, s + 1), e - 1)
        bounds[i : i + 1] = [(s, half), (half, e)]
    return [slice(s, e) for s, e in bounds]


def kmeans_sites(
    x: np.ndarray,
    y: np.ndarray,
    population: np.ndarray,
    n_sites: int,
    *,
    seed: int | None = None,
    iterations: int = 100,
) -> np.ndarray:
    """Population-weighted k-means (Lloyd's algorithm) as a baseline: ``n_sites`` x 2 array.

    Seeded with ``n_sites`` distinct points drawn with probability proportional
    to population; a centre that loses all its points stays where it is.

    >>> x = np.array([0.0, 1.0, 10.0, 11.0]); y = np.zeros(4)
    >>> sorted(kmeans_sites(x, y, np.array([1, 1, 1, 1]), 2, seed=0)[:, 0].tolist())
    [0.5, 10.5]
    """
    xy = np.column_stack([np.asarray(x, dtype=float), np.asarray(y, dtype=float)])
    pop = np.asarray(population, dtype=float)
    n = len(xy)
    if not 1 <= n_sites <= n:
        raise ParameterError(f"The number of sites must be between 1 and {n:,}; got {n_sites:,}.")
    weights = pop if pop.sum() > 0 else np.ones(n)
    rng = np.random.default_rng(seed)
    p = (weights + 1e-12) / (weights + 1e-12).sum()
    centres = xy[rng.choice(n, size=n_sites, replace=False, p=p)].copy()
    labels = None
    for _ in range(iterations):
        new = cKDTree(centres).query(xy)[1]
        if labels is not None and np.array_equal(new, labels):
            break
        labels = new
        mass = np.bincount(labels, weights=weights, minlength=n_sites)
        filled = mass > 0
        for dim in (0, 1):
            sums = np.bincount(labels, weights=weights * xy[:, dim], minlength=n_sites)
            centres[filled, dim] = sums[filled] / mass[filled]
    return centres


def nearest_site(x: np.ndarray, y: np.ndarray, sites: np.ndarray) -> np.ndarray:
    """Index of the nearest site of every point (the Voronoi diagram of the sites).

    >>> nearest_site(np.array([0.0, 9.0]), np.array([0.0, 0.0]), np.array([[1.0, 0.0], [10.0, 0.0]])).tolist()
    [0, 1]
    """
    return cKDTree(np.asarray(sites, dtype=float)).query(np.column_stack([x, y]))[1].astype(np.int64)
