"""The optimal search (anonlib.transformations.generalization, search(method="optimal")) and the utility
measures it minimizes (anonlib.measures.utility): ARX's Adult benchmark, brute force on random
lattices, and the released table recounted with plain pandas."""

from __future__ import annotations

import itertools
import math
import os

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonlib.core.errors import NoSolutionError, ParameterError
from anonlib.core.hierarchy import flat_hierarchy, generalize_column, interval_hierarchy, taxonomy_hierarchy
from anonlib.core.metrics import discernibility, nonuniform_entropy
from anonlib.core.samples import arx_adult_benchmark
from anonlib.measures.models import ModelRequirement, acceptance
from anonlib.measures.target import ReleaseTarget
from anonlib.measures.utility import CellCosts, _cell_totals, _Matched, loss, measure_value, utility
from anonlib.transformations.generalization import GeneralizationSpace, brute_force, optimal_levels, search

LONG = os.environ.get("ANONLIB_LONG_TESTS") == "1"
EXAMPLES = 2000 if LONG else 120


@pytest.fixture(scope="module")
def benchmark():
    return arx_adult_benchmark()


@pytest.fixture(scope="module")
def optimum(benchmark):
    """The optimal search on the benchmark (k = 5) at a suppression limit, searched once per limit."""
    found = {}

    def at(limit: float):
        if limit not in found:
            b = benchmark
            found[limit] = search(b.frame, b.quasi_identifiers, 5, b.hierarchies, "optimal", max_suppressed=limit)
        return found[limit]

    return at


def _pandas_classes(table: pd.DataFrame, qis, count=None) -> pd.Series:
    """Records per class of the written cells, counted by plain pandas."""
    text = table[list(qis)].astype(object).where(table[list(qis)].notna(), None)
    weights = table[count] if count else pd.Series(1, index=table.index)
    return weights.groupby([text[q] for q in qis], dropna=False).transform("sum")


@pytest.mark.parametrize(
    "limit, expected, levels",
    [
        (
            0.04,
            0.29944,
            {
                "age": 3,
                "education": 3,
                "marital-status": 1,
                "native-country": 1,
                "occupation": 1,
                "race": 0,
                "income": 0,
                "sex": 0,
                "workclass": 1,
            },
        ),
        (
            0.0,
            0.63554,
            {
                "age": 4,
                "education": 3,
                "marital-status": 1,
                "native-country": 2,
                "occupation": 1,
                "race": 1,
                "income": 0,
                "sex": 0,
                "workclass": 2,
            },
        ),
    ],
)
def test_arx_adult_benchmark_optimum(benchmark, optimum, limit, expected, levels):
    b = benchmark
    r = optimum(limit)
    assert r.optimal and round(r.utility, 5) == expected
    assert r.levels == levels
    assert r.checked < r.lattice_size == 12960
    # The release as written: every class >= 5 by plain pandas, the suppressed share within the limit.
    assert _pandas_classes(r.table, b.quasi_identifiers).min() >= 5
    assert r.suppressed == len(b.frame) - len(r.table) <= limit * len(b.frame)
    assert r.suppressed == (1032 if limit else 0)
    # The stated utility is the loss measured on the released table.
    assert loss(b.frame, r.table, b.quasi_identifiers, b.hierarchies) == pytest.approx(r.utility, abs=1e-12)
    assert r.released_k == _pandas_classes(r.table, b.quasi_identifiers).min()


def test_arx_adult_benchmark_beats_the_papers_search(benchmark, optimum):
    """The loss metric's optimum loses far less than IAB's most-rows pick, which erases columns."""
    b = benchmark
    iab = search(b.frame, b.quasi_identifiers, 5, b.hierarchies, "iab", max_suppressed=0.04)
    kept = iab.table[acceptance(iab.table, b.quasi_identifiers, k=5, max_suppressed=0.04).kept]
    erased = [q for q in b.quasi_identifiers if kept[q].nunique() == 1]
    assert loss(b.frame, kept, b.quasi_identifiers, b.hierarchies) > 2 * 0.29945 and len(erased) >= 4
    best = optimum(0.04)
    assert [q for q in b.quasi_identifiers if best.table[q].nunique() == 1] == ["education"]


# --------------------------------------------------------------------------- brute force on random lattices

LABELS = ["a", "b", "c", "d", "e"]


@st.composite
def problems(draw):
    """A small table with missing values, an optional count column, numbers and text,
    hierarchies of 1-4 levels (taxonomies, intervals, flat), optional models and limit."""
    n = draw(st.integers(4, 18))
    n_qis = draw(st.integers(1, 3))
    frame, hierarchies = {}, {}
    for j in range(n_qis):
        name = f"q{j}"
        if draw(st.booleans()):  # numbers with nested bands
            values = draw(st.lists(st.integers(0, 7), min_size=n, max_size=n))
            frame[name] = pd.Series(values, dtype="Int64")
            depth = draw(st.integers(1, 3))
            bands = [[(0, 1), (2, 3), (4, 5), (6, 7)], [(0, 3), (4, 7)], [(0, 7)]][:depth]
            hierarchies[name] = interval_hierarchy(range(8), bands, top=depth < 3)
        else:  # text with a taxonomy (or flat), some values missing
            values = draw(st.lists(st.sampled_from(LABELS + [None]), min_size=n, max_size=n))
            frame[name] = pd.Series(values, dtype=object)
            if draw(st.booleans()):
                hierarchies[name] = flat_hierarchy(LABELS)
            else:
                hierarchies[name] = taxonomy_hierarchy({"ab": ["a", "b"], "cde": ["c", "d", "e"], "*": ["ab", "cde"]})
    frame["dx"] = ["flu", "hiv"] + draw(
        st.lists(st.sampled_from(["flu", "hiv", "none"]), min_size=n - 2, max_size=n - 2)
    )
    count = None
    if draw(st.booleans()):
        frame["n"] = draw(st.lists(st.integers(1, 3), min_size=n, max_size=n))
        count = "n"
    df = pd.DataFrame(frame)
    requirements = ()
    model = draw(st.sampled_from([None, "distinct_l", "entropy_l", "t_closeness", "alpha"]))
    if model == "distinct_l":
        requirements = (ModelRequirement("distinct_l", "dx", 2),)
    elif model == "entropy_l":
        requirements = (ModelRequirement("entropy_l", "dx", 1.5),)
    elif model == "t_closeness":
        requirements = (ModelRequirement("t_closeness", "dx", 0.4),)
    elif model == "alpha":
        requirements = (ModelRequirement("alpha", "dx", 0.8),)
    k = draw(st.integers(1, 4))
    limit = draw(st.sampled_from([0.0, 0.1, 0.25]))
    measure = draw(st.sampled_from(["loss", "precision", "nonuniform_entropy", "discernibility", "aecs"]))
    return df, [f"q{j}" for j in range(n_qis)], hierarchies, k, limit, requirements, count, measure


def _reference(df, qis, hierarchies, k, limit, requirements, count, measure):
    """Every node generalized with pandas, the target checked by ``acceptance`` on the written
    table, the measure taken on the released table: the best (value, levels)."""
    heights = [hierarchies[q].shape[1] for q in qis]
    # each column at each of its levels, generalized once (a node's table is made of them)
    columns = {
        (q, level): generalize_column(df[q], hierarchies[q], level, q)
        for q, h in zip(qis, heights)
        for level in range(h)
    }
    best = None
    for levels in itertools.product(*(range(h) for h in heights)):
        table = df.assign(**{q: columns[q, level] for q, level in zip(qis, levels)})
        verdict = acceptance(table, qis, k=k, requirements=requirements, max_suppressed=limit, count=count)
        if not verdict.acceptable:
            continue
        released = table[verdict.kept]
        try:
            if acceptance(released, qis, k=k, requirements=requirements, count=count).suppressed_records:
                continue  # the release as written fails a model measured on itself (t, δ, β)
        except ParameterError:
            continue  # e.g. t-closeness of a release left with one sensitive value: not measurable, not met
        value = measure_value(df, released, qis, hierarchies, measure, count=count)
        key = (value, sum(levels), levels)
        if best is None or value < best[0] - 1e-9 or (abs(value - best[0]) <= 1e-9 and key[1:] < best[1:]):
            best = key
    return best


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_optimal_equals_brute_force(problem):
    df, qis, hierarchies, k, limit, requirements, count, measure = problem
    expected = _reference(df, qis, hierarchies, k, limit, requirements, count, measure)
    if expected is None:
        with pytest.raises(NoSolutionError):
            search(
                df,
                qis,
                k,
                hierarchies,
                "optimal",
                count=count,
                max_suppressed=limit,
                requirements=requirements,
                measure=measure,
            )
        return
    r = search(
        df,
        qis,
        k,
        hierarchies,
        "optimal",
        count=count,
        max_suppressed=limit,
        requirements=requirements,
        measure=measure,
    )
    assert r.optimal and 1 <= r.checked <= r.lattice_size  # a node counted again for its cost is one node
    assert r.utility == pytest.approx(expected[0], rel=1e-9, abs=1e-9)
    assert tuple(r.levels.values()) == expected[2]
    # The released table, recounted: classes of at least k (plain pandas), the target met.
    if len(r.table):
        assert _pandas_classes(r.table, qis, count).min() >= k
    assert acceptance(r.table, qis, k=k, requirements=requirements, count=count).suppressed_records == 0
    assert r.suppressed <= limit * (int(df[count].sum()) if count else len(df)) + 1e-9


def test_the_lattice_walk_equals_the_lattice_brute_force():
    """``brute_force`` (every node counted) and the walk agree on a lattice with suppression."""
    b = arx_adult_benchmark()
    frame = b.frame.sample(3000, random_state=1)
    qis = ["age", "education", "sex", "race"]
    lattice = GeneralizationSpace(frame, qis, b.hierarchies, target=ReleaseTarget(5, max_suppressed=0.02), rollup=False)
    levels, value, suppressed = brute_force(lattice)
    found = optimal_levels(frame, qis, b.hierarchies, target=ReleaseTarget(5, max_suppressed=0.02))
    assert (found.levels, found.suppressed) == (levels, suppressed)
    assert found.value == pytest.approx(value, rel=1e-12)
    assert found.checked < lattice.size


def test_a_walk_cut_short_says_it_is_not_proven(benchmark):
    b = benchmark
    proven = optimal_levels(b.frame, b.quasi_identifiers, b.hierarchies, target=ReleaseTarget(5, max_suppressed=0.04))
    for cut in (dict(max_checked=proven.checked // 3), dict(max_checked=proven.checked - 5), dict(time_limit=0.0)):
        found = optimal_levels(
            b.frame, b.quasi_identifiers, b.hierarchies, target=ReleaseTarget(5, max_suppressed=0.04), **cut
        )
        assert not found.optimal
        assert found.bound <= proven.value <= found.value and found.gap == found.value - found.bound
        lattice = GeneralizationSpace(
            b.frame, b.quasi_identifiers, b.hierarchies, target=ReleaseTarget(5, max_suppressed=0.04)
        )
        assert lattice.status(found.levels)[0]  # what it offers meets the target


def test_bad_measure_is_a_sentence():
    df = pd.DataFrame({"a": ["x", "y"]})
    with pytest.raises(ParameterError, match="Unknown utility measure"):
        search(df, ["a"], 1, {"a": flat_hierarchy(["x", "y"])}, "optimal", measure="fun")


# --------------------------------------------------------------------------- utility measures


def _slow_loss(original, released, qis, hierarchies):
    """Per record and attribute: leaves under the released value's node, the obvious way."""
    total = 0.0
    for idx, row in original.iterrows():
        for q in qis:
            h = hierarchies[q].astype(str)
            leaves = len(h)
            if idx not in released.index:
                total += 1.0
                continue
            value = released.at[idx, q]
            if pd.isna(value):
                total += 0.0 if pd.isna(row[q]) else 1.0
                continue
            own = str(row[q])
            path = h[h[0] == own].iloc[0].tolist()
            level = path.index(str(value))
            under = int((h[level] == str(value)).sum()) if level else 1
            total += (under - 1) / (leaves - 1) if leaves > 1 else 0.0
    return total / (len(original) * len(qis))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(LABELS), min_size=2, max_size=12), st.integers(0, 2), st.data())
def test_loss_equals_a_slow_reference(values, level, data):
    h = taxonomy_hierarchy({"ab": ["a", "b"], "cde": ["c", "d", "e"], "*": ["ab", "cde"]})
    original = pd.DataFrame({"x": values})
    released = original.assign(x=generalize_column(original["x"], h, level, "x"))
    drop = data.draw(st.lists(st.sampled_from(list(original.index)), unique=True, max_size=len(values) - 1))
    released = released.drop(index=drop)
    assert loss(original, released, ["x"], {"x": h}) == pytest.approx(_slow_loss(original, released, ["x"], {"x": h}))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(LABELS), min_size=2, max_size=12), st.integers(0, 2), st.data())
def test_a_release_in_order_is_matched_as_one_matched_by_labels(values, level, data):
    """A release that keeps rows of a 0, 1, 2, ... table in order is matched from its positions;
    any other by index labels. Both give the same numbers: the same tables relabelled, or
    shuffled, take the general path."""
    h = taxonomy_hierarchy({"ab": ["a", "b"], "cde": ["c", "d", "e"], "*": ["ab", "cde"]})
    original = pd.DataFrame({"x": values})
    released = original.assign(x=generalize_column(original["x"], h, level, "x"))
    drop = data.draw(st.lists(st.sampled_from(list(original.index)), unique=True, max_size=len(values) - 1))
    released = released.drop(index=drop)
    expected = utility(original, released, ["x"], {"x": h})
    labels = {i: f"r{i}" for i in original.index}
    assert utility(original.rename(index=labels), released.rename(index=labels), ["x"], {"x": h}) == expected
    shuffled = released.sample(frac=1.0, random_state=data.draw(st.integers(0, 2**16)))
    assert utility(original, shuffled, ["x"], {"x": h}) == expected


def test_a_release_matched_by_index_still_names_what_is_wrong():
    original = pd.DataFrame({"x": ["a", "b", "c"]})
    h = {"x": flat_hierarchy(["a", "b", "c"])}
    with pytest.raises(ParameterError, match="unique index"):
        loss(original, original.iloc[[0, 0, 1]], ["x"], h)
    with pytest.raises(ParameterError, match="1 rows whose index is not in the original"):
        loss(original, original.set_axis([0, 1, 3]), ["x"], h)
    with pytest.raises(ParameterError, match="not in the original"):
        loss(original, original.set_axis([-1, 0, 1]), ["x"], h)


def test_utility_measures_against_their_definitions():
    h = taxonomy_hierarchy({"ab": ["a", "b"], "cde": ["c", "d", "e"], "*": ["ab", "cde"]})
    original = pd.DataFrame({"x": ["a", "a", "b", "c", "d", "e", "e"]})
    released = original.assign(x=generalize_column(original["x"], h, 1, "x")).drop(index=[6])
    u = utility(original, released, ["x"], {"x": h})
    # Loss: a, a, b -> ab covers 2 of 5 leaves (1/4 each); c, d, e -> cde (2/4 each); the suppressed e: 1.
    assert u.loss == pytest.approx((3 * 0.25 + 3 * 0.5 + 1.0) / 7)
    assert u.precision == pytest.approx((6 * 0.5 + 1.0) / 7)
    # Non-uniform entropy: -log2 P(value | its group) over the original records (ab: a a b;
    # cde: c d e e), the suppressed record given all seven.
    expected = -(2 * math.log2(2 / 3) + math.log2(1 / 3) + 2 * math.log2(1 / 4) + math.log2(2 / 4) + math.log2(2 / 7))
    assert u.nonuniform_entropy_bits == pytest.approx(expected)
    everything = -sum(math.log2(c / 7) for c in (2, 2, 1, 1, 1, 2, 2))
    assert u.nonuniform_entropy == pytest.approx(expected / everything)
    # With nothing suppressed it is anonlib.measures.metrics' non-uniform entropy of the two columns.
    whole = original.assign(x=generalize_column(original["x"], h, 1, "x"))
    assert utility(original, whole, ["x"], {"x": h}).nonuniform_entropy_bits == pytest.approx(
        nonuniform_entropy(original["x"].tolist(), whole["x"].tolist())
    )
    # Discernibility: classes ab (3) and cde (3) kept, one record suppressed (pays 7).
    assert u.discernibility == 3 * 3 + 3 * 3 + 7 == discernibility([3, 3, 1], 2)
    assert u.average_class_size == pytest.approx(7 / 3)
    assert u.suppressed == 1


def test_loss_refuses_a_value_outside_the_hierarchy():
    h = flat_hierarchy(["a", "b"])
    with pytest.raises(Exception, match="not a generalization"):
        loss(pd.DataFrame({"x": ["a", "b"]}), pd.DataFrame({"x": ["zzz", "b"]}), ["x"], {"x": h})


@pytest.mark.parametrize("distinct", [6, 400])
def test_rolled_up_classes_equal_pandas_whether_keys_fit_one_integer_or_not(distinct):
    """The lattice keys a node's classes in one bit field per attribute and rolls them up
    from the smallest table counted below; with 8 attributes of 400 values the fields do not
    fit one int64 and it regroups representative codes instead. Either way each node's
    records in failing classes (k = 3, distinct 2-diversity) equal what pandas counts."""
    rng = np.random.default_rng(distinct)
    qis = [f"q{j}" for j in range(8)]
    frame = pd.DataFrame({q: rng.integers(0, distinct, 900) for q in qis})
    frame["dx"] = rng.choice(["flu", "hiv", "none"], 900)
    half, quarter = [(i, i + 1) for i in range(0, distinct, 2)], [(i, i + 3) for i in range(0, distinct, 4)]
    hierarchies = {q: interval_hierarchy(range(distinct), [half, quarter], top=True) for q in qis}
    requirements = (ModelRequirement("distinct_l", "dx", 2),)
    lattice = GeneralizationSpace(
        frame, qis, hierarchies, target=ReleaseTarget(3, requirements=requirements, max_suppressed=0.5)
    )
    assert lattice.fits_one_key == (distinct == 6)
    found = set()
    written = {(q, level): generalize_column(frame[q], hierarchies[q], level, q) for q in qis for level in range(4)}
    for _ in range(60):  # random nodes, mostly high (low ones fail whole), rolled up from many sources
        levels = tuple(int(v) for v in rng.choice(4, len(qis), p=[0.1, 0.1, 0.2, 0.6]))
        table = frame.copy()
        for q, level in zip(qis, levels):
            table[q] = written[q, level]  # each column at each level written once, by pandas as before
        verdict = acceptance(table, qis, k=3, requirements=requirements, max_suppressed=0.5)
        assert lattice.status(levels)[1] == len(table) - int(verdict.kept.sum()), levels
        found.add(lattice.status(levels)[1])
    assert len(found) >= 4  # the nodes differ: the comparison is not between tables that fail whole


def test_a_missing_value_stays_apart_from_a_hierarchy_label_that_reads_missing():
    """Without a row for missing markers, a missing value stays missing (a blank cell) below
    the top; a hierarchy may itself use the word "missing" as a group. The two are different
    cells in the file, so different classes in the search (merging them would also make the
    hierarchy look as if it did not nest)."""
    hx = pd.DataFrame([["a", "missing", "G", "*"], ["b", "B", "H", "*"], ["c", "B", "H", "*"], ["d", "D", "H", "*"]])
    hy = pd.DataFrame([["u", "*"], ["v", "*"]])
    df = pd.DataFrame({"x": ["a", "b", "c", None, "a", "b", "d", "c"], "y": ["u", "v", "u", "v", "u", "v", "u", "v"]})
    written = generalize_column(df["x"], hx, 1, "x")
    assert written.tolist() == ["missing", "B", "B", None, "missing", "B", "D", "B"]
    expected = _reference(df, ["x", "y"], {"x": hx, "y": hy}, 2, 0.3, (), None, "loss")
    found = optimal_levels(df, ["x", "y"], {"x": hx, "y": hy}, target=ReleaseTarget(2, max_suppressed=0.3))
    assert (found.levels, found.optimal) == (expected[2], True)
    assert found.value == pytest.approx(expected[0], rel=1e-9)
    lattice = GeneralizationSpace(df, ["x", "y"], {"x": hx, "y": hy}, target=ReleaseTarget(2, max_suppressed=1.0))
    for levels in [(0, 0), (1, 0), (2, 0), (1, 1), (0, 1), (3, 0)]:  # rolled up from one another
        table = df.copy()
        for q, h, level in (("x", hx, levels[0]), ("y", hy, levels[1])):
            table[q] = generalize_column(table[q], h, level, q)
        assert lattice.status(levels)[1] == int((_pandas_classes(table, ["x", "y"]) < 2).sum()), levels


def test_the_search_equals_brute_force_when_keys_do_not_fit_one_integer():
    """Six attributes of about 1,050 values each need 66 bits: the lattice keys classes by
    representative codes instead of one int64, and the search's probes (each rolled up from
    the smallest table under it) still find brute force's node, cost and suppressed records,
    and pandas counts the same records suppressed on the table as written."""
    rng = np.random.default_rng(7)
    qis = [f"q{j}" for j in range(6)]
    base = rng.integers(0, 2048, 1500)
    frame = pd.DataFrame({q: (base + rng.integers(0, 8 << (2 * j), 1500)) % 2048 for j, q in enumerate(qis)})
    sixteens = [(i, i + 15) for i in range(0, 2048, 16)]
    hierarchies = {q: interval_hierarchy(range(2048), [sixteens], top=True) for q in qis}
    lattice = GeneralizationSpace(frame, qis, hierarchies, target=ReleaseTarget(3, max_suppressed=0.2))
    assert not lattice.fits_one_key
    found = optimal_levels(frame, qis, hierarchies, target=ReleaseTarget(3, max_suppressed=0.2), lattice=lattice)
    levels, cost, suppressed = brute_force(
        GeneralizationSpace(frame, qis, hierarchies, target=ReleaseTarget(3, max_suppressed=0.2), rollup=False)
    )
    assert found.optimal and found.levels == levels and found.suppressed == suppressed
    assert found.value == pytest.approx(cost, rel=1e-12)
    assert 0 < suppressed and found.checked < found.lattice_size  # a real search, with records suppressed
    table = frame.copy()  # and the records it suppresses are those pandas finds in the written table
    for q, level in zip(qis, found.levels):
        table[q] = generalize_column(table[q], hierarchies[q], level, q)
    assert found.suppressed == len(table) - int(acceptance(table, qis, k=3, max_suppressed=0.2).kept.sum())


# --------------------------------------------------------------------------- the walk's own machinery


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=40), st.data(), st.integers(1, 6))
def test_the_walk_meets_the_nodes_in_sorted_order_chunk_by_chunk(bounds, data, chunk):
    """Sorting a chunk of the lowest bounds at a time (ties of a chunk's last bound come
    along) gives the order of one full sort: by bound, then fewer levels, then index."""
    from anonlib.transformations.generalization.optimal import _in_bound_order

    total = np.array(data.draw(st.lists(st.integers(0, 4), min_size=len(bounds), max_size=len(bounds))), dtype=np.int16)
    bounds = np.array(bounds, dtype=float) / 3
    order = np.lexsort((np.arange(len(bounds)), total, bounds))
    assert list(_in_bound_order(bounds, total, chunk=chunk)) == list(zip(order.tolist(), bounds[order].tolist()))


def _lattice_of(heights: list[int]) -> GeneralizationSpace:
    """A lattice whose attribute j has ``heights[j]`` levels (values 0..3 in nested bands)."""
    bands = [[(0, 1), (2, 3)], [(0, 3)]]
    qis = [f"q{j}" for j in range(len(heights))]
    frame = pd.DataFrame({q: pd.Series([0, 1, 2, 3], dtype="Int64") for q in qis})
    hierarchies = {
        q: interval_hierarchy(range(4), bands[: h - 1], top=h == 4)
        if h > 1
        else pd.DataFrame({0: ["0", "1", "2", "3"]})
        for q, h in zip(qis, heights)
    }
    return GeneralizationSpace(frame, qis, hierarchies, target=ReleaseTarget(1))


@settings(max_examples=80, deadline=None)
@given(st.sampled_from([[4, 3, 2], [2, 4, 4, 3, 1], [4] * 21]), st.data())
def test_the_cache_finds_the_smallest_table_under_a_node(heights, data):
    """Packed levels with guard bits (or, past 62 bits, a comparison per attribute) find the
    smallest cached table lying under a node; among tables of one size the first kept."""
    from anonlib.transformations.generalization.space import ClassTable as _Table

    lat = _lattice_of(heights)
    assert lat.heights == tuple(heights) and (lat._guard is None) == (len(heights) == 21)  # 63 bits
    level = st.tuples(*(st.integers(0, h - 1) for h in heights))
    kept = [lat._tables[0]]
    for levels, rows in data.draw(st.lists(st.tuples(level, st.integers(1, 3)), max_size=12)):
        if levels in lat._kept:
            continue
        table = _Table(
            levels,
            np.zeros(rows, dtype=np.int64),
            None,
            np.zeros((0, rows), dtype=np.int64),
            np.ones(rows, dtype=np.int64),
        )
        lat._keep(table)
        kept.append(table)
    for query in data.draw(st.lists(level, min_size=1, max_size=10)):
        under = [t for t in kept if all(a <= b for a, b in zip(t.levels, query))]
        assert lat._source(query) is min(under, key=lambda t: t.rows)  # min keeps the first of a size


def test_a_cache_of_three_tables_still_finds_brute_forces_node(monkeypatch):
    """When the cache is full, the largest table but the bottom makes room: the walk still
    finds brute force's node, and what it looks up by levels is what the cache holds."""
    from anonlib.transformations.generalization import space

    monkeypatch.setattr(space, "CACHE_TABLES", 3)
    b = arx_adult_benchmark()
    frame = b.frame.sample(3000, random_state=2)
    qis = ["age", "education", "marital-status", "sex", "race"]
    lattice = GeneralizationSpace(frame, qis, b.hierarchies, target=ReleaseTarget(5, max_suppressed=0.02))
    found = optimal_levels(frame, qis, b.hierarchies, target=ReleaseTarget(5, max_suppressed=0.02), lattice=lattice)
    levels, value, suppressed = brute_force(
        GeneralizationSpace(frame, qis, b.hierarchies, target=ReleaseTarget(5, max_suppressed=0.02), rollup=False)
    )
    assert (found.levels, found.suppressed) == (levels, suppressed) and found.value == pytest.approx(value, rel=1e-12)
    assert len(lattice._tables) == 3 and lattice.checked > 3
    assert lattice._kept == {t.levels: t for t in lattice._tables[1:]}


@pytest.mark.parametrize("measure", ["loss", "nonuniform_entropy"])
@pytest.mark.parametrize(
    "records, limit, qis",
    [
        (6000, 0.03, ["age", "education", "marital-status", "native-country", "sex"]),
        (20000, 0.1, ["age", "education", "marital-status", "native-country", "sex", "occupation"]),
    ],
)
def test_the_cost_has_the_same_bits_whatever_the_records_order(measure, records, limit, qis):
    """Quasi-identifiers are coded in order of first appearance, so the sums behind a cost
    run in the records' order; they are exact, so an engine handing the records over in
    its own order states the same number (the CLI's ``bound`` compared with ``==``)."""
    b = arx_adult_benchmark()
    frame = b.frame.sample(records, random_state=3)
    found = [
        optimal_levels(
            frame.sample(frac=1, random_state=seed),
            qis,
            b.hierarchies,
            target=ReleaseTarget(5, max_suppressed=limit),
            measure=measure,
        )
        for seed in range(4)
    ]
    assert found[0].suppressed > 0  # suppressed records pay their full cost: that sum is checked too
    assert {(r.levels, r.value, r.bound) for r in found} == {(found[0].levels, found[0].value, found[0].bound)}


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 4), st.integers(1, 6), st.integers(1, 300), st.booleans(), st.data())
def test_released_cells_are_priced_as_each_cell_says(height, values, rows, weighted, data):
    """Every cell's cost read the obvious way (its level's cost of its value, or the full cost
    when it is suppressed, times its records) and summed by numpy gives the same bits as the
    measure's own arithmetic."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    cost, full = rng.random((height, values)), rng.random(values) + 1.0
    costs = CellCosts("x", "loss", np.zeros((height, values), dtype=np.int64), [], cost, full)
    codes = rng.integers(0, values, (1, rows))
    level = rng.integers(-1, height, (1, rows))
    weights = rng.integers(1, 50, rows) if weighted else np.ones(rows, dtype=np.int64)
    matched = _Matched(weights, np.ones(rows, bool), codes, (), level, np.zeros(0, np.int64), 0)
    cells = np.array([cost[lv, c] if lv >= 0 else full[c] for lv, c in zip(level[0], codes[0])])
    spent, worst = _cell_totals(matched, [costs])
    assert spent[0] == float((weights.astype(float) * cells).sum())
    assert worst[0] == float((weights.astype(float) * full[codes[0]]).sum())
