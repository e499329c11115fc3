"""What a page and the risk report both show, computed once so they show the same numbers.

- the attacker model (``attacker_knowledge``, ``attacker_sentence``): which columns an
  attacker may know;
- ``individual_privacy``: per sensitive attribute, the minimum PPP (or PoAC) over every
  combination of what the attacker may know, and the share of records protected (Kroes et
  al. 2021; the Individual privacy page and the report);
- ``models_section``: every privacy model of every sensitive attribute, its value and the
  records failing it (the Dataset page and the report);
- ``attacker_section``: prosecutor and marketer risk (the Dataset page's risk panel and the
  report).

Example (Caballero et al., Table 2(b): classes of 2, 4, 4 and 5 records):
    >>> from anonlib.core.samples import load_sample
    >>> attacker_section(load_sample("caballero_table2b")).prosecutor_highest
    0.5
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..core.budget import Progress, report
from ..core.cells import records_in
from ..core.dataset import Dataset
from ..core.errors import EmptySelectionError, ParameterError
from ..core.metrics import weighted_median
from ..measures.peers import default_q, minimum_over_subsets

NO_ROWS = (
    "There are no records to analyse: the table is empty, or every row misses a value in the analysed "
    "columns and rows with missing values are dropped."
)


def records_of(dataset: Dataset, columns: Sequence[str], *, person: bool = False) -> tuple[pd.DataFrame, int]:
    """``dataset.analysis_frame(columns, person=person)``, refused with ``NO_ROWS`` when no record is left."""
    frame, dropped = dataset.analysis_frame(list(columns), person=person)
    if len(frame) == 0:
        raise EmptySelectionError(NO_ROWS)
    return frame, dropped


@dataclass(frozen=True)
class PrivacyRow:
    """One sensitive attribute: records with p-upward privacy and the median minimum PPP."""

    sensitive: str
    protected_share: float
    median_min_ppp: float


@dataclass(frozen=True)
class AttackerSection:
    """Prosecutor and marketer risk (``anonlib.measures.risk.reidentification``) and the risk
    distribution over records (``anonlib.measures.risk.RiskBin``: records per risk band); with a
    person column (``person``) counted in people, each person once, as the Dataset page counts them:
    ``records`` and ``records_above`` are then people."""

    records: int
    prosecutor_highest: float
    prosecutor_average: float
    records_above: tuple[tuple[float, int], ...]
    marketer: float
    distribution: tuple  # of anonlib.measures.risk.RiskBin
    person: str | None = None

    @property
    def unit(self) -> str:
        """What ``records`` and ``records_above`` count: ``"records"``, or ``"people"`` with a person column."""
        return "records" if self.person is None else "people"


def protected_shares(
    frame,
    aux: tuple[str, ...],
    sensitive: tuple[str, ...],
    count: str | None,
    p: float,
    measure: str,
    q: float | None,
    max_known: int | None,
    include_empty: bool,
    progress: Progress | None,
    person: str | None = None,
):
    """The one computation behind the report's and the Individual privacy page's
    "records protected": per sensitive attribute the minimum over the attacker's
    combinations of ``aux`` and the weighted share of records above p (PoAC: at 1).
    With a ``person`` column (in ``frame``), a record's look-alikes are the record itself
    and other people's records: a person's other records never protect them."""
    weights = np.ones(len(frame)) if count is None else frame[count].to_numpy(dtype=np.float64)
    minimums, rows = [], []
    for j, s in enumerate(sensitive):

        def walked(done: int, total: int, what: str, j: int = j, s: str = s) -> None:
            report(progress, j * total + done, len(sensitive) * total, f"{what} for {s}")

        q_s = 0.0
        if measure == "poac":
            q_s = default_q(p, int(frame[s].nunique(dropna=False))) if q is None else float(q)
        result = minimum_over_subsets(
            frame,
            s,
            list(aux),
            measure,
            q_s,
            include_empty=include_empty,
            count=count,
            max_known=max_known,
            progress=walked,
            person=person,
        )
        values = result.values
        protected = values >= 1.0 if measure == "poac" else values > p
        minimums.append(result)
        rows.append(PrivacyRow(s, float((protected * weights).sum() / weights.sum()), weighted_median(values, weights)))
    return tuple(minimums), tuple(rows), weights


ATTACKER_MODEL = (
    "The attacker knows any combination of {known} and tries to learn one sensitive attribute; "
    "a record's value is protected when more than a share p of the records matching what the attacker "
    "knows have another value (minimum PPP above p, Kroes et al.)."
)
# with a person column (Individual privacy page, report, ``privacy`` command): the unit of the look-alikes
PEOPLE_ATTACKER_MODEL = (
    "The attacker knows any combination of {known} and tries to learn one sensitive attribute; "
    "a record's value is protected when more than a share p of its look-alikes among other people's records "
    "have another value (minimum PPP above p, Kroes et al.): the record itself and the records of other "
    "people ('{person}') matching what the attacker knows, since a person's own other records do not hide them."
)


# the threshold a privacy model is judged at when the release target does not switch it on
MODEL_DEFAULTS: dict[str, tuple[float, float | None]] = {
    "alpha": (0.5, None),
    "distinct_l": (2.0, None),
    "entropy_l": (2.0, None),
    "recursive_cl": (2.0, 3.0),
    "t_closeness": (0.2, None),
    "delta_disclosure": (1.0, None),
    "beta_likeness": (1.0, None),
    "enhanced_beta_likeness": (1.0, None),
}


def attacker_knowledge(dataset: Dataset) -> tuple[str, ...]:
    """What the attacker of the individual-privacy measure may know: the quasi-identifiers
    (any combination of them). The sensitive attributes are what they try to learn, never
    what they know. The one choice shared by the report and the Individual privacy page.

    >>> import pandas as pd
    >>> ds = Dataset.from_frame("d", pd.DataFrame({"age": [30], "zip": ["1"], "diagnosis": ["flu"]}))
    >>> attacker_knowledge(ds)
    ('age', 'zip')
    """
    return dataset.quasi_identifiers


def attacker_sentence(max_known: int | None = None, n_known: int | None = None, *, person: str | None = None) -> str:
    """The attacker model in one sentence (``max_known``: the attacker knows at most that
    many of the ``n_known`` quasi-identifiers at once; ``person``: the person column, whose
    other records are no look-alikes).

    >>> attacker_sentence(2, 5).split(";")[0]
    "The attacker knows any combination of at most 2 of a record's 5 quasi-identifiers and tries to learn one sensitive attribute"
    >>> "a share p of its look-alikes among other people's records" in attacker_sentence(person="pid")
    True
    """
    if max_known is None or (n_known is not None and max_known >= n_known):
        known = "a record's quasi-identifiers"
    else:
        known = (
            f"at most {max_known} of a record's " + (f"{n_known} " if n_known is not None else "") + "quasi-identifiers"
        )
    if person is None:
        return ATTACKER_MODEL.format(known=known)
    return PEOPLE_ATTACKER_MODEL.format(known=known, person=person)


@dataclass(frozen=True)
class IndividualPrivacy:
    """Per sensitive attribute, the minimum of a measure over every combination of the
    quasi-identifiers an attacker may know, per analysed row (``minimums``), and the
    share of records protected (``rows``). ``frame`` is the analysed table (quasi-identifiers,
    sensitive attributes and the count column, after the dataset's missing-value policy)."""

    auxiliary: tuple[str, ...]
    p: float
    measure: str
    max_known: int | None
    minimums: tuple  # of peers.SubsetMinimum, one per sensitive attribute
    rows: tuple[PrivacyRow, ...]
    weights: np.ndarray = field(compare=False, repr=False)
    rows_dropped: int = 0
    person: str | None = None  # the person column: look-alikes are then other people's records

    @property
    def sentence(self) -> str:
        """The attacker model in one sentence."""
        return attacker_sentence(self.max_known, len(self.auxiliary), person=self.person)


def individual_privacy(
    dataset: Dataset,
    *,
    p: float = 0.0,
    measure: str = "ppp",
    q: float | None = None,
    max_known: int | None = None,
    include_empty: bool = True,
    progress=None,
) -> IndividualPrivacy:
    """The shared attacker model on ``dataset``: for each sensitive attribute, the minimum PPP
    (or PoAC at ``q``; None: the paper's q = p / (values - 1)) over every combination of the
    quasi-identifiers (at most ``max_known`` at once), and the share of records protected
    (minimum PPP above p; for PoAC, minimum PoAC = 1). With a person column a record's
    look-alikes are the record itself and other people's records (``anonlib.measures.peers``).

    >>> import pandas as pd
    >>> df = pd.DataFrame({"s": ["x", "y", "x", "y"], "a": [1, 1, 2, 2], "b": [1, 2, 1, 1]})
    >>> ds = Dataset.from_frame("d", df).with_roles({"s": "sensitive", "a": "quasi-identifier", "b": "quasi-identifier"})
    >>> r = individual_privacy(ds)   # minimum PPP per record: 0, 0, 1/3, 1/2
    >>> [(row.sensitive, row.protected_share) for row in r.rows], r.minimums[0].values.round(3).tolist()
    ([('s', 0.5)], [0.0, 0.0, 0.333, 0.5])
    """
    p = float(p)
    if not 0.0 <= p < 1.0:
        raise ParameterError(f"The threshold p must be at least 0 and below 1; got {p:g}.")
    aux = attacker_knowledge(dataset)
    sensitive = dataset.sensitive
    if not aux:
        raise ParameterError("Mark at least one column as quasi-identifier: it is what an attacker may know.")
    if not sensitive:
        raise ParameterError("No column is marked sensitive, so there is no value whose disclosure could be measured.")
    person = dataset.person
    frame, dropped = records_of(dataset, aux + sensitive, person=person is not None)
    minimums, rows, weights = protected_shares(
        frame,
        tuple(aux),
        tuple(sensitive),
        dataset.count,
        p,
        measure,
        q,
        None if max_known is None else int(max_known),
        include_empty,
        progress,
        person,
    )
    return IndividualPrivacy(tuple(aux), p, measure, max_known, minimums, rows, weights, dropped, person)


@dataclass(frozen=True)
class ModelRow:
    """One privacy model of one sensitive attribute: the table's value (its worst class;
    None when the model does not apply) and the records in classes failing it at
    ``requirement`` (the release target's, or ``MODEL_DEFAULTS`` when the target does not
    switch the model on)."""

    sensitive: str
    model: str
    value: float | None
    requirement: str
    in_target: bool
    failing_records: int | None


@dataclass(frozen=True)
class ModelsSection:
    """Every privacy model of every sensitive attribute (Dataset page and report)."""

    records: int
    rows: tuple[ModelRow, ...]


def models_section(dataset: Dataset, requirements=()) -> ModelsSection:
    """For every sensitive attribute and privacy model: its value on ``dataset`` and the
    records in classes failing it, judged at the release target's requirement for that
    model when ``requirements`` has one, else at ``MODEL_DEFAULTS`` (``anonlib.measures.models.model_table``
    with every model switched on).

    >>> import pandas as pd
    >>> df = pd.DataFrame({"zip": [1, 1, 1, 2, 2], "dx": ["a", "b", "c", "a", "a"]})
    >>> ds = Dataset.from_frame("d", df).with_roles({"zip": "quasi-identifier", "dx": "sensitive"})
    >>> s = models_section(ds)   # the class zip = 2 holds one value: it fails α = 0.5 and distinct 2-diversity
    >>> [(r.model, r.value, r.failing_records) for r in s.rows][:2]
    [('alpha', 1.0, 2), ('distinct_l', 1, 2)]
    """
    from ..measures.models import MODELS, ModelRequirement, model_table  # noqa: PLC0415

    qis, sensitive = dataset.quasi_identifiers, dataset.sensitive
    if not qis:
        raise ParameterError("Mark at least one column as quasi-identifier to judge the privacy models.")
    if not sensitive:
        raise ParameterError("Mark a column as sensitive to see the privacy models (l-diversity, t-closeness, ...).")
    frame, _ = records_of(dataset, qis + sensitive)
    chosen = {(r.model, r.sensitive): r for r in requirements if r.sensitive in sensitive}
    judged = []
    for s in sensitive:
        for model in MODELS:
            if (model, s) in chosen:
                judged.append(chosen[(model, s)])
            elif model != "t_closeness" or frame[s].nunique(dropna=False) >= 2:  # t needs two values
                value, c = MODEL_DEFAULTS[model]
                judged.append(ModelRequirement(model, s, value, c=c))
    table = model_table(frame, list(qis), list(sensitive), count=dataset.count, requirements=judged)
    rows = tuple(
        ModelRow(
            r.sensitive,
            r.model,
            None if pd.isna(r.value) else r.value,
            r.required or "not judged",
            (r.model, r.sensitive) in chosen,
            None if pd.isna(r.failing_records) else int(r.failing_records),
        )
        for r in table.itertuples(index=False)
    )
    return ModelsSection(records_in(frame, dataset.count), rows)


def attacker_section(dataset: Dataset) -> AttackerSection:
    """Prosecutor and marketer risk of ``dataset`` on its quasi-identifiers, in people when it
    has a person column (the Dataset page's risk panel shows the same numbers).

    >>> from anonlib.core.samples import load_sample
    >>> a = attacker_section(load_sample("caballero_table2b"))   # classes of 2, 4, 4 and 5 records
    >>> a.prosecutor_highest, a.marketer, dict(a.records_above)[0.2]
    (0.5, 0.26666666666666666, 10)
    >>> visits = pd.DataFrame({"pid": [1, 1, 2], "age": [30, 30, 30]})   # one class of 3 records, 2 people
    >>> a = attacker_section(Dataset.from_frame("v", visits, {"pid": "person", "age": "quasi-identifier"}))
    >>> a.prosecutor_highest, a.records, a.unit
    (0.5, 2, 'people')
    """
    from ..measures.risk import reidentification  # noqa: PLC0415 - risk imports models, which the report imports lazily too

    qis = list(dataset.quasi_identifiers)
    frame, _ = records_of(dataset, qis, person=dataset.person is not None)
    r = reidentification(frame, qis, count=dataset.count, person=dataset.person)
    return AttackerSection(
        records=r.records,
        prosecutor_highest=r.prosecutor_highest,
        prosecutor_average=r.prosecutor_average,
        records_above=r.records_above,
        marketer=r.marketer,
        distribution=r.distribution,
        person=dataset.person,
    )
