"""The release package download, made one way for every page that offers it.

The Risk report page and the Release page both offer the release package
(``anonlib.workflow.release_package``: released table, report, recipe); both
call ``package_button``, so the zip is built by the same cached functions from
the risk report (``copy_report``) of the same working-copy state. The Release
page hands over its own view, so its package's report holds what the page shows.

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
from anonlib.projects.audit import record_stamped_package
from anonlib.workflow import WorkingCopy, release_package
from anonlib.workflow.release_view import ReleaseView
from anonlib.workflow.report import RiskReport, copy_report

from .state import current_project, ensure_project, project_store

log = logging.getLogger("dashboard")

PACKAGE_HELP = (
    "released.csv (the released table), report.html (the risk report, with the package's digests), "
    "recipe.json (to re-apply with python -m anonlib apply), README.txt (what the package states: "
    "SHA-256 digests, source, target, steps, version, time) and SHA256SUMS; check it with "
    "python -m anonlib verify release.zip."
)


def _roles(current) -> tuple:
    return tuple((str(c), current.roles[c].value) for c in current.frame.columns if c in current.roles)


def copy_key(copy: WorkingCopy) -> tuple:
    """What the report depends on: the current table, roles, missing policy, target and steps."""
    current = copy.current
    return (
        current.fingerprint,
        _roles(current),
        current.missing,
        copy.target.describe(),
        tuple(a.step.describe() for a in copy.steps),
    )


def release_key(copy: WorkingCopy) -> tuple:
    """What the released table depends on: the current table, roles, missing policy and steps,
    and the columns the target reads as sensitive; not k nor a model's threshold."""
    current = copy.current
    steps = tuple(a.step.describe() for a in copy.steps)
    return current.fingerprint, _roles(current), current.missing, steps, tuple(copy.target.sensitive)


@st.cache_data(show_spinner=False, max_entries=16)
def cached_report(
    key: tuple, p: float, _copy: WorkingCopy, _view: ReleaseView | None = None, view_key: tuple = ()
) -> RiskReport:
    """The risk report of the working copy at threshold ``p`` (cached per state); with
    ``_view`` (the Release page's, told apart by ``view_key``, its digest) its section on what the
    release is still good for is that view, not one computed again."""
    return copy_report(_copy, p=p, view=_view)


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
) -> bytes | Callable[[], bytes]:
    """The package bytes; without ``report``, a function building report and package when
    the button is clicked (the Release page does not build the whole report otherwise).
    The Release page passes its ``view``: the package's report then states the numbers
    the page shows, whose classifier may have been cut to its time limit, rather than a
    second run's (the caches tell views apart by their content, ``view_digest``)."""
    key = copy_key(copy)
    if report is not None:
        return cached_package(key, p, copy, report)
    if view is None:
        return lambda: cached_package(key, p, copy, cached_report(key, p, copy))

    def build() -> bytes:  # on the click: the digest is not computed on every rerun of the page
        digest = (view_digest(view),)
        return cached_package((key, digest), p, copy, cached_report(key, p, copy, view, digest))

    return build


def recorded(build: Callable[[], bytes], store: ProjectStore | None, project: ProjectRef | None) -> Callable[[], bytes]:
    """``build`` that also records the package in ``project``'s audit log when it runs (at the
    click; it runs outside the page's run, so what it needs is passed in, not read from the
    session). A store that fails then is logged; the download still happens."""

    def run() -> bytes:
        data = build()
        if store is not None and project is not None:
            try:  # the package handed out states its entry in the audit log (audit.json)
                data = record_stamped_package(store, project.id, data, source=store.file(project.id))[1]
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
    data = package_data(copy, p, report, view)
    build = data if callable(data) else (lambda: data)
    st.download_button(
        "Release package (zip)",
        recorded(build, project_store(), current_project()),
        file_name="release.zip",
        mime="application/zip",
        key=key,
        help=PACKAGE_HELP,
        type="primary",
        on_click="ignore",
    )
