"""Screening schedules: Algorithms 1 and 2, the random baseline, ranking (Caballero et al.)."""

from __future__ import annotations

import itertools
import tracemalloc

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse

from anonlib.core.equivalence import class_sizes
from anonlib.core.errors import CapacityError, ColumnError, ParameterError, ProblemTooLargeError
from anonlib.core.samples import load_sample, sample_path
from anonlib.measures.avector import anonymity_vector, lex_compare
from anonlib.transformations.schedule import (
    RULES,
    assign,
    enumerate_schedules,
    estimate_assign,
    heuristic_cells,
    make_schedule,
    matrix_vector,
    optimal_cells,
    random_cells,
    schedule_rank,
)

F = [4, 4, 5, 2]  # Table 7(a)
C = [4, 2, 4, 3, 2]  # Table 7(b): A9, A13, B9, B13, C13
QI = ["ZIP", "Gender", "Age"]


def _resources() -> pd.DataFrame:
    return pd.read_csv(sample_path("caballero_resources.csv"), dtype={"Centre": str, "Hour": str})


def _population() -> pd.DataFrame:
    return load_sample("caballero_table2b").frame


def test_running_example_base_and_table6_vectors():
    assert anonymity_vector(class_sizes(_population(), QI)) == (0, 1, 0, 2, 1)
    table3 = load_sample("caballero_table3").frame
    # The paper's text says (11, 2) for Table 6, but its own rows have three pairs
    # (11111/female at B 9h, 11111/male at B 13h, 88888/male at C 13h) and nine
    # singletons; we count the table as printed (see docs/schedules.md).
    vector = anonymity_vector(class_sizes(table3, QI + ["Centre", "Hour"]))
    assert vector == (9, 3)
    pairs = table3.groupby(QI + ["Centre", "Hour"]).size()  # independent of the kernel
    assert sorted(pairs.tolist()) == [1] * 9 + [2] * 3
    # both readings are 1-anonymous and far worse than the heuristic's (2, 3, 1, 1)
    assert lex_compare((2, 3, 1, 1), vector) < 0 and lex_compare((2, 3, 1, 1), (11, 2)) < 0


def test_heuristic_largest_reproduces_the_papers_matrix():
    matrix = assign(F, C, "heuristic", rule="largest")
    assert isinstance(matrix, sparse.csr_array) and matrix.nnz == 7  # the seven non-zero cells
    order = [2, 0, 1, 3]  # the paper prints rows by descending frequency
    assert matrix.toarray()[order].tolist() == [
        [4, 0, 1, 0, 0],
        [0, 0, 3, 1, 0],
        [0, 2, 0, 2, 0],
        [0, 0, 0, 0, 2],
    ]
    assert matrix_vector(matrix) == (2, 3, 1, 1)
    assert schedule_rank(F, C, matrix) == (339, 14504)
    assert schedule_rank(F, C, matrix.toarray()) == (339, 14504)  # dense matrices are still read


def test_census_of_the_running_example():
    census = enumerate_schedules(F, C)
    assert census.total == 14504
    assert census.at_least_k(2) == 58
    assert census.total - census.at_least_k(2) == 14446
    best = min(census.by_vector, key=lambda v: [v[i] if i < len(v) else 0 for i in range(15)])
    assert best == (0, 2, 1, 2)


def test_optimal_is_algorithm_1_result():
    outcome = optimal_cells(F, C, time_limit=30)
    assert outcome.cells.vector == (0, 2, 1, 2)
    assert outcome.proven_optimal
    assert outcome.levels_solved == 4  # Table 8 has four iterations


def test_make_schedule_on_table_2b():
    result = make_schedule(_population(), _resources(), QI, method="heuristic", rule="largest")
    assert result.base_vector == (0, 1, 0, 2, 1)
    assert result.classes["frequency"].tolist() == F  # Table 7(a) order: first appearance
    assert result.vector == (2, 3, 1, 1) and result.k == 1
    assert result.proven_optimal is None
    schedule = result.schedule
    assert len(schedule) == 15 and schedule["Code"].tolist() == _population()["Code"].tolist()
    # the downloadable schedule has exactly the vector the result claims
    assert anonymity_vector(class_sizes(schedule, QI + ["Centre", "Hour"])) == result.vector
    assert result.loads["assigned"].tolist() == [4, 2, 4, 3, 2]
    optimal = make_schedule(_population(), _resources(), QI, method="optimal", time_limit=30)
    assert optimal.vector == (0, 2, 1, 2) and optimal.proven_optimal and optimal.k == 2
    assert anonymity_vector(class_sizes(optimal.schedule, QI + ["Centre", "Hour"])) == (0, 2, 1, 2)


def test_the_schedule_table_is_built_on_request_in_pieces():
    result = make_schedule(_population(), _resources(), QI, rule="largest")
    assert result.assignment.dtype == np.int32 and len(result.assignment) == 15  # one small integer per person
    whole = result.schedule
    pieces = list(result.schedule_chunks(size=4))
    assert [len(p) for p in pieces] == [4, 4, 4, 3]
    pd.testing.assert_frame_equal(pd.concat(pieces, ignore_index=True), whole)
    assert (
        whole[["Centre", "Hour"]].to_numpy() == _resources()[["Centre", "Hour"]].to_numpy()[result.assignment]
    ).all()


def test_make_schedule_with_a_count_column():
    population = pd.DataFrame({"ZIP": ["88888", "11111", "11111", "88888"], "Gender": ["m", "m", "f", "f"], "f": F})
    result = make_schedule(population, _resources(), ["ZIP", "Gender"], count="f", rule="largest")
    assert result.vector == (2, 3, 1, 1)
    assert result.schedule["f"].sum() == 15
    assert set(result.schedule.columns) == {"ZIP", "Gender", "Centre", "Hour", "f"}


def test_groups_keep_people_in_their_region():
    population = pd.DataFrame({"region": ["n"] * 5 + ["s"] * 4, "age": [1, 1, 1, 2, 2, 1, 1, 3, 3]})
    resources = pd.DataFrame({"region": ["n", "n", "s"], "slot": ["x", "y", "z"], "capacity": [3, 3, 4]})
    for method in ("heuristic", "random", "optimal"):
        result = make_schedule(population, resources, ["age"], group="region", method=method, seed=3, time_limit=10)
        slot_region = result.schedule["slot"].map(dict(zip(resources["slot"], resources["region"])))
        assert (result.schedule["region"] == slot_region).all()
        assert (result.loads["assigned"] <= result.loads["capacity"]).all()
    short = pd.DataFrame({"region": ["n", "s"], "capacity": [5, 3]})
    with pytest.raises(CapacityError, match="group 's'.*3 seats.*4 people.*1 seats short"):
        make_schedule(population, short, ["age"], group="region")
    with pytest.raises(CapacityError, match="No resources for e"):
        make_schedule(
            pd.concat([population, pd.DataFrame({"region": ["e"], "age": [1]})]), resources, ["age"], group="region"
        )


def test_fairness_limits_each_label_share():
    freqs = [3, 3, 3, 3]
    labels = ["a", "a", "b", "b"]
    outcome = optimal_cells(freqs, [6, 6], time_limit=10, fair_labels=labels, max_share=0.5)
    matrix = outcome.cells.dense()
    for j in range(2):
        share_a = matrix[:2, j].sum() / matrix[:, j].sum()
        assert share_a <= 0.5 + 1e-9
    with pytest.raises(ParameterError, match="fairness"):
        optimal_cells([3, 3], [3, 3], time_limit=10, fair_labels=["a", "a"], max_share=0.5)


def _brute_force_census(freqs, capacities):
    """All matrices by plain product enumeration (obviously correct, tiny sizes only)."""
    counts: dict[tuple[int, ...], int] = {}
    rows = [[r for r in itertools.product(*(range(min(q, c) + 1) for c in capacities)) if sum(r) == q] for q in freqs]
    for matrix in itertools.product(*rows):
        if all(sum(col) <= c for col, c in zip(zip(*matrix), capacities)):
            v = matrix_vector(np.array(matrix))
            counts[v] = counts.get(v, 0) + 1
    return counts


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.lists(st.integers(0, 4), min_size=1, max_size=3))
def test_enumeration_matches_brute_force(freqs, capacities):
    if sum(capacities) < sum(freqs):
        capacities = capacities + [sum(freqs) - sum(capacities)]
    census = enumerate_schedules(freqs, capacities)
    assert census.by_vector == _brute_force_census(freqs, capacities)


def test_enumeration_refuses_a_large_problem_before_doing_its_work(monkeypatch):
    """2,000 people in classes of one and 200 slots: the second row alone would visit 200 x 200
    partial schedules of 200 resources each; the refusal comes before any of it is built."""
    from anonlib.transformations.schedule import rank as schedule

    built = []
    compositions = schedule._compositions
    monkeypatch.setattr(
        schedule, "_compositions", lambda q, free: (len(free) == 200 and built.append(free)) or compositions(q, free)
    )
    with pytest.raises(ProblemTooLargeError, match="2000 quasi-identifier values, 200 resources, 2000 people"):
        enumerate_schedules([1] * 2000, [10] * 200)
    assert built == [(10,) * 200]  # the rows of the first row only (one partial schedule: every slot free)


problems = st.tuples(
    st.lists(st.integers(0, 12), min_size=1, max_size=6),
    st.lists(st.integers(0, 9), min_size=1, max_size=6),
).filter(lambda p: sum(p[1]) >= sum(p[0]))


@settings(max_examples=40, deadline=None)
@given(problems, st.sampled_from(RULES), st.integers(0, 1000))
def test_schedules_are_feasible(problem, rule, seed):
    freqs, capacities = problem
    heuristic = assign(freqs, capacities, rule=rule)
    # each heuristic placement fills a resource or ends a row: at most rows + columns cells
    assert heuristic.nnz <= len(freqs) + len(capacities)
    for matrix in (heuristic, assign(freqs, capacities, "random", seed=seed)):
        assert isinstance(matrix, sparse.csr_array)
        assert matrix.shape == (len(freqs), len(capacities))
        assert matrix.sum(axis=1).tolist() == freqs
        assert (matrix.sum(axis=0) <= np.array(capacities)).all()
        assert (matrix.data > 0).all() and matrix.nnz <= sum(freqs)  # only cells with people are stored


@settings(max_examples=15, deadline=None)
@given(problems)
def test_optimum_never_worse_than_heuristic(problem):
    freqs, capacities = problem
    outcome = optimal_cells(freqs, capacities, time_limit=10)
    matrix = outcome.cells.dense()
    assert matrix.sum(axis=1).tolist() == freqs
    assert (matrix.sum(axis=0) <= np.array(capacities)).all()
    for rule in RULES:
        assert lex_compare(outcome.cells.vector, heuristic_cells(freqs, capacities, rule).vector) <= 0


def test_random_is_seeded():
    a = random_cells([30, 20, 10], [8] * 10, seed=5).dense()
    assert (a == random_cells([30, 20, 10], [8] * 10, seed=5).dense()).all()
    assert not (a == random_cells([30, 20, 10], [8] * 10, seed=6).dense()).all()


def test_bad_inputs_are_explained():
    with pytest.raises(ParameterError, match="capacities cannot be negative; found -2"):
        assign([1], [3, -2])
    with pytest.raises(CapacityError, match="no resources"):
        assign([1], [])
    with pytest.raises(CapacityError, match="14 seats in total but 15 people"):
        assign(F, [4, 2, 4, 3, 1])
    with pytest.raises(ParameterError, match="whole numbers; found 2.5"):
        assign([2.5, 1], [4])
    with pytest.raises(ParameterError, match="Unknown method 'best'"):
        assign([1], [1], "best")
    with pytest.raises(ParameterError, match="Unknown split rule"):
        assign([1], [1], rule="smallest")
    with pytest.raises(ProblemTooLargeError, match="more than"):
        schedule_rank([10] * 6, [10] * 8, assign([10] * 6, [10] * 8))
    with pytest.raises(ParameterError, match="does not fit"):
        schedule_rank(F, C, np.zeros((4, 5), dtype=int))
    population = _population()
    with pytest.raises(CapacityError, match="no resources"):
        make_schedule(population, _resources().iloc[:0], QI)
    bad = _resources().assign(capacity=[4, 2, -1, 3, 2])
    with pytest.raises(ParameterError, match="row 3 has '-1'"):
        make_schedule(population, bad, QI)
    with pytest.raises(ColumnError, match="zip"):
        make_schedule(population, _resources(), ["zip"])
    counted = pd.DataFrame({"a": ["x", "y"], "n": [1.5, 2]})
    with pytest.raises(ColumnError, match="whole numbers"):
        make_schedule(counted, _resources(), ["a"], count="n")


@settings(max_examples=30, deadline=None)
@given(st.integers(5, 1500), st.sampled_from(["spec", "authors"]), st.integers(0, 10**6))
def test_table10_problems_follow_the_protocol(n, protocol, seed):
    from anonlib.transformations.schedule_experiments import table10_problem

    freqs, capacities = table10_problem(n, np.random.default_rng(seed), protocol)
    assert len(freqs) == n // 100 + 5 and int(freqs.sum()) == n and (freqs >= 1).all()
    assert capacities.sum() >= n and (capacities >= 1).all()
    with pytest.raises(ParameterError, match="at least 5 people"):
        table10_problem(4, np.random.default_rng(seed), protocol)


def test_registry_day_heuristic_beats_the_real_assignment():
    from anonlib.transformations.schedule_experiments import registry_experiment

    result = registry_experiment()
    assert result.people == 4541 and result.centres == 21 and result.capacity_per_centre == 217
    assert lex_compare(result.heuristic, result.actual) < 0
    assert result.indices["base"] >= result.indices["heuristic"] > result.indices["actual"]
    assert 0.9 < result.improvement <= 1.0


def test_optimal_reports_people_in_settled_groups():
    calls = []
    outcome = optimal_cells(F, C, time_limit=30, progress=lambda *call: calls.append(call))
    assert outcome.cells.vector == (0, 2, 1, 2)
    # v1 = 0, then 2 pairs (4 people), 1 triple (7), 2 quadruples (15): the loop's own sum
    assert [(done, total) for done, total, _ in calls] == [(0, 15), (4, 15), (7, 15), (15, 15)]
    assert calls[-1][2] == "level 4 solved, vector so far (0, 2, 1, 2)"


def test_estimates_count_the_work_of_each_method():
    optimal = estimate_assign(F, C, "optimal", time_limit=5)
    # one boolean per possible cell value: sum over cells of min(f_i, c_j) + 1
    assert optimal.operations == sum(min(f, c) + 1 for f in F for c in C) == 75
    assert 5 <= optimal.seconds < 6
    heuristic = estimate_assign(F, C)
    assert heuristic.operations == len(F) + len(C) >= assign(F, C).nnz and heuristic.interactive
    assert estimate_assign([10**6] * 10, [2 * 10**7], "random").operations == 10**7
    with pytest.raises(ParameterError, match="Unknown method"):
        estimate_assign(F, C, "best")


def test_a_registry_scale_schedule_stays_sparse_in_memory():
    """10^6 people, 10^4 values x 10^4 resources: the dense matrix alone would take 800 MB."""
    freqs = np.full(10_000, 100)
    capacities = np.full(10_000, 101)
    tracemalloc.start()
    matrix = assign(freqs, capacities)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert matrix.shape == (10_000, 10_000) and matrix.nnz <= 20_000
    assert (matrix.sum(axis=1) == freqs).all() and (matrix.sum(axis=0) <= capacities).all()
    assert peak < 20 * 1024**2
