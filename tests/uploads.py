"""An uploaded-like patient file for page tests: CSV bytes read by the loader as the
Dataset page reads an upload, with the roles a user would mark, put into an AppTest's
session the way the Dataset page's upload does (``set_active_dataset``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from anonlib.core.dataset import Dataset
from anonlib.core.loading import load_table
from anonlib.workflow import Reading

NAME = "patients.csv"
ROLES = {"patient_id": "identifier", "age": "quasi-identifier", "sex": "quasi-identifier",
         "zip": "quasi-identifier", "diagnosis": "sensitive"}
ZIPS = (10001, 10002, 30301, 30302, 60601, 60602, 90001, 90002)


def patients_csv(n: int = 2000, seed: int = 7) -> bytes:
    """A seeded 2,000-record patient file: id, age 20-89, sex, 5-digit ZIP, diagnosis."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "patient_id": np.arange(1, n + 1),
        "age": rng.integers(20, 90, n),
        "sex": rng.choice(["F", "M"], n),
        "zip": rng.choice([f"{z:05d}" for z in ZIPS], n),
        "diagnosis": rng.choice(["flu", "asthma", "diabetes", "copd", "hypertension"], n),
    })
    return frame.to_csv(index=False).encode()


def uploaded(data: bytes | None = None, roles: dict | None = None) -> tuple[Dataset, Reading]:
    """The dataset and reading the Dataset page makes of an uploaded CSV."""
    table = load_table(patients_csv() if data is None else data, name=NAME)
    dataset = Dataset.from_frame(NAME, table.frame, notes=table.notes).with_roles(ROLES if roles is None else roles)
    return dataset, Reading.of(table)


def put_upload(at, dataset: Dataset, reading: Reading) -> None:
    """Set an AppTest's session as the Dataset page does after an upload."""
    at.session_state["active_dataset"] = dataset
    at.session_state["active_source"] = f"upload:{NAME}"
    at.session_state["active_reading"] = reading
