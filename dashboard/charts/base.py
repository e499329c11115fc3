"""What every chart shares: the palettes (colour-blind safe by default, the papers'
red-to-green as an option), escaping of data in hover texts, titles and axes."""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

import plotly.graph_objects as go
import plotly.io as pio

# Every chart is drawn on plotly's white template. Set once as the default, not per figure: naming
# it in a figure's layout copies and validates the whole template each time (about 10 ms a figure,
# and a page draws dozens), while the default is attached only when the figure is sent.
pio.templates.default = "plotly_white"

# Colour-blind-safe defaults (Okabe-Ito qualitative; cividis sequential) and
# the papers' red-to-green scale as an option. Every chart takes its colours
# from one ``Palette``; pages offer ``list(PALETTES)``.
QUALITATIVE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]
AT_RISK = "#D55E00"
SAFE = "#0072B2"


@dataclass(frozen=True)
class Palette:
    """The colours of one palette, by what they mean.

    ``at_risk``/``safe``: a record, class or table that fails/meets the
    requirement; ``neutral``: context (evaluated points, the state before);
    ``highlight``: what deserves a look (policies beating Safe Harbor);
    ``low``/``high``: a gradient above a threshold; ``sequential``: a plotly
    colour scale (low = worse); ``series``: one colour per compared method.
    """

    at_risk: str
    safe: str
    neutral: str
    highlight: str
    low: str
    high: str
    sequential: str | list
    series: tuple[str, ...]


PALETTES = {
    "colour-blind safe": Palette(
        at_risk=AT_RISK,
        safe=SAFE,
        neutral="#999999",
        highlight="#009E73",
        low="#DEEBF7",
        high="#08306B",
        sequential="Cividis",
        series=tuple(QUALITATIVE),
    ),
    "red to green (as in the papers)": Palette(
        at_risk="#8B0000",
        safe="#1A9850",
        neutral="#9E9E9E",
        highlight="#1A9850",
        low="#FFD700",
        high="#1A9850",
        sequential=[[0.0, "#8B0000"], [0.5, "#FFD700"], [1.0, "#1A9850"]],
        series=("#8B0000", "#1A9850", "#E69F00", "#0072B2"),
    ),
}
DEFAULT_PALETTE = "colour-blind safe"


def escape_text(value: object) -> str:
    """User text (column names, values) for hover and customdata: plotly renders
    a subset of HTML there (links, bold), so every user string is HTML-escaped.

    >>> escape_text('<a href="x">Zip</a>')
    '&lt;a href=&quot;x&quot;&gt;Zip&lt;/a&gt;'
    """
    return html.escape(str(value))


# plotly express's own rule (``render_mode="auto"``): WebGL only past 1,000 points.
WEBGL_FROM = 1000


def scatter_trace(points: int, **kwargs) -> go.Scatter | go.Scattergl:
    """A scatter trace of ``points`` points: SVG up to ``WEBGL_FROM`` of them, WebGL beyond, as
    plotly express decides. SVG needs no WebGL context: a computer without a graphics card (a
    remote desktop) still draws it, and the browser redraws it after a change at less cost (a
    WebGL context made in software took 78 ms a change on the frontier page).

    >>> type(scatter_trace(10, x=[1], y=[2])).__name__, type(scatter_trace(5000, x=[1], y=[2])).__name__
    ('Scatter', 'Scattergl')
    """
    return (go.Scattergl if points > WEBGL_FROM else go.Scatter)(**kwargs)


def laid_out(fig: go.Figure, title: str, x: str, y: str) -> go.Figure:
    # titles name user columns, and plotly renders HTML in them: escape (no title uses markup)
    import textwrap

    fig.update_layout(
        title=escape_text(title),
        # long axis titles on two lines: plotly cuts them at the plot's edge in a 1024 px window
        xaxis_title="<br>".join(textwrap.wrap(escape_text(x), 80)) if len(x) > 80 else escape_text(x),
        yaxis_title=escape_text(y),
        margin=dict(l=10, r=10, t=50, b=10),
        hoverlabel=dict(namelength=-1),
    )
    return fig


def titled(fig: go.Figure, title: str, subtitle: str = "", width: int = 80) -> go.Figure:
    """A title with a smaller note under it (wrapped so it fits a 1024 px window),
    both escaped (they may name user columns).

    >>> titled(go.Figure(), "Leakage", "a <b> note").layout.title.text
    'Leakage<br><sup>a &lt;b&gt; note</sup>'
    """
    import textwrap

    text = escape_text(title)
    if subtitle:
        lines = textwrap.wrap(subtitle, width) or [""]
        text += "".join(f"<br><sup>{escape_text(line)}</sup>" for line in lines)
        top = max(int(fig.layout.margin.t or 50), 60 + 18 * len(lines))  # the notes clear the top tick label
        fig.update_layout(margin=dict(t=top))
    return fig.update_layout(title=text)


def _all_equal(values: Sequence) -> bool:
    """More than one value and all of them equal (a comparison with nothing to show).

    >>> _all_equal([21, 21, 21]), _all_equal([21, 18]), _all_equal([5])
    (True, False, False)
    """
    values = list(values)
    return len(values) > 1 and all(v == values[0] for v in values[1:])


def compared_bars(table, label: str, metrics: Sequence[tuple[str, str, str]], *, columns: int, title: str) -> go.Figure:
    """Small multiples: one subplot per metric, one coloured bar per row of
    ``table`` named in the legend (long names would collide under the bars).
    A subplot whose bars are all equal says so in its title; with a single row
    the figure says there is nothing to compare.

    ``metrics``: (column, subplot title, hover number format) triples.
    """
    from plotly.subplots import make_subplots

    names = [str(n) for n in table[label]]
    # "(all equal: ...)" on a line of its own: beside the name it runs into the next subplot's title at 1024 px
    titles = [
        escape_text(name) + (f"<br>(all equal: {table[column].iloc[0]:{fmt}})" if _all_equal(table[column]) else "")
        for column, name, fmt in metrics
    ]
    note = "one run only: nothing to compare" if len(names) == 1 else ""
    rows = -(-len(metrics) // columns)
    fig = make_subplots(rows=rows, cols=columns, subplot_titles=titles, vertical_spacing=0.18 if rows > 1 else 0.0)
    for i, name in enumerate(names):
        for m, (column, metric_name, fmt) in enumerate(metrics):
            fig.add_trace(
                go.Bar(
                    x=[escape_text(name)],
                    y=[table[column].iloc[i]],
                    name=escape_text(name),
                    legendgroup=str(i),
                    showlegend=m == 0,
                    marker_color=QUALITATIVE[i % len(QUALITATIVE)],
                    hovertemplate=f"%{{x}}<br>{escape_text(metric_name)}: %{{y:{fmt}}}<extra></extra>",
                ),
                row=m // columns + 1,
                col=m % columns + 1,
            )
    fig.update_xaxes(showticklabels=False)
    fig.update_layout(
        barmode="group",
        hoverlabel=dict(namelength=-1),
        # two-line subplot titles in the top row need room under the figure's title
        margin=dict(l=10, r=10, t=90 if any("<br>" in t for t in titles[:columns]) else 60, b=10),
        legend=dict(orientation="h", yanchor="top", y=-0.04, x=0),
        height=300 * rows + 80,
    )
    return titled(fig, title, note)
