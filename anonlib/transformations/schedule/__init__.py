"""Screening schedules that keep people anonymous (Caballero, Sen & Nygård, sections 4-7).

A screening programme sends a *population* (people described by quasi-identifier
values, e.g. ZIP, gender, age band) to *resources* (slots: centre, day, hour, each
with a capacity). Once the appointment is published with the data, the
quasi-identifier grows by the resource columns, and people who are alone with their
values in a slot become unique. An *assignment* is a Q x R matrix ``a[i, j]`` =
people with quasi-identifier value i sent to resource j (row sums = frequencies,
column sums <= capacities); its anonymity vector counts the non-zero cells by size.

Methods:

* ``random``  - each person gets a uniformly random free seat (the paper's baseline);
* ``heuristic`` - Algorithm 2: values by descending frequency, each kept together
  in one resource when possible (three rules for the ambiguous split case);
* ``optimal`` - Algorithm 1: lexicographic minimisation of the anonymity vector,
  one CP-SAT problem per vector position, warm-started with the heuristic.

``schedule_rank`` enumerates every feasible assignment of a small problem to rank
one of them (the paper's "simple program": 14,504 schedules for Table 7).

Assignments are sparse (``scipy.sparse.csr_array``): a schedule uses at most
Q + R cells, so a dense Q x R matrix would waste memory at registry scale.

Parts: ``cells`` (a schedule as sparse cells, its vector, the inputs' checks),
``methods`` (Algorithm 2, random, Algorithm 1 with CP-SAT, ``assign``), ``rank``
(rank among all schedules of a small problem), ``population`` (``make_schedule``
for a table of people and slots), ``compare`` (the Screening page's comparison and
generated slots). Everything public is importable from ``anonlib.transformations.schedule``.

Example (the paper's Table 7):
    >>> a = assign([4, 4, 5, 2], [4, 2, 4, 3, 2], "heuristic", rule="largest")
    >>> a.toarray().tolist()
    [[0, 0, 3, 1, 0], [0, 2, 0, 2, 0], [4, 0, 1, 0, 0], [0, 0, 0, 0, 2]]
    >>> matrix_vector(a)
    (2, 3, 1, 1)
"""

from __future__ import annotations

from .cells import (
    DEFAULT_RULE,
    EXACT_INDEX_LIMIT,
    METHODS,
    OPTIMAL_LIMIT,
    RANK_LIMIT,
    RANK_RESOURCES,
    RULES,
    Cells,
    estimate_schedule,
    matrix_vector,
)
from .compare import ScheduleComparison, compare_methods, generate_slots
from .methods import OptimalOutcome, assign, estimate_assign, heuristic_cells, optimal_cells, random_cells
from .population import ScheduleResult, make_schedule
from .rank import ScheduleCensus, enumerate_schedules, schedule_rank

__all__ = [
    "Cells",
    "DEFAULT_RULE",
    "EXACT_INDEX_LIMIT",
    "METHODS",
    "OPTIMAL_LIMIT",
    "OptimalOutcome",
    "RANK_LIMIT",
    "RANK_RESOURCES",
    "RULES",
    "ScheduleCensus",
    "ScheduleComparison",
    "ScheduleResult",
    "assign",
    "compare_methods",
    "enumerate_schedules",
    "estimate_assign",
    "estimate_schedule",
    "generate_slots",
    "heuristic_cells",
    "make_schedule",
    "matrix_vector",
    "optimal_cells",
    "random_cells",
    "schedule_rank",
]
