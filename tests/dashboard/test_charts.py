"""Hover texts of the charts escape user strings: plotly renders links and bold there."""

from __future__ import annotations

import numpy as np
import pandas as pd

from anonlib.measures.peers import heatmap_columns
from anonlib.transformations.generalization import SearchNode
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
        charts.privacy_heatmap(
            values,
            [HOSTILE],
            heatmap_columns(values),
            threshold=0.0,
            palette="red to green (as in the papers)",
            value_label="min PPP",
            title="t",
            individual_text=[HOSTILE, "b"],
            cell_notes=np.array([[HOSTILE, "n"]], dtype=object),
        ),
        charts.leakage_figure(
            pd.DataFrame({"attribute": [HOSTILE], "partitions": [2], "loss": [0.5], "normalized": [0.1]})
        ),
        charts.leakage_before_after_figure(
            pd.DataFrame({"attribute": [HOSTILE], "before": [0.6], "after": [0.0], "change": [-0.6]})
        ),
        charts.search_tree_figure([SearchNode((0,), 2, 5), SearchNode((1,), 0, 3, 0, HOSTILE)], [HOSTILE]),
        charts.resource_load_figure([HOSTILE], [3], [1]),
        charts.schedule_vectors_figure({HOSTILE: (1, 1)}),
    ]
    for fig in figures:
        text = _texts(fig)
        assert ESCAPED in text
        assert "<a " not in text


def test_leakage_hover_keeps_numbers_numeric() -> None:
    fig = charts.leakage_figure(
        pd.DataFrame({"attribute": ["Sex"], "partitions": [2], "loss": [0.99], "normalized": [0.17]})
    )
    assert list(fig.data[0].customdata[0]) == [2, 0.99, "Sex"]


def test_titles_escape_user_names() -> None:
    fig = charts.npp_histogram(np.array([0, 1]), np.ones(2), HOSTILE)
    assert ESCAPED in fig.layout.title.text and "<a " not in fig.layout.title.text


def test_hierarchy_figure_draws_every_node_under_its_parent_sized_by_records() -> None:
    from anonlib.core.default_hierarchy import default_hierarchy
    from anonlib.core.hierarchy import hierarchy_tree
    from anonlib.core.samples import load_sample

    ages = load_sample("adult").frame["age"]
    nodes = hierarchy_tree(default_hierarchy(ages, "age")[1], ages)
    icicle = charts.hierarchy_figure(nodes, "<b>age</b>").data[0]
    assert len(icicle.ids) == len(set(icicle.ids)) == len(nodes)  # 73 ages are few enough to draw
    assert set(icicle.parents) - {""} <= set(icicle.ids)
    size = dict(zip(icicle.ids, icicle.values))
    for _node_id, parent in zip(icicle.ids, icicle.parents):
        if parent:  # branchvalues="total": a parent holds the sum of its children
            assert size[parent] == sum(v for i, p, v in zip(icicle.ids, icicle.parents, icicle.values) if p == parent)
    assert size["4:*"] == len(ages)
    assert "&lt;b&gt;age&lt;/b&gt;" in charts.hierarchy_figure(nodes, "<b>age</b>").layout.title.text


def test_hierarchy_figure_leaves_out_thousands_of_original_values() -> None:
    from anonlib.core.hierarchy import hierarchy_tree, masking_hierarchy

    zips = [f"{37000 + i}" for i in range(1000)]
    nodes = hierarchy_tree(masking_hierarchy(zips))
    fig = charts.hierarchy_figure(nodes, "zip")
    icicle = fig.data[0]
    assert not any(i.startswith("0:") for i in icicle.ids) and len(icicle.ids) == len(nodes) - 1000
    assert "1,000 original values are left out" in fig.layout.title.text
    assert dict(zip(icicle.ids, icicle.values))["5:*****"] == 1000  # sized by original values when not counted
