"""The project key never reaches what an engine keeps on disk (scale.md part 2):
``anonymize --engine duckdb`` with the person column pseudonymized and dates shifted per person
under a key, on a DuckDB whose memory limit makes it spill. Every spill file DuckDB writes is
read while it exists (DuckDB removes them when a query ends), and the query log (every
statement the engine ran), what is left in its temporary folder, standard output, standard
error and every file written are searched for the key: as its bytes, its hex (both cases, as
the key file holds it) and its base64. Spark's shuffle files: ``test_engine_spark``."""

from __future__ import annotations

import base64
import hashlib
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd

import anonlib.engine as eng
from anonlib.__main__ import main
from anonlib.engine import backends

# a key that looks like one: a run of consecutive bytes (the first choice, 7..38) was found in a
# spill file holding row numbers, a coincidence, not the key
KEY = hashlib.sha256(b"anonlib: the engine's key-files test").digest()
SPELLINGS = (KEY, KEY.hex().encode(), KEY.hex().upper().encode(), base64.b64encode(KEY), base64.urlsafe_b64encode(KEY))


def spelled(data: bytes) -> list[bytes]:
    """The spellings of the key found in ``data``.

    >>> spelled(b"x" + KEY.hex().encode()) == [KEY.hex().encode()]
    True
    """
    return [s for s in SPELLINGS if s in data]


class SpillReader:
    """Reads every file in ``folder`` every few milliseconds while it exists, keeping how many
    were seen, their bytes read, and any spelling of the key found in them."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.files, self.bytes, self.found = folder, set(), 0, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)

    def __enter__(self) -> SpillReader:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _read(self) -> None:
        while not self._stop.is_set():
            for path in self.folder.rglob("*"):
                try:
                    data = path.read_bytes()
                except (FileNotFoundError, IsADirectoryError, PermissionError):
                    continue
                self.files.add(path.name)
                self.bytes += len(data)
                self.found += spelled(data)
            time.sleep(0.002)


def test_the_key_is_in_no_spill_file_query_log_output_or_message(tmp_path: Path, monkeypatch, capsys) -> None:
    rng = np.random.default_rng(11)
    n = 30_000  # one record per person: the engine's hash tables of people outgrow 36 MB and spill
    visits = pd.Timestamp("2016-01-01") + pd.to_timedelta(rng.integers(0, 2_000, n), unit="D")
    panel = pd.DataFrame(
        {
            "pid": [f"P{i:07d}" for i in rng.permutation(n)],
            "visit": pd.Series(visits.strftime("%Y-%m-%d")).where(rng.random(n) > 0.05, None),
            "age": rng.integers(20, 90, n),
            "sex": rng.choice(["f", "m"], n),
        }
    )
    panel.to_csv(tmp_path / "panel.csv", index=False)
    key_file = tmp_path / "project.key"
    key_file.write_text(KEY.hex() + "\n")
    key_file.chmod(0o600)
    spill, log = tmp_path / "spill", tmp_path / "queries.log"
    spill.mkdir()
    connect = backends.connect

    def spilling(engine: str, **options):  # the CLI's DuckDB, with a small memory and our own folders
        running = connect(engine, memory_limit="36MB", temp_directory=str(spill), threads=1)
        running.backend.raw_sql(f"SET log_query_path = '{log}'")
        return running

    monkeypatch.setattr(eng, "connect", spilling)
    out, recipe = tmp_path / "released.csv", tmp_path / "recipe.json"
    argv = ["anonymize", str(tmp_path / "panel.csv"), "--engine", "duckdb", "--person", "pid"]
    argv += ["--pseudonymize", "pid", "--shift-dates", "visit", "--keep", "visit", "--key-file", str(key_file)]
    argv += ["--shield", "age,sex", "--k", "5", "--max-suppressed", "0.5", "--out", str(out), "--recipe", str(recipe)]
    with SpillReader(spill) as reader:
        code = main(argv)
    said = capsys.readouterr()
    assert code == 0, said.err
    assert reader.files and reader.bytes > 1_000_000, "DuckDB did not spill: the test read no spill file"
    assert reader.found == []
    queries = log.read_bytes()
    assert b"READ_CSV" in queries.upper() and queries.count(b"\n") > 20  # the log holds the engine's statements
    assert spelled(queries) == []
    left = b"".join(p.read_bytes() for p in spill.rglob("*") if p.is_file())
    assert spelled(left) == [] and spelled(said.out.encode()) == [] and spelled(said.err.encode()) == []
    for written in (out, recipe):
        assert spelled(written.read_bytes()) == []
    released = pd.read_csv(out, dtype=str)
    assert len(released) > 0.5 * n and not set(released["pid"]) & set(panel["pid"])  # pseudonyms, not the ids
    assert spelled(key_file.read_bytes()) == [KEY.hex().encode()]  # the search finds the key where it is
