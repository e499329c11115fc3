"""MDAV microaggregation (``anonlib.transformations.microaggregation``) against a slow textbook MDAV."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonlib.core.errors import ColumnError, ParameterError
from anonlib.measures.target import ReleaseTarget
from anonlib.transformations.microaggregation import information_loss, mdav, microaggregate


def reference_mdav(values: np.ndarray, k: int) -> list[frozenset[int]]:
    """Textbook MDAV (Domingo-Ferrer & Mateo-Sanz 2002) on standardized rows, one record each."""
    spread = values.std(axis=0)
    z = (values - values.mean(axis=0)) / np.where(spread > 0, spread, 1.0)
    remaining = list(range(len(z)))
    groups = []

    def farthest(center):
        return max(remaining, key=lambda i: (((z[i] - center) ** 2).sum(), -i))

    def group_around(r):
        chosen = sorted(remaining, key=lambda i: (((z[i] - z[r]) ** 2).sum(), i))[:k]
        for i in chosen:
            remaining.remove(i)
        groups.append(frozenset(chosen))

    while len(remaining) >= 3 * k:
        r = farthest(z[remaining].mean(axis=0))
        group_around(r)
        group_around(farthest(z[r]))
    if len(remaining) >= 2 * k:
        group_around(farthest(z[remaining].mean(axis=0)))
    if remaining:
        groups.append(frozenset(remaining))
    return groups


def partition(groups: np.ndarray) -> set[frozenset[int]]:
    return {frozenset(np.flatnonzero(groups == g).tolist()) for g in np.unique(groups)}


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 40), st.integers(1, 3), st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_groups_equal_textbook_mdav_on_distinct_records(n, d, k, seed):
    values = np.random.default_rng(seed).normal(size=(n, d)) * np.array([1, 100, 0.01])[:d]
    frame = pd.DataFrame(values, columns=[f"x{j}" for j in range(d)])
    if n < k:
        with pytest.raises(ParameterError):
            microaggregate(frame, list(frame.columns), target=ReleaseTarget(k))
        return
    result = microaggregate(frame, list(frame.columns), target=ReleaseTarget(k))
    assert partition(result.groups) == set(reference_mdav(values, k))


def frames(with_count: bool):
    @st.composite
    def build(draw):
        n = draw(st.integers(1, 30))
        data = {
            "a": draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)),
            "b": draw(st.lists(st.floats(-50, 50, allow_nan=False), min_size=n, max_size=n)),
            "label": [f"r{i}" for i in range(n)],
        }
        if with_count:
            data["n"] = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
        frame = pd.DataFrame(data)
        frame.index = frame.index * 3 + 7
        return frame

    return build()


def check_groups(frame, result, k, count):
    weights = frame[count].to_numpy() if count else np.ones(len(frame))
    sizes = np.bincount(result.groups, weights=weights)
    assert (sizes >= k).all()
    if count is None:
        assert (sizes <= 2 * k - 1).all()
    assert result.table.index.equals(frame.index)
    assert result.table["label"].equals(frame["label"])
    for column in ("a", "b"):
        released = result.table[column].to_numpy()
        for g in np.unique(result.groups):
            rows = result.groups == g
            assert np.unique(released[rows]).size == 1  # a group shares one value
            original = frame[column].to_numpy()[rows]
            assert original.min() - 1e-9 <= released[rows][0] <= original.max() + 1e-9
    assert result.loss >= 0.0
    if result.statistic == "mean":  # the mean minimizes SSE within a group; one group gives SST
        assert result.loss <= 1.0 + 1e-9


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frames(False), st.integers(1, 5))
def test_groups_hold_k_to_2k_minus_1_records_and_keep_each_mean(frame, k):
    if len(frame) < k:
        return
    result = microaggregate(frame, ["a", "b"], target=ReleaseTarget(k))
    check_groups(frame, result, k, None)
    for column in ("a", "b"):
        assert np.isclose(result.table[column].mean(), frame[column].mean(), atol=1e-9)
    assert result.table.equals(mdav(frame, ["a", "b"], k))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frames(True), st.integers(1, 5), st.sampled_from(["mean", "median"]))
def test_with_counts_groups_hold_at_least_k_records_and_keep_the_weighted_mean(frame, k, statistic):
    if frame["n"].sum() < k:
        with pytest.raises(ParameterError):
            microaggregate(frame, ["a", "b"], target=ReleaseTarget(k), count="n")
        return
    result = microaggregate(frame, ["a", "b"], target=ReleaseTarget(k), count="n", statistic=statistic)
    check_groups(frame, result, k, "n")
    assert result.table["n"].equals(frame["n"])
    if statistic == "mean":
        w = frame["n"].to_numpy()
        for column in ("a", "b"):
            assert np.isclose(w @ result.table[column].to_numpy(), w @ frame[column].to_numpy(), atol=1e-6)


def test_median_of_a_group_is_the_middle_record():
    frame = pd.DataFrame({"x": [1.0, 2.0, 10.0, 50.0, 51.0, 90.0]})
    result = microaggregate(frame, ["x"], target=ReleaseTarget(3), statistic="median")
    assert result.table["x"].tolist() == [2.0, 2.0, 2.0, 51.0, 51.0, 51.0]
    counted = pd.DataFrame({"x": [1.0, 3.0], "n": [1, 3]})
    assert microaggregate(counted, ["x"], target=ReleaseTarget(4), count="n", statistic="median").table[
        "x"
    ].tolist() == [3.0, 3.0]
    even = pd.DataFrame({"x": [1.0, 3.0], "n": [2, 2]})
    assert microaggregate(even, ["x"], target=ReleaseTarget(4), count="n", statistic="median").table["x"].tolist() == [
        2.0,
        2.0,
    ]


def test_repeated_values_form_their_own_groups_and_lose_nothing():
    frame = pd.DataFrame({"x": [5] * 7 + [9] * 3})
    result = microaggregate(frame, ["x"], target=ReleaseTarget(3))
    assert result.table["x"].tolist() == frame["x"].astype(float).tolist()
    assert result.sse == 0.0 and sorted(result.group_sizes.tolist()) == [3, 3, 4]


def test_a_small_remainder_joins_or_borrows_from_the_nearest_repeated_value():
    joined = microaggregate(pd.DataFrame({"x": [5] * 5 + [9] * 3 + [100]}), ["x"], target=ReleaseTarget(3))
    assert joined.table["x"].tolist()[5:] == [31.75] * 4  # 9, 9, 9, 100: four records fit in 2k - 1
    borrowed = microaggregate(pd.DataFrame({"x": [5] * 3 + [9] * 5 + [100]}), ["x"], target=ReleaseTarget(3))
    sizes = np.bincount(borrowed.groups)
    assert sorted(sizes.tolist()) == [3, 3, 3]
    assert borrowed.table["x"].tolist() == [5.0] * 3 + [118 / 3] * 2 + [9.0] * 3 + [118 / 3]


def test_information_loss_is_sse_over_sst_in_standard_units():
    original = pd.DataFrame({"x": [0.0, 2.0, 4.0, 6.0]})
    released = pd.DataFrame({"x": [1.0, 1.0, 5.0, 5.0]})
    sse, sst = information_loss(original, released, ["x"])
    variance = original["x"].var(ddof=0)
    assert sse == pytest.approx(4 / variance) and sst == pytest.approx(4.0)
    assert microaggregate(original, ["x"], target=ReleaseTarget(2)).loss == pytest.approx(0.2)


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda f: mdav(f, ["t"], 2), ColumnError),
        (lambda f: mdav(f, ["gap"], 2), ColumnError),
        (lambda f: mdav(f, ["nope"], 2), ColumnError),
        (lambda f: mdav(f, ["x"], 9), ParameterError),
        (lambda f: mdav(f, ["x"], 2, statistic="mode"), ParameterError),
        (lambda f: mdav(f, [], 2), ParameterError),
    ],
)
def test_bad_input_is_one_sentence(call, error):
    frame = pd.DataFrame({"x": [1.0, 2.0, 3.0], "t": ["a", "b", "c"], "gap": [1.0, None, 2.0]})
    with pytest.raises(error) as info:
        call(frame)
    assert str(info.value).endswith(".")
