"""``--package`` and ``--project`` with ``--engine duckdb|spark`` (``anonymize`` and ``apply``).

The engine searches (``anonymize``) and writes the released table as one CSV file; that
file's bytes are the package's ``released.csv`` and what the project's audit log records
(their SHA-256 measured on the bytes as written). They are the in-memory release's bytes
(``anonlib.engine.writer``: the same records in the source's order, the same text), so
the package's recipe is the in-memory recipe and ``verify`` compares a replay with the
table byte for byte. The package's report, README and recipe come from the one in-memory
package builder (``anonlib.workflow.package.release_package`` with ``written=``), on the
working copy the recipe makes of the source read once in memory (a package is read whole
by ``verify``, so what it holds fits in memory). Should the engine's bytes ever differ
from the in-memory writer's, the recipe records the engine (``Recipe.written_by``), the
package says so, and ``verify`` compares as a table (``written_recipe``).

What stays refused, in one sentence, before anything is read or written: a Parquet
``--out`` with either option (the package and the audit log hold the table as CSV), and on
Spark a delivery into a project with earlier deliveries of the same people (``refuse_earlier``).
On DuckDB such a delivery is judged with their histories as in memory: the earlier releases
come as per-person signatures (``compact``), the new delivery's records stay in the engine and
only its rows per person and distinct row come back, as for any count in people.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..core.errors import ParameterError, ProjectError
from ..core.masking import printable
from ..core.samples import SAMPLES
from ..workflow.engine_replay import PARQUET
from ..workflow.history import WorkingCopy
from ..workflow.recipe import Recipe, read_for_recipe
from ..workflow.unseen import check_unseen, cover_recipe


def packaged(args: argparse.Namespace) -> bool:
    """Whether the command asks for a package or a project's release (``--package``, ``--project``).

    >>> packaged(argparse.Namespace(package=None, project="clinic")), packaged(argparse.Namespace(package=None))
    (True, False)
    """
    return bool(getattr(args, "package", None) or getattr(args, "project", None))


def refuse_unpackaged(args: argparse.Namespace) -> None:
    """What ``--package``/``--project`` cannot do on an engine, refused in one sentence before anything is read."""
    if not packaged(args):
        return
    option = "--package" if args.package else "--project"
    if args.out and Path(args.out).name.lower().endswith(PARQUET):
        raise ParameterError(f"{option} records the released table as CSV; give --out a .csv name, or leave out --out.")


def refuse_earlier(links, project: str, engine: str = "duckdb") -> None:
    """A delivery into a project whose earlier deliveries hold the same people, refused on Spark
    before the engine reads (the calls are the engine's own, but no test covers them on Spark
    yet); DuckDB judges it with their histories (``compact``), as in memory."""
    if links is not None and links.earlier is not None and engine != "duckdb":
        raise ProjectError(
            f"The project '{printable(project)}' has earlier deliveries of the same people, and judging this "
            "delivery with their histories runs on DuckDB or in memory; use --engine duckdb, or leave out --engine."
        )


def compact(earlier):
    """The project's earlier deliveries as per-person signatures (``Earlier.signatures``: one row
    per person and released class, with its records), what the engine's per-person rows of the new
    delivery are judged with; None stays None."""
    return earlier.signatures() if earlier is not None else None


@contextmanager
def written_csv() -> Iterator[Path]:
    """A private path for the engine to write the released CSV to (removed after)."""
    with tempfile.TemporaryDirectory(prefix="anonlib-release-") as folder:
        yield Path(folder) / "released.csv"


def in_memory_copy(recipe: Recipe, args: argparse.Namespace) -> WorkingCopy:
    """The working copy ``recipe`` makes of the command's file (or sample), read in memory
    as the recipe's file was read: what the package's report and the project's state describe."""
    path = SAMPLES[args.sample].path if getattr(args, "sample", None) else args.file
    dataset, reading = read_for_recipe(recipe, path)
    # a later delivery's values the recipe's hierarchies did not list, placed as the engine placed
    # them (and as ``apply`` in memory places them) before its steps run here
    recipe, _ = cover_recipe(recipe, dataset, unseen=check_unseen(getattr(args, "unseen", None)))
    return WorkingCopy.from_recipe(recipe, dataset, reading)


def source_bytes(args: argparse.Namespace) -> bytes | None:
    """The file the release was made from, as the project keeps it (None for a bundled sample)."""
    return Path(args.file).read_bytes() if getattr(args, "file", None) else None


def deliver(
    args: argparse.Namespace,
    copy: WorkingCopy,
    columns,
    table: bytes,
    engine: str,
    *,
    notes=(),
    links=None,
    recipe_path: str | None = None,
) -> Recipe:
    """The package (``--package``) of ``copy`` with ``table`` (the engine's bytes) as its
    released table, and ``--out``, ``--recipe`` and the package written, or recorded with the
    project's audit entry as one unit (``--project``: ``write_or_record``).
    Returns the recipe written (the package's)."""
    from ..workflow.package import release_package, written_recipe
    from .projects import write_or_record

    recipe = written_recipe(copy, columns, table, engine)
    package = release_package(copy, columns=columns, notes=notes, written=(engine, table)) if args.package else None
    outputs = [(args.out, table), (recipe_path, recipe.dumps().encode("utf-8"))]
    outputs = [(path, data) for path, data in outputs if path]
    source = source_bytes(args) if args.project else None
    write_or_record(args, copy, recipe, table=table, package=package, outputs=outputs, source=source, links=links)
    return recipe
