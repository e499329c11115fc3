"""``projects`` and ``audit``: the project store from the command line (``anonlib.projects``),
and ``--project NAME`` for ``anonymize`` and ``apply`` (``record_release``).

- ``projects list [--json]``, ``projects show NAME [--json]``, ``projects export NAME --out FILE
  [--with-key] [--without-file]`` (written mode 0600), ``projects import FILE [--name NAME]``, ``projects delete NAME --yes``;
- ``projects budget NAME --epsilon E [--delta D] [--raise] [--json]`` (or ``--file FILE`` instead
  of NAME): set the total privacy budget of the project's file, shared by every project over it (an
  audit entry; ``anonlib.projects.budget``; the smallest total set holds unless ``--raise``);
  without ``--epsilon``, show what is spent and left;
- ``audit --head`` prints the chain's head digest (to keep where a writer of the store cannot
  reach); ``audit --expect-head HEX`` exits 1 unless the chain holds and extends it;
- ``audit [--project NAME] [--json]``: the audit log, oldest first, and whether its chain of
  digests and its head hold (exit 1 when they do not: the text says why, and the JSON is then
  ``{"chain": "broken", "error", "problems", "entries"}`` instead of the list of entries); a
  private release's entry carries its ε and δ. The store is opened read-only (a read-only store
  is read).

``--project NAME`` on ``anonymize`` and ``apply`` releases as one unit
(``anonlib.projects.releasing``): the files and the audit entry appear together or not at all.

The store is found at ``ANONLIB_STORE`` (a database URL) or ``ANONLIB_HOME`` (a folder;
default the per-user data folder). A store that cannot be used, an unknown project or a
name already taken is one sentence with exit code 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from ..core.errors import (
    AccessError,
    DataFileError,
    DeliveredMeanwhileError,
    KeyFileError,
    ParameterError,
    ProjectError,
    StoreError,
)
from ..core.masking import printable
from ..core.samples import SAMPLES
from ..measures.target import ReleaseTarget
from ..projects import (
    ProjectState,
    ProjectStore,
    audit_entries,
    budget_of,
    export_project,
    file_budget,
    import_project,
    set_budget,
    verify_chain,
)
from ..projects.chain import head_extends, head_hex, log_head
from ..projects.drafts import draft_release
from ..projects.linked import LinkedDeliveries, linked_deliveries
from ..projects.location import sqlite_path, store_url
from ..projects.records import ProjectRef
from ..projects.releasing import release_into_project
from ..projects.team import add_owner, delete_project, require, team_entries, visible
from ..projects.transfer import MAX_EXPORT_BYTES
from ..workflow.health_steps import PseudonymizeStep
from ..workflow.history import WorkingCopy
from ..workflow.keys import key_id, new_key
from ..workflow.recipe import Reading, Recipe
from ..workflow.release import file_digest
from .common import command, print_json, real_argument, write
from .team import register_actions, team_member

MAX_IMPORT_BYTES = MAX_EXPORT_BYTES + 1024**2  # an export is never larger than its members unpacked (and a header)


def say(line: str, file=None) -> None:
    """Print a line naming projects, files or columns with their control characters escaped
    (``printable``): a name cannot move the cursor, ring the bell or turn the line right to left."""
    print(printable(line), file=file or sys.stdout)


CLI_WAIT_SECONDS = 30.0  # a command waits this long for another one writing the store (SQLite)


def _store(*, read_only: bool = False) -> ProjectStore:
    """The store of ``ANONLIB_STORE``/``ANONLIB_HOME``; ``read_only`` (``audit``): opened only to
    read when it exists (a read-only file or folder is read; nothing is migrated or written),
    unless a release whose process died waits to be finished and the store can be written."""
    url = store_url()
    path = sqlite_path(url)
    if read_only and (path is None or path.exists()):
        store = ProjectStore(url, read_only=True, wait=CLI_WAIT_SECONDS)
        if not store.interrupted:
            return store
        try:  # a release whose process died is finished (or undone) first, when the store can be written
            return _said(ProjectStore(url, wait=CLI_WAIT_SECONDS))
        except StoreError:
            return store
    return _said(ProjectStore(url, wait=CLI_WAIT_SECONDS))


def _said(store: ProjectStore) -> ProjectStore:
    """The store, once what its opening finished or undid is said on standard error."""
    for sentence in store.recovered:
        print(f"note: {sentence}", file=sys.stderr)
    return store


def _list(args: argparse.Namespace) -> int:
    store = _store()
    member = team_member(store)
    summaries = store.summaries() if member is None else visible(store, member)
    if args.json:
        print_json(args, json.dumps([s.to_json() for s in summaries], indent=2, ensure_ascii=False))
        return 0
    if not summaries:
        say("no project yet (the dashboard saves one with every file; anonymize --project NAME makes one)")
        return 0
    width = max(len(s.name) for s in summaries)
    say(f"{'project':<{width}}  {'records':>10}  {'releases':>8}  last change (UTC)    file")
    for s in summaries:
        say(
            f"{s.name:<{width}}  {s.records:>10,}  {s.releases:>8,}  {s.updated[:19].replace('T', ' ')}  {s.source_name}"
        )
    return 0


def _show(args: argparse.Namespace) -> int:
    store = _store()
    member = team_member(store)
    if member is not None:
        require(store, args.name, member, "read")
    project = store.load(args.name)
    s, state = project.summary, project.state
    entries = [e for e in audit_entries(store) if e.project_id == s.id]
    if args.json:
        print_json(
            args,
            json.dumps(
                {
                    **s.to_json(),
                    "file_kept": bool(s.keep_file and s.file_bytes),  # a sample's or a forgotten file is not kept
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
    say(f"project            {s.name}")
    say(f"file               {s.source_name} ({s.records:,} records, {s.columns} columns)")
    kept = _file_kept(s, state)
    say(f"file kept          {kept}")
    say(f"source SHA-256     {state.source.sha256 or '-'}")
    say(f"target             {state.target.describe()}")
    for c in state.source.columns:
        say(f"column             {c.name}: {c.type}, {c.role}")
    for i, x in enumerate(state.steps, start=1):
        say(f"step {i:<14}{x.page}: {x.step.describe()}")
    say(f"last change        {s.updated[:19].replace('T', ' ')} UTC: {s.change}")
    say(f"releases           {s.releases:,}")
    return 0


def _file_kept(s, state: ProjectState) -> str:
    """What the project keeps of its file, as it is: a bundled sample is not kept (anonlib ships it),
    a kept file says its size, otherwise only its SHA-256 is kept."""
    sample = state.sample_key or next((key for key, x in SAMPLES.items() if x.title == s.source_name), None)
    if state.is_sample or (sample and not s.file_bytes):
        return f"no: the bundled sample '{sample or s.source_name}', which ships with anonlib"
    if s.keep_file and s.file_bytes:
        return f"yes ({s.file_bytes:,} bytes)"
    return "no: its SHA-256 only" if state.source.sha256 else "no"


def _export(args: argparse.Namespace) -> int:
    store = _store()
    member = team_member(store)
    if member is not None:
        require(store, args.name, member, "export")
    exported = export_project(store, args.name, with_key=args.with_key, with_file=not args.without_file)
    write(args.out, exported, private=True)  # it may hold the key and the raw records: readable by its owner only
    if args.with_key:
        say("note               the export holds the project's pseudonym key: keep it as safe as the key itself")
    return 0


def _import(args: argparse.Namespace) -> int:
    path = Path(args.file)
    if not path.is_file():
        raise DataFileError(f"The project export '{path.name}' does not exist or is not a file.")
    if path.stat().st_size > MAX_IMPORT_BYTES:
        raise ProjectError(
            f"The file '{printable(path.name)}' is larger than {MAX_IMPORT_BYTES // 1024**2:,} MB, more than any project "
            "export holds; it is not one anonlib wrote."
        )
    store = _store()
    ref = import_project(store, path.read_bytes(), name=args.name)
    member = team_member(store)
    if member is not None:
        add_owner(store, ref, member)
    say(f"imported           {ref.name}")
    return 0


def _delete(args: argparse.Namespace) -> int:
    if not args.yes:
        raise ParameterError(
            f"Deleting erases the project '{printable(args.name)}', its kept file and its release packages; add --yes to confirm."
        )
    store = _store()
    member = team_member(store)
    if member is not None:
        delete_project(store, args.name, member)
    else:
        store.delete(args.name)
    say(f"deleted            {args.name} (its audit entries stay)")
    return 0


def _budget(args: argparse.Namespace) -> int:
    store = _store()
    member = team_member(store)
    if args.delta is not None and args.epsilon is None:
        raise ParameterError("Give the total ε with --epsilon E when setting δ with --delta D.")
    if args.raise_total and args.epsilon is None:
        raise ParameterError("--raise raises the total to --epsilon E (and --delta D); give the new total.")
    if (args.name is None) == (args.file is None):
        raise ParameterError("Name the project (projects budget NAME) or the file (projects budget --file FILE).")
    if member is not None:
        if args.name is None:
            raise ParameterError(
                "In a team's store a file's privacy budget is read and set through a project over it: "
                "projects budget NAME (setting it is the project owner's)."
            )
        require(store, args.name, member, "read" if args.epsilon is None else "budget")
    user = None if member is None else member.label
    if args.file is not None:  # a file's budget, by its SHA-256, with or without a project over it
        try:
            sha, name = file_digest(args.file), Path(args.file).name
        except OSError:
            raise ParameterError(f"The file {printable(args.file)} cannot be read.") from None
        budget = (
            file_budget(store, sha, name)
            if args.epsilon is None
            else set_budget(
                store,
                sha256=sha,
                source_name=name,
                epsilon=args.epsilon,
                delta=args.delta,
                user=user,
                raise_total=args.raise_total,
            )
        )
    else:
        budget = (
            budget_of(store, args.name)
            if args.epsilon is None
            else set_budget(
                store, args.name, epsilon=args.epsilon, delta=args.delta, user=user, raise_total=args.raise_total
            )
        )
    if args.json:
        print_json(args, json.dumps(budget.to_json(), indent=2, ensure_ascii=False))
    else:
        print(f"privacy budget     {budget.sentence()}")
    return 0


def _head(args: argparse.Namespace, store: ProjectStore) -> int:
    """``audit --head``: the chain's head digest alone on standard output (to keep in a second
    place), only when the whole chain holds; ``audit --expect-head HEX``: exit 1 unless the
    chain extends the head kept."""
    if args.expect_head is not None:
        check = head_extends(store, args.expect_head)
        if args.json:
            print_json(args, json.dumps(check.to_json(), indent=2))
        else:
            say(f"{'head kept' if check.extends else 'BROKEN':<19}{check.sentence()}")
        return 0 if check.extends else 1
    problems = verify_chain(store)
    if problems:
        for problem in problems:
            say(f"BROKEN             {problem}", file=sys.stderr)
        say("error: the audit log fails its check, so it has no head worth keeping.", file=sys.stderr)
        return 1
    head = log_head(store)
    if args.json:
        print_json(args, json.dumps(head.to_json(), indent=2))
    else:
        print(head.sha256)
        print(
            f"note: the head of {head.entries or 0:,} audit entries; keep it where a writer of the store cannot "
            "reach, and check the log later with audit --expect-head HEX.",
            file=sys.stderr,
        )
    return 0


def _audit(args: argparse.Namespace) -> int:
    if args.head and args.expect_head is not None:
        raise ParameterError("Give --head (print the head) or --expect-head HEX (check it), not both.")
    if args.expect_head is not None:
        head_hex(args.expect_head)  # a malformed digest is bad input (exit 2), before the store is opened
    store = _store(read_only=True)
    if args.head or args.expect_head is not None:
        return _head(args, store)
    member = team_member(store)
    if member is not None and args.project is not None:
        require(store, args.project, member, "read")
    entries = audit_entries(store, args.project) if member is None else team_entries(store, member, args.project)
    if args.project is not None and not entries:
        store.summary(args.project)  # an unknown name is a sentence
    problems = verify_chain(store)
    if args.json:
        listed = [e.to_json() for e in entries]
        if problems:  # the sentences saying why travel with the entries (an intact log stays a list of them)
            document = {"chain": "broken", "error": problems[0], "problems": problems, "entries": listed}
            print_json(args, json.dumps(document, indent=2, ensure_ascii=False))
            return 1
        print_json(args, json.dumps(listed, indent=2, ensure_ascii=False))
        return 0
    for problem in problems:
        say(f"BROKEN             {problem}")
    if not entries:
        say("no release recorded yet")
    for e in entries:
        deleted = " (project deleted)" if e.project_deleted else ""
        project = e.project or "(no project)"
        if e.epsilon is not None:  # a private release: the budget it spent, before it measured
            say(
                f"{e.id:>5}  {e.time[:19].replace('T', ' ')}  {project}{deleted}  private release  "
                f"ε = {e.epsilon:g}  δ = {e.delta:g}  {e.source_name}  {e.user} ({e.made_by})"
            )
            continue
        if e.total_epsilon is not None:  # a change of a file's privacy budget
            say(
                f"{e.id:>5}  {e.time[:19].replace('T', ' ')}  {project}{deleted}  privacy budget set  "
                f"ε = {e.total_epsilon:g}  δ = {e.total_delta:g}  {e.source_name}  {e.user} ({e.made_by})"
            )
            continue
        who = (
            f"drafted by {e.drafted_by}, approved by {e.approved_by}"
            if e.four_eyes
            else (f"{e.user}, one step (single user)" if e.drafted_by else e.user)
        )
        say(
            f"{e.id:>5}  {e.time[:19].replace('T', ' ')}  {e.project}{deleted}  {e.target}  "
            f"{'met' if e.met else 'NOT met'}  released {e.released:,}  suppressed {e.suppressed:,}  "
            f"table {e.released_sha256[:16]}  package {(e.package_sha256 or '-')[:16]}  {who} ({e.made_by})"
        )
    if not problems:
        say(f"chain              intact ({len(audit_entries(store)):,} entries, each covering the one before)")
    return 1 if problems else 0


def seen_project(args: argparse.Namespace) -> tuple[int, bytes] | None:
    """The project ``--project`` names as this command found it when it started: its number and
    key, or None when there is none of that name yet (looked up once per command). The release
    is recorded into that project only if it still has that name then (a delete or rename
    meanwhile is refused), and a project the command creates is created with the key its
    pseudonyms were made with."""
    if not hasattr(args, "project_seen"):
        store = _store()
        member = team_member(store)
        try:
            summary = store.summary(args.project)
            if member is not None:  # on a team's store only a member allowed the key reads it
                require(store, args.project, member, "key")
            args.project_seen = (summary.id, store.key(summary.id))
        except AccessError:
            raise
        except StoreError:
            raise
        except ProjectError:  # no project of that name (or it went just now): this release creates it
            args.project_seen = None
    return args.project_seen


def project_number(args: argparse.Namespace) -> int | None:
    """The number of the project ``--project`` named when the command started (None: none yet)."""
    seen = seen_project(args)
    return None if seen is None else seen[0]


def project_store_key(args: argparse.Namespace, *, given: bytes | None = None, path: str | None = None) -> bytes:
    """The pseudonym key of ``--project NAME``: the project's, kept in the store; for a project
    this command creates, the key of ``--key-file`` (``given``, read from ``path``) or else a new
    key (made once per command), which ``record_release`` creates it with. A key file whose key is
    not the existing project's is refused in a sentence (another key would break the linkage of
    its deliveries)."""
    seen = seen_project(args)
    if seen is None:  # no project of that name yet: record_release creates it with this key
        if getattr(args, "new_project_key", None) is None or given is not None:
            args.new_project_key = given if given is not None else new_key()
        return args.new_project_key
    kept = seen[1]
    if given is not None and bytes(given) != kept:
        raise KeyFileError(
            f"The key file '{Path(path or '').name}' (key id {key_id(given)}) is not the key of the project "
            f"'{printable(args.project)}' (key id {key_id(kept)}): another key gives other pseudonyms and dates, so "
            "nothing was written; give the project's key file or leave out --key-file to use the key it keeps."
        )
    return kept


def write_or_record(
    args: argparse.Namespace,
    copy: WorkingCopy,
    recipe: Recipe,
    *,
    table: bytes,
    package: bytes | None,
    outputs: Sequence[tuple[str, bytes]],
    source: bytes | None,
    links: LinkedDeliveries | None = None,
) -> None:
    """``anonymize``'s last step, in memory and on an engine: ``outputs`` (path, bytes) and the
    package (``--package``) written, or, with ``--project``, written and recorded with the
    project's audit entry as one unit (``record_release``; a team's draft kept in
    ``args.team_draft``)."""
    if args.project:
        args.team_draft = record_release(
            args.project,
            copy,
            recipe,
            table=table if args.out else None,
            package=package,
            source=source,
            stream=sys.stderr if args.json else None,
            key=getattr(args, "new_project_key", None),
            project_id=project_number(args),
            outputs=outputs,
            package_path=args.package,
            links=links,
        )
        return
    for path, data in outputs:
        write(path, data)
    if package is not None:
        write(args.package, package)


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
    project_id: int | None = None,
    outputs: Sequence[tuple[str, bytes]] = (),
    package_path: str | None = None,
    links: LinkedDeliveries | None = None,
):
    """``--project NAME``: write ``outputs`` (path, bytes) and the package (to ``package_path``)
    and record what was written (the package, else the table) in the project's audit log, as
    one unit (``anonlib.projects.releasing``): the files and the entry appear together or not
    at all. The project is created from ``copy`` when there is none of that name (keeping
    ``source``, the file read, and ``key``, the key its pseudonyms were made with). ``project_id``
    (``project_number``): the project the command found when it started, which must still be the
    project of that name. ``links``: the earlier deliveries the release was checked against
    (``linked_to``): recorded only if no delivery was recorded into the project since (else
    ``DeliveredMeanwhileError``: ``in_turn`` runs the command again). The lines saying so go to ``stream`` (standard error under ``--json``). On a
    team's store nothing is written: the release is kept as a draft, returned (``anonlib.projects.team``)."""
    store = _store()
    out = stream or sys.stdout
    sample = next((key for key, x in SAMPLES.items() if x.title == copy.loaded.name), None)
    origin = f"sample:{sample}" if source is None and sample else "upload:" + str(copy.loaded.name)
    state = ProjectState.of(copy, origin)
    member = team_member(store)
    if member is not None:  # a team's store: a draft, nothing written until a second person approves it
        return _draft(store, member, name, state, copy, recipe, package, source, key, out, table is None)
    if package is None and table is None:  # nothing released to record: the project is made, the files written
        try:
            store.summary(name)
        except ProjectError:
            try:
                store.create(
                    name,
                    state,
                    source,
                    keep_file=source is not None,
                    change="created by the command line",
                    exact_name=True,
                    key=key,
                )
            except ProjectError as refused:
                try:
                    store.summary(name)  # another process created it meanwhile: joined
                except ProjectError:
                    raise refused from None
        for path, data in outputs:
            write(path, data, stream=stream)
        return
    done = release_into_project(
        store,
        name,
        state,
        recipe,
        table if table is not None else b"",
        outputs=outputs,
        package=package,
        package_path=package_path,
        source=source,
        key=key,
        project_id=project_id,
        seen=None if links is None else links.seen,
    )
    for path in done.files:
        say(f"written            {path}", file=out)
    say(f"audit log          entry {done.entry.id} of project {done.entry.project} ({store.where})", file=out)


CHECK_ROUNDS = 10  # how often a delivery is checked again when others are recorded into its project meanwhile


def in_turn(handler):
    """``handler`` (``anonymize`` or ``apply``) run again, on the project as it is now, when another
    delivery was recorded into its ``--project`` while this one was checked against the earlier ones
    (``DeliveredMeanwhileError``: nothing was written), at most ``CHECK_ROUNDS`` times; then refused
    in one sentence. Each delivery is so checked against every one recorded before it, never two
    passing on the same state."""

    def run(args: argparse.Namespace) -> int:
        for _ in range(CHECK_ROUNDS - 1):
            try:
                return handler(args)
            except DeliveredMeanwhileError:
                for seen in ("project_seen", "new_project_key"):  # found again: created meanwhile, with its key
                    if hasattr(args, seen):
                        delattr(args, seen)
                print(
                    "note: another delivery was recorded into the project meanwhile; this one is checked again "
                    "against it.",
                    file=sys.stderr,
                )
        try:
            return handler(args)
        except DeliveredMeanwhileError:
            raise ProjectError(
                f"Refused, nothing written: other deliveries were recorded into the project "
                f"'{printable(args.project)}' while this one was checked, {CHECK_ROUNDS} times in a row; run it "
                "again once they are done."
            ) from None

    return run


def linked_to(name: str, target: ReleaseTarget, steps) -> LinkedDeliveries:
    """``--project NAME``: the project's earlier deliveries a new release of ``target`` links to
    (its owner columns pseudonymised by ``steps`` under the same key; ``anonlib.projects.linked``)."""
    if not target.linkable:
        return LinkedDeliveries(None, 0, 0)
    owned = [s for s in steps if isinstance(s, PseudonymizeStep) and s.column in target.linked]
    keys = {s.column: s.key_id for s in owned}
    return linked_deliveries(_store(), name, target, keys, lengths={s.column: s.length for s in owned})


def _draft(
    store, member, name: str, state: ProjectState, copy: WorkingCopy, recipe, package, source, key, out, no_table
):
    """``--project NAME`` on a team's store: the release kept as a draft of the project (created,
    with ``member`` as its owner, when there is none of that name), nothing written; the draft
    (None when nothing was asked to be released: the project is made, no draft)."""
    try:
        store.summary(name)
    except ProjectError:
        ref = store.create(
            name,
            state,
            source,
            keep_file=source is not None,
            change="created by the command line",
            exact_name=True,
            key=key,
        )
        add_owner(store, ref, member)
    if package is None and no_table:
        return None
    if package is None:
        from ..workflow.package import release_package

        package = release_package(copy, columns=recipe.columns)
    draft = draft_release(store, name, package, member=member, source=source)
    say(
        f"draft              release {draft.id} of project {draft.project}: nothing written until another member approves it",
        file=out,
    )
    say(f"                   (projects approve {draft.project} --release {draft.id}; then projects release)", file=out)
    return draft


def project_for(name: str, dataset, source: bytes | None, origin: str, reading: Reading | None = None) -> ProjectRef:
    """``--project NAME`` of a command that does not change the working copy (``synthesize``):
    the project of that name, created from ``dataset`` (keeping ``source``, read as ``reading``
    says, with its SHA-256) when there is none."""
    store = _store()
    member = team_member(store)
    try:
        ref = store.summary(name).ref
    except ProjectError:  # no project of that name: this release starts it
        copy = WorkingCopy.start(dataset, reading=reading)
        ref = store.create(
            name, ProjectState.of(copy, origin), source, change="created by the command line", exact_name=True
        )
        if member is not None:
            add_owner(store, ref, member)
    if member is not None:
        require(store, ref, member, "draft")
    return ref


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
    register_actions(sub, _store, say)
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
    export.add_argument(
        "--without-file",
        action="store_true",
        help="leave the project's kept file (the raw records) out; the imported project keeps its SHA-256 only",
    )
    export.set_defaults(handler=_export, outputs=("out",), inputs=())
    imported = sub.add_parser("import", help="add a project from a file written by projects export")
    imported.add_argument("file")
    imported.add_argument("--name", help="the name to give it (default: its own)")
    imported.set_defaults(handler=_import, outputs=(), inputs=("file",))
    budget = sub.add_parser(
        "budget",
        help="set (or show) the total privacy budget of a project's file (shared by every project over it; "
        "each change is an audit entry) for its private releases (synthesize)",
    )
    budget.add_argument("name", nargs="?", help="the project whose file's budget to set or show")
    budget.add_argument("--file", metavar="FILE", help="a file's budget instead (by its SHA-256), without a project")
    budget.add_argument(
        "--epsilon", type=real_argument, metavar="E", help="the total ε the file's private releases may spend"
    )
    budget.add_argument(
        "--delta", type=real_argument, metavar="D", help="the total δ (default: the file's δ total stays)"
    )
    budget.add_argument(
        "--raise",
        dest="raise_total",
        action="store_true",
        help="raise the file's total above the smallest set over it (the owner's decision; the audit entry names "
        "the earlier total); without it the smallest total set holds",
    )
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
    audit.add_argument(
        "--head",
        action="store_true",
        help="print only the chain's head digest (exit 1 when the chain is broken), to keep in a second place",
    )
    audit.add_argument(
        "--expect-head",
        metavar="HEX",
        help="check that the chain extends a head kept earlier (exit 1 when entries were removed or rewritten)",
    )
    audit.add_argument("--json", action="store_true", help="print the entries as JSON")
    audit.set_defaults(outputs=(), inputs=())
