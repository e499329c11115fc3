"""Linked records (``linkable.md``): the history check and the optimal search in histories.

Targets: checking every person's whole history on 10^6 records (10^5 people x 10 records) within
5x the check counted in people (classes of distinct people) on the same records; the optimal
search on a 4,000-row panel (500 people x 8 years, seven quasi-identifiers of a wage panel's
shape) within 10 s; and the search at power 2 reported beside it.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from anonlib.core.dataset import Dataset
from anonlib.core.default_hierarchy import default_hierarchy
from anonlib.measures.target import ReleaseTarget
from anonlib.transformations.generalization import release_search
from bench import Benchmark

RATIO_TARGET = 5.0


def _records() -> Dataset:
    """10^6 records of 10^5 people, ten each: a year, a job that changes now and then, a region."""
    rng = np.random.default_rng(58)
    people, each = 100_000, 10
    person = np.repeat(np.arange(people), each)
    year = np.tile(np.arange(2000, 2000 + each), people)
    job = rng.integers(1, 9, people)[person] + (rng.random(people * each) < 0.2)
    region = rng.integers(1, 21, people)[person]
    frame = pd.DataFrame({"pid": person.astype(str), "year": year, "job": job, "region": region})
    roles = {"pid": "person", "year": "quasi-identifier", "job": "quasi-identifier", "region": "quasi-identifier"}
    return Dataset.from_frame("records", frame, roles)


def _ratio(dataset: Dataset) -> tuple[float, float, int, int]:
    """Seconds of the people check and of the history check, and what each finds failing."""
    start = time.perf_counter()
    people = ReleaseTarget(k=5, max_suppressed=0.05).check(dataset)
    middle = time.perf_counter()
    histories = ReleaseTarget(k=5, max_suppressed=0.05, linked=("pid",)).check(dataset)
    end = time.perf_counter()
    return middle - start, end - middle, int(people.persons_in_failing), int(histories.persons_in_failing)


def _ratio_note(r) -> str:
    people, histories, failing_people, failing_histories = r
    ratio = histories / people
    verdict = "ok" if ratio <= RATIO_TARGET else "SLOW"
    return (
        f"people check {people:.2f} s ({failing_people:,} failing), history check {histories:.2f} s "
        f"({failing_histories:,} failing): {ratio:.1f}x, target {RATIO_TARGET:g}x: {verdict}"
    )


QIS = ["year", "occupation", "married", "union", "educ", "black", "hisp"]


def _panel() -> tuple[pd.DataFrame, dict]:
    """500 men x 8 years in the shape of a public wage panel: occupation and union change, marriage
    once, education, race and ethnicity fixed."""
    rng = np.random.default_rng(1987)
    rows = []
    for p in range(500):
        educ, black, hisp = int(rng.integers(3, 17)), int(rng.random() < 0.12), int(rng.random() < 0.16)
        occupation, married, union = int(rng.integers(1, 10)), 0, int(rng.random() < 0.25)
        for year in range(1980, 1988):
            if rng.random() < 0.25:
                occupation = int(rng.integers(1, 10))
            married = married or int(rng.random() < 0.1)
            if rng.random() < 0.15:
                union = 1 - union
            rows.append((f"{p:04d}", year, occupation, married, union, educ, black, hisp))
    frame = pd.DataFrame(rows, columns=["nr", *QIS])
    return frame, {a: default_hierarchy(frame[a], a)[1] for a in QIS}


def _search(power):
    def run(inputs):
        frame, hierarchies = inputs
        target = ReleaseTarget(k=5, max_suppressed=0.05, person="nr", linked=("nr",), power=power)
        return release_search(frame, QIS, hierarchies, "optimal", target=target)

    return run


def _search_note(r) -> str:
    return (
        f"levels {r.levels}; loss {r.utility:.4f}; {r.suppressed_persons} of {r.persons} people suppressed; "
        f"{r.checked} of {r.lattice_size} generalizations counted; optimal {r.optimal}"
    )


BENCHMARKS = [
    Benchmark(
        "linkable: history check vs people check, 10^6 records of 10^5 people",
        None,
        _records,
        _ratio,
        repeat=3,
        note=_ratio_note,
    ),
    Benchmark(
        "linkable: optimal search in histories, 500 people x 8 years (4,000 rows)",
        10.0,
        _panel,
        _search(None),
        repeat=3,
        note=_search_note,
    ),
    Benchmark(
        "linkable: optimal search, any 2 records (power 2), 4,000 rows",
        None,
        _panel,
        _search(2),
        repeat=3,
        note=_search_note,
    ),
]
