"""Privacy of individuals: PPP, NPP, PP and PoAC (Kroes, Janssen, Groenwold, van Leeuwen 2021).

One variable ``s`` is sensitive, the others are auxiliary. An adversary knows the
true values of individual ``i`` on some auxiliary variables (``a_i``) and looks
at the *peers*: the records matching ``a_i``. With ``#{x}`` the number of
records matching ``x``:

- ``PPP_i(a_i) = 1 - #{s_i, a_i} / #{a_i}``   proportion of protective peers
- ``NPP_i(a_i) = #{a_i} - #{s_i, a_i}``       number of protective peers
- ``PP_{i,v}(a_i) = #{v, a_i} / #{a_i}``      peer protection of a false value v
- ``PoAC_{q,i}(a_i) = #{v != s_i : PP_{i,v}(a_i) > q} / (|dom(s)| - 1)``

Individual ``i`` has p-upward privacy (Definition 3) when ``PPP_i(a_i) > p``
for *every* a_i, and q-downward privacy (Definition 4) when
``PoAC_{q,i}(a_i) = 1`` for every a_i, so the quantities that matter are
minima over all subsets of the auxiliary variables (2^k of them, the empty
subset included by default). dom(s) = the values of s observed in the data.

How the minimum over all subsets is computed fast (the paper's R code needed
4,000 CPU-minutes for its Fig. 2):

1. every column is encoded once (``anonlib.core.equivalence.encode``);
2. subsets are visited depth first; each subset's peer-group ids are its
   parent's ids refined by one more column (``combine``), so no subset is
   grouped from scratch;
3. for each subset, ``#{a}`` and, for every sensitive choice, ``#{s, a}`` are
   ``bincount``s over those ids (``Classes.from_ids``);
4. the paper's monotonicity fact ("when a set of auxiliary values occurs x
   times, any set that contains it occurs at most x times"): a peer group that
   is already a single row stays that row in every superset, where every
   measure is 0 - already attained by the smaller subset - so such rows leave
   the whole branch below it.

Memory stays linear in n per subset: only the ids along the current path are
held, plus the (variables x individuals) result.

Example (the paper's Table 1, age in 10-year bands; Alice is row 0):
    >>> import pandas as pd
    >>> df = pd.DataFrame({
    ...     "diagnosis": ["Cancer", "Cancer", "Cancer", "Arthrosis", "Diabetes"],
    ...     "gender": ["F", "M", "F", "M", "F"],
    ...     "age": ["45-54", "35-44", "35-44", "55-64", "45-54"]})
    >>> m = peer_measures(df, "diagnosis", ["gender", "age"])
    >>> float(m.ppp[0]), int(m.npp[0]), float(m.poac[0])
    (0.5, 1, 0.5)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from .core.budget import Progress, WorkEstimate, check_work, report, subset_count
from .core.dataset import Dataset, Role
from .core.equivalence import Classes, EncodedTable, combine, encode
from .core.errors import (
    ColumnError,
    EmptySelectionError,
    ParameterError,
    ProblemTooLargeError,
    join_names,
    require_columns,
)
from .core.numbers import real_number, whole_number
from .core.metrics import weighted_median

MEASURES = ("ppp", "poac")
MEASURE_NAMES = {"ppp": "PPP", "poac": "PoAC"}
MAX_VARIABLES = 62  # subsets are 64-bit masks; the work estimate refuses long walks well before
NARROW = ("choose fewer variables, let the adversary know at most a few of them at once "
          "(max_known), or analyse a sample of the records")
# a (peer group x value) count table is used directly when it has at most
# TABLE_LIMIT[0] * rows + TABLE_LIMIT[1] cells; larger key spaces are densified first
TABLE_LIMIT = (4, 1024)


# --------------------------------------------------------------------------- inputs


def _column_list(columns: Sequence[str] | str, what: str) -> list[str]:
    if isinstance(columns, str):
        return [columns]
    columns = list(columns)
    if len(set(columns)) != len(columns):
        raise ColumnError(f"A column was listed twice among the {what}; list each column once.")
    return columns


def _check_fraction(value: float, name: str) -> float:
    return real_number(value, f"The threshold {name}", minimum=0.0, maximum=1.0, below=True)


def _encoded(df: pd.DataFrame, sensitive: Sequence[str], aux: Sequence[str], count: str | None) -> EncodedTable:
    """Encode the sensitive and auxiliary columns once, after checking them."""
    columns = list(dict.fromkeys([*sensitive, *aux]))
    require_columns(df, columns)
    if count is not None and count in columns:
        raise ColumnError(
            f"'{count}' is the record-count column; it cannot also be a sensitive or auxiliary variable."
        )
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


def _single(df: pd.DataFrame, sensitive: str, known: Sequence[str] | str, count: str | None):
    known = _column_list(known, "auxiliary variables")
    if sensitive in known:
        raise ParameterError(f"The sensitive variable '{sensitive}' cannot also be auxiliary information.")
    return _encoded(df, [sensitive], known, count), known


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


def _evaluate(
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
                out[shared] = _evaluate(Classes.from_ids(ids, n_ids, kept), s_codes[shared], s_card, kept, measure, q)
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
    q = _check_fraction(q, "q")
    table, known = _single(df, sensitive, known, count)
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


def pp(df: pd.DataFrame, sensitive: str, known: Sequence[str], value: object, *, count: str | None = None) -> np.ndarray:
    """Per row, PP_{i,v}(a_i) = #{v, a_i} / #{a_i}: the share of the row's peers with value v.

    >>> pp(pd.DataFrame({"s": ["x", "y", "x"], "a": [1, 1, 2]}), "s", ["a"], "y").tolist()
    [0.5, 0.5, 0.0]
    """
    table, known = _single(df, sensitive, known, count)
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


# --------------------------------------------------------- minimum over all subsets


def walk_size(n: int, max_known: int | None = None) -> int:
    """Subsets of ``n`` auxiliary variables of at most ``max_known`` of them (all when None),
    the empty one included: what a minimum over subsets walks.

    >>> walk_size(8), walk_size(8, 2), walk_size(30, 3)
    (256, 37, 4526)
    """
    deepest = n if max_known is None else max(min(int(max_known), n), 0)
    return subset_count(n, range(deepest + 1))


# Measured on 2 shared cores, in CPU seconds (random tables of 20,000-300,000 distinct
# rows, 6-14 variables; Adult resampled to 300,000 records, 8 and 15 variables): a
# subset costs about 0.15 ms per target evaluated plus 25 ns per distinct row and
# 40 ns per distinct row and target (high-cardinality columns cost the most; the
# estimate errs high on small ones), and encoding and the per-variable summaries
# 0.44 us per record and variable, once.
_SUBSET_SECONDS = 1.5e-4
_ROW_SECONDS = 2.5e-8
_ROW_TARGET_SECONDS = 4e-8
_RECORD_VARIABLE_SECONDS = 4.4e-7


def _walk_estimate(what: str, distinct: int, rows: int, n_universe: int, targets: float,
                   max_known: int | None, walks: int = 1) -> WorkEstimate:
    """The cost of ``walks`` walks over the subsets of ``n_universe`` variables."""
    subsets = walk_size(n_universe, max_known)
    per_subset = _SUBSET_SECONDS * targets + distinct * (_ROW_SECONDS + _ROW_TARGET_SECONDS * targets)
    depth = n_universe if max_known is None else min(int(max_known), n_universe)
    peak = rows * 8 * (n_universe + 4) + distinct * (8 * (depth + 2) + 18 * max(int(targets * 2), 1))
    once = rows * (n_universe + 1) * _RECORD_VARIABLE_SECONDS
    return WorkEstimate(what, operations=subsets * walks, seconds=once + walks * subsets * per_subset, peak_bytes=peak)


def _distinct_rows(table: EncodedTable) -> int:
    return combine([table.codes[:, j] for j in range(table.codes.shape[1])], list(table.cardinalities))[1]


def estimate_minimum(
    df: pd.DataFrame, sensitive: str, aux: Sequence[str], *, count: str | None = None, max_known: int | None = None,
) -> WorkEstimate:
    """What ``minimum_over_subsets`` (``min_ppp``, ``min_poac``) will cost, before it starts:
    the auxiliary combinations walked, the seconds and the memory.

    >>> df = pd.DataFrame({"s": ["x", "y", "x", "y"], "a": [1, 1, 2, 2], "b": [1, 2, 1, 1]})
    >>> e = estimate_minimum(df, "s", ["a", "b"])
    >>> e.what, e.operations, e.interactive
    ('the minimum over 4 combinations of 2 auxiliary variables for 4 distinct records', 4, True)
    """
    table, aux = _single(df, sensitive, aux, count)
    distinct = _distinct_rows(table)
    subsets = walk_size(len(aux), max_known)
    what = (f"the minimum over {subsets:,} combinations of {len(aux)} auxiliary variables"
            f"{_known_text(len(aux), max_known)} for {distinct:,} distinct records")
    return _walk_estimate(what, distinct, table.n_rows, len(aux), 1, max_known)


def _known_text(n: int, max_known: int | None) -> str:
    return "" if max_known is None or max_known >= n else f" (at most {max_known} known at once)"


@dataclass(frozen=True)
class _Target:
    """One sensitive choice of a search: its codes, |dom(s)|, q, and the
    universe bit it occupies (subsets holding that bit are not its auxiliary sets)."""

    codes: np.ndarray
    card: int
    q: float
    bit: int = 0


def _search(
    codes: Sequence[np.ndarray],
    cards: Sequence[int],
    targets: Sequence[_Target],
    weights: np.ndarray | None,
    measure: str,
    include_empty: bool,
    start: tuple[np.ndarray, int] | None = None,
    progress: Progress | None = None,
    max_known: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Minimum of ``measure`` over every subset of the universe columns, per target and row.

    Returns ``(values, masks)``, both (targets x rows); ``masks`` is the subset
    (bit j = universe column j) attaining the minimum: the smallest such subset
    and, among equally small ones, the first in the walk's order.
    ``start`` = peer-group ids every subset is refined from (a column always known).
    ``max_known`` = the largest subsets walked (None: all). ``progress(done, total,
    "auxiliary combinations")`` counts the subsets walked or pruned, of all of them.

    Rows identical on every column involved get identical results, so the walk
    runs on the distinct rows, weighted by how many records each stands for.
    """
    columns = [*codes, *(t.codes for t in targets if not any(t.codes is c for c in codes))]
    column_cards = [*cards, *(t.card for t in targets if not any(t.codes is c for c in codes))]
    if start is not None:
        columns, column_cards = [*columns, start[0]], [*column_cards, start[1]]
    row_ids, n_distinct = combine(columns, column_cards)
    if n_distinct < len(row_ids):
        distinct = Classes.from_ids(row_ids, n_distinct, weights)
        first, weights = distinct.first_rows, distinct.sizes
        codes = [c[first] for c in codes]
        targets = [_Target(t.codes[first], t.card, t.q, t.bit) for t in targets]
        start = None if start is None else (start[0][first], start[1])

    # The walk takes columns with more distinct values first: the first column's
    # branch holds half of all subsets, and the finer its peer groups, the more
    # rows the pruning removes from it.
    n = len(targets[0].codes)
    n_universe = len(codes)
    walk = sorted(range(n_universe), key=lambda j: -cards[j])  # stable: ties keep the given order
    codes = [codes[j] for j in walk]
    cards = [cards[j] for j in walk]
    bits = [1 << j for j in walk]
    best = np.full((len(targets), n), np.inf)
    best_size = np.full((len(targets), n), n_universe + 1, dtype=np.int16)
    best_mask = np.zeros((len(targets), n), dtype=np.int64)
    deepest = n_universe if max_known is None else min(int(max_known), n_universe)
    total = walk_size(n_universe, deepest)
    done = [0, 0]  # subsets accounted for, and when progress was last reported
    step = max(total // 200, 1)
    evaluate_empty = include_empty or start is not None

    def visit(mask: int, size: int, nxt: int, rows: np.ndarray | None, ids: np.ndarray, n_ids: int) -> None:
        # rows = positions of the rows still refined in this branch (None: all rows)
        row_weights = weights if rows is None or weights is None else weights[rows]
        peers = Classes.from_ids(ids, n_ids, row_weights)
        settled = None  # rows whose every evaluated measure is 0 here
        if size > 0 or evaluate_empty:
            for t, target in enumerate(targets):
                if mask & target.bit:  # s itself is in the subset: not auxiliary information for s
                    continue
                s_codes = target.codes if rows is None else target.codes[rows]
                values = _evaluate(peers, s_codes, target.card, row_weights, measure, target.q)
                at = slice(None) if rows is None else rows
                current = best[t, at]
                candidates = np.flatnonzero(values <= current)
                if candidates.size:
                    # strictly smaller, or equal but attained with fewer variables
                    held = best_size[t, at][candidates] if rows is None else best_size[t, rows[candidates]]
                    candidates = candidates[(values[candidates] < current[candidates]) | (size < held)]
                    where = candidates if rows is None else rows[candidates]
                    best[t, where] = values[candidates]
                    best_size[t, where] = size
                    best_mask[t, where] = mask
                settled = values == 0 if settled is None else settled & (values == 0)
        done[0] += 1
        if nxt < n_universe and settled is not None and settled.any():
            # The paper's scalability remark: a peer group that is a single row stays that
            # row in every superset. More generally, every measure is >= 0, so a row whose
            # measures are all 0 here cannot be beaten by any larger subset. Groups whose
            # rows are all settled leave the branch (whole groups only, so the counts of
            # the other groups are untouched).
            open_rows = np.bincount(ids, weights=~settled, minlength=n_ids)
            keep = open_rows[ids] > 0
            rows = np.flatnonzero(keep) if rows is None else rows[keep]
            ids, n_ids = combine([ids[keep]], [n_ids])  # dense again: smaller count tables
        if nxt >= n_universe or size >= deepest:
            pass
        elif rows is not None and rows.size == 0:
            done[0] += walk_size(n_universe - nxt, deepest - size) - 1  # the branch's subsets, all settled
        else:
            for c in range(nxt, n_universe):
                column = codes[c] if rows is None else codes[c][rows]
                child, n_child = combine([ids, column], [n_ids, cards[c]])
                visit(mask | bits[c], size + 1, c + 1, rows, child, n_child)
        if done[0] - done[1] >= step:
            done[1] = done[0]
            report(progress, done[0], total, "auxiliary combinations")

    ids0, n0 = start if start is not None else (np.zeros(n, dtype=np.int64), 1)
    visit(0, 0, 0, None, ids0, n0)
    report(progress, total, total, "auxiliary combinations")
    if n_distinct < len(row_ids):
        return best[:, row_ids], best_mask[:, row_ids]
    return best, best_mask


def _names_of(mask: int, names: Sequence[str]) -> tuple[str, ...]:
    return tuple(name for j, name in enumerate(names) if mask >> j & 1)


@dataclass(frozen=True)
class SubsetMinimum:
    """Per row, the minimum of a measure over all subsets of ``aux`` and the
    smallest subset attaining it (``worst``: bit j = ``aux[j]``)."""

    sensitive: str
    aux: tuple[str, ...]
    measure: str
    q: float
    include_empty: bool
    values: np.ndarray
    worst: np.ndarray

    def worst_subset(self, row: int) -> tuple[str, ...]:
        """The auxiliary variables of the subset attaining row ``row``'s minimum."""
        return _names_of(int(self.worst[row]), self.aux)


def _check_measure(measure: str) -> str:
    if measure not in MEASURES:
        raise ParameterError(f"The measure is one of {join_names(MEASURES)}; got '{measure}'.")
    return measure


def minimum_over_subsets(
    df: pd.DataFrame,
    sensitive: str,
    aux: Sequence[str],
    measure: str = "ppp",
    q: float = 0.0,
    *,
    include_empty: bool = True,
    count: str | None = None,
    progress: Progress | None = None,
    max_known: int | None = None,
) -> SubsetMinimum:
    """Minimum PPP or PoAC over all subsets of ``aux``, with the worst subset per row.

    ``max_known`` narrows the adversary to subsets of at most that many
    variables (None: every subset). The work is estimated first
    (``estimate_minimum``) and refused with a sentence saying how to narrow it
    when it passes the limits of ``anonlib.core.budget``; ``progress(done, total,
    what)`` counts the auxiliary combinations walked.

    >>> df = pd.DataFrame({"s": ["x", "y", "x", "y"], "a": [1, 1, 2, 2], "b": [1, 2, 1, 1]})
    >>> res = minimum_over_subsets(df, "s", ["a", "b"])
    >>> res.values.round(3).tolist(), res.worst_subset(1), res.worst_subset(2)
    ([0.0, 0.0, 0.333, 0.5], ('b',), ('b',))
    """
    measure = _check_measure(measure)
    q = _check_fraction(q, "q")
    max_known = _check_known(max_known)
    table, aux = _single(df, sensitive, aux, count)
    distinct = _distinct_rows(table)
    check_work(
        _walk_estimate(f"the minimum over {walk_size(len(aux), max_known):,} combinations of auxiliary information "
                       f"for {distinct:,} distinct records", distinct, table.n_rows, len(aux), 1, max_known),
        narrow=NARROW,
    )
    if not aux and not include_empty:
        raise EmptySelectionError(
            "With no auxiliary variables the only auxiliary information is the empty one; "
            "include it or choose auxiliary variables."
        )
    target = _Target(table.column_codes(sensitive), table.cardinalities[0], q)
    codes = [table.column_codes(c) for c in aux]
    cards = [table.cardinalities[table.position(c)] for c in aux]
    values, masks = _search(codes, cards, [target], table.weights, measure, include_empty, progress=progress,
                            max_known=max_known)
    return SubsetMinimum(sensitive, tuple(aux), measure, q, include_empty, values[0], masks[0])


def _check_known(max_known: int | None) -> int | None:
    if max_known is None:
        return None
    if isinstance(max_known, bool) or not float(max_known).is_integer() or int(max_known) < 0:
        raise ParameterError(
            f"The most variables an adversary knows at once must be a whole number of 0 or more; got {max_known}."
        )
    return int(max_known)


def min_ppp(
    df: pd.DataFrame, sensitive: str, aux: Sequence[str], *, include_empty: bool = True, count: str | None = None,
    max_known: int | None = None, progress: Progress | None = None,
) -> np.ndarray:
    """Per row, the minimum PPP over all subsets of ``aux`` (the empty one too by default;
    with ``max_known``, subsets of at most that many variables).

    p-upward privacy of row i holds exactly when ``min_ppp(...)[i] > p``.

    >>> df = pd.DataFrame({"s": ["x", "y", "x", "y"], "a": [1, 1, 2, 2], "b": [1, 2, 1, 1]})
    >>> min_ppp(df, "s", ["a", "b"]).round(3).tolist()
    [0.0, 0.0, 0.333, 0.5]
    """
    return minimum_over_subsets(
        df, sensitive, aux, "ppp", include_empty=include_empty, count=count, max_known=max_known, progress=progress
    ).values


def min_poac(
    df: pd.DataFrame,
    sensitive: str,
    aux: Sequence[str],
    q: float = 0.0,
    *,
    include_empty: bool = True,
    count: str | None = None,
    max_known: int | None = None,
    progress: Progress | None = None,
) -> np.ndarray:
    """Per row, the minimum PoAC_q over all subsets of ``aux``; q-downward privacy = value 1.

    >>> df = pd.DataFrame({"s": ["x", "y", "z", "x"], "a": [1, 1, 1, 2]})
    >>> min_poac(df, "s", ["a"]).tolist()
    [1.0, 1.0, 1.0, 0.0]
    """
    return minimum_over_subsets(
        df, sensitive, aux, "poac", q, include_empty=include_empty, count=count, max_known=max_known, progress=progress
    ).values


# ------------------------------------------------------- the paper's Fig. 2 matrix


def default_q(p: float, domain_size: int) -> float:
    """The paper's joint choice q = p / (|dom(s)| - 1) (p itself for a single value).

    >>> default_q(0.5, 3)
    0.25
    """
    p = _check_fraction(p, "p")
    domain_size = whole_number(domain_size, "The number of sensitive values")
    return p / (domain_size - 1) if domain_size > 1 else p


@dataclass(frozen=True)
class PrivacyMatrix:
    """Fig. 2: every variable in turn sensitive, all others auxiliary, minimum over all subsets.

    ``values[v, i]`` is the minimum PPP (or PoAC) of individual i when
    ``variables[v]`` is sensitive; ``worst[v, i]`` the smallest subset attaining
    it (bit j = ``variables[j]``); ``npp[v, i]`` the NPP with maximum
    auxiliary information, which is also its minimum over all subsets (NPP
    never decreases when information is removed). ``q[v]`` is the PoAC
    threshold used for variable v; ``weights`` the records per row.
    """

    variables: tuple[str, ...]
    measure: str
    include_empty: bool
    q: tuple[float, ...]
    domain_sizes: tuple[int, ...]
    values: np.ndarray
    worst: np.ndarray
    npp: np.ndarray
    weights: np.ndarray

    @property
    def n_individuals(self) -> int:
        return int(self.values.shape[1])

    def subset(self, mask: int) -> tuple[str, ...]:
        """Variable names of a subset bitmask."""
        return _names_of(int(mask), self.variables)

    def worst_subset(self, variable: str, row: int) -> tuple[str, ...]:
        """The smallest auxiliary subset giving row ``row`` its minimum when ``variable`` is sensitive."""
        return self.subset(self.worst[self.variables.index(variable), row])

    def worst_subset_names(self, nothing: str = "(nothing)") -> np.ndarray:
        """Per (variable, individual) cell, its worst auxiliary subset as text
        (names joined by ", "; ``nothing`` for the empty subset).

        >>> df = pd.DataFrame({"s": ["x", "y", "x"], "a": [1, 1, 2]})
        >>> privacy_matrix(df, ["s", "a"]).worst_subset_names().tolist()
        [['(nothing)', 'a', 'a'], ['(nothing)', 's', 's']]
        """
        distinct, inverse = np.unique(self.worst, return_inverse=True)
        names = np.array([", ".join(self.subset(m)) or nothing for m in distinct], dtype=object)
        return names[inverse.reshape(self.worst.shape)]

    def protected(self, p: float = 0.0) -> np.ndarray:
        """Boolean (variables x individuals): p-upward privacy (min PPP > p) or,
        for PoAC, q-downward privacy (min PoAC = 1)."""
        if self.measure == "poac":
            return self.values >= 1.0
        return self.values > p

    def summary(self, p: float = 0.0) -> pd.DataFrame:
        """Per variable: domain size, q, share of records protected, median of the
        minimum, and the NPP distribution (median, share with NPP 0)."""
        w = self.weights
        total = float(w.sum())
        protected = self.protected(p)
        rows = []
        for v, name in enumerate(self.variables):
            rows.append(
                {
                    "variable": name,
                    "domain size": self.domain_sizes[v],
                    "q": self.q[v],
                    "protected share": float((protected[v] * w).sum() / total),
                    f"median min {MEASURE_NAMES[self.measure]}": weighted_median(self.values[v], w),
                    "median NPP": weighted_median(self.npp[v], w),
                    "share NPP = 0": float(((self.npp[v] == 0) * w).sum() / total),
                }
            )
        return pd.DataFrame(rows)

    def table(self, frame: pd.DataFrame | None = None) -> pd.DataFrame:
        """One row per individual: (their values,) and per variable the minimum,
        the worst auxiliary subset and the NPP with maximum auxiliary information."""
        label = MEASURE_NAMES[self.measure]
        out = {} if frame is None else {c: frame[c].to_numpy() for c in frame.columns}
        worst = self.worst_subset_names()
        for v, name in enumerate(self.variables):
            out[f"min {label} [{name}]"] = self.values[v]
            out[f"worst subset [{name}]"] = worst[v]
            out[f"NPP [{name}]"] = self.npp[v]
        return pd.DataFrame(out)


def estimate_privacy_matrix(
    df: pd.DataFrame, variables: Sequence[str], *, count: str | None = None, max_known: int | None = None,
) -> WorkEstimate:
    """What ``privacy_matrix`` will cost, before it starts: one walk over the
    combinations of the variables, each evaluated for every sensitive variable not in it.

    >>> df = pd.DataFrame({"s": ["x", "y", "x"], "a": [1, 1, 2], "b": [3, 4, 3]})
    >>> e = estimate_privacy_matrix(df, ["s", "a", "b"])
    >>> e.what, e.operations
    ('12 (sensitive variable, auxiliary combination) pairs for 3 distinct records', 7)
    >>> estimate_privacy_matrix(df, ["s", "a", "b"], max_known=1).operations
    4
    """
    variables = _column_list(variables, "variables")
    return _matrix_estimate(_encoded(df, [], variables, count), len(variables), _check_known(max_known))


def _matrix_estimate(table: EncodedTable, m: int, max_known: int | None) -> WorkEstimate:
    distinct = _distinct_rows(table)
    known = m - 1 if max_known is None else min(max_known, m - 1)
    pairs = m * walk_size(m - 1, known)
    what = (f"{pairs:,} (sensitive variable, auxiliary combination) pairs{_known_text(m - 1, max_known)} "
            f"for {distinct:,} distinct records")
    return _walk_estimate(what, distinct, table.n_rows, m, m / 2, known)


def privacy_matrix(
    df: pd.DataFrame,
    variables: Sequence[str],
    measure: str = "ppp",
    *,
    q: float | None = None,
    p: float = 0.0,
    include_empty: bool = True,
    count: str | None = None,
    progress: Progress | None = None,
    max_known: int | None = None,
) -> PrivacyMatrix:
    """The paper's Fig. 2: each variable in turn sensitive, all others auxiliary,
    the minimum PPP (or PoAC) over every subset of the others, per individual.

    ``q`` = None uses q = p / (|dom(s)| - 1) per sensitive variable. All
    m * 2^(m-1) (sensitive, subset) pairs come from one walk over the 2^m
    subsets: each subset's peer groups are counted once and refined by each
    sensitive column not in it. ``max_known`` narrows the adversary to subsets
    of at most that many variables. The work is estimated first
    (``estimate_privacy_matrix``) and refused with a sentence saying how to
    narrow it when it passes the limits of ``anonlib.core.budget``;
    ``progress(done, total, what)`` counts the auxiliary combinations walked.

    >>> df = pd.DataFrame({
    ...     "diagnosis": ["Cancer", "Cancer", "Cancer", "Arthrosis", "Diabetes"],
    ...     "gender": ["F", "M", "F", "M", "F"],
    ...     "age": ["45-54", "35-44", "35-44", "55-64", "45-54"]})
    >>> res = privacy_matrix(df, ["diagnosis", "gender", "age"], "poac")
    >>> res.values[:, 2].tolist(), res.worst_subset("diagnosis", 2)
    ([0.0, 1.0, 0.5], ('age',))
    """
    measure = _check_measure(measure)
    p = _check_fraction(p, "p")
    variables = _column_list(variables, "variables")
    if len(variables) < 2:
        raise EmptySelectionError(
            "Choose at least two variables: one is sensitive while the others are auxiliary information."
        )
    max_known = _check_known(max_known)
    table = _encoded(df, [], variables, None if count is None else count)
    check_work(_matrix_estimate(table, len(variables), max_known), narrow=NARROW)
    cards = list(table.cardinalities)
    qs = [default_q(p, c) for c in cards] if q is None else [_check_fraction(q, "q")] * len(variables)
    codes = [np.ascontiguousarray(table.codes[:, j]) for j in range(len(variables))]
    targets = [_Target(codes[j], cards[j], qs[j], 1 << j) for j in range(len(variables))]
    # the set of all variables is auxiliary information for no one: walk up to m - 1 of them
    deepest = len(variables) - 1 if max_known is None else min(max_known, len(variables) - 1)
    values, masks = _search(codes, cards, targets, table.weights, measure, include_empty, progress=progress,
                            max_known=deepest)
    npp_max = np.vstack(
        [
            _evaluate(table.classes([c for c in variables if c != s]), codes[j], cards[j], table.weights, "npp", 0.0)
            for j, s in enumerate(variables)
        ]
    )
    weights = np.ones(table.n_rows, dtype=np.int64) if table.weights is None else table.weights
    return PrivacyMatrix(
        variables=tuple(variables),
        measure=measure,
        include_empty=include_empty,
        q=tuple(qs),
        domain_sizes=tuple(cards),
        values=values,
        worst=masks,
        npp=npp_max.astype(np.int64),
        weights=weights,
    )


# ------------------------------------------------- Fig. 3: leave one variable out


@dataclass(frozen=True)
class LeaveOneOut:
    """Fig. 3: the measure with maximum auxiliary information (``full``) and with
    all auxiliary variables but one (``without[j]`` leaves out ``aux[j]``)."""

    sensitive: str
    aux: tuple[str, ...]
    measure: str
    q: float
    full: np.ndarray
    without: np.ndarray

    @property
    def gain(self) -> np.ndarray:
        """Privacy gained per individual if that variable were unknown (without - full)."""
        return self.without - self.full[None, :]

    def gains(self) -> pd.DataFrame:
        """Per auxiliary variable: the mean measure gained over individuals if it
        were unknown, and the percentage of individuals whose measure improves.

        >>> df = pd.DataFrame({"s": ["x", "y", "x"], "a": [1, 1, 2], "b": [1, 2, 3]})
        >>> leave_one_out(df, "s", ["a", "b"]).gains().to_dict(orient="list")
        {'unknown variable': ['a', 'b'], 'mean PPP gained': [0.0, 0.3333333333333333], 'individuals improved %': [0.0, 66.66666666666666]}
        """
        gain = self.gain
        return pd.DataFrame({
            "unknown variable": list(self.aux),
            f"mean {MEASURE_NAMES[self.measure]} gained": gain.mean(axis=1),
            "individuals improved %": 100 * (gain > 0).mean(axis=1),
        })


def leave_one_out(
    df: pd.DataFrame,
    sensitive: str,
    aux: Sequence[str],
    measure: str = "ppp",
    q: float = 0.0,
    *,
    count: str | None = None,
) -> LeaveOneOut:
    """Where vulnerability comes from: PPP/PoAC with maximum auxiliary information
    except each auxiliary variable in turn.

    >>> df = pd.DataFrame({"s": ["x", "y", "x"], "a": [1, 1, 2], "b": [1, 2, 3]})
    >>> res = leave_one_out(df, "s", ["a", "b"])
    >>> res.full.tolist(), res.without.tolist()
    ([0.0, 0.0, 0.0], [[0.0, 0.0, 0.0], [0.5, 0.5, 0.0]])
    """
    measure = _check_measure(measure)
    q = _check_fraction(q, "q")
    table, aux = _single(df, sensitive, aux, count)
    if not aux:
        raise EmptySelectionError("Choose at least one auxiliary variable to leave out.")
    s_codes, s_card = table.column_codes(sensitive), table.cardinalities[0]

    def measure_with(known: list[str]) -> np.ndarray:
        return _evaluate(table.classes(known), s_codes, s_card, table.weights, measure, q)

    full = measure_with(aux)
    without = np.vstack([measure_with([c for c in aux if c != left]) for left in aux])
    return LeaveOneOut(sensitive, tuple(aux), measure, q, full, without)


# --------------------------------------------- Fig. 4: generalization potential


@dataclass(frozen=True)
class Partition:
    """Equal-width categories of a numeric variable: category j covers
    ``[start + j*width, start + (j+1)*width)`` with ``start = low - offset``.
    The lowest and highest categories are cut at the data's range [low, high],
    as in the paper ("except for the lowest and/or highest category")."""

    width: float
    offset: float
    categories: int
    integer: bool
    low: float
    high: float

    @property
    def start(self) -> float:
        return self.low - self.offset

    def codes(self, values: np.ndarray) -> np.ndarray:
        """Category index of each value (NaN stays NaN)."""
        return np.floor((np.asarray(values, dtype=np.float64) - self.start) / self.width)

    def label(self, j: int) -> str:
        """The category's range, e.g. ``45-54`` for whole numbers, ``[1.5, 3)`` otherwise."""
        lo = max(self.start + j * self.width, self.low)
        if self.integer:
            hi = min(self.start + (j + 1) * self.width - 1, self.high)
            lo, hi = int(round(lo)), int(round(hi))
            return f"{lo}" if lo == hi else f"{lo}-{hi}"
        hi = self.start + (j + 1) * self.width
        return f"[{lo:g}, {hi:g})" if hi <= self.high else f"[{lo:g}, {self.high:g}]"

    def apply(self, series: pd.Series) -> pd.Series:
        """The series with each number replaced by its category label (missing stays missing).

        >>> part = Partition(10, 5, 4, True, 35, 64)
        >>> part.apply(pd.Series([35, 50, 64])).tolist()
        ['35-39', '50-59', '60-64']
        """
        numbers = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        codes = self.codes(numbers)
        labels = {int(j): self.label(int(j)) for j in np.unique(codes[~np.isnan(codes)])}
        out = [None if math.isnan(c) else labels[int(c)] for c in codes]
        return pd.Series(out, index=series.index, dtype="string", name=series.name)


def partitions(
    values: np.ndarray, *, max_categories: int = 20, max_partitions: int = 400
) -> tuple[list[Partition], bool]:
    """Every equal-width partition with 2..``max_categories`` categories and every
    offset (offsets step by 1 for whole numbers, by a tenth of the width otherwise).

    Returns ``(partitions, complete)``; when there would be more than
    ``max_partitions``, offsets are thinned evenly per width and ``complete`` is False.

    >>> parts, complete = partitions(np.array([0, 1, 2, 3]), max_categories=4)
    >>> [(p.width, p.offset, p.categories) for p in parts], complete
    ([(2.0, 0.0, 2), (2.0, 1.0, 3), (3.0, 0.0, 2), (3.0, 1.0, 2), (3.0, 2.0, 2)], True)
    """
    values = np.asarray(values, dtype=np.float64)
    values = values[~np.isnan(values)]
    if values.size == 0:
        raise EmptySelectionError("The variable has no numbers to partition.")
    low, high = float(values.min()), float(values.max())
    integer = bool(np.all(np.floor(values) == values))
    span = high - low + (1.0 if integer else 0.0)
    if span <= 0 or (integer and span < 3):
        raise ParameterError("The variable has too few distinct values; there is nothing to generalize.")
    if int(max_categories) < 2:
        raise ParameterError(f"Allow at least 2 categories; got {max_categories}.")
    thinned = False
    if integer:
        plan, thinned = _whole_number_plan(int(span), int(max_categories), int(max_partitions))
    else:
        plan = []
        for width in (span / c for c in range(max_categories, 1, -1)):
            offsets = [k * width / 10 for k in range(10)]
            offsets = [o for o in offsets if 2 <= _n_categories(low, high, width, o, integer) <= max_categories]
            if offsets:
                plan.append((width, offsets))
    total = sum(len(o) for _, o in plan)
    complete = total <= max_partitions and not thinned
    out = []
    for width, offsets in plan:
        if not complete:
            keep = max(1, int(len(offsets) * max_partitions / total))
            offsets = [offsets[k] for k in np.unique(np.linspace(0, len(offsets) - 1, keep).round().astype(int))]
        for o in offsets:
            out.append(Partition(width, float(o), _n_categories(low, high, width, o, integer), integer, low, high))
    return out, complete


def _whole_number_plan(span: int, max_categories: int, max_partitions: int) -> tuple[list[tuple[float, range]], bool]:
    """The widths and offsets of whole-number partitions, without trying each one, and
    whether widths were left out.

    A width w and offset o (0 <= o < w) make floor((span - 1 + o) / w) + 1 categories,
    which grows with o; so the offsets giving 2..M categories are the range
    max(0, w - span + 1) .. min(w - 1, M w - span), and the widths with any are
    ceil(span / M) .. span - 1. When there are more such widths than ``max_partitions``
    (a wide column such as ZIP codes read as numbers), only ``max_partitions`` evenly
    spaced widths are kept, each with its first offset; so the work is bounded by
    ``max_partitions``, not by span squared.

    >>> plan, thinned = _whole_number_plan(4, 4, 400)
    >>> [(w, list(o)) for w, o in plan], thinned
    ([(2.0, [0, 1]), (3.0, [0, 1, 2])], False)
    """
    first, last = max(2, -(-span // max_categories)), span - 1
    if first > last:
        return [], False
    if last - first + 1 > max_partitions:
        widths = np.unique(np.linspace(first, last, max_partitions).round().astype(np.int64))
        return [(float(w), range(max(0, w - span + 1), max(0, w - span + 1) + 1)) for w in widths.tolist()], True
    plan = []
    for w in range(first, last + 1):
        lo, hi = max(0, w - span + 1), min(w - 1, max_categories * w - span)
        if lo <= hi:
            plan.append((float(w), range(lo, hi + 1)))
    return plan, False


def _n_categories(low: float, high: float, width: float, offset: float, integer: bool) -> int:
    """Categories spanned from ``low - offset`` to ``high`` (inclusive)."""
    if integer:
        return int(math.floor((high - low + offset) / width)) + 1
    return max(1, int(math.ceil((high - low + offset) / width - 1e-9)))


@dataclass(frozen=True)
class GeneralizationPotential:
    """Fig. 4: per equal-width partition of ``variable``, every record's minimum
    PPP over all auxiliary subsets (``minima``, partitions x rows), and the same
    without generalization (``original``); so the share with p-upward privacy
    is available for any p. ``p`` is the default threshold of ``protected``,
    ``baseline`` and ``table``; ``complete`` is False when offsets were thinned."""

    sensitive: str
    variable: str
    aux: tuple[str, ...]
    p: float
    partitions: tuple[Partition, ...]
    minima: np.ndarray
    original: np.ndarray
    weights: np.ndarray
    complete: bool

    def protected_at(self, p: float) -> np.ndarray:
        """Share of records with min PPP > p, per partition."""
        return (self.minima > p) @ self.weights / self.weights.sum()

    def baseline_at(self, p: float) -> float:
        """Share of records with min PPP > p without generalization."""
        return float((self.original > p) @ self.weights / self.weights.sum())

    @property
    def protected(self) -> np.ndarray:
        return self.protected_at(self.p)

    @property
    def baseline(self) -> float:
        return self.baseline_at(self.p)

    def table(self, p: float | None = None) -> pd.DataFrame:
        """One row per partition: categories, width, offset, first category,
        protected share at p (default ``self.p``), and whether it is the best for
        its number of categories (the first such partition when several tie)."""
        frame = pd.DataFrame(
            {
                "categories": [part.categories for part in self.partitions],
                "width": [part.width for part in self.partitions],
                "offset": [part.offset for part in self.partitions],
                "first category": [part.label(0) for part in self.partitions],
                "protected share": self.protected_at(self.p if p is None else p),
            }
        )
        best_rows = frame.sort_values(["categories", "protected share"], ascending=[True, False], kind="stable")
        frame["best for its categories"] = False
        frame.loc[best_rows.drop_duplicates("categories").index, "best for its categories"] = True
        return frame


def _potential_inputs(df, sensitive, aux, variable, max_categories, max_partitions, count):
    aux = _column_list(aux, "auxiliary variables")
    if variable not in aux:
        raise ParameterError(f"'{variable}' must be one of the auxiliary variables to be generalized.")
    require_columns(df, [variable])
    numbers = pd.to_numeric(df[variable], errors="coerce")
    if (numbers.isna() & df[variable].notna()).any():
        raise ColumnError(f"'{variable}' is not numeric, so it cannot be cut into equal-width categories.")
    values = numbers.to_numpy(dtype=np.float64, na_value=np.nan)
    found, complete = partitions(values, max_categories=max_categories, max_partitions=max_partitions)
    rest = [c for c in aux if c != variable]
    table, _ = _single(df, sensitive, aux, count)
    return values, found, complete, rest, table


def _potential_estimate(table: EncodedTable, n_rest: int, n_partitions: int, max_known: int | None) -> WorkEstimate:
    distinct = _distinct_rows(table)
    return _walk_estimate(
        f"the minimum PPP for {n_partitions:,} partitions, each over {walk_size(n_rest, max_known):,} "
        f"combinations of auxiliary information, for {distinct:,} distinct records",
        distinct, table.n_rows, n_rest, 1, max_known, walks=n_partitions + 2,
    )


def estimate_generalization_potential(
    df: pd.DataFrame,
    sensitive: str,
    aux: Sequence[str],
    variable: str,
    *,
    max_categories: int = 20,
    max_partitions: int = 400,
    count: str | None = None,
    max_known: int | None = None,
) -> WorkEstimate:
    """What ``generalization_potential`` will cost, before it starts: a walk over the
    combinations of the other auxiliary variables per partition (and two more).

    >>> df = pd.DataFrame({"s": ["x", "y", "x", "y"], "age": [1, 2, 3, 4]})
    >>> e = estimate_generalization_potential(df, "s", ["age"], "age", max_categories=3)
    >>> e.operations  # 5 partitions + 2 walks, each over the one (empty) combination of the other variables
    7
    """
    _, found, _, rest, table = _potential_inputs(df, sensitive, aux, variable, max_categories, max_partitions, count)
    return _potential_estimate(table, len(rest), len(found), _check_known(max_known))


def generalization_potential(
    df: pd.DataFrame,
    sensitive: str,
    aux: Sequence[str],
    variable: str,
    *,
    p: float = 0.0,
    max_categories: int = 20,
    max_partitions: int = 400,
    include_empty: bool = True,
    count: str | None = None,
    progress: Progress | None = None,
    max_known: int | None = None,
) -> GeneralizationPotential:
    """For each equal-width partition of the numeric auxiliary ``variable``, the
    share of records with p-upward privacy. Subsets without ``variable`` do not
    change with it, so their minimum is computed once; per partition only the
    subsets containing the generalized variable are walked. ``max_known``
    narrows the adversary to subsets of at most that many variables. The work is
    estimated first (``estimate_generalization_potential``) and refused with a
    sentence saying how to narrow it when too large; ``progress(done, total,
    what)`` counts the partitions evaluated.

    >>> df = pd.DataFrame({"s": ["x", "y", "x", "y"], "age": [1, 2, 3, 4]})
    >>> res = generalization_potential(df, "s", ["age"], "age", max_categories=3)
    >>> res.baseline, res.table()["categories"].tolist(), res.protected.tolist()
    (0.0, [2, 3, 2, 2, 2], [1.0, 0.5, 0.75, 1.0, 0.75])
    """
    p = _check_fraction(p, "p")
    max_known = _check_known(max_known)
    values, found, complete, rest, table = _potential_inputs(df, sensitive, aux, variable, max_categories,
                                                             max_partitions, count)
    check_work(_potential_estimate(table, len(rest), len(found), max_known), narrow=NARROW)
    target = _Target(table.column_codes(sensitive), table.cardinalities[0], 0.0)
    codes = [table.column_codes(c) for c in rest]
    cards = [table.cardinalities[table.position(c)] for c in rest]
    weights = np.ones(table.n_rows) if table.weights is None else table.weights.astype(np.float64)
    with_known = None if max_known is None else max_known - 1  # the variable itself is known

    def with_variable(start: tuple[np.ndarray, int]) -> np.ndarray:
        if with_known is not None and with_known < 0:
            return np.full(table.n_rows, np.inf)
        return _search(codes, cards, [target], table.weights, "ppp", True, start=start, max_known=with_known)[0][0]

    # subsets without the variable: the same for every partition
    if rest or include_empty:
        fixed = _search(codes, cards, [target], table.weights, "ppp", include_empty, max_known=max_known)[0][0]
    else:
        fixed = np.full(table.n_rows, np.inf)
    raw = (table.column_codes(variable), table.cardinalities[table.position(variable)])
    original = np.minimum(fixed, with_variable(raw))
    minima = np.empty((len(found), table.n_rows))
    report(progress, 0, len(found), "partitions")
    for k, part in enumerate(found):
        categories = _category_codes(part.codes(values))
        minima[k] = np.minimum(fixed, with_variable(combine([categories], [int(categories.max()) + 1])))
        report(progress, k + 1, len(found), "partitions")
    return GeneralizationPotential(
        sensitive, variable, tuple(aux), p, tuple(found), minima, original, weights, complete
    )


def _category_codes(categories: np.ndarray) -> np.ndarray:
    """Non-negative integer codes for category numbers; NaN (missing) gets its own code."""
    missing = np.isnan(categories)
    low = np.nanmin(categories) if (~missing).any() else 0.0
    codes = np.where(missing, 0, categories - low).astype(np.int64)
    return np.where(missing, codes.max() + 1, codes)


# ----------------------------------------------------------- heatmap columns


@dataclass(frozen=True)
class HeatmapColumns:
    """How individuals become heatmap columns.

    ``order`` lists row positions in display order. With ``bins`` None each
    column is one individual (ordered by hierarchical clustering, as R's
    heatmap.2 does); otherwise column j aggregates ``order[bins[j]:bins[j+1]]``.
    """

    order: np.ndarray
    bins: np.ndarray | None
    description: str

    @property
    def n_columns(self) -> int:
        return len(self.order) if self.bins is None else len(self.bins) - 1

    def aggregate(self, values: np.ndarray, how: str = "mean") -> np.ndarray:
        """(rows x columns): the individual's values, or per bin the mean, min or max.

        >>> HeatmapColumns(np.array([1, 0, 2]), np.array([0, 2, 3]), "").aggregate(np.array([[1.0, 0.0, 4.0]]))
        array([[0.5, 4. ]])
        """
        ordered = values[:, self.order]
        if self.bins is None:
            return ordered
        starts = self.bins[:-1]
        if how == "mean":
            return np.add.reduceat(ordered, starts, axis=1) / np.diff(self.bins)[None, :]
        return {"min": np.minimum, "max": np.maximum}[how].reduceat(ordered, starts, axis=1)


def heatmap_columns(values: np.ndarray, *, max_individuals: int = 1500, n_bins: int = 300) -> HeatmapColumns:
    """Column order for a (variables x individuals) matrix: complete-linkage
    hierarchical clustering for up to ``max_individuals`` individuals; beyond,
    individuals sorted by their mean value (then row by row) in ``n_bins`` bins.

    >>> cols = heatmap_columns(np.array([[0.0, 1.0, 0.0, 1.0]]))
    >>> sorted(cols.order.tolist()), cols.bins is None
    ([0, 1, 2, 3], True)
    >>> heatmap_columns(np.array([[0.0, 1.0, 0.5, 1.0]]), max_individuals=2, n_bins=2).order.tolist()
    [0, 2, 1, 3]
    """
    from scipy.cluster.hierarchy import leaves_list, linkage

    n = values.shape[1]
    if n <= 2:
        return HeatmapColumns(np.arange(n), None, "each column is one individual")
    if n <= max_individuals:
        tree = linkage(values.T, method="complete", optimal_ordering=n <= 400)
        return HeatmapColumns(
            leaves_list(tree).astype(np.int64), None,
            "each column is one individual, ordered by hierarchical clustering (complete linkage)",
        )
    keys = [values[r] for r in range(values.shape[0] - 1, -1, -1)] + [values.mean(axis=0)]
    order = np.lexsort(keys)
    bins = np.linspace(0, n, min(n_bins, n) + 1).round().astype(np.int64)
    return HeatmapColumns(
        order, bins,
        f"each column is a bin of about {n / (len(bins) - 1):,.0f} individuals sorted by their mean value; "
        "a cell shows the bin's mean",
    )


# ------------------------------------------------------------- example datasets


@dataclass(frozen=True)
class PeersExample:
    """A dataset of the paper (Table 1 or 2): its sample, variables, and the paper's sensitive ones."""

    key: str
    title: str
    sample: str
    variables: tuple[str, ...]
    sensitive: tuple[str, ...]


EXAMPLES: dict[str, PeersExample] = {
    e.key: e
    for e in [
        PeersExample("kroes_table1", "Kroes et al. Table 1 (age in 10-year bands, option 2)",
                     "kroes_table1_option2", ("Diagnosis", "Gender", "Age"), ("Diagnosis",)),
        PeersExample("adult", "Adult (paper Table 2: 9 variables)", "adult",
                     ("sex", "age", "race", "marital-status", "education", "native-country",
                      "workclass", "income", "occupation"), ("income",)),
        PeersExample("diabetes", "Diabetes (paper Table 2: 8 variables)", "diabetes",
                     ("gender", "age", "race", "num_lab_procedures", "num_medications", "change",
                      "diabetesMed", "readmitted"), ("readmitted",)),
        PeersExample("cervical_cancer", "Cervical cancer (paper Table 2: 4 variables)", "cervical_cancer",
                     ("Num of pregnancies", "Smokes", "Age", "Biopsy"), ("Biopsy",)),
    ]
}


def example_dataset(key: str) -> Dataset:
    """A paper dataset as a Dataset: its variables as quasi-identifiers, the
    paper's sensitive variable as sensitive, other columns ignored, and rows
    with a missing value in those variables dropped (as the paper did).

    >>> frame, dropped = example_dataset("cervical_cancer").analysis_frame()
    >>> frame.shape, dropped
    ((789, 4), 69)
    """
    from .core.samples import load_sample

    if key not in EXAMPLES:
        raise ParameterError(f"There is no example called '{key}'. Examples: {join_names(EXAMPLES)}.")
    example = EXAMPLES[key]
    base = load_sample(example.sample)
    roles: Mapping[str, Role] = {}
    for column in base.frame.columns:
        if column in example.sensitive:
            roles[column] = Role.SENSITIVE
        elif column in example.variables:
            roles[column] = Role.QUASI_IDENTIFIER
        else:
            roles[column] = Role.IDENTIFIER if base.roles.get(column) is Role.IDENTIFIER else Role.IGNORE
    return Dataset(name=example.title, frame=base.frame, roles=roles, missing="drop", notes=base.notes).validated()
