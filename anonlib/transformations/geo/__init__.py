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

Parts, one per step or concern: ``projection`` (lon/lat to metres, points, linking
records to regions), ``regions`` (initial regions from files and samples),
``site_count`` (step 1), ``sites`` (step 2: balanced density, k-means, nearest
site), ``adc`` (step 2: anonymity-driven clustering and its slow reference),
``aggregation`` (steps 3-5, ``aggregate``), ``display`` (polygons and borders for
the map). Everything public is importable from ``anonlib.transformations.geo``.

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

from .adc import (
    BATCH_CELLS,
    BATCH_MOVES,
    BUCKET_POINTS,
    AdcTrace,
    adc_objective,
    adc_sites,
    adc_sites_reference,
)
from .aggregation import (
    ADC_CELL_LIMIT,
    METHOD_NAMES,
    METHOD_SHORT,
    METHODS,
    SUPPRESSION_WARNING,
    AggregationResult,
    aggregate,
    aggregate_example,
    aggregate_regions,
    counted_in_records,
    estimate_aggregate,
)
from .display import Outlines, aggregated_polygons, crs_description, outlines_for, us_outlines
from .projection import (
    CONUS_ALBERS,
    EQUAL_EARTH,
    Linkage,
    choose_crs,
    link_records,
    points_from_lonlat,
    project_lonlat,
    region_labels,
)
from .regions import (
    AREA_SHARE,
    REGION_SAMPLES,
    AreaColumn,
    Regions,
    area_columns,
    area_id_share,
    read_regions,
    regions_matching,
    sample_regions,
)
from .site_count import (
    CUTOFF_MODELS,
    FIXED_CUTOFFS,
    REGRESSION_FORMS,
    Regression,
    SiteCount,
    max_combinations,
    qi_entropy,
    site_count,
)
from .sites import balanced_density, kmeans_sites, nearest_site

__all__ = [
    "ADC_CELL_LIMIT",
    "AdcTrace",
    "AggregationResult",
    "BATCH_CELLS",
    "BATCH_MOVES",
    "BUCKET_POINTS",
    "CONUS_ALBERS",
    "CUTOFF_MODELS",
    "EQUAL_EARTH",
    "FIXED_CUTOFFS",
    "Linkage",
    "METHODS",
    "METHOD_NAMES",
    "METHOD_SHORT",
    "Outlines",
    "REGION_SAMPLES",
    "REGRESSION_FORMS",
    "Regions",
    "Regression",
    "SUPPRESSION_WARNING",
    "SiteCount",
    "adc_objective",
    "adc_sites",
    "adc_sites_reference",
    "aggregate",
    "aggregate_regions",
    "aggregate_example",
    "aggregated_polygons",
    "balanced_density",
    "choose_crs",
    "counted_in_records",
    "crs_description",
    "estimate_aggregate",
    "kmeans_sites",
    "link_records",
    "max_combinations",
    "nearest_site",
    "outlines_for",
    "points_from_lonlat",
    "project_lonlat",
    "qi_entropy",
    "read_regions",
    "region_labels",
    "AREA_SHARE",
    "AreaColumn",
    "area_columns",
    "area_id_share",
    "regions_matching",
    "sample_regions",
    "site_count",
    "us_outlines",
]
