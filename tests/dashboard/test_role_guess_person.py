"""Role guessing from the values, as the Dataset page guesses an upload's roles:
a column whose values repeat across records that otherwise differ is the person column
(preselected when a time varies within it, ``anonlib.core.structure``, or when its name reads
like an identifier and a quarter of the records repeat; else offered), with the reason shown; small-domain
columns (a year, a 0/1 flag, a few categories) are quasi-identifier candidates saying why,
not left as ignore. Guessing from names alone (the library's default, the command line)
is unchanged."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest

from anonlib.core.dataset import Dataset, Role, guess_roles, person_evidence, role_guesses
from anonlib.core.samples import load_sample
from tests.panel_shapes import families

ROOT = Path(__file__).resolve().parents[2]


def panel(people: int = 300, seed: int = 5) -> pd.DataFrame:
    """A panel survey as in the issue: one row per person and year (1-5 years each), the person
    ``id`` repeated, ``female`` and ``kids`` flags, ``age``, income ``hhninc`` with decimals."""
    rng = np.random.default_rng(seed)
    rows = []
    for pid in range(people):
        female, start = int(rng.integers(0, 2)), int(rng.integers(25, 60))
        for year in range(1984, 1984 + int(rng.integers(1, 6))):
            rows.append(
                {
                    "id": pid,
                    "year": year,
                    "female": female,
                    "kids": int(rng.integers(0, 2)),
                    "age": start + year - 1984,
                    "hhninc": round(float(rng.uniform(0.5, 9.0)), 3),
                }
            )
    return pd.DataFrame(rows)


def test_the_diabetes_sample_guesses_patient_nbr_as_the_person_with_the_reason():
    frame = load_sample("diabetes").frame
    guesses = role_guesses(frame, contents=True)
    counts = frame["patient_nbr"].value_counts()
    repeated = counts[counts >= 2].sum() / len(frame)  # records whose patient has another record
    assert guesses["patient_nbr"].role is Role.PERSON
    assert guesses["patient_nbr"].reason == (
        f"patient_nbr: {len(counts):,} values, {repeated:.0%} of the records repeat a value across rows whose other "
        "values differ — looks like one person per value"
    )
    assert guesses["encounter_id"].role is Role.IDENTIFIER  # unique per row: an identifier, not a person
    assert guess_roles(frame)["patient_nbr"] is Role.IDENTIFIER  # from names alone: unchanged
    ds = Dataset.from_frame("diabetes.csv", frame, guess_contents=True)
    assert ds.person == "patient_nbr" and ds.n_persons == len(counts)


def test_a_panel_guesses_the_person_and_the_year_and_flags_as_quasi_identifiers():
    frame = panel()
    guesses = role_guesses(frame, contents=True)
    roles = {c: g.role for c, g in guesses.items()}
    assert roles == {
        "id": Role.PERSON,
        "year": Role.QUASI_IDENTIFIER,
        "female": Role.QUASI_IDENTIFIER,
        "kids": Role.QUASI_IDENTIFIER,
        "age": Role.QUASI_IDENTIFIER,
        "hhninc": Role.IGNORE,  # decimals: a measurement, not a small domain nor a person
    }
    first, last = frame["year"].min(), frame["year"].max()
    assert guesses["year"].reason.startswith(f"values are years ({first}-{last})")
    assert guesses["female"].reason.startswith("a yes/no flag (values 0, 1)")
    assert "quasi-identifier candidate" in guesses["kids"].reason
    # the file: names alone made the repeated id an identifier and left year, female, kids ignored
    assert [guess_roles(frame)[c] for c in ("id", "year", "female", "kids")] == [
        Role.IDENTIFIER,
        Role.IGNORE,
        Role.IGNORE,
        Role.IGNORE,
    ]


def test_weak_evidence_is_offered_not_preselected_and_duplicates_are_no_person():
    frame = panel().rename(columns={"id": "respondent"})  # no name saying identifier, but a year varies within
    assert role_guesses(frame, contents=True)["respondent"].role is Role.PERSON  # by structure
    # no time (and no age growing within, which would read as a household's members): the values speak weakly
    frame = frame.drop(columns=["year", "age"])
    guess = role_guesses(frame, contents=True)["respondent"]
    assert guess.role is Role.IGNORE and guess.offer is Role.PERSON
    assert "looks like one person per value" in guess.reason and "choose the role person" in guess.reason
    few = panel()
    few = pd.concat([few[few["year"] == 1984], few[few["year"] == 1985].head(25)], ignore_index=True)
    share = few["id"].duplicated(keep=False).mean()
    assert 0.1 <= share < 0.25 and role_guesses(few, contents=True)["id"].offer is Role.PERSON  # 15%: offered
    copies = pd.concat([panel().drop_duplicates("id")] * 2, ignore_index=True)  # rows duplicated, not revisits
    assert "id" not in [e.column for e in person_evidence(copies)]
    assert role_guesses(copies, contents=True)["id"].role is Role.IDENTIFIER


def test_the_nlsy_idcode_is_guessed_as_the_person_where_its_values_speak_weakly():
    # the NLSY's panels name their person column idcode: with its name, the weak evidence (no year, no
    # age growing within, which alone only offers the role) chooses it
    frame = panel().drop(columns=["year", "age"])
    assert role_guesses(frame.rename(columns={"id": "respondent"}), contents=True)["respondent"].role is Role.IGNORE
    guess = role_guesses(frame.rename(columns={"id": "idcode"}), contents=True)["idcode"]
    assert guess.role is Role.PERSON and guess.offer is None


def test_a_wide_file_preselects_at_most_eight_small_domain_columns_and_offers_the_rest():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({f"drug{i}": rng.choice(["No", "Up", "Steady"], 200) for i in range(12)})
    frame["age"] = rng.integers(20, 80, 200)
    guesses = role_guesses(frame, contents=True)
    chosen = [c for c, g in guesses.items() if c.startswith("drug") and g.role is Role.QUASI_IDENTIFIER]
    offered = [c for c, g in guesses.items() if g.offer is Role.QUASI_IDENTIFIER]
    assert len(chosen) == 8 and len(offered) == 4 and not set(chosen) & set(offered)
    assert all(guesses[c].role is Role.IGNORE and "not preselected" in guesses[c].reason for c in offered)


def _dataset_page(dataset: Dataset) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.session_state["active_dataset"] = dataset
    at.session_state["active_source"] = "upload:panel.csv"
    at.run()
    assert not at.exception
    return at


def test_the_dataset_page_shows_the_guessed_person_and_offers_a_weaker_one():
    strong = _dataset_page(Dataset.from_frame("panel.csv", panel(), guess_contents=True))
    captions = " ".join(c.value for c in strong.caption).replace("\\", "")  # plain() escapes markdown
    assert "Person column guessed from its values: id: 300 values" in captions
    strong.session_state["dataset_role_reasons"] = True  # "How the roles were guessed" opened
    strong.run()
    reasons = next(t.value for t in strong.dataframe if "guessed from" in t.value.columns)
    assert dict(zip(reasons["column"], reasons["guessed role"]))["id"] == "person"

    weak = panel().rename(columns={"id": "respondent"}).drop(columns=["year", "age"])  # no time: offered
    at = _dataset_page(Dataset.from_frame("panel.csv", weak, guess_contents=True))
    assert at.session_state["active_dataset"].person is None
    assert any("respondent may be the person column" in i.value.replace("\\", "") for i in at.info)
    at.button(key="offer_person").click().run()
    assert not at.exception and at.session_state["active_dataset"].person == "respondent"


def test_the_diabetes_sample_offers_patient_nbr_as_the_person_on_the_dataset_page():
    """The sample's own roles make patient_nbr an identifier; its values say person: offered."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    at.session_state["active_dataset"] = load_sample("diabetes")
    at.session_state["active_source"] = "sample:diabetes"
    at.run()
    assert not at.exception and at.session_state["active_dataset"].person is None
    offer = [i.value.replace("\\", "") for i in at.info if "may be the person column" in i.value.replace("\\", "")]
    assert offer and offer[0].startswith("patient_nbr may be the person column: patient_nbr: 71,518 values")
    at.button(key="offer_person").click().run()
    assert not at.exception
    dataset = at.session_state["active_dataset"]
    assert dataset.person == "patient_nbr" and dataset.n_persons == 71_518


def test_the_dataset_page_shows_the_household_found_by_structure_and_offers_it_otherwise():
    frame = families()  # GaltonFamilies' shape: children of one family differ in gender, no time within
    at = _dataset_page(Dataset.from_frame("families.csv", frame, guess_contents=True))
    assert at.session_state["active_dataset"].household == "family"
    captions = " ".join(c.value for c in at.caption).replace("\\", "")
    assert "Household column guessed from its values: family: 60 groups of up to" in captions
    assert not any("may be the person column" in i.value for i in at.info)  # a family is never offered as a person
    at = _dataset_page(Dataset.from_frame("families.csv", frame))  # roles from names: offered, with the reason
    assert any("family may say whose household" in i.value.replace("\\", "") for i in at.info)
    at.button(key="offer_household").click().run()
    assert not at.exception and at.session_state["active_dataset"].household == "family"
