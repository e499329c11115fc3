"""anonlib: privacy-risk measures for health data, free of any user interface.

Layout:

- ``anonlib.core``: what everything stands on: loading files, the dataset and
  its column roles, the one equivalence-class counting kernel, ARX-layout
  hierarchies, shared metrics, the bundled samples and the error classes.
- capabilities, one module each: ``avector`` and ``schedule`` (Caballero et al.),
  ``geo`` (Croft et al.), ``peers`` (Kroes et al.), ``leakage`` and ``anonymize``
  (Arca & Hewett), ``lattice`` and ``frontier`` (Xia et al.), ``profile`` and
  ``report`` (the first look and the printable report).
- ``anonlib.workflow``: from risk picture to a release: the release target,
  steps, a working copy with a history, the recipe and the release package.
- ``anonlib.engine``: the same group counts on DuckDB (files larger than memory)
  and Spark (a cluster), for data that does not fit in pandas.
- ``anonlib.cli``: the command line (``python -m anonlib``).
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
    ParameterError,
    PopulationError,
    ProblemTooLargeError,
    PackageError,
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
