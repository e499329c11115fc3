"""Risk-utility frontier of de-identification policies (Xia, Heatherly, Ding, Li, Malin 2013).

A policy cuts each quasi-identifier's ordered domain into contiguous
intervals (a bit-string, see ``anonlib.transformations.frontier.policy_lattice``). Every policy gets a point in
the risk-utility (R-U) plane:

- **risk** (Benitez et al. distinguishability, paper Eq. 2-3):
  ``sum_d 1/g(gen(d)) / sum_d 1/g(d)`` with ``g`` the number of people of a
  population table in the record's (generalized) cell. Without a population
  table the dataset is its own population and risk is the number of
  equivalence classes after generalization over the number before.
- **information loss** (paper Eq. 4): ``KL(P || Q)`` of the original
  quasi-identifier distribution ``P`` from ``Q``, which spreads the ``m``
  records of a generalized cell ``c`` uniformly over its ``|c|`` original value
  combinations. The paper's claim that this lies in [0, 1] is false (spec), so
  the raw value is reported and the value divided by the top policy's KL is
  plotted.

The frontier is the set of evaluated policies no other evaluated policy
strictly dominates (Definitions 3.9-3.10). It is searched exhaustively (small
lattices), by random chains (RCS, Algorithm 1) or by the sublattice heuristic
(SHS, Algorithm 2 with the Appendix's non-overlapping sublattices). Quality is
the area under the frontier's step curve in the normalized R-U square (paper
Fig. 5; smaller is better).

Speed: the data are encoded once (``anonlib.core.equivalence.encode``) and
collapsed to distinct quasi-identifier combinations. A policy then costs one
cumulative sum per attribute (domain position -> interval id), one gather per
block of attributes (small joint domains are combined on their grid), a
mixed-radix key (``_cell_keys``: the kernel's ``combine`` without its densifying
pass when the key space is small) + ``bincount`` for the class sizes, and, for
KL, the identity

    KL = (1/N) [sum_i n_i ln n_i - sum_c m_c ln m_c] + sum_a sum_v P_a(v) ln w_a(v)

where ``n_i`` are the original class sizes, ``m_c`` the generalized ones and
``w_a(v)`` the width of the interval holding value ``v`` of attribute ``a``:
``ln |c|`` is a sum over attributes, so its expectation only needs marginals.

Parts: ``space`` (domains, encoded data, a policy's risk and loss), ``dominance``
(the frontier and its area), ``search`` (SHS, RCS, exhaustive within a budget),
``safe_harbor`` (HIPAA Safe Harbor as a policy, and who beats it). Everything
public is importable from ``anonlib.transformations.frontier``.

Example:
    >>> import pandas as pd
    >>> df = pd.DataFrame({"age": [30, 30, 40, 50], "sex": ["f", "m", "f", "f"]})
    >>> evaluate(df, ["age", "sex"], {"age": [1, 1], "sex": [1]})
    (1.0, 0.0)
    >>> risk, loss = evaluate(df, ["age", "sex"], {"age": [0, 1], "sex": [1]})
    >>> round(risk, 4), round(loss, 4)
    (0.75, 0.1733)
"""

from __future__ import annotations

from .dominance import Frontier, frontier_area, non_dominated, strictly_dominates
from .safe_harbor import SafeHarborPolicy, dominating, lattice_size_text, safe_harbor_policy
from .search import FrontierEntry, FrontierSearch, estimate_explore, explore, search_frontier
from .space import (
    BLOCK_GRID_LIMIT,
    DEFAULT_THRESHOLD,
    DIRECT_COUNT_LIMIT,
    DRAWS_PER_POLICY,
    EXHAUSTIVE_MAX_BITS,
    METHODS,
    SAFE_HARBOR_SMALL_AREA,
    SAFE_HARBOR_TOP_AGE,
    DomainOrderError,
    PolicySpace,
    ProgressCallback,
    default_order,
    evaluate,
    population_count_column,
    prepare,
)

__all__ = [
    "BLOCK_GRID_LIMIT",
    "DEFAULT_THRESHOLD",
    "DIRECT_COUNT_LIMIT",
    "DRAWS_PER_POLICY",
    "DomainOrderError",
    "EXHAUSTIVE_MAX_BITS",
    "Frontier",
    "FrontierEntry",
    "FrontierSearch",
    "METHODS",
    "PolicySpace",
    "ProgressCallback",
    "SAFE_HARBOR_SMALL_AREA",
    "SAFE_HARBOR_TOP_AGE",
    "SafeHarborPolicy",
    "default_order",
    "dominating",
    "estimate_explore",
    "evaluate",
    "explore",
    "frontier_area",
    "lattice_size_text",
    "non_dominated",
    "population_count_column",
    "prepare",
    "safe_harbor_policy",
    "search_frontier",
    "strictly_dominates",
]
