"""``apply``: re-apply a release recipe to a file (the same one, or a new delivery).

Exit codes: 0 the recipe's release target is met, 1 it is not (the failing
requirements and the smallest failing classes are named), 2 bad input (a
damaged recipe, a file of another layout, a value no step knows, a recipe
edited after it was written or without a digest: ``--accept-edited`` applies
it anyway and the output, the JSON and the package say so). With
``--engine duckdb|spark`` the file (or folder, or pattern) is rewritten where it
lies and the engine writes ``--out`` (``anonlib.workflow.engine_replay``), the
target then measured on the file as written (with ``--package`` or ``--project``, on
DuckDB: the engine's CSV is the package's table and what the audit log records,
``anonlib.cli.engine_package``; ``--person``, ``--keep``, ``--pseudonymize`` and
``--shift-dates`` add their steps before the recipe's own there too); standard error first says how much
the engine is about to read and about how long it takes. With
``--release-view`` the output (and ``--json``, under ``release_view``) adds what
the release is still good for (``anonlib.workflow.release_view``): records,
distributions before and after, a contingency table (``--pair``) and the
classifier comparison (``--predict``, ``--time-limit``).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from ..core.cells import records_in
from ..core.dataset import Dataset, Role
from ..core.errors import ParameterError, ProjectError
from ..core.masking import printable
from ..measures.target import TargetCheck, records
from ..projects.linked import cumulative_refusal
from ..workflow.history import WorkingCopy
from ..workflow.package import release_package
from ..workflow.recipe import EDITED, INTACT, read_for_recipe, read_recipe
from ..workflow.release_view import release_view
from ..workflow.report import copy_report
from ..workflow.unseen import check_unseen, cover_recipe
from .common import (
    command,
    drafted,
    engine_arguments,
    health_roles,
    print_json,
    real_argument,
    replaced_atomically,
    write,
)
from .engine_package import (
    compact,
    deliver,
    in_memory_copy,
    packaged,
    refuse_earlier,
    refuse_unpackaged,
    written_csv,
)
from .health import (
    household_argument,
    keep_argument,
    key_arguments,
    keyed_steps,
    person_argument,
    project_key,
    unseen_argument,
)
from .projects import in_turn, linked_to, project_argument, project_number, record_release, seen_project


@dataclass(frozen=True)
class _Outcome:
    """What both paths report: the check, the records released, and what is known of the file."""

    check: TargetCheck
    released_records: int
    same_file: bool | None  # None on an engine: knowing needs every record in memory
    reproduces: bool | None
    file: str
    engine: str | None = None
    notes: tuple[str, ...] = ()  # about the file read (a recorded column it lacks that the release never uses)
    unseen: tuple = ()  # the values the recipe's hierarchies did not list (UnseenValues), placed


def edited_note(recipe) -> str | None:
    """What an output says about a recipe applied with --accept-edited (None when intact)."""
    if recipe.integrity == INTACT:
        return None
    what = (
        "was changed after it was written (its content no longer matches its digest)"
        if recipe.integrity == EDITED
        else "carries no digest, so a change to it cannot be detected"
    )
    return f"The recipe {what}; it was applied because of --accept-edited."


def _apply(args: argparse.Namespace) -> int:
    unseen_choice = check_unseen(args.unseen)
    unseen = ()  # the values the recipe's hierarchies did not list, placed by rule or to the top
    recipe = read_recipe(args.recipe)
    recipe.require_intact(accept_edited=args.accept_edited)
    note = edited_note(recipe)
    view = None
    links = None  # the project's earlier deliveries this one links to (apply --project)
    added = bool(args.pseudonymize or args.shift_dates or args.keep or args.person or args.household)
    _same_owners(args, recipe)
    if args.project:  # the project as it is now: the release goes into it
        if args.engine or args.spark_master:
            refuse_unpackaged(args)  # before the project is read
        seen_project(args)
    if recipe.key_ids or args.key_file:  # before reading the file: a recipe of another key is refused first
        key = project_key(args, needed=bool(recipe.key_ids), why="This recipe (its pseudonyms or date shifts)")
        recipe = recipe.with_key(key)
    if args.engine or args.spark_master:
        refuse_unpackaged(args)
        if args.release_view:
            raise ParameterError("--release-view needs the table in memory; leave out --engine.")
        if added:  # the options' steps (pseudonyms, date shifts) run on the engine with the recipe's own
            recipe = _added(args, recipe, _recorded_columns(recipe))[1]
        if args.project:  # earlier deliveries of the same people: each person's history across them judged
            links = linked_to(args.project, recipe.target, [s.step for s in recipe.steps])
            refuse_earlier(links, args.project, args.engine)
            recipe = recipe.with_earlier(compact(links.earlier))
        outcome = _apply_on_engine(args, recipe, links)
    else:
        dataset, reading = read_for_recipe(recipe, args.file)
        if added:  # the options' roles and steps come before the recipe's own
            dataset, recipe = _added(args, recipe, dataset)
        # a later delivery's new ages, codes and dates fall in the recipe's bands; new categories by --unseen
        recipe, unseen = cover_recipe(recipe, dataset, unseen=unseen_choice)
        if args.project:  # a delivery whose records link is judged with the project's earlier ones
            links = linked_to(args.project, recipe.target, [s.step for s in recipe.steps])
            recipe = recipe.with_earlier(links.earlier)
        replay = recipe.replay(dataset)
        if links is not None and links.earlier is not None and not replay.check.met:
            raise ProjectError(cumulative_refusal(replay.check, args.project))
        if args.out and not args.project:
            write(args.out, replay.csv)
        needed = args.package or args.release_view or args.project
        copy = WorkingCopy.from_recipe(recipe, dataset, reading) if needed else None
        if args.release_view:
            view = release_view(copy, pair=_pair(args.pair), predict=args.predict, time_limit=args.time_limit)
        package = None
        if args.package:
            linked_note = links.note(recipe.target) if links is not None else None
            package = release_package(
                copy,
                columns=recipe.columns,
                notes=[n for n in (note, linked_note, *(u.sentence() for u in unseen)) if n],
                report=copy_report(copy, view=view) if view is not None else None,
            )
            if not args.project:
                write(args.package, package)
        if args.project:  # the files and the audit entry as one unit (written under temporary names, then renamed)
            args.team_draft = record_release(
                args.project,
                copy,
                copy.recipe(recipe.columns),
                table=replay.csv if args.out else None,
                package=package,
                source=Path(args.file).read_bytes(),
                stream=sys.stderr if args.json else None,
                key=getattr(args, "new_project_key", None),
                project_id=project_number(args),
                outputs=[(args.out, replay.csv)] if args.out else [],
                package_path=args.package,
                links=links,
            )
        kind = (
            "the file the recipe was made from"
            if replay.same_file
            else f"a new delivery (the recipe was made from {recipe.source.name})"
        )
        released = records_in(replay.table, replay.dataset.count)
        outcome = _Outcome(
            replay.check,
            released,
            replay.same_file,
            None if added else replay.reproduces,  # the options' steps make a new release: nothing to reproduce
            f"{records(replay.check.loaded_records)}, {kind}",
            notes=tuple(dataset.notes),
            unseen=unseen,
        )  # the file's, as on an engine
    unseen = outcome.unseen
    check = outcome.check
    if args.json:
        print_json(
            args,
            json.dumps(
                {
                    "recipe": args.recipe,
                    "recipe_digest": recipe.integrity,
                    "accepted_edited": note is not None,
                    "file": args.file,
                    "notes": list(outcome.notes),
                    **({"engine": outcome.engine} if outcome.engine else {}),
                    "same_file": outcome.same_file,
                    "reproduces_release": outcome.reproduces,
                    "steps": list(recipe.describe),
                    "unseen": [u.to_json() for u in unseen],
                    "target": recipe.target.describe(),
                    "unit": recipe.target.unit,
                    "power": "all" if recipe.target.power is None else recipe.target.power,
                    **({"earlier_deliveries": links.linked} if links is not None and links.linked else {}),
                    "met": check.met,
                    "records": check.loaded_records,  # the records assessed, as anonymize --json states them
                    "loaded_records": check.loaded_records,
                    "suppressed_records": check.suppressed_records,
                    "suppressed": check.suppressed_records,
                    "failing_records": check.failing_records,
                    "failing_classes": check.failing_classes,
                    "failing": [{"requirement": what, "records": n} for what, n in check.failing],
                    "smallest_failing_classes": [{"class": what, "records": n} for what, n in check.examples],
                    "released_records": outcome.released_records,
                    **recipe.column_account().to_json(),
                    **(
                        {
                            "persons": check.loaded_persons,
                            "released_persons": check.persons,
                            "failing_persons": check.failing_persons,
                        }
                        if check.by_person
                        else {}
                    ),
                    **({"release_view": view.to_json()} if view is not None else {}),
                    **drafted(args),
                },
                indent=2,
            ),
        )
        return 0 if check.met else 1
    if note:
        print(f"recipe             {note}")
    print(f"file               {printable(args.file)}: {printable(outcome.file)}")
    for line in outcome.notes:
        print(f"note               {line}")
    for i, line in enumerate(recipe.describe, start=1):
        print(f"step {i:<14}{line}")
    for u in unseen:
        print(f"unseen             {u.sentence()}")
    print(f"target             {recipe.target.describe()}")
    released, left_out = recipe.column_account().sentences()
    print(f"columns            {released}")
    print(f"                   {left_out}")
    print(f"result             {check.sentence()}")
    if not check.met:
        for what, n in check.failing:
            if n:
                print(f"failing            {what}: {records(n)}")
        for what, n in check.examples:
            print(f"failing class      {what} ({records(n)})")
        if check.failing_classes > len(check.examples):
            print(f"                   ... {check.failing_classes - len(check.examples):,} more failing classes")
    if view is not None:
        for sentence in view.sentences()[1:]:
            print(f"release view       {sentence}")
    if outcome.same_file and added:
        print("reproduces release not checked: the options added steps to the recipe, so this release is a new one")
    elif outcome.same_file and outcome.reproduces is None:
        print(
            f"reproduces release not checked byte for byte: {recipe.written_by} wrote the recipe's table in its own "
            "order (`verify` the package to compare it as a table)"
        )
    elif outcome.same_file:
        print(
            "reproduces release "
            + (
                "yes: the same bytes as the recipe's release"
                if outcome.reproduces
                else "no: the released table differs from the one the recipe recorded"
            )
        )
    return 0 if check.met else 1


def _same_owners(args: argparse.Namespace, recipe) -> None:
    """``--person`` (``--household``) naming another column than the recipe's person (household)
    column: refused in one sentence (the recipe's steps and target count the recipe's)."""
    for option, given, own, unit in (
        ("--person", args.person, recipe.target.person, "people"),
        ("--household", args.household, recipe.target.household, "households"),
    ):
        if given and own and given.strip() != own:
            raise ParameterError(
                f"This recipe counts {unit} by the column '{printable(own)}', but {option} names "
                f"'{printable(given)}': leave out {option} to apply the recipe as it is, or search a new release "
                f"with `anonymize {option} {printable(given)}`."
            )


def _pair(text: str | None) -> tuple[str, ...] | None:
    """``--pair A,B`` as two column names (a sentence when it is not two)."""
    if text is None:
        return None
    names = tuple(part.strip() for part in text.split(","))
    if len(names) != 2 or not all(names):
        raise ParameterError(f"--pair takes two column names separated by a comma, e.g. --pair age,sex; got '{text}'.")
    return names


def _added(args: argparse.Namespace, recipe, dataset):
    """The dataset with the roles of ``--keep``, ``--person``, ``--household`` and ``--pseudonymize``,
    and the recipe with those roles and the steps of ``--pseudonymize`` and ``--shift-dates`` before
    its own (in memory on the file read; on an engine on the recipe's columns, without records)."""
    roles = health_roles(args, dataset._column_order())
    if args.person:
        roles.update({c: Role.IGNORE for c in dataset.columns_with(Role.PERSON) if c not in roles})
    if args.household:
        roles.update({c: Role.IGNORE for c in dataset.columns_with(Role.HOUSEHOLD) if c not in roles})
    for column, role in list(roles.items()):  # a pseudonymised person (household) column keeps its role
        if role is Role.IDENTIFIER and dataset.roles.get(column) in (Role.PERSON, Role.HOUSEHOLD):
            del roles[column]
    dataset = dataset.with_roles(roles)
    return dataset, recipe.extended(keyed_steps(args, dataset), roles)


def _recorded_columns(recipe) -> Dataset:
    """The recipe's file as its columns and recorded roles, without records (what ``_added`` needs
    on an engine: the file stays where it lies)."""
    frame = pd.DataFrame(columns=[c.name for c in recipe.source.columns])
    return Dataset(
        name=recipe.source.name,
        frame=frame,
        roles={c: Role(r) for c, r in recipe.source.roles.items()},
        missing=recipe.source.missing,
    )


def _apply_on_engine(args: argparse.Namespace, recipe, links=None) -> _Outcome:
    """The recipe re-applied where the file lies; the engine writes --out (CSV, or Parquet by suffix).
    ``links``: the project's earlier deliveries the recipe is judged with (``Recipe.with_earlier``):
    a release failing on the cumulative history is refused before anything is written."""
    from ..engine import connect, estimate_scan, scan_note, scan_size
    from ..workflow.engine_replay import apply_recipe as on_engine
    from ..workflow.engine_replay import require_queries

    if args.spark_master and args.engine != "spark":
        raise ParameterError("--spark-master applies to the Spark engine; add --engine spark.")
    require_queries(recipe, args.engine)  # before starting an engine or announcing a scan
    engine = connect(args.engine, master=args.spark_master)
    size = scan_size(args.file)
    passes = 3 + sum(1 for s in recipe.steps if s.step.kind == "suppression")  # typing, loaded records, write (+ cells)
    estimate = estimate_scan(
        size,
        len(recipe.source.columns),
        engine.name,
        passes=passes,
        what=f"re-applying {len(recipe.steps)} step{'s' if len(recipe.steps) != 1 else ''} and writing the release",
    )
    print(f"note: {scan_note(size, estimate, engine.name)}", file=sys.stderr, flush=True)
    if packaged(args):  # the engine writes the CSV; the package and the project's entry hold its bytes
        with written_csv() as temporary:
            replay = on_engine(recipe, args.file, out=temporary, engine=engine, unseen=check_unseen(args.unseen))
            written = temporary.read_bytes()
        if links is not None and links.earlier is not None and not replay.check.met:
            raise ProjectError(cumulative_refusal(replay.check, args.project))
        replay = replace(replay, out=None)
        copy = in_memory_copy(recipe, args)
        note = edited_note(recipe)
        deliver(
            args,
            copy,
            recipe.columns,
            written,
            replay.engine,
            notes=[
                n
                for n in (note, links.note(recipe.target) if links else None, *(u.sentence() for u in replay.unseen))
                if n
            ],
            links=links,
        )
    elif not args.out:
        replay = on_engine(recipe, args.file, out=None, engine=engine, unseen=check_unseen(args.unseen))
    else:
        with replaced_atomically(args.out) as temporary:
            replay = on_engine(recipe, args.file, out=temporary, engine=engine, unseen=check_unseen(args.unseen))
        print(f"written            {args.out}")
    return _Outcome(
        replay.check,
        replay.released_records,
        None,
        None,
        f"{records(replay.check.loaded_records)}, read by {replay.engine}",
        replay.engine,
        replay.notes,
        replay.unseen,
    )


def register(commands) -> None:
    parser = command(
        commands,
        "apply",
        "re-apply a release recipe to a file and check its release target (exit 0 met, 1 not met, 2 bad input)",
        "python -m anonlib apply recipe.json new_delivery.csv --out released.csv",
        in_turn(_apply),
    )
    parser.add_argument("recipe", help="the recipe JSON (from the dashboard's release package or anonymize --recipe)")
    parser.add_argument("file", help="the file to apply it to (CSV/TSV/Excel/Parquet of the same layout)")
    parser.add_argument(
        "--out",
        metavar="CSV",
        help="write the released table to this CSV file "
        "(with --engine: written by the engine; a .parquet name writes Parquet)",
    )
    parser.add_argument(
        "--package",
        metavar="ZIP",
        help="also write the release package (released.csv, report.html, "
        "recipe.json, README.txt, SHA256SUMS) of this file; check it with `python -m anonlib verify`",
    )
    parser.add_argument(
        "--accept-edited",
        action="store_true",
        help="apply a recipe that was changed after it was written (or has no digest); the output, "
        "the JSON and the package say so",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument(
        "--release-view",
        action="store_true",
        help="also say what the release is still good for: records, distributions before and after, "
        "a contingency table and a classifier trained on the release against the file (in --json "
        "under release_view; with --package the report uses the same view)",
    )
    parser.add_argument("--pair", metavar="A,B", help="with --release-view: the two columns of the contingency table")
    parser.add_argument(
        "--predict",
        metavar="COLUMN",
        help="with --release-view: the column the classifier predicts (default: the first sensitive attribute)",
    )
    parser.add_argument(
        "--time-limit",
        type=real_argument,
        default=20.0,
        metavar="SECONDS",
        help="with --release-view: the classifier's time (rows are subsampled past it; default 20)",
    )
    parser.set_defaults(inputs=("recipe", "file", "key_file"), outputs=("out", "package"))
    person_argument(parser)
    household_argument(parser)
    keep_argument(parser)
    unseen_argument(parser)
    key_arguments(parser)
    project_argument(parser)
    engine_arguments(parser)
