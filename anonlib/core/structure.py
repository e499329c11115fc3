"""Roles read off a table's structure, whatever the columns are called.

- **Time**: a column saying when a record was made: its name says a year, wave, day,
  week, month, visit or time (not a birth date), its values are years (1900-2100) or
  dates. A **day offset** is time counted in whole days from a start (days since
  enrolment, a pandemic day): whole numbers under a name saying day.
- **Person** (``person_structure``): its values repeat (a quarter of the records or
  more share theirs with another record), a time column varies within them (nine in ten
  people with several records are seen at different times), the pair (value, time) is
  close to unique (nine in ten records or more), and the records of one value agree on
  something that does not change (a sex, a birth year: some other column constant within
  19 of 20 of them, where chance would not make it so) — a person seen again, not a
  coincidence of equal values. The finest such column wins (a person, not a cohort).
  A time column is never the person.
- **Household** (``household_structure``): small groups (2-15 records) with no time
  varying within, whose members differ in age or sex (half of the groups of two or more
  records at least): several people living together, not one person seen again.

Everything is counted on integer codes (``pd.factorize``, ``np.bincount``): 10^6 records in
about a second (``bench/bench_structure.py``). ``anonlib.core.dataset.role_guesses`` turns
what is found here into the roles the Dataset page, the sidebar and ``profile --json``
show (one place).

Example:
    >>> frame = pd.DataFrame({"nr": [i // 4 for i in range(80)], "year": [80 + i % 4 for i in range(80)],
    ...                       "black": [(i // 4) % 2 for i in range(80)]})
    >>> found = find_structure(frame)
    >>> found.person.column, found.person.time, found.person.most_records, found.household
    ('nr', 'year', 4, None)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

PERSON_MIN_VALUES = 10  # fewer distinct values: a category, not people
PERSON_MAX_MEAN_RECORDS = 50  # more records per value on average: a category or a measurement
PERSON_MIN_REPEATED = 0.25  # share of records whose value is on another record too
TIME_VARIES = 0.9  # share of values with several records whose time differs
PAIR_UNIQUE = 0.9  # distinct (value, time) pairs per record
STABLE_WITHIN = 0.95  # share of values with several records on which another column is constant
STABLE_BY_CHANCE = 0.8  # ... unless two records drawn at random agree that often anyway
HOUSEHOLD_LARGEST = 15  # records of the largest household (99% of the records in households this small)
HOUSEHOLD_MIN_SHARED = 0.75  # share of records living with another record (most live with someone)
HOUSEHOLD_DIFFER = 0.5  # share of households of two or more whose members differ in age or sex
HOUSEHOLD_TIME_VARIES = 0.5
HOUSEHOLD_RUNS = 1.05  # runs of equal values per household at most: its members written together
PREVIEW = 20_000  # rows looked at first to leave out a column of a few values  # a time varying within this share of groups or more: a person, not a household

_TIME_WORDS = ("year", "years", "yr", "yrs", "wave", "waves", "day", "days", "week", "weeks", "month", "months")
_TIME_WORDS += ("visit", "visits", "time", "date", "dates", "period", "round", "quarter", "survey")
_DAY_WORDS = ("day", "days")
# a duration or a rate, not when a record was made: time_in_hospital, hours-per-week, length_of_stay
_NOT_TIME = {"per", "in", "length", "duration", "los", "spent", "hours", "minutes", "seconds"}
_BIRTH = re.compile(r"(birth|dob|yob|bdate|byear|born)")
_AGE = re.compile(r"(^|[^a-z])age($|[^a-z])|^age|age$")
_SEX = re.compile(r"(sex|gender)")
_DATE_VALUE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?)?$")
_NOT_AGE = ("wage", "stage", "percentage", "average", "dosage", "mileage", "voltage", "usage", "coverage", "page")
_NOT_AGE += ("language", "image", "message", "package", "damage", "storage", "leverage", "manage", "lineage", "triage")
_NOT_AGE += ("drainage", "passage", "postage", "heritage", "sewage", "shortage", "linkage", "leakage", "village")


def _words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", str(name))  # camelCase: childHeight, pan_day
    return [w for w in re.split(r"[^a-z0-9]+", spaced.lower()) if w]


def _name_says(name: str, words: Sequence[str]) -> bool:
    """Whether a word of the name is, starts or ends with one of ``words`` (``futime``, ``pan_day``)."""
    for word in _words(name):
        if word.isdigit():
            continue
        for w in words:
            if word == w or word.endswith(w) or (word.startswith(w) and len(w) >= 4):
                return True
    return False


def name_says_age(name: str) -> bool:
    """Whether a column's name says an age (``age``, ``agegroup``, ``motherage``), not a wage
    or a stage.

    >>> [name_says_age(n) for n in ("age", "age_group", "motherAge", "ln_wage", "stage", "average")]
    [True, True, True, False, False, False]
    """
    for word in _words(name):
        if any(word.endswith(w) for w in _NOT_AGE):
            continue
        if (word.startswith("age") and not word.startswith("agen")) or word.endswith("age"):
            return True
    return False


def name_says_sex(name: str) -> bool:
    """Whether a column's name says a sex or gender.

    >>> name_says_sex("gender"), name_says_sex("Sex"), name_says_sex("sexual_activity"), name_says_sex("sexe")
    (True, True, True, True)
    """
    return bool(_SEX.search(str(name).lower()))


def _whole_numbers(values: pd.Series) -> bool:
    if pd.api.types.is_bool_dtype(values) or not pd.api.types.is_numeric_dtype(values):
        return False
    if pd.api.types.is_integer_dtype(values):
        return True
    present = values.dropna().to_numpy(dtype=float)
    return bool(present.size) and bool(np.array_equal(present, np.round(present)))


def looks_like_dates(values: pd.Series, sample: int = 200) -> bool:
    """Whether a column holds dates: a datetime type, or every one of up to ``sample``
    present values written as an ISO date (``2024-01-31``, optionally with a time).

    >>> looks_like_dates(pd.Series(["2024-01-31", None])), looks_like_dates(pd.Series([20240131]))
    (True, False)
    """
    if pd.api.types.is_datetime64_any_dtype(values):
        return True
    if pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
        return False
    present = values.iloc[: 50 * sample].dropna()  # the first rows say it (a column of blanks is read whole)
    if present.empty:
        present = values.dropna()
    if present.empty or pd.api.types.is_numeric_dtype(present):
        return False
    return bool(present.head(sample).astype(str).str.strip().str.match(_DATE_VALUE).all())


_dates = looks_like_dates


def _years(values: pd.Series) -> bool:
    if not _whole_numbers(values):
        return False
    uniques = pd.unique(values.dropna())
    return 2 <= len(uniques) <= 60 and bool(((uniques >= 1900) & (uniques <= 2100)).all())


def is_time(name: str, values: pd.Series) -> bool:
    """Whether a column says when a record was made: a name saying year, wave, day, week,
    month, visit or time (not a birth date) on whole numbers or dates, or values that are
    years or dates.

    >>> is_time("year", pd.Series([70, 71])), is_time("pan_day", pd.Series([4, 9])), is_time("birth_yr", pd.Series([51]))
    (True, True, False)
    >>> is_time("wave", pd.Series(["a", "b"])), is_time("x", pd.Series([1984, 1985])), is_time("nr", pd.Series([13]))
    (False, True, False)
    """
    if _BIRTH.search(str(name).lower()) or _NOT_TIME.intersection(_words(name)):
        return False
    if _dates(values):
        return True
    if _name_says(name, _TIME_WORDS) and _whole_numbers(values):
        return True
    return _years(values)


def named_day_offsets(name: str, values: pd.Series) -> bool:
    """Whether a column is whole numbers under a name saying day (not a birthday): what a
    date shift moves as days (``is_day_offset`` also asks for more than a month's range).

    >>> named_day_offsets("visit_day", pd.Series([1, 9])), named_day_offsets("age", pd.Series([1, 9]))
    (True, False)
    """
    return not _BIRTH.search(str(name).lower()) and _name_says(name, _DAY_WORDS) and _whole_numbers(values)


def is_day_offset(name: str, values: pd.Series) -> bool:
    """Whether a column counts days from a start (days since enrolment, a pandemic day):
    whole numbers under a name saying day, over more than a month (a day of the month,
    1-31, is not an offset).

    >>> is_day_offset("day", pd.Series([0, 192, 385])), is_day_offset("pan_day", pd.Series([4, 107]))
    (True, True)
    >>> is_day_offset("day", pd.Series([1, 15, 31])), is_day_offset("day", pd.Series([0.5, 40.0]))
    (False, False)
    >>> is_day_offset("birthday", pd.Series([0, 400]))
    False
    """
    if not named_day_offsets(name, values):
        return False
    present = values.dropna()
    if present.empty:
        return False
    low, high = float(present.min()), float(present.max())
    return low < 1 or high > 31


def _codes(values: pd.Series) -> tuple[np.ndarray, int]:
    """Integer codes of a column, a blank a value of its own, and how many distinct values."""
    codes, uniques = pd.factorize(values, use_na_sentinel=False)
    return codes.astype(np.int64, copy=False), len(uniques)


def _pair_codes(a: np.ndarray, b: np.ndarray, nb: int) -> tuple[np.ndarray, int]:
    codes, uniques = pd.factorize(a * np.int64(nb) + b)
    return codes, len(uniques)


def _varied(group: np.ndarray, groups: int, other: np.ndarray, n_other: int) -> np.ndarray:
    """Per group: whether ``other`` takes more than one value on its records."""
    pairs, distinct_pairs = _pair_codes(group, other, n_other)
    first = np.zeros(distinct_pairs, dtype=np.int64)
    first[pairs] = group  # each distinct (group, value) pair's group
    return np.bincount(first, minlength=groups) >= 2


def _within(group: np.ndarray, groups: int, several: np.ndarray, other: np.ndarray, n_other: int) -> float:
    """Share of the groups of several records in which ``other`` takes more than one value."""
    return float(_varied(group, groups, other, n_other)[several].mean()) if several.any() else 0.0


@dataclass(frozen=True)
class PersonStructure:
    """A column found to be the person: ``people`` distinct values, ``repeated`` the share of
    records whose person has another record, ``time`` the column varying within a person
    (``varies``: the share of people with several records seen at different times),
    ``pair_unique`` distinct (person, time) pairs per record, ``stable`` a column constant
    within a person (what makes them one person), ``most_records`` the records of the person
    with the most."""

    column: str
    time: str
    people: int
    repeated: float
    varies: float
    pair_unique: float
    stable: str | None
    most_records: int

    def sentence(self) -> str:
        """The evidence in words.

        >>> PersonStructure("idcode", "year", 4711, 0.98, 1.0, 1.0, "birth_yr", 15).sentence()
        'idcode: 4,711 values repeated on 98% of the records, year varies within each (up to 15 records per value), birth_yr constant within — one person per value'
        """
        stable = f", {self.stable} constant within" if self.stable else ""
        return (
            f"{self.column}: {self.people:,} values repeated on {self.repeated:.0%} of the records, {self.time} "
            f"varies within each (up to {self.most_records:,} records per value){stable} — one person per value"
        )


@dataclass(frozen=True)
class HouseholdStructure:
    """A column found to be the household: ``households`` distinct values, the largest with
    ``largest`` records, ``shared`` the share of records living with another record,
    ``differing`` the share of households of two or more whose members differ in ``by``
    (the age or sex columns)."""

    column: str
    households: int
    largest: int
    shared: float
    differing: float
    by: tuple[str, ...]

    def sentence(self) -> str:
        """The evidence in words.

        >>> HouseholdStructure("famID", 1960, 2, 1.0, 0.97, ("age",)).sentence()
        'famID: 1,960 groups of up to 2 records, no time varying within, members differing in age in 97% of them — one household per value'
        """
        by = " or ".join(self.by)
        return (
            f"{self.column}: {self.households:,} groups of up to {self.largest:,} records, no time varying within, "
            f"members differing in {by} in {self.differing:.0%} of them — one household per value"
        )


@dataclass(frozen=True)
class Structure:
    """What a table's structure says: the person, the household, the time columns and the
    day offsets among them."""

    person: PersonStructure | None
    household: HouseholdStructure | None
    times: tuple[str, ...]
    day_offsets: tuple[str, ...]


def _candidate(values: pd.Series) -> bool:
    """Whether a column's values may name people or households: no blank, whole numbers or
    codes (not decimals, dates nor flags)."""
    if values.isna().any() or pd.api.types.is_bool_dtype(values):
        return False
    if pd.api.types.is_float_dtype(values) and not _whole_numbers(values):
        return False
    return not _dates(values)


def find_structure(frame: pd.DataFrame, *, exclude: Sequence[str] = ()) -> Structure:
    """The person and household columns, and the time columns, found by structure (module
    docstring); ``exclude``: columns never the person nor the household (an identifier
    unique per record, say).

    >>> rows = [(f, age, sex) for f in range(30) for age, sex in ((70, "m"), (68, "f"), (40, "f"))]
    >>> h = find_structure(pd.DataFrame(rows, columns=["family", "age", "sex"])).household
    >>> h.column, h.households, h.largest, h.differing, h.by
    ('family', 30, 3, 1.0, ('age', 'sex'))
    """
    n = len(frame)
    names = [str(c) for c in frame.columns]
    series = {str(c): frame[c] for c in frame.columns}
    times = tuple(c for c in names if is_time(c, series[c]))
    days = tuple(c for c in times if is_day_offset(c, series[c]))
    if n < 2 * PERSON_MIN_VALUES or len(names) < 2:
        return Structure(None, None, times, days)
    codes: dict[str, tuple[np.ndarray, int]] = {}

    def code(column: str) -> tuple[np.ndarray, int]:
        if column not in codes:
            codes[column] = _codes(series[column])
        return codes[column]

    skipped = set(times) | {str(c) for c in exclude}
    candidates = []
    for column in names:
        if column in skipped or not _candidate(series[column]):
            continue
        head = series[column].iloc[:PREVIEW]
        if len(head) == PREVIEW and head.nunique() < PERSON_MIN_VALUES:
            continue  # a few values over the first rows: a category (read whole only when it may be people)
        c, k = code(column)
        if k < PERSON_MIN_VALUES or k >= n or n > PERSON_MAX_MEAN_RECORDS * k:
            continue
        sizes = np.bincount(c, minlength=k)
        shared = float((sizes[c] >= 2).mean())
        if shared >= min(PERSON_MIN_REPEATED, HOUSEHOLD_MIN_SHARED):
            candidates.append((column, c, k, sizes, shared))
    candidates.sort(key=lambda x: -x[2])  # the finest first: a person before their household
    person = _person(frame, names, candidates, times, code)
    household = _household(names, candidates, times, code, person)
    return Structure(person, household, times, days)


def _stable(column: str, group: np.ndarray, groups: int, several: np.ndarray, names, code, skip) -> str | None:
    """A column constant within 19 of 20 groups of several records where chance would not
    make it so (two records drawn at random agree less than 80% of the time)."""
    for other in names:
        if other == column or other in skip:
            continue
        c, k = code(other)
        if k < 2 or k > groups:
            continue
        p = np.bincount(c, minlength=k) / len(c)
        if float(p @ p) > STABLE_BY_CHANCE:
            continue
        if 1.0 - _within(group, groups, several, c, k) >= STABLE_WITHIN:
            return other
    return None


def _person(frame, names, candidates, times, code) -> PersonStructure | None:
    n = len(frame)
    for column, c, k, sizes, shared in candidates:
        if shared < PERSON_MIN_REPEATED:
            continue
        several = sizes >= 2
        for time in times:
            t, kt = code(time)
            pairs, distinct_pairs = _pair_codes(c, t, kt)
            pair_unique = distinct_pairs / n
            if pair_unique < PAIR_UNIQUE:
                continue
            varies = _within(c, k, several, t, kt)
            if varies < TIME_VARIES:
                continue
            stable = _stable(column, c, k, several, names, code, set(times))
            if stable is None and len(names) > 2:
                continue  # nothing the same on a value's records: equal values by chance, not one person
            return PersonStructure(
                column, time, k, round(shared, 4), round(varies, 4), round(pair_unique, 4), stable, int(sizes.max())
            )
    return None


def _household(names, candidates, times, code, person: PersonStructure | None) -> HouseholdStructure | None:
    by = tuple(c for c in names if name_says_age(c) or name_says_sex(c))
    if not by:
        return None
    for column, c, k, sizes, shared in candidates:
        if person is not None and column == person.column:
            continue
        if shared < HOUSEHOLD_MIN_SHARED or float(np.quantile(sizes[c], 0.99)) > HOUSEHOLD_LARGEST:
            continue
        several = sizes >= 2
        if any(_within(c, k, several, *code(t)) >= HOUSEHOLD_TIME_VARIES for t in times):
            continue  # seen at different times: a person (or a panel of households), not a household
        differing = np.zeros(k, dtype=bool)
        used = []
        for column_by in by:
            if column_by == column:
                continue
            varied = _varied(c, k, *code(column_by))
            if varied[several].any():
                used.append(column_by)
            differing |= varied
        share = float(differing[several].mean()) if several.any() else 0.0
        if share < HOUSEHOLD_DIFFER:
            continue
        runs = 1 + int(np.count_nonzero(c[1:] != c[:-1]))
        if runs > HOUSEHOLD_RUNS * k and _stable(column, c, k, several, names, code, set(times) | set(by)) is None:
            continue  # members neither written together nor sharing anything: equal values by chance (a lab value)
        return HouseholdStructure(column, k, int(sizes.max()), round(shared, 4), round(share, 4), tuple(used))
    return None
