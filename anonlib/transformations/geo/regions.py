"""The initial regions: read from geometry files (GeoJSON, shapefiles, GeoPackage) or the
bundled samples (US ZIP areas, counties), and which of them records name."""

from __future__ import annotations

import io
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd

from ...core.errors import DataFileError, FileTooLargeError, GeometryError, ParameterError, join_names
from ...core.loading import gunzip
from .projection import choose_crs, points_from_lonlat, region_labels

# --------------------------------------------------------------------------
# Initial regions from geometry files and the bundled samples
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Regions:
    """Initial regions: a points table (metres) and, when known, their polygons.

    ``points`` has ``region_id``, ``x``, ``y``, ``population`` (and ``lon``,
    ``lat`` for display); ``polygons`` is a GeoDataFrame (``region_id``,
    geometry) in the same ``crs``, or None when only points exist.
    """

    name: str
    points: pd.DataFrame
    crs: str
    polygons: object | None = None

    @property
    def n_regions(self) -> int:
        return int(len(self.points))


def read_regions(
    source: bytes | str | Path,
    *,
    region_id: str,
    population: str | None = None,
    name: str | None = None,
    crs: str | None = None,
) -> Regions:
    """Read polygons (GeoJSON, GeoPackage or a zipped Shapefile; gzip allowed) as initial regions.

    Each region's point is its representative point (always inside the
    polygon), computed in the metric CRS. Files without a CRS are taken as
    lon/lat degrees. Raises ``GeometryError`` for anything unusable.

    >>> read_regions(b"not a map", region_id="id")
    Traceback (most recent call last):
    ...
    anonlib.core.errors.GeometryError: The file 'upload' could not be read as GeoJSON, GeoPackage or a zipped Shapefile.
    """
    import geopandas as gpd
    import shapely

    name = name or (Path(source).name if isinstance(source, (str, Path)) else "upload")
    try:
        raw = Path(source).read_bytes() if isinstance(source, (str, Path)) else bytes(source)
    except OSError as err:
        raise GeometryError(f"The file '{name}' could not be opened ({err.strerror}).") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gunzip(raw)  # the loader's, with its size cap
        except FileTooLargeError as err:
            raise GeometryError(f"The file '{name}' is too large: {err}") from None
        except DataFileError:
            raise GeometryError(f"The file '{name}' looks gzip-compressed but is damaged.") from None
    try:
        with warnings.catch_warnings():  # GDAL notes about in-memory file names
            warnings.simplefilter("ignore", RuntimeWarning)
            frame = gpd.read_file(io.BytesIO(raw))
    except Exception:  # noqa: BLE001 - any reader failure means "not a geometry file"
        raise GeometryError(
            f"The file '{name}' could not be read as GeoJSON, GeoPackage or a zipped Shapefile."
        ) from None
    if len(frame) == 0:
        raise GeometryError(f"The file '{name}' contains no regions.")
    if region_id not in frame.columns:
        raise GeometryError(
            f"The file '{name}' has no column '{region_id}' to identify the regions. "
            f"Available columns: {join_names([c for c in frame.columns if c != 'geometry'])}."
        )
    empty = frame.geometry.isna() | frame.geometry.is_empty
    if empty.any():
        bad = join_names(region_labels(frame.loc[empty, region_id]))
        raise GeometryError(f"These regions in '{name}' have no geometry: {bad}.")
    kinds = set(frame.geometry.geom_type)
    if not kinds <= {"Polygon", "MultiPolygon", "Point"}:
        raise GeometryError(f"The file '{name}' must hold polygons or points; found {join_names(sorted(kinds))}.")
    ids = region_labels(frame[region_id])
    duplicated = pd.Series(ids).duplicated()
    if duplicated.any():
        raise GeometryError(
            f"Region ids must be unique in '{name}'; repeated: {join_names(pd.unique(ids[duplicated.to_numpy()]))}."
        )
    if frame.crs is None:
        frame = frame.set_crs("EPSG:4326")
    lonlat = frame.to_crs("EPSG:4326")
    reps_ll = lonlat.geometry.representative_point()
    target = crs or choose_crs(reps_ll.x.to_numpy(), reps_ll.y.to_numpy())
    projected = frame.to_crs(target)
    geometry = shapely.make_valid(projected.geometry.to_numpy())
    reps = shapely.point_on_surface(geometry)
    points = pd.DataFrame(
        {
            "region_id": ids,
            "x": shapely.get_x(reps),
            "y": shapely.get_y(reps),
            "lon": reps_ll.x.to_numpy(),
            "lat": reps_ll.y.to_numpy(),
        }
    )
    if population:
        if population not in frame.columns:
            raise GeometryError(f"The file '{name}' has no population column '{population}'.")
        points["population"] = pd.to_numeric(frame[population], errors="coerce").fillna(0).to_numpy(np.int64)
    polygons = None
    if kinds & {"Polygon", "MultiPolygon"}:
        polygons = gpd.GeoDataFrame({"region_id": ids}, geometry=geometry, crs=target)
    return Regions(name=name, points=points, crs=target, polygons=polygons)


REGION_SAMPLES = {
    "tennessee_zcta": "Tennessee ZIP areas (ZCTA 37010-38589, populated)",
    "us_zcta": "All US ZIP areas (33,120 ZCTAs)",
    "us_counties": "US counties (3,221 polygons)",
}


@cache
def sample_regions(key: str) -> Regions:
    """Bundled initial regions (cached; do not modify): see ``REGION_SAMPLES``.

    Tennessee is the paper's setting: ZCTAs 37010-38589 with population > 0
    (625 of the 628 areas in that range), from
    ``synthetic.tennessee_zcta_population(populated_only=True)``.

    >>> tn = sample_regions("tennessee_zcta")
    >>> tn.n_regions, int(tn.points["population"].sum()), tn.crs
    (625, 6339942, 'EPSG:32616')
    """
    from ...core.samples import load_sample, sample_path
    from ..synthetic import tennessee_zcta_population

    if key in ("tennessee_zcta", "us_zcta"):
        if key == "tennessee_zcta":
            # The one Tennessee ZCTA loader (shared with the synthetic ZIP codes).
            frame = tennessee_zcta_population(populated_only=True)
            columns = dict(region_id="zip", lon="lon", lat="lat", population="population")
        else:
            frame = load_sample("zcta10").frame
            columns = dict(region_id="GEOID", lon="INTPTLONG", lat="INTPTLAT", population="POP10")
        points = points_from_lonlat(frame, **columns)
        points["lon"] = frame[columns["lon"]].to_numpy(dtype=float)
        points["lat"] = frame[columns["lat"]].to_numpy(dtype=float)
        return Regions(name=REGION_SAMPLES[key], points=points.reset_index(drop=True), crs=points.attrs["crs"])
    if key == "us_counties":
        regions = read_regions(sample_path("us_counties.geojson.gz"), region_id="id", name=REGION_SAMPLES[key])
        gazetteer = load_sample("us_counties").frame
        pops = pd.Series(gazetteer["POP10"].to_numpy(dtype=np.int64), index=region_labels(gazetteer["GEOID"]))
        population = pops.reindex(regions.points["region_id"]).fillna(0).to_numpy(dtype=np.int64)
        points = regions.points.assign(population=population)
        return Regions(name=regions.name, points=points, crs=regions.crs, polygons=regions.polygons)
    raise ParameterError(f"There are no bundled regions called '{key}'. Choose one of {join_names(REGION_SAMPLES)}.")


def regions_matching(ids: Sequence[object], *, exclude: Sequence[str] = ()) -> list[tuple[str, int]]:
    """The bundled region samples (``REGION_SAMPLES`` keys, except ``exclude``) that
    contain some of ``ids``, with how many, most first: the Areas choice that would
    link records whose ids match nothing in the current one.

    >>> regions_matching(["10001", "90210", "37010"], exclude=["tennessee_zcta"])  # 10001 is also a county
    [('us_zcta', 3), ('us_counties', 1)]
    """
    wanted = pd.Index(pd.unique(region_labels(pd.Series(list(ids), dtype=object))))
    found = []
    for key in REGION_SAMPLES:
        if key in exclude:
            continue
        hits = int(wanted.isin(sample_regions(key).points["region_id"]).sum())
        if hits:
            found.append((key, hits))
    return sorted(found, key=lambda pair: -pair[1])


AREA_SHARE = 0.5  # a column is a column of area ids when more than half of its values are ids of the areas


@dataclass(frozen=True)
class AreaColumn:
    """A column of area ids: the areas (``REGION_SAMPLES`` key, or the name given for
    uploaded ones) holding most of its values, and the share of its records that are ids
    of those areas."""

    column: str
    areas: str
    share: float


def area_id_share(values: pd.Series | Sequence[object], area_ids: Sequence[object] | pd.Index) -> float:
    """The share of a column's records (missing values left out) whose value is the id of
    one of ``area_ids`` (ids compared as ``region_labels`` writes them: whole numbers
    without ``.0``, spaces stripped); 0 for a column with no value.

    >>> area_id_share(pd.Series(["37010", "37011", 1234.5, None]), ["37010", "37011"])
    0.6666666666666666
    >>> area_id_share(pd.Series([37010.0, 12.5]), ["37010"])  # an amount that happens to be an id counts
    0.5
    """
    return _known_share(values, _known_labels(area_ids))


def _known_labels(area_ids: Sequence[object] | pd.Index) -> pd.Index:
    """The distinct ids of ``area_ids`` as ``region_labels`` writes them."""
    return pd.Index(pd.unique(region_labels(pd.Series(list(area_ids), dtype=object))))


def _known_share(values: pd.Series | Sequence[object], known: pd.Index) -> float:
    """``area_id_share`` against ids already written as labels (``_known_labels``)."""
    series = pd.Series(values)
    present = series.dropna()
    if present.empty:
        return 0.0
    if pd.api.types.is_numeric_dtype(present) and not pd.api.types.is_bool_dtype(present):
        numbers = present.to_numpy(dtype=float)  # each whole number as an id, whatever its neighbours
        whole = np.isfinite(numbers) & (numbers == np.round(numbers))
        labels = pd.Series([str(int(v)) if w else str(v) for v, w in zip(numbers, whole)], dtype=object)
    else:
        labels = pd.Series(region_labels(present), dtype=object)
    return float(labels.isin(known).mean())


def area_columns(
    frame: pd.DataFrame,
    columns: Sequence[str] | None = None,
    *,
    areas: dict[str, Sequence[object]] | None = None,
    threshold: float = AREA_SHARE,
    sample: int = 5_000,
) -> dict[str, AreaColumn]:
    """The columns of ``frame`` holding area ids: for each of ``columns`` (default all),
    the areas (each of ``areas``, name -> ids; default the bundled ``REGION_SAMPLES``)
    holding the largest share of its records (on a tie, the fewer areas), kept when that share is above
    ``threshold`` (most of its values). A column of amounts or codes that only
    sometimes equal an area id (household expenditure against county FIPS codes) is
    not one. Up to ``sample`` records per column, spread over the table, are compared.

    >>> df = pd.DataFrame({"zip": ["37010", "37203", "38104"], "spend": [37010.0, 12.5, 880.25]})
    >>> found = area_columns(df)
    >>> list(found), found["zip"].areas, found["zip"].share
    (['zip'], 'tennessee_zcta', 1.0)
    """
    if not 0.0 <= float(threshold) < 1.0:
        raise ParameterError(f"The share of area ids is at least 0 and below 1; got {threshold}.")
    columns = list(frame.columns if columns is None else columns)
    if areas is None:
        areas = {key: sample_regions(key).points["region_id"] for key in REGION_SAMPLES}
    found = {}
    step = max(len(frame) // max(int(sample), 1), 1)
    known = {key: _known_labels(ids) for key, ids in areas.items()}  # once, not per column
    for column in columns:
        values = frame[column].iloc[::step]
        # the largest share; on a tie the smaller set of areas (Tennessee before the whole US)
        best = max(
            ((_known_share(values, known[key]), -len(ids), key) for key, ids in areas.items()), default=(0.0, 0, "")
        )
        if best[0] > threshold:
            found[str(column)] = AreaColumn(str(column), best[2], best[0])
    return found
