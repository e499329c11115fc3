"""Charts of the Leakage & anonymization page: leakage per attribute, before and after,
the search tree as drawn in Arca & Hewett's figures, and the methods compared."""

from __future__ import annotations

import plotly.graph_objects as go

from .base import DEFAULT_PALETTE, PALETTES, QUALITATIVE, SAFE, compared_bars, escape_text, laid_out, titled

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
            customdata=[
                [int(n), float(b), escape_text(a)] for n, b, a in zip(ordered["partitions"], ordered["loss"], labels)
            ],
            hovertemplate="%{customdata[2]}<br>normalized %{x:.5f}<br>%{customdata[1]:.5f} bits<br>"
            "%{customdata[0]:,} partitions<extra></extra>",
        )
    )
    fig.update_xaxes(range=[0, 1])
    fig.update_layout(height=max(260, 28 * len(labels) + 90))
    return laid_out(fig, title, "normalized average information loss (0 = nothing, 1 = identifies everyone)", "")


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
                customdata=[escape_text(_attribute_text(a)) for a in comparison["attribute"]],
                hovertemplate="%{customdata}: %{y:.5f}<extra>" + when + "</extra>",
            )
            for when in ("before", "after")
        ]
    )
    fig.update_yaxes(range=[0, 1])
    fig.update_layout(barmode="group")
    fig = laid_out(fig, "", "query attribute", "normalized leakage")
    unchanged = len(comparison) and (comparison["before"] == comparison["after"]).all()
    note = "no attribute's leakage changed: the anonymized table leaks as much as the original" if unchanged else ""
    return titled(fig, "Leakage before and after anonymization", note)


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
    ``parent`` and ``attribute`` (``anonlib.transformations.generalization.SearchNode``). Trees of up
    to ``in_full`` tables are drawn whole; larger ones (real data: hundreds of
    tables whose labels would overlap) are collapsed to the path from the
    original table to the result, with the tables tried beside each step as
    unlabelled dots; every node's hover gives T(v, r), the attribute raised and
    the levels.

    >>> from anonlib.transformations.generalization import SearchNode
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
    how = (
        f"<br>reached by raising {escape_text(node.attribute)}"
        if node.attribute is not None
        else "<br>the table as it is"
    )
    levels = ", ".join(f"{escape_text(a)} {v}" for a, v in zip(shield, node.levels))
    verdict = (
        "meets k" if node.violations == 0 else f"{node.violations:,} distinct combinations in classes smaller than k"
    )
    return f"{node.label}: {verdict}; {node.rows:,} distinct combinations{how}<br>levels: {levels}"


TREE_WORDS = (
    "T(v, r): v distinct combinations in classes smaller than k, r distinct combinations "
    "(the paper's violating rows and rows)."
)


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
        label_text.append(escape_text(node.attribute))
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
            go.Scatter(
                x=edge_x,
                y=edge_y,
                mode="lines",
                line=dict(color="#bbbbbb", width=1),
                hoverinfo="skip",
                showlegend=False,
            ),
            go.Scatter(
                x=label_x,
                y=label_y,
                mode="text",
                text=label_text,
                textfont=dict(size=10, color="#555555"),
                hoverinfo="skip",
                showlegend=False,
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
    fig = laid_out(fig, "", "", "")
    return titled(
        fig,
        title or "Search tree (black ring: the result; blue: meets k)",
        TREE_WORDS + " Hover a node for its levels.",
    )


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
            go.Scatter(
                x=edge_x,
                y=edge_y,
                mode="lines",
                line=dict(color="#cccccc", width=1),
                hoverinfo="skip",
                showlegend=False,
            ),
            go.Scatter(
                x=side_x,
                y=side_y,
                mode="markers+text" if widest <= 6 else "markers",
                text=[escape_text(n.attribute) for n in side_nodes],
                textposition="bottom center",
                textfont=dict(size=10, color="#777777"),
                marker=dict(
                    size=9,
                    color=[colours.safe if n.violations == 0 else colours.at_risk for n in side_nodes],
                    opacity=0.55,
                ),
                hovertext=[_node_hover(n, shield) for n in side_nodes],
                hoverinfo="text",
                name="tables tried beside the path",
            ),
            go.Scatter(
                x=[0] * len(spine),
                y=spine_y,
                mode="markers+text",
                text=[n.label + (f" (+{escape_text(n.attribute)})" if n.attribute is not None else "") for n in spine],
                textposition="middle left",
                marker=dict(
                    size=13,
                    color=[colours.safe if n.violations == 0 else colours.at_risk for n in spine],
                    line=dict(width=[3 if i == target and chosen is not None else 0 for i in path], color="#000000"),
                ),
                hovertext=[_node_hover(n, shield) for n in spine],
                hoverinfo="text",
                name="path to the result",
            ),
        ]
    )
    fig.update_xaxes(visible=False, range=[-4.5, max(widest, 3) + 0.7])
    fig.update_yaxes(visible=False, range=[-(len(path) - 0.5), 0.6])
    fig.update_layout(height=max(320, 46 * len(path) + 150), showlegend=False)
    what = "result (black ring)" if chosen is not None else "best table found"
    fig = laid_out(fig, "", "", "")
    return titled(
        fig,
        "Search tree, collapsed",
        f"{len(tree):,} tables were checked; shown are the {len(path)} on the path from the table as it is to the "
        f"{what} and, as dots, the others tried at each step. Blue: meets k. "
        + TREE_WORDS
        + " Hover a node for its levels.",
    )


def method_comparison_figure(results) -> go.Figure:
    """Distinct combinations kept, tables generated and seconds per method, side by side; method
    names in the legend, equal bars marked "(all equal)".

    >>> import pandas as pd
    >>> t = pd.DataFrame({"method": ["IAB", "Greedy"], "rows": [21, 21], "generated": [13, 3], "seconds": [0.01, 0.01]})
    >>> [a.text for a in method_comparison_figure(t).layout.annotations]
    ['distinct combinations kept<br>(all equal: 21)', 'tables generated', 'seconds<br>(all equal: 0.01)']
    """
    metrics = [
        ("rows", "distinct combinations kept", ",d"),
        ("generated", "tables generated", ",d"),
        ("seconds", "seconds", ".3g"),
    ]
    return compared_bars(results, "method", metrics, columns=3, title="The three search methods")


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
        return (
            [part["dataset"].tolist(), part["requirement"].tolist()]
            if dataset is None
            else part["requirement"].tolist()
        )

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
    names = {
        "rows": "distinct combinations kept",
        "generated": "tables generated",
        "seconds": "seconds",
        "generalizations": "levels of the result",
    }
    return laid_out(
        fig,
        f"Heart-disease experiment: {names.get(metric, metric)}",
        "anonymity requirement <shield>, k",
        names.get(metric, metric),
    )


TREE_LEAVES_DRAWN = 300  # a hierarchy with more original values is drawn from level 1 up


def hierarchy_figure(nodes, attribute: str, palette: str = DEFAULT_PALETTE) -> go.Figure:
    """A hierarchy as an icicle (``anonlib.core.hierarchy.hierarchy_tree``): the top level
    on the left, each value's box as tall as its records (or its original values when
    not counted). Past ``TREE_LEAVES_DRAWN`` original values the original values are left
    out (the subtitle says so) and the tree starts at level 1."""
    leaves = sum(1 for n in nodes if n.level == 0)
    drawn = [i for i, n in enumerate(nodes) if n.level > 0 or leaves <= TREE_LEAVES_DRAWN]
    if not drawn:  # a hierarchy of originals only
        drawn = list(range(len(nodes)))
    counted = all(n.records is not None for n in nodes)
    ids = [f"{nodes[i].level}:{nodes[i].label}" for i in drawn]
    parents = [
        "" if nodes[i].parent is None else f"{nodes[nodes[i].parent].level}:{nodes[nodes[i].parent].label}"
        for i in drawn
    ]
    sizes = [nodes[i].records if counted else nodes[i].values for i in drawn]
    colours = PALETTES[palette]
    fig = go.Figure(
        go.Icicle(
            ids=ids,
            parents=parents,
            labels=[escape_text(nodes[i].label) for i in drawn],
            values=sizes,
            branchvalues="total",
            tiling=dict(orientation="h"),
            root=dict(color=colours.neutral),
            marker=dict(colors=[nodes[i].level for i in drawn], colorscale="Blues", reversescale=True),
            customdata=[
                [nodes[i].level, nodes[i].values, "–" if nodes[i].records is None else f"{nodes[i].records:,}"]
                for i in drawn
            ],
            hovertemplate="%{label}<br>level %{customdata[0]}<br>%{customdata[1]:,} original values"
            "<br>%{customdata[2]} records<extra></extra>",
            maxdepth=4,
        )
    )
    fig.update_layout(margin=dict(l=10, r=10, t=50, b=10), height=420)
    note = "Boxes as tall as their records" if counted else "Boxes as tall as their original values"
    if leaves > TREE_LEAVES_DRAWN:
        note += f"; the {leaves:,} original values are left out (level 1 upwards shown)"
    return titled(fig, f"Hierarchy of {attribute}, top level on the left", note + ". Click a box to open it.")
