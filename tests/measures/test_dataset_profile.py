"""Dataset roles, the missing-value policy and the risk profile on the papers' tables."""

from __future__ import annotations

import pandas as pd
import pytest

from anonlib.core.dataset import Dataset, Role, convert_column, guess_roles
from anonlib.core.errors import ColumnError, EmptySelectionError, ParameterError
from anonlib.core.samples import SAMPLES, load_sample
from anonlib.measures.profile import column_profile, risk_profile


def test_role_guesses_from_names() -> None:
    df = pd.DataFrame(
        {
            "Full Name": ["a"],
            "patient_id": [1],
            "#Rec.": [3],
            "Age": [30],
            "ZIP": ["1"],
            "Diagnosis": ["x"],
            "notes": ["y"],
        }
    )
    roles = guess_roles(df)
    assert roles == {
        "Full Name": Role.IDENTIFIER,
        "patient_id": Role.IDENTIFIER,
        "#Rec.": Role.COUNT,
        "Age": Role.QUASI_IDENTIFIER,
        "ZIP": Role.QUASI_IDENTIFIER,
        "Diagnosis": Role.SENSITIVE,
        "notes": Role.IGNORE,
    }


def test_an_internal_code_is_an_identifier_but_a_zip_code_is_not() -> None:
    roles = guess_roles(pd.DataFrame({"Code": [1, 2], "ZIP code": ["1", "2"], "age": [3, 4]}))
    assert (roles["Code"], roles["ZIP code"]) == (Role.IDENTIFIER, Role.QUASI_IDENTIFIER)


def test_a_count_named_column_with_text_is_not_a_count() -> None:
    assert guess_roles(pd.DataFrame({"n": ["a", "b"], "age": [1, 2]}))["n"] is Role.IGNORE


def test_caballero_table1_profile_matches_the_paper() -> None:
    ds = load_sample("caballero_table1")
    assert ds.identifiers == ("Full Name", "Address")
    risk = risk_profile(ds)
    assert (risk.records, risk.classes, risk.k, risk.vector) == (15, 4, 2, (0, 1, 0, 2, 1))
    assert risk.unique_records == 0
    assert risk.records_below == ((2, 0), (5, 10), (10, 15))


def test_count_column_is_honoured_in_the_profile() -> None:
    ds = load_sample("arca_table1")
    assert ds.count == "#Rec." and ds.n_records == 60 and ds.n_rows == 22
    risk = risk_profile(ds, ["Sex"])
    # 27 women and 33 men, counted from #Rec. without expanding rows
    assert len(risk.vector) == 33 and risk.vector[26] == 1 and risk.vector[32] == 1
    assert sum(risk.vector) == 2


def test_missing_policy_drops_rows_and_says_how_many() -> None:
    df = pd.DataFrame({"age": [30, None, 30, 40], "sex": ["f", "m", None, "m"]})
    ds = Dataset.from_frame("t", df, {"age": "quasi-identifier", "sex": "quasi-identifier"})
    kept = risk_profile(ds)
    assert (kept.records, kept.rows_dropped, kept.vector) == (4, 0, (4,))
    dropped = risk_profile(ds.with_missing("drop"))
    assert (dropped.records, dropped.rows_dropped, dropped.vector) == (2, 2, (2,))


def test_identifiers_are_never_analysed() -> None:
    ds = load_sample("caballero_table1")
    with pytest.raises(ColumnError, match="identifier"):
        ds.analysis_frame(["Full Name", "ZIP"])
    frame, _ = ds.analysis_frame()
    assert "Full Name" not in frame.columns and "Address" not in frame.columns


def test_bad_roles_and_selections() -> None:
    ds = load_sample("caballero_table2b")
    with pytest.raises(ParameterError, match="not a role"):
        ds.with_roles({"ZIP": "secret"})
    with pytest.raises(ColumnError, match="do not exist"):
        ds.with_roles({"zip": "quasi-identifier"})
    with pytest.raises(EmptySelectionError, match="at least one column as quasi-identifier"):
        risk_profile(ds.with_roles({c: "ignore" for c in ds.frame.columns}))
    with pytest.raises(ColumnError, match="Only one column can hold record counts"):
        Dataset.from_frame("t", pd.DataFrame({"a": [1], "b": [2]}), {"a": "count", "b": "count"})
    with pytest.raises(ParameterError, match="category"):
        ds.with_missing("impute")


def test_column_conversion() -> None:
    df = pd.DataFrame({"a": ["1", "2", None], "b": ["1.5", "x", "2"]})
    assert convert_column(df, "a", "integer")["a"].tolist()[:2] == [1, 2]
    with pytest.raises(ColumnError, match="'x' is not a number"):
        convert_column(df, "b", "number")
    with pytest.raises(ColumnError, match="decimals"):
        convert_column(pd.DataFrame({"c": [1.5]}), "c", "integer")
    assert convert_column(df, "a", "category")["a"].tolist()[:2] == ["1", "2"]


def test_column_profile_counts_distinct_and_missing() -> None:
    ds = load_sample("adult")
    profile = {p.column: p for p in column_profile(ds)}
    assert profile["sex"].distinct == 2
    assert profile["workclass"].missing == 1836
    assert profile["occupation"].missing == 1843
    assert profile["native-country"].missing == 583


@pytest.mark.parametrize("key", sorted(SAMPLES))
def test_every_sample_loads_with_its_roles(key: str) -> None:
    ds = load_sample(key)
    assert ds.n_rows > 0
    for column in SAMPLES[key].roles:
        assert column in ds.frame.columns
    assert risk_profile(ds).records == ds.n_records


def test_dates_of_events_are_quasi_identifiers_by_name_or_by_their_values() -> None:
    roles = guess_roles(
        pd.DataFrame(
            {
                "admitted": ["2024-01-02", "2024-02-03"],  # a date word
                "test_date": ["x", "y"],  # a date word beats the sensitive 'test'
                "when": ["2024-01-02 10:30", None],  # ISO dates whatever the name
                "candidate": ["a", "b"],  # 'date' inside a word is not a date
                "readmitted": ["NO", "<30"],  # still sensitive
                "diagnosis": ["E11.9", "I10"],
                "visits": [1, 2],  # a number of visits is not a date
                "pid": ["2024-01-02", "2024-13-45"],  # date-shaped values alone, any name
                "died": ["yes", "no"],  # an outcome flag, not a date
            }
        )
    )
    assert roles == {
        "admitted": Role.QUASI_IDENTIFIER,
        "test_date": Role.QUASI_IDENTIFIER,
        "when": Role.QUASI_IDENTIFIER,
        "candidate": Role.IGNORE,
        "readmitted": Role.SENSITIVE,
        "diagnosis": Role.SENSITIVE,
        "visits": Role.IGNORE,
        "pid": Role.QUASI_IDENTIFIER,
        "died": Role.IGNORE,
    }
