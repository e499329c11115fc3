"""AppTest of the Leakage & anonymization page on an uploaded-like file: the working copy by
default, the generalization found applied as a step (cost first, never one removing a
quasi-identifier by default), the paper's example behind its toggle, and the Leakage part of
the end-to-end journey (upload -> generalize -> sidebar step in records -> undo)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest
from uploads import put_upload, uploaded

from anonlib.core.dataset import Dataset
from anonlib.core.default_hierarchy import default_hierarchy
from anonlib.core.hierarchy import flat_hierarchy, value_key
from anonlib.core.samples import load_sample
from anonlib.measures.leakage import leakage_table, truncated
from anonlib.transformations.anonymize_experiments import arca_hierarchies
from anonlib.transformations.generalization import search
from anonlib.workflow import GeneralizationStep, ReleaseTarget

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "leakage.py")
TIMEOUT = 180
QIS = ["age", "sex", "zip"]


def words(elements) -> list[str]:
    """Texts as the reader sees them (Markdown backslash escapes removed)."""
    return [re.sub(r"\\(.)", r"\1", str(e.value)) for e in elements]


def metrics(at: AppTest) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for m in at.metric:
        out.setdefault(m.label, []).append(m.value)
    return out


def pick(at: AppTest):
    return next(r for r in at.radio if str(r.key).startswith("leakage_pick-"))


def trimmed(table: pd.DataFrame) -> pd.DataFrame:
    """A hierarchy without its top levels of one value (slow, obvious reference)."""
    while table.shape[1] > 1 and len(set(table.iloc[:, -1])) == 1:
        table = table.iloc[:, :-1]
    return table


@pytest.fixture(scope="module")
def upload():
    return uploaded()


@pytest.fixture(scope="module")
def expected(upload):
    """The library's answers on the same file: the least-loss generalization (the page's
    default), the paper's IAB optimum on the default hierarchies, and IAB on hierarchies
    that keep every quasi-identifier."""
    dataset, _ = upload
    frame, _ = dataset.analysis_frame(QIS + ["diagnosis"])
    hierarchies = {c: default_hierarchy(frame[c], c)[1] for c in QIS}
    keeping = {c: trimmed(h) for c, h in hierarchies.items()}
    return {
        "frame": frame,
        "hierarchies": hierarchies,
        "optimal": search(frame, QIS, 5, hierarchies, "optimal"),
        "optimum": search(frame, QIS, 5, hierarchies, "iab"),
        "greedy": search(frame, QIS, 5, hierarchies, "greedy"),
        "keeping": search(frame, QIS, 5, keeping, "iab"),
    }


@pytest.fixture(scope="module")
def page(upload) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    put_upload(at, *upload)
    at.run()
    assert not at.exception and not at.error
    return at


def test_opens_on_the_working_copy(page, upload):
    dataset, _ = upload
    assert any(c.startswith("Working copy patients.csv: 2,000 records") for c in words(page.caption))
    table = page.dataframe[0].value.set_index("attribute")
    frame, _ = dataset.analysis_frame(QIS + ["diagnosis"])
    reference = leakage_table(frame, QIS + ["diagnosis"]).set_index("attribute")
    assert table.loc["age", "normalized"] == pytest.approx(reference.loc["age", "normalized"])
    assert table.index[0] == "age"  # the most revealing column of this file
    assert not page.toggle(key="leakage_paper_table1").value  # the paper's example is closed


def test_headline_in_records_and_distinct_combinations(page, expected):
    optimal, optimum = expected["optimal"], expected["optimum"]
    shown = metrics(page)
    # the optimal search first, then the paper's methods, each with its loss in the same measure
    assert shown["distinct combinations"][:2] == [f"{optimal.rows:,}", f"{optimum.rows:,}"]
    assert shown["information loss"][:2] == [f"{optimal.utility:.4f}", f"{optimum.utility:.4f}"]
    assert optimal.optimal and optimal.utility < optimum.utility
    assert shown["records suppressed"][0] == "0"
    assert (
        f"from {optimum.root.rows:,}: {optimum.root.rows - optimum.rows:,} merged; no record is lost "
        "(all 2,000 records stay)." in words(page.caption)
    )
    assert any(
        c.startswith(f"Proven optimal; {optimal.checked:,} of {optimal.lattice_size:,} generalizations")
        for c in words(page.caption)
    )
    check = ReleaseTarget(k=5).check(uploaded()[0])
    assert (
        f"Now: 2,000 records in {optimum.root.rows:,} distinct combinations; {check.failing_records:,} records "
        "in classes failing the target." in [w.replace("**", "") for w in words(page.markdown)]
    )
    assert "rows kept" not in shown


def test_a_choice_removing_a_quasi_identifier_is_labelled_and_never_the_default(page, expected):
    optimal, optimum = expected["optimal"], expected["optimum"]
    assert optimum.levels == {"age": 0, "sex": 0, "zip": 5}  # the paper's objective: zip becomes *****
    radio = pick(page)
    labels = list(radio.options)  # as shown, least loss first
    chosen = labels[radio.value]
    raised = ", ".join(f"{a} to level {v}" for a, v in optimal.levels.items() if v)
    assert radio.value == 0 and chosen.startswith("Optimal (least loss, proven)") and "removes" not in chosen
    assert (
        f": {raised} (loss metric (Iyengar) {optimal.utility:.4f}, no record suppressed, "
        f"{optimal.rows:,} distinct combinations)" in chosen
    )
    removing = next(
        label for label in labels if label.startswith("IAB (Arca & Hewett) and Exhaustive (Method 1): zip to level 5")
    )
    assert removing.endswith("removes the quasi-identifier zip") and f"{optimum.utility:.4f}" in removing
    assert labels.index(removing) > 0
    assert "age: 70 values become 7." in "\n".join(words(page.markdown))
    assert words(page.success) == [
        "This generalization against the release target. Met: all 2,000 records are in classes meeting k = 5."
    ]


def test_choosing_the_optimum_that_removes_zip_warns(upload):
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    put_upload(at, *upload)
    at.run()
    removing = next(i for i, label in enumerate(pick(at).options) if "removes the quasi-identifier zip" in label)
    pick(at).set_value(removing).run()
    assert not at.exception
    assert any("removes a quasi-identifier entirely" in w for w in words(at.warning))
    assert any("zip is replaced by *****: the column is effectively removed." in m for m in words(at.markdown))


def test_applying_puts_the_search_result_on_the_working_copy(upload, expected):
    dataset, _ = upload
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    put_upload(at, *upload)
    at.run()
    at.button(key="leakage_apply").click().run()
    assert not at.exception
    copy = at.session_state["working_copy"]
    assert len(copy.steps) == 1 and copy.steps[0].page == "Leakage"
    step = copy.steps[0].step
    keeping = expected["optimal"]
    assert step == GeneralizationStep.from_search(keeping, expected["hierarchies"])
    assert dict(step.levels) == keeping.levels
    current = copy.current.frame
    # the working copy holds the generalized values: the hierarchy's level of every original value
    age_level, zip_level = keeping.levels["age"], keeping.levels["zip"]
    ages = expected["hierarchies"]["age"].set_index(0, drop=False)[age_level]
    assert current["age"].tolist() == [ages[str(v)] for v in dataset.frame["age"]]
    zips = expected["hierarchies"]["zip"].set_index(0, drop=False)[zip_level]
    assert current["zip"].astype(str).tolist() == [zips[str(v)] for v in dataset.frame["zip"]]
    assert current["sex"].tolist() == dataset.frame["sex"].tolist()
    assert len(current) == 2000 and copy.check.met
    # the page now analyses the generalized copy: nothing left to generalize
    assert any("already form classes meeting the target" in s for s in words(at.success))


def test_a_file_without_quasi_identifiers_says_what_is_missing():
    dataset, reading = uploaded(
        roles={c: "ignore" for c in ["age", "sex", "zip", "diagnosis"]} | {"patient_id": "identifier"}
    )
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    put_upload(at, dataset, reading)
    at.run()
    assert not at.exception
    assert any("Mark the quasi-identifiers" in i for i in words(at.info))
    assert not at.metric


# --- the paper's worked example, behind its toggle ----------------------------------


@pytest.fixture()
def example() -> AppTest:
    dataset, reading = uploaded(
        roles={c: "ignore" for c in ["age", "sex", "zip", "diagnosis"]} | {"patient_id": "identifier"}
    )
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    put_upload(at, dataset, reading)
    at.run()
    at.toggle(key="leakage_paper_table1").set_value(True).run()
    assert not at.exception
    return at


def test_paper_example_reproduces_table1(example):
    assert not example.error
    shown = metrics(example)
    assert shown["distinct combinations"] == ["21", "21", "18"]
    assert shown["tables checked"] == ["13", "71", "3"]
    assert any("22 distinct combinations, 5 in classes smaller than k" in m for m in words(example.markdown))
    table = example.dataframe[0].value.set_index("attribute")
    assert table.loc["Age", "partitions"] == 13
    assert truncated([table.loc["Zip", "loss"], table.loc["Sex", "normalized"]]) == [2.75, 0.16]
    both = next(d.value for d in example.dataframe if "before" in d.value.columns)
    assert both.set_index("attribute").loc["Age", "after"] < both.set_index("attribute").loc["Age", "before"]
    assert "working_copy" not in example.session_state or not example.session_state["working_copy"].steps


def test_paper_example_controls_and_a_bad_hierarchy(example):
    example.number_input(key="k-example").set_value(4).run()
    df = load_sample("arca_table1").frame
    hierarchies = arca_hierarchies(df)
    assert metrics(example)["distinct combinations"][0] == str(
        search(df, ["Zip", "Age", "AC"], 4, hierarchies, count="#Rec.").rows
    )
    example.selectbox(key="hb-example-AC").set_value("flat").run()
    greedy = search(
        df, ["Zip", "Age", "AC"], 4, dict(hierarchies, AC=flat_hierarchy(df["AC"])), "greedy", count="#Rec."
    )
    assert metrics(example)["distinct combinations"][2] == str(greedy.rows)
    example.text_input(key="hi-example-Age").set_value("20-34 | 20-44").run()
    assert not example.exception
    assert any("'35' is in no band of level 1" in e for e in words(example.error))
    assert "distinct combinations" not in metrics(example)


def test_missing_value_setting_changes_the_rows_analysed():
    frame = pd.DataFrame(
        {
            "age": [30, 30, 40, 40, 50, None, None, 60, 50, 30],
            "sex": ["m", "f", "m", "f", "m", "f", "m", None, "f", "m"],
            "dx": ["a", "b", "a", "b", "a", "a", "b", "b", "b", "a"],
        }
    )
    roles = {"age": "quasi-identifier", "sex": "quasi-identifier", "dx": "sensitive"}
    dataset = Dataset.from_frame("toy with gaps", frame, roles, missing="category")

    def shown_and_expected(at: AppTest, ds: Dataset):
        table = next(
            d.value for d in at.dataframe if "normalized" in d.value.columns and "attribute" in d.value.columns
        )
        rows, _ = ds.analysis_frame(["age", "sex", "dx"])
        reference = leakage_table(rows, ["age", "sex", "dx"])
        return (
            table.set_index("attribute")["normalized"].sort_index(),
            reference.set_index("attribute")["normalized"].sort_index(),
        )

    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.session_state["active_dataset"] = dataset
    at.session_state["active_source"] = "upload:toy"
    at.run()
    assert not at.exception
    assert any(c.startswith("Working copy toy with gaps: 10 records.") for c in words(at.caption))
    shown, reference = shown_and_expected(at, dataset)
    assert shown.to_dict() == pytest.approx(reference.to_dict())
    dropping = dataset.with_missing("drop")
    at.session_state["active_dataset"] = dropping
    at.session_state["active_source"] = "upload:toy"
    at.run()
    assert not at.exception
    assert any("7 records" in c and "3 rows with missing values left out" in c for c in words(at.caption))
    shown_after, reference_after = shown_and_expected(at, dropping)
    assert shown_after.to_dict() == pytest.approx(reference_after.to_dict())
    assert shown_after.to_dict() != pytest.approx(shown.to_dict())


# --- the journey, Leakage part: upload -> generalize -> sidebar -> undo ------------------


def sidebar_words(at: AppTest) -> str:
    return "\n".join(
        words(
            [
                *at.sidebar.success,
                *at.sidebar.info,
                *at.sidebar.warning,
                *at.sidebar.markdown,
                *at.sidebar.caption,
                *at.sidebar.text,
            ]
        )
    )


def test_journey_upload_generalize_then_undo(upload, expected):
    dataset, reading = upload
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    put_upload(at, dataset, reading)
    at.run()
    at.switch_page("pages/leakage.py").run()
    assert not at.exception
    failing = ReleaseTarget(k=5).check(dataset).failing_records
    assert "No step yet" in sidebar_words(at)
    at.button(key="leakage_apply").click().run()
    assert not at.exception
    side = sidebar_words(at)
    optimal = expected["optimal"]
    step = GeneralizationStep.from_search(optimal, expected["hierarchies"])
    assert f"1. Leakage: {step.describe()}" in side
    assert f"records failing the target {failing:,} -> 0" in side
    assert "Met: all 2,000 records are in classes meeting k = 5." in side
    ages = at.session_state["working_copy"].current.frame["age"].nunique()
    assert ages == expected["hierarchies"]["age"][optimal.levels["age"]].nunique() < dataset.frame["age"].nunique()
    at.sidebar.button(key="sidebar_undo").click().run()
    assert not at.exception
    copy = at.session_state["working_copy"]
    assert copy.steps == () and copy.current is dataset
    side = sidebar_words(at)
    assert "1. Leakage" not in side and "No step yet" in side
    assert copy.current.frame["age"].nunique() == dataset.frame["age"].nunique()


def test_paper_experiment_behind_its_toggle(example):
    example.toggle(key="leakage_paper_experiment").set_value(True).run()
    assert not example.exception and not example.error
    table = next(d.value for d in example.dataframe if "paper: distinct combinations" in d.value.columns)
    assert len(table) == 3 * 4 * 3  # datasets x quasi-identifier sets x methods at k = 5
    cleveland = table[
        (table["dataset"].astype(str).str.contains("Cleveland")) & table["paper: distinct combinations"].notna()
    ]
    assert len(cleveland) and "shield" not in table.columns


def test_the_search_follows_the_release_targets_suppression_limit(upload, expected):
    dataset, reading = upload
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    put_upload(at, dataset, reading)
    at.session_state["release_target"] = ReleaseTarget(k=5, max_suppressed=0.05)
    at.run()
    assert not at.exception and not at.error
    result = search(expected["frame"], QIS, 5, expected["hierarchies"], "optimal", max_suppressed=0.05)
    chosen = list(pick(at).options)[pick(at).value]
    raised = ", ".join(f"{a} to level {v}" for a, v in result.levels.items() if v)
    assert chosen.startswith("Optimal (least loss, proven)") and f": {raised} (" in chosen and "removes" not in chosen
    assert result.suppressed and f"{result.utility:.4f}, {result.suppressed:,} records suppressed" in chosen
    assert result.utility < expected["optimal"].utility  # a 5% limit lets the search keep more detail


def test_the_flat_builder_and_the_taxonomy_list_values_in_reading_order(upload):
    """The flat builder's editor and the taxonomy's suggested group list a column's values as a
    person reads them (ages ascending as numbers, text alphabetical), not in the file's order."""
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    put_upload(at, *upload)
    at.run()
    scope = next(s.key for s in at.selectbox if str(s.key).startswith("hb-") and str(s.key).endswith("-age"))[3:-4]
    at.selectbox(key=f"hb-{scope}-age").set_value("flat").run()
    assert not at.exception
    table = next(e.value for e in at.data_editor if str(e.key).startswith(f"he-{scope}-age"))
    ages = upload[0].frame["age"].dropna()
    first_seen = [value_key(a) for a in ages.unique()]
    assert table["original"].astype(str).tolist() == sorted(first_seen, key=float) != first_seen
    assert set(table["level 1"]) == {"*"}
    at.selectbox(key=f"hb-{scope}-sex").set_value("taxonomy").run()
    sexes = sorted({value_key(v) for v in upload[0].frame["sex"].dropna()}, key=str.casefold)
    assert at.text_area(key=f"hx-{scope}-sex").value == "*: " + ", ".join(sexes)


def test_the_builder_codes_tails_covers_unlisted_values_and_shows_the_tree(upload):
    """Intervals with a typed bottom-coding limit put the young under one value; a taxonomy
    that forgets a value warns, names it and puts it under 'other' (unticked: the error
    names it and the search waits); every valid hierarchy has its tree."""
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    put_upload(at, *upload)
    at.run()
    scope = next(s.key for s in at.selectbox if str(s.key).startswith("hb-") and str(s.key).endswith("-age"))[3:-4]
    at.selectbox(key=f"hb-{scope}-age").set_value("intervals").run()
    at.text_input(key=f"hl-{scope}-age").set_value("30").run()
    assert not at.exception
    ages = upload[0].frame["age"]
    young = sorted({str(a) for a in ages if a < 30})
    table = next(e.value for e in at.data_editor if "-age-" in str(e.key) or str(e.key).startswith(f"he-{scope}-age"))
    coded = dict(zip(table["original"].astype(str), table["level 1"]))
    assert young and all(coded[a] == "<30" for a in young)
    assert all(coded[a] != "<30" for a in coded if float(a) >= 30)

    at.selectbox(key=f"hb-{scope}-sex").set_value("taxonomy").run()
    at.text_area(key=f"hx-{scope}-sex").set_value("*: F").run()
    assert any("does not list 1 of the column's values: M" in w for w in words(at.warning))
    assert at.checkbox(key=f"hc-{scope}-sex").value and not at.exception
    assert not any("hierarchy of sex does not cover" in w for w in words(at.error))
    at.checkbox(key=f"hc-{scope}-sex").uncheck().run()
    assert any("does not cover the value 'M'" in w for w in words(at.error))
    trees = [str(e.label) for e in at.expander if str(e.label).startswith("Tree of ")]
    assert trees == ["Tree of age", "Tree of zip"]  # every valid hierarchy; sex's is not valid now


def test_searches_estimated_over_a_moment_wait_for_a_button_and_a_k_searched_before_shows_at_once(upload, monkeypatch):
    """With the searches estimated over INSTANT_SECONDS (as counted in people at 10^5 records),
    changing k shows a button saying how long they take instead of searching; pressing it shows
    the generalizations; going back to a k already searched shows them at once, never searching
    again; the hierarchies are not rebuilt from the records on any rerun."""
    import anonlib.core.hierarchy as hierarchy
    import anonlib.workflow.suggestions as suggestions
    import dashboard.memo as memo_module

    searched = []
    real = suggestions.find_generalizations
    monkeypatch.setattr(
        suggestions, "find_generalizations", lambda *a, **kw: searched.append(kw["target"].k) or real(*a, **kw)
    )
    monkeypatch.setattr(memo_module, "INSTANT_SECONDS", 0.0)
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    put_upload(at, *upload)
    at.run()
    at.session_state["release_target"] = ReleaseTarget(k=7)  # a k no other test searched
    at.run()
    assert not at.exception and 7 not in searched
    button = at.button(key="leakage_search")
    assert re.fullmatch(r"Compute the generalizations meeting the target \(about .+\)", str(button.label))
    assert not any(str(r.key).startswith("leakage_pick-") for r in at.radio)
    button.click().run()
    assert not at.exception and searched.count(7) == 1
    assert pick(at).options and "distinct combinations" in metrics(at)
    labels = list(pick(at).options)
    at.session_state["release_target"] = ReleaseTarget(k=8)
    at.run()
    assert at.button(key="leakage_search") and searched.count(8) == 0
    keys = []
    looked_up = hierarchy.value_key
    monkeypatch.setattr(hierarchy, "value_key", lambda v: keys.append(v) or looked_up(v))
    at.session_state["release_target"] = ReleaseTarget(k=7)
    at.run()
    assert not at.exception and searched.count(7) == 1  # kept: shown without searching again
    assert list(pick(at).options) == labels
    assert len(keys) < 2_000  # each distinct value looked up, not each of the 2,000 records per column
