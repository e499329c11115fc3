"""Projects in a real browser, at 1440 px with each look also at 1024 px: upload a file, change a role, set the
release target, apply two steps; reload the page: the same working copy; restart the server:
the same; download the release package; then, on a fresh store, open that package with its
source file on the Projects page: the same released table.

Needs Debian's Chromium (``live_app.py``); screenshots go to ``test-artifacts/``.
"""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

from live_app import (
    ROOT,
    SMALL_SAMPLE,
    chromium,
    click,
    click_package,
    dashboard_server,
    enter_number,
    metric,
    open_app,
    open_page,
    press,
    set_role,
    upload,
    wait_idle,
)
from uploads import JOURNEY_CSV

from anonlib.projects import ProjectStore, audit_entries
from anonlib.workflow import release_csv

ARTIFACTS = ROOT / "test-artifacts"
TIMEOUT = 300_000


def _working_copy(page) -> dict:
    """What the sidebar says about the working copy: its lines (file, records, roles, check,
    steps with the records failing before and after each) and the target's widgets."""
    text = page.locator('[data-testid="stSidebar"]').inner_text()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    start = lines.index("Working copy")
    end = next(i for i, line in enumerate(lines) if line.startswith("Everything is computed on this computer"))
    return {
        "sidebar": [line for line in lines[start:end] if not line.startswith("Project: ")],
        "k": page.locator(".st-key-target_k input").first.input_value(),
        "suppressed": page.locator(".st-key-target_suppressed input").first.input_value(),
    }


def _download_package(page) -> bytes:
    open_page(page, "Risk report")
    with page.expect_download(timeout=TIMEOUT) as download:
        click_package(page)
    return Path(download.value.path()).read_bytes()


def _shot(page, name: str) -> None:
    """The page at 1024 px and back at 1440 px, each a screenshot (the journey runs once, at 1440 px:
    reloading and restarting do not depend on the width; how the page lays out does)."""
    ARTIFACTS.mkdir(exist_ok=True)
    for width in (1024, 1440):
        page.set_viewport_size({"width": width, "height": 1100})
        wait_idle(page, TIMEOUT)
        page.screenshot(path=str(ARTIFACTS / f"projects-{width}-{name}.png"), full_page=True)


def test_reload_restart_and_a_package_on_a_fresh_store_give_the_same_work(tmp_path) -> None:
    width = 1440
    csv = tmp_path / "registry.csv"
    csv.write_bytes(JOURNEY_CSV)
    home, fresh_home = tmp_path / "home", tmp_path / "fresh"
    errors: list[str] = []
    with chromium() as browser:
        context = browser.new_context(viewport={"width": width, "height": 1100}, accept_downloads=True)
        page = context.new_page()
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        with dashboard_server(home, first_sample=SMALL_SAMPLE, preload=False) as url:
            port = int(url.rsplit(":", 1)[1])
            open_app(page, url)
            upload(page, csv, "Read 400 rows and 6 columns")
            set_role(page, 6, "ignore")  # diagnosis is not analysed in this release
            page.get_by_text("Sensitive: none", exact=True).first.wait_for(timeout=60_000)
            enter_number(page, "target_k", "3")
            enter_number(page, "target_suppressed", "10")
            # step 1: the least-loss generalization of sex and zip (birth year left as it is)
            open_page(page, "Leakage & anonymization")
            press(
                page, page.locator('[class*="st-key-shield-"]').get_by_role("button", name="Remove birth_year"), TIMEOUT
            )
            page.locator(".st-key-leakage_apply button").first.wait_for(timeout=TIMEOUT)
            click(page, "leakage_apply")
            # step 2: suppress the records that still fail
            page.locator(".st-key-sidebar_suppress button").first.wait_for(timeout=TIMEOUT)
            click(page, "sidebar_suppress")
            open_page(page, "Dataset")
            before = _working_copy(page)
            steps = [line for line in before["sidebar"] if re.match(r"\d\. ", line)]
            assert [s.split(":")[0] for s in steps] == ["1. Leakage", "2. Sidebar"], before
            assert (before["k"], before["suppressed"]) == ("3", "10.00")
            assert "Sensitive: none" in before["sidebar"] and "registry.csv" in before["sidebar"]
            assert re.search(r"[?&]project=\d+", page.url), page.url
            records = metric(page, "records")
            _shot(page, "before-reload")

            page.reload(wait_until="commit")  # the browser's reload button
            page.get_by_role("heading", name="Dataset", exact=True).wait_for(timeout=TIMEOUT)
            wait_idle(page, TIMEOUT)
            assert _working_copy(page) == before
            assert metric(page, "records") == records
            # no second shot of the Dataset page at both widths: "before-reload" holds it, and the
            # reloaded page's working copy and records are asserted the same just above

        # the server restarted on the same address
        with dashboard_server(home, port=port, first_sample=SMALL_SAMPLE, preload=False) as url:
            page.reload(wait_until="commit")
            page.get_by_role("heading", name="Dataset", exact=True).wait_for(timeout=TIMEOUT)
            wait_idle(page, TIMEOUT)
            assert _working_copy(page) == before
            package = _download_package(page)
            _shot(page, "after-restart")
            page.goto("about:blank")  # the page leaves before its server stops: it never reconnects to the next one
        released = zipfile.ZipFile(io.BytesIO(package)).read("released.csv")
        store = ProjectStore(f"sqlite:///{home / 'projects.sqlite'}")
        (entry,) = audit_entries(store)
        assert entry.package_sha256 is not None and entry.project == "registry.csv"
        assert entry.released + entry.suppressed == 400

        # the restarted server is gone: the tab goes to the next one; a page of the same site in the same tab
        # costs Chromium about half of a new tab's (its renderer and compiled scripts kept). The next server
        # (another computer: its own store, its own process) answers on the same address, so the browser's
        # cache holds Streamlit's scripts already: on a new port every one of them was fetched from the
        # server and compiled again (about 2.6 CPU-seconds, as a reload without the cache, measured)
        with dashboard_server(fresh_home, port=port, first_sample=SMALL_SAMPLE, preload=False) as url:
            open_app(page, url)
            assert metric(page, "records") == "15"  # an empty store opens nothing: the first sample's 15 records
            open_page(page, "Projects")
            (tmp_path / "release.zip").write_bytes(package)
            for key, path in (("projects_release", tmp_path / "release.zip"), ("projects_release_source", csv)):
                # one at a time, each seen in its uploader before the next (a busy server may drop a rerun)
                page.locator(f'.st-key-{key} input[type="file"]').set_input_files(str(path))
                page.locator(f".st-key-{key}").get_by_text(path.name).first.wait_for(timeout=TIMEOUT)
                wait_idle(page, TIMEOUT)
            click(page, "projects_continue")
            page.get_by_text("2 step(s) re-applied").wait_for(timeout=TIMEOUT)
            _shot(page, "opened-package")
            opened = _working_copy(page)
            assert [x for x in opened["sidebar"] if re.match(r"\d\. ", x)] == steps
            assert (opened["k"], opened["suppressed"]) == ("3", "10.00")
            again = _download_package(page)
        assert zipfile.ZipFile(io.BytesIO(again)).read("released.csv") == released
        project = ProjectStore(f"sqlite:///{fresh_home / 'projects.sqlite'}").summaries()[0]
        restored = ProjectStore(f"sqlite:///{fresh_home / 'projects.sqlite'}").load(project.id).state
        assert restored.source.sha256 == entry.source_sha256
        copy = restored.restore(csv.read_bytes())
        assert release_csv(copy.release()) == released
        context.close()
    assert not errors, errors
