"""Synthetic data generators (seeded, documented).

Each section below is self-contained (its own imports), so generators of
different capabilities can live in this one module.
"""

# --- geo: synthetic people per area -------------------------------------------
#
# Croft et al. generated synthetic individuals per initial region from national
# marginal distributions. We do the same with the marginals of the bundled
# Adult sample (US census 1994): sex, 5-year age band and race are drawn
# independently (the product of the three marginals), and each area's
# population is split over the combinations with one multinomial draw. The
# result is aggregated counts (area x sex x age band x race), never one row per
# person, so the 312 million people of all US ZIP areas fit in a few million rows.

from functools import lru_cache as _geo_lru_cache
from typing import Sequence as _GeoSequence

import numpy as _geo_np
import pandas as _geo_pd

# Adult ages run 17-90: bands 17-19, 20-24, ..., 85-89, 90.
AGE_BAND_EDGES = (17, 20, 25, 30, 35, 40, 45, 50, 55, 60, 65, 70, 75, 80, 85, 90, 91)
AGE_BAND_LABELS = tuple(
    f"{lo}-{hi - 1}" if hi - lo > 1 else f"{lo}" for lo, hi in zip(AGE_BAND_EDGES[:-1], AGE_BAND_EDGES[1:])
)
PEOPLE_ATTRIBUTES = ("sex", "age_band", "race")


@_geo_lru_cache(maxsize=None)
def adult_marginals() -> dict[str, _geo_pd.Series]:
    """Share of each category of sex, age band and race among Adult's 32,561 people.

    Counted with the shared counting kernel; each Series sums to 1.

    >>> m = adult_marginals()
    >>> sorted(m), round(float(m["sex"]["Male"]), 4), len(m["age_band"])
    (['age_band', 'race', 'sex'], 0.6692, 16)
    """
    from .equivalence import Classes, encode
    from .samples import load_sample

    frame = load_sample("adult").frame
    age = _geo_pd.to_numeric(frame["age"], errors="coerce")
    band = _geo_pd.cut(age, bins=list(AGE_BAND_EDGES), right=False, labels=list(AGE_BAND_LABELS))
    table = encode(_geo_pd.DataFrame({"sex": frame["sex"], "age_band": band, "race": frame["race"]}))
    marginals = {}
    for j, column in enumerate(table.columns):
        sizes = Classes.from_ids(table.codes[:, j], table.cardinalities[j]).sizes
        labels = [str(v) for v in table.labels[j]]
        share = _geo_pd.Series(sizes / sizes.sum(), index=labels, name=column)
        if column == "age_band":
            share = share.reindex(list(AGE_BAND_LABELS), fill_value=0.0)
        marginals[column] = share
    return marginals


def synthetic_people(
    regions: _geo_pd.DataFrame,
    *,
    region_id: str = "region_id",
    population: str = "population",
    attributes: _GeoSequence[str] = PEOPLE_ATTRIBUTES,
    seed: int | None = 0,
) -> _geo_pd.DataFrame:
    """Synthetic people per area as counts: one row per (area, attribute values) present.

    ``regions`` has an id and a population column; ``attributes`` is a subset
    of ``("sex", "age_band", "race")``. Each area's population is split over
    the attribute combinations by one multinomial draw with Adult's marginal
    shares (independent attributes), seeded. Columns: ``region_id``, the
    attributes (categorical), ``count``. The counts of an area sum to its
    population.

    >>> areas = _geo_pd.DataFrame({"region_id": ["37010", "37011"], "population": [1000, 5]})
    >>> people = synthetic_people(areas, attributes=["sex"], seed=1)
    >>> int(people["count"].sum()), int(people.loc[people["region_id"] == "37011", "count"].sum())
    (1005, 5)
    """
    from .errors import ColumnError, ParameterError, join_names, require_columns

    require_columns(regions, [region_id, population])
    attributes = list(attributes)
    unknown = [a for a in attributes if a not in PEOPLE_ATTRIBUTES]
    if unknown or not attributes:
        raise ParameterError(
            f"Synthetic people can have the attributes {join_names(PEOPLE_ATTRIBUTES)}; got {join_names(attributes) or 'none'}."
        )
    pops = _geo_pd.to_numeric(regions[population], errors="coerce")
    if pops.isna().any() or (pops < 0).any():
        raise ColumnError(f"The population column '{population}' must hold whole numbers of 0 or more.")
    pops = pops.to_numpy(dtype=_geo_np.int64)
    marginals = adult_marginals()
    shares = [marginals[a].to_numpy() for a in attributes]
    joint = shares[0]
    for share in shares[1:]:
        joint = _geo_np.multiply.outer(joint, share)
    joint = joint.ravel() / joint.sum()
    rng = _geo_np.random.default_rng(seed)
    counts = rng.multinomial(pops, joint)  # areas x combinations
    area, combo = _geo_np.nonzero(counts)
    ids = regions[region_id].astype("string").to_numpy(dtype=object)
    out = {region_id: _geo_pd.Categorical.from_codes(area, categories=_geo_pd.Index(ids).unique())}
    if len(_geo_pd.unique(ids)) != len(ids):
        raise ColumnError(f"Area ids in '{region_id}' must be unique.")
    cards = [len(s) for s in shares]
    rest = combo
    codes = []
    for card in reversed(cards):
        codes.append(rest % card)
        rest = rest // card
    for attribute, code in zip(attributes, reversed(codes)):
        out[attribute] = _geo_pd.Categorical.from_codes(code, categories=list(marginals[attribute].index))
    out["count"] = counts[area, combo]
    return _geo_pd.DataFrame(out)
