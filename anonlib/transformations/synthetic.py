"""Synthetic data for the papers' experiments, documented and seeded.

Each generator is reproducible: the same seed always gives the same values.
Two generators live here: Tennessee ZIP codes for Adult records (Xia et al.)
and synthetic people per area as counts (Croft et al., see the section below).

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

from collections.abc import Sequence
from functools import cache

import numpy as np
import pandas as pd

from ..core.equivalence import Classes, encode
from ..core.errors import ColumnError, ParameterError, join_names, require_columns
from ..core.samples import load_sample

TENNESSEE_ZCTA_FIRST = "37010"
TENNESSEE_ZCTA_LAST = "38589"
TENNESSEE_ZIP_SEED = 2013


def tennessee_zcta_population(populated_only: bool = False) -> pd.DataFrame:
    """The Tennessee ZIP areas 37010-38589 with their 2010 population and location.

    The one definition of "the Tennessee ZCTAs" (Xia et al.'s ZIP codes and
    Croft et al.'s initial regions): GEOIDs compared as 5-character text.
    Columns ``zip`` (5-character string), ``population`` (``POP10``) and the
    internal point ``lon``/``lat``; sorted by ZIP. All 628 areas by default;
    ``populated_only=True`` keeps the 625 with residents (Croft et al. place
    sites only where people live).

    >>> table = tennessee_zcta_population()
    >>> len(table), table["zip"].iloc[0], int(table["population"].sum())
    (628, '37010', 6339942)
    >>> len(tennessee_zcta_population(populated_only=True))
    625
    """
    frame = load_sample("zcta10").frame
    geoid = frame["GEOID"].astype("string").str.zfill(5)
    inside = ((geoid >= TENNESSEE_ZCTA_FIRST) & (geoid <= TENNESSEE_ZCTA_LAST)).to_numpy(dtype=bool)
    population = frame["POP10"].fillna(0).to_numpy(dtype=np.int64)
    if populated_only:
        inside &= population > 0
    table = pd.DataFrame(
        {
            "zip": geoid[inside].to_numpy(dtype=object),
            "population": population[inside],
            "lon": frame.loc[inside, "INTPTLONG"].to_numpy(dtype=np.float64),
            "lat": frame.loc[inside, "INTPTLAT"].to_numpy(dtype=np.float64),
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


# --- geo: synthetic people per area -------------------------------------------
#
# Croft et al. generated synthetic individuals per initial region from national
# marginal distributions. We do the same with the marginals of the bundled
# Adult sample (US census 1994): sex, 5-year age band and race are drawn
# independently (the product of the three marginals), and each area's
# population is split over the combinations with one multinomial draw. The
# result is aggregated counts (area x sex x age band x race), never one row per
# person, so the 312 million people of all US ZIP areas fit in a few million rows.


# Adult ages run 17-90: bands 17-19, 20-24, ..., 85-89, 90.
AGE_BAND_EDGES = (17, 20, 25, 30, 35, 40, 45, 50, 55, 60, 65, 70, 75, 80, 85, 90, 91)
AGE_BAND_LABELS = tuple(
    f"{lo}-{hi - 1}" if hi - lo > 1 else f"{lo}" for lo, hi in zip(AGE_BAND_EDGES[:-1], AGE_BAND_EDGES[1:])
)
PEOPLE_ATTRIBUTES = ("sex", "age_band", "race")


@cache
def adult_marginals() -> dict[str, pd.Series]:
    """Share of each category of sex, age band and race among Adult's 32,561 people.

    Counted with the shared counting kernel; each Series sums to 1.

    >>> m = adult_marginals()
    >>> sorted(m), round(float(m["sex"]["Male"]), 4), len(m["age_band"])
    (['age_band', 'race', 'sex'], 0.6692, 16)
    """
    frame = load_sample("adult").frame
    age = pd.to_numeric(frame["age"], errors="coerce")
    band = pd.cut(age, bins=list(AGE_BAND_EDGES), right=False, labels=list(AGE_BAND_LABELS))
    table = encode(pd.DataFrame({"sex": frame["sex"], "age_band": band, "race": frame["race"]}))
    marginals = {}
    for j, column in enumerate(table.columns):
        sizes = Classes.from_ids(table.codes[:, j], table.cardinalities[j]).sizes
        labels = [str(v) for v in table.labels[j]]
        share = pd.Series(sizes / sizes.sum(), index=labels, name=column)
        if column == "age_band":
            share = share.reindex(list(AGE_BAND_LABELS), fill_value=0.0)
        marginals[column] = share
    return marginals


def synthetic_people(
    regions: pd.DataFrame,
    *,
    region_id: str = "region_id",
    population: str = "population",
    attributes: Sequence[str] = PEOPLE_ATTRIBUTES,
    seed: int | None = 0,
) -> pd.DataFrame:
    """Synthetic people per area as counts: one row per (area, attribute values) present.

    ``regions`` has an id and a population column; ``attributes`` is a subset
    of ``("sex", "age_band", "race")``. Each area's population is split over
    the attribute combinations by one multinomial draw with Adult's marginal
    shares (independent attributes), seeded. Columns: ``region_id``, the
    attributes (categorical), ``count``. The counts of an area sum to its
    population.

    >>> areas = pd.DataFrame({"region_id": ["37010", "37011"], "population": [1000, 5]})
    >>> people = synthetic_people(areas, attributes=["sex"], seed=1)
    >>> int(people["count"].sum()), int(people.loc[people["region_id"] == "37011", "count"].sum())
    (1005, 5)
    """

    require_columns(regions, [region_id, population])
    attributes = list(attributes)
    unknown = [a for a in attributes if a not in PEOPLE_ATTRIBUTES]
    if unknown or not attributes:
        raise ParameterError(
            f"Synthetic people can have the attributes {join_names(PEOPLE_ATTRIBUTES)}; got {join_names(attributes) or 'none'}."
        )
    pops = pd.to_numeric(regions[population], errors="coerce")
    if pops.isna().any() or (pops < 0).any():
        raise ColumnError(f"The population column '{population}' must hold whole numbers of 0 or more.")
    pops = pops.to_numpy(dtype=np.int64)
    marginals = adult_marginals()
    shares = [marginals[a].to_numpy() for a in attributes]
    joint = shares[0]
    for share in shares[1:]:
        joint = np.multiply.outer(joint, share)
    joint = joint.ravel() / joint.sum()
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(pops, joint)  # areas x combinations
    area, combo = np.nonzero(counts)
    ids = regions[region_id].astype("string").to_numpy(dtype=object)
    out = {region_id: pd.Categorical.from_codes(area, categories=pd.Index(ids).unique())}
    if len(pd.unique(ids)) != len(ids):
        raise ColumnError(f"Area ids in '{region_id}' must be unique.")
    cards = [len(s) for s in shares]
    rest = combo
    codes = []
    for card in reversed(cards):
        codes.append(rest % card)
        rest = rest // card
    for attribute, code in zip(attributes, reversed(codes)):
        out[attribute] = pd.Categorical.from_codes(code, categories=list(marginals[attribute].index))
    out["count"] = counts[area, combo]
    return pd.DataFrame(out)
