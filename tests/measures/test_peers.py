"""Tests of anonlib.measures.peers: the paper's worked examples, its Table 2 facts, and
brute-force references on random tables."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonlib.core.equivalence import encode
from anonlib.core.errors import ColumnError, EmptySelectionError, ParameterError, ProblemTooLargeError
from anonlib.core.loading import load_table
from anonlib.core.samples import load_sample, sample_path
from anonlib.measures.peers import (
    EXAMPLES,
    Partition,
    estimate_generalization_potential,
    estimate_minimum,
    estimate_privacy_matrix,
    example_dataset,
    generalization_potential,
    heatmap_columns,
    leave_one_out,
    min_poac,
    min_ppp,
    minimum_over_subsets,
    npp,
    partitions,
    peer_measures,
    poac,
    pp,
    ppp,
    privacy_matrix,
)

# ----------------------------------------------------------------- paper Table 1


@pytest.fixture(scope="module")
def table1() -> pd.DataFrame:
    frame = load_sample("kroes_table1_option2").frame
    return frame[["Diagnosis", "Gender", "Age"]]


def test_alice_with_maximum_auxiliary_information(table1):
    # Example 3: Alice (row 1) PPP 0.5, NPP 1, PoAC(q=0) 0.5 with age in 10-year bands
    assert ppp(table1, "Diagnosis", ["Gender", "Age"])[0] == 0.5
    assert npp(table1, "Diagnosis", ["Gender", "Age"])[0] == 1
    assert poac(table1, "Diagnosis", ["Gender", "Age"], 0.0)[0] == 0.5
    # PP_{Alice, diabetes} = 0.5 and PP_{Alice, arthrosis} = 0
    assert pp(table1, "Diagnosis", ["Gender", "Age"], "Diabetes")[0] == 0.5
    assert pp(table1, "Diagnosis", ["Gender", "Age"], "Arthrosis")[0] == 0.0


def test_alice_option1_is_breached():
    frame = load_sample("kroes_table1_option1").frame
    m = peer_measures(frame, "Diagnosis", ["Gender", "Age"])
    assert (m.ppp[0], m.npp[0], m.poac[0]) == (0.0, 0, 0.0)


def test_individual_3_figure_1(table1):
    # Fig. 1 (PoAC, q = 0, the other variables known): individual 3 (row index 2)
    assert poac(table1, "Diagnosis", ["Gender", "Age"])[2] == 0.0
    assert poac(table1, "Gender", ["Diagnosis", "Age"])[2] == 1.0
    # the formula gives 1/2 (45-54 considered, 55-64 ruled out, over |dom| - 1 = 2);
    # the paper's prose says 2/3 (share of the whole domain incl. the true value)
    assert poac(table1, "Age", ["Diagnosis", "Gender"])[2] == 0.5


def test_figure_1_matrix_minimum_over_subsets(table1):
    res = privacy_matrix(table1, ["Diagnosis", "Gender", "Age"], "poac", q=0.0)
    assert res.values[:, 2].tolist() == [0.0, 1.0, 0.5]
    # diagnosis of individual 3 is already revealed by the age band alone
    assert res.worst_subset("Diagnosis", 2) == ("Age",)
    assert res.worst_subset("Age", 2) == ("Diagnosis",)  # cancer patients: 45-54 or 35-44
    # Alice: min PoAC for diagnosis is 0.5 (gender + age leave only diabetes)
    assert res.values[0, 0] == 0.5
    summary = res.summary()
    # gender: individuals 2 and 3 (the two cancer patients aged 35-44) keep it in every subset
    assert summary["protected share"].tolist() == pytest.approx([0.0, 0.4, 0.0])


def test_matrix_ppp_and_npp_on_table1(table1):
    res = privacy_matrix(table1, ["Diagnosis", "Gender", "Age"], "ppp")
    # Alice: knowing only "female" leaves 2 of 3 women with cancer, PPP 1/3 < 0.5
    assert res.values[0].tolist() == pytest.approx([1 / 3, 0.0, 0.0, 0.0, 0.5])
    assert res.worst_subset("Diagnosis", 0) == ("Gender",)
    assert res.npp[0].tolist() == [1, 0, 0, 0, 1]
    np.testing.assert_array_equal(res.npp[0], npp(table1, "Diagnosis", ["Gender", "Age"]))
    table = res.table(table1)
    assert table.loc[0, "worst subset [Diagnosis]"] == "Gender"
    assert table.loc[4, "worst subset [Diagnosis]"] == "Age"  # 45-54: Alice and individual 5
    assert list(table.columns[:3]) == ["Diagnosis", "Gender", "Age"]


# ----------------------------------------------------------------- paper Table 2


@pytest.mark.parametrize(
    "key, rows, unique, domains",
    [
        ("adult", 30162, 19502, (2, 72, 5, 7, 16, 41, 7, 2, 14)),
        ("diabetes", 99493, 77748, (3, 10, 5, 118, 75, 2, 2, 3)),
        ("cervical_cancer", 789, 254, (11, 2, 43, 2)),
    ],
)
def test_table2_dataset_facts(key, rows, unique, domains):
    # the bundled loader turns the UCI files' "?" into missing values, dropped as in the paper
    frame, _ = example_dataset(key).analysis_frame(list(EXAMPLES[key].variables))
    assert len(frame) == rows
    table = encode(frame, list(EXAMPLES[key].variables))
    assert table.classes().n_classes == unique
    assert table.cardinalities == domains


def test_table2_domain_sizes_cervical():
    frame, dropped = example_dataset("cervical_cancer").analysis_frame()
    res = privacy_matrix(frame, list(EXAMPLES["cervical_cancer"].variables))
    assert res.domain_sizes == (11, 2, 43, 2)
    assert dropped == 858 - 789


# ----------------------------------------------------- brute-force references


def _brute_measure(frame: pd.DataFrame, s: str, known: tuple[str, ...], weights, measure: str, q: float):
    rows = frame.to_dict("records")
    domain = sorted(set(frame[s]))
    out = []
    for _i, r in enumerate(rows):
        peers = [j for j, o in enumerate(rows) if all(o[c] == r[c] for c in known)]
        n_a = sum(weights[j] for j in peers)
        n_sa = sum(weights[j] for j in peers if rows[j][s] == r[s])
        if measure == "ppp":
            out.append(1.0 - n_sa / n_a)
        else:
            considered = sum(
                1 for v in domain if v != r[s] and sum(weights[j] for j in peers if rows[j][s] == v) / n_a > q
            )
            out.append(considered / (len(domain) - 1) if len(domain) > 1 else 0.0)
    return np.array(out)


def _subsets(aux, include_empty):
    sizes = range(0 if include_empty else 1, len(aux) + 1)
    return [c for k in sizes for c in itertools.combinations(aux, k)]


@st.composite
def small_tables(draw, max_columns: int = 4):
    n = draw(st.integers(1, 14))
    m = draw(st.integers(2, max_columns))
    data = {f"v{j}": draw(st.lists(st.integers(0, draw(st.integers(1, 3))), min_size=n, max_size=n)) for j in range(m)}
    counts = draw(st.one_of(st.none(), st.lists(st.integers(1, 3), min_size=n, max_size=n)))
    frame = pd.DataFrame(data)
    if counts is not None:
        frame["n"] = counts
    return frame, ("n" if counts is not None else None)


@settings(max_examples=50, deadline=None)
@given(small_tables(), st.booleans(), st.sampled_from([0.0, 0.2, 0.5]))
def test_minimum_equals_brute_force(table, include_empty, q):
    frame, count = table
    variables = [c for c in frame.columns if c != count]
    s, aux = variables[0], variables[1:]
    weights = [1] * len(frame) if count is None else frame[count].tolist()
    subsets = _subsets(aux, include_empty)
    for measure, _fn in (("ppp", None), ("poac", q)):
        brute = np.vstack([_brute_measure(frame[variables], s, sub, weights, measure, q) for sub in subsets])
        expected = brute.min(axis=0)
        if measure == "ppp":
            got = min_ppp(frame, s, aux, include_empty=include_empty, count=count)
        else:
            got = min_poac(frame, s, aux, q, include_empty=include_empty, count=count)
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
        # the reported worst subset attains the minimum, and no smaller subset does
        res = minimum_over_subsets(frame, s, aux, measure, q, include_empty=include_empty, count=count)
        for i in range(len(frame)):
            worst = res.worst_subset(i)
            attaining = [sub for k, sub in enumerate(subsets) if abs(brute[k, i] - expected[i]) < 1e-12]
            assert worst in attaining
            assert len(worst) == min(len(sub) for sub in attaining)


@settings(max_examples=30, deadline=None)
@given(small_tables(max_columns=4), st.sampled_from(["ppp", "poac"]))
def test_privacy_matrix_equals_per_variable_minimum(table, measure):
    frame, count = table
    variables = [c for c in frame.columns if c != count]
    res = privacy_matrix(frame, variables, measure, q=0.0, count=count)
    for v, s in enumerate(variables):
        aux = [c for c in variables if c != s]
        single = minimum_over_subsets(frame, s, aux, measure, 0.0, count=count)
        np.testing.assert_allclose(res.values[v], single.values, rtol=0, atol=1e-12)
        assert [res.worst_subset(s, i) for i in range(len(frame))] == [
            single.worst_subset(i) for i in range(len(frame))
        ]
        np.testing.assert_array_equal(res.npp[v], npp(frame, s, aux, count=count))


@settings(max_examples=40, deadline=None)
@given(small_tables(max_columns=5), st.data())
def test_npp_never_decreases_when_a_variable_is_removed(table, data):
    frame, count = table
    variables = [c for c in frame.columns if c != count]
    s, aux = variables[0], variables[1:]
    removed = data.draw(st.sampled_from(aux))
    fewer = [c for c in aux if c != removed]
    assert (npp(frame, s, fewer, count=count) >= npp(frame, s, aux, count=count)).all()
    # and a PPP of 0 with less information stays 0 with more (the paper's guarantee)
    zero_fewer = ppp(frame, s, fewer, count=count) == 0
    assert (ppp(frame, s, aux, count=count)[zero_fewer] == 0).all()


@settings(max_examples=30, deadline=None)
@given(small_tables(max_columns=4))
def test_ppp_is_sum_of_pp_over_false_values(table):
    frame, count = table
    variables = [c for c in frame.columns if c != count]
    s, aux = variables[0], variables[1:]
    total = np.zeros(len(frame))
    for v in sorted(set(frame[s])):
        total += np.where(frame[s].to_numpy() != v, pp(frame, s, aux, v, count=count), 0.0)
    np.testing.assert_allclose(total, ppp(frame, s, aux, count=count), atol=1e-12)


def test_count_column_equals_expanded_rows():
    frame = pd.DataFrame({"s": ["a", "b", "a", "b"], "x": [1, 1, 2, 2], "n": [3, 1, 2, 2]})
    expanded = frame.loc[frame.index.repeat(frame["n"])].drop(columns="n").reset_index(drop=True)
    got = min_ppp(frame, "s", ["x"], count="n")
    want = min_ppp(expanded, "s", ["x"])
    np.testing.assert_allclose(np.repeat(got, frame["n"]), want)
    assert got.tolist() == pytest.approx([0.25, 0.625, 0.375, 0.5])


# --------------------------------------------------------- Fig. 3 and Fig. 4


def test_leave_one_out_matches_single_sets(table1):
    res = leave_one_out(table1, "Diagnosis", ["Gender", "Age"], "poac")
    np.testing.assert_array_equal(res.full, poac(table1, "Diagnosis", ["Gender", "Age"]))
    np.testing.assert_array_equal(res.without[0], poac(table1, "Diagnosis", ["Age"]))
    np.testing.assert_array_equal(res.without[1], poac(table1, "Diagnosis", ["Gender"]))
    assert (res.gain[:, 2] >= 0).all()


def test_partition_reproduces_option2():
    original = load_table(sample_path("kroes_table1.csv")).frame
    option2 = Partition(10, 0, 3, True, 35, 64).apply(original["Age"])
    assert option2.tolist() == original["Age option 2"].tolist()
    found, complete = partitions(original["Age"].to_numpy(dtype=float), max_categories=30, max_partitions=1000)
    assert complete and any(p.width == 10 and p.offset == 0 for p in found)


def _partitions_by_trying_every_offset(low: int, high: int, max_categories: int, max_partitions: int):
    """Slow, obvious reference for whole numbers: try every width 2..span-1 and every offset."""
    span = high - low + 1
    plan = []
    for width in range(2, span):
        offsets = [o for o in range(width) if 2 <= (span - 1 + o) // width + 1 <= max_categories]
        if offsets:
            plan.append((width, offsets))
    total = sum(len(o) for _, o in plan)
    complete = total <= max_partitions
    out = []
    for width, offsets in plan:
        if not complete:
            keep = max(1, int(len(offsets) * max_partitions / total))
            offsets = [offsets[k] for k in np.unique(np.linspace(0, len(offsets) - 1, keep).round().astype(int))]
        out += [(float(width), float(o), (span - 1 + o) // width + 1) for o in offsets]
    return out, complete, len(plan)


@settings(max_examples=150, deadline=None)
@given(
    low=st.integers(-100, 100),
    span=st.integers(3, 250),
    max_categories=st.integers(2, 25),
    max_partitions=st.integers(1, 500),
)
def test_whole_number_partitions_match_trying_every_offset(low, span, max_categories, max_partitions):
    values = np.array([low, low + span - 1, low + span // 2], dtype=float)
    found, complete = partitions(values, max_categories=max_categories, max_partitions=max_partitions)
    expected, expected_complete, widths = _partitions_by_trying_every_offset(
        low, low + span - 1, max_categories, max_partitions
    )
    if widths <= max_partitions:
        assert complete == expected_complete
        assert [(p.width, p.offset, p.categories) for p in found] == expected
    else:  # more widths than partitions allowed: evenly spaced widths, never past the limit
        assert not complete and 0 < len(found) <= max_partitions
        assert all(2 <= p.categories <= max_categories for p in found)
        assert {p.width for p in found} <= {w for w, _, _ in expected}


def test_a_wide_whole_number_column_stays_within_max_partitions():
    """ZIP codes read as numbers (span about 10^5): bounded by max_partitions, not span squared."""
    zips = np.array([501, 99950, 37000, 10001], dtype=float)
    found, complete = partitions(zips, max_categories=20, max_partitions=400)
    assert not complete and len(found) == 400
    assert all(2 <= p.categories <= 20 for p in found)
    widths = sorted({p.width for p in found})
    assert widths[0] == np.ceil((99950 - 501 + 1) / 20) and widths[-1] == 99950 - 501


def test_generalization_potential_matches_direct_computation():
    frame, _ = example_dataset("cervical_cancer").analysis_frame()
    aux = ["Num of pregnancies", "Smokes", "Age"]
    res = generalization_potential(frame, "Biopsy", aux, "Age", max_categories=6, max_partitions=40)
    assert len(res.partitions) <= 60 and not res.complete
    assert res.baseline == pytest.approx((min_ppp(frame, "Biopsy", aux) > 0).mean())
    for k in (0, len(res.partitions) // 2, len(res.partitions) - 1):
        part = res.partitions[k]
        generalized = frame.assign(Age=part.apply(frame["Age"]))
        minimum = min_ppp(generalized, "Biopsy", aux)
        assert res.protected[k] == pytest.approx((minimum > 0).mean())
        assert res.protected_at(0.1)[k] == pytest.approx((minimum > 0.1).mean())
        assert generalized["Age"].nunique() <= part.categories
    table = res.table()
    assert table.groupby("categories")["best for its categories"].sum().eq(1).all()
    best = table[table["best for its categories"]]
    assert best.set_index("categories")["protected share"].sort_index().tolist() == (
        table.groupby("categories")["protected share"].max().sort_index().tolist()
    )


def test_heatmap_columns_cluster_small_and_bin_large():
    rng = np.random.default_rng(1)
    small = rng.random((3, 50))
    cols = heatmap_columns(small)
    assert sorted(cols.order.tolist()) == list(range(50)) and cols.bins is None
    large = rng.random((3, 5000))
    cols = heatmap_columns(large, max_individuals=1000, n_bins=100)
    assert cols.n_columns == 100 and sorted(cols.order.tolist()) == list(range(5000))
    means = cols.aggregate(large)
    assert means.shape == (3, 100)
    assert np.average(means, axis=1, weights=np.diff(cols.bins)) == pytest.approx(large.mean(axis=1))
    assert (cols.aggregate(large, "min") <= means + 1e-12).all()


# -------------------------------------------------------------------- errors


def test_errors_are_clear(table1):
    with pytest.raises(ParameterError, match="cannot also be auxiliary"):
        ppp(table1, "Diagnosis", ["Diagnosis", "Age"])
    with pytest.raises(ColumnError, match="Weight"):
        min_ppp(table1, "Diagnosis", ["Weight"])
    with pytest.raises(ParameterError, match="below 1"):
        min_poac(table1, "Diagnosis", ["Age"], q=1.0)
    with pytest.raises(EmptySelectionError):
        privacy_matrix(table1, ["Diagnosis"])
    with pytest.raises(EmptySelectionError):
        min_ppp(table1.iloc[:0], "Diagnosis", ["Age"])
    with pytest.raises(ParameterError, match="record count of 0"):
        min_ppp(table1.assign(n=[1, 0, 1, 1, 1]), "Diagnosis", ["Age"], count="n")
    with pytest.raises(ParameterError, match="not a value"):
        pp(table1, "Diagnosis", ["Age"], "Flu")
    with pytest.raises(ParameterError, match="measure"):
        privacy_matrix(table1, ["Diagnosis", "Age"], "kanon")
    wide = pd.DataFrame({f"c{j}": [0, 1] for j in range(27)})
    with pytest.raises(
        ProblemTooLargeError,
        match="67,108,864 combinations.*choose fewer variables, let the adversary know at most a few of them at once",
    ):
        min_ppp(wide, "c0", [f"c{j}" for j in range(1, 27)])
    with pytest.raises(ParameterError, match="whole number of 0 or more"):
        min_ppp(table1, "Diagnosis", ["Age"], max_known=-1)
    with pytest.raises(ColumnError, match="not numeric"):
        generalization_potential(table1, "Diagnosis", ["Gender", "Age"], "Age")


@pytest.mark.parametrize("measure, q", [("ppp", 0.0), ("poac", 0.0), ("poac", 0.3)])
def test_many_distinct_values_use_the_densified_path(measure, q):
    # (peer group, value) key spaces larger than the rows: single-row groups set aside, rest densified
    rng = np.random.default_rng(11)
    frame = pd.DataFrame({"s": rng.integers(0, 40, 90), "a": rng.integers(0, 60, 90), "b": rng.integers(0, 5, 90)})
    weights = [1] * len(frame)
    res = privacy_matrix(frame, ["s", "a", "b"], measure, q=q)
    for v, s in enumerate(["s", "a", "b"]):
        aux = [c for c in ["s", "a", "b"] if c != s]
        brute = np.vstack([_brute_measure(frame, s, sub, weights, measure, q) for sub in _subsets(aux, True)])
        np.testing.assert_allclose(res.values[v], brute.min(axis=0), rtol=0, atol=1e-12)


def test_progress_counts_the_combinations_the_estimate_announced():
    frame, _ = example_dataset("adult").analysis_frame()
    variables = list(EXAMPLES["adult"].variables)
    seen: list[tuple[int, int, str]] = []
    estimate = estimate_privacy_matrix(frame, variables)
    privacy_matrix(frame, variables, progress=lambda *call: seen.append(call))
    assert estimate.operations == 2**9 - 1  # every combination of the 9 variables but all of them
    assert seen[-1] == (estimate.operations, estimate.operations, "auxiliary combinations")
    done = [d for d, _, _ in seen]
    assert done == sorted(done) and len(seen) > 10 and {t for _, t, _ in seen} == {estimate.operations}
    narrowed = []
    privacy_matrix(frame, variables, max_known=2, progress=lambda *call: narrowed.append(call))
    assert (
        narrowed[-1][:2]
        == (1 + 9 + 36, 1 + 9 + 36)
        == (estimate_privacy_matrix(frame, variables, max_known=2).operations,) * 2
    )


@settings(max_examples=40, deadline=None)
@given(small_tables(max_columns=5), st.integers(0, 4), st.booleans())
def test_max_known_is_the_minimum_over_small_subsets(table, max_known, include_empty):
    frame, count = table
    variables = [c for c in frame.columns if c != count]
    s, aux = variables[0], variables[1:]
    weights = [1] * len(frame) if count is None else frame[count].tolist()
    subsets = [sub for sub in _subsets(aux, include_empty) if len(sub) <= max_known]
    if not subsets:
        return
    brute = np.vstack([_brute_measure(frame[variables], s, sub, weights, "ppp", 0.0) for sub in subsets])
    got = minimum_over_subsets(frame, s, aux, "ppp", include_empty=include_empty, count=count, max_known=max_known)
    np.testing.assert_allclose(got.values, brute.min(axis=0), rtol=0, atol=1e-12)
    assert all(len(got.worst_subset(i)) <= max_known for i in range(len(frame)))
    matrix = privacy_matrix(frame, variables, count=count, include_empty=include_empty, max_known=max_known)
    np.testing.assert_allclose(matrix.values[0], got.values, rtol=0, atol=1e-12)


def test_generalization_potential_with_max_known_matches_direct_computation():
    frame, _ = example_dataset("cervical_cancer").analysis_frame()
    aux = ["Num of pregnancies", "Smokes", "Age"]
    calls = []
    res = generalization_potential(
        frame,
        "Biopsy",
        aux,
        "Age",
        max_categories=5,
        max_partitions=12,
        max_known=1,
        progress=lambda *call: calls.append(call),
    )
    assert calls[0] == (0, len(res.partitions), "partitions") and calls[-1][:2] == (len(res.partitions),) * 2
    assert res.baseline == pytest.approx((min_ppp(frame, "Biopsy", aux, max_known=1) > 0).mean())
    for k in (0, len(res.partitions) - 1):
        generalized = frame.assign(Age=res.partitions[k].apply(frame["Age"]))
        assert res.protected[k] == pytest.approx((min_ppp(generalized, "Biopsy", aux, max_known=1) > 0).mean())
    estimate = estimate_generalization_potential(frame, "Biopsy", aux, "Age", max_categories=5, max_partitions=12)
    assert estimate.operations == (len(res.partitions) + 2) * 4  # each walk: the 4 subsets of the 2 other variables


def test_estimates_grow_with_records_and_variables_and_refuse_hours():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({f"v{j}": rng.integers(0, 6, 50_000) for j in range(18)})
    small = estimate_privacy_matrix(frame.iloc[:5_000], list(frame.columns[:8]))
    bigger = estimate_privacy_matrix(frame, list(frame.columns[:8]))
    wider = estimate_privacy_matrix(frame, list(frame.columns))
    assert small.seconds < bigger.seconds < wider.seconds and small.interactive and not wider.interactive
    assert wider.operations == 2**18 - 1 and wider.seconds > 600
    with pytest.raises(ProblemTooLargeError, match="would take about .* minutes.*analyse a sample of the records"):
        privacy_matrix(frame, list(frame.columns))
    narrowed = estimate_privacy_matrix(frame, list(frame.columns), max_known=2)
    assert narrowed.operations == 1 + 18 + 153 and narrowed.seconds < 60
    single = estimate_minimum(frame, "v0", list(frame.columns[1:]), max_known=3)
    assert single.operations == 1 + 17 + 136 + 680


def test_heatmap_figure_bins_and_hover():
    from dashboard.charts import privacy_heatmap

    values = np.array([[0.0, 0.0, 0.5, 1.0], [1.0, 0.2, 0.0, 0.0]])
    notes = np.array([["knowing a"] * 4, ["knowing nothing", "knowing b", "knowing b", "knowing b"]], dtype=object)
    binned = heatmap_columns(values, max_individuals=2, n_bins=2)
    fig = privacy_heatmap(
        values,
        ["s", "t"],
        binned,
        threshold=0.0,
        palette="red to green (as in the papers)",
        value_label="min PPP",
        title="x",
        cell_notes=notes,
    )
    assert fig.data[0].z.shape == (2, 2)
    assert "2 records" in fig.data[0].customdata[0][0] and "knowing a (100%)" in fig.data[0].customdata[0][0]
    single = privacy_heatmap(
        values,
        ["s", "t"],
        heatmap_columns(values),
        threshold=0.0,
        palette="colour-blind safe",
        value_label="min PPP",
        title="x",
        individual_text=["a=1", "a=2", "a=3", "a=4"],
        cell_notes=notes,
    )
    first = single.data[0].customdata[1][0]
    i = int(single.data[0].x[0][1:]) - 1
    assert f"record {i + 1}: a={i + 1}" in first and "worst: knowing" in first


@settings(max_examples=25, deadline=None)
@given(small_tables(max_columns=4), st.sampled_from(["ppp", "poac"]), st.sampled_from([0.0, 0.3]))
def test_direct_table_and_densified_counting_agree(monkeypatch_table, table, measure, q):
    import anonlib.measures.peers as peers

    frame, count = table
    variables = [c for c in frame.columns if c != count]
    with monkeypatch_table((0, 0)):  # every count through combine()
        densified = privacy_matrix(frame, variables, measure, q=q, count=count)
    direct = privacy_matrix(frame, variables, measure, q=q, count=count)
    assert peers.TABLE_LIMIT == (4, 1024)
    np.testing.assert_array_equal(densified.values, direct.values)
    np.testing.assert_array_equal(densified.worst, direct.worst)
    np.testing.assert_array_equal(densified.npp, direct.npp)


@pytest.fixture(scope="module")
def monkeypatch_table():
    import contextlib

    import anonlib.measures.peers as peers

    @contextlib.contextmanager
    def limit(value):
        saved = peers.TABLE_LIMIT
        peers.TABLE_LIMIT = value
        try:
            yield
        finally:
            peers.TABLE_LIMIT = saved

    return limit


# ------------------------------------------- the matrix on the lattice of tables


def _brute_matrix(frame: pd.DataFrame, variables: list[str], weights, measure: str, qs, include_empty: bool):
    """Fig. 2 by hand: per variable and row, every subset of the others in the walk's
    order (more distinct values first, then by size, then lexicographically on positions),
    the first subset attaining the minimum; missing values are a value of their own."""
    rows = [tuple("<missing>" if pd.isna(v) else v for v in r) for r in frame[variables].itertuples(index=False)]
    m = len(variables)
    cards = [len({r[j] for r in rows}) for j in range(m)]
    walk = sorted(range(m), key=lambda j: -cards[j])
    values = np.zeros((m, len(rows)))
    worst = np.zeros((m, len(rows)), dtype=np.int64)
    npp_full = np.zeros((m, len(rows)), dtype=np.int64)
    for s in range(m):
        positions = [p for p in range(m) if walk[p] != s]
        subsets = [c for k in range(0 if include_empty else 1, m) for c in itertools.combinations(positions, k)]
        domain = sorted({r[s] for r in rows}, key=str)
        for i, r in enumerate(rows):
            best = None
            for sub in subsets:
                known = [walk[p] for p in sub]
                peers = [j for j, o in enumerate(rows) if all(o[c] == r[c] for c in known)]
                n_a = sum(weights[j] for j in peers)
                n_sa = sum(weights[j] for j in peers if rows[j][s] == r[s])
                if len(sub) == m - 1:
                    npp_full[s, i] = n_a - n_sa
                if measure == "ppp":
                    value = 1.0 - n_sa / n_a
                else:
                    considered = sum(
                        1
                        for v in domain
                        if v != r[s] and sum(weights[j] for j in peers if rows[j][s] == v) / n_a > qs[s]
                    )
                    value = considered / (len(domain) - 1) if len(domain) > 1 else 0.0
                if best is None or value < best[0]:
                    best = (value, sum(1 << walk[p] for p in sub))
            values[s, i], worst[s, i] = best
    return values, worst, npp_full


@st.composite
def tables_with_missing(draw):
    n = draw(st.integers(1, 12))
    m = draw(st.integers(2, 4))
    cell = st.one_of(st.none(), st.integers(0, 2))
    data = {f"v{j}": draw(st.lists(cell, min_size=n, max_size=n)) for j in range(m)}
    counts = draw(st.one_of(st.none(), st.lists(st.integers(1, 3), min_size=n, max_size=n)))
    frame = pd.DataFrame(data, dtype=object)
    if counts is not None:
        frame["n"] = counts
    return frame, ("n" if counts is not None else None)


@settings(max_examples=60, deadline=None)
@given(
    tables_with_missing(),
    st.sampled_from(["ppp", "poac"]),
    st.sampled_from([None, 0.0, 0.3]),
    st.sampled_from([0.0, 0.4]),
    st.booleans(),
)
def test_privacy_matrix_equals_brute_force_with_missing_values(table, measure, q, p, include_empty):
    frame, count = table
    variables = [c for c in frame.columns if c != count]
    weights = [1] * len(frame) if count is None else frame[count].tolist()
    res = privacy_matrix(frame, variables, measure, q=q, p=p, include_empty=include_empty, count=count)
    values, worst, npp_full = _brute_matrix(frame, variables, weights, measure, res.q, include_empty)
    np.testing.assert_array_equal(res.values, values)  # bit for bit: the same divisions
    np.testing.assert_array_equal(res.worst, worst)
    np.testing.assert_array_equal(res.npp, npp_full)


def test_privacy_matrix_equals_the_record_walk_on_adult():
    # the lattice of tables (every subset) against the walk over the distinct records it replaced
    from anonlib.measures.peers.matrix import _record_walk

    frame, _ = example_dataset("adult").analysis_frame()
    variables = list(EXAMPLES["adult"].variables)[:7]
    sample = frame.iloc[::5]
    table = encode(sample, variables)
    codes = [np.ascontiguousarray(table.codes[:, j]) for j in range(len(variables))]
    cards = list(table.cardinalities)
    for measure, qs in (("ppp", [0.0] * 7), ("poac", [0.1] * 7)):
        res = privacy_matrix(sample, variables, measure, q=qs[0])
        values, masks, npp_full = _record_walk(table, variables, codes, cards, qs, measure, True, None, 6)
        np.testing.assert_array_equal(res.values, values)
        np.testing.assert_array_equal(res.worst, masks)
        np.testing.assert_array_equal(res.npp, npp_full)
    assert 0.0 < float((res.values > 0).mean()) < 1.0  # a matrix with both protected and exposed cells


@pytest.mark.parametrize("measure", ["ppp", "poac"])
def test_privacy_matrix_split_over_threads_equals_the_record_walk(monkeypatch, measure):
    """Every piece of the walk that may run on the shared pool (the targets of a table, the
    blocks of a pull, the rows of the maps) made small enough to run there: the same bits
    as the walk over the distinct records."""
    from anonlib.core import parallel
    from anonlib.measures.peers import rollup
    from anonlib.measures.peers.matrix import _record_walk

    monkeypatch.setattr(parallel, "MIN_PARALLEL_ELEMENTS", 1)
    monkeypatch.setattr(rollup, "PULL_CELLS", 16)
    frame, _ = example_dataset("adult").analysis_frame()
    variables = list(EXAMPLES["adult"].variables)[:6]
    sample = frame.iloc[::7]
    table = encode(sample, variables)
    codes = [np.ascontiguousarray(table.codes[:, j]) for j in range(len(variables))]
    qs = [0.0 if measure == "ppp" else 0.1] * 6
    res = privacy_matrix(sample, variables, measure, q=qs[0])
    values, masks, npp_full = _record_walk(
        table, variables, codes, list(table.cardinalities), qs, measure, True, None, 5
    )
    np.testing.assert_array_equal(res.values, values)
    np.testing.assert_array_equal(res.worst, masks)
    np.testing.assert_array_equal(res.npp, npp_full)


def test_the_lattice_matrix_of_no_record_is_empty():
    """No distinct record: arrays of shape (variables, 0), not a cast error."""
    import numpy as np

    from anonlib.measures.peers.rollup import lattice_matrix

    values, worst, npp = lattice_matrix([np.zeros(0, dtype=np.int64)] * 2, [3, 3], [0.0, 0.0], None, "ppp", True)
    assert values.shape == worst.shape == npp.shape == (2, 0)


def test_privacy_matrix_of_wide_columns_equals_the_record_walk_and_stays_small():
    """Every column with hundreds of values: a leaf's roll-up maps are numbered densely once
    their key range would pass a few times the leaf's cells (a sparse key would be counted over
    a range of cells x the narrowest column's values: 47 MB here). The same answer as the walk
    over the distinct records, with a peak of a few MB (2.6 MB; 2.9 MB before the sparse keys)."""
    import tracemalloc

    from anonlib.measures.peers.matrix import _record_walk

    rng = np.random.default_rng(1)
    frame = pd.DataFrame({c: rng.integers(0, 3000, 3000) for c in "abcd"})
    variables = list("abcd")
    tracemalloc.start()
    try:
        res = privacy_matrix(frame, variables, "ppp")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    table = encode(frame, variables)
    codes = [np.ascontiguousarray(table.codes[:, j]) for j in range(len(variables))]
    values, masks, npp_full = _record_walk(
        table, variables, codes, list(table.cardinalities), [0.0] * 4, "ppp", True, None, 3
    )
    np.testing.assert_array_equal(res.values, values)
    np.testing.assert_array_equal(res.worst, masks)
    np.testing.assert_array_equal(res.npp, npp_full)
    assert peak < 10e6, peak
