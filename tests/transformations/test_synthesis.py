"""The OpenDP wrapper (anonlib.transformations.synthesis): budgets and their conversions,
public cuts and bounds, the plan and its refusals, and small real releases (two runs
differ; every budget from ε = 0.1 to 10 releases or refuses in one sentence; MST's
budget split replayed before the data). Releases need OpenDP (the dp extra); without it
those tests are skipped and the one that simulates its absence still runs."""

from __future__ import annotations

import builtins
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonlib.core.errors import PrivacyExtraMissingError, SynthesisError
from anonlib.core.samples import load_sample
from anonlib.transformations import synthesis
from anonlib.transformations.synthesis import (
    INSTALL_SENTENCE,
    NumberCuts,
    cuts_within,
    parse_cuts,
    plan_synthesis,
    privacy_budget,
    require_opendp,
    synthesize,
    workload,
)

HAS_OPENDP = synthesis.opendp_version() is not None
needs_opendp = pytest.mark.skipif(not HAS_OPENDP, reason="OpenDP (the dp extra) is not installed")


def one_sentence(text: str) -> bool:
    return "\n" not in text and "Traceback" not in text and text.rstrip().endswith(".") and len(text) < 400


@pytest.fixture(scope="module")
def small() -> pd.DataFrame:
    """600 Adult records, four categorical columns and age."""
    return load_sample("adult").frame.sample(600, random_state=3).reset_index(drop=True)


# ---------------------------------------------------------------- budgets


def test_pure_epsilon_is_laplace_with_rho_half_epsilon_squared():
    for eps in (0.1, 1.0, 3.0, 10.0):
        b = privacy_budget(epsilon=eps)
        assert (b.epsilon, b.delta, b.noise, b.pure) == (eps, 0.0, "Laplace", True)
        assert b.rho == pytest.approx(eps * eps / 2)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"epsilon": 0}, "between"),
        ({"epsilon": float("nan")}, "finite"),
        ({"epsilon": 1, "delta": 0.5}, "small probability"),
        ({"epsilon": 1, "rho": 1}, "one of them"),
        ({}, "one of them"),
        ({"rho": 1.0}, "needs δ > 0"),
        ({"epsilon": "x"}, "must be a number"),
    ],
)
def test_impossible_budgets_are_one_sentence(kwargs, words):
    with pytest.raises(SynthesisError) as err:
        privacy_budget(**kwargs)
    assert words in str(err.value) and one_sentence(str(err.value))


@needs_opendp
def test_epsilon_with_delta_converts_to_the_largest_rho_opendp_allows():
    dp = require_opendp()
    b = privacy_budget(epsilon=3.0, delta=1e-6)
    assert b.noise == "Gaussian" and 0 < b.rho < 4.5

    def eps_at(rho):  # OpenDP's own conversion of rho-zCDP to epsilon at delta
        scale = math.sqrt(1 / (2 * rho))
        space = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
        m = dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(dp.m.make_gaussian(*space, scale)), 1e-6)
        return m.map(1.0)[0]

    assert eps_at(b.rho) <= 3.0 + 1e-9  # the guarantee holds ...
    assert eps_at(b.rho * 1.01) > 3.0  # ... and a 1% larger rho would break it
    back = privacy_budget(rho=b.rho, delta=1e-6)  # rho given: OpenDP states its epsilon at delta
    assert back.epsilon == pytest.approx(3.0, rel=1e-3)


@needs_opendp
def test_a_search_raising_at_zero_finds_opendps_own_scale_in_a_twentieth_of_the_evaluations():
    """OpenDP 0.16's search, asked at 0 where a scale raises, bisected down to the smallest float first
    (about 1,070 evaluations, each a whole measurement): the wrapped search finds the same scale."""
    dp = require_opendp()
    import opendp.mod as mod
    from opendp._internal import _binary_search

    def predicate(asked: list):
        def check(scale: float) -> bool:
            asked.append(scale)
            if scale == 0.0 or scale < 1e-308:
                raise dp.OpenDPException("FailedFunction", "scale must be positive")
            return scale >= 40.0 / 3

        return check

    def never(scale: float) -> bool:
        raise dp.OpenDPException("FailedFunction", "no scale")

    own, wrapped = [], []
    opendp_search = mod._call_rust_search.opendp_search  # OpenDP's search, as it runs without the wrapper
    found = opendp_search(predicate(own), "f64", lambda p: _binary_search(p, T="f64"))
    assert dp.binary_search(predicate(wrapped), T=float) == found >= 40.0 / 3
    assert len(own) > 1000 and len(wrapped) < 80
    with pytest.raises(dp.OpenDPException, match="no scale"):  # raising everywhere: OpenDP's error, as before
        dp.binary_search(never, T=float)


# ---------------------------------------------------------------- cuts and bounds


def test_cuts_are_checked_and_labelled():
    spec = NumberCuts("age", (30, 50), 17, 90)
    assert spec.labels == ("17-30", "31-50", "51-90") and spec.whole
    assert NumberCuts("x", (0.5,), 0, 1).labels == ("[0, 0.5]", "(0.5, 1]")
    for cuts, lower, upper, words in [
        ((), 0, 1, "at least one cut"),
        ((5, 3), 0, 9, "must increase"),
        ((-1, 5), 0, 9, "must lie between"),
        ((5, 9), 0, 9, "must lie between"),
    ]:
        with pytest.raises(SynthesisError, match=words):
            NumberCuts("x", cuts, lower, upper)
    # a first cut at the lower bound: a bin of that one value (suggested cuts of a 0/1/2 count column)
    assert NumberCuts("visits", (0, 1), 0, 2).labels == ("0", "1", "2")


@settings(max_examples=60, deadline=None)
@given(
    cuts=st.lists(st.integers(-50, 50), min_size=1, max_size=6, unique=True).map(sorted),
    whole=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_draws_are_uniform_inside_their_bin_never_in_the_next(cuts, whole, seed):
    lower, upper = cuts[0] - 7, cuts[-1] + (7 if whole else 6.5)
    spec = NumberCuts("x", tuple(cuts) if whole else tuple(c + 0.25 for c in cuts), lower, upper)
    bins = np.repeat(np.arange(len(cuts) + 1), 200)
    drawn = spec.draw(bins, np.random.default_rng(seed))
    assert (spec.bins(pd.Series(drawn)) == bins).all()
    assert (drawn >= lower).all() and (drawn <= upper).all()
    if whole:
        assert (drawn == np.floor(drawn)).all()
    first = drawn[bins == 0]  # spread over the bin, not piled at its cut
    assert len(np.unique(first)) > 1 or spec.edges[1] - spec.edges[0] < 1
    assert np.isnan(spec.draw(np.array([-1]), np.random.default_rng(seed))).all()


def test_a_number_columns_type_comes_from_its_cuts_not_its_values():
    """One record of 40.5 among whole ages changed the labels and emptied a value (dp.md part 2):
    the bins OpenDP measures are the declared cuts' labels, whatever the values."""
    spec = NumberCuts("age", (30, 50), 17, 90)
    whole = pd.DataFrame({"age": [18, 31, 40, 60, 95]})
    fraction = pd.DataFrame({"age": [18, 31, 40.5, 60, 95]})
    a = synthesis._prepared(whole, ["age"], {"age": spec})["age"].tolist()
    b = synthesis._prepared(fraction, ["age"], {"age": spec})["age"].tolist()
    assert a == b == [0.0, 1.0, 1.0, 2.0, 2.0]  # the bins' positions, cut by OpenDP at 0.5 and 1.5
    assert synthesis.bin_cuts(spec) == [0.5, 1.5]
    with pytest.raises(SynthesisError, match="has records without a number; release it"):
        synthesis._prepared(pd.DataFrame({"age": [18, None]}), ["age"], {"age": spec})


def test_value_lists_are_given_declared_or_found_and_otherwise_refused():
    frame = pd.DataFrame({"sex": ["F", "M", "M"], "dx": ["a", "b", "rare"], "age": [20, 40, 60]})
    cuts = {"age": NumberCuts("age", (30, 50), 17, 90)}
    lists, sources = synthesis.value_lists(
        frame, ["sex", "dx", "age"], cuts, values={"dx": ["a", "b"]}, values_from_data=True
    )
    assert lists == {"sex": ("F", "M"), "dx": ("a", "b"), "age": ("17-30", "31-50", "51-90")}
    assert sources == {"sex": "declared", "dx": "given", "age": "cuts"}
    lists, sources = synthesis.value_lists(frame, ["sex", "dx"], {}, values={"sex": ["F", "M"]}, delta=1e-6)
    assert lists == {"sex": ("F", "M"), "dx": None} and sources["dx"] == "found"
    for kwargs, words in [
        ({}, "The value lists of sex, dx would be read from the records"),
        ({"values": {"sex": []}, "values_from_data": True}, "is empty"),
        ({"values": {"nope": ["x"]}}, "not a category column released"),
    ]:
        with pytest.raises(SynthesisError) as err:
            synthesis.value_lists(frame, ["sex", "dx"], {}, **kwargs)
        assert words in str(err.value) and one_sentence(str(err.value))


@settings(max_examples=60, deadline=None)
@given(
    cuts=st.lists(st.integers(-50, 50), min_size=1, max_size=6, unique=True).map(sorted),
    values=st.lists(st.one_of(st.integers(-100, 100), st.none()), min_size=1, max_size=40),
)
def test_bins_match_a_slow_reference(cuts, values):
    lower, upper = cuts[0] - 10, cuts[-1] + 10
    spec = NumberCuts("x", tuple(cuts), lower, upper)
    got = spec.bins(pd.Series(values, dtype="Int64"))
    for v, b in zip(values, got):
        if v is None:
            assert b == -1
        else:  # left-open bins after clamping: the number of cuts strictly below the clamped value
            assert b == sum(c < min(max(v, lower), upper) for c in cuts)


def test_parse_cuts_with_bounds():
    assert parse_cuts("age", "17:20,30:90") == NumberCuts("age", (20, 30), 17, 90)
    with pytest.raises(SynthesisError, match="public bounds"):
        parse_cuts("age", "20,30")


@settings(max_examples=60, deadline=None)
@given(
    lower=st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
    width=st.floats(1e-3, 1e6, allow_nan=False, allow_infinity=False),
)
def test_cuts_inside_declared_bounds_are_round_and_strictly_inside(lower, width):
    """Cut suggestions come from bounds the user declares (never from the data): round multiples of
    one width, strictly inside the bounds, about eight bins."""
    upper = lower + width
    if not upper > lower:
        return
    spec = cuts_within("x", lower, upper)
    assert (spec.lower, spec.upper) == (lower, upper)
    assert all(lower < c < upper for c in spec.cuts)
    steps = np.diff(spec.cuts)
    if len(steps):
        step = float(f"{np.median(steps):.0e}")  # one round width: 1, 2 or 5 times a power of ten
        assert f"{step:.0e}"[0] in "125"
        slack = 8 * np.spacing(max(abs(lower), abs(upper)))  # the cuts are written as floats
        assert all(abs(c - round(c / step) * step) <= slack for c in spec.cuts)
        assert np.allclose(steps, step, atol=2 * slack, rtol=0)
        assert 3 <= len(spec.cuts) + 1 <= 16


def test_bounds_alone_give_round_cuts_and_nothing_is_read_from_the_data():
    assert parse_cuts("age", "0:120") == cuts_within("age", 0, 120)
    assert parse_cuts("age", "17:90").cuts == (20, 30, 40, 50, 60, 70, 80)
    for text, words in [
        ("0:x", "must be a number"),
        ("5:5", "from a lower to a higher"),
        ("1:2:3:4", "Write the cuts"),
    ]:
        with pytest.raises(SynthesisError, match=words):
            parse_cuts("age", text)
    assert not hasattr(synthesis, "default_number_cuts")  # no suggestion read from a column's range
    spec = NumberCuts("age", (30,), 17, 90)
    assert spec.outside(pd.Series([10, 17, 50, 90, 95, None])) == 2  # counted for the officer, never released


# ---------------------------------------------------------------- the plan


def test_the_pairs_workload_is_the_star_then_the_listed_pairs():
    assert workload(["a", "b", "c", "y"], "y", [("b", "a"), ("a", "b"), ("c", "y")]) == [
        ("a", "y"),
        ("b", "y"),
        ("c", "y"),
        ("b", "a"),
    ]


def test_plan_counts_the_domain_and_refuses_in_one_sentence(small):
    cuts = [NumberCuts("age", (30, 50), 17, 90)]
    plan = plan_synthesis(small, ["sex", "race", "income", "age"], cuts=cuts, predict="income")
    sizes = [small[c].nunique() + 1 for c in ("sex", "race", "income")] + [3]
    assert plan.sizes == tuple(sizes) and plan.domain == float(np.prod(sizes))
    assert plan.pairs == (("sex", "income"), ("race", "income"), ("age", "income"))
    refusals = [
        (dict(columns=["sex"]), "at least two columns"),
        (dict(columns=["sex", "sex"]), "named twice"),
        (dict(columns=["sex", "nope"]), "do not exist"),
        (dict(columns=["sex", "fnlwgt"]), "different values"),
        (dict(columns=["sex", "race"], method="magic"), "must be one of"),
        (dict(columns=["sex", "race"], pairs=[("sex", "income")]), "not among the columns"),
        (dict(columns=["sex", "race", "income"], method="aim", time_limit=10), "past the limit"),
    ]
    for kwargs, words in refusals:
        with pytest.raises(Exception) as err:
            plan_synthesis(small, **kwargs)
        assert words in str(err.value) and one_sentence(str(err.value)), str(err.value)


def test_aim_is_estimated_slower_than_pairs_and_mst():
    sizes = [9, 17, 8, 16, 7, 6, 3, 3, 8, 10]
    pairs = synthesis.estimate_seconds(sizes, "pairs", 17)
    assert pairs < synthesis.estimate_seconds(sizes, "aim", 17)
    assert synthesis.estimate_seconds(sizes[:4], "pairs", 3) < pairs


# ---------------------------------------------------------------- without OpenDP


def test_without_opendp_one_sentence_says_how_to_install_it(monkeypatch, small):
    real_import = builtins.__import__

    def no_opendp(name, *args, **kwargs):
        if name.split(".")[0] in ("opendp", "mbi"):
            raise ImportError(f"No module named '{name}'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_opendp)
    with pytest.raises(PrivacyExtraMissingError) as err:
        synthesize(small, ["sex", "income"], epsilon=1.0, values_from_data=True)
    assert str(err.value) == INSTALL_SENTENCE and one_sentence(INSTALL_SENTENCE)
    assert "pip install '.[dp]'" in INSTALL_SENTENCE


# ---------------------------------------------------------------- real releases (OpenDP)


@needs_opendp
@pytest.mark.slow
def test_a_small_release_keeps_its_columns_bounds_categories_and_each_persons_records(small):
    """Three records per person, at most two kept at random: OpenDP counts two thirds of the records.
    The person's bound and the default method's release share one synthesis (each release costs
    seconds of OpenDP's scale searches, whatever the data)."""
    frame = pd.concat([small] * 3, ignore_index=True).assign(pid=np.tile(np.arange(len(small)), 3))
    cuts = [NumberCuts("age", (30, 50), 17, 90)]
    s = synthesize(
        frame,
        ["race", "income", "age"],
        epsilon=3.0,
        cuts=cuts,
        predict="income",
        rows=2000,
        values_from_data=True,
        person="pid",
        records_per_person=2,
    )
    assert list(s.table.columns) == ["race", "income", "age"] and s.rows == len(s.table) == 2000
    assert s.method == "mst" and s.budget.rho == 4.5 and s.library["opendp"].startswith("0.16")
    assert s.pairs == (("race", "income"), ("age", "income"))
    assert (s.unit, s.records_per_person, s.person) == ("person", 2, "pid")
    assert s.table["age"].between(17, 90).all() and s.table["age"].dtype.kind == "i"
    # the end bins are drawn inside the bounds, not at the cut (OpenDP's own draw)
    assert s.table["age"].lt(30).any() and s.table["age"].gt(51).any()
    for column in ("race", "income"):
        assert set(s.table[column].dropna()) <= set(small[column].dropna())
    assert len(set(s.table["race"].dropna())) > 2  # a column of many values keeps more than two of them
    kept = 2 * len(small)  # each person's third record dropped
    assert abs(s.records_estimate - kept) < 60  # a DP count, Laplace noise of scale a few records
    tables = dict(s.marginals)
    assert ("age", "income") in tables and tables[("race",)]["records"].sum() == pytest.approx(kept, abs=60)


def low_budget_release(small, method: str, eps: float):
    """The low end of the range: ``method`` at ``eps`` on Adult's categories (MST alone on six
    columns, the pairs method on two predicting income)."""
    columns = ["sex", "race", "income", "relationship", "marital-status", "workclass"]
    if method == "pairs":  # the split is MST's question; one pair shows the pairs method's low end
        columns = ["sex", "income"]  # each column adds a table to every step of OpenDP's scale searches
    predict = "income" if method == "pairs" else None  # MST alone
    return synthesize(
        small, columns, epsilon=eps, method=method, predict=predict, rows=200, time_limit=120, values_from_data=True
    )


def test_mst_split_is_replayed_before_the_data_and_found_for_every_column_count():
    """OpenDP 0.16's MST failed after 93 s on a panel's 9 columns ("MST cannot spend this budget"):
    its selection budget split 8 ways rounds past itself whatever the budget. The split is replayed
    from the settings alone, a budget a few units in the last place lower or one pair fewer is chosen,
    for every number of columns a release may have, each answer checked with OpenDP's own composition."""
    dp = pytest.importorskip("opendp.prelude")
    require_opendp()
    cases = [(c, None) for c in (2, 3, 5, 8, 9, 10, 13, 17, 21, synthesis.MAX_COLUMNS)]
    cases += [(c, synthesis.MST_FIXED_SHARE) for c in (9, 17)]  # MST's part through Sequential's own search
    for noise, budget in (("Laplace", 3.0), ("Laplace", 0.1), ("Gaussian", 0.185)):
        for columns, share in cases:
            spend, pairs = synthesis.mst_split(noise, budget, columns, share=share)
            assert budget * (1 - 1e-11) < spend <= budget
            assert columns - 3 <= pairs <= max(columns - 1, 1)
    assert synthesis.mst_split("Laplace", 3.0, 9)[1] == 7  # 8 parts never fit: one pair fewer
    assert synthesis.mst_split("Laplace", 3.0, 8) == (3.0, 7)  # 7 parts fit at the budget itself
    measure = dp.max_divergence()
    domain, metric = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
    total, parts = 3.0, 8  # the panel's nine columns: every budget near 3 overspends, replayed by hand
    for k in range(40):
        part = float(np.nextafter(np.nextafter(total * (1 - k * 2.0**-44) * 0.5, 0), 0))
        select = float(np.nextafter(np.nextafter(part - part * 0.9, 0), 0))
        each = float(np.nextafter(select / parts, 0))
        composed = dp.c.make_adaptive_composition(domain, metric, measure, d_in=1, d_mids=[each] * parts).map(1)
        assert composed > select


@pytest.fixture(scope="module")
def low_budget(small):
    """``low_budget_release`` made once per method and budget in this module, read by two tests."""
    made = {}

    def release(method: str, eps: float):
        if (method, eps) not in made:
            made[method, eps] = low_budget_release(small, method, eps)
        return made[method, eps]

    return release


@needs_opendp
@pytest.mark.parametrize(("method", "eps"), [("pairs", 0.1), ("mst", 0.3)])
@pytest.mark.slow
def test_small_budgets_release_and_mst_spends_what_its_split_allows(low_budget, method, eps):
    """The low end of the range releases with both methods (a budget outside it is refused in
    a sentence: the budget tests above; ε = 10 releases in the drawing test below). MST on 6 columns at ε = 0.3 fails inside OpenDP without
    the replayed split ("insufficient budget for query"); with it, it releases, having given
    OpenDP a few units in the last place less."""
    s = low_budget(method, eps)
    assert len(s.table) == 200 and s.budget.epsilon == eps and s.method == method and s.unit == "record"
    assert s.budget.epsilon == eps  # stated: OpenDP's map of the whole release (its privacy filter)
    if method == "mst":  # MST's query spends what its split allows, within the filter
        assert eps * (1 - 1e-11) < s.budget_spent <= eps
    else:
        assert s.budget_spent == eps


def abc_records() -> pd.DataFrame:
    """4,000 records of three independent columns of four values, and one record of a value of its own."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({c: rng.choice(list("wxyz"), 4000) for c in "ABC"})
    frame.loc[0, "B"] = "Only-one"
    return frame


def abc_release(frame: pd.DataFrame):
    """The pairs method predicting A, at ε = 10 with δ: OpenDP finds the value lists itself."""
    return synthesize(frame, ["A", "B", "C"], epsilon=10.0, delta=5e-7, predict="A", rows=4000, method="pairs")


@pytest.fixture(scope="module")
def drawn():
    """One real release of ``abc_records``."""
    if not HAS_OPENDP:
        pytest.skip("OpenDP (the dp extra) is not installed")
    frame = abc_records()
    return frame, abc_release(frame)


@needs_opendp
@pytest.mark.slow
def test_two_runs_give_different_tables(small, low_budget):
    """A second run with the same settings as the held one (the pairs method's low end above, the
    cheapest release here): fresh noise and draws, never a fixed seed."""
    first = low_budget("pairs", 0.1)
    again = low_budget_release(small, "pairs", 0.1)
    assert again.table.shape == first.table.shape and not again.table.equals(first.table)


@needs_opendp
@pytest.mark.slow
def test_records_are_drawn_so_columns_sharing_a_parent_stay_independent_and_delta_finds_the_lists(drawn):
    """mbi 1.1.0's default draw ("round") couples columns that share a parent in the model:
    B and C below, each measured only with A, came out equal 98% of the time (docs/dp.md).
    Drawn with "sample", they agree about a quarter of the time, as in the records. With δ,
    OpenDP finds the value lists itself and leaves out a value of one record."""
    frame, s = drawn
    assert s.pairs == (("B", "A"), ("C", "A"))
    assert s.value_sources == {"A": "found", "B": "found", "C": "found"}
    assert (s.budget.delta, s.budget.delta_keys) == (1e-6, 5e-7)  # finding the lists spends δ of its own
    assert "Only-one" not in s.categories["B"] and "Only-one" not in set(s.table["B"].dropna())
    assert set(s.categories["A"]) == set(s.categories["C"]) == set("wxyz")
    assert abs(s.records_estimate - len(frame)) < 60  # a DP count, Gaussian noise of scale a few records
    assert float((s.table["B"] == s.table["C"]).mean()) == pytest.approx(
        float((frame["B"] == frame["C"]).mean()), abs=0.05
    )
