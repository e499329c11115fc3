"""Steps for health data as it comes: keyed pseudonyms, per-person date shifts, Safe Harbor.

Each is a step of the working copy like those of ``anonlib.workflow.steps``
(``apply``, ``describe``, ``to_json`` / ``from_json``), registered there:

- ``PseudonymizeStep``: an identifier (or the person column) replaced by its keyed
  pseudonym (``anonlib.transformations.pseudonyms``), and so released: the one way
  an identifier or the person column leaves the organisation (``releases``);
- ``ShiftDatesStep``: date columns moved by one offset per person, drawn from the
  keyed hash of the person column's value, within ±``days``; intervals within a
  person are kept exactly;
- ``CapRecordsStep``: at most N records per person released (``anonlib.transformations.capping``):
  the earliest by a time column, or drawn under the project key; the records it drops are counted;
- ``SafeHarborStep``: HIPAA Safe Harbor's changes (``anonlib.transformations.hipaa``),
  planned when the step is made and listed in its description; the columns it
  removes are blanked and never released (``withholds``).

The two keyed steps hold the project key only in memory (``key``: never written by
``to_json``, never shown by ``repr``, not compared); the recipe records the key's id
(``anonlib.workflow.keys.key_id``). A step read from a recipe has no key until
``with_key(key)`` gives it one, which refuses a key of another id in one sentence;
applying a keyed step without its key is a sentence too. A pseudonym is made value by value,
so a data engine maps a column's distinct values to theirs; the others need all records in
memory (``whole_table``): a data engine refuses them.

Example:
    >>> import pandas as pd
    >>> key = bytes(32)
    >>> step = PseudonymizeStep.made("mrn", key)
    >>> step.apply(pd.DataFrame({"mrn": ["00123"]}))["mrn"].tolist()
    ['68ae7b771d4b2c80']
    >>> step.to_json()["key_id"], "key" in step.to_json()
    ('66687aad', False)
    >>> step_back = PseudonymizeStep.from_json(step.to_json())
    >>> step_back == step, step_back.key is None
    (True, True)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any, ClassVar

import pandas as pd

from ..core.errors import ColumnError, ParameterError, join_names, require_columns
from ..core.fields import built, damaged, read_list, read_object, read_text, read_texts, read_whole
from ..transformations.capping import cap_records, check_cap, check_order
from ..transformations.hipaa import (
    ACTIONS,
    CENSUS,
    SafeHarborChange,
    apply_safe_harbor,
    safe_harbor_plan,
    zip3_areas,
)
from ..transformations.pseudonyms import (
    DEFAULT_LENGTH,
    DEFAULT_SHIFT_DAYS,
    check_days,
    check_length,
    date_offsets,
    pseudonyms,
    shift_dates,
)
from .cost import StepCost
from .keys import key_id, require_key


def _checked_id(value: str) -> str:
    if not (isinstance(value, str) and len(value) == 8 and all(c in "0123456789abcdef" for c in value)):
        raise ParameterError(f"A key id is 8 lower-case hexadecimal characters; got {value!r}.")
    return value


def _with_columns(frame: pd.DataFrame, columns: Mapping[str, Any]) -> pd.DataFrame:
    out = frame.copy(deep=False)
    for column, values in columns.items():
        out[column] = values
    return out


@dataclass(frozen=True)
class PseudonymizeStep:
    """``column`` replaced by ``prefix`` + the first ``length`` hex characters of the
    HMAC-SHA-256 of each value under the project key (id ``key_id``); missing stays
    missing; two values with one pseudonym are refused."""

    kind: ClassVar[str] = "pseudonymize"
    whole_table: ClassVar[bool] = False  # value by value: an engine maps the column's distinct values
    marks_cells: ClassVar[bool] = False
    removed: ClassVar[tuple[str, ...]] = ()
    cell_level: ClassVar[bool] = True
    withholds: ClassVar[tuple[str, ...]] = ()
    column: str
    key_id: str
    length: int = DEFAULT_LENGTH
    prefix: str = ""
    key: bytes | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "key_id", _checked_id(self.key_id))
        object.__setattr__(self, "length", check_length(self.length))
        if not isinstance(self.prefix, str) or len(self.prefix) > 32:
            raise ParameterError("A pseudonym prefix is text of at most 32 characters.")
        if self.key is not None:
            require_key(self.key, self.key_id, f"The pseudonym step of {self.column}")

    @classmethod
    def made(cls, column: str, key: bytes, *, length: int = DEFAULT_LENGTH, prefix: str = "") -> PseudonymizeStep:
        """The step pseudonymising ``column`` under ``key`` (its id recorded, the key held)."""
        return cls(column, key_id(key), length, prefix, bytes(key))

    def with_key(self, key: bytes | None) -> PseudonymizeStep:
        """The same step holding ``key``; a sentence when it is another key."""
        return replace(self, key=require_key(key, self.key_id, f"The pseudonym step of {self.column}"))

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)

    @property
    def releases(self) -> tuple[str, ...]:
        """The column is released as its pseudonym (even an identifier or the person column)."""
        return (self.column,)

    def apply(self, frame: pd.DataFrame) -> pd.DataFrame:
        require_columns(frame, [self.column])
        key = require_key(self.key, self.key_id, f"The pseudonym step of {self.column}")
        values = pseudonyms(frame[self.column], key, length=self.length, prefix=self.prefix, column=f"'{self.column}'")
        return _with_columns(frame, {self.column: values})

    def describe(self) -> str:
        prefix = f", prefix '{self.prefix}'" if self.prefix else ""
        return (
            f"{self.column} released as a keyed pseudonym (HMAC-SHA-256, {self.length} hex characters{prefix}, "
            f"key id {self.key_id})"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "column": self.column,
            "key_id": self.key_id,
            "length": self.length,
            "prefix": self.prefix,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str = "a step") -> PseudonymizeStep:
        read_object(data, where, required=("kind", "column", "key_id", "length", "prefix"))
        return built(
            where,
            lambda: cls(
                read_text(data, "column", where),
                read_text(data, "key_id", where),
                read_whole(data, "length", where, minimum=1),
                read_text(data, "prefix", where),
            ),
        )


@dataclass(frozen=True)
class ShiftDatesStep:
    """Every date of ``columns`` moved by its person's offset (from the keyed hash of the
    ``person`` column's value, uniform within ±``days``); a person's intervals are kept."""

    kind: ClassVar[str] = "shift_dates"
    whole_table: ClassVar[bool] = True
    marks_cells: ClassVar[bool] = False
    removed: ClassVar[tuple[str, ...]] = ()
    cell_level: ClassVar[bool] = True
    releases: ClassVar[tuple[str, ...]] = ()
    withholds: ClassVar[tuple[str, ...]] = ()
    dates: tuple[str, ...]
    person: str
    key_id: str
    days: int = DEFAULT_SHIFT_DAYS
    key: bytes | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "dates", tuple(self.dates))
        object.__setattr__(self, "key_id", _checked_id(self.key_id))
        object.__setattr__(self, "days", check_days(self.days))
        if not self.dates:
            raise ParameterError("Choose at least one date column to shift.")
        if not self.person:
            raise ParameterError(
                "Shifting dates needs a person column: every date of a person moves by the same offset, "
                "so the person must be known (mark the column that says whose record it is)."
            )
        if self.person in self.dates:
            raise ParameterError(f"'{self.person}' is the person column; it cannot also be a date column to shift.")
        if self.key is not None:
            require_key(self.key, self.key_id, "The date-shift step")

    @classmethod
    def made(
        cls, dates: Sequence[str], person: str | None, key: bytes, *, days: int = DEFAULT_SHIFT_DAYS
    ) -> ShiftDatesStep:
        """The step shifting ``dates`` per ``person`` under ``key``."""
        if not person:
            raise ParameterError(
                "Shifting dates needs a person column: every date of a person moves by the same offset, "
                "so the person must be known (mark the column that says whose record it is)."
            )
        return cls(tuple(dates), person, key_id(key), days, bytes(key))

    def with_key(self, key: bytes | None) -> ShiftDatesStep:
        return replace(self, key=require_key(key, self.key_id, "The date-shift step"))

    @property
    def columns(self) -> tuple[str, ...]:
        return (*self.dates, self.person)

    def offsets(self, frame: pd.DataFrame):
        """Each row's offset in days (its person's)."""
        require_columns(frame, [self.person])
        key = require_key(self.key, self.key_id, "The date-shift step")
        return date_offsets(frame[self.person], key, self.days, column=f"'{self.person}'")

    def apply(self, frame: pd.DataFrame) -> pd.DataFrame:
        require_columns(frame, list(self.columns))
        offsets = self.offsets(frame)
        return _with_columns(frame, {c: shift_dates(frame[c], offsets, c) for c in self.dates})

    def describe(self) -> str:
        return (
            f"{join_names(self.dates)} shifted by one offset per person ({self.person}) within ±{self.days} days "
            f"(keyed, key id {self.key_id}): intervals within a person kept"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "dates": list(self.dates),
            "person": self.person,
            "key_id": self.key_id,
            "days": self.days,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str = "a step") -> ShiftDatesStep:
        read_object(data, where, required=("kind", "dates", "person", "key_id", "days"))
        return built(
            where,
            lambda: cls(
                read_texts(data, "dates", where),
                read_text(data, "person", where),
                read_text(data, "key_id", where),
                read_whole(data, "days", where, minimum=1),
            ),
        )


@dataclass(frozen=True)
class SafeHarborStep:
    """HIPAA Safe Harbor's ``changes`` (one per recognised column, listed by
    ``describe``), ages counted to ``reference_year``; the ZIP3 areas under 20,000
    people of the bundled 2010 census (``restricted_zip3``) written 000."""

    kind: ClassVar[str] = "safe_harbor"
    whole_table: ClassVar[bool] = True
    marks_cells: ClassVar[bool] = False
    removed: ClassVar[tuple[str, ...]] = ()
    cell_level: ClassVar[bool] = True
    releases: ClassVar[tuple[str, ...]] = ()
    changes: tuple[SafeHarborChange, ...]
    reference_year: int
    restricted_zip3: tuple[str, ...] = ()
    census: str = CENSUS

    def __post_init__(self) -> None:
        object.__setattr__(self, "changes", tuple(self.changes))
        object.__setattr__(self, "restricted_zip3", tuple(self.restricted_zip3))
        if not self.changes:
            raise ParameterError(
                "Safe Harbor found nothing to change: no column of this table reads like a name, a date, an age, "
                "a ZIP code or another of HIPAA's 18 identifiers."
            )
        if isinstance(self.reference_year, bool) or not 1900 <= int(self.reference_year) <= 2200:
            raise ParameterError(f"The reference year is a year such as 2024; got {self.reference_year!r}.")
        object.__setattr__(self, "reference_year", int(self.reference_year))
        names = [c.column for c in self.changes]
        if len(set(names)) != len(names):
            raise ParameterError("A Safe Harbor step names a column twice.")

    @classmethod
    def planned(
        cls,
        frame: pd.DataFrame,
        *,
        reference_year: int | None = None,
        pseudonymized: Sequence[str] = (),
        leave: Sequence[str] = (),
    ) -> SafeHarborStep:
        """The step of Safe Harbor's plan for ``frame`` (``anonlib.transformations.hipaa.safe_harbor_plan``),
        ages counted to ``reference_year`` (default: this year)."""
        changes = safe_harbor_plan(frame, pseudonymized=pseudonymized, leave=leave)
        year = date.today().year if reference_year is None else reference_year
        zip3 = zip3_areas()[1] if any(c.action == "zip3" for c in changes) else ()
        return cls(changes, year, zip3)

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(c.column for c in self.changes)

    @property
    def withholds(self) -> tuple[str, ...]:
        """Columns removed: blanked and never released."""
        return tuple(c.column for c in self.changes if c.action == "remove")

    def apply(self, frame: pd.DataFrame) -> pd.DataFrame:
        if any(c.action == "zip3" for c in self.changes) and self.restricted_zip3 != zip3_areas()[1]:
            raise ColumnError(
                "This Safe Harbor step lists other small ZIP3 areas than the bundled 2010 census; use the anonlib "
                "version that made it."
            )
        return apply_safe_harbor(frame, self.changes, reference_year=self.reference_year)

    def sentences(self, cost: StepCost | None = None) -> tuple[str, ...]:
        """Every change, one sentence each (listed before the step is applied); with the step's
        ``cost`` on a table (``anonlib.workflow.step_cost``), each says how many records it
        changes there (``changed_records``: the Dataset page and ``safe-harbor`` say the same)."""
        if cost is None:
            return tuple(c.sentence() for c in self.changes)
        counts = self.changed_records(cost)
        return tuple(
            c.sentence() + ("" if c.action == "pseudonym" else f"; {_records(counts[c.column])} changed")
            for c in self.changes
        )

    def changed_records(self, cost: StepCost) -> dict[str, int]:
        """Per column of the plan, the records whose value the step changes (its ``cost`` on a
        table: ages all under 90 are not changed by "ages over 89 written '90 or older'")."""
        changed = {c.column: c.records for c in cost.changes}
        return {c.column: changed.get(c.column, 0) for c in self.changes}

    def describe(self) -> str:
        by_action: dict[str, list[str]] = {}
        for change in self.changes:
            by_action.setdefault(change.action, []).append(change.column)
        words = {
            "remove": "removed",
            "zip3": "to ZIP3 (areas under 20,000 people as 000)",
            "year": "to the year",
            "birth_date": "to the year of birth (90 or older capped)",
            "birth_year": "birth years implying over 89 as '90 or older'",
            "age": "ages over 89 as '90 or older'",
            "pseudonym": "kept as keyed pseudonyms (not Safe Harbor's code unless the key stays with the data holder)",
        }
        parts = [f"{join_names(cols)} {words[action]}" for action, cols in by_action.items()]
        return f"HIPAA Safe Harbor (ages counted to {self.reference_year}): " + "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "reference_year": self.reference_year,
            "census": self.census,
            "restricted_zip3": list(self.restricted_zip3),
            "changes": [c.to_json() for c in self.changes],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str = "a step") -> SafeHarborStep:
        read_object(data, where, required=("kind", "reference_year", "census", "restricted_zip3", "changes"))
        changes = []
        for item in read_list(data, "changes", where):
            read_object(item, f"a change of {where}", required=("column", "action", "letter", "reason"))
            changes.append(
                built(
                    where,
                    lambda item=item: SafeHarborChange(
                        read_text(item, "column", where),
                        read_text(item, "action", where, allowed=tuple(ACTIONS)),
                        read_text(item, "letter", where),
                        read_text(item, "reason", where),
                    ),
                )
            )
        if not changes:
            raise damaged(f"{where} lists no Safe Harbor change.")
        return built(
            where,
            lambda: cls(
                tuple(changes),
                read_whole(data, "reference_year", where, minimum=1),
                read_texts(data, "restricted_zip3", where),
                read_text(data, "census", where),
            ),
        )


@dataclass(frozen=True)
class CapRecordsStep:
    """At most ``records`` records of each ``person`` kept: the first by ``time`` (the earliest; a
    blank time last; without it in the file's order), or, with ``order`` "random", drawn under the
    project key (``key_id``; the key held in memory only). The records dropped leave the release."""

    kind: ClassVar[str] = "cap_records"
    whole_table: ClassVar[bool] = True
    marks_cells: ClassVar[bool] = False
    removed: ClassVar[tuple[str, ...]] = ()
    cell_level: ClassVar[bool] = False
    releases: ClassVar[tuple[str, ...]] = ()
    withholds: ClassVar[tuple[str, ...]] = ()
    person: str
    records: int
    order: str = "first"
    time: str | None = None
    key_id: str | None = None
    key: bytes | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "records", check_cap(self.records))
        object.__setattr__(self, "order", check_order(self.order))
        if not self.person:
            raise ParameterError(
                "Capping the records per person needs a person column (mark the column that says whose record it is)."
            )
        if self.time == self.person:
            raise ParameterError(f"'{self.person}' is the person column; it cannot also be the time column.")
        if self.order == "random":
            object.__setattr__(self, "key_id", _checked_id(self.key_id or ""))
            if self.key is not None:
                require_key(self.key, self.key_id, "The records-per-person cap")
        elif self.key_id is not None:
            raise ParameterError("Only a cap drawing records at random uses the project key.")

    @classmethod
    def made(
        cls,
        person: str | None,
        records: int,
        *,
        order: str = "first",
        time: str | None = None,
        key: bytes | None = None,
    ) -> CapRecordsStep:
        """The step keeping ``records`` per ``person``; ``key`` (the project key) for ``order`` "random"."""
        if not person:
            raise ParameterError(
                "Capping the records per person needs a person column: name it with --person COL "
                "(or --role COL=person)."
            )
        if check_order(order) == "random":
            if key is None:
                raise ParameterError("Drawing the records to keep at random needs the project key (--key-file).")
            return cls(person, records, order, time, key_id(key), bytes(key))
        return cls(person, records, order, time)

    def with_key(self, key: bytes | None) -> CapRecordsStep:
        return replace(self, key=require_key(key, self.key_id, "The records-per-person cap"))

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.person,) + ((self.time,) if self.time else ())

    def capped(self, frame: pd.DataFrame):
        """What the cap keeps and drops on ``frame`` (``anonlib.transformations.capping.Capped``)."""
        require_columns(frame, list(self.columns))
        key = require_key(self.key, self.key_id, "The records-per-person cap") if self.order == "random" else None
        return cap_records(frame, self.person, self.records, order=self.order, time=self.time, key=key)

    def apply(self, frame: pd.DataFrame) -> pd.DataFrame:
        kept = self.capped(frame).kept
        return frame if kept.all() else frame[kept].reset_index(drop=True)

    def describe(self) -> str:
        if self.order == "random":
            which = f"drawn at random under the project key (key id {self.key_id})"
        elif self.time:
            which = f"the earliest by {self.time}"
        else:
            which = "the first in the file's order"
        return (
            f"At most {_records(self.records)} per person ({self.person}) released, {which}: "
            "a person's further records are left out"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "person": self.person,
            "records": self.records,
            "order": self.order,
            **({"time": self.time} if self.time else {}),
            **({"key_id": self.key_id} if self.key_id else {}),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str = "a step") -> CapRecordsStep:
        read_object(data, where, required=("kind", "person", "records", "order"), optional=("time", "key_id"))
        return built(
            where,
            lambda: cls(
                read_text(data, "person", where),
                read_whole(data, "records", where, minimum=1),
                read_text(data, "order", where, allowed=("first", "random")),
                read_text(data, "time", where) if "time" in data else None,
                read_text(data, "key_id", where) if "key_id" in data else None,
            ),
        )


KEYED_STEPS = (PseudonymizeStep, ShiftDatesStep)


def needs_key(step) -> bool:
    """Whether ``step`` is made with the project key (a pseudonym, a date shift, a cap drawn at random)."""
    return isinstance(step, KEYED_STEPS) or (isinstance(step, CapRecordsStep) and step.order == "random")


def _records(n: int) -> str:
    return f"{n:,} record{'s' if n != 1 else ''}"
