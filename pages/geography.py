"""Geography page: merge small areas into larger ones (VBAS) so few records must be suppressed."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from anonlib.core.dataset import Dataset
from anonlib.geo import (
    FIXED_CUTOFFS,
    METHOD_NAMES,
    METHOD_SHORT,
    METHODS,
    REGION_SAMPLES,
    REGRESSION_FORMS,
    Regions,
    Regression,
    aggregate,
    aggregated_polygons,
    max_combinations,
    qi_entropy,
    read_regions,
    sample_regions,
    site_count,
)
from anonlib.core.loading import to_safe_csv
from anonlib.synthetic import PEOPLE_ATTRIBUTES, synthetic_people
from dashboard import charts
from dashboard.state import active_dataset
from dashboard.ui import download_csv, download_json, guarded, page_header, plain

SYNTHETIC = "Synthetic people (Adult's sex, age band and race marginals)"
ACTIVE = "The active dataset (a column holds the area ids)"
UPLOAD = "upload"
MODELS = {**{name: ("fixed", g) for name, g in FIXED_CUTOFFS.items()},
          "Entropy model (ours: G = k x 2^H)": ("entropy", None),
          "Max-combinations model (ours: G = k x MaxCombs)": ("max_combinations", None),
          "Your own regression": ("regression", None)}
DOWNLOAD_ROW_LIMIT = 1_000_000
ADC_TIME_LIMIT = 20.0  # seconds; ADC stops there and says so

HOW_TO_READ = """
**What happens.** Each small area (ZIP area, county: the *initial regions*) joins its nearest
*site*; the areas sharing a site form one *aggregated region* (the Voronoi diagram of the sites).
Records are then grouped by (aggregated region, quasi-identifier values); every group smaller
than k is suppressed. Fewer, larger regions mean less suppression but coarser geography.

**Number of sites S.** Directly, or from a population cut-off G: S = round(N / G), between 1 and
the number of areas. Fixed cut-offs are the ones the paper cites (US Census 100,000; Statistics
Canada CCHS 70,000; British Census 120,000) *(paper)*. The entropy model G = k x 2^H and the
max-combinations model G = k x MaxCombs are **our reconstruction**: the paper's regression
coefficients were lost. H is the Shannon entropy of the quasi-identifiers (Eq. 1).

**Site location.**
- *Balanced density* *(paper, Section 3.2.1)*: rows of about equal population, cells in each row
  in proportion to its population, one site at the median of each cell's points.
- *ADC, anonymity-driven clustering* *(paper's prose; the objective's exact form is ours)*:
  starts from balanced density and moves a site of a region at the lowest anonymity towards the
  weighted median of nearby members of its smallest group; a move is kept only if
  F = |A| g + (|A| - |A_g|) strictly increases (g = the lowest anonymity, A_g = regions at that level).
- *Population-weighted k-means*: a baseline (not in the paper's comparison).

**Measures** (the paper's Figures 3-5): suppression (records and %); compactness = sum over
areas of the distance from the area's point to its site (Eq. 20; unweighted, *our reading*;
the population-weighted mean distance is easier to read); discernibility = sum of |e|^2 over
released groups + N x |e| over suppressed ones (Eq. 21, standard form as in ARX); non-uniform
entropy of the area = -sum over records of log2 Pr(original area | aggregated area), suppressed
records counted as "*" (Eqs. 22-23, as in ARX); running time. Lower is better for all.

**Map.** Filled shapes: aggregated regions (the union of member polygons for counties, Voronoi
cells clipped to the areas' hull for ZIP points), coloured by their anonymity (size of their
smallest group) or their share of suppressed records. Dots: the areas, coloured by group.
Diamonds: sites. Distances are in metres in a projected CRS (the UTM zone for a state, NAD83 /
Conus Albers for the whole US); no map tiles are loaded.
"""


@st.cache_data(show_spinner="Drawing synthetic people from Adult's marginals...", max_entries=8)
def _people(key: str, attributes: tuple[str, ...], seed: int, _points: pd.DataFrame) -> pd.DataFrame:
    return synthetic_people(_points, attributes=attributes, seed=seed)


@st.cache_data(show_spinner="Reading the boundaries...", max_entries=4)
def _uploaded_regions(file_id: str, region_id: str, population: str | None, _raw: bytes, name: str) -> Regions:
    return read_regions(_raw, region_id=region_id, population=population, name=name)


@st.cache_data(show_spinner="Placing sites, aggregating and suppressing...", max_entries=64)
def _run(source: tuple, method: str, k: int, n_sites: int, seed: int,
         region: str, qis: tuple[str, ...], count: str | None, _points: pd.DataFrame, _records: pd.DataFrame):
    bar = st.progress(0.0, text=f"{METHOD_NAMES[method]}: starting") if method == "adc" else None
    progress = (lambda done, total, what: bar.progress(min(done / max(total, 1), 1.0), text=f"ADC: {what}")) if bar else None
    result = aggregate(_points, _records, region=region, quasi_identifiers=list(qis), k=k, n_sites=n_sites,
                       method=method, count=count, seed=seed, unmatched="report", progress=progress,
                       time_limit=ADC_TIME_LIMIT)
    if bar is not None:
        bar.empty()
    return result


@st.cache_data(show_spinner=False, max_entries=16)
def _shapes(source: tuple, method: str, k: int, n_sites: int, seed: int, qis: tuple[str, ...],
            _result, _regions: Regions):
    return aggregated_polygons(_result, _regions, simplify_m=500.0)


page_header(
    "Geographic aggregation",
    "Which coarser regions should replace ZIP areas or counties so that a release needs the fewest "
    "suppressed records for k-anonymity, and how much geographic detail does that cost?",
    HOW_TO_READ,
    "Croft, Shi, Sack & Corriveau, Location-based anonymization: comparison and evaluation of the "
    "Voronoi-based aggregation system (VBAS), arXiv:1505.06939",
)

dataset: Dataset = active_dataset()
left, middle, right = st.columns(3)
with left:
    area_options = list(REGION_SAMPLES) + [UPLOAD]
    area_key = st.selectbox(
        "Areas", area_options, key="geo_areas",
        format_func=lambda key: REGION_SAMPLES.get(key, "Upload boundaries (GeoJSON, GeoPackage, zipped Shapefile)"),
    )
    source_kind = st.radio("Records", [SYNTHETIC, ACTIVE], key="geo_records")
with middle:
    k = st.slider("k (smallest allowed group)", 2, 100, 5, key="geo_k")
    site_mode = st.radio("Number of sites", ["from a population cut-off", "chosen directly"], horizontal=True,
                         key="geo_site_mode")
with right:
    method = st.selectbox("Site location (shown on the map)", list(METHODS), format_func=METHOD_NAMES.get,
                          key="geo_method")
    colour_by = st.selectbox("Colour regions by", list(charts.GEO_COLOUR_BY), format_func=charts.GEO_COLOUR_BY.get,
                             key="geo_colour")
    palette_name = st.selectbox("Colours", list(charts.PALETTES), key="geo_palette")

regions: Regions | None = None
records = None
source: tuple = ()
with guarded("reading the areas"):
    if area_key == UPLOAD:
        upload = st.file_uploader("Area boundaries", type=["geojson", "json", "gpkg", "zip", "gz"], key="geo_upload")
        u1, u2 = st.columns(2)
        id_column = u1.text_input("Column with the area id", value="GEOID", key="geo_upload_id")
        population_column = u2.text_input("Column with the population (optional)", value="", key="geo_upload_pop")
        if upload is None:
            st.info("Upload a GeoJSON, GeoPackage or zipped Shapefile of your areas to continue.")
        else:
            regions = _uploaded_regions(upload.file_id, id_column, population_column.strip() or None,
                                        upload.getvalue(), upload.name)
            source = ("upload", upload.file_id, id_column, population_column)
    else:
        regions = sample_regions(area_key)
        source = ("sample", area_key)

if regions is not None:
    with guarded("preparing the records"):
        if source_kind == SYNTHETIC:
            if "population" not in regions.points.columns:
                regions = Regions(regions.name, regions.points.assign(population=1000), regions.crs, regions.polygons)
                st.caption("The uploaded areas have no population column; each gets 1,000 synthetic people.")
            attributes = st.multiselect("Quasi-identifiers of the synthetic people", list(PEOPLE_ATTRIBUTES),
                                        default=list(PEOPLE_ATTRIBUTES), key="geo_attributes")
            seed = int(st.number_input("Random seed", 0, 10**6, 0, key="geo_seed"))
            if not attributes:
                st.warning("Choose at least one quasi-identifier.")
            else:
                records = _people(str(source), tuple(attributes), seed, regions.points)
                region_column, qis, count = "region_id", tuple(attributes), "count"
                source = source + ("synthetic", tuple(attributes), seed)
                st.caption(
                    f"{int(records['count'].sum()):,} synthetic people in {regions.n_regions:,} areas, as "
                    f"{len(records):,} counts (area x {' x '.join(attributes)}), drawn from Adult's marginals."
                )
        else:
            seed = 0
            candidates = [c for c in dataset.frame.columns if c != dataset.count]
            guess = next((i for i, c in enumerate(candidates)
                          if any(w in str(c).lower() for w in ("zip", "zcta", "geoid", "county", "fips", "area", "region"))), 0)
            region_column = st.selectbox("Column with the area id", candidates, index=guess, key="geo_region_column")
            qis = tuple(q for q in dataset.quasi_identifiers if q != region_column)
            count = dataset.count
            frame, dropped = dataset.analysis_frame([region_column, *qis])
            records = frame
            source = source + ("dataset", dataset.fingerprint, region_column, qis, dataset.missing)
            st.caption(
                f"{plain(dataset.name)}: area column {plain(region_column)}; quasi-identifiers "
                f"{plain(', '.join(qis) or 'none')}" + (f"; {dropped:,} rows with missing values dropped." if dropped else ".")
            )

if regions is not None and records is not None:
    n_sites = None
    with guarded("choosing the number of sites"):
        # The cut-off is a population size: use the areas' population when known, else the records.
        if "population" in regions.points.columns:
            total, counted = int(regions.points["population"].sum()), "people"
        else:
            total, counted = (int(records[count].sum()) if count else len(records)), "records"
        if site_mode == "chosen directly":
            top = min(regions.n_regions, 5000)
            default = site_count(total, regions.n_regions, cutoff=100_000).n_sites
            n_sites = st.slider("Number of sites S", 1, top, min(default, top), key="geo_sites")
            st.caption(f"{n_sites:,} sites for {regions.n_regions:,} areas and {total:,} {counted}.")
        else:
            model_name = st.selectbox("Cut-off model", list(MODELS), key="geo_model")
            model, cutoff = MODELS[model_name]
            h = qi_entropy(records, list(qis), count=count) if qis else 0.0
            combos = max_combinations(records, list(qis)) if qis else 1
            regression = None
            if model == "regression":
                r1, r2, r3, r4 = st.columns(4)
                form = r1.selectbox("Form", list(REGRESSION_FORMS), key="geo_reg_form")
                variable = r2.selectbox("Variable", ["entropy", "max_combinations"], key="geo_reg_var")
                a = r3.number_input("a (intercept)", value=10.0, key="geo_reg_a")
                b = r4.number_input("b (slope)", value=0.5, key="geo_reg_b")
                regression = Regression(form, variable, float(a), float(b))
            count_choice = site_count(total, regions.n_regions, model=model, cutoff=cutoff, k=k,
                                      entropy_bits=h, max_combs=combos, regression=regression)
            n_sites = count_choice.n_sites
            st.caption(plain(count_choice.explanation) + f" (H = {h:.3f} bits, MaxCombs = {combos:,})")

    if n_sites is None:
        st.stop()
    compare = st.toggle("Compare the three methods (runs ADC too)", value=regions.n_regions <= 2000,
                        key="geo_compare")
    results = {}
    with guarded("aggregating the areas"):
        for m in (METHODS if compare else (method,)):
            results[m] = _run(source, m, k, n_sites, seed, region_column, qis, count, regions.points, records)

    if results.get(method) is not None:
        result = results[method]
        history = st.session_state.setdefault("geo_history", {})
        for m, r in results.items():
            run_key = (source, m, k, n_sites, seed)
            history[run_key] = {"areas": regions.name, "records source": source[2] if len(source) > 2 else "",
                                **r.summary()}
        if result.unmatched:
            st.warning(
                f"{result.unmatched_records:,} records have area ids that match no area and are left out: "
                f"{plain(', '.join(result.unmatched[:12]))}" + (" ..." if len(result.unmatched) > 12 else "") + "."
            )
        top = st.columns(3)
        top[0].metric("suppressed records", f"{result.suppressed:,}", help=f"of {result.records:,} records")
        top[1].metric("suppressed (%)", f"{100 * result.suppressed_share:.4f}%")
        top[2].metric("aggregated regions", f"{int((result.sites['regions'] > 0).sum()):,}",
                      help=f"{result.n_sites:,} sites placed")
        bottom = st.columns(3)
        bottom[0].metric("mean distance to site", f"{result.mean_distance_km:,.1f} km",
                         help=f"Compactness (sum over areas): {result.compactness / 1000:,.0f} km")
        bottom[1].metric("discernibility", f"{result.discernibility:.4g}", help=f"{result.discernibility:,}")
        bottom[2].metric("non-uniform entropy", f"{result.nonuniform_entropy:,.0f} bits")
        if result.adc is not None:
            trace = result.adc
            st.caption(
                f"ADC: {trace.passes} passes, {trace.committed} of {trace.tried} moves kept, objective F "
                f"{trace.objectives[0]:,} -> {trace.objectives[-1]:,}"
                + ("" if trace.converged else " (stopped at the time or pass limit)") + "."
            )

        with guarded("drawing the map"):
            shapes = _shapes(source, method, k, n_sites, seed, qis, result, regions)
            points = regions.points[["region_id", "x", "y"]].assign(aggregated_region=result.mapping.to_numpy())
            st.plotly_chart(
                charts.geo_map_figure(shapes, points, result.sites, colour_by=colour_by,
                                      palette=palette_name, crs=regions.crs),
                width="stretch",
            )

        st.subheader("Methods compared (the paper's Figures 3-5)" if compare else "This run (switch on the comparison to see all methods)")
        table = pd.DataFrame([r.summary() for r in results.values()])
        st.dataframe(table, hide_index=True, width="stretch")
        st.plotly_chart(charts.geo_metrics_figure(table.assign(run=[METHOD_SHORT[m] for m in results]), label="run"),
                        width="stretch")
        with st.expander(f"All runs of this session ({len(history)})"):
            st.dataframe(pd.DataFrame(list(history.values())), hide_index=True, width="stretch")

        st.subheader("Downloads")
        mapping = pd.DataFrame({
            "region_id": result.mapping.index,
            "aggregated_region": result.mapping.to_numpy(),
            "distance_km": result.distance / 1000.0,
        })
        d1, d2, d3, d4 = st.columns(4)
        with d1:
            download_csv("Area -> aggregated region (CSV)", mapping, "geo_mapping.csv")
        with d2:
            download_csv("Aggregated regions (CSV)", result.sites.reset_index(), "geo_regions.csv")
        with d3:
            if len(records) <= DOWNLOAD_ROW_LIMIT:
                st.download_button(
                    "Anonymized records (CSV)",
                    lambda: to_safe_csv(result.anonymized_records(records, region=region_column, quasi_identifiers=qis)),
                    file_name="geo_anonymized_records.csv", mime="text/csv",
                )
            else:
                st.caption(f"The anonymized table has {len(records):,} rows; use the library to export it.")
        with d4:
            download_json(
                "Parameters and results (JSON)",
                {"areas": regions.name, "crs": regions.crs, "records": source[2] if len(source) > 2 else "",
                 "quasi_identifiers": list(qis), "k": k, "n_sites": n_sites, "seed": seed,
                 "methods": table.to_dict(orient="records"),
                 "unmatched_region_ids": list(result.unmatched)},
                "geo_run.json",
            )
