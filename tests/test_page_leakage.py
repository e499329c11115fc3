"""AppTest of the Leakage & anonymization page: the paper's example end to end, controls, errors."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from anonlib.anonymize import arca_hierarchies, search
from anonlib.core.hierarchy import flat_hierarchy
from anonlib.leakage import leakage_table, truncated
from anonlib.core.samples import load_sample

ROOT = Path(__file__).resolve().parent.parent
PAGE = str(ROOT / "pages" / "leakage.py")
TIMEOUT = 180


def metrics(at: AppTest) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for m in at.metric:
        out.setdefault(m.label, []).append(m.value)
    return out


@pytest.fixture(scope="module")
def page() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT).run()
    assert not at.exception
    return at


def test_paper_example_by_default(page):
    assert not page.error
    shown = metrics(page)
    assert shown["rows kept"] == ["21", "21", "18"]
    assert shown["tables generated"] == ["13", "71", "3"]
    assert shown["generalization steps"] == ["2", "2", "1"]
    assert any("22 distinct rows, 5 violating" in m.value for m in page.markdown)


def test_leakage_table_is_table2(page):
    table = page.dataframe[0].value.set_index("attribute")
    assert table.loc["Age", "partitions"] == 13
    assert truncated([table.loc["Zip", "loss"], table.loc["Sex", "normalized"]]) == [2.75, 0.16]
    assert table.index[0] == "Age"  # sorted by leakage, most revealing first


def test_before_after_table8_shape(page):
    both = next(d.value for d in page.dataframe if "before" in d.value.columns)
    ages = both.set_index("attribute").loc["Age"]
    assert ages["after"] < ages["before"]
    sex = both.set_index("attribute").loc["Sex"]
    assert sex["after"] == pytest.approx(sex["before"])  # not in the shield: unchanged


def test_k_and_builder_controls_update_the_result():
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT).run()
    at.number_input(key="k-example").set_value(4).run()
    assert not at.exception
    df = load_sample("arca_table1").frame
    hierarchies = arca_hierarchies(df)
    expected = search(df, ["Zip", "Age", "AC"], 4, hierarchies, count="#Rec.")
    assert metrics(at)["rows kept"][0] == str(expected.rows)
    at.selectbox(key="hb-example-AC").set_value("flat").run()
    assert not at.exception
    flat = dict(hierarchies, AC=flat_hierarchy(df["AC"]))
    greedy = search(df, ["Zip", "Age", "AC"], 4, flat, "greedy", count="#Rec.")
    assert metrics(at)["rows kept"][2] == str(greedy.rows)


def test_bad_hierarchy_is_an_error_sentence():
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT).run()
    at.text_input(key="hi-example-Age").set_value("20-34 | 20-44").run()
    assert not at.exception
    assert any("'35' is in no band of level 1" in e.value for e in at.error)
    assert any("Age" in w.value for w in at.warning)
    assert "rows kept" not in metrics(at)


def test_pairs_and_whole_quasi_identifier():
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT).run()
    at.multiselect(key="leakage_sizes").set_value(["single attributes", "pairs"]).run()
    at.checkbox(key="leakage_whole").check().run()
    assert not at.exception
    table = at.dataframe[0].value
    assert len(table) == 7 + 21 + 1
    whole = table.set_index("attribute").loc["Sex + AC + Age + Zip + Weight + Race"]
    df = load_sample("arca_table1").frame
    qi = ("Sex", "AC", "Age", "Zip", "Weight", "Race")
    expected = leakage_table(df, [qi], count="#Rec.").iloc[0]
    assert whole["partitions"] == 22 == expected["partitions"]
    assert whole["normalized"] == pytest.approx(expected["normalized"])
    assert table["normalized"].iloc[0] == pytest.approx(whole["normalized"])  # the most revealing query
    assert "Sex + AC" in set(table["attribute"])


def test_active_dataset_heart_disease():
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.session_state["active_dataset"] = load_sample("heart_cleveland")
    at.session_state["active_source"] = "sample:heart_cleveland"
    at.run()
    assert not at.exception
    assert at.radio(key="leakage_source").value.startswith("Active dataset")
    shown = metrics(at)
    assert len(shown["rows kept"]) == 3
    experiment = next(d.value for d in at.dataframe if "paper_rows" in d.value.columns)
    assert len(experiment) == 3 * 4 * 3


def test_app_switches_to_the_page():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()
    at.switch_page("pages/leakage.py").run()
    assert not at.exception


def test_missing_value_setting_changes_the_rows_analysed():
    from anonlib.core.dataset import Dataset

    frame = pd.DataFrame({
        "age": [30, 30, 40, 40, 50, None, None, 60, 50, 30],
        "sex": ["m", "f", "m", "f", "m", "f", "m", None, "f", "m"],
        "dx": ["a", "b", "a", "b", "a", "a", "b", "b", "b", "a"],
    })
    roles = {"age": "quasi-identifier", "sex": "quasi-identifier", "dx": "sensitive"}
    dataset = Dataset.from_frame("toy with gaps", frame, roles, missing="category")

    def shown_and_expected(at: AppTest, ds: Dataset) -> tuple[pd.DataFrame, pd.DataFrame]:
        table = next(d.value for d in at.dataframe if "normalized" in d.value.columns and "attribute" in d.value.columns)
        rows, _ = ds.analysis_frame(["age", "sex", "dx"])
        expected = leakage_table(rows, ["age", "sex", "dx"])
        return (table.set_index("attribute")["normalized"].sort_index(),
                expected.set_index("attribute")["normalized"].sort_index())

    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.session_state["active_dataset"] = dataset
    at.session_state["active_source"] = "upload:toy"
    at.session_state["leakage_source"] = "Active dataset: toy with gaps"
    at.run()
    assert not at.exception
    assert any(c.value.startswith("toy with gaps: 10 rows") for c in at.caption)
    shown, expected = shown_and_expected(at, dataset)
    assert shown.to_dict() == pytest.approx(expected.to_dict())

    dropping = dataset.with_missing("drop")  # same table, same fingerprint, fewer rows analysed
    at.session_state["active_dataset"] = dropping
    at.run()
    assert not at.exception
    assert any(c.value.startswith("toy with gaps: 7 rows") and "3 rows with missing values dropped" in c.value
               for c in at.caption)
    shown_after, expected_after = shown_and_expected(at, dropping)
    assert shown_after.to_dict() == pytest.approx(expected_after.to_dict())
    assert shown_after.to_dict() != pytest.approx(shown.to_dict())
