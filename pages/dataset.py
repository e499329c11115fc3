"""Dataset page: load data, say what each column is, see the re-identification risk,
the privacy models and the HIPAA identifiers of the working copy."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from anonlib.core.dataset import ROLE_VALUES, Dataset, Role, role_guesses
from anonlib.core.loading import DELIMITERS, load_table
from anonlib.core.samples import SAMPLES, load_sample
from anonlib.measures.avector import vector_text
from anonlib.measures.identifiers import flags_table, hipaa_identifiers
from anonlib.measures.models import MODEL_NAMES
from anonlib.measures.profile import column_profile, profile_table, risk_profile
from anonlib.measures.risk import ReidentificationRisk, reidentification
from anonlib.workflow import Reading
from anonlib.workflow.findings import ModelsSection, models_section
from dashboard import charts
from dashboard.glossary import term_help
from dashboard.health import health_offers, linkage_section, pseudonym_offer, role_reasons
from dashboard.power_views import power_section
from dashboard.state import (
    active_dataset,
    active_source,
    current_project,
    first_sample,
    loaded_dataset,
    set_active_dataset,
    target_check,
    unit_target,
    working_copy,
)
from dashboard.ui import download_csv, download_json, guarded, opened, page_header, plain, result_verdict, show_table

TYPES = ("integer", "number", "category")
SOURCES = ("Bundled sample", "Upload a file")
EDITOR = "role_editor"  # the role editor's starting dataset, its latest result and its widget version
DELIMITER_NAMES = {"detect": None, ", (comma)": ",", "; (semicolon)": ";", "TAB": "\t", "| (pipe)": "|"}
ENCODINGS = {"detect": None, "UTF-8": "utf-8", "UTF-8 with BOM": "utf-8-sig", "Latin-1": "latin-1"}
HEADERS = {"detect": None, "first row is the header": True, "no header row": False}
assert set(DELIMITER_NAMES.values()) - {None} == set(DELIMITERS)


# Cache keys carry the fingerprint (the table), the roles and the missing-value policy
# (which rows and columns are analysed); the dataset itself is passed unhashed.
@st.cache_data(show_spinner=False, max_entries=64)
def _risk(fingerprint: str, qis: tuple[str, ...], count: str | None, missing: str, person, _dataset: Dataset):
    return risk_profile(_dataset, qis)


@st.cache_data(show_spinner=False, max_entries=64)
def _attacker_risk(
    fingerprint: str, qis: tuple[str, ...], count: str | None, missing: str, person: str | None, _dataset: Dataset
) -> ReidentificationRisk:
    frame, _ = _dataset.analysis_frame(list(qis), person=person is not None)
    return reidentification(frame, list(qis), count=count, person=person)


@st.cache_data(show_spinner=False, max_entries=16)
def _role_guesses(fingerprint: str, _dataset: Dataset):
    return role_guesses(_dataset.frame, contents=True)  # as an upload's roles are guessed


@st.cache_data(show_spinner=False, max_entries=64)
def _models(
    fingerprint: str, roles: tuple, missing: str, requirements: tuple, _dataset: Dataset, _requirements: tuple
) -> ModelsSection:
    return models_section(_dataset, _requirements)


@st.cache_data(show_spinner=False, max_entries=16)
def _column_stats(fingerprint: str, _dataset: Dataset) -> pd.DataFrame:
    """Distinct values and missing share per column (they do not depend on roles)."""
    return profile_table(column_profile(_dataset))[["column", "distinct values", "missing", "missing share"]]


@st.cache_data(show_spinner=False, max_entries=16)
def _identifier_flags(fingerprint: str, _dataset: Dataset):
    return hipaa_identifiers(_dataset.frame)


def _load_sample() -> None:
    key = st.session_state["sample_key"]
    with guarded("loading the sample"):
        set_active_dataset(load_sample(key), f"sample:{key}")


def _apply_suggested_roles(flags) -> None:
    """Button callback: give every flagged column its suggested role."""
    dataset = loaded_dataset()
    with guarded("applying the suggested roles"):
        roles = {c: r for c, r in dataset.roles.items()}
        roles.update({f.column: f.suggested_role for f in flags})
        set_active_dataset(dataset.with_roles(roles), active_source())


def _apply_offered_roles(offered: dict[str, Role]) -> None:
    """Button callback: give the columns the roles their values suggest (the person, quasi-identifiers)."""
    dataset = loaded_dataset()
    with guarded("applying the offered roles"):
        set_active_dataset(dataset.with_roles({**dataset.roles, **offered}), active_source())


def _role_offers(dataset: Dataset) -> None:
    """The roles the values suggest (``role_guesses(contents=True)``, the file's structure read by
    ``anonlib.core.structure``): the person and household columns guessed (their reasons
    shown), or offered when the evidence is weaker or the roles came from elsewhere, and the quasi-identifier
    candidates not preselected, each with a button."""
    guesses = _role_guesses(dataset.fingerprint, dataset)
    person = dataset.person
    if person is not None and guesses.get(person) is not None and guesses[person].role is Role.PERSON:
        st.caption(plain(f"Person column guessed from its values: {guesses[person].reason}."))
    offered = {c: g for c, g in guesses.items() if g.offer is not None and dataset.roles.get(c) is not g.offer}
    # the person the values suggest, weakly (offered) or strongly (guessed, but the roles came from elsewhere:
    # a sample's, a project's, the user's)
    persons = [c for c, g in guesses.items() if Role.PERSON in (g.role, g.offer)] if person is None else []
    for column in persons[:1]:
        st.info(plain(f"{column} may be the person column: {guesses[column].reason}."))
        st.button(
            f"Use {column} as the person column",
            key="offer_person",
            on_click=_apply_offered_roles,
            args=({column: Role.PERSON},),
        )
    household = dataset.household
    if household is not None and guesses.get(household) is not None and guesses[household].role is Role.HOUSEHOLD:
        st.caption(plain(f"Household column guessed from its values: {guesses[household].reason}."))
    # the household its name suggests (offered) or its structure shows (guessed, the roles from elsewhere)
    households = [c for c, g in guesses.items() if Role.HOUSEHOLD in (g.role, g.offer)] if household is None else []
    for column in households[:1]:
        st.info(plain(f"{column} may say whose household a record is in: {guesses[column].reason}."))
        st.button(
            f"Use {column} as the household column",
            key="offer_household",
            on_click=_apply_offered_roles,
            args=({column: Role.HOUSEHOLD},),
        )
    candidates = [c for c, g in offered.items() if g.offer is Role.QUASI_IDENTIFIER]
    if candidates:
        st.info(
            plain(
                f"{len(candidates)} more column{'s' if len(candidates) != 1 else ''} may be known to an attacker "
                f"(few distinct values): {', '.join(candidates)}. They are not preselected as quasi-identifiers."
            )
        )
        st.button(
            f"Make {'them' if len(candidates) != 1 else 'it'} quasi-identifiers",
            key="offer_quasi_identifiers",
            on_click=_apply_offered_roles,
            args=(dict.fromkeys(candidates, Role.QUASI_IDENTIFIER),),
        )


def _roles_key(dataset: Dataset) -> tuple:
    return tuple((str(c), dataset.roles[c].value) for c in dataset.frame.columns if c in dataset.roles)


def _number(value: float | None, digits: int = 3) -> str:
    if value is None:
        return "–"
    if math.isinf(value):
        return "∞"
    return f"{value:.{digits}g}" if not float(value).is_integer() else f"{int(value):,}"


page_header(
    "Dataset",
    "Load a table, say which columns an attacker could know (quasi-identifiers) and which "
    "must stay secret (sensitive attributes), and see at once how many records could be singled out.",
    "- **Class** (equivalence class): the records that share the same values of all quasi-identifiers.\n"
    "- **k**: the size of the smallest class. A record in a class of size 1 is unique, so anyone "
    "who knows its quasi-identifier values can single it out.\n"
    "- **Anonymity vector** (Caballero et al.): entry j counts the classes of size j. "
    "Fewer small classes is better; comparing vectors entry by entry from the left ranks tables "
    "by anonymity even when k is the same.\n"
    "- **Prosecutor risk**: the attacker knows the person is in the file; a record in a class of f records "
    "is re-identified with probability 1/f. **Marketer risk**: the share of records an attacker matching "
    "everyone would re-identify on average. **Journalist risk** needs a population table "
    "(`python -m anonlib risk --population`).\n"
    "- **Privacy models**: per sensitive attribute, the value of each model on the working copy (its worst "
    "class) and the records in classes failing it, at the release target's value when the sidebar switches "
    "the model on, otherwise at a common default.",
    "Caballero, Sen & Nygård, anonymity vectors; Sweeney, k-anonymity; El Emam & Dankar 2008 (attacker models); "
    "Machanavajjhala et al. 2007, Li et al. 2007 (l-diversity, t-closeness); HIPAA Safe Harbor",
)

# ---------------------------------------------------------------- data source
if "source_kind" not in st.session_state:
    # Streamlit forgets a widget's value when another page runs: coming back, the choice
    # follows the loaded dataset (an uploaded file keeps "Upload a file" chosen).
    st.session_state["source_kind"] = SOURCES[1] if active_source().startswith("upload:") else SOURCES[0]
source_kind = st.radio("Data source", SOURCES, horizontal=True, key="source_kind")
if source_kind == SOURCES[0]:
    current = active_source()
    keys = list(SAMPLES)
    if "sample_key" not in st.session_state:
        st.session_state["sample_key"] = current.split(":", 1)[1] if current.startswith("sample:") else first_sample()
    st.selectbox("Sample", keys, format_func=lambda k: SAMPLES[k].title, key="sample_key", on_change=_load_sample)
    sample = SAMPLES[st.session_state["sample_key"]]
    st.caption(f"{sample.description} Source: {sample.source}.")
    if current != f"sample:{sample.key}":
        st.info(
            "The loaded dataset is " + plain(loaded_dataset().name) + " (uploaded, or another sample). "
            "It stays loaded until you choose a sample."
        )
        st.button("Use this sample instead", on_click=_load_sample)
else:
    upload = st.file_uploader(
        "CSV, TSV, text (optionally gzip-compressed), Excel or Parquet",
        type=["csv", "tsv", "txt", "data", "gz", "xlsx", "parquet"],
        key="upload",
    )
    keep = st.checkbox(
        "Keep a copy of the file in this project",
        value=True,
        key="keep_file",
        help="On: the project store keeps the file's bytes, so a reload, a restarted server or the Projects page "
        "opens the work as it was. Off: it keeps only the file's fingerprint (SHA-256) and asks for the file when "
        "the project is opened again. The Projects page says where the store is and deletes a project with its file.",
    )
    with st.expander("Reading options (detected automatically)"):
        col1, col2, col3 = st.columns(3)
        delimiter = DELIMITER_NAMES[col1.selectbox("Delimiter", list(DELIMITER_NAMES), key="read_delimiter")]
        encoding = ENCODINGS[col2.selectbox("Encoding", list(ENCODINGS), key="read_encoding")]
        header = HEADERS[col3.selectbox("Header row", list(HEADERS), key="read_header")]
    if upload is None and active_source().startswith("upload:"):
        # coming back from another page: the upload box is empty but the file is still loaded
        loaded = loaded_dataset()
        project = current_project()
        where = (
            f"saved in the project {plain(project.name)} (see the Projects page)"
            if project is not None
            else "kept in this session's memory only (not saved as a project)"
        )
        st.caption(
            f"Loaded: {plain(active_source().split(':', 1)[1])} ({loaded.n_records:,} records, "
            f"{loaded.frame.shape[1]} columns), {where}. Upload another file to start a new project."
        )
    if upload is not None:
        signature = (upload.file_id, delimiter, encoding, header)
        if st.session_state.get("upload_signature") != signature:
            with guarded("reading the file"):
                table = load_table(
                    upload.getvalue(), name=upload.name, delimiter=delimiter, encoding=encoding, header=header
                )
                set_active_dataset(
                    Dataset.from_frame(
                        upload.name,
                        table.frame,
                        notes=table.notes,
                        missing_texts=table.missing_texts,
                        guess_contents=True,
                    ),
                    f"upload:{upload.name}",
                    reading=Reading.of(table, upload.getvalue()),
                    data=upload.getvalue(),
                    keep_file=keep,
                )
                st.session_state["upload_signature"] = signature
                st.session_state["upload_message"] = (
                    f"Read {table.frame.shape[0]:,} rows and {table.frame.shape[1]} columns "
                    f"({table.format}, delimiter {repr(table.delimiter) if table.delimiter else '-'}, "
                    f"encoding {table.encoding or '-'}, header {'yes' if table.header else 'no'}, "
                    f"{table.missing_cells:,} missing cells)."
                )
                st.rerun()  # the sidebar (drawn before this page) then shows the new file's target controls
        if st.session_state.get("upload_signature") == signature and "upload_message" in st.session_state:
            st.success(st.session_state["upload_message"])

dataset = loaded_dataset()  # roles and types are set on the loaded file; the working copy follows
for note in dataset.notes:  # what the loader noticed (header guessed, markers read as missing, ...)
    st.info(plain(note))

risk_box = st.container()  # filled below, once the column roles are applied

# ---------------------------------------------------------------- HIPAA identifiers
with guarded("checking for HIPAA identifiers"):
    flags = _identifier_flags(dataset.fingerprint, dataset)
    if flags:
        # the person column is an identifier already (never analysed, released only as a pseudonym)
        differs = [f for f in flags if dataset.roles.get(f.column) not in (f.suggested_role, Role.PERSON)]
        st.subheader("Columns that look like HIPAA identifiers")
        st.caption(
            f"{len(flags)} {'column looks' if len(flags) == 1 else 'columns look'} like one of the 18 identifiers of "
            "HIPAA's Safe Harbor rule (by name or by value). Identifiers are never analysed nor released; dates "
            "and geography are generalized as quasi-identifiers."
        )
        st.dataframe(
            flags_table(flags).assign(**{"role now": [dataset.roles[f.column].value for f in flags]}),
            hide_index=True,
            width="stretch",
        )
        if differs:
            st.button(
                f"Give the {len(differs)} flagged column{'s' if len(differs) != 1 else ''} their suggested role",
                on_click=_apply_suggested_roles,
                args=(flags,),
                key="apply_suggested_roles",
            )
with guarded("offering pseudonyms"):  # where identifiers are listed: release one as a keyed pseudonym
    if dataset.identifiers or dataset.person:
        pseudonym_offer(working_copy())

# ---------------------------------------------------------------- roles
st.subheader("Columns: type, role and profile")
st.caption(
    "Identifier: dropped before any analysis (released only as a pseudonym). Quasi-identifier: could be known "
    "to an attacker. Sensitive: must not be learnt. Count: how many identical records a row stands for. "
    "Ignore: not used and not released. Person: says whose record it is (several records per person): k and "
    "suppression are then counted in people. Keep: released unchanged, never counted in classes."
)
with opened("How the roles were guessed (every role is yours to correct)", key="dataset_role_reasons") as shown:
    st.caption(
        "Guessed from each column's name (including the abbreviations of public health surveys: educ, marstat, "
        "married, dob, hhid, pid, mrn, commune, district, province...) or its values (dates, free text; a column "
        "whose values repeat across records that otherwise differ is the person; a year, a 0/1 flag or a few "
        "categories a quasi-identifier candidate)."
    )
    if shown:
        show_table(role_reasons(_role_guesses(dataset.fingerprint, dataset)))
with guarded("reading roles off the values"):
    _role_offers(dataset)
# The editor always gets the table it started from, and its own record of the edits:
# fed the edited roles back, it would be rebuilt after every edit and ignore the next
# double-click until clicked once. It starts afresh when the loaded dataset is replaced
# (another sample or file, or roles set by a button) and when the page is opened again.
# Coming back from another page, Streamlit has forgotten the editor's edits (its widget state):
# it then starts afresh from the dataset as it is, or the forgotten edits would be undone.
editor = st.session_state.get(EDITOR)
if editor is None or editor["result"] is not dataset or f"roles-{editor['version']}" not in st.session_state:
    version = editor["version"] + 1 if editor else 0
    editor = {"base": dataset, "result": dataset, "version": version}
    st.session_state[EDITOR] = editor
base: Dataset = editor["base"]
stats = _column_stats(base.fingerprint, base)
edited = st.data_editor(
    base.role_table().merge(stats, on="column", how="left"),
    key=f"roles-{editor['version']}",
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
    edited = edited[base.role_table().columns]
    if not edited.equals(dataset.role_table()):
        dataset = base.with_edits(edited).with_missing(dataset.missing)
        set_active_dataset(dataset, active_source())
        editor["result"] = dataset
        st.rerun()  # the sidebar drawn before this page follows the new roles (its privacy models, its status)

missing_choice = st.radio(
    "Missing values in the analysed columns",
    ["keep as their own category", "leave those records out"],
    index=0 if dataset.missing == "category" else 1,
    horizontal=True,
    key="missing_choice",
)
wanted = "category" if missing_choice.startswith("keep") else "drop"
if wanted != dataset.missing:
    dataset = dataset.with_missing(wanted)
    set_active_dataset(dataset, active_source())
    editor["result"] = dataset

with opened(f"Preview (first {min(200, dataset.n_rows)} of {dataset.n_rows:,} rows)", key="dataset_preview") as shown:
    if shown:
        st.dataframe(dataset.frame.head(200), hide_index=True, height=240)

# ---------------------------------------------------------------- dates and Safe Harbor on the working copy
with guarded("offering the health-data steps"):
    health_offers(working_copy())

# ---------------------------------------------------------------- risk of the working copy
dataset = active_dataset()  # the working copy: the loaded file with the steps applied so far
qis = dataset.quasi_identifiers
risk = None
with risk_box, guarded("computing the re-identification risk"):
    st.subheader("Re-identification risk of the working copy")
    risk = _risk(dataset.fingerprint, qis, dataset.count, dataset.missing, dataset.person, dataset)
    st.markdown("**Quasi-identifiers:** " + plain(", ".join(qis) or "none"))
    if risk.rows_dropped:
        st.caption(f"{risk.rows_dropped:,} rows with missing values are left out.")
    unit = risk.unit  # "people" with a person column: k and the counts below are distinct people
    if risk.person is not None:
        st.caption(
            plain(
                f"Counted in people: {risk.person} says whose record it is, so a class of five visits of one "
                "patient is a class of 1 person; each person is counted once, by the smallest class of their rows."
            )
        )
    m = st.columns(4)
    m[0].metric("records", f"{risk.records:,}", help=term_help("record"))
    m[1].metric("classes", f"{risk.classes:,}", help=term_help("class"))
    m[2].metric("k" + (" (people)" if risk.person is not None else ""), f"{risk.k:,}", help=term_help("k"))
    m[3].metric(f"unique {unit}", f"{risk.unique_records:,}", help=f"{100 * risk.unique_share:.2f}% of {unit}")
    below = dict(risk.records_below)
    m = st.columns(3 if risk.person is not None else 2)
    if risk.person is not None:
        m[-1].metric("people", f"{risk.persons:,}", help=plain(f"Distinct values of the person column {risk.person}."))
    m[0].metric(f"{unit} in classes < 5", f"{below.get(5, 0):,}", help=f"{100 * risk.share_below(5):.2f}% of {unit}")
    m[1].metric(f"{unit} in classes < 10", f"{below.get(10, 0):,}", help=f"{100 * risk.share_below(10):.2f}% of {unit}")
    result_verdict(target_check(), "The working copy")
    linkage_section(dataset, unit_target())  # a person's rows together, a household's members together
    power_section(dataset, unit_target().k, unit_target().max_suppressed)  # people at risk per attacker's power

    if qis:
        attack = _attacker_risk(dataset.fingerprint, qis, dataset.count, dataset.missing, dataset.person, dataset)
        st.markdown("**Attacker models** (El Emam & Dankar; as ARX reports them)")
        above = dict(attack.records_above)
        m = st.columns(2)
        m[0].metric(
            "prosecutor: highest risk",
            f"{100 * attack.prosecutor_highest:.1f}%",
            help="1 / k: the risk of a record in the smallest class, for an attacker who knows the person is in the file.",
        )
        m[1].metric(
            "prosecutor: average risk",
            f"{100 * attack.prosecutor_average:.2f}%",
            help="classes / records: the mean of 1 / class size over records.",
        )
        m = st.columns(2)
        m[0].metric(
            f"{unit} at risk > 20%",
            f"{above.get(0.2, 0):,}",
            help=f"{unit.capitalize()} whose prosecutor risk is above 0.2 (classes of fewer than 5 {unit}); "
            f"{above.get(0.5, 0):,} are above 0.5.",
        )
        m[1].metric(
            "marketer risk",
            f"{100 * attack.marketer:.2f}%",
            help="The expected share of records re-identified by an attacker matching every record "
            "(the file taken as the whole population).",
        )
        st.caption(
            "Journalist risk and k-map need a population table: `python -m anonlib risk FILE "
            "--population POP` computes them."
        )
        st.plotly_chart(
            charts.risk_distribution_figure(attack.distribution, unit=unit),
            width="stretch",
            key="dataset_risk_distribution",
        )

    left, right = st.columns([2, 1])
    left.plotly_chart(charts.anonymity_vector_figure(risk.vector), width="stretch")
    base = risk.persons if risk.person is not None else risk.records  # the unit the counts are in
    right.plotly_chart(charts.records_at_risk_figure(risk.records_below, base, unit=risk.unit), width="stretch")
    st.text(f"Anonymity vector: {vector_text(risk.vector)}")

with risk_box, guarded("computing the privacy models"):
    st.subheader("Privacy models per sensitive attribute")
    target = unit_target()
    if not dataset.sensitive:
        st.info("Mark a column as sensitive (below) to see l-diversity, t-closeness, δ-disclosure and β-likeness.")
    elif not qis:
        st.info("Mark at least one column as quasi-identifier to judge the privacy models.")
    else:
        section = _models(
            dataset.fingerprint,
            _roles_key(dataset),
            dataset.missing,
            tuple(r.describe() for r in target.requirements),
            dataset,
            target.requirements,
        )
        table = pd.DataFrame(
            {
                "sensitive attribute": [r.sensitive for r in section.rows],
                "model": [MODEL_NAMES[r.model] for r in section.rows],
                "value": [_number(r.value) for r in section.rows],
                "records in failing classes": [
                    "–" if r.failing_records is None else f"{r.failing_records:,}" for r in section.rows
                ],
                "judged at": [r.requirement + (" (release target)" if r.in_target else "") for r in section.rows],
            }
        )
        st.caption(
            f"{section.records:,} records. Value = the worst class (α, t, δ, β: the largest; l: the smallest; "
            "recursive (c,l): the c a class needs). A model the sidebar's release target switches on is judged "
            "at the target's value, the others at a common default."
        )
        st.dataframe(table, hide_index=True, width="stretch", key="dataset_models")

with risk_box:
    d1, d2 = st.columns(2)
    with d1:
        download_csv(
            "Column profile (CSV)",
            loaded_dataset().role_table().merge(stats, on="column", how="left"),
            "column_profile.csv",
        )
    if risk is not None:
        with d2:
            download_json(
                "Parameters and results (JSON)",
                {"dataset": dataset.name, "count_column": dataset.count, "missing": dataset.missing, **risk.as_dict()},
                "dataset_risk.json",
            )
