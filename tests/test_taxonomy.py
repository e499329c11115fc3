"""The bundled taxonomies (anonlib.core.taxonomy) and the defaults that use them: US states,
countries, race spellings, ICD-10 and ICD-9 chapters; values a taxonomy does not know go under "other"."""

from __future__ import annotations

import pandas as pd
import pytest

from anonlib.core.errors import HierarchyError
from anonlib.core.hierarchy import default_hierarchy, level_lookup, levels_of, validate_hierarchy
from anonlib.core.samples import load_sample
from anonlib.core.taxonomy import TAXONOMIES, icd9_path, icd10_path, taxonomy_for, taxonomy_match


def rows(table: pd.DataFrame) -> dict[str, list[str]]:
    return {row[0]: list(row[1:]) for row in table.astype(str).itertuples(index=False)}


def test_us_states_by_name_and_code_go_to_division_and_region():
    name, table = taxonomy_for(["Tennessee", "TN", "new york", "CA", "Ohio"])
    assert name == "US states"
    found = rows(table)
    assert found["Tennessee"] == found["TN"] == ["East South Central", "South", "*"]
    assert found["new york"] == ["Middle Atlantic", "Northeast", "*"]
    assert found["CA"] == ["Pacific", "West", "*"]
    assert found["Ohio"] == ["East North Central", "Midwest", "*"]
    validate_hierarchy(table)


def test_adults_native_country_gets_the_country_taxonomy_covering_every_value():
    column = load_sample("adult").frame["native-country"]
    kind, table = default_hierarchy(column, "native-country")
    assert kind == "bundled taxonomy"
    validate_hierarchy(table, column, "native-country")  # every value is covered
    found = rows(table)
    assert found["United-States"] == ["North America", "*"]
    assert found["Mexico"] == ["North America", "*"]
    assert found["Philippines"] == ["Asia", "*"]
    assert found["Holand-Netherlands"] == ["Europe", "*"]
    assert found["Columbia"] == ["South America", "*"]
    match = taxonomy_match(column)
    assert match.name == "countries"
    assert match.other == ["South", "Outlying-US(Guam-USVI-etc)"]  # ambiguous names: "other"
    assert found["South"] == ["other", "*"]
    assert match.coverage == pytest.approx(39 / 41)


def test_country_spellings_with_spaces_match():
    name, table = taxonomy_for(["United States", "El Salvador", "germany", "Viet-Nam", "Japan"])
    assert name == "countries"
    assert rows(table)["El Salvador"] == ["North America", "*"]


@pytest.mark.parametrize("values, groups", [
    (["White", "Black", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other"],
     ["White", "Black or African American", "Asian or Pacific Islander", "Other or multiple", "Other or multiple"]),
    (["Caucasian", "AfricanAmerican", "Hispanic", "Asian", "Other"],
     ["White", "Black or African American", "Other or multiple", "Asian or Pacific Islander", "Other or multiple"]),
    (["White", "Black or African American", "American Indian or Alaska Native", "Asian",
      "Native Hawaiian or Other Pacific Islander", "Some other race"],
     ["White", "Black or African American", "Other or multiple", "Asian or Pacific Islander",
      "Asian or Pacific Islander", "Other or multiple"]),
])
def test_race_spellings_of_omb_adult_and_diabetes(values, groups):
    name, table = taxonomy_for(values)
    assert name == "race (OMB)"
    assert [rows(table)[v][0] for v in values] == groups
    validate_hierarchy(table, values)


def test_diabetes_race_with_missing_values_is_the_race_taxonomy():
    column = load_sample("diabetes").frame["race"]
    kind, table = default_hierarchy(column, "race")
    assert kind == "bundled taxonomy"
    validate_hierarchy(table, column, "race")


def test_icd10_codes_go_to_category_and_chapter():
    assert icd10_path("E11.9") == ("E11", "E00-E90 Endocrine and metabolic")
    assert icd10_path("C34.1")[1] == icd10_path("D48")[1] == "C00-D49 Neoplasms"
    assert icd10_path("A09")[1] == "A00-B99 Infectious and parasitic"
    assert icd10_path("S72.001A")[1] == icd10_path("T14")[1] == "S00-T98 Injury and poisoning"
    assert icd10_path("250.83") is None
    kind, table = default_hierarchy(["E11.9", "I10", "J45.909", "E11.65", "F32.A"], "diagnosis")
    assert kind == "bundled taxonomy"
    found = rows(table)
    assert found["E11.9"] == ["E11", "E00-E90 Endocrine and metabolic", "*"]
    assert found["I10"] == ["I10", "I00-I99 Circulatory system", "*"]
    validate_hierarchy(table)


def test_icd9_codes_go_to_their_zero_padded_category_and_chapter():
    assert icd9_path("250.83") == ("250", "240-279 Endocrine, metabolic and immunity")
    assert icd9_path("8") == icd9_path("008.45")[:1] + ("001-139 Infectious and parasitic",) == (
        "008", "001-139 Infectious and parasitic")
    assert icd9_path("428")[1] == icd9_path("459.9")[1] == "390-459 Circulatory system"
    assert icd9_path("139")[1] == "001-139 Infectious and parasitic" and icd9_path("140")[1] == "140-239 Neoplasms"
    assert icd9_path("999")[1] == "800-999 Injury and poisoning"
    assert icd9_path("V27.0") == ("V27", "V01-V91 Health status and services (V codes)")
    assert icd9_path("E909.1") == ("E909", "E000-E999 External causes (E codes)")
    assert [icd9_path(c) for c in ("0", "1000", "E11.9", "V123", "abc", "250.833")] == [None] * 6
    assert icd9_path("V2")[0] == "V02"  # a leading zero dropped, as numbers lose theirs


@pytest.mark.parametrize("column", ["diag_1", "diag_2", "diag_3"])
def test_the_diabetes_diagnoses_are_icd9_and_every_code_is_known(column):
    values = load_sample("diabetes").frame[column]
    match = taxonomy_match(values)
    assert match.name == "ICD-9 chapters" and match.other == [] and match.coverage == 1.0
    kind, table = default_hierarchy(values, column)
    assert kind == "bundled taxonomy"
    found = rows(validate_hierarchy(table, values, column))
    for code, path in found.items():  # every code's category is its own first three characters, zero-padded
        assert path[0] == (code.split(".")[0].zfill(3) if code[0].isdigit() else code.split(".")[0]), code
        assert path[1].split(" ")[0].split("-")[0] <= path[0] <= path[1].split(" ")[0].split("-")[1], code
        assert path[2] == "*"


def test_numbers_alone_are_not_taken_for_icd9_and_icd10_columns_stay_icd10():
    assert taxonomy_for(["12", "45.5", "130", "99", "250.83"]) is None  # no V or E code: measurements
    assert taxonomy_match(["12", "45.5", "130"], name="ICD-9 chapters").coverage == 1.0  # asked for by name
    assert taxonomy_match(["E11.9", "I10", "J45", "E66", "V27.0"]).name == "ICD-10 chapters"
    match = taxonomy_match(["250.83", "428", "V27", "E909", "8"])
    assert match.name == "ICD-9 chapters" and rows(match.table)["E909"][0] == "E909"  # not ICD-10's E90


def test_uncovered_values_go_under_other_and_too_few_known_values_mean_no_taxonomy():
    assert taxonomy_for(["Tennessee", "Ohio", "Atlantis", "Narnia"]) is None  # 50% known
    assert taxonomy_for(["apple", "pear", "plum"]) is None
    assert taxonomy_for(list(range(100))) is None
    states = [s for s in ("Alabama Alaska Arizona Arkansas California Colorado Delaware Florida Georgia Hawaii "
                          "Idaho Illinois Indiana Iowa Kansas Kentucky Louisiana Maine Maryland").split()]
    match = taxonomy_match(states + ["Atlantis"])
    assert match.name == "US states" and match.other == ["Atlantis"]
    assert rows(match.table)["Atlantis"] == ["other", "other", "*"]
    validate_hierarchy(match.table, states + ["Atlantis"])


def test_a_taxonomy_can_be_asked_for_by_name():
    match = taxonomy_match(["Texas", "Mars"], name="US states")
    assert match.other == ["Mars"] and match.coverage == 0.5
    with pytest.raises(HierarchyError, match="no bundled taxonomy called 'planets'"):
        taxonomy_match(["Texas"], name="planets")
    assert set(TAXONOMIES) == {"ICD-10 chapters", "ICD-9 chapters", "US states", "countries", "race (OMB)"}


@pytest.mark.parametrize("sample, column", [
    ("adult", "workclass"), ("adult", "education"), ("adult", "race"), ("adult", "marital-status"),
    ("diabetes", "medical_specialty"), ("diabetes", "diag_1"), ("diabetes", "age"),
])
def test_every_built_default_is_valid_on_the_samples(sample, column):
    values = load_sample(sample).frame[column]
    kind, table = default_hierarchy(values, column)
    assert kind in {"bundled taxonomy", "frequency"}
    checked = validate_hierarchy(table, values, column)
    assert set(checked[levels_of(checked)]) == {"*"}
    labels = sorted(set(values.dropna().astype(str)))
    lookup, names = level_lookup(table, labels, column)
    assert [len(n) for n in names] == sorted((len(n) for n in names), reverse=True)
