"""The project store's schema (SQLAlchemy Core: one schema for SQLite and PostgreSQL),
its version and its migrations.

Tables:

- ``meta``: ``schema_version``, the head of the audit chain, the last project opened;
- ``projects``: one row per project: name (unique), times, ``version`` (raised by every
  saved change: compare-and-set against it is what tells a stale tab), where its table
  came from, the working copy as JSON (``ProjectState``), whether its file is kept, its
  file's SHA-256, and its 32-byte pseudonym key;
- ``blobs``: file and package bytes, by SHA-256 (a file kept by two projects is stored
  once; a blob no row refers to is erased with the row that last referred to it);
- ``releases``: the packages and released tables a project made: their recipe, the
  SHA-256 of the source read, of the released table and of the package;
- ``audit``: the append-only log of every release (see ``anonlib.projects.audit``):
  triggers refuse any UPDATE or DELETE on both backends, and each entry carries the
  SHA-256 of the one before it; a private release's entry carries the ε and δ it spent
  (version 2);
- ``projects.budget_epsilon`` / ``budget_delta``: a project's total privacy budget
  (version 2; from version 4 read only as a ceiling of its file's budget, never raising it);
- ``releases.table_blob``: the released table of a release recorded without a package (version
  3): a later delivery whose records link by pseudonym is judged on the cumulative history of
  everything the project released (``anonlib.projects.linked``), so every released table is kept;
- ``audit.total_epsilon`` / ``total_delta`` (version 4): an entry setting the privacy budget of
  a file (by its SHA-256), which every project over that file shares
  (``anonlib.projects.budget``).
- ``audit.total_raised`` (version 5): the entry raises a file's total on its owner's word
  (``projects budget --raise``): the smallest total set since the last raise holds;
  ``audit.charged``: the SHA-256s (JSON list) of the other spent files a private release was
  charged against too, their people overlapping its own by more than half;
- ``fingerprints`` (version 5): with each private release's spend, a MinHash sketch of its
  file's people (the person column's values) and of its whole rows, and its column names
  (``anonlib.projects.fingerprints``); kept in the store, never in a package.

``SCHEMA_VERSION`` is written in ``meta``; a store of an older version is migrated
(``MIGRATIONS``, each in the opening transaction), one of a newer version is refused
with a sentence.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.resources import files

from sqlalchemy import (
    Boolean,
    Column,
    Connection,
    Float,
    ForeignKey,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    inspect,
    text,
)

SCHEMA_VERSION = 5

metadata = MetaData()

meta = Table(
    "meta",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

blobs = Table(
    "blobs",
    metadata,
    Column("sha256", String(64), primary_key=True),
    Column("size", Integer, nullable=False),
    Column("data", LargeBinary, nullable=False),
)

projects = Table(
    "projects",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(200), nullable=False, unique=True),
    Column("created", String(32), nullable=False),
    Column("updated", String(32), nullable=False),
    Column("version", Integer, nullable=False),
    Column("origin", Text, nullable=False),
    Column("source_name", Text, nullable=False),
    Column("records", Integer, nullable=False),
    Column("columns", Integer, nullable=False),
    Column("keep_file", Boolean, nullable=False),
    Column("file_sha256", String(64), ForeignKey("blobs.sha256"), nullable=True),
    Column("source_sha256", String(64), nullable=True),
    Column("state", Text, nullable=False),
    Column("change", Text, nullable=False),
    Column("key", LargeBinary, nullable=False),
    Column("budget_epsilon", Float, nullable=True),  # version 2: the project's total ε (None: no budget set)
    Column("budget_delta", Float, nullable=True),  # version 2: its total δ (None: δ not capped)
)

releases = Table(
    "releases",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("project_id", Integer, ForeignKey("projects.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("time", String(32), nullable=False),
    Column("source_name", Text, nullable=False),
    Column("source_sha256", String(64), nullable=True),
    Column("source_blob", String(64), ForeignKey("blobs.sha256"), nullable=True),
    Column("recipe", Text, nullable=False),
    Column("released_sha256", String(64), nullable=False),
    Column("package_blob", String(64), ForeignKey("blobs.sha256"), nullable=True),
    Column("audit_id", Integer, nullable=False),
    Column("table_blob", String(64), ForeignKey("blobs.sha256"), nullable=True),  # version 3: without a package
)

audit = Table(
    "audit",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("time", String(32), nullable=False),
    Column("project_id", Integer, nullable=False),  # no foreign key: entries outlive their project
    Column("project", Text, nullable=False),
    Column("source_name", Text, nullable=False),
    Column("source_sha256", String(64), nullable=True),
    Column("target", Text, nullable=False),
    Column("met", Boolean, nullable=False),
    Column("records", Integer, nullable=False),
    Column("released", Integer, nullable=False),
    Column("suppressed", Integer, nullable=False),
    Column("released_sha256", String(64), nullable=False),
    Column("package_sha256", String(64), nullable=True),
    Column("parts", Text, nullable=False),
    Column("username", Text, nullable=False),
    Column("made_by", Text, nullable=False),
    Column("previous", String(64), nullable=False),
    Column("entry_sha256", String(64), nullable=False),
    Column("epsilon", Float, nullable=True),  # version 2: the ε a private release spent (None: not private)
    Column("delta", Float, nullable=True),  # version 2: its δ
    Column("drafted_by", Text, nullable=True),  # the team's columns (``team_schema``): who drafted the release
    Column("approved_by", Text, nullable=True),  # and who approved it (the same user in single-user mode)
    Column("total_epsilon", Float, nullable=True),  # version 4: the file's total ε set by this entry
    Column("total_delta", Float, nullable=True),  # version 4: its total δ
    Column("total_raised", Boolean, nullable=True),  # version 5: a total raised on its owner's word
    Column("charged", Text, nullable=True),  # version 5: the other files a private release was charged against
)

fingerprints = Table(
    "fingerprints",
    metadata,
    Column("audit_id", Integer, primary_key=True),  # the spend's entry (no foreign key: entries outlive nothing)
    Column("source_sha256", String(64), nullable=False, index=True),
    Column("source_name", Text, nullable=False),
    Column("columns", Text, nullable=False),  # JSON list of the file's column names
    Column("person", Text, nullable=True),  # the person column's name (None: none was known)
    Column("people", LargeBinary, nullable=True),  # bottom-k sketch of the people (little-endian uint64)
    Column("people_count", Integer, nullable=True),  # distinct people hashed
    Column("rows", LargeBinary, nullable=False),  # bottom-k sketch of the whole normalized rows
    Column("rows_count", Integer, nullable=False),  # distinct rows hashed
)

_SQLITE_APPEND_ONLY = (
    "CREATE TRIGGER IF NOT EXISTS audit_no_update BEFORE UPDATE ON audit "
    "BEGIN SELECT RAISE(ABORT, 'The audit log is append-only: an entry cannot be changed.'); END",
    "CREATE TRIGGER IF NOT EXISTS audit_no_delete BEFORE DELETE ON audit "
    "BEGIN SELECT RAISE(ABORT, 'The audit log is append-only: an entry cannot be deleted.'); END",
)
_POSTGRESQL_APPEND_ONLY = (
    "CREATE OR REPLACE FUNCTION anonlib_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS "
    "$$ BEGIN RAISE EXCEPTION 'The audit log is append-only: an entry cannot be changed or deleted.'; END $$",
    "CREATE TRIGGER audit_no_change BEFORE UPDATE OR DELETE ON audit "
    "FOR EACH ROW EXECUTE FUNCTION anonlib_audit_append_only()",
    "CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON audit "
    "FOR EACH STATEMENT EXECUTE FUNCTION anonlib_audit_append_only()",
)


def create_version_1(connection: Connection) -> None:
    """The first schema: every table above and the audit log's append-only triggers."""
    metadata.create_all(connection)
    statements = _POSTGRESQL_APPEND_ONLY if connection.dialect.name == "postgresql" else _SQLITE_APPEND_ONLY
    for statement in statements:
        connection.execute(text(statement))


VERSION_2_COLUMNS = (
    ("projects", "budget_epsilon"),
    ("projects", "budget_delta"),
    ("audit", "epsilon"),
    ("audit", "delta"),
)


def add_version_2(connection: Connection) -> None:
    """Privacy budgets: a project's total ε and δ, and the ε and δ each private release spent
    (nullable columns added; a store just created by version 1 already has them)."""
    present = {table: {c["name"] for c in inspect(connection).get_columns(table)} for table in ("projects", "audit")}
    kind = Float().compile(dialect=connection.dialect)
    for table, column in VERSION_2_COLUMNS:
        if column not in present[table]:
            connection.execute(text(f"ALTER TABLE {table} ADD COLUMN {column} {kind}"))


def add_version_3(connection: Connection) -> None:
    """Released tables kept: a release recorded without a package keeps its table (a nullable
    column added; a store just created by version 1 already has it)."""
    present = {c["name"] for c in inspect(connection).get_columns("releases")}
    if "table_blob" not in present:
        kind = String(64).compile(dialect=connection.dialect)
        connection.execute(text(f"ALTER TABLE releases ADD COLUMN table_blob {kind} REFERENCES blobs(sha256)"))


VERSION_4_COLUMNS = (("audit", "total_epsilon"), ("audit", "total_delta"))


def add_version_4(connection: Connection) -> None:
    """Privacy budgets kept by the file: an audit entry may set a file's total ε and δ
    (nullable columns added; a store just created already has them)."""
    present = {c["name"] for c in inspect(connection).get_columns("audit")}
    kind = Float().compile(dialect=connection.dialect)
    for table, column in VERSION_4_COLUMNS:
        if column not in present:
            connection.execute(text(f"ALTER TABLE {table} ADD COLUMN {column} {kind}"))


VERSION_5_COLUMNS = (("audit", "total_raised"), ("audit", "charged"))


def add_version_5(connection: Connection) -> None:
    """The budget follows the people: a raise of a total marked, the other files a release was
    charged against, and the fingerprints table (added when missing; a store just created has them)."""
    present = {c["name"] for c in inspect(connection).get_columns("audit")}
    kinds = {"total_raised": Boolean().compile(dialect=connection.dialect), "charged": "TEXT"}
    for table, column in VERSION_5_COLUMNS:
        if column not in present:
            connection.execute(text(f"ALTER TABLE {table} ADD COLUMN {column} {kinds[column]}"))
    metadata.create_all(connection, tables=[fingerprints])
    team = (
        connection.dialect.name == "postgresql"
        and connection.execute(text("SELECT to_regproc('anonlib_file_spending')")).scalar()
    )
    if team:  # a team's store: its budget function reads the raises and the charges (team.sql); members write
        # no table: a spend's fingerprint goes through anonlib_add_fingerprint (projects team-setup adds it)
        connection.execute(text(file_spending_sql()))


def file_spending_sql() -> str:
    """The statement (de)fining the team's ``anonlib_file_spending``, as ``team.sql`` has it
    (between its ``-- file spending`` markers): a schema migration of a team's store re-creates it."""
    sql = files("anonlib.projects").joinpath("team.sql").read_text(encoding="utf-8")
    start, end = sql.index("-- file spending: begin"), sql.index("-- file spending: end")
    return sql[start:end].split("\n", 1)[1]


# version -> the function that brings a store of the version before it to this one
# (version 1 creates the schema on an empty database)
MIGRATIONS: dict[int, Callable[[Connection], None]] = {
    1: create_version_1,
    2: add_version_2,
    3: add_version_3,
    4: add_version_4,
    5: add_version_5,
}

# the tables under the names the store's modules use
META, BLOBS, PROJECTS, RELEASES, AUDIT, FINGERPRINTS = meta, blobs, projects, releases, audit, fingerprints
