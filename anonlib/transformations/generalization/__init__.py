"""Full-domain generalization: one space of generalizations, the searches that walk it.

A full-domain generalization raises every value of a quasi-identifier to the same level
of its hierarchy; the level vectors form a lattice. Parts, from the bottom up:

- ``space``: ``GeneralizationSpace``, the lattice of one table: inputs checked once, the
  table encoded once by the counting kernel, classes counted by rolling up from tables
  already counted, and the one rule for a node that meets the release target (k, privacy
  models, a suppression limit), measured on the records it would release;
- ``optimal``: the walk that finds the node with the least information loss, proven
  (OLA's bounds, Flash's tags), and the brute-force reference;
- ``paper``: Arca & Hewett's IAB (Algorithm 1), exhaustive (Method 1) and greedy (Method 2);
- ``search``: ``search(...)``, the entry point of the public contract (``anonlib.anonymize``),
  its ``SearchResult`` with every number of a release measured on the table as written, and
  the work estimate.

Example:
    >>> from anonlib.core.samples import load_sample
    >>> from anonlib.transformations.anonymize_experiments import arca_hierarchies
    >>> df = load_sample("arca_table1").frame
    >>> result = search(df, ["Zip", "Age", "AC"], 3, arca_hierarchies(df), count="#Rec.")
    >>> result.levels, result.rows, result.violations
    ({'Zip': 1, 'Age': 1, 'AC': 0}, 21, 0)
"""

from ...core.errors import NoSolutionError
from .optimal import RELATIVE_TIE, OptimalLevels, brute_force, optimal_levels
from .search import (
    METHOD_NAMES,
    METHODS,
    PRUNINGS,
    SEARCH_METHODS,
    SearchResult,
    compare_methods,
    comparison_table,
    estimate_search,
    release_search,
    search,
)
from .space import MAX_NODES, ClassTable, GeneralizationSpace, SearchNode

__all__ = [
    "METHODS",
    "METHOD_NAMES",
    "MAX_NODES",
    "PRUNINGS",
    "RELATIVE_TIE",
    "SEARCH_METHODS",
    "ClassTable",
    "GeneralizationSpace",
    "NoSolutionError",
    "OptimalLevels",
    "SearchNode",
    "SearchResult",
    "brute_force",
    "compare_methods",
    "comparison_table",
    "estimate_search",
    "optimal_levels",
    "release_search",
    "search",
]
