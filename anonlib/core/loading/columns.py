"""Typing the columns: whole numbers, numbers and text decided as the loader promises,
missing markers found and counted, notes on headers and missing cells."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import ColumnError, join_names
from .source import FORMULA_PREFIXES, INTEGER, NUMBER, PLAIN_WHOLE_NUMBER, text_bytes, written_length
from .text import Cells, is_number

# --- typing --------------------------------------------------------------------------


@dataclass(frozen=True)
class Typed:
    """One typed column and what was noticed on its distinct values."""

    values: object  # an Int64, float64 or string array of the column's length
    missing: int
    formula_like: bool = False
    text_bytes: int = 0
    markers: tuple[tuple[str | None, int], ...] = ()  # (marker, cells) read as missing; None: no value at all


def _matches_any(texts: pa.Array, pattern: str) -> bool:
    return bool(len(texts)) and bool(pc.any(pc.match_substring_regex(texts, pattern)).as_py())


def _matches_all(texts: pa.Array, pattern: str) -> bool:
    return bool(len(texts)) and bool(pc.all(pc.match_substring_regex(texts, pattern)).as_py())


_FORMULA_START = "^[" + re.escape("".join(FORMULA_PREFIXES)) + "]"
_FEW_MARKERS = 3  # up to this many distinct missing texts, a text column's marker cells are found by comparing


def _whole_numbers(column: pa.ChunkedArray) -> np.ndarray | None:
    """The column's numbers when every cell is a whole number written the plain way
    (digits with an optional minus, no leading zero, at most 18 digits), else None.

    The common numeric column is parsed at once instead of through its distinct values.
    Arrow's cast reads ``-?\\d+`` and allows leading zeros; a text with leading zeros (or
    ``-0``) is longer than its number's own digits and no text is shorter, so the texts'
    total length equals the numbers' total digits exactly when every text is plain.

    >>> _whole_numbers(pa.chunked_array([["30", "-7", "0"]])).tolist()
    [30, -7, 0]
    >>> _whole_numbers(pa.chunked_array([["30", "07"]])) is None
    True
    """
    if (
        not len(column)
        or column.null_count
        or pa.types.is_dictionary(column.type)
        or not PLAIN_WHOLE_NUMBER.fullmatch(column[0].as_py())
    ):  # a text column fails here, cheaply
        return None
    try:
        numbers = pc.cast(column, pa.int64()).to_numpy()
    except pa.ArrowInvalid:
        return None
    length = written_length(numbers)
    return numbers if length is not None and text_bytes(column) == length else None


def typed_values(column: pa.ChunkedArray | np.ndarray, markers: pa.Array) -> Typed:
    """Strip, mark missing values and convert one column of texts.

    A column of plain whole numbers is parsed at once (``_whole_numbers``), or
    comes as numbers from the parser (an int64 array, ``text._parse_numbers``). Any
    other is judged on its distinct values: stripped, checked against the missing
    markers and converted, then expanded with each cell's code (a column of 10^6
    records with 10 values costs 10 conversions). Numbers when every non-missing
    value converts without loss (no leading zeros, no more than 18 integer digits,
    finite), else text. A text column whose values need no stripping is kept as it
    was read, without a copy: its missing values are nulled through a new validity
    bitmap.
    """
    if isinstance(column, np.ndarray):  # whole numbers the parser read, proven written plainly (text._parse_numbers)
        return Typed(pd.arrays.IntegerArray(column, np.zeros(len(column), bool)), 0)
    whole = _whole_numbers(column)
    if whole is not None:
        return Typed(pd.arrays.IntegerArray(whole, np.zeros(len(whole), bool)), 0)
    if not pa.types.is_dictionary(column.type) and _starts_numeric(column):
        # numbers not read at once (decimals, missing markers) need each cell's code as well as the
        # distinct values: one pass of hashing gives both (instead of finding the values, then the codes)
        column = pc.dictionary_encode(column)
    given_dictionary = pa.types.is_dictionary(column.type)
    if given_dictionary:  # Parquet's text, or numbers' text: codes come with it; its dictionary may hold unused values
        if any(len(chunk.dictionary) != len(column.chunk(0).dictionary) for chunk in column.chunks):
            column = column.unify_dictionaries()
        raw = (column.chunk(0).dictionary if column.num_chunks else pa.array([])).cast(pa.large_string())
        codes = _codes((chunk.indices for chunk in column.chunks), len(raw))
        counts = np.bincount(codes, minlength=len(raw) + 1)[:-1]
    else:
        raw = pc.unique(column).drop_null().cast(pa.large_string())
        codes = counts = None  # counted only when needed
    short = int(column.null_count)  # fields missing from short rows, or Parquet nulls
    used = counts > 0 if counts is not None else np.ones(len(raw), bool)
    values = pc.utf8_trim_whitespace(raw)
    is_missing = pc.is_in(values, value_set=markers).to_numpy(zero_copy_only=False)
    present = used & ~is_missing
    texts = values.filter(pa.array(present))
    kind = "text"
    if _matches_all(texts, NUMBER.pattern):
        if _matches_all(texts, INTEGER):
            if not _matches_any(texts, r"^[+-]?0\d") and not _matches_any(texts, r"^[+-]?0*\d{19,}$"):
                kind = "integer"
        elif np.isfinite(pc.cast(texts, pa.float64()).to_numpy(zero_copy_only=False)).all():
            kind = "float"
    any_missing = bool(is_missing.any()) or short > 0
    untouched = kind == "text" and not given_dictionary and pc.all(pc.equal(values, raw)).as_py()
    if untouched and not any_missing:
        # already final: the text is kept as read, and no cell needs its code
        return Typed(pd.arrays.ArrowStringArray(column.cast(pa.large_string())), 0, _matches_any(texts, _FORMULA_START))
    if untouched and np.count_nonzero(is_missing) <= _FEW_MARKERS:  # only the marker texts are compared
        marker_codes = np.flatnonzero(is_missing)
        masks, marker_counts = _marker_cells(column, [raw[int(code)] for code in marker_codes])
        counts = np.zeros(len(raw), np.int64)
        counts[marker_codes] = marker_counts
        kept = _without(column.cast(pa.large_string()), masks)
        return Typed(
            pd.arrays.ArrowStringArray(kept),
            kept.null_count,
            _matches_any(texts, _FORMULA_START),
            markers=_markers_found(values, is_missing, counts, short),
        )
    if codes is None:
        codes = _codes(pc.index_in(column, value_set=raw).chunks, len(raw))
        counts = np.bincount(codes, minlength=len(raw) + 1)[:-1]
    rows_missing = np.append(is_missing, True)[codes] if any_missing else None  # code len(raw): no value
    missing = int(np.count_nonzero(rows_missing)) if any_missing else 0
    found = _markers_found(values, is_missing, counts, short) if any_missing else ()
    if kind == "integer":
        numbers = np.zeros(len(raw) + 1, dtype=np.int64)
        numbers[:-1][present] = pc.cast(pc.replace_substring_regex(texts, r"^\+", ""), pa.int64()).to_numpy()
        mask = rows_missing if any_missing else np.zeros(len(codes), bool)
        return Typed(pd.arrays.IntegerArray(numbers[codes], mask), missing, markers=found)
    if kind == "float":
        numbers = np.full(len(raw) + 1, np.nan)
        numbers[:-1][present] = pc.cast(texts, pa.float64()).to_numpy(zero_copy_only=False)
        return Typed(numbers[codes], missing, markers=found)
    formula_like = _matches_any(texts, _FORMULA_START)
    if untouched:  # final but for the missing values
        kept = _without(column.cast(pa.large_string()), _by_chunk(column, rows_missing))
        return Typed(pd.arrays.ArrowStringArray(kept), missing, formula_like, markers=found)
    kept = pc.if_else(pa.array(is_missing), pa.scalar(None, pa.large_string()), values)
    lengths = pc.fill_null(pc.binary_length(kept), 0).to_numpy(zero_copy_only=False)
    strings = pa.concat_arrays([kept, pa.nulls(1, pa.large_string())]).take(codes)  # code len(raw): no value
    return Typed(
        pd.arrays.ArrowStringArray(pa.chunked_array([strings])),
        missing,
        formula_like,
        int(np.dot(counts, lengths)),
        found,
    )


def _starts_numeric(column: pa.ChunkedArray) -> bool:
    """Whether the column's first text is a number (``NUMBER``): then it is likely numeric.

    >>> _starts_numeric(pa.chunked_array([[" 27.5", "x"]])), _starts_numeric(pa.chunked_array([["F"]]))
    (True, False)
    """
    first = next((chunk[0].as_py() for chunk in column.chunks if len(chunk)), None)
    return first is not None and NUMBER.match(first.strip()) is not None


def _marker_cells(column: pa.ChunkedArray, texts: Sequence[pa.Scalar]) -> tuple[list[pa.BooleanArray], list[int]]:
    """The cells without a value or holding one of a few texts read as missing (a mask per
    chunk), and the cells of each text: one comparison per text, cheaper than coding
    every cell."""
    masks, counts = [], [0] * len(texts)
    for chunk in column.chunks:
        marked = chunk.is_null() if chunk.null_count else None
        for i, text in enumerate(texts):
            cells = pc.equal(chunk, text)
            counts[i] += pc.sum(cells).as_py() or 0
            cells = pc.fill_null(cells, False) if chunk.null_count else cells
            marked = cells if marked is None else pc.or_(marked, cells)
        masks.append(marked if marked is not None else pa.array(np.zeros(len(chunk), bool)))
    return masks, counts


def _codes(indices: Iterable[pa.Array], none: int) -> np.ndarray:
    """Each cell's code (its distinct value's position) in one array; ``none`` for a cell without a value."""
    parts = [pc.fill_null(chunk, none).to_numpy() for chunk in indices]
    return np.concatenate(parts) if parts else np.zeros(0, np.int32)


def _markers_found(
    values: pa.Array, is_missing: np.ndarray, counts: np.ndarray, short: int
) -> tuple[tuple[str | None, int], ...]:
    """How many cells of each missing marker the column holds (None: cells without any
    value), from the counts of its distinct values."""
    found: dict[str | None, int] = {}
    for code in np.flatnonzero(is_missing & (counts > 0)):
        marker = values[int(code)].as_py()
        found[marker] = found.get(marker, 0) + int(counts[code])
    if short:
        found[None] = short
    return tuple(found.items())


_NO_VALUE = {"parquet": "null {}", "excel": "{} without a value"}


def missing_text(markers: Sequence[tuple[str | None, int]]) -> str:
    """How a column writes a missing value: the marker most of its missing cells hold ("" for
    cells without any value).

    >>> missing_text([("?", 30), (None, 2)]), missing_text([(None, 5)])
    ('?', '')
    """
    marker = max(markers, key=lambda m: m[1])[0] if markers else None
    return "" if marker is None else str(marker)


def missing_note(typed: Sequence[Typed], names: Sequence[str], fmt: str) -> str | None:
    """One sentence on the cells read as missing: how many of each marker, in which columns."""
    cells: dict[str, int] = {}
    where: dict[str, list[str]] = {}
    for name, column in zip(names, typed):
        for marker, count in column.markers:
            what = _NO_VALUE.get(fmt, "empty {}") if marker in (None, "") else f"'{marker}' {{}}"
            cells[what] = cells.get(what, 0) + count
            if name not in where.setdefault(what, []):
                where[what].append(name)
    if not cells:
        return None
    parts = [
        f"{count:,} {what.format('cells' if count != 1 else 'cell')} (in {join_names(where[what])})"
        for what, count in sorted(cells.items(), key=lambda item: -item[1])
    ]
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"Read as missing values: {listed}."


def header_note(cells: Cells, names: Sequence[str]) -> str | None:
    """What the header guess decided, when it may surprise: made-up names, or names that look like numbers."""
    if not cells.guessed:
        return None
    if not cells.header:
        return (
            f"The first row was read as data, not as column names (it looks like the rows below it), so the "
            f"columns are called 'column 1' to 'column {len(names)}'; if it holds the names, say that the file has a header."
        )
    numeric = [str(n).strip() for n in cells.names if n is not None and is_number(str(n))]
    if numeric:
        return (
            f"The first row was read as column names although {join_names(numeric)} "
            f"look{'s' if len(numeric) == 1 else ''} like {'a number' if len(numeric) == 1 else 'numbers'}; "
            "if it is data, say that the file has no header."
        )
    return None


def _without(column: pa.ChunkedArray, missing: Iterable[pa.BooleanArray]) -> pa.ChunkedArray:
    """The text column with the cells ``missing`` marks (one mask per chunk, no nulls in
    it) set to null, its text buffers shared: only a new validity bitmap is built."""
    chunks = []
    for chunk, marked in zip(column.chunks, missing, strict=True):
        nulls = pc.sum(marked).as_py() or 0
        if not nulls:
            chunks.append(chunk)
            continue
        valid = pc.invert(marked)
        if valid.offset != chunk.offset:  # the bitmap is read from the chunk's offset on
            valid = pa.concat_arrays([pa.array(np.ones(chunk.offset, bool)), valid])
        buffers = [valid.buffers()[1], *chunk.buffers()[1:]]
        chunks.append(pa.Array.from_buffers(chunk.type, len(chunk), buffers, null_count=nulls, offset=chunk.offset))
    return pa.chunked_array(chunks, column.type)


def _by_chunk(column: pa.ChunkedArray, mask: np.ndarray) -> Iterator[pa.BooleanArray]:
    """A mask over the whole column cut along its chunks."""
    start = 0
    for chunk in column.chunks:
        yield pa.array(mask[start : start + len(chunk)])
        start += len(chunk)


def clean_names(names: Sequence[object], header: bool, notes: list[str]) -> list[str]:
    """Column names: ``column j`` without a header, for blank names, and
    ``name (2)`` for a repeated name; each change is noted. Two names that differ only in
    their Unicode form (``diagnosé`` with a composed and with a decomposed é: the same name on
    screen) are refused in one sentence: which column a user named could not be told.

    >>> clean_names(["age", "diagnos\u00e9", "diagnose\u0301"], True, [])
    Traceback (most recent call last):
    ...
    anonlib.core.errors.ColumnError: Columns 2 and 3 are both named 'diagnosé', written in two Unicode forms (with a composed and a decomposed accent), so they cannot be told apart; rename one of them in the file.
    """
    if not header:
        return [f"column {j + 1}" for j in range(len(names))]
    _refuse_unicode_twins(names)
    cleaned: list[str] = []
    for j, raw in enumerate(names):
        name = "" if raw is None else str(raw).strip()
        if not name or name.lower() == "nan":
            name = f"column {j + 1}"
            notes.append(f"Column {j + 1} has no name; it is called '{name}'.")
        if name in cleaned:
            copy = 2
            while f"{name} ({copy})" in cleaned:
                copy += 1
            notes.append(f"The column name '{name}' appears more than once; the copy is called '{name} ({copy})'.")
            name = f"{name} ({copy})"
        cleaned.append(name)
    return cleaned


def _refuse_unicode_twins(names: Sequence[object]) -> None:
    """A sentence when two column names are equal after Unicode normalization (NFC) but not as
    written (names equal as written are copies, renamed ``name (2)`` by ``clean_names``)."""
    seen: dict[str, tuple[int, str]] = {}
    for j, raw in enumerate(names):
        name = "" if raw is None else str(raw).strip()
        key = unicodedata.normalize("NFC", name)
        if key in seen and seen[key][1] != name:
            raise ColumnError(
                f"Columns {seen[key][0] + 1} and {j + 1} are both named '{key}', written in two Unicode forms (with a "
                "composed and a decomposed accent), so they cannot be told apart; rename one of them in the file."
            )
        seen.setdefault(key, (j, name))
