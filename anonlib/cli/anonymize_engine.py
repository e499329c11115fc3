"""``anonymize --engine duckdb|spark``: the search on the file's class table, the release
written by the engine and every number measured on what it wrote
(``anonlib.workflow.engine_search``).

What needs every record in memory is refused with a sentence: ``--local-suppression``
(cells chosen record by record), a cap drawn at random (``--cap-order random``: every record
ranked by its own keyed hash) and, on Spark, a cap (it does not keep the file's order).
``--shift-dates`` and ``--cap-records`` (the first records, by ``--time``, else in the file's
order) run on the engine (``anonlib.workflow.engine_health``): the released table is the
in-memory one. ``--package`` and ``--project`` run on DuckDB and Spark
(``anonlib.cli.engine_package``): the engine writes the released CSV, byte for byte the
in-memory release's, whose bytes the package and the audit entry hold. Before the engine reads, standard error says what it is about to read and
about how long that takes; each phase is announced there too (standard output keeps
the summary, or the JSON).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import replace

import pandas as pd

from ..core.errors import ParameterError
from ..core.samples import SAMPLES
from ..engine import EngineTable, estimate_scan, scan_note, scan_size
from ..measures.target import ReleaseTarget
from ..workflow.engine_health import refuse_cap
from ..workflow.engine_search import EngineAnonymization, anonymize
from ..workflow.recipe import Reading
from ..workflow.release import pseudonymized_columns
from ..workflow.unseen import check_unseen
from .common import replaced_atomically, report_release, write
from .engine_package import (
    compact,
    deliver,
    in_memory_copy,
    packaged,
    refuse_earlier,
    refuse_unpackaged,
    written_csv,
)
from .health import power_notes
from .projects import linked_to

PASSES = 5  # scans of the file: the class table, typing, the loaded records, suppression, the write


def refuse_in_memory_options(args: argparse.Namespace) -> None:
    """The options an engine cannot honour, refused before anything is read."""
    refuse_unpackaged(args)
    if getattr(args, "cap_records", None) is not None:  # before the key is read or the file scanned
        refuse_cap(args.cap_order or "first", args.engine or "spark")
    if args.local_suppression:
        raise ParameterError(
            "--local-suppression chooses cells record by record, which needs all records in memory; leave out "
            "--engine, or let --max-suppressed remove the records of the classes still failing."
        )


def _note(text: str) -> None:
    print(f"note: {text}", file=sys.stderr, flush=True)


def _announce(args: argparse.Namespace, table: EngineTable, columns: Sequence[str]) -> None:
    """What the engine is about to read and about how long it takes (standard error)."""
    path = SAMPLES[args.sample].path if args.sample else args.file
    size = scan_size(path)
    estimate = estimate_scan(
        size,
        len(columns),
        table.engine.name,
        passes=PASSES,
        what=f"grouping its records on {len(columns)} columns, then writing the release",
    )
    _note(scan_note(size, estimate, table.engine.name))


def run(
    args: argparse.Namespace,
    table: EngineTable,
    *,
    shield: list[str],
    target: ReleaseTarget,
    given: dict[str, pd.DataFrame],
    measure: str,
    columns: list[str],
    before: Sequence = (),
) -> int:
    """The ``anonymize`` command on an engine; exit 0 when the written release meets the target, else 1.
    ``before``: the person (household) column's pseudonym step, the date shift and the
    records-per-person cap, in that order, applied by the engine."""
    # counted in people with a person column; released as a pseudonym, its records link (histories)
    target = target.in_unit_of(table, released=[*columns, *table.kept, *pseudonymized_columns(before)])
    links = None
    if args.project:  # earlier deliveries of the same people: each person's history across them judged
        links = linked_to(args.project, target, list(before))
        refuse_earlier(links, args.project, table.engine.name)
        target = target.after(compact(links.earlier))
    _announce(args, table, columns)
    reading = Reading(delimiter=args.delimiter, encoding=args.encoding, header=True)
    options = dict(
        hierarchies={a: h for a, h in given.items() if a in shield},
        method=args.method,
        measure=measure,
        target=target,
        time_limit=args.time_limit,
        columns=columns,
        reading=reading,
        notify=_note,
        unseen=check_unseen(args.unseen),
        before=tuple(before),
        tree=bool(args.json),  # the root counted as the search passes it, for ``counted``
    )
    if packaged(args):  # the engine writes the CSV; the package and the project's entry hold its bytes
        with written_csv() as temporary:
            done = counted(anonymize(table, shield, out=temporary, **options), args)
            written = temporary.read_bytes()
        copy = in_memory_copy(done.recipe, args)
        loaded = copy.loaded  # the searched records, as the in-memory command counts them for its notes
        searched = loaded.frame[loaded.assessed(target.sensitive)]
        linked_note = links.note(target) if links is not None else None  # as the in-memory package says
        notes = [n for n in (linked_note, *(u.sentence() for u in done.unseen)) if n]
        notes += power_notes(searched, loaded.person, loaded.count, target, links)
        recipe = deliver(
            args,
            copy,
            done.recipe.columns,
            written,
            done.replay.engine,
            notes=notes,
            links=links,
            recipe_path=args.recipe,
        )
        done = replace(done, recipe=recipe)
    elif args.out:
        with replaced_atomically(args.out) as temporary:
            done = counted(anonymize(table, shield, out=temporary, **options), args)
        print(f"written            {args.out}")
    else:
        done = anonymize(table, shield, **options)
    if args.recipe and not packaged(args):
        write(args.recipe, done.recipe.dumps().encode("utf-8"))
    return _report(args, table, done, shield, given, target, measure, links.linked if links is not None else 0)


def counted(done: EngineAnonymization, args) -> EngineAnonymization:
    """``done`` with its search's tree counted when ``--json`` reports it (the root's rows lost, on
    the engine in people at the bottom of the lattice) while the release is still a temporary file:
    a count that fails (the engine's memory) leaves nothing written."""
    if args.json:
        _ = done.search.tree  # counted (a cached property)
    return done


def _report(
    args,
    table: EngineTable,
    done: EngineAnonymization,
    shield,
    given,
    target: ReleaseTarget,
    measure: str,
    earlier: int = 0,
) -> int:
    result, check = done.search, done.replay.check
    engine = {
        "engine": done.replay.engine,
        "rows_searched": done.rows_searched,
        "measured_on": done.replay.measured_on,
        "engine_seconds": done.seconds,
    }
    return report_release(
        args,
        dataset=table.name,
        dropped=done.dropped,
        shield=shield,
        given=given,
        result=result,
        target=target,
        check=check,
        measure=measure,
        # the engine writes the searched columns: the searched records' distinct rows over them
        rows=(done.rows, done.original_rows if done.original_rows is not None else result.root.rows),
        k=done.k,
        utility=done.utility,
        steps=[s.step.describe() for s in done.recipe.steps],
        seconds=f"{done.seconds:.2f} (search {result.seconds:.4f})",
        engine=engine,
        account=done.recipe.column_account(),
        people=done.people,
        capped=done.capped,
        kept=done.kept if done.kept is not None else done.recipe.kept,
        unseen=done.unseen,
        earlier=earlier,
        engine_line=f"{done.replay.engine}: {done.rows_searched:,} distinct rows searched in memory, "
        f"the release measured on the {done.replay.measured_on}",
    )
