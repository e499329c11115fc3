"""The counting kernel against a slow, obviously-correct pandas groupby reference."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.pandas import column, data_frames

from anonlib.core.equivalence import (
    MISSING_LABEL,
    combine,
    distinct_keys,
    encode,
    encode_column,
    equivalence_classes,
    record_counts,
    row_class_sizes,
)
from anonlib.core.errors import ColumnError, EmptySelectionError, ParameterError
from anonlib.measures.avector import anonymity_vector, k_of

tables = data_frames(
    [
        column("x", elements=st.one_of(st.none(), st.integers(0, 4)), dtype=object),
        column("y", elements=st.sampled_from(["f", "m", None]), dtype=object),
        column("z", elements=st.integers(0, 2), dtype=object),
        column("n", elements=st.integers(0, 5), dtype=object),
    ],
    index=st.just(pd.RangeIndex(0)) | st.builds(pd.RangeIndex, st.integers(1, 40)),
)


def reference_sizes(df: pd.DataFrame, columns: list[str], count: str | None) -> dict[tuple, int]:
    """Records per class with pandas groupby (NA as its own group)."""
    keyed = df[columns].astype(object).where(df[columns].notna(), "<NA>")
    weights = df[count].astype(int) if count else pd.Series(1, index=df.index)
    grouped = weights.groupby([keyed[c] for c in columns]).sum()
    return {k if isinstance(k, tuple) else (k,): int(v) for k, v in grouped.items()}


def kernel_sizes(df: pd.DataFrame, columns: list[str], count: str | None) -> dict[tuple, int]:
    table = encode(df, columns, count=count)
    classes = table.classes()
    out: dict[tuple, int] = {}
    for row, cls in enumerate(classes.ids):
        key = tuple(
            "<NA>" if table.labels[j][table.codes[row, j]] == MISSING_LABEL else table.labels[j][table.codes[row, j]]
            for j in range(len(columns))
        )
        out[key] = int(classes.sizes[cls])
    return out


@settings(max_examples=60, deadline=None)
@given(tables, st.sampled_from([["x"], ["y"], ["x", "y"], ["x", "y", "z"], ["z", "x"]]), st.booleans())
def test_class_sizes_equal_groupby(df: pd.DataFrame, columns: list[str], with_count: bool) -> None:
    count = "n" if with_count else None
    if len(df) == 0:
        assert encode(df, columns, count=count).classes().n_classes == 0
        return
    expected = reference_sizes(df, columns, count)
    got = kernel_sizes(df, columns, count)
    assert got == {k: v for k, v in expected.items() if k in got}
    assert set(got) == set(expected)
    classes = encode(df, columns, count=count).classes()
    assert classes.sizes.sum() == (df["n"].astype(int).sum() if count else len(df))
    assert classes.rows_per_class.sum() == len(df)
    # per-row class size = size of the class of that row's values
    keyed = df[columns].astype(object).where(df[columns].notna(), "<NA>")
    per_row = [expected[tuple(r)] for r in keyed.itertuples(index=False)]
    assert classes.row_sizes.tolist() == per_row


@settings(max_examples=40, deadline=None)
@given(tables, st.lists(st.sampled_from([("x",), ("y",), ("x", "y"), ("z", "x"), ("x", "y", "z")]), max_size=8))
def test_kept_classes_are_the_classes_counted_afresh_and_at_most_two(df: pd.DataFrame, asked: list) -> None:
    """Classes read again from an encoded table are those a fresh count gives, in any order of
    asking, and the table keeps at most two sets of them (a walk over subsets holds no more)."""
    table = encode(df, ["x", "y", "z"], count="n")
    for columns in asked:
        kept = table.classes(columns)
        fresh = encode(df, list(columns), count="n").classes()
        assert kept.ids.tolist() == fresh.ids.tolist() and kept.sizes.tolist() == fresh.sizes.tolist()
        assert table.classes(columns) is kept
        assert len(table._counted) <= 2


@settings(max_examples=60, deadline=None)
@given(
    tables,
    st.lists(st.sampled_from([("x",), ("y",), ("x", "y"), ("z", "x"), ("x", "y", "z")]), max_size=4),
    st.sampled_from([None, ("x",), ("x", "y"), ("z", "x"), ("x", "y", "z")]),
    st.booleans(),
)
def test_distinct_rows_are_pandas_distinct_rows_whatever_was_counted_before(
    df: pd.DataFrame, asked: list, columns: tuple | None, ordered: bool
) -> None:
    """``n_distinct`` splits classes counted before by the remaining columns: the count is
    pandas' distinct rows (missing values alike), whichever classes the table kept."""
    table = encode(df, ["x", "y", "z"], count="n")
    for asked_columns in asked:
        table.classes(asked_columns, ordered=ordered)
    wanted = ["x", "y", "z"] if columns is None else list(columns)
    assert table.n_distinct(columns) == len(df[wanted].drop_duplicates()) == encode(df, wanted).classes().n_classes


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 50), min_size=1, max_size=12), st.integers(1, 200), st.integers(0, 2**32 - 1))
def test_combine_survives_huge_key_spaces(cards: list[int], n: int, seed: int) -> None:
    """Mixed-radix keys past 2**62 are re-densified without collisions."""
    rng = np.random.default_rng(seed)
    cards = [c * 10**6 for c in cards]  # product far beyond int64
    columns = [rng.integers(0, c, n) for c in cards]
    ids, n_classes = combine(columns, cards)
    tuples = list(zip(*[c.tolist() for c in columns]))
    assert n_classes == len(set(tuples))
    first: dict[tuple, int] = {}
    for t, i in zip(tuples, ids.tolist()):
        assert first.setdefault(t, i) == i
    assert len(set(first.values())) == n_classes


def test_empty_quasi_identifier_is_one_class() -> None:
    df = pd.DataFrame({"a": [1, 2, 3], "n": [2, 0, 5]})
    classes = encode(df, ["a"], count="n").classes([])
    assert classes.ids.tolist() == [0, 0, 0]
    assert classes.sizes.tolist() == [7]


def test_count_column_is_not_expanded_and_k_ignores_empty_classes() -> None:
    df = pd.DataFrame({"zip": ["1", "1", "2", "3"], "n": [2, 1, 3, 0]})
    classes = equivalence_classes(df, ["zip"], count="n")
    assert classes.sizes.tolist() == [3, 3, 0]
    assert classes.k == 3
    assert row_class_sizes(df, ["zip"], count="n").tolist() == [3, 3, 3, 0]


def test_missing_values_form_their_own_class() -> None:
    codes, labels = encode_column(pd.Series([None, "a", None, "b"]))
    assert labels.tolist() == ["a", "b", MISSING_LABEL]
    assert codes.tolist() == [2, 0, 2, 1]


def test_numbers_are_ordered_numerically() -> None:
    _, labels = encode_column(pd.Series([10, 9, 100]))
    assert labels.tolist() == [9, 10, 100]


def test_bad_inputs_give_clear_errors() -> None:
    df = pd.DataFrame({"a": [1, 2], "n": [1, -1], "t": ["x", "y"], "f": [1.5, 2]})
    with pytest.raises(ColumnError, match="do not exist in the data: zip"):
        encode(df, ["zip"])
    with pytest.raises(ColumnError, match="cannot be negative; found -1"):
        record_counts(df, "n")
    with pytest.raises(ColumnError, match="whole numbers; found 'x'"):
        record_counts(df, "t")
    with pytest.raises(ColumnError, match="found 1.5"):
        record_counts(df, "f")
    with pytest.raises(ColumnError, match="selected twice"):
        encode(df, ["a", "a"])
    with pytest.raises(EmptySelectionError):
        equivalence_classes(df, [])
    with pytest.raises(ParameterError):
        combine([np.array([0])], [])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 30), max_size=40))
def test_anonymity_vector_properties(sizes: list[int]) -> None:
    vector = anonymity_vector(sizes)
    assert sum(j * v for j, v in enumerate(vector, start=1)) == sum(sizes)
    assert sum(vector) == sum(1 for s in sizes if s > 0)
    assert not vector or vector[-1] > 0
    positive = [s for s in sizes if s > 0]
    assert k_of(vector) == (min(positive) if positive else 0)


def test_anonymity_vector_of_the_caballero_example() -> None:
    assert anonymity_vector([4, 4, 5, 2]) == (0, 1, 0, 2, 1)
    with pytest.raises(ParameterError):
        anonymity_vector([1, -2])
    with pytest.raises(ParameterError):
        anonymity_vector([1.5])


def test_refine_splits_classes_in_order_and_rolls_back_up():
    from anonlib.core.equivalence import Classes, refine

    rng = np.random.default_rng(3)
    ids = rng.integers(0, 5, 200)
    codes = rng.integers(0, 4, 200)
    weights = rng.integers(1, 4, 200)
    r = refine(ids, 5, codes, 4, weights)
    # the same classes as combining the two columns, numbered by (parent class, code)
    expected, n = combine([ids, codes], [5, 4])
    assert r.n_classes == n and r.ids.tolist() == expected.tolist()
    assert (r.parent == ids[Classes.from_ids(r.ids, n).first_rows]).all()
    assert (r.code == codes[Classes.from_ids(r.ids, n).first_rows]).all()
    assert np.all(np.diff(r.parent * 4 + r.code) > 0)
    assert r.sizes.tolist() == np.bincount(r.ids, weights=weights).tolist()
    # the parent map rolls the new table up to the old one without the rows
    assert (
        np.bincount(r.parent, weights=r.sizes, minlength=5).tolist()
        == np.bincount(ids, weights=weights, minlength=5).tolist()
    )
    # a key space too large for a bincount goes through hashing, same classes
    wide = refine(ids * 100_000, 500_000, codes, 4)
    assert wide.ids.tolist() == expected.tolist() and wide.parent.tolist() == (r.parent * 100_000).tolist()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1), min_size=1, max_size=40), st.data())
def test_distinct_keys_give_back_every_key_whatever_its_bits(values, data):
    """The keys are spread by a multiplier before hashing: the distinct keys returned are the
    input's own (extremes and negative keys included), each once, in order of first appearance."""
    key = np.array(data.draw(st.lists(st.sampled_from(values), min_size=1, max_size=200)), dtype=np.int64)
    ids, keys = distinct_keys(key)
    assert (keys[ids] == key).all()
    assert keys.tolist() == list(dict.fromkeys(key.tolist()))
    assert ids.tolist() == pd.factorize(key)[0].tolist()  # pandas' hash table answers as pd.factorize
    ids, keys = distinct_keys(key, ordered=True)
    assert (keys[ids] == key).all() and keys.tolist() == sorted(set(key.tolist()))


def test_keys_are_grouped_by_pandas_own_hash_table_here() -> None:
    """On the pandas this project pins, the kernel groups keys with pandas' int64 hash table
    directly (the fallback, pd.factorize, is for a pandas whose internals changed)."""
    from anonlib.core import equivalence

    assert equivalence._factorize is not pd.factorize


@given(
    st.lists(st.one_of(st.none(), st.sampled_from(["", "a", "b", "B", "é", "10", "9"])), max_size=30),
    st.sampled_from(["string[pyarrow]", "string[python]", "object"]),
    st.integers(1, 3),
)
def test_unordered_codes_name_the_same_values_as_sorted_ones(values, dtype, chunks) -> None:
    """``ordered=False`` (Arrow's dictionary encoding for text Arrow holds) only renumbers:
    every row shows the same label, missing rows show "missing", and the codes are dense."""
    series = pd.Series(values, dtype=dtype)
    if dtype == "string[pyarrow]" and chunks > 1 and len(values) > 1:  # a column Arrow holds in pieces
        parts = np.array_split(np.arange(len(values)), chunks)
        series = pd.concat([series.iloc[p] for p in parts if len(p)], ignore_index=True)
    codes, labels = encode_column(series, ordered=True)
    free_codes, free_labels = encode_column(series, ordered=False)
    assert labels[codes].tolist() == free_labels[free_codes].tolist()
    assert sorted(map(str, free_labels)) == sorted(map(str, labels))
    assert free_codes.dtype == np.int64 and set(free_codes.tolist()) == set(range(len(free_labels)))


@settings(max_examples=80, deadline=None)
@given(
    st.integers(1, 400),
    st.sampled_from([1, 3, 50, 2_000, 3_000_000]),  # key spaces below the rows, wide, and past the count
    st.integers(1, 7),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
def test_refine_equals_a_sorted_reference(n_rows, n_classes, card, weighted, seed) -> None:
    """Every way refine numbers its classes (a count over the key space, a mark over a
    wider one, a hash past that) gives the classes of sorted (class, code) pairs."""
    from anonlib.core.equivalence import refine

    rng = np.random.default_rng(seed)
    ids = rng.integers(0, n_classes, n_rows)
    codes = rng.integers(0, card, n_rows).astype(np.uint8)
    weights = rng.integers(1, 5, n_rows).astype(float) if weighted else None
    r = refine(ids, n_classes, codes, card, weights)
    pairs = sorted(set(zip(ids.tolist(), codes.tolist())))
    number = {pair: i for i, pair in enumerate(pairs)}
    expected_ids = [number[pair] for pair in zip(ids.tolist(), codes.tolist())]
    expected_sizes = np.zeros(len(pairs))
    np.add.at(expected_sizes, expected_ids, 1.0 if weights is None else weights)
    assert r.n_classes == len(pairs)
    assert r.ids.tolist() == expected_ids
    assert r.sizes.tolist() == expected_sizes.tolist()
    assert r.parent.tolist() == [p for p, _ in pairs] and r.code.tolist() == [c for _, c in pairs]


def test_refine_keys_stay_exact_past_two_to_the_53_and_rows_stand_for_records() -> None:
    from anonlib.core.equivalence import refine
    from anonlib.core.errors import ParameterError

    r = refine(np.array([2**25 - 1]), 2**25, np.array([2**33 - 1], dtype=np.uint64), 2**33)
    assert (int(r.parent[0]), int(r.code[0])) == (2**25 - 1, 2**33 - 1)  # an int64 add, not a float64 one
    with pytest.raises(ParameterError, match="at least one record"):
        refine(np.array([0, 1]), 2, np.array([0, 0]), 1, np.array([1.0, 0.0]))


def test_distinct_rows_name_an_unknown_column_even_in_an_empty_table() -> None:
    table = encode(pd.DataFrame({"a": pd.Series([], dtype="int64")}))
    with pytest.raises(ColumnError, match="'zz' is not among the encoded columns"):
        table.n_distinct(["zz"])
    assert table.n_distinct() == 0


@pytest.mark.parametrize("seed", range(6))
def test_persons_per_class_counts_each_person_once_per_class_however_the_rows_are_laid_out(seed):
    """Rows grouped by person (the usual file, and the searches' tables) are compared with their
    neighbours instead of hashing every (class, person) pair: the same counts as counting the
    distinct pairs one by one, with the rows grouped or scattered, and with a person of many rows."""
    from anonlib.core.equivalence import _first_of_person_in_class, persons_per_class

    rng = np.random.default_rng(seed)
    n_persons, n_classes = 300, 12
    rows_per_person = rng.integers(1, 5 if seed % 2 else 12, n_persons)
    persons = np.repeat(np.arange(n_persons), rows_per_person)
    layouts = {"grouped": np.arange(len(persons)), "scattered": rng.permutation(len(persons))}
    for name, order in layouts.items():
        who = persons[order]
        ids = rng.integers(0, n_classes, len(who))
        expected = np.zeros(n_classes, dtype=np.int64)
        for c, _ in {(int(c), int(p)) for c, p in zip(ids, who)}:
            expected[c] += 1
        assert persons_per_class(ids, n_classes, who, n_persons).tolist() == expected.tolist(), name
        fast = _first_of_person_in_class(ids, who)
        if name == "grouped" and rows_per_person.max() <= 8:
            assert fast is not None  # the neighbours' comparison was used
        if name == "scattered":
            assert fast is None
