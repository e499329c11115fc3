"""The release package: one zip with the released table, the risk report and the recipe,
stating what it is.

``release_package(copy)`` writes, for a ``WorkingCopy``:

- ``released.csv``: the released table (``anonlib.workflow.release``; the same
  bytes ``python -m anonlib apply recipe.json FILE`` writes);
- ``report.html``: the printable risk report of the released state
  (``anonlib.workflow.report``), with a "Release" section;
- ``recipe.json``: the recipe (``anonlib.workflow.recipe``), carrying the
  digest of its own content;
- ``README.txt``: what the files are, and the ``ReleaseStatement`` (with the columns
  released and those left out, each with its role and why);
- ``SHA256SUMS``: the SHA-256 of every other member (``sha256sum -c SHA256SUMS``
  checks it without anonlib; ``python -m anonlib verify`` checks it and more).

A package released into a project (``--project``) also holds ``audit.json``
(``stamp_package``): the project, the package's entry number in the project store's
audit log, and the log's head just before it (its entries and last digest), so a
package newer than the log's head shows that the log lost its end. Packages without
it (made outside a project, or before it existed) verify as before.

The statement (README and the report's "Release" section) lists the SHA-256 of
``released.csv`` and ``recipe.json``, the source file's name, SHA-256 and
records, the target and whether it is met, the steps, the product version and
the time. The zip is deterministic (fixed member order and timestamps): the same
working copy at the same ``created`` time always gives the same bytes.

Example:
    >>> import io, zipfile
    >>> import pandas as pd
    >>> from anonlib.core.dataset import Dataset
    >>> ds = Dataset.from_frame("d.csv", pd.DataFrame({"age": [30, 30, 40, 40]}), {"age": "quasi-identifier"})
    >>> data = release_package(WorkingCopy.start(ds, ReleaseTarget(k=2)), created="2026-01-01T00:00:00Z")
    >>> archive = zipfile.ZipFile(io.BytesIO(data))
    >>> archive.namelist()
    ['released.csv', 'report.html', 'recipe.json', 'README.txt', 'SHA256SUMS']
    >>> print(archive.read("SHA256SUMS").decode().splitlines()[0])
    7f55c0deb72d8197c794c6456c216d785e7d27dfc66480d8eaa46e68fb95e2e2  released.csv
"""

from __future__ import annotations

import io
import json
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from ..core.archives import read_member
from ..core.errors import PackageError
from ..core.fields import json_value
from ..core.version import PRODUCT
from ..measures.target import ReleaseTarget  # noqa: F401 - used by the example
from .history import WorkingCopy
from .kept import released_kept_risk
from .recipe import Recipe
from .release import digest, release_csv

if TYPE_CHECKING:
    from .report import RiskReport

TABLE_FILE = "released.csv"
REPORT_FILE = "report.html"
RECIPE_FILE = "recipe.json"
README_FILE = "README.txt"
SUMS_FILE = "SHA256SUMS"
AUDIT_FILE = "audit.json"  # the audit log's entry of a package released into a project (``stamp_package``)
MEMBERS = (TABLE_FILE, REPORT_FILE, RECIPE_FILE, README_FILE, SUMS_FILE)
_TIMESTAMP = (2000, 1, 1, 0, 0, 0)  # fixed, so the same release gives the same zip


@dataclass(frozen=True)
class ReleaseStatement:
    """What a release package states about itself (README and report)."""

    source_name: str
    source_sha256: str | None
    source_records: int
    target: str
    status: str
    steps: tuple[str, ...]
    columns: tuple[str, ...]
    released_sha256: str
    released_records: int
    recipe_sha256: str
    recipe_digest: str
    version: str
    created: str
    notes: tuple[str, ...] = ()
    left_out: tuple[str, ...] = ()  # the loaded file's columns not released, each with its role and why

    def rows(self) -> tuple[tuple[str, str], ...]:
        """(what, value) pairs, in the order the README and the report list them."""
        source_sha = self.source_sha256 or "not recorded (the table was not read from a file, e.g. a bundled sample)"
        steps = [(f"step {i}", line) for i, line in enumerate(self.steps, start=1)] or [
            ("steps", "none: the loaded file as it is")
        ]
        return (
            (f"{TABLE_FILE} SHA-256", self.released_sha256),
            (f"{TABLE_FILE} records", f"{self.released_records:,} (columns: {', '.join(self.columns)})"),
            ("columns left out", "; ".join(self.left_out) or "none: every column of the source is released"),
            (f"{RECIPE_FILE} SHA-256", self.recipe_sha256),
            ("recipe content digest", self.recipe_digest),
            ("source file", self.source_name),
            ("source SHA-256", source_sha),
            ("source records", f"{self.source_records:,}"),
            ("release target", self.target),
            ("target check", self.status),
            *steps,
            *(("note", note) for note in self.notes),
            ("made with", self.version),
            ("made at", self.created),
        )

    def text(self) -> str:
        """The rows as aligned plain text (the README's statement)."""
        width = max(len(what) for what, _ in self.rows())
        return "\n".join(f"  {what:<{width}}  {value}" for what, value in self.rows())


@dataclass(frozen=True)
class PackageFiles:
    """The package's members as bytes (before zipping), and what it states."""

    table: bytes
    report: bytes
    recipe: bytes
    readme: bytes
    statement: ReleaseStatement

    @property
    def sums(self) -> bytes:
        """``sha256sum`` lines of the other members."""
        members = (
            (TABLE_FILE, self.table),
            (REPORT_FILE, self.report),
            (RECIPE_FILE, self.recipe),
            (README_FILE, self.readme),
        )
        return "".join(f"{digest(data)}  {name}\n" for name, data in members).encode("ascii")


def now() -> str:
    """The current time, UTC, to the second (ISO 8601), as packages state it."""
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def written_recipe(copy: WorkingCopy, columns: Sequence[str] | None, table: bytes, engine: str) -> Recipe:
    """The recipe of ``copy`` recording a released table an ``engine`` wrote (``table``, its
    bytes as written). When they are the in-memory release's bytes (the engines write a CSV as
    it does, ``anonlib.engine.writer``) it is the in-memory recipe, compared byte for byte;
    otherwise it records their SHA-256 and the engine (``Recipe.written_by``: the rows of the
    in-memory release in another order or form, so a replay is compared with it as a table).

    >>> import pandas as pd
    >>> from anonlib.core.dataset import Dataset
    >>> ds = Dataset.from_frame("d.csv", pd.DataFrame({"age": [30, 30]}), {"age": "quasi-identifier"})
    >>> copy = WorkingCopy.start(ds, ReleaseTarget(k=2))
    >>> written_recipe(copy, None, b"age\\r\\n30\\r\\n30\\r\\n", "duckdb").written_by is None
    True
    >>> recipe = written_recipe(copy, None, b"age\\n30\\n30\\n", "duckdb")
    >>> recipe.written_by, recipe.released_sha256 == digest(b"age\\n30\\n30\\n")
    ('duckdb', True)
    """
    recipe = copy.recipe(columns)
    if recipe.released_sha256 == digest(table):  # byte for byte the in-memory release
        return recipe
    return replace(recipe, released_sha256=digest(table), written_by=engine)


def written_note(engine: str, same: bool = True) -> str:
    """What a package says of a released table an engine wrote: byte for byte the in-memory
    release's (``same``), or its rows in another order or form, compared as a table."""
    if same:
        return (
            f"{TABLE_FILE} was written by {engine}, byte for byte the table the in-memory release writes (the same "
            "records in the same order, the same text); `verify` compares the source's replay with it byte for byte."
        )
    return (
        f"{TABLE_FILE} was written by {engine}: the rows of the in-memory release, but not its bytes (its bytes "
        "are the engine's, which the SHA-256 above is of); `verify` compares the source's replay with it as a "
        "table, not byte for byte."
    )


def package_files(
    copy: WorkingCopy,
    *,
    columns: Sequence[str] | None = None,
    report: RiskReport | None = None,
    created: str | None = None,
    notes: Sequence[str] = (),
    written: tuple[str, bytes] | None = None,
) -> PackageFiles:
    """The files of the package of ``copy`` (released ``columns``, default all but
    identifiers and ignored ones). ``report`` is the risk report of ``copy`` (built
    when None; a page passes the one it shows); ``created`` the time stated (default
    now); ``notes`` sentences the README and the report add (e.g. an edited recipe).
    ``written``: (engine, bytes) of the released table an engine wrote, the package's
    table as written (``written_recipe``), instead of the in-memory writer's."""
    if written is None:
        recipe = copy.recipe(columns)
        table = release_csv(copy.release(recipe.columns))
    else:
        recipe = written_recipe(copy, columns, written[1], written[0])
        table = written[1]
        notes = (*notes, written_note(written[0], recipe.written_by is None))
    recipe_bytes = recipe.dumps().encode("utf-8")
    kept = released_kept_risk(recipe, copy.release(recipe.columns))  # outside the target: said, with its figure
    notes = (*notes, kept.sentence()) if kept is not None else tuple(notes)
    check = copy.check
    statement = ReleaseStatement(
        source_name=str(copy.loaded.name),
        source_sha256=recipe.source.sha256,
        source_records=copy.loaded.n_records,
        target=copy.release_target.describe(),  # in the unit it is checked in (people, histories)
        status=check.sentence() if check is not None else f"The target could not be checked: {copy.problem}",
        steps=recipe.describe,
        columns=recipe.columns,
        released_sha256=digest(table),
        released_records=recipe.released_records,
        recipe_sha256=digest(recipe_bytes),
        recipe_digest=recipe.digest,
        version=PRODUCT,
        created=created or now(),
        notes=tuple(notes),
        left_out=tuple(f"{c} ({role}: {why})" for c, role, why in recipe.column_account().left_out),
    )
    from .report import copy_report
    from .report_html import render_html

    report = replace(
        report if report is not None else copy_report(copy), release=statement.rows(), created=statement.created
    )
    readme = (
        f"Release of {copy.loaded.name}\n\n"
        f"{TABLE_FILE}    the released table\n"
        f"{REPORT_FILE}     the risk report of the released state\n"
        f"{RECIPE_FILE}     how the table was made, to re-apply to a new delivery of the same kind of file\n"
        f"{SUMS_FILE}      the SHA-256 of each file (check with `sha256sum -c {SUMS_FILE}`)\n\n"
        f"What this release states:\n{statement.text()}\n\n"
        "Check the package (exit code 0 when every check passes, 1 when one fails, 2 on bad input):\n"
        "  python -m anonlib verify release.zip [THE_SOURCE_FILE]\n"
        "It recomputes the digests, recounts the target on the released table and, given the source file,\n"
        "re-applies the recipe and compares the result byte for byte. The digests show whether a file was\n"
        "changed after the release was made; they do not show who made it (anyone can recompute them).\n\n"
        "Re-apply the recipe (exit code 0 when the target is met, 1 when it is not, 2 on bad input):\n"
        f"  python -m anonlib apply {RECIPE_FILE} YOUR_FILE --out {TABLE_FILE}\n"
        "Applied to the file it was made from, it writes this released table byte for byte.\n"
    )
    return PackageFiles(table, render_html(report).encode("utf-8"), recipe_bytes, readme.encode("utf-8"), statement)


def release_package(
    copy: WorkingCopy,
    *,
    columns: Sequence[str] | None = None,
    report: RiskReport | None = None,
    created: str | None = None,
    notes: Sequence[str] = (),
    written: tuple[str, bytes] | None = None,
) -> bytes:
    """The zip of ``package_files`` (deterministic bytes for a given ``created``)."""
    files = package_files(copy, columns=columns, report=report, created=created, notes=notes, written=written)
    return _zip(
        (
            (TABLE_FILE, files.table),
            (REPORT_FILE, files.report),
            (RECIPE_FILE, files.recipe),
            (README_FILE, files.readme),
            (SUMS_FILE, files.sums),
        )
    )


def _zip(members: Sequence[tuple[str, bytes]]) -> bytes:
    """A deterministic zip of ``members`` (fixed order and timestamps)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=_TIMESTAMP)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    return buffer.getvalue()


def stamp_package(package: bytes, stamp: dict) -> bytes:
    """The package with ``audit.json`` holding ``stamp`` (what the audit log records of it:
    the project, the entry number, the log's head before it), listed in ``SHA256SUMS``;
    every other member unchanged (an earlier stamp is replaced).

    >>> import pandas as pd
    >>> from anonlib.core.dataset import Dataset
    >>> ds = Dataset.from_frame("d.csv", pd.DataFrame({"age": [30, 30]}), {"age": "quasi-identifier"})
    >>> plain = release_package(WorkingCopy.start(ds, ReleaseTarget(k=2)), created="2026-01-01T00:00:00Z")
    >>> stamped = stamp_package(plain, {"project": "p", "entry": 3})
    >>> package_stamp(stamped), package_stamp(plain)
    ({'entry': 3, 'project': 'p'}, None)
    >>> zipfile.ZipFile(io.BytesIO(stamped)).namelist()[-2:]
    ['audit.json', 'SHA256SUMS']
    """
    try:
        with zipfile.ZipFile(io.BytesIO(package)) as archive:
            members = [(i.filename, read_member(archive, i)) for i in archive.infolist() if i.filename != AUDIT_FILE]
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, zlib.error):
        raise PackageError("The release package is not a readable zip file.") from None
    sums = dict(members).get(SUMS_FILE, b"")
    kept = [line for line in sums.decode("utf-8", "replace").splitlines() if not line.endswith(f"  {AUDIT_FILE}")]
    record = (json.dumps(stamp, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    sums = "".join(f"{line}\n" for line in [*kept, f"{digest(record)}  {AUDIT_FILE}"]).encode("utf-8")
    others = [(name, data) for name, data in members if name != SUMS_FILE]
    return _zip([*others, (AUDIT_FILE, record), (SUMS_FILE, sums)])


def package_stamp(package: bytes) -> dict | None:
    """The ``audit.json`` of a package (None when it has none, or it cannot be read)."""
    try:
        with zipfile.ZipFile(io.BytesIO(package)) as archive:
            if AUDIT_FILE not in archive.namelist() or archive.getinfo(AUDIT_FILE).file_size > 1 << 16:
                return None
            stamp = json_value(read_member(archive, archive.getinfo(AUDIT_FILE)), AUDIT_FILE, PackageError)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, zlib.error, PackageError):
        return None
    return stamp if isinstance(stamp, dict) else None
