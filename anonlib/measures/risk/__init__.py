"""Re-identification risk under the three classic attacker models, population
uniqueness from a sample, and special uniques (ARX's "risk analysis" perspective).

- ``attacker``: prosecutor, journalist and marketer risk, k-map, the risk
  distribution over records (``reidentification``, the contract's entry point);
- ``uniqueness``: the share of records unique in the population estimated from
  the sample by Zayatz, Pitman and SNB, and Dankar et al.'s rule between them;
- ``suda``: special uniques, per record the minimal combinations of
  quasi-identifier values that single it out (Elliot et al.'s SUDA).

Example:
    >>> import pandas as pd
    >>> r = reidentification(pd.DataFrame({"zip": [1, 1, 2], "sex": ["f", "f", "m"]}), ["zip", "sex"])
    >>> r.prosecutor_highest, round(r.prosecutor_average, 4), r.records_at_risk
    (1.0, 0.6667, 1.0)
"""

from .attacker import (
    RISK_BINS,
    ReidentificationRisk,
    RiskBin,
    reidentification,
    risk_distribution,
    risk_from_sizes,
)
from .suda import SpecialUniques, estimate_suda, suda
from .uniqueness import POPULATION_MODELS, PopulationUniqueness, population_uniqueness

__all__ = [
    "POPULATION_MODELS",
    "RISK_BINS",
    "PopulationUniqueness",
    "ReidentificationRisk",
    "RiskBin",
    "SpecialUniques",
    "estimate_suda",
    "population_uniqueness",
    "reidentification",
    "risk_distribution",
    "risk_from_sizes",
    "suda",
]
