"""anonlib's measures on a data engine: the engine counts, anonlib concludes.

Each function here takes what its in-memory namesake takes, plus a path, an
``EngineTable`` or an Ibis table; it asks the engine for the per-class summary
(``counts``) and hands it to the same summary-to-result function the in-memory
path uses (``profile.risk_from_histogram``, ``leakage.leakage_from_histogram``),
so the results are identical to the last bit.

The in-memory functions (``anonlib.profile.risk_profile``,
``anonlib.leakage.leakage_table``...) send a path, an engine table or an
``engine=`` argument here, so users call the functions they know.

Example:
    >>> import pandas as pd
    >>> from anonlib.engine import connect, from_frame
    >>> with connect("duckdb") as engine:
    ...     table = from_frame(pd.DataFrame({"zip": [1, 1, 1, 2], "sex": ["f", "f", "f", "m"]}), engine)
    ...     risk_profile(table).vector
    (1, 0, 1)
"""

from __future__ import annotations

import os
from typing import Any, Sequence

import pandas as pd

from ..core.dataset import Dataset
from ..core.errors import ParameterError
from ..leakage import Attribute, attribute_names, leakage_frame, leakage_from_histogram, query_attributes
from ..profile import RiskProfile, require_quasi_identifiers, risk_from_histogram
from .backends import Engine, shared
from .counts import size_histogram, size_histograms
from .source import EngineTable, from_dataset, from_frame, from_ibis, scan


def as_engine_table(source: Any, engine: Engine | str | None = None) -> EngineTable:
    """Whatever a measure was given, as a table on an engine.

    A path (file, folder, glob) is scanned in place (on DuckDB unless ``engine``
    says otherwise); an ``EngineTable`` or an Ibis table is used where it is; a
    ``Dataset`` or DataFrame is put on ``engine`` (which must then be given).
    """
    if isinstance(engine, str):
        engine = shared(engine)
    if isinstance(source, EngineTable):
        return source
    if isinstance(source, (str, os.PathLike)):
        return scan(source, engine=engine or shared("duckdb"))
    if _is_ibis_table(source):
        return from_ibis(source)
    if engine is not None and isinstance(source, Dataset):
        return from_dataset(source, engine)
    if engine is not None and isinstance(source, pd.DataFrame):
        return from_frame(source, engine)
    raise ParameterError(
        "Give a table: a pandas DataFrame, a path to CSV/Parquet files, or a table from anonlib.engine.scan."
    )


def _is_ibis_table(value: Any) -> bool:
    return type(value).__module__.startswith("ibis.") and hasattr(value, "group_by") and hasattr(value, "schema")


def risk_profile(source: Any, quasi_identifiers: Sequence[str] | None = None, *, engine: Engine | str | None = None) -> RiskProfile:
    """``anonlib.profile.risk_profile`` counted by an engine: k, anonymity vector and
    records at risk of a table that stays where it is."""
    table = as_engine_table(source, engine)
    qis = tuple(table.quasi_identifiers if quasi_identifiers is None else quasi_identifiers)
    require_quasi_identifiers(qis)
    frame, dropped = table.analysis_frame(list(qis))
    sizes, classes = size_histogram(frame, qis, count=table.count, engine=table.engine)
    return risk_from_histogram(qis, sizes, classes, rows_dropped=dropped)


def leakage_table(
    source: Any,
    attributes: Sequence[Attribute] | None = None,
    *,
    count: str | None = None,
    sizes: Sequence[int] | None = None,
    engine: Engine | str | None = None,
) -> pd.DataFrame:
    """``anonlib.leakage.leakage_table`` counted by an engine: one group-by per
    attribute or combination, one small histogram back from each."""
    table = as_engine_table(source, engine)
    count = count if count is not None else table.count
    attributes, names = query_attributes(table.columns, attributes, count=count, sizes=sizes)
    frame, _ = table.analysis_frame(names, count=count)
    histograms = size_histograms(frame, [attribute_names(a) for a in attributes], count=count, engine=table.engine)
    return leakage_frame([leakage_from_histogram(a, *h) for a, h in zip(attributes, histograms)])
