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

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ..core.dataset import Dataset
from ..core.equivalence import encode, person_codes, size_histogram
from ..core.errors import ParameterError
from ..core.histories import owner_pairs, owners_sharing
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
    ``labels``; empty when an engine counted them, the households staying there), its maximum,
    mean and the households above ``threshold``."""

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

    def with_households(self, labels: np.ndarray, risks: np.ndarray) -> HouseholdRisk:
        """This result with each household's risk (``risks``, in the order of ``labels``)."""
        return replace(self, labels=labels, risks=risks)

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
    """Households by their members' records together, and their household risk (module text).

    A household's risk depends only on its *composition*: its members' records per class size f.
    It is computed from that (``composition_risks``), as the engine's compositions are
    (``household_from_counts``), so both give the same figures to the last bit."""
    _check_threshold(threshold)
    table, classes, codes, n, sharing = _owner_sharing(frame, quasi_identifiers, household, count)
    weights = np.ones(len(frame), dtype=np.int64) if table.weights is None else table.weights
    # per household, its members' records per class size f (the class's records, over the whole file)
    sizes, size_ids = np.unique(classes.sizes[classes.ids], return_inverse=True)
    pairs = owner_pairs(size_ids.reshape(-1), len(sizes), codes, n, weights)
    present = pairs.sizes > 0  # households with a record (a row standing for none is no member)
    risks = np.zeros(n, dtype=np.float64)
    risks[present] = composition_risks(pairs.start[:-1][present], sizes[pairs.cls], pairs.records)
    labels = pd.unique(frame[household].to_numpy())  # person_codes numbers owners in order of appearance
    shared, which = np.unique(sharing[present], return_inverse=True)
    histogram = np.stack(
        [shared, np.bincount(which, minlength=len(shared)), np.bincount(which, pairs.sizes[present], len(shared))],
        axis=1,
    ).astype(np.int64)
    ones = np.ones(int(present.sum()), dtype=np.int64)
    return _household_figures(histogram, risks[present], ones, threshold).with_households(labels, risks)


def household_from_counts(counts, *, threshold: float = HOUSEHOLD_THRESHOLD) -> HouseholdRisk:
    """``HouseholdRisk`` from an engine's counts (``anonlib.engine.owners.household_counts``): the
    same figures as ``household_risk`` on the records; ``labels`` and ``risks`` (per household)
    stay on the engine and are empty here.

    >>> from anonlib.engine.owners import HouseholdCounts
    >>> c = HouseholdCounts(np.array([[1, 2, 5]]), np.array([1, 1]), np.array([0, 1, 3]), np.array([1, 2, 3]),
    ...                     np.array([1, 1, 2]))
    >>> r = household_from_counts(c)
    >>> r.households, r.unique, r.members_in_unique, r.max, round(r.mean, 4)
    (2, 2, 5, 1.0, 0.8889)
    """
    _check_threshold(threshold)
    shared = np.asarray(counts.shared, dtype=np.int64).reshape(-1, 3)
    risks = composition_risks(np.asarray(counts.start)[:-1], counts.sizes, counts.records)
    return _household_figures(shared, risks, counts.households, threshold)


def composition_risks(start: np.ndarray, sizes: np.ndarray, records: np.ndarray) -> np.ndarray:
    """Per composition (its pairs from ``start[c]`` to the next start, ascending in f), sdcMicro's
    household risk 1 - prod over its pairs of (1 - 1/f)^records: every member record i has the
    individual risk 1/f_i (``f``: its class's records). One computation for the kernel and the engine.

    >>> composition_risks(np.array([0, 1]), np.array([1, 2, 3]), np.array([1, 1, 2])).round(4).tolist()
    [1.0, 0.7778]
    """
    start = np.asarray(start, dtype=np.int64)
    f = np.asarray(sizes, dtype=np.float64)
    factor = np.power(1.0 - 1.0 / f, np.asarray(records, dtype=np.float64))
    lengths = np.diff(np.append(start, len(f)))
    owner = np.repeat(np.arange(len(start)), lengths)
    position = np.arange(len(f)) - start[owner]
    # multiplied one position at a time (elementwise: the same operations whatever the grouping)
    by_position = np.argsort(position, kind="stable")
    product = np.ones(len(start), dtype=np.float64)
    at = 0
    for count in np.bincount(position).tolist() if len(f) else []:
        rows = by_position[at : at + count]
        at += count
        product[owner[rows]] *= factor[rows]
    return 1.0 - product


def _check_threshold(threshold: float) -> None:
    if not 0.0 <= float(threshold) <= 1.0:
        raise ParameterError(f"The household risk threshold is a share between 0 and 1; got {threshold:g}.")


def _household_figures(shared: np.ndarray, risks: np.ndarray, counts: np.ndarray, threshold: float) -> HouseholdRisk:
    """``HouseholdRisk`` from ``shared`` (``[[households sharing, households, their records], ...]``)
    and the households' risks with how many households have each (``risks``, ``counts``): the
    distinct risks and their households, then the maximum, the mean (a sum of exactly rounded
    terms) and the households above ``threshold``, so any grouping of equal households gives the
    same figures."""
    sizes, many, in_records = shared[:, 0], shared[:, 1], shared[:, 2]
    values, inverse = np.unique(np.asarray(risks, dtype=np.float64), return_inverse=True)
    per_value = np.zeros(len(values), dtype=np.int64)
    np.add.at(per_value, inverse.reshape(-1), np.asarray(counts, dtype=np.int64))
    total = int(per_value.sum())
    return HouseholdRisk(
        households=int(many.sum()),
        unique=int(many[sizes == 1].sum()),
        below=tuple((t, int(many[sizes < t].sum())) for t in RISK_THRESHOLDS),
        max=float(values[-1]) if total else 0.0,
        mean=math.fsum((values * per_value).tolist()) / total if total else 0.0,
        above=int(per_value[values > threshold].sum()),
        threshold=float(threshold),
        members_in_unique=int(in_records[sizes == 1].sum()),
        records=int(in_records.sum()),
        labels=np.zeros(0, dtype=object),
        risks=np.zeros(0, dtype=np.float64),
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
    if not isinstance(dataset, Dataset):  # a table on an engine: the histories and households counted there
        from ..engine.owners import household_counts, sharing

        history = households = None
        if dataset.person is not None:
            shared = sharing(dataset, qis, dataset.person)
            history = history_from_histogram(shared[:, 0], shared[:, 1], thresholds=(*RISK_THRESHOLDS, int(k)))
        if dataset.household is not None:
            households = household_from_counts(household_counts(dataset, qis, dataset.household))
        return LinkageRisk(history, households)
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
