"""The privacy budget of a file: the total ε and δ its private releases may spend, and what
they spent, read from the audit log. The budget belongs to the data, not to a project's name.

Every private release (``synthesize``, with or without ``--project``; the Release page's
private section) is recorded in the audit log by ``spend_privacy`` *before* OpenDP reads the
records, with the SHA-256 of the file it reads: a release that then fails (a failed write, a
failed check, OpenDP's own refusal) has still spent its budget, so re-running is spending.
An entry carries the ε and δ the release states (OpenDP's map of the whole release). A
file's spent budget is the sum over every entry of that SHA-256, in every project of the
store, deleted ones included (basic composition: ε adds up, δ adds up): a new project over
the same file, or a project deleted and made again, starts from what the file has spent.

A file's total is the smallest one set over it (``set_budget``: ``projects budget NAME --epsilon
E [--delta D]`` sets the total of NAME's file, ``projects budget --file FILE`` of a file
without a project), itself an audit entry, so lowering a total is on record; a larger total is
refused unless raised on purpose (``--raise``: an entry marked ``total_raised`` naming the
earlier total, from which the smallest is taken again). A
file whose total was never set has the default (``DEFAULT_EPSILON`` and ``DEFAULT_DELTA``,
said as such); a total a version-2 store kept on a project counts as a ceiling until a
total is set over its file. A release that would pass the total is refused in one sentence
saying what is spent and what is left, and nothing is recorded. Before anything is spent
or set, the whole audit chain is verified: a broken chain refuses every private release
and every change of a total in one sentence.

Example:
    >>> import tempfile
    >>> import pandas as pd
    >>> from anonlib.core.dataset import Dataset
    >>> from anonlib.workflow import ReleaseTarget, WorkingCopy
    >>> from anonlib.projects.state import ProjectState
    >>> from anonlib.projects.store import ProjectStore
    >>> store = ProjectStore(f"sqlite:///{tempfile.mkdtemp()}/projects.sqlite")
    >>> ds = Dataset.from_frame("d.csv", pd.DataFrame({"age": [30, 30, 40, 40]}), {"age": "quasi-identifier"})
    >>> ref = store.create("survey", ProjectState.of(WorkingCopy.start(ds, ReleaseTarget(k=2)), "sample:x"))
    >>> sha = "ab" * 32
    >>> set_budget(store, sha256=sha, source_name="d.csv", epsilon=1.5, user="anna").sentence()
    'd.csv: ε = 0 of 1.5 spent (1.5 left) by 0 private releases; δ = 0 of 1e-05 spent.'
    >>> entry = spend_privacy(store, "survey", epsilon=1.0, delta=0.0, source_name="d.csv", source_sha256=sha, user="anna")
    >>> spend_privacy(store, None, epsilon=1.0, delta=0.0, source_name="d.csv", source_sha256=sha)
    Traceback (most recent call last):
    ...
    anonlib.core.errors.PrivacyBudgetError: This release would spend ε = 1 of the privacy budget of d.csv, past its total: ε = 1 of 1.5 is spent and 0.5 is left; choose ε at most 0.5, or raise the total with projects budget --file d.csv --epsilon E.
    >>> file_budget(store, sha).epsilon_spent
    1.0
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath

from sqlalchemy import Connection, func, select, text

from ..core.errors import PrivacyBudgetError, ProjectError
from ..core.fingerprint import Fingerprint
from ..core.masking import printable
from ..core.samples import SAMPLES, sample_sha256
from .audit import COMMAND_LINE, current_user
from .chain import append_entry, chain_problems, checked_tail, entry_of, team_chain
from .fingerprints import keep_fingerprint, overlapping
from .records import AuditEntry, ProjectRef, now
from .schema import AUDIT, PROJECTS
from .store import ProjectStore

TOLERANCE = 1e-9  # relative: 1 + 0.5 fits a total of 1.5 whatever the floating-point sum
PENDING = ""  # released_sha256 of a spend or a change of total: nothing is released with it
DEFAULT_EPSILON = 10.0  # a file's total ε until one is set over it
DEFAULT_DELTA = 1e-5  # its total δ (ten releases at the cap of 1e-6 each)
NO_PROJECT = 0  # the project number of an entry made without a project (the command line without --project)


@dataclass(frozen=True)
class PrivacyBudget:
    """A file's privacy budget: its totals (``default``: never set, the default) and what its
    private releases spent, in every project over it (``projects``, the names that spent)."""

    name: str
    sha256: str
    epsilon_total: float
    delta_total: float
    epsilon_spent: float
    delta_spent: float
    releases: int
    default: bool = False
    projects: tuple[str, ...] = ()

    @property
    def project(self) -> str:
        """The file's name, as the budget is shown (kept for the pages written per project)."""
        return self.name

    @property
    def epsilon_left(self) -> float:
        return max(self.epsilon_total - self.epsilon_spent, 0.0)

    @property
    def delta_left(self) -> float:
        return max(self.delta_total - self.delta_spent, 0.0)

    def refusal(self, epsilon: float, delta: float, why: str = "") -> str | None:
        """The sentence refusing a release of ``epsilon`` and ``delta`` past the total (None when it
        fits); ``why``: the words saying why this file is charged (another file's release over its people)."""
        name = printable(self.name)  # a file's or project's name: line breaks and controls escaped
        raise_it = f"projects budget --file {name} --epsilon E"
        if self.epsilon_spent + epsilon > self.epsilon_total * (1 + TOLERANCE):
            return (
                f"This release would spend ε = {epsilon:g} of the privacy budget of {name}{self._why(why)}, past its "
                "total: ε = "
                f"{self.epsilon_spent:g} of {self.epsilon_total:g} is spent and {self.epsilon_left:g} is left; "
                f"choose ε at most {self.epsilon_left:g}, or raise the total with {raise_it}."
            )
        if self.delta_spent + delta > self.delta_total * (1 + TOLERANCE):
            return (
                f"This release would spend δ = {delta:g} of the privacy budget of {name}{self._why(why)}, past its "
                "total: δ = "
                f"{self.delta_spent:g} of {self.delta_total:g} is spent and {self.delta_left:g} is left; choose δ "
                f"at most {self.delta_left:g}, or raise the total with {raise_it} --delta D."
            )
        return None

    @staticmethod
    def _why(why: str) -> str:
        return f" (charged too, as {why})" if why else ""

    def sentence(self) -> str:
        """The budget in words (spent / total)."""
        default = "; the totals are the default of a file (projects budget sets them)" if self.default else ""
        return (
            f"{printable(self.name)}: ε = {self.epsilon_spent:g} of {self.epsilon_total:g} spent ({self.epsilon_left:g} left) "
            f"by {self.releases} private release{'s' if self.releases != 1 else ''}{self._over()}; "
            f"δ = {self.delta_spent:g} of {self.delta_total:g} spent{default}."
        )

    def _over(self) -> str:
        return f" in {len(self.projects)} projects" if len(self.projects) > 1 else ""

    def to_json(self) -> dict:
        return {
            "file": self.name,
            "sha256": self.sha256,
            "epsilon_total": self.epsilon_total,
            "delta_total": self.delta_total,
            "default": self.default,
            "epsilon_spent": self.epsilon_spent,
            "delta_spent": self.delta_spent,
            "epsilon_left": self.epsilon_left,
            "delta_left": self.delta_left,
            "private_releases": self.releases,
            "projects": list(self.projects),
        }


@dataclass(frozen=True)
class Charge:
    """A spent file a release is charged against: its SHA-256 and name, the estimated overlap
    of their people (0 to 1; ``by``: "people" compared (person, value) pairs, "records" whole
    records) and that file's budget before this release (``anonlib.projects.budget``)."""

    sha256: str
    name: str
    overlap: float
    by: str
    budget: PrivacyBudget

    def words(self) -> str:
        how = "the people and their values" if self.by == "people" else "whole records"
        return f"its people overlap that file’s by about {100 * self.overlap:.0f}% ({how})"

    def sentence(self) -> str:
        b = self.budget
        return (
            f"This release is charged against the privacy budget of {printable(self.name)} too: {self.words()}, and ε = "
            f"{b.epsilon_left:g} of its total {b.epsilon_total:g} is left."
        )

    def to_json(self) -> dict:
        return {
            "file": self.name,
            "sha256": self.sha256,
            "overlap": round(self.overlap, 4),
            "compared": self.by,
            "epsilon_left_before": self.budget.epsilon_left,
            "epsilon_total": self.budget.epsilon_total,
        }


def charges(store: ProjectStore, sha256: str, fingerprint: Fingerprint | None) -> list[Charge]:
    """The spent files a release over the file of ``sha256`` (with this ``fingerprint``) is
    charged against too, each with its budget now (empty without a fingerprint)."""
    if fingerprint is None:
        return []
    with store._transaction() as c:
        return [Charge(s, n, o, by, _budget(c, s, n)) for s, n, o, by in overlapping(c, sha256, fingerprint)]


def project_file(store: ProjectStore, project: int | str | ProjectRef) -> tuple[str, str]:
    """(SHA-256, name) of the file a project is over: its bytes' SHA-256, or a bundled sample's."""
    with store._transaction() as c:
        row = store._row(c, project)
    return _file_of(row), _shown(row["source_name"])


def _shown(name: str) -> str:
    """A file's name as a budget shows it (a path read by the command line: its last part)."""
    return PurePath(str(name)).name or str(name)


def _file_of(row, missing_ok: bool = False) -> str | None:
    if row["source_sha256"]:
        return str(row["source_sha256"])
    origin = str(row["origin"] or "")
    if origin.startswith("sample:") and origin[7:] in SAMPLES:
        return sample_sha256(origin[7:])
    if missing_ok:
        return None
    raise ProjectError(
        f"The project '{printable(row['name'])}' keeps no SHA-256 of its file, which a privacy budget is kept by; "
        "open the file again to start a project over it."
    )


def _spends(sha256: str):
    """The audit entries spending from the file of SHA-256 ``sha256``: its own private releases,
    and those over other files charged against it too (their people overlapping its own)."""
    a = AUDIT
    return (a.c.epsilon.is_not(None)) & ((a.c.source_sha256 == sha256) | (a.c.charged.like(f'%"{sha256}"%')))


def _totals(sha256: str):
    """The entries setting the file's total that hold: every one since the last raise (all of
    them when it was never raised); the smallest of them is the total."""
    a = AUDIT
    raised = (
        select(func.coalesce(func.max(a.c.id), 0))
        .where(a.c.source_sha256 == sha256)
        .where(a.c.total_epsilon.is_not(None))
        .where(a.c.total_raised.is_(True))
        .scalar_subquery()
    )
    return (a.c.source_sha256 == sha256) & (a.c.total_epsilon.is_not(None)) & (a.c.id >= raised)


def _budget(c: Connection, sha256: str, name: str) -> PrivacyBudget:
    """The file's budget read in the transaction ``c``: every spend charged to that SHA-256 in
    the audit log, the smallest total set since the last raise, else the default (lowered by a
    total a version-2 store kept)."""
    a = AUDIT
    who = c.execute(select(a.c.project).where(_spends(sha256)).group_by(a.c.project).order_by(func.min(a.c.id))).all()
    if team_chain(c):  # a team member sees only their projects' entries: the file's sums over every project
        n, e, d, total_e, total_d = c.execute(text("SELECT * FROM anonlib_file_spending(:sha)"), {"sha": sha256}).one()
        spent, last = (n, e, d), (None if total_e is None else (total_e, total_d))
        seen = c.execute(select(func.count(a.c.epsilon)).where(_spends(sha256))).scalar()
        if int(seen or 0) < int(n):
            who = [*who, ("projects you are not a member of",)]
    else:
        spent = c.execute(
            select(
                func.count(a.c.epsilon),
                func.coalesce(func.sum(a.c.epsilon), 0.0),
                func.coalesce(func.sum(a.c.delta), 0.0),
            ).where(_spends(sha256))
        ).first()
        last = c.execute(select(func.min(a.c.total_epsilon), func.min(a.c.total_delta)).where(_totals(sha256))).first()
        last = None if last is None or last[0] is None else last
    if last is not None:
        total_epsilon, total_delta, default = float(last[0]), float(last[1]), False
    else:
        p = PROJECTS.c  # version 2 kept totals on projects: a ceiling of their file's, never a raise
        rows = c.execute(
            select(p.name, p.source_sha256, p.origin, p.budget_epsilon, p.budget_delta).where(
                (p.budget_epsilon.is_not(None)) | (p.budget_delta.is_not(None))
            )
        ).mappings()
        legacy = [r for r in rows if _file_of(r, missing_ok=True) == sha256]
        epsilons = [float(r["budget_epsilon"]) for r in legacy if r["budget_epsilon"] is not None]
        deltas = [float(r["budget_delta"]) for r in legacy if r["budget_delta"] is not None]
        total_epsilon, total_delta = min([DEFAULT_EPSILON, *epsilons]), min([DEFAULT_DELTA, *deltas])
        default = not legacy
    return PrivacyBudget(
        name=name,
        sha256=sha256,
        epsilon_total=total_epsilon,
        delta_total=total_delta,
        epsilon_spent=float(spent[1]),
        delta_spent=float(spent[2]),
        releases=int(spent[0]),
        default=default,
        projects=tuple(r[0] or "(no project)" for r in who),
    )


def file_budget(store: ProjectStore, sha256: str, name: str | None = None) -> PrivacyBudget:
    """The privacy budget of the file of SHA-256 ``sha256`` (``name``: how it is shown)."""
    with store._transaction() as c:
        return _budget(c, str(sha256), name or _name_of(c, sha256))


def _name_of(c: Connection, sha256: str) -> str:
    row = c.execute(
        select(AUDIT.c.source_name).where(AUDIT.c.source_sha256 == sha256).order_by(AUDIT.c.id.desc()).limit(1)
    ).first()
    return row[0] if row is not None else f"the file of SHA-256 {sha256[:12]}"


def budget_of(store: ProjectStore, project: int | str | ProjectRef) -> PrivacyBudget:
    """The privacy budget of the file ``project`` is over (shared by every project over it)."""
    with store._transaction() as c:
        row = store._row(c, project)
        return _budget(c, _file_of(row), _shown(row["source_name"]))


def chain_refusal(store: ProjectStore, c: Connection, sha256: str, project_id: int | None = None) -> str | None:
    """The sentence refusing a private release (or a change of a total) of the file ``sha256``
    while an audit chain it depends on fails its check, read in the transaction ``c``: the chain
    of ``project_id`` (the one the entry goes in) and of every project whose entries spend or set
    that file's budget (a broken chain elsewhere does not stop it); None when they hold."""
    over = c.execute(select(AUDIT.c.project_id).where(_spends(sha256) | _totals(sha256)).distinct()).scalars()
    problems = chain_problems(
        store, c, {int(p) for p in over} | ({int(project_id)} if project_id is not None else set())
    )
    if not problems:
        return None
    return (
        f"{problems[0][:-1]}; no private release is made, and no budget changed, while the audit log fails its check."
    )


def spending_refusal(store: ProjectStore, sha256: str, name: str, *, epsilon: float, delta: float) -> str | None:
    """Why a release of ``epsilon`` and ``delta`` from this file would be refused now (a broken
    chain, a total passed), or None: asked before any record is read; ``spend_privacy`` asks
    again, in the transaction that records the spend."""
    with store._transaction() as c:
        return chain_refusal(store, c, str(sha256)) or _budget(c, str(sha256), name).refusal(
            float(epsilon), float(delta)
        )


def _unreleased_entry(
    number: int, previous: str, row, time: str, *, user: str | None, records: int = 0, **stated
) -> AuditEntry:
    """An audit entry that releases no table (a private release's spend, a change of a file's
    total): numbered ``number`` after ``previous``, under the project of ``row`` (None: no
    project); ``stated`` gives its source, target, maker and ε/δ fields."""
    return AuditEntry(
        id=number,
        time=time,
        project_id=int(row["id"]) if row is not None else NO_PROJECT,
        project=row["name"] if row is not None else "",
        met=True,
        records=records,
        released=0,
        suppressed=0,
        released_sha256=PENDING,
        package_sha256=None,
        parts={},
        user=user or current_user(),
        previous=previous,
        entry_sha256="",
        **stated,
    )


def set_budget(
    store: ProjectStore,
    project: int | str | ProjectRef | None = None,
    *,
    epsilon: float,
    delta: float | None = None,
    sha256: str | None = None,
    source_name: str | None = None,
    user: str | None = None,
    made_by: str = COMMAND_LINE,
    raise_total: bool = False,
) -> PrivacyBudget:
    """Set the total privacy budget of a file: the file ``project`` is over, or the file of
    SHA-256 ``sha256``. ε positive; δ a small probability (None: the file's δ total stays).
    The change is an audit entry (nothing is written when the total does not change); refused
    in a sentence while the audit log fails its check. A total below what is spent is
    accepted: every further release is then refused. The smallest total set holds: a larger
    ε or δ than the file's total is refused in a sentence unless ``raise_total`` (the owner's
    ``--raise``), whose entry names the earlier total and from which the smallest is taken
    again."""
    epsilon = float(epsilon)
    if not epsilon > 0 or epsilon != epsilon or epsilon == float("inf"):
        raise ProjectError(f"A privacy budget's ε must be a positive number; got {epsilon:g}.")
    if delta is not None and not 0 <= float(delta) < 1:
        raise ProjectError(f"A privacy budget's δ must be 0 or a small probability; got {float(delta):g}.")
    with store._transaction() as c:
        row = store._row(c, project) if project is not None else None
        sha = _file_of(row) if row is not None else sha256
        if not sha:
            raise ProjectError("Name the project or the file whose privacy budget to set.")
        name = source_name or (_shown(row["source_name"]) if row is not None else _name_of(c, sha))
        pid = int(row["id"]) if row is not None else NO_PROJECT
        refusal = chain_refusal(store, c, sha, pid)
        if refusal:
            raise ProjectError(refusal)
        tail = checked_tail(store, c, pid)
        before = _budget(c, sha, name)
        new_delta = before.delta_total if delta is None else float(delta)
        if (epsilon, new_delta) == (before.epsilon_total, before.delta_total) and not before.default:
            return before
        was = f"ε = {before.epsilon_total:g}, δ = {before.delta_total:g}{', the default' if before.default else ''}"
        larger = not before.default and (epsilon > before.epsilon_total or new_delta > before.delta_total)
        if larger and not raise_total:
            where = (
                f"projects budget {printable(row['name'])}"
                if row is not None
                else f"projects budget --file {printable(name)}"
            )
            raise ProjectError(
                f"The privacy budget of {printable(name)} keeps the smallest total set over it ({was}); a larger total is set "
                f"only by raising it on purpose: {where} --epsilon {epsilon:g}"
                f"{'' if delta is None else f' --delta {new_delta:g}'} --raise (an audit entry naming the earlier total)."
            )
        verb = "raised" if larger else "set"
        entry = _unreleased_entry(
            tail.number,
            tail.previous,
            row,
            now(),
            source_name=name,
            source_sha256=sha,
            target=f"privacy budget of the file {verb}: ε = {epsilon:g}, δ = {new_delta:g} (was {was})",
            user=user,
            made_by=made_by,
            total_epsilon=epsilon,
            total_delta=new_delta,
            total_raised=True if larger else None,
        )
        append_entry(store, c, entry, tail)
        return _budget(c, sha, name)


def spend_privacy(
    store: ProjectStore,
    project: int | str | ProjectRef | None,
    *,
    epsilon: float,
    delta: float,
    source_name: str,
    source_sha256: str,
    records: int = 0,
    made_by: str = COMMAND_LINE,
    user: str | None = None,
    fingerprint: Fingerprint | None = None,
) -> AuditEntry:
    """Record a private release's ε and δ (what it states) in the audit log, against the file of
    SHA-256 ``source_sha256``, before it measures: under ``project`` (None: a release made
    without one). In one transaction: the whole audit chain verified, the file's budget read
    (every project over it), and a ``PrivacyBudgetError`` sentence (nothing recorded) when it
    would pass the total, or a ``ProjectError`` when the chain is broken. With the file's
    ``fingerprint`` (kept with the spend): every spent file whose people it overlaps by more
    than half is charged too (the entry's ``charged``), and refused past its total the same way."""
    epsilon, delta = float(epsilon), float(delta)
    if not source_sha256:
        raise ProjectError(
            "A private release is recorded against the SHA-256 of the file it reads, and this table has none."
        )
    stamp = now()
    with store._transaction() as c:
        row = store._row(c, project) if project is not None else None
        # the chain locked and checked whole: two releases at once take turns, the second sees the first's spend
        pid = int(row["id"]) if row is not None else NO_PROJECT
        tail = checked_tail(store, c, pid)
        refusal = chain_refusal(store, c, source_sha256, pid)
        if refusal:
            raise ProjectError(refusal)
        budget = _budget(c, source_sha256, source_name)
        refused = budget.refusal(epsilon, delta)
        if refused:
            raise PrivacyBudgetError(refused)
        found = [] if fingerprint is None else overlapping(c, source_sha256, fingerprint)
        for sha, name, overlap, by in found:
            charge = Charge(sha, name, overlap, by, _budget(c, sha, name))
            refused = charge.budget.refusal(epsilon, delta, why=charge.words())
            if refused:
                raise PrivacyBudgetError(refused)
        entry = _unreleased_entry(
            tail.number,
            tail.previous,
            row,
            stamp,
            source_name=source_name,
            source_sha256=source_sha256,
            target=f"differentially private release: ε = {epsilon:g}, δ = {delta:g} (spent before measuring)",
            records=int(records),
            user=user,
            made_by=made_by,
            epsilon=epsilon,
            delta=delta,
            charged=tuple(sha for sha, *_ in found) or None,
        )
        values = append_entry(store, c, entry, tail)
        if fingerprint is not None:
            keep_fingerprint(c, entry.id, source_sha256, source_name, fingerprint)
    return entry_of({**values, "id": entry.id, "user": values["username"]}, deleted=False)


__all__ = [
    "Charge",
    "charges",
    "DEFAULT_DELTA",
    "DEFAULT_EPSILON",
    "NO_PROJECT",
    "PrivacyBudget",
    "budget_of",
    "file_budget",
    "project_file",
    "set_budget",
    "spend_privacy",
    "spending_refusal",
]
