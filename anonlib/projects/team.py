"""A team on one store (``team.md``): who acts, members and roles per project, and every
refusal on record. Releases drafted and approved by a second person are ``drafts``; the rules
PostgreSQL itself keeps are ``team_postgres``.

**Who acts.** A ``Member``: on the command line the database login of ``ANONLIB_STORE`` on
PostgreSQL (``acting_member``: ``session_user``, which no environment variable can change; a
team's SQLite store refuses the command line's team actions in a sentence); in the dashboard the
signed-in user (the OpenID Connect subject, and the e-mail only when the provider verified it,
``dashboard.team``). A project's member row names a login, or a signed-in user's subject or
e-mail (an e-mail row is bound to the subject at its first sign-in).

**Roles** (``ROLES``): ``owner`` (members and roles, delete, and everything below), ``analyst``
(the file, the key, changes, drafts), ``approver`` (approve or reject another member's draft,
hand out an approved one; reads the file, never the key), ``viewer`` (reports, the Release view
and the audit log). ``require`` is the one check every command and page asks before acting; a
non-member is told there is no such project of theirs, the same sentence as for a project
that does not exist, so nothing shows that it does.

**Refusals.** ``AccessError`` sentences; each attempt is logged (``refusals``: who, what,
when, which project, the sentence; never the data).

Example:
    >>> import tempfile
    >>> import pandas as pd
    >>> from anonlib.core.dataset import Dataset
    >>> from anonlib.workflow import ReleaseTarget, WorkingCopy
    >>> store = ProjectStore(f"sqlite:///{tempfile.mkdtemp()}/projects.sqlite")
    >>> mark_team(store)
    >>> ds = Dataset.from_frame("d.csv", pd.DataFrame({"age": [30, 30, 40, 40]}), {"age": "quasi-identifier"})
    >>> ref = create_project(store, Member("anna"), "survey", ProjectState.of(WorkingCopy.start(ds), "sample:x"))
    >>> set_member(store, "survey", "cara", "viewer", by=Member("anna"))
    >>> members_of(store, "survey")
    [('anna', 'owner'), ('cara', 'viewer')]
    >>> require(store, "survey", Member("cara"), "file")
    Traceback (most recent call last):
    ...
    anonlib.core.errors.AccessError: Your role in project survey is viewer: only an owner, analyst or approver may read the raw file of it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import Connection, delete, insert, select, text, update

from ..core.errors import AccessError, ProjectError, StoreError
from ..core.masking import printable
from .audit import audit_entries
from .records import AuditEntry, ProjectRef, ProjectSummary, now
from .schema import PROJECTS
from .state import ProjectState
from .store import ProjectStore, through_functions
from .team_schema import MEMBER_CHANGES, MEMBERS, REFUSALS, ROLES

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
    "duplicate": frozenset({"owner"}),  # a copy with a new key: never a path to this project's key or file
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
    "duplicate": "duplicate",
    "budget": "set the privacy budget of",
}


GROUP_PREFIX = "group:"  # a member row naming a group of the sign-in provider (roles from its groups claim)


@dataclass(frozen=True)
class Member:
    """Who acts: ``login`` (a database login, or a signed-in user's OpenID Connect subject) and,
    for a signed-in user, ``email``; a member row naming either is theirs.

    >>> Member("3f2a", "anna@clinic.example").label
    'anna@clinic.example (subject 3f2a)'
    """

    login: str
    email: str | None = None
    groups: tuple[str, ...] = ()  # the provider's groups claim: a member row "group:NAME" gives its role

    @property
    def names(self) -> tuple[str, ...]:
        """The member rows that are theirs: the login, the (verified) e-mail, ``group:NAME`` per group.

        >>> Member("s1", "ann@x.example", ("privacy-office",)).names
        ('s1', 'ann@x.example', 'group:privacy-office')
        """
        groups = (f"{GROUP_PREFIX}{g}" for g in self.groups)
        return tuple(dict.fromkeys(n for n in (self.login, self.email, *groups) if n))

    @property
    def label(self) -> str:
        """How the audit log, approvals and refusals name them."""
        if self.email and self.email != self.login:
            return f"{self.email} (subject {self.login})"
        return self.login


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
    itself, never an environment variable anyone can set). On SQLite a team action is refused in a
    sentence (``AccessError``): no login tells the members of a file apart."""
    if store.engine.dialect.name == "postgresql":
        with store._transaction() as c:
            return Member(str(c.execute(text("SELECT session_user")).scalar()))
    raise AccessError(
        "Team actions need PostgreSQL's logins: on a SQLite store nothing tells the members apart (the command line "
        "would believe LOGNAME, which anyone sets), so drafts, approvals and roles are refused here; use the team's "
        "store (ANONLIB_STORE=postgresql://...) with your own login."
    )


# ---------------------------------------------------------------------------------- refusals


def log_refusal(store: ProjectStore, who: str, action: str, project: str | None, sentence: str) -> None:
    """Record a refused attempt (its own transaction: the refused one is undone). A store that
    cannot record it is no reason to let the attempt through: the refusal stands either way."""
    try:
        with store._transaction() as c:
            if through_functions(c):  # a member's login: in their own name, whatever ``who`` says
                c.execute(
                    text("SELECT public.anonlib_log_refusal(:a, :p, :s)"),
                    {"a": action, "p": project, "s": sentence[:2000]},
                )
                return
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
    return f"number {project}" if isinstance(project, int) else f"'{printable(str(project))}'"


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


def member_labels(store: ProjectStore, project: int | str | ProjectRef) -> dict[str, str]:
    """How the Members table shows each member of ``project`` (login -> label): a member row that
    holds a signed-in user's subject (the creator's, made owner at creation) shows the e-mail they
    signed in with beside it, as every other record names them ("anna@clinic.example (subject
    3f2a)"), read off the labels the project's own records keep (who added members, who changed
    them); any other row shows its login (an e-mail, a database login, group:NAME).

    >>> import tempfile
    >>> import pandas as pd
    >>> from anonlib.core.dataset import Dataset
    >>> from anonlib.workflow import WorkingCopy
    >>> store = ProjectStore(f"sqlite:///{tempfile.mkdtemp()}/projects.sqlite")
    >>> ds = Dataset.from_frame("d.csv", pd.DataFrame({"age": [30, 30]}), {"age": "quasi-identifier"})
    >>> anna = Member("3f2a", "anna@clinic.example")
    >>> ref = create_project(store, anna, "survey", ProjectState.of(WorkingCopy.start(ds), "sample:x"))
    >>> set_member(store, "survey", "ben@clinic.example", "approver", by=anna)
    >>> member_labels(store, "survey")
    {'3f2a': 'anna@clinic.example (subject 3f2a)', 'ben@clinic.example': 'ben@clinic.example'}
    """
    with store._transaction() as c:
        pid = int(store._row(c, project)["id"])
        logins = [r[0] for r in c.execute(select(MEMBERS.c.login).where(MEMBERS.c.project_id == pid))]
        said = {r[0] for r in c.execute(select(MEMBERS.c.added_by).where(MEMBERS.c.project_id == pid))}
        said |= {r[0] for r in c.execute(select(MEMBER_CHANGES.c.who).where(MEMBER_CHANGES.c.project_id == pid))}
    labels = {}
    for login in sorted(logins):
        named = sorted(label for label in said if label and label.endswith(f" (subject {login})"))
        labels[login] = named[-1] if named else login
    return labels


def delete_project(store: ProjectStore, project: int | str | ProjectRef, member: Member) -> None:
    """Erase a project (the owner's call): its rows, members, drafts and the files only it kept."""
    ref = require(store, project, member, "delete")
    store.delete(ref.id)


def duplicate_project(store: ProjectStore, project: int | str | ProjectRef, member: Member) -> ProjectRef:
    """A copy of a project (the owner's act), with a new key whatever its steps hold, ``member`` its owner."""
    ref = require(store, project, member, "duplicate")
    copy = store.duplicate(ref.id, new_key=True)
    add_owner(store, copy, member)
    return copy


def _check_role(role: str) -> str:
    if role not in ROLES:
        raise ProjectError(f"'{role}' is not a role; a member is one of {', '.join(ROLES)}.")
    return role


def add_owner(store: ProjectStore, project: int | str | ProjectRef, member: Member) -> None:
    """Make ``member`` the owner of the project they just created (on a team's PostgreSQL store a
    member's own login is made owner by the database itself, in the creating transaction)."""
    with store._transaction() as c:
        row = store._row(c, project)
        if through_functions(c):
            return  # the database made the creating login its owner (anonlib_create_project)
        if _role(c, int(row["id"]), member) is None:
            _changed(c, int(row["id"]), member.label, member.login, None, "owner")
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
        if through_functions(c):
            c.execute(text("SELECT public.anonlib_set_member(:p, :l, :r)"), {"p": ref.id, "l": login, "r": role})
            return
        if role != "owner":
            _keep_an_owner(c, ref, [login])
        before = c.execute(
            select(MEMBERS.c.role).where(MEMBERS.c.project_id == ref.id, MEMBERS.c.login == login)
        ).scalar()
        if before != role:
            _changed(c, ref.id, by.label, login, before, role)
        done = c.execute(
            update(MEMBERS).where(MEMBERS.c.project_id == ref.id, MEMBERS.c.login == login).values(role=role)
        ).rowcount
        if not done:
            c.execute(insert(MEMBERS).values(project_id=ref.id, login=login, role=role, added=now(), added_by=by.label))


def remove_member(store: ProjectStore, project: int | str | ProjectRef, login: str, *, by: Member) -> None:
    """Take ``login`` out of the project; the owner's call (never its last owner)."""
    ref = require(store, project, by, "members")
    with store._transaction() as c:
        if through_functions(c):
            c.execute(text("SELECT public.anonlib_set_member(:p, :l, NULL)"), {"p": ref.id, "l": login})
            return
        _keep_an_owner(c, ref, [login])
        before = c.execute(
            select(MEMBERS.c.role).where(MEMBERS.c.project_id == ref.id, MEMBERS.c.login == login)
        ).scalar()
        if not c.execute(delete(MEMBERS).where(MEMBERS.c.project_id == ref.id, MEMBERS.c.login == login)).rowcount:
            raise ProjectError(f"{printable(login)} is not a member of project {printable(ref.name)}.")
        _changed(c, ref.id, by.label, login, before, None)


@dataclass(frozen=True)
class MemberChange:
    """One change of a project's members: ``who`` gave ``login`` the role ``after`` (None: removed)
    in place of ``before`` (None: added), at ``time``."""

    time: str
    who: str
    login: str
    before: str | None
    after: str | None

    def sentence(self) -> str:
        if self.before is None:
            return f"{self.time[:19]}  {self.who} added {self.login} as {self.after}"
        if self.after is None:
            return f"{self.time[:19]}  {self.who} removed {self.login} ({self.before})"
        return f"{self.time[:19]}  {self.who} changed {self.login} from {self.before} to {self.after}"

    def to_json(self) -> dict:
        return {"time": self.time, "by": self.who, "login": self.login, "before": self.before, "after": self.after}


def _changed(c: Connection, project_id: int, who: str, login: str, before: str | None, after: str | None) -> None:
    c.execute(
        insert(MEMBER_CHANGES).values(
            time=now(), project_id=project_id, who=who, login=login, role_before=before, role_after=after
        )
    )


def member_history(store: ProjectStore, project: int | str | ProjectRef) -> list[MemberChange]:
    """Who added, removed or changed the role of whom in ``project``, oldest first."""
    with store._transaction() as c:
        row = store._row(c, project)
        rows = c.execute(
            select(MEMBER_CHANGES).where(MEMBER_CHANGES.c.project_id == int(row["id"])).order_by(MEMBER_CHANGES.c.id)
        ).mappings()
        return [MemberChange(r["time"], r["who"], r["login"], r["role_before"], r["role_after"]) for r in rows]


def _keep_an_owner(c: Connection, ref: ProjectRef, leaving: Iterable[str]) -> None:
    owners = {
        r[0]
        for r in c.execute(select(MEMBERS.c.login).where(MEMBERS.c.project_id == ref.id, MEMBERS.c.role == "owner"))
    }
    if owners and not owners - set(leaving):
        raise ProjectError(
            f"Project {printable(ref.name)} would have no owner left; give another member the owner role first."
        )


def team_entries(store: ProjectStore, member: Member, project: str | None = None) -> list[AuditEntry]:
    """The audit log as ``member`` may read it: the entries of their projects."""
    ids = {s.id for s in visible(store, member)}
    return [e for e in audit_entries(store, project) if e.project_id in ids]


__all__ = [
    "ACTIONS",
    "ROLES",
    "Member",
    "MemberChange",
    "Refusal",
    "acting_member",
    "add_owner",
    "create_project",
    "delete_project",
    "duplicate_project",
    "is_team",
    "log_refusal",
    "mark_team",
    "member_history",
    "member_labels",
    "members_of",
    "refusals",
    "refuse",
    "remove_member",
    "require",
    "role_of",
    "set_member",
    "team_entries",
    "visible",
]
