"""On PostgreSQL the database keeps the team's rule (``team.md``). ``team_setup`` (run once by an
administrator login, ``projects team-setup``) creates the members' group role, row-level
security policies keyed on the member's role in each project, column rights that keep the key
and a draft's package out of a member's reach, functions that hand them only to the roles
allowed, and triggers keeping a draft's decision to an approver other than its drafter
(``team_sql``). The login that ran it owns the tables and is the dashboard's service login: it
sees every row, and the app checks the signed-in user's role on every call
(``anonlib.projects.team.require``).

Example:
    >>> sql = team_sql()
    >>> "ALTER TABLE public.meta ENABLE ROW LEVEL SECURITY" in sql, "SET search_path = public AS" in sql
    (True, False)
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib.resources import files

from sqlalchemy import text

from ..core.errors import ProjectError
from .schema import file_spending_sql  # noqa: F401 - named here too, beside the team's SQL
from .store import ProjectStore
from .team_schema import MEMBER_LOGIN

GROUP = "anonlib_members"  # the members' group role on PostgreSQL


def team_sql() -> str:
    """The team's SQL (``team.sql``, kept beside this module): grants, row-level security on every
    table, the triggers keeping drafts and logs, and the SECURITY DEFINER functions through which
    alone a member's login changes anything. Idempotent: run again, it upgrades an earlier setup."""
    return files("anonlib.projects").joinpath("team.sql").read_text(encoding="utf-8")


def team_setup(store: ProjectStore, logins: Iterable[str] = ()) -> list[str]:
    """Make the PostgreSQL store at ``store`` a team's (``team_sql``) and grant the members' group
    role to ``logins`` (each must exist); the logins granted. Run by an administrator login, which
    owns the tables (and is the dashboard's service login)."""
    if store.engine.dialect.name != "postgresql":
        raise ProjectError(
            "projects team-setup makes a PostgreSQL store a team's (ANONLIB_STORE=postgresql://...); a SQLite "
            "file belongs to whoever can read it."
        )
    granted = []
    with store._transaction() as c:
        if c.execute(text(MEMBER_LOGIN)).scalar():
            raise ProjectError("projects team-setup is run by the store's administrator login, not a member's.")
        # the whole file as one script, without parameters (its % and ? are PostgreSQL's, not placeholders)
        c.connection.dbapi_connection.cursor().execute(team_sql())
        for login in logins:
            name = str(login).strip()
            if not name:
                continue
            if not c.execute(text("SELECT 1 FROM pg_roles WHERE rolname = :n"), {"n": name}).first():
                raise ProjectError(f"There is no database login '{name}'; create it first (CREATE ROLE {name} LOGIN).")
            c.execute(text(f'GRANT {GROUP} TO "{name.replace(chr(34), "")}"'))
            granted.append(name)
    return granted


__all__ = ["GROUP", "team_setup", "team_sql"]
