"""``projects`` and ``audit``: the project store from the command line (``anonlib.projects``),
and ``--project NAME`` for ``anonymize`` and ``apply`` (``record_release``).

- ``projects list [--json]``, ``projects show NAME [--json]``, ``projects export NAME --out FILE
  [--with-key]``, ``projects import FILE [--name NAME]``, ``projects delete NAME --yes``;
- ``projects budget NAME --epsilon E [--delta D] [--json]``: set a project's total privacy
  budget (``anonlib.projects.budget``); without ``--epsilon``, show what is spent and left;
- ``audit [--project NAME] [--json]``: the audit log, oldest first, and whether its chain of
  digests holds (exit 1 when it does not); a private release's entry carries its ε and δ.

The store is found at ``ANONLIB_STORE`` (a database URL) or ``ANONLIB_HOME`` (a folder;
default the per-user data folder). A store that cannot be used, an unknown project or a
name already taken is one sentence with exit code 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..core.errors import DataFileError, ParameterError, ProjectError
from ..projects import (
    ProjectState,
    ProjectStore,
    audit_entries,
    budget_of,
    export_project,
    import_project,
    record_package,
    record_table,
    set_budget,
    verify_chain,
)
from ..projects.audit import COMMAND_LINE
from ..projects.records import ProjectRef
from ..workflow.history import WorkingCopy
from ..workflow.keys import new_key
from ..workflow.recipe import Recipe
from .common import command, print_json, write

MAX_IMPORT_BYTES = 2 * 1024**3


def _store() -> ProjectStore:
    return ProjectStore()


def _list(args: argparse.Namespace) -> int:
    summaries = _store().summaries()
    if args.json:
        print_json(args, json.dumps([s.to_json() for s in summaries], indent=2, ensure_ascii=False))
        return 0
    if not summaries:
        print("no project yet (the dashboard saves one with every file; anonymize --project NAME makes one)")
        return 0
    width = max(len(s.name) for s in summaries)
    print(f"{'project':<{width}}  {'records':>10}  {'releases':>8}  last change (UTC)    file")
    for s in summaries:
        print(
            f"{s.name:<{width}}  {s.records:>10,}  {s.releases:>8,}  {s.updated[:19].replace('T', ' ')}  {s.source_name}"
        )
    return 0


def _show(args: argparse.Namespace) -> int:
    store = _store()
    project = store.load(args.name)
    s, state = project.summary, project.state
    entries = [e for e in audit_entries(store) if e.project_id == s.id]
    if args.json:
        print_json(
            args,
            json.dumps(
                {
                    **s.to_json(),
                    "target": state.target.describe(),
                    "columns": [{"name": c.name, "type": c.type, "role": c.role} for c in state.source.columns],
                    "steps": [f"{x.page}: {x.step.describe()}" for x in state.steps],
                    "source_sha256": state.source.sha256,
                    "fingerprint": state.source.fingerprint,
                    "audit": [e.to_json() for e in entries],
                },
                indent=2,
                ensure_ascii=False,
            ),
        )
        return 0
    print(f"project            {s.name}")
    print(f"file               {s.source_name} ({s.records:,} records, {s.columns} columns)")
    kept = (
        "a bundled sample" if state.is_sample else (f"kept ({s.file_bytes:,} bytes)" if s.keep_file else "SHA-256 only")
    )
    print(f"file kept          {kept}")
    print(f"source SHA-256     {state.source.sha256 or '-'}")
    print(f"target             {state.target.describe()}")
    for c in state.source.columns:
        print(f"column             {c.name}: {c.type}, {c.role}")
    for i, x in enumerate(state.steps, start=1):
        print(f"step {i:<14}{x.page}: {x.step.describe()}")
    print(f"last change        {s.updated[:19].replace('T', ' ')} UTC: {s.change}")
    print(f"releases           {s.releases:,}")
    return 0


def _export(args: argparse.Namespace) -> int:
    write(args.out, export_project(_store(), args.name, with_key=args.with_key))
    if args.with_key:
        print("note               the export holds the project's pseudonym key: keep it as safe as the key itself")
    return 0


def _import(args: argparse.Namespace) -> int:
    path = Path(args.file)
    if not path.is_file():
        raise DataFileError(f"The project export '{path.name}' does not exist or is not a file.")
    if path.stat().st_size > MAX_IMPORT_BYTES:
        raise ProjectError(f"The file '{path.name}' is larger than 2 GB; it is not a project export anonlib wrote.")
    ref = import_project(_store(), path.read_bytes(), name=args.name)
    print(f"imported           {ref.name}")
    return 0


def _delete(args: argparse.Namespace) -> int:
    if not args.yes:
        raise ParameterError(
            f"Deleting erases the project '{args.name}', its kept file and its release packages; add --yes to confirm."
        )
    store = _store()
    store.delete(args.name)
    print(f"deleted            {args.name} (its audit entries stay)")
    return 0


def _budget(args: argparse.Namespace) -> int:
    store = _store()
    if args.delta is not None and args.epsilon is None:
        raise ParameterError("Give the total ε with --epsilon E when setting δ with --delta D.")
    budget = (
        budget_of(store, args.name)
        if args.epsilon is None
        else set_budget(store, args.name, epsilon=args.epsilon, delta=args.delta)
    )
    if args.json:
        print_json(args, json.dumps(budget.to_json(), indent=2, ensure_ascii=False))
    else:
        print(f"privacy budget     {budget.sentence()}")
    return 0


def _audit(args: argparse.Namespace) -> int:
    store = _store()
    entries = audit_entries(store, args.project)
    if args.project is not None and not entries:
        store.summary(args.project)  # an unknown name is a sentence
    problems = verify_chain(store)
    if args.json:
        print_json(args, json.dumps([e.to_json() for e in entries], indent=2, ensure_ascii=False))
        return 1 if problems else 0
    for problem in problems:
        print(f"BROKEN             {problem}")
    if not entries:
        print("no release recorded yet")
    for e in entries:
        deleted = " (project deleted)" if e.project_deleted else ""
        if e.epsilon is not None:  # a private release: the budget it spent, before it measured
            print(
                f"{e.id:>5}  {e.time[:19].replace('T', ' ')}  {e.project}{deleted}  private release  "
                f"ε = {e.epsilon:g}  δ = {e.delta:g}  {e.source_name}  {e.user} ({e.made_by})"
            )
            continue
        print(
            f"{e.id:>5}  {e.time[:19].replace('T', ' ')}  {e.project}{deleted}  {e.target}  "
            f"{'met' if e.met else 'NOT met'}  released {e.released:,}  suppressed {e.suppressed:,}  "
            f"table {e.released_sha256[:16]}  package {(e.package_sha256 or '-')[:16]}  {e.user} ({e.made_by})"
        )
    if not problems:
        print(f"chain              intact ({len(audit_entries(store)):,} entries, each covering the one before)")
    return 1 if problems else 0


def project_store_key(args: argparse.Namespace) -> bytes:
    """The pseudonym key of ``--project NAME`` (when no ``--key-file`` is given): the project's,
    kept in the store; for a project this command creates, a new key it is created with."""
    store = _store()
    try:
        return store.key(store.summary(args.project).ref)
    except ProjectError:  # no project of that name yet: record_release creates it with this key
        args.new_project_key = new_key()
        return args.new_project_key


def record_release(
    name: str,
    copy: WorkingCopy,
    recipe: Recipe,
    *,
    table: bytes | None,
    package: bytes | None,
    source: bytes | None,
    stream=None,
    key: bytes | None = None,
) -> None:
    """``--project NAME``: create the project from ``copy`` when there is none of that name (keeping
    ``source``, the file read, and ``key``, the key its pseudonyms were made with), and record what
    was written (the package, else the table) in its audit log. The line saying so goes to
    ``stream`` (standard error under ``--json``)."""
    store = _store()
    try:
        ref = store.summary(name).ref
    except ProjectError:  # no project of that name: this release starts it
        origin = "upload:" + str(copy.loaded.name)
        ref = store.create(
            name,
            ProjectState.of(copy, origin),
            source,
            change="created by the command line",
            exact_name=True,
            key=key,
        )
    if package is not None:
        entry = record_package(store, ref, package, source=source, made_by=COMMAND_LINE)
    elif table is not None:
        entry = record_table(store, ref, recipe, table, source=source, made_by=COMMAND_LINE)
    else:
        return
    print(f"audit log          entry {entry.id} of project {ref.name} ({store.where})", file=stream or sys.stdout)


def project_for(name: str, dataset, source: bytes | None, origin: str) -> ProjectRef:
    """``--project NAME`` of a command that does not change the working copy (``synthesize``):
    the project of that name, created from ``dataset`` (keeping ``source``) when there is none."""
    store = _store()
    try:
        return store.summary(name).ref
    except ProjectError:  # no project of that name: this release starts it
        copy = WorkingCopy.start(dataset)
        return store.create(
            name, ProjectState.of(copy, origin), source, change="created by the command line", exact_name=True
        )


def project_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--project",
        metavar="NAME",
        help="create or use this project of the project store (ANONLIB_HOME or ANONLIB_STORE) and record every "
        "table or package written in its audit log",
    )


def register(commands) -> None:
    projects = command(
        commands,
        "projects",
        "list, show, export, import or delete the projects of the project store",
        "python -m anonlib projects list --json",
        None,
    )
    sub = projects.add_subparsers(dest="action", required=True, parser_class=type(projects))
    listing = sub.add_parser("list", help="every project: name, file, records, releases")
    listing.add_argument("--json", action="store_true", help="print the projects as JSON")
    listing.set_defaults(handler=_list, outputs=(), inputs=())
    show = sub.add_parser("show", help="one project: file, columns, target, steps, releases")
    show.add_argument("name")
    show.add_argument("--json", action="store_true", help="print the project as JSON")
    show.set_defaults(handler=_show, outputs=(), inputs=())
    export = sub.add_parser("export", help="write a project as one file another machine can import")
    export.add_argument("name")
    export.add_argument("--out", required=True, metavar="ZIP", help="the file to write")
    export.add_argument(
        "--with-key", action="store_true", help="include the project's pseudonym key (default: left out)"
    )
    export.set_defaults(handler=_export, outputs=("out",), inputs=())
    imported = sub.add_parser("import", help="add a project from a file written by projects export")
    imported.add_argument("file")
    imported.add_argument("--name", help="the name to give it (default: its own)")
    imported.set_defaults(handler=_import, outputs=(), inputs=("file",))
    budget = sub.add_parser(
        "budget", help="set (or show) a project's total privacy budget for its private releases (synthesize)"
    )
    budget.add_argument("name")
    budget.add_argument("--epsilon", type=float, metavar="E", help="the total ε its private releases may spend")
    budget.add_argument("--delta", type=float, metavar="D", help="the total δ (default: not capped)")
    budget.add_argument("--json", action="store_true", help="print the budget as JSON")
    budget.set_defaults(handler=_budget, outputs=(), inputs=())
    deleted = sub.add_parser("delete", help="erase a project, its kept file and packages (its audit entries stay)")
    deleted.add_argument("name")
    deleted.add_argument("--yes", action="store_true", help="confirm the deletion")
    deleted.set_defaults(handler=_delete, outputs=(), inputs=())

    audit = command(
        commands,
        "audit",
        "print the audit log of every release made from a project (exit 1 when its chain of digests is broken)",
        "python -m anonlib audit --project survey --json",
        _audit,
    )
    audit.add_argument("--project", metavar="NAME", help="only the entries of this project")
    audit.add_argument("--json", action="store_true", help="print the entries as JSON")
    audit.set_defaults(outputs=(), inputs=())
