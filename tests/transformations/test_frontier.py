"""Risk-utility frontier (Xia et al. 2013): lattice, risk, KL loss, searches, Safe Harbor."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonlib.core.errors import ParameterError, PopulationError, ProblemTooLargeError
from anonlib.core.samples import load_sample
from anonlib.transformations.frontier import (
    DomainOrderError,
    Frontier,
    dominating,
    evaluate,
    explore,
    frontier_area,
    non_dominated,
    prepare,
    safe_harbor_policy,
    search_frontier,
    strictly_dominates,
)
from anonlib.transformations.frontier.policy_lattice import (
    PrunedSublattices,
    Sublattice,
    is_chain,
    is_glb,
    is_maximal_chain,
    parse,
    precedes,
    random_maximal_chain,
    random_sublattice,
    search_non_overlapping,
    show,
)
from anonlib.transformations.synthetic import adult_with_zip, tennessee_zcta_population, tennessee_zip_codes

# --- the paper's lattice examples ---------------------------------------------------


def test_paper_maximal_chain_figure_3():
    chain = [parse(p) for p in ("0000", "1000", "1100", "1110", "1111")]
    assert is_chain(chain) and is_maximal_chain(chain)
    assert not is_maximal_chain(chain[1:])  # does not start at top
    assert not is_chain([chain[0], chain[2]])  # two bits apart


def test_paper_sublattice_members_figure_3():
    sub = Sublattice(parse("0001"), parse("1011"))
    assert sorted(show(p) for p in sub.members()) == ["0001", "0011", "1001", "1011"]
    assert sub.size == 4
    everything = ["".join(b) for b in itertools.product("01", repeat=4)]
    inside = {p for p in everything if sub.contains(parse(p))}
    assert inside == {"0001", "0011", "1001", "1011"}


def test_paper_glb_figure_2():
    # ages 1..10; gamma keeps the boundaries 4|5 and 6|7, alpha drops 4|5, beta also drops 6|7
    gamma = parse("010101100")
    alpha = gamma.copy()
    alpha[3] = False  # boundary between ages 4 and 5
    beta = alpha.copy()
    beta[5] = False  # boundary between ages 6 and 7
    assert is_glb(beta, alpha) and is_glb(alpha, gamma)
    assert not is_glb(beta, gamma) and precedes(beta, gamma)
    assert not is_glb(alpha, beta) and not precedes(gamma, beta)


def test_paper_figure_1_age_policy_intervals():
    df = pd.DataFrame({"age": list(range(1, 11))})
    space = prepare(df, ["age"])
    bits = space.bits_of({"age": [0, 1, 0, 0, 0, 1, 0, 0, 0]})
    assert space.intervals(bits) == {"age": ["1-2", "3-6", "7-10"]}
    generalized = space.generalize(df, bits)
    assert generalized["age"].tolist() == ["1-2"] * 2 + ["3-6"] * 4 + ["7-10"] * 4


def test_paper_appendix_clause_and_snl_example():
    assert Sublattice(parse("00001"), parse("10101")).clause() == [(4, 0), (1, 1), (3, 1)]
    pruned = PrunedSublattices(5)
    pruned.add(Sublattice(parse("00000"), parse("11110")))  # B4=1
    pruned.add(Sublattice(parse("00101"), parse("11111")))  # B2=0 or B4=0
    pruned.add(Sublattice(parse("00100"), parse("10101")))  # B1=1 or B2=0 or B3=1
    for seed in range(10):
        assert search_non_overlapping(pruned, np.random.default_rng(seed)) == {4: 1, 2: 0}


def test_snl_reports_a_fully_pruned_lattice():
    pruned = PrunedSublattices(3)
    pruned.add(Sublattice(parse("000"), parse("011")))  # every policy with bit 0 = 0
    pruned.add(Sublattice(parse("100"), parse("111")))  # every policy with bit 0 = 1
    assert search_non_overlapping(pruned, np.random.default_rng(0)) is None


@settings(max_examples=40, deadline=None)
@given(st.integers(3, 9), st.integers(0, 6), st.integers(0, 10_000))
def test_generated_sublattices_never_overlap_pruned_ones(n_bits, n_pruned, seed):
    rng = np.random.default_rng(seed)
    pruned = PrunedSublattices(n_bits)
    kept = []
    for _ in range(n_pruned):
        literals = search_non_overlapping(pruned, rng)
        if literals is None:
            break
        sub = random_sublattice(n_bits, literals, rng)
        for old in kept:
            assert not any(old.contains(p) for p in sub.members())
        pruned.add(sub)
        kept.append(sub)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 40), st.integers(0, 10_000))
def test_random_chains_are_maximal(n_bits, seed):
    chain = random_maximal_chain(n_bits, np.random.default_rng(seed))
    assert is_maximal_chain(list(chain[::-1]))
    sub = random_sublattice(n_bits, {}, np.random.default_rng(seed))
    walk = sub.random_chain(np.random.default_rng(seed + 1))
    assert (walk[0] == sub.lower).all() and (walk[-1] == sub.upper).all() and is_chain(list(walk[::-1]))


# --- risk and loss against the definitions ------------------------------------------


def _random_table(rng: np.random.Generator, n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": rng.integers(20, 29, n),
            "sex": rng.choice(["f", "m"], n),
            "zip": rng.choice(["37010", "37011", "37201", "37202", "38001"], n),
        }
    )


def _generalize_by_hand(df, space, bits):
    """Per row, a tuple of interval indices, computed with plain Python."""
    out = []
    parts = space.split(bits)
    for _, row in df[list(space.attributes)].iterrows():
        key = []
        for attribute, domain in zip(space.attributes, space.domains):
            position = list(domain).index(row[attribute])
            key.append(sum(parts[attribute][:position]))
        out.append(tuple(key))
    return out


def _kl_by_definition(df, space, bits):
    """KL(P||Q) straight from the definition: sum over original combinations."""
    n = len(df)
    original = Counter(tuple(r) for r in df[list(space.attributes)].itertuples(index=False))
    cells = _generalize_by_hand(df, space, bits)
    cell_size = Counter(cells)
    parts = space.split(bits)
    kl = 0.0
    for combination, count in original.items():
        cell, width = [], 1
        for attribute, domain, value in zip(space.attributes, space.domains, combination):
            position = list(domain).index(value)
            interval = sum(parts[attribute][:position])
            ids = [sum(parts[attribute][:j]) for j in range(len(domain))]
            width *= ids.count(interval)
            cell.append(interval)
        p = count / n
        q = cell_size[tuple(cell)] / (n * width)
        kl += p * math.log(p / q)
    return kl


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 100_000), st.integers(5, 60))
def test_risk_and_kl_match_the_definitions(seed, n):
    rng = np.random.default_rng(seed)
    df = _random_table(rng, n)
    space = prepare(df, ["age", "sex", "zip"])
    for _ in range(3):
        bits = rng.random(space.n_bits) < rng.random()
        risk, loss = space.evaluate(bits)
        cells = _generalize_by_hand(df, space, bits)
        before = len(set(map(tuple, df[["age", "sex", "zip"]].itertuples(index=False))))
        assert risk == pytest.approx(len(set(cells)) / before)
        assert loss == pytest.approx(_kl_by_definition(df, space, bits), abs=1e-12)


def test_kl_paper_counterexample_is_ln_121():
    # 100 records of age 39 generalized to a 121-value range: KL = ln 121 (> 1, so normalize)
    df = pd.DataFrame({"age": [39] * 100})
    risk, loss = evaluate(df, ["age"], {"age": [0] * 120}, orders={"age": list(range(0, 121))})
    assert loss == pytest.approx(math.log(121))
    assert risk == 1.0


def test_count_column_equals_expanded_rows():
    rng = np.random.default_rng(5)
    compact = _random_table(rng, 30).assign(n=rng.integers(1, 4, 30))
    expanded = compact.loc[compact.index.repeat(compact["n"])].drop(columns="n")
    a = prepare(compact, ["age", "sex", "zip"], count="n")
    b = prepare(expanded, ["age", "sex", "zip"])
    for _ in range(5):
        bits = rng.random(a.n_bits) < 0.5
        assert a.evaluate(bits) == pytest.approx(b.evaluate(bits))


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 100_000))
def test_population_risk_matches_distinguishability(seed):
    rng = np.random.default_rng(seed)
    data = _random_table(rng, 25)
    population = pd.concat([data, _random_table(rng, 80)], ignore_index=True)
    population = population.assign(people=rng.integers(1, 50, len(population)))
    space = prepare(data, ["age", "sex", "zip"], population=population.drop(columns="people"))
    assert space.has_population  # no count column: one person per row
    bits = rng.random(space.n_bits) < rng.random()
    data_cells = _generalize_by_hand(data, space, bits)
    pop_cells = _generalize_by_hand(population, space, bits)
    g = Counter(pop_cells)
    g0 = Counter(tuple(r) for r in population[["age", "sex", "zip"]].itertuples(index=False))
    expected = sum(1 / g[c] for c in data_cells) / sum(
        1 / g0[tuple(r)] for r in data[["age", "sex", "zip"]].itertuples(index=False)
    )
    assert space.evaluate(bits)[0] == pytest.approx(expected)
    weighted = prepare(data, ["age", "sex", "zip"], population=population)  # "people" found as the count
    gw = Counter()
    for cell, people in zip(pop_cells, population["people"]):
        gw[cell] += people
    gw0 = Counter()
    for row, people in zip(population[["age", "sex", "zip"]].itertuples(index=False), population["people"]):
        gw0[tuple(row)] += people
    expected_w = sum(1 / gw[c] for c in data_cells) / sum(
        1 / gw0[tuple(r)] for r in data[["age", "sex", "zip"]].itertuples(index=False)
    )
    assert weighted.evaluate(bits)[0] == pytest.approx(expected_w)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 100_000), st.booleans())
def test_risk_and_loss_are_order_homomorphic_along_random_chains(seed, with_population):
    rng = np.random.default_rng(seed)
    data = _random_table(rng, 40)
    population = pd.concat([data, _random_table(rng, 100)], ignore_index=True) if with_population else None
    space = prepare(data, ["age", "sex", "zip"], population=population)
    chain = random_maximal_chain(space.n_bits, rng)  # bottom first, then ever more general
    scores = np.array([space.evaluate(p) for p in chain])
    assert np.all(np.diff(scores[:, 0]) <= 1e-12)  # risk falls as policies generalize
    assert np.all(np.diff(scores[:, 1]) >= -1e-12)  # loss grows
    assert scores[0].tolist() == [1.0, 0.0]


# --- the frontier -------------------------------------------------------------------


def _brute_force_non_dominated(risk, loss):
    return np.array(
        [
            not any(strictly_dominates((risk[j], loss[j]), (risk[i], loss[i])) for j in range(len(risk)))
            for i in range(len(risk))
        ]
    )


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=1, max_size=30))
def test_frontier_updates_equal_the_non_dominated_set(points):
    risk = np.array([p[0] / 6 for p in points])
    loss = np.array([p[1] / 6 for p in points])
    frontier = Frontier()
    for i, (r, u) in enumerate(zip(risk, loss)):
        frontier.update(i, r, u)
    expected = _brute_force_non_dominated(risk, loss)
    assert sorted(frontier.ids.tolist()) == np.flatnonzero(expected).tolist()
    assert non_dominated(risk, loss).tolist() == expected.tolist()


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 8), st.integers(0, 8)), min_size=1, max_size=12),
    st.integers(0, 7),
    st.integers(1, 8),
    st.integers(0, 7),
    st.integers(1, 8),
)
def test_area_and_update_probability_against_a_grid(points, ra, dr, ub, du):
    frontier = Frontier()
    for i, (r, u) in enumerate(points):
        frontier.update(i, r / 8, u / 8)
    grid = (np.arange(800) + 0.5) / 800  # midpoints: exact for steps on multiples of 1/8

    def curve(r):
        below = frontier.risk <= r
        return frontier.loss[below].min() if below.any() else 1.0

    heights = np.array([curve(r) for r in grid])
    assert frontier.area() == pytest.approx(heights.mean())
    assert frontier_area(frontier.risk, frontier.loss) == pytest.approx(heights.mean())
    r_lo, r_hi = ra / 8, min(ra + dr, 8) / 8
    u_lo, u_hi = ub / 8, min(ub + du, 8) / 8
    if r_hi > r_lo and u_hi > u_lo:
        inside = (grid >= r_lo) & (grid <= r_hi)
        nd = np.clip(heights[inside] - u_lo, 0, u_hi - u_lo).sum() / 800
        expected = nd / ((r_hi - r_lo) * (u_hi - u_lo))
        assert frontier.update_probability((r_lo, u_hi), (r_hi, u_lo)) == pytest.approx(expected)


def _adult_small_lattice():
    """Adult on race, sex, marital status and income: 4 + 1 + 6 + 1 = 12 bits, 4,096 policies."""
    frame = load_sample("adult").frame
    return frame, prepare(frame, ["race", "sex", "marital-status", "income"])


@pytest.fixture(scope="module")
def small_lattice():
    frame, space = _adult_small_lattice()
    assert space.n_policies == 4096
    return frame, space, explore(space, "exhaustive")


def test_exhaustive_frontier_equals_brute_force(small_lattice):
    _, space, result = small_lattice
    assert result.n_evaluated == 4096
    risk, loss = result.evaluated_risk, result.evaluated_loss
    expected = set(np.flatnonzero(_brute_force_non_dominated(risk, loss)).tolist())
    assert set(result.frontier_ids.tolist()) == expected
    for entry, _i in zip(result.frontier, result.frontier_ids):
        assert space.evaluate(space.bits_of(entry.bits)) == pytest.approx((entry.risk, entry.loss))
        assert entry.loss_normalized == pytest.approx(entry.loss / space.top_loss)


@pytest.mark.parametrize("method", ["shs", "rcs"])
def test_every_returned_frontier_policy_is_non_dominated(small_lattice, method):
    _, space, _ = small_lattice
    result = explore(space, method, 600, seed=3)
    assert result.n_evaluated == 600
    mask = _brute_force_non_dominated(result.evaluated_risk, result.evaluated_loss)
    assert set(result.frontier_ids.tolist()) == set(np.flatnonzero(mask).tolist())
    risks = [e.risk for e in result.frontier]
    assert risks == sorted(risks)


def test_shs_gets_within_125_percent_of_the_optimum_with_a_fifth_of_the_lattice(small_lattice):
    _, space, exhaustive = small_lattice
    optimum = exhaustive.area
    budget = space.n_policies // 5
    for seed in range(3):
        shs = explore(space, "shs", budget, seed=seed)
        assert shs.area <= 1.25 * optimum, (seed, shs.area, optimum)
        assert shs.area >= optimum - 1e-12


def test_area_trace_is_non_increasing_and_ends_at_the_final_area():
    frame, space = _adult_small_lattice()
    result = explore(space, "rcs", 300, seed=1)
    areas = [a for _, a in result.trace]
    assert all(b <= a + 1e-12 for a, b in zip(areas, areas[1:]))
    assert result.area_after(result.n_evaluated) == pytest.approx(result.area)
    assert result.area_after(0) == 1.0


def test_progress_callback_reports_policies_and_area():
    _, space = _adult_small_lattice()
    seen = []
    result = explore(space, "shs", 200, seed=2, progress=lambda n, b, a: seen.append((n, b, a)))
    assert seen[-1] == (200, 200, pytest.approx(result.area))
    assert [n for n, _, _ in seen] == sorted(n for n, _, _ in seen) and len(seen) >= 100


def test_search_frontier_contract_and_seed_reproducibility():
    frame = load_sample("adult").frame
    entries = search_frontier(frame, ["race", "sex"], method="shs", budget=20, seed=4)
    again = search_frontier(frame, ["race", "sex"], method="shs", budget=20, seed=4)
    assert [e.bits for e in entries] == [e.bits for e in again]
    for e in entries:
        assert set(e.bits) == {"race", "sex"} and len(e.bits["race"]) == 4 and len(e.bits["sex"]) == 1
        assert evaluate(frame, ["race", "sex"], e.bits) == pytest.approx((e.risk, e.loss))
        assert 0 <= e.loss_normalized <= 1 and 0 < e.risk <= 1
    exhaustive = search_frontier(frame, ["race", "sex"], method="exhaustive")
    assert [e.risk for e in exhaustive][-1] == 1.0 and exhaustive[-1].loss == 0.0


# --- Safe Harbor and the synthetic ZIP codes ------------------------------------------


def test_tennessee_zip_generator_is_seeded_and_follows_population():
    table = tennessee_zcta_population()
    assert table["zip"].str.len().eq(5).all() and table["zip"].iloc[-1] <= "38589"
    a = tennessee_zip_codes(50_000, seed=11)
    assert a.tolist() == tennessee_zip_codes(50_000, seed=11).tolist()
    assert a.tolist() != tennessee_zip_codes(50_000, seed=12).tolist()
    share = pd.Series(a).value_counts(normalize=True)
    expected = table.set_index("zip")["population"] / table["population"].sum()
    biggest = expected.idxmax()
    assert share[biggest] == pytest.approx(expected[biggest], rel=0.1)
    assert set(a) <= set(table.loc[table["population"] > 0, "zip"])


def test_safe_harbor_on_adult_with_tennessee_zip():
    frame = adult_with_zip()
    space = prepare(frame, ["age", "sex", "race", "zip"])
    populations = tennessee_zcta_population().assign(zip3=lambda t: t["zip"].str[:3])
    zip3 = populations.groupby("zip3")["population"].sum().to_dict()
    policy = safe_harbor_policy(space, zip3_population=zip3)
    bits = space.bits_of(policy.bits)
    intervals = space.intervals(bits)
    assert len(intervals["zip"]) == frame["zip"].str[:3].nunique()
    assert intervals["age"][-1] == "90" and len(intervals["age"]) == frame["age"].nunique()
    assert len(intervals["race"]) == 5 and len(intervals["sex"]) == 2
    assert any("nothing goes to 000" in note for note in policy.notes)
    risk, loss = space.evaluate(bits)
    assert 0 < risk < 1 and loss > 0


def test_safe_harbor_small_areas_and_ages_over_90():
    df = pd.DataFrame({"age": [30, 89, 90, 95, 101], "zip": ["10001", "10002", "20001", "30001", "30002"]})
    space = prepare(df, ["age", "zip"])
    policy = safe_harbor_policy(space, zip3_population={"100": 50_000, "200": 100, "300": 200})
    assert policy.bits == {"age": (1, 1, 0, 0), "zip": (0, 1, 0, 0)}
    assert space.intervals(space.bits_of(policy.bits))["zip"] == ["10001-10002", "20001-30002"]
    split = safe_harbor_policy(space, zip3_population={"100": 50_000, "200": 100, "300": 90_000})
    assert split.bits["zip"] == (0, 1, 1, 0)
    apart = safe_harbor_policy(space, zip3_population={"100": 10, "200": 100_000, "300": 10})
    assert apart.bits["zip"] == (0, 1, 1, 0)
    assert any("not neighbours" in note for note in apart.notes)
    bands = prepare(pd.DataFrame({"age": ["50-54", "55-59"], "zip": ["10001", "10002"]}), ["age", "zip"])
    text_ages = safe_harbor_policy(bands)
    assert text_ages.bits["age"] == (1,) and any("holds text" in note for note in text_ages.notes)
    assert not any("not neighbours" in note for note in policy.notes)


def test_safe_harbor_leaves_a_missing_zip_missing():
    """A blank ZIP (the value 'missing', last in ZIP order) was read as the 3-digit area 'mis' of
    no people: the frontier page said '1 small 3-digit area(s) (mis) merged into 000' on a file of
    large areas, and merged the blanks with a small area beside them into one 000 interval."""
    df = pd.DataFrame({"age": [30, 40, 50, 60], "zip": ["37201", "37202", "89301", None]})
    space = prepare(df, ["age", "zip"])
    assert space.domains[space.attributes.index("zip")][-1] == "missing"
    policy = safe_harbor_policy(space, zip3_population={"372": 500_000, "893": 100})
    assert policy.bits["zip"] == (0, 1, 1)  # 37201-37202 | 89301 (000) | missing, alone
    assert space.intervals(space.bits_of(policy.bits))["zip"] == ["37201-37202", "89301", "missing"]
    assert "1 small 3-digit area(s) (893) merged into 000." in policy.notes
    large = safe_harbor_policy(space, zip3_population={"372": 500_000, "893": 500_000})
    assert any("nothing goes to 000" in note for note in large.notes)


def test_dominating_lists_frontier_policies_better_than_a_point():
    _, space = _adult_small_lattice()
    result = explore(space, "exhaustive")
    middle = result.frontier[len(result.frontier) // 2]
    worse = dominating(result.frontier, middle.risk + 0.01, middle.loss + 0.01)
    assert middle in worse
    assert dominating(result.frontier, middle.risk, middle.loss) == []


# --- bad inputs ----------------------------------------------------------------------


def test_unknown_category_in_an_order_is_named():
    df = pd.DataFrame({"race": ["White", "Black", "Other"]})
    with pytest.raises(DomainOrderError, match="'Other'"):
        prepare(df, ["race"], orders={"race": ["White", "Black"]})
    with pytest.raises(DomainOrderError, match="more than once"):
        prepare(df, ["race"], orders={"race": ["White", "Black", "Other", "White"]})
    space = prepare(df, ["race"], orders={"race": ["White", "Other", "Black", "Asian"]})
    assert space.domains == (("White", "Other", "Black", "Asian"),)


def test_population_read_with_other_types_still_matches():
    data = pd.DataFrame({"age": [30, 40, 40], "zip": ["37010", "37011", "37011"]})
    population = pd.DataFrame({"age": ["30", "40", "41"], "zip": [37010, 37011, 37011], "people": [5, 7, 2]})
    space = prepare(data, ["age", "zip"], population=population, population_count="people")
    top_risk = space.evaluate(space.top)[0]
    assert top_risk == pytest.approx((3 / 14) / (1 / 5 + 2 / 7))


def test_record_missing_from_population_is_named():
    data = pd.DataFrame({"age": [30, 40], "zip": ["37010", "37011"]})
    population = pd.DataFrame({"age": [30, 41], "zip": ["37010", "37011"], "count": [5, 7]})
    with pytest.raises(PopulationError, match=r"age=40, zip=37011"):
        prepare(data, ["age", "zip"], population=population, population_count="count")
    with pytest.raises(PopulationError, match="lacks"):
        prepare(data, ["age", "zip"], population=population.drop(columns="zip"))


def test_bad_policies_and_parameters():
    df = pd.DataFrame({"age": [30, 40, 50], "sex": ["f", "m", "f"]})
    with pytest.raises(ParameterError, match="needs 2 bits; 3 were given"):
        evaluate(df, ["age", "sex"], {"age": [1, 1, 1], "sex": [1]})
    with pytest.raises(ParameterError, match="no bits for 'sex'"):
        evaluate(df, ["age", "sex"], {"age": [1, 1]})
    with pytest.raises(ParameterError, match="Unknown search method"):
        search_frontier(df, ["age"], method="genetic")
    with pytest.raises(ParameterError, match="budget"):
        search_frontier(df, ["age"], budget=1)
    wide = pd.DataFrame({"x": np.arange(30)})
    with pytest.raises(ProblemTooLargeError, match="2\\^29"):
        search_frontier(wide, ["x"], method="exhaustive")


def test_generalized_table_has_the_class_sizes_the_policy_reports():
    from anonlib.core.equivalence import class_sizes
    from anonlib.measures.avector import anonymity_vector

    frame = adult_with_zip()
    space = prepare(frame, ["age", "sex", "race", "zip"])
    rng = np.random.default_rng(8)
    for density in (0.2, 0.6, 0.95):
        bits = rng.random(space.n_bits) < density
        generalized = space.generalize(frame, bits)
        direct = class_sizes(generalized, ["age", "sex", "race", "zip"])
        assert anonymity_vector(direct) == anonymity_vector(space.class_sizes(bits))
        assert generalized.drop(columns=["age", "sex", "race", "zip"]).equals(
            frame.drop(columns=["age", "sex", "race", "zip"])
        )
        intervals = space.intervals(bits)
        assert set(generalized["zip"]) <= set(intervals["zip"])
        assert len(intervals["zip"]) == int(bits[space.offsets[3] :].sum()) + 1


# --- generalizing the table: every row labelled from its own values ---------------------


def test_rows_with_zero_records_keep_their_own_labels():
    df = pd.DataFrame({"age": [30, 40, 50], "sex": ["f", "m", "f"], "n": [1, 0, 2]})
    space = prepare(df, ["age", "sex"], count="n")
    bottom = space.generalize(df, space.bottom)
    assert bottom[["age", "sex"]].values.tolist() == [["30", "f"], ["40", "m"], ["50", "f"]]
    policy = space.bits_of({"age": [1, 0], "sex": [1]})
    assert space.generalize(df, policy)[["age", "sex"]].values.tolist() == [["30", "f"], ["40-50", "m"], ["40-50", "f"]]
    # the count-0 row is still left out of the scores: same as the table without it
    # over the same domains (its values still widen the intervals that hold them)
    without = prepare(df.iloc[[0, 2]], ["age", "sex"], count="n", orders={"age": [30, 40, 50], "sex": ["f", "m"]})
    assert space.evaluate(policy) == without.evaluate(policy)
    # a count-0 row that is the last combination (no wrap-around to another label)
    last = pd.DataFrame({"age": [30, 50, 40], "sex": ["f", "f", "m"], "n": [2, 1, 0]})
    space = prepare(last, ["age", "sex"], count="n")
    assert space.generalize(last, space.bottom)["sex"].tolist() == ["f", "f", "m"]


def _reference_labels(space, frame: pd.DataFrame, bits: np.ndarray) -> dict[str, list[str]]:
    """Per row and attribute, the label of the interval holding the row's value,
    found by walking the attribute's bits up to the value's domain position."""
    intervals = space.intervals(bits)
    out = {}
    for a, attribute in enumerate(space.attributes):
        domain = list(space.domains[a])
        own_bits = bits[space.offsets[a] : space.offsets[a] + len(domain) - 1]
        labels = []
        for value in frame[attribute]:
            position = domain.index("missing" if pd.isna(value) else value)
            labels.append(intervals[attribute][int(sum(own_bits[:position]))])
        out[attribute] = labels
    return out


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(20, 26),
            st.sampled_from(["f", "m", None]),
            st.sampled_from(["A", "B", "C"]),
            st.integers(0, 3),
        ),
        min_size=1,
        max_size=25,
    ),
    st.integers(0, 10_000),
)
def test_generalize_matches_a_direct_per_row_interval_mapping(rows, seed):
    frame = pd.DataFrame(rows, columns=["age", "sex", "race", "n"])
    frame["sex"] = frame["sex"].astype("string")
    if frame["n"].sum() == 0:
        frame.loc[0, "n"] = 1
    space = prepare(frame, ["age", "sex", "race"], count="n")
    bits = np.random.default_rng(seed).random(space.n_bits) < 0.5
    generalized = space.generalize(frame, bits)
    expected = _reference_labels(space, frame, bits)
    for attribute in space.attributes:
        assert generalized[attribute].tolist() == expected[attribute]
    assert generalized["n"].tolist() == frame["n"].tolist()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 300), min_size=1, max_size=4), st.integers(1, 60), st.integers(0, 10_000))
def test_cell_keys_partition_rows_like_the_kernel(cardinalities, n_rows, seed):
    from anonlib.core.equivalence import combine
    from anonlib.transformations.frontier.space import _cell_keys

    rng = np.random.default_rng(seed)
    columns = [rng.integers(0, card, n_rows) for card in cardinalities]
    ids, n_ids = combine(columns, cardinalities)
    for ordered in (True, False):  # unordered: any numbering of the cells (evaluate only counts per row)
        keys, space = _cell_keys(columns, cardinalities, ordered)
        assert keys.min() >= 0 and keys.max() < space
        assert pd.factorize(keys)[0].tolist() == pd.factorize(ids)[0].tolist()
        sizes = np.bincount(keys, minlength=space)
        assert sorted(sizes[sizes > 0].tolist()) == sorted(np.bincount(ids, minlength=n_ids).tolist())


@pytest.mark.parametrize("seed", [0, 1])
def test_policies_score_the_same_whichever_way_their_cells_are_numbered(seed):
    """evaluate numbers a large key space's cells in order of appearance (no sort): the risk and
    loss of each policy are the same floats as with the cells in key order."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({f"q{j}": rng.integers(0, 40, 3000) for j in range(5)})
    space = prepare(frame, list(frame.columns))
    for _ in range(20):
        bits = rng.random(space.n_bits) < rng.random()
        cells, n_cells, width_term = space._cells(bits, ordered=True)
        n_data = space._weights.shape[0]
        row_sizes = np.bincount(cells[:n_data], weights=space._weights, minlength=n_cells)[cells[:n_data]]
        loss = space._entropy_term - float((space._weights * np.log(row_sizes)).sum()) / space.n_records + width_term
        risk = round(float((space._weights / row_sizes).sum())) / space._risk_denominator
        assert space.evaluate(bits) == (min(risk, 1.0), max(loss, 0.0))


def test_a_search_is_estimated_before_it_starts_and_refused_past_the_limit(monkeypatch):
    """explore checks estimate_explore against the work limit first: the estimate grows with the
    budget and the bits, and a search past the limit is one sentence saying how to narrow."""
    from anonlib.core import budget
    from anonlib.core.errors import ProblemTooLargeError
    from anonlib.transformations.frontier import estimate_explore

    rng = np.random.default_rng(3)
    df = pd.DataFrame({"age": rng.integers(18, 90, 500), "weight": rng.integers(40_000, 60_000, 500)})
    small, wide = prepare(df, ["age"]), prepare(df, ["age", "weight"])
    assert estimate_explore(small, "shs", 2000).seconds > estimate_explore(small, "shs", 1000).seconds
    assert estimate_explore(wide, "shs", 1000).seconds > estimate_explore(small, "shs", 1000).seconds
    assert estimate_explore(wide, "shs", 1000).peak_bytes >= 2 * 1000 * wide.n_bits
    limit = estimate_explore(wide, "shs", 1000).seconds / 2
    monkeypatch.setattr(
        budget.check_work, "__kwdefaults__", dict(budget.check_work.__kwdefaults__) | {"max_seconds": limit}
    )
    with pytest.raises(ProblemTooLargeError, match="Evaluating 1,000 policies .* lower the budget"):
        explore(wide, "shs", 1000, seed=1)
    assert explore(wide, "shs", 400, seed=1).n_evaluated == 400  # within the limit: runs


@pytest.mark.parametrize("method", ["shs", "rcs"])
def test_a_budget_covering_the_lattice_evaluates_it_whole(method):
    """A heuristic asked for at least every policy evaluates the lattice in order (the exact
    frontier) instead of drawing until the last policies turn up by chance."""
    df = pd.DataFrame({"age": [20, 30, 30, 40, 50, 60], "sex": list("fmfmff")})
    space = prepare(df, ["age", "sex"])
    found = explore(space, method, 10 * space.n_policies, seed=1)
    exact = explore(space, "exhaustive")
    assert found.n_evaluated == space.n_policies
    assert [(e.risk, e.loss) for e in found.frontier] == [(e.risk, e.loss) for e in exact.frontier]


def _old_policy_apply(step, frame: pd.DataFrame) -> pd.DataFrame:
    """PolicyStep.apply as it was: every interval's range read per call, the strings built by pandas."""
    from anonlib.core.equivalence import encode_column
    from anonlib.core.hierarchy import value_key
    from anonlib.workflow.steps import AttributeIntervals

    out = frame.copy(deep=False)
    for intervals in step.attributes:
        codes, labels = encode_column(frame[intervals.attribute])
        where = {v: i for i, g in enumerate(intervals.groups) for v in g}
        ranges = [AttributeIntervals._ranges([g])[0] for g in intervals.groups] if intervals.numeric else []
        names = []
        for key in (value_key(v) for v in labels):
            if key == "missing":
                names.append(None)
                continue
            i = where.get(key)
            if i is None and intervals.numeric:
                number = pd.to_numeric(key, errors="coerce")
                i = next((j for j, (lo, hi) in enumerate(ranges) if lo <= number <= hi), None)
            names.append(None if i is None else intervals.labels[i])
        out[intervals.attribute] = pd.array(np.asarray(names, dtype=object)[codes], dtype="string")
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("person", [False, True])
def test_frontier_checks_on_distinct_rows_equal_each_policy_applied_and_checked(seed, person):
    """WorkingCopy.checks_after (the page's "meets the target", on distinct rows with the person as a code,
    the check encoding the table once) gives the check of each policy applied to the whole table, and
    PolicyStep.apply gives the table the step gave before (strings gathered by Arrow, ranges read once)."""
    from anonlib.core.dataset import Dataset
    from anonlib.measures.models import ModelRequirement
    from anonlib.measures.target import ReleaseTarget
    from anonlib.workflow import PolicyStep, WorkingCopy

    rng = np.random.default_rng(seed)
    n = 600
    frame = pd.DataFrame(
        {
            "age": rng.integers(20, 40, n),
            "sex": pd.array(rng.choice(["f", "m"], n), dtype="string"),
            "zip": pd.array(rng.choice(["37010", "37011", "37012", "37013", None], n), dtype="string"),
            "dx": pd.array(rng.choice(["a", "b", "c"], n), dtype="string"),
        }
    )
    roles = {"age": "quasi-identifier", "sex": "quasi-identifier", "zip": "quasi-identifier", "dx": "sensitive"}
    if person:
        frame["pid"] = pd.array([f"p{i}" for i in rng.integers(0, n // 3, n)], dtype="string")
        roles["pid"] = "person"
    ds = Dataset.from_frame("d", frame, roles)
    space = prepare(ds.analysis_frame(["age", "sex", "zip"])[0], ["age", "sex", "zip"])
    result = explore(space, "rcs", 60, seed=seed)
    steps = tuple(PolicyStep.from_space(space, e.bits) for e in result.frontier)
    assert len(steps) > 3
    as_categories = ds.frame.assign(sex=pd.Categorical(ds.frame["sex"]), zip=pd.Categorical(ds.frame["zip"]))
    for step in steps:
        new, old = step.apply(ds.frame), _old_policy_apply(step, ds.frame)
        pd.testing.assert_frame_equal(new, old)
        counted = step.apply_counted(as_categories)  # categories relabelled: the same values, still categories
        for column in ("age", "sex", "zip"):
            assert counted[column].astype(object).where(counted[column].notna(), None).tolist() == (
                new[column].astype(object).where(new[column].notna(), None).tolist()
            )
        assert all(isinstance(counted[c].dtype, pd.CategoricalDtype) for c in ("sex", "zip"))
    for target in (
        ReleaseTarget(k=3, max_suppressed=0.1),
        ReleaseTarget(k=5, requirements=(ModelRequirement("distinct_l", "dx", 2),), max_suppressed=0.3),
    ):
        copy = WorkingCopy.start(ds, target)
        reported = []
        checks = copy.checks_after(steps, progress=lambda done, total, seen=reported: seen.append((done, total)))
        assert checks == tuple(copy.apply(step, "check").check for step in steps)
        assert reported == [(i, len(steps)) for i in range(1, len(steps) + 1)]
        assert any(c.failing_classes for c in checks) and any(c.examples for c in checks)
