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


# --- geo ---

GEO_COLOUR_BY = {
    "suppressed_share": "suppressed records (%)",
    "anonymity": "anonymity (smallest class, log scale)",
}
GEO_METRICS = (
    ("suppressed (%)", "Suppression (% of records)"),
    ("compactness (km)", "Compactness (sum of distances, km)"),
    ("discernibility", "Discernibility"),
    ("non-uniform entropy (bits)", "Non-uniform entropy (bits)"),
)


def _polygon_rings_km(geometry) -> tuple[list, list]:
    """Exterior rings of a (multi)polygon in km, separated by None (one filled shape each)."""
    import shapely

    xs: list = []
    ys: list = []
    for part in shapely.get_parts(geometry):
        if part.geom_type != "Polygon" or part.is_empty:
            continue
        coords = shapely.get_coordinates(part.exterior) / 1000.0
        xs.extend(coords[:, 0].tolist() + [None])
        ys.extend(coords[:, 1].tolist() + [None])
    return xs, ys


def _geo_colour_values(frame, colour_by: str) -> tuple[np.ndarray, np.ndarray]:
    """(colour value, shown value) per aggregated region."""
    if colour_by == "suppressed_share":
        records = frame["records"].to_numpy(dtype=float)
        shown = np.where(records > 0, 100.0 * frame["suppressed"].to_numpy(dtype=float) / np.maximum(records, 1), 0.0)
        return shown, shown
    shown = frame["anonymity"].to_numpy(dtype=float)
    return np.log10(np.maximum(shown, 1.0)), shown


def geo_map_figure(
    shapes,
    points,
    sites,
    *,
    colour_by: str = "suppressed_share",
    palette=SEQUENTIAL_SAFE,
    crs: str = "",
    bins: int = 12,
) -> go.Figure:
    """Map without tiles: aggregated regions filled by anonymity or suppression,
    initial points coloured by their aggregated region, sites marked (hover: exact numbers).

    ``shapes``: GeoDataFrame indexed by aggregated region with ``records``,
    ``regions``, ``anonymity``, ``suppressed`` (as from ``anonlib.geo.aggregated_polygons``);
    ``points``: ``x``, ``y`` (metres), ``region_id``, ``aggregated_region``;
    ``sites``: the same columns as ``shapes`` plus ``x``, ``y``. Suppression is
    drawn with the scale reversed so the papers' red always means "worse".

    >>> import geopandas as gpd, pandas as pd, shapely
    >>> sites = pd.DataFrame({"x": [500.0], "y": [500.0], "regions": [1], "records": [10],
    ...                       "anonymity": [3], "suppressed": [2]}, index=["A1"])
    >>> shapes = gpd.GeoDataFrame(sites, geometry=[shapely.box(0, 0, 1000, 1000)])
    >>> pts = pd.DataFrame({"x": [400.0], "y": [600.0], "region_id": ["z"], "aggregated_region": ["A1"]})
    >>> fig = geo_map_figure(shapes, pts, sites, colour_by="suppressed_share")
    >>> [t.name for t in fig.data], fig.data[-1].marker.color
    (['regions', 'initial regions', 'sites'], (20.0,))
    """
    from plotly.colors import sample_colorscale

    fig = go.Figure()
    reverse = colour_by == "suppressed_share"
    scale = palette
    if shapes is not None and len(shapes):
        value, _ = _geo_colour_values(shapes, colour_by)
        low, high = float(np.nanmin(value)), float(np.nanmax(value))
        span = high - low if high > low else 1.0
        level = np.clip(((value - low) / span * bins).astype(int), 0, bins - 1)
        for b in np.unique(level):
            xs: list = []
            ys: list = []
            for geometry in shapes.geometry.to_numpy()[level == b]:
                rx, ry = _polygon_rings_km(geometry)
                xs.extend(rx)
                ys.extend(ry)
            position = (b + 0.5) / bins
            colour = sample_colorscale(scale, [1.0 - position if reverse else position])[0]
            colour = colour.replace("rgb(", "rgba(").replace(")", ", 0.6)")
            fig.add_trace(
                go.Scatter(
                    x=xs, y=ys, mode="lines", fill="toself", fillcolor=colour,
                    line=dict(color="rgba(255,255,255,0.9)", width=0.6), hoverinfo="skip",
                    showlegend=False, name="regions", legendgroup="regions",
                )
            )
    if points is not None and len(points):
        group = points["aggregated_region"].astype("category").cat.codes.to_numpy()
        colours = np.array(QUALITATIVE, dtype=object)[group % len(QUALITATIVE)]
        fig.add_trace(
            go.Scattergl(
                x=(points["x"] / 1000.0).tolist(), y=(points["y"] / 1000.0).tolist(), mode="markers",
                marker=dict(size=4 if len(points) < 2000 else 2.5, color=colours.tolist(), line=dict(width=0)),
                customdata=np.column_stack([points["region_id"].astype(str), points["aggregated_region"].astype(str)]),
                hovertemplate="initial region %{customdata[0]}<br>aggregated region %{customdata[1]}<extra></extra>",
                name="initial regions",
            )
        )
    used = sites[sites["regions"] > 0]
    value, shown = _geo_colour_values(used, colour_by)
    ticks = {}
    if colour_by == "anonymity" and len(shown):
        marks = [v for v in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10**4, 10**5, 10**6) if v <= shown.max() * 1.01]
        ticks = dict(tickvals=np.log10(marks).tolist(), ticktext=[f"{m:,}" for m in marks])
    fig.add_trace(
        go.Scatter(
            x=(used["x"] / 1000.0).tolist(), y=(used["y"] / 1000.0).tolist(), mode="markers",
            marker=dict(
                symbol="diamond", size=9, color=value.tolist(), colorscale=scale, reversescale=reverse,
                line=dict(color="black", width=1), showscale=True,
                colorbar=dict(title=GEO_COLOUR_BY.get(colour_by, colour_by), **ticks),
            ),
            customdata=np.column_stack(
                [used.index.astype(str), used["regions"], used["records"], used["anonymity"], used["suppressed"], shown]
            ),
            hovertemplate=(
                "site of %{customdata[0]}<br>%{customdata[1]:,} initial regions, %{customdata[2]:,} records"
                "<br>anonymity (smallest class) %{customdata[3]:,}<br>suppressed %{customdata[4]:,} records"
                "<extra></extra>"
            ),
            name="sites",
        )
    )
    fig.update_yaxes(scaleanchor="x", scaleratio=1, showgrid=False, zeroline=False, title=f"y (km{', ' + crs if crs else ''})")
    fig.update_xaxes(showgrid=False, zeroline=False, title=f"x (km{', ' + crs if crs else ''})")
    # Height follows the data's aspect ratio (the axes keep 1 km = 1 km), within 380-700 px.
    xs_all = points["x"] if points is not None and len(points) else sites["x"]
    ys_all = points["y"] if points is not None and len(points) else sites["y"]
    span_x = max(float(xs_all.max() - xs_all.min()), 1.0)
    span_y = float(ys_all.max() - ys_all.min())
    height = int(np.clip(600 * span_y / span_x + 140, 380, 700))
    fig.update_layout(
        template="plotly_white", margin=dict(l=10, r=10, t=40, b=10), height=height,
        legend=dict(orientation="h", y=1.02, x=0), hoverlabel=dict(namelength=-1),
        title="Aggregated regions (filled), initial regions (dots), sites (diamonds)",
    )
    return fig


def geo_metrics_figure(table, label: str = "method") -> go.Figure:
    """Croft et al. Figures 3-5 as bars: suppression, compactness, discernibility and
    non-uniform entropy per run (one bar per row of ``table``, labelled by ``label``).

    >>> import pandas as pd
    >>> t = pd.DataFrame({"method": ["a", "b"], "suppressed (%)": [1.0, 2.0], "compactness (km)": [3.0, 4.0],
    ...                   "discernibility": [5, 6], "non-uniform entropy (bits)": [7.0, 8.0]})
    >>> fig = geo_metrics_figure(t)
    >>> len(fig.data), list(fig.data[0].y)
    (4, [1.0, 2.0])
    """
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=2, cols=2, subplot_titles=[title for _, title in GEO_METRICS], vertical_spacing=0.16)
    labels = table[label].astype(str).tolist()
    colours = [QUALITATIVE[i % len(QUALITATIVE)] for i in range(len(labels))]
    for i, (column, title) in enumerate(GEO_METRICS):
        fig.add_trace(
            go.Bar(
                x=labels, y=table[column].tolist(), marker_color=colours, name=title, showlegend=False,
                hovertemplate="%{x}<br>" + title + ": %{y:,}<extra></extra>",
            ),
            row=i // 2 + 1, col=i % 2 + 1,
        )
    fig.update_layout(template="plotly_white", height=560, margin=dict(l=10, r=10, t=50, b=10))
    return fig
