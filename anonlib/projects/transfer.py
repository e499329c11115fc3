"""A project as one file another machine can import (``projects export`` / ``projects import``).

The export is a zip with ``project.json`` (format ``anonlib-project``, version 1: the
name, the state, whether the file is kept), the file's bytes under ``file`` when the
project keeps them, and ``SHA256SUMS``. The pseudonym key travels only when asked
(``with_key``): without it the importing store gives the project a new key, so
pseudonyms made there differ from the ones made here. Releases and audit entries
stay in the store that made them (the audit log records what was released where;
``audit --json`` exports it).

Example:
    >>> import tempfile
    >>> from anonlib.core.samples import load_sample
    >>> from anonlib.workflow import ReleaseTarget, WorkingCopy
    >>> from anonlib.projects.state import ProjectState
    >>> from anonlib.projects.store import ProjectStore
    >>> here = ProjectStore(f"sqlite:///{tempfile.mkdtemp()}/projects.sqlite")
    >>> there = ProjectStore(f"sqlite:///{tempfile.mkdtemp()}/projects.sqlite")
    >>> copy = WorkingCopy.start(load_sample("caballero_table2b"), ReleaseTarget(k=3))
    >>> ref = here.create("clinic", ProjectState.of(copy, "sample:caballero_table2b"))
    >>> moved = import_project(there, export_project(here, "clinic"))
    >>> moved.name, there.load(moved).state == here.load(ref).state, there.key(moved) == here.key(ref)
    ('clinic', True, False)
"""

from __future__ import annotations

import io
import json
import zipfile
import zlib

from ..core.archives import read_member
from ..core.errors import ProjectError
from ..core.fields import json_value
from ..core.loading import DEFAULT_MAX_BYTES
from ..workflow.release import digest
from .records import ProjectRef
from .state import ProjectState
from .store import KEY_BYTES, ProjectStore

EXPORT_FORMAT = "anonlib-project"
EXPORT_VERSION = 1
PROJECT_FILE, DATA_FILE, SUMS_FILE = "project.json", "file", "SHA256SUMS"
# the most each member may unpack to, checked from the zip's directory before anything is read and
# again while reading: a kept file is at most what the loader reads, the project's JSON its steps
MEMBER_LIMITS = {PROJECT_FILE: 64 * 1024**2, DATA_FILE: DEFAULT_MAX_BYTES, SUMS_FILE: 4096}
MAX_EXPORT_BYTES = sum(MEMBER_LIMITS.values())
_TIMESTAMP = (2000, 1, 1, 0, 0, 0)


def export_project(
    store: ProjectStore, project: int | str | ProjectRef, *, with_key: bool = False, with_file: bool = True
) -> bytes:
    """The project as one zip (its file's bytes only when the project keeps them and ``with_file``;
    its key only ``with_key``). Imported without its file, the project keeps the file's SHA-256 only."""
    loaded = store.load(project)
    data = store.file(project) if loaded.summary.keep_file and with_file else None
    body = {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "name": loaded.summary.name,
        "created": loaded.summary.created,
        "keep_file": data is not None,
        "state": loaded.state.to_json(),
        **({"key": store.key(project).hex()} if with_key else {}),
    }
    members = [(PROJECT_FILE, json.dumps(body, indent=2, ensure_ascii=False).encode("utf-8"))]
    if data is not None:
        members.append((DATA_FILE, data))
    sums = "".join(f"{digest(b)}  {n}\n" for n, b in members).encode("ascii")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, payload in [*members, (SUMS_FILE, sums)]:
            info = zipfile.ZipInfo(name, date_time=_TIMESTAMP)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o600 << 16
            archive.writestr(info, payload)
    return buffer.getvalue()


def import_project(store: ProjectStore, exported: bytes, *, name: str | None = None) -> ProjectRef:
    """A project from ``export_project``'s zip, under its own name or ``name`` (a sentence when taken)."""
    members = _members(exported)
    if PROJECT_FILE not in members:
        raise ProjectError(f"This is not a project export: it has no {PROJECT_FILE}.")
    listed = {}
    for line in members.get(SUMS_FILE, b"").decode("ascii", "replace").splitlines():
        sha, _, member = line.partition("  ")
        listed[member] = sha
    for member, payload in members.items():
        if member != SUMS_FILE and listed.get(member) != digest(payload):
            raise ProjectError(f"The project export is damaged: {member} does not match its SHA-256.")
    body = json_value(members[PROJECT_FILE], f"The project export's {PROJECT_FILE}", ProjectError)
    if not isinstance(body, dict) or body.get("format") != EXPORT_FORMAT:
        raise ProjectError("This is not a project export of anonlib.")
    if body.get("version") != EXPORT_VERSION:
        raise ProjectError(
            f"This project export has version {body.get('version')!r}; this anonlib reads version {EXPORT_VERSION}."
        )
    state = ProjectState.from_json(body.get("state"))
    data = members.get(DATA_FILE)
    if data is not None and state.source.sha256 is not None and digest(data) != state.source.sha256:
        raise ProjectError("The project export's file is not the one its project read (its SHA-256 differs).")
    key = None
    if "key" in body:
        try:
            key = bytes.fromhex(str(body["key"]))
        except ValueError:
            key = b""
        if len(key) != KEY_BYTES:
            raise ProjectError("The project export's key is damaged (not 64 hexadecimal digits).")
    return store.create(
        name or str(body.get("name") or state.source.name),
        state,
        data,
        keep_file=data is not None,
        change="imported",
        exact_name=True,
        key=key,
    )


def _members(exported: bytes) -> dict[str, bytes]:
    """The members of an export, each checked against ``MEMBER_LIMITS`` from the zip's directory
    before it is read and while it is read (a member unpacking past its declared size stops the
    reading), so a zip bomb costs no memory; a damaged zip (a CRC or deflate error) is a sentence."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(exported))
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        raise ProjectError("This is not a project export (not a readable zip file).") from None
    with archive:
        infos = archive.infolist()
        for info in infos:
            limit = MEMBER_LIMITS.get(info.filename)
            if limit is None:
                raise ProjectError(
                    f"This is not a project export: it holds a member {info.filename[:80]!r} that anonlib never writes."
                )
            if info.file_size > limit:
                raise ProjectError(
                    f"This project export's member {info.filename} declares {info.file_size:,} bytes unpacked, "
                    f"more than the {limit:,} a project export holds; it was not unpacked."
                )
        if len({i.filename for i in infos}) != len(infos):
            raise ProjectError("This is not a project export: a member appears twice in it.")
        try:
            return {info.filename: _read_member(archive, info) for info in infos}
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, NotImplementedError, RuntimeError):
            raise ProjectError(
                "The project export is damaged (its contents fail their checksum or cannot be unpacked); "
                "export the project again."
            ) from None


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """One member's bytes, read in chunks and stopped as soon as they pass its declared size."""
    try:
        return read_member(archive, info)
    except zipfile.BadZipFile as err:
        if "past its declared size" not in str(err):
            raise
        raise ProjectError(
            f"This project export's member {info.filename} unpacks past its declared size "
            f"({info.file_size:,} bytes); it is damaged or forged and was not imported."
        ) from None
