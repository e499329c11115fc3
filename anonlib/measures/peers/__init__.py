"""Privacy of individuals: PPP, NPP, PP and PoAC (Kroes, Janssen, Groenwold, van Leeuwen 2021).

One variable ``s`` is sensitive, the others are auxiliary. An adversary knows the
true values of individual ``i`` on some auxiliary variables (``a_i``) and looks
at the *peers*: the records matching ``a_i``. With ``#{x}`` the number of
records matching ``x``:

- ``PPP_i(a_i) = 1 - #{s_i, a_i} / #{a_i}``   proportion of protective peers
- ``NPP_i(a_i) = #{a_i} - #{s_i, a_i}``       number of protective peers
- ``PP_{i,v}(a_i) = #{v, a_i} / #{a_i}``      peer protection of a false value v
- ``PoAC_{q,i}(a_i) = #{v != s_i : PP_{i,v}(a_i) > q} / (|dom(s)| - 1)``

Individual ``i`` has p-upward privacy (Definition 3) when ``PPP_i(a_i) > p``
for *every* a_i, and q-downward privacy (Definition 4) when
``PoAC_{q,i}(a_i) = 1`` for every a_i, so the quantities that matter are
minima over all subsets of the auxiliary variables (2^k of them, the empty
subset included by default). dom(s) = the values of s observed in the data.

**Look-alikes among other people's records.** The paper has one record per individual. With
a person column (``person=`` on every function here; the Individual privacy page, the risk
report and ``python -m anonlib privacy`` pass ``Dataset.person``) a record's peers are the
record itself and the records of OTHER people matching ``a_i``: a person's other records (their
other visits) are never look-alikes, since an attacker who finds the person's records is not
confused by them. With ``#'{x}`` the records of people other than i's person matching x:

- ``PPP_i(a_i) = 1 - (1 + #'{s_i, a_i}) / (1 + #'{a_i})``, ``NPP_i(a_i) = #'{a_i} - #'{s_i, a_i}``
- ``PP_{i,v}(a_i) = #'{v, a_i} / (1 + #'{a_i})`` for v != s_i, and PoAC from these PP over the
  |dom(s)| - 1 other values observed in the whole table.

That is the paper's rule on the table without i's person's other records; the record itself
counts once even when its row stands for several records (``count``). At p = 0 a record is
protected when, for every a_i, at least one record of another person matches it with another
sensitive value. Without a person column every record is its own person and every result is
the paper's, unchanged.

How the minimum over all subsets is computed fast (the paper's R code needed
4,000 CPU-minutes for its Fig. 2):

1. every column is encoded once (``anonlib.core.equivalence.encode``);
2. subsets are visited depth first; each subset's peer-group ids are its
   parent's ids refined by one more column (``combine``), so no subset is
   grouped from scratch;
3. for each subset, ``#{a}`` and, for every sensitive choice, ``#{s, a}`` are
   ``bincount``s over those ids (``Classes.from_ids``);
4. the paper's monotonicity fact ("when a set of auxiliary values occurs x
   times, any set that contains it occurs at most x times"): a peer group that
   is already a single row stays that row in every superset, where every
   measure is 0 - already attained by the smaller subset - so such rows leave
   the whole branch below it.

Memory stays linear in n per subset: only the ids along the current path are
held, plus the (variables x individuals) result.

Parts, by what they compute: ``measures`` (the four measures for one set of known
variables), ``subsets`` (the minimum over every subset: the walk and its estimate),
``matrix`` (the paper's Fig. 2 and its heatmap), ``potential`` (Figs. 3-4: leaving a
variable out, equal-width bands), ``examples`` (the paper's datasets). Everything
public is importable from ``anonlib.measures.peers``.

Example (the paper's Table 1, age in 10-year bands; Alice is row 0):
    >>> import pandas as pd
    >>> df = pd.DataFrame({
    ...     "diagnosis": ["Cancer", "Cancer", "Cancer", "Arthrosis", "Diabetes"],
    ...     "gender": ["F", "M", "F", "M", "F"],
    ...     "age": ["45-54", "35-44", "35-44", "55-64", "45-54"]})
    >>> m = peer_measures(df, "diagnosis", ["gender", "age"])
    >>> float(m.ppp[0]), int(m.npp[0]), float(m.poac[0])
    (0.5, 1, 0.5)

Alice's second visit (row 5, arthrosis) is not her look-alike: her PPP stays 0.5 (not 2/3); for
row 4 it is another person's record (2/3):
    >>> visits = pd.concat([df, df.iloc[[0]].assign(diagnosis="Arthrosis")], ignore_index=True)
    >>> visits["pid"] = [1, 2, 3, 4, 5, 1]
    >>> ppp(visits, "diagnosis", ["gender", "age"], person="pid").round(3).tolist()
    [0.5, 0.0, 0.0, 0.0, 0.667, 0.5]
"""

from __future__ import annotations

from .examples import EXAMPLES, PeersExample, example_dataset
from .matrix import (
    HeatmapColumns,
    PrivacyMatrix,
    default_q,
    estimate_privacy_matrix,
    heatmap_columns,
    privacy_matrix,
)
from .measures import (
    MAX_VARIABLES,
    MEASURE_NAMES,
    MEASURES,
    NARROW,
    TABLE_LIMIT,
    PeerMeasures,
    npp,
    peer_measures,
    poac,
    pp,
    ppp,
)
from .potential import (
    GeneralizationPotential,
    LeaveOneOut,
    Partition,
    estimate_generalization_potential,
    generalization_potential,
    leave_one_out,
    partitions,
)
from .subsets import SubsetMinimum, estimate_minimum, min_poac, min_ppp, minimum_over_subsets, walk_size

__all__ = [
    "EXAMPLES",
    "GeneralizationPotential",
    "HeatmapColumns",
    "LeaveOneOut",
    "MAX_VARIABLES",
    "MEASURES",
    "MEASURE_NAMES",
    "NARROW",
    "Partition",
    "PeerMeasures",
    "PeersExample",
    "PrivacyMatrix",
    "SubsetMinimum",
    "TABLE_LIMIT",
    "default_q",
    "estimate_generalization_potential",
    "estimate_minimum",
    "estimate_privacy_matrix",
    "example_dataset",
    "generalization_potential",
    "heatmap_columns",
    "leave_one_out",
    "min_poac",
    "min_ppp",
    "minimum_over_subsets",
    "npp",
    "partitions",
    "peer_measures",
    "poac",
    "pp",
    "ppp",
    "privacy_matrix",
    "walk_size",
]
