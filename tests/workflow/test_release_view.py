"""The Release view (anonlib.workflow.release_view) against pandas and scikit-learn run directly,
its refusals, its time bound, its charts and its place in the HTML report."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from uploads import uploaded

from anonlib.core.dataset import Dataset
from anonlib.core.default_hierarchy import default_hierarchy
from anonlib.core.errors import AnonlibError, ColumnError, EmptySelectionError, ParameterError
from anonlib.workflow import (
    BandsStep,
    GeneralizationStep,
    LocalSuppressionStep,
    ReleaseTarget,
    SuppressionStep,
    WorkingCopy,
)
from anonlib.workflow.release_view import BLANK, MAX_BINS, release_view
from anonlib.workflow.report import copy_report
from anonlib.workflow.report_html import render_html
from dashboard.charts import accuracy_figure, distribution_figure

SEED = 0


def shown_counts(series: pd.Series, weights=None) -> dict[str, int]:
    """Records per shown value, as a reader of the table sees them (pandas value_counts)."""
    text = (
        series.astype(object)
        .where(series.notna(), BLANK)
        .map(lambda v: str(int(v)) if isinstance(v, float) and v.is_integer() else str(v))
    )
    if weights is None:
        return {str(k): int(v) for k, v in text.value_counts().items()}
    return {str(k): int(v) for k, v in pd.Series(np.asarray(weights), index=text.index).groupby(text).sum().items()}


def generalized_copy() -> WorkingCopy:
    """The uploaded patients file: age in 10-year bands, ZIP masked one digit (a generalization), k = 5."""
    dataset, reading = uploaded()
    copy = WorkingCopy.start(dataset, ReleaseTarget(k=5), reading=reading)
    copy = copy.apply(BandsStep("age", 10, 0, 20, 89, True), "Individual privacy")
    _, zips = default_hierarchy(dataset.frame["zip"], "zip")
    return copy.apply(GeneralizationStep({"zip": 1}, {"zip": zips}), "Leakage & anonymization")


@pytest.fixture(scope="module")
def copy() -> WorkingCopy:
    return generalized_copy()


@pytest.fixture(scope="module")
def view(copy):
    return release_view(copy, pair=("age", "diagnosis"), predict="diagnosis", seed=SEED)


def test_the_target_and_the_steps_come_from_the_working_copy(copy, view):
    assert view.met is True and copy.check.met
    assert view.status == copy.check.sentence()
    assert view.loaded_records == view.released_records == 2000 and view.suppressed_records == 0
    assert [(s.failing_before, s.failing_after) for s in view.steps] == [
        (a.before.failing_records, a.after.failing_records) for a in copy.steps
    ]
    assert [s.description for s in view.steps] == [a.step.describe() for a in copy.steps]


def test_distributions_equal_pandas_value_counts_on_the_released_and_loaded_frames(copy, view):
    released = copy.release()
    loaded = copy.loaded.frame
    for column in ("sex", "diagnosis"):
        counts = view.column(column).counts
        assert {c.value: c.after for c in counts} == shown_counts(released[column])
        assert {c.value: c.before for c in counts} == shown_counts(loaded[column])
    # generalized columns: the released labels (bands, masked codes) counted as shown
    for column in ("age", "zip"):
        c = view.column(column)
        assert c.kind == "number → categories"
        assert {v.value: v.after for v in c.counts} == shown_counts(released[column])
        assert sum(v.before for v in c.counts) == len(loaded)  # every loaded record counted into a category
    age = {v.value: v.before for v in view.column("age").counts}
    assert age["30-39"] == int(loaded["age"].between(30, 39).sum())
    assert {v.value: v.before for v in view.column("zip").counts}["1000*"] == int(
        loaded["zip"].between(10000, 10009).sum()
    )


def test_numbers_before_equal_pandas_statistics(view, copy):
    ages = copy.loaded.frame["age"].astype(float)
    s = view.column("age").before
    assert s.records == len(ages)
    assert s.mean == pytest.approx(ages.mean()) and s.sd == pytest.approx(ages.std())
    assert (s.q1, s.median, s.q3) == pytest.approx(tuple(ages.quantile([0.25, 0.5, 0.75])))
    assert (s.minimum, s.maximum) == (ages.min(), ages.max())
    assert view.column("age").after is None  # text intervals after: their categories are reported


def test_a_number_column_kept_has_the_same_statistics_and_bins_before_and_after():
    dataset, _ = uploaded()
    _, zips = default_hierarchy(dataset.frame["zip"], "zip")
    copy = WorkingCopy.start(dataset, ReleaseTarget(k=5)).apply(
        GeneralizationStep({"zip": 1}, {"zip": zips}), "Leakage & anonymization"
    )
    ages = copy.loaded.frame["age"]
    kept = release_view(copy, classify=False).column("age")
    assert kept.kind == "number" and kept.before == kept.after and kept.before is not None
    assert [(c.before, c.after) for c in kept.counts] == [(c.before, c.before) for c in kept.counts]
    # and the counts are the released table's, recounted over the bins' edges ([a, b), whole numbers)
    released_ages = pd.to_numeric(copy.release()["age"], errors="coerce").dropna().to_numpy()
    assert kept.bins == "whole" and len(kept.counts) > 1
    assert [c.after for c in kept.counts] == np.histogram(released_ages, bins=np.asarray(kept.edges))[0].tolist()
    # more than MAX_BINS values: whole-number bins that add up to every record
    age_only = Dataset.from_frame("a", pd.DataFrame({"age": ages}), {"age": "quasi-identifier"})
    age_view = release_view(WorkingCopy.start(age_only), classify=False).column("age")
    assert age_view.kind == "number" and len(age_view.counts) <= MAX_BINS
    assert sum(c.before for c in age_view.counts) == len(ages)
    first = age_view.counts[0]
    low, high = (int(x) for x in first.value.split("-"))
    assert first.before == int(ages.between(low, high).sum())


def test_a_generalization_that_merges_values_lowers_or_keeps_the_distinct_values(view):
    for column in view.columns:
        assert column.distinct_after <= column.distinct_before, column.column
    assert view.column("age").distinct_after < view.column("age").distinct_before
    assert view.column("zip").distinct_after < view.column("zip").distinct_before  # 8 ZIP codes -> 4 masks


def test_the_contingency_table_equals_pandas_crosstab(copy, view):
    released = copy.release()
    expected = pd.crosstab(released["age"], released["diagnosis"])
    after = view.pair.frame("after")
    assert after.loc[expected.index, expected.columns].to_numpy().tolist() == expected.to_numpy().tolist()
    before = view.pair.frame("before")  # the loaded ages counted into the released bands
    loaded = copy.loaded.frame
    assert int(before.loc["30-39", "flu"]) == int(
        (loaded["age"].between(30, 39) & (loaded["diagnosis"] == "flu")).sum()
    )
    assert before.to_numpy().sum() == after.to_numpy().sum() == 2000


def test_the_classifier_on_the_original_equals_scikit_learn_run_directly(copy, view):
    from sklearn.compose import ColumnTransformer
    from sklearn.dummy import DummyClassifier
    from sklearn.impute import SimpleImputer
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder
    from sklearn.tree import DecisionTreeClassifier

    c = view.classifier
    assert c.column == "diagnosis" and c.features == ("age", "sex", "zip") and not c.subsampled
    folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=SEED)
    loaded = copy.loaded.frame
    X = loaded[["age", "sex", "zip"]].astype({"age": float, "zip": str})  # ZIP codes are codes, not numbers
    model = make_pipeline(
        ColumnTransformer(
            [
                ("text", OneHotEncoder(handle_unknown="ignore"), ["sex", "zip"]),
                ("numbers", SimpleImputer(strategy="median"), ["age"]),
            ]
        ),
        DecisionTreeClassifier(max_depth=8, random_state=SEED),
    )
    scores = cross_val_score(model, X, loaded["diagnosis"], cv=folds)
    assert c.original.folds == pytest.approx(tuple(scores))
    assert c.original.mean == pytest.approx(scores.mean()) and c.original.sd == pytest.approx(scores.std())
    baseline = cross_val_score(DummyClassifier(strategy="most_frequent"), X, loaded["diagnosis"], cv=folds)
    assert c.original.baseline == pytest.approx(baseline.mean())
    # on the release: the bands and masks are categories (one-hot), the same folds
    released = copy.release()
    text = ColumnTransformer([("text", OneHotEncoder(handle_unknown="ignore"), ["age", "sex", "zip"])])
    scores = cross_val_score(
        make_pipeline(text, DecisionTreeClassifier(max_depth=8, random_state=SEED)),
        released[["age", "sex", "zip"]],
        released["diagnosis"],
        cv=folds,
    )
    assert c.released.folds == pytest.approx(tuple(scores))
    assert c.released.records == c.original.records == 2000 and c.released.classes == 5
    # seeded: the same view twice
    again = release_view(copy, pair=("age", "diagnosis"), predict="diagnosis", seed=SEED).classifier
    assert again.released.folds == c.released.folds and again.original.folds == c.original.folds


def test_a_row_cap_subsamples_the_same_rows_every_run(copy):
    first = release_view(copy, predict="sex", max_rows=500).classifier
    again = release_view(copy, predict="sex", max_rows=500).classifier
    assert first.subsampled and not first.timed_out
    assert first.released.records == first.original.records == 500 and first.records_released == 2000
    assert first.released.folds == again.released.folds and first.original.folds == again.original.folds
    assert "to at most 500 rows per table" in first.sentence()
    assert "Took" in first.sentence() and "Took" not in first.sentence(timed=False)
    with pytest.raises(ParameterError, match="at least 200 rows"):
        release_view(copy, max_rows=10)


def test_the_time_bound_subsamples_and_says_so(copy):
    c = release_view(copy, predict="sex", time_limit=0.001).classifier
    assert c.subsampled and c.timed_out and c.released.records < c.records_released == 2000
    assert c.released.records == c.original.records == 200  # MIN_ROWS: the least a subsample keeps
    assert "subsampled" in c.sentence() and "0.001 s" in c.sentence()
    assert c.seconds > 0


def test_suppressed_records_are_absent_and_counted():
    dataset, _ = uploaded()
    copy = WorkingCopy.start(dataset, ReleaseTarget(k=5, max_suppressed=0.5))
    copy = copy.apply(BandsStep("age", 10, 0, 20, 89, True), "Individual privacy")
    copy = copy.apply(SuppressionStep.from_target(ReleaseTarget(k=15), copy.current), "Sidebar")
    view = release_view(copy, classify=False)
    released = copy.release()
    assert 0 < view.released_records == len(released) < 2000
    assert view.suppressed_records == copy.check.suppressed_records == 2000 - len(released)
    assert sum(c.after for c in view.column("sex").counts) == len(released)
    assert sum(c.before for c in view.column("sex").counts) == 2000
    assert f"{view.suppressed_records:,} of 2,000 records are suppressed" in " ".join(view.sentences())


def test_locally_suppressed_cells_show_as_a_star():
    frame = pd.DataFrame({"age": [30, 30, 30, 30, 31, 40, 40, 40, 40, 40], "dx": list("ababababab")})
    ds = Dataset.from_frame("d", frame, {"age": "quasi-identifier", "dx": "sensitive"})
    copy = WorkingCopy.start(ds, ReleaseTarget(k=4)).apply(LocalSuppressionStep(("age",), 4), "Sidebar")
    view = release_view(copy, classify=False)
    age = view.column("age")
    assert age.kind == "number" and age.other_after == 1 and age.other_before == 0
    assert {c.value: (c.before, c.after) for c in age.counts} == {"30": (4, 4), "31": (1, 0), "40": (5, 5), "*": (0, 1)}
    assert age.after.records == 9 and age.after.mean == pytest.approx((4 * 30 + 5 * 40) / 9)


def test_a_record_count_column_weighs_every_count():
    frame = pd.DataFrame({"sex": ["F", "M", "F", "M"], "dx": ["a", "a", "b", "b"], "n": [3, 5, 7, 2]})
    ds = Dataset.from_frame("d", frame, {"sex": "quasi-identifier", "dx": "sensitive", "n": "count"})
    view = release_view(WorkingCopy.start(ds, ReleaseTarget(k=2)), classify=False)
    assert view.released_records == view.loaded_records == 17
    assert {c.value: c.after for c in view.column("sex").counts} == shown_counts(frame["sex"], frame["n"])
    assert view.pair.frame("after").loc["F", "b"] == 7


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        ({"pair": ("age", "age")}, ParameterError, "two different columns; both are age"),
        ({"pair": ("age", "nope")}, ColumnError, "nope is not a quasi-identifier or sensitive attribute"),
        ({"predict": "patient_id"}, ColumnError, "patient_id is not a quasi-identifier or sensitive attribute"),
        ({"time_limit": 0}, ParameterError, "must be positive"),
    ],
)
def test_bad_choices_are_one_sentence(copy, kwargs, error, words):
    with pytest.raises(error) as caught:
        release_view(copy, **kwargs)
    assert words in str(caught.value) and "Traceback" not in str(caught.value)


def test_a_column_with_one_value_cannot_be_predicted():
    frame = pd.DataFrame({"age": [30, 31, 32, 33] * 5, "dx": ["flu"] * 20})
    ds = Dataset.from_frame("d", frame, {"age": "quasi-identifier", "dx": "sensitive"})
    with pytest.raises(
        ParameterError,
        match=r"dx has one value in the release \(flu\): there is nothing for a "
        r"classifier to predict",
    ):
        release_view(WorkingCopy.start(ds))


def test_not_strict_keeps_the_rest_of_the_view_and_says_what_was_refused(copy):
    view = release_view(copy, pair=("age", "age"), predict="sex", strict=False)
    assert view.pair is None and view.classifier is not None
    assert view.problems == ("A contingency table needs two different columns; both are age.",)
    assert view.sentences()[-1] == view.problems[0]


def test_an_empty_release_is_refused_in_a_sentence():
    dataset, _ = uploaded()
    copy = WorkingCopy.start(dataset, ReleaseTarget(k=5, max_suppressed=1.0))
    copy = copy.apply(SuppressionStep.from_target(ReleaseTarget(k=5000), copy.current), "Sidebar")  # every class
    assert copy.current.n_records == 0
    with pytest.raises(EmptySelectionError, match="The release holds no record: all 2,000 records"):
        release_view(copy)


def test_the_view_is_plain_json(view):
    data = json.loads(json.dumps(view.to_json()))
    assert data["released_records"] == 2000 and data["classifier"]["column"] == "diagnosis"
    assert data["pair"]["columns"] == ["age", "diagnosis"]
    assert [c["column"] for c in data["columns"]] == ["age", "sex", "zip", "diagnosis"]


# ---------------------------------------------------------------- charts


def test_distribution_chart_overlays_the_view_s_records(view):
    age = view.column("age")
    fig = distribution_figure(age)
    before, after = fig.data
    assert fig.layout.barmode == "overlay" and (before.name, after.name) == ("loaded file", "release")
    assert list(after.x) == [c.value for c in age.counts] and list(after.y) == [c.after for c in age.counts]
    assert list(before.y) == [c.before for c in age.counts]
    assert "intervals" in fig.layout.title.text


def test_charts_escape_user_text():
    hostile = '<a href="http://example.invalid">x</a>'
    frame = pd.DataFrame({hostile: ["<b>1</b>", "<b>1</b>", "2", "2"] * 3, "dx": list("abab") * 3})
    ds = Dataset.from_frame("d", frame, {hostile: "quasi-identifier", "dx": "sensitive"})
    view = release_view(WorkingCopy.start(ds, ReleaseTarget(k=2)))
    fig = distribution_figure(view.columns[0])
    assert "<a href" not in fig.layout.title.text and "<b>1</b>" not in list(fig.data[1].x)
    acc = accuracy_figure(view.classifier)
    assert list(acc.data[0].y) == pytest.approx(
        [100 * view.classifier.released.mean, 100 * view.classifier.original.mean]
    )
    assert list(acc.data[1].y) == pytest.approx(
        [100 * view.classifier.released.baseline, 100 * view.classifier.original.baseline]
    )


# ---------------------------------------------------------------- the report


def test_the_report_holds_the_view_of_a_working_copy_with_steps(copy):
    report = copy_report(copy)
    view = report.release_view
    assert view is not None and view.classifier.column == "diagnosis"  # the defaults: first sensitive attribute
    page = render_html(report)
    section = page.split("<h2>What the release is still good for</h2>", 1)[1].split("<h2>", 1)[0]
    assert "Met: all 2,000 records" in section
    assert f"{100 * view.classifier.released.mean:.1f}%" in section
    assert "<td>30-39</td>" in section
    assert report.as_dict()["release_view"]["released_records"] == 2000
    assert "Took" not in section  # the package's report is the same bytes when built again
    # no step: no section
    assert "What the release is still good for" not in render_html(copy_report(copy.reset()))


def test_the_report_notes_a_view_that_cannot_be_computed():
    frame = pd.DataFrame({"age": [30, 31, 32, 33] * 5, "dx": ["flu"] * 20})
    ds = Dataset.from_frame("<i>d</i>", frame, {"age": "quasi-identifier", "dx": "sensitive"})
    copy = WorkingCopy.start(ds, ReleaseTarget(k=2)).apply(BandsStep("age", 2, 0, 30, 33, True), "Individual privacy")
    report = copy_report(copy)
    assert report.release_view.classifier is None and report.release_view.released_records == 20
    assert report.release_view.problems == (
        "dx has one value in the release (flu): there is nothing for a classifier to predict; choose another column.",
    )
    page = render_html(report)
    assert "What the release is still good for" in page and "dx has one value in the release" in page


def test_errors_are_anonlib_errors():
    assert issubclass(EmptySelectionError, AnonlibError) and issubclass(ColumnError, AnonlibError)


# ---------------------------------------------------------------- the command line


def test_apply_release_view_json_equals_the_library(tmp_path, capsys, copy):
    from uploads import patients_csv

    from anonlib.__main__ import main

    data = tmp_path / "patients.csv"
    data.write_bytes(patients_csv())
    recipe = tmp_path / "recipe.json"
    recipe.write_text(copy.recipe().dumps(), encoding="utf-8")
    assert (
        main(["apply", str(recipe), str(data), "--release-view", "--pair", "age,sex", "--predict", "sex", "--json"])
        == 0
    )
    shown = json.loads(capsys.readouterr().out)["release_view"]
    expected = release_view(copy, pair=("age", "sex"), predict="sex").to_json()
    for part in ("columns", "pair", "released_records", "suppressed_records", "met"):
        assert shown[part] == expected[part], part
    assert shown["classifier"]["original"]["folds"] == pytest.approx(expected["classifier"]["original"]["folds"])
    assert main(["apply", str(recipe), str(data), "--release-view", "--pair", "age,age"]) == 2
    assert "two different columns; both are age" in capsys.readouterr().err


def test_zip_codes_are_codes_not_numbers_whatever_their_type():
    """The file's ZIP codes read as integers (no leading zero): the view counts them as values
    and reports no mean or quartiles of ZIP codes; the classifier one-hot encodes them."""
    from anonlib.workflow.release_view import model_inputs

    dataset, _ = uploaded()
    assert pd.api.types.is_numeric_dtype(dataset.frame["zip"])
    copy = WorkingCopy.start(dataset, ReleaseTarget(k=5))
    zip_view = release_view(copy, classify=False).column("zip")
    assert zip_view.kind == "category" and zip_view.before is None and zip_view.after is None
    masked = release_view(generalized_copy(), classify=False).column("zip")  # 1000* counts the loaded 1000x
    assert masked.kind == "number → categories" and masked.before is None
    by_mask = dataset.frame["zip"].astype(str).str[:4].add("*").value_counts()
    assert {c.value: c.before for c in masked.counts} == {m: int(n) for m, n in by_mask.items()}
    assert {c.value: c.after for c in zip_view.counts} == shown_counts(copy.release()["zip"])
    _, _, numbers, texts = model_inputs(copy.release(), ["age", "zip"], "diagnosis")
    assert numbers == ["age"] and texts == ["zip"]
