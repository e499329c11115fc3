"""The release package: one zip with the released table, the risk report and the recipe.

``release_package(copy)`` writes, for a ``WorkingCopy``:

- ``released.csv``: the released table (``anonlib.workflow.release``; the same
  bytes ``python -m anonlib apply recipe.json FILE`` writes);
- ``report.html``: the printable risk report of the released state
  (``anonlib.report``), unless the caller passes its own HTML;
- ``recipe.json``: the recipe (``anonlib.workflow.recipe``);
- ``README.txt``: what the files are and the command that re-applies the recipe.

The zip is deterministic (fixed member order and timestamps), so the same
working copy always gives the same bytes.

Example:
    >>> import io, zipfile
    >>> import pandas as pd
    >>> from anonlib.core.dataset import Dataset
    >>> ds = Dataset.from_frame("d.csv", pd.DataFrame({"age": [30, 30, 40, 40]}), {"age": "quasi-identifier"})
    >>> data = release_package(WorkingCopy.start(ds, ReleaseTarget(k=2)), report_html="<html></html>")
    >>> zipfile.ZipFile(io.BytesIO(data)).namelist()
    ['released.csv', 'report.html', 'recipe.json', 'README.txt']
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from typing import Sequence

from .history import WorkingCopy
from .release import release_csv
from .target import ReleaseTarget  # noqa: F401 - used by the example

TABLE_FILE = "released.csv"
REPORT_FILE = "report.html"
RECIPE_FILE = "recipe.json"
README_FILE = "README.txt"
_TIMESTAMP = (2000, 1, 1, 0, 0, 0)  # fixed, so the same release gives the same zip


@dataclass(frozen=True)
class PackageFiles:
    """The package's members as bytes (before zipping)."""

    table: bytes
    report: bytes
    recipe: bytes
    readme: bytes


def package_files(copy: WorkingCopy, *, columns: Sequence[str] | None = None, report_html: str | None = None) -> PackageFiles:
    """The four files of the package of ``copy`` (released ``columns``, default all
    but identifiers and ignored ones)."""
    recipe = copy.recipe(columns)
    table = release_csv(copy.release(recipe.columns))
    if report_html is None:
        from ..report import build_report, render_html

        report_html = render_html(build_report(copy.current, k=copy.target.k))
    check = copy.check
    status = check.sentence() if check is not None else f"The target could not be checked: {copy.problem}"
    steps = "\n".join(f"  {i}. {line}" for i, line in enumerate(recipe.describe, start=1)) or "  (none: the loaded file as it is)"
    readme = (
        f"Release of {copy.loaded.name}\n\n"
        f"{TABLE_FILE}    the released table ({recipe.released_records:,} records; columns: {', '.join(recipe.columns)})\n"
        f"{REPORT_FILE}     the risk report of the released state\n"
        f"{RECIPE_FILE}     how the table was made, to re-apply to a new delivery of the same kind of file\n\n"
        f"Release target: {copy.target.describe()}.\n{status}\n\nSteps:\n{steps}\n\n"
        "Re-apply the recipe (exit code 0 when the target is met, 1 when it is not, 2 on bad input):\n"
        f"  python -m anonlib apply {RECIPE_FILE} YOUR_FILE --out {TABLE_FILE}\n"
        "Applied to the file it was made from, it writes this released table byte for byte.\n"
    )
    return PackageFiles(table, report_html.encode("utf-8"), recipe.dumps().encode("utf-8"), readme.encode("utf-8"))


def release_package(copy: WorkingCopy, *, columns: Sequence[str] | None = None, report_html: str | None = None) -> bytes:
    """The zip of ``package_files`` (deterministic bytes)."""
    files = package_files(copy, columns=columns, report_html=report_html)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in ((TABLE_FILE, files.table), (REPORT_FILE, files.report),
                           (RECIPE_FILE, files.recipe), (README_FILE, files.readme)):
            info = zipfile.ZipInfo(name, date_time=_TIMESTAMP)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    return buffer.getvalue()

