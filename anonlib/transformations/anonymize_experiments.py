"""Arca & Hewett's worked material: the paper's Figure 2 hierarchies and its
heart-disease experiment (Section 4.2, Figures 8-10, Table 7).

Kept apart from ``anonlib.transformations.generalization`` (the searches) as ``schedule_experiments`` is
from ``schedule``: the searches do not need the paper's example data, and the
example data call the searches.

Example:
    >>> from anonlib.core.samples import load_sample
    >>> from anonlib.transformations.generalization import search
    >>> df = load_sample("arca_table1").frame
    >>> search(df, ["Zip", "Age", "AC"], 3, arca_hierarchies(df), count="#Rec.").levels
    {'Zip': 1, 'Age': 1, 'AC': 0}
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..core.errors import ColumnError, join_names
from ..core.hierarchy import flat_hierarchy, interval_hierarchy, masking_hierarchy, parse_bands, taxonomy_hierarchy
from ..measures.target import ReleaseTarget
from .generalization import METHODS, release_search

# --- the paper's example hierarchies (Figure 2) ------------------------------------

ARCA_AGE_BANDS = "20-34, 35-44, 45-64, 65-85 | 20-44, 45-85 | 20-85"
ARCA_AC_GROUPS = {"Yes": ["High", "Med", "Low"], "No": ["No"], "Any": ["Yes", "No"]}


def arca_hierarchies(
    df: pd.DataFrame, zip_column: str = "Zip", age_column: str = "Age", ac_column: str | None = "AC"
) -> dict[str, pd.DataFrame]:
    """The paper's Figure 2 hierarchies for a table: Zip digit masking (levels 0-5),
    Age bands 20-34/35-44/45-64/65-85 -> 20-44/45-85 -> 20-85 (0-3), and AC
    High/Med/Low -> Yes, No -> No, -> Any (0-2).

    >>> from anonlib.core.samples import load_sample
    >>> {a: h.shape[1] - 1 for a, h in arca_hierarchies(load_sample("arca_table1").frame).items()}
    {'Zip': 5, 'Age': 3, 'AC': 2}
    """
    out = {
        zip_column: masking_hierarchy(df[zip_column].dropna()),
        age_column: interval_hierarchy(df[age_column].dropna(), parse_bands(ARCA_AGE_BANDS)),
    }
    if ac_column is not None:
        out[ac_column] = taxonomy_hierarchy(ARCA_AC_GROUPS)
    return out


# --- the paper's experiment (Section 4.2, Figures 8-10, Table 7) ----------------

HEART_SAMPLES = {"heart_cleveland": "1: Cleveland", "heart_hungarian": "2: Hungarian", "heart_va": "3: VA"}
EXPERIMENT_SHIELDS: tuple[tuple[str, ...], ...] = (
    ("Zip", "Smoker", "Sex", "Age"),
    ("Zip", "Smoker", "Sex"),
    ("Zip", "Smoker", "Age"),
    ("Zip", "Age"),
)
EXPERIMENT_SEED = 2021

# The paper's Table 7 (Cleveland, k = 5): (shield, method) -> (rows, generalizations).
PAPER_TABLE7 = {
    (("Zip", "Smoker", "Sex", "Age"), "exhaustive"): (297, 563),
    (("Zip", "Smoker", "Sex", "Age"), "greedy"): (274, 68),
    (("Zip", "Smoker", "Sex", "Age"), "iab"): (297, 304),
    (("Zip", "Smoker", "Sex"), "exhaustive"): (303, 11),
    (("Zip", "Smoker", "Sex"), "greedy"): (303, 6),
    (("Zip", "Smoker", "Sex"), "iab"): (303, 6),
    (("Zip", "Smoker", "Age"), "exhaustive"): (298, 93),
    (("Zip", "Smoker", "Age"), "greedy"): (274, 11),
    (("Zip", "Smoker", "Age"), "iab"): (298, 51),
    (("Zip", "Age"), "exhaustive"): (298, 14),
    (("Zip", "Age"), "greedy"): (274, 12),
    (("Zip", "Age"), "iab"): (298, 14),
}


def heart_table(frame: pd.DataFrame, seed: int = EXPERIMENT_SEED) -> pd.DataFrame:
    """The paper's seven heart-disease attributes from a UCI heart-disease file.

    Age, Sex (M/F), Smoker, Chol, BS (fasting blood sugar > 120 mg/dl: 1/0),
    Disease (Present when ``num`` > 0) and a synthetic Zip. The processed UCI
    files have no smoking column, so Smoker stands in with ``exang``
    (exercise-induced angina, 1/0): a real binary attribute of the same files
    whose leakage on Cleveland (0.11) is close to the paper's Smoker (0.12).
    Zip is drawn uniformly from 10000-99999 with a fixed seed (the paper adds a
    5-digit Zip without saying how).

    >>> from anonlib.core.samples import load_sample
    >>> t = heart_table(load_sample("heart_cleveland").frame)
    >>> t.columns.tolist(), len(t), t["Zip"].str.len().unique().tolist()
    (['Age', 'Sex', 'Smoker', 'Chol', 'BS', 'Disease', 'Zip'], 303, [5])
    """
    required = ["age", "sex", "exang", "chol", "fbs", "num"]
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise ColumnError(
            f"A heart-disease table needs the columns {join_names(required)}; missing {join_names(missing)}."
        )
    rng = np.random.default_rng(seed)

    def whole(column: str) -> pd.Series:
        return pd.to_numeric(frame[column], errors="coerce").round().astype("Int64")

    sex = whole("sex")
    return pd.DataFrame(
        {
            "Age": whole("age"),
            "Sex": sex.map({1: "M", 0: "F"}, na_action="ignore").astype(object),
            "Smoker": whole("exang"),
            "Chol": whole("chol"),
            "BS": whole("fbs"),
            "Disease": np.where(whole("num").fillna(0).to_numpy() > 0, "Present", "Absent"),
            "Zip": rng.integers(10000, 100000, len(frame)).astype(str),
        }
    )


def heart_hierarchies(table: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Hierarchies of the experiment: Zip masking (0-5), Age as in the paper's
    Figure 2 (0-3), Sex and Smoker flat (0-1).

    >>> from anonlib.core.samples import load_sample
    >>> h = heart_hierarchies(heart_table(load_sample("heart_va").frame))
    >>> {a: t.shape[1] - 1 for a, t in h.items()}
    {'Zip': 5, 'Age': 3, 'Sex': 1, 'Smoker': 1}
    """
    out = arca_hierarchies(table, ac_column=None)
    out["Sex"] = flat_hierarchy(table["Sex"])
    out["Smoker"] = flat_hierarchy(table["Smoker"])
    return out


def heart_experiment(
    samples: Sequence[str] = tuple(HEART_SAMPLES),
    shields: Sequence[Sequence[str]] = EXPERIMENT_SHIELDS,
    ks: Sequence[int] = (5,),
    methods: Sequence[str] = METHODS,
    *,
    seed: int = EXPERIMENT_SEED,
) -> pd.DataFrame:
    """The paper's comparison of IAB, exhaustive and greedy on the heart-disease data.

    One row per dataset, shield, k and method: rows kept, violations, total
    levels of the result, tables generated, seconds, and the paper's Table 7
    numbers where they are comparable (Cleveland, k = 5).

    >>> t = heart_experiment(["heart_cleveland"], [("Zip", "Age")], [5])
    >>> t[["method", "rows", "paper_rows"]].values.tolist()
    [['iab', 295, 298], ['exhaustive', 295, 298], ['greedy', 276, 274]]
    """
    from ..core.samples import load_sample

    rows = []
    for key in samples:
        table = heart_table(load_sample(key).frame, seed)
        hierarchies = heart_hierarchies(table)
        for shield in shields:
            for k in ks:
                for method in methods:
                    result = release_search(table, list(shield), hierarchies, method, target=ReleaseTarget(k))
                    paper = PAPER_TABLE7.get((tuple(shield), method)) if key == "heart_cleveland" and k == 5 else None
                    rows.append(
                        {
                            "dataset": HEART_SAMPLES.get(key, key),
                            "shield": ", ".join(shield),
                            "k": k,
                            "method": method,
                            "levels": ", ".join(f"{a} {v}" for a, v in result.levels.items()),
                            "rows": result.rows,
                            "violations": result.violations,
                            "generalizations": result.generalizations,
                            "generated": result.generated,
                            "seconds": result.seconds,
                            "paper_rows": paper[0] if paper else pd.NA,
                            "paper_generated": paper[1] if paper else pd.NA,
                        }
                    )
    out = pd.DataFrame(rows)
    for column in ("paper_rows", "paper_generated"):
        out[column] = out[column].astype("Int64")
    return out
