"""Starting the data engines, and turning their failures into one sentence.

``connect("duckdb")`` opens an embedded DuckDB with a memory limit and a
private spill folder, so a group-by larger than memory goes out of core
instead of failing. ``connect("spark", master=...)`` starts (or reuses) the
process's Spark session: local mode by default, a cluster when given its
master URL. Both are reached through Ibis, so every query in this package is
written once.

Spark's JVM writes its logs and progress bars to the console; here it is
started with its output sent nowhere, so a user sees one sentence when
something fails, never a Java stack trace.

Example:
    >>> with connect("duckdb") as engine:
    ...     engine.name
    'duckdb'
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import AnonlibError, EngineError, EngineUnavailableError, ParameterError

ENGINES = ("duckdb", "spark")


def quarter_of_memory() -> int:
    """A quarter of this machine's memory (of the container's, when it is capped lower), at least
    2 GB, in MB: DuckDB's default memory limit and Spark's local driver memory. Past the limit
    DuckDB spills to its private folder; at 10^8 records a search's node took 104-109 CPU-s within
    2 GB and 77 within 6 GB (bench/NOTES.md). Spark in local mode runs its tasks and keeps its
    checkpoints in the driver's Java heap: with 2 GB its search at 10^7 records ended in Java's
    ``OutOfMemoryError`` (bench/NOTES.md).

    >>> quarter_of_memory() >= 2048
    True
    """
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for capped in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = Path(capped).read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            total = min(total, int(text))
    return max(2 * 1024**3, total // 4) // 1024**2


DEFAULT_MEMORY_LIMIT = f"{quarter_of_memory()}MB"
DEFAULT_SPARK_MASTER = "local[*]"
# Spark's defaults are for clusters; a laptop or a CI job wants few shuffle partitions
LOCAL_SPARK_CONFIG = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "8",
    "spark.driver.memory": f"{quarter_of_memory()}m",  # Java's -Xmx: the tasks and the checkpoints
    "spark.sql.session.timeZone": "UTC",
    # off on any master: Spark 4.3's planner, propagating a UNION ALL's constraints over a checkpoint
    # (``owners.computed_once``), failed on the search's passes on any m records ("key not found:
    # anonlib_owner"); the planner then infers fewer filters, none of which these queries need
    "spark.sql.constraintPropagation.enabled": "false",
}
_MESSAGE_LIMIT = 300


@dataclass(eq=False)
class Engine:
    """A connection to a data engine (through Ibis) that runs anonlib's group counts.

    ``name`` is ``"duckdb"``, ``"spark"`` or the Ibis backend's name for a
    table a user brought from elsewhere (Trino, BigQuery, Postgres...).
    """

    name: str
    backend: Any = field(repr=False)
    master: str | None = None
    _temp_directory: str | None = field(default=None, repr=False)
    closed: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        _ENGINES_BY_BACKEND[id(self.backend)] = self

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection and remove DuckDB's spill folder (a shared Spark session stays up)."""
        if self.closed:
            return
        self.closed = True
        _ENGINES_BY_BACKEND.pop(id(self.backend), None)
        if self.name == "duckdb":
            with errors(self):
                self.backend.disconnect()
        if self._temp_directory:
            shutil.rmtree(self._temp_directory, ignore_errors=True)
            self._temp_directory = None

    def run(self, expr) -> Any:
        """Execute an Ibis expression and return its (small) result as a pyarrow Table."""
        with errors(self):
            if self.name == "spark":  # Arrow straight from Spark, no detour through pandas
                return self.backend._session.sql(self.backend.compile(expr.as_table())).toArrow()
            return self.backend.to_pyarrow(expr.as_table())

    def value(self, expr) -> Any:
        """Execute a scalar Ibis expression (a count, a sum) and return its Python value."""
        result = self.run(expr)
        return result.column(0)[0].as_py() if result.num_rows else None


_ENGINES_BY_BACKEND: weakref.WeakValueDictionary[int, Engine] = weakref.WeakValueDictionary()
_SHARED: dict[tuple[str, str | None], Engine] = {}


def connect(
    engine: str = "duckdb",
    *,
    master: str | None = None,
    memory_limit: str = DEFAULT_MEMORY_LIMIT,
    temp_directory: str | None = None,
    threads: int | None = None,
) -> Engine:
    """Open a data engine: ``"duckdb"`` (embedded, out-of-core) or ``"spark"``.

    DuckDB keeps to ``memory_limit`` and spills to ``temp_directory`` (a private
    folder removed on ``close`` when not given). Spark runs in local mode on
    this machine's cores unless ``master`` names a cluster
    (``spark://host:7077``, ``yarn``, ``k8s://...``); one Spark session serves
    the whole process.

    >>> connect("oracle")
    Traceback (most recent call last):
    ...
    anonlib.core.errors.ParameterError: 'oracle' is not an engine; use duckdb or spark.
    """
    if engine == "duckdb":
        if master is not None:
            raise ParameterError("A Spark master URL only applies to --engine spark.")
        return _connect_duckdb(memory_limit, temp_directory, threads)
    if engine == "spark":
        return _connect_spark(master or DEFAULT_SPARK_MASTER)
    raise ParameterError(f"'{engine}' is not an engine; use duckdb or spark.")


def shared(engine: str, *, master: str | None = None) -> Engine:
    """One engine of each kind per process, for library calls given ``engine="duckdb"``
    or ``"spark"`` by name (Spark's start-up takes seconds, so it is paid once)."""
    key = (engine, master)
    current = _SHARED.get(key)
    if current is None or current.closed:
        current = _SHARED[key] = connect(engine, master=master)
    return current


def engine_of(table) -> Engine:
    """The Engine an Ibis table belongs to (wrapping a user's own Ibis backend if need be)."""
    backend = table._find_backend()
    known = _ENGINES_BY_BACKEND.get(id(backend))
    if known is not None:
        return known
    name = getattr(backend, "name", "ibis")
    return Engine(name="spark" if name == "pyspark" else name, backend=backend)


def _connect_duckdb(memory_limit: str, temp_directory: str | None, threads: int | None) -> Engine:
    try:
        import ibis
    except ImportError:  # pragma: no cover - ibis is a runtime requirement
        raise EngineUnavailableError(
            "The DuckDB engine needs the packages in requirements.txt (ibis-framework with duckdb)."
        ) from None
    owned = temp_directory is None
    folder = tempfile.mkdtemp(prefix="anonlib-duckdb-") if owned else temp_directory
    config: dict[str, Any] = {
        "memory_limit": memory_limit,
        "temp_directory": folder,
        "preserve_insertion_order": False,
    }
    if threads:
        config["threads"] = int(threads)
    try:
        backend = ibis.duckdb.connect(**config)
    except Exception as err:
        if owned:
            shutil.rmtree(folder, ignore_errors=True)
        raise EngineError(f"DuckDB could not start: {_first_line(err)}") from None
    engine = Engine(name="duckdb", backend=backend, _temp_directory=folder if owned else None)
    atexit.register(engine.close)
    return engine


def java_available() -> bool:
    """Whether a Java runtime is on this machine (Spark needs Java 17 or newer)."""
    home = os.environ.get("JAVA_HOME")
    if home and os.access(os.path.join(home, "bin", "java"), os.X_OK):
        return True
    return shutil.which("java") is not None


def _connect_spark(master: str) -> Engine:
    for engine in list(_ENGINES_BY_BACKEND.values()):
        if engine.name == "spark" and engine.master == master:
            return engine
    try:
        import ibis
        from pyspark import SparkConf, SparkContext
        from pyspark.java_gateway import launch_gateway
        from pyspark.sql import SparkSession
    except ImportError:
        raise EngineUnavailableError(
            "The Spark engine is an optional extra; install it with pip install 'anonlib[spark]' "
            "(or pip install pyspark), or use --engine duckdb."
        ) from None
    if not java_available():
        raise EngineUnavailableError(
            "Spark needs Java 17 or newer and none was found; install it (on Debian: "
            "apt-get install openjdk-17-jre-headless) or use --engine duckdb."
        )
    # PySpark warns about every pandas newer than it was tested with; anonlib only
    # moves small summaries through pandas, so the warning tells a user nothing
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support", category=FutureWarning)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    local = master.startswith("local")
    if local:
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    conf = SparkConf().setMaster(master).setAppName("anonlib")
    for key, value in LOCAL_SPARK_CONFIG.items():
        if local or key.startswith(("spark.ui", "spark.sql.session", "spark.sql.constraintPropagation")):
            conf.set(key, value)
    active = SparkContext._active_spark_context
    if active is not None and active.master != master:
        raise EngineError(
            f"This process already runs Spark on '{active.master}'; start a new process to use '{master}'."
        )
    try:
        if active is None:
            # the JVM's console output (log4j, progress bars, stack traces) goes nowhere
            gateway = launch_gateway(conf, popen_kwargs={"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL})
            context = SparkContext(conf=conf, gateway=gateway)
        else:
            context = SparkContext._active_spark_context
        context.setLogLevel("ERROR")
        session = SparkSession(context)
        backend = ibis.pyspark.connect(session)
    except AnonlibError:
        raise
    except Exception as err:
        raise EngineUnavailableError(
            f"Spark could not start on '{master}' ({_first_line(err)}); check Java 17 and the master URL, "
            "or use --engine duckdb."
        ) from None
    return Engine(name="spark", backend=backend, master=master)


def _first_line(err: BaseException) -> str:
    """The gist of an engine's error: its first meaningful line, without Java frames."""
    text = str(err)
    if hasattr(err, "java_exception"):  # py4j: the Java exception's own message
        try:
            text = str(err.java_exception.getMessage())
        except Exception:
            pass
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith(("at ", "JVM stacktrace", "Traceback", "File "))]
    line = lines[0] if lines else type(err).__name__
    line = line.rstrip(".")
    return line if len(line) <= _MESSAGE_LIMIT else line[: _MESSAGE_LIMIT - 3] + "..."


@contextmanager
def errors(engine: Engine | str) -> Iterator[None]:
    """Run engine work; any failure of the engine becomes an ``EngineError`` with one sentence."""
    name = engine if isinstance(engine, str) else engine.name
    try:
        yield
    except AnonlibError:
        raise
    except MemoryError:
        raise EngineError(
            f"The {name} engine ran out of memory; give DuckDB a larger memory limit or use Spark on a cluster."
        ) from None
    except Exception as err:
        if isinstance(err, (KeyboardInterrupt, SystemExit)):  # pragma: no cover
            raise
        raise EngineError(f"The {name} engine could not run the query: {_first_line(err)}.") from None
