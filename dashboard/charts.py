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


_SIZE_BINS = (1, 2, 3, 4, 5, 10, 20, 50, 100, 500, 1000)


def anonymity_vector_figure(vector: Sequence[int], k_threshold: int = 5, title: str | None = None) -> go.Figure:
    """Bars of the anonymity vector: classes of each size; sizes below the
    threshold in the at-risk colour. Hover: size, classes, records.

    Long vectors (more than 30 distinct class sizes) are shown in size ranges
    (1, 2, 3, 4, 5-9, 10-19, ...) so the small classes that matter stay readable.

    >>> fig = anonymity_vector_figure((0, 1, 0, 2, 1))
    >>> list(fig.data[0].x), list(fig.data[0].y)
    (['2', '4', '5'], [1, 2, 1])
    >>> fig = anonymity_vector_figure((1,) * 40)
    >>> list(fig.data[0].x), list(fig.data[0].y)
    (['1', '2', '3', '4', '5-9', '10-19', '20-40'], [1, 1, 1, 1, 5, 10, 21])
    """
    sizes = np.arange(1, len(vector) + 1)
    counts = np.asarray(vector, dtype=np.int64)
    present = counts > 0
    sizes, counts = sizes[present], counts[present]
    if len(sizes) <= 30:
        labels = [str(s) for s in sizes]
        lows = sizes
        classes, records = counts, sizes * counts
    else:
        edges = np.array([b for b in _SIZE_BINS if b <= sizes.max()] + [sizes.max() + 1])
        which = np.searchsorted(edges, sizes, side="right") - 1
        classes = np.bincount(which, weights=counts, minlength=len(edges) - 1).astype(np.int64)
        records = np.bincount(which, weights=sizes * counts, minlength=len(edges) - 1).astype(np.int64)
        lows = edges[:-1]
        labels = [
            str(lo) if hi - lo == 1 else f"{lo}-{hi - 1}" for lo, hi in zip(edges[:-1], edges[1:])
        ]
        keep = classes > 0
        labels = [lab for lab, k in zip(labels, keep) if k]
        lows, classes, records = lows[keep], classes[keep], records[keep]
    colours = [AT_RISK if lo < k_threshold else SAFE for lo in lows]
    fig = go.Figure(
        go.Bar(
            x=labels,
            y=classes.tolist(),
            marker_color=colours,
            customdata=records.tolist(),
            hovertemplate="class size %{x}<br>%{y:,} classes<br>%{customdata:,} records<extra></extra>",
        )
    )
    fig.update_xaxes(type="category")
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
