"""Three browser sessions at once on one server: each uploads its own file, changes a
role and opens another page, and never sees another session's data or roles.

Every session's file has its own column names (``zip3``, ``sex3``, ``age3`` for
session 3), file name and size, so anything leaking between sessions (a module
global, a cache keyed without the session's data) shows up as a foreign name or
number on a page (a leak between two sessions shows; three run side by side). The
sessions are driven in lock step from one thread: each step is started in every
tab before any is awaited, so the server works on them at the same time. Each session is
a tab of one browser context (a Streamlit session is one tab's connection; the app keeps
nothing per browser), the tabs sharing one renderer process (``SHARED_TABS``: about 5
CPU-seconds of Chromium's fewer per tab than a context each). Server, Chromium and the
helpers are those of ``live_app.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from live_app import SHARED_TABS, UPLOAD, chromium, metric, set_role, wait_idle

SESSIONS = 3
PRELOAD = False  # the Release page is not opened: its libraries need no background import (conftest's server)


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium whose tabs of one site share a renderer process (``SHARED_TABS``)."""
    with chromium(SHARED_TABS) as instance:
        yield instance


def _table(i: int) -> str:
    """Session i: two classes of i + 1 records on zip x sex; every age distinct (so k = 1 until age is ignored)."""
    rows = [f"{10 + c},{'fm'[c]},{20 + c * 50 + r}" for c in range(2) for r in range(i + 1)]
    return f"zip{i},sex{i},age{i}\n" + "\n".join(rows) + "\n"


def _foreign(i: int) -> list[str]:
    return [name for j in range(1, SESSIONS + 1) if j != i for name in (f"session{j}.csv", f"zip{j}", f"age{j}")]


def _assert_only_own(page, i: int, when: str) -> None:
    text = page.locator("body").inner_text()
    leaked = [name for name in _foreign(i) if re.search(rf"\b{re.escape(name)}\b", text)]
    assert not leaked, f"session {i} {when} shows {leaked}"
    assert "Traceback" not in text and "Something unexpected went wrong" not in text, f"session {i} {when}"


def test_three_sessions_at_once_never_see_each_other(server, browser, tmp_path: Path) -> None:
    files = {}
    for i in range(1, SESSIONS + 1):
        files[i] = tmp_path / f"session{i}.csv"
        files[i].write_text(_table(i))
    context = browser.new_context(viewport={"width": 1400, "height": 2000})
    pages = {i: context.new_page() for i in files}
    errors = {i: [] for i in files}
    for i, page in pages.items():
        page.on("pageerror", lambda exc, i=i: errors[i].append(str(exc)))
        page.goto(server, wait_until="commit", timeout=300_000)
    for page in pages.values():
        page.get_by_role("heading", name="Dataset", exact=True).wait_for(timeout=300_000)
        wait_idle(page)
        page.get_by_text("Upload a file").click()
    for page in pages.values():
        wait_idle(page)

    # every session uploads its own file at the same time
    for i, page in pages.items():
        page.locator(UPLOAD).set_input_files(str(files[i]))
    for i, page in pages.items():
        page.get_by_text(re.compile(rf"Read {2 * (i + 1)} rows and 3 columns")).wait_for(timeout=90_000)
        wait_idle(page)
    for i, page in pages.items():
        assert (metric(page, "records"), metric(page, "k")) == (str(2 * (i + 1)), "1"), i
        sidebar = page.locator('[data-testid="stSidebar"]').inner_text()
        assert f"session{i}.csv" in sidebar and f"Quasi-identifiers: zip{i}, sex{i}, age{i}" in sidebar, i
        _assert_only_own(page, i, "after the upload")

    # every session stops treating its age column as a quasi-identifier, at the same time
    for page in pages.values():
        set_role(page, 3, "ignore")
    for i, page in pages.items():
        wait_idle(page)
        page.get_by_text(f"Quasi-identifiers: zip{i}, sex{i}", exact=True).first.wait_for(timeout=60_000)
    for i, page in pages.items():
        assert (metric(page, "records"), metric(page, "k"), metric(page, "classes")) == (
            str(2 * (i + 1)),
            str(i + 1),
            "2",
        ), i
        page.get_by_text(f"Anonymity vector: ({', '.join(['0'] * i + ['2'])})").wait_for(timeout=30_000)
        _assert_only_own(page, i, "after changing a role")

    # every session opens the risk report of its own data, at the same time
    for page in pages.values():
        page.locator('[data-testid="stSidebarNavLink"]', has_text="Risk report").first.click()
    for i, page in pages.items():
        page.get_by_role("heading", name="Risk report", exact=True).first.wait_for(timeout=90_000)
        wait_idle(page, 180_000)
        sidebar = page.locator('[data-testid="stSidebar"]').inner_text()
        assert f"session{i}.csv" in sidebar and f"Quasi-identifiers: zip{i}, sex{i}\n" in sidebar + "\n", i
        _assert_only_own(page, i, "on the risk report")
    for i in files:
        assert not errors[i], (i, errors[i])
    context.close()
