"""A team on one store (``team.md``): members and roles per project, releases drafted by one
member and approved by another before anything is handed out, and every refusal on record.

**Who acts.** A ``Member``: on the command line the database login of ``ANONLIB_STORE`` on
PostgreSQL (``acting_member``: ``session_user``, which no environment variable can change), the
operating-system user on SQLite; in the dashboard the signed-in user (the OpenID Connect
subject and e-mail, ``dashboard.team``). A project's member row names a login, or a signed-in
user's subject or e-mail.

**Roles** (``ROLES``): ``owner`` (members and roles, delete, and everything below), ``analyst``
(the file, the key, changes, drafts), ``approver`` (approve or reject another member's draft,
hand out an approved one; reads the file, never the key), ``viewer`` (reports, the Release view
and the audit log). ``require`` is the one check every command and page asks before acting; a
non-member is told there is no such project of theirs, the same sentence as for a project
that does not exist, so nothing shows that it does.

**Four eyes.** In a team store (``is_team``: ``projects team-setup`` ran, or the dashboard signs
users in) a release is first a draft (``draft_release``: the package built and its SHA-256
recorded with the drafter; nothing written or handed out). ``approve`` by a member other than the
drafter records who, when, the digest and a comment; ``reject`` records the reason. Only an
approved draft is handed out (``hand_out``), once its package still has the approved digest:
then, and only then, the release enters the audit log, naming drafter and approver, and the
package handed out states both (``audit.json``). A single user's release stays one step, and
its entry names the user as both (``anonlib.projects.audit``).

**Refusals.** ``AccessError`` sentences; each attempt is logged (``refusals``: who, what,
when, which project, the sentence; never the data).

**On PostgreSQL the database keeps the rule.** ``team_setup`` (run once by an administrator
login, ``projects team-setup``) creates the members' group role, row-level security policies
keyed on the member's role in each project, column rights that keep the key and a draft's
package out of a member's reach, and functions that hand them only to the roles allowed
(``team_sql``). The login that ran it owns the tables and is the dashboard's service login:
it sees every row, and the app checks the signed-in user's role on every call.

Example:
    >>> import tempfile
    >>> import pandas as pd
    >>> from anonlib.core.dataset import Dataset
    >>> from anonlib.workflow import ReleaseTarget, WorkingCopy, release_package
    >>> from anonlib.projects.state import ProjectState
    >>> store = ProjectStore(f"sqlite:///{tempfile.mkdtemp()}/projects.sqlite")
    >>> mark_team(store)
    >>> anna, ben = Member("anna"), Member("ben")
    >>> ds = Dataset.from_frame("d.csv", pd.DataFrame({"age": [30, 30, 40, 40]}), {"age": "quasi-identifier"})
    >>> copy = WorkingCopy.start(ds, ReleaseTarget(k=2))
    >>> ref = create_project(store, anna, "survey", ProjectState.of(copy, "sample:x"))
    >>> set_member(store, "survey", "ben", "approver", by=anna)
    >>> draft = draft_release(store, "survey", release_package(copy), member=anna)
    >>> approve(store, "survey", draft.id, anna)
    Traceback (most recent call last):
    ...
    anonlib.core.errors.AccessError: You drafted release 1 of project survey; another member with the approver role must approve it (four eyes).
    >>> approve(store, "survey", draft.id, ben).state
    'approved'
    >>> entry = audit_entries(store)[0] if hand_out(store, "survey", draft.id, anna) else None
    >>> entry.drafted_by, entry.approved_by
    ('anna', 'ben')
"""

from __future__ import annotations

import getpass
import io
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import Connection, delete, insert, select, text, update

from ..core.errors import AccessError, ProjectError, StoreError
from ..workflow.package import RECIPE_FILE, package_stamp
from ..workflow.private_package import SYNTHETIC_FILE, TABLES_FILE, private_recipe_of
from ..workflow.release import digest
from ..workflow.verify import PartCheck, recount
from .audit import COMMAND_LINE, Recording, audit_entries, package_parts, record_entry, release_files
from .records import AuditEntry, ProjectRef, ProjectSummary, now
from .schema import PROJECTS
from .state import ProjectState
from .store import ProjectStore
from .team_schema import DRAFTS, MEMBERS, REFUSALS, ROLES

GROUP = "anonlib_members"  # the members' group role on PostgreSQL

# what each role may do (``require``); "read": see the project, its reports, Release view and audit log
ACTIONS: dict[str, frozenset[str]] = {
    "read": frozenset(ROLES),
    "file": frozenset({"owner", "analyst", "approver"}),  # the raw file's bytes and row-level tables
    "key": frozenset({"owner", "analyst"}),
    "change": frozenset({"owner", "analyst"}),  # roles, target, steps, rename, keep or erase the file
    "draft": frozenset({"owner", "analyst"}),
    "approve": frozenset({"owner", "approver"}),
    "release": frozenset({"owner", "analyst", "approver"}),  # hand out an approved release
    "export": frozenset({"owner", "analyst"}),
    "members": frozenset({"owner"}),
    "delete": frozenset({"owner"}),
    "budget": frozenset({"owner"}),
}
DOING = {  # what a refused action is called in its sentence
    "read": "open",
    "file": "read the raw file of",
    "key": "use the pseudonym key of",
    "change": "change",
    "draft": "draft a release of",
    "approve": "approve or reject releases of",
    "release": "hand out releases of",
    "export": "export",
    "members": "change the members of",
    "delete": "delete",
    "budget": "set the privacy budget of",
}


@dataclass(frozen=True)
class Member:
    """Who acts: ``login`` (a database login, or a signed-in user's OpenID Connect subject) and,
    for a signed-in user, ``email``; a member row naming either is theirs.

    >>> Member("3f2a", "anna@clinic.example").label
    'anna@clinic.example (subject 3f2a)'
    """

    login: str
    email: str | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(n for n in (self.login, self.email) if n))

    @property
    def label(self) -> str:
        """How the audit log, approvals and refusals name them."""
        if self.email and self.email != self.login:
            return f"{self.email} (subject {self.login})"
        return self.login


@dataclass(frozen=True)
class Draft:
    """A release drafted into a project and what became of it (``state``: draft, approved,
    rejected, released); never its bytes."""

    id: int
    project_id: int
    project: str
    time: str
    drafted_by: str
    made_by: str
    project_version: int | None
    source_name: str
    source_sha256: str | None
    target: str
    met: bool
    released: int
    suppressed: int
    package_sha256: str
    state: str
    decided_by: str | None
    decided_time: str | None
    approved_sha256: str | None
    comment: str | None
    reason: str | None
    audit_id: int | None

    def to_json(self) -> dict:
        return {
            "release": self.id,
            "project": self.project,
            "time": self.time,
            "state": self.state,
            "drafted_by": self.drafted_by,
            "made_by": self.made_by,
            "source_name": self.source_name,
            "source_sha256": self.source_sha256,
            "target": self.target,
            "met": self.met,
            "released": self.released,
            "suppressed": self.suppressed,
            "package_sha256": self.package_sha256,
            "approved_by": self.decided_by if self.state in ("approved", "released") else None,
            "rejected_by": self.decided_by if self.state == "rejected" else None,
            "decided_time": self.decided_time,
            "approved_sha256": self.approved_sha256,
            "comment": self.comment,
            "reason": self.reason,
            "audit_entry": self.audit_id,
        }

    def sentence(self) -> str:
        """The draft's state in words."""
        what = f"Release {self.id} of project {self.project} (SHA-256 {self.package_sha256[:16]}…)"
        if self.state == "draft":
            return f"{what}: drafted by {self.drafted_by}, waiting for a second person's approval."
        if self.state == "rejected":
            return f"{what}: rejected by {self.decided_by}: {self.reason}"
        done = "approved" if self.state == "approved" else f"approved and handed out (audit entry {self.audit_id})"
        return f"{what}: drafted by {self.drafted_by}, {done} by {self.decided_by}."


@dataclass(frozen=True)
class Refusal:
    """One refused attempt as the log keeps it."""

    id: int
    time: str
    who: str
    action: str
    project: str | None
    sentence: str


# ---------------------------------------------------------------------------------- team mode


def is_team(store: ProjectStore) -> bool:
    """Whether ``store`` is a team's: releases are drafted and approved by a second person."""
    with store._transaction() as c:
        return store._get_meta(c, "team") == "on"


def mark_team(store: ProjectStore) -> None:
    """Make ``store`` a team's (``team_setup``; the dashboard when it signs users in)."""
    with store._transaction() as c:
        store._set_meta(c, "team", "on")


def acting_member(store: ProjectStore) -> Member:
    """Who runs this command: the database login on PostgreSQL (``session_user``: the login
    itself, never an environment variable anyone can set), the operating-system user on SQLite."""
    if store.engine.dialect.name == "postgresql":
        with store._transaction() as c:
            return Member(str(c.execute(text("SELECT session_user")).scalar()))
    try:
        return Member(getpass.getuser())
    except Exception:  # noqa: BLE001 - no user name in the environment or the password database
        return Member("unknown")


# ---------------------------------------------------------------------------------- refusals


def log_refusal(store: ProjectStore, who: str, action: str, project: str | None, sentence: str) -> None:
    """Record a refused attempt (its own transaction: the refused one is undone). A store that
    cannot record it is no reason to let the attempt through: the refusal stands either way."""
    try:
        with store._transaction() as c:
            c.execute(
                insert(REFUSALS).values(
                    time=now(), who=str(who)[:500], action=action, project=project, sentence=sentence[:2000]
                )
            )
    except StoreError:
        pass


def refuse(store: ProjectStore, member: Member | None, action: str, project: str | None, sentence: str):
    """Log the attempt and raise its sentence (``AccessError``)."""
    log_refusal(store, member.label if member else "signed-out visitor", action, project, sentence)
    raise AccessError(sentence)


def refusals(store: ProjectStore) -> list[Refusal]:
    """The log of refused attempts, oldest first (on a team's PostgreSQL store a member sees their own)."""
    with store._transaction() as c:
        rows = c.execute(select(REFUSALS).order_by(REFUSALS.c.id)).mappings().all()
    return [Refusal(**dict(r)) for r in rows]


# ---------------------------------------------------------------------------------- roles


def _project_row(store: ProjectStore, c: Connection, project: int | str | ProjectRef):
    if isinstance(project, ProjectRef):
        project = project.id
    where = PROJECTS.c.id == project if isinstance(project, int) else PROJECTS.c.name == str(project)
    return c.execute(select(PROJECTS.c.id, PROJECTS.c.name, PROJECTS.c.version).where(where)).first()


def _role(c: Connection, project_id: int, member: Member) -> str | None:
    rows = c.execute(
        select(MEMBERS.c.role).where(MEMBERS.c.project_id == project_id, MEMBERS.c.login.in_(member.names))
    ).all()
    held = {r[0] for r in rows}
    return next((role for role in ROLES if role in held), None)  # the widest of the rows naming them


def role_of(store: ProjectStore, project: int | str | ProjectRef, member: Member) -> str | None:
    """``member``'s role in ``project`` (None: not a member, or no such project)."""
    with store._transaction() as c:
        row = _project_row(store, c, project)
        return None if row is None else _role(c, int(row[0]), member)


def _named(project: int | str | ProjectRef) -> str:
    if isinstance(project, ProjectRef):
        return project.name
    return f"number {project}" if isinstance(project, int) else f"'{project}'"


def require(store: ProjectStore, project: int | str | ProjectRef, member: Member | None, action: str) -> ProjectRef:
    """The project's reference when ``member`` may do ``action`` (``ACTIONS``) to it; otherwise
    the refusal is logged and raised in one sentence. A non-member hears what they would hear of
    a project that does not exist."""
    if member is None:
        refuse(
            store, None, action, None, "Sign in first: this dashboard belongs to a team, and shows nothing signed out."
        )
    with store._transaction() as c:
        row = _project_row(store, c, project)
        role = None if row is None else _role(c, int(row[0]), member)
    if row is None or role is None:
        refuse(
            store,
            member,
            action,
            None if row is None else row[1],
            f"There is no project {_named(project)} of which {member.label} is a member.",
        )
    if role not in ACTIONS[action]:
        roles = [r for r in ROLES if r in ACTIONS[action]]
        allowed = roles[0] if len(roles) == 1 else f"{', '.join(roles[:-1])} or {roles[-1]}"
        refuse(
            store,
            member,
            action,
            row[1],
            f"Your role in project {row[1]} is {role}: only an {allowed} may {DOING[action]} it.",
        )
    return ProjectRef(int(row[0]), row[1], int(row[2]))


def visible(store: ProjectStore, member: Member) -> list[ProjectSummary]:
    """The projects ``member`` is a member of, the most recently changed first."""
    with store._transaction() as c:
        ids = {
            int(r[0]) for r in c.execute(select(MEMBERS.c.project_id).where(MEMBERS.c.login.in_(member.names))).all()
        }
    return [s for s in store.summaries() if s.id in ids]


def members_of(store: ProjectStore, project: int | str | ProjectRef) -> list[tuple[str, str]]:
    """(login, role) of every member of ``project``, by role then login."""
    with store._transaction() as c:
        row = store._row(c, project)
        rows = c.execute(select(MEMBERS.c.login, MEMBERS.c.role).where(MEMBERS.c.project_id == int(row["id"]))).all()
    return sorted(((r[0], r[1]) for r in rows), key=lambda x: (ROLES.index(x[1]), x[0]))


def delete_project(store: ProjectStore, project: int | str | ProjectRef, member: Member) -> None:
    """Erase a project (the owner's call): its rows, members, drafts and the files only it kept."""
    ref = require(store, project, member, "delete")
    store.delete(ref.id)


def _check_role(role: str) -> str:
    if role not in ROLES:
        raise ProjectError(f"'{role}' is not a role; a member is one of {', '.join(ROLES)}.")
    return role


def add_owner(store: ProjectStore, project: int | str | ProjectRef, member: Member) -> None:
    """Make ``member`` the owner of the project they just created (on a team's PostgreSQL store a
    member's own login is made owner by the database itself, in the creating transaction)."""
    with store._transaction() as c:
        row = store._row(c, project)
        if _role(c, int(row["id"]), member) is None:
            c.execute(
                insert(MEMBERS).values(
                    project_id=int(row["id"]), login=member.login, role="owner", added=now(), added_by=member.label
                )
            )


def create_project(
    store: ProjectStore, member: Member, name: str, state: ProjectState, data: bytes | None = None, **kw
):
    """A new project created by ``member``, who becomes its owner."""
    ref = store.create(name, state, data, **kw)
    add_owner(store, ref, member)
    return ref


def set_member(store: ProjectStore, project: int | str | ProjectRef, login: str, role: str, *, by: Member) -> None:
    """Give ``login`` the ``role`` in the project (added, or their role changed); the owner's call."""
    ref = require(store, project, by, "members")
    role, login = _check_role(role), " ".join(str(login).split())
    if not login:
        raise ProjectError("Name the member to add: --add LOGIN=ROLE.")
    with store._transaction() as c:
        if role != "owner":
            _keep_an_owner(c, ref, [login])
        done = c.execute(
            update(MEMBERS).where(MEMBERS.c.project_id == ref.id, MEMBERS.c.login == login).values(role=role)
        ).rowcount
        if not done:
            c.execute(insert(MEMBERS).values(project_id=ref.id, login=login, role=role, added=now(), added_by=by.label))


def remove_member(store: ProjectStore, project: int | str | ProjectRef, login: str, *, by: Member) -> None:
    """Take ``login`` out of the project; the owner's call (never its last owner)."""
    ref = require(store, project, by, "members")
    with store._transaction() as c:
        _keep_an_owner(c, ref, [login])
        if not c.execute(delete(MEMBERS).where(MEMBERS.c.project_id == ref.id, MEMBERS.c.login == login)).rowcount:
            raise ProjectError(f"{login} is not a member of project {ref.name}.")


def _keep_an_owner(c: Connection, ref: ProjectRef, leaving: Iterable[str]) -> None:
    owners = {
        r[0]
        for r in c.execute(select(MEMBERS.c.login).where(MEMBERS.c.project_id == ref.id, MEMBERS.c.role == "owner"))
    }
    if owners and not owners - set(leaving):
        raise ProjectError(f"Project {ref.name} would have no owner left; give another member the owner role first.")


# ---------------------------------------------------------------------------------- drafts

_DRAFT_COLUMNS = tuple(col for col in DRAFTS.c if col.name not in ("package", "source"))


def _draft(row, project: str) -> Draft:
    return Draft(**{k: row[k] for k in Draft.__dataclass_fields__ if k != "project"}, project=project)


def _bytes(c: Connection, draft_id: int, column: str) -> bytes | None:
    """A draft's package or source. On a team's PostgreSQL store a member's login has no right to
    these columns: ``anonlib_draft_package`` gives the package of an approved draft, and
    ``anonlib_draft_source`` the file, to the roles allowed only."""
    if not _readable(c):  # a member's login: through the function (the table's owner reads the column)
        found = c.execute(text(f"SELECT anonlib_draft_{column}(:id)"), {"id": draft_id}).scalar()
    else:
        found = c.execute(select(DRAFTS.c[column]).where(DRAFTS.c.id == draft_id)).scalar()
    return None if found is None else bytes(found)


def draft_release(
    store: ProjectStore,
    project: int | str | ProjectRef,
    package: bytes,
    *,
    member: Member,
    source: bytes | None = None,
    made_by: str = COMMAND_LINE,
    project_version: int | None = None,
) -> Draft:
    """Keep ``package`` as a draft of ``project`` (nothing handed out), its numbers recounted on
    its released table, its SHA-256 recorded with the drafter."""
    ref = require(store, project, member, "draft")
    _, table, recipe = package_parts(package)
    check = recount(recipe, table)
    with store._transaction() as c:
        result = c.execute(
            insert(DRAFTS).values(
                project_id=ref.id,
                time=now(),
                drafted_by=member.label,
                made_by=made_by,
                project_version=project_version,
                source_name=recipe.source.name,
                source_sha256=recipe.source.sha256,
                target=recipe.target.describe(),
                met=bool(check.met),
                released=int(check.records),
                suppressed=int(check.suppressed_records),
                package_sha256=digest(package),
                package=bytes(package),
                source=None if source is None else bytes(source),
                state="draft",
            )
        )
        draft_id = int(result.inserted_primary_key[0])
        row = c.execute(select(*_DRAFT_COLUMNS).where(DRAFTS.c.id == draft_id)).mappings().one()
    return _draft(row, ref.name)


def draft_private(
    store: ProjectStore,
    project: int | str | ProjectRef,
    package: bytes,
    *,
    member: Member,
    source_name: str,
    source_sha256: str | None,
    target: str,
    rows: int,
) -> Draft:
    """Keep a private release's package (``synthesize --project`` on a team's store) as a draft: its
    budget was spent when it measured (``spend_privacy``), nothing is handed out until approved."""
    ref = require(store, project, member, "draft")
    with store._transaction() as c:
        result = c.execute(
            insert(DRAFTS).values(
                project_id=ref.id,
                time=now(),
                drafted_by=member.label,
                made_by=COMMAND_LINE,
                source_name=source_name,
                source_sha256=source_sha256,
                target=target,
                met=True,
                released=int(rows),
                suppressed=0,
                package_sha256=digest(package),
                package=bytes(package),
                state="draft",
            )
        )
        row = c.execute(select(*_DRAFT_COLUMNS).where(DRAFTS.c.id == int(result.inserted_primary_key[0]))).mappings()
        return _draft(row.one(), ref.name)


def drafts(store: ProjectStore, member: Member, *, project: int | str | ProjectRef | None = None) -> list[Draft]:
    """The drafts of the projects ``member`` is a member of (``project``: of that one), newest first."""
    refs = [require(store, project, member, "read")] if project is not None else [s.ref for s in visible(store, member)]
    names = {r.id: r.name for r in refs}
    if not names:
        return []
    with store._transaction() as c:
        rows = c.execute(
            select(*_DRAFT_COLUMNS).where(DRAFTS.c.project_id.in_(list(names))).order_by(DRAFTS.c.id.desc())
        ).mappings()
        return [_draft(r, names[int(r["project_id"])]) for r in rows]


def waiting_for(store: ProjectStore, member: Member) -> list[Draft]:
    """The drafts ``member`` may approve: of projects where they are an approver (or the owner),
    drafted by someone else."""
    out = []
    for d in drafts(store, member):
        if (
            d.state == "draft"
            and d.drafted_by != member.label
            and role_of(store, d.project_id, member) in ACTIONS["approve"]
        ):
            out.append(d)
    return out


def _load_draft(store: ProjectStore, c: Connection, ref: ProjectRef, draft_id: int, member: Member) -> Draft:
    row = (
        c.execute(select(*_DRAFT_COLUMNS).where(DRAFTS.c.id == int(draft_id), DRAFTS.c.project_id == ref.id))
        .mappings()
        .first()
    )
    if row is None:
        raise ProjectError(f"Project {ref.name} has no release {draft_id}; see projects drafts.")
    return _draft(row, ref.name)


def approve(
    store: ProjectStore,
    project: int | str | ProjectRef,
    draft_id: int,
    member: Member,
    *,
    comment: str | None = None,
) -> Draft:
    """Approve the draft's package as it is (its digest checked again): ``member`` must be an
    approver (or the owner) other than the drafter."""
    return _decide(store, project, draft_id, member, approved=True, text_=comment)


def reject(
    store: ProjectStore, project: int | str | ProjectRef, draft_id: int, member: Member, *, reason: str
) -> Draft:
    """Reject the draft, recording why (an approver's or the owner's call, not the drafter's)."""
    if not str(reason or "").strip():
        raise ProjectError("Say why the release is rejected: --reason TEXT.")
    return _decide(store, project, draft_id, member, approved=False, text_=str(reason).strip())


def _decide(store, project, draft_id: int, member: Member, *, approved: bool, text_: str | None) -> Draft:
    ref = require(store, project, member, "approve")
    with store._transaction() as c:
        draft = _load_draft(store, c, ref, draft_id, member)
    if draft.drafted_by == member.label or draft.drafted_by in member.names:
        refuse(
            store,
            member,
            "approve",
            ref.name,
            f"You drafted release {draft.id} of project {ref.name}; another member with the approver role must "
            f"{'approve' if approved else 'reject'} it (four eyes).",
        )
    if draft.state != "draft":
        raise ProjectError(f"Release {draft.id} of project {ref.name} is already {draft.state}; nothing was changed.")
    with store._transaction() as c:
        if approved:  # the digest approved is the package's as kept, computed now
            kept = c.execute(select(DRAFTS.c.package).where(DRAFTS.c.id == draft.id)).scalar() if _readable(c) else None
            sha = digest(bytes(kept)) if kept is not None else draft.package_sha256
            if sha != draft.package_sha256:
                refuse(store, member, "approve", ref.name, _changed(draft))
        c.execute(
            update(DRAFTS)
            .where(DRAFTS.c.id == draft.id, DRAFTS.c.state == "draft")
            .values(
                state="approved" if approved else "rejected",
                decided_by=member.label,
                decided_time=now(),
                approved_sha256=draft.package_sha256 if approved else None,
                comment=text_ if approved else None,
                reason=None if approved else text_,
            )
        )
        row = c.execute(select(*_DRAFT_COLUMNS).where(DRAFTS.c.id == draft.id)).mappings().one()
    return _draft(row, ref.name)


def _readable(c: Connection) -> bool:
    """Whether this connection reads a draft's package column itself (not a team member's login on PostgreSQL)."""
    return c.dialect.name != "postgresql" or bool(
        c.execute(text("SELECT has_column_privilege('drafts', 'package', 'SELECT')")).scalar()
    )


def _changed(draft: Draft) -> str:
    return (
        f"Release {draft.id} of project {draft.project} no longer has the SHA-256 that was drafted"
        f"{' and approved' if draft.approved_sha256 else ''}; nothing was handed out (draft it again)."
    )


def hand_out(
    store: ProjectStore,
    project: int | str | ProjectRef,
    draft_id: int,
    member: Member,
    *,
    made_by: str = COMMAND_LINE,
    current_version: int | None = None,
) -> bytes:
    """The approved draft's package, stamped with its audit entry: the first hand-out records the
    release in the audit log (naming drafter and approver), later ones give the same package.
    Refused in a sentence (logged, nothing handed out) before approval, after a rejection, when
    the package no longer has the approved digest, or (``current_version``: the dashboard's
    working copy) when the working copy changed since the draft."""
    ref = require(store, project, member, "release")
    with store._transaction() as c:
        draft = _load_draft(store, c, ref, draft_id, member)
    if draft.state == "released" and draft.audit_id is not None:
        kept = release_files(store, draft.audit_id)[1] if _kept_release(store, draft.audit_id) else None
        if kept is not None:
            return kept
    if draft.state not in ("approved", "released"):
        why = (
            f"it was rejected: {draft.reason}" if draft.state == "rejected" else "no second person has approved it yet"
        )
        refuse(
            store,
            member,
            "release",
            ref.name,
            f"Release {draft.id} of project {ref.name} is a draft that cannot be handed out: {why}.",
        )
    if current_version is not None and draft.project_version is not None and current_version != draft.project_version:
        refuse(
            store,
            member,
            "release",
            ref.name,
            f"The working copy of project {ref.name} changed after release {draft.id} was approved; draft it again.",
        )
    with store._transaction() as c:
        package = _bytes(c, draft.id, "package")
        source = _bytes(c, draft.id, "source")
    if package is None or digest(package) != draft.approved_sha256:
        refuse(store, member, "release", ref.name, _changed(draft))
    if private_recipe_of(_member(package, RECIPE_FILE)) is not None:
        return package if draft.state == "released" else _hand_out_private(store, ref, draft, package, member, made_by)
    parts, table, recipe = package_parts(package)
    handed: list[bytes] = []

    def mark_released(recorded: bytes | None) -> None:
        handed.append(recorded or b"")

    entry = record_entry(
        store,
        ref.id,
        recipe,
        table,
        package,
        parts,
        source,
        made_by,
        member.label,
        Recording(
            stamp=True,
            before_commit=mark_released,
            drafted_by=draft.drafted_by,
            approved_by=draft.decided_by,
            approved_sha256=draft.approved_sha256,
        ),
    )
    with store._transaction() as c:
        c.execute(update(DRAFTS).where(DRAFTS.c.id == draft.id).values(state="released", audit_id=entry.id))
    return handed[-1]


def _member(package: bytes, name: str) -> bytes | None:
    try:
        with zipfile.ZipFile(io.BytesIO(package)) as archive:
            return archive.read(name) if name in archive.namelist() else None
    except (zipfile.BadZipFile, OSError, ValueError):
        return None


def _hand_out_private(store: ProjectStore, ref: ProjectRef, draft: Draft, package: bytes, member: Member, made_by: str):
    """An approved private release handed out: an audit entry naming drafter and approver and the
    package's digest (its ε and δ are on the entry that spent them, before it measured)."""
    from .audit import append_entry, checked_tail

    stamp = now()
    with store._transaction() as c:
        count, last, previous = checked_tail(store, c)
        entry = AuditEntry(
            id=(last or 0) + 1,
            time=stamp,
            project_id=ref.id,
            project=ref.name,
            source_name=draft.source_name,
            source_sha256=draft.source_sha256,
            target=f"{draft.target}: handed out",
            met=True,
            records=0,
            released=draft.released,
            suppressed=0,
            released_sha256=digest(_member(package, SYNTHETIC_FILE) or _member(package, TABLES_FILE) or b""),
            package_sha256=digest(package),
            parts={},
            user=member.label,
            made_by=made_by,
            previous=previous,
            entry_sha256="",
            drafted_by=draft.drafted_by,
            approved_by=draft.decided_by,
        )
        append_entry(store, c, entry, count)
        c.execute(update(DRAFTS).where(DRAFTS.c.id == draft.id).values(state="released", audit_id=entry.id))
    return package


def draft_of_entry(store: ProjectStore, audit_id: int) -> Draft | None:
    """The draft an audit entry handed out (None: a single user's one-step release)."""
    with store._transaction() as c:
        row = c.execute(select(*_DRAFT_COLUMNS).where(DRAFTS.c.audit_id == int(audit_id))).mappings().first()
        name = (
            None
            if row is None
            else c.execute(select(PROJECTS.c.name).where(PROJECTS.c.id == row["project_id"])).scalar()
        )
    return None if row is None else _draft(row, name or "")


APPROVAL = "approval"  # the part ``verify`` names for who drafted and who approved a package


def approval_check(package: bytes, store: ProjectStore | None = None) -> PartCheck | None:
    """What ``verify`` states of a package released into a project: who drafted it and who
    approved it (``audit.json``); with the project's ``store``, a team's package whose digest no
    second person approved there fails. None for a package released outside any project.

    >>> import pandas as pd
    >>> from anonlib.core.dataset import Dataset
    >>> from anonlib.workflow import ReleaseTarget, WorkingCopy, release_package
    >>> from anonlib.workflow.package import stamp_package
    >>> ds = Dataset.from_frame("d.csv", pd.DataFrame({"age": [30, 30]}), {"age": "quasi-identifier"})
    >>> plain = release_package(WorkingCopy.start(ds, ReleaseTarget(k=2)))
    >>> approval_check(stamp_package(plain, {"entry": 1, "drafted_by": "anna", "approved_by": "ben"})).sentence
    'drafted by anna and approved by ben, a second person'
    """
    stamp = package_stamp(package)
    if stamp is None or not stamp.get("drafted_by"):
        return None
    drafter, approver = stamp.get("drafted_by"), stamp.get("approved_by")
    if approver and approver != drafter:
        said, passed = f"drafted by {drafter} and approved by {approver}, a second person", True
    else:
        said, passed = f"drafted by {drafter}; no second person approved it", False
    if store is not None and is_team(store):
        draft = draft_of_entry(store, int(stamp.get("entry") or 0))
        if draft is None or draft.approved_sha256 is None or draft.approved_sha256 != stamp.get("approved_sha256"):
            said, passed = f"drafted by {drafter}: its digest was not approved by a second person in this store", False
    return PartCheck(APPROVAL, passed, said)


def _kept_release(store: ProjectStore, audit_id: int) -> bool:
    from .schema import RELEASES

    with store._transaction() as c:
        return c.execute(select(RELEASES.c.id).where(RELEASES.c.audit_id == int(audit_id))).first() is not None


def team_entries(store: ProjectStore, member: Member, project: str | None = None) -> list[AuditEntry]:
    """The audit log as ``member`` may read it: the entries of their projects."""
    ids = {s.id for s in visible(store, member)}
    return [e for e in audit_entries(store, project) if e.project_id in ids]


# ---------------------------------------------------------------------------------- PostgreSQL


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
        f"GRANT SELECT, INSERT ON audit, refusals TO {group}",
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
        f"CREATE OR REPLACE FUNCTION anonlib_audit_links() RETURNS TABLE (id integer, previous text, entry_sha256 text) "
        f"{definer} AS $$ SELECT id, previous, entry_sha256 FROM audit $$",
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


__all__ = [
    "ACTIONS",
    "Draft",
    "GROUP",
    "Member",
    "Refusal",
    "acting_member",
    "add_owner",
    "approval_check",
    "approve",
    "create_project",
    "delete_project",
    "draft_of_entry",
    "draft_private",
    "draft_release",
    "drafts",
    "hand_out",
    "is_team",
    "log_refusal",
    "mark_team",
    "members_of",
    "refusals",
    "refuse",
    "reject",
    "remove_member",
    "require",
    "role_of",
    "set_member",
    "team_entries",
    "team_setup",
    "team_sql",
    "visible",
    "waiting_for",
]
