"""Risk report page: the active dataset's findings from every page on one printable page."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from anonlib.core.dataset import Dataset
from anonlib.report import RiskReport, build_report, render_html
from dashboard import charts
from dashboard.state import active_dataset
from dashboard.ui import download_csv, download_json, guarded, page_header, plain, row, show_table

SLOW_ROWS = 20_000  # above this many rows the report takes a second or more: show a status box


# The cache key carries the roles and the missing-value policy next to the fingerprint:
# the fingerprint names the table, roles and policy decide what is analysed.
@st.cache_data(show_spinner=False, max_entries=16)
def _report(fingerprint: str, missing: str, roles: tuple, k: int, p: float, _dataset: Dataset) -> RiskReport:
    return build_report(_dataset, k=k, p=p)


def _notes(report: RiskReport, section: str) -> None:
    for note in report.notes:
        if note.section == section:
            st.info(plain(note.text))


page_header(
    "Risk report",
    "Everything the other pages find about the active dataset, on one page you can print or file: "
    "how many people could be singled out, which attributes reveal the most, whose sensitive values "
    "are exposed, and a generalization that would make the table k-anonymous, with the parameters used.",
    "- **Re-identification risk**: k (the smallest group of records sharing their quasi-identifier values), "
    "the anonymity vector (entry j = number of groups of size j) and the records in small groups.\n"
    "- **Information leakage**: how much learning one attribute tells an attacker about who a record is "
    "(1 = it identifies everyone); the ten most revealing attributes.\n"
    "- **Individual privacy**: per sensitive attribute, the share of records whose value stays protected "
    "(more than a share p of look-alikes have another value) whatever combination of quasi-identifiers is known.\n"
    "- **Suggested generalization**: the IAB search with default hierarchies (age bands, ZIP digits masked, "
    "categories to *) that keeps the most distinct rows while every group has at least k records.\n"
    "- A section that cannot be computed (nothing marked sensitive, a problem too large) says why; the others "
    "are still shown. The HTML download is one self-contained page (no scripts, no links): print it or "
    "save it as PDF from the browser.",
    "Caballero, Sen & Nygård (anonymity vectors); Arca & Hewett 2021 (leakage, IAB); "
    "Kroes, Janssen, Groenwold & van Leeuwen 2021 (PPP)",
)

dataset = active_dataset()
c1, c2 = st.columns(2)
k = int(c1.number_input("k (smallest allowed group)", min_value=1, max_value=1000, value=5, step=1, key="report_k"))
p = float(c2.slider("p (share of look-alikes that must differ)", 0.0, 0.95, 0.0, 0.05, key="report_p"))

with guarded("building the risk report"):
    roles = tuple((str(c), dataset.roles[c].value) for c in dataset.frame.columns if c in dataset.roles)
    if dataset.n_rows > SLOW_ROWS:
        with st.status("Building the report...", expanded=False) as status:
            report = _report(dataset.fingerprint, dataset.missing, roles, k, p, dataset)
            status.update(label="Report ready", state="complete")
    else:
        report = _report(dataset.fingerprint, dataset.missing, roles, k, p, dataset)

    st.subheader("Summary")
    st.markdown("\n".join(f"- {plain(s)}" for s in report.sentences) or "No finding could be computed.")

    d = report.dataset
    st.subheader("Dataset")
    st.markdown("**" + plain(d.name) + "**")
    m = row()
    m.metric("rows", f"{d.rows:,}")
    m.metric("records", f"{d.records:,}")
    m.metric("rows dropped (missing values)", f"{d.rows_dropped:,}")
    m.metric("missing values", "dropped" if d.missing == "drop" else "own category")
    with st.expander("Columns and roles"):
        show_table(pd.DataFrame(d.columns, columns=["column", "role"]))
    _notes(report, "Dataset")

    st.subheader("Re-identification risk")
    risk = report.risk
    if risk is not None:
        st.markdown("**Quasi-identifiers:** " + plain(", ".join(risk.quasi_identifiers)))
        below = dict(risk.records_below)
        m = row()
        m.metric("k", f"{risk.k:,}")
        m.metric("equivalence classes", f"{risk.classes:,}")
        m.metric("unique records", f"{100 * risk.unique_share:.2f}%", help=f"{risk.unique_records:,} records")
        m.metric("records in classes < 5", f"{100 * below[5] / max(risk.records, 1):.2f}%")
        m.metric("records in classes < 10", f"{100 * below[10] / max(risk.records, 1):.2f}%")
        more = " ..." if risk.vector_length > len(risk.vector) else ""
        st.text(f"Anonymity vector: ({', '.join(str(v) for v in risk.vector)}{more})")
        chart, _ = st.columns([1, 1])
        chart.plotly_chart(charts.records_at_risk_figure(risk.records_below, risk.records).update_layout(height=300),
                           width="stretch")
    _notes(report, "Re-identification risk")

    st.subheader("Information leakage")
    leakage_rows = pd.DataFrame([vars(r) for r in report.leakage.rows]) if report.leakage else None
    if leakage_rows is not None:
        st.plotly_chart(charts.leakage_figure(leakage_rows), width="stretch")
        show_table(
            leakage_rows,
            column_config={
                "loss": st.column_config.NumberColumn("loss (bits)", format="%.4f"),
                "normalized": st.column_config.ProgressColumn("normalized", format="%.4f", min_value=0.0, max_value=1.0),
            },
        )
    _notes(report, "Information leakage")

    st.subheader("Individual privacy")
    privacy_rows = pd.DataFrame([vars(r) for r in report.privacy.rows]) if report.privacy else None
    if privacy_rows is not None:
        st.caption("Auxiliary information: every combination of " + plain(", ".join(report.privacy.auxiliary)) + ".")
        m = row()
        for line in report.privacy.rows:
            m.metric(f"protected: {line.sensitive}", f"{100 * line.protected_share:.1f}%",
                     help=f"median minimum PPP {line.median_min_ppp:.3f}")
        show_table(
            privacy_rows.rename(columns={"sensitive": "sensitive attribute", "protected_share": "records protected",
                                         "median_min_ppp": "median minimum PPP"}),
            column_config={"records protected": st.column_config.NumberColumn(format="percent")},
        )
    _notes(report, "Individual privacy")

    st.subheader("Suggested generalization")
    g = report.generalization
    if g is not None:
        m = row()
        m.metric("distinct rows kept", f"{g.rows:,}", help=f"of {g.original_rows:,}")
        m.metric("violating rows", f"{g.violations:,}", help=f"before: {g.original_violations:,}")
        m.metric("tables generated", f"{g.generated:,}")
        show_table(pd.DataFrame(g.levels, columns=["attribute", "level", "highest level", "hierarchy"]))
    _notes(report, "Suggested generalization")

    st.subheader("Parameters")
    parameters = pd.DataFrame(report.parameters, columns=["parameter", "value"])
    show_table(parameters)
    st.caption(f"Created {report.created} with {report.version}.")

    with row():
        st.download_button("Printable report (HTML)", render_html(report).encode("utf-8"),
                           file_name="risk_report.html", mime="text/html", key="dl-report-html")
        download_json("Parameters and results (JSON)", report.as_dict(), "risk_report.json", key="dl-report-json")
        if leakage_rows is not None:
            download_csv("Leakage table (CSV)", leakage_rows, "risk_report_leakage.csv", key="dl-report-leakage")
