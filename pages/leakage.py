"""Leakage & anonymization page: which attributes give people away, and the least
generalization of the working copy that puts every record in a class of at least k.

Opens on the working copy; the generalization with the least information loss that meets the
release target (the optimal search) is offered first, beside the paper's IAB / exhaustive /
greedy, each with its loss and records suppressed, as a step (its cost said first) applied with
the sidebar's history (``anonlib.workflow.suggestions.find_generalizations`` decides what is
offered and preselected). Arca & Hewett's Table 1 and their heart-disease experiment are at the
bottom, closed until switched on (``dashboard.leakage_views``)."""

from __future__ import annotations

from functools import partial

import pandas as pd
import streamlit as st

from anonlib.core.cells import records_in
from anonlib.core.dataset import Dataset
from anonlib.core.hierarchy import hierarchy_csv
from anonlib.measures.utility import MEASURE_NAMES, MEASURES
from anonlib.transformations.generalization import METHOD_NAMES
from anonlib.workflow.suggestions import (
    Generalizations,
    Suggestion,
    estimate_generalizations,
    find_generalizations,
)
from dashboard import charts
from dashboard.glossary import glossary_expander, term_help
from dashboard.hierarchy_editor import digest, hierarchy_editors
from dashboard.leakage_views import (
    before_after,
    comparison,
    experiment_example,
    leakage_section,
    loss_text,
    methods_view,
    now_sentence,
    table1_example,
    tree_view,
)
from dashboard.memo import on_request
from dashboard.state import active_dataset, release_target, roles_key, target_key, unit_target, working_copy
from dashboard.ui import download_csv, download_json, guarded, offer_step, opened, page_header, paper_example, plain

PAGE = "Leakage"


# The searches are kept per input in a memo (not st.cache_data, which copies its result on every
# hit: at 10^5 records that copy took seconds each time k went back to a value already searched).
# The key carries everything the searches depend on: the fingerprint names the working copy's
# table (after its steps), the missing-value policy which of its rows are analysed, the roles the
# unit (a person column counts people), the hierarchies the digests of their files, the target its
# JSON (the models themselves are passed unhashed). Searches estimated over a moment (10^5
# records: about 1.4 s, 4 s counted in people) wait for a button saying how long they take,
# so k answers at once.
def _generalizations(
    fingerprint: str,
    missing: str,
    roles: str,
    qis: tuple,
    files: tuple,
    target: str,
    measure: str,
    _dataset: Dataset,
    _frame: pd.DataFrame,
    _hierarchies: dict,
    _target,
) -> Generalizations | None:
    key = (fingerprint, missing, roles, qis, files, target, measure)
    estimate = estimate_generalizations(_frame, list(qis), _hierarchies, by_person=_dataset.person is not None)
    return on_request(
        "leakage.generalizations",
        key,
        lambda: find_generalizations(_dataset, _frame, list(qis), _hierarchies, target=_target, measure=measure),
        seconds=estimate.seconds,
        what="the generalizations meeting the target",
        button_key="leakage_search",
        max_entries=32,
    )


def _candidate_label(suggestion: Suggestion) -> str:
    result, cost = suggestion.result, suggestion.cost
    raised = ", ".join(f"{a} to level {v}" for a, v in result.levels.items() if v) or "nothing raised"
    text = f"{' and '.join(suggestion.found_by)}: {raised} ("
    if result.utility is not None:
        text += f"{loss_text(result)}, "
    if result.suppressed_persons:  # the target counts people
        text += f"{result.suppressed_persons:,} people ({result.suppressed:,} records) suppressed, "
    else:
        text += f"{result.suppressed:,} records suppressed, " if result.suppressed else "no record suppressed, "
    text += f"{result.rows:,} distinct combinations)"
    if cost.removes_quasi_identifier:
        text += " - removes the quasi-identifier " + ", ".join(c for c in cost.removed if c in cost.quasi_identifiers)
    return text


def _apply_section(dataset: Dataset, frame: pd.DataFrame, found: Generalizations, palette: str, measure: str) -> None:
    """Choose one of the generalizations found, see what it costs and whether it meets the
    release target (in records), and apply it to the working copy as a step."""
    if found.keeping_need is not None:
        st.caption(
            plain(
                f"No generalization meets k = {found.keeping_need.k} with at most "
                f"{100 * release_target().max_suppressed:g}% suppressed {unit_target().whole} while keeping every "
                "quasi-identifier. " + found.keeping_need.sentence()
            )
        )
    candidates = found.suggestions
    if not found.needed:
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
    if found.preselected is None:
        st.warning(
            "Every generalization found turns a quasi-identifier into a single value (the column is "
            "effectively removed), so none is preselected. Finer hierarchies (more levels) give the "
            "search other options."
        )
    key = digest(repr([tuple(c.result.levels.items()) for c in candidates]).encode())
    pick = st.radio(
        "Generalization to apply",
        list(range(len(candidates))),
        index=found.preselected,
        format_func=lambda i: _candidate_label(candidates[i]),
        key=f"leakage_pick-{key}",
    )
    if pick is None:
        return
    chosen = candidates[pick]
    step, cost = chosen.step, chosen.cost
    preview = offer_step(step, cost, PAGE, "generalization", "leakage_apply")

    results = found.results
    with opened("How the searches got there: the methods compared and the search tree", key="leakage_how") as shown:
        if shown:
            st.dataframe(
                comparison(results),
                hide_index=True,
                width="stretch",
                column_config={"seconds": st.column_config.NumberColumn(format="%.4f")},
            )
            tree_of = st.radio(
                "Search tree of", list(results), format_func=METHOD_NAMES.get, horizontal=True, key="leakage_method"
            )
            tree_view(results[tree_of], palette, "working")

    st.markdown("**Working copy after this generalization** (first 200 rows)")
    st.dataframe(preview.current.frame.head(200), hide_index=True, width="stretch", height=260)
    st.markdown("**Leakage before and after** (the paper's Table 8)")
    # the columns measured on the Leakage table above: the person column rides along in ``frame``
    # for the search only (it says whose record it is, never a value an attacker learns)
    measured = frame.drop(columns=[dataset.person]) if dataset.person in frame.columns else frame
    after_frame, _ = preview.current.analysis_frame([c for c in measured.columns if c != dataset.count])
    both = before_after(dataset, measured, after_frame, palette, "working")
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
    "that puts every record in a class of at least k (k people, when a person column counts them)?",
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
target = unit_target()
columns = list(dataset.quasi_identifiers + dataset.sensitive)

with guarded("reading the working copy"):
    if not dataset.quasi_identifiers:
        st.info(
            "Mark the quasi-identifiers (columns an attacker could know) on the Dataset page: this page "
            "measures and generalizes them. The paper's worked example is at the bottom of the page."
        )
    else:
        # the person column rides along (never a quasi-identifier) so the search counts in the target's unit
        frame, dropped = dataset.analysis_frame(columns, person=dataset.person is not None)
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
            leakage_section(dataset, frame, [c for c in columns], scope)

        st.subheader("Least damaging generalization meeting the target")
        qis = st.multiselect(
            "Quasi-identifiers to generalize",
            list(dataset.quasi_identifiers),
            default=list(dataset.quasi_identifiers),
            key=f"shield-{scope}",
            help=term_help("quasi-identifier"),
        )
        st.caption(plain(f"The release target in the sidebar ({target.describe()}): {target.rule()}"))
        if not qis:
            st.info("Choose at least one quasi-identifier.")
        else:
            hierarchies = {}
            with guarded("setting up the generalization"):
                hierarchies = hierarchy_editors(qis, frame, False, scope)
            lacking = [a for a in qis if a not in hierarchies]
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
                with guarded("running the searches"):
                    found = _generalizations(
                        dataset.fingerprint,
                        dataset.missing,
                        roles_key(dataset),
                        tuple(qis),
                        tuple(digest(hierarchy_csv(hierarchies[a])) for a in qis),
                        target_key(target),
                        measure,
                        dataset,
                        frame,
                        hierarchies,
                        target,
                    )
                    for note in found.notes if found is not None else ():
                        st.caption(plain(note))
                    if found is not None and found.results:
                        root = next(iter(found.results.values())).root
                        st.markdown(now_sentence(working_copy().check, records, root.rows))
                        methods_view(found.results, records, hierarchies)
                        _apply_section(dataset, frame, found, palette, measure)

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

paper_example(
    "Table 1 of Arca & Hewett (k = 3 on Zip, Age, AC)",
    "Arca & Hewett 2021, Section 3",
    partial(table1_example, palette),
    "leakage_paper_table1",
)
paper_example(
    "heart-disease experiment (Section 4.2, Table 7)",
    "Arca & Hewett 2021, Section 4.2",
    experiment_example,
    "leakage_paper_experiment",
)
