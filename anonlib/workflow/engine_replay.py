"""A release recipe re-applied where the data lives: the engine rewrites the records.

The workflow's side of the engine (the engine counts and rewrites; what a step means
and what the target asks stay here, so the engine imports nothing above it).
``apply_recipe(recipe, path, out=..., engine="duckdb")`` does on DuckDB or Spark
what ``anonlib.workflow.recipe.apply_recipe`` does in memory (the same released rows; as a CSV,
the same bytes):

- the file is scanned in place, checked against the recipe's columns, and each
  column given its recorded type and role;
- a step that replaces values (generalization, bands, a frontier policy,
  aggregated areas) becomes a join with a small mapping table: the distinct
  values of the column come back, the step's own ``apply`` maps them (so every
  label, and every "value no step knows" sentence, is the in-memory one), and
  the engine joins the records with that table; for a generalization this is
  the join with the hierarchy table, restricted to the values present;
- local suppression and microaggregation need all records at once: the
  engine refuses them with a sentence (apply the recipe in memory); top and
  bottom coding maps each value on its own, so it is a join like the others;
- a per-person date shift joins each person's keyed offset and each (date, offset)
  pair's shifted date, and a records-per-person cap keeps each person's first N
  records by a window over the file's order (``anonlib.workflow.engine_health``);
- suppression removes the records of the classes failing the target: the
  (class, sensitive value) cells come back, ``anonlib.measures.models.acceptance``
  decides per class as in memory, and the engine drops the failing classes'
  records with a join;
- the released table is written by the engine; a CSV byte for byte as the in-memory
  release writes it (``anonlib.engine.writer``: ``to_safe_csv``'s header, cells,
  quoting, formula neutralisation and CRLF line ends), its records in the source's
  order: each record carries its position in the file from the scan
  (``EngineTable.numbered``) and the lines are sorted by it; rows merged under a
  count column are merged by a group-by and placed at their first record, as
  ``anonlib.workflow.release.merge_identical_rows`` places them. A Parquet file is
  the engine's own (a folder of parts on Spark), in the engine's order. The release
  target is then checked on the file as written, read back as anonlib reads a file
  (``ReleaseTarget.check`` on its per-combination summary, weighted), so the
  verdict and the exit code are about what a reader of the file gets. Without
  an output file it is checked on the released table's query.

Only distinct values, cells and counts leave the engine; the records never do.
The released rows are the in-memory release's rows, and the CSV holds them as the
in-memory release writes them (``EngineReplay.in_source_order``: False only for a
table the engine cannot number, an Ibis table brought to Spark, whose rows are then
in the engine's order).

Example:
    >>> import tempfile, pandas as pd
    >>> from pathlib import Path
    >>> from anonlib.core.dataset import Dataset
    >>> from anonlib.workflow import ReleaseTarget, WorkingCopy
    >>> from anonlib.workflow.steps import BandsStep
    >>> folder = Path(tempfile.mkdtemp())
    >>> frame = pd.DataFrame({"age": [31, 35, 38, 44, 41]})
    >>> frame.to_csv(folder / "d.csv", index=False)
    >>> ds = Dataset.from_frame("d.csv", frame, {"age": "quasi-identifier"})
    >>> recipe = WorkingCopy.start(ds, ReleaseTarget(k=2)).apply(BandsStep("age", 10, 1, 31, 44, True), "x").recipe()
    >>> replay = apply_recipe(recipe, folder / "d.csv", out=folder / "out.csv")
    >>> replay.check.met, replay.released_records, sorted(pd.read_csv(folder / "out.csv")["age"])
    (True, 5, ['31-39', '31-39', '31-39', '40-44', '40-44'])
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from ..core.dataset import Dataset, Role
from ..core.errors import (
    AnonlibError,
    ColumnError,
    DataFileError,
    EngineError,
    ParameterError,
    RecipeError,
    join_names,
)
from ..core.loading import CSV_INJECTION_PREFIXES
from ..engine import WEIGHT, Engine, EngineTable, from_frame, from_ibis, scan, shared, summary_frame, to_pandas
from ..engine.backends import errors
from ..engine.owners import MAX_POWER, OWNER, owner_pairs, release
from ..engine.owners_out import failing_owners, owners_in
from ..engine.source import ROW
from ..engine.writer import ordered_writes, write_csv
from ..measures.models import acceptance
from ..measures.target import TargetCheck
from .engine_health import ORDER, cap_rows, capped_counts, refuse_on_engine, shift_rows, with_file_order
from .health_steps import CapRecordsStep, ShiftDatesStep
from .recipe import Recipe, absent_note
from .release import pseudonymized_columns, release_columns
from .steps import BandsStep, GeneralizationStep, SuppressionStep
from .unseen import UnseenValues, cover_hierarchy, cover_steps

KEY = "anonlib_key"
LABEL = "anonlib_label"
FAILING = "anonlib_failing"
SEARCHED = "anonlib_searched_owner"  # a record's owner as in the file, beside the steps, for a search's decision
PARQUET = (".parquet", ".parq", ".pq")
# (person, row) pairs a suppression in people brings into memory to decide; past it the engine decides (on the
# spec's panel of 10^7 records, bringing them back took 49.9 s and the check's 21.1 s of a 545 s release)
MAX_OWNER_ROWS = 1_000_000


@dataclass(frozen=True)
class EngineReplay:
    """A recipe re-applied on an engine: the target check (in records, as in memory),
    the records released and where the engine wrote them (None when not asked).

    With ``out`` both are measured on the file the engine wrote, read back as anonlib
    reads a file (``written`` is that table, on the engine); without it, on the
    released table's query (``measured_on`` says which: ``"written file"`` or
    ``"query"``). ``released`` is the released table's query, on the engine."""

    check: TargetCheck
    released_records: int
    out: Path | None
    engine: str
    written: EngineTable | None = None
    measured_on: str = "query"
    released: EngineTable | None = None
    # records a records-per-person cap left out, which the check does not judge (the cap's decision,
    # apart from the suppressed records)
    left_out: int = 0
    notes: tuple[str, ...] = ()  # about the file read (a recorded column it lacks that the release never uses)
    unseen: tuple[UnseenValues, ...] = ()  # values the recipe's hierarchies did not list, and where they went
    # the CSV written in the source's order, as the in-memory release writes it (its bytes); False for
    # Parquet, no file, or a table the engine cannot number (its rows then in the engine's order)
    in_source_order: bool = False


def apply_recipe(
    recipe: Recipe,
    source: str | os.PathLike | EngineTable,
    *,
    out: str | os.PathLike | None = None,
    engine: Engine | str = "duckdb",
    name: str | None = None,
    unseen: str = "refuse",
    type_written: bool = False,
    suppressed: Any = None,
) -> EngineReplay:
    """Re-apply ``recipe`` to the files at ``source`` (a path, or a table already scanned
    with ``anonlib.engine.scan``) on ``engine`` and, with ``out``, write the released
    table there (``.parquet``: Parquet, a folder of parts on Spark; else one CSV file) and
    measure the target on what was written (a CSV: the in-memory release's bytes, its records in
    the source's order). Values a generalization's hierarchy does not list
    are placed as in memory (``anonlib.workflow.unseen``: numbers by the bands, new categories
    refused or, with ``unseen="top"``, at the top), from their distinct values and records.
    ``type_written``: every text column of the written file typed in one query as it is read back
    (for a caller measuring all of them: ``engine_search.anonymize``), not those the check reads.
    ``suppressed``: the owners (a table of ``OWNER``, their values in ``source``) a search on the
    engine found that the recipe's step suppressing people (households) suppresses at its node
    (``engine_people.PeopleSearch.failing``): removed by that step instead of being counted again;
    the release is then measured as written, as always."""
    if isinstance(source, EngineTable):
        engine = source.engine
    elif isinstance(engine, str):
        engine = shared(engine)
    require_queries(recipe, engine.name)
    reading = recipe.source.reading
    if reading.header is False:
        raise DataFileError(
            "The recipe's file had no header row; the engines read files whose first row names the columns."
        )
    if isinstance(source, EngineTable):
        table = source
    else:
        table = scan(source, engine=engine, delimiter=reading.delimiter, encoding=reading.encoding, name=name)
    wanted = [c.name for c in recipe.source.columns]
    needed = set(recipe.needed_columns)  # an ignored column no step uses may be absent (Source.needed)
    lacking = [c for c in wanted if c in needed and c not in table.columns]
    if lacking:
        raise ColumnError(
            f"This file lacks {join_names(lacking)}, which the recipe needs: it was made for a file with the "
            f"columns {join_names(wanted, 12)}."
        )
    present = [c for c in recipe.source.columns if c.name in table.columns]
    absent = [c for c in wanted if c not in table.columns]
    notes = (absent_note(absent, "This file"),) if absent else ()
    roles = {c.name: Role(c.role) for c in present}
    table.decide_kinds([c.name for c in present])  # one scan types every text column (not one per column)
    capped = any(isinstance(s.step, CapRecordsStep) for s in recipe.steps)
    # a CSV is written in the source's order: each record carries its position from the scan (ROW, pruned
    # from every query but the write and a materialized step's table)
    numbered = table.numbered() if out is not None and not _is_parquet(Path(out)) else None
    raw = table.raw if numbered is None else numbered
    raw = with_file_order(raw) if capped else raw  # numbered on the scan itself
    typed = {c.name: _typed(table.value(c.name, raw), c.type) for c in present}
    rows = raw.select(
        **typed, **({ORDER: raw[ORDER]} if capped else {}), **({ROW: raw[ROW]} if numbered is not None else {})
    )
    loaded = _table(rows, engine, roles, recipe.source.missing)
    # the file's records when already counted on this table (``engine_search``'s recipe states them)
    totals = table._pairs.get(("totals", loaded.count)) if loaded.count == table.count else None
    known = totals["records"] if totals is not None else None
    rows = loaded.assessed_rows(recipe.target.sensitive, rows)  # as a working copy starts (WorkingCopy.base)
    assessed = rows
    left_out = 0
    caps = [s.step for s in recipe.steps if isinstance(s.step, CapRecordsStep)]
    if caps:  # those a records-per-person cap left out by decision are not suppressed records, in any unit
        left_out = capped_counts(min(caps, key=lambda c: c.records), assessed, engine)[0]
    placed: list[UnseenValues] = []
    unit = recipe.target.unit_column
    if suppressed is not None and unit is not None:  # each record's owner as in the file, beside the steps'
        rows = rows.mutate(**{SEARCHED: rows[unit]})
    else:
        suppressed = None
    # a step materializing the records (a date shift, a cap) computes ROW in the files' order
    with ordered_writes(engine) if numbered is not None else nullcontext():
        rows = replay_steps([s.step for s in recipe.steps], rows, engine, loaded.count, unseen, placed, suppressed)
    if SEARCHED in rows.columns:
        rows = rows.drop(SEARCHED)
    if capped:
        rows = rows.drop(ORDER)
    final = _table(rows, engine, roles, recipe.source.missing)
    pseudonyms = pseudonymized_columns(s.step for s in recipe.steps)
    released = _release(final, recipe.columns, recipe.target.sensitive, pseudonyms)
    count = final.count
    ordered = released
    if ROW in released.columns:
        released = released.drop(ROW)
    query = from_ibis(released, name="release", roles={c: final.roles.get(c, Role.IGNORE) for c in released.columns})
    query = query.with_missing(final.missing)
    if out is None:
        check = _check(recipe.target, loaded, final, left_out, known)
        records = int(engine.value(released[count].sum() if count else released.count()) or 0)
        return EngineReplay(
            check=check,
            released_records=records,
            out=None,
            engine=engine.name,
            released=query,
            left_out=left_out,
            notes=notes,
            unseen=tuple(placed),
        )
    path, renamed, in_order = _write(engine, ordered, Path(out))
    written = _read_back(engine, path, final, renamed)
    if type_written:
        written.decide_kinds(list(written.columns))
    judged = list(final.quasi_identifiers) + [s for s in recipe.target.sensitive if s not in final.quasi_identifiers]
    target = recipe.target
    owners = [c for c in (target.person, target.household) if c is not None]
    if any(c not in written.columns for c in owners):  # withheld: its records are counted, as ``verify`` does
        target = replace(target, person=None, household=None, linked=())
    found: dict = {}
    if all(c in written.columns for c in judged):  # what a reader of the file sees
        check = _check(target, loaded, written, left_out, known, found)
        measured_on = "written file"
    else:  # the release leaves out a column the target judges: the table before the choice of columns
        check = _check(recipe.target, loaded, final, left_out, known)
        measured_on = "query"
    count = written.count
    records = found.get("records")  # the check's summary of the written file holds every record
    if records is None:
        records = int(engine.value(written.value(count).sum() if count else written.raw.count()) or 0)
    return EngineReplay(
        check=check,
        released_records=records,
        out=path,
        engine=engine.name,
        written=written,
        measured_on=measured_on,
        released=query,
        left_out=left_out,
        notes=notes,
        unseen=tuple(placed),
        in_source_order=in_order,
    )


def replay_steps(steps, rows, engine: Engine, count: str | None, unseen: str = "refuse", placed=None, suppressed=None):
    """``rows`` (an Ibis table of typed records, numbered in the file's order when a step caps
    records) with ``steps`` applied in turn on the engine; a step that does not fit is named
    with its number. Values a hierarchy does not list are appended to ``placed``. ``suppressed``:
    the owners a search decided a step suppressing people suppresses (``apply_recipe``), matched
    on the records' ``SEARCHED`` column."""
    placed = [] if placed is None else placed
    for i, given in enumerate(steps, start=1):
        try:
            step = given
            values = None
            if not isinstance(step, (SuppressionStep, ShiftDatesStep, CapRecordsStep)):
                # a value step's columns: their distinct values and records, in one query for the step (its
                # hierarchies' or bands' cover and its mapping both read them)
                values = _records_by_values(rows, [c for c in step.columns if c in rows.columns], engine, count)
            if isinstance(step, GeneralizationStep):
                step = _covered(step, rows, engine, count, unseen, placed, values)
            elif isinstance(step, BandsStep) and step.column in rows.columns:  # numbers past the bands' range
                (step,), seen = cover_steps([step], values[step.column], count=WEIGHT)
                placed.extend(seen)
            if isinstance(step, SuppressionStep):
                rows = _suppress(step, rows, engine, suppressed)
            elif isinstance(step, ShiftDatesStep):
                rows = shift_rows(step, rows, engine)
            elif isinstance(step, CapRecordsStep):
                rows = cap_rows(step, rows, engine)
            else:
                rows = _map_values(step, rows, engine, values)
        except RecipeError:
            raise
        except EngineError as err:  # the engine failed (memory, a worker): not the file's fault
            raise EngineError(f"Step {i} ({given.describe()}) stopped: {err}") from None
        except AnonlibError as err:
            raise type(err)(f"Step {i} ({given.describe()}) does not fit this file: {err}") from None
    return rows


def _covered(
    step: GeneralizationStep,
    rows,
    engine: Engine,
    count: str | None,
    unseen: str,
    placed: list[UnseenValues],
    known: dict[str, pd.DataFrame] | None = None,
) -> GeneralizationStep:
    """``step`` with its hierarchies covering the column values ``rows`` hold (their distinct
    values and records come back, or are ``known``: ``_records_by_values``), what it placed
    appended to ``placed``."""
    hierarchies, changed = dict(step.hierarchies), False
    for attribute, level in step.levels:
        if level == 0 or attribute not in rows.columns:
            continue
        values = known[attribute] if known is not None else _records_by_value(rows, attribute, engine, count)
        table, seen = cover_hierarchy(
            step.hierarchy(attribute), values[attribute], attribute, unseen=unseen, counts=values[WEIGHT].to_numpy()
        )
        if seen:
            placed.extend(seen)
            hierarchies[attribute], changed = table, True
    return replace(step, hierarchies=tuple(hierarchies.items())) if changed else step


def _records_by_value(rows, column: str, engine: Engine, count: str | None) -> pd.DataFrame:
    """The distinct values of ``column`` (missing left out) with their records in ``WEIGHT``."""
    weight = rows[count].sum() if count else rows.count()
    values = to_pandas(engine.run(rows.group_by(column).aggregate(**{WEIGHT: weight.cast("int64")})))
    return values[values[column].notna()].reset_index(drop=True)


def _records_by_values(rows, columns: Sequence[str], engine: Engine, count: str | None) -> dict[str, pd.DataFrame]:
    """``_records_by_value`` of each of ``columns``, from one query (the columns' group-bys, tagged
    and stacked: an engine runs one job where it ran one per column; Spark's cost is per query)."""
    import ibis

    columns = list(dict.fromkeys(columns))
    if len(columns) < 2:
        return {c: _records_by_value(rows, c, engine, count) for c in columns}
    weight = rows[count].sum() if count else rows.count()
    tag = "anonlib_column"
    parts = []
    for j, column in enumerate(columns):
        grouped = rows.group_by(column).aggregate(**{WEIGHT: weight.cast("int64")})
        cells = {c: grouped[c] if c == column else ibis.null().cast(rows[c].type()).name(c) for c in columns}
        parts.append(grouped.select(**{tag: ibis.literal(j, "int64")}, **cells, **{WEIGHT: grouped[WEIGHT]}))
    found = to_pandas(engine.run(ibis.union(*parts, distinct=False)))
    out = {}
    for j, column in enumerate(columns):
        values = found.loc[(found[tag] == j).to_numpy(), [column, WEIGHT]]
        out[column] = values[values[column].notna()].reset_index(drop=True)
    return out


def _read_back(engine: Engine, path: Path, final: EngineTable, renamed: dict[str, str]) -> EngineTable:
    """The file the engine wrote, read as anonlib reads a file, with the final table's roles
    (column names the writer guarded against formulas carry their own names again)."""
    table = scan(path, engine=engine, name=path.name)
    count = final.count
    if count in table.columns and not table.raw[count].type().is_numeric() and not engine.value(table.raw.count()):
        # a CSV with a header and no record (every record suppressed) types every column as text
        table = replace(table, raw=table.raw.mutate(**{count: table.raw[count].cast("int64")}))
    if renamed:
        table = replace(
            table, raw=table.raw.rename({original: guarded for guarded, original in renamed.items()}), roles={}
        )
    roles = {c: final.roles.get(c, Role.IGNORE) for c in table.columns}
    return table.with_roles(roles).with_missing(final.missing)


def require_queries(recipe: Recipe, engine: str = "duckdb") -> None:
    """A sentence naming the first step that needs all records at once (local suppression,
    microaggregation), which an engine does not run; nothing when every step is a query.

    >>> from anonlib.workflow.local_steps import LocalSuppressionStep
    >>> from anonlib.workflow.recipe import RecipeStep
    >>> require_queries(Recipe(None, None, (RecipeStep(LocalSuppressionStep(("age",), 5)),), ()))
    Traceback (most recent call last):
    ...
    anonlib.core.errors.ParameterError: Step 1 (Local suppression to k = 5: quasi-identifier cells blanked as * (age)) is recomputed from all records together, which the duckdb engine does not do; apply this recipe without --engine.
    """
    for i, s in enumerate(recipe.steps, start=1):
        if isinstance(s.step, (ShiftDatesStep, CapRecordsStep)):  # queries on the engine (engine_health)
            refuse_on_engine(s.step, engine)
            continue
        if getattr(s.step, "whole_table", False):
            raise ParameterError(
                f"Step {i} ({s.step.describe()}) is recomputed from all records together, which the {engine} "
                "engine does not do; apply this recipe without --engine."
            )


def _typed(column, kind: str):
    """A column given the recipe's recorded type (integer, number, category)."""
    name = column.get_name()
    dtype = column.type()
    if kind == "category":
        return column if dtype.is_string() else column.cast("string").name(name)
    if kind == "integer":
        return column if dtype.is_integer() else column.cast("int64").name(name)
    return column if dtype.is_floating() else column.cast("float64").name(name)


def _table(rows, engine: Engine, roles, missing: str) -> EngineTable:
    table = from_ibis(rows, name="recipe", roles={c: roles.get(c, Role.IGNORE) for c in rows.columns})
    return table.with_missing(missing)


def _map_values(step, rows, engine: Engine, known: dict[str, pd.DataFrame] | None = None):
    """Each column of a value-replacing step replaced by the step's value for each of its
    distinct values (the steps map every column on its own), by a join per column. The distinct
    values come back in one query (or are ``known``: ``_records_by_values`` of ``rows``)."""
    missing = [c for c in step.columns if c not in rows.columns]
    if missing:
        raise ColumnError(f"These columns do not exist in the data: {join_names(missing)}.")
    known = known if known is not None else _records_by_values(rows, list(step.columns), engine, None)
    distinct = {c: known[c][c].reset_index(drop=True) for c in step.columns}
    n = max(len(values) for values in distinct.values())
    # one probe table: each column its distinct values, padded with its first one; and one
    # row of missing values, mapped on its own (a hierarchy may send them to its top, as in
    # memory; a step reading a column's type from its values sees the values alone)
    probe = pd.DataFrame(
        {
            c: pd.concat(
                [values, pd.Series([values.iloc[0] if len(values) else None] * (n - len(values)), dtype=values.dtype)],
                ignore_index=True,
            )
            for c, values in distinct.items()
        }
    )
    mapped = step.apply(probe) if n else probe
    missing_row = step.apply(pd.DataFrame({c: _missing_cell(values) for c, values in distinct.items()}))
    for c, values in distinct.items():
        missing_label = missing_row[c].iloc[0]
        if values.empty and pd.isna(missing_label):
            continue
        labels = mapped[c].iloc[: len(values)]
        keys = values
        if not pd.isna(missing_label):  # the records' missing values take the step's label for them
            keys = pd.concat([values, _missing_cell(values)], ignore_index=True)
            labels = pd.concat([labels, pd.Series([missing_label])], ignore_index=True)
        mapping = pd.DataFrame(
            {KEY: keys, LABEL: pd.array(labels.astype(object).where(labels.notna(), None), dtype="string")}
        )
        lookup = from_frame(mapping, engine).raw
        same = rows[c].identical_to(lookup[KEY]) if len(keys) > len(values) else rows[c] == lookup[KEY]
        joined = rows.left_join(lookup, same)
        rows = joined.select(*[joined[LABEL].name(x) if x == c else joined[x] for x in rows.columns])
    return rows


def _missing_cell(values: pd.Series) -> pd.Series:
    """One missing value of the column's type (integers become nullable, as in memory)."""
    dtype = "Int64" if values.dtype.kind in "iu" else values.dtype
    return pd.Series(pd.array([None], dtype=dtype))


def _suppress(step: SuppressionStep, rows, engine: Engine, suppressed=None):
    """The records of classes failing k or a requirement removed (as ``SuppressionStep.kept``:
    with ``missing="drop"`` only the records complete on the step's judged columns are judged);
    those of the owners ``suppressed`` when a search decided them (``apply_recipe``)."""
    qis = list(step.quasi_identifiers)
    sensitive = [r.sensitive for r in step.requirements if r.sensitive not in qis]
    columns = qis + list(dict.fromkeys(sensitive))
    complete = list(step.judged_columns)
    missing = [c for c in complete + ([step.count] if step.count else []) if c not in rows.columns]
    if missing:
        raise ColumnError(f"These columns do not exist in the data: {join_names(missing)}.")
    judged = _table(rows, engine, {c: Role.IGNORE for c in rows.columns}, step.missing)
    if step.person or step.household:
        return _suppress_owners(step, rows, judged, engine, columns, complete, suppressed)
    cells, _ = summary_frame(judged, columns, count=step.count, complete=complete)
    if cells.empty:
        return rows
    decided = acceptance(cells, qis, k=step.k, requirements=step.requirements, count=WEIGHT)
    failing = cells.loc[~decided.kept, qis].drop_duplicates().reset_index(drop=True)
    if failing.empty:
        return rows
    failing[FAILING] = True
    classes = from_frame(failing.rename(columns={c: f"{KEY}_{j}" for j, c in enumerate(qis)}), engine).raw
    condition = [rows[c].identical_to(classes[f"{KEY}_{j}"]) for j, c in enumerate(qis)]
    joined = rows.left_join(classes, condition)
    kept = joined[FAILING].isnull()
    if step.missing == "drop":  # a record the step does not judge stays
        kept = kept | ~judged.complete(complete, joined)
    return joined.filter(kept).select(*rows.columns)


def _suppress_owners(
    step: SuppressionStep, rows, judged: EngineTable, engine: Engine, columns, complete, suppressed=None
):
    """Whole people (households) suppressed: each person's (household's) rows on the judged columns
    come back (one row per owner and distinct row, with its records), ``SuppressionStep.kept``
    decides in memory as it does on the records, and the engine drops every judged record of the
    owners failing with a join on their column (the household when the step suppresses households).
    A step judged with a project's earlier deliveries holds them (``SuppressionStep.earlier``: per
    person and released class, their records) and judges each person's rows with theirs. The
    owners a search decided (``suppressed``, matched on their values as in the file, ``SEARCHED``)
    are removed as they are: the search counted them at this node."""
    owners = [c for c in (step.household, step.person) if c]
    lacking = [c for c in owners if c not in rows.columns]
    if lacking:
        raise ColumnError(f"These columns do not exist in the data: {join_names(lacking)}.")
    unit = owners[0]  # the household's members suppressed together, else the person's records
    if suppressed is not None and SEARCHED in rows.columns:
        return _without(rows, suppressed, SEARCHED, step, judged, complete)
    if _owners_on_engine(step, judged, columns, complete):
        failing = failing_owners(
            judged, columns, unit, step.k, histories=bool(step.linked), power=step.power
        )  # fmt: skip
        # the failing people stay on the engine (a small table, gone with the connection): the rows are lazy
        return _without(rows, failing, unit, step, judged, complete)
    cells, _ = summary_frame(judged, [*columns, *owners], count=step.count, complete=complete)
    if cells.empty:
        return rows
    kept = replace(step, count=WEIGHT).kept(cells)
    failing = pd.DataFrame({OWNER: pd.unique(cells.loc[~kept, unit])})
    if failing.empty:
        return rows
    return _without(rows, from_frame(failing, engine).raw, unit, step, judged, complete)


def _without(rows, whose, column: str, step: SuppressionStep, judged: EngineTable, complete):
    """``rows`` less the records whose ``column`` holds one of the owners ``whose`` (a table of
    ``OWNER``); with ``missing="drop"`` a record the step does not judge stays."""
    import ibis

    marked = whose.select(**{f"{KEY}_owner": whose[OWNER]}, **{FAILING: ibis.literal(True)})
    joined = rows.left_join(marked, rows[column] == marked[f"{KEY}_owner"])
    out = joined[FAILING].isnull()
    if step.missing == "drop":
        out = out | ~judged.complete(complete, joined)
    return joined.filter(out).select(*rows.columns)


def _owners_on_engine(
    step: SuppressionStep, judged: EngineTable, columns, complete, records: int | None = None
) -> bool:
    """Whether the engine decides which people the step suppresses (``owners_out.failing_owners``)
    instead of bringing each person's rows back: k in people or on histories of the person column
    (whole, or any m of their records up to ``MAX_POWER``), no privacy model, no earlier delivery, every judged column grouped on,
    and more (person, row) pairs than ``MAX_OWNER_ROWS`` (not counted when ``records``, at least the
    judged records, is no more: each pair holds a record or more)."""
    if step.requirements or step.earlier is not None or step.household is not None or step.person is None:
        return False
    if step.linked and (tuple(step.linked) != (step.person,) or (step.power or 0) > MAX_POWER):
        return False
    if step.missing == "drop" and not set(complete) <= set(columns):
        return False
    if records is not None and records <= MAX_OWNER_ROWS:
        return False  # ``records`` bounds the judged records, and each pair holds one at least: the pairs not built
    pairs, _ = owner_pairs(judged, columns, step.person)
    return int(judged.engine.value(pairs.count()) or 0) > MAX_OWNER_ROWS


def _check(
    target,
    loaded: EngineTable,
    final: EngineTable,
    left_out: int = 0,
    known: int | None = None,
    totals: dict | None = None,
) -> TargetCheck:
    """``ReleaseTarget.check`` on the final table's per-combination summary, weighted; ``left_out``
    records of the loaded file (a records-per-person cap's) are not among those it judges; ``known``:
    the loaded file's records when already counted (every record assessed), else counted here.
    ``totals["records"]`` is set to the final table's records when its summary tells them (every
    record in it, or none left out but whole rows without a count column)."""
    qis = list(final.quasi_identifiers)
    lacking = [s for s in target.sensitive if s not in final.columns]
    if lacking:
        raise ParameterError(
            f"The release target has a privacy model on {join_names(lacking)}, which is not a column of the data."
        )
    columns = qis + [s for s in target.sensitive if s not in qis]
    owners = [c for c in (target.person, target.household) if c is not None]
    loaded_records, persons = _loaded_counts(loaded, target.sensitive, target.unit_column, known)
    loaded_records -= left_out
    judged = final.with_roles({c: Role.IGNORE for c in owners}) if owners else final
    met = _met_on_engine(target, loaded, judged, columns, loaded_records, persons)
    if met is not None:
        return met
    cells, dropped = summary_frame(judged, columns + owners, complete=final.assessed_columns(target.sensitive))
    if totals is not None and (not dropped or judged.count is None):  # rows left out are records without a count
        totals["records"] = int(cells[WEIGHT].sum()) + dropped
    roles = {c: Role.QUASI_IDENTIFIER for c in qis}
    roles.update({s: Role.SENSITIVE for s in target.sensitive if s not in qis})
    roles.update({c: Role.PERSON if c == target.person else Role.HOUSEHOLD for c in owners})
    roles[WEIGHT] = Role.COUNT
    summary = Dataset(name="summary", frame=cells, roles=roles, missing=final.missing)
    return target.check(summary, loaded_records=loaded_records, loaded_persons=persons)


def _met_on_engine(
    target, loaded: EngineTable, judged: EngineTable, columns, loaded_records: int, loaded_persons: int | None
) -> TargetCheck | None:
    """``_check`` counted by the engine without bringing each person's rows back, for a target it
    decides that way (``_owners_on_engine``'s) past ``MAX_OWNER_ROWS`` pairs, when nothing fails (the
    release of a search): the people failing on the table as written are counted (none), and the
    check says so. None otherwise: a failing table is described in full by the in-memory check."""
    person = target.person
    step = SuppressionStep(
        tuple(columns), target.k, target.requirements, judged.count, judged.missing, (), person,
        target.household, tuple(target.linked), target.power, 0, target.earlier,
    )  # fmt: skip
    complete = judged.assessed_columns(target.sensitive)
    if not target.unit_column or not _owners_on_engine(step, judged, columns, complete, loaded_records):
        return None
    failing = failing_owners(judged, columns, person, target.k, histories=bool(target.linked), power=target.power)
    try:
        if int(judged.engine.value(failing.count()) or 0):
            return None
    finally:
        release(judged, failing)
    pairs, _ = owner_pairs(judged, columns, person)
    records = int(judged.engine.value(pairs[WEIGHT].sum()) or 0)
    persons = owners_in(judged, columns, person)
    return TargetCheck(
        target=target,
        records=records,
        loaded_records=loaded_records,
        failing_records=0,
        failing_classes=0,
        failing=((f"k = {target.k}", 0),),
        examples=(),
        persons=persons,
        loaded_persons=loaded_persons,
        failing_persons=0,
        persons_in_failing=0,
        records_in_failing=0,
    )


def _loaded_counts(
    loaded: EngineTable, extra: Sequence[str] = (), unit: str | None = None, known: int | None = None
) -> tuple[int, int | None]:
    """The loaded file's assessed records (``recipe.analysed_records``, ``EngineTable.assessed``
    with the models' columns ``extra``) and, given the ``unit`` column (person, household), their
    people (households: the base of the share suppressed; else None), in one query. A count or a
    filter, not a group-by (on Parquet without a filter and a unit, the footers answer). ``known``:
    the file's records, already counted (taken when every record is assessed and no unit asked)."""
    rows = loaded.assessed_rows(extra)
    if known is not None and unit is None and rows is loaded.raw:  # every record assessed: the file's records
        return known, None
    count = loaded.count
    records = rows[count].sum() if count else rows.count()
    if unit is None:
        return int(loaded.engine.value(records) or 0), None
    found = loaded.engine.run(rows.aggregate(records=records, persons=rows[unit].nunique())).to_pylist()[0]
    return int(found["records"] or 0), int(found["persons"] or 0)


def _release(final: EngineTable, columns: Sequence[str], extra: Sequence[str] = (), pseudonyms: Sequence[str] = ()):
    """The released table (``anonlib.workflow.release.release_table`` on the engine): the
    assessed records (``EngineTable.assessed`` with the models' columns ``extra``); the
    ``pseudonyms`` columns (a person column as its keyed pseudonym) released as such; with the
    records' positions (``ROW``) kept beside them."""
    rows = final.assessed_rows(extra)
    count = final.count
    chosen = list(release_columns(columns, list(rows.columns), final.roles, count, pseudonymized=pseudonyms))
    values = [c for c in chosen if c != count]
    numbered = ROW in rows.columns
    if count:  # equal rows merged, at their first record when the records are numbered (as in memory)
        first = {ROW: rows[ROW].min()} if numbered else {}
        rows = rows.group_by(values).aggregate(**{count: rows[count].sum().cast("int64")}, **first)
    return rows.select(*[_safe(rows[c]) for c in chosen], *([ROW] if numbered else []))


def _safe(column):
    """Text starting with = + - @ TAB or CR gets a leading apostrophe (``to_safe_csv``)."""
    if not column.type().is_string():
        return column
    name = column.get_name()
    risky = column.substr(0, 1).isin(list(CSV_INJECTION_PREFIXES))
    return risky.ifelse("'" + column, column).name(name)


def _is_parquet(out: Path) -> bool:
    return out.name.lower().endswith(PARQUET)


def _write(engine: Engine, table, out: Path) -> tuple[Path, dict[str, str], bool]:
    """The released table written by the engine (Parquet by suffix, else one CSV file as the
    in-memory release writes it, in the order of ``ROW`` when the table has it), the column
    names guarded against formulas (written name -> name), and whether the CSV is in order."""
    risky = [c for c in table.columns if str(c).startswith(CSV_INJECTION_PREFIXES)]
    renamed = {"'" + c: c for c in risky}
    if out.exists() and out.is_dir():
        shutil.rmtree(out)
    if not _is_parquet(out):  # the header's names are guarded by the writer, as to_safe_csv does
        return out, renamed, write_csv(engine, table, out, order=ROW)
    if ROW in table.columns:
        table = table.drop(ROW)
    if risky:
        table = table.rename(renamed)
    with errors(engine):
        if engine.name == "spark":
            engine.backend._session.sql(engine.backend.compile(table)).write.mode("overwrite").parquet(str(out))
        else:
            engine.backend.to_parquet(table, str(out))
    return out, renamed, False
