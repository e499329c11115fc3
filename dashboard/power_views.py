"""Risk by the adversary's power on the pages: the Dataset page's table (people unique and below
k for m = 1, 2, 3, 5 and all, and, on request, what the least damaging release keeps under each
with the suggested power) and the small chart beside the sidebar's power.

The counts are ``anonlib.measures.power.risk_by_power`` (its counting kept per data and roles,
``sharing_by_power``; k applied on each call); the
releases ``anonlib.workflow.power_choice`` (the optimal search once per power: seconds on a
panel, so they start on a button and are kept).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from anonlib.core.dataset import Dataset
from anonlib.core.default_hierarchy import default_hierarchy
from anonlib.measures.power import PowerRisk, PowerSharing, sharing_by_power
from anonlib.workflow.power_choice import (
    SUGGESTION_RULE,
    PowerRelease,
    least_damaging_by_power,
    one_record_per_person,
    suggested_power,
)

from . import charts
from .memo import memo, with_bar
from .state import roles_key

SIDEBAR_SECONDS = 0.5  # a power estimated to take longer is not counted beside the sidebar's power


@st.cache_data(show_spinner=False, max_entries=16)
def _sharing(
    fingerprint: str, qis: tuple[str, ...], roles: str, missing: str, budget: float | None, _dataset: Dataset
) -> tuple[PowerSharing, ...]:
    frame, _ = _dataset.analysis_frame(list(qis), person=True)
    return sharing_by_power(frame, qis, _dataset.person, count=_dataset.count, max_seconds=budget)


@st.cache_data(show_spinner=False, max_entries=16)
def _one_record_each(fingerprint: str, qis: tuple[str, ...], roles: str, missing: str, _dataset: Dataset) -> bool:
    """Whether every person of the assessed records has one (the suggestion's first-delivery case)."""
    frame, _ = _dataset.analysis_frame(list(qis), person=True)
    return one_record_per_person(frame, _dataset.person, _dataset.count)


def by_power(dataset: Dataset, k: int, budget: float | None = None) -> tuple[PowerRisk, ...] | None:
    """The working copy's risk by power (None without a person column or quasi-identifiers): the
    counting kept per data and roles, k applied on each call (a change of k counts nothing again)."""
    qis = tuple(dataset.quasi_identifiers)
    if dataset.person is None or not qis:
        return None
    shared = _sharing(dataset.fingerprint, qis, roles_key(dataset), dataset.missing, budget, dataset)
    return tuple(s.risk(int(k)) for s in shared)


def power_table(risks: Sequence[PowerRisk], releases: Sequence[PowerRelease] | None, k: int) -> pd.DataFrame:
    """The Dataset page's table: per power, the people unique and below ``k`` (with their share), and,
    when found, the least damaging release's information loss and what it keeps.

    >>> t = power_table([PowerRisk(2, 5, 10, 3, 4), PowerRisk(None, 5, 10, None, None, "too long")], None, 5)
    >>> t.to_dict("records")[0]
    {'an attacker knows': 'any 2 records', 'people unique': '3 (30.0%)', 'people in histories shared by < 5': '4 (40.0%)'}
    >>> t["people unique"].tolist()[1]
    'not counted: too long'
    """
    rows = []
    found = {r.power: r for r in releases or ()}
    for r in risks:
        row = {
            "an attacker knows": "all records"
            if r.power is None
            else f"any {r.power} record{'' if r.power == 1 else 's'}",
            "people unique": _count(r.people_unique, r.people, r.refused),
            f"people in histories shared by < {k}": _count(r.people_below_k, r.people, r.refused),
        }
        if releases is not None:
            release = found.get(r.power)
            row["least damaging release: loss"] = (
                "-" if release is None or release.loss is None else f"{release.loss:.3f}"
            )
            row["it keeps"] = _keeps(release)
        rows.append(row)
    return pd.DataFrame(rows)


def _count(n: int | None, people: int, refused: str | None) -> str:
    if n is None:
        return f"not counted: {refused}"
    return f"{n:,} ({100 * n / people:.1f}%)" if people else f"{n:,}"


def _keeps(release: PowerRelease | None) -> str:
    if release is None:
        return "-"
    if release.refused is not None:
        return f"no release: {release.refused}"
    if release.loss is not None and release.loss >= 1.0:
        return "nothing: every quasi-identifier generalized away"
    levels = ", ".join(f"{a} level {v}" for a, v in (release.levels or {}).items())
    return f"{levels}; {release.suppressed_people:,} people suppressed"


def power_section(dataset: Dataset, k: int, max_suppressed: float) -> None:
    """The Dataset page's risk by power, and the least damaging release per power on request."""
    risks = by_power(dataset, k)
    if risks is None:
        return
    st.markdown("**Risk by the attacker's power** (how many of a person's records an attacker knows)")
    qis = tuple(dataset.quasi_identifiers)
    key = (dataset.fingerprint, qis, roles_key(dataset), dataset.missing, int(k), float(max_suppressed))
    releases = memo("power.releases", 8).get(key)
    pressed = "power_releases:pressed"  # set by the button's callback, kept until the searches are done
    if releases is None and not st.session_state.get(pressed):
        st.button(
            "Find the least damaging release at each power (the optimal search once per power)",
            key="power_releases",
            on_click=st.session_state.__setitem__,
            args=(pressed, True),
        )
    elif releases is None:
        st.session_state.pop(pressed, None)

        def find(report) -> tuple[PowerRelease, ...]:
            frame, _ = dataset.analysis_frame(list(qis), person=True)
            counts = frame[dataset.count].to_numpy() if dataset.count else None
            hierarchies = {a: default_hierarchy(frame[a], a, counts=counts)[1] for a in qis}
            return least_damaging_by_power(
                frame,
                qis,
                hierarchies,
                dataset.person,
                k=int(k),
                max_suppressed=float(max_suppressed),
                count=dataset.count,
                progress=lambda done, total: report(done / total, f"Searched {done} of {total} powers"),
            )

        releases = with_bar("power.releases", key, find, text="Searching the least damaging release per power")
    st.dataframe(power_table(risks, releases, k), hide_index=True, width="stretch")
    if releases is not None:
        one_each = _one_record_each(dataset.fingerprint, qis, roles_key(dataset), dataset.missing, dataset)
        chosen = suggested_power(releases, one_record_each=one_each)
        if chosen is None:
            st.warning(
                "No power's least damaging release meets the target with an information loss of at most 0.6: a "
                "records-per-person cap (anonymize --cap-records N) shortens the longest histories, which stand in "
                "the way."
            )
        else:
            st.info(
                f"Suggested power: an attacker who knows {'all' if chosen.power is None else f'any {chosen.power}'} "
                f"of a person's records (loss {chosen.loss:.3f}). Set it beside 'An attacker knows' in the sidebar."
            )
    st.caption(SUGGESTION_RULE + " Loss: Iyengar's loss metric on the default hierarchies (0 = nothing lost, 1 = all).")


def sidebar_power_chart(dataset: Dataset, k: int, chosen: int | None) -> None:
    """Beside the sidebar's power: people unique and below k per power (powers too costly to count
    at once are left out; the Dataset page counts them)."""
    risks = by_power(dataset, k, SIDEBAR_SECONDS)
    if risks is None:
        return
    fig = charts.power_figure(
        [r.label for r in risks],
        [r.people_unique for r in risks],
        [r.people_below_k for r in risks],
        risks[0].people if risks else 0,
        int(k),
        chosen="all" if chosen is None else str(chosen),
    )
    st.plotly_chart(fig, width="stretch", config={"displayModeBar": False}, key="sidebar_power_chart")
