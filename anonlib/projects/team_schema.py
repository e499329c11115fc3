"""The team's tables (``team.md``), kept apart from the store's numbered schema: members and
their roles per project, release drafts waiting for a second person, and the log of refused
attempts. Created (``ensure_team_tables``) by every opening that can write, whatever the store's
schema version, and recorded in ``meta`` as ``team_schema`` (its own version), so the team's
migration never collides with the store's numbered ones.

- ``members``: (project, login) -> role (``owner``, ``analyst``, ``approver``, ``viewer``); a
  login is a PostgreSQL login (the command line) or a signed-in user's subject or e-mail (the
  dashboard). Its foreign key is deferred: on PostgreSQL the creator's row is written by a
  trigger before the project's own row (``team_setup``).
- ``drafts``: a release built and waiting: its package (and the file it was made from) kept
  here, never handed out, until an approver other than the drafter approves its SHA-256
  (``decided_by``, ``approved_sha256``); then the hand-out records it in the audit log
  (``audit_id``). Rejected drafts keep the reason.
- ``member_changes``: who added, removed or changed the role of whom, when (version 2); written
  by ``set_member`` / ``remove_member`` (on PostgreSQL by the team's functions only).
- ``refusals``: who tried what, when, on which project, and the sentence they got; no data.
  Append-only like the audit log (triggers on both backends).
- ``audit.drafted_by`` / ``audit.approved_by``: who drafted and who approved each release
  (a single user's one-step release names them both); columns of the audit table
  (``anonlib.projects.schema``) added here to stores made before them.

Example:
    >>> from sqlalchemy import create_engine, inspect
    >>> engine = create_engine("sqlite://")
    >>> with engine.begin() as c:
    ...     from anonlib.projects.schema import create_version_1
    ...     create_version_1(c)
    ...     ensure_team_tables(c)
    ...     sorted(t for t in inspect(c).get_table_names() if t in {"members", "drafts", "refusals"})
    ['drafts', 'members', 'refusals']
"""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    Connection,
    ForeignKey,
    Integer,
    LargeBinary,
    String,
    Table,
    Text,
    inspect,
    select,
    text,
)

from ..core.errors import StoreError
from .schema import AUDIT, META, metadata

TEAM_SCHEMA_VERSION = 2  # 2: member_changes; the state 'withdrawn'
ROLES = ("owner", "analyst", "approver", "viewer")

members = Table(
    "members",
    metadata,
    Column(
        "project_id",
        Integer,
        ForeignKey("projects.id", ondelete="CASCADE", deferrable=True, initially="DEFERRED"),
        primary_key=True,
    ),
    Column("login", String(320), primary_key=True),
    Column("role", String(16), nullable=False),
    Column("added", String(32), nullable=False),
    Column("added_by", Text, nullable=False),
)

drafts = Table(
    "drafts",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("project_id", Integer, ForeignKey("projects.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("time", String(32), nullable=False),
    Column("drafted_by", Text, nullable=False),
    Column("made_by", Text, nullable=False),
    Column("project_version", Integer, nullable=True),  # the working copy it was drafted from (dashboard)
    Column("source_name", Text, nullable=False),
    Column("source_sha256", String(64), nullable=True),
    Column("target", Text, nullable=False),
    Column("met", Boolean, nullable=False),
    Column("released", Integer, nullable=False),
    Column("suppressed", Integer, nullable=False),
    Column("package_sha256", String(64), nullable=False),
    Column("package", LargeBinary, nullable=False),  # never readable by a member before approval (PostgreSQL)
    Column("source", LargeBinary, nullable=True),  # the file it was made from, kept with the release
    Column("state", String(16), nullable=False),  # draft, approved, rejected, released
    Column("decided_by", Text, nullable=True),
    Column("decided_time", String(32), nullable=True),
    Column("approved_sha256", String(64), nullable=True),
    Column("comment", Text, nullable=True),
    Column("reason", Text, nullable=True),
    Column("audit_id", Integer, nullable=True),
)

refusals = Table(
    "refusals",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("time", String(32), nullable=False),
    Column("who", Text, nullable=False),
    Column("action", Text, nullable=False),
    Column("project", Text, nullable=True),
    Column("sentence", Text, nullable=False),
    implicit_returning=False,
)

member_changes = Table(
    "member_changes",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("time", String(32), nullable=False),
    Column("project_id", Integer, nullable=False, index=True),  # no foreign key: the history outlives its project
    Column("who", Text, nullable=False),
    Column("login", Text, nullable=False),
    Column("role_before", String(16), nullable=True),  # None: added
    Column("role_after", String(16), nullable=True),  # None: removed
)

MEMBERS, DRAFTS, REFUSALS, MEMBER_CHANGES = members, drafts, refusals, member_changes
TEAM_TABLES = (members, drafts, refusals, member_changes)

_SQLITE_REFUSALS_APPEND_ONLY = (
    "CREATE TRIGGER IF NOT EXISTS refusals_no_update BEFORE UPDATE ON refusals "
    "BEGIN SELECT RAISE(ABORT, 'The log of refusals is append-only.'); END",
    "CREATE TRIGGER IF NOT EXISTS refusals_no_delete BEFORE DELETE ON refusals "
    "BEGIN SELECT RAISE(ABORT, 'The log of refusals is append-only.'); END",
)
_POSTGRESQL_REFUSALS_APPEND_ONLY = (
    "CREATE OR REPLACE FUNCTION anonlib_refusals_append_only() RETURNS trigger LANGUAGE plpgsql AS "
    "$$ BEGIN RAISE EXCEPTION 'The log of refusals is append-only.'; END $$",
    "DROP TRIGGER IF EXISTS refusals_no_change ON refusals",
    "CREATE TRIGGER refusals_no_change BEFORE UPDATE OR DELETE ON refusals "
    "FOR EACH ROW EXECUTE FUNCTION anonlib_refusals_append_only()",
)

AUDIT_COLUMNS = ("drafted_by", "approved_by")
MEMBER_LOGIN = (
    "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'anonlib_members') "
    "AND pg_catalog.pg_has_role(session_user, 'anonlib_members', 'MEMBER') "
    "AND NOT (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = session_user)"
)


def ensure_team_tables(c: Connection) -> None:
    """Create the team's tables and columns when missing (in the opening transaction ``c``)."""
    row = c.execute(select(META.c.value).where(META.c.key == "team_schema")).first()
    if row is not None and int(row[0]) >= TEAM_SCHEMA_VERSION:
        return
    if c.dialect.name == "postgresql" and c.execute(text(MEMBER_LOGIN)).scalar():
        raise StoreError(
            "This team's store was set up by an earlier anonlib; its administrator runs projects team-setup again "
            "to upgrade it (a member's login changes no table)."
        )
    metadata.create_all(c, tables=list(TEAM_TABLES))
    present = {col["name"] for col in inspect(c).get_columns(AUDIT.name)}
    for column in AUDIT_COLUMNS:
        if column not in present:
            c.execute(text(f"ALTER TABLE audit ADD COLUMN {column} TEXT"))
    postgres = c.dialect.name == "postgresql"
    for statement in _POSTGRESQL_REFUSALS_APPEND_ONLY if postgres else _SQLITE_REFUSALS_APPEND_ONLY:
        c.execute(text(statement))
    if row is None:
        c.execute(META.insert().values(key="team_schema", value=str(TEAM_SCHEMA_VERSION)))
    else:
        c.execute(META.update().where(META.c.key == "team_schema").values(value=str(TEAM_SCHEMA_VERSION)))
