"""Release page: what the released table is still good for, set against the loaded file.

Registered after "Risk report": the report answers "is it safe to release?"
(and is the longer computation: individual privacy, the optimal search); this
page answers "what did it cost, and what can a reader still do with it?" with
its own widgets (a column to inspect, a pair, a column to predict) and its own
bounded classifier run, so it stays quick to re-run while the choices change.
It is the last stop of the journey (upload, steps, risk, utility), and both
pages end with the same release package download (``dashboard.release_download``).

Thin: widgets, one call to ``anonlib.workflow.release_view.release_view``, rendering; the
private release beside it (a differentially private synthetic table of the loaded file,
compared the same way) is drawn by ``dashboard.private_views.private_section``.
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import streamlit as st

from anonlib.core.errors import AnonlibError
from anonlib.workflow import WorkingCopy
from anonlib.workflow.release_view import (
    ClassifierComparison,
    ReleaseView,
    classifier_seconds,
    default_pair,
    default_predict,
    release_classifier,
    release_view,
    restated,
    sensitive_columns,
    shown_columns,
)
from dashboard.charts import accuracy_figure, distribution_figure
from dashboard.memo import on_request
from dashboard.private_views import private_section
from dashboard.release_download import package_button, release_key
from dashboard.state import working_copy
from dashboard.ui import download_json, guarded, opened, page_header, plain, result_verdict, row, show_table

TIME_LIMIT = 20.0  # seconds for the classifier comparison (rows subsampled past it, and said)
SEED = 0


@st.cache_data(show_spinner=False, max_entries=16)
def _view(key: tuple, pair: tuple[str, str] | None, predict: str | None, _copy: WorkingCopy) -> ReleaseView:
    """The distributions and the contingency table, cached on the released table (``release_key``):
    changing k or a threshold restates the target's lines only (``restated``). The classifier is
    asked for apart (``_classifier``); with a single column there is none, and the view says why."""
    return release_view(
        _copy, pair=pair, predict=predict, seed=SEED, time_limit=TIME_LIMIT, classify=predict is None, strict=False
    )


def _classifier(copy: WorkingCopy, predict: str) -> ClassifierComparison | str:
    """The classifier comparison, or the sentence refusing it (a column to predict with one value):
    kept per released table and column to predict (``on_request``), never computed twice."""
    try:
        return release_classifier(copy, predict, seed=SEED, time_limit=TIME_LIMIT)
    except AnonlibError as err:
        return str(err)


def _stat(value) -> float | None:
    return None if value is None else float(value)


page_header(
    "Release",
    "What is the release still good for? The working copy's released table against the loaded file, in "
    "records: the release target, the steps and what each cost, every quasi-identifier's and sensitive "
    "attribute's distribution before and after, a contingency table, and how well a simple classifier "
    "still predicts a column.",
    "- **Records**: the loaded file's records, the records in the release, and the suppressed records "
    "(they are not in the release at all).\n"
    "- **Distributions**: records per value shown in the loaded file (grey) and in the release (blue), "
    "overlaid. Generalized labels (30-39), `*` (a locally suppressed cell) and (blank) are values like any "
    "other. For numbers: mean, standard deviation and quartiles before and after; a number column turned "
    "into intervals shows its intervals, the loaded file's records counted into them.\n"
    "- **Contingency table**: records per pair of values of two columns, before and after.\n"
    "- **Classifier**: a decision tree predicting the chosen column from the other released columns, "
    "trained and cross-validated (stratified 5-fold, seeded) on the release and on the loaded file, beside "
    "always guessing the most common value. It runs for at most about "
    f"{TIME_LIMIT:g} seconds: larger tables are subsampled, and the page says so. On a large table it "
    "waits for a button that says about how long it takes, and is kept for the released table once computed.",
    "ARX's utility perspective (Prasser et al.); scikit-learn (decision tree, stratified k-fold)",
)

copy = working_copy()
columns = list(shown_columns(copy))
sensitive = list(sensitive_columns(copy))
p = float(st.session_state.get("report_p", st.session_state.get("privacy_p", 0.0)))

if not columns:
    st.info("Mark at least one column as quasi-identifier or sensitive on the Dataset page to see the release.")
    st.stop()

choice = st.columns(3)
inspect = choice[0].selectbox(
    "Column to inspect", columns, key="release_column", help="Its distribution in the loaded file and in the release."
)
pair = predict = None
if len(columns) >= 2:
    first, second = default_pair(columns, sensitive)
    a = choice[1].selectbox("Contingency table: rows", columns, index=columns.index(first), key="release_pair_a")
    b = choice[1].selectbox("Contingency table: columns", columns, index=columns.index(second), key="release_pair_b")
    pair = (a, b)
    predict = choice[2].selectbox(
        "Column to predict",
        columns,
        index=columns.index(default_predict(columns, sensitive)),
        key="release_predict",
        help="The classifier predicts it from every other released column.",
    )

view = None
with guarded("measuring the release"):
    with st.spinner("Measuring the release..."):
        view = restated(_view(release_key(copy), pair, predict, copy), copy)

if view is not None:
    # ------------------------------------------------------------ records and target
    result_verdict(copy.check, "The release")
    for problem in view.problems:  # a refused pair or column to predict: said, the rest is still shown
        st.error(plain(problem))
    m = row()
    if copy.loaded.missing == "drop":  # the records left out for a missing value are not part of the release
        m.metric(
            "records assessed in the loaded file",
            f"{view.loaded_records:,}",
            help=f"{copy.left_out_records:,} records of the file miss a quasi-identifier or "
            "sensitive value and are left out (the Dataset page's choice).",
        )
    else:
        m.metric("records in the loaded file", f"{view.loaded_records:,}")
    m.metric("records in the release", f"{view.released_records:,}")
    m.metric(
        "records suppressed", f"{view.suppressed_records:,}", help="Suppressed records are not in the release at all."
    )
    m.metric("target met", "yes" if view.met else ("unknown" if view.met is None else "no"), help=plain(view.target))
    st.caption(f"Release target: {plain(view.target)}.")
    if copy.check is not None and copy.check.by_person:
        st.caption(
            f"Counted in people: {copy.check.persons:,} of {copy.check.loaded_persons:,} people released "
            f"({copy.check.records:,} records)."
        )

    # ------------------------------------------------------------ every column accounted for
    with guarded("listing the released columns"):
        account = copy.column_account()
        st.subheader("Columns released and left out")
        show_table(
            pd.DataFrame(
                [(c, r, "released") for c, r in account.released]
                + [(c, r, f"left out: {why}") for c, r, why in account.left_out],
                columns=["column", "role", "in the release"],
            )
        )

    st.subheader("Steps and what each cost")
    if view.steps:
        st.dataframe(
            pd.DataFrame(
                {
                    "step": [s.number for s in view.steps],
                    "what it does": [s.description for s in view.steps],
                    f"{view.steps[0].unit} failing before": [s.failing_before for s in view.steps],
                    f"{view.steps[0].unit} failing after": [s.failing_after for s in view.steps],
                    "records suppressed": [s.suppressed_records for s in view.steps],
                    "what it cost": [" ".join(s.cost) for s in view.steps],
                    "page": [s.page for s in view.steps],
                }
            ),
            hide_index=True,
            width="stretch",
            key="release_steps",
        )
    else:
        st.caption(
            "No step yet: the release is the loaded file as it is. Steps come from the other pages and the sidebar."
        )

    # ------------------------------------------------------------ distributions
    st.subheader("Distributions before and after")
    st.markdown("\n".join(f"- {plain(c.sentence())}" for c in view.columns))
    column = view.column(inspect)
    st.plotly_chart(distribution_figure(column), width="stretch", key="release_distribution")
    numbers = [c for c in view.columns if c.before is not None]
    if numbers:
        st.markdown("**Numbers: mean, standard deviation and quartiles**")
        rows = []
        for c in numbers:
            for table, s in (("loaded file", c.before), ("release", c.after)):
                rows.append(
                    {
                        "column": c.column,
                        "table": table,
                        "records with a number": None if s is None else s.records,
                        "mean": _stat(s and s.mean),
                        "sd": _stat(s and s.sd),
                        "minimum": _stat(s and s.minimum),
                        "q1": _stat(s and s.q1),
                        "median": _stat(s and s.median),
                        "q3": _stat(s and s.q3),
                        "maximum": _stat(s and s.maximum),
                    }
                )
        show_table(pd.DataFrame(rows), key="release_numbers")
        if any(c.after is None for c in numbers):
            st.caption(
                "A column whose numbers became text (intervals, *) has no numbers in the release: "
                "its categories are counted instead."
            )
    with opened(plain(f"Records per value of {inspect}"), key="release_counts_open") as shown:
        if shown:
            show_table(
                pd.DataFrame(
                    {
                        "value": [c.value for c in column.counts],
                        "records in the loaded file": [c.before for c in column.counts],
                        "records in the release": [c.after for c in column.counts],
                    }
                ),
                key="release_counts",
            )

    # ------------------------------------------------------------ contingency
    if view.pair is not None:
        a, b = view.pair.columns
        st.subheader(plain(f"{a} by {b}"))
        st.caption("Records per pair of values (rows: " + plain(a) + "; columns: " + plain(b) + ").")
        left, right = st.columns(2)
        with left:
            st.markdown("**Loaded file**")
            st.dataframe(view.pair.frame("before"), width="stretch", key="release_pair_before")
        with right:
            st.markdown("**Release**")
            st.dataframe(view.pair.frame("after"), width="stretch", key="release_pair_after")

    # ------------------------------------------------------------ classifier
    # kept per released table and column; at 10^5 records it waits for a button saying how long it takes
    complete = predict is None  # the view holds all it can (a single column: no classifier, a note)
    if predict is not None:
        st.subheader(plain(f"Predicting {predict}"))
        found = None
        with guarded("comparing the classifiers"):
            found = on_request(
                "release.classifier",
                (release_key(copy), predict),
                lambda: _classifier(copy, predict),
                seconds=classifier_seconds(copy, view.released_records, time_limit=TIME_LIMIT),
                what="the classifier comparison",
                button_key="release_classify",
            )
        if isinstance(found, str):
            st.error(plain(found))
            view = replace(view, problems=view.problems + (found,))
        elif found is not None:
            view = replace(view, classifier=found)
        complete = found is not None
    c = view.classifier
    if c is not None:
        m = row()
        m.metric(
            "trained on the release",
            f"{100 * c.released.mean:.1f}%",
            help=f"± {100 * c.released.sd:.1f}% over {len(c.released.folds)} folds; {c.released.records:,} records",
        )
        m.metric(
            "trained on the loaded file",
            f"{100 * c.original.mean:.1f}%",
            help=f"± {100 * c.original.sd:.1f}% over {len(c.original.folds)} folds; {c.original.records:,} records",
        )
        m.metric(
            "most common value",
            f"{100 * c.released.baseline:.1f}%",
            help=f"Always guessing the most common value: {100 * c.released.baseline:.1f}% on the release, "
            f"{100 * c.original.baseline:.1f}% on the loaded file.",
        )
        m.metric("seconds", f"{c.seconds:.1f}", help=f"The classifier runs for at most about {c.time_limit:g} s.")
        st.plotly_chart(accuracy_figure(c), width="stretch", key="release_accuracy")
        st.caption(plain(c.sentence()))
        if c.subsampled:
            st.info(plain(f"Rows were subsampled (seed {c.seed}) to stay within {c.time_limit:g} seconds."))
    for note in view.notes:
        st.info(plain(note))

    # ------------------------------------------------------------ downloads
    st.subheader("Download")
    with row():
        with guarded("preparing the release package"):
            # a view still waiting for its classifier is not the package's: its report measures its own
            package_button(copy, p, view=view if complete else None)
        download_json("Release view (JSON)", view.to_json(), "release_view.json", key="dl-release-view")
    st.caption(
        "The release package's report.html holds this view's numbers, as shown here, under \"What the "
        'release is still good for".'
    )

# ------------------------------------------------------------ the private release beside it
st.divider()
private_section(copy, view, inspect)
