"""Next month's file, released the way the project released this one.

``layout_differences(source, frame)`` compares a delivery with the project's layout
(its columns and their types) and says each difference in one sentence: a column
the delivery lacks that the release needs (``Source.needed``: one it analyses, releases or
a step uses) or a type its values do not convert to stops the release; a missing column
the release never uses (ignored, or an identifier no step pseudonymises), a column the
project does not know (ignored, never released) and a column in another place (read by
name) are said and do not stop it. ``deliver`` reads the delivery the way the
project's file was read, re-applies the project's steps with ``apply``'s semantics
(a suppression step is planned again on the delivery's own records), and checks the
target: the ``Delivery`` holds the working copy of the delivery, from which the
Release view and the release package are made (``package``), recorded in the audit
log when it is written (``anonlib.projects.audit``). ``continue_from_release`` opens
a recipe or a release package on its file, to continue from it as a new project.

Example:
    >>> import pandas as pd
    >>> from anonlib.core.dataset import Dataset
    >>> from anonlib.workflow.recipe import Source
    >>> frame = pd.DataFrame({"age": [30, 41], "sex": ["F", "M"], "income": [1.5, 2.0]})
    >>> source = Source.of(Dataset.from_frame("m1.csv", frame, {"income": "ignore"}))
    >>> for d in layout_differences(source, pd.DataFrame({"age": ["30", "n/a"], "zip": [1, 2]})):
    ...     print(d.blocking, d.sentence)
    True The delivery lacks the column 'sex' (a quasi-identifier in the project).
    False The delivery lacks income, which the release never uses nor releases (ignored or an identifier); it is released without it.
    True The column 'age' is integer in the project, but the delivery's values are not: Column 'age' cannot be made numeric: 'n/a' is not a number (1 such values).
    False The delivery has a column 'zip' the project does not know; it is ignored and never released.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

from ..core.archives import read_member
from ..core.dataset import column_kind, convert_column
from ..core.errors import AnonlibError, ColumnError, RecipeError
from ..core.loading import load_table
from ..measures.target import TargetCheck
from ..workflow.health_steps import PseudonymizeStep
from ..workflow.history import WorkingCopy
from ..workflow.package import RECIPE_FILE, release_package
from ..workflow.recipe import MAX_RECIPE_BYTES, Reading, Recipe, Source, absent_note, read_for_recipe
from ..workflow.release import digest, pseudonymized_columns
from ..workflow.steps import Step
from .audit import DASHBOARD, record_package, record_stamped_package
from .linked import LinkedDeliveries, linked_deliveries
from .records import AuditEntry, ProjectRef
from .store import ProjectStore


@dataclass(frozen=True)
class Difference:
    """One difference between a delivery and the project's layout; ``blocking`` when it stops the release."""

    sentence: str
    blocking: bool


def layout_differences(source: Source, frame: pd.DataFrame, steps: Iterable[Step] = ()) -> list[Difference]:
    """Each difference between ``frame`` (a delivery as read) and the project's columns and types
    (``steps``: the project's, whose columns the delivery needs too)."""
    out: list[Difference] = []
    known = [c.name for c in source.columns]
    present = [str(c) for c in frame.columns]
    needed = set(source.needed(steps))
    for column in source.columns:
        if column.name not in present and column.name in needed:
            out.append(
                Difference(f"The delivery lacks the column '{column.name}' (a {column.role} in the project).", True)
            )
    unused = [c.name for c in source.columns if c.name not in present and c.name not in needed]
    if unused:
        out.append(Difference(absent_note(unused), False))
    for column in source.columns:
        if column.name in present and column_kind(frame[column.name]) != column.type:
            try:
                convert_column(frame, column.name, column.type)
            except AnonlibError as err:
                out.append(
                    Difference(
                        f"The column '{column.name}' is {column.type} in the project, but the delivery's values are "
                        f"not: {err}",
                        True,
                    )
                )
    for name in present:
        if name not in known:
            out.append(
                Difference(
                    f"The delivery has a column '{name}' the project does not know; it is ignored and never released.",
                    False,
                )
            )
    shared = [c for c in present if c in known]
    if shared != [c for c in known if c in present]:
        out.append(Difference("The delivery's columns are in another order; they are matched by name.", False))
    return out


@dataclass(frozen=True, eq=False)
class Delivery:
    """A delivery read and released the project's way: the differences from the project's
    layout, and (when none stops it) the delivery's working copy with the project's steps;
    ``problem`` says why there is none."""

    project: ProjectRef
    name: str
    data: bytes
    differences: tuple[Difference, ...]
    copy: WorkingCopy | None
    problem: str | None = None
    links: LinkedDeliveries | None = None  # the project's earlier deliveries its records link to (pseudonyms)

    @property
    def check(self) -> TargetCheck | None:
        return None if self.copy is None else self.copy.check

    def package(self, *, created: str | None = None) -> bytes:
        """The release package of the delivery (``anonlib.workflow.release_package``)."""
        if self.copy is None:
            raise ColumnError(self.problem or "This delivery cannot be released.")
        return release_package(self.copy, created=created)

    def record(self, store: ProjectStore, package: bytes, *, made_by: str = DASHBOARD) -> AuditEntry:
        """Record the package in the project's audit log (the delivery's file kept with it when the project keeps files)."""
        return record_package(store, self.project, package, source=self.data, made_by=made_by, seen=self._seen)

    def record_stamped(self, store: ProjectStore, package: bytes, *, made_by: str = DASHBOARD) -> bytes:
        """``record``, the package stamped with its entry (``audit.json``): the package to hand out."""
        return record_stamped_package(store, self.project, package, source=self.data, made_by=made_by, seen=self._seen)[
            1
        ]

    @property
    def _seen(self):
        """The project as the cumulative check read it: recorded only if no delivery came meanwhile."""
        return self.links.seen if self.links is not None and self.links.earlier is not None else None


def deliver(store: ProjectStore, project: int | str | ProjectRef, data: bytes, name: str) -> Delivery:
    """Read ``data`` (the delivery's bytes, file name ``name``) as the project's file was read,
    check its layout, re-apply the project's steps and check the target."""
    loaded = store.load(project)
    state = loaded.state
    reading = state.source.reading
    table = load_table(
        bytes(data), name=name, delimiter=reading.delimiter, encoding=reading.encoding, header=reading.header
    )
    steps = [s.step for s in state.steps]
    differences = tuple(layout_differences(state.source, table.frame, steps))
    ref = loaded.ref
    blocking = [d.sentence for d in differences if d.blocking]
    if blocking:
        return Delivery(ref, name, bytes(data), differences, None, " ".join(blocking))
    links = None
    try:
        dataset = state.source.dataset(table.frame, name=name, needed=state.source.needed(steps))
        keyed = state.keyed_steps(store.key(ref))
        # pseudonyms under the project's key link this delivery to the earlier ones: judged on the
        # cumulative history, its suppression planned with their records (as `apply --project`)
        links = _linked(store, ref.name, state.target, dataset, [s.step for s in keyed])
        earlier = links.earlier if links is not None else None
        target = state.target.after(earlier) if earlier is not None else state.target
        copy = WorkingCopy.start(dataset, target, reading=Reading.of(table, bytes(data)))
        for i, s in enumerate(keyed, start=1):
            step = s.step.with_earlier(earlier) if earlier is not None and hasattr(s.step, "with_earlier") else s.step
            try:
                copy = copy.apply(step, s.page)
            except AnonlibError as err:
                raise ColumnError(f"Step {i} ({s.step.describe()}) does not fit this delivery: {err}") from None
    except AnonlibError as err:
        return Delivery(ref, name, bytes(data), differences, None, str(err), links)
    return Delivery(ref, name, bytes(data), differences, copy, links=links)


def _linked(store: ProjectStore, project: str, target, dataset, steps) -> LinkedDeliveries | None:
    """The project's earlier deliveries a delivery released with ``steps`` links to: its person
    (household) column pseudonymised under the project's key (None when nothing links)."""
    release = target.in_unit_of(dataset, released=pseudonymized_columns(steps))
    owned = [s for s in steps if isinstance(s, PseudonymizeStep) and s.column in release.linked]
    if not release.linkable or not owned:
        return None
    return linked_deliveries(
        store,
        project,
        release,
        {s.column: s.key_id for s in owned},
        lengths={s.column: s.length for s in owned},
    )


def recipe_of_release(data: bytes) -> Recipe:
    """The recipe of a release package (a zip) or of a recipe file (JSON); a sentence when it is neither."""
    if bytes(data[:4]) == b"PK\x03\x04":
        try:
            with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
                if RECIPE_FILE not in archive.namelist():
                    raise RecipeError(f"This zip is not a release package: it has no {RECIPE_FILE}.")
                info = archive.getinfo(RECIPE_FILE)
                if info.file_size > MAX_RECIPE_BYTES:
                    raise RecipeError(f"This release package's {RECIPE_FILE} is larger than any recipe anonlib writes.")
                return Recipe.loads(read_member(archive, info))
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, zlib.error):
            raise RecipeError("This release package is not a readable zip file.") from None
    return Recipe.loads(bytes(data))


def continue_from_release(release: bytes, source: bytes, name: str, *, key: bytes | None = None) -> WorkingCopy:
    """The working copy a recipe or a release package describes, re-applied to its file
    (``source``, named ``name``; ``key``: the key its pseudonyms and date shifts were made
    with): refused in one sentence when the file is not the one the recipe was made from
    (another SHA-256 or another table), the recipe was edited, or its key is missing or another."""
    recipe = recipe_of_release(release)
    recipe.require_intact()
    if recipe.key_ids:
        if key is None:
            raise RecipeError(
                f"This release's pseudonyms or date shifts were made with the project key {recipe.key_ids[0]}; "
                "give its key file too."
            )
        recipe = recipe.with_key(key)
    recorded = recipe.source.sha256
    if recorded is not None and digest(bytes(source)) != recorded:
        raise RecipeError(
            f"This file is not {recipe.source.name}, the file the release was made from (its SHA-256 differs); "
            "give that file, or release this one as a new delivery of a project."
        )
    dataset, reading = read_for_recipe(recipe, bytes(source), name=name)
    if dataset.fingerprint != recipe.source.fingerprint:
        raise RecipeError(
            f"This file's table is not the one the release was made from ({recipe.source.name}); give that file."
        )
    return WorkingCopy.from_recipe(recipe, dataset, reading)
