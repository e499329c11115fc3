"""The small values the project store hands out: a session's reference to its project, a
project's summary, what the store keeps, and an audit entry.

Example:
    >>> _size(999), _size(1_234_567)
    ('999 bytes', '1.2 MB')
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from .state import ProjectState


def dumps(data: Any) -> str:
    """Canonical JSON (keys sorted, no spaces, UTF-8 kept): what digests are taken of.

    >>> dumps({"b": 1, "a": "é"})
    '{"a":"é","b":1}'
    """
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def now() -> str:
    """The current time, UTC, to the microsecond (ISO 8601), as the store records it."""
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


@dataclass(frozen=True)
class ProjectRef:
    """What a session holds of its project: id, name and the version it last read or wrote."""

    id: int
    name: str
    version: int


@dataclass(frozen=True)
class ProjectSummary:
    """One project as the Projects page and ``projects list`` show it."""

    id: int
    name: str
    source_name: str
    origin: str
    records: int
    columns: int
    created: str
    updated: str
    change: str
    version: int
    keep_file: bool
    file_bytes: int
    releases: int

    @property
    def ref(self) -> ProjectRef:
        return ProjectRef(self.id, self.name, self.version)

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "name": self.name,
            "file": self.source_name,
            "origin": self.origin,
            "records": self.records,
            "columns": self.columns,
            "created": self.created,
            "updated": self.updated,
            "last_change": self.change,
            "version": self.version,
            "file_kept": self.keep_file,
            "file_bytes": self.file_bytes,
            "releases": self.releases,
        }


@dataclass(frozen=True)
class Project:
    """A project read from the store: its summary and its state."""

    summary: ProjectSummary
    state: ProjectState

    @property
    def ref(self) -> ProjectRef:
        return self.summary.ref


@dataclass(frozen=True)
class StoreUsage:
    """What the store keeps, where and how big (said plainly on the Projects page)."""

    where: str
    backend: str
    total_bytes: int | None
    projects: int
    files: int
    file_bytes: int
    packages: int
    package_bytes: int
    audit_entries: int

    def sentence(self) -> str:
        size = "" if self.total_bytes is None else f" ({_size(self.total_bytes)} on disk)"
        return (
            f"The project store is {'the SQLite file ' if self.backend == 'sqlite' else 'the PostgreSQL database '}"
            f"{self.where}{size}. It keeps {self.projects:,} project{'s' if self.projects != 1 else ''} "
            f"(roles, target, steps), {self.files:,} file{'s' if self.files != 1 else ''} you chose to keep "
            f"({_size(self.file_bytes)}), {self.packages:,} release package{'s' if self.packages != 1 else ''} "
            f"({_size(self.package_bytes)}) and an audit log of {self.audit_entries:,} "
            f"release{'s' if self.audit_entries != 1 else ''}."
        )


def _size(n: int) -> str:
    """ "1.2 MB" (decimal units, as file managers show them)."""
    if n < 1000:
        return f"{n:,} bytes"
    for unit in ("kB", "MB", "GB", "TB"):
        n /= 1000
        if n < 1000 or unit == "TB":
            return f"{n:.1f} {unit}"
    return f"{n:.1f} TB"  # pragma: no cover


@dataclass(frozen=True)
class AuditEntry:
    """One release in the append-only audit log: when, which project, the source file's
    SHA-256, the target and whether the released table meets it (recounted on the table as
    written), the records assessed (``records``, as ``anonymize --json`` states them), released
    and suppressed, the SHA-256 of the released table, of
    the package and of each of its parts, who made it and where (dashboard or command line),
    and the chain: the SHA-256 of the entry before and of this one. ``project_deleted`` when
    its project has been deleted since (the entry stays)."""

    id: int
    time: str
    project_id: int
    project: str
    source_name: str
    source_sha256: str | None
    target: str
    met: bool
    records: int
    released: int
    suppressed: int
    released_sha256: str
    package_sha256: str | None
    parts: dict[str, str]
    user: str
    made_by: str
    previous: str
    entry_sha256: str
    project_deleted: bool = False
    epsilon: float | None = None  # a private release: the ε it spent (recorded before it measured)
    delta: float | None = None
    drafted_by: str | None = None  # who drafted the release (``team.md``; None in entries written before)
    approved_by: str | None = None  # who approved it: another member in a team, the drafter alone otherwise
    total_epsilon: float | None = None  # a change of a file's privacy budget: its new total ε
    total_delta: float | None = None
    total_raised: bool | None = None  # the total was raised on its owner's word (the earlier smallest no longer holds)
    charged: tuple[str, ...] | None = None  # a private release: the other files' SHA-256s it was charged against too

    @property
    def four_eyes(self) -> bool:
        """Whether a second person approved this release (False for a single user's one-step release)."""
        return self.approved_by is not None and self.approved_by != self.drafted_by

    def content(self) -> dict[str, Any]:
        """What the entry's digest is taken of (everything it states, and the previous digest;
        ε and δ only for a private release, drafter and approver only when recorded, the totals
        only for a change of a file's budget, a raise and the other files charged only when
        there are, so older entries keep their digests)."""
        private = {} if self.epsilon is None else {"epsilon": self.epsilon, "delta": self.delta}
        if self.drafted_by is not None:
            private |= {"drafted_by": self.drafted_by, "approved_by": self.approved_by}
        if self.total_epsilon is not None:
            private |= {"total_epsilon": self.total_epsilon, "total_delta": self.total_delta}
        if self.total_raised:
            private |= {"total_raised": True}
        if self.charged:
            private |= {"charged": list(self.charged)}
        return private | {
            "time": self.time,
            "project_id": self.project_id,
            "project": self.project,
            "source_name": self.source_name,
            "source_sha256": self.source_sha256,
            "target": self.target,
            "met": self.met,
            "records": self.records,
            "released": self.released,
            "suppressed": self.suppressed,
            "released_sha256": self.released_sha256,
            "package_sha256": self.package_sha256,
            "parts": dict(sorted(self.parts.items())),
            "user": self.user,
            "made_by": self.made_by,
            "previous": self.previous,
        }

    def to_json(self) -> dict[str, Any]:
        """The entry as ``audit --json`` prints it."""
        return {
            "id": self.id,
            **{k: v for k, v in self.content().items() if k != "previous"},
            "epsilon": self.epsilon,
            "delta": self.delta,
            "drafted_by": self.drafted_by,
            "approved_by": self.approved_by,
            "release": "approved by a second person"
            if self.four_eyes
            else ("one step: single-user mode (drafter and approver are the same user)" if self.drafted_by else None),
            "total_epsilon": self.total_epsilon,
            "total_delta": self.total_delta,
            "total_raised": bool(self.total_raised),
            "charged": list(self.charged or ()),
            "project_deleted": self.project_deleted,
            "previous_sha256": self.previous,
            "entry_sha256": self.entry_sha256,
        }
