"""The package of a private release: only OpenDP's output and the inputs the user
declared, and what differential privacy promises.

``private_package(synthesis, ship="synthetic")`` writes a zip with:

- ``synthetic.csv``: the synthetic table, when ``ship="synthetic"`` (chosen before the
  run; never decided by a comparison with the records);
- ``dp_tables.csv``: the DP one-way and two-way tables of the release (the fitted model's
  counts: the same release, post-processed);
- ``recipe.json``: what the release states, every value of it OpenDP's output or a
  declared input: method, ε, δ, ρ, the unit protected, the columns, their value lists and
  where each came from, cuts and bounds, the pairs, the rows drawn, library versions, the
  time it was made, the digests of the tables and of its own content, and
  ``"reproducible": false`` (fresh noise, no seed, by design);
- ``README.txt``: what the files are, what DP promises and what it does not, how to check;
- ``SHA256SUMS``: the SHA-256 of every other member.

Nothing else read from the records: no digest of the source, no count of its records, no
comparison. The comparison with the records is the privacy officer's:
``private_report(synthesis, comparison)`` writes it as HTML for ``--report FILE`` and the
Release view, outside the package (the project's audit log keeps the source's digest and
record count).

``verify_private`` (called by ``anonlib.workflow.verify.verify_package``) checks every
member's digest; a private release is not re-derived from its source.

Example:
    >>> PRIVATE_KIND, SHIP
    ('differentially private release', ('synthetic', 'tables'))
"""

from __future__ import annotations

import html
import io
import json
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..core.errors import RecipeError, SynthesisError
from ..core.fields import json_value
from ..core.version import PRODUCT
from ..transformations.synthesis import VALUE_SOURCES, Synthesis
from .package import README_FILE, RECIPE_FILE, REPORT_FILE, SUMS_FILE, now
from .private_release import CHECKS, PrivateComparison
from .recipe import DIGEST_FIELD, content_digest
from .release import digest, is_sha256, release_csv

PRIVATE_KIND = "differentially private release"
SYNTHETIC_FILE = "synthetic.csv"
TABLES_FILE = "dp_tables.csv"
SHIP = ("synthetic", "tables")  # what the package holds, chosen before the run
PRIVATE_MEMBERS = (SYNTHETIC_FILE, TABLES_FILE, RECIPE_FILE, README_FILE, SUMS_FILE, REPORT_FILE)  # report: version 1
NOT_REPRODUCIBLE = (
    "This recipe cannot be re-applied to reproduce the table: OpenDP draws fresh noise on every run and takes "
    "no seed, by design. Running the same settings on the same file makes another table with the same "
    "guarantee, and spends the budget again."
)
OUTSIDE_RULE = "a value outside a column's declared bounds is counted in its end bin (clamped into the bounds)"
NOT_DERIVED = (
    "a private release is not re-derived from its source (fresh noise, no seed, by design), and its package "
    "records no digest of it: the project's audit log does"
)


def promises(unit: str = "record") -> str:
    """What DP promises, for the unit protected ("record" or "person").

    >>> "any one person" in promises("person")
    True
    """
    who = "any one person's records were" if unit == "person" else "any one record was"
    return (
        "What differential privacy promises: whatever anyone already knows, the chance of any outcome of this "
        f"release changes by at most a factor of e^ε (and, with δ > 0, up to a probability δ) whether or not {who} "
        "in the file. So no one can tell with confidence from the release whether a given "
        f"{'person' if unit == 'person' else 'record'} was in the file, or learn a value of it beyond what the "
        f"others imply. It holds for {SYNTHETIC_FILE}, {TABLES_FILE} and anything computed from them alone, however "
        "it is combined with other data."
    )


def does_not(unit: str = "record") -> str:
    """What DP does not promise, for the unit protected."""
    unit_text = (
        "The unit is the person, with at most the number of records per person stated above (any more were left "
        "out at random before measuring)."
        if unit == "person"
        else "The unit is one record: a person with several records in the file is protected at several times ε."
    )
    return (
        "What it does not promise: (1) Patterns of groups are released on purpose: if most records of a group share "
        "a value, the release shows it, and it may be used to guess the value of a person known to be in that "
        f"group. (2) {unit_text} (3) Every release from the same file spends its own budget: two releases at ε = 3 "
        "give ε = 6 together. (4) The value lists, cuts and bounds stated in recipe.json as given or declared public "
        "are public knowledge, not protected. (5) Small groups and rare combinations are noisy: numbers about them "
        "are not reliable. (6) No synthetic record is a real person's, but some may match a real combination of "
        "values by chance."
    )


@dataclass(frozen=True)
class PrivatePackageFiles:
    """The members of a private package as bytes (before zipping)."""

    table: bytes | None
    tables: bytes
    recipe: bytes
    readme: bytes

    def members(self) -> tuple[tuple[str, bytes], ...]:
        out = [(SYNTHETIC_FILE, self.table)] if self.table is not None else []
        out += [(TABLES_FILE, self.tables), (RECIPE_FILE, self.recipe), (README_FILE, self.readme)]
        return tuple(out)

    @property
    def sums(self) -> bytes:
        return "".join(f"{digest(data)}  {name}\n" for name, data in self.members()).encode("ascii")


def dp_tables_csv(synthesis: Synthesis) -> bytes:
    """The release's DP tables in one CSV, a row per cell: ``table`` (its columns joined
    by `` × ``), ``column_1``, ``value_1``, ``column_2``, ``value_2``, ``records``."""
    rows = []
    for clique, frame in synthesis.marginals:
        name = " × ".join(clique)
        for record in frame.to_dict("records"):
            row = {"table": name}
            for i in range(2):
                column = clique[i] if i < len(clique) else ""
                value = record.get(column) if column else ""
                row[f"column_{i + 1}"] = column
                row[f"value_{i + 1}"] = "(blank)" if column and (value is None or pd.isna(value)) else value
            row["records"] = int(record["records"])
            rows.append(row)
    columns = ["table", "column_1", "value_1", "column_2", "value_2", "records"]
    return release_csv(pd.DataFrame(rows, columns=columns))


def _unit_text(synthesis: Synthesis) -> str:
    if synthesis.unit == "person":
        n = synthesis.records_per_person
        return f"one person (at most {n} record{'s' if n != 1 else ''} each)"
    return "one record"


def private_recipe(synthesis: Synthesis, *, table: bytes | None, tables: bytes, created: str) -> dict[str, Any]:
    """What the private release states, as JSON (with the digest of its own content):
    OpenDP's output and the declared inputs only."""
    b = synthesis.budget
    data = {
        "format": "anonlib private release",
        "version": 3,
        "kind": PRIVATE_KIND,
        "reproducible": False,
        "why_not_reproducible": NOT_REPRODUCIBLE,
        "privacy": {
            "epsilon": b.epsilon,
            "delta": b.delta,
            "rho": b.rho,
            "noise": b.noise,
            "delta_to_find_value_lists": b.delta_keys,
            "stated_as": "OpenDP's privacy map of the whole release (finding value lists included)",
            "unit": synthesis.unit,
            "unit_described": _unit_text(synthesis),
            "records_per_person": synthesis.records_per_person if synthesis.unit == "person" else None,
            "budget_given_to_opendp": synthesis.budget_spent,
        },
        "method": {
            "name": synthesis.method,
            "description": synthesis.method_label,
            "pairs": [list(p) for p in synthesis.pairs],
            "pairs_chosen_by_opendp": [list(p) for p in synthesis.chosen_pairs],
            "mst_pairs": synthesis.selections,
            "column_to_predict": synthesis.predict,
        },
        "columns": list(synthesis.columns),
        "categories": {c: list(v) for c, v in synthesis.categories.items()},
        "values_from": {c: VALUE_SOURCES.get(v, v) for c, v in synthesis.value_sources.items()},
        "missing_spelled_as": dict(synthesis.missing),
        "cuts": [
            {"column": c.column, "lower": c.lower, "upper": c.upper, "cuts": list(c.cuts), "labels": list(c.labels)}
            for c in synthesis.cuts
        ],
        "bounds": OUTSIDE_RULE if synthesis.cuts else None,
        "tables": [" × ".join(clique) for clique, _ in synthesis.marginals],
        "rows": synthesis.rows,
        "library": dict(synthesis.library),
        "made_with": PRODUCT,
        "created": created,
        "release": {
            "table": SYNTHETIC_FILE if table is not None else None,
            "table_sha256": digest(table) if table is not None else None,
            "tables": TABLES_FILE,
            "tables_sha256": digest(tables),
        },
    }
    data[DIGEST_FIELD] = content_digest(data)
    return data


def tables_text(synthesis: Synthesis) -> str:
    """The DP tables the package holds, exactly: a one-way table of each column, and the two-way
    tables of the pairs measured (``dp_tables.csv`` holds these and no others)."""
    oneway = [clique[0] for clique, _ in synthesis.marginals if len(clique) == 1]
    twoway = [" × ".join(clique) for clique, _ in synthesis.marginals if len(clique) == 2]
    text = f"one-way tables of {', '.join(oneway)}"
    return text + (f"; two-way tables of {'; '.join(twoway)}" if twoway else "; no two-way table")


def _readme(synthesis: Synthesis, recipe: dict, table: bytes | None) -> str:
    release = recipe["release"]
    held = (
        f"{SYNTHETIC_FILE}    the synthetic table: {synthesis.rows:,} records drawn from the DP model (no record is a "
        "real person's)\n"
        if table is not None
        else f"(no {SYNTHETIC_FILE}: the DP tables were chosen as the release before it was made)\n"
    )
    chosen = "; ".join(" × ".join(p) for p in synthesis.chosen_pairs)
    statement = [
        ("method", f"{synthesis.method} ({synthesis.method_label})"),
        ("privacy budget", synthesis.budget.sentence()),
        ("stated as", "OpenDP's privacy map of the whole release (finding value lists included)"),
        ("unit protected", _unit_text(synthesis)),
        ("columns", ", ".join(synthesis.columns)),
        *((f"values of {c}", VALUE_SOURCES.get(v, v)) for c, v in synthesis.value_sources.items() if v != "cuts"),
        *((f"missing {c}", f"written {text!r}" if text else "written blank") for c, text in synthesis.missing.items()),
        *(("cuts and bounds", c.text()) for c in synthesis.cuts),
        *((("bounds", OUTSIDE_RULE),) if synthesis.cuts else ()),
        ("pairs given", "; ".join(" × ".join(p) for p in synthesis.pairs) or "none"),
        ("pairs OpenDP chose", chosen or "none"),
        (f"tables in {TABLES_FILE}", tables_text(synthesis)),
        ("library", ", ".join(f"{k} {v}" for k, v in synthesis.library.items())),
        ("made with", PRODUCT),
        ("made at", recipe["created"]),
        (f"{SYNTHETIC_FILE} SHA-256", release["table_sha256"] or "not released"),
        (f"{TABLES_FILE} SHA-256", release["tables_sha256"]),
        (f"{RECIPE_FILE} content digest", recipe[DIGEST_FIELD]),
    ]
    width = max(len(k) for k, _ in statement)
    lines = "\n".join(f"  {k:<{width}}  {v}" for k, v in statement)
    return (
        "Differentially private release\n\n"
        f"{held}"
        f"{TABLES_FILE}    the DP tables of the release (records per combination of values): the tables listed "
        "below, no others\n"
        f"{RECIPE_FILE}     the settings of the release and the digests\n"
        f"{SUMS_FILE}      the SHA-256 of each file (check with `sha256sum -c {SUMS_FILE}`)\n\n"
        f"Every file here is OpenDP's output or a setting the maker declared; nothing else was read from the "
        "records (no count of them, no comparison with them).\n\n"
        f"What this release states:\n{lines}\n\n{promises(synthesis.unit)}\n\n{does_not(synthesis.unit)}\n\n"
        f"{NOT_REPRODUCIBLE}\n\n"
        "Check the package (exit code 0 when every check passes, 1 when one fails, 2 on bad input):\n"
        "  python -m anonlib verify private.zip\n"
        "It recomputes every digest. The digests show whether a file was changed after the release was made; they\n"
        "do not show who made it.\n"
    )


def private_report(synthesis: Synthesis, comparison: PrivateComparison, *, source_name: str = "") -> bytes:
    """The comparison with the records, as HTML, for the privacy officer (``--report FILE``):
    never in the package. Every number in it is computed on the records."""
    e = html.escape

    def table(header: list[str], rows: list[list[Any]]) -> str:
        head = "".join(f"<th>{e(str(h))}</th>" for h in header)
        body = "".join("<tr>" + "".join(f"<td>{e(str(v))}</td>" for v in row) + "</tr>" for row in rows)
        return f"<table><tr>{head}</tr>{body}</table>"

    marginals = sorted(comparison.marginals, key=lambda m: (len(m.columns), -m.release))
    parts = [
        f"<h1>Private release of {e(source_name)}: the comparison with the records</h1>",
        f"<p>{e(synthesis.sentence())}</p>",
        "<p>Every number below is computed on the real records: it is outside the release's privacy guarantee. "
        "Keep this report with the privacy officer; it is not part of the package.</p>",
        "<h2>Checks</h2>",
        "<ul>" + "".join(f"<li>{e(s)}</li>" for s in comparison.sentences()) + "</ul>",
        f"<p>The checks: {e('; '.join(CHECKS))}.</p>",
        "<h2>Total variation of every one- and two-way marginal</h2>",
        table(
            ["columns", "release", "two halves of the real file", "columns drawn independently"],
            [[" × ".join(m.columns), f"{m.release:.4f}", f"{m.halves:.4f}", f"{m.independent:.4f}"] for m in marginals],
        ),
        "<h2>Distributions</h2>",
        "".join(
            f"<h3>{e(v.column)}</h3>"
            + table(
                ["value", "real records", "release"],
                [[c.value, "" if c.before is None else c.before, c.after] for c in v.counts],
            )
            for v in comparison.columns
        ),
    ]
    if comparison.pair is not None:
        a, b = comparison.pair.columns
        for which, title in (("before", "real records"), ("after", "release")):
            frame = comparison.pair.frame(which)
            parts.append(f"<h3>{e(a)} by {e(b)}: {title}</h3>")
            parts.append(
                table([""] + list(frame.columns), [[i, *r] for i, r in zip(frame.index, frame.values.tolist())])
            )
    style = (
        "body{font-family:sans-serif;max-width:60em;margin:2em auto}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}"
    )
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Private release: comparison</title>"
        f"<style>{style}</style></head><body>{''.join(parts)}</body></html>"
    ).encode()


def private_package_files(
    synthesis: Synthesis, *, ship: str = "synthetic", created: str | None = None
) -> PrivatePackageFiles:
    """The members of the private package (see the module text)."""
    if ship not in SHIP:
        raise SynthesisError(f"What ships is the synthetic table or the DP tables ({', '.join(SHIP)}); got '{ship}'.")
    table = release_csv(synthesis.table) if ship == "synthetic" else None
    tables = dp_tables_csv(synthesis)
    recipe = private_recipe(synthesis, table=table, tables=tables, created=created or now())
    recipe_bytes = (json.dumps(recipe, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    return PrivatePackageFiles(table, tables, recipe_bytes, _readme(synthesis, recipe, table).encode("utf-8"))


def private_package(synthesis: Synthesis, *, ship: str = "synthetic", created: str | None = None) -> bytes:
    """The zip of ``private_package_files``: the same bytes for the same release, ``ship``
    and ``created`` (members in a fixed order, a fixed zip date)."""
    files = private_package_files(synthesis, ship=ship, created=created)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in (*files.members(), (SUMS_FILE, files.sums)):
            info = zipfile.ZipInfo(name, date_time=(2000, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    return buffer.getvalue()


# --------------------------------------------------------------------------- verify


def private_recipe_of(data: bytes | None) -> dict | None:
    """The recipe's JSON when it is a private release's, else None.

    >>> private_recipe_of(b'{"kind": "differentially private release"}')["kind"]
    'differentially private release'
    >>> private_recipe_of(b"not json") is None
    True
    """
    if data is None:
        return None
    try:
        recipe = json_value(data, RECIPE_FILE)
    except RecipeError:
        return None
    return recipe if isinstance(recipe, dict) and recipe.get("kind") == PRIVATE_KIND else None


def verify_private(members: dict[str, bytes], recipe: dict, source, check: Callable[[str, bool, str], bool]) -> None:
    """Check a private package's members (read by ``verify_package``): each against
    ``SHA256SUMS``, the recipe against its own digest, the tables against the digests the
    recipe records, the README stating the recipe's digest. Given a ``source``, it says
    that a private release is not re-derived from its source (nothing of it is checked)."""
    recorded: dict[str, str] = {}
    if SUMS_FILE in members:
        for line in members[SUMS_FILE].decode("utf-8", "replace").splitlines():
            value, _, name = line.partition("  ")
            if is_sha256(value) and name:
                recorded[name] = value
    else:
        check(SUMS_FILE, False, "is missing from the package")
    release = recipe.get("release") if isinstance(recipe.get("release"), dict) else {}
    expected = [TABLES_FILE, RECIPE_FILE, README_FILE] + ([SYNTHETIC_FILE] if release.get("table") else [])
    if recipe.get("version") == 1:  # a package written before private end to end held the report too
        expected.append(REPORT_FILE)
    for name in expected:
        if name not in members:
            check(name, False, "is missing from the package")
        elif SUMS_FILE in members and name not in recorded:
            check(SUMS_FILE, False, f"does not list {name}; it was changed after the release was made")
        elif SUMS_FILE in members and digest(members[name]) != recorded[name]:
            check(
                name, False, f"was changed after the release was made: its SHA-256 is not the one {SUMS_FILE} records"
            )
        elif SUMS_FILE in members:
            check(name, True, f"matches its SHA-256 in {SUMS_FILE}")
    stray = sorted(set(recorded) - set(expected))
    if stray:
        check(SUMS_FILE, False, f"lists {', '.join(stray)}, which is not part of this private release")
    intact = recipe.get(DIGEST_FIELD) == content_digest(recipe)
    check(
        RECIPE_FILE,
        intact,
        "matches the digest of its own content"
        if intact
        else "was changed after it was written: its content no longer matches its digest",
    )
    for name, key in ((SYNTHETIC_FILE, "table_sha256"), (TABLES_FILE, "tables_sha256")):
        if name in members and release.get(key):
            same = digest(members[name]) == release[key]
            check(
                name,
                same,
                "is the table the recipe recorded (same SHA-256)"
                if same
                else "differs from the table the recipe recorded; it was changed after the release was made",
            )
    if README_FILE in members:
        states = str(recipe.get(DIGEST_FIELD, "")) in members[README_FILE].decode("utf-8", "replace")
        check(
            README_FILE,
            states,
            f"states the digest of this package's {RECIPE_FILE}"
            if states
            else f"does not state the digest of this package's {RECIPE_FILE}; it belongs to another release",
        )
    if source is not None:
        check("source", True, f"was not checked: {NOT_DERIVED}")


__all__ = [
    "NOT_DERIVED",
    "NOT_REPRODUCIBLE",
    "PRIVATE_KIND",
    "PRIVATE_MEMBERS",
    "SHIP",
    "SYNTHETIC_FILE",
    "TABLES_FILE",
    "PrivatePackageFiles",
    "dp_tables_csv",
    "private_package",
    "private_package_files",
    "private_recipe",
    "private_report",
    "does_not",
    "tables_text",
    "promises",
    "private_recipe_of",
    "verify_private",
]
