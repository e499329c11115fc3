"""The group counts every measure needs, as Ibis expressions run by the engine.

Only the small per-class summaries leave the engine:

- ``size_histogram``: how many equivalence classes have each size (one row per
  distinct size: at most about sqrt(2 N) rows for N records). k, the anonymity
  vector, records at risk and the leakage of an attribute all follow from it.
- ``cell_counts``: records per class and sensitive value (one row per
  non-empty cell), for the privacy models.

The results are the ones the in-memory kernel gives (``anonlib.core.equivalence``):
a count column is summed instead of counting rows, empty classes are left out,
and missing values form a group of their own (SQL's GROUP BY keeps NULLs together).

Example:
    >>> import pandas as pd
    >>> from anonlib.engine import connect, from_frame
    >>> with connect("duckdb") as engine:
    ...     t = from_frame(pd.DataFrame({"zip": ["1", "1", "2"]}), engine)
    ...     sizes, classes = size_histogram(t.raw, ["zip"], engine=engine)
    >>> sizes.tolist(), classes.tolist()
    ([1, 2], [1, 1])
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from .backends import Engine, engine_of

SIZE = "anonlib_size"
CLASSES = "anonlib_classes"
RECORDS = "anonlib_records"


def class_sizes(table, columns: Sequence[str], *, count: str | None = None):
    """The (lazy) table of classes: one row per class on ``columns`` with its size in
    records (column ``SIZE``), empty classes left out."""
    size = table[count].sum().cast("int64") if count else table.count()
    per_class = table.group_by(list(columns)).aggregate(**{SIZE: size}) if columns else table.aggregate(**{SIZE: size})
    return per_class.filter(per_class[SIZE] > 0)


def size_histogram(
    table, columns: Sequence[str], *, count: str | None = None, engine: Engine | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Distinct class sizes (ascending) and how many classes have each, as
    ``anonlib.core.equivalence.size_histogram`` gives them in memory."""
    engine = engine or engine_of(table)
    per_class = class_sizes(table, columns, count=count)
    histogram = per_class.group_by(SIZE).aggregate(**{CLASSES: per_class.count()})
    result = engine.run(histogram)
    sizes = np.asarray(result.column(SIZE).to_numpy(zero_copy_only=False), dtype=np.int64)
    classes = np.asarray(result.column(CLASSES).to_numpy(zero_copy_only=False), dtype=np.int64)
    order = np.argsort(sizes, kind="stable")
    return sizes[order], classes[order]


def cell_counts(
    table, columns: Sequence[str], sensitive: str, *, count: str | None = None, engine: Engine | None = None
) -> pd.DataFrame:
    """Records per class (``columns``) and value of ``sensitive``: one row per non-empty cell,
    with the count in column ``RECORDS``; sorted by class then value."""
    engine = engine or engine_of(table)
    size = table[count].sum().cast("int64") if count else table.count()
    keys = [*columns, sensitive]
    cells = table.group_by(keys).aggregate(**{RECORDS: size})
    cells = cells.filter(cells[RECORDS] > 0)
    frame = engine.run(cells).to_pandas()
    return frame.sort_values(keys, kind="stable", na_position="last").reset_index(drop=True)
