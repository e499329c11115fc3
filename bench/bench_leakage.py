"""Leakage and anonymization benchmarks: the leakage table and the paper's searches against their targets."""

from __future__ import annotations

import pandas as pd

from anonlib.core.hierarchy import equal_width_bands, flat_hierarchy, interval_hierarchy, taxonomy_hierarchy
from anonlib.core.samples import load_sample
from anonlib.measures.leakage import leakage_table
from anonlib.transformations.anonymize_experiments import heart_experiment, heart_hierarchies, heart_table
from anonlib.transformations.generalization import search
from bench import Benchmark

ADULT_SHIELD = ["age", "sex", "race", "marital-status", "education"]

# ARX-style hierarchies for Adult (as in ARX's example files, slightly condensed).
ADULT_MARITAL = {
    "Married": ["Married-civ-spouse", "Married-AF-spouse", "Married-spouse-absent"],
    "Not married": ["Never-married", "Divorced", "Separated", "Widowed"],
    "*": ["Married", "Not married"],
}
ADULT_EDUCATION = {
    "Primary school": ["Preschool", "1st-4th", "5th-6th", "7th-8th"],
    "High school": ["9th", "10th", "11th", "12th", "HS-grad"],
    "Undergraduate": ["Some-college", "Assoc-voc", "Assoc-acdm", "Bachelors"],
    "Graduate": ["Masters", "Prof-school", "Doctorate"],
    "No college": ["Primary school", "High school"],
    "College": ["Undergraduate", "Graduate"],
    "*": ["No college", "College"],
}


def adult_problem() -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """Adult's quasi-identifiers and sensitive columns, with ARX-style hierarchies."""
    dataset = load_sample("adult")
    frame, _ = dataset.analysis_frame(dataset.quasi_identifiers + dataset.sensitive)
    hierarchies = {
        "age": interval_hierarchy(frame["age"], equal_width_bands(15, 94, [5, 10, 20]), top=True),
        "sex": flat_hierarchy(frame["sex"]),
        "race": flat_hierarchy(frame["race"]),
        "marital-status": taxonomy_hierarchy(ADULT_MARITAL),
        "education": taxonomy_hierarchy(ADULT_EDUCATION),
    }
    return frame, hierarchies


def _adult_frame(_: None = None) -> pd.DataFrame:
    return load_sample("adult").frame


def _cleveland() -> tuple[pd.DataFrame, dict]:
    table = heart_table(load_sample("heart_cleveland").frame)
    return table, heart_hierarchies(table)


def _search_note(result) -> str:
    levels = ", ".join(f"{a} {v}" for a, v in result.levels.items())
    return f"{levels}; {result.rows:,} rows; {result.generated} tables"


BENCHMARKS = [
    Benchmark(
        "leakage: table, Adult 32,561 x 15: 15 singles + 105 pairs",
        1.0,
        _adult_frame,
        lambda df: leakage_table(df, list(df.columns), sizes=(1, 2)),
        note=lambda t: f"{len(t)} rows; max normalized {t['normalized'].max():.3f}",
    ),
    Benchmark(
        "leakage: IAB, Cleveland (303 rows), shield {Zip, Smoker, Sex, Age}, k=5",
        0.2,
        _cleveland,
        lambda p: search(p[0], ["Zip", "Smoker", "Sex", "Age"], 5, p[1], "iab"),
        note=_search_note,
    ),
    Benchmark(
        "leakage: IAB, Adult, shield {age, sex, race, marital-status, education}, k=10",
        10.0,
        adult_problem,
        lambda p: search(p[0], ADULT_SHIELD, 10, p[1], "iab"),
        repeat=3,
        note=_search_note,
    ),
    Benchmark(
        "leakage: exhaustive, Adult, same shield and k (report; must finish < 60 s)",
        None,
        adult_problem,
        lambda p: search(p[0], ADULT_SHIELD, 10, p[1], "exhaustive"),
        repeat=1,
        note=_search_note,
    ),
    Benchmark(
        "leakage: experiment, 3 heart datasets x 4 shields x 3 methods, k=5",
        None,
        lambda: None,
        lambda _: heart_experiment(),
        repeat=1,
        note=lambda t: f"{len(t)} searches",
    ),
]

__all__ = ["BENCHMARKS", "adult_problem"]
