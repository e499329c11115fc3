"""On PostgreSQL the database keeps the team's rule (``team.md``). ``team_setup`` (run once by an
administrator login, ``projects team-setup``) creates the members' group role, row-level
security policies keyed on the member's role in each project, column rights that keep the key
and a draft's package out of a member's reach, functions that hand them only to the roles
allowed, and triggers keeping a draft's decision to an approver other than its drafter
(``team_sql``). The login that ran it owns the tables and is the dashboard's service login: it
sees every row, and the app checks the signed-in user's role on every call
(``anonlib.projects.team.require``).

Example:
    >>> statements = team_sql()
    >>> any("ENABLE ROW LEVEL SECURITY" in s for s in statements), statements[2].split(" TO ")[1]
    (True, 'anonlib_members')
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import text

from ..core.errors import ProjectError
from .schema import PROJECTS
from .store import ProjectStore
from .team_schema import DRAFTS

GROUP = "anonlib_members"  # the members' group role on PostgreSQL


def team_sql(group: str = GROUP) -> list[str]:
    """The statements ``team_setup`` runs: the group role's rights, the functions the policies
    and the app use (``SECURITY DEFINER``: they read the members table for the caller), the
    row-level security policies, and the triggers keeping a draft's decision to an approver."""
    role = "anonlib_role"
    readable = ", ".join(c.name for c in PROJECTS.c if c.name != "key")
    drafts_readable = ", ".join(c.name for c in DRAFTS.c if c.name not in ("package", "source"))
    definer = "LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = public"
    return [
        f"DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{group}') THEN "
        f"CREATE ROLE {group} NOLOGIN; END IF; END $$",
        f"GRANT USAGE ON SCHEMA public TO {group}",
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON meta, blobs, releases, members TO {group}",
        f"GRANT SELECT, INSERT ON audit, refusals, fingerprints TO {group}",
        f"REVOKE SELECT ON projects, drafts FROM {group}",
        f"GRANT SELECT ({readable}) ON projects TO {group}",
        f"GRANT INSERT, UPDATE, DELETE ON projects TO {group}",
        f"GRANT SELECT ({drafts_readable}) ON drafts TO {group}",
        f"GRANT INSERT, UPDATE ON drafts TO {group}",
        f"GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO {group}",
        # the caller's role in a project (VOLATILE: it sees the owner row the creating statement just wrote)
        f"CREATE OR REPLACE FUNCTION {role}(pid integer) RETURNS text {definer} AS $$ "
        "SELECT role FROM members WHERE project_id = pid AND login = session_user "
        "ORDER BY array_position(ARRAY['owner','analyst','approver','viewer']::text[], role) LIMIT 1 $$",
        f"CREATE OR REPLACE FUNCTION anonlib_project_key(pid integer) RETURNS bytea {definer} AS $$ "
        f"SELECT key FROM projects WHERE id = pid AND {role}(pid) IN ('owner', 'analyst') $$",
        f"CREATE OR REPLACE FUNCTION anonlib_draft_package(did integer) RETURNS bytea {definer} AS $$ "
        f"SELECT package FROM drafts WHERE id = did AND state IN ('approved', 'released') "
        f"AND {role}(project_id) IN ('owner', 'analyst', 'approver') $$",
        f"CREATE OR REPLACE FUNCTION anonlib_draft_source(did integer) RETURNS bytea {definer} AS $$ "
        f"SELECT source FROM drafts WHERE id = did AND state IN ('approved', 'released') "
        f"AND {role}(project_id) IN ('owner', 'analyst', 'approver') $$",
        # a blob is readable through a project or release of a role that may read it, or by nobody's
        # reference (so the member erasing its last reference can erase it too)
        f"CREATE OR REPLACE FUNCTION anonlib_blob_used(sha text) RETURNS boolean {definer} AS $$ "
        "SELECT EXISTS (SELECT 1 FROM projects WHERE file_sha256 = sha) "
        "OR EXISTS (SELECT 1 FROM releases WHERE source_blob = sha OR package_blob = sha) $$",
        f"CREATE OR REPLACE FUNCTION anonlib_blob_readable(sha text) RETURNS boolean {definer} AS $$ "
        f"SELECT EXISTS (SELECT 1 FROM projects WHERE file_sha256 = sha AND {role}(id) IN ('owner','analyst','approver')) "
        f"OR EXISTS (SELECT 1 FROM releases WHERE (source_blob = sha OR package_blob = sha) "
        f"AND {role}(project_id) IN ('owner','analyst','approver')) $$",
        # the same bytes kept by a project the member cannot see are the same blob: added only when missing
        "CREATE OR REPLACE FUNCTION anonlib_put_blob(sha text, n bigint, bytes bytea) RETURNS void LANGUAGE sql "
        "VOLATILE SECURITY DEFINER SET search_path = public AS $$ INSERT INTO blobs (sha256, size, data) "
        "SELECT sha, n, bytes WHERE sha = encode(sha256(bytes), 'hex') ON CONFLICT (sha256) DO NOTHING $$",
        f"CREATE OR REPLACE FUNCTION anonlib_audit_links() RETURNS TABLE (id integer, previous text, entry_sha256 text) "
        f"{definer} AS $$ SELECT id, previous, entry_sha256 FROM audit $$",
        # a file's privacy budget is kept across every project over it, also those the member is not in
        file_spending_sql(),
        # the creator of a project is its owner (a member's login; the dashboard's service login adds the signed-in user)
        "CREATE OR REPLACE FUNCTION anonlib_creator_owns() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER "
        "SET search_path = public AS $$ BEGIN "
        f"IF pg_has_role(session_user, '{group}', 'MEMBER') THEN "
        "INSERT INTO members (project_id, login, role, added, added_by) "
        "VALUES (NEW.id, session_user, 'owner', NEW.created, session_user) ON CONFLICT DO NOTHING; END IF; "
        "RETURN NEW; END $$",
        "DROP TRIGGER IF EXISTS projects_creator_owns ON projects",
        "CREATE TRIGGER projects_creator_owns BEFORE INSERT ON projects FOR EACH ROW "
        "EXECUTE FUNCTION anonlib_creator_owns()",
        # a draft's package, digest and drafter never change; only an approver (or the owner) other than the
        # drafter decides it, and only an approved draft is handed out
        "CREATE OR REPLACE FUNCTION anonlib_draft_rules() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER "
        "SET search_path = public AS $$ BEGIN "
        f"IF NOT pg_has_role(session_user, '{group}', 'MEMBER') THEN RETURN NEW; END IF; "
        "IF NEW.package IS DISTINCT FROM OLD.package OR NEW.package_sha256 IS DISTINCT FROM OLD.package_sha256 "
        "OR NEW.drafted_by IS DISTINCT FROM OLD.drafted_by OR NEW.source IS DISTINCT FROM OLD.source "
        "OR NEW.project_id IS DISTINCT FROM OLD.project_id THEN "
        "RAISE EXCEPTION 'A draft''s package, digest and drafter cannot be changed.'; END IF; "
        "IF NEW.state IS DISTINCT FROM OLD.state OR NEW.decided_by IS DISTINCT FROM OLD.decided_by "
        "OR NEW.approved_sha256 IS DISTINCT FROM OLD.approved_sha256 THEN "
        "IF OLD.state = 'draft' AND NEW.state IN ('approved', 'rejected') THEN "
        "IF NEW.decided_by IS DISTINCT FROM session_user OR session_user = OLD.drafted_by "
        f"OR {role}(OLD.project_id) NOT IN ('owner', 'approver') "
        "OR (NEW.state = 'approved' AND NEW.approved_sha256 IS DISTINCT FROM OLD.package_sha256) THEN "
        "RAISE EXCEPTION 'Only an approver other than the drafter decides a draft.'; END IF; "
        "ELSIF OLD.state = 'approved' AND NEW.state = 'released' AND NEW.decided_by = OLD.decided_by "
        "AND NEW.approved_sha256 = OLD.approved_sha256 THEN NULL; "
        "ELSE RAISE EXCEPTION 'A draft moves from draft to approved or rejected, and from approved to released.'; "
        "END IF; END IF; RETURN NEW; END $$",
        "DROP TRIGGER IF EXISTS drafts_rules ON drafts",
        "CREATE TRIGGER drafts_rules BEFORE UPDATE ON drafts FOR EACH ROW EXECUTE FUNCTION anonlib_draft_rules()",
        *_policies(role),
    ]


def file_spending_sql() -> str:
    """The function giving a file's privacy budget across every project over it, also those the
    member is not in (sums and numbers, nothing else), for a SHA-256 the caller knows (the file's
    bytes): its spends (its own releases and those charged against it, their people overlapping
    its own) and its total, the smallest set since the last raise (``anonlib.projects.budget``)."""
    definer = "LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = public"
    return (
        "CREATE OR REPLACE FUNCTION anonlib_file_spending(sha text) RETURNS TABLE (releases bigint, epsilon "
        "double precision, delta double precision, total_epsilon double precision, total_delta double precision) "
        f"{definer} AS $$ SELECT s.n, s.e, s.d, t.total_epsilon, t.total_delta FROM (SELECT count(epsilon) AS n, "
        "coalesce(sum(epsilon), 0) AS e, coalesce(sum(delta), 0) AS d FROM audit WHERE epsilon IS NOT NULL "
        "AND (source_sha256 = sha OR charged LIKE '%\"' || sha || '\"%')) s LEFT JOIN (SELECT min(total_epsilon) "
        "AS total_epsilon, min(total_delta) AS total_delta FROM audit WHERE source_sha256 = sha AND total_epsilon "
        "IS NOT NULL AND id >= (SELECT coalesce(max(id), 0) FROM audit WHERE source_sha256 = sha AND total_epsilon "
        "IS NOT NULL AND total_raised)) t ON true $$"
    )


def _policies(role: str) -> list[str]:
    member = f"{role}(project_id) IS NOT NULL"
    rules = {
        "projects": [
            f"FOR SELECT USING ({role}(id) IS NOT NULL)",
            "FOR INSERT WITH CHECK (true)",
            f"FOR UPDATE USING ({role}(id) IN ('owner', 'analyst'))",
            f"FOR DELETE USING ({role}(id) = 'owner')",
        ],
        "members": [
            f"FOR SELECT USING ({member})",
            f"FOR INSERT WITH CHECK ({role}(project_id) = 'owner')",
            f"FOR UPDATE USING ({role}(project_id) = 'owner')",
            f"FOR DELETE USING ({role}(project_id) = 'owner')",
        ],
        "releases": [
            f"FOR SELECT USING ({member})",
            f"FOR INSERT WITH CHECK ({role}(project_id) IN ('owner', 'analyst', 'approver'))",
            f"FOR DELETE USING ({role}(project_id) = 'owner')",
        ],
        "audit": [f"FOR SELECT USING ({member})", f"FOR INSERT WITH CHECK ({member})"],
        "drafts": [
            f"FOR SELECT USING ({member})",
            f"FOR INSERT WITH CHECK ({role}(project_id) IN ('owner', 'analyst') AND drafted_by = session_user)",
            f"FOR UPDATE USING ({member})",
        ],
        "blobs": [
            "FOR SELECT USING (anonlib_blob_readable(sha256) OR NOT anonlib_blob_used(sha256))",
            "FOR INSERT WITH CHECK (true)",
            "FOR DELETE USING (NOT anonlib_blob_used(sha256))",
        ],
        "refusals": ["FOR SELECT USING (who = session_user)", "FOR INSERT WITH CHECK (who = session_user)"],
    }
    out = []
    for table, policies in rules.items():
        out.append(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
        for i, policy in enumerate(policies):
            out.append(f"DROP POLICY IF EXISTS anonlib_{table}_{i} ON {table}")
            out.append(f"CREATE POLICY anonlib_{table}_{i} ON {table} {policy}")
    return out


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
        for statement in team_sql():
            c.execute(text(statement))
        for login in logins:
            name = str(login).strip()
            if not name:
                continue
            if not c.execute(text("SELECT 1 FROM pg_roles WHERE rolname = :n"), {"n": name}).first():
                raise ProjectError(f"There is no database login '{name}'; create it first (CREATE ROLE {name} LOGIN).")
            c.execute(text(f'GRANT {GROUP} TO "{name.replace(chr(34), "")}"'))
            granted.append(name)
        store._set_meta(c, "team", "on")
    return granted


__all__ = ["GROUP", "team_setup", "team_sql"]
