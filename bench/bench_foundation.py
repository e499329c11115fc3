"""Foundation benchmarks: the counting kernel and loading + profiling Adult."""

from __future__ import annotations

import numpy as np
import pandas as pd

from anonlib.core.dataset import Dataset
from anonlib.core.equivalence import encode
from anonlib.core.loading import load_table
from anonlib.core.samples import SAMPLES
from anonlib.measures.avector import anonymity_vector
from anonlib.measures.profile import column_profile, risk_profile
from bench import Benchmark


def _million_rows() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    n = 1_000_000
    return pd.DataFrame(
        {
            "age": rng.integers(17, 91, n),
            "sex": rng.choice(np.array(["Female", "Male"], dtype=object), n),
            "zip": rng.integers(37010, 38590, n).astype(str),
        }
    )


def _kernel(df: pd.DataFrame) -> tuple[int, ...]:
    classes = encode(df, ["age", "sex", "zip"]).classes()
    return anonymity_vector(classes.sizes)


def _load_and_profile(_: None) -> int:
    """Read the bundled Adult file as an upload would be, profile every column and the risk."""
    table = load_table(SAMPLES["adult"].path)
    roles = {c: "ignore" for c in table.frame.columns}
    roles.update({c: "quasi-identifier" for c in ("age", "sex", "race", "marital-status")})
    dataset = Dataset.from_frame("adult", table.frame, roles)
    column_profile(dataset)
    return risk_profile(dataset).k


BENCHMARKS = [
    Benchmark(
        "kernel: class sizes + anonymity vector, 10^6 rows x 3 QIs",
        0.3,
        _million_rows,
        _kernel,
        reference="pycanon k_anonymity: 2.7 s on this shape",
        note=lambda v: f"vector length {len(v)}, k={next(i for i, x in enumerate(v, 1) if x)}",
    ),
    Benchmark(
        "load + profile Adult (32,561 x 15, gzip CSV)",
        1.0,
        lambda: None,
        _load_and_profile,
        note=lambda k: f"k={k}",
    ),
]
