"""The private release's comparison with the records (anonlib.workflow.private_release):
the total variation of every one- and two-way marginal against a slow reference, the cells
numbers are counted in, the two baselines of the same run (two halves of the real records,
columns drawn independently) recomputed by hand, the tree trained on the release and tested
on real records, and the checks. None of it needs OpenDP: the comparison takes any table."""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonlib.core.dataset import Dataset, Role
from anonlib.core.errors import SynthesisError
from anonlib.transformations.synthesis import NumberCuts, opendp_version
from anonlib.workflow.classifier import train_and_test
from anonlib.workflow.private_release import (
    ONEWAY_TARGET,
    TWOWAY_TARGET,
    compare_private,
    independent_columns,
    plan_private,
    private_release,
    released_frame,
    several_records_per_person,
    shown_cells,
    total_variations,
)
from tests.panel_shapes import labour


def slow_tvd(a: pd.DataFrame, b: pd.DataFrame, columns) -> float:
    """Half the sum over every combination of values of |share in a - share in b|, with Counters."""
    count_a = Counter(tuple(str(v) for v in row) for row in a[list(columns)].itertuples(index=False))
    count_b = Counter(tuple(str(v) for v in row) for row in b[list(columns)].itertuples(index=False))
    keys = set(count_a) | set(count_b)
    return 0.5 * sum(abs(count_a[k] / len(a) - count_b[k] / len(b)) for k in keys)


def marginals_of(columns):
    return [(c,) for c in columns] + list(itertools.combinations(columns, 2))


# ---------------------------------------------------------------- the distances


cell = st.sampled_from(["x", "y", "z", None])


@settings(max_examples=60, deadline=None)
@given(
    a=st.lists(st.tuples(cell, cell, cell), min_size=1, max_size=30),
    b=st.lists(st.tuples(cell, cell, cell), min_size=1, max_size=30),
)
def test_total_variation_of_every_marginal_matches_a_slow_reference(a, b):
    columns = ["p", "q", "r"]
    fa, fb = pd.DataFrame(a, columns=columns), pd.DataFrame(b, columns=columns)
    sa, sb = shown_cells(fa, columns), shown_cells(fb, columns)
    got = total_variations(sa, sb, marginals_of(columns))
    assert set(got) == set(marginals_of(columns))
    for marginal, value in got.items():
        assert value == pytest.approx(slow_tvd(sa, sb, marginal), abs=1e-12)
        assert 0.0 <= value <= 1.0 + 1e-12  # shares summed in floating point


def test_a_worked_example_of_two_way_total_variation():
    a = pd.DataFrame({"s": ["F", "F", "M", "M"], "y": ["a", "b", "a", "b"]})
    b = pd.DataFrame({"s": ["F", "F", "M", "M"], "y": ["a", "a", "b", "b"]})
    got = total_variations(a, b, [("s",), ("y",), ("s", "y")])
    # same one-way shares; two-way: F-a .25 vs .5, F-b .25 vs 0, M-a .25 vs 0, M-b .25 vs .5 -> half of 1.0
    assert got == {("s",): 0.0, ("y",): 0.0, ("s", "y"): 0.5}


@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.one_of(st.integers(-20, 120), st.none()), min_size=1, max_size=40))
def test_numbers_are_counted_in_the_release_bins(values):
    spec = NumberCuts("age", (30, 50), 17, 90)
    shown = shown_cells(pd.DataFrame({"age": pd.Series(values, dtype="Int64")}), ["age"], [spec])["age"].tolist()
    for value, label in zip(values, shown):
        if value is None:
            assert label == "(blank)"
        else:
            clamped = min(max(value, 17), 90)
            assert label == ("17-30" if clamped <= 30 else "31-50" if clamped <= 50 else "51-90")


# ---------------------------------------------------------------- the baselines


def correlated(n: int = 400, seed: int = 1) -> pd.DataFrame:
    """Two columns that always agree, a third that follows them four times in five."""
    rng = np.random.default_rng(seed)
    a = rng.choice(["u", "v", "w"], n)
    c = np.where(rng.random(n) < 0.8, a, rng.choice(["u", "v", "w"], n))
    return pd.DataFrame({"a": a, "b": a.copy(), "c": c})


def test_independent_columns_keep_each_column_and_lose_the_joint_information():
    real = correlated(4000)
    drawn = independent_columns(real, 4000, seed=5)
    assert drawn.equals(independent_columns(real, 4000, seed=5))  # seeded
    for column in real.columns:
        assert set(drawn[column]) <= set(real[column])
        assert slow_tvd(real, drawn, [column]) < 0.03
    shares = real["a"].value_counts(normalize=True)
    # a and b agree always in the real records, and about sum of p^2 of the time when drawn apart
    assert (drawn["a"] == drawn["b"]).mean() == pytest.approx(float((shares**2).sum()), abs=0.03)


def test_the_baselines_are_the_halves_and_the_independent_draw_of_the_same_run():
    real = correlated(401)
    columns = ["a", "b", "c"]
    synthetic = independent_columns(real, 900, seed=11)
    c = compare_private(real, synthetic, columns, predict="c", seed=7)
    order = np.random.default_rng(7).permutation(len(real))  # the halves, as the module text says
    half_a, half_b = real.iloc[np.sort(order[:200])], real.iloc[np.sort(order[200:])]
    drawn = independent_columns(real, len(real), 8)
    for m in c.marginals:
        assert m.release == pytest.approx(slow_tvd(real, synthetic, m.columns), abs=1e-12)
        assert m.halves == pytest.approx(slow_tvd(half_a, half_b, m.columns), abs=1e-12)
        assert m.independent == pytest.approx(slow_tvd(real, drawn, m.columns), abs=1e-12)
    assert [m.columns for m in c.marginals] == marginals_of(columns)
    assert c.baseline("halves") == (
        max(m.halves for m in c.marginals[:3]),
        pytest.approx(np.mean([m.halves for m in c.marginals[3:]])),
    )
    assert c.real_records == 401 and c.released_records == 900
    # the joint information is gone from the independent draw: a × b far off, each column close
    assert c.worst_pair().columns == ("a", "b") and c.worst_pair().release > 0.4
    assert c.oneway_max < 0.08


def test_a_copy_of_the_records_passes_and_a_table_without_joint_information_fails():
    real = correlated(600)
    same = compare_private(real, real.copy(), ["a", "b", "c"], predict="c")
    assert same.oneway_max == 0.0 and same.twoway_mean == 0.0 and same.passed
    assert same.tree.gap == 0.0
    apart = compare_private(real, independent_columns(real, 600, seed=3), ["a", "b", "c"], predict="c")
    assert not apart.passed
    failed = {check.what for check in apart.checks if not check.passed}
    assert "mean two-way total variation" in failed
    assert any("tree" in w for w in failed)  # trained without the joint information it guesses c badly
    assert apart.tree.gap > 0.15 and apart.tree.released.accuracy == pytest.approx(
        apart.tree.independent.accuracy, abs=0.15
    )
    assert "fails a check" in apart.sentences()[-1]


def test_the_tree_is_trained_on_the_release_and_tested_on_the_real_half_it_never_saw():
    real = correlated(500)
    synthetic = correlated(700, seed=9)
    c = compare_private(real, synthetic, ["a", "b", "c"], predict="c", seed=2)
    order = np.random.default_rng(2).permutation(len(real))
    held_out = real.iloc[np.sort(order[250:])]
    trained = real.iloc[np.sort(order[:250])]
    expect = train_and_test(synthetic, held_out, ["a", "b"], "c", trained_on="release", seed=2)
    assert c.tree.released == expect
    assert c.tree.real == train_and_test(trained, held_out, ["a", "b"], "c", trained_on="real records", seed=2)
    assert c.tree.released.records_tested == 250 and c.tree.released.records_trained == 700
    # given held-out records, every tree is tested on them and the real tree trained on every real record
    test = correlated(100, seed=4)
    d = compare_private(real, synthetic, ["a", "b", "c"], predict="c", test=test)
    assert d.tree.real.records_trained == 500 and d.tree.released.records_tested == 100


def test_the_limits_are_the_targets_or_the_halves_own_distance_when_larger():
    tiny = pd.DataFrame({"a": list("xyzw") * 2, "b": list("pqqp") * 2})  # halves of 4 records differ a lot
    c = compare_private(tiny, tiny.copy(), ["a", "b"], seed=0)
    halves_one, halves_two = c.baseline("halves")
    assert halves_two > TWOWAY_TARGET
    one, two = c.checks
    assert one.limit == max(ONEWAY_TARGET, halves_one) and two.limit == halves_two
    big = correlated(20_000)  # halves of 10,000 records: sampling alone stays under the targets
    d = compare_private(big, big.copy(), ["a", "b", "c"])
    assert (d.checks[0].limit, d.checks[1].limit) == (ONEWAY_TARGET, TWOWAY_TARGET)


def test_refusals_are_one_sentence():
    real = correlated(50)
    with pytest.raises(SynthesisError, match="not in both tables"):
        compare_private(real, real[["a", "b"]], ["a", "b", "c"])
    with pytest.raises(SynthesisError, match="at least four real records"):
        compare_private(real.head(3), real, ["a", "b"])
    bad_pair = compare_private(real, real, ["a", "b"], pair=("a", "a"))
    assert bad_pair.pair is None and "two different columns" in bad_pair.problems[0]


def test_to_json_holds_the_summary_and_plain_values():
    real = correlated(200)
    data = compare_private(real, independent_columns(real, 200, 1), ["a", "b", "c"], predict="c").to_json()
    assert data["passed"] is False and data["tree_gap"] == pytest.approx(
        data["tree"]["real"]["accuracy"] - data["tree"]["released"]["accuracy"]
    )
    assert {"halves", "independent", "oneway_max", "twoway_mean", "marginals", "checks"} <= set(data)
    import json

    json.dumps(data)  # plain JSON


def test_a_count_column_stands_for_its_records():
    rows = pd.DataFrame({"a": ["x", "y"], "b": ["p", "q"], "n": [3, 1]})
    expanded = pd.DataFrame({"a": list("xxxy"), "b": list("pppq")})
    c = compare_private(rows, expanded, ["a", "b"], count="n")
    assert c.real_records == 4 and c.oneway_max == 0.0 and c.twoway_mean == 0.0


# ---------------------------------------------------------------- a release of a dataset: refusals first


def test_a_person_column_released_or_an_identifier_is_refused_before_any_noise():
    frame = pd.DataFrame({"pid": [1, 1, 2, 3], "sex": list("FFMM"), "dx": list("abab")})
    person = Dataset.from_frame(
        "f.csv", frame, {"pid": Role.PERSON, "sex": Role.QUASI_IDENTIFIER, "dx": Role.SENSITIVE}
    )
    with pytest.raises(SynthesisError, match="marks people; it is never released"):
        private_release(person, ["pid", "dx"], epsilon=1.0)
    assert list(released_frame(person, ["sex", "dx"]).columns) == ["pid", "sex", "dx"]  # the person bounds records
    ident = Dataset.from_frame(
        "f.csv", frame, {"pid": Role.IDENTIFIER, "sex": Role.QUASI_IDENTIFIER, "dx": Role.SENSITIVE}
    )
    with pytest.raises(SynthesisError, match="is an identifier"):
        private_release(ident, ["pid", "dx"], epsilon=1.0)


def test_a_number_column_with_cuts_is_shown_in_the_release_bins():
    rng = np.random.default_rng(3)
    real = pd.DataFrame({"age": rng.integers(17, 91, 300), "y": rng.choice(["a", "b"], 300)})
    synthetic = pd.DataFrame({"age": rng.integers(17, 91, 500), "y": rng.choice(["a", "b"], 500)})
    spec = NumberCuts("age", (30, 50), 17, 90)
    c = compare_private(real, synthetic, ["age", "y"], cuts=[spec], pair=("age", "y"))
    counts = {v.value: (v.before, v.after) for v in c.column("age").counts}
    expect = {
        label: (
            int(((real["age"] > lo) & (real["age"] <= hi)).sum()),
            int(((synthetic["age"] > lo) & (synthetic["age"] <= hi)).sum()),
        )
        for label, lo, hi in (("17-30", 0, 30), ("31-50", 30, 50), ("51-90", 50, 90))
    }
    assert counts == expect and [v.value for v in c.column("age").counts] == ["17-30", "31-50", "51-90"]
    assert list(c.pair.frame("before").index) == ["17-30", "31-50", "51-90"]
    assert int(c.pair.frame("after").to_numpy().sum()) == 500


def test_a_cut_column_is_predicted_as_its_bin():
    """The tree could not pass when the predicted column was cut: it predicted raw ages
    (dp.md part 2). A release that keeps every record's bin, with ages drawn anew inside
    it, now predicts the bin as well as the real records do."""
    rng = np.random.default_rng(5)
    sex = rng.choice(["F", "M"], 600)
    age = np.where(sex == "F", rng.integers(17, 31, 600), rng.integers(51, 91, 600))
    real = pd.DataFrame({"sex": sex, "age": age})
    spec = NumberCuts("age", (30, 50), 17, 90)
    redrawn = real.assign(age=spec.draw(spec.bins(real["age"]), np.random.default_rng(1)).astype(int))
    c = compare_private(real, redrawn, ["sex", "age"], cuts=[spec], predict="age")
    assert c.tree is not None and c.tree.released.accuracy == pytest.approx(c.tree.real.accuracy) == 1.0
    assert c.passed


def test_a_file_with_several_records_per_person_is_told_what_epsilon_means():
    frame = pd.DataFrame({"Patient ID": np.repeat(np.arange(50), 5), "dx": ["a", "b", "c", "d", "e"] * 50})
    frame.loc[len(frame)] = [0, "a"]  # patient 0 has 6 records: the most
    warning = several_records_per_person(frame)
    assert warning.startswith("Patient ID looks like a person column (its name reads like an identifier")
    assert "not a person with up to 6 records (about 6ε for them" in warning and warning.count(". ") == 0
    assert "--person Patient ID" in warning
    assert several_records_per_person(frame, skip=["Patient ID"]) is None
    unique = pd.DataFrame({"id": np.arange(50), "dx": ["a"] * 50})
    assert several_records_per_person(unique) is None  # one record per value: nothing to warn of


def test_a_panel_whose_person_column_is_not_named_so_warns_by_structure():
    """The labour panel's shape: ``idcode`` says nothing, a year varies within it."""
    frame = labour()
    most = int(frame["idcode"].value_counts().max())
    warning = several_records_per_person(frame, skip=["age", "race"])
    assert warning == (
        f"idcode looks like a person column (year varies within its values): this release is per record, so ε "
        f"protects one record, not a person with up to {most:,} records (about {most:,}ε for them, and δ grows "
        "faster); give --person idcode (the person role) to protect the person."
    )
    assert several_records_per_person(frame.drop(columns="idcode")) is None


class MissingDraws:
    """OpenDP's output held fixed, drawing OpenDP's missing value in every column (its noise on an
    empty missing cell does that now and then): what the release writes in its place."""

    def __init__(self, plan, keys):
        import polars as pl

        self.keys = {c: pl.Series(c, [*keys[c], None]) for c in plan.columns}
        self.model = type("Model", (), {"total": 8.0})()

    def synthesize(self, rows, method):
        import polars as pl

        return pl.DataFrame({c: [self.keys[c][0], None] * (rows // 2) for c in self.keys})

    def project_melted(self, clique):
        import polars as pl

        (column,) = clique if len(clique) == 1 else (clique[0],)
        return pl.DataFrame({column: self.keys[column].to_list(), "len": [5.0, 3.0, 0.0]})


@pytest.mark.skipif(opendp_version() is None, reason="OpenDP (the dp extra) is not installed")
def test_missing_values_keep_the_sources_spelling_and_appear_only_where_it_had_some(monkeypatch):
    """Adult's workclass came out blank where the file wrote '?', and blanks appeared in columns that
    had none: a declared column with missing values writes them as the file does, and a declared
    column without any draws again from its DP one-way table (post-processing)."""
    from anonlib.transformations import synthesis

    monkeypatch.setattr(synthesis, "opendp_release", lambda data, plan, keys, *a, **k: MissingDraws(plan, keys))
    frame = pd.DataFrame({"work": ["a", "b", None, "a"] * 5, "sex": ["F", "M"] * 10})
    dataset = Dataset.from_frame("f.csv", frame, {"work": "sensitive", "sex": "quasi-identifier"})
    dataset = replace(dataset, missing_texts={"work": "?"})
    made = private_release(dataset, ["work", "sex"], epsilon=1.0, values_from_data=True, method="pairs", rows=400)
    table = made.synthesis.table
    assert made.synthesis.rows == 400 and made.synthesis.missing == {"work": "?"}
    assert table["work"].tolist()[:2] == ["a", "?"] and table["work"].notna().all()  # the file's spelling
    assert table["sex"].notna().all() and set(table["sex"]) == {"F", "M"}  # no blank where the file had none
    shares = table["sex"].value_counts(normalize=True)
    assert shares["F"] > 0.75 and shares["M"] > 0.05  # half the rows drawn again, 5 : 3 from the one-way table
    # compared with the records as the file writes them: '?' against '?'
    one_way = {m.columns: m.release for m in made.comparison.marginals if len(m.columns) == 1}
    # records a 1/2, b 1/4, ? 1/4; release a 1/2, ? 1/2: half of (0 + 1/4 + 1/4)
    assert one_way[("work",)] == pytest.approx(0.25)


@pytest.mark.skipif(opendp_version() is None, reason="OpenDP (the dp extra) is not installed")
def test_a_record_count_of_huge_weights_is_planned_without_expanding_it_and_refused_in_a_sentence():
    """The plan expanded a count column into rows to see which values occur (a fuzzed file's count
    took the session past 20 GB): it now reads the rows a count keeps, and the release refuses a
    count past what it reads."""
    frame = pd.DataFrame({"sex": ["F", "M", "F"], "dx": ["a", "b", "c"], "n": [10**12, 1, 0]})
    roles = {"sex": "quasi-identifier", "dx": "sensitive", "n": "count"}
    dataset = Dataset.from_frame("f.csv", frame, roles)
    assert plan_private(dataset, ["sex", "dx"]).sizes == (3, 3)  # F, M and missing; a, b and missing: c counts 0
    with pytest.raises(SynthesisError, match="stands for more than 20,000,000 records") as err:
        private_release(dataset, ["sex", "dx"], epsilon=1.0, values_from_data=True)
    assert "\n" not in str(err.value) and "10" not in str(err.value).split("more than")[0]
