"""A records-per-person cap: at most N records of each person released (``linkable.md`` part 2,
section 7, long tails).

A person with many records is unique on their history whatever the generalization (El Emam &
Arbuckle, *Anonymizing Health Data*, on claims): the longest histories are the rarest. Capping
each person at N records keeps their N **first** records (by a time column, the earliest first,
a blank time last; without a time column in the file's order) or N drawn at **random** under the
project key: each record ranked by the keyed hash (HMAC-SHA-256) of its person's value and its
place among that person's records, so the same file and key always keep the same records and
nobody without the key can tell which were dropped.

Example (a's three visits capped at two: the earliest days 5 and 20 are kept):
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"pid": ["a", "a", "b", "a"], "day": [40, 5, 9, 20]})
    >>> records_kept(frame, "pid", 2, time="day").tolist()
    [False, True, True, True]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.equivalence import person_codes
from ..core.errors import ColumnError, ParameterError
from .pseudonyms import keyed_digest, value_texts

CAP_ORDERS = ("first", "random")
RANDOM_LABEL = b"cap-records\x1f"  # the keyed hash's domain: never the same bytes as a pseudonym's


@dataclass(frozen=True)
class Capped:
    """What a cap removed: ``records`` dropped, ``people`` who lost at least one, ``kept`` per row."""

    records: int
    people: int
    kept: np.ndarray


def check_cap(limit: object) -> int:
    """The cap checked: a whole number of records per person, at least 1.

    >>> check_cap("3")
    3
    >>> check_cap(0)
    Traceback (most recent call last):
    ...
    anonlib.core.errors.ParameterError: The records-per-person cap is a whole number of records, at least 1; got 0.
    """
    number = None
    if isinstance(limit, (int, np.integer)) and not isinstance(limit, bool):
        number = int(limit)
    elif isinstance(limit, str) and limit.strip().isdigit():
        number = int(limit.strip())
    if number is None or number < 1:
        raise ParameterError(
            f"The records-per-person cap is a whole number of records, at least 1; got {str(limit)[:40]}."
        )
    return number


def check_order(order: str) -> str:
    """``first`` or ``random``, else one sentence."""
    if order not in CAP_ORDERS:
        raise ParameterError(f"The cap keeps the first records or random ones ('first' or 'random'); got {order!r}.")
    return order


def time_rank(values: pd.Series, column: str) -> np.ndarray:
    """The values of a time column as numbers that sort as the times do (numbers, dates or
    whole-number day offsets; NaN for a blank), or one sentence naming the column."""
    if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        return pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)
    numbers = pd.to_numeric(values, errors="coerce")
    if numbers.notna().sum() == values.notna().sum():
        return numbers.to_numpy(dtype=np.float64)
    dates = pd.to_datetime(values, errors="coerce", format="ISO8601")
    if dates.notna().sum() == values.notna().sum():
        out = dates.to_numpy(dtype="datetime64[ns]").astype(np.int64).astype(np.float64)
        out[dates.isna().to_numpy()] = np.nan
        return out
    raise ColumnError(
        f"The time column '{column}' holds values that are neither numbers nor dates written as YYYY-MM-DD; "
        "name a time column (a day, a year, a date) with --time, or leave it out to keep the file's order."
    )


def records_kept(
    frame: pd.DataFrame,
    person: str,
    limit: int,
    *,
    order: str = "first",
    time: str | None = None,
    key: bytes | None = None,
) -> np.ndarray:
    """Per row, whether it is among its person's ``limit`` records kept (see the module text)."""
    return cap_records(frame, person, limit, order=order, time=time, key=key).kept


def cap_records(
    frame: pd.DataFrame,
    person: str,
    limit: int,
    *,
    order: str = "first",
    time: str | None = None,
    key: bytes | None = None,
) -> Capped:
    """``records_kept`` with what it removed (records, people).

    >>> c = cap_records(pd.DataFrame({"pid": ["a"] * 4 + ["b"]}), "pid", 3)
    >>> c.records, c.people, c.kept.tolist()
    (1, 1, [True, True, True, False, True])
    """
    limit = check_cap(limit)
    order = check_order(order)
    for column in (person, time):
        if column is not None and column not in frame.columns:
            raise ColumnError(f"'{column}' is not a column of the data.")
    codes, n = person_codes(frame[person], person)
    position = np.arange(len(frame), dtype=np.int64)
    if order == "random":
        if key is None:
            raise ParameterError("Drawing the records to keep at random needs the project key (--key-file).")
        seen = _occurrence(codes)  # a person's first, second, ... record in the file
        digest = keyed_digest(key, RANDOM_LABEL)
        texts = value_texts(frame[person]).to_numpy(dtype=object)
        ranks = np.array(
            [int.from_bytes(digest(f"{t}\x1f{s}")[:8], "big") for t, s in zip(texts, seen.tolist())], dtype=np.uint64
        )
        sorted_rows = np.lexsort((position, ranks, codes))
    elif time is not None:
        when = time_rank(frame[time], time)
        blank = np.isnan(when)
        sorted_rows = np.lexsort((position, np.where(blank, 0.0, when), blank, codes))
    else:
        sorted_rows = np.lexsort((position, codes))
    rank = np.empty(len(frame), dtype=np.int64)
    rank[sorted_rows] = _occurrence(codes[sorted_rows])
    kept = rank < limit
    dropped = ~kept
    return Capped(int(dropped.sum()), int(len(np.unique(codes[dropped]))), kept)


def _occurrence(codes: np.ndarray) -> np.ndarray:
    """Per element, how many earlier elements share its code (0 for the first)."""
    order = np.argsort(codes, kind="stable")
    ordered = codes[order]
    starts = np.r_[0, np.flatnonzero(ordered[1:] != ordered[:-1]) + 1] if len(codes) else np.zeros(0, dtype=np.int64)
    first = np.zeros(len(codes), dtype=np.int64)
    first[starts] = starts
    np.maximum.accumulate(first, out=first)
    out = np.empty(len(codes), dtype=np.int64)
    out[order] = np.arange(len(codes)) - first
    return out
