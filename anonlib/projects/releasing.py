"""A release into a project as one unit: its files (released table, recipe, package) and its
audit entry appear together or not at all.

``release_into_project`` checks what it can before writing anything (the project's name,
the store open for writing, the audit log passing its check), records a pending release
in the store (``anonlib.projects.pending``), writes every file under a temporary name
beside its target, records the audit entry (creating the project in the same
transaction when there is none of that name, or joining the one another process just
created) and, once the entry is committed, renames the files into place. A failure before
the commit removes the temporary files and records nothing; the store deleted or replaced
meanwhile is a failure too (its entry would be lost with it). A process killed before the
commit leaves temporary files the next opening of the store removes; killed after it,
the next opening renames them into place (``pending.recover``). At most the release in
flight is lost, never one the log records.

``reached(step)`` marks each step (``STEPS``): it does nothing; the fault-injection tests
replace it to fail or kill the release there.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> from anonlib.core.samples import load_sample
    >>> from anonlib.workflow import ReleaseTarget, WorkingCopy, release_csv
    >>> folder = Path(tempfile.mkdtemp())
    >>> store = ProjectStore(f"sqlite:///{folder}/projects.sqlite")
    >>> copy = WorkingCopy.start(load_sample("caballero_table2b"), ReleaseTarget(k=2))
    >>> recipe = copy.recipe()
    >>> table = release_csv(copy.release(recipe.columns))
    >>> done = release_into_project(
    ...     store, "clinic", ProjectState.of(copy, "sample:caballero_table2b"), recipe, table,
    ...     outputs=[(str(folder / "released.csv"), table)],
    ... )
    >>> done.entry.id, done.created, (folder / "released.csv").read_bytes() == table
    (1, True, True)
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Connection

from ..core.errors import DataFileError, ProjectError, StoreError
from ..workflow.recipe import Recipe
from ..workflow.release import digest
from .audit import COMMAND_LINE, Recording, package_parts, record_entry
from .chain import verify_chain
from .pending import clear, mark, new_token, put_in_place, remove, target_of, temporary_name, write_temporary
from .records import AuditEntry
from .state import ProjectState
from .store import ProjectStore, valid_name

STEPS = (
    "before the table",
    "after the table",
    "before the commit",
    "after the commit",
    "before the rename",
    "after the first rename",
)
WAIT_SECONDS = 60.0  # how long a release waits for other releases recording at the same time (SQLite)


def reached(step: str) -> None:
    """The release reached ``step`` (one of ``STEPS``); a test replaces this to fail or kill it there."""


@dataclass(frozen=True)
class Released:
    """A release recorded and in place: its audit entry, whether it created the project, and
    the files written."""

    entry: AuditEntry
    created: bool
    files: tuple[str, ...]


def release_into_project(
    store: ProjectStore,
    name: str,
    state: ProjectState,
    recipe: Recipe,
    table: bytes,
    *,
    outputs: Sequence[tuple[str, bytes]] = (),
    package: bytes | None = None,
    package_path: str | None = None,
    source: bytes | None = None,
    key: bytes | None = None,
    project_id: int | None = None,
    made_by: str = COMMAND_LINE,
    user: str | None = None,
    seen: tuple[int | None, tuple[int, ...]] | None = None,
) -> Released:
    """Write ``outputs`` (pairs of path and bytes; the package, when given, is written to
    ``package_path`` stamped with its entry) and record the release in the project ``name``
    as one unit (see the module text). ``state``, ``source`` and ``key`` make the project
    when there is none of that name: its working copy, the file kept and its pseudonym key
    (the key the release's pseudonyms were made with: a project of that name created meanwhile
    with another key refuses the release). ``project_id``: the number of the project of that
    name when the release started; the release is refused if it was deleted or renamed since.
    The audit entry records the package when there is one, else the table. ``seen``: the
    project as the release's cumulative check read it (``LinkedDeliveries.seen``); another
    delivery recorded since refuses it with ``DeliveredMeanwhileError``, nothing written."""
    chosen = valid_name(name)
    problems = verify_chain(store)
    if problems:
        raise ProjectError(f"{problems[0][:-1]}; no release is recorded while the log fails its check.")
    files = [(str(path), target_of(path), data) for path, data in outputs]
    if package is not None and package_path is not None:
        files.append((str(package_path), target_of(package_path), None))
    plan = [(shown, temporary_name(target), target, data) for shown, target, data in files]
    token = new_token()
    with store._transaction(WAIT_SECONDS) as c:
        mark(c, token, [(str(temporary), str(target)) for _, temporary, target, _ in plan])
    created: list[bool] = []

    def create(c: Connection) -> None:
        store._insert_project(
            c,
            chosen,
            state,
            source,
            keep_file=source is not None,
            change="created by the command line",
            exact_name=True,
            key=key,
        )
        created.append(True)

    def before_commit(recorded: bytes | None) -> None:
        for shown, temporary, target, data in plan:
            if data is None:
                _write(shown, temporary, target, recorded or b"")
        reached("before the commit")

    try:
        reached("before the table")
        for shown, temporary, target, data in plan:
            if data is not None:
                _write(shown, temporary, target, data)
        reached("after the table")
        how = Recording(
            stamp=True,
            create=create,
            before_commit=before_commit,
            marker=token,
            wait=WAIT_SECONDS,
            project_id=project_id,
            key=key,
            seen=seen,
        )
        if package is not None:
            parts, packaged_table, packaged_recipe = package_parts(package)
            entry = record_entry(
                store, chosen, packaged_recipe, packaged_table, package, parts, source, made_by, user, how
            )
        else:
            parts = {"released.csv": digest(table)}
            entry = record_entry(store, chosen, recipe, table, None, parts, source, made_by, user, how)
    except BaseException:
        _undo(store, token, plan)
        raise
    try:
        reached("after the commit")
        store.require_present()
    except StoreError:
        _undo(store, token, plan)  # the entry went with the store: the files go too
        raise
    except BaseException:
        _finish(store, token, plan)
        raise
    try:
        reached("before the rename")
        for i, (_, temporary, target, _) in enumerate(plan):
            put_in_place(temporary, target)
            if i == 0:
                reached("after the first rename")
    except OSError as err:
        raise DataFileError(
            f"The release is recorded as audit entry {entry.id}, but its files could not be put in place "
            f"({err.strerror or err}); the next command that opens the project store completes it."
        ) from None
    except BaseException:
        _finish(store, token, plan)
        raise
    _forget(store, token)
    return Released(entry, bool(created), tuple(shown for shown, *_ in plan))


def _write(shown: str, temporary: Path, target: Path, data: bytes) -> None:
    try:
        write_temporary(temporary, target, data)
    except OSError as err:
        raise DataFileError(
            f"Could not write '{shown}': {err.strerror or err}; nothing was released and any earlier file there "
            "is unchanged."
        ) from None


def _forget(store: ProjectStore, token: str) -> None:
    """Remove the pending marker (a store that fails now is left to the next opening: the
    release is whole either way)."""
    try:
        with store._transaction(WAIT_SECONDS) as c:
            clear(c, token)
    except StoreError:
        pass


def _undo(store: ProjectStore, token: str, plan) -> None:
    """Before the commit (or with the store gone): remove the temporary files and the marker."""
    for _, temporary, _, _ in plan:
        remove(temporary)
    _forget(store, token)


def _finish(store: ProjectStore, token: str, plan) -> None:
    """After the commit, interrupted: put the files in place now when possible (else the next
    opening of the store does)."""
    try:
        for _, temporary, target, _ in plan:
            if os.path.exists(temporary):
                put_in_place(temporary, target)
    except OSError:
        return
    _forget(store, token)
