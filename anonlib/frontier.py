"""Risk-utility frontier of de-identification policies (Xia, Heatherly, Ding, Li, Malin 2013).

A policy cuts each quasi-identifier's ordered domain into contiguous
intervals (a bit-string, see ``anonlib.lattice``). Every policy gets a point in
the risk-utility (R-U) plane:

- **risk** (Benitez et al. distinguishability, paper Eq. 2-3):
  ``sum_d 1/g(gen(d)) / sum_d 1/g(d)`` with ``g`` the number of people of a
  population table in the record's (generalized) cell. Without a population
  table the dataset is its own population and risk is the number of
  equivalence classes after generalization over the number before.
- **information loss** (paper Eq. 4): ``KL(P || Q)`` of the original
  quasi-identifier distribution ``P`` from ``Q``, which spreads the ``m``
  records of a generalized cell ``c`` uniformly over its ``|c|`` original value
  combinations. The paper's claim that this lies in [0, 1] is false (spec), so
  the raw value is reported and the value divided by the top policy's KL is
  plotted.

The frontier is the set of evaluated policies no other evaluated policy
strictly dominates (Definitions 3.9-3.10). It is searched exhaustively (small
lattices), by random chains (RCS, Algorithm 1) or by the sublattice heuristic
(SHS, Algorithm 2 with the Appendix's non-overlapping sublattices). Quality is
the area under the frontier's step curve in the normalized R-U square (paper
Fig. 5; smaller is better).

Speed: the data are encoded once (``anonlib.core.equivalence.encode``) and
collapsed to distinct quasi-identifier combinations. A policy then costs one
cumulative sum per attribute (domain position -> interval id), one gather per
block of attributes (small joint domains are combined on their grid), a
mixed-radix key (``_cell_keys``: the kernel's ``combine`` without its densifying
pass when the key space is small) + ``bincount`` for the class sizes, and, for
KL, the identity

    KL = (1/N) [sum_i n_i ln n_i - sum_c m_c ln m_c] + sum_a sum_v P_a(v) ln w_a(v)

where ``n_i`` are the original class sizes, ``m_c`` the generalized ones and
``w_a(v)`` the width of the interval holding value ``v`` of attribute ``a``:
``ln |c|`` is a sum over attributes, so its expectation only needs marginals.

Example:
    >>> import pandas as pd
    >>> df = pd.DataFrame({"age": [30, 30, 40, 50], "sex": ["f", "m", "f", "f"]})
    >>> evaluate(df, ["age", "sex"], {"age": [1, 1], "sex": [1]})
    (1.0, 0.0)
    >>> risk, loss = evaluate(df, ["age", "sex"], {"age": [0, 1], "sex": [1]})
    >>> round(risk, 4), round(loss, 4)
    (0.75, 0.1733)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from .core.budget import WorkEstimate, check_work
from .core.dataset import Role, guess_role
from .core.equivalence import MISSING_LABEL, Classes, combine, encode, record_counts
from .core.errors import (
    EmptySelectionError,
    HierarchyError,
    ParameterError,
    PopulationError,
    ProblemTooLargeError,
    join_names,
    require_columns,
)
from .core.numbers import seed_number, whole_numbers
from .lattice import (
    PrunedSublattices,
    parse,
    random_maximal_chain,
    random_sublattice,
    search_non_overlapping,
)

METHODS = ("shs", "rcs", "exhaustive")
DEFAULT_THRESHOLD = 0.8  # tuned on Adult + ZIP: 0.8-0.95 give the smallest areas at 1,000-4,000 policies
EXHAUSTIVE_MAX_BITS = 20
DRAWS_PER_POLICY = 4  # random chains or sublattices drawn per policy of the budget, at most
BLOCK_GRID_LIMIT = 4096  # attributes whose joint domain is at most this are combined on their grid
DIRECT_COUNT_LIMIT = 1 << 20  # key spaces up to this size are counted without densifying
SAFE_HARBOR_SMALL_AREA = 20_000
SAFE_HARBOR_TOP_AGE = 90

ProgressCallback = Callable[[int, int, float], None]


class DomainOrderError(HierarchyError):
    """A category order does not cover the values of its attribute."""


# --- the policy space: domains, encoded data, risk and loss of one policy ---------


@dataclass(frozen=True, eq=False)
class PolicySpace:
    """Everything needed to score policies on one dataset, computed once.

    ``domains[a]`` is attribute ``a``'s ordered domain; its policies have
    ``len(domain) - 1`` bits starting at ``offsets[a]`` of the concatenated
    bit-string. Build it with ``prepare``.
    """

    attributes: tuple[str, ...]
    domains: tuple[tuple, ...]
    offsets: tuple[int, ...]
    n_bits: int
    n_records: int
    has_population: bool
    row_positions: tuple[np.ndarray, ...]  # per attribute: domain position of every data row (for generalizing)
    _codes: tuple[np.ndarray, ...]  # per attribute: domain position of each distinct data row, then population row
    _blocks: tuple[tuple[int, ...], ...]  # attributes counted together over their joint grid
    _block_codes: tuple[np.ndarray, ...]  # per block: each row's cell of the block's grid
    _block_grids: tuple[tuple[np.ndarray, ...], ...]  # per block: domain positions of each grid cell
    _weights: np.ndarray  # records per distinct data combination
    _population_weights: np.ndarray | None
    _marginals: tuple[np.ndarray, ...]
    _entropy_term: float  # (1/N) sum_i n_i ln n_i
    _risk_denominator: float  # classes before, or sum_d 1/g(d)
    top_loss: float = field(default=0.0)

    @property
    def n_policies(self) -> int:
        """Size of the lattice, ``2 ** n_bits`` (a Python integer)."""
        return 1 << self.n_bits

    @property
    def top(self) -> np.ndarray:
        """The most general policy (everything merged)."""
        return np.zeros(self.n_bits, dtype=bool)

    @property
    def bottom(self) -> np.ndarray:
        """The original data (no boundary removed)."""
        return np.ones(self.n_bits, dtype=bool)

    def bits_of(self, policy: Mapping[str, Sequence[int]] | np.ndarray | str) -> np.ndarray:
        """The concatenated bit-string of a policy given per attribute (or already flat)."""
        if isinstance(policy, Mapping):
            unknown = [a for a in policy if a not in self.attributes]
            if unknown:
                raise ParameterError(
                    f"The policy names {join_names(unknown)}, which are not among the "
                    f"quasi-identifiers ({join_names(self.attributes)})."
                )
            parts = []
            for attribute, domain in zip(self.attributes, self.domains):
                if attribute not in policy:
                    raise ParameterError(f"The policy gives no bits for '{attribute}'.")
                bits = whole_numbers(list(policy[attribute]), f"The bits for '{attribute}'", maximum=1, total=None)
                if bits.size != len(domain) - 1:
                    raise ParameterError(
                        f"'{attribute}' has {len(domain)} values in its domain, so its policy needs "
                        f"{len(domain) - 1} bits; {bits.size} were given."
                    )
                if bits.size and not np.isin(bits, (0, 1)).all():
                    raise ParameterError(f"The bits for '{attribute}' must all be 0 or 1.")
                parts.append(bits.astype(bool))
            return np.concatenate(parts) if parts else np.zeros(0, dtype=bool)
        flat = parse(policy)
        if flat.size != self.n_bits:
            raise ParameterError(f"A policy here has {self.n_bits} bits; {flat.size} were given.")
        return flat

    def split(self, bits: np.ndarray) -> dict[str, tuple[int, ...]]:
        """Per attribute, its part of a concatenated bit-string as 0/1 tuples."""
        out = {}
        for attribute, domain, start in zip(self.attributes, self.domains, self.offsets):
            out[attribute] = tuple(int(b) for b in bits[start : start + len(domain) - 1])
        return out

    def _interval_ids(self, bits: np.ndarray, a: int) -> np.ndarray:
        """Interval id of each domain position of attribute ``a`` (cumulative sum of its bits)."""
        start, size = self.offsets[a], len(self.domains[a])
        ids = np.zeros(size, dtype=np.int64)
        np.cumsum(bits[start : start + size - 1], out=ids[1:])
        return ids

    def _cells(self, bits: np.ndarray) -> tuple[np.ndarray, int, float]:
        """Generalized cell key of every distinct row (data, then population), the
        size of the key space, and ``sum_a sum_v P_a(v) ln w_a(v)``.

        Attributes with small joint domains form blocks: their interval ids are
        combined over the block's grid of value combinations (a few thousand
        cells), so the per-row work is one gather per block, not per attribute.
        """
        interval_ids, counts = [], []
        width_term = 0.0
        for a in range(len(self.attributes)):
            ids = self._interval_ids(bits, a)
            n_intervals = int(ids[-1]) + 1
            if n_intervals < len(ids):
                widths = np.bincount(ids, minlength=n_intervals)
                width_term += float((self._marginals[a] * np.log(widths)[ids]).sum())
            interval_ids.append(ids)
            counts.append(n_intervals)
        columns, cards = [], []
        for block, codes, grid in zip(self._blocks, self._block_codes, self._block_grids):
            first = block[0]
            if len(block) == 1:
                columns.append(interval_ids[first][codes])
                cards.append(counts[first])
                continue
            key = interval_ids[first][grid[0]]
            card = counts[first]
            for a, positions in zip(block[1:], grid[1:]):
                key = key * counts[a] + interval_ids[a][positions]
                card *= counts[a]
            columns.append(key[codes])
            cards.append(card)
        cells, n_cells = _cell_keys(columns, cards)
        return cells, n_cells, width_term

    def evaluate(self, bits: np.ndarray) -> tuple[float, float]:
        """``(risk, raw KL loss)`` of a concatenated bit-string (no validation)."""
        cells, n_cells, width_term = self._cells(bits)
        n_data = self._weights.shape[0]
        data_cells = cells[:n_data]
        sizes = np.bincount(data_cells, weights=self._weights, minlength=n_cells)
        row_sizes = sizes[data_cells]
        # sum_c m_c ln m_c and the number of classes as sums over the distinct rows
        # (each row weighs in with its share of its class), so nothing scans the key space
        m_ln_m = float((self._weights * np.log(row_sizes)).sum())
        loss = self._entropy_term - m_ln_m / self.n_records + width_term
        if self._population_weights is None:
            risk = round(float((self._weights / row_sizes).sum())) / self._risk_denominator
        else:
            g = np.bincount(cells[n_data:], weights=self._population_weights, minlength=n_cells)
            risk = float((self._weights / g[data_cells]).sum()) / self._risk_denominator
        return min(risk, 1.0), max(loss, 0.0)

    def class_sizes(self, bits: np.ndarray) -> np.ndarray:
        """Records per equivalence class of the data generalized by ``bits``."""
        cells, n_cells, _ = self._cells(bits)
        sizes = np.bincount(cells[: self._weights.shape[0]], weights=self._weights, minlength=n_cells)
        return np.rint(sizes[sizes > 0]).astype(np.int64)

    def intervals(self, bits: np.ndarray) -> dict[str, list[str]]:
        """Per attribute, the labels of the policy's intervals, in domain order.

        Numbers and digit strings (ZIP codes) read ``"17-25"``; other categories
        list their members (``"Asian / Black"``; long ones shortened).
        """
        out = {}
        for a, (attribute, domain) in enumerate(zip(self.attributes, self.domains)):
            ids = self._interval_ids(bits, a)
            bounds = np.flatnonzero(np.diff(ids)) + 1
            groups = np.split(np.arange(len(domain)), bounds)
            out[attribute] = [_interval_label([domain[i] for i in g]) for g in groups]
        return out

    def generalize(self, frame: pd.DataFrame, bits: np.ndarray) -> pd.DataFrame:
        """``frame`` (the table this space was prepared from) with each
        quasi-identifier replaced by its interval label under ``bits``.

        Each row is labelled from its own domain positions, so rows with a
        record count of 0 (left out of the risk and loss) keep their own labels.

        >>> df = pd.DataFrame({"age": [30, 40, 50], "sex": ["f", "m", "f"], "n": [1, 0, 2]})
        >>> space = prepare(df, ["age", "sex"], count="n")
        >>> space.generalize(df, space.bits_of({"age": [0, 1], "sex": [1]}))[["age", "sex"]].values.tolist()
        [['30-40', 'f'], ['30-40', 'm'], ['50', 'f']]
        """
        n_rows = len(self.row_positions[0])
        if len(frame) != n_rows:
            raise ParameterError(
                f"The table has {len(frame):,} rows but the policies were prepared on "
                f"{n_rows:,}; use the same table."
            )
        out = frame.copy()
        labels = self.intervals(bits)
        for a, attribute in enumerate(self.attributes):
            row_intervals = self._interval_ids(bits, a)[self.row_positions[a]]
            out[attribute] = pd.array(
                np.asarray(labels[attribute], dtype=object)[row_intervals], dtype="string"
            )
        return out


def _cell_keys(code_columns: Sequence[np.ndarray], cardinalities: Sequence[int]) -> tuple[np.ndarray, int]:
    """Bincount keys for one policy's cells: a thin specialisation of the kernel's
    ``anonlib.core.equivalence.combine`` for the per-policy hot loop.

    Why not ``combine`` itself: its result must be dense (ids ``0..n-1``), so
    it ends with a densifying pass (a bincount + cumsum over the key space, or
    a sorted hash factorization). Here the keys only feed ``bincount``, where
    empty keys simply count 0, so when the key space is small (at most
    ``DIRECT_COUNT_LIMIT`` or 16x the rows) the raw mixed-radix key is returned
    as is; that pass was most of a policy's cost on Adult + ZIP (see
    docs/frontier.md). Otherwise the equivalence ids come from the kernel
    (``combine``). Either way rows share a key exactly when they share a cell.

    >>> keys, space = _cell_keys([np.array([0, 1, 1]), np.array([2, 0, 2])], [2, 3])
    >>> keys.tolist(), space
    ([2, 3, 5], 6)
    """
    n_rows = len(code_columns[0]) if code_columns else 0
    space = math.prod(max(int(card), 1) for card in cardinalities)
    if not code_columns or space > max(DIRECT_COUNT_LIMIT, 16 * n_rows):
        return combine(list(code_columns), list(cardinalities), n_rows)
    key = np.asarray(code_columns[0], dtype=np.int64)
    for codes, card in zip(code_columns[1:], cardinalities[1:]):
        key = key * max(int(card), 1) + codes  # the same mixed-radix fold as combine
    return key, space


def _is_number_like(value: object) -> bool:
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return True
    return isinstance(value, str) and value.isdigit()


def _interval_label(values: list) -> str:
    """``"17-25"`` for numbers, ``"a / b / c"`` for categories.

    >>> _interval_label([17, 18, 19]), _interval_label(["Asian", "Black"]), _interval_label([5, 6, "missing"])
    ('17-19', 'Asian / Black', '5-6 / missing')
    """
    if len(values) == 1:
        return str(values[0])
    if values[-1] == MISSING_LABEL and len(values) > 1:
        return f"{_interval_label(values[:-1])} / {MISSING_LABEL}"
    if all(_is_number_like(v) for v in values):
        return f"{values[0]}-{values[-1]}"
    if len(values) <= 4:
        return " / ".join(str(v) for v in values)
    return f"{values[0]} / ... / {values[-1]} ({len(values)} values)"


def _domain_positions(
    attribute: str, labels: np.ndarray, codes: np.ndarray, order: Sequence | None
) -> tuple[tuple, np.ndarray]:
    """The attribute's ordered domain and each code's position in it."""
    if order is None:
        return tuple(_plain(v) for v in labels), codes
    order = list(order)
    names = [str(v) for v in order]
    if len(set(names)) != len(names):
        repeated = sorted({n for n in names if names.count(n) > 1})
        raise DomainOrderError(f"The order for '{attribute}' lists {join_names(repeated)} more than once.")
    position = {name: i for i, name in enumerate(names)}
    if MISSING_LABEL not in position and any(str(v) == MISSING_LABEL for v in labels):
        position[MISSING_LABEL] = len(order)
        order.append(MISSING_LABEL)
    unknown = [f"'{v}'" for v in labels if str(v) not in position]
    if unknown:
        raise DomainOrderError(
            f"The order given for '{attribute}' does not contain {join_names(unknown)}, which "
            f"occur{'s' if len(unknown) == 1 else ''} in the data. Add "
            f"{'it' if len(unknown) == 1 else 'them'} to the order (it has {len(order)} values: "
            f"{join_names(order, 10)})."
        )
    lookup = np.array([position[str(v)] for v in labels], dtype=np.int64)
    return tuple(_plain(v) for v in order), lookup[codes]


def _plain(value: object) -> object:
    """numpy scalars as Python values (for labels and JSON)."""
    return value.item() if hasattr(value, "item") else value


def _aligned(population: pd.DataFrame, data: pd.DataFrame) -> pd.DataFrame:
    """The population's columns read like the data's: text in the data makes the
    population text (a ZIP read as the number 37813 matches "37813"), numbers in
    the data make the population numeric where its values are numbers.

    >>> _aligned(pd.DataFrame({"zip": [37813]}), pd.DataFrame({"zip": ["37813"]}))["zip"].tolist()
    ['37813']
    """
    out = population.copy()
    for column in data.columns:
        ours, theirs = data[column], out[column]
        if pd.api.types.is_numeric_dtype(ours) and not pd.api.types.is_numeric_dtype(theirs):
            converted = pd.to_numeric(theirs, errors="coerce")
            if converted.notna().sum() == theirs.notna().sum():
                out[column] = converted
        elif not pd.api.types.is_numeric_dtype(ours) and pd.api.types.is_numeric_dtype(theirs):
            out[column] = theirs.astype("string")
    return out


def default_order(df: pd.DataFrame, attribute: str) -> list:
    """The default domain order of a column: numbers numerically, text alphabetically,
    missing last (the order ``prepare`` uses when none is given).

    >>> default_order(pd.DataFrame({"race": ["White", "Black", "Asian"]}), "race")
    ['Asian', 'Black', 'White']
    """
    require_columns(df, [attribute])
    table = encode(df, [attribute])
    return [_plain(v) for v in table.labels[0]]


def population_count_column(
    population: pd.DataFrame, quasi_identifiers: Sequence[str], *, count: str | None = None
) -> str | None:
    """The column of a population table that holds the number of people per row:
    the data's count column if the population has it, else its only other column
    when that holds whole numbers, else the one column named like a count
    ("count", "n", "freq", ...); None (one person per row) otherwise.

    >>> pop = pd.DataFrame({"zip": ["37010"], "age": [30], "people": [12]})
    >>> population_count_column(pop, ["zip", "age"]), population_count_column(pop[["zip", "age"]], ["zip", "age"])
    ('people', None)
    """
    if count is not None and count in population.columns:
        return count
    extra = [c for c in population.columns if c not in quasi_identifiers]
    if len(extra) == 1:
        values = pd.to_numeric(population[extra[0]], errors="coerce")
        if values.notna().all() and (values >= 0).all() and (values == np.floor(values)).all():
            return extra[0]
    named = [c for c in extra if guess_role(str(c), population[c]) is Role.COUNT]
    return named[0] if len(named) == 1 else None


def prepare(
    df: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    *,
    orders: Mapping[str, Sequence] | None = None,
    population: pd.DataFrame | None = None,
    count: str | None = None,
    population_count: str | None = None,
) -> PolicySpace:
    """Encode the data once and precompute everything policies are scored with.

    ``orders`` maps an attribute to its full ordered domain (every value of the
    data and population must be in it; values that do not occur may be added,
    they widen the intervals that hold them). Without an order the domain is
    the sorted distinct values of the data and population. ``population`` is a
    table with the quasi-identifier columns and a count column
    (``population_count``; by default found by ``population_count_column``).

    >>> space = prepare(pd.DataFrame({"age": [30, 40, 40]}), ["age"])
    >>> space.domains, space.n_bits, round(space.top_loss, 4)
    (((30, 40),), 1, 0.0566)
    """
    quasi_identifiers = list(quasi_identifiers)
    if not quasi_identifiers:
        raise EmptySelectionError("Choose at least one quasi-identifier to build policies on.")
    require_columns(df, quasi_identifiers)
    orders = dict(orders or {})
    stray = [a for a in orders if a not in quasi_identifiers]
    if stray:
        raise ParameterError(f"Orders were given for {join_names(stray)}, which are not quasi-identifiers.")
    weights = record_counts(df, count)
    weights = np.ones(len(df), dtype=np.int64) if weights is None else weights
    if len(df) == 0 or weights.sum() == 0:
        raise EmptySelectionError("The table has no records to build policies on.")
    frame = df[quasi_identifiers]
    population_weights = None
    if population is not None:
        missing = [c for c in quasi_identifiers if c not in population.columns]
        if missing:
            raise PopulationError(
                f"The population table lacks the quasi-identifier columns {join_names(missing)}."
            )
        if population_count is None:
            population_count = population_count_column(population, quasi_identifiers, count=count)
        population_weights = record_counts(population, population_count)
        if population_weights is None:
            population_weights = np.ones(len(population), dtype=np.int64)
        frame = pd.concat([frame, _aligned(population[quasi_identifiers], frame)], ignore_index=True)
    table = encode(frame, quasi_identifiers)  # THE one encoding of the data
    domains, positions = [], []
    for j, attribute in enumerate(quasi_identifiers):
        domain, pos = _domain_positions(attribute, table.labels[j], table.codes[:, j], orders.get(attribute))
        domains.append(domain)
        positions.append(pos)
    sizes = [len(d) for d in domains]
    n_data = len(df)

    # distinct data combinations and their record counts (the kernel's combine + bincount)
    row_combination, n_comb = combine([p[:n_data] for p in positions], sizes)
    combinations = Classes.from_ids(row_combination, n_comb, weights)
    comb_weights, representative = combinations.sizes, combinations.first_rows
    keep = comb_weights > 0  # combinations with no records take no part in risk or loss
    representative = representative[keep]
    comb_weights = comb_weights[keep]
    codes = [p[:n_data][representative] for p in positions]
    n_records = int(round(comb_weights.sum()))

    risk_denominator = float(comb_weights.size)
    if population_weights is not None:
        pop_positive = population_weights > 0
        codes = [np.concatenate([c, p[n_data:][pop_positive]]) for c, p in zip(codes, positions)]
        population_weights = population_weights[pop_positive].astype(np.float64)
        cells, n_cells = combine(codes, sizes)
        g = np.bincount(cells[comb_weights.size :], weights=population_weights, minlength=n_cells)
        g_data = g[cells[: comb_weights.size]]
        unmatched = np.flatnonzero(g_data == 0)
        if unmatched.size:
            first = representative[unmatched[0]]
            values = ", ".join(f"{a}={df[a].iloc[first]}" for a in quasi_identifiers)
            raise PopulationError(
                f"The record ({values}) has no match in the population table"
                + (f", nor do {unmatched.size - 1:,} other combinations" if unmatched.size > 1 else "")
                + ". The population must contain everyone in the data; check the population table."
            )
        risk_denominator = float((comb_weights / g_data).sum())

    marginals = tuple(
        np.bincount(c[: comb_weights.size], weights=comb_weights, minlength=s) / n_records
        for c, s in zip(codes, sizes)
    )
    offsets = tuple(int(x) for x in np.concatenate([[0], np.cumsum([s - 1 for s in sizes])[:-1]]))
    blocks: list[list[int]] = [[]]
    product = 1
    for a, size in enumerate(sizes):
        if blocks[-1] and product * size > BLOCK_GRID_LIMIT:
            blocks.append([])
            product = 1
        blocks[-1].append(a)
        product *= size
    block_codes, block_grids = [], []
    for block in blocks:
        shape = [sizes[a] for a in block]
        block_codes.append(np.ravel_multi_index([codes[a] for a in block], shape).astype(np.int64))
        block_grids.append(tuple(g.astype(np.int64) for g in np.unravel_index(np.arange(int(np.prod(shape))), shape)))
    space = PolicySpace(
        attributes=tuple(quasi_identifiers),
        domains=tuple(domains),
        offsets=offsets,
        n_bits=int(sum(s - 1 for s in sizes)),
        n_records=n_records,
        has_population=population_weights is not None,
        row_positions=tuple(np.ascontiguousarray(p[:n_data]) for p in positions),
        _codes=tuple(np.ascontiguousarray(c) for c in codes),
        _blocks=tuple(tuple(b) for b in blocks),
        _block_codes=tuple(block_codes),
        _block_grids=tuple(block_grids),
        _weights=comb_weights.astype(np.float64),
        _population_weights=population_weights,
        _marginals=marginals,
        _entropy_term=float((comb_weights * np.log(comb_weights)).sum()) / n_records,
        _risk_denominator=risk_denominator,
    )
    object.__setattr__(space, "top_loss", space.evaluate(space.top)[1])
    return space


def evaluate(
    df: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    bits: Mapping[str, Sequence[int]],
    *,
    orders: Mapping[str, Sequence] | None = None,
    population: pd.DataFrame | None = None,
    count: str | None = None,
) -> tuple[float, float]:
    """``(risk, raw KL loss)`` of one policy, given per attribute as 0/1 bits
    (``len(domain) - 1`` each; see ``prepare`` for the domain).

    >>> df = pd.DataFrame({"age": [39] * 100 + [40]})
    >>> round(evaluate(df, ["age"], {"age": [0]})[0], 3)
    0.5
    """
    space = prepare(df, quasi_identifiers, orders=orders, population=population, count=count)
    return space.evaluate(space.bits_of(bits))


# --- the frontier ------------------------------------------------------------------


def strictly_dominates(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """``a`` strictly dominates ``b`` (Definition 3.9): no worse in risk and loss, better in one.

    >>> strictly_dominates((0.1, 0.5), (0.2, 0.5)), strictly_dominates((0.1, 0.5), (0.1, 0.5))
    (True, False)
    """
    return a[0] <= b[0] and a[1] <= b[1] and (a[0] < b[0] or a[1] < b[1])


def non_dominated(risk: np.ndarray, loss: np.ndarray) -> np.ndarray:
    """Mask of the points no other point strictly dominates (Definition 3.10).

    Equal points do not dominate each other, so both stay.

    >>> non_dominated(np.array([0.1, 0.2, 0.2, 0.3]), np.array([0.9, 0.5, 0.5, 0.6])).tolist()
    [True, True, True, False]
    """
    risk, loss = np.asarray(risk, float), np.asarray(loss, float)
    if risk.size == 0:
        return np.zeros(0, dtype=bool)
    order = np.lexsort((loss, risk))
    r, u = risk[order], loss[order]
    first = np.r_[True, r[1:] != r[:-1]]
    group = np.cumsum(first) - 1
    group_min = u[first]  # sorted by loss within a risk: the first is the smallest
    before = np.r_[np.inf, np.minimum.accumulate(group_min)[:-1]]  # best loss at strictly smaller risk
    keep = (u == group_min[group]) & (group_min[group] < before[group])
    mask = np.zeros(risk.size, dtype=bool)
    mask[order] = keep
    return mask


def _area_under(risk: np.ndarray, loss: np.ndarray, lo: float, hi: float, floor: float, ceil: float) -> float:
    """Integral over ``[lo, hi]`` of the step curve clipped to ``[floor, ceil]``,
    minus ``floor``. The curve is 1 left of the first risk, then the best loss
    among points with risk <= r. ``risk`` must be sorted."""
    starts = np.r_[-np.inf, risk]
    ends = np.r_[risk, np.inf]
    values = np.r_[1.0, np.minimum.accumulate(loss)] if loss.size else np.array([1.0])
    length = np.clip(np.minimum(ends, hi) - np.maximum(starts, lo), 0.0, None)
    height = np.clip(values - floor, 0.0, ceil - floor)
    return float(length @ height)


def frontier_area(risk: Sequence[float], loss_normalized: Sequence[float]) -> float:
    """Area under the frontier's step curve in the unit R-U square (smaller is better).

    At risk ``r`` the curve is the smallest normalized loss among frontier
    policies with risk at most ``r``, and 1 below the least risky one.

    >>> frontier_area([0.2, 1.0], [1.0, 0.0])
    1.0
    >>> frontier_area([0.0, 0.5, 1.0], [1.0, 0.25, 0.0])
    0.625
    """
    risk = np.asarray(risk, float)
    loss = np.asarray(loss_normalized, float)
    order = np.argsort(risk, kind="stable")
    return _area_under(risk[order], loss[order], 0.0, 1.0, 0.0, 1.0)


class Frontier:
    """The non-dominated policies found so far, sorted by risk (loss normalized).

    >>> f = Frontier()
    >>> f.update(0, 1.0, 0.0), f.update(1, 0.1, 1.0), f.update(2, 0.5, 0.5), f.update(3, 0.6, 0.6)
    (True, True, True, False)
    >>> f.update(4, 0.4, 0.4), f.ids.tolist()
    (True, [1, 4, 0])
    """

    def __init__(self) -> None:
        self.risk = np.empty(0)
        self.loss = np.empty(0)
        self.ids = np.empty(0, dtype=np.int64)

    def __len__(self) -> int:
        return int(self.ids.size)

    def update(self, policy_id: int, risk: float, loss: float) -> bool:
        """updateFrontier(f, a): insert ``a`` unless something strictly dominates
        it, and drop what it strictly dominates. True when the frontier changed.

        The frontier is sorted by risk with loss non-increasing (equal losses only
        at equal risks), so both steps are binary searches plus one splice.
        """
        r, u = self.risk, self.loss
        k = int(np.searchsorted(r, risk, side="right"))  # points with risk <= a's
        if k and (u[k - 1] < loss or (u[k - 1] == loss and r[k - 1] < risk)):
            return False
        lo = int(np.searchsorted(r, risk, side="left"))
        # from lo on, risk >= a's; those with loss >= a's form a block (loss is non-increasing)
        hi = lo + int(np.searchsorted(-u[lo:], -loss, side="right"))
        equal = (r[lo:hi] == risk) & (u[lo:hi] == loss)  # equal points do not dominate each other
        self.risk = np.concatenate([r[:lo], r[lo:hi][equal], [risk], r[hi:]])
        self.loss = np.concatenate([u[:lo], u[lo:hi][equal], [loss], u[hi:]])
        self.ids = np.concatenate([self.ids[:lo], self.ids[lo:hi][equal], [policy_id], self.ids[hi:]])
        return True

    def area(self) -> float:
        """Area under the step curve in the unit square (smaller is better)."""
        return _area_under(self.risk, self.loss, 0.0, 1.0, 0.0, 1.0)

    def update_probability(self, upper: tuple[float, float], lower: tuple[float, float]) -> float:
        """H (paper Eq. 1): the share of a sublattice's bounding rectangle that
        lies under the frontier's step curve (its non-dominated region ND).

        ``upper`` = (risk, loss) of the sublattice's upper policy alpha, ``lower``
        of its lower policy beta. A flat rectangle (equal risks or equal losses)
        gives 0: its members cannot beat alpha or beta, which were just scored.

        >>> f = Frontier(); _ = f.update(0, 0.0, 1.0); _ = f.update(1, 0.5, 0.5)
        >>> round(f.update_probability((0.2, 0.8), (0.8, 0.2)), 4)
        0.75
        """
        (ra, ua), (rb, ub) = upper, lower
        box = (rb - ra) * (ua - ub)
        if box <= 0:
            return 0.0
        return _area_under(self.risk, self.loss, ra, rb, ub, ua) / box


# --- searching the lattice --------------------------------------------------------


@dataclass(frozen=True)
class FrontierEntry:
    """A frontier policy: its bits per attribute, risk, raw and normalized KL loss."""

    bits: dict[str, tuple[int, ...]]
    risk: float
    loss: float
    loss_normalized: float

    @property
    def bitstring(self) -> str:
        """All attributes' bits concatenated, in quasi-identifier order."""
        return "".join("".join(map(str, b)) for b in self.bits.values())


@dataclass(frozen=True, eq=False)
class FrontierSearch:
    """A search's frontier plus everything it evaluated and how the area evolved.

    ``evaluated_bits`` holds one row per evaluated policy (in evaluation order)
    with ``evaluated_risk`` and ``evaluated_loss`` (normalized); ``trace`` is
    ``(policies evaluated, frontier area)`` after every frontier change.
    """

    method: str
    space: PolicySpace
    frontier: tuple[FrontierEntry, ...]
    frontier_ids: np.ndarray
    evaluated_bits: np.ndarray
    evaluated_risk: np.ndarray
    evaluated_loss: np.ndarray
    trace: tuple[tuple[int, float], ...]
    seconds: float
    budget: int
    seed: int | None
    threshold: float | None

    @property
    def n_evaluated(self) -> int:
        return int(self.evaluated_risk.size)

    @property
    def area(self) -> float:
        """Area under the final frontier (normalized R-U square)."""
        return frontier_area([e.risk for e in self.frontier], [e.loss_normalized for e in self.frontier])

    def area_after(self, n_policies: int) -> float:
        """Area of the frontier as it was after ``n_policies`` evaluations."""
        area = 1.0
        for n, value in self.trace:
            if n > n_policies:
                break
            area = value
        return area

    def frontier_table(self) -> pd.DataFrame:
        """One row per frontier policy: risk, loss, normalized loss, intervals, bits."""
        rows = []
        for i, e in enumerate(self.frontier):
            row = {"policy": i + 1, "risk": e.risk, "loss (KL, nats)": e.loss, "loss (normalized)": e.loss_normalized}
            row.update({f"{a} intervals": sum(b) + 1 for a, b in e.bits.items()})
            row["bits"] = e.bitstring
            rows.append(row)
        return pd.DataFrame(rows)


class _BudgetSpent(Exception):
    """Internal: the policy budget is used up."""


class _Run:
    """Bookkeeping shared by the searches: a cache of evaluated policies, the
    frontier, the area trace and progress reports. The budget counts distinct
    policies whose risk and loss were computed (a policy met again is free)."""

    def __init__(self, space: PolicySpace, budget: int, progress: ProgressCallback | None) -> None:
        self.space = space
        self.budget = budget
        self.progress = progress
        self.every = max(1, budget // 100)
        self.cache: dict[bytes, int] = {}
        self.bits = np.zeros((min(budget, 1024), space.n_bits), dtype=bool)  # grows by doubling
        self.risk: list[float] = []
        self.loss: list[float] = []
        self.frontier = Frontier()
        self.trace: list[tuple[int, float]] = []
        self.scale = 1.0 / space.top_loss if space.top_loss > 0 else 0.0

    @property
    def n(self) -> int:
        return len(self.risk)

    def visit(self, bits: np.ndarray, *, new: bool = False) -> tuple[float, float]:
        """Score a policy (once) and update the frontier. ``new=True`` skips the
        look-up for callers that never repeat a policy (the exhaustive search)."""
        if not new:
            key = np.packbits(bits).tobytes()
            known = self.cache.get(key)
            if known is not None:
                return self.risk[known], self.loss[known]
        if self.n >= self.budget:
            raise _BudgetSpent
        risk, loss = self.space.evaluate(bits)
        loss *= self.scale
        i = self.n
        if not new:
            self.cache[key] = i
        if i == self.bits.shape[0]:
            self.bits = np.concatenate([self.bits, np.zeros_like(self.bits)])
        self.bits[i] = bits
        self.risk.append(risk)
        self.loss.append(loss)
        if self.frontier.update(i, risk, loss):
            self.trace.append((i + 1, self.frontier.area()))
        if self.progress is not None and (i + 1) % self.every == 0:
            self.progress(i + 1, self.budget, self.trace[-1][1])
        return risk, loss


def _random_chain_search(run: _Run, rng: np.random.Generator) -> None:
    """Algorithm 1 (RCS): top, bottom, then random maximal chains walked from
    bottom to top until the budget is spent."""
    run.visit(run.space.top)
    run.visit(run.space.bottom)
    idle = 0
    for _ in range(DRAWS_PER_POLICY * run.budget):  # a bound on draws: late ones rarely find a new policy
        if idle >= 50:
            return
        before = run.n
        for policy in random_maximal_chain(run.space.n_bits, rng):
            run.visit(policy)
        idle = idle + 1 if run.n == before else 0


def _sublattice_heuristic_search(run: _Run, rng: np.random.Generator, threshold: float) -> None:
    """Algorithm 2 (SHS) with the Appendix's non-overlapping sublattices."""
    space = run.space
    run.visit(space.top)  # initializeFrontier(): top and bottom
    run.visit(space.bottom)
    pruned = PrunedSublattices(space.n_bits)
    idle = 0
    for _ in range(DRAWS_PER_POLICY * run.budget):  # a bound on draws: late ones rarely find a new policy
        if idle >= 1000:
            return
        literals = search_non_overlapping(pruned, rng)  # Algorithm 3 (SNL)
        if literals is None:
            return  # the pruned sublattices cover the whole lattice (or nearly: SNL gave up)
        sub = random_sublattice(space.n_bits, literals, rng)
        before = run.n
        upper = run.visit(sub.upper)
        lower = run.visit(sub.lower)
        p = run.frontier.update_probability(upper, lower)  # H(sublattice, f), Eq. 1
        if p > threshold:  # conditions 2 and 3: walk a random maximal chain of it
            for policy in sub.random_chain(rng)[1:-1]:
                run.visit(policy)
        elif p == 0:  # condition 1: entirely dominated, prune
            pruned.add(sub)
        idle = idle + 1 if run.n == before else 0


def _exhaustive(run: _Run, space: PolicySpace) -> None:
    """Every policy of the lattice, in binary counting order."""
    if space.n_bits > EXHAUSTIVE_MAX_BITS:
        raise ProblemTooLargeError(
            f"These quasi-identifiers give {space.n_bits} bits, so 2^{space.n_bits} = "
            f"{space.n_policies:,} policies; the exhaustive search stops at 2^{EXHAUSTIVE_MAX_BITS} "
            f"= {1 << EXHAUSTIVE_MAX_BITS:,}. Use SHS or RCS, or fewer or coarser attributes."
        )
    shifts = np.arange(space.n_bits - 1, -1, -1, dtype=np.int64)
    for number in range(space.n_policies):
        run.visit(((number >> shifts) & 1).astype(bool), new=True)


# Seconds per policy evaluated by a search (measured on Adult, 2 cores): a fixed part (the
# search's bookkeeping), one per distinct data or population row counted, one per bit of the
# policy (kept, hashed and walked). E.g. SHS on Adult's age and fnlwgt (29,147 rows, 21,719 bits):
# 3.5 ms per policy measured, 4.8 ms estimated; age, sex, race, education, marital-status
# (6,493 rows, 98 bits): 0.57 ms measured, 0.67 ms estimated.
_POLICY_SECONDS, _ROW_SECONDS, _BIT_SECONDS = 4e-4, 4e-8, 1.5e-7


def estimate_explore(space: PolicySpace, method: str = "shs", budget: int = 1000) -> WorkEstimate:
    """What ``explore`` will cost: policies x (rows counted and bits kept per policy),
    and the evaluated policies' bits held in memory (twice, while their array grows).

    >>> space = prepare(pd.DataFrame({"age": [20, 30, 30, 40, 50]}), ["age"])
    >>> e = estimate_explore(space, "shs", 1000)
    >>> e.operations, e.seconds < 1
    (8, True)
    """
    policies = space.n_policies if method == "exhaustive" else min(int(budget), space.n_policies)
    rows = space._weights.shape[0] + (0 if space._population_weights is None else space._population_weights.shape[0])
    seconds = policies * (_POLICY_SECONDS + _ROW_SECONDS * rows + _BIT_SECONDS * space.n_bits)
    peak = 2 * policies * space.n_bits + 8 * rows * (len(space.attributes) + 4)
    return WorkEstimate(f"evaluating {policies:,} policies of {space.n_bits:,} bits on {rows:,} distinct rows",
                        policies, seconds, peak)


def explore(
    space: PolicySpace,
    method: str = "shs",
    budget: int = 1000,
    *,
    seed: int | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    progress: ProgressCallback | None = None,
) -> FrontierSearch:
    """Search the policy lattice of ``space`` and return the frontier with the trace.

    ``budget`` is the number of distinct policies evaluated (ignored by
    ``"exhaustive"``, which evaluates all ``2 ** n_bits``). ``threshold`` is
    SHS's TH: a sublattice whose H exceeds it gets a random chain walked.
    ``progress(evaluated, budget, area)`` is called about 100 times.

    >>> df = pd.DataFrame({"age": [20, 30, 30, 40, 50], "sex": list("fmfmf")})
    >>> result = explore(prepare(df, ["age", "sex"]), "exhaustive")
    >>> result.n_evaluated, len(result.frontier), round(result.area, 4)
    (16, 8, 0.7885)
    """
    if method not in METHODS:
        raise ParameterError(f"Unknown search method '{method}'; choose one of {join_names(METHODS)}.")
    if method == "exhaustive":
        budget = space.n_policies
    elif not isinstance(budget, (int, np.integer)) or budget < 2:
        raise ParameterError(f"The budget must be a whole number of at least 2 policies (got {budget}).")
    if not 0.0 <= threshold <= 1.0:
        raise ParameterError(f"The threshold is a probability between 0 and 1 (got {threshold}).")
    budget = int(min(budget, space.n_policies))
    if method != "exhaustive" or space.n_bits <= EXHAUSTIVE_MAX_BITS:  # beyond, _exhaustive says why
        check_work(estimate_explore(space, method, budget),
                   narrow="lower the budget, or choose fewer or coarser quasi-identifiers (an attribute with "
                          "many values, such as a full ZIP code or a weight, adds a bit per value)")
    seed = seed_number(seed)
    run = _Run(space, budget, progress)
    rng = np.random.default_rng(seed)
    started = time.perf_counter()
    try:
        if budget == space.n_policies and space.n_bits <= EXHAUSTIVE_MAX_BITS:
            # a budget covering the whole lattice: every policy, in order, which is where a random
            # search would end, without its long tail of draws that find nothing new
            _exhaustive(run, space)
        elif method == "rcs":
            _random_chain_search(run, rng)
        elif method == "shs":
            _sublattice_heuristic_search(run, rng, threshold)
        else:
            _exhaustive(run, space)
    except _BudgetSpent:
        pass
    seconds = time.perf_counter() - started
    if progress is not None:
        progress(run.n, budget, run.frontier.area())
    ids = run.frontier.ids.copy()
    top_loss = space.top_loss
    frontier = tuple(
        FrontierEntry(
            bits=space.split(run.bits[i]),
            risk=run.risk[i],
            loss=run.loss[i] * top_loss,
            loss_normalized=run.loss[i],
        )
        for i in ids
    )
    return FrontierSearch(
        method=method,
        space=space,
        frontier=frontier,
        frontier_ids=ids,
        evaluated_bits=run.bits[: run.n].copy(),
        evaluated_risk=np.array(run.risk),
        evaluated_loss=np.array(run.loss),
        trace=tuple(run.trace),
        seconds=seconds,
        budget=budget,
        seed=seed,
        threshold=threshold if method == "shs" else None,
    )


def search_frontier(
    df: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    *,
    method: str = "shs",
    budget: int = 1000,
    seed: int | None = None,
    orders: Mapping[str, Sequence] | None = None,
    population: pd.DataFrame | None = None,
    count: str | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    progress: ProgressCallback | None = None,
) -> list[FrontierEntry]:
    """The risk-utility frontier found by ``method`` ("shs", "rcs" or "exhaustive"),
    sorted by risk. See ``explore`` for the search and ``prepare`` for the inputs.

    >>> df = pd.DataFrame({"age": [20, 30, 30, 40], "sex": list("fmff")})
    >>> [(e.bits["age"], round(e.risk, 2)) for e in search_frontier(df, ["age"], method="exhaustive")]
    [((0, 0), 0.33), ((0, 1), 0.67), ((1, 0), 0.67), ((1, 1), 1.0)]
    """
    space = prepare(df, quasi_identifiers, orders=orders, population=population, count=count)
    return list(explore(space, method, budget, seed=seed, threshold=threshold, progress=progress).frontier)


# --- HIPAA Safe Harbor as a policy -------------------------------------------------


@dataclass(frozen=True)
class SafeHarborPolicy:
    """HIPAA Safe Harbor's demographic rules as a policy of the lattice, with
    notes on how exactly the interval model could express them."""

    bits: dict[str, tuple[int, ...]]
    notes: tuple[str, ...]


def _guess(attributes: Sequence[str], word: str) -> str | None:
    hits = [a for a in attributes if word in str(a).lower()]
    return hits[0] if hits else None


def safe_harbor_policy(
    space: PolicySpace,
    *,
    zip_attribute: str | None = None,
    age_attribute: str | None = None,
    zip3_population: Mapping[str, int] | None = None,
    small_area: int = SAFE_HARBOR_SMALL_AREA,
) -> SafeHarborPolicy:
    """Safe Harbor's demographics: ZIP codes to their first 3 digits (3-digit
    areas with fewer than ``small_area`` people merged into "000"), ages of 90
    and over into one group, every other attribute untouched.

    In the interval model ZIP3 is exact (5-digit ZIPs sorted as strings). The
    "000" group is exact only when the small 3-digit areas are neighbours in ZIP
    order; otherwise each run of neighbouring small areas becomes one interval
    (a slightly finer policy than Safe Harbor), and a note says so. Without
    ``zip3_population`` the "000" rule is not applied. Attributes default to the
    first quasi-identifier whose name contains "zip" / "age".

    >>> df = pd.DataFrame({"age": [40, 90, 95], "zip": ["37010", "37011", "37201"]})
    >>> policy = safe_harbor_policy(prepare(df, ["age", "zip"]))
    >>> policy.bits
    {'age': (1, 0), 'zip': (0, 1)}
    """
    attributes = space.attributes
    zip_attribute = zip_attribute or _guess(attributes, "zip")
    age_attribute = age_attribute or _guess(attributes, "age")
    notes: list[str] = []
    bits = {a: [1] * (len(d) - 1) for a, d in zip(attributes, space.domains)}
    for name, label in ((zip_attribute, "ZIP"), (age_attribute, "age")):
        if name is not None and name not in attributes:
            raise ParameterError(f"The {label} attribute '{name}' is not among the quasi-identifiers.")
    if age_attribute is None:
        notes.append("No age attribute: the 90-and-over rule is not applied.")
    else:
        domain = space.domains[attributes.index(age_attribute)]
        ages = pd.to_numeric(pd.Series(domain, dtype=object), errors="coerce").to_numpy(dtype=float)
        if np.isnan(ages).all():
            notes.append(
                f"'{age_attribute}' holds text (e.g. '{domain[0]}'), not ages in years: the 90-and-over "
                "rule is not applied."
            )
        else:
            old = ages >= SAFE_HARBOR_TOP_AGE  # text values such as "missing" are never old
            bits[age_attribute] = [0 if old[i] and old[i + 1] else 1 for i in range(len(domain) - 1)]
            notes.append(
                f"Ages {SAFE_HARBOR_TOP_AGE} and over: {int(old.sum())} domain value(s) merged into one group."
            )
    if zip_attribute is None:
        notes.append("No ZIP attribute: the 3-digit ZIP rule is not applied.")
    else:
        domain = [str(v) for v in space.domains[attributes.index(zip_attribute)]]
        zip3 = [z[:3] for z in domain]
        small = set()
        if zip3_population is not None:
            small = {z for z in set(zip3) if zip3_population.get(z, 0) < small_area}
        group = ["000" if z in small else z for z in zip3]
        bits[zip_attribute] = [0 if group[i] == group[i + 1] else 1 for i in range(len(domain) - 1)]
        runs = sum(1 for i, g in enumerate(group) if g == "000" and (i == 0 or group[i - 1] != "000"))
        if zip3_population is None:
            notes.append("No 3-digit area populations given: the under-20,000 rule is not applied.")
        elif not small:
            notes.append(f"No 3-digit ZIP area here has fewer than {small_area:,} people: nothing goes to 000.")
        elif runs == 1:
            notes.append(f"{len(small)} small 3-digit area(s) ({join_names(sorted(small))}) merged into 000.")
        else:
            notes.append(
                f"{len(small)} small 3-digit areas ({join_names(sorted(small))}) are not neighbours in ZIP "
                f"order, so an interval policy cannot merge them into one 000 group; each of the {runs} "
                "runs of neighbouring small areas is one interval instead (slightly finer than Safe Harbor)."
            )
    return SafeHarborPolicy(bits={a: tuple(b) for a, b in bits.items()}, notes=tuple(notes))


def dominating(frontier: Sequence[FrontierEntry], risk: float, loss: float) -> list[FrontierEntry]:
    """The frontier policies that strictly dominate the point ``(risk, raw loss)``.

    >>> e = FrontierEntry({"a": (0,)}, 0.1, 0.2, 0.5)
    >>> len(dominating([e], 0.2, 0.2)), len(dominating([e], 0.1, 0.2))
    (1, 0)
    """
    return [e for e in frontier if strictly_dominates((e.risk, e.loss), (risk, loss))]


def lattice_size_text(n_bits: int) -> str:
    """``2^n`` in words for the page.

    >>> lattice_size_text(10), lattice_size_text(700)[:8]
    ('1,024', '10^210.7')
    """
    if n_bits <= 40:
        return f"{1 << n_bits:,}"
    return f"10^{n_bits * math.log10(2):.1f}"
