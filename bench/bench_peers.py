"""Peers benchmarks: the paper's Fig. 2 (every variable in turn sensitive, all
others auxiliary, minimum PPP over all subsets) on its three datasets, and a
pandas groupby-per-subset reference on Adult."""

from __future__ import annotations

import itertools
import statistics
import time

import numpy as np

from anonlib.measures.peers import EXAMPLES, example_dataset, ppp, privacy_matrix
from bench import Benchmark

_SECONDS: dict[str, list[float]] = {}  # wall times of the runs, to compare with the references


def _frame(key: str):
    frame, _ = example_dataset(key).analysis_frame(list(EXAMPLES[key].variables))
    return frame, list(EXAMPLES[key].variables)


def _matrix(measure: str, key: str | None = None):
    def run(inputs):
        frame, variables = inputs
        start = time.perf_counter()
        result = privacy_matrix(frame, variables, measure)
        if key:
            _SECONDS.setdefault(key, []).append(time.perf_counter() - start)
        return result

    return run


def _describe(result) -> str:
    m = len(result.variables)
    shares = result.summary(0.0)["protected share"]
    return (f"{result.n_individuals:,} x {m}, {m * 2 ** (m - 1):,} subset evaluations, "
            f"protected share at p=0 {shares.min():.3f}..{shares.max():.3f}")


def _groupby_reference(inputs) -> np.ndarray:
    """One pandas groupby per subset of the variables (2^m of them), then the
    minimum PPP per (sensitive, individual) from the per-row group sizes."""
    frame, variables = inputs
    start = time.perf_counter()
    n = len(frame)
    sizes: dict[tuple[str, ...], np.ndarray] = {(): np.full(n, n)}
    for k in range(1, len(variables) + 1):
        for subset in itertools.combinations(variables, k):
            sizes[subset] = frame.groupby(list(subset), dropna=False)[subset[0]].transform("size").to_numpy()
    out = np.full((len(variables), n), np.inf)
    for v, s in enumerate(variables):
        others = [c for c in variables if c != s]
        for k in range(len(others) + 1):
            for subset in itertools.combinations(others, k):
                joint = tuple(c for c in variables if c in subset or c == s)
                out[v] = np.minimum(out[v], 1.0 - sizes[joint] / sizes[subset])
    _SECONDS["reference"] = [time.perf_counter() - start]
    return out


def _groupby_per_evaluation(inputs) -> np.ndarray:
    """The straightforward reference: for each (sensitive, subset) pair one pandas
    groupby for #{s, a} (the #{a} of each subset is grouped once and reused)."""
    frame, variables = inputs
    start = time.perf_counter()
    n = len(frame)
    peers: dict[tuple[str, ...], np.ndarray] = {(): np.full(n, n)}
    out = np.full((len(variables), n), np.inf)
    for v, s in enumerate(variables):
        others = [c for c in variables if c != s]
        for k in range(len(others) + 1):
            for subset in itertools.combinations(others, k):
                if subset not in peers:
                    peers[subset] = frame.groupby(list(subset), dropna=False)[s].transform("size").to_numpy()
                same = frame.groupby([*subset, s], dropna=False)[s].transform("size").to_numpy()
                out[v] = np.minimum(out[v], 1.0 - same / peers[subset])
    _SECONDS["reference"] = [time.perf_counter() - start]
    return out


def _reference_note(groupbys: str):
    def note(result: np.ndarray) -> str:
        ours = statistics.median(_SECONDS["adult"]) if _SECONDS.get("adult") else None
        ratio = f"; privacy_matrix (median) was {_SECONDS['reference'][-1] / ours:.1f}x faster" if ours else ""
        return f"{result.shape[0]} variables x {result.shape[1]:,} rows, {groupbys}{ratio}"

    return note


BENCHMARKS = [
    Benchmark(
        "peers: Fig. 2 min PPP, cervical cancer (789 x 4)",
        0.05,
        lambda: _frame("cervical_cancer"),
        _matrix("ppp"),
        note=_describe,
    ),
    Benchmark(
        "peers: Fig. 2 min PPP, Adult (30,162 x 9)",
        3.0,
        lambda: _frame("adult"),
        _matrix("ppp", "adult"),
        repeat=3,
        reference="authors' R code: ~4,000 CPU-minutes for Fig. 2",
        note=_describe,
    ),
    Benchmark(
        "peers: reference, pandas groupby per evaluation, Adult",
        None,
        lambda: _frame("adult"),
        _groupby_per_evaluation,
        repeat=1,
        note=_reference_note("2,304 + 256 groupbys"),
    ),
    Benchmark(
        "peers: reference, pandas groupby per subset (2^9), Adult",
        None,
        lambda: _frame("adult"),
        _groupby_reference,
        repeat=1,
        note=_reference_note("512 groupbys, sizes of all subsets kept"),
    ),
    Benchmark(
        "peers: Fig. 2 min PoAC (q=0), Adult (30,162 x 9)",
        None,
        lambda: _frame("adult"),
        _matrix("poac"),
        repeat=3,
        note=_describe,
    ),
    Benchmark(
        "peers: PPP for one auxiliary set, Adult (income | 8 others)",
        None,
        lambda: _frame("adult"),
        lambda inputs: ppp(inputs[0], "income", [c for c in inputs[1] if c != "income"]),
        reference="authors' R code: ~6 s for one subset",
        note=lambda values: f"mean PPP {float(np.mean(values)):.3f}",
    ),
    Benchmark(
        "peers: Fig. 2 min PPP, diabetes (99,493 x 8)",
        5.0,
        lambda: _frame("diabetes"),
        _matrix("ppp"),
        repeat=3,
        note=_describe,
    ),
]
