"""Charts of the re-identification risk: class-size bins, the anonymity vector, records
at risk, and the distribution of the risk over records (Dataset page, report)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from .base import AT_RISK, DEFAULT_PALETTE, PALETTES, SAFE, laid_out

_SIZE_BINS = (1, 2, 3, 4, 5, 10, 20, 50, 100, 500, 1000)


@dataclass(frozen=True)
class SizeBins:
    """Class sizes grouped for a bar chart: one bar per size when at most 30
    sizes occur, else the ranges 1, 2, 3, 4, 5-9, 10-19, ... (so the small
    classes that matter stay readable and no bar is lost among hundreds).

    ``labels[i]`` names bar i, ``lows[i]`` its smallest size; ``classes[v][i]``
    and ``records[v][i]`` count vector v's classes and records in it. Only
    bars holding a class of some vector are kept: no empty gap on the axis.
    """

    labels: list[str]
    lows: np.ndarray
    classes: list[np.ndarray]
    records: list[np.ndarray]


def class_size_bins(vectors: Sequence[Sequence[int]], max_bars: int = 30) -> SizeBins:
    """Shared bars for one or more anonymity vectors (entry j-1 = classes of size j).

    >>> b = class_size_bins([(0, 1, 0, 2, 1), (2, 3, 1, 1)])
    >>> b.labels, [c.tolist() for c in b.classes]
    (['1', '2', '3', '4', '5'], [[0, 1, 0, 2, 1], [2, 3, 1, 1, 0]])
    >>> b = class_size_bins([(1,) * 40])
    >>> b.labels, b.classes[0].tolist(), b.records[0].tolist()
    (['1', '2', '3', '4', '5-9', '10-19', '20-40'], [1, 1, 1, 1, 5, 10, 21], [1, 2, 3, 4, 35, 145, 630])
    """
    length = max((len(v) for v in vectors), default=0)
    counts = np.zeros((len(vectors), length), dtype=np.int64)
    for row, vector in enumerate(vectors):
        counts[row, : len(vector)] = np.asarray(vector, dtype=np.int64)
    sizes = np.arange(1, length + 1)
    used = counts.any(axis=0)
    if used.sum() <= max_bars:
        keep = np.flatnonzero(used)
        return SizeBins(
            labels=[str(s) for s in sizes[keep]],
            lows=sizes[keep],
            classes=[row[keep] for row in counts],
            records=[row[keep] * sizes[keep] for row in counts],
        )
    top = int(sizes[used].max())
    edges = np.array([b for b in _SIZE_BINS if b <= top] + [top + 1])
    which = np.searchsorted(edges, sizes, side="right") - 1
    n_bins = len(edges) - 1
    classes = [np.bincount(which, weights=row, minlength=n_bins).astype(np.int64) for row in counts]
    records = [np.bincount(which, weights=row * sizes, minlength=n_bins).astype(np.int64) for row in counts]
    keep = np.flatnonzero(np.any([c > 0 for c in classes], axis=0))
    labels = [str(lo) if hi - lo == 1 else f"{lo}-{hi - 1}" for lo, hi in zip(edges[:-1], edges[1:])]
    return SizeBins(
        labels=[labels[i] for i in keep],
        lows=edges[:-1][keep],
        classes=[c[keep] for c in classes],
        records=[r[keep] for r in records],
    )


def count_axis(fig: go.Figure, values: Sequence[np.ndarray]) -> None:
    """Whole numbers on a count axis; a log scale when the counts span more than
    two orders of magnitude, so a bar of 1 class next to one of 5,000 stays visible."""
    nonzero = np.concatenate([np.asarray(v)[np.asarray(v) > 0] for v in values]) if len(values) else np.array([])
    if len(nonzero) and nonzero.max() / nonzero.min() > 100:
        fig.update_yaxes(type="log", dtick=1, tickformat=",d")
    elif len(nonzero) and nonzero.max() <= 10:
        fig.update_yaxes(dtick=1)


def anonymity_vector_figure(vector: Sequence[int], k_threshold: int = 5, title: str | None = None) -> go.Figure:
    """Bars of the anonymity vector: classes of each size; sizes below the
    threshold in the at-risk colour. Hover: size, classes, records.

    Long vectors (more than 30 distinct class sizes) are shown in size ranges
    (1, 2, 3, 4, 5-9, 10-19, ...) so the small classes that matter stay readable.

    >>> fig = anonymity_vector_figure((0, 1, 0, 2, 1))
    >>> list(fig.data[0].x), list(fig.data[0].y)
    (['2', '4', '5'], [1, 2, 1])
    >>> fig = anonymity_vector_figure((1,) * 40)
    >>> list(fig.data[0].x), list(fig.data[0].y)
    (['1', '2', '3', '4', '5-9', '10-19', '20-40'], [1, 1, 1, 1, 5, 10, 21])
    """
    bins = class_size_bins([vector])
    classes, records = bins.classes[0], bins.records[0]
    colours = [AT_RISK if lo < k_threshold else SAFE for lo in bins.lows]
    fig = go.Figure(
        go.Bar(
            x=bins.labels,
            y=classes.tolist(),
            marker_color=colours,
            customdata=records.tolist(),
            hovertemplate="class size %{x}<br>%{y:,} classes<br>%{customdata:,} records<extra></extra>",
        )
    )
    fig.update_xaxes(type="category")
    count_axis(fig, [classes])
    return laid_out(
        fig,
        title or f"Anonymity vector (orange: classes smaller than {k_threshold})",
        "equivalence-class size j",
        "number of classes k(j)",
    )


def records_at_risk_figure(records_below: Sequence[tuple[int, int]], total: int, unit: str = "records") -> go.Figure:
    """Share of records (or, with a person column, of people: ``unit``, ``total`` in that unit) in
    classes smaller than each threshold.

    >>> records_at_risk_figure([(2, 5), (5, 10)], 20).data[0].y
    (25.0, 50.0)
    >>> records_at_risk_figure([(2, 312)], 312, unit="people").layout.title.text
    'People at risk'
    """
    labels = [f"class < {t}" for t, _ in records_below]
    shares = [100.0 * n / total if total else 0.0 for _, n in records_below]
    counts = [n for _, n in records_below]
    fig = go.Figure(
        go.Bar(
            x=labels,
            y=shares,
            marker_color=AT_RISK,
            customdata=counts,
            hovertemplate=f"%{{x}}: %{{customdata:,}} {unit} (%{{y:.2f}}%)<extra></extra>",
        )
    )
    fig.update_yaxes(range=[0, 100])
    return laid_out(fig, f"{unit.capitalize()} at risk", "", f"% of {unit}")


# --- re-identification risk (anonlib.measures.risk) ---


def risk_distribution_figure(
    bins,
    threshold: float = 0.2,
    palette: str = DEFAULT_PALETTE,
    title: str | None = None,
    unit: str = "records",
) -> go.Figure:
    """Records per prosecutor-risk band, as ARX's risk analysis draws it: bars of the
    share of records whose risk (1 / class size) lies in each band, and a line of the
    cumulative share. ``bins`` is ``ReidentificationRisk.distribution`` (or
    ``anonlib.measures.risk.risk_distribution(class_sizes)``). Bands above the lowest band
    holding records are shown; a band whose upper bound exceeds ``threshold`` is in
    the at-risk colour (exact at ARX's 0.2 and 0.5, band bounds, and above 1/8 each
    band holds one class size). Hover: band, records, share, cumulative share.
    ``unit``: what the bins count ("people" for a risk counted in people, each person once).

    >>> from anonlib.measures.risk import risk_distribution
    >>> fig = risk_distribution_figure(risk_distribution([1, 2, 2, 10]))
    >>> list(fig.data[0].x)[:2], [round(y, 1) for y in fig.data[0].y][-3:], fig.data[1].y[-1]
    (['9–10%', '10–12.5%'], [0.0, 26.7, 6.7], 100.0)
    >>> risk_distribution_figure(risk_distribution([1, 2], each=True), unit="people").layout.yaxis.title.text
    '% of people'
    """
    colours = PALETTES[palette]
    bins = list(bins)
    first = next((i for i, b in enumerate(bins) if b.records), len(bins) - 1 if bins else 0)
    shown = bins[first:]
    labels = [b.label for b in shown]
    fig = go.Figure()
    fig.add_trace(
        go.Bar(
            x=labels,
            y=[100.0 * b.share for b in shown],
            name=f"{unit} in the band",
            marker_color=[colours.at_risk if b.high > threshold else colours.safe for b in shown],
            customdata=[[b.records, 100.0 * b.cumulative] for b in shown],
            hovertemplate=f"risk %{{x}}<br>%{{customdata[0]:,}} {unit} (%{{y:.2f}}%)"
            f"<br>%{{customdata[1]:.2f}}% of {unit} at this risk or lower<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=labels,
            y=[100.0 * b.cumulative for b in shown],
            name="cumulative",
            mode="lines+markers",
            line=dict(color=colours.neutral),
            hovertemplate=f"risk up to %{{x}}: %{{y:.2f}}% of {unit}<extra></extra>",
        )
    )
    fig.update_xaxes(type="category")
    fig.update_yaxes(range=[0, 102])
    fig.update_layout(legend=dict(orientation="h", y=-0.25), bargap=0.15)
    return laid_out(
        fig,
        title or f"Prosecutor risk of the {unit} (bands above {100 * threshold:g}% highlighted)",
        "re-identification risk (1 / class size)",
        f"% of {unit}",
    )


def power_figure(
    labels: Sequence[str],
    unique: Sequence[int | None],
    below: Sequence[int | None],
    people: int,
    k: int,
    *,
    chosen: str | None = None,
    palette: str = DEFAULT_PALETTE,
) -> go.Figure:
    """People at risk by the adversary's power (``anonlib.measures.power.risk_by_power``): per power
    label ("1", ..., "all") the people unique and those in histories shared by fewer than ``k``,
    as % of ``people``; the ``chosen`` power's bars outlined. A power not counted (None) has no
    bar. Small enough for the sidebar.

    >>> fig = power_figure(["1", "all"], [2, 9], [4, None], 10, 5, chosen="all")
    >>> [list(t.y) for t in fig.data], list(fig.data[0].x)
    ([[20.0, 90.0], [40.0, None]], ['1', 'all'])
    >>> [t.marker.line.width for t in fig.data][0]
    (0, 2)
    """
    colours = PALETTES[palette]

    def share(n: int | None) -> float | None:
        return None if n is None else 100.0 * n / people if people else 0.0

    widths = tuple(2 if label == chosen else 0 for label in labels)
    fig = go.Figure()
    for name, values, colour in (
        ("unique", unique, colours.at_risk),
        (f"shared by < {k}", below, colours.neutral),
    ):
        fig.add_trace(
            go.Bar(
                x=list(labels),
                y=[share(n) for n in values],
                name=f"people {name}",
                marker=dict(color=colour, line=dict(width=widths, color="#000000")),
                customdata=[[n] for n in values],
                hovertemplate="an attacker knows %{x} records<br>%{customdata[0]:,} people (%{y:.1f}%)<extra></extra>",
            )
        )
    fig.update_xaxes(type="category")
    fig.update_yaxes(range=[0, 102])
    fig.update_layout(
        barmode="group", height=240, legend=dict(orientation="h", y=-0.55), margin=dict(l=5, r=5, t=30, b=5)
    )
    laid_out(fig, "People at risk by the attacker's power", "records an attacker knows", "% of people")
    fig.update_layout(margin=dict(l=5, r=5, t=30, b=5), title_font_size=12)
    return fig
