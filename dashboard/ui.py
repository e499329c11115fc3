"""Small building blocks every page uses: header, sidebar, errors, downloads.

The sidebar shows the working copy (dataset, release target, whether it is met
in records, the steps with undo and reset); see ``run_with_sidebar``.

Pages stay thin: widgets, one call into anonlib inside ``guarded``, rendering.
User-provided strings (column names, values, file names) are shown with
``plain`` (Markdown escaped) or in dataframes, never as HTML.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pandas as pd
import streamlit as st

from anonlib.core.errors import AnonlibError
from anonlib.core.loading import to_safe_csv
from anonlib.measures.wildcard import NOT_IN_PEOPLE
from anonlib.projects.team import log_refusal
from anonlib.transformations.suppression import estimate_suppress_cells
from anonlib.workflow import LocalSuppressionStep, ReleaseTarget, SuppressionStep

from . import memo as memos
from .glossary import term_help
from .power_views import sidebar_power_chart
from .state import (
    apply_step_callback,
    begin_run,
    current_project,
    loaded_dataset,
    project_store,
    release_target,
    reset,
    role,
    roles_key,
    set_release_target,
    store_problem,
    take_note,
    target_key,
    undo,
    working_copy,
)
from .team import member, metadata_url, provider_problem, session_expired, team_mode, team_pages

log = logging.getLogger("dashboard")

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


def plain(text: object) -> str:
    """Escape Markdown so user text shows literally (no links, no formatting).

    >>> plain("**x** <b>")
    '\\\\*\\\\*x\\\\*\\\\* \\\\<b\\\\>'
    """
    return _MARKDOWN_SPECIAL.sub(r"\\\1", str(text))


def _leave_legacy_page_mode() -> None:
    """Run ``app.py``'s navigation even when a page's URL is opened first.

    Streamlit still treats a ``pages/`` folder as an old-style multipage app
    until ``st.navigation`` has run once in the server process: a first visitor
    who opens e.g. ``/frontier`` directly would get that script alone, without
    the app's navigation, layout and sidebar. Switch that mode off and rerun;
    the rerun goes through ``app.py`` and lands on the same page.
    """
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


def page_header(title: str, question: str, how_to_read: str, paper: str | None = None) -> None:
    """Title, the question the page answers, the paper it follows, and a help expander."""
    _leave_legacy_page_mode()
    st.title(title)
    st.write(question)
    if paper:
        st.caption(f"Follows: {paper}")
    with st.expander("How to read this"):
        st.markdown(how_to_read)


MODEL_CHOICES = {
    "none": ("no model", None),
    "distinct_l": ("distinct l-diversity", "distinct l-diversity"),
    "entropy_l": ("entropy l-diversity", "entropy l-diversity"),
    "recursive_cl": ("recursive (c,l)-diversity", "recursive (c,l)-diversity"),
    "alpha": ("(α,k)-anonymity", "(α,k)-anonymity"),
    "t_closeness": ("t-closeness", "t-closeness"),
    "delta_disclosure": ("δ-disclosure privacy", "δ-disclosure privacy"),
    "beta_likeness": ("β-likeness", "β-likeness"),
    "enhanced_beta_likeness": ("enhanced β-likeness", "β-likeness"),
}
# (label, default, smallest, largest, step) of each model's value
MODEL_VALUES = {
    "distinct_l": ("l", 2.0, 1.0, 1000.0, 1.0),
    "entropy_l": ("l", 2.0, 1.0, 1000.0, 0.5),
    "recursive_cl": ("l", 2.0, 1.0, 1000.0, 1.0),
    "alpha": ("α at most", 0.5, 0.01, 1.0, 0.05),
    "t_closeness": ("t at most", 0.2, 0.0, 1.0, 0.05),
    "delta_disclosure": ("δ at most", 1.0, 0.01, 100.0, 0.1),
    "beta_likeness": ("β at most", 1.0, 0.01, 1000.0, 0.1),
    "enhanced_beta_likeness": ("β at most", 1.0, 0.01, 1000.0, 0.1),
}


def _model_inputs(sensitive: tuple[str, ...]) -> tuple:
    """One privacy model per sensitive attribute (optional), as ModelRequirements."""
    from anonlib.measures.models import ModelRequirement

    requirements = []
    with st.expander("Privacy models" + (f" ({len(sensitive)} sensitive)" if sensitive else ""), expanded=False):
        if not sensitive:
            st.caption("Mark a column as sensitive on the Dataset page to require l-diversity, t-closeness and others.")
        for column in sensitive:
            model = st.selectbox(
                f"Model on {column}",
                list(MODEL_CHOICES),
                format_func=lambda m: MODEL_CHOICES[m][0],
                key=f"target_model:{column}",
                help=term_help("sensitive attribute"),
            )
            if model == "none":
                continue
            label, default, low, high, step = MODEL_VALUES[model]
            value = st.number_input(
                label,
                low,
                high,
                default,
                step,
                key=f"target_value:{column}:{model}",
                help=term_help(MODEL_CHOICES[model][1]),
            )
            c = None
            if model == "recursive_cl":
                c = st.number_input("c", 0.1, 1000.0, 3.0, 0.5, key=f"target_c:{column}")
            requirements.append(ModelRequirement(model, column, float(value), c=None if c is None else float(c)))
    return tuple(requirements)


def target_controls(container=None) -> None:
    """The release target, set once for every page: k, the suppression limit and
    (when sensitive attributes are marked) privacy models. Widgets: draw once per run."""
    target = release_target()
    sensitive = loaded_dataset().sensitive
    with container if container is not None else st.sidebar:
        st.subheader("Release target", help=term_help("release target"))
        left, right = st.columns(2)
        k = left.number_input("k", 1, 100_000, target.k, 1, key="target_k", help=term_help("k"))
        limit = right.number_input(
            "Suppressed ≤ %",
            0.0,
            100.0,
            100 * target.max_suppressed,
            0.5,
            key="target_suppressed",
            help="The largest share of the loaded file's records (of its people, when a column is marked as the "
            "person) that may be suppressed (removed from the release).",
        )
        linked, power = _linkage_inputs(target)
        with guarded("setting the release target"):
            wanted = ReleaseTarget(
                k=int(k),
                requirements=_model_inputs(sensitive),
                max_suppressed=float(limit) / 100,
                linked=linked,
                power=power,
            )
            if wanted != target:
                set_release_target(wanted)


POWERS = ("all", 1, 2, 3, 4, 5)


def _linkage_inputs(target: ReleaseTarget) -> tuple[tuple[str, ...], int | None]:
    """With a person (or household) column: whether its records link (released as a pseudonym, or
    treated as linkable: stable quasi-identifiers may link them too) and how many of a person's
    records an attacker knows. Returns the columns chosen as linkable and the power."""
    loaded = loaded_dataset()
    owners = loaded.owners
    if not owners:
        return target.linked, target.power
    unit = working_copy().release_target
    released = [c for c in owners if c in unit.linked and c not in target.linked]
    linked = tuple(target.linked)
    if not released:
        whose = "person's records" if loaded.person is not None else "household's members"
        treat = st.checkbox(
            f"Treat each {whose} as linkable",
            value=bool(target.linked),
            key="target_linked",
            help="The person column is not released, so records are not linked by it; stable quasi-identifiers "
            "(sex, year of birth, education) may still link them. Ticked, the target counts each person's whole "
            "history (the sequence of their rows), as when the pseudonym is released.",
        )
        linked = tuple(owners) if treat else ()
    if unit.linkable or linked:
        chosen = st.selectbox(
            "An attacker knows",
            POWERS,
            index=POWERS.index("all" if target.power is None else min(int(target.power), 5)),
            format_func=lambda p: "all of a person's records" if p == "all" else f"any {p} of a person's records",
            key="target_power",
            help="The adversary's power (El Emam et al.): how many of a person's records an attacker may know. "
            "All: every person's whole history must be shared by k people; m: every m of a person's records must "
            "be found in the histories of k people (k^m-anonymity).",
        )
        power = None if chosen == "all" else int(chosen)
        with guarded("counting the people at risk by the attacker's power"):
            sidebar_power_chart(working_copy().current, target.k, power)
        return linked, power
    return linked, target.power


def _check_box(copy) -> None:
    check = copy.check
    if check is None:
        st.warning(plain("The target cannot be checked: " + (copy.problem or "unknown reason.")))
    elif check.met:
        st.success(plain(check.sentence()))
    elif check.met_after_suppression:
        st.info(plain(check.sentence()))
    else:
        st.warning(plain(check.sentence()))


def result_verdict(check, what: str) -> None:
    """Whether a page's current result meets the release target, in its unit (records, or people):
    ``what`` names the result ("This generalization"), ``check`` is
    ``release_target().check(result_dataset)`` (a ``TargetCheck``) or None when
    the result cannot be checked (e.g. no quasi-identifier)."""
    if check is None:
        st.info(f"{what}: the release target cannot be checked (mark quasi-identifiers on the Dataset page).")
        return
    text = plain(f"{what} against the release target. {check.sentence()}")
    if check.met:
        st.success(text)
    elif check.met_after_suppression:
        st.info(text)
    else:
        st.warning(text)


def offer_step(step, cost, page: str, what: str, key: str):
    """A suggestion offered as a step, its cost said first: what it does to the working
    copy (``cost.sentences()``, from ``anonlib.workflow.step_cost``), a warning when it
    removes a quasi-identifier, whether the result meets the release target in records
    (``result_verdict``), and the button that applies it (``apply_step_callback``).
    ``what`` names the suggestion ("generalization", "policy"). Returns the working copy
    as it would be after the step (for previews)."""
    st.markdown("What it does to the working copy:\n" + "\n".join(f"- {plain(s)}" for s in cost.sentences()))
    if cost.removes_quasi_identifier:
        st.warning(
            f"This {what} removes a quasi-identifier entirely (every value becomes one): the released "
            "column says nothing. It is never preselected; apply it only if that column is not needed."
        )
    preview = working_copy().apply(step, page)
    result_verdict(preview.check, f"This {what}")
    st.button(
        f"Apply this {what} to the working copy",
        type="primary",
        on_click=apply_step_callback,
        args=(step, page),
        key=key,
        help="Adds a step to the working copy (listed in the sidebar, with undo).",
    )
    return preview


def paper_example(title: str, paper: str, render: Callable[[], None], key: str) -> None:
    """The paper's worked example, closed at the bottom of a page: nothing is
    computed until the user switches it on, and it never touches the working copy.
    A failure inside (a choice refused as too large) is a sentence, as everywhere.
    Usage: ``paper_example("Table 1 of Kroes et al.", "Kroes et al. 2021", _render_table1, "peers_paper")``.
    """
    st.divider()
    shown = st.toggle(
        f"Paper's worked example: {title}",
        key=key,
        value=False,
        help=f"Reproduces {paper} on its own example data, independent of your file.",
    )
    if shown:
        with st.container(border=True):
            st.caption(f"From {paper}. These numbers are the paper's, not your file's.")
            with guarded("computing the paper's example"):
                render()


def sidebar(container=None, status=None) -> None:
    """The working copy at a glance (text only, so it can be drawn twice): the
    dataset, whether it meets the release target in records, and the steps with
    the records failing the target before and after each. ``status`` holds the
    check and the steps (default: ``container``)."""
    copy = working_copy()
    dataset = copy.current
    with container if container is not None else st.sidebar:
        st.subheader("Working copy", help=term_help("working copy"))
        st.text(dataset.name)
        st.text(f"{dataset.n_records:,} records, {dataset.frame.shape[1]} columns")
        if dataset.count:
            st.text(f"{dataset.n_rows:,} rows (count column: {dataset.count})")
        if dataset.person:
            st.text(f"{dataset.n_persons:,} people (person column: {dataset.person})")
        st.text("Quasi-identifiers: " + (", ".join(dataset.quasi_identifiers) or "none"))
        st.text("Sensitive: " + (", ".join(dataset.sensitive) or "none"))
        if dataset.missing == "drop":
            st.text(f"Records with missing values: {copy.left_out_records:,} left out (never judged or released)")
        _project_line()
    with status if status is not None else (container if container is not None else st.sidebar):
        _check_box(copy)
        if copy.steps:
            st.markdown(f"**Steps** ({len(copy.steps)})", help=term_help("step"))
            before = copy.steps[0].before
            if before is not None:
                st.caption(
                    f"Loaded file: {before.unit_noun(before.persons_in_failing)} failing the target"
                    if before.by_person
                    else f"Loaded file: {before.failing_records:,} records failing the target"
                )
            for i, applied in enumerate(copy.steps, start=1):
                st.markdown(plain(f"{i}. {applied.page}: {applied.step.describe()}"))
                st.caption(
                    plain(
                        applied.risk_text()
                        + (f"; {applied.suppressed_records:,} records suppressed" if applied.suppressed_records else "")
                    )
                )
        else:
            st.caption("No step yet: the working copy is the loaded file.")
        st.caption(
            "Your projects are kept on your team's shared server; nothing is sent anywhere else."
            if team_mode()
            else "Everything is computed on this computer; nothing is sent anywhere."
        )


def _project_line() -> None:
    """Which project the working copy is saved in, or, in one sentence, why it is not saved."""
    problem = store_problem()
    project = current_project()
    if problem:
        st.warning(plain(f"Not saved: {problem} You are working on an unsaved copy in this tab."))
    elif project is not None:
        st.caption(plain(f"Project: {project.name} (every change is saved; see the Projects page)"))
    else:
        st.caption("Not saved as a project yet: your first change (role, target, step) saves it.")


def _undo() -> None:
    undo()


def _reset() -> None:
    reset()


def _suppress() -> None:
    copy = working_copy()
    apply_step_callback(SuppressionStep.from_target(copy.release_target, copy.current), "Sidebar")


def _suppress_cells() -> None:
    copy = working_copy()
    apply_step_callback(LocalSuppressionStep.from_target(copy.target, copy.current), "Sidebar")


LOCAL_ROWS = 300_000  # local suppression is offered (and its records counted) up to this many rows


def _records_touched(dataset, target) -> int:
    """Records local suppression would change to reach ``target``'s k on ``dataset``."""
    step = LocalSuppressionStep.from_target(target, dataset)
    touched = step.suppressed(dataset.frame).any(axis=1)
    return int(dataset.frame[dataset.count][touched].sum()) if dataset.count else int(touched.sum())


LOCAL_IN_PEOPLE = "Suppressing cells is not offered. " + NOT_IN_PEOPLE


def _local_offer(copy) -> int | None:
    """Records local suppression would touch, when it is worth offering: the target is k
    alone in records (local suppression does not judge the privacy models, nor count people),
    the copy is small enough to plan it, and it touches fewer records than suppressing the
    failing ones. The plan is kept per content after the steps, missing-value policy, roles
    and target; one estimated over ``INSTANT_SECONDS`` waits behind a button saying how long
    it takes (``on_request``), so a change of k never waits for it."""
    check, dataset = copy.check, copy.current
    if (
        check is None
        or not check.failing_records
        or check.by_person
        or copy.target.requirements
        or not dataset.quasi_identifiers
        or dataset.n_rows > LOCAL_ROWS
    ):
        return None
    with guarded("planning local suppression"):
        key = (dataset.fingerprint, dataset.missing, roles_key(dataset), target_key(copy.target))
        seconds = estimate_suppress_cells(dataset.n_rows, check.failing_records, len(dataset.quasi_identifiers)).seconds
        touched = memos.on_request(
            "sidebar_cells",
            key,
            lambda: _records_touched(dataset, copy.target),
            seconds=seconds,
            what="which cells to suppress",
            button_key="sidebar_plan_cells",
        )
        if touched is None or touched < check.failing_records:
            return touched
        if seconds > memos.INSTANT_SECONDS:  # planned on request: say why nothing is offered
            st.caption(
                f"Suppressing cells would touch {touched:,} records, no fewer than the "
                f"{check.failing_records:,} failing: not offered."
            )
    return None


def suppress_label(check) -> str:
    """The sidebar's suppression button, in the target's unit.

    >>> from types import SimpleNamespace as N
    >>> suppress_label(N(by_person=False, failing_records=12, failing_persons=None))
    'Suppress the 12 failing records'
    >>> suppress_label(N(by_person=True, failing_records=12, failing_persons=3, persons=9, unit_noun=lambda n: f"{n} people"))
    'Suppress 3 people (12 records): what meeting the target removes'
    >>> suppress_label(N(by_person=True, failing_records=40, failing_persons=9, persons=9, unit_noun=lambda n: f"{n} people"))
    'Suppress 9 people (40 records): what meeting the target removes, every one in the table'
    """
    if check.by_person:  # what repeated suppression removes, said apart from the people failing
        records = "record" if check.failing_records == 1 else "records"
        everyone = check.persons is not None and check.failing_persons >= check.persons  # said, not hidden
        return (
            f"Suppress {check.unit_noun(check.failing_persons)} ({check.failing_records:,} {records}): what meeting "
            "the target removes" + (", every one in the table" if everyone else "")
        )
    return f"Suppress the {check.failing_records:,} failing records"


def step_actions(container=None) -> None:
    """Undo the last step, reset to the loaded file, and suppress what still fails
    (buttons: draw once per run, before the page)."""
    copy = working_copy()
    check = copy.check
    with container if container is not None else st.sidebar:
        touched = _local_offer(copy)
        if touched is not None:
            st.button(
                f"Suppress cells: {touched:,} records touched",
                on_click=_suppress_cells,
                key="sidebar_suppress_cells",
                width="stretch",
                type="primary",
                help=f"Adds a step writing * in the fewest quasi-identifier cells so that every record "
                f"matches at least k - 1 others (a * matches any value; sdcMicro's local suppression): "
                f"{touched:,} records change a cell instead of {check.failing_records:,} records removed. "
                "Re-planned on a new delivery when the recipe is applied.",
            )
        if check is not None and check.failing_records:
            if check.by_person:
                st.caption(LOCAL_IN_PEOPLE)
            st.button(
                suppress_label(check),
                on_click=_suppress,
                key="sidebar_suppress",
                width="stretch",
                help="Adds a step removing the records of every class that fails the target"
                + (" (every record of each person with a record in one)" if check.by_person else "")
                + "; re-evaluated on a new delivery when the recipe is applied.",
            )
        left, right = st.columns(2)
        left.button("Undo last step", on_click=_undo, disabled=not copy.steps, key="sidebar_undo", width="stretch")
        right.button(
            "Reset to file",
            on_click=_reset,
            disabled=not copy.steps,
            key="sidebar_reset",
            width="stretch",
            help="Drop every step: back to the loaded file (which is never changed).",
        )
        note = take_note()
        if note:
            st.warning(plain(note))


def run_with_sidebar(pages: list) -> None:
    """Run the page chosen in ``st.navigation(pages)`` with the working-copy sidebar.

    The release target controls and the step buttons are drawn once, before the
    page; the working copy's summary, its check and its steps are drawn before the
    page (so they are there even when the page stops early with ``st.stop()``) and
    redrawn in the same places afterwards when the page changed what they show (it
    applied a step, or saved the project): an unchanged redraw only made the browser
    build the sidebar twice on every change.
    """
    if team_mode() and member() is None:  # a team's dashboard shows nothing signed out
        st.navigation(
            [st.Page(sign_in_page, title="Sign in", url_path="sign-in", default=True)], position="hidden"
        ).run()
        return
    begin_run()  # open the session's project (a reload, a second tab) or follow another tab's change
    held = role()  # the signed-in user's role in the project (None without a team)
    if held == "viewer":  # a viewer opens no page that shows the raw file's rows
        pages = [p for p in pages if p.title in team_pages(held, [q.title for q in pages])]
    navigation = st.navigation(pages)
    if team_mode():
        signed_in_line(held if current_project() is not None else None)
    summary = st.sidebar.empty()
    controls = st.sidebar.container()
    status = st.sidebar.empty()
    actions = st.sidebar.container()
    changes = held not in ("viewer", "approver")  # a viewer or approver changes no target and no step
    if changes:
        target_controls(controls)
    shown = _sidebar_inputs()
    sidebar(summary.container(), status.container())
    if changes:
        step_actions(actions)
    navigation.run()
    if any(now is not before for now, before in zip(_sidebar_inputs(), shown)):
        sidebar(summary.container(), status.container())


SIGNED_OUT = "Sign in first: this dashboard belongs to a team, and shows nothing signed out."


def sign_in_page() -> None:
    """The only page a signed-out visitor of a team's dashboard gets (``dashboard.team``); the
    visit is logged as a refused request, once per browser session."""
    st.title("Privacy-risk dashboard")
    if session_expired():  # the provider's token ended the session: sign in again
        st.warning("Your session ended with your sign-in provider's token; sign in again.")
        st.button("Sign in again", key="team_sign_in_again", type="primary", on_click=st.logout)
        return
    st.info(SIGNED_OUT)
    down = provider_problem(metadata_url())
    if down:  # a clear page, not a bare "Authentication error" after the click
        st.error(down)
        return
    st.write(
        "Your team's projects are kept on a shared server: sign in with your organisation's account to see the "
        "projects you are a member of, in the role you have in each."
    )
    st.button("Sign in", key="team_sign_in", type="primary", on_click=st.login)
    if not st.session_state.get("team_signed_out_logged"):
        st.session_state["team_signed_out_logged"] = True
        store = project_store()
        if store is not None:
            log_refusal(store, "signed-out visitor", "open the dashboard", None, SIGNED_OUT)


def signed_in_line(held: str | None) -> None:
    """Who is signed in and their role in the open project, with the sign-out button (sidebar)."""
    with st.sidebar:
        st.caption(plain(f"Signed in as {member().label}" + (f"; your role in this project: {held}" if held else "")))
        st.button("Sign out", key="team_sign_out", on_click=st.logout, width="stretch")


def _sidebar_inputs() -> tuple:
    """What ``sidebar`` shows depends on: the working copy, the session's project and why it is
    not saved. Each is replaced, never changed in place, so comparing them by identity says
    whether the page changed any."""
    return working_copy(), current_project(), store_problem()


@contextmanager
def opened(label: str, key: str) -> Iterator[bool]:
    """An expander whose content is built only while it is open (Streamlit's ``.open``, with
    ``on_change="rerun"``): collapsed, the page neither computes nor sends its tables and charts,
    and the browser does not draw them again after every change. Meant for tables and charts: a
    widget inside goes back to its default once the expander is closed (Streamlit forgets the
    value of a widget it did not draw). Usage::

        with opened("Tree of age", key="tree-age") as shown:
            if shown:
                st.plotly_chart(figure)
    """
    box = st.expander(label, key=key, on_change="rerun")
    with box:
        yield bool(box.open)


@contextmanager
def guarded(what: str) -> Iterator[None]:
    """Show any failure inside as a sentence (``st.error``), never a traceback.

    ``AnonlibError`` messages are shown with their Markdown escaped (they name
    user columns and values; the escapes render invisibly); anything else gets
    a generic sentence and is logged to the server console only.
    """
    try:
        yield
    except AnonlibError as err:
        st.error(plain(str(err)))
    except Exception:  # noqa: BLE001 - the page must survive any failure
        log.exception("unexpected failure while %s", what)
        st.error(
            f"Something unexpected went wrong while {what}. Your data and settings are kept; "
            "try other settings, or report the steps that led here."
        )


def row(gap: str = "medium"):
    """A row for metrics or buttons that wraps onto more lines when the window is
    narrow: each keeps the width of its label and value, so nothing is cut to "32,…"
    at 1024 px (``st.columns`` gives each a fixed share and cuts what does not fit).

    Use as ``r = row(); r.metric(...)`` or ``with row(): st.download_button(...)``.
    """
    return st.container(horizontal=True, gap=gap)


MISSING_CELL = "–"  # what a results table shows where a value does not apply


def _cell_text(value: object, printf: str | None, data: bool) -> str:
    """One number of a column that also holds missing values, as the table shows it.

    >>> _cell_text(312462997, None, False), _cell_text(0.5, "%.4f", False), _cell_text(37010.0, None, True)
    ('312,462,997', '0.5000', '37010')
    """
    if printf:
        try:
            return printf % value
        except (TypeError, ValueError):
            pass
    whole = float(value).is_integer()
    if data:
        return str(int(value)) if whole else str(value)
    return f"{int(value):,}" if whole else f"{float(value):,.6g}"


def shown_table(
    frame: pd.DataFrame, column_config: dict | None = None, *, data: bool = False
) -> tuple[pd.DataFrame, dict]:
    """The table and column settings ``table`` shows: whole-number columns of results
    with thousands separators ("312,462,997", never cut to "12462997"), and missing
    cells as ``MISSING_CELL`` in results or empty in data (``data=True``: a preview
    of the user's table, where ids and ZIP codes keep their digits), never "None".
    A numeric column with missing cells becomes right-aligned text in the same format.

    >>> t, config = shown_table(pd.DataFrame({"records": [312462997, 5], "gain": [None, 0.25], "who": ["a", None]}))
    >>> t.to_dict("list"), config["records"]["type_config"]["format"], config["gain"]["alignment"]
    ({'records': [312462997, 5], 'gain': ['–', '0.25'], 'who': ['a', '–']}, 'localized', 'right')
    """
    config = dict(column_config or {})
    shown = frame
    for column in frame.columns:
        values = frame[column]
        if isinstance(values, pd.DataFrame):  # duplicated column names: leave as they are
            continue
        missing = values.isna().to_numpy()
        numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
        if missing.any():
            placeholder = "" if data else MISSING_CELL
            if numeric:
                given = config.get(column)
                type_config = (given or {}).get("type_config", {}) if isinstance(given, dict) else {}
                printf = type_config.get("format") if type_config.get("type") == "number" else None
                printf = printf if isinstance(printf, str) and printf.startswith("%") else None
                text = [placeholder if m else _cell_text(v, printf, data) for v, m in zip(values.tolist(), missing)]
                label = given.get("label") if isinstance(given, dict) else (given if isinstance(given, str) else None)
                config[column] = st.column_config.TextColumn(label, alignment="right")
            else:
                text = values.astype(object).where(~missing, placeholder)
            shown = shown.copy() if shown is frame else shown
            shown[column] = text
        elif numeric and not data and column not in config:  # 110,371.467, not 110371.467
            config[column] = st.column_config.NumberColumn(format="localized")
    return shown, config


def show_table(frame: pd.DataFrame, column_config: dict | None = None, *, data: bool = False, **kwargs) -> None:
    """``st.dataframe`` of a results table (or, with ``data=True``, of the user's data)
    as ``shown_table`` prepares it; index hidden, full width unless ``kwargs`` say otherwise."""
    shown, config = shown_table(frame, column_config, data=data)
    kwargs.setdefault("hide_index", True)
    kwargs.setdefault("width", "stretch")
    st.dataframe(shown, column_config=config, **kwargs)


def download_csv(
    label: str, frame: pd.DataFrame | Callable[[], pd.DataFrame], file_name: str, key: str | None = None
) -> None:
    """A CSV download with spreadsheet formulas neutralised, written when the button is clicked
    (a rerun of the page never converts a table nobody asked for). ``frame`` may be a function
    returning the table: it is then also built only at the click."""

    def data() -> str:
        return to_safe_csv(frame() if callable(frame) else frame)

    st.download_button(label, data, file_name=file_name, mime="text/csv", key=key)


def download_json(
    label: str, payload: dict[str, Any] | Callable[[], dict[str, Any]], file_name: str, key: str | None = None
) -> None:
    """A JSON download of parameters and results, so a run can be reproduced; a callable ``payload``
    is made when the button is clicked (work a rerun should not wait for)."""

    def data(made: dict[str, Any]) -> bytes:
        return json.dumps(made, indent=2, default=_json_default).encode("utf-8")

    st.download_button(
        label,
        (lambda: data(payload())) if callable(payload) else data(payload),
        file_name=file_name,
        mime="application/json",
        key=key,
        on_click="ignore" if callable(payload) else "rerun",
    )


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)
