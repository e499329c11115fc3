"""AppTest of the Release page on an uploaded-like file with a generalization applied: the met target,
the distributions, the numbers table and the classifier equal the library's; choices move them; a bad
choice is a sentence; the package download is the Risk report page's."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from page_cases import generalized, page_with, unescaped
from streamlit.testing.v1 import AppTest

from anonlib.core.dataset import Dataset, Role
from anonlib.workflow import WorkingCopy
from anonlib.workflow.release_view import release_view

ROOT = Path(__file__).resolve().parents[2]


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_the_page_shows_the_met_target_distributions_and_classifier_of_the_library():
    copy = generalized()
    assert copy.check.met
    at = page_with(copy)
    assert not at.error
    assert at.title[0].value == "Release"
    view = release_view(copy)  # the page's defaults: age by diagnosis, predicting diagnosis, seed 0
    shown = metrics(at)
    assert shown["target met"] == "yes"
    assert shown["records in the release"] == "2,000" and shown["records suppressed"] == "0"
    assert any("Met: all 2,000 records" in unescaped(s.value) for s in at.success)
    c = view.classifier
    assert shown["trained on the release"] == f"{100 * c.released.mean:.1f}%"
    assert shown["trained on the loaded file"] == f"{100 * c.original.mean:.1f}%"
    assert shown["most common value"] == f"{100 * c.released.baseline:.1f}%"
    assert float(shown["seconds"]) >= 0
    # the steps and what each cost
    steps = next(d.value for d in at.dataframe if "records failing before" in d.value.columns)
    assert steps["records failing after"].tolist() == [0]
    # the numbers table: age before, straight from pandas
    numbers = next(d.value for d in at.dataframe if "median" in d.value.columns)
    ages = copy.loaded.frame["age"]
    row = numbers[(numbers["column"] == "age") & (numbers["table"] == "loaded file")].iloc[0]
    assert float(row["mean"]) == float(ages.mean()) and float(row["median"]) == float(ages.median())
    # the distribution chart of the first column (age): the released bands' records
    figure = json.loads(at.get("plotly_chart")[0].proto.spec)
    released = copy.release()["age"].value_counts()
    after = dict(zip(figure["data"][1]["x"], figure["data"][1]["y"]))
    assert after == {k: int(v) for k, v in released.items()}
    # the contingency tables, before and after, add up to every record
    pair = [d.value for d in at.dataframe if "asthma" in d.value.columns]
    assert len(pair) == 2 and all(int(t.to_numpy().sum()) == 2000 for t in pair)
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels == ["Release package (zip)", "Release view (JSON)"]


def test_choices_move_the_view_and_a_bad_pair_is_a_sentence():
    copy = generalized()
    at = page_with(copy)
    at.selectbox(key="release_predict").set_value("sex").run()
    assert not at.exception and not at.error
    expected = release_view(copy, predict="sex").classifier
    assert metrics(at)["trained on the loaded file"] == f"{100 * expected.original.mean:.1f}%"
    assert any(s.value == "Predicting sex" for s in at.subheader)
    at.selectbox(key="release_column").set_value("zip").run()
    figure = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert set(figure["data"][1]["x"]) == set(copy.release()["zip"].astype(str))
    at.selectbox(key="release_pair_b").set_value("age").run()
    assert not at.exception
    assert any("two different columns; both are age" in unescaped(e.value) for e in at.error)


def test_a_column_with_one_value_to_predict_is_a_sentence_not_a_traceback():
    frame = pd.DataFrame({"<b>age</b>": [30, 31, 32, 33] * 5, "dx": ["flu"] * 20})
    ds = Dataset.from_frame("[x](javascript:y)", frame).with_roles(
        {"<b>age</b>": Role.QUASI_IDENTIFIER, "dx": Role.SENSITIVE}
    )
    at = page_with(WorkingCopy.start(ds))
    assert any("dx has one value in the release (flu)" in unescaped(e.value) for e in at.error)
    assert not [e for e in at.error if "unexpected" in e.value]


def test_app_navigation_reaches_the_page_after_the_risk_report():
    app = (ROOT / "app.py").read_text(encoding="utf-8")
    assert app.index('title="Risk report"') < app.index('title="Release"')
    copy = generalized()
    at = page_with(copy, str(ROOT / "app.py"))
    at.switch_page("pages/release.py").run()
    assert not at.exception
    assert any(t.value == "Release" for t in at.title)
    assert metrics(at)["target met"] == "yes"


def test_the_page_s_package_is_built_on_click_by_the_report_page_s_functions():
    import io
    import zipfile

    from dashboard.release_download import package_data

    copy = generalized()
    build = package_data(copy, 0.0)
    assert callable(build)  # nothing is built until the button is clicked
    package = zipfile.ZipFile(io.BytesIO(build()))
    report = package.read("report.html").decode("utf-8")
    section = report.split("<h2>What the release is still good for</h2>", 1)[1].split("<h2>", 1)[0]
    c = release_view(copy).classifier
    assert f"{100 * c.released.mean:.1f}%" in section and f"{100 * c.original.mean:.1f}%" in section


def test_the_release_page_s_package_states_the_page_s_own_view():
    """The page's view goes into its package's report as it is (a classifier cut short by its time limit is not
    run again, so the report cannot state other numbers than the page)."""
    import io
    import zipfile
    from dataclasses import replace

    from dashboard.release_download import package_data

    copy = generalized()
    view = release_view(copy)
    c = view.classifier
    shown = replace(c, released=replace(c.released, mean=0.123456), original=replace(c.original, mean=0.654321))

    def section_of(build) -> str:
        report = zipfile.ZipFile(io.BytesIO(build())).read("report.html").decode("utf-8")
        return report.split("<h2>What the release is still good for</h2>", 1)[1].split("<h2>", 1)[0]

    section = section_of(package_data(copy, 0.0, view=replace(view, classifier=shown)))
    assert "12.3%" in section and "65.4%" in section
    assert f"{100 * c.released.mean:.1f}%" not in section
    # the same choices measured again with other numbers (a classifier cut elsewhere): not the first package
    again = replace(c, released=replace(c.released, mean=0.987654), original=replace(c.original, mean=0.456789))
    section = section_of(package_data(copy, 0.0, view=replace(view, classifier=again)))
    assert "98.8%" in section and "45.7%" in section and "12.3%" not in section
