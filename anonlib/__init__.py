"""anonlib: privacy-risk measures for health data, free of any user interface.

Capabilities (one module each): equivalence-class counting (``equivalence``),
anonymity vectors (``avector``), dataset loading and roles (``loading``,
``dataset``), data profiles (``profile``) and the papers' methods built on them.
"""

from .errors import (
    AnonlibError,
    CapacityError,
    ColumnError,
    DataFileError,
    EmptySelectionError,
    FileTooLargeError,
    GeometryError,
    HierarchyError,
    ParameterError,
    PopulationError,
    ProblemTooLargeError,
)

__all__ = [
    "AnonlibError",
    "CapacityError",
    "ColumnError",
    "DataFileError",
    "EmptySelectionError",
    "FileTooLargeError",
    "GeometryError",
    "HierarchyError",
    "ParameterError",
    "PopulationError",
    "ProblemTooLargeError",
]
