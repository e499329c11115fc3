"""Roles from the file's structure (linkable.md part 2, section 8): the person found because a
time varies within its values whatever its name, the household because its small groups
differ in age or sex, a day or year never the person, names that said the wrong thing
(clinic_name, wages, a stage) corrected; checked on small files with the real panels'
shapes (``tests/panel_shapes.py``) and the bundled samples, and recounted with pandas."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonlib.cli import main
from anonlib.core.dataset import Role, guess_role, role_guesses
from anonlib.core.samples import load_sample
from anonlib.core.structure import (
    _codes,
    _varied,
    find_structure,
    is_day_offset,
    is_time,
    name_says_age,
)
from tests.panel_shapes import HOUSEHOLDS, SHAPES


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_person_is_found_by_structure_and_the_time_is_never_the_person(shape):
    make, person, time = SHAPES[shape]
    frame = make()
    found = find_structure(frame)
    assert (found.person.column, found.person.time) == (person, time)
    guesses = role_guesses(frame, contents=True)
    assert guesses[person].role is Role.PERSON and "one person per value" in guesses[person].reason
    assert Role.PERSON not in (guesses[time].role, guesses[time].offer)  # a day or year never the person
    assert guesses[time].role is Role.QUASI_IDENTIFIER
    assert not [c for c, g in guesses.items() if g.role is Role.HOUSEHOLD or g.offer is Role.HOUSEHOLD]
    # whatever its name: renamed to a word that says nothing, it is still the person
    renamed = frame.rename(columns={person: "k7"})
    assert role_guesses(renamed, contents=True)["k7"].role is Role.PERSON


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_structure_figures_equal_a_pandas_recount(shape):
    make, person, time = SHAPES[shape]
    frame = make()
    found = find_structure(frame).person
    sizes = frame.groupby(person)[time].agg(["size", "nunique"])
    several = sizes[sizes["size"] >= 2]
    assert found.people == len(sizes)
    assert found.most_records == sizes["size"].max()
    assert found.repeated == round((frame[person].map(sizes["size"]) >= 2).mean(), 4)
    assert found.varies == round((several["nunique"] >= 2).mean(), 4)
    assert found.pair_unique == round(len(frame[[person, time]].drop_duplicates()) / len(frame), 4)
    stable = frame.groupby(person)[found.stable].nunique()
    assert (stable[several.index] == 1).mean() >= 0.95  # the column that makes them one person


@pytest.mark.parametrize("shape", sorted(HOUSEHOLDS))
def test_the_household_is_found_and_never_offered_as_the_person(shape):
    make, household = HOUSEHOLDS[shape]
    frame = make()
    found = find_structure(frame)
    assert found.person is None and found.household.column == household
    sizes = frame.groupby(household).size()
    assert (found.household.households, found.household.largest) == (len(sizes), sizes.max())
    guess = role_guesses(frame, contents=True)[household]
    assert guess.role is Role.HOUSEHOLD and guess.offer is None and "one household per value" in guess.reason
    assert not [c for c, g in role_guesses(frame, contents=True).items() if Role.PERSON in (g.role, g.offer)]


def test_values_equal_by_chance_are_no_person_nor_household():
    rng = np.random.default_rng(7)
    frame = SHAPES["men"][0]()
    # a whole-number measurement repeated by chance across people and years
    frame["hours"] = rng.integers(1500, 1700, len(frame))
    frame["lab"] = rng.integers(120, 400, len(frame))
    found = find_structure(frame)
    assert found.person.column == "nr" and found.household is None
    shuffled = frame.sample(frac=1.0, random_state=1)
    assert find_structure(shuffled.drop(columns="nr")).person is None  # no column makes people: none found
    heart = load_sample("heart_cleveland").frame  # chol: small groups differing in age and sex, by chance
    assert find_structure(heart).household is None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.sampled_from(["a", "b", None])), min_size=1, max_size=40))
def test_which_groups_vary_equals_pandas(rows):
    frame = pd.DataFrame(rows, columns=["g", "v"]).astype({"v": "object"})
    group, groups = _codes(frame["g"])
    other, n_other = _codes(frame["v"])
    varied = _varied(group, groups, other, n_other)
    expected = frame.groupby("g", sort=False)["v"].nunique(dropna=False) >= 2
    assert varied.tolist() == expected.tolist()


def test_time_and_day_offsets():
    assert is_time("year", pd.Series([70, 88])) and is_time("pan_day", pd.Series([4, 107]))
    assert is_time("futime", pd.Series([400, 5000])) and is_time("visit", pd.Series([1, 2]))
    assert is_time("when", pd.Series(["2024-01-31"])) and is_time("x", pd.Series([1984, 1990]))
    for name, values in (
        ("birth_yr", [51, 52]),
        ("time_in_hospital", [1, 14]),
        ("hours-per-week", [40, 20]),
        ("wave", ["a", "b"]),
        ("nr", [13, 17]),
    ):
        assert not is_time(name, pd.Series(values)), name
    assert is_day_offset("day", pd.Series([0, 192, 5152])) and is_day_offset("days_since", pd.Series([3, 400]))
    assert not is_day_offset("day", pd.Series([1, 31]))  # a day of the month
    assert not is_day_offset("year", pd.Series([0, 400])) and not is_day_offset("day", pd.Series([0.5, 40.25]))


def test_names_that_said_the_wrong_role():
    def role(name, values=(1, 2)):
        return guess_role(name, pd.Series(list(values)))

    assert role("clinic_name", ["a", "b"]) is Role.IGNORE and role("fake_first_name", ["a"]) is Role.IDENTIFIER
    assert role("Full Name", ["a"]) is Role.IDENTIFIER and role("name", ["a"]) is Role.IDENTIFIER
    for outcome in ("wage", "ln_wage", "lwage", "stage", "average", "dosage"):
        assert role(outcome, [1.5, 2.5]) is not Role.QUASI_IDENTIFIER, outcome
    for age in ("age", "age_group", "motherAge", "AGE"):
        assert role(age) is Role.QUASI_IDENTIFIER, age
    assert [name_says_age(n) for n in ("agent", "language", "page_count", "agegrp")] == [False, False, False, True]
    # an identifier's name on a handful of values shared by every record: a category
    covid = SHAPES["covid_tests"][0]()
    guesses = role_guesses(covid, contents=True)
    assert guesses["test_id"].role is Role.IGNORE and "a category, not an identifier" in guesses["test_id"].reason
    assert guesses["clinic_name"].role is Role.IGNORE
    assert guesses["fake_last_name"].role is Role.IDENTIFIER
    # the diabetes file's codes: 26 and 17 values over 101,766 records are categories, as its 8 are;
    # a code of many values with few records each stays an identifier
    rng = np.random.default_rng(5)
    codes = pd.DataFrame(
        {
            "discharge_disposition_id": rng.integers(1, 27, 2000),
            "admission_type_id": rng.integers(1, 9, 2000),
            "encounter_id": rng.permutation(2000) * 7 + 12,
            "visit_id": rng.integers(0, 400, 2000),
            "age": rng.integers(20, 90, 2000),
        }
    )
    guesses = role_guesses(codes, contents=True)
    for code in ("discharge_disposition_id", "admission_type_id"):
        assert guesses[code].role is Role.IGNORE and "a category, not an identifier" in guesses[code].reason
    assert "77 records each on average" in guesses["discharge_disposition_id"].reason
    assert guesses["encounter_id"].role is Role.IDENTIFIER
    assert guesses["visit_id"].role is not Role.IGNORE  # 5 records a value: an identifier (or the person)


def test_the_bundled_samples_keep_their_roles():
    diabetes = load_sample("diabetes").frame
    guesses = role_guesses(diabetes, contents=True)
    assert guesses["patient_nbr"].role is Role.PERSON  # no time: by its name and repeated values
    assert guesses["encounter_id"].role is Role.IDENTIFIER
    adult = find_structure(load_sample("adult").frame)
    assert adult.person is None and adult.household is None and adult.times == ()


def test_profile_json_lists_the_roles_found_by_structure(tmp_path, capsys):
    path = tmp_path / "trial.csv"
    SHAPES["trial"][0]().to_csv(path, index=False)
    assert main(["profile", str(path), "--qi", "age,sex", "--json"]) == 0
    roles = json.loads(capsys.readouterr().out)["roles"]
    assert roles["id"] == "person" and roles["day"] == "quasi-identifier" and roles["bili"] == "ignore"
    assert list(roles) == list(SHAPES["trial"][0]().columns)
    path = tmp_path / "families.csv"
    HOUSEHOLDS["families"][0]().to_csv(path, index=False)
    assert main(["profile", str(path), "--qi", "gender", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["roles"]["family"] == "household"
