"""Charts of the Geographic aggregation page: the map of regions and the paper's metrics."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .base import DEFAULT_PALETTE, PALETTES, compared_bars, escape_text, scatter_trace

# --- geo ---

GEO_COLOUR_BY = {
    "suppressed_share": "suppressed records (%)",
    "anonymity": "smallest class (log scale)",
}
COUNTY_BORDERS_UP_TO_KM = 2000  # maps spanning more show state borders only
GEO_METRICS = (
    ("suppressed (%)", "Suppression (% of records)"),
    ("compactness (km)", "Compactness (sum of distances, km)"),
    ("discernibility", "Discernibility"),
    ("non-uniform entropy (bits)", "Non-uniform entropy (bits)"),
)


def _paths_km(lines, origin: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """All line strings and rings of ``lines`` (an array of shapely geometries, metres) as one
    x/y array in km from ``origin``, each path followed by NaN (a gap: one trace draws them all,
    and plotly takes the arrays whole instead of checking a list item by item).

    >>> import shapely
    >>> xs, ys = _paths_km([shapely.LineString([(0, 0), (1000, 0)]), shapely.LineString([(0, 2000), (0, 3000)])], (0.0, 0.0))
    >>> xs.tolist(), ys.tolist()
    ([0.0, 1.0, nan, 0.0, 0.0, nan], [0.0, 0.0, nan, 2.0, 3.0, nan])
    """
    import shapely

    parts = shapely.get_parts(np.asarray(lines, dtype=object))
    if len(parts) == 0:
        return np.empty(0), np.empty(0)
    coords, index = shapely.get_coordinates(parts, return_index=True)
    coords = (coords - origin) / 1000.0
    ends = np.append(np.flatnonzero(np.diff(index)) + 1, len(coords))  # where the next path starts
    return np.insert(coords[:, 0], ends, np.nan), np.insert(coords[:, 1], ends, np.nan)


def _exterior_rings(geometries) -> np.ndarray:
    """The exterior rings of the polygons of ``geometries`` ((multi)polygons; empty and
    missing ones skipped): one filled shape each.

    >>> import shapely
    >>> [r.wkt for r in _exterior_rings([shapely.box(0, 0, 1, 1), None])]
    ['LINEARRING (1 0, 1 1, 0 1, 0 0, 1 0)']
    """
    import shapely

    parts = shapely.get_parts(np.asarray([g for g in geometries if g is not None], dtype=object))
    polygons = parts[(shapely.get_type_id(parts) == 3) & ~shapely.is_empty(parts)]
    return shapely.get_exterior_ring(polygons)


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
    palette: str = DEFAULT_PALETTE,
    crs: str = "",
    outlines=None,
    bins: int = 12,
) -> go.Figure:
    """Map without tiles: aggregated regions filled by anonymity or suppression,
    the initial areas as dots, sites as diamonds (hover: exact numbers), over the
    state and county borders of ``outlines`` (``anonlib.transformations.geo.outlines_for``).

    ``shapes``: GeoDataFrame indexed by aggregated region with ``records``,
    ``regions``, ``anonymity``, ``suppressed`` (as from ``anonlib.transformations.geo.aggregated_polygons``);
    ``points``: ``x``, ``y`` (metres), ``region_id``, ``aggregated_region``;
    ``sites``: the same columns as ``shapes`` plus ``x``, ``y``. Suppression is
    drawn with the scale reversed so the papers' red always means "worse".
    Axes are km east and north of the data's south-west corner, the projection
    named in words (``crs``: e.g. "WGS 84 / UTM zone 16N"); every mark has a
    legend entry and the fill colours a colour bar.

    >>> import geopandas as gpd, pandas as pd, shapely
    >>> sites = pd.DataFrame({"x": [500.0], "y": [500.0], "regions": [1], "records": [10],
    ...                       "anonymity": [3], "suppressed": [2]}, index=["A1"])
    >>> shapes = gpd.GeoDataFrame(sites, geometry=[shapely.box(0, 0, 1000, 1000)])
    >>> pts = pd.DataFrame({"x": [400.0], "y": [600.0], "region_id": ["z"], "aggregated_region": ["A1"]})
    >>> fig = geo_map_figure(shapes, pts, sites, colour_by="suppressed_share")
    >>> [t.name for t in fig.data], fig.data[-1].marker.color.tolist(), fig.data[1].x.tolist()
    (['aggregated regions (fill: suppressed records (%))', 'areas (one dot each)', 'sites'], [20.0], [0.0])
    """
    from plotly.colors import sample_colorscale

    fig = go.Figure()
    reverse = colour_by == "suppressed_share"
    scale = PALETTES[palette].sequential
    xs_all = points["x"] if points is not None and len(points) else sites["x"]
    ys_all = points["y"] if points is not None and len(points) else sites["y"]
    origin = (float(xs_all.min()), float(ys_all.min()))
    colour_name = GEO_COLOUR_BY.get(colour_by, colour_by)
    used = sites[sites["regions"] > 0]
    site_value, shown = _geo_colour_values(used, colour_by)
    # one colour range for fills and diamonds; all regions alike -> from 0, not a range of 0.8 around one value
    low, high = (float(site_value.min()), float(site_value.max())) if len(site_value) else (0.0, 1.0)
    if high <= low:
        low, high = min(0.0, low), (high if high > 0 else 1.0)
    if shapes is not None and len(shapes):
        value, _ = _geo_colour_values(shapes, colour_by)
        span = high - low
        level = np.clip(((value - low) / span * bins).astype(int), 0, bins - 1)
        for n, b in enumerate(np.unique(level)):
            xs, ys = _paths_km(_exterior_rings(shapes.geometry.to_numpy()[level == b]), origin)
            position = (b + 0.5) / bins
            colour = sample_colorscale(scale, [1.0 - position if reverse else position])[0]
            colour = colour.replace("rgb(", "rgba(").replace(")", ", 0.6)")
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=ys,
                    mode="lines",
                    fill="toself",
                    fillcolor=colour,
                    line=dict(color="rgba(255,255,255,0.9)", width=0.6),
                    hoverinfo="skip",
                    showlegend=n == 0,
                    name=f"aggregated regions (fill: {colour_name})",
                    legendgroup="regions",
                )
            )
    if outlines is not None:
        span_km = max(float(xs_all.max() - xs_all.min()), float(ys_all.max() - ys_all.min())) / 1000.0
        borders = [(outlines.states, "state borders", "rgba(40,40,40,0.9)", 1.2)]
        if span_km <= COUNTY_BORDERS_UP_TO_KM:  # a whole country's 3,000 counties would only blacken the map
            borders.insert(0, (outlines.counties, "county borders", "rgba(90,90,90,0.35)", 0.5))
        for lines, name, colour, width in borders:
            lx, ly = _paths_km(lines, origin)
            if len(lx):
                fig.add_trace(
                    scatter_trace(
                        len(lx),
                        x=lx,
                        y=ly,
                        mode="lines",
                        line=dict(color=colour, width=width),
                        hoverinfo="skip",
                        name=name,
                    )
                )
    if points is not None and len(points):
        where = ""
        data = [[escape_text(v) for v in points["region_id"]], [escape_text(v) for v in points["aggregated_region"]]]
        if {"lon", "lat"} <= set(points.columns):
            data.append(
                [
                    f"{abs(lat):.3f}° {'N' if lat >= 0 else 'S'}, {abs(lon):.3f}° {'E' if lon >= 0 else 'W'}"
                    for lon, lat in zip(points["lon"], points["lat"])
                ]
            )
            where = "<br>%{customdata[2]}"
        fig.add_trace(
            scatter_trace(
                len(points),
                x=(points["x"].to_numpy(dtype=float) - origin[0]) / 1000.0,
                y=(points["y"].to_numpy(dtype=float) - origin[1]) / 1000.0,
                mode="markers",
                marker=dict(
                    size=4 if len(points) < 2000 else 2,
                    color="#333333",
                    opacity=0.7 if len(points) < 2000 else 0.3,
                    line=dict(width=0),
                ),
                customdata=np.column_stack(data),
                hovertemplate="area %{customdata[0]}<br>aggregated region %{customdata[1]}" + where + "<extra></extra>",
                name="areas (one dot each)",
            )
        )
    value = site_value
    ticks = {}
    if colour_by == "anonymity" and len(shown):
        marks = [
            v
            for v in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10**4, 10**5, 10**6)
            if v <= shown.max() * 1.01
        ]
        ticks = dict(tickvals=np.log10(marks).tolist(), ticktext=[f"{m:,}" for m in marks])
    fig.add_trace(
        go.Scatter(
            x=(used["x"].to_numpy(dtype=float) - origin[0]) / 1000.0,
            y=(used["y"].to_numpy(dtype=float) - origin[1]) / 1000.0,
            mode="markers",
            marker=dict(
                symbol="diamond",
                size=9,
                color=value,
                colorscale=scale,
                reversescale=reverse,
                cmin=low,
                cmax=high,
                line=dict(color="black", width=1),
                showscale=True,
                colorbar=dict(
                    title=dict(text=colour_name.replace(" (", "<br>("), side="top"), thickness=12, len=0.9, **ticks
                ),
            ),
            customdata=np.column_stack(
                [
                    [escape_text(v) for v in used.index],
                    used["regions"],
                    used["records"],
                    used["anonymity"],
                    used["suppressed"],
                    shown,
                ]
            ),
            hovertemplate=(
                "site of %{customdata[0]}<br>%{customdata[1]:,} initial regions, %{customdata[2]:,} records"
                "<br>anonymity (smallest class) %{customdata[3]:,}<br>suppressed %{customdata[4]:,} records"
                "<extra></extra>"
            ),
            name="sites",
        )
    )
    projection = f"; projection {escape_text(crs)}" if crs else ""
    fig.update_yaxes(scaleanchor="x", scaleratio=1, showgrid=False, zeroline=False, title="south to north (km)")
    fig.update_xaxes(showgrid=False, zeroline=False, title=f"west to east (km{projection})", automargin=True)
    # Height follows the data's aspect ratio (the axes keep 1 km = 1 km) on a plot about
    # 500 px wide, plus the title and the legend under it; within 380-820 px.
    span_x = max(float(xs_all.max() - xs_all.min()), 1.0)
    span_y = float(ys_all.max() - ys_all.min())
    height = int(np.clip(500 * span_y / span_x + 230, 380, 820))
    fig.update_layout(
        margin=dict(l=10, r=10, t=40, b=130),
        height=height + 60,
        # the legend at the bottom of the figure, under the x-axis title, in a margin tall enough for
        # its three lines in a 1024 px window (placed as a share of the plot, it covered the title)
        legend=dict(orientation="h", yref="container", yanchor="bottom", y=0, x=0),
        hoverlabel=dict(namelength=-1),
        title="Aggregated regions (filled), areas (dots), sites (diamonds)",
    )
    return fig


def geo_metrics_figure(table, label: str = "method", title: str = "The paper's Figures 3-5") -> go.Figure:
    """Croft et al. Figures 3-5 as bars: suppression, compactness, discernibility and
    non-uniform entropy per run (one bar per row of ``table``, named by ``label``
    in the legend); equal bars and a single run are said in words.

    >>> import pandas as pd
    >>> t = pd.DataFrame({"method": ["a", "b"], "suppressed (%)": [1.0, 2.0], "compactness (km)": [3.0, 4.0],
    ...                   "discernibility": [5, 6], "non-uniform entropy (bits)": [7.0, 8.0]})
    >>> fig = geo_metrics_figure(t)
    >>> len(fig.data), [d.y[0] for d in fig.data[:4]]
    (8, [1.0, 3.0, 5, 7.0])
    """
    formats = {"discernibility": ",.0f", "suppressed (%)": ".4g"}  # discernibility in full: 975,686
    metrics = [(column, title, formats.get(column, ",.4g")) for column, title in GEO_METRICS]
    return compared_bars(table, label, metrics, columns=2, title=title)
