"""The policy space: attribute domains, the encoded data and population, and the risk and
information loss of one generalization policy (``prepare``, ``evaluate``)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...core.equivalence import MISSING_LABEL, Classes, combine, encode, record_counts
from ...core.errors import (
    EmptySelectionError,
    HierarchyError,
    ParameterError,
    PopulationError,
    join_names,
    require_columns,
)
from ...core.numbers import whole_numbers
from ...core.population import aligned_like, population_count_column
from .policy_lattice import parse

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

    def _cells(self, bits: np.ndarray, ordered: bool = True) -> tuple[np.ndarray, int, float]:
        """Generalized cell key of every distinct row (data, then population), the
        size of the key space, and ``sum_a sum_v P_a(v) ln w_a(v)``. ``ordered=False``
        (for callers that only count per row) lets large key spaces be numbered in
        order of first appearance, skipping a sort.

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
        cells, n_cells = _cell_keys(columns, cards, ordered)
        return cells, n_cells, width_term

    def evaluate(self, bits: np.ndarray) -> tuple[float, float]:
        """``(risk, raw KL loss)`` of a concatenated bit-string (no validation)."""
        cells, n_cells, width_term = self._cells(bits, ordered=False)  # read per row only: any numbering
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
                f"The table has {len(frame):,} rows but the policies were prepared on {n_rows:,}; use the same table."
            )
        out = frame.copy()
        labels = self.intervals(bits)
        for a, attribute in enumerate(self.attributes):
            row_intervals = self._interval_ids(bits, a)[self.row_positions[a]]
            out[attribute] = pd.array(np.asarray(labels[attribute], dtype=object)[row_intervals], dtype="string")
        return out


def _cell_keys(
    code_columns: Sequence[np.ndarray], cardinalities: Sequence[int], ordered: bool = True
) -> tuple[np.ndarray, int]:
    """Bincount keys for one policy's cells: a thin specialisation of the kernel's
    ``anonlib.core.equivalence.combine`` for the per-policy hot loop.

    Why not ``combine`` itself: its result must be dense (ids ``0..n-1``), so
    it ends with a densifying pass (a bincount + cumsum over the key space, or
    a sorted hash factorization). Here the keys only feed ``bincount``, where
    empty keys simply count 0, so when the key space is small (at most
    ``DIRECT_COUNT_LIMIT`` or 16x the rows) the raw mixed-radix key is returned
    as is; that pass was most of a policy's cost on Adult + ZIP (see
    docs/frontier.md). Otherwise the equivalence ids come from the kernel
    (``combine``; numbered in order of first appearance with ``ordered=False``). Either
    way rows share a key exactly when they share a cell.

    >>> keys, space = _cell_keys([np.array([0, 1, 1]), np.array([2, 0, 2])], [2, 3])
    >>> keys.tolist(), space
    ([2, 3, 5], 6)
    """
    n_rows = len(code_columns[0]) if code_columns else 0
    space = math.prod(max(int(card), 1) for card in cardinalities)
    if not code_columns or space > max(DIRECT_COUNT_LIMIT, 16 * n_rows):
        return combine(list(code_columns), list(cardinalities), n_rows, ordered=ordered)
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


def default_order(df: pd.DataFrame, attribute: str) -> list:
    """The default domain order of a column: numbers numerically, text alphabetically,
    missing last (the order ``prepare`` uses when none is given).

    >>> default_order(pd.DataFrame({"race": ["White", "Black", "Asian"]}), "race")
    ['Asian', 'Black', 'White']
    """
    require_columns(df, [attribute])
    table = encode(df, [attribute])
    return [_plain(v) for v in table.labels[0]]


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
            raise PopulationError(f"The population table lacks the quasi-identifier columns {join_names(missing)}.")
        if population_count is None:
            population_count = population_count_column(population, quasi_identifiers, count=count)
        population_weights = record_counts(population, population_count)
        if population_weights is None:
            population_weights = np.ones(len(population), dtype=np.int64)
        frame = pd.concat([frame, aligned_like(population[quasi_identifiers], frame)], ignore_index=True)
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
        np.bincount(c[: comb_weights.size], weights=comb_weights, minlength=s) / n_records for c, s in zip(codes, sizes)
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
