"""Utility: how much information a release has lost, measured on the released table.

The information-loss measures ARX offers as quality models, per quasi-identifier
and overall, for a released table set against the table it was made from (rows
matched by index; a record of the original that the release no longer holds is
a *suppressed record*):

- **loss metric** (Iyengar 2002): per record and quasi-identifier, the share of
  the hierarchy's values that the released value covers, ``(leaves under it - 1)
  / (leaves - 1)``; 0 for a value kept as it is, 1 for ``*``;
- **precision** (Sweeney 2002, "generalization intensity"): the level of the
  released value divided by the hierarchy's height;
- **non-uniform entropy** (Gionis & Tassa 2009): ``-log2 P(original value |
  released value)`` per cell, the probabilities taken over the original data's
  records; reported as bits and as a share of the bits lost when every value is
  replaced by ``*``;
- **discernibility** (Bayardo & Agrawal 2005): each record pays the size of its
  class, a suppressed record the number of records;
- **average class size** (LeFevre et al. 2006): records per class.

One convention throughout (ARX's): a suppressed record counts as fully
generalized, 1 on every quasi-identifier for the loss metric and precision, and
for discernibility and average class size the suppressed records form one class.
A cell suppressed by local suppression (missing in the release, present in the
original) counts as fully generalized too; a cell missing in both is kept as it is.

The search for the least damaging generalization (``anonlib.transformations.generalization``) uses the
same per-cell costs (``cell_costs``), so what it optimizes is what these
functions measure on the table it writes.

Example (a hierarchy age -> 10-year band -> *):
    >>> import pandas as pd
    >>> h = pd.DataFrame([["31", "30-39", "*"], ["35", "30-39", "*"], ["47", "40-49", "*"]])
    >>> original = pd.DataFrame({"age": [31, 35, 47]})
    >>> released = pd.DataFrame({"age": ["30-39", "30-39"]}, index=[0, 1])  # record 2 suppressed
    >>> round(loss(original, released, ["age"], {"age": h}), 6)  # (0.5 + 0.5 + 1) / 3
    0.666667
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.equivalence import Classes, EncodedTable, combine, encode
from ..core.errors import ColumnError, EmptySelectionError, HierarchyError, ParameterError, join_names
from ..core.hierarchy import SUPPRESSED, hierarchy_columns, level_lookup, value_key

MEASURES = ("loss", "precision", "nonuniform_entropy", "discernibility", "aecs")
MEASURE_NAMES = {
    "loss": "loss metric (Iyengar)",
    "precision": "precision (Sweeney)",
    "nonuniform_entropy": "non-uniform entropy (Gionis & Tassa)",
    "discernibility": "discernibility (Bayardo & Agrawal)",
    "aecs": "average class size (LeFevre et al.)",
}
CELL_MEASURES = ("loss", "precision", "nonuniform_entropy")  # a sum of per-cell costs


def check_measure(measure: str) -> str:
    """``measure`` if it is one of ``MEASURES``, else a sentence.

    >>> check_measure("loss")
    'loss'
    """
    if measure not in MEASURES:
        raise ParameterError(f"Unknown utility measure '{measure}'; choose one of {join_names(MEASURES)}.")
    return measure


@dataclass(frozen=True, eq=False)
class CellCosts:
    """What one cell of an attribute costs, per level of its hierarchy and original value.

    ``lookup[j][c]`` is the level-j code of the data's code ``c`` (the kernel's
    coding of the original column) and ``level_labels[j]`` the text of each
    level-j code; ``cost[j][c]`` is the cost of a record whose value ``c`` is
    released at level j; ``full[c]`` the cost when the record (or the cell) is
    suppressed. Loss and precision are shares in [0, 1]; non-uniform entropy bits.
    """

    attribute: str
    measure: str
    lookup: np.ndarray
    level_labels: tuple[np.ndarray, ...]
    cost: np.ndarray
    full: np.ndarray

    @property
    def height(self) -> int:
        return int(self.lookup.shape[0]) - 1


def cell_costs(
    hierarchy: pd.DataFrame,
    labels: Sequence,
    measure: str,
    *,
    frequencies: np.ndarray | None = None,
    attribute: str = "the attribute",
) -> CellCosts:
    """Per-level, per-value cell costs of one attribute for a cell measure.

    ``labels`` are the kernel's labels of the original column (``encode``);
    ``frequencies`` the records per label (needed for non-uniform entropy).

    >>> h = pd.DataFrame([["a", "ab", "*"], ["b", "ab", "*"], ["c", "c", "*"]])
    >>> cell_costs(h, ["a", "b", "c"], "loss").cost.tolist()
    [[0.0, 0.0, 0.0], [0.5, 0.5, 0.0], [1.0, 1.0, 1.0]]
    >>> cell_costs(h, ["a", "b", "c"], "precision").cost.tolist()  # "c" is still itself at level 1
    [[0.0, 0.0, 0.0], [0.5, 0.5, 0.0], [1.0, 1.0, 1.0]]
    """
    if measure not in CELL_MEASURES:
        raise ParameterError(f"'{measure}' is not a per-cell measure; choose one of {join_names(CELL_MEASURES)}.")
    columns = hierarchy_columns(hierarchy, attribute)
    lookup, level_labels = level_lookup(None, labels, attribute, columns=columns)
    levels, n_codes = lookup.shape
    # The lowest level at which each code already shows its level-j text (a hierarchy may
    # repeat a value over levels, e.g. "c" -> "c" -> "*"): released text decides the cost.
    shown = np.zeros((levels, n_codes), dtype=np.int64)
    texts = [level_labels[j][lookup[j]] for j in range(levels)]
    for j in range(1, levels):
        same = texts[j] == texts[j - 1]
        shown[j] = np.where(same, shown[j - 1], j)
    if measure == "loss":
        leaves = len(columns[0])
        cost = np.zeros((levels, n_codes))
        if leaves > 1:
            for j in range(1, levels):
                under = Counter(columns[j])  # the hierarchy's leaves under each level-j value
                counted = np.array([under.get(label, 1) for label in level_labels[j]])  # a value it lacks: itself
                cost[j] = (counted[lookup[j]] - 1) / (leaves - 1)
            cost = cost[shown, np.arange(n_codes)]
        full = np.ones(n_codes)
    elif measure == "precision":
        cost = shown / max(levels - 1, 1)
        full = np.ones(n_codes)
    else:
        if frequencies is None:
            raise ParameterError("Non-uniform entropy needs the records of each value.")
        freq = np.asarray(frequencies, dtype=float)
        total = freq.sum()
        cost = np.zeros((levels, n_codes))
        for j in range(1, levels):
            group = np.bincount(lookup[j], weights=freq, minlength=int(lookup[j].max()) + 1)[lookup[j]]
            with np.errstate(divide="ignore", invalid="ignore"):
                cost[j] = np.where(freq > 0, -np.log2(freq / group), 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            full = np.where(freq > 0, -np.log2(freq / total), 0.0) if total > 0 else np.zeros(n_codes)
    return CellCosts(attribute, measure, lookup, tuple(level_labels), np.asarray(cost, float), np.asarray(full, float))


# --------------------------------------------------------------------------- measuring a released table


@dataclass(frozen=True)
class Utility:
    """Utility measures of a release against its original, overall and per quasi-identifier.

    ``loss``, ``precision`` and ``nonuniform_entropy`` are shares in [0, 1]
    (0 = nothing lost, 1 = every value replaced by ``*`` or suppressed);
    ``nonuniform_entropy_bits`` the raw bits; ``discernibility`` an exact integer;
    ``average_class_size`` records per class; ``suppressed`` records.
    """

    records: int
    suppressed: int
    loss: float
    precision: float
    nonuniform_entropy: float
    nonuniform_entropy_bits: float
    discernibility: int
    average_class_size: float
    loss_by_attribute: Mapping[str, float]
    precision_by_attribute: Mapping[str, float]
    nonuniform_entropy_by_attribute: Mapping[str, float]

    def value(self, measure: str) -> float:
        """The overall value of one of ``MEASURES``.

        >>> Utility(1, 0, 0.5, 0.25, 0.0, 0.0, 1, 1.0, {}, {}, {}).value("precision")
        0.25
        """
        check_measure(measure)
        return {
            "loss": self.loss,
            "precision": self.precision,
            "nonuniform_entropy": self.nonuniform_entropy,
            "discernibility": float(self.discernibility),
            "aecs": self.average_class_size,
        }[measure]

    def to_json(self) -> dict:
        return {
            "records": self.records,
            "suppressed": self.suppressed,
            "loss": self.loss,
            "precision": self.precision,
            "nonuniform_entropy": self.nonuniform_entropy,
            "nonuniform_entropy_bits": self.nonuniform_entropy_bits,
            "discernibility": self.discernibility,
            "average_class_size": self.average_class_size,
            "loss_by_attribute": dict(self.loss_by_attribute),
            "precision_by_attribute": dict(self.precision_by_attribute),
            "nonuniform_entropy_by_attribute": dict(self.nonuniform_entropy_by_attribute),
        }


@dataclass(frozen=True, eq=False)
class _Matched:
    """The original's records and, per quasi-identifier, each record's released cost inputs."""

    weights: np.ndarray  # records per original row
    kept: np.ndarray  # the row is in the release
    codes: np.ndarray  # original codes, one row per quasi-identifier
    labels: tuple[np.ndarray, ...]
    level: np.ndarray  # released level per quasi-identifier (one row each) and record; -1 = suppressed
    released_ids: np.ndarray  # class id of each kept row in the release (quasi-identifiers as written)
    n_released_classes: int


def _kept_in_order(original: pd.Index, released: pd.Index) -> np.ndarray | None:
    """Per original row, whether ``released`` keeps it, read off the positions when the
    original is numbered 0, 1, 2, ... and the release keeps some of its rows in order (what a
    search releases); None otherwise, for the general match by index.

    >>> _kept_in_order(pd.RangeIndex(4), pd.Index([0, 2, 3])).tolist()
    [True, False, True, True]
    >>> _kept_in_order(pd.RangeIndex(4), pd.Index([2, 0])) is None
    True
    """
    if not (isinstance(original, pd.RangeIndex) and original.start == 0 and original.step == 1):
        return None
    if not (isinstance(released.dtype, np.dtype) and released.dtype.kind == "i"):
        return None
    positions = np.asarray(released, dtype=np.int64)
    if len(positions) and (
        positions[0] < 0 or positions[-1] >= len(original) or not (positions[1:] > positions[:-1]).all()
    ):
        return None  # out of range or not strictly increasing: the general match says what is wrong
    kept = np.zeros(len(original), dtype=bool)
    kept[positions] = True
    return kept


def _released_levels(
    costs: CellCosts,
    original_codes: np.ndarray,
    original_missing: np.ndarray,
    rel_codes: np.ndarray,
    rel_labels: np.ndarray,
) -> np.ndarray:
    """The hierarchy level each released cell shows (-1 when the cell was suppressed), from the
    released column's codes and labels (the kernel's encoding of the cells as written): per
    distinct (original value, released value) pair, the lowest level at which the original
    value reads as the released text."""
    rel_keys = np.asarray([value_key(v) for v in rel_labels], dtype=object)
    rel_missing = np.asarray(pd.isna(rel_labels), dtype=bool) if len(rel_labels) else np.zeros(0, bool)
    n_codes, n_rel = len(costs.full), max(len(rel_labels), 1)
    if n_codes * n_rel <= 4 * len(original_codes) + 1024:  # every (original, released) pair in one small table
        code, rel = np.repeat(np.arange(n_codes), n_rel), np.tile(np.arange(n_rel), n_codes)
        first = None
    else:  # the pairs present, each once
        pair_ids, n_pairs = combine([original_codes, rel_codes], [n_codes, n_rel])
        first = Classes.from_ids(pair_ids, n_pairs).first_rows
        code, rel = original_codes[first], rel_codes[first]
    rel = np.minimum(rel, len(rel_labels) - 1) if len(rel_labels) else rel
    key = rel_keys[rel] if len(rel_keys) else np.zeros(len(rel), dtype=object)
    levels = np.full(len(code), -2, dtype=np.int64)
    gone = rel_missing[rel] if len(rel_missing) else np.zeros(len(rel), dtype=bool)
    code_missing = np.zeros(n_codes, dtype=bool)
    code_missing[original_codes[original_missing]] = True
    levels[gone] = np.where(code_missing[code[gone]], 0, -1)
    for j in range(costs.height + 1):  # the lowest level whose text the released cell shows
        texts = np.asarray([value_key(v) for v in costs.level_labels[j]], dtype=object)[costs.lookup[j][code]]
        levels[(levels == -2) & (texts == key)] = j
    levels[(levels == -2) & (key == SUPPRESSED)] = -1  # a cell blanked by local suppression ('*****' too)
    per_row = levels[original_codes * n_rel + rel_codes] if first is None else levels[pair_ids]
    if len(per_row) and per_row.min() == -2:  # one pass; the rows are found only to say which
        row = int(np.flatnonzero(per_row == -2)[0])
        raise HierarchyError(
            f"The released value '{rel_keys[rel_codes[row]]}' of {costs.attribute} is not a generalization of the "
            f"original value '{costs.level_labels[0][original_codes[row]]}' in its hierarchy, so its loss cannot "
            "be measured; measure with the hierarchy the release was made with."
        )
    return per_row


@dataclass(frozen=True, eq=False)
class Baseline:
    """The original table's quasi-identifiers encoded once, with each one's cell costs per
    measure: what every release of it is measured against (``match``, ``value``). Built by
    ``Baseline.of`` from the table, or by the generalization search from its own encoding.

    >>> h = pd.DataFrame([["1", "*"], ["2", "*"]])
    >>> base = Baseline.of(pd.DataFrame({"a": [1, 2]}), ["a"], {"a": h})
    >>> base.value(pd.DataFrame({"a": ["*", "2"]}), "loss"), base.value(pd.DataFrame({"a": ["*"]}), "precision")
    (0.5, 1.0)
    """

    index: pd.Index
    quasi_identifiers: tuple[str, ...]
    codes: np.ndarray  # [quasi-identifier, row]: the original's codes
    labels: tuple[np.ndarray, ...]
    missing: np.ndarray  # [quasi-identifier, row]: the original cell is missing
    weights: np.ndarray  # records per row
    costs: Mapping[str, tuple[CellCosts, ...]]  # per measure, per quasi-identifier

    @classmethod
    def of(
        cls,
        original: pd.DataFrame,
        quasi_identifiers: Sequence[str],
        hierarchies: Mapping[str, pd.DataFrame],
        *,
        count: str | None = None,
        measures: Sequence[str] = CELL_MEASURES,
    ) -> Baseline:
        """``original`` encoded once (the kernel), and the cell costs of ``measures``."""
        qis = list(quasi_identifiers)
        if not qis:
            raise EmptySelectionError("Choose at least one quasi-identifier to measure utility on.")
        absent = [q for q in qis if q not in original.columns]
        if absent:
            raise ColumnError(f"The original table has no column {join_names(absent)}.")
        lacking = [q for q in qis if q not in hierarchies]
        if lacking:
            raise HierarchyError(f"Measuring utility needs a hierarchy for {join_names(lacking)}.")
        if not original.index.is_unique:
            raise ParameterError("The original and released tables are matched by index, so each needs a unique index.")
        table = encode(original, qis, count=count)
        weights = table.weights if table.weights is not None else np.ones(table.n_rows, dtype=np.int64)
        costs: dict[str, list[CellCosts]] = {m: [] for m in measures}
        for j, q in enumerate(qis):
            freq = np.bincount(table.codes[:, j], weights=weights, minlength=table.cardinalities[j])
            for measure in measures:
                costs[measure].append(
                    cell_costs(hierarchies[q], table.labels[j], measure, frequencies=freq, attribute=q)
                )
        missing = np.vstack([original[q].isna().to_numpy() for q in qis])
        return cls(
            original.index,
            tuple(qis),
            np.ascontiguousarray(table.codes.T),
            tuple(table.labels),
            missing,
            weights,
            {m: tuple(c) for m, c in costs.items()},
        )

    def match(self, released: pd.DataFrame, encoded: EncodedTable | None = None) -> _Matched:
        """The released table matched to the original by index: per original row and
        quasi-identifier, the level its released cell shows (-1: suppressed). ``encoded`` is the
        kernel's encoding of ``released`` holding its quasi-identifiers (read when given, so a
        caller that encodes the release for other counts reads its cells once)."""
        qis = list(self.quasi_identifiers)
        absent = [q for q in qis if q not in released.columns]
        if absent:
            raise ColumnError(f"The released table has no column {join_names(absent)}.")
        n = len(self.index)
        kept = _kept_in_order(self.index, released.index)
        in_order = kept is not None
        if kept is None:
            if not released.index.is_unique:
                raise ParameterError(
                    "The original and released tables are matched by index, so each needs a unique index."
                )
            extra = released.index.difference(self.index)
            if len(extra):
                raise ParameterError(
                    f"The released table has {len(extra):,} rows whose index is not in the original "
                    f"(e.g. {extra[0]!r}); rows are matched by index."
                )
            kept = self.index.isin(released.index)
            in_order = released.index.equals(self.index[kept])  # a release keeps the original's order
        if not kept.any():
            everything_suppressed = np.full((len(qis), n), -1, dtype=np.int64)
            return _Matched(
                self.weights, kept, self.codes, self.labels, everything_suppressed, np.zeros(0, dtype=np.int64), 0
            )
        if encoded is None or not in_order:
            aligned = released[qis] if in_order else released[qis].reindex(self.index[kept])
            encoded = encode(aligned, qis)
        positions = [encoded.position(q) for q in qis]
        first = next(iter(self.costs.values()), None)  # the level a cell shows is the same for every measure
        rows = np.flatnonzero(kept)
        every = len(rows) == n  # nothing suppressed: the original's rows as they are
        # -1 marks a suppressed row's cells; when nothing is suppressed the loop writes every entry
        if every and first is not None:
            levels = np.empty((len(qis), n), dtype=np.int64)
        else:
            levels = np.full((len(qis), n), -1, dtype=np.int64)
        for j, p in enumerate(positions if first is not None else ()):
            shown = _released_levels(
                first[j],
                self.codes[j] if every else self.codes[j].take(rows),
                self.missing[j] if every else self.missing[j].take(rows),
                encoded.codes[:, p],
                encoded.labels[p],
            )
            if every:
                levels[j] = shown
            else:
                levels[j][kept] = shown
        released = encoded.classes(qis)  # the released classes on the quasi-identifiers as written
        return _Matched(self.weights, kept, self.codes, self.labels, levels, released.ids, released.n_classes)

    def value(self, released: pd.DataFrame, measure: str, *, encoded: EncodedTable | None = None) -> float:
        """One measure's overall value for ``released`` (``Utility.value``)."""
        check_measure(measure)
        matched = self.match(released, encoded)
        if measure in CELL_MEASURES:
            return _overall(matched, measure, self.costs[measure])[0]
        records, suppressed, sizes = _released_classes(matched)
        if measure == "discernibility":
            return float(sum(int(s) * int(s) for s in sizes) + suppressed * records)
        classes = len(sizes) + (1 if suppressed else 0)
        return records / classes if classes else 0.0


def _cell_totals(matched: _Matched, costs: Sequence[CellCosts]) -> tuple[np.ndarray, np.ndarray]:
    """Per quasi-identifier: the released cells' total cost and the total when all are suppressed."""
    spent, worst = [], []
    # Products summed by numpy (pairwise), not a BLAS dot: with integer weights numpy's dot takes a
    # slow generic loop, and BLAS threads stall on a busy machine, both a thousand times slower.
    # Without a count column every weight is 1, and a product by 1.0 is the number itself: the
    # same array is summed without the products.
    weights = None if (matched.weights == 1).all() else matched.weights.astype(np.float64)  # exact below 2**53
    for j, c in enumerate(costs):
        codes, level = matched.codes[j], matched.level[j]
        # cost[level, code], flat, with one more row after the levels' for a suppressed cell: its
        # full cost. A suppressed cell's level is -1, so its flat index counts back from the end,
        # into that last row (``take`` reads a negative index from the end, as Python does).
        index = level * c.cost.shape[1]
        index += codes
        cell = np.concatenate([c.cost.ravel(), c.full]).take(index)
        full = c.full.take(codes)
        spent.append(float((cell if weights is None else weights * cell).sum()))
        worst.append(float((full if weights is None else weights * full).sum()))
    return np.asarray(spent), np.asarray(worst)


def _overall(matched: _Matched, measure: str, costs: Sequence[CellCosts]) -> tuple[float, dict[str, float], float]:
    """A cell measure's overall value, its value per quasi-identifier, and (non-uniform entropy)
    the bits lost: the loss metric and precision are means over records and quasi-identifiers,
    non-uniform entropy a share of the bits lost when everything is suppressed."""
    qis = [c.attribute for c in costs]
    spent, worst = _cell_totals(matched, costs)
    if measure == "nonuniform_entropy":
        per = {q: (float(s / w) if w > 0 else 0.0) for q, s, w in zip(qis, spent, worst)}
        total = float(spent.sum() / worst.sum()) if worst.sum() > 0 else 0.0
        return total, per, float(spent.sum())
    records = float(matched.weights.sum())
    per = {q: (float(s) / records if records else 0.0) for q, s in zip(qis, spent)}
    return float(np.mean(list(per.values()))), per, 0.0


def _released_classes(matched: _Matched) -> tuple[int, int, np.ndarray]:
    """The original's records, the records suppressed, and the released classes' sizes (records)."""
    records = int(matched.weights.sum())
    kept_weights = matched.weights[matched.kept]
    sizes = np.bincount(matched.released_ids, weights=kept_weights, minlength=matched.n_released_classes)
    sizes = np.rint(sizes).astype(np.int64)
    return records, records - int(kept_weights.sum()), sizes[sizes > 0]


def _utility(matched: _Matched, costs: Mapping[str, Sequence[CellCosts]]) -> Utility:
    """Every measure of one matched release (``utility``)."""
    overall = {m: _overall(matched, m, costs[m]) for m in CELL_MEASURES}
    records, suppressed, sizes = _released_classes(matched)
    discernibility = sum(int(s) * int(s) for s in sizes) + suppressed * records
    classes = len(sizes) + (1 if suppressed else 0)
    return Utility(
        records=records,
        suppressed=suppressed,
        loss=overall["loss"][0],
        precision=overall["precision"][0],
        nonuniform_entropy=overall["nonuniform_entropy"][0],
        nonuniform_entropy_bits=overall["nonuniform_entropy"][2],
        discernibility=discernibility,
        average_class_size=records / classes if classes else 0.0,
        loss_by_attribute=overall["loss"][1],
        precision_by_attribute=overall["precision"][1],
        nonuniform_entropy_by_attribute=overall["nonuniform_entropy"][1],
    )


def loss_by_attribute(
    original: pd.DataFrame,
    released: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    hierarchies: Mapping[str, pd.DataFrame],
    *,
    count: str | None = None,
) -> dict[str, float]:
    """Iyengar's loss metric per quasi-identifier (mean over the original's records).

    >>> h = pd.DataFrame([["1", "*"], ["2", "*"]])
    >>> loss_by_attribute(pd.DataFrame({"a": [1, 2]}), pd.DataFrame({"a": ["*", "2"]}), ["a"], {"a": h})
    {'a': 0.5}
    """
    base = Baseline.of(original, quasi_identifiers, hierarchies, count=count, measures=("loss",))
    return _overall(base.match(released), "loss", base.costs["loss"])[1]


def loss(
    original: pd.DataFrame,
    released: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    hierarchies: Mapping[str, pd.DataFrame],
    *,
    count: str | None = None,
) -> float:
    """Iyengar's loss metric of a full-domain generalization, in [0, 1].

    Per record and quasi-identifier, (leaves of the hierarchy under the released
    value - 1) / (leaves of the hierarchy - 1), a value kept as is counting 0; a
    record present in ``original`` but suppressed from ``released`` counts 1 on
    every quasi-identifier; the mean over records (weighted by ``count``) and
    quasi-identifiers. Rows are matched by index.

    >>> h = pd.DataFrame([["1", "1-2", "*"], ["2", "1-2", "*"], ["3", "3", "*"]])
    >>> loss(pd.DataFrame({"a": [1, 2, 3]}), pd.DataFrame({"a": ["1-2", "1-2", "3"]}), ["a"], {"a": h})
    0.3333333333333333
    """
    return Baseline.of(original, quasi_identifiers, hierarchies, count=count, measures=("loss",)).value(
        released, "loss"
    )


def utility(
    original: pd.DataFrame,
    released: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    hierarchies: Mapping[str, pd.DataFrame],
    *,
    count: str | None = None,
) -> Utility:
    """Every utility measure of ``released`` against ``original`` (rows matched by index).

    >>> h = pd.DataFrame([["1", "1-2", "*"], ["2", "1-2", "*"], ["3", "3", "*"]])
    >>> u = utility(pd.DataFrame({"a": [1, 2, 3]}), pd.DataFrame({"a": ["1-2", "1-2"]}), ["a"], {"a": h})
    >>> round(u.loss, 4), round(u.precision, 4), u.suppressed, u.discernibility, u.average_class_size
    (0.6667, 0.6667, 1, 7, 1.5)
    """
    base = Baseline.of(original, quasi_identifiers, hierarchies, count=count)
    return _utility(base.match(released), base.costs)


def measure_value(
    original: pd.DataFrame,
    released: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    hierarchies: Mapping[str, pd.DataFrame],
    measure: str = "loss",
    *,
    count: str | None = None,
) -> float:
    """One measure's overall value (``Utility.value``).

    >>> h = pd.DataFrame([["1", "*"], ["2", "*"]])
    >>> measure_value(pd.DataFrame({"a": [1, 2]}), pd.DataFrame({"a": ["*", "*"]}), ["a"], {"a": h}, "precision")
    1.0
    """
    check_measure(measure)
    measures = (measure,) if measure in CELL_MEASURES else ()
    return Baseline.of(original, quasi_identifiers, hierarchies, count=count, measures=measures).value(
        released, measure
    )
