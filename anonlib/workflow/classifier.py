"""The Release view's classifier: how well a decision tree still predicts a column.

Two ways of asking it, one pipeline (``classifier_pipeline``: one-hot encoded
categories and numbers into a seeded decision tree of depth ``TREE_DEPTH``):

- ``ClassifierComparison`` (``anonlib.workflow.release_view``): trained and
  cross-validated (stratified ``FOLDS``-fold, seeded) on the released table and on
  the loaded file, each beside always guessing the most common value; its time
  bounded by a pilot estimate (``_estimate``) and rows subsampled past it;
- ``TrainTest`` (``train_and_test``; ``anonlib.workflow.private_release``): trained on
  one table and tested on records of another, the way a synthetic table is judged
  (trained on the release, tested on real records).

Example:
    >>> import pandas as pd
    >>> train = pd.DataFrame({"a": list("xy") * 20, "y": list("pq") * 20})
    >>> result = train_and_test(train, train, ["a"], "y", trained_on="release", seed=0)
    >>> result.accuracy, result.baseline, result.records_trained
    (1.0, 0.5, 40)
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.cells import cell_texts, holds_numbers, numbers_in
from ..core.default_hierarchy import is_code_name
from ..core.errors import ParameterError, join_names
from ..core.numbers import percent

FOLDS = 5
TREE_DEPTH = 8
PILOT_ROWS = 2_000  # rows timed to estimate the classifier's run
MIN_ROWS = 200  # a subsample never goes below this
MAX_ROWS = 50_000  # records a table is cross-validated on at most (a seeded subsample past it, said)
# ``comparison_seconds``: calibrated on this machine class (Adult resampled; 2,000, 2 x 10^4 and 10^5
# records per table, each cut to MAX_ROWS; 9 features: 0.23 s, 1.3 s, 3.2 s; 4 features take 65-80% of that)
SECONDS_FIXED = 0.1  # the pilot fits and scikit-learn's set-up
SECONDS_PER_ROW = 1.45e-5  # per row cross-validated, both tables, whatever the features
SECONDS_PER_CELL = 1.9e-6  # and per row and feature


@dataclass(frozen=True)
class Accuracy:
    """Cross-validated accuracy of one model on one table (``folds``: each fold's share right)."""

    trained_on: str
    records: int  # records the model was cross-validated on (after any subsample)
    classes: int
    mean: float
    sd: float
    folds: tuple[float, ...]
    baseline: float  # always guessing the most common value, cross-validated the same way


@dataclass(frozen=True)
class ClassifierComparison:
    """The classifier trained on the released table against trained on the loaded file."""

    column: str
    features: tuple[str, ...]
    model: str
    released: Accuracy
    original: Accuracy
    seconds: float
    time_limit: float
    subsampled: bool
    records_released: int  # records available before any subsample
    records_original: int
    seed: int
    max_rows: int = 0  # the most records a table is cross-validated on (subsampled past it)
    timed_out: bool = False  # the subsample was cut further to stay within ``time_limit``

    def sentence(self, timed: bool = True) -> str:
        """The comparison in one sentence (``timed``: with the seconds it took; a release
        package's report leaves them out so that it is the same bytes when built again)."""
        r, o = self.released, self.original
        text = (
            f"Predicting {self.column} from {join_names(self.features)}: trained on the release "
            f"{percent(r.mean)} ± {percent(r.sd)} right, on the loaded file {percent(o.mean)} ± {percent(o.sd)}; "
            f"always guessing the most common value {percent(r.baseline)} (release) and {percent(o.baseline)} "
            f"(loaded file)."
        )
        if self.subsampled:
            text += (
                f" Rows were subsampled to {r.records:,} of {self.records_released:,} released and "
                f"{o.records:,} of {self.records_original:,} loaded records (seed {self.seed}) "
                + (
                    f"to stay within {self.time_limit:g} s."
                    if self.timed_out
                    else f"to at most {self.max_rows:,} rows per table."
                )
            )
        return text + (f" Took {self.seconds:.1f} s." if timed else "")


def _expanded(frame: pd.DataFrame, weights: np.ndarray) -> pd.DataFrame:
    """One row per record (a row with count 3 three times)."""
    if (weights == 1).all():
        return frame.reset_index(drop=True)
    return frame.iloc[np.repeat(np.arange(len(frame)), weights)].reset_index(drop=True)


def model_inputs(
    frame: pd.DataFrame, features: Sequence[str], column: str
) -> tuple[pd.DataFrame, np.ndarray, list[str], list[str]]:
    """Features and labels as the classifier reads them: number columns (``holds_numbers``,
    ``*`` and blank as missing) as numbers, other columns and codes such as ZIP
    (``is_code_name``) as text (``(blank)`` a value);
    the labels are the shown values of ``column``.

    >>> X, y, numbers, texts = model_inputs(pd.DataFrame({"a": [1, "*", 3], "b": ["x", None, "y"],
    ...                                                    "c": ["p", "q", "p"]}), ["a", "b"], "c")
    >>> X["a"].tolist(), X["b"].tolist(), list(y), numbers, texts
    ([1.0, nan, 3.0], ['x', '(blank)', 'y'], ['p', 'q', 'p'], ['a'], ['b'])
    """
    X = pd.DataFrame(index=frame.index)
    numbers, texts = [], []
    for feature in features:
        series = frame[feature]
        if holds_numbers(series) and not is_code_name(feature):
            X[feature] = numbers_in(series)[0]
            numbers.append(feature)
        else:
            X[feature] = cell_texts(series)
            texts.append(feature)
    return X, cell_texts(frame[column]).to_numpy(dtype=object), numbers, texts


def classifier_pipeline(numbers: Sequence[str], texts: Sequence[str], seed: int):
    """One-hot encoded text columns and numbers (a missing number as the median) into a
    decision tree of depth ``TREE_DEPTH``, seeded."""
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder
    from sklearn.tree import DecisionTreeClassifier

    parts = []
    if texts:
        parts.append(("text", OneHotEncoder(handle_unknown="ignore"), list(texts)))
    if numbers:
        parts.append(("numbers", SimpleImputer(strategy="median", keep_empty_features=True), list(numbers)))
    return make_pipeline(ColumnTransformer(parts), DecisionTreeClassifier(max_depth=TREE_DEPTH, random_state=seed))


def cross_validated(
    X: pd.DataFrame, y: np.ndarray, numbers: Sequence[str], texts: Sequence[str], seed: int, trained_on: str
) -> Accuracy:
    """Stratified 5-fold accuracy (shuffled, seeded) of the pipeline and of always guessing the most common value."""
    from sklearn.dummy import DummyClassifier
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    folds = StratifiedKFold(n_splits=FOLDS, shuffle=True, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a class with fewer records than folds: stratified as far as it goes
        scores = cross_val_score(classifier_pipeline(numbers, texts, seed), X, y, cv=folds)
        baseline = cross_val_score(DummyClassifier(strategy="most_frequent"), X, y, cv=folds)
    return Accuracy(
        trained_on,
        len(y),
        len(set(y.tolist())),
        float(scores.mean()),
        float(scores.std()),
        tuple(float(s) for s in scores),
        float(baseline.mean()),
    )


def _usable(y: np.ndarray, column: str, where: str) -> None:
    values, counts = np.unique(y.astype(str), return_counts=True)
    if len(values) < 2:
        one = values[0] if len(values) else "none"
        raise ParameterError(
            f"{column} has one value in {where} ({one}): there is nothing for a classifier to "
            "predict; choose another column."
        )
    if len(y) < 2 * FOLDS or counts.max() < FOLDS:
        raise ParameterError(
            f"{where.capitalize()} has too few records to cross-validate a classifier predicting "
            f"{column} ({len(y):,} records; at least {2 * FOLDS} and a value held by {FOLDS})."
        )


def _estimate(
    X: pd.DataFrame, y: np.ndarray, numbers: Sequence[str], texts: Sequence[str], seed: int, sizes: Sequence[int]
) -> float:
    """Seconds the comparison is expected to take on tables of ``sizes`` records: after an
    untimed warm-up fit, two timed fits (a quarter of ``PILOT_ROWS`` and ``PILOT_ROWS`` rows)
    give a fixed and a per-row cost;
    each table costs ``FOLDS`` fits on 4/5 of its rows, with half as much again for the
    predictions and the baseline."""
    rng = np.random.default_rng(seed)
    times, counts = [], []
    small = min(len(y), PILOT_ROWS // 4)
    # an untimed warm-up first: the first fit of a process pays scikit-learn's imports and caches
    for n, timed in ((small, False), (small, True), (min(len(y), PILOT_ROWS), True)):
        rows = np.sort(rng.choice(len(y), n, replace=False))
        tick = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            classifier_pipeline(numbers, texts, seed).fit(X.iloc[rows], y[rows])
        if timed and n not in counts:
            times.append(time.perf_counter() - tick)
            counts.append(n)
    slope = max((times[-1] - times[0]) / (counts[-1] - counts[0]), 0.0) if len(times) > 1 else times[0] / counts[0]
    fixed = max(times[0] - slope * counts[0], 0.0)
    return 1.5 * sum(FOLDS * (fixed + slope * 0.8 * n) for n in sizes)


def comparison_seconds(
    records_original: int, records_released: int, features: int, time_limit: float = 20.0, max_rows: int = MAX_ROWS
) -> float:
    """About how many seconds ``compare_classifiers`` takes on tables of these many records with
    ``features`` columns to predict from (each table cut to ``max_rows``; never much more than
    ``time_limit``, which the comparison keeps to by subsampling), so a page can say it before.

    >>> round(comparison_seconds(2_000, 2_000, 4), 2), round(comparison_seconds(10**5, 10**5, 9), 1)
    (0.19, 3.3)
    >>> comparison_seconds(10**7, 10**7, 200, time_limit=20.0)
    20.0
    """
    rows = min(int(records_original), max_rows) + min(int(records_released), max_rows)
    per_row = SECONDS_PER_ROW + SECONDS_PER_CELL * max(int(features), 1)
    return min(SECONDS_FIXED + per_row * rows, float(time_limit))


def compare_classifiers(
    column: str,
    features: list[str],
    before: pd.DataFrame,
    after: pd.DataFrame,
    w_before: np.ndarray,
    w_after: np.ndarray,
    seed: int,
    time_limit: float,
    max_rows: int,
) -> ClassifierComparison:
    """A tree predicting ``column`` from ``features``, cross-validated on the loaded file
    (``before``, records weighted by ``w_before``) and on the release (``after``), each
    subsampled to ``max_rows`` rows and further to stay within ``time_limit`` seconds.

    >>> before = pd.DataFrame({"age": [30, 40, 50, 60] * 10, "ill": ["no", "no", "yes", "yes"] * 10})
    >>> after = before.assign(age=np.where(before["age"] < 45, "30-44", "45-60"))  # the bands keep the answer
    >>> ones = np.ones(len(before))
    >>> c = compare_classifiers("ill", ["age"], before, after, ones, ones, 0, 60.0, MAX_ROWS)
    >>> c.original.mean, c.released.mean, c.released.baseline
    (1.0, 1.0, 0.5)
    """
    start = time.perf_counter()
    original = _expanded(before[features + [column]], w_before)
    released = _expanded(after[features + [column]], w_after)
    Xo, yo, no, to = model_inputs(original, features, column)
    Xr, yr, nr, tr = model_inputs(released, features, column)
    _usable(yr, column, "the release")
    _usable(yo, column, "the loaded file")

    def cut(X, y, n):  # the same seed for both tables: equal tables keep the same rows
        if n >= len(y):
            return X, y
        keep = np.sort(np.random.default_rng(seed).choice(len(y), n, replace=False))
        return X.iloc[keep].reset_index(drop=True), y[keep]

    subsampled = max(len(yo), len(yr)) > max_rows
    Xo, yo = cut(Xo, yo, max_rows)
    Xr, yr = cut(Xr, yr, max_rows)
    estimate = _estimate(Xo, yo, no, to, seed, [len(yr), len(yo)])
    timed_out = estimate > time_limit
    if timed_out:
        share = max(time_limit - (time.perf_counter() - start), 0.0) / estimate
        Xo, yo = cut(Xo, yo, max(MIN_ROWS, int(len(yo) * share)))
        Xr, yr = cut(Xr, yr, max(MIN_ROWS, int(len(yr) * share)))
    if subsampled or timed_out:
        _usable(yr, column, "the subsample of the release")
        _usable(yo, column, "the subsample of the loaded file")
    acc_released = cross_validated(Xr, yr, nr, tr, seed, "release")
    acc_original = cross_validated(Xo, yo, no, to, seed, "loaded file")
    return ClassifierComparison(
        column,
        tuple(features),
        f"decision tree (depth {TREE_DEPTH}) on one-hot encoded categories and numbers, "
        f"stratified {FOLDS}-fold cross-validation, seed {seed}",
        acc_released,
        acc_original,
        time.perf_counter() - start,
        float(time_limit),
        subsampled or timed_out,
        int(w_after.sum()),
        int(w_before.sum()),
        seed,
        max_rows,
        timed_out,
    )


@dataclass(frozen=True)
class TrainTest:
    """A tree trained on one table (``trained_on``) and tested on other records: the share
    of the test records predicted right, beside always guessing the training table's most
    common value."""

    trained_on: str
    records_trained: int
    records_tested: int
    accuracy: float
    baseline: float


def train_and_test(
    train: pd.DataFrame,
    test: pd.DataFrame,
    features: Sequence[str],
    column: str,
    *,
    trained_on: str,
    seed: int = 0,
    max_rows: int = MAX_ROWS,
) -> TrainTest:
    """The pipeline trained on ``train`` (a seeded subsample of at most ``max_rows``
    records) predicting ``column`` from ``features``, and tested on ``test``. A value of a
    category the training table never shows counts as no category (one-hot, ignored).

    >>> a = pd.DataFrame({"x": [1, 2, 3, 4] * 10, "y": list("ppqq") * 10})
    >>> train_and_test(a, a, ["x"], "y", trained_on="loaded file").accuracy
    1.0
    """
    features = list(features)
    if len(train) > max_rows:
        keep = np.sort(np.random.default_rng(seed).choice(len(train), max_rows, replace=False))
        train = train.iloc[keep]
    train = train.reset_index(drop=True)
    X, y, numbers, texts = model_inputs(train, features, column)
    if len(set(y.tolist())) < 2:
        raise ParameterError(
            f"{column} has one value in the {trained_on} ({y[0] if len(y) else 'none'}): there is nothing for a "
            "classifier to learn; choose another column to predict."
        )
    test = test.reset_index(drop=True)
    Xt = pd.DataFrame(index=test.index)  # the test records read as the training table's columns are
    for feature in features:
        Xt[feature] = numbers_in(test[feature])[0] if feature in numbers else cell_texts(test[feature])
    yt = cell_texts(test[column]).to_numpy(dtype=object)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = classifier_pipeline(numbers, texts, seed).fit(X, y)
        right = float(np.mean(model.predict(Xt) == yt)) if len(yt) else float("nan")
    values, counts = np.unique(y.astype(str), return_counts=True)
    common = values[np.argmax(counts)]
    return TrainTest(
        trained_on, len(y), len(yt), right, float(np.mean(yt.astype(str) == common)) if len(yt) else float("nan")
    )


__all__ = [
    "FOLDS",
    "MAX_ROWS",
    "MIN_ROWS",
    "TREE_DEPTH",
    "Accuracy",
    "ClassifierComparison",
    "TrainTest",
    "classifier_pipeline",
    "compare_classifiers",
    "comparison_seconds",
    "cross_validated",
    "model_inputs",
    "train_and_test",
]
