"""Whole owners suppressed at one generalization, counted by the engine: the search in people and
histories where the data lives (``anonlib.workflow.engine_people``).

The in-memory search judges a node (a generalization of the quasi-identifiers) on a class table
holding every owner's rows; at 10^8 records that table is 10^8 rows. Here the node comes to the
engine as a small table instead: the class of each distinct row of the quasi-identifiers
(``owner_rows``: the rows ``owner_pairs`` numbers, one per ``KEY``), and the engine joins it to
the (owner, row) pairs and answers what ``GeneralizationSpace.status`` asks in people:

- **people** (``histories=False``): a class fails when it holds fewer than k distinct owners;
  every owner with a record in a failing class is suppressed whole, and the rule is applied
  again to the owners left until no class fails (removing an owner's other records can leave
  another class short), as ``anonlib.measures.models.acceptance(..., person=)`` does;
- **whole histories** (``histories=True``, the adversary who knows every record of a person):
  an owner fails when fewer than k owners share its history, the multiset of its generalized
  rows with their records. Owners are grouped by two sums of their elements' hashes with their
  records and distinct rows; a group of at least k owners is then *verified*: its members' elements
  are counted, and an element not held by every member marks a group whose hashes collide, whose
  owners are then grouped exactly by their sorted lists. Removing owners
  whole leaves the others' histories as they are: one pass is the answer.
- **any m of a history** (``histories=True, power=m``, m from 2: Terrovitis et al.'s k^m on
  multisets): an owner fails when the fewest owners containing one of its sub-multisets of
  min(m, its records) generalized rows is below k (the profile's count, ``owners.supports`` of
  ``owners.sub_multisets``, on the node's classes); removing owners lowers the others' counts, so
  the rule is applied again to the owners left until none fails, as in memory: each later pass
  takes the removed owners' sub-multisets away from the counts and looks for the failing only
  among the holders of those that fell below k.

A search's walk on whole histories may skip the verification (``verify=False``): owners grouped by
``linear_hashes`` alone, in one pass over the (owner, row) pairs joined to the node's classes, with
no (owner, class) table; the count is then a lower bound, exact unless two different histories
hash alike (``OwnersOut.verified`` False), and the walk's node is counted again exactly
(``workflow.engine_people``).

A search asks first whether a node fails (``enough``), and a node that fails needs no exact
count: the owners of hash groups below k fail (hashes only merge histories: equal histories
hash alike), and so do those a pass of the people or m rule finds. The count stops at such a
lower bound once it fails the node (``OwnersOut.exact`` False): before the verification, or
after the first pass that says so.

``owners_out`` returns the owners and records suppressed, and, for the node's cost, the records
kept per row and the suppressed (row, records) pairs counted (``OwnersOut``): all small. Nothing
of a record comes back.

Example:
    >>> import numpy as np, pandas as pd
    >>> from anonlib.engine import connect, from_frame
    >>> df = pd.DataFrame({"pid": list("aabbcc"), "age": [30, 31, 30, 31, 30, 32]})
    >>> with connect("duckdb") as duck:
    ...     t = from_frame(df, duck)
    ...     rows = owner_rows(t, ["age"], "pid")
    ...     exact = owners_out(t, ["age"], "pid", rows, np.arange(len(rows)), 2, histories=True)
    ...     coarse = owners_out(t, ["age"], "pid", rows, np.zeros(len(rows), dtype=np.int64), 2, histories=True)
    >>> (exact.owners, exact.records), (coarse.owners, coarse.records)  # c's history is its own, then shared
    ((1, 2), (0, 0))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .owners import (
    HASHES,
    KEY,
    LENGTH,
    LINEAR,
    OWNER,
    PART,
    RECORDS,
    SHARED,
    SIGNATURE,
    check_power,
    class_residues,
    computed_once,
    exact_signatures,
    history_hashes,
    key_values,
    linear_hashes,
    owner_pairs,
    release,
    stacked,
    sub_multisets,
    supports,
)
from .source import WEIGHT, EngineTable, from_frame

CLASS = "anonlib_class"
AT = "anonlib_at"  # a row's position in ``owner_rows``
REP = "anonlib_rep"
TAKEN = "anonlib_taken"  # a sub-multiset's holders removed
ANCHOR = "anonlib_anchor"  # a sub-multiset's row held by the fewest owners
OLD = "anonlib_finer_class"
# A search's node on any m records is first counted on the sub-multisets whose first row is one in
# this many (by its hash). At the bottom of the bench's 10^8 records at power 2 that part found
# 2,714,270 of the 3,906,530 people failing the first pass (more than the 2,000,000 the target
# allows) in 17.8 s, against 59.0 s for the whole first pass (DuckDB alone, the same node); one in
# 8 found 1,789,097. On a node that meets the target the two parts cost no more than one within
# the scatter of runs (at 10^7 records 25.1 s against 23.2 s, then 23.5 against 25.6).
LEADS = 4
# The owners' sub-multisets held by few owners (below a bound within this many of k, their entries at
# most this share of the node's (owner, class) pairs) are kept on the engine with their holders once
# (``_fragile``), and each later pass of any m records looks its failing owners up there: at the
# bench's node 0/0/1/0 at 10^8 records, 624,411 sub-multisets held by 1 to 31 owners (6,875,273
# entries of 316,098,574), the next held by 43; a later pass had enumerated the sub-multisets of the
# holders of their rarest rows, 9,914,511 owners in its first pass, 87 s. At the bottom the entries
# below k alone are 37,619,670 of 79,356,824 pairs: with a budget of half the pairs, its exact count
# took 127.4 s (the table made in 33.6 s), against 212.2 s with an eighth (nothing kept there), and
# the whole command 827.3 s against 943.2 s (792.4 s in a later run, the search refused no more:
# ``owners.SEARCH_COUNTS``). On the tests' small panels the share changes nothing
# measurable: the engine's people modules 58.8-66.3 s with half against 65.9-68.5 s with an eighth,
# the Spark module 78.7 against 76.4 s (run one after the other).
FRAGILE_WINDOW = 64
FRAGILE_SHARE = 1 / 2


@dataclass(frozen=True)
class OwnersOut:
    """What meeting k in people at one node suppresses (``owners_out``): ``owners`` and their
    ``records``; ``kept``, the records kept per row of ``owner_rows`` (in its order); ``paid``,
    the suppressed owners' (row, records) pairs counted, as ``[[row position, records, pairs], ...]``
    (the node's cost sums each pair's records times its row's cost, as the kernel does per pair);
    ``smallest``, k in people (on histories) among the owners kept."""

    owners: int
    records: int
    kept: np.ndarray
    paid: np.ndarray
    smallest: int = 0  # the fewest owners sharing a class (a history) among the owners kept; 0: none kept
    exact: bool = True  # False: ``owners`` and ``records`` are a lower bound that already failed the node (``enough``)
    verified: bool = True  # False: histories grouped by their hashes alone (``verify=False``): a lower bound, exact unless two collide
    # ``keep``: the owners suppressed, a table of ``OWNER`` left on the engine (else None)
    failing: Any = field(default=None, compare=False)


@dataclass(eq=False)
class Finer:
    """The (owner, class) pairs of the last node a search counted, kept on the engine so that a node
    above it (each of its classes within one of the node's) groups them instead of every (owner,
    row) pair: a walk up a path of the lattice (Flash's) groups fewer rows at each step (at 10^8
    records a node's grouping took 23 CPU-s from a node below instead of 36 from the pairs).
    ``owners_out`` groups from it and keeps its own node's in its place; ``close`` drops the table.

    >>> import pandas as pd
    >>> from anonlib.engine import connect, from_frame
    >>> df = pd.DataFrame({"pid": list("aabbcc"), "age": [30, 31, 30, 31, 30, 32]})
    >>> with connect("duckdb") as duck:
    ...     t = from_frame(df, duck)
    ...     rows, finer = owner_rows(t, ["age"], "pid"), Finer(t)
    ...     low = owners_out(t, ["age"], "pid", rows, np.array([0, 1, 1]), 2, histories=True, finer=finer)
    ...     top = owners_out(t, ["age"], "pid", rows, np.array([0, 0, 0]), 2, histories=True, finer=finer)
    ...     finer.close()
    >>> (low.owners, top.owners), finer.rolled  # the top grouped from the node below it
    ((0, 0), 1)
    """

    table: EngineTable
    classes: np.ndarray | None = None
    grouped: Any = None
    rolled: int = 0  # the nodes grouped from a kept node
    owned: bool = True  # the kept table made for its node (dropped when replaced), not the (owner, row) pairs

    def source(self, classes: np.ndarray, made: list):
        """The (owner, class) pairs at ``classes`` grouped from the kept node's, when each of its
        classes lies within one of ``classes`` (else None); the small table of classes it reads is
        added to ``made``."""
        if self.grouped is None or self.classes is None or len(self.classes) != len(classes):
            return None
        pairs = pd.DataFrame({OLD: self.classes, CLASS: np.asarray(classes, dtype=np.int64)}).drop_duplicates()
        if not pairs[OLD].is_unique:  # a kept class split between two of the node's: not below it
            return None
        mapping = _small(self.table, pairs)
        made.append(mapping)
        kept = self.grouped.rename({OLD: CLASS})
        joined = kept.join(mapping, OLD)
        self.rolled += 1
        return joined.group_by([OWNER, CLASS]).aggregate(**{WEIGHT: joined[WEIGHT].sum().cast("int64")})

    def keep(self, classes: np.ndarray, grouped, owned: bool = True) -> None:
        """``grouped``, the pairs at ``classes``, kept in place of the last node's (dropped); not
        ``owned``: the table's own (owner, row) pairs, never dropped here."""
        self.close()
        self.classes, self.grouped, self.owned = np.asarray(classes, dtype=np.int64).copy(), grouped, owned

    def close(self) -> None:
        """The kept table dropped."""
        if self.grouped is not None and self.owned:
            release(self.table, self.grouped)
        self.classes = self.grouped = None


def owner_rows(table: EngineTable, quasi_identifiers: Sequence[str], owner: str) -> pd.DataFrame:
    """The distinct rows of the quasi-identifiers that ``owner_pairs`` numbers: one row per ``KEY``
    with the values read as the loader reads them and their records (``WEIGHT``), sorted by key.
    Small (the distinct rows, not the records): the in-memory side of a node (its classes) is
    computed on it."""
    pairs, _ = owner_pairs(table, quasi_identifiers, owner)
    key = ("rows", tuple(quasi_identifiers), owner, table.missing, table.count)
    if key not in table._pairs:
        numbers = table._pairs[("numbers", *key[1:])]
        weights = pairs.group_by(KEY).aggregate(**{WEIGHT: pairs[WEIGHT].sum().cast("int64")})
        joined = numbers.join(weights, KEY)
        frame = table.engine.run(joined).to_pandas()
        table._pairs[key] = frame.sort_values(KEY, kind="stable").reset_index(drop=True)
    return table._pairs[key].copy()


def owners_out(
    table: EngineTable,
    quasi_identifiers: Sequence[str],
    owner: str,
    rows: pd.DataFrame,
    classes: np.ndarray,
    k: int,
    *,
    histories: bool,
    power: int | None = None,
    cost: bool | Callable[[int], bool] = True,
    enough: Callable[[int], bool] | None = None,
    finer: Finer | None = None,
    verify: bool = True,
    keep: bool | Callable[[int], bool] = False,
) -> OwnersOut:
    """The owners suppressed whole so that every remaining one meets k at the node whose class of
    each row of ``rows`` (``owner_rows``) is ``classes``: in people, or on ``histories``, whole
    (``power`` None) or any ``power`` of their records (the module text). ``cost``: whether
    ``kept`` and ``paid`` are counted too (one query more), or a function of the owners
    suppressed saying so (a node that fails the target needs no cost). ``enough``: a function of
    a lower bound on the owners suppressed saying the node fails already; when it does, the
    count stops there (``exact`` False, nothing costed). ``finer``: the (owner, class) pairs a
    search keeps between its nodes (``Finer``), grouped from when this node lies above them, and
    replaced by this node's. ``verify=False`` (whole histories only): the owners grouped by
    ``linear_hashes`` alone, in one pass over the (owner, row) pairs, neither grouped into (owner,
    class) pairs nor verified (``verified`` False; ``finer`` is left as it is): the count is a lower
    bound, the exact one unless two different histories hash alike. ``keep`` (or a function of the
    owners suppressed saying so): an exact count leaves its owners on the engine as a table of
    ``OWNER`` (``OwnersOut.failing``, for the release to suppress; ``release`` it when done). The
    node's other tables on the engine are dropped before it returns."""

    pairs, _ = owner_pairs(table, quasi_identifiers, owner)
    keys = rows[KEY].to_numpy(dtype=np.int64)
    # the node's classes, and each row's position for the cost: one small table
    node = _small(
        table, pd.DataFrame({KEY: keys, CLASS: np.asarray(classes, dtype=np.int64), AT: np.arange(len(rows))})
    )
    made = [node]
    # each owner's generalized rows with their records: the node's (owner, class) pairs, grouped from a
    # node below it when the search kept one (fewer rows), else from the (owner, row) pairs; where each
    # row is a class of its own (the bottom), the (owner, row) pairs themselves; hashed only (not
    # verified), the (owner, row) pairs with their class, never grouped by class
    classes = np.asarray(classes, dtype=np.int64)
    hashed_only = histories and power is None and not verify
    owned = len(np.unique(classes)) < len(classes)
    if hashed_only:  # the pairs with their class's residues (``linear_hashes``): hashed as they are
        residues = _small(table, pd.DataFrame({KEY: keys, **class_residues(classes)}))
        made.append(residues)
        grouped = pairs.join(residues, KEY)
    elif not owned:
        grouped = pairs.select(OWNER, **{CLASS: pairs[KEY]}, **{WEIGHT: pairs[WEIGHT]})
    else:
        below = finer.source(classes, made) if finer is not None else None
        if below is None:
            joined = pairs.join(node.select(KEY, CLASS), KEY)
            below = joined.group_by([OWNER, CLASS]).aggregate(**{WEIGHT: joined[WEIGHT].sum().cast("int64")})
        grouped = computed_once(table, below)
    if finer is not None and not hashed_only:
        # the last node's pairs read (or of no use here): dropped now, not when this node's replace them
        # (at 10^8 records each is 10^8 rows, and both at once did not fit DuckDB's memory with the rest)
        finer.close()
    try:
        if hashed_only:
            failing, smallest, exact = _hashed_histories(table, grouped, k, made, enough)
        else:
            failing, smallest, exact = _short(table, grouped, k, made, histories, power, enough)
        # the owners and records suppressed and the fewest sharing among those kept: one query
        fewest = smallest if isinstance(smallest, tuple) else () if smallest is None else (smallest,)
        made_once = exact and bool(keep) and not hashed_only
        if made_once:  # counted from, and left on the engine when ``keep`` says so
            failing = computed_once(table, failing)
            made.append(failing)
        counted = failing.aggregate(n=failing.count(), r=failing[RECORDS].sum().cast("int64"))
        for j, each in enumerate(fewest):
            counted = counted.cross_join(each.name(f"anonlib_fewest_{j}").as_table())
        found = table.engine.run(counted).to_pylist()[0]
        owners, records = int(found["n"] or 0), int(found["r"] or 0)
        values = [found[f"anonlib_fewest_{j}"] for j in range(len(fewest))]
        smallest = min((int(v) for v in values if v is not None), default=0)
        kept = np.zeros(0, dtype=np.int64)
        paid = np.zeros((0, 3), dtype=np.int64)
        costed = exact and (cost(owners) if callable(cost) else cost)
        if owners and costed:
            gone = pairs.join(failing.select(OWNER), OWNER)
            lost = gone.group_by([KEY, WEIGHT]).aggregate(anonlib_pairs=gone.count()).join(node.select(KEY, AT), KEY)
            found = table.engine.run(lost.select(AT, WEIGHT, "anonlib_pairs")).to_pandas()
            paid = found.to_numpy(dtype=np.int64).reshape(-1, 3)
        if costed:
            suppressed = np.bincount(paid[:, 0], weights=paid[:, 1] * paid[:, 2], minlength=len(rows))
            kept = rows[WEIGHT].to_numpy(dtype=np.int64) - suppressed.astype(np.int64)
        kept_owners = None
        if made_once and (keep(owners) if callable(keep) else keep):
            kept_owners = failing
            made[:] = [t for t in made if t is not failing]
    finally:
        release(table, *made)
        # hashed only: the pairs were read joined as they are, nothing of theirs made or kept
        if finer is not None and not hashed_only:
            finer.keep(classes if owned else keys, grouped, owned)  # the pairs' class is their row's key
        elif owned and not hashed_only:
            release(table, grouped)
    return OwnersOut(owners, records, kept, paid, smallest, exact, verified=not hashed_only, failing=kept_owners)


def failing_owners(
    table: EngineTable,
    quasi_identifiers: Sequence[str],
    owner: str,
    k: int,
    *,
    histories: bool,
    power: int | None = None,
):
    """The owners suppressed whole so that every remaining one meets k on the table's own rows of
    ``quasi_identifiers`` (already generalized: each distinct row its class), in people or on
    ``histories`` (whole, or any ``power`` of their records): a table of ``OWNER`` made once on
    the engine (``release`` it when done). The engine's side of ``SuppressionStep.kept`` for such
    a target, with no row brought back."""
    pairs, _ = owner_pairs(table, quasi_identifiers, owner)
    if histories and power is not None and power > 1:
        check_power(table, pairs, power)  # refused in one sentence past the engine's estimate
    grouped = pairs.select(OWNER, **{CLASS: pairs[KEY]}, **{WEIGHT: pairs[WEIGHT]})
    made: list = []
    try:
        failing, _, _ = _short(table, grouped, k, made, histories, power)
        return computed_once(table, failing.select(OWNER))
    finally:
        release(table, *made)


def rows_in_classes(
    table: EngineTable,
    quasi_identifiers: Sequence[str],
    owner: str,
    rows: pd.DataFrame,
    which: np.ndarray,
    others: Sequence[str],
) -> tuple[int, int]:
    """The distinct rows over the quasi-identifiers and ``others`` of the records whose row of ``rows``
    is marked in ``which`` (the paper's violations of a node in people: the rows of the classes that
    lost records), and of every record, counted by the engine in one pass over the records (records
    of no weight left out, as the class table leaves them)."""

    owner_pairs(table, quasi_identifiers, owner)
    mapping, raws = table._pairs[("mapping", tuple(quasi_identifiers), owner, table.missing, table.count)]
    raw = table.raw
    lost = "anonlib_lost"
    marked = _small(table, pd.DataFrame({lost: rows[KEY].to_numpy(dtype=np.int64)[np.asarray(which, dtype=bool)]}))
    records = raw.join(mapping, [raw[c].identical_to(mapping[r]) for c, r in zip(quasi_identifiers, raws)])
    if table.count:
        records = records.filter(table.value(table.count, records) > 0)
    distinct = records.select(KEY, **{f"anonlib_other_{j}": table.value(c, records) for j, c in enumerate(others)})
    distinct = distinct.distinct()
    flagged = distinct.left_join(marked, distinct[KEY] == marked[lost])
    counted = flagged.aggregate(n=flagged.count(), m=flagged[lost].notnull().cast("int64").sum())
    found = table.engine.run(counted).to_pylist()[0]
    return int(found["m"] or 0), int(found["n"] or 0)


def _small(table: EngineTable, frame: pd.DataFrame):
    """A small frame (a node's classes) put on the engine as a table of its own, read by the node's
    queries (and by tables ``computed_once`` makes of them)."""
    return from_frame(frame, table.engine).raw


def owners_in(table: EngineTable, quasi_identifiers: Sequence[str], owner: str) -> int:
    """The owners with a record counted (the pairs' distinct owners): the base of the suppressed share."""
    pairs, _ = owner_pairs(table, quasi_identifiers, owner)
    return int(table.engine.value(pairs.select(OWNER).distinct().count()) or 0)


def _short(
    table: EngineTable,
    grouped,
    k: int,
    made: list,
    histories: bool,
    power: int | None,
    enough: Callable[[int], bool] | None = None,
):
    """The owners failing (``OWNER``, ``RECORDS``), the fewest sharing among those kept, and whether
    the owners are all of them (False: a lower bound ``enough`` said fails the node), by the unit:
    people, whole histories, or any ``power`` of a history."""
    if not histories or power == 1:
        return _short_people(table, grouped, k, made, enough)
    if power is None:
        return _short_histories(table, grouped, k, made, enough)
    return _short_power(table, grouped, k, made, power, enough)


def _short_power(table: EngineTable, grouped, k: int, made: list, power: int, enough=None):
    """The owners suppressed on any ``power`` of their records: those some sub-multiset of whose
    generalized rows fewer than k owners contain, again on the owners left until none is short.
    Its work is at most the original rows' (merging classes only merges sub-multisets), which
    the caller estimates first (``owners.check_power``).

    Counted semi-naively. Every owner's sub-multisets are counted once (``supports``, kept), and an
    owner fails when it holds one held by fewer than k (a larger one of its own is held by no
    more). Each later pass takes the sub-multisets of the owners just removed away from the counts
    (only those can have fallen below k) and looks for the failing among the holders of one now
    below k: kept with them once where few owners hold it (``_fragile``), else among the holders of
    its rarest row (``_anchored``, ``_holding``). The fewest among the owners kept
    is the least count left above 0: each sub-multiset an owner kept holds lies within one of
    min(power, its records) rows of its own, held by no more owners. A node the search may fail is
    counted first on a part of the sub-multisets (``LEADS``). The bench's node 0/0/1/0 at power 2 on
    10^8 records, alone: 192.3 s, against 510.8 s with every later pass looking among the holders of
    rarest rows (22 passes, the first five 311 s)."""
    rows = grouped.select(OWNER, WEIGHT, **{KEY: grouped[CLASS]})
    values = key_values(table, rows)
    multisets = sub_multisets(rows, power, values)
    on = [PART, *multisets.label]
    judged, sampled = multisets.judged, []
    if enough is None:
        held = computed_once(table, supports(multisets))
    else:
        # a node the search may fail: first the sub-multisets led by one row in ``LEADS`` (their
        # supports exact), whose owners failing are a lower bound of the first pass's; the rest after
        part = sub_multisets(rows, power, values, lambda key: key.hash() % LEADS == 0)
        some = computed_once(table, supports(part))
        made.append(some)
        lower = computed_once(table, part.judged.semi_join(some.filter(some[SHARED] < k), on).select(OWNER).distinct())
        made.append(lower)
        many = int(table.engine.value(lower.count()) or 0)
        if many and enough(many):
            return _with_records(grouped, [lower]), None, False
        rest = sub_multisets(rows, power, values, lambda key: key.hash() % LEADS != 0)
        others = supports(rest)  # as the engine types them (Spark reads a literal back narrower)
        held = computed_once(table, stacked([some.cast(others.schema()), others]))
        release(table, some)  # copied into ``held``
        made[:] = [t for t in made if t is not some]
        judged, sampled = rest.judged, [lower]
    made.append(held)
    # how many sub-multisets each count below k + FRAGILE_WINDOW holds: none below k, nobody fails (a
    # release checked as written: no sub-multiset enumerated again)
    few = held.filter(held[SHARED] < k + FRAGILE_WINDOW)
    counted = table.engine.run(few.group_by(SHARED).aggregate(n=few.count())).to_pandas().sort_values(SHARED)
    shorts = int(counted["n"][counted[SHARED] < k].sum())
    if not shorts:
        return _with_records(grouped, []), held[SHARED].min(), True
    # the first pass: each owner's sub-multisets against those below k, read from the fragile ones
    # when they are kept; else, against those below k or, when fewer, those held by k or more (an
    # owner holding one not among them fails): the smaller is looked up
    fragile, bound = _fragile(table, grouped, multisets.judged, held, k, on, counted)
    if fragile is not None:
        made.append(fragile)
        first, sampled = fragile.filter(fragile[SHARED] < k), []  # every owner's, the leading part's too
    elif 2 * shorts <= int(table.engine.value(held.count()) or 0):
        first = judged.semi_join(held.filter(held[SHARED] < k), on)
    else:
        first = judged.anti_join(held.filter(held[SHARED] >= k), on)
    first = first.select(OWNER)
    failing = computed_once(table, (stacked([*sampled, first]) if sampled else first).distinct())
    made.append(failing)
    gone: list = []
    losts: list = []  # per pass, the sub-multisets of the owners removed and how many of them held each
    removed = 0
    while True:
        found = int(table.engine.value(failing.count()) or 0)
        if not found:
            break
        gone.append(failing)
        removed += found
        if enough is not None and enough(removed):
            return _with_records(grouped, gone), None, False
        # the sub-multisets of the owners just removed, and their holders removed so far (read from
        # each pass's, not kept summed in a table made again at every pass: at the bottom of the
        # bench's 10^7 records that table took 8.1 of the exact count's 34.8 s)
        theirs = sub_multisets(rows.semi_join(failing, OWNER), power, values).every
        lost = computed_once(table, theirs.group_by(on).aggregate(**{TAKEN: theirs.count()}))
        made.append(lost)
        losts.append(lost)
        if len(losts) > 1:  # made once: the engine then joins it to the counts knowing its size
            touched = stacked(losts).semi_join(lost, on)
            taken = computed_once(table, touched.group_by(on).aggregate(**{TAKEN: touched[TAKEN].sum().cast("int64")}))
        else:
            taken = lost
        # those now held by fewer than k, and their holders not gone: read from the fragile ones,
        # and looked for among the holders of their rarest row where they are not kept there
        now = taken.join(held, on)
        below = computed_once(table, now.filter(now[SHARED] - now[TAKEN] < k).select(*on, SHARED))
        made.append(below)
        if taken is not lost:
            release(table, taken)
        holders = []
        if fragile is not None:
            holders.append(fragile.semi_join(below, on).select(OWNER).anti_join(stacked(gone), OWNER))
            below = below.filter(below[SHARED] >= bound)
        if fragile is None or int(table.engine.value(below.count()) or 0):
            short = computed_once(table, _anchored(below.select(*on), held, multisets.label, values, power))
            made.append(short)
            holders.append(_holding(rows, stacked(gone), short, on, power, values))
        failing = computed_once(table, stacked(holders).distinct())
        made.append(failing)
    if not losts:
        return _with_records(grouped, gone), held[SHARED].min(), True
    every = stacked(losts)
    taken = every.group_by(on).aggregate(**{TAKEN: every[TAKEN].sum().cast("int64")})
    counts = held.left_join(taken, on)
    left = counts[SHARED] - counts[TAKEN].fill_null(0)
    return _with_records(grouped, gone), left.nullif(0).min(), True


def _fragile(table: EngineTable, grouped, judged, held, k: int, on: list, counted: pd.DataFrame):
    """Each owner's judged sub-multisets held by fewer than a bound (``OWNER``, ``on``, ``SHARED``),
    made once, and the bound; (None, 0) when not worth it. ``counted``: how many sub-multisets of
    ``held`` each count below k + ``FRAGILE_WINDOW`` holds (``SHARED``, ``n``, in order). The bound is
    the greatest within ``FRAGILE_WINDOW`` of k whose sub-multisets' entries (their holders, summed:
    an upper bound) are at most ``FRAGILE_SHARE`` of the (owner, class) pairs; above k, or nothing
    is kept. Every pass of any m records reads its failing owners here: the first, those of the
    sub-multisets below k; a later one, the holders of the sub-multisets whose count fell below k,
    when it was below the bound."""
    shared = counted[SHARED].to_numpy(dtype=np.int64)
    entries = np.cumsum(shared * counted["n"].to_numpy(dtype=np.int64))
    budget = FRAGILE_SHARE * int(table.engine.value(grouped.count()) or 0)
    within = int(np.searchsorted(entries, budget, side="right"))  # the first of ``shared`` past the budget
    bound = int(shared[within]) if within < len(shared) else k + FRAGILE_WINDOW
    if bound <= k:
        return None, 0
    mine = judged.join(held.filter(held[SHARED] < bound), on)
    return computed_once(table, mine.select(OWNER, *on, SHARED)), bound


def _anchored(below, held, label: Sequence[str], values: int, power: int):
    """The sub-multisets ``below`` (``PART`` and ``label``) with their rarest row (``ANCHOR``): the one
    of their rows held by the fewest owners in ``held`` (the counts of the sub-multisets of one row).
    Every holder of a sub-multiset holds each of its rows, and the fewer owners hold the row, the
    fewer ``_holding`` enumerates."""
    import ibis

    part = below[PART]
    if len(label) > 1:  # a column per record, padded with -1
        rows = [below[c].nullif(-1) for c in label]
    else:  # one integer in base ``values``: a sub-multiset of ``size`` rows has ``size`` digits
        packed = below[label[0]]
        rows = [
            ibis.cases(
                *((part == size, (packed // values ** (size - 1 - j)) % values) for size in range(j + 1, power + 1))
            )
            for j in range(power)
        ]
    singles = held.filter(held[PART] == 1)
    joined = below.select(*below.columns, **{f"anonlib_row_{j}": r for j, r in enumerate(rows)})
    for j in range(power):
        ones = singles.select(**{f"anonlib_one_{j}": singles[label[0]], f"anonlib_n_{j}": singles[SHARED]})
        joined = joined.left_join(ones, joined[f"anonlib_row_{j}"] == ones[f"anonlib_one_{j}"])
    fewest = ibis.least(*(joined[f"anonlib_n_{j}"] for j in range(power)))
    anchor = ibis.cases(*((joined[f"anonlib_n_{j}"] == fewest, joined[f"anonlib_row_{j}"]) for j in range(power)))
    return joined.select(*below.columns, **{ANCHOR: anchor.cast("int64")})


def _holding(rows, gone, short, on: list, power: int, values: int):
    """The owners of ``rows`` (``OWNER``, ``KEY``, ``WEIGHT``) not ``gone`` holding a sub-multiset of
    ``short`` (``on`` and ``ANCHOR``, its rarest row) that ``_fragile`` did not keep: looked for among
    the holders of that row (its holders and more), whose sub-multisets alone are made. (Their rows found in a sub-multiset of
    ``short`` alone would do, and took the bench's node 0/0/1/1 at 10^8 records 108 s against 137 s;
    but at the next node DuckDB ran out of its memory, where this did not.)"""
    near = rows.semi_join(short, rows[KEY] == short[ANCHOR]).select(OWNER).distinct().anti_join(gone, OWNER)
    theirs = sub_multisets(rows.semi_join(near, OWNER), power, values).judged
    return theirs.semi_join(short, on).select(OWNER).distinct()


def _short_people(table: EngineTable, grouped, k: int, made: list, enough=None):
    """The owners suppressed in people: those with a row in a class of fewer than k owners, again
    on the owners left until no class is short (``OWNER`` and their ``RECORDS``), kept."""

    def one_pass(alive):
        per_class = alive.group_by(CLASS).aggregate(**{SHARED: alive.count()})
        short = per_class.filter(per_class[SHARED] < k).select(CLASS)
        return alive.join(short, CLASS).select(OWNER).distinct(), per_class[SHARED].min()

    return _until_none_short(table, grouped, made, one_pass, enough)


def _until_none_short(table: EngineTable, grouped, made: list, one_pass, enough=None):
    """The rule of a unit where removing owners can leave others short (people):
    ``one_pass(alive)`` gives the owners failing among ``alive`` and the fewest sharing there; the
    failing are removed and the pass repeated on the owners left until none fails. The owners
    removed with their records (``_with_records``), the last pass's fewest (among those kept), and
    True; or, once the owners removed so far are ``enough`` to fail the node, those and False."""
    alive = grouped
    gone = []
    removed = 0
    while True:
        failing, smallest = one_pass(alive)
        found = int(table.engine.value(failing.count()) or 0)
        if not found:  # counted first: the last pass makes no table
            return _with_records(grouped, gone), smallest, True
        failing = computed_once(table, failing)
        made.append(failing)
        gone.append(failing)
        removed += found
        if enough is not None and enough(removed):
            return _with_records(grouped, gone), None, False
        alive = computed_once(table, alive.anti_join(failing, OWNER))
        made.append(alive)


def _with_records(grouped, gone: list):
    """The owners of ``gone`` (tables of ``OWNER``) with their records in ``grouped``."""
    import ibis

    if not gone:
        return grouped.filter(ibis.literal(False)).group_by(OWNER).aggregate(**{RECORDS: grouped[WEIGHT].sum()})
    owners = ibis.union(*gone, distinct=True) if len(gone) > 1 else gone[0]
    mine = grouped.join(owners, OWNER)
    return mine.group_by(OWNER).aggregate(**{RECORDS: mine[WEIGHT].sum().cast("int64")})


def _short_histories(table: EngineTable, grouped, k: int, made: list, enough=None):
    """The owners whose whole history (at the node) fewer than k owners share (``OWNER``, ``RECORDS``):
    hashed; then, unless ``enough`` says the owners of the groups below k fail the node already,
    groups of k or more verified by counting their members' elements, colliding groups split exactly."""
    import ibis

    per_owner = grouped.group_by(OWNER).aggregate(
        **{RECORDS: grouped[WEIGHT].sum().cast("int64"), LENGTH: grouped.count()}, **history_hashes(grouped, CLASS)
    )
    label = [*HASHES, RECORDS, LENGTH]
    per_owner, groups, short, stopped = _hash_groups(table, per_owner, label, k, made, enough)
    if stopped:
        return short, None, False
    # A group of at least k owners, each with LENGTH distinct (row, records) elements, holds one history
    # exactly when each element found in the group is held by every member (then each member holds all
    # the group's elements, as many as its own): an element held by fewer members marks a collision.
    members = per_owner.join(groups.filter(groups[SHARED] >= k), label).select(OWNER, REP, SHARED)
    mine = grouped.join(members, OWNER)
    held = mine.group_by([REP, CLASS, WEIGHT]).aggregate(anonlib_n=mine.count(), **{SHARED: mine[SHARED].max()})
    split = held.filter(held["anonlib_n"] < held[SHARED]).select(REP).distinct()
    colliding = computed_once(table, groups.join(split, REP).select(*label))
    made.append(colliding)
    kept = groups.filter(groups[SHARED] >= k).anti_join(colliding, label)
    if not int(table.engine.value(colliding.count()) or 0):
        return short, kept[SHARED].min(), True
    # the colliding groups' owners grouped by their sorted lists: exact
    crowd = per_owner.join(colliding, label).select(OWNER)
    signatures = exact_signatures(grouped.join(crowd, OWNER), CLASS)
    shared = signatures.group_by(SIGNATURE).aggregate(**{SHARED: signatures.count()})
    split = signatures.join(shared, SIGNATURE)
    fewest = (kept[SHARED].min(), shared.filter(shared[SHARED] >= k)[SHARED].min())
    return ibis.union(short, split.filter(split[SHARED] < k).select(OWNER, RECORDS), distinct=False), fewest, True


def _hashed_histories(table: EngineTable, joined, k: int, made: list, enough=None):
    """The owners whose history's ``linear_hashes`` fewer than k owners share, from ``joined`` (the
    (owner, row) pairs with their class's residues) in one pass, not verified: a lower bound of those
    whose history fewer than k share (hashes only merge histories), and the exact count unless two
    different histories hash alike (``owners_out(verify=False)``); the fewest sharing among the
    others, and whether the count is whole, as ``_short_histories``'."""
    per_owner = joined.group_by(OWNER).aggregate(
        **{RECORDS: joined[WEIGHT].sum().cast("int64")}, **linear_hashes(joined)
    )
    _, groups, short, stopped = _hash_groups(table, per_owner, [*LINEAR, RECORDS], k, made, enough, rep=False)
    return short, None if stopped else groups.filter(groups[SHARED] >= k)[SHARED].min(), not stopped


def _hash_groups(table: EngineTable, per_owner, label: list[str], k: int, made: list, enough=None, rep=True):
    """Owners grouped by their history's hashes (``label``, with ``RECORDS``): ``per_owner`` and the
    groups (``SHARED`` owners; ``REP`` the least, for a verification) made once, the owners of groups below k with their
    records, and whether those already fail the node (``enough``): hashes only merge histories, so
    they fail at least."""
    per_owner = computed_once(table, per_owner)
    made.append(per_owner)
    least = {REP: per_owner[OWNER].min()} if rep else {}
    groups = computed_once(table, per_owner.group_by(label).aggregate(**{SHARED: per_owner.count()}, **least))
    made.append(groups)
    below_k = groups.filter(groups[SHARED] < k)
    short = per_owner.join(below_k, label).select(OWNER, RECORDS)
    stopped = enough is not None and enough(int(table.engine.value(below_k[SHARED].sum()) or 0))
    return per_owner, groups, short, stopped
