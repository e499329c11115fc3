"""Roles and four eyes on a SQLite store (``anonlib.projects.team``; the PostgreSQL rules are
tested with real logins in ``tests/cli/test_team_postgres.py``)."""

from __future__ import annotations

import hashlib

import pandas as pd
import pytest
from sqlalchemy import update

from anonlib.core.dataset import Dataset
from anonlib.core.errors import AccessError, ProjectError
from anonlib.projects import ProjectState, ProjectStore, audit_entries, record_package, verify_chain
from anonlib.projects.drafts import approve, drafts, hand_out, reject, waiting_for, withdraw
from anonlib.projects.team import Member, create_project, mark_team, refusals, require, role_of, set_member, visible
from anonlib.projects.team_schema import DRAFTS
from anonlib.workflow import ReleaseTarget, WorkingCopy, release_package

ANNA, BEN, CARA, DAN = Member("anna-sub", "anna@clinic.example"), Member("ben"), Member("cara"), Member("dan")


@pytest.fixture
def store(tmp_path):
    store = ProjectStore(f"sqlite:///{tmp_path / 'projects.sqlite'}")
    mark_team(store)
    return store


def _copy(k: int = 2) -> WorkingCopy:
    ds = Dataset.from_frame("d.csv", pd.DataFrame({"age": [30, 30, 40, 40, 50]}), {"age": "quasi-identifier"})
    return WorkingCopy.start(ds, ReleaseTarget(k=k, max_suppressed=0.5))


def _team(store) -> None:
    create_project(store, ANNA, "survey", ProjectState.of(_copy(), "sample:x"))
    set_member(store, "survey", "ben", "approver", by=ANNA)
    set_member(store, "survey", "cara", "viewer", by=ANNA)
    create_project(store, DAN, "trial", ProjectState.of(_copy(), "sample:x"))


def test_a_draft_is_handed_out_only_after_a_second_person_approves_its_digest(store):
    _team(store)
    package = release_package(_copy(), created="2026-01-01T00:00:00Z")
    from anonlib.projects.drafts import draft_release

    draft = draft_release(store, "survey", package, member=ANNA)
    assert (draft.state, draft.drafted_by, draft.package_sha256) == (
        "draft",
        "anna@clinic.example (subject anna-sub)",
        hashlib.sha256(package).hexdigest(),
    )
    assert (draft.released, draft.suppressed, draft.met) == (5, 0, False)  # recounted: the 50 stands alone
    assert audit_entries(store) == []  # nothing is on record, nothing handed out
    with pytest.raises(AccessError, match="no second person has approved it yet"):
        hand_out(store, "survey", draft.id, ANNA)
    assert [d.id for d in waiting_for(store, BEN)] == [draft.id] and waiting_for(store, ANNA) == []
    with pytest.raises(AccessError, match="four eyes"):
        approve(store, "survey", draft.id, ANNA)
    with pytest.raises(AccessError, match="is viewer: only an owner or approver may approve"):
        approve(store, "survey", draft.id, CARA)
    approved = approve(store, "survey", draft.id, BEN, comment="fine")
    assert (approved.state, approved.decided_by, approved.approved_sha256) == ("approved", "ben", draft.package_sha256)
    handed = hand_out(store, "survey", draft.id, ANNA)
    assert hand_out(store, "survey", draft.id, BEN) == handed  # the same package again, one entry
    (entry,) = audit_entries(store)
    assert (entry.drafted_by, entry.approved_by, entry.four_eyes) == (draft.drafted_by, "ben", True)
    assert entry.package_sha256 == hashlib.sha256(handed).hexdigest() and verify_chain(store) == []
    assert entry.to_json()["release"] == "approved by a second person"


def test_a_changed_package_rejections_and_a_changed_working_copy_hand_nothing_out(store):
    _team(store)
    from anonlib.projects.drafts import draft_release

    first = draft_release(store, "survey", release_package(_copy()), member=ANNA, project_version=1)
    assert not first.met  # the 50 stands alone: approving it needs a comment saying why
    with pytest.raises(ProjectError, match="does not meet its target .*: approving it needs a comment saying why"):
        approve(store, "survey", first.id, BEN)
    assert drafts(store, BEN)[0].state == "draft"
    approve(store, "survey", first.id, BEN, comment="the 50-year-old is a test record")
    with store._transaction() as c:  # the kept package changed after its approval
        c.execute(update(DRAFTS).where(DRAFTS.c.id == first.id).values(package=release_package(_copy(k=3))))
    with pytest.raises(AccessError, match="no longer has the SHA-256 that was drafted and approved"):
        hand_out(store, "survey", first.id, ANNA)
    second = draft_release(store, "survey", release_package(_copy()), member=ANNA, project_version=1)
    assert reject(store, "survey", second.id, BEN, reason="k too low for this registry").reason == (
        "k too low for this registry"
    )
    with pytest.raises(AccessError, match="it was rejected: k too low for this registry"):
        hand_out(store, "survey", second.id, ANNA)
    third = draft_release(store, "survey", release_package(_copy()), member=ANNA, project_version=1)
    approve(store, "survey", third.id, BEN, comment="checked")
    with pytest.raises(AccessError, match="changed after release 3 was approved; draft it again"):
        hand_out(store, "survey", third.id, ANNA, current_version=2)
    # an approval withdrawn before its hand-out: only by its approver or an owner; then nothing is handed out
    with pytest.raises(AccessError, match="Only the approver of release 3 of project survey \\(ben\\) or an owner"):
        withdraw(store, "survey", third.id, CARA)
    assert withdraw(store, "survey", third.id, BEN, reason="wrong file").state == "withdrawn"
    with pytest.raises(AccessError, match="its approval was withdrawn \\(wrong file\\)"):
        hand_out(store, "survey", third.id, ANNA)
    with pytest.raises(ProjectError, match="is withdrawn: only an approval not yet handed out can be withdrawn"):
        withdraw(store, "survey", third.id, BEN)
    assert audit_entries(store) == []
    assert [d.state for d in drafts(store, CARA)] == ["withdrawn", "rejected", "approved"]


def test_a_non_member_hears_what_a_missing_project_says_and_every_refusal_is_logged(store):
    _team(store)
    with pytest.raises(AccessError) as there:
        require(store, "trial", ANNA, "read")
    with pytest.raises(AccessError) as missing:
        require(store, "no such", ANNA, "read")
    assert (
        str(there.value) == "There is no project 'trial' of which anna@clinic.example (subject anna-sub) is a member."
    )
    assert str(missing.value) == str(there.value).replace("'trial'", "'no such'")
    with pytest.raises(AccessError, match="only an owner, analyst or approver may read the raw file of it"):
        require(store, "survey", CARA, "file")
    with pytest.raises(AccessError, match="Sign in first"):
        require(store, "survey", None, "read")
    assert [p.name for p in visible(store, CARA)] == ["survey"] and [p.name for p in visible(store, DAN)] == ["trial"]
    logged = [(r.who, r.action, r.project) for r in refusals(store)]
    assert logged == [
        ("anna@clinic.example (subject anna-sub)", "read", "trial"),
        ("anna@clinic.example (subject anna-sub)", "read", None),
        ("cara", "file", "survey"),
        ("signed-out visitor", "read", None),
    ]
    assert all("30" not in r.sentence and "40" not in r.sentence for r in refusals(store))  # no data in the log


def test_a_single_user_release_stays_one_step_and_says_so(tmp_path):
    store = ProjectStore(f"sqlite:///{tmp_path / 'projects.sqlite'}")
    ref = store.create("solo", ProjectState.of(_copy(), "sample:x"))
    entry = record_package(store, ref, release_package(_copy()), user="anna")
    assert (entry.drafted_by, entry.approved_by, entry.four_eyes) == ("anna", "anna", False)
    assert entry.to_json()["release"].startswith("one step: single-user mode")
    assert verify_chain(store) == []


def test_a_private_release_is_drafted_approved_and_handed_out_once_on_record(store):
    import io
    import json
    import zipfile

    from anonlib.projects.drafts import draft_private

    _team(store)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("synthetic.csv", "age\n30\n40\n")
        archive.writestr("recipe.json", json.dumps({"kind": "differentially private release"}))
    package = buffer.getvalue()
    draft = draft_private(
        store, "survey", package, member=ANNA, source_name="d.csv", source_sha256=None, target="ε = 1", rows=2
    )
    with pytest.raises(AccessError, match="no second person has approved it yet"):
        hand_out(store, "survey", draft.id, ANNA)
    approve(store, "survey", draft.id, BEN, comment="checked")
    assert hand_out(store, "survey", draft.id, ANNA) == package == hand_out(store, "survey", draft.id, BEN)
    (entry,) = audit_entries(store)
    assert (entry.drafted_by, entry.approved_by, entry.epsilon) == (draft.drafted_by, "ben", None)
    assert entry.package_sha256 == hashlib.sha256(package).hexdigest()
    assert entry.released_sha256 == hashlib.sha256(b"age\n30\n40\n").hexdigest() and verify_chain(store) == []


def test_a_store_from_before_the_team_tables_is_brought_up_to_date_when_opened_to_write(tmp_path):
    from sqlalchemy import create_engine, inspect, text

    from anonlib.core.errors import StoreError

    url = f"sqlite:///{tmp_path / 'projects.sqlite'}"
    ProjectStore(url).create("old", ProjectState.of(_copy(), "sample:x"))
    engine = create_engine(url)  # as the store was before the team's migration
    with engine.begin() as c:
        for table in ("members", "drafts", "refusals"):
            c.execute(text(f"DROP TABLE {table}"))
        c.execute(text("DELETE FROM meta WHERE key = 'team_schema'"))
        c.execute(text("ALTER TABLE audit DROP COLUMN drafted_by"))
        c.execute(text("ALTER TABLE audit DROP COLUMN approved_by"))
    engine.dispose()
    with pytest.raises(StoreError, match="before the team's tables"):
        ProjectStore(url, read_only=True)
    store = ProjectStore(url)  # opened to write: the team's tables and columns are added
    assert {"members", "drafts", "refusals"} <= set(inspect(store.engine).get_table_names())
    assert [p.name for p in store.summaries()] == ["old"] and ProjectStore(url, read_only=True).schema_version
    entry = record_package(store, "old", release_package(_copy()), user="anna")
    assert (entry.drafted_by, entry.approved_by) == ("anna", "anna") and verify_chain(store) == []


def test_a_teams_sqlite_store_refuses_the_command_lines_team_actions_whatever_logname_says(store, monkeypatch, capsys):
    from anonlib.cli import main

    _team(store)
    monkeypatch.setenv("ANONLIB_STORE", store.url)
    monkeypatch.setenv("LOGNAME", "ben")
    monkeypatch.setenv("USER", "ben")
    before = [(d.id, d.state) for d in drafts(store, CARA)]
    for argv in (
        ["projects", "approve", "survey", "--release", "1"],
        ["projects", "members", "survey", "--add", "ben=owner"],
    ):
        assert main(argv) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1 and "Team actions need PostgreSQL's logins" in err
        assert "LOGNAME" in err and "Traceback" not in err
    assert [(d.id, d.state) for d in drafts(store, CARA)] == before
    assert role_of(store, "survey", BEN) == "approver"


def test_roles_from_the_providers_groups_claim_are_mapped_per_project(store):
    from anonlib.projects.drafts import draft_release

    _team(store)
    set_member(store, "survey", "group:privacy-office", "approver", by=ANNA)
    zoe, outsider = Member("zoe-sub", None, ("privacy-office",)), Member("yan-sub", None, ("ward-3",))
    assert role_of(store, "survey", zoe) == "approver" and role_of(store, "trial", zoe) is None
    assert role_of(store, "survey", outsider) is None
    draft = draft_release(store, "survey", release_package(_copy()), member=ANNA)
    assert approve(store, "survey", draft.id, zoe, comment="checked by the office").decided_by == "zoe-sub"
    with pytest.raises(AccessError, match="There is no project 'survey' of which yan-sub is a member"):
        require(store, "survey", outsider, "read")
