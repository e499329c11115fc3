"""Voronoi-based regional aggregation (Croft, Shi, Sack & Corriveau, VBAS).

Fine geographic areas (ZIP areas, counties: the *initial regions*) are merged
into coarser *aggregated regions* so that few records must be suppressed to
reach k-anonymity. The pipeline is the paper's, one swappable step each:

1. **Number of sites S** (``site_count``): chosen directly, or from a
   population cut-off G (fixed, entropy model, max-combinations model, or the
   user's regression): ``S = clamp(round(N / G), 1, #regions)``.
2. **Site location**: ``balanced_density`` (Section 3.2.1), ``adc_sites``
   (anonymity-driven clustering, Section 3.2.2) or ``kmeans_sites``
   (population-weighted k-means, a baseline).
3. **Aggregation**: every initial region joins its nearest site
   (``nearest_site``; that is the Voronoi diagram of the sites).
4. **Suppression**: equivalence classes are (aggregated region,
   quasi-identifier values); every class smaller than k is suppressed.
5. **Evaluation**: suppression, compactness (Eq. 20), discernibility (Eq. 21)
   and non-uniform entropy of the geographic attribute (Eqs. 22-23), running time.

One module (past 800 lines) because it is one paper's pipeline: the steps share
the points, the (region, class) cells and the sites, and ADC's fast search sits
next to the slow reference it must equal.

The paper's equations were lost in extraction; what is the paper's prose and
what is our reconstruction is listed in ``docs/geo.md``. Distances are in
metres in a projected CRS (``choose_crs``: the UTM zone of the data when it
spans at most 12 degrees of longitude, else NAD83 / Conus Albers EPSG:5070 for
North America or Equal Earth EPSG:8857 elsewhere).

``aggregate`` runs steps 2-5 and is the public entry point:

    >>> import pandas as pd
    >>> points = pd.DataFrame({"region_id": ["a", "b", "c", "d"],
    ...                        "x": [0.0, 1000.0, 10000.0, 11000.0], "y": [0.0, 0.0, 0.0, 0.0]})
    >>> records = pd.DataFrame({"zip": ["a", "b", "c", "d"], "sex": ["f", "f", "m", "m"],
    ...                         "n": [2, 1, 1, 1]})
    >>> result = aggregate(points, records, region="zip", quasi_identifiers=["sex"], k=2,
    ...                    n_sites=2, count="n")
    >>> result.mapping.tolist(), result.suppressed, result.discernibility
    (['A1', 'A1', 'A2', 'A2'], 0, 13)
"""

from __future__ import annotations

import gzip
import io
import itertools
import math
import time
import warnings
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Literal, Sequence

import numpy as np
import pandas as pd
from scipy.spatial import Delaunay, QhullError, cKDTree

from .core.budget import Progress, WorkEstimate, report
from .core.equivalence import Classes, combine, encode, encode_column, record_counts
from .core.errors import (
    ColumnError,
    DataFileError,
    FileTooLargeError,
    GeometryError,
    ParameterError,
    ProblemTooLargeError,
    join_names,
    require_columns,
)
from .core.loading import gunzip
from .core.numbers import MAX_COUNT, seed_number, time_limit_seconds, whole_number
from .leakage import partition_entropy
from .core.metrics import discernibility, nonuniform_entropy_codes, weighted_median, whole_k

ADC_CELL_LIMIT = 40_000_000  # sites x classes matrix ADC keeps in memory (320 MB of int64)
SUPPRESSION_WARNING = 0.05  # share of suppressed records above which a run's result carries a warning
METHODS = ("balanced", "adc", "kmeans")
METHOD_NAMES = {
    "balanced": "Balanced density",
    "adc": "Anonymity-driven clustering (ADC)",
    "kmeans": "Population-weighted k-means",
}
METHOD_SHORT = {"balanced": "Balanced density", "adc": "ADC", "kmeans": "Weighted k-means"}

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
        raise GeometryError("Some region coordinates are missing or not numbers; every region needs a longitude and latitude.")
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
    ``unmatched_records`` records.
    """

    record_region: np.ndarray
    records: int
    linked: int
    unmatched: tuple[str, ...]
    unmatched_records: int

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
    return Linkage(record_region, total, total - lost_records, unmatched, lost_records)


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
        raise GeometryError(
            f"The file '{name}' must hold polygons or points; found {join_names(sorted(kinds))}."
        )
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


@lru_cache(maxsize=None)
def sample_regions(key: str) -> Regions:
    """Bundled initial regions (cached; do not modify): see ``REGION_SAMPLES``.

    Tennessee is the paper's setting: ZCTAs 37010-38589 with population > 0
    (625 of the 628 areas in that range), from
    ``synthetic.tennessee_zcta_population(populated_only=True)``.

    >>> tn = sample_regions("tennessee_zcta")
    >>> tn.n_regions, int(tn.points["population"].sum()), tn.crs
    (625, 6339942, 'EPSG:32616')
    """
    from .core.samples import load_sample, sample_path
    from .synthetic import tennessee_zcta_population

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


# --------------------------------------------------------------------------
# Step 1: the number of sites
# --------------------------------------------------------------------------

# Fixed population cut-offs the paper cites (Section 3.1).
FIXED_CUTOFFS = {
    "US Census (100,000)": 100_000,
    "Statistics Canada CCHS (70,000)": 70_000,
    "British Census (120,000)": 120_000,
}
CUTOFF_MODELS = ("fixed", "entropy", "max_combinations", "regression")
REGRESSION_FORMS = ("linear", "log-linear", "log-log")


@dataclass(frozen=True)
class Regression:
    """A user's regression of the population cut-off G on entropy H or MaxCombs X.

    ``linear``: G = a + b X; ``log-linear``: ln G = a + b X; ``log-log``:
    ln G = a + b ln X. (The paper fits such models on Canadian regions; its
    coefficients were lost, so none are built in.)

    >>> Regression("log-log", "max_combinations", a=0.0, b=1.0).cutoff(entropy_bits=3.0, max_combinations=40)
    40.0
    """

    form: Literal["linear", "log-linear", "log-log"]
    variable: Literal["entropy", "max_combinations"]
    a: float
    b: float

    def cutoff(self, *, entropy_bits: float, max_combinations: int) -> float:
        if self.form not in REGRESSION_FORMS:
            raise ParameterError(f"The regression form must be one of {join_names(REGRESSION_FORMS)}; got '{self.form}'.")
        value = entropy_bits if self.variable == "entropy" else float(max_combinations)
        if self.form == "linear":
            return self.a + self.b * value
        if self.form == "log-linear":
            return math.exp(self.a + self.b * value)
        if value <= 0:
            raise ParameterError("A log-log regression needs a positive entropy or number of combinations.")
        return math.exp(self.a + self.b * math.log(value))


@dataclass(frozen=True)
class SiteCount:
    """How many sites (aggregated regions) to place and why."""

    n_sites: int
    model: str
    cutoff: float | None
    explanation: str


def qi_entropy(records: pd.DataFrame, quasi_identifiers: Sequence[str], *, count: str | None = None) -> float:
    """Shannon entropy in bits of the records over their quasi-identifier classes (Eq. 1).

    ``H = -sum_e (|e|/N) log2(|e|/N)``.

    >>> qi_entropy(pd.DataFrame({"sex": ["f", "m", "f", "m"]}), ["sex"])
    1.0
    """
    return partition_entropy(encode(records, list(quasi_identifiers), count=count).classes().sizes)


def max_combinations(records: pd.DataFrame, quasi_identifiers: Sequence[str]) -> int:
    """MaxCombs: the product of the numbers of categories of the quasi-identifiers.

    >>> max_combinations(pd.DataFrame({"sex": ["f", "m"], "age": [1, 2]}), ["sex", "age"])
    4
    """
    return int(np.prod([int(c) for c in encode(records, list(quasi_identifiers)).cardinalities], dtype=object))


def site_count(
    total_population: int,
    n_regions: int,
    *,
    model: str = "fixed",
    cutoff: float | None = None,
    k: int = 5,
    entropy_bits: float | None = None,
    max_combs: int | None = None,
    regression: Regression | None = None,
) -> SiteCount:
    """Number of sites from a population cut-off G: ``S = clamp(round(N / G), 1, #regions)``.

    Models: ``fixed`` (``cutoff`` given, e.g. 100,000), ``entropy``
    (G = k * 2^H, ours), ``max_combinations`` (G = k * MaxCombs, ours),
    ``regression`` (the user's ``Regression``).

    >>> site_count(6_346_110, 625, cutoff=100_000).n_sites
    63
    >>> site_count(6_346_110, 625, model="max_combinations", k=5, max_combs=2 * 15 * 5).n_sites
    625
    """
    if n_regions < 1:
        raise GeometryError("There are no initial regions to aggregate.")
    if model == "fixed":
        if cutoff is None:
            raise ParameterError("The fixed cut-off model needs a population cut-off, e.g. 100,000.")
        g, why = float(cutoff), f"fixed population cut-off G = {cutoff:,.0f}"
    elif model == "entropy":
        if entropy_bits is None:
            raise ParameterError("The entropy model needs the entropy of the quasi-identifiers.")
        g = k * 2.0**entropy_bits
        why = f"entropy model (ours): G = k x 2^H = {k} x 2^{entropy_bits:.3f} = {g:,.0f}"
    elif model == "max_combinations":
        if max_combs is None:
            raise ParameterError("The max-combinations model needs the number of value combinations.")
        g = float(k * max_combs)
        why = f"max-combinations model (ours): G = k x MaxCombs = {k} x {max_combs:,} = {g:,.0f}"
    elif model == "regression":
        if regression is None or entropy_bits is None or max_combs is None:
            raise ParameterError("The regression model needs its coefficients, the entropy and MaxCombs.")
        g = regression.cutoff(entropy_bits=entropy_bits, max_combinations=max_combs)
        why = f"your {regression.form} regression on {regression.variable}: G = {g:,.0f}"
    else:
        raise ParameterError(f"The cut-off model must be one of {join_names(CUTOFF_MODELS)}; got '{model}'.")
    if not math.isfinite(g) or g <= 0:
        raise ParameterError(f"The population cut-off must be a positive number; the {model} model gave {g:g}.")
    raw = int(round(total_population / g))
    n = min(max(raw, 1), n_regions)
    clamp = "" if n == raw else f", kept between 1 and the {n_regions:,} regions: {n:,}"
    return SiteCount(
        n_sites=n, model=model, cutoff=g, explanation=f"{why}; S = round({total_population:,} / G) = {raw:,}{clamp}"
    )


# --------------------------------------------------------------------------
# Step 2: site location
# --------------------------------------------------------------------------


def _walk(cumulative: np.ndarray, start: int, ideal: float) -> int:
    """End (exclusive) of the group starting at ``start`` whose population passes ``ideal``.

    Eq. 9: the point that crosses the ideal stays in the group when the sum with
    it is at least as close to the ideal as the sum without it. A group has at
    least one point.
    """
    base = cumulative[start - 1] if start else 0.0
    j = int(np.searchsorted(cumulative, base + ideal, side="left"))
    if j >= len(cumulative):
        return len(cumulative)
    after = cumulative[j] - base
    before = (cumulative[j - 1] - base) if j > start else 0.0
    keep = j == start or (after - ideal) <= (ideal - before)
    return j + 1 if keep else j


def _split_groups(cumulative: np.ndarray, start: int, stop: int, ideal: float) -> list[int]:
    """Boundaries of consecutive groups of about ``ideal`` population in ``[start, stop)``."""
    bounds = []
    while start < stop:
        end = min(_walk(cumulative, start, ideal), stop)
        bounds.append(end)
        start = end
    return bounds


def balanced_density(x: np.ndarray, y: np.ndarray, population: np.ndarray, n_sites: int) -> np.ndarray:
    """Site locations by balanced density (Section 3.2.1): ``n_sites`` x 2 array.

    Rows of about equal population (Eqs. 7-9), cells in each row in proportion
    to its population (Eqs. 10-11), one site per cell at the component-wise
    median of its points (Eqs. 12-13). Exactly ``n_sites`` sites whenever
    there are at least that many points.

    >>> x = np.array([0.0, 1.0, 0.0, 1.0]); y = np.array([0.0, 0.0, 1.0, 1.0])
    >>> balanced_density(x, y, np.array([1, 1, 1, 1]), 4).tolist()
    [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    pop = np.asarray(population, dtype=float)
    n = len(x)
    if n_sites < 1:
        raise ParameterError(f"The number of sites must be at least 1; got {n_sites}.")
    if n_sites > n:
        raise ParameterError(f"There are {n:,} initial regions, so at most {n:,} sites can be placed; got {n_sites:,}.")
    if pop.sum() <= 0:
        pop = np.ones(n)
    total = pop.sum()
    # Eq. 7-8: rows = round(sqrt(S)), ideal row population = round(P / rows).
    n_rows = max(1, int(round(math.sqrt(n_sites))))
    by_y = np.lexsort((x, y))
    cum_y = np.cumsum(pop[by_y])
    ideal_row = max(round(total / n_rows), 1)
    ends = _split_groups(cum_y, 0, n, ideal_row)
    # ASSUMED: a last remnant under half the ideal joins the row below (the paper
    # reduces the number of rows; too much population left makes extra rows).
    if len(ends) > 1 and cum_y[-1] - cum_y[ends[-2] - 1] < ideal_row / 2:
        ends = ends[:-2] + [ends[-1]]
    while len(ends) > n_sites:  # ASSUMED: never more rows than sites; merge the lightest row upwards
        pops = np.diff(np.concatenate([[0.0], cum_y[np.array(ends) - 1]]))
        i = int(np.argmin(pops))
        del ends[i if i < len(ends) - 1 else i - 1]
    starts = [0] + ends[:-1]
    row_pop = np.array([cum_y[e - 1] - (cum_y[s - 1] if s else 0.0) for s, e in zip(starts, ends)])
    row_points = np.array([e - s for s, e in zip(starts, ends)])
    cells = _cells_per_row(row_pop / total, row_points, n_sites)
    sites = []
    for s, e, c in zip(starts, ends, cells):
        members = by_y[s:e]
        order = members[np.lexsort((y[members], x[members]))]
        for group in _row_cells(pop[order], int(c)):
            idx = order[group]
            sites.append((float(np.median(x[idx])), float(np.median(y[idx]))))
    return np.array(sites, dtype=float).reshape(-1, 2)


def _cells_per_row(share: np.ndarray, row_points: np.ndarray, n_sites: int) -> np.ndarray:
    """Eqs. 10-11: cells = max(1, round(S * share)), at most the row's points, summing to S."""
    ideal = n_sites * share
    cells = np.minimum(np.maximum(1, np.rint(ideal)).astype(np.int64), row_points)
    while cells.sum() > n_sites:  # remove from the row most over its share
        excess = np.where(cells > 1, cells - ideal, -np.inf)
        cells[int(np.argmax(excess))] -= 1
    while cells.sum() < n_sites:  # add to the row most under its share (with points left)
        deficit = np.where(cells < row_points, ideal - cells, -np.inf)
        cells[int(np.argmax(deficit))] += 1
    return cells


def _row_cells(pop: np.ndarray, n_cells: int) -> list[slice]:
    """Split one row (points sorted by x) into exactly ``n_cells`` cells of about equal population."""
    n = len(pop)
    cumulative = np.cumsum(pop)
    total = cumulative[-1]
    ideal = max(round(total / n_cells), 1) if total > 0 else 1
    bounds, start = [], 0
    while start < n and len(bounds) < n_cells - 1:
        end = _walk(cumulative, start, ideal) if total > 0 else start + 1
        bounds.append((start, end))
        start = end
    if start < n:  # the final cell takes the rest, even when larger than ideal
        bounds.append((start, n))
    while len(bounds) < n_cells:  # too few cells: split the most populous cell in half
        sizes = [(cumulative[e - 1] - (cumulative[s - 1] if s else 0.0), e - s) for s, e in bounds]
        i = max((j for j in range(len(bounds)) if sizes[j][1] > 1), key=lambda j: sizes[j][0])
        s, e = bounds[i]
        base = cumulative[s - 1] if s else 0.0
        half = int(np.searchsorted(cumulative[s:e] - base, sizes[i][0] / 2.0, side="left")) + s + 1
        half = min(max(half, s + 1), e - 1)
        bounds[i : i + 1] = [(s, half), (half, e)]
    return [slice(s, e) for s, e in bounds]


def kmeans_sites(
    x: np.ndarray, y: np.ndarray, population: np.ndarray, n_sites: int, *, seed: int | None = None, iterations: int = 100
) -> np.ndarray:
    """Population-weighted k-means (Lloyd's algorithm) as a baseline: ``n_sites`` x 2 array.

    Seeded with ``n_sites`` distinct points drawn with probability proportional
    to population; a centre that loses all its points stays where it is.

    >>> x = np.array([0.0, 1.0, 10.0, 11.0]); y = np.zeros(4)
    >>> sorted(kmeans_sites(x, y, np.array([1, 1, 1, 1]), 2, seed=0)[:, 0].tolist())
    [0.5, 10.5]
    """
    xy = np.column_stack([np.asarray(x, dtype=float), np.asarray(y, dtype=float)])
    pop = np.asarray(population, dtype=float)
    n = len(xy)
    if not 1 <= n_sites <= n:
        raise ParameterError(f"The number of sites must be between 1 and {n:,}; got {n_sites:,}.")
    weights = pop if pop.sum() > 0 else np.ones(n)
    rng = np.random.default_rng(seed)
    p = (weights + 1e-12) / (weights + 1e-12).sum()
    centres = xy[rng.choice(n, size=n_sites, replace=False, p=p)].copy()
    labels = None
    for _ in range(iterations):
        new = cKDTree(centres).query(xy)[1]
        if labels is not None and np.array_equal(new, labels):
            break
        labels = new
        mass = np.bincount(labels, weights=weights, minlength=n_sites)
        filled = mass > 0
        for dim in (0, 1):
            sums = np.bincount(labels, weights=weights * xy[:, dim], minlength=n_sites)
            centres[filled, dim] = sums[filled] / mass[filled]
    return centres


def nearest_site(x: np.ndarray, y: np.ndarray, sites: np.ndarray) -> np.ndarray:
    """Index of the nearest site of every point (the Voronoi diagram of the sites).

    >>> nearest_site(np.array([0.0, 9.0]), np.array([0.0, 0.0]), np.array([[1.0, 0.0], [10.0, 0.0]])).tolist()
    [0, 1]
    """
    return cKDTree(np.asarray(sites, dtype=float)).query(np.column_stack([x, y]))[1].astype(np.int64)


@dataclass(frozen=True)
class _Cells:
    """Records counted per (initial region, quasi-identifier class): the data ADC and the metrics use."""

    region: np.ndarray  # initial-region index of each cell
    qclass: np.ndarray  # quasi-identifier class of each cell
    size: np.ndarray  # records in each cell
    n_classes: int  # number of quasi-identifier classes

    def site_class_sizes(self, assignment: np.ndarray, n_sites: int) -> np.ndarray:
        """Records per (aggregated region, class) as an ``n_sites`` x ``n_classes`` matrix."""
        key = assignment[self.region] * self.n_classes + self.qclass
        sizes = np.bincount(key, weights=self.size, minlength=n_sites * self.n_classes)
        return np.rint(sizes).astype(np.int64).reshape(n_sites, self.n_classes)


_NO_CLASS = np.iinfo(np.int64).max


def _anonymity(matrix: np.ndarray) -> np.ndarray:
    """Per aggregated region: its smallest non-empty class (0 for an empty region)."""
    low = np.where(matrix > 0, matrix, _NO_CLASS).min(axis=1)
    return np.where(low == _NO_CLASS, 0, low)


def adc_objective(anonymity: np.ndarray) -> int:
    """ADC objective (Eq. 14, ASSUMED form): ``F = |A| g + (|A| - |A_g|)``; higher is better.

    ``anonymity`` has one entry per aggregated region (0 = empty, not counted);
    g is the lowest anonymity, A_g the regions at that level.

    >>> adc_objective(np.array([2, 3, 2, 0]))
    7
    """
    return _objective(*_objective_parts(anonymity))


def _objective_parts(anonymity: np.ndarray) -> tuple[int, int, int]:
    """F's parts: |A| (non-empty regions), g (their lowest anonymity) and |A_g| (0s when none)."""
    present = anonymity[anonymity > 0]
    if present.size == 0:
        return 0, 0, 0
    g = int(present.min())
    return int(present.size), g, int(np.count_nonzero(present == g))


def _objective(present: int, lowest: int, at_lowest: int) -> int:
    """Eq. 14 from its parts: ``|A| g + (|A| - |A_g|)``."""
    return present * lowest + (present - at_lowest)


@dataclass(frozen=True)
class AdcTrace:
    """What ADC did: objective after each committed move, passes, moves tried and committed."""

    objectives: tuple[int, ...]
    passes: int
    tried: int
    committed: int
    converged: bool


def _close(a: np.ndarray, b: np.ndarray) -> bool:
    """``np.allclose(a, b)`` for two points, without its overhead (rtol 1e-5, atol 1e-8).

    >>> _close(np.array([1.0, 2.0]), np.array([1.0, 2.00001])), _close(np.array([0.0, 0.0]), np.array([0.0, 1e-7]))
    (True, False)
    """
    return bool(abs(a[0] - b[0]) <= 1e-8 + 1e-5 * abs(b[0]) and abs(a[1] - b[1]) <= 1e-8 + 1e-5 * abs(b[1]))


def _ranges(starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """The concatenation of ``range(a, b)`` for each pair, without a Python loop.

    >>> _ranges(np.array([2, 7, 4]), np.array([4, 7, 6])).tolist()
    [2, 3, 4, 5]
    """
    lengths = stops - starts
    ends = np.cumsum(lengths)
    if ends.size == 0:
        return np.zeros(0, dtype=np.int64)
    # position i of range j is starts[j] + (i - its offset); an empty range repeats nothing
    return np.arange(ends[-1]) + np.repeat(starts - (ends - lengths), lengths)


BUCKET_POINTS = 16
BATCH_CELLS = 250_000  # numbers per array when moves are scored together (2 MB of floats)
BATCH_MOVES = 512  # at most this many moves scored together


class _PointIndex:
    """Where the points are, so a trial site move looks only at the points it can change.

    Points are bucketed on a grid of about BUCKET_POINTS points a bucket; each non-empty
    bucket keeps the bounding box of its points and, for the current sites, the
    largest distance of its points to their site. A point p can join a site moved
    to t only if |p - t| < its current distance, so only buckets whose box is
    nearer to t than their largest distance need a look (exact: the comparison
    is then made point by point, as in the full rescan).
    """

    def __init__(self, x: np.ndarray, y: np.ndarray) -> None:
        n = len(x)
        side = max(1, int(math.sqrt(n / BUCKET_POINTS)))
        span_x = max(float(x.max() - x.min()), 1e-9) if n else 1.0
        span_y = max(float(y.max() - y.min()), 1e-9) if n else 1.0
        gx = np.minimum(((x - x.min()) / span_x * side).astype(np.int64), side - 1) if n else x.astype(np.int64)
        gy = np.minimum(((y - y.min()) / span_y * side).astype(np.int64), side - 1) if n else y.astype(np.int64)
        bucket = gx * side + gy
        self.order = np.argsort(bucket, kind="stable")  # points, bucket by bucket
        sorted_bucket = bucket[self.order]
        self.starts = np.flatnonzero(np.r_[True, sorted_bucket[1:] != sorted_bucket[:-1]]) if n else np.zeros(0, np.int64)
        self.stops = np.r_[self.starts[1:], n].astype(np.int64)
        xs, ys = x[self.order], y[self.order]
        self.x0, self.x1 = np.minimum.reduceat(xs, self.starts), np.maximum.reduceat(xs, self.starts)
        self.y0, self.y1 = np.minimum.reduceat(ys, self.starts), np.maximum.reduceat(ys, self.starts)
        self.limit_sq = np.full(len(self.starts), 1e-12)

    def update(self, dist: np.ndarray) -> None:
        """Each bucket's largest distance to its site, after the sites moved, with a tolerance
        (kept squared, so a query compares squared distances)."""
        self.limit_sq = (np.maximum.reduceat(dist[self.order], self.starts) * (1 + 1e-9) + 1e-6) ** 2

    def candidates(self, tx: np.ndarray, ty: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each target (tx[i], ty[i]), the points that may be nearer to it than to their
        site (a superset): ``(target, point)`` pairs, target by target. Targets are taken a
        chunk at a time so the (targets x buckets) distances stay within ``BATCH_CELLS``."""
        chunk = max(1, BATCH_CELLS // max(len(self.starts), 1))
        targets, points = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
        for lo in range(0, len(tx), chunk):
            cx, cy = tx[lo : lo + chunk, None], ty[lo : lo + chunk, None]
            dx = np.maximum(np.maximum(self.x0 - cx, cx - self.x1), 0.0)
            dy = np.maximum(np.maximum(self.y0 - cy, cy - self.y1), 0.0)
            target, near = np.nonzero(dx * dx + dy * dy <= self.limit_sq)
            points.append(self.order[_ranges(self.starts[near], self.stops[near])])
            targets.append(np.repeat(target + lo, self.stops[near] - self.starts[near]))
        return np.concatenate(targets), np.concatenate(points)


class _AdcState:
    """The sites ADC holds and what follows from them: each point's site and distance,
    records per (site, class), each site's anonymity and F; plus the points of each site.

    With ``previous`` (a state of the same points and cells) and ``cells_of`` (the
    cells of given points, point by point, and how many each point has), every
    point is still assigned afresh, but the records per (site, class) are moved
    only for the points whose site changed: the same integers as a full recount
    (``site_class_sizes``) at the cost of the changes.
    """

    def __init__(self, xy: np.ndarray, cells: _Cells, index: _PointIndex, sites: np.ndarray,
                 previous: "_AdcState | None" = None, cells_of=None) -> None:
        self.sites = sites
        self.tree = cKDTree(sites)
        self.dist, self.assignment = self.tree.query(xy)
        if previous is None:
            self.matrix = cells.site_class_sizes(self.assignment, len(sites))
        else:
            self.matrix = previous.matrix.copy()
            changed = np.flatnonzero(self.assignment != previous.assignment)
            if changed.size:
                idx, counts = cells_of(changed)
                q, size = cells.qclass[idx], cells.size[idx].astype(np.int64)
                np.subtract.at(self.matrix, (np.repeat(previous.assignment[changed], counts), q), size)
                np.add.at(self.matrix, (np.repeat(self.assignment[changed], counts), q), size)
        self.anonymity = _anonymity(self.matrix)
        # F and its parts (|A|, g, |A_g|), so a move changing a few sites is scored without a full pass
        self.present, self.lowest, self.at_lowest = _objective_parts(self.anonymity)
        self.objective = _objective(self.present, self.lowest, self.at_lowest)
        self.site_order = np.argsort(self.assignment, kind="stable")  # points, site by site
        self.site_start = np.searchsorted(self.assignment[self.site_order], np.arange(len(sites) + 1))
        self.tree_points = xy
        self._runner_up: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        index.update(self.dist)

    def runners_up(self, sites: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For the points of ``sites`` (as ``points_of(sites)``): the nearest other site and
        its distance. Kept per site; the sites not yet known are queried together."""
        missing = np.array([s for s in dict.fromkeys(sites.tolist()) if s not in self._runner_up], dtype=np.int64)
        if missing.size:
            members = self.points_of(missing)
            sizes = self.site_start[missing + 1] - self.site_start[missing]
            dd, ii = self.tree.query(self.tree_points[members], k=2)
            first_is_self = ii[:, 0] == np.repeat(missing, sizes)
            other = np.where(first_is_self, ii[:, 1], ii[:, 0])
            distance = np.where(first_is_self, dd[:, 1], dd[:, 0])
            bounds = np.cumsum(sizes)[:-1]
            for site, o, d in zip(missing.tolist(), np.split(other, bounds), np.split(distance, bounds)):
                self._runner_up[site] = (o, d)
        parts = [self._runner_up[s] for s in sites.tolist()]
        return np.concatenate([o for o, _ in parts]), np.concatenate([d for _, d in parts])

    def points_of(self, sites) -> np.ndarray:
        """The points of the given site, or sites (ascending within each site)."""
        if np.ndim(sites) == 0:
            return self.site_order[self.site_start[sites] : self.site_start[sites + 1]]
        sites = np.asarray(sites, dtype=np.int64)
        return self.site_order[_ranges(self.site_start[sites], self.site_start[sites + 1])]


@dataclass
class _Try:
    """A tried move, remembered for the next pass while nothing it read has changed.

    It read ``sites`` at ``versions`` (the region, its ring, the sites whose points
    the move changes and its points' runner-up sites) and the region's ``ring``.
    ``target`` None: no move (no members of the class nearby, or the target is the
    site itself). ``rows``/``anonymity``: the sites whose anonymity the move changes
    and their new anonymity. A site moved nearer than ``reach`` to the region's site
    may become the runner-up of one of its points.
    """

    region: int
    sites: np.ndarray
    versions: np.ndarray
    ring: np.ndarray
    target: np.ndarray | None = None
    rows: np.ndarray | None = None
    anonymity: np.ndarray | None = None
    reach: float = 0.0
    valid: bool = True


@dataclass
class _Neighbourhood:
    """A region's neighbourhood (its Voronoi cell plus the polygon through its ring) and the
    targets found in it. It read the region's site and points and its ring's sites (and
    their points when the ring has under 3 sites): it holds while the ring and their
    ``versions`` stay (``checked``: the commit count when that was last confirmed)."""

    ring: np.ndarray
    versions: np.ndarray
    cells: np.ndarray
    targets: dict[int, np.ndarray | None] = field(default_factory=dict)  # class -> target
    checked: int = -1


class _AdcSearch:
    """ADC's moves on an ``_AdcState``: each tried move scored on the points it can change,
    and failed moves remembered until something they read changes (so the pass that
    confirms convergence mostly recalls).

    The state changes only when a move is committed (33 of ~20,000 scorings on all US
    ZIP areas), so the moves a pass is about to try can be scored together in one array
    pass (``score_ahead``); the scores hold until the next commit. A region's
    neighbourhood and targets hold while the sites and points they read stay.
    """

    def __init__(self, x: np.ndarray, y: np.ndarray, cells: _Cells, seed_sites: np.ndarray) -> None:
        self.x, self.y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        self.xy = np.column_stack([self.x, self.y])
        self.cells = cells
        self.by_point = np.argsort(cells.region, kind="stable")  # cells, point by point
        self.point_start = np.searchsorted(cells.region[self.by_point], np.arange(len(self.x) + 1))
        self.index = _PointIndex(self.x, self.y)
        self.points_tree = cKDTree(self.xy)
        self.state = _AdcState(self.xy, cells, self.index, np.array(seed_sites, dtype=float))
        self.version = np.zeros(len(seed_sites), dtype=np.int64)  # bumped when a site moves or its points change
        self.tries: dict[tuple[int, int], _Try] = {}
        self.nearby: dict[int, _Neighbourhood] = {}  # per region, kept while what it read stays
        self.commits = 0
        self.scored: dict[tuple[int, float, float], tuple] = {}  # (region, target) -> its score, until a commit

    def cells_of(self, points: np.ndarray) -> np.ndarray:
        return self.by_point[_ranges(self.point_start[points], self.point_start[points + 1])]

    def cells_and_counts(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The cells of ``points`` (point by point) and how many each point has."""
        return self.cells_of(points), self.point_start[points + 1] - self.point_start[points]

    def trial(self, sites: np.ndarray) -> _AdcState:
        """The state with ``sites``: every point assigned afresh, counts moved incrementally."""
        return _AdcState(self.xy, self.cells, self.index, sites, previous=self.state, cells_of=self.cells_and_counts)

    def neighbourhood_cells(self, region: int, ring: np.ndarray) -> np.ndarray:
        """Cells of the region's neighbourhood, in cell order: its Voronoi cell plus the
        polygon through its adjacent sites (clockwise)."""
        import shapely

        state, x, y = self.state, self.x, self.y
        sites = state.sites
        if len(ring) >= 3:
            centre = sites[region]
            angles = np.arctan2(sites[ring, 1] - centre[1], sites[ring, 0] - centre[0])
            polygon = shapely.Polygon(sites[ring[np.argsort(-angles)]])  # clockwise
            in_ring = np.zeros(0, dtype=np.int64)
            if polygon.is_valid:  # the polygon lies in the disc through its farthest vertex
                radius = float(np.hypot(*(sites[ring] - centre).T).max())
                near = np.asarray(self.points_tree.query_ball_point(centre, radius * (1 + 1e-9) + 1e-6), dtype=np.int64)
                in_ring = near[shapely.contains_xy(polygon, x[near], y[near])]
        else:
            in_ring = state.points_of(ring)
        return np.sort(self.cells_of(np.union1d(state.points_of(region), in_ring)))

    def target(self, region: int, q: int, ring: np.ndarray) -> np.ndarray | None:
        """Eqs. 18-19: where the region's site moves for class ``q``, the weighted median of
        the class's members in its neighbourhood; None when none are nearby or the site is
        already there."""
        held = self.nearby.get(region)
        if held is None or held.checked != self.commits:
            read = self.version[np.concatenate([[region], ring])]
            if held is None or not np.array_equal(held.ring, ring) or not np.array_equal(held.versions, read):
                held = self.nearby[region] = _Neighbourhood(ring, read, self.neighbourhood_cells(region, ring))
            held.checked = self.commits
        nearby, targets = held.cells, held.targets
        if q not in targets:
            cells = self.cells
            members = nearby[cells.qclass[nearby] == q]
            target = None
            if members.size:
                pts, w = cells.region[members], cells.size[members]
                target = np.array([weighted_median(self.x[pts], w), weighted_median(self.y[pts], w)])
                if _close(target, self.state.sites[region]):
                    target = None
            targets[q] = target
        return targets[q]

    def unscored(self, region: int, q: int, ring: np.ndarray) -> bool:
        """Whether trying this move would need a new score on the current state."""
        target = self.target(region, q, ring)
        return target is not None and (region, float(target[0]), float(target[1])) not in self.scored

    def attempt(self, region: int, q: int, ring: np.ndarray) -> _Try:
        """The move of the region's site for class ``q``, scored on the points it can change,
        and remembered."""
        entry = _Try(region, np.zeros(0, np.int64), np.zeros(0, np.int64), ring)
        read = [np.array([region]), ring]
        target = self.target(region, q, ring)
        if target is not None:
            entry.target = target
            key = (region, float(target[0]), float(target[1]))
            if key not in self.scored:  # two classes of a region often give the same target
                self.score_ahead([(region, q, ring)])
            entry.rows, entry.anonymity, entry.reach, scored_read = self.scored[key]
            read += scored_read
        entry.sites = np.concatenate(read)  # repeats do no harm
        entry.versions = self.version[entry.sites].copy()
        self.tries[region, q] = entry
        return entry

    def score_ahead(self, moves) -> None:
        """Score the moves ``(region, class, ring)`` not yet scored on this state, together."""
        todo: dict[tuple[int, float, float], np.ndarray] = {}
        for region, q, ring in moves:
            target = self.target(region, q, ring)
            if target is not None:
                key = (region, float(target[0]), float(target[1]))
                if key not in self.scored:
                    todo.setdefault(key, target)
        if todo:
            self._score([key[0] for key in todo], np.array(list(todo.values())))

    def _score(self, regions: list[int], targets: np.ndarray) -> None:
        """For each move of ``regions[i]``'s site to ``targets[i]``: which sites change
        anonymity, and to what (into ``self.scored``, with what the move read).

        Only the points found near the target (``_PointIndex``) and the region's own points
        (to their runner-up site) are recounted: one array pass over all the moves, each
        point and cell tagged with its move.
        """
        state, cells, x, y = self.state, self.cells, self.x, self.y
        regions_ = np.asarray(regions, dtype=np.int64)
        tx, ty = targets[:, 0].copy(), targets[:, 1].copy()
        n_moves, n_sites, width = len(regions_), len(state.sites), cells.n_classes
        # points near a target that it takes from another site
        near_move, near = self.index.candidates(tx, ty)
        d_near = np.hypot(x[near] - tx[near_move], y[near] - ty[near_move])
        taken = (d_near < state.dist[near]) & (state.assignment[near] != regions_[near_move])
        move, changed, destination = [near_move[taken]], [near[taken]], [regions_[near_move[taken]]]
        # the region's own points stay, or go to their runner-up site if it is now nearer.
        # Points near a target that it does not take only matter if they come to be farther
        # from their site (``commit`` checks those); so a move reads the sites that change.
        sizes = state.site_start[regions_ + 1] - state.site_start[regions_]
        member_bounds = np.concatenate([[0], np.cumsum(sizes)])
        reach = np.zeros(n_moves)
        others = None
        if n_sites > 1 and member_bounds[-1]:
            members, member_move = state.points_of(regions_), np.repeat(np.arange(n_moves), sizes)
            others, d_other = state.runners_up(regions_)
            d_new = np.hypot(x[members] - tx[member_move], y[members] - ty[member_move])
            leaving = d_other < d_new
            np.maximum.at(reach, member_move, d_other + state.dist[members])
            move.append(member_move[leaving])
            changed.append(members[leaving])
            destination.append(others[leaving])
        move, changed, destination = np.concatenate(move), np.concatenate(changed), np.concatenate(destination)
        # records per (move, changed site, class): out of the origin, into the destination
        keys, at = np.unique(np.concatenate([move * n_sites + state.assignment[changed], move * n_sites + destination]),
                             return_inverse=True)  # at: the (move, site) row of each point's origin, then destination
        counts = self.point_start[changed + 1] - self.point_start[changed]
        cell_idx = self.cells_of(changed)
        qs, size = np.tile(cells.qclass[cell_idx], 2), cells.size[cell_idx].astype(float)
        moved = np.bincount(np.repeat(at, np.tile(counts, 2)) * width + qs, weights=np.concatenate([-size, size]),
                            minlength=keys.size * width)
        rows_all = keys % n_sites
        anonymity_all = _anonymity(state.matrix[rows_all] + np.rint(moved).astype(np.int64).reshape(keys.size, width))
        row_bounds = np.searchsorted(keys // n_sites, np.arange(n_moves + 1))
        for i in range(n_moves):
            rows = rows_all[row_bounds[i] : row_bounds[i + 1]]
            read = [rows] if others is None or not sizes[i] else [others[member_bounds[i] : member_bounds[i + 1]], rows]
            self.scored[regions[i], float(tx[i]), float(ty[i])] = (
                rows, anonymity_all[row_bounds[i] : row_bounds[i + 1]], float(reach[i]), read)

    def recalled(self, region: int, q: int, ring: np.ndarray) -> _Try | None:
        """The remembered try of this region and class, if nothing it read has changed."""
        entry = self.tries.get((region, q))
        if (entry is None or not entry.valid or not np.array_equal(entry.ring, ring)
                or not np.array_equal(self.version[entry.sites], entry.versions)):
            return None
        return entry

    def objective_after(self, entry: _Try) -> int:
        """F after the move: its sites at their new anonymity, the others as they are now.

        From the state's |A|, g and |A_g| and the few changed sites (``entry.rows`` are
        distinct): while some unchanged site stays at g, the unchanged sites' lowest level
        is g, so the new lowest level and its count follow from the changed sites alone.
        Otherwise (the move lifts every site at g) the whole vector is recounted.
        """
        state = self.state
        if entry.rows.size == 0:
            return state.objective
        old, new = state.anonymity[entry.rows].tolist(), entry.anonymity.tolist()
        g = state.lowest
        unchanged_at_g = state.at_lowest - old.count(g)
        if state.present == 0 or unchanged_at_g == 0:
            trial = state.anonymity.copy()
            trial[entry.rows] = entry.anonymity
            return adc_objective(trial)
        changed_present = [a for a in new if a > 0]
        present = state.present - sum(a > 0 for a in old) + len(changed_present)
        low = min(g, *changed_present) if changed_present else g
        return _objective(present, low, changed_present.count(low) + (unchanged_at_g if low == g else 0))

    def commit(self, trial: _AdcState, moved: int) -> None:
        """Keep the trial's sites, and forget the tries they may change: those that read a
        site that moved or whose points changed (versions), those whose target may now
        take a point that is farther from its site than before, and those whose region's
        points may now have the moved site as runner-up."""
        old = self.state
        changed = np.flatnonzero(trial.assignment != old.assignment)
        self.version[moved] += 1
        self.version[old.assignment[changed]] += 1
        self.version[trial.assignment[changed]] += 1
        self.state = trial
        self.commits += 1
        self.scored.clear()
        entries = [e for e in self.tries.values() if e.valid and e.target is not None]
        if not entries:
            return
        targets = np.array([e.target for e in entries])
        stale = np.zeros(len(entries), dtype=bool)
        farther = np.flatnonzero(trial.dist > old.dist)
        if farther.size:
            gap = np.hypot(targets[:, 0, None] - self.x[farther], targets[:, 1, None] - self.y[farther])
            stale |= (gap <= trial.dist[farther] * (1 + 1e-9) + 1e-6).any(axis=1)
        centres = trial.sites[[e.region for e in entries]]
        reach = np.array([e.reach for e in entries])
        position = trial.sites[moved]
        stale |= np.hypot(centres[:, 0] - position[0], centres[:, 1] - position[1]) <= reach * (1 + 1e-9) + 1e-6
        for entry in np.array(entries, dtype=object)[stale]:
            entry.valid = False


def _upcoming(search: _AdcSearch, regions: np.ndarray, g: int, neighbours: list[np.ndarray]):
    """The moves ``(region, class, ring)`` a pass tries on ``regions`` (in order) while no
    move is committed: the regions at level g, each class at g, unless recalled."""
    state = search.state
    for region in regions.tolist():
        if state.anonymity[region] == g:
            ring = neighbours[region]
            for q in np.flatnonzero(state.matrix[region] == g).tolist():
                if search.recalled(region, q, ring) is None:
                    yield region, q, ring


def adc_sites(
    x: np.ndarray,
    y: np.ndarray,
    cells: _Cells,
    seed_sites: np.ndarray,
    k: int,
    *,
    max_passes: int = 50,
    time_limit: float | None = None,
    progress: Progress | None = None,
) -> tuple[np.ndarray, AdcTrace]:
    """Anonymity-driven clustering (Section 3.2.2) from ``seed_sites``: ``(sites, trace)``.

    Each pass: for each aggregated region at the lowest anonymity g and each
    of its bottleneck classes, collect the points of its neighbourhood (its
    Voronoi cell plus the polygon through its adjacent sites) holding members
    of that class, move the site to their weighted median (Eqs. 18-19), and
    commit only if F strictly increases. Stops when every region reaches k,
    when a pass commits nothing, after ``max_passes`` or after ``time_limit``
    seconds. A move is first scored on the points it can change
    (``_AdcSearch``); an apparent gain is confirmed by a full reassignment of every point
    before it is committed, so F never decreases. A failed move is remembered and recalled
    in the next pass while nothing it read has changed. The result equals
    ``adc_sites_reference`` (every move rescanning every point), which the
    tests and the bench check. ``progress(done, total, what)``: regions looked at
    of those at level g in the pass.

    Three points; class 0 has one member at each point, class 1 two members
    at x=10. Seeded with sites at x=0 and x=10, ADC keeps only moves that raise F:

    >>> cells = _Cells(region=np.array([0, 1, 2, 2]), qclass=np.array([0, 0, 0, 1]),
    ...                size=np.array([1, 1, 1, 2]), n_classes=2)
    >>> x, y = np.array([0.0, 0.0, 10.0]), np.array([0.0, 1.0, 0.0])
    >>> sites, trace = adc_sites(x, y, cells, np.array([[0.0, 0.0], [10.0, 0.0]]), k=2)
    >>> trace.objectives[0] <= trace.objectives[-1], trace.converged
    (True, True)
    """
    started = time.perf_counter()
    search = _AdcSearch(x, y, cells, seed_sites)
    # moves scored together: 1 after a commit, doubling while none is committed (the
    # scores are lost at a commit); about 8 changed sites a move, each a row of classes,
    # within BATCH_CELLS numbers
    ahead, batch_moves = 1, max(1, min(BATCH_MOVES, BATCH_CELLS // (8 * max(cells.n_classes, 1))))
    objectives, tried, committed, passes, converged = [search.state.objective], 0, 0, 0, False
    last_report = 0.0
    timed_out = False
    previous_g = None
    for passes in range(1, max_passes + 1):
        anonymity = search.state.anonymity
        present = anonymity[anonymity > 0]
        if present.size == 0 or present.min() >= k:
            converged = True
            break
        g = int(present.min())
        if previous_g is not None and g != previous_g:  # the remembered scores assumed the old level
            search.tries.clear()
        previous_g = g
        lowest = np.flatnonzero(anonymity == g)
        neighbours = _adjacent_sites(search.state.sites)
        moved = False
        for step, region in enumerate(lowest):
            now = time.perf_counter()
            if time_limit is not None and now - started > time_limit:
                timed_out = True
                break
            state = search.state
            if progress is not None and now - last_report > 0.1:
                last_report = now
                report(progress, step, len(lowest), f"pass {passes}: {committed:,} moves kept, F = {state.objective:,}")
            if step:  # a region is visited once a pass: its neighbourhood is not kept past its visit
                search.nearby.pop(int(lowest[step - 1]), None)
            if state.anonymity[region] != g:  # already improved by an earlier move in this pass
                continue
            ring = neighbours[region]
            for q in np.flatnonzero(state.matrix[region] == g):
                entry = search.recalled(region, q, ring)
                if entry is None:
                    if search.unscored(region, q, ring):  # score this move and the next ones together
                        search.score_ahead(itertools.islice(_upcoming(search, lowest[step:], g, neighbours), ahead))
                        ahead = min(2 * ahead, batch_moves)
                    entry = search.attempt(region, q, ring)
                if entry.target is None:
                    continue
                tried += 1
                if search.objective_after(entry) <= state.objective:
                    continue
                candidate = state.sites.copy()
                candidate[region] = entry.target
                trial = search.trial(candidate)  # a full reassignment of the points
                if trial.objective > state.objective:  # commit only on strict improvement (full recount)
                    search.commit(trial, region)
                    ahead = 1
                    objectives.append(trial.objective)
                    committed += 1
                    moved = True
                    neighbours = _adjacent_sites(trial.sites)
                    break
                search.index.update(state.dist)  # the trial's distances were not kept
                entry.valid = False
        if timed_out or not moved:
            converged = not timed_out
            break
    state = search.state
    if progress is not None:
        why = f"stopped at the {time_limit:g} s time limit" if timed_out else f"finished after {passes} passes"
        report(progress, 1, 1, f"ADC {why}: {committed:,} of {tried:,} moves kept, F = {state.objective:,}")
    return state.sites, AdcTrace(tuple(objectives), passes, tried, committed, converged)


def adc_sites_reference(
    x: np.ndarray,
    y: np.ndarray,
    cells: _Cells,
    seed_sites: np.ndarray,
    k: int,
    *,
    max_passes: int = 50,
    time_limit: float | None = None,
    progress: Progress | None = None,
) -> tuple[np.ndarray, AdcTrace]:
    """The first ADC implementation, kept as the slow reference ``adc_sites`` must equal.

    Every tried move rescans all points (new distances, members of the moved
    site, its Voronoi ring) and looks cells up point by point; ``adc_sites`` does
    the same arithmetic on the nearby points only. Tests and ``python -m bench
    scale`` compare the two (same sites, same trace).

    Anonymity-driven clustering (Section 3.2.2) from ``seed_sites``: ``(sites, trace)``.

    Each pass: for each aggregated region at the lowest anonymity g and each
    of its bottleneck classes, collect the points of its neighbourhood (its
    Voronoi cell plus the polygon through its adjacent sites) holding members
    of that class, move the site to their weighted median (Eqs. 18-19), and
    commit only if F strictly increases. Stops when every region reaches k,
    when a pass commits nothing, after ``max_passes`` or after ``time_limit``
    seconds. A move is first scored incrementally (only the points that change
    site are recounted); an apparent gain is confirmed by a full recount
    before it is committed, so F never decreases.

    Three points; class 0 has one member at each point, class 1 two members
    at x=10. Seeded with sites at x=0 and x=10, ADC keeps only moves that raise F:

    >>> cells = _Cells(region=np.array([0, 1, 2, 2]), qclass=np.array([0, 0, 0, 1]),
    ...                size=np.array([1, 1, 1, 2]), n_classes=2)
    >>> x, y = np.array([0.0, 0.0, 10.0]), np.array([0.0, 1.0, 0.0])
    >>> sites, trace = adc_sites_reference(x, y, cells, np.array([[0.0, 0.0], [10.0, 0.0]]), k=2)
    >>> trace.objectives[0] <= trace.objectives[-1], trace.converged
    (True, True)
    """
    import shapely

    started = time.perf_counter()
    sites = np.array(seed_sites, dtype=float)
    n_sites = len(sites)
    xy = np.column_stack([x, y])
    # Points holding members of each class: cells sorted by class.
    by_class = np.argsort(cells.qclass, kind="stable")
    class_start = np.searchsorted(cells.qclass[by_class], np.arange(cells.n_classes + 1))
    # Cells of each point: cells sorted by point.
    by_point = np.argsort(cells.region, kind="stable")
    point_start = np.searchsorted(cells.region[by_point], np.arange(len(x) + 1))

    def full(candidate: np.ndarray):
        tree = cKDTree(candidate)
        dist, assignment = tree.query(xy)
        matrix = cells.site_class_sizes(assignment, n_sites)
        anonymity = _anonymity(matrix)
        return tree, dist, assignment, matrix, anonymity, adc_objective(anonymity)

    def quick(region: int, target: np.ndarray) -> int:
        """F after moving ``region``'s site to ``target``, recounting only the points that change site."""
        d_new = np.hypot(x - target[0], y - target[1])
        gained = np.flatnonzero((d_new < dist) & (assignment != region))
        members = np.flatnonzero(assignment == region)
        new_site = np.full(len(members), region)
        if members.size and n_sites > 1:
            dd, ii = tree.query(xy[members], k=2)
            first_is_self = ii[:, 0] == region
            other = np.where(first_is_self, ii[:, 1], ii[:, 0])
            d_other = np.where(first_is_self, dd[:, 1], dd[:, 0])
            new_site = np.where(d_other < d_new[members], other, region)
        leaving = new_site != region
        changed = np.concatenate([gained, members[leaving]])
        if changed.size == 0:
            return best
        destination = np.concatenate([np.full(gained.size, region), new_site[leaving]])
        idx = [by_point[point_start[p] : point_start[p + 1]] for p in changed]
        counts = [len(i) for i in idx]
        cell_idx = np.concatenate(idx)
        old_rows = np.repeat(assignment[changed], counts)
        new_rows = np.repeat(destination, counts)
        rows = np.unique(np.concatenate([old_rows, new_rows]))
        local = {int(r): j for j, r in enumerate(rows)}
        block = matrix[rows].copy()
        q, size = cells.qclass[cell_idx], cells.size[cell_idx]
        np.subtract.at(block, (np.array([local[int(r)] for r in old_rows], dtype=np.int64), q), size)
        np.add.at(block, (np.array([local[int(r)] for r in new_rows], dtype=np.int64), q), size)
        trial = anonymity.copy()
        trial[rows] = _anonymity(block)
        return adc_objective(trial)

    tree, dist, assignment, matrix, anonymity, best = full(sites)
    objectives, tried, committed, passes, converged = [best], 0, 0, 0, False
    last_report = 0.0
    timed_out = False
    for passes in range(1, max_passes + 1):
        present = anonymity[anonymity > 0]
        if present.size == 0 or present.min() >= k:
            converged = True
            break
        g = int(present.min())
        lowest = np.flatnonzero(anonymity == g)
        neighbours = _adjacent_sites(sites)
        moved = False
        for step, region in enumerate(lowest):
            now = time.perf_counter()
            if time_limit is not None and now - started > time_limit:
                timed_out = True
                break
            if progress is not None and now - last_report > 0.1:
                last_report = now
                report(progress, step, len(lowest), f"pass {passes}: {committed:,} moves kept, F = {best:,}")
            if anonymity[region] != g:  # already improved by an earlier move in this pass
                continue
            in_cell = assignment == region
            ring = neighbours[region]
            if len(ring) >= 3:
                centre = sites[region]
                angles = np.arctan2(sites[ring, 1] - centre[1], sites[ring, 0] - centre[0])
                polygon = shapely.Polygon(sites[ring[np.argsort(-angles)]])  # clockwise
                in_ring = shapely.contains_xy(polygon, x, y) if polygon.is_valid else np.zeros_like(in_cell)
            else:
                in_ring = np.isin(assignment, ring)
            neighbourhood = in_cell | in_ring
            for q in np.flatnonzero(matrix[region] == g):
                members = by_class[class_start[q] : class_start[q + 1]]
                members = members[neighbourhood[cells.region[members]]]
                if members.size == 0:
                    continue
                pts, w = cells.region[members], cells.size[members]
                target = np.array([weighted_median(xy[pts, 0], w), weighted_median(xy[pts, 1], w)])
                if np.allclose(target, sites[region]):
                    continue
                tried += 1
                if quick(region, target) <= best:
                    continue
                candidate = sites.copy()
                candidate[region] = target
                state = full(candidate)
                if state[-1] > best:  # commit only on strict improvement (confirmed by a full recount)
                    sites = candidate
                    tree, dist, assignment, matrix, anonymity, best = state
                    objectives.append(best)
                    committed += 1
                    moved = True
                    neighbours = _adjacent_sites(sites)
                    break
        if timed_out or not moved:
            converged = not timed_out
            break
    if progress is not None:
        why = f"stopped at the {time_limit:g} s time limit" if timed_out else f"finished after {passes} passes"
        report(progress, 1, 1, f"ADC {why}: {committed:,} of {tried:,} moves kept, F = {best:,}")
    return sites, AdcTrace(tuple(objectives), passes, tried, committed, converged)


def _adjacent_sites(sites: np.ndarray) -> list[np.ndarray]:
    """Per site, the sites whose Voronoi cells touch its own (Delaunay neighbours)."""
    n = len(sites)
    if n < 4:
        return [np.array([j for j in range(n) if j != i], dtype=np.int64) for i in range(n)]
    try:
        indptr, indices = Delaunay(sites).vertex_neighbor_vertices
    except QhullError:  # all sites on a line
        order = np.argsort(sites[:, 0] + sites[:, 1])
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n)
        return [order[[r for r in (rank[i] - 1, rank[i] + 1) if 0 <= r < n]] for i in range(n)]
    return [indices[indptr[i] : indptr[i + 1]] for i in range(n)]


# --------------------------------------------------------------------------
# Steps 3-5: aggregation, suppression, evaluation
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class AggregationResult:
    """One run of the VBAS pipeline.

    ``mapping``: initial region id -> aggregated region id ("A1", "A2", ...);
    ``sites``: one row per aggregated region (``x``, ``y`` in metres,
    ``regions``, ``records``, ``anonymity`` = its smallest class,
    ``suppressed`` records); ``suppressed``: number of suppressed records;
    ``compactness``: sum over initial regions of the distance to their site
    (metres, Eq. 20); ``mean_distance_km``: population-weighted mean of that
    distance; ``discernibility`` (Eq. 21); ``nonuniform_entropy`` (bits, Eqs.
    22-23); ``running_time`` (seconds); ``unmatched``: record region ids with
    no initial region, with ``unmatched_records`` (only with
    ``unmatched="report"``; they are left out of every measure).
    """

    method: str
    k: int
    n_sites: int
    mapping: pd.Series
    sites: pd.DataFrame
    records: int
    suppressed: int
    classes: int
    compactness: float
    mean_distance_km: float
    discernibility: int
    nonuniform_entropy: float
    running_time: float
    unmatched: tuple[str, ...] = ()
    unmatched_records: int = 0
    adc: AdcTrace | None = None
    distance: np.ndarray = field(default=None, repr=False)
    record_site: np.ndarray = field(default=None, repr=False)
    record_suppressed: np.ndarray = field(default=None, repr=False)

    @property
    def suppressed_share(self) -> float:
        """Share of records suppressed (0..1)."""
        return self.suppressed / self.records if self.records else 0.0

    def summary(self) -> dict[str, object]:
        """The run's numbers as one flat row (for the comparison table and JSON).

        >>> sorted(aggregate_example().summary())[:3]
        ['aggregated regions', 'classes', 'compactness (km)']
        """
        return {
            "method": METHOD_NAMES.get(self.method, self.method),
            "k": self.k,
            "sites": self.n_sites,
            "aggregated regions": int((self.sites["regions"] > 0).sum()),
            "records": self.records,
            "classes": self.classes,
            "suppressed records": self.suppressed,
            "suppressed (%)": round(100 * self.suppressed_share, 4),
            "compactness (km)": round(self.compactness / 1000, 3),
            "mean distance (km)": round(self.mean_distance_km, 3),
            "discernibility": self.discernibility,
            "non-uniform entropy (bits)": round(self.nonuniform_entropy, 3),
            "running time (s)": round(self.running_time, 3),
        }

    def suppression_warning(self, threshold: float = SUPPRESSION_WARNING) -> str | None:
        """A sentence when more than ``threshold`` of the records are suppressed
        (None otherwise), naming the change that keeps more of them.

        >>> aggregate_example().suppression_warning() is None
        True
        >>> points = pd.DataFrame({"region_id": ["a", "b"], "x": [0.0, 9.0], "y": [0.0, 0.0]})
        >>> records = pd.DataFrame({"zip": ["a", "b", "b"], "sex": ["f", "m", "m"]})
        >>> print(aggregate(points, records, region="zip", quasi_identifiers=["sex"], k=2, n_sites=2).suppression_warning())
        33.3% of the records (1 of 3) are suppressed, more than the 5% this warning is set at. The 2 aggregated regions hold 1.5 records each on average, spread over 2 groups (aggregated region x quasi-identifier values) of 1.5 records on average, fewer than k = 2. Fewer sites (a larger population cut-off, or fewer chosen directly), coarser quasi-identifiers (e.g. age in bands), fewer quasi-identifiers or a smaller k than 2 keep more records.
        """
        if self.records == 0 or self.suppressed_share <= threshold:
            return None
        used = max(int((self.sites["regions"] > 0).sum()), 1)
        per_region = self.records / used
        text = (
            f"{100 * self.suppressed_share:.1f}% of the records ({self.suppressed:,} of {self.records:,}) are "
            f"suppressed, more than the {100 * threshold:g}% this warning is set at."
        )
        per_class = self.records / max(self.classes, 1)
        changes = (["fewer sites (a larger population cut-off, or fewer chosen directly)"] if used > 1 else []) + [
            "coarser quasi-identifiers (e.g. age in bands)", "fewer quasi-identifiers", f"a smaller k than {self.k}"]
        advice = f" {changes[0][0].upper()}{changes[0][1:]}, " + ", ".join(changes[1:-1]) + f" or {changes[-1]} keep more records."
        if per_class >= self.k:
            return text + advice
        where = (f" The {used:,} aggregated regions hold {per_region:,.1f} records each on average, spread over"
                 if used > 1 else f" The one aggregated region holds all {self.records:,} records, spread over")
        return text + where + (
            f" {self.classes:,} groups (aggregated region x quasi-identifier values) of {per_class:,.1f} records on "
            f"average, fewer than k = {self.k}." + advice
        )

    def anonymized_records(self, records: pd.DataFrame, *, region: str, quasi_identifiers: Sequence[str]) -> pd.DataFrame:
        """The records with the region replaced by its aggregated region; suppressed records
        get ``"*"`` in the region and every quasi-identifier (counts are kept).

        Pass the same ``records`` as to ``aggregate``.

        >>> records = pd.DataFrame({"zip": ["a", "c"], "sex": ["f", "m"]})
        >>> points = pd.DataFrame({"region_id": ["a", "c"], "x": [0.0, 9.0], "y": [0.0, 0.0]})
        >>> result = aggregate(points, records, region="zip", quasi_identifiers=["sex"], k=2, n_sites=1)
        >>> result.anonymized_records(records, region="zip", quasi_identifiers=["sex"]).values.tolist()
        [['*', '*', True], ['*', '*', True]]
        """
        if self.record_site is None or len(records) != len(self.record_site):
            raise ParameterError("These are not the records this aggregation was computed from.")
        labels = self.sites.index.to_numpy(dtype=object)
        out = records.copy()
        site = self.record_site
        valid = site >= 0
        region_out = np.full(len(out), None, dtype=object)
        region_out[valid] = labels[site[valid]]
        region_out[self.record_suppressed] = "*"
        out[region] = region_out
        for column in quasi_identifiers:
            values = np.array(out[column].astype(object), dtype=object)
            values[self.record_suppressed] = "*"
            out[column] = values
        out["suppressed"] = self.record_suppressed
        return out


# Measured on all US ZIP areas (33,120 points, 3.3 M record rows, 3,125 sites, 36
# classes; 2 shared cores): the pipeline takes about 0.4 us a record row, and ADC
# tries about 13 moves a site at about 0.3 ms each.
_ROW_SECONDS = 4e-7
_MOVE_SECONDS = 1.5e-4
_MOVES_PER_SITE = 16


def estimate_aggregate(
    points: pd.DataFrame,
    records: pd.DataFrame,
    *,
    quasi_identifiers: Sequence[str],
    n_sites: int,
    method: str = "balanced",
    time_limit: float | None = None,
) -> WorkEstimate:
    """What ``aggregate`` will cost, before starting: record rows for balanced density
    and k-means, plus ADC's moves (about a dozen a site; at most ``time_limit`` seconds)
    and its sites x classes table.

    >>> points = pd.DataFrame({"region_id": ["a", "b"], "x": [0.0, 1.0], "y": [0.0, 0.0]})
    >>> records = pd.DataFrame({"zip": ["a", "b", "b"], "sex": ["f", "m", "f"]})
    >>> e = estimate_aggregate(points, records, quasi_identifiers=["sex"], n_sites=2, method="adc")
    >>> e.what, e.operations, e.interactive
    ('aggregating 3 record rows of 2 regions around 2 sites, trying up to 32 ADC moves', 32, True)
    """
    if method not in METHODS:
        raise ParameterError(f"The method must be one of {join_names(METHODS)}; got '{method}'.")
    rows, regions, sites = len(records), len(points), int(n_sites)
    what = f"aggregating {rows:,} record rows of {regions:,} regions around {sites:,} sites"
    seconds = rows * _ROW_SECONDS + regions * 1e-5
    peak = rows * 8 * 8 + regions * 8 * 12
    moves = rows
    if method == "adc":
        combinations = math.prod(max(int(records[q].nunique(dropna=False)), 1) for q in quasi_identifiers)
        classes = min(combinations, max(rows, 1))
        moves = sites * _MOVES_PER_SITE
        adc_seconds = moves * _MOVE_SECONDS
        seconds += adc_seconds if time_limit is None else min(adc_seconds, float(time_limit))
        peak += sites * classes * 8 * 3 + 6 * 8 * min(BATCH_CELLS, BATCH_MOVES * max(regions // BUCKET_POINTS, 1))
        what += f", trying up to {moves:,} ADC moves"
    return WorkEstimate(what, operations=moves, seconds=seconds, peak_bytes=peak)


def aggregate(
    points: pd.DataFrame,
    records: pd.DataFrame,
    *,
    region: str,
    quasi_identifiers: Sequence[str],
    k: int,
    n_sites: int,
    method: str = "balanced",
    count: str | None = None,
    seed: int | None = None,
    unmatched: Literal["error", "report"] = "error",
    progress: Progress | None = None,
    max_passes: int = 50,
    time_limit: float | None = None,
) -> AggregationResult:
    """Aggregate initial regions around ``n_sites`` sites and suppress classes under k.

    ``points``: ``region_id``, ``x``, ``y`` (metres) and optional
    ``population`` (else the records per region weigh the sites); ``records``:
    the column ``region`` plus ``quasi_identifiers`` (one record per row, or
    ``count`` records). ``method``: ``"balanced"`` (balanced density),
    ``"adc"`` (ADC seeded by balanced density; ``progress(done, total, what)`` is
    called as it works) or ``"kmeans"`` (seeded by ``seed``). Record region
    ids missing from ``points`` raise ``GeometryError`` naming them, or with
    ``unmatched="report"`` are left out and listed in the result. ADC stops
    after ``max_passes`` passes or ``time_limit`` seconds.

    >>> r = aggregate_example()
    >>> r.records, r.suppressed, round(r.nonuniform_entropy, 3)
    (5, 0, 2.755)
    """
    started = time.perf_counter()
    if method not in METHODS:
        raise ParameterError(f"The method must be one of {join_names(METHODS)}; got '{method}'.")
    k = whole_k(k)
    x, y, region_ids, population = _validate_points(points)
    n_regions = len(region_ids)
    n_sites = whole_number(n_sites, "The number of sites", minimum=None, maximum=None)
    seed, time_limit = seed_number(seed), time_limit_seconds(time_limit)
    max_passes = whole_number(max_passes, "The number of ADC passes", minimum=1, maximum=10_000)
    if not 1 <= n_sites <= n_regions:
        raise ParameterError(
            f"The number of sites must be between 1 and the number of initial regions ({n_regions:,}); got {n_sites:,}."
        )
    require_columns(records, [region] + list(quasi_identifiers) + ([count] if count else []))
    if region in quasi_identifiers:
        raise ColumnError(f"The region column '{region}' cannot also be a quasi-identifier here; it is aggregated.")

    # Records -> initial-region index (factorize the column, match its few labels).
    link = link_records(region_ids, records, region=region, count=count)
    record_region = link.record_region
    table = encode(records, list(quasi_identifiers), count=count)
    weights = table.weights if table.weights is not None else np.ones(table.n_rows, dtype=np.int64)
    lost = record_region < 0
    unmatched_ids, unmatched_records = link.unmatched, link.unmatched_records
    if len(record_region) and lost.all():
        raise GeometryError(
            f"None of the records' ids in '{region}' match an initial region (for example "
            f"{join_names(unmatched_ids, 3)}; regions are like {join_names(region_ids[:3], 3)}). "
            "Choose initial regions that contain these ids (for example all US ZIP areas rather than one "
            "state's), or the column that holds the area ids."
        )
    if lost.any() and unmatched == "error":
        raise GeometryError(
            f"{unmatched_records:,} records have region ids that match no initial region in "
            f"'{region}': {join_names(unmatched_ids)}. Choose initial regions that contain them, correct "
            "the ids, or choose to report and leave them out."
        )
    # Records counted per (initial region, quasi-identifier class) with the kernel.
    qclass = table.classes().ids
    n_q = max(int(qclass.max()) + 1, 1) if len(qclass) else 1
    matched = ~lost
    cell_ids, n_cells = combine([record_region[matched], qclass[matched]], [n_regions, n_q])
    cell_counts = Classes.from_ids(cell_ids, n_cells, weights[matched])
    first = cell_counts.first_rows
    cells = _Cells(
        region=record_region[matched][first], qclass=qclass[matched][first], size=cell_counts.sizes, n_classes=n_q
    )
    region_records = Classes.from_ids(cells.region, n_regions, cells.size).sizes
    site_weight = population if population is not None else region_records

    # Step 2: site location.
    trace = None
    if method == "kmeans":
        sites = kmeans_sites(x, y, site_weight, n_sites, seed=seed)
    else:
        sites = balanced_density(x, y, site_weight, n_sites)
        if method == "adc":
            if n_sites * n_q > ADC_CELL_LIMIT:
                raise ProblemTooLargeError(
                    f"ADC keeps a table of {n_sites:,} sites x {n_q:,} quasi-identifier combinations "
                    f"({n_sites * n_q:,} cells, limit {ADC_CELL_LIMIT:,}); choose fewer sites or "
                    "quasi-identifiers, or use balanced density."
                )
            sites, trace = adc_sites(
                x, y, cells, sites, k, max_passes=max_passes, time_limit=time_limit, progress=progress
            )

    # Step 3: aggregation = nearest site.
    assignment = nearest_site(x, y, sites)
    # Step 4: suppression of classes (aggregated region, QI values) under k,
    # counted with the kernel over the (initial region, class) cells.
    cell_site = assignment[cells.region]
    class_ids, n_classes = combine([cell_site, cells.qclass], [n_sites, n_q])
    class_sizes = Classes.from_ids(class_ids, n_classes, cells.size).sizes
    cell_suppressed = (class_sizes < k)[class_ids]
    suppressed_per_site = Classes.from_ids(cell_site, n_sites, cells.size * cell_suppressed).sizes
    records_per_site = Classes.from_ids(cell_site, n_sites, cells.size).sizes
    class_site = np.zeros(n_classes, dtype=np.int64)
    class_site[class_ids] = cell_site
    # Region anonymity = its smallest non-empty class, as ADC's ``_anonymity``:
    # a class of rows whose record counts are all 0 holds no one.
    big = np.iinfo(np.int64).max
    anonymity = np.full(n_sites, big, dtype=np.int64)
    occupied = class_sizes > 0
    np.minimum.at(anonymity, class_site[occupied], class_sizes[occupied])
    anonymity[anonymity == big] = 0
    record_site = np.full(len(record_region), -1, dtype=np.int64)
    record_site[matched] = assignment[record_region[matched]]
    record_suppressed = np.zeros(len(record_region), dtype=bool)
    record_suppressed[matched] = cell_suppressed[cell_ids]

    # Step 5: evaluation.
    distance = np.hypot(x - sites[assignment, 0], y - sites[assignment, 1])
    weight_total = float(np.sum(site_weight))
    mean_km = float(np.dot(distance, site_weight) / weight_total / 1000) if weight_total > 0 else 0.0
    # Non-uniform entropy of the geographic attribute: generalized value =
    # aggregated region, or "*" (code n_sites) for a suppressed record.
    generalized = np.where(cell_suppressed, n_sites, cell_site)
    nue = nonuniform_entropy_codes(cells.region, n_regions, generalized, n_sites + 1, cells.size)

    labels = np.array([f"A{i + 1}" for i in range(n_sites)], dtype=object)
    site_table = pd.DataFrame(
        {
            "x": sites[:, 0],
            "y": sites[:, 1],
            "regions": np.bincount(assignment, minlength=n_sites),
            "records": records_per_site,
            "anonymity": anonymity,
            "suppressed": suppressed_per_site,
        },
        index=pd.Index(labels, name="aggregated_region"),
    )
    return AggregationResult(
        method=method,
        k=k,
        n_sites=n_sites,
        mapping=pd.Series(labels[assignment], index=pd.Index(region_ids, name="region_id"), name="aggregated_region"),
        sites=site_table,
        records=int(class_sizes.sum()),
        suppressed=int(suppressed_per_site.sum()),
        classes=int(class_sizes.size),
        compactness=float(distance.sum()),
        mean_distance_km=mean_km,
        discernibility=discernibility(class_sizes, k),
        nonuniform_entropy=nue,
        running_time=time.perf_counter() - started,
        unmatched=unmatched_ids,
        unmatched_records=unmatched_records,
        adc=trace,
        distance=distance,
        record_site=record_site,
        record_suppressed=record_suppressed,
    )


def _validate_points(points: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """Coordinates, ids and population of a points table, or a GeometryError saying what is wrong."""
    missing = [c for c in ("region_id", "x", "y") if c not in points.columns]
    if missing:
        raise GeometryError(
            f"The region table needs the columns region_id, x and y (metres); missing: {join_names(missing)}."
        )
    if len(points) == 0:
        raise GeometryError("The region table is empty; there are no initial regions to aggregate.")
    ids = region_labels(points["region_id"])
    if pd.isna(pd.Series(ids)).any():
        raise GeometryError("Some initial regions have no id; every region needs one.")
    duplicated = pd.Series(ids).duplicated().to_numpy()
    if duplicated.any():
        raise GeometryError(f"Region ids must be unique; repeated: {join_names(pd.unique(ids[duplicated]))}.")
    x = pd.to_numeric(points["x"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    y = pd.to_numeric(points["y"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    bad = ~(np.isfinite(x) & np.isfinite(y))
    if bad.any():
        raise GeometryError(f"These regions have no usable x/y coordinates: {join_names(ids[bad])}.")
    population = None
    if "population" in points.columns:
        pop = pd.to_numeric(points["population"], errors="coerce")
        if (pop > MAX_COUNT).any():
            raise GeometryError(f"The population of every initial region must be at most {MAX_COUNT:,}.")
        if pop.isna().any() or (pop < 0).any():
            raise GeometryError("The population of every initial region must be a number of 0 or more.")
        population = pop.to_numpy(dtype=np.int64)
    return x, y, ids, population


def aggregate_example() -> AggregationResult:
    """A five-record example used in the docstrings.

    >>> aggregate_example().mapping.to_dict()
    {'a': 'A1', 'b': 'A1', 'c': 'A2'}
    """
    points = pd.DataFrame({"region_id": ["a", "b", "c"], "x": [0.0, 1.0, 50.0], "y": [0.0, 0.0, 0.0]})
    records = pd.DataFrame({"zip": ["a", "a", "b", "c", "c"], "sex": ["f", "f", "f", "m", "m"]})
    return aggregate(points, records, region="zip", quasi_identifiers=["sex"], k=2, n_sites=2)


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
        frame = regions.polygons.assign(aggregated_region=result.mapping.reindex(regions.polygons["region_id"]).to_numpy())
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

    from .core.samples import sample_path

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
    return Outlines(crs, shapely.boundary(counties_m), shapely.boundary(states_m), shapely.make_valid(land_m),
                    shapely.make_valid(states_m))


def outlines_for(regions: Regions, *, margin: float = 0.05, min_share: float = 0.9) -> Outlines | None:
    """The US borders around ``regions``, clipped to their extent (plus ``margin``
    of it) and simplified to the map's scale, with ``land`` = the states that hold
    the regions' points; None when fewer than ``min_share`` of the points lie on
    US land (areas elsewhere: no borders are bundled).

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
