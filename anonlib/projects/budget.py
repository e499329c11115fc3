"""A project's privacy budget: the total ε (and δ) its private releases may spend, and what
they spent, read from the audit log.

Every private release made under a project (``synthesize --project NAME``, the Release
page's private section) is recorded in the audit log by ``spend_privacy`` *before* OpenDP
reads the records: a release that then fails (a failed write, a failed check, OpenDP's own
refusal) has still spent its budget, so re-running is spending. An entry carries the ε and
δ of the release (a budget given as ρ counts at its ε for its δ). The spent budget is the
sum over the project's entries (basic composition: ε adds up, δ adds up).

``set_budget`` sets a project's total (``projects budget NAME --epsilon E [--delta D]``);
without one, nothing is refused and the spent budget is still recorded. A release that
would pass the total is refused in one sentence saying what is spent and what is left, and
nothing is recorded.

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
    >>> set_budget(store, "survey", epsilon=1.5).sentence()
    'survey: ε = 0 of 1.5 spent (1.5 left) by 0 private releases; δ not capped (0 spent).'
    >>> entry = spend_privacy(store, "survey", epsilon=1.0, delta=0.0, source_name="d.csv", records=4, user="anna")
    >>> spend_privacy(store, "survey", epsilon=1.0, delta=0.0, source_name="d.csv", records=4)
    Traceback (most recent call last):
    ...
    anonlib.core.errors.PrivacyBudgetError: This release would spend ε = 1 of project survey's privacy budget, past its total: ε = 1 of 1.5 is spent and 0.5 is left; choose ε at most 0.5, or raise the total with projects budget survey --epsilon E.
    >>> budget_of(store, "survey").epsilon_spent
    1.0
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, func, select, update

from ..core.errors import PrivacyBudgetError, ProjectError
from .audit import COMMAND_LINE, append_entry, checked_tail, current_user, entry_of
from .records import AuditEntry, ProjectRef, now
from .schema import AUDIT, PROJECTS
from .store import ProjectStore

TOLERANCE = 1e-9  # relative: 1 + 0.5 fits a total of 1.5 whatever the floating-point sum
PENDING = ""  # released_sha256 of a spend: recorded before anything is released


@dataclass(frozen=True)
class PrivacyBudget:
    """A project's privacy budget: its totals (None: not set / not capped) and what its private
    releases spent."""

    project: str
    epsilon_total: float | None
    delta_total: float | None
    epsilon_spent: float
    delta_spent: float
    releases: int

    @property
    def epsilon_left(self) -> float | None:
        return None if self.epsilon_total is None else max(self.epsilon_total - self.epsilon_spent, 0.0)

    @property
    def delta_left(self) -> float | None:
        return None if self.delta_total is None else max(self.delta_total - self.delta_spent, 0.0)

    def sentence(self) -> str:
        """The budget in words (spent / total)."""
        if self.epsilon_total is None:
            eps = f"ε = {self.epsilon_spent:g} spent, no total set"
        else:
            eps = f"ε = {self.epsilon_spent:g} of {self.epsilon_total:g} spent ({self.epsilon_left:g} left)"
        dlt = (
            f"δ not capped ({self.delta_spent:g} spent)"
            if self.delta_total is None
            else f"δ = {self.delta_spent:g} of {self.delta_total:g} spent"
        )
        return f"{self.project}: {eps} by {self.releases} private release{'s' if self.releases != 1 else ''}; {dlt}."

    def to_json(self) -> dict:
        return {
            "project": self.project,
            "epsilon_total": self.epsilon_total,
            "delta_total": self.delta_total,
            "epsilon_spent": self.epsilon_spent,
            "delta_spent": self.delta_spent,
            "epsilon_left": self.epsilon_left,
            "delta_left": self.delta_left,
            "private_releases": self.releases,
        }


def _budget(c: Connection, row) -> PrivacyBudget:
    a = AUDIT
    spent = c.execute(
        select(
            func.count(a.c.epsilon), func.coalesce(func.sum(a.c.epsilon), 0.0), func.coalesce(func.sum(a.c.delta), 0.0)
        )
        .where(a.c.project_id == int(row["id"]))
        .where(a.c.epsilon.is_not(None))
    ).first()
    return PrivacyBudget(
        row["name"],
        None if row["budget_epsilon"] is None else float(row["budget_epsilon"]),
        None if row["budget_delta"] is None else float(row["budget_delta"]),
        float(spent[1]),
        float(spent[2]),
        int(spent[0]),
    )


def budget_of(store: ProjectStore, project: int | str | ProjectRef) -> PrivacyBudget:
    """The project's privacy budget and what its private releases spent."""
    with store._transaction() as c:
        return _budget(c, store._row(c, project))


def set_budget(
    store: ProjectStore, project: int | str | ProjectRef, *, epsilon: float, delta: float | None = None
) -> PrivacyBudget:
    """Set the project's total privacy budget: ε (positive) and, optionally, δ (None: not capped).
    A total below what is already spent is accepted: every further release is then refused."""
    epsilon = float(epsilon)
    if not epsilon > 0 or epsilon != epsilon or epsilon == float("inf"):
        raise ProjectError(f"A privacy budget's ε must be a positive number; got {epsilon:g}.")
    if delta is not None and not 0 <= float(delta) < 1:
        raise ProjectError(f"A privacy budget's δ must be 0 or a small probability; got {float(delta):g}.")
    with store._transaction() as c:
        row = store._row(c, project)
        c.execute(
            update(PROJECTS)
            .where(PROJECTS.c.id == int(row["id"]))
            .values(budget_epsilon=epsilon, budget_delta=None if delta is None else float(delta))
        )
        row = store._row(c, int(row["id"]))
        return _budget(c, row)


def spend_privacy(
    store: ProjectStore,
    project: int | str | ProjectRef,
    *,
    epsilon: float,
    delta: float,
    source_name: str,
    source_sha256: str | None = None,
    records: int = 0,
    made_by: str = COMMAND_LINE,
    user: str | None = None,
) -> AuditEntry:
    """Record a private release's ε and δ in the project's audit log, before it measures; a
    ``PrivacyBudgetError`` sentence (nothing recorded) when it would pass the project's total."""
    epsilon, delta = float(epsilon), float(delta)
    stamp = now()
    with store._transaction() as c:
        row = store._row(c, project)
        # the chain locked and its head checked: two releases at once take turns, the second sees the first's spend
        count, last, previous = checked_tail(store, c)
        budget = _budget(c, row)
        name = row["name"]
        if budget.epsilon_total is not None and budget.epsilon_spent + epsilon > budget.epsilon_total * (1 + TOLERANCE):
            raise PrivacyBudgetError(
                f"This release would spend ε = {epsilon:g} of project {name}'s privacy budget, past its total: "
                f"ε = {budget.epsilon_spent:g} of {budget.epsilon_total:g} is spent and {budget.epsilon_left:g} is "
                f"left; choose ε at most {budget.epsilon_left:g}, or raise the total with projects budget {name} "
                "--epsilon E."
            )
        if budget.delta_total is not None and budget.delta_spent + delta > budget.delta_total * (1 + TOLERANCE):
            raise PrivacyBudgetError(
                f"This release would spend δ = {delta:g} of project {name}'s privacy budget, past its total: "
                f"δ = {budget.delta_spent:g} of {budget.delta_total:g} is spent and {budget.delta_left:g} is left; "
                f"choose δ at most {budget.delta_left:g}, or raise the total with projects budget {name} --epsilon E "
                "--delta D."
            )
        entry = AuditEntry(
            id=(last or 0) + 1,
            time=stamp,
            project_id=int(row["id"]),
            project=name,
            source_name=source_name,
            source_sha256=source_sha256,
            target=f"differentially private release: ε = {epsilon:g}, δ = {delta:g} (spent before measuring)",
            met=True,
            records=int(records),
            released=0,
            suppressed=0,
            released_sha256=PENDING,
            package_sha256=None,
            parts={},
            user=user or current_user(),
            made_by=made_by,
            previous=previous,
            entry_sha256="",
            epsilon=epsilon,
            delta=delta,
        )
        values = append_entry(store, c, entry, count)
    return entry_of({**values, "id": entry.id, "user": values["username"]}, deleted=False)


__all__ = ["PrivacyBudget", "budget_of", "set_budget", "spend_privacy"]
