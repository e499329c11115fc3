"""A real browser against the real server: start the app, upload a CSV through
the file input, check the profile numbers, visit every page, save screenshots.

Needs Debian's Chromium at /usr/bin/chromium (``.ci/run`` installs it). Without
it the test is skipped with a message, except in CI (``CI=true``), where it fails.
Screenshots go to ``test-artifacts/``.

The module's journeys share one browser tab (``tab``), one session of the app, in the file's
order: the first visit opens the app at a page URL, and each later journey goes on in-app (the
sidebar's Dataset link, then its own upload), as a person working through several files does.
Opening the app in a new tab cost Chromium 8-9 CPU-seconds against 1-2 for a page change.
"""

from __future__ import annotations

import os
import re
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pytest
from live_app import (
    BUSY,
    ROOT,
    click,
    click_package,
    dashboard_server,
    enter_number,
    metric,
    open_app,
    open_page,
    press,
    upload,
    wait_idle,
)
from uploads import JOURNEY_CSV, clinic_csv, tennessee_csv

ARTIFACTS = ROOT / "test-artifacts"


@dataclass
class Tab:
    """The module's browser tab: the page, every request it made and every error it raised since its creation."""

    page: object
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def start(self, server: str, width: int = 1440, height: int = 1000) -> int:
        """The app on its Dataset page at this window size: opened if the tab has not opened it
        yet, else reached through the sidebar (unless the tab shows it already: the Dataset page is
        the app's address itself, and its link would only run it again); how many errors the page
        had raised before."""
        self.page.set_viewport_size({"width": width, "height": height})
        if not self.page.url.startswith(server):
            open_app(self.page, server)
        elif self.page.url.rstrip("/") != server.rstrip("/"):
            open_page(self.page, "Dataset")
        return len(self.errors)


@pytest.fixture(scope="module")
def server():
    """The module's dashboard server, its sessions opening on the app's own first sample (Adult):
    the first visit and the upload look at it."""
    with dashboard_server() as url:
        yield url


@pytest.fixture(scope="module")
def tab(server, browser):
    """One browser tab (its own context, downloads accepted) for the module's journeys, its
    requests and page errors recorded from its creation."""
    context = browser.new_context(viewport={"width": 1440, "height": 1000}, accept_downloads=True)
    shared = Tab(context.new_page())
    shared.page.on("request", lambda request: shared.requests.append(request.url))
    shared.page.on("pageerror", lambda exc: shared.errors.append(str(exc)))
    yield shared
    context.close()


def test_health_endpoint(server) -> None:
    with urllib.request.urlopen(f"{server}/_stcore/health", timeout=5) as response:
        assert response.read().strip() == b"ok"


def test_first_visit_to_a_page_url_gets_the_app_navigation(server, tab) -> None:
    """The server's first session opens a page URL directly (a bookmark): it must
    still run through app.py (navigation, sidebar), not the bare page script."""
    page = tab.page
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(f"{server}/leakage", wait_until="commit", timeout=300_000)
    page.get_by_role("heading", name="Leakage & anonymization", exact=True).wait_for(timeout=300_000)
    wait_idle(page, 300_000)
    links = page.locator('[data-testid="stSidebarNavLink"]')
    titles = [links.nth(i).inner_text().strip().split("\n")[-1] for i in range(links.count())]
    assert titles[0] == "Dataset" and "app" not in titles
    assert "Working copy" in page.locator('[data-testid="stSidebar"]').inner_text()


def test_upload_profile_shows_the_papers_numbers(server, tab) -> None:
    """The default sample on opening, then Caballero's Table 2b uploaded: the paper's k, classes
    and anonymity vector on the Dataset page, the navigation listing every page (each page is
    opened and looked at by the tour below)."""
    ARTIFACTS.mkdir(exist_ok=True)
    page = tab.page
    seen = tab.start(server, 1400, 2200)  # nothing uploaded in this session yet
    assert metric(page, "records") == "32,561"  # the default sample is loaded
    page.screenshot(path=str(ARTIFACTS / "01-dataset-default.png"), full_page=True)

    upload(page, ROOT / "data" / "samples" / "caballero_table2b.csv", "Read 15 rows and 4 columns")
    assert metric(page, "records") == "15"
    assert metric(page, "k") == "2"
    assert metric(page, "classes") == "4"
    page.get_by_text("Anonymity vector: (0, 1, 0, 2, 1)").wait_for(timeout=30_000)
    sidebar = page.locator('[data-testid="stSidebar"]')
    assert "caballero_table2b.csv" in sidebar.inner_text()
    assert sidebar.inner_text().count("Working copy") == 1
    page.screenshot(path=str(ARTIFACTS / "02-dataset-uploaded.png"), full_page=True)

    links = page.locator('[data-testid="stSidebarNavLink"]')
    titles = [links.nth(i).inner_text().strip().split("\n")[-1] for i in range(links.count())]  # drop the icon
    registered = len(list((ROOT / "pages").glob("*.py")))
    if registered > 1:  # streamlit hides the navigation when there is one page
        assert len(titles) == registered and titles[0] == "Dataset"
    assert not tab.errors[seen:], tab.errors[seen:]
    page.set_viewport_size({"width": 1440, "height": 1000})


# --- a tour of every page on an uploaded file, at two window widths ---------------------------

WIDTHS = (1440, 1024)
LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1"}

# Every element of a metric's value or label, every widget label, every selectbox's chosen
# option, every chosen tag of a multiselect and every button label must fit its box:
# Streamlit cuts overflowing text with an ellipsis ("32,..."), which hides the number.
_CUT = """() => {
  const cut = [];
  const selectors = ['[data-testid="stMetricValue"]', '[data-testid="stMetricLabel"]', '[data-testid="stWidgetLabel"]',
                     '[data-testid="stSelectbox"] input[role="combobox"]', '[data-testid="stMultiSelect"] [data-tag] span[title]',
                     '[data-testid="stDownloadButton"] button', '[data-testid="stButton"] button'];
  for (const selector of selectors) {
    for (const box of document.querySelectorAll(selector)) {
      if (box.hasAttribute('title')) {  // a multiselect's tag: squeezed, its text shrinks to nothing
        const widget = box.closest('[data-testid="stMultiSelect"]').getBoundingClientRect();
        if (widget.width > 0 && box.scrollWidth > box.clientWidth + 1) cut.push('stMultiSelect: ' + box.title.slice(0, 80));
        continue;
      }
      const outer = box.getBoundingClientRect();
      if (outer.width === 0) continue;  // inside a closed expander or tab
      if (box.tagName === 'INPUT') {  // an input does not report its text's width: measure it
        const style = getComputedStyle(box);
        const context = document.createElement('canvas').getContext('2d');
        context.font = style.font;
        const room = box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
        if (context.measureText(box.value).width > room + 1) cut.push('stSelectbox: ' + box.value.slice(0, 80));
        continue;
      }
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
    """The main section's height once two readings 0.4 s apart agree (and Streamlit is idle)."""
    height = page.evaluate(_HEIGHT)
    for _ in range(tries):
        page.wait_for_timeout(400)
        page.wait_for_function(BUSY, timeout=300_000)
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


def test_tour_of_every_page_stays_local_fits_1024_px_and_saves_screenshots(server, tab, tmp_path) -> None:
    """Upload a 2,000-record file, open every page, each looked at in 1440 and 1024 px: no request leaves the
    local server (none of the tab's, since it first opened the app), no metric value, metric label or
    widget label is cut, and a screenshot of every page at both widths is saved ($SCREENSHOT_DIR or a
    temporary folder)."""
    csv = tmp_path / "patients.csv"
    csv.write_bytes(tennessee_csv())
    shots = _shots()
    requests = tab.requests
    cut: dict[str, list[str]] = {}
    saved: list[Path] = []
    # one session opens every page; each page is laid out, checked and shot at both widths in turn
    page = tab.page
    seen = tab.start(server, WIDTHS[0])
    upload(page, csv, "Read 2,000 rows and 5 columns")
    assert metric(page, "records") == "2,000"
    sidebar = page.locator('[data-testid="stSidebar"]')
    links = page.locator('[data-testid="stSidebarNavLink"]')
    titles = [links.nth(i).inner_text().strip().split("\n")[-1] for i in range(links.count())]
    assert titles[0] == "Dataset" and len(titles) == len(list((ROOT / "pages").glob("*.py")))
    for number, title in enumerate(titles, start=1):
        if number > 1:
            open_page(page, title)
        if title == "Projects":  # no chart: what the store keeps, the projects, the audit log
            page.get_by_text("What is kept on this computer").wait_for(timeout=60_000)
        elif "as sensitive on the Dataset page" not in page.locator("body").inner_text():  # nothing to measure
            page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)  # the page shows a result chart
        body = page.locator("body").inner_text()
        assert "Traceback" not in body and "Something unexpected went wrong" not in body, title
        assert "patients.csv" in sidebar.inner_text(), title  # the upload stays the working copy
        assert sidebar.inner_text().count("Working copy") == 1, title
        slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
        # the page opened at the width it was last shot at: that width first, then the other (two
        # window changes fewer per page than always starting at 1440)
        for shown, width in enumerate(WIDTHS if number % 2 else WIDTHS[::-1]):
            page.set_viewport_size({"width": width, "height": 1000})
            wait_idle(page)
            found = page.evaluate(_CUT)
            if found:
                cut[f"{width} px, {title}"] = found
            target = shots / f"{width}-{number:02d}-{slug}.png"
            # the page scrolls inside Streamlit's main section, not the document: grow the window to it,
            # once its height has stopped changing (the last elements of a long page come late)
            height = _settled_height(page)
            page.set_viewport_size({"width": width, "height": max(1000, min(int(height) + 40, 12_000))})
            page.wait_for_timeout(500)  # plotly charts follow the new size
            page.screenshot(path=str(target), full_page=True)
            if shown:  # the next page opens in a window of 1000 px; the other width sets its own
                page.set_viewport_size({"width": width, "height": 1000})
            saved.append(target)
    assert not tab.errors[seen:], tab.errors[seen:]
    page.set_viewport_size({"width": WIDTHS[0], "height": 1000})
    foreign = sorted(
        {
            url
            for url in requests
            if url.split(":", 1)[0] in ("http", "https", "ws", "wss")
            and re.sub(r"^\w+://", "", url).split("/", 1)[0].rsplit(":", 1)[0].strip("[]") not in LOCAL_HOSTS
        }
    )
    assert not foreign, f"requests left the machine: {foreign[:10]}"
    assert requests, "no request was recorded"
    assert not cut, f"cut text: {cut}"
    assert all(p.stat().st_size > 10_000 for p in saved), saved
    print(f"\nscreenshots: {shots}")


# --- the release journey in the browser ------------------------------------------------------

_STEP = re.compile(
    r"1\. Leakage: .*?records failing the target ([\d,]+) (?:->|→) ([\d,]+)", re.S
)  # Markdown draws -> as →


def test_release_journey_generalize_bands_undo_report_package_apply(server, tab, tmp_path, capsys) -> None:
    """Upload -> a generalization on Leakage (sex and zip) -> bands on Individual privacy ->
    undo -> the report lists the generalization with its records -> download the package ->
    `anonlib apply` on the same CSV reproduces the released table byte for byte."""
    import io
    import zipfile

    from anonlib.cli import main
    from anonlib.core.dataset import Dataset
    from anonlib.core.loading import load_table
    from anonlib.workflow import ReleaseTarget

    csv = tmp_path / "registry.csv"
    csv.write_bytes(JOURNEY_CSV)
    loaded = Dataset.from_frame(csv.name, load_table(JOURNEY_CSV, name=csv.name).frame)
    failing = ReleaseTarget(k=5).check(loaded).failing_records  # the sidebar's default target
    page = tab.page
    seen = tab.start(server)
    upload(page, csv, "Read 400 rows and 6 columns")
    sidebar = page.locator('[data-testid="stSidebar"]')
    assert "Quasi-identifiers: birth_year, sex, zip" in sidebar.inner_text()

    # Leakage: take birth_year out of the quasi-identifiers to generalize, apply the default
    open_page(page, "Leakage & anonymization")
    press(page, page.locator('[class*="st-key-shield-"]').get_by_role("button", name="Remove birth_year"))
    page.locator(".st-key-leakage_apply button").first.wait_for(timeout=300_000)
    click(page, "leakage_apply")
    step = _STEP.search(sidebar.inner_text())
    assert step, sidebar.inner_text()
    before, after = (int(n.replace(",", "")) for n in step.groups())
    assert before == failing and after < before

    # Individual privacy: bands on the birth year, then undo them
    open_page(page, "Individual privacy")
    click(page, "peers_apply")
    assert "2. Individual privacy: " in sidebar.inner_text()
    click(page, "sidebar_undo")
    text = sidebar.inner_text()
    assert "2. Individual privacy" not in text and _STEP.search(text).groups() == step.groups()

    # the report, and its package downloaded as a person would
    open_page(page, "Risk report")
    body = page.locator("body").inner_text()
    assert "Traceback" not in body and "Something unexpected went wrong" not in body
    with page.expect_download(timeout=300_000) as download:
        click_package(page)
    downloaded = Path(download.value.path()).read_bytes()
    package = zipfile.ZipFile(io.BytesIO(downloaded))
    # the download is recorded in the project's audit log and states its entry (audit.json)
    assert package.namelist() == [
        "released.csv",
        "report.html",
        "recipe.json",
        "README.txt",
        "audit.json",
        "SHA256SUMS",
    ]
    # the downloaded package verifies against the uploaded file (the target check fails only when not met)
    from anonlib.workflow import verify_package

    checks = verify_package(downloaded, JOURNEY_CSV, source_name=csv.name)
    assert checks.failed_parts == (() if after == 0 else ("target",)), checks.checks
    report = package.read("report.html").decode("utf-8")
    steps = report.split("<h2>Release steps</h2>", 1)[1].split("<h2>", 1)[0]
    rows = re.findall(r"<tr>(.*?)</tr>", steps.split("<tbody>", 1)[1])
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in rows]
    assert [(c[1], c[3], c[4]) for c in cells] == [("Leakage", f"{before:,}", f"{after:,}")]
    (tmp_path / "recipe.json").write_bytes(package.read("recipe.json"))
    # the command line in this process (its entry point and exit codes as a subprocess are
    # tests/cli's): a second Python importing anonlib cost a few CPU-seconds
    code = main(["apply", str(tmp_path / "recipe.json"), str(csv), "--out", str(tmp_path / "out.csv")])
    assert code == (0 if after == 0 else 1), capsys.readouterr().err
    assert (tmp_path / "out.csv").read_bytes() == package.read("released.csv")  # byte for byte
    assert not tab.errors[seen:], tab.errors[seen:]
    page.screenshot(path=str(ARTIFACTS / "journey-report.png"), full_page=True)


_FAILING = re.compile(r"records failing the target ([\d,]+) (?:->|→) ([\d,]+)")
_CELLS = re.compile(r"Suppress cells: ([\d,]+) records touched")
_CLASSIFIER = re.compile(r"Predicting diagnosis from .*?\(loaded file\)\.")


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def test_release_journey_generalize_local_suppression_release_view(server, tab, tmp_path) -> None:
    """Upload a clinic file with blanks -> allow 5% suppressed records -> apply the optimal
    generalization (some records still fail k = 5) -> the sidebar's local suppression, which
    touches fewer records than suppressing them -> the Release page shows a met target, the
    distributions and the classifier comparison -> its package verifies against the upload and
    its report holds the same classifier numbers; each look shot at 1440 and at 1024 px (the
    journey runs once: the release does not depend on the width)."""
    import io
    import zipfile

    from anonlib.workflow import verify_package

    data = clinic_csv()
    csv = tmp_path / "clinic.csv"
    csv.write_bytes(data)
    width = 1440
    page = tab.page
    seen = tab.start(server, width)
    upload(page, csv, "Read 20,000 rows and 5 columns")
    sidebar = page.locator('[data-testid="stSidebar"]')
    assert "Quasi-identifiers: age, sex, state, marital" in sidebar.inner_text()
    enter_number(page, "target_suppressed", "5")

    open_page(page, "Leakage & anonymization")
    page.locator(".st-key-leakage_apply button").first.wait_for(timeout=300_000)
    click(page, "leakage_apply")
    text = sidebar.inner_text()
    before, after = (_number(n) for n in _FAILING.search(text).groups())
    assert 0 < after < before, text
    touched = _number(_CELLS.search(text).group(1))
    assert 0 < touched < after  # the offer is made only when it touches fewer records
    for shown_at in (1024, 1440):
        page.set_viewport_size({"width": shown_at, "height": 1000})
        wait_idle(page, 300_000)
        page.screenshot(path=str(ARTIFACTS / f"local-{shown_at}-generalized.png"))

    click(page, "sidebar_suppress_cells")
    text = sidebar.inner_text()
    assert "2. Sidebar: Local suppression to k = 5" in text, text
    assert "Met: all 20,000 records are in classes meeting k = 5." in text, text

    open_page(page, "Release")
    # 20,000 records: the classifiers are estimated over a second, so they wait for their button
    # (unless this server kept them from another run of the same journey)
    if page.locator(".st-key-release_classify button").count():
        click(page, "release_classify")
    page.get_by_text("Predicting diagnosis from").first.wait_for(timeout=300_000)
    wait_idle(page, 300_000)
    assert metric(page, "records in the release") == "20,000"
    assert metric(page, "records suppressed") == "0"
    assert metric(page, "target met") == "yes"
    body = page.locator('[data-testid="stMain"]').inner_text()
    assert "Traceback" not in body and "Something unexpected went wrong" not in body
    assert "age: 73 values become" in body and "Distributions before and after" in body
    assert page.locator('[data-testid="stPlotlyChart"]').count() >= 2  # distribution and accuracy
    shown = _CLASSIFIER.search(body.replace("\n", " ")).group(0)
    for shown_at in (1024, 1440):
        page.set_viewport_size({"width": shown_at, "height": 4200})
        page.wait_for_timeout(500)  # plotly charts follow the new size
        page.screenshot(path=str(ARTIFACTS / f"local-{shown_at}-release.png"))
    page.set_viewport_size({"width": width, "height": 1000})

    with page.expect_download(timeout=300_000) as download:
        click_package(page)
    package_bytes = Path(download.value.path()).read_bytes()
    checks = verify_package(package_bytes, data, source_name=csv.name)  # k measured on released.csv, * as a wildcard
    assert checks.failed_parts == (), checks.checks
    report = zipfile.ZipFile(io.BytesIO(package_bytes)).read("report.html").decode("utf-8")
    assert shown in report.replace("\n", " ")  # the same classifier numbers as the page
    released = pd.read_csv(
        io.BytesIO(zipfile.ZipFile(io.BytesIO(package_bytes)).read("released.csv")), dtype=str, keep_default_na=False
    )
    assert len(released) == 20_000
    assert int((released[["age", "sex", "state", "marital"]] == "*").any(axis=1).sum()) == touched
    assert not tab.errors[seen:], tab.errors[seen:]
