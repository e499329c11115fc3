"""What a hierarchy makes of values it does not list (``linkable.md`` part 2, 7).

A recipe made from the first year of a panel lists that year's values; a later year brings
ages, dates and codes it never saw. The hierarchy's own rule places them, so a recipe
covers the whole line and not the first file's value list:

- **Bands** (``[15-19]``, ``<18``, ``>90``, ``*``): a number falls into the band that holds
  it; beyond the outermost band into the bottom or top code when there is one, else into a
  new band of the same width on the same grid (``[25-29]`` after ``[20-24]``), whose label
  says exactly what it holds.
- **Generated hierarchies** (digit masking, dates by month, quarter, year and decade): a
  new value gets the row its builder gives it, when the builder reproduces every row the
  hierarchy lists.
- **Categories** have no rule: ``cover_top`` sends them to the top level (``--unseen
  top``); otherwise the caller refuses them by name.

Example:
    >>> import pandas as pd
    >>> h = pd.DataFrame([["20", "[20-24]", "[20-29]", "*"], ["23", "[20-24]", "[20-29]", "*"]])
    >>> table, placed = cover_by_rule(h, ["27", "-3", "x"])
    >>> placed, table.values.tolist()[2:]
    (('27', '-3'), [['27', '[25-29]', '[20-29]', '*'], ['-3', '[-5--1]', '[-10--1]', '*']])
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence

import pandas as pd

from .errors import HierarchyError
from .hierarchy import (
    band_label,
    date_hierarchy,
    hierarchy_columns,
    masking_hierarchy,
    text_frame,
    uncovered_values,
    value_key,
)

_NUMBER = r"-?\d+(?:\.\d+)?"
_BAND = re.compile(rf"^([\[(])({_NUMBER})-({_NUMBER})([\])])$")  # [a-b], (a-b], [a-b), (a-b)
_BELOW = re.compile(rf"^<({_NUMBER})$")
_ABOVE = re.compile(rf"^>({_NUMBER})$")


def cover_by_rule(table: pd.DataFrame, values: Sequence[str]) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """``table`` with a row for each of ``values`` (lookup keys it does not list) that its rule
    places (bands, masking, dates; see the module text), and the values so placed, in order.
    The values no rule places are left out of both (categories: ``cover_top`` or a refusal)."""
    columns = hierarchy_columns(table)
    missing = [v for v in dict.fromkeys(values) if v not in set(columns[0])]
    if not missing or len(columns) < 2:
        return table, ()
    rows = _generated_rows(columns, missing)
    if rows is None:
        rows = _band_rows(columns, missing)
    if not rows:
        return table, ()
    extended = text_frame([*zip(*columns), *rows])
    try:
        hierarchy_columns(extended)  # still one parent per label at every level
    except HierarchyError:  # hand-made bands whose levels do not continue alike: no rule places them
        return table, ()
    return extended, tuple(r[0] for r in rows)


def cover_top(table: pd.DataFrame, values: Sequence[str]) -> pd.DataFrame:
    """``table`` with each of ``values`` it does not list generalized to the top level's single
    value at every level above 0 (``--unseen top``); a sentence when the top has several values.

    >>> cover_top(pd.DataFrame([["a", "ab", "*"], ["b", "ab", "*"]]), ["c"]).values.tolist()[-1]
    ['c', '*', '*']
    """
    columns = hierarchy_columns(table)
    missing = uncovered_values(table, values)
    if not missing:
        return table
    tops = set(columns[-1])
    if len(columns) < 2 or len(tops) != 1:
        raise HierarchyError(
            "This hierarchy has no single top value to send new categories to; add a row for each new value."
        )
    top = tops.pop()
    return text_frame([*zip(*columns), *([m] + [top] * (len(columns) - 1) for m in missing)])


# --- generated hierarchies: masking and dates --------------------------------------------


def _generated_rows(columns: list[list[str]], missing: list[str]) -> list[list[str]] | None:
    """The rows of ``missing`` by the builder that reproduces every listed row (None: no builder
    does, or one of the new values is not of its kind)."""
    listed = [list(r) for r in zip(*columns)]
    width = len(columns) - 1
    builders: list[Callable[[list[str]], pd.DataFrame]] = [
        lambda keys: masking_hierarchy(keys, width=width),
        date_hierarchy,
    ]
    for build in builders:
        try:
            if build(columns[0]).values.tolist() != listed:
                continue
            rows = build(missing).values.tolist()
        except HierarchyError:
            continue
        if all(len(r) == len(columns) for r in rows):
            return rows
    return None


# --- bands on a grid ------------------------------------------------------------------------


def _band_rows(columns: list[list[str]], missing: list[str]) -> list[list[str]]:
    """A row per number of ``missing`` when every level above 0 reads as bands (``[a-b]``,
    ``<a``, ``>b``) or as one value (``*``); none otherwise."""
    numbers = {m: _number(m) for m in missing}
    numbers = {m: x for m, x in numbers.items() if x is not None}
    whole = all(_number(k) is not None and float(_number(k)).is_integer() for k in columns[0])
    levels = [_level_rule(labels, whole) for labels in columns[1:]]
    if not numbers or any(rule is None for rule in levels):
        return []
    try:
        return [[m, *(rule(x) for rule in levels)] for m, x in numbers.items()]
    except HierarchyError:  # a band of no width has no grid to continue
        return []


def _level_rule(labels: list[str], whole: bool) -> Callable[[float], str] | None:
    """The label a number gets at one level: the band holding it, the bottom or top code
    beyond the bands, or a new band of the grid's width; None when the labels are not bands."""
    distinct = list(dict.fromkeys(labels))
    if len(distinct) == 1 and not any(p.match(distinct[0]) for p in (_BAND, _BELOW, _ABOVE)):
        return lambda x: distinct[0]  # one value for everything (*)
    bands, below, above = [], None, None
    for label in distinct:
        if (m := _BAND.match(label)) is not None:
            bands.append((float(m.group(2)), float(m.group(3)), m.group(1) == "(", m.group(4) == ")"))
        elif (m := _BELOW.match(label)) is not None:
            below = float(m.group(1))
        elif (m := _ABOVE.match(label)) is not None:
            above = float(m.group(1))
        else:
            return None
    if not bands:
        return None
    bands.sort()
    closing = 1.0 if whole else 0.0  # whole numbers: [15-19] then [20-24]; decimals: [15-20] then (20-25]

    def holds(band: tuple[float, float, bool, bool], x: float) -> bool:
        lo, hi, open_low, open_high = band
        return (lo < x if open_low else lo <= x) and (x < hi if open_high else x <= hi)

    def rule(x: float) -> str:
        if below is not None and x < below:
            return f"<{value_key(below)}"
        if above is not None and x > above:
            return f">{value_key(above)}"
        for band in bands:
            if holds(band, x):
                return band_label(band[0], band[1], open_low=band[2], open_high=band[3])
        low, high = bands[0][0], bands[0][1]
        if x <= low:  # below the lowest band: bands of its width downwards, up to (not into) it
            step = (high - low) + closing
            if step <= 0:
                raise HierarchyError("a band of no width")
            if x == low:  # on the open low edge of a band "(5-6]": the band of its width ending there
                return band_label(low - step, low, open_low=True)
            start = low - math.ceil((low - x) / step) * step
            return band_label(start, start + step - closing, open_high=not whole)
        lo, hi = max(((b[0], b[1]) for b in bands if b[1] <= x), key=lambda b: b[1])  # past it: its width onwards
        step = (hi - lo) + closing
        if step <= 0:
            raise HierarchyError("a band of no width")
        if whole:
            start = hi + 1 + math.floor((x - hi - 1) / step) * step
            end, open_low = start + step - 1, False
        else:  # (hi, hi + step], (hi + step, hi + 2 step], ...: x is above hi
            start = hi + (math.ceil((x - hi) / step) - 1) * step
            end, open_low = start + step, True
        after = [b for b in bands if b[0] > x]
        if after and end >= after[0][0]:  # a gap's band ends where the next band begins
            nxt = after[0]
            return band_label(start, nxt[0] - closing if whole else nxt[0], open_low=open_low,
                              open_high=not whole and not nxt[2])  # fmt: skip
        return band_label(start, end, open_low=open_low)

    return rule


def _number(text: str) -> float | None:
    try:
        x = float(text)
    except ValueError:
        return None
    return x if math.isfinite(x) else None
