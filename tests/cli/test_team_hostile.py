"""Every attack of ``team.md`` part 2 (section 5) against a real PostgreSQL server, each
as the member's own login (psycopg, as ``psql`` would send it): owner anna, analyst al, approver
ben, viewer cara, and dan, the owner of another project only. Each attack fails and the store is
unchanged: every table's rows are digested by the administrator before and after.

One database on the session's server; the team is made through the library as each login (the
same functions the command line calls), so the module stays within a few seconds."""

from __future__ import annotations

import hashlib
import json

import pandas as pd
import psycopg
import pytest

from anonlib.core.dataset import Dataset
from anonlib.core.errors import AccessError, AnonlibError
from anonlib.projects import ProjectState, ProjectStore, spend_privacy, verify_chain
from anonlib.projects.drafts import approve, draft_release, hand_out
from anonlib.projects.records import dumps
from anonlib.projects.team import Member, create_project, set_member
from anonlib.projects.team_postgres import team_setup
from anonlib.workflow import ReleaseTarget, WorkingCopy, release_package

pytestmark = pytest.mark.postgres

LOGINS = ("anna", "al", "ben", "cara", "dan")
TABLES = ("meta", "blobs", "projects", "releases", "audit", "members", "drafts", "refusals", "member_changes")
TABLES += ("fingerprints",)
COLUMN = {"meta": "value", "blobs": "data", "projects": "state", "releases": "package_blob", "audit": "username"}
COLUMN |= {"members": "role", "drafts": "state", "refusals": "who", "member_changes": "who", "fingerprints": "rows"}


def _copy(k: int) -> WorkingCopy:
    frame = pd.DataFrame({"age": [30, 30, 40, 40, 50, 50], "zip": ["1", "1", "2", "2", "3", "3"]})
    ds = Dataset.from_frame("registry.csv", frame, {"age": "quasi-identifier", "zip": "quasi-identifier"})
    return WorkingCopy.start(ds, ReleaseTarget(k=k, max_suppressed=0.0))


@pytest.fixture(scope="module")
def team(request):
    """The team's store and a URL per login: survey (anna owner, al analyst, ben approver, cara
    viewer) with release 1 handed out, release 2 approved, release 3 waiting; dan's project trial."""
    from postgres_server import new_database

    admin = new_database(request.getfixturevalue("postgresql"))
    plain = admin.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(plain, autocommit=True) as c:
        for login in LOGINS:
            c.execute(
                f"DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{login}') "
                f"THEN CREATE ROLE {login} LOGIN; END IF; END $$"
            )
    team_setup(ProjectStore(admin), LOGINS)

    def url(login: str, driver: str = "postgresql+psycopg://") -> str:
        return admin.replace("postgresql+psycopg://postgres@", f"{driver}{login}@")

    as_ = {login: ProjectStore(url(login)) for login in LOGINS}
    raw = b"age,zip\n30,1\n30,1\n40,2\n40,2\n50,3\n50,3\n"
    create_project(as_["anna"], Member("anna"), "survey", ProjectState.of(_copy(2), "upload"), raw)
    for login, role in (("al", "analyst"), ("ben", "approver"), ("cara", "viewer")):
        set_member(as_["anna"], "survey", login, role, by=Member("anna"))
    create_project(as_["dan"], Member("dan"), "trial", ProjectState.of(_copy(3), "upload"), raw)
    first = draft_release(as_["al"], "survey", release_package(_copy(2)), member=Member("al"), source=raw)
    approve(as_["ben"], "survey", first.id, Member("ben"), comment="checked")
    handed = hand_out(as_["al"], "survey", first.id, Member("al"))
    second = draft_release(as_["al"], "survey", release_package(_copy(2)), member=Member("al"))
    approve(as_["ben"], "survey", second.id, Member("ben"), comment="checked")
    third = draft_release(as_["al"], "survey", release_package(_copy(2)), member=Member("al"))
    return {"admin": plain, "url": url, "as": as_, "handed": handed, "drafts": (first.id, second.id, third.id)}


def _state(admin: str) -> dict[str, str]:
    """Every table's rows digested (the administrator's view: every row, every column)."""
    with psycopg.connect(admin) as c:
        return {
            t: c.execute(f"SELECT md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) FROM {t} x").fetchone()[
                0
            ]
            for t in TABLES
        }


def _attempt(team, login: str, *statements: str) -> str | None:
    """Run ``statements`` in one transaction as ``login`` (then rolled back if it did not fail);
    the error's message, or None when every statement ran."""
    with psycopg.connect(team["url"](login, "postgresql://")) as c:
        try:
            for statement in statements:
                c.execute(statement)
        except psycopg.Error as err:
            return str(err).splitlines()[0]
        c.commit()  # what went through is kept: the store's digest shows it
    return None


def _scalar(team, login: str, query: str):
    with psycopg.connect(team["url"](login, "postgresql://")) as c:
        return c.execute(query).fetchone()[0]


def _append(spaced: bool = False, **fields) -> str:
    """A call of ``anonlib_append_entry`` by dan for his project trial (previous: its chain's tail)."""
    entry = {
        "time": "2026-01-01T00:00:00Z", "project_id": 2, "project": "trial", "source_name": "registry.csv",
        "source_sha256": None, "target": "x", "met": True, "records": 0, "released": 0, "suppressed": 0,
        "released_sha256": "", "package_sha256": None, "parts": {}, "user": "dan", "made_by": "command line",
        "previous": "(the tail)",
    } | fields  # fmt: skip
    text = json.dumps(entry, indent=1) if spaced else dumps(entry)
    tail = (  # the chain is per project: the last entry of trial's (project 2's) chain
        "(SELECT coalesce((SELECT entry_sha256 FROM public.anonlib_audit_links() WHERE project_id = 2 "
        "ORDER BY id DESC LIMIT 1), repeat('0', 64)))"
    )
    return f"SELECT public.anonlib_append_entry(replace('{text}', '(the tail)', {tail}))"


# the numbered attacks of the issue, each: (login, statements, what the error says)
NUMBERED = [
    # 1. ON CONFLICT with another project's id: no trigger makes anyone owner; no INSERT at all
    ("dan", ["INSERT INTO projects (id, name, created, updated, version, origin, source_name, records, columns, "
             "keep_file, state, change, key) VALUES (1, 'x', '', '', 1, '', '', 0, 0, false, '', '', '\\x00') "
             "ON CONFLICT DO NOTHING"], "permission denied for table projects"),
    ("dan", ["SELECT public.anonlib_create_project('survey', 'o', 's', 1, 1, false, NULL, NULL, '{}', 'c', "
             "decode(repeat('ab', 32), 'hex'))"], "duplicate key value"),
    ("dan", ["INSERT INTO members VALUES (1, 'dan', 'owner', '', '') ON CONFLICT DO NOTHING"],
     "permission denied for table members"),
    # 2. temporary objects named like ours are never read by the functions
    ("dan", ["CREATE TEMP TABLE members (project_id int, login text, role text)",
             "INSERT INTO members VALUES (1, 'dan', 'owner')", "SET search_path = pg_temp, public",
             "SELECT public.anonlib_set_member(1, 'dan', 'owner')"], "There is no project number 1 of which dan"),
    ("dan", ["CREATE FUNCTION pg_temp.anonlib_role(integer) RETURNS text LANGUAGE sql AS $$ SELECT 'owner' $$",
             "SET search_path = pg_temp, public", "SELECT public.anonlib_decide_draft(3, true, 'x')"],
     "no release draft 3 of which dan"),
    ("cara", ["CREATE TEMP TABLE drafts AS SELECT 3 AS id, 1 AS project_id, 'approved' AS state",
              "SET search_path = pg_temp, public", "SELECT public.anonlib_draft_bytes(3, 'package')"],
     "Your role in project survey is viewer"),
    # 3. a draft inserted already approved by someone else; a draft made through the function is a draft
    ("al", ["INSERT INTO drafts (project_id, time, drafted_by, made_by, source_name, target, met, released, "
            "suppressed, package_sha256, package, state, decided_by, approved_sha256) VALUES (1, '', 'al', 'x', 'x', "
            "'x', true, 1, 0, 'x', '\\x00', 'approved', 'ben', 'x')"], "permission denied for table drafts"),
    # 4. meta: team mode cannot be switched off, the log's head not moved
    ("cara", ["UPDATE meta SET value = 'off' WHERE key = 'team'"], "permission denied for table meta"),
    ("cara", ["DELETE FROM meta WHERE key = 'team'"], "permission denied for table meta"),
    ("ben", ["INSERT INTO meta VALUES ('team', 'off') ON CONFLICT (key) DO UPDATE SET value = 'off'"],
     "permission denied for table meta"),
    # 5. no draft column changes, by any member
    ("ben", ["UPDATE drafts SET target = 'k = 50', met = true WHERE id = 3"], "permission denied for table drafts"),
    ("al", ["UPDATE drafts SET comment = 'fine' WHERE id = 2"], "permission denied for table drafts"),
    # 6. a kept release cannot be replaced, nor its blob swapped
    ("al", ["UPDATE releases SET package_blob = NULL"], "permission denied for table releases"),
    ("anna", ["DELETE FROM releases"], "permission denied for table releases"),
    ("anna", ["UPDATE blobs SET data = '\\x00'"], "permission denied for table blobs"),
    ("anna", ["INSERT INTO blobs VALUES (repeat('0', 64), 1, '\\x00')"], "permission denied for table blobs"),
    # 7. the audit chain: no forged row, not even through the function
    ("dan", ["INSERT INTO audit (time, project_id, project, source_name, target, met, records, released, suppressed, "
             "released_sha256, parts, username, made_by, previous, entry_sha256) VALUES ('', 2, 'trial', '', '', "
             "true, 0, 0, 0, '', '{}', 'dan', '', '', '')"], "permission denied for table audit"),
    ("dan", [_append(released=1)], "recorded only when an approved draft is handed out"),
    ("dan", ["SELECT public.anonlib_chain_tail(2)"], "permission denied for function anonlib_chain_tail"),
    ("dan", [_append(epsilon=1.0, delta=0.0, previous="f" * 64)], "does not state what"),
    ("dan", [_append(epsilon=1.0, delta=0.0, user="ben")], "does not state what"),
    ("dan", [_append(epsilon=-5.0, delta=0.0)], "spends a positive"),
    ("dan", [_append(epsilon=1.0, delta=0.0, spaced=True)], "not one the app writes (not in canonical form)"),
    ("dan", [_append(epsilon=1.0, delta=0.0, target=5)], "not one the app writes (the field target is not string)"),
    ("dan", [_append(epsilon=1.0, delta=0.0, forged=True)], "not one the app writes (an unknown field forged)"),
    ("dan", ["SELECT public.anonlib_append_entry('{\"project_id\": 2}')"], "not one the app writes"),
    ("al", ["SELECT public.anonlib_hand_out(2, '{\"project_id\": 1}', 'r', '\\x00')"], "does not state the hand-out"),
    ("cara", ["SELECT public.anonlib_hand_out(2, '{}', 'r', '\\x00')"], "Your role in project survey is viewer"),
    ("dan", ["SELECT public.anonlib_add_fingerprint(1, 'x', 'x', '[]', NULL, NULL, NULL, '\\x00', 1)"],
     "beside a private release"),
    # 8. four eyes and roles, through every function
    ("al", ["SELECT public.anonlib_decide_draft(3, true, 'mine')"], "Your role in project survey is analyst"),
    ("anna", ["SELECT public.anonlib_create_draft(1, 'x', NULL, 'x', NULL, 't', true, 1, 0, '\\x00', NULL)",
              "SELECT public.anonlib_decide_draft((SELECT max(id) FROM drafts), true, 'mine')"], "You drafted release"),
    ("cara", ["SELECT public.anonlib_decide_draft(3, true, 'ok')"], "Your role in project survey is viewer"),
    ("ben", ["SELECT public.anonlib_decide_draft(1, true, 'again')"], "already released"),
    ("cara", ["SELECT public.anonlib_withdraw_approval(2, 'no')"], "Only the approver of release 2"),
    ("ben", ["SELECT public.anonlib_set_member(1, 'ben', 'owner')"], "Your role in project survey is approver"),
    ("anna", ["SELECT public.anonlib_set_member(1, 'anna', 'viewer')"], "no owner left"),
    ("al", ["SELECT public.anonlib_delete_project(1)"], "Your role in project survey is analyst"),
    ("cara", ["SELECT public.anonlib_save_project(1, 1, '{}', 'x', 1, 1)"], "Your role in project survey is viewer"),
    ("cara", ["SELECT public.anonlib_rename_project(1, 'mine')"], "Your role in project survey is viewer"),
    ("ben", ["SELECT public.anonlib_keep_file(1, false, NULL)"], "Your role in project survey is approver"),
    ("ben", ["SELECT public.anonlib_create_draft(1, 'x', NULL, 'x', NULL, 't', true, 1, 0, '\\x00', NULL)"],
     "Your role in project survey is approver"),
    ("dan", ["SELECT public.anonlib_draft_bytes(1, 'source')"], "no release draft 1 of which dan"),
    # the database itself: no role switch, no schema change, no sequence, no policy, no trigger dropped
    ("dan", ["SET SESSION AUTHORIZATION anna"], "permission denied"),
    ("dan", ["SET ROLE anna"], "permission denied"),
    ("dan", ["ALTER TABLE projects DISABLE ROW LEVEL SECURITY"], "must be owner"),
    ("dan", ["DROP POLICY anonlib_projects_read ON projects"], "must be owner"),
    ("al", ["ALTER TABLE drafts DISABLE TRIGGER drafts_immutable"], "must be owner"),
    ("dan", ["CREATE FUNCTION public.anonlib_x() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$"],
     "permission denied for schema public"),
    ("dan", ["CREATE OR REPLACE FUNCTION public.anonlib_role(pid integer) RETURNS text LANGUAGE sql AS $$ "
             "SELECT 'owner' $$"], "permission denied for schema public"),
    ("dan", ["SELECT setval('projects_id_seq', 100)"], "permission denied for sequence"),
    ("dan", ["COPY meta FROM STDIN"], "permission denied for table meta"),
    ("anna", ["TRUNCATE refusals"], "permission denied for table refusals"),
]  # fmt: skip


@pytest.mark.parametrize("number", range(len(NUMBERED)))
def test_each_attack_fails_and_changes_nothing(team, number):
    login, statements, said = NUMBERED[number]
    before = _state(team["admin"])
    error = _attempt(team, login, *statements)
    assert error is not None and said in error, (login, statements, error)
    assert _state(team["admin"]) == before


def test_the_same_shapes_on_every_table_for_every_login(team):
    """INSERT (with ON CONFLICT), UPDATE, DELETE and TRUNCATE on every table, as every login: each
    refused by the database's rights, nothing changed."""
    before = _state(team["admin"])
    for login in LOGINS:
        connection = psycopg.connect(team["url"](login, "postgresql://"))
        for table in TABLES:
            for statement in (
                f"INSERT INTO {table} SELECT * FROM {table} ON CONFLICT DO NOTHING",
                f"INSERT INTO {table} DEFAULT VALUES",
                f"UPDATE {table} SET {COLUMN[table]} = {COLUMN[table]}",
                f"DELETE FROM {table}",
                f"TRUNCATE {table}",
            ):
                try:
                    connection.execute(statement)
                    error = None
                except psycopg.Error as err:
                    error = str(err)
                connection.rollback()
                assert error is not None and "permission denied" in error, (login, statement, error)
        connection.close()
    assert _state(team["admin"]) == before


def test_what_a_member_reads_with_their_own_login(team):
    """No other project's rows, no key but the owner's and analyst's, no blob's bytes, no draft's package."""
    assert _scalar(team, "dan", "SELECT count(*) FROM projects") == 1  # his own
    for table in ("audit", "releases", "drafts", "members", "member_changes"):
        assert _scalar(team, "dan", f"SELECT count(*) FROM {table} WHERE project_id = 1") == 0, table
    assert _scalar(team, "dan", "SELECT public.anonlib_project_key(1)") is None
    for login, has_key in (("anna", True), ("al", True), ("ben", False), ("cara", False)):
        assert (_scalar(team, login, "SELECT public.anonlib_project_key(1)") is not None) is has_key, login
    for login in LOGINS:
        assert "permission denied" in _attempt(team, login, "SELECT key FROM projects")
        assert "permission denied" in _attempt(team, login, "SELECT data FROM blobs")
        assert "permission denied" in _attempt(team, login, "SELECT package FROM drafts")
    assert _scalar(team, "cara", "SELECT public.anonlib_blob(file_sha256) FROM projects") is None
    assert _scalar(team, "ben", "SELECT length(public.anonlib_blob(file_sha256)) FROM projects") == 38
    # the approved draft's package is read only with the approved digest
    package = _scalar(team, "ben", "SELECT public.anonlib_draft_bytes(2, 'package')")
    approved = _scalar(team, "ben", "SELECT approved_sha256 FROM drafts WHERE id = 2")
    assert hashlib.sha256(package).hexdigest() == approved
    assert "no second person has approved it" in _attempt(
        team, "ben", "SELECT public.anonlib_draft_bytes(3, 'package')"
    )
    # the refusals: dan sees his own only; anna (owner) those on her project
    with psycopg.connect(team["url"]("cara", "postgresql://"), autocommit=True) as c:
        c.execute("SELECT public.anonlib_log_refusal('file', 'survey', 'Your role in project survey is viewer.')")
    assert _scalar(team, "anna", "SELECT count(*) FROM refusals WHERE who = 'cara'") >= 1
    assert _scalar(team, "dan", "SELECT count(*) FROM refusals WHERE who = 'cara'") == 0
    # the member changes are on record, readable by the project's members
    assert _scalar(
        team, "cara", "SELECT string_agg(login || ':' || role_after, ',' ORDER BY id) FROM member_changes"
    ) == ("anna:owner,al:analyst,ben:approver,cara:viewer")


def test_a_swapped_blob_or_package_is_never_handed_out(team):
    """Even the tables' owner changing bytes behind the functions: the kept package's blob changed
    after the first hand-out, and an approved draft's package changed; each later hand-out refuses."""
    first = team["drafts"][0]
    anna, al = team["as"]["anna"], team["as"]["al"]
    second = draft_release(al, "survey", release_package(_copy(2)), member=Member("al")).id
    approve(team["as"]["ben"], "survey", second, Member("ben"), comment="checked")
    assert hand_out(al, "survey", first, Member("al")) == team["handed"]  # checked again, the same bytes
    sha = hashlib.sha256(team["handed"]).hexdigest()
    with psycopg.connect(team["admin"]) as c:
        c.execute("ALTER TABLE drafts DISABLE TRIGGER drafts_immutable")  # an administrator, not a member
        c.execute("UPDATE drafts SET package = package || '\\x00'::bytea WHERE id = %s", (second,))
        c.execute("ALTER TABLE drafts ENABLE TRIGGER drafts_immutable")
        c.execute("UPDATE blobs SET data = data || '\\x00'::bytea WHERE sha256 = %s", (sha,))
    with pytest.raises(AnonlibError, match="no longer has th"):
        hand_out(al, "survey", first, Member("al"))
    with pytest.raises(AnonlibError, match="no longer has the SHA-256"):
        hand_out(anna, "survey", second, Member("anna"))
    with pytest.raises(AccessError):
        approve(team["as"]["al"], "survey", 3, Member("al"), comment="mine")


def test_a_broken_chain_stops_only_its_own_project(team):
    """The audit chain is per project (team.md part 2, 5): an entry removed from one project's
    chain behind the functions (by the tables' owner) stops that project's next entry, in one
    sentence naming it, and no other project's. Last in the module: it leaves ward's chain broken."""
    anna, dan = team["as"]["anna"], team["as"]["dan"]

    def spend(store: ProjectStore, project: str, file: str) -> None:  # a private release's spend: an entry
        sha = hashlib.sha256(file.encode()).hexdigest()
        spend_privacy(store, project, epsilon=0.1, delta=0.0, source_name=file, source_sha256=sha)

    create_project(anna, Member("anna"), "ward", ProjectState.of(_copy(2), "upload"), b"age,zip\n31,1\n")
    spend(anna, "ward", "ward.csv")
    with psycopg.connect(team["admin"]) as c:  # an administrator, not a member: what no member can do
        c.execute("ALTER TABLE audit DISABLE TRIGGER USER")
        c.execute("DELETE FROM audit WHERE project = 'ward'")
        c.execute("ALTER TABLE audit ENABLE TRIGGER USER")
    with pytest.raises(AnonlibError, match="chain of project 'ward' is broken: the chain is empty but its head says"):
        spend(anna, "ward", "ward-2.csv")
    spend(dan, "trial", "trial.csv")  # another project's entry is recorded
    hand_out(team["as"]["al"], "survey", team["drafts"][1], Member("al"))  # and its release handed out
    assert any("chain of project 'ward'" in p for p in verify_chain(anna))
    assert verify_chain(anna, "survey") == [] and verify_chain(dan, "trial") == []
