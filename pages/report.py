"""Risk report page: the working copy's steps and findings on one printable page, and the
release package (released table, report, recipe) in one download.

The report is kept per working-copy state and p (``dashboard.release_download.page_report``;
a change of k recomputes only what k decides). What the release is still good for (the release
view, with its classifier) is not shown here: it is added to the printable report, the JSON and
the package when one is downloaded (``full_report``), so the page answers k at once."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from anonlib.measures.models import MODEL_NAMES
from anonlib.measures.utility import MEASURE_NAMES
from anonlib.workflow.report import RiskReport
from anonlib.workflow.report_html import render_html
from dashboard import charts
from dashboard.glossary import term_help
from dashboard.release_download import full_report, package_button, page_report
from dashboard.state import working_copy
from dashboard.ui import download_csv, download_json, guarded, page_header, plain, result_verdict, row

SLOW_ROWS = 20_000  # above this many rows the report takes a second or more: show a status box
P_KEY = "privacy_p"  # the threshold p, shared with the Individual privacy page


def _notes(report: RiskReport, section: str) -> None:
    for note in report.notes:
        if note.section == section:
            st.info(plain(note.text))


def _keep_p() -> None:
    st.session_state[P_KEY] = st.session_state["report_p"]


page_header(
    "Risk report",
    "Is the working copy safe to release? Its steps, the records still failing the release target, "
    "the re-identification risk, the privacy models, whose sensitive values are exposed and a suggested "
    "generalization, on one page you can print or file, and the release package in one download.",
    "- **Release steps**: every step applied to the working copy, with the records failing the release "
    "target (sidebar) before and after it.\n"
    "- **Re-identification risk**: k, the anonymity vector (entry j = number of classes of j records), the "
    "records in small classes and the attacker models (prosecutor, marketer).\n"
    "- **Privacy models**: per sensitive attribute, each model's value and the records in classes failing it.\n"
    "- **Individual privacy**: per sensitive attribute, the share of records whose value stays protected, under "
    "the attacker model stated there (the Individual privacy page uses the same one).\n"
    "- **Information leakage**: how much learning one attribute tells an attacker about who a record is "
    "(1 = it identifies everyone).\n"
    "- **Suggested generalization**: the IAB search with default hierarchies for the target's k, with what it costs.\n"
    "- A section that cannot be computed says why; the others are still shown. The **release package** is one "
    "zip: the released table, this report as HTML, and the recipe that `python -m anonlib apply` re-applies.",
    "Caballero, Sen & Nygård (anonymity vectors); El Emam & Dankar 2008 (attacker models); Arca & Hewett 2021 "
    "(leakage, IAB); Kroes, Janssen, Groenwold & van Leeuwen 2021 (PPP)",
)

copy = working_copy()
dataset = copy.current
if "report_p" not in st.session_state:
    st.session_state["report_p"] = st.session_state.get(P_KEY, 0.0)
p = float(
    st.slider(
        "p (share of look-alikes that must have another value)",
        0.0,
        0.95,
        step=0.05,
        key="report_p",
        on_change=_keep_p,
        help=term_help("p-upward privacy"),
    )
)
st.caption(
    f"k and the privacy models come from the release target in the sidebar: {plain(copy.release_target.describe())}."
)

report = None
with guarded("building the risk report"):
    if dataset.n_rows > SLOW_ROWS:
        with st.status(
            "Building the report: risk, models, individual privacy, leakage, generalization...", expanded=False
        ) as status:
            report = page_report(copy, p)
            status.update(label="Report ready: every section computed or explained", state="complete")
    else:
        report = page_report(copy, p)

if report is not None:
    st.subheader("Summary")
    st.markdown("\n".join(f"- {plain(s)}" for s in report.sentences) or "No finding could be computed.")

    # ------------------------------------------------------------ release steps
    st.subheader("Release steps")
    steps = report.steps
    result_verdict(copy.check, "The working copy")
    if steps is not None and steps.rows:
        if steps.loaded_failing is not None:
            st.caption(f"The loaded file: {steps.loaded_failing:,} {steps.unit} failing the target.")
        st.dataframe(
            pd.DataFrame(
                {
                    "step": [r.number for r in steps.rows],
                    f"{steps.unit} failing before": [r.failing_before for r in steps.rows],
                    f"{steps.unit} failing after": [r.failing_after for r in steps.rows],
                    "records suppressed": [r.suppressed_records for r in steps.rows],
                    "page": [r.page for r in steps.rows],
                    "what it does": [r.description for r in steps.rows],
                    "what it cost": [" ".join(r.cost) for r in steps.rows],
                }
            ),
            hide_index=True,
            width="stretch",
            key="report_steps",
        )
    else:
        st.caption(
            "No step yet: the working copy is the loaded file. Steps come from the other pages "
            "(bands, generalizations, policies, aggregations) and the sidebar (suppression)."
        )

    # ------------------------------------------------------------ dataset
    d = report.dataset
    st.subheader("Dataset")
    st.markdown("**" + plain(d.name) + "**")
    m = st.columns(3)
    m[0].metric("records", f"{d.records:,}", help=term_help("record"))
    m[1].metric(
        "rows", f"{d.rows:,}", help="Rows of the table; with a record-count column a row stands for several records."
    )
    m[2].metric(
        "missing values",
        "left out" if d.missing == "drop" else "kept",
        help=f"{d.rows_dropped:,} rows with missing values left out of the analysis."
        if d.missing == "drop"
        else "Missing values are kept as a value of their own.",
    )
    with st.expander("Columns and roles"):
        st.dataframe(pd.DataFrame(d.columns, columns=["column", "role"]), hide_index=True, width="stretch")
    _notes(report, "Dataset")

    # ------------------------------------------------------------ risk
    st.subheader("Re-identification risk")
    risk = report.risk
    if risk is not None:
        st.markdown("**Quasi-identifiers:** " + plain(", ".join(risk.quasi_identifiers)))
        below = dict(risk.records_below)
        m = row()  # the metrics wrap at 1024 px instead of cutting their labels
        m.metric("k", f"{risk.k:,}", help=term_help("k"))
        m.metric("classes", f"{risk.classes:,}", help=term_help("class"))
        unit, base = risk.unit, risk.base if risk.base is not None else risk.records
        m.metric(f"unique {unit}", f"{risk.unique_records:,}", help=f"{100 * risk.unique_share:.2f}% of {unit}")
        m.metric(f"{unit} in classes < 5", f"{below[5]:,}", help=f"{100 * below[5] / max(base, 1):.2f}% of {unit}")
        if risk.linkage is not None and risk.linkage.history is not None:
            h = risk.linkage.history
            m.metric("people unique on their history", f"{h.unique:,}", help=f"{100 * h.unique_share:.2f}% of people")
        if risk.linkage is not None and risk.linkage.households is not None:
            g = risk.linkage.households
            m.metric(
                "households unique", f"{g.unique:,}", help=f"household risk: highest {g.max:.3f}, mean {g.mean:.3f}"
            )
        more = " ..." if risk.vector_length > len(risk.vector) else ""
        st.text(f"Anonymity vector: ({', '.join(str(v) for v in risk.vector)}{more})")
    _notes(report, "Re-identification risk")
    attacker = report.attacker
    if attacker is not None:
        above = dict(attacker.records_above)
        m = st.columns(2)
        m[0].metric("prosecutor: highest risk", f"{100 * attacker.prosecutor_highest:.1f}%", help="1 / k.")
        m[1].metric("prosecutor: average risk", f"{100 * attacker.prosecutor_average:.2f}%")
        m = st.columns(2)
        unit = attacker.unit  # people with a person column, each person once, as on the Dataset page
        m[0].metric(
            f"{unit} at risk > 20%", f"{above.get(0.2, 0):,}", help=f"{above.get(0.5, 0):,} {unit} are above 50%."
        )
        m[1].metric("marketer risk", f"{100 * attacker.marketer:.2f}%")
        st.caption("Journalist risk needs a population table: `python -m anonlib risk FILE --population POP`.")
        st.plotly_chart(
            charts.risk_distribution_figure(attacker.distribution, unit=unit),
            width="stretch",
            key="report_risk_distribution",
        )
    _notes(report, "Attacker models")

    # ------------------------------------------------------------ privacy models
    st.subheader("Privacy models")
    if report.models is not None:
        st.dataframe(
            pd.DataFrame(
                {
                    "sensitive attribute": [r.sensitive for r in report.models.rows],
                    "model": [MODEL_NAMES[r.model] for r in report.models.rows],
                    "value": [None if r.value is None else float(r.value) for r in report.models.rows],
                    "records in failing classes": [r.failing_records for r in report.models.rows],
                    "judged at": [
                        r.requirement + (" (release target)" if r.in_target else "") for r in report.models.rows
                    ],
                }
            ),
            hide_index=True,
            width="stretch",
            key="report_models",
            column_config={"value": st.column_config.NumberColumn(format="%.4g")},
        )
    _notes(report, "Privacy models")

    # ------------------------------------------------------------ individual privacy
    st.subheader("Individual privacy")
    if report.privacy is not None:
        st.info(plain("Attacker model: " + report.attacker_model))
        m = st.columns(min(len(report.privacy.rows), 4))
        for i, protected in enumerate(report.privacy.rows):
            m[i % len(m)].metric(
                f"records protected: {protected.sensitive}",
                f"{100 * protected.protected_share:.1f}%",
                help=f"median minimum PPP {protected.median_min_ppp:.3f}",
            )
    _notes(report, "Individual privacy")

    # ------------------------------------------------------------ leakage
    st.subheader("Information leakage")
    leakage_rows = pd.DataFrame([vars(r) for r in report.leakage.rows]) if report.leakage else None
    if leakage_rows is not None:
        st.plotly_chart(charts.leakage_figure(leakage_rows), width="stretch")
        st.dataframe(
            leakage_rows,
            hide_index=True,
            width="stretch",
            column_config={
                "loss": st.column_config.NumberColumn("loss (bits)", format="%.4f", help=term_help("dS / leakage")),
                "normalized": st.column_config.ProgressColumn(
                    "normalized", format="%.4f", min_value=0.0, max_value=1.0, help=term_help("normalized leakage")
                ),
            },
        )
    _notes(report, "Information leakage")

    # ------------------------------------------------------------ generalization
    st.subheader("Suggested generalization")
    g = report.generalization
    if g is not None:
        m = [*st.columns(2), *st.columns(2)]  # two rows: the labels stay whole at 1024 px
        m[0].metric(
            "information loss",
            f"{g.utility:.4f}",
            help=f"{MEASURE_NAMES[g.measure]}: 0 = every value kept, "
            "1 = every value replaced by *; a suppressed record counts as fully generalized.",
        )
        m[1].metric("records suppressed", f"{g.suppressed:,}")
        m[2].metric(
            "distinct combinations kept",
            f"{g.rows:,}",
            help=term_help("distinct combination") + f" Of {g.original_rows:,} before.",
        )
        m[3].metric(
            "distinct combinations in classes < k", f"{g.violations:,}", help=f"Before: {g.original_violations:,}."
        )
        st.caption(
            (
                "The generalization with the least information loss, proven optimal"
                if g.optimal
                else "The least information loss found in the time allowed (not proven optimal)"
            )
            + f"; {g.generated:,} generalizations counted by the search."
        )
        if g.cost:
            st.markdown("**What it costs:** " + plain(" ".join(g.cost)))
        st.dataframe(
            pd.DataFrame(g.levels, columns=["attribute", "level", "highest level", "hierarchy"]),
            hide_index=True,
            width="stretch",
        )
    _notes(report, "Suggested generalization")

    st.subheader("Parameters")
    st.dataframe(pd.DataFrame(report.parameters, columns=["parameter", "value"]), hide_index=True, width="stretch")
    st.caption(f"Created {report.created} with {report.version}.")

    # ------------------------------------------------------------ downloads
    # built on the click, with the release view (kept per state: computed once for the three)
    def full() -> RiskReport:
        return full_report(copy, p, report=report)

    st.subheader("Download")
    with row():  # the buttons wrap onto more lines in a narrow window instead of cutting their labels
        with guarded("preparing the release package"):
            package_button(copy, p, report)
        st.download_button(
            "Printable report (HTML)",
            lambda: render_html(full()).encode("utf-8"),
            file_name="risk_report.html",
            mime="text/html",
            key="dl-report-html",
            on_click="ignore",
        )
        download_json(
            "Parameters and results (JSON)", lambda: full().as_dict(), "risk_report.json", key="dl-report-json"
        )
        if leakage_rows is not None:
            download_csv("Leakage table (CSV)", leakage_rows, "risk_report_leakage.csv", key="dl-report-leakage")
