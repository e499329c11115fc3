"""Hierarchies in ARX layout: builders, CSV round trips, validation errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anonlib.core.errors import HierarchyError
from anonlib.core.hierarchy import (
    date_hierarchy,
    equal_width_bands,
    flat_hierarchy,
    frequency_hierarchy,
    hierarchy_csv,
    interval_hierarchy,
    level_lookup,
    masking_hierarchy,
    parse_bands,
    parse_taxonomy,
    read_hierarchy_csv,
    taxonomy_hierarchy,
    validate_hierarchy,
    value_key,
)
from anonlib.core.samples import load_sample

PAPER_AGES = "20-34, 35-44, 45-64, 65-85 | 20-44, 45-85 | 20-85"


def test_paper_age_hierarchy():
    h = interval_hierarchy([20, 35, 44, 50, 68, 75], parse_bands(PAPER_AGES))
    assert h.values.tolist() == [
        ["20", "[20-34]", "[20-44]", "[20-85]"],
        ["35", "[35-44]", "[20-44]", "[20-85]"],
        ["44", "[35-44]", "[20-44]", "[20-85]"],
        ["50", "[45-64]", "[45-85]", "[20-85]"],
        ["68", "[65-85]", "[45-85]", "[20-85]"],
        ["75", "[65-85]", "[45-85]", "[20-85]"],
    ]
    assert interval_hierarchy([20], parse_bands("20-44"), top=True).values.tolist() == [["20", "[20-44]", "*"]]


def test_zip_masking_levels_0_to_5():
    h = masking_hierarchy([52003])
    assert h.values.tolist() == [["52003", "5200*", "520**", "52***", "5****", "*****"]]
    with pytest.raises(HierarchyError, match="'ABC'"):
        masking_hierarchy(["52003", "ABC"])


def test_ac_taxonomy_from_groups_and_text():
    groups = parse_taxonomy("Yes: High, Med, Low\nNo: No\nAny: Yes, No")
    h = taxonomy_hierarchy(groups)
    assert h.values.tolist() == [
        ["High", "Yes", "Any"],
        ["Med", "Yes", "Any"],
        ["Low", "Yes", "Any"],
        ["No", "No", "Any"],
    ]
    # a leaf closer to the root keeps its own value at the extra level
    short = taxonomy_hierarchy({"Any": ["Yes", "No"], "Yes": ["High", "Low"]})
    assert short.values.tolist()[-1] == ["No", "No", "Any"]


def test_flat_and_equal_width():
    assert flat_hierarchy(["F", "M", "F", None]).values.tolist() == [["F", "*"], ["M", "*"]]
    bands = equal_width_bands(0, 19, [5, 10, 20])
    h = interval_hierarchy([3, 12, 19], bands, top=True)
    assert h.values.tolist()[1] == ["12", "[10-14]", "[10-19]", "[0-19]", "*"]


@pytest.mark.parametrize("delimiter", [";", ","])
def test_csv_round_trip(delimiter):
    h = taxonomy_hierarchy({"Yes": ["High", "Med", "Low"], "No": ["No"], "Any": ["Yes", "No"]})
    data = hierarchy_csv(h, delimiter)
    assert data.decode().splitlines()[0] == delimiter.join(["High", "Yes", "Any"])
    back = read_hierarchy_csv(data)
    assert back.values.tolist() == h.values.tolist()


def test_read_arx_file_with_bom_and_ragged_rows():
    assert read_hierarchy_csv("\ufeff52003;5200*;*\n52000;5200*;*\n").shape == (2, 3)
    with pytest.raises(HierarchyError, match="'52000'"):
        read_hierarchy_csv("52003;5200*;*\n52000;5200*\n")
    with pytest.raises(HierarchyError, match="empty"):
        read_hierarchy_csv("\n\n")


def test_value_keys_match_numbers_and_text():
    assert value_key(63.0) == value_key("63") == value_key(63) == "63"
    assert value_key("02101") == "02101"


def test_validation_names_the_uncovered_value():
    h = taxonomy_hierarchy({"Yes": ["High", "Med"], "Any": ["Yes", "No"]})
    with pytest.raises(HierarchyError, match="does not cover the value 'Low'"):
        validate_hierarchy(h, ["High", "Low", "No"], "AC")


def test_validation_inconsistent_levels_duplicates_and_blanks():
    inconsistent = pd.DataFrame([["35", "[35-44]", "[20-44]"], ["40", "[35-44]", "[35-85]"]])
    with pytest.raises(HierarchyError, match=r"'\[35-44\]' at level 1"):
        validate_hierarchy(inconsistent, attribute="Age")
    duplicate = pd.DataFrame([["F", "*"], ["F", "*"]])
    with pytest.raises(HierarchyError, match="'F' is listed twice"):
        validate_hierarchy(duplicate, attribute="Sex")
    blank = pd.DataFrame([["F", "*"], ["M", ""]])
    with pytest.raises(HierarchyError, match="row of 'M' has an empty cell at level 1"):
        validate_hierarchy(blank, attribute="Sex")
    with pytest.raises(HierarchyError, match="empty"):
        validate_hierarchy(pd.DataFrame(), attribute="Sex")


def test_interval_errors_name_the_value():
    with pytest.raises(HierarchyError, match="'90' is in no band of level 1"):
        interval_hierarchy([20, 90], parse_bands(PAPER_AGES))
    with pytest.raises(HierarchyError, match="'abc' is not a number"):
        interval_hierarchy([20, "abc"], parse_bands(PAPER_AGES))
    with pytest.raises(HierarchyError, match="'20 -' is not a band"):
        parse_bands("20 - , 30-40")
    with pytest.raises(HierarchyError, match="exactly one top group"):
        taxonomy_hierarchy({"A": ["x"], "B": ["y"]})
    with pytest.raises(HierarchyError, match="parent: child"):
        parse_taxonomy("High Med Low")


def test_level_lookup_on_paper_table():
    df = load_sample("arca_table1").frame
    labels = np.array(sorted(df["Zip"].unique()), dtype=object)
    lookup, names = level_lookup(masking_hierarchy(df["Zip"]), labels, "Zip")
    assert lookup.shape == (6, 8)
    assert [len(n) for n in names] == [8, 3, 3, 3, 1, 1]
    generalized = names[1][lookup[1]]
    assert generalized.tolist() == ["5200*"] * 3 + ["5300*"] + ["5400*"] * 4


def test_level_lookup_missing_joins_the_top_only():
    lookup, names = level_lookup(flat_hierarchy(["a", "b"]), ["a", "b", "missing"])
    assert names[1][lookup[1]].tolist() == ["*", "*", "*"]
    lookup, names = level_lookup(taxonomy_hierarchy({"G": ["a", "b"], "*": ["G"]}), ["a", "missing"])
    assert names[1][lookup[1]].tolist() == ["G", "missing"]
    assert names[2][lookup[2]].tolist() == ["*", "*"]


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from anonlib.core.default_hierarchy import default_hierarchy  # noqa: E402
from anonlib.core.hierarchy import levels_of  # noqa: E402


@settings(max_examples=40, deadline=None)
@given(
    values=st.one_of(
        st.lists(st.integers(-50, 500), min_size=1, max_size=60),
        st.lists(st.floats(0, 100, allow_nan=False).map(lambda v: round(v, 1)), min_size=1, max_size=60),
        st.lists(st.text("abcXYZ", min_size=1, max_size=4), min_size=1, max_size=30),
        st.lists(st.integers(10000, 99999), min_size=1, max_size=30),
    )
)
def test_default_hierarchies_are_valid_and_cover_the_data(values):
    kind, table = default_hierarchy(values, "column")
    assert kind in {"intervals", "masking", "flat", "frequency", "dates", "bundled taxonomy"}
    checked = validate_hierarchy(table, values, "column")
    assert levels_of(checked) >= 1
    assert checked[levels_of(checked)].nunique() == 1  # every default ends in one top value
    lookup, names = level_lookup(table, sorted(set(values)), "column")
    assert [len(n) for n in names] == sorted((len(n) for n in names), reverse=True)  # coarser each level


# --- typed defaults: frequency groups, dates, US states ------------------------------------


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from([f"v{i}" for i in range(23)]), min_size=1, max_size=120), st.integers(2, 5))
def test_frequency_hierarchy_groups_consecutive_values_in_frequency_order(values, fan_out):
    table = validate_hierarchy(frequency_hierarchy(values, fan_out), values, "column")
    counts = pd.Series(values).value_counts()
    order = sorted(counts.index, key=lambda v: (-int(counts[v]), v))
    assert sorted(table[0]) == sorted(order) and set(table[levels_of(table)]) == {"*"}
    if len(order) <= 2:
        return
    by_value = table.set_index(0)
    for level in range(1, levels_of(table)):  # level j: groups of fan_out**j consecutive values
        size = fan_out**level
        groups = [by_value.loc[v, level] for v in order]
        assert groups == [groups[(i // size) * size] for i in range(len(order))]
        assert len(set(groups)) == -(-len(order) // size)


def test_dates_go_to_month_quarter_year_and_decade_and_other_text_is_refused():
    assert date_hierarchy(["1999-12-31 23:59"]).values.tolist() == [
        ["1999-12-31 23:59", "1999-12", "1999-Q4", "1999", "1990s", "*"]
    ]
    with pytest.raises(HierarchyError, match="not a date"):
        date_hierarchy(["2021-05-17", "May 2021"])
    assert default_hierarchy(["2021-05-17", "2020-01-02", "2019-11-30"], "visit")[0] == "dates"


def test_adults_categories_get_frequency_groups_and_two_values_stay_flat():
    frame = load_sample("adult").frame
    kind, table = default_hierarchy(frame["occupation"], "occupation")
    assert kind == "frequency" and levels_of(table) == 2  # 14 occupations: groups of 4, then *
    counts = frame["occupation"].value_counts()
    top4 = sorted(counts.index, key=lambda v: (-int(counts[v]), v))[:4]
    assert table.set_index(0).loc[top4[0], 1] == "{" + ", ".join(top4) + "}"  # the four most frequent
    assert default_hierarchy(frame["sex"], "sex")[0] == "flat"


# --- top and bottom coding of long tails -------------------------------------------------

from anonlib.core.default_hierarchy import tail_cuts  # noqa: E402


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 60), min_size=30, max_size=300), st.lists(st.integers(-5000, 5000), max_size=3))
def test_long_tails_are_coded_as_one_value_and_only_a_percent_of_records_each(body, outliers):
    """The default hierarchy of numbers with a few far values: it covers every value, its
    levels nest, the top- and bottom-coded values are exactly those beyond the limits it
    names, at most 1% of the records (each side) are coded, and every other value keeps
    its band."""
    values = pd.Series(body + outliers)
    kind, table = default_hierarchy(values, "count")
    if values.nunique() <= 10:
        return
    assert kind == "intervals"
    checked = validate_hierarchy(table, values, "count")  # covers every value; levels nest
    coded = {row[0]: row[1] for row in checked.itertuples(index=False) if not str(row[1]).startswith("[")}
    low, high = tail_cuts(values)
    numbers = pd.to_numeric(values)
    for key, label in coded.items():
        x = float(key)
        assert (label.startswith("<") and low is not None and x < float(label[1:])) or (
            label.startswith(">") and high is not None and x > float(label[1:])
        ), (key, label)
        assert set(checked.loc[checked[0] == key].iloc[0, 1:-1]) == {label}  # one value at every level
    for side in ("<", ">"):
        records = numbers[numbers.astype(str).isin([k for k, lab in coded.items() if lab.startswith(side)])]
        assert len(records) <= 0.01 * len(values) + 1
    if low is None and high is None:
        assert not coded


def test_capital_gain_keeps_thousand_wide_bands_and_codes_its_outliers():
    gain = load_sample("adult").frame["capital-gain"]
    kind, table = default_hierarchy(gain, "capital-gain")
    rows = {r[0]: list(r[1:]) for r in table.itertuples(index=False)}
    assert rows["99999"][:3] == [">15999"] * 3 and rows["99999"][-1] == "*"
    assert rows["2174"][0] == "[2000-2999]"  # bands of 1,000, not of 25,000 stretched by 99,999
    assert tail_cuts(range(17, 91)) == (None, None)


def test_tail_limits_must_not_cross():
    with pytest.raises(HierarchyError, match="above the top-coding limit"):
        interval_hierarchy([1, 5], [[(0, 9)]], below=6, above=4)


# --- what a hierarchy covers, and its tree --------------------------------------------------

from anonlib.core.hierarchy import OTHER, cover_values, hierarchy_tree, uncovered_values  # noqa: E402


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f"]), min_size=1, max_size=40),
    st.sets(st.sampled_from(["a", "b", "c"]), min_size=1),
)
def test_covering_adds_exactly_the_uncovered_values_under_other(values, listed):
    h = frequency_hierarchy(sorted(listed)) if len(listed) > 2 else flat_hierarchy(sorted(listed))
    missing = uncovered_values(h, values)
    assert missing == [v for v in dict.fromkeys(values) if v not in listed]
    covered = cover_values(h, values)
    checked = validate_hierarchy(covered, values)  # covers every value; levels nest
    assert uncovered_values(covered, values) == []
    added = checked.iloc[len(h) :]
    assert list(added[0]) == missing and checked.iloc[: len(h)].equals(validate_hierarchy(h))
    for row in added.itertuples(index=False):
        assert list(row[1:-1]) == [OTHER] * (len(row) - 2) and row[-1] == "*"


def test_the_tree_counts_values_and_records_and_each_parent_holds_its_children():
    frame = load_sample("adult").frame
    kind, h = default_hierarchy(frame["age"], "age")
    nodes = hierarchy_tree(h, frame["age"])
    assert [n.level for n in nodes] == sorted((n.level for n in nodes), reverse=True)
    top = [n for n in nodes if n.parent is None]
    assert len(top) == 1 and top[0].label == "*" and top[0].records == frame["age"].notna().sum()
    assert top[0].values == len(h)
    for i, node in enumerate(nodes):
        children = [n for n in nodes if n.parent == i]
        if children:
            assert node.records == sum(c.records for c in children)
            assert node.values == sum(c.values for c in children)
    assert sum(n.records for n in nodes if n.level == 0) == len(frame)
    assert sorted((n.level, n.label) for n in nodes) == sorted({(j, str(v)) for j in range(h.shape[1]) for v in h[j]})


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 60), min_size=20, max_size=200), st.lists(st.integers(-3000, 3000), max_size=3))
def test_a_table_of_distinct_values_with_counts_gets_the_records_hierarchy(body, outliers):
    """What an engine returns (each distinct value once, with its records) builds the same
    default hierarchy, tails included, as the records themselves."""
    records = pd.Series(body + outliers)
    table = records.value_counts(sort=False)
    assert tail_cuts(table.index, counts=table.to_numpy()) == tail_cuts(records)
    kind, from_records = default_hierarchy(records, "n")
    kind_counted, from_counts = default_hierarchy(list(table.index), "n", counts=list(table.to_numpy()))
    assert kind == kind_counted
    as_rows = lambda h: sorted(map(tuple, h.astype(str).to_numpy()))  # noqa: E731
    assert as_rows(from_records) == as_rows(from_counts)


def test_level_words_read_kept_removed_or_an_example_of_a_changed_value() -> None:
    from anonlib.core.hierarchy import date_hierarchy, level_words, masking_hierarchy

    zips = masking_hierarchy(["52003", "52000", "60614"])
    assert [level_words(zips, lv) for lv in range(6)] == [
        "kept",
        "52003 → 5200*",
        "52003 → 520**",
        "52003 → 52***",
        "52003 → 5****",
        "removed",
    ]
    dates = date_hierarchy(["2025-09-28", "2024-01-05"])
    assert level_words(dates, 1).startswith("2025-09-28 → ") and level_words(dates, 1) != "kept"
    # the first row unchanged at a level: the example is a row that changes
    h = pd.DataFrame([["x", "x", "*"], ["y", "G", "*"], ["z", "G", "*"]])
    assert level_words(h, 1) == "y → G" and level_words(h, 2) == "removed"


# --- the builders read a column through its distinct values: the same as record by record ---


def _old_distinct_texts(values):
    """distinct_texts as it was: every record as a Python object, then pandas' unique."""
    series = pd.Series(list(values), dtype=object)
    series = series[~pd.isna(series)]
    keys = [value_key(v) for v in pd.unique(series)]
    return list(dict.fromkeys(k for k in keys if k != "missing"))


def _record_keys(values, counts=None):
    """Each record's lookup key and weight, one by one (missing values left out)."""
    items = list(values)
    weights = [1] * len(items) if counts is None else list(counts)
    return [(value_key(v), w) for v, w in zip(items, weights) if not pd.isna(v)]


def _old_tail_cuts(values, counts=None):
    """tail_cuts as it was: every record's number, sorted."""
    import math

    x = pd.to_numeric(pd.Series(list(values) if not isinstance(values, pd.Series) else values), errors="coerce")
    weights = np.ones(len(x), dtype=np.int64) if counts is None else np.asarray(list(counts), dtype=np.int64)
    keep = x.notna().to_numpy()
    x, weights = x.to_numpy(dtype=float)[keep], weights[keep]
    n = int(weights.sum())
    if n < 2:
        return None, None
    order = np.argsort(x, kind="stable")
    x, ends = x[order], np.cumsum(weights[order])
    low = float(x[np.searchsorted(ends, math.ceil(0.01 * (n - 1)), side="right")])
    high = float(x[np.searchsorted(ends, math.floor(0.99 * (n - 1)), side="right")])
    body = max(high - low, 1e-12)
    return (low if low - float(x[0]) > 0.5 * body else None), (high if float(x[-1]) - high > 0.5 * body else None)


def _random_columns(seed: int, n: int = 3000):
    rng = np.random.default_rng(seed)
    ages = rng.integers(17, 90, n).astype(object)
    ages[rng.random(n) < 0.02] = rng.integers(200, 400)  # a long tail
    ages[rng.random(n) < 0.05] = None
    words = np.array(["a", "b", " b", "c", "dd", "e", "f", "g", "h", "missing"], dtype=object)
    text = words[rng.zipf(1.6, n) % len(words)]
    text[rng.random(n) < 0.05] = None
    floats = rng.integers(0, 30, n).astype(float) / rng.choice([1.0, 2.0], n)
    floats[rng.random(n) < 0.05] = np.nan
    mixed = np.array([7, 7.0, "7", "7.0", "x", 3.5, None, 12], dtype=object)[rng.integers(0, 8, n)]
    return {
        "age": pd.Series(ages, dtype="Int64"),
        "word": pd.Series(text, dtype="string"),
        "score": pd.Series(floats),
        "mixed": pd.Series(mixed, dtype=object),
        "code": pd.Series(rng.integers(10000, 10100, n).astype(str), dtype="string"),
    }


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_distinct_values_read_a_column_as_its_records_do(seed):
    from collections import Counter

    from anonlib.core.default_hierarchy import default_hierarchy, tail_cuts
    from anonlib.core.hierarchy import distinct_texts, distinct_values, hierarchy_tree

    rng = np.random.default_rng(seed + 100)
    for name, column in _random_columns(seed).items():
        counts = rng.integers(1, 5, len(column))
        for weights in (None, counts):
            values, records = distinct_values(column, weights)
            expected = Counter()
            for key, weight in _record_keys(column, weights):
                expected[key] += weight
            got = Counter()
            for value, weight in zip(values, records):
                got[value_key(value)] += int(weight)
            assert got == expected, name
            assert distinct_texts(column) == _old_distinct_texts(column) == distinct_texts(values), name
            if name in ("age", "score"):
                assert tail_cuts(column, counts=weights) == _old_tail_cuts(column, weights), name
            # the hierarchy built from the records and from the distinct values with their records
            kind, table = default_hierarchy(column, name, counts=weights)
            again = default_hierarchy(values, name, counts=records)
            assert kind == again[0] and table.equals(again[1]), name
            frequency = frequency_hierarchy(column, counts=weights)
            order = sorted(expected, key=lambda k: (-expected[k], k))
            assert frequency.iloc[:, 0].tolist() == [k for k in order if k != "missing"], name
            leaves = [n for n in hierarchy_tree(table, column, counts=weights) if n.level == 0]
            assert {n.label: n.records for n in leaves} == {
                value_key(v): expected.get(value_key(v), 0) for v in table.iloc[:, 0]
            }, name
            assert hierarchy_tree(table, values, counts=records) == hierarchy_tree(table, column, counts=weights)


def test_builders_look_up_each_distinct_value_not_each_record(monkeypatch):
    """At 10^5 records the page's editors rebuilt hierarchies record by record on every rerun
    (seconds); a column is read through its distinct values, each looked up a few times."""
    import anonlib.core.hierarchy as hierarchy
    from anonlib.core.default_hierarchy import default_hierarchy

    rng = np.random.default_rng(5)
    words = pd.Series(np.array([f"w{i}" for i in range(30)], dtype=object)[rng.integers(0, 30, 20_000)])
    column = words.astype("string")
    calls = []
    original = hierarchy.value_key
    monkeypatch.setattr(hierarchy, "value_key", lambda v: calls.append(v) or original(v))
    kind, table = default_hierarchy(column, "word")
    tree = hierarchy.hierarchy_tree(table, column)
    assert kind == "frequency" and sum(n.records for n in tree if n.level == 0) == 20_000
    assert hierarchy.uncovered_values(table, column) == []
    assert len(calls) < 1_000  # record by record it was over 40,000
