"""Who can be singled out when records link: people by the sequence of their rows, households by
their members together, and sdcMicro's household risk.

When the person column is released in any form (itself, a keyed pseudonym), an attacker who
knows a person's quasi-identifiers over several records looks for the *history* (the multiset of
the person's rows) rather than one row; when the household column is released, for the
household's *signature* (its members' rows together). ``history_risk`` counts the people unique
on their history and those whose history is shared by fewer than 2, 5 and 10 people;
``household_risk`` the same for households, and the household risk of sdcMicro's
``measure_risk(hid=)`` without sampling weights: with r_i = 1/f_i the individual risk of each
member record i (f_i the records of its class on the quasi-identifiers, over the whole file), a
household's risk is 1 - prod(1 - r_i); its maximum, mean and the households above a threshold.
The counting is the kernel's (``anonlib.core.histories``).

Example (three people seen twice: a and b alike, c apart; two households):
    >>> import pandas as pd
    >>> df = pd.DataFrame({"year": [1, 2, 1, 2, 1, 2], "job": ["x", "y", "x", "y", "x", "z"],
    ...                    "pid": ["a", "a", "b", "b", "c", "c"], "hh": ["h1", "h1", "h1", "h1", "h2", "h2"]})
    >>> r = history_risk(df, ["year", "job"], "pid")
    >>> r.people, r.unique, r.below
    (3, 1, ((2, 1), (5, 3), (10, 3)))
    >>> h = household_risk(df, ["year", "job"], "hh")
    >>> h.households, h.unique, round(h.max, 4), round(h.mean, 4)
    (2, 2, 1.0, 0.9444)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..core.dataset import Dataset
from ..core.equivalence import encode, person_codes, size_histogram
from ..core.errors import ParameterError
from ..core.histories import owners_sharing
from ..core.numbers import percent
from .profile import RISK_THRESHOLDS, require_quasi_identifiers

HOUSEHOLD_THRESHOLD = 0.2  # a household risk above this is counted (the report's prosecutor threshold)


@dataclass(frozen=True)
class HistoryRisk:
    """People (or households) by how many share their whole history: ``people`` in all,
    ``unique`` alone with theirs, ``below`` per threshold t the people whose history fewer than t
    people share (unique ones included)."""

    people: int
    unique: int
    below: tuple[tuple[int, int], ...]

    @property
    def unique_share(self) -> float:
        return self.unique / self.people if self.people else 0.0

    def share_below(self, threshold: int) -> float:
        """Share of people whose history fewer than ``threshold`` people share."""
        return dict(self.below)[threshold] / self.people if self.people else 0.0


@dataclass(frozen=True)
class HouseholdRisk:
    """Households by their members' records together (``unique``, ``below``: as ``HistoryRisk``,
    in households), and sdcMicro's household risk: per household (``risks``, in the order of
    ``labels``), its maximum, mean and the households above ``threshold``."""

    households: int
    unique: int
    below: tuple[tuple[int, int], ...]
    max: float
    mean: float
    above: int
    threshold: float
    members_in_unique: int  # records of households unique on their members together
    records: int
    labels: np.ndarray = field(repr=False, compare=False)
    risks: np.ndarray = field(repr=False, compare=False)

    @property
    def unique_share(self) -> float:
        return self.unique / self.households if self.households else 0.0

    def as_dict(self) -> dict[str, object]:
        """``profile --json``'s household keys."""
        return {
            "households": self.households,
            "households_unique": self.unique,
            "households_below": {f"<{t}": n for t, n in self.below},
            "household_risk": {
                "max": self.max,
                "mean": self.mean,
                "above_threshold": self.above,
                "threshold": self.threshold,
            },
            "records_in_unique_households": self.members_in_unique,
        }


def _owner_sharing(frame: pd.DataFrame, qis: Sequence[str], owner: str, count: str | None):
    require_quasi_identifiers(qis)
    if owner not in frame.columns:
        raise ParameterError(f"'{owner}' is not a column of the data.")
    table = encode(frame, list(qis), count=count)
    classes = table.classes()
    codes, n = person_codes(frame[owner], owner)
    sharing = owners_sharing(classes.ids, classes.n_classes, codes, n, table.weights)
    return table, classes, codes, n, sharing


def history_risk(
    frame: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    person: str,
    *,
    count: str | None = None,
    thresholds: Sequence[int] = RISK_THRESHOLDS,
) -> HistoryRisk:
    """People by how many share their whole history on ``quasi_identifiers`` (see the module text);
    ``below`` for each of ``thresholds``."""
    *_, sharing = _owner_sharing(frame, quasi_identifiers, person, count)
    return history_from_histogram(*size_histogram(sharing[sharing > 0]), thresholds=thresholds)


def history_from_histogram(
    shared: np.ndarray, people: np.ndarray, *, thresholds: Sequence[int] = RISK_THRESHOLDS
) -> HistoryRisk:
    """``HistoryRisk`` from ``people[i]`` people whose history ``shared[i]`` people share (an
    engine's histogram, ``anonlib.engine.owners.sharing``, or the kernel's made into one).

    >>> history_from_histogram(np.array([1, 2]), np.array([1, 4]))
    HistoryRisk(people=5, unique=1, below=((2, 1), (5, 5), (10, 5)))
    """
    shared = np.asarray(shared, dtype=np.int64)
    people = np.asarray(people, dtype=np.int64)
    return HistoryRisk(
        people=int(people.sum()),
        unique=int(people[shared == 1].sum()),
        below=tuple((t, int(people[shared < t].sum())) for t in sorted(set(thresholds))),
    )


def household_risk(
    frame: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    household: str,
    *,
    count: str | None = None,
    threshold: float = HOUSEHOLD_THRESHOLD,
) -> HouseholdRisk:
    """Households by their members' records together, and their household risk (module text)."""
    if not 0.0 <= float(threshold) <= 1.0:
        raise ParameterError(f"The household risk threshold is a share between 0 and 1; got {threshold:g}.")
    table, classes, codes, n, sharing = _owner_sharing(frame, quasi_identifiers, household, count)
    weights = np.ones(len(frame), dtype=np.int64) if table.weights is None else table.weights
    f = classes.sizes[classes.ids].astype(np.float64)  # each record's class size, in records
    factor = np.power(1.0 - 1.0 / f, weights)  # a row standing for w records is w members
    keep = np.ones(n, dtype=np.float64)
    order = np.argsort(codes, kind="stable")
    starts = np.flatnonzero(np.r_[True, codes[order][1:] != codes[order][:-1]]) if len(order) else order
    if len(order):
        keep[codes[order][starts]] = np.multiply.reduceat(factor[order], starts)
    risks = 1.0 - keep
    present = sharing > 0
    members = np.bincount(codes, weights=weights, minlength=n)
    labels = pd.unique(frame[household].to_numpy())  # person_codes numbers owners in order of appearance
    return HouseholdRisk(
        households=int(present.sum()),
        unique=int((sharing[present] == 1).sum()),
        below=tuple((t, int((sharing[present] < t).sum())) for t in RISK_THRESHOLDS),
        max=float(risks[present].max()) if present.any() else 0.0,
        mean=float(risks[present].mean()) if present.any() else 0.0,
        above=int((risks[present] > threshold).sum()),
        threshold=float(threshold),
        members_in_unique=int(members[present & (sharing == 1)].sum()),
        records=int(weights.sum()),
        labels=labels,
        risks=risks,
    )


@dataclass(frozen=True)
class LinkageRisk:
    """What linked records expose in a dataset: people by their history (with a person column) and
    households by their members together (with a household column); None where there is no such
    column. The one call behind ``profile``, the Dataset page and the risk report."""

    history: HistoryRisk | None
    households: HouseholdRisk | None

    def sentences(self, k: int = 5) -> tuple[str, ...]:
        """The figures in plain words (``k``: the release target's k, for the histories shared by fewer).

        >>> r = LinkageRisk(HistoryRisk(545, 267, ((2, 267), (5, 400), (10, 500))), None)
        >>> r.sentences()[0][:92]
        '267 of 545 people (49.0%) are the only person with their sequence of rows, and 400 (73.4%) s'
        """
        out = []
        h = self.history
        if h is not None and h.people:
            below = dict(h.below)
            shown = k if k in below else 5
            out.append(
                f"{h.unique:,} of {h.people:,} people ({percent(h.unique_share)}) are the only person with their "
                f"sequence of rows, and {below[shown]:,} ({percent(h.share_below(shown))}) share it with fewer than "
                f"{shown} people: where the person column is released (even as a pseudonym), all of a person's rows "
                "are one record to single out."
            )
        g = self.households
        if g is not None and g.households:
            out.append(
                f"{g.unique:,} of {g.households:,} households ({percent(g.unique_share)}) are unique on their "
                f"members' rows together ({g.members_in_unique:,} of {g.records:,} records live in one); household "
                f"risk (1 - product of 1 - 1/f over the members): highest {g.max:.3f}, mean {g.mean:.3f}, "
                f"{g.above:,} households above {g.threshold:g}."
            )
        return tuple(out)


def linkage_risk(dataset: Dataset, quasi_identifiers: Sequence[str] | None = None, *, k: int = 5) -> LinkageRisk:
    """``history_risk`` and ``household_risk`` of a dataset's quasi-identifiers (its own when None),
    through its person and household roles (missing values as the dataset says); the people whose
    history fewer than 2, 5, 10 and ``k`` (the release target's) share."""
    qis = list(dataset.quasi_identifiers if quasi_identifiers is None else quasi_identifiers)
    if not dataset.owners:
        return LinkageRisk(None, None)
    require_quasi_identifiers(qis)
    if not isinstance(dataset, Dataset):  # a table on an engine: the histories counted there
        if dataset.household is not None:
            raise ParameterError(
                "Households are counted in memory only for now; leave out --engine to use a household column."
            )
        from ..engine.owners import sharing

        shared = sharing(dataset, qis, dataset.person)
        return LinkageRisk(
            history_from_histogram(shared[:, 0], shared[:, 1], thresholds=(*RISK_THRESHOLDS, int(k))), None
        )
    frame, _ = dataset.analysis_frame(qis, person=True)
    history = (
        None
        if dataset.person is None
        else history_risk(frame, qis, dataset.person, count=dataset.count, thresholds=(*RISK_THRESHOLDS, int(k)))
    )
    households = (
        None if dataset.household is None else household_risk(frame, qis, dataset.household, count=dataset.count)
    )
    return LinkageRisk(history, households)
