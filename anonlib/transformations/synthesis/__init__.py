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
gives its ε at δ. What a release states is OpenDP's privacy map of its whole measurement
(``plan_budget``, ``stated_budget``): its context holds the whole loss as a privacy filter,
its one query spends it, and finding value lists spends a δ of its own; the map is
computed from the settings before any record is read and checked again on the context
that reads them (``opendp_release``).

Public inputs (nothing else read from the records reaches the release): each category
column's value list is given (``values=``), declared public by the user
(``values_from_data=True``: read from the file), or found privately by OpenDP (δ > 0: values
held by fewer records than its threshold fall into the missing value); otherwise the run
is refused in a sentence. Numbers (``NumberCuts``): a number column is cut at public cut
points inside public bounds, and its type (whole numbers or not) comes from them, never
from the values. Each value is put in its bin (clamped into the bounds, a change of each
record on its own) before OpenDP sees it, so OpenDP measures bins, whose labels are
public; a synthetic value is drawn uniformly inside its bin (post-processing). Cuts are
declared, or round cuts inside declared bounds (``cuts_within``): never read from the data.
The records outside the bounds are counted for the officer (``Synthesis.outside``).

Shape: the synthetic table has the DP count of the records (the model's total) unless
``rows`` is given; a missing value is written as the source writes it (``missing_texts``)
where a declared list holds one, and drawn again from the column's DP one-way table where
it does not (``_without_missing``); the DP tables shipped are the one-way tables and the
two-way tables of every pair measured (given, and chosen by OpenDP).

People (``person=``): with a person column, OpenDP's unit is the person
(``dp.unit_of(contributions=1, identifier=...)``) and it keeps at most
``records_per_person`` records of each (drawn at random, ``truncate_per_group``) before
measuring, so ε is per person. The number is declared, never guessed (``records_per_person_given``).

Three known problems of OpenDP 0.16 are worked around (docs/dp.md): records are drawn
with ``method="sample"``, never the default ``"round"`` (mbi 1.1.0 couples columns that
share a parent in the model); MST's budget, whose split can exceed the budget by a few
units in the last place, is replayed before the data are touched: lowered by a few units in
the last place, or one pair fewer chosen where no budget splits (``mst_split``); and AIM's
last round, given a remainder of rounding, is not made (``guard_aim_remainder``). Its searches of a
noise scale no longer spend a thousand evaluations bisecting toward 0 first (``budget._search_from_zero``).

There is no seed: OpenDP draws fresh noise on every run, by design, and numpy's global
random state (which OpenDP uses to draw the records) is never seeded here.

This package is the one place that talks to OpenDP: ``budget`` (loading OpenDP, the budget,
its conversions, what a release states, MST's split replayed), ``cuts`` (public cuts and
bounds), ``plan`` (the plan and the budget settled before the records), and here the value
lists and the release (``opendp_release``, the one call that reads the records).

Example (needs OpenDP; skipped without it):
    >>> import pandas as pd
    >>> b = privacy_budget(epsilon=1.0)
    >>> (b.epsilon, b.delta, b.rho, b.noise)
    (1.0, 0.0, 0.5, 'Laplace')
    >>> NumberCuts("age", (30, 50), 17, 90).labels
    ('17-30', '31-50', '51-90')
"""

from __future__ import annotations

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
    guard_aim_remainder,
    innermost_error,
    jax_cache_folder,
    key_delta_refusal,
    library_versions,
    mst_split,
    opendp_guarantee,
    opendp_loss,
    opendp_version,
    privacy_budget,
    query_loss,
    require_opendp,
    stated_budget,
    use_jax_cache,
)
from .cuts import NUMBER_CATEGORIES, NumberCuts, cuts_within, needs_cuts, parse_cuts
from .plan import (
    AIM_MAX_SIZE,
    AIM_ROUNDS_PER_COLUMN,
    DEFAULT_METHOD,
    DEFAULT_TIME_LIMIT,
    MAX_CATEGORIES,
    MAX_COLUMNS,
    MAX_PAIR_CELLS,
    MAX_RECORDS,
    MAX_RECORDS_PER_PERSON,
    MAX_ROWS,
    METHODS,
    MST_FIXED_SHARE,
    RARE_RECORDS,
    BudgetPlan,
    SynthesisPlan,
    estimate_seconds,
    plan_budget,
    plan_synthesis,
    undeclared_refusal,
    workload,
)

# --------------------------------------------------------------------------- the release


@dataclass(frozen=True)
class Synthesis:
    """A differentially private synthetic table and everything its release states.

    ``table``: the synthetic records (categories as text, a missing value written in the
    source's spelling where the declared lists hold one, else None; numbers drawn inside their
    bins). ``marginals``: the DP tables of the release as the fitted model gives them (every
    one-way table, and the two-way tables of every pair measured: those given and those OpenDP
    chose): (columns, frame with a ``records`` column), post-processing of the same release.
    ``records_estimate``: the DP estimate of the number of records (the model's total).
    ``budget``: what the release states (OpenDP's map of the whole measurement). ``outside``:
    per number column, the records outside its declared bounds (counted in the end bins), for
    the privacy officer only: read from the records, never in the package."""

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
    budget_spent: float  # the budget OpenDP's query was given (MST: a few units in the last place lower, see mst_split)
    marginals: tuple[tuple[tuple[str, ...], pd.DataFrame], ...] = field(default=(), repr=False)
    categories: Mapping[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    value_sources: Mapping[str, str] = field(default_factory=dict, repr=False)  # column -> VALUE_SOURCES key
    person: str | None = None  # the person column: the unit protected is the person
    records_per_person: int = 1
    chosen_pairs: tuple[tuple[str, str], ...] = ()  # the pairs OpenDP chose to measure (MST, AIM)
    selections: int | None = None  # MST's pairs chosen
    missing: Mapping[str, str] = field(default_factory=dict, repr=False)  # column -> how a missing value is written
    outside: Mapping[str, int] = field(default_factory=dict, repr=False)  # the officer's: records outside the bounds
    # the officer's: per column whose value list OpenDP found, the values of the records it left out (value, records)
    dropped: Mapping[str, tuple[tuple[str, int], ...]] = field(default_factory=dict, repr=False)
    thresholds: Mapping[str, int] = field(default_factory=dict, repr=False)  # OpenDP's threshold per found list

    @property
    def method_label(self) -> str:
        return METHODS[self.method]

    @property
    def unit(self) -> str:
        """The unit ε protects: "person" (with a person column) or "record"."""
        return "person" if self.person is not None else "record"

    @property
    def measured_pairs(self) -> tuple[tuple[str, str], ...]:
        """Every pair whose two-way table the release measured: given first, then chosen by OpenDP."""
        return self.pairs + tuple(p for p in self.chosen_pairs if p not in self.pairs and p[::-1] not in self.pairs)

    def sentence(self) -> str:
        return (
            f"{self.rows:,} synthetic records of {join_names(self.columns, limit=24)} by {self.method_label} "
            f"(OpenDP {self.library.get('opendp', '?')}), {self.budget.sentence()}; {self.seconds:.0f} s."
        )

    def outside_sentences(self) -> tuple[str, ...]:
        """For the officer: the records outside each number column's declared bounds, counted in its end bins."""
        by_column = {c.column: c for c in self.cuts}
        return tuple(
            f"{n:,} record{'s' if n != 1 else ''} of {column} lie outside its declared bounds "
            f"({by_column[column].lower:g} to {by_column[column].upper:g}) and are counted in its end bins."
            for column, n in self.outside.items()
            if n
        )

    def dropped_sentences(self) -> tuple[str, ...]:
        """For the officer: each category a value list found by OpenDP left out, with its records and
        the ε that would put OpenDP's threshold at them (the threshold scales as 1/ε at this δ)."""
        out = []
        epsilon = self.budget.epsilon
        for column, gone in self.dropped.items():
            threshold = self.thresholds.get(column)
            for value, records in gone:
                said = f"OpenDP's found value list of {column} drops {value} ({records:,} record{'s' if records != 1 else ''})"
                if threshold and records > 0:
                    need = epsilon * threshold / records
                    out.append(
                        f"{said}: values held by fewer records than its threshold of {threshold:,} at ε = {epsilon:g} "
                        f"are left out; about ε = {need:.3g} would bring the threshold down to {records:,} records "
                        f"(kept about half the time at that ε, surely above it), or declare the list with --values "
                        f"{column}=... to keep it at any ε."
                    )
                else:
                    out.append(
                        f"{said}: it fell below OpenDP's threshold at ε = {epsilon:g}; a larger ε lowers the threshold, "
                        f"or declare the list with --values {column}=... to keep it at any ε."
                    )
        return tuple(out)


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
        raise SynthesisError(undeclared_refusal(undeclared))
    return lists, sources


def rare_values(
    frame: pd.DataFrame, columns: Sequence[str], *, below: int = RARE_RECORDS
) -> dict[str, tuple[str, ...]]:
    """Per category column, the values held by fewer than ``below`` records, as OpenDP reads them:
    what declaring the file's value lists public (``values_from_data``) releases of few people,
    named so that the privacy officer confirms them (the page asks; the command line says so).
    Number columns (released in cuts) are left out.

    >>> rare_values(pd.DataFrame({"a": ["x"] * 25 + ["y"], "b": ["p"] * 26}), ["a", "b"])
    {'a': ('y',)}
    """
    out = {}
    for column in columns:
        if needs_cuts(frame[column]):
            continue
        counts = _texts(frame[column]).dropna().value_counts()
        rare = tuple(sorted(str(v) for v in counts.index[counts.to_numpy() < below]))
        if rare:
            out[str(column)] = rare
    return out


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
    numbers. A number column with a record without a number is refused (a sentence, without
    counting them: the count is read from the records)."""
    out = {}
    for column in columns:
        if column in cuts:
            bins = cuts[column].bins(frame[column])
            if (bins < 0).any():
                raise SynthesisError(
                    f"{column} has records without a number; release it without cuts (as categories), or drop the "
                    "records with missing values (Dataset page) first."
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


def _algorithm(dp, plan: SynthesisPlan, selections: int | None = None):
    if plan.method == "pairs":
        return dp.mbi.Fixed(queries=[dp.mbi.Count(p) for p in plan.pairs], oneway="all")
    if plan.method == "mst":
        mst = dp.mbi.MST() if selections in (None, len(plan.columns) - 1) else dp.mbi.MST(num_selections=selections)
        if not plan.pairs:
            return mst
        # the column to predict with every other first (and the listed pairs), then MST's tree, on a shared budget
        return dp.mbi.Sequential(
            algorithms=[dp.mbi.Fixed(queries=[dp.mbi.Count(p) for p in plan.pairs], oneway="all"), mst],
            weights=[MST_FIXED_SHARE, 1.0 - MST_FIXED_SHARE],
        )
    queries = [dp.mbi.Count(p) for p in plan.pairs] if plan.pairs else 2
    guard_aim_remainder()  # its last round's budget can be a remainder of rounding (``guard_aim_remainder``)
    return dp.mbi.AIM(queries=queries, rounds=AIM_ROUNDS_PER_COLUMN * len(plan.columns), max_size=AIM_MAX_SIZE)


def _fresh_rng() -> np.random.Generator:
    """Fresh entropy, no seed (as OpenDP's own draws): the draws of numbers inside their bins."""
    return np.random.default_rng()


def opendp_context(data: pd.DataFrame, budget: Budget, *, person: str | None = None):
    """OpenDP's context of a release over ``data`` (the prepared columns, with the person
    column when there is one): its unit (a record, or a person by ``person``) and the whole
    loss the release states (``opendp_loss``), held as a privacy filter that its one query
    spends. Returns the context and the unit's distance (OpenDP's ``d_in``)."""
    dp = require_opendp()
    import polars as pl

    if person is None:
        unit = dp.unit_of(contributions=1)
    else:
        unit = dp.unit_of(contributions=1, identifier=pl.col(person))
    context = dp.Context.compositor(
        data=pl.from_pandas(data).lazy(), privacy_unit=unit, privacy_loss=opendp_loss(dp, budget)
    )
    return context, unit[1]


def opendp_release(
    data: pd.DataFrame,
    plan: SynthesisPlan,
    keys: Mapping[str, Sequence[str] | None],
    budget: BudgetPlan,
    *,
    person: str | None = None,
    records_per_person: int = 1,
):
    """OpenDP's release: the contingency table it measures and fits on ``data`` (the
    prepared columns, with the person column when there is one). The one call that reads
    the records; everything the package holds comes from what it returns and the declared
    inputs. Its context's privacy map is checked against what the release states first."""
    dp = require_opendp()
    plan_cuts = {c.column: c for c in plan.cuts}
    context, d_in = opendp_context(data, budget.stated, person=person)
    mapped = opendp_guarantee(dp, context.accountant, d_in, budget.stated)
    if mapped != (budget.stated.epsilon, budget.stated.delta):  # one map, stated before and measured now
        raise SynthesisError(
            f"OpenDP's privacy map of this release is ε = {mapped[0]:.6g}, δ = {mapped[1]:g}, not the "
            f"{budget.stated.sentence()} stated; nothing was measured."
        )
    query = context.query(**query_loss(budget.stated, budget.spend))
    if person is not None:
        query = query.truncate_per_group(int(records_per_person))  # records beyond it dropped at random
    return (
        query.select(list(plan.columns))
        .contingency_table(
            keys={c: list(k) for c, k in keys.items() if k is not None and c not in plan_cuts},
            cuts={c: bin_cuts(spec) for c, spec in plan_cuts.items()},
            algorithm=_algorithm(dp, plan, budget.selections),
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
    records_per_person: int | None = None,
    missing_texts: Mapping[str, str] | None = None,
    time_limit: float = DEFAULT_TIME_LIMIT,
    progress: Callable[[str, float], None] | None = None,
    before_measuring: Callable[[Budget], None] | None = None,
) -> Synthesis:
    """A differentially private synthetic table of ``columns`` of ``frame`` (see the module text).

    ``cuts``: a ``NumberCuts`` for each number column. ``values`` / ``values_from_data``:
    the public value lists of category columns (``value_lists``). ``predict``: the column
    crossed with every other (the default MST adds those pairs; the ``pairs`` method
    measures only them); ``pairs``: more two-way tables (for AIM: its candidate tables).
    ``rows``: synthetic records (default the DP estimate of the records, the model's total).
    ``count``: a record-count column (each row stands for that many records). ``person``: the
    person column (the unit protected), each person's records cut to ``records_per_person`` at
    random by OpenDP (required with a person: how many records a person has by the file's
    design, never guessed). ``missing_texts``: how the source writes a missing value of each
    column (Adult's ``?``), used where the declared lists hold a missing value.
    ``progress(stage, share)`` is told each stage; ``before_measuring(budget)`` is called with
    the stated budget once every input is checked, before OpenDP reads the records (a
    project's budget is spent there). The budget is settled first, from the settings alone
    (``plan_budget``). Refusals are one ``SynthesisError`` sentence; without OpenDP,
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
    dp = require_opendp()
    if rows is not None and (isinstance(rows, bool) or int(rows) != rows or not 1 <= int(rows) <= MAX_ROWS):
        raise SynthesisError(f"The records to synthesize must be a whole number from 1 to {MAX_ROWS:,}; got {rows}.")
    if person is not None:
        if person not in frame.columns:
            raise ColumnError(f"The person column {person} is not in the data.")
        if person in columns:
            raise SynthesisError(f"The person column {person} marks people; it is never released.")
        records_per_person = records_per_person_given(records_per_person, person)
    columns = [str(c) for c in columns]
    specs = {c.column: c for c in cuts}
    budget = plan_budget(  # from the settings alone, before any record is read
        columns,
        epsilon=epsilon,
        delta=delta,
        rho=rho,
        method=method,
        cuts=list(specs),
        values=list(values or {}),
        values_from_data=values_from_data,
        predict=predict,
        pairs=pairs,
        person=person is not None,
    )
    if count is not None:
        from ...core.cells import record_weights

        weights = record_weights(frame, count)
        if float(np.sum(weights, dtype=np.float64)) > MAX_RECORDS:  # each record is a row OpenDP reads
            raise SynthesisError(
                f"The record-count column {count} stands for more than {MAX_RECORDS:,} records, more than a private "
                "release reads here; release a sample of the records, or the table without its count column."
            )
        frame = frame.iloc[np.repeat(np.arange(len(frame)), weights)].reset_index(drop=True)
    if len(frame) == 0:
        raise SynthesisError("The table holds no record to release.")
    lists, sources = value_lists(
        frame, columns, specs, values=values, values_from_data=values_from_data, delta=budget.asked.delta
    )
    given = {c: v for c, v in lists.items() if v is not None and c not in specs}
    plan = plan_synthesis(
        frame, columns, cuts=cuts, method=method, predict=predict, pairs=pairs, time_limit=time_limit, values=given
    )
    tell("checking the columns, cuts and budget", 0.02)
    # a missing value is written as the source writes it where the declared list holds one; nowhere else
    declared_missing = {
        c: (missing_texts or {}).get(c, "")
        for c in plan.columns
        if sources.get(c) == "declared" and bool(frame[c].isna().any())
    }
    outside = {c: spec.outside(frame[c]) for c, spec in specs.items()}
    if before_measuring is not None:  # every input checked: the budget is spent from here on
        before_measuring(budget.stated)
    use_jax_cache()
    data = _prepared(frame, plan.columns, specs)
    if person is not None:
        data[person] = _texts(frame[person])
    tell(f"measuring and fitting with OpenDP (about {plan.estimate:.0f} s)", 0.05)
    rng = _fresh_rng()
    try:
        released = opendp_release(
            data, plan, lists, budget, person=person, records_per_person=int(records_per_person or 1)
        )
        estimate = float(released.model.total)
        wanted = int(rows) if rows is not None else int(min(max(round(estimate), 1), MAX_ROWS))
        tell("drawing the synthetic records", 0.9)
        # "sample": records drawn one by one from the model. Never mbi 1.1.0's default "round" (docs/dp.md).
        drawn = released.synthesize(rows=wanted, method="sample").to_pandas()
        for column in plan.columns:  # no blank where a declared list has no missing value: from its DP one-way
            if sources.get(column) == "declared" and column not in declared_missing:
                drawn[column] = _without_missing(drawn[column], released, column, rng)
        relabel = {c: dict(zip(released.keys[c].to_list(), spec.labels)) for c, spec in specs.items()}
        chosen = _measured_pairs(released, plan.columns)
        measured = list(plan.pairs) + [p for p in chosen if p not in plan.pairs and p[::-1] not in plan.pairs]
        marginals = tuple(
            (tuple(clique), _marginal_frame(released, clique, relabel))
            for clique in [(c,) for c in plan.columns] + measured
        )
        keys = {c: tuple(str(v) for v in released.keys[c].to_list() if v is not None) for c in plan.columns}
        thresholds = {str(c): int(t) for c, t in (getattr(released, "thresholds", None) or {}).items()}
    except dp.OpenDPException as err:
        raise SynthesisError(
            f"OpenDP refused the release ({innermost_error(err)}); try a larger budget, fewer columns or the pairs method."
        ) from None
    except (ValueError, TypeError) as err:
        first = (str(err).strip().splitlines() or [type(err).__name__])[0][:200]
        raise SynthesisError(f"OpenDP could not make the release: {first}.") from None
    table = pd.DataFrame(index=range(len(drawn)))
    for column in plan.columns:
        if column in specs:  # OpenDP's draw names the bin; the value is drawn inside the declared bin
            spec = specs[column]
            position = pd.to_numeric(drawn[column], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
            bins = np.searchsorted(np.asarray(bin_cuts(spec)), position, side="left")
            numbers = spec.draw(np.where(np.isnan(position), -1, bins), rng)
            table[column] = pd.array(numbers, dtype="Int64") if spec.whole else numbers
        else:
            texts = drawn[column].astype(object).where(drawn[column].notna(), None)
            if column in declared_missing and declared_missing[column]:
                texts = texts.where(texts.notna(), declared_missing[column])
            table[column] = texts
    tell("done", 1.0)
    return Synthesis(
        table=table,
        method=plan.method,
        budget=budget.stated,
        columns=plan.columns,
        cuts=plan.cuts,
        pairs=plan.pairs,
        predict=plan.predict,
        rows=len(table),
        records_estimate=estimate,
        library=library_versions(),
        seconds=time.perf_counter() - start,
        estimate=plan.estimate,
        budget_spent=float(budget.spend),
        marginals=marginals,
        categories={c: keys[c] for c in plan.columns if c not in specs},
        value_sources=sources,
        person=person,
        records_per_person=int(records_per_person) if person is not None else 1,
        chosen_pairs=tuple(p for p in chosen if p not in plan.pairs and p[::-1] not in plan.pairs),
        selections=budget.selections,
        missing=declared_missing,
        outside=outside,
        dropped=_dropped(frame, plan.columns, sources, keys),
        thresholds={c: t for c, t in thresholds.items() if sources.get(c) == "found"},
    )


def _dropped(frame: pd.DataFrame, columns, sources: Mapping[str, str], keys) -> dict[str, tuple[tuple[str, int], ...]]:
    """The officer's: per column whose value list OpenDP found, the values of the records it left out."""
    out = {}
    for column in columns:
        if sources.get(column) != "found":
            continue
        counts = frame[column].value_counts(dropna=True)
        names = _texts(pd.Series(counts.index, dtype=object))
        kept = set(keys[column])
        gone = [
            (str(name), int(n)) for name, n in zip(names, counts.to_numpy()) if name is not None and name not in kept
        ]
        if gone:
            out[column] = tuple(sorted(gone, key=lambda item: (-item[1], item[0])))
    return out


def records_per_person_given(records_per_person: int | None, person: str) -> int:
    """The records kept per person, as declared: a whole number from 1 to ``MAX_RECORDS_PER_PERSON``,
    asked for when not given (never guessed: a default of 1 drops every person's other records).

    >>> records_per_person_given(8, "nr")
    8
    >>> records_per_person_given(None, "nr")
    Traceback (most recent call last):
    ...
    anonlib.core.errors.SynthesisError: Give the records kept per person of nr (--records-per-person N): how many records one person has at most by the file's design (8 for eight yearly waves); OpenDP keeps that many of each person's records, drawn at random, and leaves out any more.
    """
    if records_per_person is None:
        raise SynthesisError(
            f"Give the records kept per person of {person} (--records-per-person N): how many records one person "
            "has at most by the file's design (8 for eight yearly waves); OpenDP keeps that many of each person's "
            "records, drawn at random, and leaves out any more."
        )
    if (
        isinstance(records_per_person, bool)
        or int(records_per_person) != records_per_person
        or not 1 <= int(records_per_person) <= MAX_RECORDS_PER_PERSON
    ):
        raise SynthesisError(
            f"The records kept per person must be a whole number from 1 to {MAX_RECORDS_PER_PERSON:,}; "
            f"got {records_per_person}."
        )
    return int(records_per_person)


def _without_missing(values: pd.Series, released, column: str, rng: np.random.Generator) -> pd.Series:
    """A drawn column without missing values where the declared list holds none: each missing
    draw (OpenDP adds a missing value to every list, and its noise fills that empty cell) is
    drawn again from the column's DP one-way table without it (post-processing). A number
    column in cuts has no missing bin at all (OpenDP's bins of the cuts)."""
    missing = values.isna().to_numpy()
    if not missing.any():
        return values
    table = released.project_melted([column]).to_pandas()
    table = table[table[column].notna()]
    weights = np.clip(table["len"].to_numpy(dtype=float), 0, None)
    if not len(table) or weights.sum() <= 0:
        return values
    redrawn = rng.choice(table[column].to_numpy(dtype=object), size=int(missing.sum()), p=weights / weights.sum())
    out = values.astype(object).copy()
    out[missing] = redrawn
    return out.astype(values.dtype) if values.dtype != object else out


def _measured_pairs(released, columns: Sequence[str]) -> list[tuple[str, str]]:
    """The two-way tables the release measured (OpenDP's output: given, and chosen by MST or AIM), in column order."""
    marginals = getattr(released, "marginals", None)
    cliques = marginals.cliques() if marginals is not None and hasattr(marginals, "cliques") else []
    order = {c: i for i, c in enumerate(columns)}
    pairs = [tuple(sorted(map(str, c), key=order.get)) for c in cliques if len(c) == 2 and set(c) <= set(order)]
    return list(dict.fromkeys(pairs))


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
    "AIM_MAX_SIZE",
    "AIM_ROUNDS_PER_COLUMN",
    "DEFAULT_METHOD",
    "DEFAULT_TIME_LIMIT",
    "MAX_CATEGORIES",
    "MAX_COLUMNS",
    "MAX_PAIR_CELLS",
    "MAX_RECORDS",
    "MAX_RECORDS_PER_PERSON",
    "MAX_ROWS",
    "MST_FIXED_SHARE",
    "MAX_DELTA",
    "MAX_EPSILON",
    "MIN_EPSILON",
    "NUMBER_CATEGORIES",
    "INSTALL_SENTENCE",
    "METHODS",
    "RARE_RECORDS",
    "VALUE_SOURCES",
    "Budget",
    "BudgetPlan",
    "NumberCuts",
    "Synthesis",
    "SynthesisPlan",
    "cuts_within",
    "estimate_seconds",
    "jax_cache_folder",
    "key_delta_refusal",
    "opendp_context",
    "opendp_guarantee",
    "opendp_release",
    "value_lists",
    "library_versions",
    "guard_aim_remainder",
    "mst_split",
    "needs_cuts",
    "opendp_version",
    "parse_cuts",
    "plan_budget",
    "plan_synthesis",
    "privacy_budget",
    "rare_values",
    "records_per_person_given",
    "require_opendp",
    "stated_budget",
    "synthesize",
    "undeclared_refusal",
    "workload",
]
