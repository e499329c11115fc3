"""Privacy models and the re-identification risk panel on 10^6 records x 4
quasi-identifiers (target < 1 s each), and the generalization search with models
and a suppression limit on Adult.

Data: the bundled Adult file (records with a missing value in the columns used
dropped, as in the tests against pycanon), resampled with replacement to 10^6
records; quasi-identifiers age, sex, race, native-country (about 2,000 classes);
sensitive attributes occupation (14 values) and hours-per-week (94 numbers, for
the ordered distance). The population table for journalist risk and k-map is
the resample's classes with 20 times their records plus 5 to 60 people.

pycanon (the peer library the tests compare with) is timed beside each model it
has, on a 10^4-record resample of the same data (10^3 for its ordered distance,
which took 81 s on 10^4): it loops over classes in Python, so 10^6 records
would take many minutes.
"""

from __future__ import annotations

import functools
import importlib.util

import numpy as np
import pandas as pd

from anonlib.core.samples import load_sample
from anonlib.measures.models import (
    ModelRequirement,
    acceptance,
    alpha,
    beta_likeness,
    delta_disclosure,
    delta_presence,
    entropy_l_diversity,
    k_map,
    l_diversity,
    model_values,
    recursive_c,
    t_closeness,
)
from anonlib.measures.risk import reidentification, suda
from anonlib.transformations.generalization import search
from bench import Benchmark
from bench.bench_leakage import ADULT_SHIELD, adult_problem

QIS = ["age", "sex", "race", "native-country"]
SENSITIVE = "occupation"
NUMERIC = "hours-per-week"
N = 1_000_000
PYCANON_N = 10_000
# pycanon's ordered distance took 81 s on 10^4 records here (a loop per class and value):
# timed on 10^3 instead
PYCANON_SIZES = {"t-closeness, ordered distance (94 values)": 1_000}
SUDA_SIZE = 3


@functools.lru_cache(maxsize=2)
def records(n: int = N) -> pd.DataFrame:
    """Adult without missing values in the columns used, resampled to ``n`` records."""
    adult = load_sample("adult").frame[[*QIS, SENSITIVE, NUMERIC]].dropna().reset_index(drop=True)
    rows = np.random.default_rng(11).integers(0, len(adult), n)
    return adult.iloc[rows].reset_index(drop=True)


@functools.lru_cache(maxsize=1)
def occupation_hierarchy() -> pd.DataFrame:
    """Occupations in four groups, then '*' (ARX layout)."""
    values = sorted(records()[SENSITIVE].unique())
    return pd.DataFrame([[v, f"group {i % 4}", "*"] for i, v in enumerate(values)])


@functools.lru_cache(maxsize=1)
def population() -> pd.DataFrame:
    """Every class of the resample with 20 times its records plus 5 to 60 people."""
    classes = records().groupby(QIS, observed=True).size().rename("n").reset_index()
    extra = np.random.default_rng(5).integers(5, 60, len(classes))
    return classes.assign(people=classes["n"].to_numpy() * 20 + extra).drop(columns="n")


REQUIREMENTS = (
    ModelRequirement("distinct_l", SENSITIVE, 2),
    ModelRequirement("t_closeness", NUMERIC, 0.3),
    ModelRequirement("recursive_cl", SENSITIVE, 2, c=3),
)

MODEL_RUNS = [
    ("alpha", lambda df: alpha(df, QIS, SENSITIVE)),
    ("distinct l", lambda df: l_diversity(df, QIS, SENSITIVE)),
    ("entropy l", lambda df: entropy_l_diversity(df, QIS, SENSITIVE)),
    ("recursive c (l = 2)", lambda df: recursive_c(df, QIS, SENSITIVE, 2)),
    ("t-closeness, equal distance", lambda df: t_closeness(df, QIS, SENSITIVE)),
    ("t-closeness, ordered distance (94 values)", lambda df: t_closeness(df, QIS, NUMERIC)),
    (
        "t-closeness, hierarchical distance",
        lambda df: t_closeness(df, QIS, SENSITIVE, hierarchy=occupation_hierarchy()),
    ),
    ("delta-disclosure", lambda df: delta_disclosure(df, QIS, SENSITIVE)),
    ("beta-likeness (basic)", lambda df: beta_likeness(df, QIS, SENSITIVE)),
    ("beta-likeness (enhanced)", lambda df: beta_likeness(df, QIS, SENSITIVE, enhanced=True)),
]

# pycanon's function for each model it has (it has no hierarchical distance, k-map or risk panel).
PYCANON_RUNS = {
    "alpha": lambda m, df: m.alpha_k_anonymity(df, QIS, [SENSITIVE]),
    "distinct l": lambda m, df: m.l_diversity(df, QIS, [SENSITIVE]),
    "entropy l": lambda m, df: m.entropy_l_diversity(df, QIS, [SENSITIVE]),
    "recursive c (l = 2)": lambda m, df: m.recursive_c_l_diversity(df, QIS, [SENSITIVE]),
    "t-closeness, equal distance": lambda m, df: m.t_closeness(df, QIS, [SENSITIVE]),
    "t-closeness, ordered distance (94 values)": lambda m, df: m.t_closeness(df, QIS, [NUMERIC]),
    "delta-disclosure": lambda m, df: m.delta_disclosure(df, QIS, [SENSITIVE]),
    "beta-likeness (basic)": lambda m, df: m.basic_beta_likeness(df, QIS, [SENSITIVE]),
    "beta-likeness (enhanced)": lambda m, df: m.enhanced_beta_likeness(df, QIS, [SENSITIVE]),
}


def _value(x) -> str:
    return f"value {x:.4g}" if isinstance(x, float) else f"value {x}"


def _pycanon_frame(n: int) -> pd.DataFrame:
    """pycanon wants plain numpy columns (no pandas extension types)."""
    return records(n).astype({c: object for c in (*QIS, SENSITIVE)} | {"age": np.int64, NUMERIC: np.int64})


BENCHMARKS = [
    Benchmark(f"models: {name}, 10^6 x 4 QIs", 1.0, records, run, repeat=3, note=_value) for name, run in MODEL_RUNS
]
BENCHMARKS += [
    Benchmark(
        "models: every model of one attribute (model_values), 10^6",
        1.0,
        records,
        lambda df: model_values(df, QIS, SENSITIVE, hierarchy=occupation_hierarchy()),
        repeat=3,
        note=lambda v: f"k={v.k}, l={v.distinct_l}, t={v.t:.3f}",
    ),
    Benchmark(
        "models: acceptance, k = 5 + 3 requirements, 5% suppression",
        1.0,
        records,
        lambda df: acceptance(df, QIS, k=5, requirements=REQUIREMENTS, max_suppressed=0.05),
        repeat=3,
        note=lambda a: f"{a.suppressed_records:,} suppressed records, acceptable={a.acceptable}",
    ),
    Benchmark(
        "models: k-map and delta-presence (population table), 10^6",
        1.0,
        lambda: (records(), population()),
        lambda args: (k_map(args[0], QIS, args[1]), delta_presence(args[0], QIS, args[1])),
        repeat=3,
        note=lambda r: f"k-map {r[0]}, delta in [{r[1].lower:.3f}, {r[1].upper:.3f}]",
    ),
    Benchmark(
        "models: risk panel, prosecutor/marketer, distribution, uniques (f = 0.05)",
        1.0,
        records,
        lambda df: reidentification(df, QIS, sampling_fraction=0.05),
        repeat=3,
        note=lambda r: (
            f"{r.classes:,} classes, highest {r.prosecutor_highest:.3f}, Dankar: {r.uniqueness.dankar_model}"
        ),
    ),
    Benchmark(
        "models: risk panel with a population table (journalist, k-map), 10^6",
        1.0,
        lambda: (records(), population()),
        lambda args: reidentification(args[0], QIS, population=args[1]),
        repeat=3,
        note=lambda r: f"k-map {r.k_map}, journalist highest {r.journalist_highest:.4f}",
    ),
    Benchmark(
        f"models: SUDA special uniques up to {SUDA_SIZE} of 4 QIs, 10^6",
        1.0,
        records,
        lambda df: suda(df, QIS, max_size=SUDA_SIZE),
        repeat=3,
        note=lambda s: f"{s.special_unique_records:,} records singled out",
    ),
]
# The generalization search with models and a suppression limit (ARX's rule), on the leakage
# bench's Adult problem (32,561 records, 5-attribute shield, k = 10; the same 10 s target):
# with t-closeness and a limit the criterion is not monotone, so IAB builds every table it expands.
SEARCHES = [
    ("k = 10, 1% suppression (monotone: IAB tags)", ()),
    ("k = 10 + distinct 2-diversity of occupation, 1% (monotone)", (ModelRequirement("distinct_l", "occupation", 2),)),
    (
        "k = 10 + distinct 2-diversity + 0.2-closeness of income, 1% (not monotone: no tagging)",
        (ModelRequirement("distinct_l", "occupation", 2), ModelRequirement("t_closeness", "income", 0.2)),
    ),
]
BENCHMARKS += [
    Benchmark(
        f"models: IAB search on Adult, {name}",
        10.0,
        adult_problem,
        functools.partial(
            lambda reqs, p: search(p[0], ADULT_SHIELD, 10, p[1], "iab", requirements=reqs, max_suppressed=0.01), reqs
        ),
        repeat=1,
        note=lambda r: f"{r.rows:,} rows, {r.suppressed:,} suppressed records, {r.generated} tables",
    )
    for name, reqs in SEARCHES
]
if importlib.util.find_spec("pycanon") is not None:  # test-only peer (requirements-nodeps.txt)
    import pycanon.anonymity as _pycanon

    BENCHMARKS += [
        Benchmark(
            f"models: pycanon reference, {name}, {PYCANON_SIZES.get(name, PYCANON_N):,} x 4 QIs",
            None,
            functools.partial(_pycanon_frame, PYCANON_SIZES.get(name, PYCANON_N)),
            functools.partial(lambda call, df: call(_pycanon, df), call),
            repeat=1,
            note=_value,
            reference=f"{PYCANON_SIZES.get(name, PYCANON_N):,} records, not 10^6: pycanon loops over classes in Python",
        )
        for name, call in PYCANON_RUNS.items()
    ]
