"""HIPAA Safe Harbor applied, not only checked (45 CFR 164.514(b)(2)).

``safe_harbor_plan(frame)`` lists, before anything changes, what Safe Harbor does
to each column it recognises (``anonlib.measures.identifiers`` finds them by name
and by value, as the Dataset page's check does):

- ``remove``: the identifiers (names, telephone and fax numbers, e-mail
  addresses, SSNs, medical record, health plan, account, licence, vehicle and
  device numbers, URLs, IP addresses, biometrics, photographs, other unique codes,
  free text that may hold any of them, and geography below a state other than the
  ZIP code: street, city, county, coordinates) are blanked and left out of the
  release;
- ``zip3``: ZIP codes cut to their first three digits, and the three-digit areas
  with fewer than 20,000 people written ``000``: the areas under 20,000 in the
  bundled 2010 census ZIP-code tabulation areas (the population of a ZIP3 is the
  sum of its ZCTAs; a ZIP3 with no ZCTA has no residents and is ``000`` too);
- ``year``: every other date reduced to its year;
- ``birth_date``: dates of birth reduced to the year, and a year implying an age
  over 89 (``reference_year - year >= 90``) written ``90 or older``;
- ``birth_year``: years of birth implying an age over 89 written ``90 or older``;
- ``age``: ages over 89 written ``90 or older``;
- ``pseudonym``: a column the user pseudonymised (``anonlib.transformations.pseudonyms``)
  is kept, and said not to be Safe Harbor's re-identification code unless the key
  stays with the data holder (a keyed hash of the identifier is derived from it).

``apply_safe_harbor(frame, changes, ...)`` makes the changes; a date that cannot be
read, a ZIP code that is not one, is one sentence.

Example:
    >>> df = pd.DataFrame({"name": ["Ann Lee", "Bo Chan"], "zip": ["02139", "03601"],
    ...                    "age": [91, 40], "admitted": ["2020-03-04", "2021-12-31"]})
    >>> plan = safe_harbor_plan(df)
    >>> [(c.column, c.action) for c in plan]
    [('name', 'remove'), ('zip', 'zip3'), ('age', 'age'), ('admitted', 'year')]
    >>> apply_safe_harbor(df, plan, reference_year=2024).values.tolist()
    [[None, '021', '90 or older', '2020'], [None, '000', '40', '2021']]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from ..core.errors import ColumnError, ParameterError
from ..measures.identifiers import hipaa_identifiers
from .pseudonyms import parse_dates

SMALL_AREA = 20_000  # people: a ZIP3 area below this is written 000
CENSUS = "2010 census (ZIP-code tabulation areas, bundled)"
TOP_AGE = 90
TOP_LABEL = "90 or older"
RESTRICTED_ZIP3 = "000"
ACTIONS = {
    "remove": "removed (blanked and left out of the release)",
    "zip3": "cut to the first three digits; areas of fewer than 20,000 people written 000",
    "year": "reduced to the year",
    "birth_date": "reduced to the year of birth; years implying an age over 89 written '90 or older'",
    "birth_year": "years implying an age over 89 written '90 or older'",
    "age": "ages over 89 written '90 or older'",
    "pseudonym": "kept as a keyed pseudonym: Safe Harbor's re-identification code only if the key stays with "
    "the data holder (it is derived from the identifier)",
}
_AGE_NAME = re.compile(r"^(age|ages|age ?(years|yrs|in years|at [a-z ]+)|patient ?age|age ?at ?[a-z]+)$")
_BIRTH_YEAR_NAME = re.compile(r"^(birth ?year|year ?of ?birth|yob|byear|birthyr|birth ?yr|yrbirth)$")
_BIRTH_DATE_NAME = re.compile(r"\b(dob|bdate|birth ?date|birthday|date ?of ?birth|birth)\b")
_ZIP_NAME = re.compile(r"\b(zip|zip ?code|zipcode|zip3|zip5|postcode|post ?code|postal ?code|zcta)\b")
_ZIP_VALUE = re.compile(r"^\d{3,5}(?:-\d{4})?$")


def _words(name: object) -> str:
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", str(name))
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


@dataclass(frozen=True)
class SafeHarborChange:
    """What Safe Harbor does to one column: ``action`` (see the module text), the HIPAA
    item (``letter``, "A".."R") and why the column was recognised."""

    column: str
    action: str
    letter: str
    reason: str

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ParameterError(f"'{self.action}' is not a Safe Harbor change; use one of {', '.join(ACTIONS)}.")

    def sentence(self) -> str:
        """The change in words.

        >>> SafeHarborChange("zip", "zip3", "B", "its name").sentence()
        'zip: cut to the first three digits; areas of fewer than 20,000 people written 000 (HIPAA (B); its name)'
        """
        return f"{self.column}: {ACTIONS[self.action]} (HIPAA ({self.letter}); {self.reason})"

    def to_json(self) -> dict[str, str]:
        return {"column": self.column, "action": self.action, "letter": self.letter, "reason": self.reason}


def safe_harbor_plan(
    frame: pd.DataFrame, *, pseudonymized: Iterable[str] = (), leave: Iterable[str] = ()
) -> tuple[SafeHarborChange, ...]:
    """The Safe Harbor change of every column of ``frame`` it recognises, in column order
    (``pseudonymized``: columns holding keyed pseudonyms, kept with a note; ``leave``:
    columns not to touch, e.g. the record count).

    >>> [(c.column, c.action) for c in safe_harbor_plan(pd.DataFrame({"yob": [1920], "sex": ["f"]}))]
    [('yob', 'birth_year')]
    """
    if not isinstance(frame, pd.DataFrame):
        raise ParameterError("Safe Harbor needs a table.")
    pseudonymized, leave = set(pseudonymized), set(leave)
    flags = {f.column: f for f in hipaa_identifiers(frame)}
    changes = []
    for column in frame.columns:
        name = str(column)
        if name in leave:
            continue
        words = _words(name)
        flag = flags.get(name)
        if name in pseudonymized:
            changes.append(SafeHarborChange(name, "pseudonym", flag.letter if flag else "R", "pseudonymised"))
            continue
        if _BIRTH_YEAR_NAME.match(words):
            changes.append(SafeHarborChange(name, "birth_year", "C", f"its name ('{name}') reads like a year of birth"))
            continue
        if _AGE_NAME.match(words) and _numbers(frame[column]).notna().any():
            changes.append(SafeHarborChange(name, "age", "C", f"its name ('{name}') reads like an age"))
            continue
        if flag is None:
            continue
        if flag.letter == "B":
            zipped = _ZIP_NAME.search(words) or "ZIP codes" in flag.reason
            changes.append(SafeHarborChange(name, "zip3" if zipped else "remove", "B", flag.reason))
        elif flag.letter == "C":
            if "age over 89" in flag.reason:
                action = "age"
            elif _BIRTH_DATE_NAME.search(words):
                action = "birth_date"
            else:
                action = "year"
            changes.append(SafeHarborChange(name, action, "C", flag.reason))
        else:
            changes.append(SafeHarborChange(name, "remove", flag.letter, flag.reason))
    return tuple(changes)


@lru_cache(maxsize=1)
def zip3_areas() -> tuple[frozenset[str], tuple[str, ...]]:
    """The 2010 census ZIP3 areas (from the bundled ZCTA populations) and, sorted, those
    with fewer than 20,000 people.

    >>> known, small = zip3_areas()
    >>> "372" in known, small[:3]
    (True, ('036', '059', '102'))
    """
    from .synthetic import zip3_populations

    populations = zip3_populations()
    return frozenset(populations), tuple(sorted(z for z, n in populations.items() if n < SMALL_AREA))


def _numbers(series: pd.Series) -> pd.Series:
    """The leading number of each value (``"90+"`` is 90), NaN where there is none."""
    if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
        return pd.to_numeric(series, errors="coerce").astype(float)
    text = series.astype("string").str.extract(r"^\s*(-?\d+(?:\.\d+)?)", expand=False)
    return pd.to_numeric(text, errors="coerce").astype(float)


def _as_text(series: pd.Series) -> pd.Series:
    """Values as text (whole numbers without ``.0``), missing stays missing."""
    out = series.astype(object).copy()
    present = series.notna().to_numpy()
    numbers = _numbers(series) if pd.api.types.is_numeric_dtype(series) else None
    if numbers is not None:
        whole = present & np.isfinite(numbers.to_numpy()) & (np.floor(numbers.to_numpy()) == numbers.to_numpy())
        out[whole] = [str(int(v)) for v in numbers.to_numpy()[whole]]
        out[present & ~whole] = [str(v) for v in series.to_numpy()[present & ~whole]]
    else:
        out[present] = [str(v).strip() for v in series.to_numpy()[present]]
    out[~present] = None
    return out


def _top_coded(series: pd.Series, old: np.ndarray) -> pd.Series:
    out = _as_text(series)
    out[old] = TOP_LABEL
    return out


def _zip3(series: pd.Series, column: str) -> pd.Series:
    text = _as_text(series)
    present = text.notna().to_numpy()
    values = text[present].astype(str)
    bad = values[~values.str.match(_ZIP_VALUE)]
    if len(bad):
        shown = ", ".join(repr(v) for v in pd.unique(bad)[:3])
        raise ColumnError(
            f"The ZIP code column '{column}' has {len(bad):,} value{'s' if len(bad) != 1 else ''} that "
            f"{'is not a ZIP code' if len(bad) == 1 else 'are not ZIP codes'} (e.g. {shown}); Safe Harbor "
            "needs 5-digit ZIP codes (or their first three digits)."
        )
    known, small = zip3_areas()
    three = values.str.split("-").str[0].str.zfill(5).str[:3]
    restricted = three.isin(set(small)) | ~three.isin(known)
    three = three.where(~restricted, RESTRICTED_ZIP3)
    out = pd.Series([None] * len(series), index=series.index, dtype=object)
    out[present] = three.to_numpy(dtype=object)
    return out


def apply_safe_harbor(frame: pd.DataFrame, changes: Sequence[SafeHarborChange], *, reference_year: int) -> pd.DataFrame:
    """``frame`` with every change made (a new table; removed columns blanked, to be left
    out of the release). ``reference_year`` is the year ages are counted to for birth
    dates and years."""
    if isinstance(reference_year, bool) or not isinstance(reference_year, (int, np.integer)):
        raise ParameterError(f"The reference year is a whole year such as 2024; got {reference_year!r}.")
    missing = [c.column for c in changes if c.column not in frame.columns]
    if missing:
        raise ColumnError(f"Safe Harbor was planned for {', '.join(missing)}, which this table lacks.")
    out = frame.copy(deep=False)
    for change in changes:
        series = frame[change.column]
        if change.action == "remove":
            out[change.column] = pd.Series([None] * len(frame), index=frame.index, dtype=object)
        elif change.action == "zip3":
            out[change.column] = _zip3(series, change.column)
        elif change.action in ("year", "birth_date"):
            parsed, _ = parse_dates(series, change.column)
            years = parsed.dt.year
            text = years.astype("Int64").astype("string").astype(object).where(parsed.notna(), None)
            if change.action == "birth_date":
                text[(reference_year - years >= TOP_AGE).to_numpy(dtype=bool)] = TOP_LABEL
            out[change.column] = pd.Series(text.to_numpy(dtype=object), index=frame.index, dtype=object)
        elif change.action == "birth_year":
            years = _numbers(series)
            out[change.column] = _top_coded(series, (reference_year - years >= TOP_AGE).to_numpy(dtype=bool))
        elif change.action == "age":
            out[change.column] = _top_coded(series, (_numbers(series) > TOP_AGE - 1).to_numpy(dtype=bool))
        # "pseudonym": kept as it is
    return out
