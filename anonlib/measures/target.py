"""The release target and its one checker: what a table must meet before it is released,
and whether it does, in the target's unit (records, or people).

A privacy officer sets it once: k (every record in a class of at least k
records on the quasi-identifiers), optionally privacy models on sensitive
attributes (``anonlib.measures.models.ModelRequirement``: l-diversity, t-closeness, ...),
the largest share of the loaded file that may be suppressed, and the unit: records,
or people through the person column (``person``; taken from the dataset's person role
by ``in_unit_of``). This one object is what every search, step suggestion, page, report,
package and command takes (``target=``); the searches walk their solution space with
``anonlib.transformations.generalization.GeneralizationSpace``, whose node check is this
same rule on class tables (a test compares the two on random tables).

``ReleaseTarget.check(dataset)`` answers in the target's unit, with the one acceptance
computation of ``anonlib.measures.models.acceptance`` (there is no separate k-only path):

- ``failing_records``: records in classes that fail k or a model (what
  suppression would still remove), per requirement in ``failing``;
- ``suppressed_records``: records already removed from the loaded file (by
  suppression steps), when the loaded file's size is given;
- ``met``: nothing fails and the suppressed share is within the limit (the
  table can be released as it is);
- ``met_after_suppression``: suppressing the failing records would keep the
  total suppressed share within the limit (ARX's acceptance: the target is
  reached by a suppression step).

With a person column (``Dataset.person``) the target is counted in people: a class
meets k when it holds k distinct persons, a person fails as a whole when any of
their records is in a failing class, and the suppression limit is a share of
people; the check gives both counts (``persons``, ``failing_persons`` beside the
records).

Example:
    >>> import pandas as pd
    >>> from anonlib.core.dataset import Dataset
    >>> ds = Dataset.from_frame("d", pd.DataFrame({"age": [30, 30, 30, 40]}), {"age": "quasi-identifier"})
    >>> check = ReleaseTarget(k=2).check(ds)
    >>> check.met, check.failing_records, check.failing_classes, check.examples
    (False, 1, 1, (('age=40', 1),))
    >>> ReleaseTarget(k=2, max_suppressed=0.25).check(ds).met_after_suppression
    True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..core.dataset import Dataset
from ..core.equivalence import EncodedTable, encode, person_codes, persons_per_class
from ..core.errors import ColumnError, ParameterError, RecipeError, join_names
from ..core.fields import read_list, read_number, read_object, read_text, read_texts, read_whole
from ..core.histories import Earlier, adversary_power, check_history_work, owner_pairs, owners_sharing, sequence_ids
from ..core.metrics import whole_k
from ..core.numbers import percent
from .models import ModelRequirement, acceptance, suppression_limit
from .wildcard import NOT_IN_PEOPLE, marked_codes, wildcard_matches

EXAMPLES_SHOWN = 10  # failing classes named in a check (smallest first)


@dataclass(frozen=True)
class ReleaseTarget:
    """k, the switched-on privacy models, the largest suppressed share, and the unit.

    ``person`` names the column of people when the target is counted in people (a class
    meets k with k distinct people, the suppression limit is a share of people); None
    counts records.

    >>> ReleaseTarget(k=5, max_suppressed=0.01).describe()
    'k = 5, at most 1% of records suppressed'
    >>> ReleaseTarget(k=5, max_suppressed=0.05, person="pid").describe()
    'k = 5 people, at most 5% of people suppressed'
    """

    k: int = 5
    requirements: tuple[ModelRequirement, ...] = ()
    max_suppressed: float = 0.0
    person: str | None = None
    household: str | None = None
    linked: tuple[str, ...] = ()
    power: int | None = None
    # a project's earlier deliveries judged with this one (``after``); compared by identity, never written
    earlier: Earlier | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "k", whole_k(self.k))
        object.__setattr__(self, "requirements", tuple(self.requirements))
        object.__setattr__(self, "max_suppressed", suppression_limit(self.max_suppressed))
        for column, what in ((self.person, "person"), (self.household, "household")):
            if column is not None and (not isinstance(column, str) or not column):
                raise ParameterError(f"The {what} column of a release target must be a column name.")
            if column is not None and column in self.sensitive:
                raise ColumnError(
                    f"'{column}' is the {what} column; it cannot also be the sensitive attribute of a privacy model."
                )
        if self.person is not None and self.person == self.household:
            raise ColumnError(f"'{self.person}' cannot be both the person and the household column.")
        linked = (self.linked,) if isinstance(self.linked, str) else tuple(dict.fromkeys(self.linked))
        if any(not isinstance(c, str) or not c for c in linked):
            raise ParameterError("The linked columns of a release target must be column names.")
        object.__setattr__(self, "linked", linked)
        object.__setattr__(self, "power", adversary_power(self.power))

    @property
    def unit(self) -> str:
        """What the target counts: ``"households"`` (a household column whose records link: its
        members' records together), ``"histories"`` (a person column whose records link: each
        person's whole history), ``"people"`` (a person column) or ``"records"``.

        >>> ReleaseTarget().unit, ReleaseTarget(person="pid").unit
        ('records', 'people')
        >>> ReleaseTarget(person="pid", linked=("pid",)).unit, ReleaseTarget(household="hh", linked=("hh",)).unit
        ('histories', 'households')
        """
        if self.household is not None and self.household in self.linked:
            return "households"
        if self.person is not None:
            return "histories" if self.person in self.linked else "people"
        return "records"

    @property
    def unit_column(self) -> str | None:
        """The column whose owners the target counts and suppresses whole: the person, or the
        household (None: counted in records).

        >>> ReleaseTarget(person="pid").unit_column, ReleaseTarget(household="hh", linked=("hh",)).unit_column
        ('pid', 'hh')
        """
        return {"people": self.person, "histories": self.person, "households": self.household}.get(self.unit)

    @property
    def linkable(self) -> bool:
        """Whether records link (a person's history, a household's members: ``unit``)."""
        return self.unit in ("histories", "households")

    @property
    def whole(self) -> str:
        """What suppression removes whole, in the plural: "records", "people" or "households"."""
        return {"histories": "people"}.get(self.unit, self.unit)

    def in_unit_of(self, dataset: Dataset, released: Sequence[str] = ()) -> ReleaseTarget:
        """This target counted in the unit of ``dataset``: in people through its person role,
        in households through its household role, else in records (the unit always comes from
        the dataset's roles); a person or household column among ``released`` (the release
        holds it in any form: its pseudonym) links its records (``linked``), as does one the
        officer chose to treat as linkable (already in ``linked``).

        >>> import pandas as pd
        >>> ds = Dataset.from_frame("d", pd.DataFrame({"age": [30], "pid": ["a"]}),
        ...                         {"age": "quasi-identifier", "pid": "person"})
        >>> ReleaseTarget(k=2).in_unit_of(ds).person, ReleaseTarget(k=2).in_unit_of(ds, released=["pid"]).unit
        ('pid', 'histories')
        """
        person, household = dataset.person, dataset.household
        chosen = set(self.linked) | set(released)
        linked = tuple(c for c in (person, household) if c is not None and c in chosen)
        if (person, household, linked) == (self.person, self.household, self.linked):
            return self
        return replace(self, person=person, household=household, linked=linked)

    def released_as(self, dataset: Dataset, columns: Sequence[str]) -> ReleaseTarget:
        """This target as a release of ``columns`` of ``dataset`` states it: counted by the dataset's
        person and household columns, those released (in any form) linked.

        >>> import pandas as pd
        >>> ds = Dataset.from_frame("d", pd.DataFrame({"age": [30], "pid": ["a"]}),
        ...                         {"age": "quasi-identifier", "pid": "person"})
        >>> ReleaseTarget(k=2).released_as(ds, ["age", "pid"]).unit, ReleaseTarget(k=2).released_as(ds, ["age"]).unit
        ('histories', 'people')
        """
        released = [c for c in (dataset.person, dataset.household) if c is not None and c in columns]
        person = dataset.person if dataset.person is not None else self.person
        household = dataset.household if dataset.household is not None else self.household
        if (person, household) == (self.person, self.household) and not released:
            return self
        return replace(self, person=person, household=household).linking(*released)

    def counted_by(self, person: str | None) -> ReleaseTarget:
        """This target counted in people by the column ``person`` (None: in records).

        >>> ReleaseTarget(k=2).counted_by("pid").unit
        'people'
        """
        return self if person == self.person else replace(self, person=person)

    def linking(self, *columns: str) -> ReleaseTarget:
        """This target with the records of ``columns`` (the person, the household) linked.

        >>> ReleaseTarget(k=2, person="pid").linking("pid").unit
        'histories'
        """
        linked = tuple(dict.fromkeys([*self.linked, *columns]))
        return self if linked == self.linked else replace(self, linked=linked)

    def rule(self) -> str:
        """What the target asks of a table, in words, in its unit.

        >>> ReleaseTarget(k=5, max_suppressed=0.05).rule()
        'every class of records sharing the quasi-identifiers holds at least 5 records, after suppressing at most 5% of records.'
        >>> ReleaseTarget(k=5, person="pid", linked=("pid",), power=2).rule()
        "any 2 of a person's records are found in the histories of at least 5 people."
        """
        k = self.k
        if self.unit == "records":
            head = f"every class of records sharing the quasi-identifiers holds at least {k} records"
        elif self.unit == "people":
            head = f"every class of records sharing the quasi-identifiers holds the records of at least {k} people"
        elif self.power is not None:
            whose = "a household's members'" if self.unit == "households" else "a person's"
            head = f"any {self.power} of {whose} records are found in the histories of at least {k} {self.whole}"
        elif self.unit == "histories":
            head = f"every person's whole history (the sequence of their rows) is shared by at least {k} people"
        else:
            head = f"every household's members' rows together are shared by at least {k} households"
        models = " and every class meets the privacy models" if self.requirements else ""
        limit = (
            f", after suppressing at most {percent(self.max_suppressed, compact=True)} of {self.whole}"
            if self.max_suppressed
            else ""
        )
        return f"{head}{self.cumulative}{models}{limit}."

    def owner_arguments(self) -> dict[str, Any]:
        """The owners ``anonlib.measures.models.acceptance`` counts this target's unit by.

        >>> ReleaseTarget(person="pid", linked=("pid",), power=2).owner_arguments()
        {'person': 'pid', 'household': None, 'linked': ('pid',), 'power': 2, 'earlier': None}
        """
        return {
            "person": self.person if self.unit != "records" else None,
            "household": self.household if self.unit == "households" else None,
            "linked": self.linked if self.linkable else (),
            "power": self.power,
            "earlier": self.earlier if self.linkable else None,
        }

    def after(self, earlier: Earlier | None) -> ReleaseTarget:
        """This target on the cumulative history: ``earlier`` records (a project's earlier
        deliveries under linked pseudonyms) kept as released and judged with the new ones.

        >>> ReleaseTarget(person="p", linked=("p",)).after(None).earlier is None
        True
        """
        return replace(self, earlier=earlier)

    @property
    def cumulative(self) -> str:
        """The earlier deliveries the target is judged with, in words ("" when none)."""
        if self.earlier is None or not self.linkable:
            return ""
        n = self.earlier.deliveries
        return f" across this delivery and {n} earlier deliver{'y' if n == 1 else 'ies'} linked by pseudonym"

    def power_text(self) -> str:
        """What the adversary knows of a linked history, in words ("" when records do not link).

        >>> ReleaseTarget(person="p", linked=("p",)).power_text(), ReleaseTarget(person="p", linked=("p",), power=2).power_text()
        ("over each person's whole history", "on any 2 of a person's records")
        """
        if not self.linkable:
            return ""
        whose = "a household's members'" if self.unit == "households" else "a person's"
        if self.power is None:
            return (
                "over each household's members together"
                if self.unit == "households"
                else ("over each person's whole history")
            )
        return f"on any {self.power} of {whose} records"

    @property
    def sensitive(self) -> tuple[str, ...]:
        """Sensitive attributes the switched-on models need, in order, once each."""
        return tuple(dict.fromkeys(r.sensitive for r in self.requirements))

    def describe(self) -> str:
        """The target in words, counted in its unit.

        >>> ReleaseTarget(k=5, max_suppressed=0.05, person="pid", linked=("pid",)).describe()
        "k = 5 people over each person's whole history, at most 5% of people suppressed"
        >>> ReleaseTarget(k=3, household="hh", linked=("hh",), power=2).describe()
        "k = 3 households on any 2 of a household's members' records, no household suppressed"
        """
        head = f"k = {self.k}" + ("" if self.whole == "records" else f" {self.whole}")
        if self.linkable:
            head += f" {self.power_text()}{self.cumulative}"
        parts = [head, *(r.describe() for r in self.requirements)]
        single = {"records": "record", "people": "person", "households": "household"}[self.whole]
        parts.append(
            f"at most {percent(self.max_suppressed, compact=True)} of {self.whole} suppressed"
            if self.max_suppressed
            else f"no {single} suppressed"
        )
        return ", ".join(parts)

    def check(
        self,
        dataset: Dataset,
        *,
        loaded_records: int | None = None,
        wildcard: str | None = None,
        loaded_persons: int | None = None,
    ) -> TargetCheck:
        """Whether ``dataset`` (its quasi-identifiers, its count column) meets the target.

        Judged on the assessed records (``Dataset.assessed`` with the models' columns):
        with ``missing="drop"``, those holding a value in every quasi-identifier, every
        sensitive column and every column a model reads, the records the release holds.

        ``loaded_records`` is the number of records of the loaded file (the
        base of the suppressed share; records missing from ``dataset`` count
        as suppressed); default: the dataset's own records. With ``wildcard``
        (the mark of a locally suppressed cell, ``*``), k counts for each record
        the records agreeing with it on every quasi-identifier where neither
        holds the mark (``anonlib.transformations.suppression``'s reading); the privacy models
        are judged on the classes as they are. ``loaded_persons`` is the loaded file's
        people (with a person column; default: the dataset's own).
        """
        qis = list(dataset.quasi_identifiers)
        missing = [s for s in self.sensitive if s not in dataset.frame.columns]
        if missing:
            raise ParameterError(
                f"The release target has a privacy model on {join_names(missing)}, which is not a column of the data."
            )
        person = self.person if self.person is not None else dataset.person
        household = self.household if self.household is not None else dataset.household
        for column, what in ((person, "people"), (household, "households")):
            if column is not None and column not in dataset.frame.columns:
                raise ColumnError(f"The release target counts {what} by '{column}', which is not a column of the data.")
            if column is not None and column in qis:
                raise ColumnError(f"'{column}' says whose record it is; it cannot also be a quasi-identifier.")
        target = (
            self
            if (person, household) == (self.person, self.household)
            else replace(self, person=person, household=household)
        )
        frame, _ = dataset.assessed_frame(
            qis + [s for s in self.sensitive if s not in qis], extra=self.sensitive, person=True
        )
        count = dataset.count
        marked = wildcard is not None and bool(qis)
        whole = target.whole != "records"
        if marked and whole:
            raise ParameterError(NOT_IN_PEOPLE + " Undo the local suppression.")
        if target.linkable and target.power is not None and target.power > 1 and qis:
            _check_history_work(frame, qis, count, target)
        result = acceptance(
            frame,
            qis,
            k=1 if marked else self.k,
            requirements=self.requirements,
            max_suppressed=self.max_suppressed,
            count=count,
            **target.owner_arguments(),
        )
        failing_rows = ~np.asarray(result.kept, dtype=bool)
        failing = tuple((str(what), int(n)) for what, n in result.failing)
        failing_records = int(result.suppressed_records)
        if marked:
            short = wildcard_matches(marked_codes(frame, qis, wildcard, count=count), qis, count=count) < self.k
            weights = np.ones(len(frame), dtype=np.int64) if count is None else frame[count].to_numpy(dtype=np.int64)
            if self.k > 1:  # acceptance ran with k = 1, so it listed the models only
                failing = ((f"k = {self.k}", int(weights[short].sum())),) + failing
            failing_rows = failing_rows | short
            failing_records = int(weights[failing_rows].sum())
        records = int(result.records)
        base = records if loaded_records is None else int(loaded_records)
        if base < records:
            raise ParameterError(f"The loaded file has {base:,} records, fewer than the {records:,} being checked.")
        unit_column = target.unit_column
        if target.linkable:
            classes, examples = _failing_histories(frame, qis, count, failing_rows, unit_column)
        else:
            classes, examples = _failing_classes(frame, qis, count, failing_rows, unit_column, result.encoded)
        persons = failing_persons = base_persons = None
        if result.persons is not None:
            persons, failing_persons = int(result.persons), int(result.suppressed_persons)
            base_persons = persons if loaded_persons is None else int(loaded_persons)
            if base_persons < persons:
                raise ParameterError(
                    f"The loaded file has {base_persons:,} {target.whole}, fewer than the {persons:,} being checked."
                )
        return TargetCheck(
            target=target,
            records=records,
            loaded_records=base,
            failing_records=failing_records,
            failing_classes=classes,
            failing=failing,
            examples=examples,
            persons=persons,
            loaded_persons=base_persons,
            failing_persons=failing_persons,
            persons_in_failing=None if persons is None else int(result.persons_in_failing),
            records_in_failing=None if persons is None else int(result.records_in_failing),
            stuck=int(result.stuck),
        )

    def to_json(self) -> dict[str, Any]:
        """The target as plain JSON values (``person`` only when counted in people, so a
        target in records reads as it always did).

        >>> ReleaseTarget(k=3).to_json()
        {'k': 3, 'max_suppressed': 0.0, 'requirements': []}
        >>> ReleaseTarget(k=3, person="pid").to_json()["person"]
        'pid'
        """
        data: dict[str, Any] = {
            "k": self.k,
            "max_suppressed": self.max_suppressed,
            "requirements": [r.to_json() for r in self.requirements],
        }
        if self.person is not None:
            data["person"] = self.person
        if self.household is not None:
            data["household"] = self.household
        if self.linked:  # records that link (or the officer treats as linkable): whose
            data["linked"] = list(self.linked)
        if self.linked or self.power is not None:  # what the adversary knows of a history
            data["power"] = "all" if self.power is None else self.power
        if self.linkable:
            data["unit"] = self.unit
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str = "the target") -> ReleaseTarget:
        """The target from ``to_json``'s output; a ``RecipeError`` sentence when it is damaged.

        >>> ReleaseTarget.from_json({"k": 3, "max_suppressed": 0.0, "requirements": []})
        ReleaseTarget(k=3, requirements=(), max_suppressed=0.0, person=None, household=None, linked=(), power=None)
        """
        read_object(
            data,
            where,
            required=("k", "max_suppressed", "requirements"),
            optional=("person", "household", "linked", "power", "unit"),
        )
        k = read_whole(data, "k", where, minimum=1)
        share = read_number(data, "max_suppressed", where, minimum=0.0, maximum=1.0)
        requirements = []
        for i, item in enumerate(read_list(data, "requirements", where), start=1):
            try:
                requirements.append(ModelRequirement.from_json(item))
            except RecipeError:
                raise
            except Exception:  # noqa: BLE001 - any malformed entry is one sentence
                raise RecipeError(
                    f"The recipe is damaged or was edited by hand: privacy model {i} of {where} cannot be read."
                ) from None
        person = read_text(data, "person", where, optional=True)
        household = read_text(data, "household", where, optional=True)
        linked = tuple(read_texts(data, "linked", where)) if "linked" in data else ()
        power = data.get("power", "all")
        try:
            power = adversary_power(power)
        except ParameterError as err:
            text = str(err)
            raise RecipeError(
                f"The recipe is damaged or was edited by hand: in {where}, {text[:1].lower()}{text[1:]}"
            ) from None
        try:
            target = cls(
                k=k,
                requirements=tuple(requirements),
                max_suppressed=share,
                person=person,
                household=household,
                linked=linked,
                power=power,
            )
        except (ParameterError, ColumnError) as err:
            raise RecipeError(f"The recipe is damaged or was edited by hand: {err}") from None
        if "unit" in data and data["unit"] != target.unit:
            raise RecipeError(
                f"The recipe is damaged or was edited by hand: {where} says it counts {data['unit']!s:.40}, but its "
                f"columns count {target.unit}."
            )
        return target


@dataclass(frozen=True)
class TargetCheck:
    """A table against the release target, in records.

    ``failing`` lists (requirement, records in classes failing it), e.g.
    ``("k = 5", 312)``; ``examples`` the smallest failing classes as
    (``"age=30-39, sex=F"``, records; people with a person column).

    With a person column, ``persons``, ``loaded_persons`` and ``failing_persons``
    count people (None otherwise), and the suppressed share is a share of people.
    ``failing_persons`` and ``failing_records`` are what suppression would remove
    (whole people, again until nothing fails); ``persons_in_failing`` and
    ``records_in_failing`` the people with a record in a failing class and the records
    in failing classes of the table as it is (fewer, when removing people leaves other
    classes short).

    In the units whose records link (``ReleaseTarget.unit``: histories, households), a
    person (household) fails when its history (its members' records together) is shared by
    fewer than k, ``failing_classes`` counts the distinct histories failing and ``examples``
    shows the smallest of them; in the households unit the ``persons`` fields count
    households (what suppression removes whole: ``unit_noun``).
    """

    target: ReleaseTarget
    records: int
    loaded_records: int
    failing_records: int
    failing_classes: int
    failing: tuple[tuple[str, int], ...] = ()
    examples: tuple[tuple[str, int], ...] = field(default=(), compare=False)
    persons: int | None = None
    loaded_persons: int | None = None
    failing_persons: int | None = None
    persons_in_failing: int | None = None
    records_in_failing: int | None = None
    stuck: int = 0  # owners failing over their cumulative history with no record in this table

    @property
    def by_person(self) -> bool:
        """Whether the check counts people or households (a person column is set, or a
        household whose records link)."""
        return self.persons is not None

    def unit_noun(self, n: int | None) -> str:
        """``n`` of what the target suppresses whole, in words: "1 person", "3 households"."""
        return households(n) if self.target.unit == "households" else people(n)

    @property
    def suppressed_records(self) -> int:
        """Records of the loaded file no longer in the table (suppressed by earlier steps)."""
        return self.loaded_records - self.records

    @property
    def suppressed_persons(self) -> int | None:
        """People of the loaded file no longer in the table (with a person column)."""
        return None if self.persons is None else self.loaded_persons - self.persons

    @property
    def suppressed_share(self) -> float:
        if self.by_person:
            return self.suppressed_persons / self.loaded_persons if self.loaded_persons else 0.0
        return self.suppressed_records / self.loaded_records if self.loaded_records else 0.0

    @property
    def share_after_suppression(self) -> float:
        """Share of the loaded file suppressed once the failing records are suppressed too
        (of people, with a person column)."""
        if self.by_person:
            total = self.suppressed_persons + self.failing_persons
            return total / self.loaded_persons if self.loaded_persons else 0.0
        total = self.suppressed_records + self.failing_records
        return total / self.loaded_records if self.loaded_records else 0.0

    @property
    def met(self) -> bool:
        """The table can be released as it is: nothing fails and suppression is within the limit."""
        return self.failing_records == 0 and self.suppressed_share <= self.target.max_suppressed and not self.stuck

    @property
    def met_after_suppression(self) -> bool:
        """Suppressing the failing records would meet the target (within the suppression limit)."""
        return self.share_after_suppression <= self.target.max_suppressed and not self.stuck

    def sentence(self) -> str:
        """One sentence a privacy officer reads first.

        >>> import pandas as pd
        >>> ds = Dataset.from_frame("d", pd.DataFrame({"age": [30, 30, 40]}), {"age": "quasi-identifier"})
        >>> ReleaseTarget(k=2).check(ds).sentence()
        'Not met: 1 of 3 records (33.3%) is in a class failing k = 2; suppressing it would exceed the limit of 0%.'
        >>> ReleaseTarget(k=1).check(ds).sentence()
        'Met: all 3 records are in classes meeting k = 1.'
        """
        if self.by_person:
            return self._people_sentence()
        limit = percent(self.target.max_suppressed, compact=True)
        suppressed = (
            f" {records(self.suppressed_records)} ({percent(self.suppressed_share, compact=True)}) suppressed so far."
            if self.suppressed_records
            else ""
        )
        if self.met:
            return f"Met: all {self.records:,} records are in classes meeting {self._what()}." + suppressed
        failing = self.failing_records
        if failing == 0:
            return (
                f"Not met: {records(self.suppressed_records)} ({percent(self.suppressed_share, compact=True)}) are "
                f"suppressed, more than the limit of {limit}."
            )
        share = failing / self.records if self.records else 0.0
        one = failing == 1
        head = (
            f"{failing:,} of {records(self.records)} ({percent(share, compact=True)}) {'is' if one else 'are'} in "
            f"{'a class' if self.failing_classes == 1 else 'classes'} failing {self._failing_what()}"
        )
        if self.met_after_suppression:
            return (
                f"Met once {'it is' if one else 'they are'} suppressed: {head}, within the limit of {limit}."
                + suppressed
            )
        return f"Not met: {head}; suppressing {'it' if one else 'them'} would exceed the limit of {limit}." + suppressed

    def _people_sentence(self) -> str:
        """``sentence`` counted in people (or households), the records beside them.

        >>> import pandas as pd
        >>> df = pd.DataFrame({"age": [30, 30, 30, 40], "pid": ["a", "a", "b", "c"]})
        >>> ds = Dataset.from_frame("d", df, {"age": "quasi-identifier", "pid": "person"})
        >>> ReleaseTarget(k=2).check(ds).sentence()
        'Not met: 1 of 3 people (33.3%; 1 record) has records in a class failing k = 2 (counted in people); suppressing this person would exceed the limit of 0%.'
        >>> ReleaseTarget(k=2, linked=("pid",)).check(ds).sentence()
        "Not met: 3 of 3 people (100%; 4 records) have a history shared by fewer than 2 people (k = 2 over each person's whole history); suppressing them would exceed the limit of 0%."
        """
        limit = percent(self.target.max_suppressed, compact=True)
        noun = self.unit_noun
        if self.stuck:
            return (
                f"Not met: {noun(self.stuck)} released earlier would be left with no record in this delivery and a "
                f"history fewer than {self.target.k} share ({self._what()} {self.target.power_text()}"
                f"{self.target.cumulative}): suppressing people in a later delivery sets their history apart."
            )
        suppressed = (
            f" {noun(self.suppressed_persons)} ({percent(self.suppressed_share, compact=True)}; "
            f"{records(self.suppressed_records)}) suppressed so far."
            if self.suppressed_persons
            else ""
        )
        if self.met:
            return f"Met: all {noun(self.persons)} ({records(self.records)}) {self._meeting()}." + suppressed
        removed = self.failing_persons or 0
        if removed == 0:
            return (
                f"Not met: {noun(self.suppressed_persons)} ({percent(self.suppressed_share, compact=True)}) are "
                f"suppressed, more than the limit of {limit}."
            )
        failing = self.persons_in_failing if self.persons_in_failing is not None else removed
        in_records = self.records_in_failing if self.records_in_failing is not None else self.failing_records
        share = failing / self.persons if self.persons else 0.0
        one = failing == 1
        head = (
            f"{failing:,} of {noun(self.persons)} ({percent(share, compact=True)}; {records(in_records)}) "
            f"{self._failing_phrase(one)}"
        )
        # Suppressing a person removes their other records too, which can leave other classes
        # short: what suppression takes out is said apart when it is more than what fails.
        more = removed != failing
        taken = (
            f"suppression takes out {noun(removed)} ({records(self.failing_records)}), as removing "
            f"{self.target.whole} leaves others short"
        )
        this = "this household" if self.target.unit == "households" else "this person"
        if self.met_after_suppression:
            if more:
                return f"Met once suppressed: {head}; {taken}, within the limit of {limit}." + suppressed
            return (
                f"Met once {this + ' is' if one else 'they are'} suppressed: {head}, within the limit of "
                f"{limit}." + suppressed
            )
        if more:
            return f"Not met: {head}; {taken}, more than the limit of {limit}." + suppressed
        return (
            f"Not met: {head}; suppressing {'them' if not one else this} would exceed the limit of {limit}."
            + suppressed
        )

    def _meeting(self) -> str:
        """What every person (household) of a table meeting the target meets, in words."""
        target = self.target
        if not target.linkable:
            return f"are in classes meeting {self._what()} (counted in people)"
        whole = target.whole
        if target.power is None:
            shared = "a history" if target.unit == "histories" else "their members' records together"
            return (
                f"have {shared} shared by at least {target.k} {whole} ({self._what()} {target.power_text()}"
                f"{target.cumulative})"
            )
        return f"share any {target.power} of their records with at least {target.k} {whole} ({self._what()})"

    def _failing_phrase(self, one: bool) -> str:
        """What the failing people (households) have, in words (``one``: a single one)."""
        target = self.target
        has = "has" if one else "have"
        models = [what for what, n in self.failing if n > 0 and not what.startswith("k = ")]
        extra = f", or records in classes failing {join_names(models)}" if models else ""
        if not target.linkable:
            return (
                f"{has} records in {'a class' if self.failing_classes == 1 else 'classes'} failing "
                f"{self._failing_what()} (counted in people)"
            )
        whole = target.whole
        if target.power is None:
            shared = "a history" if target.unit == "histories" else "their members' records together"
            return (
                f"{has} {shared} shared by fewer than {target.k} {whole} ({self._what()} {target.power_text()}"
                f"{target.cumulative})" + extra
            )
        return (
            f"{has} {target.power} records that fewer than {target.k} {whole} share "
            f"({self._what()} {target.power_text()})" + extra
        )

    def _what(self) -> str:
        return ", ".join([f"k = {self.target.k}", *(r.describe() for r in self.target.requirements)])

    def _failing_what(self) -> str:
        names = [what for what, n in self.failing if n > 0]
        return join_names(names) if names else self._what()


def records(n: int) -> str:
    """``"1 record"``, ``"2,000 records"``.

    >>> records(1), records(2000)
    ('1 record', '2,000 records')
    """
    return f"{n:,} record" + ("" if n == 1 else "s")


def people(n: int | None) -> str:
    """``"1 person"``, ``"2,000 people"``.

    >>> people(1), people(2000)
    ('1 person', '2,000 people')
    """
    n = int(n or 0)
    return f"{n:,} person" if n == 1 else f"{n:,} people"


def households(n: int | None) -> str:
    """``"1 household"``, ``"2,000 households"``.

    >>> households(1), households(2000)
    ('1 household', '2,000 households')
    """
    n = int(n or 0)
    return f"{n:,} household" + ("" if n == 1 else "s")


def _failing_classes(
    frame,
    qis: Sequence[str],
    count: str | None,
    failing_rows: np.ndarray,
    person: str | None = None,
    encoded: EncodedTable | None = None,
) -> tuple[int, tuple[tuple[str, int], ...]]:
    """Number of failing classes and the smallest of them as (values, records; people
    with a ``person`` column); ``encoded``, when given, holds the quasi-identifiers encoded
    (``encode``, sorted labels), read instead of encoding them again."""
    if not failing_rows.any():
        return 0, ()
    if not qis:
        weights = np.ones(len(frame), dtype=np.int64) if count is None else frame[count].to_numpy(dtype=np.int64)
        return 1, (("every record (no quasi-identifier)", int(weights[failing_rows].sum())),)
    table = encode(frame, qis, count=count) if encoded is None else encoded
    classes = table.classes(qis)
    sizes = classes.sizes
    if person is not None:
        codes, n_persons = person_codes(frame[person], person)
        sizes = persons_per_class(classes.ids, classes.n_classes, codes, n_persons)
    marked = np.zeros(classes.n_classes, dtype=bool)
    marked[classes.ids[failing_rows]] = True
    failing_ids = np.flatnonzero(marked)  # np.unique's ids, in order, without sorting the rows
    order = failing_ids[np.lexsort((failing_ids, sizes[failing_ids]))][:EXAMPLES_SHOWN]
    first = classes.first_rows
    examples = []
    for class_id in order:
        row = first[class_id]
        values = ", ".join(
            f"{column}={table.labels[j][table.codes[row, j]]}" for column, j in zip(qis, map(table.position, qis))
        )
        examples.append((values, int(sizes[class_id])))
    return int(failing_ids.size), tuple(examples)


HISTORY_ROWS_SHOWN = 3  # classes named per failing history in an example


def _history_pairs(frame, qis: Sequence[str], count: str | None, column: str):
    """The (owner, class) pairs of ``frame`` for the owners of ``column`` (``owner_pairs``), the
    classes' encoding and the owners' codes."""
    table = encode(frame, qis, count=count)
    classes = table.classes(qis)
    codes, n = person_codes(frame[column], column)
    pairs = owner_pairs(classes.ids, classes.n_classes, codes, n, table.weights)
    return pairs, table, classes, codes


def _check_history_work(frame, qis: Sequence[str], count: str | None, target: ReleaseTarget) -> None:
    """A check at a power of 2 or more enumerates sub-multisets: estimated first, refused in a sentence."""
    for column in target.linked:
        if column in frame.columns:
            pairs = _history_pairs(frame, qis, count, column)[0]
            check_history_work(pairs.sizes, pairs.lengths, power=target.power)


def _failing_histories(
    frame, qis: Sequence[str], count: str | None, failing_rows: np.ndarray, column: str | None
) -> tuple[int, tuple[tuple[str, int], ...]]:
    """Distinct histories of the failing people (households) and the least shared of them as
    (its classes and their records, the people sharing exactly that history)."""
    if not failing_rows.any() or column is None or not qis:
        return (1 if failing_rows.any() else 0), ()
    pairs, table, classes, codes = _history_pairs(frame, qis, count, column)
    hist, n_hist = sequence_ids(pairs, len(pairs.sizes))
    failing_owner = np.zeros(len(pairs.sizes), dtype=bool)
    failing_owner[codes[failing_rows]] = True
    present = hist >= 0
    sharing = np.bincount(hist[present], minlength=n_hist)
    failing_hist = np.unique(hist[failing_owner & present])
    order = failing_hist[np.lexsort((failing_hist, sharing[failing_hist]))][:EXAMPLES_SHOWN]
    owner_of = np.full(n_hist, -1, dtype=np.int64)
    owner_of[hist[present]] = np.flatnonzero(present)
    first = classes.first_rows
    examples = []
    for h in order.tolist():
        owner = owner_of[h]
        at = slice(pairs.start[owner], pairs.start[owner + 1])
        parts = []
        for cls, n in list(zip(pairs.cls[at].tolist(), pairs.records[at].tolist()))[:HISTORY_ROWS_SHOWN]:
            row = first[cls]
            values = ", ".join(
                f"{c}={table.labels[j][table.codes[row, j]]}" for c, j in zip(qis, map(table.position, qis))
            )
            parts.append(values + (f" (x{n})" if n > 1 else ""))
        more = int(pairs.start[owner + 1] - pairs.start[owner]) - HISTORY_ROWS_SHOWN
        text = "; ".join(parts) + (f"; and {more} more" if more > 0 else "")
        examples.append((f"{records(int(pairs.sizes[owner]))}: {text}", int(sharing[h])))
    return int(failing_hist.size), tuple(examples)


def people_holding_records(frame, column: str, count: str | None = None) -> int:
    """The distinct owners (people, households) of ``column`` with at least one record: a row of
    no records (``count`` 0) names no one, as the search and the engines count them.

    >>> import pandas as pd
    >>> people_holding_records(pd.DataFrame({"pid": ["x", "y", "y"], "n": [0, 1, 0]}), "pid", "n")
    1
    """
    values = frame[column]
    if count is not None:
        values = values[frame[count].to_numpy(dtype=np.int64) > 0]
    return int(values.nunique())


def unit_k(frame, quasi_identifiers: Sequence[str], target: ReleaseTarget, count: str | None = None) -> int:
    """The smallest group of ``frame`` in ``target``'s unit: records per class, people per class,
    or, when records link, the fewest people (households) sharing a history as the target's power
    sees it (0 for an empty table).

    >>> import pandas as pd
    >>> df = pd.DataFrame({"a": [1, 1, 1, 2], "pid": ["x", "y", "y", "z"]})
    >>> unit_k(df, ["a"], ReleaseTarget()), unit_k(df, ["a"], ReleaseTarget(person="pid"))
    (1, 1)
    >>> unit_k(df.iloc[:3], ["a"], ReleaseTarget(person="pid")), unit_k(df.iloc[:3], ["a"], ReleaseTarget(person="pid", linked=("pid",)))
    (2, 1)
    """
    if count is not None and len(frame):  # a row of no records (a count of 0) is no one's and in no class
        frame = frame[frame[count].to_numpy(dtype=np.int64) > 0]
    if len(frame) == 0:
        return 0
    classes = encode(frame, list(quasi_identifiers), count=count).classes()
    if target.unit == "records":
        sizes = classes.sizes
    elif not target.linkable:
        codes, n = person_codes(frame[target.person], target.person)
        sizes = persons_per_class(classes.ids, classes.n_classes, codes, n)
    else:
        weights = None if count is None else frame[count].to_numpy(dtype=np.int64)
        shared = []
        for column in target.linked:
            codes, n = person_codes(frame[column], column)
            sharing = owners_sharing(classes.ids, classes.n_classes, codes, n, weights, power=target.power)
            shared.append(sharing[sharing > 0])
        sizes = np.concatenate(shared) if shared else np.zeros(0, dtype=np.int64)
    sizes = sizes[sizes > 0]
    return int(sizes.min()) if sizes.size else 0
