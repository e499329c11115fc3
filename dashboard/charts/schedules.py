"""Charts of the Screening schedules page: anonymity vectors of schedules, the load per
slot, and the paper's Table 10."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .base import QUALITATIVE, SAFE, escape_text, laid_out, titled
from .risk import class_size_bins, count_axis

# --- schedules ---


def schedule_vectors_figure(vectors: dict[str, Sequence[int]]) -> go.Figure:
    """Grouped bars: the anonymity vectors of several schedules side by side.

    One bar group per class size that occurs in any vector (size ranges when
    more than 30 sizes occur, a log count axis when counts span more than two
    orders of magnitude); hover shows the schedule, the class size, the number
    of classes and of records. Schedules with identical vectors are named in the
    title, so equal bars read as a result, not a bug.

    >>> fig = schedule_vectors_figure({"before": (0, 1, 0, 2, 1), "heuristic": (2, 3, 1, 1)})
    >>> [t.name for t in fig.data], list(fig.data[1].x), list(fig.data[1].y)
    (['before', 'heuristic'], ['1', '2', '3', '4', '5'], [2, 3, 1, 1, 0])
    >>> schedule_vectors_figure({"heuristic": (0, 2), "optimal": (0, 2, 0)}).layout.title.text
    'Anonymity vectors: classes of each size (fewer on the left is better)<br><sup>heuristic and optimal: identical vectors</sup>'
    """
    names = list(vectors)
    bins = class_size_bins([vectors[n] for n in names])
    fig = go.Figure()
    for position, name in enumerate(names):
        fig.add_trace(
            go.Bar(
                name=name,
                x=bins.labels,
                y=bins.classes[position].tolist(),
                marker_color=QUALITATIVE[position % len(QUALITATIVE)],
                customdata=bins.records[position].tolist(),
                hovertemplate=f"{escape_text(name)}<br>class size %{{x}}<br>%{{y:,}} classes<br>%{{customdata:,}} records<extra></extra>",
            )
        )
    fig.update_layout(barmode="group", legend_title_text="schedule")
    fig.update_xaxes(type="category")
    count_axis(fig, bins.classes)
    same = _identical_groups({n: _trimmed(vectors[n]) for n in names})
    note = "; ".join(" and ".join(group) + ": identical vectors" for group in same)
    fig = laid_out(fig, "", "equivalence-class size j", "number of classes k(j)")
    return titled(fig, "Anonymity vectors: classes of each size (fewer on the left is better)", note)


def _trimmed(vector: Sequence[int]) -> tuple[int, ...]:
    """The vector without trailing zeros (the same classes, written shorter)."""
    values = [int(v) for v in vector]
    while values and values[-1] == 0:
        values.pop()
    return tuple(values)


def _identical_groups(values: dict[str, object]) -> list[list[str]]:
    """Names whose values are equal, in groups of two or more (first-seen order).

    >>> _identical_groups({"a": 1, "b": 2, "c": 1, "d": 3})
    [['a', 'c']]
    """
    groups: dict[object, list[str]] = {}
    for name, value in values.items():
        groups.setdefault(value, []).append(name)
    return [g for g in groups.values() if len(g) > 1]


def resource_load_figure(labels: Sequence[str], capacity: Sequence[int], assigned: Sequence[int]) -> go.Figure:
    """Per resource: capacity (outline) and records assigned (filled bars).

    >>> fig = resource_load_figure(["A 9h", "B 9h"], [4, 3], [4, 1])
    >>> [t.name for t in fig.data], list(fig.data[1].y)
    (['capacity', 'assigned'], [4, 1])
    """
    labels = [str(x) for x in labels]
    fig = go.Figure(
        [
            go.Bar(
                name="capacity",
                x=labels,
                y=list(capacity),
                marker_color="rgba(0,0,0,0)",
                marker_line=dict(color="#000000", width=1),
                customdata=[escape_text(x) for x in labels],
                hovertemplate="%{customdata}: capacity %{y:,}<extra></extra>",
            ),
            go.Bar(
                name="assigned",
                x=labels,
                y=list(assigned),
                marker_color=SAFE,
                customdata=[escape_text(x) for x in labels],
                hovertemplate="%{customdata}: %{y:,} records<extra></extra>",
            ),
        ]
    )
    fig.update_layout(barmode="overlay")
    fig.update_xaxes(type="category")
    count_axis(fig, [np.asarray(capacity), np.asarray(assigned)])
    return laid_out(fig, "Load per resource", "resource", "records (seats)")


def table10_figure(frame, ours: str, paper: str, title: str) -> go.Figure:
    """Our reproduction next to the paper's numbers, per population size N.

    >>> import pandas as pd
    >>> f = pd.DataFrame({"N": [20, 50], "x": [30.0, 60.0], "p": [24.0, 62.0]})
    >>> [t.name for t in table10_figure(f, "x", "p", "t").data]
    ['this reproduction', 'paper']
    """
    fig = go.Figure(
        [
            go.Scatter(
                name="this reproduction",
                x=[str(n) for n in frame["N"]],
                y=frame[ours],
                mode="lines+markers",
                marker_color=QUALITATIVE[0],
                hovertemplate="N = %{x}: %{y:.2f}%<extra></extra>",
            ),
            go.Scatter(
                name="paper",
                x=[str(n) for n in frame["N"]],
                y=frame[paper],
                mode="lines+markers",
                marker_color=QUALITATIVE[1],
                line=dict(dash="dash"),
                hovertemplate="N = %{x}: %{y:.0f}% (paper)<extra></extra>",
            ),
        ]
    )
    fig.update_xaxes(type="category")
    return laid_out(fig, title, "population size N", "mean improvement (%)")
