"""cell_texts, numbers_in and holds_numbers read each distinct value once; they must read every cell
exactly as the per-cell rules did (compared on seeded random columns of mixed and typed cells)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anonlib.core.cells import BLANK, cell_texts, holds_numbers, numbers_in
from anonlib.core.hierarchy import SUPPRESSED


def per_cell(series: pd.Series) -> list[str]:
    """The obvious rule, one cell at a time (the implementation before distinct values)."""
    values = series.astype(object)
    missing = values.isna().to_numpy()

    def text(v: object) -> str:
        if isinstance(v, (float, np.floating)) and float(v).is_integer():
            return str(int(v))
        return str(v)

    return [BLANK if m else text(v) for v, m in zip(values.tolist(), missing)]


def numbers_per_cell(series: pd.Series) -> tuple[list[float], list[bool]]:
    """The per-cell rule of numbers_in for a column that is neither numeric nor boolean."""
    mask = [
        isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) and not pd.isna(v)
        for v in series.tolist()
    ]
    return [float(v) if m else np.nan for v, m in zip(series.tolist(), mask)], mask


def holds_per_cell(series: pd.Series) -> bool:
    _, mask = numbers_per_cell(series)
    others = [v for v, m in zip(series.tolist(), mask) if not m]
    return any(mask) and all(pd.isna(v) or v == SUPPRESSED for v in others)


def assert_numbers_as_per_cell(series: pd.Series) -> None:
    values, mask = numbers_in(series)
    expected_values, expected_mask = numbers_per_cell(series)
    assert mask.tolist() == expected_mask
    np.testing.assert_array_equal(values, np.array(expected_values, dtype=float))
    assert holds_numbers(series) == holds_per_cell(series)


POOL = [
    0,
    1,
    -1,
    2,
    1.0,
    0.0,
    -0.0,
    2.5,
    -3.25,
    1e20,
    float("inf"),
    float("nan"),
    None,
    pd.NA,
    True,
    False,
    np.True_,
    np.int64(1),
    np.float64(1.0),
    np.float32(2.5),
    "1",
    "1.0",
    "True",
    "*",
    "30-39",
    "",
    " x ",
    "(blank)",
]


@pytest.mark.parametrize("seed", range(30))
def test_mixed_object_columns_read_as_each_cell(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 400))
    picks = rng.choice(len(POOL), size=n)
    series = pd.Series([POOL[i] for i in picks], dtype=object, index=rng.permutation(n) + 7)
    got = cell_texts(series)
    assert got.tolist() == per_cell(series)
    assert got.index.equals(series.index) and got.dtype == object
    assert_numbers_as_per_cell(series)


@pytest.mark.parametrize("seed", range(20))
def test_suppressed_number_columns_hold_numbers_as_per_cell(seed):
    """Numbers with * and blanks (a locally suppressed column), sometimes one interval or text among them."""
    rng = np.random.default_rng(seed)
    pool = [1, 2.5, np.int64(3), 4.0, SUPPRESSED, None, float("nan")] + (["30-39"] if seed % 3 == 0 else [])
    series = pd.Series([pool[i] for i in rng.choice(len(pool), size=int(rng.integers(1, 200)))], dtype=object)
    assert_numbers_as_per_cell(series)


@pytest.mark.parametrize("seed", range(10))
def test_typed_columns_read_as_each_cell(seed):
    rng = np.random.default_rng(seed)
    n = 300
    floats = np.round(rng.normal(0, 50, n), int(rng.integers(0, 3)))
    floats[rng.random(n) < 0.1] = np.nan
    ints = rng.integers(-5, 5, n)
    columns = [
        pd.Series(floats),
        pd.Series(ints),
        pd.Series(ints, dtype="Int64").mask(rng.random(n) < 0.1),
        pd.Series(floats, dtype="Float64"),
        pd.Series(rng.random(n) < 0.5),
        pd.Series(rng.random(n) < 0.5, dtype="boolean").mask(rng.random(n) < 0.1),
        pd.Series(rng.choice(["a", "b", "30-39"], n), dtype="string").mask(rng.random(n) < 0.1),
        pd.Series(rng.choice(["a", "b", "c"], n), dtype="category").mask(rng.random(n) < 0.1),
        pd.Series(pd.to_datetime(rng.integers(0, 10, n), unit="D")).mask(rng.random(n) < 0.1),
        pd.Series(floats[:0]),
    ]
    for series in columns:
        assert cell_texts(series).tolist() == per_cell(series), series.dtype
        if not (pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series)):
            assert_numbers_as_per_cell(series)


def test_a_bool_never_reads_as_the_number_it_equals():
    assert cell_texts(pd.Series([1, True, 1.0, False, 0], dtype=object)).tolist() == ["1", "True", "1", "False", "0"]


def test_unhashable_cells_are_read_one_by_one():
    assert cell_texts(pd.Series([[1], None, "x"], dtype=object)).tolist() == ["[1]", BLANK, "x"]
