"""Charts of the Risk-utility frontier page: every policy, the frontier as a step line,
the area traces of SHS and RCS, and which frontier policy a click picked."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .base import DEFAULT_PALETTE, PALETTES, QUALITATIVE, Palette, laid_out, scatter_trace

# --- frontier ---


def _frontier_colours(palette: Palette) -> dict[str, str]:
    """What each element of the frontier charts is drawn in."""
    return {
        "evaluated": palette.neutral,
        "frontier": palette.series[0],
        "safe_harbor": palette.at_risk,
        "dominating": palette.highlight,
        "selected": "#000000",
        "shs": palette.series[0],
        "rcs": palette.series[1],
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
    colours: str = DEFAULT_PALETTE,
) -> go.Figure:
    """Evaluated policies (dots), the frontier as a step line, Safe Harbor (star),
    the frontier policies that dominate it (squares) and the selected policy (ring).
    Axes: risk and normalized information loss, both in [0, 1].

    >>> fig = frontier_figure([0.2, 0.5, 1.0], [1.0, 0.6, 0.0], [0.2, 1.0], [1.0, 0.0], safe_harbor=(0.6, 0.7))
    >>> [t.name for t in fig.data], fig.data[1].line.shape
    (['evaluated policies', 'frontier', 'HIPAA Safe Harbor'], 'hv')
    """
    palette = _frontier_colours(PALETTES[colours])
    hover = "risk %{x:.4f}<br>loss (normalized) %{y:.4f}<extra>%{fullData.name}</extra>"
    fig = go.Figure()
    fig.add_trace(
        scatter_trace(
            len(evaluated_risk),
            x=list(evaluated_risk),
            y=list(evaluated_loss),
            mode="markers",
            name="evaluated policies",
            marker=dict(size=4, color=palette["evaluated"], opacity=0.45),
            hovertemplate=hover,
        )
    )
    order = np.argsort(np.asarray(frontier_risk, dtype=float), kind="stable")
    fig.add_trace(
        go.Scatter(
            x=np.asarray(frontier_risk, dtype=float)[order].tolist(),
            y=np.asarray(frontier_loss, dtype=float)[order].tolist(),
            mode="lines+markers",
            line=dict(shape="hv", color=palette["frontier"], width=2),
            marker=dict(size=6),
            name="frontier",
            customdata=(order + 1).tolist(),
            hovertemplate="frontier policy %{customdata}<br>" + hover,
        )
    )
    if safe_harbor is not None:
        fig.add_trace(
            go.Scatter(
                x=[safe_harbor[0]],
                y=[safe_harbor[1]],
                mode="markers",
                name="HIPAA Safe Harbor",
                marker=dict(symbol="star", size=16, color=palette["safe_harbor"]),
                hovertemplate=hover,
            )
        )
    if dominating is not None and len(dominating[0]):
        fig.add_trace(
            go.Scatter(
                x=list(dominating[0]),
                y=list(dominating[1]),
                mode="markers",
                name="frontier policies dominating Safe Harbor",
                marker=dict(symbol="square", size=9, color=palette["dominating"]),
                hovertemplate=hover,
            )
        )
    if selected is not None:
        fig.add_trace(
            go.Scatter(
                x=[selected[0]],
                y=[selected[1]],
                mode="markers",
                name="selected policy",
                marker=dict(symbol="circle-open", size=18, line=dict(width=3), color=palette["selected"]),
                hovertemplate=hover,
            )
        )
    fig.update_xaxes(range=[-0.02, 1.02])
    fig.update_yaxes(range=[-0.02, 1.02])
    fig = laid_out(fig, "Risk-utility frontier", "re-identification risk", "information loss (KL / KL of top)")
    # the legend under the plot: on the right it would take a third of a 1024 px window
    return fig.update_layout(legend=dict(orientation="h", yanchor="top", y=-0.18, x=0), height=520)


def area_trace_figure(
    traces: dict[str, Sequence[tuple[int, float]]],
    budget: int,
    optimum: float | None = None,
    colours: str = DEFAULT_PALETTE,
) -> go.Figure:
    """Area under the frontier against policies evaluated, one step line per method.

    >>> fig = area_trace_figure({"shs": [(2, 0.9), (10, 0.5)]}, 20)
    >>> list(fig.data[0].x), list(fig.data[0].y)
    ([2, 10, 20], [0.9, 0.5, 0.5])
    """
    palette = _frontier_colours(PALETTES[colours])
    fig = go.Figure()
    for method, trace in traces.items():
        xs = [n for n, _ in trace]
        ys = [a for _, a in trace]
        if xs and xs[-1] < budget:
            xs.append(budget)
            ys.append(ys[-1])
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines",
                line=dict(shape="hv", color=palette.get(method, QUALITATIVE[0])),
                name=method.upper(),
                hovertemplate="%{x:,} policies: area %{y:.4f}<extra>%{fullData.name}</extra>",
            )
        )
    if optimum is not None:
        fig.add_hline(y=optimum, line_dash="dot", annotation_text="exhaustive optimum")
    return laid_out(fig, "Area under the frontier (smaller is better)", "policies evaluated", "area")


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
