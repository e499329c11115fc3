"""Geography page: merge small areas into larger ones (VBAS) so few records must be suppressed."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from anonlib.core.cells import records_in
from anonlib.core.dataset import Dataset
from anonlib.measures.target import ReleaseTarget
from anonlib.transformations.geo import (
    FIXED_CUTOFFS,
    METHOD_NAMES,
    METHOD_SHORT,
    METHODS,
    REGION_SAMPLES,
    REGRESSION_FORMS,
    AreaColumn,
    Regions,
    Regression,
    aggregate_regions,
    area_columns,
    counted_in_records,
    link_records,
    max_combinations,
    qi_entropy,
    read_regions,
    regions_matching,
    sample_regions,
    site_count,
)
from anonlib.transformations.synthetic import PEOPLE_ATTRIBUTES, synthetic_people
from dashboard import charts
from dashboard.geo_views import NO_AREA_COLUMN, result_view
from dashboard.memo import memo
from dashboard.progress import throttled
from dashboard.state import active_dataset, unit_target
from dashboard.ui import (
    guarded,
    page_header,
    paper_example,
    plain,
    show_table,
)

SYNTHETIC = "Bundled example: synthetic people (Adult's sex, age band and race marginals)"
ACTIVE = "Your working copy (a column holds the area ids)"
UPLOAD = "upload"
MODELS = {
    **{name: ("fixed", g) for name, g in FIXED_CUTOFFS.items()},
    "Entropy model (ours: G = k x 2^H)": ("entropy", None),
    "Max-combinations model (ours: G = k x MaxCombs)": ("max_combinations", None),
    "Your own regression": ("regression", None),
}
ADC_TIME_LIMIT = 20.0  # seconds; ADC stops there and says so

HOW_TO_READ = """
**Your file.** The page opens on the working copy: a column of area ids (ZIP/ZCTA codes or county
FIPS codes, or the ids of uploaded areas) is looked for, and only a column most of whose values are
ids of the areas is offered, with the Areas that hold them; k is the release target's.
"Apply this aggregation" adds an aggregation step to the working copy (the area ids replaced by
their aggregated region), after saying what it costs and whether the result meets the release
target. Without area ids the page says so; the bundled example (synthetic people) is a choice
under Records.

**What happens.** Each small area (ZIP area, county: the *initial regions*) joins its nearest
*site*; the areas sharing a site form one *aggregated region* (the Voronoi diagram of the sites).
Records are then grouped by (aggregated region, quasi-identifier values); every group smaller
than k is suppressed. Fewer, larger regions mean less suppression but coarser geography.

**Number of sites S.** Directly, or from a population cut-off G: S = round(N / G), between 1 and
the number of areas, where N is the number of records linked to an area (synthetic people: the
areas' population; your own file: its records whose area id matches, not the census population
of every area offered, which would give thousands of regions for a few thousand records). Fixed cut-offs are the ones the paper cites (US Census 100,000; Statistics
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

**Map.** Filled shapes: aggregated regions (the union of member polygons for counties; for ZIP
points, Voronoi cells clipped to the areas' hull and to land), coloured by their anonymity (size
of their smallest group) or their share of suppressed records, as the colour bar shows. Dots: the
areas (hover for the id, its aggregated region and where it is). Diamonds: sites, coloured like
their region. Grey lines: county and state borders, drawn from the bundled county polygons (for
areas in the US). The axes are km east and north of the data's south-west corner, in a projection
that keeps distances (the UTM zone for a state, NAD83 / Conus Albers for the whole US, named under
the map); no map tiles are loaded.

**Warnings.** A run that suppresses more than 5% of the records says so and what would keep more;
area ids that match no area are listed with the Areas choice that holds them.
"""


@st.cache_data(show_spinner="Drawing synthetic people from Adult's marginals...", max_entries=8)
def _people(key: str, attributes: tuple[str, ...], seed: int, _points: pd.DataFrame) -> pd.DataFrame:
    return synthetic_people(_points, attributes=attributes, seed=seed)


@st.cache_data(show_spinner="Reading the boundaries...", max_entries=4)
def _uploaded_regions(file_id: str, region_id: str, population: str | None, _raw: bytes, name: str) -> Regions:
    return read_regions(_raw, region_id=region_id, population=population, name=name)


def _run(
    source: tuple,
    method: str,
    k: int,
    n_sites: int,
    seed: int,
    region: str,
    qis: tuple[str, ...],
    count: str | None,
    _points: pd.DataFrame,
    _records: pd.DataFrame,
):
    """One aggregation, computed once per input (kept in a memo, not st.cache_data: a cached
    function never calls a Streamlit element, dashboard.memo says why), with a progress bar (ADC)
    or a spinner while it runs."""
    key = (source, method, k, n_sites, seed, region, qis, count)
    found = memo("geography.run", 64).get(key)
    if found is not None:
        return found
    bar = st.progress(0.0, text=f"{METHOD_NAMES[method]}: starting") if method == "adc" else None
    progress = (
        throttled(lambda done, total, what: bar.progress(min(done / max(total, 1), 1.0), text=f"ADC: {what}"))
        if bar
        else None
    )
    with st.spinner("Placing sites, aggregating and suppressing..."):
        result = aggregate_regions(
            _points,
            _records,
            region=region,
            quasi_identifiers=list(qis),
            target=ReleaseTarget(k),
            n_sites=n_sites,
            method=method,
            count=count,
            seed=seed,
            unmatched="report",
            progress=progress,
            time_limit=ADC_TIME_LIMIT,
        )
    if bar is not None:
        bar.empty()
    return memo("geography.run", 64).put(key, result)


def _other_areas(ids, current: str) -> str:
    """The Areas choice that holds most of ``ids``, as a sentence ending (or '')."""
    found = regions_matching(ids, exclude=[current]) if ids else []
    if not found:
        return ""
    key, hits = found[0]
    return f" {hits:,} of these ids are areas of '{REGION_SAMPLES[key]}': choose it under Areas."


def _use_example() -> None:
    st.session_state["geo_records"] = SYNTHETIC


@st.cache_data(show_spinner="Looking for a column of area ids...", max_entries=8)
def _area_columns(
    fingerprint: str, columns: tuple[str, ...], areas_key: str | None, _frame: pd.DataFrame, _ids=None
) -> dict[str, AreaColumn]:
    """Columns of the working copy most of whose values are ids of the bundled areas (or,
    with ``_ids``, of the uploaded areas ``areas_key``): ``anonlib``'s verdict, rendered here."""
    return area_columns(_frame, list(columns), areas=_bundled_ids() if _ids is None else {areas_key: _ids})


@st.cache_data(show_spinner=False, max_entries=1)
def _bundled_ids() -> dict[str, pd.Series]:
    """The ids of every bundled set of areas, read once per server: reading them took most of the
    page's opening (about a second) for every new working copy."""
    return {key: sample_regions(key).points["region_id"] for key in REGION_SAMPLES}


page_header(
    "Geographic aggregation",
    "Which coarser regions should replace ZIP areas or counties so that a release needs the fewest "
    "suppressed records for k-anonymity, and how much geographic detail does that cost?",
    HOW_TO_READ,
    "Croft, Shi, Sack & Corriveau, Location-based anonymization: comparison and evaluation of the "
    "Voronoi-based aggregation system (VBAS), arXiv:1505.06939",
)

dataset: Dataset = active_dataset()
target = unit_target()
candidates = tuple(c for c in dataset.frame.columns if c != dataset.count and c not in dataset.identifiers)
found = _area_columns(dataset.fingerprint, candidates, None, dataset.frame)
if "geo_records" not in st.session_state:
    st.session_state["geo_records"] = ACTIVE
# what to aggregate, the areas on their own row (their names are long), then how the map shows it:
# every option stays readable in a 1024 px window
left, right = st.columns([1.3, 1])
with left:
    source_kind = st.radio(
        "Records",
        [ACTIVE, SYNTHETIC],
        key="geo_records",
        help="Your working copy needs a column of area ids (ZIP/ZCTA codes or county FIPS codes). "
        "The bundled example draws synthetic people for the chosen areas.",
    )
    region_column = None
    if source_kind == ACTIVE and found:  # only columns most of whose values are area ids are offered
        region_column = st.selectbox(
            "Column with the area ids",
            list(found),
            key="geo_region_column",
            format_func=lambda c: f"{c} ({100 * found[c].share:.0f}% area ids)",
        )
        # the Areas follow the column the first time it is chosen (the user can change them)
        if region_column in found and st.session_state.get("geo_areas_for") != (dataset.fingerprint, region_column):
            st.session_state["geo_areas"] = found[region_column].areas
            st.session_state["geo_areas_for"] = (dataset.fingerprint, region_column)
with right:
    if source_kind == ACTIVE:
        k = target.k
        st.markdown(f"**k = {k}**")
        st.caption("The release target's k, set in the sidebar.")
    else:
        k = st.slider("k (smallest allowed class)", 2, 100, 5, key="geo_k")
    site_mode = st.radio(
        "Number of sites", ["from a population cut-off", "chosen directly"], horizontal=True, key="geo_site_mode"
    )
    palette_name = st.selectbox("Colours", list(charts.PALETTES), key="geo_palette")
in_records = counted_in_records(target) if source_kind == ACTIVE else None
if in_records:
    st.info(plain(in_records))
area_options = list(REGION_SAMPLES) + [UPLOAD]
area_key = st.selectbox(
    "Areas",
    area_options,
    key="geo_areas",
    format_func=lambda key: REGION_SAMPLES.get(key, "Upload boundaries (GeoJSON, GeoPackage, zipped Shapefile)"),
)
shown_left, shown_right = st.columns([1.15, 1])
method = shown_left.selectbox(
    "Site location (shown on the map)", list(METHODS), format_func=METHOD_NAMES.get, key="geo_method"
)
colour_by = shown_right.selectbox(
    "Colour regions by", list(charts.GEO_COLOUR_BY), format_func=charts.GEO_COLOUR_BY.get, key="geo_colour"
)

if source_kind == ACTIVE and not found and area_key != UPLOAD:
    st.info(plain(NO_AREA_COLUMN.format(uploaded="")))
    st.button("Use the bundled example (synthetic people)", on_click=_use_example, key="geo_use_example")

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
            regions = _uploaded_regions(
                upload.file_id, id_column, population_column.strip() or None, upload.getvalue(), upload.name
            )
            source = ("upload", upload.file_id, id_column, population_column)
    else:
        regions = sample_regions(area_key)
        source = ("sample", area_key)
    if source_kind == ACTIVE and area_key == UPLOAD and regions is not None:  # the columns of the uploaded areas' ids
        uploaded_ids = tuple(regions.points["region_id"])
        found = _area_columns(dataset.fingerprint, candidates, str(source), dataset.frame, uploaded_ids)
        if found:
            region_column = st.selectbox(
                "Column with the area ids",
                list(found),
                key="geo_region_column_upload",
                format_func=lambda c: f"{c} ({100 * found[c].share:.0f}% ids of the uploaded areas)",
            )
        else:
            region_column = None
            st.info(plain(NO_AREA_COLUMN.format(uploaded=" or of the uploaded areas")))

area_source = source  # what the areas (and so their borders) depend on
if regions is not None:
    with guarded("preparing the records"):
        if source_kind == SYNTHETIC:
            if "population" not in regions.points.columns:
                regions = Regions(regions.name, regions.points.assign(population=1000), regions.crs, regions.polygons)
                st.caption("The uploaded areas have no population column; each gets 1,000 synthetic people.")
            attributes = st.multiselect(
                "Quasi-identifiers of the synthetic people",
                list(PEOPLE_ATTRIBUTES),
                default=list(PEOPLE_ATTRIBUTES),
                key="geo_attributes",
            )
            seed = int(st.number_input("Random seed", 0, 10**6, 0, key="geo_seed"))
            if not attributes:
                st.warning("Choose at least one quasi-identifier of the synthetic people.")
            else:
                records = _people(str(source), tuple(attributes), seed, regions.points)
                region_column, qis, count = "region_id", tuple(attributes), "count"
                source = source + ("synthetic", tuple(attributes), seed)
                st.caption(
                    f"Bundled example, not your file: {int(records['count'].sum()):,} synthetic records in "
                    f"{regions.n_regions:,} areas, as {len(records):,} counts (area x {' x '.join(attributes)}), "
                    "drawn from Adult's marginals."
                )
        elif region_column is not None and region_column in found:
            seed = 0
            qis = tuple(q for q in dataset.quasi_identifiers if q != region_column)
            count = dataset.count
            frame, dropped = dataset.analysis_frame([region_column, *qis])
            records = frame
            source = source + ("dataset", dataset.fingerprint, region_column, qis, dataset.missing)
            st.caption(
                f"Your working copy ({plain(dataset.name)}, {dataset.n_records:,} records): area column "
                f"{plain(region_column)}; quasi-identifiers {plain(', '.join(qis) or 'none')}"
                + (f"; {dropped:,} rows with missing values left out." if dropped else ".")
            )

if regions is not None and records is not None and source_kind == ACTIVE:
    own_records, records = records, None  # kept only once they link to the areas
    with guarded("linking the records to the areas"):
        linkage = link_records(regions.points["region_id"], own_records, region=region_column, count=count)
        if linkage.linked == 0:
            st.error(
                f"None of the {linkage.records:,} records' area ids in {plain(region_column)} (for example "
                f"{plain(', '.join(linkage.unmatched[:3]))}) is an area of {plain(regions.name)}."
                + plain(
                    _other_areas(linkage.unmatched, area_key)
                    or " Choose the column that holds the area ids, or upload the boundaries of your areas under Areas."
                )
            )
        else:
            records = own_records

if regions is not None and records is not None:
    n_sites = None
    with guarded("choosing the number of sites"):
        # N in S = N / G is the records that will be aggregated: the synthetic people, or the
        # records of the user's file whose area id matches an area (not the census population
        # of every area offered: all US ZIP areas would give 3,125 regions for 2,000 records).
        total = records_in(records, count)
        if source_kind == ACTIVE:
            total = linkage.linked
        counted = "synthetic people" if source_kind == SYNTHETIC else "records linked to an area"
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
            count_choice = site_count(
                total,
                regions.n_regions,
                model=model,
                cutoff=cutoff,
                k=k,
                entropy_bits=h,
                max_combs=combos,
                regression=regression,
            )
            n_sites = count_choice.n_sites
            st.caption(
                f"N = {total:,} {counted}; "
                + plain(count_choice.explanation)
                + f" (H = {h:.3f} bits, MaxCombs = {combos:,})"
            )

    compare = st.toggle("Compare the three methods (runs ADC too)", value=regions.n_regions <= 2000, key="geo_compare")
    results = {}
    with guarded("aggregating the areas"):
        for m in (METHODS if compare else (method,)) if n_sites is not None else ():
            results[m] = _run(source, m, k, n_sites, seed, region_column, qis, count, regions.points, records)

    if results.get(method) is not None:
        result = results[method]
        history = st.session_state.setdefault("geo_history", {})
        for m, r in results.items():
            run_key = (source, m, k, n_sites, seed)
            history[run_key] = {
                "areas": regions.name,
                "records source": source[2] if len(source) > 2 else "",
                **r.summary(),
            }
        if result.unmatched and not result.unplaced:  # blanks only: no area to place them in, left missing
            st.info(
                f"{result.missing_records:,} records ({100 * result.missing_records / (result.records + result.unmatched_records):.1f}%) "
                "have no area id (a missing value) and are left out of the aggregation; applied as a step, it "
                "leaves them missing."
            )
        elif result.unmatched:
            st.warning(
                f"{result.unmatched_records:,} records ({100 * result.unmatched_records / (result.records + result.unmatched_records):.1f}%) "
                f"have area ids that are not areas of {plain(regions.name)} and are left out: "
                f"{plain(', '.join(result.unmatched[:12]))}"
                + (" ..." if len(result.unmatched) > 12 else "")
                + "."
                + plain(_other_areas(result.unplaced, area_key))
            )
        too_many = result.suppression_warning()
        if too_many:
            st.warning(plain(too_many))
        result_view(
            result,
            results,
            history,
            dataset=dataset if source_kind == ACTIVE else None,
            regions=regions,
            records=records,
            source=source,
            area_source=area_source,
            method=method,
            k=k,
            n_sites=n_sites,
            seed=seed,
            qis=qis,
            region_column=region_column,
            compare=compare,
            colour_by=colour_by,
            palette_name=palette_name,
        )


def _paper_comparison() -> None:
    """The paper's comparison (Figures 3-5) on its setting: Tennessee's ZIP areas, synthetic
    people, the US Census cut-off G = 100,000 and k = 5."""
    regions = sample_regions("tennessee_zcta")
    attributes = tuple(PEOPLE_ATTRIBUTES)
    source = ("sample", "tennessee_zcta", "synthetic", attributes, 0)
    people = _people(str(source[:2]), attributes, 0, regions.points)
    total = int(people["count"].sum())
    n_sites = site_count(total, regions.n_regions, cutoff=FIXED_CUTOFFS["US Census (100,000)"]).n_sites
    st.markdown(
        plain(
            f"{regions.name}: {total:,} synthetic records ({', '.join(attributes)}), k = 5, "
            f"{n_sites:,} sites from the US Census cut-off."
        )
    )
    runs = {
        m: _run(source, m, 5, n_sites, 0, "region_id", attributes, "count", regions.points, people) for m in METHODS
    }
    table = pd.DataFrame([r.summary() for r in runs.values()])
    show_table(table)
    st.plotly_chart(
        charts.geo_metrics_figure(table.assign(run=[METHOD_SHORT[m] for m in runs]), label="run"),
        width="stretch",
        key="geo_paper_chart",
    )


paper_example(
    "the three site-location methods on Tennessee's ZIP areas (Figures 3-5)",
    "Croft et al. (VBAS)",
    _paper_comparison,
    "geo_paper",
)
