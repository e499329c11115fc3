"""Releases in flight: the files of a release written under temporary names, and the marker
in the store's ``meta`` table that lets the next command finish or undo a release whose
process died.

A release into a project (``anonlib.projects.releasing``) first records a marker
``pending_release:<token>`` naming its files (each temporary name beside its target) and
the process writing them (host, process id and start time); the transaction that commits
the audit entry also writes the entry's number into the marker; once the files are renamed
into place the marker is removed. ``recover`` (run by every opening of the store that may
write) looks at the markers of processes that no longer run on this host: a marker without
an entry was a release that never committed, so its temporary files are removed; a marker
with an entry was committed, so its temporary files are renamed into place. Either way the
marker goes, and the disk holds the whole release with its entry, or nothing.

Example:
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> temporary = temporary_name(folder / "released.csv")
    >>> temporary.name.startswith(".released.csv.") and temporary.name.endswith(".part.csv")
    True
    >>> write_temporary(temporary, folder / "released.csv", b"a,b\\n")
    >>> put_in_place(temporary, folder / "released.csv")
    >>> (folder / "released.csv").read_bytes(), temporary.exists()
    (b'a,b\\n', False)
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import stat
from pathlib import Path

from sqlalchemy import Connection, delete, insert, select, update

from .schema import META

PREFIX = "pending_release:"


def new_token() -> str:
    """A fresh marker key."""
    return PREFIX + secrets.token_hex(12)


def _started(pid: int) -> str | None:
    """The start time of process ``pid`` (Linux's /proc; None when there is no such process)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return fields[19]
    except (OSError, IndexError):
        return None


def owner() -> dict:
    """This process, as a marker names it (the start time tells a reused process id apart)."""
    return {"host": socket.gethostname(), "pid": os.getpid(), "started": _started(os.getpid())}


def _alive(process: dict) -> bool:
    """Whether the process a marker names may still be running (a process on another host
    is left to that host: its files are not on this disk)."""
    if process.get("host") != socket.gethostname():
        return True
    pid = int(process.get("pid") or 0)
    if pid == os.getpid():
        return True
    if Path("/proc").is_dir():
        started = _started(pid)
        return started is not None and started == process.get("started")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def mark(c: Connection, token: str, files: list[tuple[str, str]]) -> None:
    """Record that this process is writing ``files`` (pairs of temporary name and target)."""
    value = {"process": owner(), "files": [list(f) for f in files], "entry": None}
    c.execute(insert(META).values(key=token, value=json.dumps(value)))


def committed(c: Connection, token: str, entry: int) -> None:
    """In the transaction committing audit entry ``entry``: its files are now to be kept."""
    row = c.execute(select(META.c.value).where(META.c.key == token)).first()
    if row is not None:
        value = json.loads(row[0]) | {"entry": int(entry)}
        c.execute(update(META).where(META.c.key == token).values(value=json.dumps(value)))


def clear(c: Connection, token: str) -> None:
    c.execute(delete(META).where(META.c.key == token))


def _markers(c: Connection) -> list[tuple[str, str]]:
    return [tuple(r) for r in c.execute(select(META.c.key, META.c.value).where(META.c.key.like(PREFIX + "%"))).all()]


def interrupted(c: Connection) -> int:
    """How many releases of processes that died wait to be finished or undone (``recover``)."""
    count = 0
    for _, value in _markers(c):
        try:
            process = json.loads(value).get("process") or {}
        except (ValueError, AttributeError):
            process = {}
        count += not _alive(process)
    return count


def recover(c: Connection) -> list[str]:
    """Finish (rename into place) or undo (remove) the files of releases whose process died;
    one sentence per release handled."""
    done = []
    for key, value in _markers(c):
        try:
            marker = json.loads(value)
            files = [(str(t), str(target)) for t, target in marker["files"]]
        except (ValueError, KeyError, TypeError):
            c.execute(delete(META).where(META.c.key == key))  # not a marker this module wrote
            continue
        if _alive(marker.get("process") or {}):
            continue
        entry = marker.get("entry")
        try:
            for temporary, target in files:
                if entry is None:
                    remove(Path(temporary))
                elif Path(temporary).exists():
                    put_in_place(Path(temporary), Path(target))
        except OSError:  # e.g. the folder is not writable now: left for a later opening, which tries again
            continue
        c.execute(delete(META).where(META.c.key == key))
        done.append(
            f"The release of audit entry {entry}, interrupted after it was recorded, was completed: its files "
            "were renamed into place."
            if entry is not None
            else "A release interrupted before it was recorded was undone: its temporary files were removed."
        )
    return done


# ---------------------------------------------------------------------- files


def target_of(path: str | os.PathLike) -> Path:
    """The file a release writes for ``path`` (a symlink is followed: the file it points to)."""
    return Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)


def temporary_name(target: str | os.PathLike) -> Path:
    """A fresh hidden name beside ``target`` (same folder, so the rename is atomic)."""
    target = Path(target)
    return target.parent / f".{target.name}.{secrets.token_hex(6)}.part{target.suffix}"


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_temporary(temporary: Path, target: Path, data: bytes) -> None:
    """Write ``data`` to ``temporary`` (created, never an existing file), synced to disk,
    with the mode of the file it replaces (or the usual mode of a new file)."""
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view[: 1 << 20]) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    mode = stat.S_IMODE(target.stat().st_mode) if target.is_file() else 0o666 & ~_umask()
    os.chmod(temporary, mode)


def put_in_place(temporary: Path, target: Path) -> None:
    """Rename ``temporary`` over ``target`` and sync the folder (the rename survives a power cut)."""
    os.replace(temporary, target)
    try:
        fd = os.open(target.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def remove(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass
