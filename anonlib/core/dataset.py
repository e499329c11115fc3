"""A dataset under assessment: a table plus what each column is for.

Roles: ``identifier`` (names, record numbers: dropped before any analysis),
``quasi-identifier`` (what an attacker may know: age, ZIP, sex...),
``sensitive`` (what must not be learnt: diagnosis, income...), ``count`` (how
many identical records a row stands for), ``ignore`` (left out of the release),
``person`` (the one column saying whose record it is: classes, k and suppression
are then counted in distinct persons; like an identifier it is never analysed and
is released only as a pseudonym), ``household`` (the one column saying whose household a
record belongs to: released as a pseudonym, it makes the household's members' records
linkable, ``anonlib.core.histories``; never analysed either) and ``keep`` (ARX's
"insensitive": released unchanged, never counted in classes).

``guess_roles`` proposes roles from column names and contents (``role_guesses``
also says which name or value each guess came from); the user confirms them. Missing values stay a category of their own unless the dataset
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
from .structure import find_structure, looks_like_dates, name_says_age


class Role(str, Enum):
    """What a column is for in a privacy assessment."""

    IDENTIFIER = "identifier"
    QUASI_IDENTIFIER = "quasi-identifier"
    SENSITIVE = "sensitive"
    COUNT = "count"
    IGNORE = "ignore"
    PERSON = "person"
    KEEP = "keep"
    HOUSEHOLD = "household"


ROLE_VALUES = tuple(r.value for r in Role)

_ID_WORDS = re.compile(
    r"(^|[^a-z])(id|ids|identifier|name|names|full ?name|first ?name|last ?name|surname|ssn|"
    r"email|e-mail|phone|telephone|address|mrn|record ?number|patient_nbr|encounter_id)([^a-z]|$)"
)
_ID_NAMES = {"code", "internal code", "pseudonym", "key", "record"}
# identifiers of public health surveys and extracts, written as one abbreviation
_ID_ABBREVIATIONS = {
    "pid": "person id",
    "hhid": "household id",
    "hh_id": "household id",
    "mrn": "medical record number",
    "ssn": "social security number",
    "nhs": "NHS number",
    "patid": "patient id",
    "patientid": "patient id",
    "subjid": "subject id",
    "caseid": "case id",
    "respid": "respondent id",
    "idcode": "person id",  # the NLSY's panels (Stata's nlswork)
}
# household ids of surveys and panels (hhid, hh_id, household, hhnr, intnum, famid, ...)
_HOUSEHOLD_NAMES = re.compile(
    r"^(hh|hhid|hh_id|hh id|hhnr|hh_nr|hhnum|hh_num|hhno|hid|household|households|household_id|householdid|"
    r"household id|household_nr|intnum|int_num|famid|fam_id|family_id|familyid|family id|famnum|dwelling_id)$"
)
_COUNT_NAMES = {"count", "counts", "#rec", "#rec.", "n", "freq", "frequency", "records", "#records", "multiplicity"}
# a thing's name, not a person's: clinic_name, drug_name, site_name
_THING_NAME = re.compile(
    r"(clinic|hospital|site|facility|center|centre|lab|laboratory|ward|department|dept|unit|practice|drug|"
    r"medication|test|product|file|company|employer|school|program|programme|study|trial|brand|device|organism|"
    r"species|country|state|city|region|county|place|course|plan|payer|insurer|pharmacy|variable|column)"
    r"[ _.-]?names?$"
)
# "age" is read as a word (age, age_group, motherage: ``structure.name_says_age``), never inside wage or stage
_QUASI_WORDS = re.compile(
    r"(sex|gender|zip|postcode|postal|race|ethnic|birth|dob|marital|education|country|"
    r"region|city|state|county|municipality|occupation|workclass|weight|height)"
)
# quasi-identifiers of public health surveys, written as abbreviations (a whole name or
# a word of it: ``educ``, ``hh_educ``, ``marstat``) and area codes
_QUASI_ABBREVIATIONS = {
    "educ": "education",
    "edu": "education",
    "edlevel": "education",
    "schooling": "education",
    "marstat": "marital status",
    "mstat": "marital status",
    "married": "marital status",
    "marital": "marital status",
    "bdate": "date of birth",
    "byear": "birth year",
    "yob": "year of birth",
    "zip3": "ZIP code",
    "zip5": "ZIP code",
    "commune": "area code",
    "district": "area code",
    "province": "area code",
    "prefecture": "area code",
    "municipality": "area code",
    "county_code": "area code",
    "countycode": "area code",
    "fips": "area code",
    "geoid": "area code",
    "zcta": "area code",
    "lga": "area code",
    "ward": "area code",
    "village": "area code",
    "urban": "area type",
    "rural": "area type",
    "ethnicity": "ethnicity",
}
_DATE_WORDS = re.compile(r"(^|[^a-z])(date|dates|dob|bdate)([^a-z]|$)")  # died, admitted...: outcomes unless dates
_SENSITIVE_WORDS = re.compile(
    r"(diagnos|disease|income|result|test|biopsy|cancer|hiv|std|readmit|outcome|"
    r"genetic|condition|illness|treatment|medication|salary|^num$|target|label|class)"
)
_NOTHING = "nothing in the name says what it is"
_FREE_TEXT_LENGTH = 40  # median characters of a free-text column's values
_FREE_TEXT_DISTINCT = 0.5  # share of its values that are distinct


@dataclass(frozen=True)
class RoleGuess:
    """A guessed role and why: the name (or value pattern) it was guessed from; ``offer``: a
    role the values suggest but too weakly to preselect (the reason says why).

    >>> guess_role_reason("educ", pd.Series(["primary"]))
    RoleGuess(role=<Role.QUASI_IDENTIFIER: 'quasi-identifier'>, reason="name 'educ' (education)", offer=None)
    """

    role: Role
    reason: str
    offer: Role | None = None


def _name_words(lower: str) -> list[str]:
    return [w for w in re.split(r"[^a-z0-9]+", lower) if w]


def guess_role_reason(name: str, values: pd.Series) -> RoleGuess:
    """``guess_role`` with the reason, in words a privacy officer reads on the Dataset page."""
    lower = str(name).strip().lower()
    words = _name_words(lower)
    said = f"name '{name}'"
    if lower in _COUNT_NAMES:
        return RoleGuess(Role.COUNT, f"{said} (a record count)")
    if _HOUSEHOLD_NAMES.match(lower):  # dropped like an identifier until the officer chooses the role household
        return RoleGuess(
            Role.IDENTIFIER,
            f"{said} (reads like a household id): choose the role household to protect each household's members "
            "together",
            Role.HOUSEHOLD,
        )
    if (_ID_WORDS.search(lower) and not _THING_NAME.search(lower)) or lower in _ID_NAMES:
        return RoleGuess(Role.IDENTIFIER, f"{said} (reads like an identifier)")
    if _DATE_WORDS.search(lower):
        return RoleGuess(Role.QUASI_IDENTIFIER, f"{said} (a date)")
    if looks_like_dates(values):
        return RoleGuess(Role.QUASI_IDENTIFIER, "values written as dates")
    abbreviation = _ID_ABBREVIATIONS.get(lower) or _ID_ABBREVIATIONS.get(lower.replace("_", ""))
    if abbreviation:  # after the dates: a short name says less than date-shaped values
        return RoleGuess(Role.IDENTIFIER, f"{said} ({abbreviation})")
    if _SENSITIVE_WORDS.search(lower):
        return RoleGuess(Role.SENSITIVE, f"{said} (reads like an outcome or a health attribute)")
    for key in (lower, *words):
        if key in _QUASI_ABBREVIATIONS:
            return RoleGuess(Role.QUASI_IDENTIFIER, f"{said} ({_QUASI_ABBREVIATIONS[key]})")
    if _QUASI_WORDS.search(lower) or name_says_age(name):
        return RoleGuess(Role.QUASI_IDENTIFIER, f"{said} (reads like something an attacker may know)")
    if looks_like_free_text(values):
        return RoleGuess(
            Role.IDENTIFIER, "free text (long, mostly different values): it may name people, a possible identifier"
        )
    return RoleGuess(Role.IGNORE, _NOTHING)


def guess_role(name: str, values: pd.Series) -> Role:
    """A first guess of one column's role from its name and values.

    Dates of events (admission, discharge, a visit, birth, death) are quasi-identifiers
    (HIPAA's Safe Harbor lists every date element but the year), by a name saying
    date (``admission_date``, ``dob``) or because their values are ISO dates, even when
    the name also says what was measured (``test_date``); a flag such as ``died`` is not.
    The abbreviations of public health surveys are known (``educ``, ``marstat``,
    ``married``, ``hhid``, ``pid``, area codes such as ``commune`` or ``district``).

    >>> guess_role("Full Name", pd.Series(["a", "b"])), guess_role("#Rec.", pd.Series([1, 2]))
    (<Role.IDENTIFIER: 'identifier'>, <Role.COUNT: 'count'>)
    >>> guess_role("when", pd.Series(["2024-01-31", None])), guess_role("admission_date", pd.Series([1]))
    (<Role.QUASI_IDENTIFIER: 'quasi-identifier'>, <Role.QUASI_IDENTIFIER: 'quasi-identifier'>)
    >>> [guess_role(n, pd.Series([1])).value for n in ("educ", "married", "hhid", "commune")]
    ['quasi-identifier', 'quasi-identifier', 'identifier', 'quasi-identifier']
    >>> guess_role_reason("hhid", pd.Series([1])).offer  # a household id is offered the role household
    <Role.HOUSEHOLD: 'household'>
    """
    return guess_role_reason(name, values).role


def looks_like_free_text(values: pd.Series, sample: int = 500) -> bool:
    """Whether a text column holds free text: long values (median over 40 characters,
    several words) and mostly different ones.

    >>> notes = pd.Series([f"seen on day {i} with a cough and a mild fever, sent home" for i in range(9)])
    >>> looks_like_free_text(notes), looks_like_free_text(pd.Series(["flu"] * 9))
    (True, False)
    """
    if pd.api.types.is_numeric_dtype(values) or pd.api.types.is_datetime64_any_dtype(values):
        return False
    present = values.dropna().head(sample).astype(str).str.strip()
    if len(present) < 5:
        return False
    long = present.str.len().median() >= _FREE_TEXT_LENGTH and present.str.count(r"\s+").median() >= 3
    return bool(long and present.nunique() / len(present) >= _FREE_TEXT_DISTINCT)


# A person column (``person_evidence``): id-like values, several records for many of them.
PERSON_MIN_VALUES = 10  # fewer distinct values say a category, not people
PERSON_MAX_RECORDS_PER_VALUE = 20  # more records per value on average: a measurement or a category
PERSON_MIN_REPEATED = 0.1  # share of records sharing their value with another record, to offer it
PERSON_STRONG_REPEATED = 0.25  # ... to preselect it (with a name reading like an identifier)
PERSON_MIN_DIFFERING = 0.9  # share of repeated values whose records differ in another column
SMALL_DOMAIN = 10  # at most this many distinct values: a quasi-identifier candidate (a year, a flag)
SMALL_DOMAIN_PRESELECT = 8  # at most this many of them preselected (years first, then flags)
YEARS_AT_MOST = 60  # distinct years of a year column


@dataclass(frozen=True)
class PersonEvidence:
    """Why a column looks like the person column: its distinct ``values``, the share of
    records whose value is on another record too (``repeated``), the share of those repeated
    values whose records differ in another column (``differing``: several records of one
    person, not duplicated rows), and whether the evidence is ``strong`` enough to preselect
    the role (a name reading like an identifier, and a quarter of the records repeating)."""

    column: str
    values: int
    repeated: float
    differing: float
    strong: bool

    def sentence(self) -> str:
        """The evidence in words.

        >>> PersonEvidence("patient_nbr", 30248, 0.71, 1.0, True).sentence()
        'patient_nbr: 30,248 values, 71% of the records repeat a value across rows whose other values differ — looks like one person per value'
        """
        return (
            f"{self.column}: {self.values:,} values, {self.repeated:.0%} of the records repeat a value across rows "
            "whose other values differ — looks like one person per value"
        )


def _id_like_name(name: str) -> bool:
    lower = str(name).strip().lower()
    return bool(
        _ID_WORDS.search(lower)
        or lower in _ID_NAMES
        or _ID_ABBREVIATIONS.get(lower)
        or _ID_ABBREVIATIONS.get(lower.replace("_", ""))
    )


def person_evidence(frame: pd.DataFrame, columns: Sequence[str] | None = None) -> list[PersonEvidence]:
    """The columns whose values look like persons: no blank, integers or codes (not decimals
    nor dates), at least 10 distinct values of at most 20 records each on average, a tenth
    of the records or more sharing their value with other records, and those records
    differing in another column (the same person seen again, not a duplicated row). The
    most distinct values first (a person is finer than a household). ``columns``: the ones
    to consider (default all).

    >>> frame = pd.DataFrame({"id": [i // 2 for i in range(40)], "year": [2000 + i % 2 for i in range(40)]})
    >>> [(e.column, e.values, e.repeated, e.differing, e.strong) for e in person_evidence(frame)]
    [('id', 20, 1.0, 1.0, True)]
    """
    n = len(frame)
    if n < 2 * PERSON_MIN_VALUES or frame.shape[1] < 2:
        return []
    candidates = []
    considered = None if columns is None else {str(c) for c in columns}
    for j, column in enumerate(frame.columns):
        if considered is not None and str(column) not in considered:
            continue
        values = frame[column]
        if values.isna().any() or looks_like_dates(values) or pd.api.types.is_bool_dtype(values):
            continue
        if pd.api.types.is_float_dtype(values) and not np.array_equal(values, np.round(values)):
            continue
        codes, uniques = pd.factorize(values, sort=False)
        distinct = len(uniques)
        if distinct < PERSON_MIN_VALUES or n > PERSON_MAX_RECORDS_PER_VALUE * distinct or distinct == n:
            continue
        sizes = np.bincount(codes, minlength=distinct)
        repeated = float((sizes[codes] >= 2).mean())
        if repeated >= PERSON_MIN_REPEATED:
            candidates.append((j, str(column), codes, sizes, distinct, repeated))
    if not candidates:
        return []
    # each row's hash over all columns, a column's place counted (an odd multiplier per column), summed one
    # column at a time; the candidates' own terms kept to take them out again (memory: rows x candidates)
    total = np.zeros(n, dtype=np.uint64)
    own: dict[int, np.ndarray] = {}
    wanted = {j for j, *_ in candidates}
    with np.errstate(over="ignore"):
        for j in range(frame.shape[1]):
            multiplier = np.uint64((0x9E3779B97F4A7C15 + 2 * j) | 1)
            term = pd.util.hash_pandas_object(frame.iloc[:, j], index=False).to_numpy() * multiplier
            total += term
            if j in wanted:
                own[j] = term
        out = []
        for j, column, codes, sizes, distinct, repeated in candidates:
            others = total - own[j]  # the row's other values
            order = np.lexsort((others, codes))
            c, o = codes[order], others[order]
            varied = np.zeros(distinct, dtype=bool)  # a value whose records differ somewhere else
            varied[c[1:][(c[1:] == c[:-1]) & (o[1:] != o[:-1])]] = True
            several = sizes >= 2
            differing = float(varied[several].mean()) if several.any() else 0.0
            if differing < PERSON_MIN_DIFFERING:
                continue
            strong = _id_like_name(column) and repeated >= PERSON_STRONG_REPEATED
            out.append(PersonEvidence(column, distinct, round(repeated, 4), round(differing, 4), strong))
    return sorted(out, key=lambda e: -e.values)


def small_domain_reason(values: pd.Series) -> str | None:
    """Why a column no name explains may be a quasi-identifier by its values (a year, a
    yes/no flag, a few categories an attacker may know), else None.

    >>> small_domain_reason(pd.Series([1984, 1985, 1986] * 3)), small_domain_reason(pd.Series([0, 1, 1]))
    ('values are years (1984-1986): an attacker may know when a record was made', 'a yes/no flag (values 0, 1): an attacker may know it')
    >>> small_domain_reason(pd.Series(["a", "b", "c", "d"])), small_domain_reason(pd.Series([1.5, 2.5]))
    ('few distinct values (4): an attacker may know which one applies', None)
    """
    present = values.dropna()
    if present.empty:
        return None
    uniques = pd.unique(present)  # the few distinct values are checked, not every record
    distinct = len(uniques)
    if distinct > YEARS_AT_MOST or distinct < 2:
        return None
    if pd.api.types.is_bool_dtype(present):
        return "a yes/no flag: an attacker may know it"
    numeric = pd.api.types.is_numeric_dtype(present)
    if numeric and not np.array_equal(uniques, np.round(uniques)):
        return None  # a measurement with decimals
    if numeric and ((uniques >= 1900) & (uniques <= 2100)).all():
        return (
            f"values are years ({int(uniques.min())}-{int(uniques.max())}): an attacker may know when a record was made"
        )
    if distinct == 2:
        shown = ", ".join(str(v) for v in sorted(uniques, key=str))
        return f"a yes/no flag (values {shown}): an attacker may know it"
    if distinct <= SMALL_DOMAIN and (numeric or max(len(str(v)) for v in uniques) <= 40):
        return f"few distinct values ({distinct}): an attacker may know which one applies"
    return None


def role_guesses(frame: pd.DataFrame, *, contents: bool = False) -> dict[str, RoleGuess]:
    """Every column's guessed role and the reason (what ``guess_roles`` decides, said).

    With ``contents`` (the Dataset page, on an uploaded file), the values speak too: a
    column whose values repeat across records that otherwise differ (``person_evidence``)
    is the person column when the evidence is strong, else it is offered as the person
    (``RoleGuess.offer``); a column no name explains with a small domain (a year, a 0/1
    flag, a few categories) is a quasi-identifier candidate, saying why.

    >>> g = role_guesses(pd.DataFrame({"pid": [1], "educ": ["a"], "hhexp": [3.5]}))
    >>> [(c, x.role.value, x.reason) for c, x in g.items()]  # doctest: +NORMALIZE_WHITESPACE
    [('pid', 'identifier', "name 'pid' (person id)"), ('educ', 'quasi-identifier', "name 'educ' (education)"),
     ('hhexp', 'ignore', 'nothing in the name says what it is')]
    >>> panel = pd.DataFrame({"id": [i // 4 for i in range(80)], "year": [1984 + i % 4 for i in range(80)],
    ...                       "kids": [i % 3 == 0 for i in range(80)], "age": [30 + i % 7 for i in range(80)]})
    >>> [(c, x.role.value) for c, x in role_guesses(panel, contents=True).items()]  # doctest: +NORMALIZE_WHITESPACE
    [('id', 'person'), ('year', 'quasi-identifier'), ('kids', 'quasi-identifier'), ('age', 'quasi-identifier')]
    """
    guesses = {str(c): guess_role_reason(c, frame[c]) for c in frame.columns}
    if contents:
        _guess_from_contents(frame, guesses)
    counts = [c for c, g in guesses.items() if g.role is Role.COUNT]
    for extra in counts[1:]:
        guesses[extra] = RoleGuess(Role.IGNORE, "a second count column (only one can count records)")
    if counts:
        try:
            record_counts(frame, counts[0])
        except ColumnError:
            guesses[counts[0]] = RoleGuess(
                Role.IGNORE, f"name '{counts[0]}' reads like a count, but its values are not"
            )
    if not any(g.role is Role.QUASI_IDENTIFIER for g in guesses.values()):
        for c, g in guesses.items():
            if g.role in (Role.IGNORE, Role.SENSITIVE):
                guesses[c] = RoleGuess(
                    Role.QUASI_IDENTIFIER, "no name suggests a quasi-identifier, so every column counts (as ARX does)"
                )
    return guesses


def _guess_from_contents(frame: pd.DataFrame, guesses: dict[str, RoleGuess]) -> None:
    """``role_guesses(contents=True)``: the person, household and time columns read off the
    structure (``anonlib.core.structure``), and small-domain quasi-identifier candidates
    (in place). A person found by structure is the person whatever its name (a time varies
    within it); without a time, a column whose values repeat across records that differ is
    the person when its name reads like an identifier, else offered. A column named like an
    identifier whose values are a handful shared by many records is a category, not an
    identifier."""
    counts = {c for c, g in guesses.items() if g.role is Role.COUNT}
    structure = find_structure(frame, exclude=sorted(counts))
    person, household = structure.person, structure.household
    if household is not None:
        guesses[household.column] = RoleGuess(Role.HOUSEHOLD, household.sentence())
    if person is not None:
        guesses[person.column] = RoleGuess(Role.PERSON, person.sentence())
    else:
        skipped = set(structure.times) | ({household.column} if household else set())
        open_roles = [c for c, g in guesses.items() if g.role in (Role.IDENTIFIER, Role.IGNORE) and c not in skipped]
        evidence = person_evidence(frame, open_roles)
        if evidence:
            best = evidence[0]  # the most distinct values: a person, not the household
            if best.strong:
                guesses[best.column] = RoleGuess(Role.PERSON, best.sentence())
            else:
                was = guesses[best.column]
                guesses[best.column] = RoleGuess(
                    was.role,
                    f"{was.reason}; {best.sentence()}, but not surely: choose the role person if each value is one "
                    "person",
                    Role.PERSON,
                )
    for column, guess in guesses.items():
        if guess.role is Role.IDENTIFIER and guess.offer is None:
            distinct = frame[column].nunique()
            if len(frame) < 2 * PERSON_MIN_VALUES:
                continue
            if distinct <= SMALL_DOMAIN:
                guesses[column] = RoleGuess(
                    Role.IGNORE,
                    f"{guess.reason}, but its {distinct} value{'s' if distinct != 1 else ''} are shared by many "
                    "records: a category, not an identifier",
                )
            elif len(frame) > PERSON_MAX_RECORDS_PER_VALUE * distinct:  # a code (a disposition, a source)
                guesses[column] = RoleGuess(
                    Role.IGNORE,
                    f"{guess.reason}, but its {distinct:,} values are shared by {len(frame) / distinct:,.0f} records "
                    "each on average: a category, not an identifier",
                )
    found = []
    for column, guess in guesses.items():
        if guess.role is Role.IGNORE and guess.offer is None and guess.reason == _NOTHING:
            why = small_domain_reason(frame[column])
            if why is not None:
                found.append((not why.startswith("values are years"), not why.startswith("a yes/no"), column, why))
    for rank, (_, _, column, why) in enumerate(sorted(found)):  # years, then flags, then a few categories
        if rank < SMALL_DOMAIN_PRESELECT:
            guesses[column] = RoleGuess(Role.QUASI_IDENTIFIER, f"{why} (a quasi-identifier candidate)")
        else:  # a wide file: the rest offered, not preselected (each one splits every class)
            guesses[column] = RoleGuess(
                Role.IGNORE,
                f"{why}: a quasi-identifier candidate, not preselected ({SMALL_DOMAIN_PRESELECT} such columns "
                "already are); choose the role quasi-identifier if an attacker may know it",
                Role.QUASI_IDENTIFIER,
            )
    if person is not None and guesses[person.time].role is Role.IGNORE:  # no name nor small domain said so
        what = "whole days from a start" if person.time in structure.day_offsets else "the time"
        guesses[person.time] = RoleGuess(
            Role.QUASI_IDENTIFIER,
            f"{what} of each person's records ({person.time} varies within {person.column}): an attacker may "
            "know when a record was made",
        )


def guess_roles(frame: pd.DataFrame, *, contents: bool = False) -> dict[str, Role]:
    """Roles for every column. When no name suggests a quasi-identifier, every
    column that is not an identifier or count becomes one (as ARX does); ``contents``:
    the values speak too (``role_guesses``).

    >>> guess_roles(pd.DataFrame({"a": [1], "b": [2]}))
    {'a': <Role.QUASI_IDENTIFIER: 'quasi-identifier'>, 'b': <Role.QUASI_IDENTIFIER: 'quasi-identifier'>}
    """
    return {c: g.role for c, g in role_guesses(frame, contents=contents).items()}


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

    @property
    def person(self) -> str | None:
        """The person column (None: one record per person, counted in records)."""
        persons = self.columns_with(Role.PERSON)
        return persons[0] if persons else None

    @property
    def household(self) -> str | None:
        """The household column (None: no household role)."""
        households = self.columns_with(Role.HOUSEHOLD)
        return households[0] if households else None

    @property
    def owners(self) -> tuple[str, ...]:
        """The person and household columns there are (whose records they are)."""
        return tuple(c for c in (self.person, self.household) if c is not None)

    @property
    def kept(self) -> tuple[str, ...]:
        """Columns released unchanged and never counted in classes (role ``keep``)."""
        return self.columns_with(Role.KEEP)

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
    # per column, how the file wrote a missing value (Adult's "?"): a private release writes it so
    missing_texts: Mapping[str, str] = field(default_factory=dict, compare=False)

    @classmethod
    def from_frame(
        cls,
        name: str,
        frame: pd.DataFrame,
        roles: Mapping[str, Role | str] | None = None,
        *,
        guess_contents: bool = False,
        **kwargs,
    ) -> Dataset:
        """A dataset with guessed roles (``guess_contents``: from the values too, as the
        Dataset page guesses an upload's), overridden by ``roles`` where given."""
        merged: dict[str, Role] = guess_roles(frame, contents=guess_contents)
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
        for role, whose in ((Role.PERSON, "person"), (Role.HOUSEHOLD, "household")):
            columns = self.columns_with(role)
            if len(columns) > 1:
                raise ColumnError(
                    f"Only one column can say whose {whose} a record is (the {whose}); found {join_names(columns)}."
                )
            if columns:
                blanks = int(self.frame[columns[0]].isna().sum())
                if blanks:
                    raise ColumnError(
                        f"The {whose} column '{columns[0]}' is blank in {blanks:,} record"
                        f"{'s' if blanks != 1 else ''}; every record needs the {whose} it belongs to (fill them in, "
                        f"or choose another {whose} column)."
                    )
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

    @property
    def n_persons(self) -> int | None:
        """Distinct persons (None without a person column)."""
        return None if self.person is None else int(self.frame[self.person].nunique(dropna=True))

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
        self, columns: Sequence[str] | None = None, extra: Sequence[str] = (), *, person: bool = False
    ) -> tuple[pd.DataFrame, int]:
        """``analysis_frame(columns)`` of the assessed rows (``assessed(extra)``): the
        rows left out are those missing a value in an assessed column, whether or not
        it is among ``columns``; a blank in another of ``columns`` stays a blank."""
        return self.analysis_frame(columns, complete=self.assessed_columns(extra), person=person)

    def analysis_frame(
        self, columns: Sequence[str] | None = None, *, complete: Sequence[str] | None = None, person: bool = False
    ) -> tuple[pd.DataFrame, int]:
        """The rows and columns to analyse, and how many rows were dropped.

        Identifier columns are never included. ``columns`` defaults to every
        quasi-identifier and sensitive column; the count column is always kept,
        and so are the person and household columns with ``person=True`` (to count people,
        households and their histories).
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
        for owner, what in ((self.person, "person"), (self.household, "household")):
            if owner is not None and owner in columns:
                raise ColumnError(
                    f"'{owner}' is the {what} column: it says whose record it is and is never analysed as a value; "
                    "change its role first."
                )
        keep = columns + ([self.count] if self.count and self.count not in columns else [])
        if person:
            keep.extend(self.owners)
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
