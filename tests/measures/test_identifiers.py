"""HIPAA Safe Harbor identifier check (anonlib.measures.identifiers): names and values of columns."""

from __future__ import annotations

import pandas as pd
import pytest

from anonlib.core.dataset import Role
from anonlib.core.errors import ParameterError
from anonlib.core.samples import load_sample
from anonlib.measures.identifiers import HIPAA_IDENTIFIERS, flags_table, hipaa_identifiers

N = 30


def _flags(df: pd.DataFrame) -> dict[str, tuple[str, Role]]:
    return {f.column: (f.letter, f.suggested_role) for f in hipaa_identifiers(df)}


def test_values_of_each_kind_are_recognised_whatever_the_column_is_called() -> None:
    df = pd.DataFrame(
        {
            "c1": [f"person{i}@clinic.example.org" for i in range(N)],
            "c2": [f"(555) 01{i % 10}-12{i:02d}" for i in range(N)],
            "c3": [f"123-45-{1000 + i}" for i in range(N)],
            "c4": [f"2019-03-{1 + i % 28:02d}" for i in range(N)],
            "c5": [f"192.168.1.{i}" for i in range(N)],
            "c6": [f"https://example.org/patient/{i}" for i in range(N)],
            "c7": [f"0{2100 + i}" for i in range(N)],
            "c8": [f"1HGCM82633A00{4352 + i}" for i in range(N)],
            "c9": [
                f"{first} {last}"
                for first in ["Anna", "Ben", "Carla", "Dev", "Eun"]
                for last in ["Smith", "Jones", "Okafor", "Lee", "Ng", "Diaz"]
            ],
            "c10": [f"MRN{i:06d}X" for i in range(N)],
            "c11": [f"{1 + i % 12}/{1 + i % 28}/1987" for i in range(N)],
            "diagnosis": ["flu", "asthma", "flu"] * 10,
            "cholesterol": [180 + i for i in range(N)],
        }
    )
    assert _flags(df) == {
        "c1": ("F", Role.IDENTIFIER),
        "c2": ("D", Role.IDENTIFIER),
        "c3": ("G", Role.IDENTIFIER),
        "c4": ("C", Role.QUASI_IDENTIFIER),
        "c5": ("O", Role.IDENTIFIER),
        "c6": ("N", Role.IDENTIFIER),
        "c7": ("B", Role.QUASI_IDENTIFIER),
        "c8": ("L", Role.IDENTIFIER),
        "c9": ("A", Role.IDENTIFIER),
        "c10": ("R", Role.IDENTIFIER),
        "c11": ("C", Role.QUASI_IDENTIFIER),
    }


@pytest.mark.parametrize(
    "name, letter",
    [
        ("Full Name", "A"),
        ("patient_name", "A"),
        ("Street Address", "B"),
        ("zip_code", "B"),
        ("DOB", "C"),
        ("dateOfBirth", "C"),
        ("admission", "C"),
        ("Telephone", "D"),
        ("fax_no", "E"),
        ("E-mail", "F"),
        ("SSN", "G"),
        ("MRN", "H"),
        ("medical record number", "H"),
        ("health_plan_id", "I"),
        ("account number", "J"),
        ("license_no", "K"),
        ("VIN", "L"),
        ("device serial", "M"),
        ("website", "N"),
        ("ip_address", "O"),
        ("fingerprint", "P"),
        ("photo", "Q"),
        ("patient_id", "R"),
    ],
)
def test_column_names_of_the_eighteen_kinds(name, letter) -> None:
    df = pd.DataFrame({name: [f"v{i}" if letter == "R" else "x" for i in range(N)]})
    (flag,) = hipaa_identifiers(df)
    assert flag.letter == letter and flag.identifier == HIPAA_IDENTIFIERS[letter] and name in flag.reason


@pytest.mark.parametrize(
    "name", ["drug_name", "diagnosis", "admission_type_id", "age", "income", "num", "education-num"]
)
def test_ordinary_columns_are_not_flagged(name) -> None:
    assert hipaa_identifiers(pd.DataFrame({name: [1, 2, 3] * 10})) == ()


def test_ages_over_89_and_the_bundled_samples() -> None:
    flags = hipaa_identifiers(load_sample("adult").frame)
    assert [(f.column, f.letter, f.reason) for f in flags] == [("age", "C", "43 records have an age over 89")]
    assert [f.column for f in hipaa_identifiers(load_sample("caballero_table1").frame)] == [
        "Full Name",
        "Address",
        "ZIP",
    ]
    diabetes = hipaa_identifiers(load_sample("diabetes").frame)
    assert [(f.column, f.letter) for f in diabetes] == [("encounter_id", "R"), ("patient_nbr", "R")]
    assert hipaa_identifiers(load_sample("heart_cleveland").frame) == ()


def test_numbers_that_only_look_like_zip_codes_are_not_places() -> None:
    assert hipaa_identifiers(pd.DataFrame({"amount": [10000 + 37 * i for i in range(N)]})) == ()


def test_table_and_bad_input() -> None:
    table = flags_table(hipaa_identifiers(pd.DataFrame({"email": ["a@b.org"] * 3})))
    assert table.iloc[0].to_dict() == {
        "column": "email",
        "HIPAA identifier": "(F) e-mail addresses",
        "why": "its name ('email') and 100% of the sampled values look like e-mail addresses",
        "suggested role": "identifier",
        "what to do": "drop it or replace it with a code that is not derived from it",
    }
    with pytest.raises(ParameterError, match="at least 1"):
        hipaa_identifiers(pd.DataFrame({"a": [1]}), sample=0)
