"""Roles from the file's structure (``linkable.md`` part 2, section 8): the person, household
and time columns read off 10^6 records.

Target: structural role guessing on 10^6 rows within 2 s.
The file has a labour panel's shape: 10^5 people x 10 yearly waves (rows shuffled), an id no
name explains, two-digit years, a birth year, a sex, an age, a city flag with blanks, a wage
with decimals, an industry code. Timed twice: ``find_structure`` alone, and
``role_guesses(contents=True)`` (every column's guessed role and reason, as the Dataset page
and ``profile --json`` show them).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from anonlib.core.dataset import role_guesses
from anonlib.core.structure import find_structure
from bench import Benchmark

TARGET_S = 2.0


def _panel() -> pd.DataFrame:
    rng = np.random.default_rng(66)
    people, waves = 100_000, 10
    who = np.repeat(np.arange(people), waves)
    birth = rng.integers(41, 55, people)
    year = np.tile(np.arange(70, 70 + waves), people)
    city = rng.integers(0, 2, people * waves).astype(float)
    city[rng.random(people * waves) < 0.05] = np.nan
    frame = pd.DataFrame(
        {
            "nr": rng.choice(10**7, people, replace=False)[who],
            "year": year,
            "birth_yr": birth[who],
            "sex": rng.choice(["f", "m"], people)[who],
            "age": (year - birth[who]).astype(float),
            "c_city": city,
            "ind_code": rng.integers(1, 13, people * waves),
            "wage": rng.lognormal(1.7, 0.5, people * waves),
        }
    )
    return frame.sample(frac=1.0, random_state=1).reset_index(drop=True)


def _found(frame: pd.DataFrame):
    return find_structure(frame)


def _found_note(found) -> str:
    p = found.person
    return f"person {p.column} (time {p.time}, {p.people:,} people)" if p else "no person found"


def _guesses_note(guesses) -> str:
    return ", ".join(f"{c}: {g.role.value}" for c, g in guesses.items())


BENCHMARKS = [
    Benchmark(
        "structure: person, household and time found on 10^6 rows",
        TARGET_S,
        _panel,
        _found,
        repeat=3,
        reference="within 2 s",
        note=_found_note,
    ),  # fmt: skip
    Benchmark(
        "structure: every column's role guessed from its values on 10^6 rows",
        TARGET_S,
        _panel,
        lambda frame: role_guesses(frame, contents=True),
        repeat=3,
        reference="within 2 s",
        note=_guesses_note,
    ),
]
