"""Privacy models (anonlib.measures.models): equal to pycanon on the bundled data, the papers' worked
examples, the definitions on random tables, properties, and acceptance against a slow reference."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pycanon.anonymity as pycanon  # noqa: E402  (test-only peer, requirements-nodeps.txt)
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonlib.core.errors import (
    AnonlibError,
    ColumnError,
    EmptySelectionError,
    HierarchyError,
    ParameterError,
    PopulationError,
)
from anonlib.core.samples import load_sample
from anonlib.measures.models import (
    ModelRequirement,
    SensitiveCounts,
    acceptance,
    alpha,
    beta_likeness,
    class_alpha,
    class_beta,
    class_delta,
    class_entropy,
    class_passes,
    class_recursive_c,
    class_t,
    delta_disclosure,
    delta_presence,
    entropy_l_diversity,
    hierarchy_levels,
    k_map,
    l_diversity,
    model_values,
    recursive_c,
    requirements_monotone,
    sensitive_counts,
    t_closeness,
    worst,
)

# --------------------------------------------------------------------------- pycanon on the bundled data

CASES = [
    ("adult", ["sex", "race"], "income"),
    ("adult", ["sex", "race"], "education"),
    ("adult", ["race", "marital-status"], "occupation"),
    ("adult", ["sex", "race"], "education-num"),  # numeric sensitive: ordered distance
    ("heart_cleveland", ["sex", "fbs"], "num"),
    ("heart_hungarian", ["sex", "fbs"], "num"),
    ("heart_va", ["sex", "fbs"], "num"),
    ("heart_switzerland", ["sex"], "num"),
    ("cervical_cancer", ["Smokes", "Num of pregnancies"], "Biopsy"),
    ("cervical_cancer", ["Smokes"], "Num of pregnancies"),
]


def _complete(key: str, qis: list[str], sensitive: str) -> pd.DataFrame:
    frame = load_sample(key).frame[qis + [sensitive]].dropna().reset_index(drop=True)
    assert len(frame) > 50
    return frame


@pytest.mark.parametrize("key, qis, sensitive", CASES)
def test_equal_to_pycanon_on_the_bundled_data(key, qis, sensitive) -> None:
    df = _complete(key, qis, sensitive)
    assert alpha(df, qis, sensitive) == pycanon.alpha_k_anonymity(df, qis, [sensitive])[0]
    assert l_diversity(df, qis, sensitive) == pycanon.l_diversity(df, qis, [sensitive])
    assert int(entropy_l_diversity(df, qis, sensitive)) == pycanon.entropy_l_diversity(df, qis, [sensitive])
    assert t_closeness(df, qis, sensitive) == pytest.approx(
        pycanon.t_closeness(df, qis, [sensitive]), rel=1e-12, abs=1e-14
    )
    assert delta_disclosure(df, qis, sensitive) == pycanon.delta_disclosure(df, qis, [sensitive])
    assert beta_likeness(df, qis, sensitive) == pytest.approx(
        pycanon.basic_beta_likeness(df, qis, [sensitive]), rel=1e-12
    )


def test_pycanon_cases_are_not_trivial() -> None:
    """The comparison would prove little on tables where every class is a single record."""
    values = [model_values(_complete(*case), case[1], case[2]) for case in CASES]
    assert sum(v.alpha < 1 for v in values) >= 6
    assert sum(v.distinct_l > 1 for v in values) >= 6
    assert all(0 < v.t < 1 for v in values if v.t is not None)


def test_recursive_c_deviates_from_pycanon_which_sorts_increasing() -> None:
    """pycanon divides the *smallest* count by the sum from the l-th smallest on, with the
    table's own l; Machanavajjhala et al. (Def. 4.2) sort decreasing: r1 is the most frequent."""
    df = pd.DataFrame({"zip": [1] * 10, "dx": list("aaaaabbbcc")})  # counts 5, 3, 2
    assert recursive_c(df, ["zip"], "dx", 3) == 5 / 2  # r1 / r3
    assert recursive_c(df, ["zip"], "dx", 2) == 5 / (3 + 2)
    c, l = pycanon.recursive_c_l_diversity(df, ["zip"], ["dx"])
    assert l == 3 and c == math.floor(2 / 5 + 1)  # smallest count over the largest one, plus one


# --------------------------------------------------------------------------- the papers' examples

# Li, Li & Venkatasubramanian (2007), Table 4: the 3-diverse table of salaries (thousands)
LI_TABLE4 = pd.DataFrame(
    {
        "zip": ["476**"] * 3 + ["4790*"] * 3 + ["476**"] * 3,
        "age": ["2*"] * 3 + [">=40"] * 3 + ["3*"] * 3,
        "salary": [3, 4, 5, 6, 11, 8, 7, 9, 10],
    }
)


def test_li_salary_example_ordered_distance() -> None:
    """Section 4.2: P uniform on {3K..11K}; Q1 = {3K, 4K, 5K} is 0.375 away and Q2 = {6K, 8K, 11K}
    0.167; the third class {7K, 9K, 10K} is 17/72 away (cumulative differences 1,2,3,4,2,3,1,1,0 ninths over 8)."""
    s = sensitive_counts(LI_TABLE4, ["zip", "age"], "salary")
    assert s.numeric
    # classes in the order of their codes: (476**, 2*), (476**, 3*), (4790*, >=40)
    assert class_t(s).tolist() == pytest.approx([0.375, 17 / 72, 1 / 6], abs=1e-15)
    assert t_closeness(LI_TABLE4, ["zip", "age"], "salary") == 0.375


def _disease_hierarchy() -> pd.DataFrame:
    """Li et al.'s Figure: respiratory and digestive diseases, three levels above the leaves."""
    tree = {
        "respiratory infection": ("respiratory", ["flu", "pneumonia", "bronchitis"]),
        "vascular lung disease": ("respiratory", ["pulmonary edema", "pulmonary embolism"]),
        "stomach disease": ("digestive", ["gastric ulcer", "gastritis", "stomach cancer"]),
        "colon disease": ("digestive", ["colitis", "colon cancer"]),
    }
    return pd.DataFrame([[leaf, middle, top, "*"] for middle, (top, leaves) in tree.items() for leaf in leaves])


def _ground_distance(h: pd.DataFrame) -> dict[tuple[str, str], float]:
    rows = {r[0]: list(r) for r in h.astype(str).values.tolist()}
    height = h.shape[1] - 1
    return {(a, b): next(j for j in range(height + 1) if rows[a][j] == rows[b][j]) / height for a in rows for b in rows}


def _emd_by_linear_program(p: dict[str, float], q: dict[str, float], distance) -> float:
    from scipy.optimize import linprog

    values = sorted(set(p) | set(q))
    m = len(values)
    cost = np.array([[distance[(a, b)] for b in values] for a in values]).ravel()
    rows, rhs = [], []
    for i, v in enumerate(values):
        out = np.zeros((m, m))
        out[i, :] = 1
        rows.append(out.ravel())
        rhs.append(p.get(v, 0.0))
        into = np.zeros((m, m))
        into[:, i] = 1
        rows.append(into.ravel())
        rhs.append(q.get(v, 0.0))
    return linprog(cost, A_eq=np.array(rows), b_eq=np.array(rhs), bounds=(0, None), method="highs").fun


def test_li_disease_hierarchical_distance_equals_the_earth_movers_linear_program() -> None:
    """Table 4's diseases: the class {gastric ulcer, gastritis, stomach cancer} must move 4/9 of
    its mass across the root (distance 1) and nothing else: 4/9."""
    diseases = [
        "gastric ulcer",
        "gastritis",
        "stomach cancer",
        "gastritis",
        "flu",
        "bronchitis",
        "bronchitis",
        "pneumonia",
        "stomach cancer",
    ]
    df = LI_TABLE4.assign(disease=diseases)
    h = _disease_hierarchy()
    assert t_closeness(df, ["zip", "age"], "disease", hierarchy=h) == pytest.approx(4 / 9, abs=1e-15)
    s = sensitive_counts(df, ["zip", "age"], "disease")
    levels = hierarchy_levels(h, s.labels, "disease")
    assert levels.height == 3
    distance = _ground_distance(h)
    p = df["disease"].value_counts(normalize=True).to_dict()
    for (_, group), ours in zip(df.groupby(["zip", "age"], sort=True), class_t(s, hierarchy=levels)):
        q = group["disease"].value_counts(normalize=True).to_dict()
        assert ours == pytest.approx(_emd_by_linear_program(p, q, distance), abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 9)), min_size=2, max_size=40))
def test_hierarchical_distance_equals_the_linear_program_on_random_tables(rows) -> None:
    leaves = _disease_hierarchy()[0].tolist()
    df = pd.DataFrame({"g": [g for g, _ in rows], "d": [leaves[i] for _, i in rows]})
    if df["d"].nunique() < 2:
        return
    h = _disease_hierarchy()
    s = sensitive_counts(df, ["g"], "d")
    ours = class_t(s, hierarchy=hierarchy_levels(h, s.labels))
    p = df["d"].value_counts(normalize=True).to_dict()
    distance = _ground_distance(h)
    for (_, group), value in zip(df.groupby("g", sort=True), ours):
        assert value == pytest.approx(
            _emd_by_linear_program(p, group["d"].value_counts(normalize=True).to_dict(), distance), abs=1e-9
        )


def test_machanavajjhala_three_diverse_table() -> None:
    """Machanavajjhala et al.'s 3-diverse inpatient table: three classes of four, each with two
    records of one condition and one each of two others. Distinct l = 3; entropy l =
    exp(-(½ ln ½ + 2 · ¼ ln ¼)) = 2√2; recursive c: 2 / (1 + 1) = 1 for l = 2, 2 / 1 = 2 for l = 3."""
    conditions = [
        "Heart Disease",
        "Viral Infection",
        "Cancer",
        "Cancer",
        "Cancer",
        "Heart Disease",
        "Viral Infection",
        "Viral Infection",
        "Heart Disease",
        "Viral Infection",
        "Cancer",
        "Cancer",
    ]
    df = pd.DataFrame(
        {
            "zip": ["1305*"] * 4 + ["1485*"] * 4 + ["1306*"] * 4,
            "age": ["<=40"] * 4 + [">40"] * 4 + ["<=40"] * 4,
            "condition": conditions,
        }
    )
    qis = ["zip", "age"]
    assert l_diversity(df, qis, "condition") == 3
    assert entropy_l_diversity(df, qis, "condition") == pytest.approx(2 * math.sqrt(2), rel=1e-14)
    assert recursive_c(df, qis, "condition", 2) == 1.0 and recursive_c(df, qis, "condition", 3) == 2.0
    assert alpha(df, qis, "condition") == 0.5
    # (c, l) holds for every c above the value and not at it (r1 < c (...) is strict)
    s = sensitive_counts(df, qis, "condition")
    assert class_passes(ModelRequirement("recursive_cl", "condition", 3, c=2.0001), s).all()
    assert not class_passes(ModelRequirement("recursive_cl", "condition", 3, c=2.0), s).any()
    assert class_passes(ModelRequirement("entropy_l", "condition", 2 * math.sqrt(2)), s).all()


# --------------------------------------------------------------------------- the definitions on random tables

tables = st.lists(
    st.tuples(st.integers(0, 3), st.integers(0, 2), st.integers(0, 5), st.integers(1, 3)), min_size=1, max_size=60
).map(lambda rows: pd.DataFrame(rows, columns=["a", "b", "s", "n"]))


def _reference(df: pd.DataFrame, qis, sensitive, count=None):
    """Each model by its definition, one class at a time, records expanded."""
    if count is not None:
        df = df.loc[df.index.repeat(df[count])].drop(columns=count)
    values = sorted(df[sensitive].unique())
    p = {v: (df[sensitive] == v).mean() for v in values}
    out = []
    for _, g in df.groupby(qis, sort=True):
        counts = g[sensitive].value_counts()
        q = {v: counts.get(v, 0) / len(g) for v in values}
        r = sorted(counts.tolist(), reverse=True)
        out.append(
            {
                "alpha": max(q.values()),
                "distinct": len(counts),
                "entropy": -sum(x * math.log(x) for x in q.values() if x > 0),
                "c2": r[0] / sum(r[1:]) if len(r) >= 2 else math.inf,
                "t_ordered": sum(abs(sum(q[v] - p[v] for v in values[: i + 1])) for i in range(len(values)))
                / max(len(values) - 1, 1),
                "t_equal": sum(abs(q[v] - p[v]) for v in values) / 2,
                "delta": max(abs(math.log(q[v] / p[v])) for v in values if q[v] > 0),
                "beta": max([(q[v] - p[v]) / p[v] for v in values if q[v] > p[v]], default=0.0),
            }
        )
    return out


@settings(max_examples=60, deadline=None)
@given(tables, st.booleans())
def test_every_model_per_class_matches_its_definition(df, with_count) -> None:
    count = "n" if with_count else None
    s = sensitive_counts(df, ["a", "b"], "s", count=count)
    ref = _reference(df, ["a", "b"], "s", count)
    assert class_alpha(s).tolist() == pytest.approx([r["alpha"] for r in ref], rel=1e-12)
    assert s.class_sizes.size == len(ref)
    np.testing.assert_allclose(np.exp(class_entropy(s)), [math.exp(r["entropy"]) for r in ref], rtol=1e-12)
    assert class_recursive_c(s, 2).tolist() == pytest.approx([r["c2"] for r in ref], rel=1e-12)
    assert class_delta(s).tolist() == pytest.approx([r["delta"] for r in ref], rel=1e-12, abs=1e-12)
    assert class_beta(s).tolist() == pytest.approx([r["beta"] for r in ref], rel=1e-12, abs=1e-12)
    if s.n_values >= 2:
        assert class_t(s, "ordered").tolist() == pytest.approx([r["t_ordered"] for r in ref], abs=1e-12)
        assert class_t(s, "equal").tolist() == pytest.approx([r["t_equal"] for r in ref], abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(tables)
def test_properties_l_within_distinct_values_and_t_within_0_1(df) -> None:
    v = model_values(df, ["a", "b"], "s")
    distinct = df["s"].nunique()
    assert 1 <= v.distinct_l <= distinct
    assert 1 - 1e-12 <= v.entropy_l <= v.distinct_l + 1e-12
    assert 1 / distinct - 1e-12 <= v.alpha <= 1
    assert v.t is None or 0 <= v.t <= 1
    if distinct >= 2:
        s = sensitive_counts(df, ["a", "b"], "s")
        for distance in ("equal", "ordered"):
            t = class_t(s, distance)
            assert ((t >= 0) & (t <= 1)).all()


@settings(max_examples=40, deadline=None)
@given(tables)
def test_count_column_gives_the_same_values_as_expanded_rows(df) -> None:
    expanded = df.loc[df.index.repeat(df["n"])].drop(columns="n").reset_index(drop=True)
    a = model_values(df, ["a", "b"], "s", count="n")
    b = model_values(expanded, ["a", "b"], "s")
    assert a == b


@settings(max_examples=40, deadline=None)
@given(tables, st.randoms(use_true_random=False))
def test_summaries_from_any_group_by_give_bit_identical_values(df, rnd) -> None:
    """The engine's group-by returns cells in any order with its own class labels."""
    s = sensitive_counts(df, ["a", "b"], "s", count="n")
    order = list(range(s.cell_count.size))
    rnd.shuffle(order)
    relabel = {c: rnd.randrange(10**9) * 1000 + c for c in range(s.n_classes)}
    relabeled = [relabel[c] for c in s.cell_class[order]]
    t = SensitiveCounts.from_cells(relabeled, s.cell_value[order], s.cell_count[order], s.labels, numeric=s.numeric)
    for f in (class_alpha, class_entropy, class_delta, class_beta, lambda x: class_recursive_c(x, 2)):
        assert worst(f(t), t) == worst(f(s), s)
    if s.n_values >= 2:
        for distance in ("equal", "ordered"):
            assert worst(class_t(t, distance), t) == worst(class_t(s, distance), s)


# --------------------------------------------------------------------------- acceptance against a slow reference


def _passes(requirement: ModelRequirement, r: dict) -> bool:
    m, v = requirement.model, requirement.value
    return {
        "alpha": lambda: r["alpha"] <= v + 1e-12,
        "distinct_l": lambda: r["distinct"] >= v,
        "entropy_l": lambda: r["entropy"] >= math.log(v) - 1e-12,
        "recursive_cl": lambda: r["r1"] < requirement.c * r["tail"],
        "t_closeness": lambda: r["t"] <= v + 1e-12,
        "delta_disclosure": lambda: r["delta"] < v,
        "beta_likeness": lambda: r["beta"] <= v + 1e-12,
        "enhanced_beta_likeness": lambda: r["enhanced_ok"],
    }[m]()


def _slow_acceptance(df, qis, k, requirements, limit):
    values = sorted(df["s"].unique())
    p = {x: (df["s"] == x).mean() for x in values}
    kept = np.ones(len(df), dtype=bool)
    failing = {f"k = {k}": 0} if k > 1 else {}
    failing.update({r.describe(): 0 for r in requirements})
    for _, g in df.groupby(qis, sort=True):
        q = {x: (g["s"] == x).mean() for x in values}
        counts = sorted(g["s"].value_counts().tolist(), reverse=True)
        bad = len(g) < k
        if k > 1 and bad:
            failing[f"k = {k}"] += len(g)
        for req in requirements:
            l = int(req.value) if req.model == "recursive_cl" else 0
            r = {
                "alpha": max(q.values()),
                "distinct": len(counts),
                "entropy": -sum(x * math.log(x) for x in q.values() if x > 0),
                "r1": counts[0],
                "tail": sum(counts[l - 1 :]) if l else 0,
                "t": sum(abs(q[x] - p[x]) for x in values) / 2,
                "delta": max(abs(math.log(q[x] / p[x])) for x in values if q[x] > 0),
                "beta": max([(q[x] - p[x]) / p[x] for x in values if q[x] > p[x]], default=0.0),
                "enhanced_ok": all(
                    (q[x] - p[x]) / p[x] <= min(req.value, -math.log(p[x])) + 1e-12 for x in values if q[x] > p[x]
                ),
            }
            if not _passes(req, r):
                failing[req.describe()] += len(g)
                bad = True
        if bad:
            kept[g.index] = False
    suppressed = int((~kept).sum())
    return suppressed <= limit * len(df) + 1e-9, suppressed, failing, kept


requirement_lists = st.lists(
    st.sampled_from(
        [
            ModelRequirement("alpha", "s", 0.6),
            ModelRequirement("distinct_l", "s", 2),
            ModelRequirement("entropy_l", "s", 1.8),
            ModelRequirement("recursive_cl", "s", 2, c=1.5),
            ModelRequirement("t_closeness", "s", 0.3),
            ModelRequirement("delta_disclosure", "s", 1.0),
            ModelRequirement("beta_likeness", "s", 1.0),
            ModelRequirement("enhanced_beta_likeness", "s", 0.8),
        ]
    ),
    max_size=3,
    unique=True,
)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2), st.sampled_from("xyz")), min_size=1, max_size=50),
    st.integers(1, 4),
    requirement_lists,
    st.sampled_from([0.0, 0.1, 0.3, 1.0]),
)
def test_acceptance_equals_a_slow_obviously_correct_reference(rows, k, requirements, limit) -> None:
    df = pd.DataFrame(rows, columns=["a", "b", "s"])
    if df["s"].nunique() < 2 and any(r.model == "t_closeness" for r in requirements):
        with pytest.raises(ParameterError, match="at least two different values"):
            acceptance(df, ["a", "b"], k=k, requirements=requirements, max_suppressed=limit)
        return
    result = acceptance(df, ["a", "b"], k=k, requirements=requirements, max_suppressed=limit)
    acceptable, suppressed, failing, kept = _slow_acceptance(df, ["a", "b"], k, requirements, limit)
    assert result.acceptable == acceptable
    assert result.suppressed_records == suppressed and result.records == len(df)
    assert dict(result.failing) == failing
    assert result.kept.tolist() == kept.tolist()


def test_acceptance_honours_the_count_column() -> None:
    df = pd.DataFrame({"zip": [1, 1, 2], "dx": ["a", "b", "a"], "n": [3, 2, 4]})
    a = acceptance(
        df, ["zip"], k=5, requirements=[ModelRequirement("distinct_l", "dx", 2)], count="n", max_suppressed=0.5
    )
    assert (a.records, a.suppressed_records, a.acceptable) == (9, 4, True)
    assert a.failing == (("k = 5", 4), ("distinct 2-diversity of dx", 4))


def test_a_class_failing_several_criteria_is_suppressed_once() -> None:
    df = pd.DataFrame({"zip": [1, 2, 2, 2], "dx": ["a", "a", "b", "c"]})
    a = acceptance(df, ["zip"], k=2, requirements=[ModelRequirement("distinct_l", "dx", 2)])
    assert a.suppressed_records == 1 and not a.acceptable and a.suppressed_share == 0.25


def test_missing_values_are_a_value_of_their_own() -> None:
    df = pd.DataFrame({"zip": [1, 1, None, None], "dx": ["a", None, "a", "b"]})
    s = sensitive_counts(df, ["zip"], "dx")
    assert s.labels.tolist() == ["a", "b", "missing"] and s.class_sizes.tolist() == [2, 2]
    assert l_diversity(df, ["zip"], "dx") == 2


# --------------------------------------------------------------------------- requirements


def test_monotone_per_model() -> None:
    monotone = {
        m: ModelRequirement(
            m, "s", 0.5 if m in ("alpha", "t_closeness") else 2, c=1.0 if m == "recursive_cl" else None
        ).monotone
        for m in (
            "alpha",
            "distinct_l",
            "entropy_l",
            "recursive_cl",
            "t_closeness",
            "delta_disclosure",
            "beta_likeness",
            "enhanced_beta_likeness",
        )
    }
    assert [m for m, ok in monotone.items() if not ok] == ["delta_disclosure"]
    assert requirements_monotone([ModelRequirement("distinct_l", "s", 2)], 0.1)
    assert not requirements_monotone([ModelRequirement("t_closeness", "s", 0.2)], 0.1)
    assert requirements_monotone([ModelRequirement("t_closeness", "s", 0.2)], 0.0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.sampled_from("xyz")), min_size=1, max_size=40), requirement_lists)
def test_monotone_requirements_stay_met_when_classes_merge(rows, requirements) -> None:
    """The claim behind ModelRequirement.monotone: if every class meets it, so do merged classes."""
    df = pd.DataFrame(rows, columns=["a", "s"])
    for r in requirements:
        if r.model == "t_closeness" and df["s"].nunique() < 2:
            continue
        if r.monotone and acceptance(df, ["a"], requirements=[r]).acceptable:
            assert acceptance(df.assign(a=df["a"] // 2), ["a"], requirements=[r]).acceptable


def test_delta_disclosure_is_not_monotone() -> None:
    """Every class meets δ = 1, but merging the all-x class with a class holding a few z makes z
    rare in the union: abs(ln((9/140) / (41/204))) = 1.14 > 1."""
    df = pd.DataFrame(
        {"a": [0] * 120 + [1] * 20 + [2] * 64, "s": ["x"] * 120 + ["z"] * 9 + ["x"] * 11 + ["z"] * 32 + ["x"] * 32}
    )
    req = ModelRequirement("delta_disclosure", "s", 1.0)
    assert acceptance(df, ["a"], requirements=[req]).acceptable
    merged = df.assign(a=df["a"].replace({1: 0}))
    assert not acceptance(merged, ["a"], requirements=[req]).acceptable
    assert delta_disclosure(merged, ["a"], "s") == pytest.approx(abs(math.log((9 / 140) / (41 / 204))), rel=1e-12)


def test_requirement_json_round_trip_with_a_hierarchy() -> None:
    h = _disease_hierarchy()
    r = ModelRequirement("t_closeness", "disease", 0.2, hierarchy=h)
    back = ModelRequirement.from_json(r.to_json())
    assert back == r and back.hierarchy.values.tolist() == h.values.tolist()
    assert r.describe() == "0.2-closeness of disease (hierarchical distance)"
    assert ModelRequirement("recursive_cl", "dx", 3, c=2).describe() == "recursive (2, 3)-diversity of dx"
    assert ModelRequirement("alpha", "dx", 0.5).describe() == "(α = 0.5)-anonymity of dx"


@pytest.mark.parametrize(
    "args, phrase",
    [
        (("ldiv", "dx", 2), "'ldiv' is not a privacy model"),
        (("alpha", "dx", 1.5), "α must be above 0 and at most 1; got 1.5"),
        (("distinct_l", "dx", 2.5), "l of distinct l-diversity must be a whole number"),
        (("t_closeness", "dx", -0.1), "t must be between 0 and 1"),
        (("recursive_cl", "dx", 2), "needs a constant c above 0"),
        (("delta_disclosure", "dx", "x"), "must be a number; got 'x'"),
        (("distinct_l", "", 2), "Name the sensitive attribute"),
    ],
)
def test_impossible_requirements_are_one_sentence(args, phrase) -> None:
    with pytest.raises(ParameterError, match=phrase.replace("(", r"\(").replace(")", r"\)")):
        ModelRequirement(*args)


# --------------------------------------------------------------------------- bad input


DF = pd.DataFrame({"zip": [1, 1, 2, 2], "dx": ["a", "b", "a", "a"], "one": ["x"] * 4})


@pytest.mark.parametrize(
    "call, error, phrase",
    [
        (
            lambda: alpha(DF, ["zip", "dx"], "dx"),
            ParameterError,
            "dx is both a quasi-identifier and a sensitive attribute",
        ),
        (
            lambda: acceptance(DF, ["zip", "dx"], requirements=[ModelRequirement("distinct_l", "dx", 2)]),
            ParameterError,
            "both a quasi-identifier and a sensitive attribute",
        ),
        (
            lambda: t_closeness(DF, ["zip"], "one"),
            ParameterError,
            "at least two different values; this one has only one",
        ),
        (
            lambda: t_closeness(DF, ["zip"], "dx", hierarchy=pd.DataFrame([["a", "*"]])),
            HierarchyError,
            "does not cover the value 'b'",
        ),
        (lambda: l_diversity(DF, ["zip"], "nope"), ColumnError, "do not exist in the data: nope"),
        (lambda: l_diversity(DF, [], "dx"), EmptySelectionError, "at least one quasi-identifier"),
        (lambda: alpha(DF.iloc[:0], ["zip"], "dx"), EmptySelectionError, "no records"),
        (lambda: acceptance(DF, ["zip"], max_suppressed=1.5), ParameterError, "between 0 and 1; got 1.5"),
        (lambda: acceptance(DF, ["zip"], k=0), ParameterError, "k must be a whole number"),
        (
            lambda: k_map(DF, ["zip"], pd.DataFrame({"zap": [1]})),
            PopulationError,
            "lacks the quasi-identifier columns zip",
        ),
        (
            lambda: k_map(DF, ["zip"], pd.DataFrame({"zip": [1]})),
            PopulationError,
            "zip=2 have no match in the population",
        ),
        (
            lambda: k_map(DF, ["zip"], pd.DataFrame({"zip": [1, 2], "n": [1, 5]})),
            PopulationError,
            "has 1 person with zip=1 but the data has 2 such records",
        ),
    ],
)
def test_bad_input_is_one_typed_sentence(call, error, phrase) -> None:
    with pytest.raises(error) as raised:
        call()
    message = str(raised.value)
    assert phrase in message and "\n" not in message and isinstance(raised.value, AnonlibError)


# --------------------------------------------------------------------------- population: k-map and δ-presence


def test_k_map_and_delta_presence_with_a_population_of_counts() -> None:
    data = pd.DataFrame({"zip": ["37010", "37010", "37012"], "sex": ["f", "f", "m"]})
    population = pd.DataFrame({"zip": [37010, 37012, 37013], "sex": ["f", "m", "f"], "people": [20, 5, 8]})
    assert k_map(data, ["zip", "sex"], population) == 5  # ZIPs read as numbers still match text
    d = delta_presence(data, ["zip", "sex"], population)
    assert (d.lower, d.upper, d.lower_released) == (0.0, 0.2, 0.1)


def test_k_map_with_one_row_per_person_and_missing_values() -> None:
    data = pd.DataFrame({"age": [30, None]})
    population = pd.DataFrame({"age": [30, 30, None, None, None]})
    assert k_map(data, ["age"], population) == 2


def test_model_table_equals_model_values_and_acceptance_on_adult():
    """The Dataset page's table: each value is model_values', each switched-on model's
    failing records are acceptance's (k = 1), the others are <NA>."""
    from anonlib.measures.models import model_table

    frame = load_sample("adult").frame
    qis = ["age", "sex", "race"]
    required = [
        ModelRequirement("distinct_l", "occupation", 3),
        ModelRequirement("t_closeness", "hours-per-week", 0.2),
        ModelRequirement("recursive_cl", "occupation", 3, c=4),
        ModelRequirement("enhanced_beta_likeness", "income", 1.5),
    ]
    table = model_table(frame, qis, ["occupation", "income"], requirements=required, count=None)
    assert table["sensitive"].unique().tolist() == ["occupation", "income", "hours-per-week"]
    assert len(table) == 3 * 8
    for attribute in ["occupation", "income", "hours-per-week"]:
        l = 3 if attribute == "occupation" else 2
        v = model_values(frame, qis, attribute, recursive_l=l)
        rows = table[table["sensitive"] == attribute].set_index("model")["value"]
        expected = [v.alpha, v.distinct_l, v.entropy_l, v.recursive_c, v.t, v.delta, v.beta, v.enhanced_beta]
        assert rows.tolist() == expected
    verdict = acceptance(frame, qis, requirements=required)
    failing = table.dropna(subset=["failing_records"]).set_index("required")["failing_records"].to_dict()
    assert failing == dict(verdict.failing)
    assert table["failing_records"].isna().sum() == 3 * 8 - len(required)
