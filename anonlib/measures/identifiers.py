"""Direct identifiers left in a file: a check against HIPAA's 18 Safe Harbor identifiers.

The HIPAA Privacy Rule's Safe Harbor method (45 CFR 164.514(b)(2)(i)) lists
18 kinds of identifiers that must be removed before health data count as
de-identified: (A) names; (B) geographic subdivisions smaller than a state
(street address, city, county, ZIP code beyond its first three digits);
(C) all elements of dates except the year, and ages over 89; (D) telephone and
(E) fax numbers; (F) e-mail addresses; (G) social security numbers;
(H) medical record numbers; (I) health plan beneficiary numbers; (J) account
numbers; (K) certificate and license numbers; (L) vehicle identifiers;
(M) device identifiers and serial numbers; (N) URLs; (O) IP addresses;
(P) biometric identifiers; (Q) full-face photographs; (R) any other unique
identifying number, characteristic or code.

Like ARX's HIPAA identifier check, ``hipaa_identifiers`` looks at each
column's name (words such as "email", "dob", "mrn") and at a sample of its
values (patterns of e-mail addresses, phone numbers, SSNs, dates, IP
addresses, URLs, ZIP codes, VINs, person names, and codes that are different
for every record) and flags the column with the identifier it looks like, the
reason, and the role to give it: ``identifier`` (drop it) for direct
identifiers and for free text (long values, mostly different: it may name anyone), ``quasi-identifier`` (generalize it) for places, dates and ages.
It is a screening aid: a flag is a reason to look, not a verdict.

Example:
    >>> import pandas as pd
    >>> df = pd.DataFrame({"contact": ["ann@example.org", "bob@example.com"], "age": [34, 91], "dx": ["flu", "flu"]})
    >>> [(f.column, f.letter, f.suggested_role.value) for f in hipaa_identifiers(df)]
    [('contact', 'F', 'identifier'), ('age', 'C', 'quasi-identifier')]
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.dataset import Role, looks_like_free_text
from ..core.errors import ParameterError

#: Safe Harbor letter -> what it covers
HIPAA_IDENTIFIERS = {
    "A": "names",
    "B": "geographic subdivisions smaller than a state",
    "C": "dates (except the year) and ages over 89",
    "D": "telephone numbers",
    "E": "fax numbers",
    "F": "e-mail addresses",
    "G": "social security numbers",
    "H": "medical record numbers",
    "I": "health plan beneficiary numbers",
    "J": "account numbers",
    "K": "certificate and license numbers",
    "L": "vehicle identifiers and serial numbers",
    "M": "device identifiers and serial numbers",
    "N": "web addresses (URLs)",
    "O": "IP addresses",
    "P": "biometric identifiers",
    "Q": "full-face photographs",
    "R": "other unique identifying numbers or codes",
}
_QUASI = {"B", "C"}  # generalized rather than removed
_ADVICE = {
    "B": "generalize it (e.g. keep the first three ZIP digits of areas over 20,000 people) or drop it",
    "C": "keep only the year (and group ages over 89 as 90 or older)",
}
_DROP = "drop it or replace it with a code that is not derived from it"


@dataclass(frozen=True)
class IdentifierFlag:
    """One column that looks like a HIPAA identifier."""

    column: str
    letter: str  # Safe Harbor item, "A".."R"
    identifier: str  # what the item covers
    reason: str  # why the column was flagged, in words
    suggested_role: Role
    advice: str
    matched_share: float  # share of the sampled values matching (1.0 for a name match alone)

    def as_dict(self) -> dict[str, object]:
        """Plain values for JSON.

        >>> hipaa_identifiers(pd.DataFrame({"SSN": ["123-45-6789"]}))[0].as_dict()["suggested_role"]
        'identifier'
        """
        return {
            "column": self.column,
            "hipaa": f"({self.letter}) {self.identifier}",
            "reason": self.reason,
            "suggested_role": self.suggested_role.value,
            "advice": self.advice,
            "matched_share": self.matched_share,
        }


# --------------------------------------------------------------------------- column names

_NAME_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (letter, re.compile(pattern))
    for letter, pattern in (
        ("G", r"\b(ssn|social ?security( ?(number|no|nr))?|socsec)\b"),
        ("F", r"\b(e ?mail( ?address)?|mail ?address)\b"),
        ("E", r"\b(fax( ?(number|no|nr))?|facsimile)\b"),
        ("D", r"\b(phone|tel|telephone|mobile|cell ?phone|cell|phone ?(number|no|nr))\b"),
        ("O", r"\b(ip|ip ?address|ipv4|ipv6)\b"),
        ("N", r"\b(url|uri|website|web ?site|homepage|web ?address|link)\b"),
        ("H", r"\b(mrn|medical ?record( ?(number|no|nr|id))?|chart ?(number|no|nr|id)|record ?(number|no|nr))\b"),
        (
            "I",
            r"\b(beneficiary|health ?plan|member ?(id|number|no)|insurance ?(id|number|no)|policy ?(number|no|nr)|medicaid|medicare)\b",
        ),
        ("J", r"\b(account( ?(number|no|nr))?|acct|iban|bank ?account)\b"),
        ("K", r"\b(licen[cs]e( ?(number|no|nr))?|certificate( ?(number|no|nr))?|npi|dea ?number)\b"),
        ("L", r"\b(vin|vehicle|licen[cs]e ?plate|plate ?(number|no))\b"),
        ("M", r"\b(device( ?id)?|serial( ?(number|no|nr))?|imei|udi|mac ?address)\b"),
        ("P", r"\b(fingerprint|finger ?print|voice ?print|biometric|retina|iris ?scan)\b"),
        ("Q", r"\b(photo|photograph|picture|face ?image|portrait)\b"),
        (
            "A",
            r"\b(name|full ?name|first ?name|last ?name|surname|forename|given ?name|family ?name|maiden ?name|patient ?name)\b",
        ),
        (
            "B",
            r"\b(address|street|city|town|county|zip|zip ?code|zipcode|postcode|post ?code|postal ?code|precinct|latitude|longitude|lat|lon|lng|geo ?location|coordinates)\b",
        ),
        (
            "C",
            r"\b(date|dob|dod|birth ?date|birthday|date ?of ?birth|timestamp|datetime)\b"
            r"|^(birth|admission|admitted|discharge|discharged|death|deceased)( ?(time|day|dt))?$",
        ),
        (
            "R",
            r"\b(id|ids|identifier|uuid|guid|pseudonym|patient ?(id|number|nbr|no)|encounter ?(id|number|nbr)|case ?(id|number))\b",
        ),
    )
)
# "name" after these words is not a person's name
_NOT_A_PERSON = re.compile(
    r"\b(drug|hospital|product|file|facility|test|company|brand|medication|device|disease|diagnosis|unit|ward|study|site|variable|column|field|user)\s?name\b"
)


def _words(name: str) -> str:
    """A column name as lower-case words: "patientDOB_2" -> "patient dob 2"."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", str(name))
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


def _name_match(name: str) -> str | None:
    words = _words(name)
    for letter, pattern in _NAME_RULES:
        if pattern.search(words):
            if letter == "A" and _NOT_A_PERSON.search(words):
                continue
            if letter == "B" and re.search(r"\b(e ?mail|ip|web)\s?address\b", words):
                continue
            return letter
    return None


# --------------------------------------------------------------------------- values

_IPV4 = r"(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_MONTHS = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_VALUE_RULES: tuple[tuple[str, str, re.Pattern[str]], ...] = tuple(
    (letter, what, re.compile(pattern, re.IGNORECASE))
    for letter, what, pattern in (
        ("F", "e-mail addresses", r"[\w.%+-]+@[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}"),
        ("N", "web addresses", r"(?:https?://|ftp://|www\.)[^\s]+"),
        ("O", "IP addresses", _IPV4 + r"|(?:[0-9a-f]{1,4}:){2,7}[0-9a-f]{0,4}(?::[0-9a-f]{1,4})*"),
        ("G", "social security numbers", r"\d{3}-\d{2}-\d{4}"),
        ("D", "telephone numbers", r"(?:\+\d{1,3}[\s.-]?)?(?:\(\d{2,4}\)[\s.-]?|\d{2,4}[\s.-])\d{3,4}[\s.-]\d{3,4}"),
        (
            "C",
            "full dates",
            r"\d{4}-\d{1,2}-\d{1,2}(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
            r"|\d{1,2}[/.-]\d{1,2}[/.-](?:\d{4}|\d{2})"
            r"|\d{1,2}\s" + _MONTHS + r"\s\d{2,4}|" + _MONTHS + r"\s\d{1,2},?\s\d{4}",
        ),
        ("L", "vehicle identification numbers", r"(?=.*\d)(?=.*[A-HJ-NPR-Z])[A-HJ-NPR-Z0-9]{17}"),
        ("B", "ZIP codes", r"\d{5}(?:-\d{4})?"),
    )
)
_PERSON_NAME = re.compile(r"[A-Z][a-z]+(?:[-'][A-Z]?[a-z]+)*(?:\s[A-Z]\.?)?(?:,)?\s[A-Z][a-z]+(?:[-'][A-Z]?[a-z]+)*")
_CODE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")


def _sample(series: pd.Series, size: int) -> pd.Series:
    """Up to ``size`` non-missing values as text, spread evenly over the column (no randomness)."""
    values = series.dropna()
    if len(values) > size:
        values = values.iloc[np.linspace(0, len(values) - 1, size).astype(np.int64)]
    return values.astype(str).str.strip()


def _value_match(series: pd.Series, size: int, threshold: float) -> tuple[str, str, float] | None:
    """(letter, what, share) of the first value pattern most sampled values match."""
    if pd.api.types.is_datetime64_any_dtype(series):
        return ("C", "dates", 1.0)
    text = _sample(series, size)
    if text.empty:
        return None
    numeric = pd.api.types.is_numeric_dtype(series)
    for letter, what, pattern in _VALUE_RULES:
        if numeric and letter in ("B", "D", "G", "C"):
            continue  # a number column of 5 digits is more likely an amount than a ZIP code
        share = float(text.str.fullmatch(pattern).mean())
        if share >= threshold:
            return letter, what, share
    distinct = text.nunique() / len(text)
    if not numeric:
        share = float(text.str.fullmatch(_PERSON_NAME).mean())
        if share >= threshold and distinct >= 0.5:
            return "A", "person names", share
    return None


def _distinct_share(series: pd.Series) -> float:
    values = series.dropna()
    return float(values.nunique() / len(values)) if len(values) else 0.0


def _unique_code(series: pd.Series, size: int) -> float | None:
    """Share of distinct values when a text column holds a different code (letters and
    digits, at least one digit) for nearly every record: an identifying code (R). Number
    columns are left to their names: amounts and counts are often all different too."""
    if pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series) or series.notna().sum() < 20:
        return None
    text = _sample(series, size)
    if text.str.fullmatch(_CODE).mean() < 0.95 or text.str.contains(r"\d").mean() < 0.95:
        return None  # words or free text, not codes
    share = _distinct_share(series)
    return share if share >= 0.95 else None


def hipaa_identifiers(frame: pd.DataFrame, *, sample: int = 1000, threshold: float = 0.8) -> tuple[IdentifierFlag, ...]:
    """Columns of ``frame`` that look like one of HIPAA's 18 identifiers, in column order.

    A column is flagged by its name, or when at least ``threshold`` of up to
    ``sample`` of its values match an identifier's pattern, or when it holds a
    different whole number or code for (nearly) every record.

    >>> df = pd.DataFrame({"patient_nbr": range(30), "visit": ["2020-01-03"] * 30, "dx": ["flu"] * 30})
    >>> [(f.column, f.letter, f.reason) for f in hipaa_identifiers(df)]  # doctest: +NORMALIZE_WHITESPACE
    [('patient_nbr', 'R', "its name ('patient_nbr') reads like other unique identifying numbers or codes"),
     ('visit', 'C', '100% of the sampled values look like full dates')]
    """
    if not isinstance(frame, pd.DataFrame):
        raise ParameterError("The HIPAA identifier check needs a table.")
    if not (isinstance(sample, int) and sample >= 1):
        raise ParameterError(f"The number of values to sample must be a whole number of at least 1; got {sample}.")
    if not 0.0 < float(threshold) <= 1.0:
        raise ParameterError(f"The share of matching values must be above 0 and at most 1; got {threshold}.")
    flags = []
    for column in frame.columns:
        series = frame[column]
        by_name = _name_match(str(column))
        by_value = _value_match(series, sample, float(threshold))
        letter, reason, share = None, "", 1.0
        if by_value is not None:
            letter, what, share = by_value
            reason = f"{share:.0%} of the sampled values look like {what}"
            if by_name == letter:
                reason = f"its name ('{column}') and " + reason
        elif by_name == "R" and _distinct_share(series) < 0.5:
            pass  # a category code named "..._id" (admission_type_id), not one per record
        elif by_name is not None:
            letter = by_name
            reason = f"its name ('{column}') reads like {HIPAA_IDENTIFIERS[letter]}"
            if letter == "C" and _words(str(column)) == "age":
                letter = None
        if letter is None and re.fullmatch(r"age|age ?(years|yrs|at .*)?", _words(str(column))):
            ages = pd.to_numeric(series, errors="coerce")
            old = int((ages > 89).sum())
            if old:
                letter, share = "C", old / max(int(ages.notna().sum()), 1)
                reason = f"{old:,} records have an age over 89"
        if letter is None:
            unique = _unique_code(series, sample)
            if unique is not None:
                letter, share = "R", unique
                reason = f"{unique:.0%} of its values are different: a code that singles out each record"
        if letter is None and looks_like_free_text(series, sample):
            letter, share = "R", _distinct_share(series)
            reason = (
                f"free text (long values, {share:.0%} of them different): it may name people, places, dates "
                "or numbers; a possible identifier"
            )
        if letter is None:
            continue
        role = Role.QUASI_IDENTIFIER if letter in _QUASI else Role.IDENTIFIER
        flags.append(
            IdentifierFlag(
                column=str(column),
                letter=letter,
                identifier=HIPAA_IDENTIFIERS[letter],
                reason=reason,
                suggested_role=role,
                advice=_ADVICE.get(letter, _DROP),
                matched_share=float(share),
            )
        )
    return tuple(flags)


def flags_table(flags: tuple[IdentifierFlag, ...]) -> pd.DataFrame:
    """The flags as a table for display or download.

    >>> flags_table(hipaa_identifiers(pd.DataFrame({"email": ["a@b.org"]}))).columns.tolist()
    ['column', 'HIPAA identifier', 'why', 'suggested role', 'what to do']
    """
    return pd.DataFrame(
        {
            "column": [f.column for f in flags],
            "HIPAA identifier": [f"({f.letter}) {f.identifier}" for f in flags],
            "why": [f.reason for f in flags],
            "suggested role": [f.suggested_role.value for f in flags],
            "what to do": [f.advice for f in flags],
        }
    )
