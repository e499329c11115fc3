"""What the map draws: polygons of the aggregated regions, and state and county borders
from the bundled county polygons."""

from __future__ import annotations

import gzip
import io
import warnings
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import pandas as pd

from .aggregation import AggregationResult
from .regions import Regions

# --------------------------------------------------------------------------
# Display: polygons of the aggregated regions
# --------------------------------------------------------------------------


def aggregated_polygons(result: AggregationResult, regions: Regions, *, simplify_m: float = 0.0, land=None):
    """GeoDataFrame of the aggregated regions (index = aggregated id) in ``regions.crs``.

    The union (geopandas ``dissolve``) of member polygons when ``regions`` has
    polygons; else the Voronoi cells of the sites (``shapely.voronoi_polygons``)
    clipped to the convex hull of the points, buffered by 2% of its extent, and
    to ``land`` when given (e.g. ``outlines_for(regions).land``), so no cell
    reaches over the sea.

    >>> import shapely
    >>> from anonlib.transformations.geo import aggregate_example, sample_regions
    >>> result = aggregate_example()
    >>> regions = Regions("example", pd.DataFrame({"region_id": ["a", "b", "c"], "x": [0.0, 1.0, 50.0],
    ...                                            "y": [0.0, 0.0, 0.0]}), crs="EPSG:32616")
    >>> cells = aggregated_polygons(result, regions)
    >>> cells.index.tolist(), bool(cells.geometry.loc["A2"].contains(shapely.Point(50.0, 0.0)))
    (['A1', 'A2'], True)
    >>> clipped = aggregated_polygons(result, regions, land=shapely.box(-10.0, -10.0, 30.0, 10.0))
    >>> round(clipped.geometry.loc["A2"].bounds[2], 3)   # cut at the land's edge, x = 30
    30.0
    """
    import geopandas as gpd
    import shapely

    if regions.polygons is not None:
        frame = regions.polygons.assign(
            aggregated_region=result.mapping.reindex(regions.polygons["region_id"]).to_numpy()
        )
        if simplify_m > 0:
            frame = frame.set_geometry(frame.geometry.simplify(simplify_m))
        dissolved = frame[["aggregated_region", "geometry"]].dissolve(by="aggregated_region")
        return dissolved.join(result.sites)
    points = shapely.points(regions.points["x"].to_numpy(), regions.points["y"].to_numpy())
    hull = shapely.convex_hull(shapely.multipoints(points))
    minx, miny, maxx, maxy = shapely.bounds(hull)
    area = shapely.buffer(hull, 0.02 * max(maxx - minx, maxy - miny, 1.0))
    if land is not None:
        area = shapely.intersection(area, land)
    used = result.sites[result.sites["regions"] > 0]
    site_points = shapely.points(used["x"].to_numpy(), used["y"].to_numpy())
    cells = shapely.get_parts(shapely.voronoi_polygons(shapely.multipoints(site_points), extend_to=area))
    # voronoi_polygons does not keep the input order: match each cell to its site.
    owner = np.full(len(cells), -1)
    tree = shapely.STRtree(cells)
    hit_site, hit_cell = tree.query(site_points, predicate="intersects")
    owner[hit_cell] = hit_site
    geometry = np.empty(len(used), dtype=object)
    geometry[owner[owner >= 0]] = shapely.intersection(cells[owner >= 0], area)
    return gpd.GeoDataFrame(used.copy(), geometry=list(geometry), crs=regions.crs)


# --------------------------------------------------------------------------
# Display: state and county borders from the bundled county polygons
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Outlines:
    """Borders to draw under a map (no tile server) and the land the areas lie on,
    in ``crs`` (metres): ``counties`` and ``states`` are arrays of shapely
    (multi)line strings; ``land`` one (multi)polygon (``us_outlines``: all US land;
    ``outlines_for``: the states holding the areas, so that regions built from
    points stop at the coast and at the state line)."""

    crs: str
    counties: np.ndarray
    states: np.ndarray
    land: object
    state_areas: np.ndarray = field(default=None, repr=False)  # state polygons, in ``states`` order


def crs_description(crs: str) -> str:
    """A projection's name in words, for axis notes (``"EPSG:32616"`` means little to a reader).

    >>> crs_description("EPSG:32616"), crs_description("EPSG:5070")
    ('WGS 84 / UTM zone 16N', 'NAD83 / Conus Albers')
    """
    from pyproj import CRS

    try:
        return CRS.from_user_input(crs).name
    except Exception:  # noqa: BLE001 - an unknown CRS keeps its code
        return str(crs)


@lru_cache(maxsize=1)
def _us_borders_lonlat() -> tuple[np.ndarray, np.ndarray, object]:
    """County polygons, state polygons (counties dissolved by the 2-digit state
    FIPS code) and their union, in lon/lat, from ``data/samples/us_counties.geojson.gz``
    (read once per process: reading and the unions take about two seconds)."""
    import geopandas as gpd
    import shapely

    from ...core.samples import sample_path

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        frame = gpd.read_file(io.BytesIO(gzip.decompress(sample_path("us_counties.geojson.gz").read_bytes())))
    counties = shapely.make_valid(frame.geometry.to_numpy())
    state = frame["id"].astype(str).str[:2].to_numpy()
    codes = pd.unique(state)
    states = np.array([shapely.union_all(counties[state == code]) for code in codes], dtype=object)
    return counties, states, shapely.union_all(states)


@lru_cache(maxsize=8)
def us_outlines(crs: str) -> Outlines:
    """US county and state borders and land in ``crs`` (cached per CRS; do not modify).

    >>> outlines = us_outlines("EPSG:5070")
    >>> len(outlines.counties), len(outlines.states), outlines.land.geom_type
    (3221, 52, 'MultiPolygon')
    """
    import geopandas as gpd
    import shapely

    counties, states, land = _us_borders_lonlat()
    project = lambda geoms: gpd.GeoSeries(list(geoms), crs="EPSG:4326").to_crs(crs).to_numpy()  # noqa: E731
    counties_m, states_m = project(counties), project(states)
    land_m = project([land])[0]
    return Outlines(
        crs,
        shapely.boundary(counties_m),
        shapely.boundary(states_m),
        shapely.make_valid(land_m),
        shapely.make_valid(states_m),
    )


def outlines_for(regions: Regions, *, margin: float = 0.05, min_share: float = 0.9) -> Outlines | None:
    """The US borders around ``regions``, clipped to their extent (plus ``margin``
    of it) and simplified to the map's scale, with ``land`` = the states that hold
    the regions' points; None when fewer than ``min_share`` of the points lie on
    US land (areas elsewhere: no borders are bundled).

    >>> from anonlib.transformations.geo import sample_regions
    >>> outlines = outlines_for(sample_regions("tennessee_zcta"))
    >>> len(outlines.states) >= 5, round(outlines.land.area / 1e6, -3)   # Tennessee's neighbours; its 109,000 km2
    (True, 109000.0)
    >>> far = Regions("far", pd.DataFrame({"region_id": ["a"], "x": [0.0], "y": [0.0]}), crs="EPSG:8857")
    >>> outlines_for(far) is None
    True
    """
    import shapely

    x = regions.points["x"].to_numpy(dtype=float)
    y = regions.points["y"].to_numpy(dtype=float)
    if len(x) == 0:
        return None
    try:
        full = us_outlines(regions.crs)
    except Exception:  # noqa: BLE001 - a CRS pyproj cannot use: draw without borders
        return None
    shapely.prepare(full.land)
    if shapely.contains_xy(full.land, x, y).mean() < min_share:
        return None
    span = max(x.max() - x.min(), y.max() - y.min(), 1000.0)
    pad = margin * span
    box = (x.min() - pad, y.min() - pad, x.max() + pad, y.max() + pad)
    tolerance = span / 1500  # about a pixel on a map 1,500 px wide

    def clip(geoms: np.ndarray) -> np.ndarray:
        clipped = shapely.clip_by_rect(geoms, *box)
        clipped = clipped[~shapely.is_empty(clipped)]
        return shapely.simplify(clipped, tolerance)

    holding = np.zeros(len(full.state_areas), dtype=bool)
    tree = shapely.STRtree(full.state_areas)
    holding[np.unique(tree.query(shapely.points(x, y), predicate="intersects")[1])] = True
    land = shapely.union_all(shapely.clip_by_rect(full.state_areas[holding], *box))
    land = shapely.make_valid(shapely.simplify(land, tolerance))
    return Outlines(regions.crs, clip(full.counties), clip(full.states), land)
