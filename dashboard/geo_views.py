"""What the Geographic aggregation page draws for one run of VBAS: the measures of the result,
the map of the aggregated regions (no tile server; state and county borders drawn from the
bundled shapes), the methods compared, the downloads, the aggregation offered as a step of the
working copy, and what to do for a file without a column of area ids. Results come from
``anonlib.transformations.geo``; the figures from ``dashboard.charts``."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from anonlib.core.dataset import Dataset
from anonlib.core.loading import to_safe_csv
from anonlib.transformations.geo import (
    METHOD_SHORT,
    Regions,
    aggregated_polygons,
    crs_description,
    outlines_for,
)
from anonlib.workflow import AggregationStep, step_cost
from dashboard import charts
from dashboard.ui import (
    download_csv,
    download_json,
    guarded,
    offer_step,
    plain,
    row,
    show_table,
)

DOWNLOAD_ROW_LIMIT = 1_000_000


@st.cache_data(show_spinner=False, max_entries=16)
def _shapes(
    source: tuple, method: str, k: int, n_sites: int, seed: int, qis: tuple[str, ...], _result, _regions: Regions, _land
):
    return aggregated_polygons(_result, _regions, simplify_m=500.0, land=_land)


@st.cache_resource(show_spinner="Drawing the state and county borders...", max_entries=8)
def _outlines(area_source: tuple, _regions: Regions):
    return outlines_for(_regions)


def result_view(
    result,
    results: dict,
    history: dict,
    *,
    dataset: Dataset | None,
    regions: Regions,
    records: pd.DataFrame,
    source: tuple,
    area_source: tuple,
    method: str,
    k: int,
    n_sites: int,
    seed: int,
    qis: tuple[str, ...],
    region_column: str,
    compare: bool,
    colour_by: str,
    palette_name: str,
) -> None:
    """One run: its measures, the step it offers on the working copy (``dataset``; None for the
    example), ADC's trace, the map, every method of this run compared, and the downloads."""
    top = row()
    top.metric("suppressed records", f"{result.suppressed:,}", help=f"of {result.records:,} records")
    top.metric("suppressed (%)", f"{100 * result.suppressed_share:.2f}%")
    top.metric(
        "aggregated regions",
        f"{int((result.sites['regions'] > 0).sum()):,}",
        help=f"{result.n_sites:,} sites placed",
    )
    top.metric(
        "mean distance to site",
        f"{result.mean_distance_km:,.1f} km",
        help=f"Compactness (sum over areas): {result.compactness / 1000:,.0f} km",
    )
    top.metric(
        "discernibility",
        f"{result.discernibility:,}",
        help="Sum of squared class sizes, suppressed records counted as N each (Eq. 21).",
    )
    top.metric("non-uniform entropy", f"{result.nonuniform_entropy:,.0f} bits")
    if dataset is not None:
        offer_aggregation_step(result, region_column, dataset)
    if result.adc is not None:
        trace = result.adc
        st.caption(
            f"ADC: {trace.passes} passes, {trace.committed} of {trace.tried} moves kept, objective F "
            f"{trace.objectives[0]:,} -> {trace.objectives[-1]:,}"
            + ("" if trace.converged else " (stopped at the time or pass limit)")
            + "."
        )

    with guarded("drawing the map"):
        outlines = _outlines(area_source, regions)
        shapes = _shapes(
            source, method, k, n_sites, seed, qis, result, regions, outlines.land if outlines is not None else None
        )
        shown = [c for c in ("region_id", "x", "y", "lon", "lat") if c in regions.points.columns]
        points = regions.points[shown].assign(aggregated_region=result.mapping.to_numpy())
        st.plotly_chart(
            charts.geo_map_figure(
                shapes,
                points,
                result.sites,
                colour_by=colour_by,
                palette=palette_name,
                crs=crs_description(regions.crs),
                outlines=outlines,
            ),
            width="stretch",
        )
        if outlines is None:
            st.caption("These areas are not in the US: no state or county borders are bundled for them.")

    st.subheader("Methods compared" if compare else "This run (switch on the comparison to see all methods)")
    runs = pd.DataFrame([r.summary() for r in results.values()])
    show_table(runs)
    st.plotly_chart(
        charts.geo_metrics_figure(
            runs.assign(run=[METHOD_SHORT[m] for m in results]),
            label="run",
            title="The measures of the paper's Figures 3-5 (lower is better)",
        ),
        width="stretch",
    )
    with st.expander(f"All runs of this session ({len(history)})"):
        show_table(pd.DataFrame(list(history.values())))

    st.subheader("Downloads")
    mapping = pd.DataFrame(
        {
            "region_id": result.mapping.index,
            "aggregated_region": result.mapping.to_numpy(),
            "distance_km": result.distance / 1000.0,
        }
    )
    with row():
        download_csv("Area -> aggregated region (CSV)", mapping, "geo_mapping.csv")
        download_csv("Aggregated regions (CSV)", result.sites.reset_index(), "geo_regions.csv")
        if len(records) <= DOWNLOAD_ROW_LIMIT:
            st.download_button(
                "Anonymized records (CSV)",
                lambda: to_safe_csv(result.anonymized_records(records, region=region_column, quasi_identifiers=qis)),
                file_name="geo_anonymized_records.csv",
                mime="text/csv",
            )
        else:
            st.caption(f"The anonymized table has {len(records):,} rows; use the library to export it.")
        download_json(
            "Parameters and results (JSON)",
            {
                "areas": regions.name,
                "crs": regions.crs,
                "records": source[2] if len(source) > 2 else "",
                "quasi_identifiers": list(qis),
                "k": k,
                "n_sites": n_sites,
                "seed": seed,
                "methods": runs.to_dict(orient="records"),
                "unmatched_region_ids": list(result.unmatched),
            },
            "geo_run.json",
        )


NO_AREA_COLUMN = (
    "Geography needs a column of area ids, and this file has none: no column has most of its values among "
    "the ZIP/ZCTA codes or county FIPS codes of the bundled areas{uploaded}, so nothing is mapped. To add one, give each record the 5-digit "
    "ZIP code or the 5-digit county FIPS code of where the person lives (e.g. from the address, before the "
    "address is removed) in a column of its own, load the file again, and mark that column as a "
    "quasi-identifier; for areas of your own (communes, districts, provinces), upload their boundaries under "
    "Areas with the same ids as the column. The bundled example (synthetic people) shows the method meanwhile."
)


def offer_aggregation_step(result, column: str, dataset: Dataset) -> None:
    """The aggregation as a step of the working copy: what it costs, whether the result
    meets the release target (in records), and the button that applies it."""
    st.subheader("Apply to the working copy")
    if result.unplaced:  # a missing area id has no area to go to: the step leaves it missing
        placeable = result.unmatched_records - result.missing_records
        st.info(
            plain(
                f"{placeable:,} records have area ids that are in no area of these Areas, and "
                "the aggregation would not know where to put them: choose Areas that hold every id to apply it."
            )
        )
        return
    step = AggregationStep.from_result(column, result)
    if column not in dataset.quasi_identifiers:
        st.caption(
            plain(
                f"{column} is not marked as a quasi-identifier on the Dataset page, so the release target "
                "does not count it."
            )
        )
    st.caption(
        "The records this run suppresses are not removed by the step (a new delivery is aggregated the same "
        "way); the sidebar's suppress button removes those that still fail the target."
    )
    offer_step(step, step_cost(step, dataset), "Geographic aggregation", "aggregation", "geo_apply")
