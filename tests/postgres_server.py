"""A real PostgreSQL server for the project store's tests: Debian's ``postgresql`` package,
started in a temporary folder on a free port (Unix socket and 127.0.0.1 only) and stopped
afterwards.

PostgreSQL refuses to run as root, so when the tests run as root the server runs as the
``postgres`` user (``runuser``) in a folder that user owns. Without the binaries the tests
that need it are skipped with a message, except in CI (``CI=true``), where they fail
(``.ci/run`` installs the package).
"""

from __future__ import annotations

import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

_DATABASES = itertools.count(1)


def binaries() -> Path | None:
    """The newest installed PostgreSQL's bin folder (None when there is none)."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parent.parent.name))
    return found[-1].parent if found else None


def require_postgresql() -> Path:
    folder = binaries()
    if folder is not None:
        return folder
    if os.environ.get("CI") == "true":
        pytest.fail("CI=true but PostgreSQL is not installed (/usr/lib/postgresql/*/bin); .ci/run should install it.")
    pytest.skip("PostgreSQL tests skipped: Debian's postgresql package is not installed (apt-get install postgresql).")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_server_user(command: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


@contextmanager
def postgresql_server() -> Iterator[str]:
    """Start a throw-away PostgreSQL server; yield the URL of its administration database."""
    folder = require_postgresql()
    base = Path(tempfile.mkdtemp(prefix="anonlib-pg-"))
    data, log = base / "data", base / "server.log"
    if os.geteuid() == 0:
        shutil.chown(base, "postgres", "postgres")
    os.chmod(base, 0o700)
    port = _free_port()
    run = {"check": True, "stdout": subprocess.DEVNULL, "stderr": subprocess.PIPE, "timeout": 120}
    try:
        subprocess.run(
            _as_server_user(
                [str(folder / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]
            ),
            **run,
        )
        options = f"-k {base} -p {port} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off"
        subprocess.run(
            _as_server_user([str(folder / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options, "-w", "start"]),
            **run,
        )
    except subprocess.CalledProcessError as err:
        shutil.rmtree(base, ignore_errors=True)
        pytest.fail(f"PostgreSQL did not start: {err.stderr.decode(errors='replace')[-1000:]}")
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            _as_server_user([str(folder / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=60,
        )
        shutil.rmtree(base, ignore_errors=True)


def new_database(admin_url: str) -> str:
    """A new, empty database on the server of ``admin_url``; its URL."""
    import psycopg

    name = f"anonlib_test_{os.getpid()}_{next(_DATABASES)}"
    plain = admin_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(plain, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    return admin_url.rsplit("/", 1)[0] + f"/{name}"
