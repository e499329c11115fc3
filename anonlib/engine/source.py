"""Tables where they live: files scanned in place, with column roles.

``scan(path)`` reads CSV or Parquet files (one file, a folder of them, or a
glob pattern such as ``visits/*.parquet``) on an engine without loading them:
the result, an ``EngineTable``, is a lazy Ibis table plus the column roles a
``Dataset`` has (guessed from the column names, overridable), so every anonlib
call that takes a ``Dataset`` or a DataFrame takes it as well.

Values are read as ``anonlib.core.loading`` reads an upload, so an engine
counts the same classes as the in-memory kernel: text is stripped, the missing
markers (``?``, empty, ``NA``...) become missing, and a text column whose every
value is a number becomes numeric (integers without leading zeros, else
decimals). That typing is decided per column with one aggregate query over the
columns an analysis uses. Tables handed over as DataFrames or Ibis tables are
taken as they are, as the in-memory functions take a DataFrame.

Example:
    >>> import pandas as pd
    >>> from anonlib.engine import connect
    >>> with connect("duckdb") as engine:
    ...     table = from_frame(pd.DataFrame({"age": [30, 30, 40], "sex": ["f", "f", "m"]}), engine)
    ...     table.quasi_identifiers
    ('age', 'sex')
"""

from __future__ import annotations

import atexit
import glob
import gzip
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from ..core.dataset import Dataset, Role, RoleColumns, as_role, guess_roles
from ..core.errors import ColumnError, DataFileError, ParameterError, join_names
from ..core.loading import DELIMITERS, MISSING_MARKERS
from ..core.loading.text import detect_delimiter
from .backends import Engine, errors, shared

PARQUET_SUFFIXES = (".parquet", ".parq", ".pq")
TEXT_SUFFIXES = (".csv", ".tsv", ".txt", ".data", ".dat", ".tab")
# the loader's number test (anonlib.core.loading), in a regex dialect every engine shares
NUMBER = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"
INTEGER = r"^[+-]?[0-9]+$"
UNSAFE_INTEGER = r"^[+-]?(0[0-9]|[0-9]{19,})"  # leading zero (a code) or more than 18 digits
WEIGHT = "anonlib_weight"  # records per row of a summary
ROWS = "anonlib_rows"
ROW = "anonlib_row"  # a record's position in its files (``EngineTable.numbered``)


@dataclass(frozen=True)
class EngineTable(RoleColumns):
    """A table on a data engine, with what each column is for (as ``Dataset``).

    ``raw`` is the lazy Ibis table; ``from_files`` says whether values are read
    with the loader's rules (files) or taken as they are (frames, Ibis tables).
    Nothing is read until a measure runs, and then only per-class counts come back.
    """

    name: str
    engine: Engine
    raw: Any = field(repr=False)
    roles: Mapping[str, Role] = field(default_factory=dict)
    missing: str = "category"
    from_files: bool = False
    _kinds: dict = field(default_factory=dict, repr=False, compare=False)
    # text columns none of whose values the loader's reading changes (no space to strip, no marker)
    _as_stored: dict = field(default_factory=dict, repr=False, compare=False)
    _checked: dict = field(default_factory=dict, repr=False, compare=False)
    _dropped: dict = field(default_factory=dict, repr=False, compare=False)
    _pairs: dict = field(default_factory=dict, repr=False, compare=False)  # anonlib.engine.owners' cached pairs
    # Spark: builds ``raw`` again with each record's position (``numbered``); DuckDB numbers ``raw`` itself
    _numbering: Any = field(default=None, repr=False, compare=False)

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(self.raw.columns)

    def _column_order(self) -> Sequence[str]:
        return self.columns

    def with_roles(self, roles: Mapping[str, Role | str]) -> EngineTable:
        """A copy with some roles changed (``{"n": "count", "zip": "quasi-identifier"}``)."""
        self.require(list(roles))
        merged = dict(self.roles)
        merged.update({c: as_role(r) for c, r in roles.items()})
        counts = [c for c in self.columns if merged.get(c) is Role.COUNT]
        if len(counts) > 1:
            raise ColumnError(f"Only one column can hold record counts; found {join_names(counts)}.")
        return replace(self, roles=merged, _checked={}, _dropped={})

    def numbered(self) -> Any:
        """The source's rows with ``ROW``, each record's position in the files (0, 1, ... in the
        order of the files and of the records in each: the order the in-memory loader reads), or
        None when the engine cannot say (a Spark table brought as an Ibis table).

        On DuckDB ``row_number() OVER ()`` on the scan, which keeps the files' order while the
        insertion order is preserved (``ordered_writes``); on Spark the files are read again,
        one after another, and numbered by ``monotonically_increasing_id`` (increasing with the
        partition, and a file's splits are partitioned in their order).

        >>> from anonlib.engine import connect
        >>> with connect("duckdb") as engine:
        ...     table = from_frame(pd.DataFrame({"age": [40, 30, 50]}), engine)
        ...     engine.run(table.numbered()).to_pylist()
        [{'age': 40, 'anonlib_row': 0}, {'age': 30, 'anonlib_row': 1}, {'age': 50, 'anonlib_row': 2}]
        """
        if self._numbering is not None:
            return self._numbering()
        if self.engine.name != "duckdb":
            return None
        from ibis import util

        with errors(self.engine):
            backend = self.engine.backend
            name = util.gen_name("anonlib_numbered")
            backend.raw_sql(
                f'CREATE TEMPORARY VIEW "{name}" AS SELECT *, row_number() OVER () - 1 AS {ROW} '
                f"FROM ({backend.compile(self.raw)})"
            )
            return backend.table(name)

    def with_missing(self, missing: str) -> EngineTable:
        """A copy with missing values kept as a category (``category``) or dropped (``drop``)."""
        if missing not in ("category", "drop"):
            raise ParameterError("Missing values are either kept as a category ('category') or dropped ('drop').")
        return replace(self, missing=missing, _dropped={})

    def require(self, columns: Sequence[str]) -> None:
        """Raise ``ColumnError`` naming every requested column the table lacks."""
        absent = [c for c in columns if c not in self.columns]
        if absent:
            raise ColumnError(
                f"These columns are not in {self.name}: {join_names(absent)}. Its columns: {join_names(self.columns)}."
            )

    def analysis_frame(self, columns: Sequence[str] | None = None, *, count: str | None = None) -> tuple[Any, int]:
        """The lazy table to analyse, one row per row of the source (the columns asked
        for plus the count column, values read as the loader reads them), and how many
        rows the missing policy drops.

        The same name and meaning as ``Dataset.analysis_frame``, so code written for
        one reads the other; the table stays on the engine. Measures use ``summary``,
        which groups equal rows first and is much cheaper on large tables.
        """
        columns, count, keep = self._analysed(columns, count)
        table = self.raw.select(**{c: self.value(c) for c in keep})
        dropped = self.summary(columns, count=count)[1] if self.missing == "drop" and columns else 0
        if self.missing == "drop" and columns:
            table = table.filter(all_of([table[c].notnull() for c in columns]))
        return table, dropped

    def summary(
        self, columns: Sequence[str] | None = None, *, count: str | None = None, complete: Sequence[str] | None = None
    ) -> tuple[Any, int]:
        """The analysed columns with equal rows grouped, and how many rows the missing policy drops.

        The lazy result has the columns asked for (values read as the loader reads
        them) and ``WEIGHT``, the records each row stands for (the count column
        summed, or the rows counted); rows of weight 0 are kept out. Every class,
        partition or cell count of those columns is the same on it as on the whole
        table, weighted: the source is scanned once by a group-by on its raw values
        (cheap on dictionary-encoded files), and the loader's reading rules run on
        the distinct values only. With ``missing="drop"`` the rows missing a value in
        one of ``complete`` (default: ``columns``; ``assessed_columns`` for the
        assessed records, as ``Dataset.assessed_frame``) are left out; with
        ``complete`` given, a row may be grouped under a missing value of another column.
        """
        columns, count, keep = self._analysed(columns, count)
        complete = list(columns) if complete is None else list(dict.fromkeys(complete))
        self.require(complete)
        raw_columns = [c for c in keep if c != count]
        dropping = self.missing == "drop" and bool(complete)
        outside = [c for c in complete if c not in raw_columns] if dropping else []
        raw, dropped = self.raw, 0
        if outside:  # a filter on the records before they are grouped (values read as the loader reads them)
            self.decide_kinds(outside)
            condition = self.complete(outside)
            key = ("rows", tuple(outside))
            if key not in self._dropped:
                self._dropped[key] = int(self.engine.value(raw.filter(~condition).count()) or 0)
            dropped = self._dropped[key]
            raw = raw.filter(condition)
        size = self.value(count, raw).sum().cast("int64") if count else raw.count()
        grouped = (
            raw.group_by(raw_columns).aggregate(**{WEIGHT: size, ROWS: raw.count()})
            if raw_columns
            else raw.aggregate(**{WEIGHT: size, ROWS: raw.count()})
        )
        table = grouped.select(
            **{c: self.value(c, grouped) for c in raw_columns}, **{WEIGHT: grouped[WEIGHT], ROWS: grouped[ROWS]}
        )
        inside = [c for c in complete if c in raw_columns] if dropping else []
        if inside:
            condition = all_of([table[c].notnull() for c in inside])
            key = (self.missing, tuple(columns), count, tuple(complete))
            if key not in self._dropped:
                self._dropped[key] = int(self.engine.value(table.filter(~condition)[ROWS].sum()) or 0)
            dropped += self._dropped[key]
            table = table.filter(condition)
        table = table.filter(table[WEIGHT] > 0)
        return table.select(*raw_columns, WEIGHT), dropped

    def complete(self, columns: Sequence[str], table=None):
        """The condition holding for the rows of ``table`` (default: the source) with a
        value in every one of ``columns``, values read as the loader reads them
        (``anonlib.core.dataset.complete_rows`` on an engine); true when none is named."""
        import ibis

        columns = list(columns)
        if not columns:
            return ibis.literal(True)
        return all_of([self.value(c, table).notnull() for c in columns])

    def assessed(self, extra: Sequence[str] = (), table=None):
        """The assessed rows (``Dataset.assessed``: with ``missing="drop"`` those holding a
        value in every one of ``assessed_columns(extra)``) as a condition on ``table``
        (default: the source): a filter, not a group-by; true everywhere with
        ``missing="category"``."""
        import ibis

        if self.missing != "drop":
            return ibis.literal(True)
        return self.complete(self.assessed_columns(extra), table)

    def assessed_rows(self, extra: Sequence[str] = (), table=None):
        """``table`` (default: the source) filtered to its assessed rows (``assessed``), and
        left as it is when nothing can be left out (so a count on Parquet stays a footer read)."""
        table = self.raw if table is None else table
        if self.missing != "drop" or not self.assessed_columns(extra):
            return table
        return table.filter(self.assessed(extra, table))

    def _analysed(self, columns: Sequence[str] | None, count: str | None) -> tuple[list[str], str | None, list[str]]:
        """The columns to analyse (checked), the count column, and both together."""
        if columns is None:
            columns = self.quasi_identifiers + self.sensitive
        columns = list(columns)
        count = count if count is not None else self.count
        self.require(columns + ([count] if count else []))
        leaked = [c for c in columns if self.roles.get(c) is Role.IDENTIFIER]
        if leaked:
            raise ColumnError(
                f"{join_names(leaked)} is marked as an identifier and is never analysed; change its role first."
            )
        keep = list(dict.fromkeys(columns + ([count] if count else [])))
        self.decide_kinds(keep)
        if count:
            self._check_count(self.raw.select(**{count: self.value(count)}), count)
        return columns, count, keep

    def value(self, column: str, table=None):
        """One column (of the source, or of ``table`` holding the source's raw values) as
        the loader reads it: text stripped, missing markers and NaN as missing,
        numbers-only text as numbers (file sources only)."""
        col = (self.raw if table is None else table)[column]
        dtype = col.type()
        if dtype.is_floating():
            return col.isnan().ifelse(None, col).name(column)
        if not (self.from_files and dtype.is_string()):
            return col.name(column)
        kind = self._kind(column)
        text = col if self._as_stored.get(column) else _text(col)
        if kind == "integer":
            return text.cast("int64").name(column)
        if kind == "number":
            return text.cast("float64").name(column)
        return text.name(column)

    def _kind(self, column: str) -> str:
        """``integer``, ``number`` or ``text`` for a text column of a file, decided as the loader
        decides it."""
        self.decide_kinds([column])
        return self._kinds[column]

    def decide_kinds(self, columns: Sequence[str]) -> None:
        """One aggregate query typing every text column of ``columns`` not yet typed."""
        if not self.from_files:
            return
        pending = [c for c in columns if self.raw[c].type().is_string() and c not in self._kinds]
        if pending:  # each typed on its own distinct values, in one query (not on the columns' combinations,
            # nearly one per record with a person column: 409 s of an anonymize at 10^8 records)
            kinds, as_stored = _text_kinds(self.engine, self.raw, pending)
            self._kinds.update(kinds)
            self._as_stored.update(as_stored)

    def _check_count(self, table, count: str) -> None:
        """The count column holds whole numbers of 0 or more (one query for the first bad value)."""
        if count in self._checked:
            return
        col = table[count]
        if not col.type().is_numeric():
            bad = self.engine.run(table.filter(col.notnull()).select(col).limit(1))
            shown = bad.column(0)[0].as_py() if bad.num_rows else ""
            raise ColumnError(f"The record-count column '{count}' must hold whole numbers; found '{shown}'.")
        number = col.cast("float64")
        bad = self.engine.run(table.filter(col.isnull() | (col < 0) | (number.floor() != number)).select(col).limit(1))
        if bad.num_rows:
            value = bad.column(0)[0].as_py()
            shown = "a missing value" if value is None else f"{value:g}"
            raise ColumnError(f"The record-count column '{count}' must hold whole numbers of 0 or more; found {shown}.")
        self._checked[count] = True


def _text(col):
    """Stripped text with the loader's missing markers as missing. Stripping is costly on the
    engines (a third of a microsecond a value on DuckDB), so a value is stripped only when its
    first or last character is a control character or a space (code 32 or less: every character
    stripped is one); the others are compared with the markers as they are."""
    edge = (col.ascii_str() <= 32) | (col.right(1).ascii_str() <= 32)
    return edge.ifelse(_unmarked(col.strip()), _unmarked(col))


def _unmarked(text):
    """``text`` with the loader's missing markers as missing."""
    return text.isin(list(MISSING_MARKERS)).ifelse(None, text)


def all_of(conditions):
    """Every condition in ``conditions`` at once (an ibis boolean); ``all_of([a.notnull(), b.notnull()])``."""
    out = conditions[0]
    for cond in conditions[1:]:
        out = out & cond
    return out


def _text_kinds(engine: Engine, raw, columns: Sequence[str]) -> tuple[dict[str, str], dict[str, bool]]:
    """Each text column of ``columns`` of ``raw`` typed as the loader types it (``integer``,
    ``number`` or ``text``), and whether every value of it reads as it is stored (nothing to strip,
    no missing marker: its reading is then the column itself), from one query on the distinct
    (column, value) pairs: one scan and one hash table whatever the number of columns (a table of
    distinct values per column, side by side, held 50 hash tables at once: diabetes's 50 columns of
    10,000 records ran out of 1 GB)."""
    if not columns:
        return {}, {}
    pairs = raw.select(*columns).pivot_longer(list(columns), names_to="column", values_to="value").distinct()
    value = pairs["value"]
    text = _text(value)
    present = text.notnull()
    stats = pairs.group_by("column").aggregate(
        p=present.cast("int64").sum(),
        n=(present & ~text.re_search(NUMBER)).cast("int64").sum(),
        i=(present & ~text.re_search(INTEGER)).cast("int64").sum(),
        u=(present & text.re_search(UNSAFE_INTEGER)).cast("int64").sum(),
        r=(value.notnull() & (text.isnull() | (text != value))).cast("int64").sum(),
    )
    rows = {row["column"]: row for row in engine.run(stats).to_pylist()}
    kinds, as_stored = {}, {}
    for c in columns:
        row = rows.get(c, {})
        present, non_number, non_integer, unsafe = (row.get(x) or 0 for x in "pniu")
        if not present or non_number:
            kinds[c] = "text"
        elif non_integer:
            kinds[c] = "number"
        else:
            kinds[c] = "text" if unsafe else "integer"
        as_stored[c] = not row.get("r")
    return kinds, as_stored


def _guessed_roles(columns: Sequence[str], roles: Mapping[str, Role | str] | None) -> dict[str, Role]:
    merged = guess_roles(pd.DataFrame(columns=list(columns)))
    if roles:
        absent = [c for c in roles if c not in columns]
        if absent:
            raise ColumnError(
                f"These columns do not exist in the data: {join_names(absent)}. Available columns: {join_names(columns)}."
            )
        merged.update({c: as_role(r) for c, r in roles.items()})
    return merged


def files_of(path: str | os.PathLike) -> list[Path]:
    """The data files a path means: itself, the files of a folder (recursively, skipping
    hidden and ``_SUCCESS``-style files), or those matching a glob pattern.

    >>> files_of("no/such/visits-*.parquet")
    Traceback (most recent call last):
    ...
    anonlib.core.errors.DataFileError: No file matches 'no/such/visits-*.parquet'; check the path (a file, a folder or a pattern such as visits/*.parquet).
    """
    text = os.fspath(path)
    if any(ch in text for ch in "*?["):
        candidates = [Path(p) for p in sorted(glob.glob(text, recursive=True))]
    elif Path(text).is_dir():
        candidates = sorted(
            p
            for p in Path(text).rglob("*")
            if not any(part.startswith((".", "_")) for part in p.relative_to(text).parts)
        )
    else:
        candidates = [Path(text)]
    files = [p for p in candidates if p.is_file()]
    if not files:
        raise DataFileError(
            f"No file matches '{text}'; check the path (a file, a folder or a pattern such as visits/*.parquet)."
        )
    return files


def file_format(files: Sequence[Path]) -> str:
    """``parquet`` or ``csv`` for a set of files (one format for all)."""
    formats = set()
    for file in files:
        name = file.name.lower().removesuffix(".gz")
        if name.endswith(PARQUET_SUFFIXES):
            formats.add("parquet")
        elif name.endswith((".xlsx", ".xlsm", ".xls")):
            raise DataFileError(
                f"'{file.name}' is an Excel file; the engines read CSV and Parquet. Save the sheet as CSV."
            )
        elif name.endswith(TEXT_SUFFIXES):
            formats.add("csv")
        else:
            with open(file, "rb") as handle:
                formats.add("parquet" if handle.read(4) == b"PAR1" else "csv")
    if len(formats) > 1:
        raise DataFileError("The files mix CSV and Parquet; give a folder or pattern of one format.")
    return formats.pop()


def _delimiter(file: Path, encoding: str | None) -> str:
    """The loader's delimiter detection on the first 256 KB of the first file."""
    opener = gzip.open if file.name.lower().endswith(".gz") else open
    try:
        with opener(file, "rb") as handle:
            head = handle.read(262_144)
    except OSError:
        raise DataFileError(f"'{file.name}' could not be read; it may be damaged.") from None
    return detect_delimiter(head.decode(encoding or "utf-8", errors="replace").lstrip("\ufeff"))


def scan(
    path: str | os.PathLike,
    *,
    engine: Engine | str = "duckdb",
    roles: Mapping[str, Role | str] | None = None,
    missing: str = "category",
    delimiter: str | None = None,
    encoding: str | None = None,
    name: str | None = None,
) -> EngineTable:
    """CSV or Parquet files (a file, a folder of them, or a glob pattern) read in place.

    CSV files need a header row; the delimiter is detected (``,`` ``;`` TAB ``|``)
    unless given; ``.gz`` files are read compressed. ``roles`` overrides the roles
    guessed from the column names. Nothing is read here but the schema.

    >>> import tempfile, pandas as pd
    >>> folder = tempfile.mkdtemp()
    >>> pd.DataFrame({"age": [30, 30, 40], "sex": ["f", "f", "m"]}).to_parquet(f"{folder}/part-0.parquet")
    >>> scan(folder).columns
    ('age', 'sex')
    """
    if isinstance(engine, str):
        engine = shared(engine)
    files = files_of(path)
    fmt = file_format(files)
    if delimiter is not None and len(delimiter) != 1:
        raise DataFileError("The delimiter must be a single character such as , ; | or TAB.")
    names = [str(f) for f in files] if engine.name != "spark" else _spark_visible(files)
    sep = None
    with errors(engine):
        if fmt == "parquet":
            raw = _read_parquet(engine, names)
        else:
            sep = delimiter or _delimiter(files[0], encoding)
            sep = sep if sep in DELIMITERS or delimiter else ","
            raw = _read_csv(engine, names, sep, encoding)
        stripped = {c.strip(): c for c in raw.columns if c.strip() != c and c.strip()}
        if stripped:
            raw = raw.rename(stripped)
    numbering = None
    if engine.name == "spark":

        def numbering():
            """The files read again one after another, each record numbered (``EngineTable.numbered``)."""
            with errors(engine):
                frames = [_spark_frame(engine, fmt, [f], sep, encoding) for f in names]
                frame = frames[0]
                for other in frames[1:]:
                    frame = frame.unionByName(other)
                numbered = _spark_numbered(engine, frame)
                return numbered.rename(stripped) if stripped else numbered

    table = EngineTable(
        name=name or os.fspath(path),
        engine=engine,
        raw=raw,
        roles=_guessed_roles(raw.columns, roles),
        missing="category",
        from_files=True,
        _numbering=numbering,
    )
    return table.with_missing(missing)


_LINKS: list[str] = []  # folders of visible names for files Spark would skip (removed at exit)


def _remove_links() -> None:
    for folder in _LINKS:
        shutil.rmtree(folder, ignore_errors=True)


atexit.register(_remove_links)


def _spark_visible(files: Sequence[Path]) -> list[str]:
    """The files' paths for Spark, which skips a file whose name starts with ``.`` or ``_`` (a
    hidden or bookkeeping file) even when named: such a file is read through a hard link (else a
    copy) with a visible name in a private folder beside it, removed when the process ends (e.g.
    the fresh hidden name a command writes its output under before renaming it)."""
    names = []
    for file in files:
        if not file.name.startswith((".", "_")):
            names.append(str(file))
            continue
        folder = tempfile.mkdtemp(prefix=".anonlib-spark-", dir=file.parent)
        _LINKS.append(folder)
        visible = Path(folder) / (file.name.lstrip("._") or "data")
        try:
            os.link(file, visible)
        except OSError:
            shutil.copyfile(file, visible)
        names.append(str(visible))
    return names


def _read_parquet(engine: Engine, files: list[str]):
    if engine.name == "spark":
        return _spark_view(engine, _spark_frame(engine, "parquet", files))
    return engine.backend.read_parquet(files)


def _read_csv(engine: Engine, files: list[str], delimiter: str, encoding: str | None):
    if engine.name == "spark":
        return _spark_view(engine, _spark_frame(engine, "csv", files, delimiter, encoding))
    options = {"all_varchar": True, "header": True, "delim": delimiter, "quote": '"', "escape": '"'}
    if encoding:
        options["encoding"] = encoding
    return engine.backend.read_csv(files, **options)


def _spark_frame(engine: Engine, fmt: str, files: list[str], delimiter: str | None = None, encoding: str | None = None):
    """Spark's DataFrame of ``files`` (Parquet, or CSV read as text with a header)."""
    reader = engine.backend._session.read
    if fmt == "parquet":
        return reader.parquet(*files)
    return reader.csv(
        files,
        header=True,
        inferSchema=False,
        sep=delimiter,
        quote='"',
        escape='"',
        encoding=encoding or "UTF-8",
        mode="FAILFAST",
    )


def _spark_numbered(engine: Engine, frame):
    """``frame`` with ``ROW`` (``monotonically_increasing_id``: increasing in the partitions' order,
    and within each in its rows' order), as a view."""
    from pyspark.sql import functions

    return _spark_view(engine, frame.withColumn(ROW, functions.monotonically_increasing_id()))


def _spark_view(engine: Engine, frame):
    from ibis import util

    name = util.gen_name("anonlib_scan")
    frame.createOrReplaceTempView(name)
    return engine.backend.table(name)


def from_frame(
    frame: pd.DataFrame,
    engine: Engine | str = "duckdb",
    *,
    name: str = "table",
    roles: Mapping[str, Role | str] | None = None,
    missing: str = "category",
) -> EngineTable:
    """A pandas DataFrame put on an engine (for tests and small tables; values taken as they are)."""
    import ibis

    if isinstance(engine, str):
        engine = shared(engine)
    numbering = None
    with errors(engine):
        if engine.name == "spark":
            spark_frame = engine.backend._session.createDataFrame(_spark_ready(frame))
            raw = _spark_view(engine, spark_frame)

            def numbering():
                """The frame's rows numbered in its order (its partitions are slices of it, in order)."""
                with errors(engine):
                    return _spark_numbered(engine, spark_frame)

        else:
            raw = engine.backend.create_table(ibis.util.gen_name("anonlib_frame"), ibis.memtable(frame), temp=True)
    table = EngineTable(
        name=name, engine=engine, raw=raw, roles=_guessed_roles(raw.columns, roles), _numbering=numbering
    )
    return table.with_missing(missing)


def _spark_ready(frame: pd.DataFrame) -> pd.DataFrame:
    """Pandas' nullable and text dtypes as plain objects with None, which Spark understands."""
    out = {}
    for c in frame.columns:
        series = frame[c]
        if pd.api.types.is_float_dtype(series) and not pd.api.types.is_extension_array_dtype(series):
            out[c] = series
        else:
            out[c] = series.astype(object).where(series.notna(), None)
    return pd.DataFrame(out)


def from_dataset(dataset: Dataset, engine: Engine | str = "duckdb") -> EngineTable:
    """A ``Dataset`` put on an engine, keeping its roles and missing policy."""
    table = from_frame(dataset.frame, engine, name=dataset.name, roles=dict(dataset.roles), missing=dataset.missing)
    return table


def from_ibis(table, *, name: str = "table", roles: Mapping[str, Role | str] | None = None) -> EngineTable:
    """A user's own Ibis table (any backend Ibis reaches), values taken as they are."""
    from .backends import engine_of

    return EngineTable(name=name, engine=engine_of(table), raw=table, roles=_guessed_roles(table.columns, roles))


def as_engine_table(source: Any, engine: Engine | str | None = None) -> EngineTable:
    """Whatever a measure was given, as a table on an engine.

    A path (file, folder, glob) is scanned in place (on DuckDB unless ``engine``
    says otherwise); an ``EngineTable`` or an Ibis table is used where it is; a
    ``Dataset`` or DataFrame is put on ``engine`` (which must then be given).

    >>> as_engine_table(pd.DataFrame({"a": [1]}))
    Traceback (most recent call last):
    ...
    anonlib.core.errors.ParameterError: Give a table: a pandas DataFrame, a path to CSV/Parquet files, or a table from anonlib.engine.scan.
    """
    if isinstance(engine, str):
        engine = shared(engine)
    if isinstance(source, EngineTable):
        return source
    if isinstance(source, (str, os.PathLike)):
        return scan(source, engine=engine or shared("duckdb"))
    if _is_ibis_table(source):
        return from_ibis(source)
    if engine is not None and isinstance(source, Dataset):
        return from_dataset(source, engine)
    if engine is not None and isinstance(source, pd.DataFrame):
        return from_frame(source, engine)
    raise ParameterError(
        "Give a table: a pandas DataFrame, a path to CSV/Parquet files, or a table from anonlib.engine.scan."
    )


def _is_ibis_table(value: Any) -> bool:
    return type(value).__module__.startswith("ibis.") and hasattr(value, "group_by") and hasattr(value, "schema")
