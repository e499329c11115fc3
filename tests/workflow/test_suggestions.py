"""The generalizations a page offers (``anonlib.workflow.suggestions``): each found once,
with every search that found it, least loss first, its cost measured on the working copy,
and hierarchies that keep every quasi-identifier."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonlib.core.dataset import Dataset
from anonlib.core.default_hierarchy import default_hierarchy
from anonlib.core.hierarchy import flat_hierarchy
from anonlib.core.samples import load_sample
from anonlib.measures.target import ReleaseTarget
from anonlib.transformations.generalization import search
from anonlib.workflow import step_cost
from anonlib.workflow.suggestions import generalization_suggestions, keeping_hierarchies, preselected, trims

QIS = ["age", "sex", "race", "native-country"]


def adult(rows: int = 3000):
    frame = load_sample("adult").frame.head(rows)[QIS + ["income"]]
    roles = {**{q: "quasi-identifier" for q in QIS}, "income": "sensitive"}
    dataset = Dataset.from_frame("adult.csv", frame, roles)
    hierarchies = {q: default_hierarchy(frame[q], q)[1] for q in QIS}
    return dataset, frame, hierarchies


def test_each_generalization_is_listed_once_with_every_search_that_found_it_least_loss_first():
    dataset, frame, hierarchies = adult()
    found = {
        m: search(frame, QIS, 5, hierarchies, method=m, max_suppressed=0.02)
        for m in ("optimal", "iab", "exhaustive", "greedy")
    }
    suggestions = generalization_suggestions(found, hierarchies, dataset)
    by_levels: dict[tuple, list[str]] = {}
    for name, result in found.items():
        by_levels.setdefault(tuple(result.levels.values()), []).append(name)
    assert sorted(tuple(s.result.levels.values()) for s in suggestions) == sorted(by_levels)
    for s in suggestions:
        assert list(s.found_by) == by_levels[tuple(s.result.levels.values())]
        assert all(dict(s.step.levels).get(a, 0) == v for a, v in s.result.levels.items())  # the step applies it
        assert s.cost.sentences() == step_cost(s.step, dataset).sentences()  # measured on the working copy
    losses = [s.result.utility for s in suggestions]
    assert losses == sorted(losses)
    assert suggestions[0].found_by[0] == "optimal"  # the proven least loss comes first
    choice = preselected(suggestions)
    removing = [s.cost.removes_quasi_identifier for s in suggestions]
    assert choice == (removing.index(False) if False in removing else None)


def test_equal_losses_keep_more_distinct_combinations_first():
    frame = pd.DataFrame({"a": list("xxyy"), "b": list("uvuv")})
    dataset = Dataset.from_frame("t.csv", frame, {"a": "quasi-identifier", "b": "quasi-identifier"})
    hierarchies = {"a": flat_hierarchy(["x", "y"]), "b": flat_hierarchy(["u", "v"])}
    coarse = search(frame, ["a", "b"], 4, hierarchies, method="iab")
    fine = search(frame, ["a", "b"], 2, hierarchies, method="optimal")
    ordered = generalization_suggestions({"k4": coarse, "k2": fine}, hierarchies, dataset)
    assert [s.found_by for s in ordered] == [("k2",), ("k4",)]
    assert ordered[0].result.utility < ordered[1].result.utility


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4), st.integers(1, 5), st.integers(1, 4))
def test_keeping_drops_exactly_the_single_valued_top_levels(n_levels, rows, tops):
    """``n_levels`` levels of distinct values under ``tops`` levels of one value lose exactly
    the top ones (with a single row every level has one value: the first one stays)."""
    levels = [[f"v{i}-{j}" for j in range(rows)] for i in range(n_levels)] + [["*"] * rows] * tops
    table = pd.DataFrame(list(zip(*levels)))
    kept = keeping_hierarchies({"x": table})["x"]
    assert kept.shape[1] == (n_levels if rows > 1 else 1)
    assert kept.equals(table.iloc[:, : kept.shape[1]])  # a prefix of the levels
    assert trims({"x": table}) == (rows > 1 and n_levels > 1)


def test_a_flat_hierarchy_cannot_be_kept_so_nothing_is_searched():
    h = {"sex": flat_hierarchy(["F", "M"]), "race": flat_hierarchy(["a", "b", "c"])}
    assert {a: t.shape[1] for a, t in keeping_hierarchies(h).items()} == {"sex": 1, "race": 1}
    assert not trims(h)


def test_keeping_need_is_the_least_failing_over_every_generalization_that_keeps_all_columns():
    """At the coarsest levels below '*', k-anonymity's failing records are the fewest of any
    node of the keeping lattice (checked by counting every node with pandas), and allowing
    that share lets the optimal search keep every column."""
    import itertools

    import numpy as np

    from anonlib.core.default_hierarchy import default_hierarchy
    from anonlib.core.errors import NoSolutionError
    from anonlib.core.hierarchy import generalize_column
    from anonlib.transformations.generalization import search
    from anonlib.workflow.suggestions import keeping_hierarchies, keeping_need

    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 90, 400),
            "zip": rng.choice([f"{z}" for z in range(10000, 99999, 997)], 400),
            "sex": rng.choice(["F", "M"], 400),
        }
    )
    h = {c: default_hierarchy(frame[c], c)[1] for c in frame.columns}
    kept = keeping_hierarchies(h)
    need = keeping_need(frame, list(frame.columns), h, target=ReleaseTarget(5))
    fewest = None
    for levels in itertools.product(*(range(kept[c].shape[1]) for c in frame.columns)):
        generalized = pd.DataFrame(
            {c: generalize_column(frame[c], kept[c], lv) for c, lv in zip(frame.columns, levels)}
        )
        sizes = generalized.groupby(list(frame.columns), dropna=False)[frame.columns[0]].transform("size")
        failing = int((sizes < 5).sum())
        fewest = failing if fewest is None else min(fewest, failing)
    assert need.failing == fewest > 0 and need.records == 400
    assert need.levels == {c: kept[c].shape[1] - 1 for c in frame.columns}
    assert "removed" not in need.words.values()
    found = search(frame, list(frame.columns), 5, kept, "optimal", max_suppressed=need.failing / 400)
    assert found.suppressed <= need.failing  # allowing that share is enough ...
    with pytest.raises(NoSolutionError):  # ... and one record less is not
        search(frame, list(frame.columns), 5, kept, "optimal", max_suppressed=(need.failing - 1) / 400)


def test_keeping_need_says_when_suppressing_still_fails_a_model_judged_on_the_records_left():
    """t-closeness is judged on the release: suppressing the failing records changes the
    distribution it compares with, so the share alone may not suffice; the library checks it."""
    import numpy as np

    from anonlib.core.default_hierarchy import default_hierarchy
    from anonlib.measures.models import ModelRequirement
    from anonlib.workflow.suggestions import keeping_need

    rng = np.random.default_rng(5)
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 90, 300),
            "sex": rng.choice(["F", "M"], 300),
            "dx": rng.choice(["a", "b", "c"], 300, p=[0.8, 0.15, 0.05]),
        }
    )
    h = {c: default_hierarchy(frame[c], c)[1] for c in ("age", "sex")}
    plain_k = keeping_need(frame, ["age", "sex"], h, target=ReleaseTarget(5))
    assert plain_k.failing == 2 and "failing k = 5: allowing at least 0.7% suppressed" in plain_k.sentence()
    strict = keeping_need(
        frame, ["age", "sex"], h, target=ReleaseTarget(5, requirements=[ModelRequirement("t_closeness", "dx", 0.01)])
    )
    assert strict.failing > 0 and not strict.suffices
    assert "still fail a privacy model" in strict.sentence() and "allowing at least" not in strict.sentence()


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_a_step_cost_judged_per_distinct_pair_of_values_is_the_cost_judged_row_by_row(seed):
    """``cost_between`` compares each distinct (before, after) pair of a column once (at 10^5
    records it compared every row, 0.6 s per suggestion): the same cells changed as row by row."""
    import numpy as np

    from anonlib.core.cells import cell_groups
    from anonlib.workflow.cost import _changed_cells, _changed_rows, _distinct

    rng = np.random.default_rng(seed)
    n = 2000
    ages = pd.Series(rng.integers(17, 40, n), dtype="Int64").mask(rng.random(n) < 0.05)
    as_text = ages.astype(object).map(lambda v: None if pd.isna(v) else (str(v) if v % 3 else f"0{v}"))
    words = pd.Series(np.array(["a", "b", "c", None], dtype=object)[rng.integers(0, 4, n)], dtype="string")
    relabelled = words.map({"a": "a", "b": "x", "c": "c"}).astype(object)
    scores = pd.Series(rng.integers(0, 9, n) / rng.choice([1.0, 2.0], n))
    mixed = pd.Series(np.array([1, True, "1", 1.0, None], dtype=object)[rng.integers(0, 5, n)])
    for old, new in [
        (ages, as_text),
        (ages, ages.astype("float64")),
        (words, relabelled),
        (scores, scores.map(lambda v: f"{v:g}")),
        (mixed, mixed.iloc[::-1].reset_index(drop=True)),
        (words, pd.Series(["*"] * n, dtype=object)),
    ]:
        assert _changed_cells(old, new).tolist() == _changed_rows(old, new).tolist()
        for column in (old, new):
            present = {(type(v), v) for v in column.dropna().tolist()}  # 1 and True are two values
            assert _distinct(cell_groups(column))[0] == len(present)
    frame = pd.DataFrame({"age": ages, "word": words, "score": scores})
    ds = Dataset.from_frame("t.csv", frame, {"age": "quasi-identifier", "word": "quasi-identifier"})
    h = {"age": default_hierarchy(ages, "age")[1], "word": flat_hierarchy(["a", "b", "c"])}
    from anonlib.workflow.steps import GeneralizationStep

    for levels in [{"age": 1, "word": 0}, {"age": 2, "word": 1}, {"age": 4, "word": 1}]:
        step = GeneralizationStep(tuple(levels.items()), tuple(h.items()))
        cost = step_cost(step, ds)
        after = step.apply(frame)
        cells = {c: _changed_rows(frame[c], after[c]) for c in levels if levels[c]}
        assert {c.column: c.records for c in cost.changes} == {c: int(v.sum()) for c, v in cells.items()}
        assert cost.records_changed == int(np.logical_or.reduce(list(cells.values())).sum())
        assert cost.cells_changed == sum(int(v.sum()) for v in cells.values())
        assert {c.column: (c.before, c.after) for c in cost.changes} == {
            c: (frame[c].dropna().nunique(), after[c].dropna().nunique()) for c in cells
        }
