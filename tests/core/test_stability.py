"""Columns stable within a person, against a plain pandas recount."""

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from anonlib.core.stability import STABLE_SHARE, stable_columns, stable_share


def _pandas_share(frame: pd.DataFrame, column: str, person: str) -> float:
    repeated = frame.groupby(person).filter(lambda g: len(g) >= 2)
    if repeated.empty:
        return 0.0
    one = repeated.groupby(person)[column].agg(lambda v: v.astype(object).fillna("<NA>").nunique() == 1)
    return float(one.mean())


def test_a_birth_year_is_stable_a_year_is_not():
    frame = pd.DataFrame(
        {"pid": [1, 1, 1, 2, 2, 3], "born": [51, 51, 51, 60, 60, 70], "year": [70, 71, 72, 70, 71, 70]}
    )
    assert stable_columns(frame, "pid", ["born", "year"]) == ("born",)
    assert stable_share(frame["born"], frame["pid"]) == 1.0 and stable_share(frame["year"], frame["pid"]) == 0.0


def test_exactly_half_is_not_stable_and_a_blank_is_a_value():
    frame = pd.DataFrame({"pid": ["a", "a", "b", "b"], "city": [1.0, 1.0, None, 2.0], "town": [None, None, "x", "x"]})
    assert stable_share(frame["city"], frame["pid"]) == 0.5 and STABLE_SHARE == 0.5
    assert stable_columns(frame, "pid", ["city", "town"]) == ("town",)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 5), st.one_of(st.none(), st.integers(0, 2))),
        min_size=1,
        max_size=30,
    )
)
def test_the_share_equals_a_pandas_recount(rows):
    frame = pd.DataFrame(rows, columns=["pid", "v"])
    frame["v"] = frame["v"].astype("Int64")
    assert stable_share(frame["v"], frame["pid"]) == _pandas_share(frame, "v", "pid")
