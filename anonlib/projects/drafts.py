"""A release needs a second person (``team.md``): in a team's store a release is first a draft
(``draft_release``: the package built and kept in the store, its SHA-256 recorded with the
drafter; nothing written or handed out). ``approve`` by a member other than the drafter records
who, when, the digest and a comment; ``reject`` records the reason. Only an approved draft is
handed out (``hand_out``), once its package still has the approved digest: then, and only then,
the release enters the audit log, naming drafter and approver, and the package handed out states
both (``audit.json``; ``approval_check`` is what ``verify`` says of it). A single user's release
stays one step, and its entry names the user as both (``anonlib.projects.audit``). Every check
of a role is ``anonlib.projects.team.require``.

Example:
    >>> import tempfile
    >>> import pandas as pd
    >>> from anonlib.core.dataset import Dataset
    >>> from anonlib.workflow import ReleaseTarget, WorkingCopy, release_package
    >>> from anonlib.projects.state import ProjectState
    >>> from anonlib.projects.audit import audit_entries
    >>> from anonlib.projects.team import create_project, mark_team, set_member
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

import io
import zipfile
import zlib
from dataclasses import dataclass

from sqlalchemy import Connection, insert, select, text, update

from ..core.errors import ProjectError
from ..workflow.package import AUDIT_FILE, RECIPE_FILE, SUMS_FILE, package_stamp
from ..workflow.private_package import SYNTHETIC_FILE, TABLES_FILE, private_recipe_of
from ..workflow.release import digest
from ..workflow.verify import PartCheck, recount
from .audit import COMMAND_LINE, Recording, package_parts, record_entry, release_files
from .chain import append_entry, checked_tail
from .records import AuditEntry, ProjectRef, dumps, now
from .schema import PROJECTS
from .store import ProjectStore, through_functions
from .team import ACTIONS, Member, is_team, refuse, require, role_of, visible
from .team_schema import DRAFTS


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
        if self.state == "withdrawn":
            return f"{what}: approved by {self.decided_by}, then withdrawn ({self.reason}); draft it again."
        done = "approved" if self.state == "approved" else f"approved and handed out (audit entry {self.audit_id})"
        return f"{what}: drafted by {self.drafted_by}, {done} by {self.decided_by}."


# ---------------------------------------------------------------------------------- drafts

_DRAFT_COLUMNS = tuple(col for col in DRAFTS.c if col.name not in ("package", "source"))


def _draft(row, project: str) -> Draft:
    return Draft(**{k: row[k] for k in Draft.__dataclass_fields__ if k != "project"}, project=project)


def _bytes(c: Connection, draft_id: int, column: str) -> bytes | None:
    """A draft's package or source. On a team's PostgreSQL store a member's login has no right to
    these columns: ``anonlib_draft_package`` gives the package of an approved draft, and
    ``anonlib_draft_source`` the file, to the roles allowed only."""
    if through_functions(c):  # a member's login: through the function (approved, digest checked, role allowed)
        found = c.execute(text("SELECT public.anonlib_draft_bytes(:id, :part)"), {"id": draft_id, "part": column})
        found = found.scalar()
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
        if through_functions(c):
            draft_id = _create_draft(
                c,
                ref.id,
                made_by,
                project_version,
                recipe.source.name,
                recipe.source.sha256,
                recipe.target.describe(),
                bool(check.met),
                int(check.records),
                int(check.suppressed_records),
                package,
                source,
            )
            row = c.execute(select(*_DRAFT_COLUMNS).where(DRAFTS.c.id == draft_id)).mappings().one()
            return _draft(row, ref.name)
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
        if through_functions(c):
            draft_id = _create_draft(
                c, ref.id, COMMAND_LINE, None, source_name, source_sha256, target, True, int(rows), 0, package, None
            )
            return _draft(c.execute(select(*_DRAFT_COLUMNS).where(DRAFTS.c.id == draft_id)).mappings().one(), ref.name)
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


def _create_draft(c: Connection, project_id: int, made_by, version, name, sha, target, met, released, suppressed,
                  package: bytes, source: bytes | None) -> int:  # fmt: skip
    """A draft made through the team's function: drafted by the login, in state draft, its digest computed there."""
    return int(
        c.execute(
            text(
                "SELECT public.anonlib_create_draft(:p, :made_by, :version, :name, :sha, :target, :met, :released, "
                ":suppressed, :package, :source)"
            ),
            {
                "p": project_id,
                "made_by": made_by,
                "version": version,
                "name": name,
                "sha": sha,
                "target": target,
                "met": met,
                "released": released,
                "suppressed": suppressed,
                "package": bytes(package),
                "source": None if source is None else bytes(source),
            },
        ).scalar_one()
    )


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


def withdraw(
    store: ProjectStore, project: int | str | ProjectRef, draft_id: int, member: Member, *, reason: str | None = None
) -> Draft:
    """Withdraw an approval before its hand-out (the approver who gave it, or an owner): the draft
    is then ``withdrawn`` and never handed out; the analyst drafts it again."""
    ref = require(store, project, member, "read")
    with store._transaction() as c:
        draft = _load_draft(store, c, ref, draft_id, member)
    if draft.state != "approved":
        raise ProjectError(
            f"Release {draft.id} of project {ref.name} is {draft.state}: only an approval not yet handed out can be "
            "withdrawn."
        )
    if draft.decided_by not in (member.label, *member.names) and role_of(store, ref, member) != "owner":
        refuse(
            store,
            member,
            "approve",
            ref.name,
            f"Only the approver of release {draft.id} of project {ref.name} ({draft.decided_by}) or an owner "
            "withdraws its approval.",
        )
    why = str(reason or "").strip() or f"approval withdrawn by {member.label}"
    with store._transaction() as c:
        if through_functions(c):
            c.execute(text("SELECT public.anonlib_withdraw_approval(:id, :why)"), {"id": draft.id, "why": why})
        else:
            c.execute(
                update(DRAFTS)
                .where(DRAFTS.c.id == draft.id, DRAFTS.c.state == "approved")
                .values(state="withdrawn", reason=why)
            )
        row = c.execute(select(*_DRAFT_COLUMNS).where(DRAFTS.c.id == draft.id)).mappings().one()
    return _draft(row, ref.name)


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
    if approved and not draft.met and not str(text_ or "").strip():
        raise ProjectError(
            f"Release {draft.id} of project {ref.name} does not meet its target ({draft.target}): approving it needs a "
            "comment saying why (--comment TEXT)."
        )
    with store._transaction() as c:
        if through_functions(c):
            c.execute(
                text("SELECT public.anonlib_decide_draft(:id, :approve, :note)"),
                {"id": draft.id, "approve": bool(approved), "note": text_},
            )
            row = c.execute(select(*_DRAFT_COLUMNS).where(DRAFTS.c.id == draft.id)).mappings().one()
            return _draft(row, ref.name)
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
    if draft.state not in ("approved", "released"):
        why = {
            "rejected": f"it was rejected: {draft.reason}",
            "withdrawn": f"its approval was withdrawn ({draft.reason})",
        }.get(draft.state, "no second person has approved it yet")
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
    if draft.state == "released" and draft.audit_id is not None and _kept_release(store, draft.audit_id):
        kept = release_files(store, draft.audit_id)[1]  # checked at every hand-out against the approved package
        if kept is None or not same_members(kept, package):
            refuse(store, member, "release", ref.name, _changed(draft))
        return kept
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
            draft_id=draft.id,
            before_commit=mark_released,
            drafted_by=draft.drafted_by,
            approved_by=draft.decided_by,
            approved_sha256=draft.approved_sha256,
        ),
    )
    with store._transaction() as c:
        if not through_functions(c):  # a member's hand-out marked it released in the same call
            c.execute(update(DRAFTS).where(DRAFTS.c.id == draft.id).values(state="released", audit_id=entry.id))
    return handed[-1]


def same_members(stamped: bytes, approved: bytes) -> bool:
    """Whether a handed-out package holds, byte for byte, the members of the approved one, but for
    the hand-out's stamp (``audit.json``, and its line in ``SHA256SUMS``).

    >>> import pandas as pd
    >>> from anonlib.core.dataset import Dataset
    >>> from anonlib.workflow import ReleaseTarget, WorkingCopy, release_package
    >>> from anonlib.workflow.package import stamp_package
    >>> ds = Dataset.from_frame("d.csv", pd.DataFrame({"age": [30, 30]}), {"age": "quasi-identifier"})
    >>> plain = release_package(WorkingCopy.start(ds, ReleaseTarget(k=2)))
    >>> same_members(stamp_package(plain, {"entry": 1}), plain), same_members(plain, release_package(WorkingCopy.start(ds, ReleaseTarget(k=3))))
    (True, False)
    """

    def members(package: bytes) -> dict[str, bytes] | None:
        try:
            with zipfile.ZipFile(io.BytesIO(package)) as archive:
                out = {i.filename: archive.read(i) for i in archive.infolist() if i.filename != AUDIT_FILE}
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, zlib.error):
            return None
        if SUMS_FILE in out:
            lines = out[SUMS_FILE].decode("utf-8", "replace").splitlines()
            out[SUMS_FILE] = "\n".join(x for x in lines if not x.endswith(f"  {AUDIT_FILE}")).encode("utf-8")
        return out

    a, b = members(stamped), members(approved)
    return a is not None and a == b


def _member(package: bytes, name: str) -> bytes | None:
    try:
        with zipfile.ZipFile(io.BytesIO(package)) as archive:
            return archive.read(name) if name in archive.namelist() else None
    except (zipfile.BadZipFile, OSError, ValueError):
        return None


def _hand_out_private(store: ProjectStore, ref: ProjectRef, draft: Draft, package: bytes, member: Member, made_by: str):
    """An approved private release handed out: an audit entry naming drafter and approver and the
    package's digest (its ε and δ are on the entry that spent them, before it measured)."""
    stamp = now()
    with store._transaction() as c:
        tail = checked_tail(store, c, ref.id)
        user = member.label
        if through_functions(c):
            user = str(c.execute(text("SELECT session_user")).scalar())
        entry = AuditEntry(
            id=tail.number,
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
            user=user,
            made_by=made_by,
            previous=tail.previous,
            entry_sha256="",
            drafted_by=draft.drafted_by,
            approved_by=draft.decided_by,
        )
        if through_functions(c):
            c.execute(
                text("SELECT public.anonlib_hand_out(:id, :content, NULL, :package)"),
                {"id": draft.id, "content": dumps(entry.content()), "package": package},
            )
            return package
        append_entry(store, c, entry, tail)
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


__all__ = [
    "APPROVAL",
    "Draft",
    "approval_check",
    "approve",
    "draft_of_entry",
    "draft_private",
    "draft_release",
    "drafts",
    "hand_out",
    "reject",
    "same_members",
    "waiting_for",
    "withdraw",
]
