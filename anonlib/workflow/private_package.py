"""The package of a private release: the synthetic table (or the DP tables), what it
states, the comparison, and what differential privacy promises.

``private_package(synthesis, comparison, source_name=..., source_sha256=...)`` writes a
zip with:

- ``synthetic.csv``: the synthetic table, only when it passed its checks
  (``anonlib.workflow.private_release.CHECKS``) or ``include_failed`` says to keep it;
- ``dp_tables.csv``: the DP one-way and two-way tables of the release (the fitted model's
  counts: the same release, post-processed; always there, and the product when the
  synthetic table fails its checks);
- ``report.html``: the comparison with the real records (computed on them: outside the
  guarantee, for the privacy officer, not the recipient);
- ``recipe.json``: the settings (method, ε, δ, ρ, columns, their public category lists,
  cuts and bounds, the pairs, OpenDP's version), the digests of the tables and of its own
  content, and ``"reproducible": false``: re-running it draws fresh noise (no seed, by design);
- ``README.txt``: what the files are, what DP promises and what it does not, how to check;
- ``SHA256SUMS``: the SHA-256 of every other member.

``verify_private`` (called by ``anonlib.workflow.verify.verify_package``) checks every
digest; a recipe cannot be re-applied, so given the source it checks only that the
source is the file recorded.

Example:
    >>> PRIVATE_KIND
    'differentially private release'
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

from ..core.version import PRODUCT
from ..transformations.synthesis import Synthesis
from .package import README_FILE, RECIPE_FILE, REPORT_FILE, SUMS_FILE, now
from .private_release import CHECKS, PrivateComparison
from .recipe import DIGEST_FIELD, content_digest
from .release import digest, file_digest, is_sha256, release_csv

PRIVATE_KIND = "differentially private release"
SYNTHETIC_FILE = "synthetic.csv"
TABLES_FILE = "dp_tables.csv"
PRIVATE_MEMBERS = (SYNTHETIC_FILE, TABLES_FILE, REPORT_FILE, RECIPE_FILE, README_FILE, SUMS_FILE)
NOT_REPRODUCIBLE = (
    "This recipe cannot be re-applied to reproduce the table: OpenDP draws fresh noise on every run and takes "
    "no seed, by design. Running the same settings on the same file makes another table with the same "
    "guarantee, and spends the budget again."
)
PROMISES = (
    "What differential privacy promises: whatever anyone already knows, the chance of any outcome of this "
    "release changes by at most a factor of e^ε (and, with δ > 0, up to a probability δ) whether or not any one "
    "record was in the file. So no one can tell with confidence from the release whether a given record was in "
    "the file, or learn a value of that record beyond what the other records imply. It holds for "
    f"{SYNTHETIC_FILE}, {TABLES_FILE} and anything computed from them alone, however it is combined with other data."
)
DOES_NOT = (
    "What it does not promise: (1) Patterns of groups are released on purpose: if most records of a group share "
    "a value, the release shows it, and it may be used to guess the value of a person known to be in that group. "
    "(2) The unit is one record: a person with several records in the file is protected at several times ε. "
    "(3) Every release from the same file spends its own budget: two releases at ε = 3 give ε = 6 together. "
    "(4) The category lists, cuts and bounds stated in recipe.json are taken as public knowledge, not protected. "
    f"(5) {REPORT_FILE} compares the release with the real records: its numbers are computed on them and are "
    "outside the guarantee; keep it with the privacy officer and give the recipient the tables and this README. "
    "(6) Small groups and rare combinations are noisy: numbers about them are not reliable. "
    "(7) No synthetic record is a real person's, but some may match a real combination of values by chance."
)


@dataclass(frozen=True)
class PrivatePackageFiles:
    """The members of a private package as bytes (before zipping)."""

    table: bytes | None
    tables: bytes
    report: bytes
    recipe: bytes
    readme: bytes

    def members(self) -> tuple[tuple[str, bytes], ...]:
        out = [(SYNTHETIC_FILE, self.table)] if self.table is not None else []
        out += [(TABLES_FILE, self.tables), (REPORT_FILE, self.report), (RECIPE_FILE, self.recipe)]
        out += [(README_FILE, self.readme)]
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


def private_recipe(
    synthesis: Synthesis,
    comparison: PrivateComparison,
    *,
    table: bytes | None,
    tables: bytes,
    source_name: str,
    source_sha256: str | None,
    created: str,
) -> dict[str, Any]:
    """What the private release states, as JSON (with the digest of its own content)."""
    b = synthesis.budget
    data = {
        "format": "anonlib private release",
        "version": 1,
        "kind": PRIVATE_KIND,
        "reproducible": False,
        "why_not_reproducible": NOT_REPRODUCIBLE,
        "privacy": {
            "epsilon": b.epsilon,
            "delta": b.delta,
            "rho": b.rho,
            "noise": b.noise,
            "unit": "one record",
            "budget_given_to_opendp": synthesis.budget_spent,
        },
        "method": {
            "name": synthesis.method,
            "description": synthesis.method_label,
            "pairs": [list(p) for p in synthesis.pairs],
            "column_to_predict": synthesis.predict,
        },
        "columns": list(synthesis.columns),
        "categories": {c: list(v) for c, v in synthesis.categories.items()},
        "cuts": [
            {"column": c.column, "lower": c.lower, "upper": c.upper, "cuts": list(c.cuts)} for c in synthesis.cuts
        ],
        "rows": synthesis.rows,
        "records_estimate": round(synthesis.records_estimate, 1),
        "library": dict(synthesis.library),
        "made_with": PRODUCT,
        "created": created,
        "source": {"name": source_name, "sha256": source_sha256},
        "release": {
            "table": SYNTHETIC_FILE if table is not None else None,
            "table_sha256": digest(table) if table is not None else None,
            "tables": TABLES_FILE,
            "tables_sha256": digest(tables),
            "checks_passed": comparison.passed,
            "checks": [c.sentence() for c in comparison.checks],
        },
    }
    data[DIGEST_FIELD] = content_digest(data)
    return data


def _readme(synthesis: Synthesis, comparison: PrivateComparison, recipe: dict, table: bytes | None) -> str:
    release = recipe["release"]
    held = (
        f"{SYNTHETIC_FILE}    the synthetic table: {synthesis.rows:,} records drawn from the DP model (no record is a "
        "real person's)\n"
        if table is not None
        else f"(no {SYNTHETIC_FILE}: the synthetic table failed its checks, so the DP tables are the release)\n"
    )
    statement = [
        ("method", f"{synthesis.method} ({synthesis.method_label})"),
        ("privacy budget", synthesis.budget.sentence()),
        ("unit protected", "one record"),
        ("columns", ", ".join(synthesis.columns)),
        *(("cuts and bounds", c.text()) for c in synthesis.cuts),
        ("pairs measured", "; ".join(" × ".join(p) for p in synthesis.pairs) or "chosen by the method"),
        ("library", ", ".join(f"{k} {v}" for k, v in synthesis.library.items())),
        ("made with", PRODUCT),
        ("made at", recipe["created"]),
        ("source file", recipe["source"]["name"]),
        ("source SHA-256", recipe["source"]["sha256"] or "not recorded (not read from a file)"),
        (f"{SYNTHETIC_FILE} SHA-256", release["table_sha256"] or "not released"),
        (f"{TABLES_FILE} SHA-256", release["tables_sha256"]),
        (f"{RECIPE_FILE} content digest", recipe[DIGEST_FIELD]),
        *(("check", c.sentence()) for c in comparison.checks),
    ]
    width = max(len(k) for k, _ in statement)
    lines = "\n".join(f"  {k:<{width}}  {v}" for k, v in statement)
    return (
        f"Differentially private release of {recipe['source']['name']}\n\n"
        f"{held}"
        f"{TABLES_FILE}    the DP one-way and two-way tables (records per combination of values, from the same release)\n"
        f"{REPORT_FILE}     the comparison with the real records (for the privacy officer; see point 5 below)\n"
        f"{RECIPE_FILE}     the settings of the release and the digests\n"
        f"{SUMS_FILE}      the SHA-256 of each file (check with `sha256sum -c {SUMS_FILE}`)\n\n"
        f"What this release states:\n{lines}\n\n{PROMISES}\n\n{DOES_NOT}\n\n"
        f"The checks a synthetic table must pass to be released as a table: {'; '.join(CHECKS)}.\n\n"
        f"{NOT_REPRODUCIBLE}\n\n"
        "Check the package (exit code 0 when every check passes, 1 when one fails, 2 on bad input):\n"
        "  python -m anonlib verify private.zip [THE_SOURCE_FILE]\n"
        "It recomputes every digest; given the source file, it checks that it is the file recorded. The digests show\n"
        "whether a file was changed after the release was made; they do not show who made it.\n"
    )


def _report(synthesis: Synthesis, comparison: PrivateComparison, recipe: dict) -> str:
    e = html.escape

    def table(header: list[str], rows: list[list[Any]]) -> str:
        head = "".join(f"<th>{e(str(h))}</th>" for h in header)
        body = "".join("<tr>" + "".join(f"<td>{e(str(v))}</td>" for v in row) + "</tr>" for row in rows)
        return f"<table><tr>{head}</tr>{body}</table>"

    marginals = sorted(comparison.marginals, key=lambda m: (len(m.columns), -m.release))
    parts = [
        f"<h1>Private release of {e(recipe['source']['name'])}</h1>",
        f"<p>{e(synthesis.sentence())}</p>",
        "<p>Every number below is computed on the real records: it is outside the release's privacy guarantee. "
        "Keep this report with the privacy officer.</p>",
        "<h2>Checks</h2>",
        "<ul>" + "".join(f"<li>{e(s)}</li>" for s in comparison.sentences()) + "</ul>",
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
    parts.append(f"<h2>What differential privacy promises</h2><p>{e(PROMISES)}</p><p>{e(DOES_NOT)}</p>")
    parts.append(f"<p>{e(NOT_REPRODUCIBLE)}</p>")
    parts.append(f"<p>{e(RECIPE_FILE)} content digest: {e(recipe[DIGEST_FIELD])}</p>")
    style = (
        "body{font-family:sans-serif;max-width:60em;margin:2em auto}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}"
    )
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Private release</title>"
        f"<style>{style}</style></head><body>{''.join(parts)}</body></html>"
    )


def private_package_files(
    synthesis: Synthesis,
    comparison: PrivateComparison,
    *,
    source_name: str,
    source_sha256: str | None = None,
    created: str | None = None,
    include_failed: bool = False,
) -> PrivatePackageFiles:
    """The members of the private package (see the module text)."""
    table = release_csv(synthesis.table) if comparison.passed or include_failed else None
    tables = dp_tables_csv(synthesis)
    recipe = private_recipe(
        synthesis,
        comparison,
        table=table,
        tables=tables,
        source_name=source_name,
        source_sha256=source_sha256,
        created=created or now(),
    )
    recipe_bytes = (json.dumps(recipe, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    return PrivatePackageFiles(
        table,
        tables,
        _report(synthesis, comparison, recipe).encode("utf-8"),
        recipe_bytes,
        _readme(synthesis, comparison, recipe, table).encode("utf-8"),
    )


def private_package(
    synthesis: Synthesis,
    comparison: PrivateComparison,
    *,
    source_name: str,
    source_sha256: str | None = None,
    created: str | None = None,
    include_failed: bool = False,
) -> bytes:
    """The zip of ``private_package_files``."""
    files = private_package_files(
        synthesis,
        comparison,
        source_name=source_name,
        source_sha256=source_sha256,
        created=created,
        include_failed=include_failed,
    )
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
        recipe = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return recipe if isinstance(recipe, dict) and recipe.get("kind") == PRIVATE_KIND else None


def verify_private(members: dict[str, bytes], recipe: dict, source, check: Callable[[str, bool, str], bool]) -> None:
    """Check a private package's members (read by ``verify_package``): each against
    ``SHA256SUMS``, the recipe against its own digest, the tables against the digests the
    recipe records, README and report stating the recipe's digest; given the ``source``
    (bytes or path), that it is the file recorded (a recipe cannot be re-applied)."""
    recorded: dict[str, str] = {}
    if SUMS_FILE in members:
        for line in members[SUMS_FILE].decode("utf-8", "replace").splitlines():
            value, _, name = line.partition("  ")
            if is_sha256(value) and name:
                recorded[name] = value
    else:
        check(SUMS_FILE, False, "is missing from the package")
    release = recipe.get("release") if isinstance(recipe.get("release"), dict) else {}
    expected = [TABLES_FILE, REPORT_FILE, RECIPE_FILE, README_FILE] + ([SYNTHETIC_FILE] if release.get("table") else [])
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
    for name in (README_FILE, REPORT_FILE):
        if name in members:
            states = str(recipe.get(DIGEST_FIELD, "")) in members[name].decode("utf-8", "replace")
            check(
                name,
                states,
                f"states the digest of this package's {RECIPE_FILE}"
                if states
                else f"does not state the digest of this package's {RECIPE_FILE}; it belongs to another release",
            )
    if source is not None:
        sha = (recipe.get("source") or {}).get("sha256")
        if not sha:
            check("source", False, "could not be checked: the recipe records no SHA-256 of its source")
        else:
            same = file_digest(source) == sha
            check(
                "source",
                same,
                "is the file the release was made from (same SHA-256); a private release cannot be re-applied to "
                "reproduce its table (fresh noise, no seed, by design)"
                if same
                else "is not the file the release was made from: its SHA-256 differs from the one recorded",
            )


__all__ = [
    "NOT_REPRODUCIBLE",
    "PRIVATE_KIND",
    "PRIVATE_MEMBERS",
    "SYNTHETIC_FILE",
    "TABLES_FILE",
    "PrivatePackageFiles",
    "dp_tables_csv",
    "private_package",
    "private_package_files",
    "private_recipe",
    "private_recipe_of",
    "verify_private",
]
