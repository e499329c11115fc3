"""Risk-utility frontier page: which generalization policies give the best trade-off?"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from anonlib.core.dataset import Dataset
from anonlib.avector import anonymity_vector, k_of, vector_text
from anonlib.frontier import (
    DEFAULT_THRESHOLD,
    METHODS,
    FrontierSearch,
    default_order,
    dominating,
    explore,
    lattice_size_text,
    population_count_column,
    prepare,
    safe_harbor_policy,
)
from anonlib.core.loading import load_table
from anonlib.synthetic import TENNESSEE_ZIP_SEED, adult_with_zip, zip3_populations
from dashboard import charts
from dashboard.state import active_dataset
from dashboard.ui import download_csv, download_json, guarded, page_header, plain, row, show_table

EXAMPLE = "Adult + synthetic Tennessee ZIP (the paper's example)"
EXAMPLE_QIS = ["age", "sex", "race", "zip"]
METHOD_NAMES = {
    "shs": "SHS: sublattice heuristic search",
    "rcs": "RCS: random chain search",
    "exhaustive": "Exhaustive (up to 2^20 policies)",
}
SMALL_LATTICE_BITS = 14  # up to 2^14 policies the exact optimum is computed alongside a heuristic
MAX_ORDER_EDIT = 60  # category orders are editable for attributes with at most this many values


@st.cache_data(show_spinner=False, max_entries=2)
def _example_frame(seed: int) -> pd.DataFrame:
    return adult_with_zip(seed=seed)


@st.cache_data(show_spinner=False, max_entries=2)
def _zip3() -> dict[str, int]:
    return zip3_populations()


@st.cache_data(show_spinner=False, max_entries=16)
def _search(
    fingerprint: str, qis: tuple, orders: tuple, population_key: str | None, count: str | None,
    population_count: str | None, method: str, budget: int, threshold: float, seed: int,
    _frame: pd.DataFrame, _population: pd.DataFrame | None,
) -> FrontierSearch:
    """One search, cached on the data's fingerprint and every parameter. The
    progress bar lives inside so that a cache hit replays it finished."""
    label = method.upper()
    bar = st.progress(0.0, text=f"{label}: starting")

    def report(done: int, total: int, area: float) -> None:
        bar.progress(min(done / max(total, 1), 1.0),
                     text=f"{label}: {done:,} of {total:,} policies evaluated, area under the frontier {area:.4f}")

    try:
        space = prepare(
            _frame, list(qis), orders={a: list(v) for a, v in orders}, population=_population,
            count=count, population_count=population_count,
        )
        return explore(space, method, budget, seed=seed, threshold=threshold, progress=report)
    finally:
        bar.empty()


page_header(
    "Risk-utility frontier",
    "Which ways of coarsening the quasi-identifiers (age bands, merged categories, shorter ZIP codes) "
    "give the lowest re-identification risk for a given loss of information, and does HIPAA Safe "
    "Harbor sit on that frontier or could a different policy be better on both counts?",
    "- A **policy** cuts each quasi-identifier's ordered values into contiguous intervals "
    "(e.g. ages 17-25, 26-40, ...). As a bit-string, bit *i* = 1 keeps the boundary between value *i* "
    "and *i+1*; all ones is the original data, all zeros merges everything.\n"
    "- **Risk** (x axis, 0-1): without a population table, the number of equivalence classes after "
    "generalization divided by the number before. With a population table, each record counts "
    "1 / (people in the population who match its generalized values), divided by the same sum for "
    "the original data (Benitez et al.'s distinguishability).\n"
    "- **Information loss** (y axis, 0-1): the KL divergence between the original distribution of "
    "the quasi-identifiers and the generalized one (records spread evenly over the values of their "
    "intervals), divided by the KL of merging everything. The raw KL (in nats) is in the tables.\n"
    "- The **frontier** (step line) holds the evaluated policies no other evaluated policy beats on "
    "both axes. The **area** under it measures how good the search was: smaller is better.\n"
    "- **SHS** probes random sublattices and walks one only when the frontier could improve there "
    "(H above the threshold); **RCS** walks random chains from the original data to the top. "
    "The budget is the number of distinct policies evaluated.\n"
    "- The **star** is HIPAA Safe Harbor (3-digit ZIP, ages 90+ merged); squares are frontier policies "
    "that strictly dominate it: lower or equal risk and loss, one of them strictly lower.",
    "Xia, Heatherly, Ding, Li & Malin, Efficient discovery of de-identification policies through a "
    "risk-utility frontier (CODASPY 2013)",
)

dataset: Dataset = active_dataset()
qis: list[str] = []
frame: pd.DataFrame | None = None
release: pd.DataFrame | None = None
orders: dict[str, list] = {}
population: pd.DataFrame | None = None
population_key: str | None = None
population_count: str | None = None
upload = None
count: str | None = None
fingerprint = ""
source = st.radio("Data", [EXAMPLE, f"Active dataset: {dataset.name}"], horizontal=True, key="fr_source")
example = source == EXAMPLE

with guarded("preparing the data"):
    if example:
        zip_seed = TENNESSEE_ZIP_SEED
        frame = _example_frame(zip_seed)
        fingerprint = f"adult+tn-zip:{zip_seed}"
        count = None
        columns = [c for c in frame.columns]
        default_qis = EXAMPLE_QIS
        st.caption(
            "Adult (UCI, 32,561 records) with a synthetic 5-digit Tennessee ZIP per record, drawn in "
            f"proportion to the 2010 population of ZIP areas 37010-38589 (seed {zip_seed})."
        )
    else:
        count = dataset.count
        columns = [c for c in dataset.frame.columns if c != count and c not in dataset.identifiers]
        default_qis = [c for c in dataset.quasi_identifiers if c in columns]
        frame = None
        fingerprint = f"{dataset.fingerprint}:{dataset.missing}"

    qis = st.multiselect("Quasi-identifiers", columns, default=default_qis, key=f"fr_qis_{fingerprint}")
    release = frame  # the table a chosen policy generalizes for the preview and download
    if not example and qis:
        frame, dropped = dataset.analysis_frame(qis)
        release = dataset.frame.drop(columns=list(dataset.identifiers)) if not dropped else frame
        if dropped:
            st.caption(f"{dropped:,} rows with missing values were dropped.")

    if qis and frame is not None:
        editable = [
            a for a in qis
            if not pd.api.types.is_numeric_dtype(frame[a]) and frame[a].nunique() <= MAX_ORDER_EDIT
        ]
        with st.expander("Category orders (a policy only merges neighbours in this order)"):
            if not editable:
                st.caption("No text quasi-identifier with a short list of values; numbers and ZIP codes "
                           "use their natural order.")
            for attribute in editable:
                default = [str(v) for v in default_order(frame, attribute)]
                text = st.text_area(
                    f"Order of '{plain(attribute)}' (one value per line)", "\n".join(default),
                    key=f"fr_order_{fingerprint}_{attribute}", height=120,
                )
                order = [line.strip() for line in text.splitlines() if line.strip()]
                if order != default:
                    orders[attribute] = order
            st.caption("Other attributes use numeric or alphabetical order.")

    with st.expander("Population table (optional)"):
        st.caption(
            "Without one, the data are their own population. A population table has the same "
            "quasi-identifier columns and, optionally, a column with the number of people per row."
        )
        upload = st.file_uploader("Population table", type=["csv", "tsv", "txt", "gz", "xlsx", "parquet"],
                                  key="fr_population")
        if upload is not None:
            population = load_table(upload.getvalue(), name=upload.name).frame
            options = ["one person per row", *population.columns]
            guessed = population_count_column(population, qis, count=count)
            choice = st.selectbox("Number of people per row", options,
                                  index=options.index(guessed) if guessed in options else 0,
                                  key=f"fr_population_count_{upload.file_id}")
            population_count = None if choice == "one person per row" else choice
            population_key = f"{upload.file_id}:{population_count}"

c1, c2, c3, c4 = st.columns([1.6, 1, 1, 1])
method = c1.selectbox("Method", list(METHODS), format_func=METHOD_NAMES.get, key="fr_method")
budget = c2.slider("Budget (policies evaluated)", 100, 20_000, 1_000, step=100, key="fr_budget",
                   disabled=method == "exhaustive")
threshold = c3.slider("SHS threshold on H", 0.0, 1.0, DEFAULT_THRESHOLD, step=0.05, key="fr_threshold",
                      disabled=method != "shs")
seed = int(c4.number_input("Seed", min_value=0, max_value=10**9, value=1, step=1, key="fr_seed"))
compare = st.checkbox("Also run the other heuristic with the same budget (area-vs-budget chart)",
                      value=True, key="fr_compare")
colours = st.selectbox("Colours", list(charts.PALETTES), key="fr_colours")

result = None
others: dict[str, FrontierSearch] = {}
optimum: float | None = None
with guarded("searching the risk-utility frontier"):
    if not qis or frame is None:
        st.info("Choose at least one quasi-identifier.")
    else:
        common = dict(
            fingerprint=fingerprint, qis=tuple(qis),
            orders=tuple((a, tuple(v)) for a, v in sorted(orders.items())),
            population_key=population_key, count=count, population_count=population_count,
            budget=int(budget), threshold=float(threshold), seed=seed, _frame=frame, _population=population,
        )
        result = _search(method=method, **common)
        if compare and method in ("shs", "rcs"):
            other = "rcs" if method == "shs" else "shs"
            others[other] = _search(method=other, **common)
        if method != "exhaustive" and result.space.n_bits <= SMALL_LATTICE_BITS:
            optimum = _search(method="exhaustive", **common).area  # cheap here: show how close the search got

if result is not None:
    space = result.space
    frontier = list(result.frontier)
    m = row()
    m.metric("policies in the lattice", f"2^{space.n_bits}" if space.n_bits > 16 else lattice_size_text(space.n_bits),
             help=f"{lattice_size_text(space.n_bits)} policies ({space.n_bits} bits)")
    m.metric("policies evaluated", f"{result.n_evaluated:,}")
    m.metric("frontier policies", f"{len(frontier):,}")
    m.metric("area", f"{result.area:.4f}", help="Area under the frontier's step curve; smaller is better.")
    m.metric("search time", f"{result.seconds:.2f} s")
    st.caption(f"KL of the most general policy (used to normalize the loss): {space.top_loss:.4f} nats. "
               f"Risk is {'distinguishability against the uploaded population' if space.has_population else 'classes after / classes before (the data are their own population)'}.")

    # HIPAA Safe Harbor
    harbor = None
    better: list = []
    with guarded("placing HIPAA Safe Harbor"):
        harbor_policy = safe_harbor_policy(space, zip3_population=_zip3())
        harbor_bits = space.bits_of(harbor_policy.bits)
        h_risk, h_loss = space.evaluate(harbor_bits)
        h_norm = h_loss / space.top_loss if space.top_loss > 0 else 0.0
        harbor = (h_risk, h_norm)
        better = dominating(frontier, h_risk, h_loss)

    default_pick = int(np.argmin([e.risk + e.loss_normalized for e in frontier])) if frontier else 0
    if better:
        default_pick = frontier.index(better[0])
    pick_key = f"fr_pick_{len(frontier)}_{result.area:.6f}"
    chart_key = f"fr_chart_{pick_key}"
    clicked = charts.clicked_frontier_policy(st.session_state.get(chart_key), len(frontier))
    if clicked is not None and st.session_state.get("fr_applied_click") != (chart_key, clicked):
        st.session_state["fr_applied_click"] = (chart_key, clicked)  # apply each click once
        st.session_state[pick_key] = clicked
    pick = st.selectbox(
        "Frontier policy to inspect (or click a point of the frontier line)", list(range(len(frontier))),
        index=default_pick,
        format_func=lambda i: f"#{i + 1}: risk {frontier[i].risk:.4f}, loss {frontier[i].loss_normalized:.4f}"
        + (" (dominates Safe Harbor)" if frontier[i] in better else ""),
        key=pick_key,
    )
    chosen = frontier[pick]
    st.plotly_chart(
        charts.frontier_figure(
            result.evaluated_risk, result.evaluated_loss,
            [e.risk for e in frontier], [e.loss_normalized for e in frontier],
            safe_harbor=harbor,
            dominating=([e.risk for e in better], [e.loss_normalized for e in better]) if better else None,
            selected=(chosen.risk, chosen.loss_normalized), colours=colours,
        ),
        width="stretch", on_select="rerun", selection_mode="points", key=chart_key,
    )

    if harbor is not None:
        st.subheader("HIPAA Safe Harbor")
        st.write(
            f"Safe Harbor: risk {harbor[0]:.4f}, loss {harbor[1]:.4f} (normalized). "
            f"{len(better)} of {len(frontier)} frontier policies strictly dominate it."
        )
        for note in harbor_policy.notes:
            st.caption(plain(note))
        if better:
            dominating_table = pd.DataFrame(
                [{"policy": frontier.index(e) + 1, "risk": e.risk, "loss (normalized)": e.loss_normalized,
                  "loss (KL, nats)": e.loss} for e in better]
            )
            show_table(dominating_table)

    if len(result.trace) > 0:
        traces = {result.method: list(result.trace)}
        traces.update({name: list(r.trace) for name, r in others.items()})
        st.plotly_chart(
            charts.area_trace_figure(traces, result.budget, optimum=optimum, colours=colours), width="stretch"
        )
        if optimum is not None:
            st.caption(f"The exhaustive optimum of this {space.n_policies:,}-policy lattice is {optimum:.4f}; "
                       f"{result.method.upper()} reached {result.area / optimum:.3f} times it.")
        if others:
            name, other = next(iter(others.items()))
            st.caption(
                f"After {min(100, result.budget)} policies: {result.method.upper()} "
                f"{result.area_after(100):.4f}, {name.upper()} {other.area_after(100):.4f}; at the full "
                f"budget: {result.area:.4f} vs {other.area:.4f}."
            )

    st.subheader(f"Frontier policy #{pick + 1}")
    bits = space.bits_of(chosen.bits)
    intervals = space.intervals(bits)
    sizes = space.class_sizes(bits)
    vector = anonymity_vector(sizes)
    m = row()
    m.metric("risk", f"{chosen.risk:.4f}")
    m.metric("loss (normalized)", f"{chosen.loss_normalized:.4f}", help=f"KL {chosen.loss:.4f} nats")
    m.metric("k", f"{k_of(vector):,}")
    m.metric("equivalence classes", f"{len(sizes):,}")
    show_table(
        pd.DataFrame(
            [{"attribute": a, "intervals": len(v), "values": len(d), "intervals in order": ", ".join(v)}
             for (a, v), d in zip(intervals.items(), space.domains)]
        )
    )
    st.plotly_chart(charts.anonymity_vector_figure(vector, title="Anonymity vector of this policy"),
                    width="stretch")
    st.text(f"Anonymity vector: {vector_text(vector)}")
    generalized = space.generalize(release, bits)
    show_table(generalized.head(200), data=True, height=240)
    st.caption(f"First {min(200, len(generalized))} of {len(generalized):,} rows, generalized by this policy.")

    with row():
        download_csv("Generalized data (CSV)", generalized, f"generalized_policy_{pick + 1}.csv", key="fr_dl_data")
        download_csv("Frontier policies (CSV)", result.frontier_table(), "frontier.csv", key="fr_dl_frontier")
        download_json(
            "Parameters and results (JSON)",
            {
                "data": EXAMPLE if example else dataset.name,
                "quasi_identifiers": list(qis),
                "orders": orders,
                "population": upload.name if population is not None else None,
                "method": result.method,
                "budget": result.budget,
                "threshold": result.threshold,
                "seed": seed,
                "policies_evaluated": result.n_evaluated,
                "area": result.area,
                "top_kl": space.top_loss,
                "safe_harbor": {"risk": harbor[0], "loss_normalized": harbor[1],
                                "dominated_by": [frontier.index(e) + 1 for e in better]} if harbor else None,
                "frontier": [{"policy": i + 1, "risk": e.risk, "loss": e.loss,
                              "loss_normalized": e.loss_normalized, "bits": e.bits} for i, e in enumerate(frontier)],
                "area_trace": list(result.trace),
            },
            "frontier.json",
            key="fr_dl_json",
        )
