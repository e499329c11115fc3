"""Top and bottom coding (``anonlib.transformations.coding``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonlib.core.errors import ColumnError, ParameterError
from anonlib.transformations.coding import thresholds, top_bottom_code


@st.composite
def columns(draw):
    n = draw(st.integers(1, 30))
    values = draw(st.lists(st.one_of(st.none(), st.integers(-20, 20)), min_size=n, max_size=n))
    counts = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    return pd.DataFrame({"x": pd.array(values, dtype="Int64"), "n": counts, "other": range(n)})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(columns(), st.integers(-25, 25), st.integers(0, 25))
def test_values_beyond_the_thresholds_become_the_thresholds_and_the_rest_stay(frame, bottom, width):
    top = bottom + width
    result = top_bottom_code(frame, "x", top=top, bottom=bottom, count="n")
    before, after = frame["x"], result.table["x"]
    assert after.isna().equals(before.isna())
    present = before.notna()
    expected = before[present].clip(lower=bottom, upper=top)
    assert after[present].tolist() == expected.tolist()
    assert result.top_records == int(frame["n"][present & (before > top)].sum())
    assert result.bottom_records == int(frame["n"][present & (before < bottom)].sum())
    assert result.table["other"].equals(frame["other"]) and result.table.index.equals(frame.index)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(columns(), st.sampled_from([0.0, 0.05, 0.1, 0.25, 0.5, 0.9, 0.95, 0.99, 1.0]))
def test_quantile_thresholds_are_the_records_inverted_cdf(frame, share):
    present = frame["x"].notna()
    records = np.repeat(frame["x"][present].astype(float).to_numpy(), frame["n"][present].to_numpy())
    if not len(records):
        with pytest.raises(ParameterError):
            thresholds(frame, "x", top_quantile=share, count="n")
        return
    top, bottom = thresholds(frame, "x", top_quantile=share, bottom_quantile=share, count="n")
    expected = float(np.quantile(records, share, method="inverted_cdf"))
    assert top == bottom == expected


def test_bad_input_is_one_sentence():
    frame = pd.DataFrame({"x": [1, 2, 3], "t": ["a", "b", "c"]})
    for call, error in [
        (lambda: top_bottom_code(frame, "t", top=1), ColumnError),
        (lambda: top_bottom_code(frame, "nope", top=1), ColumnError),
        (lambda: top_bottom_code(frame, "x", top=1, top_quantile=0.9), ParameterError),
        (lambda: top_bottom_code(frame, "x", top_quantile=1.5), ParameterError),
        (lambda: top_bottom_code(frame, "x", top=1, bottom=2), ParameterError),
        (lambda: top_bottom_code(frame, "x", top=float("inf")), ParameterError),
    ]:
        with pytest.raises(error) as info:
            call()
        assert str(info.value).endswith(".")


def test_a_fractional_threshold_turns_an_integer_column_into_numbers():
    table = top_bottom_code(pd.DataFrame({"x": [1, 5, 9]}), "x", top=7.5).table
    assert table["x"].tolist() == [1.0, 5.0, 7.5]
    assert top_bottom_code(pd.DataFrame({"x": [1, 5, 9]}), "x", top=7).table["x"].dtype.kind == "i"
