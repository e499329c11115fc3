"""Generalization search: the paper's example, IAB = exhaustive on random tables, errors."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonlib.core.errors import ColumnError, EmptySelectionError, HierarchyError, ParameterError, ProblemTooLargeError
from anonlib.core.hierarchy import flat_hierarchy, interval_hierarchy, masking_hierarchy, taxonomy_hierarchy
from anonlib.core.samples import load_sample
from anonlib.measures.target import ReleaseTarget
from anonlib.transformations.anonymize_experiments import (
    EXPERIMENT_SHIELDS,
    arca_hierarchies,
    heart_experiment,
    heart_hierarchies,
    heart_table,
)
from anonlib.transformations.generalization import (
    METHODS,
    GeneralizationSpace,
    NoSolutionError,
    compare_methods,
    comparison_table,
    estimate_search,
    search,
)

SHIELD = ["Zip", "Age", "AC"]


@pytest.fixture(scope="module")
def table1() -> pd.DataFrame:
    return load_sample("arca_table1").frame


@pytest.fixture(scope="module")
def hierarchies(table1):
    return arca_hierarchies(table1)


def reference_counts(df: pd.DataFrame, shield, k, hierarchies, levels, count=None) -> tuple[int, int]:
    """Slow, literal reading of the paper's definitions: generalize cell by cell with dicts, count with Python."""
    maps = {}
    for attribute, level in zip(shield, levels):
        h = hierarchies[attribute].astype(str)
        maps[attribute] = dict(zip(h[0], h[level]))
    columns = [c for c in df.columns if c != count]
    rows = []
    for _, record in df.iterrows():
        values = tuple(maps[c][str(record[c])] if c in maps else record[c] for c in columns)
        rows.append((values, 1 if count is None else int(record[count])))
    group: dict[tuple, int] = {}
    for values, n in rows:
        key = tuple(values[columns.index(a)] for a in shield)
        group[key] = group.get(key, 0) + n
    distinct = {values for values, _ in rows}
    violating = {v for v in distinct if group[tuple(v[columns.index(a)] for a in shield)] < k}
    return len(violating), len(distinct)


PAPER_NODES = {
    (0, 0, 0): (5, 22),  # the paper prints 6: it counts row 14, whose shield group holds row 2 too
    (1, 0, 0): (2, 21),
    (0, 1, 0): (3, 22),  # the paper prints (4, 21)
    (0, 0, 1): (0, 18),
    (2, 0, 0): (2, 21),
    (1, 1, 0): (0, 21),
    (1, 0, 1): (0, 17),
}


@pytest.mark.parametrize("levels", list(PAPER_NODES))
def test_paper_search_tree_nodes(table1, hierarchies, levels):
    space = GeneralizationSpace(table1, SHIELD, hierarchies, target=ReleaseTarget(3), count="#Rec.")
    assert space.evaluate(levels) == PAPER_NODES[levels]
    assert reference_counts(table1, SHIELD, 3, hierarchies, levels, "#Rec.") == PAPER_NODES[levels]


def test_iab_and_exhaustive_find_table5(table1, hierarchies):
    iab = search(table1, SHIELD, 3, hierarchies, "iab", count="#Rec.")
    exhaustive = search(table1, SHIELD, 3, hierarchies, "exhaustive", count="#Rec.")
    for result in (iab, exhaustive):
        assert result.levels == {"Zip": 1, "Age": 1, "AC": 0}
        assert (result.rows, result.violations) == (21, 0)
    assert iab.generated < exhaustive.generated == 6 * 4 * 3 - 1
    assert iab.root.label == "T(5, 22)"


def test_greedy_stops_at_ac(table1, hierarchies):
    greedy = search(table1, SHIELD, 3, hierarchies, "greedy", count="#Rec.")
    assert greedy.levels == {"Zip": 0, "Age": 0, "AC": 1}
    assert (greedy.rows, greedy.violations, greedy.generated) == (18, 0, 3)
    assert [n.label for n in greedy.tree] == ["T(5, 22)", "T(2, 21)", "T(3, 22)", "T(0, 18)"]
    assert [n.attribute for n in greedy.tree[1:]] == SHIELD


def test_generalized_table_is_table5(table1, hierarchies):
    result = search(table1, SHIELD, 3, hierarchies, count="#Rec.")
    table = result.table
    assert len(table) == 21 and int(table["#Rec."].sum()) == 60
    assert list(table.columns) == list(table1.columns)
    # rows 1 and 9 of Table 1 merge: (F, Med, [35-44], 5200*, 143, Black, No) with 1 + 2 records
    merged = table[(table["Sex"] == "F") & (table["AC"] == "Med") & (table["Weight"] == 143)]
    assert merged[["Age", "Zip", "#Rec."]].values.tolist() == [["[35-44]", "5200*", 3]]
    assert set(table["Zip"]) == {"5200*", "5300*", "5400*"}
    # the shield groups of the result all have at least k records
    groups = {}
    for row in table.itertuples(index=False):
        key = (row.Zip, row.Age, row.AC)
        groups[key] = groups.get(key, 0) + row[-1]
    assert min(groups.values()) >= 3


def test_without_count_column_one_row_per_record(table1, hierarchies):
    expanded = table1.loc[table1.index.repeat(table1["#Rec."])].drop(columns="#Rec.").reset_index(drop=True)
    result = search(expanded, SHIELD, 3, hierarchies)
    assert result.levels == {"Zip": 1, "Age": 1, "AC": 0}
    assert result.rows == 21 and len(result.table) == 60


def test_comparison_table(table1, hierarchies):
    results = compare_methods(table1, SHIELD, hierarchies, target=ReleaseTarget(3), count="#Rec.")
    table = comparison_table(results)
    assert table["rows"].tolist() == [21, 21, 18]
    assert table["generalizations"].tolist() == [2, 2, 1]
    assert (table["seconds"] >= 0).all()


@st.composite
def random_problem(draw):
    n = draw(st.integers(3, 18))
    ages = draw(st.lists(st.integers(0, 39), min_size=n, max_size=n))
    zips = draw(st.lists(st.sampled_from(["1100", "1101", "1110", "2100", "2111"]), min_size=n, max_size=n))
    sex = draw(st.lists(st.sampled_from(["F", "M"]), min_size=n, max_size=n))
    other = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    counts = draw(st.lists(st.integers(1, 3), min_size=n, max_size=n))
    k = draw(st.integers(2, 6))
    df = pd.DataFrame({"age": ages, "zip": zips, "sex": sex, "other": other, "n": counts})
    bands = [[(0, 9), (10, 19), (20, 29), (30, 39)], [(0, 19), (20, 39)], [(0, 39)]]
    hierarchies = {
        "age": interval_hierarchy(df["age"], bands, top=True),
        "zip": masking_hierarchy(df["zip"]),
        "sex": flat_hierarchy(df["sex"]),
    }
    return df, k, hierarchies


@settings(max_examples=40, deadline=None)
@given(problem=random_problem())
def test_iab_equals_exhaustive_on_random_tables(problem):
    df, k, hierarchies = problem
    shield = ["age", "zip", "sex"]
    if int(df["n"].sum()) < k:
        with pytest.raises(NoSolutionError):
            search(df, shield, k, hierarchies, "iab", count="n")
        return
    iab = search(df, shield, k, hierarchies, "iab", count="n")
    exhaustive = search(df, shield, k, hierarchies, "exhaustive", count="n")
    assert iab.levels == exhaustive.levels
    assert (iab.rows, iab.violations) == (exhaustive.rows, 0)
    assert iab.generated <= exhaustive.generated
    # the result is what the slow reference says, and no satisfying table has more rows
    assert reference_counts(df, shield, k, hierarchies, tuple(iab.levels.values()), "n") == (0, iab.rows)
    space = GeneralizationSpace(df, shield, hierarchies, target=ReleaseTarget(k), count="n")
    best_rows = max(
        r for v, r in map(space.evaluate, itertools.product(*(range(m + 1) for m in space.max_levels))) if v == 0
    )
    assert iab.rows == best_rows
    greedy = search(df, shield, k, hierarchies, "greedy", count="n")
    assert greedy.violations == 0 and greedy.rows <= iab.rows


@st.composite
def nested_cuts(draw, low: int, high: int):
    """Random nested bands over low..high: each level's cut points are a subset of the previous level's."""
    cuts = sorted(draw(st.sets(st.integers(low + 1, high), max_size=8)))
    levels = []
    for _ in range(draw(st.integers(0, 3))):
        levels.append(cuts)
        cuts = sorted(draw(st.sets(st.sampled_from(cuts), max_size=len(cuts)))) if cuts else []
    return [[(a, b - 1) for a, b in zip([low] + cut, cut + [high + 1])] for cut in levels]


@st.composite
def random_hierarchy_problem(draw):
    """Random tables with random hierarchies (nested bands of random depth, masking,
    flat, random taxonomies) and a random shield of one to four attributes."""
    n = draw(st.integers(3, 24))
    df = pd.DataFrame(
        {
            "age": draw(st.lists(st.integers(0, 39), min_size=n, max_size=n)),
            "zip": draw(
                st.lists(st.sampled_from(["1100", "1101", "1110", "2100", "2111", "3000"]), min_size=n, max_size=n)
            ),
            "sex": draw(st.lists(st.sampled_from(["F", "M"]), min_size=n, max_size=n)),
            "job": draw(st.lists(st.sampled_from("abcde"), min_size=n, max_size=n)),
            "n": draw(st.lists(st.integers(1, 3), min_size=n, max_size=n)),
        }
    )
    groups = {
        g: list(members)
        for g, members in draw(
            st.sampled_from(
                [
                    {"x": "ab", "y": "cde", "*": "xy"},
                    {"x": "abcd", "y": "e", "*": "xy"},
                    {"*": "abcde"},
                ]
            )
        ).items()
    }
    hierarchies = {
        "age": interval_hierarchy(df["age"], draw(nested_cuts(0, 39)), top=True),
        "zip": masking_hierarchy(df["zip"]),
        "sex": flat_hierarchy(df["sex"]),
        "job": taxonomy_hierarchy(groups),
    }
    shield = draw(st.lists(st.sampled_from(["age", "zip", "sex", "job"]), min_size=1, max_size=4, unique=True))
    return df, shield, draw(st.integers(2, 8)), hierarchies


@settings(max_examples=60, deadline=None)
@given(problem=random_hierarchy_problem(), monotone=st.booleans())
def test_iab_prunings_against_exhaustive_on_random_hierarchies(problem, monotone):
    """The strengthened IAB returns exactly the exhaustive result (with or without the
    monotone tagging); the paper's pruning as written returns as many rows."""
    df, shield, k, hierarchies = problem
    with pytest.MonkeyPatch.context() as patch:  # as a non-monotone criterion will say
        patch.setattr(GeneralizationSpace, "monotone", property(lambda self: monotone))
        _check_prunings(df, shield, k, hierarchies, monotone)


def _check_prunings(df, shield, k, hierarchies, monotone):
    if int(df["n"].sum()) < k:
        with pytest.raises(NoSolutionError):
            search(df, shield, k, hierarchies, "iab", count="n")
        return
    exhaustive = search(df, shield, k, hierarchies, "exhaustive", count="n")
    strengthened = search(df, shield, k, hierarchies, "iab", count="n")
    assert (strengthened.levels, strengthened.rows, strengthened.violations) == (exhaustive.levels, exhaustive.rows, 0)
    assert strengthened.generated <= exhaustive.generated
    paper = search(df, shield, k, hierarchies, "iab", count="n", pruning="paper")
    assert (paper.rows, paper.violations) == (exhaustive.rows, 0)
    built = {n.levels: n for n in strengthened.tree}
    if not monotone:  # without tagging, every table expanded was built
        assert all(n.parent is not None for n in strengthened.tree[1:])
        for n in strengthened.tree[1:]:
            assert sum(n.levels) == sum(strengthened.tree[n.parent].levels) + 1
    assert all(
        built[levels].violations == exhaustive.tree[i].violations
        for i, levels in enumerate(n.levels for n in exhaustive.tree)
        if levels in built
    )


@settings(max_examples=30, deadline=None)
@given(problem=random_problem(), data=st.data())
def test_generalizing_never_grows_rows_or_violations(problem, data):
    df, k, hierarchies = problem
    space = GeneralizationSpace(df, ["age", "zip", "sex"], hierarchies, target=ReleaseTarget(k), count="n")
    levels = tuple(data.draw(st.integers(0, m)) for m in space.max_levels)
    violations, rows = space.evaluate(levels)
    assert (violations, rows) == reference_counts(df, ["age", "zip", "sex"], k, hierarchies, levels, "n")
    for _, child in space.children(levels):
        child_violations, child_rows = space.evaluate(child)
        assert child_rows <= rows and child_violations <= violations


def test_root_already_anonymous(table1, hierarchies):
    result = search(table1, SHIELD, 1, hierarchies, count="#Rec.")
    assert result.levels == {"Zip": 0, "Age": 0, "AC": 0} and result.generated == 0
    assert result.rows == 22


def test_errors(table1, hierarchies):
    with pytest.raises(ParameterError, match="k must be"):
        search(table1, SHIELD, 0, hierarchies, count="#Rec.")
    with pytest.raises(ParameterError, match="Unknown search method 'astar'"):
        search(table1, SHIELD, 3, hierarchies, "astar", count="#Rec.")
    with pytest.raises(HierarchyError, match="none for Sex"):
        search(table1, SHIELD + ["Sex"], 3, hierarchies, count="#Rec.")
    with pytest.raises(EmptySelectionError):
        search(table1, [], 3, hierarchies, count="#Rec.")
    with pytest.raises(ColumnError, match="record-count"):
        search(table1, ["#Rec."], 3, {"#Rec.": flat_hierarchy([1])}, count="#Rec.")
    with pytest.raises(ColumnError, match="Postcode"):
        search(table1, ["Postcode"], 3, {"Postcode": flat_hierarchy([1])}, count="#Rec.")
    partial = dict(hierarchies, AC=taxonomy_hierarchy({"Yes": ["High", "Med"], "Any": ["Yes", "No"]}))
    with pytest.raises(HierarchyError, match="does not cover the value 'Low'"):
        search(table1, SHIELD, 3, partial, count="#Rec.")
    with pytest.raises(NoSolutionError, match="61"):
        search(table1, SHIELD, 61, hierarchies, count="#Rec.")
    space = GeneralizationSpace(table1, SHIELD, hierarchies, target=ReleaseTarget(3), count="#Rec.")
    with pytest.raises(ParameterError, match="do not fit"):
        space.evaluate((6, 0, 0))


def test_heart_table_and_hierarchies():
    table = heart_table(load_sample("heart_va").frame)
    assert len(table) == 200 and table["Zip"].str.fullmatch(r"\d{5}").all()
    assert heart_table(load_sample("heart_va").frame)["Zip"].tolist() == table["Zip"].tolist()  # seeded
    assert int(table["Smoker"].isna().sum()) == 53  # VA lacks exang for 53 patients: kept as "missing"
    h = heart_hierarchies(table)
    result = search(table, ["Zip", "Smoker", "Sex", "Age"], 5, h)
    assert result.violations == 0


def test_heart_experiment_cleveland_shapes():
    t = heart_experiment(["heart_cleveland"], EXPERIMENT_SHIELDS, [5])
    assert len(t) == 4 * len(METHODS)
    assert t["paper_rows"].notna().all()
    for _, group in t.groupby("shield"):
        by = dict(zip(group["method"], group["rows"]))
        assert by["iab"] == by["exhaustive"] >= by["greedy"]
        gen = dict(zip(group["method"], group["generated"]))
        assert gen["iab"] <= gen["exhaustive"]
    assert (t["violations"] == 0).all()


@pytest.mark.parametrize(
    "method, pruning", [("iab", "monotone"), ("iab", "paper"), ("exhaustive", "monotone"), ("greedy", "monotone")]
)
def test_search_tree_edges_raise_the_attributes_they_name(table1, hierarchies, method, pruning):
    result = search(table1, SHIELD, 3, hierarchies, method, count="#Rec.", pruning=pruning)
    assert result.tree[0].parent is None and result.tree[0].levels == (0, 0, 0)
    assert len({n.levels for n in result.tree}) == len(result.tree)  # duplicates kept once
    for index, node in enumerate(result.tree[1:], start=1):
        parent = result.tree[node.parent]
        assert node.parent < index
        step = [b - a for a, b in zip(parent.levels, node.levels)]
        assert min(step) >= 0 and sum(step) >= 1
        named = dict(part.split("+") if "+" in part else (part, "1") for part in node.attribute.split(", "))
        assert named == {a: str(s) for a, s in zip(SHIELD, step) if s}
        if method != "iab" or pruning == "paper":  # one attribute one level, as in the paper's figures
            assert sorted(step) == [0, 0, 1]
    assert tuple(result.levels.values()) in {n.levels for n in result.tree}


def test_paper_pruning_as_written_follows_algorithm_1(table1, hierarchies):
    """Line 6 picks the largest violating table (ties: fewest violations), line 12 stops
    once no open table is larger than the best satisfying one."""
    result = search(table1, SHIELD, 3, hierarchies, "iab", count="#Rec.", pruning="paper")
    assert result.levels == {"Zip": 1, "Age": 1, "AC": 0} and result.rows == 21
    # root's three children, then Age+1 (22 rows) is expanded before Zip+1 (21 rows)
    assert [n.levels for n in result.tree[:7]] == [
        (0, 0, 0),
        (1, 0, 0),
        (0, 1, 0),
        (0, 0, 1),
        (1, 1, 0),
        (0, 2, 0),
        (0, 1, 1),
    ]
    assert all(n.rows <= 22 for n in result.tree)
    # every table it expanded had more rows than the result when it was expanded: at most
    # the 22-row violating tables were expanded
    expanded = {n.parent for n in result.tree[1:]}
    assert all(result.tree[i].rows > 21 or result.tree[i].violations for i in expanded)


def test_unknown_pruning(table1, hierarchies):
    with pytest.raises(ParameterError, match="Unknown IAB pruning"):
        search(table1, SHIELD, 3, hierarchies, count="#Rec.", pruning="fast")


def test_estimate_counts_the_lattice_and_refuses_what_would_run_for_hours(table1, hierarchies):
    exhaustive = estimate_search(table1, SHIELD, hierarchies, "exhaustive")
    assert (
        exhaustive.operations
        == 6 * 4 * 3 - 1
        == search(table1, SHIELD, 3, hierarchies, "exhaustive", count="#Rec.").generated
    )
    assert estimate_search(table1, SHIELD, hierarchies, "iab").operations == exhaustive.operations
    assert estimate_search(table1, SHIELD, hierarchies, "greedy").operations == (5 + 3 + 2) * 3
    codes = [f"{v:02d}" for v in range(40)]
    wide = pd.DataFrame({f"a{i}": codes for i in range(20)})
    deep = {column: masking_hierarchy(codes) for column in wide.columns}
    too_big = estimate_search(wide, list(deep), deep, "exhaustive")
    assert too_big.operations == 3**20 - 1 and not too_big.interactive
    for method in ("exhaustive", "iab"):
        with pytest.raises(
            ProblemTooLargeError, match="choose fewer quasi-identifiers or hierarchies with fewer levels"
        ):
            search(wide, list(deep), 2, deep, method)
    assert search(wide, list(deep), 2, deep, "greedy").violations == 0  # a path, not the lattice


@pytest.mark.parametrize("method", METHODS)
def test_progress_counts_tables_built(table1, hierarchies, method):
    calls = []
    result = search(table1, SHIELD, 3, hierarchies, method, count="#Rec.", progress=lambda *a: calls.append(a))
    assert calls and calls[-1] == (result.generated, result.generated, "generalized tables")
    done = [c[0] for c in calls]
    assert done == sorted(done) and all(c[1] >= c[0] for c in calls)
