"""The optimal search on ARX's Adult benchmark, against brute force in the same run.

Data: ``anonlib.core.samples.arx_adult_benchmark()`` (30,162 complete records,
nine quasi-identifiers with ARX's hierarchies, 12,960 full-domain
generalizations), k = 5, loss metric, with at most 4% and with 0% of records
suppressed. The spec's targets: at most 1 s each, and at most 1/100 of the time
of a brute-force search that counts every node of the same lattice with the
shared kernel (timed once beside them; the optimal rows' notes give the ratio,
nodes counted beside the lattice size, and whether both found the same node).
ARX's published mark: Flash at 28 ms for this case on a quad-core.

The oracle rows time about the least a search of this kind must count (the cover
is greedy, so at most a few nodes more than the smallest): the lattice set up, then
only the nodes that prove the answer (the acceptable nodes whose
bound is below the optimum, and a greedy cover of the failing ones by maximal
failing nodes, which tag them by monotonicity), each rolled up from the smallest
table counted below it. Which nodes those are is found by counting every node
first (untimed).
"""

from __future__ import annotations

import functools
import statistics
import time

import numpy as np

from anonlib.core.samples import arx_adult_benchmark
from anonlib.transformations.optimal import Lattice, brute_force, optimal_levels
from bench import Benchmark

K = 5
_BRUTE: dict[float, tuple[float, tuple]] = {}  # limit -> (seconds, (levels, cost, suppressed))


@functools.lru_cache(maxsize=1)
def _benchmark():
    return arx_adult_benchmark()


def _brute(limit: float):
    def run(b):
        start = time.perf_counter()
        lattice = Lattice(b.frame, b.quasi_identifiers, b.hierarchies, k=K, max_suppressed=limit, rollup=False)
        found = brute_force(lattice)
        _BRUTE[limit] = (time.perf_counter() - start, found)
        return found
    return run


_SEARCH: dict[float, list[float]] = {}  # limit -> the search's wall time in each run


def _optimal(limit: float):
    def run(b):
        start = time.perf_counter()
        found = optimal_levels(b.frame, b.quasi_identifiers, b.hierarchies, k=K, max_suppressed=limit)
        _SEARCH.setdefault(limit, []).append(time.perf_counter() - start)
        return limit, found
    return run


def _certificate(limit: float):
    """Setup of an oracle row: the benchmark and the nodes that prove its answer, lowest first."""
    def setup():
        b = _benchmark()
        lattice = Lattice(b.frame, b.quasi_identifiers, b.hierarchies, k=K, max_suppressed=limit, rollup=False)
        heights = np.asarray(lattice.heights)
        nodes = np.stack(np.unravel_index(np.arange(lattice.size), lattice.heights)).T
        found = [lattice.status(tuple(int(v) for v in levels)) for levels in nodes]
        acceptable = np.array([f[0] for f in found])
        best = min(f[2] for f in found if f[0])
        inside = np.array([lattice.bound(levels) for levels in nodes]) <= best + 1e-12
        strides = np.ones(len(heights), dtype=np.int64)
        strides[:-1] = np.cumprod(heights[::-1])[::-1][1:]
        at_top = nodes >= heights - 1
        parents = np.minimum(np.arange(lattice.size)[:, None] + strides, lattice.size - 1)
        maximal = ~acceptable & ~np.where(at_top, False, ~acceptable[parents]).any(axis=1)
        to_cover = np.flatnonzero(inside & ~acceptable)
        covers = (nodes[to_cover][:, None, :] <= nodes[maximal][None, :, :]).all(axis=2)  # [failing, maximal]
        chosen, left = [], np.ones(len(to_cover), dtype=bool)
        while left.any():  # greedy set cover
            j = int((covers & left[:, None]).sum(axis=0).argmax())
            chosen.append(np.flatnonzero(maximal)[j])
            left &= ~covers[:, j]
        proof = [*chosen, *np.flatnonzero(inside & acceptable)]
        proof.sort(key=lambda i: (int(nodes[i].sum()), i))
        return b, [tuple(int(v) for v in nodes[i]) for i in proof], len(chosen)
    return setup


_ORACLE: dict[float, list[float]] = {}  # limit -> the oracle's wall time in each run


def _oracle(limit: float):
    def run(inputs):
        start = time.perf_counter()
        b, proof, _ = inputs
        lattice = Lattice(b.frame, b.quasi_identifiers, b.hierarchies, k=K, max_suppressed=limit)
        for levels in proof:
            lattice.status(levels)
        _ORACLE.setdefault(limit, []).append(time.perf_counter() - start)
        return limit, inputs, lattice.checked
    return run


def _oracle_note(result) -> str:
    limit, (_, proof, covering), checked = result
    note = f"{checked} nodes counted: {covering} maximal failing nodes cover the failing ones, {len(proof) - covering} acceptable"
    if limit in _BRUTE:
        ratio = _BRUTE[limit][0] / statistics.median(_ORACLE[limit])
        note += f"; brute force {_BRUTE[limit][0]:.2f} s, {ratio:,.0f}x the median"
    return note


def _note(result) -> str:
    limit, r = result
    note = (f"loss {r.value:.5f} at {r.levels}, {'proven optimal' if r.optimal else 'NOT proven'}; "
            f"{r.checked:,} of {r.lattice_size:,} nodes counted")
    if limit in _BRUTE:
        seconds, found = _BRUTE[limit]
        search = statistics.median(_SEARCH[limit])  # the row's median, as the table prints it
        ratio = seconds / search if search else float("inf")
        note += (f"; brute force {seconds:.2f} s, {ratio:,.0f}x the median search (target >= 100x: "
                 f"{'met' if ratio >= 100 else 'NOT met'}); same node: {found is not None and found[0] == r.levels}")
    return note


def _brute_note(found) -> str:
    return "no node meets the target" if found is None else f"loss {found[1]:.5f} at {found[0]}, every node counted"


BENCHMARKS = [
    Benchmark(f"optimal: brute force, ARX Adult k=5 <={limit:.0%}", None, _benchmark, _brute(limit), repeat=1,
              note=_brute_note)
    for limit in (0.04, 0.0)
] + [
    Benchmark(f"optimal: search, ARX Adult k=5 <={limit:.0%}", 1.0, _benchmark, _optimal(limit), repeat=5, note=_note)
    for limit in (0.04, 0.0)
] + [
    Benchmark(f"optimal: an oracle's counts, ARX Adult k=5 <={limit:.0%}", None, _certificate(limit), _oracle(limit),
              repeat=5, note=_oracle_note)
    for limit in (0.04, 0.0)
]
