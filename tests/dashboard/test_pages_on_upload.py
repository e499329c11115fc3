"""Dataset, Individual privacy and Risk report pages on an uploaded file (AppTest), and the
release journey: upload -> generalization -> bands -> undo -> report -> package -> `anonlib apply`.

The file is a patient table as a privacy officer would upload it (identifiers, a birth
year, sex, a ZIP code, a diagnosis), not one of the bundled samples. Every number the
pages show is compared with the library's own result.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from uploads import JOURNEY_CSV, registry_csv

from anonlib.core.dataset import Dataset
from anonlib.core.loading import load_table
from anonlib.measures.models import MODEL_NAMES
from anonlib.measures.risk import reidentification
from anonlib.workflow import Reading, Recipe, ReleaseTarget, release_package, verify_package
from anonlib.workflow.findings import individual_privacy, models_section
from anonlib.workflow.report import build_report, copy_report

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
PAGES = ROOT / "pages"
TIMEOUT = 240


CSV = registry_csv()


def uploaded() -> tuple[Dataset, Reading]:
    """The dataset as the Dataset page builds it from the upload (guessed roles)."""
    table = load_table(CSV, name="patients.csv")
    return Dataset.from_frame("patients.csv", table.frame, notes=table.notes), Reading.of(table, CSV)


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def page(name: str, dataset: Dataset | None = None) -> AppTest:
    at = AppTest.from_file(str(PAGES / f"{name}.py"), default_timeout=TIMEOUT)
    at.session_state["active_dataset"] = dataset if dataset is not None else uploaded()[0]
    at.session_state["active_source"] = "upload:patients.csv"
    at.run()
    assert not at.exception, at.exception
    return at


def upload_in_app(data: bytes = CSV) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.radio(key="source_kind").set_value("Upload a file").run()
    at.file_uploader(key="upload").set_value(("patients.csv", data, "text/csv")).run()
    assert not at.exception, at.exception
    assert at.session_state["active_source"] == "upload:patients.csv"
    return at


def test_the_upload_gets_the_expected_roles():
    dataset, _ = uploaded()
    assert dataset.identifiers == ("patient_id", "email")
    assert dataset.quasi_identifiers == ("birth_year", "sex", "zip")
    assert dataset.sensitive == ("diagnosis",)


# ---------------------------------------------------------------- Dataset page


def test_dataset_page_shows_the_library_s_risk_and_models():
    dataset, _ = uploaded()
    at = page("dataset", dataset)
    assert not at.error
    frame, _ = dataset.analysis_frame(list(dataset.quasi_identifiers))
    risk = reidentification(frame, list(dataset.quasi_identifiers))
    shown = metrics(at)
    assert shown["records"] == "400"
    assert shown["prosecutor: highest risk"] == f"{100 * risk.prosecutor_highest:.1f}%"
    assert shown["prosecutor: average risk"] == f"{100 * risk.prosecutor_average:.2f}%"
    assert shown["records at risk > 20%"] == f"{dict(risk.records_above)[0.2]:,}"
    assert shown["marketer risk"] == f"{100 * risk.marketer:.2f}%"
    # the privacy models: one row per model, its value and the records failing it, as the library says
    expected = models_section(dataset)
    table = next(d.value for d in at.dataframe if "records in failing classes" in d.value.columns)
    assert table["model"].tolist() == [MODEL_NAMES[r.model] for r in expected.rows]
    assert table["records in failing classes"].tolist() == [
        "–" if r.failing_records is None else f"{r.failing_records:,}" for r in expected.rows
    ]
    distinct = next(r for r in expected.rows if r.model == "distinct_l")
    assert distinct.failing_records > 0  # ZIP x sex x birth year leaves classes with one diagnosis
    # the HIPAA check flags both identifiers, with their suggested role
    flags = next(d.value for d in at.dataframe if "HIPAA identifier" in d.value.columns)
    assert {"patient_id", "email"} <= set(flags["column"])
    assert set(flags.loc[flags["column"].isin(["patient_id", "email"]), "suggested role"]) == {"identifier"}


def test_a_model_in_the_release_target_is_judged_at_the_target_value():
    from anonlib.measures.models import ModelRequirement

    dataset, _ = uploaded()
    requirement = ModelRequirement("distinct_l", "diagnosis", 3)
    at = AppTest.from_file(str(PAGES / "dataset.py"), default_timeout=TIMEOUT)
    at.session_state["active_dataset"] = dataset
    at.session_state["active_source"] = "upload:patients.csv"
    at.session_state["release_target"] = ReleaseTarget(k=2, requirements=(requirement,))
    at.run()
    assert not at.exception
    table = next(d.value for d in at.dataframe if "records in failing classes" in d.value.columns)
    row = table[table["model"] == MODEL_NAMES["distinct_l"]].iloc[0]
    expected = next(r for r in models_section(dataset, (requirement,)).rows if r.model == "distinct_l")
    assert row["judged at"] == "distinct 3-diversity of diagnosis (release target)"
    assert row["records in failing classes"] == f"{expected.failing_records:,}"
    assert (
        expected.failing_records
        > next(r for r in models_section(dataset).rows if r.model == "distinct_l").failing_records
    )  # l = 3 fails more than 2


def test_coming_back_to_the_dataset_page_keeps_the_upload_and_role_edits_apply_one_after_another():
    at = upload_in_app()
    at.switch_page("pages/report.py").run()
    at.switch_page("pages/dataset.py").run()
    assert not at.exception
    assert at.radio(key="source_kind").value == "Upload a file"
    # the upload box may be empty after another page ran (as in a browser); the file stays loaded
    assert at.file_uploader(key="upload").value is not None or any(
        "Loaded: patients.csv" in c.value.replace("\\", "") for c in at.caption
    )
    assert metrics(at)["records"] == "400"
    # two role edits in a row, each applied on its own run (the editor keeps its input table)
    key = f"roles-{at.session_state['role_editor']['version']}"
    at.session_state[key] = {"edited_rows": {4: {"role": "ignore"}}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert at.session_state["active_dataset"].quasi_identifiers == ("birth_year", "sex")
    assert f"roles-{at.session_state['role_editor']['version']}" == key  # the same widget: no extra click
    at.session_state[key] = {
        "edited_rows": {4: {"role": "ignore"}, 3: {"role": "ignore"}},
        "added_rows": [],
        "deleted_rows": [],
    }
    at.run()
    assert not at.exception
    assert at.session_state["active_dataset"].quasi_identifiers == ("birth_year",)


def test_suggested_roles_button_applies_the_hipaa_suggestions():
    dataset, _ = uploaded()
    at = page("dataset", dataset.with_roles({"email": "quasi-identifier"}))
    at.button(key="apply_suggested_roles").click().run()
    assert not at.exception
    assert "email" in at.session_state["active_dataset"].identifiers


# ---------------------------------------------------------------- Individual privacy page


def test_individual_privacy_page_equals_the_report_for_the_same_setting():
    dataset, _ = uploaded()
    at = page("individuals", dataset)
    assert not at.error
    expected = individual_privacy(dataset)
    report = build_report(dataset, k=5, p=0.0)
    shown = metrics(at)["records protected: diagnosis"]
    assert shown == f"{100 * expected.rows[0].protected_share:.1f}%"
    assert shown == f"{100 * report.privacy.rows[0].protected_share:.1f}%"  # one attacker model, one answer
    assert 0 < expected.rows[0].protected_share < 1
    assert any("knows any combination of a record" in i.value.replace("\\", "") for i in at.info)
    # another threshold moves both the same way
    at.slider(key="peers_p").set_value(0.5).run()
    assert not at.exception
    at_half = build_report(dataset, k=5, p=0.5).privacy.rows[0].protected_share
    assert metrics(at)["records protected: diagnosis"] == f"{100 * at_half:.1f}%"
    assert at_half < expected.rows[0].protected_share
    assert at.session_state["privacy_p"] == 0.5  # shared with the report page


def test_poac_and_a_narrower_attacker_match_the_library():
    dataset, _ = uploaded()
    at = page("individuals", dataset)
    at.radio(key="peers_measure").set_value("poac").run()
    assert not at.exception and not at.error
    poac = individual_privacy(dataset, measure="poac")
    assert metrics(at)["records protected: diagnosis"] == f"{100 * poac.rows[0].protected_share:.1f}%"
    at.radio(key="peers_measure").set_value("ppp").run()
    at.selectbox(key="peers_known").set_value(1).run()
    assert not at.exception and not at.error
    one = individual_privacy(dataset, max_known=1)
    assert metrics(at)["records protected: diagnosis"] == f"{100 * one.rows[0].protected_share:.1f}%"
    assert one.rows[0].protected_share >= individual_privacy(dataset).rows[0].protected_share
    assert any("at most 1 of a record" in i.value.replace("\\", "") for i in at.info)


def test_bands_show_their_cost_first_and_never_default_to_removing_the_column():
    dataset, _ = uploaded()
    at = page("individuals", dataset)
    pick = next(s for s in at.selectbox if s.key and s.key.startswith("peers_pick:"))
    assert pick.value is not None and "(removes the column)" not in pick.options[pick.index]
    assert any(
        m.value.startswith("What it does to the working copy:")
        and "birth_year: 75 values become" in m.value.replace("\\", "")
        for m in at.markdown
    )
    assert not at.session_state["working_copy"].steps  # nothing applied before the click
    at.button(key="peers_apply").click().run()
    assert not at.exception and not at.error
    steps = at.session_state["working_copy"].steps
    assert [(a.page, a.step.column) for a in steps] == [("Individual privacy", "birth_year")]
    assert not steps[0].cost.removes_quasi_identifier
    # zip was read as whole numbers spanning ~10,000 values: not offered for bands (said in a caption)
    assert any("Not offered for bands: zip" in c.value.replace("\\", "") for c in at.caption)
    assert at.session_state["working_copy"].loaded.frame["birth_year"].equals(dataset.frame["birth_year"])


def test_no_sensitive_attribute_says_what_is_missing_and_keeps_the_paper_example_closed():
    dataset, _ = uploaded()
    at = page("individuals", dataset.with_roles({"diagnosis": "ignore"}))
    assert not at.error and not at.metric
    assert any("as sensitive on the Dataset page" in i.value for i in at.info)
    assert at.toggle(key="peers_paper").value is False
    at.toggle(key="peers_paper").set_value(True).run()
    assert not at.exception
    # Kroes et al. Table 1 (option 2): 2 of 5 individuals protected for each variable at p = 0
    assert {k: v for k, v in metrics(at).items()} == {
        "paper: Diagnosis": "40.0%",
        "paper: Gender": "40.0%",
        "paper: Age": "40.0%",
    }


# ---------------------------------------------------------------- Risk report page


def test_report_page_shows_the_working_copy_s_numbers():
    dataset, _ = uploaded()
    at = page("report", dataset)
    assert not at.error
    report = build_report(dataset, k=5)
    shown = metrics(at)
    assert shown["records protected: diagnosis"] == f"{100 * report.privacy.rows[0].protected_share:.1f}%"
    assert shown["k"] == f"{report.risk.k:,}"
    assert shown["marketer risk"] == f"{100 * report.attacker.marketer:.2f}%"
    models = next(d.value for d in at.dataframe if "records in failing classes" in d.value.columns)
    assert models["records in failing classes"].tolist() == [r.failing_records for r in report.models.rows]
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels[0] == "Release package (zip)"
    assert any("No step yet" in c.value for c in at.caption)


# ---------------------------------------------------------------- the journey


def test_journey_upload_generalize_bands_undo_report_package_apply(tmp_path, capsys):
    """Upload -> a generalization on Leakage -> bands on Individual privacy -> undo the bands ->
    the report lists the generalization with its records failing before and after -> the
    package -> `anonlib apply` on the same CSV reproduces the released table byte for byte."""
    at = upload_in_app(JOURNEY_CSV)
    loaded = at.session_state["active_dataset"]
    assert loaded.quasi_identifiers == ("birth_year", "sex", "zip")

    # Leakage: generalize sex and zip only (birth year is left for the bands)
    at.switch_page("pages/leakage.py").run()
    assert not at.exception and not at.error
    shield = next(m for m in at.multiselect if str(m.key).startswith("shield-"))
    shield.set_value(["sex", "zip"]).run()
    assert not at.exception and not at.error
    at.button(key="leakage_apply").click().run()
    assert not at.exception and not at.error
    copy = at.session_state["working_copy"]
    assert [a.page for a in copy.steps] == ["Leakage"]
    generalized = copy.steps[0]
    assert set(generalized.changed_columns) <= {"sex", "zip"} and "zip" in generalized.changed_columns
    assert copy.current.frame["zip"].nunique() < loaded.frame["zip"].nunique()
    assert copy.current.frame["birth_year"].equals(loaded.frame["birth_year"])

    # Individual privacy: bands on the birth year of the generalized copy
    at.switch_page("pages/individuals.py").run()
    assert not at.exception and not at.error
    at.button(key="peers_apply").click().run()
    assert not at.exception and not at.error
    copy = at.session_state["working_copy"]
    assert [a.page for a in copy.steps] == ["Leakage", "Individual privacy"]
    assert copy.steps[1].step.column == "birth_year"
    assert copy.current.frame["zip"].equals(generalized.frame["zip"])  # the bands start from the generalized copy

    # undo one step (the sidebar's button): the generalization stays, the loaded file is untouched
    at.button(key="sidebar_undo").click().run()
    assert not at.exception
    copy = at.session_state["working_copy"]
    assert copy.steps == (generalized,)
    assert copy.loaded is loaded and copy.current.frame.equals(generalized.frame)

    # the report lists the remaining step with its records failing the target before and after
    at.switch_page("pages/report.py").run()
    assert not at.exception and not at.error
    steps = next(d.value for d in at.dataframe if "records failing after" in d.value.columns)
    assert steps["page"].tolist() == ["Leakage"]
    assert steps["records failing before"].tolist() == [generalized.before.failing_records]
    assert steps["records failing after"].tolist() == [generalized.after.failing_records]
    assert generalized.before.failing_records == ReleaseTarget(k=5).check(loaded).failing_records
    assert generalized.after.failing_records < generalized.before.failing_records

    # the package the page offers (same function, same report)
    package = release_package(copy, report=copy_report(copy, p=at.session_state["report_p"]))
    files = zipfile.ZipFile(io.BytesIO(package))
    assert files.namelist() == ["released.csv", "report.html", "recipe.json", "README.txt", "SHA256SUMS"]
    assert b"Release steps" in files.read("report.html")
    released = files.read("released.csv")
    assert b"patient_id" not in released.splitlines()[0] and b"email" not in released.splitlines()[0]
    (tmp_path / "recipe.json").write_bytes(files.read("recipe.json"))
    (tmp_path / "patients.csv").write_bytes(JOURNEY_CSV)
    from anonlib.cli import main

    code = main(
        ["apply", str(tmp_path / "recipe.json"), str(tmp_path / "patients.csv"), "--out", str(tmp_path / "out.csv")]
    )
    # exit 0 when the release target (k = 5 on birth year, sex and zip) is met, 1 naming what fails
    assert code == (0 if generalized.after.failing_records == 0 else 1), capsys.readouterr().err
    assert (tmp_path / "out.csv").read_bytes() == released  # byte for byte
    # the package states the upload's SHA-256 (the page hashed the uploaded bytes) and verifies against it
    assert Recipe.loads(files.read("recipe.json")).source.sha256 == hashlib.sha256(JOURNEY_CSV).hexdigest()
    checks = verify_package(package, JOURNEY_CSV, source_name="patients.csv")
    assert checks.failed_parts == (() if generalized.after.failing_records == 0 else ("target",)), checks.checks


@pytest.mark.parametrize("name", ["dataset", "individuals", "report"])
def test_pages_run_on_the_upload_without_a_sentence_of_failure(name):
    at = page(name)
    assert not at.error


def test_the_dataset_page_s_at_risk_chart_counts_people_with_a_person_column():
    """With a person column the small-class counts are people: the chart says so and divides by the
    people (it divided them by the records: 16% shown where every person was unique)."""
    import json as _json

    import numpy as np
    import pandas as pd

    from anonlib.measures.profile import risk_profile

    rng = np.random.default_rng(3)
    people = rng.integers(0, 40, 200)
    frame = pd.DataFrame({"pid": [f"p{p}" for p in people], "age": 20 + people, "sex": rng.choice(["F", "M"], 200)})
    dataset = Dataset.from_frame(
        "v.csv", frame, {"pid": "person", "age": "quasi-identifier", "sex": "quasi-identifier"}
    )
    at = page("dataset", dataset)
    assert not at.exception
    specs = [_json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    (chart,) = [s for s in specs if s["layout"].get("title", {}).get("text") == "People at risk"]
    risk = risk_profile(dataset)
    expected = [100.0 * n / risk.persons for _, n in risk.records_below]
    assert chart["data"][0]["y"] == pytest.approx(expected) and max(expected) == 100.0
