"""Individual privacy page: PPP / PoAC per record on the working copy (Kroes et al. 2021),
under the one attacker model the risk report uses (``anonlib.workflow.findings.individual_privacy``)."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import streamlit as st

from anonlib.core.budget import about_text
from anonlib.core.dataset import Dataset
from anonlib.measures.peers import (
    EXAMPLES,
    MEASURE_NAMES,
    estimate_minimum,
    example_dataset,
    generalization_potential,
    heatmap_columns,
    leave_one_out,
    privacy_matrix,
    walk_size,
)
from anonlib.workflow import BandsStep, default_choice, step_cost
from anonlib.workflow.budgets import PAGE_PRIVACY_SECONDS, STATUS_SECONDS, bands_budget, bands_seconds, known_within
from anonlib.workflow.findings import IndividualPrivacy, individual_privacy
from dashboard import charts
from dashboard.glossary import term_help
from dashboard.memo import memo, on_request
from dashboard.progress import throttled
from dashboard.state import active_dataset, roles_key, working_copy
from dashboard.ui import download_csv, download_json, guarded, offer_step, page_header, paper_example, plain

PAGE = "Individual privacy"
MEASURE_LABELS = {"ppp": "PPP (upward privacy)", "poac": "PoAC (downward privacy)"}
P_KEY = "privacy_p"  # the threshold p, shared with the Risk report page (not a widget key: it outlives pages)
MAX_SPAN = 1500  # whole-number columns spanning more values are not offered for bands (see _whole_span)


# The two computations that report progress are kept in memos, not st.cache_data: a cached
# function never calls a Streamlit element (dashboard.memo says why). Their keys carry the
# fingerprint (the table), the roles and the missing-value policy (what is analysed).
PRIVACY = "individuals.privacy"
ESTIMATES = "individuals.estimates"  # seconds the walk is expected to take, per table and attacker
POTENTIAL = "individuals.potential"
BANDS = "individuals.bands"  # the band steps offered and what each costs (applied to the whole table)
FIGURES = "individuals.figures"  # the two heatmaps, drawn from the kept results


@st.cache_data(show_spinner=False, max_entries=32)
def _leave_one_out(
    fingerprint: str,
    roles: tuple,
    missing: str,
    sensitive: str,
    measure: str,
    q: float,
    _frame: pd.DataFrame,
    _aux: tuple,
    _count: str | None,
    _person: str | None = None,
):
    return leave_one_out(_frame, sensitive, list(_aux), measure, q, count=_count, person=_person)


@st.cache_data(show_spinner=False, max_entries=4)
def _paper_matrix(key: str, measure: str, p: float):
    example = example_dataset(key)
    frame, _ = example.analysis_frame()
    return example, frame, privacy_matrix(frame, list(frame.columns), measure, p=p)


def _estimated_seconds(dataset: Dataset, frame: pd.DataFrame, max_known: int | None) -> float:
    """Seconds the walk over the attacker's combinations is expected to take (all sensitive attributes)."""
    aux = list(dataset.quasi_identifiers)
    return sum(
        estimate_minimum(frame, s, aux, count=dataset.count, max_known=max_known, person=dataset.person).seconds
        for s in dataset.sensitive
    )


def _whole_span(series: pd.Series) -> float:
    """How many whole numbers a column spans (0 when it holds fractions: those are cut in tenths)."""
    values = series.dropna().to_numpy(dtype=np.float64)
    if values.size == 0 or not np.all(np.floor(values) == values):
        return 0.0
    return float(values.max() - values.min() + 1)


def _worst_names(result) -> np.ndarray:
    """Per record, the smallest combination of quasi-identifiers attaining its minimum, as text."""
    masks, first, inverse = np.unique(result.worst, return_index=True, return_inverse=True)
    names = np.array([", ".join(result.worst_subset(int(i))) or "nothing" for i in first], dtype=object)
    return names[inverse.reshape(-1)]


def _keep_p() -> None:
    st.session_state[P_KEY] = st.session_state["peers_p"]


page_header(
    PAGE,
    "Whose sensitive value could an attacker work out from the quasi-identifiers they know? "
    "For every record and sensitive attribute: the worst case over every combination of "
    "quasi-identifiers an attacker might know, which quasi-identifier exposes them, and whether "
    "putting a number into bands (e.g. age bands) would help, with what it costs.",
    "- **Attacker model** (the same as the risk report's): the attacker knows any combination of a record's "
    "quasi-identifiers and tries to learn one sensitive attribute.\n"
    "- **Peers** (look-alikes) are the records matching what the attacker knows; with a person column, the "
    "record itself and other people's records only (a person's own other visits do not hide them). **PPP** "
    "(proportion of protective peers) = the share of peers whose sensitive value differs from the record's. "
    "0 means the value is revealed.\n"
    "- **PoAC** = the share of the other possible values that still appear among the peers often enough "
    "(more than a share q), i.e. how many alternatives the attacker must still consider.\n"
    "- A cell shows the **minimum over every combination** of quasi-identifiers (including knowing nothing). "
    "A record has *p-upward privacy* when its minimum PPP is above p, *q-downward privacy* when its minimum "
    "PoAC is 1. Hover a cell for the record's values and the smallest combination that exposes it.\n"
    "- **Where vulnerability comes from**: the measure when all quasi-identifiers but one are known.\n"
    "- **Bands**: cut a numeric quasi-identifier into equal-width bands; the cost (values before and after) "
    "is shown before you apply it, and applying it adds a step to the working copy (undo in the sidebar).",
    "Kroes, Janssen, Groenwold & van Leeuwen (2021), Evaluating privacy of individuals in medical data, "
    "Health Informatics Journal 27(2)",
)

dataset = active_dataset()
qis, sensitive_columns = dataset.quasi_identifiers, dataset.sensitive
ready = bool(qis and sensitive_columns)
if not qis:
    st.info(
        "Mark at least one column as quasi-identifier on the Dataset page: it is what an attacker may know. "
        "The paper's worked example is at the bottom of this page."
    )
elif not sensitive_columns:
    st.info(
        "Mark the columns that must not be learnt (a diagnosis, an income) as sensitive on the Dataset page. "
        "The paper's worked example is at the bottom of this page."
    )

if ready:
    c1, c2, c3 = st.columns(3)
    measure = c1.radio("Measure", list(MEASURE_LABELS), format_func=MEASURE_LABELS.get, key="peers_measure")
    if "peers_p" not in st.session_state:
        st.session_state["peers_p"] = st.session_state.get(P_KEY, 0.0)
    p = c2.slider(
        "Threshold p (PPP must be above p)",
        0.0,
        0.95,
        step=0.05,
        key="peers_p",
        on_change=_keep_p,
        help=term_help("p-upward privacy"),
    )
    joint_q = c3.checkbox(
        "q from p",
        value=True,
        key="peers_joint_q",
        help="q = p / (values - 1), the paper's joint choice: p spread evenly over the other "
        "values of the sensitive attribute.",
    )
    q = None if joint_q else c3.slider("Threshold q (PoAC)", 0.0, 0.95, 0.0, 0.05, key="peers_q")
    c1, c2 = st.columns(2)
    palette = c1.selectbox("Colours", list(charts.PALETTES), key="peers_palette")
    include_empty = c2.checkbox(
        "Include knowing nothing",
        value=True,
        key="peers_empty",
        help="Include the empty combination: an attacker who knows no quasi-identifier.",
    )
    known_choices = ["all", *range(len(qis) - 1, 0, -1)]
    known = st.selectbox(
        "The attacker knows at most this many quasi-identifiers at once",
        known_choices,
        key="peers_known",
        help="'all' is the full model of the paper and the report; fewer makes the work smaller on many "
        "quasi-identifiers (the report narrows this way, with a note, when all would take too long).",
    )
    max_known = None if known == "all" else int(known)
    label = MEASURE_NAMES[measure]

    with guarded("computing the privacy of individuals"):
        person = dataset.person  # look-alikes are then the record itself and other people's records
        frame, dropped = dataset.analysis_frame(list(qis + sensitive_columns), person=person is not None)
        started = time.perf_counter()
        status = progress = None
        table_key = (dataset.fingerprint, roles_key(dataset), dataset.missing)
        seconds = memo(ESTIMATES).get((*table_key, max_known))
        if seconds is None:
            seconds = memo(ESTIMATES).put((*table_key, max_known), _estimated_seconds(dataset, frame, max_known))
        narrowed = known_within(seconds, len(qis), max_known, PAGE_PRIVACY_SECONDS)
        if narrowed != max_known:  # narrowed as the risk report narrows (fewer known at once, said), to a page's time
            said = st.container()
            everything = st.checkbox(
                f"Compute every combination anyway ({about_text(seconds)})", key="peers_everything"
            )
            every = walk_size(len(qis), max_known)
            if not everything and not narrowed:
                said.warning(
                    f"Not computed: even an attacker knowing one quasi-identifier at a time would take "
                    f"{about_text(seconds * walk_size(len(qis), 1) / every)} on {len(frame):,} records. Mark fewer "
                    "columns as quasi-identifiers, or tick the box to compute it anyway."
                )
                st.stop()
            if not everything:
                said.info(
                    f"All {every:,} combinations of the {len(qis)} quasi-identifiers would take "
                    f"{about_text(seconds)} on {len(frame):,} records, so the attacker here knows at most "
                    f"{narrowed} of them at once ({walk_size(len(qis), narrowed):,} combinations, "
                    f"{about_text(seconds * walk_size(len(qis), narrowed) / every)}). Tick the box to compute every "
                    "combination, or choose how many the attacker knows above."
                )
                seconds *= walk_size(len(qis), narrowed) / every
                max_known = narrowed
        privacy_key = (
            *table_key,
            measure,
            float(p),
            None if q is None else float(q),
            max_known,
            include_empty,
        )
        privacy: IndividualPrivacy | None = memo(PRIVACY).get(privacy_key)
        if privacy is None:  # computed here, outside any cached function, with its progress shown
            if seconds > STATUS_SECONDS:
                status = st.status(f"Computing individual privacy (about {seconds:,.0f} s estimated)...", expanded=True)
                bar = status.progress(0.0, text="Combinations of quasi-identifiers")

                @throttled
                def progress(done: int, total: int, what: str) -> None:  # anonlib.core.budget.Progress
                    share = min(done / max(total, 1), 1.0)
                    bar.progress(share, text=f"{what}: {100 * share:.0f}%")

            privacy = memo(PRIVACY).put(
                privacy_key,
                individual_privacy(
                    dataset,
                    p=p,
                    measure=measure,
                    q=q,
                    max_known=max_known,
                    include_empty=include_empty,
                    progress=progress,
                ),
            )

        # ------------------------------------------------------------ headline: records protected
        st.info(plain(privacy.sentence))
        protected_what = (
            f"p-upward privacy (minimum PPP > {p:g})" if measure == "ppp" else "q-downward privacy (minimum PoAC = 1)"
        )
        look_alikes = (
            ""
            if person is None
            else f" Look-alikes among other people's records: a record's peers are the record itself and the "
            f"records of other people matching it ('{person}' says whose record it is), never the same "
            "person's other records."
        )
        st.caption(
            f"{int(privacy.weights.sum()):,} records, {len(qis)} quasi-identifiers"
            + (f"; {dropped:,} rows with missing values left out." if dropped else ".")
            + look_alikes
            + f" Records with {protected_what}, per sensitive attribute:"
        )
        metric_cols = st.columns(min(len(privacy.rows), 4))
        for i, row in enumerate(privacy.rows):
            metric_cols[i % len(metric_cols)].metric(
                f"records protected: {row.sensitive}",
                f"{100 * row.protected_share:.1f}%",
                help=f"{row.protected_share * privacy.weights.sum():,.0f} records; median minimum {label} "
                f"{row.median_min_ppp:.3f}",
            )

        # ------------------------------------------------------------ Fig. 2 heatmap
        threshold = p if measure == "ppp" else 0.0

        def fig2() -> tuple:
            """The heatmap and each record's values as text (None for binned records)."""
            values = np.vstack([m.values for m in privacy.minimums])
            columns = heatmap_columns(values)
            record_text = None
            if columns.bins is None:
                shown = list(qis + sensitive_columns)
                record_text = [
                    ", ".join(f"{c}={v}" for c, v in zip(shown, r)) for r in frame[shown].astype(str).to_numpy()
                ]
            notes = np.vstack(["knowing " + _worst_names(m) for m in privacy.minimums])
            figure = charts.privacy_heatmap(
                values,
                list(sensitive_columns),
                columns,
                threshold=threshold,
                palette=palette,
                value_label=f"min {label}",
                individual_text=record_text,
                cell_notes=notes,
                title=f"Minimum {label} over what an attacker may know",
            )
            return figure, record_text

        # the figures read only the results kept above: kept with them, not drawn again on a change of k
        heatmap, record_text = memo(FIGURES).compute((*privacy_key, palette), fig2)
        st.caption(
            "Records " + ("at or below p" if measure == "ppp" else "with PoAC 0") + " are in the at-risk "
            "colour; hover a cell for the record and the combination of quasi-identifiers that exposes it."
        )
        st.plotly_chart(heatmap, width="stretch", key="peers_heatmap")

        # ------------------------------------------------------------ Fig. 3 for one sensitive attribute
        st.subheader("Where vulnerability comes from")
        sensitive = st.selectbox("Sensitive attribute", list(sensitive_columns), key="peers_sensitive")
        v = list(sensitive_columns).index(sensitive)
        aux = tuple(qis)
        q_s = privacy.minimums[v].q
        lo = _leave_one_out(
            dataset.fingerprint,
            roles_key(dataset),
            dataset.missing,
            sensitive,
            measure,
            q_s,
            frame,
            aux,
            dataset.count,
            person,
        )

        def fig3():
            rows = np.vstack([lo.full[None, :], lo.without])
            return charts.privacy_heatmap(
                rows,
                ["everything known"] + [f"all but {c}" for c in aux],
                heatmap_columns(rows),
                threshold=threshold,
                palette=palette,
                value_label=label,
                individual_text=record_text,
                title=f"{label} of {sensitive} when each quasi-identifier in turn is unknown",
            )

        st.plotly_chart(
            memo(FIGURES).compute((*privacy_key, palette, sensitive), fig3), width="stretch", key="peers_leave_one_out"
        )
        gains = lo.gains().rename(
            columns={"unknown variable": "unknown quasi-identifier", "individuals improved %": "records improved %"}
        )
        st.dataframe(
            gains,
            hide_index=True,
            width="stretch",
            column_config={
                c: st.column_config.NumberColumn(format="%.1f" if c.endswith("%") else "%.4f")
                for c in gains.columns[1:]
            },
        )

        # ------------------------------------------------------------ downloads
        d1, d2 = st.columns(2)
        with d1:  # built when clicked: the table has a row per record
            download_csv(
                "Per-record table (CSV)",
                lambda: frame[list(qis + sensitive_columns)].assign(
                    **{f"min {label} of {m.sensitive}": m.values for m in privacy.minimums}
                ),
                "individual_privacy.csv",
                key="peers_csv",
            )
        with d2:
            download_json(
                "Parameters and results (JSON)",
                {
                    "dataset": dataset.name,
                    "attacker model": privacy.sentence,
                    "quasi-identifiers": list(qis),
                    "sensitive attributes": list(sensitive_columns),
                    "measure": label,
                    "p": p,
                    "q": {m.sensitive: m.q for m in privacy.minimums} if measure == "poac" else None,
                    "include_empty_combination": include_empty,
                    "max_known": max_known,
                    "rows_left_out_for_missing_values": dropped,
                    "records_protected": {r.sensitive: r.protected_share for r in privacy.rows},
                },
                "individual_privacy.json",
                key="peers_json",
            )

        # ------------------------------------------------------------ Fig. 4 bands as a step
        st.subheader("Bands: a step for the working copy")
        numeric = [c for c in aux if pd.api.types.is_numeric_dtype(frame[c]) and frame[c].nunique() > 2]
        # anonlib.measures.peers.partitions walks every whole-number width and offset (span² work):
        # a whole-number column spanning more than MAX_SPAN numbers would take minutes
        wide = [c for c in numeric if _whole_span(frame[c]) > MAX_SPAN]
        if wide:
            st.caption(
                plain(
                    f"Not offered for bands: {', '.join(wide)} (whole numbers spanning more than "
                    f"{MAX_SPAN:,} values, e.g. codes read as numbers; set the type to category on the "
                    "Dataset page if they are codes)."
                )
            )
            numeric = [c for c in numeric if c not in wide]
        if not numeric:
            st.info("No quasi-identifier is numeric with more than two values, so there is nothing to put into bands.")
        else:
            g1, g2 = st.columns(2)
            variable = g1.selectbox("Numeric quasi-identifier to put into bands", numeric, key="peers_gen_var")
            max_categories = g2.slider("Most bands", 2, 40, 15, key="peers_max_categories")
            budget = bands_budget(len(frame), len(aux))
            potential_key = (
                dataset.fingerprint,
                roles_key(dataset),
                dataset.missing,
                sensitive,
                variable,
                max_categories,
                budget,
                include_empty,
                max_known,
            )

            def partitions() -> object:  # every record's minimum per partition: moving p needs no recomputation
                if status is not None:
                    status.update(label=f"Computing up to {budget} band partitions of {variable}...")
                return generalization_potential(
                    frame,
                    sensitive,
                    list(aux),
                    variable,
                    max_categories=max_categories,
                    max_partitions=budget,
                    include_empty=include_empty,
                    count=dataset.count,
                    max_known=max_known,
                    progress=progress,
                    person=person,
                )

            potential = on_request(
                POTENTIAL,
                potential_key,
                partitions,
                seconds=bands_seconds(budget, len(aux) if max_known is None else max_known),
                what=f"up to {budget} band partitions of {variable}",
                button_key="peers_bands_run",
            )
            if potential is None:
                st.caption(
                    "At this size the band partitions take longer than a slider should wait: they are computed "
                    "when you press the button, and kept for these settings."
                )
            else:
                table = potential.table(p)
                baseline = potential.baseline_at(p)
                st.plotly_chart(
                    charts.generalization_figure(table, baseline, variable, p), width="stretch", key="peers_potential"
                )
                if not potential.complete:
                    st.caption(
                        f"Offsets were thinned evenly to {len(table)} partitions to keep this fast on {len(frame):,} rows."
                    )
                best = table[table["best for its categories"]].sort_values("protected share", ascending=False)

                def band_steps() -> tuple[list, list]:
                    steps = [
                        BandsStep.from_partition(variable, potential.partitions[int(i)]).covering(
                            dataset.frame[variable]
                        )
                        for i in best.index
                    ]
                    return steps, [step_cost(s, dataset) for s in steps]

                # each step applied to the table to say its cost: kept, as it depends on none of the release target
                steps, costs = memo(BANDS).compute((*potential_key, float(p)), band_steps)
                # bands that protect no more records than the values as they are only relabel them: none preselected
                gains = bool((best["protected share"] > baseline).any())
                default = default_choice(costs) if gains else None
                choices = list(range(len(steps)))
                pick = st.selectbox(
                    "Bands to apply (best protection first)",
                    choices,
                    index=default,
                    format_func=lambda i: (
                        f"{int(best.iloc[i]['categories'])} bands of width {best.iloc[i]['width']:g}: "
                        f"{100 * best.iloc[i]['protected share']:.1f}% of records protected"
                        + (" (removes the column)" if costs[i].removes_quasi_identifier else "")
                    ),
                    key=f"peers_pick:{variable}:{max_categories}:{p:g}",
                    placeholder="Every choice removes the column; pick one deliberately"
                    if gains
                    else "No bands protect more records than none; pick one deliberately",
                )
                st.caption(f"Without bands: {100 * baseline:.1f}% of records protected for {plain(sensitive)}.")
                if pick is not None:
                    offer_step(steps[pick], costs[pick], PAGE, "banding", "peers_apply")
                download_csv("Partitions (CSV)", table, "generalization_potential.csv", key="peers_partitions_csv")
        if status is not None:
            status.update(
                label=f"Individual privacy computed in {time.perf_counter() - started:.1f} s",
                state="complete",
                expanded=False,
            )

    if any(a.page == PAGE for a in working_copy().steps):
        st.caption("The working copy has bands applied on this page (see the steps in the sidebar; undo is there too).")


# ---------------------------------------------------------------- the paper's worked example
def _render_paper() -> None:
    key = st.selectbox("Example", list(EXAMPLES), format_func=lambda k: EXAMPLES[k].title, key="peers_paper_key")
    paper_measure = st.radio(
        "Measure", list(MEASURE_LABELS), format_func=MEASURE_LABELS.get, key="peers_paper_measure", horizontal=True
    )
    paper_p = st.slider("Threshold p", 0.0, 0.95, 0.0, 0.05, key="peers_paper_p")
    example, frame, matrix = _paper_matrix(key, paper_measure, paper_p)
    variables = list(frame.columns)
    st.caption(
        "Each variable in turn sensitive, all the others known (the paper's Fig. 2); rows with a missing "
        "value are dropped, as the paper did."
    )
    summary = matrix.summary(paper_p)
    cols = st.columns(min(len(variables), 5))
    for i, row in summary.iterrows():
        cols[i % len(cols)].metric(f"paper: {row['variable']}", f"{100 * row['protected share']:.1f}%")
    st.plotly_chart(
        charts.privacy_heatmap(
            matrix.values,
            variables,
            heatmap_columns(matrix.values),
            threshold=paper_p if paper_measure == "ppp" else 0.0,
            palette=list(charts.PALETTES)[0],
            value_label=f"min {MEASURE_NAMES[paper_measure]}",
            cell_notes="knowing " + matrix.worst_subset_names(nothing="nothing"),
            title=f"{example.name}: minimum {MEASURE_NAMES[paper_measure]}",
        ),
        width="stretch",
        key="peers_paper_heatmap",
    )
    st.dataframe(summary, hide_index=True, width="stretch")


paper_example(
    "Kroes et al., Tables 1-2 and Fig. 2",
    "Kroes, Janssen, Groenwold & van Leeuwen (2021)",
    _render_paper,
    "peers_paper",
)
