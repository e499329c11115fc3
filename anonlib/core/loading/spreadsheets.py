"""Excel (cells read as text, the sheet's size checked before it is opened) and Parquet."""

from __future__ import annotations

import io
import re
import zipfile

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import DataFileError, FileTooLargeError, join_names
from .source import (
    EXCEL_ERRORS,
    EXCEL_MAX_CELLS,
    EXCEL_PARTS_MAX_BYTES,
    EXCEL_TEXT_MAX_BYTES,
    Source,
    human_bytes,
    too_large,
)
from .text import Cells

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
            tail = chunk[1 - len(tags[0]) :] or b" "  # a tag cut by the block end is counted in the next chunk
    return cells


_SHEET = re.compile(r"xl/worksheets/[^/]+\.xml")
_SHARED_TEXTS = re.compile(r"(?i)(^|/)sharedstrings[^/]*\.xml$")


def _check_parts(archive: zipfile.ZipFile) -> None:
    """The parts openpyxl reads whole before streaming the sheet, bounded before it opens the
    workbook: the shared texts by their declared unpacked size and by the number of texts they
    hold (counted while streaming, at memory speed), every other part but the sheets by their
    total declared size. A part unpacking past its declared size fails its check in the zip
    reader, which stops there."""
    texts = [info for info in archive.infolist() if _SHARED_TEXTS.search(info.filename)]
    others = sum(
        info.file_size for info in archive.infolist() if info not in texts and not _SHEET.fullmatch(info.filename)
    )
    if others > EXCEL_PARTS_MAX_BYTES:
        raise too_large("The Excel file's parts besides its sheets unpack to", others, EXCEL_PARTS_MAX_BYTES)
    for info in texts:
        if info.file_size > EXCEL_TEXT_MAX_BYTES:
            raise FileTooLargeError(
                f"The Excel file's shared texts ({info.filename}) unpack to {human_bytes(info.file_size)}, more "
                f"than the {human_bytes(EXCEL_TEXT_MAX_BYTES)} a sheet of {EXCEL_MAX_CELLS:,} cells needs; it was "
                "not opened. Save the sheet as CSV."
            )
        count, tail, tags = 0, b"", (b"<si>", b"<si ", b"<si/")
        with archive.open(info) as stream:
            while block := stream.read(1 << 22):
                if not tail:
                    prefix = re.search(rb"<(\w+):sst", block[:4096])
                    if prefix:  # a namespace prefix on every tag (<x:si>)
                        tags = tuple(b"<" + prefix.group(1) + b":" + tag[1:] for tag in tags)
                chunk = tail + block  # a tag cut by the block's end is whole in the next chunk
                count += sum(chunk.count(tag) - tail.count(tag) for tag in tags)
                tail = chunk[-16:] or b" "
                if count > EXCEL_MAX_CELLS:
                    raise FileTooLargeError(
                        f"The Excel file's shared texts ({info.filename}) hold more than {EXCEL_MAX_CELLS:,} texts, "
                        f"more than the {EXCEL_MAX_CELLS:,} cells a sheet is read up to; it was not opened. Save the "
                        "sheet as CSV."
                    )


def read_excel(src: Source, header: bool | None, max_columns: int, max_bytes: int) -> Cells:
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
                raise too_large("The Excel file unpacks to", unpacked, 2 * max_bytes)
            _check_parts(archive)
            # openpyxl parses a sheet whole to learn its size when the sheet does not declare
            # it: the cells are counted first, at memory speed
            cells_in_book = sum(
                _sheet_cells(archive, info.filename) for info in archive.infolist() if _SHEET.fullmatch(info.filename)
            )
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
        if declared > EXCEL_MAX_CELLS
        else f"The sheet has more than {EXCEL_MAX_CELLS:,} cells; Excel sheets are read up to that many. "
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
            parser = Parser(
                stream,
                sheet._shared_strings,
                data_only=True,
                epoch=book.epoch,
                date_formats=book._date_formats,
                timedelta_formats=book._timedelta_formats,
            )
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
    columns = [pa.chunked_array([pa.array([r.get(j) for r in body], pa.large_string())]) for j in range(1, width + 1)]
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
    return Cells(names, columns, has_header, notes=tuple(notes))


def _parquet_text(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A typed Parquet column as the texts pandas gave its values (``str`` of each)."""
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        return column
    try:
        encoded = pc.dictionary_encode(column)
    except pa.ArrowNotImplementedError:  # nested values: one text per cell
        return pa.chunked_array(
            [pa.array([None if v is None else str(v) for v in column.to_pylist()], pa.large_string())]
        )
    dictionary = encoded.chunk(0).dictionary if encoded.num_chunks else pa.array([])
    texts = pa.array([str(v) for v in dictionary.to_pylist()], pa.large_string())
    return pa.chunked_array([texts.take(chunk.indices) for chunk in encoded.chunks], pa.large_string())


def read_parquet(src: Source, max_columns: int, max_cells: int) -> Cells:
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
    return Cells([str(n) for n in table.column_names], [_parquet_text(c) for c in table.columns], True)
