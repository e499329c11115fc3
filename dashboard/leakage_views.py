"""What the Leakage & anonymization page draws: the leakage table, the searches' results side by
side, the search tree, leakage before and after, and the paper's worked examples (Arca & Hewett's
Table 1 and heart-disease experiment). Each takes results computed by ``anonlib`` and renders
them; the figures come from ``dashboard.charts``.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from anonlib.core.dataset import Dataset
from anonlib.core.hierarchy import (
    hierarchy_csv,
    level_words,
)
from anonlib.core.samples import load_sample
from anonlib.measures.leakage import attribute_label, attribute_sets, compare_leakage, leakage_table
from anonlib.measures.target import ReleaseTarget
from anonlib.measures.utility import MEASURE_NAMES
from anonlib.transformations.anonymize_experiments import (
    EXPERIMENT_SHIELDS,
    HEART_SAMPLES,
    heart_experiment,
)
from anonlib.transformations.generalization import (
    METHOD_NAMES,
    METHODS,
    SearchResult,
    comparison_table,
)
from anonlib.workflow.suggestions import (
    find_generalizations,
)
from dashboard import charts
from dashboard.glossary import term_help
from dashboard.hierarchy_editor import digest, hierarchy_editors
from dashboard.ui import download_csv, guarded, plain

EXAMPLE = "arca_table1"


EXAMPLE_SHIELD = ["Zip", "Age", "AC"]


SIZES = {"single attributes": 1, "pairs": 2, "triples": 3}


COMPARISON_NAMES = {
    "rows": "distinct combinations",
    "violations": "failing k",
    "generalizations": "levels raised",
    "generated": "tables checked",
    "suppressed": "records suppressed",
    "utility": "information loss",
}


# The cache keys carry the missing-value policy next to the fingerprint: the
# fingerprint names the table, the policy decides which of its rows are analysed.
@st.cache_data(show_spinner=False, max_entries=64)
def _cached_leakage(
    fingerprint: str, missing: str, columns: tuple, attributes: tuple, count: str | None, _frame: pd.DataFrame
) -> pd.DataFrame:
    return leakage_table(_frame, list(attributes), count=count)


@st.cache_data(show_spinner=False, max_entries=16)
def _experiment(samples: tuple, shields: tuple, ks: tuple) -> pd.DataFrame:
    return heart_experiment(samples, shields, ks)


def levels_text(levels: dict[str, int], max_levels: dict[str, int], hierarchies: dict[str, pd.DataFrame]) -> str:
    """'age 1/4 (67 → [65-69]), zip 5/5 (removed)': each level with how it reads."""

    def words(a: str, v: int) -> str:
        return f" ({level_words(hierarchies[a], v)})" if a in hierarchies else ""

    return ", ".join(f"{a} {v}/{max_levels[a]}{words(a, v)}" for a, v in levels.items())


def leakage_section(dataset: Dataset, frame: pd.DataFrame, columns: list[str], scope: str) -> None:
    """Longpre et al.'s leakage of each chosen attribute (or combination) on ``frame``."""
    count = dataset.count
    st.subheader("Information leakage per attribute")
    # one row each: every chosen attribute and combination stays readable in a 1024 px window
    query = st.multiselect(
        "Attributes to measure", columns, default=columns, key=f"lq-{scope}", help=term_help("dS / leakage")
    )
    wanted = st.multiselect("Combinations", list(SIZES), default=["single attributes"], key=f"leakage_sizes-{scope}")
    whole = st.checkbox("Also all quasi-identifiers together as one", key=f"leakage_whole-{scope}")
    attributes = attribute_sets(query, sorted(SIZES[name] for name in wanted))
    qi = tuple(c for c in dataset.quasi_identifiers if c in frame.columns) or tuple(query)
    if whole and qi and qi not in attributes:
        attributes.append(qi if len(qi) > 1 else qi[0])
    if not attributes:
        st.info("Choose attributes and at least one kind of combination.")
        return
    table = _cached_leakage(dataset.fingerprint, dataset.missing, tuple(frame.columns), tuple(attributes), count, frame)
    shown = table.assign(attribute=[attribute_label(a) for a in table["attribute"]]).sort_values(
        "normalized", ascending=False, kind="stable"
    )
    top = shown.iloc[0]
    st.markdown(
        f"Most revealing: **{plain(top['attribute'])}** (normalized leakage {top['normalized']:.4f}, "
        f"{top['loss']:.4f} bits, {int(top['partitions']):,} partitions). Normalized leakage is 0 when learning "
        "the value tells nothing about who a record is and 1 when it identifies every record."
    )
    st.dataframe(
        shown,
        hide_index=True,
        width="stretch",
        column_config={
            "loss": st.column_config.NumberColumn("dS (bits)", format="%.5f", help=term_help("dS / leakage")),
            "normalized": st.column_config.ProgressColumn(
                "normalized dS", format="%.5f", min_value=0.0, max_value=1.0, help=term_help("normalized leakage")
            ),
        },
    )
    st.plotly_chart(
        charts.leakage_figure(table, "Information leakage per attribute"), width="stretch", key=f"leakage-chart-{scope}"
    )
    download_csv("Leakage table (CSV)", shown, "leakage_table.csv", key=f"dl-leakage-{scope}")


def loss_text(result: SearchResult) -> str:
    """The result's information loss in its measure, as a sentence fragment."""
    if result.utility is None:
        return ""
    value = f"{result.utility:,.1f}" if result.measure in ("discernibility", "aecs") else f"{result.utility:.4f}"
    return f"{MEASURE_NAMES[result.measure]} {value}"


def now_sentence(check, records: int, rows: int) -> str:
    """The working copy before a generalization, in the target's unit (Markdown; numbers only).

    >>> from types import SimpleNamespace as N
    >>> now_sentence(N(by_person=False, failing_records=3), 10, 4)
    'Now: **10 records** in 4 distinct combinations; **3 records** in classes failing the target.'
    >>> people = N(whole="people", linkable=False)
    >>> now_sentence(N(by_person=True, persons=6, records=10, persons_in_failing=2, records_in_failing=3, target=people), 10, 4)
    'Now: **6 people** (10 records) in 4 distinct combinations; **2 people** (3 records) have records in classes failing the target.'
    """
    if check is None:
        return f"Now: **{records:,} records** in {rows:,} distinct combinations."
    if check.by_person:
        whole = check.target.whole
        what = "a history failing the target" if check.target.linkable else "records in classes failing the target"
        return (
            f"Now: **{check.persons:,} {whole}** ({check.records:,} records) in {rows:,} distinct combinations; "
            f"**{check.persons_in_failing:,} {whole}** ({check.records_in_failing:,} records) have {what}."
        )
    return (
        f"Now: **{records:,} records** in {rows:,} distinct combinations; **{check.failing_records:,} records** in "
        "classes failing the target."
    )


def paper_rows(result: SearchResult) -> bool:
    """Whether ``result.rows`` counts the generalized table before its records are suppressed: the
    paper's searches (IAB, exhaustive, greedy) with records to suppress; the optimal search counts
    the rows of its release."""
    return result.method != "optimal" and result.suppressed > 0


def methods_view(results: dict[str, SearchResult], records: int, hierarchies: dict[str, pd.DataFrame]) -> None:
    """Per method: information loss, records suppressed, distinct combinations kept,
    tables checked, time, levels."""
    root = next(iter(results.values())).root
    per_row = len(results) if len(results) <= 3 else 2  # four methods: two rows of two, readable at 1024 px
    items = list(results.items())
    cells = [cell for start in range(0, len(items), per_row) for cell in st.columns(per_row)]
    for column, (method, result) in zip(cells, items):
        with column:
            st.markdown(f"**{METHOD_NAMES[method]}**")
            if result.utility is not None:
                st.metric("information loss", loss_text(result).rsplit(" ", 1)[1], help=MEASURE_NAMES[result.measure])
            if result.suppressed_persons is not None:  # the target counts people: so does what it removes
                st.metric(
                    "people suppressed",
                    f"{result.suppressed_persons:,}",
                    help=f"Every record of each suppressed person: {result.suppressed:,} records.",
                )
            else:
                st.metric("records suppressed", f"{result.suppressed:,}")
            st.metric("distinct combinations", f"{result.rows:,}", help=term_help("distinct combination"))
            st.caption(
                f"from {root.rows:,}: {root.rows - result.rows:,} merged"
                # the paper's methods count the generalized table's rows before suppression (their objective);
                # the optimal search counts its release: the same levels can show two numbers
                + (" (counted before suppression, as the paper counts rows)" if paper_rows(result) else "")
                + (
                    f"; of {records:,} records, {result.suppressed:,} suppressed"
                    + (
                        f" ({result.suppressed_persons:,} of {result.persons:,} people)."
                        if result.suppressed_persons is not None
                        else "."
                    )
                    if result.suppressed
                    else f"; no record is lost (all {records:,} records stay)."
                )
            )
            if result.method == "optimal":
                st.caption(
                    (
                        "Proven optimal"
                        if result.optimal
                        else f"Not proven optimal (time limit): no generalization loses less than {result.bound:.4f}"
                    )
                    + f"; {result.checked:,} of {result.lattice_size:,} generalizations counted."
                )
            st.metric("tables checked", f"{result.generated:,}")
            st.metric("time", f"{result.seconds * 1000:.1f} ms")
            st.caption("Levels: " + plain(levels_text(result.levels, result.max_levels, hierarchies)))


def comparison(results: dict[str, SearchResult]) -> pd.DataFrame:
    return comparison_table(list(results.values())).rename(columns=COMPARISON_NAMES)


def tree_view(result: SearchResult, palette: str, scope: str) -> None:
    st.plotly_chart(
        charts.search_tree_figure(result.tree, result.quasi_identifiers, tuple(result.levels.values()), palette),
        width="stretch",
        key=f"search-tree-{scope}",
    )


def before_after(
    dataset: Dataset, frame: pd.DataFrame, after_frame: pd.DataFrame, palette: str, scope: str
) -> pd.DataFrame:
    """Leakage of every column before and after (the paper's Table 8)."""
    count = dataset.count
    query_columns = [c for c in frame.columns if c != count]
    before = _cached_leakage(
        dataset.fingerprint, dataset.missing, tuple(frame.columns), tuple(query_columns), count, frame
    )
    after = leakage_table(after_frame, query_columns, count=count)
    both = compare_leakage(before, after)
    st.dataframe(
        both,
        hide_index=True,
        width="stretch",
        column_config={c: st.column_config.NumberColumn(format="%.4f") for c in ("before", "after", "change")},
    )
    st.plotly_chart(charts.leakage_before_after_figure(both, palette), width="stretch", key=f"before-after-{scope}")
    return both


@st.cache_data(show_spinner=False, max_entries=16)
def _example_searches(k: int, qis: tuple, _hierarchies: dict, files: tuple = ()):
    """The paper's three searches on its Table 1 (``files``: the hierarchies' digests, the cache key)."""
    example = load_sample(EXAMPLE)
    return find_generalizations(
        example, example.frame, list(qis), _hierarchies, target=ReleaseTarget(k=k), methods=METHODS
    )


def _table1(palette: str) -> None:
    example = load_sample(EXAMPLE)
    frame = example.frame
    count = example.count
    columns = [c for c in frame.columns if c != count]
    leakage_section(example, frame, columns, "example")
    st.subheader("Anonymization of Table 1")
    c1, c2 = st.columns([3, 1])
    shield = c1.multiselect(
        "Quasi-identifiers (the paper's Table 1 uses Zip, Age, AC)",
        columns,
        default=EXAMPLE_SHIELD,
        key="shield-example",
    )
    k = int(c2.number_input("k", min_value=1, max_value=1000, value=3, step=1, key="k-example"))
    if not shield:
        st.info("Choose at least one attribute.")
        return
    hierarchies = hierarchy_editors(shield, frame, True, "example")
    lacking = [a for a in shield if a not in hierarchies]
    if lacking:
        st.warning("The search runs once every attribute has a valid hierarchy: " + plain(", ".join(lacking)) + ".")
        return
    found = _example_searches(
        k, tuple(shield), hierarchies, tuple(digest(hierarchy_csv(hierarchies[a])) for a in shield)
    )
    for note in found.notes:
        st.caption(plain(note))
    results = dict(found.results)
    if not results:
        return
    root = next(iter(results.values())).root
    st.markdown(
        f"Original table: **{root.rows:,} distinct combinations, {root.violations:,} in classes smaller "
        f"than k** ({root.label}, the paper's T(violating rows, rows))."
    )
    methods_view(results, int(frame[count].sum()), hierarchies)
    comparison = comparison_table(list(results.values()))
    st.dataframe(
        comparison.rename(columns=COMPARISON_NAMES),
        hide_index=True,
        width="stretch",
        column_config={"seconds": st.column_config.NumberColumn(format="%.4f")},
    )
    st.plotly_chart(charts.method_comparison_figure(comparison), width="stretch")
    chosen_method = st.radio(
        "Result to inspect", list(results), format_func=METHOD_NAMES.get, horizontal=True, key="leakage_method_example"
    )
    chosen = results[chosen_method]
    tree_view(chosen, palette, "example")
    st.markdown("**Anonymized table** (identical rows merged, counts added)")
    st.dataframe(chosen.table.head(500), hide_index=True, width="stretch", height=260)
    st.markdown("**Leakage before and after anonymization** (the paper's Table 8)")
    before_after(example, frame, chosen.table, palette, "example")


def _experiment_view() -> None:
    st.caption(
        "Cleveland, Hungarian and VA heart-disease data with the paper's attributes (Age, Sex, Smoker, Chol, BS, "
        "Disease) and a seeded random 5-digit Zip. The UCI files have no smoking column: exercise-induced angina "
        "(exang, 1/0) stands in as the binary Smoker attribute. Black diamonds: the paper's Table 7 (Cleveland, k = 5)."
    )
    e1, e2, e3 = st.columns(3)
    samples = e1.multiselect(
        "Datasets", list(HEART_SAMPLES), default=list(HEART_SAMPLES), format_func=HEART_SAMPLES.get, key="exp_samples"
    )
    shield_names = {", ".join(s): s for s in EXPERIMENT_SHIELDS}
    shields = e2.multiselect("Quasi-identifier sets", list(shield_names), default=list(shield_names), key="exp_shields")
    ks = e3.multiselect("k", [2, 3, 5, 10, 20], default=[5], key="exp_ks")
    if not (samples and shields and ks):
        st.info("Choose at least one dataset, quasi-identifier set and k.")
        return
    with st.status("Running IAB, exhaustive and greedy on each requirement...", expanded=False) as status:
        experiment = _experiment(tuple(samples), tuple(shield_names[s] for s in shields), tuple(sorted(ks)))
        status.update(label=f"{len(experiment)} searches done", state="complete")
    metric = st.radio(
        "Show",
        ["rows", "generated", "seconds", "generalizations"],
        horizontal=True,
        key="exp_metric",
        help="rows: the paper's distinct combinations kept; generated: tables checked.",
    )
    st.plotly_chart(charts.experiment_figure(experiment, metric), width="stretch")
    shown = experiment.rename(
        columns={
            "shield": "quasi-identifiers",
            **COMPARISON_NAMES,
            "paper_rows": "paper: distinct combinations",
            "paper_generated": "paper: tables checked",
        }
    )
    st.dataframe(
        shown, hide_index=True, width="stretch", column_config={"seconds": st.column_config.NumberColumn(format="%.4f")}
    )
    download_csv("Experiment results (CSV)", experiment, "heart_experiment.csv", key="dl-exp")


def table1_example(palette: str) -> None:
    with guarded("running the paper's Table 1 example"):
        _table1(palette)


def experiment_example() -> None:
    with guarded("running the heart-disease experiment"):
        _experiment_view()
