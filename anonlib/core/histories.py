"""The counting kernel for linked records: a person's history, a household's signature.

When a release lets its records be put together (the person column released as a
pseudonym, a household column released, deliveries linked by pseudonym), what an attacker
can single out is not one record but an *owner* (a person, or a household) by all of its
records at once. An owner's **history** is the multiset of the classes of its records on the
quasi-identifiers (each class with how many of the owner's records are in it); a household's
history over its members' records is its **signature**.

- ``history_ids``: per owner, one dense id per distinct history (owners with exactly the same
  multiset share the id): the pairs (owner, class) are counted once (one sort), each pair
  becomes one code (class, records), and owners are grouped by their sequence of codes one
  position at a time (each pass re-numbers the prefixes of the owners still going, so no two
  different sequences ever share a number: exact, no hashing).
- ``owners_sharing``: per owner, how many owners share its history, for an adversary who
  knows all of it (``power`` None: the same multiset exactly, El Emam et al.'s longitudinal
  risk), or who knows up to ``power`` = m of its records: the fewest owners whose histories
  contain one of the owner's sub-multisets of min(m, |history|) records (Terrovitis et al.'s
  k^m-anonymity, on multisets). Power 1 is the people count: a class's distinct owners.
- ``history_work``: how many sub-multisets such a check enumerates, estimated (exact Python
  integers) before any is made, refused in one sentence past the limit.

Generalizing coarser only merges classes, so equal histories stay equal and a contained
sub-multiset stays contained: the number of owners sharing a history never falls, which is
what keeps the optimal search's pruning exact in this unit (the property tests check it).

Example (three people; a and b were seen twice in class 0, c once in 0 and once in 1):
    >>> ids = np.array([0, 0, 0, 0, 0, 1])
    >>> owners = np.array([0, 0, 1, 1, 2, 2])
    >>> owners_sharing(ids, 2, owners, 3).tolist()  # the whole history
    [2, 2, 1]
    >>> owners_sharing(ids, 2, owners, 3, power=1).tolist()  # any one record: class 0 holds all three
    [3, 3, 1]
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .budget import WorkEstimate, check_work
from .equivalence import combine, distinct_keys, encode_column, persons_per_class
from .errors import ParameterError
from .numbers import MAX_COUNT, shown, whole_number

# seconds per sub-multiset enumerated and counted, measured on this machine class (bench: history)
SECONDS_PER_TUPLE = 5e-7
BYTES_PER_TUPLE_ITEM = 40  # the tuples' codes, their owners and the sort's copies
# seconds per record of a sub-multiset the engine labels, joins and groups (``anonlib.engine.owners``,
# each sub-multiset enumerated once): ``owners.sharing`` on the bench's panels (DuckDB, 2 threads,
# nothing else running) over the combinations ``history_work`` counts took 5.8e-8 at power 2 on
# 10^7 records (6.9 s), and on 10^6 records 7.9e-8 at power 2, 5.9e-8 at power 3 and 7.4e-8 at
# power 5 (54.4 s). Its memory is the engine's own limit (it spills to disk).
ENGINE_SECONDS_PER_TUPLE_ITEM = 8e-8
KEY_LIMIT = 1 << 62  # (owner, class) pairs keyed in one int64 below this


@dataclass(frozen=True)
class OwnerPairs:
    """The (owner, class) pairs of a table, sorted by owner then class: ``owner``, ``cls`` and
    ``records`` (the owner's records in the class, at least one), and per owner where its pairs
    start (``start``, ``n_owners + 1`` entries) and its records in all (``sizes``)."""

    owner: np.ndarray
    cls: np.ndarray
    records: np.ndarray
    start: np.ndarray
    sizes: np.ndarray

    @property
    def lengths(self) -> np.ndarray:
        """Distinct classes per owner."""
        return np.diff(self.start)


def owner_pairs(
    ids: np.ndarray, n_classes: int, owners: np.ndarray, n_owners: int, weights: np.ndarray | None = None
) -> OwnerPairs:
    """The distinct (owner, class) pairs of the rows with their records (rows of no record left out).

    >>> p = owner_pairs(np.array([1, 0, 1]), 2, np.array([0, 0, 0]), 1, np.array([2, 1, 3]))
    >>> p.cls.tolist(), p.records.tolist(), p.start.tolist(), p.sizes.tolist()
    ([0, 1], [1, 5], [0, 2], [6])
    """
    ids = np.asarray(ids, dtype=np.int64)
    owners = np.asarray(owners, dtype=np.int64)
    w = np.ones(len(ids), dtype=np.int64) if weights is None else np.asarray(weights, dtype=np.int64)
    keep = w > 0
    if not keep.all():
        ids, owners, w = ids[keep], owners[keep], w[keep]
    classes = max(int(n_classes), 1)
    if max(int(n_owners), 1) * classes < KEY_LIMIT:  # one int64 key per (owner, class): hashed, its keys sorted
        pair_ids, keys = distinct_keys(owners * classes + ids, ordered=True)
        records = np.bincount(pair_ids, weights=w, minlength=len(keys)).astype(np.int64)
        pair_owner = keys // classes
        pair_class = keys - pair_owner * classes
    else:  # too many owners and classes for one key: sorted by both
        order = np.lexsort((ids, owners))
        o, c, w = owners[order], ids[order], w[order]
        new = np.ones(len(o), dtype=bool)
        new[1:] = (o[1:] != o[:-1]) | (c[1:] != c[:-1])
        starts = np.flatnonzero(new)
        records = np.add.reduceat(w, starts) if len(starts) else np.zeros(0, dtype=np.int64)
        pair_owner, pair_class = o[starts], c[starts]
    per_owner = np.bincount(pair_owner, minlength=int(n_owners))
    start = np.zeros(int(n_owners) + 1, dtype=np.int64)
    np.cumsum(per_owner, out=start[1:])
    sizes = np.bincount(pair_owner, weights=records, minlength=int(n_owners)).astype(np.int64)
    return OwnerPairs(pair_owner, pair_class, records.astype(np.int64), start, sizes)


def history_ids(
    ids: np.ndarray, n_classes: int, owners: np.ndarray, n_owners: int, weights: np.ndarray | None = None
) -> tuple[np.ndarray, int]:
    """Per owner, the id of its history (owners with the same multiset of classes share it;
    -1 for an owner with no record), and how many distinct histories there are.

    >>> hist, n = history_ids(np.array([0, 1, 1, 0, 0]), 2, np.array([0, 1, 1, 2, 3]), 5)
    >>> hist.tolist(), n
    ([0, 1, 0, 0, -1], 2)
    """
    pairs = owner_pairs(ids, n_classes, owners, n_owners, weights)
    return sequence_ids(pairs, int(n_owners))


def sequence_ids(pairs: OwnerPairs, n_owners: int) -> tuple[np.ndarray, int]:
    """``history_ids`` from the pairs: each pair one code (class, records), then the owners
    grouped by their sequence of codes, one position at a time (see the module text)."""
    out = np.full(n_owners, -1, dtype=np.int64)
    if len(pairs.owner) == 0:
        return out, 0
    records_codes = np.unique(pairs.records, return_inverse=True)[1]
    code, n_codes = combine(
        [pairs.cls, records_codes], [int(pairs.cls.max()) + 1, int(records_codes.max()) + 1], ordered=False
    )
    lengths = pairs.lengths
    position = np.arange(len(pairs.owner), dtype=np.int64) - pairs.start[pairs.owner]
    by_position = np.argsort(position, kind="stable")  # every owner's j-th pair, for j = 0, 1, ...
    per_position = np.bincount(position)
    prefix = np.zeros(n_owners, dtype=np.int64)
    space = widest = 1  # the prefixes' numbers in this pass; the most any pass used
    at = 0
    for count in per_position.tolist():
        rows = by_position[at : at + count]
        at += count
        who = pairs.owner[rows]
        prefix[who], space = combine([prefix[who], code[rows]], [space, n_codes], ordered=False)
        widest = max(widest, space)
    present = lengths > 0  # owners of different lengths ended in different passes: the length tells them apart
    final, n = combine([lengths[present], prefix[present]], [int(lengths.max()) + 1, widest], ordered=False)
    out[present] = final
    return out, int(n)


def owners_sharing(
    ids: np.ndarray,
    n_classes: int,
    owners: np.ndarray,
    n_owners: int,
    weights: np.ndarray | None = None,
    *,
    power: int | None = None,
) -> np.ndarray:
    """Per owner, how many owners share its history as an adversary of ``power`` sees it (see
    the module text): the whole history (None), or any ``power`` of its records (the fewest
    owners containing one of its sub-multisets of min(power, |history|) records). 0 for an owner
    with no record.

    >>> ids, owners = np.array([0, 1, 0, 1, 0]), np.array([0, 0, 1, 1, 2])
    >>> owners_sharing(ids, 2, owners, 3).tolist(), owners_sharing(ids, 2, owners, 3, power=2).tolist()
    ([2, 2, 1], [2, 2, 3])
    """
    pairs = owner_pairs(ids, n_classes, owners, n_owners, weights)
    n_owners = int(n_owners)
    if power is None:
        hist, n = sequence_ids(pairs, n_owners)
        present = hist >= 0
        out = np.zeros(n_owners, dtype=np.int64)
        out[present] = np.bincount(hist[present], minlength=n)[hist[present]]
        return out
    power = adversary_power(power)
    if power == 1:  # a class's distinct owners: the people count
        return _fewest_per_owner(pairs, persons_per_class(pairs.cls, n_classes, pairs.owner, n_owners), n_owners)
    out = np.zeros(n_owners, dtype=np.int64)
    needed = np.minimum(pairs.sizes, power)
    for size in np.unique(needed[needed > 0]).tolist():
        _fewest_contained(pairs, size, n_owners, needed == size, out)
    return out


def _fewest_per_owner(pairs: OwnerPairs, per_class: np.ndarray, n_owners: int) -> np.ndarray:
    """Per owner, the smallest of ``per_class`` over the classes of its records (0: no record)."""
    out = np.full(n_owners, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(out, pairs.owner, per_class[pairs.cls])
    out[pairs.sizes == 0] = 0
    return out


def _capped(pairs: OwnerPairs, size: int, owners: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The records of ``owners`` as class ids, each pair repeated min(records, ``size``) times
    (a sub-multiset of ``size`` records never uses more copies): (owner, class) per element,
    sorted by owner then class, and per owner its elements."""
    chosen = np.zeros(len(pairs.sizes), dtype=bool)
    chosen[owners] = True
    keep = chosen[pairs.owner]
    copies = np.minimum(pairs.records[keep], size)
    element_owner = np.repeat(pairs.owner[keep], copies)
    element_class = np.repeat(pairs.cls[keep], copies)
    per_owner = np.bincount(element_owner, minlength=len(pairs.sizes))
    return element_owner, element_class, per_owner


def _fewest_contained(pairs: OwnerPairs, size: int, n_owners: int, wanted: np.ndarray, out: np.ndarray) -> None:
    """For the ``wanted`` owners (each with at least ``size`` records), into ``out``: the fewest
    owners whose histories contain one of its sub-multisets of ``size`` records.

    Every owner with at least ``size`` records lists its sub-multisets: its records (capped at
    ``size`` copies per class, sorted) taken ``size`` at a time by position, owners of the same
    number of elements together as one (owners, combinations) table of int64 keys (the classes
    as digits). Each key is counted once per owner with one hash pass (a row holds a key twice
    only when its owner repeats a class: those rows alone are sorted to count each key once);
    an owner's fewest is then the minimum of the counts along its row."""
    holding = pairs.sizes >= size
    # owners whose records, capped at ``size`` copies per class, are the same list have the same
    # sub-multisets: one of them (the first) lists them for all, its count weighted by how many
    capped = OwnerPairs(pairs.owner, pairs.cls, np.minimum(pairs.records, size), pairs.start, pairs.sizes)
    same, n_same = sequence_ids(capped, n_owners)
    same = np.where(holding, same, -1)
    weight = np.bincount(same[holding], minlength=n_same)
    first = np.full(n_same, n_owners, dtype=np.int64)
    np.minimum.at(first, same[holding], np.flatnonzero(holding))
    owners = np.sort(first[weight > 0])
    element_owner, element_class, per_owner = _capped(pairs, size, owners)
    start = np.zeros(n_owners + 1, dtype=np.int64)
    np.cumsum(per_owner, out=start[1:])
    n_classes = int(element_class.max()) + 1 if len(element_class) else 1
    repeats = np.zeros(n_owners, dtype=bool)  # owners holding a class twice among their elements
    if size > 1:
        repeats[pairs.owner[pairs.records > 1]] = True
    lengths = per_owner[owners]
    groups, tuples = [], []  # per number of elements: its owners, and their (owners, combinations, size) classes
    for length in np.unique(lengths).tolist():
        group = owners[lengths == length]
        classes = element_class[start[group][:, None] + np.arange(length)[None, :]]  # (owners, length), sorted
        picks = np.array(list(itertools.combinations(range(length), size)), dtype=np.int64)
        groups.append(group)
        tuples.append((classes, picks))
    if not groups:
        return
    keys = _tuple_keys(tuples, n_classes, size)
    counted = []  # per key: the owners it stands for, or 0 for a repeat of a key in its row
    for group, key in zip(groups, keys):
        once = np.broadcast_to(weight[same[group]][:, None], key.shape).copy()
        twice = repeats[group]
        if twice.any():
            rows = key[twice]
            order = np.argsort(rows, axis=1, kind="stable")
            ordered = np.take_along_axis(rows, order, axis=1)
            new = np.ones(rows.shape, dtype=bool)
            new[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
            marks = np.zeros(rows.shape, dtype=bool)
            np.put_along_axis(marks, order, new, axis=1)
            once[twice] *= marks
        counted.append(once)
    key_ids, distinct = distinct_keys(np.concatenate([k.ravel() for k in keys]))
    support = np.bincount(key_ids, weights=np.concatenate([c.ravel() for c in counted]), minlength=len(distinct))
    fewest = np.zeros(n_same, dtype=np.int64)
    at = 0
    for group, key in zip(groups, keys):
        ids = key_ids[at : at + key.size].reshape(key.shape)
        at += key.size
        fewest[same[group]] = support[ids].min(axis=1).astype(np.int64)
    out[wanted] = fewest[same[wanted]]


def _tuple_keys(tuples: list[tuple[np.ndarray, np.ndarray]], n_classes: int, size: int) -> list[np.ndarray]:
    """Per (classes, picks) of ``tuples`` (an (owners, elements) table and the combinations of
    ``size`` positions), the (owners, combinations) table of one int64 key per sub-multiset: its
    classes as digits in base ``n_classes``, or, when they do not fit one int64, numbered densely
    over every table at once (the same sub-multiset, the same key)."""
    if n_classes**size < KEY_LIMIT:
        out = []
        for classes, picks in tuples:
            keys = np.take(classes, picks[:, 0], axis=1).astype(np.int64)
            for j in range(1, size):
                keys *= n_classes
                keys += np.take(classes, picks[:, j], axis=1)
            out.append(keys)
        return out
    chosen = [classes[:, picks] for classes, picks in tuples]  # (owners, combinations, size) each
    flat = np.concatenate([c.reshape(-1, size) for c in chosen])
    dense, _ = combine(list(flat.T), [n_classes] * size, ordered=False)
    out, at = [], 0
    for c in chosen:
        n = c.shape[0] * c.shape[1]
        out.append(dense[at : at + n].reshape(c.shape[:2]))
        at += n
    return out


def history_work(
    sizes: np.ndarray, lengths: np.ndarray | None = None, power: int | None = None, *, engine: bool = False
) -> WorkEstimate:
    """What checking histories at ``power`` enumerates: per owner with ``sizes`` records, its
    sub-multisets of min(power, size) records (and, for owners with fewer records than the power,
    those of everyone else of that size), as an exact count; whole histories (power None or 1)
    cost one pass over the pairs. ``lengths`` caps each owner's records at its distinct classes
    times the power (no sub-multiset uses more copies of one class). ``engine``: timed at the
    engine's speed (``ENGINE_SECONDS_PER_TUPLE_ITEM``), its memory the engine's own (it spills).

    >>> history_work(np.array([8] * 1000), power=2).operations
    28000
    >>> round(history_work(np.array([10] * 10**6), power=5, engine=True).seconds)  # 252 tuples of 5 each
    101
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    if power is None or power <= 1:
        n = int(sizes.sum())
        return WorkEstimate("comparing histories", n, n * SECONDS_PER_TUPLE, n * BYTES_PER_TUPLE_ITEM)
    capped = sizes if lengths is None else np.minimum(sizes, np.asarray(lengths, dtype=np.int64) * power)
    total = 0
    needed = np.minimum(sizes, power)
    wanted = sorted(set(needed[needed > 0].tolist()))
    values, counts = np.unique(capped, return_counts=True)
    for size in wanted:
        total += sum(math.comb(int(v), size) * int(c) for v, c in zip(values.tolist(), counts.tolist()) if v >= size)
    what = f"comparing {total:,} combinations of {power} records"
    if engine:
        return WorkEstimate(what + " on the engine", total, total * power * ENGINE_SECONDS_PER_TUPLE_ITEM, 0)
    return WorkEstimate(what, total, total * SECONDS_PER_TUPLE, total * power * BYTES_PER_TUPLE_ITEM)


def check_history_work(
    sizes: np.ndarray, lengths: np.ndarray | None = None, power: int | None = None, *, engine: bool = False
) -> WorkEstimate:
    """``history_work`` within the limits (returned), or one sentence saying how to narrow it."""
    return check_work(
        history_work(sizes, lengths, power, engine=engine),
        narrow=f"choose a smaller adversary power than {power}, or fewer quasi-identifiers",
    )


def rows_short(
    ids: np.ndarray,
    n_classes: int,
    owners: list[tuple[np.ndarray, int]],
    k: int,
    weights: np.ndarray | None = None,
    *,
    power: int | None = None,
) -> np.ndarray:
    """Per row, whether one of its owners (its person, its household: ``owners`` lists each kind
    as (code per row, how many)) shares its history with fewer than ``k`` owners of its kind, as
    an adversary of ``power`` sees it: the rule of a release target whose records link.

    >>> ids, people = np.array([0, 1, 0, 1, 0]), np.array([0, 0, 1, 1, 2])
    >>> rows_short(ids, 2, [(people, 3)], 2).tolist()
    [False, False, False, False, True]
    """
    short = np.zeros(len(ids), dtype=bool)
    for codes, n in owners:
        codes = np.asarray(codes, dtype=np.int64)
        sharing = owners_sharing(ids, n_classes, codes, n, weights, power=power)
        short |= (sharing < k)[codes]
    return short


def adversary_power(value: object) -> int | None:
    """An adversary's power checked: None (or ``"all"``: the whole history) or a whole number of
    records, at least 1.

    >>> adversary_power("all"), adversary_power(2), adversary_power("3")
    (None, 2, 3)
    >>> adversary_power(0)
    Traceback (most recent call last):
    ...
    anonlib.core.errors.ParameterError: The adversary's power is 'all' or a whole number of a person's records, from 1 to 9,007,199,254,740,992; got 0.
    """
    if value is None or (isinstance(value, str) and value.strip().lower() == "all"):
        return None
    try:
        number = None if isinstance(value, float) else whole_number(value, "power", minimum=1, maximum=MAX_COUNT)
    except ParameterError:
        number = None
    if number is None:
        raise ParameterError(
            f"The adversary's power is 'all' or a whole number of a person's records, from 1 to {MAX_COUNT:,}; "
            f"got {shown(value)}."
        )
    return number


@dataclass(frozen=True, eq=False)
class Earlier:
    """Records a project already released under linked pseudonyms (its earlier deliveries), kept as
    released: per record its owners (``owners``: column -> the values as released, the pseudonyms),
    its class (``classes``: its delivery and its class on the released quasi-identifier values, blanks a value, so
    rows of different deliveries never share a class: an attacker knows which file a row came from)
    and its records (``weights``). A new delivery's histories are judged on its records together
    with these (the cumulative history). Compared by identity.

    >>> e = Earlier.of([(pd.DataFrame({"pid": ["a", "b"], "age": ["30-39", "30-39"]}), ["age"], None)], ["pid"])
    >>> e.deliveries, e.classes.tolist(), e.people("pid")
    (1, ['0\\x1f0', '0\\x1f0'], 2)
    """

    owners: dict[str, np.ndarray]
    classes: np.ndarray
    weights: np.ndarray
    deliveries: int

    @classmethod
    def of(cls, tables: Sequence[tuple[pd.DataFrame, Sequence[str], str | None]], owners: Sequence[str]) -> Earlier:
        """From the released ``tables`` (each: the table as released, its quasi-identifiers, its count
        column or None), the ``owners`` columns each must hold."""
        values: dict[str, list[np.ndarray]] = {c: [] for c in owners}
        labels, weights = [], []
        for number, (frame, qis, count) in enumerate(tables):
            missing = [c for c in owners if c not in frame.columns]
            if missing:
                raise ParameterError(
                    f"Earlier delivery {number + 1} does not hold {', '.join(missing)}, so its records do not link."
                )
            labels.append(np.char.add(f"{number}\x1f", released_classes(frame, qis).astype(str)).astype(object))
            for c in owners:
                values[c].append(frame[c].astype(str).to_numpy(dtype=object))
            w = np.ones(len(frame), dtype=np.int64) if count is None else frame[count].to_numpy(dtype=np.int64)
            weights.append(w)
        return cls(
            {c: _joined(v) for c, v in values.items()},
            _joined(labels),
            np.concatenate(weights) if weights else np.zeros(0, dtype=np.int64),
            len(tables),
        )

    def signatures(self) -> Earlier:
        """The same deliveries as per-person signatures: one row per distinct owners and released
        class, with its records summed (what an engine joins a new delivery with; every count the
        kernel makes is a sum of records per owner and class, so the judgment is the same).

        >>> e = Earlier.of([(pd.DataFrame({"pid": ["a", "a", "b"], "age": [1, 1, 2]}), ["age"], None)], ["pid"])
        >>> s = e.signatures()
        >>> s.owners["pid"].tolist(), s.weights.tolist(), s.deliveries
        (['a', 'b'], [2, 1], 1)
        """
        columns = list(self.owners)
        frame = pd.DataFrame({**{f"o{i}": v for i, v in enumerate(self.owners.values())}, "c": self.classes})
        keys = [*(f"o{i}" for i in range(len(columns))), "c"]
        summed = frame.assign(w=self.weights).groupby(keys, sort=False, dropna=False)["w"].sum().reset_index()
        return Earlier(
            {c: summed[f"o{i}"].to_numpy(dtype=object) for i, c in enumerate(columns)},
            summed["c"].to_numpy(dtype=object),
            summed["w"].to_numpy(dtype=np.int64),
            self.deliveries,
        )

    def people(self, column: str) -> int:
        """Distinct owners of ``column`` in the earlier records."""
        return int(len(pd.unique(self.owners[column])))


def released_classes(frame: pd.DataFrame, qis: Sequence[str]) -> np.ndarray:
    """Per row, the id of its class on ``qis`` as released: rows with the same values share it, a
    blank (missing) value being one value like any other (never joined or compared as text).

    >>> f = pd.DataFrame({"age": pd.array(["30-39", None, None], dtype="string"), "sex": ["F", "F", "F"]})
    >>> released_classes(f, ["age", "sex"]).tolist()
    [0, 1, 1]
    """
    if not len(qis):
        return np.zeros(len(frame), dtype=np.int64)
    encoded = [encode_column(frame[c], ordered=False) for c in qis]
    codes, _ = combine([c for c, _ in encoded], [max(len(labels), 1) for _, labels in encoded], ordered=False)
    return np.asarray(codes, dtype=np.int64)


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=object)


def joint_codes(values: pd.Series, earlier: Earlier | None, column: str) -> tuple[np.ndarray, np.ndarray, int]:
    """One code per owner across a new table's ``values`` and the ``earlier`` records' owners of
    ``column`` (the same pseudonym, the same person): the new rows' codes, the earlier rows' codes
    and how many owners there are in all.

    >>> e = Earlier.of([(pd.DataFrame({"pid": ["b", "c"], "age": [1, 2]}), ["age"], None)], ["pid"])
    >>> new, old, n = joint_codes(pd.Series(["a", "b"]), e, "pid")
    >>> new.tolist(), old.tolist(), n
    ([0, 1], [1, 2], 3)
    """
    from .equivalence import person_codes

    if earlier is None:
        codes, n = person_codes(values, column)
        return codes, np.zeros(0, dtype=np.int64), n
    joined = pd.concat(
        [values.astype(str).reset_index(drop=True), pd.Series(earlier.owners[column], dtype=object)], ignore_index=True
    )
    codes, n = person_codes(joined, column)
    return codes[: len(values)], codes[len(values) :], n
