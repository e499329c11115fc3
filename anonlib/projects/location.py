"""Where the project store is, and how to reach it.

``ANONLIB_STORE`` (a SQLAlchemy URL: ``postgresql://user@host/db``, ``sqlite:///path``)
takes precedence; otherwise the store is the SQLite file ``projects.sqlite`` in
``ANONLIB_HOME`` (a folder) or in the per-user data folder
(``platformdirs.user_data_dir("anonlib")``, e.g. ``~/.local/share/anonlib`` on Linux).
The folder is created readable by its owner only (0700) and the database file likewise
(0600): it holds the users' files.

Example:
    >>> store_url({"ANONLIB_HOME": "/tmp/a"})
    'sqlite:////tmp/a/projects.sqlite'
    >>> store_url({"ANONLIB_STORE": "postgresql://anna@db.example/projects", "ANONLIB_HOME": "/tmp/a"})
    'postgresql+psycopg://anna@db.example/projects'
    >>> shown_url("postgresql+psycopg://anna:secret@db.example/projects?password=secret")
    'postgresql://anna:***@db.example/projects?password=***'
    >>> store_url({"ANONLIB_STORE": "postgresql://anna:p@ss word@db.example/projects"})
    'postgresql+psycopg://anna:p%40ss word@db.example/projects'

A password with a raw ``@`` is read up to the last ``@`` before the host (as ``urllib`` reads a
URL); the password of ``ANONLIB_STORE`` is remembered (``remember_secrets``), so no message prints
it in any form.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import quote, unquote

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from ..core.errors import StoreError
from ..core.masking import mask_secrets, remember_secrets

STORE_FILE = "projects.sqlite"


def default_home() -> Path:
    """The per-user data folder of anonlib (platformdirs)."""
    import platformdirs

    return Path(platformdirs.user_data_dir("anonlib", appauthor=False))


def store_url(environ: Mapping[str, str] | None = None) -> str:
    """The store's SQLAlchemy URL from ``ANONLIB_STORE`` or ``ANONLIB_HOME`` (default: the per-user folder)."""
    env = os.environ if environ is None else environ
    given = (env.get("ANONLIB_STORE") or "").strip()
    if given:
        return _normalized(given)
    home = Path(env.get("ANONLIB_HOME") or default_home()).expanduser()
    return f"sqlite:///{home / STORE_FILE}"


def _normalized(url: str) -> str:
    remember_secrets(url)
    url = _userinfo_encoded(url)
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise StoreError(
            f"ANONLIB_STORE is not a database URL ({mask_secrets(url)!r}); give e.g. "
            "postgresql://user@host/database or leave it unset to use the SQLite file in ANONLIB_HOME."
        ) from None
    except ValueError:  # the only number of a URL is its port
        raise StoreError(
            f"ANONLIB_STORE has a port that is not a number ({mask_secrets(url)!r}); give it as "
            "postgresql://user@host:5432/database, or leave the port out."
        ) from None
    backend = parsed.get_backend_name()
    if backend == "postgresql":
        return parsed.set(drivername="postgresql+psycopg").render_as_string(hide_password=False)
    if backend == "sqlite":
        return parsed.render_as_string(hide_password=False)
    raise StoreError(f"The project store runs on SQLite or PostgreSQL; ANONLIB_STORE names {backend}.")


def _userinfo_encoded(url: str) -> str:
    """``url`` with a user name and password holding a raw ``@`` percent-encoded: the host is what
    follows the last ``@`` before the path (SQLAlchemy would take the first, and the rest of the
    password for the host).

    >>> _userinfo_encoded("postgresql://anna:p@ss@db/projects")
    'postgresql://anna:p%40ss@db/projects'
    """
    scheme, sep, rest = url.partition("://")
    end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    netloc = rest[:end]
    if not sep or netloc.count("@") < 2:
        return url
    userinfo, _, host = netloc.rpartition("@")
    user, colon, password = userinfo.partition(":")
    encoded = quote(unquote(user), safe="") + colon + quote(unquote(password), safe=" ")
    return f"{scheme}://{encoded}@{host}{rest[end:]}"


def sqlite_path(url: str) -> Path | None:
    """The database file of a SQLite URL (None for another backend or an in-memory database)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    database = parsed.database
    if database.startswith("file:"):  # a URI filename (sqlite:///file:/path?mode=ro&uri=true)
        database = database[len("file:") :]
    return Path(database)


def store_files(environ: Mapping[str, str] | None = None) -> list[Path]:
    """The files of the SQLite store ``store_url`` finds: the database, its write-ahead log,
    shared memory and rollback journal (none for PostgreSQL or an ``ANONLIB_STORE`` that is
    not a URL); no command writes over any of them.

    >>> [p.name for p in store_files({"ANONLIB_HOME": "/tmp/a"})]
    ['projects.sqlite', 'projects.sqlite-wal', 'projects.sqlite-shm', 'projects.sqlite-journal']
    """
    try:
        path = sqlite_path(store_url(environ))
    except (StoreError, ValueError, ArgumentError):
        return []
    if path is None:
        return []
    return [path, *(path.with_name(path.name + end) for end in ("-wal", "-shm", "-journal"))]


def shown_url(url: str) -> str:
    """The URL as messages and pages show it: its password masked (``mask_secrets``), no driver name."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        path = sqlite_path(url)
        return str(path) if path else "an in-memory database"
    return mask_secrets(parsed.set(drivername=parsed.get_backend_name()).render_as_string(hide_password=True))


def prepare_folder(url: str) -> None:
    """Create the SQLite store's folder (owner-only) and, once created, keep the file owner-only."""
    path = sqlite_path(url)
    if path is None:
        return
    try:
        if not path.parent.exists():
            path.parent.mkdir(parents=True, mode=0o700, exist_ok=True)
        if not path.exists():
            fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
            os.close(fd)
    except OSError as err:
        raise StoreError(
            f"The project store cannot be created at {path}: {err.strerror or err}. Set ANONLIB_HOME to a folder "
            "you can write to."
        ) from None
