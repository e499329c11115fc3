"""Synthetic attributes for the papers' experiments, documented and seeded.

Each generator is self-contained (its own constants and helpers) and
reproducible: the same seed always gives the same values.

Tennessee ZIP codes (Xia et al. 2013, Section 4.1.2)
----------------------------------------------------
The paper gives every Adult record a 5-digit Tennessee ZIP code drawn from
census tables we do not have. ``tennessee_zip_codes`` draws each record's ZIP
independently from the ZIP code tabulation areas (ZCTAs) 37010-38589 of the
bundled 2010 census gazetteer (``data/samples/zcta10.csv.gz``), with
probability proportional to the area's 2010 population (``POP10``); areas
with no residents are never drawn. ZIP codes stay 5-character strings
("37010"), so they sort as the HIPAA rules expect. ``adult_with_zip`` appends
such a column (``zip``) to the Adult sample.

Example:
    >>> zips = tennessee_zip_codes(5, seed=1)
    >>> len(zips), all(len(z) == 5 and "37010" <= z <= "38589" for z in zips)
    (5, True)
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .equivalence import encode
from .errors import ParameterError
from .samples import load_sample

TENNESSEE_ZCTA_FIRST = "37010"
TENNESSEE_ZCTA_LAST = "38589"
TENNESSEE_ZIP_SEED = 2013


def tennessee_zcta_population() -> pd.DataFrame:
    """The Tennessee ZIP areas 37010-38589 with their 2010 population.

    Columns ``zip`` (5-character string) and ``population``; sorted by ZIP.

    >>> table = tennessee_zcta_population()
    >>> len(table), table["zip"].iloc[0], int(table["population"].sum())
    (628, '37010', 6339942)
    """
    frame = load_sample("zcta10").frame
    geoid = frame["GEOID"].astype("string").str.zfill(5)
    inside = (geoid >= TENNESSEE_ZCTA_FIRST) & (geoid <= TENNESSEE_ZCTA_LAST)
    table = pd.DataFrame(
        {
            "zip": geoid[inside].to_numpy(dtype=object),
            "population": frame.loc[inside, "POP10"].fillna(0).to_numpy(dtype=np.int64),
        }
    )
    return table.sort_values("zip", ignore_index=True)


def tennessee_zip_codes(n_records: int, *, seed: int | None = TENNESSEE_ZIP_SEED) -> np.ndarray:
    """``n_records`` Tennessee ZIP codes drawn in proportion to ZIP-area population.

    >>> tennessee_zip_codes(3, seed=7).tolist() == tennessee_zip_codes(3, seed=7).tolist()
    True
    """
    if n_records < 0:
        raise ParameterError(f"The number of ZIP codes to draw cannot be negative (got {n_records}).")
    table = tennessee_zcta_population()
    weights = table["population"].to_numpy(dtype=np.float64)
    rng = np.random.default_rng(seed)
    return rng.choice(table["zip"].to_numpy(dtype=object), size=n_records, p=weights / weights.sum())


def adult_with_zip(*, seed: int | None = TENNESSEE_ZIP_SEED, column: str = "zip") -> pd.DataFrame:
    """The Adult sample with a synthetic Tennessee ZIP code per record (column ``zip``).

    >>> frame = adult_with_zip()
    >>> frame.shape, frame["zip"].str.len().eq(5).all()
    ((32561, 16), np.True_)
    """
    frame = load_sample("adult").frame.copy()
    frame[column] = pd.array(tennessee_zip_codes(len(frame), seed=seed), dtype="string")
    return frame


def zip3_populations() -> dict[str, int]:
    """2010 population of every 3-digit ZIP area of the US (sum of its ZCTAs),
    for HIPAA Safe Harbor's under-20,000 rule.

    >>> populations = zip3_populations()
    >>> populations["372"] > 20_000, len(populations) > 800
    (True, True)
    """
    frame = load_sample("zcta10").frame
    zip3 = pd.DataFrame(
        {"zip3": frame["GEOID"].astype("string").str.zfill(5).str[:3], "people": frame["POP10"].fillna(0)}
    )
    table = encode(zip3, ["zip3"], count="people")
    classes = table.classes()
    # class ids follow the sorted labels, so the kernel's sizes line up with them
    return {str(label): int(size) for label, size in zip(table.labels[0], classes.sizes)}
