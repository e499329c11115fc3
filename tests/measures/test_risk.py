"""Re-identification risk (anonlib.measures.risk): attacker models, the risk distribution, population
uniqueness estimates and special uniques, against hand computations and slow references."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy import stats

from anonlib.core.errors import AnonlibError, EmptySelectionError, ParameterError, PopulationError, ProblemTooLargeError
from anonlib.core.samples import load_sample
from anonlib.measures.risk import (
    estimate_suda,
    population_uniqueness,
    reidentification,
    risk_distribution,
    risk_from_sizes,
    suda,
)
from anonlib.measures.risk.uniqueness import shlosser, snb_probabilities


def test_prosecutor_marketer_and_records_above_the_arx_thresholds() -> None:
    # classes of 1, 2, 2, 5 records (10 records, 4 classes)
    df = pd.DataFrame({"zip": ["a"] + ["b"] * 2 + ["c"] * 2 + ["d"] * 5})
    r = reidentification(df, ["zip"])
    assert (r.records, r.classes) == (10, 4)
    assert r.prosecutor_highest == 1.0 and r.prosecutor_average == 0.4 and r.marketer == 0.4
    assert r.records_above == ((0.2, 5), (0.5, 1))  # risk 1/2 is not above 0.5
    assert r.records_at_risk == 0.5
    assert r.journalist_highest is None and r.k_map is None and r.population_uniques is None
    r3 = reidentification(df, ["zip"], threshold=0.3)
    assert r3.records_above == ((0.2, 5), (0.3, 5), (0.5, 1)) and r3.records_at_risk == 0.5


def test_journalist_and_marketer_with_a_population_table() -> None:
    df = pd.DataFrame({"zip": ["a", "b", "b"], "n": [1, 1, 2]})  # a: 1 record, b: 3 records
    population = pd.DataFrame({"zip": ["a", "b", "c"], "people": [4, 30, 100]})
    r = reidentification(df, ["zip"], count="n", population=population)
    assert r.k_map == 4 and r.journalist_highest == 0.25
    assert r.journalist_average == pytest.approx((1 / 4 + 3 / 30) / 4, rel=1e-15) and r.marketer == r.journalist_average
    assert r.journalist_records_at_risk == 0.25  # the record of 'a' (risk 1/4 > 0.2)
    assert r.prosecutor_highest == 1.0


def test_risk_distribution_bins_as_arx_draws_them() -> None:
    bins = risk_distribution([1, 2, 3, 7, 8, 100, 10**9])
    by_label = {b.label: b.records for b in bins if b.records}
    assert by_label == {
        "0–1e-06%": 10**9,
        "0.1–1%": 100,
        "10–12.5%": 8,
        "12.5–14.3%": 7,
        "25–33.3%": 3,
        "33.3–50%": 2,
        "50–100%": 1,
    }
    assert bins[-1].cumulative == 1.0 and sum(b.records for b in bins) == 10**9 + 121
    assert all(a.cumulative <= b.cumulative for a, b in zip(bins, bins[1:]))


def test_caballero_table2b_risk() -> None:
    ds = load_sample("caballero_table2b")
    r = reidentification(ds.frame, list(ds.quasi_identifiers))
    # classes of 2, 4, 4 and 5 (anonymity vector (0, 1, 0, 2, 1))
    assert r.prosecutor_highest == 0.5 and r.prosecutor_average == 4 / 15
    assert dict(r.records_above) == {0.2: 10, 0.5: 0}


sizes_lists = st.lists(st.integers(1, 30), min_size=1, max_size=80)


@settings(max_examples=80, deadline=None)
@example([1, 1, 12, 22], 0.5)  # Pitman's search stepped where expit rounds to 0: log(0) raised
@given(sizes_lists, st.floats(0.001, 1.0))
def test_population_uniqueness_within_0_1(sizes, f) -> None:
    u = population_uniqueness(sizes, f)
    for model in ("zayatz", "pitman", "snb", "dankar"):
        value = getattr(u, model)
        assert value is None or 0.0 <= value <= 1.0
    assert u.dankar is not None or (u.zayatz is None)


@settings(max_examples=60, deadline=None)
@given(sizes_lists)
def test_population_uniqueness_is_exact_at_sampling_fraction_one(sizes) -> None:
    u = population_uniqueness(sizes, 1.0)
    exact = sizes.count(1) / sum(sizes)
    assert u.zayatz == u.pitman == u.snb == u.dankar == exact


def test_no_sample_uniques_means_no_population_uniques() -> None:
    u = population_uniqueness([2, 3, 4], 0.05)
    assert u.as_dict() == {"zayatz": 0.0, "pitman": 0.0, "snb": 0.0, "dankar": 0.0}


def test_zayatz_equals_its_formula_with_the_hypergeometric_distribution() -> None:
    sizes = [1] * 10 + [2] * 6 + [3] * 4 + [7] * 2
    n, f = sum(sizes), 0.2
    population = round(n / f)
    classes = {j: sizes.count(j) for j in set(sizes)}
    h = {j: stats.hypergeom.pmf(1, population, j, n) for j in classes}
    conditional = classes[1] * h[1] / sum(c * h[j] for j, c in classes.items())
    assert population_uniqueness(sizes, f).zayatz == pytest.approx(classes[1] * conditional / f / population, rel=1e-10)


def test_snb_probabilities_equal_a_direct_sum_over_population_class_sizes() -> None:
    """Chen & Keller-McNulty's model: population class size 1 + NB(a, b), each person sampled with f."""
    for a, b, f in [(2.3, 0.4, 0.2), (0.5, 0.1, 0.05), (4.0, 0.8, 0.6)]:
        size = np.arange(1, 5000)
        weight = stats.nbinom.pmf(size - 1, a, b)
        p1 = float((weight * stats.binom.pmf(1, size, f)).sum())
        p2 = float((weight * stats.binom.pmf(2, size, f)).sum())
        assert snb_probabilities(a, b, f) == pytest.approx((p1, p2), rel=1e-9)


def test_shlosser_estimator() -> None:
    # K = u + c1 Σ (1-f)^j c_j / Σ j f (1-f)^(j-1) c_j
    assert shlosser(np.array([1, 2]), np.array([10, 5]), 0.5) == pytest.approx(15 + 10 * (5 + 1.25) / (5 + 2.5))


def test_estimates_recover_a_simulated_population() -> None:
    """A population of 200,000 with a known share of uniques, sampled at 5% and 30%: each model
    lands within a factor 1.5 of the truth, and Dankar's rule picks Pitman at 5%."""
    rng = np.random.default_rng(3)
    people = rng.zipf(1.3, 200_000) % 50_000
    _, counts = np.unique(people, return_counts=True)
    truth = (counts == 1).sum() / people.size
    for f, picked in ((0.05, "pitman"), (0.3, None)):
        _, sample_counts = np.unique(people[rng.random(people.size) < f], return_counts=True)
        u = population_uniqueness(sample_counts, f)
        for model in ("zayatz", "pitman", "snb", "dankar"):
            assert truth / 1.5 < getattr(u, model) < truth * 1.5, (f, model)
        assert picked is None or u.dankar_model == picked
        assert u.dankar == getattr(u, u.dankar_model)


def _coarsen(df: pd.DataFrame, column: str, groups: int) -> pd.DataFrame:
    return df.assign(**{column: df[column] % groups})


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 3)), min_size=1, max_size=60), st.integers(1, 5))
def test_generalizing_never_raises_the_prosecutor_risk(rows, groups) -> None:
    df = pd.DataFrame(rows, columns=["a", "b"])
    before = reidentification(df, ["a", "b"])
    after = reidentification(_coarsen(df, "a", groups), ["a", "b"])
    assert after.prosecutor_highest <= before.prosecutor_highest
    assert after.prosecutor_average <= before.prosecutor_average
    assert after.records_at_risk <= before.records_at_risk
    assert reidentification(df, ["a"]).prosecutor_average <= before.prosecutor_average  # fewer quasi-identifiers


# --------------------------------------------------------------------------- SUDA


def _slow_msus(df: pd.DataFrame, qis: list[str], max_size: int) -> set[tuple[int, tuple[str, ...]]]:
    out = set()
    unique = {}
    for size in range(1, max_size + 1):
        for subset in itertools.combinations(qis, size):
            counts = df.groupby(list(subset), dropna=False)[list(subset)[0]].transform("size")
            unique[subset] = set(df.index[counts.to_numpy() == 1])
    for subset, rows in unique.items():
        for row in rows:
            smaller = [s for r in range(1, len(subset)) for s in itertools.combinations(subset, r)]
            if not any(row in unique[s] for s in smaller):
                out.add((row, subset))
    return out


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(0, 3), st.integers(0, 1)), min_size=1, max_size=40
    ),
    st.integers(1, 4),
)
def test_suda_finds_exactly_the_minimal_sample_uniques(rows, max_size) -> None:
    df = pd.DataFrame(rows, columns=["a", "b", "c", "d"])
    qis = ["a", "b", "c", "d"]
    s = suda(df, qis, max_size=max_size)
    found = {(int(r), s.combinations[i]) for r, i in zip(s.rows, s.subsets)}
    assert found == _slow_msus(df, qis, max_size)
    assert s.special_unique_records == len({r for r, _ in found})
    assert sum(n for _, n in s.by_size()) == s.special_unique_records


def test_suda_honours_the_count_column() -> None:
    df = pd.DataFrame({"a": [1, 2, 3], "n": [1, 2, 1]})
    s = suda(df, ["a"], count="n")
    assert sorted(s.rows.tolist()) == [0, 2]  # the row standing for two records is not unique


def test_suda_on_adult_lists_the_combinations_that_single_records_out() -> None:
    df = load_sample("adult").frame
    s = suda(df, ["age", "sex", "race", "marital-status"], max_size=2)
    smallest = s.smallest
    assert s.special_unique_records == int((smallest > 0).sum()) > 0
    row = int(np.flatnonzero(smallest == 1)[0])
    (combination,) = [c for c in s.for_row(row) if len(c) == 1]
    assert (df[combination[0]] == df[combination[0]].iloc[row]).sum() == 1


def test_suda_refuses_work_beyond_the_limit_with_a_sentence() -> None:
    estimate = estimate_suda(10**7, 30, 15)
    assert estimate.operations == sum(math.comb(30, s) for s in range(1, 16)) * 10**7
    df = pd.DataFrame({c: np.arange(2000) % (i + 2) for i, c in enumerate("abcdefghijkl")})
    with pytest.raises(
        ProblemTooLargeError, match="choose fewer quasi-identifiers or a smaller largest combination size"
    ):
        suda(df, list("abcdefghijkl"), max_size=12, max_seconds=0.01)
    with pytest.raises(ParameterError, match="from 1 to the number of quasi-identifiers \\(2\\); got 3"):
        suda(df, ["a", "b"], max_size=3)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "call, error, phrase",
    [
        (
            lambda: reidentification(pd.DataFrame({"a": [1]}), ["a"], sampling_fraction=0),
            ParameterError,
            "above 0 and at most 1; got 0",
        ),
        (lambda: reidentification(pd.DataFrame({"a": [1]}), ["a"], sampling_fraction=1.5), ParameterError, "got 1.5"),
        (lambda: reidentification(pd.DataFrame({"a": [1]}), ["a"], sampling_fraction="x"), ParameterError, "got 'x'"),
        (lambda: reidentification(pd.DataFrame({"a": [1]}), ["a"], threshold=1.0), ParameterError, "below 1; got 1"),
        (
            lambda: reidentification(pd.DataFrame({"a": [1]}), ["a"], population=pd.DataFrame({"b": [1]})),
            PopulationError,
            "lacks the quasi-identifier columns a",
        ),
        (
            lambda: reidentification(pd.DataFrame({"a": [1, 2]}), ["a"], population=pd.DataFrame({"a": [1]})),
            PopulationError,
            "a=2 have no match",
        ),
        (lambda: reidentification(pd.DataFrame({"a": []}), ["a"]), EmptySelectionError, "no records"),
        (lambda: risk_from_sizes([1, 2], population_sizes=[5]), ParameterError, "same classes"),
    ],
)
def test_bad_input_is_one_typed_sentence(call, error, phrase) -> None:
    with pytest.raises(error) as raised:
        call()
    assert phrase in str(raised.value) and isinstance(raised.value, AnonlibError)
