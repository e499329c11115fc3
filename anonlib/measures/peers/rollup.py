"""The paper's Fig. 2 on the lattice of distinct tables: every variable in turn sensitive,
the minimum over every subset of the others, with the work per subset on that subset's
distinct value combinations instead of on the records.

For a set P of variables, T_P is its table: one cell per distinct combination of
P's values, with the records it stands for. A (sensitive s, auxiliary B) pair is
read off T_P for P = B + {s}: cell c's measure needs only its own count and the
count of its B-group, and the B-groups are T_P's cells rolled up by dropping s.
So every pair is evaluated on |T_P| cells (a few dozen for small P, the distinct
records for the whole set) and the m * 2^(m-1) pairs share 2^m tables:

1. The tables are visited depth first, each set P = Q + {c} refined from its
   prefix Q (c after every column of Q) by one column over the distinct records
   (``core.equivalence.refine``). Cells are numbered in the lexicographic order of
   their values, so a roll-up map is the same whichever way it is computed.
2. Roll-up maps (cell of T_P -> cell of T_{P-s}) for every s in P come from the
   prefix's maps, on cells: a cell of T_{P-s} = (Q-s) + {c} is the pair (the
   parent cell's Q-s cell, code of c), numbered densely from 0 per s. Dropping c
   itself is the refinement's parent map. A leaf (a set with the last column, the
   narrowest) keeps the pair's key while its range stays within a few times the
   leaf's cells: it only groups them, and only the map a waiting minimum is pulled
   through (step 4) is numbered.
3. Each pair's measure is computed per cell from the rolled-up counts.
4. The minimum over subsets is lifted, not scattered to the records: a table's
   running minimum covers every subset of P and is pulled into one superset
   P + {y} through that superset's roll-up map for y. The walk takes the
   children of a set in decreasing column order, which visits every set after
   all its subsets, so a minimum is complete when its superset pulls it. A set
   without the last column is pulled by its first child (P + last); the others
   wait for P + (the largest missing column).
5. Ties: each running minimum carries the rank of the subset attaining it; the
   rank orders subsets by size and then by the order of the record walk in
   ``subsets._search``, and equal values keep the lower rank, so the worst subset
   is the one the record walk reports.

Only the full set's table is read per record, once, at the end.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from ...core.budget import Progress, report
from ...core.equivalence import Classes, Refinement, combine, refine
from ...core.parallel import each, start


def _subset_ranks(m: int) -> np.ndarray:
    """Per subset of positions (bitmask over the walk's column positions), its rank by
    size, then by the order of ``subsets._search``'s walk (lexicographic on positions).

    >>> _subset_ranks(2).tolist()  # {}, {0}, {1}, {0, 1}
    [0, 1, 2, 3]
    """
    order: list[int] = []

    def walk(mask: int, nxt: int) -> None:
        order.append(mask)
        for c in range(nxt, m):
            walk(mask | (1 << c), c + 1)

    walk(0, 0)
    masks = np.array(order, dtype=np.int64)
    sizes = np.array([bin(int(x)).count("1") for x in order])
    rank = np.empty(1 << m, dtype=np.int64)
    rank[masks[np.argsort(sizes, kind="stable")]] = np.arange(len(masks))
    return rank


def lattice_matrix(
    codes: Sequence[np.ndarray],
    cards: Sequence[int],
    qs: Sequence[float],
    weights: np.ndarray | None,
    measure: str,
    include_empty: bool,
    progress: Progress | None = None,
    *,
    distinct: tuple[np.ndarray, int] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per variable (sensitive) and row: the minimum of ``measure`` over every subset of the
    other variables, the subset attaining it (bit j = variable j), and the NPP with all
    the others known. The results of ``subsets._search`` with every variable a target.

    >>> values, worst, npp = lattice_matrix([np.array([0, 1, 0]), np.array([0, 0, 1])], [2, 2],
    ...                                     [0.0, 0.0], None, "ppp", True)
    >>> values.round(3).tolist(), worst.tolist(), npp.tolist()
    ([[0.333, 0.5, 0.0], [0.333, 0.0, 0.5]], [[0, 2, 2], [0, 1, 1]], [[1, 1, 0], [1, 0, 1]])
    """
    m = len(codes)
    # each row's distinct record (``combine(codes, cards, ordered=False)``, when the caller has it)
    row_ids, n_distinct = combine(list(codes), list(cards), ordered=False) if distinct is None else distinct
    if not n_distinct:  # no record: nothing to walk
        return np.empty((m, 0)), np.zeros((m, 0), dtype=np.int64), np.zeros((m, 0), dtype=np.int64)
    records = Classes.from_ids(row_ids, n_distinct, weights)  # records per distinct record
    first = records.first_rows
    row_weights = records.sizes.astype(np.float64)

    walk = sorted(range(m), key=lambda j: -int(cards[j]))  # position -> variable, as in subsets._search
    # the narrowest integer type per column: every branch gathers its column for its rows
    pcodes = [np.asarray(codes[j])[first].astype(np.min_scalar_type(max(int(cards[j]) - 1, 0))) for j in walk]
    pcards = [int(cards[j]) for j in walk]
    pq = np.array([qs[j] for j in walk], dtype=np.float64)
    alternatives = np.array([max(c - 1, 0) for c in pcards], dtype=np.float64)
    rank = _subset_ranks(m)
    rank_type = np.int16 if (1 << m) <= np.iinfo(np.int16).max else np.int32
    full, last = (1 << m) - 1, m - 1
    step = max(full // 200, 1)
    done = [0, 0]
    pending: dict[int, list[tuple[tuple[np.ndarray, np.ndarray], int]]] = {}
    result: dict[str, object] = {}

    def evaluate(
        mask: int, positions: list[int], cell_w: np.ndarray, edges: np.ndarray, groups: list[int]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Own values of every (s in P, P - s) pair on T_P's cells, and the subsets' ranks."""
        k, n = edges.shape
        # #{a_i} per (target, cell): the cells' records rolled up to their group and read back
        values = np.empty((k, n))

        def group_sizes(i: int) -> None:  # one target at a time (no k-fold copy), the targets on every core
            np.take(np.bincount(edges[i], weights=cell_w, minlength=groups[i]), edges[i], out=values[i])

        each(group_sizes, range(k), elements=n)
        if mask == full:
            result["npp"] = [np.rint(out - cell_w).astype(np.int64) for out in values]
        np.divide(cell_w, values, out=values)  # #{s_i, a_i} / #{a_i}, exact counts in float64;
        # written over the counts (a fresh array of this size costs its page faults again)
        if measure == "ppp":
            np.subtract(1.0, values, out=values)
        else:

            def considered(i: int) -> None:
                out, q, alt = values[i], pq[positions[i]], alternatives[positions[i]]
                probable = out > q  # indicator I_{q,i,v}
                counted = np.take(np.bincount(edges[i], weights=probable, minlength=groups[i]), edges[i]) - probable
                out[:] = counted / alt if alt > 0 else 0.0  # a single value: PoAC 0

            each(considered, range(k), elements=n)
        ranks = np.empty((k, n), dtype=rank_type)
        ranks[:] = np.array([rank[mask & ~(1 << s)] for s in positions], dtype=rank_type)[:, None]
        if not include_empty and k == 1:
            values[:] = np.inf
        return values, ranks

    def pull(
        agg: tuple[np.ndarray, np.ndarray],
        positions: list[int],
        child: tuple[np.ndarray, np.ndarray],
        y: int,
        edge: np.ndarray,
    ) -> None:
        """agg (the targets of P) <- min(agg, the minimum of P - y read through ``edge``);
        equal values keep the lower rank."""
        i = positions.index(y)

        def block(first_cell: int) -> None:  # in blocks of cells: the temporaries stay small and warm
            cells = slice(first_cell, first_cell + PULL_CELLS)
            part = edge[cells]
            values, ranks = np.take(child[0], part, axis=1), np.take(child[1], part, axis=1)
            for mine, theirs in ((slice(0, i), slice(0, i)), (slice(i + 1, None), slice(i, None))):
                v, r, lv, lr = agg[0][mine, cells], agg[1][mine, cells], values[theirs], ranks[theirs]
                if not v.size:
                    continue
                take = np.less(lv, v)
                take |= np.equal(lv, v) & np.less(lr, r)  # equal values: the lower rank
                moved = np.subtract(lr, r)
                moved *= take  # a select by arithmetic: numpy's masked ufuncs (where=) are several times slower
                r += moved
                np.minimum(v, lv, out=v)

        # the blocks write to different cells: on every core
        each(block, range(0, len(edge), PULL_CELLS), elements=PULL_CELLS * len(positions))

    def visit(
        mask: int,
        positions: list[int],
        rows: tuple[np.ndarray, np.ndarray, np.ndarray],
        n_cells: int,
        edges: np.ndarray | None,
        groups: list[int],
        agg: tuple[np.ndarray, np.ndarray] | None,
    ) -> None:
        # rows: the records distinct on Q and on every column after Q's last (all that Q's
        # subtree can still tell apart): their cell of T_Q, their records, a distinct record each.
        # edges[i]: cell of T_Q -> cell of T_{Q - s_i} (0, 1, ..., groups[i] - 1)
        ids, weights, representative = rows
        top = positions[-1] if positions else -1

        def refined(c: int, chain: Refinement | None) -> tuple[Refinement, np.ndarray]:
            """The rows refined by the columns last, last - 1, ..., c (the children's rows), and column c."""
            column = pcodes[c][representative]
            classes, n = (ids, n_cells) if chain is None else (chain.ids, chain.n_classes)
            return refine(classes, n, column, pcards[c], weights), column

        # each step of the chain depends only on the one before: the next is started on the
        # pool while this child's tables are evaluated and its subtree walked
        chain_started = start(refined, last, None, elements=len(ids)) if last > top else None
        for c in range(last, top, -1):  # decreasing: every set comes after all its subsets
            child_mask, child_positions = mask | (1 << c), [*positions, c]
            leaf = c == last  # T_{Q+last}: no children of its own
            chain, column = chain_started.result()
            if c - 1 > top:
                chain_started = start(refined, c - 1, chain, elements=len(ids))
            if leaf:
                split, first = chain, None
            else:  # Q + c on the chain's classes (each lies in one cell of Q + c): fewer rows, the same cells
                first = _first_rows(chain.ids, chain.n_classes)
                split = refine(ids[first], n_cells, column[first], pcards[c], chain.sizes)
            k = len(child_positions)
            child_edges = np.empty((k, split.n_classes), dtype=np.int64)
            child_groups = []
            if positions:  # the maps for s in Q: (Q-s cell of the parent cell, code of c), on every core
                child_groups = each(
                    functools.partial(_child_map, edges, groups, split, pcards[c], child_edges, leaf),
                    range(len(groups)),
                    elements=split.n_classes,
                )
            child_edges[-1] = split.parent  # dropping c: the parent map
            child_groups.append(n_cells)
            child_agg = evaluate(child_mask, child_positions, split.sizes, child_edges, child_groups)
            if c == last and agg is not None:  # the prefix (without the last column) is pulled here
                pull(child_agg, child_positions, agg, c, split.parent)
            for waiting, y in pending.pop(child_mask, []):
                i = child_positions.index(y)
                edge = child_edges[i] if not leaf else combine([child_edges[i]], [child_groups[i]])[0]
                pull(child_agg, child_positions, waiting, y, edge)
            done[0] += 1
            if done[0] - done[1] >= step:
                done[1] = done[0]
                report(progress, done[0], full, "auxiliary combinations")
            if child_mask == full:
                cell_of_row = np.empty(n_distinct, dtype=np.int64)
                cell_of_row[representative] = split.ids  # here every row is one distinct record
                result["agg"], result["ids"] = child_agg, cell_of_row
                continue
            if c == last:  # a leaf of the walk; its minimum waits for the largest missing column
                y = max(p for p in range(m) if not child_mask >> p & 1)
                pending.setdefault(child_mask | (1 << y), []).append((child_agg, y))
                continue
            child_rows = (split.ids, chain.sizes, representative[first])
            visit(child_mask, child_positions, child_rows, split.n_classes, child_edges, child_groups, child_agg)

    visit(0, [], (np.zeros(n_distinct, dtype=np.int64), row_weights, np.arange(n_distinct)), 1, None, [], None)
    report(progress, full, full, "auxiliary combinations")

    (agg_values, agg_ranks), cell_of_row = result["agg"], result["ids"]
    universe = np.array([sum(1 << walk[p] for p in range(m) if pm >> p & 1) for pm in range(1 << m)], dtype=np.int64)
    mask_of_rank = np.empty(1 << m, dtype=np.int64)
    mask_of_rank[rank] = universe
    cell_of_record = np.take(cell_of_row, row_ids)  # one gather to the records, then each row read through it
    n_records = len(row_ids)
    values = np.empty((m, n_records))
    worst = np.empty((m, n_records), dtype=np.int64)
    npp = np.empty((m, n_records), dtype=np.int64)

    def to_records(p: int) -> None:  # one variable's rows, the variables on every core
        j = walk[p]
        np.take(agg_values[p], cell_of_record, out=values[j])
        worst_of_cell = np.where(np.isfinite(agg_values[p]), mask_of_rank[agg_ranks[p]], 0)
        np.take(worst_of_cell, cell_of_record, out=worst[j])
        np.take(result["npp"][p], cell_of_record, out=npp[j])

    each(to_records, range(m), elements=n_records)
    return values, worst, npp


PULL_CELLS = 1 << 14  # cells of a table pulled at once (a few MB of temporaries at most)
SPARSE_KEYS = 4  # a leaf's map keeps its sparse key while its range is at most this many times the leaf's cells


def _child_map(
    edges: np.ndarray, groups: list[int], split: Refinement, card: int, out: np.ndarray, leaf: bool, i: int
) -> int:
    """The map of the new table P = Q + c to T_{P - s_i} for target ``i`` of Q, written to
    ``out[i]``, and how many groups it numbers: the pair (the parent cell's cell of
    T_{Q - s_i}, the code of c). A leaf's maps only group its cells, so they keep that
    pair as a sparse key (c is the narrowest column) while its range stays near the
    leaf's size (it is counted over); other maps are numbered densely, since the children
    refine them and they index T_{P - s_i}'s cells.

    >>> out = np.empty((2, 3), dtype=np.int64)
    >>> split = refine(np.array([0, 0, 1]), 2, np.array([0, 1, 1]), 2)
    >>> _child_map(np.array([[0, 1]]), [2], split, 2, out, False, 0), out[0].tolist()
    (3, [0, 1, 2])
    """
    row = out[i]
    np.take(edges[i], split.parent, out=row)
    row *= card
    row += split.code
    space = groups[i] * card
    if leaf and space <= SPARSE_KEYS * split.n_classes + 1024:
        return space
    dense, n_dense = combine([row], [space])
    row[:] = dense
    return n_dense


def _first_rows(ids: np.ndarray, n: int) -> np.ndarray:
    """One row of each class (the first): ``Classes.first_rows`` without the counts."""
    first = np.empty(n, dtype=np.int64)
    first[ids[::-1]] = np.arange(len(ids) - 1, -1, -1)
    return first
