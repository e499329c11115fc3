"""A one-page risk report: the current dataset's findings from every page, with the parameters used.

``build_report(dataset, k=..., p=...)`` calls the library once per finding and
collects the results in small frozen sections:

- the dataset (rows, records, columns and their roles, missing-value policy);
- the re-identification risk (``risk_profile``: k, anonymity vector, unique
  records, records in classes smaller than 2, 5 and 10; Caballero et al.);
- the information leakage of each quasi-identifier and sensitive attribute
  (``leakage_table``, Arca & Hewett Section 3.1), most revealing first;
- the privacy of individuals (``minimum_over_subsets``: per sensitive
  attribute, the minimum PPP over every subset of the quasi-identifiers as the
  adversary's auxiliary information; Kroes et al. Definition 3);
- a suggested full-domain generalization: the one with the least information
  loss (``release_search(..., target=)``, loss metric) meeting the working copy's release
  target in its unit, with ``default_hierarchy`` hierarchies, its loss and records suppressed
  stated beside it.

Each section is computed on its own: one that fails (nothing marked sensitive,
a problem too large) becomes a note in the report instead of failing it all.
``render_html(report)`` (``anonlib.workflow.report_html``) turns the report into
one self-contained printable HTML page (inline CSS, no scripts, no external
resources); every string that comes from the data is escaped. The report lives in
the workflow: it reads the working copy (its steps, its release view) and the
release package prints it. What a page shows beside the report (individual privacy, the
privacy models, the attacker's risk) is computed in ``anonlib.workflow.findings``, so both
show the same numbers.

Example (Caballero et al., Table 2(b)):
    >>> from anonlib.core.samples import load_sample
    >>> report = build_report(load_sample("caballero_table2b"), k=2)
    >>> report.risk.k, report.risk.vector
    (2, (0, 1, 0, 2, 1))
    >>> report.generalization is None, report.notes[0].section
    (False, 'Individual privacy')
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from ..core.budget import Progress, duration_text, lattice_size, report
from ..core.cells import distinct_rows
from ..core.dataset import Dataset, Role
from ..core.default_hierarchy import default_hierarchy
from ..core.errors import AnonlibError, EmptySelectionError, ParameterError, ProblemTooLargeError
from ..core.hierarchy import levels_of
from ..core.metrics import whole_k
from ..core.numbers import percent
from ..core.version import PRODUCT
from ..measures.leakage import attribute_label, leakage_table
from ..measures.linkage import LinkageRisk, linkage_risk
from ..measures.peers import estimate_minimum, walk_size
from ..measures.profile import risk_profile
from ..measures.target import ReleaseTarget
from ..measures.utility import MEASURE_NAMES
from ..transformations.generalization import release_search
from .budgets import PRIVACY_SECONDS, RELEASE_VIEW_SECONDS, REPORT_SEARCH_SECONDS, known_within
from .findings import (
    NO_ROWS,
    AttackerSection,
    ModelsSection,
    PrivacyRow,
    attacker_section,
    attacker_sentence,
    models_section,
    protected_shares,
)
from .history import StepRow, failing_in_unit
from .kept import kept_risk, unchanged_kept

if TYPE_CHECKING:
    from .release_view import ReleaseView
REPORT_VERSION = PRODUCT
VECTOR_SHOWN = 30  # anonymity-vector entries listed (the vector can be as long as the largest class)
TOP_LEAKAGE = 10  # attributes listed in the leakage section
log = logging.getLogger("anonlib")

T = TypeVar("T")
SECTIONS = (
    "Dataset",
    "Re-identification risk",
    "Information leakage",
    "Individual privacy",
    "Suggested generalization",
    "Attacker models",
    "Privacy models",
    "Release steps",
)
RELEASE_VIEW_SECTION = "What the release is still good for"  # a working copy's section (``copy_report``)
STEP_UNITS = 1000  # progress units per section of build_report


# --------------------------------------------------------------------------- sections


@dataclass(frozen=True)
class DatasetSection:
    """The dataset as analysed: size, columns with their roles, missing-value policy."""

    name: str
    rows: int
    records: int
    columns: tuple[tuple[str, str], ...]  # (column, role)
    count: str | None
    missing: str
    rows_dropped: int


@dataclass(frozen=True)
class RiskSection:
    """``risk_profile`` for the quasi-identifiers (first ``VECTOR_SHOWN`` vector entries)."""

    quasi_identifiers: tuple[str, ...]
    records: int
    classes: int
    k: int
    vector: tuple[int, ...]
    vector_length: int
    unique_records: int
    unique_share: float
    records_below: tuple[tuple[int, int], ...]  # (threshold, records in classes smaller than it)
    person: str | None = None  # with a person column, k and the counts above are people
    persons: int | None = None
    base: int | None = None  # what the shares of ``records_below`` are of (the people, with a person column)
    linkage: LinkageRisk | None = None  # people by their whole history, households by their members together

    @property
    def unit(self) -> str:
        return "records" if self.person is None else "people"


@dataclass(frozen=True)
class LeakageRow:
    """Average information loss of one attribute (bits and normalized)."""

    attribute: str
    partitions: int
    loss: float
    normalized: float


@dataclass(frozen=True)
class LeakageSection:
    """The most revealing attributes first (at most ``TOP_LEAKAGE``), of ``measured``."""

    rows: tuple[LeakageRow, ...]
    measured: int


@dataclass(frozen=True)
class PrivacySection:
    """Minimum PPP over every subset of ``auxiliary`` (the quasi-identifiers), per sensitive
    attribute; with ``max_known``, over the subsets of at most that many of them."""

    p: float
    auxiliary: tuple[str, ...]
    rows: tuple[PrivacyRow, ...]
    max_known: int | None = None

    @property
    def known_text(self) -> str:
        """What the adversary may know, in words ("at most 3 of age, sex, ...")."""
        names = ", ".join(self.auxiliary)
        if self.max_known is None or self.max_known >= len(self.auxiliary):
            return names
        return f"at most {self.max_known} of {names}"


@dataclass(frozen=True)
class GeneralizationSection:
    """The optimal search's choice at k: level per quasi-identifier, rows kept, violations,
    its information loss (``measure``: the loss metric) and whether it is proven least."""

    k: int
    levels: tuple[tuple[str, int, int, str], ...]  # (attribute, level, highest level, hierarchy kind)
    rows: int
    original_rows: int
    violations: int
    original_violations: int
    generated: int
    cost: tuple[str, ...] = ()  # what applying it would change, in words (``anonlib.workflow.step_cost``)
    removes_quasi_identifier: bool = False
    measure: str = "loss"
    utility: float = 0.0
    optimal: bool = True
    suppressed: int = 0
    # what the target searched under asks, in its unit, when it is not records ("every class of records
    # sharing the quasi-identifiers holds the records of at least 5 people, ..."; ``ReleaseTarget.rule``)
    rule: str = ""


@dataclass(frozen=True)
class StepsSection:
    """The working copy's history under the release target."""

    target: str
    loaded_records: int
    loaded_failing: int | None
    rows: tuple[StepRow, ...]
    status: str
    met: bool | None = None  # the working copy meets the target (its check, as the pages' box); None: unchecked
    unit: str = "records"  # what ``loaded_failing`` and the rows' failing counts count


@dataclass(frozen=True)
class Note:
    """A section that could not be computed (or was cut down), and why."""

    section: str
    text: str


@dataclass(frozen=True)
class RiskReport:
    """Everything the report shows; sections that failed are None and explained in ``notes``."""

    dataset: DatasetSection
    risk: RiskSection | None
    leakage: LeakageSection | None
    privacy: PrivacySection | None
    generalization: GeneralizationSection | None
    parameters: tuple[tuple[str, str], ...]
    notes: tuple[Note, ...]
    sentences: tuple[str, ...]
    version: str = REPORT_VERSION
    created: str = field(default="")
    steps: StepsSection | None = None
    attacker: AttackerSection | None = None
    models: ModelsSection | None = None
    attacker_model: str = ""
    release: tuple[tuple[str, str], ...] = ()  # what a release package states (``anonlib.workflow.package``)
    release_view: ReleaseView | None = None  # what the release is still good for (a working copy with steps)

    def as_dict(self) -> dict:
        """Plain values for a JSON download (sections as nested dicts).

        >>> import pandas as pd
        >>> ds = Dataset.from_frame("d", pd.DataFrame({"age": [30, 30, 40]}))
        >>> build_report(ds, k=1).as_dict()["risk"]["k"]
        1
        """
        return asdict(self)


# --------------------------------------------------------------------------- building


def _guarded(section: str, notes: list[Note], compute: Callable[[], T]) -> T | None:
    """Run one section; a failure becomes a note (the sentence of an AnonlibError)."""
    try:
        return compute()
    except AnonlibError as err:
        notes.append(Note(section, str(err)))
    except Exception:  # noqa: BLE001 - one section must not sink the whole report
        log.exception("report section %s failed", section)
        notes.append(Note(section, "This section could not be computed because of an unexpected error."))
    return None


def _dataset_section(dataset: Dataset, rows_dropped: int) -> DatasetSection:
    return DatasetSection(
        name=dataset.name,
        rows=dataset.n_rows,
        records=dataset.n_records,
        columns=tuple((str(c), dataset.roles.get(c, Role.IGNORE).value) for c in dataset.frame.columns),
        count=dataset.count,
        missing=dataset.missing,
        rows_dropped=rows_dropped,
    )


def _risk_section(dataset: Dataset) -> RiskSection:
    risk = risk_profile(dataset)
    if risk.records == 0:
        raise EmptySelectionError(NO_ROWS)
    return RiskSection(
        quasi_identifiers=risk.quasi_identifiers,
        records=risk.records,
        classes=risk.classes,
        k=risk.k,
        vector=risk.vector[:VECTOR_SHOWN],
        vector_length=len(risk.vector),
        unique_records=risk.unique_records,
        unique_share=risk.unique_share,
        records_below=risk.records_below,
        person=risk.person,
        persons=risk.persons,
        base=risk.persons,
        linkage=linkage_risk(dataset, risk.quasi_identifiers) if dataset.owners else None,
    )


def _leakage_section(frame, attributes: list[str], count: str | None) -> LeakageSection:
    table = leakage_table(frame, attributes, count=count)
    top = table.sort_values("normalized", ascending=False, kind="stable").head(TOP_LEAKAGE)
    rows = tuple(
        LeakageRow(attribute_label(r.attribute), int(r.partitions), float(r.loss), float(r.normalized))
        for r in top.itertuples(index=False)
    )
    return LeakageSection(rows, len(table))


def _privacy_section(
    frame,
    qis: tuple[str, ...],
    sensitive: tuple[str, ...],
    count: str | None,
    p: float,
    max_known: int | None,
    seconds: float,
    notes: list[Note],
    progress: Progress | None = None,
    person: str | None = None,
) -> PrivacySection:
    """Every quasi-identifier is auxiliary information, at any number of records. When the
    walk over all their combinations would take longer than ``seconds``, the adversary is
    narrowed to knowing at most as many of them at once as fits, and a note says so. With a
    ``person`` column (in ``frame``) a record's look-alikes are other people's records."""
    if not sensitive:
        raise ParameterError("No column is marked sensitive, so there is no value whose disclosure could be measured.")
    report(progress, 0, 1, "estimating the work")
    aux = list(qis)
    full = [estimate_minimum(frame, s, aux, count=count, max_known=max_known, person=person) for s in sensitive]
    needed = sum(e.seconds for e in full)
    all_subsets = walk_size(len(aux), max_known)
    known = known_within(needed, len(aux), max_known, seconds)
    if known != max_known:
        if not known:
            one = needed * walk_size(len(aux), 1) / all_subsets
            raise ProblemTooLargeError(
                f"Not computed: even with an adversary knowing one quasi-identifier at a time, the minimum PPP of "
                f"{len(sensitive)} sensitive attribute{'s' if len(sensitive) > 1 else ''} over {len(frame):,} records "
                f"would take about {duration_text(one)}, more than the report's {duration_text(seconds)}. Use the "
                "Individual privacy page on fewer variables or a sample of the records."
            )
        notes.append(
            Note(
                "Individual privacy",
                f"{_NARROWED} {known} of the {len(aux)} quasi-identifiers at once: all "
                f"{all_subsets:,} combinations would take about {duration_text(needed)} for {len(frame):,} records, "
                f"more than the report's {duration_text(seconds)}; the minimum is over the "
                f"{walk_size(len(aux), known):,} combinations of at most {known}.",
            )
        )
    _, rows, _ = protected_shares(frame, tuple(aux), sensitive, count, p, "ppp", None, known, True, progress, person)
    return PrivacySection(p, tuple(aux), rows, known)


def _generalization_section(
    dataset: Dataset,
    frame,
    qis: tuple[str, ...],
    count: str | None,
    target: ReleaseTarget,
    max_lattice: int,
    progress: Progress | None = None,
) -> GeneralizationSection:
    if target.person is not None:  # searched in people: the person column rides along
        frame = dataset.analysis_frame(list(frame.columns.drop(count) if count else frame.columns), person=True)[0]
    built = {a: default_hierarchy(frame[a], a) for a in qis}
    hierarchies = {a: h for a, (_, h) in built.items()}
    size = lattice_size(levels_of(h) + 1 for h in hierarchies.values())
    if size > max_lattice:
        raise ParameterError(
            f"The default hierarchies give {size:,} possible generalizations, more than the report's limit of "
            f"{max_lattice:,}; use the Leakage & anonymization page with fewer quasi-identifiers."
        )
    result = release_search(
        frame,
        list(qis),
        hierarchies,
        "optimal",
        target=target,
        count=count,
        progress=progress,
        time_limit=REPORT_SEARCH_SECONDS,
    )
    return GeneralizationSection(
        k=result.k,
        levels=tuple((a, result.levels[a], result.max_levels[a], built[a][0]) for a in qis),
        rows=result.rows,
        original_rows=result.root.rows,
        violations=result.violations,
        original_violations=result.root.violations,
        generated=result.generated,
        measure=result.measure,
        utility=float(result.utility),
        optimal=bool(result.optimal),
        suppressed=result.suppressed,
        rule="" if result.target is None or result.target.unit == "records" else result.target.rule().rstrip("."),
        **_generalization_cost(frame, qis, result, hierarchies, count),
    )


def _generalization_cost(frame, qis: tuple[str, ...], result, hierarchies, count: str | None = None) -> dict:
    """What the suggested generalization would change on the analysed table, in words
    ("native-country is replaced by *: the column is effectively removed")."""
    from .cost import step_cost
    from .steps import GeneralizationStep

    step = GeneralizationStep.from_search(result, hierarchies)
    cost = step_cost(step, _combinations(frame, qis, count))
    return {"cost": cost.sentences(), "removes_quasi_identifier": cost.removes_quasi_identifier}


_RECORDS = "records of the combination"


def _combinations(frame, qis: tuple[str, ...], count: str | None) -> Dataset:
    """The analysed table as its distinct combinations of the quasi-identifiers with their records
    (a record-count column): what a generalization changes, counted in records, on a few thousand
    rows instead of every record.

    >>> import pandas as pd
    >>> t = _combinations(pd.DataFrame({"age": [30, 30, None, 41], "dx": list("abcd")}), ("age",), None)
    >>> t.frame.to_dict("list"), t.count
    ({'age': [30.0, nan, 41.0], 'records of the combination': [2, 1, 1]}, 'records of the combination')
    """
    columns = list(qis)
    weights = frame[count].to_numpy() if count in frame.columns else np.ones(len(frame), dtype=np.int64)
    table = distinct_rows(frame, columns, weights, _RECORDS)
    return Dataset.from_frame("analysed", table, {**{a: Role.QUASI_IDENTIFIER for a in qis}, _RECORDS: Role.COUNT})


# --------------------------------------------------------------------------- shared with the pages
#
# The Dataset page, the Individual privacy page and this report show the same
# numbers for the same setting because they call the same functions below.


def steps_section(copy) -> StepsSection:
    """The history of a ``anonlib.workflow.WorkingCopy``: per step, what fails the release
    target before and after it, in its unit (records, people or households).

    >>> import pandas as pd
    >>> from anonlib.workflow import BandsStep, ReleaseTarget, WorkingCopy
    >>> ds = Dataset.from_frame("d", pd.DataFrame({"age": [30, 31, 45, 52]}), {"age": "quasi-identifier"})
    >>> copy = WorkingCopy.start(ds, ReleaseTarget(k=2)).apply(BandsStep("age", 20, 10, 30, 52, True), "Individual privacy")
    >>> [(r.number, r.failing_before, r.failing_after) for r in steps_section(copy).rows]
    [(1, 4, 0)]
    """
    check = copy.check
    status = check.sentence() if check is not None else f"The target could not be checked: {copy.problem}"
    first = copy.steps[0].before if copy.steps else copy.check
    rows = copy.step_rows()
    return StepsSection(
        copy.release_target.describe(),
        copy.loaded_records,
        failing_in_unit(first),
        rows,
        status,
        None if check is None else bool(check.met),
        copy.release_target.whole,
    )


def copy_report(copy, *, p: float = 0.0, view: ReleaseView | None = None, **options) -> RiskReport:
    """The report of a working copy: its current table at the release target's k and
    privacy models, with its steps and, when it has steps, what the release is still
    good for (``view``, else ``release_view(copy)`` with its defaults; a view that
    cannot be computed becomes a note). ``build_report`` options pass through.

    >>> import pandas as pd
    >>> from anonlib.workflow import BandsStep, ReleaseTarget, WorkingCopy
    >>> frame = pd.DataFrame({"age": [30, 31, 45, 52] * 3, "dx": ["a", "b", "a", "b"] * 3})
    >>> ds = Dataset.from_frame("d", frame, {"age": "quasi-identifier", "dx": "sensitive"})
    >>> copy = WorkingCopy.start(ds, ReleaseTarget(k=2)).apply(BandsStep("age", 20, 10, 30, 52, True), "Individual privacy")
    >>> r = copy_report(copy)
    >>> r.release_view.released_records, r.release_view.classifier.column
    (12, 'dx')
    >>> from anonlib.workflow.report_html import render_html
    >>> "What the release is still good for" in render_html(r)
    True
    """
    report = build_report(copy.current, target=copy.target, p=p, steps=steps_section(copy), **options)
    kept = unchanged_kept(copy.current.kept, [a.step for a in copy.steps])
    if kept:  # released unchanged, outside the target: what an attacker who knows them finds on the release
        current = copy.current
        table = copy.release()
        risk = kept_risk(
            table,
            [c for c in current.quasi_identifiers if c in table.columns],
            [c for c in kept if c in table.columns],
            person=current.person if current.person in table.columns else None,
            count=current.count if current.count in table.columns else None,
        )
        report = replace(report, sentences=(*report.sentences, risk.sentence()))
    return with_release_view(report, copy, view)


def with_release_view(report: RiskReport, copy, view: ReleaseView | None = None) -> RiskReport:
    """``report`` (of ``copy``, built without its release view) with its section on what the release
    is still good for: ``view``, else, when ``copy`` has steps, ``release_view(copy)`` with its
    defaults (a view that cannot be computed becomes a note). A page shows the report at once
    and adds the view, whose classifier takes seconds at 10^5 records, only for a download.

    >>> import pandas as pd
    >>> from anonlib.workflow import ReleaseTarget, WorkingCopy
    >>> ds = Dataset.from_frame("d", pd.DataFrame({"age": [30, 30, 40, 40]}), {"age": "quasi-identifier"})
    >>> copy = WorkingCopy.start(ds, ReleaseTarget(k=2))
    >>> with_release_view(build_report(ds, k=2), copy).release_view is None  # no step: nothing to set against
    True
    """
    if view is None and copy.steps:
        from .release_view import release_view  # noqa: PLC0415 - the workflow imports this module

        notes: list[Note] = []
        view = _guarded(
            RELEASE_VIEW_SECTION, notes, lambda: release_view(copy, time_limit=RELEASE_VIEW_SECONDS, strict=False)
        )
        if notes:
            report = replace(report, notes=report.notes + tuple(notes))
    return replace(report, release_view=view) if view is not None else report


def _sentences(report_risk, leakage, privacy, generalization, steps: StepsSection | None = None) -> tuple[str, ...]:
    """The summary. With a working copy's ``steps``, it opens with the release target's check (the
    sentence of the page's box) and no sentence says the target needs nothing when it is not met."""
    out = []
    if steps is not None:
        out.append(f"The working copy against the release target ({steps.target}): {steps.status}")
    if report_risk is not None:
        qis = ", ".join(report_risk.quasi_identifiers)
        unit = report_risk.unit
        one = "record" if unit == "records" else "person"
        out.append(f"{percent(report_risk.unique_share)} of {unit} are unique on {qis}.")
        out.append(
            f"k = {report_risk.k}: the smallest class of records sharing their values of {qis} "
            f"has {report_risk.k} {one if report_risk.k == 1 else unit}"
            + (f" (counted in people: {report_risk.person} says whose record it is)." if report_risk.person else ".")
        )
        below5 = dict(report_risk.records_below).get(5, 0)
        base = report_risk.base if report_risk.base is not None else report_risk.records
        where = " (each person once, by the smallest class of their rows)" if report_risk.person else ""
        out.append(f"{below5:,} {unit} ({percent(below5 / max(base, 1))}) are in classes smaller than 5{where}.")
        if report_risk.linkage is not None:
            out.extend(report_risk.linkage.sentences())
    if leakage is not None and leakage.rows:
        top = leakage.rows[0]
        out.append(
            f"Knowing {top.attribute} reveals the most about who a record is: "
            f"{percent(top.normalized)} of the information needed to single out a record."
        )
    if privacy is not None:
        for row in privacy.rows:
            rule = (
                "at least one look-alike has another value"
                if privacy.p == 0
                else f"more than {percent(privacy.p)} of look-alikes have another value"
            )
            out.append(
                f"{percent(row.protected_share)} of records keep their {row.sensitive} protected "
                f"({rule}) whatever combination of {privacy.known_text} is known."
            )
    if generalization is not None:
        levels = ", ".join(f"{a} to level {level}" for a, level, _, _ in generalization.levels if level)
        if levels:
            meets = (
                f"makes every class at least {generalization.k} records large"
                if not generalization.rule
                else f"meets the release target ({generalization.rule})"
            )
            out.append(
                f"Generalizing {levels} {meets} "
                f"while keeping {generalization.rows:,} of {generalization.original_rows:,} distinct combinations, "
                f"with an information loss of {generalization.utility:.4f} ({MEASURE_NAMES[generalization.measure]}; "
                f"0 = every value kept, 1 = every value replaced by *"
                f"{'' if generalization.optimal else '; the least found in the time allowed, not proven least'}). "
                + " ".join(generalization.cost)
            )
        elif steps is not None and steps.met is False:  # no level raised, yet the target is not met as it is
            out.append(
                f"The search under the release target ({steps.target}) raises no level: what still fails it is "
                "suppressed, within its limit, by the sidebar's suppression step."
            )
        elif generalization.rule:
            out.append(f"The release target is met as it is ({generalization.rule}); no generalization is needed.")
        else:
            out.append(f"Every class already has at least {generalization.k} records; no generalization is needed.")
    return tuple(out)


_NARROWED = "An adversary is assumed to know at most"
_TABLE_SECTIONS = ("Re-identification risk", "Information leakage", "Individual privacy", "Attacker models")


def _reusable(
    reuse: RiskReport | None, dataset: DatasetSection, p: float, max_known: int | None, privacy_seconds: float
) -> RiskReport | None:
    """``reuse`` when its sections on the table (``_TABLE_SECTIONS``) hold for this table and these options."""
    if reuse is None or reuse.dataset != dataset:
        return None
    stated = dict(reuse.parameters)
    known = stated.get("quasi-identifiers an adversary knows at once")
    # narrowed for time from every quasi-identifier: the same request narrows the same way
    narrowed = max_known is None and any(n.text.startswith(_NARROWED) for n in reuse.notes)
    same = (
        stated.get("p (PPP threshold)") == f"{p:g}"
        and stated.get("time allowed for individual privacy") == duration_text(float(privacy_seconds))
        and (narrowed or known == ("all" if max_known is None else f"at most {int(max_known)}"))
    )
    return reuse if same else None


def _steps(progress: Progress | None) -> Callable[[str], Progress]:
    """``step(section)``: a progress callback for one section's own work, mapped into
    ``STEP_UNITS`` of the report's whole (never reaching the end: that is the report's)."""
    total = (len(SECTIONS) - 1) * STEP_UNITS

    def step(section: str) -> Progress:
        first = (SECTIONS.index(section) - 1) * STEP_UNITS

        def inner(done: int, of: int, what: str) -> None:
            within = min(STEP_UNITS - 1, STEP_UNITS * done // max(of, 1))
            report(progress, first + within, total, f"{section}: {what}")

        return inner

    return step


def build_report(
    dataset: Dataset,
    *,
    k: int = 5,
    p: float = 0.0,
    max_known: int | None = None,
    privacy_seconds: float = PRIVACY_SECONDS,
    max_lattice: int = 20_000,
    created: str | None = None,
    requirements: Sequence = (),
    steps: StepsSection | None = None,
    progress: Progress | None = None,
    target: ReleaseTarget | None = None,
    reuse: RiskReport | None = None,
) -> RiskReport:
    """Collect the dataset's findings (risk, leakage, individual privacy, a generalization) at k and p.

    Individual privacy uses every quasi-identifier as auxiliary information, at
    any number of records; ``max_known`` limits the adversary to knowing at most
    that many at once, and when the walk over their combinations is estimated
    above ``privacy_seconds`` it is narrowed that way with a note saying how
    (never skipped silently). The generalization is skipped, with a note, when
    the default hierarchies give more than ``max_lattice`` level vectors.
    ``created`` is the report's date (default: today, UTC). ``requirements``
    (the release target's privacy models) set the values the privacy models are
    judged at; ``steps`` is the working copy's history (``steps_section``; see
    ``copy_report`` for a working copy). ``target`` (the working copy's release target)
    replaces ``k`` and ``requirements``: the suggested generalization is then searched under
    the whole target in the dataset's unit (people with a person column), as the Leakage
    page searches.

    ``reuse``: a report built before on the same table (same content, roles and missing-value
    policy; the caller keys it so) with the same ``p``, ``max_known`` and ``privacy_seconds``: the
    sections that do not depend on k or the privacy models (re-identification risk, leakage,
    individual privacy, attacker models) are taken from it with their notes, so a change of the
    release target recomputes only the suggested generalization and the privacy models. A report
    of another size, columns or p is not reused.

    ``progress(done, total, what)``: ``total`` is 1000 per section after the
    dataset's (7,000); within a section ``done`` advances with the section's own
    work (the auxiliary combinations walked, the tables built) and ``what`` names
    the section and that work. ``done == total`` is reported once, when the report
    is complete.

    >>> from anonlib.core.samples import load_sample
    >>> r = build_report(load_sample("arca_table1"), k=3)
    >>> r.dataset.records, r.leakage.rows[0].attribute, [row.sensitive for row in r.privacy.rows]
    (60, 'Age', ['Genetic risk'])
    >>> again = build_report(load_sample("arca_table1"), k=4, reuse=r)
    >>> again.privacy is r.privacy, again.generalization.k, again == build_report(load_sample("arca_table1"), k=4)
    (True, 4, True)
    """
    if target is not None:
        k, requirements = target.k, target.requirements
    k = whole_k(k)
    searched = (target or ReleaseTarget(k)).in_unit_of(dataset)
    p = float(p)
    if not 0.0 <= p < 1.0:
        raise ParameterError(f"The threshold p must be at least 0 and below 1; got {p:g}.")
    if max_known is not None and (isinstance(max_known, bool) or int(max_known) != max_known or max_known < 1):
        raise ParameterError(
            f"The most quasi-identifiers an adversary knows at once must be a whole number of at least 1; got {max_known}."
        )
    if not privacy_seconds > 0:
        raise ParameterError(f"The time allowed for individual privacy must be positive; got {privacy_seconds:g} s.")
    notes: list[Note] = []
    qis, sensitive, count = dataset.quasi_identifiers, dataset.sensitive, dataset.count
    analysed = _guarded("Dataset", notes, lambda: dataset.analysis_frame(list(qis + sensitive)))
    frame, dropped = analysed if analysed is not None else (None, 0)
    if frame is not None and len(frame) == 0:
        notes.extend(Note(section, NO_ROWS) for section in SECTIONS[2:5])  # the sections on this frame
        frame = None
    step = _steps(progress)
    kept = (
        _reusable(reuse, _dataset_section(dataset, dropped), p, max_known, privacy_seconds)
        if frame is not None and qis
        else None
    )
    if kept is not None:
        notes.extend(n for n in kept.notes if n.section in _TABLE_SECTIONS)
    step("Re-identification risk")(0, 1, "counting classes")
    risk = kept.risk if kept else _guarded("Re-identification risk", notes, lambda: _risk_section(dataset))
    leakage = privacy = generalization = None
    if frame is not None:
        step("Information leakage")(0, 1, "counting attributes")
        leakage = (
            kept.leakage
            if kept
            else _guarded("Information leakage", notes, lambda: _leakage_section(frame, list(qis + sensitive), count))
        )
        if qis:
            privacy = (
                kept.privacy
                if kept
                else _guarded(
                    "Individual privacy",
                    notes,
                    lambda: _privacy_section(
                        frame
                        if dataset.person is None
                        else dataset.analysis_frame(list(qis + sensitive), person=True)[0],
                        qis,
                        sensitive,
                        count,
                        p,
                        None if max_known is None else int(max_known),
                        float(privacy_seconds),
                        notes,
                        step("Individual privacy"),
                        dataset.person,
                    ),
                )
            )
            generalization = _guarded(
                "Suggested generalization",
                notes,
                lambda: _generalization_section(
                    dataset, frame, qis, count, searched, int(max_lattice), step("Suggested generalization")
                ),
            )
        else:
            for section in ("Individual privacy", "Suggested generalization"):
                notes.append(Note(section, "Mark at least one column as quasi-identifier to see this section."))
    attacker = models = None
    if qis:
        step("Attacker models")(0, 1, "counting classes")
        attacker = kept.attacker if kept else _guarded("Attacker models", notes, lambda: attacker_section(dataset))
        step("Privacy models")(0, 1, "judging the models per sensitive attribute")
        models = _guarded("Privacy models", notes, lambda: models_section(dataset, requirements))
    else:
        for section in ("Attacker models", "Privacy models"):
            notes.append(Note(section, "Mark at least one column as quasi-identifier to see this section."))
    parameters = (
        ("k", str(k)),
        ("p (PPP threshold)", f"{p:g}"),
        ("quasi-identifiers", ", ".join(qis) or "none"),
        ("sensitive attributes", ", ".join(sensitive) or "none"),
        ("record-count column", count or "none"),
        ("missing values", "rows dropped" if dataset.missing == "drop" else "kept as their own category"),
        (
            "quasi-identifiers an adversary knows at once",
            "all" if privacy is None or privacy.max_known is None else f"at most {privacy.max_known}",
        ),
        ("time allowed for individual privacy", duration_text(float(privacy_seconds))),
        ("generalizations searched at most", f"{int(max_lattice):,}"),
        ("search method", "optimal (least loss metric, proven), default hierarchies"),
    )
    total = (len(SECTIONS) - 1) * STEP_UNITS
    report(progress, total, total, "report complete")
    return RiskReport(
        dataset=_dataset_section(dataset, dropped),
        risk=risk,
        leakage=leakage,
        privacy=privacy,
        generalization=generalization,
        parameters=parameters,
        notes=tuple(sorted(notes, key=lambda n: SECTIONS.index(n.section)) if kept else notes),  # in section order
        sentences=_sentences(risk, leakage, privacy, generalization, steps),
        created=created or datetime.now(UTC).date().isoformat(),
        steps=steps,
        attacker=attacker,
        models=models,
        attacker_model=attacker_sentence(getattr(privacy, "max_known", None), len(qis), person=dataset.person),
    )
