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

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .backends import Engine, engine_of
from .source import WEIGHT, EngineTable

SIZE = "anonlib_size"
CLASSES = "anonlib_classes"
RECORDS = "anonlib_records"
QUERY = "anonlib_query"


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
    return size_histograms(table, [columns], count=count, engine=engine)[0]


def size_histograms(
    table, column_sets: Sequence[Sequence[str]], *, count: str | None = None, engine: Engine | None = None
) -> list[tuple[np.ndarray, np.ndarray]]:
    """``size_histogram`` for several column sets in one query (a union of the
    histograms, tagged), so an engine schedules one job instead of one per set."""
    import ibis

    engine = engine or engine_of(table)
    parts = []
    for j, columns in enumerate(column_sets):
        per_class = class_sizes(table, columns, count=count)
        histogram = per_class.group_by(SIZE).aggregate(**{CLASSES: per_class.count()})
        parts.append(
            histogram.select(
                **{QUERY: ibis.literal(j, "int64")}, **{SIZE: histogram[SIZE], CLASSES: histogram[CLASSES]}
            )
        )
    result = engine.run(ibis.union(*parts, distinct=False) if len(parts) > 1 else parts[0])
    query = np.asarray(result.column(QUERY).to_numpy(zero_copy_only=False), dtype=np.int64)
    sizes = np.asarray(result.column(SIZE).to_numpy(zero_copy_only=False), dtype=np.int64)
    classes = np.asarray(result.column(CLASSES).to_numpy(zero_copy_only=False), dtype=np.int64)
    order = np.lexsort((sizes, query))
    query, sizes, classes = query[order], sizes[order], classes[order]
    return [(sizes[query == j], classes[query == j]) for j in range(len(column_sets))]


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


def summary_frame(
    table, columns: Sequence[str], *, count: str | None = None, complete: Sequence[str] | None = None
) -> tuple[pd.DataFrame, int]:
    """The per-combination summary of ``columns`` of an ``EngineTable`` brought back as a
    small DataFrame: one row per distinct combination of values with its records in
    column ``WEIGHT`` (what the models and the risk measures conclude from), and the rows
    the missing policy dropped (those missing one of ``complete``, default ``columns``:
    ``EngineTable.summary``). Values keep the types the in-memory loader gives them
    (whole numbers as ``Int64``, text as ``string``), so the kernel encodes them alike."""
    columns = list(dict.fromkeys(columns))
    frame, dropped = table.summary(columns, count=count, complete=complete)
    cells = frame.group_by(columns).aggregate(**{WEIGHT: frame[WEIGHT].sum().cast("int64")})
    return to_pandas(table.engine.run(cells))[[*columns, WEIGHT]], dropped


def first_rows(table: EngineTable, n: int) -> pd.DataFrame:
    """The first ``n`` rows of every column of ``table`` brought back as pandas, values as the
    loader reads them (what is read off a file's contents, such as its guessed roles; a table of
    at most ``n`` rows comes back whole, so it reads as in memory)."""
    table.decide_kinds(list(table.columns))
    rows = table.raw.select(**{c: table.value(c) for c in table.columns}).limit(int(n))
    return to_pandas(table.engine.run(rows))


def to_pandas(result) -> pd.DataFrame:
    """A small engine result (Arrow) as pandas with the loader's types: whole numbers
    as ``Int64``, text as ``string``, decimals as ``float64``."""
    import pyarrow as pa

    mapping = {
        pa.int64(): pd.Int64Dtype(),
        pa.int32(): pd.Int64Dtype(),
        pa.string(): pd.StringDtype(),
        pa.large_string(): pd.StringDtype(),
        pa.bool_(): pd.BooleanDtype(),
    }
    return result.to_pandas(types_mapper=mapping.get)
