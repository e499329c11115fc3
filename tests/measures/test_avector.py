"""Partitions, lexicographic index and anonymity improvement (Caballero et al., section 5)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonlib.core.errors import ParameterError
from anonlib.measures.avector import (
    _index_terms,
    _large_terms,
    _LeadingTerms,
    _small_terms,
    anonymity_vector,
    hardy_ramanujan,
    improvement,
    lex_compare,
    lex_index,
    more_anonymous,
    partition_count,
    partition_table,
    population_of,
    scientific,
)

P5000 = 169820168825442121851975101689306431361757683049829233322203824652329144349


def _partitions(n: int, largest: int | None = None):
    """Every partition of n as a list of parts, largest first (obviously correct, slow)."""
    largest = n if largest is None else largest
    if n == 0:
        yield []
        return
    for part in range(min(n, largest), 0, -1):
        for rest in _partitions(n - part, part):
            yield [part, *rest]


def _padded(vector: tuple[int, ...], n: int) -> tuple[int, ...]:
    return tuple(vector) + (0,) * (n - len(vector))


def _vectors_of(sizes_strategy):
    return sizes_strategy.map(anonymity_vector)


class_sizes = st.lists(st.integers(1, 40), min_size=1, max_size=40)


def test_partition_count_exact():
    assert partition_count(5000) == P5000
    assert [partition_count(n) for n in range(8)] == [1, 1, 2, 3, 5, 7, 11, 15]
    assert partition_table(5000)[5000] == P5000
    assert partition_count(-1) == 0


def test_hardy_ramanujan_close_for_large_n():
    # The paper says the error is below 0.3% for N >= 5000; it is 0.63% at 5000
    # (the formula overestimates by about 1/sqrt(N)) and shrinks with N.
    assert 0.006 < hardy_ramanujan(5000) / P5000 - 1 < 0.007
    assert hardy_ramanujan(50_000) / partition_count(50_000) - 1 < 0.003
    assert hardy_ramanujan(10) > partition_count(10)


def test_scientific_rounds_exact_integers():
    assert scientific(P5000) == "1.698e+74"
    assert scientific(99995, digits=2) == "1.0e+05"
    assert scientific(-1234) == "-1.234e+03"


def test_lex_index_matches_brute_force_for_every_vector_up_to_20():
    for n in range(1, 21):
        keys = sorted(_padded(anonymity_vector(p), n) for p in _partitions(n))
        assert len(keys) == partition_count(n)
        for position, key in enumerate(keys):
            # vectors sorted ascending: the ones after this position are greater
            assert lex_index(key) == len(keys) - 1 - position, (n, key)


def test_lex_index_ends():
    for n in (1, 7, 300):
        assert lex_index((n,)) == 0
        assert lex_index((0,) * (n - 1) + (1,)) == partition_count(n) - 1


def test_running_example_indices_and_improvement():
    base, table6, optimal, heuristic = (0, 1, 0, 2, 1), (11, 2), (0, 2, 1, 2), (2, 3, 1, 1)
    assert lex_compare(optimal, heuristic) == -1
    assert more_anonymous(heuristic, table6)
    indices = [lex_index(v) for v in (base, optimal, heuristic, table6)]
    assert indices == sorted(indices, reverse=True)  # base is the most anonymous
    assert improvement(optimal, heuristic, base) == pytest.approx(float(Fraction(indices[1] - indices[2], indices[0])))
    assert improvement(table6, table6, base) == 0.0
    assert improvement((15,), (15,), (15,)) == 0.0


@settings(max_examples=40, deadline=None)
@given(class_sizes)
def test_both_ways_of_computing_terms_agree(sizes):
    vector = anonymity_vector(sizes)
    trivial, small, large = _index_terms(vector)
    pairs = small + large
    assert trivial + _small_terms(pairs) == trivial + _large_terms(pairs) == lex_index(vector)


@settings(max_examples=40, deadline=None)
@given(class_sizes, st.data())
def test_index_orders_like_the_vectors(sizes, data):
    a = anonymity_vector(sizes)
    other = data.draw(st.permutations(sizes))
    # split classes of the same population differently
    cut = data.draw(st.integers(0, len(other)))
    b = anonymity_vector([s for s in other[:cut]] + [x for s in other[cut:] for x in (s // 2, s - s // 2)])
    assert population_of(a) == population_of(b)
    order = lex_compare(a, b)
    assert (lex_index(a) > lex_index(b)) == (order < 0)
    assert (lex_index(a) == lex_index(b)) == (order == 0)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 300), min_size=1, max_size=30), st.randoms(use_true_random=False))
def test_improvement_leading_terms_equal_exact(sizes, rnd):
    base = anonymity_vector(sizes)
    split = lambda s: [x for x in (rnd.randint(0, s),) for x in (x, s - x)]  # noqa: E731
    v1 = anonymity_vector([x for s in sizes for x in split(s)])
    v2 = anonymity_vector([x for s in sizes for x in split(s)])
    exact = improvement(v1, v2, base, exact=True)
    fast = improvement(v1, v2, base, exact=False)
    assert -1.0 <= exact <= 1.0
    assert fast == pytest.approx(exact, rel=1e-12, abs=1e-300)
    difference = _LeadingTerms().difference(v1, v2)
    assert abs(difference - (lex_index(v1) - lex_index(v2))) <= abs(difference) * 1e-14 + 1


def test_bad_inputs_are_explained():
    with pytest.raises(ParameterError, match="negative"):
        lex_index((1, -1))
    with pytest.raises(ParameterError, match="whole number"):
        lex_index((1.5,))
    with pytest.raises(ParameterError, match="different numbers of people"):
        improvement((2,), (3,), (1, 1))


def _reference_index(vector: tuple[int, ...]) -> int:
    """The closed form sum_j P_{>=j}(R_j - j (v_j + 1)) with P_{>=j}(n) from the plain O(N^2) recurrence table."""
    n_total = population_of(vector)
    at_least = [[0] * (n_total + 1) for _ in range(n_total + 2)]  # at_least[j][n]
    for j in range(n_total + 1, 0, -1):
        at_least[j][0] = 1
        for n in range(1, n_total + 1):
            above = at_least[j + 1][n] if j + 1 <= n_total + 1 else 0
            at_least[j][n] = above + (at_least[j][n - j] if n >= j else 0)
    total, remaining = 0, n_total
    for j, x in enumerate(vector, start=1):
        n = remaining - j * (x + 1)
        total += at_least[j][n] if n >= 0 else 0
        remaining -= j * x
    return total


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 60), min_size=1, max_size=12))
def test_lex_index_matches_the_plain_recurrence(sizes):
    vector = anonymity_vector(sizes)
    assert lex_index(vector) == _reference_index(vector)


@pytest.mark.parametrize("sizes", [["a"], ["1"], [1, "x"], [None]])
def test_non_numeric_class_sizes_are_a_parameter_error(sizes):
    with pytest.raises(ParameterError, match="whole numbers"):
        anonymity_vector(sizes)
