"""Charts of the Individual privacy page: the privacy heatmap (Kroes et al.'s Fig. 2),
the generalization potential and the number of protective peers."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .base import AT_RISK, PALETTES, SAFE, escape_text, laid_out

# --- peers ---


def threshold_colorscale(threshold: float, palette: str) -> list[list]:
    """A 0..1 colour scale: at or below ``threshold`` the at-risk colour (dark red
    in the paper's palette), above it a gradient towards high privacy.

    >>> threshold_colorscale(0.2, "red to green (as in the papers)")
    [[0.0, '#8B0000'], [0.2, '#8B0000'], [0.200001, '#FFD700'], [1.0, '#1A9850']]
    """
    colours = PALETTES[palette]
    risk, low, high = colours.at_risk, colours.low, colours.high
    t = min(max(float(threshold), 0.0), 0.999998)
    return [[0.0, risk], [t, risk], [round(t + 1e-6, 6), low], [1.0, high]]


def privacy_heatmap(
    values: np.ndarray,
    row_labels: Sequence[str],
    columns,
    *,
    threshold: float,
    palette: str,
    value_label: str,
    title: str,
    individual_text: Sequence[str] | None = None,
    cell_notes: np.ndarray | None = None,
) -> go.Figure:
    """The paper's Fig. 2/3 heatmap: rows = variables, columns = individuals in
    the order of ``columns`` (an ``anonlib.measures.peers.HeatmapColumns``), or bins of
    individuals for large data (each cell then the bin's mean; hover gives the
    bin's minimum, share at or below the threshold and most frequent
    ``cell_notes``). Hover on an individual shows their values
    (``individual_text``) and ``cell_notes`` (the worst subset).

    >>> from anonlib.measures.peers import heatmap_columns
    >>> v = np.array([[0.0, 0.5, 1.0]])
    >>> fig = privacy_heatmap(v, ["age"], heatmap_columns(v), threshold=0.0,
    ...                       palette="red to green (as in the papers)", value_label="min PPP", title="t")
    >>> fig.data[0].z.shape, fig.data[0].zmax
    ((1, 3), 1.0)
    """
    z = columns.aggregate(values)
    n_rows, n_cols = z.shape
    if columns.bins is None:
        order = columns.order
        texts = np.empty((n_rows, n_cols), dtype=object)
        for r in range(n_rows):
            for c, i in enumerate(order):
                who = f"record {i + 1}" + (
                    f": {escape_text(individual_text[i])}" if individual_text is not None else ""
                )
                note = f"<br>worst: {escape_text(cell_notes[r, i])}" if cell_notes is not None else ""
                texts[r, c] = f"{escape_text(row_labels[r])}<br>{value_label} {values[r, i]:.3f}<br>{who}{note}"
        x_title = columns.description
    else:
        lows = columns.aggregate(values, "min")
        at_risk = columns.aggregate((values <= threshold).astype(np.float64))
        sizes = np.diff(columns.bins)
        bin_of = np.repeat(np.arange(n_cols), sizes)
        texts = np.empty((n_rows, n_cols), dtype=object)
        for r in range(n_rows):
            common = [""] * n_cols
            if cell_notes is not None:  # the most frequent note (worst subset) of each bin
                codes, uniques = pd.factorize(np.asarray(cell_notes[r])[columns.order])
                counts = np.bincount(bin_of * len(uniques) + codes, minlength=n_cols * len(uniques))
                counts = counts.reshape(n_cols, len(uniques))
                top = counts.argmax(axis=1)
                common = [
                    f"<br>most often worst: {escape_text(uniques[top[c]])} ({100 * counts[c, top[c]] / sizes[c]:.0f}%)"
                    for c in range(n_cols)
                ]
            for c in range(n_cols):
                texts[r, c] = (
                    f"{escape_text(row_labels[r])}<br>bin {c + 1}: {sizes[c]:,} records<br>"
                    f"mean {value_label} {z[r, c]:.3f}, lowest {lows[r, c]:.3f}<br>"
                    f"{100 * at_risk[r, c]:.0f}% at or below {threshold:g}{common[c]}"
                )
        x_title = columns.description
    fig = go.Figure(
        go.Heatmap(
            z=z,
            y=list(row_labels),
            x=[f"#{i + 1}" for i in columns.order] if columns.bins is None else list(range(1, n_cols + 1)),
            zmin=0.0,
            zmax=1.0,
            colorscale=threshold_colorscale(threshold, palette),
            customdata=texts,
            hovertemplate="%{customdata}<extra></extra>",
            colorbar=dict(title=value_label),
        )
    )
    fig.update_xaxes(showticklabels=n_cols <= 40)
    fig.update_yaxes(autorange="reversed")
    fig = laid_out(fig, title, x_title, "")
    fig.update_layout(height=max(260, 60 + 34 * n_rows))
    return fig


def generalization_figure(table, baseline: float, variable: str, p: float) -> go.Figure:
    """Fig. 4: share of individuals with p-upward privacy for each equal-width
    partition (dots) against its number of categories; the best per number of
    categories as stars; the ungeneralized share as a dashed line.

    >>> import pandas as pd
    >>> t = pd.DataFrame({"categories": [2, 2, 3], "width": [5.0, 5.0, 3.0], "offset": [0.0, 1.0, 0.0],
    ...                   "first category": ["1-5", "1-4", "1-3"], "protected share": [0.5, 0.7, 0.6],
    ...                   "best for its categories": [False, True, True]})
    >>> [list(d.y) for d in generalization_figure(t, 0.4, "age", 0.0).data]
    [[50.0, 70.0, 60.0], [70.0, 60.0]]
    """
    hover = [
        f"{c} categories of width {w:g} (offset {o:g}, first {escape_text(f)})<br>{100 * s:.1f}% protected"
        for c, w, o, f, s in zip(
            table["categories"], table["width"], table["offset"], table["first category"], table["protected share"]
        )
    ]
    best = table["best for its categories"].to_numpy()
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=table["categories"].tolist(),
            y=(100 * table["protected share"]).tolist(),
            mode="markers",
            marker=dict(color=SAFE, size=7, opacity=0.6),
            name="partition",
            customdata=hover,
            hovertemplate="%{customdata}<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=table["categories"][best].tolist(),
            y=(100 * table["protected share"][best]).tolist(),
            mode="markers",
            marker=dict(color=AT_RISK, size=13, symbol="star"),
            name="best for its number of categories",
            customdata=[h for h, b in zip(hover, best) if b],
            hovertemplate="%{customdata}<extra></extra>",
        )
    )
    fig.add_hline(
        y=100 * baseline,
        line_dash="dash",
        line_color="#555555",
        annotation_text=f"not generalized: {100 * baseline:.1f}%",
    )
    fig.update_yaxes(range=[0, 100])
    return laid_out(
        fig,
        f"Generalizing {variable}: records with p-upward privacy (p = {p:g})",
        f"number of categories of {variable}",
        "% of records protected",
    )


NPP_BINS = ((0, 0), (1, 1), (2, 2), (3, 4), (5, 9), (10, 19), (20, 49), (50, 99), (100, None))


def npp_histogram(npp: np.ndarray, weights: np.ndarray, variable: str) -> go.Figure:
    """Distribution of the number of protective peers (maximum auxiliary
    information) in bins 0, 1, 2, 3-4, ..., 100+.

    >>> list(npp_histogram(np.array([0, 0, 3, 120]), np.ones(4), "age").data[0].y)
    [2.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0]
    """
    labels, counts = [], []
    for lo, hi in NPP_BINS:
        inside = (npp >= lo) & (npp <= hi) if hi is not None else npp >= lo
        labels.append(f"{lo}" if lo == hi else (f"{lo}-{hi}" if hi is not None else f"{lo}+"))
        counts.append(float(weights[inside].sum()))
    colours = [AT_RISK if lo == 0 else SAFE for lo, _ in NPP_BINS]
    fig = go.Figure(
        go.Bar(x=labels, y=counts, marker_color=colours, hovertemplate="NPP %{x}: %{y:,} records<extra></extra>")
    )
    return laid_out(
        fig,
        f"Protective peers of {variable} with maximum auxiliary information",
        "number of protective peers (NPP)",
        "records",
    )
