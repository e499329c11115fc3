"""Re-identification risk under the prosecutor, journalist and marketer attacker models.

El Emam & Dankar (2008, "Protecting privacy using k-anonymity", JAMIA 15(5))
and ARX's risk analysis. A record in an equivalence class of f records of the
file (and F people of the population sharing its quasi-identifier values) is
re-identified with probability:

- **prosecutor** (the attacker knows the person is in the file): 1 / f; the
  file's highest risk is 1 / k, its average (Σ over records of 1/f) / n =
  classes / n, and the records at risk are those above a threshold (ARX shows
  0.2 and 0.5);
- **journalist** (the attacker does not know whether the person is in the
  file and matches against the population): 1 / F, with F from a population
  table (the smallest F is the file's k-map);
- **marketer** (the attacker wants to re-identify as many as possible): the
  expected share of records re-identified, (Σ_classes f / F) / n, which is
  classes / n when the file is the whole population.

With a sampling fraction the share of records unique in the population is
estimated as well (``anonlib.measures.risk.uniqueness``).

Everything is computed from the class sizes (and the population's sizes of
the same classes), so a database engine's group-by gives the same numbers
(``risk_from_sizes``; the one float sum over classes is ``math.fsum``, exact
whatever the order).

Example (Caballero et al., Table 2(b): 15 people in classes of 2, 4, 4 and 5):
    >>> from anonlib.core.samples import load_sample
    >>> ds = load_sample("caballero_table2b")
    >>> r = reidentification(ds.frame, list(ds.quasi_identifiers))
    >>> r.prosecutor_highest, r.records_at_risk, r.marketer
    (0.5, 0.6666666666666666, 0.26666666666666666)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pandas as pd

from ...core.equivalence import encode, person_classes
from ...core.errors import EmptySelectionError, ParameterError
from ..models import population_counts
from ..models.summaries import checked_columns
from .uniqueness import PopulationUniqueness, class_sizes_checked, population_uniqueness, sampling_fraction_checked

ARX_THRESHOLDS = (0.2, 0.5)

# Upper bounds of the risk bins of the distribution chart, as ARX draws it: powers of
# ten up to 1%, 1% steps up to 10%, then 1/8, 1/7, ..., 1/2, 1 (a class of k records
# has risk exactly 1/k, so these fall on class sizes).
_UPPER = (
    [Fraction(1, 10**e) for e in range(8, 2, -1)]
    + [Fraction(i, 100) for i in range(1, 11)]
    + [Fraction(1, k) for k in range(8, 0, -1)]
)
#: per bin, the smallest class size whose risk 1/size is within the bin's upper bound
_MIN_SIZE = np.array([math.ceil(1 / u) for u in _UPPER], dtype=np.int64)


def _percent(x: Fraction) -> str:
    value = float(x) * 100
    return f"{value:.3g}"


@dataclass(frozen=True)
class RiskBin:
    """Records whose risk lies in ]low, high] (shares of all records)."""

    label: str
    low: float
    high: float
    records: int
    share: float
    cumulative: float


RISK_BINS = tuple(f"{_percent(low)}–{_percent(high)}%" for low, high in zip([Fraction(0)] + _UPPER[:-1], _UPPER))


def risk_distribution(class_sizes: Iterable[int], *, each: bool = False) -> tuple[RiskBin, ...]:
    """Records per risk bin (risk 1 / class size), with the cumulative share, as ARX draws it;
    ``each``: every entry is one unit (a person, by the smallest class of their records), not a
    class of that many records.

    >>> bins = risk_distribution([1, 2, 2, 10])
    >>> [(b.label, b.records) for b in bins if b.records]
    [('9–10%', 10), ('33.3–50%', 4), ('50–100%', 1)]
    >>> [(b.label, b.records) for b in risk_distribution([1, 2, 2, 10], each=True) if b.records]
    [('9–10%', 1), ('33.3–50%', 2), ('50–100%', 1)]
    """
    sizes = class_sizes_checked(class_sizes)
    sizes = sizes[sizes > 0]
    index = np.searchsorted(-_MIN_SIZE, -sizes, side="left")  # first bin with size >= its minimum
    records = np.bincount(index, weights=None if each else sizes, minlength=len(_UPPER)).astype(np.int64)
    total = max(int(records.sum()), 1)
    cumulative = np.minimum(np.cumsum(records) / total, 1.0)
    lows = [0.0] + [float(u) for u in _UPPER[:-1]]
    return tuple(
        RiskBin(label, low, float(high), int(n), int(n) / total, float(c))
        for label, low, high, n, c in zip(RISK_BINS, lows, _UPPER, records, cumulative)
    )


@dataclass(frozen=True)
class ReidentificationRisk:
    """Re-identification risk of a file for one set of quasi-identifiers.

    Shares are of records. ``records_above`` lists (threshold, records with
    prosecutor risk above it) for ``threshold`` and ARX's 0.2 and 0.5.
    Journalist values and ``k_map`` need a population table, population
    uniqueness a sampling fraction; they are None without.
    """

    quasi_identifiers: tuple[str, ...]
    records: int
    classes: int
    threshold: float
    prosecutor_highest: float
    prosecutor_average: float
    records_at_risk: float
    records_above: tuple[tuple[float, int], ...]
    marketer: float
    journalist_highest: float | None
    journalist_average: float | None
    journalist_records_at_risk: float | None
    k_map: int | None
    population_uniques: dict[str, float | None] | None
    uniqueness: PopulationUniqueness | None
    distribution: tuple[RiskBin, ...]

    def as_dict(self) -> dict[str, object]:
        """Plain values for JSON (CLI, downloads).

        >>> reidentification(pd.DataFrame({"a": [1, 1]}), ["a"]).as_dict()["prosecutor_highest"]
        0.5
        """
        out = {
            "quasi_identifiers": list(self.quasi_identifiers),
            "records": self.records,
            "classes": self.classes,
            "threshold": self.threshold,
            "prosecutor_highest": self.prosecutor_highest,
            "prosecutor_average": self.prosecutor_average,
            "records_at_risk": self.records_at_risk,
            "records_above": {f"{t:g}": n for t, n in self.records_above},
            "marketer": self.marketer,
            "journalist_highest": self.journalist_highest,
            "journalist_average": self.journalist_average,
            "journalist_records_at_risk": self.journalist_records_at_risk,
            "k_map": self.k_map,
            "population_uniques": self.population_uniques,
            "population_model": None if self.uniqueness is None else self.uniqueness.dankar_model,
            "sampling_fraction": None if self.uniqueness is None else self.uniqueness.sampling_fraction,
            "distribution": [
                {"risk": b.label, "records": b.records, "share": b.share, "cumulative": b.cumulative}
                for b in self.distribution
            ],
        }
        return out


def _threshold(value: object) -> float:
    try:
        t = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ParameterError(f"The risk threshold must be a number between 0 and 1; got '{value}'.") from None
    if not (0.0 <= t < 1.0):
        raise ParameterError(
            f"The risk threshold is a probability of re-identification, at least 0 and below 1; got {t:g}."
        )
    return t


def _risk_of_people(counted, threshold: float, quasi_identifiers: Sequence[str]) -> ReidentificationRisk:
    """The prosecutor and marketer risks counted in people, each person once: a person's risk is 1 / the
    people of the smallest class among their records (the class that singles them out most)."""
    threshold = _threshold(threshold)
    sizes = counted.sizes[counted.sizes > 0]
    if not sizes.size:
        raise EmptySelectionError("The table has no records, so there is no re-identification risk to measure.")
    smallest = np.full(counted.n_persons, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(smallest, counted.persons, counted.row_sizes)
    smallest = smallest[smallest < np.iinfo(np.int64).max]
    risks = 1.0 / smallest
    people = int(smallest.size)
    levels = sorted({threshold, *ARX_THRESHOLDS})
    above = tuple((t, int((risks > t).sum())) for t in levels)
    average = math.fsum(risks.tolist()) / people
    return ReidentificationRisk(
        quasi_identifiers=tuple(quasi_identifiers),
        records=people,
        classes=int(sizes.size),
        threshold=threshold,
        prosecutor_highest=1.0 / int(sizes.min()),
        prosecutor_average=average,
        records_at_risk=dict(above)[threshold] / people,
        records_above=above,
        marketer=average,
        journalist_highest=None,
        journalist_average=None,
        journalist_records_at_risk=None,
        k_map=None,
        population_uniques=None,
        uniqueness=None,
        distribution=risk_distribution(smallest, each=True),
    )


def risk_from_sizes(
    class_sizes: Iterable[int],
    *,
    population_sizes: Iterable[int] | None = None,
    sampling_fraction: float | None = None,
    threshold: float = 0.2,
    quasi_identifiers: Sequence[str] = (),
) -> ReidentificationRisk:
    """The risk from class sizes (records per class of the file) and, aligned with them, the
    population's people per class. Classes without records are left out.

    >>> r = risk_from_sizes([1, 4], population_sizes=[10, 8])
    >>> r.journalist_highest, r.k_map, r.marketer
    (0.125, 8, 0.12)
    """
    threshold = _threshold(threshold)
    sizes = class_sizes_checked(class_sizes)
    keep = sizes > 0
    sizes = sizes[keep]
    records = int(sizes.sum())
    if records == 0:
        raise EmptySelectionError("The table has no records, so there is no re-identification risk to measure.")
    classes = int(sizes.size)
    levels = sorted({threshold, *ARX_THRESHOLDS})
    above = tuple((t, int(sizes[1.0 / sizes > t].sum())) for t in levels)
    journalist_highest = journalist_average = journalist_at_risk = None
    kmap = None
    marketer = classes / records
    if population_sizes is not None:
        people = class_sizes_checked(population_sizes, "The population sizes")
        if people.shape[0] != keep.shape[0]:
            raise ParameterError("The population sizes must be given for the same classes as the class sizes.")
        people = people[keep]
        if (people < sizes).any():
            raise ParameterError(
                "The population must hold at least as many people as the file has records in every class."
            )
        kmap = int(people.min())
        journalist_highest = 1.0 / kmap
        journalist_average = math.fsum((sizes / people).tolist()) / records
        journalist_at_risk = int(sizes[1.0 / people > threshold].sum()) / records
        marketer = journalist_average
    uniqueness = (
        None
        if sampling_fraction is None
        else population_uniqueness(sizes, sampling_fraction_checked(sampling_fraction))
    )
    return ReidentificationRisk(
        quasi_identifiers=tuple(quasi_identifiers),
        records=records,
        classes=classes,
        threshold=threshold,
        prosecutor_highest=1.0 / int(sizes.min()),
        prosecutor_average=classes / records,
        records_at_risk=dict(above)[threshold] / records,
        records_above=above,
        marketer=marketer,
        journalist_highest=journalist_highest,
        journalist_average=journalist_average,
        journalist_records_at_risk=journalist_at_risk,
        k_map=kmap,
        population_uniques=None if uniqueness is None else uniqueness.as_dict(),
        uniqueness=uniqueness,
        distribution=risk_distribution(sizes),
    )


def reidentification(
    df: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    *,
    count: str | None = None,
    population: pd.DataFrame | None = None,
    sampling_fraction: float | None = None,
    threshold: float = 0.2,
    population_count: str | None = None,
    engine=None,
    person: str | None = None,
) -> ReidentificationRisk:
    """Prosecutor, journalist and marketer risk of ``df`` for ``quasi_identifiers``.
    ``df`` may also be a path or a table on a data engine (``anonlib.engine``), or
    ``engine="duckdb"``/``"spark"`` be given: the classes are then counted there.

    ``population`` (optional) has the quasi-identifier columns, one row per person
    or a count column (the form ``anonlib.transformations.frontier`` takes); ``sampling_fraction``
    (optional, in (0, 1]) is the share of the population that is in the file.
    ``records_at_risk`` is the share of records whose prosecutor risk exceeds ``threshold``.
    With ``person`` (a column saying whose record it is) the classes are counted in
    distinct people (a class of f people: risk 1 / f), and the counts and shares are of people,
    each once, at the risk of the smallest class of their records (``records`` then counts
    people); no population table or sampling fraction then.

    >>> df = pd.DataFrame({"zip": ["1", "1", "2"]})
    >>> r = reidentification(df, ["zip"], population=pd.DataFrame({"zip": ["1", "2"], "n": [10, 4]}), sampling_fraction=0.1)
    >>> r.k_map, r.journalist_highest, r.population_uniques["zayatz"] is not None
    (4, 0.25, True)
    """
    if engine is not None or not isinstance(df, pd.DataFrame):  # counted by the engine, concluded here
        from ...engine import WEIGHT, as_engine_table, size_histogram, summary_frame

        table = as_engine_table(df, engine)
        qis = list(quasi_identifiers)
        if not qis:
            raise EmptySelectionError("Mark at least one column as quasi-identifier to see the re-identification risk.")
        if population is not None:  # the classes come back and are matched with the population in memory
            classes, _ = summary_frame(table, qis, count=count)
            return reidentification(
                classes,
                qis,
                count=WEIGHT,
                population=population,
                sampling_fraction=sampling_fraction,
                threshold=threshold,
                population_count=population_count,
            )
        frame, _ = table.summary(qis, count=count)
        sizes, classes = size_histogram(frame, qis, count=WEIGHT, engine=table.engine)
        return risk_from_sizes(
            np.repeat(sizes, classes), sampling_fraction=sampling_fraction, threshold=threshold, quasi_identifiers=qis
        )
    qis = checked_columns(df, quasi_identifiers, [], count)
    if person is not None:
        if population is not None or sampling_fraction is not None:
            raise ParameterError(
                "Population tables and sampling fractions count records; leave out the person column for them."
            )
        return _risk_of_people(person_classes(df, qis, person, count=count), threshold, qis)
    if population is not None:
        matched = population_counts(df, qis, population, count=count, population_count=population_count)
        sizes, people = matched.sample, matched.population
    else:
        sizes, people = encode(df, qis, count=count).classes().sizes, None
    return risk_from_sizes(
        sizes, population_sizes=people, sampling_fraction=sampling_fraction, threshold=threshold, quasi_identifiers=qis
    )
