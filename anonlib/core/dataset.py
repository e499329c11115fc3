"""A dataset under assessment: a table plus what each column is for.

Roles: ``identifier`` (names, record numbers: dropped before any analysis),
``quasi-identifier`` (what an attacker may know: age, ZIP, sex...),
``sensitive`` (what must not be learnt: diagnosis, income...), ``count`` (how
many identical records a row stands for) and ``ignore``.

``guess_roles`` proposes roles from column names and contents; the user
confirms them. Missing values stay a category of their own unless the dataset
says ``missing="drop"``, in which case rows with a missing value in the columns
being analysed are left out, and how many is always reported.

The release workflow has one rule for which records it assesses
(``RoleColumns.assessed_columns``, ``Dataset.assessed``): with ``missing="drop"``,
the records holding a value in every quasi-identifier, every sensitive column
(by role) and every column a privacy model of the release target reads; only
they are judged by the target and by any step, and only they are released. A
blank in another released column (an ignored column kept in the release) is
written as a blank and does not leave its record out. With ``missing="category"``
every record is assessed.

Example:
    >>> import pandas as pd
    >>> df = pd.DataFrame({"patient_id": [1, 2], "age": [30, 40], "diagnosis": ["a", "b"]})
    >>> ds = Dataset.from_frame("demo", df)
    >>> ds.quasi_identifiers, ds.sensitive, ds.identifiers
    (('age',), ('diagnosis',), ('patient_id',))
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from functools import cached_property

import numpy as np
import pandas as pd

from .equivalence import record_counts
from .errors import ColumnError, ParameterError, join_names, require_columns


class Role(str, Enum):
    """What a column is for in a privacy assessment."""

    IDENTIFIER = "identifier"
    QUASI_IDENTIFIER = "quasi-identifier"
    SENSITIVE = "sensitive"
    COUNT = "count"
    IGNORE = "ignore"


ROLE_VALUES = tuple(r.value for r in Role)

_ID_WORDS = re.compile(
    r"(^|[^a-z])(id|ids|identifier|name|names|full ?name|first ?name|last ?name|surname|ssn|"
    r"email|e-mail|phone|telephone|address|mrn|record ?number|patient_nbr|encounter_id)([^a-z]|$)"
)
_ID_NAMES = {"code", "internal code", "pseudonym", "key", "record"}
_COUNT_NAMES = {"count", "counts", "#rec", "#rec.", "n", "freq", "frequency", "records", "#records", "multiplicity"}
_QUASI_WORDS = re.compile(
    r"(age|sex|gender|zip|postcode|postal|race|ethnic|birth|dob|marital|education|country|"
    r"region|city|state|county|municipality|occupation|workclass|weight|height)"
)
_DATE_WORDS = re.compile(r"(^|[^a-z])(date|dates|dob)([^a-z]|$)")  # died, admitted...: outcomes unless dates
_DATE_VALUE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?)?$")
_SENSITIVE_WORDS = re.compile(
    r"(diagnos|disease|income|result|test|biopsy|cancer|hiv|std|readmit|outcome|"
    r"genetic|condition|illness|treatment|medication|salary|^num$|target|label|class)"
)


def guess_role(name: str, values: pd.Series) -> Role:
    """A first guess of one column's role from its name and values.

    Dates of events (admission, discharge, a visit, birth, death) are quasi-identifiers
    (HIPAA's Safe Harbor lists every date element but the year), by a name saying
    date (``admission_date``, ``dob``) or because their values are ISO dates, even when
    the name also says what was measured (``test_date``); a flag such as ``died`` is not.

    >>> guess_role("Full Name", pd.Series(["a", "b"])), guess_role("#Rec.", pd.Series([1, 2]))
    (<Role.IDENTIFIER: 'identifier'>, <Role.COUNT: 'count'>)
    >>> guess_role("when", pd.Series(["2024-01-31", None])), guess_role("admission_date", pd.Series([1]))
    (<Role.QUASI_IDENTIFIER: 'quasi-identifier'>, <Role.QUASI_IDENTIFIER: 'quasi-identifier'>)
    """
    lower = str(name).strip().lower()
    if lower in _COUNT_NAMES:
        return Role.COUNT
    if _ID_WORDS.search(lower) or lower in _ID_NAMES:
        return Role.IDENTIFIER
    if _DATE_WORDS.search(lower) or _looks_like_dates(values):
        return Role.QUASI_IDENTIFIER
    if _SENSITIVE_WORDS.search(lower):
        return Role.SENSITIVE
    if _QUASI_WORDS.search(lower):
        return Role.QUASI_IDENTIFIER
    return Role.IGNORE


def _looks_like_dates(values: pd.Series, sample: int = 200) -> bool:
    """Whether a column holds dates: a datetime type, or every one of up to ``sample``
    present values written as an ISO date (``2024-01-31``, optionally with a time)."""
    if pd.api.types.is_datetime64_any_dtype(values):
        return True
    present = values.dropna()
    if present.empty or pd.api.types.is_numeric_dtype(present):
        return False
    return bool(present.head(sample).astype(str).str.strip().str.match(_DATE_VALUE).all())


def guess_roles(frame: pd.DataFrame) -> dict[str, Role]:
    """Roles for every column. When no name suggests a quasi-identifier, every
    column that is not an identifier or count becomes one (as ARX does).

    >>> guess_roles(pd.DataFrame({"a": [1], "b": [2]}))
    {'a': <Role.QUASI_IDENTIFIER: 'quasi-identifier'>, 'b': <Role.QUASI_IDENTIFIER: 'quasi-identifier'>}
    """
    roles = {str(c): guess_role(c, frame[c]) for c in frame.columns}
    counts = [c for c, r in roles.items() if r is Role.COUNT]
    for extra in counts[1:]:
        roles[extra] = Role.IGNORE
    if counts:
        try:
            record_counts(frame, counts[0])
        except ColumnError:
            roles[counts[0]] = Role.IGNORE
    if not any(r is Role.QUASI_IDENTIFIER for r in roles.values()):
        for c, r in roles.items():
            if r in (Role.IGNORE, Role.SENSITIVE):
                roles[c] = Role.QUASI_IDENTIFIER
    return roles


def content_hash(frame: pd.DataFrame) -> str:
    """A short stable fingerprint of a table's content, for caching.

    >>> content_hash(pd.DataFrame({"a": [1, 2]})) == content_hash(pd.DataFrame({"a": [1, 2]}))
    True
    """
    digest = hashlib.blake2b(digest_size=12)
    digest.update("\x1f".join(map(str, frame.columns)).encode())
    digest.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    return digest.hexdigest()


class RoleColumns:
    """Columns by role, in the table's order: one definition for the in-memory
    ``Dataset`` and the engine's ``EngineTable`` (each says its column order)."""

    roles: Mapping[str, Role]

    def _column_order(self) -> Sequence[str]:
        raise NotImplementedError

    def columns_with(self, role: Role) -> tuple[str, ...]:
        return tuple(c for c in self._column_order() if self.roles.get(c, Role.IGNORE) is role)

    @property
    def quasi_identifiers(self) -> tuple[str, ...]:
        return self.columns_with(Role.QUASI_IDENTIFIER)

    @property
    def sensitive(self) -> tuple[str, ...]:
        return self.columns_with(Role.SENSITIVE)

    @property
    def identifiers(self) -> tuple[str, ...]:
        return self.columns_with(Role.IDENTIFIER)

    @property
    def count(self) -> str | None:
        counts = self.columns_with(Role.COUNT)
        return counts[0] if counts else None

    def assessed_columns(self, extra: Sequence[str] = ()) -> tuple[str, ...]:
        """The columns a record must hold a value in to be assessed when missing values
        are dropped (``missing="drop"``): every quasi-identifier and every sensitive
        column (by role), and ``extra`` (the columns the release target's privacy models
        read), in the table's order, each once. An ``extra`` column the table lacks is
        left out (the caller names it in its own sentence).

        The one definition of the assessed records: the release target's check, the
        suppression steps, the released table and the engine's release all use it.
        """
        wanted = set(self.quasi_identifiers) | set(self.sensitive) | set(extra)
        return tuple(str(c) for c in self._column_order() if c in wanted)


@dataclass(frozen=True)
class Dataset(RoleColumns):
    """A table and the role of each of its columns."""

    name: str
    frame: pd.DataFrame
    roles: Mapping[str, Role]
    missing: str = "category"
    notes: tuple[str, ...] = field(default_factory=tuple)

    @classmethod
    def from_frame(
        cls, name: str, frame: pd.DataFrame, roles: Mapping[str, Role | str] | None = None, **kwargs
    ) -> Dataset:
        """A dataset with guessed roles, overridden by ``roles`` where given."""
        merged: dict[str, Role] = guess_roles(frame)
        if roles:
            require_columns(frame, list(roles))
            for column, role in roles.items():
                merged[column] = as_role(role)
        return cls(name=name, frame=frame, roles=merged, **kwargs).validated()

    def validated(self) -> Dataset:
        if self.missing not in ("category", "drop"):
            raise ParameterError("Missing values are either kept as a category ('category') or dropped ('drop').")
        require_columns(self.frame, list(self.roles))
        counts = self.columns_with(Role.COUNT)
        if len(counts) > 1:
            raise ColumnError(f"Only one column can hold record counts; found {join_names(counts)}.")
        if counts:
            record_counts(self.frame, counts[0])
        return self

    def _column_order(self) -> Sequence[str]:
        return self.frame.columns

    @property
    def n_rows(self) -> int:
        return int(self.frame.shape[0])

    @property
    def n_records(self) -> int:
        weights = record_counts(self.frame, self.count)
        return self.n_rows if weights is None else int(weights.sum())

    @cached_property
    def fingerprint(self) -> str:
        """Content hash of the table (computed once per Dataset; datasets are immutable)."""
        return content_hash(self.frame)

    def with_roles(self, roles: Mapping[str, Role | str]) -> Dataset:
        """A copy with some roles changed."""
        require_columns(self.frame, list(roles))
        merged = dict(self.roles)
        merged.update({c: as_role(r) for c, r in roles.items()})
        return self._same_table(roles=merged)

    def with_missing(self, missing: str) -> Dataset:
        """A copy with missing values kept as a category (``category``) or dropped (``drop``)."""
        return self._same_table(missing=missing)

    def _same_table(self, **changes) -> Dataset:
        """A validated copy over the same frame, keeping the computed fingerprint."""
        copy = replace(self, **changes).validated()
        if "fingerprint" in self.__dict__ and "frame" not in changes:
            copy.__dict__["fingerprint"] = self.__dict__["fingerprint"]
        return copy

    def assessed(self, extra: Sequence[str] = ()) -> np.ndarray:
        """Per row: whether the record is assessed (judged by the release target and by
        every step, and released). Every row with ``missing="category"``; with
        ``missing="drop"`` the rows holding a value in every one of
        ``assessed_columns(extra)``.

        >>> df = pd.DataFrame({"age": [30, None, 40], "dx": ["a", "b", None], "note": [None, "x", "y"]})
        >>> ds = Dataset.from_frame("d", df, {"age": "quasi-identifier", "dx": "sensitive", "note": "ignore"})
        >>> ds.with_missing("drop").assessed().tolist(), ds.assessed().tolist()
        ([True, False, False], [True, True, True])
        """
        if self.missing != "drop":
            return np.ones(self.n_rows, dtype=bool)
        return complete_rows(self.frame, self.assessed_columns(extra))

    def assessed_only(self, extra: Sequence[str] = ()) -> Dataset:
        """The dataset of its assessed records (``assessed(extra)``), every column kept: where
        a release starts, so that no step turns a record left out into one assessed (a
        hierarchy sending a blank to ``*``); itself with ``missing="category"``.

        >>> df = pd.DataFrame({"age": [30, None, 40], "dx": ["a", "b", None]})
        >>> ds = Dataset.from_frame("d", df, {"age": "quasi-identifier", "dx": "sensitive"}, missing="drop")
        >>> ds.assessed_only().frame["age"].tolist(), ds.assessed_only(["dx"]).n_rows
        ([30.0], 1)
        """
        keep = self.assessed(extra)
        if keep.all():
            return self
        return self._same_table(frame=self.frame[keep])  # the loaded index kept: rows stay matched to the file

    def assessed_frame(
        self, columns: Sequence[str] | None = None, extra: Sequence[str] = ()
    ) -> tuple[pd.DataFrame, int]:
        """``analysis_frame(columns)`` of the assessed rows (``assessed(extra)``): the
        rows left out are those missing a value in an assessed column, whether or not
        it is among ``columns``; a blank in another of ``columns`` stays a blank."""
        return self.analysis_frame(columns, complete=self.assessed_columns(extra))

    def analysis_frame(
        self, columns: Sequence[str] | None = None, *, complete: Sequence[str] | None = None
    ) -> tuple[pd.DataFrame, int]:
        """The rows and columns to analyse, and how many rows were dropped.

        Identifier columns are never included. ``columns`` defaults to every
        quasi-identifier and sensitive column; the count column is always kept.
        With ``missing="drop"`` rows missing any of ``complete`` (default:
        ``columns``) are left out.
        """
        if columns is None:
            columns = [
                c
                for c in self.frame.columns
                if self.roles.get(c, Role.IGNORE) in (Role.QUASI_IDENTIFIER, Role.SENSITIVE)
            ]
        columns = list(columns)
        require_columns(self.frame, columns)
        leaked = [c for c in columns if self.roles.get(c) is Role.IDENTIFIER]
        if leaked:
            raise ColumnError(
                f"{join_names(leaked)} is marked as an identifier and is never analysed; change its role first."
            )
        keep = columns + ([self.count] if self.count and self.count not in columns else [])
        complete = columns if complete is None else list(complete)
        require_columns(self.frame, complete)
        frame = self.frame[keep]
        dropped = 0
        if self.missing == "drop" and complete:
            rows = complete_rows(self.frame, complete)
            dropped = int((~rows).sum())
            if dropped:
                frame = frame[rows].reset_index(drop=True)
        return frame, dropped

    def with_edits(self, edited: pd.DataFrame) -> Dataset:
        """A copy with the types and roles of an edited ``role_table()`` applied.

        ``edited`` has the columns ``column``, ``type`` and ``role`` in the
        dataset's column order (as the role editor returns it). A type change
        converts the column (``convert_column``); a value that does not convert
        raises ``ColumnError`` and nothing is changed.

        >>> ds = Dataset.from_frame("d", pd.DataFrame({"age": ["30", "40"], "zip": ["1", "2"]}))
        >>> table = ds.role_table()
        >>> table.loc[0, "type"], table.loc[1, "role"] = "integer", "ignore"
        >>> new = ds.with_edits(table)
        >>> new.frame["age"].tolist(), new.quasi_identifiers
        ([30, 40], ('age',))
        """
        original = self.role_table()
        if list(edited["column"]) != list(original["column"]):
            raise ColumnError("The edited column list does not match the dataset's columns.")
        frame = self.frame
        for column, old_type, new_type in zip(self.frame.columns, original["type"], edited["type"]):
            if old_type != new_type:
                frame = convert_column(frame, column, new_type)
        roles = {column: role for column, role in zip(self.frame.columns, edited["role"])}
        changed = replace(self, frame=frame) if frame is not self.frame else self
        return changed.with_roles(roles)

    def role_table(self) -> pd.DataFrame:
        """One row per column: name, type, role (the editor's starting point)."""
        return pd.DataFrame(
            {
                "column": [str(c) for c in self.frame.columns],
                "type": [column_kind(self.frame[c]) for c in self.frame.columns],
                "role": [self.roles.get(c, Role.IGNORE).value for c in self.frame.columns],
            }
        )


def complete_rows(frame: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    """Per row: True when it holds a value in every one of ``columns`` (every row when
    none is named). The test of a missing value wherever records are dropped for one.

    >>> complete_rows(pd.DataFrame({"a": [1, None], "b": ["x", "y"]}), ["a", "b"]).tolist()
    [True, False]
    """
    columns = list(columns)
    if not columns:
        return np.ones(len(frame), dtype=bool)
    return frame[columns].notna().all(axis=1).to_numpy(dtype=bool)


def as_role(role: Role | str) -> Role:
    if isinstance(role, Role):
        return role
    try:
        return Role(str(role))
    except ValueError:
        raise ParameterError(f"'{role}' is not a role; use one of {join_names(ROLE_VALUES)}.") from None


def column_kind(series: pd.Series) -> str:
    if pd.api.types.is_bool_dtype(series):
        return "category"
    if pd.api.types.is_numeric_dtype(series):
        return "integer" if pd.api.types.is_integer_dtype(series) else "number"
    return "category"


def convert_column(frame: pd.DataFrame, column: str, kind: str) -> pd.DataFrame:
    """A copy of ``frame`` with ``column`` converted to ``kind`` (integer, number or category).

    Values that do not convert are named in the error; nothing is changed then.

    >>> convert_column(pd.DataFrame({"a": ["1", "2"]}), "a", "integer")["a"].tolist()
    [1, 2]
    """
    require_columns(frame, [column])
    series = frame[column]
    if kind == "category":
        converted = series.astype("string")
    elif kind in ("integer", "number"):
        numbers = pd.to_numeric(series, errors="coerce")
        bad = series[numbers.isna() & series.notna()]
        if len(bad):
            raise ColumnError(
                f"Column '{column}' cannot be made numeric: '{bad.iloc[0]}' is not a number ({len(bad):,} such values)."
            )
        if kind == "integer":
            values = numbers.dropna().to_numpy(dtype=float)
            if not np.all(np.floor(values) == values):
                raise ColumnError(f"Column '{column}' has decimals; choose 'number' instead of 'integer'.")
            converted = numbers.astype("Int64")
        else:
            converted = numbers.astype("float64")
    else:
        raise ParameterError("A column type is one of: integer, number, category.")
    out = frame.copy()
    out[column] = converted
    return out
