"""What a private release will do, checked before the records reach OpenDP: its columns,
their sizes, the workload of the chosen method and the time it is estimated at
(``plan_synthesis``), and its budget, settled from the settings alone before any record is
read (``plan_budget``: what the release states, what its query spends, MST's split). Part of
``anonlib.transformations.synthesis``.

Example:
    >>> workload(["a", "b", "y"], "y")
    [('a', 'y'), ('b', 'y')]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from ...core.errors import ColumnError, SynthesisError, join_names
from .budget import Budget, mst_split, privacy_budget, stated_budget
from .cuts import NUMBER_CATEGORIES, NumberCuts, needs_cuts

METHODS = {
    "mst": "MST: a tree of two-way tables chosen privately (and the column to predict with every other)",
    "pairs": "two-way tables of a published list of column pairs (the star around the column to predict)",
    "aim": "AIM: two-way tables chosen privately, round by round",
}
DEFAULT_METHOD = "mst"
MAX_ROWS = 2_000_000  # synthetic records at most
MAX_CATEGORIES = 100  # values of one column at most (a larger one is generalized first, or left out)
MAX_COLUMNS = 24
MAX_PAIR_CELLS = 250_000  # cells of one two-way table at most
DEFAULT_TIME_LIMIT = 300.0  # seconds a run may be estimated at before it is refused
AIM_ROUNDS_PER_COLUMN = 2  # AIM's rounds: capped (OpenDP's default is 16 per column)
AIM_MAX_SIZE = 20.0  # AIM's model size in MB: capped (OpenDP's default is 80)
MST_FIXED_SHARE = 0.25  # of the default MST's budget, the share measuring the column to predict with every other
MAX_RECORDS_PER_PERSON = 1000
MAX_RECORDS = 20_000_000  # records a release reads at most (a record-count column expanded)
RARE_RECORDS = 20  # a value held by fewer records is named before its list is declared public


# --------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class SynthesisPlan:
    """What a run will measure, checked before the data reach OpenDP: the columns, their
    sizes (categories, missing included; bins), the two-way tables of the workload, the
    domain size and the estimated seconds."""

    columns: tuple[str, ...]
    method: str
    sizes: tuple[int, ...]
    pairs: tuple[tuple[str, str], ...]
    predict: str | None
    cuts: tuple[NumberCuts, ...]
    domain: float
    estimate: float
    time_limit: float

    def sentence(self) -> str:
        """The plan in words, with the estimate."""
        chosen = f"two-way tables chosen among {len(self.columns) * (len(self.columns) - 1) // 2} pairs"
        if self.method == "pairs":
            tables = f"{len(self.pairs)} two-way tables"
        elif self.method == "mst" and self.pairs:
            tables = f"{len(self.pairs)} two-way tables given, then a tree of {chosen}"
        else:
            tables = chosen
        return (
            f"{METHODS[self.method]}: {len(self.columns)} columns (a domain of {self.domain:.3g} combinations), "
            f"{tables}; estimated at about {self.estimate:.0f} s (limit {self.time_limit:g} s)."
        )


def _clean_pairs(pairs: Sequence[Sequence[str]], columns: Sequence[str]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for pair in pairs:
        pair = tuple(str(c) for c in pair)
        if len(pair) != 2 or pair[0] == pair[1]:
            raise SynthesisError(f"A pair names two different columns; got {' × '.join(pair) or 'nothing'}.")
        unknown = [c for c in pair if c not in columns]
        if unknown:
            raise SynthesisError(
                f"The pair {' × '.join(pair)} names {join_names(unknown)}, not among the columns released "
                f"({join_names(columns)})."
            )
        if pair not in out and pair[::-1] not in out:
            out.append(pair)
    return out


def workload(columns: Sequence[str], predict: str | None, pairs: Sequence[Sequence[str]] = ()) -> list[tuple[str, str]]:
    """The ``pairs`` method's two-way tables: ``predict`` crossed with every other column,
    then the listed ``pairs`` (each once).

    >>> workload(["a", "b", "y"], "y", [("a", "b"), ("b", "a"), ("a", "y")])
    [('a', 'y'), ('b', 'y'), ('a', 'b')]
    """
    star = [(c, predict) for c in columns if predict is not None and c != predict]
    return _clean_pairs(star + [tuple(p) for p in pairs], columns)


def estimate_seconds(sizes: Sequence[int], method: str, tables: int) -> float:
    """Seconds a run is expected to take on 2 cores, from the domain: a fixed cost
    (JAX compiling mbi's programs, most of the time), a cost per table measured, and a
    cost per cell of the tables fitted. Calibrated on Adult (docs/dp.md); AIM's rounds
    each refit the model.

    >>> round(estimate_seconds([3, 3, 2], "pairs", 2)) < round(estimate_seconds([17, 15, 9, 8] * 2, "pairs", 12))
    True
    """
    sizes = [int(s) for s in sizes]
    columns = len(sizes)
    pair_cells = sum(a * b for i, a in enumerate(sizes) for b in sizes[i + 1 :])
    if method == "pairs":
        return 20.0 + 3.0 * (tables + columns) + pair_cells / 2_000.0
    if method == "mst":
        return 25.0 + 4.0 * columns + 3.0 * tables + pair_cells / 1_000.0
    rounds = AIM_ROUNDS_PER_COLUMN * columns
    return 30.0 + 14.0 * rounds + pair_cells / 500.0


def plan_synthesis(
    frame: pd.DataFrame,
    columns: Sequence[str],
    *,
    cuts: Sequence[NumberCuts] = (),
    method: str = DEFAULT_METHOD,
    predict: str | None = None,
    pairs: Sequence[Sequence[str]] = (),
    time_limit: float = DEFAULT_TIME_LIMIT,
    values: Mapping[str, Sequence[str]] | None = None,
) -> SynthesisPlan:
    """Check a run before it starts, and estimate its time; a sentence when it is refused
    (unknown or repeated columns, a column with too many values, work past ``time_limit``).
    ``values``: the value lists given for category columns (their sizes; the others' sizes
    are counted in the data, for the estimate only, never released).

    >>> p = plan_synthesis(pd.DataFrame({"a": list("xyxy"), "y": list("ppqq")}), ["a", "y"], predict="y")
    >>> p.pairs, p.sizes, p.domain
    ((('a', 'y'),), (3, 3), 9.0)
    """
    if method not in METHODS:
        raise SynthesisError(f"The method must be one of {', '.join(METHODS)}; got '{method}'.")
    columns = [str(c) for c in columns]
    if len(columns) < 2:
        raise SynthesisError("A private release needs at least two columns.")
    if len(set(columns)) != len(columns):
        raise SynthesisError("A column is named twice; name each column once.")
    if len(columns) > MAX_COLUMNS:
        raise SynthesisError(
            f"{len(columns)} columns is more than a private release synthesizes here ({MAX_COLUMNS}); "
            "choose the columns the recipient needs."
        )
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ColumnError(f"These columns do not exist in the data: {join_names(missing)}.")
    by_column = {c.column: c for c in cuts}
    stray = [c for c in by_column if c not in columns]
    if stray:
        raise SynthesisError(f"Cuts are given for {join_names(stray)}, which is not among the columns released.")
    if predict is not None and predict not in columns:
        raise SynthesisError(f"The column to predict, {predict}, is not among the columns released.")
    sizes = []
    for column in columns:
        if column in by_column:
            sizes.append(len(by_column[column].cuts) + 1)
            continue
        if values and column in values:
            distinct = len(values[column]) + 1  # OpenDP adds a missing value to every list
            if distinct - 1 > MAX_CATEGORIES:
                raise SynthesisError(
                    f"{column} is given {distinct - 1:,} values, more than {MAX_CATEGORIES} a private release can "
                    "measure well; generalize it first, or leave it out."
                )
            sizes.append(distinct)
            continue
        column_values = frame[column]
        if needs_cuts(column_values):  # value by value, a number column would be measured too thinly
            raise SynthesisError(
                f"{column} holds numbers with more than {NUMBER_CATEGORIES} different values: give it public "
                "bounds (and cuts) to release it, or its list of values."
            )
        distinct = int(column_values.dropna().nunique()) + 1  # OpenDP adds a missing value to every list
        if distinct - 1 > MAX_CATEGORIES:  # the count itself is never said: it is read from the records
            raise SynthesisError(
                f"{column} has more than {MAX_CATEGORIES} different values, more than a private release can "
                "measure well; give it cuts if it holds numbers, generalize it first, or leave it out."
            )
        sizes.append(distinct)
    size_of = dict(zip(columns, sizes))
    chosen = workload(columns, predict, pairs) if method in ("pairs", "mst") else _clean_pairs(pairs, columns)
    if method == "pairs" and not chosen:
        raise SynthesisError("The pairs method needs a column to predict or at least one pair of columns.")
    big = [(a, b) for a, b in chosen if size_of[a] * size_of[b] > MAX_PAIR_CELLS]
    if big:
        a, b = big[0]
        raise SynthesisError(
            f"The table {a} × {b} has more than {MAX_PAIR_CELLS:,} cells (a count read from the records is never "
            "quoted); generalize one of them first or leave the pair out."
        )
    domain = float(math.prod(float(s) for s in sizes))
    estimate = estimate_seconds(sizes, method, len(chosen))
    if not time_limit > 0:
        raise SynthesisError(f"The time limit must be positive; got {time_limit:g} s.")
    plan = SynthesisPlan(
        tuple(columns),
        method,
        tuple(sizes),
        tuple(chosen),
        predict,
        tuple(by_column[c] for c in columns if c in by_column),
        domain,
        estimate,
        float(time_limit),
    )
    if estimate > time_limit:
        advice = "use the pairs method, " if method != "pairs" else ""
        raise SynthesisError(
            f"{METHODS[method]} on these {len(columns)} columns is estimated at about {estimate:.0f} s, past the "
            f"limit of {time_limit:g} s: {advice}choose fewer columns or fewer bins, or allow more time."
        )
    return plan


# --------------------------------------------------------------------------- the budget, before the records


def undeclared_refusal(columns: Sequence[str]) -> str:
    """The sentence refusing value lists nobody declared when δ = 0 leaves OpenDP no way to find them.

    >>> undeclared_refusal(["sex"]).split(":")[0]
    'The value lists of sex would be read from the records and released as they are'
    """
    return (
        f"The value lists of {join_names(columns)} would be read from the records and released as they are: "
        "give them (--values COLUMN=a,b,...), declare the file's lists public (--values-from-data), or give "
        "δ > 0 (such as 5e-7) for OpenDP to find them privately."
    )


@dataclass(frozen=True)
class BudgetPlan:
    """A release's budget, settled before any record is read: what the user asked (``asked``,
    the noise's), what the release states (``stated``: OpenDP's privacy map of the whole
    measurement, finding value lists included), what its one query spends (``spend``: ε, or ρ
    with Gaussian noise; for MST a few units in the last place below the stated, see
    ``mst_split``) and how many pairs MST chooses (``selections``; None for other methods)."""

    asked: Budget
    stated: Budget
    spend: float
    method: str
    columns: int
    selections: int | None = None

    def sentence(self) -> str | None:
        """What the split changed, in words (None when nothing did)."""
        if self.selections is not None and self.selections < self.columns - 1:
            return (
                f"MST chooses {self.selections} pairs, not the {self.columns - 1} a tree of {self.columns} columns "
                f"has: OpenDP 0.16 cannot split its budget {self.columns - 1} ways (its sum of the parts rounds "
                "past the budget), so one part of the tree is measured without a pair joining it to the rest."
            )
        return None


def plan_budget(
    columns: Sequence[str],
    *,
    epsilon: float | None = None,
    delta: float = 0.0,
    rho: float | None = None,
    method: str = DEFAULT_METHOD,
    cuts: Sequence[str] = (),
    values: Sequence[str] = (),
    values_from_data: bool = False,
    predict: str | None = None,
    pairs: Sequence[Sequence[str]] = (),
    person: bool = False,
) -> BudgetPlan:
    """The budget of a release from its settings alone, before any record is read: the budget
    asked (``privacy_budget``), whether OpenDP finds value lists itself (a category column
    without ``values`` given, when the file's lists are not declared: ``values_from_data``),
    the stated budget (``stated_budget``: refused in a sentence when finding the lists takes δ
    past the cap, or when δ = 0 leaves no way to find them), and MST's split (``mst_split``).
    ``cuts`` and ``values``: the columns with declared cuts, and with given value lists.

    >>> b = plan_budget(["sex", "dx"], epsilon=1.0, values_from_data=True, method="pairs", predict="dx")
    >>> b.stated.epsilon, b.spend, b.selections
    (1.0, 1.0, None)
    >>> plan_budget(["sex", "dx"], epsilon=1.0, delta=1e-6).stated.delta
    Traceback (most recent call last):
    ...
    anonlib.core.errors.SynthesisError: OpenDP finding the value lists spends δ of its own: this release would state δ = 2e-06 (1e-06 for the noise and 1e-06 to find the lists), past the cap of 1e-06; give δ at most 5e-07, or give or declare the value lists.
    """
    if method not in METHODS:
        raise SynthesisError(f"The method must be one of {', '.join(METHODS)}; got '{method}'.")
    asked = privacy_budget(epsilon, delta, rho=rho)
    columns = [str(c) for c in columns]
    found = [c for c in columns if c not in set(cuts) and c not in set(values)] if not values_from_data else []
    if found and asked.delta == 0:
        raise SynthesisError(undeclared_refusal(found))
    stated = stated_budget(asked, finds_keys=bool(found), person=person)
    total = stated.epsilon if stated.pure else stated.rho
    if method != "mst":
        return BudgetPlan(asked, stated, total, method, len(columns))
    given = workload(columns, predict, pairs) if len(columns) >= 2 else []
    spend, selections = mst_split(stated.noise, total, len(columns), share=MST_FIXED_SHARE if given else None)
    return BudgetPlan(asked, stated, spend, method, len(columns), selections)
