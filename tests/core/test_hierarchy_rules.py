"""A hierarchy places values it does not list by its own rule (anonlib.core.hierarchy_rules)."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from anonlib.core.default_hierarchy import default_hierarchy
from anonlib.core.errors import HierarchyError
from anonlib.core.hierarchy import (
    date_hierarchy,
    generalize_column,
    hierarchy_columns,
    interval_hierarchy,
    masking_hierarchy,
    parse_bands,
    value_key,
)
from anonlib.core.hierarchy_rules import cover_by_rule, cover_top

BAND = re.compile(r"^([\[(])(-?[\d.]+)-(-?[\d.]+)([\])])$")


def _holds(label: str, x: float) -> bool:
    """Whether a label of the interval hierarchies holds ``x`` (what it says, read back)."""
    if label == "*":
        return True
    if label.startswith("<"):
        return x < float(label[1:])
    if label.startswith(">"):
        return x > float(label[1:])
    m = BAND.match(label)
    assert m is not None, label
    low, high = float(m.group(2)), float(m.group(3))
    above_low = low < x if m.group(1) == "(" else low <= x
    return above_low and (x < high if m.group(4) == ")" else x <= high)


@settings(max_examples=60, deadline=None)
@given(
    seen=st.lists(st.integers(0, 120), min_size=12, max_size=60, unique=True),
    later=st.lists(st.integers(-50, 300), min_size=1, max_size=20),
)
def test_a_later_number_falls_in_a_band_that_holds_it_at_every_level(seen, later):
    """Bands over the whole line: every new number gets, at every level, a label that holds it,
    the rows already listed are unchanged, and each label keeps one parent."""
    table = default_hierarchy(seen, "age")[1]
    new = [str(x) for x in dict.fromkeys(later) if str(x) not in set(table[0])]
    extended, placed = cover_by_rule(table, new)
    assert list(placed) == new  # every number placed: a number is never refused
    assert extended.iloc[: len(table)].values.tolist() == table.values.tolist()
    columns = hierarchy_columns(extended)  # one parent per label
    for row in extended.iloc[len(table) :].values.tolist():
        assert all(_holds(label, float(row[0])) for label in row[1:]), row
    assert len(columns[0]) == len(table) + len(new)


def test_bands_with_tails_send_numbers_beyond_them_to_the_tail_codes():
    table = interval_hierarchy([3, 20, 35, 97], parse_bands("20-34, 35-49 | 20-49"), below=20, above=49)
    extended, placed = cover_by_rule(table, ["7", "99", "41"])
    assert placed == ("7", "99", "41")
    assert extended.values.tolist()[-3:] == [["7", "<20", "<20"], ["99", ">49", ">49"], ["41", "[35-49]", "[20-49]"]]
    # without values in the tails the table names no tail code: a band of the grid below the lowest
    plain = interval_hierarchy([20, 35], parse_bands("20-34, 35-49 | 20-49"))
    assert cover_by_rule(plain, ["7"])[0].values.tolist()[-1] == ["7", "[5-19]", "[-10-19]"]


def test_a_gap_or_a_value_past_the_ends_gets_a_new_band_of_the_grid():
    table = interval_hierarchy([20, 23, 41], parse_bands("20-24, 40-44 | 20-29, 40-49"), top=True)
    extended, _ = cover_by_rule(table, ["31", "57"])
    assert extended.values.tolist()[-2:] == [["31", "[30-34]", "[30-39]", "*"], ["57", "[55-59]", "[50-59]", "*"]]
    age = pd.Series([20, 31, 57])
    assert generalize_column(age, extended, 1, "age").tolist() == ["[20-24]", "[30-34]", "[55-59]"]


def test_decimal_bands_place_a_decimal_in_the_band_holding_it():
    table = default_hierarchy([35.5, 36.2, 40.0, 41.7, 50.1, 22.3, 27.9, 33.3, 38.8, 44.4, 47.7, 60.2], "bmi")[1]
    extended, placed = cover_by_rule(table, ["18.25", "71.5"])
    assert placed == ("18.25", "71.5")
    for row in extended.values.tolist()[-2:]:
        assert all(_holds(label, float(row[0])) for label in row[1:]), row


def test_masked_codes_and_dates_get_the_row_their_builder_gives():
    zips = masking_hierarchy(["37201", "37205"])
    extended, placed = cover_by_rule(zips, ["37299", "9021"])  # 9021: a ZIP read as a number, zero lost
    assert placed == ("37299", "9021")
    assert extended.values.tolist()[-2:] == masking_hierarchy(["37299", "9021"], width=5).values.tolist()
    dates = date_hierarchy(["2020-01-05", "2020-02-11"])
    extended, placed = cover_by_rule(dates, ["2031-12-30"])
    assert extended.values.tolist()[-1] == ["2031-12-30", "2031-12", "2031-Q4", "2031", "2030s", "*"]


def test_categories_have_no_rule_and_go_to_the_top_only_when_asked():
    table = pd.DataFrame([["flu", "infection", "*"], ["copd", "chronic", "*"]])
    extended, placed = cover_by_rule(table, ["gout"])
    assert placed == () and extended is table
    assert cover_top(table, ["gout"]).values.tolist()[-1] == ["gout", "*", "*"]
    several_tops = pd.DataFrame([["a", "A"], ["b", "B"]])
    with pytest.raises(HierarchyError, match="no single top value"):
        cover_top(several_tops, ["c"])


def test_a_hand_written_hierarchy_of_words_over_numbers_is_not_guessed():
    table = pd.DataFrame([["20", "young", "*"], ["70", "old", "*"]])
    assert cover_by_rule(table, ["45"])[1] == ()


@settings(max_examples=60, deadline=None)
@given(
    seen=st.lists(st.integers(0, 1000).map(lambda v: v / 10), min_size=12, max_size=60, unique=True),
    later=st.lists(st.integers(-500, 2000).map(lambda v: v / 10), min_size=1, max_size=20),
)
# 5 on the open low edge of the lowest band "(5-6]", above "<4": placed in "(4-5]" (it raised)
@example(seen=[0.0, 5.1, 5.2, 5.3, 5.4, 5.5, 5.6, 5.7, 5.8, 5.9, 6.0, 6.1], later=[5.0])
def test_every_decimal_label_holds_exactly_its_values_listed_or_placed(seen, later):
    """Decimal bands touch ("[30-35]", "(35-40]"): every label, listed or made for a later value,
    holds the value it is given, read back by its brackets."""
    table = default_hierarchy(seen, "bmi")[1]
    new = [k for k in dict.fromkeys(value_key(x) for x in later) if k not in set(table[0])]
    extended, placed = cover_by_rule(table, new)
    assert list(placed) == new
    hierarchy_columns(extended)
    for row in extended.values.tolist():
        assert all(_holds(label, float(row[0])) for label in row[1:]), row
