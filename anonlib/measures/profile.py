"""The first look at a dataset: column profile and re-identification risk.

``column_profile`` gives, per column, its type, distinct values and missing
share. ``risk_profile`` gives, for the chosen quasi-identifiers, the
equivalence classes' k, anonymity vector, share of unique records and the
records in classes smaller than 2, 5 and 10 (the usual thresholds).

With a person column (``Role.PERSON``) the classes are counted in distinct people
(``anonlib.core.equivalence.person_classes``): k and the vector are then classes of people,
and the unique and small-class counts are distinct people (a person is unique when one of
their records is in a class of one person, in a class smaller than t when one of their
records is), each person once; ``records`` and ``persons`` give both totals.

Example:
    >>> import pandas as pd
    >>> from anonlib.core.dataset import Dataset
    >>> df = pd.DataFrame({"zip": [1, 1, 1, 2], "sex": ["f", "f", "f", "m"]})
    >>> r = risk_profile(Dataset.from_frame("demo", df))
    >>> r.k, r.vector, r.unique_records
    (1, (1, 0, 1), 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ..core.dataset import Dataset, Role, column_kind
from ..core.equivalence import encode, person_classes, size_histogram
from ..core.errors import EmptySelectionError
from .avector import anonymity_vector

RISK_THRESHOLDS = (2, 5, 10)


@dataclass(frozen=True)
class ColumnProfile:
    """One column at a glance."""

    column: str
    kind: str
    role: str
    distinct: int
    missing: int
    missing_share: float


@dataclass(frozen=True)
class RiskProfile:
    """Re-identification risk of a dataset for one quasi-identifier."""

    quasi_identifiers: tuple[str, ...]
    records: int
    rows_dropped: int
    classes: int
    k: int
    vector: tuple[int, ...]
    unique_records: int
    records_below: tuple[tuple[int, int], ...]
    person: str | None = None  # counted in distinct persons of this column
    persons: int | None = None  # distinct persons (with ``person``): the base of the shares

    @property
    def unit(self) -> str:
        """What the counts count: "records", or "people" with a person column."""
        return "records" if self.person is None else "people"

    @property
    def _base(self) -> int:
        return self.records if self.persons is None else self.persons

    @property
    def unique_share(self) -> float:
        return self.unique_records / self._base if self._base else 0.0

    def as_dict(self) -> dict[str, object]:
        """Plain values for JSON reports (CLI and downloads).

        >>> RiskProfile(("a",), 3, 0, 2, 1, (1, 1), 1, ((2, 1),)).as_dict()["records_below"]
        {'<2': 1}
        """
        out: dict[str, object] = {
            "quasi_identifiers": list(self.quasi_identifiers),
            "records": self.records,
            "rows_dropped": self.rows_dropped,
            "classes": self.classes,
            "k": self.k,
            "unique_records": self.unique_records,
            "records_below": {f"<{t}": n for t, n in self.records_below},
            "anonymity_vector": list(self.vector),
        }
        if self.person is not None:  # k, the vector and the counts above are people
            out.update(
                unit="people",
                person=self.person,
                persons=self.persons,
                unique_people=self.unique_records,
                people_below={f"<{t}": n for t, n in self.records_below},
            )
        return out

    def share_below(self, threshold: int) -> float:
        """Share of records in classes smaller than ``threshold``."""
        for t, n in self.records_below:
            if t == threshold:
                return n / self._base if self._base else 0.0
        raise KeyError(threshold)


def column_profile(dataset: Dataset) -> tuple[ColumnProfile, ...]:
    """Type, role, distinct values and missing share of every column.

    >>> from anonlib.core.dataset import Dataset
    >>> p = column_profile(Dataset.from_frame("d", pd.DataFrame({"a": [1, None, 1]})))
    >>> p[0].distinct, p[0].missing
    (1, 1)
    """
    frame = dataset.frame
    n = max(len(frame), 1)
    missing = frame.isna().sum()
    distinct = frame.nunique(dropna=True)
    return tuple(
        ColumnProfile(
            column=str(c),
            kind=column_kind(frame[c]),
            role=dataset.roles.get(c, Role.IGNORE).value,
            distinct=int(distinct[c]),
            missing=int(missing[c]),
            missing_share=float(missing[c]) / n,
        )
        for c in frame.columns
    )


def risk_profile(dataset: Dataset, quasi_identifiers: Sequence[str] | None = None, *, engine=None) -> RiskProfile:
    """k, anonymity vector and records at risk for the quasi-identifiers
    (the dataset's own when None). Honours the count column and the missing policy.

    ``dataset`` may also be a path to CSV/Parquet files or a table on a data
    engine (``anonlib.engine.scan``); with such a source, or with
    ``engine="duckdb"``/``"spark"``, the classes are counted by that engine.
    """
    if engine is not None or not isinstance(dataset, Dataset):  # counted by the engine, concluded here
        from ..engine import WEIGHT, as_engine_table
        from ..engine import size_histogram as engine_histogram

        table = as_engine_table(dataset, engine)
        qis = tuple(table.quasi_identifiers if quasi_identifiers is None else quasi_identifiers)
        require_quasi_identifiers(qis)
        if table.person is not None:  # counted in people by the engine (``anonlib.engine.owners``)
            from ..engine.owners import class_people

            per_class, smallest, records, dropped = class_people(table, qis, table.person)
            profile = risk_from_histogram(qis, per_class[:, 0], per_class[:, 1], rows_dropped=dropped)
            return in_people(profile, table.person, smallest[:, 0], smallest[:, 1], records)
        frame, dropped = table.summary(list(qis))
        sizes, classes = engine_histogram(frame, qis, count=WEIGHT, engine=table.engine)
        return risk_from_histogram(qis, sizes, classes, rows_dropped=dropped)
    qis = tuple(dataset.quasi_identifiers if quasi_identifiers is None else quasi_identifiers)
    require_quasi_identifiers(qis)
    person = dataset.person
    frame, dropped = dataset.analysis_frame(list(qis), person=person is not None)
    if person is not None:
        return person_risk_profile(frame, qis, person, count=dataset.count, rows_dropped=dropped)
    classes = encode(frame, list(qis), count=dataset.count).classes()
    return risk_from_histogram(qis, *size_histogram(classes.sizes), rows_dropped=dropped)


def person_risk_profile(
    frame: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    person: str,
    *,
    count: str | None = None,
    rows_dropped: int = 0,
) -> RiskProfile:
    """The risk profile counted in distinct people of ``person`` (see the module text).

    >>> df = pd.DataFrame({"sex": ["f", "f", "f", "m", "m"], "pid": ["a", "a", "b", "c", "a"]})
    >>> r = person_risk_profile(df, ["sex"], "pid")
    >>> r.k, r.vector, r.records, r.persons, r.unique_records, r.records_below
    (2, (0, 2), 5, 3, 0, ((2, 0), (5, 3), (10, 3)))
    """
    require_quasi_identifiers(quasi_identifiers)
    if count is not None:  # a row of no record is no one's record (as the history kernel counts them)
        frame = frame[frame[count].to_numpy() != 0]
    counted = person_classes(frame, list(quasi_identifiers), person, count=count)
    profile = risk_from_histogram(quasi_identifiers, *size_histogram(counted.sizes), rows_dropped=rows_dropped)
    # each person once: the people of the smallest class any of their records is in
    smallest = np.full(counted.n_persons, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(smallest, counted.persons, counted.row_sizes)
    sizes, people = size_histogram(smallest)
    return in_people(profile, person, sizes, people, int(counted.classes.sizes.sum()), persons=counted.n_persons)


def in_people(
    profile: RiskProfile,
    person: str,
    smallest: np.ndarray,
    people: np.ndarray,
    records: int,
    *,
    persons: int | None = None,
) -> RiskProfile:
    """``profile`` (its classes counted in people) with its unique and small-class counts in people:
    ``people[i]`` people have their smallest class of ``smallest[i]`` people; ``records`` the
    records counted, ``persons`` the people in all (default: the people counted here).

    >>> p = in_people(risk_from_histogram(["zip"], np.array([1, 2]), np.array([1, 1])), "pid", np.array([1, 2]), np.array([1, 2]), 4)
    >>> p.persons, p.unique_records, p.records_below, p.unit
    (3, 1, ((2, 1), (5, 3), (10, 3)), 'people')
    """
    smallest = np.asarray(smallest, dtype=np.int64)
    people = np.asarray(people, dtype=np.int64)
    return replace(
        profile,
        records=int(records),
        person=person,
        persons=int(people.sum()) if persons is None else int(persons),
        unique_records=int(people[smallest == 1].sum()),
        records_below=tuple((t, int(people[smallest < t].sum())) for t in RISK_THRESHOLDS),
    )


def require_quasi_identifiers(quasi_identifiers: Sequence[str]) -> None:
    if not quasi_identifiers:
        raise EmptySelectionError("Mark at least one column as quasi-identifier to see the re-identification risk.")


def risk_from_histogram(
    quasi_identifiers: Sequence[str], sizes: np.ndarray, classes: np.ndarray, *, rows_dropped: int = 0
) -> RiskProfile:
    """The risk profile from the class-size summary: ``classes[i]`` classes of
    ``sizes[i]`` records each (``size_histogram``; an engine's group-by gives the same).

    >>> r = risk_from_histogram(["zip"], np.array([1, 3]), np.array([2, 1]))
    >>> r.k, r.vector, r.records, r.records_below
    (1, (2, 0, 1), 5, ((2, 2), (5, 5), (10, 5)))
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    classes = np.asarray(classes, dtype=np.int64)
    records = sizes * classes
    return RiskProfile(
        quasi_identifiers=tuple(quasi_identifiers),
        records=int(records.sum()),
        rows_dropped=int(rows_dropped),
        classes=int(classes.sum()),
        k=int(sizes.min()) if sizes.size else 0,
        vector=anonymity_vector(sizes, classes=classes),
        unique_records=int(classes[sizes == 1].sum()),
        records_below=tuple((t, int(records[sizes < t].sum())) for t in RISK_THRESHOLDS),
    )


def profile_table(profiles: Sequence[ColumnProfile]) -> pd.DataFrame:
    """The column profile as a table for display or download."""
    return pd.DataFrame(
        {
            "column": [p.column for p in profiles],
            "type": [p.kind for p in profiles],
            "role": [p.role for p in profiles],
            "distinct values": [p.distinct for p in profiles],
            "missing": [p.missing for p in profiles],
            "missing share": [round(p.missing_share, 4) for p in profiles],
        }
    )
