"""Loading benchmarks (scale.md, first row): a 10^6-record CSV against pandas.read_csv, and
the Parquet and Excel size limits.

The CSV is Adult resampled to 10^6 records (15 columns, about 100 MB), written to a
temporary folder; the second row reads the same records with CRLF line ends (a file written
on Windows), whose whole numbers the loader also parses at once. Each reader runs in a fresh
process, so its peak memory can be measured: the growth of the process's peak resident size (VmHWM, reset through
/proc/self/clear_refs: Linux only) over its size after the imports. ``load_table`` and
``pandas.read_csv`` alternate, seven runs each, in the same benchmark run; the note
prints the ratios of the medians and the spread of the per-round time ratios (target: at
most 1.5 for time and for memory), for a path and for bytes (an upload). CPU seconds are printed
beside wall seconds: on a shared machine they show the work done, which the wall time
hides behind the wait for a core.

The limits: a Parquet file of 10^8 records (about 450 KB) and an xlsx of 10^6 x 8 cells
(about 26 MB) must be refused with a sentence in seconds and a few MB; an xlsx at the
limit (10^6 cells) is read within a bound.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from anonlib.core.samples import SAMPLES
from bench import Benchmark

ROOT = Path(__file__).resolve().parent.parent
RECORDS = 1_000_000
RUNS = 7  # this 2-core VM's timings vary by 20-30% from run to run: the spread is printed

# One reader in a fresh process: seconds, CPU seconds and peak memory growth (MB) as JSON.
_CHILD = r"""
import io, json, sys, time
sys.path.insert(0, sys.argv[1])
import pandas as pd
from anonlib.core.errors import AnonlibError
from anonlib.core.loading import load_table
reader, path, mode = sys.argv[2:5]
source = open(path, "rb").read() if mode == "bytes" else path
def status(key):
    return next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith(key))
# ru_maxrss survives exec (it would report the parent's peak): reset the high-water mark
open("/proc/self/clear_refs", "w").write("5")
base = status("VmRSS:")
wall, cpu = time.perf_counter(), time.process_time()
outcome = ""
try:
    if reader == "pandas":
        shape = pd.read_csv(io.BytesIO(source) if mode == "bytes" else source).shape
    else:
        shape = load_table(source, name=path).frame.shape
    outcome = f"{shape[0]:,} x {shape[1]}"
except AnonlibError as err:
    outcome = f"{type(err).__name__}: {err}"
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
peak = status("VmHWM:")
print(json.dumps({"seconds": wall, "cpu": cpu, "mb": (peak - base) / 1024, "outcome": outcome}))
"""


def _measure(reader: str, path: Path, mode: str = "path") -> dict:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(ROOT), reader, str(path), mode],
        capture_output=True,
        text=True,
        check=True,
        timeout=900,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


@dataclass(frozen=True)
class Ratio:
    """Medians of the runs of ``load_table`` and of ``pandas.read_csv`` on the same file."""

    mode: str
    ours: dict
    pandas: dict
    rounds: tuple[float, ...]  # our time over pandas' time in each round (pandas then ours, back to back)

    def text(self) -> str:
        o, p = self.ours, self.pandas
        return (
            f"{self.mode}: time {o['seconds']:.2f} s / {p['seconds']:.2f} s = {o['seconds'] / p['seconds']:.2f}x "
            f"(per round {min(self.rounds):.2f}-{max(self.rounds):.2f}x, median {statistics.median(self.rounds):.2f}x) "
            f"(CPU {o['cpu']:.2f} / {p['cpu']:.2f} = {o['cpu'] / p['cpu']:.2f}x), "
            f"peak memory +{o['mb']:.0f} MB / +{p['mb']:.0f} MB = {o['mb'] / p['mb']:.2f}x"
        )


def _adult_csv() -> Path:
    """Adult resampled to 10^6 records in a temporary folder (kept for the process's life)."""
    import pandas as pd

    folder = Path(tempfile.mkdtemp(prefix="bench-loading-"))
    adult = pd.read_csv(SAMPLES["adult"].path, dtype=str, keep_default_na=False)
    rows = np.random.default_rng(14).integers(0, len(adult), RECORDS)
    path = folder / "adult_1e6.csv"
    adult.iloc[rows].to_csv(path, index=False)
    return path


def _adult_crlf_csv() -> Path:
    """The same 10^6 records with CRLF line ends, as Windows writes a file."""
    path = _adult_csv()
    crlf = path.with_name("adult_1e6_crlf.csv")
    crlf.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    return crlf


def _compare(path: Path, modes: tuple[str, ...] = ("path", "bytes")) -> list[Ratio]:
    ratios = []
    for mode in modes:
        runs: dict[str, list[dict]] = {"ours": [], "pandas": []}
        for _ in range(RUNS):  # alternating, so both see the same load on the machine
            runs["pandas"].append(_measure("pandas", path, mode))
            runs["ours"].append(_measure("ours", path, mode))
        medians = {
            who: {key: statistics.median(r[key] for r in rs) for key in ("seconds", "cpu", "mb")}
            for who, rs in runs.items()
        }
        rounds = tuple(o["seconds"] / p["seconds"] for o, p in zip(runs["ours"], runs["pandas"]))
        ratios.append(Ratio(mode, medians["ours"], medians["pandas"], rounds))
    return ratios


def _parquet_100_million() -> Path:
    """10^8 records in 100 row groups of a constant (the metadata is what matters)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(tempfile.mkdtemp(prefix="bench-loading-")) / "records_1e8.parquet"
    group = pa.table(
        {"zip": pa.array([52001] * 1_000_000, pa.int32()), "sex": pa.array(["F"] * 1_000_000).dictionary_encode()}
    )
    with pq.ParquetWriter(path, group.schema, compression="zstd", write_statistics=False) as writer:
        for _ in range(100):
            writer.write_table(group, row_group_size=1_000_000)
    return path


def _xlsx(rows: int, columns: int = 8, declared: bool = True) -> Path:
    """A first sheet of rows x columns numbers, written as raw XML (openpyxl would take minutes)."""
    letters = [chr(65 + j) for j in range(columns)]
    parts = {
        "[Content_Types].xml": '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>',
        "_rels/.rels": '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>',
        "xl/workbook.xml": '<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>',
        "xl/_rels/workbook.xml.rels": '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>',
    }
    path = Path(tempfile.mkdtemp(prefix="bench-loading-")) / f"sheet_{rows}x{columns}.xlsx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in parts.items():
            archive.writestr(name, text)
        with archive.open("xl/worksheets/sheet1.xml", "w") as sheet:
            sheet.write(
                b'<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
            )
            if declared:
                sheet.write(f'<dimension ref="A1:{letters[-1]}{rows}"/>'.encode())
            sheet.write(b"<sheetData>")
            rng = np.random.default_rng(8)
            for start in range(1, rows + 1, 10_000):
                values = rng.integers(0, 100_000, (min(10_000, rows + 1 - start), columns))
                sheet.write(
                    "".join(
                        f'<row r="{start + i}">'
                        + "".join(f'<c r="{l}{start + i}"><v>{v}</v></c>' for l, v in zip(letters, row))
                        + "</row>"
                        for i, row in enumerate(values.tolist())
                    ).encode()
                )
            sheet.write(b"</sheetData></worksheet>")
    return path


def _limit(result: dict) -> str:
    return f"{result['seconds']:.2f} s (CPU {result['cpu']:.2f} s), +{result['mb']:.0f} MB: {result['outcome'][:90]}"


BENCHMARKS = [
    Benchmark(
        "loading: CSV 10^6 records x 15 vs pandas.read_csv (7 runs each)",
        None,
        _adult_csv,
        _compare,
        repeat=1,
        reference="target: <= 1.5x pandas time and peak memory, measured in the same run",
        note=lambda ratios: "; ".join(r.text() for r in ratios),
    ),
    Benchmark(
        "loading: the same CSV with CRLF line ends vs pandas.read_csv (7 runs each)",
        None,
        _adult_crlf_csv,
        lambda path: _compare(path, ("path",)),
        repeat=1,
        reference="target: <= 1.5x pandas time, measured in the same run (whole numbers read at once, CRs counted)",
        note=lambda ratios: "; ".join(r.text() for r in ratios),
    ),
    Benchmark(
        "loading: Parquet of 10^8 records refused from metadata",
        None,
        _parquet_100_million,
        lambda path: (_measure("ours", path), path.stat().st_size),
        repeat=1,
        note=lambda r: f"{r[1] / 1e3:.0f} KB file; {_limit(r[0])}",
    ),
    Benchmark(
        "loading: xlsx of 10^6 x 8 cells refused (declared size)",
        None,
        lambda: _xlsx(1_000_000),
        lambda path: (_measure("ours", path), path.stat().st_size),
        repeat=1,
        note=lambda r: f"{r[1] / 1e6:.0f} MB file; {_limit(r[0])}",
    ),
    Benchmark(
        "loading: xlsx of 10^6 x 8 cells, no declared size, refused",
        None,
        lambda: _xlsx(1_000_000, declared=False),
        lambda path: _measure("ours", path),
        repeat=1,
        note=_limit,
    ),
    Benchmark(
        "loading: xlsx at the limit (125,000 x 8 = 10^6 cells) read",
        None,
        lambda: _xlsx(125_000),
        lambda path: _measure("ours", path),
        repeat=1,
        note=_limit,
    ),
]
