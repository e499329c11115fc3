"""The bundled sample datasets, with their default column roles.

Files live in ``data/samples/`` (provenance and licenses in its README); an
installed package carries them as ``anonlib/bundled_samples``. Every
sample is read through ``load_table``, exactly like an upload.

Example:
    >>> ds = load_sample("caballero_table2b")
    >>> ds.n_records, ds.quasi_identifiers
    (15, ('ZIP', 'Gender', 'Age'))
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pandas as pd

from .dataset import Dataset, Role
from .errors import ParameterError, join_names
from .hierarchy import read_hierarchy_csv
from .loading import load_table


def _samples_dir() -> Path:
    """``anonlib/bundled_samples`` of an installed package, else the clone's ``data/samples``."""
    package = Path(__file__).resolve().parents[1]
    installed = package / "bundled_samples"
    return installed if installed.is_dir() else package.parent / "data" / "samples"


SAMPLES_DIR = _samples_dir()
DEFAULT_SAMPLE = "adult"

Q, S, I, C = Role.QUASI_IDENTIFIER, Role.SENSITIVE, Role.IDENTIFIER, Role.COUNT


@dataclass(frozen=True)
class Sample:
    """A bundled dataset: file, title, where it is from, and its default roles.

    Columns not named in ``roles`` are ignored by default.
    """

    key: str
    title: str
    file: str
    description: str
    source: str
    roles: dict[str, Role] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return SAMPLES_DIR / self.file


_HEART_ROLES = {"age": Q, "sex": Q, "chol": Q, "fbs": Q, "num": S}

SAMPLES: dict[str, Sample] = {
    s.key: s
    for s in [
        Sample(
            "adult",
            "Adult (US census 1994, 32,561 people)",
            "adult.csv.gz",
            "Census income records; the papers' standard benchmark for k-anonymity.",
            "UCI Machine Learning Repository, Kohavi & Becker 1996; CC BY 4.0",
            {
                "age": Q,
                "sex": Q,
                "race": Q,
                "marital-status": Q,
                "education": Q,
                "native-country": Q,
                "income": S,
                "occupation": S,
            },
        ),
        Sample(
            "caballero_table1",
            "Caballero et al., Table 1 (screening invitations, with names)",
            "caballero_table1.csv",
            "The running example of the screening paper, before identifiers are removed.",
            "Caballero, Sen, Nygård: anonymity vectors in screening (fictional example)",
            {"Full Name": I, "Address": I, "ZIP": Q, "Gender": Q, "Age": Q},
        ),
        Sample(
            "caballero_table2b",
            "Caballero et al., Table 2(b) (ZIP, gender, age)",
            "caballero_table2b.csv",
            "The screening population after identifiers were replaced by an internal code.",
            "Caballero, Sen, Nygård (fictional example)",
            {"Code": I, "ZIP": Q, "Gender": Q, "Age": Q},
        ),
        Sample(
            "caballero_table3",
            "Caballero et al., Table 3 (with appointments)",
            "caballero_table3.csv",
            "The same population with centre and hour of the screening appointment.",
            "Caballero, Sen, Nygård (fictional example)",
            {"Code": I, "ZIP": Q, "Gender": Q, "Age": Q, "Centre": Q, "Hour": Q, "Test": S},
        ),
        Sample(
            "arca_table1",
            "Arca & Hewett, Table 1 (60 patients as 22 rows with #Rec.)",
            "arca_table1.csv",
            "Small medical table with a record-count column; row 7, lost in the extracted text, "
            "restored from the paper's Table 4 and totals.",
            "Arca & Hewett 2021 (fictional example)",
            {"Sex": Q, "AC": Q, "Age": Q, "Zip": Q, "Weight": Q, "Race": Q, "Genetic risk": S, "#Rec.": C},
        ),
        Sample(
            "kroes_table1_option2",
            "Kroes et al., Table 1 (age in 10-year bands)",
            "kroes_table1_option2.csv",
            "Five patients; diagnosis is sensitive. Option 2 of the paper's age generalization.",
            "Kroes, Janssen, Groenwold, van Leeuwen 2021 (fictional example)",
            {"ID": I, "Diagnosis": S, "Gender": Q, "Age": Q},
        ),
        Sample(
            "kroes_table1_option1",
            "Kroes et al., Table 1 (age in 5-year bands)",
            "kroes_table1_option1.csv",
            "Five patients; diagnosis is sensitive. Option 1 of the paper's age generalization.",
            "Kroes, Janssen, Groenwold, van Leeuwen 2021 (fictional example)",
            {"ID": I, "Diagnosis": S, "Gender": Q, "Age": Q},
        ),
        Sample(
            "heart_cleveland",
            "Heart disease, Cleveland (303 patients)",
            "heart_cleveland.csv",
            "Cleveland Clinic heart-disease study; num is the diagnosis (0 = none).",
            "UCI Machine Learning Repository, Janosi et al. 1988; CC BY 4.0",
            _HEART_ROLES,
        ),
        Sample(
            "heart_hungarian",
            "Heart disease, Hungarian (294 patients)",
            "heart_hungarian.csv",
            "Hungarian Institute of Cardiology, Budapest.",
            "UCI Machine Learning Repository, Janosi et al. 1988; CC BY 4.0",
            _HEART_ROLES,
        ),
        Sample(
            "heart_va",
            "Heart disease, VA Long Beach (200 patients)",
            "heart_va.csv",
            "V.A. Medical Center, Long Beach.",
            "UCI Machine Learning Repository, Janosi et al. 1988; CC BY 4.0",
            _HEART_ROLES,
        ),
        Sample(
            "heart_switzerland",
            "Heart disease, Switzerland (123 patients)",
            "heart_switzerland.csv",
            "University Hospitals of Zurich and Basel.",
            "UCI Machine Learning Repository, Janosi et al. 1988; CC BY 4.0",
            _HEART_ROLES,
        ),
        Sample(
            "cervical_cancer",
            "Cervical cancer risk factors (858 patients)",
            "cervical_cancer.csv",
            "Hospital Universitario de Caracas; Biopsy is the outcome.",
            "UCI Machine Learning Repository, Fernandes et al. 2017; CC BY 4.0",
            {"Age": Q, "Num of pregnancies": Q, "Smokes": Q, "Biopsy": S},
        ),
        Sample(
            "diabetes",
            "Diabetes, 130 US hospitals (101,766 encounters)",
            "diabetes.csv.gz",
            "Hospital encounters of diabetic patients 1999-2008.",
            "UCI Machine Learning Repository, Strack et al. 2014; CC BY 4.0",
            {
                "encounter_id": I,
                "patient_nbr": I,
                "race": Q,
                "gender": Q,
                "age": Q,
                "num_lab_procedures": Q,
                "num_medications": Q,
                "change": S,
                "diabetesMed": S,
                "readmitted": S,
            },
        ),
        Sample(
            "zcta10",
            "US ZIP-code areas 2010 (33,120 areas, population counts)",
            "zcta10.csv.gz",
            "Census 2010 gazetteer: one row per ZIP area with its population (as a record count).",
            "US Census Bureau 2010 gazetteer (public domain), via jjchern/gaze (CC0)",
            {"GEOID": Q, "POP10": C},
        ),
        Sample(
            "us_counties",
            "US counties 2010 (3,221 counties, population counts)",
            "us_counties_gazetteer.csv",
            "Census 2010 county gazetteer: one row per county with its population (as a record count).",
            "US Census Bureau 2010 gazetteer (public domain)",
            {"USPS": Q, "GEOID": Q, "POP10": C},
        ),
    ]
}


def sample_path(file: str) -> Path:
    """Path of a bundled file (samples and their companions, e.g. the GeoJSON)."""
    path = SAMPLES_DIR / file
    if not path.is_file():
        raise ParameterError(f"The bundled file '{file}' is missing from {SAMPLES_DIR}.")
    return path


@cache
def sample_sha256(key: str) -> str:
    """The SHA-256 of a bundled sample's file, as shipped: the identity of its data (a private
    release's budget is kept by it, as an uploaded file's is by its bytes).

    >>> len(sample_sha256("caballero_table2b"))
    64
    """
    if key not in SAMPLES:
        raise ParameterError(f"There is no sample called '{key}'. Samples: {join_names(SAMPLES, 20)}.")
    with open(sample_path(SAMPLES[key].file), "rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


@cache
def load_sample(key: str = DEFAULT_SAMPLE) -> Dataset:
    """A bundled dataset with its default roles (cached; do not modify its frame)."""
    if key not in SAMPLES:
        raise ParameterError(f"There is no sample called '{key}'. Samples: {join_names(SAMPLES, 20)}.")
    sample = SAMPLES[key]
    table = load_table(sample_path(sample.file), name=sample.file)
    roles = {c: Role.IGNORE for c in table.frame.columns}
    roles.update(sample.roles)
    return Dataset(
        name=sample.title, frame=table.frame, roles=roles, notes=table.notes, missing_texts=table.missing_texts
    ).validated()


ARX_ADULT_QUASI_IDENTIFIERS = (
    "age",
    "education",
    "marital-status",
    "native-country",
    "occupation",
    "race",
    "income",
    "sex",
    "workclass",
)


@dataclass(frozen=True, eq=False)
class Benchmark:
    """A table, its quasi-identifiers and their hierarchies (ARX layout)."""

    frame: pd.DataFrame
    quasi_identifiers: tuple[str, ...]
    hierarchies: dict


def arx_adult_benchmark() -> Benchmark:
    """ARX's Adult benchmark: the 30,162 Adult records complete on its nine
    quasi-identifiers, with the hierarchies ARX ships (``salary-class`` is Adult's
    ``income``); a lattice of 12,960 full-domain generalizations.

    >>> b = arx_adult_benchmark()
    >>> len(b.frame), len(b.quasi_identifiers), [len(b.hierarchies[q].columns) for q in b.quasi_identifiers]
    (30162, 9, [5, 4, 3, 3, 3, 2, 2, 2, 3])
    """
    qis = ARX_ADULT_QUASI_IDENTIFIERS
    frame = load_sample("adult").frame.dropna(subset=list(qis)).reset_index(drop=True)
    hierarchies = {
        q: read_hierarchy_csv(
            sample_path(f"arx_adult_hierarchy_{'salary-class' if q == 'income' else q}.csv").read_bytes()
        )
        for q in qis
    }
    return Benchmark(frame, qis, hierarchies)
