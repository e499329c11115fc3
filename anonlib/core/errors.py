"""One error hierarchy for everything anonlib refuses to do.

Every message is a sentence a privacy officer can act on: what is wrong, with the
numbers or names involved, and what to do instead. The dashboard shows
``str(error)`` as it is, so messages never contain tracebacks or code.

Example:
    >>> try:
    ...     raise ColumnError("Column 'zip' does not exist. Available: age, sex.")
    ... except AnonlibError as err:
    ...     print(err)
    Column 'zip' does not exist. Available: age, sex.
"""

from __future__ import annotations


class AnonlibError(Exception):
    """Base class of every error anonlib raises on purpose."""


class DataFileError(AnonlibError):
    """A file could not be read as a table (format, encoding, size, shape)."""


class FileTooLargeError(DataFileError):
    """A file or table is larger than the configured limit."""


class ColumnError(AnonlibError):
    """A column is missing, duplicated, or has the wrong kind of values."""


class ParameterError(AnonlibError):
    """A parameter is impossible (k < 1, negative capacity, empty selection...)."""


class EmptySelectionError(ParameterError):
    """Nothing was selected where at least one column or row is needed."""


class CapacityError(AnonlibError):
    """The resources cannot hold the population."""


class HierarchyError(AnonlibError):
    """A generalization hierarchy is incomplete or inconsistent."""


class PopulationError(AnonlibError):
    """A record has no match in the population table."""


class GeometryError(AnonlibError):
    """A geometry file or region table could not be used."""


class ProblemTooLargeError(AnonlibError):
    """The request is valid but too large to compute exactly here."""


class NoSolutionError(AnonlibError):
    """No generalization of the table meets the anonymity requirement or release target."""


class EngineError(AnonlibError):
    """A data engine (DuckDB, Spark) could not run a query on the data where it lives."""


class EngineUnavailableError(EngineError):
    """The requested data engine is not installed or cannot start (e.g. Spark without Java)."""


class RecipeError(AnonlibError):
    """A release recipe cannot be read, or does not fit the file it is applied to."""


class PackageError(AnonlibError):
    """A file given as a release package is not one (missing, not a zip, no recipe or table)."""


class ProjectError(AnonlibError):
    """A project cannot be found, named, opened or changed as asked."""


class StaleProjectError(ProjectError):
    """A project was changed elsewhere (another tab or process) since this view of it was read."""


class DeliveredMeanwhileError(StaleProjectError):
    """Another release was recorded into a project while a delivery was checked against its
    earlier ones: the check no longer holds and is made again on the project as it is now."""


class StoreError(ProjectError):
    """The project store cannot be used (locked, read-only, full, damaged, of a newer schema, unreachable)."""


class PrivacyBudgetError(ProjectError):
    """A private release would spend more than its project's privacy budget has left."""


class AccessError(ProjectError):
    """A team's rule refuses this: signed out, not a member, a role that does not allow it, the
    drafter approving their own release, a release handed out before approval (``team.md``)."""


def join_names(names, limit: int = 8) -> str:
    """Human list of names: ``'a, b, c'`` and ``'... (12 more)'`` past ``limit``.

    >>> join_names(["age", "sex"])
    'age, sex'
    >>> join_names(list("abcdefghij"), limit=3)
    'a, b, c ... (7 more)'
    """
    names = [str(n) for n in names]
    head = ", ".join(names[:limit])
    if len(names) > limit:
        head += f" ... ({len(names) - limit} more)"
    return head


def require_columns(frame, columns) -> None:
    """Raise ``ColumnError`` naming every requested column the table lacks.

    >>> import pandas as pd
    >>> require_columns(pd.DataFrame({"a": [1]}), ["a"])
    >>> require_columns(pd.DataFrame({"a": [1]}), ["b"])
    Traceback (most recent call last):
    ...
    anonlib.core.errors.ColumnError: These columns do not exist in the data: b. Available columns: a.
    """
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ColumnError(
            f"These columns do not exist in the data: {join_names(missing)}. "
            f"Available columns: {join_names(frame.columns)}."
        )


class KeyFileError(AnonlibError):
    """A key file is missing, unreadable or not a project key, or a recipe was made with another key."""


class SynthesisError(AnonlibError):
    """A differentially private release could not be made (budget, columns, cuts, or OpenDP refused)."""


class PrivacyExtraMissingError(SynthesisError):
    """The private release needs OpenDP (the optional ``dp`` extra), which is not installed."""
