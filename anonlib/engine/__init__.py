"""The same counts on data that does not fit in memory: DuckDB and Spark through Ibis.

Registries hold 10^8-10^9 records in Parquet files or a warehouse. The measures
that matter at that size are group counts (class sizes, per class x sensitive
value counts), and those run where the data lives: this package writes each
count once as an Ibis expression, which DuckDB (embedded, out-of-core) and
Spark (a cluster, or local mode) execute. Only the per-class summaries come
back, and they go through the same summary-to-result functions as the
in-memory kernel's, so the answers are identical.

Users call the functions they know with a path, a scanned table or ``engine=``::

    from anonlib import engine
    from anonlib.measures.profile import risk_profile
    from anonlib.measures.leakage import leakage_table
    from anonlib.measures.models import model_values

    visits = engine.scan("registry/visits/")             # a folder of Parquet files
    risk_profile(visits, ["age", "zip", "sex"]).k
    leakage_table("registry/visits/*.parquet", ["age", "zip"], engine="spark")
    model_values(visits, ["age", "zip"], "diagnosis")     # anonlib.measures.models

    from anonlib.workflow.engine_replay import apply_recipe
    apply_recipe(recipe, "registry/visits/", out="released.parquet")

Parts: ``backends`` (starting DuckDB and Spark, one-sentence errors),
``source`` (files scanned in place, column roles, the loader's reading rules,
``as_engine_table``), ``counts`` (the group-by summaries), ``owners`` (counts in
people, histories and households: class sizes in people, signatures, the household
risk's compositions), ``size`` (what a scan is about to read and how long it takes,
said before it starts), ``writer`` (a released table written as one CSV file, byte for
byte as the in-memory release writes it, in the source's order). The engine is a
counting backend under the measures: it imports nothing but ``anonlib.core``;
the measures (``profile``, ``leakage``, ``models``, ``risk``) ask it for counts
and conclude with their own in-memory code, and the workflow re-applies a
recipe on it (``anonlib.workflow.engine_replay``).

Example:
    >>> import pandas as pd
    >>> from anonlib.measures.profile import risk_profile
    >>> df = pd.DataFrame({"zip": [1, 1, 2], "sex": ["f", "f", "m"]})
    >>> risk_profile(from_frame(df, "duckdb")).k
    1
"""

from .backends import DEFAULT_MEMORY_LIMIT, DEFAULT_SPARK_MASTER, ENGINES, Engine, connect, java_available, shared
from .counts import cell_counts, class_sizes, first_rows, size_histogram, size_histograms, summary_frame, to_pandas
from .size import ScanSize, estimate_scan, scan_note, scan_size
from .source import WEIGHT, EngineTable, as_engine_table, files_of, from_dataset, from_frame, from_ibis, scan

__all__ = [
    "DEFAULT_MEMORY_LIMIT",
    "DEFAULT_SPARK_MASTER",
    "ENGINES",
    "WEIGHT",
    "Engine",
    "EngineTable",
    "ScanSize",
    "as_engine_table",
    "cell_counts",
    "class_sizes",
    "connect",
    "estimate_scan",
    "files_of",
    "from_dataset",
    "from_frame",
    "from_ibis",
    "java_available",
    "scan",
    "scan_note",
    "scan_size",
    "shared",
    "size_histogram",
    "size_histograms",
    "summary_frame",
    "to_pandas",
    "first_rows",
]
