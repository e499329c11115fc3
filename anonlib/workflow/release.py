"""The released table and its bytes: one writer for the app's download and the CLI.

``release_table(dataset, columns)`` is the table that leaves the organisation:

- identifier columns are never released; by default ignored columns are not
  either (``default_release_columns``), the user may keep some;
- with the dataset's ``missing="drop"``, only the assessed records are released
  (``Dataset.assessed``: those holding a value in every quasi-identifier, every
  sensitive column and every column a privacy model of the target reads, the
  records the target was checked on); a blank in another released column (an
  ignored column kept in the release) is written as a blank;
- with a record-count column, rows that became identical are merged and their
  counts added (first occurrence first; the form of Arca & Hewett's Table 5),
  so the release does not show how the original rows were split.

``release_csv(table)`` writes it: UTF-8, comma-separated, CRLF line ends, no
index, spreadsheet formulas neutralised (``anonlib.core.loading.to_safe_csv``).
The same dataset always gives the same bytes, which is what lets
``python -m anonlib apply`` reproduce the app's download byte for byte.

Example:
    >>> import pandas as pd
    >>> from anonlib.core.dataset import Dataset
    >>> ds = Dataset.from_frame("d", pd.DataFrame({"id": [1, 2, 3], "age": ["30-39", "30-39", "40-49"],
    ...                                           "n": [2, 1, 4]}), {"id": "identifier", "n": "count"})
    >>> release_table(ds).values.tolist()
    [['30-39', 3], ['40-49', 4]]
    >>> release_csv(release_table(ds))
    b'age,n\\r\\n30-39,3\\r\\n40-49,4\\r\\n'
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..core.dataset import Dataset, Role
from ..core.equivalence import encode
from ..core.errors import ColumnError, EmptySelectionError, join_names
from ..core.loading import to_safe_csv


def default_release_columns(dataset: Dataset) -> tuple[str, ...]:
    """Every column but identifiers and ignored ones, in the file's order (count column included).

    >>> ds = Dataset.from_frame("d", pd.DataFrame({"name": ["a"], "age": [3], "x": [1]}), {"x": "ignore"})
    >>> default_release_columns(ds)
    ('age',)
    """
    kept = (Role.QUASI_IDENTIFIER, Role.SENSITIVE, Role.COUNT)
    return tuple(str(c) for c in dataset.frame.columns if dataset.roles.get(c, Role.IGNORE) in kept)


def check_release_columns(dataset: Dataset, columns: Sequence[str]) -> tuple[str, ...]:
    """``columns`` in the file's order with the count column added; a sentence when
    one is an identifier or does not exist, or when none is left."""
    return release_columns(columns, dataset.frame.columns, dataset.roles, dataset.count)


def release_columns(
    columns: Sequence[str], order: Sequence[str], roles: Mapping[str, Role], count: str | None
) -> tuple[str, ...]:
    """``check_release_columns`` for any table (in memory or on an engine): the
    table's columns in ``order``, their ``roles`` and its ``count`` column.

    >>> release_columns(["b", "a"], ["a", "b", "n"], {"n": Role.COUNT}, "n")
    ('a', 'b', 'n')
    """
    columns = list(dict.fromkeys(columns))
    unknown = [c for c in columns if c not in order]
    if unknown:
        raise ColumnError(f"The release cannot include {join_names(unknown)}: no such column in the data.")
    identifiers = [c for c in columns if roles.get(c) is Role.IDENTIFIER]
    if identifiers:
        raise ColumnError(
            f"{join_names(identifiers)} is marked as an identifier and is never released; change its role first."
        )
    if count and count not in columns:
        columns.append(count)
    if not [c for c in columns if c != count]:
        raise EmptySelectionError("Choose at least one column to release.")
    position = {c: i for i, c in enumerate(order)}
    return tuple(sorted(columns, key=position.__getitem__))


def release_table(dataset: Dataset, columns: Sequence[str] | None = None, *, extra: Sequence[str] = ()) -> pd.DataFrame:
    """The table to release from ``dataset`` (see the module text); ``extra`` are the
    columns the release target's privacy models read (``ReleaseTarget.sensitive``),
    assessed like the sensitive columns.

    >>> df = pd.DataFrame({"age": ["30", "30", None], "dx": ["a", None, "b"], "note": [None, "x", "y"]})
    >>> ds = Dataset.from_frame("d", df, {"age": "quasi-identifier", "dx": "sensitive", "note": "ignore"})
    >>> release_table(ds.with_missing("drop"), ["age", "dx", "note"]).values.tolist()
    [['30', 'a', nan]]
    """
    columns = check_release_columns(dataset, default_release_columns(dataset) if columns is None else columns)
    values = [c for c in columns if c != dataset.count]
    frame, _ = dataset.assessed_frame(values, extra)
    frame = frame[list(columns)]
    if dataset.count is None or frame.empty:
        return frame.reset_index(drop=True)
    return merge_identical_rows(frame, dataset.count)


def merge_identical_rows(frame: pd.DataFrame, count: str) -> pd.DataFrame:
    """Rows equal on every column but ``count`` merged into their first occurrence,
    counts added (missing values equal each other).

    >>> merge_identical_rows(pd.DataFrame({"a": ["x", "y", "x"], "n": [1, 2, 3]}), "n").values.tolist()
    [['x', 4], ['y', 2]]
    """
    values = [c for c in frame.columns if c != count]
    table = encode(frame, values, count=count)
    rows = table.classes()
    order = np.sort(rows.first_rows)
    merged = frame.iloc[order].reset_index(drop=True)
    merged[count] = rows.sizes[rows.ids[order]]
    return merged


def release_csv(table: pd.DataFrame) -> bytes:
    """The released table as CSV bytes (the one writer of the app and the CLI)."""
    return to_safe_csv(table)


def digest(data: bytes) -> str:
    """SHA-256 of released bytes, recorded in the recipe to confirm a reproduction.

    >>> digest(b"")[:12]
    'e3b0c44298fc'
    """
    return hashlib.sha256(data).hexdigest()


def file_digest(source: bytes | str | os.PathLike) -> str:
    """SHA-256 of bytes, or of a file's bytes read in chunks (``hashlib.file_digest``).

    >>> file_digest(b"") == digest(b"")
    True
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        return digest(bytes(source))
    with open(source, "rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def is_sha256(text: object) -> bool:
    """Whether ``text`` is a SHA-256 digest in hexadecimal (64 lower-case digits).

    >>> is_sha256(digest(b"x")), is_sha256("abc")
    (True, False)
    """
    return isinstance(text, str) and len(text) == 64 and all(c in "0123456789abcdef" for c in text)
