"""Keyed pseudonyms and per-person date shifts: the same value, the same key, the same result.

Both are HMAC-SHA-256 under a secret 256-bit key (the project key,
``anonlib.workflow.keys``), so nobody without the key can recompute a pseudonym
from a record number or an offset from a person, and every delivery made with the
same key gets the same pseudonyms and offsets (deliveries link):

- ``pseudonyms``: ``hmac.new(key, value.strip().encode("utf-8"), sha256).hexdigest()``
  cut to ``length`` hex characters (16 by default, at least 12), with an optional
  prefix. The value is taken as read (text, leading zeros kept); a whole number held
  in a number column is written without a decimal point (``123``, not ``123.0``).
  Two different values that would get the same pseudonym are refused (a collision;
  with 16 hex characters the chance is about n² / 2⁶⁵ for n values).
- ``date_offsets``: one offset in days per person, uniform within ±``days``, from
  the HMAC of the person's value under the same key with its own domain label
  ("anonlib shift-dates"), so an offset cannot be computed from a pseudonym.
- ``shift_dates``: every date of a record moved by its person's offset; intervals
  between the dates of one person are kept exactly.

Example:
    >>> import hashlib, hmac
    >>> key = bytes(range(32))
    >>> pseudonyms(pd.Series([" 00123", "00124", None]), key).tolist()[:2] == [
    ...     hmac.new(key, b"00123", hashlib.sha256).hexdigest()[:16],
    ...     hmac.new(key, b"00124", hashlib.sha256).hexdigest()[:16]]
    True
    >>> shifted = shift_dates(pd.Series(["2020-01-01", "2020-01-11"]), np.array([3, 3]), "visit")
    >>> shifted.tolist()
    ['2020-01-04', '2020-01-14']
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..core.dataset import looks_like_dates
from ..core.errors import ColumnError, ParameterError
from ..core.structure import is_day_offset, named_day_offsets

DEFAULT_LENGTH = 16
MIN_LENGTH = 12
MAX_LENGTH = 64
DEFAULT_SHIFT_DAYS = 182
MAX_SHIFT_DAYS = 3_650
_SHIFT_LABEL = b"anonlib shift-dates\x00"
_SHOWN = 3  # values named in an error


def check_length(length: int) -> int:
    """A pseudonym length checked: whole, between 12 and 64 hex characters.

    >>> check_length(16)
    16
    """
    if isinstance(length, bool) or not isinstance(length, (int, np.integer)) or not MIN_LENGTH <= length <= MAX_LENGTH:
        raise ParameterError(
            f"A pseudonym is {MIN_LENGTH} to {MAX_LENGTH} hexadecimal characters long (16 by default); got {length!r}."
        )
    return int(length)


def check_days(days: int) -> int:
    """A date-shift range checked: a whole number of days from 1 to 3,650.

    >>> check_days(182)
    182
    """
    if isinstance(days, bool) or not isinstance(days, (int, np.integer)) or not 1 <= days <= MAX_SHIFT_DAYS:
        raise ParameterError(
            f"Dates are shifted by at most a whole number of days from 1 to {MAX_SHIFT_DAYS:,} (182 by default); "
            f"got {days!r}."
        )
    return int(days)


def value_texts(values: pd.Series) -> pd.Series:
    """Each value as the text that is hashed: stripped, a whole number in a number column
    without a decimal point; missing stays missing.

    >>> value_texts(pd.Series([7.0, None, 2.5])).tolist()
    ['7', None, '2.5']
    """
    series = pd.Series(values)
    out = pd.Series([None] * len(series), index=series.index, dtype=object)
    present = series.notna().to_numpy()
    if not present.any():
        return out
    kept = series[present]
    if pd.api.types.is_numeric_dtype(kept) and not pd.api.types.is_bool_dtype(kept):
        numbers = kept.to_numpy(dtype=float)
        whole = np.isfinite(numbers) & (np.floor(numbers) == numbers)
        text = np.array([str(int(v)) if w else repr(float(v)) for v, w in zip(numbers, whole)], dtype=object)
    else:
        text = kept.astype(str).str.strip().to_numpy(dtype=object)
    out[present] = text
    return out


def _keyed(key: bytes, label: bytes = b""):
    """HMAC-SHA-256 under ``key`` of ``label + text``, as a function of ``text``: RFC 2104
    with the padded key's inner and outer SHA-256 states computed once and copied per value
    (the same bytes as ``hmac.new(key, label + text, sha256).digest()``, checked by the
    tests against ``hmac.new``; a fresh HMAC per value costs several times more).

    >>> import hmac
    >>> _keyed(b"k")("x") == hmac.new(b"k", b"x", hashlib.sha256).digest()
    True
    """
    block = hashlib.sha256().block_size
    padded = (hashlib.sha256(key).digest() if len(key) > block else bytes(key)).ljust(block, b"\0")
    inner = hashlib.sha256(bytes(b ^ 0x36 for b in padded))
    outer = hashlib.sha256(bytes(b ^ 0x5C for b in padded))
    inner.update(label)

    def digest(text: str) -> bytes:
        first = inner.copy()
        first.update(text.encode("utf-8"))
        second = outer.copy()
        second.update(first.digest())
        return second.digest()

    return digest


def keyed_digest(key: bytes, label: bytes = b""):
    """HMAC-SHA-256 under ``key`` of ``label + text``, as a function of ``text`` (the pseudonyms'
    keyed hash, for other draws made under the project key, such as the records-per-person cap).

    >>> import hmac
    >>> keyed_digest(b"k", b"x:")("y") == hmac.new(b"k", b"x:y", hashlib.sha256).digest()
    True
    """
    return _keyed(key, label)


def _distinct_texts(values: pd.Series) -> tuple[np.ndarray, pd.Series, np.ndarray]:
    """Each row's code among the distinct present values (-1 for missing), and each distinct
    value's text (``value_texts``): the hash is computed once per distinct value."""
    codes, uniques = pd.factorize(pd.Series(values), use_na_sentinel=True)
    return codes, value_texts(pd.Series(uniques)), codes >= 0


def _per_distinct(values: pd.Series, make) -> pd.Series:
    """``make(text)`` once per distinct value, mapped back to every row (missing stays missing)."""
    codes, texts, present = _distinct_texts(values)
    made = np.array([make(t) for t in texts], dtype=object)
    out = np.full(len(codes), None, dtype=object)
    out[present] = made[codes[present]]
    return pd.Series(out, index=pd.Series(values).index, dtype=object)


def pseudonyms(
    values: pd.Series, key: bytes, *, length: int = DEFAULT_LENGTH, prefix: str = "", column: str = "the column"
) -> pd.Series:
    """Each value's keyed pseudonym (see the module text); missing values stay missing.
    Two different values with one pseudonym are refused in one sentence."""
    length = check_length(length)
    codes, texts, present = _distinct_texts(values)
    keyed = _keyed(key)
    made = np.array([prefix + keyed(t).hex()[:length] for t in texts], dtype=object)
    pairs = pd.DataFrame({"value": texts.to_numpy(dtype=object), "pseudonym": made}).drop_duplicates()
    clashing = pairs[pairs.duplicated("pseudonym", keep=False)]
    if len(clashing):
        raise ColumnError(
            f"Two different values of {column} would get the same pseudonym ({clashing['pseudonym'].iloc[0]}); "
            f"use longer pseudonyms (at least {length + 4} characters) so that each value keeps its own."
        )
    out = np.full(len(codes), None, dtype=object)
    out[present] = made[codes[present]]
    return pd.Series(out, index=pd.Series(values).index, dtype=object)


def date_offsets(persons: pd.Series, key: bytes, days: int, *, column: str = "the person column") -> np.ndarray:
    """Per row, its person's offset in days, uniform within ±``days`` (from the keyed
    hash of the person's value, the same in every delivery); a blank person is refused."""
    days = check_days(days)
    blanks = int(pd.Series(persons).isna().sum())
    if blanks:
        raise ColumnError(
            f"The person column {column} is blank in {blanks:,} record{'s' if blanks != 1 else ''}; every record "
            "needs its person to shift its dates (fill them in, or choose another person column)."
        )
    span = 2 * days + 1
    keyed = _keyed(key, _SHIFT_LABEL)
    made = _per_distinct(persons, lambda text: int.from_bytes(keyed(text)[:8], "big") % span - days)
    return made.to_numpy(dtype=np.int64)


# a whole date: YYYY-MM-DD, optionally a time of day and a UTC offset
_WHOLE_DATE = r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?"
_OFFSET = r"(?:Z|[+-]\d{2}(?::?\d{2})?)$"
FIRST_DATE, LAST_DATE = pd.Timestamp("0001-01-01"), pd.Timestamp("9999-12-31 23:59:59.999999")


def parse_dates(series: pd.Series, column: str, *, whole: bool = False) -> tuple[pd.Series, bool]:
    """The values of a date column as timestamps, and whether any holds a time of day.
    Dates are ISO 8601 (``2020-01-31``, optionally ``2020-01-31 14:05:00``) or of a
    date type; anything else is named in one sentence, and so are times with different
    UTC offsets in one column. With ``whole`` (a date shift), a partial or compact date
    (``2020``, ``2020-06``, ``20200131``) is refused too: a shift would invent its day.
    Missing stays missing (NaT).

    >>> parse_dates(pd.Series(["2020", "2020-06-01"]), "seen", whole=True)
    Traceback (most recent call last):
    ...
    anonlib.core.errors.ColumnError: The date column 'seen' has 1 value that is not a whole date written as YYYY-MM-DD (e.g. '2020'); a date shift moves days, so a partial or compact date would be released as a day it never was: write whole dates or leave this column out.
    """
    if pd.api.types.is_datetime64_any_dtype(series):
        parsed = pd.to_datetime(series)
    else:
        text = series.astype("string").str.strip()
        given = text.notna() & (text != "")
        offsets = text[given].str.extract(f"[T ]\\d{{2}}:\\d{{2}}(?::\\d{{2}}(?:[.,]\\d+)?)?({_OFFSET})", expand=False)
        found = pd.unique(offsets.dropna().str.replace("Z", "+00:00"))
        if len(found) > 1 or (len(found) == 1 and offsets.isna().any()):
            shown = ", ".join(repr(str(v)) for v in list(found)[:_SHOWN] + (["none"] if offsets.isna().any() else []))
            raise ColumnError(
                f"The date column '{column}' mixes times of different UTC offsets ({shown}); write every time in one "
                "offset (or in UTC) so that no date moves by the hours between them."
            )
        try:
            parsed = pd.to_datetime(text, format="ISO8601", errors="coerce")
        except (ValueError, OverflowError):
            parsed = pd.Series(pd.NaT, index=text.index)
        bad = text[parsed.isna() & given]
        if len(bad):
            shown = ", ".join(repr(str(v)) for v in pd.unique(bad)[:_SHOWN])
            raise ColumnError(
                f"The date column '{column}' has {len(bad):,} value{'s' if len(bad) != 1 else ''} that "
                f"{'is not a date' if len(bad) == 1 else 'are not dates'} written as YYYY-MM-DD (e.g. {shown}); "
                "correct them or leave this column out."
            )
        if whole:
            partial = text[given & ~text.str.fullmatch(_WHOLE_DATE).fillna(False)]
            if len(partial):
                shown = ", ".join(repr(str(v)) for v in pd.unique(partial)[:_SHOWN])
                raise ColumnError(
                    f"The date column '{column}' has {len(partial):,} value{'s' if len(partial) != 1 else ''} that "
                    f"{'is not a whole date' if len(partial) == 1 else 'are not whole dates'} written as YYYY-MM-DD "
                    f"(e.g. {shown}); a date shift moves days, so a partial or compact date would be released as a "
                    "day it never was: write whole dates or leave this column out."
                )
    if getattr(parsed.dt, "tz", None) is not None:
        parsed = parsed.dt.tz_localize(None)
    if parsed.dtype == "datetime64[ns]":  # microseconds reach far beyond year 9999, so a shift cannot overflow
        parsed = parsed.astype("datetime64[us]")
    present = parsed.dropna()
    timed = bool(len(present)) and bool((present != present.dt.normalize()).any())
    return parsed, timed


def shift_dates(series: pd.Series, offsets: np.ndarray, column: str) -> pd.Series:
    """``series`` (dates, see ``parse_dates``) moved by ``offsets`` days, written as
    ``YYYY-MM-DD`` (with ``HH:MM:SS`` when the column holds times); missing stays missing.
    Whole-number day offsets (days since enrolment, a pandemic day: ``shift_day_offsets``)
    move by the same days.
    A date the shift would move before 0001-01-01 or after 9999-12-31 is refused in a
    sentence (no such date can be written), and so is a partial date (``parse_dates``).

    >>> shift_dates(pd.Series(["9999-12-20"]), np.array([30]), "seen")
    Traceback (most recent call last):
    ...
    anonlib.core.errors.ColumnError: Shifting the date column 'seen' would move 1 date out of the dates that can be written (0001-01-01 to 9999-12-31), e.g. '9999-12-20' by +30 days; correct these dates or leave this column out.
    """
    if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
        return shift_day_offsets(series, offsets, column)
    parsed, timed = parse_dates(series, column, whole=True)
    shift = np.asarray(offsets, dtype=np.int64)
    moved = parsed + pd.to_timedelta(shift, unit="D")
    outside = (moved < FIRST_DATE) | (moved > LAST_DATE)
    if outside.any():
        first = int(np.flatnonzero(outside.to_numpy())[0])
        raise ColumnError(
            f"Shifting the date column '{column}' would move {int(outside.sum()):,} date"
            f"{'s' if outside.sum() != 1 else ''} out of the dates that can be written (0001-01-01 to 9999-12-31), "
            f"e.g. '{series.iloc[first]}' by {int(shift[first]):+,} days; correct these dates or leave this column out."
        )
    text = moved.dt.strftime("%Y-%m-%d %H:%M:%S" if timed else "%Y-%m-%d")
    values = text.astype(object).where(moved.notna(), None)
    return pd.Series(values.to_numpy(dtype=object), index=series.index, dtype=object)


def shift_day_offsets(series: pd.Series, offsets: np.ndarray, column: str) -> pd.Series:
    """Whole-number day offsets (a name saying day: ``day``, ``pan_day``, ``days_since_entry``)
    moved by ``offsets`` days, whole numbers still; missing stays missing. Other numbers are
    refused in one sentence: a shift moves days, not ages or amounts.

    >>> shift_day_offsets(pd.Series([0, 192, None], dtype="Int64"), np.array([5, 5, 5]), "day").tolist()
    [5, 197, <NA>]
    >>> shift_day_offsets(pd.Series([30, 41]), np.array([1, 1]), "age")
    Traceback (most recent call last):
    ...
    anonlib.core.errors.ColumnError: The column 'age' holds numbers, not dates nor days: a date shift moves dates written as YYYY-MM-DD or whole-number day offsets under a name saying day (day, visit_day, days_since_entry); leave this column out of the shift.
    """
    if not named_day_offsets(column, series):
        raise ColumnError(
            f"The column '{column}' holds numbers, not dates nor days: a date shift moves dates written as "
            "YYYY-MM-DD or whole-number day offsets under a name saying day (day, visit_day, days_since_entry); "
            "leave this column out of the shift."
        )
    days = pd.to_numeric(series).astype("Int64")
    return days + pd.array(np.asarray(offsets, dtype=np.int64), dtype="Int64")


def _as_dates(series: pd.Series, column: str) -> pd.Series:
    """Dates parsed, or day offsets as days from one fixed day (their intervals are what counts)."""
    if pd.api.types.is_numeric_dtype(series) and named_day_offsets(column, series):
        return pd.Timestamp("2000-01-01") + pd.to_timedelta(
            pd.to_numeric(series).astype("Float64").to_numpy(float, na_value=np.nan), unit="D"
        )
    return parse_dates(series, column)[0]


def within_person_intervals(frame: pd.DataFrame, person: str, columns: Sequence[str]) -> pd.DataFrame:
    """Per record and date column, its distance in days from its person's first date
    (over every date column): the intervals a date shift must keep.

    >>> df = pd.DataFrame({"p": ["a", "a"], "d": ["2020-01-01", "2020-01-05"]})
    >>> within_person_intervals(df, "p", ["d"])["d"].tolist()
    [0.0, 4.0]
    """
    parsed = pd.DataFrame({c: _as_dates(frame[c], c) for c in columns}, index=frame.index)
    first = parsed.min(axis=1).groupby(frame[person].to_numpy()).transform("min")
    return pd.DataFrame({c: (parsed[c] - first.to_numpy()).dt.total_seconds() / 86400.0 for c in columns})


def date_columns(frame: pd.DataFrame, *, leave: Sequence[str] = ()) -> tuple[str, ...]:
    """The columns of ``frame`` holding dates (a date type, or every value an ISO date) or
    day offsets (``structure.is_day_offset``), except ``leave``: what a date shift is offered for.

    >>> date_columns(pd.DataFrame({"seen": ["2020-01-02", None], "age": [3, 4], "dob": ["1950-02-03", "x"]}))
    ('seen',)
    """
    return tuple(
        str(c)
        for c in frame.columns
        if c not in set(leave) and (looks_like_dates(frame[c]) or is_day_offset(str(c), frame[c]))
    )
