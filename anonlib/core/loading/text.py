"""Delimited text: encoding, delimiter and header detected on the head, then parsed by
pandas' C parser into Arrow strings (whole numbers read as numbers where that provably
changes nothing; large files scanned in two halves at once), quotes and odd line ends
handled, the width checked."""

from __future__ import annotations

import codecs
import csv
import re
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from ..errors import DataFileError, FileTooLargeError
from ..parallel import each
from .source import (
    DELIMITERS,
    HEAD_BYTES,
    MISSING_MARKERS,
    NUMBER,
    PLAIN_WHOLE_NUMBER,
    SAMPLE_LINES,
    Source,
    text_bytes,
    text_offsets,
    written_length,
)

# --- text: encoding, delimiter, header ----------------------------------------------


def _check_not_binary(head: bytes) -> None:
    sample = head[:65536]
    controls = sum(sample.count(bytes([b])) for b in range(1, 32) if b not in (9, 10, 13))
    if b"\x00" in sample or (sample and controls / len(sample) > 0.05):
        raise DataFileError("This looks like a binary file, not a text table. Upload CSV, TSV, Excel or Parquet.")


def _not_valid_text(src: Source, encoding: str) -> DataFileError:
    """The sentence for a file that does not decode as ``encoding``, with the first bad byte."""
    if encoding == "utf-16":
        return DataFileError("The file says it is UTF-16 text but is damaged.")
    try:
        src.read().decode(encoding)
        where = ""
    except UnicodeDecodeError as err:
        where = f" (first bad byte at position {err.start:,})"
    return DataFileError(f"The file is not valid {encoding} text{where}. Choose another encoding, for example latin-1.")


def _head_text(src: Source, encoding: str | None) -> tuple[str, str]:
    """The decoded start of the file and the encoding the file is read with.

    The one given; else UTF-8 (with or without a BOM, whose bad bytes are replaced),
    UTF-16 with a BOM, or Latin-1 when the start is not UTF-8. A file whose start is
    UTF-8 but a later byte is not is read again as Latin-1 (see ``read_text``).
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


# a UTF-8 sequence of two to four bytes: Latin-1 text holds one only as mojibake (Ã© for é)
_UTF8_SEQUENCE = re.compile(
    rb"[\xc2-\xdf][\x80-\xbf]|\xe0[\xa0-\xbf][\x80-\xbf]|[\xe1-\xec\xee\xef][\x80-\xbf]{2}"
    rb"|\xed[\x80-\x9f][\x80-\xbf]|\xf0[\x90-\xbf][\x80-\xbf]{2}|[\xf1-\xf3][\x80-\xbf]{3}|\xf4[\x80-\x8f][\x80-\xbf]{2}"
)
_NON_ASCII_LINE = re.compile(rb"[^\n]*[\x80-\xff][^\n]*")
_LINES_NAMED = 10  # a note names at most this many lines


def _mixed_encodings(src: Source) -> tuple[Source, str] | None:
    """For a file that is not UTF-8 throughout: when some of its lines are UTF-8 text with accents
    and others are not UTF-8 (a file pasted together from two systems), the file with every line
    in UTF-8 (the others read as Latin-1) and the note naming the lines read each way; None when
    no line is UTF-8 beyond ASCII (a Latin-1 file, read as Latin-1).

    >>> fixed, note = _mixed_encodings(Source("m.csv", 30, b"", data="city\\nZürich\\n".encode() + b"Z\\xfcrich\\n"))
    >>> fixed.data.decode("utf-8").splitlines(), note
    (['city', 'Zürich', 'Zürich'], 'The file mixes two text encodings: line 3 is not UTF-8 like line 2, so it was read as Latin-1 (line 3: Zürich); check those rows.')
    """
    data = src.read()
    if _UTF8_SEQUENCE.search(data) is None:
        return None
    parts, utf8, latin1, at = [], [], [], 0
    line, counted = 1, 0
    for match in _NON_ASCII_LINE.finditer(data):
        line += data.count(b"\n", counted, match.start())
        counted = match.start()
        try:
            match[0].decode("utf-8")
            utf8.append(line)
        except UnicodeDecodeError:
            latin1.append(line)
            parts += [data[at : match.start()], match[0].decode("latin-1").encode("utf-8")]
            at = match.end()
    if not utf8 or not latin1:
        return None
    fixed = b"".join([*parts, data[at:]])
    first = latin1[0]
    sample = data.split(b"\n", first)[first - 1].decode("latin-1").strip()[:40]
    note = (
        f"The file mixes two text encodings: {_lines(latin1)} {'is' if len(latin1) == 1 else 'are'} not UTF-8 like "
        f"{_lines(utf8)}, so {'it was' if len(latin1) == 1 else 'they were'} read as Latin-1 (line {first:,}: "
        f"{sample}); check those rows."
    )
    return Source(src.name, len(fixed), fixed[:HEAD_BYTES], data=fixed), note


def _lines(numbers: list[int]) -> str:
    """``line 3``, ``lines 2, 5 and 9``, ``lines 2, 5, ... (1,200 lines)``."""
    if len(numbers) == 1:
        return f"line {numbers[0]:,}"
    if len(numbers) > _LINES_NAMED:
        return f"{len(numbers):,} lines ({', '.join(f'{n:,}' for n in numbers[:_LINES_NAMED])}, ...)"
    return "lines " + ", ".join(f"{n:,}" for n in numbers[:-1]) + f" and {numbers[-1]:,}"


def _errors(used: str, given: str | None) -> str:
    """Bad bytes in a file that starts with a UTF-8 BOM are replaced; elsewhere they are an error."""
    return "replace" if used == "utf-8-sig" and given is None else "strict"


def _sample_rows(text: str, delimiter: str) -> list[list[str]]:
    lines = [ln for ln in text[:HEAD_BYTES].splitlines()[:SAMPLE_LINES] if ln.strip()]
    try:
        return list(csv.reader(lines, delimiter=delimiter, skipinitialspace=True))
    except csv.Error:
        return []


def detect_delimiter(text: str) -> str:
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


def is_number(text: str) -> bool:
    return bool(NUMBER.match(text.strip()))


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
        return bool(rows) and not any(is_number(c) for c in rows[0] if c.strip())
    first, rest = rows[0], rows[1:]
    cells = [c.strip() for c in first]
    if all(not c for c in cells):
        return False
    markers = set(missing_markers)
    for j, cell in enumerate(cells):
        below = [v for v in (r[j].strip() for r in rest if j < len(r)) if v and v not in markers]
        if not cell or not below:
            continue
        numeric_share = sum(is_number(v) for v in below) / len(below)
        if is_number(cell):
            if numeric_share == 0 and len(below) >= 2:
                return True
        elif numeric_share >= 0.8:
            return True
        if cell in set(below):
            return False
    return not any(is_number(c) for c in cells if c)


# --- text: parsing --------------------------------------------------------------------


@dataclass(frozen=True)
class Cells:
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
    cr: bool = False  # it holds a CR byte
    crs: int = 0  # its CR bytes
    lone_cr: bool = False  # a CR not followed by an LF (a line end ``_parse_numbers`` does not count on)


def _scan(src: Source, count_lines: bool, delimiter: str) -> _Scanned:
    """One pass over the bytes, a large file's two halves at once (reading and counting
    release the GIL, and the other core is idle until the parse starts)."""
    delimiter_code = ord(delimiter) if len(delimiter.encode()) == 1 else -1
    if src.size < _SCAN_SPLIT_BYTES:
        first, second = _scan_part(src, 0, None, count_lines, delimiter_code), _ScannedPart()
    else:
        first, second = each(
            lambda bounds: _scan_part(src, *bounds, count_lines, delimiter_code),
            [(0, src.size // 2), (src.size // 2, None)],
            elements=src.size // 2,
        )
    cr_delimiter = (
        first.cr_delimiter or second.cr_delimiter or (first.ends_in_cr and second.starts_with == delimiter_code)
    )  # where the halves meet
    crs = first.crs + second.crs
    crlf = first.crlf + second.crlf + (first.ends_in_cr and second.starts_with == 10)
    return _Scanned(
        first.lines + second.lines + count_lines,
        first.quoted or second.quoted,
        cr_delimiter,
        first.cr or second.cr,
        crs,
        crlf != crs,
    )


_SCAN_SPLIT_BYTES = 1 << 22  # below this a file is scanned in one part


@dataclass(frozen=True)
class _ScannedPart:
    """What the pass found in one part of the bytes."""

    lines: int = 0
    quoted: bool = False
    cr_delimiter: bool = False
    starts_with: int = -1  # the part's first byte (-1 when empty)
    ends_in_cr: bool = False
    cr: bool = False  # a CR anywhere in the part
    crs: int = 0  # its CR bytes
    crlf: int = 0  # its CR bytes an LF follows (in the part)


def _scan_part(src: Source, start: int, stop: int | None, count_lines: bool, delimiter_code: int) -> _ScannedPart:
    """The bytes from ``start`` to ``stop`` (None: the end), block by block: line ends
    counted (when asked), a quote looked for, a CR right before a delimiter, and the CRs
    and those an LF follows (CRLF line ends)."""
    lines, quoted, cr_delimiter, after_cr, starts_with, cr = 0, False, False, False, -1, False
    crs = crlf = 0
    for codes, block, first, last in _blocks(src, start, stop):
        if starts_with < 0:
            starts_with = int(codes[0])
        quoted = quoted or block.find(b'"', first, last) >= 0
        has_cr = block.find(b"\r", first, last) >= 0
        cr = cr or has_cr
        if after_cr:  # the block before ended in a CR
            crlf += int(codes[0] == 10)
        block_crs = 0
        if has_cr or after_cr:  # a CR here, or at the end of the block before
            at_cr = codes[:-1] == 13
            before = codes[1:][at_cr]  # the byte after each CR but the block's last
            block_crs = int(np.count_nonzero(at_cr)) + int(codes[-1] == 13)
            cr_delimiter = (
                cr_delimiter or bool(after_cr and codes[0] == delimiter_code) or bool(np.any(before == delimiter_code))
            )
            crlf += int(np.count_nonzero(before == 10))
        crs += block_crs
        after_cr = bool(codes[-1] == 13)
        if count_lines:
            lines += int(np.count_nonzero(codes == 10)) + block_crs
    return _ScannedPart(lines, quoted, cr_delimiter, starts_with, after_cr, cr, crs, crlf)


def _blocks(src: Source, start: int, stop: int | None) -> Iterator[tuple[np.ndarray, bytes | bytearray, int, int]]:
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
            read := handle.readinto(memoryview(buffer)[: size if stop is None else min(size, stop - start)])
        ):
            start += read
            yield codes[:read], buffer, 0, read


def read_text(
    src: Source,
    delimiter: str | None,
    encoding: str | None,
    header: bool | None,
    max_columns: int,
    max_cells: int,
    missing_markers: Sequence[str],
) -> Cells:
    """Every field as text: encoding, delimiter and header detected on the start of the
    file, then the whole file split into columns by pandas' C parser (``_parse_text``),
    or by pyarrow's reader where that is faster or pandas would misread it
    (``_split_by_pyarrow``); in a plain UTF-8 file, columns of whole numbers are read as
    numbers by pandas where the file's size proves each written plainly (``_parse_numbers``).

    A record takes at least two bytes, so a file whose size keeps it far below the cell
    limit is parsed at once; a larger one has its lines counted first (an upper bound on
    its records) and is parsed in parts, refused as soon as it passes the limit, only
    when the count says it might.
    """
    text, used_encoding = _head_text(src, encoding)
    if encoding is None and used_encoding == "latin-1":  # its start is not UTF-8: maybe only some lines
        mixed = _mixed_encodings(src)
        if mixed is not None:
            return _noted(
                read_text(mixed[0], delimiter, "utf-8", header, max_columns, max_cells, missing_markers), mixed[1]
            )
    if not text.strip():  # a blank start of a larger file: detect on the whole text
        text = src.read().decode(used_encoding, errors="replace")
        if not text.strip():
            raise DataFileError("The file is empty.")
    used_delimiter = delimiter or detect_delimiter(text)
    width = _check_width(text, used_delimiter, max_columns)
    has_header = _detect_header(_sample_rows(text, used_delimiter), missing_markers) if header is None else header
    scanned = _scan(src, (src.size // 2 + 1) * width > max_cells, used_delimiter)
    cut = scanned.lines and (scanned.lines - has_header) * width > max_cells
    try:
        columns = None
        if not cut and (scanned.cr_delimiter or (src.data is not None and not scanned.quoted)):
            columns = _split_by_pyarrow(src, used_delimiter, used_encoding, max_columns, scanned.quoted)
        if columns is None and not cut and not scanned.quoted and not scanned.lone_cr and used_encoding == "utf-8":
            parsed = _parse_numbers(src, used_delimiter, text, has_header, width, scanned.crs)
            if parsed is not None:
                return Cells(*parsed, has_header, used_delimiter, used_encoding, guessed=header is None)
        if columns is None:
            columns = _parse_text(
                src,
                used_delimiter,
                used_encoding,
                _errors(used_encoding, encoding),
                scanned.quoted,
                max_cells if cut else None,
                has_header,
                width,
            )
    except UnicodeDecodeError:
        if encoding is None and used_encoding == "utf-8":  # UTF-8 at the start only
            mixed = _mixed_encodings(src)
            if mixed is not None:  # and further on: other lines are in another encoding
                cells = read_text(mixed[0], delimiter, "utf-8", header, max_columns, max_cells, missing_markers)
                return _noted(cells, mixed[1])
            return read_text(src, delimiter, "latin-1", header, max_columns, max_cells, missing_markers)
        raise _not_valid_text(src, used_encoding) from None
    names, columns = _split_header(columns, has_header)
    return Cells(names, columns, has_header, used_delimiter, used_encoding, guessed=header is None)


def _noted(cells: Cells, note: str) -> Cells:
    """The cells of a file of mixed encodings: the note said, and no encoding recorded (a recipe
    replaying it detects it again, as here)."""
    return replace(cells, notes=(*cells.notes, note), encoding=None)


def _check_width(text: str, delimiter: str, max_columns: int) -> int:
    first_line = re.split(r"\r\n|\r|\n", text.lstrip("\ufeff").lstrip(), maxsplit=1)[0]
    width = first_line.count(delimiter) + 1
    if width > max_columns:
        raise DataFileError(
            f"The table has {width:,} columns; the limit is {max_columns:,}. Keep only the columns you need to assess."
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


def _split_by_pyarrow(
    src: Source, delimiter: str, encoding: str, max_columns: int, quoted: bool
) -> list[pa.ChunkedArray] | None:
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
    read = pa_csv.ReadOptions(
        autogenerate_column_names=True, block_size=1 << 22, encoding="latin1" if encoding == "latin-1" else "utf8"
    )
    parse = pa_csv.ParseOptions(
        delimiter=delimiter, quote_char='"' if quoted else False, newlines_in_values=quoted, ignore_empty_lines=True
    )
    convert = pa_csv.ConvertOptions(
        column_types={f"f{j}": pa.large_string() for j in range(max_columns + 1)},
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
    )
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


def _parse_text(
    src: Source,
    delimiter: str,
    encoding: str,
    errors: str,
    quoted: bool,
    max_cells: int | None,
    header: bool,
    width: int,
) -> list[pa.ChunkedArray]:
    """Every cell as an Arrow string exactly as written, by pandas' C parser: no header
    handling (names are taken by the caller), no missing values (typing decides),
    straight from the file or the bytes. With ``max_cells`` the file is parsed in parts
    of at most ``max_cells`` cells of ``width`` fields and refused as soon as its records
    (after the ``header`` row) pass the limit, so at most one part past it is read.

    Spaces after a delimiter are skipped when the file holds a quote, so that
    ``1, "a, b"`` is two values. Without quotes skipping changes nothing typing would not
    strip anyway, and parsing is faster without it.
    """
    options = {**_cells_as_written(delimiter, encoding, errors, quoted), "dtype": pd.ArrowDtype(pa.large_string())}
    source = src.pandas_input()
    with _pandas_errors():
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


def _cells_as_written(delimiter: str, encoding: str, errors: str, quoted: bool) -> dict[str, object]:
    """pandas' C parser's options for both parses: no header row (names are taken by the
    caller), no missing values (typing decides), blank lines skipped, spaces after a
    delimiter skipped only in a file with quotes (``_parse_text``)."""
    return dict(
        sep=delimiter,
        header=None,
        index_col=False,
        keep_default_na=False,
        na_filter=False,
        skipinitialspace=quoted,
        skip_blank_lines=True,
        engine="c",
        encoding=encoding,
        encoding_errors=errors,
        compression=None,
    )


@contextmanager
def _pandas_errors() -> Iterator[None]:
    """pandas' parser with its warnings silenced and its errors said in the loader's sentences."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pd.errors.ParserWarning)
            yield
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
                'A quoted value is never closed (a " without its partner). Fix the quoting in the file.'
            ) from None
        raise DataFileError(f"The file could not be read as a table: {message.splitlines()[0]}") from None


def _parse_numbers(
    src: Source, delimiter: str, text: str, header: bool, width: int, crs: int = 0
) -> tuple[list[str], list[pa.ChunkedArray | np.ndarray]] | None:
    """The column names and the columns of a UTF-8 file without quotes or CRs but those of
    CRLF line ends (``crs`` of them), parsed by pandas' C parser with every column's type left
    to it: whole-number columns come back as int64 arrays (typed as they are,
    ``columns.typed_values``), text columns as Arrow strings. None when the sampled lines show no whole-number column, or a column whose
    text pandas would not keep (decimals, leading zeros, true/false), or the first line is
    blank: then every column is parsed as text.

    Reading numbers at once saves the parser writing them as text and the typing reading
    them back (Adult resampled to 10^6 records: 0.34 s instead of 0.40; naming the text
    columns' type instead of letting pandas infer it makes its parse slower than that). But
    pandas reads ``007``, ``+7`` and `` 7`` as 7, which the loader keeps as text (or
    strips), so the numbers are kept only when the file's size proves that every cell of
    them is written the plain way (``source.written_length``). Without quotes and CRs (but
    the CR of a CRLF line end, as Windows writes files) a file's bytes are its header line,
    each cell's text, a delimiter between cells, an LF after each record and those CRs, and
    nothing is counted that is not there: a cell is never shorter than its number's plain
    writing, blank lines and spaces only add bytes, and a short row, which lacks
    delimiters, leaves an empty text in the last column (then the count is not trusted). So the sizes agree exactly when every number is written plainly;
    otherwise, and for a column pandas did not read as int64 or as text, those columns are
    read again as text.
    """
    first_line = text.split("\n", 1)[0].removesuffix("\r")  # its CR is counted with the others (crs)
    if not first_line.strip() or "\n" not in text:
        return None
    sample = _sample_rows(text, delimiter)[int(header) :]
    if not sample:
        return None
    read_as = [_read_as([row[j] if j < len(row) else "" for row in sample]) for j in range(width)]
    if "number" not in read_as or "other" in read_as:
        return None  # nothing to gain, or columns whose text pandas would not keep
    # No names are given: a row wider than the first is then an error, not cut (the width is checked below).
    options = {**_cells_as_written(delimiter, "utf-8", "strict", False), "skiprows": int(header)}

    with _pandas_errors():  # every column's type inferred: pandas' fastest path (naming types is slower)
        frame = pd.read_csv(src.pandas_input(), **options)
    if not len(frame) or frame.shape[1] != width:
        return None  # the parse of every column as text says what is wrong
    columns: list[pa.ChunkedArray | np.ndarray | None] = []
    for j in range(width):
        series = frame[j]
        if series.dtype == np.int64:
            columns.append(series.to_numpy())
        elif isinstance(series.dtype, (pd.ArrowDtype, pd.StringDtype)):
            columns.append(_arrow_text(series).cast(pa.large_string()))
        else:  # floats, booleans, numbers past int64: their text is gone
            columns.append(None)
    del frame
    again = [j for j, c in enumerate(columns) if c is None]
    numbers = [j for j, c in enumerate(columns) if isinstance(c, np.ndarray)]
    if numbers and not _written_plainly(src, columns, header, first_line, crs):
        again.extend(numbers)
    if again:
        with _pandas_errors():
            frame = pd.read_csv(src.pandas_input(), usecols=again, dtype=pd.ArrowDtype(pa.large_string()), **options)
        for j in again:
            columns[j] = _arrow_text(frame[j])
    return (first_line.split(delimiter) if header else [""] * width), columns


_BOOLEAN_WORDS = {"true", "false"}  # pandas reads these as booleans


def _read_as(cells: list[str]) -> str:
    """How pandas would read a column whose sampled cells are ``cells`` (``_parse_numbers``):
    as ``"number"`` when each is a plain whole number, as ``"text"`` when one is neither a
    number nor a boolean word (it keeps the text), else ``"other"`` (numbers written another
    way, booleans: their text would be lost)."""
    if all(PLAIN_WHOLE_NUMBER.fullmatch(cell) for cell in cells):
        return "number"
    if any(cell and not is_number(cell) and cell.strip().lower() not in _BOOLEAN_WORDS for cell in cells):
        return "text"
    return "other"


def _written_plainly(
    src: Source, columns: list[pa.ChunkedArray | np.ndarray | None], header: bool, first_line: str, crs: int = 0
) -> bool:
    """Whether the file's size is exactly what its cells take with every number written
    the plain way (``_parse_numbers``; ``crs``: the CRs of its CRLF line ends); the columns
    are measured on both cores."""
    if any(c is None for c in columns) or (isinstance(columns[-1], pa.ChunkedArray) and _has_empty(columns[-1])):
        return False  # an empty last cell: maybe a short row, whose missing delimiters would hide bytes
    lengths = each(
        lambda c: written_length(c) if isinstance(c, np.ndarray) else text_bytes(c), columns, elements=len(columns[0])
    )
    if any(length is None for length in lengths):
        return False
    records = len(columns[0])
    lines = records + int(header) - (0 if _ends_in_lf(src) else 1)
    header_bytes = len(first_line.encode("utf-8")) if header else 0
    return src.size == header_bytes + sum(lengths) + records * (len(columns) - 1) + lines + crs


def _has_empty(column: pa.ChunkedArray) -> bool:
    """Whether a (large_)string column holds an empty text, read off its offsets."""
    for chunk in column.chunks:
        if len(chunk):
            offsets = text_offsets(chunk)
            if (offsets[1:] == offsets[:-1]).any():
                return True
    return False


def _ends_in_lf(src: Source) -> bool:
    """Whether the file's last byte is an LF (its last record has a line end to count)."""
    if src.data is not None:
        return src.data.endswith(b"\n")
    with src.path.open("rb") as handle:
        handle.seek(max(src.size - 1, 0))
        return handle.read(1) == b"\n"


def _columns(frame: pd.DataFrame) -> list[pa.ChunkedArray]:
    """The Arrow string columns behind a frame parsed into them (not copied)."""
    return [_arrow_text(frame.iloc[:, j]) for j in range(frame.shape[1])]


def _arrow_text(series: pd.Series) -> pa.ChunkedArray:
    """The Arrow strings behind a text column pandas parsed (not copied)."""
    column = pa.array(series.array)
    return column if isinstance(column, pa.ChunkedArray) else pa.chunked_array([column])
