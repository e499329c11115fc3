"""Lon/lat degrees to metres in an equal-area or UTM projection (``choose_crs``), points
of the initial regions, and the link between records and regions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...core.equivalence import encode_column, record_counts
from ...core.errors import ColumnError, GeometryError, require_columns

# --------------------------------------------------------------------------
# Projection: lon/lat degrees -> metres
# --------------------------------------------------------------------------

CONUS_ALBERS = "EPSG:5070"  # NAD83 / Conus Albers (equal-area), for North America
EQUAL_EARTH = "EPSG:8857"  # WGS 84 / Equal Earth (equal-area), elsewhere


def choose_crs(lon: np.ndarray, lat: np.ndarray) -> str:
    """The metric CRS used for distances between points given in lon/lat degrees.

    The UTM zone of the data's centre (pyproj's UTM query, as geopandas'
    ``estimate_utm_crs``) when the data spans at most 12 degrees of longitude;
    otherwise the equal-area NAD83 / Conus Albers (North America) or Equal Earth.

    >>> choose_crs(np.array([-90.0, -82.0]), np.array([35.0, 36.5]))
    'EPSG:32616'
    >>> choose_crs(np.array([-124.0, -67.0]), np.array([25.0, 49.0]))
    'EPSG:5070'
    """
    from pyproj.aoi import AreaOfInterest
    from pyproj.database import query_utm_crs_info

    lon = np.asarray(lon, dtype=float)
    lat = np.asarray(lat, dtype=float)
    _check_lonlat(lon, lat)
    west, east = float(lon.min()), float(lon.max())
    south, north = float(lat.min()), float(lat.max())
    if east - west <= 12.0:
        centre_lon, centre_lat = (west + east) / 2, (south + north) / 2
        infos = query_utm_crs_info(
            datum_name="WGS 84",
            area_of_interest=AreaOfInterest(centre_lon, centre_lat, centre_lon, centre_lat),
        )
        if infos:
            return f"{infos[0].auth_name}:{infos[0].code}"
    centre_lon, centre_lat = float(np.median(lon)), float(np.median(lat))
    if -170.0 <= centre_lon <= -50.0 and 10.0 <= centre_lat <= 75.0:
        return CONUS_ALBERS
    return EQUAL_EARTH


def _check_lonlat(lon: np.ndarray, lat: np.ndarray) -> None:
    if lon.size == 0:
        raise GeometryError("There are no region coordinates to project.")
    if not (np.isfinite(lon).all() and np.isfinite(lat).all()):
        raise GeometryError(
            "Some region coordinates are missing or not numbers; every region needs a longitude and latitude."
        )
    if np.abs(lon).max() > 180 or np.abs(lat).max() > 90:
        raise GeometryError(
            "Longitudes must lie between -180 and 180 and latitudes between -90 and 90 degrees; "
            f"found longitude up to {np.abs(lon).max():g} and latitude up to {np.abs(lat).max():g}. "
            "Are the columns swapped, or already in metres?"
        )


def project_lonlat(lon: np.ndarray, lat: np.ndarray, crs: str | None = None) -> tuple[np.ndarray, np.ndarray, str]:
    """Project lon/lat degrees (WGS 84) to metres: ``(x, y, crs)``; ``crs`` defaults to ``choose_crs``.

    >>> x, y, crs = project_lonlat(np.array([-87.0, -87.0]), np.array([36.0, 37.0]))
    >>> crs, round(float(y[1] - y[0]) / 1000)
    ('EPSG:32616', 111)
    """
    from pyproj import Transformer

    lon = np.asarray(lon, dtype=float)
    lat = np.asarray(lat, dtype=float)
    _check_lonlat(lon, lat)
    crs = crs or choose_crs(lon, lat)
    x, y = Transformer.from_crs("EPSG:4326", crs, always_xy=True).transform(lon, lat)
    return np.asarray(x, dtype=float), np.asarray(y, dtype=float), crs


def points_from_lonlat(
    frame: pd.DataFrame,
    *,
    region_id: str,
    lon: str,
    lat: str,
    population: str | None = None,
    crs: str | None = None,
) -> pd.DataFrame:
    """A points table for ``aggregate`` (``region_id``, ``x``, ``y`` in metres, ``population``).

    The CRS used is stored in ``.attrs["crs"]``.

    >>> table = pd.DataFrame({"id": ["1", "2"], "lon": [-87.0, -86.0], "lat": [36.0, 36.0], "pop": [5, 7]})
    >>> points = points_from_lonlat(table, region_id="id", lon="lon", lat="lat", population="pop")
    >>> points.columns.tolist(), points.attrs["crs"]
    (['region_id', 'x', 'y', 'population'], 'EPSG:32616')
    """
    require_columns(frame, [region_id, lon, lat] + ([population] if population else []))
    x, y, crs = project_lonlat(
        pd.to_numeric(frame[lon], errors="coerce").to_numpy(dtype=float, na_value=np.nan),
        pd.to_numeric(frame[lat], errors="coerce").to_numpy(dtype=float, na_value=np.nan),
        crs,
    )
    points = pd.DataFrame({"region_id": region_labels(frame[region_id]), "x": x, "y": y})
    if population:
        pop = pd.to_numeric(frame[population], errors="coerce")
        if pop.isna().any() or (pop < 0).any():
            raise ColumnError(f"The population column '{population}' must hold whole numbers of 0 or more.")
        points["population"] = pop.to_numpy(dtype=np.int64)
    points.attrs["crs"] = crs
    return points


def region_labels(values: pd.Series | Sequence[object]) -> np.ndarray:
    """Region ids as text, so ``37010`` (a number) and ``"37010"`` (text) match.

    >>> region_labels(pd.Series([37010, 37011])).tolist(), region_labels(["00601 "]).tolist()
    (['37010', '37011'], ['00601'])
    """
    series = values if isinstance(values, pd.Series) else pd.Series(list(values), dtype=object)
    if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
        numbers = pd.to_numeric(series)
        if numbers.notna().all() and (numbers == numbers.round()).all():
            return numbers.astype(np.int64).astype(str).to_numpy(dtype=object)
    return series.astype("string").str.strip().to_numpy(dtype=object, na_value=None)


@dataclass(frozen=True)
class Linkage:
    """How the records' area ids match the initial regions.

    ``record_region``: index of each record row's initial region (-1 when its
    id matches none); ``records``/``linked``: records in all rows / in matched
    rows (count-weighted); ``unmatched``: the ids that match no region, with
    ``unmatched_records`` records, ``missing_records`` of them with no id at all (a missing
    value, listed as ``MISSING_LABEL``).
    """

    record_region: np.ndarray
    records: int
    linked: int
    unmatched: tuple[str, ...]
    unmatched_records: int
    missing_records: int = 0

    @property
    def linked_share(self) -> float:
        """Share of the records whose area id matches a region (0..1)."""
        return self.linked / self.records if self.records else 0.0


def link_records(
    region_ids: Sequence[object], records: pd.DataFrame, *, region: str, count: str | None = None
) -> Linkage:
    """Match each record's area id (column ``region``) to the initial regions ``region_ids``.

    Ids are compared as text (``region_labels``), so ``37010`` matches ``"37010"``.

    >>> records = pd.DataFrame({"zip": [37010, 37010, 99999], "n": [2, 1, 4]})
    >>> link = link_records(["37010", "37011"], records, region="zip", count="n")
    >>> link.record_region.tolist(), link.linked, link.unmatched, link.unmatched_records
    ([0, 0, -1], 3, ('99999',), 4)
    >>> link_records(["37010"], pd.DataFrame({"zip": ["37010", None]}), region="zip").missing_records
    1
    """
    require_columns(records, [region] + ([count] if count else []))
    region_codes, region_values = encode_column(records[region])
    label_index = pd.Index(region_labels(pd.Series(list(region_ids), dtype=object))).get_indexer(
        region_labels(pd.Series(region_values, dtype=object))
    )
    record_region = label_index[region_codes] if len(region_codes) else np.zeros(0, dtype=np.int64)
    weights = record_counts(records, count)
    if weights is None:
        weights = np.ones(len(records), dtype=np.int64)
    lost = record_region < 0
    unmatched = tuple(str(v) for v in region_values[np.unique(region_codes[lost])]) if lost.any() else ()
    total = int(weights.sum())
    lost_records = int(weights[lost].sum())
    missing = int(weights[records[region].isna().to_numpy()].sum())
    return Linkage(record_region, total, total - lost_records, unmatched, lost_records, missing)
