"""PPP, NPP, PP and PoAC of each record for one set of known variables (Kroes et al.'s
Definitions 1-2), and the inputs every part of ``anonlib.measures.peers`` checks the same way."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...core.equivalence import Classes, EncodedTable, combine, encode
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


def evaluate(
    peers: Classes, s_codes: np.ndarray, s_card: int, weights: np.ndarray | None, measure: str, q: float
) -> np.ndarray:
    """PPP, NPP or PoAC per row, given the rows' peer groups and sensitive codes.

    When the (peer group, value) key space is small, one ``bincount`` over the
    mixed-radix key gives the (groups x values) table of #{v, a}; the measure is
    computed per cell and read back per row. Otherwise peer groups of a single
    row are set aside (they reveal their own value: every measure is 0), and
    if the rest still needs a large key space it is densified with ``combine``
    (``_peer_counts``).
    """
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
    df: pd.DataFrame, sensitive: str, known: Sequence[str], q: float = 0.0, *, count: str | None = None
) -> PeerMeasures:
    """PPP, NPP and PoAC of every row when the adversary knows the columns ``known``.

    >>> df = pd.DataFrame({"s": ["x", "y", "x"], "a": [1, 1, 2]})
    >>> m = peer_measures(df, "s", ["a"])
    >>> m.ppp.tolist(), m.npp.tolist(), m.poac.tolist()
    ([0.5, 0.5, 0.0], [1, 1, 0], [1.0, 1.0, 0.0])
    """
    q = check_fraction(q, "q")
    table, known = single_frame(df, sensitive, known, count)
    s_card = table.cardinalities[0]
    n_peers, n_same, considered = _peer_counts(
        table.classes(known), table.column_codes(sensitive), s_card, table.weights, q
    )
    return PeerMeasures(sensitive, tuple(known), q, n_peers, n_same, considered, max(s_card - 1, 0))


def ppp(df: pd.DataFrame, sensitive: str, known: Sequence[str], *, count: str | None = None) -> np.ndarray:
    """Per row, PPP_i(a_i) with a_i = the row's values on ``known`` (possibly empty).

    >>> ppp(pd.DataFrame({"s": ["x", "y", "x"], "a": [1, 1, 2]}), "s", ["a"]).tolist()
    [0.5, 0.5, 0.0]
    """
    return peer_measures(df, sensitive, known, count=count).ppp


def npp(df: pd.DataFrame, sensitive: str, known: Sequence[str], *, count: str | None = None) -> np.ndarray:
    """Per row, NPP_i(a_i) = #{a_i} - #{s_i, a_i} (records, honouring ``count``).

    >>> npp(pd.DataFrame({"s": ["x", "y", "x"], "a": [1, 1, 1]}), "s", []).tolist()
    [1, 2, 1]
    """
    return peer_measures(df, sensitive, known, count=count).npp


def pp(
    df: pd.DataFrame, sensitive: str, known: Sequence[str], value: object, *, count: str | None = None
) -> np.ndarray:
    """Per row, PP_{i,v}(a_i) = #{v, a_i} / #{a_i}: the share of the row's peers with value v.

    >>> pp(pd.DataFrame({"s": ["x", "y", "x"], "a": [1, 1, 2]}), "s", ["a"], "y").tolist()
    [0.5, 0.5, 0.0]
    """
    table, known = single_frame(df, sensitive, known, count)
    labels = list(table.labels[0])
    if value not in labels:
        raise ParameterError(f"'{value}' is not a value of '{sensitive}'; its values are {join_names(labels)}.")
    peers = table.classes(known)
    hit = (table.column_codes(sensitive) == labels.index(value)).astype(np.float64)
    weights = hit if table.weights is None else hit * table.weights
    with_value = np.bincount(peers.ids, weights=weights, minlength=peers.n_classes)
    return with_value[peers.ids] / peers.row_sizes


def poac(
    df: pd.DataFrame, sensitive: str, known: Sequence[str], q: float = 0.0, *, count: str | None = None
) -> np.ndarray:
    """Per row, PoAC_{q,i}(a_i): the share of the |dom(s)| - 1 false values with PP > q.

    >>> df = pd.DataFrame({"s": ["x", "y", "z", "x"], "a": [1, 1, 1, 2]})
    >>> poac(df, "s", ["a"]).tolist()
    [1.0, 1.0, 1.0, 0.0]
    """
    return peer_measures(df, sensitive, known, q, count=count).poac
