"""The minimum of PPP or PoAC over every subset of the known variables (Definitions 3-4):
the depth-first walk that refines peer groups one column at a time, and its work estimate."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...core.budget import Progress, WorkEstimate, check_work, report, subset_count
from ...core.equivalence import Classes, EncodedTable, combine
from ...core.errors import EmptySelectionError, ParameterError, join_names
from .measures import MEASURES, NARROW, Person, check_fraction, evaluate, persons_of, single_frame

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
# A walk for one sensitive attribute (the minimum over subsets, each partition of the
# potential) measured alone on an idle machine (bench/NOTES.md): at most 16 ns per distinct
# row and subset (random tables, 10 columns of 10 values), 6 ns on Adult, and 0.1 us per
# record and variable once; the model above overstated it 4 to 12 times, and a page showed
# a progress box for a walk of a third of a second.
_SINGLE_ROW_SECONDS = 2e-8
_SINGLE_RECORD_VARIABLE_SECONDS = 1.5e-7
# With a person column (look-alikes among other people's records) a subset also counts the
# (peer group, person) pairs, a hash over the rows: measured on 2 shared cores, Adult with a
# person per 3 records (30,162 records, 8 variables) 1.0 s and diabetes with patient_nbr
# (99,493 records, 69,668 people, 7 variables) 2.2 s for the minimum PPP: 6.0 and 7.8 times the
# model on the rows distinct with their person.
_PERSON_ROW_FACTOR = 7.0


def walk_estimate(
    what: str,
    distinct: int,
    rows: int,
    n_universe: int,
    targets: float,
    max_known: int | None,
    walks: int = 1,
    person: bool = False,
) -> WorkEstimate:
    """The cost of ``walks`` walks over the subsets of ``n_universe`` variables (``person``:
    among other people's records, ``distinct`` then counting rows distinct with their person)."""
    subsets = walk_size(n_universe, max_known)
    single = targets == 1
    row = _SINGLE_ROW_SECONDS if single else _ROW_SECONDS + _ROW_TARGET_SECONDS * targets
    if person:
        row *= _PERSON_ROW_FACTOR
    per_subset = _SUBSET_SECONDS * targets + distinct * row
    depth = n_universe if max_known is None else min(int(max_known), n_universe)
    peak = rows * 8 * (n_universe + 4) + distinct * (8 * (depth + 2) + 18 * max(int(targets * 2), 1))
    once = rows * (n_universe + 1) * (_SINGLE_RECORD_VARIABLE_SECONDS if single else _RECORD_VARIABLE_SECONDS)
    return WorkEstimate(what, operations=subsets * walks, seconds=once + walks * subsets * per_subset, peak_bytes=peak)


def distinct_rows(table: EncodedTable, person: Person | None = None) -> int:
    """Rows distinct on every encoded column (and on their person, with ``person``)."""
    columns = [table.codes[:, j] for j in range(table.codes.shape[1])]
    cards = list(table.cardinalities)
    if person is not None:
        columns, cards = [*columns, person[0]], [*cards, person[1]]
    return combine(columns, cards, ordered=False)[1]


def estimate_minimum(
    df: pd.DataFrame,
    sensitive: str,
    aux: Sequence[str],
    *,
    count: str | None = None,
    max_known: int | None = None,
    person: str | None = None,
) -> WorkEstimate:
    """What ``minimum_over_subsets`` (``min_ppp``, ``min_poac``) will cost, before it starts:
    the auxiliary combinations walked, the seconds and the memory (``person``: the person
    column, whose pairs with each peer group are counted too).

    >>> df = pd.DataFrame({"s": ["x", "y", "x", "y"], "a": [1, 1, 2, 2], "b": [1, 2, 1, 1]})
    >>> e = estimate_minimum(df, "s", ["a", "b"])
    >>> e.what, e.operations, e.interactive
    ('the minimum over 4 combinations of 2 auxiliary variables for 4 distinct records', 4, True)
    """
    table, aux = single_frame(df, sensitive, aux, count)
    persons = persons_of(df, person, [sensitive, *aux], count)
    distinct = distinct_rows(table, persons)
    subsets = walk_size(len(aux), max_known)
    what = (
        f"the minimum over {subsets:,} combinations of {len(aux)} auxiliary variables"
        f"{known_text(len(aux), max_known)} for {distinct:,} distinct records"
    )
    return walk_estimate(what, distinct, table.n_rows, len(aux), 1, max_known, person=persons is not None)


def known_text(n: int, max_known: int | None) -> str:
    return "" if max_known is None or max_known >= n else f" (at most {max_known} known at once)"


@dataclass(frozen=True)
class Target:
    """One sensitive choice of a search: its codes, |dom(s)|, q, and the
    universe bit it occupies (subsets holding that bit are not its auxiliary sets)."""

    codes: np.ndarray
    card: int
    q: float
    bit: int = 0


def subset_search(
    codes: Sequence[np.ndarray],
    cards: Sequence[int],
    targets: Sequence[Target],
    weights: np.ndarray | None,
    measure: str,
    include_empty: bool,
    start: tuple[np.ndarray, int] | None = None,
    progress: Progress | None = None,
    max_known: int | None = None,
    person: Person | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Minimum of ``measure`` over every subset of the universe columns, per target and row.

    Returns ``(values, masks)``, both (targets x rows); ``masks`` is the subset
    (bit j = universe column j) attaining the minimum: the smallest such subset
    and, among equally small ones, the first in the walk's order.
    ``start`` = peer-group ids every subset is refined from (a column always known).
    ``max_known`` = the largest subsets walked (None: all). ``progress(done, total,
    "auxiliary combinations")`` counts the subsets walked or pruned, of all of them.
    ``person`` = each row's person code and the number of people: a row's peers are then
    the row itself and other people's records (``measures.evaluate``).

    Rows identical on every column involved (the person too) get identical results, so the
    walk runs on the distinct rows, weighted by how many records each stands for.
    """
    columns = [*codes, *(t.codes for t in targets if not any(t.codes is c for c in codes))]
    column_cards = [*cards, *(t.card for t in targets if not any(t.codes is c for c in codes))]
    if start is not None:
        columns, column_cards = [*columns, start[0]], [*column_cards, start[1]]
    if person is not None:
        columns, column_cards = [*columns, person[0]], [*column_cards, person[1]]
    row_ids, n_distinct = combine(columns, column_cards)
    if n_distinct < len(row_ids):
        distinct = Classes.from_ids(row_ids, n_distinct, weights)
        first, weights = distinct.first_rows, distinct.sizes
        codes = [c[first] for c in codes]
        targets = [Target(t.codes[first], t.card, t.q, t.bit) for t in targets]
        start = None if start is None else (start[0][first], start[1])
        person = None if person is None else (person[0][first], person[1])

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
        row_persons = None if person is None else (person[0] if rows is None else person[0][rows], person[1])
        settled = None  # rows whose every evaluated measure is 0 here
        if size > 0 or evaluate_empty:
            for t, target in enumerate(targets):
                if mask & target.bit:  # s itself is in the subset: not auxiliary information for s
                    continue
                s_codes = target.codes if rows is None else target.codes[rows]
                values = evaluate(peers, s_codes, target.card, row_weights, measure, target.q, row_persons)
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


def names_of(mask: int, names: Sequence[str]) -> tuple[str, ...]:
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
        return names_of(int(self.worst[row]), self.aux)


def check_measure(measure: str) -> str:
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
    person: str | None = None,
) -> SubsetMinimum:
    """Minimum PPP or PoAC over all subsets of ``aux``, with the worst subset per row.

    ``max_known`` narrows the adversary to subsets of at most that many
    variables (None: every subset). ``person``: the person column; a record's peers are
    then the record itself and other people's records (``anonlib.measures.peers``). The work is estimated first
    (``estimate_minimum``) and refused with a sentence saying how to narrow it
    when it passes the limits of ``anonlib.core.budget``; ``progress(done, total,
    what)`` counts the auxiliary combinations walked.

    >>> df = pd.DataFrame({"s": ["x", "y", "x", "y"], "a": [1, 1, 2, 2], "b": [1, 2, 1, 1]})
    >>> res = minimum_over_subsets(df, "s", ["a", "b"])
    >>> res.values.round(3).tolist(), res.worst_subset(1), res.worst_subset(2)
    ([0.0, 0.0, 0.333, 0.5], ('b',), ('b',))
    """
    measure = check_measure(measure)
    q = check_fraction(q, "q")
    max_known = check_known(max_known)
    table, aux = single_frame(df, sensitive, aux, count)
    persons = persons_of(df, person, [sensitive, *aux], count)
    distinct = distinct_rows(table, persons)
    check_work(
        walk_estimate(
            f"the minimum over {walk_size(len(aux), max_known):,} combinations of auxiliary information "
            f"for {distinct:,} distinct records",
            distinct,
            table.n_rows,
            len(aux),
            1,
            max_known,
            person=persons is not None,
        ),
        narrow=NARROW,
    )
    if not aux and not include_empty:
        raise EmptySelectionError(
            "With no auxiliary variables the only auxiliary information is the empty one; "
            "include it or choose auxiliary variables."
        )
    target = Target(table.column_codes(sensitive), table.cardinalities[0], q)
    codes = [table.column_codes(c) for c in aux]
    cards = [table.cardinalities[table.position(c)] for c in aux]
    values, masks = subset_search(
        codes,
        cards,
        [target],
        table.weights,
        measure,
        include_empty,
        progress=progress,
        max_known=max_known,
        person=persons,
    )
    return SubsetMinimum(sensitive, tuple(aux), measure, q, include_empty, values[0], masks[0])


def check_known(max_known: int | None) -> int | None:
    if max_known is None:
        return None
    if isinstance(max_known, bool) or not float(max_known).is_integer() or int(max_known) < 0:
        raise ParameterError(
            f"The most variables an adversary knows at once must be a whole number of 0 or more; got {max_known}."
        )
    return int(max_known)


def min_ppp(
    df: pd.DataFrame,
    sensitive: str,
    aux: Sequence[str],
    *,
    include_empty: bool = True,
    count: str | None = None,
    max_known: int | None = None,
    progress: Progress | None = None,
    person: str | None = None,
) -> np.ndarray:
    """Per row, the minimum PPP over all subsets of ``aux`` (the empty one too by default;
    with ``max_known``, subsets of at most that many variables; with a ``person`` column,
    among the row itself and other people's records).

    p-upward privacy of row i holds exactly when ``min_ppp(...)[i] > p``.

    >>> df = pd.DataFrame({"s": ["x", "y", "x", "y"], "a": [1, 1, 2, 2], "b": [1, 2, 1, 1]})
    >>> min_ppp(df, "s", ["a", "b"]).round(3).tolist()
    [0.0, 0.0, 0.333, 0.5]
    """
    return minimum_over_subsets(
        df,
        sensitive,
        aux,
        "ppp",
        include_empty=include_empty,
        count=count,
        max_known=max_known,
        progress=progress,
        person=person,
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
    person: str | None = None,
) -> np.ndarray:
    """Per row, the minimum PoAC_q over all subsets of ``aux``; q-downward privacy = value 1
    (with a ``person`` column, among the row itself and other people's records).

    >>> df = pd.DataFrame({"s": ["x", "y", "z", "x"], "a": [1, 1, 1, 2]})
    >>> min_poac(df, "s", ["a"]).tolist()
    [1.0, 1.0, 1.0, 0.0]
    """
    return minimum_over_subsets(
        df,
        sensitive,
        aux,
        "poac",
        q,
        include_empty=include_empty,
        count=count,
        max_known=max_known,
        progress=progress,
        person=person,
    ).values
