"""The release package download, made one way for every page that offers it.

The Risk report page and the Release page both offer the release package
(``anonlib.workflow.release_package``: released table, report, recipe); both
call ``package_button``, so the zip is built by the same functions from the risk
report of the same working-copy state (``page_report``, with its release view added
for the download, ``full_report``). The zip is built when the button is clicked, not
on every rerun (writing the released table takes a while at 10^5 records). The Release
page hands over its own view, so its package's report holds what the page shows.

``page_report`` is the Risk report page's report, kept per working-copy state and p in
a memo; a change of k reuses its sections on the table (``build_report(reuse=)``) from
the last report of the same table and p, so only what k decides is computed again.

Every package the button hands out is recorded in the project's audit log when it is
built for the download (``anonlib.projects.audit.record_stamped_package``: the target recounted on
its released table, the SHA-256 of the package and of each part, the OS user), with
the project's kept file beside it so the Projects page can verify it again.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable

import streamlit as st

from anonlib.core.errors import AnonlibError
from anonlib.projects import ProjectRef, ProjectStore
from anonlib.projects.audit import DASHBOARD, record_stamped_package
from anonlib.projects.drafts import draft_release, drafts, hand_out
from anonlib.projects.team import ACTIONS
from anonlib.workflow import WorkingCopy, release_package
from anonlib.workflow.release_view import ReleaseView
from anonlib.workflow.report import RiskReport, build_report, steps_section, with_release_view

from .memo import memo
from .state import current_project, ensure_project, project_store, role, roles_key
from .team import member, team_mode, user_label
from .ui import plain

log = logging.getLogger("dashboard")

PACKAGE_HELP = (
    "released.csv (the released table), report.html (the risk report, with the package's digests), "
    "recipe.json (to re-apply with python -m anonlib apply), README.txt (what the package states: "
    "SHA-256 digests, source, target, steps, version, time) and SHA256SUMS; check it with "
    "python -m anonlib verify release.zip."
)


def copy_key(copy: WorkingCopy) -> tuple:
    """What the report depends on: the current table, roles, missing policy, target and steps."""
    current = copy.current
    return (
        current.fingerprint,
        roles_key(current),
        current.missing,
        copy.release_target.describe(),
        tuple(a.step.describe() for a in copy.steps),
    )


def release_key(copy: WorkingCopy) -> tuple:
    """What the released table depends on: the current table, roles, missing policy and steps,
    and the columns the target reads as sensitive; not k nor a model's threshold."""
    current = copy.current
    steps = tuple(a.step.describe() for a in copy.steps)
    return current.fingerprint, roles_key(current), current.missing, steps, tuple(copy.target.sensitive)


def table_key(copy: WorkingCopy, p: float) -> tuple:
    """What the report's sections on the table depend on: the current table, roles, missing policy and p."""
    current = copy.current
    return current.fingerprint, roles_key(current), current.missing, float(p)


def page_report(copy: WorkingCopy, p: float) -> RiskReport:
    """The risk report of the working copy at threshold ``p`` without its release view (the page
    does not show it; ``full_report`` adds it for a download), kept per state (``copy_key``) and p.
    A new state reuses the sections on the table of the last report of the same table and p."""
    tables = memo("report.tables", 8)
    table = table_key(copy, p)

    def make() -> RiskReport:
        return build_report(
            copy.current, target=copy.release_target, p=float(p), steps=steps_section(copy), reuse=tables.get(table)
        )

    report = memo("report.page", 16).compute((copy_key(copy), float(p)), make)
    tables.put(table, report)
    return report


def full_report(
    copy: WorkingCopy,
    p: float,
    view: ReleaseView | None = None,
    view_key: tuple = (),
    report: RiskReport | None = None,
) -> RiskReport:
    """``report`` (default ``page_report``) with its section on what the release is still good for
    (``with_release_view``): ``view`` (the Release page's, told apart by ``view_key``, its digest)
    or, when the working copy has steps, a view computed with the report's defaults; kept per
    state, p and view, so the downloads of one state compute the view once."""
    return memo("report.full", 8).compute(
        (copy_key(copy), float(p), view_key),
        lambda: with_release_view(report if report is not None else page_report(copy, p), copy, view),
    )


@st.cache_data(show_spinner=False, max_entries=4)
def cached_package(key: tuple, p: float, _copy: WorkingCopy, _report: RiskReport) -> bytes:
    """The package states the time it was first built for this state (cached with it)."""
    return release_package(_copy, report=_report)


def view_digest(view: ReleaseView) -> str:
    """What tells views apart in the caches: the SHA-256 of the view's JSON (a view computed
    again may differ, e.g. a classifier cut to another subsample by its time limit)."""
    return hashlib.sha256(json.dumps(view.to_json(), sort_keys=True, default=str).encode("utf-8")).hexdigest()


def package_data(
    copy: WorkingCopy, p: float, report: RiskReport | None = None, view: ReleaseView | None = None
) -> Callable[[], bytes]:
    """A function building the package when the button is clicked (the released table is written
    then, not on every rerun): its report is ``report`` (the Risk report page's, shown) with its
    release view added, else the same report made then (``full_report``). The Release page passes
    its ``view``: the package's report then states the numbers the page shows, whose classifier
    may have been cut to its time limit, rather than a second run's (the caches tell views apart
    by their content, ``view_digest``)."""
    key = copy_key(copy)
    if view is None:
        return lambda: cached_package(key, p, copy, full_report(copy, p, report=report))

    def build() -> bytes:  # on the click: the digest is not computed on every rerun of the page
        digest = (view_digest(view),)
        return cached_package((key, digest), p, copy, full_report(copy, p, view, digest))

    return build


def recorded(
    build: Callable[[], bytes], store: ProjectStore | None, project: ProjectRef | None, user: str | None = None
) -> Callable[[], bytes]:
    """``build`` that also records the package in ``project``'s audit log when it runs (at the
    click; it runs outside the page's run, so what it needs is passed in, not read from the
    session: ``user``, the signed-in user it names). A store that fails then is logged; the
    download still happens."""

    def run() -> bytes:
        data = build()
        if store is not None and project is not None:
            try:  # the package handed out states its entry in the audit log (audit.json)
                data = record_stamped_package(store, project.id, data, source=store.file(project.id), user=user)[1]
            except AnonlibError:
                log.exception("the release package could not be recorded in the audit log")
        return data

    return run


def package_button(
    copy: WorkingCopy,
    p: float,
    report: RiskReport | None = None,
    key: str = "dl-package",
    view: ReleaseView | None = None,
) -> None:
    """The "Release package (zip)" download button. A click does not rerun the page: a rerun
    registers the deferred package again under a new id, and the download the click
    started, still holding the old id, could then find nothing to fetch (Streamlit's own
    documentation warns of this race)."""
    ensure_project()
    if team_mode():  # a team's release is drafted, approved by a second person, and only then handed out
        team_release(package_data(copy, p, report, view), key)
        return
    check = copy.check
    confirmed = True
    if check is None or not check.met:  # a package that misses the target: said beside the button first
        st.warning(
            plain(
                "This package does not meet the release target: "
                + (check.sentence() if check is not None else f"the target cannot be checked ({copy.problem}).")
                + " Its README, report and audit entry say so."
            )
        )
        confirmed = st.checkbox("Download it anyway, knowing it misses the target", key=f"{key}-anyway")
    st.download_button(
        "Release package (zip)",
        recorded(package_data(copy, p, report, view), project_store(), current_project(), user_label()),
        file_name="release.zip",
        mime="application/zip",
        key=key,
        help=PACKAGE_HELP,
        type="primary",
        on_click="ignore",
        disabled=not confirmed,
    )


def _draft(build: Callable[[], bytes], store: ProjectStore, project: ProjectRef, version: int | None) -> None:
    """Keep the working copy's package as a draft of the project (a callback: the page then shows its state)."""
    try:
        draft_release(
            store, project.id, build(), member=member(), source=store.file(project.id), made_by=DASHBOARD,
            project_version=version,
        )  # fmt: skip
    except AnonlibError as err:
        st.session_state["team_release_problem"] = str(err)


def team_release(build: Callable[[], bytes], key: str) -> None:
    """A team's release of the working copy (``team.md``): drafted here by an analyst or the owner;
    its state beside the button; the package downloads only once a second person approved this
    very draft (of this version of the working copy: any change makes a new draft)."""
    store, project, who, held = project_store(), current_project(), member(), role()
    if store is None or project is None:
        st.caption("The release is drafted once the working copy is saved as a project.")
        return
    problem = st.session_state.pop("team_release_problem", None)
    if problem:
        st.error(plain(problem))
    version = store.version(project.id)
    current = [d for d in drafts(store, who, project=project.id) if d.project_version == version]
    latest = current[0] if current else None
    if latest is not None and latest.state in ("approved", "released"):
        st.success(plain(latest.sentence()))
        if held in ACTIONS["release"]:
            st.download_button(
                "Release package (zip)",
                lambda: hand_out(store, project.id, latest.id, who, made_by=DASHBOARD, current_version=version),
                file_name="release.zip",
                mime="application/zip",
                key=key,
                help=PACKAGE_HELP,
                type="primary",
                on_click="ignore",
            )
        else:
            st.caption(f"Your role in this project is {held}: an analyst, approver or the owner hands the package out.")
        return
    if latest is not None and latest.state == "draft":
        st.info(
            plain(
                latest.sentence()
                + " The package downloads here once another member approves it on their Projects page."
            )
        )
        return
    if latest is not None:  # rejected
        st.warning(plain(latest.sentence()))
    if held in ACTIONS["draft"]:
        st.button(
            "Draft this release for approval",
            key=f"{key}-draft",
            type="primary",
            on_click=_draft,
            args=(build, store, project, version),
            help="The package is built and its SHA-256 recorded with you as its drafter; nothing is handed out "
            "until another member with the approver role approves it.",
        )
    else:
        st.caption(f"Your role in this project is {held}: an analyst or the owner drafts its releases.")
