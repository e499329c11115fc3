"""Individual privacy page: PPP / PoAC per individual and variable (Kroes et al. 2021)."""

from __future__ import annotations

import logging
import time
from contextlib import contextmanager
from typing import Iterator

import numpy as np
import pandas as pd
import streamlit as st

from anonlib.core.dataset import Dataset, Role
from anonlib.core.errors import AnonlibError
from anonlib.peers import (
    EXAMPLES,
    MEASURE_NAMES,
    example_dataset,
    generalization_potential,
    heatmap_columns,
    leave_one_out,
    privacy_matrix,
)
from dashboard import charts
from anonlib.workflow import BandsStep
from dashboard.state import active_dataset, apply_step, set_active_dataset, working_copy
from dashboard.ui import download_csv, download_json, guarded, page_header, plain

ACTIVE = "active"
APPLY_ERROR = "peers_apply_error"
log = logging.getLogger("dashboard")
MEASURE_LABELS = {"ppp": "PPP (upward privacy)", "poac": "PoAC (downward privacy)"}


# Every cache key carries the missing-value policy next to the fingerprint: the
# fingerprint names the table, the policy decides which of its rows are analysed.
@st.cache_data(show_spinner=False, max_entries=16)
def _matrix(fingerprint: str, missing: str, variables: tuple[str, ...], count: str | None, measure: str,
            q: float | None, p_for_q: float, include_empty: bool, _frame: pd.DataFrame):
    return privacy_matrix(_frame, list(variables), measure, q=q, p=p_for_q, include_empty=include_empty,
                          count=count)


@st.cache_data(show_spinner=False, max_entries=32)
def _leave_one_out(fingerprint: str, missing: str, sensitive: str, aux: tuple[str, ...], count: str | None, measure: str,
                   q: float, _frame: pd.DataFrame):
    return leave_one_out(_frame, sensitive, list(aux), measure, q, count=count)


@st.cache_data(show_spinner=False, max_entries=16)
def _potential(fingerprint: str, missing: str, sensitive: str, aux: tuple[str, ...], variable: str, count: str | None,
               max_categories: int, max_partitions: int, include_empty: bool, _frame: pd.DataFrame):
    # keeps every record's minimum per partition, so moving p needs no recomputation
    return generalization_potential(_frame, sensitive, list(aux), variable, max_categories=max_categories,
                                    max_partitions=max_partitions, include_empty=include_empty, count=count)


@contextmanager
def _working(what: str, units: float) -> Iterator[None]:
    """A status box saying what is being computed, for work that may take a second or more
    (results are cached, so a repeated setting finishes at once)."""
    if units < 3e6:
        yield
        return
    started = time.perf_counter()
    with st.status(f"{what}...", expanded=False) as status:
        yield
        status.update(label=f"{what}: done in {time.perf_counter() - started:.1f} s", state="complete")


def _apply_partition(dataset: Dataset, variable: str, partition) -> None:
    """Button callback (runs before the page's next run, outside ``guarded``): a
    failure is kept in the session and shown as a sentence by that run."""
    try:
        _generalize(dataset, variable, partition)
    except AnonlibError as err:
        st.session_state[APPLY_ERROR] = str(err)
    except Exception:  # noqa: BLE001 - the page must survive any failure
        log.exception("unexpected failure while applying a partition")
        st.session_state[APPLY_ERROR] = (
            f"Something unexpected went wrong while generalizing {variable}. The working dataset is unchanged."
        )


def _generalize(dataset: Dataset, variable: str, partition) -> None:
    """Apply the partition as a step of the working copy (a paper example becomes the
    loaded dataset first); the bands cover every value of the column, so rows left out
    of this analysis (missing values) are banded too."""
    choice = st.session_state.get("peers_data", ACTIVE)
    if choice != ACTIVE:
        set_active_dataset(dataset, f"example:{choice}")
    step = BandsStep.from_partition(variable, partition).covering(dataset.frame[variable])
    apply_step(step, "Individual privacy")
    st.session_state["peers_data"] = ACTIVE


page_header(
    "Individual privacy",
    "For every individual and every variable: could someone who knows some of this person's other "
    "values work out this one? The heatmap shows the worst case over every combination of what an "
    "adversary might know, so you can see who is exposed, through which variables, and whether "
    "coarsening a number (e.g. age bands) would help.",
    "- Each **row** is a variable treated as sensitive; all other chosen variables are what an adversary "
    "might know about the person (*auxiliary information*). Each **column** is an individual (or, for large "
    "data, a bin of individuals).\n"
    "- **Peers** are the records matching what the adversary knows. **PPP** (proportion of protective peers) "
    "= the share of peers whose sensitive value differs from the person's. 0 means the value is revealed.\n"
    "- **NPP** = the number of such protective peers; **PoAC** = the share of the other possible values that "
    "still appear among the peers often enough (more than a share q), i.e. how many alternatives the "
    "adversary must still consider.\n"
    "- A cell shows the **minimum over every subset** of the auxiliary variables (2^k of them, including knowing "
    "nothing). Someone has *p-upward privacy* when the minimum PPP is above p, *q-downward privacy* when "
    "the minimum PoAC is 1. Cells at or below the threshold are in the at-risk colour (dark red in the paper's "
    "palette). Hover a cell to see the person's values and the smallest combination of variables that "
    "exposes them.\n"
    "- **Where vulnerability comes from** shows the measure when everything but one variable is known: a row "
    "that is much better than the others marks a variable whose knowledge is what exposes people.\n"
    "- **Generalization potential** cuts a numeric variable into c equal-width categories (every offset) and "
    "shows the share protected; the best partition per c is starred and can be applied to the working data.",
    "Kroes, Janssen, Groenwold & van Leeuwen (2021), Evaluating privacy of individuals in medical data, "
    "Health Informatics Journal 27(2)",
)

# ---------------------------------------------------------------- data and variables
options = [ACTIVE, *EXAMPLES]
if st.session_state.get("peers_data") not in options:
    st.session_state["peers_data"] = ACTIVE
active_name = active_dataset().name
choice = st.selectbox(
    "Data",
    options,
    key="peers_data",
    format_func=lambda k: f"Active dataset: {active_name}" if k == ACTIVE else f"Example: {EXAMPLES[k].title}",
)
dataset = None
with guarded("loading the data"):
    dataset = active_dataset() if choice == ACTIVE else example_dataset(choice)
if dataset is None:  # the error is shown above; nothing below can run without data
    st.stop()
if choice != ACTIVE:
    st.caption("Variables as in the paper's Table 1/2; rows with a missing value in them are dropped, as the paper did.")

candidates = [c for c in dataset.frame.columns if dataset.roles.get(c) not in (Role.IDENTIFIER, Role.COUNT)]
default = [c for c in candidates if dataset.roles.get(c) in (Role.QUASI_IDENTIFIER, Role.SENSITIVE)]
variables = st.multiselect(
    "Variables (each in turn sensitive, the others auxiliary information)",
    candidates,
    default=default,
    key=f"peers_vars:{choice}:{dataset.fingerprint}",
)

c1, c2, c3, c4 = st.columns([1.2, 1.2, 1.2, 1.4])
measure = c1.radio("Measure", list(MEASURE_LABELS), format_func=MEASURE_LABELS.get, key="peers_measure")
p = c2.slider("Threshold p (PPP must be above p)", 0.0, 0.95, 0.0, 0.05, key="peers_p")
joint_q = c3.checkbox("q = p / (|dom(s)| - 1)", value=True, key="peers_joint_q",
                      help="The paper's joint choice: p spread evenly over the false values of each variable.")
q = None if joint_q else c3.slider("Threshold q (PoAC)", 0.0, 0.95, 0.0, 0.05, key="peers_q")
palette = c4.selectbox("Colours", list(charts.PALETTES), key="peers_palette")
include_empty = c4.checkbox("Include knowing nothing (the empty subset)", value=True, key="peers_empty")
# the paper's examples drop such rows as the paper did; the active dataset starts from its own policy
drop_missing = c4.checkbox(
    "Drop rows with missing values in these variables",
    value=choice != ACTIVE or dataset.missing == "drop",
    key=f"peers_drop:{choice}:{dataset.missing}",
    help="Starts as the paper did for its examples (rows dropped) and as the dataset's own missing-value "
         "setting for the active dataset; unticked, 'missing' is a value of its own.",
)

label = MEASURE_NAMES[measure]
with guarded("computing the privacy of individuals"):
    working = dataset.with_missing("drop" if drop_missing else "category")
    frame, dropped = working.analysis_frame(variables)
    count = dataset.count
    n_aux = max(len(variables) - 1, 0)
    st.caption(
        f"{len(frame):,} individuals, {len(variables)} variables: {n_aux} auxiliary per sensitive variable, "
        f"{2 ** n_aux:,} combinations each" + (f"; {dropped:,} rows with missing values dropped." if dropped else ".")
    )
    if len(variables) > 13 and not st.checkbox(
        f"Compute anyway ({len(variables)} variables = {len(variables) * 2 ** n_aux:,} combinations; "
        "this can take minutes)", key="peers_many"
    ):
        st.warning("Many variables: every combination of auxiliary information is evaluated, which doubles "
                   "with each variable. Choose fewer variables, or confirm above.")
        st.stop()
    # PPP does not depend on q, so only PoAC's cache key carries it
    pairs = len(variables) * 2 ** n_aux
    with _working(f"Minimum {label} over {pairs:,} (sensitive variable, auxiliary combination) pairs for "
                  f"{len(frame):,} individuals", len(frame) * pairs):
        matrix = _matrix(working.fingerprint, working.missing, tuple(variables), count, measure,
                         q if measure == "poac" else 0.0, p if measure == "poac" and q is None else 0.0,
                         include_empty, frame)

    # ------------------------------------------------------------ Fig. 2 heatmap
    threshold = p if measure == "ppp" else 0.0
    summary = matrix.summary(p)
    columns = heatmap_columns(matrix.values)
    notes = "knowing " + matrix.worst_subset_names(nothing="nothing")  # the worst auxiliary subset of every cell
    individual_text = None
    if columns.bins is None:
        individual_text = [
            ", ".join(f"{c}={v}" for c, v in zip(variables, row)) for row in frame[variables].astype(str).to_numpy()
        ]
    what = ("at or below p" if measure == "ppp" else "PoAC 0") + " in the at-risk colour"
    st.plotly_chart(
        charts.privacy_heatmap(
            matrix.values, list(variables), columns, threshold=threshold, palette=palette,
            value_label=f"min {label}", individual_text=individual_text, cell_notes=notes,
            title=f"Minimum {label} over all auxiliary information ({what})",
        ),
        width="stretch",
        key="peers_heatmap",
    )

    # ------------------------------------------------------------ summary per variable
    st.subheader("Per variable")
    protected_what = f"p-upward privacy (min PPP > {p:g})" if measure == "ppp" else "q-downward privacy (min PoAC = 1)"
    st.write(f"Share of individuals with {protected_what}, when that variable is sensitive:")
    metric_cols = st.columns(min(len(variables), 5))
    for k, row in summary.iterrows():
        metric_cols[k % len(metric_cols)].metric(
            plain(row["variable"]), f"{100 * row['protected share']:.1f}%",
            help=f"domain size {row['domain size']}, median min {label} {row[f'median min {label}']:.3f}",
        )
    if measure == "ppp":
        summary = summary.drop(columns="q")
    st.dataframe(
        summary.assign(**{"protected share": 100 * summary["protected share"],
                          "share NPP = 0": 100 * summary["share NPP = 0"]}).rename(
            columns={"protected share": "protected %", "share NPP = 0": "NPP = 0 %"}),
        hide_index=True, width="stretch",
        column_config={"protected %": st.column_config.NumberColumn(format="%.1f"),
                       "NPP = 0 %": st.column_config.NumberColumn(format="%.1f"),
                       "q": st.column_config.NumberColumn(format="%.3f")},
    )

    # ------------------------------------------------------------ Fig. 3 for one sensitive variable
    st.subheader("Where vulnerability comes from")
    preferred = [c for c in dataset.sensitive if c in variables]
    sensitive = st.selectbox("Sensitive variable", list(variables),
                             index=list(variables).index(preferred[0]) if preferred else len(variables) - 1,
                             key=f"peers_sensitive:{choice}")
    v = list(variables).index(sensitive)
    aux = [c for c in variables if c != sensitive]
    q_s = matrix.q[v] if measure == "poac" else 0.0
    lo = _leave_one_out(working.fingerprint, working.missing, sensitive, tuple(aux), count, measure, q_s, frame)
    st.write(
        f"With **{plain(sensitive)}** sensitive: {100 * summary.loc[v, 'protected share']:.1f}% of individuals "
        f"have {protected_what}; median min {label} {summary.loc[v, f'median min {label}']:.3f}; "
        f"{100 * summary.loc[v, 'share NPP = 0']:.1f}% have no protective peer when everything else is known."
    )
    rows = np.vstack([lo.full[None, :], lo.without])
    row_labels = ["everything known"] + [f"all but {c}" for c in aux]
    st.plotly_chart(
        charts.privacy_heatmap(
            rows, row_labels, heatmap_columns(rows), threshold=threshold, palette=palette,
            value_label=label, individual_text=individual_text,
            title=f"{label} of {sensitive} when each auxiliary variable in turn is unknown",
        ),
        width="stretch",
        key="peers_leave_one_out",
    )
    st.dataframe(lo.gains(), hide_index=True, width="stretch")
    st.plotly_chart(charts.npp_histogram(matrix.npp[v], matrix.weights, sensitive), width="stretch",
                    key="peers_npp")

    # ------------------------------------------------------------ downloads
    d1, d2 = st.columns(2)
    with d1:  # built when clicked: the table has a row per individual
        download_csv("Per-individual table (CSV)", lambda: matrix.table(frame[variables]), "individual_privacy.csv",
                     key="peers_csv")
    with d2:
        download_json(
            "Parameters and results (JSON)",
            {
                "dataset": dataset.name,
                "variables": list(variables),
                "measure": label,
                "p": p,
                "q": dict(zip(variables, matrix.q)) if measure == "poac" else None,
                "include_empty_subset": include_empty,
                "rows_dropped_for_missing_values": dropped,
                "individuals": matrix.n_individuals,
                "summary": summary.to_dict(orient="records"),
            },
            "individual_privacy.json",
            key="peers_json",
        )

    # ------------------------------------------------------------ Fig. 4 generalization potential
    st.subheader("Generalization potential")
    numeric = [c for c in aux if pd.api.types.is_numeric_dtype(frame[c]) and frame[c].nunique() > 2]
    if not numeric:
        st.info(f"None of the auxiliary variables of {plain(sensitive)} is numeric with more than two values, "
                "so there is nothing to cut into equal-width categories.")
    else:
        g1, g2 = st.columns(2)
        variable = g1.selectbox("Numeric auxiliary variable to generalize", numeric, key=f"peers_gen_var:{choice}")
        max_categories = g2.slider("Most categories", 2, 40, 15, key="peers_max_categories")
        budget = int(np.clip(4e7 / (len(frame) * 2 ** max(len(aux) - 1, 0)), 20, 400))
        with _working(f"Minimum PPP of {sensitive} for up to {budget} partitions of {variable}",
                      budget * len(frame) * 2 ** max(len(aux) - 1, 0)):
            potential = _potential(working.fingerprint, working.missing, sensitive, tuple(aux), variable, count, max_categories,
                                   budget, include_empty, frame)
        table = potential.table(p)
        baseline = potential.baseline_at(p)
        st.plotly_chart(charts.generalization_figure(table, baseline, variable, p), width="stretch",
                        key="peers_potential")
        if not potential.complete:
            st.caption(f"Offsets were thinned evenly to {len(table)} partitions to keep this fast on "
                       f"{len(frame):,} individuals.")
        best = table[table["best for its categories"]].sort_values("protected share", ascending=False)
        st.write(
            f"Best: **{int(best.iloc[0]['categories'])} categories** of width {best.iloc[0]['width']:g} "
            f"(first category {plain(best.iloc[0]['first category'])}) protect "
            f"{100 * best.iloc[0]['protected share']:.1f}% of individuals, against "
            f"{100 * baseline:.1f}% without generalization."
        )
        pick = st.selectbox(
            "Partition to apply",
            list(best.index),
            format_func=lambda k: (f"{table.loc[k, 'categories']} categories, width {table.loc[k, 'width']:g}, "
                                   f"first {table.loc[k, 'first category']}: "
                                   f"{100 * table.loc[k, 'protected share']:.1f}% protected"),
            key=f"peers_pick:{choice}:{variable}",
        )
        st.button(
            f"Apply to the working dataset ({variable} becomes categories)",
            on_click=_apply_partition,
            args=(dataset, variable, potential.partitions[int(pick)]),
            key="peers_apply",
        )
        if APPLY_ERROR in st.session_state:  # set by the button's callback
            st.error(plain(st.session_state.pop(APPLY_ERROR)))
        download_csv("Partitions (CSV)", table, "generalization_potential.csv", key="peers_partitions_csv")

if choice == ACTIVE and any(a.page == "Individual privacy" for a in working_copy().steps):
    st.caption("The working copy has bands applied on this page (see the steps in the sidebar; undo is there too).")
