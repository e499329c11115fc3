"""The paper's Figs. 3 and 4: leaving one variable out of what the adversary knows, and how
cutting a numeric variable into equal-width bands (its partitions) raises the records protected."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...core.budget import Progress, WorkEstimate, check_work, report
from ...core.equivalence import EncodedTable, combine
from ...core.errors import ColumnError, EmptySelectionError, ParameterError, require_columns
from .measures import MEASURE_NAMES, NARROW, check_fraction, column_list, evaluate, persons_of, single_frame
from .subsets import Target, check_known, check_measure, distinct_rows, subset_search, walk_estimate, walk_size

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
        return pd.DataFrame(
            {
                "unknown variable": list(self.aux),
                f"mean {MEASURE_NAMES[self.measure]} gained": gain.mean(axis=1),
                "individuals improved %": 100 * (gain > 0).mean(axis=1),
            }
        )


def leave_one_out(
    df: pd.DataFrame,
    sensitive: str,
    aux: Sequence[str],
    measure: str = "ppp",
    q: float = 0.0,
    *,
    count: str | None = None,
    person: str | None = None,
) -> LeaveOneOut:
    """Where vulnerability comes from: PPP/PoAC with maximum auxiliary information
    except each auxiliary variable in turn (with a ``person`` column, among the record itself
    and other people's records).

    >>> df = pd.DataFrame({"s": ["x", "y", "x"], "a": [1, 1, 2], "b": [1, 2, 3]})
    >>> res = leave_one_out(df, "s", ["a", "b"])
    >>> res.full.tolist(), res.without.tolist()
    ([0.0, 0.0, 0.0], [[0.0, 0.0, 0.0], [0.5, 0.5, 0.0]])
    """
    measure = check_measure(measure)
    q = check_fraction(q, "q")
    table, aux = single_frame(df, sensitive, aux, count)
    if not aux:
        raise EmptySelectionError("Choose at least one auxiliary variable to leave out.")
    persons = persons_of(df, person, [sensitive, *aux], count)
    s_codes, s_card = table.column_codes(sensitive), table.cardinalities[0]

    def measure_with(known: list[str]) -> np.ndarray:
        return evaluate(table.classes(known), s_codes, s_card, table.weights, measure, q, persons)

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
    aux = column_list(aux, "auxiliary variables")
    if variable not in aux:
        raise ParameterError(f"'{variable}' must be one of the auxiliary variables to be generalized.")
    require_columns(df, [variable])
    numbers = pd.to_numeric(df[variable], errors="coerce")
    if (numbers.isna() & df[variable].notna()).any():
        raise ColumnError(f"'{variable}' is not numeric, so it cannot be cut into equal-width categories.")
    values = numbers.to_numpy(dtype=np.float64, na_value=np.nan)
    found, complete = partitions(values, max_categories=max_categories, max_partitions=max_partitions)
    rest = [c for c in aux if c != variable]
    table, _ = single_frame(df, sensitive, aux, count)
    return values, found, complete, rest, table


def _potential_estimate(table: EncodedTable, n_rest: int, n_partitions: int, max_known: int | None) -> WorkEstimate:
    distinct = distinct_rows(table)
    return walk_estimate(
        f"the minimum PPP for {n_partitions:,} partitions, each over {walk_size(n_rest, max_known):,} "
        f"combinations of auxiliary information, for {distinct:,} distinct records",
        distinct,
        table.n_rows,
        n_rest,
        1,
        max_known,
        walks=n_partitions + 2,
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
    return _potential_estimate(table, len(rest), len(found), check_known(max_known))


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
    person: str | None = None,
) -> GeneralizationPotential:
    """For each equal-width partition of the numeric auxiliary ``variable``, the
    share of records with p-upward privacy. Subsets without ``variable`` do not
    change with it, so their minimum is computed once; per partition only the
    subsets containing the generalized variable are walked. ``max_known``
    narrows the adversary to subsets of at most that many variables; with a ``person``
    column a record's peers are the record itself and other people's records. The work is
    estimated first (``estimate_generalization_potential``) and refused with a
    sentence saying how to narrow it when too large; ``progress(done, total,
    what)`` counts the partitions evaluated.

    >>> df = pd.DataFrame({"s": ["x", "y", "x", "y"], "age": [1, 2, 3, 4]})
    >>> res = generalization_potential(df, "s", ["age"], "age", max_categories=3)
    >>> res.baseline, res.table()["categories"].tolist(), res.protected.tolist()
    (0.0, [2, 3, 2, 2, 2], [1.0, 0.5, 0.75, 1.0, 0.75])
    """
    p = check_fraction(p, "p")
    max_known = check_known(max_known)
    values, found, complete, rest, table = _potential_inputs(
        df, sensitive, aux, variable, max_categories, max_partitions, count
    )
    check_work(_potential_estimate(table, len(rest), len(found), max_known), narrow=NARROW)
    persons = persons_of(df, person, [sensitive, *aux], count)
    target = Target(table.column_codes(sensitive), table.cardinalities[0], 0.0)
    codes = [table.column_codes(c) for c in rest]
    cards = [table.cardinalities[table.position(c)] for c in rest]
    weights = np.ones(table.n_rows) if table.weights is None else table.weights.astype(np.float64)
    with_known = None if max_known is None else max_known - 1  # the variable itself is known

    def with_variable(start: tuple[np.ndarray, int]) -> np.ndarray:
        if with_known is not None and with_known < 0:
            return np.full(table.n_rows, np.inf)
        return subset_search(
            codes, cards, [target], table.weights, "ppp", True, start=start, max_known=with_known, person=persons
        )[0][0]

    # subsets without the variable: the same for every partition
    if rest or include_empty:
        fixed = subset_search(
            codes, cards, [target], table.weights, "ppp", include_empty, max_known=max_known, person=persons
        )[0][0]
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
