"""Reading user files into tables, safely and with clear messages.

``load_table`` accepts CSV/TSV (any of ``, ; TAB |``; gzip-compressed too),
Excel (when openpyxl is installed) and Parquet (when pyarrow is installed), as
bytes or a path. Delimiter, encoding (UTF-8, UTF-8 with BOM, UTF-16 with BOM,
Latin-1) and whether the first row is a header are detected and can be given.
Every cell is read as text first, so nothing is silently rounded; a column
becomes numeric only when every non-missing value converts without loss.

Missing values (``?``, empty, ``NA``, ``N/A``, ``NaN``, ``NULL``) become NA; the
counting kernel treats them as a category of their own. Files are parsed in
memory and never written to disk.

Example:
    >>> t = load_table(b"age;sex\\n30;f\\n?;m\\n", name="demo.csv")
    >>> t.delimiter, t.header, t.frame["age"].tolist(), t.missing_cells
    (';', True, [30, <NA>], 1)
"""

from __future__ import annotations

import csv
import io
import re
import warnings
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import DataFileError, FileTooLargeError, join_names

DEFAULT_MAX_BYTES = 200 * 1024 * 1024
DEFAULT_MAX_COLUMNS = 2_000
DEFAULT_MAX_CELLS = 60_000_000
MISSING_MARKERS = ("", "?", "NA", "N/A", "NaN", "nan", "NULL", "null")
DELIMITERS = (",", ";", "\t", "|")
FORMULA_PREFIXES = ("=", "+", "-", "@")
# OWASP CSV injection: a cell starting with any of these can be read as a formula
CSV_INJECTION_PREFIXES = (*FORMULA_PREFIXES, "\t", "\r")
_SAMPLE_LINES = 200
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


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


def _human_bytes(n: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n} bytes"  # pragma: no cover


def _read_source(source: bytes | str | Path, max_bytes: int) -> tuple[bytes, str]:
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), ""
    path = Path(source)
    if not path.is_file():
        raise DataFileError(f"The file '{path.name}' does not exist or is not a file.")
    size = path.stat().st_size
    if size > max_bytes:
        raise FileTooLargeError(
            f"The file is {_human_bytes(size)}; the limit is {_human_bytes(max_bytes)}. "
            "Load a sample of the rows or the columns you need."
        )
    return path.read_bytes(), path.name


def _gunzip(data: bytes, max_bytes: int) -> bytes:
    """Decompress gzip with a size cap (no decompression bombs)."""
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


def _detect_format(data: bytes, name: str) -> str:
    lower = name.lower()
    if data[:4] == b"PAR1" or lower.endswith(".parquet"):
        return "parquet"
    if data[:4] == b"PK\x03\x04" or lower.endswith((".xlsx", ".xlsm", ".xls")):
        return "excel"
    return "text"


def _decode(data: bytes, encoding: str | None) -> tuple[str, str]:
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
    head = data[:65536]
    if b"\x00" in head:
        raise DataFileError(
            "This looks like a binary file, not a text table. Upload CSV, TSV, Excel or Parquet."
        )
    controls = sum(head.count(bytes([b])) for b in range(1, 32) if b not in (9, 10, 13))
    if head and controls / len(head) > 0.05:
        raise DataFileError(
            "This looks like a binary file, not a text table. Upload CSV, TSV, Excel or Parquet."
        )
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return data.decode("latin-1"), "latin-1"


def _sample_rows(text: str, delimiter: str) -> list[list[str]]:
    lines = [ln for ln in text[:262_144].splitlines()[:_SAMPLE_LINES] if ln.strip()]
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


def _detect_header(rows: list[list[str]]) -> bool:
    """First row is a header when it is all distinct non-numeric text that
    looks unlike the values below it."""
    if len(rows) < 2:
        return bool(rows) and not any(_is_number(c) for c in rows[0] if c.strip())
    first, rest = rows[0], rows[1:]
    cells = [c.strip() for c in first]
    if any(not c for c in cells) and all(not c for c in cells):
        return False
    if any(_is_number(c) for c in cells if c):
        return False
    for j, cell in enumerate(cells):
        below = [r[j].strip() for r in rest if j < len(r) and r[j].strip()]
        if not below:
            continue
        numeric_share = sum(_is_number(v) for v in below) / len(below)
        if numeric_share >= 0.8:
            return True
        if cell in set(below):
            return False
    return True


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


def _parse_excel(data: bytes) -> pd.DataFrame:
    try:
        import openpyxl  # noqa: F401
    except ImportError:
        raise DataFileError("Reading Excel files needs the optional package openpyxl; save the sheet as CSV.") from None
    try:
        return pd.read_excel(io.BytesIO(data), dtype=str, keep_default_na=False, na_filter=False)
    except Exception:  # openpyxl raises many kinds for damaged files
        raise DataFileError("The Excel file could not be opened; it may be damaged. Save it as CSV.") from None


def _parse_parquet(data: bytes) -> pd.DataFrame:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise DataFileError("Reading Parquet files needs the optional package pyarrow; save the table as CSV.") from None
    try:
        frame = pd.read_parquet(io.BytesIO(data))
    except Exception:  # pyarrow raises several kinds for damaged files
        raise DataFileError("The Parquet file could not be opened; it may be damaged.") from None
    return frame.astype(object).where(frame.notna(), "").astype(str)


def _clean_names(frame: pd.DataFrame, header: bool, notes: list[str]) -> pd.DataFrame:
    """Column names: ``column j`` without a header, for blank names, and
    ``name (2)`` for a repeated name; each change is noted."""
    if not header:
        frame.columns = [f"column {j + 1}" for j in range(frame.shape[1])]
        return frame
    names: list[str] = []
    for j, raw in enumerate(frame.columns):
        name = str(raw).strip()
        if not name or name.lower() == "nan":
            name = f"column {j + 1}"
            notes.append(f"Column {j + 1} has no name; it is called '{name}'.")
        if name in names:
            copy = 2
            while f"{name} ({copy})" in names:
                copy += 1
            notes.append(f"The column name '{name}' appears more than once; the copy is called '{name} ({copy})'.")
            name = f"{name} ({copy})"
        names.append(name)
    frame.columns = names
    return frame


def _typed_column(raw: pd.Series, missing_markers: tuple[str, ...]) -> tuple[pd.Series, int]:
    """Strip, mark missing values and convert one text column; returns (column, missing cells).

    Works on the column's distinct values only, then expands them with the
    codes, so a column of 10^5 rows with 10 values costs 10 conversions.
    Numbers when every non-missing value converts without loss (no leading
    zeros, no more than 18 integer digits, finite), else text.
    """
    codes, uniques = pd.factorize(raw, use_na_sentinel=True)
    values = pd.Series(np.asarray(uniques, dtype=object)).astype(str).str.strip()
    is_missing = values.isin(list(missing_markers)).to_numpy()
    missing_count = int(np.bincount(codes[codes >= 0], minlength=len(values))[is_missing].sum())
    missing_count += int((codes < 0).sum())
    present = values[~is_missing]
    converted: pd.Series = values.astype(object)
    is_number = present.str.fullmatch(_NUMBER.pattern).all() and len(present) > 0
    if is_number:
        integers = present.str.fullmatch(r"[+-]?\d+").all()
        too_long = (present.str.lstrip("+-").str.lstrip("0").str.len() > 18).any()
        leading_zero = present.str.match(r"[+-]?0\d").any()
        if integers and not too_long and not leading_zero:
            converted = pd.to_numeric(values.where(~is_missing), errors="coerce").astype("Int64")
        elif not integers:
            numbers = pd.to_numeric(values.where(~is_missing), errors="coerce").astype("float64")
            if np.isfinite(numbers[~is_missing].to_numpy()).all():
                converted = numbers
    if converted.dtype == object:
        converted = values.where(~is_missing).astype("string")
    result = converted.take(np.where(codes < 0, 0, codes) if len(converted) else codes)
    result.index = raw.index
    if (codes < 0).any() or is_missing.any():
        mask = codes < 0
        if is_missing.any():
            mask |= is_missing[np.where(codes < 0, 0, codes)]
        result = result.mask(mask)
    return result, missing_count


def load_table(
    source: bytes | str | Path,
    *,
    name: str | None = None,
    delimiter: str | None = None,
    encoding: str | None = None,
    header: bool | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_columns: int = DEFAULT_MAX_COLUMNS,
    missing_markers: tuple[str, ...] = MISSING_MARKERS,
) -> LoadedTable:
    """Read a table from bytes or a path; raises ``DataFileError`` with a clear sentence.

    >>> load_table(b"39, State-gov\\n50, Private\\n").frame.columns.tolist()
    ['column 1', 'column 2']
    """
    data, file_name = _read_source(source, max_bytes)
    name = name or file_name or "uploaded table"
    if len(data) > max_bytes:
        raise FileTooLargeError(
            f"The file is {_human_bytes(len(data))}; the limit is {_human_bytes(max_bytes)}. "
            "Load a sample of the rows or the columns you need."
        )
    if not data.strip():
        raise DataFileError("The file is empty.")
    if data[:2] == b"\x1f\x8b":
        data = _gunzip(data, max_bytes)
        if not data.strip():
            raise DataFileError("The file is empty.")
    notes: list[str] = []
    fmt = _detect_format(data, re.sub(r"\.gz$", "", name.lower()))
    used_delimiter: str | None = None
    used_encoding: str | None = None
    if fmt == "excel":
        frame, has_header = _parse_excel(data), True
    elif fmt == "parquet":
        frame, has_header = _parse_parquet(data), True
    else:
        text, used_encoding = _decode(data, encoding)
        if not text.strip():
            raise DataFileError("The file is empty.")
        if delimiter is not None and delimiter not in DELIMITERS and len(delimiter) != 1:
            raise DataFileError("The delimiter must be a single character such as , ; | or TAB.")
        used_delimiter = delimiter or _detect_delimiter(text)
        first_line = re.split(r"\r\n|\r|\n", text.lstrip("\ufeff").lstrip(), maxsplit=1)[0]
        width = first_line.count(used_delimiter) + 1
        if width > max_columns:
            raise DataFileError(
                f"The table has {width:,} columns; the limit is {max_columns:,}. "
                "Keep only the columns you need to assess."
            )
        has_header = _detect_header(_sample_rows(text, used_delimiter)) if header is None else header
        frame = _parse_text(text, used_delimiter)
        if has_header:
            frame.columns = [str(c) for c in frame.iloc[0].tolist()]
            frame = frame.iloc[1:].reset_index(drop=True)
    if frame.shape[1] > max_columns:
        raise DataFileError(
            f"The table has {frame.shape[1]:,} columns; the limit is {max_columns:,}. "
            "Keep only the columns you need to assess."
        )
    if frame.shape[0] == 0:
        raise DataFileError(
            "The file has column names but no rows of data."
            if has_header
            else "The file has no rows of data."
        )
    if frame.shape[0] * frame.shape[1] > DEFAULT_MAX_CELLS:
        raise FileTooLargeError(
            f"The table has {frame.shape[0] * frame.shape[1]:,} cells; the limit is {DEFAULT_MAX_CELLS:,}."
        )
    frame = _clean_names(frame, has_header, notes)
    if frame.shape[1] == 1 and fmt == "text":
        notes.append("Only one column was found; if the file uses another delimiter, choose it.")
    typed = {c: _typed_column(frame[c], missing_markers) for c in frame.columns}
    frame = pd.DataFrame({c: col for c, (col, _) in typed.items()}, index=frame.index)
    missing_cells = sum(n for _, n in typed.values())
    empty = [c for c in frame.columns if frame[c].isna().all()]
    if empty:
        notes.append(f"These columns are entirely missing: {join_names(empty)}.")
    text_cols = [c for c in frame.columns if frame[c].dtype == object or pd.api.types.is_string_dtype(frame[c])]
    formula_cols = [
        c for c in text_cols
        if frame[c].dropna().astype(str).str.startswith(FORMULA_PREFIXES).any()
    ]
    if formula_cols:
        notes.append(
            "Some values start with = + - or @ and could run as formulas in a spreadsheet "
            f"(columns {join_names(formula_cols)}); downloads prefix them with an apostrophe."
        )
    return LoadedTable(
        frame=frame.reset_index(drop=True),
        name=name,
        format="csv" if fmt == "text" else fmt,
        delimiter=used_delimiter,
        encoding=used_encoding,
        header=has_header,
        missing_cells=missing_cells,
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
