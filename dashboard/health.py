"""The Dataset page's health-data offers: an identifier released as a pseudonym, dates
shifted per person, and HIPAA Safe Harbor beside the optimal release.

Each offer is widgets, one step built by ``anonlib.workflow.health_steps`` and the
button that applies it (``apply_step_callback``); the key comes from
``dashboard.state.project_key`` only, and leaves the session only as the key file the
user downloads (never in a package, a recipe or a report).
"""

from __future__ import annotations

from datetime import date

import pandas as pd
import streamlit as st

from anonlib.core.dataset import Dataset
from anonlib.core.errors import AnonlibError, ParameterError
from anonlib.measures.linkage import LinkageRisk, linkage_risk
from anonlib.measures.target import ReleaseTarget
from anonlib.transformations.pseudonyms import DEFAULT_SHIFT_DAYS, MAX_SHIFT_DAYS, date_columns
from anonlib.workflow import StepCost, WorkingCopy, step_cost
from anonlib.workflow.health_steps import PseudonymizeStep, SafeHarborStep, ShiftDatesStep
from anonlib.workflow.keys import key_id, key_text, parse_key
from anonlib.workflow.release import pseudonymized_columns
from anonlib.workflow.safe_harbor import SafeHarborComparison, compare_routes

from .memo import memo
from .state import apply_step_callback, project_key, project_key_origin, roles_key, set_project_key
from .ui import guarded, offer_step, plain, row, show_table

PAGE = "Dataset"
COMPARISON_SECONDS = 20.0  # the optimal search beside Safe Harbor stops there (and says so)


def _steps(copy: WorkingCopy) -> list:
    return [a.step for a in copy.steps]


def key_panel() -> None:
    """The project key: its id, that a pseudonym is stable only under the same key, the key
    file to download (the user's secret), and the key file of earlier deliveries to upload."""
    key = project_key()
    origin = {
        "project": " (this project's, kept in the project store with it)",
        "uploaded": " (from the key file you uploaded; this working copy is not saved as a project)",
        "session": " (made for this session; this working copy is not saved as a project)",
    }[project_key_origin()]
    st.caption(
        f"Project key id {key_id(key)}{origin}. A pseudonym and a date shift are the same in every delivery only "
        "under the same key: the project's next deliveries use it; keep the key file for releases made outside "
        "this project, and never put it in a release."
    )
    left, right = st.columns(2)
    with left:
        st.download_button(
            "Key file (keep it secret)",
            key_text(key).encode("ascii"),
            file_name=f"project-{key_id(key)}.key",
            mime="text/plain",
            key="health_key_download",
            help="64 hexadecimal characters: the secret behind the pseudonyms and date shifts. It is never part "
            "of the release package, the recipe or the report.",
        )
    with right:
        upload = st.file_uploader(
            "Use the key file of earlier deliveries", type=["key", "txt"], key="health_key_upload"
        )
        if upload is not None and st.session_state.get("health_key_upload_id") != upload.file_id:
            with guarded("reading the key file"):
                set_project_key(parse_key(upload.getvalue().decode("ascii", errors="replace"), "The uploaded file"))
                st.session_state["health_key_upload_id"] = upload.file_id
                st.rerun()


def pseudonym_offer(copy: WorkingCopy) -> None:
    """Where identifiers are listed: release one (or the person column) as keyed pseudonyms."""
    dataset = copy.current
    done = set(pseudonymized_columns(_steps(copy)))
    candidates = [c for c in (*dataset.identifiers, *([dataset.person] if dataset.person else [])) if c not in done]
    st.markdown("**Release an identifier as a pseudonym**")
    if not candidates:
        st.caption(
            "No identifier left to pseudonymize"
            + (f" ({', '.join(sorted(done))} already released as pseudonyms)." if done else ".")
            + " Identifiers are never released; a pseudonym lets a study link deliveries without the identifier."
        )
        key_panel()
        return
    column = st.selectbox(
        "Identifier to release as a pseudonym",
        candidates,
        key="health_pseudonym_column",
        help="HMAC-SHA-256 of each value under the project key, 16 hexadecimal characters; the identifier "
        "itself is never released.",
    )
    st.button(
        f"Release {column} as a pseudonym",
        on_click=apply_step_callback,
        args=(PseudonymizeStep.made(column, project_key()), PAGE),
        key="health_pseudonym_apply",
        help="Adds a step to the working copy (listed in the sidebar, with undo).",
    )
    key_panel()


def date_shift_offer(copy: WorkingCopy) -> None:
    """Dates moved by one keyed offset per person (needs the person column)."""
    dataset = copy.current
    shifted = {c for step in _steps(copy) if isinstance(step, ShiftDatesStep) for c in step.dates}
    dates = date_columns(dataset.frame, leave=[c for c in (dataset.person, dataset.count, *shifted) if c])
    if not dates:
        if shifted:
            st.caption(plain(f"Dates shifted per person: {', '.join(sorted(shifted))} (a step of the working copy)."))
        return
    st.markdown("**Shift dates per person**")
    if dataset.person is None:
        st.info(
            "Shifting dates needs a person column: give the column that says whose record it is (a medical record "
            "number, a pseudonym) the role person in the table above; every date of a person then moves by the "
            "same offset, so the intervals between them are kept."
        )
        return
    left, right = st.columns([2, 1])
    chosen = left.multiselect("Date columns to shift", list(dates), default=list(dates), key="health_shift_dates")
    days = int(
        right.number_input(
            "Largest shift (days, either way)", 1, MAX_SHIFT_DAYS, DEFAULT_SHIFT_DAYS, key="health_shift_days"
        )
    )
    st.caption(
        plain(
            f"Each person ({dataset.person}) gets one offset within ±{days} days from the keyed hash of their value "
            "(the same in every delivery under the same key); intervals within a person are kept exactly."
        )
    )
    if chosen:
        st.button(
            f"Shift {len(chosen)} date column{'s' if len(chosen) != 1 else ''}",
            on_click=apply_step_callback,
            args=(ShiftDatesStep.made(chosen, dataset.person, project_key(), days=days), PAGE),
            key="health_shift_apply",
        )


@st.cache_data(show_spinner="Comparing Safe Harbor with the optimal generalization...", max_entries=8)
def _comparison(
    fingerprint: str, roles: str, plan: str, k: int, limit: float, _dataset: Dataset, _step: SafeHarborStep
) -> SafeHarborComparison:
    return compare_routes(
        _dataset, _step, target=ReleaseTarget(k=k, max_suppressed=limit), time_limit=COMPARISON_SECONDS
    )


def _planned(dataset: Dataset, named: tuple[str, ...]) -> tuple[SafeHarborStep, StepCost]:
    """Safe Harbor's step on the working copy and what it changes there (counted once for the list
    and the offer), kept per table, roles, missing values, pseudonymized columns and year in a memo: neither depends
    on the release target, so a change of k reads them back (they scan every record)."""
    leave = tuple(c for c in (dataset.count, dataset.person) if c)
    key = (dataset.fingerprint, roles_key(dataset), dataset.missing, tuple(named), leave, date.today().year)

    def make() -> tuple[SafeHarborStep, StepCost]:
        step = SafeHarborStep.planned(dataset.frame, pseudonymized=named, leave=list(leave))
        return step, step_cost(step, dataset)

    return memo("health.safe_harbor", 8).compute(key, make)


def safe_harbor_offer(copy: WorkingCopy) -> None:
    """HIPAA Safe Harbor as a step: every change listed first, the HMAC caveat, the remaining
    risk beside the optimal release's (on request: it runs the optimal search), and the button."""
    dataset = copy.current
    named = pseudonymized_columns(_steps(copy))
    st.subheader("HIPAA Safe Harbor")
    try:
        step, cost = _planned(dataset, named)
    except ParameterError as err:
        st.caption(plain(str(err)))
        return
    st.markdown(
        "What Safe Harbor (45 CFR 164.514(b)(2)) would change, before anything is applied:\n"
        + "\n".join(f"- {plain(s)}" for s in step.sentences(cost))
    )
    st.caption(
        f"ZIP3 areas under 20,000 people ({step.census}): {', '.join(step.restricted_zip3) or 'no ZIP code column'}; "
        f"ages counted to {step.reference_year}."
    )
    if named:
        st.warning(
            plain(
                f"{', '.join(named)} is released as a keyed pseudonym: Safe Harbor allows a re-identification code "
                "only if it is not derived from the identifier, so it is Safe Harbor compliant only while the key "
                "stays with the data holder (never shared with the recipients)."
            )
        )
    target = copy.target
    if st.toggle(
        f"Compare with the optimal generalization meeting k = {target.k} (runs the search, up to "
        f"{COMPARISON_SECONDS:g} s)",
        key="health_safe_harbor_compare",
    ):
        with guarded("comparing Safe Harbor with the optimal release"):
            comparison = _comparison(
                dataset.fingerprint,
                roles_key(dataset),
                step.describe(),
                target.k,
                target.max_suppressed,
                dataset,
                step,
            )
            shown = comparison.table()
            show_table(
                shown.assign(
                    **{
                        "prosecutor: highest": [f"{100 * v:.1f}%" for v in shown["prosecutor: highest"]],
                        "prosecutor: average": [f"{100 * v:.2f}%" for v in shown["prosecutor: average"]],
                        "information lost (0-1)": [f"{v:.3f}" for v in shown["information lost (0-1)"]],
                    }
                )
            )
            for sentence in comparison.sentences():
                st.markdown(plain(sentence))
    with guarded("planning Safe Harbor"):
        offer_step(step, cost, PAGE, "Safe Harbor step", "health_safe_harbor_apply")


def health_offers(copy: WorkingCopy) -> None:
    """The three offers, each refusal a sentence."""
    try:
        date_shift_offer(copy)
    except AnonlibError as err:
        st.error(plain(str(err)))
    safe_harbor_offer(copy)


def role_reasons(guesses: dict) -> pd.DataFrame:
    """The guessed roles and why, as a table."""
    return pd.DataFrame(
        {
            "column": list(guesses),
            "guessed role": [g.role.value for g in guesses.values()],
            "guessed from": [g.reason for g in guesses.values()],
        }
    )


@st.cache_data(show_spinner=False, max_entries=32)
def _linkage(
    fingerprint: str, qis: tuple[str, ...], roles: tuple, missing: str, k: int, _dataset: Dataset
) -> LinkageRisk:
    return linkage_risk(_dataset, qis, k=k)


def linkage_section(dataset: Dataset, target: ReleaseTarget) -> None:
    """When records belong to people or households: who can be singled out by all of their rows
    at once (people unique on their history, households on their members together, the household
    risk), beside the per-row figures above, and whether the release links them (``target``: the
    release target in the unit of the working copy's release)."""
    qis = dataset.quasi_identifiers
    if not dataset.owners or not qis:
        return
    risk = _linkage(dataset.fingerprint, qis, roles_key(dataset), dataset.missing, target.k, dataset)
    st.markdown("**Linked records** (a person's rows together, a household's members together)")
    h, g = risk.history, risk.households
    if h is not None:
        below = dict(h.below)
        m = row()  # wraps at 1024 px instead of cutting the labels
        m.metric(
            "people unique on their history",
            f"{h.unique:,}",
            help=f"{100 * h.unique_share:.2f}% of {h.people:,} people are the only person with their sequence of "
            "rows (the multiset of their rows on the quasi-identifiers).",
        )
        m.metric(
            f"people in histories shared by < {target.k}",
            f"{below[target.k]:,}",
            help=f"People whose whole history fewer than {target.k} people (the target's k) share.",
        )
        m.metric("people", f"{h.people:,}", help=plain(f"Distinct values of the person column {dataset.person}."))
    if g is not None:
        m = row()
        m.metric(
            "households unique",
            f"{g.unique:,}",
            help=f"{100 * g.unique_share:.2f}% of {g.households:,} households are unique on their members' rows "
            f"together; {g.members_in_unique:,} of {g.records:,} records live in one.",
        )
        m.metric("household risk: highest", f"{g.max:.3f}", help=HOUSEHOLD_RISK_HELP)
        m.metric("household risk: mean", f"{g.mean:.3f}", help=HOUSEHOLD_RISK_HELP)
        m.metric(f"households above {g.threshold:g}", f"{g.above:,}", help=HOUSEHOLD_RISK_HELP)
    for sentence in risk.sentences(target.k):
        st.caption(plain(sentence))
    if target.linkable:
        st.caption(plain(f"The release links them, so the target counts {target.unit}: {target.describe()}."))
    else:
        st.caption(
            "The person column is not released, so records are not linked by it; stable quasi-identifiers may still "
            "link them: tick 'Treat each person's records as linkable' in the sidebar to protect whole histories."
        )


HOUSEHOLD_RISK_HELP = (
    "sdcMicro's household risk without weights: 1 - product over the household's member records of "
    "(1 - 1/f), f the records in the member's class on the quasi-identifiers."
)
