"""A private release compared with the loaded file, as the k-anonymous release is.

``compare_private(real, synthetic, columns, ...)`` measures a differentially private
synthetic table (``anonlib.transformations.synthesis``) against the records it was
made from, with the Release view's own parts (``anonlib.workflow.release_view``):

- per column the distribution before and after (``column_view``) and a contingency
  table of a chosen pair (``contingency``), a number column with cuts counted in the
  release's bins;
- the total variation distance (half the sum of absolute differences of the shares)
  of every one-way and two-way marginal, numbers counted in the release's bins, each
  table counted by the equivalence kernel (``anonlib.core.equivalence``);
- the decision tree of the Release view (``anonlib.workflow.classifier``) trained on the
  release and tested on real records it was not trained on (train-on-synthetic,
  test-on-real), beside one trained on real records;
- two baselines computed in the same run (seeded): two halves of the real file
  (the distances sampling alone gives) and the columns drawn independently from it
  (the distances of a table without any joint information), the tree trained on each;
- the checks (``CHECKS``), judged on those numbers: one-way marginals within 0.01
  (or the halves' own distance when sampling alone gives more), the mean two-way within
  0.05 (likewise), the tree within 5 points of the one trained on real records (a cut
  column predicted as its bin). The checks are the privacy officer's: what ships was
  chosen before the run (``anonlib.workflow.private_package``) and never depends on them,
  and the comparison is never in the package (``--report FILE``, the Release view).

The real records are split in two halves (seeded): the tree trained on real records
learns on one half, and every tree is tested on the other; the halves baseline compares
the two. The numbers of the comparison are computed on the real records: they are
not covered by the release's privacy guarantee (docs/dp.md says so, and the package).

Example:
    >>> import pandas as pd
    >>> real = pd.DataFrame({"sex": list("FM") * 50, "y": list("ab") * 50})
    >>> c = compare_private(real, real.copy(), ["sex", "y"], predict="y", seed=0)
    >>> c.oneway_max, c.twoway_mean, c.tree.released.accuracy, c.passed
    (0.0, 0.0, 1.0, True)
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from ..core.cells import cell_texts
from ..core.dataset import Dataset
from ..core.equivalence import combine, encode
from ..core.errors import AnonlibError, SynthesisError, join_names
from ..core.structure import find_structure
from ..transformations.synthesis import (
    DEFAULT_METHOD,
    DEFAULT_TIME_LIMIT,
    Budget,
    NumberCuts,
    Synthesis,
    SynthesisPlan,
    plan_synthesis,
    synthesize,
)
from .classifier import MAX_ROWS, TrainTest, train_and_test
from .release_view import ColumnView, Contingency, column_view, contingency, default_pair

ONEWAY_TARGET = 0.01  # the largest one-way total variation of a table offered as a table
TWOWAY_TARGET = 0.05  # the largest mean two-way total variation
TREE_POINTS = 0.05  # the tree trained on the release at most this far below the one trained on real records
FAILED_SENTENCE = (
    "The synthetic table fails a check: the package is still what was chosen before the run, and another run "
    "would spend its whole budget again, so report the failure rather than choosing among runs by these numbers."
)
CHECKS = (
    f"one-way marginals within {ONEWAY_TARGET:g} total variation (or the two halves' own distance, when larger)",
    f"mean two-way total variation within {TWOWAY_TARGET:g} (or the two halves' own, when larger)",
    f"a decision tree trained on the release within {round(100 * TREE_POINTS)} points of one trained on real "
    "records, both tested on real records",
)


@dataclass(frozen=True)
class Marginal:
    """The total variation distance of one marginal (one or two columns) between the real
    records and the release, and for the two baselines."""

    columns: tuple[str, ...]
    release: float
    halves: float
    independent: float


@dataclass(frozen=True)
class TreeScores:
    """Trees predicting ``column``, each tested on the same real records (the held-out half)."""

    column: str
    features: tuple[str, ...]
    released: TrainTest
    real: TrainTest
    independent: TrainTest

    @property
    def gap(self) -> float:
        """Points (a share) the tree trained on the release is below the one trained on real records."""
        return self.real.accuracy - self.released.accuracy


@dataclass(frozen=True)
class Check:
    """One check of a synthetic table: what, the value measured, the limit, passed."""

    what: str
    value: float
    limit: float
    passed: bool
    points: bool = False  # a share shown in points (the tree's gap)

    def sentence(self) -> str:
        """The check in words.

        >>> Check("tree below the real one", 0.012, 0.05, True, points=True).sentence()
        'passed: tree below the real one: 1.2 points (limit 5.0).'
        """
        if self.points:
            return (
                f"{'passed' if self.passed else 'FAILED'}: {self.what}: {100 * self.value:.1f} points "
                f"(limit {100 * self.limit:.1f})."
            )
        return f"{'passed' if self.passed else 'FAILED'}: {self.what}: {self.value:.4f} (limit {self.limit:.4f})."


@dataclass(frozen=True)
class PrivateComparison:
    """Everything the private release is compared on (see the module text)."""

    columns: tuple[ColumnView, ...]
    pair: Contingency | None
    marginals: tuple[Marginal, ...]
    tree: TreeScores | None
    checks: tuple[Check, ...]
    real_records: int
    released_records: int
    seed: int
    problems: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        """Every check passed (a synthetic table is offered as a table only then)."""
        return all(c.passed for c in self.checks)

    def _of(self, width: int) -> list[Marginal]:
        return [m for m in self.marginals if len(m.columns) == width]

    @property
    def oneway_max(self) -> float:
        return max((m.release for m in self._of(1)), default=0.0)

    @property
    def twoway_mean(self) -> float:
        two = self._of(2)
        return float(np.mean([m.release for m in two])) if two else 0.0

    def baseline(self, which: str) -> tuple[float, float]:
        """(largest one-way, mean two-way) total variation of a baseline: ``halves`` or ``independent``."""
        one = [getattr(m, which) for m in self._of(1)]
        two = [getattr(m, which) for m in self._of(2)]
        return max(one, default=0.0), float(np.mean(two)) if two else 0.0

    def worst_pair(self) -> Marginal | None:
        return max(self._of(2), key=lambda m: m.release, default=None)

    def column(self, name: str) -> ColumnView:
        for view in self.columns:
            if view.column == name:
                return view
        raise SynthesisError(f"{name} is not a column of the private release.")

    def sentences(self) -> tuple[str, ...]:
        """The comparison in plain words."""
        halves, independent = self.baseline("halves"), self.baseline("independent")
        out = [
            f"Largest one-way total variation {self.oneway_max:.4f}; mean two-way {self.twoway_mean:.4f} "
            f"(two halves of the real file: {halves[0]:.4f} and {halves[1]:.4f}; columns drawn independently: "
            f"{independent[0]:.4f} and {independent[1]:.4f})."
        ]
        worst = self.worst_pair()
        if worst is not None:
            out.append(
                f"The pair furthest from the real records: {' × '.join(worst.columns)} ({worst.release:.4f}; "
                f"halves {worst.halves:.4f}, independent columns {worst.independent:.4f})."
            )
        if self.tree is not None:
            t = self.tree
            out.append(
                f"Predicting {t.column}, tested on {t.real.records_tested:,} real records: trained on the release "
                f"{100 * t.released.accuracy:.1f}% right, on real records {100 * t.real.accuracy:.1f}%, on columns "
                f"drawn independently {100 * t.independent.accuracy:.1f}%; always guessing the most common value "
                f"{100 * t.real.baseline:.1f}%."
            )
        out.extend(c.sentence() for c in self.checks)
        out.append(
            "The synthetic table passes its checks." if self.passed else FAILED_SENTENCE,
        )
        return tuple(out) + self.problems

    def to_json(self) -> dict[str, Any]:
        """Plain JSON values (NaN as null), with the summary numbers first.

        >>> real = pd.DataFrame({"a": list("xy") * 10, "b": list("pq") * 10})
        >>> data = compare_private(real, real, ["a", "b"], predict="b").to_json()
        >>> data["passed"], data["oneway_max"], data["marginals"][0]["columns"]
        (True, 0.0, ['a'])
        """
        halves, independent = self.baseline("halves"), self.baseline("independent")
        summary = {
            "passed": self.passed,
            "oneway_max": self.oneway_max,
            "twoway_mean": self.twoway_mean,
            "halves": {"oneway_max": halves[0], "twoway_mean": halves[1]},
            "independent": {"oneway_max": independent[0], "twoway_mean": independent[1]},
            "tree_gap": None if self.tree is None else self.tree.gap,
        }
        return _plain({**summary, **asdict(self)})


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if not math.isfinite(float(value)) else float(value)
    return value


# --------------------------------------------------------------------------- marginals


def shown_cells(frame: pd.DataFrame, columns: Sequence[str], cuts: Sequence[NumberCuts] = ()) -> pd.DataFrame:
    """Cells as the marginals count them: a number column with cuts by its bin label,
    any other column as the reader sees it (``cell_texts``: ``(blank)`` for missing).

    >>> shown_cells(pd.DataFrame({"age": [18, 45, 80], "s": ["F", None, "M"]}), ["age", "s"],
    ...             [NumberCuts("age", (30, 50), 17, 90)]).values.tolist()
    [['17-30', 'F'], ['31-50', '(blank)'], ['51-90', 'M']]
    """
    by_column = {c.column: c for c in cuts}
    out = {}
    for column in columns:
        if column in by_column:
            spec = by_column[column]
            bins = spec.bins(frame[column])
            labels = np.asarray((*spec.labels, "(blank)"), dtype=object)
            out[column] = labels[np.where(bins < 0, len(spec.labels), bins)]
        else:
            out[column] = cell_texts(frame[column]).to_numpy(dtype=object)
    return pd.DataFrame(out, index=frame.index)


def total_variations(
    a: pd.DataFrame, b: pd.DataFrame, marginals: Sequence[Sequence[str]]
) -> dict[tuple[str, ...], float]:
    """Total variation distance between the shares of ``a``'s and ``b``'s records in each
    marginal (cells already shown, ``shown_cells``); both tables encoded once together by
    the equivalence kernel.

    >>> a = pd.DataFrame({"x": list("aabb")}); b = pd.DataFrame({"x": list("abbb")})
    >>> total_variations(a, b, [("x",)])
    {('x',): 0.25}
    """
    columns = list(dict.fromkeys(c for m in marginals for c in m))
    both = encode(pd.concat([a[columns], b[columns]], ignore_index=True), columns)
    n_a, n_b = len(a), len(b)
    out = {}
    for marginal in marginals:
        positions = [both.position(c) for c in marginal]
        ids, n = combine(
            [both.codes[:, p] for p in positions], [both.cardinalities[p] for p in positions], len(both.codes)
        )
        share_a = np.bincount(ids[:n_a], minlength=n) / max(n_a, 1)
        share_b = np.bincount(ids[n_a:], minlength=n) / max(n_b, 1)
        out[tuple(marginal)] = float(0.5 * np.abs(share_a - share_b).sum())
    return out


def independent_columns(frame: pd.DataFrame, rows: int, seed: int) -> pd.DataFrame:
    """Each column drawn on its own (with replacement, seeded) from ``frame``: a table with
    every one-way distribution and no joint information.

    >>> t = independent_columns(pd.DataFrame({"a": [1, 2], "b": [3, 4]}), 5, seed=0)
    >>> t.shape, set(t["a"]) <= {1, 2}
    ((5, 2), True)
    """
    rng = np.random.default_rng(seed)
    return pd.DataFrame({c: frame[c].to_numpy()[rng.integers(0, len(frame), rows)] for c in frame.columns}).astype(
        frame.dtypes.to_dict()
    )


# --------------------------------------------------------------------------- the comparison


def compare_private(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    columns: Sequence[str],
    *,
    cuts: Sequence[NumberCuts] = (),
    predict: str | None = None,
    pair: Sequence[str] | None = None,
    count: str | None = None,
    test: pd.DataFrame | None = None,
    seed: int = 0,
    max_rows: int = MAX_ROWS,
) -> PrivateComparison:
    """Compare a synthetic table with the ``real`` records it was made from (see the module
    text). ``predict``: the tree's column (None: no tree); ``pair``: the contingency table
    (default the first column with ``predict``); ``count``: ``real``'s record-count column;
    ``test``: real records kept out of the synthesis to test the trees on (default: the
    trees are tested on a seeded half of ``real``, the real tree trained on the other);
    ``seed``: the halves, the independent draw and the trees."""
    columns = [str(c) for c in columns]
    missing = [c for c in columns if c not in real.columns or c not in synthetic.columns]
    if missing:
        raise SynthesisError(f"{join_names(missing)} is not in both tables; compare the columns released.")
    if count is not None:
        from ..core.cells import record_weights

        real = real.iloc[np.repeat(np.arange(len(real)), record_weights(real, count))]
    real = real[columns].reset_index(drop=True)
    synthetic = synthetic[columns].reset_index(drop=True)
    if len(real) < 4 or len(synthetic) == 0:
        raise SynthesisError("The comparison needs at least four real records and one synthetic record.")
    order = np.random.default_rng(seed).permutation(len(real))
    half_a, half_b = real.iloc[np.sort(order[: len(real) // 2])], real.iloc[np.sort(order[len(real) // 2 :])]
    drawn = independent_columns(real, len(real), seed + 1)

    shown = {name: shown_cells(t, columns, cuts) for name, t in (("real", real), ("synthetic", synthetic))}
    marginals = [(c,) for c in columns] + list(itertools.combinations(columns, 2))
    release = total_variations(shown["real"], shown["synthetic"], marginals)
    halves = total_variations(shown_cells(half_a, columns, cuts), shown_cells(half_b, columns, cuts), marginals)
    independent = total_variations(shown["real"], shown_cells(drawn, columns, cuts), marginals)
    table = tuple(Marginal(m, release[m], halves[m], independent[m]) for m in marginals)

    # distributions and the contingency table read a number column in the release's bins, as the marginals do
    binned = [c.column for c in cuts if c.column in columns]
    real_cells = real.assign(**{c: shown["real"][c] for c in binned})
    synthetic_cells = synthetic.assign(**{c: shown["synthetic"][c] for c in binned})
    w_real, w_synth = np.ones(len(real), dtype=np.int64), np.ones(len(synthetic), dtype=np.int64)
    views = {
        c: column_view(
            c, "sensitive attribute" if c == predict else "column", real_cells[c], synthetic_cells[c], w_real, w_synth
        )
        for c in columns
    }
    problems: list[str] = []
    chosen = tuple(pair) if pair is not None else (default_pair(columns, [predict] if predict else []) or None)
    shown_pair = None
    if chosen is not None:
        if len(chosen) != 2 or chosen[0] == chosen[1] or any(c not in columns for c in chosen):
            problems.append(f"The contingency table needs two different columns of the release; got {chosen}.")
        else:
            shown_pair = contingency(chosen, real_cells, synthetic_cells, views, w_real, w_synth)

    tree = None
    if predict is not None:
        features = [c for c in columns if c != predict]
        tested = test[columns].reset_index(drop=True) if test is not None else half_b
        trained_real = real if test is not None else half_a
        if predict in binned:  # a cut column is predicted as its bin, as the release measures it
            spec = [c for c in cuts if c.column == predict]
            synthetic, tested, trained_real = (
                t.assign(**{predict: shown_cells(t, [predict], spec)[predict].to_numpy()})
                for t in (synthetic, tested, trained_real)
            )
        try:
            tree = TreeScores(
                predict,
                tuple(features),
                train_and_test(
                    synthetic, tested, features, predict, trained_on="release", seed=seed, max_rows=max_rows
                ),
                train_and_test(
                    trained_real, tested, features, predict, trained_on="real records", seed=seed, max_rows=max_rows
                ),
                train_and_test(
                    independent_columns(trained_real, len(trained_real), seed + 2),
                    tested,
                    features,
                    predict,
                    trained_on="columns drawn independently",
                    seed=seed,
                    max_rows=max_rows,
                ),
            )
        except AnonlibError as err:
            problems.append(str(err))

    comparison = PrivateComparison(
        tuple(views[c] for c in columns), shown_pair, table, tree, (), len(real), len(synthetic), seed, tuple(problems)
    )
    return _judged(comparison)


def _judged(c: PrivateComparison) -> PrivateComparison:
    """The comparison with its checks (``CHECKS``)."""
    halves_one, halves_two = c.baseline("halves")
    one_limit, two_limit = max(ONEWAY_TARGET, halves_one), max(TWOWAY_TARGET, halves_two)
    checks = [
        Check("largest one-way total variation", c.oneway_max, one_limit, c.oneway_max <= one_limit),
        Check("mean two-way total variation", c.twoway_mean, two_limit, c.twoway_mean <= two_limit),
    ]
    if c.tree is not None and math.isfinite(c.tree.gap):
        checks.append(
            Check(
                f"the tree predicting {c.tree.column} trained on the release, below the one trained on real records",
                c.tree.gap,
                TREE_POINTS,
                c.tree.gap <= TREE_POINTS,
                points=True,
            )
        )
    return PrivateComparison(**{**c.__dict__, "checks": tuple(checks)})


# --------------------------------------------------------------------------- a release of a dataset


@dataclass(frozen=True)
class PrivateRelease:
    """A private release of a dataset: the synthesis, its comparison with the records, and the file's name."""

    synthesis: Synthesis
    comparison: PrivateComparison
    source_name: str

    def sentence(self) -> str:
        return self.synthesis.sentence()


def default_private_predict(columns: Sequence[str], sensitive: Sequence[str]) -> str | None:
    """The column crossed with every other and the tree predicts: the first sensitive
    attribute among ``columns``, else none (no column is singled out).

    >>> default_private_predict(["age", "dx", "sex"], ["dx"]), default_private_predict(["a", "b"], [])
    ('dx', None)
    """
    chosen = [c for c in columns if c in sensitive]
    return chosen[0] if chosen else None


ID_WORDS = re.compile(
    r"(^|[^a-z])(id|pid|ids|person|patient|subject|participant|respondent|member|mrn|nhs|ssn)([^a-z]|$)"
)


def several_records_per_person(frame: pd.DataFrame, skip: Sequence[str] = ()) -> str | None:
    """A warning, in one sentence, when the file looks like several records per person and
    the release is per record: a column found to be the person by the file's structure (a
    time varying within its values, ``anonlib.core.structure``), else named like an
    identifier with repeated values; it names the column and how many records the person
    with the most has (what ε then means for them). None otherwise. For the privacy officer
    (it reads the records), never in a package. ``skip``: columns not considered.

    >>> f = pd.DataFrame({"nr": np.repeat(np.arange(10), 3), "year": [1980, 1981, 1982] * 10, "sex": [0] * 15 + [1] * 15})
    >>> several_records_per_person(f).split(":")[0]
    'nr looks like a person column (year varies within its values)'
    >>> several_records_per_person(f.drop(columns="nr")) is None
    True
    >>> several_records_per_person(pd.DataFrame({"member": ["yes", "no"] * 50})) is None  # a category, not people
    True
    """
    found = find_structure(frame, exclude=skip).person
    if found is not None:
        column, most = found.column, found.most_records
        why = f"{found.time} varies within its values"
    else:
        column, most, why = _person_by_name(frame, skip)
        if column is None:
            return None
    return (
        f"{column} looks like a person column ({why}): this release is per record, so ε protects one record, "
        f"not a person with up to {most:,} records (about {most:,}ε for them, and δ grows faster); give --person "
        f"{column} (the person role) to protect the person."
    )


def _person_by_name(frame: pd.DataFrame, skip: Sequence[str]) -> tuple[str | None, int, str]:
    """A column named like an identifier whose values mostly hold several records, the most
    records one value holds, and why."""
    for column in frame.columns:
        name = str(column).lower()
        if column in skip or not ID_WORDS.search(name.replace("-", "_").replace(" ", "_")):
            continue
        counts = frame[column].dropna().value_counts()
        many = len(counts) >= max(10, len(frame) // 100)  # values of people, not a handful of categories
        if many and len(counts) < len(frame) and float(counts.median()) >= 2:
            return str(column), int(counts.max()), "its name reads like an identifier and most values repeat"
    return None, 0, ""


def released_frame(dataset: Dataset, columns: Sequence[str]) -> pd.DataFrame:
    """The records a private release of ``columns`` is made from: the loaded file (never a
    generalized copy: the noise protects it), less the records missing one of the columns
    when the dataset's missing-value policy is "drop". Identifiers are refused; the person
    column (the dataset's person role) is never released, only used to bound each person's
    records.

    >>> d = Dataset.from_frame("f.csv", pd.DataFrame({"a": ["x", None, "y"], "b": [1, 2, 3]}), missing="drop")
    >>> len(released_frame(d, ["a", "b"]))
    2
    """
    if dataset.person is not None and dataset.person in columns:
        raise SynthesisError(f"The person column {dataset.person} marks people; it is never released.")
    identifiers = [c for c in columns if c in dataset.identifiers]
    if identifiers:
        raise SynthesisError(
            f"{join_names(identifiers)} is an identifier, never released; choose other columns for the private release."
        )
    frame = dataset.frame
    if dataset.missing == "drop":
        present = [c for c in columns if c in frame.columns]
        frame = frame[frame[present].notna().all(axis=1).to_numpy()]
    return frame


def plan_private(
    dataset: Dataset,
    columns: Sequence[str],
    *,
    method: str = DEFAULT_METHOD,
    cuts: Sequence[NumberCuts] = (),
    predict: str | None = None,
    pairs: Sequence[Sequence[str]] = (),
    time_limit: float = DEFAULT_TIME_LIMIT,
    values: Mapping[str, Sequence[str]] | None = None,
) -> SynthesisPlan:
    """The plan of ``private_release`` with the same arguments, checked before any noise:
    its estimated time, or the sentence that refuses it (see ``plan_synthesis``).

    >>> d = Dataset.from_frame("f.csv", pd.DataFrame({"sex": list("FM") * 5, "dx": list("aab") * 3 + ["c"]}))
    >>> plan_private(d, ["sex", "dx"]).pairs, plan_private(d, ["sex", "dx"], predict="dx").pairs
    ((), (('sex', 'dx'),))
    """
    columns = [str(c) for c in columns]
    frame = released_frame(dataset, columns)
    if dataset.count is not None:
        from ..core.cells import record_weights

        # the plan reads which values occur, never how often: the rows a record count keeps, not expanded
        frame = frame[np.asarray(record_weights(frame, dataset.count)) > 0]
    if predict is None:
        predict = default_private_predict(columns, dataset.sensitive)
    return plan_synthesis(
        frame, columns, cuts=cuts, method=method, predict=predict, pairs=pairs, time_limit=time_limit, values=values
    )


def private_release(
    dataset: Dataset,
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
    pair: Sequence[str] | None = None,
    values: Mapping[str, Sequence[str]] | None = None,
    values_from_data: bool = False,
    person: str | None = None,
    records_per_person: int | None = None,
    time_limit: float = DEFAULT_TIME_LIMIT,
    progress: Callable[[str, float], None] | None = None,
    before_measuring: Callable[[Budget], None] | None = None,
) -> PrivateRelease:
    """A differentially private synthetic table of ``dataset``'s ``columns``, made from
    ``released_frame`` (the loaded file), compared with its records as the file writes them
    (a missing value in the file's own spelling where the release writes it so). ``person``:
    the person column (default the dataset's person role), with ``records_per_person``
    declared. ``before_measuring(budget)`` is called with the stated budget once every input
    is checked and before OpenDP reads the records (the file's budget is spent there). The
    records outside a number column's declared bounds are counted among the comparison's
    sentences (the officer's). See ``anonlib.transformations.synthesis.synthesize`` for the others."""
    columns = [str(c) for c in columns]
    frame = released_frame(dataset, columns)
    if predict is None:
        predict = default_private_predict(columns, dataset.sensitive)
    tell = progress or (lambda stage, share: None)
    person = person if person is not None else dataset.person

    synthesis = synthesize(
        frame,
        columns,
        epsilon=epsilon,
        delta=delta,
        rho=rho,
        method=method,
        cuts=cuts,
        predict=predict,
        pairs=pairs,
        rows=rows,
        count=dataset.count,
        values=values,
        values_from_data=values_from_data,
        person=person,
        records_per_person=records_per_person,
        missing_texts=dataset.missing_texts,
        time_limit=time_limit,
        progress=lambda stage, share: tell(stage, 0.9 * share) if share < 1 else None,
        before_measuring=before_measuring,
    )
    tell("comparing the release with the records", 0.92)
    written = {c: text for c, text in synthesis.missing.items() if text}  # the records as the file writes them
    real = frame.assign(**{c: frame[c].astype(object).where(frame[c].notna(), t) for c, t in written.items()})
    comparison = compare_private(
        real, synthesis.table, columns, cuts=synthesis.cuts, predict=predict, pair=pair, count=dataset.count
    )
    comparison = replace(
        comparison, problems=comparison.problems + synthesis.outside_sentences() + synthesis.dropped_sentences()
    )
    tell("done", 1.0)
    return PrivateRelease(synthesis, comparison, str(dataset.name))


__all__ = [
    "CHECKS",
    "FAILED_SENTENCE",
    "Check",
    "Marginal",
    "PrivateComparison",
    "PrivateRelease",
    "TreeScores",
    "compare_private",
    "default_private_predict",
    "private_release",
    "independent_columns",
    "plan_private",
    "released_frame",
    "several_records_per_person",
    "shown_cells",
    "total_variations",
]
