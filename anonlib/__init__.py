"""anonlib: privacy-risk measures for health data, free of any user interface.

Rooms, from the bottom up (imports run downwards only; docs/architecture.md):

- ``anonlib.core``: what everything stands on: loading files, the dataset and
  its column roles, the one equivalence-class counting kernel, how cells read,
  ARX-layout hierarchies and the first hierarchy offered for a column, population
  tables, work budgets, the bundled samples and the error classes.
- ``anonlib.engine``: the same group counts on DuckDB (files larger than
  memory) and Spark (a cluster); a counting backend under the measures, it
  imports nothing but ``core``.
- ``anonlib.measures``: ``profile``, ``avector`` (Caballero et al.), ``risk``,
  ``models``, ``leakage`` (Arca & Hewett), ``peers`` (Kroes et al.), ``metrics``,
  ``utility`` (information loss), ``identifiers``.
- ``anonlib.transformations``: ``generalization`` (full-domain generalization: one space,
  the optimal walk, Arca & Hewett's searches), ``frontier`` (Xia et al.), ``geo`` (Croft et al.),
  ``schedule`` (Caballero et al.), ``suppression`` (local suppression),
  ``microaggregation`` (MDAV), ``coding`` (top and bottom coding), ``synthetic``;
  the papers' experiments in ``anonymize_experiments`` and ``schedule_experiments``.
- ``anonlib.workflow``: from risk picture to a release: the release target,
  steps and their costs, a working copy with a history, the recipe, the release
  package, the report and what pages show beside it, the searches a page offers,
  interactive time limits, the release view, and a recipe re-applied (or a release
  searched) on an engine.
- ``anonlib.cli``: the command line (``python -m anonlib``).

Subpackages split by what their parts compute (``generalization``, ``geo``, ``models``,
``peers``, ``frontier``, ``schedule``, ``core.loading``) re-export their public names.

The public contract's paths (``anonlib.utility``, ``anonlib.geo``, ``anonlib.models``
and the other ten of the public API outside checks rely on) are three-line modules at the top of the
package re-exporting their room (``from .measures.utility import *``): outside code
imports what it always did; nothing inside the package imports them.
"""

from .core.errors import (
    AnonlibError,
    CapacityError,
    ColumnError,
    DataFileError,
    EmptySelectionError,
    EngineError,
    EngineUnavailableError,
    FileTooLargeError,
    GeometryError,
    HierarchyError,
    PackageError,
    ParameterError,
    PopulationError,
    ProblemTooLargeError,
    RecipeError,
)

__all__ = [
    "AnonlibError",
    "CapacityError",
    "ColumnError",
    "DataFileError",
    "EmptySelectionError",
    "EngineError",
    "EngineUnavailableError",
    "FileTooLargeError",
    "GeometryError",
    "HierarchyError",
    "ParameterError",
    "PopulationError",
    "ProblemTooLargeError",
    "PackageError",
    "RecipeError",
]
