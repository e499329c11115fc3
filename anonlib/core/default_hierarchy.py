"""The first hierarchy offered for a column, chosen by what the column holds.

``default_hierarchy`` picks a builder of ``anonlib.core.hierarchy`` (masking, dates, nested
bands with a long tail top- or bottom-coded, frequency groups, flat) or a bundled taxonomy
of ``anonlib.core.taxonomy`` (ICD-10, US states, countries, race), so every quasi-identifier
has a hierarchy before the user builds one. It stands above both modules: the taxonomies
are built with the hierarchy module's conventions, and the choice uses both.

Example:
    >>> default_hierarchy([52003, 52000], "Zip")[0]
    'masking'
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from .errors import HierarchyError
from .hierarchy import (
    ISO_DATE,
    Band,
    date_hierarchy,
    distinct_texts,
    distinct_values,
    flat_hierarchy,
    frequency_hierarchy,
    interval_hierarchy,
    masking_hierarchy,
    value_key,
)
from .structure import is_day_offset
from .taxonomy import taxonomy_match

_CODE_NAMES = re.compile(r"(zip|postcode|postal|plz|zcta|geoid|fips)", re.IGNORECASE)


def is_code_name(name: object) -> bool:
    """Whether a column's name says it holds codes written with digits (ZIP, postcode,
    FIPS...): numbers to mask from the right, never to average.

    >>> is_code_name("ZIP code"), is_code_name("zcta5"), is_code_name("age")
    (True, True, False)
    """
    return bool(_CODE_NAMES.search(str(name)))


def nice_width(span: float, parts: int = 16) -> float:
    """A round band width (1, 2, 5, 10, 20, 50, ...) cutting ``span`` into about ``parts`` bands.

    >>> nice_width(73), nice_width(500)
    (5.0, 50.0)
    """
    raw = max(float(span) / parts, 1.0)
    magnitude = 10.0 ** math.floor(math.log10(raw))
    return float(next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw))


def default_hierarchy(
    values: Iterable, name: str = "", *, counts: Iterable[int] | None = None
) -> tuple[str, pd.DataFrame]:
    """A sensible first hierarchy for a column, and the kind of builder used.

    By the column's type, first match wins: ICD-10 codes get the bundled ICD-10
    taxonomy (category, block, chapter); whole-number day offsets (``structure.is_day_offset``:
    days since a start, under a name saying day) weeks, months of 28 days and years of 364
    (``day_bands``); years (whole numbers from 1800 to 2100) and
    columns of at most 10 whole numbers (more than two) bands doubling from the first
    value (``doubling_bands``: 1980-1981, 1980-1983, ...); codes (a ZIP-like column name, or digit strings
    of one length of 4 or more) digit masking; dates (YYYY-MM-DD) month, quarter,
    year and decade; numbers with more than 10 distinct values nested bands of
    widths w, 2w, 4w (w a round number) and ``*``, a long tail (``tail_cuts``)
    top- or bottom-coded as one value (``>90``, ``<18``); categories a bundled taxonomy
    knows (US states, countries, race; ``anonlib.core.taxonomy``) that taxonomy;
    other categories with more than two values groups in frequency order
    (``frequency_hierarchy``), so a search can coarsen a column without erasing it;
    two values or fewer are flat (value -> ``*``). ``counts`` gives the records each
    entry of ``values`` stands for (only the frequency order uses them), so a table of
    distinct values and their records builds the hierarchy the records would.

    >>> default_hierarchy([52003, 52000], "Zip")[0]
    'masking'
    >>> kind, h = default_hierarchy(range(17, 91), "age")
    >>> kind, h.iloc[0].tolist()
    ('intervals', ['17', '[15-19]', '[10-19]', '[0-19]', '*'])
    """

    values, counts = distinct_values(values, counts)  # one pass over the records; the rest reads distinct values
    keys = distinct_texts(values)
    if not keys:
        raise HierarchyError(f"The column {name or ''} has no values to build a hierarchy from.".replace("  ", " "))
    known = taxonomy_match(keys)
    if known is not None and known.name == "ICD-10 chapters":
        return "bundled taxonomy", known.table
    lengths = {len(k) for k in keys}
    digits = all(k.isdigit() for k in keys)
    numbers = pd.to_numeric(pd.Series(keys, dtype=object), errors="coerce")
    if not numbers.isna().any() and is_day_offset(str(name), numbers):  # days since a start: weeks, months, years
        return "days", interval_hierarchy(keys, day_bands(numbers), top=True)
    if doubled(keys, name):  # a year (or a few whole numbers): doubling bands, never a jump to nothing
        return "intervals", interval_hierarchy(keys, doubling_bands(numbers), top=True)
    if digits and (is_code_name(name) or (len(lengths) == 1 and min(lengths) >= 4)):
        return "masking", masking_hierarchy(keys)
    if not numbers.isna().any() and len(keys) > 10:
        bands, below, above = default_intervals(values, counts=counts)
        return "intervals", interval_hierarchy(keys, bands, top=True, below=below, above=above)
    if not numbers.isna().any():
        return "flat", flat_hierarchy(keys)
    if all(ISO_DATE.match(k) for k in keys):
        return "dates", date_hierarchy(keys)
    if known is not None:
        return "bundled taxonomy", known.table
    if len(keys) > 2:
        return "frequency", frequency_hierarchy(values, counts=counts)
    return "flat", flat_hierarchy(keys)


YEARS = (1800, 2100)  # whole numbers within these read as years
SMALL_WHOLE = 10  # at most this many distinct whole numbers get doubling bands


def doubled(keys: Sequence[str], name: object = "") -> bool:
    """Whether a column's distinct values (as text) get doubling bands: more than two whole numbers,
    all years (1800 to 2100), or at most ``SMALL_WHOLE`` of them close together (a few codes: their
    range at most twice their number), in a column not named like a code.

    >>> doubled(["1980", "1981", "1987"]), doubled(["1", "2", "3"]), doubled(["0", "5", "80"])
    (True, True, False)
    >>> doubled(["1", "2"]), doubled(["37010", "37203", "38104"], "zip")
    (False, False)
    """
    numbers = pd.to_numeric(pd.Series(list(keys), dtype=object), errors="coerce")
    if len(keys) <= 2 or numbers.isna().any() or is_code_name(name):
        return False
    if not bool(np.all(numbers == np.floor(numbers))):
        return False
    years = all(k.isdigit() for k in keys) and bool(((numbers >= YEARS[0]) & (numbers <= YEARS[1])).all())
    close = float(numbers.max() - numbers.min()) + 1 <= 2 * len(keys)
    return years or (len(keys) <= SMALL_WHOLE and close)


def doubling_bands(values: Iterable) -> list[list[Band]]:
    """Bands of widths 2, 4, 8, ... from the smallest of whole-number ``values`` (years, a few
    codes) while no band holds them all (the top level, ``*``, does): 1980-1981, 1980-1983, ...

    >>> bands_text(doubling_bands([1980, 1983, 1987]))
    '1980-1981, 1982-1983, 1984-1985, 1986-1987 | 1980-1983, 1984-1987'
    """
    x = pd.to_numeric(pd.Series(list(values), dtype=object)).to_numpy(dtype=float)
    low, high = float(x.min()), float(x.max())
    out: list[list[Band]] = []
    width = 2.0
    while low + width - 1 < high:
        out.append([(float(s), float(s + width - 1)) for s in np.arange(low, high + 1e-9, width)])
        width *= 2
    return out


DAY_BANDS = (7, 28, 364)  # a week, four weeks, 52 weeks: each band lies in one band of the next level


def day_bands(values: Iterable) -> list[list[Band]]:
    """Bands of whole-number day offsets (days since enrolment, a pandemic day): weeks of 7
    days, months of 28 (four weeks) and years of 364 (13 such months), counted from a
    multiple of 364 at or below the first day, so every week lies in one month and every
    month in one year (calendar months and years of 365 days would cut weeks in two). A
    level of one band holding every value is left out (the top level, ``*``, says it).

    >>> bands_text(day_bands([0, 20]))
    '0-6, 7-13, 14-20'
    >>> [len(level) for level in day_bands([0, 192, 5152])], day_bands([0, 192, 5152])[2][:2]
    ([737, 185, 15], [(0.0, 363.0), (364.0, 727.0)])
    >>> day_bands([-3, 10])  # days before the start: weeks and months still aligned on day 0
    [[(-7.0, -1.0), (0.0, 6.0), (7.0, 13.0)], [(-28.0, -1.0), (0.0, 27.0)], [(-364.0, -1.0), (0.0, 363.0)]]
    """
    x = pd.to_numeric(pd.Series(list(values), dtype=object)).to_numpy(dtype=float)
    low, high = float(x.min()), float(x.max())
    start = math.floor(low / DAY_BANDS[-1]) * DAY_BANDS[-1]
    out: list[list[Band]] = []
    for width in DAY_BANDS:
        first = start + math.floor((low - start) / width) * width
        level = [(float(s), float(s + width - 1)) for s in np.arange(first, high + 1, width)]
        if len(level) > 1:
            out.append(level)
    return out


TAIL_SHARE = 0.01  # records in each tail that may be top- or bottom-coded


LONG_TAIL = 0.5  # a tail is long when it stretches over more than this share of the body's range


def tail_cuts(values: Iterable, *, counts: Iterable[int] | None = None) -> tuple[float | None, float | None]:
    """Where a numeric column's long tails begin: the 1st and the 99th percentile of its
    records (the records ranked ceil(1% of n - 1) and floor(99% of n - 1) in value order),
    each only when the values beyond it stretch over more than half the range between
    the two (None otherwise), so a few extreme records are coded as one value instead of
    stretching every band. ``counts`` gives the records of each listed value (a table
    of distinct values, as an engine returns it): the cuts are those of the records.

    >>> tail_cuts(list(range(100)))  # no long tail
    (None, None)
    >>> tail_cuts([0] * 50 + [1] * 30 + [2] * 15 + [3, 4, 5, 40, 80])  # 80 is beyond the 99th percentile
    (None, 40.0)
    >>> tail_cuts([0, 1, 2, 3, 4, 5, 40, 80], counts=[50, 30, 15, 1, 1, 1, 1, 1])
    (None, 40.0)
    """
    present, weights = distinct_values(values, counts)
    x = pd.to_numeric(pd.Series(present, dtype=object), errors="coerce")
    keep = x.notna().to_numpy()
    x, weights = x.to_numpy(dtype=float)[keep], weights[keep]
    n = int(weights.sum())
    if n < 2:
        return None, None
    order = np.argsort(x, kind="stable")
    x, ends = x[order], np.cumsum(weights[order])  # the record ranked r has the first value whose end > r
    low = float(x[np.searchsorted(ends, math.ceil(TAIL_SHARE * (n - 1)), side="right")])
    high = float(x[np.searchsorted(ends, math.floor((1 - TAIL_SHARE) * (n - 1)), side="right")])
    body = max(high - low, 1e-12)
    below = low if low - float(x[0]) > LONG_TAIL * body else None
    above = high if float(x[-1]) - high > LONG_TAIL * body else None
    return below, above


def default_intervals(
    values: Iterable, *, counts: Iterable[int] | None = None, name: object = ""
) -> tuple[list[list[Band]], float | None, float | None]:
    """The default bands of a numeric column and its tail limits: nested bands over the
    values within the long tails' cuts (``tail_cuts``), bottom coding below the first band
    and top coding above the last one when a tail was cut (None otherwise); years and a few
    whole numbers (``doubled``) doubling bands, no tail cut.

    >>> bands, below, above = default_intervals([0] * 50 + [1] * 30 + [2] * 15 + [3, 4, 5, 40, 80])
    >>> bands_text(bands[:1]), below, above
    ('0-4, 5-9, 10-14, 15-19, 20-24, 25-29, 30-34, 35-39, 40-44', None, 44.0)
    """
    values, counts = distinct_values(values, counts)
    keys = distinct_texts(values)
    numbers = pd.to_numeric(pd.Series(keys, dtype=object), errors="coerce")
    if not numbers.isna().any() and is_day_offset(str(name), numbers):
        return day_bands(numbers), None, None
    if doubled(keys, name):
        return doubling_bands(numbers), None, None
    low, high = tail_cuts(values, counts=counts)
    body = [k for k, x in zip(keys, numbers) if (low is None or x >= low) and (high is None or x <= high)]
    bands = default_bands(body)
    return bands, (bands[0][0][0] if low is not None else None), (bands[0][-1][1] if high is not None else None)


def default_bands(values: Iterable) -> list[list[Band]]:
    """Nested bands of round widths w, 2w, 4w covering numeric ``values``.

    >>> bands_text(default_bands([20, 75]))
    '20-24, 25-29, 30-34, 35-39, 40-44, 45-49, 50-54, 55-59, 60-64, 65-69, 70-74, 75-79 | 20-29, 30-39, 40-49, 50-59, 60-69, 70-79 | 20-39, 40-59, 60-79'
    """
    numbers = pd.to_numeric(pd.Series(distinct_texts(values), dtype=object), errors="coerce")
    if numbers.empty or numbers.isna().any():
        raise HierarchyError("Bands need numbers; this column has values that are not numbers.")
    x = numbers.to_numpy(dtype=float)
    low, high = float(x.min()), float(x.max())
    width = nice_width(high - low)
    widths = [width, 2 * width, 4 * width]
    start = math.floor(low / widths[-1]) * widths[-1]
    closing = 1.0 if np.all(np.floor(x) == x) and width >= 1 else 0.0  # integers: [15-19]; else [15-20]
    return [[(float(s), float(s + w - closing)) for s in np.arange(start, high + 1e-9, w)] for w in widths]


def bands_text(bands: Sequence[Sequence[Band]]) -> str:
    """Bands as the text ``parse_bands`` reads.

    >>> bands_text([[(20, 34), (35, 44)], [(20, 44)]])
    '20-34, 35-44 | 20-44'
    """
    return " | ".join(
        ", ".join(f"{value_key(float(lo))}-{value_key(float(hi))}" for lo, hi in level) for level in bands
    )
