"""Local suppression (``anonlib.transformations.suppression``) against slow, obviously-correct references."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonlib.core.equivalence import row_class_sizes
from anonlib.core.errors import AnonlibError, ColumnError, ParameterError
from anonlib.core.samples import load_sample
from anonlib.measures.wildcard import marked_codes, wildcard_matches
from anonlib.transformations.suppression import local_suppression

ADULT_QIS = ["age", "sex", "race", "marital-status", "education", "native-country"]


def reference_matches(df: pd.DataFrame, qis, count=None) -> list[int]:
    """O(n^2): for each row, the records of every row agreeing where neither is missing."""
    rows = df[qis].astype(object).where(df[qis].notna(), None).values.tolist()
    weights = [1] * len(df) if count is None else [int(w) for w in df[count]]
    out = []
    for a in rows:
        total = 0
        for b, w in zip(rows, weights):
            if all(x is None or y is None or x == y for x, y in zip(a, b)):
                total += w
        out.append(total)
    return out


def pandas_matches(df: pd.DataFrame, qis) -> np.ndarray:
    """A plain pandas recount for large tables: for every pair of missing patterns,
    a groupby of one side merged onto the other on the columns missing in neither."""
    missing = df[qis].isna()
    pattern = missing.apply(lambda r: tuple(r), axis=1)
    out = pd.Series(0, index=df.index, dtype=np.int64)
    for p in pattern.unique():
        mine = df[pattern == p]
        for m in pattern.unique():
            theirs = df[pattern == m]
            shared = [c for c, a, b in zip(qis, p, m) if not a and not b]
            if not shared:
                out[mine.index] += len(theirs)
                continue
            sizes = theirs.groupby(shared, observed=True).size().rename("n").reset_index()
            joined = mine[shared].reset_index().merge(sizes, on=shared, how="left").set_index("index")["n"]
            out[mine.index] += joined.fillna(0).astype(np.int64)
    return out.to_numpy()


values = st.one_of(st.none(), st.integers(0, 2))


@st.composite
def tables(draw, with_count=False):
    n = draw(st.integers(0, 14))
    q = draw(st.integers(1, 3))
    data = {f"q{j}": draw(st.lists(values, min_size=n, max_size=n)) for j in range(q)}
    data["other"] = list(range(n))
    frame = pd.DataFrame({c: pd.array(v, dtype="Int64") if c != "other" else v for c, v in data.items()})
    if with_count:
        frame["n"] = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    return frame, [f"q{j}" for j in range(q)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(with_count=True))
def test_wildcard_matches_equal_the_pairwise_reference(case):
    frame, qis = case
    assert wildcard_matches(frame, qis, count="n").tolist() == reference_matches(frame, qis, "n")
    assert wildcard_matches(frame, qis).tolist() == reference_matches(frame, qis)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(with_count=True), st.integers(1, 5), st.booleans())
def test_local_suppression_reaches_k_and_touches_only_failing_quasi_identifier_cells(case, k, weighted):
    frame, qis = case
    count = "n" if weighted else None
    weights = frame["n"].to_numpy() if weighted else np.ones(len(frame), dtype=int)
    if weights.sum() < k and len(frame):
        with pytest.raises(ParameterError, match="fewer than k"):
            local_suppression(frame, qis, k, count=count)
        return
    before = np.array(reference_matches(frame, qis, count), dtype=int)
    result = local_suppression(frame, qis, k, count=count)
    after = np.array(reference_matches(result.table, qis, count), dtype=int)
    judged = weights > 0
    assert (after[judged] >= k).all()
    assert result.table.index.equals(frame.index)
    assert list(result.table.columns) == list(frame.columns)
    for column in frame.columns:
        if column not in qis:
            assert result.table[column].equals(frame[column])
    new = result.table[qis].isna().to_numpy() & ~frame[qis].isna().to_numpy()
    kept = ~result.table[qis].isna().to_numpy()
    assert (result.table[qis].to_numpy()[kept] == frame[qis].to_numpy()[kept]).all()
    assert (result.suppressed.to_numpy() == new).all()
    touched = new.any(axis=1)
    assert result.cells == int((new * weights[:, None]).sum())
    assert result.records == int(weights[touched].sum())
    assert result.failing_before == int(weights[judged & (before < k)].sum())
    # only records failing k before suppression lose cells
    assert not (touched & judged & (before >= k)).any()
    assert not (touched & ~judged).any()
    assert sum(result.column_cells.values()) == result.cells


def test_importance_decides_which_column_is_blanked():
    frame = pd.DataFrame({"age": [30, 30, 40, 40, 30], "zip": ["1", "2", "1", "2", "3"]})
    keep_age = local_suppression(frame, ["age", "zip"], 2, importance=["age", "zip"])
    keep_zip = local_suppression(frame, ["age", "zip"], 2, importance=["zip", "age"])
    # every record is unique; blanking zip alone lifts each to 2 (30 or 40 with any zip)
    assert keep_age.column_cells == {"age": 0, "zip": 5}
    # blanking age lifts zips 1 and 2; zip 3 is alone, so only blanking its zip reaches k
    assert keep_zip.column_cells == {"age": 4, "zip": 1} and keep_zip.table["zip"].isna().tolist() == [False] * 4 + [
        True
    ]
    assert keep_age.importance == ("age", "zip") and keep_zip.importance == ("zip", "age")


def test_default_importance_blanks_the_column_with_more_values_first():
    # sdcMicro's default: more distinct values = less important
    frame = pd.DataFrame({"sex": ["f", "f", "m", "m", "f"], "zip": ["1", "2", "3", "4", "5"]})
    result = local_suppression(frame, ["sex", "zip"], 2)
    assert result.importance == ("sex", "zip")
    assert result.column_cells == {"sex": 0, "zip": 5}


def test_a_blanked_record_rescues_its_neighbours():
    # four records agree; one differs in age only: blanking its age gives all five k = 5
    frame = pd.DataFrame({"age": [30, 30, 30, 30, 31], "sex": ["f"] * 5})
    result = local_suppression(frame, ["age", "sex"], 5)
    assert (result.cells, result.records, result.failing_before) == (1, 1, 5)
    assert (row_class_sizes(frame, ["age", "sex"]) < 5).sum() == 5  # record suppression: all five


def test_original_blanks_match_any_value():
    frame = pd.DataFrame({"a": [1, 1, None], "b": ["x", "x", "x"]})
    result = local_suppression(frame, ["a", "b"], 3)
    assert result.cells == 0 and wildcard_matches(frame, ["a", "b"]).tolist() == [3, 3, 3]


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda f: local_suppression(f, [], 2), AnonlibError),
        (lambda f: local_suppression(f, ["a"], 0), ParameterError),
        (lambda f: local_suppression(f, ["nope"], 2), ColumnError),
        (lambda f: local_suppression(f, ["a"], 2, importance=["b"]), ColumnError),
        (lambda f: local_suppression(f, ["a"], 2, importance=["a", "a"]), ParameterError),
        (lambda f: local_suppression(f, ["a"], 9), ParameterError),
    ],
)
def test_bad_input_is_one_sentence(call, error):
    frame = pd.DataFrame({"a": [1, 2, 3], "b": [1, 1, 1]})
    with pytest.raises(error) as info:
        call(frame)
    assert str(info.value).endswith(".")


def test_numpy_integer_columns_hold_the_blanks_without_becoming_floats():
    frame = pd.DataFrame({"a": np.array([1, 1, 2], dtype=np.int64)})
    table = local_suppression(frame, ["a"], 2).table
    assert str(table["a"].dtype) == "Int64" and table["a"].tolist()[:2] == [1, 1]


@pytest.fixture(scope="module")
def adult_complete():
    frame = load_sample("adult").frame
    return frame.dropna(subset=ADULT_QIS).reset_index(drop=True)


def test_adult_reaches_k5_recounted_by_plain_pandas_with_fewer_records_than_record_suppression(adult_complete):
    frame = adult_complete
    result = local_suppression(frame, ADULT_QIS, 5)
    assert pandas_matches(result.table, ADULT_QIS).min() >= 5
    record_suppression = int((row_class_sizes(frame, ADULT_QIS) < 5).sum())
    assert result.failing_before == record_suppression  # complete records: both readings agree
    assert 0 < result.records < record_suppression
    assert result.cells >= result.records
    for column in frame.columns:
        if column not in ADULT_QIS:
            assert result.table[column].equals(frame[column])
    changed = result.table[ADULT_QIS].isna().to_numpy()
    assert (result.table[ADULT_QIS].to_numpy()[~changed] == frame[ADULT_QIS].to_numpy()[~changed]).all()


def test_pandas_reference_agrees_with_pairwise_reference_on_a_small_case():
    frame = pd.DataFrame({"a": [1, None, 1, 2, None], "b": ["x", "x", None, "y", None]})
    assert pandas_matches(frame, ["a", "b"]).tolist() == reference_matches(frame, ["a", "b"])
    assert list(itertools.chain(wildcard_matches(frame, ["a", "b"]))) == reference_matches(frame, ["a", "b"])


def reference_suppression(df: pd.DataFrame, qis, k, count=None) -> np.ndarray:
    """The greedy waves of the module text, row by row with the pairwise count: per row and
    quasi-identifier, True where a cell is blanked (the slow, obviously-correct form)."""
    rows = df[qis].astype(object).where(df[qis].notna(), None).values.tolist()
    weights = [1] * len(df) if count is None else [int(w) for w in df[count]]
    order = sorted(qis, key=lambda c: df[c].nunique())  # sdcMicro's default, stable on ties
    rank = [order.index(c) for c in qis]

    def matches(a):
        return sum(w for b, w in zip(rows, weights) if all(x is None or y is None or x == y for x, y in zip(a, b)))

    blanked = np.zeros((len(rows), len(qis)), dtype=bool)
    failing = [i for i, row in enumerate(rows) if weights[i] > 0 and matches(row) < k]
    while failing:
        counts = {i: matches(rows[i]) for i in failing}
        lowest = min(counts.values())
        wave = [i for i in failing if counts[i] <= max(lowest, lowest * 3 // 2)]
        chosen = {}
        for i in wave:
            after = {
                j: matches(rows[i][:j] + [None] + rows[i][j + 1 :]) for j in range(len(qis)) if rows[i][j] is not None
            }
            reach = [j for j in after if after[j] >= k]
            chosen[i] = max(reach, key=lambda j: rank[j]) if reach else max(after, key=lambda j: (after[j], rank[j]))
        for i, j in chosen.items():
            rows[i][j] = None
            blanked[i, j] = True
        failing = [i for i in failing if matches(rows[i]) < k]
    return blanked


@pytest.mark.parametrize("seed", range(40))
def test_the_cells_chosen_equal_the_row_by_row_reference_on_random_tables(seed):
    # few values per column, so rows repeat (the suppression runs on distinct rows) and patterns
    # of blanks pile up over several waves
    rng = np.random.default_rng(seed)
    n, q = int(rng.integers(5, 60)), int(rng.integers(1, 5))
    frame = pd.DataFrame(
        {f"q{j}": pd.array(rng.integers(0, int(rng.integers(2, 6)), n), dtype="Int64") for j in range(q)}
    )
    qis = list(frame.columns)
    for column in qis:  # a few blanks of the file, which match any value
        frame.loc[rng.random(n) < 0.1, column] = pd.NA
    count = None
    if seed % 2:
        count = "n"
        frame["n"] = rng.integers(0, 3, n)  # some rows stand for no record: never judged
    k = int(rng.integers(2, 7))
    if (frame["n"].sum() if count else n) < k:
        return
    result = local_suppression(frame, qis, k, count=count)
    assert (result.suppressed.to_numpy() == reference_suppression(frame, qis, k, count)).all()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(with_count=True))
def test_wildcard_matches_beyond_a_64_bit_key_equal_the_pairwise_reference(case):
    # a key space past 64 bits is counted pattern by pattern: that path, forced on small tables;
    # so is a bounded block of lookups
    frame, qis = case
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("anonlib.measures.wildcard._KEY_LIMIT", 2)
        assert wildcard_matches(frame, qis, count="n").tolist() == reference_matches(frame, qis, "n")
        assert wildcard_matches(frame, qis).tolist() == reference_matches(frame, qis)
    with pytest.MonkeyPatch.context() as patch:  # and the sorted search one query at a time
        patch.setattr("anonlib.measures.wildcard._LOOKUPS", 1)
        assert wildcard_matches(frame, qis, count="n").tolist() == reference_matches(frame, qis, "n")


@pytest.mark.parametrize("mark", ["*", "missing", "a"])
def test_marked_cells_are_the_cells_equal_to_the_mark_in_every_kind_of_column(mark):
    # the mark is looked for among the distinct values: the same cells as comparing every cell
    rng = np.random.default_rng(7)
    text = rng.choice(np.array(["*", "a", None, "missing", "b"], dtype=object), 200)
    frame = pd.DataFrame(
        {
            "object": pd.Series(text, dtype=object),
            "arrow": pd.Series(text, dtype="string[pyarrow]"),
            "category": pd.Series(text, dtype="category"),
            "mixed": pd.Series(rng.choice(np.array([1, "*", 2.5, None, "1"], dtype=object), 200), dtype=object),
            "int": rng.integers(0, 3, 200),
            "float": np.where(rng.random(200) < 0.2, np.nan, rng.integers(0, 3, 200)),
        }
    )
    codes = marked_codes(frame, list(frame.columns), mark)
    for column in frame.columns:
        by_cell = frame[column].astype(object).eq(mark).fillna(False).to_numpy(dtype=bool)
        assert (codes[column].isna().to_numpy() == by_cell).all(), column
        if column in ("object", "arrow", "category"):
            assert by_cell.any()  # every mark is in the text columns, blanks of the file as well
