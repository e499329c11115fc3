"""A differentially private synthetic table, made by OpenDP (the optional ``dp`` extra).

OpenDP 0.16 does the mechanism: the noise, the privacy accounting, fitting the model
(its ``mbi`` backend) and drawing the synthetic records. This module only chooses what
OpenDP is given (the columns, each column's public category list, the public cuts and
bounds of numbers, the workload of the chosen method and the budget), estimates the
time before running, and turns every refusal into one ``SynthesisError`` sentence.
Nothing here adds noise, counts privacy loss or fits a model.

Methods (``METHODS``):

- ``mst`` (the default): OpenDP's MST (the pairs are chosen privately, as a tree); when a
  column is to be predicted, its pairs with every other column (and the pairs the user
  lists) are measured too, first, with a share of the budget (OpenDP's ``Sequential`` of
  ``Fixed`` and ``MST``). docs/dp.md gives the measurements that made it the default.
- ``pairs``: two-way tables of a published list of column pairs only, OpenDP's
  ``dp.mbi.Fixed`` workload: the column to predict crossed with every other column (the
  star), plus the pairs the user lists, and every one-way table.
- ``aim``: OpenDP's AIM, its rounds and model size capped; refused with a sentence when
  its estimated time passes the limit.

Budget (``privacy_budget``): ε with δ = 0 is pure ε-DP (Laplace noise; ρ = ε²/2, the
zCDP it implies, is shown); ε with δ > 0 is converted by OpenDP to the largest ρ whose
zCDP guarantee implies (ε, δ)-DP (Gaussian noise); ρ may be given instead, and OpenDP
gives its ε at δ.

Public inputs (nothing else read from the records reaches the release): each category
column's value list is given (``values=``), declared public by the user
(``values_from_data=True``: read from the file), or found privately by OpenDP (δ > 0: values
held by fewer records than its threshold fall into the missing value); otherwise the run
is refused in a sentence. Numbers (``NumberCuts``): a number column is cut at public cut
points inside public bounds, and its type (whole numbers or not) comes from them, never
from the values. Each value is put in its bin (clamped into the bounds, a change of each
record on its own) before OpenDP sees it, so OpenDP measures bins, whose labels are
public; a synthetic value is drawn uniformly inside its bin (post-processing). Default cuts
come from the column's typed hierarchy (its first level of bands): they are read from
the data, so they need the same declaration as the value lists.

People (``person=``): with a person column, OpenDP's unit is the person
(``dp.unit_of(contributions=1, identifier=...)``) and it keeps at most
``records_per_person`` records of each (drawn at random, ``truncate_per_group``) before
measuring, so ε is per person.

Two known problems of OpenDP 0.16 are worked around (docs/dp.md): records are drawn
with ``method="sample"``, never the default ``"round"`` (mbi 1.1.0 couples columns that
share a parent in the model); and MST's budget (used alone), whose split can exceed the budget by one
unit in the last place, is replayed before the data are touched and lowered by a few units
in the last place when it would fail (``mst_budget``).

There is no seed: OpenDP draws fresh noise on every run, by design, and numpy's global
random state (which OpenDP uses to draw the records) is never seeded here.

This package is the one place that talks to OpenDP: ``budget`` (loading OpenDP, the budget
and its conversions), ``cuts`` (public cuts and bounds), and here the plan, the release
(``opendp_release``, the one call that reads the records) and MST's budget replay, so each
workaround of OpenDP 0.16 stays next to the call it guards.

Example (needs OpenDP; skipped without it):
    >>> import pandas as pd
    >>> b = privacy_budget(epsilon=1.0)
    >>> (b.epsilon, b.delta, b.rho, b.noise)
    (1.0, 0.0, 0.5, 'Laplace')
    >>> NumberCuts("age", (30, 50), 17, 90).labels
    ('17-30', '31-50', '51-90')
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...core.errors import ColumnError, SynthesisError, join_names
from .budget import (
    INSTALL_SENTENCE,
    MAX_DELTA,
    MAX_EPSILON,
    MIN_EPSILON,
    Budget,
    innermost_error,
    jax_cache_folder,
    library_versions,
    opendp_version,
    privacy_budget,
    require_opendp,
    use_jax_cache,
)
from .cuts import NUMBER_CATEGORIES, NumberCuts, default_number_cuts, needs_cuts, parse_cuts

METHODS = {
    "mst": "MST: a tree of two-way tables chosen privately (and the column to predict with every other)",
    "pairs": "two-way tables of a published list of column pairs (the star around the column to predict)",
    "aim": "AIM: two-way tables chosen privately, round by round",
}
DEFAULT_METHOD = "mst"
ROWS_FACTOR = 3  # synthetic records per estimated record when rows are not given (less sampling noise)
MAX_ROWS = 2_000_000  # synthetic records at most
MAX_CATEGORIES = 100  # values of one column at most (a larger one is generalized first, or left out)
MAX_COLUMNS = 24
MAX_PAIR_CELLS = 250_000  # cells of one two-way table at most
DEFAULT_TIME_LIMIT = 300.0  # seconds a run may be estimated at before it is refused
AIM_ROUNDS_PER_COLUMN = 2  # AIM's rounds: capped (OpenDP's default is 16 per column)
AIM_MAX_SIZE = 20.0  # AIM's model size in MB: capped (OpenDP's default is 80)
MST_FIXED_SHARE = 0.25  # of the default MST's budget, the share measuring the column to predict with every other
MAX_RECORDS_PER_PERSON = 1000


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
                f"{column} holds numbers with {column_values.dropna().nunique():,} different values: give it public "
                "cuts and bounds to release it, or its list of values."
            )
        distinct = int(column_values.dropna().nunique()) + 1  # OpenDP adds a missing value to every list
        if distinct - 1 > MAX_CATEGORIES:
            raise SynthesisError(
                f"{column} has {distinct - 1:,} different values, more than {MAX_CATEGORIES} a private release "
                "can measure well; give it cuts if it holds numbers, generalize it first, or leave it out."
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
            f"The table {a} × {b} has {size_of[a] * size_of[b]:,} cells, more than {MAX_PAIR_CELLS:,}; "
            "generalize one of them first or leave the pair out."
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


# --------------------------------------------------------------------------- the release


@dataclass(frozen=True)
class Synthesis:
    """A differentially private synthetic table and everything its release states.

    ``table``: the synthetic records (categories as text, None for missing; numbers
    drawn inside their bins). ``marginals``: the DP two-way tables of the workload (and
    the one-way tables), as the fitted model gives them: (columns, frame with a
    ``records`` column), post-processing of the same release. ``records_estimate``: the
    DP estimate of the number of records (the model's total)."""

    table: pd.DataFrame
    method: str
    budget: Budget
    columns: tuple[str, ...]
    cuts: tuple[NumberCuts, ...]
    pairs: tuple[tuple[str, str], ...]
    predict: str | None
    rows: int
    records_estimate: float
    library: Mapping[str, str]
    seconds: float
    estimate: float
    budget_spent: float  # the budget OpenDP was given (MST: a few units in the last place lower, see mst_budget)
    marginals: tuple[tuple[tuple[str, ...], pd.DataFrame], ...] = field(default=(), repr=False)
    categories: Mapping[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    value_sources: Mapping[str, str] = field(default_factory=dict, repr=False)  # column -> VALUE_SOURCES key
    person: str | None = None  # the person column: the unit protected is the person
    records_per_person: int = 1

    @property
    def method_label(self) -> str:
        return METHODS[self.method]

    @property
    def unit(self) -> str:
        """The unit ε protects: "person" (with a person column) or "record"."""
        return "person" if self.person is not None else "record"

    def sentence(self) -> str:
        return (
            f"{self.rows:,} synthetic records of {join_names(self.columns, limit=24)} by {self.method_label} "
            f"(OpenDP {self.library.get('opendp', '?')}), {self.budget.sentence()}; {self.seconds:.0f} s."
        )


def _prior(x: float) -> float:
    return float(np.nextafter(x, -np.inf))


def mst_budget(
    measure,
    budget: float,
    columns: int,
    *,
    oneway_split: float = 0.5,
    measure_split: float = 0.9,
    share: float | None = None,
) -> float:
    """The largest budget at most ``budget`` (a few units in the last place lower at most)
    that OpenDP 0.16's MST can spend. MST splits its selection budget into ``columns - 1``
    equal parts, and OpenDP's sum of them, rounded up, can exceed the part it was cut
    from by one unit in the last place ("insufficient budget for query"), after the
    one-way tables were measured. The split depends only on the budget and the number of
    columns: it is replayed here with OpenDP's own composition before the data are read.
    ``share``: MST runs after the fixed pairs in OpenDP's ``Sequential`` with weights
    ``share, 1 - share`` (the default method with a column to predict); its part of the
    budget is replayed through ``Sequential``'s own search too."""
    dp = require_opendp()
    domain, metric = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()

    def mst_part(multiway: float) -> float:
        if share is None:
            return multiway
        weights = (share, 1.0 - share)

        def composition(scale: float):
            return dp.c.make_adaptive_composition(domain, metric, measure, d_in=1, d_mids=[w * scale for w in weights])

        scale = dp.binary_search_param(composition, d_in=1, d_out=multiway, T=float)
        return weights[1] * scale

    def fits(total: float) -> bool:
        try:
            multiway = mst_part(_prior(_prior(total - total * oneway_split)))
        except dp.OpenDPException:
            return False
        measured = multiway * measure_split
        select = _prior(_prior(multiway - measured))
        parts = columns - 1
        outer = dp.c.make_adaptive_composition(domain, metric, measure, d_in=1, d_mids=[select, measured])([0])
        try:
            outer(
                dp.c.make_adaptive_composition(domain, metric, measure, d_in=1, d_mids=[_prior(select / parts)] * parts)
            )
            return True
        except dp.OpenDPException:
            return False

    spent = float(budget)
    for _ in range(256):
        if fits(spent):
            return spent
        spent = _prior(spent)
    raise SynthesisError("MST cannot spend this budget; use the pairs method or change ε slightly.")


VALUE_SOURCES = {
    "given": "given by the user",
    "declared": "read from the file and declared public by the user",
    "found": "found by OpenDP (values held by fewer records than its threshold are left out)",
    "cuts": "the bins of the declared cuts and bounds",
}


def value_lists(
    frame: pd.DataFrame,
    columns: Sequence[str],
    cuts: Mapping[str, NumberCuts],
    *,
    values: Mapping[str, Sequence[str]] | None = None,
    values_from_data: bool = False,
    delta: float = 0.0,
) -> tuple[dict[str, tuple[str, ...] | None], dict[str, str]]:
    """Each column's public value list (None: OpenDP finds it privately) and where it comes
    from (``VALUE_SOURCES``); a sentence when a list would be read from the records without
    being declared and δ = 0 leaves OpenDP no way to find it.

    >>> f = pd.DataFrame({"a": ["x", "y"], "b": ["p", "q"]})
    >>> value_lists(f, ["a", "b"], {}, values={"a": ["x", "y", "z"]}, values_from_data=True)
    ({'a': ('x', 'y', 'z'), 'b': ('p', 'q')}, {'a': 'given', 'b': 'declared'})
    >>> value_lists(f, ["a", "b"], {}, delta=1e-6)[1]
    {'a': 'found', 'b': 'found'}
    """
    given = {str(k): tuple(dict.fromkeys(str(v) for v in vs)) for k, vs in (values or {}).items()}
    stray = [c for c in given if c not in columns or c in cuts]
    if stray:
        raise SynthesisError(f"Values are given for {join_names(stray)}, which is not a category column released.")
    lists: dict[str, tuple[str, ...] | None] = {}
    sources: dict[str, str] = {}
    undeclared = []
    for column in columns:
        if column in cuts:
            lists[column], sources[column] = cuts[column].labels, "cuts"  # measured through OpenDP's cuts
        elif column in given:
            if not given[column]:
                raise SynthesisError(f"The value list given for {column} is empty.")
            lists[column], sources[column] = given[column], "given"
        elif values_from_data:
            texts = _texts(frame[column])
            lists[column], sources[column] = tuple(sorted(set(texts.dropna().tolist()))), "declared"
        elif delta > 0:
            lists[column], sources[column] = None, "found"
        else:
            undeclared.append(column)
    if undeclared:
        raise SynthesisError(
            f"The value lists of {join_names(undeclared)} would be read from the records and released as they are: "
            "give them (--values COLUMN=a,b,...), declare the file's lists public (--values-from-data), or give "
            "δ > 0 (such as 1e-6) for OpenDP to find them privately."
        )
    return lists, sources


def _texts(values: pd.Series) -> pd.Series:
    """A category column as OpenDP reads it: text, None when missing (a whole float as its integer)."""
    texts = values.astype(object)
    mask = texts.isna().to_numpy()
    return pd.Series(
        [
            None if m else (str(int(v)) if isinstance(v, float) and v.is_integer() else str(v))
            for v, m in zip(texts.tolist(), mask)
        ],
        index=values.index,
        dtype=object,
    )


def _prepared(frame: pd.DataFrame, columns: Sequence[str], cuts: Mapping[str, NumberCuts]) -> pd.DataFrame:
    """The columns as OpenDP reads them: categories as text (None when missing), numbers as
    the position of their declared bin (clamped into the bounds), a float that OpenDP cuts
    at ``bin_cuts``: OpenDP measures the bins, and no type or value is taken from the
    numbers. A number column with a record without a number is refused (a sentence)."""
    out = {}
    for column in columns:
        if column in cuts:
            bins = cuts[column].bins(frame[column])
            if (bins < 0).any():
                raise SynthesisError(
                    f"{column} has {int((bins < 0).sum()):,} records without a number; release it without cuts (as "
                    "categories), or drop the records with missing values (Dataset page) first."
                )
            out[column] = pd.Series(bins.astype(np.float64), index=frame.index)
        else:
            out[column] = _texts(frame[column])
    return pd.DataFrame(out)


def bin_cuts(spec: NumberCuts) -> list[float]:
    """The cuts OpenDP is given for a number column prepared as its bin positions: halfway
    between positions (bin ``i`` is OpenDP's ``i``-th key).

    >>> bin_cuts(NumberCuts("age", (30, 50), 17, 90))
    [0.5, 1.5]
    """
    return [i + 0.5 for i in range(len(spec.cuts))]


def _algorithm(dp, plan: SynthesisPlan):
    if plan.method == "pairs":
        return dp.mbi.Fixed(queries=[dp.mbi.Count(p) for p in plan.pairs], oneway="all")
    if plan.method == "mst":
        if not plan.pairs:
            return dp.mbi.MST()
        # the column to predict with every other first (and the listed pairs), then MST's tree, on a shared budget
        return dp.mbi.Sequential(
            algorithms=[dp.mbi.Fixed(queries=[dp.mbi.Count(p) for p in plan.pairs], oneway="all"), dp.mbi.MST()],
            weights=[MST_FIXED_SHARE, 1.0 - MST_FIXED_SHARE],
        )
    queries = [dp.mbi.Count(p) for p in plan.pairs] if plan.pairs else 2
    return dp.mbi.AIM(queries=queries, rounds=AIM_ROUNDS_PER_COLUMN * len(plan.columns), max_size=AIM_MAX_SIZE)


def _fresh_rng() -> np.random.Generator:
    """Fresh entropy, no seed (as OpenDP's own draws): the draws of numbers inside their bins."""
    return np.random.default_rng()


def opendp_release(
    data: pd.DataFrame,
    plan: SynthesisPlan,
    keys: Mapping[str, Sequence[str] | None],
    budget: Budget,
    spend: float,
    *,
    person: str | None = None,
    records_per_person: int = 1,
):
    """OpenDP's release: the contingency table it measures and fits on ``data`` (the
    prepared columns, with the person column when there is one). The one call that reads
    the records; everything the package holds comes from what it returns and the declared
    inputs."""
    dp = require_opendp()
    import polars as pl

    plan_cuts = {c.column: c for c in plan.cuts}
    measure = dp.max_divergence() if budget.pure else dp.zero_concentrated_divergence()
    loss = (measure, spend) if budget.pure or not any(k is None for k in keys.values()) else None
    if loss is None:  # keys found privately: OpenDP's threshold needs δ beside ρ
        loss = dp.loss_of(rho=spend, delta=budget.delta)
    if person is None:
        unit = dp.unit_of(contributions=1)
    else:
        unit = dp.unit_of(contributions=1, identifier=pl.col(person))
    context = dp.Context.compositor(
        data=pl.from_pandas(data).lazy(), privacy_unit=unit, privacy_loss=loss, split_evenly_over=1
    )
    query = context.query()
    if person is not None:
        query = query.truncate_per_group(int(records_per_person))  # records beyond it dropped at random
    return (
        query.select(list(plan.columns))
        .contingency_table(
            keys={c: list(k) for c, k in keys.items() if k is not None and c not in plan_cuts},
            cuts={c: bin_cuts(spec) for c, spec in plan_cuts.items()},
            algorithm=_algorithm(dp, plan),
        )
        .release()
    )


def synthesize(
    frame: pd.DataFrame,
    columns: Sequence[str],
    *,
    epsilon: float | None = None,
    delta: float = 0.0,
    rho: float | None = None,
    method: str = DEFAULT_METHOD,
    cuts: Sequence[NumberCuts] = (),
    predict: str | None = None,
    pairs: Sequence[Sequence[str]] = (),
    rows: int | None = None,
    count: str | None = None,
    values: Mapping[str, Sequence[str]] | None = None,
    values_from_data: bool = False,
    person: str | None = None,
    records_per_person: int = 1,
    time_limit: float = DEFAULT_TIME_LIMIT,
    progress: Callable[[str, float], None] | None = None,
    before_measuring: Callable[[Budget], None] | None = None,
) -> Synthesis:
    """A differentially private synthetic table of ``columns`` of ``frame`` (see the module text).

    ``cuts``: a ``NumberCuts`` for each number column. ``values`` / ``values_from_data``:
    the public value lists of category columns (``value_lists``). ``predict``: the column
    crossed with every other (the default MST adds those pairs; the ``pairs`` method
    measures only them); ``pairs``: more two-way tables (for AIM: its candidate tables).
    ``rows``: synthetic records (default ``ROWS_FACTOR`` times the DP estimate of the
    records). ``count``: a record-count column (each row stands for that many records).
    ``person``: the person column (the unit protected), each person's records cut to
    ``records_per_person`` at random by OpenDP. ``progress(stage, share)`` is told each
    stage; ``before_measuring(budget)`` is called once every input is checked, before
    OpenDP reads the records (a project's budget is spent there). Refusals are one ``SynthesisError`` sentence; without OpenDP,
    ``PrivacyExtraMissingError``.

    Example (needs OpenDP and about 20 s):
        >>> import pandas as pd
        >>> frame = pd.DataFrame({"sex": list("FM") * 200, "y": list("aabb") * 100})
        >>> s = synthesize(frame, ["sex", "y"], epsilon=5.0, values_from_data=True, rows=100)  # doctest: +SKIP
        >>> len(s.table), s.method, s.budget.rho  # doctest: +SKIP
        (100, 'mst', 12.5)
    """
    start = time.perf_counter()
    tell = progress or (lambda stage, share: None)
    budget = privacy_budget(epsilon, delta, rho=rho)
    dp = require_opendp()
    if rows is not None and (isinstance(rows, bool) or int(rows) != rows or not 1 <= int(rows) <= MAX_ROWS):
        raise SynthesisError(f"The records to synthesize must be a whole number from 1 to {MAX_ROWS:,}; got {rows}.")
    if person is not None:
        if person not in frame.columns:
            raise ColumnError(f"The person column {person} is not in the data.")
        if person in columns:
            raise SynthesisError(f"The person column {person} marks people; it is never released.")
        if isinstance(records_per_person, bool) or not 1 <= int(records_per_person) <= MAX_RECORDS_PER_PERSON:
            raise SynthesisError(
                f"The records kept per person must be a whole number from 1 to {MAX_RECORDS_PER_PERSON:,}; "
                f"got {records_per_person}."
            )
    if count is not None:
        from ...core.cells import record_weights

        weights = record_weights(frame, count)
        frame = frame.iloc[np.repeat(np.arange(len(frame)), weights)].reset_index(drop=True)
    if len(frame) == 0:
        raise SynthesisError("The table holds no record to release.")
    specs = {c.column: c for c in cuts}
    lists, sources = value_lists(
        frame, [str(c) for c in columns], specs, values=values, values_from_data=values_from_data, delta=budget.delta
    )
    given = {c: v for c, v in lists.items() if v is not None and c not in specs}
    plan = plan_synthesis(
        frame, columns, cuts=cuts, method=method, predict=predict, pairs=pairs, time_limit=time_limit, values=given
    )
    tell("checking the columns, cuts and budget", 0.02)
    spend = budget.epsilon if budget.pure else budget.rho
    if plan.method == "mst":
        measure = dp.max_divergence() if budget.pure else dp.zero_concentrated_divergence()
        spend = mst_budget(measure, spend, len(plan.columns), share=MST_FIXED_SHARE if plan.pairs else None)
    if before_measuring is not None:  # every input checked: the budget is spent from here on
        before_measuring(budget)
    use_jax_cache()
    data = _prepared(frame, plan.columns, specs)
    if person is not None:
        data[person] = _texts(frame[person])
    tell(f"measuring and fitting with OpenDP (about {plan.estimate:.0f} s)", 0.05)
    try:
        released = opendp_release(
            data, plan, lists, budget, spend, person=person, records_per_person=int(records_per_person)
        )
        estimate = float(released.model.total)
        wanted = int(rows) if rows is not None else int(min(max(round(ROWS_FACTOR * estimate), 1), MAX_ROWS))
        tell("drawing the synthetic records", 0.9)
        # "sample": records drawn one by one from the model. Never mbi 1.1.0's default "round" (docs/dp.md).
        drawn = released.synthesize(rows=wanted, method="sample").to_pandas()
        relabel = {c: dict(zip(released.keys[c].to_list(), spec.labels)) for c, spec in specs.items()}
        marginals = tuple(
            (tuple(clique), _marginal_frame(released, clique, relabel))
            for clique in [(c,) for c in plan.columns] + list(plan.pairs)
        )
        keys = {c: tuple(str(v) for v in released.keys[c].to_list() if v is not None) for c in plan.columns}
    except dp.OpenDPException as err:
        raise SynthesisError(
            f"OpenDP refused the release ({innermost_error(err)}); try a larger budget, fewer columns or the pairs method."
        ) from None
    except (ValueError, TypeError) as err:
        first = (str(err).strip().splitlines() or [type(err).__name__])[0][:200]
        raise SynthesisError(f"OpenDP could not make the release: {first}.") from None
    rng = _fresh_rng()
    table = pd.DataFrame(index=range(len(drawn)))
    for column in plan.columns:
        if column in specs:  # OpenDP's draw names the bin; the value is drawn inside the declared bin
            spec = specs[column]
            position = pd.to_numeric(drawn[column], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
            bins = np.searchsorted(np.asarray(bin_cuts(spec)), position, side="left")
            numbers = spec.draw(np.where(np.isnan(position), -1, bins), rng)
            table[column] = pd.array(numbers, dtype="Int64") if spec.whole else numbers
        else:
            table[column] = drawn[column].astype(object).where(drawn[column].notna(), None)
    tell("done", 1.0)
    return Synthesis(
        table=table,
        method=plan.method,
        budget=budget,
        columns=plan.columns,
        cuts=plan.cuts,
        pairs=plan.pairs,
        predict=plan.predict,
        rows=len(table),
        records_estimate=estimate,
        library=library_versions(),
        seconds=time.perf_counter() - start,
        estimate=plan.estimate,
        budget_spent=float(spend),
        marginals=marginals,
        categories={c: keys[c] for c in plan.columns if c not in specs},
        value_sources=sources,
        person=person,
        records_per_person=int(records_per_person) if person is not None else 1,
    )


def _marginal_frame(released, clique: Sequence[str], relabel: Mapping[str, Mapping] | None = None) -> pd.DataFrame:
    """A DP table of the fitted model (counts rounded to whole records, none below 0), a
    number column's bins named by their declared labels (``relabel``)."""
    melted = released.project_melted(list(clique)).to_pandas()
    for column, names in (relabel or {}).items():
        if column in melted.columns:
            melted[column] = melted[column].map(lambda v, names=names: names.get(v, v))
    melted["records"] = np.clip(np.rint(melted.pop("len").to_numpy(dtype=float)), 0, None).astype(np.int64)
    return melted


__all__ = [
    "DEFAULT_METHOD",
    "MAX_DELTA",
    "MAX_EPSILON",
    "MIN_EPSILON",
    "NUMBER_CATEGORIES",
    "INSTALL_SENTENCE",
    "METHODS",
    "Budget",
    "NumberCuts",
    "Synthesis",
    "SynthesisPlan",
    "default_number_cuts",
    "estimate_seconds",
    "jax_cache_folder",
    "opendp_release",
    "value_lists",
    "library_versions",
    "mst_budget",
    "needs_cuts",
    "opendp_version",
    "parse_cuts",
    "plan_synthesis",
    "privacy_budget",
    "require_opendp",
    "synthesize",
    "workload",
]
