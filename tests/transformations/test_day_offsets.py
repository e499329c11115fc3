"""Whole-number day offsets are time (linkable.md part 2, section 8): a visit day since
enrolment or a pandemic day gets bands of weeks, months of 28 days and years of 364 days, each
band inside one band of the next level, and ``--shift-dates`` moves it per person like a date
(it was refused as "not dates written as YYYY-MM-DD")."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonlib.cli import main
from anonlib.core.default_hierarchy import day_bands, default_hierarchy
from anonlib.core.errors import ColumnError
from anonlib.transformations.pseudonyms import date_columns, shift_dates
from tests.panel_shapes import SHAPES, covid_tests, trial


def _band(label: str) -> tuple[int, int]:
    low, high = re.fullmatch(r"\[(-?\d+)-(-?\d+)\]", label).groups()
    return int(low), int(high)


def test_a_visit_day_gets_weeks_months_and_years_each_inside_the_next():
    frame = trial()
    kind, hierarchy = default_hierarchy(frame["day"], "day")
    assert kind == "days" and hierarchy.shape[1] == 5  # the day, a week, 28 days, 364 days, *
    for _, row in hierarchy.iterrows():
        day = int(row.iloc[0])
        bands = [_band(v) for v in row.iloc[1:4]]
        assert [high - low + 1 for low, high in bands] == [7, 28, 364]
        assert all(low <= day <= high for low, high in bands)
        assert all(b[0] <= a[0] and a[1] <= b[1] for a, b in zip(bands, bands[1:]))  # nested
        assert row.iloc[-1] == "*"
    kind, hierarchy = default_hierarchy(covid_tests()["pan_day"], "pan_day")  # 4 to 107: under one year of 364
    assert kind == "days" and hierarchy.shape[1] == 4
    assert default_hierarchy([1, 15, 31], "day")[0] != "days"  # a day of the month is not an offset


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(-2000, 6000), min_size=1, max_size=30))
def test_every_day_falls_in_one_band_of_each_level(days):
    for level, width in zip(day_bands(days), (7, 28, 364)):
        lows = np.array([low for low, _ in level])
        assert all(high - low + 1 == width for low, high in level) and (lows % width == 0).all()
        for day in days:
            assert sum(low <= day <= high for low, high in level) == 1


def test_day_offsets_shift_by_one_offset_per_person_and_other_numbers_are_refused():
    frame = trial()
    offsets = frame["id"].to_numpy() % 11 - 5
    moved = shift_dates(frame["day"], offsets, "day")
    assert moved.tolist() == (frame["day"] + offsets).tolist()
    with pytest.raises(ColumnError, match="^The column 'futime' holds numbers, not dates nor days"):
        shift_dates(frame["futime"], offsets, "futime")
    assert date_columns(frame) == ("day",)  # offered on the page beside the dates


def test_shift_dates_moves_a_visit_day_per_person_on_the_command_line(tmp_path, capsys):
    make, person, time = SHAPES["trial"]
    frame = make()
    frame.to_csv(tmp_path / "trial.csv", index=False)
    argv = ["anonymize", str(tmp_path / "trial.csv"), "--shield", "sex,age", "--keep", "day", "--k", "2"]
    argv += ["--person", person, "--shift-dates", time, "--key-file", str(tmp_path / "p.key")]
    assert main([*argv, "--out", str(tmp_path / "out.csv")]) == 0
    capsys.readouterr()
    out = pd.read_csv(tmp_path / "out.csv")
    assert len(out) == len(frame)
    moved = (out[time] - frame[time]).groupby(frame[person]).agg(["nunique", "first"])
    assert (moved["nunique"] == 1).all()  # one offset per person: the intervals between visits kept
    assert moved["first"].abs().max() <= 182 and moved["first"].nunique() > 10
