"""Rebuild the bundled samples from the folder of source datasets.

Run from the repository root with that folder (``uci_adult/``, ``uci_heart_disease/``, ...)
as the argument:

    python data/samples/make_samples.py DATA_FOLDER

The papers' small tables are typed in here from the papers (see README.md);
the real datasets are converted as described there (header added, values
unchanged, gzip -9 without timestamp where over ~2 MB).
"""

from __future__ import annotations

import gzip
import shutil
import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent

ADULT_COLUMNS = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
]
HEART_COLUMNS = [
    "age",
    "sex",
    "cp",
    "trestbps",
    "chol",
    "fbs",
    "restecg",
    "thalach",
    "exang",
    "oldpeak",
    "slope",
    "ca",
    "thal",
    "num",
]

CABALLERO_TABLE1 = """Full Name,Address,ZIP,Gender,Age
Roderick Alleyne,14 Brooks Rd.,88888,male,50-54
Martin Beck,21 Elm St.,11111,male,55-59
Nora Charles,5 Norgren St.,11111,female,55-59
Cordelia Gray,23B Martin St.,88888,female,55-59
Adam Dalglish,1 Linges St.,88888,male,50-54
Madelyn Hayes,811 Francis Av.,11111,female,55-59
Jane Marple,12 Granite St.,11111,female,55-59
Henry Merrivale,65 Baker St.,11111,male,55-59
Laura Monagan,9 Norgren St.,11111,female,55-59
Emma Page,221 Ohio St.,88888,female,55-59
Thomas Pitt,43 Creek Rd.,11111,male,55-59
Claire Rodgers,89 Lloyd Court,11111,female,55-59
Philip Trent,9 Bell St.,88888,male,50-54
Peter Wimsey,2C Ryan Ave.,88888,male,50-54
Charles Wycliffe,47 Hummel St.,11111,male,55-59
"""

# Table 3 of the paper: Table 2(b) (internal code, ZIP, gender, age) plus the
# appointment (centre, hour) and the test result.
CABALLERO_TABLE3 = """Code,ZIP,Gender,Age,Centre,Hour,Test
1,88888,male,50-54,A,9,positive
2,11111,male,55-59,A,9,positive
3,11111,female,55-59,A,9,positive
4,88888,female,55-59,A,9,negative
5,88888,male,50-54,A,13,positive
6,11111,female,55-59,A,13,positive
7,11111,female,55-59,B,9,positive
8,11111,male,55-59,B,9,positive
9,11111,female,55-59,B,9,positive
10,88888,female,55-59,B,9,positive
11,11111,male,55-59,B,13,negative
12,11111,female,55-59,B,13,positive
13,88888,male,50-54,C,13,positive
14,88888,male,50-54,C,13,negative
15,11111,male,55-59,B,13,positive
"""

CABALLERO_RESOURCES = """Centre,Hour,capacity
A,9,4
A,13,2
B,9,4
B,13,3
C,13,2
"""

# Arca & Hewett Table 1, row 7 restored as the spec (leakage.md) fixes it.
ARCA_TABLE1 = """Sex,AC,Age,Zip,Weight,Race,Genetic risk,#Rec.
F,Med,35,52000,143,Black,No,1
F,Low,35,52000,143,Black,No,3
M,Med,50,53000,166,White,No,4
M,Low,35,52003,143,White,No,1
M,Med,68,52000,190,Hispanic,No,3
M,High,68,52000,190,Hispanic,No,4
M,Med,44,52003,166,Asian,Hereditary Thrombophilia,3
F,Low,75,52002,122,Native Hawaiian,No,4
F,Med,35,52003,143,Black,No,2
F,High,75,52002,143,White,Hereditary Thrombophilia,1
M,High,44,52003,166,Asian,Hereditary Thrombophilia,3
F,Med,38,52000,166,White,No,4
F,High,35,52000,122,American Indian,Hereditary Thrombophilia,1
F,Low,35,52000,122,American Indian,Hereditary Thrombophilia,2
M,Med,38,52003,122,White,No,3
F,Med,22,54004,180,Native Hawaiian,No,3
M,High,20,54000,180,American Indian,L.O. Alzheimer's,3
M,Low,21,54001,180,Black,Parkinson's,3
F,High,24,54003,180,Asian,Hereditary Thrombophilia,3
M,No,25,54000,122,American Indian,Celiac,3
M,No,26,54001,166,Asian,L.O. Alzheimer's,3
F,High,23,54003,180,Asian,Parkinson's,3
"""

KROES_TABLE1 = """ID,Diagnosis,Gender,Age,Age option 1,Age option 2
1,Cancer,Female,50,50-54,45-54
2,Cancer,Male,40,40-44,35-44
3,Cancer,Female,35,35-39,35-44
4,Arthrosis,Male,64,60-64,55-64
5,Diabetes,Female,49,45-49,45-54
"""


def _write_gz(frame: pd.DataFrame, path: Path) -> None:
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0, filename="") as gz:
        gz.write(frame.to_csv(index=False).encode("utf-8"))


def _gzip_file(src: Path, dst: Path) -> None:
    with (
        open(src, "rb") as s,
        open(dst, "wb") as raw,
        gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0, filename="") as gz,
    ):
        shutil.copyfileobj(s, gz)


def main(shared: Path) -> None:
    (HERE / "caballero_table1.csv").write_text(CABALLERO_TABLE1)
    (HERE / "caballero_table3.csv").write_text(CABALLERO_TABLE3)
    table3 = pd.read_csv(pd.io.common.StringIO(CABALLERO_TABLE3), dtype=str)
    table3[["Code", "ZIP", "Gender", "Age"]].to_csv(HERE / "caballero_table2b.csv", index=False)
    (HERE / "caballero_resources.csv").write_text(CABALLERO_RESOURCES)
    (HERE / "arca_table1.csv").write_text(ARCA_TABLE1)
    kroes = pd.read_csv(pd.io.common.StringIO(KROES_TABLE1), dtype=str)
    kroes.to_csv(HERE / "kroes_table1.csv", index=False)
    for option in (1, 2):
        out = kroes[["ID", "Diagnosis", "Gender", f"Age option {option}"]].rename(
            columns={f"Age option {option}": "Age"}
        )
        out.to_csv(HERE / f"kroes_table1_option{option}.csv", index=False)

    adult = pd.read_csv(
        shared / "uci_adult/adult.data",
        header=None,
        names=ADULT_COLUMNS,
        skipinitialspace=True,
        dtype=str,
        keep_default_na=False,
    )
    _write_gz(adult, HERE / "adult.csv.gz")
    for source, target in [
        ("processed.cleveland.data", "heart_cleveland.csv"),
        ("processed.hungarian.data", "heart_hungarian.csv"),
        ("processed.switzerland.data", "heart_switzerland.csv"),
        ("processed.va.data", "heart_va.csv"),
    ]:
        heart = pd.read_csv(shared / "uci_heart_disease" / source, header=None, names=HEART_COLUMNS, dtype=str)
        heart = heart.replace({"NaN": "?"}).fillna("?")
        heart.to_csv(HERE / target, index=False)
    shutil.copyfile(shared / "uci_cervical_cancer/risk_factors_cervical_cancer.csv", HERE / "cervical_cancer.csv")
    shutil.copyfile(shared / "uci_diabetes_130_us_hospitals/diabetic_data.csv.gz", HERE / "diabetes.csv.gz")
    _gzip_file(shared / "us_census_2010_zcta_gazetteer/zcta10.csv", HERE / "zcta10.csv.gz")
    counties = pd.read_csv(
        shared / "us_counties_2010/Gaz_counties_national.txt",
        sep="\t",
        dtype=str,
        encoding="latin-1",
        skipinitialspace=True,
    )
    counties.columns = counties.columns.str.strip()
    counties = counties.apply(lambda c: c.str.strip())
    counties.to_csv(HERE / "us_counties_gazetteer.csv", index=False)
    _gzip_file(shared / "us_counties_2010/geojson-counties-fips.json", HERE / "us_counties.geojson.gz")
    shutil.copyfile(shared / "caballero_registry_fixture/frequencies.json", HERE / "caballero_registry_fixture.json")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/data"))
