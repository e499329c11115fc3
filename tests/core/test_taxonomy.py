"""The bundled taxonomies (anonlib.core.taxonomy) and the defaults that use them: US states,
countries, race spellings, ICD-10 blocks and chapters, ICD-9 chapters; values a taxonomy does
not know go under "other"."""

from __future__ import annotations

import csv
from importlib import resources

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonlib.core.default_hierarchy import default_hierarchy
from anonlib.core.errors import HierarchyError
from anonlib.core.hierarchy import level_lookup, levels_of, validate_hierarchy
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


@pytest.mark.parametrize(
    "values, groups",
    [
        (
            ["White", "Black", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other"],
            [
                "White",
                "Black or African American",
                "Asian or Pacific Islander",
                "Other or multiple",
                "Other or multiple",
            ],
        ),
        (
            ["Caucasian", "AfricanAmerican", "Hispanic", "Asian", "Other"],
            [
                "White",
                "Black or African American",
                "Other or multiple",
                "Asian or Pacific Islander",
                "Other or multiple",
            ],
        ),
        (
            [
                "White",
                "Black or African American",
                "American Indian or Alaska Native",
                "Asian",
                "Native Hawaiian or Other Pacific Islander",
                "Some other race",
            ],
            [
                "White",
                "Black or African American",
                "Other or multiple",
                "Asian or Pacific Islander",
                "Asian or Pacific Islander",
                "Other or multiple",
            ],
        ),
    ],
)
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


def test_icd10_codes_go_to_category_block_and_chapter():
    assert icd10_path("E11.9") == ("E11", "E10-E14 Diabetes mellitus", "E00-E90 Endocrine and metabolic")
    assert icd10_path("C34.1")[2] == icd10_path("D48")[2] == "C00-D49 Neoplasms"
    assert icd10_path("A09")[2] == "A00-B99 Infectious and parasitic"
    assert icd10_path("S72.001A")[2] == icd10_path("T14")[2] == "S00-T98 Injury and poisoning"
    assert icd10_path("250.83") is None
    kind, table = default_hierarchy(["E11.9", "I10", "J45.909", "E11.65", "F32.A"], "diagnosis")
    assert kind == "bundled taxonomy"
    found = rows(table)
    assert found["E11.9"] == ["E11", "E10-E14 Diabetes mellitus", "E00-E90 Endocrine and metabolic", "*"]
    assert found["I10"] == ["I10", "I10-I15 Hypertensive diseases", "I00-I99 Circulatory system", "*"]
    validate_hierarchy(table)


@pytest.mark.parametrize(
    "code, category, block, chapter",
    [
        ("E11.9", "E11", "E10-E14 Diabetes mellitus", "E00-E90 Endocrine and metabolic"),
        ("I21.0", "I21", "I20-I25 Ischaemic heart diseases", "I00-I99 Circulatory system"),
        ("C34.1", "C34", "C30-C39 Malignant neoplasms of respiratory and intrathoracic organs", "C00-D49 Neoplasms"),
        ("S72.001A", "S72", "S70-S79 Injuries to the hip and thigh", "S00-T98 Injury and poisoning"),
        ("F32", "F32", "F30-F39 Mood (affective) disorders", "F00-F99 Mental and behavioural"),
        ("J45", "J45", "J40-J47 Chronic lower respiratory diseases", "J00-J99 Respiratory system"),
        ("A00.1", "A00", "A00-A09 Intestinal infectious diseases", "A00-B99 Infectious and parasitic"),
        ("A97.0", "A97", "A92-A99 Arthropod-borne viral and haemorrhagic fevers", "A00-B99 Infectious and parasitic"),
        ("C50.9", "C50", "C50-C50 Malignant neoplasm of breast", "C00-D49 Neoplasms"),
        ("D48", "D48", "D37-D48 Neoplasms of uncertain or unknown behaviour", "C00-D49 Neoplasms"),
        (
            "T14",
            "T14",
            "T08-T14 Injuries to unspecified part of trunk, limb or body region",
            "S00-T98 Injury and poisoning",
        ),
        ("U07.1", "U07", "U00-U49 Provisional assignment of new diseases or emergency use", "U00-U99 Special purposes"),
        ("Y09", "Y09", "X85-Y09 Assault", "V00-Y99 External causes"),
        (
            "Z99.2",
            "Z99",
            "Z80-Z99 Family and personal history and conditions influencing health status",
            "Z00-Z99 Health status and services",
        ),
    ],
)
def test_icd10_codes_go_to_their_who_block(code, category, block, chapter):
    assert icd10_path(code) == (category, block, chapter)


@pytest.mark.parametrize(
    "code, chapter",
    [
        ("D49.2", "C00-D49 Neoplasms"),  # ICD-10-CM's neoplasms of unspecified behaviour: no WHO block
        ("C4A.9", "C00-D49 Neoplasms"),  # sorts between C45 and C50, yet is not in C45-C49
        ("D3A.0", "C00-D49 Neoplasms"),  # sorts inside D37-D48, yet is not there
        ("E08.9", "E00-E90 Endocrine and metabolic"),  # between E00-E07 and E10-E14
        ("K95.0", "K00-K95 Digestive system"),
        ("O9A.1", "O00-O99 Pregnancy and childbirth"),
        ("M1A.0", "M00-M99 Musculoskeletal system"),
        ("A90", "A00-B99 Infectious and parasitic"),  # dengue before the WHO's 2016 update (now A97)
        ("V00.1", "V00-Y99 External causes"),
    ],
)
def test_icd10_cm_categories_in_no_who_block_repeat_their_chapter(code, chapter):
    category, block, found_chapter = icd10_path(code)
    assert (block, found_chapter) == (chapter, chapter)


def _icd10_table(file: str) -> list[tuple[str, str, str]]:
    text = resources.files("anonlib.core").joinpath("taxonomies", file).read_text(encoding="utf-8")
    return [tuple(row.values()) for row in csv.DictReader(text.splitlines())]


BLOCKS = _icd10_table("icd10_blocks.csv")
CHAPTERS = _icd10_table("icd10_chapters.csv")
CATEGORIES = [
    f"{letter}{tens}{third}"
    for letter in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    for tens in "0123456789"
    for third in "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
]


def test_the_who_blocks_are_sorted_disjoint_and_each_inside_one_chapter():
    assert len(BLOCKS) == 263  # the WHO's ICD-10 2019 groups
    for first, last, label in BLOCKS:
        assert first <= last and label.startswith(f"{first}-{last} ") and label[len(first) + len(last) + 2 :].strip()
        assert first[2].isdigit() and last[2].isdigit()
        assert sum(lo <= first and last <= hi for lo, hi, _ in CHAPTERS) == 1, label
    for (_, last, label), (first, _, following) in zip(BLOCKS, BLOCKS[1:]):
        assert last < first, (label, following)  # sorted, no overlap
    assert len({label for _, _, label in BLOCKS}) == len(BLOCKS)


def test_each_category_has_at_most_one_block_and_its_block_is_in_its_chapter():
    for category in CATEGORIES:
        holding = [label for first, last, label in BLOCKS if first <= category <= last and category[2].isdigit()]
        assert len(holding) <= 1, category
        path = icd10_path(category)
        if path is None:
            assert not any(lo <= category <= hi for lo, hi, _ in CHAPTERS), category
            continue
        assert path[0] == category
        assert path[1] == (holding[0] if holding else path[2]), category
        block_first, block_last = path[1].split(" ")[0].split("-")
        chapter_first, chapter_last = path[2].split(" ")[0].split("-")
        assert chapter_first <= block_first <= block_last <= chapter_last or path[1] == path[2], category


_codes = st.builds(
    lambda category, rest: category + rest,
    st.sampled_from(CATEGORIES),
    st.one_of(
        st.just(""), st.from_regex(r"\.[0-9A-Z]{1,4}", fullmatch=True), st.from_regex(r"[0-9]{1,2}", fullmatch=True)
    ),  # E11.9, S72.001A; E119 (no dot)
)


@settings(max_examples=60, deadline=None)
@given(codes=st.lists(_codes, min_size=1, max_size=40, unique=True))
def test_the_icd10_hierarchy_of_any_column_of_codes_nests(codes):
    known = [code for code in codes if icd10_path(code) is not None]
    if not known:
        return
    match = taxonomy_match(known, name="ICD-10 chapters")
    table = validate_hierarchy(match.table, known)  # raises when a value has two parents
    assert table.shape[1] == 5 and set(table[4]) == {"*"}
    for level in range(1, 4):  # each value at level i has exactly one parent at level i + 1
        assert table.groupby(level)[level + 1].nunique().max() == 1
    for code, *path in table.itertuples(index=False):
        assert tuple(path[:3]) == icd10_path(code)
        assert path[0] == code.upper()[:3]


def test_icd9_codes_go_to_their_zero_padded_category_and_chapter():
    assert icd9_path("250.83") == ("250", "240-279 Endocrine, metabolic and immunity")
    assert (
        icd9_path("8")
        == icd9_path("008.45")[:1] + ("001-139 Infectious and parasitic",)
        == ("008", "001-139 Infectious and parasitic")
    )
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
    match = taxonomy_match(["E11.9", "I10", "J45", "E66", "V27.0"])
    assert match.name == "ICD-10 chapters"
    assert rows(match.table)["E66"] == [
        "E66",
        "E65-E68 Obesity and other hyperalimentation",
        "E00-E90 Endocrine and metabolic",
        "*",
    ]
    match = taxonomy_match(["250.83", "428", "V27", "E909", "8"])
    assert match.name == "ICD-9 chapters" and rows(match.table)["E909"][0] == "E909"  # not ICD-10's E90


def test_uncovered_values_go_under_other_and_too_few_known_values_mean_no_taxonomy():
    assert taxonomy_for(["Tennessee", "Ohio", "Atlantis", "Narnia"]) is None  # 50% known
    assert taxonomy_for(["apple", "pear", "plum"]) is None
    assert taxonomy_for(list(range(100))) is None
    states = [
        s
        for s in (
            "Alabama Alaska Arizona Arkansas California Colorado Delaware Florida Georgia Hawaii "
            "Idaho Illinois Indiana Iowa Kansas Kentucky Louisiana Maine Maryland"
        ).split()
    ]
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


@pytest.mark.parametrize(
    "sample, column",
    [
        ("adult", "workclass"),
        ("adult", "education"),
        ("adult", "race"),
        ("adult", "marital-status"),
        ("diabetes", "medical_specialty"),
        ("diabetes", "diag_1"),
        ("diabetes", "age"),
    ],
)
def test_every_built_default_is_valid_on_the_samples(sample, column):
    values = load_sample(sample).frame[column]
    kind, table = default_hierarchy(values, column)
    assert kind in {"bundled taxonomy", "frequency"}
    checked = validate_hierarchy(table, values, column)
    assert set(checked[levels_of(checked)]) == {"*"}
    labels = sorted(set(values.dropna().astype(str)))
    lookup, names = level_lookup(table, labels, column)
    assert [len(n) for n in names] == sorted((len(n) for n in names), reverse=True)
