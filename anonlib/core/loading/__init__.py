"""Reading user files into tables: safely, exactly, and about as fast as pandas.

``load_table`` accepts CSV/TSV (any of ``, ; TAB |``; gzip-compressed too),
Excel (.xlsx, with openpyxl) and Parquet, as bytes or a path. Delimiter,
encoding (UTF-8, UTF-8 with BOM, UTF-16 with BOM, Latin-1) and whether the
first row is a header are detected and can be given. A file whose lines are partly
UTF-8 and partly not (pasted together from two systems) is read line by line, the
others as Latin-1, and a note names those lines; it is never read as Latin-1
throughout. Column names equal after Unicode normalization (``diagnosé`` with a
composed and a decomposed accent) are refused in one sentence.

Every cell is read as text first, so nothing is silently rounded; a column
becomes numeric only when every non-missing value converts without loss (no
leading zeros, at most 18 integer digits, finite). Missing values (``?``,
empty, ``NA``, ``N/A``, ``NaN``, ``NULL``) become NA; the counting kernel treats
them as a category of their own. Files are parsed in memory and never written
to disk.

How it is fast: pandas' C parser reads the text straight into Arrow string
columns, on every core for a file on disk (pandas parses in-memory bytes on one
core, so bytes holding no quote character are split by pyarrow's reader
instead: without quotes the two split alike, and any row they could read
differently makes pyarrow refuse, so pandas reads it; pyarrow also reads the
rare file pandas' parser misreads, see ``_split_by_pyarrow``). Then each column is
typed: a column of plain whole numbers is parsed at once and checked by length
(no leading zeros); any other is judged on its distinct values only, which are
stripped, checked against the missing markers and converted, then expanded
with each cell's code (a column of 10^6 records with 10 values costs 10
conversions). A text column keeps the text as read (as ``large_string``, what
pandas' string arrays hold): missing values are nulled through a new validity
bitmap, so the text is never copied.

Size limits are checked before anything large is built: the file size (and
the unpacked size of gzip and xlsx files), the columns, and the cells (from
the line count of text, whose parsing is then cut off at the limit when the
count says it may pass it, the row-group metadata of Parquet, the declared
size or the counted ``<c>`` elements of an xlsx sheet, whose reading is also
cut off while streaming; an xlsx's shared texts, which openpyxl reads whole before
the first cell, by their declared size and their count).

What the reader noticed or guessed comes back as ``LoadedTable.notes``, one
sentence each: the header guess when it may surprise (a number-like column
name, or names made up for a first row of data), the missing markers read
(how many cells of each, in which columns), formulas without saved results,
renamed columns, a likely wrong delimiter. The CLI prints them on stderr; the
Dataset page shows them.

Why one module of about 1,000 lines: it is one pipeline (bytes, text or
sheet, cells, typed columns, notes) whose stages share the private cell
types and the limits; split, each piece would only be read with the others.

Parts: ``source`` (limits, markers, the returned table, the bytes and their format),
``text`` (delimited text: detection and parsing), ``spreadsheets`` (Excel, Parquet),
``columns`` (typing and missing markers); ``load_table`` and ``to_safe_csv`` are here.

Example:
    >>> t = load_table(b"age;sex\\n30;f\\n?;m\\n", name="demo.csv")
    >>> t.delimiter, t.header, t.frame["age"].tolist(), t.missing_cells
    (';', True, [30, <NA>], 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import pyarrow as pa

from ..errors import DataFileError, FileTooLargeError, join_names
from ..parallel import each
from .columns import Typed, clean_names, header_note, missing_note, missing_text, typed_values
from .source import (
    CSV_INJECTION_PREFIXES,
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_CELLS,
    DEFAULT_MAX_COLUMNS,
    DELIMITERS,
    EXCEL_ERRORS,
    EXCEL_MAX_CELLS,
    FORMULA_PREFIXES,
    MISSING_MARKERS,
    LoadedTable,
    detect_format,
    gunzip,
    open_source,
    too_large,
)
from .spreadsheets import read_excel, read_parquet
from .text import Cells, read_text

# --- the one entry point ----------------------------------------------------------------


def load_table(
    source: bytes | str | Path,
    *,
    name: str | None = None,
    delimiter: str | None = None,
    encoding: str | None = None,
    header: bool | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_columns: int = DEFAULT_MAX_COLUMNS,
    max_cells: int = DEFAULT_MAX_CELLS,
    missing_markers: tuple[str, ...] = MISSING_MARKERS,
    allow_empty: bool = False,
) -> LoadedTable:
    """Read a table from bytes or a path; raises ``DataFileError`` with a clear sentence.

    ``header`` None detects whether the first row holds the column names (see
    ``_detect_header``); True or False says so (Parquet always has names).
    ``allow_empty`` reads column names without rows as an empty table (a release
    whose every record was suppressed) instead of refusing it.

    >>> load_table(b"39, State-gov\\n50, Private\\n").frame.columns.tolist()
    ['column 1', 'column 2']
    >>> load_table(b"zip,sex,2019\\n52001,M,3\\n52001,M,4\\n").frame.columns.tolist()
    ['zip', 'sex', '2019']
    """
    src = open_source(source, name, max_bytes)
    if delimiter is not None and delimiter not in DELIMITERS and len(delimiter) != 1:
        raise DataFileError("The delimiter must be a single character such as , ; | or TAB.")
    fmt = detect_format(src.head, src.name)
    limits = (max_columns, max_cells, max_bytes, missing_markers, allow_empty)
    if fmt == "excel":
        return _table(src.name, "excel", read_excel(src, header, max_columns, max_bytes), *limits)
    if fmt == "parquet":
        return _table(src.name, "parquet", read_parquet(src, max_columns, max_cells), *limits)
    return _table(
        src.name, "csv", read_text(src, delimiter, encoding, header, max_columns, max_cells, missing_markers), *limits
    )


def _table(
    name: str,
    fmt: str,
    cells: Cells,
    max_columns: int,
    max_cells: int,
    max_bytes: int,
    missing_markers: Sequence[str],
    allow_empty: bool = False,
) -> LoadedTable:
    """Check the limits, type every column (two at a time) and say what was noticed."""
    columns = cells.columns
    rows = len(columns[0]) if columns else 0
    if len(columns) > max_columns:
        raise DataFileError(
            f"The table has {len(columns):,} columns; the limit is {max_columns:,}. "
            "Keep only the columns you need to assess."
        )
    if rows == 0 and allow_empty and cells.header:
        return LoadedTable(
            frame=pd.DataFrame({n: pd.Series([], dtype=object) for n in cells.names}),
            name=name,
            format=fmt,
            delimiter=cells.delimiter,
            encoding=cells.encoding,
            header=True,
            missing_cells=0,
        )
    if rows == 0:
        raise DataFileError(
            "The file has column names but no rows of data." if cells.header else "The file has no rows of data."
        )
    if rows * len(columns) > max_cells:
        raise FileTooLargeError(f"The table has {rows * len(columns):,} cells; the limit is {max_cells:,}.")
    markers = pa.array(list(missing_markers), pa.large_string())
    # Each raw column is let go as soon as it is typed (a text column's typed form shares
    # its buffers; a numeric one's replaces them), so the raw table and the typed one are
    # never held whole at once.
    raw = list(columns)
    cells.columns.clear()
    del columns

    def typed_column(j: int) -> Typed:
        column, raw[j] = raw[j], None
        return typed_values(column, markers)

    typed = each(typed_column, range(len(raw)), elements=rows, at_most=2)  # two columns' temporaries at a time
    text_bytes = sum(t.text_bytes for t in typed)
    if text_bytes > 4 * max_bytes:
        raise too_large("The text in the table takes", text_bytes, 4 * max_bytes)
    notes = list(cells.notes)
    names = clean_names(cells.names, cells.header, notes)
    frame = pd.DataFrame({n: t.values for n, t in zip(names, typed)}, copy=False)
    notes.extend(note for note in (header_note(cells, names), missing_note(typed, names, fmt)) if note)
    if frame.shape[1] == 1 and fmt == "csv":
        notes.append("Only one column was found; if the file uses another delimiter, choose it.")
    empty = [n for n, t in zip(names, typed) if t.missing == rows]
    if empty:
        notes.append(f"These columns are entirely missing: {join_names(empty)}.")
    formula_cols = [n for n, t in zip(names, typed) if t.formula_like]
    if formula_cols:
        notes.append(
            "Some values start with = + - or @ and could run as formulas in a spreadsheet "
            f"(columns {join_names(formula_cols)}); downloads prefix them with an apostrophe."
        )
    return LoadedTable(
        frame=frame,
        name=name,
        format=fmt,
        delimiter=cells.delimiter,
        encoding=cells.encoding,
        header=cells.header,
        missing_cells=sum(t.missing for t in typed),
        notes=tuple(notes),
        missing_texts={n: missing_text(t.markers) for n, t in zip(names, typed) if t.markers},
    )


def to_safe_csv(frame: pd.DataFrame) -> bytes:
    """CSV bytes for download, with spreadsheet formulas neutralised.

    Text and categorical cells (and column names) starting with ``= + - @``,
    a tab or a carriage return get a leading apostrophe (OWASP CSV injection
    advice); numbers are written as they are. Lines end in CRLF (RFC 4180).

    >>> to_safe_csv(pd.DataFrame({"a": ["=1+1", "x"], "b": [-1, 2]})).decode().splitlines()
    ['a,b', "'=1+1,-1", 'x,2']
    >>> to_safe_csv(pd.DataFrame({"c": pd.Categorical(["@x", "y"])})).decode().splitlines()
    ['c', "'@x", 'y']
    """
    safe = frame.copy()
    safe.columns = ["'" + str(c) if str(c).startswith(CSV_INJECTION_PREFIXES) else str(c) for c in safe.columns]
    for col in safe.columns:
        series = safe[col]
        if (
            series.dtype == object
            or pd.api.types.is_string_dtype(series)
            or isinstance(series.dtype, pd.CategoricalDtype)
        ):
            text = series.astype("string")
            risky = text.str.startswith(CSV_INJECTION_PREFIXES).fillna(False)
            safe[col] = text.where(~risky, "'" + text)
    # RFC 4180 line ends: the csv writer then quotes a field holding a bare CR,
    # which would otherwise split the row in a spreadsheet
    return safe.to_csv(index=False, lineterminator="\r\n").encode("utf-8")


__all__ = [
    "CSV_INJECTION_PREFIXES",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_CELLS",
    "DEFAULT_MAX_COLUMNS",
    "DELIMITERS",
    "EXCEL_ERRORS",
    "EXCEL_MAX_CELLS",
    "FORMULA_PREFIXES",
    "LoadedTable",
    "MISSING_MARKERS",
    "gunzip",
    "load_table",
    "to_safe_csv",
]
