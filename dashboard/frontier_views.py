"""What the Risk-utility frontier page draws: the search's inputs beyond the quasi-identifiers (the
category orders a policy merges along, an optional population table), where HIPAA Safe Harbor
sits and the frontier policies that beat it, and one chosen policy (its intervals, k, anonymity
vector, what it does to the working copy or the example, and the downloads). Results come from
``anonlib.transformations.frontier``; the figures from ``dashboard.charts``."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from anonlib.core.dataset import Dataset
from anonlib.core.loading import load_table
from anonlib.measures.avector import anonymity_vector, k_of, vector_text
from anonlib.transformations.frontier import default_order, population_count_column
from dashboard import charts
from dashboard.glossary import term_help
from dashboard.ui import download_csv, download_json, plain

MAX_ORDER_EDIT = 60  # category orders are editable for attributes with at most this many values


def category_orders(p: str, frame: pd.DataFrame, qis: list[str], fingerprint: str) -> dict[str, list[str]]:
    """The category orders edited on the page (text attributes with at most ``MAX_ORDER_EDIT``
    values; a policy merges neighbours only), those differing from the default order. ``p``
    prefixes the widget keys."""
    orders: dict[str, list[str]] = {}
    editable = [a for a in qis if not pd.api.types.is_numeric_dtype(frame[a]) and frame[a].nunique() <= MAX_ORDER_EDIT]
    with st.expander("Category orders (a policy only merges neighbours in this order)"):
        if not editable:
            st.caption(
                "No text quasi-identifier with a short list of values; numbers and ZIP codes use their natural order."
            )
        for attribute in editable:
            default = [str(v) for v in default_order(frame, attribute)]
            text = st.text_area(
                f"Order of '{plain(attribute)}' (one value per line)",
                "\n".join(default),
                key=f"{p}_order_{fingerprint}_{attribute}",
                height=120,
            )
            order = [line.strip() for line in text.splitlines() if line.strip()]
            if order != default:
                orders[attribute] = order
        st.caption("Other attributes use numeric or alphabetical order.")
    return orders


def population_table(p: str, qis: list[str], count: str | None) -> tuple:
    """An optional population table uploaded for the risk: (its frame, the cache key of the upload
    and its count column, that count column, the upload), all None without one."""
    population = population_key = population_count = upload = None
    with st.expander("Population table (optional; without one, your data are their own population)"):
        st.caption(
            "Risk needs to know how many people in the population share each generalized combination. "
            "Without a population table the working copy stands in for it. A population table has the "
            "same quasi-identifier columns and, optionally, a column with the number of people per row."
        )
        upload = st.file_uploader(
            "Population table", type=["csv", "tsv", "txt", "gz", "xlsx", "parquet"], key=f"{p}_population"
        )
        if upload is not None:
            population = load_table(upload.getvalue(), name=upload.name).frame
            options = ["one person per row", *population.columns]
            guessed = population_count_column(population, qis, count=count)
            choice = st.selectbox(
                "Number of people per row",
                options,
                index=options.index(guessed) if guessed in options else 0,
                key=f"{p}_population_count_{upload.file_id}",
            )
            population_count = None if choice == "one person per row" else choice
            population_key = f"{upload.file_id}:{population_count}"
    return population, population_key, population_count, upload


def safe_harbor_section(harbor, harbor_k, harbor_policy, frontier, better, lower_both, ks, meets, target_k) -> None:
    """Safe Harbor's risk and loss, and the frontier policies lower on both axes (claimed as better
    only when they meet the target k)."""
    st.subheader("HIPAA Safe Harbor")
    st.write(
        f"Safe Harbor: risk {harbor[0]:.4f}, loss {harbor[1]:.4f} (normalized), k = {harbor_k:,}. "
        f"{len(better)} of {len(frontier)} frontier policies meet k = {target_k} and strictly dominate it "
        "(risk and information loss no higher, one of them lower)."
    )
    if len(lower_both) > len(better):
        st.caption(
            f"{len(lower_both) - len(better)} more frontier policies are lower on both axes but leave classes "
            f"smaller than k = {target_k}: they are not claimed as better than Safe Harbor."
        )
    for note in harbor_policy.notes:
        st.caption(plain(note))
    if lower_both:
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "policy": frontier.index(e) + 1,
                        "k": ks[frontier.index(e)],
                        f"meets k = {target_k}": {True: "yes", False: "no", None: "not judged"}[
                            meets[frontier.index(e)]
                        ],
                        "risk": e.risk,
                        "loss (normalized)": e.loss_normalized,
                        "loss (KL, nats)": e.loss,
                    }
                    for e in lower_both
                ]
            ),
            hide_index=True,
            width="stretch",
        )


def policy_details(
    p: str,
    pick: int,
    chosen,
    space,
    step,
    release: pd.DataFrame | None,
    dataset: Dataset | None,
    *,
    target_k: int,
    result,
    ks: tuple[int, ...],
    qis: list[str],
    orders: dict,
    upload,
    population: pd.DataFrame | None,
    seed: int,
    harbor: tuple[float, float] | None,
    harbor_k: int | None,
    better: list,
    frontier: list,
    name: str,
    apply_policy,
) -> None:
    """One frontier policy: its numbers and intervals, its anonymity vector, what applying it does
    (``apply_policy`` on the working copy, or the example generalized), and the downloads."""
    st.subheader(f"Frontier policy #{pick + 1}")
    bits = space.bits_of(chosen.bits)
    intervals = space.intervals(bits)
    sizes = space.class_sizes(bits)
    vector = anonymity_vector(sizes)
    k1, k2, k3, k4 = st.columns(4)
    k1.metric("risk", f"{chosen.risk:.4f}", help=term_help("distinguishability"))
    k2.metric(
        "loss (normalized)", f"{chosen.loss_normalized:.4f}", help=f"KL {chosen.loss:.4f} nats. " + term_help("KL loss")
    )
    k3.metric("k", f"{k_of(vector):,}", help=term_help("k"))
    k4.metric("classes", f"{len(sizes):,}", help=term_help("class"))
    st.dataframe(
        pd.DataFrame(
            [
                {"attribute": a, "intervals": len(v), "values": len(d), "intervals in order": ", ".join(v)}
                for (a, v), d in zip(intervals.items(), space.domains)
            ]
        ),
        hide_index=True,
        width="stretch",
    )
    st.plotly_chart(
        charts.anonymity_vector_figure(vector, k_threshold=target_k, title="Anonymity vector of this policy"),
        width="stretch",
    )
    st.text(f"Anonymity vector: {vector_text(vector)}")

    if dataset is not None:
        apply_policy(dataset, step)
        generalized = None
    else:
        generalized = space.generalize(release, bits)
        st.dataframe(generalized.head(200), hide_index=True, height=240)
        st.caption(f"First {min(200, len(generalized))} of {len(generalized):,} rows, generalized by this policy.")

    d2, d3 = st.columns(2)  # two per row: each label fits its button in a 1024 px window
    if generalized is not None:  # the policy's data on a row of its own (a policy keeping every value has none)
        d1, _ = st.columns(2)
        with d1:
            download_csv(
                "Generalized data (CSV)", generalized, f"generalized_policy_{pick + 1}.csv", key=f"{p}_dl_data"
            )
    with d2:
        download_csv(
            "Frontier policies (CSV)",
            result.frontier_table().assign(k=list(ks)),
            "frontier.csv",
            key=f"{p}_dl_frontier",
        )
    with d3:
        download_json(
            "Parameters and results (JSON)",
            {
                "data": name,
                "quasi_identifiers": list(qis),
                "orders": orders,
                "population": upload.name if population is not None else None,
                "method": result.method,
                "budget": result.budget,
                "threshold": result.threshold,
                "seed": seed,
                "target_k": target_k,
                "policies_evaluated": result.n_evaluated,
                "area": result.area,
                "top_kl": space.top_loss,
                "safe_harbor": {
                    "risk": harbor[0],
                    "loss_normalized": harbor[1],
                    "k": harbor_k,
                    "dominated_by_policies_meeting_k": [frontier.index(e) + 1 for e in better],
                }
                if harbor
                else None,
                "frontier": [
                    {
                        "policy": i + 1,
                        "k": ks[i],
                        "risk": e.risk,
                        "loss": e.loss,
                        "loss_normalized": e.loss_normalized,
                        "bits": e.bits,
                    }
                    for i, e in enumerate(frontier)
                ],
                "area_trace": list(result.trace),
            },
            "frontier.json",
            key=f"{p}_dl_json",
        )
