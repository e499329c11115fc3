"""Schedules for a population table: people grouped by their quasi-identifiers, resources
from a table of slots, every person's slot (``make_schedule``)."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import sparse

from ...core.budget import Progress, check_work
from ...core.equivalence import Classes, encode
from ...core.errors import CapacityError, ColumnError, ParameterError, join_names, require_columns
from ...core.numbers import whole_numbers
from ...measures.avector import anonymity_vector, k_of, lex_index
from .cells import DEFAULT_RULE, EXACT_INDEX_LIMIT, METHODS, Cells, estimate_schedule
from .methods import NARROW_SCHEDULE, solve

# --- schedules for a population table ----------------------------------------------------


@dataclass(frozen=True)
class ScheduleResult:
    """A schedule for a population table, with everything the page shows.

    ``classes`` has one row per quasi-identifier value (and group) with its
    ``frequency``; ``cells`` the non-zero cells of the assignment; ``assignment``
    each population row's resource (row of ``resources``; None when the population
    came with a count column). ``schedule`` builds the per-person table
    (population rows + resource columns), or, with a count column, one row per
    cell with that count; it is built on request, as ``schedule_chunks`` builds
    it in pieces, so a result for 10^7 people holds one small integer per person
    rather than a second copy of the population. ``index`` is the exact
    lexicographic index (None above ``EXACT_INDEX_LIMIT`` people);
    ``proven_optimal`` is None for the heuristic and random methods.
    """

    method: str
    rule: str | None
    classes: pd.DataFrame
    resources: pd.DataFrame
    cells: Cells
    base_vector: tuple[int, ...]
    vector: tuple[int, ...]
    index: int | None
    proven_optimal: bool | None
    seconds: float
    assignment: np.ndarray | None = field(default=None, repr=False, compare=False)
    population: pd.DataFrame | None = field(default=None, repr=False, compare=False)
    count: str | None = None
    slot_columns: tuple[str, ...] = ()

    @property
    def matrix(self) -> sparse.csr_array:
        """The Q x R assignment matrix (sparse, as ``assign`` returns it)."""
        return self.cells.sparse()

    @property
    def k(self) -> int:
        """k-anonymity with the appointment columns added."""
        return k_of(self.vector)

    @property
    def loads(self) -> pd.DataFrame:
        """Resources with their capacity and the number of people sent there."""
        out = self.resources.copy()
        out["assigned"] = self.cells.loads()
        return out

    @property
    def schedule(self) -> pd.DataFrame:
        """The whole schedule table (built now: keep it in a variable rather than asking twice)."""
        return pd.concat(list(self.schedule_chunks()), ignore_index=True)

    def schedule_chunks(self, size: int = 1_000_000) -> Iterator[pd.DataFrame]:
        """The schedule table in pieces of ``size`` rows (for writing large schedules)."""
        slots = self.resources[list(self.slot_columns)].reset_index(drop=True)
        if self.count is not None:
            key = [c for c in self.classes.columns if c != "frequency"]
            for start in range(0, max(self.cells.counts.size, 1), size):
                part = slice(start, start + size)
                out = self.classes.iloc[self.cells.rows[part]][key].reset_index(drop=True)
                out = pd.concat([out, slots.iloc[self.cells.cols[part]].reset_index(drop=True)], axis=1)
                out[self.count] = self.cells.counts[part]
                yield out
            return
        overlap = {c: f"{c} (slot)" for c in slots.columns if c in self.population.columns}
        slots = slots.rename(columns=overlap)
        for start in range(0, max(len(self.population), 1), size):
            part = slice(start, start + size)
            people = self.population.iloc[part].reset_index(drop=True)
            assigned = slots.iloc[self.assignment[part]].reset_index(drop=True)
            yield pd.concat([people, assigned], axis=1)


def make_schedule(
    population: pd.DataFrame,
    resources: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    *,
    count: str | None = None,
    capacity: str = "capacity",
    group: str | None = None,
    method: str = "heuristic",
    rule: str | None = None,
    seed: int | None = None,
    time_limit: float | None = None,
    fair_attribute: str | None = None,
    max_share: float | None = None,
    progress: Progress | None = None,
) -> ScheduleResult:
    """Schedule a population (one row per person, or rows with a ``count``) onto resources.

    ``resources`` has one row per slot and a ``capacity`` column; every other
    column (centre, day, hour...) describes the slot and is added to each
    person's row. With ``group`` (a column of both tables, e.g. region) people
    only go to resources of their own group. ``fair_attribute``/``max_share``
    add the E2 constraint to the optimal method.

    >>> pop = pd.DataFrame({"zip": ["1", "1", "2"], "n": [2, 2, 1]})
    >>> res = pd.DataFrame({"centre": ["A", "B"], "capacity": [4, 2]})
    >>> r = make_schedule(pop, res, ["zip"], count="n")
    >>> r.base_vector, r.vector, r.schedule["n"].tolist()
    ((1, 0, 0, 1), (1, 0, 0, 1), [4, 1])
    """
    started = time.perf_counter()
    qis = list(quasi_identifiers)
    if not qis:
        raise ParameterError("Choose at least one quasi-identifier column for the population.")
    require_columns(population, qis + ([group] if group else []))
    slot_columns = _resource_columns(resources, capacity, group)
    capacities = _capacity_values(resources, capacity)
    key = ([group] if group else []) + [q for q in qis if q != group]
    table = encode(population, key, count=count)
    classes = table.classes()
    order, freqs, first_rows = _first_appearance(classes)
    class_table = population.iloc[first_rows][key].reset_index(drop=True)
    class_table["frequency"] = freqs
    if method in METHODS:  # before the vector before: it alone may be too large
        cells_out = len(population) * (len(key) + len(slot_columns))
        check_work(estimate_schedule(freqs, capacities, method, table_cells=cells_out), narrow=NARROW_SCHEDULE)
    base = anonymity_vector(classes.sizes if key == qis else table.classes(qis).sizes)
    del table
    groups = None
    if group:
        groups = (class_table[group].astype(str).to_numpy(), resources[group].astype(str).to_numpy())
        missing = sorted(set(groups[0]) - set(groups[1]))
        if missing:
            raise CapacityError(
                f"No resources for {join_names(missing)} in column '{group}'; every group of the "
                "population needs at least one resource of its own."
            )
    fair_labels = None
    if fair_attribute is not None:
        if fair_attribute not in key:
            raise ColumnError(f"The fairness attribute '{fair_attribute}' must be one of the quasi-identifiers.")
        fair_labels = class_table[fair_attribute].astype(str).to_numpy()
    cells, proven = solve(
        freqs,
        capacities,
        method,
        rule=rule,
        seed=seed,
        time_limit=time_limit,
        groups=groups,
        fair_labels=fair_labels,
        max_share=max_share,
        progress=progress,
    )
    vector = cells.vector
    people = int(freqs.sum())
    index = lex_index(vector) if people <= EXACT_INDEX_LIMIT else None
    assignment = None if count is not None else _resource_per_record(classes.ids, order, cells)
    return ScheduleResult(
        method=method,
        rule=(rule or DEFAULT_RULE) if method != "random" else None,
        classes=class_table,
        resources=resources.reset_index(drop=True),
        cells=cells,
        base_vector=base,
        vector=vector,
        index=index,
        proven_optimal=proven,
        seconds=time.perf_counter() - started,
        assignment=assignment,
        population=None if count is not None else population.reset_index(drop=True),
        count=count,
        slot_columns=tuple(slot_columns),
    )


def _resource_columns(resources: pd.DataFrame, capacity: str, group: str | None) -> list[str]:
    if resources.shape[0] == 0:
        raise CapacityError("There are no resources: add at least one slot with a capacity.")
    require_columns(resources, [capacity] + ([group] if group else []))
    return [c for c in resources.columns if c not in (capacity, group)]


def _capacity_values(resources: pd.DataFrame, capacity: str) -> np.ndarray:
    raw = pd.to_numeric(resources[capacity], errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(raw) | (raw < 0) | (np.floor(raw) != raw)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ParameterError(
            f"Capacities must be whole numbers of 0 or more; resource row {row + 1} has "
            f"'{resources[capacity].iloc[row]}'."
        )
    return whole_numbers(raw, "The capacities")  # at most MAX_COUNT each and in total


def _first_appearance(classes: Classes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Classes renumbered in order of first appearance (as the paper's Table 7).

    Returns (new number of each kernel class id, frequencies in the new order, first row of each).
    """
    n = classes.n_classes
    first = np.full(n, classes.ids.size, dtype=np.int64)
    np.minimum.at(first, classes.ids, np.arange(classes.ids.size))
    by_first = np.argsort(first, kind="stable")
    order = np.empty(n, dtype=np.int64)
    order[by_first] = np.arange(n)
    return order, classes.sizes[by_first], first[by_first]


def _resource_per_record(ids: np.ndarray, order: np.ndarray, cells: Cells) -> np.ndarray:
    """Each record's resource: the records of a class take its cells' seats in row order.

    >>> cells = Cells(np.array([0, 0, 1]), np.array([1, 0, 1]), np.array([1, 2, 1]), (2, 2))
    >>> _resource_per_record(np.array([0, 1, 0, 0]), np.array([0, 1]), cells).tolist()
    [0, 1, 0, 1]
    """
    rows = order[ids]  # each record's class row
    by_class = np.argsort(rows, kind="stable")
    del rows
    sequence = np.lexsort((cells.cols, cells.rows))
    small = np.int32 if cells.shape[1] < 2**31 else np.int64
    resource = np.empty(by_class.size, dtype=small)
    resource[by_class] = np.repeat(cells.cols[sequence].astype(small), cells.counts[sequence])
    return resource
