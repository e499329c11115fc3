"""Transformation steps: each change a page can apply to the working copy, as data.

(One piece of about 820 lines: the five kinds of the papers' transformations with their
recipe forms, and the registry of every kind; the local and health steps live beside it.)

A step is a small frozen dataclass holding everything needed to apply it again
without the app: ``apply(frame) -> frame`` (never changes its input),
``describe()`` in plain words, ``to_json()`` / ``from_json()`` for the recipe.
The kinds, one per transformation of the data:

- ``BandsStep``: a numeric column cut into equal-width bands (Kroes et al.'s
  generalization potential, ``anonlib.measures.peers.Partition``);
- ``GeneralizationStep``: full-domain generalization to hierarchy levels
  (Arca & Hewett's IAB / exhaustive / greedy search), the ARX hierarchies
  embedded so the step is self-contained;
- ``PolicyStep``: a frontier policy (Xia et al.), each quasi-identifier's
  ordered values merged into intervals;
- ``AggregationStep``: areas merged into aggregated regions (Croft et al.'s
  VBAS, ``anonlib.transformations.geo``), as an area -> region mapping;
- ``SuppressionStep``: the records of classes that fail the release target
  are removed; a rule evaluated when applied, so on a new delivery it removes
  that delivery's failing records;
- local suppression, microaggregation and top/bottom coding
  (``anonlib.workflow.local_steps``, registered here);
- keyed pseudonyms, per-person date shifts and HIPAA Safe Harbor
  (``anonlib.workflow.health_steps``, registered here).

A value the step does not know (a new area id, a value no hierarchy covers, a
number outside the bands' range) is a one-sentence error, never a silent
pass-through: a recipe that does not fit a file says so. Missing values stay
missing in every step (so a dataset that leaves records with missing values
out of the analysis leaves out the same records after the step); where the
search or the frontier count "missing" as a value of its own, the released
cell stays empty rather than reading "missing".

Example:
    >>> import pandas as pd
    >>> step = BandsStep("age", width=10, offset=5, low=35, high=64, integer=True)
    >>> step.apply(pd.DataFrame({"age": [35, 50, 64]}))["age"].tolist()
    ['35-39', '50-59', '60-64']
    >>> step.describe()
    'age in 4 bands of width 10 (35-39 to 60-64)'
    >>> step_from_json(step.to_json()) == step
    True
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..core.dataset import complete_rows
from ..core.equivalence import MISSING_LABEL, encode_column
from ..core.errors import ColumnError, HierarchyError, ParameterError, join_names, require_columns
from ..core.fields import (
    built as _built,
)
from ..core.fields import (
    damaged,
    read_flag,
    read_list,
    read_number,
    read_object,
    read_text,
    read_texts,
    read_whole,
)
from ..core.hierarchy import generalize_column, validate_hierarchy, value_key
from ..core.histories import Earlier, adversary_power
from ..core.metrics import whole_k
from ..measures.models import ModelRequirement, acceptance
from ..measures.peers import Partition
from .health_steps import CapRecordsStep, PseudonymizeStep, SafeHarborStep, ShiftDatesStep
from .local_steps import LocalSuppressionStep, MicroaggregationStep, TopBottomStep, assessed_beyond

SHOWN_VALUES = 5  # unknown values named in an error


def _unknown_values(column: str, values: Sequence[str], what: str) -> ColumnError:
    return ColumnError(
        f"The column '{column}' has values {what}: {join_names([repr(v) for v in values], SHOWN_VALUES)}; "
        "the recipe was made for other data, so apply it only to files of the same kind."
    )


def _text_of_codes(names: Sequence[str | None], codes: np.ndarray) -> pd.api.extensions.ExtensionArray:
    """``pd.array(np.asarray(names, dtype=object)[codes], dtype="string")`` (None stays missing),
    gathered by Arrow when text is held by Arrow (ten times faster than building the strings).

    >>> _text_of_codes(["a", None], np.array([1, 0, 0])).tolist()
    [<NA>, 'a', 'a']
    """
    if pd.StringDtype().storage != "pyarrow":
        return pd.array(np.asarray(names, dtype=object)[codes], dtype="string")
    import pyarrow as pa  # present whenever text is held by Arrow

    taken = pa.array(names, type=pa.large_string()).take(pa.array(np.asarray(codes, dtype=np.int64)))
    return pd.arrays.ArrowStringArray(pa.chunked_array([taken]))


def _with_column(frame: pd.DataFrame, column: str, values) -> pd.DataFrame:
    """A new frame with one column replaced (the input is never changed)."""
    out = frame.copy(deep=False)
    out[column] = values
    return out


# --------------------------------------------------------------------------- bands


@dataclass(frozen=True)
class BandsStep:
    """``column`` cut into equal-width bands (Kroes et al., Fig. 4): band j covers
    ``[low - offset + j * width, low - offset + (j + 1) * width)``, the outer
    bands cut at [``low``, ``high``], the range the bands were made for.
    Missing values stay missing; a number outside [low, high] is an error."""

    kind: ClassVar[str] = "bands"
    column: str
    width: float
    offset: float
    low: float
    high: float
    integer: bool

    def __post_init__(self) -> None:
        for name in ("width", "offset", "low", "high"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float, np.integer, np.floating))
                or not math.isfinite(value)
            ):
                raise ParameterError(f"The bands of '{self.column}' need a finite {name}; got {value!r}.")
            object.__setattr__(self, name, float(value))
        if self.width <= 0 or not 0 <= self.offset < self.width or self.low > self.high:
            raise ParameterError(
                f"The bands of '{self.column}' are inconsistent (width {self.width:g}, offset {self.offset:g}, "
                f"range {self.low:g}-{self.high:g}): the width must be positive, the offset between 0 and the "
                "width, and the range from low to high."
            )
        object.__setattr__(self, "integer", bool(self.integer))

    @classmethod
    def from_partition(cls, column: str, partition: Partition) -> BandsStep:
        """The step applying one of ``anonlib.measures.peers.partitions``' partitions to ``column``."""
        return cls(column, partition.width, partition.offset, partition.low, partition.high, partition.integer)

    def covering(self, values) -> BandsStep:
        """The same band boundaries, the range widened to cover every number of
        ``values`` (e.g. the whole column when bands were chosen on some rows).

        >>> BandsStep("age", 10, 5, 35, 64, True).covering(pd.Series([33, 70, None])).describe()
        'age in 5 bands of width 10 (33-39 to 70)'
        """
        numbers = pd.to_numeric(pd.Series(values), errors="coerce").dropna()
        if numbers.empty:
            return self
        low, high = min(self.low, float(numbers.min())), max(self.high, float(numbers.max()))
        start = self.low - self.offset
        start -= math.ceil((start - low) / self.width) * self.width if low < start else 0.0
        offset = min(max(low - start, 0.0), math.nextafter(self.width, 0.0))  # rounding of float widths
        return BandsStep(self.column, self.width, offset, low, high, self.integer)

    @property
    def partition(self) -> Partition:
        codes = np.floor((self.high - (self.low - self.offset)) / self.width)
        return Partition(self.width, self.offset, int(codes) + 1, self.integer, self.low, self.high)

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)

    def apply(self, frame: pd.DataFrame) -> pd.DataFrame:
        require_columns(frame, [self.column])
        series = frame[self.column]
        numbers = pd.to_numeric(series, errors="coerce")
        text = series[numbers.isna() & series.notna()]
        if len(text):
            raise _unknown_values(
                self.column,
                list(dict.fromkeys(map(str, text)))[: SHOWN_VALUES + 1],
                "that are not numbers, so they cannot be put into bands",
            )
        outside = numbers[(numbers < self.low) | (numbers > self.high)]
        if len(outside):
            raise _unknown_values(
                self.column,
                [value_key(v) for v in pd.unique(outside)][: SHOWN_VALUES + 1],
                f"outside the range the bands were made for ({value_key(self.low)}-{value_key(self.high)})",
            )
        return _with_column(frame, self.column, self.partition.apply(series))

    def describe(self) -> str:
        part = self.partition
        first, last = part.label(0), part.label(part.categories - 1)
        if part.categories == 1:
            return f"{self.column} becomes one band ({first}): the column is effectively removed"
        return f"{self.column} in {part.categories} bands of width {self.width:g} ({first} to {last})"

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "column": self.column,
            "width": self.width,
            "offset": self.offset,
            "low": self.low,
            "high": self.high,
            "integer": self.integer,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str = "a step") -> BandsStep:
        read_object(data, where, required=("kind", "column", "width", "offset", "low", "high", "integer"))
        return _built(
            where,
            lambda: cls(
                read_text(data, "column", where),
                read_number(data, "width", where),
                read_number(data, "offset", where),
                read_number(data, "low", where),
                read_number(data, "high", where),
                read_flag(data, "integer", where),
            ),
        )


# ---------------------------------------------------------------- generalization


Hierarchy = tuple[tuple[str, ...], ...]  # ARX layout as rows of text: (original, level 1, ..., top)


def _hierarchy_rows(table: pd.DataFrame, attribute: str) -> Hierarchy:
    text = validate_hierarchy(table, attribute=attribute)
    return tuple(tuple(str(v) for v in row) for row in text.itertuples(index=False))


def _hierarchy_frame(rows: Hierarchy) -> pd.DataFrame:
    width = len(rows[0]) if rows else 1
    return pd.DataFrame([list(r) for r in rows], columns=range(width), dtype=object)


@dataclass(frozen=True)
class GeneralizationStep:
    """Full-domain generalization (Arca & Hewett): each attribute raised to a level
    of its hierarchy (ARX layout, embedded as rows of text). ``method`` and ``k``
    record how the levels were found ("optimal", "iab", "exhaustive", "greedy", "manual")."""

    kind: ClassVar[str] = "generalization"
    levels: tuple[tuple[str, int], ...]
    hierarchies: tuple[tuple[str, Hierarchy], ...]
    method: str = "manual"
    k: int | None = None

    def __post_init__(self) -> None:
        levels = tuple(
            (str(a), int(v)) for a, v in (self.levels.items() if isinstance(self.levels, Mapping) else self.levels)
        )
        given = self.hierarchies.items() if isinstance(self.hierarchies, Mapping) else self.hierarchies
        hierarchies = []
        for attribute, table in given:
            if isinstance(table, pd.DataFrame):
                table = _hierarchy_rows(table, attribute)
            else:
                table = _hierarchy_rows(_hierarchy_frame(tuple(tuple(r) for r in table)), attribute)
            hierarchies.append((str(attribute), table))
        object.__setattr__(self, "levels", levels)
        object.__setattr__(self, "hierarchies", tuple(hierarchies))
        if not levels:
            raise ParameterError("A generalization step needs at least one attribute and its level.")
        names = [a for a, _ in levels]
        if len(set(names)) != len(names):
            raise ParameterError("A generalization step names an attribute twice.")
        known = dict(self.hierarchies)
        lacking = [a for a in names if a not in known]
        if lacking:
            raise HierarchyError(f"The generalization step has no hierarchy for {join_names(lacking)}.")
        for attribute, level in levels:
            top = len(known[attribute][0]) - 1
            if not 0 <= level <= top:
                raise HierarchyError(
                    f"The generalization step raises {attribute} to level {level}, but its hierarchy has "
                    f"levels 0 to {top}."
                )
        if self.k is not None:
            object.__setattr__(self, "k", whole_k(self.k))

    @classmethod
    def from_search(cls, result, hierarchies: Mapping[str, pd.DataFrame]) -> GeneralizationStep:
        """The step of an ``anonlib.transformations.generalization.search`` result and the hierarchies it searched."""
        return cls(
            tuple(result.levels.items()),
            tuple((a, hierarchies[a]) for a in result.levels),
            method=result.method,
            k=result.k,
        )

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(a for a, _ in self.levels)

    def hierarchy(self, attribute: str) -> pd.DataFrame:
        """The embedded hierarchy of ``attribute`` as an ARX-layout table."""
        return _hierarchy_frame(dict(self.hierarchies)[attribute])

    def apply(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Each attribute's values replaced by their level-j generalization (text);
        the same labels ``anonlib.transformations.generalization`` writes in its generalized table."""
        require_columns(frame, list(self.columns))
        out = frame
        for attribute, level in self.levels:
            if level == 0:
                continue
            values = generalize_column(frame[attribute], self.hierarchy(attribute), level, attribute)
            out = _with_column(out, attribute, values)
        return out

    def _level_words(self, attribute: str, level: int) -> str:
        rows = dict(self.hierarchies)[attribute]
        top = len(rows[0]) - 1
        values = list(dict.fromkeys(r[level] for r in rows))
        if level == 0:
            return f"{attribute} kept"
        if len(values) == 1:
            return f"{attribute} is replaced by {values[0]}: the column is effectively removed"
        return f"{attribute} to level {level} of {top} ({len(values)} values, e.g. {values[0]})"

    def describe(self) -> str:
        raised = [(a, v) for a, v in self.levels if v > 0]
        if not raised:
            return "Generalization that keeps every value (all levels 0)"
        how = {
            "optimal": "optimal search",
            "iab": "IAB search",
            "exhaustive": "exhaustive search",
            "greedy": "greedy search",
        }.get(self.method)
        found = f" ({how}, k = {self.k})" if how and self.k else ""
        return f"Generalization{found}: " + "; ".join(self._level_words(a, v) for a, v in raised)

    @property
    def removed(self) -> tuple[str, ...]:
        """Attributes whose level has a single value (all replaced by one value, such as *)."""
        rows = dict(self.hierarchies)
        return tuple(a for a, v in self.levels if v > 0 and len({r[v] for r in rows[a]}) == 1)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "method": self.method,
            "k": self.k,
            "levels": [{"attribute": a, "level": v} for a, v in self.levels],
            "hierarchies": [{"attribute": a, "rows": [list(r) for r in rows]} for a, rows in self.hierarchies],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str = "a step") -> GeneralizationStep:
        read_object(data, where, required=("kind", "method", "k", "levels", "hierarchies"))
        method = read_text(data, "method", where, allowed=("optimal", "iab", "exhaustive", "greedy", "manual"))
        k = read_whole(data, "k", where, minimum=1, optional=True)
        levels = []
        for item in read_list(data, "levels", where):
            read_object(item, f"a level of {where}", required=("attribute", "level"))
            levels.append((read_text(item, "attribute", where), read_whole(item, "level", where, minimum=0)))
        hierarchies = []
        for item in read_list(data, "hierarchies", where):
            read_object(item, f"a hierarchy of {where}", required=("attribute", "rows"))
            attribute = read_text(item, "attribute", where)
            rows = read_list(item, "rows", f"the hierarchy of {attribute} in {where}")
            if not rows or not all(isinstance(r, list) and r and all(isinstance(c, str) for c in r) for r in rows):
                raise damaged(f"the hierarchy of {attribute} in {where} must be rows of text.")
            if len({len(r) for r in rows}) != 1:
                raise damaged(f"the rows of the hierarchy of {attribute} in {where} have different numbers of levels.")
            hierarchies.append((attribute, tuple(tuple(r) for r in rows)))
        return _built(where, lambda: cls(tuple(levels), tuple(hierarchies), method=method, k=k))


# ---------------------------------------------------------------- frontier policy


@dataclass(frozen=True)
class AttributeIntervals:
    """One attribute of a policy: its ordered values merged into intervals.

    ``groups[i]`` lists the values (as text, ``value_key``) of interval i and
    ``labels[i]`` its label ("17-25", "Asian / Black"). ``numeric``: a number
    between the values of one interval belongs to it too (a new delivery may
    hold ages the original did not)."""

    attribute: str
    labels: tuple[str, ...]
    groups: tuple[tuple[str, ...], ...]
    numeric: bool

    def __post_init__(self) -> None:
        object.__setattr__(self, "labels", tuple(str(v) for v in self.labels))
        object.__setattr__(self, "groups", tuple(tuple(str(v) for v in g) for g in self.groups))
        if not self.groups or len(self.groups) != len(self.labels) or not all(self.groups):
            raise ParameterError(f"The policy of '{self.attribute}' needs one label per non-empty interval.")
        members = [v for g in self.groups for v in g]
        if len(set(members)) != len(members):
            repeated = sorted({v for v in members if members.count(v) > 1})
            raise ParameterError(f"The policy of '{self.attribute}' puts {join_names(repeated)} in two intervals.")
        object.__setattr__(self, "_where", {v: i for i, g in enumerate(self.groups) for v in g})
        object.__setattr__(self, "_bounds", self._ranges(self.groups) if self.numeric else ())
        if self.numeric:
            bounds = self._bounds
            if any(b is None for b in bounds):
                raise ParameterError(
                    f"The policy of '{self.attribute}' is marked numeric but lists values that are not numbers."
                )
            for (_, high), (low, _) in zip(bounds, bounds[1:]):
                if not high < low:
                    raise ParameterError(f"The intervals of '{self.attribute}' overlap or are out of order.")

    @staticmethod
    def _ranges(groups: Sequence[Sequence[str]]) -> tuple[tuple[float, float] | None, ...]:
        """Each group's (smallest, largest) number, None for a group holding text, (inf, -inf)
        for one holding only missing; every value read in one ``pd.to_numeric``."""
        values = [[v for v in g if v != MISSING_LABEL] for g in groups]
        numbers = pd.to_numeric(pd.Series([v for g in values for v in g], dtype=object), errors="coerce")
        numbers = numbers.to_numpy(dtype=float, na_value=np.nan)
        out, start = [], 0
        for g in values:
            part, start = numbers[start : start + len(g)], start + len(g)
            if np.isnan(part).any():
                out.append(None)
            else:
                out.append((float(part.min()), float(part.max())) if len(part) else (math.inf, -math.inf))
        return tuple(out)

    def labels_of(self, keys: Sequence[str]) -> list[str | None]:
        """The interval label of each value key (missing stays missing); a
        ``ColumnError`` names unknown values."""
        where, ranges = self._where, self._bounds
        out: list[str | None] = []
        unknown = []
        for key in keys:
            if key == MISSING_LABEL:
                out.append(None)
                continue
            i = where.get(key)
            if i is None and self.numeric:
                number = pd.to_numeric(key, errors="coerce")
                if not pd.isna(number):
                    i = next((j for j, (lo, hi) in enumerate(ranges) if lo <= number <= hi), None)
            if i is None:
                unknown.append(key)
                out.append(None)
            else:
                out.append(self.labels[i])
        if unknown:
            raise _unknown_values(self.attribute, unknown[: SHOWN_VALUES + 1], "that fall in no interval of the policy")
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "attribute": self.attribute,
            "numeric": self.numeric,
            "intervals": [{"label": lab, "values": list(g)} for lab, g in zip(self.labels, self.groups)],
        }


@dataclass(frozen=True)
class PolicyStep:
    """A frontier policy (Xia et al.): each listed quasi-identifier's values replaced
    by the label of their interval. Attributes the policy leaves unchanged are
    not listed."""

    kind: ClassVar[str] = "policy"
    attributes: tuple[AttributeIntervals, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "attributes", tuple(self.attributes))
        names = [a.attribute for a in self.attributes]
        if len(set(names)) != len(names):
            raise ParameterError("A policy step names an attribute twice.")

    @classmethod
    def from_space(cls, space, bits) -> PolicyStep:
        """The step of one policy of an ``anonlib.transformations.frontier.PolicySpace`` (a flat bit-string
        or a dict attribute -> bits)."""
        bits = space.bits_of(bits)
        labels = space.intervals(bits)
        parts = space.split(bits)
        attributes = []
        for attribute, domain in zip(space.attributes, space.domains):
            cuts = [i + 1 for i, b in enumerate(parts[attribute]) if b]
            groups = [tuple(value_key(v) for v in domain[a:b]) for a, b in zip([0, *cuts], [*cuts, len(domain)])]
            if all(len(g) == 1 for g in groups):
                continue
            numeric = all(
                isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
                for v in domain
                if v != MISSING_LABEL
            )
            attributes.append(AttributeIntervals(attribute, tuple(labels[attribute]), tuple(groups), numeric))
        return cls(tuple(attributes))

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(a.attribute for a in self.attributes)

    def apply(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Each value replaced by its interval's label (text), as ``PolicySpace.generalize`` does."""
        require_columns(frame, list(self.columns))
        out = frame
        for intervals in self.attributes:
            out = _with_column(out, intervals.attribute, _interval_text(intervals, frame[intervals.attribute]))
        return out

    def apply_counted(self, frame: pd.DataFrame) -> pd.DataFrame:
        """``apply`` for callers that only count the values (a check on distinct rows): a
        categorical column stays categorical, its categories replaced by their labels (each
        category read once, no text written per row); the same values as ``apply``.

        >>> step = PolicyStep((AttributeIntervals("a", ("x / y", "z"), (("x", "y"), ("z",)), False),))
        >>> frame = pd.DataFrame({"a": pd.Categorical(["z", "x", None, "y"])})
        >>> step.apply_counted(frame)["a"].tolist()
        ['z', 'x / y', nan, 'x / y']
        >>> step.apply(frame)["a"].tolist()
        ['z', 'x / y', <NA>, 'x / y']
        """
        require_columns(frame, list(self.columns))
        out = frame
        for intervals in self.attributes:
            column = frame[intervals.attribute]
            if not isinstance(column.dtype, pd.CategoricalDtype):
                out = _with_column(out, intervals.attribute, _interval_text(intervals, column))
                continue
            used = np.unique(column.cat.codes.to_numpy())
            used = used[used >= 0]  # only the values present are read, as apply reads them
            names = np.full(len(column.cat.categories), None, dtype=object)
            names[used] = intervals.labels_of([value_key(v) for v in column.cat.categories[used]])
            kept, labels = pd.factorize(names, use_na_sentinel=True)
            codes = np.append(kept, -1)[column.cat.codes.to_numpy()]  # missing (-1) stays missing
            out = _with_column(out, intervals.attribute, pd.Categorical.from_codes(codes, labels))
        return out

    def describe(self) -> str:
        if not self.attributes:
            return "Policy that keeps every value"
        parts = []
        for a in self.attributes:
            if len(a.groups) == 1:
                parts.append(f"{a.attribute} becomes one value ({a.labels[0]}): the column is effectively removed")
            else:
                parts.append(f"{a.attribute}: {sum(map(len, a.groups))} values merged into {len(a.groups)} intervals")
        return "Policy: " + "; ".join(parts)

    @property
    def removed(self) -> tuple[str, ...]:
        return tuple(a.attribute for a in self.attributes if len(a.groups) == 1)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "attributes": [a.to_json() for a in self.attributes]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str = "a step") -> PolicyStep:
        read_object(data, where, required=("kind", "attributes"))
        attributes = []
        for item in read_list(data, "attributes", where):
            read_object(item, f"an attribute of {where}", required=("attribute", "numeric", "intervals"))
            attribute = read_text(item, "attribute", where)
            inner = f"the policy of {attribute} in {where}"
            labels, groups = [], []
            for interval in read_list(item, "intervals", inner):
                read_object(interval, f"an interval of {inner}", required=("label", "values"))
                labels.append(read_text(interval, "label", inner))
                groups.append(read_texts(interval, "values", inner))
            numeric = read_flag(item, "numeric", inner)
            attributes.append(
                _built(where, partial(AttributeIntervals, attribute, tuple(labels), tuple(groups), numeric))
            )
        return _built(where, lambda: cls(tuple(attributes)))


def _interval_text(intervals: AttributeIntervals, values: pd.Series) -> pd.api.extensions.ExtensionArray:
    """Each value's interval label as text (missing stays missing): one column of ``PolicyStep.apply``."""
    codes, labels = encode_column(values)
    return _text_of_codes(intervals.labels_of([value_key(v) for v in labels]), codes)


# ---------------------------------------------------------------- geographic aggregation


def area_labels(values: pd.Series) -> np.ndarray:
    """Area ids as text (whole numbers without ``.0``, spaces stripped), as ``anonlib.transformations.geo`` matches them."""
    from ..transformations.geo import region_labels

    return region_labels(values)


@dataclass(frozen=True)
class AggregationStep:
    """Areas merged into aggregated regions (Croft et al., VBAS): ``column``'s area
    ids replaced by their region ("A1", ...). An area id the mapping does not
    know is an error; missing stays missing."""

    kind: ClassVar[str] = "aggregation"
    column: str
    mapping: tuple[tuple[str, str], ...]
    method: str = ""
    k: int | None = None

    def __post_init__(self) -> None:
        pairs = self.mapping.items() if isinstance(self.mapping, Mapping) else self.mapping
        mapping = tuple((str(a), str(r)) for a, r in pairs)
        if not mapping:
            raise ParameterError("An aggregation step needs at least one area and its region.")
        areas = [a for a, _ in mapping]
        if len(set(areas)) != len(areas):
            repeated = sorted({a for a in areas if areas.count(a) > 1})
            raise ParameterError(f"The aggregation lists the areas {join_names(repeated)} twice.")
        object.__setattr__(self, "mapping", mapping)
        if self.k is not None:
            object.__setattr__(self, "k", whole_k(self.k))

    @classmethod
    def from_result(cls, column: str, result) -> AggregationStep:
        """The step of an ``anonlib.transformations.geo.aggregate`` result for the area column ``column``."""
        mapping = tuple(zip(map(str, result.mapping.index), map(str, result.mapping.to_numpy())))
        return cls(column, mapping, method=result.method, k=result.k)

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)

    @property
    def regions(self) -> int:
        return len({r for _, r in self.mapping})

    def apply(self, frame: pd.DataFrame) -> pd.DataFrame:
        require_columns(frame, [self.column])
        areas = area_labels(frame[self.column])
        lookup = dict(self.mapping)
        present = pd.Series(areas, dtype=object)
        mapped = present.map(lookup)
        unknown = present[mapped.isna() & present.notna()]
        if len(unknown):
            raise _unknown_values(
                self.column, list(pd.unique(unknown))[: SHOWN_VALUES + 1], "(area ids) that are in no aggregated region"
            )
        values = mapped.to_numpy(dtype=object)
        values[pd.isna(values)] = None
        return _with_column(frame, self.column, pd.Series(values, index=frame.index, dtype=object))

    def describe(self) -> str:
        how = f" ({self.method}, k = {self.k})" if self.method and self.k else ""
        if self.regions == 1:
            return f"{self.column}: every area merged into one region: the column is effectively removed"
        return f"{self.column}: {len(self.mapping):,} areas merged into {self.regions:,} regions{how}"

    @property
    def removed(self) -> tuple[str, ...]:
        return (self.column,) if self.regions == 1 else ()

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "column": self.column,
            "method": self.method,
            "k": self.k,
            "mapping": [{"area": a, "region": r} for a, r in self.mapping],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str = "a step") -> AggregationStep:
        read_object(data, where, required=("kind", "column", "method", "k", "mapping"))
        pairs = []
        for item in read_list(data, "mapping", where):
            read_object(item, f"an area of {where}", required=("area", "region"))
            pairs.append((read_text(item, "area", where), read_text(item, "region", where)))
        return _built(
            where,
            lambda: cls(
                read_text(data, "column", where),
                tuple(pairs),
                method=read_text(data, "method", where),
                k=read_whole(data, "k", where, minimum=1, optional=True),
            ),
        )


# ---------------------------------------------------------------- suppression


@dataclass(frozen=True)
class SuppressionStep:
    """Remove the records of every class (on ``quasi_identifiers``) that fails k or a
    requirement, evaluated on the table it is applied to. With ``missing="drop"``
    only the assessed records are judged (``judged_columns``: the quasi-identifiers,
    the requirements' columns and ``also_complete``, the dataset's other sensitive
    columns; ``Dataset.assessed``), the records the target is checked on and the
    release holds; the others are left as they are (they are not released anyway).

    ``also_complete`` is written to the recipe only when it names a column, so a
    recipe written before it existed reads (and replays) as it did. With ``person``
    (the dataset's person column) k counts distinct persons and every record of a
    person with a record in a failing class is removed: whole people are suppressed;
    it too is written only when set. With ``linked`` (the person and household columns whose
    records link: the release target's), a person fails when their history is shared by fewer
    than k people (any ``power`` of their records, or all), and with ``household`` among them
    whole households are suppressed (``anonlib.measures.models.acceptance``); these too are
    written only when set. ``earlier_deliveries``: the step judged histories across that many
    earlier deliveries of its project (their records, ``earlier``, held in memory only, as a key
    is: ``with_earlier``), so it is re-applied only with the project's linked deliveries before the
    one it releases (``apply --project``: all of them, for the next delivery)."""

    kind: ClassVar[str] = "suppression"
    quasi_identifiers: tuple[str, ...]
    k: int
    requirements: tuple[ModelRequirement, ...] = ()
    count: str | None = None
    missing: str = "category"
    also_complete: tuple[str, ...] = ()
    person: str | None = None
    household: str | None = None
    linked: tuple[str, ...] = ()
    power: int | None = None
    earlier_deliveries: int = 0
    earlier: Earlier | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "quasi_identifiers", tuple(self.quasi_identifiers))
        object.__setattr__(self, "requirements", tuple(self.requirements))
        object.__setattr__(self, "also_complete", tuple(self.also_complete))
        object.__setattr__(self, "linked", tuple(self.linked))
        object.__setattr__(self, "power", adversary_power(self.power))
        object.__setattr__(self, "k", whole_k(self.k))
        if self.missing not in ("category", "drop"):
            raise ParameterError("Missing values are either kept as a category ('category') or dropped ('drop').")

    @classmethod
    def from_target(cls, target, dataset) -> SuppressionStep:
        """The step suppressing what fails ``target`` (a ``ReleaseTarget``) on ``dataset``'s
        roles (a ``Dataset`` or an engine's table), judging its assessed records."""
        judged = set(dataset.quasi_identifiers) | set(target.sensitive)
        also = assessed_beyond(dataset, target, judged)
        person = getattr(dataset, "person", None)
        household = getattr(dataset, "household", None)
        linked = tuple(c for c in target.linked if c in (person, household))
        return cls(
            dataset.quasi_identifiers,
            target.k,
            target.requirements,
            dataset.count,
            dataset.missing,
            also,
            person,
            household if household in linked else None,
            linked,
            target.power if linked else None,
            target.earlier.deliveries if linked and target.earlier is not None else 0,
            target.earlier if linked else None,
        )

    def with_earlier(self, earlier: Earlier | None) -> SuppressionStep:
        """The step holding the earlier deliveries' records it was judged with (when it was)."""
        return replace(self, earlier=earlier) if self.earlier_deliveries else self

    @property
    def columns(self) -> tuple[str, ...]:
        owners = tuple(c for c in (self.person, self.household) if c)
        return self.quasi_identifiers + owners

    @property
    def judged_columns(self) -> tuple[str, ...]:
        """The columns a record must hold a value in to be judged (``missing="drop"``)."""
        sensitive = [r.sensitive for r in self.requirements]
        return tuple(dict.fromkeys([*self.quasi_identifiers, *sensitive, *self.also_complete]))

    def kept(self, frame: pd.DataFrame) -> np.ndarray:
        """Per row: True when its class meets k and every requirement (or it is not judged)."""
        columns = list(self.judged_columns)
        owners = [c for c in (self.person, self.household) if c]
        require_columns(frame, columns + ([self.count] if self.count else []) + owners)
        if self.earlier_deliveries and self.earlier is None:
            raise ParameterError(
                f"This suppression was judged on each person's history across {self.earlier_deliveries} earlier "
                f"deliver{'y' if self.earlier_deliveries == 1 else 'ies'} of its project (their records link by "
                "pseudonym); re-apply it into that project (--project NAME), which holds them."
            )
        judged = complete_rows(frame, columns) if self.missing == "drop" else np.ones(len(frame), dtype=bool)
        keep = np.ones(len(frame), dtype=bool)
        if judged.any():
            part = frame[judged].reset_index(drop=True)
            result = acceptance(
                part,
                list(self.quasi_identifiers),
                k=self.k,
                requirements=self.requirements,
                count=self.count,
                person=self.person,
                household=self.household,
                linked=self.linked,
                power=self.power,
                earlier=self.earlier,
            )
            keep[np.flatnonzero(judged)] = np.asarray(result.kept, dtype=bool)
        return keep

    def apply(self, frame: pd.DataFrame) -> pd.DataFrame:
        keep = self.kept(frame)
        return frame if keep.all() else frame[keep].reset_index(drop=True)

    def describe(self) -> str:
        rules = [f"k = {self.k}", *(r.describe() for r in self.requirements)]
        if self.household and self.household in self.linked:
            return (
                f"Suppress every record of the households ({self.household}) whose members' records together "
                f"fail {join_names(rules)} ({_power_words(self.power)}, k counted in households)"
            )
        if self.person and self.person in self.linked:
            n = self.earlier_deliveries
            across = f" across {n} earlier deliver{'y' if n == 1 else 'ies'} and this one" if n else ""
            return (
                f"Suppress every record of the people ({self.person}) whose history{across} fails "
                f"{join_names(rules)} ({_power_words(self.power)}, k counted in people)"
            )
        if self.person:
            return (
                f"Suppress every record of the people ({self.person}) with a record in a class failing "
                f"{join_names(rules)} (k counted in people)"
            )
        return f"Suppress the records in classes failing {join_names(rules)}"

    removed: ClassVar[tuple[str, ...]] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "quasi_identifiers": list(self.quasi_identifiers),
            "k": self.k,
            "requirements": [r.to_json() for r in self.requirements],
            "count": self.count,
            "missing": self.missing,
            **({"also_complete": list(self.also_complete)} if self.also_complete else {}),
            **({"person": self.person} if self.person else {}),
            **({"household": self.household} if self.household else {}),
            **({"linked": list(self.linked), "power": self.power or "all"} if self.linked else {}),
            **({"earlier_deliveries": self.earlier_deliveries} if self.earlier_deliveries else {}),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str = "a step") -> SuppressionStep:
        read_object(
            data,
            where,
            required=("kind", "quasi_identifiers", "k", "requirements", "count", "missing"),
            optional=("also_complete", "person", "household", "linked", "power", "earlier_deliveries"),
        )
        requirements = []
        for i, item in enumerate(read_list(data, "requirements", where), start=1):
            requirements.append(_built(f"privacy model {i} of {where}", partial(ModelRequirement.from_json, item)))
        also = read_texts(data, "also_complete", where) if "also_complete" in data else ()
        return _built(
            where,
            lambda: cls(
                read_texts(data, "quasi_identifiers", where),
                read_whole(data, "k", where, minimum=1),
                tuple(requirements),
                read_text(data, "count", where, optional=True),
                read_text(data, "missing", where, allowed=("category", "drop")),
                also,
                read_text(data, "person", where) if "person" in data else None,
                read_text(data, "household", where) if "household" in data else None,
                read_texts(data, "linked", where) if "linked" in data else (),
                data.get("power", "all"),
                read_whole(data, "earlier_deliveries", where, minimum=0) if "earlier_deliveries" in data else 0,
            ),
        )


def _power_words(power: int | None) -> str:
    """What the adversary knows of a linked history, in words."""
    return "the whole history" if power is None else f"any {power} of its records"


# ---------------------------------------------------------------- registry

Step = (
    BandsStep
    | GeneralizationStep
    | PolicyStep
    | AggregationStep
    | SuppressionStep
    | LocalSuppressionStep
    | MicroaggregationStep
    | TopBottomStep
    | PseudonymizeStep
    | ShiftDatesStep
    | CapRecordsStep
    | SafeHarborStep
)
STEP_KINDS: dict[str, type] = {
    cls.kind: cls
    for cls in (
        BandsStep,
        GeneralizationStep,
        PolicyStep,
        AggregationStep,
        SuppressionStep,
        LocalSuppressionStep,
        MicroaggregationStep,
        TopBottomStep,
        PseudonymizeStep,
        ShiftDatesStep,
        CapRecordsStep,
        SafeHarborStep,
    )
}


def step_from_json(data: Any, where: str = "a step") -> Step:
    """Any step from its ``to_json()`` output (dispatching on ``kind``).

    >>> step_from_json({"kind": "shuffle"})
    Traceback (most recent call last):
    ...
    anonlib.core.errors.RecipeError: The recipe is damaged or was edited by hand: 'kind' of a step is 'shuffle'; it must be one of bands, generalization, policy, aggregation, suppression, local_suppression, microaggregation, top_bottom, pseudonymize, shift_dates, cap_records, safe_harbor.
    """
    if not isinstance(data, Mapping):
        raise damaged(f"{where} must be a JSON object.")
    kind = read_text(data, "kind", where, allowed=tuple(STEP_KINDS))
    return STEP_KINDS[kind].from_json(data, where)


def removed_columns(step: Step) -> tuple[str, ...]:
    """Columns the step makes a single value (effectively removing them), known
    from the step alone; ``anonlib.workflow.cost`` also finds those that become
    one value on the data.

    >>> removed_columns(BandsStep("age", 100, 0, 0, 99, True))
    ('age',)
    """
    if isinstance(step, BandsStep):
        return (step.column,) if step.partition.categories == 1 else ()
    return tuple(step.removed)
