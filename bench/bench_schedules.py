"""Schedules benchmarks: exact lexicographic index, improvement, heuristic, optimum, Table 10.

The index benchmarks start from an empty partition-number cache, so each timing
includes computing p(0..N).
"""

from __future__ import annotations

import json

import numpy as np

import anonlib.measures.avector as avector
from anonlib.core.samples import sample_path
from anonlib.measures.avector import anonymity_vector, improvement, lex_index, scientific
from anonlib.transformations.schedule import heuristic_cells, optimal_cells, random_cells
from anonlib.transformations.schedule_experiments import reproduce_table10, table10_problem
from bench import Benchmark


def _cold_index(vectors):
    avector._P_TABLE = [1]  # cold: include the p(0..N) table
    return [lex_index(v) for v in vectors]


def _registry_vectors():
    data = json.loads(sample_path("caballero_registry_fixture.json").read_text())
    freqs = np.asarray(data["by_birth_year"])
    heuristic = heuristic_cells(freqs, np.full(data["centres"], data["capacity_per_centre"])).vector
    return [anonymity_vector(freqs), anonymity_vector(data["by_birth_year_and_centre_actual"]), heuristic]


def _protocol_vectors(n: int, seed: int = 0):
    """(base, random schedule, heuristic schedule) vectors of one Table 10 problem of n people."""
    rng = np.random.default_rng(seed)
    freqs, capacities = table10_problem(n, rng)
    return (
        anonymity_vector(freqs),
        random_cells(freqs, capacities, rng).vector,
        heuristic_cells(freqs, capacities).vector,
    )


def _mixed_vector(n: int, seed: int = 0):
    """Classes of every size from 1 to about n/2: many non-trivial index terms."""
    rng = np.random.default_rng(seed)
    sizes, left = [], n
    while left > 0:
        size = int(min(left, rng.choice([1, 2, 3, 5, 8, 13, int(rng.integers(1, n // 2))])))
        sizes.append(size)
        left -= size
    return anonymity_vector(sizes)


def _million_problem():
    rng = np.random.default_rng(1)
    n, q = 1_000_000, 1_000_000 // 100 + 5
    freqs = np.maximum(1, np.rint(rng.normal(n / q, 0.2 * n / q, q))).astype(np.int64)
    capacities = np.maximum(1, np.rint(rng.normal(110, 22, 10_000))).astype(np.int64)
    return freqs, capacities


def _optimal_50():
    freqs, capacities = table10_problem(50, np.random.default_rng(0))
    return freqs, capacities


BENCHMARKS = [
    Benchmark(
        "schedules: exact index, registry real assignment (N = 4,541)",
        0.1,
        lambda: _registry_vectors()[1:2],
        _cold_index,
        reference="paper's Java: 13.6 s; plain O(N*m) Python DP: 0.7 s",
        note=lambda r: f"index {scientific(r[0])}",
    ),
    Benchmark(
        "schedules: exact improvement, registry (3 indices)",
        None,
        _registry_vectors,
        _cold_index,
        note=lambda r: f"heuristic over real {100 * (r[2] - r[1]) / r[0]:.2f}%",
    ),
    Benchmark(
        "schedules: exact index x3, N = 50,000 (base/random/heuristic)",
        10.0,
        lambda: list(_protocol_vectors(50_000)),
        _cold_index,
        repeat=1,
        reference="paper: 'unfeasible' above N = 1,000",
        note=lambda r: "indices " + ", ".join(scientific(x) for x in r),
    ),
    Benchmark(
        "schedules: exact index, N = 50,000 mixed class sizes",
        10.0,
        lambda: [_mixed_vector(50_000)],
        _cold_index,
        repeat=1,
        note=lambda r: f"index {scientific(r[0])}",
    ),
    Benchmark(
        "schedules: exact index, N = 50,000 one class (hardest)",
        10.0,
        lambda: [(0,) * 49_999 + (1,)],
        _cold_index,
        repeat=1,
        note=lambda r: f"= p(N) - 1: {r[0] + 1 == avector.partition_count(50_000)}",
    ),
    Benchmark(
        "schedules: improvement as float, N = 10^6",
        1.0,
        lambda: _protocol_vectors(1_000_000),
        lambda v: improvement(v[2], v[1], v[0]),
        repeat=3,
        reference="leading terms + proven tail bound, rel. error < 1e-12",
        note=lambda x: f"heuristic over random {100 * x:.6f}%",
    ),
    Benchmark(
        "schedules: heuristic, 10^6 people, 10^4 resources",
        1.0,
        _million_problem,
        lambda p: heuristic_cells(*p),
        reference="paper's Java: 'under a second'",
        note=lambda cells: f"{cells.counts.size:,} cells, k = {next(i for i, x in enumerate(cells.vector, 1) if x)}",
    ),
    Benchmark(
        "schedules: random baseline, 10^6 people, 10^4 resources",
        None,
        _million_problem,
        lambda p: random_cells(*p, seed=0),
        repeat=3,
    ),
    Benchmark(
        "schedules: optimal (Algorithm 1, CP-SAT), N = 50",
        10.0,
        _optimal_50,
        lambda p: optimal_cells(*p, time_limit=60),
        repeat=3,
        reference="paper's MiniZinc: > 1 hour at N = 55",
        note=lambda o: f"proven {o.proven_optimal}, {o.levels_solved} levels, vector {o.cells.vector}",
    ),
    Benchmark(
        "schedules: Table 10, N = 20..1000, 1000 runs/N (+10 optima/N<=50)",
        120.0,
        lambda: None,
        lambda _: reproduce_table10(runs=1000, optimal_runs=10, seed=0),
        repeat=1,
        note=lambda t: (
            "heur/random % "
            + ", ".join(f"{n}:{x:.0f}" for n, x in zip(t.frame["N"], t.frame["heuristic / random (%)"]))
        ),
    ),
]
