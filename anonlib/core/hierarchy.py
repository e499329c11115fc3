"""Generalization hierarchies in the ARX layout: build, read, write, validate.

A hierarchy is a table of text: column 0 holds an original value, column j its
generalization at level j (the last level is usually ``*``). This is the file
format of the ARX anonymization tool (a CSV without a header, ``;`` or ``,``
separated), so users can bring the hierarchies they already have.

Builders for the usual kinds (Arca & Hewett, Figure 2):

- ``interval_hierarchy``: nested numeric bands (ages 20-34/35-44/45-64/65-85 ->
  20-44/45-85 -> 20-85);
- ``masking_hierarchy``: digit masking of codes (52003 -> 5200* -> ... -> *****);
- ``taxonomy_hierarchy``: a taxonomy tree given as nested groups
  (AC: High/Med/Low -> Yes; No -> No; -> Any);
- ``flat_hierarchy``: value -> ``*``.

``validate_hierarchy`` checks that every value of the data is covered and that
levels are consistent (two values with the same generalization at level j share
it at every level above j); a failure is a ``HierarchyError`` naming the value.

Data values are matched to column 0 by their text (``value_key``): 52000,
``"52000"`` and 52000.0 are the same value.

One module of 800-odd lines because everything here reads or writes the one
representation (the ARX-layout table): builders, validation, the tree, the level
lookups the counting uses and the column generalizer that writes releases, so a
change to the layout touches one file.

Example:
    >>> h = masking_hierarchy(["52003", "54001"])
    >>> h.iloc[0].tolist()
    ['52003', '5200*', '520**', '52***', '5****', '*****']
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .equivalence import MISSING_LABEL, encode_column
from .errors import HierarchyError, join_names
from .loading import FORMULA_PREFIXES, MISSING_MARKERS

SUPPRESSED = "*"
OTHER = "other"  # the group of values a hierarchy or taxonomy does not know
_INTEGRAL_TEXT = re.compile(r"^-?\d+\.0+$")


def value_key(value: object) -> str:
    """The text by which a data value is looked up in a hierarchy.

    Whole floats lose their ``.0`` so 63.0 and 63 match; text is kept as it is
    (leading zeros of ZIP codes stay).

    >>> value_key(63.0), value_key("63.0"), value_key("02101"), value_key(52000)
    ('63', '63', '02101', '52000')
    """
    if isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer():
        return str(int(value))
    text = str(value).strip()
    return text[: text.index(".")] if _INTEGRAL_TEXT.match(text) else text


def text_frame(rows: Sequence[Sequence[str]]) -> pd.DataFrame:
    """An ARX-layout table (columns 0..L, all text) from equal-length rows."""
    width = max((len(r) for r in rows), default=1)
    return pd.DataFrame([list(r) for r in rows], columns=range(width), dtype=object)


def distinct_texts(values: Iterable) -> list[str]:
    """Distinct lookup keys of data values in first-seen order, missing values left out.

    >>> distinct_texts(pd.Series([63.0, None, 7, 63], dtype="Float64")), distinct_texts(["b", "a", None, "b"])
    (['63', '7'], ['b', 'a'])
    """
    if isinstance(values, pd.Series) and values.dtype != object:  # a typed column: its distinct values first
        present = distinct_values(values)[0]
    else:
        series = pd.Series(list(values), dtype=object)
        present = pd.unique(series[~pd.isna(series)])
    keys = [value_key(v) for v in present]
    return list(dict.fromkeys(k for k in keys if k != MISSING_LABEL))


def reading_order(values: Iterable) -> list[str]:
    """The distinct lookup keys of ``values`` (``distinct_texts``) in the order a person reads a
    list of them: ascending numbers when every key is a number, else alphabetical (case aside).
    A hierarchy's editor lists a column's values this way, not in the order the file first holds them.

    >>> reading_order([10, 9, 100, 9]), reading_order(["b", "C", "a"])
    (['9', '10', '100'], ['a', 'b', 'C'])
    """
    keys = distinct_texts(values)
    numbers = pd.to_numeric(pd.Series(keys, dtype=object), errors="coerce")
    if len(keys) and not numbers.isna().any():
        return [keys[i] for i in np.argsort(numbers.to_numpy(dtype=float), kind="stable")]
    return sorted(keys, key=lambda k: (k.casefold(), k))


_PLAIN_TYPES = (str, int, float)  # Python values that are equal only when their lookup keys are


def distinct_values(values: Iterable, counts: Iterable[int] | None = None) -> tuple[list, np.ndarray]:
    """The distinct values present in a column, in first-seen order (missing values left out),
    and the records each stands for: ``counts`` gives the records of each entry of ``values``
    (a table of distinct values and their records), else each entry is one record.

    Every builder and count of this module reads a column through its distinct values, so a
    column of 10^5 records costs one pass of pandas' hashing instead of a Python loop over
    every record. A typed column's values are the scalars iterating it gives; Python objects
    of mixed kinds (``True`` equals ``1`` to pandas, their keys differ) come back as their
    lookup keys (``value_key``), so equal entries always share a key.

    >>> values, records = distinct_values(pd.Series(["b", "a", None, "b"], dtype="string"))
    >>> values, records.tolist()
    (['b', 'a'], [2, 1])
    >>> values, records = distinct_values([True, 1, 1.0, "x"], counts=[1, 2, 3, 4])
    >>> values, records.tolist()
    (['True', '1', 'x'], [1, 5, 4])
    """
    series = values if isinstance(values, pd.Series) else pd.Series(list(values), dtype=object)
    if counts is None:
        weights = np.ones(len(series), dtype=np.int64)
    else:
        given = counts if isinstance(counts, (np.ndarray, pd.Series)) else list(counts)
        weights = np.asarray(given, dtype=np.int64)
        if len(weights) != len(series):
            raise HierarchyError(f"Got {len(weights):,} record counts for {len(series):,} values.")
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    if series.dtype == object and not all(type(u) in _PLAIN_TYPES for u in uniques):
        present = ~pd.isna(series.to_numpy(dtype=object))
        keys = pd.Series([value_key(v) for v in series.to_numpy(dtype=object)[present]], dtype=object)
        return distinct_values(keys, weights[present])
    kept = codes >= 0
    records = np.bincount(codes[kept], weights=weights[kept], minlength=len(uniques))
    return list(pd.Series(uniques, dtype=series.dtype if series.dtype != object else object)), np.rint(records).astype(
        np.int64
    )


def levels_of(table: pd.DataFrame) -> int:
    """Highest generalization level of a hierarchy (its number of columns - 1).

    >>> levels_of(flat_hierarchy(["a", "b"]))
    1
    """
    return int(table.shape[1]) - 1


def level_words(table: pd.DataFrame, level: int) -> str:
    """How ``level`` of a hierarchy reads, for a caption: kept, removed (one value left),
    or an example from the hierarchy's first row whose value changes.

    >>> h = interval_hierarchy(["17", "23"], [[(15, 19), (20, 24)], [(0, 49)]], top=True)
    >>> level_words(h, 0), level_words(h, 1), level_words(h, 3)
    ('kept', '17 → [15-19]', 'removed')
    """
    if level <= 0:
        return "kept"
    column = table.iloc[:, min(level, table.shape[1] - 1)].astype(str)
    if column.nunique() <= 1:
        return "removed"
    original = table.iloc[:, 0].astype(str)
    changed = (original != column).to_numpy()
    row = int(changed.argmax()) if changed.any() else 0
    return f"{original.iloc[row]} → {column.iloc[row]}"


# --- builders -------------------------------------------------------------------


def flat_hierarchy(values: Iterable) -> pd.DataFrame:
    """Every value generalizes to ``*`` in one step; the values listed as a person reads them
    (``reading_order``), in the editor and the recipe alike, whatever the file's order.

    >>> flat_hierarchy(["M", "F"]).values.tolist()
    [['F', '*'], ['M', '*']]
    """
    return text_frame([[v, SUPPRESSED] for v in reading_order(values)])


def masking_hierarchy(values: Iterable, width: int | None = None) -> pd.DataFrame:
    """Digit masking from the right: level j replaces the last j characters by ``*``.

    Values shorter than ``width`` (default: the longest value) are left-padded
    with zeros first when they are all digits (ZIP codes read as numbers lose
    their leading zeros), so every value has ``width`` levels.

    >>> masking_hierarchy([2101, 52003]).values.tolist()
    [['2101', '0210*', '021**', '02***', '0****', '*****'], ['52003', '5200*', '520**', '52***', '5****', '*****']]
    """
    keys = distinct_texts(values)
    if not keys:
        raise HierarchyError("There are no values to build a masking hierarchy from.")
    width = width or max(len(k) for k in keys)
    rows = []
    for key in keys:
        text = key.zfill(width) if key.isdigit() else key
        if len(text) != width:
            raise HierarchyError(f"Masking needs codes of {width} characters; the value '{key}' has {len(text)}.")
        rows.append([key] + [text[: width - j] + SUPPRESSED * j for j in range(1, width + 1)])
    return text_frame(rows)


Band = tuple[float, float]


def band_label(low: float, high: float, *, open_low: bool = False, open_high: bool = False) -> str:
    """The text of a band, as in the paper's Figure 2; ``open_low`` when its low end belongs to the
    band before it (decimal bands that touch: 35 is in "[30-35]", so the next one is "(35-40]").

    >>> band_label(20, 34.0), band_label(35, 40, open_low=True)
    ('[20-34]', '(35-40]')
    """
    return f"{'(' if open_low else '['}{value_key(float(low))}-{value_key(float(high))}{')' if open_high else ']'}"


def band_labels(bands: Sequence[Band]) -> list[str]:
    """The labels of one level's bands, each saying exactly what it holds: a value belongs to the
    first band listed that holds it, so a band whose low end an earlier band holds is open there.

    >>> band_labels([(30, 35), (35, 40), (41, 45)])
    ['[30-35]', '(35-40]', '[41-45]']
    """
    return [
        band_label(lo, hi, open_low=any(b_lo <= lo <= b_hi for b_lo, b_hi in bands[:i]))
        for i, (lo, hi) in enumerate(bands)
    ]


def parse_bands(text: str) -> list[list[Band]]:
    """Bands from text: levels separated by ``|`` or new lines, bands by commas.

    >>> parse_bands("20-34, 35-44, 45-64, 65-85 | 20-44, 45-85 | 20-85")[1]
    [(20.0, 44.0), (45.0, 85.0)]
    """
    levels = []
    for part in re.split(r"[|\n]+", text):
        if not part.strip():
            continue
        bands = []
        for item in part.split(","):
            item = item.strip().strip("[]() ")
            match = re.fullmatch(r"(-?\d+(?:\.\d+)?)\s*(?:-|to|\.\.)\s*(-?\d+(?:\.\d+)?)", item)
            if not match:
                raise HierarchyError(f"'{item}' is not a band; write bands as low-high, for example 20-34.")
            bands.append((float(match.group(1)), float(match.group(2))))
        levels.append(bands)
    if not levels:
        raise HierarchyError("Give at least one level of bands, for example 20-44, 45-85.")
    return levels


def equal_width_bands(low: float, high: float, widths: Sequence[float]) -> list[list[Band]]:
    """Nested bands of the given widths (each a multiple of the previous), from ``low``.

    >>> equal_width_bands(20, 39, [10, 20])
    [[(20.0, 29.0), (30.0, 39.0)], [(20.0, 39.0)]]
    """
    levels = []
    for width in widths:
        if width <= 0:
            raise HierarchyError(f"A band width must be positive; got {width:g}.")
        starts = np.arange(float(low), float(high) + 1e-9, float(width))
        levels.append([(float(s), float(s + width - 1)) for s in starts])
    return levels


def interval_hierarchy(
    values: Iterable,
    bands: Sequence[Sequence[Band]],
    *,
    top: bool = False,
    below: float | None = None,
    above: float | None = None,
) -> pd.DataFrame:
    """Numbers generalized into nested bands; ``bands[j-1]`` are the level-j bands.

    Bands are inclusive ``(low, high)``; a value falls into the band with
    ``low <= value <= high``. ``top=True`` adds a last level ``*``. Bottom and top
    coding of the tails: with ``below`` every value under it is ``<below`` at every
    level, with ``above`` every value over it ``>above`` (the bands need not cover them).

    >>> h = interval_hierarchy([35, 68], parse_bands("20-34,35-44,45-64,65-85|20-44,45-85|20-85"))
    >>> h.values.tolist()
    [['35', '[35-44]', '[20-44]', '[20-85]'], ['68', '[65-85]', '[45-85]', '[20-85]']]
    >>> interval_hierarchy([3, 35, 97], parse_bands("20-39, 40-59"), below=20, above=59).values.tolist()
    [['3', '<20'], ['35', '[20-39]'], ['97', '>59']]
    """
    keys = distinct_texts(values)
    numbers = pd.to_numeric(pd.Series(keys, dtype=object), errors="coerce")
    if numbers.isna().any():
        bad = keys[int(np.flatnonzero(numbers.isna().to_numpy())[0])]
        raise HierarchyError(f"Interval bands need numbers; the value '{bad}' is not a number.")
    x = numbers.to_numpy(dtype=float)
    if below is not None and above is not None and below > above:
        raise HierarchyError(
            f"The bottom-coding limit {value_key(float(below))} is above the top-coding limit "
            f"{value_key(float(above))}."
        )
    low_tail = x < below if below is not None else np.zeros(len(x), dtype=bool)
    high_tail = x > above if above is not None else np.zeros(len(x), dtype=bool)
    columns = [keys]
    for level, level_bands in enumerate(bands, start=1):
        lows = np.array([b[0] for b in level_bands], dtype=float)
        highs = np.array([b[1] for b in level_bands], dtype=float)
        inside = (x[:, None] >= lows[None, :]) & (x[:, None] <= highs[None, :])
        uncovered = ~inside.any(axis=1) & ~low_tail & ~high_tail
        if uncovered.any():
            bad = keys[int(np.flatnonzero(uncovered)[0])]
            raise HierarchyError(
                f"The value '{bad}' is in no band of level {level} "
                f"({', '.join(band_label(*b) for b in level_bands)}); widen the bands."
            )
        labels = np.array(band_labels(level_bands), dtype=object)
        level_labels = labels[inside.argmax(axis=1)] if len(labels) else np.full(len(x), "", dtype=object)
        if below is not None:
            level_labels = np.where(low_tail, f"<{value_key(float(below))}", level_labels)
        if above is not None:
            level_labels = np.where(high_tail, f">{value_key(float(above))}", level_labels)
        columns.append(list(level_labels))
    if top:
        columns.append([SUPPRESSED] * len(keys))
    return text_frame(list(zip(*columns)))


def parse_taxonomy(text: str) -> dict[str, list[str]]:
    """Groups from text, one ``parent: child, child`` per line (or ``;``-separated).

    >>> parse_taxonomy("Yes: High, Med, Low; No: No; Any: Yes, No")
    {'Yes': ['High', 'Med', 'Low'], 'No': ['No'], 'Any': ['Yes', 'No']}
    """
    groups: dict[str, list[str]] = {}
    for line in re.split(r"[;\n]+", text):
        if not line.strip():
            continue
        if ":" not in line:
            raise HierarchyError(f"'{line.strip()}' is not a group; write parent: child, child.")
        parent, children = line.split(":", 1)
        items = [c.strip() for c in children.split(",") if c.strip()]
        if not parent.strip() or not items:
            raise HierarchyError(f"The group '{line.strip()}' needs a name and at least one member.")
        groups.setdefault(parent.strip(), []).extend(items)
    return groups


def taxonomy_hierarchy(groups: Mapping[str, Sequence[str]]) -> pd.DataFrame:
    """A taxonomy tree from groups (parent -> children) as an ARX table.

    The root is the one group that is nobody's child. A leaf closer to the root
    than others keeps its own value at the extra lower levels, so every row has
    the same number of levels.

    >>> taxonomy_hierarchy({"Yes": ["High", "Med", "Low"], "No": ["No"], "Any": ["Yes", "No"]}).values.tolist()
    [['High', 'Yes', 'Any'], ['Med', 'Yes', 'Any'], ['Low', 'Yes', 'Any'], ['No', 'No', 'Any']]
    """
    children = {str(p): [str(c) for c in cs] for p, cs in groups.items()}
    members = {c for cs in children.values() for c in cs}
    roots = [p for p in children if p not in members]
    if len(roots) != 1:
        raise HierarchyError(
            "A taxonomy needs exactly one top group that is in no other group; "
            + (f"found {join_names(roots)}." if roots else "every group is inside another one.")
        )
    paths: list[list[str]] = []

    def walk(node: str, path: list[str]) -> None:
        if node in path:
            raise HierarchyError(f"The group '{node}' contains itself; a taxonomy cannot loop.")
        kids = [c for c in children.get(node, []) if c != node]
        if not kids:
            paths.append([node] + path[::-1])
        for kid in kids:
            walk(kid, path + [node])

    walk(roots[0], [])
    depth = max(len(p) for p in paths)
    return text_frame([[p[0]] * (depth - len(p)) + p for p in paths])


FAN_OUT = 4  # values per group at each level of a frequency hierarchy (few levels: small lattices)


def frequency_hierarchy(
    values: Iterable, fan_out: int = FAN_OUT, *, counts: Iterable[int] | None = None
) -> pd.DataFrame:
    """Categories grouped by frequency order, where nothing better is known: the
    distinct values sorted by how many records hold them (most first, ties by text),
    then consecutive groups of ``fan_out`` values, of ``fan_out``\u00b2, ... up to ``*``.
    Rare values share a group with the values nearest them in frequency, so a search
    can merge the rare ones and keep the common ones apart. A group is named by its
    members ("{a, b}"), or its first two and its size when it is larger.
    ``counts`` gives the records each entry of ``values`` stands for (a table of
    distinct values and their records, as a data engine returns it).

    >>> frequency_hierarchy(["a"] * 5 + ["b"] * 3 + ["c"] * 2 + ["d", "e"], fan_out=2).values.tolist()
    [['a', '{a, b}', '{a, b, c, d}', '*'], ['b', '{a, b}', '{a, b, c, d}', '*'], ['c', '{c, d}', '{a, b, c, d}', '*'], ['d', '{c, d}', '{a, b, c, d}', '*'], ['e', '{e}', '{e}', '*']]
    >>> frequency_hierarchy(["e", "a", "b", "c", "d"], 2, counts=[1, 5, 3, 2, 1]).equals(
    ...     frequency_hierarchy(["a"] * 5 + ["b"] * 3 + ["c"] * 2 + ["d", "e"], fan_out=2))
    True
    """
    if fan_out < 2:
        raise HierarchyError("A frequency hierarchy groups at least 2 values at each level.")
    present, records = distinct_values(values, counts)
    series = pd.Series([value_key(v) for v in present], dtype=object)
    weights = pd.Series(records, dtype="int64")
    kept = (series != MISSING_LABEL).to_numpy()
    counts = weights[kept].groupby(series[kept].to_numpy(), sort=False).sum()
    order = sorted(counts.index, key=lambda v: (-int(counts[v]), v))
    if len(order) <= 2:
        return flat_hierarchy(order)
    rows = [[v] for v in order]
    size = fan_out
    while size < len(order):
        for start in range(0, len(order), size):
            members = order[start : start + size]
            label = (
                "{" + ", ".join(members) + "}"
                if len(members) <= 4
                else "{" + f"{members[0]}, {members[1]}, ... ({len(members)} values)" + "}"
            )
            for row in rows[start : start + size]:
                row.append(label)
        size *= fan_out
    for row in rows:
        row.append(SUPPRESSED)
    return text_frame(rows)


ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?$")


def date_hierarchy(values: Iterable) -> pd.DataFrame:
    """Dates (ISO, YYYY-MM-DD with an optional time) by day, month, quarter, year and
    decade, then ``*``.

    >>> date_hierarchy(["2021-05-17"]).values.tolist()
    [['2021-05-17', '2021-05', '2021-Q2', '2021', '2020s', '*']]
    """
    keys = distinct_texts(values)
    bad = [k for k in keys if not ISO_DATE.match(k)]
    if bad:
        raise HierarchyError(f"'{bad[0]}' is not a date written as YYYY-MM-DD; a date hierarchy needs dates.")
    rows = []
    for key in keys:
        day = pd.Timestamp(key)
        rows.append(
            [
                key,
                f"{day.year:04d}-{day.month:02d}",
                f"{day.year:04d}-Q{(day.month - 1) // 3 + 1}",
                f"{day.year:04d}",
                f"{day.year // 10 * 10}s",
                SUPPRESSED,
            ]
        )
    return text_frame(rows)


# --- reading, writing, checking ----------------------------------------------------


def read_hierarchy_csv(data: bytes | str, delimiter: str | None = None) -> pd.DataFrame:
    """An ARX hierarchy file (no header; ``;`` or ``,`` separated) as a table.

    >>> read_hierarchy_csv(b"F;*\\nM;*\\n").values.tolist()
    [['F', '*'], ['M', '*']]
    """
    text = _hierarchy_text(data) if isinstance(data, bytes) else data
    if "\x00" in text:
        raise HierarchyError(_NOT_TEXT)
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise HierarchyError("The hierarchy file is empty.")
    if delimiter is None:
        delimiter = ";" if lines[0].count(";") >= lines[0].count(",") and ";" in lines[0] else ","
    rows = [[cell.strip() for cell in row] for row in csv.reader(lines, delimiter=delimiter)]
    widths = {len(r) for r in rows}
    if len(widths) != 1:
        short = min(rows, key=len)
        raise HierarchyError(
            f"Every row of a hierarchy needs the same number of levels; the row of '{short[0]}' "
            f"has {len(short)} columns, others have {max(widths)}."
        )
    return text_frame(rows)


_NOT_TEXT = (
    "The hierarchy file is not text (it looks like a binary file such as an image or a spreadsheet); "
    "give an ARX hierarchy as a CSV file with one row per value."
)


def _hierarchy_text(data: bytes) -> str:
    """UTF-8 (with or without BOM), UTF-16 with a BOM, else Latin-1; a binary file is
    refused with a sentence."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            raise HierarchyError(_NOT_TEXT) from None
    if b"\x00" in data[:8192]:
        raise HierarchyError(_NOT_TEXT)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    controls = sum(ch < " " and ch not in "\t\r\n" for ch in text[:8192])
    if controls > 8:
        raise HierarchyError(_NOT_TEXT)
    return text


def _spreadsheet_safe(cell: str) -> str:
    """Text that a spreadsheet would run as a formula gets a leading apostrophe (numbers stay)."""
    if cell.startswith(FORMULA_PREFIXES) and pd.isna(pd.to_numeric(cell, errors="coerce")):
        return "'" + cell
    return cell


def hierarchy_csv(table: pd.DataFrame, delimiter: str = ";") -> bytes:
    """The hierarchy as an ARX CSV file (no header; formula-like text neutralised).

    >>> hierarchy_csv(flat_hierarchy(["F"]))
    b'F;*\\n'
    """
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, lineterminator="\n")
    for row in table.astype(str).itertuples(index=False):
        writer.writerow([_spreadsheet_safe(cell) for cell in row])
    return out.getvalue().encode("utf-8")


def validate_hierarchy(
    table: pd.DataFrame, values: Iterable | None = None, attribute: str = "the attribute"
) -> pd.DataFrame:
    """Check a hierarchy (and that it covers ``values``); return it as text.

    Raises ``HierarchyError`` naming the offending value when a cell is empty,
    an original value is listed twice, a data value is missing, or a value has
    two different generalizations at a level above one it shares.

    >>> bad = pd.DataFrame([["High", "Yes", "Any"], ["Low", "Yes", "Other"]])
    >>> validate_hierarchy(bad, attribute="AC")
    Traceback (most recent call last):
    ...
    anonlib.core.errors.HierarchyError: In the hierarchy of AC, 'Yes' at level 1 generalizes to both 'Any' and 'Other' at level 2; values that share a generalization must share every level above it.
    """
    columns = hierarchy_columns(table, attribute)
    text = pd.DataFrame(list(zip(*columns)), columns=range(len(columns)), dtype=object)
    if values is not None:
        _require_covered(distinct_texts(values), set(columns[0]), attribute)
    return text


def hierarchy_columns(table: pd.DataFrame, attribute: str = "the attribute") -> list[list[str]]:
    """``validate_hierarchy``'s checks, and the hierarchy's text as one list per level (level 0
    as lookup keys), for the lookups that read it level by level.

    >>> hierarchy_columns(pd.DataFrame([[63.0, "60-69"], ["7", "0-9"]]))
    [['63', '7'], ['60-69', '0-9']]
    """
    if table is None or table.shape[0] == 0 or table.shape[1] < 1:
        raise HierarchyError(f"The hierarchy of {attribute} is empty.")
    cells = table.to_numpy(dtype=object)
    blank = pd.isna(cells)
    text = [["" if b else str(v).strip() for v, b in zip(row, row_blank)] for row, row_blank in zip(cells, blank)]
    for row in text:
        if "" in row:
            raise HierarchyError(
                f"In the hierarchy of {attribute}, the row of '{row[0]}' has an empty cell at level {row.index('')}."
            )
        row[0] = value_key(row[0])
    columns = [list(c) for c in zip(*text)]
    seen: set[str] = set()
    for value in columns[0]:
        if value in seen:
            raise HierarchyError(f"In the hierarchy of {attribute}, the value '{value}' is listed twice.")
        seen.add(value)
    for level in range(len(columns) - 1):
        parent_of: dict[str, str] = {}
        for value, parent in zip(columns[level], columns[level + 1]):
            if parent_of.setdefault(value, parent) != parent:
                raise HierarchyError(
                    f"In the hierarchy of {attribute}, '{value}' at level {level} generalizes to both "
                    f"'{parent_of[value]}' and '{parent}' at level {level + 1}; values that share a "
                    "generalization must share every level above it."
                )
    return columns


def _require_covered(keys: Iterable[str], known: set[str], attribute: str) -> None:
    """A sentence naming the lookup ``keys`` (distinct, in order) a hierarchy's values ``known`` lack."""
    absent = [k for k in keys if k not in known]
    if absent:
        raise HierarchyError(
            f"The hierarchy of {attribute} does not cover the value '{absent[0]}'"
            + (f" (nor {join_names(absent[1:], 5)})" if len(absent) > 1 else "")
            + "; add a row for it."
        )


# --- what a hierarchy covers, and its tree --------------------------------------------


def uncovered_values(table: pd.DataFrame, values: Iterable) -> list[str]:
    """The column's distinct values (as lookup keys) that the hierarchy does not list.

    >>> uncovered_values(flat_hierarchy(["F", "M"]), ["F", "X", None, "Y", "X"])
    ['X', 'Y']
    """
    known = {value_key(v) for v in table.iloc[:, 0]}
    return [k for k in distinct_texts(values) if k not in known]


def cover_values(table: pd.DataFrame, values: Iterable) -> pd.DataFrame:
    """The hierarchy with a row for each value it does not list: ``other`` at every
    level below the top, and the top level's single value (such as ``*``) on top.

    >>> cover_values(flat_hierarchy(["F", "M"]), ["F", "X"]).values.tolist()
    [['F', '*'], ['M', '*'], ['X', '*']]
    >>> h = pd.DataFrame([["31", "30-39", "*"]])
    >>> cover_values(h, ["31", "77"]).values.tolist()[-1]
    ['77', 'other', '*']
    """
    missing = uncovered_values(table, values)
    if not missing:
        return table
    tops = set(table.iloc[:, -1].astype(str)) if table.shape[1] > 1 else set()
    top = tops.pop() if len(tops) == 1 else OTHER
    middle = [OTHER] * max(table.shape[1] - 2, 0)
    rows = [[m, *middle, top] if table.shape[1] > 1 else [m] for m in missing]
    return pd.concat([table, pd.DataFrame(rows, columns=table.columns)], ignore_index=True)


@dataclass(frozen=True)
class TreeNode:
    """One value of a hierarchy at one level: its parent (an index into the nodes, None
    at the top), the original values under it and their records (when counted)."""

    level: int
    label: str
    parent: int | None
    values: int
    records: int | None


def hierarchy_tree(
    table: pd.DataFrame, values: Iterable | None = None, *, counts: Iterable[int] | None = None
) -> tuple[TreeNode, ...]:
    """The hierarchy as a tree, top level first: each node once per level, with the
    number of original values under it and, given the column's ``values``, its records
    (``counts``: the records of each entry of ``values``, as ``distinct_values`` gives them).

    >>> h = pd.DataFrame([["31", "30-39", "*"], ["35", "30-39", "*"], ["47", "40-49", "*"]])
    >>> [(n.level, n.label, n.parent, n.values, n.records) for n in hierarchy_tree(h, ["31", "31", "47"])]
    [(2, '*', None, 3, 3), (1, '30-39', 0, 2, 2), (1, '40-49', 0, 1, 1), (0, '31', 1, 1, 2), (0, '35', 1, 1, 0), (0, '47', 2, 1, 1)]
    >>> hierarchy_tree(h, ["31", "47"], counts=[2, 1]) == hierarchy_tree(h, ["31", "31", "47"])
    True
    """
    text = table.astype(str).to_numpy()
    text[:, 0] = [value_key(v) for v in table.iloc[:, 0]]
    if values is not None:
        present, weights = distinct_values(values, counts)
        keyed = pd.Series(weights, index=[value_key(v) for v in present], dtype=np.int64)
        records = keyed.groupby(level=0, sort=False).sum().reindex(text[:, 0]).fillna(0).to_numpy(dtype=np.int64)
    nodes: list[TreeNode] = []
    index: dict[tuple[int, str], int] = {}
    for level in range(text.shape[1] - 1, -1, -1):
        labels, first, inverse = np.unique(text[:, level], return_index=True, return_inverse=True)
        under = np.bincount(inverse, minlength=len(labels))
        summed = np.bincount(inverse, weights=records, minlength=len(labels)) if values is not None else None
        for j in np.argsort(first, kind="stable"):
            parent = None if level == text.shape[1] - 1 else index[(level + 1, text[first[j], level + 1])]
            index[(level, labels[j])] = len(nodes)
            nodes.append(
                TreeNode(
                    level, str(labels[j]), parent, int(under[j]), None if summed is None else int(round(summed[j]))
                )
            )
    return tuple(nodes)


def level_lookup(
    table: pd.DataFrame | None,
    labels: Sequence,
    attribute: str = "the attribute",
    *,
    columns: list[list[str]] | None = None,
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Per-level lookup arrays for a column encoded with ``labels`` (the kernel's codes).

    Returns ``(lookup, level_labels)``: ``lookup[j][c]`` is the level-j code of
    data code ``c`` and ``level_labels[j]`` the text of each level-j code.
    Level 0 is the data's own coding; ``columns`` is the hierarchy's validated
    text (``hierarchy_columns``) when the caller has it already. A missing value (the kernel's
    ``"missing"``) takes the generalizations of the hierarchy's row for a missing
    marker (``?``, ``NA``, ... : the loader read those cells as missing, so the row
    is meant for them); without such a row it stays ``"missing"`` at every level
    but the last, where it joins the top value when that level has just one (``*``).

    >>> lookup, names = level_lookup(flat_hierarchy(["F", "M"]), ["F", "M"])
    >>> lookup.tolist(), names[1].tolist()
    ([[0, 1], [0, 0]], ['*'])
    >>> with_marker = pd.DataFrame([["F", "*"], ["M", "*"], ["?", "unknown"]])
    >>> level_lookup(with_marker, ["F", "M", "missing"])[1][1].tolist()
    ['*', 'unknown']
    """
    keys = [value_key(v) for v in labels]
    if columns is None:
        columns = hierarchy_columns(table, attribute)
    known = set(columns[0])
    _require_covered(dict.fromkeys(k for k in keys if k != MISSING_LABEL), known, attribute)
    height = len(columns)
    stays = [False] * height  # levels where a missing value stays missing
    if MISSING_LABEL in keys and MISSING_LABEL not in known:
        row = _missing_row(columns, attribute)
        if row is None:
            row = [MISSING_LABEL] * height
            stays = [True] * height
            if height > 1 and len(set(columns[-1])) == 1:
                row[-1] = columns[-1][0]  # a single top value ("*") hides missing too
                stays[-1] = False
        columns = [column + [value] for column, value in zip(columns, row)]
    position = {value: row for row, value in enumerate(columns[0])}  # listed once each (validated)
    row_of = [position[k] for k in keys]
    appended = len(columns[0]) - 1
    lookup = np.empty((height, len(keys)), dtype=np.int64)
    lookup[0] = np.arange(len(keys))
    level_labels = [np.asarray([str(v) for v in labels], dtype=object)]
    blank = object()  # a missing value that stays missing is its own value, whatever the hierarchy's labels
    for level in range(1, height):
        column = columns[level]
        codes: dict = {}  # each value's code, in order of first appearance
        lookup[level] = [
            codes.setdefault(blank if stays[level] and r == appended else column[r], len(codes)) for r in row_of
        ]
        level_labels.append(np.asarray([MISSING_LABEL if u is blank else u for u in codes], dtype=object))
    return lookup, level_labels


def generalize_column(
    values: pd.Series, hierarchy: pd.DataFrame, level: int, attribute: str = "the attribute"
) -> pd.Series:
    """``values`` raised to ``level`` of ``hierarchy``: the one way a generalized column is
    written (the searches' tables, the generalization step, the release), so what a
    search counts is what the file holds. A missing value goes where ``level_lookup``
    sends it: a marker row's generalization, the single top value, or it stays missing.

    >>> generalize_column(pd.Series(["F", None, "M"]), flat_hierarchy(["F", "M"]), 1).tolist()
    ['*', '*', '*']
    >>> h = taxonomy_hierarchy({"G": ["a", "b"], "*": ["G"]})
    >>> generalize_column(pd.Series(["a", None]), h, 1).tolist()
    ['G', None]
    """
    if level == 0:
        return values
    codes, labels = encode_column(values)
    lookup, level_labels = level_lookup(hierarchy, labels, attribute)
    return generalized_values(values, lookup[level][codes], level_labels[level])


def generalized_values(
    values: pd.Series, level_codes: np.ndarray, level_labels: np.ndarray, *, categorical: bool = False
) -> pd.Series:
    """``values`` written at one level: each value's level code (``level_lookup``) as its label;
    a missing value whose label is ``"missing"`` stays missing (no marker row, not the top).
    ``generalize_column`` and the generalization searches write every generalized cell this way.
    ``categorical`` writes the same cells as a pandas categorical column (the level's labels its
    categories: a search's released table, read by the counting kernel from its codes).

    >>> lookup, labels = level_lookup(flat_hierarchy(["F", "M"]), ["F", "M", "missing"])
    >>> generalized_values(pd.Series(["F", "M", None]), lookup[0][[0, 1, 2]], labels[0]).tolist()
    ['F', 'M', None]
    >>> generalized_values(pd.Series(["F", None]), lookup[1][[0, 2]], labels[1], categorical=True).tolist()
    ['*', '*']
    """
    labels = np.asarray(level_labels, dtype=object)
    marked = labels == MISSING_LABEL
    stays = values.isna().to_numpy() & marked[level_codes] if marked.any() else None  # None: no label reads missing
    if categorical:
        codes, categories = pd.factorize(labels)  # a label shared by two codes (a group named "missing") once
        codes = codes[level_codes]
        if stays is not None:
            codes[stays] = -1
        # the categories as they are (distinct, from ``factorize``) and the codes within them: no re-checks
        dtype = pd.CategoricalDtype(pd.Index(categories, dtype=object))
        return pd.Series(pd.Categorical.from_codes(codes, dtype=dtype, validate=False), index=values.index)
    out = labels[level_codes]
    if stays is not None:
        out[stays] = None
    return pd.Series(out, index=values.index, dtype=object)


def _missing_row(columns: list[list[str]], attribute: str) -> list[str] | None:
    """The row for the data's missing values from the hierarchy's rows for missing
    markers (``?;unknown;*``), or None when it has none. Several marker rows must agree:
    the loader reads them all as one missing value, which cannot follow two paths."""
    markers = {m for m in MISSING_MARKERS if m}
    rows = [r for r, value in enumerate(columns[0]) if value in markers]
    if not rows:
        return None
    paths = {tuple(column[r] for column in columns[1:]) for r in rows}
    if len(paths) > 1:
        names = [f"'{columns[0][r]}'" for r in rows]
        raise HierarchyError(
            f"The hierarchy of {attribute} has rows for {join_names(names[:-1])} and {names[-1]}, which generalize "
            "differently, but the data reads all of them as missing values and cannot tell them apart; "
            "give those rows the same generalizations, or keep one of them."
        )
    return [MISSING_LABEL, *paths.pop()]
