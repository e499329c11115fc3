"""A real browser on the private release's path, at 1440 and 1024 px: upload a panel file (one
row per person and year), give the person column its role, declare the value lists, cuts and
bounds public, see the project's privacy budget, make the private release per person, download
the private package (OpenDP's output and the declared inputs only: no record count, no
comparison) and verify it; the next release, past the budget, is refused on the page.

Needs Debian's Chromium (skipped without it, except in CI) and the dp extra (skipped without
it). Each width runs its own server over a project store of its own (the budget is set there
with the library, as ``projects budget`` does). Screenshots go to ``test-artifacts/``
(``dp-<width>-release.png``, ``dp-<width>-refused.png``)."""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from live_app import ROOT, dashboard_server, full_screenshot, open_app, open_page, press, set_role, upload, wait_idle

from anonlib.transformations.synthesis import opendp_version
from anonlib.workflow import verify_package

ARTIFACTS = ROOT / "test-artifacts"
pytestmark = pytest.mark.skipif(opendp_version() is None, reason="OpenDP (the dp extra) is not installed")
BUDGET = 4.0  # the project's total ε: one release at the default ε = 3 fits, a second does not


def panel_csv(seed: int = 48) -> bytes:
    """400 people followed for 1-4 years: person id, age band, sex, region, a diagnosis."""
    rng = np.random.default_rng(seed)
    rows = []
    for person in range(400):
        band, sex = rng.choice(["20-39", "40-59", "60-79"]), rng.choice(["F", "M"])
        region = rng.choice(["north", "south", "east", "west"])
        for _ in range(int(rng.integers(1, 5))):
            rows.append((f"P{person:05d}", band, sex, region, rng.choice(["flu", "asthma", "copd"])))
    return pd.DataFrame(rows, columns=["pid", "age_band", "sex", "region", "diagnosis"]).to_csv(index=False).encode()


@pytest.mark.parametrize("width", [1440, 1024])
def test_private_release_per_person_within_the_projects_budget(browser, tmp_path, width, monkeypatch) -> None:
    from anonlib.projects import ProjectStore, budget_of, set_budget

    data = panel_csv()
    csv = tmp_path / "panel.csv"
    csv.write_bytes(data)
    home = tmp_path / "home"
    home.mkdir()
    with dashboard_server(home=home) as server:
        context = browser.new_context(viewport={"width": width, "height": 1000}, accept_downloads=True)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc, errors=errors: errors.append(str(exc)))
        open_app(page, server)
        frame = pd.read_csv(io.BytesIO(data))
        upload(page, csv, f"Read {len(frame):,} rows and 5 columns")
        set_role(page, 1, "person")  # the first change saves the project

        # the project's total privacy budget, set as `projects budget NAME --epsilon 4` does
        monkeypatch.setenv("ANONLIB_HOME", str(home))
        monkeypatch.delenv("ANONLIB_STORE", raising=False)
        store = ProjectStore()
        (project,) = store.summaries()
        set_budget(store, project.id, epsilon=BUDGET)

        open_page(page, "Release")
        page.get_by_role("heading", name="Private release", exact=True).wait_for(timeout=300_000)
        wait_idle(page, 300_000)
        body = page.locator('[data-testid="stMain"]').inner_text()
        assert "The unit protected is the person (pid)" in body
        assert "Privacy budget of the project" in body and f"{BUDGET:g}" in body
        run = page.locator(".st-key-private_run button").first
        assert run.is_disabled()  # the value lists are not declared public yet (and δ = 0)
        press(page, page.locator(".st-key-private_confirmed label").first)
        assert run.is_enabled()
        run.click()
        page.get_by_role("heading", name="The two releases side by side").wait_for(timeout=600_000)
        wait_idle(page, 300_000)
        body = page.locator('[data-testid="stMain"]').inner_text()
        assert "Traceback" not in body and "Something unexpected went wrong" not in body
        ARTIFACTS.mkdir(exist_ok=True)
        full_screenshot(page, ARTIFACTS / f"dp-{width}-release.png")

        # the private package: OpenDP's output and declared inputs only, per person; it verifies
        with page.expect_download(timeout=300_000) as download:
            page.get_by_role("button", name="Private package (zip)").first.click()
        package = Path(download.value.path()).read_bytes()
        checks = verify_package(package)
        assert checks.failed_parts == (), checks.checks
        archive = zipfile.ZipFile(io.BytesIO(package))
        assert "report.html" not in archive.namelist()
        recipe = json.loads(archive.read("recipe.json"))
        assert recipe["privacy"]["unit"] == "person" and recipe["privacy"]["records_per_person"] == 1
        assert recipe["privacy"]["epsilon"] == 3.0
        text = json.dumps(recipe)
        assert f"{len(frame):,}" not in text and f'"records": {len(frame)}' not in text
        assert not {"source", "records", "comparison", "checks"} & set(recipe)  # nothing read from the records

        # spent before it measured: ε = 3 of 4; another release at ε = 3 is refused on the page
        assert budget_of(store, project.id).epsilon_spent == pytest.approx(3.0)
        open_page(page, "Projects")
        open_page(page, "Release")
        page.get_by_role("heading", name="Private release", exact=True).wait_for(timeout=300_000)
        wait_idle(page, 300_000)
        body = page.locator('[data-testid="stMain"]').inner_text()
        assert "past the project's budget" in body, body[-3000:]
        assert page.locator(".st-key-private_run button").first.is_disabled()
        full_screenshot(page, ARTIFACTS / f"dp-{width}-refused.png")
        assert not errors, errors
        context.close()
    assert os.path.getsize(ARTIFACTS / f"dp-{width}-release.png") > 10_000
