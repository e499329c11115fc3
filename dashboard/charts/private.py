"""Charts of the private release: functions from ``anonlib.workflow.private_release``
results to plotly figures (no Streamlit here, tested on their own).

- ``marginals_figure``: the total variation of every one-way marginal and of the two-way
  marginals furthest from the records, beside the two baselines of the same run (two halves
  of the real records; columns drawn independently) and the targets;
- ``private_tree_figure``: the decision tree trained on the release, on real records and on
  columns drawn independently, all tested on the same real records.

Example:
    >>> import pandas as pd
    >>> from anonlib.workflow.private_release import compare_private
    >>> real = pd.DataFrame({"a": list("xxyy") * 5, "b": list("pqpq") * 5})
    >>> fig = marginals_figure(compare_private(real, real, ["a", "b"]))
    >>> [t.name for t in fig.data][:3]
    ['private release', 'two halves of the real records', 'columns drawn independently']
"""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from anonlib.workflow.private_release import ONEWAY_TARGET, TWOWAY_TARGET, PrivateComparison, TreeScores

from .base import DEFAULT_PALETTE, PALETTES, escape_text, laid_out, titled

SHOWN_PAIRS = 20  # two-way marginals drawn (the furthest from the records); the table lists every one


def _label(columns: tuple[str, ...]) -> str:
    return escape_text(" × ".join(columns))


def marginals_figure(comparison: PrivateComparison, palette: str = DEFAULT_PALETTE) -> go.Figure:
    """Total variation distance per marginal, as horizontal bars (names stay readable in a
    narrow window): every one-way marginal on top, the ``SHOWN_PAIRS`` two-way marginals
    furthest from the records below (furthest first), the release as bars, each baseline as
    a marker, each panel's target as a dashed line."""
    colours = PALETTES[palette]
    one = [m for m in comparison.marginals if len(m.columns) == 1]
    two = sorted((m for m in comparison.marginals if len(m.columns) == 2), key=lambda m: -m.release)
    shown_two = two[:SHOWN_PAIRS]
    rows = max(len(one), 1), max(len(shown_two), 1)
    height = 240 + 24 * sum(rows)
    fig = make_subplots(
        rows=2,
        cols=1,
        row_heights=[r / sum(rows) for r in rows],
        vertical_spacing=min(0.3, 95 / height),  # the lower title clears the upper panel's tick labels
        subplot_titles=(
            "one-way marginals",
            f"two-way marginals ({len(shown_two)} of {len(two)}, furthest first)" if two else "two-way marginals",
        ),
    )
    series = (
        ("private release", "release", colours.safe, "bar"),
        ("two halves of the real records", "halves", colours.neutral, "diamond"),
        ("columns drawn independently", "independent", colours.at_risk, "x"),
    )
    for panel, marginals in ((1, one), (2, shown_two)):
        labels = [_label(m.columns) for m in marginals]
        for name, attribute, colour, kind in series:
            values = [getattr(m, attribute) for m in marginals]
            common = dict(
                x=values,
                y=labels,
                name=name,
                legendgroup=attribute,
                showlegend=panel == 1,
                hovertemplate=f"%{{y}}<br>{name}: %{{x:.4f}}<extra></extra>",
            )
            if kind == "bar":
                fig.add_trace(go.Bar(orientation="h", marker_color=colour, **common), row=panel, col=1)
            else:
                fig.add_trace(
                    go.Scatter(mode="markers", marker=dict(symbol=kind, size=10, color=colour), **common),
                    row=panel,
                    col=1,
                )
    for panel, target in ((1, ONEWAY_TARGET), (2, TWOWAY_TARGET)):
        fig.add_vline(
            x=target,
            line_dash="dash",
            line_color=colours.at_risk,
            annotation_text=f"target {target:g}",
            annotation_position="top right",
            row=panel,
            col=1,
        )
    laid_out(fig, "", "", "")
    fig.update_yaxes(type="category", autorange="reversed", automargin=True)
    fig.update_xaxes(title_text="total variation distance", row=2, col=1)
    fig.update_layout(height=height, legend=dict(orientation="h", yanchor="top", y=-95 / height), margin=dict(b=80))
    return titled(
        fig,
        "Total variation of each marginal, beside the baselines",
        f"0 is the records' own distribution; largest one-way {comparison.oneway_max:.4f}, mean two-way "
        f"{comparison.twoway_mean:.4f}.",
        width=60,
    )


def private_tree_figure(tree: TreeScores, palette: str = DEFAULT_PALETTE) -> go.Figure:
    """The share of the same real records the tree predicts right, trained on the release, on
    real records and on columns drawn independently, beside always guessing the most common value."""
    colours = PALETTES[palette]
    runs = [tree.released, tree.real, tree.independent]
    names = ["private release", "real records", "columns drawn independently"]
    fig = go.Figure()
    fig.add_bar(
        x=names,
        y=[100 * r.accuracy for r in runs],
        name="decision tree",
        marker_color=[colours.safe, colours.neutral, colours.at_risk],
        customdata=[[f"{r.records_trained:,}", f"{r.records_tested:,}"] for r in runs],
        hovertemplate="trained on %{x} (%{customdata[0]} records): %{y:.1f}% of %{customdata[1]} real records "
        "right<extra></extra>",
    )
    fig.add_scatter(
        x=names,
        y=[100 * tree.real.baseline] * 3,
        mode="lines",
        name="always the most common value",
        line=dict(dash="dot", color=colours.neutral),
        hovertemplate="always guessing the most common value: %{y:.1f}%<extra></extra>",
    )
    laid_out(fig, "", "trained on", "real records predicted right (%)")
    fig.update_layout(yaxis_range=[0, 100], showlegend=True)
    return titled(
        fig,
        f"Predicting {tree.column}: each tree tested on the same real records",
        f"the release is {100 * tree.gap:+.1f} points below the tree trained on real records"
        if tree.gap >= 0
        else f"the release is {-100 * tree.gap:.1f} points above the tree trained on real records",
    )


__all__ = ["SHOWN_PAIRS", "marginals_figure", "private_tree_figure"]
