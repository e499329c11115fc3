"""The search for a release (``anonymize``) on a data engine, without the records in pandas.

``anonymize(table, shield, k, ...)`` does on DuckDB or Spark what the command
line's in-memory ``anonymize`` does, with the same answer:

1. **The class table.** The engine groups the records on the columns the release
   keeps (the shield, the other quasi-identifiers and the sensitive columns, with
   the sensitive column of every privacy model) and counts them (``COUNT(*)``, or
   the sum of the count column); with missing values dropped, only the assessed
   records (``EngineTable.assessed`` under the release's roles: a value in every
   shield column, sensitive column and model column; a blank in another released
   column is a value of its own). Only that table comes back: one row per distinct
   combination with its records (Adult: 19,502 rows, however often its records
   are repeated). Counted in people, histories or households, the person (and
   household) column is grouped on too: one row per owner and distinct row, so the
   search counts owners and suppresses them whole as in memory. More than
   ``MAX_CLASSES`` rows is refused with a sentence.
2. **Hierarchies.** Given ones are checked against every value of the file; default
   ones are built from the distinct values and their records
   (``default_hierarchy(..., counts=...)``: the frequency order is the records').
3. **The search** (``anonlib.transformations.generalization.search``, so ``anonlib.transformations.generalization`` for the
   default method) runs on the class table with its record counts as ``count=``:
   the same lattice, the same pruning and the same node as on the records,
   because every count it makes is a sum of records per class.
4. **The recipe** is the in-memory command's: the search's generalization, then
   the suppression of the classes still failing the target, if any.
5. **The release** is written by the engine, re-applying the recipe with
   ``anonlib.workflow.engine_replay.apply_recipe``; the target (k, privacy models,
   records suppressed, met or not) is measured on the file as written and read back.
6. **k, distinct rows and the utility** are measured on the written file too: its
   distinct rows come back (never more than the class table), each class of the
   original is matched with the written row it became (none: suppressed), and
   ``anonlib.measures.utility`` measures the loss on that pairing, weighted. A written file
   that is not what the recipe makes of the class table is an ``EngineError``.

The records never leave the engine; what does is the class table, the distinct
values of the shield's columns, and the written file's distinct rows.

Example:
    >>> import tempfile, pandas as pd
    >>> from pathlib import Path
    >>> from anonlib.engine import connect, scan
    >>> folder = Path(tempfile.mkdtemp())
    >>> pd.DataFrame({"age": [31, 35, 38, 44, 41, 47], "sex": list("fffmmm")}).to_parquet(folder / "d.parquet")
    >>> h = pd.DataFrame([[str(a), f"{a // 10}0-{a // 10}9", "*"] for a in (31, 35, 38, 41, 44, 47)])
    >>> with connect("duckdb") as duck:
    ...     done = anonymize(scan(folder / "d.parquet", engine=duck), ["age"], target=ReleaseTarget(3), hierarchies={"age": h},
    ...                      out=folder / "out.parquet")
    >>> done.levels, done.replay.check.met, done.k, sorted(pd.read_parquet(folder / "out.parquet")["age"])
    ({'age': 1}, True, 3, ['30-39', '30-39', '30-39', '40-49', '40-49', '40-49'])
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ..core.dataset import Dataset, Role
from ..core.default_hierarchy import default_hierarchy
from ..core.errors import EngineError, NoSolutionError, ParameterError, ProblemTooLargeError, join_names
from ..core.hierarchy import validate_hierarchy, value_key
from ..core.loading import CSV_INJECTION_PREFIXES
from ..engine import WEIGHT, EngineTable, from_ibis, summary_frame, to_pandas
from ..engine.owners import MAX_POWER, owner_pairs, release, require_owners, sharing
from ..engine.owners_out import owner_rows
from ..measures.models import ModelRequirement
from ..measures.target import ReleaseTarget, unit_k
from ..measures.utility import measure_value
from ..transformations.generalization import SearchResult, release_search
from . import engine_people
from .engine_health import ORDER, capped_counts, with_file_order
from .engine_replay import EngineReplay, apply_recipe, replay_steps
from .health_steps import CapRecordsStep, ShiftDatesStep
from .kept import KeptRisk, kept_risk, unchanged_kept
from .power_choice import weaker_power_sentence
from .recipe import Reading, Recipe, RecipeStep, Source, SourceColumn
from .release import pseudonymized_columns, release_columns
from .steps import GeneralizationStep, Step, SuppressionStep
from .unseen import UnseenValues, cover_hierarchy

MAX_CLASSES = 5_000_000  # rows of the class table brought into memory for the search
PAGE = "command line (anonymize)"
_MISSING_KEY = "\x00missing"
_SEPARATOR = "\x1f"

Notify = Callable[[str], None]


@dataclass(frozen=True)
class EngineAnonymization:
    """What ``anonymize`` on an engine found and released.

    ``search`` is the search on the class table (levels, ``optimal``, ``checked``,
    ``lattice_size``, ``bound``, ``seconds``); ``replay`` the recipe re-applied by the
    engine, its ``check`` measured on the written file; ``k``, ``rows`` (distinct
    rows) and ``utility`` are measured on the written file as well (on the release's
    query when nothing was written). ``rows_searched`` is the number of rows of the class
    table that came back, ``dropped`` the rows left out for missing values.
    """

    search: SearchResult
    recipe: Recipe
    replay: EngineReplay
    hierarchies: dict[str, pd.DataFrame]
    rows_searched: int
    rows: int
    k: int
    utility: float
    dropped: int
    seconds: float
    people: tuple[int, int] | None = None  # counted in people (households): those searched and released
    kept: KeptRisk | None = None  # the records unique once the kept columns are added, as written
    unseen: tuple[UnseenValues, ...] = ()  # values a given hierarchy did not list, and where they went
    original_rows: int | None = None  # the searched records' distinct rows over the written columns
    capped: tuple[int, int, int] | None = None  # a records-per-person cap: records and people left out, the cap

    @property
    def levels(self) -> dict[str, int]:
        return dict(self.search.levels)


def release_columns_of(
    table: EngineTable, shield: Sequence[str], requirements: Sequence[ModelRequirement] = ()
) -> list[str]:
    """The columns a release keeps, as the in-memory command chooses them: the table's
    quasi-identifiers and sensitive columns, the shield and the models' sensitive columns
    (in the table's order; a shield column the table lacks is kept, for its sentence)."""
    modelled = [r.sensitive for r in requirements]
    wanted = set(shield) | set(table.quasi_identifiers + table.sensitive) | set(modelled)
    columns = [c for c in table.columns if c in wanted] + [c for c in shield if c not in table.columns]
    return columns + [c for c in dict.fromkeys(modelled) if c not in columns]


def anonymize(
    table: EngineTable,
    shield: Sequence[str],
    *,
    target: ReleaseTarget,
    hierarchies: Mapping[str, pd.DataFrame] | None = None,
    method: str = "optimal",
    measure: str = "loss",
    time_limit: float | None = None,
    out: str | os.PathLike | None = None,
    columns: Sequence[str] | None = None,
    reading: Reading | None = None,
    notify: Notify | None = None,
    unseen: str = "refuse",
    before: Sequence[Step] = (),
    tree: bool = False,
) -> EngineAnonymization:
    """Search the generalization of ``shield`` that meets the release ``target`` (in its unit:
    records, people, histories or households, the class table then holding each owner's rows)
    on the table's class table, and
    have the engine write the release to ``out`` (``.parquet``: Parquet, else CSV).

    ``hierarchies`` are the given ones (ARX layout; default ones are built for the
    others); ``columns`` the columns the release keeps (default
    ``release_columns_of``); ``notify(sentence)`` hears each phase before it starts.
    Values a given hierarchy does not list are placed as ``anonlib.workflow.unseen`` places
    them (numbers by its bands; categories refused, or at the top with ``unseen="top"``).
    ``before``: steps replacing the person (household) column's values first (its keyed
    pseudonym), applied to the class table here and written by the engine, as in memory.
    ``tree``: the result's tree will be read (``--json``); a search in people then counts its root
    to the last person as it passes it.
    """
    start = time.perf_counter()
    say = notify or (lambda _text: None)
    shield = list(shield)
    # one scan types every text column (the recipe states each column's type): not one query per set of columns
    table.decide_kinds(list(table.columns))
    require_owners(table)  # every record's person and household filled in, as in memory
    owners = _owners(table, target)
    requirements = target.requirements
    columns = list(columns) if columns is not None else release_columns_of(table, shield, requirements)
    table.require(columns)
    count = table.count
    if count in shield:
        raise ParameterError(f"'{count}' is the record-count column; it cannot be a shield attribute.")
    roles = release_roles(table, shield, target)
    assessed = table.with_roles(roles).assessed_columns(target.sensitive)
    capped = prepared = None
    if _counted_per_node(table, shield, target, method, assessed, before):
        return _people_on_engine(
            table, shield, target, dict(hierarchies or {}), measure, time_limit, out, columns, roles, reading, say,
            unseen, before, start, tree,
        )  # fmt: skip
    if any(isinstance(s, (ShiftDatesStep, CapRecordsStep)) for s in before):
        # dates shifted and records capped by the engine, as the recipe's replay does: the class
        # table, the hierarchies and the measures see the records as they are released
        prepared, dropped, capped = _prepared(table.with_roles(roles), before, target)
        frame, _ = _class_table(prepared, columns + owners, count, ())
    else:
        frame, dropped = _class_table(table, columns + owners, count, assessed)
        for step in before:  # the owners' pseudonyms: the search, the recipe and the measures see them, as in memory
            frame = step.apply(frame)
    whose = f" per {'household' if target.unit == 'households' else 'person'}" if owners else ""
    say(
        f"{len(frame):,} distinct rows{whose} of {join_names(columns, 12)} came back "
        f"({int(frame[WEIGHT].sum()):,} records); searching their generalizations in memory."
    )
    # on prepared records (shifted, capped) the hierarchies are built on them, as in memory on the working copy
    on_file = 0 if prepared is not None else dropped
    built, placed = _hierarchies(table, frame, shield, dict(hierarchies or {}), on_file, count, unseen)
    try:
        result = release_search(
            frame, shield, built, method, target=target, count=WEIGHT, measure=measure, time_limit=time_limit
        )
    except ProblemTooLargeError:
        # histories compared in memory on any m records would take too long (at 5·10^6 records of
        # 5·10^5 people, power 2: about 3 minutes against the minute allowed), where the engine,
        # counting each node's people, has its own estimate: as past MAX_CLASSES
        on_any_m = target.unit == "histories" and target.power not in (None, 1)  # what the estimate is of
        counted = engine_people.supported(target, method)  # a person's histories, the optimal search
        if not (on_any_m and counted and not _class_table_may_hold_fewer(table, shield, assessed, before)):
            raise
        say(
            "Comparing the histories in memory would take longer than allowed; the engine counts each "
            "generalization's people instead."
        )
        return _people_on_engine(
            table, shield, target, dict(hierarchies or {}), measure, time_limit, out, columns, roles, reading, say,
            unseen, before, start, tree,
        )  # fmt: skip
    except NoSolutionError as refused:  # as in memory: the strongest weaker power that releases something
        if not target.linkable or target.power == 1:
            raise
        weaker = weaker_power_sentence(frame, shield, built, target, method=method, count=WEIGHT, measure=measure)
        raise NoSolutionError(f"{refused} {weaker}") from None
    recipe = _recipe(table, roles, frame, columns, target, result, built, reading, before)
    say(
        f"levels {', '.join(f'{a} {v}' for a, v in result.levels.items())} chosen; the engine now writes the release "
        "and it is measured as written."
    )
    replay = apply_recipe(recipe, table, out=out, type_written=True)
    recipe = replace(
        recipe,
        released_records=replay.released_records,
        loaded_records=replay.check.loaded_records + replay.left_out,
        capped_records=capped[0] if capped is not None else None,
    )
    rows, smallest, value, released, distinct = _measured(replay, frame, shield, built, recipe, measure, target)
    # what an attacker who knows the kept columns sees, counted on the rows as written (no person column written)
    written = replay.written if replay.written is not None else replay.released
    # the kept columns released as they are (a shifted date is kept by role but released changed)
    kept_columns = [c for c in unchanged_kept(recipe.kept, [s.step for s in recipe.steps]) if c in recipe.columns]
    person = target.person if target.person in recipe.columns else None  # released as its pseudonym
    kept = kept_risk(
        _summary_of(written, distinct, [*shield, *kept_columns, *([person] if person else [])])
        if kept_columns
        else pd.DataFrame(),
        shield,
        kept_columns,
        person=person,
        count=WEIGHT,
    )
    # the distinct rows of the searched records over the written columns (the person's pseudonym included)
    written_columns = [c for c in recipe.columns if c in frame.columns and c != count]
    original_rows = int(len(frame[written_columns].drop_duplicates())) if written_columns else 0
    return EngineAnonymization(
        search=result,
        recipe=recipe,
        replay=replay,
        hierarchies=built,
        rows_searched=len(frame),
        rows=rows,
        k=smallest,
        utility=value,
        dropped=dropped,
        seconds=time.perf_counter() - start,
        people=(int(frame[owners[0]].nunique()), released) if owners else None,
        kept=kept,
        unseen=placed,
        original_rows=original_rows,
        capped=capped,
    )


def _counted_per_node(
    table: EngineTable,
    shield: list[str],
    target: ReleaseTarget,
    method: str,
    assessed: Sequence[str],
    before: Sequence[Step],
) -> bool:
    """Whether the search runs with every node's people counted by the engine
    (``anonlib.workflow.engine_people``): more (person, row) pairs than ``MAX_CLASSES`` (the class
    table, which holds at least as many rows, would not come back), a target it counts that way, no
    record left out for a blank outside the shield, no dates shifted or records capped first (those
    read the class table, which may hold fewer). Past ``MAX_CLASSES`` with a target the engine does not
    count node by node, one sentence at once (before the class table is read)."""
    if target.person is None or target.unit not in ("people", "histories"):
        return False
    if _totals(table)["records"] <= MAX_CLASSES:
        return False  # each pair holds at least one record: no more pairs than records (the pairs not built)
    pairs, _ = owner_pairs(table, shield, target.person)
    many = int(table.engine.value(pairs.count()) or 0)
    if many <= MAX_CLASSES:
        return False
    if _class_table_may_hold_fewer(table, shield, assessed, before):
        return False
    if engine_people.supported(target, method):
        return True
    why = target.describe() if method == "optimal" else f"the {method} method"
    raise ProblemTooLargeError(
        f"The records hold {many:,} distinct (person, row) pairs on {join_names(shield, 12)}, more than the "
        f"{MAX_CLASSES:,} the search brings into memory, and the engine counts the search node by node only "
        f"for k in people or over each person's history (--power all, or 1 to {MAX_POWER}), with the optimal "
        "method, no "
        f"privacy model and no earlier delivery, not with {why}. Choose such a target, or coarsen a column with "
        "many values first."
    )


def _class_table_may_hold_fewer(
    table: EngineTable, shield: Sequence[str], assessed: Sequence[str], before: Sequence[Step]
) -> bool:
    """Whether the class table may hold fewer records than the node-by-node search counts: records
    left out for a blank outside the shield, or dates shifted or records capped first (the class
    table is then of what is left)."""
    blanks_outside = table.missing == "drop" and not set(assessed) <= set(shield)
    return blanks_outside or any(isinstance(s, (ShiftDatesStep, CapRecordsStep)) for s in before)


def _people_on_engine(
    table, shield, target, given, measure, time_limit, out, columns, roles, reading, say, unseen, before, start, tree
) -> EngineAnonymization:
    """``anonymize`` with the search's nodes counted by the engine in people (``_counted_per_node``):
    the distinct rows of the shield come back instead of the class table; the recipe, the release
    and its measures are the same steps as in memory, counted by the engine."""
    rows = owner_rows(table, shield, target.person)
    _, dropped = owner_pairs(table, shield, target.person)
    say(
        f"{len(rows):,} distinct rows of {join_names(shield, 12)} came back ({int(rows[WEIGHT].sum()):,} records); "
        "searching their generalizations with each one's people counted by the engine."
    )
    built, placed = _hierarchies(table, rows, shield, given, dropped, table.count, unseen)
    others = [c for c in columns if c not in shield and c not in (table.count, target.person, target.household)]
    found = engine_people.people_search(
        table, shield, built, target, measure=measure, time_limit=time_limit, rows=rows, others=others, tree=tree
    )
    result = found.result
    recipe = _recipe(table, roles, rows, columns, target, result, built, reading, before, failing=result.suppressed > 0)
    say(
        f"levels {', '.join(f'{a} {v}' for a, v in result.levels.items())} chosen; the engine now writes the release "
        "and it is measured as written."
    )
    # the search's owners suppressed at its node, removed by the release's step (not counted again)
    replay = apply_recipe(recipe, table, out=out, type_written=True, suppressed=found.failing)
    recipe = replace(recipe, released_records=replay.released_records, loaded_records=replay.check.loaded_records)
    kept_records = int(rows[WEIGHT].sum()) - result.suppressed
    if replay.released_records != kept_records:
        raise EngineError(
            f"The table the engine wrote holds {replay.released_records:,} records where the search kept "
            f"{kept_records:,}; nothing is stated about it. Please report this."
        )
    as_written = replay.written if replay.written is not None else replay.released
    values = [c for c in recipe.columns if c != as_written.count]
    written, _ = as_written.summary(values, complete=as_written.assessed_columns(recipe.target.sensitive))
    kept_columns = [c for c in unchanged_kept(recipe.kept, [s.step for s in recipe.steps]) if c in recipe.columns]
    person = target.person if target.person in recipe.columns else None  # released as its pseudonym
    kept = _kept_risk_on_engine(as_written, shield, kept_columns, person)
    written_columns = [c for c in recipe.columns if c != table.count and c in table.columns]
    original, _ = table.summary(written_columns, complete=table.with_roles(roles).assessed_columns(target.sensitive))
    rows_written = int(table.engine.value(written.count()) or 0)
    if found.failing is not None and replay.written is not None:  # the release's query read it; the file is read now
        release(table, found.failing)
    return EngineAnonymization(
        search=result,
        recipe=recipe,
        replay=replay,
        hierarchies=built,
        rows_searched=len(rows),
        rows=rows_written,
        k=found.k,
        utility=float(result.utility),
        dropped=dropped,
        seconds=time.perf_counter() - start,
        people=(found.persons, found.released_persons),
        kept=kept,
        unseen=placed,
        original_rows=int(table.engine.value(original.count()) or 0),
    )


def _kept_risk_on_engine(release: EngineTable, shield: list[str], kept: list[str], person: str | None) -> KeptRisk:
    """``kept_risk`` counted by the engine on the table as written: the people unique on their history
    over the shield and the kept columns (``person`` released), else the records unique on them."""
    unit = "people" if person else "records"
    if not kept:
        return KeptRisk((), unit, 0, 0)
    columns = [*shield, *(c for c in kept if c not in shield)]
    if person is not None:
        shared = sharing(release, columns, person)
        return KeptRisk(tuple(kept), unit, int(shared[shared[:, 0] == 1, 1].sum()), int(shared[:, 1].sum()))
    summary, _ = release.summary(columns)
    counted = summary.aggregate(
        unique=(summary[WEIGHT] == 1).cast("int64").sum(), total=summary[WEIGHT].sum().cast("int64")
    )
    found = release.engine.run(counted).to_pylist()[0]
    return KeptRisk(tuple(kept), unit, int(found["unique"] or 0), int(found["total"] or 0))


def _prepared(
    table: EngineTable, steps: Sequence[Step], target: ReleaseTarget
) -> tuple[EngineTable, int, tuple[int, int, int] | None]:
    """The assessed records with ``steps`` applied on the engine (pseudonyms, date shifts, a
    records-per-person cap: ``engine_replay.replay_steps``), as an engine table typed as the
    loader types the file; the records left out for missing values; and what a cap left out
    (records, people, the cap; None without one), counted by the engine."""
    cap = next((s for s in steps if isinstance(s, CapRecordsStep)), None)
    raw = with_file_order(table.raw) if cap is not None else table.raw
    table.decide_kinds(list(table.columns))  # one scan types every text column
    typed = {c: table.value(c, raw) for c in table.columns}
    rows = raw.select(**typed, **({ORDER: raw[ORDER]} if cap is not None else {}))
    assessed = table.assessed_columns(target.sensitive)
    dropped = 0
    if table.missing == "drop" and assessed:
        condition = table.complete(assessed, rows)
        dropped = int(table.engine.value(rows.filter(~condition).count()) or 0)
        rows = rows.filter(condition)
    capped = None
    before = list(steps[: steps.index(cap)]) if cap is not None else list(steps)
    rows = replay_steps(before, rows, table.engine, table.count)
    if cap is not None:
        records, people = capped_counts(cap, rows, table.engine)
        capped = (records, people, cap.records)
        rows = replay_steps(list(steps[steps.index(cap) :]), rows, table.engine, table.count).drop(ORDER)
    prepared = from_ibis(rows, name=table.name, roles={c: table.roles.get(c, Role.IGNORE) for c in rows.columns})
    return prepared.with_missing(table.missing), dropped, capped


def _owners(table: EngineTable, target: ReleaseTarget) -> list[str]:
    """The columns the target counts in (each owner's rows searched apart, as in memory): the
    person; or, when a household's members' records link, the household and the person column
    there is (the target names both); checked. None in records."""
    if target.unit_column is None:
        return []
    owners = list(dict.fromkeys([target.unit_column, *([target.person] if target.person is not None else [])]))
    table.require(owners)
    return owners


def _class_table(
    table: EngineTable, columns: list[str], count: str | None, assessed: Sequence[str]
) -> tuple[pd.DataFrame, int]:
    """The assessed records (complete on ``assessed`` when missing values are dropped)
    grouped on ``columns`` with their records in ``WEIGHT`` (at most ``MAX_CLASSES``
    rows), sorted, and the rows the missing policy dropped."""
    summary, dropped = table.summary(columns, count=count, complete=assessed)
    cells = summary.group_by(columns).aggregate(**{WEIGHT: summary[WEIGHT].sum().cast("int64")})
    frame = to_pandas(table.engine.run(cells.limit(MAX_CLASSES + 1)))[[*columns, WEIGHT]]
    if len(frame) > MAX_CLASSES:
        raise ProblemTooLargeError(
            f"The records have more than {MAX_CLASSES:,} distinct combinations of {join_names(columns, 12)}; "
            "the search works on those combinations in memory. Release fewer columns (mark the others as "
            "ignored with --role), or coarsen a column with many values first."
        )
    frame = frame.sort_values(columns, kind="stable", na_position="last").reset_index(drop=True)
    return frame, dropped


def _hierarchies(
    table: EngineTable,
    frame: pd.DataFrame,
    shield: list[str],
    given: dict[str, pd.DataFrame],
    dropped: int,
    count: str | None,
    unseen: str = "refuse",
) -> tuple[dict[str, pd.DataFrame], tuple[UnseenValues, ...]]:
    """Each shield attribute's hierarchy, checked against (or built from) every value of the
    file with its records: from the class table, or, when rows were dropped for missing
    values, from the engine (the dropped rows' values are in the file too); with what a given
    hierarchy did not list and was placed (``cover_hierarchy``)."""
    out, placed = {}, []
    for attribute in shield:
        if dropped:
            values, _ = summary_frame(table.with_missing("category"), [attribute], count=count)
        else:
            values = frame.groupby(attribute, dropna=False, sort=False)[WEIGHT].sum().reset_index()
        values = values.sort_values(attribute, kind="stable", na_position="last")
        if attribute in given:
            covered, seen = cover_hierarchy(
                given[attribute], values[attribute], attribute, unseen=unseen, counts=values[WEIGHT].to_numpy(),
                recipe=False,
            )  # fmt: skip
            placed.extend(seen)
            out[attribute] = validate_hierarchy(covered, values[attribute], attribute)
        else:
            out[attribute] = default_hierarchy(values[attribute], attribute, counts=values[WEIGHT].to_numpy())[1]
    return out, tuple(placed)


def _kind(table: EngineTable, column: str) -> str:
    """The recipe's type of a column (integer, number, category), as the loader would type it."""
    dtype = table.raw[column].type()
    if dtype.is_string():
        kind = table._kind(column) if table.from_files else "text"
        return {"integer": "integer", "number": "number"}.get(kind, "category")
    if dtype.is_boolean():
        return "category"
    if dtype.is_integer():
        return "integer"
    if dtype.is_floating() or dtype.is_decimal():
        return "number"
    return "category"


def release_roles(table, shield: Sequence[str], target: ReleaseTarget) -> dict[str, Role]:
    """The roles of ``anonymize``'s release of ``table`` (a ``Dataset`` or an engine's
    table), in memory and on an engine: the shield the quasi-identifiers (the table's
    others kept: released unchanged, not counted), the models' columns sensitive. A column
    given two roles (the person column or a kept column in the shield, a shield or person
    column as a model's sensitive attribute) is refused in a sentence: one column, one role.

    >>> import pandas as pd
    >>> from anonlib.core.dataset import Dataset
    >>> ds = Dataset.from_frame("v", pd.DataFrame({"mrn": ["1"], "age": [30]}), {"mrn": "person", "age": "quasi-identifier"})
    >>> release_roles(ds, ["age", "mrn"], ReleaseTarget(k=2))
    Traceback (most recent call last):
    ...
    anonlib.core.errors.ParameterError: 'mrn' is the person column and cannot also be a quasi-identifier of the shield: one column has one role; shield other columns or name another person column.
    """
    person = getattr(table, "person", None)
    kept = set(getattr(table, "kept", ()))
    for column in shield:
        if column == person:
            raise ParameterError(
                f"'{column}' is the person column and cannot also be a quasi-identifier of the shield: one column "
                "has one role; shield other columns or name another person column."
            )
        if column in kept:
            raise ParameterError(
                f"'{column}' is kept (released unchanged) and cannot also be a quasi-identifier of the shield: "
                "one column has one role."
            )
    for column in target.sensitive:
        if column in shield or column == person:
            what = "a quasi-identifier of the shield" if column in shield else "the person column"
            raise ParameterError(
                f"'{column}' is {what} and cannot also be the sensitive attribute of a privacy model: one column "
                "has one role."
            )
    roles = dict(table.roles)
    roles.update({c: Role.KEEP for c in table.quasi_identifiers if c not in shield})
    roles.update({c: Role.QUASI_IDENTIFIER for c in shield})
    roles.update({s: Role.SENSITIVE for s in target.sensitive})
    return roles


def _recipe(
    table: EngineTable,
    roles: dict[str, Role],
    frame: pd.DataFrame,
    columns: list[str],
    target: ReleaseTarget,
    result: SearchResult,
    hierarchies: dict[str, pd.DataFrame],
    reading: Reading | None,
    before: Sequence[Step] = (),
    *,
    failing: bool | None = None,
) -> Recipe:
    """The in-memory command's recipe: the release's ``roles`` (``release_roles``), the
    generalization, then the suppression of what still fails (decided on the class table,
    generalized in memory)."""
    table.decide_kinds(list(table.columns))  # one scan types every text column
    known = _totals(table)
    source = Source(
        name=str(table.name),
        fingerprint="",
        rows=known["rows"],
        records=known["records"],
        missing=table.missing,
        columns=tuple(SourceColumn(c, _kind(table, c), roles.get(c, Role.IGNORE).value) for c in table.columns),
        reading=reading or Reading(header=True),
    )
    step = GeneralizationStep.from_search(result, hierarchies)
    steps = [*(RecipeStep(b, PAGE) for b in before), RecipeStep(step, PAGE)]
    if failing is not None:  # judged by the engine's search (``engine_people``): whole people suppressed
        if failing:
            steps.append(RecipeStep(SuppressionStep.from_target(target, table.with_roles(roles)), PAGE))
        return _recipe_of(table, roles, columns, target, source, steps, before)
    judged = Dataset(
        name="classes",
        frame=step.apply(frame),
        roles={
            c: (
                Role.COUNT
                if c == WEIGHT
                else roles.get(c, Role.IGNORE)
                if roles.get(c) in (Role.QUASI_IDENTIFIER, Role.SENSITIVE, Role.PERSON, Role.HOUSEHOLD)
                else Role.IGNORE
            )
            for c in frame.columns
        },
        missing=table.missing,
    )
    # judged in the target's unit: the class table holds the owners it counts in (a household column
    # the target does not count by is left out of it, and of the check)
    counted = replace(
        target,
        person=target.person if target.person in frame.columns else None,
        household=target.household if target.household in frame.columns else None,
    )
    if counted.check(judged).failing_records:
        steps.append(RecipeStep(SuppressionStep.from_target(target, table.with_roles(roles)), PAGE))
    return _recipe_of(table, roles, columns, target, source, steps, before)


def _totals(table: EngineTable) -> dict[str, int]:
    """The table's rows and records (the count column summed, else its rows), from one query made
    once per table (the recipe's source states them; they bound the (person, row) pairs)."""
    key = ("totals", table.count)
    if key not in table._pairs:
        count = table.count
        table.decide_kinds(list(table.columns))  # one scan types every text column
        raw = table.raw
        totals = raw.aggregate(rows=raw.count(), **({"records": table.value(count).sum()} if count else {}))
        known = table.engine.run(totals).to_pylist()[0]
        rows = int(known["rows"])
        table._pairs[key] = {"rows": rows, "records": int(known.get("records") or 0) if count else rows}
    return table._pairs[key]


def _recipe_of(table, roles, columns, target, source, steps, before) -> Recipe:
    """The recipe of ``steps``, releasing ``columns`` (and the pseudonymized ones) in the file's order."""
    chosen = release_columns(columns, list(table.columns), roles, table.count)
    pseudonyms = [c for c in pseudonymized_columns(before) if c not in chosen]
    chosen = tuple(c for c in table.columns if c in set(chosen) | set(pseudonyms))  # in the file's order
    return Recipe(source, target, tuple(steps), chosen)


def _measured(
    replay: EngineReplay,
    frame: pd.DataFrame,
    shield: list[str],
    hierarchies: dict[str, pd.DataFrame],
    recipe: Recipe,
    measure: str,
    target: ReleaseTarget,
) -> tuple[int, int, float, int, pd.DataFrame]:
    """Distinct rows, k, the utility and the people released (0 in records) of the release as written, and
    its distinct rows over the written columns with their records (``WEIGHT``): they come
    back, and each class of the original is paired with the written row it became. Counted in
    people, the suppression (whole people) is re-applied to the class table, which holds each
    person's rows, and k is counted in people there (the person column is not written)."""
    release = replay.written if replay.written is not None else replay.released
    values = [c for c in recipe.columns if c != release.count]
    written, _ = summary_frame(release, values, complete=release.assessed_columns(recipe.target.sensitive))
    if written.empty:
        return 0, 0, 1.0, 0, written
    people = 0
    sizes = written.groupby([written[c] for c in shield], dropna=False)[WEIGHT].sum()
    generalized = next(s.step for s in recipe.steps if isinstance(s.step, GeneralizationStep)).apply(frame)
    original_keys, written_keys = _keys(generalized, values, guard=True), _keys(written, values, guard=False)
    kept = original_keys.isin(set(written_keys)).to_numpy()
    if target.unit != "records":  # whole people suppressed: the rows of the people kept
        kept = np.ones(len(generalized), dtype=bool)
        for step in recipe.steps[1:]:
            if isinstance(step.step, SuppressionStep):
                kept &= replace(step.step, count=WEIGHT).kept(generalized)
        sizes = pd.Series([unit_k(generalized[kept], shield, target, WEIGHT)])
        people = int(generalized.loc[kept, target.unit_column].nunique())
    expected = frame[WEIGHT][kept].groupby(original_keys[kept].to_numpy()).sum().sort_index()
    found = written[WEIGHT].groupby(written_keys.to_numpy()).sum().sort_index()
    if not expected.astype("int64").equals(found.astype("int64")):
        raise EngineError(
            "The table the engine wrote is not the release the recipe makes of these records "
            f"({int(found.sum()):,} records in {len(found):,} rows written, {int(expected.sum()):,} in "
            f"{len(expected):,} expected); nothing is stated about it. Please report this."
        )
    released = generalized.loc[kept, shield]
    value = measure_value(frame, released, shield, hierarchies, measure, count=WEIGHT)
    return len(written), int(sizes.min()), value, people, written


def _summary_of(release: EngineTable, distinct: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """``summary_frame(release, columns)[0]``: from ``distinct`` (the release's distinct rows over
    more columns, as ``_measured`` brought them back) when no row is left out for missing values,
    else from the engine (its rows missing one of ``columns`` left out)."""
    columns = list(dict.fromkeys(columns))
    if release.missing == "drop" or not set(columns) <= set(distinct.columns):
        return summary_frame(release, columns)[0]
    grouped = distinct.groupby(columns, dropna=False, sort=False)[WEIGHT].sum()
    return grouped.reset_index()[[*columns, WEIGHT]]


def _keys(frame: pd.DataFrame, columns: Sequence[str], *, guard: bool) -> pd.Series:
    """One text key per row over ``columns`` (values as hierarchies look them up; missing a
    key of its own). ``guard``: text gets the apostrophe the writer puts before a leading
    = + - @ (the table in memory, compared with the file as written). Each column's
    distinct values are keyed once."""
    key = None
    for c in columns:
        codes, uniques = pd.factorize(frame[c].astype(object), use_na_sentinel=True)
        texts = [
            value_key("'" + v) if guard and isinstance(v, str) and v[:1] in CSV_INJECTION_PREFIXES else value_key(v)
            for v in uniques
        ]
        labels = np.asarray(texts + [_MISSING_KEY], dtype=object)
        part = pd.Series(labels[codes], index=frame.index, dtype=object)  # code -1 (missing): the last label
        key = part if key is None else key + _SEPARATOR + part
    return key
