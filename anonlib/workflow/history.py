"""The working copy: the loaded file, the steps applied to it, and undo.

``WorkingCopy`` is an immutable value: ``apply``, ``undo``, ``reset`` and
``with_target`` return a new working copy and never touch the loaded dataset,
so undo and reset cannot lose the file. Each ``AppliedStep`` records what
changed (columns with their distinct values before and after, records
suppressed), from which page, the table after it, and the risk before and
after against the release target (``TargetCheck``, in records).

Example:
    >>> import pandas as pd
    >>> from anonlib.core.dataset import Dataset
    >>> from anonlib.workflow.steps import BandsStep
    >>> ds = Dataset.from_frame("d", pd.DataFrame({"age": [31, 35, 38, 44, 41]}), {"age": "quasi-identifier"})
    >>> copy = WorkingCopy.start(ds, ReleaseTarget(k=2))
    >>> copy.check.failing_records
    5
    >>> copy = copy.apply(BandsStep("age", 10, 1, 31, 44, True), page="Individual privacy")
    >>> copy.current.frame["age"].tolist(), copy.check.failing_records
    (['31-39', '31-39', '31-39', '40-44', '40-44'], 0)
    >>> copy.steps[0].summary()
    'Individual privacy: age in 2 bands of width 10 (31-39 to 40-44); records failing the target 5 -> 0'
    >>> copy.undo().current is ds, copy.reset().current is ds
    (True, True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

import pandas as pd

from ..core.cells import distinct_rows
from ..core.dataset import Dataset, Role
from ..core.equivalence import person_codes
from ..core.errors import AnonlibError, ParameterError
from ..measures.target import ReleaseTarget, TargetCheck
from .cost import StepCost, cost_between
from .recipe import Reading, Recipe, RecipeStep, analysed_persons, analysed_records, recipe_of, suppression_mark
from .release import check_release_columns, pseudonymized_columns, release_table
from .steps import PolicyStep, Step


@dataclass(frozen=True, eq=False)
class AppliedStep:
    """One step in the history: the step, the page it came from, what it changed,
    the risk before and after (None when the target could not be checked, with
    the reason in ``problem``) and the table after it."""

    step: Step
    page: str
    cost: StepCost
    before: TargetCheck | None
    after: TargetCheck | None
    frame: pd.DataFrame = field(repr=False)
    problem: str | None = None

    @property
    def changed_columns(self) -> tuple[str, ...]:
        return self.cost.changed_columns

    @property
    def suppressed_records(self) -> int:
        return self.cost.suppressed_records

    def risk_text(self) -> str:
        """ "records failing the target 3,120 -> 210" (or why it is unknown)."""
        if self.before is None or self.after is None:
            return "risk not checked" + (f" ({self.problem})" if self.problem else "")
        if self.before.by_person and self.after.by_person:
            whole = self.after.target.whole
            return (
                f"{whole} failing the target {self.before.persons_in_failing:,} -> {self.after.persons_in_failing:,} "
                f"(their records {self.before.records_in_failing:,} -> {self.after.records_in_failing:,})"
            )
        return f"records failing the target {self.before.failing_records:,} -> {self.after.failing_records:,}"

    def summary(self) -> str:
        """Page, what the step does, and the risk before and after, on one line."""
        return f"{self.page}: {self.step.describe()}; {self.risk_text()}"


def _checked(
    target: ReleaseTarget,
    dataset: Dataset,
    loaded_records: int,
    steps: Sequence[Step] = (),
    loaded_persons: Callable[[ReleaseTarget], int | None] | None = None,
) -> tuple[TargetCheck | None, str | None]:
    """``target`` in the unit of ``dataset`` after ``steps`` (a person or household column a step
    pseudonymised is released, so its records link: ``ReleaseTarget.in_unit_of``) checked on it;
    ``loaded_persons(unit)`` gives the loaded file's people (households) in that unit."""
    try:
        unit = target.in_unit_of(dataset, released=pseudonymized_columns(steps))
        check = unit.check(
            dataset,
            loaded_records=loaded_records,
            wildcard=suppression_mark(steps),
            loaded_persons=None if loaded_persons is None else loaded_persons(unit),
        )
        return check, None
    except AnonlibError as err:  # no quasi-identifier, a model on a column that is gone: said, not fatal
        return None, str(err)


@dataclass(frozen=True)
class StepRow:
    """One step of the working copy as the Release view and the report list it: what it did,
    what fails the release target before and after it, in ``unit`` (records; people, or
    households, with a record failing it: ``failing_in_unit``; None when the target could not
    be checked), the records it suppressed and its cost in words."""

    number: int
    page: str
    description: str
    failing_before: int | None
    failing_after: int | None
    suppressed_records: int
    cost: tuple[str, ...]
    unit: str = "records"


def failing_in_unit(check: TargetCheck | None) -> int | None:
    """What fails ``check``'s target in its unit: the people (households) with a failing record, else
    the records in failing classes (None: not checked)."""
    if check is None:
        return None
    return check.persons_in_failing if check.by_person else check.failing_records


@dataclass(frozen=True, eq=False)
class WorkingCopy:
    """The loaded dataset (never changed), the release target and the applied steps."""

    loaded: Dataset
    target: ReleaseTarget = field(default_factory=ReleaseTarget)
    steps: tuple[AppliedStep, ...] = ()
    reading: Reading | None = None
    loaded_check: TargetCheck | None = None
    loaded_problem: str | None = None

    @classmethod
    def start(
        cls, loaded: Dataset, target: ReleaseTarget | None = None, *, reading: Reading | None = None
    ) -> WorkingCopy:
        """A working copy of ``loaded`` with no step yet."""
        target = target or ReleaseTarget()
        check, problem = _checked(
            target,
            loaded,
            analysed_records(loaded, target.sensitive),
            loaded_persons=lambda unit: analysed_persons(loaded, target.sensitive, unit),
        )
        return cls(loaded, target, (), reading, check, problem)

    @cached_property
    def loaded_records(self) -> int:
        """Records of the loaded file that are assessed (the base of the suppressed share)."""
        return analysed_records(self.loaded, self.target.sensitive)

    @cached_property
    def _loaded_owners(self) -> dict[str, int | None]:
        return {}

    def loaded_persons(self, unit: ReleaseTarget | None = None) -> int | None:
        """People of the loaded file that are assessed (with a person column; else None), or
        households when ``unit`` (default: the release target) counts them; kept once counted."""
        unit = unit or self.release_target
        key = unit.unit
        if key not in self._loaded_owners:
            self._loaded_owners[key] = analysed_persons(self.loaded, self.target.sensitive, unit)
        return self._loaded_owners[key]

    @property
    def release_target(self) -> ReleaseTarget:
        """The target in the unit of the release: a person or household column a step
        pseudonymised is released, so its records link (histories, households)."""
        return self.target.in_unit_of(self.current, released=pseudonymized_columns(a.step for a in self.steps))

    @property
    def left_out_records(self) -> int:
        """Records of the loaded file left out for a missing value (never judged or released)."""
        return self.loaded.n_records - self.loaded_records

    @cached_property
    def base(self) -> Dataset:
        """Where the steps start: the loaded dataset's assessed records (all of them unless
        missing values are dropped; ``Dataset.assessed_only``), so a record left out for a
        missing value is never judged or released, whatever a step writes in its blank."""
        return self.loaded.assessed_only(self.target.sensitive)

    @cached_property
    def current(self) -> Dataset:
        """The dataset every page works on: the loaded roles over the latest table (the
        loaded file itself before any step, each page leaving out the records missing
        what it analyses; after a step, the assessed records the steps started from)."""
        if not self.steps:
            return self.loaded
        return Dataset(
            name=self.loaded.name,
            frame=self.steps[-1].frame,
            roles=self.loaded.roles,
            missing=self.loaded.missing,
            notes=self.loaded.notes,
        ).validated()

    @property
    def check(self) -> TargetCheck | None:
        """The current table against the target (None when it cannot be checked: see ``problem``)."""
        return self.steps[-1].after if self.steps else self.loaded_check

    @property
    def problem(self) -> str | None:
        """Why the target cannot be checked, if it cannot."""
        return self.steps[-1].problem if self.steps else self.loaded_problem

    def apply(self, step: Step, page: str) -> WorkingCopy:
        """A new working copy with ``step`` applied to the current table, from ``page``."""
        before = self.current if self.steps else self.base
        frame = step.apply(before.frame)
        if frame is before.frame:
            frame = frame.copy(deep=False)  # every step gets its own table object
        after = Dataset(
            name=self.loaded.name,
            frame=frame,
            roles=self.loaded.roles,
            missing=self.loaded.missing,
            notes=self.loaded.notes,
        ).validated()
        check, problem = _checked(
            self.target, after, self.loaded_records, [a.step for a in self.steps] + [step], self.loaded_persons
        )
        applied = AppliedStep(step, str(page), cost_between(before, frame, step), self.check, check, frame, problem)
        return replace(self, steps=self.steps + (applied,))

    def step_rows(self) -> tuple[StepRow, ...]:
        """The steps as the Release view and the report list them (``StepRow``), numbered from 1."""
        unit = self.release_target.whole
        return tuple(
            StepRow(
                i,
                a.page,
                a.step.describe(),
                failing_in_unit(a.before),
                failing_in_unit(a.after),
                a.suppressed_records,
                a.cost.sentences(),
                unit,
            )
            for i, a in enumerate(self.steps, start=1)
        )

    def checks_after(
        self, steps: Sequence[Step], progress: Callable[[int, int], None] | None = None
    ) -> tuple[TargetCheck | None, ...]:
        """The target's check after each of ``steps`` alone (each applied to the current table):
        the check ``apply(step, ...).check`` gives, counted on the table's distinct rows of the
        columns it reads (quasi-identifiers, the models' sensitive attributes, the person),
        weighted by their records, so a page can judge dozens of candidates at the cost of the
        distinct rows. A step reading another column is applied to the whole table instead.
        ``progress(done, total)`` is called after each step judged.

        >>> import pandas as pd
        >>> from anonlib.core.hierarchy import flat_hierarchy
        >>> from .steps import GeneralizationStep
        >>> ds = Dataset.from_frame("d", pd.DataFrame({"a": ["x", "x", "y"], "b": [1, 2, 3]}),
        ...                         {"a": "quasi-identifier"})
        >>> step = GeneralizationStep((("a", 1),), (("a", flat_hierarchy(["x", "y"])),))
        >>> copy = WorkingCopy.start(ds, ReleaseTarget(k=3))
        >>> copy.checks_after([step])[0] == copy.apply(step, "Test").check
        True
        """
        before = self.current if self.steps else self.base
        owners, count = before.owners, before.count
        read = list(dict.fromkeys([*before.quasi_identifiers, *self.target.sensitive, *owners]))
        earlier = [a.step for a in self.steps]
        report = progress or (lambda done, total: None)
        if not read or any(not set(step.columns) <= set(read) for step in steps):
            whole = []
            for step in steps:
                whole.append(self.apply(step, "check").check)
                report(len(whole), len(steps))
            return tuple(whole)
        weight = "records" if "records" not in read else "_records"
        weights = before.frame[count] if count else 1
        columns = before.frame[read]
        for owner in owners:  # a code per person (the check counts people, never reads who they are): cheaper
            try:
                columns = columns.assign(**{owner: person_codes(columns[owner], owner)[0]})
            except AnonlibError:  # a blank person: the check says so
                pass
        compact = distinct_rows(columns, read, weights, weight)
        for column in before.quasi_identifiers:  # text and numbers held as categories: each step and check
            dtype = compact[column].dtype  # reads their codes instead of hashing the values again (the same
            if isinstance(dtype, pd.StringDtype) or (  # labels in the same order)
                pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
            ):
                compact[column] = pd.Categorical(compact[column])
        roles = {**{c: before.roles[c] for c in read}, weight: Role.COUNT}
        checks = []
        for step in steps:
            applied = step.apply_counted(compact) if isinstance(step, PolicyStep) else step.apply(compact)
            after = Dataset(name=self.loaded.name, frame=applied, roles=roles, missing=self.loaded.missing)
            check, _ = _checked(
                self.target, after.validated(), self.loaded_records, [*earlier, step], self.loaded_persons
            )
            checks.append(check)
            report(len(checks), len(steps))
        return tuple(checks)

    def undo(self) -> WorkingCopy:
        """The working copy without its last step; a sentence when there is none."""
        if not self.steps:
            raise ParameterError("There is no step to undo; the working copy is the loaded file.")
        return replace(self, steps=self.steps[:-1])

    def reset(self) -> WorkingCopy:
        """Back to the loaded file: every step dropped, the target kept."""
        return replace(self, steps=())

    def with_target(self, target: ReleaseTarget) -> WorkingCopy:
        """The same steps judged against another target (the risk before and after each is recomputed)."""
        if target == self.target:
            return self
        if (
            self.steps
            and self.loaded.missing == "drop"
            and self.loaded.assessed_columns(target.sensitive) != self.loaded.assessed_columns(self.target.sensitive)
        ):
            try:  # other records are assessed: the steps start again from them
                return self.reset().with_target(target).replayed(self.steps)
            except AnonlibError:  # a step made for the former records does not fit the new ones (bands' range):
                pass  # its tables stay; the check and the release still judge only the assessed records
        loaded_records = analysed_records(self.loaded, target.sensitive)

        def loaded_persons(unit: ReleaseTarget) -> int | None:
            return analysed_persons(self.loaded, target.sensitive, unit)

        check, problem = _checked(target, self.loaded, loaded_records, loaded_persons=loaded_persons)
        steps = []
        for applied in self.steps:
            current = Dataset(
                name=self.loaded.name, frame=applied.frame, roles=self.loaded.roles, missing=self.loaded.missing
            ).validated()
            after, after_problem = _checked(
                target, current, loaded_records, [a.step for a in self.steps[: len(steps) + 1]], loaded_persons
            )
            steps.append(
                replace(applied, before=steps[-1].after if steps else check, after=after, problem=after_problem)
            )
        return WorkingCopy(self.loaded, target, tuple(steps), self.reading, check, problem)

    def rebase(self, loaded: Dataset, reading: Reading | None = None) -> WorkingCopy:
        """The same steps replayed on another loaded dataset (e.g. the same file with
        other roles or types); raises the step's sentence when one no longer fits."""
        copy = WorkingCopy.start(loaded, self.target, reading=reading if reading is not None else self.reading)
        return copy.replayed(self.steps)

    def replayed(self, steps: Sequence[AppliedStep]) -> WorkingCopy:
        """This working copy with ``steps`` applied again in order (each recomputed)."""
        copy = self
        for applied in steps:
            copy = copy.apply(applied.step, applied.page)
        return copy

    @classmethod
    def from_recipe(cls, recipe: Recipe, loaded: Dataset, reading: Reading | None = None) -> WorkingCopy:
        """The working copy a recipe describes, on ``loaded`` (read by
        ``anonlib.workflow.recipe.read_for_recipe``): its target and its steps in order."""
        copy = cls.start(loaded, recipe.target, reading=reading)
        for s in recipe.steps:
            copy = copy.apply(s.step, s.page)
        return copy

    @property
    def recipe_steps(self) -> tuple[RecipeStep, ...]:
        return tuple(RecipeStep(a.step, a.page) for a in self.steps)

    def release(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """The released table of the current state (``anonlib.workflow.release.release_table``):
        the records the target is checked on (its models' columns assessed too)."""
        return release_table(self.current, columns, extra=self.target.sensitive, steps=[a.step for a in self.steps])

    def column_account(self, columns: Sequence[str] | None = None):
        """Which columns the release holds and which it leaves out, with their roles and why
        (``anonlib.workflow.release.column_account``)."""
        from .release import column_account, default_release_columns

        steps = [a.step for a in self.steps]
        chosen = default_release_columns(self.current, steps) if columns is None else columns
        released = check_release_columns(self.current, chosen, steps)
        return column_account(self.current, released, steps)

    def recipe(self, columns: Sequence[str] | None = None) -> Recipe:
        """The recipe re-applying this working copy to the loaded file (or a new delivery)."""
        return recipe_of(self.loaded, self.target, self.recipe_steps, self.current, columns, self.reading)
