"""AppTest of the Risk report page: numbers shown equal the library's, k and p move them, downloads, no exception."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from anonlib.core.samples import load_sample
from anonlib.workflow.report import build_report

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "report.py")
TIMEOUT = 120


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def page_with(key: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.session_state["active_dataset"] = load_sample(key)
    at.session_state["active_source"] = f"sample:{key}"
    at.run()
    assert not at.exception
    return at


def test_caballero_numbers_and_no_sensitive_note():
    at = page_with("caballero_table2b")
    assert not at.error
    shown = metrics(at)
    assert shown["k"] == "2" and shown["classes"] == "4" and shown["records"] == "15"
    assert "Anonymity vector: (0, 1, 0, 2, 1)" in [t.value for t in at.text]
    assert any("No column is marked sensitive" in i.value for i in at.info)
    expected = build_report(load_sample("caballero_table2b"), k=5).generalization
    assert shown["distinct combinations kept"] == f"{expected.rows:,}"
    assert shown["distinct combinations in classes < k"] == "0"
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels == [
        "Release package (zip)",
        "Printable report (HTML)",
        "Parameters and results (JSON)",
        "Leakage table (CSV)",
    ]


def test_hostile_column_names_and_missing_sections_do_not_break_the_page():
    import pandas as pd

    from anonlib.core.dataset import Dataset, Role

    frame = pd.DataFrame({"<script>alert(1)</script>": ["a", "b", "a"], "**x**": [1, 2, 3]})
    ds = Dataset.from_frame("[link](javascript:x)", frame).with_roles(
        {"<script>alert(1)</script>": Role.QUASI_IDENTIFIER, "**x**": Role.IGNORE}
    )
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.session_state["active_dataset"] = ds
    at.session_state["active_source"] = "upload:x.csv"
    at.run()
    assert not at.exception and not at.error
    assert metrics(at)["k"] == "1"
    assert any("No column is marked sensitive" in i.value for i in at.info)


def test_the_target_s_k_and_the_p_slider_update_the_report():
    from anonlib.workflow import ReleaseTarget

    ds = load_sample("arca_table1")
    at = page_with("arca_table1")
    before = build_report(ds, k=5, p=0.0)
    assert metrics(at)["distinct combinations kept"] == f"{before.generalization.rows:,}"
    assert metrics(at)["records protected: Genetic risk"] == f"{100 * before.privacy.rows[0].protected_share:.1f}%"
    at.session_state["release_target"] = ReleaseTarget(k=3)  # what the sidebar sets
    at.slider(key="report_p").set_value(0.3).run()
    assert not at.exception
    after = build_report(ds, k=3, p=0.3)
    assert after.generalization.rows != before.generalization.rows  # the target really changes the search
    shown = metrics(at)
    assert shown["distinct combinations kept"] == f"{after.generalization.rows:,}"
    assert shown["records protected: Genetic risk"] == f"{100 * after.privacy.rows[0].protected_share:.1f}%"
    params = at.dataframe[-1].value.set_index("parameter")["value"]
    assert params["k"] == "3" and params["p (PPP threshold)"] == "0.3"
    leakage = next(d.value for d in at.dataframe if "partitions" in d.value.columns)
    assert leakage["attribute"].tolist() == [r.attribute for r in after.leakage.rows]


def test_default_sample_when_run_alone():
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT).run()
    assert not at.exception and not at.error
    assert at.title[0].value == "Risk report"
    expected = build_report(load_sample("adult"), k=5)
    assert metrics(at)["unique records"] == f"{expected.risk.unique_records:,}"
    assert any("unique on age" in m.value for m in at.markdown)


def test_app_navigation_reaches_the_page():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.session_state["active_dataset"] = load_sample("caballero_table2b")
    at.session_state["active_source"] = "sample:caballero_table2b"
    at.run()
    at.switch_page("pages/report.py").run()
    assert not at.exception
    assert any(t.value == "Risk report" for t in at.title)
    assert metrics(at)["k"] == "2"
