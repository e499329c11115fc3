"""Every chart of the dashboard: functions from anonlib results to plotly figures.

No Streamlit here, so each builder is tested on its own. Hover texts carry the
exact numbers. Colour scales default to colour-blind-safe ones; the papers'
red-to-green scale is offered as an option, never the only one.

One module per page's figures (``risk``: Dataset page and report; ``leakage``,
``geo``, ``peers``: Individual privacy, ``schedules``, ``frontier``, ``release``)
over ``base`` (palettes, escaping, layout, compared bars); everything is importable
from ``dashboard.charts``.
"""

from __future__ import annotations

from __future__ import annotations

from .base import QUALITATIVE, AT_RISK, SAFE, Palette, PALETTES, DEFAULT_PALETTE
from .risk import (
    SizeBins,
    class_size_bins,
    anonymity_vector_figure,
    records_at_risk_figure,
    risk_distribution_figure,
)
from .leakage import (
    METHOD_COLOURS,
    leakage_figure,
    leakage_before_after_figure,
    tree_layout,
    TREE_IN_FULL,
    TREE_LEAVES_IN_FULL,
    TREE_EDGE_LABELS_UP_TO,
    search_tree_figure,
    TREE_WORDS,
    method_comparison_figure,
    experiment_figure,
    hierarchy_figure,
    TREE_LEAVES_DRAWN,
)
from .geo import GEO_COLOUR_BY, COUNTY_BORDERS_UP_TO_KM, GEO_METRICS, geo_map_figure, geo_metrics_figure
from .peers import threshold_colorscale, privacy_heatmap, generalization_figure, NPP_BINS, npp_histogram
from .schedules import schedule_vectors_figure, resource_load_figure, table10_figure
from .release import accuracy_figure, distribution_figure
from .frontier import frontier_figure, area_trace_figure, clicked_frontier_policy

__all__ = [
    "accuracy_figure",
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
