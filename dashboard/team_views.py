"""What a team's Projects page draws (``team.md``, ``dashboard.team``): a project's members,
and the drafts waiting for the signed-in user's approval (the sign-in page and the sidebar's
signed-in line are ``dashboard.ui``'s). Every action goes through
``anonlib.projects.team``, which checks the role and logs a refusal.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from anonlib.projects.audit import DASHBOARD
from anonlib.projects.drafts import approve, drafts, hand_out, reject, waiting_for, withdraw
from anonlib.projects.team import (
    ACTIONS,
    ROLES,
    member_history,
    member_labels,
    members_of,
    refusals,
    remove_member,
    role_of,
    set_member,
)

from .team import may_approve_now, member
from .ui import plain


def _guard(action) -> None:
    from anonlib.core.errors import AnonlibError

    try:
        action()
    except AnonlibError as err:
        st.session_state["team_message"] = ("error", str(err))


def _add(store, project_id: int) -> None:
    login, chosen = st.session_state.get("team_add_login", ""), st.session_state.get("team_add_role", "viewer")

    def run() -> None:
        set_member(store, project_id, login, chosen, by=member())
        st.session_state["team_message"] = ("success", f"{login.strip()} is now {chosen} of this project.")

    _guard(run)


def _remove(store, project_id: int, login: str) -> None:
    _guard(lambda: remove_member(store, project_id, login, by=member()))


def members_section(store, project_id: int, role: str | None) -> None:
    """The open project's members; its owner adds members, changes roles and takes members out."""
    st.subheader("Members")
    listed = members_of(store, project_id)
    labels = member_labels(store, project_id)  # a subject shown with the e-mail it signed in with, as elsewhere
    shown = [(labels.get(login, login), role) for login, role in listed]
    st.dataframe(pd.DataFrame(shown, columns=["member", "role"]), hide_index=True, key="team_members")
    changes = member_history(store, project_id)
    if changes:
        with st.expander(f"Member and role changes ({len(changes)})"):
            st.dataframe(pd.DataFrame([c.to_json() for c in changes]), hide_index=True, key="team_member_changes")
    if role != "owner":
        st.caption("Only the project's owner adds members or changes their roles.")
        return
    name = store.summary(project_id).name
    refused = [r for r in refusals(store) if r.project == name]  # the owner sees refused attempts on the project
    if refused:
        with st.expander(f"Refused attempts on this project ({len(refused)})"):
            st.dataframe(
                pd.DataFrame(
                    {
                        "time (UTC)": [r.time[:19].replace("T", " ") for r in refused],
                        "who": [r.who for r in refused],
                        "what": [r.action for r in refused],
                        "sentence": [r.sentence for r in refused],
                    }
                ),
                hide_index=True,
                key="team_refusals",
            )
    left, middle, right = st.columns([3, 2, 1], vertical_alignment="bottom")
    left.text_input(
        "Member (their e-mail or subject at the sign-in provider, or group:NAME for a group of it)",
        key="team_add_login",
    )
    middle.selectbox("Role", ROLES, index=ROLES.index("viewer"), key="team_add_role")
    right.button("Add", key="team_add", on_click=_add, args=(store, project_id))
    others = [login for login, _ in listed if login not in member().names]
    if others:
        left, right = st.columns([5, 1], vertical_alignment="bottom")
        gone = left.selectbox(
            "Take a member out", others, format_func=lambda login: labels.get(login, login), key="team_remove_login"
        )
        right.button("Remove", key="team_remove", on_click=_remove, args=(store, project_id, gone))


def _decide(store, draft, approved: bool) -> None:
    def run() -> None:
        if approved and not may_approve_now():
            st.session_state["team_message"] = (
                "error",
                "Sign in again first: approving needs a sign-in within minutes.",
            )
            return
        if approved:
            done = approve(
                store, draft.project_id, draft.id, member(), comment=st.session_state.get(f"team_note_{draft.id}")
            )
        else:
            done = reject(
                store, draft.project_id, draft.id, member(), reason=st.session_state.get(f"team_note_{draft.id}") or ""
            )
        st.session_state["team_message"] = ("success", done.sentence())

    _guard(run)


def _withdrawn(store, draft) -> None:
    done = withdraw(store, draft.project_id, draft.id, member(), reason=st.session_state.get(f"team_note_{draft.id}"))
    st.session_state["team_message"] = ("success", done.sentence())


def _hand_out(store, draft, who):
    """The approved draft's package, handed out at the click (recorded in the audit log the first time)."""
    return lambda: hand_out(store, draft.project_id, draft.id, who, made_by=DASHBOARD)


def approvals_section(store) -> None:
    """The drafts of the signed-in user's projects waiting for approval, each with Approve and
    Reject for an approver or owner (their own draft's approval is refused: four eyes), and every
    draft's state, with the package of an approved one for the roles that hand it out."""
    who = member()
    st.subheader("Releases waiting for approval")
    said = st.session_state.pop("team_message", None)
    if said:
        (st.success if said[0] == "success" else st.error)(plain(said[1]))
    mine = drafts(store, who)
    roles = {d.project_id: role_of(store, d.project_id, who) for d in mine}
    pending = [d for d in mine if d.state == "draft"]
    if not pending:
        st.caption("No draft waits for approval. A release drafted in one of your projects shows here.")
    waiting = {d.id for d in waiting_for(store, who)}
    for d in pending:
        with st.container(border=True, key=f"team_draft_{d.id}"):
            st.markdown(plain(d.sentence()) + (" **Waiting for you.**" if d.id in waiting else ""))
            st.caption(
                plain(
                    f"{d.source_name}: {d.target}; target {'met' if d.met else 'NOT met'}; {d.released:,} records "
                    f"released, {d.suppressed:,} suppressed. Drafted {d.time[:19].replace('T', ' ')} UTC."
                )
            )
            if roles[d.project_id] not in ACTIONS["approve"]:
                st.caption(plain(f"Your role in project {d.project} is {roles[d.project_id]}: an approver decides."))
                continue
            if not d.met:  # the warning beside the button: approving it needs a comment saying why
                st.warning(plain(f"This draft does not meet its target ({d.target}): approving it needs a comment."))
            st.text_input("Comment (approving) or reason (rejecting)", key=f"team_note_{d.id}")
            left, right = st.columns(2)
            if d.id in waiting and not may_approve_now():  # re-authentication within minutes before approving
                left.button("Sign in again to approve", key=f"team_reauth_{d.id}", on_click=st.logout)
            else:
                left.button(
                    "Approve", key=f"team_approve_{d.id}", type="primary", on_click=_decide, args=(store, d, True)
                )
            right.button("Reject", key=f"team_reject_{d.id}", on_click=_decide, args=(store, d, False))
    if mine:
        st.dataframe(
            pd.DataFrame(
                {
                    "release": [d.id for d in mine],
                    "project": [d.project for d in mine],
                    "state": [d.state for d in mine],
                    "drafted by": [d.drafted_by for d in mine],
                    "approved or rejected by": [d.decided_by or "" for d in mine],
                    "package SHA-256": [d.package_sha256[:16] for d in mine],
                    "reason": [d.reason or "" for d in mine],
                }
            ),
            hide_index=True,
            key="team_drafts",
        )
    for d in mine:  # an approval withdrawn before its hand-out: by its approver or an owner (shown only to them)
        if d.state == "approved" and (d.decided_by in (who.label, *who.names) or roles[d.project_id] == "owner"):
            st.button(
                f"Withdraw the approval of release {d.id} of {d.project}",
                key=f"team_withdraw_{d.id}",
                on_click=_guard,
                args=(lambda d=d: _withdrawn(store, d),),
            )
    for d in mine:
        if d.state in ("approved", "released") and roles[d.project_id] in ACTIONS["release"]:
            st.download_button(
                f"Package of release {d.id} of {d.project} (zip)",
                _hand_out(store, d, who),
                file_name=f"release-{d.id}.zip",
                mime="application/zip",
                key=f"team_hand_out_{d.id}",
                on_click="ignore",
            )


__all__ = ["approvals_section", "members_section"]
