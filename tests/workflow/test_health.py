"""Health data as it comes (health.md): keyed pseudonyms, per-person date shifts, k counted in
people, Safe Harbor applied, every column accounted for, role guessing of survey names."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import stat
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonlib.core.dataset import Dataset, Role, guess_roles, role_guesses
from anonlib.core.equivalence import person_classes, persons_failing, persons_per_class
from anonlib.core.errors import ColumnError, KeyFileError, ParameterError
from anonlib.measures.identifiers import hipaa_identifiers
from anonlib.measures.models import ModelRequirement, acceptance
from anonlib.measures.profile import risk_profile
from anonlib.transformations.geo import area_columns, area_id_share, sample_regions
from anonlib.transformations.hipaa import TOP_LABEL, apply_safe_harbor, safe_harbor_plan, zip3_areas
from anonlib.transformations.pseudonyms import date_offsets, pseudonyms, shift_dates, within_person_intervals
from anonlib.transformations.synthetic import zip3_populations
from anonlib.workflow import ReleaseTarget, WorkingCopy
from anonlib.workflow.health_steps import PseudonymizeStep, SafeHarborStep, ShiftDatesStep
from anonlib.workflow.keys import key_file, key_id, read_key_file
from anonlib.workflow.package import release_package
from anonlib.workflow.recipe import Recipe
from anonlib.workflow.release import column_account, default_release_columns
from anonlib.workflow.safe_harbor import compare_routes
from anonlib.workflow.steps import SuppressionStep, step_from_json
from tests.health_data import random_longitudinal, visits

KEY = bytes.fromhex("0f" * 32)
OTHER = bytes.fromhex("a5" * 32)


# ---------------------------------------------------------------- pseudonyms and keys


def test_pseudonyms_are_the_hmac_of_the_value_as_read():
    values = pd.Series(["00123", " 00124 ", "A-7", None, "00123"])
    got = pseudonyms(values, KEY).tolist()
    expected = [hmac.new(KEY, v.strip().encode("utf-8"), hashlib.sha256).hexdigest()[:16] for v in values[:3]]
    assert got[:3] == expected and got[3] is None and got[4] == got[0]
    longer = pseudonyms(values, KEY, length=24, prefix="S-").tolist()
    assert longer[0] == "S-" + hmac.new(KEY, b"00123", hashlib.sha256).hexdigest()[:24]
    assert pseudonyms(pd.Series([123, 7]), KEY).tolist()[0] == hmac.new(KEY, b"123", hashlib.sha256).hexdigest()[:16]


def test_pseudonyms_are_stable_across_deliveries_and_differ_under_another_key():
    first = visits(1, 80)
    second = pd.concat([first.iloc[::3], visits(99, 40)], ignore_index=True)  # some of the same people, and new
    step = PseudonymizeStep.made("mrn", KEY)
    a, b = step.apply(first), step.apply(second)
    shared = dict(zip(first["mrn"], a["mrn"]))
    both = [(m, p) for m, p in zip(second["mrn"], b["mrn"]) if m in shared]
    assert len(both) >= 20 and all(shared[m] == p for m, p in both)
    assert set(b["mrn"]) - set(a["mrn"])  # new people, new pseudonyms
    other = PseudonymizeStep.made("mrn", OTHER).apply(first)
    assert not set(other["mrn"]) & set(a["mrn"])


def test_a_recipe_refuses_another_key_and_never_holds_the_key(tmp_path):
    frame = visits(2, 30)
    ds = Dataset.from_frame("v.csv", frame, {"mrn": "person", "age": "quasi-identifier"})
    copy = WorkingCopy.start(ds, ReleaseTarget(k=1)).apply(PseudonymizeStep.made("mrn", KEY), "Dataset")
    copy = copy.apply(ShiftDatesStep.made(["visit_date"], "mrn", KEY, days=30), "Dataset")
    recipe = copy.recipe()
    text = recipe.dumps()
    assert KEY.hex() not in text and key_id(KEY) in text
    data = release_package(copy, created="2026-01-01T00:00:00Z")
    assert KEY.hex().encode() not in data
    back = Recipe.loads(text)
    with pytest.raises(KeyFileError, match="was made with the key"):
        back.with_key(OTHER)
    with pytest.raises(KeyFileError, match="needs the project key"):
        back.with_key(None)
    replay = back.with_key(KEY).replay(ds)
    assert replay.reproduces
    assert "mrn" in replay.table.columns  # the person column released as its pseudonym


def test_colliding_pseudonyms_are_refused():
    constant = hmac.new(KEY, b"x", hashlib.sha256).digest()
    with mock.patch("anonlib.transformations.pseudonyms._keyed", return_value=lambda text: constant):
        with pytest.raises(ColumnError, match="would get the same pseudonym"):
            pseudonyms(pd.Series(["a", "b"]), KEY)
    assert pseudonyms(pd.Series(["a", " a", "a "]), KEY).nunique() == 1  # one value, written three ways


def test_key_files_are_64_hex_characters_created_readable_by_the_owner_only(tmp_path):
    path = tmp_path / "project.key"
    key, created = key_file(path)
    assert created and len(key) == 32
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert path.read_text() == key.hex() + "\n"
    assert key_file(path) == (key, False) and read_key_file(path) == key
    assert key_id(key) == hashlib.sha256(key).hexdigest()[:8]
    for bad in ("ab" * 31, "zz" * 32, "ab" * 32 + "\nab", "ab" * 33, ""):
        (tmp_path / "bad.key").write_text(bad)
        with pytest.raises(KeyFileError, match="64 hexadecimal characters"):
            read_key_file(tmp_path / "bad.key")


# ---------------------------------------------------------------- date shifting


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), days=st.integers(1, 400))
def test_date_shifts_keep_every_within_person_interval(seed, days):
    frame = visits(seed, 25)
    step = ShiftDatesStep.made(["visit_date", "discharge_date"], "mrn", KEY, days=days)
    shifted = step.apply(frame)
    before = within_person_intervals(frame, "mrn", ["visit_date", "discharge_date"])
    after = within_person_intervals(shifted, "mrn", ["visit_date", "discharge_date"])
    assert before.equals(after)
    moved = (pd.to_datetime(shifted["visit_date"]) - pd.to_datetime(frame["visit_date"])).dt.days
    assert moved.abs().max() <= days
    assert (moved.groupby(frame["mrn"]).nunique() == 1).all()  # one offset per person
    offsets = step.offsets(frame)
    assert (offsets == moved.to_numpy()).all()


def test_offsets_are_the_same_in_two_deliveries_and_spread_over_the_range():
    first = visits(4, 60)
    second = pd.concat([visits(5, 30), first.iloc[::-2]], ignore_index=True)  # another order, other people
    a = dict(zip(first["mrn"], date_offsets(first["mrn"], KEY, 10)))
    b = dict(zip(second["mrn"], date_offsets(second["mrn"], KEY, 10)))
    shared = [m for m in b if m in a]
    assert len(shared) >= 20 and all(b[m] == a[m] for m in shared)
    assert len({a[m] for m in a}) > 5  # not one offset for everyone
    many = date_offsets(pd.Series([f"p{i}" for i in range(4000)]), KEY, 10)
    assert many.min() == -10 and many.max() == 10 and abs(many.mean()) < 0.5


def test_dates_keep_their_time_of_day_and_missing_stays_missing():
    out = shift_dates(pd.Series(["2020-01-01 10:30:00", None, "2020-02-29 23:00:00"]), np.array([1, 1, 1]), "t")
    assert out.tolist() == ["2020-01-02 10:30:00", None, "2020-03-01 23:00:00"]


def test_bad_dates_and_missing_persons_are_one_sentence():
    with pytest.raises(ColumnError, match="not a date written as YYYY-MM-DD"):
        shift_dates(pd.Series(["2020-01-01", "31/31/2020"]), np.array([0, 0]), "visit")
    with pytest.raises(ColumnError, match="blank in 1 record"):
        date_offsets(pd.Series(["a", None]), KEY, 5)
    with pytest.raises(ParameterError, match="needs a person column"):
        ShiftDatesStep.made(["visit_date"], None, KEY)


# ---------------------------------------------------------------- people, not rows


def test_person_level_k_equals_the_pandas_reference_on_200_random_longitudinal_tables():
    rng = np.random.default_rng(36)
    for _ in range(200):
        frame, qis = random_longitudinal(rng)
        counted = person_classes(frame, qis, "pid")
        reference = frame.groupby(qis)["pid"].nunique()
        assert counted.k == reference.min()
        assert sorted(counted.sizes.tolist()) == sorted(reference.tolist())
        profile = risk_profile(
            Dataset.from_frame("t", frame, {"pid": "person", **dict.fromkeys(qis, "quasi-identifier")})
        )
        assert profile.k == reference.min() and profile.persons == frame["pid"].nunique()
        assert profile.records == len(frame)


def test_a_person_fails_as_a_whole_and_suppression_removes_whole_people():
    rng = np.random.default_rng(7)
    for _ in range(100):
        frame, qis = random_longitudinal(rng)
        k = int(rng.integers(1, 4))
        result = acceptance(frame, qis, k=k, person="pid")
        kept = frame[result.kept]
        assert kept.equals(_suppressed_by_hand(frame, qis, k))
        gone = set(frame["pid"]) - set(kept["pid"])
        assert not set(kept["pid"]) & set(frame.loc[~result.kept, "pid"])  # whole people, never part of one
        assert result.suppressed_persons == len(gone) and result.persons == frame["pid"].nunique()
        if len(kept):
            assert kept.groupby(qis)["pid"].nunique().min() >= k
        frame = frame.assign(dx=rng.choice(["a", "b", "c"], len(frame)))
        diverse = acceptance(frame, qis, k=k, person="pid", requirements=[ModelRequirement("distinct_l", "dx", 2)])
        left = frame[diverse.kept]
        assert not set(left["pid"]) & set(frame.loc[~diverse.kept, "pid"])
        if len(left):
            assert left.groupby(qis)["pid"].nunique().min() >= k and left.groupby(qis)["dx"].nunique().min() >= 2
        frame = frame.drop(columns="dx")
        ds = Dataset.from_frame("t", frame, {"pid": "person", **dict.fromkeys(qis, "quasi-identifier")})
        step = SuppressionStep.from_target(ReleaseTarget(k=k), ds)
        assert step.person == "pid" and step_from_json(step.to_json()) == step
        assert step.apply(frame).equals(kept.reset_index(drop=True))


def _suppressed_by_hand(frame: pd.DataFrame, qis: list[str], k: int) -> pd.DataFrame:
    """The slow obvious reference: remove every person with a record in a class of fewer than
    k people, and again on what is left, until no class is short."""
    kept = frame
    while len(kept):
        short = kept.groupby(qis)["pid"].transform("nunique") < k
        if not short.any():
            break
        kept = kept[~kept["pid"].isin(set(kept.loc[short, "pid"]))]
    return kept


def test_kernel_helpers_on_a_worked_example():
    ids, persons = np.array([0, 0, 1, 1, 1]), np.array([0, 0, 0, 1, 2])
    assert persons_per_class(ids, 2, persons, 3).tolist() == [1, 3]
    assert persons_failing(np.array([True, False, False, False, False]), persons, 3).tolist() == [
        True,
        True,
        True,
        False,
        False,
    ]


def test_the_target_is_checked_in_people_with_both_counts():
    frame = pd.DataFrame({"age": [30, 30, 30, 30, 40, 40], "pid": ["a", "a", "a", "b", "c", "c"]})
    ds = Dataset.from_frame("t", frame, {"age": "quasi-identifier", "pid": "person"})
    check = ReleaseTarget(k=2, max_suppressed=0.34).check(ds)
    assert (check.records, check.persons, check.failing_records, check.failing_persons) == (6, 3, 2, 1)
    assert check.met_after_suppression and not check.met
    assert "1 of 3 people" in check.sentence() and "2 records" in check.sentence()
    copy = WorkingCopy.start(ds, ReleaseTarget(k=2, max_suppressed=0.34))
    copy = copy.apply(SuppressionStep.from_target(copy.target, copy.current), "Sidebar")
    assert copy.check.met and copy.check.suppressed_persons == 1 and copy.check.suppressed_records == 2
    with pytest.raises(ColumnError, match="blank in 1 record"):
        Dataset.from_frame("t", frame.assign(pid=["a", None, "a", "b", "c", "c"]), {"pid": "person"})


# ---------------------------------------------------------------- Safe Harbor


def _safe_harbor_file(seed: int = 5) -> pd.DataFrame:
    frame = visits(seed, 150, names=True)
    frame["dob"] = [
        (pd.Timestamp("2019-06-01") - pd.Timedelta(days=int(365.25 * a + d))).strftime("%Y-%m-%d")
        for a, d in zip(frame["age"], np.random.default_rng(seed).integers(0, 300, len(frame)))
    ]
    frame["phone"] = [f"555-{i:03d}-{i * 7 % 10000:04d}" for i in range(len(frame))]
    return frame


def test_safe_harbor_leaves_no_small_zip3_no_age_over_89_and_no_date_finer_than_a_year():
    frame = _safe_harbor_file()
    assert (frame["age"] > 89).any() and frame["zip"].str[:3].isin(zip3_areas()[1]).any()
    step = SafeHarborStep.planned(frame, reference_year=2019)
    actions = {c.column: c.action for c in step.changes}
    assert actions == {
        "patient_name": "remove",
        "mrn": "remove",
        "visit_date": "year",
        "discharge_date": "year",
        "age": "age",
        "zip": "zip3",
        "dob": "birth_date",
        "phone": "remove",
    }
    ds = Dataset.from_frame("sh.csv", frame)
    copy = WorkingCopy.start(ds, ReleaseTarget(k=2)).apply(step, "Dataset")
    released = copy.release()
    assert set(released.columns) >= {"zip", "age", "visit_date", "dob", "diagnosis"}
    assert not {"patient_name", "mrn", "phone"} & set(released.columns)
    populations = zip3_populations()
    assert all(z == "000" or populations.get(z, 0) >= 20_000 for z in released["zip"])
    assert (released["zip"] == "000").any()
    ages = released["age"].astype(str)
    assert all(a == TOP_LABEL or int(a) <= 89 for a in ages) and (ages == TOP_LABEL).any()
    for column in ("visit_date", "discharge_date"):
        assert released[column].astype(str).str.fullmatch(r"\d{4}").all()
    births = released["dob"].astype(str)
    assert births.str.fullmatch(r"\d{4}|90 or older").all()
    assert all(b == TOP_LABEL or 2019 - int(b) <= 89 for b in births)
    account = copy.column_account()
    assert {c for c, _, why in account.left_out if why == "removed by Safe Harbor"} == {"patient_name", "mrn", "phone"}


def test_safe_harbor_on_the_bundled_adult_sample_with_tennessee_zip_codes():
    from anonlib.transformations.synthetic import adult_with_zip

    frame = adult_with_zip(seed=1).head(5000)
    step = SafeHarborStep.planned(frame, reference_year=2024)
    assert {(c.column, c.action) for c in step.changes} >= {("zip", "zip3"), ("age", "age")}
    out = apply_safe_harbor(frame, step.changes, reference_year=2024)
    assert out["zip"].str.fullmatch(r"\d{3}").all() and out["zip"].str.startswith(("37", "38")).all()
    assert not (pd.to_numeric(out["age"], errors="coerce") > 89).any()
    assert (out["age"] == TOP_LABEL).sum() == (frame["age"] > 89).sum()


def test_safe_harbor_beside_the_optimal_release():
    frame = _safe_harbor_file(6)
    ds = Dataset.from_frame("sh.csv", frame)
    step = SafeHarborStep.planned(frame, reference_year=2019)
    comparison = compare_routes(ds, step, target=ReleaseTarget(k=3))
    assert "zip" in comparison.quasi_identifiers and "mrn" not in comparison.quasi_identifiers
    assert comparison.optimal is not None and comparison.optimal.k >= 3
    assert comparison.safe_harbor.records == len(frame) and comparison.safe_harbor.suppressed == 0
    assert 0.0 < comparison.safe_harbor.loss < 1.0
    table = comparison.table()
    assert list(table["route"]) == ["Safe Harbor", "optimal generalization (expert determination)"]


def test_safe_harbor_refuses_a_file_with_nothing_it_recognises():
    with pytest.raises(ParameterError, match="Safe Harbor found nothing to change"):
        SafeHarborStep.planned(pd.DataFrame({"diagnosis": ["a", "b"], "score": [1, 2]}))
    with pytest.raises(ColumnError, match="not a ZIP code"):
        apply_safe_harbor(
            pd.DataFrame({"zip": ["37010", "unknown"]}),
            safe_harbor_plan(pd.DataFrame({"zip": ["37010", "37203"]})),
            reference_year=2024,
        )


def test_safe_harbor_steps_round_trip_through_the_recipe():
    frame = _safe_harbor_file(8)
    step = SafeHarborStep.planned(frame, reference_year=2020)
    assert step_from_json(json.loads(json.dumps(step.to_json()))) == step
    assert "HIPAA Safe Harbor" in step.describe() and len(step.sentences()) == len(step.changes)


# ---------------------------------------------------------------- columns accounted for, roles guessed


def test_keep_columns_are_released_unchanged_and_every_column_is_accounted_for():
    frame = pd.DataFrame(
        {"mrn": ["1", "2"], "age": [30, 40], "hhexp": [1.5, 2.5], "note": ["x", "y"], "dx": ["a", "b"]}
    )
    ds = Dataset.from_frame("d", frame, {"hhexp": "keep", "note": "ignore", "dx": "sensitive"})
    assert default_release_columns(ds) == ("age", "hhexp", "dx")
    assert ds.kept == ("hhexp",)
    account = column_account(ds, default_release_columns(ds))
    assert account.released == (("age", "quasi-identifier"), ("hhexp", "keep"), ("dx", "sensitive"))
    assert account.left_out_names == ("mrn", "note")
    assert json.loads(json.dumps(account.to_json()))["left_out_columns"][0]["role"] == "identifier"
    copy = WorkingCopy.start(ds, ReleaseTarget(k=1))
    assert copy.release()["hhexp"].tolist() == [1.5, 2.5]


def test_role_guessing_knows_survey_abbreviations_and_says_why():
    names = {
        "educ": Role.QUASI_IDENTIFIER,
        "edu": Role.QUASI_IDENTIFIER,
        "marstat": Role.QUASI_IDENTIFIER,
        "married": Role.QUASI_IDENTIFIER,
        "dob": Role.QUASI_IDENTIFIER,
        "bdate": Role.QUASI_IDENTIFIER,
        "zip3": Role.QUASI_IDENTIFIER,
        "hhid": Role.IDENTIFIER,
        "pid": Role.IDENTIFIER,
        "mrn": Role.IDENTIFIER,
        "ssn": Role.IDENTIFIER,
        "commune": Role.QUASI_IDENTIFIER,
        "district": Role.QUASI_IDENTIFIER,
        "province": Role.QUASI_IDENTIFIER,
        "county_code": Role.QUASI_IDENTIFIER,
        "hhexp": Role.IGNORE,
    }
    frame = pd.DataFrame({n: [1, 2] for n in names})
    assert guess_roles(frame) == names
    guesses = role_guesses(frame)
    assert guesses["educ"].reason == "name 'educ' (education)"
    assert guesses["commune"].reason == "name 'commune' (area code)"


def test_free_text_is_flagged_as_a_possible_identifier():
    notes = [f"Patient seen on day {i} with cough; lives with daughter on Elm street {i}" for i in range(40)]
    frame = pd.DataFrame({"notes": notes, "dx": ["flu"] * 40})
    flags = {f.column: f for f in hipaa_identifiers(frame)}
    assert flags["notes"].letter == "R" and "free text" in flags["notes"].reason
    assert "free text" in role_guesses(frame)["notes"].reason
    assert "dx" not in flags


# ---------------------------------------------------------------- geography's area column


def test_a_column_is_area_ids_only_when_most_of_its_values_are():
    assert area_id_share(["37010", "37010", "x", None], ["37010"]) == pytest.approx(2 / 3)
    rng = np.random.default_rng(0)
    spend = pd.Series(rng.choice([37010.0, 10001.0, 12.5, 310.75, 88.25], 500))  # 40% equal ZIP areas' ids
    assert 0.3 < area_id_share(spend, sample_regions("us_zcta").points["region_id"]) < 0.5
    frame = pd.DataFrame({"hhexp": spend, "fips": rng.choice(["01001", "06037", "48201"], 500)})
    found = area_columns(frame)
    assert list(found) == ["fips"] and found["fips"].areas == "us_counties"
    assert area_columns(frame, areas={"communes": ["1", "2"]}) == {}
    communes = pd.DataFrame({"commune": rng.integers(1, 4, 100)})
    assert area_columns(communes, areas={"communes": ["1", "2", "3"]})["commune"].share == 1.0


def test_person_and_keep_roles_go_through_the_role_table():
    frame = pd.DataFrame({"pid": ["a", "b"], "x": [1, 2]})
    ds = Dataset.from_frame("d", frame)
    table = ds.role_table()
    table.loc[0, "role"], table.loc[1, "role"] = "person", "keep"
    edited = ds.with_edits(table)
    assert edited.person == "pid" and edited.kept == ("x",)
    assert re.search("person", str(Role.PERSON.value))
