"""Health-data benchmarks: classes counted in people, keyed pseudonyms and date shifts.

Targets: counting in people costs one more ``combine`` and ``bincount`` than counting
records (10^6 visits of 200,000 people on three quasi-identifiers within twice the
record kernel's 0.3 s); pseudonyms and date offsets are one keyed hash per distinct person
(2x10^5 of them within 2 s each, on a shared two-core machine).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from anonlib.core.equivalence import person_classes
from anonlib.measures.models import acceptance
from anonlib.transformations.pseudonyms import date_offsets, pseudonyms
from bench import Benchmark

KEY = bytes(range(32))


def _visits() -> pd.DataFrame:
    rng = np.random.default_rng(36)
    n, people = 1_000_000, 200_000
    person = rng.integers(0, people, n)
    birth = rng.integers(1920, 2010, people)
    sex = rng.choice(np.array(["F", "M"], dtype=object), people)
    zips = rng.integers(37010, 37210, people).astype(str)
    return pd.DataFrame(
        {
            "pid": np.char.add("p", person.astype(str)).astype(object),
            "birth_year": birth[person],
            "sex": sex[person],
            "zip": zips[person],
        }
    )


def _people_k(df: pd.DataFrame) -> int:
    return person_classes(df, ["birth_year", "sex", "zip"], "pid").k


def _whole_people(df: pd.DataFrame) -> int:
    return int(acceptance(df, ["birth_year", "sex", "zip"], k=2, person="pid").suppressed_persons)


def _pseudonyms(df: pd.DataFrame) -> int:
    return int(pseudonyms(df["pid"], KEY).nunique())


def _offsets(df: pd.DataFrame) -> int:
    return int(np.abs(date_offsets(df["pid"], KEY, 182)).max())


BENCHMARKS = [
    Benchmark(
        "people: k in persons, 10^6 visits of 2x10^5 people x 3 QIs",
        0.6,
        _visits,
        _people_k,
        note=lambda k: f"k={k} people",
    ),
    Benchmark(
        "people: whole-people suppression to k = 2, 10^6 visits",
        1.5,
        _visits,
        _whole_people,
        note=lambda n: f"{n:,} people suppressed",
    ),
    Benchmark(
        "pseudonyms (HMAC-SHA-256), 10^6 visits of 2x10^5 people",
        2.0,
        _visits,
        _pseudonyms,
        note=lambda n: f"{n:,} pseudonyms",
    ),
    Benchmark(
        "date offsets (keyed), 10^6 visits of 2x10^5 people",
        2.0,
        _visits,
        _offsets,
        note=lambda n: f"largest offset {n} days",
    ),
]
