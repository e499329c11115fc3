"""The project store: projects, their files and releases, and the audit log, in a real database.

``ProjectStore(url)`` opens (and creates or migrates) the store at a SQLAlchemy URL
(``anonlib.projects.location.store_url``: SQLite by default, PostgreSQL for a team).
Every change is one transaction. On SQLite the file is in WAL mode with
``synchronous=FULL`` (a committed change survives a killed process or a power cut),
``secure_delete`` (erased rows are overwritten, not left in free pages), foreign keys
on, and a write transaction starts with ``BEGIN IMMEDIATE`` (two writers queue for
the lock instead of failing half-way).

A session holds a ``ProjectRef`` (id, name and the ``version`` it last read or
wrote). ``save`` is a compare-and-set on that version in the same transaction as the
write: a change made from a stale view (another tab or process saved in between)
is refused with ``StaleProjectError``, never written over the newer one, so no
update is lost; the caller reloads the project and says so.

Anything the database refuses (locked, read-only, full, damaged, unreachable, a
newer schema) is one ``StoreError`` sentence; the dashboard then keeps working on
an unsaved copy.

Example:
    >>> import tempfile
    >>> import pandas as pd
    >>> from anonlib.core.dataset import Dataset
    >>> from anonlib.workflow import ReleaseTarget, WorkingCopy
    >>> from anonlib.projects.state import ProjectState
    >>> store = ProjectStore(f"sqlite:///{tempfile.mkdtemp()}/projects.sqlite")
    >>> ds = Dataset.from_frame("d.csv", pd.DataFrame({"age": [30, 30, 40, 40]}), {"age": "quasi-identifier"})
    >>> ref = store.create("survey", ProjectState.of(WorkingCopy.start(ds, ReleaseTarget(k=2)), "sample:x"))
    >>> later = store.save(ref, ProjectState.of(WorkingCopy.start(ds, ReleaseTarget(k=3)), "sample:x"), "target")
    >>> store.load("survey").state.target.k, later.version
    (3, 2)
    >>> store.save(ref, ProjectState.of(WorkingCopy.start(ds, ReleaseTarget(k=4)), "sample:x"), "target")
    Traceback (most recent call last):
    ...
    anonlib.core.errors.StaleProjectError: The project 'survey' was changed in another tab or window since this view of it was read (target); this change was not saved.
    >>> len(store.key(ref)), [p.name for p in store.summaries()]
    (32, ['survey'])
"""

from __future__ import annotations

import os
import secrets
import stat
import threading
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from sqlalchemy import Connection, create_engine, delete, event, func, insert, select, text, union, update
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.exc import DBAPIError, IntegrityError, SQLAlchemyError

from ..core.errors import ProjectError, StaleProjectError, StoreError
from ..core.masking import control_characters, mask_secrets, printable, remember_secrets
from ..workflow.health_steps import needs_key
from ..workflow.release import digest
from .location import prepare_folder, shown_url, sqlite_path, store_url
from .pending import interrupted, recover
from .records import Project, ProjectRef, ProjectSummary, StoreUsage, now
from .schema import AUDIT, BLOBS, META, MIGRATIONS, PROJECTS, RELEASES, SCHEMA_VERSION
from .state import ProjectState
from .team_schema import ensure_team_tables

KEY_BYTES = 32  # a 256-bit pseudonym key per project
MAX_NAME = 200
PROJECT_NUMBERS = "project_numbers"  # meta: the highest project number ever given
BUSY_SECONDS = 3.0  # how long a write waits for another writer before the store is said to be locked
# how long a new connection's first statements wait: on a store being created (or still in its
# rollback journal) WAL mode needs the file to itself, so ten commands releasing into a new store at
# once queue there; once the store is in WAL mode the statement waits for nobody. With 3 s, one of
# the ten was told the store was locked on a loaded machine (test_projects_integrity, nineteenth session)
OPEN_SECONDS = 30.0


_ENGINES: dict[str, object] = {}  # by URL (a read-only opening of a SQLite file: 'read-only ' + URL)
_IDENTITIES: dict[str, tuple[int, int] | None] = {}  # the file each SQLite engine was made on
_ENGINES_LOCK = threading.Lock()


def _engine(url: str, read_only: bool = False):
    """One SQLAlchemy engine (connection pool) per store URL in this process (and one more
    for reading a SQLite store without write access). The engine of a SQLite file deleted or
    replaced since it was made is made again (its connections hold the file that was)."""
    key = f"read-only {url}" if read_only else url
    with _ENGINES_LOCK:
        engine = _ENGINES.get(key)
        if engine is not None and url.startswith("sqlite") and _IDENTITIES.get(key) != _identity(url):
            engine.dispose()
            engine = None
        if engine is None:
            if url.startswith("sqlite") and read_only:
                engine = create_engine(_read_only_url(url), connect_args={"timeout": BUSY_SECONDS})
                _sqlite_events(engine, read_only=True)
            elif url.startswith("sqlite"):
                prepare_folder(url)
                engine = create_engine(url, connect_args={"timeout": OPEN_SECONDS, "check_same_thread": False})
                _sqlite_events(engine)
            else:
                engine = create_engine(url, pool_pre_ping=True, connect_args={"connect_timeout": 5})
            _ENGINES[key] = engine
            _IDENTITIES[key] = _identity(url)
        return engine


def _identity(url: str) -> tuple[int, int] | None:
    """The device and inode of a SQLite store's file (None on PostgreSQL, in memory, or missing)."""
    path = sqlite_path(url)
    try:
        found = path.stat() if path is not None else None
    except OSError:
        return None
    return None if found is None else (found.st_dev, found.st_ino)


def _read_only_url(url: str) -> str:
    """The SQLite URL opening the file read-only; ``immutable`` when its folder cannot be written
    either (SQLite then cannot make the write-ahead log's index to coordinate with writers, and
    none can write there)."""
    path = sqlite_path(url)
    folder_writable = path is not None and os.access(path.parent, os.W_OK)
    mode = (
        "mode=ro" if folder_writable or path is None or path.with_name(path.name + "-shm").exists() else "immutable=1"
    )
    return f"sqlite:///file:{quote(str(path))}?{mode}&uri=true"


def _sqlite_events(engine, read_only: bool = False) -> None:
    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection, _record) -> None:  # pragma: no cover - run by SQLAlchemy
        dbapi_connection.isolation_level = None  # transactions are begun below, not by the driver
        cursor = dbapi_connection.cursor()
        pragmas = (
            ("foreign_keys=ON",)
            if read_only
            else ("journal_mode=WAL", "synchronous=FULL", "foreign_keys=ON", "secure_delete=ON")
        )
        for pragma in pragmas:
            cursor.execute(f"PRAGMA {pragma}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection) -> None:  # pragma: no cover - run by SQLAlchemy
        connection.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")


def through_functions(c: Connection) -> bool:
    """Whether this connection is a member's own login on a team's PostgreSQL store: it reads
    under row-level security and changes nothing but through the team's functions
    (``anonlib/projects/team.sql``). Asked once per database connection."""
    if c.dialect.name != "postgresql":
        return False
    known = c.info.get("anonlib_member_login")
    if known is None:
        known = bool(
            c.execute(
                text(
                    "SELECT to_regproc('public.anonlib_create_project') IS NOT NULL "
                    "AND NOT has_table_privilege('public.projects', 'INSERT')"
                )
            ).scalar()
        )
        c.info["anonlib_member_login"] = known
    return known


def store_error(err: Exception, where: str) -> StoreError:
    """The sentence of a database failure (the driver's message is kept to its first line)."""
    message = str(getattr(err, "orig", None) or err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    message = mask_secrets(message)  # a driver may quote the URL or DSN it was given
    low = message.lower()
    if "locked" in low or "busy" in low:
        return StoreError(
            f"The project store {where} is locked by another program; this change is not saved yet (try again in a moment)."
        )
    if "readonly" in low or "read-only" in low or "read only" in low:
        return StoreError(f"The project store {where} is read-only; changes are not saved.")
    if "full" in low and ("disk" in low or "database" in low) or "no space" in low:
        return StoreError(f"The disk holding the project store {where} is full; changes are not saved.")
    if "not a database" in low or "malformed" in low or "corrupt" in low:
        return StoreError(
            f"The project store {where} is damaged (it is not a readable database); move the file aside or set "
            "ANONLIB_HOME to another folder. Changes are not saved."
        )
    if "unable to open" in low:
        return StoreError(f"The project store {where} cannot be opened; changes are not saved.")
    if "connect" in low or "connection" in low or "server" in low:
        return StoreError(f"The PostgreSQL project store {where} cannot be reached ({message}); changes are not saved.")
    return StoreError(f"The project store {where} failed ({message}); changes are not saved.")


class ProjectStore:
    """The store at ``url`` (default ``store_url()``: ``ANONLIB_STORE`` or ``ANONLIB_HOME``).

    ``wait``: how long each transaction waits for another writer on SQLite (default
    ``BUSY_SECONDS``; a command-line run can wait longer than a page). ``read_only``: open it only to read (``audit``): a SQLite file is opened read-only, so a
    store on a read-only file or folder is read; nothing is migrated, created or written.
    Otherwise the opening also finishes or undoes the releases of processes that died
    midway (``anonlib.projects.pending``)."""

    def __init__(self, url: str | None = None, *, read_only: bool = False, wait: float | None = None) -> None:
        self.url = url or store_url()
        self.where = shown_url(self.url)
        self.read_only = read_only
        self.wait = wait  # seconds a transaction waits for another writer on SQLite (default BUSY_SECONDS)
        self.recovered: list[str] = []  # what the opening finished or undid (pending.recover)
        self.interrupted = 0  # read-only: the releases of dead processes left to finish or undo
        remember_secrets(self.url)  # its password is masked in every message from now on
        _require_regular_files(self.url)
        try:
            self.engine = _engine(self.url, read_only)
        except StoreError:
            raise
        except Exception as err:  # noqa: BLE001 - a missing driver, a bad URL: one sentence
            raise StoreError(f"The project store {self.where} cannot be opened ({mask_secrets(str(err))}).") from None
        self._identity = _identity(self.url)  # the file this store opened (SQLite)
        self._open()

    def require_present(self) -> None:
        """A sentence when the SQLite file this store opened was deleted or replaced since (what
        is written through the open connection would then be lost with the deleted file)."""
        if self._identity is not None and _identity(self.url) != self._identity:
            raise StoreError(
                f"The project store {self.where} was deleted or replaced while this command was using it; "
                "nothing is recorded in it."
            )

    # ------------------------------------------------------------------ transactions

    @contextmanager
    def _transaction(self, wait: float | None = None) -> Iterator[Connection]:
        """One transaction; any database failure becomes a ``StoreError`` sentence. ``wait``:
        how long (seconds) to wait for another writer on SQLite (default ``BUSY_SECONDS``)."""
        wait = wait if wait is not None else self.wait if self.wait is not None else BUSY_SECONDS
        try:
            with self.engine.connect() as connection:
                if self.engine.dialect.name == "sqlite":  # not the connection's own wait (``OPEN_SECONDS``)
                    connection.connection.dbapi_connection.execute(f"PRAGMA busy_timeout = {int(wait * 1000)}")
                try:
                    with connection.begin():
                        yield connection
                finally:
                    if self.engine.dialect.name == "sqlite":
                        connection.connection.dbapi_connection.execute(
                            f"PRAGMA busy_timeout = {int(BUSY_SECONDS * 1000)}"
                        )
        except (ProjectError, KeyboardInterrupt):
            raise
        except IntegrityError as err:
            raise store_error(err, self.where) from None
        except (DBAPIError, SQLAlchemyError, OSError) as err:
            raise store_error(err, self.where) from None

    def _open(self) -> None:
        """Create the schema on an empty database, migrate an older one, refuse a newer one;
        finish or undo the releases of processes that died midway. Read-only: only check the
        version."""
        if self.read_only:
            self._open_to_read()
            return
        with self._transaction() as c:
            if c.dialect.name == "postgresql":  # two first openings at once: one creates, the other waits
                c.execute(text("SELECT pg_advisory_xact_lock(7306541)"))
            if not c.dialect.has_table(c, "meta"):
                version = 0
            else:
                row = c.execute(select(META.c.value).where(META.c.key == "schema_version")).first()
                version = int(row[0]) if row else 0
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"The project store {self.where} was written by a newer anonlib (schema version {version}; "
                    f"this one reads up to {SCHEMA_VERSION}); update anonlib or set ANONLIB_HOME to another "
                    "folder. Changes are not saved."
                )
            for step in range(version + 1, SCHEMA_VERSION + 1):
                MIGRATIONS[step](c)
            if version < SCHEMA_VERSION:
                self._set_meta(c, "schema_version", str(SCHEMA_VERSION))
            ensure_team_tables(c)  # the team's own tables and migration (anonlib.projects.team_schema)
            self.recovered = recover(c)
        self.schema_version = SCHEMA_VERSION

    def _open_to_read(self) -> None:
        with self._transaction() as c:
            row = None
            if c.dialect.has_table(c, "meta"):
                row = c.execute(select(META.c.value).where(META.c.key == "schema_version")).first()
            version = int(row[0]) if row else 0
            self.interrupted = interrupted(c) if version else 0
            team = version and c.execute(select(META.c.value).where(META.c.key == "team_schema")).first()
        if version == SCHEMA_VERSION and not team:  # the team's tables and columns came after (team_schema)
            raise StoreError(
                f"The project store {self.where} was written by an older anonlib (before the team's tables); open "
                "it once with write access (e.g. `projects list`) to bring it up to date, then read it."
            )
        if version == 0:
            raise StoreError(f"The project store {self.where} holds no project store yet; nothing to read.")
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"The project store {self.where} was written by a newer anonlib (schema version {version}; "
                f"this one reads up to {SCHEMA_VERSION}); update anonlib to read it."
            )
        if version < SCHEMA_VERSION:
            raise StoreError(
                f"The project store {self.where} was written by an older anonlib (schema version {version}); "
                "open it once with write access (e.g. `projects list`) to bring it up to date, then read it."
            )
        self.schema_version = version

    @staticmethod
    def _set_meta(c: Connection, key: str, value: str) -> None:
        done = c.execute(update(META).where(META.c.key == key).values(value=value)).rowcount
        if not done:
            c.execute(insert(META).values(key=key, value=value))

    @staticmethod
    def _get_meta(c: Connection, key: str) -> str | None:
        row = c.execute(select(META.c.value).where(META.c.key == key)).first()
        return None if row is None else row[0]

    # ------------------------------------------------------------------ blobs

    @staticmethod
    def _put_blob(c: Connection, data: bytes) -> str:
        if through_functions(c):  # kept under the digest the database computes
            return str(c.execute(text("SELECT public.anonlib_put_blob(:data)"), {"data": bytes(data)}).scalar())
        sha = digest(bytes(data))
        if c.execute(select(BLOBS.c.sha256).where(BLOBS.c.sha256 == sha)).first() is None:
            values = {"sha256": sha, "size": len(data), "data": bytes(data)}
            if c.dialect.name == "postgresql" and c.execute(text("SELECT to_regproc('anonlib_put_blob')")).scalar():
                # a team member may hold the same bytes as a project they cannot see (row-level security hides
                # that blob): stored through the team's function, which adds it only when it is not there
                c.execute(text("SELECT anonlib_put_blob(:sha256, :size, :data)"), values)
            elif (
                c.dialect.name == "postgresql"
            ):  # the same file stored by another transaction meanwhile is the same blob
                c.execute(postgresql_insert(BLOBS).values(**values).on_conflict_do_nothing(index_elements=["sha256"]))
            else:
                c.execute(insert(BLOBS).values(**values))
        return sha

    @staticmethod
    def _drop_unused_blobs(c: Connection) -> None:
        used = union(
            select(PROJECTS.c.file_sha256).where(PROJECTS.c.file_sha256.is_not(None)),
            select(RELEASES.c.source_blob).where(RELEASES.c.source_blob.is_not(None)),
            select(RELEASES.c.package_blob).where(RELEASES.c.package_blob.is_not(None)),
            select(RELEASES.c.table_blob).where(RELEASES.c.table_blob.is_not(None)),
        )
        c.execute(delete(BLOBS).where(BLOBS.c.sha256.not_in(used)))

    def blob(self, sha256: str | None) -> bytes | None:
        if sha256 is None:
            return None
        with self._transaction() as c:
            if through_functions(c):  # the role and the digest checked by the database
                row = c.execute(text("SELECT public.anonlib_blob(:s)"), {"s": sha256}).first()
                row = None if row is None or row[0] is None else row
            else:
                row = c.execute(select(BLOBS.c.data).where(BLOBS.c.sha256 == sha256)).first()
        if row is None:
            return None
        data = bytes(row[0])
        if digest(data) != sha256:  # blobs are keyed by their digest, checked on every read
            raise StoreError(
                f"The file kept as {sha256[:16]}... in the project store {self.where} no longer has that SHA-256; "
                "it is not read."
            )
        return data

    def _compact(self) -> None:
        """After erasing: fold the write-ahead log back into the file, so no erased page lingers in it."""
        if self.engine.dialect.name == "sqlite":
            try:
                self._pragma("wal_checkpoint(TRUNCATE)")
            except Exception:  # noqa: BLE001 - another reader holds the log: folded back at its next checkpoint
                pass

    def _pragma(self, pragma: str):
        """One SQLite PRAGMA outside any transaction (a checkpoint cannot run inside one)."""
        raw = self.engine.raw_connection()
        try:
            cursor = raw.cursor()
            cursor.execute(f"PRAGMA {pragma}")
            row = cursor.fetchone()
            cursor.close()
            return None if row is None else row[0]
        finally:
            raw.close()

    # ------------------------------------------------------------------ projects

    def _unique_name(self, c: Connection, wanted: str) -> str:
        base = _valid_name(wanted)
        taken = {name_key(r[0]) for r in c.execute(select(PROJECTS.c.name))}
        name, n = base, 2
        while name in taken:
            name = f"{base[: MAX_NAME - 8]} ({n})"
            n += 1
        return name

    def create(
        self,
        name: str,
        state: ProjectState,
        data: bytes | None = None,
        *,
        keep_file: bool = True,
        change: str = "created",
        exact_name: bool = False,
        key: bytes | None = None,
    ) -> ProjectRef:
        """A new project (its name made unique with " (2)", ... unless ``exact_name``, then a
        sentence when taken) holding ``state`` and, when ``keep_file``, the file's bytes."""
        with self._transaction() as c:
            return self._insert_project(
                c, name, state, data, keep_file=keep_file, change=change, exact_name=exact_name, key=key
            )

    def _insert_project(
        self,
        c: Connection,
        name: str,
        state: ProjectState,
        data: bytes | None = None,
        *,
        keep_file: bool = True,
        change: str = "created",
        exact_name: bool = False,
        key: bytes | None = None,
    ) -> ProjectRef:
        """``create`` inside the transaction ``c`` (e.g. the one recording a project's first release)."""
        stamp = now()
        if key is not None and len(key) != KEY_BYTES:
            raise ProjectError(f"A project key is {KEY_BYTES} bytes; this one has {len(key)}.")
        if exact_name:
            chosen = _valid_name(name)
            if self._row(c, chosen, missing_ok=True) is not None:
                raise ProjectError(f"There is already a project named '{chosen}'; choose another name.")
        else:
            chosen = self._unique_name(c, name)
        blob = self._put_blob(c, data) if keep_file and data is not None and not state.is_sample else None
        if through_functions(c):  # a member's login: the database numbers it and makes its creator the owner
            number = c.execute(
                text(
                    "SELECT public.anonlib_create_project(:name, :origin, :source_name, :records, :columns, :keep, "
                    ":file, :source_sha256, :state, :change, :key)"
                ),
                {
                    "name": chosen,
                    "origin": state.origin,
                    "source_name": state.source.name,
                    "records": state.source.records,
                    "columns": len(state.source.columns),
                    "keep": bool(keep_file),
                    "file": blob,
                    "source_sha256": state.source.sha256,
                    "state": state.dumps(),
                    "change": change,
                    "key": key or secrets.token_bytes(KEY_BYTES),
                },
            ).scalar_one()
            return ProjectRef(int(number), chosen, 1)
        number = self._next_number(c)
        c.execute(
            insert(PROJECTS).values(
                id=number,
                name=chosen,
                created=stamp,
                updated=stamp,
                version=1,
                origin=state.origin,
                source_name=state.source.name,
                records=state.source.records,
                columns=len(state.source.columns),
                keep_file=bool(keep_file),
                file_sha256=blob,
                source_sha256=state.source.sha256,
                state=state.dumps(),
                change=change,
                key=key or secrets.token_bytes(KEY_BYTES),
            )
        )
        self._set_meta(c, "last_opened", str(number))
        return ProjectRef(number, chosen, 1)

    def _next_number(self, c: Connection) -> int:
        """A new project's number, in the transaction creating it: above every number a project
        has or had (the store counts the numbers it gave, and the audit log names the projects of
        its entries), so a deleted project's number, under which its audit entries stay, is never
        given again (SQLite would reuse the highest). Creations on PostgreSQL take turns."""
        if c.dialect.name == "postgresql":
            c.execute(text("SELECT pg_advisory_xact_lock(7306543)"))
        number = 1 + max(
            int(c.execute(select(func.max(PROJECTS.c.id))).scalar() or 0),
            int(c.execute(select(func.max(AUDIT.c.project_id))).scalar() or 0),
            int(self._get_meta(c, PROJECT_NUMBERS) or 0),
        )
        self._set_meta(c, PROJECT_NUMBERS, str(number))
        if c.dialect.name == "postgresql":  # the number is given here: the sequence follows it
            c.execute(text("SELECT setval(pg_get_serial_sequence('projects', 'id'), :n)"), {"n": number})
        return number

    def save(self, ref: ProjectRef, state: ProjectState, change: str) -> ProjectRef:
        """Write ``state`` over the project if it is still at ``ref.version`` (compare-and-set);
        ``StaleProjectError`` when another tab or process saved in between (nothing written)."""
        stamp = now()
        with self._transaction() as c:
            if through_functions(c):
                done = c.execute(
                    text("SELECT public.anonlib_save_project(:id, :v, :state, :change, :records, :columns)"),
                    {
                        "id": ref.id,
                        "v": ref.version,
                        "state": state.dumps(),
                        "change": change[:500],
                        "records": state.source.records,
                        "columns": len(state.source.columns),
                    },
                ).scalar()
                done = 0 if done is None else 1
            else:
                done = c.execute(
                    update(PROJECTS)
                    .where(PROJECTS.c.id == ref.id, PROJECTS.c.version == ref.version)
                    .values(
                        version=PROJECTS.c.version + 1,
                        updated=stamp,
                        state=state.dumps(),
                        change=change[:500],
                        records=state.source.records,
                        columns=len(state.source.columns),
                    )
                ).rowcount
            if not done:
                exists = c.execute(select(PROJECTS.c.id).where(PROJECTS.c.id == ref.id)).first()
                if exists is None:
                    raise ProjectError(
                        f"The project '{printable(ref.name)}' was deleted (in another tab or window); not saved."
                    )
                raise StaleProjectError(
                    f"The project '{printable(ref.name)}' was changed in another tab or window since this view of it was "
                    f"read ({change}); this change was not saved."
                )
        return ProjectRef(ref.id, ref.name, ref.version + 1)

    def _row(self, c: Connection, project: int | str | ProjectRef, *, missing_ok: bool = False):
        p = PROJECTS.c
        if isinstance(project, ProjectRef):
            project = project.id
        where = p.id == project if isinstance(project, int) else p.name == name_key(str(project))
        row = c.execute(select(*ROW_COLUMNS).where(where)).mappings().first()
        if row is None and not isinstance(project, int):  # a name a store kept before names were NFC
            wanted = name_key(str(project))
            found = next((i for i, n in c.execute(select(p.id, p.name)) if name_key(n) == wanted), None)
            if found is not None:
                row = c.execute(select(*ROW_COLUMNS).where(p.id == found)).mappings().first()
        if row is None and not missing_ok:
            raise ProjectError(f"There is no project {_named(project)}{self._known(c)}.")
        return row

    def _known(self, c: Connection) -> str:
        names = [r[0] for r in c.execute(select(PROJECTS.c.name).order_by(PROJECTS.c.name).limit(8))]
        return f"; projects: {', '.join(printable(n) for n in names)}" if names else "; the store has no project yet"

    def _summary(self, c: Connection, row) -> ProjectSummary:
        size = 0
        if row["file_sha256"]:
            size = c.execute(select(BLOBS.c.size).where(BLOBS.c.sha256 == row["file_sha256"])).scalar()
        releases = c.execute(
            select(func.count()).select_from(RELEASES).where(RELEASES.c.project_id == row["id"])
        ).scalar()
        return ProjectSummary(
            id=int(row["id"]),
            name=row["name"],
            source_name=row["source_name"],
            origin=row["origin"],
            records=int(row["records"]),
            columns=int(row["columns"]),
            created=row["created"],
            updated=row["updated"],
            change=row["change"],
            version=int(row["version"]),
            keep_file=bool(row["keep_file"]),
            file_bytes=int(size or 0),
            releases=int(releases or 0),
        )

    def summary(self, project: int | str | ProjectRef) -> ProjectSummary:
        with self._transaction() as c:
            return self._summary(c, self._row(c, project))

    def summaries(self) -> list[ProjectSummary]:
        """Every project, the most recently changed first."""
        with self._transaction() as c:
            rows = c.execute(select(*ROW_COLUMNS).order_by(PROJECTS.c.updated.desc())).mappings().all()
            return [self._summary(c, r) for r in rows]

    def version(self, project_id: int) -> int | None:
        """The project's current version (None when it was deleted): a cheap staleness check."""
        with self._transaction() as c:
            row = c.execute(select(PROJECTS.c.version).where(PROJECTS.c.id == project_id)).first()
        return None if row is None else int(row[0])

    def load(self, project: int | str | ProjectRef) -> Project:
        """The project's summary and state."""
        with self._transaction() as c:
            row = self._row(c, project)
            summary = self._summary(c, row)
        return Project(summary, ProjectState.loads(row["state"]))

    def file(self, project: int | str | ProjectRef) -> bytes | None:
        """The project's kept file (None when only its fingerprint is kept, or it is a sample)."""
        with self._transaction() as c:
            row = self._row(c, project)
        return self.blob(row["file_sha256"])

    def key(self, project: int | str | ProjectRef) -> bytes:
        """The project's 32-byte pseudonym key (created with it; never in a package or recipe)."""
        with self._transaction() as c:
            return self._key(c, int(self._row(c, project)["id"]))

    @staticmethod
    def _key(c: Connection, project_id: int) -> bytes:
        """The key of a project read in ``c``. On a team's PostgreSQL store a member's login has no
        right to the key column: the key comes through ``anonlib_project_key``, which gives it to
        the project's owner and analysts only (``anonlib.projects.team``); the login that owns the
        tables (the dashboard's service login) reads the column."""
        if (
            c.dialect.name == "postgresql"
            and not c.execute(text("SELECT has_column_privilege('projects', 'key', 'SELECT')")).scalar()
        ):
            found = c.execute(text("SELECT anonlib_project_key(:id)"), {"id": project_id}).scalar()
            if found is None:
                raise ProjectError("Your role in this project does not give you its pseudonym key.")
            return bytes(found)
        return bytes(c.execute(select(PROJECTS.c.key).where(PROJECTS.c.id == project_id)).scalar_one())

    def opened(self, project: int | ProjectRef) -> None:
        """Remember ``project`` as the last one opened (a new tab opens it)."""
        project_id = project.id if isinstance(project, ProjectRef) else int(project)
        with self._transaction() as c:
            if not through_functions(c):  # a member's login keeps no state of its own in the shared store
                self._set_meta(c, "last_opened", str(project_id))

    def last_opened(self) -> int | None:
        """The project opened last, when it still exists."""
        with self._transaction() as c:
            value = self._get_meta(c, "last_opened")
            if value is None:
                return None
            row = c.execute(select(PROJECTS.c.id).where(PROJECTS.c.id == int(value))).first()
        return None if row is None else int(row[0])

    def rename(self, project: int | str | ProjectRef, new_name: str) -> ProjectRef:
        """Give a project another name (a sentence when it is taken)."""
        name = _valid_name(new_name)
        with self._transaction() as c:
            row = self._row(c, project)
            if name != row["name"] and self._row(c, name, missing_ok=True) is not None:
                raise ProjectError(f"There is already a project named '{printable(name)}'; choose another name.")
            if through_functions(c):
                c.execute(text("SELECT public.anonlib_rename_project(:id, :name)"), {"id": row["id"], "name": name})
                return ProjectRef(int(row["id"]), name, int(row["version"]) + 1)
            c.execute(
                update(PROJECTS)
                .where(PROJECTS.c.id == row["id"])
                .values(name=name, version=PROJECTS.c.version + 1, updated=now(), change=f"renamed to {name}")
            )
        return ProjectRef(int(row["id"]), name, int(row["version"]) + 1)

    def set_key(self, project: int | str | ProjectRef, key: bytes) -> None:
        """Give the project another pseudonym key (e.g. the key file of earlier deliveries made
        elsewhere); refused in a sentence while its steps hold pseudonyms or date shifts made
        with its present key (they would no longer replay).

        >>> store = ProjectStore("sqlite://")
        >>> from anonlib.core.samples import load_sample
        >>> from anonlib.workflow import ReleaseTarget, WorkingCopy
        >>> copy = WorkingCopy.start(load_sample("caballero_table2b"), ReleaseTarget(k=2))
        >>> ref = store.create("p", ProjectState.of(copy, "sample:caballero_table2b"))
        >>> store.set_key(ref, bytes(32))
        >>> store.key(ref) == bytes(32)
        True
        """
        if len(key) != KEY_BYTES:
            raise ProjectError(f"A project key is {KEY_BYTES} bytes; this one has {len(key)}.")
        with self._transaction() as c:
            if through_functions(c):
                raise ProjectError(
                    "On a team's store a project keeps the key it was made with; import the earlier deliveries' key "
                    "through the dashboard's service login, or start a project with it."
                )
            row = self._row(c, project)
            state = ProjectState.loads(row["state"])
            if self._key(c, int(row["id"])) != bytes(key) and any(needs_key(s.step) for s in state.steps):
                raise ProjectError(
                    "This project's steps hold pseudonyms or date shifts made with its present key; undo them "
                    "before using another key."
                )
            c.execute(update(PROJECTS).where(PROJECTS.c.id == row["id"]).values(key=bytes(key)))

    def duplicate(
        self, project: int | str | ProjectRef, new_name: str | None = None, *, new_key: bool = False
    ) -> ProjectRef:
        """A copy of a project (state and kept file, no release): e.g. to try another target. It
        gets a new key unless its steps hold pseudonyms or date shifts (they keep theirs); with
        ``new_key`` (a team's duplicate, ``anonlib.projects.team.duplicate_project``) always a new one."""
        with self._transaction() as c:
            row = self._row(c, project)
            state = ProjectState.loads(row["state"])
            keyed = any(needs_key(s.step) for s in state.steps) and not new_key
            kept_key = self._key(c, int(row["id"])) if keyed else None
        data = self.blob(row["file_sha256"])
        return self.create(
            new_name or f"{row['name']} (copy)",
            state,
            data,
            keep_file=bool(row["keep_file"]),
            change=f"duplicated from {row['name']}",
            key=kept_key,
        )

    def set_keep_file(self, project: int | str | ProjectRef, keep: bool, data: bytes | None = None) -> None:
        """Keep the file in the project (``data``, its bytes) or erase it (the fingerprint stays)."""
        with self._transaction() as c:
            row = self._row(c, project)
            if through_functions(c):
                c.execute(
                    text("SELECT public.anonlib_keep_file(:id, :keep, :data)"),
                    {"id": row["id"], "keep": bool(keep), "data": None if data is None else bytes(data)},
                )
                return
            blob = None
            if keep:
                state = ProjectState.loads(row["state"])
                if data is None:
                    blob = row["file_sha256"]
                    if blob is None and not state.is_sample:
                        raise ProjectError("Give the file to keep it in the project.")
                else:
                    if state.source.sha256 is not None and digest(bytes(data)) != state.source.sha256:
                        raise ProjectError(f"This file is not {state.source.name} as the project read it.")
                    blob = self._put_blob(c, data)
            c.execute(update(PROJECTS).where(PROJECTS.c.id == row["id"]).values(keep_file=bool(keep), file_sha256=blob))
            self._drop_unused_blobs(c)
        if not keep:
            self._compact()

    def delete(self, project: int | str | ProjectRef) -> None:
        """Erase a project: its row, its releases, and every file and package only it kept. Its
        audit entries stay (the log is append-only), shown as of a deleted project."""
        with self._transaction() as c:
            row = self._row(c, project)
            if through_functions(c):
                c.execute(text("SELECT public.anonlib_delete_project(:id)"), {"id": row["id"]})
                return
            c.execute(delete(RELEASES).where(RELEASES.c.project_id == row["id"]))
            c.execute(delete(PROJECTS).where(PROJECTS.c.id == row["id"]))
            self._drop_unused_blobs(c)
        self._compact()

    # ------------------------------------------------------------------ usage

    def usage(self) -> StoreUsage:
        """Where the store is, how big, and what it holds."""
        with self._transaction() as c:
            projects = c.execute(select(func.count()).select_from(PROJECTS)).scalar() or 0
            files = c.execute(
                select(func.count(), func.coalesce(func.sum(BLOBS.c.size), 0)).where(
                    BLOBS.c.sha256.in_(select(PROJECTS.c.file_sha256).union(select(RELEASES.c.source_blob)))
                )
            ).first()
            packages = c.execute(
                select(func.count(), func.coalesce(func.sum(BLOBS.c.size), 0)).where(
                    BLOBS.c.sha256.in_(select(RELEASES.c.package_blob).union(select(RELEASES.c.table_blob)))
                )
            ).first()
            entries = c.execute(select(func.count()).select_from(AUDIT)).scalar() or 0
        path = sqlite_path(self.url)
        total = None
        if path is not None:
            total = sum(p.stat().st_size for p in _sqlite_files(path) if p.exists())
        return StoreUsage(
            where=self.where,
            backend=self.engine.dialect.name,
            total_bytes=total,
            projects=int(projects),
            files=int(files[0]),
            file_bytes=int(files[1]),
            packages=int(packages[0]),
            package_bytes=int(packages[1]),
            audit_entries=int(entries),
        )

    def integrity_ok(self) -> bool:
        """SQLite's ``PRAGMA integrity_check`` (True on PostgreSQL, which checks itself)."""
        if self.engine.dialect.name != "sqlite":
            return True
        return self._pragma("integrity_check") == "ok"


# every column of a project but its key: what a project's row is read as (the key is read alone, ``_key``)
ROW_COLUMNS = tuple(c for c in PROJECTS.c if c.name != "key")


_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _require_regular_files(url: str) -> None:
    """A sentence, before anything opens them, when a SQLite store's file (or its journal, write-
    ahead log or shared memory) exists and is not a regular file: SQLite would wait forever on a
    named pipe, and read a device or folder as a damaged database.

    >>> _require_regular_files("sqlite:////dev/null")
    Traceback (most recent call last):
    ...
    anonlib.core.errors.StoreError: The project store /dev/null is not a regular file (it is a character device); set ANONLIB_HOME to a folder for the store, or ANONLIB_STORE to a database file. Nothing was read or written.
    """
    path = sqlite_path(url)
    if path is None:
        return
    for part in [*_sqlite_files(path), path.with_name(path.name + "-journal")]:
        try:
            mode = part.stat().st_mode
        except OSError:  # absent (or unreadable: SQLite says why)
            continue
        if not stat.S_ISREG(mode):
            kind = next((what for test, what in _KINDS if test(mode)), "a special file")
            raise StoreError(
                f"The project store {part} is not a regular file (it is {kind}); set ANONLIB_HOME to a folder for "
                "the store, or ANONLIB_STORE to a database file. Nothing was read or written."
            )


def _sqlite_files(path: Path) -> list[Path]:
    return [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]


def valid_name(name: str) -> str:
    """A project name as the store keeps it (Unicode NFC, spaces collapsed), or a sentence: blank,
    too long, holding control characters or a line break, or no visible character at all.
    Names are compared in this form, so "Café" typed with a composed or a decomposed é is one
    project.

    >>> valid_name("  clinic   survey ")
    'clinic survey'
    >>> valid_name("Cafe\u0301") == valid_name("Caf\u00e9") == "Caf\u00e9"
    True
    >>> valid_name("\u200b\u3164")
    Traceback (most recent call last):
    ...
    anonlib.core.errors.ProjectError: A project name needs a visible character; this one holds only U+200B, U+3164, which show as nothing.
    """
    return _valid_name(name)


LINE_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
# letters and symbols that show as blank space, and format characters (zero widths, joiners, BOM)
_BLANK = set("\u115f\u1160\u3164\uffa0\u2800\u180e\u17b4\u17b5")
_INVISIBLE_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp", "Mn", "Me"}


def _visible(character: str) -> bool:
    return character not in _BLANK and unicodedata.category(character) not in _INVISIBLE_CATEGORIES


def name_key(name: str) -> str:
    """A name as names are compared (NFC, spaces collapsed), for looking a project up; never a
    sentence (a name the store would refuse is simply not found).

    >>> name_key(" Cafe\u0301  team") == "Caf\u00e9 team"
    True
    """
    return " ".join(unicodedata.normalize("NFC", str(name)).split())


def _valid_name(name: str) -> str:
    name = unicodedata.normalize("NFC", str(name))
    breaks = [c for c in LINE_BREAKS if c in name]
    if breaks:
        raise ProjectError(
            f"A project name is one line; '{printable(name)[:MAX_NAME]}' holds a line break "
            f"({', '.join(printable(c) for c in breaks)}). Choose a name without line breaks."
        )
    controls = [c for c in control_characters(name) if c != "\t"]
    if controls:  # ESC, BEL, other C0/C1 controls and right-to-left overrides would rewrite a terminal's line
        raise ProjectError(
            f"A project name cannot hold control characters ({', '.join(printable(c) for c in controls)} in "
            f"'{printable(name)[:MAX_NAME]}'); choose a name of letters, digits, spaces and punctuation."
        )
    cleaned = " ".join(name.split())
    if not cleaned:
        raise ProjectError("A project needs a name.")
    if not any(_visible(c) for c in cleaned):
        shown = ", ".join(f"U+{ord(c):04X}" for c in dict.fromkeys(cleaned) if c != " ")
        raise ProjectError(
            f"A project name needs a visible character; this one holds only {shown}, which show as nothing."
        )
    if len(cleaned) > MAX_NAME:
        raise ProjectError(f"A project name is at most {MAX_NAME} characters; this one has {len(cleaned)}.")
    return cleaned


def _named(project) -> str:
    return f"number {project}" if isinstance(project, int) else f"named '{printable(str(project))}'"
