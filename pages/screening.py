"""Screening schedules page: appointments that keep people anonymous (Caballero et al.)."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from anonlib.core.cells import records_in
from anonlib.core.equivalence import class_sizes
from anonlib.core.errors import AnonlibError, ProblemTooLargeError
from anonlib.core.loading import load_table
from anonlib.core.samples import load_sample, sample_path
from anonlib.measures.avector import hardy_ramanujan, k_of, partition_count, population_of, scientific, vector_text
from anonlib.transformations.schedule import (
    DEFAULT_RULE,
    METHODS,
    OPTIMAL_LIMIT,
    RULES,
    ScheduleComparison,
    compare_methods,
    estimate_assign,
    generate_slots,
)
from anonlib.transformations.schedule_experiments import (
    PAPER_TABLE10,
    PAPER_TABLE11,
    registry_experiment,
    reproduce_table10,
    table11_synthetic,
)
from dashboard import charts
from dashboard.memo import memo, on_request, with_bar
from dashboard.state import active_dataset, release_target
from dashboard.ui import download_csv, download_json, guarded, page_header, paper_example, plain, row, show_table

PAPER = "Bundled example: the paper's Table 7 (15 records)"
DATASET = "Your working copy"
NONE = "(none)"
CENSUS_PEOPLE = 50  # rank among all schedules only up to this many records
INSTANT_VARIABLES = (
    5_000  # an optimum of more decision variables per level waits for its button (may take the time limit)
)
RULE_HELP = {
    "largest": "fill the resource with the most free seats (the paper's worked example)",
    "closest_half": "fill the resource whose free seats are closest to half the group (the paper's text)",
    "largest_at_most_half": "fill the largest resource with at most half the group (the paper's pseudo-code)",
}


# The computations that report progress are kept in memos, not st.cache_data: a cached function
# never calls a Streamlit element (dashboard.memo says why).
def _compare(key: str, params: tuple, population: pd.DataFrame, resources: pd.DataFrame) -> ScheduleComparison:
    """The schedules compared, computed once per (population, resources, parameters), with a status box."""
    found = memo("screening.compare", 32).get((key, params))
    if found is not None:
        return found
    qis, count, group, methods, rule, seed, time_limit, fair, share = params
    with st.status("Computing the schedules...", expanded=False) as status:
        comparison = compare_methods(
            population,
            resources,
            list(qis),
            methods=methods,
            count=count,
            group=group,
            rule=rule,
            seed=seed,
            time_limit=time_limit,
            fair_attribute=fair,
            max_share=share,
            skip_too_large=True,
            progress=lambda done, total, what: status.update(
                label=f"Optimal schedule: {what}; {done:,} of {total:,} records in settled classes"
            ),
        )
        status.update(label="Schedules ready", state="complete")
    return memo("screening.compare", 32).put((key, params), comparison)


def _optimal_seconds(params: tuple, population: pd.DataFrame, resources: pd.DataFrame) -> float:
    """How long the optimum may take (up to its time limit), or 0 when it starts at once: a small
    problem, or one the solver refuses at once (the comparison then says why)."""
    try:
        freqs = class_sizes(population, list(params[0]), count=params[1])
        capacities = pd.to_numeric(resources["capacity"], errors="coerce").dropna().astype(int).to_numpy()
        estimate = estimate_assign(freqs, capacities, "optimal", time_limit=params[6])
    except (AnonlibError, KeyError, ValueError):  # bad resources: the comparison says why in one sentence
        return 0.0
    return 0.0 if estimate.operations <= INSTANT_VARIABLES or estimate.operations > OPTIMAL_LIMIT else estimate.seconds


@st.cache_data(show_spinner=False, max_entries=32)
def _census(key: str, params: tuple, _comparison: ScheduleComparison):
    try:
        return _comparison.census()
    except ProblemTooLargeError:
        return None


@st.cache_data(show_spinner=False)
def _registry(rule: str):
    return registry_experiment(rule)


def _paper_resources() -> pd.DataFrame:
    return load_table(sample_path("caballero_resources.csv")).frame


def _reset_resources(state_key: str, frame: pd.DataFrame) -> None:
    st.session_state[state_key] = frame
    st.session_state[f"{state_key}-version"] = st.session_state.get(f"{state_key}-version", 0) + 1


page_header(
    "Screening schedules",
    "Which screening appointments keep participants anonymous once the centre, day and hour are "
    "published with their data? Compare a random schedule, the paper's heuristic and the optimal one.",
    "**Generalized k-anonymity.** The anonymity vector counts the classes of records that share all "
    "quasi-identifier values (now including their appointment) by size: entry j is the number of "
    "classes of exactly j records. A schedule is more anonymous when its vector is smaller read from "
    "the left (fewer groups of 1, then fewer of 2, ...), which refines plain k-anonymity.\n\n"
    "- **k** is the size of the smallest group; k = 1 means someone is alone with their values.\n"
    "- **Lexicographic index**: how many of the p(N) possible vectors of N records are less "
    "anonymous; exact (it can have hundreds of digits), also shown in scientific notation.\n"
    "- **Improvement** of schedule A over B = (index(A) - index(B)) / index(before appointments): "
    "100% means A keeps all the anonymity B loses.\n"
    "- **Proven optimal**: the solver proved no schedule has a smaller vector; otherwise the time "
    "limit stopped it with the best schedule found.",
    "Caballero, Sen & Nygård, 'Anticipating Anonymity in Screening Program Databases' "
    "(Algorithms 1 and 2, Tables 7-11)",
)

# --- population ----------------------------------------------------------------------
source = st.radio(
    "Records",
    [DATASET, PAPER],
    horizontal=True,
    key="scr_source",
    help="Your working copy, or the paper's worked example as an explicit choice.",
)
count = None
rows_dropped = 0
ready = False  # set at the end of the block: everything below needs its population, qis and resources
with guarded("preparing the population"):
    if source == PAPER:
        sample = load_sample("caballero_table2b")
        population = sample.frame
        qis = ["ZIP", "Gender", "Age"]
        source_id = "paper"
        st.caption(
            "15 records of Table 2(b); quasi-identifier ZIP, gender and age band, frequencies "
            "f = (4, 4, 5, 2) as in Table 7(a). Resources of Table 7(b): centres A, B, C at 9h and 13h."
        )
        default_resources = _paper_resources()
    else:
        dataset = active_dataset()
        choices = [c for c in dataset.frame.columns if c not in dataset.identifiers and c != dataset.count]
        qis = st.multiselect(
            "Quasi-identifier: the columns an attacker may know",
            choices,
            default=[c for c in dataset.quasi_identifiers if c in choices],
            key=f"scr_qis-{dataset.fingerprint}",
        )
        population, rows_dropped = dataset.analysis_frame(qis)
        count = dataset.count
        source_id = f"{dataset.fingerprint}-{dataset.missing}"
        st.caption(
            f"Your working copy ({plain(dataset.name)}): {dataset.n_records:,} records."
            + (f" {rows_dropped:,} rows with missing values are left out." if rows_dropped else "")
        )
        people = records_in(population, count)
        slots = 3 * 5 * 4
        seats_per_slot = max(1, math.ceil(1.1 * people / slots))
        default_resources = generate_slots(capacity=seats_per_slot)
        st.info(
            f"Schedules need appointment slots, which your file does not hold. Below are 3 centres x 5 days x 4 "
            f"hours of about {seats_per_slot:,} seats each, sized to seat all {people:,} "
            "records: edit them, or generate others (centres x days x hours). The bundled example (the paper's "
            "Table 7) is a choice under Records."
        )
    ready = True
if not ready:  # guarded has shown why; the rest of the page cannot run without a population
    st.stop()

# --- resources -------------------------------------------------------------------------
st.subheader("Resources (appointment slots)")
state_key = f"scr_resources-{source_id}"
if state_key not in st.session_state:
    _reset_resources(state_key, default_resources)
with st.expander("Generate slots: centres x days x hours"):
    g = st.columns(6)
    n_centres = g[0].number_input("centres", 1, 200, 3, key="scr_gen_centres")
    n_days = g[1].number_input("days", 1, 366, 5, key="scr_gen_days")
    hours_text = g[2].text_input("hours", "9, 11, 13, 15", key="scr_gen_hours")
    capacity = g[3].number_input("capacity per slot", 1, 100_000, 10, key="scr_gen_capacity")
    noise = g[4].number_input("noise (%)", 0, 100, 20, key="scr_gen_noise")
    gen_seed = g[5].number_input("seed", 0, 10**6, 0, key="scr_gen_seed")
    b1, b2 = st.columns(2)
    if b1.button("Replace the table with these slots", key="scr_generate"):
        with guarded("generating slots"):
            hours = [int(h) for h in hours_text.replace(";", ",").split(",") if h.strip()]
            _reset_resources(state_key, generate_slots(n_centres, n_days, hours, capacity, noise / 100, gen_seed))
    if b2.button("Back to the default resources", key="scr_default_resources"):
        _reset_resources(state_key, default_resources)
resources = st.data_editor(
    st.session_state[state_key],
    num_rows="dynamic",
    hide_index=True,
    width="stretch",
    height=min(38 + 35 * (len(st.session_state[state_key]) + 1), 300),
    key=f"{state_key}-editor-{st.session_state[f'{state_key}-version']}",
    column_config={"capacity": st.column_config.NumberColumn("capacity", step=1)},
)
seats = pd.to_numeric(resources["capacity"], errors="coerce").sum() if "capacity" in resources else 0
st.caption(f"{len(resources):,} slots, {int(seats):,} seats in total.")

# --- method ----------------------------------------------------------------------------
st.subheader("Methods")
methods = st.multiselect(
    "Schedules to compare", list(METHODS), default=["random", "heuristic", "optimal"], key="scr_methods"
)
c2, c3, c4 = st.columns([1.4, 1.4, 1])  # the methods above on a row of their own: never cut at 1024 px
rule = c2.selectbox(
    "Heuristic split rule",
    list(RULES),
    index=RULES.index(DEFAULT_RULE),
    key="scr_rule",
    help="; ".join(f"{r}: {t}" for r, t in RULE_HELP.items()),
)
time_limit = c3.slider("Time limit for the optimum (s)", 1, 120, 10, key="scr_time_limit")
seed = c4.number_input("Random seed", 0, 10**6, 0, key="scr_seed")
group_options = [NONE] + [c for c in resources.columns if c in population.columns and c != "capacity"]
group = st.selectbox("Keep records in their own group (region column in both tables)", group_options, key="scr_group")
with st.expander("Fairness (ethical point E2, optimal schedule only)"):
    fair = st.selectbox("Attribute", [NONE] + list(qis), key="scr_fair")
    share = st.slider("No resource may have more than this share of one value (%)", 10, 100, 100, key="scr_share")

# --- results ---------------------------------------------------------------------------
comparison = None
with guarded("computing the schedules"):
    if not methods:
        st.info("Choose at least one method to compare.")
    else:
        params = (
            tuple(qis),
            count,
            None if group == NONE else group,
            tuple(m for m in ("random", "heuristic", "optimal") if m in methods),
            rule,
            int(seed),
            float(time_limit),
            None if fair == NONE else fair,
            None if fair == NONE else share / 100,
        )
        key = f"{source_id}|{pd.util.hash_pandas_object(resources.astype(str), index=False).sum()}"
        if "optimal" in params[3]:  # the solver may run up to its time limit: on request unless small
            comparison = on_request(
                "screening.compare",
                (key, params),
                lambda: _compare(key, params, population, resources),
                seconds=_optimal_seconds(params, population, resources),
                what="the optimal schedule",
                button_key="scr_optimal",
                max_entries=32,
            )
            if comparison is None:
                st.caption("The optimal schedule waits for the button (the solver may take up to the time limit).")
                params = (*params[:3], tuple(m for m in params[3] if m != "optimal"), *params[4:])
        if comparison is None and params[3]:
            comparison = _compare(key, params, population, resources)

if comparison is not None:
    results = comparison.results
    for method, reason in comparison.skipped.items():
        st.warning(f"The {method} schedule was not computed: {reason}")
    st.subheader("Results")
    m = row()
    m.metric(
        "k before appointments",
        k_of(comparison.base_vector),
        help=f"anonymity vector {vector_text(comparison.base_vector)}",
    )
    for method, result in results.items():
        m.metric(f"k, {method}", result.k, help=f"anonymity vector {vector_text(result.vector)}")
    gains = []
    for better, worse in (("heuristic", "random"), ("optimal", "heuristic"), ("optimal", "random")):
        if better in results and worse in results:
            gains.append((f"{better} over {worse}", comparison.improvement(better, worse)))
    if gains:
        g = row()
        for label, value in gains:
            g.metric(f"improvement, {label}", f"{100 * value:.2f}%")
    target_k = release_target().k
    # the most anonymous schedule; on a tie the later method (optimal, then heuristic, then random)
    best = max(reversed(list(results)), key=lambda m_: results[m_].k) if results else None
    if best is not None:
        reached = results[best].k
        (st.success if reached >= target_k else st.warning)(
            f"The release target asks k = {target_k}: the {best} schedule reaches k = {reached}"
            + (
                "."
                if reached >= target_k
                else f"; {sum(j * n for j, n in enumerate(results[best].vector, start=1) if j < target_k):,} "
                f"records are in classes smaller than {target_k} once their appointment is published."
            )
        )
    if "optimal" in results:
        proven = results["optimal"].proven_optimal
        st.caption(
            "Optimal schedule: proven optimal."
            if proven
            else f"Optimal schedule: the {time_limit} s time limit stopped the solver; this is the best schedule found."
        )
    vectors = {"before": comparison.base_vector, **{m_: r.vector for m_, r in results.items()}}
    st.plotly_chart(charts.schedule_vectors_figure(vectors), width="stretch")
    summary = comparison.summary()
    # the census enumerates every schedule: only small problems (the library refuses the others,
    # but only after up to 20 s of counting)
    census = (
        _census(key, params, comparison)
        if params[2] is None and population_of(comparison.base_vector) <= CENSUS_PEOPLE
        else None
    )
    if census is not None:
        summary["rank among all schedules"] = [
            f"{census.at_most(v):,} of {census.total:,}"
            for v in [comparison.base_vector] + [r.vector for r in results.values()]
        ]
        summary.loc[0, "rank among all schedules"] = "-"
        st.caption(
            f"This problem has {census.total:,} feasible schedules; {census.at_least_k(2):,} of them are "
            "2-anonymous or better. Rank = schedules with a vector at least as anonymous."
        )
    show_table(summary)
    people = population_of(comparison.base_vector)
    st.caption(
        f"N = {people:,} records have p(N) = {scientific(partition_count(people))} possible anonymity vectors "
        f"(Hardy-Ramanujan approximation {hardy_ramanujan(people):.4g}); the index counts those less anonymous."
    )

    inspect = st.selectbox("Schedule to inspect and download", list(results), index=len(results) - 1, key="scr_inspect")
    chosen = results[inspect]
    loads = chosen.loads
    label_columns = [c for c in loads.columns if c not in ("capacity", "assigned")]
    labels = (
        loads[label_columns].astype(str).fillna("-").agg(" ".join, axis=1) if label_columns else loads.index.astype(str)
    )
    st.plotly_chart(charts.resource_load_figure(labels, loads["capacity"], loads["assigned"]), width="stretch")
    schedule_table = chosen.schedule  # built on request: once
    show_table(schedule_table.head(500), data=True)
    st.caption(f"First {min(500, len(schedule_table)):,} of {len(schedule_table):,} rows of the {inspect} schedule.")
    with row():
        download_csv(f"The {inspect} schedule (CSV)", schedule_table, f"schedule_{inspect}.csv", key="scr_dl_csv")
        download_json(
            "Parameters and results (JSON)",
            {
                "population": source,
                "quasi_identifiers": list(qis),
                "count_column": count,
                "rows_dropped": rows_dropped,
                "resources": resources.to_dict(orient="records"),
                "group": None if group == NONE else group,
                "rule": rule,
                "seed": int(seed),
                "time_limit_s": time_limit,
                "fairness": None if fair == NONE else {"attribute": fair, "max_share": share / 100},
                "before": {"vector": list(comparison.base_vector), "index": comparison.base_index},
                "schedules": {
                    method: {
                        "vector": list(r.vector),
                        "k": r.k,
                        "index": r.index,
                        "proven_optimal": r.proven_optimal,
                        "seconds": r.seconds,
                    }
                    for method, r in results.items()
                },
                "improvements": {label: value for label, value in gains},
            },
            "screening_schedules.json",
            key="scr_dl_json",
        )


# --- the paper's experiments --------------------------------------------------------------
def _experiments() -> None:
    """The paper's experiments (Tables 10 and 11, the registry day), reproduced with a seed."""
    st.subheader("Table 10: random populations")
    PROTOCOL_TEXT = {
        "spec": "as the paper's text states: Q = N/100 + 5 values with frequencies around N/Q (20% standard "
        "deviation); slots of about 10 seats (20% deviation) drawn until they seat everyone.",
        "authors": "as the authors' published code does: Q = N/100 + 5 values with frequencies uniform in "
        "[N/Q - 5, N/Q + 10]; N/10 slots of 5 to 14 seats, raised until they seat everyone.",
    }
    protocol = st.radio(
        "Protocol",
        list(PROTOCOL_TEXT),
        horizontal=True,
        key="scr_t10_protocol",
        format_func=lambda p: {"spec": "paper's text", "authors": "authors' code"}[p],
    )
    st.caption(f"Random populations {PROTOCOL_TEXT[protocol]} The paper averaged 10,000 runs (N <= 250) or 1,000.")
    sizes = st.multiselect("Population sizes N", list(PAPER_TABLE10), default=list(PAPER_TABLE10), key="scr_t10_sizes")
    t = st.columns(4)
    runs = t[0].number_input("runs per N", 1, 10_000, 20, key="scr_t10_runs")
    t10_seed = t[1].number_input("seed", 0, 10**6, 0, key="scr_t10_seed")
    optimal_runs = t[2].number_input("optima per N (N <= 50)", 0, 1000, 2, key="scr_t10_optimal")
    optimal_limit = t[3].number_input("time limit per optimum (s)", 1, 600, 5, key="scr_t10_limit")
    if st.button("Run Table 10", key="scr_t10_run"):
        with guarded("reproducing Table 10"):
            table10_key = (tuple(sorted(sizes)), int(runs), int(t10_seed), int(optimal_runs), float(optimal_limit))
            st.session_state["scr_t10"] = with_bar(
                "screening.table10",
                (*table10_key, protocol),
                lambda progress: reproduce_table10(
                    table10_key[0],
                    table10_key[1],
                    seed=table10_key[2],
                    optimal_runs=table10_key[3],
                    optimal_time_limit=table10_key[4],
                    protocol=protocol,
                    progress=progress,
                ),
            )
    table10 = st.session_state.get("scr_t10")
    if table10 is not None:
        show_table(table10.frame)
        left, right = st.columns(2)
        left.plotly_chart(
            charts.table10_figure(
                table10.frame, "heuristic / random (%)", "paper heuristic / random (%)", "Heuristic over random"
            ),
            width="stretch",
        )
        small = table10.frame.dropna(subset=["paper optimal / heuristic (%)"])
        right.plotly_chart(
            charts.table10_figure(
                small, "optimal / heuristic (%)", "paper optimal / heuristic (%)", "Optimal over heuristic"
            ),
            width="stretch",
        )
        download_csv("Table 10 reproduction (CSV)", table10.frame, "table10.csv", key="scr_t10_csv")

    st.subheader("A real screening day: Cancer Registry of Norway")
    with guarded("running the registry experiment"):
        registry = _registry(rule)
        st.caption(
            f"{registry.people:,} people invited on one day, quasi-identifier birth year, "
            f"{registry.centres} centres of {registry.capacity_per_centre} seats (the authors' fixture)."
        )
        r = row()
        r.metric("k: birth year only", registry.k["base"])
        r.metric("k: real assignment", registry.k["actual"])
        r.metric(f"k: heuristic ({rule})", registry.k["heuristic"])
        r.metric(
            "improvement vs real",
            f"{100 * registry.improvement:.2f}%",
            help="anonymity improvement of the heuristic over the real assignment",
        )
        show_table(
            pd.DataFrame(
                {
                    "schedule": ["birth year only", "real assignment", "heuristic"],
                    "anonymity vector": [vector_text(v) for v in (registry.base, registry.actual, registry.heuristic)],
                    "lexicographic index (scientific)": [
                        scientific(registry.indices[k]) for k in ("base", "actual", "heuristic")
                    ],
                }
            )
        )

    st.subheader("Table 11 shape: synthetic regions")
    st.caption(
        "Five regions with 13, 4, 3, 3 and 3 centres and the paper's people per screening date; birth "
        "year is the quasi-identifier; the 'real' assignment is random. The paper used 282 monthly dates."
    )
    u = st.columns(2)
    dates = u[0].slider("screening dates per region", 1, 60, 6, key="scr_t11_dates")
    t11_seed = u[1].number_input("seed", 0, 10**6, 0, key="scr_t11_seed")
    if st.button("Run Table 11 (synthetic)", key="scr_t11_run"):
        with guarded("simulating Table 11"):
            st.session_state["scr_t11"] = with_bar(
                "screening.table11",
                (int(dates), int(t11_seed)),
                lambda progress: table11_synthetic(int(dates), seed=int(t11_seed), progress=progress),
            )
    table11 = st.session_state.get("scr_t11")
    if table11 is not None:
        left, right = st.columns(2)
        with left:
            st.markdown("**This simulation**")
            show_table(table11.round(1))
        with right:
            st.markdown("**Paper (Table 11)**")
            show_table(PAPER_TABLE11)
        download_csv("Table 11 simulation (CSV)", table11, "table11_synthetic.csv", key="scr_t11_csv")


paper_example("Tables 10 and 11 and a real screening day", "Caballero, Sen & Nygård", _experiments, "scr_paper")
