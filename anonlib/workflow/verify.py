"""Re-checking a release package: is it what it states, and does it meet its target?

``verify_package(package, source=None)`` checks, part by part:

- the zip as a whole: every member is a part a release package holds (no member
  ``SHA256SUMS`` does not list, no stray file such as a raw source), each once (no second
  ``released.csv`` for a reader to open instead), under a plain name (no absolute or ``..``
  path), and every line of ``SHA256SUMS`` names a member the zip holds; members are inflated
  within their declared sizes and a memory budget (``anonlib.core.archives.read_member``: a
  member inflating past its declared size fails at once);
- each member against ``SHA256SUMS`` (``released.csv``, ``report.html``,
  ``recipe.json``, ``README.txt``);
- ``recipe.json`` against the digest of its own content, and ``released.csv``
  against the SHA-256 the recipe recorded;
- ``report.html`` and ``README.txt`` state the SHA-256 of this ``released.csv``
  and ``recipe.json`` (a report or recipe swapped in from another release is
  noticed even when ``SHA256SUMS`` was rewritten to match);
- ``target``: the recipe's release target recounted on ``released.csv`` as
  written (``ReleaseTarget.check`` with the recipe's roles), and its records;
- ``source`` (when the source file is given): its SHA-256 is the one recorded,
  and re-applying the recipe reproduces ``released.csv`` byte for byte, in memory or on an engine
  (``verify_package(..., engine=)``: the engines write a CSV as the in-memory release does); as a
  table only when the recipe records that an engine wrote it in its own order or form
  (``Recipe.written_by``, packages made before the engines wrote the in-memory bytes). A recipe with
  pseudonym or date-shift steps is re-applied under the project ``key`` it was made
  with (``verify_package(..., key=)``; the key is checked by its id, never shown);
  without it, or with another key, the source check fails saying so.

A private release's package (``anonlib.workflow.private_package``, its recipe of kind
"differentially private release") has no target and cannot be re-applied: its members'
digests are checked, and given a source it says that a private release is not re-derived
from its source (``verify_private``).

A failed check is a ``PartCheck`` naming its part; bad input (no such file,
not a zip, not a release package) is a ``PackageError`` sentence. The digests
show that nothing changed since the package was made; they are not a signature
(anyone who changes a file can recompute every digest), see docs/workflow.md.

Example:
    >>> import pandas as pd
    >>> from anonlib.core.dataset import Dataset
    >>> from anonlib.workflow import ReleaseTarget, WorkingCopy, release_package
    >>> ds = Dataset.from_frame("d.csv", pd.DataFrame({"age": [30, 30, 40, 40]}), {"age": "quasi-identifier"})
    >>> package = release_package(WorkingCopy.start(ds, ReleaseTarget(k=2)), created="2026-01-01T00:00:00Z")
    >>> result = verify_package(package)
    >>> result.passed, [c.part for c in result.checks if c.part in ("target", "source")]
    (True, ['target'])
"""

from __future__ import annotations

import io
import tempfile
import zipfile
import zlib
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.archives import read_member, unsafe_name
from ..core.dataset import Dataset, Role
from ..core.errors import AnonlibError, ColumnError, DataFileError, KeyFileError, PackageError, join_names
from ..core.histories import Earlier
from ..core.loading import DEFAULT_MAX_BYTES, load_table
from .kept import released_kept_risk
from .keys import key_id
from .package import AUDIT_FILE, MEMBERS, README_FILE, RECIPE_FILE, REPORT_FILE, SUMS_FILE, TABLE_FILE
from .private_package import PRIVATE_MEMBERS, SYNTHETIC_FILE, TABLES_FILE, private_recipe_of, verify_private
from .recipe import EDITED, INTACT, MAX_RECIPE_BYTES, Recipe, apply_recipe, suppression_mark
from .release import digest, file_digest, is_sha256

TARGET, SOURCE, KEPT = "target", "source", "kept columns"
MAX_PACKAGE_BYTES = 2 * DEFAULT_MAX_BYTES  # the released table is at most a loadable table; the rest is small


@dataclass(frozen=True)
class PartCheck:
    """One check of a package: the part it is about, whether it passed, and why."""

    part: str
    passed: bool
    sentence: str


@dataclass(frozen=True)
class Verification:
    """Every check of one package, in the order they ran."""

    checks: tuple[PartCheck, ...]

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def failed_parts(self) -> tuple[str, ...]:
        """The parts with a failed check, each once, in order."""
        return tuple(dict.fromkeys(c.part for c in self.checks if not c.passed))


def verify_package(
    package: bytes | str | Path,
    source: bytes | str | Path | None = None,
    *,
    source_name: str | None = None,
    key: bytes | None = None,
    earlier: Earlier | None = None,
    engine: str | None = None,
) -> Verification:
    """Check a release package (the zip's bytes or path) and, given the ``source`` file
    (bytes or path), that re-applying its recipe reproduces the released table (its
    pseudonym and date-shift steps replayed under ``key``, the project key; a suppression judged
    on histories across a project's earlier deliveries replayed with their records, ``earlier``).
    ``engine`` (duckdb, spark): the recipe re-applied to the source where it lies, the CSV the
    engine writes compared with the package's byte for byte (as a table for a recipe recording
    that an engine wrote it in its own order, ``Recipe.written_by``); the package itself,
    bounded in size, is always read in memory."""
    checks: list[PartCheck] = []

    def check(part: str, passed: bool, sentence: str) -> bool:
        checks.append(PartCheck(part, passed, sentence))
        return passed

    archive = _open(package)
    private = _private(archive)
    if private is not None:  # a differentially private release: digests only, nothing to re-apply
        if source is not None and not isinstance(source, (bytes, bytearray)) and not Path(source).is_file():
            raise PackageError(f"The source file '{Path(source).name}' does not exist or is not a file.")
        members = _members(archive, check, PRIVATE_MEMBERS)
        _check_layout(archive, PRIVATE_MEMBERS, members.get(SUMS_FILE), check, said=PRIVATE_MEMBERS)
        verify_private(members, private, source, check)
        return Verification(tuple(checks))
    members = _members(archive, check)
    if AUDIT_FILE in archive.namelist():  # a package released into a project: its audit entry, checked like the rest
        members.update(_members(archive, check, (AUDIT_FILE,)))
    _check_layout(archive, (*MEMBERS, AUDIT_FILE), members.get(SUMS_FILE), check)
    table, recipe_bytes = members.get(TABLE_FILE), members.get(RECIPE_FILE)
    _check_sums(members, check)
    recipe = _check_recipe(recipe_bytes, check) if recipe_bytes is not None else None
    if recipe is not None and table is not None:
        check(
            TABLE_FILE,
            digest(table) == recipe.released_sha256,
            "is the table the recipe recorded (same SHA-256)"
            if digest(table) == recipe.released_sha256
            else "differs from the table the recipe recorded (its SHA-256 is not the recipe's); it was changed after "
            "the release was made",
        )
    for part in (REPORT_FILE, README_FILE):
        if part in members:
            _check_statement(part, members[part], table, recipe_bytes, check)
    if recipe is not None and table is not None and not (source is not None and _person_withheld(recipe)):
        _check_target(recipe, table, check)  # else judged on the source's replay (_check_source)
    if recipe is not None and table is not None:
        _check_kept(recipe, table, check)
    if source is not None:
        if recipe is None:
            check(SOURCE, False, f"was not checked: {RECIPE_FILE} could not be read, so there is no recipe to re-apply")
        elif engine is not None:
            _check_source_on_engine(recipe, table, source, check, engine, key)
        elif not _check_source(recipe, table, source, source_name, check, key, earlier) and _person_withheld(recipe):
            check(
                TARGET,
                False,
                f"was not recounted in people: {TABLE_FILE} holds no person column, and the source's replay "
                "that would have been recounted could not be made or differs (see the source's line)",
            )
    return Verification(tuple(checks))


def _open(package: bytes | str | Path) -> zipfile.ZipFile:
    """The package as a zip; a sentence when it is not one."""
    if not isinstance(package, (bytes, bytearray)):
        path = Path(package)
        if not path.is_file():
            raise PackageError(f"The package '{path.name}' does not exist or is not a file.")
        if path.stat().st_size > MAX_PACKAGE_BYTES:
            raise PackageError(f"The package '{path.name}' is larger than any release package anonlib writes.")
        package = path.read_bytes()
    try:
        archive = zipfile.ZipFile(io.BytesIO(package))
    except (zipfile.BadZipFile, ValueError):
        raise PackageError(
            "This is not a zip file; give the release package (release.zip) the dashboard's "
            "Risk report page or `--package` wrote."
        ) from None
    if not set(archive.namelist()) & {TABLE_FILE, RECIPE_FILE}:
        raise PackageError(f"This zip holds neither {TABLE_FILE} nor {RECIPE_FILE}; it is not a release package.")
    return archive


def _private(archive: zipfile.ZipFile) -> dict | None:
    """The recipe of a private release's package (``anonlib.workflow.private_package``), else None."""
    if RECIPE_FILE not in archive.namelist() or archive.getinfo(RECIPE_FILE).file_size > MAX_RECIPE_BYTES:
        return None
    try:
        return private_recipe_of(read_member(archive, archive.getinfo(RECIPE_FILE)))
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, zlib.error):
        return None


def _members(archive: zipfile.ZipFile, check, expected: tuple[str, ...] = MEMBERS) -> dict[str, bytes]:
    """The package's members that could be read (a missing or damaged one is a failed check;
    a private package's members are checked by ``verify_private``, which names a missing one).
    Each is inflated within its declared size (``read_member``), and all of them within
    ``MAX_PACKAGE_BYTES``, the memory budget of a verification."""
    names = set(archive.namelist())
    members, budget = {}, MAX_PACKAGE_BYTES
    for name in expected:
        if name not in names:
            if expected is MEMBERS:
                check(name, False, "is missing from the package")
            continue
        info = archive.getinfo(name)
        limit = (
            MAX_PACKAGE_BYTES if name in (TABLE_FILE, REPORT_FILE, SYNTHETIC_FILE, TABLES_FILE) else MAX_RECIPE_BYTES
        )
        if info.file_size > min(limit, budget):
            check(name, False, "is larger than any file a release package holds")
            continue
        budget -= info.file_size
        try:
            members[name] = read_member(archive, info)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, zlib.error) as err:
            check(name, False, f"is damaged inside the zip ({err})")
    return members


def _shown(name: str) -> str:
    """A member's name as a check names it (at most 80 characters)."""
    return name if len(name) <= 80 else name[:77] + "..."


def _check_layout(
    archive: zipfile.ZipFile, parts: tuple[str, ...], sums: bytes | None, check, *, said: tuple[str, ...] = MEMBERS
) -> None:
    """The zip as a whole (see the module text): each member once, under a plain name, a part of
    a release package that ``SHA256SUMS`` lists (``sums``: its bytes, when it could be read), and
    each line of ``SHA256SUMS`` naming a member the zip holds (but the parts in ``said``, whose
    absence another check says)."""
    listed = _listed(sums) if sums is not None else {}
    names = [info.filename for info in archive.infolist()]
    for name, times in Counter(names).items():
        if times > 1:
            check(
                _shown(name),
                False,
                f"appears {times} times in the package; a release package holds each part once (a reader could "
                "open another copy than the one checked)",
            )
    for name in dict.fromkeys(names):
        if unsafe_name(name):
            check(
                _shown(name),
                False,
                "is stored under a path that leaves the package's folder (absolute, or with '..'); a release "
                "package holds plain file names only",
            )
        elif name not in parts:
            check(
                _shown(name),
                False,
                "is not a part of a release package"
                + ("" if name in listed else f" and {SUMS_FILE} does not list it")
                + "; it was added after the release was made",
            )
    for name in listed:
        if name not in names and name not in said:
            check(SUMS_FILE, False, f"lists {_shown(name)}, which the package does not hold")


def _listed(sums: bytes) -> dict[str, str]:
    """The members ``SHA256SUMS`` lists, with their SHA-256."""
    recorded: dict[str, str] = {}
    for line in sums.decode("utf-8", "replace").splitlines():
        value, _, name = line.partition("  ")
        if is_sha256(value) and name:
            recorded[name] = value
    return recorded


def _check_sums(members: dict[str, bytes], check) -> None:
    """Each member against its line of ``SHA256SUMS``."""
    if SUMS_FILE not in members:
        return
    recorded = _listed(members[SUMS_FILE])
    for name in (TABLE_FILE, REPORT_FILE, RECIPE_FILE, README_FILE, AUDIT_FILE):
        if name not in members:
            continue
        if name not in recorded:
            check(SUMS_FILE, False, f"does not list {name}; it was changed after the release was made")
        elif digest(members[name]) != recorded[name]:
            check(
                name, False, f"was changed after the release was made: its SHA-256 is not the one {SUMS_FILE} records"
            )
        else:
            check(name, True, f"matches its SHA-256 in {SUMS_FILE}")


def _check_recipe(data: bytes, check) -> Recipe | None:
    """The recipe, when it can be read; its own digest checked."""
    try:
        recipe = Recipe.loads(data)
    except AnonlibError as err:
        check(RECIPE_FILE, False, f"cannot be read: {err}")
        return None
    if recipe.integrity == INTACT:
        check(RECIPE_FILE, True, "matches the digest of its own content")
    elif recipe.integrity == EDITED:
        check(RECIPE_FILE, False, "was changed after it was written: its content no longer matches its digest")
    else:
        check(RECIPE_FILE, False, "carries no digest, so a change to it cannot be detected")
    return recipe


def _check_statement(part: str, data: bytes, table: bytes | None, recipe: bytes | None, check) -> None:
    """The README or report states the SHA-256 of this package's table and recipe."""
    text = data.decode("utf-8", "replace")
    absent = [
        name
        for name, member in ((TABLE_FILE, table), (RECIPE_FILE, recipe))
        if member is not None and digest(member) not in text
    ]
    if absent:
        check(
            part,
            False,
            f"does not state the SHA-256 of this package's {' and '.join(absent)}; it belongs to "
            "another release or was changed",
        )
    else:
        check(part, True, f"states the SHA-256 of this package's {TABLE_FILE} and {RECIPE_FILE}")


def recount(recipe: Recipe, table: bytes):
    """The recipe's target recounted on a released table's bytes as a reader gets them,
    with the recipe's roles and missing-value policy (a cell written * by a local
    suppression step matches any value, as when the release was made): the one measure
    of a release that ``verify`` and ``anonymize`` state.

    Raises ``DataFileError`` when the bytes are not a table, ``ColumnError`` when its
    columns are not the recipe's."""
    frame = _released_frame(recipe, table)
    roles = {c: Role(recipe.source.roles[c]) for c in recipe.columns}
    released = Dataset(name=TABLE_FILE, frame=frame, roles=roles, missing=recipe.source.missing).validated()
    target = recipe.target
    # the records the target judges: those a records-per-person cap left out by decision are not
    # among the suppressed ones, in any unit
    loaded = (recipe.loaded_records or recipe.source.records) - (recipe.capped_records or 0)
    if any(c not in recipe.columns for c in (target.person, target.household) if c is not None):
        # a person (household) column the release withholds cannot be counted on it: its records are
        # counted (``verify`` recounts people on the source's replay when it is given)
        target = replace(target, person=released.person, household=released.household, linked=())
    return target.check(
        released,
        loaded_records=loaded,
        wildcard=suppression_mark(s.step for s in recipe.steps),
        loaded_persons=recipe.loaded_persons if released.owners else None,
    )


def _released_frame(recipe: Recipe, table: bytes) -> pd.DataFrame:
    """``released.csv``'s bytes read as a reader gets them, under the recipe's column names. The bytes
    are in memory already (a package's member, read within its limit, or the table ``anonymize`` just
    made), so the loader's limit on a file's size does not apply: a release of 5·10^6 records made in
    memory from a 17 MB Parquet file is a 347 MB CSV, refused after its search (bench/NOTES.md)."""
    frame = load_table(
        table,
        name=TABLE_FILE,
        delimiter=",",
        encoding="utf-8",
        header=True,
        missing_markers=("",),
        allow_empty=True,
        max_bytes=max(DEFAULT_MAX_BYTES, len(table)),
    ).frame  # empty: every record suppressed
    if frame.shape[1] != len(recipe.columns):
        raise ColumnError(f"{TABLE_FILE} has {frame.shape[1]} columns; the recipe released {len(recipe.columns)}.")
    frame.columns = list(recipe.columns)  # a name starting with = + - @ was written with a leading apostrophe
    return frame


def _check_kept(recipe: Recipe, table: bytes, check) -> None:
    """The kept columns named, and said to be outside the target, with what they let an attacker do."""
    try:
        kept = released_kept_risk(recipe, _released_frame(recipe, table))
    except AnonlibError:  # the table's own check says what is wrong with it
        return
    if kept is not None:
        check(
            KEPT,
            True,
            f"({join_names(kept.kept)}) are released unchanged by decision and not counted by the target; with "
            f"them an attacker finds {kept.unique:,} of {kept.total:,} {kept.unit} unique"
            + (" on their history" if kept.unit == "people" else ""),
        )


def _check_target(recipe: Recipe, table: bytes, check) -> None:
    """The recipe's target recounted on ``released.csv`` (``recount``)."""
    try:
        result = recount(recipe, table)
    except DataFileError as err:
        check(TABLE_FILE, False, f"cannot be read as a table: {err}")
        return
    except ColumnError as err:
        if str(err).startswith(f"{TABLE_FILE} has "):  # not the recipe's columns
            check(TABLE_FILE, False, str(err)[len(TABLE_FILE) + 1 :].rstrip("."))
        else:
            check(TARGET, False, f"could not be recounted on {TABLE_FILE}: {err}")
        return
    except AnonlibError as err:
        check(TARGET, False, f"could not be recounted on {TABLE_FILE}: {err}")
        return
    if result.records != recipe.released_records:
        check(
            TARGET,
            False,
            f"{TABLE_FILE} holds {result.records:,} records; the recipe recorded {recipe.released_records:,}",
        )
    check(TARGET, result.met, f"recounted on {TABLE_FILE} as written: {result.sentence()}")


def _check_source(
    recipe: Recipe,
    table: bytes | None,
    source,
    source_name: str | None,
    check,
    key: bytes | None = None,
    earlier: Earlier | None = None,
) -> bool:
    """The source is the file recorded, and re-applying the recipe (its keyed steps under
    ``key``) to it reproduces the table; True when the replay reproduced it and the target was
    recounted in people on it (a target whose person column the table withholds)."""
    if not isinstance(source, (bytes, bytearray)) and not Path(source).is_file():
        raise PackageError(f"The source file '{Path(source).name}' does not exist or is not a file.")
    recorded = recipe.source.sha256
    if recorded and file_digest(source) != recorded:
        check(SOURCE, False, "is not the file the release was made from: its SHA-256 differs from the one recorded")
    if recipe.key_ids and key is None:
        check(
            SOURCE,
            False,
            f"was not re-applied: the recipe's pseudonym or date-shift steps need the project key they were made "
            f"with (key id {', '.join(recipe.key_ids)}); give it with --key-file FILE or --project NAME",
        )
        return False
    if key is not None and recipe.key_ids and key_id(key) not in recipe.key_ids:
        check(
            SOURCE,
            False,
            f"was not re-applied: the recipe's pseudonym or date-shift steps were made with the key "
            f"{', '.join(recipe.key_ids)}, but the key given is {key_id(key)} (another key gives other pseudonyms "
            "and dates); give the key the release was made with",
        )
        return False
    try:
        keyed = recipe.with_key(key).with_earlier(earlier)
    except KeyFileError as err:  # steps made with two keys: one of them is not this one
        check(SOURCE, False, f"was not re-applied: {err}")
        return False
    try:
        replay = apply_recipe(keyed, source, name=source_name)
    except AnonlibError as err:
        check(SOURCE, False, f"does not fit the recipe: {err}")
        return False
    if table is None:
        check(SOURCE, False, f"could not be compared: {TABLE_FILE} is missing or damaged")
    elif replay.csv == table or (recipe.written_by and _same_rows(recipe, replay.csv, table)):
        check(
            SOURCE,
            True,
            f"gives {TABLE_FILE} byte for byte when the recipe is re-applied to it"
            if replay.csv == table
            else f"gives the rows of {TABLE_FILE} (as a table: {recipe.written_by} wrote them in its own order) when "
            "the recipe is re-applied to it",
        )
        if _person_withheld(recipe):  # counted in people: on the replay, which is released.csv with its people
            check(
                TARGET,
                replay.check.met,
                f"recounted in people on the source's replay ({TABLE_FILE} byte for byte, without the person "
                f"column it does not release): {replay.check.sentence()}",
            )
            return True
    elif recipe.written_by:
        check(
            SOURCE,
            False,
            f"gives other rows than {TABLE_FILE} (compared as a table: {recipe.written_by} wrote it) when the recipe "
            "is re-applied to it",
        )
    else:
        at = first_difference(replay.csv, table)
        check(
            SOURCE,
            False,
            f"gives a different {TABLE_FILE} when the recipe is re-applied to it (first difference at byte {at:,})",
        )
    return False


def _same_rows(recipe: Recipe, replayed: bytes, table: bytes) -> bool:
    """Whether two released tables' bytes hold the same rows (read as a reader gets them, in any order)."""
    try:
        a, b = _released_frame(recipe, replayed), _released_frame(recipe, table)
    except AnonlibError:
        return False
    return list(a.columns) == list(b.columns) and _sorted(a).equals(_sorted(b))


def _check_source_on_engine(
    recipe: Recipe, table: bytes | None, source, check, engine: str, key: bytes | None = None
) -> None:
    """The source is the file recorded, and the recipe re-applied to it on ``engine`` (its person
    pseudonyms under ``key``) gives the package's table byte for byte (the engine writes a CSV as
    the in-memory release does); its rows, as a table, when the recipe records that an engine wrote
    it in its own order (``Recipe.written_by``)."""
    from .engine_replay import apply_recipe as on_engine  # noqa: PLC0415 - the engine only when asked

    if isinstance(source, (bytes, bytearray)) or not Path(source).exists():
        raise PackageError("With --engine, give the source as a file or folder the engine reads in place.")
    recorded = recipe.source.sha256
    if recorded and Path(source).is_file() and file_digest(source) != recorded:
        check(SOURCE, False, "is not the file the release was made from: its SHA-256 differs from the one recorded")
    if any(getattr(s.step, "earlier_deliveries", 0) for s in recipe.steps):
        check(
            SOURCE,
            False,
            f"was not re-applied on {engine}: the recipe's earlier deliveries need the table in memory; verify "
            "without --engine",
        )
        return
    if recipe.key_ids:  # the person's pseudonyms replay on the engine under the key they were made with
        if key is None or key_id(key) not in recipe.key_ids:
            check(
                SOURCE,
                False,
                f"was not re-applied: the recipe's pseudonym or date-shift steps need the project key they were made "
                f"with (key id {', '.join(recipe.key_ids)})"
                + ("" if key is None else f", but the key given is {key_id(key)}")
                + "; give it with --key-file FILE or --project NAME",
            )
            return
        try:
            recipe = recipe.with_key(key)
        except KeyFileError as err:
            check(SOURCE, False, f"was not re-applied: {err}")
            return
    if table is None:
        check(SOURCE, False, f"could not be compared: {TABLE_FILE} is missing or damaged")
        return
    with tempfile.TemporaryDirectory(prefix="anonlib-verify-") as folder:  # the replay, deleted after
        written = Path(folder) / TABLE_FILE
        try:
            on_engine(recipe, source, out=written, engine=engine)
        except AnonlibError as err:
            check(SOURCE, False, f"does not fit the recipe: {err}")
            return
        replayed_bytes = written.read_bytes()
    if replayed_bytes == table:
        check(SOURCE, True, f"gives {TABLE_FILE} byte for byte when the recipe is re-applied to it on {engine}")
        return
    if not recipe.written_by:  # the recipe records the in-memory release's bytes, which the engine writes
        at = first_difference(replayed_bytes, table)
        check(
            SOURCE,
            False,
            f"gives a different {TABLE_FILE} when the recipe is re-applied to it on {engine} (first difference at "
            f"byte {at:,})",
        )
        return
    try:
        replayed = _released_frame(recipe, replayed_bytes)
        expected = _released_frame(recipe, table)
    except AnonlibError as err:  # a table of other columns than the recipe's
        check(SOURCE, False, f"could not be compared on {engine}: {err}")
        return
    same = list(replayed.columns) == list(expected.columns) and _sorted(replayed).equals(_sorted(expected))
    check(
        SOURCE,
        same,
        f"gives the rows of {TABLE_FILE} (as a table: {recipe.written_by} wrote them in its own order) when the "
        f"recipe is re-applied to it on {engine}"
        if same
        else f"gives other rows than {TABLE_FILE} when the recipe is re-applied to it on {engine} "
        f"({len(replayed):,} rows against {len(expected):,})",
    )


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values(list(frame.columns), kind="stable").reset_index(drop=True)


def _person_withheld(recipe: Recipe) -> bool:
    """Whether the recipe's target counts people by a column its released table does not hold
    (``released.csv`` alone can then not be recounted in people)."""
    person = next((c for c, role in recipe.source.roles.items() if role == "person"), None)
    return person is not None and person not in recipe.columns


def first_difference(a: bytes, b: bytes) -> int:
    """Offset of the first byte where ``a`` and ``b`` differ (the shorter length when one
    starts the other).

    >>> first_difference(b"abcd", b"abxd"), first_difference(b"ab", b"abc")
    (2, 2)
    """
    n = min(len(a), len(b))
    differ = np.flatnonzero(np.frombuffer(a, np.uint8, n) != np.frombuffer(b, np.uint8, n))
    return int(differ[0]) if differ.size else n
