"""Every chart of the dashboard: functions from anonlib results to plotly figures.

No Streamlit here, so each builder is tested on its own. Hover texts carry the
exact numbers. Colour scales default to colour-blind-safe ones; the papers'
red-to-green scale is offered as an option, never the only one.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go

# Colour-blind-safe defaults (Okabe-Ito qualitative; cividis sequential) and
# the papers' red-to-green scale as an option.
QUALITATIVE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]
SEQUENTIAL_SAFE = "Cividis"
SEQUENTIAL_RED_GREEN = [[0.0, "#8b0000"], [0.5, "#ffd700"], [1.0, "#1a9850"]]
PALETTES = {"colour-blind safe (cividis)": SEQUENTIAL_SAFE, "red to green (as in the papers)": SEQUENTIAL_RED_GREEN}
AT_RISK = "#D55E00"
SAFE = "#0072B2"


def _layout(fig: go.Figure, title: str, x: str, y: str) -> go.Figure:
    fig.update_layout(
        title=title,
        xaxis_title=x,
        yaxis_title=y,
        template="plotly_white",
        margin=dict(l=10, r=10, t=50, b=10),
        hoverlabel=dict(namelength=-1),
    )
    return fig


def anonymity_vector_figure(vector: Sequence[int], k_threshold: int = 5, title: str | None = None) -> go.Figure:
    """Bars of the anonymity vector: classes of each size; sizes below the
    threshold in the at-risk colour. Hover: size, classes, records.

    >>> fig = anonymity_vector_figure((0, 1, 0, 2, 1))
    >>> list(fig.data[0].x), list(fig.data[0].y)
    ([2, 4, 5], [1, 2, 1])
    """
    sizes = np.arange(1, len(vector) + 1)
    counts = np.asarray(vector, dtype=np.int64)
    present = counts > 0
    sizes, counts = sizes[present], counts[present]
    colours = [AT_RISK if s < k_threshold else SAFE for s in sizes]
    fig = go.Figure(
        go.Bar(
            x=sizes.tolist(),
            y=counts.tolist(),
            marker_color=colours,
            customdata=(sizes * counts).tolist(),
            hovertemplate="class size %{x}<br>%{y:,} classes<br>%{customdata:,} records<extra></extra>",
        )
    )
    if len(sizes) and sizes.max() > 60:
        fig.update_xaxes(type="log")
    return _layout(
        fig,
        title or f"Anonymity vector (orange: classes smaller than {k_threshold})",
        "equivalence-class size j",
        "number of classes k(j)",
    )


def records_at_risk_figure(records_below: Sequence[tuple[int, int]], total: int) -> go.Figure:
    """Share of records in classes smaller than each threshold.

    >>> records_at_risk_figure([(2, 5), (5, 10)], 20).data[0].y
    (25.0, 50.0)
    """
    labels = [f"class < {t}" for t, _ in records_below]
    shares = [100.0 * n / total if total else 0.0 for _, n in records_below]
    counts = [n for _, n in records_below]
    fig = go.Figure(
        go.Bar(
            x=labels,
            y=shares,
            marker_color=AT_RISK,
            customdata=counts,
            hovertemplate="%{x}: %{customdata:,} records (%{y:.2f}%)<extra></extra>",
        )
    )
    fig.update_yaxes(range=[0, 100])
    return _layout(fig, "Records at risk", "", "% of records")


# --- schedules ---


def schedule_vectors_figure(vectors: dict[str, Sequence[int]]) -> go.Figure:
    """Grouped bars: the anonymity vectors of several schedules side by side.

    One bar group per class size that occurs in any vector; hover shows the
    schedule, the class size, the number of classes and of people.

    >>> fig = schedule_vectors_figure({"before": (0, 1, 0, 2, 1), "heuristic": (2, 3, 1, 1)})
    >>> [t.name for t in fig.data], list(fig.data[1].x), list(fig.data[1].y)
    (['before', 'heuristic'], ['1', '2', '3', '4', '5'], [2, 3, 1, 1, 0])
    """
    length = max((len(v) for v in vectors.values()), default=0)
    used = [j for j in range(1, length + 1) if any(j <= len(v) and v[j - 1] for v in vectors.values())]
    fig = go.Figure()
    for position, (name, vector) in enumerate(vectors.items()):
        counts = [int(vector[j - 1]) if j <= len(vector) else 0 for j in used]
        fig.add_trace(
            go.Bar(
                name=name,
                x=[str(j) for j in used],
                y=counts,
                marker_color=QUALITATIVE[position % len(QUALITATIVE)],
                customdata=[j * c for j, c in zip(used, counts)],
                hovertemplate=f"{name}<br>class size %{{x}}<br>%{{y:,}} classes<br>%{{customdata:,}} people<extra></extra>",
            )
        )
    fig.update_layout(barmode="group", legend_title_text="schedule")
    fig.update_xaxes(type="category")
    return _layout(fig, "Anonymity vectors: classes of each size (fewer on the left is better)",
                   "equivalence-class size j", "number of classes k(j)")


def resource_load_figure(labels: Sequence[str], capacity: Sequence[int], assigned: Sequence[int]) -> go.Figure:
    """Per resource: capacity (outline) and people assigned (filled bars).

    >>> fig = resource_load_figure(["A 9h", "B 9h"], [4, 3], [4, 1])
    >>> [t.name for t in fig.data], list(fig.data[1].y)
    (['capacity', 'assigned'], [4, 1])
    """
    labels = [str(x) for x in labels]
    fig = go.Figure(
        [
            go.Bar(name="capacity", x=labels, y=list(capacity), marker_color="rgba(0,0,0,0)",
                   marker_line=dict(color="#000000", width=1),
                   hovertemplate="%{x}: capacity %{y:,}<extra></extra>"),
            go.Bar(name="assigned", x=labels, y=list(assigned), marker_color=SAFE,
                   hovertemplate="%{x}: %{y:,} people<extra></extra>"),
        ]
    )
    fig.update_layout(barmode="overlay")
    fig.update_xaxes(type="category")
    return _layout(fig, "Load per resource", "resource", "people")


def table10_figure(frame, ours: str, paper: str, title: str) -> go.Figure:
    """Our reproduction next to the paper's numbers, per population size N.

    >>> import pandas as pd
    >>> f = pd.DataFrame({"N": [20, 50], "x": [30.0, 60.0], "p": [24.0, 62.0]})
    >>> [t.name for t in table10_figure(f, "x", "p", "t").data]
    ['this reproduction', 'paper']
    """
    fig = go.Figure(
        [
            go.Scatter(name="this reproduction", x=[str(n) for n in frame["N"]], y=frame[ours],
                       mode="lines+markers", marker_color=QUALITATIVE[0],
                       hovertemplate="N = %{x}: %{y:.2f}%<extra></extra>"),
            go.Scatter(name="paper", x=[str(n) for n in frame["N"]], y=frame[paper],
                       mode="lines+markers", marker_color=QUALITATIVE[1], line=dict(dash="dash"),
                       hovertemplate="N = %{x}: %{y:.0f}% (paper)<extra></extra>"),
        ]
    )
    fig.update_xaxes(type="category")
    return _layout(fig, title, "population size N", "mean improvement (%)")
