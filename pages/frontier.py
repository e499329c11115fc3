"""Risk-utility frontier page: which generalization policies give the best trade-off
between re-identification risk and information loss, on the working copy?

Opens on the working copy's quasi-identifiers; a chosen policy is offered as a
step (its cost said first) and applied with the sidebar's history. HIPAA Safe
Harbor is beaten only by policies that also meet the release target's k. The
paper's example (Adult with a synthetic Tennessee ZIP) is at the bottom, closed
until switched on."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from anonlib.core.budget import duration_text
from anonlib.core.dataset import Dataset, Role
from anonlib.transformations.frontier import (
    DEFAULT_THRESHOLD,
    METHODS,
    FrontierSearch,
    dominating,
    estimate_explore,
    explore,
    lattice_size_text,
    prepare,
    safe_harbor_policy,
)
from anonlib.transformations.synthetic import TENNESSEE_ZIP_SEED, adult_with_zip, zip3_populations
from anonlib.workflow import PolicyStep, WorkingCopy, step_cost
from anonlib.workflow.cost import preselect
from dashboard import charts
from dashboard.frontier_views import category_orders, policy_details, population_table, safe_harbor_section
from dashboard.glossary import glossary_expander, term_help
from dashboard.memo import memo, on_request, with_bar
from dashboard.state import active_dataset, roles_key, target_key, unit_target, working_copy
from dashboard.ui import guarded, offer_step, page_header, paper_example, plain

PAGE = "Frontier"
EXAMPLE = "Adult + synthetic Tennessee ZIP (the paper's example)"
EXAMPLE_QIS = ["age", "sex", "race", "zip"]
METHOD_NAMES = {
    "shs": "SHS: sublattice heuristic search",
    "rcs": "RCS: random chain search",
    "exhaustive": "Exhaustive (up to 2^20 policies)",
}
# The searches cost about half a millisecond per policy whatever the file's size, so the default
# budget (1,000 policies, the other heuristic beside) takes about a second even on a small file:
# they are computed at once up to this estimate, and wait for a button beyond (about 10^5 records).
SEARCH_INSTANT_SECONDS = 1.5
SMALL_LATTICE_BITS = 14  # up to 2^14 policies the exact optimum is computed alongside a heuristic


@st.cache_data(show_spinner=False, max_entries=2)
def _example_frame(seed: int) -> pd.DataFrame:
    return adult_with_zip(seed=seed)


@st.cache_data(show_spinner=False, max_entries=2)
def _zip3() -> dict[str, int]:
    return zip3_populations()


def _space(fingerprint, qis, orders, population_key, count, population_count, frame, population):
    """The policy lattice of these inputs (distinct rows counted once), kept per input: the searches
    and their time estimate share it."""
    key = (fingerprint, qis, orders, population_key, count, population_count)
    return memo("frontier.space", 8).compute(
        key,
        lambda: prepare(
            frame,
            list(qis),
            orders={a: list(v) for a, v in orders},
            population=population,
            count=count,
            population_count=population_count,
        ),
    )


def _searches(method: str, compare: bool, common: dict, instant: float) -> tuple | None:
    """The chosen search, the other heuristic (``compare``) and the exact optimum on a small
    lattice, at once when they are kept or estimated within a moment, else behind a button that
    says how long they take (None until it is pressed)."""
    methods = [method] + (["rcs" if method == "shs" else "shs"] if compare and method in ("shs", "rcs") else [])
    space = _space(
        common["fingerprint"],
        common["qis"],
        common["orders"],
        common["population_key"],
        common["count"],
        common["population_count"],
        common["_frame"],
        common["_population"],
    )
    if method != "exhaustive" and space.n_bits <= SMALL_LATTICE_BITS:
        methods.append("exhaustive")  # cheap here: show how close the search got

    def run() -> tuple:
        results = {m: _search(method=m, **common) for m in methods}
        optimum = results.pop("exhaustive").area if method != "exhaustive" and "exhaustive" in results else None
        return results.pop(method), results, optimum

    key = (*(v for k, v in common.items() if not k.startswith("_")), tuple(methods))
    seconds = sum(estimate_explore(space, m, common["budget"]).seconds for m in methods)
    return on_request(
        "frontier.searches",
        key,
        run,
        seconds=seconds,
        what="the frontier",
        button_key=f"{PAGE}_run_searches",
        instant=instant,
    )


def _search(
    fingerprint: str,
    qis: tuple,
    orders: tuple,
    population_key: str | None,
    count: str | None,
    population_count: str | None,
    method: str,
    budget: int,
    threshold: float,
    seed: int,
    _frame: pd.DataFrame,
    _population: pd.DataFrame | None,
) -> FrontierSearch:
    """One search, computed once per data fingerprint and parameters (kept in a memo, not
    st.cache_data: a cached function never calls a Streamlit element, dashboard.memo says why),
    with a progress bar while it runs."""
    key = (fingerprint, qis, orders, population_key, count, population_count, method, budget, threshold, seed)
    label = method.upper()

    def search(report) -> FrontierSearch:
        space = _space(fingerprint, qis, orders, population_key, count, population_count, _frame, _population)
        return explore(
            space,
            method,
            budget,
            seed=seed,
            threshold=threshold,
            progress=lambda done, total, area: report(
                done / max(total, 1),
                f"{label}: {done:,} of {total:,} policies evaluated, area under the frontier {area:.4f}",
            ),
        )

    return with_bar("frontier.search", key, search, text=f"{label}: starting")


def _checks(key: tuple, make, space, frontier: list, instant: float, rows: int) -> tuple | None:
    """The target's check after each frontier policy (``WorkingCopy.checks_after`` on the working
    copy ``make()`` gives), kept per search, target and working copy in a memo (st.cache_data would
    copy them on every hit), with a progress bar while they are judged. Each policy's step is built
    and judged on its own (about 30 ms per policy on a 1,945-row panel whose day has a thousand
    values: 538 policies took 16 s), so when the frontier's ``rows`` distinct rows and values say it
    would take longer than ``instant`` seconds, they wait for a button that says how long (None until
    then)."""
    kept = memo("frontier.checks", 8).get(key)
    if kept is not None:
        return kept

    def judge(report) -> tuple:
        steps = []
        for i, e in enumerate(frontier):
            steps.append(PolicyStep.from_space(space, e.bits))
            report(0.5 * (i + 1) / max(len(frontier), 1), f"Built {i + 1:,} of {len(frontier):,} frontier policies")
        return make().checks_after(
            tuple(steps),
            progress=lambda done, total: report(
                0.5 + 0.5 * done / max(total, 1), f"Judged {done:,} of {total:,} frontier policies against the target"
            ),
        )

    pressed = f"{PAGE}_judge_policies:pressed"
    if not st.session_state.get(pressed) and frontier:
        seconds = _judging_seconds(space, len(frontier), rows)
        if seconds > instant:
            st.button(
                f"Judge the {len(frontier):,} frontier policies against the release target "
                f"(about {duration_text(max(seconds, 1.0))})",
                key=f"{PAGE}_judge_policies",
                on_click=st.session_state.__setitem__,
                args=(pressed, True),
            )
            return None
    st.session_state.pop(pressed, None)
    return with_bar(
        "frontier.checks", key, judge, text="Judging the frontier policies against the release target", max_entries=8
    )


# Building and judging one frontier policy, measured on a 1,945-row panel (day, stage, person: 1,030
# values, 1,945 distinct rows; 538 policies in 16 s): a fixed part, each value of the columns (the
# step's intervals) and each distinct row the check counts
POLICY_SECONDS, SECONDS_PER_VALUE, SECONDS_PER_ROW = 0.004, 1.6e-5, 5e-6


def _judging_seconds(space, policies: int, rows: int) -> float:
    """Seconds to build and judge ``policies`` frontier policies of ``space`` on ``rows`` distinct rows."""
    values = sum(len(d) for d in space.domains)
    return policies * (POLICY_SECONDS + SECONDS_PER_VALUE * values + SECONDS_PER_ROW * rows)


def _removed(entry) -> tuple[str, ...]:
    """The quasi-identifiers a frontier policy turns into one value (every boundary of a column of two
    or more values dropped), read off its bits: ``PolicyStep.from_space(space, bits).removed``
    without building the step (16 ms a policy on a thousand visit days).

    >>> from types import SimpleNamespace
    >>> _removed(SimpleNamespace(bits={"day": (0, 0), "stage": (1,), "sex": ()}))
    ('day',)
    """
    return tuple(a for a, b in entry.bits.items() if len(b) > 0 and not any(b))


@st.cache_data(show_spinner=False, max_entries=16)
def _frontier_ks(key: tuple, _result: FrontierSearch) -> tuple[int, ...]:
    """k (the smallest class, in records) of every frontier policy, cached with the search."""
    space = _result.space
    return tuple(int(space.class_sizes(space.bits_of(e.bits)).min()) for e in _result.frontier)


def _safe_harbor(space, frontier: list) -> tuple:
    """HIPAA Safe Harbor placed on the policy lattice: its policy, (risk, normalized loss), k (its
    smallest class, in records) and the frontier policies lower on both axes; kept per search (about
    0.8 s on a panel of a thousand visit days, not redone when only the target changes)."""
    policy = safe_harbor_policy(space, zip3_population=_zip3())
    bits = space.bits_of(policy.bits)
    risk, loss = space.evaluate(bits)
    placed = (risk, loss / space.top_loss if space.top_loss > 0 else 0.0)
    return policy, placed, int(space.class_sizes(bits).min()), dominating(frontier, risk, loss)


def _policy_label(i: int, entry, k: int, meets: bool | None, dominant: bool, removed: tuple[str, ...]) -> str:
    text = f"#{i + 1}: k = {k:,}, risk {entry.risk:.4f}, loss {entry.loss_normalized:.4f}"
    if dominant:
        text += " - meets the target and dominates Safe Harbor"
    elif meets is False:
        text += " - fails the target"
    if removed:
        text += " - removes the quasi-identifier " + ", ".join(removed)
    return text


def _frontier_section(
    p: str,
    frame: pd.DataFrame | None,
    release: pd.DataFrame | None,
    columns: list[str],
    default_qis: list[str],
    fingerprint: str,
    count: str | None,
    dataset: Dataset | None,
) -> None:
    """The whole frontier workflow on one table. ``p`` prefixes widget keys; ``dataset`` is
    the working copy (a chosen policy can be applied as a step) or None (the paper's example)."""
    target = unit_target()
    qis = st.multiselect(
        "Quasi-identifiers",
        columns,
        default=default_qis,
        key=f"{p}_qis_{fingerprint}",
        help=term_help("quasi-identifier"),
    )
    if dataset is not None and qis:
        frame, dropped = dataset.analysis_frame(qis)
        if dropped:
            st.caption(f"{dropped:,} rows with missing values are left out of the search.")
    orders = category_orders(p, frame, qis, fingerprint) if qis and frame is not None else {}
    population = population_key = population_count = upload = None
    if dataset is not None:
        population, population_key, population_count, upload = population_table(p, qis, count)

    method_column, seed_column = st.columns([3, 1])  # the method's full name fits a 1024 px window on its own row
    method = method_column.selectbox("Method", list(METHODS), format_func=METHOD_NAMES.get, key=f"{p}_method")
    seed = int(seed_column.number_input("Seed", min_value=0, max_value=10**9, value=1, step=1, key=f"{p}_seed"))
    budget_column, threshold_column = st.columns(2)
    budget = budget_column.slider(
        "Budget (policies evaluated)", 100, 20_000, 1_000, step=100, key=f"{p}_budget", disabled=method == "exhaustive"
    )
    threshold = threshold_column.slider(
        "SHS threshold on H", 0.0, 1.0, DEFAULT_THRESHOLD, step=0.05, key=f"{p}_threshold", disabled=method != "shs"
    )
    compare = st.checkbox(
        "Also run the other heuristic with the same budget (area-vs-budget chart)", value=True, key=f"{p}_compare"
    )
    colours = st.selectbox("Colours", list(charts.PALETTES), key=f"{p}_colours")

    if not qis or frame is None:
        st.info("Choose at least one quasi-identifier.")
        return
    common = dict(
        fingerprint=fingerprint,
        qis=tuple(qis),
        orders=tuple((a, tuple(v)) for a, v in sorted(orders.items())),
        population_key=population_key,
        count=count,
        population_count=population_count,
        budget=int(budget),
        threshold=float(threshold),
        seed=seed,
        _frame=frame,
        _population=population,
    )
    # the paper's example is one fixed input, searched once per server and kept: always at once
    searched = _searches(method, compare, common, SEARCH_INSTANT_SECONDS if dataset is not None else float("inf"))
    if searched is None:
        st.info(
            "The frontier of these settings is computed when you press the button above: at this size it takes "
            "longer than a slider should wait. Settings already searched show at once."
        )
        return
    result, others, optimum = searched

    space = result.space
    frontier = list(result.frontier)
    m = st.columns(3)  # three per row: the labels fit a 1024 px window
    m[0].metric(
        "policies in the lattice",
        f"2^{space.n_bits}" if space.n_bits > 16 else lattice_size_text(space.n_bits),
        help=f"{lattice_size_text(space.n_bits)} policies ({space.n_bits} bits)",
    )
    m[1].metric("policies evaluated", f"{result.n_evaluated:,}")
    m[2].metric("frontier policies", f"{len(frontier):,}", help=term_help("frontier"))
    m = st.columns(3)
    m[0].metric("area", f"{result.area:.4f}", help="Area under the frontier's step curve; smaller is better.")
    m[1].metric("search time", f"{result.seconds:.2f} s")
    st.caption(
        f"Risk (x axis) is {'distinguishability against the uploaded population' if space.has_population else 'the number of classes after the policy divided by the number before (your data are their own population)'}: "
        "0 = nobody can be told apart, 1 = as identifiable as the original. Information loss (y axis) is the KL "
        f"divergence divided by that of merging everything ({space.top_loss:.4f} nats)."
    )

    key = (fingerprint, tuple(qis), common["orders"], population_key, method, int(budget), float(threshold), seed)
    ks = _frontier_ks(key, result)
    removed = [_removed(e) for e in frontier]
    # "meets the target" is the release target's one check of the policy applied (in its unit, with
    # its models and suppression limit), never k read off the class sizes alone
    # (WorkingCopy.checks_after: the check apply(...).check gives, counted on the distinct rows; _checks)
    if dataset is not None:
        copy = working_copy()
        which, make = (roles_key(copy.current), copy.current.fingerprint), lambda: copy
    else:  # the paper's example: a working copy of its quasi-identifiers, built only on a miss
        roles = {a: Role.QUASI_IDENTIFIER for a in qis} | ({count: Role.COUNT} if count else {})
        which, make = ("example",), lambda: WorkingCopy.start(Dataset.from_frame("example", frame, roles), target)
    instant = SEARCH_INSTANT_SECONDS if dataset is not None else float("inf")
    source = dataset.frame if dataset is not None else frame
    counted = [c for c in (*qis, *(dataset.owners if dataset is not None else ())) if c in source.columns]
    rows = len(source[counted].drop_duplicates())  # the distinct rows each policy's check counts
    checks = _checks((key, target_key(target), which), make, space, frontier, instant, rows)
    if checks is None:  # not judged yet: the chosen policy is judged below when it is offered
        meets: list[bool | None] = [None] * len(frontier)
        st.info(
            "The frontier policies are not yet judged against the release target (the button above): the list "
            "preselects the least loss that keeps every quasi-identifier, and the chosen policy is judged below."
        )
    else:
        meets = [c is not None and c.met_after_suppression for c in checks]

    # HIPAA Safe Harbor: dominance is claimed only for policies that meet the target k
    harbor = None
    harbor_k = None
    lower_both: list = []
    better: list = []
    harbor_policy = None
    with guarded("placing HIPAA Safe Harbor"):
        harbor_policy, harbor, harbor_k, lower_both = memo("frontier.harbor", 8).compute(
            key, lambda: _safe_harbor(space, frontier)
        )
        better = [e for e in lower_both if meets[frontier.index(e)]]

    default_pick = preselect(
        [bool(r) for r in removed],
        meets=None if checks is None else meets,
        preferred=[e in better for e in frontier],
        losses=[e.loss for e in frontier],
    )
    pick_key = f"{p}_pick_{len(frontier)}_{result.area:.6f}_{target.k}"
    chart_key = f"{p}_chart_{pick_key}"
    clicked = charts.clicked_frontier_policy(st.session_state.get(chart_key), len(frontier))
    if clicked is not None and st.session_state.get(f"{p}_applied_click") != (chart_key, clicked):
        st.session_state[f"{p}_applied_click"] = (chart_key, clicked)  # apply each click once
        st.session_state[pick_key] = clicked
    if default_pick is None and checks is None:
        st.warning("Every frontier policy found turns a quasi-identifier into a single value, so none is preselected.")
    elif default_pick is None:
        meeting = [i for i in range(len(frontier)) if meets[i]]
        st.warning(
            f"No frontier policy found meets the release target ({target.describe()}) without turning a quasi-identifier "
            "into a single value, so none is preselected. "
            + (
                f"{len(meeting)} meet it by removing a quasi-identifier. "
                if meeting
                else f"The largest k here is {max(ks):,}. "
            )
            + "A larger budget, fewer quasi-identifiers, or suppressing the remaining records after a policy "
            "(sidebar) may get there."
        )
    pick = st.selectbox(
        "Frontier policy to inspect (or click a point of the frontier line)",
        list(range(len(frontier))),
        index=default_pick,
        format_func=lambda i: _policy_label(i, frontier[i], ks[i], meets[i], frontier[i] in better, removed[i]),
        key=pick_key,
    )
    chosen = frontier[pick] if pick is not None else None
    st.plotly_chart(
        charts.frontier_figure(
            result.evaluated_risk,
            result.evaluated_loss,
            [e.risk for e in frontier],
            [e.loss_normalized for e in frontier],
            safe_harbor=harbor,
            dominating=([e.risk for e in better], [e.loss_normalized for e in better]) if better else None,
            selected=(chosen.risk, chosen.loss_normalized) if chosen is not None else None,
            colours=colours,
        ),
        width="stretch",
        on_select="rerun",
        selection_mode="points",
        key=chart_key,
    )

    if harbor is not None:
        safe_harbor_section(harbor, harbor_k, harbor_policy, frontier, better, lower_both, ks, meets, target.k)

    if len(result.trace) > 0:
        traces = {result.method: list(result.trace)}
        traces.update({name: list(r.trace) for name, r in others.items()})
        st.plotly_chart(
            charts.area_trace_figure(traces, result.budget, optimum=optimum, colours=colours), width="stretch"
        )
        if optimum is not None:
            st.caption(
                f"The exhaustive optimum of this {space.n_policies:,}-policy lattice is {optimum:.4f}; "
                f"{result.method.upper()} reached {result.area / optimum:.3f} times it."
            )
        if others:
            name, other = next(iter(others.items()))
            st.caption(
                f"After {min(100, result.budget)} policies: {result.method.upper()} "
                f"{result.area_after(100):.4f}, {name.upper()} {other.area_after(100):.4f}; at the full "
                f"budget: {result.area:.4f} vs {other.area:.4f}."
            )

    if chosen is None:
        st.info("Choose a policy above (or click a point of the frontier line) to see what it costs.")
        return
    policy_details(
        p,
        pick,
        chosen,
        space,
        PolicyStep.from_space(space, chosen.bits),
        release,
        dataset,
        target_k=target.k,
        result=result,
        ks=ks,
        qis=qis,
        orders=orders,
        upload=upload,
        population=population,
        seed=seed,
        harbor=harbor,
        harbor_k=harbor_k,
        better=better,
        frontier=frontier,
        name=dataset.name if dataset is not None else EXAMPLE,
        apply_policy=_apply_policy,
    )


def _apply_policy(dataset: Dataset, step: PolicyStep) -> None:
    """What the policy does to the working copy, whether the result meets the release
    target (in records), and the button that applies it as a step."""
    if not step.attributes:
        st.info("This policy keeps every value (the working copy as it is): nothing to apply.")
        return
    preview = offer_step(step, step_cost(step, dataset), PAGE, "policy", "fr_apply")
    st.dataframe(preview.current.frame.head(200), hide_index=True, height=240)
    st.caption(
        f"First {min(200, len(preview.current.frame))} of {len(preview.current.frame):,} rows of the working "
        "copy after this policy."
    )


# --- the page ------------------------------------------------------------------------

page_header(
    "Risk-utility frontier",
    "Which ways of coarsening your quasi-identifiers (age bands, merged categories, shorter ZIP codes) "
    "give the lowest re-identification risk for a given loss of information, and does HIPAA Safe "
    "Harbor sit on that frontier or could a policy that also meets your target k be better on both counts?",
    "- A **policy** cuts each quasi-identifier's ordered values into contiguous intervals "
    "(e.g. ages 17-25, 26-40, ...). As a bit-string, bit *i* = 1 keeps the boundary between value *i* "
    "and *i+1*; all ones is the original data, all zeros merges everything.\n"
    "- **Risk** (x axis, 0-1): without a population table, the number of classes after the policy "
    "divided by the number before. With a population table, each record counts 1 / (people in the "
    "population who match its generalized values), divided by the same sum for the original data "
    "(Benitez et al.'s distinguishability).\n"
    "- **Information loss** (y axis, 0-1): the KL divergence between the original distribution of "
    "the quasi-identifiers and the generalized one (records spread evenly over the values of their "
    "intervals), divided by the KL of merging everything. The raw KL (in nats) is in the tables.\n"
    "- The **frontier** (step line) holds the evaluated policies no other evaluated policy beats on "
    "both axes. The **area** under it measures how good the search was: smaller is better.\n"
    "- **k** next to each policy is the size of its smallest class in records; only policies meeting the "
    "release target's k (sidebar) are called better than Safe Harbor.\n"
    "- **SHS** probes random sublattices and walks one only when the frontier could improve there "
    "(H above the threshold); **RCS** walks random chains from the original data to the top. "
    "The budget is the number of distinct policies evaluated.\n"
    "- The **star** is HIPAA Safe Harbor (3-digit ZIP, ages 90+ merged); squares are frontier policies "
    "that meet the target k and strictly dominate it: lower or equal risk and loss, one of them strictly lower.\n"
    "- **Applying** a policy adds a step to the working copy (sidebar), which you can undo.",
    "Xia, Heatherly, Ding, Li & Malin, Efficient discovery of de-identification policies through a "
    "risk-utility frontier (CODASPY 2013)",
)

dataset: Dataset = active_dataset()
with guarded("searching the risk-utility frontier"):
    columns = [c for c in dataset.frame.columns if c != dataset.count and c not in dataset.identifiers]
    if not dataset.quasi_identifiers:
        st.info(
            "Mark the quasi-identifiers (columns an attacker could know) on the Dataset page, or choose "
            "them here. The paper's example is at the bottom of the page."
        )
    st.caption(
        f"Working copy {plain(dataset.name)}: {dataset.n_records:,} records. Target: "
        f"{plain(unit_target().describe())} (sidebar)."
    )
    _frontier_section(
        "fr",
        None,
        None,
        columns,
        [c for c in dataset.quasi_identifiers if c in columns],
        f"{dataset.fingerprint}:{dataset.missing}",
        dataset.count,
        dataset,
    )

glossary_expander(
    ["record", "quasi-identifier", "class", "k", "policy", "frontier", "distinguishability", "KL loss", "Safe Harbor"]
)


def _example() -> None:
    with guarded("running the paper's example"):
        frame = _example_frame(TENNESSEE_ZIP_SEED)
        st.caption(
            "Adult (UCI, 32,561 records) with a synthetic 5-digit Tennessee ZIP per record, drawn in "
            f"proportion to the 2010 population of ZIP areas 37010-38589 (seed {TENNESSEE_ZIP_SEED})."
        )
        _frontier_section(
            "frx", frame, frame, list(frame.columns), EXAMPLE_QIS, f"adult+tn-zip:{TENNESSEE_ZIP_SEED}", None, None
        )


paper_example("Adult with a synthetic Tennessee ZIP", "Xia et al. 2013", _example, "frontier_paper")
