"""The loader's limits and markers, the table it returns, and the bytes: a file or bytes
opened within the size limit, gzip undone, the format told from the first bytes."""

from __future__ import annotations

import io
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from ..errors import DataFileError, FileTooLargeError

DEFAULT_MAX_BYTES = 200 * 1024 * 1024
DEFAULT_MAX_COLUMNS = 2_000
DEFAULT_MAX_CELLS = 60_000_000
# openpyxl parses about 75,000 cells per CPU second (bench_loading: 10^6 cells in 13 s): a
# million is seconds, not minutes; larger sheets are refused before parsing (see _sheet_cells)
EXCEL_MAX_CELLS = 1_000_000
# openpyxl reads a workbook's shared texts (xl/sharedStrings.xml) whole before the first cell: they
# are bounded before it is opened, by their unpacked size (64 MB: 1,000,000 texts of 50 characters
# and their tags) and their count (at most one per cell read), and every other part but the sheets
# (styles, workbook, relations; small in any real file) by their total size
EXCEL_TEXT_MAX_BYTES = 64 * 1024**2
EXCEL_PARTS_MAX_BYTES = 32 * 1024**2
MISSING_MARKERS = ("", "?", "NA", "N/A", "NaN", "nan", "NULL", "null")
DELIMITERS = (",", ";", "\t", "|")
FORMULA_PREFIXES = ("=", "+", "-", "@")
# OWASP CSV injection: a cell starting with any of these can be read as a formula
CSV_INJECTION_PREFIXES = (*FORMULA_PREFIXES, "\t", "\r")
EXCEL_ERRORS = ("#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#N/A", "#GETTING_DATA")
HEAD_BYTES = 262_144
SAMPLE_LINES = 200
NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
INTEGER = r"^[+-]?\d+$"
PLAIN_WHOLE_NUMBER = re.compile(r"-?[1-9]\d{0,17}|0")  # a whole number written the plain way, at most 18 digits
_TEN_TO_THE = 10 ** np.arange(1, 19, dtype=np.int64)
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
    missing_texts: dict[str, str] = field(default_factory=dict)  # per column: how it writes a missing value


def human_bytes(n: float) -> str:
    """A size in bytes, KB, MB or GB (binary units, one decimal).

    >>> human_bytes(340 * 1024**2)
    '340.0 MB'
    """
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n} bytes"  # pragma: no cover


def too_large(what: str, size: int, limit: int) -> FileTooLargeError:
    return FileTooLargeError(
        f"{what} {human_bytes(size)}; the limit is {human_bytes(limit)}. "
        "Load a sample of the rows or the columns you need."
    )


def written_length(numbers: np.ndarray) -> int | None:
    """The characters ``numbers`` take written the plain way (``PLAIN_WHOLE_NUMBER``: digits,
    a minus sign, no leading zero), or None when one has more than 18 digits (the loader
    keeps those as text). No other writing of a number is shorter, so texts whose total
    length equals this are each written the plain way.

    >>> written_length(np.array([30, -7, 0, 100]))
    8
    """
    if not len(numbers):
        return 0
    least, largest = int(numbers.min()), int(numbers.max())
    if least <= -_TEN_TO_THE[-1] or largest >= _TEN_TO_THE[-1]:
        return None
    negative = int(np.count_nonzero(numbers < 0)) if least < 0 else 0
    magnitude = np.abs(numbers) if negative else numbers
    largest = max(largest, -least)
    # a number's digits: one, and one more for each power of ten it reaches
    digits = len(numbers) + sum(
        int(np.count_nonzero(magnitude >= power)) for power in _TEN_TO_THE[_TEN_TO_THE <= largest]
    )
    return digits + negative


def text_bytes(column: pa.ChunkedArray) -> int:
    """The bytes of text in a (large_)string column, read off each chunk's offsets (no pass over the cells).

    >>> text_bytes(pa.chunked_array([["ab", "c"], ["é"]]))
    5
    """
    total = 0
    for chunk in column.chunks:
        if len(chunk):
            offsets = text_offsets(chunk)
            total += int(offsets[-1]) - int(offsets[0])
    return total


def text_offsets(chunk: pa.Array) -> np.ndarray:
    """Where each text of a (large_)string array starts in its data buffer, and where the last ends.

    >>> text_offsets(pa.array(["ab", "", "c"]).slice(1)).tolist()
    [2, 2, 3]
    """
    offsets = np.frombuffer(chunk.buffers()[1], np.int64 if pa.types.is_large_string(chunk.type) else np.int32)
    return offsets[chunk.offset : chunk.offset + len(chunk) + 1]


# --- the bytes ----------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
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

    def pandas_input(self) -> io.BytesIO | Path:
        """What pandas' parser reads: the path, or a fresh reader over the bytes (each parse its own)."""
        return io.BytesIO(self.data) if self.data is not None else self.path


def open_source(source: bytes | str | Path, name: str | None, max_bytes: int) -> Source:
    """The file's bytes within the size limit, gzip unpacked (with a cap against bombs)."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        if len(data) > max_bytes:
            raise too_large("The file is", len(data), max_bytes)
        src = Source(name or "uploaded table", len(data), data[:HEAD_BYTES], data=data)
    else:
        path = Path(source)
        if not path.is_file():
            raise DataFileError(f"The file '{path.name}' does not exist or is not a file.")
        size = path.stat().st_size
        if size > max_bytes:
            raise too_large("The file is", size, max_bytes)
        with path.open("rb") as handle:
            head = handle.read(HEAD_BYTES)
        src = Source(name or path.name, size, head, path=path)
    if src.head[:2] == b"\x1f\x8b":
        data = gunzip(src.read(), max_bytes)
        src = Source(src.name, len(data), data[:HEAD_BYTES], data=data)
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
            f"The file unpacks to more than {human_bytes(max_bytes)}, the limit. "
            "Load a sample of the rows or the columns you need."
        )
    return out


def detect_format(head: bytes, name: str) -> str:
    lower = re.sub(r"\.gz$", "", name.lower())
    if head[:4] == b"PAR1" or lower.endswith(".parquet"):
        return "parquet"
    if head[:4] == b"PK\x03\x04" or lower.endswith((".xlsx", ".xlsm", ".xls")):
        return "excel"
    return "text"
