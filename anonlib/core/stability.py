"""Columns stable within a person: the same value on every record of most people.

A birth year, a sex or a city is written again on each of a person's records. Released
unchanged beside a linkable history, such a column narrows the history down as much as
a quasi-identifier does, although no step generalizes it (``linkable.md`` part 2, 6).
A column is *stable* when more than half of the people with at least two records hold
one value on all of them (a blank is a value like any other). People with a single
record say nothing about stability and are left out; with no person of two records, no
column is stable.

The counting is the kernel's: each column's codes (``encode_column``) paired with the
person codes (``owner_pairs``), a person holding one value when they have one distinct
(person, value) pair.

Example:
    >>> import pandas as pd
    >>> df = pd.DataFrame({"pid": ["a", "a", "b", "b", "c"], "born": [51, 51, 60, 60, 70],
    ...                    "year": [70, 71, 70, 72, 70]})
    >>> stable_columns(df, "pid", ["born", "year"])
    ('born',)
    >>> round(stable_share(df["born"], df["pid"]), 2), stable_share(df["year"], df["pid"])
    (1.0, 0.0)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .equivalence import encode_column, person_codes
from .histories import owner_pairs

STABLE_SHARE = 0.5  # a column is stable when more than this share of people (2+ records) hold one value


def _people_of_two(person: pd.Series) -> tuple[np.ndarray, int, np.ndarray]:
    codes, n = person_codes(person, str(person.name) if person.name is not None else "person")
    return codes, n, np.bincount(codes, minlength=n) >= 2


def stable_share(values: pd.Series, person: pd.Series) -> float:
    """The share of people with at least two records whose records all hold the same value of
    ``values`` (0.0 when nobody has two records).

    >>> stable_share(pd.Series([1, 1, 2, 3]), pd.Series(["a", "a", "b", "b"]))
    0.5
    """
    codes, n, repeated = _people_of_two(person)
    return _share(values, codes, n, repeated)


def _share(values: pd.Series, codes: np.ndarray, n: int, repeated: np.ndarray) -> float:
    people = int(repeated.sum())
    if not people:
        return 0.0
    ids, labels = encode_column(values, ordered=False)
    pairs = owner_pairs(ids, len(labels), codes, n)
    return float(((pairs.lengths == 1) & repeated).sum()) / people


def stable_columns(frame: pd.DataFrame, person: str, columns: Sequence[str]) -> tuple[str, ...]:
    """Those of ``columns`` stable within the people of ``person`` (see the module text), in order.

    >>> df = pd.DataFrame({"p": [1, 1, 2, 2], "sex": ["f", "f", "m", None], "town": ["x", "x", None, None]})
    >>> stable_columns(df, "p", ["sex", "town"])
    ('town',)
    """
    codes, n, repeated = _people_of_two(frame[person])
    return tuple(c for c in columns if c != person and _share(frame[c], codes, n, repeated) > STABLE_SHARE)
