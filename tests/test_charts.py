"""Hover texts of the charts escape user strings: plotly renders links and bold there."""

from __future__ import annotations

import numpy as np
import pandas as pd

from anonlib.anonymize import SearchNode
from anonlib.peers import heatmap_columns
from dashboard import charts

HOSTILE = '<a href="http://example.invalid">x</a>'
ESCAPED = "&lt;a href=&quot;http://example.invalid&quot;&gt;x&lt;/a&gt;"


def _texts(fig) -> str:
    parts = []
    for trace in fig.data:
        for field in ("customdata", "hovertext", "text", "hovertemplate"):
            value = getattr(trace, field, None)
            if value is not None:
                parts.append(str(np.asarray(value, dtype=object).tolist()))
    return " ".join(parts)


def test_hover_texts_escape_user_values() -> None:
    values = np.array([[0.0, 1.0]])
    figures = [
        charts.privacy_heatmap(values, [HOSTILE], heatmap_columns(values), threshold=0.0,
                               palette="red to green (as in the papers)", value_label="min PPP", title="t",
                               individual_text=[HOSTILE, "b"], cell_notes=np.array([[HOSTILE, "n"]], dtype=object)),
        charts.leakage_figure(pd.DataFrame({"attribute": [HOSTILE], "partitions": [2], "loss": [0.5],
                                            "normalized": [0.1]})),
        charts.leakage_before_after_figure(pd.DataFrame({"attribute": [HOSTILE], "before": [0.6], "after": [0.0],
                                                         "change": [-0.6]})),
        charts.search_tree_figure([SearchNode((0,), 2, 5), SearchNode((1,), 0, 3, 0, HOSTILE)], [HOSTILE]),
        charts.resource_load_figure([HOSTILE], [3], [1]),
        charts.schedule_vectors_figure({HOSTILE: (1, 1)}),
    ]
    for fig in figures:
        text = _texts(fig)
        assert ESCAPED in text
        assert "<a " not in text


def test_leakage_hover_keeps_numbers_numeric() -> None:
    fig = charts.leakage_figure(pd.DataFrame({"attribute": ["Sex"], "partitions": [2], "loss": [0.99],
                                              "normalized": [0.17]}))
    assert list(fig.data[0].customdata[0]) == [2, 0.99, "Sex"]


def test_titles_escape_user_names() -> None:
    fig = charts.npp_histogram(np.array([0, 1]), np.ones(2), HOSTILE)
    assert ESCAPED in fig.layout.title.text and "<a " not in fig.layout.title.text
