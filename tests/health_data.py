"""Seeded longitudinal health extracts for the health tests: several visits per person,
a medical record number, dates, age, sex, ZIP code and a diagnosis."""

from __future__ import annotations

import numpy as np
import pandas as pd

ZIPS = ("37010", "37203", "38104", "03601", "05901", "10001", "82190", "69201")


def visits(seed: int = 0, people: int = 120, *, max_visits: int = 5, names: bool = False) -> pd.DataFrame:
    """One row per visit: ``mrn`` (7 digits, leading zeros kept), ``visit_date`` and
    ``discharge_date`` (ISO), ``age`` (some over 89), ``sex``, ``zip``, ``diagnosis``."""
    rng = np.random.default_rng(seed)
    mrns = [f"{m:07d}" for m in rng.choice(10**6, people, replace=False)]
    rows = []
    for mrn in mrns:
        age = int(rng.integers(18, 100))
        sex = str(rng.choice(["F", "M"]))
        zip_code = str(rng.choice(ZIPS))
        start = pd.Timestamp("2019-01-01") + pd.Timedelta(days=int(rng.integers(0, 900)))
        for v in range(int(rng.integers(1, max_visits + 1))):
            day = start + pd.Timedelta(days=int(40 * v + rng.integers(0, 30)))
            stay = pd.Timedelta(days=int(rng.integers(0, 9)))
            rows.append(
                {
                    "mrn": mrn,
                    "visit_date": day.strftime("%Y-%m-%d"),
                    "discharge_date": (day + stay).strftime("%Y-%m-%d"),
                    "age": age,
                    "sex": sex,
                    "zip": zip_code,
                    "diagnosis": str(rng.choice(["I10", "E11", "J45", "F32"])),
                }
            )
    frame = pd.DataFrame(rows)
    if names:
        first = rng.choice(["Ann", "Bo", "Cy", "Dee", "Eve", "Fay"], len(frame))
        last = rng.choice(["Lee", "Chan", "Smith", "Ng", "Diaz", "Kim"], len(frame))
        frame.insert(0, "patient_name", [f"{a} {b}" for a, b in zip(first, last)])
    return frame


def random_longitudinal(rng: np.random.Generator) -> tuple[pd.DataFrame, list[str]]:
    """A small random table with repeated persons and 1-3 quasi-identifiers of few values."""
    n = int(rng.integers(1, 60))
    persons = int(rng.integers(1, max(2, n)))
    n_qis = int(rng.integers(1, 4))
    frame = pd.DataFrame({f"q{j}": rng.integers(0, int(rng.integers(1, 4)), n) for j in range(n_qis)})
    frame["pid"] = [f"p{i}" for i in rng.integers(0, persons, n)]
    return frame, [f"q{j}" for j in range(n_qis)]


def history_sharing(released: pd.DataFrame, qis: list[str], owner: str) -> pd.Series:
    """Per owner (a person, a household), the owners with exactly its history: the multiset of
    its released rows on ``qis``, counted by pandas (each owner's rows sorted, as one tuple)."""
    rows = released[qis].astype(str).agg("\x1f".join, axis=1)
    history = rows.groupby(released[owner]).agg(lambda r: tuple(sorted(r)))
    return history.map(history.value_counts())
