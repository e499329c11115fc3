"""The Release page's private section: a differentially private synthetic table of the
loaded file (OpenDP, the optional ``dp`` extra), compared with the records as the
k-anonymous release is, and the two releases side by side.

``private_section(copy, view, inspect)`` draws it: the choices (columns, method, the budget
as ε with δ or as ρ, the public bounds and cuts of number columns, typed by the user and
never suggested from the records, the column to predict, more pairs, the records to
synthesize), the budget the release states (OpenDP's map of the whole release, settled
before any record is read: ``plan_budget``), the plan with its time estimated before
running (or the sentence refusing it), the run with its progress, and the result: its
checks, the two releases side by side, the distributions, every marginal's total variation
beside the two baselines, a contingency table, the tree trained on the release and tested
on real records (the comparison is the privacy officer's, never in the package), and the
private package, holding what was chosen before the run.

The same accounting, budget and refusals as ``synthesize``: the value lists are used only
once declared public (the checkbox, and a second one naming the values held by fewer than
20 records), else OpenDP finds them (δ > 0, which spends δ of its own); with the person
role, ε protects the person and the records kept per person are asked for; the file's
privacy budget (kept by its SHA-256 across every project) is read from the store before
and after every run, a release past it or over a broken audit chain is refused, and each
run spends its stated ε and δ in the audit log before OpenDP reads the records. When the
store cannot be used, no release is made (its spend could not be recorded). Without OpenDP
it says in one sentence how to install it. A release is random (fresh noise, no seed): it is
kept in the session, never recomputed on a rerun, and its package is built once.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from anonlib.core.errors import AnonlibError, PrivacyExtraMissingError, join_names
from anonlib.core.fingerprint import file_fingerprint
from anonlib.core.samples import SAMPLES, sample_sha256
from anonlib.projects import charges, file_budget, spend_privacy, spending_refusal
from anonlib.projects.audit import DASHBOARD
from anonlib.transformations.synthesis import (
    DEFAULT_METHOD,
    DEFAULT_TIME_LIMIT,
    MAX_DELTA,
    MAX_RECORDS_PER_PERSON,
    MAX_ROWS,
    METHODS,
    RARE_RECORDS,
    BudgetPlan,
    NumberCuts,
    needs_cuts,
    parse_cuts,
    plan_budget,
    privacy_budget,
    rare_values,
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
from anonlib.workflow.release import digest, release_csv
from anonlib.workflow.release_view import ReleaseView, shown_columns

from .charts import distribution_figure, marginals_figure, private_tree_figure
from .progress import throttled
from .state import ensure_project, project_store, role, store_problem
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
    waiting: tuple[str, ...] = ()  # what the run waits for (bounds, records per person, rare values confirmed)
    unbounded: tuple[str, ...] = ()  # number columns whose public bounds are not given yet (no plan without them)
    records_per_person: int | None = None  # with the person role: the records kept per person, declared

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
        """Nothing is waited for, and every value list is declared public or found by OpenDP (δ > 0)."""
        return not self.waiting and (self.confirmed or self.delta > 0)


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
    roles = [c for c in shown_columns(copy) if c in options]
    # preselected: the roles' columns that need no bounds (a number column waits for bounds the user knows)
    defaults = [c for c in roles if not needs_cuts(loaded.frame[c])] or [
        c for c in options if not needs_cuts(loaded.frame[c])
    ][:4]
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
        value=0.0 if given == "ε" else MAX_DELTA / 2,  # ρ needs δ; half the cap leaves OpenDP room to find lists
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
        placeholder="the DP count of the records",
        key="private_rows",
        help="Default: the DP count of the records (the model's total), so that a table's standard errors are "
        "those of a file of that size.",
    )
    left_out = [c for c in roles if c not in columns and needs_cuts(loaded.frame[c])]
    if left_out:
        st.caption(
            plain(
                f"{join_names(left_out)} hold numbers and are not preselected: add them with their public bounds "
                "(what is known without this file)."
            )
        )
    cuts = []
    numbers = [c for c in columns if needs_cuts(loaded.frame[c])]
    problems, waiting, unbounded = [], [], []
    if numbers:
        st.markdown(
            "**Public bounds (and cuts) of number columns**, written LOWER:UPPER (round cuts inside them) or "
            "LOWER:c1,c2,...:UPPER"
        )
        boxes = st.columns(min(len(numbers), 3))
        for i, column in enumerate(numbers):
            text = boxes[i % len(boxes)].text_input(
                plain(column),
                value="",
                placeholder="e.g. 0:120 or 0:20,40,60:120",
                key=f"private_cuts_{column}",
                help="What is known without this file (a questionnaire's range, a published band): nothing is "
                "suggested from the records, whose extremes are single people's values. Values outside the bounds "
                "are counted in the end bins, and how many is said after the run.",
            )
            if not text.strip():
                waiting.append(f"the public bounds of {column}")
                unbounded.append(column)
                continue
            try:
                cuts.append(parse_cuts(column, text))
            except AnonlibError as err:  # said under the box; the release waits for cuts that read
                st.error(plain(str(err)))
                problems.append(str(err))
    confirmed = st.checkbox(
        "The value lists of these columns are public knowledge",
        key="private_confirmed",
        help="Declared public, they are read from this file and released as they are, not protected by the noise. "
        "Without this, OpenDP finds the value lists privately (δ > 0 needed, and finding them spends δ of its own; "
        "values held by few records are left out).",
    )
    if confirmed:
        rare = rare_values(loaded.frame, [c for c in columns if c not in {x.column for x in cuts}])
        if rare:
            st.warning(
                plain(
                    f"Declaring these lists public releases values held by fewer than {RARE_RECORDS} records each: "
                    + "; ".join(f"{c}: {', '.join(v)}" for c, v in rare.items())
                    + ". Each names few people."
                )
            )
            if not st.checkbox(
                f"These values held by fewer than {RARE_RECORDS} records are public knowledge too",
                key="private_confirmed_rare",
            ):
                waiting.append(
                    f"your confirmation that the values held by fewer than {RARE_RECORDS} records are public"
                )
    per_person = None
    if loaded.person is not None:  # the person role: ε protects the person, OpenDP bounds each one's records
        per_person = st.number_input(
            f"Records kept per person ({loaded.person} marks each person)",
            min_value=1,
            max_value=MAX_RECORDS_PER_PERSON,
            value=None,
            step=1,
            placeholder="how many records one person has by the file's design",
            key="private_records_per_person",
            help="Declared, not read from the file (8 for a panel of eight yearly waves): OpenDP keeps at most this "
            "many records of each person, drawn at random, before measuring; ε is then per person.",
        )
        if per_person is None:
            waiting.append(f"the records kept per person ({loaded.person})")
            st.caption(plain(f"The unit protected is the person ({loaded.person}): give the records kept per person."))
        else:
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
        columns=tuple(columns),
        method=method,
        epsilon=None if epsilon is None else float(epsilon),
        delta=float(delta),
        rho=None if rho is None else float(rho),
        cuts=tuple(cuts),
        predict=predict,
        pairs=tuple(pairs),
        rows=None if rows is None else int(rows),
        confirmed=bool(confirmed),
        problems=tuple(problems),
        ship=str(ship),
        waiting=tuple(waiting),
        unbounded=tuple(unbounded),
        records_per_person=None if per_person is None else int(per_person),
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
    plan = budget = None
    if not choices.problems:  # cuts that do not read are said under their boxes
        with guarded("planning the private release"):
            if choices.confirmed or choices.delta > 0:  # else the lists wait for the declaration (said below)
                budget = plan_budget(
                    choices.columns,
                    epsilon=choices.epsilon,
                    delta=choices.delta,
                    rho=choices.rho,
                    method=choices.method,
                    cuts=[c.column for c in choices.cuts],
                    values_from_data=choices.confirmed,
                    predict=choices.predict,
                    pairs=choices.pairs,
                    person=copy.loaded.person is not None,
                )
                st.caption(
                    plain(f"Budget stated (OpenDP's privacy map of the whole release): {budget.stated.sentence()}.")
                )
                if budget.sentence():
                    st.caption(plain(budget.sentence()))
            else:
                asked = privacy_budget(choices.epsilon, choices.delta, rho=choices.rho)
                st.caption(plain(f"Budget: {asked.sentence()}."))
            if not choices.unbounded:  # a number column without bounds cannot be planned: its box says so
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
    line = st.empty()  # the file's privacy budget, read from the store (again after a run)
    refused = _budget_line(line, copy, budget)
    if choices.waiting:
        st.info(plain(f"The release waits for {join_names(choices.waiting)}."))
    elif plan is not None and not choices.runnable:
        st.caption(
            "Confirm that the value lists are public knowledge to make the release, or give δ > 0 for OpenDP to "
            "find them privately (finding them spends δ of its own)."
        )
    if st.button(
        "Make the private release",
        type="primary",
        disabled=plan is None or budget is None or not choices.runnable or refused is not None,
        key="private_run",
        help="OpenDP measures the tables with noise, fits a model and draws the records; each run spends the "
        "budget again and gives another table.",
    ):
        _run(copy, choices)
        _budget_line(line, copy, budget)  # what the store says now, after the run's spend
    made = st.session_state.get(STATE)
    if made is not None and made["fingerprint"] == copy.loaded.fingerprint:
        if made["choices"] != choices:
            st.caption("The release below was made with earlier choices; it states them in its package.")
        _show(made, view, inspect)


def data_identity(copy: WorkingCopy) -> tuple[str, str]:
    """(SHA-256, name) the file's privacy budget is kept by: the uploaded file's bytes, a bundled
    sample's file, or (a table made without a file) the table written as CSV."""
    name = str(copy.loaded.name)
    if copy.reading is not None and copy.reading.sha256:
        return copy.reading.sha256, name
    source = str(st.session_state.get("active_source") or "")
    if source.startswith("sample:") and source[7:] in SAMPLES:
        return sample_sha256(source[7:]), name
    return _table_digest(copy.loaded.fingerprint, copy.loaded.frame), name


@st.cache_data(show_spinner=False, max_entries=8)
def _table_digest(fingerprint: str, _frame: pd.DataFrame) -> str:
    """The SHA-256 of a table written as CSV, kept per table (its fingerprint): written once, not at every rerun."""
    return digest(release_csv(_frame))


def no_store_sentence() -> str:
    """Why no private release is made: its spend cannot be recorded (the store cannot be used)."""
    why = (store_problem() or "The project store cannot be used.").rstrip(".")
    return f"No private release is made while its spend cannot be recorded ({why[:1].lower()}{why[1:]})."


def _budget_line(line, copy: WorkingCopy, budget: BudgetPlan | None) -> str | None:
    """The file's privacy budget as the store holds it now, drawn in ``line``; the sentence refusing
    this release (no store to record its spend, a broken audit chain, a total passed), or None."""
    store = project_store()
    if store is None:
        refusal = no_store_sentence()
        line.error(plain(refusal))
        return refusal
    sha, name = data_identity(copy)
    held = file_budget(store, sha, name)
    refusal = None
    if budget is not None:
        refusal = spending_refusal(store, sha, name, epsilon=budget.stated.epsilon, delta=budget.stated.delta)
    with line.container():
        st.caption(
            plain(f"Privacy budget of {held.sentence()} Each run spends its ε again, in every project over this file.")
        )
        if refusal is not None:
            st.error(plain(refusal))
    return refusal


def _run(copy: WorkingCopy, choices: PrivateChoices) -> None:
    store = project_store()
    if store is None:  # never a release whose spend is not recorded
        st.error(plain(no_store_sentence()))
        return
    bar = st.progress(0.0, text="starting")

    @throttled
    def progress(stage: str, share: float) -> None:
        bar.progress(min(max(share, 0.0), 1.0), text=stage)

    project = ensure_project()
    sha, name = data_identity(copy)
    people = file_fingerprint(copy.loaded.frame, copy.loaded.person)  # the budget follows the people
    for charge in charges(store, sha, people):
        st.info(plain(charge.sentence()))

    def spend(stated) -> None:  # every input checked, before OpenDP reads the records: spent from here on
        spend_privacy(
            store,
            None if project is None else project.id,
            epsilon=stated.epsilon,
            delta=stated.delta,
            source_name=name,
            source_sha256=sha,
            records=len(copy.loaded.frame),
            made_by=DASHBOARD,
            user=user_label(),  # the signed-in user spends it (None: the operating-system user)
            fingerprint=people,
        )

    with guarded("making the private release"):
        made = private_release(
            copy.loaded, choices.columns, **choices.arguments(), progress=progress, before_measuring=spend
        )
        st.session_state[STATE] = {
            "fingerprint": copy.loaded.fingerprint,
            "choices": choices,
            "release": made,
            "sha256": sha,
            "packages": {},
        }
    bar.empty()


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
