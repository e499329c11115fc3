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


# --- frontier ---

FRONTIER_COLOURS = {
    "colour-blind safe": {"evaluated": "#56B4E9", "frontier": "#0072B2", "safe_harbor": "#D55E00",
                          "dominating": "#009E73", "selected": "#000000", "shs": "#0072B2", "rcs": "#E69F00"},
    "red and green (as in the paper)": {"evaluated": "#9e9e9e", "frontier": "#d62728", "safe_harbor": "#1f1f1f",
                                        "dominating": "#2ca02c", "selected": "#000000", "shs": "#d62728",
                                        "rcs": "#2ca02c"},
}


def frontier_figure(
    evaluated_risk: Sequence[float],
    evaluated_loss: Sequence[float],
    frontier_risk: Sequence[float],
    frontier_loss: Sequence[float],
    *,
    safe_harbor: tuple[float, float] | None = None,
    dominating: tuple[Sequence[float], Sequence[float]] | None = None,
    selected: tuple[float, float] | None = None,
    colours: str = "colour-blind safe",
) -> go.Figure:
    """Evaluated policies (dots), the frontier as a step line, Safe Harbor (star),
    the frontier policies that dominate it (squares) and the selected policy (ring).
    Axes: risk and normalized information loss, both in [0, 1].

    >>> fig = frontier_figure([0.2, 0.5, 1.0], [1.0, 0.6, 0.0], [0.2, 1.0], [1.0, 0.0], safe_harbor=(0.6, 0.7))
    >>> [t.name for t in fig.data], fig.data[1].line.shape
    (['evaluated policies', 'frontier', 'HIPAA Safe Harbor'], 'hv')
    """
    palette = FRONTIER_COLOURS[colours]
    hover = "risk %{x:.4f}<br>loss (normalized) %{y:.4f}<extra>%{fullData.name}</extra>"
    fig = go.Figure()
    fig.add_trace(
        go.Scattergl(
            x=list(evaluated_risk), y=list(evaluated_loss), mode="markers", name="evaluated policies",
            marker=dict(size=4, color=palette["evaluated"], opacity=0.45), hovertemplate=hover,
        )
    )
    order = np.argsort(np.asarray(frontier_risk, dtype=float), kind="stable")
    fig.add_trace(
        go.Scatter(
            x=np.asarray(frontier_risk, dtype=float)[order].tolist(),
            y=np.asarray(frontier_loss, dtype=float)[order].tolist(),
            mode="lines+markers", line=dict(shape="hv", color=palette["frontier"], width=2),
            marker=dict(size=6), name="frontier", customdata=(order + 1).tolist(),
            hovertemplate="frontier policy %{customdata}<br>" + hover,
        )
    )
    if safe_harbor is not None:
        fig.add_trace(
            go.Scatter(
                x=[safe_harbor[0]], y=[safe_harbor[1]], mode="markers", name="HIPAA Safe Harbor",
                marker=dict(symbol="star", size=16, color=palette["safe_harbor"]), hovertemplate=hover,
            )
        )
    if dominating is not None and len(dominating[0]):
        fig.add_trace(
            go.Scatter(
                x=list(dominating[0]), y=list(dominating[1]), mode="markers",
                name="frontier policies dominating Safe Harbor",
                marker=dict(symbol="square", size=9, color=palette["dominating"]), hovertemplate=hover,
            )
        )
    if selected is not None:
        fig.add_trace(
            go.Scatter(
                x=[selected[0]], y=[selected[1]], mode="markers", name="selected policy",
                marker=dict(symbol="circle-open", size=18, line=dict(width=3), color=palette["selected"]),
                hovertemplate=hover,
            )
        )
    fig.update_xaxes(range=[-0.02, 1.02])
    fig.update_yaxes(range=[-0.02, 1.02])
    return _layout(fig, "Risk-utility frontier", "re-identification risk", "information loss (KL / KL of top)")


def area_trace_figure(
    traces: dict[str, Sequence[tuple[int, float]]], budget: int, optimum: float | None = None,
    colours: str = "colour-blind safe",
) -> go.Figure:
    """Area under the frontier against policies evaluated, one step line per method.

    >>> fig = area_trace_figure({"shs": [(2, 0.9), (10, 0.5)]}, 20)
    >>> list(fig.data[0].x), list(fig.data[0].y)
    ([2, 10, 20], [0.9, 0.5, 0.5])
    """
    palette = FRONTIER_COLOURS[colours]
    fig = go.Figure()
    for method, trace in traces.items():
        xs = [n for n, _ in trace]
        ys = [a for _, a in trace]
        if xs and xs[-1] < budget:
            xs.append(budget)
            ys.append(ys[-1])
        fig.add_trace(
            go.Scatter(
                x=xs, y=ys, mode="lines", line=dict(shape="hv", color=palette.get(method, QUALITATIVE[0])),
                name=method.upper(), hovertemplate="%{x:,} policies: area %{y:.4f}<extra>%{fullData.name}</extra>",
            )
        )
    if optimum is not None:
        fig.add_hline(y=optimum, line_dash="dot", annotation_text="exhaustive optimum")
    return _layout(fig, "Area under the frontier (smaller is better)", "policies evaluated", "area")


def clicked_frontier_policy(event: object, n_frontier: int) -> int | None:
    """The frontier policy (0-based) clicked on the frontier line of
    ``frontier_figure`` (trace 1, whose customdata is the 1-based policy number),
    from a plotly-chart selection event; None when no frontier point was clicked.

    >>> clicked_frontier_policy({"selection": {"points": [{"curve_number": 1, "customdata": 3}]}}, 5)
    2
    >>> clicked_frontier_policy({"selection": {"points": [{"curve_number": 0, "point_index": 3}]}}, 5) is None
    True
    """
    try:
        points = event["selection"]["points"]  # type: ignore[index]
    except (KeyError, TypeError):
        return None
    for point in points:
        number = point.get("customdata") if point.get("curve_number") == 1 else None
        if isinstance(number, list):
            number = number[0] if number else None
        if isinstance(number, (int, float)) and 1 <= number <= n_frontier:
            return int(number) - 1
    return None
