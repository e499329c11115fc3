"""A real browser against the real server: start the app, upload a CSV through
the file input, check the profile numbers, visit every page, save screenshots.

Needs Debian's Chromium at /usr/bin/chromium (``.ci/run`` installs it). Without
it the test is skipped with a message, except in CI (``CI=true``), where it fails.
Screenshots go to ``test-artifacts/``.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _require_chromium() -> None:
    if CHROMIUM.exists():
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but Chromium is missing at {CHROMIUM}; .ci/run should have installed it.")
    pytest.skip(f"Real-browser test skipped: no Chromium at {CHROMIUM} (apt-get install chromium).")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    _require_chromium()
    port = _free_port()
    env = {**os.environ, "STREAMLIT_SERVER_PORT": str(port), "STREAMLIT_SERVER_HEADLESS": "true"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    url = f"http://localhost:{port}"
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.read().strip() == b"ok":
                    break
        except OSError:
            time.sleep(0.5)
    else:
        proc.kill()
        output = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
        pytest.fail(f"The dashboard did not answer /_stcore/health within 90 s:\n{output[-2000:]}")
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="module")
def browser():
    _require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        instance = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield instance
        instance.close()


_BUSY = (
    "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
    " && !document.querySelector('[data-stale=\"true\"]')"
)


def _wait_idle(page, timeout_ms: int = 60_000) -> None:
    """Wait until Streamlit has finished running the script (idle twice in a row)."""
    for _ in range(2):
        page.wait_for_timeout(500)
        page.wait_for_function(_BUSY, timeout=timeout_ms)


def _metric(page, label: str) -> str:
    label_node = page.locator('[data-testid="stMetricLabel"]').get_by_text(label, exact=True)
    metric = page.locator('[data-testid="stMetric"]').filter(has=label_node).first
    return metric.locator('[data-testid="stMetricValue"]').inner_text().strip()


def test_health_endpoint(server) -> None:
    with urllib.request.urlopen(f"{server}/_stcore/health", timeout=5) as response:
        assert response.read().strip() == b"ok"


def test_first_visit_to_a_page_url_gets_the_app_navigation(server, browser) -> None:
    """The server's first session opens a page URL directly (a bookmark): it must
    still run through app.py (navigation, sidebar), not the bare page script."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{server}/leakage", wait_until="networkidle")
    page.get_by_role("heading", name="Leakage & anonymization", exact=True).wait_for(timeout=60_000)
    _wait_idle(page)
    links = page.locator('[data-testid="stSidebarNavLink"]')
    titles = [links.nth(i).inner_text().strip().split("\n")[-1] for i in range(links.count())]
    assert titles[0] == "Dataset" and "app" not in titles
    assert "Working copy" in page.locator('[data-testid="stSidebar"]').inner_text()
    page.close()


def test_upload_profile_and_visit_every_page(server, browser) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1400, "height": 2200})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(server, wait_until="networkidle")
    page.get_by_role("heading", name="Dataset", exact=True).wait_for(timeout=60_000)
    _wait_idle(page)
    assert _metric(page, "records") == "32,561"  # the default sample is loaded
    page.screenshot(path=str(ARTIFACTS / "01-dataset-default.png"), full_page=True)

    page.get_by_text("Upload a file").click()
    _wait_idle(page)
    page.locator('input[type="file"]').set_input_files(str(ROOT / "data" / "samples" / "caballero_table2b.csv"))
    page.get_by_text(re.compile(r"Read 15 rows and 4 columns")).wait_for(timeout=60_000)
    _wait_idle(page)
    assert _metric(page, "records") == "15"
    assert _metric(page, "k") == "2"
    assert _metric(page, "equivalence classes") == "4"
    page.get_by_text("Anonymity vector: (0, 1, 0, 2, 1)").wait_for(timeout=30_000)
    sidebar = page.locator('[data-testid="stSidebar"]')
    assert "caballero_table2b.csv" in sidebar.inner_text()
    page.screenshot(path=str(ARTIFACTS / "02-dataset-uploaded.png"), full_page=True)

    links = page.locator('[data-testid="stSidebarNavLink"]')
    titles = [links.nth(i).inner_text().strip().split("\n")[-1] for i in range(links.count())]  # drop the icon
    registered = len(list((ROOT / "pages").glob("*.py")))
    if registered > 1:  # streamlit hides the navigation when there is one page
        assert len(titles) == registered and titles[0] == "Dataset"
    for number, title in enumerate(titles, start=3):
        page.locator('[data-testid="stSidebarNavLink"]', has_text=title).first.click()
        page.get_by_role("heading", name=title, exact=True).first.wait_for(timeout=60_000)
        _wait_idle(page, 180_000)
        page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)  # every page shows a result chart
        body = page.locator("body").inner_text()
        assert "Traceback" not in body, title
        assert "Something unexpected went wrong" not in body, title
        assert "caballero_table2b.csv" in sidebar.inner_text(), title  # the upload stays active
        assert sidebar.inner_text().count("Working copy") == 1, title
        slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
        page.screenshot(path=str(ARTIFACTS / f"{number:02d}-{slug}.png"), full_page=True)
    assert not errors, errors
    page.close()
