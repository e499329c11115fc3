"""Every chart of the dashboard: functions from anonlib results to plotly figures.

No Streamlit here, so each builder is tested on its own. Hover texts carry the
exact numbers. Colour scales default to colour-blind-safe ones; the papers'
red-to-green scale is offered as an option, never the only one.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

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
        at_risk=AT_RISK, safe=SAFE, neutral="#999999", highlight="#009E73",
        low="#DEEBF7", high="#08306B", sequential="Cividis", series=tuple(QUALITATIVE),
    ),
    "red to green (as in the papers)": Palette(
        at_risk="#8B0000", safe="#1A9850", neutral="#9E9E9E", highlight="#1A9850",
        low="#FFD700", high="#1A9850", sequential=[[0.0, "#8B0000"], [0.5, "#FFD700"], [1.0, "#1A9850"]],
        series=("#8B0000", "#1A9850", "#E69F00", "#0072B2"),
    ),
}
DEFAULT_PALETTE = "colour-blind safe"


def _escape(value: object) -> str:
    """User text (column names, values) for hover and customdata: plotly renders
    a subset of HTML there (links, bold), so every user string is HTML-escaped.

    >>> _escape('<a href="x">Zip</a>')
    '&lt;a href=&quot;x&quot;&gt;Zip&lt;/a&gt;'
    """
    return html.escape(str(value))


def _layout(fig: go.Figure, title: str, x: str, y: str) -> go.Figure:
    # titles name user columns, and plotly renders HTML in them: escape (no title uses markup)
    import textwrap

    fig.update_layout(
        title=_escape(title),
        # long axis titles on two lines: plotly cuts them at the plot's edge in a 1024 px window
        xaxis_title="<br>".join(textwrap.wrap(_escape(x), 80)) if len(x) > 80 else _escape(x),
        yaxis_title=_escape(y),
        template="plotly_white",
        margin=dict(l=10, r=10, t=50, b=10),
        hoverlabel=dict(namelength=-1),
    )
    return fig


def _titled(fig: go.Figure, title: str, subtitle: str = "", width: int = 80) -> go.Figure:
    """A title with a smaller note under it (wrapped so it fits a 1024 px window),
    both escaped (they may name user columns).

    >>> _titled(go.Figure(), "Leakage", "a <b> note").layout.title.text
    'Leakage<br><sup>a &lt;b&gt; note</sup>'
    """
    import textwrap

    text = _escape(title)
    if subtitle:
        lines = textwrap.wrap(subtitle, width) or [""]
        text += "".join(f"<br><sup>{_escape(line)}</sup>" for line in lines)
        top = max(int(fig.layout.margin.t or 50), 50 + 16 * len(lines))
        fig.update_layout(margin=dict(t=top))
    return fig.update_layout(title=text)


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
            labels=[str(s) for s in sizes[keep]], lows=sizes[keep],
            classes=[row[keep] for row in counts], records=[row[keep] * sizes[keep] for row in counts],
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
        labels=[labels[i] for i in keep], lows=edges[:-1][keep],
        classes=[c[keep] for c in classes], records=[r[keep] for r in records],
    )


def _count_axis(fig: go.Figure, values: Sequence[np.ndarray]) -> None:
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
    _count_axis(fig, [classes])
    return _layout(
        fig,
        title or f"Anonymity vector (orange: classes smaller than {k_threshold})",
        "equivalence-class size j",
        "number of classes k(j)",
    )


def records_at_risk_figure(records_below: Sequence[tuple[int, int]], total: int) -> go.Figure:
    """Share of records in classes smaller than each threshold.

    >>> records_at_risk_figure([(2, 5), (5, 10)], 20).data[0].y
    (25.0, 50.0)
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
            hovertemplate="%{x}: %{customdata:,} records (%{y:.2f}%)<extra></extra>",
        )
    )
    fig.update_yaxes(range=[0, 100])
    return _layout(fig, "Records at risk", "", "% of records")


# --- leakage ---

METHOD_COLOURS = {"iab": QUALITATIVE[0], "exhaustive": QUALITATIVE[1], "greedy": QUALITATIVE[2]}


def _attribute_text(attribute) -> str:
    return attribute if isinstance(attribute, str) else " + ".join(map(str, attribute))


def leakage_figure(table, title: str = "Information leakage per query attribute") -> go.Figure:
    """Horizontal bars of normalized leakage (dS / S0), largest on top; hover: partitions, bits.

    >>> import pandas as pd
    >>> t = pd.DataFrame({"attribute": ["Sex", ("Age", "Zip")], "partitions": [2, 20],
    ...                   "loss": [0.99, 4.1], "normalized": [0.17, 0.69]})
    >>> fig = leakage_figure(t)
    >>> list(fig.data[0].y), list(fig.data[0].x)
    (['Sex', 'Age + Zip'], [0.17, 0.69])
    """
    ordered = table.sort_values("normalized", ascending=True, kind="stable")
    labels = [_attribute_text(a) for a in ordered["attribute"]]
    fig = go.Figure(
        go.Bar(
            x=ordered["normalized"].tolist(),
            y=labels,
            orientation="h",
            marker_color=SAFE,
            customdata=[[int(n), float(b), _escape(a)] for n, b, a in zip(ordered["partitions"], ordered["loss"], labels)],
            hovertemplate="%{customdata[2]}<br>normalized %{x:.5f}<br>%{customdata[1]:.5f} bits<br>"
            "%{customdata[0]:,} partitions<extra></extra>",
        )
    )
    fig.update_xaxes(range=[0, 1])
    fig.update_layout(height=max(260, 28 * len(labels) + 90))
    return _layout(fig, title, "normalized average information loss (0 = nothing, 1 = identifies everyone)", "")


def leakage_before_after_figure(comparison, palette: str = DEFAULT_PALETTE) -> go.Figure:
    """Grouped bars of normalized leakage before and after anonymization (the paper's Table 8).

    >>> import pandas as pd
    >>> c = pd.DataFrame({"attribute": ["Age"], "before": [0.6], "after": [0.0], "change": [-0.6]})
    >>> [t.name for t in leakage_before_after_figure(c).data]
    ['before', 'after']
    >>> "leakage changed" in leakage_before_after_figure(c.assign(after=[0.6])).layout.title.text
    True
    """
    colours = PALETTES[palette]
    fig = go.Figure(
        [
            go.Bar(
                name=when,
                x=comparison["attribute"].tolist(),
                y=comparison[when].tolist(),
                marker_color=colours.neutral if when == "before" else colours.safe,
                customdata=[_escape(_attribute_text(a)) for a in comparison["attribute"]],
                hovertemplate="%{customdata}: %{y:.5f}<extra>" + when + "</extra>",
            )
            for when in ("before", "after")
        ]
    )
    fig.update_yaxes(range=[0, 1])
    fig.update_layout(barmode="group")
    fig = _layout(fig, "", "query attribute", "normalized leakage")
    unchanged = len(comparison) and (comparison["before"] == comparison["after"]).all()
    note = "no attribute's leakage changed: the anonymized table leaks as much as the original" if unchanged else ""
    return _titled(fig, "Leakage before and after anonymization", note)


def tree_layout(parents) -> tuple[list[float], list[int]]:
    """Tidy positions of a tree given each node's parent index (None = root): leaves
    left to right in depth-first order, a parent centred over its children.

    >>> tree_layout([None, 0, 0, 1])
    ([0.5, 0.0, 1.0, 0.0], [0, 1, 1, 2])
    """
    children: dict[int, list[int]] = {}
    for i, p in enumerate(parents):
        if p is not None:
            children.setdefault(p, []).append(i)
    x = [0.0] * len(parents)
    depth = [0] * len(parents)
    next_leaf = 0.0
    for root in [i for i, p in enumerate(parents) if p is None]:
        order, stack = [], [(root, 0)]
        while stack:  # depth-first, children in generation order
            node, d = stack.pop()
            depth[node] = d
            order.append(node)
            stack.extend((c, d + 1) for c in reversed(children.get(node, [])))
        for node in order:
            if node not in children:
                x[node] = next_leaf
                next_leaf += 1.0
        for node in reversed(order):
            if node in children:
                x[node] = sum(x[c] for c in children[node]) / len(children[node])
    return x, depth


TREE_IN_FULL = 25  # search trees up to this many tables are drawn whole, labelled like the paper's figures
TREE_LEAVES_IN_FULL = 12  # ... and at most this many side by side, so the labels never overlap at 1024 px
TREE_EDGE_LABELS_UP_TO = 6  # leaves side by side up to which edges carry the attribute raised (else: hover)


def search_tree_figure(
    tree, shield, chosen=None, palette: str = DEFAULT_PALETTE, title: str | None = None, in_full: int = TREE_IN_FULL
) -> go.Figure:
    """The search tree like the paper's Figures 3-5: nodes T(violations, rows) by depth
    (total levels), edges labelled with the attribute generalized; the result ringed.

    ``tree`` is a sequence of nodes with ``levels``, ``violations``, ``rows``,
    ``parent`` and ``attribute`` (``anonlib.anonymize.SearchNode``). Trees of up
    to ``in_full`` tables are drawn whole; larger ones (real data: hundreds of
    tables whose labels would overlap) are collapsed to the path from the
    original table to the result, with the tables tried beside each step as
    unlabelled dots; every node's hover gives T(v, r), the attribute raised and
    the levels.

    >>> from anonlib.anonymize import SearchNode
    >>> t = [SearchNode((0,), 2, 5), SearchNode((1,), 0, 3, 0, "Zip")]
    >>> fig = search_tree_figure(t, ["Zip"], chosen=(1,))
    >>> list(fig.data[-1].text)
    ['T(2, 5)', 'T(0, 3)']
    >>> chain = [SearchNode((0, 0), 29, 30)] + [SearchNode((i, 0), 29 - i, 30 - i, i - 1, "Zip") for i in range(1, 30)]
    >>> side = [SearchNode((i, 1), 30, 30, i, "Age") for i in range(29)]
    >>> fig = search_tree_figure(chain + side, ["Zip", "Age"], chosen=(29, 0))
    >>> len(fig.data[-1].x), fig.data[-1].text[-1], len(fig.data[1].x)   # 30 labelled on the path, 29 dots beside
    (30, 'T(0, 1) (+Zip)', 29)
    """
    parents = {n.parent for n in tree}
    leaves = sum(1 for i in range(len(tree)) if i not in parents)
    if len(tree) <= in_full and leaves <= TREE_LEAVES_IN_FULL:
        return _whole_tree_figure(tree, shield, chosen, palette, title)
    return _tree_path_figure(tree, shield, chosen, palette)


def _node_hover(node, shield) -> str:
    how = (f"<br>reached by raising {_escape(node.attribute)}" if node.attribute is not None
           else "<br>the table as it is")
    levels = ", ".join(f"{_escape(a)} {v}" for a, v in zip(shield, node.levels))
    verdict = "meets k" if node.violations == 0 else f"{node.violations:,} distinct combinations in classes smaller than k"
    return f"{node.label}: {verdict}; {node.rows:,} distinct combinations{how}<br>levels: {levels}"


TREE_WORDS = ("T(v, r): v distinct combinations in classes smaller than k, r distinct combinations "
              "(the paper's violating rows and rows).")


def _whole_tree_figure(tree, shield, chosen, palette: str, title: str | None) -> go.Figure:
    colours = PALETTES[palette]
    x, depth = tree_layout([n.parent for n in tree])
    y = [-d for d in depth]
    edge_x, edge_y, label_x, label_y, label_text = [], [], [], [], []
    for i, node in enumerate(tree):
        if node.parent is None:
            continue
        p = node.parent
        edge_x += [x[p], x[i], None]
        edge_y += [y[p], y[i], None]
        label_x.append(x[p] + 0.7 * (x[i] - x[p]))  # near the child: siblings' labels stay apart
        label_y.append(y[p] + 0.7 * (y[i] - y[p]))
        label_text.append(_escape(node.attribute))
    crowded = sum(1 for i in range(len(tree)) if i not in {n.parent for n in tree}) > TREE_EDGE_LABELS_UP_TO
    if crowded:  # the attribute raised is in each node's hover instead
        label_x, label_y, label_text = [], [], []
    # siblings side by side: labels alternately above and below their node, so neighbours never touch
    rank: dict[int, int] = {}
    position = []
    for d in depth:
        rank[d] = rank.get(d, -1) + 1
        position.append("top center" if rank[d] % 2 == 0 or not crowded else "bottom center")
    colour = [colours.safe if n.violations == 0 else colours.at_risk for n in tree]
    outline = [3 if chosen is not None and tuple(n.levels) == tuple(chosen) else 0 for n in tree]
    fig = go.Figure(
        [
            go.Scatter(x=edge_x, y=edge_y, mode="lines", line=dict(color="#bbbbbb", width=1), hoverinfo="skip", showlegend=False),
            go.Scatter(
                x=label_x, y=label_y, mode="text", text=label_text, textfont=dict(size=10, color="#555555"),
                hoverinfo="skip", showlegend=False,
            ),
            go.Scatter(
                x=x,
                y=y,
                mode="markers+text",
                text=[n.label for n in tree],
                textposition=position,
                textfont=dict(size=10),
                marker=dict(size=14, color=colour, line=dict(width=outline, color="#000000")),
                hovertext=[_node_hover(n, shield) for n in tree],
                hoverinfo="text",
                showlegend=False,
            ),
        ]
    )
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    fig.update_layout(height=max(320, 90 * (max(depth) + 1) + 60))
    fig = _layout(fig, "", "", "")
    return _titled(fig, title or "Search tree (black ring: the result; blue: meets k)",
                   TREE_WORDS + " Hover a node for its levels.")


def _tree_path_figure(tree, shield, chosen, palette: str) -> go.Figure:
    """The path from the original table to the result (a labelled spine at x = 0)
    and, at each step, the other tables generated from the same parent (dots to
    the right, hover only)."""
    colours = PALETTES[palette]
    target = next((i for i, n in enumerate(tree) if chosen is not None and tuple(n.levels) == tuple(chosen)), None)
    if target is None:  # no result: the best table found (fewest violations, then most rows)
        target = min(range(len(tree)), key=lambda i: (tree[i].violations, -tree[i].rows, i))
    path = [target]
    while tree[path[-1]].parent is not None:
        path.append(tree[path[-1]].parent)
    path.reverse()
    on_path = {node: step for step, node in enumerate(path)}
    beside: dict[int, list[int]] = {}
    for i, node in enumerate(tree):
        if node.parent in on_path and i not in on_path:
            beside.setdefault(on_path[node.parent] + 1, []).append(i)
    spine_y = [-step for step in range(len(path))]
    edge_x: list = []
    edge_y: list = []
    side_x, side_y, side_nodes = [], [], []
    for step in range(1, len(path)):
        edge_x += [0, 0, None]
        edge_y += [-(step - 1), -step, None]
        for position, i in enumerate(beside.get(step, []), start=1):
            edge_x += [0, position, None]
            edge_y += [-(step - 1), -step, None]
            side_x.append(position)
            side_y.append(-step)
            side_nodes.append(tree[i])
    widest = max((len(v) for v in beside.values()), default=0)
    spine = [tree[i] for i in path]
    fig = go.Figure(
        [
            go.Scatter(x=edge_x, y=edge_y, mode="lines", line=dict(color="#cccccc", width=1), hoverinfo="skip",
                       showlegend=False),
            go.Scatter(
                x=side_x, y=side_y, mode="markers+text" if widest <= 6 else "markers",
                text=[_escape(n.attribute) for n in side_nodes], textposition="bottom center",
                textfont=dict(size=10, color="#777777"),
                marker=dict(size=9, color=[colours.safe if n.violations == 0 else colours.at_risk for n in side_nodes],
                            opacity=0.55),
                hovertext=[_node_hover(n, shield) for n in side_nodes], hoverinfo="text",
                name="tables tried beside the path",
            ),
            go.Scatter(
                x=[0] * len(spine), y=spine_y, mode="markers+text",
                text=[n.label + (f" (+{_escape(n.attribute)})" if n.attribute is not None else "") for n in spine],
                textposition="middle left",
                marker=dict(size=13, color=[colours.safe if n.violations == 0 else colours.at_risk for n in spine],
                            line=dict(width=[3 if i == target and chosen is not None else 0 for i in path],
                                      color="#000000")),
                hovertext=[_node_hover(n, shield) for n in spine], hoverinfo="text",
                name="path to the result",
            ),
        ]
    )
    fig.update_xaxes(visible=False, range=[-4.5, max(widest, 3) + 0.7])
    fig.update_yaxes(visible=False, range=[-(len(path) - 0.5), 0.6])
    fig.update_layout(height=max(320, 46 * len(path) + 150), showlegend=False)
    what = "result (black ring)" if chosen is not None else "best table found"
    fig = _layout(fig, "", "", "")
    return _titled(
        fig, "Search tree, collapsed",
        f"{len(tree):,} tables were checked; shown are the {len(path)} on the path from the table as it is to the "
        f"{what} and, as dots, the others tried at each step. Blue: meets k. " + TREE_WORDS
        + " Hover a node for its levels.",
    )


def _all_equal(values: Sequence) -> bool:
    """More than one value and all of them equal (a comparison with nothing to show).

    >>> _all_equal([21, 21, 21]), _all_equal([21, 18]), _all_equal([5])
    (True, False, False)
    """
    values = list(values)
    return len(values) > 1 and all(v == values[0] for v in values[1:])


def _compared_bars(table, label: str, metrics: Sequence[tuple[str, str, str]], *, columns: int,
                   title: str) -> go.Figure:
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
        _escape(name) + (f"<br>(all equal: {table[column].iloc[0]:{fmt}})" if _all_equal(table[column]) else "")
        for column, name, fmt in metrics
    ]
    note = "one run only: nothing to compare" if len(names) == 1 else ""
    rows = -(-len(metrics) // columns)
    fig = make_subplots(rows=rows, cols=columns, subplot_titles=titles,
                        vertical_spacing=0.18 if rows > 1 else 0.0)
    for i, name in enumerate(names):
        for m, (column, metric_name, fmt) in enumerate(metrics):
            fig.add_trace(
                go.Bar(
                    x=[_escape(name)], y=[table[column].iloc[i]], name=_escape(name), legendgroup=str(i),
                    showlegend=m == 0, marker_color=QUALITATIVE[i % len(QUALITATIVE)],
                    hovertemplate=f"%{{x}}<br>{_escape(metric_name)}: %{{y:{fmt}}}<extra></extra>",
                ),
                row=m // columns + 1, col=m % columns + 1,
            )
    fig.update_xaxes(showticklabels=False)
    fig.update_layout(
        template="plotly_white", barmode="group", hoverlabel=dict(namelength=-1),
        # two-line subplot titles in the top row need room under the figure's title
        margin=dict(l=10, r=10, t=90 if any("<br>" in t for t in titles[:columns]) else 60, b=10),
        legend=dict(orientation="h", yanchor="top", y=-0.04, x=0),
        height=300 * rows + 80,
    )
    return _titled(fig, title, note)


def method_comparison_figure(results) -> go.Figure:
    """Distinct combinations kept, tables generated and seconds per method, side by side; method
    names in the legend, equal bars marked "(all equal)".

    >>> import pandas as pd
    >>> t = pd.DataFrame({"method": ["IAB", "Greedy"], "rows": [21, 21], "generated": [13, 3], "seconds": [0.01, 0.01]})
    >>> [a.text for a in method_comparison_figure(t).layout.annotations]
    ['distinct combinations kept<br>(all equal: 21)', 'tables generated', 'seconds<br>(all equal: 0.01)']
    """
    metrics = [("rows", "distinct combinations kept", ",d"), ("generated", "tables generated", ",d"), ("seconds", "seconds", ".3g")]
    return _compared_bars(results, "method", metrics, columns=3, title="The three search methods")


def experiment_figure(experiment, metric: str = "rows", dataset: str | None = None) -> go.Figure:
    """Grouped bars of one metric per shield and method, with the paper's Table 7
    values as black diamonds where they exist.

    >>> import pandas as pd
    >>> e = pd.DataFrame({"dataset": ["1"] * 2, "shield": ["Zip, Age"] * 2, "k": [5, 5],
    ...                   "method": ["iab", "greedy"], "rows": [295, 276], "generated": [22, 13],
    ...                   "seconds": [0.01, 0.01], "paper_rows": [298, 274], "paper_generated": [14, 12]})
    >>> [t.name for t in experiment_figure(e).data]
    ['iab', 'greedy', 'paper (Table 7)', 'paper (Table 7)']
    """
    data = experiment if dataset is None else experiment[experiment["dataset"] == dataset]
    x_labels = [f"<{s}>, {k}" for s, k in zip(data["shield"], data["k"])]
    data = data.assign(requirement=x_labels)
    def x_of(part):
        return [part["dataset"].tolist(), part["requirement"].tolist()] if dataset is None else part["requirement"].tolist()

    traces = []
    for method in dict.fromkeys(data["method"]):
        part = data[data["method"] == method]
        traces.append(
            go.Bar(
                name=method,
                x=x_of(part),
                y=part[metric].tolist(),
                offsetgroup=method,
                marker_color=METHOD_COLOURS.get(method, QUALITATIVE[3]),
                hovertemplate="%{x}<br>" + metric + ": %{y}<extra>" + method + "</extra>",
            )
        )
    paper_column = {"rows": "paper_rows", "generated": "paper_generated"}.get(metric)
    if paper_column and paper_column in data and data[paper_column].notna().any():
        for i, method in enumerate(dict.fromkeys(data["method"])):
            part = data[(data["method"] == method) & data[paper_column].notna()]
            traces.append(
                go.Scatter(
                    name="paper (Table 7)",
                    legendgroup="paper",
                    showlegend=i == 0,
                    x=x_of(part),
                    y=part[paper_column].astype(float).tolist(),
                    offsetgroup=method,
                    mode="markers",
                    marker=dict(symbol="diamond", size=9, color="#000000"),
                    hovertemplate="paper, " + method + ": %{y}<extra></extra>",
                )
            )
    fig = go.Figure(traces)
    fig.update_layout(barmode="group", scattermode="group")
    names = {"rows": "distinct combinations kept", "generated": "tables generated", "seconds": "seconds", "generalizations": "levels of the result"}
    return _layout(fig, f"Heart-disease experiment: {names.get(metric, metric)}", "anonymity requirement <shield>, k", names.get(metric, metric))


# --- geo ---

GEO_COLOUR_BY = {
    "suppressed_share": "suppressed records (%)",
    "anonymity": "smallest class (log scale)",
}
COUNTY_BORDERS_UP_TO_KM = 2000  # maps spanning more show state borders only
GEO_METRICS = (
    ("suppressed (%)", "Suppression (% of records)"),
    ("compactness (km)", "Compactness (sum of distances, km)"),
    ("discernibility", "Discernibility"),
    ("non-uniform entropy (bits)", "Non-uniform entropy (bits)"),
)


def _polygon_rings_km(geometry, origin: tuple[float, float] = (0.0, 0.0)) -> tuple[list, list]:
    """Exterior rings of a (multi)polygon in km from ``origin`` (metres), separated by None (one filled shape each)."""
    import shapely

    xs: list = []
    ys: list = []
    for part in shapely.get_parts(geometry):
        if part.geom_type != "Polygon" or part.is_empty:
            continue
        coords = (shapely.get_coordinates(part.exterior) - origin) / 1000.0
        xs.extend(coords[:, 0].tolist() + [None])
        ys.extend(coords[:, 1].tolist() + [None])
    return xs, ys


def _lines_km(lines, origin: tuple[float, float]) -> tuple[list, list]:
    """All line strings of ``lines`` (an array of (multi)line strings, metres) as one
    x/y list in km from ``origin``, the lines separated by None (drawn as one trace).

    >>> import shapely
    >>> _lines_km([shapely.LineString([(0, 0), (1000, 0)]), shapely.LineString([(0, 2000), (0, 3000)])], (0.0, 0.0))
    ([0.0, 1.0, None, 0.0, 0.0, None], [0.0, 0.0, None, 2.0, 3.0, None])
    """
    import shapely

    parts = shapely.get_parts(np.asarray(lines, dtype=object))
    if len(parts) == 0:
        return [], []
    coords, index = shapely.get_coordinates(parts, return_index=True)
    coords = (coords - origin) / 1000.0
    ends = np.flatnonzero(np.diff(index)) + 1  # where the next line starts
    xs = np.insert(coords[:, 0], np.append(ends, len(coords)), np.nan)
    ys = np.insert(coords[:, 1], np.append(ends, len(coords)), np.nan)
    return [None if np.isnan(v) else float(v) for v in xs], [None if np.isnan(v) else float(v) for v in ys]


def _geo_colour_values(frame, colour_by: str) -> tuple[np.ndarray, np.ndarray]:
    """(colour value, shown value) per aggregated region."""
    if colour_by == "suppressed_share":
        records = frame["records"].to_numpy(dtype=float)
        shown = np.where(records > 0, 100.0 * frame["suppressed"].to_numpy(dtype=float) / np.maximum(records, 1), 0.0)
        return shown, shown
    shown = frame["anonymity"].to_numpy(dtype=float)
    return np.log10(np.maximum(shown, 1.0)), shown


def geo_map_figure(
    shapes,
    points,
    sites,
    *,
    colour_by: str = "suppressed_share",
    palette: str = DEFAULT_PALETTE,
    crs: str = "",
    outlines=None,
    bins: int = 12,
) -> go.Figure:
    """Map without tiles: aggregated regions filled by anonymity or suppression,
    the initial areas as dots, sites as diamonds (hover: exact numbers), over the
    state and county borders of ``outlines`` (``anonlib.geo.outlines_for``).

    ``shapes``: GeoDataFrame indexed by aggregated region with ``records``,
    ``regions``, ``anonymity``, ``suppressed`` (as from ``anonlib.geo.aggregated_polygons``);
    ``points``: ``x``, ``y`` (metres), ``region_id``, ``aggregated_region``;
    ``sites``: the same columns as ``shapes`` plus ``x``, ``y``. Suppression is
    drawn with the scale reversed so the papers' red always means "worse".
    Axes are km east and north of the data's south-west corner, the projection
    named in words (``crs``: e.g. "WGS 84 / UTM zone 16N"); every mark has a
    legend entry and the fill colours a colour bar.

    >>> import geopandas as gpd, pandas as pd, shapely
    >>> sites = pd.DataFrame({"x": [500.0], "y": [500.0], "regions": [1], "records": [10],
    ...                       "anonymity": [3], "suppressed": [2]}, index=["A1"])
    >>> shapes = gpd.GeoDataFrame(sites, geometry=[shapely.box(0, 0, 1000, 1000)])
    >>> pts = pd.DataFrame({"x": [400.0], "y": [600.0], "region_id": ["z"], "aggregated_region": ["A1"]})
    >>> fig = geo_map_figure(shapes, pts, sites, colour_by="suppressed_share")
    >>> [t.name for t in fig.data], fig.data[-1].marker.color, list(fig.data[1].x)
    (['aggregated regions (fill: suppressed records (%))', 'areas (one dot each)', 'sites'], (20.0,), [0.0])
    """
    from plotly.colors import sample_colorscale

    fig = go.Figure()
    reverse = colour_by == "suppressed_share"
    scale = PALETTES[palette].sequential
    xs_all = points["x"] if points is not None and len(points) else sites["x"]
    ys_all = points["y"] if points is not None and len(points) else sites["y"]
    origin = (float(xs_all.min()), float(ys_all.min()))
    colour_name = GEO_COLOUR_BY.get(colour_by, colour_by)
    used = sites[sites["regions"] > 0]
    site_value, shown = _geo_colour_values(used, colour_by)
    # one colour range for fills and diamonds; all regions alike -> from 0, not a range of 0.8 around one value
    low, high = (float(site_value.min()), float(site_value.max())) if len(site_value) else (0.0, 1.0)
    if high <= low:
        low, high = min(0.0, low), (high if high > 0 else 1.0)
    if shapes is not None and len(shapes):
        value, _ = _geo_colour_values(shapes, colour_by)
        span = high - low
        level = np.clip(((value - low) / span * bins).astype(int), 0, bins - 1)
        for n, b in enumerate(np.unique(level)):
            xs: list = []
            ys: list = []
            for geometry in shapes.geometry.to_numpy()[level == b]:
                rx, ry = _polygon_rings_km(geometry, origin)
                xs.extend(rx)
                ys.extend(ry)
            position = (b + 0.5) / bins
            colour = sample_colorscale(scale, [1.0 - position if reverse else position])[0]
            colour = colour.replace("rgb(", "rgba(").replace(")", ", 0.6)")
            fig.add_trace(
                go.Scatter(
                    x=xs, y=ys, mode="lines", fill="toself", fillcolor=colour,
                    line=dict(color="rgba(255,255,255,0.9)", width=0.6), hoverinfo="skip",
                    showlegend=n == 0, name=f"aggregated regions (fill: {colour_name})", legendgroup="regions",
                )
            )
    if outlines is not None:
        span_km = max(float(xs_all.max() - xs_all.min()), float(ys_all.max() - ys_all.min())) / 1000.0
        borders = [(outlines.states, "state borders", "rgba(40,40,40,0.9)", 1.2)]
        if span_km <= COUNTY_BORDERS_UP_TO_KM:  # a whole country's 3,000 counties would only blacken the map
            borders.insert(0, (outlines.counties, "county borders", "rgba(90,90,90,0.35)", 0.5))
        for lines, name, colour, width in borders:
            lx, ly = _lines_km(lines, origin)
            if lx:
                fig.add_trace(go.Scattergl(x=lx, y=ly, mode="lines", line=dict(color=colour, width=width),
                                           hoverinfo="skip", name=name))
    if points is not None and len(points):
        where = ""
        data = [[_escape(v) for v in points["region_id"]], [_escape(v) for v in points["aggregated_region"]]]
        if {"lon", "lat"} <= set(points.columns):
            data.append([f"{abs(lat):.3f}° {'N' if lat >= 0 else 'S'}, {abs(lon):.3f}° {'E' if lon >= 0 else 'W'}"
                         for lon, lat in zip(points["lon"], points["lat"])])
            where = "<br>%{customdata[2]}"
        fig.add_trace(
            go.Scattergl(
                x=((points["x"] - origin[0]) / 1000.0).tolist(), y=((points["y"] - origin[1]) / 1000.0).tolist(),
                mode="markers",
                marker=dict(size=4 if len(points) < 2000 else 2, color="#333333",
                            opacity=0.7 if len(points) < 2000 else 0.3, line=dict(width=0)),
                customdata=np.column_stack(data),
                hovertemplate="area %{customdata[0]}<br>aggregated region %{customdata[1]}" + where + "<extra></extra>",
                name="areas (one dot each)",
            )
        )
    value = site_value
    ticks = {}
    if colour_by == "anonymity" and len(shown):
        marks = [v for v in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10**4, 10**5, 10**6) if v <= shown.max() * 1.01]
        ticks = dict(tickvals=np.log10(marks).tolist(), ticktext=[f"{m:,}" for m in marks])
    fig.add_trace(
        go.Scatter(
            x=((used["x"] - origin[0]) / 1000.0).tolist(), y=((used["y"] - origin[1]) / 1000.0).tolist(),
            mode="markers",
            marker=dict(
                symbol="diamond", size=9, color=value.tolist(), colorscale=scale, reversescale=reverse,
                cmin=low, cmax=high,
                line=dict(color="black", width=1), showscale=True,
                colorbar=dict(title=dict(text=colour_name.replace(" (", "<br>("), side="top"), thickness=12, len=0.9,
                              **ticks),
            ),
            customdata=np.column_stack(
                [[_escape(v) for v in used.index], used["regions"], used["records"], used["anonymity"], used["suppressed"], shown]
            ),
            hovertemplate=(
                "site of %{customdata[0]}<br>%{customdata[1]:,} initial regions, %{customdata[2]:,} records"
                "<br>anonymity (smallest class) %{customdata[3]:,}<br>suppressed %{customdata[4]:,} records"
                "<extra></extra>"
            ),
            name="sites",
        )
    )
    projection = f"; projection {_escape(crs)}" if crs else ""
    fig.update_yaxes(scaleanchor="x", scaleratio=1, showgrid=False, zeroline=False, title="south to north (km)")
    fig.update_xaxes(showgrid=False, zeroline=False, title=f"west to east (km{projection})", automargin=True)
    # Height follows the data's aspect ratio (the axes keep 1 km = 1 km) on a plot about
    # 500 px wide, plus the title and the legend under it; within 380-820 px.
    span_x = max(float(xs_all.max() - xs_all.min()), 1.0)
    span_y = float(ys_all.max() - ys_all.min())
    height = int(np.clip(500 * span_y / span_x + 230, 380, 820))
    fig.update_layout(
        template="plotly_white", margin=dict(l=10, r=10, t=40, b=130), height=height + 60,
        # the legend at the bottom of the figure, under the x-axis title, in a margin tall enough for
        # its three lines in a 1024 px window (placed as a share of the plot, it covered the title)
        legend=dict(orientation="h", yref="container", yanchor="bottom", y=0, x=0), hoverlabel=dict(namelength=-1),
        title="Aggregated regions (filled), areas (dots), sites (diamonds)",
    )
    return fig


def geo_metrics_figure(table, label: str = "method", title: str = "The paper's Figures 3-5") -> go.Figure:
    """Croft et al. Figures 3-5 as bars: suppression, compactness, discernibility and
    non-uniform entropy per run (one bar per row of ``table``, named by ``label``
    in the legend); equal bars and a single run are said in words.

    >>> import pandas as pd
    >>> t = pd.DataFrame({"method": ["a", "b"], "suppressed (%)": [1.0, 2.0], "compactness (km)": [3.0, 4.0],
    ...                   "discernibility": [5, 6], "non-uniform entropy (bits)": [7.0, 8.0]})
    >>> fig = geo_metrics_figure(t)
    >>> len(fig.data), [d.y[0] for d in fig.data[:4]]
    (8, [1.0, 3.0, 5, 7.0])
    """
    formats = {"discernibility": ",.0f", "suppressed (%)": ".4g"}  # discernibility in full: 975,686
    metrics = [(column, title, formats.get(column, ",.4g")) for column, title in GEO_METRICS]
    return _compared_bars(table, label, metrics, columns=2, title=title)


# --- peers ---

def threshold_colorscale(threshold: float, palette: str) -> list[list]:
    """A 0..1 colour scale: at or below ``threshold`` the at-risk colour (dark red
    in the paper's palette), above it a gradient towards high privacy.

    >>> threshold_colorscale(0.2, "red to green (as in the papers)")
    [[0.0, '#8B0000'], [0.2, '#8B0000'], [0.200001, '#FFD700'], [1.0, '#1A9850']]
    """
    colours = PALETTES[palette]
    risk, low, high = colours.at_risk, colours.low, colours.high
    t = min(max(float(threshold), 0.0), 0.999998)
    return [[0.0, risk], [t, risk], [round(t + 1e-6, 6), low], [1.0, high]]


def privacy_heatmap(
    values: np.ndarray,
    row_labels: Sequence[str],
    columns,
    *,
    threshold: float,
    palette: str,
    value_label: str,
    title: str,
    individual_text: Sequence[str] | None = None,
    cell_notes: np.ndarray | None = None,
) -> go.Figure:
    """The paper's Fig. 2/3 heatmap: rows = variables, columns = individuals in
    the order of ``columns`` (an ``anonlib.peers.HeatmapColumns``), or bins of
    individuals for large data (each cell then the bin's mean; hover gives the
    bin's minimum, share at or below the threshold and most frequent
    ``cell_notes``). Hover on an individual shows their values
    (``individual_text``) and ``cell_notes`` (the worst subset).

    >>> from anonlib.peers import heatmap_columns
    >>> v = np.array([[0.0, 0.5, 1.0]])
    >>> fig = privacy_heatmap(v, ["age"], heatmap_columns(v), threshold=0.0,
    ...                       palette="red to green (as in the papers)", value_label="min PPP", title="t")
    >>> fig.data[0].z.shape, fig.data[0].zmax
    ((1, 3), 1.0)
    """
    z = columns.aggregate(values)
    n_rows, n_cols = z.shape
    if columns.bins is None:
        order = columns.order
        texts = np.empty((n_rows, n_cols), dtype=object)
        for r in range(n_rows):
            for c, i in enumerate(order):
                who = f"individual {i + 1}" + (f": {_escape(individual_text[i])}" if individual_text is not None else "")
                note = f"<br>worst: {_escape(cell_notes[r, i])}" if cell_notes is not None else ""
                texts[r, c] = f"{_escape(row_labels[r])}<br>{value_label} {values[r, i]:.3f}<br>{who}{note}"
        x_title = columns.description
    else:
        lows = columns.aggregate(values, "min")
        at_risk = columns.aggregate((values <= threshold).astype(np.float64))
        sizes = np.diff(columns.bins)
        bin_of = np.repeat(np.arange(n_cols), sizes)
        texts = np.empty((n_rows, n_cols), dtype=object)
        for r in range(n_rows):
            common = [""] * n_cols
            if cell_notes is not None:  # the most frequent note (worst subset) of each bin
                codes, uniques = pd.factorize(np.asarray(cell_notes[r])[columns.order])
                counts = np.bincount(bin_of * len(uniques) + codes, minlength=n_cols * len(uniques))
                counts = counts.reshape(n_cols, len(uniques))
                top = counts.argmax(axis=1)
                common = [f"<br>most often worst: {_escape(uniques[top[c]])} ({100 * counts[c, top[c]] / sizes[c]:.0f}%)"
                          for c in range(n_cols)]
            for c in range(n_cols):
                texts[r, c] = (
                    f"{_escape(row_labels[r])}<br>bin {c + 1}: {sizes[c]:,} individuals<br>"
                    f"mean {value_label} {z[r, c]:.3f}, lowest {lows[r, c]:.3f}<br>"
                    f"{100 * at_risk[r, c]:.0f}% at or below {threshold:g}{common[c]}"
                )
        x_title = columns.description
    fig = go.Figure(
        go.Heatmap(
            z=z,
            y=list(row_labels),
            x=[f"#{i + 1}" for i in columns.order] if columns.bins is None else list(range(1, n_cols + 1)),
            zmin=0.0,
            zmax=1.0,
            colorscale=threshold_colorscale(threshold, palette),
            customdata=texts,
            hovertemplate="%{customdata}<extra></extra>",
            colorbar=dict(title=value_label),
        )
    )
    fig.update_xaxes(showticklabels=n_cols <= 40)
    fig.update_yaxes(autorange="reversed")
    fig = _layout(fig, title, x_title, "")
    fig.update_layout(height=max(260, 60 + 34 * n_rows))
    return fig


def generalization_figure(table, baseline: float, variable: str, p: float) -> go.Figure:
    """Fig. 4: share of individuals with p-upward privacy for each equal-width
    partition (dots) against its number of categories; the best per number of
    categories as stars; the ungeneralized share as a dashed line.

    >>> import pandas as pd
    >>> t = pd.DataFrame({"categories": [2, 2, 3], "width": [5.0, 5.0, 3.0], "offset": [0.0, 1.0, 0.0],
    ...                   "first category": ["1-5", "1-4", "1-3"], "protected share": [0.5, 0.7, 0.6],
    ...                   "best for its categories": [False, True, True]})
    >>> [list(d.y) for d in generalization_figure(t, 0.4, "age", 0.0).data]
    [[50.0, 70.0, 60.0], [70.0, 60.0]]
    """
    hover = [
        f"{c} categories of width {w:g} (offset {o:g}, first {_escape(f)})<br>{100 * s:.1f}% protected"
        for c, w, o, f, s in zip(table["categories"], table["width"], table["offset"],
                                 table["first category"], table["protected share"])
    ]
    best = table["best for its categories"].to_numpy()
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=table["categories"].tolist(), y=(100 * table["protected share"]).tolist(), mode="markers",
        marker=dict(color=SAFE, size=7, opacity=0.6), name="partition", customdata=hover,
        hovertemplate="%{customdata}<extra></extra>",
    ))
    fig.add_trace(go.Scatter(
        x=table["categories"][best].tolist(), y=(100 * table["protected share"][best]).tolist(),
        mode="markers", marker=dict(color=AT_RISK, size=13, symbol="star"), name="best for its number of categories",
        customdata=[h for h, b in zip(hover, best) if b], hovertemplate="%{customdata}<extra></extra>",
    ))
    fig.add_hline(y=100 * baseline, line_dash="dash", line_color="#555555",
                  annotation_text=f"not generalized: {100 * baseline:.1f}%")
    fig.update_yaxes(range=[0, 100])
    return _layout(fig, f"Generalizing {variable}: individuals with p-upward privacy (p = {p:g})",
                   f"number of categories of {variable}", "% of individuals protected")


NPP_BINS = ((0, 0), (1, 1), (2, 2), (3, 4), (5, 9), (10, 19), (20, 49), (50, 99), (100, None))


def npp_histogram(npp: np.ndarray, weights: np.ndarray, variable: str) -> go.Figure:
    """Distribution of the number of protective peers (maximum auxiliary
    information) in bins 0, 1, 2, 3-4, ..., 100+.

    >>> list(npp_histogram(np.array([0, 0, 3, 120]), np.ones(4), "age").data[0].y)
    [2.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0]
    """
    labels, counts = [], []
    for lo, hi in NPP_BINS:
        inside = (npp >= lo) & (npp <= hi) if hi is not None else npp >= lo
        labels.append(f"{lo}" if lo == hi else (f"{lo}-{hi}" if hi is not None else f"{lo}+"))
        counts.append(float(weights[inside].sum()))
    colours = [AT_RISK if lo == 0 else SAFE for lo, _ in NPP_BINS]
    fig = go.Figure(go.Bar(x=labels, y=counts, marker_color=colours,
                           hovertemplate="NPP %{x}: %{y:,} individuals<extra></extra>"))
    return _layout(fig, f"Protective peers of {variable} with maximum auxiliary information",
                   "number of protective peers (NPP)", "individuals")


# --- schedules ---


def schedule_vectors_figure(vectors: dict[str, Sequence[int]]) -> go.Figure:
    """Grouped bars: the anonymity vectors of several schedules side by side.

    One bar group per class size that occurs in any vector (size ranges when
    more than 30 sizes occur, a log count axis when counts span more than two
    orders of magnitude); hover shows the schedule, the class size, the number
    of classes and of records. Schedules with identical vectors are named in the
    title, so equal bars read as a result, not a bug.

    >>> fig = schedule_vectors_figure({"before": (0, 1, 0, 2, 1), "heuristic": (2, 3, 1, 1)})
    >>> [t.name for t in fig.data], list(fig.data[1].x), list(fig.data[1].y)
    (['before', 'heuristic'], ['1', '2', '3', '4', '5'], [2, 3, 1, 1, 0])
    >>> schedule_vectors_figure({"heuristic": (0, 2), "optimal": (0, 2, 0)}).layout.title.text
    'Anonymity vectors: classes of each size (fewer on the left is better)<br><sup>heuristic and optimal: identical vectors</sup>'
    """
    names = list(vectors)
    bins = class_size_bins([vectors[n] for n in names])
    fig = go.Figure()
    for position, name in enumerate(names):
        fig.add_trace(
            go.Bar(
                name=name,
                x=bins.labels,
                y=bins.classes[position].tolist(),
                marker_color=QUALITATIVE[position % len(QUALITATIVE)],
                customdata=bins.records[position].tolist(),
                hovertemplate=f"{_escape(name)}<br>class size %{{x}}<br>%{{y:,}} classes<br>%{{customdata:,}} records<extra></extra>",
            )
        )
    fig.update_layout(barmode="group", legend_title_text="schedule")
    fig.update_xaxes(type="category")
    _count_axis(fig, bins.classes)
    same = _identical_groups({n: _trimmed(vectors[n]) for n in names})
    note = "; ".join(" and ".join(group) + ": identical vectors" for group in same)
    fig = _layout(fig, "", "equivalence-class size j", "number of classes k(j)")
    return _titled(fig, "Anonymity vectors: classes of each size (fewer on the left is better)", note)


def _trimmed(vector: Sequence[int]) -> tuple[int, ...]:
    """The vector without trailing zeros (the same classes, written shorter)."""
    values = [int(v) for v in vector]
    while values and values[-1] == 0:
        values.pop()
    return tuple(values)


def _identical_groups(values: dict[str, object]) -> list[list[str]]:
    """Names whose values are equal, in groups of two or more (first-seen order).

    >>> _identical_groups({"a": 1, "b": 2, "c": 1, "d": 3})
    [['a', 'c']]
    """
    groups: dict[object, list[str]] = {}
    for name, value in values.items():
        groups.setdefault(value, []).append(name)
    return [g for g in groups.values() if len(g) > 1]


def resource_load_figure(labels: Sequence[str], capacity: Sequence[int], assigned: Sequence[int]) -> go.Figure:
    """Per resource: capacity (outline) and records assigned (filled bars).

    >>> fig = resource_load_figure(["A 9h", "B 9h"], [4, 3], [4, 1])
    >>> [t.name for t in fig.data], list(fig.data[1].y)
    (['capacity', 'assigned'], [4, 1])
    """
    labels = [str(x) for x in labels]
    fig = go.Figure(
        [
            go.Bar(name="capacity", x=labels, y=list(capacity), marker_color="rgba(0,0,0,0)",
                   marker_line=dict(color="#000000", width=1), customdata=[_escape(x) for x in labels],
                   hovertemplate="%{customdata}: capacity %{y:,}<extra></extra>"),
            go.Bar(name="assigned", x=labels, y=list(assigned), marker_color=SAFE,
                   customdata=[_escape(x) for x in labels],
                   hovertemplate="%{customdata}: %{y:,} records<extra></extra>"),
        ]
    )
    fig.update_layout(barmode="overlay")
    fig.update_xaxes(type="category")
    _count_axis(fig, [np.asarray(capacity), np.asarray(assigned)])
    return _layout(fig, "Load per resource", "resource", "records (seats)")


def table10_figure(frame, ours: str, paper: str, title: str) -> go.Figure:
    """Our reproduction next to the paper's numbers, per population size N.

    >>> import pandas as pd
    >>> f = pd.DataFrame({"N": [20, 50], "x": [30.0, 60.0], "p": [24.0, 62.0]})
    >>> [t.name for t in table10_figure(f, "x", "p", "t").data]
    ['this reproduction', 'paper']
    """
    fig = go.Figure(
        [
            go.Scatter(name="this reproduction", x=[str(n) for n in frame["N"]], y=frame[ours],
                       mode="lines+markers", marker_color=QUALITATIVE[0],
                       hovertemplate="N = %{x}: %{y:.2f}%<extra></extra>"),
            go.Scatter(name="paper", x=[str(n) for n in frame["N"]], y=frame[paper],
                       mode="lines+markers", marker_color=QUALITATIVE[1], line=dict(dash="dash"),
                       hovertemplate="N = %{x}: %{y:.0f}% (paper)<extra></extra>"),
        ]
    )
    fig.update_xaxes(type="category")
    return _layout(fig, title, "population size N", "mean improvement (%)")


# --- frontier ---


def _frontier_colours(palette: Palette) -> dict[str, str]:
    """What each element of the frontier charts is drawn in."""
    return {
        "evaluated": palette.neutral, "frontier": palette.series[0], "safe_harbor": palette.at_risk,
        "dominating": palette.highlight, "selected": "#000000",
        "shs": palette.series[0], "rcs": palette.series[1],
    }


def frontier_figure(
    evaluated_risk: Sequence[float],
    evaluated_loss: Sequence[float],
    frontier_risk: Sequence[float],
    frontier_loss: Sequence[float],
    *,
    safe_harbor: tuple[float, float] | None = None,
    dominating: tuple[Sequence[float], Sequence[float]] | None = None,
    selected: tuple[float, float] | None = None,
    colours: str = DEFAULT_PALETTE,
) -> go.Figure:
    """Evaluated policies (dots), the frontier as a step line, Safe Harbor (star),
    the frontier policies that dominate it (squares) and the selected policy (ring).
    Axes: risk and normalized information loss, both in [0, 1].

    >>> fig = frontier_figure([0.2, 0.5, 1.0], [1.0, 0.6, 0.0], [0.2, 1.0], [1.0, 0.0], safe_harbor=(0.6, 0.7))
    >>> [t.name for t in fig.data], fig.data[1].line.shape
    (['evaluated policies', 'frontier', 'HIPAA Safe Harbor'], 'hv')
    """
    palette = _frontier_colours(PALETTES[colours])
    hover = "risk %{x:.4f}<br>loss (normalized) %{y:.4f}<extra>%{fullData.name}</extra>"
    fig = go.Figure()
    fig.add_trace(
        go.Scattergl(
            x=list(evaluated_risk), y=list(evaluated_loss), mode="markers", name="evaluated policies",
            marker=dict(size=4, color=palette["evaluated"], opacity=0.45), hovertemplate=hover,
        )
    )
    order = np.argsort(np.asarray(frontier_risk, dtype=float), kind="stable")
    fig.add_trace(
        go.Scatter(
            x=np.asarray(frontier_risk, dtype=float)[order].tolist(),
            y=np.asarray(frontier_loss, dtype=float)[order].tolist(),
            mode="lines+markers", line=dict(shape="hv", color=palette["frontier"], width=2),
            marker=dict(size=6), name="frontier", customdata=(order + 1).tolist(),
            hovertemplate="frontier policy %{customdata}<br>" + hover,
        )
    )
    if safe_harbor is not None:
        fig.add_trace(
            go.Scatter(
                x=[safe_harbor[0]], y=[safe_harbor[1]], mode="markers", name="HIPAA Safe Harbor",
                marker=dict(symbol="star", size=16, color=palette["safe_harbor"]), hovertemplate=hover,
            )
        )
    if dominating is not None and len(dominating[0]):
        fig.add_trace(
            go.Scatter(
                x=list(dominating[0]), y=list(dominating[1]), mode="markers",
                name="frontier policies dominating Safe Harbor",
                marker=dict(symbol="square", size=9, color=palette["dominating"]), hovertemplate=hover,
            )
        )
    if selected is not None:
        fig.add_trace(
            go.Scatter(
                x=[selected[0]], y=[selected[1]], mode="markers", name="selected policy",
                marker=dict(symbol="circle-open", size=18, line=dict(width=3), color=palette["selected"]),
                hovertemplate=hover,
            )
        )
    fig.update_xaxes(range=[-0.02, 1.02])
    fig.update_yaxes(range=[-0.02, 1.02])
    fig = _layout(fig, "Risk-utility frontier", "re-identification risk", "information loss (KL / KL of top)")
    # the legend under the plot: on the right it would take a third of a 1024 px window
    return fig.update_layout(legend=dict(orientation="h", yanchor="top", y=-0.18, x=0), height=520)


def area_trace_figure(
    traces: dict[str, Sequence[tuple[int, float]]], budget: int, optimum: float | None = None,
    colours: str = DEFAULT_PALETTE,
) -> go.Figure:
    """Area under the frontier against policies evaluated, one step line per method.

    >>> fig = area_trace_figure({"shs": [(2, 0.9), (10, 0.5)]}, 20)
    >>> list(fig.data[0].x), list(fig.data[0].y)
    ([2, 10, 20], [0.9, 0.5, 0.5])
    """
    palette = _frontier_colours(PALETTES[colours])
    fig = go.Figure()
    for method, trace in traces.items():
        xs = [n for n, _ in trace]
        ys = [a for _, a in trace]
        if xs and xs[-1] < budget:
            xs.append(budget)
            ys.append(ys[-1])
        fig.add_trace(
            go.Scatter(
                x=xs, y=ys, mode="lines", line=dict(shape="hv", color=palette.get(method, QUALITATIVE[0])),
                name=method.upper(), hovertemplate="%{x:,} policies: area %{y:.4f}<extra>%{fullData.name}</extra>",
            )
        )
    if optimum is not None:
        fig.add_hline(y=optimum, line_dash="dot", annotation_text="exhaustive optimum")
    return _layout(fig, "Area under the frontier (smaller is better)", "policies evaluated", "area")


def clicked_frontier_policy(event: object, n_frontier: int) -> int | None:
    """The frontier policy (0-based) clicked on the frontier line of
    ``frontier_figure`` (trace 1, whose customdata is the 1-based policy number),
    from a plotly-chart selection event; None when no frontier point was clicked.

    >>> clicked_frontier_policy({"selection": {"points": [{"curve_number": 1, "customdata": 3}]}}, 5)
    2
    >>> clicked_frontier_policy({"selection": {"points": [{"curve_number": 0, "point_index": 3}]}}, 5) is None
    True
    """
    try:
        points = event["selection"]["points"]  # type: ignore[index]
    except (KeyError, TypeError):
        return None
    for point in points:
        number = point.get("customdata") if point.get("curve_number") == 1 else None
        if isinstance(number, list):
            number = number[0] if number else None
        if isinstance(number, (int, float)) and 1 <= number <= n_frontier:
            return int(number) - 1
    return None


# --- re-identification risk (anonlib.risk) ---


def risk_distribution_figure(
    bins,
    threshold: float = 0.2,
    palette: str = DEFAULT_PALETTE,
    title: str | None = None,
) -> go.Figure:
    """Records per prosecutor-risk band, as ARX's risk analysis draws it: bars of the
    share of records whose risk (1 / class size) lies in each band, and a line of the
    cumulative share. ``bins`` is ``ReidentificationRisk.distribution`` (or
    ``anonlib.risk.risk_distribution(class_sizes)``). Bands above the lowest band
    holding records are shown; a band whose upper bound exceeds ``threshold`` is in
    the at-risk colour (exact at ARX's 0.2 and 0.5, band bounds, and above 1/8 each
    band holds one class size). Hover: band, records, share, cumulative share.

    >>> from anonlib.risk import risk_distribution
    >>> fig = risk_distribution_figure(risk_distribution([1, 2, 2, 10]))
    >>> list(fig.data[0].x)[:2], [round(y, 1) for y in fig.data[0].y][-3:], fig.data[1].y[-1]
    (['9–10%', '10–12.5%'], [0.0, 26.7, 6.7], 100.0)
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
            name="records in the band",
            marker_color=[colours.at_risk if b.high > threshold else colours.safe for b in shown],
            customdata=[[b.records, 100.0 * b.cumulative] for b in shown],
            hovertemplate="risk %{x}<br>%{customdata[0]:,} records (%{y:.2f}%)"
            "<br>%{customdata[1]:.2f}% of records at this risk or lower<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=labels,
            y=[100.0 * b.cumulative for b in shown],
            name="cumulative",
            mode="lines+markers",
            line=dict(color=colours.neutral),
            hovertemplate="risk up to %{x}: %{y:.2f}% of records<extra></extra>",
        )
    )
    fig.update_xaxes(type="category")
    fig.update_yaxes(range=[0, 102])
    fig.update_layout(legend=dict(orientation="h", y=-0.25), bargap=0.15)
    return _layout(
        fig,
        title or f"Prosecutor risk of the records (bands above {100 * threshold:g}% highlighted)",
        "re-identification risk (1 / class size)",
        "% of records",
    )
