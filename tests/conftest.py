"""Fixtures shared by the real-browser tests (see ``live_app.py``)."""

from __future__ import annotations

import pytest
from live_app import chromium, dashboard_server


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
