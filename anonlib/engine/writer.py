"""A released table written by the engine as the in-memory release writes it, byte for byte.

``write_csv(engine, table, path)`` writes ``table`` (an Ibis table on DuckDB or Spark) as
``anonlib.core.loading.to_safe_csv`` writes a DataFrame: the header row of
``to_safe_csv``; each cell as pandas writes it (text as it is, quoted when it holds a comma,
a double quote, a CR or an LF, its quotes doubled; integers in digits; decimals in Python's
shortest round-trip form, ``1e+16`` and ``0.1``; a missing value blank, a row whose only
cell is blank written ``""``, as Python's csv writer does); lines ending in CRLF; the rows
in the order of the column ``order`` (a record's position in the source, ``ROW``).
Text starting with a formula character is expected already neutralised (the release's
columns are, ``anonlib.workflow.engine_replay``); header names are neutralised here.

Each line is made by the engine's SQL, so the records never come back to Python:

- DuckDB writes the lines with ``COPY ... ORDER BY`` (no quoting of its own, CRLF line
  ends), the header as the first line of the same query; the insertion order is kept
  while it runs (``ordered_writes``), so ``row_number() OVER ()`` numbers the records in
  the files' order and the sorted lines are written in order. Its text form of a
  double is Python's shortest round-trip form.
- Spark writes the sorted lines as text part files (range-partitioned by the sort, in
  order) into a folder next to ``path``; they are joined behind the header into the one
  file and the folder removed. Java writes a double otherwise than Python, so decimals
  are formatted by a vectorized pandas UDF (NumPy's ``astype(str)``, pandas' own
  ``to_csv`` formatting, on Arrow batches).

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> import pandas as pd
    >>> from anonlib.core.loading import to_safe_csv
    >>> from anonlib.engine import connect, from_frame
    >>> frame = pd.DataFrame({"zip": ["a,b", None, 'q"x'], "age": [31.5, 1e16, None], "n": [2, 1, 3]})
    >>> path = Path(tempfile.mkdtemp()) / "out.csv"
    >>> with connect("duckdb") as engine:
    ...     ordered = write_csv(engine, from_frame(frame, engine).numbered(), path)
    >>> ordered, path.read_bytes() == to_safe_csv(frame)
    (True, True)
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

from ..core.loading import to_safe_csv
from .backends import Engine, errors
from .source import ROW

LINE = "anonlib_line"
KEY = "anonlib_key"
FLOAT_TEXT = "anonlib_float_text"  # the Spark session's pandas UDF writing a double as pandas does
NEEDS_QUOTES = r'[,"\r\n]'  # what Python's csv writer quotes (the delimiter, the quote, the line end's characters)
_PART = re.compile(r"part-(\d+)")


def header_line(columns: list[str]) -> bytes:
    """The header row ``to_safe_csv`` writes for these column names (CRLF included).

    >>> header_line(["age", "=cmd", "a,b"])
    b'age,\\'=cmd,"a,b"\\r\\n'
    """
    return to_safe_csv(pd.DataFrame(columns=list(columns)))


def csv_line(table, engine: Engine, columns: list[str] | None = None):
    """One text value per row: the row's cells as ``to_safe_csv`` writes them, joined by commas
    (without the line end)."""
    import ibis

    columns = list(table.columns if columns is None else columns)
    fields = [_field(table[c], engine) for c in columns]
    if len(fields) == 1:  # Python's csv writer quotes a row whose only cell is blank
        return (fields[0] == "").ifelse(ibis.literal('""'), fields[0])
    return ibis.literal(",").join(fields)


def _field(column, engine: Engine):
    """A cell as pandas' ``to_csv`` writes it: blank when missing, quoted when it must be."""
    import ibis

    dtype = column.type()
    if dtype.is_floating():
        text = _float_text(column, engine) if engine.name == "spark" else column.cast("string")
        return (column.isnull() | column.isnan()).ifelse(ibis.literal(""), text)
    if dtype.is_integer():
        return column.cast("string").fill_null("")
    if dtype.is_boolean():
        return column.ifelse(ibis.literal("True"), ibis.literal("False")).fill_null("")
    text = column if dtype.is_string() else column.cast("string")
    quoted = ibis.literal('"') + text.replace('"', '""') + ibis.literal('"')
    return text.re_search(NEEDS_QUOTES).ifelse(quoted, text).fill_null("")


def _float_text(column, engine: Engine):
    """A double in Python's shortest round-trip form, on Spark (a pandas UDF, registered once)."""
    import ibis

    session = engine.backend._session
    if not getattr(session, "_anonlib_float_text", False):
        from pyspark.sql.functions import pandas_udf

        session.udf.register(FLOAT_TEXT, pandas_udf(_pandas_float_text, "string"))
        session._anonlib_float_text = True

    @ibis.udf.scalar.builtin(name=FLOAT_TEXT)
    def float_text(value: float) -> str:  # the function registered above
        ...

    return float_text(column.cast("float64"))


def _pandas_float_text(values: pd.Series) -> pd.Series:
    """Doubles as pandas' ``to_csv`` writes them (NumPy's ``astype(str)``), missing ones None.

    >>> _pandas_float_text(pd.Series([1.0, None, 1e16, 1e-05])).tolist()
    ['1.0', None, '1e+16', '1e-05']
    """
    text = pd.Series(values.to_numpy(dtype="float64", na_value=float("nan")).astype(str), dtype=object)
    return text.where(values.notna().to_numpy(), None)


@contextmanager
def ordered_writes(engine: Engine) -> Iterator[None]:
    """DuckDB keeps the insertion order while this runs (it is off otherwise, to spare memory):
    a scan's ``row_number() OVER ()`` is then the records' order in the files, and a sorted
    result is written in its order."""
    if engine.name != "duckdb":
        yield
        return
    con = engine.backend.con
    before = con.execute("SELECT current_setting('preserve_insertion_order')").fetchone()[0]
    con.execute("SET preserve_insertion_order = true")
    try:
        yield
    finally:
        con.execute(f"SET preserve_insertion_order = {'true' if before else 'false'}")


def write_csv(engine: Engine, table, path: str | os.PathLike, *, order: str | None = ROW) -> bool:
    """Write ``table`` to ``path`` as ``to_safe_csv`` writes it, its rows sorted by the column
    ``order`` (left out of the file); True when they were (``order`` is a column of the
    table), False when the table has no such column and the rows are in the engine's order."""
    import ibis

    path = Path(path)
    ordered = order is not None and order in table.columns
    columns = [c for c in table.columns if c != order]
    key = table[order] if ordered else ibis.literal(0)
    body = table.select(**{LINE: csv_line(table, engine, columns), KEY: key})
    header = header_line(columns)
    with errors(engine), ordered_writes(engine):
        if engine.name == "spark":
            _write_spark(engine, body, header, path, ordered)
        else:
            _write_duckdb(engine, body, header, path)
    return ordered


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _write_duckdb(engine: Engine, body, header: bytes, path: Path) -> None:
    """One ``COPY``: the header line first, then the lines by their key, CRLF line ends, no quoting."""
    query = engine.backend.compile(body)
    head = header.decode("utf-8").removesuffix("\r\n")
    engine.backend.con.execute(
        f"COPY (SELECT {LINE} FROM (SELECT {_literal(head)} AS {LINE}, -1 AS {KEY} UNION ALL "
        f"SELECT {LINE}, {KEY} FROM ({query})) ORDER BY {KEY}) TO {_literal(str(path))} "
        "(FORMAT csv, HEADER false, QUOTE '', ESCAPE '', NEW_LINE '\\r\\n')"
    )


def _write_spark(engine: Engine, body, header: bytes, path: Path, ordered: bool) -> None:
    """The sorted lines as text part files in a folder beside ``path``, joined behind the header."""
    frame = engine.backend._session.sql(engine.backend.compile(body))
    if ordered:
        frame = frame.orderBy(KEY)
    folder = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    try:
        frame.select(LINE).write.mode("overwrite").option("lineSep", "\r\n").text(str(folder / "lines"))
        parts = sorted((folder / "lines").glob("part-*"), key=_part_number)
        with open(path, "wb") as out:
            out.write(header)
            for part in parts:
                with open(part, "rb") as lines:
                    shutil.copyfileobj(lines, out, 1 << 20)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _part_number(path: Path) -> tuple[int, str]:
    """A part file's task number (Spark numbers them in the order of the sorted partitions).

    >>> _part_number(Path("part-00012-ab-c000.txt"))
    (12, 'part-00012-ab-c000.txt')
    """
    found = _PART.match(path.name)
    return (int(found.group(1)) if found else -1, path.name)
