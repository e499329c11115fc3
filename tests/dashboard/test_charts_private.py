"""The private release's charts (dashboard.charts.private, and the distribution chart in shares)
hold the comparison's own numbers, in the order they say, with user text escaped; no Streamlit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anonlib.workflow.private_release import ONEWAY_TARGET, TWOWAY_TARGET, compare_private, independent_columns
from dashboard.charts import distribution_figure, marginals_figure, private_tree_figure
from dashboard.charts.private import SHOWN_PAIRS


def real(n: int = 600, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.choice(["u", "v", "w"], n)
    return pd.DataFrame(
        {
            "<b>a</b>": a,
            "b": np.where(rng.random(n) < 0.7, a, "z"),
            "c": rng.choice(["p", "q"], n),
            "d": rng.choice(list("klmn"), n),
            "y": np.where(rng.random(n) < 0.8, a, "w"),
        }
    )


@pytest.fixture(scope="module")
def comparison():
    frame = real()
    columns = list(frame.columns)
    return compare_private(frame, independent_columns(frame, 900, seed=4), columns, predict="y", seed=1)


def test_the_marginals_figure_holds_every_one_way_and_the_furthest_pairs(comparison):
    fig = marginals_figure(comparison)
    assert len(fig.data) == 6  # release, halves, independent in each panel
    one = [m for m in comparison.marginals if len(m.columns) == 1]
    release, halves, independent = fig.data[:3]
    assert list(release.y) == ["&lt;b&gt;a&lt;/b&gt;", "b", "c", "d", "y"]  # escaped
    assert list(release.x) == [m.release for m in one]
    assert list(halves.x) == [m.halves for m in one] and list(independent.x) == [m.independent for m in one]
    two = sorted((m for m in comparison.marginals if len(m.columns) == 2), key=lambda m: -m.release)
    assert list(fig.data[3].x) == [m.release for m in two[:SHOWN_PAIRS]]
    assert list(fig.data[3].x) == sorted(fig.data[3].x, reverse=True)
    assert fig.data[3].y[0] == " × ".join(two[0].columns).replace("<", "&lt;").replace(">", "&gt;")
    assert sorted(shape.x0 for shape in fig.layout.shapes) == [ONEWAY_TARGET, TWOWAY_TARGET]
    assert f"mean two-way {comparison.twoway_mean:.4f}" in fig.layout.title.text


def test_at_most_the_furthest_pairs_are_drawn():
    frame = pd.DataFrame({f"c{i}": np.arange(40) % (i + 2) for i in range(8)}).astype(str)  # 28 pairs
    c = compare_private(frame, frame.sample(frac=1.0, random_state=0), list(frame.columns))
    fig = marginals_figure(c)
    assert len(fig.data[3].y) == SHOWN_PAIRS < 28
    assert f"{SHOWN_PAIRS} of 28" in fig.layout.annotations[1].text


def test_the_tree_figure_holds_the_three_trees_tested_on_the_same_records(comparison):
    tree = comparison.tree
    fig = private_tree_figure(tree)
    assert list(fig.data[0].x) == ["private release", "real records", "columns drawn independently"]
    assert list(fig.data[0].y) == [
        100 * tree.released.accuracy,
        100 * tree.real.accuracy,
        100 * tree.independent.accuracy,
    ]
    assert list(fig.data[1].y) == [100 * tree.real.baseline] * 3
    assert tree.gap > 0 and f"{100 * tree.gap:+.1f} points below" in fig.layout.title.text


def test_the_distribution_in_shares_sums_to_each_tables_records(comparison):
    view = comparison.column("d")
    fig = distribution_figure(view, shares=True, release="private release")
    assert sum(fig.data[0].y) == pytest.approx(100.0) and sum(fig.data[1].y) == pytest.approx(100.0)
    real_counts = real()["d"].value_counts()
    assert dict(zip(fig.data[0].x, fig.data[0].y)) == pytest.approx({k: 100 * v / 600 for k, v in real_counts.items()})
    assert fig.data[1].name == "private release" and "share of records" in fig.layout.title.text
    counts = distribution_figure(view)  # the default stays in records
    assert list(counts.data[0].y) == [real_counts[x] for x in counts.data[0].x]
