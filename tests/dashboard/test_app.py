"""The app shell and the Dataset page under streamlit's AppTest (no browser)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from anonlib.core.samples import load_sample

ROOT = Path(__file__).resolve().parents[2]
PAGE_FILES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "pages").glob("*.py"))
TIMEOUT = 120


def unescaped(text: str) -> str:
    """An st.error body as the reader sees it: Markdown backslash escapes removed."""
    return re.sub(r"\\(.)", r"\1", text)


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def texts(at: AppTest) -> list[str]:
    return [t.value for t in at.text]


def fresh_app() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.run()
    assert not at.exception
    return at


def test_app_starts_with_the_default_sample_loaded() -> None:
    at = fresh_app()
    assert at.title[0].value == "Dataset"
    assert metrics(at)["records"] == "32,561"
    assert metrics(at)["k"] == "1"
    sidebar = [t.value for t in at.sidebar.text]
    assert sidebar[0].startswith("Adult")
    assert "32,561 records, 15 columns" in sidebar
    assert not at.error


def test_choosing_a_sample_shows_its_k_and_vector() -> None:
    at = fresh_app()
    at.selectbox(key="sample_key").set_value("caballero_table2b").run()
    assert not at.exception
    assert metrics(at)["records"] == "15"
    assert metrics(at)["k"] == "2"
    assert metrics(at)["classes"] == "4"
    assert "Anonymity vector: (0, 1, 0, 2, 1)" in texts(at)


def role_editor_key(at: AppTest) -> str:
    """The role editor's widget key (a new one each time the loaded dataset is replaced)."""
    return f"roles-{at.session_state['role_editor']['version']}"


def fresh_app_with(key: str) -> AppTest:
    """The app opened with a sample already active (AppTest only renders the
    sidebar of a navigation app on its first run, so sidebar checks start here)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.session_state["active_dataset"] = load_sample(key)
    at.session_state["active_source"] = f"sample:{key}"
    at.run()
    assert not at.exception
    return at


def test_sidebar_shows_the_active_dataset() -> None:
    at = fresh_app_with("caballero_table2b")
    sidebar = [t.value for t in at.sidebar.text]
    assert sidebar[:2] == ["Caballero et al., Table 2(b) (ZIP, gender, age)", "15 records, 4 columns"]
    assert "Quasi-identifiers: ZIP, Gender, Age" in sidebar
    assert "Sensitive: none" in sidebar


def test_changing_roles_updates_k_and_vector() -> None:
    at = fresh_app_with("caballero_table2b")  # the roles edited, not the sample chosen (test_choosing_a_sample...)
    editor_key = role_editor_key(at)
    # Row 3 is Age: stop treating it as a quasi-identifier -> classes on ZIP x Gender.
    at.session_state[editor_key] = {"edited_rows": {3: {"role": "ignore"}}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert not at.exception
    # ZIP x Gender: 88888/male 4, 11111/male 4, 11111/female 5, 88888/female 2 (Age adds nothing)
    assert "Anonymity vector: (0, 1, 0, 2, 1)" in texts(at)
    at.session_state[editor_key] = {
        "edited_rows": {3: {"role": "ignore"}, 2: {"role": "ignore"}},
        "added_rows": [],
        "deleted_rows": [],
    }
    at.run()
    assert not at.exception
    # ZIP only: 11111 -> 9 records, 88888 -> 6 records
    assert metrics(at)["k"] == "6"
    assert "Anonymity vector: (0, 0, 0, 0, 0, 1, 0, 0, 1)" in texts(at)


def test_count_column_sample_shows_records_not_rows() -> None:
    at = fresh_app()
    at.selectbox(key="sample_key").set_value("arca_table1").run()
    assert metrics(at)["records"] == "60"
    sidebar = [t.value for t in fresh_app_with("arca_table1").sidebar.text]
    assert "60 records, 8 columns" in sidebar and "22 rows (count column: #Rec.)" in sidebar


def test_upload_through_the_page_and_a_bad_upload_keeps_the_data() -> None:
    at = fresh_app()
    at.radio(key="source_kind").set_value("Upload a file").run()
    csv = (ROOT / "data" / "samples" / "caballero_table2b.csv").read_bytes()
    at.file_uploader(key="upload").set_value(("screening.csv", csv, "text/csv")).run()
    assert not at.exception
    assert metrics(at)["k"] == "2"
    assert at.session_state["active_source"] == "upload:screening.csv"
    at.file_uploader(key="upload").set_value(("junk.csv", b"\x00\x01\x02binary", "text/csv")).run()
    assert not at.exception
    assert any("binary file" in e.value for e in at.error)
    assert metrics(at)["k"] == "2"  # the previous dataset is kept
    assert at.session_state["active_source"] == "upload:screening.csv"


def test_no_quasi_identifier_is_an_error_sentence_not_a_crash() -> None:
    at = fresh_app_with("caballero_table2b")  # the roles edited, not the sample chosen (test_choosing_a_sample...)
    editor_key = role_editor_key(at)
    at.session_state[editor_key] = {
        "edited_rows": {1: {"role": "ignore"}, 2: {"role": "ignore"}, 3: {"role": "ignore"}},
        "added_rows": [],
        "deleted_rows": [],
    }
    at.run()
    assert not at.exception
    # error sentences are Markdown-escaped (they name user columns); the escapes render invisibly
    assert any("at least one column as quasi-identifier" in unescaped(e.value) for e in at.error)


def test_missing_values_can_be_dropped() -> None:
    at = fresh_app()
    records_kept = metrics(at)["records"]
    at.radio(key="missing_choice").set_value("leave those records out").run()
    assert not at.exception
    assert records_kept == "32,561"
    assert metrics(at)["records"] == "31,978"  # 583 rows miss native-country


@pytest.mark.parametrize("page", PAGE_FILES)
def test_every_page_runs_on_its_own(page: str) -> None:
    at = AppTest.from_file(str(ROOT / page), default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, at.exception


@pytest.mark.parametrize("page", PAGE_FILES)
def test_every_page_runs_inside_the_app(page: str) -> None:
    at = fresh_app()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    assert not [e.value for e in at.error if "unexpected" in e.value]


def test_a_dataset_changed_on_another_page_is_not_replaced_by_the_sample() -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    derived = load_sample("caballero_table2b")
    at.session_state["active_dataset"] = derived
    at.session_state["active_source"] = "derived:age in bands"
    at.run()
    assert not at.exception
    assert metrics(at)["records"] == "15"  # still the derived dataset, not the default sample
    assert any("stays loaded until you choose a sample" in i.value for i in at.info)
    (use_sample,) = [b for b in at.button if b.label == "Use this sample instead"]
    use_sample.click().run()
    assert not at.exception
    assert metrics(at)["records"] == "32,561", [b.label for b in at.button]
    assert at.session_state["active_source"] == "sample:adult"


def test_type_edits_convert_columns_and_bad_ones_explain_why() -> None:
    at = fresh_app_with("caballero_table2b")  # the roles edited, not the sample chosen (test_choosing_a_sample...)
    editor_key = role_editor_key(at)
    # Gender (row 2) to integer: the values are words, so nothing changes and the page says why.
    at.session_state[editor_key] = {"edited_rows": {2: {"type": "integer"}}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert not at.exception
    assert any("'Gender' cannot be made numeric: 'male' is not a number" in unescaped(e.value) for e in at.error)
    assert at.session_state["active_dataset"].frame["Gender"].tolist()[:2] == ["male", "male"]
    # ZIP (row 1) to category: codes become text, the classes stay the same.
    at.session_state[editor_key] = {"edited_rows": {1: {"type": "category"}}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert not at.exception
    assert at.session_state["active_dataset"].frame["ZIP"].tolist()[:2] == ["88888", "11111"]
    assert metrics(at)["k"] == "2"


def test_sidebar_is_drawn_even_when_a_page_stops_early() -> None:
    at = AppTest.from_string(
        "import streamlit as st\n"
        "from dashboard.ui import run_with_sidebar\n"
        "run_with_sidebar([st.Page(lambda: st.stop(), title='Stops')])\n",
        default_timeout=TIMEOUT,
    )
    at.run()
    assert not at.exception
    assert [t.value for t in at.sidebar.text][0].startswith("Adult")


def test_sidebar_shows_the_dataset_once() -> None:
    at = fresh_app_with("caballero_table2b")
    sidebar = [t.value for t in at.sidebar.text]
    assert sidebar.count("15 records, 4 columns") == 1, sidebar
