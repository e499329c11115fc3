"""Peers benchmarks: the paper's Fig. 2 (every variable in turn sensitive, all
others auxiliary, minimum PPP over all subsets) on its three datasets and on 10^6
records, each beside references measured in the same run: the walk over the
distinct records that the lattice of tables replaced ("record walk, before"), and
pandas groupbys per subset."""

from __future__ import annotations

import itertools
import statistics
import time

import numpy as np
import pandas as pd

from anonlib.core.equivalence import encode
from anonlib.measures.peers import EXAMPLES, example_dataset, ppp, privacy_matrix
from anonlib.measures.peers.matrix import _record_walk
from bench import Benchmark

MILLION = 1_000_000
MILLION_VARIABLES = (*EXAMPLES["diabetes"].variables, "A1Cresult")

_SECONDS: dict[str, list[float]] = {}  # wall times of the runs, to compare with the references
_CPU: dict[str, list[float]] = {}  # CPU seconds of the same runs (less inflated by other processes' load)


def _frame(key: str):
    frame, _ = example_dataset(key).analysis_frame(list(EXAMPLES[key].variables))
    return frame, list(EXAMPLES[key].variables)


def _matrix(measure: str, key: str | None = None):
    def run(inputs):
        frame, variables = inputs
        start, cpu = time.perf_counter(), time.process_time()
        result = privacy_matrix(frame, variables, measure)
        if key:
            _SECONDS.setdefault(key, []).append(time.perf_counter() - start)
            _CPU.setdefault(key, []).append(time.process_time() - cpu)
        return result

    return run


def _million():
    """10^6 records x 9 variables of the diabetes sample (the paper's 8 and A1Cresult), each
    column drawn independently from the sample's 101,766 values (seed 0), missing race kept
    as a value: 536,069 distinct records."""
    frame = example_dataset("diabetes").frame
    rng = np.random.default_rng(0)
    data = {c: frame[c].to_numpy()[rng.integers(0, len(frame), MILLION)] for c in MILLION_VARIABLES}
    return pd.DataFrame(data), list(MILLION_VARIABLES)


def _record_walk_matrix(key: str):
    """What privacy_matrix ran before the lattice of tables: the walk over the distinct records."""

    def run(inputs):
        frame, variables = inputs
        start, cpu = time.perf_counter(), time.process_time()
        table = encode(frame, variables)
        codes = [np.ascontiguousarray(table.codes[:, j]) for j in range(len(variables))]
        cards = list(table.cardinalities)
        result = _record_walk(
            table, variables, codes, cards, [0.0] * len(variables), "ppp", True, None, len(variables) - 1
        )
        _SECONDS[f"{key} before"] = [time.perf_counter() - start]
        _CPU[f"{key} before"] = [time.process_time() - cpu]
        return result

    return run


def _against(key: str, reference_key: str, target_ratio: float | None = None, target_s: float | None = None):
    """A note: privacy_matrix's median beside this row's time (same run), and the targets."""

    def note(result) -> str:
        ours = statistics.median(_SECONDS[key]) if _SECONDS.get(key) else None
        reference = _SECONDS.get(reference_key)
        if ours is None or not reference:
            return ""
        ratio = ours / reference[-1]
        cpu, cpu_reference = statistics.median(_CPU[key]), _CPU[reference_key][-1]
        text = (
            f"privacy_matrix {ours:.2f} s = {ratio:.3f}x of this ({reference[-1]:.1f} s); "
            f"CPU {cpu:.2f} s = {cpu / cpu_reference:.3f}x of this ({cpu_reference:.1f} s)"
        )
        if target_ratio is not None:
            text += (
                f"; target <= {target_ratio}x: wall {'ok' if ratio <= target_ratio else 'MISSED'}, "
                f"CPU {'ok' if cpu / cpu_reference <= target_ratio else 'MISSED'}"
            )
        if target_s is not None:
            text += f"; target < {target_s} s: {'ok' if ours < target_s else 'MISSED'}"
        return text

    return note


def _groupby_per_subset_records(inputs) -> int:
    """For every non-empty subset of the variables, ``df.groupby(subset).size()`` mapped back to
    the records (what a plain pandas computation needs before any PPP is formed)."""
    frame, variables = inputs
    start, cpu = time.perf_counter(), time.process_time()
    check = 0
    for k in range(1, len(variables) + 1):
        for subset in itertools.combinations(variables, k):
            sizes = frame.groupby(list(subset), dropna=False, observed=True)[subset[0]].transform("size").to_numpy()
            check += int(sizes[0])
    _SECONDS["million reference"] = [time.perf_counter() - start]
    _CPU["million reference"] = [time.process_time() - cpu]
    return check


def _describe(result) -> str:
    m = len(result.variables)
    shares = result.summary(0.0)["protected share"]
    return (
        f"{result.n_individuals:,} x {m}, {m * 2 ** (m - 1):,} subset evaluations, "
        f"protected share at p=0 {shares.min():.3f}..{shares.max():.3f}"
    )


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
        0.3,
        lambda: _frame("adult"),
        _matrix("ppp", "adult"),
        repeat=5,
        reference="authors' R code: ~4,000 CPU-minutes for Fig. 2; target 0.3 s",
        note=_describe,
    ),
    Benchmark(
        "peers: record walk (before), Fig. 2 min PPP, Adult",
        None,
        lambda: _frame("adult"),
        _record_walk_matrix("adult"),
        repeat=1,
        note=_against("adult", "adult before", target_s=0.3),
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
    Benchmark(
        "peers: Fig. 2 min PPP, 10^6 x 9 (536,069 distinct)",
        None,
        _million,
        _matrix("ppp", "million"),
        repeat=3,
        note=_describe,
    ),
    Benchmark(
        "peers: reference, groupby per subset to records, 10^6 x 9",
        None,
        _million,
        _groupby_per_subset_records,
        repeat=1,
        note=_against("million", "million reference", target_ratio=0.1),
    ),
    Benchmark(
        "peers: record walk (before), Fig. 2 min PPP, 10^6 x 9",
        None,
        _million,
        _record_walk_matrix("million"),
        repeat=1,
        note=_against("million", "million before"),
    ),
]
