"""Steps beyond global recoding: local suppression, microaggregation, top and bottom coding.

Each is a step of the working copy like those of ``anonlib.workflow.steps``
(``apply``, ``describe``, ``to_json`` / ``from_json``), registered there:

- ``LocalSuppressionStep``: quasi-identifier cells blanked (``anonlib.transformations.suppression``)
  until every record has k matching records. A **rule**: ``apply`` recomputes
  the cells on the table it is given, so a new delivery gets its own. A
  suppressed cell is written as ``*`` (as ARX writes suppressed values): it is
  then told apart from a blank that was in the file, which stays a value of its
  own (``missing="category"``) or leaves the record out (``missing="drop"``),
  as everywhere else; the release target reads a ``*`` of a quasi-identifier as
  matching every value (``ReleaseTarget.check(..., wildcard="*")``).
- ``MicroaggregationStep``: numeric columns replaced by their MDAV group's mean
  or median (``anonlib.transformations.microaggregation``), recomputed on the table it is given.
- ``TopBottomStep``: a numeric column's tails replaced by thresholds
  (``anonlib.transformations.coding``); the thresholds are values (a quantile is resolved when
  the step is made), so the step maps each value on its own.

``whole_table`` marks the steps that need all records at once (a data engine
refuses them); ``marks_cells`` those writing ``*`` cells; ``cell_level`` those
whose cost (``anonlib.workflow.cost``) counts the records they change;
``measures(before, after)`` gives a step's own information-loss measures for
its cost (the place for ``anonlib.measures.utility``'s loss once it lands).

Example:
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"age": [30, 30, 30, 30, 31], "sex": ["f"] * 5})
    >>> step = LocalSuppressionStep(("age", "sex"), k=5)
    >>> step.apply(frame)["age"].tolist()
    [30, 30, 30, 30, '*']
    >>> step.describe()
    'Local suppression to k = 5: quasi-identifier cells blanked as * (age, sex)'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..core.dataset import complete_rows
from ..core.errors import ParameterError, join_names, require_columns
from ..core.fields import built, read_number, read_object, read_text, read_texts, read_whole
from ..core.hierarchy import SUPPRESSED, value_key
from ..core.metrics import whole_k
from ..measures.target import ReleaseTarget
from ..measures.wildcard import NOT_IN_PEOPLE, marked_codes
from ..transformations.coding import thresholds, top_bottom_code
from ..transformations.microaggregation import STATISTICS, information_loss, microaggregate
from ..transformations.suppression import suppress_cells


def _with_columns(frame: pd.DataFrame, columns: Mapping[str, Any]) -> pd.DataFrame:
    out = frame.copy(deep=False)
    for column, values in columns.items():
        out[column] = values
    return out


def assessed_beyond(dataset, target, judged) -> tuple[str, ...]:
    """The assessed columns of ``dataset`` (``assessed_columns`` with ``target``'s model
    columns) outside ``judged``, the columns a suppression step judges anyway: what the
    step must also find a value in to judge a record (only with ``missing="drop"``;
    nothing otherwise, so the step's recipe is what it always was)."""
    if dataset.missing != "drop":
        return ()
    return tuple(c for c in dataset.assessed_columns(target.sensitive) if c not in set(judged))


@dataclass(frozen=True)
class LocalSuppressionStep:
    """Blank quasi-identifier cells (as ``*``) until every record has at least ``k``
    matching records, a ``*`` matching any value; recomputed on each table.
    ``importance`` lists the columns blanked last first (empty: sdcMicro's default,
    more distinct values = blanked first). With ``missing="drop"`` only the assessed
    records are judged (those holding a value in every quasi-identifier and in
    ``also_complete``, the dataset's sensitive columns and the target's models'
    columns; ``Dataset.assessed``); ``also_complete`` is written to the recipe only
    when it names a column."""

    kind: ClassVar[str] = "local_suppression"
    whole_table: ClassVar[bool] = True
    marks_cells: ClassVar[bool] = True
    removed: ClassVar[tuple[str, ...]] = ()
    cell_level: ClassVar[bool] = True  # its cost says how many records it changes
    quasi_identifiers: tuple[str, ...]
    k: int
    importance: tuple[str, ...] = ()
    count: str | None = None
    missing: str = "category"
    also_complete: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "quasi_identifiers", tuple(self.quasi_identifiers))
        object.__setattr__(self, "importance", tuple(self.importance))
        object.__setattr__(self, "also_complete", tuple(self.also_complete))
        object.__setattr__(self, "k", whole_k(self.k))
        if not self.quasi_identifiers:
            raise ParameterError("Local suppression needs at least one quasi-identifier.")
        unknown = [c for c in self.importance if c not in self.quasi_identifiers]
        if unknown:
            raise ParameterError(f"The importance order names {join_names(unknown)}, which is not a quasi-identifier.")
        if self.missing not in ("category", "drop"):
            raise ParameterError("Missing values are either kept as a category ('category') or dropped ('drop').")

    @classmethod
    def from_target(cls, target, dataset, importance=()) -> LocalSuppressionStep:
        """The step reaching ``target``'s k on ``dataset``'s quasi-identifiers, judging its
        assessed records; refused in one sentence when the target counts people."""
        if target.in_unit_of(dataset).person is not None:
            raise ParameterError(NOT_IN_PEOPLE)
        also = assessed_beyond(dataset, target, dataset.quasi_identifiers)
        return cls(dataset.quasi_identifiers, target.k, tuple(importance), dataset.count, dataset.missing, also)

    @property
    def columns(self) -> tuple[str, ...]:
        return self.quasi_identifiers

    @property
    def judged_columns(self) -> tuple[str, ...]:
        """The columns a record must hold a value in to be judged (``missing="drop"``)."""
        return tuple(dict.fromkeys([*self.quasi_identifiers, *self.also_complete]))

    def suppressed(self, frame: pd.DataFrame) -> np.ndarray:
        """Per row and quasi-identifier: True where this step blanks the cell. A ``*``
        already there matches any value; a blank of the file is a value of its own
        (``missing="category"``) or its record is not judged (``"drop"``: nor is a
        record missing a value in ``also_complete``)."""
        qis = list(self.quasi_identifiers)
        require_columns(frame, list(self.judged_columns) + ([self.count] if self.count else []))
        codes = marked_codes(frame, qis, SUPPRESSED, count=self.count)
        judged = (
            complete_rows(frame, self.judged_columns) if self.missing == "drop" else np.ones(len(frame), dtype=bool)
        )
        out = np.zeros((len(frame), len(qis)), dtype=bool)
        if judged.any():
            result = suppress_cells(
                codes[judged].reset_index(drop=True),
                qis,
                target=ReleaseTarget(self.k),
                importance=self.importance or None,
                count=self.count,
            )
            out[judged] = result.suppressed.to_numpy()
        return out

    def apply(self, frame: pd.DataFrame) -> pd.DataFrame:
        blanked = self.suppressed(frame)
        changed = {}
        for j, column in enumerate(self.quasi_identifiers):
            if blanked[:, j].any():
                values = frame[column].astype(object).to_numpy(copy=True)
                values[blanked[:, j]] = SUPPRESSED
                changed[column] = pd.Series(values, index=frame.index, dtype=object)
        return _with_columns(frame, changed) if changed else frame

    def describe(self) -> str:
        order = f", blanked last: {join_names(self.importance)}" if self.importance else ""
        return (
            f"Local suppression to k = {self.k}: quasi-identifier cells blanked as {SUPPRESSED} "
            f"({join_names(self.quasi_identifiers)}{order})"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "quasi_identifiers": list(self.quasi_identifiers),
            "k": self.k,
            "importance": list(self.importance),
            "count": self.count,
            "missing": self.missing,
            **({"also_complete": list(self.also_complete)} if self.also_complete else {}),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str = "a step") -> LocalSuppressionStep:
        read_object(
            data,
            where,
            required=("kind", "quasi_identifiers", "k", "importance", "count", "missing"),
            optional=("also_complete",),
        )
        also = read_texts(data, "also_complete", where) if "also_complete" in data else ()
        return built(
            where,
            lambda: cls(
                read_texts(data, "quasi_identifiers", where),
                read_whole(data, "k", where, minimum=1),
                read_texts(data, "importance", where),
                read_text(data, "count", where, optional=True),
                read_text(data, "missing", where, allowed=("category", "drop")),
                also,
            ),
        )


@dataclass(frozen=True)
class MicroaggregationStep:
    """Numeric ``columns`` replaced by their MDAV group's mean or median (groups of at
    least ``k`` records), recomputed on each table."""

    kind: ClassVar[str] = "microaggregation"
    whole_table: ClassVar[bool] = True
    marks_cells: ClassVar[bool] = False
    removed: ClassVar[tuple[str, ...]] = ()
    cell_level: ClassVar[bool] = True  # its cost says how many records it changes
    columns: tuple[str, ...]
    k: int
    count: str | None = None
    statistic: str = "mean"

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", tuple(self.columns))
        object.__setattr__(self, "k", whole_k(self.k))
        if not self.columns:
            raise ParameterError("Microaggregation needs at least one numeric column.")
        if self.statistic not in STATISTICS:
            raise ParameterError(f"The group value is the 'mean' or the 'median'; got {self.statistic!r}.")

    def apply(self, frame: pd.DataFrame) -> pd.DataFrame:
        target = ReleaseTarget(self.k)
        return microaggregate(
            frame, list(self.columns), target=target, count=self.count, statistic=self.statistic
        ).table

    def measures(self, before: pd.DataFrame, after: pd.DataFrame) -> tuple[tuple[str, float], ...]:
        """Information loss SSE/SST of the columns (standardized), as MDAV's paper reports it."""
        sse, sst = information_loss(before, after, list(self.columns), count=self.count)
        return (("information loss (SSE/SST)", sse / sst if sst > 0 else 0.0),)

    def describe(self) -> str:
        return (
            f"Microaggregation (MDAV) of {join_names(self.columns)}: groups of at least {self.k} records "
            f"share their {self.statistic}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "columns": list(self.columns),
            "k": self.k,
            "count": self.count,
            "statistic": self.statistic,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str = "a step") -> MicroaggregationStep:
        read_object(data, where, required=("kind", "columns", "k", "count", "statistic"))
        return built(
            where,
            lambda: cls(
                read_texts(data, "columns", where),
                read_whole(data, "k", where, minimum=1),
                read_text(data, "count", where, optional=True),
                read_text(data, "statistic", where, allowed=STATISTICS),
            ),
        )


@dataclass(frozen=True)
class TopBottomStep:
    """``column``'s values above ``top`` become ``top``, below ``bottom`` become
    ``bottom`` (None = that tail untouched); each value is mapped on its own."""

    kind: ClassVar[str] = "top_bottom"
    whole_table: ClassVar[bool] = False
    marks_cells: ClassVar[bool] = False
    removed: ClassVar[tuple[str, ...]] = ()
    cell_level: ClassVar[bool] = True  # its cost says how many records it changes
    column: str
    top: float | None = None
    bottom: float | None = None

    def __post_init__(self) -> None:
        if self.top is None and self.bottom is None:
            raise ParameterError(f"Top and bottom coding of '{self.column}' needs a top or a bottom threshold.")
        thresholds(pd.DataFrame({self.column: [0.0]}), self.column, top=self.top, bottom=self.bottom)
        for name in ("top", "bottom"):
            value = getattr(self, name)
            object.__setattr__(self, name, None if value is None else float(value))

    @classmethod
    def from_data(
        cls,
        frame: pd.DataFrame,
        column: str,
        *,
        top=None,
        bottom=None,
        top_quantile=None,
        bottom_quantile=None,
        count: str | None = None,
    ) -> TopBottomStep:
        """The step with quantile thresholds resolved to values on ``frame``."""
        top, bottom = thresholds(
            frame,
            column,
            top=top,
            bottom=bottom,
            top_quantile=top_quantile,
            bottom_quantile=bottom_quantile,
            count=count,
        )
        return cls(column, top, bottom)

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)

    def apply(self, frame: pd.DataFrame) -> pd.DataFrame:
        return top_bottom_code(frame, self.column, top=self.top, bottom=self.bottom).table

    def describe(self) -> str:
        ends = [
            f"top-coded at {value_key(self.top)}" if self.top is not None else "",
            f"bottom-coded at {value_key(self.bottom)}" if self.bottom is not None else "",
        ]
        return f"{self.column} " + " and ".join(e for e in ends if e)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "column": self.column, "top": self.top, "bottom": self.bottom}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str = "a step") -> TopBottomStep:
        read_object(data, where, required=("kind", "column", "top", "bottom"))
        return built(
            where,
            lambda: cls(
                read_text(data, "column", where),
                read_number(data, "top", where, optional=True),
                read_number(data, "bottom", where, optional=True),
            ),
        )
