"""Counts in people (or households) and their histories, as Ibis expressions run by the engine.

The engine's side of ``anonlib.core.histories``: the same counts, made where the records are,
with only small histograms coming back.

- ``owner_pairs``: the distinct (owner, row) pairs of the table with the records of each,
  a row being the record's values on the quasi-identifiers numbered as one integer ``KEY``
  (the distinct rows numbered once and joined back: two rows share a key exactly when they
  are equal, missing values equal to each other, as the in-memory kernel groups them).
- ``class_people``: how many classes hold each number of distinct owners (class sizes in
  people), and how many owners have each smallest class (the fewest owners of any class one of
  their records is in): k, the anonymity vector and the people at risk in people.
- ``sharing``: how many owners share their history with each number of owners, for an
  adversary who knows the whole history (``power`` None: the owner's *signature*, the sorted
  multiset of its rows with their records, hashed, and compared as a sorted list where hashes
  are shared, grouped and counted), or who knows up
  to ``power`` = m <= 5 of its records (each owner's distinct sub-multisets of min(m, its
  records) rows, ``sub_multisets``: enumerated once each by joining its rows' copies with
  themselves in order; the fewest owners containing one of them).
- ``household_counts``: for a household column, the households sharing their members' rows
  together (``sharing``'s whole histories, with the records of each), and each household's
  *composition* for sdcMicro's household risk: its members' records per class size f (the
  records of the class over the whole file), the compositions grouped and counted (a household
  with a member alone in its class is certain to be found: its composition is ``f = 1`` alone).
  ``anonlib.measures.linkage`` concludes the risk from these, as from the in-memory kernel's.

Every function answers the in-memory kernel's question exactly (the property tests compare
them on random panels with blanks); none brings a record back.

Example:
    >>> import pandas as pd
    >>> from anonlib.engine import connect, from_frame
    >>> df = pd.DataFrame({"pid": ["a", "a", "b", "b", "c", "c"], "x": [0, 0, 0, 0, 0, 1]})
    >>> with connect("duckdb") as duck:
    ...     t = from_frame(df, duck)
    ...     whole = sharing(t, ["x"], "pid")
    ...     single = sharing(t, ["x"], "pid", power=1)
    >>> whole.tolist(), single.tolist()  # (owners sharing, owners): a and b alike, c alone
    ([[1, 1], [2, 2]], [[1, 1], [3, 2]])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from ..core.budget import MAX_SECONDS, check_work
from ..core.dataset import Role
from ..core.errors import ColumnError, ParameterError
from ..core.histories import adversary_power, history_work
from .source import WEIGHT, EngineTable, all_of

KEY = "anonlib_key"
OWNER = "anonlib_owner"
SIGNATURE = "anonlib_signature"
SHARED = "anonlib_shared"
OWNERS = "anonlib_owners"
RECORDS = "anonlib_records"
SIZE = "anonlib_class_size"
PART = "anonlib_part"  # a sub-multiset's records
COMPOSITION = "anonlib_composition"
HASH_PRIMES = (2_147_483_629, 2_147_483_587)  # a history's two hashes: its elements' hashes modulo these, summed
HASHES = ("anonlib_h0", "anonlib_h1")
SMALLEST = "anonlib_smallest"
LENGTH = "anonlib_length"
MAX_POWER = 5  # sub-multisets of at most this many records are enumerated by the engine (and within the estimate)
# a search on any m records counts about this many times the sub-multisets of the original rows: the
# bench's panels at power 2 (its later passes reading the fragile sub-multisets, ``owners_out``),
# 68.2 s of search (8 nodes) at 10^7 records against 9.6 s estimated for one count, and 463.9 s (4
# nodes) at 10^8 against 96 s; the whole command there 792.4 s. Ten counts (before those passes:
# 686.6 s of search at 10^8) refused the bench's 10^8 records.
SEARCH_COUNTS = 6
PACKED_BELOW = 1 << 63  # a sub-multiset's rows are grouped as one integer when ``values ** size`` is below this


def require_owners(table: EngineTable, owners: Sequence[str] = ()) -> None:
    """Every record's person and household filled in (the table's person and household columns, and
    ``owners``), as a ``Dataset`` requires of every row of its file: a blank is refused in one
    sentence naming the first such column. One query, once per table and column.

    >>> import pandas as pd
    >>> from anonlib.engine import connect, from_frame
    >>> with connect("duckdb") as duck:
    ...     require_owners(from_frame(pd.DataFrame({"hh": ["a", None]}), duck).with_roles({"hh": "household"}))
    Traceback (most recent call last):
    ...
    anonlib.core.errors.ColumnError: The household column 'hh' is blank in 1 record; every record needs the household it belongs to (fill them in, or choose another household column).
    """
    columns = list(dict.fromkeys([*(c for c in (table.person, table.household) if c), *owners]))
    table.require(columns)
    pending = [c for c in columns if ("blanks", c) not in table._pairs]
    if pending:
        counts = table.raw.aggregate(
            **{f"anonlib_blank_{j}": table.value(c).isnull().cast("int64").sum() for j, c in enumerate(pending)}
        )
        found = table.engine.run(counts).to_pylist()[0]
        table._pairs.update({("blanks", c): int(found[f"anonlib_blank_{j}"] or 0) for j, c in enumerate(pending)})
    for column in columns:
        blanks = table._pairs[("blanks", column)]
        if blanks:
            what = "household" if table.household == column else "person"
            raise ColumnError(
                f"The {what} column '{column}' is blank in {blanks:,} record{'s' if blanks != 1 else ''}; "
                f"every record needs the {what} it belongs to (fill them in, or choose another {what} column)."
            )


def owner_pairs(table: EngineTable, quasi_identifiers: Sequence[str], owner: str) -> tuple[Any, int]:
    """The lazy table of distinct (owner, row) pairs: ``OWNER``, ``KEY`` and their records
    (``WEIGHT``, at least 1), and the rows the missing policy dropped. A blank in the owner
    column (or in the table's other person or household column) is refused in one sentence, as a
    ``Dataset`` refuses it (``require_owners``)."""
    qis = list(quasi_identifiers)
    if not qis:
        raise ParameterError("Mark at least one column as quasi-identifier to count people by their records.")
    table.require([*qis, owner])
    require_owners(table, [owner])
    key = (tuple(qis), owner, table.missing, table.count)
    if key not in table._pairs:  # made once per table (a temporary table on DuckDB, cached on Spark)
        table._pairs[key] = _pairs(table, qis, owner)
    return table._pairs[key]


def _pairs(table: EngineTable, qis: list[str], owner: str) -> tuple[Any, int]:
    """The pairs with each row's class as an integer, in two steps so that the records are
    grouped by integers only:

    1. the *mapping*: the distinct raw rows of the quasi-identifiers (few: a group-by on the
       raw values, cheap on dictionary-encoded files), read as the loader reads them, the rows
       the missing policy drops counted and left out, and each numbered by its read values (in
       their order: a number stands for one read row exactly; raw rows read alike, " a" and "a",
       share it; missing values equal to each other, as the in-memory kernel groups them);
    2. the records joined to the mapping on their raw values (null-safe), and grouped by
       (owner, number) with their records (the count column summed, or the rows counted)."""
    import ibis

    what = "household" if table.household == owner else "person"
    table = table.with_roles({owner: Role.HOUSEHOLD if what == "household" else Role.PERSON})
    _, count, _ = table._analysed([*qis, owner], None)  # the columns checked, text columns typed
    raw = table.raw
    raws = [f"anonlib_raw_{j}" for j in range(len(qis))]
    distinct = raw.group_by(qis).aggregate(anonlib_rows=raw.count())
    read = distinct.select(
        *[distinct[c].name(r) for c, r in zip(qis, raws)],
        **{c: table.value(c, distinct) for c in qis},
        anonlib_rows=distinct.anonlib_rows,
    )
    dropped = 0
    if table.missing == "drop":  # a row missing one of the quasi-identifiers is dropped, and counted
        complete = all_of([read[c].notnull() for c in qis])
        dropped = int(table.engine.value(read.filter(~complete).anonlib_rows.sum()) or 0)
        read = read.filter(complete)
    numbers = read.select(*qis).distinct()
    # numbered in the order of their values: the same numbers at every run, and so the same order of
    # the rows that come back (a search's sums of floats over them, to the last digit)
    numbered = ibis.row_number().over(order_by=[numbers[c] for c in qis])
    numbers = computed_once(table, numbers.select(*qis, **{KEY: numbered.cast("int64")}))
    table._pairs[("numbers", tuple(qis), owner, table.missing, table.count)] = numbers  # ``owners_out.owner_rows``
    mapping = read.join(numbers, [read[c].identical_to(numbers[c]) for c in qis]).select(*raws, KEY)
    mapping = computed_once(table, mapping)  # small: the distinct rows, made once
    table._pairs[("mapping", tuple(qis), owner, table.missing, table.count)] = (mapping, raws)
    records = raw.join(mapping, [raw[c].identical_to(mapping[r]) for c, r in zip(qis, raws)])
    weight = table.value(count, records).sum() if count else records.count()
    pairs = records.group_by([records[owner].name(OWNER), KEY]).aggregate(**{WEIGHT: weight.cast("int64")})
    kind = raw[owner].type()
    if kind.is_floating() or (table.from_files and kind.is_string()):  # read as ``EngineTable.value`` reads
        named = pairs.rename({owner: OWNER})  # owners read alike (" a", "a") grouped together
        pairs = named.select(**{OWNER: table.value(owner, named), KEY: named[KEY], WEIGHT: named[WEIGHT]})
        pairs = pairs.group_by([OWNER, KEY]).aggregate(**{WEIGHT: pairs[WEIGHT].sum().cast("int64")})
    pairs = pairs.filter(pairs[WEIGHT] > 0)
    if table.engine.name == "duckdb":
        # stored in owner order: a search groups them by owner at every node, and DuckDB's hash
        # aggregate over 10^7 owners takes about half the CPU on rows that come owner by owner
        # (12.4 against 22.8 CPU-s for a node at 10^8 records; the sort costs about 15 once)
        pairs = pairs.order_by(OWNER)
    return computed_once(table, pairs), dropped


def computed_once(table: EngineTable, expr):
    """``expr`` computed once: a temporary table on DuckDB (in its memory limit, spilling to its
    private folder, gone with the connection); on Spark a view of the computed rows checkpointed
    in the executors (gone with the session). Not a cached view: Spark keeps a cached view's whole
    plan and analyses it again wherever the view is read, so a search that builds tables on tables
    (a node's people left, again and again) made plans that grew until Java ran out of memory on a
    60-record panel; a checkpoint's plan is its rows. Its rows are kept serialized, in memory then
    on disk: Spark's default keeps each row a Java object, and at 10^7 records the search's tables
    held 8.8 million of them (0.8 GB) when the local driver's 2 GB heap ran out (bench/NOTES.md)."""
    import uuid

    from .backends import errors

    name = f"anonlib_pairs_{uuid.uuid4().hex}"
    backend = table.engine.backend
    with errors(table.engine):
        if table.engine.name == "spark":
            from pyspark import StorageLevel

            query = backend._session.sql(backend.compile(expr))
            rows = query.localCheckpoint(eager=True, storageLevel=StorageLevel.MEMORY_AND_DISK)
            rows.createTempView(name)
            backend._cached_dataframes[name] = rows
            return backend.table(name)
        if table.engine.name != "duckdb":
            return expr.cache()
        return _duckdb_table(backend, name, expr)


def _duckdb_table(backend, name: str, expr):
    """``expr`` as a temporary DuckDB table, as Ibis's ``create_table(name, expr, temp=True)`` makes
    it (the columns of the expression's types, then its rows) in one statement, and the table with
    the schema known: Ibis's own asks the catalog and the schema in three more queries, a third of
    a search node's time on a small table."""
    import sqlglot as sg
    import sqlglot.expressions as sge
    from ibis.expr import operations as ops

    schema = expr.schema()
    backend._run_pre_execute_hooks(expr)  # in-memory tables the expression reads registered
    columns = sge.Schema(this=sg.table(name, quoted=True), expressions=schema.to_sqlglot_column_defs(backend.dialect))
    create = sge.Create(kind="TABLE", this=columns, properties=sge.Properties(expressions=[sge.TemporaryProperty()]))
    backend.con.execute(f'{create.sql(backend.dialect)}; INSERT INTO "{name}" {backend.compile(expr)}')
    return ops.DatabaseTable(name, schema=schema, source=backend, namespace=ops.Namespace()).to_expr()


def release(table: EngineTable, *exprs) -> None:
    """Tables made by ``computed_once`` given back (their memory and spill files): dropped on
    DuckDB; on Spark their view dropped and the checkpointed rows unpersisted. A search makes some
    per node and needs them only for that node. (A checkpoint's rows are an RDD under its plan,
    which ``DataFrame.unpersist``, for a cached view, leaves stored: before, they stayed until
    Java's garbage collector let Spark's cleaner find them.)"""
    backend = table.engine.backend
    for expr in exprs:
        if table.engine.name == "duckdb":
            name = expr.get_name().split(".")[-1]
            backend.raw_sql(f'DROP TABLE IF EXISTS "{name}"')
        elif table.engine.name == "spark" and expr.get_name() in getattr(backend, "_cached_dataframes", {}):
            backend._session.catalog.dropTempView(expr.get_name())
            plan = backend._cached_dataframes.pop(expr.get_name())._jdf.queryExecution().logical()
            plan.rdd().unpersist(False)  # the checkpoint's plan is its rows (``LogicalRDD``); not waited for
        elif hasattr(expr, "release"):
            expr.release()


def _histogram(table: EngineTable, counts, column: str) -> np.ndarray:
    """``[[value, how many rows hold it], ...]`` of ``column``, ascending (shape (n, 2))."""
    grouped = counts.group_by(column).aggregate(**{OWNERS: counts.count()})
    result = table.engine.run(grouped)
    values = np.asarray(result.column(column).to_numpy(zero_copy_only=False), dtype=np.int64)
    many = np.asarray(result.column(OWNERS).to_numpy(zero_copy_only=False), dtype=np.int64)
    order = np.argsort(values)
    return np.stack([values[order], many[order]], axis=1) if len(values) else np.zeros((0, 2), dtype=np.int64)


def class_people(
    table: EngineTable, quasi_identifiers: Sequence[str], owner: str
) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Class sizes in owners and each owner's smallest class, as histograms ``[[size, count], ...]``
    (classes of each size; owners whose smallest class has each size), the records counted and
    the rows dropped (missing policy)."""
    pairs, dropped = owner_pairs(table, quasi_identifiers, owner)
    key = ("people", tuple(quasi_identifiers), owner, table.missing, table.count)
    if key not in table._pairs:  # counted once per table: ``sharing`` at power 1 is the second histogram
        per_class, owners = _per_owner(table, pairs)
        classes = _histogram(table, per_class, SHARED)
        smallest = _histogram(table, owners.select(**{SHARED: owners[SMALLEST]}), SHARED)
        records = int(table.engine.value(owners[RECORDS].sum()) or 0)
        table._pairs[key] = (classes, smallest, records)
    classes, smallest, records = table._pairs[key]
    return classes.copy(), smallest.copy(), records, dropped


def _per_owner(table: EngineTable, pairs):
    """The people per class (``KEY``, ``SHARED``), and one row per owner made in one pass over the
    pairs (kept: a temporary table on DuckDB), once per pairs' table: its smallest class in owners
    (``SMALLEST``), its records (``RECORDS``) and distinct rows (``LENGTH``: the powers' estimate)
    and its history's two hashes (``HASH_PRIMES``: the engine's hash of each (row, records)
    element modulo two primes, summed; equal histories hash alike)."""

    key = ("owners", id(pairs))
    if key not in table._pairs:
        per_class = pairs.group_by(KEY).aggregate(**{SHARED: pairs.count()})
        joined = pairs.join(per_class, KEY)
        owners = joined.group_by(OWNER).aggregate(
            **{SMALLEST: joined[SHARED].min(), RECORDS: joined[WEIGHT].sum().cast("int64"), LENGTH: joined.count()},
            **history_hashes(joined, KEY),
        )
        table._pairs[key] = (pairs, per_class, computed_once(table, owners))
    return table._pairs[key][1:]


def sharing(
    table: EngineTable,
    quasi_identifiers: Sequence[str],
    owner: str,
    *,
    power: int | str | None = None,
    max_seconds: float = MAX_SECONDS,
) -> np.ndarray:
    """How many owners share their history (as an adversary of ``power`` sees it: the module text)
    with each number of owners: ``[[owners sharing, owners], ...]`` ascending, every owner once
    (``anonlib.core.histories.owners_sharing`` made into a histogram); a power of 2 or more
    estimated past ``max_seconds`` refused in one sentence (``check_power``)."""
    power = adversary_power(power)
    pairs, _ = owner_pairs(table, quasi_identifiers, owner)
    key = ("sharing", tuple(quasi_identifiers), owner, table.missing, table.count, power)
    if key not in table._pairs:  # counted once per table and power
        if power is None:
            table._pairs[key] = _histogram(table, _whole_histories(table, pairs), SHARED)
        elif power == 1:  # one record known: the fewest people of any class of the person's (class_people)
            table._pairs[key] = class_people(table, quasi_identifiers, owner)[1]
        else:
            check_power(table, pairs, power, max_seconds=max_seconds)
            table._pairs[key] = _histogram(table, fewest_containing(pairs, power, key_values(table, pairs)), SHARED)
    return table._pairs[key].copy()


def history_hashes(elements, row: str) -> dict:
    """The aggregations of a history's two hashes over ``elements`` (one row per owner and ``row``,
    its records in ``WEIGHT``), to group by ``OWNER``: the engine's hash of each (row, records)
    element modulo each of ``HASH_PRIMES``, summed. Equal histories hash alike."""
    import ibis

    element = ibis.struct({"k": elements[row], "w": elements[WEIGHT]}).hash()
    return {h: (element % prime).sum().cast("int64") for h, prime in zip(HASHES, HASH_PRIMES)}


LINEAR = ("anonlib_l0", "anonlib_l1")  # ``linear_hashes``' two sums


def class_residues(classes: np.ndarray) -> dict[str, np.ndarray]:
    """For each class number of a node, its two residues that ``linear_hashes`` sums: two 64-bit
    hashes of the number (SplitMix64's finalizer, unseeded and seeded), one modulo each of the
    ``HASH_PRIMES``. Computed in memory on the node's classes (at most its distinct rows), so the
    engine multiplies and adds, and hashes nothing per record.

    >>> r = class_residues(np.array([0, 1, 1]))
    >>> sorted(r) == list(LINEAR), int(r[LINEAR[0]][1]) == int(r[LINEAR[0]][2]), int(r[LINEAR[0]][0]) != 0
    (True, True, True)
    """

    def mixed(x: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            x = x + np.uint64(0x9E3779B97F4A7C15)
            x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))

    numbers = np.asarray(classes, dtype=np.int64).astype(np.uint64)
    hashes = (mixed(numbers), mixed(numbers ^ np.uint64(0x5DEECE66D2B1C0A7)))
    return {name: (h % np.uint64(prime)).astype(np.int64) for name, h, prime in zip(LINEAR, hashes, HASH_PRIMES)}


def linear_hashes(pairs) -> dict:
    """The aggregations of a history's two linear hashes over ``pairs`` (any rows of an owner, each
    with its records in ``WEIGHT`` and its class's ``class_residues`` in the ``LINEAR`` columns;
    several may share a class), to group by ``OWNER``: Σ records × residue, modulo each residue's
    prime. A sum of records times the class's hash is the same however a history's records are split
    between pairs, so the (owner, class) pairs need not be grouped first: one pass over the (owner,
    row) pairs joined to a node's classes. Equal histories hash alike; two different ones alike with
    a chance of about 2^-62 (two independent hashes, each modulo a prime of 31 bits). Four sums
    (each hash modulo both primes) took 65.6 CPU-s at 10^8 records instead of 29.3 for two (the
    engine's table of 10^7 owners, each with four sums, measured)."""
    out = {}
    for name, prime in zip(LINEAR, HASH_PRIMES):
        term = ((pairs[WEIGHT] % prime) * pairs[name]) % prime  # each factor below 2^31: no overflow
        out[name] = (term.sum() % prime).cast("int64")
    return out


def exact_signatures(elements, row: str):
    """Per owner of ``elements`` (as ``history_hashes``'), its history as the sorted list of its
    (row, records) elements (``SIGNATURE``), to compare exactly, and its records (``RECORDS``)."""
    import ibis

    exact = ibis.struct({"k": elements[row], "w": elements[WEIGHT]})
    return elements.group_by(OWNER).aggregate(
        **{SIGNATURE: exact.collect().sort(), RECORDS: elements[WEIGHT].sum().cast("int64")}
    )


def _whole_histories(table: EngineTable, pairs):
    """Per owner (``OWNER``), the owners sharing its whole history (``SHARED``: its signature, the
    sorted multiset of its rows with their records, grouped and counted) and its records (``RECORDS``).

    Hashed first, compared exactly where it matters: an owner alone with its history's two hashes
    and its records (``_per_owner``) is alone with its history; only the owners sharing them with
    another have their histories built as sorted lists and grouped exactly (histories whose hashes
    collide told apart). On a file where most people are unique (10^7 people of the spec's panel:
    99.9%) the lists are built for the few."""
    import ibis

    label = [*HASHES, RECORDS]
    _, hashed = _per_owner(table, pairs)
    counted = hashed.group_by(label).aggregate(anonlib_alike=hashed.count())
    hashed = hashed.join(counted, label)
    alone = hashed.filter(hashed.anonlib_alike == 1)
    alone = alone.select(OWNER, **{SHARED: ibis.literal(1, "int64")}, **{RECORDS: alone[RECORDS]})
    crowd = hashed.filter(hashed.anonlib_alike > 1).select(OWNER)
    signatures = exact_signatures(pairs.join(crowd, OWNER), KEY)  # the owners whose hashes are shared
    shared = signatures.group_by(SIGNATURE).aggregate(**{SHARED: signatures.count()})
    compared = signatures.join(shared, SIGNATURE).select(OWNER, SHARED, RECORDS)
    return ibis.union(alone, compared, distinct=False)


@dataclass(frozen=True)
class HouseholdCounts:
    """What the engine counts of households (``household_counts``), all small.

    ``shared``: ``[[households sharing, households, their records], ...]`` ascending (each household
    once, by its members' rows together). The compositions, each a list of (f, records) pairs
    ascending in f (f: a class's records over the whole file; records: the household's members in
    classes of that size): ``households[c]`` households have composition c, whose pairs are
    ``sizes[start[c]:start[c + 1]]`` and ``records[start[c]:start[c + 1]]``."""

    shared: np.ndarray
    households: np.ndarray
    start: np.ndarray
    sizes: np.ndarray
    records: np.ndarray


def household_counts(table: EngineTable, quasi_identifiers: Sequence[str], household: str) -> HouseholdCounts:
    """The households of ``household`` by their members' rows together and by their compositions
    (``HouseholdCounts``; the module text): what ``anonlib.measures.linkage.household_risk`` counts."""
    pairs, _ = owner_pairs(table, quasi_identifiers, household)
    per_owner = _whole_histories(table, pairs)
    grouped = per_owner.group_by(SHARED).aggregate(
        **{OWNERS: per_owner.count(), RECORDS: per_owner[RECORDS].sum().cast("int64")}
    )
    result = table.engine.run(grouped)
    shared = np.stack(
        [
            np.asarray(result.column(c).to_numpy(zero_copy_only=False), dtype=np.int64)
            for c in (SHARED, OWNERS, RECORDS)
        ],
        axis=1,
    ).reshape(-1, 3)
    shared = shared[np.argsort(shared[:, 0], kind="stable")]
    per_class = pairs.group_by(KEY).aggregate(**{SIZE: pairs[WEIGHT].sum().cast("int64")})
    joined = pairs.join(per_class, KEY)
    per_size = joined.group_by([OWNER, SIZE]).aggregate(**{RECORDS: joined[WEIGHT].sum().cast("int64")})
    element = per_size[SIZE].cast("string") + ":" + per_size[RECORDS].cast("string")
    owners = per_size.group_by(OWNER).aggregate(
        anonlib_smallest=per_size[SIZE].min(), **{COMPOSITION: element.collect().sort().join(";")}
    )
    # a member alone in its class: found whatever the others (risk 1), one composition for them all
    composition = (owners["anonlib_smallest"] == 1).ifelse("1:1", owners[COMPOSITION])
    owners = owners.select(**{COMPOSITION: composition})
    counted = table.engine.run(owners.group_by(COMPOSITION).aggregate(**{OWNERS: owners.count()}))
    texts = counted.column(COMPOSITION).to_pandas()
    households = np.asarray(counted.column(OWNERS).to_numpy(zero_copy_only=False), dtype=np.int64)
    elements = texts.str.split(";").explode()
    parts = elements.str.split(":", expand=True) if len(elements) else pd.DataFrame({0: [], 1: []})
    which = elements.index.to_numpy(dtype=np.int64)
    sizes = parts[0].to_numpy(dtype=np.int64)
    records = parts[1].to_numpy(dtype=np.int64)
    order = np.lexsort((sizes, which))  # each composition's pairs together, ascending in f
    start = np.zeros(len(households) + 1, dtype=np.int64)
    np.cumsum(np.bincount(which, minlength=len(households)), out=start[1:])
    return HouseholdCounts(shared, households, start, sizes[order], records[order])


def check_power(table: EngineTable, pairs, power: int, *, counts: int = 1, max_seconds: float = MAX_SECONDS) -> None:
    """Sub-multisets of more than ``MAX_POWER`` records refused, and the enumeration's size estimated
    (``anonlib.core.histories.history_work``) from each owner's records and distinct rows, at the
    engine's speed (its own time per record of a combination, measured on the engine, not the
    in-memory kernel's), ``counts`` times over (a search: ``SEARCH_COUNTS``), within ``max_seconds``."""
    _, owners = _per_owner(table, pairs)  # one row per owner, kept: its shapes are a small query
    shapes = table.engine.run(owners.group_by([RECORDS, LENGTH]).aggregate(n=owners.count()))
    sizes = np.asarray(shapes.column(RECORDS).to_numpy(zero_copy_only=False), dtype=np.int64)
    lengths = np.asarray(shapes.column(LENGTH).to_numpy(zero_copy_only=False), dtype=np.int64)
    many = np.asarray(shapes.column("n").to_numpy(zero_copy_only=False), dtype=np.int64)
    sizes, lengths = np.repeat(sizes, many), np.repeat(lengths, many)
    if power > MAX_POWER:
        work = history_work(sizes, lengths, power)
        raise ParameterError(
            f"An adversary who knows {power} of a person's records means {work.what} on the engine, which "
            f"counts combinations of at most {MAX_POWER} records; choose --power {MAX_POWER} or less, or 'all'."
        )
    work = history_work(sizes, lengths, power, engine=True)
    if counts > 1:
        what = f"{work.what} about {counts} times over (the search counts each generalization it tries)"
        work = replace(work, what=what, seconds=work.seconds * counts)
    narrow = f"choose a smaller adversary power than {power}, or fewer quasi-identifiers"
    check_work(work, narrow=narrow, max_seconds=max_seconds)


@dataclass(frozen=True)
class SubMultisets:
    """Each owner's sub-multisets of its rows up to ``power`` (``sub_multisets``), as lazy tables of
    ``OWNER``, ``PART`` (the sub-multiset's records) and ``label`` (its rows: one integer, or one
    column per record padded with -1): ``every`` holds those of each size up to min(``power``, the
    owner's records), which the supports count; ``judged`` those of size min(``power``, its
    records) alone, on which the owner is judged."""

    every: Any
    judged: Any
    label: tuple[str, ...]


def sub_multisets(pairs, power: int, values: int, lead: Callable[[Any], Any] | None = None) -> SubMultisets:
    """The sub-multisets of ``pairs``' rows (``KEY`` below ``values``) up to ``power``, each once;
    with ``lead`` (a condition on a ``KEY`` column), only those whose first (least) row meets it:
    a part of them, each still held by the same owners.

    A row of w records has copies 1 to min(w, ``power``); a sub-multiset is its rows' copies
    joined in order, a row's copies one after the other from its first, a new row starting at its
    first copy and above the last. So no tuple needs a ``distinct``, and where ``values ** power``
    fits an int64 the rows are one integer (in base ``values``) that the engine groups and joins
    on as one column (the profile's count at power 2 of the bench's 10^7 records: 7.7 s, against
    21.9 s with each owner's copies numbered, joined and made distinct)."""
    import ibis

    copies = [
        pairs.filter(pairs[WEIGHT] >= c).select(OWNER, KEY, anonlib_copy=ibis.literal(c, "int64"))
        for c in range(1, power + 1)
    ]
    elements = stacked(copies)
    leading = copies[0] if lead is None else copies[0].filter(lead(copies[0][KEY]))
    totals = pairs.group_by(OWNER).aggregate(anonlib_total=pairs[WEIGHT].sum().cast("int64"))
    packed = values**power < PACKED_BELOW
    label = ("anonlib_label",) if packed else tuple(f"anonlib_k{j}" for j in range(power))
    every, judged = [], []
    for size in range(1, power + 1):
        views = [leading.view()] + [elements.view() for _ in range(1, size)]
        joined = views[0]
        for j in range(1, size):
            last, this = views[j - 1], views[j]
            after = (this[KEY] > last[KEY]) & (this["anonlib_copy"] == 1)
            again = (this[KEY] == last[KEY]) & (this["anonlib_copy"] == last["anonlib_copy"] + 1)
            joined = joined.join(this, [joined[OWNER] == this[OWNER], after | again])
        if packed:  # the rows as one integer
            rows = views[0][KEY].cast("int64")
            for j in range(1, size):
                rows = rows * values + views[j][KEY]
            columns = {label[0]: rows}
        else:
            none = ibis.literal(-1, "int64")
            columns = {c: views[j][KEY].cast("int64") if j < size else none for j, c in enumerate(label)}
        tuples = joined.select(**{OWNER: views[0][OWNER], PART: ibis.literal(size, "int64")}, **columns).view()
        every.append(tuples)
        # an owner of at least ``power`` records is judged on its tuples of ``power``; one of fewer
        # (``size``) records on its whole history, counted among everyone's tuples of that size
        if size < power:
            tuples = tuples.semi_join(totals.filter(totals["anonlib_total"] == size), OWNER)
        judged.append(tuples)
    return SubMultisets(stacked(every), stacked(judged), label)


def stacked(parts: Sequence[Any]):
    """The lazy tables ``parts`` (of one schema) one after the other (``UNION ALL``)."""
    import ibis

    return ibis.union(*parts, distinct=False) if len(parts) > 1 else parts[0]


def supports(multisets: SubMultisets):
    """How many owners hold each sub-multiset (``PART`` and its label, ``SHARED``)."""
    every = multisets.every
    return every.group_by([PART, *multisets.label]).aggregate(**{SHARED: every.count()})


def fewest_containing(pairs, power: int, values: int):
    """Per owner (``OWNER``), the fewest owners (``SHARED``) whose histories contain one of its
    sub-multisets of min(``power``, its records) rows (``sub_multisets``; ``values`` exceeds every
    ``KEY``)."""
    multisets = sub_multisets(pairs, power, values)
    mine = multisets.judged.join(supports(multisets), [PART, *multisets.label])
    return mine.group_by(OWNER).aggregate(**{SHARED: mine[SHARED].min()})


def key_values(table: EngineTable, pairs) -> int:
    """One more than the greatest ``KEY`` of ``pairs`` (``fewest_containing``'s ``values``)."""
    return int(table.engine.value(pairs[KEY].max()) or 0) + 1


def stable_shares(table: EngineTable, owner: str, columns: Sequence[str]) -> dict[str, float]:
    """Per column, the share of owners with at least two records whose records all hold one value
    of it (a blank a value like any other; 0.0 when nobody has two records): the engine's side of
    ``anonlib.core.stability.stable_share``, one query grouped by owner for every column.

    >>> import pandas as pd
    >>> from anonlib.engine import connect, from_frame
    >>> df = pd.DataFrame({"pid": ["a", "a", "b", "b", "c"], "born": [51, 51, 60, 60, 70], "year": [70, 71, 70, 72, 70]})
    >>> stable_shares(from_frame(df, connect()), "pid", ["born", "year"])
    {'born': 1.0, 'year': 0.0}
    """
    table = table.with_roles({owner: Role.HOUSEHOLD if table.household == owner else Role.PERSON})
    columns = list(columns)
    if not columns:
        return {}
    _, count, _ = table._analysed([owner, *columns], None)  # checked, text columns typed
    raw = table.raw
    if count:  # a row of no records holds no value
        raw = raw.filter(table.value(count, raw) > 0)
    # one pass over the records grouped by owner: a person holds one value of a column when its
    # values (read as the loader reads them) are all blank, or none is and the least is the
    # greatest (10.4 CPU-s at 10^8 records of 10^7 people, against 44.4 for the distinct (person,
    # value) pairs grouped again by person)
    values = [table.value(c, raw) for c in columns]
    per = raw.group_by(table.value(owner, raw).name(OWNER)).aggregate(
        anonlib_rows=raw.count(),
        anonlib_records=table.value(count, raw).sum() if count else raw.count(),
        **{f"anonlib_n{j}": v.count() for j, v in enumerate(values)},
        **{f"anonlib_lo{j}": v.min() for j, v in enumerate(values)},
        **{f"anonlib_hi{j}": v.max() for j, v in enumerate(values)},
    )
    two = per.filter(per.anonlib_records >= 2)

    def one_value(j: int):
        n, lo, hi = two[f"anonlib_n{j}"], two[f"anonlib_lo{j}"], two[f"anonlib_hi{j}"]
        return ((n == 0) | ((n == two.anonlib_rows) & (lo == hi))).cast("int64").sum()

    counted = two.aggregate(
        anonlib_people=two.count(), **{f"anonlib_stable{j}": one_value(j) for j in range(len(columns))}
    )
    found = table.engine.run(counted).to_pylist()[0]
    people = int(found["anonlib_people"] or 0)
    return {c: float(found[f"anonlib_stable{j}"] or 0) / people if people else 0.0 for j, c in enumerate(columns)}
