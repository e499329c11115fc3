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
cut off while streaming).

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
import re
import warnings
import zipfile
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Sequence

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
    which the readers then read themselves instead of holding it whole."""

    name: str
    size: int
    head: bytes
    data: bytes | None = None
    path: Path | None = None

    def read(self) -> bytes:
        return self.data if self.data is not None else self.path.read_bytes()

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


def _not_valid_text(src: _Source, encoding: str) -> DataFileError:
    """The sentence for a file that does not decode as ``encoding``, with the first bad byte."""
    if encoding == "utf-16":
        return DataFileError("The file says it is UTF-16 text but is damaged.")
    try:
        src.read().decode(encoding)
        where = ""
    except UnicodeDecodeError as err:
        where = f" (first bad byte at position {err.start:,})"
    return DataFileError(f"The file is not valid {encoding} text{where}. Choose another encoding, for example latin-1.")


def _head_text(src: _Source, encoding: str | None) -> tuple[str, str]:
    """The decoded start of the file and the encoding the file is read with.

    The one given; else UTF-8 (with or without a BOM, whose bad bytes are replaced),
    UTF-16 with a BOM, or Latin-1 when the start is not UTF-8. A file whose start is
    UTF-8 but a later byte is not is read again as Latin-1 (see ``_read_text``).
    """
    if encoding:
        try:
            codec = codecs.lookup(encoding).name
        except LookupError:
            raise DataFileError(f"'{encoding}' is not a known text encoding. Use utf-8 or latin-1.") from None
        used = {"utf-8": "utf-8", "iso8859-1": "latin-1"}.get(codec, encoding)
    elif src.head.startswith(b"\xef\xbb\xbf"):
        used = "utf-8-sig"
    elif src.head.startswith((b"\xff\xfe", b"\xfe\xff")):
        used = "utf-16"
    else:
        _check_not_binary(src.head)
        used = "utf-8"
    decoder = codecs.getincrementaldecoder(used)(errors=_errors(used, encoding))
    try:
        return decoder.decode(src.head, final=src.size <= len(src.head)), used
    except UnicodeDecodeError:
        if encoding is None and used == "utf-8":
            return src.head.decode("latin-1"), "latin-1"
        raise _not_valid_text(src, used) from None


def _errors(used: str, given: str | None) -> str:
    """Bad bytes in a file that starts with a UTF-8 BOM are replaced; elsewhere they are an error."""
    return "replace" if used == "utf-8-sig" and given is None else "strict"


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
    guessed: bool = False  # whether the first row is a header was detected, not given


def _split_header(columns: list[pa.ChunkedArray], header: bool) -> tuple[list[str], list[pa.ChunkedArray]]:
    """Column names from the first row (or blanks), and the columns without it."""
    if not header:
        return [""] * len(columns), columns
    return [c[0].as_py() if len(c) else "" for c in columns], [c.slice(1) for c in columns]


@dataclass(frozen=True)
class _Scanned:
    """What one pass over a text file's bytes found."""

    lines: int  # LF and CR bytes plus one (0 when not counted): an upper bound on the records
    quoted: bool  # it holds a quote character
    cr_delimiter: bool  # a CR right before a delimiter, which pandas' parser can misread (_split_by_pyarrow)


def _scan(src: _Source, count_lines: bool, delimiter: str) -> _Scanned:
    """One pass over the bytes, a large file's two halves at once (reading and counting
    release the GIL, and the other core is idle until the parse starts)."""
    delimiter_code = ord(delimiter) if len(delimiter.encode()) == 1 else -1
    if src.size < _SCAN_SPLIT_BYTES:
        first, second = _scan_part(src, 0, None, count_lines, delimiter_code), _ScannedPart()
    else:
        with ThreadPoolExecutor(max_workers=2) as pool:
            first, second = pool.map(lambda bounds: _scan_part(src, *bounds, count_lines, delimiter_code),
                                     [(0, src.size // 2), (src.size // 2, None)])
    cr_delimiter = (first.cr_delimiter or second.cr_delimiter
                    or (first.ends_in_cr and second.starts_with == delimiter_code))  # where the halves meet
    return _Scanned(first.lines + second.lines + count_lines, first.quoted or second.quoted, cr_delimiter)


_SCAN_SPLIT_BYTES = 1 << 22  # below this a file is scanned in one part


@dataclass(frozen=True)
class _ScannedPart:
    """What the pass found in one part of the bytes."""

    lines: int = 0
    quoted: bool = False
    cr_delimiter: bool = False
    starts_with: int = -1  # the part's first byte (-1 when empty)
    ends_in_cr: bool = False


def _scan_part(src: _Source, start: int, stop: int | None, count_lines: bool, delimiter_code: int) -> _ScannedPart:
    """The bytes from ``start`` to ``stop`` (None: the end), block by block: line ends
    counted (when asked), a quote looked for, and a CR right before a delimiter."""
    lines, quoted, cr_delimiter, after_cr, starts_with = 0, False, False, False, -1
    for codes, block, first, last in _blocks(src, start, stop):
        if starts_with < 0:
            starts_with = int(codes[0])
        quoted = quoted or block.find(b'"', first, last) >= 0
        has_cr = block.find(b"\r", first, last) >= 0
        if has_cr or after_cr:  # a CR here, or at the end of the block before
            cr_delimiter = cr_delimiter or bool(after_cr and codes[0] == delimiter_code) or bool(
                np.any(codes[1:][codes[:-1] == 13] == delimiter_code))
        after_cr = bool(codes[-1] == 13)
        if count_lines:
            lines += int(np.count_nonzero(codes == 10)) + (int(np.count_nonzero(codes == 13)) if has_cr else 0)
    return _ScannedPart(lines, quoted, cr_delimiter, starts_with, after_cr)


def _blocks(src: _Source, start: int, stop: int | None) -> Iterator[tuple[np.ndarray, bytes | bytearray, int, int]]:
    """The bytes from ``start`` to ``stop`` (None: the end, however far a file has grown)
    in blocks: each as codes, and as the bytes object holding it with the block's bounds
    in it (bytes in memory are not copied; a file is read into one reused buffer, valid
    until the next block)."""
    size = 1 << 18
    if src.data is not None:
        codes = np.frombuffer(src.data, np.uint8)
        stop = len(codes) if stop is None else stop
        for first in range(start, stop, size):
            last = min(first + size, stop)
            yield codes[first:last], src.data, first, last
        return
    buffer = bytearray(size)
    codes = np.frombuffer(buffer, np.uint8)
    with src.path.open("rb", buffering=0) as handle:
        handle.seek(start)
        while (stop is None or start < stop) and (
                read := handle.readinto(memoryview(buffer)[:size if stop is None else min(size, stop - start)])):
            start += read
            yield codes[:read], buffer, 0, read


def _read_text(src: _Source, delimiter: str | None, encoding: str | None, header: bool | None,
               max_columns: int, max_cells: int, missing_markers: Sequence[str]) -> _Cells:
    """Every field as text: encoding, delimiter and header detected on the start of the
    file, then the whole file split into columns by pandas' C parser (``_parse_text``),
    or by pyarrow's reader where that is faster or pandas would misread it
    (``_split_by_pyarrow``).

    A record takes at least two bytes, so a file whose size keeps it far below the cell
    limit is parsed at once; a larger one has its lines counted first (an upper bound on
    its records) and is parsed in parts, refused as soon as it passes the limit, only
    when the count says it might.
    """
    text, used_encoding = _head_text(src, encoding)
    if not text.strip():  # a blank start of a larger file: detect on the whole text
        text = src.read().decode(used_encoding, errors="replace")
        if not text.strip():
            raise DataFileError("The file is empty.")
    used_delimiter = delimiter or _detect_delimiter(text)
    width = _check_width(text, used_delimiter, max_columns)
    has_header = _detect_header(_sample_rows(text, used_delimiter), missing_markers) if header is None else header
    scanned = _scan(src, (src.size // 2 + 1) * width > max_cells, used_delimiter)
    cut = scanned.lines and (scanned.lines - has_header) * width > max_cells
    try:
        columns = None
        if not cut and (scanned.cr_delimiter or (src.data is not None and not scanned.quoted)):
            columns = _split_by_pyarrow(src, used_delimiter, used_encoding, max_columns, scanned.quoted)
        if columns is None:
            columns = _parse_text(src, used_delimiter, used_encoding, _errors(used_encoding, encoding),
                                  scanned.quoted, max_cells if cut else None, has_header, width)
    except UnicodeDecodeError:
        if encoding is None and used_encoding == "utf-8":  # UTF-8 at the start only
            return _read_text(src, delimiter, "latin-1", header, max_columns, max_cells, missing_markers)
        raise _not_valid_text(src, used_encoding) from None
    names, columns = _split_header(columns, has_header)
    return _Cells(names, columns, has_header, used_delimiter, used_encoding, guessed=header is None)


def _check_width(text: str, delimiter: str, max_columns: int) -> int:
    first_line = re.split(r"\r\n|\r|\n", text.lstrip("\ufeff").lstrip(), maxsplit=1)[0]
    width = first_line.count(delimiter) + 1
    if width > max_columns:
        raise DataFileError(
            f"The table has {width:,} columns; the limit is {max_columns:,}. "
            "Keep only the columns you need to assess."
        )
    return width


def _read_pool() -> pa.MemoryPool:
    """jemalloc for pyarrow's CSV reader where pyarrow has it: it hands freed blocks back
    to the system, so the reader's working buffers do not stay in the peak (mimalloc, the
    default, keeps them: about 90 MB more at 10^6 records)."""
    try:
        return pa.jemalloc_memory_pool()
    except (NotImplementedError, pa.ArrowNotImplementedError):
        return pa.default_memory_pool()


_READ_POOL = _read_pool()


def _split_by_pyarrow(src: _Source, delimiter: str, encoding: str, max_columns: int,
                      quoted: bool) -> list[pa.ChunkedArray] | None:
    """The columns split by pyarrow's reader, or None when pandas must parse the file.

    It reads bytes in memory that hold no quote on both cores (pandas parses bytes on
    one; a file on disk it parses on all), and any file where a blank line ends in a
    lone CR right before a delimiter (pandas' parser drops that delimiter: ``a,b\\n\\r,1``
    gives the record ``1,`` instead of ``,1``). Without quotes a field is the text
    between two delimiters, so both readers split alike, except on rows pandas reads
    and pyarrow refuses: a short row (pandas fills it) or a line of spaces (pandas skips
    it; in a table of one column pyarrow reads it as a value, which is looked for). With
    quotes they also differ where a value then holds a quote character (a quote after a
    space opens a quoted value for pandas only) or a quote is never closed (pandas
    refuses the file). In those cases, and for text that is not UTF-8 or Latin-1, this
    returns None.
    """
    if encoding not in ("utf-8", "utf-8-sig", "latin-1") or (quoted and src.read().count(b'"') % 2):
        return None  # an odd number of quotes: one never closed, which pyarrow would read to the end
    read = pa_csv.ReadOptions(autogenerate_column_names=True, block_size=1 << 22,
                              encoding="latin1" if encoding == "latin-1" else "utf8")
    parse = pa_csv.ParseOptions(delimiter=delimiter, quote_char='"' if quoted else False,
                                newlines_in_values=quoted, ignore_empty_lines=True)
    convert = pa_csv.ConvertOptions(column_types={f"f{j}": pa.large_string() for j in range(max_columns + 1)},
                                    strings_can_be_null=False, quoted_strings_can_be_null=False)
    try:
        columns = pa_csv.read_csv(src.arrow_input(), read, parse, convert, memory_pool=_READ_POOL).columns
    except pa.ArrowInvalid:
        return None
    if len(columns) == 1:
        values = pc.unique(columns[0])
        if pc.any(pc.and_(pc.utf8_is_space(values), pc.greater(pc.utf8_length(values), 0))).as_py():
            return None
    if quoted and any(pc.any(pc.match_substring(c, '"')).as_py() for c in columns):
        return None  # a quote read as part of a value, where pandas may have opened a quoted one
    return columns


def _parse_text(src: _Source, delimiter: str, encoding: str, errors: str, quoted: bool,
                max_cells: int | None, header: bool, width: int) -> list[pa.ChunkedArray]:
    """Every cell as an Arrow string exactly as written, by pandas' C parser: no header
    handling (names are taken by the caller), no missing values (typing decides),
    straight from the file or the bytes. With ``max_cells`` the file is parsed in parts
    of at most ``max_cells`` cells of ``width`` fields and refused as soon as its records
    (after the ``header`` row) pass the limit, so at most one part past it is read.

    Spaces after a delimiter are skipped when the file holds a quote, so that
    ``1, "a, b"`` is two values. Without quotes skipping changes nothing typing would not
    strip anyway, and parsing is faster without it.
    """
    options = dict(
        sep=delimiter, header=None, index_col=False, dtype=pd.ArrowDtype(pa.large_string()),
        keep_default_na=False, na_filter=False, skipinitialspace=quoted, skip_blank_lines=True,
        engine="c", encoding=encoding, encoding_errors=errors, compression=None,
    )
    source = io.BytesIO(src.data) if src.data is not None else src.path
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pd.errors.ParserWarning)
            if max_cells is None:
                return _columns(pd.read_csv(source, **options))
            parts, records = [], -int(header)
            part_records = max(1, min(1 << 18, max_cells // width))
            with pd.read_csv(source, chunksize=part_records, **options) as reader:
                for part in reader:
                    records += len(part)
                    if records * part.shape[1] > max_cells:
                        raise FileTooLargeError(
                            f"The table has more than {max_cells:,} cells, the limit. "
                            "Load a sample of the rows or the columns you need."
                        )
                    parts.append(part)
            return _columns(pd.concat(parts, ignore_index=True))
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


def _columns(frame: pd.DataFrame) -> list[pa.ChunkedArray]:
    """The Arrow string columns behind a frame parsed into them (not copied)."""
    columns = (pa.array(frame.iloc[:, j].array) for j in range(frame.shape[1]))
    return [column if isinstance(column, pa.ChunkedArray) else pa.chunked_array([column]) for column in columns]


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
    markers: tuple[tuple[str | None, int], ...] = ()  # (marker, cells) read as missing; None: no value at all


def _matches_any(texts: pa.Array, pattern: str) -> bool:
    return bool(len(texts)) and bool(pc.any(pc.match_substring_regex(texts, pattern)).as_py())


def _matches_all(texts: pa.Array, pattern: str) -> bool:
    return bool(len(texts)) and bool(pc.all(pc.match_substring_regex(texts, pattern)).as_py())


_FORMULA_START = "^[" + re.escape("".join(FORMULA_PREFIXES)) + "]"
_PLAIN_WHOLE_NUMBER = re.compile(r"-?[1-9]\d{0,17}|0")
_FEW_MARKERS = 3  # up to this many distinct missing texts, a text column's marker cells are found by comparing
_TEN_TO_THE = 10 ** np.arange(1, 19, dtype=np.int64)


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
    if (not len(column) or column.null_count or pa.types.is_dictionary(column.type)
            or not _PLAIN_WHOLE_NUMBER.fullmatch(column[0].as_py())):  # a text column fails here, cheaply
        return None
    try:
        numbers = pc.cast(column, pa.int64()).to_numpy()
    except pa.ArrowInvalid:
        return None
    if numbers.min() <= -_TEN_TO_THE[-1] or numbers.max() >= _TEN_TO_THE[-1]:
        return None  # 19 digits: kept as text
    negative = int(np.count_nonzero(numbers < 0))
    magnitude = np.abs(numbers) if negative else numbers
    largest = int(magnitude.max())
    # a number's digits: one, and one more for each power of ten it reaches; a minus sign is one more
    digits = len(numbers) + sum(int(np.count_nonzero(magnitude >= power))
                                for power in _TEN_TO_THE[_TEN_TO_THE <= largest])
    return numbers if _text_bytes(column) == digits + negative else None


def _text_bytes(column: pa.ChunkedArray) -> int:
    """The bytes of text in a (large_)string column, read off each chunk's offsets (no pass over the cells)."""
    total = 0
    for chunk in column.chunks:
        if len(chunk):
            offsets = np.frombuffer(chunk.buffers()[1], np.int64 if pa.types.is_large_string(chunk.type) else np.int32)
            total += int(offsets[chunk.offset + len(chunk)]) - int(offsets[chunk.offset])
    return total


def _typed_column(column: pa.ChunkedArray, markers: pa.Array) -> _Typed:
    """Strip, mark missing values and convert one column of texts.

    A column of plain whole numbers is parsed at once (``_whole_numbers``). Any
    other is judged on its distinct values: stripped, checked against the missing
    markers and converted, then expanded with each cell's code (a column of 10^6
    records with 10 values costs 10 conversions). Numbers when every non-missing
    value converts without loss (no leading zeros, no more than 18 integer digits,
    finite), else text. A text column whose values need no stripping is kept as it
    was read, without a copy: its missing values are nulled through a new validity
    bitmap.
    """
    whole = _whole_numbers(column)
    if whole is not None:
        return _Typed(pd.arrays.IntegerArray(whole, np.zeros(len(whole), bool)), 0)
    given_dictionary = pa.types.is_dictionary(column.type)
    if given_dictionary:  # Parquet's text: codes come with it; its dictionary may hold unused values
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
    if _matches_all(texts, _NUMBER.pattern):
        if _matches_all(texts, _INTEGER):
            if not _matches_any(texts, r"^[+-]?0\d") and not _matches_any(texts, r"^[+-]?0*\d{19,}$"):
                kind = "integer"
        elif np.isfinite(pc.cast(texts, pa.float64()).to_numpy(zero_copy_only=False)).all():
            kind = "float"
    any_missing = bool(is_missing.any()) or short > 0
    untouched = kind == "text" and not given_dictionary and pc.all(pc.equal(values, raw)).as_py()
    if untouched and not any_missing:
        # already final: the text is kept as read, and no cell needs its code
        return _Typed(pd.arrays.ArrowStringArray(column.cast(pa.large_string())), 0,
                      _matches_any(texts, _FORMULA_START))
    if untouched and np.count_nonzero(is_missing) <= _FEW_MARKERS:  # only the marker texts are compared
        marker_codes = np.flatnonzero(is_missing)
        masks, marker_counts = _marker_cells(column, [raw[int(code)] for code in marker_codes])
        counts = np.zeros(len(raw), np.int64)
        counts[marker_codes] = marker_counts
        kept = _without(column.cast(pa.large_string()), masks)
        return _Typed(pd.arrays.ArrowStringArray(kept), kept.null_count, _matches_any(texts, _FORMULA_START),
                      markers=_markers_found(values, is_missing, counts, short))
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
        return _Typed(pd.arrays.IntegerArray(numbers[codes], mask), missing, markers=found)
    if kind == "float":
        numbers = np.full(len(raw) + 1, np.nan)
        numbers[:-1][present] = pc.cast(texts, pa.float64()).to_numpy(zero_copy_only=False)
        return _Typed(numbers[codes], missing, markers=found)
    formula_like = _matches_any(texts, _FORMULA_START)
    if untouched:  # final but for the missing values
        kept = _without(column.cast(pa.large_string()), _by_chunk(column, rows_missing))
        return _Typed(pd.arrays.ArrowStringArray(kept), missing, formula_like, markers=found)
    kept = pc.if_else(pa.array(is_missing), pa.scalar(None, pa.large_string()), values)
    lengths = pc.fill_null(pc.binary_length(kept), 0).to_numpy(zero_copy_only=False)
    strings = pa.concat_arrays([kept, pa.nulls(1, pa.large_string())]).take(codes)  # code len(raw): no value
    return _Typed(pd.arrays.ArrowStringArray(pa.chunked_array([strings])), missing, formula_like,
                  int(np.dot(counts, lengths)), found)


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


def _markers_found(values: pa.Array, is_missing: np.ndarray, counts: np.ndarray,
                   short: int) -> tuple[tuple[str | None, int], ...]:
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
        yield pa.array(mask[start:start + len(chunk)])
        start += len(chunk)


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
    return _table(src.name, "csv", _read_text(src, delimiter, encoding, header, max_columns, max_cells,
                                              missing_markers), *limits)


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
