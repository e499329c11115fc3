"""Step 2 with anonymity-driven clustering (ADC, Section 3.2.2): sites move to lower the
objective F built from the anonymity of the (region, class) cells. The fast search
(moves scored together in batches) and the slow reference it must equal are kept in one
module because the reference is the fast search's specification."""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field

import numpy as np
from scipy.spatial import Delaunay, QhullError, cKDTree

from ...core.budget import Progress, report
from ...core.metrics import weighted_median


@dataclass(frozen=True)
class RegionCells:
    """Records counted per (initial region, quasi-identifier class): the data ADC and the metrics use."""

    region: np.ndarray  # initial-region index of each cell
    qclass: np.ndarray  # quasi-identifier class of each cell
    size: np.ndarray  # records in each cell
    n_classes: int  # number of quasi-identifier classes

    def site_class_sizes(self, assignment: np.ndarray, n_sites: int) -> np.ndarray:
        """Records per (aggregated region, class) as an ``n_sites`` x ``n_classes`` matrix."""
        key = assignment[self.region] * self.n_classes + self.qclass
        sizes = np.bincount(key, weights=self.size, minlength=n_sites * self.n_classes)
        return np.rint(sizes).astype(np.int64).reshape(n_sites, self.n_classes)


_NO_CLASS = np.iinfo(np.int64).max


def _anonymity(matrix: np.ndarray) -> np.ndarray:
    """Per aggregated region: its smallest non-empty class (0 for an empty region)."""
    low = np.where(matrix > 0, matrix, _NO_CLASS).min(axis=1)
    return np.where(low == _NO_CLASS, 0, low)


def adc_objective(anonymity: np.ndarray) -> int:
    """ADC objective (Eq. 14, ASSUMED form): ``F = |A| g + (|A| - |A_g|)``; higher is better.

    ``anonymity`` has one entry per aggregated region (0 = empty, not counted);
    g is the lowest anonymity, A_g the regions at that level.

    >>> adc_objective(np.array([2, 3, 2, 0]))
    7
    """
    return _objective(*_objective_parts(anonymity))


def _objective_parts(anonymity: np.ndarray) -> tuple[int, int, int]:
    """F's parts: |A| (non-empty regions), g (their lowest anonymity) and |A_g| (0s when none)."""
    present = anonymity[anonymity > 0]
    if present.size == 0:
        return 0, 0, 0
    g = int(present.min())
    return int(present.size), g, int(np.count_nonzero(present == g))


def _objective(present: int, lowest: int, at_lowest: int) -> int:
    """Eq. 14 from its parts: ``|A| g + (|A| - |A_g|)``."""
    return present * lowest + (present - at_lowest)


@dataclass(frozen=True)
class AdcTrace:
    """What ADC did: objective after each committed move, passes, moves tried and committed."""

    objectives: tuple[int, ...]
    passes: int
    tried: int
    committed: int
    converged: bool


def _close(a: np.ndarray, b: np.ndarray) -> bool:
    """``np.allclose(a, b)`` for two points, without its overhead (rtol 1e-5, atol 1e-8).

    >>> _close(np.array([1.0, 2.0]), np.array([1.0, 2.00001])), _close(np.array([0.0, 0.0]), np.array([0.0, 1e-7]))
    (True, False)
    """
    return bool(abs(a[0] - b[0]) <= 1e-8 + 1e-5 * abs(b[0]) and abs(a[1] - b[1]) <= 1e-8 + 1e-5 * abs(b[1]))


def _ranges(starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """The concatenation of ``range(a, b)`` for each pair, without a Python loop.

    >>> _ranges(np.array([2, 7, 4]), np.array([4, 7, 6])).tolist()
    [2, 3, 4, 5]
    """
    lengths = stops - starts
    ends = np.cumsum(lengths)
    if ends.size == 0:
        return np.zeros(0, dtype=np.int64)
    # position i of range j is starts[j] + (i - its offset); an empty range repeats nothing
    return np.arange(ends[-1]) + np.repeat(starts - (ends - lengths), lengths)


BUCKET_POINTS = 16
BATCH_CELLS = 250_000  # numbers per array when moves are scored together (2 MB of floats)
BATCH_MOVES = 512  # at most this many moves scored together


class _PointIndex:
    """Where the points are, so a trial site move looks only at the points it can change.

    Points are bucketed on a grid of about BUCKET_POINTS points a bucket; each non-empty
    bucket keeps the bounding box of its points and, for the current sites, the
    largest distance of its points to their site. A point p can join a site moved
    to t only if |p - t| < its current distance, so only buckets whose box is
    nearer to t than their largest distance need a look (exact: the comparison
    is then made point by point, as in the full rescan).
    """

    def __init__(self, x: np.ndarray, y: np.ndarray) -> None:
        n = len(x)
        side = max(1, int(math.sqrt(n / BUCKET_POINTS)))
        span_x = max(float(x.max() - x.min()), 1e-9) if n else 1.0
        span_y = max(float(y.max() - y.min()), 1e-9) if n else 1.0
        gx = np.minimum(((x - x.min()) / span_x * side).astype(np.int64), side - 1) if n else x.astype(np.int64)
        gy = np.minimum(((y - y.min()) / span_y * side).astype(np.int64), side - 1) if n else y.astype(np.int64)
        bucket = gx * side + gy
        self.order = np.argsort(bucket, kind="stable")  # points, bucket by bucket
        sorted_bucket = bucket[self.order]
        self.starts = (
            np.flatnonzero(np.r_[True, sorted_bucket[1:] != sorted_bucket[:-1]]) if n else np.zeros(0, np.int64)
        )
        self.stops = np.r_[self.starts[1:], n].astype(np.int64)
        xs, ys = x[self.order], y[self.order]
        self.x0, self.x1 = np.minimum.reduceat(xs, self.starts), np.maximum.reduceat(xs, self.starts)
        self.y0, self.y1 = np.minimum.reduceat(ys, self.starts), np.maximum.reduceat(ys, self.starts)
        self.limit_sq = np.full(len(self.starts), 1e-12)

    def update(self, dist: np.ndarray) -> None:
        """Each bucket's largest distance to its site, after the sites moved, with a tolerance
        (kept squared, so a query compares squared distances)."""
        self.limit_sq = (np.maximum.reduceat(dist[self.order], self.starts) * (1 + 1e-9) + 1e-6) ** 2

    def candidates(self, tx: np.ndarray, ty: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each target (tx[i], ty[i]), the points that may be nearer to it than to their
        site (a superset): ``(target, point)`` pairs, target by target. Targets are taken a
        chunk at a time so the (targets x buckets) distances stay within ``BATCH_CELLS``."""
        chunk = max(1, BATCH_CELLS // max(len(self.starts), 1))
        targets, points = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
        for lo in range(0, len(tx), chunk):
            cx, cy = tx[lo : lo + chunk, None], ty[lo : lo + chunk, None]
            dx = np.maximum(np.maximum(self.x0 - cx, cx - self.x1), 0.0)
            dy = np.maximum(np.maximum(self.y0 - cy, cy - self.y1), 0.0)
            target, near = np.nonzero(dx * dx + dy * dy <= self.limit_sq)
            points.append(self.order[_ranges(self.starts[near], self.stops[near])])
            targets.append(np.repeat(target + lo, self.stops[near] - self.starts[near]))
        return np.concatenate(targets), np.concatenate(points)


class _AdcState:
    """The sites ADC holds and what follows from them: each point's site and distance,
    records per (site, class), each site's anonymity and F; plus the points of each site.

    With ``previous`` (a state of the same points and cells) and ``cells_of`` (the
    cells of given points, point by point, and how many each point has), every
    point is still assigned afresh, but the records per (site, class) are moved
    only for the points whose site changed: the same integers as a full recount
    (``site_class_sizes``) at the cost of the changes.
    """

    def __init__(
        self,
        xy: np.ndarray,
        cells: RegionCells,
        index: _PointIndex,
        sites: np.ndarray,
        previous: _AdcState | None = None,
        cells_of=None,
    ) -> None:
        self.sites = sites
        self.tree = cKDTree(sites)
        self.dist, self.assignment = self.tree.query(xy)
        if previous is None:
            self.matrix = cells.site_class_sizes(self.assignment, len(sites))
        else:
            self.matrix = previous.matrix.copy()
            changed = np.flatnonzero(self.assignment != previous.assignment)
            if changed.size:
                idx, counts = cells_of(changed)
                q, size = cells.qclass[idx], cells.size[idx].astype(np.int64)
                np.subtract.at(self.matrix, (np.repeat(previous.assignment[changed], counts), q), size)
                np.add.at(self.matrix, (np.repeat(self.assignment[changed], counts), q), size)
        self.anonymity = _anonymity(self.matrix)
        # F and its parts (|A|, g, |A_g|), so a move changing a few sites is scored without a full pass
        self.present, self.lowest, self.at_lowest = _objective_parts(self.anonymity)
        self.objective = _objective(self.present, self.lowest, self.at_lowest)
        self.site_order = np.argsort(self.assignment, kind="stable")  # points, site by site
        self.site_start = np.searchsorted(self.assignment[self.site_order], np.arange(len(sites) + 1))
        self.tree_points = xy
        self._runner_up: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        index.update(self.dist)

    def runners_up(self, sites: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For the points of ``sites`` (as ``points_of(sites)``): the nearest other site and
        its distance. Kept per site; the sites not yet known are queried together."""
        missing = np.array([s for s in dict.fromkeys(sites.tolist()) if s not in self._runner_up], dtype=np.int64)
        if missing.size:
            members = self.points_of(missing)
            sizes = self.site_start[missing + 1] - self.site_start[missing]
            dd, ii = self.tree.query(self.tree_points[members], k=2)
            first_is_self = ii[:, 0] == np.repeat(missing, sizes)
            other = np.where(first_is_self, ii[:, 1], ii[:, 0])
            distance = np.where(first_is_self, dd[:, 1], dd[:, 0])
            bounds = np.cumsum(sizes)[:-1]
            for site, o, d in zip(missing.tolist(), np.split(other, bounds), np.split(distance, bounds)):
                self._runner_up[site] = (o, d)
        parts = [self._runner_up[s] for s in sites.tolist()]
        return np.concatenate([o for o, _ in parts]), np.concatenate([d for _, d in parts])

    def points_of(self, sites) -> np.ndarray:
        """The points of the given site, or sites (ascending within each site)."""
        if np.ndim(sites) == 0:
            return self.site_order[self.site_start[sites] : self.site_start[sites + 1]]
        sites = np.asarray(sites, dtype=np.int64)
        return self.site_order[_ranges(self.site_start[sites], self.site_start[sites + 1])]


@dataclass
class _Try:
    """A tried move, remembered for the next pass while nothing it read has changed.

    It read ``sites`` at ``versions`` (the region, its ring, the sites whose points
    the move changes and its points' runner-up sites) and the region's ``ring``.
    ``target`` None: no move (no members of the class nearby, or the target is the
    site itself). ``rows``/``anonymity``: the sites whose anonymity the move changes
    and their new anonymity. A site moved nearer than ``reach`` to the region's site
    may become the runner-up of one of its points.
    """

    region: int
    sites: np.ndarray
    versions: np.ndarray
    ring: np.ndarray
    target: np.ndarray | None = None
    rows: np.ndarray | None = None
    anonymity: np.ndarray | None = None
    reach: float = 0.0
    valid: bool = True


@dataclass
class _Neighbourhood:
    """A region's neighbourhood (its Voronoi cell plus the polygon through its ring) and the
    targets found in it. It read the region's site and points and its ring's sites (and
    their points when the ring has under 3 sites): it holds while the ring and their
    ``versions`` stay (``checked``: the commit count when that was last confirmed)."""

    ring: np.ndarray
    versions: np.ndarray
    cells: np.ndarray
    targets: dict[int, np.ndarray | None] = field(default_factory=dict)  # class -> target
    checked: int = -1


class _AdcSearch:
    """ADC's moves on an ``_AdcState``: each tried move scored on the points it can change,
    and failed moves remembered until something they read changes (so the pass that
    confirms convergence mostly recalls).

    The state changes only when a move is committed (33 of ~20,000 scorings on all US
    ZIP areas), so the moves a pass is about to try can be scored together in one array
    pass (``score_ahead``); the scores hold until the next commit. A region's
    neighbourhood and targets hold while the sites and points they read stay.
    """

    def __init__(self, x: np.ndarray, y: np.ndarray, cells: RegionCells, seed_sites: np.ndarray) -> None:
        self.x, self.y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        self.xy = np.column_stack([self.x, self.y])
        self.cells = cells
        self.by_point = np.argsort(cells.region, kind="stable")  # cells, point by point
        self.point_start = np.searchsorted(cells.region[self.by_point], np.arange(len(self.x) + 1))
        self.index = _PointIndex(self.x, self.y)
        self.points_tree = cKDTree(self.xy)
        self.state = _AdcState(self.xy, cells, self.index, np.array(seed_sites, dtype=float))
        self.version = np.zeros(len(seed_sites), dtype=np.int64)  # bumped when a site moves or its points change
        self.tries: dict[tuple[int, int], _Try] = {}
        self.nearby: dict[int, _Neighbourhood] = {}  # per region, kept while what it read stays
        self.commits = 0
        self.scored: dict[tuple[int, float, float], tuple] = {}  # (region, target) -> its score, until a commit

    def cells_of(self, points: np.ndarray) -> np.ndarray:
        return self.by_point[_ranges(self.point_start[points], self.point_start[points + 1])]

    def cells_and_counts(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The cells of ``points`` (point by point) and how many each point has."""
        return self.cells_of(points), self.point_start[points + 1] - self.point_start[points]

    def trial(self, sites: np.ndarray) -> _AdcState:
        """The state with ``sites``: every point assigned afresh, counts moved incrementally."""
        return _AdcState(self.xy, self.cells, self.index, sites, previous=self.state, cells_of=self.cells_and_counts)

    def neighbourhood_cells(self, region: int, ring: np.ndarray) -> np.ndarray:
        """Cells of the region's neighbourhood, in cell order: its Voronoi cell plus the
        polygon through its adjacent sites (clockwise)."""
        import shapely

        state, x, y = self.state, self.x, self.y
        sites = state.sites
        if len(ring) >= 3:
            centre = sites[region]
            angles = np.arctan2(sites[ring, 1] - centre[1], sites[ring, 0] - centre[0])
            polygon = shapely.Polygon(sites[ring[np.argsort(-angles)]])  # clockwise
            in_ring = np.zeros(0, dtype=np.int64)
            if polygon.is_valid:  # the polygon lies in the disc through its farthest vertex
                radius = float(np.hypot(*(sites[ring] - centre).T).max())
                near = np.asarray(self.points_tree.query_ball_point(centre, radius * (1 + 1e-9) + 1e-6), dtype=np.int64)
                in_ring = near[shapely.contains_xy(polygon, x[near], y[near])]
        else:
            in_ring = state.points_of(ring)
        return np.sort(self.cells_of(np.union1d(state.points_of(region), in_ring)))

    def target(self, region: int, q: int, ring: np.ndarray) -> np.ndarray | None:
        """Eqs. 18-19: where the region's site moves for class ``q``, the weighted median of
        the class's members in its neighbourhood; None when none are nearby or the site is
        already there."""
        held = self.nearby.get(region)
        if held is None or held.checked != self.commits:
            read = self.version[np.concatenate([[region], ring])]
            if held is None or not np.array_equal(held.ring, ring) or not np.array_equal(held.versions, read):
                held = self.nearby[region] = _Neighbourhood(ring, read, self.neighbourhood_cells(region, ring))
            held.checked = self.commits
        nearby, targets = held.cells, held.targets
        if q not in targets:
            cells = self.cells
            members = nearby[cells.qclass[nearby] == q]
            target = None
            if members.size:
                pts, w = cells.region[members], cells.size[members]
                target = np.array([weighted_median(self.x[pts], w), weighted_median(self.y[pts], w)])
                if _close(target, self.state.sites[region]):
                    target = None
            targets[q] = target
        return targets[q]

    def unscored(self, region: int, q: int, ring: np.ndarray) -> bool:
        """Whether trying this move would need a new score on the current state."""
        target = self.target(region, q, ring)
        return target is not None and (region, float(target[0]), float(target[1])) not in self.scored

    def attempt(self, region: int, q: int, ring: np.ndarray) -> _Try:
        """The move of the region's site for class ``q``, scored on the points it can change,
        and remembered."""
        entry = _Try(region, np.zeros(0, np.int64), np.zeros(0, np.int64), ring)
        read = [np.array([region]), ring]
        target = self.target(region, q, ring)
        if target is not None:
            entry.target = target
            key = (region, float(target[0]), float(target[1]))
            if key not in self.scored:  # two classes of a region often give the same target
                self.score_ahead([(region, q, ring)])
            entry.rows, entry.anonymity, entry.reach, scored_read = self.scored[key]
            read += scored_read
        entry.sites = np.concatenate(read)  # repeats do no harm
        entry.versions = self.version[entry.sites].copy()
        self.tries[region, q] = entry
        return entry

    def score_ahead(self, moves) -> None:
        """Score the moves ``(region, class, ring)`` not yet scored on this state, together."""
        todo: dict[tuple[int, float, float], np.ndarray] = {}
        for region, q, ring in moves:
            target = self.target(region, q, ring)
            if target is not None:
                key = (region, float(target[0]), float(target[1]))
                if key not in self.scored:
                    todo.setdefault(key, target)
        if todo:
            self._score([key[0] for key in todo], np.array(list(todo.values())))

    def _score(self, regions: list[int], targets: np.ndarray) -> None:
        """For each move of ``regions[i]``'s site to ``targets[i]``: which sites change
        anonymity, and to what (into ``self.scored``, with what the move read).

        Only the points found near the target (``_PointIndex``) and the region's own points
        (to their runner-up site) are recounted: one array pass over all the moves, each
        point and cell tagged with its move.
        """
        state, cells, x, y = self.state, self.cells, self.x, self.y
        regions_ = np.asarray(regions, dtype=np.int64)
        tx, ty = targets[:, 0].copy(), targets[:, 1].copy()
        n_moves, n_sites, width = len(regions_), len(state.sites), cells.n_classes
        # points near a target that it takes from another site
        near_move, near = self.index.candidates(tx, ty)
        d_near = np.hypot(x[near] - tx[near_move], y[near] - ty[near_move])
        taken = (d_near < state.dist[near]) & (state.assignment[near] != regions_[near_move])
        move, changed, destination = [near_move[taken]], [near[taken]], [regions_[near_move[taken]]]
        # the region's own points stay, or go to their runner-up site if it is now nearer.
        # Points near a target that it does not take only matter if they come to be farther
        # from their site (``commit`` checks those); so a move reads the sites that change.
        sizes = state.site_start[regions_ + 1] - state.site_start[regions_]
        member_bounds = np.concatenate([[0], np.cumsum(sizes)])
        reach = np.zeros(n_moves)
        others = None
        if n_sites > 1 and member_bounds[-1]:
            members, member_move = state.points_of(regions_), np.repeat(np.arange(n_moves), sizes)
            others, d_other = state.runners_up(regions_)
            d_new = np.hypot(x[members] - tx[member_move], y[members] - ty[member_move])
            leaving = d_other < d_new
            np.maximum.at(reach, member_move, d_other + state.dist[members])
            move.append(member_move[leaving])
            changed.append(members[leaving])
            destination.append(others[leaving])
        move, changed, destination = np.concatenate(move), np.concatenate(changed), np.concatenate(destination)
        # records per (move, changed site, class): out of the origin, into the destination
        keys, at = np.unique(
            np.concatenate([move * n_sites + state.assignment[changed], move * n_sites + destination]),
            return_inverse=True,
        )  # at: the (move, site) row of each point's origin, then destination
        counts = self.point_start[changed + 1] - self.point_start[changed]
        cell_idx = self.cells_of(changed)
        qs, size = np.tile(cells.qclass[cell_idx], 2), cells.size[cell_idx].astype(float)
        moved = np.bincount(
            np.repeat(at, np.tile(counts, 2)) * width + qs,
            weights=np.concatenate([-size, size]),
            minlength=keys.size * width,
        )
        rows_all = keys % n_sites
        anonymity_all = _anonymity(state.matrix[rows_all] + np.rint(moved).astype(np.int64).reshape(keys.size, width))
        row_bounds = np.searchsorted(keys // n_sites, np.arange(n_moves + 1))
        for i in range(n_moves):
            rows = rows_all[row_bounds[i] : row_bounds[i + 1]]
            read = [rows] if others is None or not sizes[i] else [others[member_bounds[i] : member_bounds[i + 1]], rows]
            self.scored[regions[i], float(tx[i]), float(ty[i])] = (
                rows,
                anonymity_all[row_bounds[i] : row_bounds[i + 1]],
                float(reach[i]),
                read,
            )

    def recalled(self, region: int, q: int, ring: np.ndarray) -> _Try | None:
        """The remembered try of this region and class, if nothing it read has changed."""
        entry = self.tries.get((region, q))
        if (
            entry is None
            or not entry.valid
            or not np.array_equal(entry.ring, ring)
            or not np.array_equal(self.version[entry.sites], entry.versions)
        ):
            return None
        return entry

    def objective_after(self, entry: _Try) -> int:
        """F after the move: its sites at their new anonymity, the others as they are now.

        From the state's |A|, g and |A_g| and the few changed sites (``entry.rows`` are
        distinct): while some unchanged site stays at g, the unchanged sites' lowest level
        is g, so the new lowest level and its count follow from the changed sites alone.
        Otherwise (the move lifts every site at g) the whole vector is recounted.
        """
        state = self.state
        if entry.rows.size == 0:
            return state.objective
        old, new = state.anonymity[entry.rows].tolist(), entry.anonymity.tolist()
        g = state.lowest
        unchanged_at_g = state.at_lowest - old.count(g)
        if state.present == 0 or unchanged_at_g == 0:
            trial = state.anonymity.copy()
            trial[entry.rows] = entry.anonymity
            return adc_objective(trial)
        changed_present = [a for a in new if a > 0]
        present = state.present - sum(a > 0 for a in old) + len(changed_present)
        low = min(g, *changed_present) if changed_present else g
        return _objective(present, low, changed_present.count(low) + (unchanged_at_g if low == g else 0))

    def commit(self, trial: _AdcState, moved: int) -> None:
        """Keep the trial's sites, and forget the tries they may change: those that read a
        site that moved or whose points changed (versions), those whose target may now
        take a point that is farther from its site than before, and those whose region's
        points may now have the moved site as runner-up."""
        old = self.state
        changed = np.flatnonzero(trial.assignment != old.assignment)
        self.version[moved] += 1
        self.version[old.assignment[changed]] += 1
        self.version[trial.assignment[changed]] += 1
        self.state = trial
        self.commits += 1
        self.scored.clear()
        entries = [e for e in self.tries.values() if e.valid and e.target is not None]
        if not entries:
            return
        targets = np.array([e.target for e in entries])
        stale = np.zeros(len(entries), dtype=bool)
        farther = np.flatnonzero(trial.dist > old.dist)
        if farther.size:
            gap = np.hypot(targets[:, 0, None] - self.x[farther], targets[:, 1, None] - self.y[farther])
            stale |= (gap <= trial.dist[farther] * (1 + 1e-9) + 1e-6).any(axis=1)
        centres = trial.sites[[e.region for e in entries]]
        reach = np.array([e.reach for e in entries])
        position = trial.sites[moved]
        stale |= np.hypot(centres[:, 0] - position[0], centres[:, 1] - position[1]) <= reach * (1 + 1e-9) + 1e-6
        for entry in np.array(entries, dtype=object)[stale]:
            entry.valid = False


def _upcoming(search: _AdcSearch, regions: np.ndarray, g: int, neighbours: list[np.ndarray]):
    """The moves ``(region, class, ring)`` a pass tries on ``regions`` (in order) while no
    move is committed: the regions at level g, each class at g, unless recalled."""
    state = search.state
    for region in regions.tolist():
        if state.anonymity[region] == g:
            ring = neighbours[region]
            for q in np.flatnonzero(state.matrix[region] == g).tolist():
                if search.recalled(region, q, ring) is None:
                    yield region, q, ring


def adc_sites(
    x: np.ndarray,
    y: np.ndarray,
    cells: RegionCells,
    seed_sites: np.ndarray,
    k: int,
    *,
    max_passes: int = 50,
    time_limit: float | None = None,
    progress: Progress | None = None,
) -> tuple[np.ndarray, AdcTrace]:
    """Anonymity-driven clustering (Section 3.2.2) from ``seed_sites``: ``(sites, trace)``.

    Each pass: for each aggregated region at the lowest anonymity g and each
    of its bottleneck classes, collect the points of its neighbourhood (its
    Voronoi cell plus the polygon through its adjacent sites) holding members
    of that class, move the site to their weighted median (Eqs. 18-19), and
    commit only if F strictly increases. Stops when every region reaches k,
    when a pass commits nothing, after ``max_passes`` or after ``time_limit``
    seconds. A move is first scored on the points it can change
    (``_AdcSearch``); an apparent gain is confirmed by a full reassignment of every point
    before it is committed, so F never decreases. A failed move is remembered and recalled
    in the next pass while nothing it read has changed. The result equals
    ``adc_sites_reference`` (every move rescanning every point), which the
    tests and the bench check. ``progress(done, total, what)``: regions looked at
    of those at level g in the pass.

    Three points; class 0 has one member at each point, class 1 two members
    at x=10. Seeded with sites at x=0 and x=10, ADC keeps only moves that raise F:

    >>> cells = RegionCells(region=np.array([0, 1, 2, 2]), qclass=np.array([0, 0, 0, 1]),
    ...                size=np.array([1, 1, 1, 2]), n_classes=2)
    >>> x, y = np.array([0.0, 0.0, 10.0]), np.array([0.0, 1.0, 0.0])
    >>> sites, trace = adc_sites(x, y, cells, np.array([[0.0, 0.0], [10.0, 0.0]]), k=2)
    >>> trace.objectives[0] <= trace.objectives[-1], trace.converged
    (True, True)
    """
    started = time.perf_counter()
    search = _AdcSearch(x, y, cells, seed_sites)
    # moves scored together: 1 after a commit, doubling while none is committed (the
    # scores are lost at a commit); about 8 changed sites a move, each a row of classes,
    # within BATCH_CELLS numbers
    ahead, batch_moves = 1, max(1, min(BATCH_MOVES, BATCH_CELLS // (8 * max(cells.n_classes, 1))))
    objectives, tried, committed, passes, converged = [search.state.objective], 0, 0, 0, False
    last_report = 0.0
    timed_out = False
    previous_g = None
    for passes in range(1, max_passes + 1):
        anonymity = search.state.anonymity
        present = anonymity[anonymity > 0]
        if present.size == 0 or present.min() >= k:
            converged = True
            break
        g = int(present.min())
        if previous_g is not None and g != previous_g:  # the remembered scores assumed the old level
            search.tries.clear()
        previous_g = g
        lowest = np.flatnonzero(anonymity == g)
        neighbours = _adjacent_sites(search.state.sites)
        moved = False
        for step, region in enumerate(lowest):
            now = time.perf_counter()
            if time_limit is not None and now - started > time_limit:
                timed_out = True
                break
            state = search.state
            if progress is not None and now - last_report > 0.1:
                last_report = now
                report(progress, step, len(lowest), f"pass {passes}: {committed:,} moves kept, F = {state.objective:,}")
            if step:  # a region is visited once a pass: its neighbourhood is not kept past its visit
                search.nearby.pop(int(lowest[step - 1]), None)
            if state.anonymity[region] != g:  # already improved by an earlier move in this pass
                continue
            ring = neighbours[region]
            for q in np.flatnonzero(state.matrix[region] == g):
                entry = search.recalled(region, q, ring)
                if entry is None:
                    if search.unscored(region, q, ring):  # score this move and the next ones together
                        search.score_ahead(itertools.islice(_upcoming(search, lowest[step:], g, neighbours), ahead))
                        ahead = min(2 * ahead, batch_moves)
                    entry = search.attempt(region, q, ring)
                if entry.target is None:
                    continue
                tried += 1
                if search.objective_after(entry) <= state.objective:
                    continue
                candidate = state.sites.copy()
                candidate[region] = entry.target
                trial = search.trial(candidate)  # a full reassignment of the points
                if trial.objective > state.objective:  # commit only on strict improvement (full recount)
                    search.commit(trial, region)
                    ahead = 1
                    objectives.append(trial.objective)
                    committed += 1
                    moved = True
                    neighbours = _adjacent_sites(trial.sites)
                    break
                search.index.update(state.dist)  # the trial's distances were not kept
                entry.valid = False
        if timed_out or not moved:
            converged = not timed_out
            break
    state = search.state
    if progress is not None:
        why = f"stopped at the {time_limit:g} s time limit" if timed_out else f"finished after {passes} passes"
        report(progress, 1, 1, f"ADC {why}: {committed:,} of {tried:,} moves kept, F = {state.objective:,}")
    return state.sites, AdcTrace(tuple(objectives), passes, tried, committed, converged)


def adc_sites_reference(
    x: np.ndarray,
    y: np.ndarray,
    cells: RegionCells,
    seed_sites: np.ndarray,
    k: int,
    *,
    max_passes: int = 50,
    time_limit: float | None = None,
    progress: Progress | None = None,
) -> tuple[np.ndarray, AdcTrace]:
    """The first ADC implementation, kept as the slow reference ``adc_sites`` must equal.

    Every tried move rescans all points (new distances, members of the moved
    site, its Voronoi ring) and looks cells up point by point; ``adc_sites`` does
    the same arithmetic on the nearby points only. Tests and ``python -m bench
    scale`` compare the two (same sites, same trace).

    Anonymity-driven clustering (Section 3.2.2) from ``seed_sites``: ``(sites, trace)``.

    Each pass: for each aggregated region at the lowest anonymity g and each
    of its bottleneck classes, collect the points of its neighbourhood (its
    Voronoi cell plus the polygon through its adjacent sites) holding members
    of that class, move the site to their weighted median (Eqs. 18-19), and
    commit only if F strictly increases. Stops when every region reaches k,
    when a pass commits nothing, after ``max_passes`` or after ``time_limit``
    seconds. A move is first scored incrementally (only the points that change
    site are recounted); an apparent gain is confirmed by a full recount
    before it is committed, so F never decreases.

    Three points; class 0 has one member at each point, class 1 two members
    at x=10. Seeded with sites at x=0 and x=10, ADC keeps only moves that raise F:

    >>> cells = RegionCells(region=np.array([0, 1, 2, 2]), qclass=np.array([0, 0, 0, 1]),
    ...                size=np.array([1, 1, 1, 2]), n_classes=2)
    >>> x, y = np.array([0.0, 0.0, 10.0]), np.array([0.0, 1.0, 0.0])
    >>> sites, trace = adc_sites_reference(x, y, cells, np.array([[0.0, 0.0], [10.0, 0.0]]), k=2)
    >>> trace.objectives[0] <= trace.objectives[-1], trace.converged
    (True, True)
    """
    import shapely

    started = time.perf_counter()
    sites = np.array(seed_sites, dtype=float)
    n_sites = len(sites)
    xy = np.column_stack([x, y])
    # Points holding members of each class: cells sorted by class.
    by_class = np.argsort(cells.qclass, kind="stable")
    class_start = np.searchsorted(cells.qclass[by_class], np.arange(cells.n_classes + 1))
    # Cells of each point: cells sorted by point.
    by_point = np.argsort(cells.region, kind="stable")
    point_start = np.searchsorted(cells.region[by_point], np.arange(len(x) + 1))

    def full(candidate: np.ndarray):
        tree = cKDTree(candidate)
        dist, assignment = tree.query(xy)
        matrix = cells.site_class_sizes(assignment, n_sites)
        anonymity = _anonymity(matrix)
        return tree, dist, assignment, matrix, anonymity, adc_objective(anonymity)

    def quick(region: int, target: np.ndarray) -> int:
        """F after moving ``region``'s site to ``target``, recounting only the points that change site."""
        d_new = np.hypot(x - target[0], y - target[1])
        gained = np.flatnonzero((d_new < dist) & (assignment != region))
        members = np.flatnonzero(assignment == region)
        new_site = np.full(len(members), region)
        if members.size and n_sites > 1:
            dd, ii = tree.query(xy[members], k=2)
            first_is_self = ii[:, 0] == region
            other = np.where(first_is_self, ii[:, 1], ii[:, 0])
            d_other = np.where(first_is_self, dd[:, 1], dd[:, 0])
            new_site = np.where(d_other < d_new[members], other, region)
        leaving = new_site != region
        changed = np.concatenate([gained, members[leaving]])
        if changed.size == 0:
            return best
        destination = np.concatenate([np.full(gained.size, region), new_site[leaving]])
        idx = [by_point[point_start[p] : point_start[p + 1]] for p in changed]
        counts = [len(i) for i in idx]
        cell_idx = np.concatenate(idx)
        old_rows = np.repeat(assignment[changed], counts)
        new_rows = np.repeat(destination, counts)
        rows = np.unique(np.concatenate([old_rows, new_rows]))
        local = {int(r): j for j, r in enumerate(rows)}
        block = matrix[rows].copy()
        q, size = cells.qclass[cell_idx], cells.size[cell_idx]
        np.subtract.at(block, (np.array([local[int(r)] for r in old_rows], dtype=np.int64), q), size)
        np.add.at(block, (np.array([local[int(r)] for r in new_rows], dtype=np.int64), q), size)
        trial = anonymity.copy()
        trial[rows] = _anonymity(block)
        return adc_objective(trial)

    tree, dist, assignment, matrix, anonymity, best = full(sites)
    objectives, tried, committed, passes, converged = [best], 0, 0, 0, False
    last_report = 0.0
    timed_out = False
    for passes in range(1, max_passes + 1):
        present = anonymity[anonymity > 0]
        if present.size == 0 or present.min() >= k:
            converged = True
            break
        g = int(present.min())
        lowest = np.flatnonzero(anonymity == g)
        neighbours = _adjacent_sites(sites)
        moved = False
        for step, region in enumerate(lowest):
            now = time.perf_counter()
            if time_limit is not None and now - started > time_limit:
                timed_out = True
                break
            if progress is not None and now - last_report > 0.1:
                last_report = now
                report(progress, step, len(lowest), f"pass {passes}: {committed:,} moves kept, F = {best:,}")
            if anonymity[region] != g:  # already improved by an earlier move in this pass
                continue
            in_cell = assignment == region
            ring = neighbours[region]
            if len(ring) >= 3:
                centre = sites[region]
                angles = np.arctan2(sites[ring, 1] - centre[1], sites[ring, 0] - centre[0])
                polygon = shapely.Polygon(sites[ring[np.argsort(-angles)]])  # clockwise
                in_ring = shapely.contains_xy(polygon, x, y) if polygon.is_valid else np.zeros_like(in_cell)
            else:
                in_ring = np.isin(assignment, ring)
            neighbourhood = in_cell | in_ring
            for q in np.flatnonzero(matrix[region] == g):
                members = by_class[class_start[q] : class_start[q + 1]]
                members = members[neighbourhood[cells.region[members]]]
                if members.size == 0:
                    continue
                pts, w = cells.region[members], cells.size[members]
                target = np.array([weighted_median(xy[pts, 0], w), weighted_median(xy[pts, 1], w)])
                if np.allclose(target, sites[region]):
                    continue
                tried += 1
                if quick(region, target) <= best:
                    continue
                candidate = sites.copy()
                candidate[region] = target
                state = full(candidate)
                if state[-1] > best:  # commit only on strict improvement (confirmed by a full recount)
                    sites = candidate
                    tree, dist, assignment, matrix, anonymity, best = state
                    objectives.append(best)
                    committed += 1
                    moved = True
                    neighbours = _adjacent_sites(sites)
                    break
        if timed_out or not moved:
            converged = not timed_out
            break
    if progress is not None:
        why = f"stopped at the {time_limit:g} s time limit" if timed_out else f"finished after {passes} passes"
        report(progress, 1, 1, f"ADC {why}: {committed:,} of {tried:,} moves kept, F = {best:,}")
    return sites, AdcTrace(tuple(objectives), passes, tried, committed, converged)


def _adjacent_sites(sites: np.ndarray) -> list[np.ndarray]:
    """Per site, the sites whose Voronoi cells touch its own (Delaunay neighbours)."""
    n = len(sites)
    if n < 4:
        return [np.array([j for j in range(n) if j != i], dtype=np.int64) for i in range(n)]
    try:
        indptr, indices = Delaunay(sites).vertex_neighbor_vertices
    except QhullError:  # all sites on a line
        order = np.argsort(sites[:, 0] + sites[:, 1])
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n)
        return [order[[r for r in (rank[i] - 1, rank[i] + 1) if 0 <= r < n]] for i in range(n)]
    return [indices[indptr[i] : indptr[i + 1]] for i in range(n)]
