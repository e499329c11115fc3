"""AppTest of the Individual privacy page: move the controls, check the numbers shown."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from anonlib.peers import privacy_matrix
from anonlib.core.samples import load_sample

ROOT = Path(__file__).resolve().parent.parent
PAGE = str(ROOT / "pages" / "individuals.py")
APP = str(ROOT / "app.py")


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


@pytest.fixture
def table1_page():
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.session_state["active_dataset"] = load_sample("kroes_table1_option2")
    at.session_state["active_source"] = "sample:kroes_table1_option2"
    at.run()
    assert not at.exception
    return at


def test_table1_ppp_poac_and_threshold(table1_page):
    at = table1_page
    assert not at.error
    # min PPP > 0: Alice (1/3) and individual 5 (1/2) for diagnosis; 2 and 3 for gender; 1 and 3 for age
    assert _metrics(at) == {"Diagnosis": "40.0%", "Gender": "40.0%", "Age": "40.0%"}
    assert any("5 individuals, 3 variables" in c.value for c in at.caption)
    at.slider(key="peers_p").set_value(0.4).run()
    assert not at.exception
    # p = 0.4: diagnosis only individual 5 (min 1/2; Alice 1/3 via "female"); gender only
    # individual 2 (min 1/2; individual 3 gets 1/3 via "cancer"); age nobody (1/3 via cancer / female)
    assert _metrics(at) == {"Diagnosis": "20.0%", "Gender": "20.0%", "Age": "0.0%"}
    at.slider(key="peers_p").set_value(0.0).run()
    at.radio(key="peers_measure").set_value("poac").run()
    assert not at.exception
    # Fig. 1: q-downward privacy (PoAC = 1 for every subset) only for gender of individuals 2 and 3
    assert _metrics(at) == {"Diagnosis": "0.0%", "Gender": "40.0%", "Age": "0.0%"}
    summary = at.dataframe[0].value
    assert summary["domain size"].tolist() == [3, 2, 3]


def test_pick_sensitive_variable(table1_page):
    at = table1_page
    assert any("With **Diagnosis** sensitive: 40.0%" in m.value for m in at.markdown)
    at.selectbox(key="peers_sensitive:active").set_value("Gender").run()
    assert not at.exception
    texts = [m.value for m in at.markdown]
    assert any("With **Gender** sensitive: 40.0%" in t for t in texts)
    gains = at.dataframe[1].value
    assert gains["unknown variable"].tolist() == ["Diagnosis", "Age"]


def test_too_few_variables_is_a_sentence(table1_page):
    at = table1_page
    at.multiselect[0].set_value(["Diagnosis"]).run()
    assert not at.exception
    assert any("at least two variables" in e.value for e in at.error)


def test_cervical_example_and_apply_partition():
    at = AppTest.from_file(PAGE, default_timeout=180)
    at.session_state["active_dataset"] = load_sample("kroes_table1_option2")
    at.session_state["active_source"] = "sample:kroes_table1_option2"
    at.run()
    at.selectbox(key="peers_data").set_value("cervical_cancer").run()
    assert not at.exception and not at.error
    assert any("789 individuals" in c.value and "69 rows with missing values dropped" in c.value for c in at.caption)
    assert set(_metrics(at)) == {"Num of pregnancies", "Smokes", "Age", "Biopsy"}
    assert any(m.value.startswith("Best: **") for m in at.markdown)
    at.button(key="peers_apply").click().run()
    assert not at.exception and not at.error
    copy = at.session_state["working_copy"]
    assert at.session_state["peers_data"] == "active"
    assert [(a.page, a.step.column) for a in copy.steps] == [("Individual privacy", "Age")]
    assert copy.current.frame["Age"].dropna().str.contains("-").any()
    # the example became the loaded file, which the step did not change
    assert copy.loaded.frame["Age"].equals(load_sample("cervical_cancer").frame["Age"])


def test_default_dataset_page_runs():
    at = AppTest.from_file(PAGE, default_timeout=300)
    at.run()
    assert not at.exception and not at.error
    assert len(at.metric) == len(load_sample("adult").quasi_identifiers) + len(load_sample("adult").sensitive)


def test_app_navigation_to_page():
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["active_dataset"] = load_sample("kroes_table1_option2")
    at.session_state["active_source"] = "sample:kroes_table1_option2"
    at.run()
    at.switch_page("pages/individuals.py").run()
    assert not at.exception
    assert any(t.value == "Individual privacy" for t in at.title)


def test_many_variables_ask_for_confirmation():
    import numpy as np
    import pandas as pd

    from anonlib.core.dataset import Dataset

    rng = np.random.default_rng(3)
    frame = pd.DataFrame({f"q{j}": rng.integers(0, 2, 30) for j in range(14)})
    dataset = Dataset.from_frame("wide", frame, {c: "quasi-identifier" for c in frame.columns})
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.session_state["active_dataset"] = dataset
    at.session_state["active_source"] = "upload:wide.csv"
    at.run()
    assert not at.exception
    assert any("Many variables" in w.value for w in at.warning)
    assert not at.metric  # nothing computed until confirmed


def _with_missing_values(missing: str = "category"):
    from anonlib.core.dataset import Dataset

    frame = pd.DataFrame({
        "age": [30, 30, 40, 40, 50, None, None, 60, 50, 30],
        "sex": ["m", "f", "m", "f", "m", "f", "m", None, "f", "m"],
        "dx": ["a", "b", "a", "b", "a", "a", "b", "b", "b", "a"],
    })
    roles = {"age": "quasi-identifier", "sex": "quasi-identifier", "dx": "sensitive"}
    return Dataset.from_frame("toy with gaps", frame, roles, missing=missing)


def _expected_shares(dataset, missing: str) -> dict[str, str]:
    frame, _ = dataset.with_missing(missing).analysis_frame(["age", "sex", "dx"])
    summary = privacy_matrix(frame, ["age", "sex", "dx"], "ppp").summary(0.0)
    return {row["variable"]: f"{100 * row['protected share']:.1f}%" for _, row in summary.iterrows()}


def test_missing_value_setting_changes_the_rows_analysed():
    dataset = _with_missing_values("category")
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.session_state["active_dataset"] = dataset
    at.session_state["active_source"] = "upload:toy"
    at.run()
    assert not at.exception and not at.error
    # the active dataset keeps missing values as a category, so the page starts that way
    assert at.checkbox(key="peers_drop:active:category").value is False
    assert any(c.value.startswith("10 individuals") for c in at.caption)
    assert _metrics(at) == _expected_shares(dataset, "category")

    at.checkbox(key="peers_drop:active:category").check().run()
    assert not at.exception and not at.error
    assert any(c.value.startswith("7 individuals") and "3 rows with missing values dropped" in c.value
               for c in at.caption)
    assert _metrics(at) == _expected_shares(dataset, "drop")
    assert _metrics(at) != _expected_shares(dataset, "category")  # the numbers did change

    # the dataset's own policy changes elsewhere (same table, same fingerprint): the page follows it
    at.session_state["active_dataset"] = dataset.with_missing("drop")
    at.run()
    assert at.checkbox(key="peers_drop:active:drop").value is True
    assert any(c.value.startswith("7 individuals") for c in at.caption)
    at.checkbox(key="peers_drop:active:drop").uncheck().run()
    assert not at.exception and not at.error
    assert any(c.value.startswith("10 individuals") for c in at.caption)
    assert _metrics(at) == _expected_shares(dataset, "category")


def test_paper_examples_drop_missing_rows_by_default():
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.session_state["active_dataset"] = _with_missing_values("category")
    at.session_state["active_source"] = "upload:toy"
    at.session_state["peers_data"] = "kroes_table1"
    at.run()
    assert not at.exception
    assert at.checkbox(key="peers_drop:kroes_table1:drop").value is True


def test_failed_loading_stops_the_page_with_a_sentence(monkeypatch):
    import anonlib.peers
    from anonlib.core.errors import DataFileError

    def broken(key):
        raise DataFileError(f"The example '{key}' could not be read.")

    monkeypatch.setattr(anonlib.peers, "example_dataset", broken)
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.session_state["active_dataset"] = load_sample("kroes_table1_option2")
    at.session_state["active_source"] = "sample:kroes_table1_option2"
    at.session_state["peers_data"] = "cervical_cancer"
    at.run()
    assert not at.exception
    assert [e.value for e in at.error] == [r"The example 'cervical\_cancer' could not be read\."]
    assert not at.metric and not at.multiselect


def test_failed_partition_is_a_sentence(monkeypatch):
    from anonlib.core.errors import ParameterError
    from anonlib.peers import Partition

    at = AppTest.from_file(PAGE, default_timeout=120)
    at.session_state["active_dataset"] = _with_missing_values("category")
    at.session_state["active_source"] = "upload:toy"
    at.run()
    assert not at.exception and not at.error

    def broken(self, series):
        raise ParameterError("These categories cannot be applied to 'age'.")

    monkeypatch.setattr(Partition, "apply", broken)
    at.button(key="peers_apply").click().run()
    assert not at.exception
    assert [e.value for e in at.error] == [r"These categories cannot be applied to 'age'\."]
    assert at.session_state["active_dataset"].name == "toy with gaps"  # unchanged
    at.run()  # shown once, not on every later run
    assert not at.error
