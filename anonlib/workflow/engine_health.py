"""Per-person date shifts and a records-per-person cap where the data lives (scale.md part 2).

The engine's side of ``ShiftDatesStep`` and ``CapRecordsStep`` (``anonlib.workflow.health_steps``),
giving the released table the in-memory steps give, without the records in pandas:

- **date shift**: the distinct persons come back, ``ShiftDatesStep.offsets`` gives each its
  offset (HMAC-SHA-256 under the project key, computed here in memory: the key never reaches the
  engine, its storage or its logs), and that small table is joined to the records; then the
  distinct (date, offset) pairs of each date column come back (at most the distinct dates times
  the 2 × days + 1 offsets, never a person), the in-memory ``shift_dates`` writes each pair's
  shifted date (the same text, the same refusals: a partial date, mixed UTC offsets, a date out
  of the writable range), and the engine joins the records with that table;
- **cap** ("first"): each record numbered in the file's order as the engine scans it
  (``ROW_NUMBER() OVER ()``, a streaming window on DuckDB: one pass in the file's order), then
  ``ROW_NUMBER() OVER (PARTITION BY person ORDER BY blank time, time, file order)`` kept below N.
  After either step DuckDB computes the records once into a temporary table (``materialized``),
  read by the queries that follow.
  The time column's distinct values come back and are ranked by the in-memory ``time_rank``. A
  cap drawn at random ranks every record by its own keyed hash: refused in one sentence (the
  key would have to reach every record on the engine); so is a cap on Spark, which does not keep
  the file's order.

Example:
    >>> import pandas as pd
    >>> from anonlib.engine import from_frame, to_pandas
    >>> from anonlib.workflow.health_steps import CapRecordsStep
    >>> t = from_frame(pd.DataFrame({"pid": ["a", "a", "b", "a"], "day": [40, 5, 9, 20]}), "duckdb")
    >>> rows = with_file_order(t.raw)
    >>> kept = cap_rows(CapRecordsStep.made("pid", 2, time="day"), rows, t.engine)
    >>> sorted(to_pandas(t.engine.run(kept.drop(ORDER)))["day"].tolist())
    [5, 9, 20]
"""

from __future__ import annotations

import pandas as pd

from ..core.errors import ColumnError, ParameterError, ProblemTooLargeError, join_names
from ..engine import Engine, from_frame, to_pandas
from ..engine.backends import errors
from ..transformations.capping import time_rank
from ..transformations.pseudonyms import shift_dates
from .health_steps import CapRecordsStep, ShiftDatesStep

ORDER = "anonlib_order"  # a record's place in the file, as the engine scans it
OFFSET = "anonlib_offset"
_RANK = "anonlib_rank"
_KEPT = "anonlib_kept"
_KEY = "anonlib_key"
_LABEL = "anonlib_label"
MAX_PAIRS = 5_000_000  # distinct (date, offset) pairs of one column brought into memory


def refuse_cap(order: str, engine: str) -> None:
    """A sentence for a records-per-person cap ``engine`` cannot make (drawn at random; on an
    engine that does not keep the file's order); nothing otherwise.

    >>> refuse_cap("first", "spark")
    Traceback (most recent call last):
    ...
    anonlib.core.errors.ParameterError: A records-per-person cap keeps each person's first records in the file's order, which Spark does not keep; use --engine duckdb or leave out --engine.
    """
    if order == "random":
        raise ParameterError(
            "A records-per-person cap drawn at random ranks every record by its own keyed hash, which runs in "
            f"memory only; on the {engine} engine use --cap-order first (with --time), or leave out --engine."
        )
    if engine != "duckdb":
        raise ParameterError(
            "A records-per-person cap keeps each person's first records in the file's order, which "
            f"{'Spark' if engine == 'spark' else engine} does not keep; use --engine duckdb or leave out --engine."
        )


def refuse_on_engine(step, engine: str) -> None:
    """``refuse_cap`` for a ``CapRecordsStep``; nothing for another step."""
    if isinstance(step, CapRecordsStep):
        refuse_cap(step.order, engine)


def with_file_order(raw):
    """``raw`` (the scan itself, before any join or filter) with each record's place in the file
    (0, 1, ...) in ``ORDER``: DuckDB numbers a scan's rows in the file's order (files in their
    listed order) with a streaming window."""
    import ibis

    return raw.mutate(**{ORDER: ibis.row_number()})


def _records_of(rows, column: str, engine: Engine) -> int:
    return int(engine.value(rows.filter(rows[column].isnull()).count()) or 0)


def shift_rows(step: ShiftDatesStep, rows, engine: Engine):
    """``rows`` with the step's date columns shifted by each person's offset (see the module text)."""
    missing = [c for c in step.columns if c not in rows.columns]
    if missing:
        raise ColumnError(f"These columns do not exist in the data: {join_names(missing)}.")
    persons = to_pandas(engine.run(rows.select(step.person).distinct()))[step.person]
    if persons.isna().any():  # date_offsets' sentence, the blanks counted by the engine
        blanks = _records_of(rows, step.person, engine)
        raise ColumnError(
            f"The person column '{step.person}' is blank in {blanks:,} record{'s' if blanks != 1 else ''}; every "
            "record needs its person to shift its dates (fill them in, or choose another person column)."
        )
    persons = persons.reset_index(drop=True)
    if persons.empty:  # no record: no date to move
        return rows
    offsets = pd.DataFrame({_KEY: persons, OFFSET: step.offsets(pd.DataFrame({step.person: persons}))})
    lookup = from_frame(offsets, engine).raw
    joined = rows.left_join(lookup, rows[step.person] == lookup[_KEY])
    rows = joined.select(*rows.columns, joined[OFFSET])
    for column in step.dates:
        rows = _shift_column(rows, column, engine)
    return materialized(rows.drop(OFFSET), engine)


def materialized(rows, engine: Engine):
    """``rows`` computed once into a temporary table of the engine (DuckDB: in memory, spilled to
    its private folder), so the queries after a shift or a cap read the records as released instead
    of joining and numbering them again; it holds records, pseudonyms and shifted dates, never the
    key. On another engine the query itself."""
    import ibis

    if engine.name != "duckdb":
        return rows
    with errors(engine):
        return engine.backend.create_table(ibis.util.gen_name("anonlib_rows"), rows, temp=True)


def _shift_column(rows, column: str, engine: Engine):
    """One date column replaced by its shifted value, from the distinct (date, offset) pairs."""
    present = rows.filter(rows[column].notnull())
    pairs = present.select(column, OFFSET).distinct().limit(MAX_PAIRS + 1)
    found = to_pandas(engine.run(pairs))
    if len(found) > MAX_PAIRS:
        raise ProblemTooLargeError(
            f"The date column '{column}' holds more than {MAX_PAIRS:,} distinct dates and offsets; shift it in "
            "memory (leave out --engine), or write its times as whole days."
        )
    if found.empty:  # no date to move: the column stays as it is (missing)
        return rows
    shifted = shift_dates(found[column].reset_index(drop=True), found[OFFSET].to_numpy(), column)
    numeric = pd.api.types.is_numeric_dtype(shifted)
    label = pd.array(shifted, dtype="Int64") if numeric else pd.array(shifted.astype(object), dtype="string")
    mapping = pd.DataFrame({_KEY: found[column].to_numpy(), OFFSET + "_k": found[OFFSET].to_numpy(), _LABEL: label})
    lookup = from_frame(mapping, engine).raw
    joined = rows.left_join(lookup, [rows[column] == lookup[_KEY], rows[OFFSET] == lookup[OFFSET + "_k"]])
    return joined.select(*[joined[_LABEL].name(c) if c == column else joined[c] for c in rows.columns])


def cap_rows(step: CapRecordsStep, rows, engine: Engine):
    """``rows`` (numbered in the file's order, ``with_file_order``) without each person's records
    past the step's cap (see the module text); ``ORDER`` kept."""
    import ibis

    refuse_on_engine(step, engine.name)
    missing = [c for c in step.columns if c not in rows.columns]
    if missing:
        raise ColumnError(f"These columns do not exist in the data: {join_names(missing)}.")
    blanks = _records_of(rows, step.person, engine)
    if blanks:  # person_codes' sentence, counted by the engine
        raise ColumnError(
            f"The person column '{step.person}' is blank in {blanks:,} record{'s' if blanks != 1 else ''}; "
            "every record needs the person it belongs to (fill them in, or choose another person column)."
        )
    order = [rows[ORDER]]
    ranked = rows
    times = pd.Series([], dtype=object)
    if step.time is not None:
        times = to_pandas(engine.run(rows.select(step.time).distinct()))[step.time]
        times = times[times.notna()].reset_index(drop=True)
    if len(times):  # without a time (or with every time blank): the file's order
        rank = time_rank(times, step.time)
        mapping = pd.DataFrame({_KEY: times.to_numpy(), _RANK: rank})
        lookup = from_frame(mapping, engine).raw
        joined = rows.left_join(lookup, rows[step.time] == lookup[_KEY])
        ranked = joined.select(*rows.columns, joined[_RANK])
        order = [ranked[_RANK].isnull(), ranked[_RANK], ranked[ORDER]]
    numbered = ranked.mutate(**{_KEPT: ibis.row_number().over(group_by=ranked[step.person], order_by=order)})
    return materialized(numbered.filter(numbered[_KEPT] < step.records).select(*rows.columns), engine)


def capped_counts(step: CapRecordsStep, rows, engine: Engine) -> tuple[int, int]:
    """The records ``cap_rows`` leaves out of ``rows`` and the people who lose one (one query),
    as ``cap_records`` counts them."""
    refuse_on_engine(step, engine.name)
    sizes = rows.group_by(step.person).aggregate(n=rows.count())
    over = sizes.filter(sizes.n > step.records)
    result = engine.run(over.aggregate(records=(over.n - step.records).sum(), people=over.count()))
    row = result.to_pylist()[0] if result.num_rows else {}
    return int(row.get("records") or 0), int(row.get("people") or 0)
