"""Leakage & anonymization page: which attributes give people away, and the least
generalization of the working copy that puts every record in a class of at least k.

Opens on the working copy; the generalization with the least information loss that
meets the release target (the optimal search) is offered first, beside the paper's
IAB / exhaustive / greedy, each with its loss and records suppressed, as a step (its
cost said first) applied with the sidebar's history. Arca & Hewett's Table 1 and their heart-disease experiment are at the
bottom, closed until switched on."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace

import pandas as pd
import streamlit as st

from anonlib.core.cells import records_in
from anonlib.core.dataset import Dataset
from anonlib.core.default_hierarchy import bands_text, default_hierarchy, default_intervals
from anonlib.core.errors import HierarchyError, join_names
from anonlib.core.hierarchy import (
    cover_values,
    date_hierarchy,
    flat_hierarchy,
    frequency_hierarchy,
    hierarchy_csv,
    hierarchy_tree,
    interval_hierarchy,
    level_words,
    masking_hierarchy,
    parse_bands,
    parse_taxonomy,
    read_hierarchy_csv,
    taxonomy_hierarchy,
    uncovered_values,
    validate_hierarchy,
    value_key,
)
from anonlib.core.samples import load_sample
from anonlib.core.taxonomy import TAXONOMIES, taxonomy_match
from anonlib.measures.leakage import attribute_label, attribute_sets, compare_leakage, leakage_table
from anonlib.measures.utility import MEASURE_NAMES, MEASURES, measure_value
from anonlib.transformations.anonymize_experiments import (
    ARCA_AC_GROUPS,
    ARCA_AGE_BANDS,
    EXPERIMENT_SHIELDS,
    HEART_SAMPLES,
    heart_experiment,
)
from anonlib.transformations.generalization import (
    METHOD_NAMES,
    METHODS,
    SEARCH_METHODS,
    NoSolutionError,
    SearchResult,
    comparison_table,
    estimate_search,
    search,
)
from anonlib.workflow.suggestions import (
    Suggestion,
    generalization_suggestions,
    keeping_hierarchies,
    keeping_need,
    preselected,
    trims,
)
from dashboard import charts
from dashboard.glossary import glossary_expander, term_help
from dashboard.state import active_dataset, release_target, working_copy
from dashboard.ui import download_csv, download_json, guarded, offer_step, page_header, paper_example, plain

PAGE = "Leakage"
EXAMPLE = "arca_table1"
EXAMPLE_SHIELD = ["Zip", "Age", "AC"]
BUILDERS = ["intervals", "masking", "frequency", "dates", "bundled taxonomy", "taxonomy", "flat", "ARX file"]
SIZES = {"single attributes": 1, "pairs": 2, "triples": 3}
KEEPING = "Optimal keeping every quasi-identifier"
SEARCH_SECONDS = 20.0  # the optimal search's time limit on a page: past it, the best found, marked not proven
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
def _leakage(
    fingerprint: str, missing: str, columns: tuple, attributes: tuple, count: str | None, _frame: pd.DataFrame
) -> pd.DataFrame:
    return leakage_table(_frame, list(attributes), count=count)


@st.cache_data(show_spinner=False, max_entries=64)
def _search(
    fingerprint: str,
    missing: str,
    columns: tuple,
    shield: tuple,
    k: int,
    method: str,
    files: tuple,
    count: str | None,
    _frame: pd.DataFrame,
    _hierarchies: dict,
    target: str = "",
    _requirements: tuple = (),
    max_suppressed: float = 0.0,
    measure: str = "loss",
) -> SearchResult:
    """One search, cached on the data, the hierarchies' digests, the target (``target``:
    its JSON; the models themselves are passed unhashed as ``_requirements``) and the measure."""
    return search(
        _frame,
        list(shield),
        k,
        _hierarchies,
        method,
        count=count,
        requirements=_requirements,
        max_suppressed=max_suppressed,
        measure=measure,
        time_limit=SEARCH_SECONDS if method == "optimal" else None,
    )


@st.cache_data(show_spinner=False, max_entries=16)
def _keeping_need(
    fingerprint: str,
    missing: str,
    columns: tuple,
    shield: tuple,
    k: int,
    files: tuple,
    count: str | None,
    _frame: pd.DataFrame,
    _hierarchies: dict,
    models: str,
    _requirements: tuple,
):
    """``keeping_need``, cached as the searches are (it counts classes once per page run otherwise);
    keyed by the target's models only: the suppression limit does not change it."""
    return keeping_need(_frame, list(shield), _hierarchies, k=k, count=count, requirements=_requirements)


def _target_args(target) -> dict:
    """The release target's models and suppression limit as ``_search`` arguments."""
    if target is None:
        return {}
    return {
        "target": json.dumps(target.to_json(), sort_keys=True, default=str),
        "_requirements": tuple(target.requirements),
        "max_suppressed": float(target.max_suppressed),
    }


@st.cache_data(show_spinner=False, max_entries=16)
def _experiment(samples: tuple, shields: tuple, ks: tuple) -> pd.DataFrame:
    return heart_experiment(samples, shields, ks)


def _digest(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()[:12]


def _initial_builder(attribute: str, values: pd.Series, example: bool) -> str:
    if example and attribute in ("Zip", "Age", "AC"):
        return {"Zip": "masking", "Age": "intervals", "AC": "taxonomy"}[attribute]
    return default_hierarchy(values, attribute)[0]


def _limit(text: str, what: str) -> float | None:
    """A tail limit typed on the page (blank: none); a sentence when it is not a number."""
    if not text.strip():
        return None
    try:
        return float(text)
    except ValueError:
        raise HierarchyError(
            f"The {what} limit '{text.strip()}' is not a number; type a number or leave it blank."
        ) from None


def _hierarchy_editor(attribute: str, values: pd.Series, example: bool, scope: str) -> pd.DataFrame | None:
    """Builder, parameters, upload, editable table and download for one quasi-identifier."""
    key = f"{scope}-{attribute}"
    builder = st.selectbox(
        "Build from",
        BUILDERS,
        index=BUILDERS.index(_initial_builder(attribute, values, example)),
        key=f"hb-{key}",
        help="intervals: nested numeric bands; masking: hide digits from the right; frequency: categories grouped "
        "in order of how many records hold them (4, 16, 64... per group); dates: month, quarter, year, decade; "
        "bundled taxonomy: US states, countries, race, ICD-10 or ICD-9 codes; taxonomy: named groups; flat: every value becomes *; "
        "ARX file: a hierarchy CSV exported from ARX (; or , separated, no header).",
    )
    if builder == "intervals":
        below = above = None
        try:
            if example and attribute == "Age":
                suggested = ARCA_AGE_BANDS
            else:
                bands, below, above = default_intervals(values)
                suggested = bands_text(bands)
        except HierarchyError:
            suggested = ""
        text = st.text_input(
            "Bands per level: low-high separated by commas; levels separated by |", suggested, key=f"hi-{key}"
        )
        tails = st.columns(3)
        low_text = tails[0].text_input(
            "Bottom-code values below",
            "" if below is None else value_key(below),
            key=f"hl-{key}",
            help="Every value under it becomes one value, <limit, at "
            "every level (blank: none). Suggested when 1% of the records stretch far.",
        )
        high_text = tails[1].text_input(
            "Top-code values above",
            "" if above is None else value_key(above),
            key=f"hh-{key}",
            help="Every value over it becomes one value, >limit, at "
            "every level (blank: none). Suggested when 1% of the records stretch far.",
        )
        top = tails[2].checkbox("Add a last level *", value=not (example and attribute == "Age"), key=f"ht-{key}")
        base = interval_hierarchy(
            values,
            parse_bands(text),
            top=top,
            below=_limit(low_text, "bottom-coding"),
            above=_limit(high_text, "top-coding"),
        )
    elif builder == "masking":
        base = masking_hierarchy(values)
    elif builder == "frequency":
        base = frequency_hierarchy(values)
    elif builder == "dates":
        base = date_hierarchy(values)
    elif builder == "bundled taxonomy":
        names = list(TAXONOMIES)
        guess = taxonomy_match(values)
        chosen = st.selectbox("Taxonomy", names, index=names.index(guess.name) if guess else 0, key=f"hk-{key}")
        match = taxonomy_match(values, name=chosen)
        st.caption(plain(match.summary()))
        base = match.table
    elif builder == "taxonomy":
        if example and attribute == "AC":
            suggested = "\n".join(f"{parent}: {', '.join(kids)}" for parent, kids in ARCA_AC_GROUPS.items())
        else:
            suggested = "*: " + ", ".join(flat_hierarchy(values)[0].tolist())
        text = st.text_area(
            "Groups, one per line: group: member, member (the top group last)", suggested, key=f"hx-{key}"
        )
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
    missing = uncovered_values(table, values)
    if missing:
        st.warning(
            plain(f"The hierarchy does not list {len(missing):,} of the column's values: {join_names(missing, 10)}.")
        )
        if st.checkbox(
            "Put them under 'other'",
            value=True,
            key=f"hc-{key}",
            help="Adds a row for each: 'other' at every level below the top, the top value on top. "
            "Without it the hierarchy cannot be used on this column.",
        ):
            table = cover_values(table, values)
    table = validate_hierarchy(table, values, attribute)
    with st.expander(f"Tree of {attribute}"):
        st.plotly_chart(
            charts.hierarchy_figure(hierarchy_tree(table, values), attribute), width="stretch", key=f"htree-{key}"
        )
    st.download_button(
        f"Hierarchy of {attribute} (ARX CSV)",
        hierarchy_csv(table),
        file_name=f"hierarchy_{attribute}.csv",
        mime="text/csv",
        key=f"hd-{key}",
    )
    return table


def _levels_text(levels: dict[str, int], max_levels: dict[str, int], hierarchies: dict[str, pd.DataFrame]) -> str:
    """'age 1/4 (67 → [65-69]), zip 5/5 (removed)': each level with how it reads."""

    def words(a: str, v: int) -> str:
        return f" ({level_words(hierarchies[a], v)})" if a in hierarchies else ""

    return ", ".join(f"{a} {v}/{max_levels[a]}{words(a, v)}" for a, v in levels.items())


def _leakage_section(dataset: Dataset, frame: pd.DataFrame, columns: list[str], scope: str) -> None:
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
    table = _leakage(dataset.fingerprint, dataset.missing, tuple(frame.columns), tuple(attributes), count, frame)
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


def _hierarchies(shield: list[str], frame: pd.DataFrame, example: bool, scope: str) -> dict[str, pd.DataFrame]:
    """One hierarchy editor per quasi-identifier, in tabs; only the valid ones are returned."""
    st.markdown(
        "**Hierarchies** (how each column is generalized level by level; edit cells, add rows, or upload ARX files)",
        help=term_help("hierarchy"),
    )
    hierarchies: dict[str, pd.DataFrame] = {}
    for attribute, tab in zip(shield, st.tabs([plain(a) for a in shield])):
        with tab, guarded(f"building the hierarchy of {attribute}"):
            built = _hierarchy_editor(attribute, frame[attribute], example, scope)
            if built is not None:
                hierarchies[attribute] = built
    return hierarchies


def _run_searches(
    dataset: Dataset,
    frame: pd.DataFrame,
    shield: list[str],
    k: int,
    hierarchies: dict[str, pd.DataFrame],
    target=None,
    methods=METHODS,
    measure: str = "loss",
) -> dict[str, SearchResult]:
    """The ``methods`` (the optimal search and the paper's IAB, exhaustive and greedy;
    exhaustive only when it is quick) on one requirement: k, and with the release
    ``target`` its privacy models and suppression limit too; each result's loss in ``measure``."""
    files = tuple(_digest(hierarchy_csv(hierarchies[a])) for a in shield)
    results: dict[str, SearchResult] = {}
    for method in methods:
        if method == "exhaustive" and not estimate_search(frame, shield, hierarchies, method).interactive:
            st.caption(
                f"Exhaustive search skipped: {estimate_search(frame, shield, hierarchies, method).what} "
                "would take too long here; IAB finds the same optimum."
            )
            continue
        with guarded(f"running the {METHOD_NAMES[method]} search"):
            results[method] = _search(
                dataset.fingerprint,
                dataset.missing,
                tuple(frame.columns),
                tuple(shield),
                k,
                method,
                files,
                dataset.count,
                frame,
                hierarchies,
                **_target_args(target),
                measure=measure,
            )
    return results


def _loss_text(result: SearchResult) -> str:
    """The result's information loss in its measure, as a sentence fragment."""
    if result.utility is None:
        return ""
    value = f"{result.utility:,.1f}" if result.measure in ("discernibility", "aecs") else f"{result.utility:.4f}"
    return f"{MEASURE_NAMES[result.measure]} {value}"


def _methods_view(results: dict[str, SearchResult], records: int, hierarchies: dict[str, pd.DataFrame]) -> None:
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
                st.metric("information loss", _loss_text(result).rsplit(" ", 1)[1], help=MEASURE_NAMES[result.measure])
            st.metric("records suppressed", f"{result.suppressed:,}")
            st.metric("distinct combinations", f"{result.rows:,}", help=term_help("distinct combination"))
            st.caption(
                f"from {root.rows:,}: {root.rows - result.rows:,} merged"
                + (
                    f"; of {records:,} records, {result.suppressed:,} suppressed."
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
            st.caption("Levels: " + plain(_levels_text(result.levels, result.max_levels, hierarchies)))


def _comparison(results: dict[str, SearchResult]) -> pd.DataFrame:
    return comparison_table(list(results.values())).rename(columns=COMPARISON_NAMES)


def _tree_view(result: SearchResult, palette: str, scope: str) -> None:
    st.plotly_chart(
        charts.search_tree_figure(result.tree, result.quasi_identifiers, tuple(result.levels.values()), palette),
        width="stretch",
        key=f"search-tree-{scope}",
    )


def _before_after(
    dataset: Dataset, frame: pd.DataFrame, after_frame: pd.DataFrame, palette: str, scope: str
) -> pd.DataFrame:
    """Leakage of every column before and after (the paper's Table 8)."""
    count = dataset.count
    query_columns = [c for c in frame.columns if c != count]
    before = _leakage(dataset.fingerprint, dataset.missing, tuple(frame.columns), tuple(query_columns), count, frame)
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


def _root_k(results: dict[str, SearchResult]) -> int:
    return next(iter(results.values())).k


def _candidate_label(suggestion: Suggestion) -> str:
    result, cost = suggestion.result, suggestion.cost
    raised = ", ".join(f"{a} to level {v}" for a, v in result.levels.items() if v) or "nothing raised"
    text = f"{' and '.join(suggestion.found_by)}: {raised} ("
    if result.utility is not None:
        text += f"{_loss_text(result)}, "
    text += f"{result.suppressed:,} records suppressed, " if result.suppressed else "no record suppressed, "
    text += f"{result.rows:,} distinct combinations)"
    if cost.removes_quasi_identifier:
        text += " - removes the quasi-identifier " + ", ".join(c for c in cost.removed if c in cost.quasi_identifiers)
    return text


def _apply_section(
    dataset: Dataset,
    frame: pd.DataFrame,
    results: dict[str, SearchResult],
    hierarchies: dict[str, pd.DataFrame],
    palette: str,
    measure: str = "loss",
) -> None:
    """Choose one of the generalizations found, see what it costs and whether it meets the
    release target (in records), and apply it to the working copy as a step."""
    found_by = {METHOD_NAMES[m]: r for m, r in results.items()}
    if any(r.levels[a] for r in results.values() for a in r.levels):
        kept = keeping_hierarchies(hierarchies)
        if trims(hierarchies):
            files = tuple(_digest(hierarchy_csv(kept[a])) for a in kept)
            with guarded("searching for a generalization that keeps every quasi-identifier"):
                try:
                    keeping = _search(
                        dataset.fingerprint,
                        dataset.missing,
                        tuple(frame.columns),
                        tuple(kept),
                        _root_k(results),
                        "optimal",
                        files,
                        dataset.count,
                        frame,
                        kept,
                        **_target_args(release_target()),
                        measure=measure,
                    )
                    # its loss measured with the full hierarchies, as every other candidate's
                    found_by[KEEPING] = replace(
                        keeping,
                        utility=measure_value(
                            frame, keeping.table, list(kept), hierarchies, measure, count=dataset.count
                        ),
                    )
                except NoSolutionError:
                    target = release_target()
                    need = _keeping_need(
                        dataset.fingerprint,
                        dataset.missing,
                        tuple(frame.columns),
                        tuple(kept),
                        _root_k(results),
                        files,
                        dataset.count,
                        frame,
                        hierarchies,
                        json.dumps(target.to_json()["requirements"], sort_keys=True, default=str),
                        tuple(target.requirements),
                    )
                    st.caption(
                        plain(
                            f"No generalization meets k = {_root_k(results)} with at most "
                            f"{100 * target.max_suppressed:g}% suppressed records while keeping "
                            "every quasi-identifier. " + need.sentence()
                        )
                    )
    # greedy last: a generalization it shares with an optimal search is recorded as that search's
    found_by = {name: r for name, r in found_by.items() if r.method != "greedy"} | {
        name: r for name, r in found_by.items() if r.method == "greedy"
    }
    candidates = generalization_suggestions(found_by, hierarchies, dataset)
    if all(not any(c.result.levels.values()) for c in candidates):
        left = candidates[0].result.suppressed
        if left:
            st.info(
                f"No generalization is needed: suppressing the {left:,} records still in classes failing the "
                "target (the sidebar's button) stays within the suppression limit."
            )
        else:
            st.success("These quasi-identifiers already form classes meeting the target: no generalization is needed.")
        return
    st.markdown(f"**Generalizations found** (least {MEASURE_NAMES[measure]} first)")
    choice = preselected(candidates)
    if choice is None:
        st.warning(
            "Every generalization found turns a quasi-identifier into a single value (the column is "
            "effectively removed), so none is preselected. Finer hierarchies (more levels) give the "
            "search other options."
        )
    digest = _digest(repr([tuple(c.result.levels.items()) for c in candidates]).encode())
    pick = st.radio(
        "Generalization to apply",
        list(range(len(candidates))),
        index=choice,
        format_func=lambda i: _candidate_label(candidates[i]),
        key=f"leakage_pick-{digest}",
    )
    if pick is None:
        return
    chosen = candidates[pick]
    step, cost = chosen.step, chosen.cost
    preview = offer_step(step, cost, PAGE, "generalization", "leakage_apply")

    with st.expander("How the searches got there: the methods compared and the search tree"):
        st.dataframe(
            _comparison(results),
            hide_index=True,
            width="stretch",
            column_config={"seconds": st.column_config.NumberColumn(format="%.4f")},
        )
        tree_of = st.radio(
            "Search tree of", list(results), format_func=METHOD_NAMES.get, horizontal=True, key="leakage_method"
        )
        _tree_view(results[tree_of], palette, "working")

    st.markdown("**Working copy after this generalization** (first 200 rows)")
    st.dataframe(preview.current.frame.head(200), hide_index=True, width="stretch", height=260)
    st.markdown("**Leakage before and after** (the paper's Table 8)")
    after_frame, _ = preview.current.analysis_frame([c for c in frame.columns if c != dataset.count])
    both = _before_after(dataset, frame, after_frame, palette, "working")
    d1, d2 = st.columns(2)
    with d1:
        download_csv("Before/after leakage (CSV)", both, "leakage_before_after.csv", key="dl-both")
    with d2:
        download_json(
            "Parameters and results (JSON)",
            {
                "dataset": dataset.name,
                "count_column": dataset.count,
                "quasi_identifiers": list(step.columns),
                "k": chosen.result.k,
                "step": step.to_json(),
                "cost": list(cost.sentences()),
                "results": [r.summary() for r in results.values()],
                "leakage_before_after": both.to_dict("records"),
            },
            "generalization.json",
            key="dl-json",
        )


# --- the page ------------------------------------------------------------------------

page_header(
    "Leakage & anonymization",
    "Which attributes give away who a record is, and what is the least generalization of your data "
    "that puts every record in a class of at least k records?",
    "- **Leakage** (Longpre et al.'s average information loss): an attacker who learns a person's value "
    "of an attribute narrows down which record is theirs. dS is the average number of bits gained (the "
    "Shannon entropy of the groups the attribute forms); normalized = dS / log2(records), 0 = nothing "
    "learnt, 1 = every record identified.\n"
    "- **Hierarchy**: how each quasi-identifier is generalized, one level at a time (column 0 the original "
    "value, column j its level-j value; the layout ARX uses, so ARX files can be uploaded).\n"
    "- **Optimal search** (the default): among all ways of raising each column to one level of its "
    "hierarchy, the one that meets the release target (k, the privacy models, at most the allowed share of "
    "records suppressed) with the least **information loss** (the loss metric by default: 0 = values kept, "
    "1 = every value replaced by *; a suppressed record counts as fully generalized), proven optimal.\n"
    "- **The paper's searches** (Arca & Hewett): IAB (best-first with pruning) and exhaustive search keep as many "
    "**distinct combinations** (different rows of values; the paper calls them rows) as possible; greedy "
    "follows the fewest combinations in small classes and may merge more. Each is shown with its loss.\n"
    "- **Applying** a generalization adds a step to the working copy (sidebar), which you can undo.",
    "Arca & Hewett 2021, Analytics on anonymity for privacy retention in smart health data (Future Internet 13:274); "
    "Longpre et al., information leakage; Iyengar 2002 (loss metric); Kohlmayer et al. 2012 (Flash, ARX)",
)

palette = st.radio("Colours", list(charts.PALETTES), horizontal=True, key="leakage_palette")
dataset: Dataset = active_dataset()
target = release_target()
columns = list(dataset.quasi_identifiers + dataset.sensitive)

with guarded("reading the working copy"):
    if not dataset.quasi_identifiers:
        st.info(
            "Mark the quasi-identifiers (columns an attacker could know) on the Dataset page: this page "
            "measures and generalizes them. The paper's worked example is at the bottom of the page."
        )
    else:
        frame, dropped = dataset.analysis_frame(columns)
        count = dataset.count
        scope = dataset.fingerprint[:12]
        records = records_in(frame, count)
        st.caption(
            f"Working copy {plain(dataset.name)}: {records:,} records"
            + (f" in {len(frame):,} rows (record count column {plain(count)})" if count else "")
            + (f"; {dropped:,} rows with missing values left out" if dropped else "")
            + ". Columns used: quasi-identifiers and sensitive attributes."
        )
        with guarded("computing the leakage table"):
            _leakage_section(dataset, frame, [c for c in columns], scope)

        st.subheader("Least damaging generalization meeting the target")
        shield = st.multiselect(
            "Quasi-identifiers to generalize",
            list(dataset.quasi_identifiers),
            default=list(dataset.quasi_identifiers),
            key=f"shield-{scope}",
            help=term_help("quasi-identifier"),
        )
        st.caption(
            f"The release target in the sidebar ({plain(target.describe())}): every class of records "
            "sharing these quasi-identifiers must hold at least k records"
            + (" and meet the privacy models" if target.requirements else "")
            + (", after suppressing at most the allowed share of records" if target.max_suppressed else "")
            + "."
        )
        if not shield:
            st.info("Choose at least one quasi-identifier.")
        else:
            hierarchies = {}
            with guarded("setting up the generalization"):
                hierarchies = _hierarchies(shield, frame, False, scope)
            lacking = [a for a in shield if a not in hierarchies]
            if lacking:
                st.warning(
                    "The search runs once every quasi-identifier has a valid hierarchy: "
                    + plain(", ".join(lacking))
                    + "."
                )
            else:
                measure = st.selectbox(
                    "Information loss to minimize",
                    list(MEASURES),
                    format_func=MEASURE_NAMES.get,
                    key=f"measure-{scope}",
                    help="The optimal search returns the generalization with the least of this measure that meets "
                    "the target (0 = nothing lost, 1 = every value replaced by * for the loss metric and precision); "
                    "every generalization found is shown with it. Suppressed records count as fully generalized.",
                )
                results = _run_searches(dataset, frame, shield, target.k, hierarchies, target, SEARCH_METHODS, measure)
                if results:
                    with guarded("showing the generalizations found"):
                        root = next(iter(results.values())).root
                        check = working_copy().check
                        st.markdown(
                            f"Now: **{records:,} records** in {root.rows:,} distinct combinations"
                            + (
                                f"; **{check.failing_records:,} records** in classes failing the target"
                                if check is not None
                                else ""
                            )
                            + "."
                        )
                        _methods_view(results, records, hierarchies)
                        _apply_section(dataset, frame, results, hierarchies, palette, measure)

glossary_expander(
    [
        "record",
        "distinct combination",
        "quasi-identifier",
        "k",
        "hierarchy",
        "generalization",
        "dS / leakage",
        "normalized leakage",
        "IAB",
        "violation",
    ]
)


# --- the papers' worked examples (closed until switched on) ----------------------------


def _table1() -> None:
    example = load_sample(EXAMPLE)
    frame = example.frame
    count = example.count
    columns = [c for c in frame.columns if c != count]
    _leakage_section(example, frame, columns, "example")
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
    hierarchies = _hierarchies(shield, frame, True, "example")
    lacking = [a for a in shield if a not in hierarchies]
    if lacking:
        st.warning("The search runs once every attribute has a valid hierarchy: " + plain(", ".join(lacking)) + ".")
        return
    results = _run_searches(example, frame, shield, k, hierarchies)
    if not results:
        return
    root = next(iter(results.values())).root
    st.markdown(
        f"Original table: **{root.rows:,} distinct combinations, {root.violations:,} in classes smaller "
        f"than k** ({root.label}, the paper's T(violating rows, rows))."
    )
    _methods_view(results, int(frame[count].sum()), hierarchies)
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
    _tree_view(chosen, palette, "example")
    st.markdown("**Anonymized table** (identical rows merged, counts added)")
    st.dataframe(chosen.table.head(500), hide_index=True, width="stretch", height=260)
    st.markdown("**Leakage before and after anonymization** (the paper's Table 8)")
    _before_after(example, frame, chosen.table, palette, "example")


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


def _guarded_table1() -> None:
    with guarded("running the paper's Table 1 example"):
        _table1()


def _guarded_experiment() -> None:
    with guarded("running the heart-disease experiment"):
        _experiment_view()


paper_example(
    "Table 1 of Arca & Hewett (k = 3 on Zip, Age, AC)",
    "Arca & Hewett 2021, Section 3",
    _guarded_table1,
    "leakage_paper_table1",
)
paper_example(
    "heart-disease experiment (Section 4.2, Table 7)",
    "Arca & Hewett 2021, Section 4.2",
    _guarded_experiment,
    "leakage_paper_experiment",
)
