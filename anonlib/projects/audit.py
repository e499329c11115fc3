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

``verify_entry`` re-checks a recorded release against what the project kept: the
package with ``anonlib.workflow.verify`` and the kept source file (the recipe
re-applied, byte for byte), or, for a table written without a package, the recipe
re-applied to the kept file and its digest compared.

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

from sqlalchemy import Connection, insert, select, text

from ..core.errors import AnonlibError, PackageError, ProjectError
from ..workflow.package import RECIPE_FILE, TABLE_FILE
from ..workflow.recipe import Recipe, apply_recipe
from ..workflow.release import digest
from ..workflow.verify import SOURCE, TARGET, PartCheck, Verification, recount, verify_package
from .records import AuditEntry, ProjectRef, dumps, now
from .schema import AUDIT, PROJECTS, RELEASES
from .store import ProjectStore

GENESIS = "0" * 64  # the "previous" digest of the first entry
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
            members = {name: archive.read(name) for name in archive.namelist()}
    except (zipfile.BadZipFile, OSError, ValueError):
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
) -> AuditEntry:
    """Record a release package made from ``project`` (``source``: the file it was made from,
    kept with the release when the project keeps files)."""
    parts, table, recipe = package_parts(package)
    return _record(store, project, recipe, table, package, parts, source, made_by, user)


def record_table(
    store: ProjectStore,
    project: int | str | ProjectRef,
    recipe: Recipe,
    table: bytes,
    *,
    source: bytes | None = None,
    made_by: str = COMMAND_LINE,
    user: str | None = None,
) -> AuditEntry:
    """Record a released table (``table``, its bytes as written) made with ``recipe``, the
    release's own recipe (the one ``WorkingCopy.recipe`` writes for it)."""
    return _record(store, project, recipe, table, None, {TABLE_FILE: digest(table)}, source, made_by, user)


def _record(store, project, recipe: Recipe, table: bytes, package, parts, source, made_by, user) -> AuditEntry:
    check = recount(recipe, table)  # measured on the table as written
    stamp = now()
    with store._transaction() as c:
        row = store._row(c, project)
        _lock_chain(c)
        previous = store._get_meta(c, "audit_head") or GENESIS
        entry = AuditEntry(
            id=0,
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
            user=user or current_user(),
            made_by=made_by,
            previous=previous,
            entry_sha256="",
        )
        sealed = digest(dumps(entry.content()).encode("utf-8"))
        values = entry.content() | {"parts": dumps(entry.content()["parts"]), "entry_sha256": sealed}
        values["username"] = values.pop("user")
        audit_id = int(c.execute(insert(AUDIT).values(**values)).inserted_primary_key[0])
        store._set_meta(c, "audit_head", sealed)
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
                audit_id=audit_id,
            )
        )
    return _entry_of({**values, "id": audit_id, "user": values["username"]}, deleted=False)


def _lock_chain(c: Connection) -> None:
    """Two releases recorded at once take turns (SQLite's write transaction already does)."""
    if c.dialect.name == "postgresql":
        c.execute(text("SELECT pg_advisory_xact_lock(7306542)"))


def _entry_of(row, deleted: bool) -> AuditEntry:
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
    )


def audit_entries(store: ProjectStore, project: str | None = None) -> list[AuditEntry]:
    """The audit log, oldest first; ``project``: only the entries made under that name."""
    a, p = AUDIT, PROJECTS
    query = select(a, p.c.id.label("alive")).select_from(a.outerjoin(p, a.c.project_id == p.c.id)).order_by(a.c.id)
    if project is not None:
        query = query.where(a.c.project == project)
    with store._transaction() as c:
        rows = c.execute(query).mappings().all()
    return [_entry_of({**r, "user": r["username"]}, deleted=r["alive"] is None) for r in rows]


def verify_chain(store: ProjectStore) -> list[str]:
    """One sentence per entry whose digest or link to the entry before does not hold."""
    problems = []
    previous = GENESIS
    for entry in audit_entries(store):
        if entry.previous != previous:
            problems.append(f"Audit entry {entry.id} does not follow the entry before it (one was removed or changed).")
        if digest(dumps(entry.content()).encode("utf-8")) != entry.entry_sha256:
            problems.append(f"Audit entry {entry.id} was changed after it was written (its digest does not match).")
        previous = entry.entry_sha256
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
    checks: list[PartCheck] = []
    if package is not None:
        if entry is not None and digest(package) != entry.package_sha256:
            checks.append(PartCheck("package", False, "kept in the project is not the one the audit log recorded"))
        checks.extend(verify_package(package, source, source_name=name).checks)
    else:
        try:
            replay = apply_recipe(recipe, source, name=name) if source is not None else None
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
