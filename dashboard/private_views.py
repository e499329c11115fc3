"""The Release page's private section: a differentially private synthetic table of the
loaded file (OpenDP, the optional ``dp`` extra), compared with the records as the
k-anonymous release is, and the two releases side by side.

``private_section(copy, view, inspect)`` draws it: the choices (columns, method, the budget
as ε with δ or as ρ, the public cuts and bounds of number columns, confirmed by the user,
the column to predict, more pairs, the records to synthesize), the plan with its time
estimated before running (or the sentence refusing it), the run with its progress, and the
result: its checks, the two releases side by side, the distributions, every marginal's
total variation beside the two baselines, a contingency table, the tree trained on the
release and tested on real records (the comparison is the privacy officer's, never in the
package), and the private package, holding what was chosen before the run. The value lists
and suggested cuts are used only once declared public (the checkbox), else OpenDP finds the
lists (δ > 0); with the person role, ε protects the person; the open project's privacy
budget is shown, a release past it is refused, and each run spends its ε in the project's
audit log before OpenDP reads the records. Without OpenDP it says in one
sentence how to install it. A release is random (fresh noise, no seed): it is kept in the
session, never recomputed on a rerun, and its package is built once.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from anonlib.core.errors import AnonlibError, PrivacyExtraMissingError
from anonlib.projects import budget_of, spend_privacy
from anonlib.projects.audit import DASHBOARD
from anonlib.transformations.synthesis import (
    DEFAULT_METHOD,
    DEFAULT_TIME_LIMIT,
    MAX_DELTA,
    MAX_RECORDS_PER_PERSON,
    MAX_ROWS,
    METHODS,
    ROWS_FACTOR,
    NumberCuts,
    default_number_cuts,
    needs_cuts,
    parse_cuts,
    privacy_budget,
    require_opendp,
)
from anonlib.workflow import WorkingCopy
from anonlib.workflow.private_package import private_package
from anonlib.workflow.private_release import (
    CHECKS,
    FAILED_SENTENCE,
    PrivateRelease,
    default_private_predict,
    plan_private,
    private_release,
    several_records_per_person,
)
from anonlib.workflow.release_view import ReleaseView, shown_columns

from .charts import distribution_figure, marginals_figure, private_tree_figure
from .progress import throttled
from .state import current_project, ensure_project, project_store, role
from .team import team_mode, user_label
from .ui import guarded, opened, plain, row, show_table

DEFAULT_EPSILON = 3.0
METHOD_NAMES = {"pairs": "pairs", "mst": "MST", "aim": "AIM"}  # short, to fit the box; the plan says the rest
STATE = "private_release_made"
PACKAGE_HELP = (
    "synthetic.csv (when the synthetic table was chosen), dp_tables.csv (the DP one- and two-way tables), "
    "recipe.json (what the release states; it cannot be re-applied: fresh noise), README.txt (what differential "
    "privacy promises and what it does not) and SHA256SUMS: OpenDP's output and your declared settings only. "
    "Check it with python -m anonlib verify private.zip. The comparison above stays with you."
)
SHIP_NAMES = {"synthetic": "the synthetic table (and the DP tables)", "tables": "the DP tables only"}


@dataclass(frozen=True)
class PrivateChoices:
    """What the user chose for a private release (the arguments of ``private_release``)."""

    columns: tuple[str, ...]
    method: str
    epsilon: float | None
    delta: float
    rho: float | None
    cuts: tuple[NumberCuts, ...]
    predict: str | None
    pairs: tuple[tuple[str, str], ...]
    rows: int | None
    confirmed: bool
    problems: tuple[str, ...] = ()  # sentences refusing a choice (cuts that do not read)
    ship: str = "synthetic"  # what the package holds, chosen before the run
    suggested: bool = False  # cuts suggested from the data are among the choices (they need the declaration)
    records_per_person: int = 1  # with the person role: the records kept per person, at most

    def arguments(self) -> dict:
        return dict(
            epsilon=self.epsilon,
            delta=self.delta,
            rho=self.rho,
            method=self.method,
            cuts=self.cuts,
            predict=self.predict,
            pairs=self.pairs,
            rows=self.rows,
            values_from_data=self.confirmed,
            records_per_person=self.records_per_person,
        )

    @property
    def runnable(self) -> bool:
        """Every value list and cut is declared public, or OpenDP finds the lists (δ > 0) and no cut was
        suggested from the data."""
        return self.confirmed or (self.delta > 0 and not self.suggested)


def releasable_columns(copy: WorkingCopy) -> list[str]:
    """The loaded file's columns a private release may hold: every column but identifiers,
    the person and the record-count columns."""
    loaded = copy.loaded
    skipped = {*loaded.identifiers, loaded.person, loaded.count}
    return [str(c) for c in loaded.frame.columns if c not in skipped]


def releases_side_by_side(view: ReleaseView | None, made: PrivateRelease) -> pd.DataFrame:
    """The k-anonymous release (the working copy's, ``view``) and the private release, measure by
    measure: a table of three columns (the measure, each release's value in words)."""
    s, c = made.synthesis, made.comparison
    tree = c.tree
    rows: list[tuple[str, str, str]] = [
        (
            "what the recipient gets",
            "the records of real people, generalized and suppressed where needed",
            "synthetic records drawn from a DP model: no record is a real person's",
        ),
        (
            "privacy",
            "" if view is None else f"{view.target}; met: {'yes' if view.met else 'no' if view.met is False else '?'}",
            s.budget.sentence(),
        ),
        (
            "holds against",
            "an attacker who knows the quasi-identifiers (and the models of the target)",
            f"any attacker, whatever they know, up to the factor e^ε per {s.unit}",
        ),
        (
            "records",
            ""
            if view is None
            else f"{view.released_records:,} of {view.loaded_records:,} (suppressed {view.suppressed_records:,})",
            f"{s.rows:,} synthetic (from about {s.records_estimate:,.0f} records, a DP count)",
        ),
        (
            "columns",
            "" if view is None else ", ".join(v.column for v in view.columns),
            ", ".join(s.columns),
        ),
    ]
    if tree is not None:
        same = view is not None and view.classifier is not None and view.classifier.column == tree.column
        k_tree = (
            f"{100 * view.classifier.released.mean:.1f}% right, cross-validated on the release"
            if same
            else f"choose {tree.column} as the column to predict above"
        )
        rows.append(
            (
                f"a tree predicting {tree.column}",
                k_tree,
                f"{100 * tree.released.accuracy:.1f}% of real records right, trained on the release "
                f"(trained on real records: {100 * tree.real.accuracy:.1f}%)",
            )
        )
    rows.append(
        (
            "checks",
            "" if view is None else ("the target is met" if view.met else "the target is not met"),
            "passed" if c.passed else "failed (reported here; the package is what was chosen)",
        )
    )
    return pd.DataFrame(rows, columns=["", "k-anonymous release", "private release"])


# --------------------------------------------------------------------------- the choices


def _choices(copy: WorkingCopy) -> PrivateChoices:
    loaded = copy.loaded
    options = releasable_columns(copy)
    defaults = [c for c in shown_columns(copy) if c in options] or options[:4]
    columns = st.multiselect(
        "Columns to release",
        options,
        default=defaults,
        key="private_columns",
        help="The private release is made from the loaded file (not the working copy): the noise protects it.",
    )
    left, middle, right = st.columns(3)
    method = left.selectbox(
        "Method",
        list(METHODS),
        index=list(METHODS).index(DEFAULT_METHOD),
        format_func=lambda m: METHOD_NAMES.get(m, m),
        key="private_method",
        help="; ".join(f"{METHOD_NAMES[m]}: {text}" for m, text in METHODS.items())
        + ". MST is the default (docs/dp.md says why); AIM's rounds and model size are capped.",
    )
    given = middle.radio("Budget given as", ["ε", "ρ"], horizontal=True, key="private_budget_as")
    if given == "ε":
        epsilon = middle.number_input(
            "ε", min_value=0.001, max_value=100.0, value=DEFAULT_EPSILON, step=0.5, format="%g", key="private_epsilon"
        )
        rho = None
    else:
        epsilon = None
        rho = middle.number_input(
            "ρ (zero-concentrated)",
            min_value=1e-7,
            max_value=100.0,
            value=1.0,
            step=0.1,
            format="%g",
            key="private_rho",
        )
    delta = right.number_input(
        "δ",
        min_value=0.0,
        max_value=MAX_DELTA,
        value=0.0 if given == "ε" else 1e-6,
        step=1e-7,
        format="%g",
        key=f"private_delta_{given}",
        help="0: pure differential privacy (Laplace noise). A small probability such as 1e-6: zero-concentrated "
        "DP (Gaussian noise), stated as (ε, δ).",
    )
    predictable = [None, *columns]
    default = default_private_predict(columns, loaded.sensitive)
    predict = right.selectbox(
        "Column to predict",
        predictable,
        index=predictable.index(default) if default in predictable else 0,
        format_func=lambda c: "(none)" if c is None else c,
        key="private_predict",
        help="Its pairs with every other column are measured (MST adds them to its tree; the pairs method measures "
        "only them), and the tree predicts it (a number column's bin).",
    )
    pairs: list[tuple[str, str]] = []
    if method != "mst" and len(columns) >= 3:
        star = {frozenset((c, predict)) for c in columns}
        candidates = [p for p in itertools.combinations(columns, 2) if frozenset(p) not in star]
        chosen = left.multiselect(
            "More pairs to measure",
            [" × ".join(p) for p in candidates],
            key="private_pairs",
            help="Two-way tables measured besides the column to predict crossed with every other (AIM: the tables "
            "it may choose from). The list is published with the release.",
        )
        pairs = [tuple(p.split(" × ", 1)) for p in chosen]
    rows = left.number_input(
        "Records to synthesize",
        min_value=1,
        max_value=MAX_ROWS,
        value=None,
        step=1000,
        placeholder=f"{ROWS_FACTOR} × the records",
        key="private_rows",
        help=f"Default: {ROWS_FACTOR} times the DP count of the records (less sampling noise in the table).",
    )
    cuts = []
    numbers = [c for c in columns if needs_cuts(loaded.frame[c])]
    problems = []
    if numbers:
        st.markdown("**Public cuts and bounds of number columns** (written LOWER:c1,c2,...:UPPER)")
        boxes = st.columns(min(len(numbers), 3))
        for i, column in enumerate(numbers):
            try:
                suggested = default_number_cuts(loaded.frame[column], column)
                text = boxes[i % len(boxes)].text_input(
                    plain(column),
                    value=f"{suggested.lower:g}:{','.join(f'{c:g}' for c in suggested.cuts)}:{suggested.upper:g}",
                    key=f"private_cuts_{column}",
                    help="Suggested from the column's typed hierarchy (its first level of bands), read from this "
                    "file: bounds taken from the data leak, so write what is publicly known.",
                )
                cuts.append(parse_cuts(column, text))
            except AnonlibError as err:  # said under the box; the release waits for cuts that read
                st.error(plain(str(err)))
                problems.append(str(err))
    confirmed = st.checkbox(
        "The value lists of these columns and the cuts and bounds above are public knowledge",
        key="private_confirmed",
        help="Declared public, they are read from this file and released as they are, not protected by the noise. "
        "Without this, OpenDP finds the value lists privately (δ > 0 needed; rare values are left out), and cuts "
        "must not be the ones suggested from the data.",
    )
    per_person = 1
    if loaded.person is not None:  # the person role: ε protects the person, OpenDP bounds each one's records
        per_person = st.number_input(
            f"Records kept per person ({loaded.person} marks each person)",
            min_value=1,
            max_value=MAX_RECORDS_PER_PERSON,
            value=1,
            step=1,
            key="private_records_per_person",
            help="Declared, not read from the file: OpenDP keeps at most this many records of each person, drawn at "
            "random, before measuring; ε is then per person.",
        )
        st.caption(
            plain(
                f"The unit protected is the person ({loaded.person}): at most {int(per_person)} record"
                f"{'s' if per_person != 1 else ''} each, any more left out at random before measuring."
            )
        )
    else:
        warning = several_records_per_person(loaded.frame, skip=columns)
        if warning:
            st.warning(plain(warning.replace("give --person", "give the person role to")))
    ship = st.radio(
        "The package holds",
        list(SHIP_NAMES),
        format_func=SHIP_NAMES.get,
        horizontal=True,
        key="private_ship",
        help="Chosen before the run: the comparison with the records never decides what ships.",
    )
    return PrivateChoices(
        tuple(columns),
        method,
        None if epsilon is None else float(epsilon),
        float(delta),
        None if rho is None else float(rho),
        tuple(cuts),
        predict,
        tuple(pairs),
        None if rows is None else int(rows),
        bool(confirmed),
        tuple(problems),
        str(ship),
        bool(numbers),
        int(per_person),
    )


# --------------------------------------------------------------------------- the section


def private_section(copy: WorkingCopy, view: ReleaseView | None, inspect: str | None) -> None:
    """The private section of the Release page (see the module text)."""
    st.header("Private release")
    st.write(
        "Some recipients should get no record of a real person at all: a synthetic table drawn from noisy counts "
        "of the loaded file, whose privacy is a number (ε, with δ) that holds whatever the attacker knows. It is "
        "compared with the records exactly as the k-anonymous release above, beside two baselines."
    )
    if team_mode() and role() not in ("owner", "analyst"):  # a viewer or approver spends no budget
        st.caption(f"Your role in this project is {role()}: an analyst or the owner makes its private releases.")
        return
    try:
        require_opendp()
    except PrivacyExtraMissingError as err:  # the dp extra is not installed: how to install it, in one sentence
        st.info(plain(str(err)))
        return
    choices = None
    with guarded("reading the private release's choices"):
        choices = _choices(copy)
    if choices is None:
        return
    plan = None
    past_budget = None
    if not choices.problems:  # cuts that do not read are said under their boxes
        with guarded("planning the private release"):
            budget = privacy_budget(choices.epsilon, choices.delta, rho=choices.rho)
            st.caption(plain(f"Budget: {budget.sentence()}."))
            past_budget = _project_budget(budget)
            plan = plan_private(
                copy.loaded,
                choices.columns,
                method=choices.method,
                cuts=choices.cuts,
                predict=choices.predict,
                pairs=choices.pairs,
                time_limit=DEFAULT_TIME_LIMIT,
            )
            st.caption(plain(f"Plan: {plan.sentence()}"))
    if plan is not None and not choices.runnable:
        st.caption(
            "Confirm that the value lists, cuts and bounds are public knowledge to make the release (or, without "
            "number columns, give δ > 0 for OpenDP to find the value lists privately)."
        )
    if st.button(
        "Make the private release",
        type="primary",
        disabled=plan is None or not choices.runnable or past_budget is not None,
        key="private_run",
        help="OpenDP measures the tables with noise, fits a model and draws the records; each run spends the "
        "budget again and gives another table.",
    ):
        _run(copy, choices)
    made = st.session_state.get(STATE)
    if made is not None and made["fingerprint"] == copy.loaded.fingerprint:
        if made["choices"] != choices:
            st.caption("The release below was made with earlier choices; it states them in its package.")
        _show(made, view, inspect)


def _run(copy: WorkingCopy, choices: PrivateChoices) -> None:
    bar = st.progress(0.0, text="starting")

    @throttled
    def progress(stage: str, share: float) -> None:
        bar.progress(min(max(share, 0.0), 1.0), text=stage)

    store, project = project_store(), ensure_project()

    def spend(budget) -> None:  # every input checked, before OpenDP reads the records: spent from here on
        if store is not None and project is not None:
            spend_privacy(
                store,
                project.id,
                epsilon=budget.epsilon,
                delta=budget.delta,
                source_name=str(copy.loaded.name),
                source_sha256=copy.reading.sha256 if copy.reading is not None else None,
                records=len(copy.loaded.frame),
                made_by=DASHBOARD,
                user=user_label(),  # the signed-in user spends it (None: the operating-system user)
            )

    with guarded("making the private release"):
        made = private_release(
            copy.loaded, choices.columns, **choices.arguments(), progress=progress, before_measuring=spend
        )
        sha = copy.reading.sha256 if copy.reading is not None else None
        st.session_state[STATE] = {
            "fingerprint": copy.loaded.fingerprint,
            "choices": choices,
            "release": made,
            "sha256": sha,
            "packages": {},
        }
    bar.empty()


def _project_budget(budget) -> str | None:
    """The open project's privacy budget, shown; the sentence refusing this release when it would pass the
    total (None when it fits, or no project or total is set)."""
    store, project = project_store(), current_project()
    if store is None or project is None:
        st.caption("Each private release is recorded with its ε and δ in the project's audit log once it is saved.")
        return None
    held = budget_of(store, project.id)
    st.caption(plain(f"Privacy budget of the project {held.sentence()} Each run spends its ε again."))
    problems = []
    if held.epsilon_left is not None and budget.epsilon > held.epsilon_left * (1 + 1e-9) + 1e-12:
        problems.append(
            f"This release would spend ε = {budget.epsilon:g}, past the project's budget: ε = "
            f"{held.epsilon_spent:g} of {held.epsilon_total:g} is spent and {held.epsilon_left:g} is left; choose ε at "
            "most what is left (or raise the total: python -m anonlib projects budget NAME --epsilon E)."
        )
    if held.delta_left is not None and budget.delta > held.delta_left * (1 + 1e-9):
        problems.append(
            f"This release would spend δ = {budget.delta:g}, past the project's budget: δ = {held.delta_spent:g} of "
            f"{held.delta_total:g} is spent and {held.delta_left:g} is left."
        )
    if problems:
        st.error(plain(problems[0]))
        return problems[0]
    return None


def _package(made: dict) -> bytes:
    """The private package, built once per release (it states the time it was made), holding what was chosen
    before the run."""
    ship = made["choices"].ship
    packages = made["packages"]
    if ship not in packages:
        release: PrivateRelease = made["release"]
        packages[ship] = private_package(release.synthesis, ship=ship)
    return packages[ship]


def _show(made: dict, view: ReleaseView | None, inspect: str | None) -> None:
    release: PrivateRelease = made["release"]
    s, c = release.synthesis, release.comparison
    st.subheader("The private release")
    st.write(plain(s.sentence()))
    if c.passed:
        st.success("The synthetic table passes its checks.")
    else:
        st.warning(plain(FAILED_SENTENCE))
    m = row()
    m.metric("synthetic records", f"{s.rows:,}")
    m.metric("ε", f"{s.budget.epsilon:.4g}", help=plain(s.budget.sentence()))
    m.metric("δ", f"{s.budget.delta:g}")
    m.metric("ρ", f"{s.budget.rho:.4g}", help="The same budget in zero-concentrated terms.")
    m.metric("largest one-way total variation", f"{c.oneway_max:.4f}")
    m.metric("mean two-way total variation", f"{c.twoway_mean:.4f}")
    m.metric("seconds", f"{s.seconds:.0f}", help=f"Estimated before running: about {s.estimate:.0f} s.")
    st.markdown("\n".join(f"- {plain(sentence)}" for sentence in c.sentences()))
    st.caption(plain("The checks a synthetic table must pass: " + "; ".join(CHECKS) + "."))

    st.subheader("The two releases side by side")
    st.table(releases_side_by_side(view, release).set_index(""))  # whole sentences, wrapped
    names = list(s.columns)
    column = st.selectbox(
        "Column to compare",
        names,
        index=names.index(inspect) if inspect in names else 0,
        key="private_compare_column",
    )
    left, right = st.columns(2)
    with left:
        st.markdown("**k-anonymous release**")
        if view is not None and column in [v.column for v in view.columns]:
            st.plotly_chart(
                distribution_figure(view.column(column), title=f"{column}: records per value"),
                width="stretch",
                key="private_k_distribution",
            )
        else:
            st.caption(plain(f"{column} is not a quasi-identifier or sensitive attribute of the k-anonymous release."))
    with right:
        st.markdown("**Private release**")
        st.plotly_chart(
            distribution_figure(
                c.column(column), shares=True, release="private release", title=f"{column}: % of records per value"
            ),
            width="stretch",
            key="private_distribution",
        )

    st.subheader("Every one- and two-way marginal")
    st.plotly_chart(marginals_figure(c), width="stretch", key="private_marginals")
    with opened("Total variation of every marginal (table)", key="private_marginals_open") as shown:
        if shown:
            show_table(
                pd.DataFrame(
                    {
                        "columns": [" × ".join(m.columns) for m in c.marginals],
                        "private release": [m.release for m in c.marginals],
                        "two halves of the real records": [m.halves for m in c.marginals],
                        "columns drawn independently": [m.independent for m in c.marginals],
                    }
                ),
                key="private_marginals_table",
            )
    if c.pair is not None:
        a, b = c.pair.columns
        st.subheader(plain(f"{a} by {b}: share of records (%)"))
        left, right = st.columns(2)
        for side, which, title in ((left, "before", "Loaded file"), (right, "after", "Private release")):
            frame = c.pair.frame(which)
            total = frame.to_numpy().sum() or 1
            with side:
                st.markdown(f"**{title}**")
                st.dataframe((100 * frame / total).round(2), width="stretch", key=f"private_pair_{which}")
    if c.tree is not None:
        st.subheader(plain(f"Predicting {c.tree.column}: trained on the release, tested on real records"))
        st.plotly_chart(private_tree_figure(c.tree), width="stretch", key="private_tree")

    st.subheader("Private package")
    st.caption(plain(f"It holds {SHIP_NAMES[made['choices'].ship]}, as chosen before the run."))
    try:
        data = _package(made)
    except AnonlibError as err:
        st.error(plain(str(err)))
        return
    if team_mode():  # four eyes: a team's private release is drafted and approved (synthesize --project)
        st.info(
            "In a team, a private package is handed out only after a second person approves it: make it with "
            "python -m anonlib synthesize --project, which keeps it as a draft for approval."
        )
        return
    st.download_button(
        "Private package (zip)",
        data,
        file_name="private.zip",
        mime="application/zip",
        key="dl-private-package",
        help=PACKAGE_HELP,
        type="primary",
        on_click="ignore",
    )
    st.caption(
        "A private release cannot be reproduced from its recipe: OpenDP draws fresh noise on every run and takes "
        "no seed, by design. Each release from the same file spends its own budget."
    )


__all__ = ["PrivateChoices", "private_section", "releasable_columns", "releases_side_by_side"]
