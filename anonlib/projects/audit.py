"""The audit log: every release package or released table made from a project, append-only.

``record_package`` (a release package: the dashboard's download, ``anonymize`` or
``apply`` with ``--package``) and ``record_table`` (a released table written by
``--out`` without a package) measure what they record on the bytes as written: the
target recounted on ``released.csv`` with the release's own recipe
(``anonlib.workflow.verify.recount``), the SHA-256 of the table, of the package and of
each of its parts. The entry and the project's release (its recipe, package and,
when the project keeps files, the source read) are written in one transaction.

Append-only, three ways: the app has no call that changes or deletes an entry; the
database refuses UPDATE and DELETE on the table (triggers, on SQLite and
PostgreSQL); and each entry's SHA-256 covers the SHA-256 of the entry before it in its
project, so an entry changed or removed by other means breaks its project's chain
(``anonlib.projects.chain``: one chain per project, their heads, the log's head that
``audit --head`` prints). A release checks its own project's chain and is refused while it
fails. A package released into a project through ``record_package(..., stamp=True)``
carries ``audit.json`` (``anonlib.workflow.package.stamp_package``): its entry number and
its project's head before it, so a package newer than the log's head is caught too
(``package_log_problems``, for ``verify --project``).

``verify_entry`` re-checks a recorded release against what the project kept: the
package with ``anonlib.workflow.verify`` and the kept source file (the recipe
re-applied, byte for byte, its pseudonyms and date shifts under the project's key), or,
for a table written without a package, the recipe re-applied to the kept file and its
digest compared.

Example:
    >>> import tempfile
    >>> import pandas as pd
    >>> from anonlib.core.dataset import Dataset
    >>> from anonlib.workflow import ReleaseTarget, WorkingCopy, release_package
    >>> from anonlib.projects.state import ProjectState
    >>> from anonlib.projects.store import ProjectStore
    >>> store = ProjectStore(f"sqlite:///{tempfile.mkdtemp()}/projects.sqlite")
    >>> ds = Dataset.from_frame("d.csv", pd.DataFrame({"age": [30, 30, 40, 40]}), {"age": "quasi-identifier"})
    >>> copy = WorkingCopy.start(ds, ReleaseTarget(k=2))
    >>> ref = store.create("survey", ProjectState.of(copy, "sample:x"))
    >>> entry = record_package(store, ref, release_package(copy), made_by="dashboard", user="anna")
    >>> entry.met, entry.records, entry.suppressed, sorted(entry.parts)[:2]
    (True, 4, 0, ['README.txt', 'SHA256SUMS'])
    >>> [e.project for e in audit_entries(store)], verify_chain(store)
    (['survey'], [])
"""

from __future__ import annotations

import getpass
import io
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import Connection, insert, select, text

from ..core.archives import read_member
from ..core.errors import AnonlibError, DeliveredMeanwhileError, PackageError, ProjectError
from ..core.masking import printable
from ..workflow.package import RECIPE_FILE, TABLE_FILE, package_stamp, stamp_package
from ..workflow.recipe import Recipe, apply_recipe
from ..workflow.release import digest
from ..workflow.verify import SOURCE, TARGET, PartCheck, Verification, recount, verify_package
from .chain import (
    append_entry,
    checked_tail,
    entry_of,
    lock_chain,
    named_head,
    read_entries,
    snapshot,
    verify_chain,
)
from .pending import committed
from .records import AuditEntry, ProjectRef, dumps, now
from .schema import PROJECTS, RELEASES
from .store import ProjectStore, through_functions

AUDIT_LOG = "audit log"  # the part a verification names when the log fails its check
DASHBOARD, COMMAND_LINE = "dashboard", "command line"


def current_user() -> str:
    """The operating-system user running anonlib ("unknown" when it cannot be told)."""
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no user name in the environment or the password database
        return "unknown"


def package_parts(package: bytes) -> tuple[dict[str, str], bytes, Recipe]:
    """The SHA-256 of each member of a release package, its released table and its recipe."""
    try:
        with zipfile.ZipFile(io.BytesIO(package)) as archive:
            members = {info.filename: read_member(archive, info) for info in archive.infolist()}
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, zlib.error):
        raise PackageError("The release package is not a readable zip file.") from None
    if TABLE_FILE not in members or RECIPE_FILE not in members:
        raise PackageError(f"The release package lacks {TABLE_FILE} or {RECIPE_FILE}.")
    parts = {name: digest(data) for name, data in members.items()}
    return parts, members[TABLE_FILE], Recipe.loads(members[RECIPE_FILE])


def record_package(
    store: ProjectStore,
    project: int | str | ProjectRef,
    package: bytes,
    *,
    source: bytes | None = None,
    made_by: str = DASHBOARD,
    user: str | None = None,
    stamp: bool = False,
    before_commit: Callable[[bytes | None], None] | None = None,
    seen: tuple[int | None, tuple[int, ...]] | None = None,
) -> AuditEntry:
    """Record a release package made from ``project`` (``source``: the file it was made from,
    kept with the release when the project keeps files). ``stamp``: the package recorded
    (and handed to ``before_commit``, and kept) is ``package`` with ``audit.json`` stating
    its entry number and the log's head before it (see ``Recording``). ``seen``: the project as
    a delivery's cumulative check read it (recorded only if it is still so, ``Recording.seen``)."""
    parts, table, recipe = package_parts(package)
    return record_entry(
        store,
        project,
        recipe,
        table,
        package,
        parts,
        source,
        made_by,
        user,
        Recording(stamp=stamp, before_commit=before_commit, seen=seen),
    )


def record_table(
    store: ProjectStore,
    project: int | str | ProjectRef,
    recipe: Recipe,
    table: bytes,
    *,
    source: bytes | None = None,
    made_by: str = COMMAND_LINE,
    user: str | None = None,
    before_commit: Callable[[bytes | None], None] | None = None,
) -> AuditEntry:
    """Record a released table (``table``, its bytes as written) made with ``recipe``, the
    release's own recipe (the one ``WorkingCopy.recipe`` writes for it)."""
    parts = {TABLE_FILE: digest(table)}
    return record_entry(
        store, project, recipe, table, None, parts, source, made_by, user, Recording(before_commit=before_commit)
    )


def record_stamped_package(
    store: ProjectStore,
    project: int | str | ProjectRef,
    package: bytes,
    *,
    source: bytes | None = None,
    made_by: str = DASHBOARD,
    user: str | None = None,
    seen: tuple[int | None, tuple[int, ...]] | None = None,
) -> tuple[AuditEntry, bytes]:
    """``record_package`` with the package stamped with its entry (``audit.json``): the entry and
    the package as recorded, the one to hand out."""
    recorded: list[bytes] = []
    entry = record_package(
        store,
        project,
        package,
        source=source,
        made_by=made_by,
        user=user,
        stamp=True,
        before_commit=recorded.append,
        seen=seen,
    )
    return entry, recorded[-1]


@dataclass(frozen=True)
class Recording:
    """How an entry is recorded beyond its content: ``stamp`` the package with its entry (the
    entry then records the stamped package); ``create``: a function making the project, in the
    entry's transaction, when there is none of that name (so a release that fails leaves no
    project behind, and a project another process just created is joined); ``before_commit``
    runs last in the transaction with the package as recorded (e.g. writing the files of the
    release under temporary names: if it fails nothing is recorded); ``marker``: the pending
    release (``anonlib.projects.pending``) the commit turns into a committed one. ``project_id``:
    the number of the project the release was made for (it existed when the release started):
    the entry is refused in a sentence unless that project still has that name, so a release
    racing a delete or a rename never makes a new project (with a new key) under the old name.
    ``key``: the key the release's pseudonyms and date shifts were made with: refused unless it
    is the project's (a project created meanwhile by another command has its own). ``seen``: the
    project as a delivery's cumulative check read it (``LinkedDeliveries.seen``): the entry is
    recorded only if the project is still so, in the same transaction that locks the project
    (SQLite's ``BEGIN IMMEDIATE``; PostgreSQL's row lock), else ``DeliveredMeanwhileError``
    (nothing recorded: the check is made again), so two deliveries never pass on one state."""

    stamp: bool = False
    create: Callable[[Connection], None] | None = None
    before_commit: Callable[[bytes | None], None] | None = None
    marker: str | None = None
    wait: float | None = None
    # ``team.md``: who drafted and who approved the release (None: a single user's one-step release,
    # recorded with the user as both); ``approved_sha256``: the draft's digest that was approved
    drafted_by: str | None = None
    approved_by: str | None = None
    approved_sha256: str | None = None
    project_id: int | None = None
    key: bytes | None = None
    seen: tuple[int | None, tuple[int, ...]] | None = None
    draft_id: int | None = None  # the approved draft handed out (a team's release)


def record_entry(
    store, project, recipe: Recipe, table: bytes, package, parts, source, made_by, user, how: Recording
) -> AuditEntry:
    """Append one release to the audit log in one transaction (``how``: create the project, stamp
    the package, write files before the commit), its numbers recounted on ``table`` as written;
    refused in a sentence while the log fails its check (its head included). ``record_package``
    and ``record_table`` call it, and so does a release into a project as one unit
    (``anonlib.projects.releasing``)."""
    check = recount(recipe, table)  # measured on the table as written
    stamp = now()
    with store._transaction(how.wait) as c:
        lock_chain(c)  # first, as every append does: then the project's row (two locks, one order)
        row = store._row(c, project, missing_ok=how.create is not None)
        if how.project_id is not None:
            _require_same_project(store, c, project, row, how.project_id)
        if how.seen is not None and released_now(c, row) != tuple(how.seen):
            raise DeliveredMeanwhileError(
                f"Another delivery was recorded into the project '{printable(_name_of(project))}' while this one was "
                "checked against its earlier deliveries; nothing was released."
            )
        if row is None:
            how.create(c)
            row = store._row(c, project)
        elif how.key is not None and bytes(store._key(c, int(row["id"]))) != bytes(how.key):
            raise ProjectError(
                f"The project '{printable(row['name'])}' holds another pseudonym key than the one this release was made with "
                "(another command created it, or gave it its key, while this one ran); nothing was released: run "
                "the command again to release with the project's key."
            )
        tail = checked_tail(store, c, int(row["id"]))  # its project's chain checked, none other
        audit_id = tail.number
        members_login = through_functions(c)  # the entry names the login itself, whatever ``user`` says
        username = str(c.execute(text("SELECT session_user")).scalar()) if members_login else (user or current_user())
        drafted_by = how.drafted_by or username
        approved_by = how.approved_by if how.drafted_by else username  # single user: one step, both the same
        if how.stamp and package is not None:
            team = (  # a team's package states who drafted and who approved it (a single user's, as before)
                {"drafted_by": drafted_by, "approved_by": approved_by, "approved_sha256": how.approved_sha256}
                if how.drafted_by
                else {}
            )
            package = stamp_package(
                package,
                {
                    "project": row["name"],
                    "entry": audit_id,
                    "head_before": tail.head.to_json(),  # its project's chain before it
                    **team,
                },
            )
            parts = package_parts(package)[0]
        entry = AuditEntry(
            id=audit_id,
            time=stamp,
            project_id=int(row["id"]),
            project=row["name"],
            source_name=recipe.source.name,
            source_sha256=recipe.source.sha256,
            target=recipe.target.describe(),
            met=bool(check.met),
            records=int(check.loaded_records),
            released=int(check.records),
            suppressed=int(check.suppressed_records),
            released_sha256=digest(table),
            package_sha256=None if package is None else digest(package),
            parts=dict(parts),
            user=username,
            made_by=made_by,
            previous=tail.previous,
            entry_sha256="",
            drafted_by=drafted_by,
            approved_by=approved_by,
        )
        if members_login:  # recorded by the team's function: the draft's digest and names checked there
            if how.draft_id is None:
                raise ProjectError(
                    "In a team's store a release is recorded only when an approved draft is handed out "
                    "(projects release NAME --release ID)."
                )
            content = entry.content()
            c.execute(
                text("SELECT public.anonlib_hand_out(:id, :content, :recipe, :package)"),
                {"id": how.draft_id, "content": dumps(content), "recipe": recipe.dumps(), "package": package},
            )
            if how.before_commit is not None:
                how.before_commit(package)
            values = content | {"parts": dumps(content["parts"]), "entry_sha256": digest(dumps(content).encode())}
            values["username"] = values.pop("user")
            return entry_of({**values, "id": audit_id, "user": values["username"]}, deleted=False)
        values = append_entry(store, c, entry, tail)
        keep = bool(row["keep_file"]) and source is not None
        c.execute(
            insert(RELEASES).values(
                project_id=int(row["id"]),
                time=stamp,
                source_name=recipe.source.name,
                source_sha256=recipe.source.sha256,
                source_blob=store._put_blob(c, source) if keep else None,
                recipe=recipe.dumps(),
                released_sha256=entry.released_sha256,
                package_blob=None if package is None else store._put_blob(c, package),
                # a table released without a package is kept too: later deliveries are judged with it
                table_blob=store._put_blob(c, table) if package is None and table else None,
                audit_id=audit_id,
            )
        )
        if how.marker is not None:
            committed(c, how.marker, audit_id)
        if how.before_commit is not None:
            how.before_commit(package)
        store.require_present()
    return entry_of({**values, "id": audit_id, "user": values["username"]}, deleted=False)


def released_now(c: Connection, row) -> tuple[int | None, tuple[int, ...]]:
    """In the transaction ``c`` recording a release (the project locked): the project ``row``
    (None: there is none of that name) as ``anonlib.projects.linked.LinkedDeliveries.seen`` states it."""
    if row is None:
        return (None, ())
    project_id = int(row["id"])
    lock = select(PROJECTS.c.id).where(PROJECTS.c.id == project_id)
    if c.dialect.name == "postgresql":  # the project's row locked until the entry is committed
        c.execute(lock.with_for_update())
    r = RELEASES
    ids = c.execute(select(r.c.audit_id).where(r.c.project_id == project_id).order_by(r.c.audit_id)).scalars()
    return (project_id, tuple(int(i) for i in ids))


def _name_of(project) -> str:
    return project.name if isinstance(project, ProjectRef) else str(project)


def _require_same_project(store: ProjectStore, c: Connection, project, row, project_id: int) -> None:
    """A sentence when the project a release was made for (number ``project_id``) was deleted or
    renamed since (``row``: the project now found under the release's name, or None)."""
    if row is not None and int(row["id"]) == int(project_id):
        return
    now = store._row(c, int(project_id), missing_ok=True)
    name = project.name if isinstance(project, ProjectRef) else str(project)
    if now is None:
        raise ProjectError(
            f"The project '{printable(name)}' was deleted while this release was being made; nothing was released (run the "
            "command again to start a new project of that name)."
        )
    raise ProjectError(
        f"The project '{printable(name)}' was renamed to '{printable(now['name'])}' while this release was being made; nothing was "
        "released (run the command again with the project's new name)."
    )


def audit_entries(store: ProjectStore, project: str | None = None) -> list[AuditEntry]:
    """The audit log, oldest first; ``project``: only the entries made under that name."""
    with snapshot(store) as c:
        return read_entries(c, project)


def package_log_problems(store: ProjectStore, package: bytes, project: str | None = None) -> list[str]:
    """What is wrong between a release package and the audit log (empty when nothing is):
    the log's own problems (``verify_chain``), then, for a package stating its entry
    (``audit.json``), whether the log has that entry, records this package in it and
    followed the head the package states; for an older package without ``audit.json``,
    whether the log records it at all. ``project``: the project it should belong to.
    For ``verify --project``.

    >>> import tempfile
    >>> import pandas as pd
    >>> from anonlib.core.dataset import Dataset
    >>> from anonlib.workflow import ReleaseTarget, WorkingCopy, release_package
    >>> from anonlib.projects.state import ProjectState
    >>> store = ProjectStore(f"sqlite:///{tempfile.mkdtemp()}/projects.sqlite")
    >>> ds = Dataset.from_frame("d.csv", pd.DataFrame({"age": [30, 30]}), {"age": "quasi-identifier"})
    >>> copy = WorkingCopy.start(ds, ReleaseTarget(k=2))
    >>> ref = store.create("survey", ProjectState.of(copy, "sample:x"))
    >>> kept = []
    >>> entry = record_package(store, ref, release_package(copy), stamp=True, before_commit=kept.append)
    >>> package_log_problems(store, kept[0], "survey")
    []
    >>> package_log_problems(store, release_package(copy), "survey")
    ["This package is not recorded in the audit log of project 'survey'."]
    """
    problems = verify_chain(store)
    stamp = package_stamp(package)
    where = f" of project '{printable(str(project))}'" if project is not None else ""
    if stamp is None:
        found = [e for e in audit_entries(store, project) if e.package_sha256 == digest(package)]
        if not found:
            problems.append(f"This package is not recorded in the audit log{where}.")
        return problems
    try:
        number = int(stamp.get("entry"))
        before = stamp.get("head_before") or {}
    except (TypeError, ValueError):
        return [*problems, "This package's audit.json does not state an entry number."]
    if project is not None and stamp.get("project") != project:
        problems.append(
            f"This package was released into the project '{printable(str(stamp.get('project')))}', not '{printable(str(project))}'."
        )
    head = named_head(store, str(stamp.get("project")))
    entries = {e.id: e for e in audit_entries(store)}
    if number not in entries:
        newest = max(entries, default=0)
        problems.append(
            f"This package is audit entry {number} of project '{stamp.get('project')}', but the audit log "
            f"{'is empty' if not entries else f'ends at entry {newest}'} (its project's head says "
            f"{'no entry' if head.last_entry is None else f'entry {head.last_entry}'}): the log lost the entry "
            "of this package."
        )
        return problems
    entry = entries[number]
    if entry.package_sha256 != digest(package):
        problems.append(f"Audit entry {number} records another package than this one (another SHA-256).")
    if before.get("sha256") != entry.previous:
        problems.append(
            f"This package states another head of the audit log before it than the entry before audit entry {number}."
        )
    return problems


def release_files(store: ProjectStore, audit_id: int) -> tuple[Recipe, bytes | None, bytes | None, str]:
    """The recipe, package and source file kept with the release of an audit entry, and the
    source's name; a sentence when its project (and so its files) was deleted."""
    r = RELEASES
    with store._transaction() as c:
        row = c.execute(select(r).where(r.c.audit_id == int(audit_id))).mappings().first()
    if row is None:
        raise ProjectError(
            f"Audit entry {audit_id} belongs to a project that was deleted with its files; the entry stays as a "
            "record but can no longer be verified."
        )
    return (
        Recipe.loads(row["recipe"]),
        store.blob(row["package_blob"]),
        store.blob(row["source_blob"]),
        row["source_name"],
    )


def verify_entry(store: ProjectStore, audit_id: int) -> Verification:
    """Verify a recorded release again with what its project kept (see the module text)."""
    recipe, package, source, name = release_files(store, audit_id)
    entry = next((e for e in audit_entries(store) if e.id == int(audit_id)), None)
    checks: list[PartCheck] = [PartCheck(AUDIT_LOG, False, problem) for problem in verify_chain(store)]
    # pseudonyms and date shifts replay under the key the project keeps (its releases were made with it)
    key = store.key(entry.project_id) if entry is not None and recipe.key_ids else None
    if package is not None:
        if entry is not None and digest(package) != entry.package_sha256:
            checks.append(PartCheck("package", False, "kept in the project is not the one the audit log recorded"))
        checks.extend(verify_package(package, source, source_name=name, key=key).checks)
    else:
        try:
            replay = apply_recipe(recipe.with_key(key), source, name=name) if source is not None else None
        except AnonlibError as err:
            replay = None
            checks.append(PartCheck(SOURCE, False, f"could not be re-applied: {err}"))
        if replay is not None:
            same = entry is not None and digest(replay.csv) == entry.released_sha256
            checks.append(
                PartCheck(
                    TABLE_FILE,
                    same,
                    "is reproduced byte for byte by re-applying the recipe to the kept file"
                    if same
                    else "is not reproduced by re-applying the recipe to the kept file",
                )
            )
            result = recount(recipe, replay.csv)
            checks.append(PartCheck(TARGET, result.met, f"recounted on the table: {result.sentence()}"))
    if source is None and recipe.source.sha256 is not None:  # a bundled sample is no file to keep
        checks.append(
            PartCheck(SOURCE, False, "was not kept in the project, so the recipe cannot be re-applied to it here")
        )
    return Verification(tuple(checks))
