"""Leakage & anonymization page: which attributes give people away, and the least
generalization that gives every shield group at least k records."""

from __future__ import annotations

import hashlib

import pandas as pd
import streamlit as st

from anonlib.anonymize import (
    ARCA_AC_GROUPS,
    ARCA_AGE_BANDS,
    EXPERIMENT_SHIELDS,
    HEART_SAMPLES,
    METHOD_NAMES,
    METHODS,
    SearchResult,
    comparison_table,
    heart_experiment,
    search,
)
from anonlib.core.dataset import Dataset
from anonlib.core.errors import HierarchyError
from anonlib.core.hierarchy import (
    bands_text,
    default_bands,
    default_hierarchy,
    flat_hierarchy,
    hierarchy_csv,
    interval_hierarchy,
    masking_hierarchy,
    parse_bands,
    parse_taxonomy,
    read_hierarchy_csv,
    taxonomy_hierarchy,
    validate_hierarchy,
)
from anonlib.leakage import attribute_label, attribute_sets, compare_leakage, leakage_table
from anonlib.core.samples import DEFAULT_SAMPLE, load_sample
from dashboard import charts
from dashboard.state import active_dataset, active_source
from dashboard.ui import download_csv, download_json, guarded, page_header, plain, row, show_table

EXAMPLE = "arca_table1"
EXAMPLE_SHIELD = ["Zip", "Age", "AC"]
BUILDERS = ["intervals", "masking", "taxonomy", "flat", "ARX file"]
SIZES = {"single attributes": 1, "pairs": 2, "triples": 3}


# The cache keys carry the missing-value policy next to the fingerprint: the
# fingerprint names the table, the policy decides which of its rows are analysed.
@st.cache_data(show_spinner=False, max_entries=64)
def _leakage(fingerprint: str, missing: str, columns: tuple, attributes: tuple, count: str | None, _frame: pd.DataFrame) -> pd.DataFrame:
    return leakage_table(_frame, list(attributes), count=count)


@st.cache_data(show_spinner=False, max_entries=64)
def _search(
    fingerprint: str, missing: str, columns: tuple, shield: tuple, k: int, method: str, files: tuple, count: str | None,
    _frame: pd.DataFrame, _hierarchies: dict,
) -> SearchResult:
    return search(_frame, list(shield), k, _hierarchies, method, count=count)


@st.cache_data(show_spinner=False, max_entries=16)
def _experiment(samples: tuple, shields: tuple, ks: tuple) -> pd.DataFrame:
    return heart_experiment(samples, shields, ks)


def _digest(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()[:12]


def _initial_builder(attribute: str, values: pd.Series, example: bool) -> str:
    if example and attribute in ("Zip", "Age", "AC"):
        return {"Zip": "masking", "Age": "intervals", "AC": "taxonomy"}[attribute]
    return default_hierarchy(values, attribute)[0]


def _hierarchy_editor(attribute: str, values: pd.Series, example: bool, scope: str) -> pd.DataFrame | None:
    """Builder, parameters, upload, editable table and download for one shield attribute."""
    key = f"{scope}-{attribute}"
    builder = st.selectbox(
        "Build from", BUILDERS, index=BUILDERS.index(_initial_builder(attribute, values, example)), key=f"hb-{key}",
        help="intervals: nested numeric bands; masking: hide digits from the right; taxonomy: named groups; "
        "flat: every value becomes *; ARX file: a hierarchy CSV exported from ARX (; or , separated, no header).",
    )
    if builder == "intervals":
        try:
            suggested = ARCA_AGE_BANDS if example and attribute == "Age" else bands_text(default_bands(values))
        except HierarchyError:
            suggested = ""
        text = st.text_input(
            "Bands per level: low-high separated by commas; levels separated by |", suggested, key=f"hi-{key}"
        )
        top = st.checkbox("Add a last level *", value=not (example and attribute == "Age"), key=f"ht-{key}")
        base = interval_hierarchy(values, parse_bands(text), top=top)
    elif builder == "masking":
        base = masking_hierarchy(values)
    elif builder == "taxonomy":
        if example and attribute == "AC":
            suggested = "\n".join(f"{parent}: {', '.join(kids)}" for parent, kids in ARCA_AC_GROUPS.items())
        else:
            suggested = "*: " + ", ".join(flat_hierarchy(values)[0].tolist())
        text = st.text_area("Groups, one per line: group: member, member (the top group last)", suggested, key=f"hx-{key}")
        base = taxonomy_hierarchy(parse_taxonomy(text))
    elif builder == "flat":
        base = flat_hierarchy(values)
    else:
        upload = st.file_uploader("ARX hierarchy file (CSV, ; or ,)", type=["csv", "txt"], key=f"hu-{key}")
        if upload is None:
            st.info(f"Upload the hierarchy of {plain(attribute)}, or pick another builder.")
            return None
        base = read_hierarchy_csv(upload.getvalue())
    shown = base.copy()
    shown.columns = ["original"] + [f"level {j}" for j in range(1, base.shape[1])]
    edited = st.data_editor(
        shown, key=f"he-{key}-{_digest(hierarchy_csv(base))}", num_rows="dynamic", hide_index=True, width="stretch"
    )
    table = pd.DataFrame(edited.to_numpy(dtype=object))
    table = validate_hierarchy(table, values, attribute)
    st.download_button(
        f"Hierarchy of {attribute} (ARX CSV)", hierarchy_csv(table), file_name=f"hierarchy_{attribute}.csv",
        mime="text/csv", key=f"hd-{key}",
    )
    return table


page_header(
    "Leakage & anonymization",
    "Which attributes leak the most about who a person is, and what is the least generalization "
    "of the table that puts every person in a group of at least k records?",
    "- **Leakage** (Longpre et al.'s average information loss): an attacker who learns a person's value "
    "of the query attribute narrows down who it is. dS is the average number of bits gained (the Shannon "
    "entropy of the groups the attribute forms); normalized = dS / log2(records), 0 = nothing learnt, "
    "1 = everyone identified.\n"
    "- **Hierarchy**: how each shield attribute is generalized, one level at a time (column 0 the original "
    "value, column j its level-j value; the layout ARX uses, so ARX files can be uploaded).\n"
    "- **Search**: a table is generalized by raising one whole column one level. T(v, r) is a table with v "
    "violating rows (distinct rows whose shield group has fewer than k records) and r distinct rows. IAB "
    "(best-first with pruning) and exhaustive search return the satisfying table with the most rows (least "
    "generalized on ties); greedy follows the fewest violations and may lose rows.\n"
    "- **Before/after**: leakage of each attribute on the original and on the anonymized table (Table 8).",
    "Arca & Hewett 2021, Analytics on anonymity for privacy retention in smart health data (Future Internet 13:274); "
    "Longpre et al., information leakage",
)

current = active_dataset()
sources = ["Paper example: Arca & Hewett Table 1", f"Active dataset: {current.name}"]
default_source = 0 if active_source() in (f"sample:{DEFAULT_SAMPLE}", f"sample:{EXAMPLE}") else 1
choice = st.radio("Data", sources, index=default_source, horizontal=True, key="leakage_source")
example = choice == sources[0]
dataset: Dataset = load_sample(EXAMPLE) if example else current
scope = "example" if example else dataset.fingerprint[:12]
palette = st.radio("Colours", list(charts.PALETTES), horizontal=True, key="leakage_palette")

columns = list(dataset.quasi_identifiers + dataset.sensitive)
if example:
    columns = [c for c in dataset.frame.columns if c != dataset.count]
frame, dropped = dataset.analysis_frame(columns) if columns else (dataset.frame, 0)
count = dataset.count
st.caption(
    f"{plain(dataset.name)}: {len(frame):,} rows"
    + (f", {int(frame[count].sum()):,} records (count column {plain(count)})" if count else "")
    + (f"; {dropped:,} rows with missing values dropped" if dropped else "")
    + ". Columns used: quasi-identifiers and sensitive attributes."
)

# --- 1. leakage table ---------------------------------------------------------------
st.subheader("Information leakage per attribute")
with guarded("computing the leakage table"):
    if not columns:
        st.error("Mark at least one quasi-identifier or sensitive column on the Dataset page.")
        st.stop()
    left, right = st.columns([2, 1])
    query = left.multiselect("Query attributes", columns, default=columns, key=f"lq-{scope}")
    wanted = right.multiselect("Combinations", list(SIZES), default=["single attributes"], key="leakage_sizes")
    whole = st.checkbox("Also the whole quasi-identifier as one query", key="leakage_whole")
    attributes = attribute_sets(query, sorted(SIZES[name] for name in wanted))
    qi = tuple(c for c in dataset.quasi_identifiers if c in frame.columns) or tuple(query)
    if whole and qi and qi not in attributes:
        attributes.append(qi if len(qi) > 1 else qi[0])
    if not attributes:
        st.info("Choose query attributes and at least one kind of combination.")
    else:
        table = _leakage(dataset.fingerprint, dataset.missing, tuple(frame.columns), tuple(attributes), count, frame)
        shown = table.assign(attribute=[attribute_label(a) for a in table["attribute"]]).sort_values(
            "normalized", ascending=False, kind="stable"
        )
        top = shown.iloc[0]
        st.markdown(
            f"Most revealing: **{plain(top['attribute'])}** (normalized {top['normalized']:.4f}, "
            f"{top['loss']:.4f} bits, {int(top['partitions']):,} partitions)."
        )
        show_table(
            shown,
            column_config={
                "loss": st.column_config.NumberColumn("dS (bits)", format="%.5f"),
                "normalized": st.column_config.ProgressColumn("normalized dS", format="%.5f", min_value=0.0, max_value=1.0),
            },
        )
        st.plotly_chart(charts.leakage_figure(table), width="stretch")
        download_csv("Leakage table (CSV)", shown, "leakage_table.csv", key="dl-leakage")

# --- 2. anonymization ---------------------------------------------------------------
st.subheader("Anonymization by generalization")
results: dict[str, SearchResult] = {}
with guarded("setting up the anonymization"):
    candidates = [c for c in frame.columns if c != count]
    default_shield = EXAMPLE_SHIELD if example else [c for c in dataset.quasi_identifiers if c in candidates][:4]
    c1, c2 = st.columns([3, 1])
    shield = c1.multiselect("Shield (attributes an attacker may know)", candidates, default=default_shield, key=f"shield-{scope}")
    k = int(c2.number_input("k (smallest allowed group)", min_value=1, max_value=1000, value=3 if example else 5, step=1, key=f"k-{scope}"))
    hierarchies: dict[str, pd.DataFrame] = {}
    if not shield:
        st.info("Choose at least one shield attribute.")
    else:
        st.markdown("**Hierarchies** (edit cells, add rows, or upload ARX files)")
        for attribute, tab in zip(shield, st.tabs([plain(a) for a in shield])):
            with tab, guarded(f"building the hierarchy of {attribute}"):
                values = frame[attribute]
                built = _hierarchy_editor(attribute, values, example, scope)
                if built is not None:
                    hierarchies[attribute] = built
        missing = [a for a in shield if a not in hierarchies]
        if missing:
            st.warning("The search runs once every shield attribute has a valid hierarchy: " + plain(", ".join(missing)) + ".")
        else:
            files = tuple(_digest(hierarchy_csv(hierarchies[a])) for a in shield)
            progress = st.progress(0.0, text="Searching...") if len(frame) > 5000 else None
            for done, method in enumerate(METHODS):
                if progress is not None:
                    progress.progress(done / len(METHODS), text=f"Running {METHOD_NAMES[method]}...")
                with guarded(f"running the {METHOD_NAMES[method]} search"):
                    results[method] = _search(
                        dataset.fingerprint, dataset.missing, tuple(frame.columns), tuple(shield), k, method, files, count, frame, hierarchies
                    )
            if progress is not None:
                progress.empty()

if results:
    with guarded("showing the search results"):
        first = next(iter(results.values()))
        root = first.root
        st.markdown(
            f"Original table: **{root.rows:,} distinct rows, {root.violations:,} violating** "
            + plain(f"<{', '.join(shield)}, {k}>") + f" ({root.label})."
        )
        for column, (method, result) in zip(st.columns(len(results)), results.items()):
            with column:
                st.markdown(f"**{METHOD_NAMES[method]}**")
                st.metric("rows kept", f"{result.rows:,}", delta=f"{result.rows - root.rows:,}")
                st.metric("generalization steps", result.generalizations)
                st.metric("tables generated", f"{result.generated:,}")
                st.metric("time", f"{result.seconds * 1000:.1f} ms")
                st.caption("Levels: " + plain(", ".join(f"{a} {v}/{result.max_levels[a]}" for a, v in result.levels.items())))
        comparison = comparison_table(list(results.values()))
        show_table(comparison, column_config={"seconds": st.column_config.NumberColumn(format="%.4f")})
        st.plotly_chart(charts.method_comparison_figure(comparison), width="stretch")

        chosen_method = st.radio(
            "Result to inspect", list(results), format_func=METHOD_NAMES.get, horizontal=True, key="leakage_method"
        )
        chosen = results[chosen_method]
        st.plotly_chart(  # collapsed to the path to the result when the tree is too large to label
            charts.search_tree_figure(chosen.tree, chosen.shield, tuple(chosen.levels.values()), palette),
            width="stretch",
        )

        st.markdown("**Anonymized table**" + (" (identical rows merged, counts added)" if count else ""))
        show_table(chosen.table.head(500), data=True, height=260)

        st.markdown("**Leakage before and after anonymization** (the paper's Table 8)")
        query_columns = [c for c in frame.columns if c != count]
        before = _leakage(dataset.fingerprint, dataset.missing, tuple(frame.columns), tuple(query_columns), count, frame)
        after = leakage_table(chosen.table, query_columns, count=count)
        both = compare_leakage(before, after)
        show_table(both, column_config={c: st.column_config.NumberColumn(format="%.4f") for c in ("before", "after", "change")})
        st.plotly_chart(charts.leakage_before_after_figure(both, palette), width="stretch")

        with row():
            download_csv("Anonymized table (CSV)", chosen.table, f"anonymized_{chosen_method}.csv", key="dl-anon")
            download_csv("Before/after leakage (CSV)", both, "leakage_before_after.csv", key="dl-both")
            download_json(
                "Parameters and results (JSON)",
                {
                    "dataset": dataset.name,
                    "count_column": count,
                    "shield": list(shield),
                    "k": k,
                    "hierarchies": {a: hierarchies[a].values.tolist() for a in shield},
                    "results": [r.summary() for r in results.values()],
                    "leakage_before_after": both.to_dict("records"),
                },
                "anonymization.json",
                key="dl-json",
            )

# --- 3. the paper's experiment -----------------------------------------------------
st.subheader("Experiment: heart-disease data (the paper's Section 4.2)")
st.caption(
    "Cleveland, Hungarian and VA heart-disease data with the paper's attributes (Age, Sex, Smoker, Chol, BS, "
    "Disease) and a seeded random 5-digit Zip. The UCI files have no smoking column: exercise-induced angina "
    "(exang, 1/0) stands in as the binary Smoker attribute. Black diamonds: the paper's Table 7 (Cleveland, k = 5)."
)
with guarded("running the heart-disease experiment"):
    e1, e2, e3 = st.columns(3)
    samples = e1.multiselect("Datasets", list(HEART_SAMPLES), default=list(HEART_SAMPLES), format_func=HEART_SAMPLES.get, key="exp_samples")
    shield_names = {", ".join(s): s for s in EXPERIMENT_SHIELDS}
    shields = e2.multiselect("Shields", list(shield_names), default=list(shield_names), key="exp_shields")
    ks = e3.multiselect("k", [2, 3, 5, 10, 20], default=[5], key="exp_ks")
    if samples and shields and ks:
        with st.status("Running IAB, exhaustive and greedy on each requirement...", expanded=False) as status:
            experiment = _experiment(tuple(samples), tuple(shield_names[s] for s in shields), tuple(sorted(ks)))
            status.update(label=f"{len(experiment)} searches done", state="complete")
        metric = st.radio("Show", ["rows", "generated", "seconds", "generalizations"], horizontal=True, key="exp_metric")
        st.plotly_chart(charts.experiment_figure(experiment, metric), width="stretch")
        show_table(experiment, column_config={"seconds": st.column_config.NumberColumn(format="%.4f")})
        download_csv("Experiment results (CSV)", experiment, "heart_experiment.csv", key="dl-exp")
    else:
        st.info("Choose at least one dataset, shield and k.")
