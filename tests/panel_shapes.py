"""Small seeded files with the shapes of the real public panels the issue was tried on
(never the panels themselves: they are not committed). Each generator writes the columns
the structure is read from under the real file's names and types:

- ``trial``: a sequential clinical trial (pbcseq): ``id``, ``futime`` (follow-up, the same on
  every visit of a patient), ``age`` at entry with decimals, ``sex``, visit ``day`` since
  enrolment (0 first), lab values with decimals, ``stage`` 1-4.
- ``labour``: a labour panel (nlswork): ``idcode``, two-digit ``year`` (68-88, unbalanced
  waves), ``birth_yr``, ``age``, ``race``, ``c_city`` with blanks, ``ln_wage``.
- ``covid_tests``: COVID tests of children (covid_testing): rows shuffled, ``subject_id``
  (a third of the tests of children tested again), fake names, ``gender``, ``pan_day``,
  ``test_id`` (one value nearly always), ``clinic_name``, ``age``, ``result``.
- ``men``: a balanced yearly panel of men (Males, wagepan): ``nr`` (sparse ids), ``year``
  1980-1987, ``school``, ``ethn``, ``black``, ``wage`` with decimals, ``residence`` with blanks.
- ``two_woman_families``: families of two women (ashkenazi): ``famID``, ``brcancer``,
  ``age``, ``mutant``.
- ``families``: families of 1-15 children (GaltonFamilies): ``family`` ("001"), the parents'
  heights, ``children``, ``childNum``, ``gender``, ``childHeight``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def trial(people: int = 120, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    visits = rng.integers(1, 12, people)
    who = np.repeat(np.arange(1, people + 1), visits)
    step = np.concatenate([np.arange(v) for v in visits])
    day = np.where(step == 0, 0, step * 182 + rng.integers(-20, 20, len(who)))
    futime = rng.integers(400, 5000, people)
    return pd.DataFrame(
        {
            "id": who,
            "futime": futime[who - 1],
            "status": rng.integers(0, 3, people)[who - 1],
            "trt": rng.integers(1, 3, people)[who - 1],
            "age": np.round(rng.uniform(30, 75, people), 6)[who - 1] + 0.123456,
            "sex": rng.choice(["f", "m"], people, p=[0.88, 0.12])[who - 1],
            "day": day,
            "bili": np.round(rng.lognormal(0.5, 1, len(who)), 1) + 0.05,
            "albumin": np.round(rng.normal(3.5, 0.4, len(who)), 2) + 0.005,
            "stage": rng.integers(1, 5, len(who)),
        }
    )


def labour(people: int = 300, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    waves = np.array([68, 69, 70, 71, 72, 73, 75, 77, 78, 80, 82, 83, 85, 87, 88])
    taken = rng.random((people, len(waves))) < rng.uniform(0.3, 1.0, (people, 1))
    taken[:, 0] |= ~taken.any(axis=1)
    person, wave = np.nonzero(taken)
    birth = rng.integers(41, 55, people)
    frame = pd.DataFrame(
        {
            "idcode": person + 1,
            "year": waves[wave],
            "birth_yr": birth[person],
            "age": (waves[wave] - birth[person]).astype(float),
            "race": rng.integers(1, 4, people)[person],
            "c_city": rng.integers(0, 2, len(person)).astype(float),
            "ln_wage": rng.normal(1.7, 0.5, len(person)),
        }
    )
    frame.loc[rng.random(len(frame)) < 0.05, "c_city"] = np.nan
    return frame


def covid_tests(children: int = 900, seed: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    tests = np.where(rng.random(children) < 0.2, rng.integers(2, 6, children), 1)
    who = np.repeat(np.arange(children), tests)
    day = rng.integers(4, 108, len(who))
    frame = pd.DataFrame(
        {
            "subject_id": rng.choice(10_000, children, replace=False)[who],
            "fake_first_name": rng.choice([f"first{i}" for i in range(400)], children)[who],
            "fake_last_name": rng.choice([f"last{i}" for i in range(300)], children)[who],
            "gender": rng.choice(["female", "male"], children)[who],
            "pan_day": day,
            "test_id": np.where(rng.random(len(who)) < 0.999, "covid", "xcvd1"),
            "clinic_name": rng.choice([f"clinic {c}" for c in "abcdefghijklmnopqrst"], len(who)),
            "result": rng.choice(["negative", "positive", "invalid"], len(who), p=[0.9, 0.07, 0.03]),
            "age": rng.integers(0, 18, children)[who].astype(float),
        }
    )
    frame = frame.drop_duplicates(["subject_id", "pan_day"])
    return frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)


def men(people: int = 80, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    ids = np.sort(rng.choice(np.arange(13, 13_000), people, replace=False))
    who = np.repeat(np.arange(people), 8)
    frame = pd.DataFrame(
        {
            "nr": ids[who],
            "year": np.tile(np.arange(1980, 1988), people),
            "school": rng.integers(6, 17, people)[who],
            "exper": np.tile(np.arange(8), people) + rng.integers(0, 6, people)[who],
            "ethn": rng.choice(["black", "hisp", "other"], people)[who],
            "black": rng.integers(0, 2, people)[who],
            "wage": rng.lognormal(1.5, 0.5, len(who)),
            "residence": rng.choice(["north_east", "south", "rural_area", ""], len(who)),
        }
    )
    frame["residence"] = frame["residence"].replace("", np.nan)
    return frame


def two_woman_families(families: int = 200, seed: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    who = np.repeat(np.arange(1, families + 1), 2)
    mother = rng.integers(45, 90, families)
    age = np.ravel(np.column_stack([mother, mother - rng.integers(18, 35, families)]))
    return pd.DataFrame(
        {
            "famID": who,
            "brcancer": rng.integers(0, 2, len(who)),
            "age": age,
            "mutant": np.repeat(rng.random(families) < 0.1, 2).astype(int),
        }
    )


def families(count: int = 60, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    children = rng.integers(1, 16, count)
    who = np.repeat(np.arange(count), children)
    father = np.round(rng.normal(69, 2.5, count), 1)
    mother = np.round(rng.normal(64, 2.3, count), 1)
    return pd.DataFrame(
        {
            "family": np.array([f"{f + 1:03d}" for f in range(count)])[who],
            "father": father[who],
            "mother": mother[who],
            "midparentHeight": np.round((father + 1.08 * mother) / 2, 2)[who],
            "children": children[who],
            "childNum": np.concatenate([np.arange(1, c + 1) for c in children]),
            "gender": rng.choice(["male", "female"], len(who)),
            "childHeight": np.round(rng.normal(66, 3.5, len(who)), 1),
        }
    )


SHAPES = {
    "trial": (trial, "id", "day"),
    "labour": (labour, "idcode", "year"),
    "covid_tests": (covid_tests, "subject_id", "pan_day"),
    "men": (men, "nr", "year"),
}
HOUSEHOLDS = {"two_woman_families": (two_woman_families, "famID"), "families": (families, "family")}
