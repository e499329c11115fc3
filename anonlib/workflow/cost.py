"""What a step costs on the data, said before it is applied.

``step_cost(step, dataset)`` applies the step to a copy and compares: per
changed column the number of distinct values before and after, the records
suppressed, and whether a quasi-identifier is effectively removed (it becomes
one value, such as ``*``). Pages show ``sentences()`` next to a suggestion and
never make a suggestion that ``removes_quasi_identifier`` the default
(``default_choice``).

Example:
    >>> import pandas as pd
    >>> from anonlib.core.dataset import Dataset
    >>> from anonlib.workflow.steps import BandsStep
    >>> ds = Dataset.from_frame("d", pd.DataFrame({"age": [30, 31, 45, 52]}), {"age": "quasi-identifier"})
    >>> step_cost(BandsStep("age", 10, 0, 30, 52, True), ds).sentences()
    ('age: 4 values become 3.',)
    >>> cost = step_cost(BandsStep("age", 30, 0, 30, 52, True), ds)
    >>> cost.sentences(), cost.removes_quasi_identifier
    (('age becomes one value (30-52): the column is effectively removed.',), True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.cells import cell_groups, records_in
from ..core.dataset import Dataset
from ..core.equivalence import record_counts
from ..core.hierarchy import SUPPRESSED


@dataclass(frozen=True)
class ColumnChange:
    """One column a step changes: distinct values (missing not counted) before and
    after, the one value left when only one is (``single``), and the records whose value
    in it changed (``records``; a number and its text, 64 and "64", are one value)."""

    column: str
    before: int
    after: int
    single: str | None = None
    records: int = 0

    @property
    def removed(self) -> bool:
        """The column had several values and now has at most one: it no longer tells anything."""
        return self.before > 1 and self.after <= 1

    def sentence(self) -> str:
        if self.removed:
            if self.single and set(self.single) == {SUPPRESSED}:  # "*", "*****" (masked codes)
                return f"{self.column} is replaced by {self.single}: the column is effectively removed."
            shown = f" ({self.single})" if self.single is not None else ""
            return f"{self.column} becomes one value{shown}: the column is effectively removed."
        if self.before == self.after:
            return f"{self.column}: values relabelled ({self.after:,} values, {self.records:,} records)."
        return f"{self.column}: {self.before:,} values become {self.after:,}."


@dataclass(frozen=True)
class StepCost:
    """What applying a step changes on one table."""

    changes: tuple[ColumnChange, ...]
    records_before: int
    records_after: int
    quasi_identifiers: tuple[str, ...]
    records_changed: int = 0  # records with at least one cell changed (rows kept)
    cells_changed: int = 0  # of the records' cells (a row with count 3 counts 3 per cell)
    measures: tuple[tuple[str, float], ...] = ()  # named information-loss measures of the step
    cell_level: bool = False  # the step changes single cells: say how many records it touches

    @property
    def suppressed_records(self) -> int:
        return self.records_before - self.records_after

    @property
    def removed(self) -> tuple[str, ...]:
        """Columns the step effectively removes (one value left)."""
        return tuple(c.column for c in self.changes if c.removed)

    @property
    def removes_quasi_identifier(self) -> bool:
        """True when a quasi-identifier is effectively removed: never the default suggestion."""
        return any(c in self.quasi_identifiers for c in self.removed)

    @property
    def changed_columns(self) -> tuple[str, ...]:
        return tuple(c.column for c in self.changes)

    def sentences(self) -> tuple[str, ...]:
        """The cost in plain words, one sentence per changed column and for suppression."""
        out = [c.sentence() for c in self.changes]
        if self.cell_level and self.records_changed:
            share = self.records_changed / self.records_after if self.records_after else 0.0
            out.append(
                f"{self.records_changed:,} records changed ({100 * share:.1f}% of {self.records_after:,}), "
                f"{self.cells_changed:,} cells."
            )
        out.extend(f"{name}: {value:.3g}." for name, value in self.measures)
        if self.suppressed_records:
            share = self.suppressed_records / self.records_before if self.records_before else 0.0
            out.append(
                f"{self.suppressed_records:,} records suppressed ({100 * share:.1f}% of {self.records_before:,})."
            )
        return tuple(out) or ("Nothing changes on this data.",)


def _distinct(grouped: tuple[np.ndarray, list, np.ndarray]) -> tuple[int, str | None]:
    """Distinct values present (``cell_groups`` of a column) and the only one when there is one."""
    _, values, missing = grouped
    present = [v for v, m in zip(values, missing) if not m]
    return len(present), (str(present[0]) if len(present) == 1 else None)


def _changed_cells(old: pd.Series, new: pd.Series, grouped: tuple | None = None) -> np.ndarray:
    """Per row: the cell differs (missing equals missing; 30 and 30.0 are equal, and so are a
    number and the text it is written as: 64 and "64", 30.0 and "30"; "064" is another value).
    Judged once per distinct pair of cells (``grouped``: both columns' ``cell_groups``), so a
    column of 10^5 records costs a few thousand comparisons.

    >>> _changed_cells(pd.Series([64, 91, 30, 64]), pd.Series(["64", "90 or older", "030", "64"])).tolist()
    [False, True, True, False]
    """
    (before, _, _), (after, _, _) = grouped if grouped is not None else (cell_groups(old), cell_groups(new))
    if not len(before):
        return np.zeros(0, dtype=bool)
    pairs = before.astype(np.int64) * (int(after.max()) + 1) + after
    _, first, inverse = np.unique(pairs, return_index=True, return_inverse=True)
    return _changed_rows(old.iloc[first], new.iloc[first])[inverse.reshape(-1)]


def _changed_rows(old: pd.Series, new: pd.Series) -> np.ndarray:
    """``_changed_cells`` judged row by row."""
    a, b = old.astype(object).to_numpy(), new.astype(object).to_numpy()
    blank_a, blank_b = pd.isna(a), pd.isna(b)
    same = blank_a & blank_b
    both = ~blank_a & ~blank_b
    same[both] = np.asarray(a[both] == b[both], dtype=bool)
    numbers = pd.api.types.is_numeric_dtype(old) and not pd.api.types.is_bool_dtype(old)
    if numbers and not pd.api.types.is_numeric_dtype(new):  # numbers written as text (Safe Harbor's columns)
        rest = np.flatnonzero(both & ~same)
        if rest.size:
            same[rest] = [_number_text(x) == str(y).strip() for x, y in zip(a[rest], b[rest])]
    return ~same


def _number_text(value) -> str:
    """A number as text, a whole number without ``.0`` (as Safe Harbor writes it)."""
    number = float(value)
    return str(int(number)) if np.isfinite(number) and number.is_integer() else str(value)


def cost_between(before: Dataset, after: pd.DataFrame, step=None) -> StepCost:
    """The cost of turning ``before``'s table into ``after`` (same columns; fewer
    rows only by suppression) by ``step`` (its own ``measures`` and whether it
    changes single cells, when given)."""
    changes = []
    changed = np.zeros(len(before.frame), dtype=np.int64)
    weights = record_counts(before.frame, before.count) if before.count else None
    weights = np.ones(len(before.frame), dtype=np.int64) if weights is None else np.asarray(weights)
    if len(after) == len(before.frame):
        for column in before.frame.columns:
            if column not in after.columns or column == before.count:
                continue
            old, new = before.frame[column], after[column]
            if old is new or old.equals(new):
                continue
            grouped = (cell_groups(old), cell_groups(new))  # each column's distinct cells, read once
            cells = _changed_cells(old, new, grouped)
            if not cells.any():  # the same values, only written otherwise (64 as "64"): nothing changes
                continue
            n_before, _ = _distinct(grouped[0])
            n_after, single = _distinct(grouped[1])
            changes.append(ColumnChange(str(column), n_before, n_after, single, int(weights[cells].sum())))
            changed += cells
    measures = getattr(step, "measures", None)
    return StepCost(
        changes=tuple(changes),
        records_before=records_in(before.frame, before.count),
        records_after=records_in(after, before.count),
        quasi_identifiers=before.quasi_identifiers,
        records_changed=int(weights[changed > 0].sum()) if len(changed) == len(weights) else 0,
        cells_changed=int(weights @ changed) if len(changed) == len(weights) else 0,
        measures=tuple(measures(before.frame, after))
        if measures is not None and len(after) == len(before.frame)
        else (),
        cell_level=bool(getattr(step, "cell_level", False)),
    )


def step_cost(step, dataset: Dataset) -> StepCost:
    """What ``step`` would change on ``dataset``'s table (the dataset is not changed), on
    the records a step starts from: with missing values dropped, the assessed ones
    (``Dataset.assessed_only()``; the pages offer models on sensitive columns only, so
    these are the working copy's), as ``WorkingCopy.apply`` measures it."""
    dataset = dataset.assessed_only()
    return cost_between(dataset, step.apply(dataset.frame), step)


def preselect(
    removes_quasi_identifier: Sequence[bool],
    *,
    meets: Sequence[bool] | None = None,
    preferred: Sequence[bool] | None = None,
    losses: Sequence[float] | None = None,
) -> int | None:
    """The one rule by which a page preselects a suggestion: among those that remove no
    quasi-identifier and (where ``meets`` says) meet the release target, the ``preferred`` ones
    first (e.g. policies better than HIPAA Safe Harbor on both risk and loss), then the least
    loss (``losses``; else the first in the order given). None when none qualifies: then
    nothing is preselected and the page says why.

    >>> preselect([True, False, False], losses=[0.1, 0.5, 0.3])
    2
    >>> preselect([False, False], meets=[True, True], preferred=[False, True], losses=[0.1, 0.5])
    1
    >>> preselect([True], meets=[True]) is None
    True
    """
    candidates = [
        i for i, removes in enumerate(removes_quasi_identifier) if not removes and (meets is None or meets[i])
    ]
    if preferred is not None and any(preferred[i] for i in candidates):
        candidates = [i for i in candidates if preferred[i]]
    if not candidates:
        return None
    return min(candidates, key=lambda i: (losses[i] if losses is not None else 0.0, i))


def default_choice(costs: Sequence[StepCost]) -> int | None:
    """``preselect`` for suggestions listed least damaging first, by what each step costs: the
    first that removes no quasi-identifier, or None when every one does.

    >>> keep = StepCost((ColumnChange("age", 9, 3),), 10, 10, ("age",))
    >>> drop = StepCost((ColumnChange("age", 9, 1, "*"),), 10, 10, ("age",))
    >>> default_choice([drop, keep]), default_choice([drop])
    (1, None)
    """
    return preselect([cost.removes_quasi_identifier for cost in costs])
