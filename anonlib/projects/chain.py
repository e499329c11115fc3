"""The audit log's chains: one per project, their heads, and the log's head.

Every audit entry is sealed by the SHA-256 of its content, which covers the SHA-256 of the
entry before it **in its project** (``team.md`` part 2, 5): the entries are numbered across the
store, but one project's chain links only its own entries (entries made without a project, a
private release's spend on the command line, form a chain of their own, project number 0). So
one project's broken chain (a row forged or removed behind the app) stops that project's
releases (``checked_tail``) and no other's, while ``verify_chain`` checks every chain.

Each project's chain keeps a head in the store's ``meta`` table (``head_keys``: its number of
entries, its last entry's number and that entry's SHA-256), written in the transaction of each
entry (``append_entry``), so entries removed from the end of a chain, which leave the links
before them intact, are caught. A new entry is numbered after the log's last entry and after
every number a head gave, so a removed entry's number is never given again.

The log's head (``log_head``, ``audit --head``) folds every entry's SHA-256 in number order; a
head kept elsewhere is extended by the log (``head_extends``) only while no entry at or before
it was removed or changed in any project, so a rewrite of a whole chain, which the store alone
cannot show, is caught against it.

A store written before the chains were per project keeps its entries on the one chain they
had, with its head (``head_keys()``); ``CHAIN_FROM`` is the first entry chained within its
project, and each project's first such entry follows that project's last one on the old chain.

Example:
    >>> links = [Link(1, 3, GENESIS, "a" * 64), Link(2, 4, GENESIS, "b" * 64), Link(3, 3, "a" * 64, "c" * 64)]
    >>> _tail_of(links, 3).to_json() == {"entries": 2, "last_entry": 3, "sha256": "c" * 64}
    True
    >>> _tail_of(links, 5) == EMPTY
    True
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

from sqlalchemy import Connection, insert, select, text

from ..core.errors import ParameterError, ProjectError
from ..core.masking import printable
from ..workflow.release import digest
from .records import AuditEntry, dumps
from .schema import AUDIT, META, PROJECTS, RELEASES
from .store import ProjectStore, name_key, through_functions

GENESIS = "0" * 64  # the "previous" digest of the first entry of a chain


@dataclass(frozen=True)
class LogHead:
    """A chain's head: how many entries it has, the number of its last entry and a SHA-256
    (``GENESIS`` when empty). A project's head as the store's ``meta`` table keeps it holds its
    last entry's SHA-256 (``project_head``); the log's head (``log_head``, ``audit --head``)
    every entry's SHA-256 folded in number order. ``entries`` and ``last_entry`` are None in a
    store written before the head held them."""

    entries: int | None
    last_entry: int | None
    sha256: str

    def to_json(self) -> dict:
        return {"entries": self.entries, "last_entry": self.last_entry, "sha256": self.sha256}


# the one chain's head of a store written before the chains were per project, and (suffixed
# ":<project number>") each project's chain head since
HEAD, HEAD_ENTRIES, HEAD_ENTRY = "audit_head", "audit_head_entries", "audit_head_entry"
CHAIN_FROM = "audit_chain_from"  # the first entry chained within its project (those before: one chain)
EMPTY = LogHead(0, None, GENESIS)


def head_keys(project_id: int | None = None) -> tuple[str, str, str]:
    """The ``meta`` keys of a project's chain head (None: the one chain of an older store).

    >>> head_keys(7)
    ('audit_head:7', 'audit_head_entries:7', 'audit_head_entry:7')
    """
    if project_id is None:
        return HEAD, HEAD_ENTRIES, HEAD_ENTRY
    return f"{HEAD}:{int(project_id)}", f"{HEAD_ENTRIES}:{int(project_id)}", f"{HEAD_ENTRY}:{int(project_id)}"


def _stored_head(store: ProjectStore, c: Connection, project_id: int | None) -> LogHead | None:
    """A chain's head as ``meta`` keeps it (None: it keeps none)."""
    sha, entries, last = (store._get_meta(c, key) for key in head_keys(project_id))
    if sha is None and entries is None and last is None:
        return None
    return LogHead(None if entries is None else int(entries), None if last is None else int(last), sha or GENESIS)


@dataclass(frozen=True)
class Link:
    """One entry as its chain sees it: its number, project, the digest it follows and its own."""

    number: int
    project_id: int
    previous: str
    sealed: str


def team_chain(c: Connection) -> bool:
    """Whether the log's chain is read through the team's functions: on a team's PostgreSQL store
    a member sees only the entries of their own projects (row-level security), while the log's
    head folds every entry; ``anonlib_audit_links`` gives the links (numbers, project numbers and
    digests, nothing else)."""
    return c.dialect.name == "postgresql" and bool(c.execute(text("SELECT to_regproc('anonlib_audit_links')")).scalar())


def _links(c: Connection) -> list[Link]:
    """Every entry's link, oldest first."""
    if team_chain(c):
        rows = c.execute(text("SELECT id, project_id, previous, entry_sha256 FROM anonlib_audit_links() ORDER BY id"))
    else:
        a = AUDIT.c
        rows = c.execute(select(a.id, a.project_id, a.previous, a.entry_sha256).order_by(a.id))
    return [Link(int(r[0]), int(r[1]), r[2], r[3]) for r in rows]


def _chain_from(store: ProjectStore, c: Connection, links: list[Link]) -> int:
    """The first entry chained within its project (``CHAIN_FROM``); the entries before it keep the
    one chain across the log an older store wrote (one that has recorded nothing since: all)."""
    kept = store._get_meta(c, CHAIN_FROM)
    if kept is not None:
        return int(kept)
    return links[-1].number + 1 if links else 1


def _tail_of(links: list[Link], project_id: int) -> LogHead:
    """What a project's chain holds: its number of entries, its last entry's number and SHA-256."""
    own = [link for link in links if link.project_id == project_id]
    return LogHead(len(own), own[-1].number if own else None, own[-1].sealed if own else GENESIS)


def folded(links: list[Link]) -> list[str]:
    """The log's head after each entry: every entry's SHA-256 folded in number order (the head
    after entry i is the SHA-256 of the head before it and the entry's own, as hex text).

    >>> folded([Link(1, 3, GENESIS, "a" * 64)]) == [digest((GENESIS + "a" * 64).encode())]
    True
    """
    heads, head = [], GENESIS
    for link in links:
        head = digest((head + link.sealed).encode("ascii"))
        heads.append(head)
    return heads


def log_head(store: ProjectStore) -> LogHead:
    """The head of the whole audit log: its number of entries, its last entry and every entry's
    SHA-256 folded in number order (``folded``; ``GENESIS`` when empty): what ``audit --head``
    prints to keep in a second place."""
    with snapshot(store) as c:
        links = _links(c)
    return LogHead(len(links), links[-1].number if links else None, folded(links)[-1] if links else GENESIS)


def project_head(store: ProjectStore, project_id: int) -> LogHead:
    """The head of a project's chain as the store keeps it (``EMPTY`` when it has none)."""
    with store._transaction() as c:
        return _stored_head(store, c, project_id) or EMPTY


def head_problem(head: LogHead, count: int, last: int | None, last_sha256: str, chain: str = "") -> str | None:
    """The sentence saying a chain and its head disagree (None when they agree); ``chain`` names
    it (" of project 'x'").

    >>> print(head_problem(LogHead(3, 3, "b" * 64), 2, 2, "a" * 64, " of project 'x'"))
    The audit log's chain of project 'x' is broken: the chain ends at entry 2 (2 entries) but its head says entry 3 (3 entries); entries were removed from its end.
    >>> head_problem(LogHead(2, 2, "a" * 64), 2, 2, "a" * 64) is None
    True
    """
    same = head.sha256 == last_sha256 and (head.entries is None or head.entries == count)
    if same and (head.last_entry is None or head.last_entry == last):
        return None
    ends = "the chain is empty" if last is None else f"the chain ends at entry {last} ({_counted(count)})"
    says = (
        f"entry {head.last_entry} ({_counted(head.entries)})"
        if head.last_entry is not None and head.entries is not None
        else ("no entry" if head.sha256 == GENESIS else f"an entry of SHA-256 {head.sha256[:16]}")
    )
    fewer = head.entries is not None and head.entries > count or last is None and head.sha256 != GENESIS
    if fewer and last != head.last_entry:
        why = "entries were removed from its end"
    elif fewer:
        why = "entries were removed from it"
    else:
        why = "entries were added or changed by other means"
    return f"The audit log's chain{chain} is broken: {ends} but its head says {says}; {why}."


def _counted(n: int) -> str:
    return f"{n:,} {'entry' if n == 1 else 'entries'}"


@dataclass(frozen=True)
class Tail:
    """Where the next entry goes, read in the transaction that appends it (the chain locked): its
    ``number`` (after the log's last entry) and the ``head`` of its project's chain before it,
    whose SHA-256 the entry follows (``previous``)."""

    number: int
    project_id: int
    head: LogHead

    @property
    def previous(self) -> str:
        return self.head.sha256


def checked_tail(store: ProjectStore, c: Connection, project_id: int) -> Tail:
    """In the transaction ``c`` that appends an entry of the project ``project_id``: the chain
    locked, that project's chain checked against its head (a sentence, nothing recorded, when it
    fails: another project's broken chain does not stop it), and where the entry goes."""
    lock_chain(c)
    links = _links(c)
    own = {int(project_id): [link for link in links if link.project_id == int(project_id)]}
    problem = _head_problems(store, c, own, [int(project_id)], _chain_from(store, c, links), {})
    if problem:
        raise ProjectError(f"{problem[0][:-1]}; no release is recorded while the log fails its check.")
    return Tail(_next_number(c, links), int(project_id), _tail_of(links, int(project_id)))


def _next_number(c: Connection, links: list[Link]) -> int:
    """The next entry's number: after the log's last entry and after every number a chain's head
    gave (an entry removed from one project's end never has its number given again)."""
    given = c.execute(select(META.c.value).where(META.c.key.like(f"{HEAD_ENTRY}%"))).scalars()
    return max([links[-1].number if links else 0, *(int(v) for v in given if str(v).isdigit())]) + 1


def append_entry(store: ProjectStore, c: Connection, entry: AuditEntry, tail: Tail) -> dict:
    """Seal ``entry`` (numbered and chained after the ``tail`` ``checked_tail`` read), insert it
    and move its project's head, in the transaction ``c``; the row's values."""
    if through_functions(c):  # a member's login: sealed, numbered and chained by the team's function
        entry = replace(entry, user=str(c.execute(text("SELECT session_user")).scalar()))
    sealed = digest(dumps(entry.content()).encode("utf-8"))
    values = entry.content() | {"parts": dumps(entry.content()["parts"]), "entry_sha256": sealed}
    if "charged" in values:
        values["charged"] = dumps(values["charged"])
    values["username"] = values.pop("user")
    if through_functions(c):
        c.execute(text("SELECT public.anonlib_append_entry(:content)"), {"content": dumps(entry.content())})
        return values
    c.execute(insert(AUDIT).values(id=entry.id, **values))
    if c.dialect.name == "postgresql":  # the numbers are given here: the sequence follows them
        c.execute(text("SELECT setval(pg_get_serial_sequence('audit', 'id'), :n)"), {"n": entry.id})
    if store._get_meta(c, CHAIN_FROM) is None:  # the first entry chained within its project
        store._set_meta(c, CHAIN_FROM, str(entry.id))
    for key, value in zip(head_keys(entry.project_id), (sealed, str((tail.head.entries or 0) + 1), str(entry.id))):
        store._set_meta(c, key, value)
    return values


def lock_chain(c: Connection) -> None:
    """Two entries recorded at once take turns for their numbers (SQLite's write transaction
    already does); a lock, not a check: it never stops a release."""
    if c.dialect.name == "postgresql":
        c.execute(text("SELECT pg_advisory_xact_lock(7306542)"))


def entry_of(row, deleted: bool) -> AuditEntry:
    """An audit entry from its row (``deleted``: its project has been deleted since)."""
    parts = row["parts"]
    return AuditEntry(
        id=int(row["id"]),
        time=row["time"],
        project_id=int(row["project_id"]),
        project=row["project"],
        source_name=row["source_name"],
        source_sha256=row["source_sha256"],
        target=row["target"],
        met=bool(row["met"]),
        records=int(row["records"]),
        released=int(row["released"]),
        suppressed=int(row["suppressed"]),
        released_sha256=row["released_sha256"],
        package_sha256=row["package_sha256"],
        parts=json.loads(parts) if isinstance(parts, str) else dict(parts),
        user=row["user"],
        made_by=row["made_by"],
        previous=row["previous"],
        entry_sha256=row["entry_sha256"],
        project_deleted=deleted,
        epsilon=row.get("epsilon"),
        delta=row.get("delta"),
        drafted_by=row.get("drafted_by"),
        approved_by=row.get("approved_by"),
        total_epsilon=row.get("total_epsilon"),
        total_delta=row.get("total_delta"),
        total_raised=bool(row.get("total_raised")) or None,
        charged=_charged(row.get("charged")),
    )


def _charged(stored) -> tuple[str, ...] | None:
    """The other files a private release was charged against, as the row keeps them (JSON list)."""
    if not stored:
        return None
    listed = json.loads(stored) if isinstance(stored, str) else list(stored)
    return tuple(str(s) for s in listed) or None


def read_entries(c: Connection, project: str | None = None) -> list[AuditEntry]:
    a, p = AUDIT, PROJECTS
    query = select(a, p.c.id.label("alive")).select_from(a.outerjoin(p, a.c.project_id == p.c.id)).order_by(a.c.id)
    rows = c.execute(query).mappings().all()
    if project is not None:  # names compared as the store compares them (NFC, spaces collapsed)
        rows = [r for r in rows if name_key(r["project"]) == name_key(project)]
    # an entry of no project (a private release's spend or a file's budget set without one) is not "deleted"
    return [entry_of({**r, "user": r["username"]}, deleted=r["alive"] is None and r["project_id"] != 0) for r in rows]


@contextmanager
def snapshot(store: ProjectStore) -> Iterator[Connection]:
    """A transaction whose reads all see the store at one moment (on PostgreSQL a repeatable
    read: a release committed meanwhile is not half seen; SQLite's transaction already is)."""
    with store._transaction() as c:
        if c.dialect.name == "postgresql":
            c.execute(text("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"))
        yield c


def verify_chain(store: ProjectStore, project: str | None = None) -> list[str]:
    """One sentence per entry whose digest or link to the entry before it in its project does
    not hold, one per chain that disagrees with its head (entries removed from its end), and one
    per release kept in a project whose entry the log lacks. ``project``: only what a release
    into the project of that name depends on (its chain, and an older store's one chain)."""
    with snapshot(store) as c:
        if project is None:
            return chain_problems(store, c)
        row = store._row(c, project, missing_ok=True)
        return chain_problems(store, c, [] if row is None else [int(row["id"])])


def chain_problems(store: ProjectStore, c: Connection, project_ids: Iterable[int] | None = None) -> list[str]:
    """``verify_chain`` read in the transaction ``c`` (e.g. the one that spends a private
    release's budget: the chains it depends on are checked before anything is spent);
    ``project_ids``: only those projects' chains (None: every chain)."""
    links = _links(c)
    chain_from = _chain_from(store, c, links)
    entries = read_entries(c)
    names = {e.project_id: e.project for e in entries}
    scope = None if project_ids is None else {int(p) for p in project_ids}
    problems = []
    # an older store's one chain (the entries before CHAIN_FROM): every project's releases hung on it
    previous, old = GENESIS, [link for link in links if link.number < chain_from]
    for link in old:
        if link.previous != previous:
            problems.append(
                f"Audit entry {link.number} does not follow the entry before it (one was removed or changed)."
            )
        previous = link.sealed
    legacy = _stored_head(store, c, None)
    if legacy is not None or old:
        problem = head_problem(legacy or EMPTY, len(old), old[-1].number if old else None, previous)
        if problem is not None:
            problems.append(problem)
    chains: dict[int, list[Link]] = {}
    for link in links:
        chains.setdefault(link.project_id, []).append(link)
    if scope is None:
        pids = sorted({link.project_id for link in links if link.number >= chain_from} | _headed(c))
    else:
        pids = sorted(scope)
    for pid in pids:  # each project's chain: every entry follows the one before it in its project
        previous = GENESIS
        for link in chains.get(pid, []):
            if link.number >= chain_from and link.previous != previous:
                problems.append(
                    f"Audit entry {link.number} does not follow the entry before it in its project (one was removed "
                    "or changed)."
                )
            previous = link.sealed
    problems.extend(_head_problems(store, c, chains, pids, chain_from, names))
    sealed_as = {link.number: link.sealed for link in links}
    for entry in entries:  # every entry the caller sees, sealed as its link says
        if scope is not None and entry.project_id not in scope and entry.id >= chain_from:
            continue
        if digest(dumps(entry.content()).encode("utf-8")) != entry.entry_sha256 or sealed_as.get(entry.id) != (
            entry.entry_sha256
        ):
            problems.append(f"Audit entry {entry.id} was changed after it was written (its digest does not match).")
    kept = (
        select(RELEASES.c.audit_id, PROJECTS.c.name)
        .select_from(RELEASES.join(PROJECTS, RELEASES.c.project_id == PROJECTS.c.id))
        .where(RELEASES.c.audit_id.not_in(select(AUDIT.c.id)))
        .order_by(RELEASES.c.audit_id)
    )
    if scope is not None:
        kept = kept.where(RELEASES.c.project_id.in_(sorted(scope)))
    for audit_id, name in c.execute(kept).all():
        problems.append(
            f"The project '{printable(name)}' keeps the release of audit entry {audit_id}, which the audit log lacks."
        )
    return problems


def _headed(c: Connection) -> set[int]:
    """The projects whose chain has a head in ``meta`` (also one whose entries are all gone)."""
    prefix = f"{HEAD}:"
    keys = c.execute(select(META.c.key).where(META.c.key.like(f"{prefix}%"))).scalars()
    return {int(key[len(prefix) :]) for key in keys if key[len(prefix) :].isdigit()}


def _head_problems(
    store: ProjectStore, c: Connection, chains: dict[int, list[Link]], pids: Iterable[int], chain_from: int, names: dict
) -> list[str]:
    """For each project of ``pids``: the sentence saying its chain (``chains``: each project's
    links, oldest first) and its head disagree. A project whose entries all hang on an older
    store's one chain has no head of its own yet."""
    problems = []
    for pid in pids:
        own = chains.get(pid, [])
        head = _stored_head(store, c, pid)
        if head is None and not any(link.number >= chain_from for link in own):
            continue
        tail = _tail_of(own, pid)
        problem = head_problem(
            head or EMPTY, tail.entries or 0, tail.last_entry, tail.sha256, _chain_name(c, store, pid, names)
        )
        if problem is not None:
            problems.append(problem)
    return problems


def _chain_name(c: Connection, store: ProjectStore, project_id: int, names: dict) -> str:
    """How a sentence names a project's chain (" of project 'survey'")."""
    if project_id == 0:
        return " of the entries made without a project"
    name = names.get(project_id)
    if name is None:
        row = store._row(c, int(project_id), missing_ok=True)
        name = None if row is None else row["name"]
    return f" of project '{printable(name)}'" if name is not None else f" of project number {project_id}"


@dataclass(frozen=True)
class HeadCheck:
    """Whether the audit log extends a head kept elsewhere (``audit --head`` printed it): every
    chain holds and the log's head was that digest after one of its entries (``entry``; None for
    the empty log's head), followed by ``after`` entries; ``problem`` says why not."""

    kept: str
    extends: bool
    entry: int | None
    after: int
    problem: str | None = None

    def sentence(self) -> str:
        if not self.extends:
            return self.problem or ""
        where = "the empty log's head" if self.entry is None else f"entry {self.entry}"
        return (
            f"The audit log extends the head kept ({self.kept[:16]}…, {where}): {_counted(self.after)} written after "
            "it, the chain intact."
        )

    def to_json(self) -> dict:
        return {
            "expected": self.kept,
            "extends": self.extends,
            "entry": self.entry,
            "entries_after": self.after,
            "problem": self.problem,
        }


def head_hex(text: str) -> str:
    """A head digest as a user gives it: 64 hexadecimal digits (any case, spaces around), else
    one sentence.

    >>> head_hex(" " + "AB" * 32 + "\\n") == "ab" * 32
    True
    """
    given = str(text).strip().lower()
    if len(given) != 64 or any(ch not in "0123456789abcdef" for ch in given):
        raise ParameterError(
            "--expect-head takes the 64 hexadecimal digits audit --head printed "
            f"(got {len(given)} character{'s' if len(given) != 1 else ''} that are not one)."
        )
    return given


def head_extends(store: ProjectStore, kept: str) -> HeadCheck:
    """Check that the audit log extends the head ``kept`` (64 hex digits, see ``head_hex``): every
    chain verified, and the log's head (``log_head``) was ``kept`` after one of its entries (or
    ``kept`` the empty log's head; or, kept from a store before the chains were per project, the
    SHA-256 of one of the entries of its one chain). An entry removed or changed before it in any
    project, a chain rewritten, or the log cut back below it fails, in one sentence."""
    kept = head_hex(kept)
    with snapshot(store) as c:
        problems = chain_problems(store, c)
        links = _links(c)
        chain_from = _chain_from(store, c, links)
    if problems:
        return HeadCheck(kept, False, None, 0, f"{problems[0][:-1]}, so it cannot extend the head kept.")
    if kept == GENESIS:
        return HeadCheck(kept, True, None, len(links))
    for i, (link, head) in enumerate(zip(links, folded(links))):
        if head == kept or link.number < chain_from and link.sealed == kept:
            return HeadCheck(kept, True, link.number, len(links) - i - 1)
    return HeadCheck(
        kept,
        False,
        None,
        0,
        f"The audit log does not extend the head kept ({kept[:16]}…): it was not the log's head after any of its "
        f"{_counted(len(links))}, so entries were removed or the chain was rewritten since the head was kept.",
    )


def named_head(store: ProjectStore, name: str) -> LogHead:
    """The chain head of the project of that name as the store keeps it (``EMPTY``: none)."""
    with store._transaction() as c:
        row = store._row(c, name, missing_ok=True)
        return EMPTY if row is None else _stored_head(store, c, int(row["id"])) or EMPTY
