"""The risk report: values equal the library's, sections fail alone, the HTML is safe; the CLI command."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import anonlib.workflow.report as report_module
from anonlib.__main__ import main
from anonlib.core.dataset import Dataset, Role
from anonlib.core.default_hierarchy import default_hierarchy
from anonlib.core.errors import ParameterError
from anonlib.core.metrics import weighted_median
from anonlib.core.samples import load_sample
from anonlib.measures.leakage import leakage_table
from anonlib.measures.peers import estimate_minimum, min_ppp
from anonlib.measures.profile import risk_profile
from anonlib.transformations.generalization import search
from anonlib.workflow.report import Note, build_report
from anonlib.workflow.report_html import render_html

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def caballero():
    return build_report(load_sample("caballero_table2b"), k=2)


@pytest.fixture(scope="module")
def arca():
    return build_report(load_sample("arca_table1"), k=3, p=0.2)


def test_caballero_table2b_risk_is_the_papers(caballero):
    risk = caballero.risk
    assert (risk.k, risk.vector) == (2, (0, 1, 0, 2, 1))
    profile = risk_profile(load_sample("caballero_table2b"))
    assert (risk.records, risk.classes, risk.unique_records, risk.records_below) == (
        profile.records,
        profile.classes,
        profile.unique_records,
        profile.records_below,
    )
    assert caballero.dataset.columns == (
        ("Code", "identifier"),
        ("ZIP", "quasi-identifier"),
        ("Gender", "quasi-identifier"),
        ("Age", "quasi-identifier"),
    )


def test_no_sensitive_column_is_a_note_not_a_failure(caballero):
    assert [n.section for n in caballero.notes] == ["Individual privacy", "Privacy models"]
    assert caballero.privacy is None
    assert caballero.leakage is not None and caballero.generalization is not None


def test_arca_leakage_is_leakage_table_top_ten(arca):
    ds = load_sample("arca_table1")
    columns = list(ds.quasi_identifiers + ds.sensitive)
    table = leakage_table(ds.frame, columns, count="#Rec.").sort_values("normalized", ascending=False, kind="stable")
    assert [r.attribute for r in arca.leakage.rows] == table["attribute"].head(10).tolist()
    assert [r.normalized for r in arca.leakage.rows] == pytest.approx(table["normalized"].head(10).tolist())
    assert arca.leakage.measured == len(columns) == 7
    assert arca.leakage.rows[0].partitions == 13  # Age: the paper's Table 2


def test_arca_privacy_is_min_ppp_weighted_by_records(arca):
    ds = load_sample("arca_table1")
    values = min_ppp(ds.frame, "Genetic risk", list(ds.quasi_identifiers), count="#Rec.")
    weights = ds.frame["#Rec."].to_numpy()
    row = arca.privacy.rows[0]
    assert row.sensitive == "Genetic risk" and arca.privacy.p == 0.2
    assert row.protected_share == pytest.approx(weights[values > 0.2].sum() / weights.sum())
    assert row.median_min_ppp == weighted_median(values, weights)
    assert arca.privacy.auxiliary == ds.quasi_identifiers


def test_arca_generalization_is_the_optimal_search(arca):
    ds = load_sample("arca_table1")
    frame, _ = ds.analysis_frame(list(ds.quasi_identifiers + ds.sensitive))
    hierarchies = {a: default_hierarchy(frame[a], a)[1] for a in ds.quasi_identifiers}
    result = search(frame, list(ds.quasi_identifiers), 3, hierarchies, "optimal", count="#Rec.")
    g = arca.generalization
    assert {a: level for a, level, _, _ in g.levels} == result.levels
    assert (g.rows, g.violations, g.original_rows, g.original_violations, g.generated) == (
        result.rows,
        result.violations,
        result.root.rows,
        result.root.violations,
        result.generated,
    )
    assert (g.measure, g.utility, g.optimal, g.suppressed) == ("loss", result.utility, True, 0)
    assert g.original_rows == 22 and g.violations == 0
    # no other generalization of the lattice meeting k = 3 loses less (the paper's IAB among them)
    iab = search(frame, list(ds.quasi_identifiers), 3, hierarchies, "iab", count="#Rec.")
    assert g.utility <= iab.utility
    assert f"information loss of {g.utility:.4f} (loss metric (Iyengar)" in " ".join(arca.sentences)


def test_sentences_name_the_numbers(arca):
    risk = arca.risk
    assert (
        arca.sentences[0] == f"{100 * risk.unique_share:.1f}% of records are unique on Sex, AC, Age, Zip, Weight, Race."
    )
    assert any(s.startswith("Generalizing ") and "at least 3 records" in s for s in arca.sentences)


def test_adult_sentence_as_in_the_brief():
    ds = load_sample("adult").with_roles(
        {c: Role.IGNORE for c in load_sample("adult").quasi_identifiers}
        | {
            "age": Role.QUASI_IDENTIFIER,
            "sex": Role.QUASI_IDENTIFIER,
            "race": Role.QUASI_IDENTIFIER,
            "occupation": Role.IGNORE,
        }
    )
    r = build_report(ds, k=5)
    assert r.risk.unique_records == 65  # as the profile command prints for age, sex, race
    assert r.sentences[0] == "0.2% of records are unique on age, race, sex."  # data column order


def test_a_failing_section_becomes_a_note(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(report_module, "leakage_table", broken)
    r = build_report(load_sample("caballero_table2b"), k=2)
    assert r.leakage is None and r.risk is not None and r.generalization is not None
    assert Note("Information leakage", "This section could not be computed because of an unexpected error.") in r.notes
    page = render_html(r)
    assert "could not be computed" in page and "boom" not in page


def test_no_quasi_identifier_gives_notes_for_the_dependent_sections():
    ds = Dataset.from_frame("d", pd.DataFrame({"x": [1, 2, 3]})).with_roles({"x": Role.SENSITIVE})
    r = build_report(ds)
    assert r.risk is None and r.privacy is None and r.generalization is None
    assert {n.section for n in r.notes} == {
        "Re-identification risk",
        "Individual privacy",
        "Suggested generalization",
        "Attacker models",
        "Privacy models",
    }
    assert r.leakage.rows[0].attribute == "x"
    assert "<h2>Re-identification risk</h2>" in render_html(r)


def test_too_large_lattice_is_a_note():
    r = build_report(load_sample("adult"), max_lattice=10)
    assert r.generalization is None
    assert "more than the report's limit of 10" in {n.section: n.text for n in r.notes}["Suggested generalization"]


def test_individual_privacy_too_long_is_narrowed_and_says_how():
    ds = load_sample("adult")
    frame, _ = ds.analysis_frame(list(ds.quasi_identifiers + ds.sensitive))
    qis = list(ds.quasi_identifiers)
    full = sum(estimate_minimum(frame, s, qis).seconds for s in ds.sensitive)
    # 70% of what all 64 combinations need: at most 3 of the 6 QIs known at once (42 of 64; 4 would need 57)
    r = build_report(ds, privacy_seconds=full * 0.7)
    assert r.privacy.auxiliary == ds.quasi_identifiers and r.privacy.max_known == 3
    text = {n.section: n.text for n in r.notes}["Individual privacy"]
    assert text.startswith(
        "An adversary is assumed to know at most 3 of the 6 quasi-identifiers at once: all 64 "
        "combinations would take about"
    )
    assert "the minimum is over the 42 combinations of at most 3." in text
    for row, s in zip(r.privacy.rows, ds.sensitive):
        values = min_ppp(frame, s, qis, max_known=3)
        assert row.protected_share == pytest.approx((values > 0).mean())
    assert "at most 3 of age" in render_html(r)
    assert any("whatever combination of at most 3 of age" in sentence for sentence in r.sentences)
    nothing = build_report(ds, privacy_seconds=full / 1000)
    assert nothing.privacy is None
    assert {n.section: n.text for n in nothing.notes}["Individual privacy"].startswith(
        "Not computed: even with an adversary knowing one quasi-identifier at a time, the minimum PPP of "
        "2 sensitive attributes over 32,561 records would take about"
    )


def test_individual_privacy_above_200000_records_is_computed():
    adult = load_sample("adult")
    rng = np.random.default_rng(0)
    big = adult.frame.iloc[rng.integers(0, len(adult.frame), 250_000)].reset_index(drop=True)
    ds = Dataset.from_frame("adult x 250k", big).with_roles(
        {c: Role.IGNORE for c in big.columns}
        | {
            "age": Role.QUASI_IDENTIFIER,
            "sex": Role.QUASI_IDENTIFIER,
            "race": Role.QUASI_IDENTIFIER,
            "income": Role.SENSITIVE,
        }
    )
    r = build_report(ds, k=5)
    assert r.privacy is not None and r.privacy.max_known is None
    assert not [n for n in r.notes if n.section == "Individual privacy"]
    values = min_ppp(big, "income", ["age", "race", "sex"])
    assert r.privacy.rows[0].protected_share == pytest.approx((values > 0).mean())


def test_progress_advances_through_every_section_and_ends_once_complete():
    calls: list[tuple[int, int, str]] = []
    r = build_report(load_sample("adult"), k=5, progress=lambda *call: calls.append(call))
    assert r.privacy is not None and r.generalization is not None
    done = [d for d, _, _ in calls]
    assert done == sorted(done) and {t for _, t, _ in calls} == {7000}
    assert calls[-1] == (7000, 7000, "report complete") and all(d < 7000 for d in done[:-1])
    sections = [what.split(":")[0] for _, _, what in calls[:-1]]
    assert list(dict.fromkeys(sections)) == [
        "Re-identification risk",
        "Information leakage",
        "Individual privacy",
        "Suggested generalization",
        "Attacker models",
        "Privacy models",
    ]
    assert any("auxiliary combinations for income" in what for _, _, what in calls)
    assert len([s for s in sections if s == "Individual privacy"]) > 10  # the walk reports as it goes


def test_no_solution_is_a_note():
    ds = load_sample("caballero_table2b")
    r = build_report(ds, k=100)
    assert r.generalization is None
    assert any(n.section == "Suggested generalization" for n in r.notes)


@pytest.mark.parametrize(
    "kwargs, phrase",
    [
        ({"k": 0}, "k must be a whole number"),
        ({"p": 1.0}, "below 1"),
        ({"max_known": 0}, "whole number of at least 1"),
        ({"privacy_seconds": 0}, "must be positive"),
    ],
)
def test_bad_parameters(kwargs, phrase):
    with pytest.raises(ParameterError, match=phrase):
        build_report(load_sample("caballero_table2b"), **kwargs)


def test_html_escapes_a_hostile_column_and_name():
    frame = pd.DataFrame({HOSTILE: ["a", "a", "b", "b"], "y": ["<i>", "<i>", "&", "x"], "z": [1, 2, 3, 4]})
    ds = Dataset.from_frame(HOSTILE, frame).with_roles(
        {HOSTILE: Role.QUASI_IDENTIFIER, "y": Role.QUASI_IDENTIFIER, "z": Role.SENSITIVE}
    )
    r = build_report(ds, k=2)
    page = render_html(r)
    assert "<script" not in page.lower() and "http" not in page.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<i>" not in page
    assert r.risk.quasi_identifiers == (HOSTILE, "y")


def test_html_is_self_contained_and_printable(arca):
    page = render_html(arca)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "@media print" in page
    assert not re.search(r"<script|http|src=|href=|@import|url\(", page, re.IGNORECASE)
    # dataset (2), risk, attacker models (2), privacy models, leakage, privacy, generalization, parameters
    assert page.count("<table>") == 10
    assert "<tr><td>quasi-identifier</td><td>Sex, AC, Age, Zip, Weight, Race</td></tr>" in page
    assert f"<td>{arca.risk.k}</td>" in page


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from("ab<&"), st.integers(0, 3), st.sampled_from(["x", "y"])), min_size=1, max_size=40
    ),
    st.integers(1, 4),
)
def test_risk_equals_the_profile_on_random_tables(rows, k):
    frame = pd.DataFrame(rows, columns=["q1", "q2", "s"])
    ds = Dataset.from_frame("random", frame).with_roles(
        {"q1": Role.QUASI_IDENTIFIER, "q2": Role.QUASI_IDENTIFIER, "s": Role.SENSITIVE}
    )
    r = build_report(ds, k=k)
    profile = risk_profile(ds)
    assert (r.risk.k, r.risk.vector, r.risk.unique_records) == (profile.k, profile.vector[:30], profile.unique_records)
    values = min_ppp(frame, "s", ["q1", "q2"])
    assert r.privacy.rows[0].protected_share == pytest.approx(float(np.mean(values > 0)))
    assert "<script" not in render_html(r)


# --------------------------------------------------------------------------- CLI


def test_cli_report_to_a_file(tmp_path, capsys):
    out = tmp_path / "report.html"
    assert main(["report", "--sample", "caballero_table2b", "--k", "2", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""  # written only where asked
    page = out.read_text(encoding="utf-8")
    assert page == render_html(
        build_report(load_sample("caballero_table2b"), k=2, created=re.search(r"Created (\S+) ", page).group(1))
    )
    assert "(0, 1, 0, 2, 1)" in page


def test_cli_report_of_a_file_to_stdout(capsys):
    path = str(ROOT / "data" / "samples" / "arca_table1.csv")
    assert main(["report", path, "--qi", "Sex,Age", "--count", "#Rec.", "--k", "3"]) == 0
    page = capsys.readouterr().out
    assert "Quasi-identifiers: Sex, Age" in page and "<td>60</td>" in page


def test_cli_report_errors(tmp_path, capsys):
    assert main(["report", "--sample", "adult", "--qi", "agee"]) == 2
    assert "do not exist in the data: agee" in capsys.readouterr().err
    assert main(["report", "--sample", "caballero_table2b", "--out", str(tmp_path / "no" / "r.html")]) == 2
    assert "Could not write" in capsys.readouterr().err


def test_sentences_when_nothing_needs_generalizing():
    r = build_report(load_sample("caballero_table2b"), k=2)
    assert r.generalization.levels and all(level == 0 for _, level, _, _ in r.generalization.levels)
    assert "Every class already has at least 2 records; no generalization is needed." in r.sentences
    adult = build_report(load_sample("adult"), k=5, p=0.5)
    assert any("(more than 50.0% of look-alikes have another value)" in s for s in adult.sentences)


def test_no_rows_left_is_a_note_in_every_data_section():
    frame = pd.DataFrame({"age": [None, None, 30.0], "s": ["a", "b", None]})
    ds = Dataset.from_frame("m", frame).with_roles({"age": Role.QUASI_IDENTIFIER, "s": Role.SENSITIVE})
    r = build_report(ds.with_missing("drop"))
    assert r.dataset.rows_dropped == 3 and r.sentences[0] == "100.0% of records are unique on age."
    assert r.risk is not None and r.risk.records == 1  # the QIs alone keep the row with an age
    assert [n.section for n in r.notes] == [
        "Information leakage",
        "Individual privacy",
        "Suggested generalization",
        "Privacy models",
    ]
    assert all(n.text.startswith("There are no records to analyse") for n in r.notes)
    empty = build_report(Dataset.from_frame("e", frame.iloc[:0]).with_roles({"age": Role.QUASI_IDENTIFIER}))
    assert empty.risk is None and len(empty.notes) == 6 and empty.sentences == ()  # + attacker and privacy models
