"""Privacy models per sensitive attribute, and the acceptance test that makes them a release target.

The models every peer tool reports (ARX, sdcMicro, pycanon), each as defined in
its paper; the value of a table is its worst equivalence class:

- (α,k)-anonymity (Wong, Li, Fu & Wang 2006): α = the largest share of one
  sensitive value in a class;
- distinct l-diversity (Machanavajjhala, Kifer, Gehrke & Venkitasubramaniam
  2007, Def. 3.2 read as "l distinct values"): the fewest distinct values in a class;
- entropy l-diversity (same, Def. 4.1): l = exp(smallest class entropy, natural
  log); a table is entropy-l-diverse for every l up to it (not floored);
- recursive (c,l)-diversity (same, Def. 4.2): with a class's value counts sorted
  decreasing, r1 < c (r_l + ... + r_m); the table's value for a given l is the
  largest r1 / (r_l + ... + r_m), and the table meets (c,l) for every c above it;
- t-closeness (Li, Li & Venkatasubramanian 2007): the largest Earth Mover's
  Distance between a class's and the whole table's distribution, with equal
  distance (½ Σ abs difference), ordered distance (Σ abs cumulative difference
  / (m-1)) or hierarchical distance (a generalization hierarchy, ARX layout);
- δ-disclosure privacy (Brickell & Shmatikov 2008): the largest
  abs(ln(p_class(s) / p_table(s))) over classes and the values present in them;
- β-likeness (Cao & Karras 2012): the largest relative gain (p_class - p) / p
  over values with p_class > p; enhanced β-likeness also caps each value's gain
  at -ln p, so its value is the basic one when every gain is within that cap
  and infinite (no β works) otherwise;
- k-map (Sweeney; cloud DLP services) and δ-presence (Nergiz, Atzori & Clifton
  2007) against a population table in the form ``anonlib.transformations.frontier`` takes.

How they are computed. The counting kernel turns the table into
small per-class summaries, ``SensitiveCounts``: class sizes and the non-empty
(class, sensitive value) cells with their record counts, sorted by (class,
value), values numbered by their rank among the table's sorted values (missing
last, as ``encode_column`` does). Every model is a small public function of
these summaries (``class_alpha``, ``class_distinct``, ``class_entropy``,
``class_recursive_c``, ``class_t``, ``class_delta``, ``class_beta``), so a
database engine that produces the same cells with a group-by
(``SensitiveCounts.from_cells``) gets bit-identical answers: float sums run in
the canonical (class, value) order, reductions over classes are max/min.

Acceptance, which makes them a release target. A ``ModelRequirement`` is one switched-on
model for one sensitive attribute. ``acceptance`` suppresses the records of
every class that fails k or any requirement and says whether the suppressed
share is within the limit; a generalization meeting that is acceptable.
Reference distributions (t, δ, β) are always the whole table's, suppressed
records included, as in ARX.

Missing values are a value of their own ("missing") unless the caller dropped
them (``Dataset(missing="drop")``), as everywhere in the library. A count
column is honoured without expanding rows.

Parts, in the order they build on each other: ``summaries`` (the per-class counts
of each sensitive value, read by every model), ``per_class`` (each model's value
per class), ``requirements`` (a target's models, acceptance with record
suppression), ``population`` (k-map, δ-presence), ``values`` (the contract's
one-call functions and every model at once for pages, report and CLI). Everything
public is importable from ``anonlib.measures.models``.

Example (Li et al. 2007, Table 4: salaries in thousands, three classes):
    >>> import pandas as pd
    >>> df = pd.DataFrame({"zip": ["476**"] * 3 + ["4790*"] * 3 + ["476**"] * 3,
    ...                    "age": ["2*"] * 3 + [">=40"] * 3 + ["3*"] * 3,
    ...                    "salary": [3, 4, 5, 6, 11, 8, 7, 9, 10]})
    >>> t_closeness(df, ["zip", "age"], "salary")   # the class {3K, 4K, 5K}
    0.375
    >>> l_diversity(df, ["zip", "age"], "salary"), alpha(df, ["zip", "age"], "salary")
    (3, 0.3333333333333333)
"""

from __future__ import annotations

from .per_class import (
    HierarchyLevels,
    class_alpha,
    class_beta,
    class_delta,
    class_distinct,
    class_entropy,
    class_recursive_c,
    class_t,
    hierarchy_levels,
    worst,
)
from .population import DeltaPresence, PopulationCounts, delta_presence, k_map, population_counts
from .requirements import (
    Acceptance,
    ModelRequirement,
    Owners,
    acceptance,
    checked_requirements,
    class_passes,
    classes_failing,
    requirements_monotone,
    suppression_limit,
    within_limit,
)
from .summaries import (
    DISTANCES,
    MODEL_NAMES,
    MODELS,
    TOLERANCE,
    SensitiveCounts,
    counts_from_codes,
    sensitive_counts,
)
from .values import (
    MODEL_TABLE_COLUMNS,
    ModelValues,
    alpha,
    beta_likeness,
    delta_disclosure,
    entropy_l_diversity,
    l_diversity,
    model_table,
    model_values,
    recursive_c,
    t_closeness,
)

__all__ = [
    "Acceptance",
    "Owners",
    "DISTANCES",
    "DeltaPresence",
    "HierarchyLevels",
    "MODELS",
    "MODEL_NAMES",
    "MODEL_TABLE_COLUMNS",
    "ModelRequirement",
    "ModelValues",
    "PopulationCounts",
    "SensitiveCounts",
    "TOLERANCE",
    "acceptance",
    "alpha",
    "beta_likeness",
    "checked_requirements",
    "class_alpha",
    "class_beta",
    "class_delta",
    "class_distinct",
    "class_entropy",
    "class_passes",
    "class_recursive_c",
    "class_t",
    "classes_failing",
    "counts_from_codes",
    "delta_disclosure",
    "delta_presence",
    "entropy_l_diversity",
    "hierarchy_levels",
    "k_map",
    "l_diversity",
    "model_table",
    "model_values",
    "population_counts",
    "recursive_c",
    "requirements_monotone",
    "sensitive_counts",
    "suppression_limit",
    "t_closeness",
    "within_limit",
    "worst",
]
