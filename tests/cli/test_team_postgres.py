"""A team on a real PostgreSQL server (``team.md``, contract "A team on one server"): an
administrator runs ``projects team-setup``; four member logins work through the command line,
each connecting as themselves; the database's row-level security keeps the rule for ``psql``.

One test on the session's server (one database, five logins), so the server is started once."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from project_files import delivery

from anonlib.cli import main
from anonlib.core.errors import AccessError
from anonlib.core.fingerprint import fingerprint
from anonlib.projects import ProjectStore
from anonlib.projects.team import Member, is_team, require
from anonlib.workflow.release import digest

pytestmark = pytest.mark.postgres


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def team(postgresql, monkeypatch, tmp_path):
    """A new database on the session's server, the logins anna, ben, cara and dan, and
    ``as_(login)``: the command line run with ``ANONLIB_STORE`` naming that login."""
    import psycopg
    from postgres_server import new_database

    admin = new_database(postgresql).replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(admin, autocommit=True) as c:
        for login in ("anna", "ben", "cara", "dan"):
            c.execute(f"DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{login}') "
                      f"THEN CREATE ROLE {login} LOGIN; END IF; END $$")  # fmt: skip

    def url(login: str) -> str:
        return admin.replace("postgresql://postgres@", f"postgresql://{login}@")

    return admin, url


def run(capsys, monkeypatch, url: str, *argv) -> tuple[int, str, str]:
    monkeypatch.setenv("ANONLIB_STORE", url)
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def psql(url: str, query: str) -> tuple[int, str]:
    """``psql`` as that login: exit code and what it printed (rows unaligned, or the error)."""
    done = subprocess.run(["psql", url, "-X", "-A", "-t", "-c", query], capture_output=True, text=True, timeout=60)
    return done.returncode, (done.stdout + done.stderr).strip()


def test_four_logins_draft_approve_release_and_the_database_keeps_the_rule(team, tmp_path, capsys, monkeypatch):
    admin, url = team
    t = tmp_path
    (t / "m0.csv").write_bytes(delivery(0))

    def cli(login: str, *argv):
        return run(capsys, monkeypatch, admin if login == "admin" else url(login), *argv)

    code, out, _ = cli("admin", "projects", "team-setup", "--members", "anna,ben,cara,dan")
    assert code == 0 and "row-level security on" in out and "member login       dan" in out

    # anna drafts: nothing is written to --out, --recipe or --package; the JSON says draft and its number
    code, out, err = cli(
        "anna", "anonymize", t / "m0.csv", "--shield", "age,sex,zip", "--k", "5", "--max-suppressed", "0.1",
        "--out", t / "r.csv", "--recipe", t / "r.json", "--package", t / "p.zip", "--project", "survey", "--json",
    )  # fmt: skip
    made = json.loads(out)
    assert code == 0 and (made["state"], made["release"], made["project"]) == ("draft", 1, "survey"), err
    assert not any((t / name).exists() for name in ("r.csv", "r.json", "p.zip"))
    code, out, _ = cli(
        "anna", "projects", "members", "survey", "--add", "ben=approver", "--add", "cara=viewer", "--json"
    )
    assert code == 0 and json.loads(out) == [
        {"login": "anna", "role": "owner"},
        {"login": "ben", "role": "approver"},
        {"login": "cara", "role": "viewer"},
    ]

    refused = {}  # (login, what) -> the sentence
    for login, argv, what in [
        ("anna", ("projects", "approve", "survey", "--release", "1"), "approve own draft"),
        ("cara", ("projects", "approve", "survey", "--release", "1"), "viewer approves"),
        ("cara", ("projects", "export", "survey", "--out", t / "x.zip"), "viewer exports"),
        ("anna", ("projects", "release", "survey", "--release", "1", "--out", t / "p.zip"), "release unapproved"),
        ("dan", ("projects", "show", "survey"), "non-member opens"),
        ("cara", ("projects", "members", "survey", "--add", "cara=owner"), "viewer makes herself owner"),
    ]:
        code, out, err = cli(login, *argv)
        assert code == 2 and out == "", (what, out, err)
        refused[login, what] = err.strip()
    assert not (t / "x.zip").exists() and not (t / "p.zip").exists()
    assert refused["anna", "approve own draft"].endswith(
        "You drafted release 1 of project survey; another member with the approver role must approve it (four eyes)."
    )
    assert refused["cara", "viewer approves"].endswith(
        "Your role in project survey is viewer: only an owner or approver may approve or reject releases of it."
    )
    assert "only an owner or analyst may export it" in refused["cara", "viewer exports"]
    assert (
        "is a draft that cannot be handed out: no second person has approved it yet"
        in refused["anna", "release unapproved"]
    )
    assert refused["dan", "non-member opens"].endswith("There is no project 'survey' of which dan is a member.")
    assert "only an owner may change the members of it" in refused["cara", "viewer makes herself owner"]

    # dan's drafts list is empty; ben sees the draft waiting for him, approves it
    code, out, _ = cli("dan", "projects", "drafts", "--json")
    assert code == 0 and json.loads(out) == []
    code, out, _ = cli("ben", "projects", "drafts", "--json")
    (waiting,) = json.loads(out)
    assert waiting["waiting_for_you"] and waiting["drafted_by"] == "anna" and waiting["state"] == "draft"
    code, out, _ = cli("ben", "projects", "approve", "survey", "--release", "1", "--comment", "k = 5 checked")
    assert code == 0 and "approved by ben" in out

    # only now the package is handed out: it verifies and names both; the audit log names both with the digest
    code, _, err = cli("anna", "projects", "release", "survey", "--release", "1", "--out", t / "p.zip")
    assert code == 0 and (t / "p.zip").exists(), err
    code, out, _ = cli("anna", "verify", t / "p.zip", t / "m0.csv", "--project", "survey", "--json")
    checks = {c["part"]: c for c in json.loads(out)["checks"]}
    assert code == 0 and json.loads(out)["passed"]
    assert checks["approval"]["sentence"] == "drafted by anna and approved by ben, a second person"
    code, out, _ = cli("cara", "audit", "--json")
    (entry,) = json.loads(out)
    assert (entry["drafted_by"], entry["approved_by"], entry["user"]) == ("anna", "ben", "anna")
    assert entry["package_sha256"] == sha(t / "p.zip") and entry["release"] == "approved by a second person"
    code, out, _ = cli("dan", "audit", "--json")
    assert code == 0 and json.loads(out) == []  # the chain holds for dan too, and shows him nothing

    # the dashboard's service login (the tables' owner) reads every row, key included, and the app checks the role
    service = ProjectStore(admin.replace("postgresql://", "postgresql+psycopg://"))
    assert len(service.key("survey")) == 32 and is_team(service)
    with pytest.raises(AccessError, match="Your role in project survey is viewer: only an owner, analyst or approver"):
        require(service, "survey", Member("cara"), "file")

    # dan's own project: anna sees no trace of it, in the command line or psql
    (t / "m1.csv").write_bytes(delivery(1))
    code, out, err = cli(
        "dan", "anonymize", t / "m1.csv", "--shield", "age,sex,zip", "--k", "3", "--out", t / "d.csv", "--project", "trial",
        "--json",
    )  # fmt: skip
    assert code == 0 and json.loads(out)["state"] == "draft" and not (t / "d.csv").exists(), err
    code, out, _ = cli("anna", "projects", "list", "--json")
    assert [p["name"] for p in json.loads(out)] == ["survey"]
    assert psql(url("anna"), "SELECT count(*) FROM projects WHERE name = 'trial'") == (0, "0")

    # psql: the viewer and the non-member read neither the raw file's bytes nor the key nor a draft's package
    raw = (t / "m0.csv").read_bytes()
    for login, projects_seen in (("cara", "1"), ("dan", "1")):
        assert psql(url(login), "SELECT count(*) FROM projects") == (0, projects_seen)
        code, said = psql(url(login), "SELECT key FROM projects")
        assert code != 0 and "permission denied" in said
        assert psql(url(login), "SELECT anonlib_project_key(1)") == (0, "")
        # the viewer sees her project's file's digest and size, never its bytes; dan not even the digest
        assert psql(url(login), f"SELECT count(*) FROM blobs WHERE sha256 = '{hashlib.sha256(raw).hexdigest()}'") == (
            0,
            "1" if login == "cara" else "0",
        )
        code, said = psql(url(login), "SELECT data FROM blobs")
        assert code != 0 and "permission denied" in said
        code, said = psql(url(login), "SELECT public.anonlib_draft_bytes(1, 'source')")
        assert code != 0 and ("only an owner or analyst or approver" in said or "no release draft 1" in said), said
        code, said = psql(url(login), "SELECT package FROM drafts")
        assert code != 0 and "permission denied" in said
    assert psql(url("dan"), "SELECT count(*) FROM audit") == (0, "0")
    assert psql(url("anna"), "SELECT length(public.anonlib_blob(file_sha256)) > 0 FROM projects") == (0, "t")

    # the database itself refuses what the app would: a drafter approving her own draft through psql
    code, out, _ = cli(
        "anna", "anonymize", t / "m1.csv", "--shield", "age,sex,zip", "--k", "3", "--out", t / "r1.csv", "--project",
        "survey", "--json",
    )  # fmt: skip
    second = json.loads(out)["release"]
    code, said = psql(
        url("anna"),
        "UPDATE drafts SET state = 'approved', decided_by = 'anna', approved_sha256 = package_sha256 "
        f"WHERE id = {second}",
    )
    assert code != 0 and "permission denied for table drafts" in said
    code, said = psql(url("anna"), f"SELECT public.anonlib_decide_draft({second}, true, 'mine')")
    assert code != 0 and "You drafted release" in said and "(four eyes)" in said
    code, said = psql(url("cara"), f"SELECT public.anonlib_decide_draft({second}, true, 'ok')")
    assert code != 0 and "Your role in project survey is viewer" in said

    # every refusal was logged: who, what, which project, the sentence; no data
    code, logged = psql(admin, "SELECT who || '|' || action || '|' || coalesce(project, '-') FROM refusals ORDER BY id")
    assert logged.splitlines() == [
        "anna|approve|survey",
        "cara|approve|survey",
        "cara|export|survey",
        "anna|release|survey",
        "dan|read|-",  # the non-member is not told the project exists, nor is the log: it names none
        "cara|members|survey",
        "cara|file|survey",  # refused by the app, through the service login
    ]

    # an approval withdrawn before its hand-out (by its approver): the draft is never handed out
    code, out, err = cli("ben", "projects", "approve", "survey", "--release", second, "--comment", "k = 3 ok")
    assert code == 0, err
    code, out, err = cli("cara", "projects", "withdraw", "survey", "--release", second)
    assert code == 2 and f"Only the approver of release {second} of project survey (ben) or an owner" in err
    code, out, err = cli("ben", "projects", "withdraw", "survey", "--release", second, "--reason", "wrong delivery")
    assert code == 0 and "then withdrawn (wrong delivery)" in out, err
    code, out, err = cli("anna", "projects", "release", "survey", "--release", second, "--out", t / "p2.zip")
    assert code == 2 and "its approval was withdrawn (wrong delivery)" in err and not (t / "p2.zip").exists()
    # who changed whom, on record (the members' table is written by the database's functions only)
    code, out, _ = cli("cara", "projects", "members", "survey", "--history", "--json")
    assert [(c["by"], c["login"], c["before"], c["after"]) for c in json.loads(out)] == [
        ("anna", "anna", None, "owner"),
        ("anna", "ben", None, "approver"),
        ("anna", "cara", None, "viewer"),
    ]


def test_a_files_privacy_budget_holds_across_projects_a_member_cannot_see(team, tmp_path, capsys, monkeypatch):
    """dp.md's budget kept by the file, in a team: row-level security hides anna's project from
    dan, yet dan's new project over the same bytes starts from what the file has spent, and a
    private release without a project is refused in a sentence."""
    from anonlib.core.errors import PrivacyBudgetError
    from anonlib.projects import budget_of, spend_privacy

    admin, url = team
    path = tmp_path / "m0.csv"
    path.write_bytes(delivery(0))
    code, _, _ = run(capsys, monkeypatch, admin, "projects", "team-setup", "--members", "anna,dan")
    assert code == 0
    for login, project in (("anna", "survey"), ("dan", "copy")):
        code, _, err = run(
            capsys, monkeypatch, url(login), "anonymize", path, "--shield", "age,sex,zip", "--k", "5",
            "--max-suppressed", "0.1", "--project", project,
        )  # fmt: skip
        assert code == 0, err
    code, out, err = run(capsys, monkeypatch, url("anna"), "projects", "budget", "survey", "--epsilon", "2", "--json")
    assert code == 0 and json.loads(out)["epsilon_total"] == 2.0, err
    anna = ProjectStore(url("anna").replace("postgresql://", "postgresql+psycopg://"))
    frame = pd.read_csv(path)
    spend_privacy(
        anna, "survey", epsilon=1.5, delta=0.0, source_name="m0.csv", source_sha256=sha(path), user="anna",
        fingerprint=fingerprint(frame),
    )  # fmt: skip
    dan = ProjectStore(url("dan").replace("postgresql://", "postgresql+psycopg://"))
    with pytest.raises(AccessError):
        require(dan, "survey", Member("dan", "dan"), "read")  # dan sees no trace of anna's project
    seen = budget_of(dan, "copy")
    assert (seen.epsilon_total, seen.epsilon_spent, seen.releases) == (2.0, 1.5, 1)
    assert seen.projects == ("projects you are not a member of",)
    with pytest.raises(PrivacyBudgetError, match="ε = 1.5 of 2 is spent and 0.5 is left"):
        spend_privacy(dan, "copy", epsilon=1.0, delta=0.0, source_name="m0.csv", source_sha256=sha(path), user="dan")
    # the same records in other bytes: charged against m0.csv through the fingerprint anna's spend kept
    other = frame.iloc[::-1].to_csv(index=False).encode()
    with pytest.raises(
        PrivacyBudgetError, match=r"of m0.csv \(charged too, as its people overlap that file’s by about 100%"
    ):
        spend_privacy(
            dan, "copy", epsilon=1.0, delta=0.0, source_name="m0-again.csv", source_sha256=digest(other), user="dan",
            fingerprint=fingerprint(frame.iloc[::-1]),
        )  # fmt: skip
    entry = spend_privacy(
        dan, "copy", epsilon=0.25, delta=0.0, source_name="m0-again.csv", source_sha256=digest(other), user="dan",
        fingerprint=fingerprint(frame.iloc[::-1]),
    )  # fmt: skip
    assert entry.charged == (sha(path),) and budget_of(dan, "copy").epsilon_spent == 1.75
    code, out, err = run(capsys, monkeypatch, url("dan"), "projects", "budget", "--file", path)
    assert code == 2 and "through a project over it" in err
    code, out, err = run(
        capsys, monkeypatch, url("dan"), "synthesize", path, "--columns", "sex", "--epsilon", "0.1",
        "--values-from-data", "--out", tmp_path / "s.csv",
    )  # fmt: skip
    assert code == 2 and out == "" and "a private release belongs to a project: give --project NAME" in err
    assert not (tmp_path / "s.csv").exists() and budget_of(dan, "copy").releases == 2


def test_a_team_store_set_up_by_the_earlier_version_is_upgraded_by_running_team_setup_again(team, capsys, monkeypatch):
    """The earlier setup let members write tables (and made the creator owner by a trigger): a
    member's command line on such a store says what to do and changes nothing; team-setup run
    again by the administrator replaces those rights; the member then works through the functions."""
    import psycopg

    admin, url = team
    service = ProjectStore(admin.replace("postgresql://", "postgresql+psycopg://"))  # the schema, as before
    with psycopg.connect(admin, autocommit=True) as c:  # what the earlier team-setup left behind
        c.execute("DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'anonlib_members') "
                  "THEN CREATE ROLE anonlib_members NOLOGIN; END IF; END $$")  # fmt: skip
        c.execute("GRANT anonlib_members TO anna")
        c.execute("GRANT USAGE ON SCHEMA public TO anonlib_members")
        c.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON meta, blobs, releases, members, projects TO anonlib_members")
        c.execute("DROP TABLE member_changes")
        c.execute("UPDATE meta SET value = '1' WHERE key = 'team_schema'")
        c.execute("INSERT INTO meta VALUES ('team', 'on') ON CONFLICT (key) DO UPDATE SET value = 'on'")
    del service
    code, out, err = run(capsys, monkeypatch, url("anna"), "projects", "list")
    assert code == 2 and out == "" and "runs projects team-setup again to upgrade it" in err
    assert psql(url("anna"), "SELECT count(*) FROM projects") == (0, "0")
    code, out, err = run(capsys, monkeypatch, admin, "projects", "team-setup", "--members", "anna")
    assert code == 0, err
    code, said = psql(
        url("anna"), "INSERT INTO meta VALUES ('team', 'off') ON CONFLICT (key) DO UPDATE SET value = 'off'"
    )
    assert code != 0 and "permission denied for table meta" in said
    code, out, err = run(capsys, monkeypatch, url("anna"), "projects", "members", "survey", "--json")
    assert code == 2 and "There is no project 'survey' of which anna is a member." in err
    store = ProjectStore(url("anna").replace("postgresql://", "postgresql+psycopg://"))
    from anonlib.projects.team import create_project, member_history

    create_project(store, Member("anna"), "survey", _state())
    assert [(c.who, c.login, c.after) for c in member_history(store, "survey")] == [("anna", "anna", "owner")]


def _state():
    import pandas as pd

    from anonlib.core.dataset import Dataset
    from anonlib.projects import ProjectState
    from anonlib.workflow import WorkingCopy

    ds = Dataset.from_frame("d.csv", pd.DataFrame({"age": [30, 30]}), {"age": "quasi-identifier"})
    return ProjectState.of(WorkingCopy.start(ds), "sample:x")
