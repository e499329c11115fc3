"""The frontier itself: which (risk, loss) points no other beats, and the area under it."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# --- the frontier ------------------------------------------------------------------


def strictly_dominates(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """``a`` strictly dominates ``b`` (Definition 3.9): no worse in risk and loss, better in one.

    >>> strictly_dominates((0.1, 0.5), (0.2, 0.5)), strictly_dominates((0.1, 0.5), (0.1, 0.5))
    (True, False)
    """
    return a[0] <= b[0] and a[1] <= b[1] and (a[0] < b[0] or a[1] < b[1])


def non_dominated(risk: np.ndarray, loss: np.ndarray) -> np.ndarray:
    """Mask of the points no other point strictly dominates (Definition 3.10).

    Equal points do not dominate each other, so both stay.

    >>> non_dominated(np.array([0.1, 0.2, 0.2, 0.3]), np.array([0.9, 0.5, 0.5, 0.6])).tolist()
    [True, True, True, False]
    """
    risk, loss = np.asarray(risk, float), np.asarray(loss, float)
    if risk.size == 0:
        return np.zeros(0, dtype=bool)
    order = np.lexsort((loss, risk))
    r, u = risk[order], loss[order]
    first = np.r_[True, r[1:] != r[:-1]]
    group = np.cumsum(first) - 1
    group_min = u[first]  # sorted by loss within a risk: the first is the smallest
    before = np.r_[np.inf, np.minimum.accumulate(group_min)[:-1]]  # best loss at strictly smaller risk
    keep = (u == group_min[group]) & (group_min[group] < before[group])
    mask = np.zeros(risk.size, dtype=bool)
    mask[order] = keep
    return mask


def _area_under(risk: np.ndarray, loss: np.ndarray, lo: float, hi: float, floor: float, ceil: float) -> float:
    """Integral over ``[lo, hi]`` of the step curve clipped to ``[floor, ceil]``,
    minus ``floor``. The curve is 1 left of the first risk, then the best loss
    among points with risk <= r. ``risk`` must be sorted."""
    starts = np.r_[-np.inf, risk]
    ends = np.r_[risk, np.inf]
    values = np.r_[1.0, np.minimum.accumulate(loss)] if loss.size else np.array([1.0])
    length = np.clip(np.minimum(ends, hi) - np.maximum(starts, lo), 0.0, None)
    height = np.clip(values - floor, 0.0, ceil - floor)
    return float(length @ height)


def frontier_area(risk: Sequence[float], loss_normalized: Sequence[float]) -> float:
    """Area under the frontier's step curve in the unit R-U square (smaller is better).

    At risk ``r`` the curve is the smallest normalized loss among frontier
    policies with risk at most ``r``, and 1 below the least risky one.

    >>> frontier_area([0.2, 1.0], [1.0, 0.0])
    1.0
    >>> frontier_area([0.0, 0.5, 1.0], [1.0, 0.25, 0.0])
    0.625
    """
    risk = np.asarray(risk, float)
    loss = np.asarray(loss_normalized, float)
    order = np.argsort(risk, kind="stable")
    return _area_under(risk[order], loss[order], 0.0, 1.0, 0.0, 1.0)


class Frontier:
    """The non-dominated policies found so far, sorted by risk (loss normalized).

    >>> f = Frontier()
    >>> f.update(0, 1.0, 0.0), f.update(1, 0.1, 1.0), f.update(2, 0.5, 0.5), f.update(3, 0.6, 0.6)
    (True, True, True, False)
    >>> f.update(4, 0.4, 0.4), f.ids.tolist()
    (True, [1, 4, 0])
    """

    def __init__(self) -> None:
        self.risk = np.empty(0)
        self.loss = np.empty(0)
        self.ids = np.empty(0, dtype=np.int64)

    def __len__(self) -> int:
        return int(self.ids.size)

    def update(self, policy_id: int, risk: float, loss: float) -> bool:
        """updateFrontier(f, a): insert ``a`` unless something strictly dominates
        it, and drop what it strictly dominates. True when the frontier changed.

        The frontier is sorted by risk with loss non-increasing (equal losses only
        at equal risks), so both steps are binary searches plus one splice.
        """
        r, u = self.risk, self.loss
        k = int(np.searchsorted(r, risk, side="right"))  # points with risk <= a's
        if k and (u[k - 1] < loss or (u[k - 1] == loss and r[k - 1] < risk)):
            return False
        lo = int(np.searchsorted(r, risk, side="left"))
        # from lo on, risk >= a's; those with loss >= a's form a block (loss is non-increasing)
        hi = lo + int(np.searchsorted(-u[lo:], -loss, side="right"))
        equal = (r[lo:hi] == risk) & (u[lo:hi] == loss)  # equal points do not dominate each other
        self.risk = np.concatenate([r[:lo], r[lo:hi][equal], [risk], r[hi:]])
        self.loss = np.concatenate([u[:lo], u[lo:hi][equal], [loss], u[hi:]])
        self.ids = np.concatenate([self.ids[:lo], self.ids[lo:hi][equal], [policy_id], self.ids[hi:]])
        return True

    def area(self) -> float:
        """Area under the step curve in the unit square (smaller is better)."""
        return _area_under(self.risk, self.loss, 0.0, 1.0, 0.0, 1.0)

    def update_probability(self, upper: tuple[float, float], lower: tuple[float, float]) -> float:
        """H (paper Eq. 1): the share of a sublattice's bounding rectangle that
        lies under the frontier's step curve (its non-dominated region ND).

        ``upper`` = (risk, loss) of the sublattice's upper policy alpha, ``lower``
        of its lower policy beta. A flat rectangle (equal risks or equal losses)
        gives 0: its members cannot beat alpha or beta, which were just scored.

        >>> f = Frontier(); _ = f.update(0, 0.0, 1.0); _ = f.update(1, 0.5, 0.5)
        >>> round(f.update_probability((0.2, 0.8), (0.8, 0.2)), 4)
        0.75
        """
        (ra, ua), (rb, ub) = upper, lower
        box = (rb - ra) * (ua - ub)
        if box <= 0:
            return 0.0
        return _area_under(self.risk, self.loss, ra, rb, ub, ua) / box
