"""``anonlib.workflow.cost._changed_cells`` written per distinct value equals the per-cell way."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anonlib.workflow.cost import _changed_cells, _number_text


def per_cell(old: pd.Series, new: pd.Series) -> np.ndarray:
    """The former per-cell comparison (every changed cell written as text in Python)."""
    a, b = old.astype(object).to_numpy(), new.astype(object).to_numpy()
    blank_a, blank_b = pd.isna(a), pd.isna(b)
    same = blank_a & blank_b
    both = ~blank_a & ~blank_b
    same[both] = np.asarray(a[both] == b[both], dtype=bool)
    numbers = pd.api.types.is_numeric_dtype(old) and not pd.api.types.is_bool_dtype(old)
    if numbers and not pd.api.types.is_numeric_dtype(new):
        rest = np.flatnonzero(both & ~same)
        if rest.size:
            same[rest] = [_number_text(x) == str(y).strip() for x, y in zip(a[rest], b[rest])]
    return ~same


TEXTS = np.array(
    ["64", "064", "30.0", "30", " 30 ", "30-39", "90 or older", "*", "nan", "1", "1.0", "True", "-0", "1e20", ""],
    dtype=object,
)


def old_column(rng: np.random.Generator, kind: str, n: int) -> pd.Series:
    whole = rng.integers(-2, 100, n)
    if kind == "int":
        return pd.Series(whole)
    if kind == "nullable":
        return pd.Series(pd.array(np.where(rng.random(n) < 0.1, None, whole), dtype="Int64"))
    values = np.where(rng.random(n) < 0.5, whole, whole + rng.choice([0.5, 0.25, 1e-9], n))
    values[rng.random(n) < 0.1] = np.nan
    values[rng.random(n) < 0.02] = rng.choice([np.inf, -np.inf, 1e20, -0.0])
    return pd.Series(values)


def new_column(rng: np.random.Generator, old: pd.Series) -> pd.Series:
    n = len(old)
    choice = rng.integers(0, 8, n)
    values = old.astype(object).to_numpy(copy=True)
    texts = TEXTS[rng.integers(0, len(TEXTS), n)]
    as_text = np.array([str(v) for v in values], dtype=object)
    numbers = np.array([1, 1.0, True, 30, 30.0, 64.5, -0.0], dtype=object)[rng.integers(0, 7, n)]
    values = np.where(choice == 0, texts, values)  # other text
    values = np.where(choice == 1, as_text, values)  # the number written as text (64 and "64.0")
    values = np.where(choice == 2, numbers, values)  # numbers of other types, in a text column
    values = np.where(choice == 3, None, values)  # blanks of every kind
    values = np.where(choice == 4, np.nan, values)
    values = np.where(choice == 5, pd.NA, values)
    return pd.Series(values, dtype=object)


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("kind", ["int", "float", "nullable"])
def test_changed_cells_equal_the_per_cell_comparison_on_random_columns(kind, seed):
    rng = np.random.default_rng(seed)
    old = old_column(rng, kind, int(rng.integers(1, 400)))
    new = new_column(rng, old)
    expected = per_cell(old, new)
    assert _changed_cells(old, new).tolist() == expected.tolist()
    assert expected.any() and not expected.all() or len(old) < 20


def test_numbers_written_as_text_are_the_same_value():
    old = pd.Series([64, 30.0, 30.5, 7, np.nan, 12])
    new = pd.Series(["64", "30", "30.5", "007", None, "12.0"], dtype=object)
    assert _changed_cells(old, new).tolist() == [False, False, False, True, False, True]


def test_empty_and_blank_columns():
    assert _changed_cells(pd.Series([], dtype=float), pd.Series([], dtype=object)).tolist() == []
    old, new = pd.Series([np.nan, 1.0, np.nan]), pd.Series([None, None, pd.NA], dtype=object)
    assert _changed_cells(old, new).tolist() == per_cell(old, new).tolist() == [False, True, False]
