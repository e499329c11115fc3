"""Fixtures shared by the tests: a project store of their own for every test, and the
real-browser tests' server and Chromium (see ``live_app.py``)."""

from __future__ import annotations

import pytest
from live_app import chromium, dashboard_server


@pytest.fixture(autouse=True)
def own_project_store(tmp_path_factory, monkeypatch):
    """Every test gets an empty project store (ANONLIB_HOME in a temporary folder): a dashboard
    session opens the last project of its store, so tests must not see each other's projects,
    nor the user's own store."""
    monkeypatch.delenv("ANONLIB_STORE", raising=False)
    monkeypatch.setenv("ANONLIB_HOME", str(tmp_path_factory.mktemp("anonlib-home")))


@pytest.fixture(scope="module")
def server():
    """A dashboard server of this checkout, one per test module."""
    with dashboard_server() as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium, one per test module."""
    with chromium() as instance:
        yield instance


@pytest.fixture(scope="session")
def postgresql():
    """A real PostgreSQL server (``postgres_server.py``), one per test process; its admin URL."""
    from postgres_server import postgresql_server

    with postgresql_server() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path):
    """The URL of an empty project store: a SQLite file, then a database on a real PostgreSQL server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store' / 'projects.sqlite'}"
    from postgres_server import new_database

    return new_database(request.getfixturevalue("postgresql"))
