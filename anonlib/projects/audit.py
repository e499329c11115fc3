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
PostgreSQL); and each entry's SHA-256 covers the SHA-256 of the entry before it, so
an entry changed or removed by other means breaks the chain (``verify_chain``). The
digests show a change; they are not a signature (whoever can write the database can
rewrite the whole chain).

The log keeps a head in the store's ``meta`` table, written in the transaction of each
entry: the number of entries, the last entry's number and its SHA-256 (``log_head``).
Every read checks the log against it (``verify_chain``), so entries removed from the
end of the log (which leaves the chain before them intact) are caught; a release is
refused while the log fails its check. A package released into a project through
``record_package(..., stamp=True)`` carries ``audit.json`` (``anonlib.workflow.package.stamp_package``):
its entry number and the head before it, so a package newer than the log's head is
caught too (``package_log_problems``, for ``verify --project``).

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
import json
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

from sqlalchemy import Connection, func, insert, select, text

from ..core.archives import read_member
from ..core.errors import AnonlibError, DeliveredMeanwhileError, PackageError, ParameterError, ProjectError
from ..core.masking import printable
from ..workflow.package import RECIPE_FILE, TABLE_FILE, package_stamp, stamp_package
from ..workflow.recipe import Recipe, apply_recipe
from ..workflow.release import digest
from ..workflow.verify import SOURCE, TARGET, PartCheck, Verification, recount, verify_package
from .pending import committed
from .records import AuditEntry, ProjectRef, dumps, now
from .schema import AUDIT, PROJECTS, RELEASES
from .store import ProjectStore, name_key, through_functions

GENESIS = "0" * 64  # the "previous" digest of the first entry
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


@dataclass(frozen=True)
class LogHead:
    """The head of the audit log as the store's ``meta`` table keeps it: how many entries the
    log has, the number of its last entry and that entry's SHA-256 (``GENESIS`` when empty).
    ``entries`` and ``last_entry`` are None in a store written before the head held them."""

    entries: int | None
    last_entry: int | None
    sha256: str

    def to_json(self) -> dict:
        return {"entries": self.entries, "last_entry": self.last_entry, "sha256": self.sha256}


HEAD, HEAD_ENTRIES, HEAD_ENTRY = "audit_head", "audit_head_entries", "audit_head_entry"


def _head(store: ProjectStore, c: Connection) -> LogHead:
    digest_ = store._get_meta(c, HEAD) or GENESIS
    entries, last = store._get_meta(c, HEAD_ENTRIES), store._get_meta(c, HEAD_ENTRY)
    return LogHead(None if entries is None else int(entries), None if last is None else int(last), digest_)


def log_head(store: ProjectStore) -> LogHead:
    """The head of the audit log (see ``LogHead``)."""
    with store._transaction() as c:
        return _head(store, c)


def team_chain(c: Connection) -> bool:
    """Whether the log's chain is read through the team's functions: on a team's PostgreSQL store
    a member sees only the entries of their own projects (row-level security), while the chain
    links every entry; ``anonlib_audit_links`` gives the links (numbers and digests, nothing else)."""
    return c.dialect.name == "postgresql" and bool(c.execute(text("SELECT to_regproc('anonlib_audit_links')")).scalar())


def _links(c: Connection) -> list[tuple[int, str, str]]:
    """Every entry's number, previous digest and own digest, oldest first."""
    if team_chain(c):
        rows = c.execute(text("SELECT id, previous, entry_sha256 FROM anonlib_audit_links() ORDER BY id"))
    else:
        rows = c.execute(select(AUDIT.c.id, AUDIT.c.previous, AUDIT.c.entry_sha256).order_by(AUDIT.c.id))
    return [(int(r[0]), r[1], r[2]) for r in rows]


def _tail(c: Connection) -> tuple[int, int | None, str]:
    """What the log itself holds: its number of entries, its last entry's number and SHA-256."""
    if team_chain(c):
        links = _links(c)
        return len(links), (links[-1][0] if links else None), (links[-1][2] if links else GENESIS)
    count = int(c.execute(select(func.count()).select_from(AUDIT)).scalar() or 0)
    last = c.execute(select(AUDIT.c.id, AUDIT.c.entry_sha256).order_by(AUDIT.c.id.desc()).limit(1)).first()
    return count, None if last is None else int(last[0]), GENESIS if last is None else last[1]


def head_problem(head: LogHead, count: int, last: int | None, last_sha256: str) -> str | None:
    """The sentence saying the log and its head disagree (None when they agree).

    >>> print(head_problem(LogHead(3, 3, "b" * 64), 2, 2, "a" * 64))
    The audit log's chain is broken: the log ends at entry 2 (2 entries) but its head says entry 3 (3 entries); entries were removed from its end.
    >>> head_problem(LogHead(2, 2, "a" * 64), 2, 2, "a" * 64) is None
    True
    """
    same = head.sha256 == last_sha256 and (head.entries is None or head.entries == count)
    if same and (head.last_entry is None or head.last_entry == last):
        return None
    ends = "the log is empty" if last is None else f"the log ends at entry {last} ({_counted(count)})"
    says = (
        f"entry {head.last_entry} ({_counted(head.entries)})"
        if head.last_entry is not None and head.entries is not None
        else ("no entry" if head.sha256 == GENESIS else f"an entry of SHA-256 {head.sha256[:16]}")
    )
    fewer = head.entries is not None and head.entries > count or last is None and head.sha256 != GENESIS
    if fewer and last != head.last_entry:
        why = "entries were removed from its end"
    elif fewer:
        why = "entries were removed from it"
    else:
        why = "entries were added or changed by other means"
    return f"The audit log's chain is broken: {ends} but its head says {says}; {why}."


def _counted(n: int) -> str:
    return f"{n:,} {'entry' if n == 1 else 'entries'}"


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
        count, last, last_sha256 = checked_tail(store, c)
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
        audit_id = (last or 0) + 1
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
                    "head_before": {"entries": count, "last_entry": last, "sha256": last_sha256},
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
            previous=last_sha256,
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
        values = append_entry(store, c, entry, count)
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


def checked_tail(store: ProjectStore, c: Connection) -> tuple[int, int | None, str]:
    """In the transaction ``c`` that appends an entry: the chain locked, the log's head checked
    against its tail (a sentence, nothing recorded, when it fails), and the tail as (entries,
    last entry number, last digest)."""
    _lock_chain(c)
    head = _head(store, c)
    count, last, last_sha256 = _tail(c)
    problem = head_problem(head, count, last, last_sha256)
    if problem is not None:
        raise ProjectError(f"{problem[:-1]}; no release is recorded while the log fails its check.")
    return count, last, last_sha256


def append_entry(store: ProjectStore, c: Connection, entry: AuditEntry, count: int) -> dict:
    """Seal ``entry`` (numbered and chained after the tail ``checked_tail`` read: ``count``
    entries), insert it and move the log's head, in the transaction ``c``; the row's values."""
    if through_functions(c):  # a member's login: sealed, numbered and chained by the team's function
        entry = replace(entry, user=str(c.execute(text("SELECT session_user")).scalar()))
    sealed = digest(dumps(entry.content()).encode("utf-8"))
    values = entry.content() | {"parts": dumps(entry.content()["parts"]), "entry_sha256": sealed}
    if "charged" in values:
        values["charged"] = dumps(values["charged"])
    values["username"] = values.pop("user")
    if through_functions(c):
        c.execute(text("SELECT public.anonlib_append_entry(:content)"), {"content": dumps(entry.content())})
        return values
    c.execute(insert(AUDIT).values(id=entry.id, **values))
    if c.dialect.name == "postgresql":  # the numbers are given here: the sequence follows them
        c.execute(text("SELECT setval(pg_get_serial_sequence('audit', 'id'), :n)"), {"n": entry.id})
    store._set_meta(c, HEAD, sealed)
    store._set_meta(c, HEAD_ENTRIES, str(count + 1))
    store._set_meta(c, HEAD_ENTRY, str(entry.id))
    return values


def _lock_chain(c: Connection) -> None:
    """Two releases recorded at once take turns (SQLite's write transaction already does)."""
    if c.dialect.name == "postgresql":
        c.execute(text("SELECT pg_advisory_xact_lock(7306542)"))


def entry_of(row, deleted: bool) -> AuditEntry:
    """An audit entry from its row (``deleted``: its project has been deleted since)."""
    parts = row["parts"]
    return AuditEntry(
        id=int(row["id"]),
        time=row["time"],
        project_id=int(row["project_id"]),
        project=row["project"],
        source_name=row["source_name"],
        source_sha256=row["source_sha256"],
        target=row["target"],
        met=bool(row["met"]),
        records=int(row["records"]),
        released=int(row["released"]),
        suppressed=int(row["suppressed"]),
        released_sha256=row["released_sha256"],
        package_sha256=row["package_sha256"],
        parts=json.loads(parts) if isinstance(parts, str) else dict(parts),
        user=row["user"],
        made_by=row["made_by"],
        previous=row["previous"],
        entry_sha256=row["entry_sha256"],
        project_deleted=deleted,
        epsilon=row.get("epsilon"),
        delta=row.get("delta"),
        drafted_by=row.get("drafted_by"),
        approved_by=row.get("approved_by"),
        total_epsilon=row.get("total_epsilon"),
        total_delta=row.get("total_delta"),
        total_raised=bool(row.get("total_raised")) or None,
        charged=_charged(row.get("charged")),
    )


def _charged(stored) -> tuple[str, ...] | None:
    """The other files a private release was charged against, as the row keeps them (JSON list)."""
    if not stored:
        return None
    listed = json.loads(stored) if isinstance(stored, str) else list(stored)
    return tuple(str(s) for s in listed) or None


def audit_entries(store: ProjectStore, project: str | None = None) -> list[AuditEntry]:
    """The audit log, oldest first; ``project``: only the entries made under that name."""
    with _snapshot(store) as c:
        return _entries(c, project)


def _entries(c: Connection, project: str | None = None) -> list[AuditEntry]:
    a, p = AUDIT, PROJECTS
    query = select(a, p.c.id.label("alive")).select_from(a.outerjoin(p, a.c.project_id == p.c.id)).order_by(a.c.id)
    rows = c.execute(query).mappings().all()
    if project is not None:  # names compared as the store compares them (NFC, spaces collapsed)
        rows = [r for r in rows if name_key(r["project"]) == name_key(project)]
    # an entry of no project (a private release's spend or a file's budget set without one) is not "deleted"
    return [entry_of({**r, "user": r["username"]}, deleted=r["alive"] is None and r["project_id"] != 0) for r in rows]


@contextmanager
def _snapshot(store: ProjectStore) -> Iterator[Connection]:
    """A transaction whose reads all see the store at one moment (on PostgreSQL a repeatable
    read: a release committed meanwhile is not half seen; SQLite's transaction already is)."""
    with store._transaction() as c:
        if c.dialect.name == "postgresql":
            c.execute(text("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"))
        yield c


def verify_chain(store: ProjectStore) -> list[str]:
    """One sentence per entry whose digest or link to the entry before does not hold, one
    when the log and its head disagree (entries removed from its end), and one per release
    kept in a project whose entry the log lacks."""
    with _snapshot(store) as c:
        return chain_problems(store, c)


def chain_problems(store: ProjectStore, c: Connection) -> list[str]:
    """``verify_chain`` read in the transaction ``c`` (e.g. the one that spends a private
    release's budget: the whole chain is checked before anything is spent)."""
    problems = []
    previous = GENESIS
    head = _head(store, c)
    count, last, last_sha256 = _tail(c)
    orphans = c.execute(
        select(RELEASES.c.audit_id, PROJECTS.c.name)
        .select_from(RELEASES.join(PROJECTS, RELEASES.c.project_id == PROJECTS.c.id))
        .where(RELEASES.c.audit_id.not_in(select(AUDIT.c.id)))
        .order_by(RELEASES.c.audit_id)
    ).all()
    entries = _entries(c)
    links = _links(c)
    for number, before, sealed in links:  # every entry's link, also those a team member does not see
        if before != previous:
            problems.append(f"Audit entry {number} does not follow the entry before it (one was removed or changed).")
        previous = sealed
    sealed_as = {number: sealed for number, _, sealed in links}
    for entry in entries:
        if digest(dumps(entry.content()).encode("utf-8")) != entry.entry_sha256 or sealed_as.get(entry.id) != (
            entry.entry_sha256
        ):
            problems.append(f"Audit entry {entry.id} was changed after it was written (its digest does not match).")
    problem = head_problem(head, count, last, last_sha256)
    if problem is not None:
        problems.append(problem)
    for audit_id, name in orphans:
        problems.append(
            f"The project '{printable(name)}' keeps the release of audit entry {audit_id}, which the audit log lacks."
        )
    return problems


@dataclass(frozen=True)
class HeadCheck:
    """Whether the audit log extends a head kept elsewhere (``audit --head`` printed it): the
    chain holds whole and one of its entries has that SHA-256 (``entry``; None for the empty
    log's head), followed by ``after`` entries; ``problem`` says why not."""

    kept: str
    extends: bool
    entry: int | None
    after: int
    problem: str | None = None

    def sentence(self) -> str:
        if not self.extends:
            return self.problem or ""
        where = "the empty log's head" if self.entry is None else f"entry {self.entry}"
        return (
            f"The audit log extends the head kept ({self.kept[:16]}…, {where}): {_counted(self.after)} written after "
            "it, the chain intact."
        )

    def to_json(self) -> dict:
        return {
            "expected": self.kept,
            "extends": self.extends,
            "entry": self.entry,
            "entries_after": self.after,
            "problem": self.problem,
        }


def head_hex(text: str) -> str:
    """A head digest as a user gives it: 64 hexadecimal digits (any case, spaces around), else
    one sentence.

    >>> head_hex(" " + "AB" * 32 + "\\n") == "ab" * 32
    True
    """
    given = str(text).strip().lower()
    if len(given) != 64 or any(ch not in "0123456789abcdef" for ch in given):
        raise ParameterError(
            "--expect-head takes the 64 hexadecimal digits audit --head printed "
            f"(got {len(given)} character{'s' if len(given) != 1 else ''} that are not one)."
        )
    return given


def head_extends(store: ProjectStore, kept: str) -> HeadCheck:
    """Check that the audit log extends the head ``kept`` (64 hex digits, see ``head_hex``): the
    whole chain verified, and one of its entries sealed with that SHA-256 (or ``kept`` the empty
    log's head). An entry removed or changed before it, a chain rewritten from it, or the log
    cut back below it fails, in one sentence."""
    kept = head_hex(kept)
    with _snapshot(store) as c:
        problems = chain_problems(store, c)
        links = _links(c)
    if problems:
        return HeadCheck(kept, False, None, 0, f"{problems[0][:-1]}, so it cannot extend the head kept.")
    if kept == GENESIS:
        return HeadCheck(kept, True, None, len(links))
    for i, (number, _, sealed) in enumerate(links):
        if sealed == kept:
            return HeadCheck(kept, True, number, len(links) - i - 1)
    return HeadCheck(
        kept,
        False,
        None,
        0,
        f"The audit log does not extend the head kept ({kept[:16]}…): none of its {_counted(len(links))} has that "
        "SHA-256, so entries were removed or the chain was rewritten since the head was kept.",
    )


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
    head = log_head(store)
    entries = {e.id: e for e in audit_entries(store)}
    if number not in entries:
        newest = max(entries, default=0)
        problems.append(
            f"This package is audit entry {number} of project '{stamp.get('project')}', but the audit log "
            f"{'is empty' if not entries else f'ends at entry {newest}'} (its head says "
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
