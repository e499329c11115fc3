"""The least damaging full-domain generalization that meets a release target, proven.

Over the lattice of full-domain generalizations (one level per quasi-identifier,
ARX-layout hierarchies), find the node that minimizes a utility measure
(``anonlib.measures.utility``) subject to the release target: every class of at least k
records and meeting the privacy models, after suppressing the records of the
classes that do not, with at most the allowed share of records suppressed
(ARX's record suppression).

How it stays exact while checking few nodes (the ideas of OLA, El Emam et al.
2009; Flash, Kohlmayer et al. 2012; Incognito, LeFevre et al. 2005):

1. **A lower bound without counting.** For the cell measures (loss metric,
   precision, non-uniform entropy) a node's cost is the sum over records and
   quasi-identifiers of a per-cell cost that depends only on the cell's value and
   its level, except that a suppressed record pays its full cost. So
   ``bound(node) = sum of the cell costs at the node's levels`` is a lower bound of
   the node's cost, computed for every node at once from per-attribute totals, and
   it never decreases upwards in the lattice. Nodes are visited in order of their
   bound; once the bound passes the best cost found, nothing left can win.
2. **Monotonicity of the target.** With k and the monotone models, a node that
   fails makes every specialization fail (tagged without counting); a node with
   no record in a failing class makes every generalization suppress nothing, so
   their cost *is* their bound (no counting either). As in Flash, each node not yet
   settled starts a climb towards the top, and the highest node of the climb that fails
   tags everything under it; the climb follows the cheapest bound, and its probes go
   where a count is cheap (``_climb``, ``_highest_failing``). Models that are not monotone
   (t-closeness, δ-disclosure, β-likeness with suppression) get no tags: every
   node whose bound could still win is counted.
3. **Cheap counting.** A node's classes are rolled up from the smallest class
   table already counted below it (``GeneralizationSpace.classes``), not recounted
   from the records.

Discernibility and average class size are not sums of cell costs: for them every
node the tags do not settle is counted (exact, slower). A time limit stops the
walk early; the answer then says it is not proven optimal and how far the
lowest unchecked bound lies below it.

The walk's probes keep one invariant: on a climb, the lower end of the span fails and
the upper end is acceptable; each count rolls up from a table under its node, so the
probes go where a count is cheap.

Example (the ARX benchmark's case in miniature):
    >>> import pandas as pd
    >>> from anonlib.core.hierarchy import flat_hierarchy
    >>> df = pd.DataFrame({"age": ["31", "35", "47", "48"], "sex": ["F", "F", "M", "M"]})
    >>> h = {"age": pd.DataFrame([["31", "30-39", "*"], ["35", "30-39", "*"], ["47", "40-49", "*"], ["48", "40-49", "*"]]),
    ...      "sex": flat_hierarchy(["F", "M"])}
    >>> r = optimal_levels(df, ["age", "sex"], h, target=ReleaseTarget(k=2))
    >>> r.levels, round(r.value, 4), r.optimal
    ((1, 0), 0.1667, True)
"""

from __future__ import annotations

import heapq
import math
import operator
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...core.budget import Progress, report
from ...core.errors import NoSolutionError, join_names
from ...measures.target import ReleaseTarget
from ...measures.utility import CELL_MEASURES
from .space import MAX_NODES, GeneralizationSpace

_CLIMB_BY_BOUND = ("loss", "nonuniform_entropy")  # measures whose climbs follow the bound (``_climb``)
RELATIVE_TIE = 1e-12  # costs this close are equal; ties go to fewer levels, then the smaller level vector


@dataclass(frozen=True)
class OptimalLevels:
    """The chosen node and how sure the search is of it.

    ``value`` is the measure's value the search computed for the node (the
    released table's own value is measured again by the caller); ``optimal`` is
    True when the walk proved no other node meets the target at a lower cost;
    ``bound`` is then ``value``, else the lowest cost any unchecked node could
    have. ``checked`` counts nodes whose classes were counted, ``lattice_size``
    all nodes.
    """

    levels: tuple[int, ...]
    measure: str
    value: float
    suppressed: int
    optimal: bool
    bound: float
    checked: int
    lattice_size: int
    seconds: float

    @property
    def gap(self) -> float:
        """How much lower than ``value`` an unchecked node could still be (0 when optimal)."""
        return max(self.value - self.bound, 0.0)


def _no_solution(lat: GeneralizationSpace, suppressed: int) -> NoSolutionError:
    """The sentence when not even the most general node meets the target (in its unit)."""
    target = lat.target
    if lat.person is not None:  # people, histories or households
        whole = target.whole
        criteria = join_names([f"k = {lat.k} {whole}", *(r.describe() for r in lat.requirements)])
        how = f" {target.power_text()}{target.cumulative}" if target.linkable else ""
        earlier = (
            " (or leaves people released in earlier deliveries with a history fewer than k share)"
            if target.earlier is not None
            else ""
        )
        gone = lat.suppressed_in_unit(lat.max_levels)
        return NoSolutionError(
            f"No generalization of {join_names(lat.qis)} meets {criteria}{how} with at most "
            f"{100 * lat.max_suppressed:g}% suppressed {whole}: even the most general one suppresses {gone:,} of "
            f"{lat.n_persons:,} {whole}{earlier}. Lower k, allow more suppression, or give the hierarchies a top "
            "level that groups everything."
        )
    if not lat.requirements and not lat.max_suppressed:
        return NoSolutionError(
            f"No generalization reaches {lat.k}-anonymity on {join_names(lat.qis)}: even the most general one "
            f"leaves {suppressed:,} of {lat.records:,} records in classes smaller than {lat.k}. Lower k, or give "
            "the hierarchies a top level that groups everything (such as '*')."
        )
    criteria = join_names([f"k = {lat.k}", *(r.describe() for r in lat.requirements)])
    return NoSolutionError(
        f"No generalization of {join_names(lat.qis)} meets {criteria} with at most "
        f"{100 * lat.max_suppressed:g}% suppressed records: even the most general one leaves {suppressed:,} of "
        f"{lat.records:,} records in classes failing it. Relax a model, allow more suppression, or give the "
        "hierarchies a top level that groups everything."
    )


def _heuristic(lat: GeneralizationSpace, start: float, bound: float) -> OptimalLevels:
    """A good node found cheaply, not proven optimal (ARX's Lightning in spirit): from the
    top, step down to the acceptable child of lowest cost while there is one (high nodes
    have small class tables, so each step is cheap)."""
    current = tuple(h - 1 for h in lat.heights)
    acceptable, suppressed, cost = lat.status(current)
    if not acceptable:
        raise _no_solution(lat, suppressed)
    while True:
        steps = []
        for a in range(len(current)):
            if current[a] > 0:
                child = current[:a] + (current[a] - 1,) + current[a + 1 :]
                ok, child_suppressed, child_cost = lat.status(child)
                if ok:
                    steps.append((child_cost, sum(child), child, child_suppressed))
        if not steps:
            break
        cost, _, current, suppressed = min(steps)
    return OptimalLevels(
        levels=current,
        measure=lat.measure,
        value=cost,
        suppressed=suppressed,
        optimal=False,
        bound=min(bound, cost),
        checked=lat.checked,
        lattice_size=lat.size,
        seconds=time.perf_counter() - start,
    )


def _climb(lat: GeneralizationSpace, levels: tuple[int, ...], bound: float, cutoff: float) -> list[tuple[int, ...]]:
    """A path from ``levels`` (whose bound is ``bound``) towards the top, stopping below the
    nodes whose bound already passes ``cutoff`` (``_cutoff``: they cannot win, so whether
    they fail does not matter).

    For the loss metric and non-uniform entropy each step raises the attribute whose next
    level adds the least to the bound (ties: the climb order), so the path stays among the
    cheap nodes the walk is about to visit and the failing box of its highest failing node
    rules out the most of them. Precision charges every level of an attribute the same, so
    that rule would raise one attribute to its top before the next (a path that rules out
    fewer nodes: on ARX's Adult benchmark 753 nodes counted instead of 636 at k = 5 with 4%);
    it, and the measures without a bound, raise the attributes in turn."""
    path = [levels]
    current = list(levels)
    tops = lat.tops
    if lat.measure in _CLIMB_BY_BOUND:
        costs = lat.raise_cost
        # The next raise of each attribute not at its top: the least added first, then the
        # first in the climb order.
        nexts = [(costs[a][current[a]], rank, a) for rank, a in enumerate(lat.climb_order) if current[a] < tops[a]]
        heapq.heapify(nexts)
        while nexts:
            added, rank, a = nexts[0]
            current[a] += 1
            bound += added
            if bound > cutoff:
                return path
            path.append(tuple(current))
            if current[a] < tops[a]:
                heapq.heapreplace(nexts, (costs[a][current[a]], rank, a))
            else:
                heapq.heappop(nexts)
        return path
    while any(c < t for c, t in zip(current, tops)):
        for a in lat.climb_order:
            if current[a] < tops[a]:
                current[a] += 1
                if lat.bound(current) > cutoff:
                    return path
                path.append(tuple(current))
    return path


def _highest_failing(
    lat: GeneralizationSpace, levels: tuple[int, ...], bound: float, cutoff: float
) -> tuple[int, ...] | None:
    """On a climb from ``levels`` (``_climb``; ``bound`` is its bound), the last node that
    fails the target (None when ``levels`` itself is acceptable): the target is monotone,
    so a path's failing nodes come first, and the search narrows the span between the
    highest node known to fail and the lowest known acceptable.

    What is known narrows it first, without counting: the lowest node known acceptable (by
    bisection: knowing a node acceptable is monotone along the path too) and the highest
    node under it already counted (it failed). Then each probe is the lowest node of the
    span that rolls up from the same smallest table as the span's highest: a count costs
    the rows of the table it rolls up from, and among nodes that cost the same the lowest
    one's table lies under all the others, so when it fails the next probe is the node
    above it, rolled up from its table (and when it is acceptable, no other node of the
    span needs counting). A count tells nothing new about the rest of the span, so what
    is known needs no second look."""
    path = _climb(lat, levels, bound, cutoff)
    # path[lo] fails (-1: nothing known); path[hi] is acceptable. The top of the lattice (where
    # the first climbs end) is taken to be, and only counted when no probe below it is: its
    # count would roll up from a large table.
    lo, hi = -1, len(path) - 1
    end = hi if path[hi] == lat.tops else -1
    if end < 0 and not lat.acceptable(path[hi]):
        return path[hi]
    first = lo + 1
    while first < hi:
        m = (first + hi) // 2
        if lat.known_acceptable(path[m]):
            hi = m
        else:
            first = m + 1
    lo = next((m for m in range(hi - 1, lo, -1) if lat.counted(path[m])), lo)
    source = None
    while hi - lo > 1:
        if (
            source is None
        ):  # the smallest table under the span's highest node is the smallest under each span node above it
            source = lat.source_table(path[hi - 1])
            mid = next(m for m in range(lo + 1, hi) if all(map(operator.le, source.levels, path[m])))
        else:
            mid = lo + 1
        if lat.acceptable(path[mid], source):
            hi, source = mid, None
        else:
            lo, source = mid, lat.kept_table(path[mid]) or source
    if hi == end and not lat.acceptable(path[hi]):
        return path[hi]
    return None if hi == 0 else path[lo]


def _outer_sum(per_attribute: Sequence[np.ndarray]) -> np.ndarray:
    """Per node, in flat (level-vector) order, the sum over attributes of ``per_attribute[a]``
    at the node's level of ``a`` (added attribute by attribute, as ``GeneralizationSpace.bound`` does)."""
    total = per_attribute[0]
    for values in per_attribute[1:]:
        total = np.add.outer(total, values)
    return total.reshape(-1)


def _in_bound_order(bounds: np.ndarray, total_levels: np.ndarray, chunk: int = 2048):
    """The nodes' flat indices with their bounds, by bound, then fewer levels, then index,
    sorted a chunk of the lowest bounds at a time: the walk stops once a bound passes the
    best cost, usually after a small share of the lattice."""
    remaining = np.arange(bounds.size)
    while remaining.size:
        inside = None
        if remaining.size > chunk:
            lowest = bounds[remaining]
            inside = lowest <= np.partition(lowest, chunk - 1)[chunk - 1]  # every tie of the cut comes along
        if inside is not None and inside.any():  # (a NaN cut would take none: the rest is sorted at once)
            part, remaining = remaining[inside], remaining[~inside]
        else:
            part, remaining = remaining, remaining[:0]
        part = part[np.lexsort((part, total_levels[part], bounds[part]))]
        yield from zip(part.tolist(), bounds[part].tolist())


def _levels_at(index: int, heights: Sequence[int]) -> tuple[int, ...]:
    """The level vector of a node's flat index (``np.unravel_index`` for one node)."""
    levels = []
    for h in reversed(heights):
        index, level = divmod(index, h)
        levels.append(level)
    return tuple(reversed(levels))


def _at_most(levels: Sequence[int]) -> tuple[slice, ...]:
    """The specializations of ``levels``, as a box of the lattice (the flags indexed as an
    array of one axis per attribute, in level-vector order)."""
    return tuple(slice(0, level + 1) for level in levels)


def _at_least(levels: Sequence[int]) -> tuple[slice, ...]:
    """The generalizations of ``levels``, as a box of the lattice."""
    return tuple(slice(level, None) for level in levels)


def _cutoff(best: float) -> float:
    """A node whose bound passes this cannot beat or tie a cost of ``best``."""
    return best + RELATIVE_TIE * max(abs(best), 1.0)


def _better(value: float, levels: tuple[int, ...], best: tuple[float, tuple[int, ...]] | None) -> bool:
    """Lower cost wins; costs within ``RELATIVE_TIE`` tie, and ties go to fewer total
    levels, then the smaller level vector (the same rule as the brute-force reference)."""
    if best is None:
        return True
    b_value, b_levels = best
    if value < b_value - RELATIVE_TIE * max(abs(b_value), 1.0):
        return True
    if value > b_value + RELATIVE_TIE * max(abs(b_value), 1.0):
        return False
    return (sum(levels), levels) < (sum(b_levels), b_levels)


def optimal_levels(
    df: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    hierarchies: Mapping[str, pd.DataFrame],
    *,
    target: ReleaseTarget,
    measure: str = "loss",
    count: str | None = None,
    time_limit: float | None = None,
    progress: Progress | None = None,
    lattice: GeneralizationSpace | None = None,
    max_checked: int | None = None,
) -> OptimalLevels:
    """The node of the lattice with the lowest ``measure`` that meets the target.

    Raises ``NoSolutionError`` when no node meets the target. See the module text
    for how the walk stays exact. ``time_limit`` (seconds) or ``max_checked`` (nodes
    counted) cut the walk short: the answer is then the best found, with
    ``optimal`` False and ``bound`` the lowest cost a node not yet ruled out could have.

    >>> import pandas as pd
    >>> from anonlib.core.hierarchy import flat_hierarchy
    >>> df = pd.DataFrame({"a": ["x", "x", "y"], "b": ["u", "v", "v"]})
    >>> h = {"a": flat_hierarchy(["x", "y"]), "b": flat_hierarchy(["u", "v"])}
    >>> strict, lenient = ReleaseTarget(k=2), ReleaseTarget(k=2, max_suppressed=0.34)
    >>> optimal_levels(df, ["a", "b"], h, target=strict).levels, optimal_levels(df, ["a", "b"], h, target=lenient).levels
    ((1, 1), (0, 1))
    """
    start = time.perf_counter()
    lat = lattice or GeneralizationSpace(
        df, quasi_identifiers, hierarchies, target=target, count=count, measure=measure
    )
    if lat.size > MAX_NODES:  # too many to walk: the heuristic alone, and the weakest bound
        return _heuristic(lat, start, lat.bound(tuple(0 for _ in lat.heights)))
    # Per node (flat index = level-vector order): its bound, and its total of levels.
    if lat.measure in CELL_MEASURES:
        bounds = _outer_sum([np.asarray(t, dtype=float) for t in lat.level_totals]) / lat.scale
    else:
        bounds = np.zeros(lat.size)
    total_levels = _outer_sum([np.arange(h, dtype=np.int16) for h in lat.heights])
    failing = np.zeros(lat.size, dtype=bool)  # known to fail the target
    clean = np.zeros(lat.size, dtype=bool)  # known to suppress nothing (cost = bound)
    failing_box, clean_box = failing.reshape(lat.heights), clean.reshape(lat.heights)  # views, one axis per attribute
    monotone, zero_monotone = lat.monotone, lat.zero_monotone
    best: tuple[float, tuple[int, ...]] | None = None
    best_suppressed, cutoff = 0, math.inf
    proven, lowest_open = True, None
    for done, (idx, bound) in enumerate(_in_bound_order(bounds, total_levels)):
        if bound > cutoff:
            break
        if failing[idx]:
            continue
        if (time_limit is not None and time.perf_counter() - start > time_limit) or (
            max_checked is not None and lat.checked >= max_checked
        ):
            proven, lowest_open = False, bound
            break
        levels = _levels_at(idx, lat.heights)
        if clean[idx]:
            if _better(bound, levels, best):
                best, best_suppressed = (bound, levels), 0
                cutoff = _cutoff(bound)
            continue
        if monotone:  # Flash: climb a path to the top, tag what lies below its highest failing node
            highest = _highest_failing(lat, levels, bound, cutoff)
            if highest is not None:
                failing_box[_at_most(highest)] = True
                continue
        acceptable, suppressed, cost = lat.status(levels)
        if progress is not None:
            report(progress, done, lat.size, "generalizations")
        if not acceptable:
            continue
        if suppressed == 0 and zero_monotone and lat.measure in CELL_MEASURES:
            clean_box[_at_least(levels)] = True
        if _better(cost, levels, best):
            best, best_suppressed = (cost, levels), suppressed
            cutoff = _cutoff(cost)
    if best is None and not proven:  # cut short before anything was found: the heuristic's answer
        return _heuristic(lat, start, lowest_open)
    if best is None:
        raise _no_solution(lat, lat.status(tuple(h - 1 for h in lat.heights))[1])
    report(progress, lat.size, lat.size, "generalizations")
    return OptimalLevels(
        levels=best[1],
        measure=lat.measure,
        value=best[0],
        suppressed=best_suppressed,
        optimal=proven,
        bound=best[0] if proven else min(best[0], lowest_open),
        checked=lat.checked,
        lattice_size=lat.size,
        seconds=time.perf_counter() - start,
    )


def brute_force(lattice: GeneralizationSpace) -> tuple[tuple[int, ...], float, int] | None:
    """The reference: count every node, keep the best acceptable one (same tie rule).

    >>> import pandas as pd
    >>> from anonlib.core.hierarchy import flat_hierarchy
    >>> space = GeneralizationSpace(pd.DataFrame({"a": ["x", "y", "y"]}), ["a"], {"a": flat_hierarchy(["x", "y"])},
    ...                             target=ReleaseTarget(2))
    >>> brute_force(space)
    ((1,), 1.0, 0)
    """
    best, best_suppressed = None, 0
    for flat in range(lattice.size):
        levels = _levels_at(flat, lattice.heights)
        acceptable, suppressed, cost = lattice.status(levels)
        if acceptable and _better(cost, levels, best):
            best, best_suppressed = (cost, levels), suppressed
    return None if best is None else (best[1], best[0], best_suppressed)
