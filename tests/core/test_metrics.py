"""Discernibility and non-uniform entropy: hand-computed worked examples and slow references."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonlib.core.errors import ColumnError, ParameterError
from anonlib.core.metrics import discernibility, nonuniform_entropy, nonuniform_entropy_codes, weighted_median, whole_k


def test_discernibility_worked_example():
    # Class sizes [5, 3, 1, 7], k = 3, N = 16 -> 25 + 9 + 16 * 1 + 49 = 99.
    assert discernibility([5, 3, 1, 7], k=3) == 99


def test_nonuniform_entropy_worked_example():
    # Records r1:3, r2:1, r3:2, r4:2; A = {r1, r2}, B = {r3, r4} -> 7.24511 bits.
    original = ["r1"] * 3 + ["r2"] + ["r3"] * 2 + ["r4"] * 2
    generalized = ["A"] * 4 + ["B"] * 4
    assert round(nonuniform_entropy(original, generalized), 5) == 7.24511


def test_nonuniform_entropy_with_counts_matches_expanded_rows():
    value = nonuniform_entropy(["r1", "r2", "r3", "r4"], ["A", "A", "B", "B"], count=[3, 1, 2, 2])
    assert round(value, 5) == 7.24511


def _dm_reference(sizes: list[int], k: int) -> int:
    """Per record: 'how many records is it indistinguishable from'."""
    n = sum(sizes)
    total = 0
    for size in sizes:
        for _ in range(size):
            total += size if size >= k else n
    return total


def _nue_reference(original: list[str], generalized: list[str]) -> float:
    pairs = Counter(zip(original, generalized))
    totals = Counter(generalized)
    return -sum(math.log2(pairs[(o, g)] / totals[g]) for o, g in zip(original, generalized))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 40), max_size=30), st.integers(1, 12))
def test_discernibility_matches_per_record_reference(sizes, k):
    assert discernibility(sizes, k) == _dm_reference(sizes, k)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcdef"), st.sampled_from(["A", "B", "C", "*"])), max_size=60))
def test_nonuniform_entropy_matches_reference(pairs):
    original = [p[0] for p in pairs]
    generalized = [p[1] for p in pairs]
    assert nonuniform_entropy(original, generalized) == pytest.approx(_nue_reference(original, generalized), abs=1e-9)


def test_no_generalization_loses_nothing_and_full_suppression_is_the_entropy():
    original = ["a", "b", "b", "c"]
    assert nonuniform_entropy(original, original) == 0.0
    # All suppressed: -sum log2 p(value) = N * Shannon entropy of the column.
    expected = -(2 * math.log2(1 / 4) + 2 * math.log2(2 / 4))
    assert nonuniform_entropy(original, ["*"] * 4) == pytest.approx(expected)


def test_codes_version_agrees_with_labels_version():
    rng = np.random.default_rng(3)
    orig = rng.integers(0, 7, 500)
    gen = orig // 3
    weights = rng.integers(1, 5, 500)
    labels = nonuniform_entropy([f"r{v}" for v in orig], [f"g{v}" for v in gen], count=weights)
    assert nonuniform_entropy_codes(orig, 7, gen, 3, weights) == pytest.approx(labels)


def test_bad_parameters_are_explained():
    with pytest.raises(ParameterError, match="k must be a whole number of at least 1; got 0"):
        discernibility([1, 2], k=0)
    with pytest.raises(ParameterError, match="same length"):
        nonuniform_entropy(["a"], ["a", "b"])
    with pytest.raises(ParameterError, match="negative; found -1"):
        discernibility([-1], k=1)


def test_discernibility_rejects_fractional_sizes_and_bad_k():
    # Used to truncate 2.5 to 2 silently (and return 5).
    with pytest.raises(ParameterError, match="whole numbers; found 2.5"):
        discernibility([2.5, 1], 2)
    with pytest.raises(ParameterError, match="got -2"):
        discernibility([2, 1], -2)
    with pytest.raises(ParameterError, match="got 2.5"):
        discernibility([2, 1], 2.5)
    # Whole numbers stored as floats are fine.
    assert discernibility(np.array([3.0, 1.0]), 2.0) == discernibility([3, 1], 2) == 13


def test_whole_k():
    assert whole_k(np.int64(3)) == 3
    for bad in (0, -1, 1.5, True, "two", None):
        with pytest.raises(ParameterError, match="whole number of at least 1"):
            whole_k(bad)


def test_nonuniform_entropy_validates_counts():
    # Used to return -2.0.
    with pytest.raises(ColumnError, match="cannot be negative; found -1"):
        nonuniform_entropy(["a", "b"], ["*", "*"], count=[-1, 2])
    with pytest.raises(ColumnError, match="found 0.5"):
        nonuniform_entropy(["a", "b"], ["*", "*"], count=[0.5, 2])
    with pytest.raises(ColumnError, match="whole numbers; found 'x'"):
        nonuniform_entropy(["a", "b"], ["*", "*"], count=["x", 2])
    with pytest.raises(ColumnError, match="3 counts for 2 values"):
        nonuniform_entropy(["a", "b"], ["*", "*"], count=[1, 2, 3])
    # A zero count is a row with no records: the same as leaving the row out.
    assert nonuniform_entropy(["a", "b", "c"], ["*", "*", "*"], count=[1, 1, 0]) == 2.0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(-50, 50), st.integers(1, 6)), min_size=1, max_size=30))
def test_weighted_median_is_the_lower_median_of_the_expanded_values(pairs):
    values = np.array([v for v, _ in pairs], dtype=float)
    weights = np.array([w for _, w in pairs])
    expanded = sorted(np.repeat(values, weights))
    assert weighted_median(values, weights) == expanded[(len(expanded) - 1) // 2]


def test_huge_classes_stay_exact():
    # 3e9 squared passes 2**63: the result must still be an exact integer.
    assert discernibility([3_000_000_000], k=1) == 9_000_000_000_000_000_000
