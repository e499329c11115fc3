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
- a suggested full-domain generalization (``search(..., method="iab")`` with
  ``default_hierarchy`` hierarchies; Arca & Hewett Algorithm 1).

Each section is computed on its own: one that fails (nothing marked sensitive,
a problem too large) becomes a note in the report instead of failing it all.
``render_html(report)`` turns the report into one self-contained printable
HTML page (inline CSS, no scripts, no external resources); every string that
comes from the data is escaped.

Example (Caballero et al., Table 2(b)):
    >>> from anonlib.core.samples import load_sample
    >>> report = build_report(load_sample("caballero_table2b"), k=2)
    >>> report.risk.k, report.risk.vector
    (2, (0, 1, 0, 2, 1))
    >>> report.generalization is None, report.notes[0].section
    (False, 'Individual privacy')
"""

from __future__ import annotations

import html
import logging
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Callable, TypeVar

import numpy as np

from .anonymize import search
from .core.budget import Progress, duration_text, lattice_size, report
from .core.dataset import Dataset, Role
from .core.errors import AnonlibError, EmptySelectionError, ParameterError, ProblemTooLargeError
from .core.hierarchy import default_hierarchy, levels_of
from .leakage import attribute_label, leakage_table
from .core.metrics import weighted_median, whole_k
from .peers import estimate_minimum, minimum_over_subsets, walk_size
from .profile import risk_profile

REPORT_VERSION = "anonlib development version"
VECTOR_SHOWN = 30  # anonymity-vector entries listed (the vector can be as long as the largest class)
TOP_LEAKAGE = 10  # attributes listed in the leakage section
PRIVACY_SECONDS = 120.0  # individual privacy longer than this is narrowed (fewer variables known at once)
log = logging.getLogger("anonlib")

T = TypeVar("T")
SECTIONS = ("Dataset", "Re-identification risk", "Information leakage", "Individual privacy", "Suggested generalization")
STEP_UNITS = 1000  # progress units per section of build_report

NO_ROWS = ("There are no records to analyse: the table is empty, or every row misses a value in the analysed "
           "columns and rows with missing values are dropped.")


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
class PrivacyRow:
    """One sensitive attribute: records with p-upward privacy and the median minimum PPP."""

    sensitive: str
    protected_share: float
    median_min_ppp: float


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
    """The IAB search's choice at k: level per quasi-identifier, rows kept, violations."""

    k: int
    levels: tuple[tuple[str, int, int, str], ...]  # (attribute, level, highest level, hierarchy kind)
    rows: int
    original_rows: int
    violations: int
    original_violations: int
    generated: int


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
    frame, qis: tuple[str, ...], sensitive: tuple[str, ...], count: str | None, p: float,
    max_known: int | None, seconds: float, notes: list[Note], progress: Progress | None = None,
) -> PrivacySection:
    """Every quasi-identifier is auxiliary information, at any number of records. When the
    walk over all their combinations would take longer than ``seconds``, the adversary is
    narrowed to knowing at most as many of them at once as fits, and a note says so."""
    if not sensitive:
        raise ParameterError("No column is marked sensitive, so there is no value whose disclosure could be measured.")
    report(progress, 0, 1, "estimating the work")
    aux = list(qis)
    full = [estimate_minimum(frame, s, aux, count=count, max_known=max_known) for s in sensitive]
    needed = sum(e.seconds for e in full)
    all_subsets = walk_size(len(aux), max_known)
    known = max_known
    if needed > seconds:
        # the model's cost is per combination walked, so narrowing scales it exactly
        fits = [k for k in range(min(len(aux), max_known if max_known is not None else len(aux)) - 1, 0, -1)
                if needed * walk_size(len(aux), k) / all_subsets <= seconds]
        if not fits:
            one = needed * walk_size(len(aux), 1) / all_subsets
            raise ProblemTooLargeError(
                f"Not computed: even with an adversary knowing one quasi-identifier at a time, the minimum PPP of "
                f"{len(sensitive)} sensitive attribute{'s' if len(sensitive) > 1 else ''} over {len(frame):,} records "
                f"would take about {duration_text(one)}, more than the report's {duration_text(seconds)}. Use the "
                "Individual privacy page on fewer variables or a sample of the records."
            )
        known = fits[0]
        notes.append(Note(
            "Individual privacy",
            f"An adversary is assumed to know at most {known} of the {len(aux)} quasi-identifiers at once: all "
            f"{all_subsets:,} combinations would take about {duration_text(needed)} for {len(frame):,} records, "
            f"more than the report's {duration_text(seconds)}; the minimum is over the "
            f"{walk_size(len(aux), known):,} combinations of at most {known}.",
        ))
    weights = np.ones(len(frame)) if count is None else frame[count].to_numpy(dtype=np.float64)
    rows = []
    for j, s in enumerate(sensitive):
        def walked(done: int, total: int, what: str, j: int = j, s: str = s) -> None:
            report(progress, j * total + done, len(sensitive) * total, f"{what} for {s}")

        values = minimum_over_subsets(frame, s, aux, "ppp", count=count, max_known=known, progress=walked).values
        rows.append(PrivacyRow(s, float(((values > p) * weights).sum() / weights.sum()), weighted_median(values, weights)))
    return PrivacySection(p, tuple(aux), tuple(rows), known)


def _generalization_section(frame, qis: tuple[str, ...], count: str | None, k: int, max_lattice: int,
                            progress: Progress | None = None) -> GeneralizationSection:
    built = {a: default_hierarchy(frame[a], a) for a in qis}
    hierarchies = {a: h for a, (_, h) in built.items()}
    size = lattice_size(levels_of(h) + 1 for h in hierarchies.values())
    if size > max_lattice:
        raise ParameterError(
            f"The default hierarchies give {size:,} possible generalizations, more than the report's limit of "
            f"{max_lattice:,}; use the Leakage & anonymization page with a smaller shield."
        )
    result = search(frame, list(qis), k, hierarchies, "iab", count=count, progress=progress)
    return GeneralizationSection(
        k=result.k,
        levels=tuple((a, result.levels[a], result.max_levels[a], built[a][0]) for a in qis),
        rows=result.rows,
        original_rows=result.root.rows,
        violations=result.violations,
        original_violations=result.root.violations,
        generated=result.generated,
    )


def _percent(share: float) -> str:
    return f"{100 * share:.1f}%"


def _sentences(report_risk, leakage, privacy, generalization) -> tuple[str, ...]:
    out = []
    if report_risk is not None:
        qis = ", ".join(report_risk.quasi_identifiers)
        out.append(f"{_percent(report_risk.unique_share)} of records are unique on {qis}.")
        out.append(
            f"k = {report_risk.k}: the smallest group of records sharing their values of {qis} "
            f"has {report_risk.k} record{'s' if report_risk.k != 1 else ''}."
        )
        below5 = dict(report_risk.records_below).get(5, 0)
        out.append(f"{_percent(below5 / max(report_risk.records, 1))} of records are in groups smaller than 5.")
    if leakage is not None and leakage.rows:
        top = leakage.rows[0]
        out.append(
            f"Knowing {top.attribute} reveals the most about who a record is: "
            f"{_percent(top.normalized)} of the information needed to single out a record."
        )
    if privacy is not None:
        for row in privacy.rows:
            rule = ("at least one look-alike has another value" if privacy.p == 0
                    else f"more than {_percent(privacy.p)} of look-alikes have another value")
            out.append(
                f"{_percent(row.protected_share)} of records keep their {row.sensitive} protected "
                f"({rule}) whatever combination of {privacy.known_text} is known."
            )
    if generalization is not None:
        levels = ", ".join(f"{a} to level {level}" for a, level, _, _ in generalization.levels if level)
        if levels:
            out.append(
                f"Generalizing {levels} makes every group at least {generalization.k} records large "
                f"while keeping {generalization.rows:,} of {generalization.original_rows:,} distinct rows."
            )
        else:
            out.append(f"Every group already has at least {generalization.k} records; no generalization is needed.")
    return tuple(out)


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
    progress: Progress | None = None,
) -> RiskReport:
    """Collect the dataset's findings (risk, leakage, individual privacy, a generalization) at k and p.

    Individual privacy uses every quasi-identifier as auxiliary information, at
    any number of records; ``max_known`` limits the adversary to knowing at most
    that many at once, and when the walk over their combinations is estimated
    above ``privacy_seconds`` it is narrowed that way with a note saying how
    (never skipped silently). The generalization is skipped, with a note, when
    the default hierarchies give more than ``max_lattice`` level vectors.
    ``created`` is the report's date (default: today, UTC).

    ``progress(done, total, what)``: ``total`` is 1000 per section after the
    dataset's (4,000); within a section ``done`` advances with the section's own
    work (the auxiliary combinations walked, the tables built) and ``what`` names
    the section and that work. ``done == total`` is reported once, when the report
    is complete.

    >>> from anonlib.core.samples import load_sample
    >>> r = build_report(load_sample("arca_table1"), k=3)
    >>> r.dataset.records, r.leakage.rows[0].attribute, [row.sensitive for row in r.privacy.rows]
    (60, 'Age', ['Genetic risk'])
    """
    k = whole_k(k)
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
        notes.extend(Note(section, NO_ROWS) for section in SECTIONS[2:])
        frame = None
    step = _steps(progress)
    step("Re-identification risk")(0, 1, "counting classes")
    risk = _guarded("Re-identification risk", notes, lambda: _risk_section(dataset))
    leakage = privacy = generalization = None
    if frame is not None:
        step("Information leakage")(0, 1, "counting attributes")
        leakage = _guarded("Information leakage", notes, lambda: _leakage_section(frame, list(qis + sensitive), count))
        if qis:
            privacy = _guarded("Individual privacy", notes, lambda: _privacy_section(
                frame, qis, sensitive, count, p, None if max_known is None else int(max_known),
                float(privacy_seconds), notes, step("Individual privacy")))
            generalization = _guarded("Suggested generalization", notes, lambda: _generalization_section(
                frame, qis, count, k, int(max_lattice), step("Suggested generalization")))
        else:
            for section in ("Individual privacy", "Suggested generalization"):
                notes.append(Note(section, "Mark at least one column as quasi-identifier to see this section."))
    parameters = (
        ("k", str(k)),
        ("p (PPP threshold)", f"{p:g}"),
        ("quasi-identifiers", ", ".join(qis) or "none"),
        ("sensitive attributes", ", ".join(sensitive) or "none"),
        ("record-count column", count or "none"),
        ("missing values", "rows dropped" if dataset.missing == "drop" else "kept as their own category"),
        ("quasi-identifiers an adversary knows at once",
         "all" if privacy is None or privacy.max_known is None else f"at most {privacy.max_known}"),
        ("time allowed for individual privacy", duration_text(float(privacy_seconds))),
        ("generalizations searched at most", f"{int(max_lattice):,}"),
        ("search method", "IAB (Arca & Hewett), default hierarchies"),
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
        notes=tuple(notes),
        sentences=_sentences(risk, leakage, privacy, generalization),
        created=created or datetime.now(timezone.utc).date().isoformat(),
    )


# --------------------------------------------------------------------------- HTML

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: #1a1a1a; max-width: 60rem;
       margin: 1.5rem auto; padding: 0 1rem; font-size: 14px; line-height: 1.4; }
h1 { font-size: 1.5rem; margin-bottom: .2rem; } h2 { font-size: 1.1rem; margin: 1.2rem 0 .4rem;
     border-bottom: 1px solid #bbb; }
.meta { color: #555; } .note { background: #fff4e5; border-left: 4px solid #e69f00; padding: .3rem .6rem; }
table { border-collapse: collapse; margin: .3rem 0; } th, td { border: 1px solid #ccc; padding: .15rem .5rem;
        text-align: left; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
ul.summary li { margin: .2rem 0; } .vector { font-family: monospace; }
@media print { body { margin: 0; max-width: none; font-size: 10.5pt; } h2 { break-after: avoid; }
               table, .note { break-inside: avoid; } }
"""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _cell(value: object) -> str:
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return f'<td class="n">{_e(value)}</td>'
    return f"<td>{_e(value)}</td>"


def _table(headers: tuple[str, ...], rows) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _notes_for(report: RiskReport, section: str) -> str:
    return "".join(f'<p class="note">{_e(n.text)}</p>' for n in report.notes if n.section == section)


def render_html(report: RiskReport) -> str:
    """One self-contained printable HTML page (inline CSS, no scripts, no links); data strings escaped.

    >>> import pandas as pd
    >>> ds = Dataset.from_frame("<b>", pd.DataFrame({"age": [30, 30, 40]}))
    >>> page = render_html(build_report(ds, k=1, created="2026-01-01"))
    >>> "&lt;b&gt;" in page, "<b>" in page, "<script" in page
    (True, False, False)
    """
    d = report.dataset
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>Risk report: {_e(d.name)}</title><style>{_CSS}</style></head><body>",
        f"<h1>Risk report: {_e(d.name)}</h1>",
        f'<p class="meta">Created {_e(report.created)} with {_e(report.version)}. '
        "Computed on this computer; nothing was sent anywhere.</p>",
    ]
    if report.sentences:
        parts.append("<h2>Summary</h2><ul class=\"summary\">" + "".join(f"<li>{_e(s)}</li>" for s in report.sentences) + "</ul>")

    parts.append("<h2>Dataset</h2>")
    parts.append(_table(
        ("rows", "records", "record-count column", "missing values", "rows dropped"),
        [(f"{d.rows:,}", f"{d.records:,}", d.count or "none",
          "rows dropped" if d.missing == "drop" else "own category", f"{d.rows_dropped:,}")],
    ))
    by_role: dict[str, list[str]] = {}
    for column, role in d.columns:
        by_role.setdefault(role, []).append(column)
    parts.append(_table(("role", "columns"), [(role, ", ".join(columns)) for role, columns in by_role.items()]))
    parts.append(_notes_for(report, "Dataset"))

    parts.append("<h2>Re-identification risk</h2>")
    r = report.risk
    if r is not None:
        parts.append(f"<p>Quasi-identifiers: {_e(', '.join(r.quasi_identifiers))}</p>")
        below = [(f"records in classes < {t}", f"{n:,} ({_percent(n / max(r.records, 1))})") for t, n in r.records_below]
        parts.append(_table(("measure", "value"), [
            ("records", f"{r.records:,}"), ("equivalence classes", f"{r.classes:,}"), ("k", f"{r.k:,}"),
            ("unique records", f"{r.unique_records:,} ({_percent(r.unique_share)})"), *below,
        ]))
        more = f", ... ({r.vector_length} entries)" if r.vector_length > len(r.vector) else ""
        parts.append(
            '<p>Anonymity vector (entry j = number of classes of size j): <span class="vector">('
            + _e(", ".join(str(v) for v in r.vector) + more) + ")</span></p>"
        )
    parts.append(_notes_for(report, "Re-identification risk"))

    parts.append("<h2>Information leakage</h2>")
    if report.leakage is not None:
        lk = report.leakage
        parts.append(f"<p>Average information loss when an attacker learns one attribute; the {len(lk.rows)} "
                     f"most revealing of {lk.measured} (1 = identifies everyone).</p>")
        parts.append(_table(("attribute", "partitions", "loss (bits)", "normalized"),
                            [(row.attribute, row.partitions, f"{row.loss:.4f}", f"{row.normalized:.4f}") for row in lk.rows]))
    parts.append(_notes_for(report, "Information leakage"))

    parts.append("<h2>Individual privacy</h2>")
    if report.privacy is not None:
        pv = report.privacy
        parts.append(f"<p>Minimum proportion of protective peers (PPP) over every combination of "
                     f"{_e(pv.known_text)} an adversary might know; protected = minimum PPP above p = {pv.p:g}.</p>")
        parts.append(_table(("sensitive attribute", "records protected", "median minimum PPP"),
                            [(row.sensitive, _percent(row.protected_share), f"{row.median_min_ppp:.3f}") for row in pv.rows]))
    parts.append(_notes_for(report, "Individual privacy"))

    parts.append("<h2>Suggested generalization</h2>")
    g = report.generalization
    if g is not None:
        parts.append(f"<p>IAB search for k = {g.k} with default hierarchies: {g.rows:,} of {g.original_rows:,} "
                     f"distinct rows kept, {g.violations:,} violating rows (before: {g.original_violations:,}); "
                     f"{g.generated:,} tables generated.</p>")
        parts.append(_table(("attribute", "level", "highest level", "hierarchy"), g.levels))
    parts.append(_notes_for(report, "Suggested generalization"))

    parts.append("<h2>Parameters</h2>")
    parts.append(_table(("parameter", "value"), report.parameters))
    parts.append('<p class="meta">Methods: Caballero, Sen &amp; Nygård (anonymity vectors); Arca &amp; Hewett 2021 '
                 "(leakage, IAB search); Kroes, Janssen, Groenwold &amp; van Leeuwen 2021 (PPP).</p>")
    parts.append("</body></html>")
    return "\n".join(parts)
