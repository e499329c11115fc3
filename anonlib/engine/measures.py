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

import numpy as np
import pandas as pd

from .. import models
from ..core.dataset import Dataset
from ..core.errors import ParameterError
from ..leakage import Attribute, attribute_names, leakage_frame, leakage_from_histogram, query_attributes
from ..models import Acceptance, ModelRequirement, ModelValues
from ..profile import RiskProfile, require_quasi_identifiers, risk_from_histogram
from ..risk import attacker
from ..risk.attacker import ReidentificationRisk
from .backends import Engine, shared
from .counts import size_histogram, size_histograms
from .source import WEIGHT, EngineTable, from_dataset, from_frame, from_ibis, scan


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
    frame, dropped = table.summary(list(qis))
    sizes, classes = size_histogram(frame, qis, count=WEIGHT, engine=table.engine)
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
    frame, _ = table.summary(names, count=count)
    histograms = size_histograms(frame, [attribute_names(a) for a in attributes], count=WEIGHT, engine=table.engine)
    return leakage_frame([leakage_from_histogram(a, *h) for a, h in zip(attributes, histograms)])


def summary_frame(table: EngineTable, columns: Sequence[str], *, count: str | None = None) -> tuple[pd.DataFrame, int]:
    """The per-combination summary of ``columns`` brought back as a small DataFrame:
    one row per distinct combination of values with its records in column ``WEIGHT``
    (the per-class summaries of the models and the risk measures), and the rows the
    missing policy dropped. Values keep the types the in-memory loader gives them
    (whole numbers as ``Int64``, text as ``string``), so the kernel encodes them alike."""
    columns = list(dict.fromkeys(columns))
    frame, dropped = table.summary(columns, count=count)
    cells = frame.group_by(columns).aggregate(**{WEIGHT: frame[WEIGHT].sum().cast("int64")})
    return to_pandas(table.engine.run(cells))[[*columns, WEIGHT]], dropped


def to_pandas(result) -> pd.DataFrame:
    """A small engine result (Arrow) as pandas with the loader's types: whole numbers
    as ``Int64``, text as ``string``, decimals as ``float64``."""
    import pyarrow as pa

    mapping = {pa.int64(): pd.Int64Dtype(), pa.int32(): pd.Int64Dtype(), pa.string(): pd.StringDtype(),
               pa.large_string(): pd.StringDtype(), pa.bool_(): pd.BooleanDtype()}
    return result.to_pandas(types_mapper=mapping.get)


def model_values(
    source: Any,
    quasi_identifiers: Sequence[str],
    sensitive: str,
    *,
    count: str | None = None,
    recursive_l: int = 2,
    hierarchy: pd.DataFrame | None = None,
    engine: Engine | str | None = None,
) -> ModelValues:
    """``anonlib.models.model_values`` counted by an engine: the (class, sensitive value)
    cells come back from one group-by and the models are computed on them."""
    table = as_engine_table(source, engine)
    qis = list(quasi_identifiers)
    cells, _ = summary_frame(table, [*qis, sensitive], count=count)
    return models.model_values(cells, qis, sensitive, count=WEIGHT, recursive_l=recursive_l, hierarchy=hierarchy)


def acceptance(
    source: Any,
    quasi_identifiers: Sequence[str],
    *,
    k: int = 1,
    requirements: Sequence[ModelRequirement] = (),
    max_suppressed: float = 0.0,
    count: str | None = None,
    engine: Engine | str | None = None,
) -> Acceptance:
    """``anonlib.models.acceptance`` counted by an engine. Its ``kept`` is per row of the
    summary (one per distinct combination), not per record: the records stay where they are
    (``anonlib.engine.apply_recipe`` suppresses them there)."""
    table = as_engine_table(source, engine)
    qis = list(quasi_identifiers)
    sensitives = [r.sensitive for r in requirements if isinstance(r, ModelRequirement)]
    cells, _ = summary_frame(table, [*qis, *sensitives], count=count)
    return models.acceptance(cells, qis, k=k, requirements=requirements, max_suppressed=max_suppressed, count=WEIGHT)


def reidentification(
    source: Any,
    quasi_identifiers: Sequence[str],
    *,
    count: str | None = None,
    population: pd.DataFrame | None = None,
    sampling_fraction: float | None = None,
    threshold: float = 0.2,
    population_count: str | None = None,
    engine: Engine | str | None = None,
) -> ReidentificationRisk:
    """``anonlib.risk.reidentification`` counted by an engine: from the class-size
    histogram alone, or (with a population table, matched in memory) from the classes."""
    table = as_engine_table(source, engine)
    qis = list(quasi_identifiers)
    require_quasi_identifiers(qis)
    if population is not None:
        classes, _ = summary_frame(table, qis, count=count)
        return attacker.reidentification(
            classes, qis, count=WEIGHT, population=population, sampling_fraction=sampling_fraction,
            threshold=threshold, population_count=population_count,
        )
    frame, _ = table.summary(qis, count=count)
    sizes, classes = size_histogram(frame, qis, count=WEIGHT, engine=table.engine)
    return attacker.risk_from_sizes(
        np.repeat(sizes, classes), sampling_fraction=sampling_fraction, threshold=threshold, quasi_identifiers=qis,
    )
