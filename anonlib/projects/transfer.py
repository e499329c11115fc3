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

from ..core.errors import ProjectError
from ..workflow.release import digest
from .records import ProjectRef
from .state import ProjectState
from .store import KEY_BYTES, ProjectStore

EXPORT_FORMAT = "anonlib-project"
EXPORT_VERSION = 1
PROJECT_FILE, DATA_FILE, SUMS_FILE = "project.json", "file", "SHA256SUMS"
MAX_EXPORT_BYTES = 2 * 1024**3
_TIMESTAMP = (2000, 1, 1, 0, 0, 0)


def export_project(store: ProjectStore, project: int | str | ProjectRef, *, with_key: bool = False) -> bytes:
    """The project as one zip (its file's bytes only when the project keeps them)."""
    loaded = store.load(project)
    data = store.file(project) if loaded.summary.keep_file else None
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
    try:
        with zipfile.ZipFile(io.BytesIO(exported)) as archive:
            if sum(i.file_size for i in archive.infolist()) > MAX_EXPORT_BYTES:
                raise ProjectError("This project export is larger than 2 GB unpacked; it is not one anonlib wrote.")
            members = {n: archive.read(n) for n in archive.namelist()}
    except (zipfile.BadZipFile, OSError, ValueError):
        raise ProjectError("This is not a project export (not a readable zip file).") from None
    if PROJECT_FILE not in members:
        raise ProjectError(f"This is not a project export: it has no {PROJECT_FILE}.")
    listed = {}
    for line in members.get(SUMS_FILE, b"").decode("ascii", "replace").splitlines():
        sha, _, member = line.partition("  ")
        listed[member] = sha
    for member, payload in members.items():
        if member != SUMS_FILE and listed.get(member) != digest(payload):
            raise ProjectError(f"The project export is damaged: {member} does not match its SHA-256.")
    try:
        body = json.loads(members[PROJECT_FILE].decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise ProjectError(f"The project export's {PROJECT_FILE} is not valid JSON.") from None
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
