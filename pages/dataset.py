"""Dataset page: load data, say what each column is, see the re-identification risk."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from anonlib.avector import vector_text
from anonlib.core.dataset import ROLE_VALUES, Dataset
from anonlib.core.loading import DELIMITERS, load_table
from anonlib.profile import column_profile, profile_table, risk_profile
from anonlib.workflow import Reading
from anonlib.core.samples import SAMPLES, load_sample
from dashboard import charts
from dashboard.state import active_dataset, active_source, loaded_dataset, set_active_dataset
from dashboard.ui import download_csv, download_json, guarded, page_header, plain

TYPES = ("integer", "number", "category")
DELIMITER_NAMES = {"detect": None, ", (comma)": ",", "; (semicolon)": ";", "TAB": "\t", "| (pipe)": "|"}
ENCODINGS = {"detect": None, "UTF-8": "utf-8", "UTF-8 with BOM": "utf-8-sig", "Latin-1": "latin-1"}
HEADERS = {"detect": None, "first row is the header": True, "no header row": False}
assert set(DELIMITER_NAMES.values()) - {None} == set(DELIMITERS)


@st.cache_data(show_spinner=False, max_entries=64)
def _risk(fingerprint: str, qis: tuple[str, ...], count: str | None, missing: str, _dataset: Dataset):
    return risk_profile(_dataset, qis)


@st.cache_data(show_spinner=False, max_entries=16)
def _column_stats(fingerprint: str, _dataset: Dataset) -> pd.DataFrame:
    """Distinct values and missing share per column (they do not depend on roles)."""
    return profile_table(column_profile(_dataset))[["column", "distinct values", "missing", "missing share"]]


def _load_sample() -> None:
    key = st.session_state["sample_key"]
    with guarded("loading the sample"):
        set_active_dataset(load_sample(key), f"sample:{key}")


page_header(
    "Dataset",
    "Load a table, say which columns an attacker could know (quasi-identifiers) and which "
    "must stay secret (sensitive), and see at once how many people could be singled out.",
    "- **Equivalence class**: the records that share the same values of all quasi-identifiers.\n"
    "- **k**: the size of the smallest class. A record in a class of size 1 is unique, so anyone "
    "who knows its quasi-identifier values can single it out.\n"
    "- **Anonymity vector** (Caballero et al.): entry j counts the classes of size j. "
    "Fewer small classes is better; comparing vectors entry by entry from the left ranks tables "
    "by anonymity even when k is the same.\n"
    "- **Records at risk**: records in classes smaller than 2, 5 or 10.",
    "Caballero, Sen & Nygård, anonymity vectors; Sweeney, k-anonymity",
)

source_kind = st.radio("Data source", ["Bundled sample", "Upload a file"], horizontal=True, key="source_kind")
if source_kind == "Bundled sample":
    current = active_source()
    keys = list(SAMPLES)
    if "sample_key" not in st.session_state:
        st.session_state["sample_key"] = current.split(":", 1)[1] if current.startswith("sample:") else keys[0]
    st.selectbox(
        "Sample", keys, format_func=lambda k: SAMPLES[k].title, key="sample_key", on_change=_load_sample
    )
    sample = SAMPLES[st.session_state["sample_key"]]
    st.caption(f"{sample.description} Source: {sample.source}.")
    if current != f"sample:{sample.key}":
        st.info(
            "The active dataset is " + plain(active_dataset().name) + " (uploaded, or changed on another "
            "page). It stays active until you choose a sample."
        )
        st.button("Use this sample instead", on_click=_load_sample)
else:
    upload = st.file_uploader(
        "CSV, TSV, text (optionally gzip-compressed), Excel or Parquet",
        type=["csv", "tsv", "txt", "data", "gz", "xlsx", "parquet"],
        key="upload",
    )
    with st.expander("Reading options (detected automatically)"):
        col1, col2, col3 = st.columns(3)
        delimiter = DELIMITER_NAMES[col1.selectbox("Delimiter", list(DELIMITER_NAMES))]
        encoding = ENCODINGS[col2.selectbox("Encoding", list(ENCODINGS))]
        header = HEADERS[col3.selectbox("Header row", list(HEADERS))]
    if upload is not None:
        signature = (upload.file_id, delimiter, encoding, header)
        if st.session_state.get("upload_signature") != signature:
            with guarded("reading the file"):
                table = load_table(
                    upload.getvalue(), name=upload.name, delimiter=delimiter, encoding=encoding, header=header
                )
                set_active_dataset(
                    Dataset.from_frame(upload.name, table.frame, notes=table.notes), f"upload:{upload.name}",
                    reading=Reading.of(table),
                )
                st.session_state["upload_signature"] = signature
                st.success(
                    f"Read {table.frame.shape[0]:,} rows and {table.frame.shape[1]} columns "
                    f"({table.format}, delimiter {repr(table.delimiter) if table.delimiter else '-'}, "
                    f"encoding {table.encoding or '-'}, header {'yes' if table.header else 'no'}, "
                    f"{table.missing_cells:,} missing cells)."
                )

dataset = loaded_dataset()  # roles and types are set on the loaded file; the working copy follows
for note in dataset.notes:
    st.info(plain(note))

risk_box = st.container()  # filled below, once the column roles are applied

st.subheader("Columns: type, role and profile")
st.caption(
    "Identifier: dropped before any analysis. Quasi-identifier: could be known to an attacker. "
    "Sensitive: must not be learnt. Count: how many identical records a row stands for. Ignore: not used."
)
stats = _column_stats(dataset.fingerprint, dataset)
editor_key = f"roles-{dataset.fingerprint}-{active_source()}"
edited = st.data_editor(
    dataset.role_table().merge(stats, on="column", how="left"),
    key=editor_key,
    hide_index=True,
    disabled=["column", "distinct values", "missing", "missing share"],
    width="stretch",
    column_config={
        "column": st.column_config.TextColumn("column"),
        "type": st.column_config.SelectboxColumn("type", options=list(TYPES), required=True),
        "role": st.column_config.SelectboxColumn("role", options=list(ROLE_VALUES), required=True),
        "missing share": st.column_config.NumberColumn("missing share", format="percent"),
    },
)
with guarded("applying the column settings"):
    original = dataset.role_table()
    edited = edited[original.columns]
    if not edited.equals(original):
        dataset = dataset.with_edits(edited)
        set_active_dataset(dataset, active_source())

missing_choice = st.radio(
    "Missing values in the analysed columns",
    ["keep as their own category", "drop those rows"],
    index=0 if dataset.missing == "category" else 1,
    horizontal=True,
    key="missing_choice",
)
wanted = "category" if missing_choice.startswith("keep") else "drop"
if wanted != dataset.missing:
    dataset = dataset.with_missing(wanted)
    set_active_dataset(dataset, active_source())

with st.expander(f"Preview (first {min(200, dataset.n_rows)} of {dataset.n_rows:,} rows)"):
    st.dataframe(dataset.frame.head(200), hide_index=True, height=240)

with risk_box, guarded("computing the re-identification risk"):
    dataset = active_dataset()  # the working copy: the loaded file with the steps applied so far
    st.subheader("Re-identification risk")
    qis = dataset.quasi_identifiers
    risk = _risk(dataset.fingerprint, qis, dataset.count, dataset.missing, dataset)
    st.markdown("**Quasi-identifier:** " + plain(", ".join(qis)))
    if risk.rows_dropped:
        st.caption(f"{risk.rows_dropped:,} rows with missing values were dropped.")
    m = st.columns(6)
    m[0].metric("records", f"{risk.records:,}")
    m[1].metric("equivalence classes", f"{risk.classes:,}")
    m[2].metric("k", f"{risk.k:,}")
    m[3].metric("unique records", f"{100 * risk.unique_share:.2f}%", help=f"{risk.unique_records:,} records")
    m[4].metric("records in classes < 5", f"{100 * risk.share_below(5):.2f}%")
    m[5].metric("records in classes < 10", f"{100 * risk.share_below(10):.2f}%")
    left, right = st.columns([2, 1])
    left.plotly_chart(charts.anonymity_vector_figure(risk.vector), width="stretch")
    right.plotly_chart(charts.records_at_risk_figure(risk.records_below, risk.records), width="stretch")
    st.text(f"Anonymity vector: {vector_text(risk.vector)}")
    d1, d2 = st.columns(2)
    with d1:
        download_csv(
            "Column profile (CSV)", dataset.role_table().merge(stats, on="column", how="left"), "column_profile.csv"
        )
    with d2:
        download_json(
            "Parameters and results (JSON)",
            {"dataset": dataset.name, "count_column": dataset.count, "missing": dataset.missing, **risk.as_dict()},
            "dataset_risk.json",
        )
