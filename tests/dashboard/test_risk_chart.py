"""The risk distribution chart (records per risk band, as ARX draws it) without Streamlit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonlib.core.samples import load_sample
from anonlib.measures.risk import RISK_BINS, reidentification, risk_distribution
from dashboard import charts


def test_the_chart_shows_the_library_numbers_on_adult() -> None:
    risk = reidentification(load_sample("adult").frame, ["age", "sex", "race"])
    fig = charts.risk_distribution_figure(risk.distribution)
    bars, line = fig.data
    shown = [b for b in risk.distribution if b.label in set(bars.x)]
    assert list(bars.x) == [b.label for b in shown] == list(RISK_BINS[len(RISK_BINS) - len(shown) :])
    assert list(bars.y) == pytest.approx([100 * b.share for b in shown])
    assert [row[0] for row in bars.customdata] == [b.records for b in shown]
    assert sum(row[0] for row in bars.customdata) == risk.records  # no records in the bands left out
    assert list(line.y) == pytest.approx([100 * b.cumulative for b in shown])
    assert line.y[-1] == pytest.approx(100.0)
    # the bands above 20% hold exactly the records at risk the panel reports
    at_risk = [row[0] for row, colour in zip(bars.customdata, bars.marker.color) if colour == charts.AT_RISK]
    assert sum(at_risk) == dict(risk.records_above)[0.2]


def test_a_hand_computed_distribution() -> None:
    """Classes of 1, 2, 2 and 10 records (15): 10 at 10%, 4 at 50%, 1 at 100%."""
    fig = charts.risk_distribution_figure(
        risk_distribution([1, 2, 2, 10]), threshold=0.5, palette="red to green (as in the papers)"
    )
    bars, line = fig.data
    records = dict(zip(bars.x, (row[0] for row in bars.customdata)))
    assert (records["9–10%"], records["33.3–50%"], records["50–100%"]) == (10, 4, 1)
    assert sum(records.values()) == 15
    colours = dict(zip(bars.x, bars.marker.color))
    red = charts.PALETTES["red to green (as in the papers)"].at_risk
    assert [label for label, c in colours.items() if c == red] == ["50–100%"]  # risk 1/2 is not above 0.5
    assert line.y[list(line.x).index("33.3–50%")] == pytest.approx(100 * 14 / 15)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 5000), min_size=1, max_size=60))
def test_shares_add_up_and_the_cumulative_rises_to_100(sizes) -> None:
    fig = charts.risk_distribution_figure(risk_distribution(sizes))
    bars, line = fig.data
    assert sum(bars.y) == pytest.approx(100.0)
    assert np.all(np.diff(line.y) >= -1e-9) and line.y[-1] == pytest.approx(100.0)
    assert bars.customdata[0][0] > 0  # starts at the lowest band holding records
