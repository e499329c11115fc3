"""A schedule as sparse cells (people of each class per resource), its anonymity vector,
the methods' names and limits, and the checks every method applies to its inputs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse

from ...core.budget import WorkEstimate
from ...core.errors import CapacityError, ParameterError
from ...core.numbers import whole_numbers
from ...measures.avector import anonymity_vector

METHODS = ("heuristic", "random", "optimal")
RULES = ("largest", "closest_half", "largest_at_most_half")
# Chosen by measurement on the Table 10 protocol (anonlib.transformations.schedule_experiments.
# compare_rules, 300 runs per N, seed 0): "closest_half" gives the most anonymous
# schedules on average at every N from 20 to 1000 (e.g. 73.6% vs 59.4% for
# "largest" at N = 50, 99.7% vs 94.4% at N = 1000), as the paper's text says.
DEFAULT_RULE = "closest_half"
RANK_LIMIT = 100_000  # partial schedules schedule_rank may visit before refusing (about 1 s)
RANK_RESOURCES = 8  # the limit is for partial schedules of this many resources; more resources cost more each
EXACT_INDEX_LIMIT = 50_000  # largest population whose exact index a result carries
OPTIMAL_LIMIT = 200_000  # decision variables the optimal method accepts per level


@dataclass(frozen=True)
class Cells:
    """The non-zero cells of an assignment matrix (sparse: Q x R can be huge)."""

    rows: np.ndarray
    cols: np.ndarray
    counts: np.ndarray
    shape: tuple[int, int]

    def dense(self) -> np.ndarray:
        """The full Q x R integer matrix (small problems only: the optimum's hints).

        >>> Cells(np.array([1]), np.array([0]), np.array([3]), (2, 2)).dense().tolist()
        [[0, 0], [3, 0]]
        """
        matrix = np.zeros(self.shape, dtype=np.int64)
        np.add.at(matrix, (self.rows, self.cols), self.counts)
        return matrix

    def sparse(self) -> sparse.csr_array:
        """The Q x R matrix as a ``scipy.sparse.csr_array``: memory O(cells used).

        >>> Cells(np.array([1, 1]), np.array([0, 0]), np.array([3, 1]), (2, 2)).sparse().toarray().tolist()
        [[0, 0], [4, 0]]
        """
        matrix = sparse.csr_array((self.counts, (self.rows, self.cols)), shape=self.shape, dtype=np.int64)
        matrix.sum_duplicates()
        return matrix

    @property
    def vector(self) -> tuple[int, ...]:
        """Anonymity vector of the schedule: non-zero cells counted by size."""
        return anonymity_vector(self.counts)

    def loads(self) -> np.ndarray:
        """People sent to each resource."""
        return np.bincount(self.cols, weights=self.counts, minlength=self.shape[1]).astype(np.int64)

    @classmethod
    def from_dense(cls, matrix: np.ndarray) -> Cells:
        matrix = np.asarray(matrix, dtype=np.int64)
        rows, cols = np.nonzero(matrix)
        return cls(rows, cols, matrix[rows, cols], tuple(matrix.shape))

    @classmethod
    def from_matrix(cls, matrix) -> Cells:
        """The non-zero cells of a sparse or dense matrix.

        >>> Cells.from_matrix(sparse.csr_array(np.array([[0, 2], [1, 0]]))).counts.tolist()
        [2, 1]
        """
        if not sparse.issparse(matrix):
            return cls.from_dense(matrix)
        coo = sparse.coo_array(matrix)
        coo.sum_duplicates()
        keep = coo.data != 0
        return cls(
            coo.row[keep].astype(np.int64),
            coo.col[keep].astype(np.int64),
            coo.data[keep].astype(np.int64),
            tuple(coo.shape),
        )


def matrix_vector(matrix) -> tuple[int, ...]:
    """Anonymity vector of an assignment matrix, sparse or dense (cells of 0 people do not count).

    >>> matrix_vector(np.array([[4, 0], [1, 2]]))
    (1, 1, 0, 1)
    >>> matrix_vector(sparse.csr_array(np.array([[4, 0], [1, 2]])))
    (1, 1, 0, 1)
    """
    if sparse.issparse(matrix):
        return Cells.from_matrix(matrix).vector
    return anonymity_vector(np.asarray(matrix).ravel())


# --- validation ----------------------------------------------------------------------


def estimate_schedule(
    freqs: Sequence[int], capacities: Sequence[int], method: str, *, table_cells: int = 0
) -> WorkEstimate:
    """What scheduling costs before it starts (measured on 2 cores): the random
    method shuffles every seat (10^7 people: 2 s, 0.5 GB), the heuristic works
    per value and resource, the optimum is bounded by ``OPTIMAL_LIMIT`` and its
    time limit; the anonymity vectors before and after have one entry per class
    size; ``table_cells`` counts the cells of a per-person result table.

    >>> estimate_schedule([2 * 10**8], [3 * 10**8], "random").peak_bytes > 8 * 1024**3
    True
    """
    f, c = whole_numbers(freqs, "The frequencies"), whole_numbers(capacities, "The capacities")
    people, seats, values = int(f.sum()), int(c.sum()), f.size + c.size
    if method == "random":
        seconds, peak = 1e-7 * (people + seats), 16 * seats + 48 * people
    else:
        seconds, peak = 2e-6 * values, 200 * values
    peak += 2 * 24 * int(f.max(initial=0))  # the vectors before and after, one entry per class size
    return WorkEstimate(
        f"scheduling {people:,} people onto {c.size:,} resources with the {method} method",
        operations=people + seats,
        seconds=seconds + 1e-6 * table_cells,
        peak_bytes=peak + 64 * table_cells,
    )


def check_fit(freqs: np.ndarray, capacities: np.ndarray, where: str = "") -> None:
    people, seats = int(freqs.sum()), int(capacities.sum())
    if people and capacities.size == 0:
        raise CapacityError(f"There are no resources{where} for {people:,} people; add at least one slot.")
    if seats < people:
        raise CapacityError(
            f"The resources{where} have {seats:,} seats in total but {people:,} people need an "
            f"appointment: {people - seats:,} seats short. Add slots or raise capacities."
        )


def groups_of(freqs: np.ndarray, capacities: np.ndarray, groups) -> list[tuple[np.ndarray, np.ndarray, str]]:
    """(rows, resources, label) per group; one group when ``groups`` is None. Checks capacity."""
    if groups is None:
        check_fit(freqs, capacities)
        return [(np.arange(freqs.size), np.arange(capacities.size), "")]
    row_groups, resource_groups = (np.asarray(g, dtype=object) for g in groups)
    if row_groups.shape != freqs.shape or resource_groups.shape != capacities.shape:
        raise ParameterError("Give one group label per frequency and one per resource.")
    out = []
    for label in pd.unique(np.concatenate([row_groups, resource_groups])):
        rows = np.flatnonzero(row_groups == label)
        cols = np.flatnonzero(resource_groups == label)
        check_fit(freqs[rows], capacities[cols], f" of group '{label}'")
        out.append((rows, cols, str(label)))
    return out
