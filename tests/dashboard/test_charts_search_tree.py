"""The search tree chart stays readable: the paper's small trees drawn whole, trees of real
data collapsed to the path to the result with every other table tried in hover."""

from __future__ import annotations

from uploads import uploaded

from anonlib.core.default_hierarchy import default_hierarchy
from anonlib.core.samples import load_sample
from anonlib.transformations.anonymize_experiments import arca_hierarchies
from anonlib.transformations.generalization import search
from dashboard import charts

QIS = ["age", "sex", "zip"]


def test_the_papers_tree_is_drawn_whole_with_its_labels():
    df = load_sample("arca_table1").frame
    result = search(df, ["Zip", "Age", "AC"], 3, arca_hierarchies(df), "iab", count="#Rec.")
    fig = charts.search_tree_figure(result.tree, result.quasi_identifiers, tuple(result.levels.values()))
    nodes = fig.data[-1]
    assert list(nodes.text) == [n.label for n in result.tree]
    ringed = [i for i, w in enumerate(nodes.marker.line.width) if w]
    assert [result.tree[i].levels for i in ringed] == [tuple(result.levels.values())]
    assert "violating rows, rows" not in fig.layout.title.text.split("(the paper")[0]
    assert "distinct combinations" in fig.layout.title.text


def test_a_real_tree_is_collapsed_to_the_path_to_the_result():
    dataset, _ = uploaded()
    frame, _ = dataset.analysis_frame(QIS + ["diagnosis"])
    hierarchies = {c: default_hierarchy(frame[c], c)[1] for c in QIS}
    result = search(frame, QIS, 5, hierarchies, "exhaustive")
    assert len(result.tree) > charts.TREE_IN_FULL
    fig = charts.search_tree_figure(result.tree, result.quasi_identifiers, tuple(result.levels.values()))
    # the slow way: walk the parents from the result back to the root
    at = next(i for i, n in enumerate(result.tree) if n.levels == tuple(result.levels.values()))
    path = [at]
    while result.tree[path[-1]].parent is not None:
        path.append(result.tree[path[-1]].parent)
    path.reverse()
    spine, side = fig.data[-1], fig.data[1]
    assert len(spine.x) == len(path) <= 12  # a handful of labels, one per row: nothing overlaps
    assert [t.split(" (+")[0] for t in spine.text] == [result.tree[i].label for i in path]
    beside = [i for i, n in enumerate(result.tree) if n.parent in path and i not in path]
    assert len(side.x) == len(beside)
    assert all("distinct combinations" in h and "levels:" in h for h in list(spine.hovertext) + list(side.hovertext))
    assert f"{len(result.tree):,} tables were checked" in fig.layout.title.text
