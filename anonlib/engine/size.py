"""What an engine is about to read, said before it reads it: files, bytes, records.

A group-by over 10^8 records takes a while even on DuckDB; the command line says
beforehand how much it is about to scan and about how long that takes, as the
in-memory pages do with ``anonlib.core.budget`` estimates. Parquet files state
their records in their footers (read here without touching the data); CSV files
only their bytes, from which the time is estimated.

The rates are measured on this project's 2-core machine class (``docs/engine.md``):
DuckDB groups a Parquet file at about 40 million cells (records x columns) a
second and parses CSV at about 60 MB a second; Spark's local mode is slower and
pays its start-up.

Example:
    >>> import tempfile, pandas as pd
    >>> folder = tempfile.mkdtemp()
    >>> pd.DataFrame({"age": [30, 31, 40]}).to_parquet(f"{folder}/part-0.parquet")
    >>> size = scan_size(folder)
    >>> size.describe()
    '1 Parquet file (3 records, 0.0 MB)'
    >>> estimate_scan(size, 1).interactive
    True
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..core.budget import WorkEstimate, duration_text
from .source import file_format, files_of

# seconds per cell (record x column grouped) and per byte of CSV, per engine and pass
CELL_SECONDS = {"duckdb": 2.5e-8, "spark": 1.5e-7}
CSV_BYTE_SECONDS = {"duckdb": 1.6e-8, "spark": 6e-8}
START_SECONDS = {"duckdb": 0.2, "spark": 10.0}
CSV_BYTES_PER_CELL = 8  # to guess a CSV's records from its bytes (only for the estimate)


@dataclass(frozen=True)
class ScanSize:
    """The files a path means and how large they are; ``records`` is exact for
    Parquet (from the footers) and None for CSV (unknown until read)."""

    files: int
    format: str
    bytes: int
    records: int | None

    def describe(self) -> str:
        """``'3 Parquet files (10,013,784 records, 35.5 MB)'``."""
        kind = "Parquet" if self.format == "parquet" else "CSV"
        files = f"{self.files:,} {kind} file{'s' if self.files != 1 else ''}"
        size = f"{self.bytes / 1e6:,.1f} MB"
        return f"{files} ({self.records:,} records, {size})" if self.records is not None else f"{files} ({size})"


def scan_size(path: str | os.PathLike) -> ScanSize:
    """The size of what ``anonlib.engine.scan(path)`` would read (footers only for Parquet).

    >>> scan_size("no/such/*.parquet")
    Traceback (most recent call last):
    ...
    anonlib.core.errors.DataFileError: No file matches 'no/such/*.parquet'; check the path (a file, a folder or a pattern such as visits/*.parquet).
    """
    files = files_of(path)
    fmt = file_format(files)
    total = sum(f.stat().st_size for f in files)
    records = None
    if fmt == "parquet":
        try:
            import pyarrow.parquet as pq

            records = sum(int(pq.read_metadata(f).num_rows) for f in files)
        except Exception:  # a damaged footer: the scan itself will say so in one sentence
            records = None
    return ScanSize(files=len(files), format=fmt, bytes=total, records=records)


def estimate_scan(
    size: ScanSize, columns: int, engine: str = "duckdb", *, passes: int = 1, what: str = "grouping the records"
) -> WorkEstimate:
    """The time ``passes`` group-bys over ``columns`` columns of ``size`` take on ``engine``
    (``operations``: cells read). Peak memory is the engine's own limit, not estimated here.

    >>> e = estimate_scan(ScanSize(1, "parquet", 35_000_000, 10_013_784), 9, passes=2)
    >>> e.operations, round(e.seconds, 1)
    (180248112, 4.7)
    """
    rate = CELL_SECONDS.get(engine, CELL_SECONDS["spark"])
    start = START_SECONDS.get(engine, START_SECONDS["spark"])
    width = max(int(columns), 1)
    if size.records is not None:
        cells = size.records * width
        seconds = cells * rate
    else:
        cells = size.bytes // CSV_BYTES_PER_CELL
        seconds = size.bytes * CSV_BYTE_SECONDS.get(engine, CSV_BYTE_SECONDS["spark"])
    return WorkEstimate(what, operations=int(cells) * passes, seconds=start + seconds * passes, peak_bytes=0)


def scan_note(size: ScanSize, estimate: WorkEstimate, engine: str) -> str:
    """The sentence said before the scan.

    >>> scan_note(ScanSize(1, "parquet", 35_000_000, 10_013_784), estimate_scan(ScanSize(1, "parquet", 1, 10_013_784), 9), "duckdb")
    'duckdb is about to read 1 Parquet file (10,013,784 records, 35.0 MB): grouping the records, about 2 seconds on this computer.'
    """
    took = duration_text(estimate.seconds)
    took = took if took.startswith("under") else f"about {took}"
    return f"{engine} is about to read {size.describe()}: {estimate.what}, {took} on this computer."
