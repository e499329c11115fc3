"""The released table and its bytes: one writer for the app's download and the CLI.

``release_table(dataset, columns)`` is the table that leaves the organisation:

- identifier columns and the person column are never released, unless a step
  turned them into keyed pseudonyms (``Pseudonymize``); a column a step removed
  (Safe Harbor's identifiers) is never released; by default ignored columns are
  not released either (``default_release_columns``) and ``keep`` columns are,
  unchanged; ``column_account`` says which columns were released and which were
  left out, with their roles and why;
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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.dataset import Dataset, Role
from ..core.equivalence import encode
from ..core.errors import ColumnError, EmptySelectionError, join_names
from ..core.loading import to_safe_csv


def pseudonymized_columns(steps: Iterable = ()) -> tuple[str, ...]:
    """Columns a step turned into keyed pseudonyms (``releases``): an identifier or the
    person column is released only as such a pseudonym."""
    return tuple(dict.fromkeys(c for step in steps for c in getattr(step, "releases", ())))


def withheld_columns(steps: Iterable = ()) -> tuple[str, ...]:
    """Columns a step removed (``withholds``, e.g. Safe Harbor's identifiers): never released."""
    return tuple(dict.fromkeys(c for step in steps for c in getattr(step, "withholds", ())))


def default_release_columns(dataset: Dataset, steps: Iterable = ()) -> tuple[str, ...]:
    """Every column but identifiers, the person column and ignored ones, in the file's
    order (count and kept columns included); an identifier or the person column a step
    pseudonymised is released as its pseudonym; a column a step removed is not.

    >>> ds = Dataset.from_frame("d", pd.DataFrame({"name": ["a"], "age": [3], "x": [1], "y": [2]}),
    ...                         {"x": "ignore", "y": "keep"})
    >>> default_release_columns(ds)
    ('age', 'y')
    """
    steps = tuple(steps)
    kept = (Role.QUASI_IDENTIFIER, Role.SENSITIVE, Role.COUNT, Role.KEEP)
    named = set(pseudonymized_columns(steps))
    withheld = set(withheld_columns(steps))
    return tuple(
        str(c)
        for c in dataset.frame.columns
        if c not in withheld
        and (
            dataset.roles.get(c, Role.IGNORE) in kept
            or (c in named and dataset.roles.get(c) in (Role.IDENTIFIER, Role.PERSON, Role.HOUSEHOLD))
        )
    )


def check_release_columns(dataset: Dataset, columns: Sequence[str], steps: Iterable = ()) -> tuple[str, ...]:
    """``columns`` in the file's order with the count column added; a sentence when
    one is an identifier (or the person column) not pseudonymised by one of ``steps``,
    was removed by one of them, or does not exist, or when none is left."""
    steps = tuple(steps)
    return release_columns(
        columns,
        dataset.frame.columns,
        dataset.roles,
        dataset.count,
        pseudonymized=pseudonymized_columns(steps),
        withheld=withheld_columns(steps),
    )


def release_columns(
    columns: Sequence[str],
    order: Sequence[str],
    roles: Mapping[str, Role],
    count: str | None,
    *,
    pseudonymized: Sequence[str] = (),
    withheld: Sequence[str] = (),
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
    identifiers = [c for c in columns if roles.get(c) is Role.IDENTIFIER and c not in pseudonymized]
    if identifiers:
        raise ColumnError(
            f"{join_names(identifiers)} is marked as an identifier and is never released (only as a pseudonym); "
            "change its role first."
        )
    for role, what in ((Role.PERSON, "person"), (Role.HOUSEHOLD, "household")):
        owners = [c for c in columns if roles.get(c) is role and c not in pseudonymized]
        if owners:
            raise ColumnError(
                f"'{owners[0]}' is the {what} column and is released only as a pseudonym; pseudonymise it first "
                "(or leave it out of the release)."
            )
    removed = [c for c in columns if c in withheld]
    if removed:
        raise ColumnError(f"{join_names(removed)} was removed by Safe Harbor and is never released.")
    if count and count not in columns:
        columns.append(count)
    if not [c for c in columns if c != count]:
        raise EmptySelectionError("Choose at least one column to release.")
    position = {c: i for i, c in enumerate(order)}
    return tuple(sorted(columns, key=position.__getitem__))


_LEFT_OUT_REASONS = {
    Role.IDENTIFIER: "never released; release it as a pseudonym to keep it",
    Role.PERSON: "released only as a pseudonym",
    Role.HOUSEHOLD: "released only as a pseudonym",
    Role.IGNORE: "not released; give it the role keep to release it unchanged",
}


@dataclass(frozen=True)
class ColumnAccount:
    """Every column of a release accounted for: those released (with their role) and
    those left out (with their role and why).

    >>> ds = Dataset.from_frame("d", pd.DataFrame({"mrn": ["1"], "age": [3], "hhexp": [1.5]}), {"hhexp": "ignore"})
    >>> account = column_account(ds, ["age"])
    >>> account.released, account.left_out_names
    ((('age', 'quasi-identifier'),), ('mrn', 'hhexp'))
    >>> account.sentences()[1]
    'Left out: mrn (identifier: never released; release it as a pseudonym to keep it); hhexp (ignore: not released; give it the role keep to release it unchanged).'
    """

    released: tuple[tuple[str, str], ...]
    left_out: tuple[tuple[str, str, str], ...]

    @property
    def released_names(self) -> tuple[str, ...]:
        return tuple(c for c, _ in self.released)

    @property
    def left_out_names(self) -> tuple[str, ...]:
        return tuple(c for c, _, _ in self.left_out)

    def sentences(self) -> tuple[str, str]:
        """Released and left-out columns, one sentence each."""
        released = ", ".join(f"{c} ({r})" for c, r in self.released) or "none"
        left = "; ".join(f"{c} ({r}: {why})" for c, r, why in self.left_out) or "none: every column is released"
        return f"Released: {released}.", f"Left out: {left}."

    def to_json(self) -> dict[str, list[dict[str, str]]]:
        """``released_columns`` and ``left_out_columns`` as the command line's ``--json`` writes them."""
        return {
            "released_columns": [{"column": c, "role": r} for c, r in self.released],
            "left_out_columns": [{"column": c, "role": r, "reason": why} for c, r, why in self.left_out],
        }


def column_account(dataset: Dataset, released: Sequence[str], steps: Iterable = ()) -> ColumnAccount:
    """Which columns of ``dataset`` the release holds (``released``, as written) and which
    it leaves out, with each one's role and the reason."""
    return account_of(dataset.frame.columns, dataset.roles, released, steps)


def account_of(
    order: Sequence[str], roles: Mapping[str, Role | str], released: Sequence[str], steps: Iterable = ()
) -> ColumnAccount:
    """``column_account`` from a table's columns (``order``) and ``roles`` (a recipe's
    source, an engine's table)."""
    steps = tuple(steps)
    named, withheld = set(pseudonymized_columns(steps)), set(withheld_columns(steps))
    chosen = set(released)
    kept, left = [], []
    for column in order:
        role = Role(roles.get(column, Role.IGNORE))
        if column in chosen:
            shown = f"{role.value}, as a pseudonym" if column in named else role.value
            kept.append((str(column), shown))
        elif column in withheld:
            left.append((str(column), role.value, "removed by Safe Harbor"))
        else:
            why = _LEFT_OUT_REASONS.get(role, "not chosen for the release")
            left.append((str(column), role.value, why))
    return ColumnAccount(tuple(kept), tuple(left))


def release_table(
    dataset: Dataset, columns: Sequence[str] | None = None, *, extra: Sequence[str] = (), steps: Iterable = ()
) -> pd.DataFrame:
    """The table to release from ``dataset`` (see the module text); ``extra`` are the
    columns the release target's privacy models read (``ReleaseTarget.sensitive``),
    assessed like the sensitive columns; ``steps`` the steps that made it (which say
    what was pseudonymised or removed).

    >>> df = pd.DataFrame({"age": ["30", "30", None], "dx": ["a", None, "b"], "note": [None, "x", "y"]})
    >>> ds = Dataset.from_frame("d", df, {"age": "quasi-identifier", "dx": "sensitive", "note": "ignore"})
    >>> release_table(ds.with_missing("drop"), ["age", "dx", "note"]).values.tolist()
    [['30', 'a', nan]]
    """
    steps = tuple(steps)
    chosen = default_release_columns(dataset, steps) if columns is None else columns
    columns = check_release_columns(dataset, chosen, steps)
    values = [c for c in columns if c != dataset.count]
    frame, _ = dataset.assessed_frame([c for c in values if c not in _never_analysed(dataset)], extra)
    if any(c in _never_analysed(dataset) for c in values):  # pseudonyms travel along, row for row
        rows = dataset.assessed(extra)
        for column in values:
            if column in _never_analysed(dataset):
                frame[column] = dataset.frame[column][rows].to_numpy()
    frame = frame[list(columns)]
    if dataset.count is None or frame.empty:
        return frame.reset_index(drop=True)
    return merge_identical_rows(frame, dataset.count)


def _never_analysed(dataset: Dataset) -> set[str]:
    """Columns ``analysis_frame`` refuses (identifiers, the person and the household column)."""
    return set(dataset.identifiers) | set(dataset.owners)


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
