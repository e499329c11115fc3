"""The Release view's counts and contingency tables are computed on value codes (factorize and
bincount); they must equal the pandas way they replaced (groupby, where/isin, crosstab) on seeded
random columns: many values with tied records (the "(other)" cut), numbers binned, intervals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anonlib.core.cells import cell_texts, numbers_in
from anonlib.workflow import release_view as rv


def old_counts(labels: pd.Series, weights: np.ndarray) -> dict[str, int]:
    totals = pd.Series(weights, index=labels.index).groupby(labels.to_numpy(), sort=False).sum()
    return {str(k): int(v) for k, v in totals.items()}


def old_pair_labels(series: pd.Series, view, before: bool) -> pd.Series:
    shown = cell_texts(series)
    if view.kind == "number":
        values, mask = numbers_in(series)
        edges = np.asarray(view.edges, dtype=float)
        labels = rv._bin_labels(edges, view.bins)
        index = rv._binned(values, mask, edges, view.bins)
        shown = shown.copy()
        shown[index >= 0] = [labels[i] for i in index[index >= 0]]
        return shown
    if view.kind == "number → categories" and before:
        values, mask = numbers_in(series)
        shown = shown.copy()
        for c in view.counts:
            bounds = rv._interval(c.value)
            if bounds is not None:
                shown[mask & (values >= bounds[0]) & (values <= bounds[1])] = c.value
    return shown


def old_top(labels: pd.Series, weights: np.ndarray) -> pd.Series:
    totals = pd.Series(weights, index=labels.index).groupby(labels.to_numpy()).sum().sort_values(ascending=False)
    if len(totals) <= rv.MAX_PAIR_VALUES:
        return labels
    keep = set(totals.index[: rv.MAX_PAIR_VALUES - 1])
    return labels.where(labels.isin(keep), "(other)")


def old_crosstab(a: pd.Series, b: pd.Series, weights: np.ndarray):
    a, b = old_top(a, weights), old_top(b, weights)
    table = pd.crosstab(a.to_numpy(), b.to_numpy(), values=weights, aggfunc="sum").fillna(0).astype(np.int64)
    rows = rv._order([str(r) for r in table.index], {str(k): int(v) for k, v in table.sum(axis=1).items()})
    cols = rv._order([str(c) for c in table.columns], {str(k): int(v) for k, v in table.sum(axis=0).items()})
    table.index, table.columns = [str(r) for r in table.index], [str(c) for c in table.columns]
    table = table.loc[rows, cols]
    return tuple(rows), tuple(cols), tuple(tuple(int(v) for v in r) for r in table.to_numpy())


def old_contingency(pair, before, after, views, w_before, w_after) -> rv.Contingency:
    a, b = pair
    rb, cb, tb = old_crosstab(
        old_pair_labels(before[a], views[a], True), old_pair_labels(before[b], views[b], True), w_before
    )
    ra, ca, ta = old_crosstab(
        old_pair_labels(after[a], views[a], False), old_pair_labels(after[b], views[b], False), w_after
    )
    return rv.Contingency((a, b), rb, cb, tb, ra, ca, ta)


def tables(seed: int):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(30, 600))
    values = int(rng.integers(2, 30))  # past 12 values: the "(other)" cut, with ties among few records
    age = rng.integers(17, 90, n).astype(float)
    age[rng.random(n) < 0.05] = np.nan
    before = pd.DataFrame(
        {
            "age": age,
            "code": rng.choice([f"c{i}" for i in range(values)], n),
            "dx": rng.choice(["flu", "asthma", "none", "copd"], n),
        }
    )
    after = before.copy()
    if seed % 2:  # ages turned into intervals, some codes suppressed
        bands = (before["age"] // 10 * 10).astype("Int64")
        after["age"] = [f"{b}-{b + 9}" if pd.notna(b) else None for b in bands]
        after.loc[rng.random(n) < 0.1, "code"] = "*"
    else:  # numbers kept, a few cells suppressed
        after["age"] = before["age"].astype(object)
        after.loc[rng.random(n) < 0.1, "age"] = "*"
    weights = rng.integers(1, 4, n) if seed % 3 == 0 else np.ones(n, dtype=np.int64)
    return before, after, weights


@pytest.mark.parametrize("seed", range(24))
def test_counts_and_contingency_as_the_pandas_way(seed):
    before, after, w = tables(seed)
    views = {c: rv.column_view(c, "quasi-identifier", before[c], after[c], w, w) for c in ("age", "code", "dx")}
    for pair in (("age", "code"), ("code", "dx"), ("dx", "age")):
        assert rv.contingency(pair, before, after, views, w, w) == old_contingency(pair, before, after, views, w, w)
    for column in ("age", "code", "dx"):
        labels = cell_texts(after[column])
        assert list(rv._counts(labels, w).items()) == list(old_counts(labels, w).items())
