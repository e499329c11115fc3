"""The Screening schedules page, driven as a user would (streamlit AppTest)."""

from __future__ import annotations

import re

import pandas as pd
from streamlit.testing.v1 import AppTest

from anonlib.core.samples import load_sample

PAGE = "pages/screening.py"
PAPER = "Bundled example: the paper's Table 7 (15 records)"


def _page() -> AppTest:
    return AppTest.from_file(f"../../{PAGE}", default_timeout=180)


def _summary(at: AppTest) -> pd.DataFrame:
    for frame in at.dataframe:
        if "anonymity vector" in frame.value.columns and "schedule" in frame.value.columns:
            if "before appointments" in frame.value["schedule"].tolist():
                return frame.value
    raise AssertionError("no summary table on the page")


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_paper_example_as_an_explicit_choice_and_rule_change():
    at = _page()
    at.run()
    assert at.radio(key="scr_source").value == "Your working copy"  # the page opens on the user's data
    at.radio(key="scr_source").set_value(PAPER).run()
    assert not at.exception and not at.error
    summary = _summary(at).set_index("schedule")
    assert summary.loc["before appointments", "anonymity vector"] == "(0, 1, 0, 2, 1)"
    assert summary.loc["optimal", "anonymity vector"] == "(0, 2, 1, 2)"
    assert summary.loc["optimal", "proven optimal"] == "yes"
    assert summary.loc["before appointments", "lexicographic index"] == "154"
    assert any("p(N) = 1.760e+02 possible" in c.value for c in at.caption)  # p(15) = 176
    metrics = _metrics(at)
    assert metrics["k before appointments"] == "2" and metrics["k, optimal"] == "2"
    assert metrics["k, random"] == "1"

    at.selectbox(key="scr_rule").set_value("largest").run()
    assert not at.exception
    summary = _summary(at).set_index("schedule")
    assert summary.loc["heuristic", "anonymity vector"] == "(2, 3, 1, 1)"
    assert summary.loc["heuristic", "rank among all schedules"] == "339 of 14,504"
    assert any("14,504 feasible schedules; 58 of them" in c.value for c in at.caption)
    assert _metrics(at)["k, heuristic"] == "1"
    assert float(_metrics(at)["improvement, optimal over heuristic"].rstrip("%")) > 0

    at.multiselect(key="scr_methods").set_value(["heuristic"]).run()
    assert not at.exception
    assert "k, optimal" not in _metrics(at) and "k, random" not in _metrics(at)
    assert list(_summary(at)["schedule"]) == ["before appointments", "heuristic"]


def test_active_dataset_with_chosen_quasi_identifier():
    at = _page()
    at.session_state["active_dataset"] = load_sample("caballero_table3")
    at.session_state["active_source"] = "sample:caballero_table3"
    at.run()
    assert not at.exception and not at.error
    assert any("Schedules need appointment slots, which your file does not hold" in i.value for i in at.info)
    qi = [w for w in at.multiselect if w.label.startswith("Quasi-identifier")][0]
    qi.set_value(["ZIP", "Gender"]).run()
    assert not at.exception and not at.error
    summary = _summary(at).set_index("schedule")
    # ZIP x gender: 11111/male 4, 11111/female 5, 88888/male 4, 88888/female 2
    assert summary.loc["before appointments", "anonymity vector"] == "(0, 1, 0, 2, 1)"
    assert {"random", "heuristic", "optimal"} <= set(summary.index)
    # the release target's k (5) against the best schedule's k, in records
    best = max(("optimal", "heuristic", "random"), key=lambda m: int(_metrics(at)[f"k, {m}"]))  # ties: optimal first
    verdict = [w.value for w in [*at.warning, *at.success] if w.value.startswith("The release target asks k = 5")]
    assert len(verdict) == 1 and f"the {best} schedule reaches k = {_metrics(at)[f'k, {best}']}" in verdict[0]
    qi.set_value(["ZIP"]).run()
    summary = _summary(at).set_index("schedule")
    assert summary.loc["before appointments", "anonymity vector"] == "(0, 0, 0, 0, 0, 1, 0, 0, 1)"


def test_bad_resources_are_explained():
    at = _page()
    at.session_state["scr_source"] = PAPER
    at.session_state["scr_resources-paper"] = pd.DataFrame(
        {"Centre": ["A", "B"], "Hour": ["9", "9"], "capacity": [4, -1]}
    )
    at.session_state["scr_resources-paper-version"] = 0
    at.run()
    assert not at.exception
    # error sentences are Markdown-escaped (they quote user values); the escapes render invisibly
    shown = [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]
    assert any("whole numbers of 0 or more" in e and "'-1'" in e for e in shown)

    at = _page()
    at.session_state["scr_source"] = PAPER
    at.session_state["scr_resources-paper"] = pd.DataFrame({"Centre": ["A"], "Hour": ["9"], "capacity": [14]})
    at.session_state["scr_resources-paper-version"] = 0
    at.run()
    assert not at.exception
    assert any("14 seats in total but 15 people" in e.value for e in at.error)


def test_experiments_section():
    at = _page()
    at.session_state["scr_source"] = PAPER
    at.run()
    assert "improvement vs real" not in _metrics(at)  # closed at the bottom until switched on
    at.toggle(key="scr_paper").set_value(True).run()
    assert float(_metrics(at)["improvement vs real"].rstrip("%")) > 50
    at.multiselect(key="scr_t10_sizes").set_value([20, 100])
    at.number_input(key="scr_t10_runs").set_value(3)
    at.number_input(key="scr_t10_optimal").set_value(1)
    at.button(key="scr_t10_run").click().run()
    assert not at.exception and not at.error
    table = [d.value for d in at.dataframe if "paper heuristic / random (%)" in d.value.columns][0]
    assert table["N"].tolist() == [20, 100]
    assert table["paper heuristic / random (%)"].tolist() == [24.0, 82.0]
    assert table["runs"].tolist() == [3, 3]
    at.radio(key="scr_t10_protocol").set_value("authors")
    at.button(key="scr_t10_run").click().run()
    assert not at.exception and not at.error
    table = [d.value for d in at.dataframe if "paper heuristic / random (%)" in d.value.columns][0]
    assert table["N"].tolist() == [20, 100] and table["heuristic / random (%)"].between(-100, 100).all()
    at.slider(key="scr_t11_dates").set_value(1)
    at.button(key="scr_t11_run").click().run()
    assert not at.exception and not at.error
    assert any("avg (%)" in d.value.columns and len(d.value) == 5 for d in at.dataframe)


def test_page_runs_inside_the_app():
    at = AppTest.from_file("../../app.py", default_timeout=180)
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception


def test_failed_population_stops_the_page_with_a_sentence(monkeypatch):
    # the page's population block fails (here: the quasi-identifier cannot be analysed);
    # the page shows guarded's sentence and renders nothing that needs the population
    from anonlib.core.dataset import Dataset
    from anonlib.core.errors import ColumnError

    def impossible(self, columns=None, **kwargs):
        raise ColumnError("'**ZIP**' cannot be analysed as a quasi-identifier.")

    monkeypatch.setattr(Dataset, "analysis_frame", impossible)
    at = _page()
    at.session_state["active_dataset"] = load_sample("caballero_table3")
    at.session_state["active_source"] = "sample:caballero_table3"
    at.session_state["scr_source"] = "Your working copy"
    at.run()
    assert not at.exception
    # the user's column name is shown literally: Markdown escaped, no bold
    assert [e.value for e in at.error] == [r"'\*\*ZIP\*\*' cannot be analysed as a quasi\-identifier\."]
    assert not at.dataframe and not at.metric


def test_a_panel_s_optimal_schedule_waits_for_its_button_and_the_rest_answers_at_once():
    """On a trial panel of the hidden panels' size (312 patients, about 1,900 visits; visit day, stage
    and sex as quasi-identifiers) the optimum's tens of thousands of decision variables would keep the
    solver up to its time limit: the random and heuristic schedules show at once, the optimum waits for
    a button saying how long; pressed (time limit 1 s), the optimum joins the comparison."""
    from anonlib.core.dataset import Dataset
    from tests.panel_shapes import trial

    frame = trial(people=312)
    roles = {c: "ignore" for c in frame.columns} | {"id": "person", "day": "quasi-identifier"}
    roles |= {"stage": "quasi-identifier", "sex": "quasi-identifier"}
    at = _page()
    at.session_state["active_dataset"] = Dataset.from_frame("trial.csv", frame).with_roles(roles)
    at.session_state["active_source"] = "upload:trial.csv"
    at.run()
    assert not at.exception and not at.error
    label = r"Compute the optimal schedule \(about (\d+) seconds?\)"
    waits = int(re.fullmatch(label, at.button(key="scr_optimal").label).group(1))
    assert waits >= 10  # the default time limit (10 s) and the model's building
    assert any("The optimal schedule waits for the button" in c.value for c in at.caption)
    assert {"k, random", "k, heuristic"} <= set(_metrics(at)) and "k, optimal" not in _metrics(at)
    assert list(_summary(at)["schedule"]) == ["before appointments", "random", "heuristic"]

    at.slider(key="scr_time_limit").set_value(1).run()
    assert 1 <= int(re.fullmatch(label, at.button(key="scr_optimal").label).group(1)) < waits
    at.button(key="scr_optimal").click().run()
    assert not at.exception and not at.error
    assert "k, optimal" in _metrics(at) and not [b for b in at.button if b.key == "scr_optimal"]
    assert list(_summary(at)["schedule"]) == ["before appointments", "random", "heuristic", "optimal"]
    # the optimum is at least as anonymous as the heuristic: k is never smaller
    assert int(_metrics(at)["k, optimal"]) >= int(_metrics(at)["k, heuristic"])

    # every record unique on more columns: the solver refuses the optimum at once, said without a button
    qi = [w for w in at.multiselect if w.label.startswith("Quasi-identifier")][0]
    qi.set_value(["day", "stage", "sex", "age", "bili"]).run()
    assert not at.exception and not at.error and not [b for b in at.button if b.key == "scr_optimal"]
    assert any(w.value.startswith("The optimal schedule was not computed") for w in at.warning)
