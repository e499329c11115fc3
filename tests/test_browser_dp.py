"""A real browser: upload a patient file, make the k-anonymous release (the optimal generalization
on Leakage) and the private release (OpenDP) of it, both compared on the Release page at 1440
and 1024 px, and the private package downloaded and verified against the uploaded file.

Needs Debian's Chromium (skipped without it, except in CI) and the dp extra (skipped without
it). Screenshots go to ``test-artifacts/`` (``dp-<width>-release.png``)."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from live_app import ROOT, click, full_screenshot, metric, open_app, open_page, upload, wait_idle
from test_browser import _CUT
from uploads import patients_csv

from anonlib.transformations.synthesis import opendp_version
from anonlib.workflow import verify_package

ARTIFACTS = ROOT / "test-artifacts"
pytestmark = pytest.mark.skipif(opendp_version() is None, reason="OpenDP (the dp extra) is not installed")


@pytest.mark.parametrize("width", [1440, 1024])
def test_k_anonymous_and_private_release_compared_on_one_page_and_the_package_verifies(
    server, browser, tmp_path, width
) -> None:
    data = patients_csv()
    csv = tmp_path / "patients.csv"
    csv.write_bytes(data)
    context = browser.new_context(viewport={"width": width, "height": 1000}, accept_downloads=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc, errors=errors: errors.append(str(exc)))
    open_app(page, server)
    upload(page, csv, "Read 2,000 rows and 5 columns")
    sidebar = page.locator('[data-testid="stSidebar"]')
    assert "Quasi-identifiers: age, sex, zip" in sidebar.inner_text()

    # the k-anonymous release: the optimal generalization on Leakage
    open_page(page, "Leakage & anonymization")
    page.locator(".st-key-leakage_apply button").first.wait_for(timeout=300_000)
    click(page, "leakage_apply")
    assert "1. Leakage:" in sidebar.inner_text()

    # the Release page: the k-anonymous release measured, then the private one made beside it
    open_page(page, "Release")
    page.get_by_text("Predicting diagnosis from").first.wait_for(timeout=300_000)
    wait_idle(page, 300_000)
    released = metric(page, "records in the release")
    page.get_by_role("heading", name="Private release", exact=True).wait_for(timeout=60_000)
    run = page.locator(".st-key-private_run button").first
    assert run.is_disabled()  # the value lists, cuts and bounds are not confirmed yet
    page.locator(".st-key-private_confirmed label").first.click()
    wait_idle(page, 300_000)
    assert run.is_enabled()
    body = page.locator('[data-testid="stMain"]').inner_text()
    assert "estimated at about" in body and "ρ = 4.5" in body
    click(page, "private_run")
    page.get_by_role("heading", name="The two releases side by side").wait_for(timeout=600_000)
    wait_idle(page, 300_000)

    body = page.locator('[data-testid="stMain"]').inner_text()
    assert "Traceback" not in body and "Something unexpected went wrong" not in body
    assert metric(page, "records in the release") == released  # the k-anonymous release is still on the page
    assert metric(page, "ρ") == "4.5" and metric(page, "ε") == "3"
    synthetic = int(metric(page, "synthetic records").replace(",", ""))
    assert 5_000 < synthetic < 7_000  # three times the DP count of 2,000 records
    for words in ("k-anonymous release", "Private release", "Every one- and two-way marginal", "Predicting diagnosis"):
        assert words in body, words
    assert page.locator('[data-testid="stPlotlyChart"]').count() >= 6  # both releases' charts on one page
    cut = page.evaluate(_CUT)
    assert not cut, cut
    ARTIFACTS.mkdir(exist_ok=True)
    full_screenshot(page, ARTIFACTS / f"dp-{width}-release.png")

    # the private package, downloaded as a person would, verifies against the upload
    with page.expect_download(timeout=300_000) as download:
        page.get_by_role("button", name="Private package (zip)").first.click()
    package = Path(download.value.path()).read_bytes()
    checks = verify_package(package, data, source_name=csv.name)
    assert checks.failed_parts == (), checks.checks
    archive = zipfile.ZipFile(io.BytesIO(package))
    recipe = json.loads(archive.read("recipe.json"))
    assert recipe["privacy"]["epsilon"] == 3.0 and recipe["rows"] == synthetic and recipe["reproducible"] is False
    assert recipe["columns"] == ["age", "sex", "zip", "diagnosis"]
    if recipe["release"]["checks_passed"]:
        table = pd.read_csv(io.BytesIO(archive.read("synthetic.csv")))
        assert len(table) == synthetic and list(table.columns) == recipe["columns"]
    else:
        assert "synthetic.csv" not in archive.namelist() and "dp_tables.csv" in archive.namelist()
    assert not errors, errors
    context.close()
