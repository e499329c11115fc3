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
    " && !document.querySelector('[data-testid=\"stSpinner\"]')"
    " && !document.querySelector('[data-testid=\"stSkeleton\"]')"
)


def _wait_idle(page, timeout_ms: int = 180_000) -> None:
    """Wait until Streamlit has finished running the script: no running indicator, stale
    element or spinner (a cached computation's message), three times in a row."""
    for _ in range(3):
        page.wait_for_timeout(700)
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
    page.goto(server, wait_until="commit")
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
    assert _metric(page, "classes") == "4"
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
        page.get_by_role("heading", name=title, exact=True).first.wait_for(timeout=300_000)
        _wait_idle(page, 300_000)
        if title == "Geographic aggregation":  # this file has no area ids: the page says what is missing
            page.get_by_text("Geography needs a column of area ids").wait_for(timeout=60_000)
        elif "as sensitive on the Dataset page" not in page.locator("body").inner_text():  # nothing to measure
            page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)  # the page shows a result chart
        body = page.locator("body").inner_text()
        assert "Traceback" not in body, title
        assert "Something unexpected went wrong" not in body, title
        assert "caballero_table2b.csv" in sidebar.inner_text(), title  # the upload stays active
        assert sidebar.inner_text().count("Working copy") == 1, title
        slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
        page.screenshot(path=str(ARTIFACTS / f"{number:02d}-{slug}.png"), full_page=True)
    assert not errors, errors
    page.close()


# --- a tour of every page on an uploaded file, at two window widths ---------------------------

WIDTHS = (1440, 1024)
LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1"}

# Every element of a metric's value or label (and every widget label) must fit its box:
# Streamlit cuts overflowing text with an ellipsis ("32,..."), which hides the number.
_CUT = """() => {
  const cut = [];
  const selectors = ['[data-testid="stMetricValue"]', '[data-testid="stMetricLabel"]', '[data-testid="stWidgetLabel"]'];
  for (const selector of selectors) {
    for (const box of document.querySelectorAll(selector)) {
      const outer = box.getBoundingClientRect();
      if (outer.width === 0) continue;  // inside a closed expander or tab
      for (const el of [box, ...box.querySelectorAll('*')]) {
        const r = el.getBoundingClientRect();
        if (r.width === 0) continue;
        if (el.scrollWidth > el.clientWidth + 1 || r.right > outer.right + 1 || r.left < outer.left - 1) {
          cut.push(selector.split('"')[1] + ': ' + box.innerText.trim().slice(0, 80));
          break;
        }
      }
    }
  }
  return cut;
}"""


_HEIGHT = "document.querySelector('[data-testid=\"stMain\"]').scrollHeight"


def _settled_height(page, tries: int = 20) -> int:
    """The main section's height once two readings 1.5 s apart agree (and Streamlit is idle)."""
    height = page.evaluate(_HEIGHT)
    for _ in range(tries):
        page.wait_for_timeout(1500)
        page.wait_for_function(_BUSY, timeout=300_000)
        now = page.evaluate(_HEIGHT)
        if now == height:
            break
        height = now
    return int(height)


def _shots() -> Path:
    """Where the tour's screenshots go: $SCREENSHOT_DIR, or a new temporary folder."""
    import tempfile

    folder = Path(os.environ.get("SCREENSHOT_DIR") or tempfile.mkdtemp(prefix="anonlib-shots-"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _patients_csv(path: Path, records: int = 2000) -> Path:
    """A small patient file: Tennessee ZIP areas (so Geography can map it), age, sex, race, diagnosis."""
    import numpy as np

    from anonlib.geo import sample_regions

    rng = np.random.default_rng(13)
    zips = sample_regions("tennessee_zcta").points["region_id"].to_numpy()
    lines = ["zip,age,sex,race,diagnosis"]
    for _ in range(records):
        lines.append(f"{rng.choice(zips[:60])},{rng.integers(18, 90)},{rng.choice(['F', 'M'])},"
                     f"{rng.choice(['White', 'Black', 'Asian', 'Other'], p=[0.7, 0.2, 0.05, 0.05])},"
                     f"{rng.choice(['flu', 'asthma', 'diabetes', 'hypertension', 'none'])}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_tour_of_every_page_stays_local_fits_1024_px_and_saves_screenshots(server, browser, tmp_path) -> None:
    """Upload a 2,000-record file, open every page at 1440 and 1024 px: no request leaves the
    local server, no metric value, metric label or widget label is cut, and a screenshot of
    every page at both widths is saved ($SCREENSHOT_DIR or a temporary folder)."""
    csv = _patients_csv(tmp_path / "patients.csv")
    shots = _shots()
    requests: list[str] = []
    cut: dict[str, list[str]] = {}
    saved: list[Path] = []
    for width in WIDTHS:
        context = browser.new_context(viewport={"width": width, "height": 1000})
        page = context.new_page()
        page.on("request", lambda request: requests.append(request.url))
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(server, wait_until="commit")
        page.get_by_role("heading", name="Dataset", exact=True).wait_for(timeout=300_000)
        _wait_idle(page, 300_000)
        page.get_by_text("Upload a file").click()
        _wait_idle(page, 300_000)
        page.locator('input[type="file"]').wait_for(state="attached", timeout=180_000)  # a busy server is slow
        page.locator('input[type="file"]').set_input_files(str(csv))
        page.get_by_text(re.compile(r"Read 2,000 rows and 5 columns")).wait_for(timeout=300_000)
        _wait_idle(page, 300_000)
        assert _metric(page, "records") == "2,000"
        sidebar = page.locator('[data-testid="stSidebar"]')
        links = page.locator('[data-testid="stSidebarNavLink"]')
        titles = [links.nth(i).inner_text().strip().split("\n")[-1] for i in range(links.count())]
        assert titles[0] == "Dataset" and len(titles) == len(list((ROOT / "pages").glob("*.py")))
        for number, title in enumerate(titles, start=1):
            if number > 1:
                page.locator('[data-testid="stSidebarNavLink"]', has_text=title).first.click()
                page.get_by_role("heading", name=title, exact=True).first.wait_for(timeout=300_000)
                _wait_idle(page, 300_000)
            body = page.locator("body").inner_text()
            assert "Traceback" not in body and "Something unexpected went wrong" not in body, (width, title)
            assert "patients.csv" in sidebar.inner_text(), (width, title)  # the upload stays the working copy
            found = page.evaluate(_CUT)
            if found:
                cut[f"{width} px, {title}"] = found
            slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
            target = shots / f"{width}-{number:02d}-{slug}.png"
            # the page scrolls inside Streamlit's main section, not the document: grow the window to it,
            # once its height has stopped changing (the last elements of a long page come late)
            height = _settled_height(page)
            page.set_viewport_size({"width": width, "height": max(1000, min(int(height) + 40, 12_000))})
            page.wait_for_timeout(800)  # plotly charts follow the new size
            page.screenshot(path=str(target), full_page=True)
            page.set_viewport_size({"width": width, "height": 1000})
            saved.append(target)
        assert not errors, (width, errors)
        context.close()
    foreign = sorted({url for url in requests
                      if url.split(":", 1)[0] in ("http", "https", "ws", "wss")
                      and re.sub(r"^\w+://", "", url).split("/", 1)[0].rsplit(":", 1)[0].strip("[]") not in LOCAL_HOSTS})
    assert not foreign, f"requests left the machine: {foreign[:10]}"
    assert requests, "no request was recorded"
    assert not cut, f"cut text: {cut}"
    assert all(p.stat().st_size > 10_000 for p in saved), saved
    print(f"\nscreenshots: {shots}")
