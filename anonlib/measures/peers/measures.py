"""PPP, NPP, PP and PoAC of each record for one set of known variables (Kroes et al.'s
Definitions 1-2), and the inputs every part of ``anonlib.measures.peers`` checks the same way.

With a person column (``person=``) a record's peers are the record itself and the records of
other people that match it: the person's other records are left out (the rule is stated in
``anonlib.measures.peers``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...core.equivalence import Classes, EncodedTable, combine, encode, others_in_class, person_codes
from ...core.errors import (
    ColumnError,
    EmptySelectionError,
    ParameterError,
    ProblemTooLargeError,
    join_names,
    require_columns,
)
from ...core.numbers import real_number

MEASURES = ("ppp", "poac")
MEASURE_NAMES = {"ppp": "PPP", "poac": "PoAC"}
MAX_VARIABLES = 62  # subsets are 64-bit masks; the work estimate refuses long walks well before
NARROW = (
    "choose fewer variables, let the adversary know at most a few of them at once "
    "(max_known), or analyse a sample of the records"
)
# a (peer group x value) count table is used directly when it has at most
# TABLE_LIMIT[0] * rows + TABLE_LIMIT[1] cells; larger key spaces are densified first
TABLE_LIMIT = (4, 1024)


# --------------------------------------------------------------------------- inputs


def column_list(columns: Sequence[str] | str, what: str) -> list[str]:
    if isinstance(columns, str):
        return [columns]
    columns = list(columns)
    if len(set(columns)) != len(columns):
        raise ColumnError(f"A column was listed twice among the {what}; list each column once.")
    return columns


def check_fraction(value: float, name: str) -> float:
    return real_number(value, f"The threshold {name}", minimum=0.0, maximum=1.0, below=True)


def encoded(df: pd.DataFrame, sensitive: Sequence[str], aux: Sequence[str], count: str | None) -> EncodedTable:
    """Encode the sensitive and auxiliary columns once, after checking them."""
    columns = list(dict.fromkeys([*sensitive, *aux]))
    require_columns(df, columns)
    if count is not None and count in columns:
        raise ColumnError(f"'{count}' is the record-count column; it cannot also be a sensitive or auxiliary variable.")
    if len(df) == 0:
        raise EmptySelectionError("The table has no rows, so there is nobody whose privacy could be measured.")
    if len(columns) > MAX_VARIABLES:
        raise ProblemTooLargeError(
            f"{len(columns)} variables are more than the {MAX_VARIABLES} this measure can combine; {NARROW}."
        )
    table = encode(df, columns, count=count)
    if table.weights is not None and (table.weights == 0).any():
        raise ParameterError(
            f"{int((table.weights == 0).sum()):,} rows have a record count of 0 in '{count}'; "
            "remove those rows, they stand for no one."
        )
    return table


Person = tuple[np.ndarray, int]  # each row's person code, and how many people there are


def persons_of(df: pd.DataFrame, person: str | None, columns: Sequence[str], count: str | None) -> Person | None:
    """The codes of the person column ``person`` (None: every record is its own person), after
    checking that it is neither a measured variable nor the record-count column."""
    if person is None:
        return None
    if person in columns:
        raise ColumnError(
            f"'{person}' is the person column: it says whose record it is and cannot also be a sensitive "
            "or auxiliary variable."
        )
    if count is not None and person == count:
        raise ColumnError(f"'{person}' is the record-count column; it cannot also be the person column.")
    require_columns(df, [person])
    return person_codes(df[person], person)


def single_frame(df: pd.DataFrame, sensitive: str, known: Sequence[str] | str, count: str | None):
    known = column_list(known, "auxiliary variables")
    if sensitive in known:
        raise ParameterError(f"The sensitive variable '{sensitive}' cannot also be auxiliary information.")
    return encoded(df, [sensitive], known, count), known


# ------------------------------------------------------------------ one auxiliary set


def _peer_counts(
    peers: Classes, s_codes: np.ndarray, s_card: int, weights: np.ndarray | None, q: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row ``#{a_i}``, ``#{s_i, a_i}`` and the number of false values v with
    PP_{i,v}(a_i) = #{v, a_i} / #{a_i} > q, from the rows' peer groups and sensitive codes."""
    joint_ids, n_joint = combine([peers.ids, s_codes], [peers.n_classes, s_card])
    joint = Classes.from_ids(joint_ids, n_joint, weights)
    owner = np.empty(n_joint, dtype=np.int64)  # the peer group of each (s, a) group
    owner[joint_ids] = peers.ids
    probable = (joint.sizes / peers.sizes[owner]) > q  # indicator I_{q,i,v}
    per_group = np.bincount(owner, weights=probable, minlength=peers.n_classes)
    considered = (per_group[peers.ids] - probable[joint_ids]).astype(np.int64)  # minus the true value
    return peers.sizes[peers.ids], joint.sizes[joint_ids], considered


def _count_above(
    group_of_cell: np.ndarray, cell_counts: np.ndarray, n_groups: int, group_of_query: np.ndarray, divisor, q: float
) -> np.ndarray:
    """Per query, the cells of its group with ``count / divisor > q``: the cells sorted by
    (group, count), then a binary search per query, all queries at once (one vectorized step
    per halving). The test is the division itself, as every other count here is compared."""
    order = np.lexsort((cell_counts, group_of_cell))
    ordered = cell_counts[order]
    per_group = np.bincount(group_of_cell, minlength=n_groups)
    ends = np.cumsum(per_group)
    lo = (ends - per_group)[group_of_query]
    hi = end = ends[group_of_query]
    last = max(len(ordered) - 1, 0)
    while True:
        searching = lo < hi
        if not searching.any():
            return end - lo
        mid = (lo + hi) // 2
        above = ordered[np.minimum(mid, last)] / divisor > q  # counts / divisor grow with the counts
        hi = np.where(searching & above, mid, hi)
        lo = np.where(searching & ~above, mid + 1, lo)


def _other_people_counts(
    peers: Classes,
    s_codes: np.ndarray,
    s_card: int,
    weights: np.ndarray | None,
    q: float,
    person: Person,
    considered: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``_peer_counts`` with the person's other records left out: per row 1 + #{a_i, other
    people}, 1 + #{s_i, a_i, other people}, and the number of false values v with
    #{v, a_i, other people} / (1 + #{a_i, other people}) > q (None unless ``considered``).

    The (group, person), (group, value) and (group, value, person) classes are counted once;
    a false value the person does not hold in the group has all its records among other
    people, so per (group, person) the values above q are found by a binary search over the
    group's value counts (``_count_above``), then corrected for the values the person holds."""
    persons, n_persons = person
    others, own = others_in_class(peers.ids, peers.n_classes, persons, n_persons, weights)  # (group, person)
    # (group, value) and (group, person, value) from ids already dense: no second hash over the people
    value_ids, n_values = combine([peers.ids, s_codes], [peers.n_classes, s_card], ordered=False)
    held_ids, n_held = combine([own.ids, s_codes], [own.n_classes, s_card], ordered=False)
    own_value = Classes.from_ids(held_ids, n_held, weights)
    same_others = Classes.from_ids(value_ids, n_values, weights).sizes[value_ids] - own_value.sizes[held_ids]
    n_peers, n_same = others + 1, same_others + 1
    if not considered:
        return n_peers, n_same, None
    divisor = np.empty(own.n_classes, dtype=np.int64)  # per (group, person): 1 + #{a, other people}
    divisor[own.ids] = n_peers
    pair_group = np.empty(own.n_classes, dtype=np.int64)
    pair_group[own.ids] = peers.ids
    value_count = np.empty(n_values, dtype=np.int64)  # per (group, value): #{v, a}
    value_count[value_ids] = same_others + own_value.sizes[held_ids]
    value_group = np.empty(n_values, dtype=np.int64)
    value_group[value_ids] = peers.ids
    held_pair = np.empty(n_held, dtype=np.int64)  # per (group, person, value): its (group, person)
    held_pair[held_ids] = own.ids
    held_value = np.empty(n_held, dtype=np.int64)
    held_value[held_ids] = value_ids
    held_divisor = divisor[held_pair]
    counted_whole = value_count[held_value] / held_divisor > q  # as counted for the values not held
    counted_others = (value_count[held_value] - own_value.sizes) / held_divisor > q  # the person's left out
    above = _count_above(value_group, value_count, peers.n_classes, pair_group, divisor, q)
    above = (
        above
        - np.bincount(held_pair, weights=counted_whole, minlength=own.n_classes)
        + np.bincount(held_pair, weights=counted_others, minlength=own.n_classes)
    )
    return n_peers, n_same, (above[own.ids] - counted_others[held_ids]).astype(np.int64)  # minus the true value


def evaluate(
    peers: Classes,
    s_codes: np.ndarray,
    s_card: int,
    weights: np.ndarray | None,
    measure: str,
    q: float,
    person: Person | None = None,
) -> np.ndarray:
    """PPP, NPP or PoAC per row, given the rows' peer groups and sensitive codes (and with
    ``person``, the rows' person codes: the person's other records are not peers).

    When the (peer group, value) key space is small, one ``bincount`` over the
    mixed-radix key gives the (groups x values) table of #{v, a}; the measure is
    computed per cell and read back per row. Otherwise peer groups of a single
    row are set aside (they reveal their own value: every measure is 0), and
    if the rest still needs a large key space it is densified with ``combine``
    (``_peer_counts``).
    """
    if person is not None:
        n_peers, n_same, considered = _other_people_counts(
            peers, s_codes, s_card, weights, q, person, considered=measure == "poac"
        )
        if measure == "ppp":
            return 1.0 - n_same / n_peers
        if measure == "npp":
            return n_peers - n_same
        return considered / (s_card - 1) if s_card > 1 else np.zeros(len(s_codes))
    space = peers.n_classes * s_card
    if space > TABLE_LIMIT[0] * len(s_codes) + TABLE_LIMIT[1]:
        shared = peers.rows_per_class[peers.ids] > 1
        if not shared.all():
            out = np.zeros(len(s_codes), dtype=np.int64 if measure == "npp" else np.float64)
            if shared.any():
                kept = None if weights is None else weights[shared]
                ids, n_ids = combine([peers.ids[shared]], [peers.n_classes])
                out[shared] = evaluate(Classes.from_ids(ids, n_ids, kept), s_codes[shared], s_card, kept, measure, q)
            return out
        n_peers, n_same, considered = _peer_counts(peers, s_codes, s_card, weights, q)
        if measure == "ppp":
            return 1.0 - n_same / n_peers
        if measure == "npp":
            return n_peers - n_same
        return considered / (s_card - 1) if s_card > 1 else np.zeros(len(s_codes))
    key = peers.ids * s_card + s_codes
    table = np.bincount(key, weights=weights, minlength=space).reshape(peers.n_classes, s_card)
    sizes = peers.sizes[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):  # groups left empty by the pruning are never read
        if measure == "ppp":
            cells = 1.0 - table / sizes
        elif measure == "npp":
            cells = sizes - np.rint(table).astype(np.int64)
        elif s_card <= 1:
            cells = np.zeros_like(table, dtype=np.float64)
        else:
            probable = (table / sizes) > q  # indicator I_{q,i,v}
            cells = (probable.sum(axis=1)[:, None] - probable) / (s_card - 1)  # minus the true value
    return cells.reshape(-1)[key]


@dataclass(frozen=True)
class PeerMeasures:
    """All measures of one sensitive variable for one auxiliary set, per row.

    ``peers`` = #{a_i}, ``same`` = #{s_i, a_i}, ``considered`` = the number of
    false values v with PP_{i,v} > q, ``alternatives`` = |dom(s)| - 1.
    """

    sensitive: str
    known: tuple[str, ...]
    q: float
    peers: np.ndarray
    same: np.ndarray
    considered: np.ndarray
    alternatives: int

    @property
    def ppp(self) -> np.ndarray:
        """Proportion of protective peers, 1 - #{s_i, a_i} / #{a_i}."""
        return 1.0 - self.same / self.peers

    @property
    def npp(self) -> np.ndarray:
        """Number of protective peers, #{a_i} - #{s_i, a_i}."""
        return self.peers - self.same

    @property
    def poac(self) -> np.ndarray:
        """Proportion of alternatives considered (0 when s has a single value)."""
        if self.alternatives == 0:
            return np.zeros(len(self.peers))
        return self.considered / self.alternatives


def peer_measures(
    df: pd.DataFrame,
    sensitive: str,
    known: Sequence[str],
    q: float = 0.0,
    *,
    count: str | None = None,
    person: str | None = None,
) -> PeerMeasures:
    """PPP, NPP and PoAC of every row when the adversary knows the columns ``known``; with a
    ``person`` column, counted among the row itself and other people's records.

    >>> df = pd.DataFrame({"s": ["x", "y", "x"], "a": [1, 1, 2], "pid": [1, 1, 2]})
    >>> m = peer_measures(df, "s", ["a"])
    >>> m.ppp.tolist(), m.npp.tolist(), m.poac.tolist()
    ([0.5, 0.5, 0.0], [1, 1, 0], [1.0, 1.0, 0.0])
    >>> peer_measures(df, "s", ["a"], person="pid").ppp.tolist()  # rows 0 and 1 are one person's
    [0.0, 0.0, 0.0]
    """
    q = check_fraction(q, "q")
    table, known = single_frame(df, sensitive, known, count)
    persons = persons_of(df, person, [sensitive, *known], count)
    s_card = table.cardinalities[0]
    peers, s_codes = table.classes(known), table.column_codes(sensitive)
    if persons is None:
        n_peers, n_same, considered = _peer_counts(peers, s_codes, s_card, table.weights, q)
    else:
        n_peers, n_same, considered = _other_people_counts(peers, s_codes, s_card, table.weights, q, persons)
    return PeerMeasures(sensitive, tuple(known), q, n_peers, n_same, considered, max(s_card - 1, 0))


def ppp(
    df: pd.DataFrame, sensitive: str, known: Sequence[str], *, count: str | None = None, person: str | None = None
) -> np.ndarray:
    """Per row, PPP_i(a_i) with a_i = the row's values on ``known`` (possibly empty); with a
    ``person`` column, among the row itself and other people's records.

    >>> ppp(pd.DataFrame({"s": ["x", "y", "x"], "a": [1, 1, 2]}), "s", ["a"]).tolist()
    [0.5, 0.5, 0.0]
    """
    return peer_measures(df, sensitive, known, count=count, person=person).ppp


def npp(
    df: pd.DataFrame, sensitive: str, known: Sequence[str], *, count: str | None = None, person: str | None = None
) -> np.ndarray:
    """Per row, NPP_i(a_i) = #{a_i} - #{s_i, a_i} (records, honouring ``count``; with a
    ``person`` column, other people's records).

    >>> npp(pd.DataFrame({"s": ["x", "y", "x"], "a": [1, 1, 1]}), "s", []).tolist()
    [1, 2, 1]
    """
    return peer_measures(df, sensitive, known, count=count, person=person).npp


def pp(
    df: pd.DataFrame,
    sensitive: str,
    known: Sequence[str],
    value: object,
    *,
    count: str | None = None,
    person: str | None = None,
) -> np.ndarray:
    """Per row, PP_{i,v}(a_i) = #{v, a_i} / #{a_i}: the share of the row's peers with value v
    (with a ``person`` column, the peers are the row itself and other people's records).

    >>> pp(pd.DataFrame({"s": ["x", "y", "x"], "a": [1, 1, 2]}), "s", ["a"], "y").tolist()
    [0.5, 0.5, 0.0]
    """
    table, known = single_frame(df, sensitive, known, count)
    persons = persons_of(df, person, [sensitive, *known], count)
    labels = list(table.labels[0])
    if value not in labels:
        raise ParameterError(f"'{value}' is not a value of '{sensitive}'; its values are {join_names(labels)}.")
    peers = table.classes(known)
    is_value = table.column_codes(sensitive) == labels.index(value)
    hit = is_value.astype(np.float64)
    weights = hit if table.weights is None else hit * table.weights
    if persons is not None:  # the value among other people's records, and the row itself
        with_value, _ = others_in_class(peers.ids, peers.n_classes, *persons, weights)
        others, _ = others_in_class(peers.ids, peers.n_classes, *persons, table.weights)
        return (with_value + is_value) / (others + 1)
    with_value = np.bincount(peers.ids, weights=weights, minlength=peers.n_classes)
    return with_value[peers.ids] / peers.row_sizes


def poac(
    df: pd.DataFrame,
    sensitive: str,
    known: Sequence[str],
    q: float = 0.0,
    *,
    count: str | None = None,
    person: str | None = None,
) -> np.ndarray:
    """Per row, PoAC_{q,i}(a_i): the share of the |dom(s)| - 1 false values with PP > q (with a
    ``person`` column, PP among the row itself and other people's records).

    >>> df = pd.DataFrame({"s": ["x", "y", "z", "x"], "a": [1, 1, 1, 2]})
    >>> poac(df, "s", ["a"]).tolist()
    [1.0, 1.0, 1.0, 0.0]
    """
    return peer_measures(df, sensitive, known, q, count=count, person=person).poac
