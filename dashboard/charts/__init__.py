"""Every chart of the dashboard: functions from anonlib results to plotly figures.

No Streamlit here, so each builder is tested on its own. Hover texts carry the
exact numbers. Colour scales default to colour-blind-safe ones; the papers'
red-to-green scale is offered as an option, never the only one.

One module per page's figures (``risk``: Dataset page and report; ``leakage``,
``geo``, ``peers``: Individual privacy, ``schedules``, ``frontier``, ``release``,
``private``: the Release page's private section)
over ``base`` (palettes, escaping, layout, compared bars); everything is importable
from ``dashboard.charts``.
"""

from __future__ import annotations

from .base import AT_RISK, DEFAULT_PALETTE, PALETTES, QUALITATIVE, SAFE, Palette
from .frontier import area_trace_figure, clicked_frontier_policy, frontier_figure
from .geo import COUNTY_BORDERS_UP_TO_KM, GEO_COLOUR_BY, GEO_METRICS, geo_map_figure, geo_metrics_figure
from .leakage import (
    METHOD_COLOURS,
    TREE_EDGE_LABELS_UP_TO,
    TREE_IN_FULL,
    TREE_LEAVES_DRAWN,
    TREE_LEAVES_IN_FULL,
    TREE_WORDS,
    experiment_figure,
    hierarchy_figure,
    leakage_before_after_figure,
    leakage_figure,
    method_comparison_figure,
    search_tree_figure,
    tree_layout,
)
from .peers import NPP_BINS, generalization_figure, npp_histogram, privacy_heatmap, threshold_colorscale
from .private import marginals_figure, private_tree_figure
from .release import accuracy_figure, distribution_figure
from .risk import (
    SizeBins,
    anonymity_vector_figure,
    class_size_bins,
    power_figure,
    records_at_risk_figure,
    risk_distribution_figure,
)
from .schedules import resource_load_figure, schedule_vectors_figure, table10_figure

__all__ = [
    "power_figure",
    "hierarchy_figure",
    "accuracy_figure",
    "marginals_figure",
    "private_tree_figure",
    "distribution_figure",
    "AT_RISK",
    "COUNTY_BORDERS_UP_TO_KM",
    "DEFAULT_PALETTE",
    "GEO_COLOUR_BY",
    "GEO_METRICS",
    "METHOD_COLOURS",
    "NPP_BINS",
    "PALETTES",
    "Palette",
    "QUALITATIVE",
    "SAFE",
    "SizeBins",
    "TREE_EDGE_LABELS_UP_TO",
    "TREE_IN_FULL",
    "TREE_LEAVES_DRAWN",
    "TREE_LEAVES_IN_FULL",
    "TREE_WORDS",
    "anonymity_vector_figure",
    "area_trace_figure",
    "class_size_bins",
    "clicked_frontier_policy",
    "experiment_figure",
    "frontier_figure",
    "generalization_figure",
    "geo_map_figure",
    "geo_metrics_figure",
    "leakage_before_after_figure",
    "leakage_figure",
    "method_comparison_figure",
    "npp_histogram",
    "privacy_heatmap",
    "records_at_risk_figure",
    "resource_load_figure",
    "risk_distribution_figure",
    "schedule_vectors_figure",
    "search_tree_figure",
    "table10_figure",
    "threshold_colorscale",
    "tree_layout",
]
