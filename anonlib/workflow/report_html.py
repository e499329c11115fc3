"""The risk report as one self-contained printable HTML page: inline CSS, no scripts, no
external resources, every string from the data escaped (``render_html``)."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

import numpy as np

from ..measures.utility import MEASURE_NAMES

if TYPE_CHECKING:
    from .release_view import ReleaseView
from ..core.numbers import percent
from .report import RELEASE_VIEW_SECTION, RiskReport

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


def _model_text(value: float | None) -> str:
    if value is None:
        return "–"
    if np.isinf(value):
        return "∞"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:.4g}"


def _notes_for(report: RiskReport, section: str) -> str:
    return "".join(f'<p class="note">{_e(n.text)}</p>' for n in report.notes if n.section == section)


def _stat(value: float | None) -> str:
    return "–" if value is None or not np.isfinite(value) else f"{value:,.4g}"


def release_view_html(view: ReleaseView) -> str:
    """The Release view as HTML (records, distributions, numbers, contingency tables, the
    classifier); every data string escaped."""
    parts = [f"<p>{_e(view.sentences()[0])} {_e(view.sentences()[1])}</p>"]
    for column in view.columns:
        parts.append(f"<h3>{_e(column.column)} ({_e(column.role)})</h3><p>{_e(column.sentence())}</p>")
        if column.before is not None:
            summaries = [("loaded file", column.before), ("release", column.after)]
            parts.append(
                _table(
                    ("table", "records with a number", "mean", "sd", "minimum", "q1", "median", "q3", "maximum"),
                    [
                        (
                            name,
                            "–" if s is None else f"{s.records:,}",
                            *(
                                ("–",) * 7
                                if s is None
                                else tuple(_stat(v) for v in (s.mean, s.sd, s.minimum, s.q1, s.median, s.q3, s.maximum))
                            ),
                        )
                        for name, s in summaries
                    ],
                )
            )
        parts.append(
            _table(
                (
                    "value" if column.kind != "number" else "value or bin",
                    "records in the loaded file",
                    "records in the release",
                ),
                [(c.value, "–" if c.before is None else f"{c.before:,}", f"{c.after:,}") for c in column.counts],
            )
        )
    if view.pair is not None:
        a, b = view.pair.columns
        for which in ("before", "after"):
            table = view.pair.frame(which)
            parts.append(f"<h3>{_e(a)} by {_e(b)}, records, {'loaded file' if which == 'before' else 'release'}</h3>")
            parts.append(
                _table(
                    (f"{a} \\ {b}", *map(str, table.columns)),
                    [(str(i), *(f"{int(v):,}" for v in r)) for i, r in zip(table.index, table.to_numpy())],
                )
            )
    c = view.classifier
    if c is not None:
        parts.append("<h3>Classifier</h3><p>" + _e(c.sentence(timed=False)) + "</p>")
        parts.append(
            _table(
                (
                    "trained on",
                    "records",
                    "values of " + c.column,
                    "accuracy (mean)",
                    "sd over folds",
                    "most common value",
                ),
                [
                    (
                        s.trained_on,
                        f"{s.records:,}",
                        f"{s.classes:,}",
                        percent(s.mean),
                        percent(s.sd),
                        percent(s.baseline),
                    )
                    for s in (c.released, c.original)
                ],
            )
        )
        parts.append(
            f"<p>{_e(c.model)}; at most {c.max_rows:,} records per table and about "
            f"{c.time_limit:g} seconds (the seconds taken are on the Release page and in its JSON).</p>"
        )
    parts.extend(f'<p class="note">{_e(n)}</p>' for n in view.notes + view.problems)
    return "".join(parts)


def render_html(report: RiskReport) -> str:
    """One self-contained printable HTML page (inline CSS, no scripts, no links); data strings escaped.

    >>> import pandas as pd
    >>> from anonlib.core.dataset import Dataset
    >>> from anonlib.workflow.report import build_report
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
    if report.release:
        parts.append(
            "<h2>Release</h2><p>What this release package holds; <code>python -m anonlib verify</code> "
            "re-checks it.</p>" + _table(("what", "stated"), report.release)
        )
    if report.sentences:
        parts.append(
            '<h2>Summary</h2><ul class="summary">' + "".join(f"<li>{_e(s)}</li>" for s in report.sentences) + "</ul>"
        )

    parts.append("<h2>Release steps</h2>")
    st = report.steps
    if st is not None:
        parts.append(f"<p>Release target: {_e(st.target)}. {_e(st.status)}</p>")
        if st.rows:
            loaded = "" if st.loaded_failing is None else f"{st.loaded_failing:,}"
            parts.append(f"<p>The loaded file: {_e(loaded)} {_e(st.unit)} failing the target.</p>")
            parts.append(
                _table(
                    (
                        "step",
                        "page",
                        "what it does",
                        f"{st.unit} failing before",
                        f"{st.unit} failing after",
                        "records suppressed",
                        "what it cost",
                    ),
                    [
                        (
                            r.number,
                            r.page,
                            r.description,
                            "–" if r.failing_before is None else f"{r.failing_before:,}",
                            "–" if r.failing_after is None else f"{r.failing_after:,}",
                            f"{r.suppressed_records:,}",
                            " ".join(r.cost),
                        )
                        for r in st.rows
                    ],
                )
            )
        else:
            parts.append("<p>No step: the released table is the loaded file as it is.</p>")
    else:
        parts.append("<p>This report describes a table as it is, not a working copy with steps.</p>")
    parts.append(_notes_for(report, "Release steps"))
    if report.release_view is not None or any(n.section == RELEASE_VIEW_SECTION for n in report.notes):
        parts.append(f"<h2>{RELEASE_VIEW_SECTION}</h2>")
        if report.release_view is not None:
            parts.append(release_view_html(report.release_view))
        parts.append(_notes_for(report, RELEASE_VIEW_SECTION))

    parts.append("<h2>Dataset</h2>")
    parts.append(
        _table(
            ("rows", "records", "record-count column", "missing values", "rows dropped"),
            [
                (
                    f"{d.rows:,}",
                    f"{d.records:,}",
                    d.count or "none",
                    "rows dropped" if d.missing == "drop" else "own category",
                    f"{d.rows_dropped:,}",
                )
            ],
        )
    )
    by_role: dict[str, list[str]] = {}
    for column, role in d.columns:
        by_role.setdefault(role, []).append(column)
    parts.append(_table(("role", "columns"), [(role, ", ".join(columns)) for role, columns in by_role.items()]))
    parts.append(_notes_for(report, "Dataset"))

    parts.append("<h2>Re-identification risk</h2>")
    r = report.risk
    if r is not None:
        parts.append(f"<p>Quasi-identifiers: {_e(', '.join(r.quasi_identifiers))}</p>")
        base = r.base if r.base is not None else r.records
        below = [(f"{r.unit} in classes < {t}", f"{n:,} ({percent(n / max(base, 1))})") for t, n in r.records_below]
        people = [("people", f"{r.persons:,} (person column {r.person}; k counted in people)")] if r.person else []
        parts.append(
            _table(
                ("measure", "value"),
                [
                    ("records", f"{r.records:,}"),
                    *people,
                    ("equivalence classes", f"{r.classes:,}"),
                    ("k", f"{r.k:,}"),
                    (f"unique {r.unit}", f"{r.unique_records:,} ({percent(r.unique_share)})"),
                    *below,
                    *_linkage_rows(r.linkage),
                ],
            )
        )
        more = f", ... ({r.vector_length} entries)" if r.vector_length > len(r.vector) else ""
        parts.append(
            '<p>Anonymity vector (entry j = number of classes of size j): <span class="vector">('
            + _e(", ".join(str(v) for v in r.vector) + more)
            + ")</span></p>"
        )
    parts.append(_notes_for(report, "Re-identification risk"))

    parts.append("<h2>Attacker models</h2>")
    a = report.attacker
    if a is not None:
        above = [
            (f"{a.unit} with prosecutor risk above {t:g}", f"{n:,} ({percent(n / max(a.records, 1))})")
            for t, n in a.records_above
        ]
        parts.append(
            _table(
                ("measure", "value"),
                [
                    ("prosecutor risk, highest (1 / k)", percent(a.prosecutor_highest)),
                    ("prosecutor risk, average", percent(a.prosecutor_average)),
                    *above,
                    ("marketer risk", percent(a.marketer)),
                ],
            )
        )
        parts.append("<p>Journalist risk needs a population table: python -m anonlib risk FILE --population POP.</p>")
        parts.append(
            _table(
                ("risk of re-identification", a.unit),
                [(b.label, f"{b.records:,}") for b in a.distribution if b.records],
            )
        )
    parts.append(_notes_for(report, "Attacker models"))

    parts.append("<h2>Privacy models</h2>")
    if report.models is not None:
        from ..measures.models import MODEL_NAMES  # noqa: PLC0415

        parts.append(
            "<p>Per sensitive attribute, each model's value (the worst class) and the records in classes "
            "failing it, at the release target's value where the target switches the model on.</p>"
        )
        parts.append(
            _table(
                ("sensitive attribute", "model", "value", "judged at", "records in failing classes"),
                [
                    (
                        r.sensitive,
                        MODEL_NAMES[r.model],
                        _model_text(r.value),
                        r.requirement + (" (release target)" if r.in_target else ""),
                        "–" if r.failing_records is None else f"{r.failing_records:,}",
                    )
                    for r in report.models.rows
                ],
            )
        )
    parts.append(_notes_for(report, "Privacy models"))

    parts.append("<h2>Information leakage</h2>")
    if report.leakage is not None:
        lk = report.leakage
        parts.append(
            f"<p>Average information loss when an attacker learns one attribute; the {len(lk.rows)} "
            f"most revealing of {lk.measured} (1 = identifies everyone).</p>"
        )
        parts.append(
            _table(
                ("attribute", "partitions", "loss (bits)", "normalized"),
                [(row.attribute, row.partitions, f"{row.loss:.4f}", f"{row.normalized:.4f}") for row in lk.rows],
            )
        )
    parts.append(_notes_for(report, "Information leakage"))

    parts.append("<h2>Individual privacy</h2>")
    if report.privacy is not None:
        pv = report.privacy
        parts.append(f"<p><b>Attacker model.</b> {_e(report.attacker_model)}</p>")
        parts.append(
            f"<p>Minimum proportion of protective peers (PPP) over every combination of "
            f"{_e(pv.known_text)} an adversary might know; protected = minimum PPP above p = {pv.p:g}.</p>"
        )
        parts.append(
            _table(
                ("sensitive attribute", "records protected", "median minimum PPP"),
                [(row.sensitive, percent(row.protected_share), f"{row.median_min_ppp:.3f}") for row in pv.rows],
            )
        )
    parts.append(_notes_for(report, "Individual privacy"))

    parts.append("<h2>Suggested generalization</h2>")
    g = report.generalization
    if g is not None:
        parts.append(
            f"<p>The generalization with the least information loss for k = {g.k} with default "
            f"hierarchies{'' if g.optimal else ' (the least found in the time allowed, not proven)'}: "
            f"{_e(MEASURE_NAMES[g.measure])} {g.utility:.4f}; {g.suppressed:,} records suppressed; "
            f"{g.rows:,} of {g.original_rows:,} distinct combinations of quasi-identifier values kept, "
            f"{g.violations:,} of them in classes smaller than k (before: {g.original_violations:,}); "
            f"{g.generated:,} generalizations counted.</p>"
        )
        parts.append(_table(("attribute", "level", "highest level", "hierarchy"), g.levels))
        if g.cost:
            parts.append("<p>What it costs: " + _e(" ".join(g.cost)) + "</p>")
    parts.append(_notes_for(report, "Suggested generalization"))

    parts.append("<h2>Parameters</h2>")
    parts.append(_table(("parameter", "value"), report.parameters))
    parts.append(
        '<p class="meta">Methods: Caballero, Sen &amp; Nygård (anonymity vectors); Arca &amp; Hewett 2021 '
        "(leakage); Iyengar 2002 (loss metric); Kohlmayer et al. 2012 (Flash, the optimal search's pruning); Kroes, Janssen, Groenwold &amp; van Leeuwen 2021 (PPP).</p>"
    )
    parts.append("</body></html>")
    return "\n".join(parts)


def _linkage_rows(linkage) -> list[tuple[str, str]]:
    """The report's rows on linked records: people by their whole history, households by their members."""
    if linkage is None:
        return []
    rows = []
    h, g = linkage.history, linkage.households
    if h is not None:
        rows.append(("people unique on their history", f"{h.unique:,} of {h.people:,} ({percent(h.unique_share)})"))
        rows += [(f"people whose history < {t} share", f"{n:,} ({percent(n / max(h.people, 1))})") for t, n in h.below]
    if g is not None:
        rows.append(
            ("households unique on their members", f"{g.unique:,} of {g.households:,} ({percent(g.unique_share)})")
        )
        rows.append(("household risk", f"highest {g.max:.3f}, mean {g.mean:.3f}, {g.above:,} above {g.threshold:g}"))
    return rows
