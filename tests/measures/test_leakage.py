"""Leakage table: the paper's Table 2, the entropy identity, count columns, errors."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonlib.core.errors import ColumnError, EmptySelectionError, ParameterError
from anonlib.core.samples import load_sample
from anonlib.measures.leakage import (
    LEAKAGE_COLUMNS,
    attribute_sets,
    compare_leakage,
    leakage_table,
    partition_entropy,
    truncated,
)

# The paper's Table 2: attribute -> (partitions, dS, normalized) as printed (truncated).
TABLE2 = {
    "Sex": (2, 0.99, 0.16),
    "AC": (4, 1.86, 0.31),
    "Age": (13, 3.55, 0.60),
    "Zip": (8, 2.75, 0.46),
    "Weight": (5, 2.24, 0.38),
    "Race": (6, 2.52, 0.42),
}


@pytest.fixture(scope="module")
def table1() -> pd.DataFrame:
    return load_sample("arca_table1").frame


def test_table2_from_table1(table1):
    t = leakage_table(table1, list(TABLE2), count="#Rec.")
    assert list(t.columns) == LEAKAGE_COLUMNS
    assert t["attribute"].tolist() == list(TABLE2)
    assert t["partitions"].tolist() == [v[0] for v in TABLE2.values()]
    assert truncated(t["loss"]) == [v[1] for v in TABLE2.values()]
    # The paper truncates, except Weight's 0.3797, which it prints rounded (0.38).
    normalized = truncated(t["normalized"])
    assert normalized == [0.16, 0.31, 0.60, 0.46, 0.37, 0.42]
    assert round(float(t["normalized"].iloc[4]), 2) == TABLE2["Weight"][2]
    np.testing.assert_allclose(t["normalized"], [0.16807, 0.31516, 0.60237, 0.46680, 0.37969, 0.42702], atol=5e-6)


def test_sex_row_exact(table1):
    row = leakage_table(table1, ["Sex"], count="#Rec.").iloc[0]
    assert row["loss"] == pytest.approx(0.99277, abs=5e-6)
    assert row["normalized"] == pytest.approx(0.16807, abs=5e-6)
    # 27 women and 33 men among 60 records
    assert row["loss"] == pytest.approx(-(0.45 * math.log2(0.45) + 0.55 * math.log2(0.55)))


def longpre_reference(values: list[tuple], counts: list[int]) -> tuple[int, float, float]:
    """Slow, literal Longpre et al.: S_0, S_j per partition with p(r|E_j), then the average."""
    records = [v for v, c in zip(values, counts) for _ in range(c)]
    n = len(records)
    s0 = -sum((1 / n) * math.log2(1 / n) for _ in range(n))
    parts: dict[tuple, int] = {}
    for v in records:
        parts[v] = parts.get(v, 0) + 1
    loss = 0.0
    for size in parts.values():
        p_e = size / n
        s_j = -sum(((1 / n) / p_e) * math.log2((1 / n) / p_e) for _ in range(size))
        loss += p_e * (s0 - s_j)
    return len(parts), loss, (loss / s0 if s0 > 0 else 0.0)


@settings(max_examples=50, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.integers(0, 3), st.sampled_from(["a", "b", "c"]), st.integers(1, 4)), min_size=1, max_size=25
    )
)
def test_identity_matches_longpre_formula(rows):
    df = pd.DataFrame(rows, columns=["x", "y", "n"])
    t = leakage_table(df, ["x", "y", ("x", "y")], count="n")
    for attribute, (_, got) in zip(["x", "y", ("x", "y")], t.iterrows()):
        cols = [attribute] if isinstance(attribute, str) else list(attribute)
        values = [tuple(r) for r in df[cols].itertuples(index=False)]
        parts, loss, normalized = longpre_reference(values, df["n"].tolist())
        assert got["partitions"] == parts
        assert got["loss"] == pytest.approx(loss, abs=1e-9)
        assert got["normalized"] == pytest.approx(normalized, abs=1e-9)
        assert 0.0 <= got["normalized"] <= 1.0 + 1e-12


@settings(max_examples=30, deadline=None)
@given(rows=st.lists(st.tuples(st.integers(0, 4), st.integers(0, 2), st.integers(0, 3)), min_size=1, max_size=30))
def test_count_column_equals_expanded_rows(rows):
    df = pd.DataFrame(rows, columns=["a", "b", "n"])
    expanded = df.loc[df.index.repeat(df["n"])].drop(columns="n")
    if expanded.empty:
        return
    with_count = leakage_table(df[df["n"] > 0], ["a", "b"], count="n")
    plain = leakage_table(expanded, ["a", "b"])
    assert with_count["partitions"].tolist() == plain["partitions"].tolist()
    np.testing.assert_allclose(with_count["loss"], plain["loss"], atol=1e-12)
    np.testing.assert_allclose(with_count["normalized"], plain["normalized"], atol=1e-12)


def test_combinations_and_sizes(table1):
    qi = ["Sex", "AC", "Age", "Zip", "Weight", "Race"]
    t = leakage_table(table1, qi, count="#Rec.", sizes=(1, 2, 3))
    assert len(t) == 6 + 15 + 20
    assert t["attribute"].iloc[6] == ("Sex", "AC")
    whole = leakage_table(table1, [tuple(qi)], count="#Rec.").iloc[0]
    assert whole["partitions"] == 22  # all 22 rows differ on the quasi-identifier
    # a combination leaks at least as much as each of its members
    single = dict(zip(t["attribute"], t["loss"]))
    for attribute, loss in zip(t["attribute"], t["loss"]):
        if isinstance(attribute, tuple):
            assert loss >= max(single[a] for a in attribute) - 1e-12
    assert attribute_sets(["a", "b"], (2,)) == [("a", "b")]


def test_unique_column_leaks_everything_and_constant_nothing():
    df = pd.DataFrame({"id": range(8), "c": ["x"] * 8})
    t = leakage_table(df)
    assert t["normalized"].tolist() == [1.0, 0.0]
    assert t["loss"].tolist() == [3.0, 0.0]
    assert partition_entropy(np.array([4, 4])) == 1.0


def test_missing_values_are_a_partition_of_their_own():
    df = pd.DataFrame({"a": ["x", None, None, "x"]})
    assert leakage_table(df)["partitions"].tolist() == [2]


def test_compare_leakage_table8_shape(table1):
    before = leakage_table(table1, ["Age", "Zip"], count="#Rec.")
    after = leakage_table(table1.assign(Age="[20-85]"), ["Age", "Zip"], count="#Rec.")
    out = compare_leakage(before, after)
    assert out["after"].tolist()[0] == 0.0
    assert out["change"].iloc[0] == pytest.approx(-before["normalized"].iloc[0])


def test_errors(table1):
    with pytest.raises(ColumnError, match="Postcode"):
        leakage_table(table1, ["Postcode"])
    with pytest.raises(ColumnError, match="record-count"):
        leakage_table(table1, ["#Rec."], count="#Rec.")
    with pytest.raises(EmptySelectionError):
        leakage_table(table1, [])
    with pytest.raises(ParameterError):
        leakage_table(table1, [("Age", "Zip")], sizes=(1,))
    with pytest.raises(ParameterError):
        attribute_sets(["a"], (0,))


def test_rows_with_no_records_form_no_partition():
    # Value "c" appears only on a row counting 0 records: 2 partitions (a: 3, b: 1), not 3.
    df = pd.DataFrame({"v": ["a", "b", "c", "a"], "n": [2, 1, 0, 1]})
    row = leakage_table(df, ["v"], count="n").iloc[0]
    assert int(row.partitions) == 2
    assert float(row.loss) == pytest.approx(partition_entropy(np.array([3, 1])))
    assert float(row.normalized) == pytest.approx(partition_entropy(np.array([3, 1])) / 2.0)
