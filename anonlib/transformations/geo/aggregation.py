"""Steps 3-5: every region joins its nearest site, classes smaller than k are suppressed,
and the result is evaluated (suppression, compactness, discernibility, non-uniform
entropy, time); ``aggregate`` runs steps 2-5 and is the public entry point."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from ...core.budget import Progress, WorkEstimate
from ...core.equivalence import MISSING_LABEL, Classes, combine, encode
from ...core.errors import (
    ColumnError,
    GeometryError,
    ParameterError,
    ProblemTooLargeError,
    join_names,
    require_columns,
)
from ...core.metrics import discernibility, nonuniform_entropy_codes
from ...core.numbers import MAX_COUNT, seed_number, time_limit_seconds, whole_number
from ...measures.target import ReleaseTarget
from .adc import BATCH_CELLS, BATCH_MOVES, BUCKET_POINTS, AdcTrace, RegionCells, adc_sites
from .projection import link_records, region_labels
from .sites import balanced_density, kmeans_sites, nearest_site

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
    ``unmatched="report"``; they are left out of every measure), ``missing_records`` of them
    with no region id at all (a missing value: ``unplaced`` lists the others' ids).
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
    missing_records: int = 0
    adc: AdcTrace | None = None
    distance: np.ndarray = field(default=None, repr=False)
    record_site: np.ndarray = field(default=None, repr=False)
    record_suppressed: np.ndarray = field(default=None, repr=False)

    @property
    def unplaced(self) -> tuple[str, ...]:
        """The unmatched ids that are ids: the regions do not hold them, so the aggregation cannot
        place their records. A missing id is not among them: an aggregation step leaves it missing.

        >>> AggregationResult.unplaced.fget(type("R", (), {"unmatched": ("99999", MISSING_LABEL)})())
        ('99999',)
        """
        return tuple(u for u in self.unmatched if u != MISSING_LABEL)

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
            "coarser quasi-identifiers (e.g. age in bands)",
            "fewer quasi-identifiers",
            f"a smaller k than {self.k}",
        ]
        advice = (
            f" {changes[0][0].upper()}{changes[0][1:]}, "
            + ", ".join(changes[1:-1])
            + f" or {changes[-1]} keep more records."
        )
        if per_class >= self.k:
            return text + advice
        where = (
            f" The {used:,} aggregated regions hold {per_region:,.1f} records each on average, spread over"
            if used > 1
            else f" The one aggregated region holds all {self.records:,} records, spread over"
        )
        return (
            text
            + where
            + (
                f" {self.classes:,} groups (aggregated region x quasi-identifier values) of {per_class:,.1f} records on "
                f"average, fewer than k = {self.k}." + advice
            )
        )

    def anonymized_records(
        self, records: pd.DataFrame, *, region: str, quasi_identifiers: Sequence[str]
    ) -> pd.DataFrame:
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

    The contract's form of ``aggregate_regions``, which takes the release target.
    """
    return aggregate_regions(
        points,
        records,
        region=region,
        quasi_identifiers=quasi_identifiers,
        target=ReleaseTarget(k),
        n_sites=n_sites,
        method=method,
        count=count,
        seed=seed,
        unmatched=unmatched,
        progress=progress,
        max_passes=max_passes,
        time_limit=time_limit,
    )


def counted_in_records(target: ReleaseTarget) -> str | None:
    """What a regional aggregation shows for a release ``target`` counted in people, histories or
    households (VBAS counts records per region, and its step is only the areas' mapping: the
    target's own check counts its unit after it), as one sentence; None for a target in records.

    >>> counted_in_records(ReleaseTarget(5)) is None
    True
    >>> counted_in_records(ReleaseTarget(5, person="pid")).split(";")[0]
    'Your release target counts people (k = 5)'
    """
    if target.unit == "records":
        return None
    whole, k = target.whole, target.k
    return (
        f"Your release target counts {whole} (k = {k}); regional aggregation counts records per region, so "
        f"the suppressed records below are those in classes of fewer than {k} records. Applied as a step, "
        f"only the areas are merged: the sidebar checks the target in {whole} again, and its suppress button "
        f"removes whole {whole} where a class still holds fewer than {k}."
    )


def aggregate_regions(
    points: pd.DataFrame,
    records: pd.DataFrame,
    *,
    region: str,
    quasi_identifiers: Sequence[str],
    target: ReleaseTarget,
    n_sites: int,
    method: str = "balanced",
    count: str | None = None,
    seed: int | None = None,
    unmatched: Literal["error", "report"] = "error",
    progress: Progress | None = None,
    max_passes: int = 50,
    time_limit: float | None = None,
) -> AggregationResult:
    """``aggregate`` for the release ``target``: classes under its k are suppressed (VBAS
    counts records, so a target counted in people is refused in one sentence).

    >>> points = pd.DataFrame({"region_id": ["a", "b"], "x": [0.0, 1.0], "y": [0.0, 0.0]})
    >>> records = pd.DataFrame({"zip": ["a", "a", "b"], "sex": ["f", "f", "f"]})
    >>> aggregate_regions(points, records, region="zip", quasi_identifiers=["sex"], target=ReleaseTarget(3),
    ...                   n_sites=1).suppressed
    0
    """
    if target.person is not None:
        raise ParameterError(
            "Regional aggregation counts records per region; with a person column the target counts people, "
            "so generalize or suppress whole people instead."
        )
    k = target.k
    started = time.perf_counter()
    if method not in METHODS:
        raise ParameterError(f"The method must be one of {join_names(METHODS)}; got '{method}'.")
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
    cells = RegionCells(
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
        missing_records=link.missing_records,
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
