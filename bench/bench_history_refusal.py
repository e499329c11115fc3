"""A history search estimated before it starts (``integrity.md`` part 3): ``anonymize --power 3``
on 10^5 people x 10 records is refused by its estimate in one sentence.

Target: refused, not run (it ran 420 s and 3.3 GB before it was killed): the time
to the refusal is reading and pseudonymising the file (about 15 s here, loaded), its peak
memory that of the table; the sentence names the power, the combinations and the time limit.
"""

from __future__ import annotations

import contextlib
import io
import tempfile
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

from anonlib.cli import main
from bench import Benchmark

PEOPLE, RECORDS = 100_000, 10


def _inputs() -> Path:
    rng = np.random.default_rng(0)
    n = PEOPLE * RECORDS
    folder = Path(tempfile.mkdtemp(prefix="bench-history-"))
    frame = pd.DataFrame(
        {
            "pid": np.repeat([f"p{i:06d}" for i in range(PEOPLE)], RECORDS),
            "age": rng.integers(20, 90, n),
            "zip": rng.integers(10000, 10100, n),
            "sex": rng.choice(["f", "m"], n),
        }
    )
    frame.to_csv(folder / "panel.csv", index=False)
    return folder


def _refused(folder: Path):
    argv = [
        "anonymize", str(folder / "panel.csv"), "--person", "pid", "--pseudonymize", "pid", "--key-file",
        str(folder / "k.key"), "--shield", "age,zip,sex", "--k", "5", "--power", "3", "--out",
        str(folder / "out.csv"),
    ]  # fmt: skip
    err = io.StringIO()
    tracemalloc.start()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return code, err.getvalue().strip(), peak


def _note(result) -> str:
    code, said, peak = result
    verdict = "ok" if code == 2 and "Checking histories at power 3" in said else "NOT REFUSED"
    return f"exit {code}, peak {peak / 1e9:.2f} GB (tracemalloc): {said[:160]} -> {verdict}"


BENCHMARKS = [
    Benchmark(
        "history search: power 3 on 10^5 people x 10 records refused by its estimate",
        None,
        _inputs,
        _refused,
        repeat=1,
        note=_note,
    ),
]
