"""AppTest of the Individual privacy page on samples: the shared attacker model's numbers,
the paper's worked example (closed until switched on), bands as a step, failures as sentences.
(The same page on an uploaded file and the release journey: tests/dashboard/test_pages_on_upload.py.)"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from streamlit.testing.v1 import AppTest

from anonlib.core.dataset import Dataset
from anonlib.core.samples import load_sample
from anonlib.workflow.findings import individual_privacy
from anonlib.workflow.report import build_report

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "individuals.py")
APP = str(ROOT / "app.py")


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _page(dataset: Dataset, source: str = "upload:toy", timeout: int = 120) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=timeout)
    at.session_state["active_dataset"] = dataset
    at.session_state["active_source"] = source
    at.run()
    assert not at.exception
    return at


def _with_missing_values(missing: str = "category") -> Dataset:
    frame = pd.DataFrame(
        {
            "age": [30, 30, 40, 40, 50, None, None, 60, 50, 30],
            "sex": ["m", "f", "m", "f", "m", "f", "m", None, "f", "m"],
            "dx": ["a", "b", "a", "b", "a", "a", "b", "b", "b", "a"],
        }
    )
    roles = {"age": "quasi-identifier", "sex": "quasi-identifier", "dx": "sensitive"}
    return Dataset.from_frame("toy with gaps", frame, roles, missing=missing)


def test_paper_example_table1_closed_until_switched_on():
    at = _page(load_sample("kroes_table1_option2"), "sample:kroes_table1_option2")
    assert at.toggle(key="peers_paper").value is False
    at.toggle(key="peers_paper").set_value(True).run()
    assert not at.exception
    paper = {k: v for k, v in _metrics(at).items() if k.startswith("paper: ")}
    # min PPP > 0: Alice (1/3) and individual 5 (1/2) for diagnosis; 2 and 3 for gender; 1 and 3 for age
    assert paper == {"paper: Diagnosis": "40.0%", "paper: Gender": "40.0%", "paper: Age": "40.0%"}
    at.slider(key="peers_paper_p").set_value(0.4).run()
    paper = {k: v for k, v in _metrics(at).items() if k.startswith("paper: ")}
    # p = 0.4: diagnosis only individual 5; gender only individual 2; age nobody
    assert paper == {"paper: Diagnosis": "20.0%", "paper: Gender": "20.0%", "paper: Age": "0.0%"}
    at.slider(key="peers_paper_p").set_value(0.0).run()
    at.radio(key="peers_paper_measure").set_value("poac").run()
    paper = {k: v for k, v in _metrics(at).items() if k.startswith("paper: ")}
    # Fig. 1: q-downward privacy only for gender of individuals 2 and 3
    assert paper == {"paper: Diagnosis": "0.0%", "paper: Gender": "40.0%", "paper: Age": "0.0%"}


def test_missing_values_follow_the_dataset_and_match_the_report():
    for missing in ("category", "drop"):
        dataset = _with_missing_values(missing)
        at = _page(dataset)
        assert not at.error
        expected = individual_privacy(dataset).rows[0].protected_share
        assert _metrics(at) == {"records protected: dx": f"{100 * expected:.1f}%"}
        assert (
            _metrics(at)["records protected: dx"]
            == f"{100 * build_report(dataset).privacy.rows[0].protected_share:.1f}%"
        )
    assert any("7 records" in c.value and "3 rows with missing values left out" in c.value for c in at.caption)
    # no person column: a record's look-alikes are records, as in the paper (nothing said of people)
    assert not any("other people's records" in c.value for c in at.caption)


def test_default_dataset_page_runs_with_the_report_s_numbers():
    at = AppTest.from_file(PAGE, default_timeout=300)
    at.run()
    assert not at.exception and not at.error
    adult = load_sample("adult")
    report = build_report(adult, k=5)
    assert _metrics(at) == {
        f"records protected: {r.sensitive}": f"{100 * r.protected_share:.1f}%" for r in report.privacy.rows
    }


def test_app_navigation_to_page():
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["active_dataset"] = load_sample("kroes_table1_option2")
    at.session_state["active_source"] = "sample:kroes_table1_option2"
    at.run()
    at.switch_page("pages/individuals.py").run()
    assert not at.exception
    assert any(t.value == "Individual privacy" for t in at.title)


def test_no_quasi_identifier_is_a_sentence_not_a_computation():
    dataset = _with_missing_values().with_roles({"age": "ignore", "sex": "ignore"})
    at = _page(dataset)
    assert not at.error and not at.metric
    assert any("at least one column as quasi-identifier" in i.value for i in at.info)


def test_failed_bands_are_a_sentence_in_the_sidebar_note(monkeypatch):
    from anonlib.core.errors import ParameterError
    from anonlib.measures.peers import Partition

    at = _page(_with_missing_values("category"))
    assert not at.error
    # no band protects more records of this toy than none, so none is preselected: the first chosen
    next(s for s in at.selectbox if str(s.key).startswith("peers_pick:")).set_value(0).run()

    def broken(self, series):
        raise ParameterError("These categories cannot be applied to 'age'.")

    monkeypatch.setattr(Partition, "apply", broken)
    at.button(key="peers_apply").click().run()
    assert not at.exception
    assert "These categories cannot be applied to 'age'." in at.session_state["working_copy_note"]
    assert not at.session_state["working_copy"].steps  # unchanged


def test_changing_k_recomputes_nothing_the_page_shows_apart_from_the_verdict(monkeypatch):
    """The page's results depend on the data, roles and the page's controls, not on the release
    target's k: changing k back and forth (the user's main action) computes none of them again;
    the bands' costs were computed on every rerun (a second at 10^5 records)."""
    import anonlib.measures.peers as peers
    import anonlib.workflow as workflow
    import anonlib.workflow.findings as findings
    from dashboard import charts
    from dashboard.memo import memo

    for name in ("individuals.privacy", "individuals.potential", "individuals.bands", "individuals.figures"):
        memo(name).clear()  # computed here, not kept from another test
    calls = {"privacy": 0, "potential": 0, "cost": 0, "figure": 0}

    def counted(name, function):
        def call(*args, **kwargs):
            calls[name] += 1
            return function(*args, **kwargs)

        return call

    monkeypatch.setattr(findings, "individual_privacy", counted("privacy", findings.individual_privacy))
    monkeypatch.setattr(peers, "generalization_potential", counted("potential", peers.generalization_potential))
    monkeypatch.setattr(workflow, "step_cost", counted("cost", workflow.step_cost))
    monkeypatch.setattr(charts, "privacy_heatmap", counted("figure", charts.privacy_heatmap))
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["active_dataset"] = _with_missing_values().with_roles({"dx": "sensitive"})
    at.session_state["active_source"] = "upload:toy"
    at.run()
    at.switch_page("pages/individuals.py").run()
    # no band protects more records of this toy than none, so none is preselected: the first chosen
    next(s for s in at.selectbox if str(s.key).startswith("peers_pick:")).set_value(0).run()
    assert not at.exception and at.button(key="peers_apply")
    opened = dict(calls)
    assert opened["privacy"] == opened["potential"] == 1 and opened["cost"] >= 1 and opened["figure"] == 2
    for k in (3, 2, 3):
        at.number_input(key="target_k").set_value(k).run()
        assert not at.exception and at.button(key="peers_apply")
    assert calls == opened


def test_band_partitions_estimated_too_long_for_a_slider_wait_for_their_button(monkeypatch):
    """At about 10^5 records the band partitions (a few seconds) wait behind a button that says how
    long they take, so moving p or "Most bands" answers at once; pressed, they are computed and kept
    for these settings (a rerun computes nothing), and a new "Most bands" asks again."""
    import anonlib.measures.peers as peers
    import anonlib.workflow.budgets as budgets
    from dashboard.memo import memo

    memo("individuals.potential").clear()
    calls = []
    real = peers.generalization_potential
    monkeypatch.setattr(peers, "generalization_potential", lambda *a, **k: calls.append(1) or real(*a, **k))
    monkeypatch.setattr(budgets, "BAND_WALK_SECONDS", 1.0)  # every walk estimated at a second
    at = _page(_with_missing_values().with_roles({"dx": "sensitive"}))
    button = at.button(key="peers_bands_run")
    assert button.label.startswith("Compute up to ") and "band partitions of" in button.label
    assert not calls and not [b for b in at.button if b.key == "peers_apply"]
    button.click().run()

    def offered() -> list[str]:  # the band partitions computed, offered to apply (none protects more
        # records of this toy than its values as they are: none is preselected)
        return next(s for s in at.selectbox if str(s.key).startswith("peers_pick:")).options

    assert not at.exception and calls == [1] and offered()
    at.run()
    assert calls == [1] and offered()  # kept
    at.slider(key="peers_max_categories").set_value(14).run()
    assert calls == [1] and at.button(key="peers_bands_run")


def test_individual_privacy_estimated_too_long_is_narrowed_as_the_report_narrows(monkeypatch):
    """On a real panel (the diabetes file's 12 guessed quasi-identifiers: about 4 minutes under
    "all") the page had run on past five minutes. Past a page's time it narrows the attacker
    to knowing at most as many quasi-identifiers at once as fits, says so, and computes that; the
    box computes every combination; past even one at a time it computes nothing and says so."""
    import anonlib.workflow.budgets as budgets
    from anonlib.measures.peers import estimate_minimum, walk_size
    from dashboard.memo import memo

    memo("individuals.privacy").clear()
    frame = load_sample("adult").frame.head(400)
    qis = ["age", "sex", "race", "education"]
    dataset = Dataset.from_frame("adult 400", frame, {**{c: "quasi-identifier" for c in qis}, "income": "sensitive"})
    dataset = dataset.with_roles({c: "ignore" for c in frame.columns if c not in qis and c != "income"})
    data, _ = dataset.analysis_frame(list(dataset.quasi_identifiers + dataset.sensitive))
    needed = estimate_minimum(data, "income", list(dataset.quasi_identifiers), count=None).seconds
    # the time allowed fits the 11 combinations of at most two of the 4, not the 15 of three
    monkeypatch.setattr(budgets, "PAGE_PRIVACY_SECONDS", needed * 12 / walk_size(4))
    at = _page(dataset)
    said = [i.value for i in at.info if "combinations of the 4 quasi-identifiers" in i.value]
    assert len(said) == 1 and "knows at most 2 of them at once (11 combinations, " in said[0]
    narrowed = individual_privacy(dataset, max_known=2).rows[0].protected_share
    full = individual_privacy(dataset).rows[0].protected_share
    assert narrowed != full  # the two answers differ on this table: the test tells them apart
    assert _metrics(at) == {"records protected: income": f"{100 * narrowed:.1f}%"}
    at.checkbox(key="peers_everything").check().run()
    assert not at.exception and not [i for i in at.info if "combinations of the 4" in i.value]
    assert _metrics(at) == {"records protected: income": f"{100 * full:.1f}%"}
    at.checkbox(key="peers_everything").uncheck().run()
    assert _metrics(at) == {"records protected: income": f"{100 * narrowed:.1f}%"}
    monkeypatch.setattr(budgets, "PAGE_PRIVACY_SECONDS", needed / walk_size(4))  # not even one at a time
    at.run()
    assert not at.metric and any("Not computed: even an attacker knowing one" in w.value for w in at.warning)
