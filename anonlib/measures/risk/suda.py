"""Special uniques: per record, the minimal combinations of quasi-identifier values that single it out.

Elliot, Manning, Mayes, Gurd & Bane (2002), "SUDA: a program for detecting
special uniques"; Manning, Haglin & Keane (2008), "A recursive search
algorithm for statistical disclosure assessment" (SUDA2, also in ARX and
sdcMicro). A *minimal sample unique* (MSU) of a record is a set of its
quasi-identifiers on which no other record of the file has the same values,
while no smaller set of them does. A record with an MSU of few attributes is
easy to single out even when it is not unique on many combinations; the
list of MSUs says *which* combinations do it, not only that it is unique.

Search (up to ``max_size`` attributes per combination, bounded by the work
budget): the file is collapsed to its distinct combinations of all
quasi-identifiers (only a combination held by one record can ever be unique on
a subset); combinations of attributes are visited by increasing size, each
counted with the shared kernel (``combine`` + ``bincount``); a record unique on
a set S is an MSU for S exactly when it is unique on none of S's subsets one
attribute smaller (a unique smaller set would make every set containing it
unique). The previous size's unique records are kept as bit sets.

Example:
    >>> import pandas as pd
    >>> df = pd.DataFrame({"age": [30, 30, 40, 40], "sex": ["f", "m", "f", "f"], "zip": [1, 1, 1, 2]})
    >>> s = suda(df, ["age", "sex", "zip"])
    >>> s.for_row(1), s.for_row(3), s.for_row(0)
    ((('sex',),), (('zip',),), (('age', 'sex'),))
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...core.budget import MAX_SECONDS, Progress, WorkEstimate, check_work, report, subset_count
from ...core.equivalence import Classes, combine, encode
from ...core.errors import ParameterError
from ...core.numbers import whole_number
from ..models.summaries import checked_columns

DEFAULT_MAX_SIZE = 3
_SECONDS_PER_ROW_COLUMN = 2.5e-8  # combine + bincount, per distinct row and attribute (2-core machine)
_SECONDS_PER_ROW = 2.0e-8


@dataclass(frozen=True, eq=False)
class SpecialUniques:
    """The minimal sample uniques found: entry i says that row ``rows[i]`` is the only
    record with its values of ``combinations[subsets[i]]``, and of no smaller part of it.

    ``records`` counts the file's records; ``sizes`` lists the combination sizes searched.
    """

    quasi_identifiers: tuple[str, ...]
    max_size: int
    records: int
    combinations: tuple[tuple[str, ...], ...]
    rows: np.ndarray = field(repr=False)
    subsets: np.ndarray = field(repr=False)
    n_rows: int = 0

    def for_row(self, row: int) -> tuple[tuple[str, ...], ...]:
        """The minimal unique combinations of one row (by position), smallest first."""
        return tuple(self.combinations[s] for s in self.subsets[self.rows == row])

    @property
    def smallest(self) -> np.ndarray:
        """Per row, the size of its smallest MSU (0: none within the size limit)."""
        out = np.zeros(self.n_rows, dtype=np.int64)
        if self.rows.size:
            sizes = np.array([len(c) for c in self.combinations])[self.subsets]
            order = np.argsort(-sizes, kind="stable")  # the smallest written last wins
            out[self.rows[order]] = sizes[order]
        return out

    @property
    def special_unique_records(self) -> int:
        """Records with at least one minimal unique combination (each is one record)."""
        return int(np.unique(self.rows).size)

    def by_size(self) -> tuple[tuple[int, int], ...]:
        """(size, records whose smallest MSU has that many attributes), for every size searched.

        >>> suda(pd.DataFrame({"a": [1, 2, 2], "b": [1, 1, 2]}), ["a", "b"]).by_size()
        ((1, 2), (2, 1))
        """
        smallest = self.smallest
        return tuple((s, int((smallest == s).sum())) for s in range(1, self.max_size + 1))

    def attribute_counts(self) -> tuple[tuple[str, int], ...]:
        """Per quasi-identifier, the number of MSUs it takes part in (most first)."""
        counts = {a: 0 for a in self.quasi_identifiers}
        per_subset = np.bincount(self.subsets, minlength=len(self.combinations))
        for combination, n in zip(self.combinations, per_subset):
            for a in combination:
                counts[a] += int(n)
        return tuple(sorted(counts.items(), key=lambda kv: (-kv[1], self.quasi_identifiers.index(kv[0]))))

    def table(self, frame: pd.DataFrame | None = None, limit: int = 1000) -> pd.DataFrame:
        """One line per MSU (row, size, combination and, with ``frame``, the values), smallest first."""
        limit = whole_number(limit, "The number of minimal uniques listed", minimum=0)
        order = np.lexsort(
            (
                self.rows,
                np.array([len(c) for c in self.combinations], dtype=np.int64)[self.subsets]
                if self.rows.size
                else self.rows,
            )
        )[:limit]
        lines = []
        for i in order:
            combination = self.combinations[self.subsets[i]]
            line = {"row": int(self.rows[i]), "size": len(combination), "combination": ", ".join(combination)}
            if frame is not None:
                line["values"] = ", ".join(f"{a}={frame[a].iloc[int(self.rows[i])]}" for a in combination)
            lines.append(line)
        return pd.DataFrame(lines, columns=["row", "size", "combination"] + (["values"] if frame is not None else []))


def estimate_suda(n_rows: int, n_attributes: int, max_size: int) -> WorkEstimate:
    """The work of a search over every combination of up to ``max_size`` of
    ``n_attributes`` quasi-identifiers on ``n_rows`` distinct rows.

    >>> estimate_suda(1000, 10, 3).operations
    175000
    """
    sizes = range(1, max_size + 1)
    subsets = subset_count(n_attributes, sizes)
    seconds = sum(math.comb(n_attributes, s) * n_rows * (_SECONDS_PER_ROW + s * _SECONDS_PER_ROW_COLUMN) for s in sizes)
    widest = max((math.comb(n_attributes, s) + math.comb(n_attributes, s - 1) for s in sizes), default=0)
    peak = widest * (n_rows // 8 + 1) + 6 * 8 * n_rows
    return WorkEstimate(
        f"finding the special uniques on {subsets:,} combinations of up to {max_size} of "
        f"{n_attributes} quasi-identifiers",
        operations=subsets * n_rows,
        seconds=seconds,
        peak_bytes=peak,
    )


def suda(
    df: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    *,
    max_size: int | None = None,
    count: str | None = None,
    max_seconds: float = MAX_SECONDS,
    progress: Progress | None = None,
) -> SpecialUniques:
    """Per record, its minimal unique combinations of up to ``max_size`` quasi-identifiers
    (default: 3, or all when there are fewer).

    The work is estimated first (``estimate_suda``); a search longer than
    ``max_seconds`` or larger than the memory budget is refused with a sentence.

    >>> s = suda(pd.DataFrame({"a": [1, 2, 2], "b": [1, 1, 2]}), ["a", "b"])
    >>> s.special_unique_records, s.for_row(2)
    (3, (('b',),))
    """
    qis = checked_columns(df, quasi_identifiers, [], count)
    if max_size is None:
        max_size = min(DEFAULT_MAX_SIZE, len(qis))
    try:
        whole = not isinstance(max_size, bool) and float(max_size).is_integer()
    except (TypeError, ValueError):
        whole = False
    if not whole or not 1 <= int(max_size) <= len(qis):
        raise ParameterError(
            f"The largest combination size for special uniques must be a whole number from 1 to the number "
            f"of quasi-identifiers ({len(qis)}); got {max_size}."
        )
    max_size = int(max_size)
    table = encode(df, qis, count=count)
    full = table.classes()
    distinct = full.first_rows  # one row per distinct combination of all quasi-identifiers
    weights = full.sizes
    present = weights > 0
    distinct, weights = distinct[present], weights[present]
    codes = table.codes[distinct]
    check_work(
        estimate_suda(len(distinct), len(qis), max_size),
        narrow="choose fewer quasi-identifiers or a smaller largest combination size",
        max_seconds=max_seconds,
    )
    combinations: list[tuple[str, ...]] = []
    found_rows: list[np.ndarray] = []
    found_subsets: list[np.ndarray] = []
    total = subset_count(len(qis), range(1, max_size + 1))
    done = 0
    previous: dict[tuple[int, ...], np.ndarray] = {}
    n = len(distinct)
    for size in range(1, max_size + 1):
        current: dict[tuple[int, ...], np.ndarray] = {}
        for subset in itertools.combinations(range(len(qis)), size):
            ids, n_classes = combine([codes[:, j] for j in subset], [table.cardinalities[j] for j in subset], n)
            class_records = Classes.from_ids(ids, n_classes, weights).sizes
            unique = class_records[ids] == 1
            current[subset] = np.packbits(unique)
            candidates = np.flatnonzero(unique)
            for smaller in itertools.combinations(subset, size - 1) if size > 1 else ():
                bits = previous[smaller]
                candidates = candidates[((bits[candidates >> 3] >> (7 - (candidates & 7))) & 1) == 0]
            if candidates.size:
                found_rows.append(distinct[candidates])
                found_subsets.append(np.full(candidates.size, len(combinations), dtype=np.int64))
            combinations.append(tuple(qis[j] for j in subset))
            done += 1
            report(progress, done, total, "combinations of quasi-identifiers")
        previous = current
    rows = np.concatenate(found_rows) if found_rows else np.zeros(0, dtype=np.int64)
    subsets = np.concatenate(found_subsets) if found_subsets else np.zeros(0, dtype=np.int64)
    return SpecialUniques(
        quasi_identifiers=tuple(qis),
        max_size=max_size,
        records=table.n_records,
        combinations=tuple(combinations),
        rows=rows,
        subsets=subsets,
        n_rows=table.n_rows,
    )
