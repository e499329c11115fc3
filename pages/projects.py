"""Projects page: what is kept on this computer, the projects (open, rename, duplicate,
delete), continuing from a recipe or a release package, releasing a new delivery of the
open project, and the audit log of every release with "verify again".

Thin: widgets, one call into ``anonlib.projects`` (through ``dashboard.state`` for what
changes the session's working copy), rendering.
"""

from __future__ import annotations

import logging

import pandas as pd
import streamlit as st

from anonlib.core.errors import AnonlibError
from anonlib.projects import audit_entries, budget_of, continue_from_release, deliver, verify_chain, verify_entry
from anonlib.projects.audit import DASHBOARD
from anonlib.projects.drafts import draft_release
from anonlib.projects.team import (
    ACTIONS,
    add_owner,
    delete_project,
    duplicate_project,
    require,
    role_of,
    team_entries,
    visible,
)
from anonlib.workflow.keys import parse_key
from anonlib.workflow.release_view import release_view
from dashboard.state import (
    current_project,
    forget_project,
    open_copy,
    open_project,
    project_store,
    rename_current,
    role,
    store_problem,
)
from dashboard.team import member, team_mode
from dashboard.team_views import approvals_section, members_section
from dashboard.ui import guarded, page_header, plain, result_verdict, show_table

log = logging.getLogger("dashboard")
DELIVERY = "project_delivery"  # the delivery being released: (project id, file id, Delivery)


def _open(project_id: int) -> None:
    with guarded("opening the project"):
        open_project(project_id)
        st.session_state["projects_message"] = "Opened. Every page now works on this project's working copy."


def _open_with_file(project_id: int) -> None:
    """Open a project keeping only its file's SHA-256, with the file given (a callback: it runs
    before the page, so the sidebar's target widgets can follow the project)."""
    file = st.session_state.get("projects_file")
    with guarded("opening the project"):
        open_project(project_id, data=file.getvalue())
        st.session_state["projects_message"] = "Opened with the file you gave."


def _continue() -> None:
    """Open a recipe or a release package on its file as a new project (a callback)."""
    release, source = st.session_state.get("projects_release"), st.session_state.get("projects_release_source")
    with guarded("opening the release"):
        key_file = st.session_state.get("projects_release_key")
        key = parse_key(key_file.getvalue().decode("ascii", errors="replace"), "The key file") if key_file else None
        copy = continue_from_release(release.getvalue(), source.getvalue(), source.name, key=key)
        ref = open_copy(copy, f"upload:{source.name}", source.getvalue(), source.name, key=key)
        if team_mode():
            add_owner(project_store(), ref, member())
        st.session_state["projects_message"] = f"Opened {ref.name}: {len(copy.steps)} step(s) re-applied."


def _allowed(store, project_id: int, action: str) -> None:
    """In a team: the signed-in user's role allows ``action`` (a sentence, logged, when it does not)."""
    if team_mode():
        require(store, project_id, member(), action)


def _forget_file(store, project_id: int) -> None:
    with guarded("erasing the kept file"):
        _allowed(store, project_id, "change")
        store.set_keep_file(project_id, False)
        st.session_state["projects_message"] = "The file was erased from the project; its SHA-256 stays."


def _rename(store, project_id: int, name: str) -> None:
    with guarded("renaming the project"):
        _allowed(store, project_id, "change")
        rename_current(store.rename(project_id, name))


def _duplicate(store, project_id: int) -> None:
    with guarded("duplicating the project"):
        copy = duplicate_project(store, project_id, member()) if team_mode() else store.duplicate(project_id)
        st.session_state["projects_message"] = f"Duplicated as {copy.name}" + (
            " (with a new pseudonym key)." if team_mode() else "."
        )


def _delete(store, project_id: int, name: str) -> None:
    with guarded("deleting the project"):
        if team_mode():
            delete_project(store, project_id, member())
        else:
            store.delete(project_id)
        current = current_project()
        if current is not None and current.id == project_id:
            forget_project()
        st.session_state["projects_message"] = f"Deleted {name}, its file and its packages."


def _verify(store, entry_id: int) -> None:
    with guarded("verifying the release again"):
        st.session_state["audit_result"] = (entry_id, verify_entry(store, entry_id))


def _delivery_package(delivery, store):
    """The delivery's package, built and recorded in the audit log when the button is clicked."""

    def build() -> bytes:
        data = delivery.package()
        try:
            data = delivery.record_stamped(store, data)  # the package handed out states its audit entry
        except AnonlibError:  # the download still happens; the sidebar says when the store cannot be used
            log.exception("the delivery's release package could not be recorded in the audit log")
        return data

    return build


def _draft_delivery(delivery, store) -> None:
    """A team's delivery: its package kept as a draft for a second person's approval (a callback)."""
    with guarded("drafting the delivery's release"):
        draft = draft_release(
            store, delivery.project.id, delivery.package(), member=member(), source=delivery.data, made_by=DASHBOARD
        )
        st.session_state["projects_message"] = draft.sentence()


def _privacy_budget(store, project_id: int) -> str:
    """ε spent from the project's file (by every project over it) / the file's total ("default": never set)."""
    try:
        held = budget_of(store, project_id)
    except AnonlibError:  # a project keeping no SHA-256 of its file: no budget to show
        return ""
    return f"{held.epsilon_spent:g} / {held.epsilon_total:g}{' (default)' if held.default else ''}"


def _date(stamp: str) -> str:
    return stamp[:19].replace("T", " ")


page_header(
    "Projects",
    "Your work on a file, kept: roles, release target, steps and releases are saved with every change, so a "
    "reload, a second tab or a restarted server opens the project as it was. Release next month's file the same "
    "way, and see every release ever made in the audit log.",
    "- **Project**: one file (or sample) with its columns' types and roles, the release target, the steps "
    "(with undo) and its releases. Uploading a file starts a new project; every change is saved before the page "
    "finishes.\n"
    "- **Kept file**: the file's bytes are kept in the project unless you chose otherwise when uploading; "
    "without them the project keeps only the file's SHA-256 and asks for the file when opened.\n"
    "- **Delivery**: next month's file of the same layout, released with the project's steps (suppression "
    "planned again on the new records) and checked against the target.\n"
    "- **Audit log**: every release package made (here or with `python -m anonlib ... --project`), with the "
    "SHA-256 of the source, of the released table and of the package, whether the target was met (recounted on "
    "the released table), and who made it. Entries cannot be changed or deleted; deleting a project keeps them.",
    "ARX's projects; sdcApp's exported problem instances",
)

if "projects_message" in st.session_state:
    st.success(st.session_state.pop("projects_message"))

store = project_store()
if store is None:
    st.error(plain(f"The project store cannot be used: {store_problem()} The other pages keep working, unsaved."))
    st.stop()

# ---------------------------------------------------------------- what is kept
with guarded("reading the project store"):
    usage = store.usage()
    st.subheader("What is kept on this computer" if not team_mode() else "Your team's project store")
if team_mode():  # the store's totals are every project's: a member is told only of their own
    st.info(
        "The project store is shared by your team. You see the projects you are a member of, in the role you have "
        "in each; a release is handed out only after a second person approves it."
    )
else:
    st.info(plain(usage.sentence()))
    st.caption(
        "Nothing leaves this computer. To erase a project with its file and packages, delete it below (its audit "
        "entries stay, as the record of what was released). To erase everything, delete the store: "
        + (
            f"the file {plain(usage.where)} and its -wal and -shm files"
            if usage.backend == "sqlite"
            else "the database"
        )
        + ". ANONLIB_HOME (a folder) or ANONLIB_STORE (a PostgreSQL URL) put the store elsewhere."
    )

# ---------------------------------------------------------------- the open project
current = current_project()
st.subheader("Open project")
if current is None:
    st.caption(
        "The working copy is not saved as a project yet: your first change (a role, the target, a step) saves it."
    )
else:
    with guarded("reading the open project"):
        summary = store.summary(current.id)
        st.markdown(f"**{plain(summary.name)}**: {plain(summary.source_name)}, {summary.records:,} records.")
        st.caption(
            plain(
                f"Last change {_date(summary.updated)} UTC: {summary.change}. "
                + (
                    f"The file is kept ({summary.file_bytes:,} bytes)."
                    if summary.file_bytes
                    else "The file is a bundled sample."
                    if summary.origin.startswith("sample:")
                    else "Only the file's SHA-256 is kept."
                )
            )
        )
        may_change = not team_mode() or role() in ACTIONS["change"]  # controls shown only to roles that may use them
        if summary.file_bytes and may_change:
            st.button(
                "Erase the kept file (keep only its SHA-256)",
                key="projects_forget_file",
                on_click=_forget_file,
                args=(store, summary.id),
                help="The project then asks for the file when it is opened again, and refuses another one.",
            )
        if team_mode():
            members_section(store, summary.id, role())
        if may_change:
            left, right = st.columns([3, 1], vertical_alignment="bottom")
            new_name = left.text_input("Rename the project", value=summary.name, key=f"rename-{summary.id}")
            right.button(
                "Rename",
                key="rename_project",
                disabled=new_name.strip() == summary.name,
                on_click=_rename,
                args=(store, summary.id, new_name),
            )

if team_mode():
    with guarded("reading the drafts"):
        approvals_section(store)

# ---------------------------------------------------------------- every project
st.subheader("Projects")
with guarded("listing the projects"):
    projects = store.summaries() if not team_mode() else visible(store, member())
    if not projects:
        st.caption("No project yet.")
    else:
        show_table(
            pd.DataFrame(
                {
                    "project": [p.name for p in projects],
                    "file": [p.source_name for p in projects],
                    "records": [p.records for p in projects],
                    "last change": [f"{_date(p.updated)} UTC: {p.change}" for p in projects],
                    "releases": [p.releases for p in projects],
                    "privacy budget of its file (ε spent / total)": [_privacy_budget(store, p.id) for p in projects],
                    "file kept": [
                        "sample" if p.origin.startswith("sample:") else ("yes" if p.keep_file else "SHA-256 only")
                        for p in projects
                    ],
                    "open here": ["yes" if current is not None and p.id == current.id else "" for p in projects],
                }
            ),
            key="projects_table",
        )
        by_id = {p.id: p for p in projects}
        chosen = st.selectbox(
            "Project",
            list(by_id),
            format_func=lambda i: by_id[i].name,
            key="projects_choice",
            label_visibility="visible",
        )
        picked = by_id[chosen]
        needs_file = not picked.keep_file and not picked.origin.startswith("sample:")
        buttons = st.columns(3)
        if needs_file:
            file = st.file_uploader(
                f"{picked.name} keeps only its file's SHA-256: give the file to open it", key="projects_file"
            )
            buttons[0].button(
                "Open", key="projects_open", disabled=file is None, on_click=_open_with_file, args=(picked.id,)
            )
        else:
            buttons[0].button("Open", key="projects_open", on_click=_open, args=(picked.id,), type="primary")
        owner = not team_mode() or role_of(store, picked.id, member()) == "owner"  # duplicate and delete: the owner's
        if owner:
            buttons[1].button("Duplicate", key="projects_duplicate", on_click=_duplicate, args=(store, picked.id))
            confirm = st.checkbox(
                f"Yes, delete {picked.name} with its file and release packages (its audit entries stay)",
                key=f"projects_confirm-{picked.id}",
            )
            buttons[2].button(
                "Delete",
                key="projects_delete",
                disabled=not confirm,
                on_click=_delete,
                args=(store, picked.id, picked.name),
            )

# ---------------------------------------------------------------- continue from a release
st.subheader("Continue from a recipe or a release package")
st.caption(
    "A recipe (recipe.json) or a release package (release.zip) holds roles, target and steps but never the data: "
    "give the file it was made from too. It opens as a new project."
)
left, right = st.columns(2)
release = left.file_uploader("Recipe or release package", type=["json", "zip"], key="projects_release")
source = right.file_uploader("The file it was made from", key="projects_release_source")
st.file_uploader(
    "Its key file (only when its pseudonyms or date shifts were made with one)",
    type=["key", "txt"],
    key="projects_release_key",
    help="The project key the release's pseudonyms and date shifts were made with; it becomes the new "
    "project's key, kept in the project store and never in a package.",
)
st.button(
    "Open as a new project",
    key="projects_continue",
    disabled=release is None or source is None,
    on_click=_continue,
    type="primary",
)

# ---------------------------------------------------------------- a new delivery
st.subheader("Release a new delivery")
if current is None or current.id not in {p.id for p in projects}:
    st.caption("Open a project first: a delivery is released with an open project's steps and target.")
else:
    st.caption(
        plain(
            f"Next month's file of {current.name}: its layout is checked against the project's (one sentence per "
            "difference), the project's steps are applied again (suppression planned on the new records), and the "
            "target is checked. The package is recorded in the audit log."
        )
    )
    delivery_file = st.file_uploader("The new delivery", key="projects_delivery")
    if delivery_file is not None:
        held = st.session_state.get(DELIVERY)
        if held is None or held[:2] != (current.id, delivery_file.file_id):
            with guarded("reading the delivery"), st.spinner("Re-applying the project's steps..."):
                held = (
                    current.id,
                    delivery_file.file_id,
                    deliver(store, current.id, delivery_file.getvalue(), delivery_file.name),
                )
                st.session_state[DELIVERY] = held
        delivery = held[2] if held and held[:2] == (current.id, delivery_file.file_id) else None
        if delivery is not None:
            for d in delivery.differences:
                (st.error if d.blocking else st.info)(plain(d.sentence))
            if delivery.copy is None:
                st.error(plain(delivery.problem or "This delivery cannot be released."))
            else:
                if not delivery.differences:
                    st.success("The delivery has the project's layout: the same columns, of the same types.")
                result_verdict(delivery.check, f"The delivery {delivery.name}")
                with guarded("measuring the delivery's release"):
                    view = release_view(delivery.copy, classify=False, strict=False)
                    st.markdown("\n".join(f"- {plain(s)}" for s in view.sentences()))
                if team_mode():  # four eyes: drafted here, handed out once a second person approved it
                    st.button(
                        "Draft the delivery's release for approval",
                        key="projects_delivery_draft",
                        type="primary",
                        on_click=_draft_delivery,
                        args=(delivery, store),
                    )
                else:
                    st.download_button(
                        "Release package of the delivery (zip)",
                        _delivery_package(delivery, store),
                        file_name=f"release-{delivery.name}.zip",
                        mime="application/zip",
                        key="projects_delivery_package",
                        type="primary",
                        on_click="ignore",
                    )

# ---------------------------------------------------------------- the audit log
st.subheader("Audit log")
with guarded("reading the audit log"):
    entries = audit_entries(store) if not team_mode() else team_entries(store, member())
    broken = verify_chain(store)
    if not entries:
        st.caption("No release has been made from a project yet.")
    else:
        for sentence in broken:
            st.error(plain(sentence))
        if not broken:
            st.caption(
                f"{len(entries):,} release(s). Each entry's SHA-256 covers the one before it: the chain is intact "
                "(no entry was changed or removed)."
            )
        show_table(
            pd.DataFrame(
                {
                    "entry": [e.id for e in entries],
                    "time (UTC)": [_date(e.time) for e in entries],
                    "project": [
                        (e.project or "(no project)") + (" (deleted)" if e.project_deleted else "") for e in entries
                    ],
                    "source": [e.source_name for e in entries],
                    "source SHA-256": [(e.source_sha256 or "–")[:16] for e in entries],
                    "target": [e.target for e in entries],
                    "met": ["yes" if e.met else "no" for e in entries],
                    "records released": [e.released for e in entries],
                    "records suppressed": [e.suppressed for e in entries],
                    "released table SHA-256": [e.released_sha256[:16] for e in entries],
                    "package SHA-256": [(e.package_sha256 or "–")[:16] for e in entries],
                    "user": [e.user for e in entries],
                    "drafted by": [e.drafted_by or e.user for e in entries],
                    "approved by": [
                        e.approved_by if e.four_eyes else ("one step: single user" if e.drafted_by else "–")
                        for e in entries
                    ],
                    "made from": [e.made_by for e in entries],
                }
            ),
            key="audit_table",
        )
        if team_mode():  # who drafted and who approved the latest releases, with their digests
            for e in entries[-5:][::-1]:
                who = f"drafted by {e.drafted_by}, approved by {e.approved_by}" if e.four_eyes else f"by {e.user}"
                st.caption(plain(f"Entry {e.id} ({e.project}): {who}; package SHA-256 {e.package_sha256 or '–'}"))
        live = [e for e in entries if not e.project_deleted and e.project]  # an entry of no project kept no release
        if live:
            left, right = st.columns([3, 1])
            entry_id = left.selectbox(
                "Entry",
                [e.id for e in reversed(live)],
                format_func=lambda i: next(f"{e.id}: {e.project}, {_date(e.time)}" for e in live if e.id == i),
                key="audit_choice",
            )
            right.button("Verify again", key="audit_verify", on_click=_verify, args=(store, entry_id))
            held = st.session_state.get("audit_result")
            if held is not None and held[0] == entry_id:
                result = held[1]
                (st.success if result.passed else st.error)(
                    "Every check passed." if result.passed else f"Failed: {', '.join(result.failed_parts)}."
                )
                show_table(
                    pd.DataFrame(
                        {
                            "part": [c.part for c in result.checks],
                            "result": ["ok" if c.passed else "FAILED" for c in result.checks],
                            "check": [c.sentence for c in result.checks],
                        }
                    ),
                    key="audit_checks",
                )
