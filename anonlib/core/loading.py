"""Reading user files into tables: safely, exactly, and about as fast as pandas.

``load_table`` accepts CSV/TSV (any of ``, ; TAB |``; gzip-compressed too),
Excel (.xlsx, with openpyxl) and Parquet, as bytes or a path. Delimiter,
encoding (UTF-8, UTF-8 with BOM, UTF-16 with BOM, Latin-1) and whether the
first row is a header are detected and can be given.

Every cell is read as text first, so nothing is silently rounded; a column
becomes numeric only when every non-missing value converts without loss (no
leading zeros, at most 18 integer digits, finite). Missing values (``?``,
empty, ``NA``, ``N/A``, ``NaN``, ``NULL``) become NA; the counting kernel treats
them as a category of their own. Files are parsed in memory and never written
to disk.

How it is fast: pyarrow's multi-threaded CSV reader splits the text into
string columns; each column is dictionary-encoded and only its distinct
values are stripped, checked against the missing markers and converted, then
expanded with the codes (a column of 10^6 records with 10 values costs 10
conversions). A text column keeps the text pyarrow read (as ``large_string``,
what pandas' string arrays hold): missing values are nulled through a new
validity bitmap, so the text is never copied. pandas' own parser, as this module used before, remains the
reference for the rare files whose reading the two parsers could disagree
on (a quote after a space, rows of the wrong width, whitespace-only lines in
a one-column file, UTF-16 and other encodings): they are read by it.

Size limits are checked before anything large is built: the file size (and
the unpacked size of gzip and xlsx files), the columns, and the cells (from
the line count of text, the row-group metadata of Parquet, the declared size
or the counted ``<c>`` elements of an xlsx sheet, whose reading is also cut
off while streaming).

What the reader noticed or guessed comes back as ``LoadedTable.notes``, one
sentence each: the header guess when it may surprise (a number-like column
name, or names made up for a first row of data), the missing markers read
(how many cells of each, in which columns), formulas without saved results,
renamed columns, a likely wrong delimiter. The CLI prints them on stderr; the
Dataset page shows them.

Why one module of about 1,000 lines: it is one pipeline (bytes, text or
sheet, cells, typed columns, notes) whose stages share the private cell
types and the limits; split, each piece would only be read with the others.

Example:
    >>> t = load_table(b"age;sex\\n30;f\\n?;m\\n", name="demo.csv")
    >>> t.delimiter, t.header, t.frame["age"].tolist(), t.missing_cells
    (';', True, [30, <NA>], 1)
"""

from __future__ import annotations

import codecs
import csv
import io
import mmap
import re
import warnings
import zipfile
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from .errors import DataFileError, FileTooLargeError, join_names

DEFAULT_MAX_BYTES = 200 * 1024 * 1024
DEFAULT_MAX_COLUMNS = 2_000
DEFAULT_MAX_CELLS = 60_000_000
# openpyxl parses about 75,000 cells per CPU second (bench_loading: 10^6 cells in 13 s): a
# million is seconds, not minutes; larger sheets are refused before parsing (see _sheet_cells)
EXCEL_MAX_CELLS = 1_000_000
MISSING_MARKERS = ("", "?", "NA", "N/A", "NaN", "nan", "NULL", "null")
DELIMITERS = (",", ";", "\t", "|")
FORMULA_PREFIXES = ("=", "+", "-", "@")
# OWASP CSV injection: a cell starting with any of these can be read as a formula
CSV_INJECTION_PREFIXES = (*FORMULA_PREFIXES, "\t", "\r")
EXCEL_ERRORS = ("#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#N/A", "#GETTING_DATA")
_HEAD_BYTES = 262_144
_SAMPLE_LINES = 200
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_INTEGER = r"^[+-]?\d+$"
_UTF8 = ("utf-8", "utf8", "utf_8")
_LATIN1 = ("latin-1", "latin1", "latin_1", "iso-8859-1", "iso8859-1", "l1")


@dataclass(frozen=True)
class LoadedTable:
    """A table read from a file, with what was detected about the file."""

    frame: pd.DataFrame
    name: str
    format: str
    delimiter: str | None
    encoding: str | None
    header: bool
    missing_cells: int
    notes: tuple[str, ...] = field(default_factory=tuple)


def _human_bytes(n: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n} bytes"  # pragma: no cover


def _too_large(what: str, size: int, limit: int) -> FileTooLargeError:
    return FileTooLargeError(
        f"{what} {_human_bytes(size)}; the limit is {_human_bytes(limit)}. "
        "Load a sample of the rows or the columns you need."
    )


# --- the bytes ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Source:
    """The file's bytes: in memory (an upload, an unpacked gzip) or a plain file on disk,
    which the CSV reader then reads in blocks instead of holding it whole."""

    name: str
    size: int
    head: bytes
    data: bytes | None = None
    path: Path | None = None

    def read(self) -> bytes:
        return self.data if self.data is not None else self.path.read_bytes()

    def blocks(self, size: int = 1 << 24) -> Iterable[bytes]:
        if self.data is not None:
            view = memoryview(self.data)
            for start in range(0, len(view), size):
                yield bytes(view[start:start + size])
            return
        with self.path.open("rb") as handle:
            while block := handle.read(size):
                yield block

    def arrow_input(self) -> str | pa.BufferReader:
        return pa.BufferReader(pa.py_buffer(self.data)) if self.data is not None else str(self.path)


def _open_source(source: bytes | str | Path, name: str | None, max_bytes: int) -> _Source:
    """The file's bytes within the size limit, gzip unpacked (with a cap against bombs)."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        if len(data) > max_bytes:
            raise _too_large("The file is", len(data), max_bytes)
        src = _Source(name or "uploaded table", len(data), data[:_HEAD_BYTES], data=data)
    else:
        path = Path(source)
        if not path.is_file():
            raise DataFileError(f"The file '{path.name}' does not exist or is not a file.")
        size = path.stat().st_size
        if size > max_bytes:
            raise _too_large("The file is", size, max_bytes)
        with path.open("rb") as handle:
            head = handle.read(_HEAD_BYTES)
        src = _Source(name or path.name, size, head, path=path)
    if src.head[:2] == b"\x1f\x8b":
        data = gunzip(src.read(), max_bytes)
        src = _Source(src.name, len(data), data[:_HEAD_BYTES], data=data)
    if not src.head.strip() and (src.size <= len(src.head) or not src.read().strip()):
        raise DataFileError("The file is empty.")
    return src


def gunzip(data: bytes, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """Decompress gzip with a size cap (no decompression bombs): ``DataFileError`` when
    damaged, ``FileTooLargeError`` when it unpacks past ``max_bytes``.

    >>> import gzip
    >>> gunzip(gzip.compress(b"zip,sex"))
    b'zip,sex'
    """
    decomp = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        out = decomp.decompress(data, max_bytes + 1)
    except zlib.error:
        raise DataFileError("The file looks gzip-compressed but is damaged; compress it again.") from None
    if len(out) > max_bytes or decomp.unconsumed_tail:
        raise FileTooLargeError(
            f"The file unpacks to more than {_human_bytes(max_bytes)}, the limit. "
            "Load a sample of the rows or the columns you need."
        )
    return out


def _detect_format(head: bytes, name: str) -> str:
    lower = re.sub(r"\.gz$", "", name.lower())
    if head[:4] == b"PAR1" or lower.endswith(".parquet"):
        return "parquet"
    if head[:4] == b"PK\x03\x04" or lower.endswith((".xlsx", ".xlsm", ".xls")):
        return "excel"
    return "text"


# --- text: encoding, delimiter, header ----------------------------------------------


def _check_not_binary(head: bytes) -> None:
    sample = head[:65536]
    controls = sum(sample.count(bytes([b])) for b in range(1, 32) if b not in (9, 10, 13))
    if b"\x00" in sample or (sample and controls / len(sample) > 0.05):
        raise DataFileError(
            "This looks like a binary file, not a text table. Upload CSV, TSV, Excel or Parquet."
        )


def _decode(data: bytes, encoding: str | None) -> tuple[str, str]:
    """The whole text and its encoding (the reference reader's way: everything decoded at once)."""
    if encoding:
        try:
            return data.decode(encoding), encoding
        except LookupError:
            raise DataFileError(f"'{encoding}' is not a known text encoding. Use utf-8 or latin-1.") from None
        except UnicodeDecodeError as err:
            raise DataFileError(
                f"The file is not valid {encoding} text (first bad byte at position {err.start:,}). "
                "Choose another encoding, for example latin-1."
            ) from None
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8", errors="replace"), "utf-8-sig"
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16"), "utf-16"
        except UnicodeDecodeError:
            raise DataFileError("The file says it is UTF-16 text but is damaged.") from None
    _check_not_binary(data[:65536])
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return data.decode("latin-1"), "latin-1"


def _head_text(src: _Source, encoding: str | None) -> tuple[str, str] | None:
    """The decoded start of the file and the encoding the fast reader will use, or None
    when the file needs the reference reader (UTF-16, other encodings)."""
    if encoding:
        try:
            codec = codecs.lookup(encoding).name
        except LookupError:
            raise DataFileError(f"'{encoding}' is not a known text encoding. Use utf-8 or latin-1.") from None
        if codec not in ("utf-8", "iso8859-1"):
            return None
        used = "utf-8" if codec == "utf-8" else "latin-1"
    elif src.head.startswith(b"\xef\xbb\xbf"):
        used = "utf-8-sig"
    elif src.head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None
    else:
        _check_not_binary(src.head)
        used = "utf-8"
    if used == "latin-1":
        return src.head.decode("latin-1"), used
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        text = decoder.decode(src.head[3:] if used == "utf-8-sig" else src.head, final=src.size <= len(src.head))
    except UnicodeDecodeError:
        if encoding or used == "utf-8-sig":
            return None  # the reference reader gives the exact message (or replaces, for a BOM file)
        return src.head.decode("latin-1"), "latin-1"
    return text, used


def _sample_rows(text: str, delimiter: str) -> list[list[str]]:
    lines = [ln for ln in text[:_HEAD_BYTES].splitlines()[:_SAMPLE_LINES] if ln.strip()]
    try:
        return list(csv.reader(lines, delimiter=delimiter, skipinitialspace=True))
    except csv.Error:
        return []


def _detect_delimiter(text: str) -> str:
    """The delimiter giving the most consistent number of fields (>1) per line."""
    best, best_score = ",", (-1.0, 0)
    for delim in DELIMITERS:
        rows = _sample_rows(text, delim)
        if not rows:
            continue
        widths = np.array([len(r) for r in rows])
        mode = np.bincount(widths).argmax()
        if mode < 2:
            continue
        score = (float(np.mean(widths == mode)), int(mode))
        if score > best_score:
            best, best_score = delim, score
    return best


def _is_number(text: str) -> bool:
    return bool(_NUMBER.match(text.strip()))


def _detect_header(rows: list[list[str]], missing_markers: Sequence[str] = MISSING_MARKERS) -> bool:
    """Is the first row a header? Decided column by column against the rows below it.

    A column decides *header* when its first cell is text above numbers (``zip``
    above 52001, 52002) or a number above text (``2019`` above yes, no), and
    *data* when its first cell repeats a value below it (``Male`` above ``Male``).
    The first deciding column wins; when none decides, the row is a header
    unless one of its cells is a number. So ``zip,sex,2019`` above numbers is a
    header, while ``39, State-gov`` above ``50, Private`` is data.

    >>> _detect_header([["zip", "sex", "2019"], ["52001", "M", "3"], ["52002", "F", "4"]])
    True
    >>> _detect_header([["39", "State-gov"], ["50", "Private"], ["38", "State-gov"]])
    False
    """
    if len(rows) < 2:
        return bool(rows) and not any(_is_number(c) for c in rows[0] if c.strip())
    first, rest = rows[0], rows[1:]
    cells = [c.strip() for c in first]
    if all(not c for c in cells):
        return False
    markers = set(missing_markers)
    for j, cell in enumerate(cells):
        below = [v for v in (r[j].strip() for r in rest if j < len(r)) if v and v not in markers]
        if not cell or not below:
            continue
        numeric_share = sum(_is_number(v) for v in below) / len(below)
        if _is_number(cell):
            if numeric_share == 0 and len(below) >= 2:
                return True
        elif numeric_share >= 0.8:
            return True
        if cell in set(below):
            return False
    return not any(_is_number(c) for c in cells if c)


# --- text: parsing --------------------------------------------------------------------


@dataclass(frozen=True)
class _Cells:
    """A table read from a file as columns of raw cell texts (None = missing), before typing."""

    names: list[str]
    columns: list[pa.ChunkedArray]
    header: bool
    delimiter: str | None = None
    encoding: str | None = None
    notes: tuple[str, ...] = ()
    fast: bool = False  # read by pyarrow's CSV reader (which the reference reader may overrule)
    guessed: bool = False  # whether the first row is a header was detected, not given


def _split_header(columns: list[pa.ChunkedArray], header: bool) -> tuple[list[str], list[pa.ChunkedArray]]:
    """Column names from the first row (or blanks), and the columns without it."""
    if not header:
        return [""] * len(columns), columns
    return [c[0].as_py() if len(c) else "" for c in columns], [c.slice(1) for c in columns]


class _NeedsReference(Exception):
    """The fast reader cannot promise pandas' reading of this file; use the reference reader."""


def _has_quote(src: _Source) -> bool:
    """Does the file hold a quote character? One memchr over the bytes, without a copy."""
    if src.data is not None:
        return src.data.find(b'"') >= 0
    with src.path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        return mapped.find(b'"') >= 0


def _scan(src: _Source, count_lines: bool) -> tuple[int, int]:
    """Lines in the file (an upper bound on its records; 0 when not counted) and how many
    quote characters it holds. One pass over the bytes, at memory speed, when either is
    needed: most files hold no quote and are too small to pass the cell limit."""
    quoted = _has_quote(src)
    if not (quoted or count_lines):
        return 0, 0
    lines = quotes = 0
    for block in src.blocks():
        if count_lines:
            lines += block.count(b"\n") or block.count(b"\r")
        if quoted:
            quotes += block.count(b'"')
    return lines + 1, quotes


def _read_pool() -> pa.MemoryPool:
    """jemalloc for the CSV reader where pyarrow has it: it hands freed blocks back to the
    system, so the reader's working buffers do not stay in the peak (mimalloc, the
    default, keeps them: about 90 MB more at 10^6 records)."""
    try:
        return pa.jemalloc_memory_pool()
    except (NotImplementedError, pa.ArrowNotImplementedError):
        return pa.default_memory_pool()


_READ_POOL = _read_pool()


def _arrow_columns(src: _Source, delimiter: str, encoding: str, max_columns: int, quoted: bool,
                   max_cells: int | None) -> list[pa.ChunkedArray]:
    """Every field as a string, no header handling, no trimming (pyarrow's reader).

    With ``max_cells`` the file is streamed and refused as soon as it passes the limit.
    """
    read = pa_csv.ReadOptions(
        autogenerate_column_names=True, encoding="utf8" if encoding.startswith("utf-8") else "latin1",
        block_size=1 << 22,
    )
    # A quoted value may hold a line break only when there are quotes at all; without
    # quotes the reader may cut blocks at any line end, which is faster.
    parse = pa_csv.ParseOptions(delimiter=delimiter, newlines_in_values=quoted, ignore_empty_lines=True)
    convert = pa_csv.ConvertOptions(
        # every column as text (the first line may not show them all: a quoted header can span lines)
        # large_string: what pandas' string arrays hold, so a final column needs no copy
        column_types={f"f{j}": pa.large_string() for j in range(max_columns + 1)}, strings_can_be_null=False,
        quoted_strings_can_be_null=False,
    )
    try:
        if max_cells is None:
            table = pa_csv.read_csv(src.arrow_input(), read, parse, convert, memory_pool=_READ_POOL)
        else:
            batches, cells = [], 0
            with pa_csv.open_csv(src.arrow_input(), read, parse, convert, memory_pool=_READ_POOL) as reader:
                for batch in reader:
                    cells += batch.num_rows * batch.num_columns
                    if cells > max_cells + batch.num_columns:  # the header row is not a record
                        raise FileTooLargeError(
                            f"The table has more than {max_cells:,} cells, the limit. "
                            "Load a sample of the rows or the columns you need."
                        )
                    batches.append(batch)
                table = pa.Table.from_batches(batches, reader.schema)
    except pa.ArrowInvalid as err:
        if "UTF8" in str(err) and encoding == "utf-8":
            raise UnicodeError from None  # not UTF-8 after all: read again as Latin-1
        raise _NeedsReference from None
    return table.columns


def _read_text_fast(src: _Source, delimiter: str | None, encoding: str | None, header: bool | None,
                    max_columns: int, max_cells: int, missing_markers: Sequence[str]) -> _Cells:
    head = _head_text(src, encoding)
    if head is None:
        raise _NeedsReference
    text, used_encoding = head
    if not text.strip():
        raise _NeedsReference  # blank start of a larger file: the reference reader decides
    used_delimiter = delimiter or _detect_delimiter(text)
    width = _check_width(text, used_delimiter, max_columns)
    has_header = _detect_header(_sample_rows(text, used_delimiter), missing_markers) if header is None else header
    # A record of w fields takes at least w bytes, so a file of at most max_cells bytes
    # cannot pass the cell limit; larger ones are streamed with a cut-off when their
    # line count says they might. The lines are counted only when the start of the file
    # does not show that it stays far below the limit (a file whose later lines are much
    # shorter is still refused, after reading, by the count of cells read).
    head_lines = max(1, text.count("\n"))
    estimated_cells = src.size * head_lines // max(1, len(src.head)) * width
    lines, quotes = _scan(src, count_lines=src.size > max_cells and estimated_cells > max_cells // 2)
    if quotes % 2:
        raise _NeedsReference  # a quote never closed: pyarrow reads on to the end, pandas refuses
    try:
        columns = _arrow_columns(src, used_delimiter, used_encoding, max_columns, quotes > 0,
                                 max_cells if src.size > max_cells and (lines - has_header) * width > max_cells
                                 else None)
    except UnicodeError:
        return _read_text_fast(src, delimiter, "latin-1", header, max_columns, max_cells, missing_markers)
    if len(columns) == 1:
        # pandas skips whitespace-only lines; in a one-column file pyarrow keeps them as values
        values = pc.unique(columns[0])
        if pc.any(pc.and_(pc.utf8_is_space(values), pc.greater(pc.utf8_length(values), 0))).as_py():
            raise _NeedsReference
    names, columns = _split_header(columns, has_header)
    return _Cells(names, columns, has_header, used_delimiter, used_encoding, fast=True, guessed=header is None)


def _check_width(text: str, delimiter: str, max_columns: int) -> int:
    first_line = re.split(r"\r\n|\r|\n", text.lstrip("\ufeff").lstrip(), maxsplit=1)[0]
    width = first_line.count(delimiter) + 1
    if width > max_columns:
        raise DataFileError(
            f"The table has {width:,} columns; the limit is {max_columns:,}. "
            "Keep only the columns you need to assess."
        )
    return width


def _read_text_reference(src: _Source, delimiter: str | None, encoding: str | None, header: bool | None,
                         max_columns: int, missing_markers: Sequence[str]) -> _Cells:
    """pandas' C parser on the whole decoded text: slower and hungrier, but the reference."""
    text, used_encoding = _decode(src.read(), encoding)
    if not text.strip():
        raise DataFileError("The file is empty.")
    used_delimiter = delimiter or _detect_delimiter(text)
    _check_width(text, used_delimiter, max_columns)
    has_header = _detect_header(_sample_rows(text, used_delimiter), missing_markers) if header is None else header
    frame = _parse_text(text, used_delimiter)
    del text
    columns = []
    for j in range(frame.shape[1]):
        column = pa.array(frame.iloc[:, j].array, type=pa.large_string())
        columns.append(column if isinstance(column, pa.ChunkedArray) else pa.chunked_array([column]))
    names, columns = _split_header(columns, has_header)
    return _Cells(names, columns, has_header, used_delimiter, used_encoding, guessed=header is None)


def _parse_text(text: str, delimiter: str) -> pd.DataFrame:
    """All cells as text, no header handling (names are taken by the caller)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pd.errors.ParserWarning)
            return pd.read_csv(
                io.StringIO(text),
                sep=delimiter,
                header=None,
                index_col=False,
                dtype=str,
                keep_default_na=False,
                na_filter=False,
                skipinitialspace=True,
                skip_blank_lines=True,
                engine="c",
            )
    except pd.errors.EmptyDataError:
        raise DataFileError("The file has no rows or columns.") from None
    except pd.errors.ParserError as err:
        message = str(err)
        match = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", message)
        if match:
            want, line, saw = match.groups()
            raise DataFileError(
                f"Line {line} has {saw} fields but the table has {want} columns. "
                "Fix that line, or check that the right delimiter is chosen."
            ) from None
        if "EOF" in message:
            raise DataFileError(
                "A quoted value is never closed (a \" without its partner). Fix the quoting in the file."
            ) from None
        raise DataFileError(f"The file could not be read as a table: {message.splitlines()[0]}") from None


# --- Excel and Parquet ------------------------------------------------------------------


def _excel_text(value: object) -> str | None:
    """A cell's text as pandas' Excel reader gave it: whole numbers without ``.0``."""
    if value is None:
        return None
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


_DIMENSION = re.compile(rb"<(?:\w+:)?dimension ref=\"[A-Z]+(\d+)(?::([A-Z]+)(\d+))?\"")


def _sheet_cells(archive: zipfile.ZipFile, path: str) -> int:
    """The cells a sheet holds: its declared size when the start of its XML gives one
    beyond the limit, else its ``<c>`` elements counted in the unpacked XML at memory
    speed (openpyxl would parse them at about 10^5 a second to learn the size)."""
    cells, tail, tags = 0, b"", (b"<c>", b"<c ")
    with archive.open(path) as stream:
        while block := stream.read(1 << 22):
            if not tail:
                prefix = re.search(rb"<(\w+):worksheet", block[:4096])
                if prefix:  # a namespace prefix on every tag (<x:c r="A1">)
                    tags = (b"<" + prefix.group(1) + b":c>", b"<" + prefix.group(1) + b":c ")
                declared = _DIMENSION.search(block[:65536])
                if declared and declared.group(2):
                    first, letters, last = declared.groups()
                    width = 0
                    for letter in letters.decode():
                        width = width * 26 + ord(letter) - 64
                    if (int(last) - int(first) + 1) * width > EXCEL_MAX_CELLS:
                        return (int(last) - int(first) + 1) * width
            chunk = tail + block
            cells += sum(chunk.count(tag) for tag in tags)
            tail = chunk[1 - len(tags[0]):] or b" "  # a tag cut by the block end is counted in the next chunk
    return cells


def _read_excel(src: _Source, header: bool | None, max_columns: int, max_bytes: int) -> _Cells:
    """The first sheet, streamed: refused from its declared size or as soon as it passes
    ``EXCEL_MAX_CELLS``; formulas without a saved result and error cells are noted."""
    try:
        from openpyxl import load_workbook
        # One private piece of openpyxl: its sheet parser, so that one streaming pass sees
        # both a cell's saved value and whether it holds a formula (pinned in requirements).
        from openpyxl.worksheet._reader import FORMULA_TAG, WorkSheetParser
    except ImportError:
        raise DataFileError("Reading Excel files needs the optional package openpyxl; save the sheet as CSV.") from None
    data = src.read()
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            unpacked = sum(info.file_size for info in archive.infolist())
            if unpacked > 2 * max_bytes:
                raise _too_large("The Excel file unpacks to", unpacked, 2 * max_bytes)
            # openpyxl parses a sheet whole to learn its size when the sheet does not declare
            # it: the cells are counted first, at memory speed
            cells_in_book = sum(_sheet_cells(archive, info.filename) for info in archive.infolist()
                                if re.fullmatch(r"xl/worksheets/[^/]+\.xml", info.filename))
        if cells_in_book > EXCEL_MAX_CELLS:
            raise FileTooLargeError(
                f"The workbook holds about {cells_in_book:,} cells; Excel files are read up to "
                f"{EXCEL_MAX_CELLS:,} cells. Save the sheet as CSV, which is read up to 60 million cells."
            )
        book = load_workbook(io.BytesIO(data), read_only=True, data_only=True, keep_links=False)
        sheet = book.worksheets[0]
        declared = (sheet.max_row or 0) * (sheet.max_column or 0)
    except FileTooLargeError:
        raise
    except Exception:  # zipfile and openpyxl raise many kinds for damaged files
        raise DataFileError("The Excel file could not be opened; it may be damaged. Save it as CSV.") from None
    too_many = FileTooLargeError(
        f"The sheet has {sheet.max_row or 0:,} rows and {sheet.max_column or 0:,} columns "
        f"({declared:,} cells); Excel sheets are read up to {EXCEL_MAX_CELLS:,} cells. "
        "Save the sheet as CSV, which is read up to 60 million cells."
        if declared > EXCEL_MAX_CELLS else
        f"The sheet has more than {EXCEL_MAX_CELLS:,} cells; Excel sheets are read up to that many. "
        "Save the sheet as CSV, which is read up to 60 million cells."
    )
    if declared > EXCEL_MAX_CELLS:
        raise too_many

    class Parser(WorkSheetParser):
        def parse_cell(self, element):
            cell = super().parse_cell(element)
            if cell["value"] is None and element.find(FORMULA_TAG) is not None:
                cell["data_type"] = "formula"  # a formula whose result was never saved
            return cell

    rows: list[dict[int, str | None]] = []
    formula_cells: list[tuple[int, int]] = []
    error_cells = 0
    width = 0
    try:
        with book._archive.open(sheet._worksheet_path) as stream:
            parser = Parser(stream, sheet._shared_strings, data_only=True, epoch=book.epoch,
                            date_formats=book._date_formats, timedelta_formats=book._timedelta_formats)
            for _, cells in parser.parse():
                row: dict[int, str | None] = {}
                for cell in cells:
                    column = cell["column"]
                    if cell["data_type"] == "formula":
                        formula_cells.append((len(rows), column))
                        row[column] = None
                    elif cell["data_type"] == "e" or cell["value"] in EXCEL_ERRORS:
                        error_cells += 1
                        row[column] = None
                    elif cell["value"] is not None:
                        row[column] = _excel_text(cell["value"])
                if not row:
                    continue  # a blank row (a row of formulas without results is kept)
                width = max(width, max(row))
                if width > max_columns:
                    raise DataFileError(
                        f"The sheet has {width:,} columns; the limit is {max_columns:,}. "
                        "Keep only the columns you need to assess."
                    )
                rows.append(row)
                if len(rows) * width > EXCEL_MAX_CELLS:
                    raise too_many
    except (DataFileError, FileTooLargeError):
        raise
    except Exception:
        raise DataFileError("The Excel file could not be read; it may be damaged. Save it as CSV.") from None
    finally:
        book.close()
    if not rows:
        raise DataFileError("The sheet is empty.")
    has_header = True if header is None else header
    names = [rows[0].get(j) or "" for j in range(1, width + 1)] if has_header else []
    body = rows[1:] if has_header else rows
    columns = [pa.chunked_array([pa.array([r.get(j) for r in body], pa.large_string())])
               for j in range(1, width + 1)]
    notes = []
    if formula_cells:
        header_row = 1 if has_header else 0
        in_body = [c for r, c in formula_cells if r >= header_row]
        names_of = names or [f"column {j}" for j in range(1, width + 1)]
        where = join_names(sorted({names_of[c - 1] or f"column {c}" for c in in_body})) if in_body else "the header"
        notes.append(
            f"{len(formula_cells):,} cells hold formulas whose results were never saved (columns {where}); "
            "they are read as missing. Open the file in a spreadsheet program and save it again to keep the results."
        )
    if error_cells:
        notes.append(f"{error_cells:,} cells hold spreadsheet errors such as #DIV/0!; they are read as missing.")
    return _Cells(names, columns, has_header, notes=tuple(notes))


def _parquet_text(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A typed Parquet column as the texts pandas gave its values (``str`` of each)."""
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        return column
    try:
        encoded = pc.dictionary_encode(column)
    except pa.ArrowNotImplementedError:  # nested values: one text per cell
        return pa.chunked_array([pa.array([None if v is None else str(v) for v in column.to_pylist()],
                                          pa.large_string())])
    dictionary = encoded.chunk(0).dictionary if encoded.num_chunks else pa.array([])
    texts = pa.array([str(v) for v in dictionary.to_pylist()], pa.large_string())
    return pa.chunked_array([texts.take(chunk.indices) for chunk in encoded.chunks], pa.large_string())


def _read_parquet(src: _Source, max_columns: int, max_cells: int) -> _Cells:
    """Refused from its metadata (records x leaf values per row group) before any data is read."""
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(src.arrow_input())
        meta = parquet.metadata
    except Exception:  # pyarrow raises several kinds for damaged files
        raise DataFileError("The Parquet file could not be opened; it may be damaged.") from None
    columns = len(parquet.schema_arrow)
    if columns > max_columns:
        raise DataFileError(
            f"The table has {columns:,} columns; the limit is {max_columns:,}. "
            "Keep only the columns you need to assess."
        )
    records = max(meta.num_rows, sum(meta.row_group(g).num_rows for g in range(meta.num_row_groups)))
    cells = sum(
        max(group.num_rows, group.column(j).num_values)
        for group in (meta.row_group(g) for g in range(meta.num_row_groups))
        for j in range(group.num_columns)
    )
    cells = max(cells, records * columns)
    if cells > max_cells:
        raise FileTooLargeError(
            f"The table has {records:,} records and {columns:,} columns ({cells:,} cells); "
            f"the limit is {max_cells:,} cells. Load a sample of the rows or the columns you need."
        )
    try:
        texts = [f.name for f in parquet.schema_arrow if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)]
        table = pq.ParquetFile(src.arrow_input(), read_dictionary=texts).read()  # text stays dictionary-coded
    except Exception:
        raise DataFileError("The Parquet file could not be read; it may be damaged.") from None
    return _Cells([str(n) for n in table.column_names], [_parquet_text(c) for c in table.columns], True)


# --- typing --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Typed:
    """One typed column and what was noticed on its distinct values."""

    values: object  # an Int64, float64 or string array of the column's length
    missing: int
    formula_like: bool = False
    text_bytes: int = 0
    quoted_values: bool = False  # some raw value holds a quote character
    markers: tuple[tuple[str | None, int], ...] = ()  # (marker, cells) read as missing; None: no value at all


def _matches_any(texts: pa.Array, pattern: str) -> bool:
    return bool(len(texts)) and bool(pc.any(pc.match_substring_regex(texts, pattern)).as_py())


def _matches_all(texts: pa.Array, pattern: str) -> bool:
    return bool(len(texts)) and bool(pc.all(pc.match_substring_regex(texts, pattern)).as_py())


_FORMULA_START = "^[" + re.escape("".join(FORMULA_PREFIXES)) + "]"


def _typed_column(column: pa.ChunkedArray, markers: pa.Array) -> _Typed:
    """Strip, mark missing values and convert one column of texts.

    Works on the column's distinct values only (dictionary encoding), then
    expands them with the codes. Numbers when every non-missing value converts
    without loss (no leading zeros, no more than 18 integer digits, finite),
    else text. A text column whose values need no stripping and hold no missing
    marker is kept as it was read, without a copy.
    """
    given_dictionary = pa.types.is_dictionary(column.type)
    encoded = column if given_dictionary else pc.dictionary_encode(column)
    if encoded.num_chunks == 0:
        encoded = pa.chunked_array([pa.DictionaryArray.from_arrays(pa.array([], pa.int32()), pa.array([], pa.string()))])
    if any(len(chunk.dictionary) != len(encoded.chunk(0).dictionary) for chunk in encoded.chunks):
        encoded = encoded.unify_dictionaries()  # dictionary_encode shares one; Parquet's may not
    raw = encoded.chunk(0).dictionary.cast(pa.large_string())
    codes = np.concatenate([
        (chunk.indices.fill_null(-1) if chunk.indices.null_count else chunk.indices).to_numpy(zero_copy_only=False)
        for chunk in encoded.chunks
    ])
    short = int(encoded.null_count)  # fields missing from short rows (reference reader) or Parquet nulls
    # every entry of a dictionary we built is used; a given one (Parquet) may hold more
    counts = np.bincount(codes[codes >= 0], minlength=len(raw)) if given_dictionary else None
    used = counts > 0 if counts is not None else np.ones(len(raw), bool)
    values = pc.utf8_trim_whitespace(raw)
    is_missing = pc.is_in(values, value_set=markers).to_numpy(zero_copy_only=False)
    present = used & ~is_missing
    texts = values.filter(pa.array(present))
    quoted_values = bool(len(raw)) and bool(pc.any(pc.match_substring(raw, '"')).as_py())
    kind = "text"
    if _matches_all(texts, _NUMBER.pattern):
        if _matches_all(texts, _INTEGER):
            if not _matches_any(texts, r"^[+-]?0\d") and not _matches_any(texts, r"^[+-]?0*\d{19,}$"):
                kind = "integer"
        elif np.isfinite(pc.cast(texts, pa.float64()).to_numpy(zero_copy_only=False)).all():
            kind = "float"
    any_missing = bool(is_missing.any()) or short > 0
    if short:
        codes = np.where(codes < 0, len(raw), codes)  # code -1 (no value at all) points past the end
    rows_missing = np.append(is_missing, True)[codes] if any_missing else None
    missing = int(np.count_nonzero(rows_missing)) if any_missing else 0
    markers = _markers_found(values, is_missing, codes) if any_missing else ()
    if kind == "integer":
        numbers = np.zeros(len(raw) + 1, dtype=np.int64)
        numbers[:-1][present] = pc.cast(pc.replace_substring_regex(texts, r"^\+", ""), pa.int64()).to_numpy()
        mask = rows_missing if any_missing else np.zeros(len(codes), bool)
        return _Typed(pd.arrays.IntegerArray(numbers[codes], mask), missing, quoted_values=quoted_values,
                      markers=markers)
    if kind == "float":
        numbers = np.full(len(raw) + 1, np.nan)
        numbers[:-1][present] = pc.cast(texts, pa.float64()).to_numpy(zero_copy_only=False)
        return _Typed(numbers[codes], missing, quoted_values=quoted_values, markers=markers)
    formula_like = _matches_any(texts, _FORMULA_START)
    if not given_dictionary and pc.all(pc.equal(values, raw)).as_py():
        # already final but for the missing values: the text is kept, without a copy
        strings = _without(column.cast(pa.large_string()), rows_missing) if any_missing else column.cast(pa.large_string())
        text_bytes = 0
    else:
        kept = pc.if_else(pa.array(is_missing), pa.scalar(None, pa.large_string()), values)
        strings = pa.chunked_array([kept.take(chunk.indices) for chunk in encoded.chunks], pa.large_string())
        lengths = pc.fill_null(pc.binary_length(kept), 0).to_numpy(zero_copy_only=False)
        text_bytes = int(np.dot(counts, lengths)) if counts is not None else 0
    return _Typed(pd.arrays.ArrowStringArray(strings), missing, formula_like, text_bytes, quoted_values, markers)


def _markers_found(values: pa.Array, is_missing: np.ndarray, codes: np.ndarray) -> tuple[tuple[str | None, int], ...]:
    """How many cells of each missing marker the column holds (None: cells without any
    value, code ``len(values)``), from the codes of its distinct values."""
    per_code = np.bincount(codes, minlength=len(values) + 1)
    found: dict[str | None, int] = {}
    for code in np.flatnonzero(np.append(is_missing, True) & (per_code > 0)):
        marker = values[int(code)].as_py() if code < len(values) else None
        found[marker] = found.get(marker, 0) + int(per_code[code])
    return tuple(found.items())


_NO_VALUE = {"parquet": "null {}", "excel": "{} without a value"}


def _missing_note(typed: Sequence[_Typed], names: Sequence[str], fmt: str) -> str | None:
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
    parts = [f"{count:,} {what.format('cells' if count != 1 else 'cell')} (in {join_names(where[what])})"
             for what, count in sorted(cells.items(), key=lambda item: -item[1])]
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"Read as missing values: {listed}."


def _header_note(cells: _Cells, names: Sequence[str]) -> str | None:
    """What the header guess decided, when it may surprise: made-up names, or names that look like numbers."""
    if not cells.guessed:
        return None
    if not cells.header:
        return (
            f"The first row was read as data, not as column names (it looks like the rows below it), so the "
            f"columns are called 'column 1' to 'column {len(names)}'; if it holds the names, say that the file has a header."
        )
    numeric = [str(n).strip() for n in cells.names if n is not None and _is_number(str(n))]
    if numeric:
        return (
            f"The first row was read as column names although {join_names(numeric)} "
            f"look{'s' if len(numeric) == 1 else ''} like {'a number' if len(numeric) == 1 else 'numbers'}; "
            "if it is data, say that the file has no header."
        )
    return None


def _without(column: pa.ChunkedArray, missing: np.ndarray) -> pa.ChunkedArray:
    """The text column with the ``missing`` rows set to null, its text buffers shared
    (only a new validity bitmap is built)."""
    chunks, start = [], 0
    for chunk in column.chunks:
        n = len(chunk)
        valid = ~missing[start:start + n]
        start += n
        if chunk.offset:  # the bitmap is read from the chunk's offset on
            valid = np.concatenate([np.ones(chunk.offset, bool), valid])
        bitmap = pa.array(valid).buffers()[1]
        chunks.append(pa.Array.from_buffers(chunk.type, n, [bitmap, *chunk.buffers()[1:]],
                                            null_count=n - int(np.count_nonzero(valid[chunk.offset:])),
                                            offset=chunk.offset))
    return pa.chunked_array(chunks, column.type)


def _clean_names(names: Sequence[object], header: bool, notes: list[str]) -> list[str]:
    """Column names: ``column j`` without a header, for blank names, and
    ``name (2)`` for a repeated name; each change is noted."""
    if not header:
        return [f"column {j + 1}" for j in range(len(names))]
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
) -> LoadedTable:
    """Read a table from bytes or a path; raises ``DataFileError`` with a clear sentence.

    ``header`` None detects whether the first row holds the column names (see
    ``_detect_header``); True or False says so (Parquet always has names).

    >>> load_table(b"39, State-gov\\n50, Private\\n").frame.columns.tolist()
    ['column 1', 'column 2']
    >>> load_table(b"zip,sex,2019\\n52001,M,3\\n52001,M,4\\n").frame.columns.tolist()
    ['zip', 'sex', '2019']
    """
    src = _open_source(source, name, max_bytes)
    if delimiter is not None and delimiter not in DELIMITERS and len(delimiter) != 1:
        raise DataFileError("The delimiter must be a single character such as , ; | or TAB.")
    fmt = _detect_format(src.head, src.name)
    limits = (max_columns, max_cells, max_bytes, missing_markers)
    if fmt == "excel":
        return _table(src.name, "excel", _read_excel(src, header, max_columns, max_bytes), *limits)
    if fmt == "parquet":
        return _table(src.name, "parquet", _read_parquet(src, max_columns, max_cells), *limits)
    try:
        text = _read_text_fast(src, delimiter, encoding, header, max_columns, max_cells, missing_markers)
        return _table(src.name, "csv", text, *limits)
    except _NeedsReference:
        text = _read_text_reference(src, delimiter, encoding, header, max_columns, missing_markers)
        return _table(src.name, "csv", text, *limits)


def _table(name: str, fmt: str, cells: _Cells, max_columns: int, max_cells: int, max_bytes: int,
           missing_markers: Sequence[str]) -> LoadedTable:
    """Check the limits, type every column (two at a time) and say what was noticed."""
    columns = cells.columns
    rows = len(columns[0]) if columns else 0
    if len(columns) > max_columns:
        raise DataFileError(
            f"The table has {len(columns):,} columns; the limit is {max_columns:,}. "
            "Keep only the columns you need to assess."
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

    def typed_column(j: int) -> _Typed:
        column, raw[j] = raw[j], None
        return _typed_column(column, markers)

    with ThreadPoolExecutor(max_workers=2) as pool:
        typed = list(pool.map(typed_column, range(len(raw))))
    if cells.fast and (any(t.quoted_values for t in typed) or any('"' in str(n) for n in cells.names)):
        # A quote inside a value: a literal one, an escaped one, or one after spaces (which
        # pandas reads as the start of a quoted value and pyarrow does not). With such quotes
        # an even count no longer proves every quoted value closed: the reference reader decides.
        raise _NeedsReference
    text_bytes = sum(t.text_bytes for t in typed)
    if text_bytes > 4 * max_bytes:
        raise _too_large("The text in the table takes", text_bytes, 4 * max_bytes)
    notes = list(cells.notes)
    names = _clean_names(cells.names, cells.header, notes)
    frame = pd.DataFrame({n: t.values for n, t in zip(names, typed)}, copy=False)
    notes.extend(note for note in (_header_note(cells, names), _missing_note(typed, names, fmt)) if note)
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
    safe.columns = [
        "'" + str(c) if str(c).startswith(CSV_INJECTION_PREFIXES) else str(c) for c in safe.columns
    ]
    for col in safe.columns:
        series = safe[col]
        if (series.dtype == object or pd.api.types.is_string_dtype(series)
                or isinstance(series.dtype, pd.CategoricalDtype)):
            text = series.astype("string")
            risky = text.str.startswith(CSV_INJECTION_PREFIXES).fillna(False)
            safe[col] = text.where(~risky, "'" + text)
    # RFC 4180 line ends: the csv writer then quotes a field holding a bare CR,
    # which would otherwise split the row in a spreadsheet
    return safe.to_csv(index=False, lineterminator="\r\n").encode("utf-8")
