"""Charts of the Release view: functions from ``anonlib.workflow.release_view`` results to plotly figures.

No Streamlit here (tested on their own), in the style of ``dashboard.charts``:
user text (column names, values) is escaped, hover texts carry the exact
records, colours come from one ``Palette``.

Example:
    >>> from anonlib.workflow.release_view import ColumnView, ValueCount
    >>> view = ColumnView("sex", "quasi-identifier", "category", 2, 1, (ValueCount("F", 3, 0), ValueCount("*", 0, 5)))
    >>> fig = distribution_figure(view)
    >>> [t.name for t in fig.data], list(fig.data[1].y), fig.layout.barmode
    (['loaded file', 'release'], [0, 5], 'overlay')
"""

from __future__ import annotations

import plotly.graph_objects as go

from anonlib.workflow.release_view import ClassifierComparison, ColumnView

from .base import DEFAULT_PALETTE, PALETTES, escape_text, laid_out, titled

SHOWN_BARS = 40  # a view lists at most this many values (anonlib.workflow.release_view.MAX_VALUES)


def distribution_figure(
    view: ColumnView,
    palette: str = DEFAULT_PALETTE,
    *,
    shares: bool = False,
    release: str = "release",
    title: str | None = None,
) -> go.Figure:
    """Records per shown value (per bin for numbers) in the loaded file and in the release, overlaid.

    A value the loaded file cannot be counted under (text that is not an interval) has no
    "loaded file" bar; the subtitle says so. ``shares``: each table's share of its own
    records (%), for a release of another size (a synthetic table); ``release`` names it;
    ``title``: a shorter title (a chart in half a window).

    >>> from anonlib.workflow.release_view import ColumnView, ValueCount
    >>> v = ColumnView("sex", "column", "category", 2, 2, (ValueCount("F", 3, 30), ValueCount("M", 1, 10)))
    >>> list(distribution_figure(v, shares=True, release="private release").data[1].y)
    [75.0, 25.0]
    """
    colours = PALETTES[palette]
    rows = view.counts[:SHOWN_BARS]
    labels = [escape_text(r.value) for r in rows]
    before = [r.before for r in rows]
    total_before = sum(r.before or 0 for r in view.counts) or 1
    total_after = sum(r.after for r in view.counts) or 1
    scale_before, scale_after = (100 / total_before, 100 / total_after) if shares else (1, 1)
    unit = "% of its records" if shares else "records"
    share = "%{y:.2f}% (%{customdata[0]} records)"
    name = escape_text(release)
    fig = go.Figure()
    fig.add_bar(
        x=labels,
        y=[0 if b is None else b * scale_before for b in before],
        name="loaded file",
        marker_color=colours.neutral,
        opacity=0.6,
        width=0.8,
        customdata=[["–" if b is None else f"{b:,}"] for b in before],
        hovertemplate=f"%{{x}}<br>loaded file: {share if shares else '%{customdata[0]} records'}<extra></extra>",
    )
    fig.add_bar(
        x=labels,
        y=[r.after * scale_after for r in rows],
        name=release,
        marker_color=colours.safe,
        opacity=0.85,
        width=0.45,
        customdata=[[f"{r.after:,}"] for r in rows],
        hovertemplate=f"%{{x}}<br>{name}: {share if shares else '%{y:,} records'}<extra></extra>",
    )
    what = "bins of numbers" if view.kind == "number" else "values shown"
    laid_out(fig, "", f"{view.column} ({what})", unit)
    fig.update_layout(barmode="overlay")  # the release's narrower bar inside the loaded file's: both stay visible
    fig.update_xaxes(type="category")
    notes = []
    if view.kind == "number → categories":
        notes.append("numbers before, text after: the loaded file's records are counted into the release's intervals")
    if any(b is None for b in before):
        notes.append("values the loaded file never shows have no loaded-file bar")
    if len(view.counts) > SHOWN_BARS:
        notes.append(f"the first {SHOWN_BARS} of {len(view.counts)} values")
    what = "share of records" if shares else "records"
    return titled(
        fig,
        title or f"{view.column}: {what} per value, loaded file and {release}",
        "; ".join(notes) + ("." if notes else ""),
        width=80 if title is None else 50,
    )


def accuracy_figure(comparison: ClassifierComparison, palette: str = DEFAULT_PALETTE) -> go.Figure:
    """Cross-validated accuracy trained on the release and on the loaded file (± sd over the
    folds), each beside always guessing the most common value."""
    colours = PALETTES[palette]
    tables = ["release", "loaded file"]
    scores = [comparison.released, comparison.original]
    fig = go.Figure()
    fig.add_bar(
        x=tables,
        y=[100 * s.mean for s in scores],
        name="decision tree",
        marker_color=colours.safe,
        error_y=dict(type="data", array=[100 * s.sd for s in scores], visible=True),
        customdata=[[f"{100 * s.sd:.1f}", f"{s.records:,}"] for s in scores],
        hovertemplate="trained on the %{x}: %{y:.1f}% ± %{customdata[0]}% right<br>%{customdata[1]} records"
        "<extra></extra>",
    )
    fig.add_bar(
        x=tables,
        y=[100 * s.baseline for s in scores],
        name="most common value",
        marker_color=colours.neutral,
        hovertemplate="always guessing the most common value: %{y:.1f}%<extra></extra>",
    )
    laid_out(fig, "", "trained and cross-validated on", "records predicted right (%)")
    fig.update_layout(barmode="group", yaxis_range=[0, 100])
    return titled(
        fig,
        f"Predicting {comparison.column}: accuracy trained on the release and on the loaded file",
        f"{comparison.model}; took {comparison.seconds:.1f} s.",
    )
