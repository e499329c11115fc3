"""Uploaded-like patient files for page and browser tests: CSV bytes read by the loader as
the Dataset page reads an upload, with the roles a user would mark, put into an AppTest's
session the way the Dataset page's upload does (``set_active_dataset``).

``patients_csv`` has an age and eight ZIP codes (roles set by ``uploaded``); ``registry_csv``
has identifiers and a birth year, for the pages' guessed roles, and ``JOURNEY_CSV`` is the
registry file of the release journey (AppTest and browser); ``tennessee_csv`` has
Tennessee ZIP areas, so Geography can map it (browser tour); ``clinic_csv`` is the
local-suppression journey's file (browser)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from anonlib.core.dataset import Dataset
from anonlib.core.loading import load_table
from anonlib.workflow import Reading

NAME = "patients.csv"
ROLES = {
    "patient_id": "identifier",
    "age": "quasi-identifier",
    "sex": "quasi-identifier",
    "zip": "quasi-identifier",
    "diagnosis": "sensitive",
}
ZIPS = (10001, 10002, 30301, 30302, 60601, 60602, 90001, 90002)


def patients_csv(n: int = 2000, seed: int = 7) -> bytes:
    """A seeded 2,000-record patient file: id, age 20-89, sex, 5-digit ZIP, diagnosis."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "patient_id": np.arange(1, n + 1),
            "age": rng.integers(20, 90, n),
            "sex": rng.choice(["F", "M"], n),
            "zip": rng.choice([f"{z:05d}" for z in ZIPS], n),
            "diagnosis": rng.choice(["flu", "asthma", "diabetes", "copd", "hypertension"], n),
        }
    )
    return frame.to_csv(index=False).encode()


def registry_csv(
    n: int = 400, seed: int = 7, zips: list[str] | None = None, born: tuple[int, int] = (1930, 2005)
) -> bytes:
    """A patient registry file: record number and e-mail (identifiers), birth year (in ``born``, end
    excluded), sex and ZIP (quasi-identifiers, five ZIP codes unless given), diagnosis (sensitive)."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "patient_id": np.arange(1000, 1000 + n),
            "email": [f"p{i}@example.org" for i in range(n)],
            "birth_year": rng.integers(*born, n),
            "sex": rng.choice(["F", "M"], n),
            "zip": rng.choice(zips or ["10115", "10117", "10119", "20095", "20097"], n),
            "diagnosis": rng.choice(["asthma", "diabetes", "flu", "hypertension"], n, p=[0.2, 0.2, 0.5, 0.1]),
        }
    )
    return frame.to_csv(index=False).encode("utf-8")


# The journey's file: ZIP codes fine enough (60 of them) that sex x ZIP needs generalizing, so
# Leakage has a generalization to apply to sex and zip, and Individual privacy then puts the
# untouched birth year (ten years, so generalizing ZIP alone lets some classes reach k) into bands.
JOURNEY_CSV = registry_csv(zips=[f"{10100 + i}" for i in range(60)], born=(1950, 1960))


def tennessee_csv(records: int = 2000) -> bytes:
    """A small patient file: Tennessee ZIP areas (so Geography can map it), age, sex, race, diagnosis."""
    from anonlib.transformations.geo import sample_regions

    rng = np.random.default_rng(13)
    zips = sample_regions("tennessee_zcta").points["region_id"].to_numpy()
    lines = ["zip,age,sex,race,diagnosis"]
    for _ in range(records):
        lines.append(
            f"{rng.choice(zips[:60])},{rng.integers(18, 90)},{rng.choice(['F', 'M'])},"
            f"{rng.choice(['White', 'Black', 'Asian', 'Other'], p=[0.7, 0.2, 0.05, 0.05])},"
            f"{rng.choice(['flu', 'asthma', 'diabetes', 'hypertension', 'none'])}"
        )
    return ("\n".join(lines) + "\n").encode()


CLINIC_STATES = (
    "CA",
    "TX",
    "NY",
    "FL",
    "IL",
    "PA",
    "OH",
    "GA",
    "NC",
    "MI",
    "WA",
    "AZ",
    "MA",
    "TN",
    "IN",
    "MO",
    "MD",
    "WI",
    "CO",
    "MN",
)


def clinic_csv(n: int = 20_000, seed: int = 7) -> bytes:
    """A clinic's visits for the local-suppression journey: age (around 52), sex, US state and
    marital status as guessed quasi-identifiers (2% of sex and 3% of state blank), a diagnosis
    as the sensitive attribute. Half of its records fail k = 5 as loaded."""
    rng = np.random.default_rng(seed)
    weights = np.array([12, 9, 6, 7, 4, 4, 3.5, 3.3, 3.2, 3, 2.3, 2.2, 2, 2, 2, 1.8, 1.8, 1.8, 1.7, 1.7])
    frame = pd.DataFrame(
        {
            "age": np.clip(rng.normal(52, 14, n).round().astype(int), 18, 90),
            "sex": rng.choice(["F", "M"], n),
            "state": rng.choice(CLINIC_STATES, n, p=weights / weights.sum()),
            "marital": rng.choice(["married", "single", "divorced", "widowed"], n, p=[0.5, 0.3, 0.15, 0.05]),
            "diagnosis": rng.choice(
                ["diabetes", "asthma", "hypertension", "copd", "none"], n, p=[0.15, 0.1, 0.25, 0.05, 0.45]
            ),
        }
    )
    frame.loc[rng.random(n) < 0.02, "sex"] = None
    frame.loc[rng.random(n) < 0.03, "state"] = None
    return frame.to_csv(index=False).encode()


def uploaded(data: bytes | None = None, roles: dict | None = None) -> tuple[Dataset, Reading]:
    """The dataset and reading the Dataset page makes of an uploaded CSV."""
    data = patients_csv() if data is None else data
    table = load_table(data, name=NAME)
    dataset = Dataset.from_frame(NAME, table.frame, notes=table.notes).with_roles(ROLES if roles is None else roles)
    return dataset, Reading.of(table, data)


def put_upload(at, dataset: Dataset, reading: Reading) -> None:
    """Set an AppTest's session as the Dataset page does after an upload."""
    at.session_state["active_dataset"] = dataset
    at.session_state["active_source"] = f"upload:{NAME}"
    at.session_state["active_reading"] = reading
