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
from .equivalence import combine, distinct_keys, persons_per_class
from .errors import ParameterError

# seconds per sub-multiset enumerated and counted, measured on this machine class (bench: history)
SECONDS_PER_TUPLE = 5e-7
BYTES_PER_TUPLE_ITEM = 40  # the tuples' codes, their owners and the sort's copies
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
        support, tuple_owner = _contained(pairs, size, n_owners)
        mine = needed[tuple_owner] == size
        fewest = np.full(n_owners, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(fewest, tuple_owner[mine], support[mine])
        wanted = needed == size
        out[wanted] = fewest[wanted]
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


def _contained(pairs: OwnerPairs, size: int, n_owners: int) -> tuple[np.ndarray, np.ndarray]:
    """Every distinct sub-multiset of ``size`` records of every owner with at least ``size``
    records: per (owner, sub-multiset), the owners whose histories contain that sub-multiset,
    and the owner."""
    owners = np.flatnonzero(pairs.sizes >= size)
    element_owner, element_class, per_owner = _capped(pairs, size, owners)
    start = np.zeros(n_owners + 1, dtype=np.int64)
    np.cumsum(per_owner, out=start[1:])
    tuples, tuple_owners = [], []
    lengths = per_owner[owners]
    for length in np.unique(lengths).tolist():
        group = owners[lengths == length]
        cells = start[group][:, None] + np.arange(length)[None, :]  # (owners, length): their classes, sorted
        classes = element_class[cells]
        picks = np.array(list(itertools.combinations(range(length), size)), dtype=np.int64)
        chosen = classes[:, picks]  # (owners, combinations, size), each row sorted: a sub-multiset
        tuples.append(chosen.reshape(-1, size))
        tuple_owners.append(np.repeat(group, len(picks)))
    if not tuples:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    table = np.concatenate(tuples)
    owner_of = np.concatenate(tuple_owners)
    n_classes = int(element_class.max()) + 1
    code, n_codes = combine(list(table.T), [n_classes] * size, ordered=False)
    pair_key, n_pairs = combine([owner_of, code], [n_owners, n_codes], ordered=False)
    first = np.zeros(n_pairs, dtype=np.int64)
    first[pair_key] = np.arange(len(pair_key))  # each (owner, sub-multiset) once: any of its copies will do
    distinct_code, distinct_owner = code[first], owner_of[first]
    support = np.bincount(distinct_code, minlength=n_codes)
    return support[distinct_code], distinct_owner


def history_work(sizes: np.ndarray, lengths: np.ndarray | None = None, power: int | None = None) -> WorkEstimate:
    """What checking histories at ``power`` enumerates: per owner with ``sizes`` records, its
    sub-multisets of min(power, size) records (and, for owners with fewer records than the power,
    those of everyone else of that size), as an exact count; whole histories (power None or 1)
    cost one pass over the pairs. ``lengths`` caps each owner's records at its distinct classes
    times the power (no sub-multiset uses more copies of one class).

    >>> history_work(np.array([8] * 1000), power=2).operations
    28000
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
    peak = total * power * BYTES_PER_TUPLE_ITEM
    return WorkEstimate(f"comparing {total:,} combinations of {power} records", total, total * SECONDS_PER_TUPLE, peak)


def check_history_work(sizes: np.ndarray, lengths: np.ndarray | None = None, power: int | None = None) -> None:
    """``history_work`` within the limits, or one sentence saying how to narrow it."""
    check_work(
        history_work(sizes, lengths, power),
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
    anonlib.core.errors.ParameterError: The adversary's power is 'all' or a whole number of a person's records, at least 1; got 0.
    """
    if value is None or (isinstance(value, str) and value.strip().lower() == "all"):
        return None
    number = None
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        number = int(value)
    elif isinstance(value, str) and value.strip().isdigit():
        number = int(value.strip())
    if number is None or number < 1:
        shown = repr(value) if isinstance(value, str) else str(value)
        raise ParameterError(
            f"The adversary's power is 'all' or a whole number of a person's records, at least 1; got {shown[:40]}."
        )
    return number


@dataclass(frozen=True, eq=False)
class Earlier:
    """Records a project already released under linked pseudonyms (its earlier deliveries), kept as
    released: per record its owners (``owners``: column -> the values as released, the pseudonyms),
    its class (``classes``: its delivery and its released quasi-identifier values as one label, so
    rows of different deliveries never share a class: an attacker knows which file a row came from)
    and its records (``weights``). A new delivery's histories are judged on its records together
    with these (the cumulative history). Compared by identity.

    >>> e = Earlier.of([(pd.DataFrame({"pid": ["a", "b"], "age": ["30-39", "30-39"]}), ["age"], None)], ["pid"])
    >>> e.deliveries, e.classes.tolist(), e.people("pid")
    (1, ['0\\x1f30-39', '0\\x1f30-39'], 2)
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
            text = frame[list(qis)].astype(str).agg("\x1f".join, axis=1) if qis else pd.Series("", index=frame.index)
            labels.append((f"{number}\x1f" + text).to_numpy(dtype=object))
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

    def people(self, column: str) -> int:
        """Distinct owners of ``column`` in the earlier records."""
        return int(len(pd.unique(self.owners[column])))


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
