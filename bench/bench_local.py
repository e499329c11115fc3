"""Local suppression and MDAV microaggregation on Adult and on Adult resampled to 10^6 records.

Data: the bundled Adult file. Local suppression uses the records complete on
age, sex, race, marital-status, education, native-country (31,978), k = 5 (the
case the local-suppression target names); the 10^6 resample (with replacement, seed 0) holds
each record about 31 times, so k = 5 fails nobody there and the row uses
k = 100 (253,274 records failing). MDAV uses age, education-num and
hours-per-week, k = 5.

Slow references, timed beside: the pairwise wildcard recount (O(n^2)) on a
2,000-record subsample, and a textbook MDAV (a Python loop over records, O(n^2
/ k)) on a 2,000-record subsample; the notes say whether they agree.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from anonlib.core.equivalence import row_class_sizes
from anonlib.core.samples import load_sample
from anonlib.measures.target import ReleaseTarget
from anonlib.measures.wildcard import wildcard_matches
from anonlib.transformations.microaggregation import microaggregate
from anonlib.transformations.suppression import local_suppression
from bench import Benchmark

QIS = ["age", "sex", "race", "marital-status", "education", "native-country"]
NUMBERS = ["age", "education-num", "hours-per-week"]
N = 1_000_000
SUBSAMPLE = 2_000


@functools.lru_cache(maxsize=1)
def adult() -> pd.DataFrame:
    return load_sample("adult").frame.dropna(subset=QIS).reset_index(drop=True)


@functools.lru_cache(maxsize=1)
def million() -> pd.DataFrame:
    frame = adult()
    return frame.iloc[np.random.default_rng(0).integers(0, len(frame), N)].reset_index(drop=True)


def _subsample() -> pd.DataFrame:
    return adult().sample(SUBSAMPLE, random_state=1).reset_index(drop=True)


def _suppress(k: int):
    def run(frame: pd.DataFrame) -> dict:
        result = local_suppression(frame, QIS, k)
        return {"result": result, "frame": frame, "k": k}

    return run


def _suppress_note(r: dict) -> str:
    result, frame, k = r["result"], r["frame"], r["k"]
    record_suppression = int((row_class_sizes(frame, QIS) < k).sum())
    met = int(wildcard_matches(result.table, QIS).min()) >= k
    return (
        f"{len(frame):,} records, k = {k}: {result.cells:,} cells in {result.records:,} records "
        f"(record suppression: {record_suppression:,}); k met on recount: {met}"
    )


def _pairwise(frame: pd.DataFrame) -> np.ndarray:
    values = frame[QIS].astype(str).to_numpy()
    blank = frame[QIS].isna().to_numpy()
    return np.array([((values == values[i]) | blank | blank[i]).all(axis=1).sum() for i in range(len(values))])


def _recount_compare(frame: pd.DataFrame) -> dict:
    table = local_suppression(frame, QIS, 5).table
    return {"same": bool((_pairwise(table) == wildcard_matches(table, QIS)).all()), "n": len(frame)}


def _mdav(frame: pd.DataFrame) -> dict:
    result = microaggregate(frame, NUMBERS, target=ReleaseTarget(5))
    return {"result": result, "n": len(frame)}


def _mdav_note(r: dict) -> str:
    result = r["result"]
    return (
        f"{r['n']:,} records: {len(result.group_sizes):,} groups of {result.group_sizes.min()}-"
        f"{result.group_sizes.max()}, SSE/SST {result.loss:.4f}"
    )


def textbook_mdav(values: np.ndarray, k: int) -> list[frozenset[int]]:
    """MDAV as the paper states it, one record at a time (the slow reference)."""
    spread = values.std(axis=0)
    z = (values - values.mean(axis=0)) / np.where(spread > 0, spread, 1.0)
    remaining = np.arange(len(z))
    groups = []

    def take(center):
        nonlocal remaining
        d = ((z[remaining] - center) ** 2).sum(axis=1)
        chosen = remaining[np.lexsort((remaining, d))[:k]]
        remaining = np.setdiff1d(remaining, chosen)
        groups.append(frozenset(chosen.tolist()))

    def farthest(center):
        return z[remaining[np.argmax(((z[remaining] - center) ** 2).sum(axis=1))]]

    while len(remaining) >= 3 * k:
        r = farthest(z[remaining].mean(axis=0))
        take(r)
        take(farthest(r))
    if len(remaining) >= 2 * k:
        take(farthest(z[remaining].mean(axis=0)))
    if len(remaining):
        groups.append(frozenset(remaining.tolist()))
    return groups


def _distinct_subsample() -> pd.DataFrame:
    # jittered so records are distinct (the textbook and the merged-points MDAV then agree exactly)
    frame = _subsample()[NUMBERS].astype(float)
    return frame + np.random.default_rng(2).normal(scale=1e-3, size=frame.shape)


def _mdav_compare(frame: pd.DataFrame) -> dict:
    fast = microaggregate(frame, NUMBERS, target=ReleaseTarget(5)).groups
    mine = {frozenset(np.flatnonzero(fast == g).tolist()) for g in np.unique(fast)}
    return {"same": mine == set(textbook_mdav(frame.to_numpy(), 5)), "n": len(frame)}


BENCHMARKS = [
    Benchmark(
        "local suppression: Adult complete records, 6 QIs, k=5", 2.0, adult, _suppress(5), repeat=3, note=_suppress_note
    ),
    Benchmark(
        "local suppression: Adult resampled to 10^6, k=100",
        30.0,
        million,
        _suppress(100),
        repeat=1,
        note=_suppress_note,
    ),
    Benchmark(
        f"local suppression reference: pairwise recount, {SUBSAMPLE:,} records",
        None,
        _subsample,
        _recount_compare,
        repeat=1,
        note=lambda r: f"equal to the kernel count: {r['same']}",
    ),
    Benchmark(
        "MDAV: Adult (32,561 records), 3 numeric columns, k=5",
        10.0,
        lambda: load_sample("adult").frame,
        _mdav,
        repeat=1,
        note=_mdav_note,
    ),
    Benchmark("MDAV: Adult resampled to 10^6, k=5", 60.0, million, _mdav, repeat=1, note=_mdav_note),
    Benchmark(
        f"MDAV: {SUBSAMPLE:,} distinct records (fast)",
        None,
        _distinct_subsample,
        lambda f: _mdav(f),
        repeat=3,
        note=_mdav_note,
    ),
    Benchmark(
        f"MDAV reference: textbook loop, {SUBSAMPLE:,} distinct records",
        None,
        _distinct_subsample,
        _mdav_compare,
        repeat=1,
        note=lambda r: f"same groups as the fast MDAV: {r['same']}",
    ),
]
