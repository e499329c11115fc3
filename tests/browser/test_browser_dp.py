"""A real browser on the private release's path with its defaults, on a panel file (one row per
person and year): upload it, give the person column its role, see the file's privacy budget,
declare the value lists public, give the records kept per person (asked for, never 1 by default),
make the private release per person with the default method, ε and columns, read the budget line
again right after the run (the store's spend, not the one before), download the private package
(OpenDP's output and the declared inputs only: no record count, no comparison) and verify it; then,
at 1024 px in a second session over the same store, the next release past the file's budget is
refused on the page (the same tab, its page loaded again: a new session of the app).

Needs Debian's Chromium (skipped without it, except in CI) and the dp extra (skipped without it).
One server over one project store serves both widths (the budget is the file's, so the second
session sees the first one's spend; one release, not two). Screenshots go to ``test-artifacts/``
(``dp-1440-release.png``, ``dp-1024-refused.png``)."""

from __future__ import annotations

import io
import json
import os
import re
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from live_app import (
    ROOT,
    dashboard_server,
    enter_number,
    full_screenshot,
    open_app,
    open_page,
    press,
    set_role,
    upload,
    wait_idle,
)

from anonlib.transformations.synthesis import opendp_version
from anonlib.workflow import verify_package

ARTIFACTS = ROOT / "test-artifacts"
pytestmark = pytest.mark.skipif(opendp_version() is None, reason="OpenDP (the dp extra) is not installed")
BUDGET = 4.0  # the file's total ε: one release at the default ε = 3 fits, a second does not
YEARS = 4  # each person is followed for at most four years: the records kept per person, by design


def panel_csv(seed: int = 48) -> bytes:
    """400 people followed for 1-4 years: person id, age band, sex, region, a diagnosis."""
    rng = np.random.default_rng(seed)
    rows = []
    for person in range(400):
        band, sex = rng.choice(["20-39", "40-59", "60-79"]), rng.choice(["F", "M"])
        region = rng.choice(["north", "south", "east", "west"])
        for _ in range(int(rng.integers(1, YEARS + 1))):
            rows.append((f"P{person:05d}", band, sex, region, rng.choice(["flu", "asthma", "copd"])))
    return pd.DataFrame(rows, columns=["pid", "age_band", "sex", "region", "diagnosis"]).to_csv(index=False).encode()


def main_text(page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


def budget_line(page) -> str:
    return re.search(r"Privacy budget of panel\.csv: [^\n]*", main_text(page)).group(0)


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("dp-home")


@pytest.fixture(scope="module")
def dp_server(home):
    with dashboard_server(home=home) as url:
        yield url


def test_the_defaults_release_per_person_and_the_budget_line_follows_the_store(
    browser, dp_server, home, tmp_path, monkeypatch
) -> None:
    from anonlib.projects import ProjectStore, budget_of, set_budget

    data = panel_csv()
    csv = tmp_path / "panel.csv"
    csv.write_bytes(data)
    frame = pd.read_csv(io.BytesIO(data))
    monkeypatch.setenv("ANONLIB_HOME", str(home))
    monkeypatch.delenv("ANONLIB_STORE", raising=False)

    # 1440 px: the release with the defaults, per person
    context = browser.new_context(viewport={"width": 1440, "height": 1000}, accept_downloads=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc, errors=errors: errors.append(str(exc)))
    open_app(page, dp_server)
    upload(page, csv, f"Read {len(frame):,} rows and 5 columns")
    set_role(page, 1, "person")  # the first change saves the project
    store = ProjectStore()
    (project,) = store.summaries()
    set_budget(store, project.id, epsilon=BUDGET)  # as `projects budget NAME --epsilon 4` does: an audit entry

    open_page(page, "Release")
    page.get_by_role("heading", name="Private release", exact=True).wait_for(timeout=300_000)
    wait_idle(page, 300_000)
    body = main_text(page)
    assert "The unit protected is the person (pid): give the records kept per person." in body
    assert budget_line(page).startswith(f"Privacy budget of panel.csv: ε = 0 of {BUDGET:g} spent")
    run = page.locator(".st-key-private_run button").first
    assert run.is_disabled()  # the value lists are not declared public yet (and δ = 0)
    press(page, page.locator(".st-key-private_confirmed label").first)
    assert run.is_disabled()  # the records kept per person are asked for
    enter_number(page, "private_records_per_person", str(YEARS))
    assert f"at most {YEARS} records each" in main_text(page)
    assert run.is_enabled()
    run.click()
    page.get_by_role("heading", name="The two releases side by side").wait_for(timeout=600_000)
    wait_idle(page, 300_000)
    body = main_text(page)
    assert "Traceback" not in body and "Something unexpected went wrong" not in body
    # the line reads the store after the run: the spend is there, and the next release is refused
    assert budget_line(page).startswith(f"Privacy budget of panel.csv: ε = 3 of {BUDGET:g} spent (1 left)")
    assert budget_of(store, project.id).epsilon_spent == 3.0
    assert "past its total: ε = 3 of 4 is spent and 1 is left" in body
    assert "any attacker, whatever they know, up to the factor e^ε per person" in body  # side by side: holds against
    ARTIFACTS.mkdir(exist_ok=True)
    full_screenshot(page, ARTIFACTS / "dp-1440-release.png")

    # the private package: OpenDP's output and declared inputs only, per person; it verifies
    with page.expect_download(timeout=300_000) as download:
        page.get_by_role("button", name="Private package (zip)").first.click()
    package = Path(download.value.path()).read_bytes()
    checks = verify_package(package)
    assert checks.failed_parts == (), checks.checks
    archive = zipfile.ZipFile(io.BytesIO(package))
    assert "report.html" not in archive.namelist()
    recipe = json.loads(archive.read("recipe.json"))
    assert recipe["privacy"]["unit"] == "person" and recipe["privacy"]["records_per_person"] == YEARS
    assert recipe["privacy"]["epsilon"] == 3.0 and recipe["method"]["name"] == "mst"
    assert recipe["columns"] == ["age_band", "sex", "region", "diagnosis"]  # the default columns
    synthetic = pd.read_csv(io.BytesIO(archive.read("synthetic.csv")))
    assert recipe["rows"] == len(synthetic)  # the DP count of the records kept, not a multiple of it
    assert abs(len(synthetic) - len(frame)) < 0.1 * len(frame)
    text = json.dumps(recipe)
    assert f"{len(frame):,}" not in text and f'"records": {len(frame)}' not in text
    assert not {"source", "records", "comparison", "checks"} & set(recipe)  # nothing read from the records
    assert not errors, errors

    # 1024 px, another session over the same store and file: the next release is past the budget. The
    # same tab loads the Release page's address, as a bookmark opens it: a page load is a new session of
    # the app (nothing of the first one's state is kept in the browser), which opens the last project (the
    # same file) on that page, not first on the Dataset page (drawing it cost Chromium some 5 CPU-seconds);
    # a load in the tab's running renderer cost Chromium about 3 CPU-seconds against 7 in a new context
    page.set_viewport_size({"width": 1024, "height": 1000})
    page.goto(f"{dp_server}/release", wait_until="commit", timeout=300_000)
    page.get_by_role("heading", name="Release", exact=True).first.wait_for(timeout=300_000)
    page.get_by_role("heading", name="Private release", exact=True).wait_for(timeout=300_000)
    wait_idle(page, 300_000)
    press(page, page.locator(".st-key-private_confirmed label").first)
    enter_number(page, "private_records_per_person", str(YEARS))
    body = main_text(page)
    assert budget_line(page).startswith(f"Privacy budget of panel.csv: ε = 3 of {BUDGET:g} spent (1 left)")
    assert "past its total" in body, body[-3000:]
    assert page.locator(".st-key-private_run button").first.is_disabled()
    full_screenshot(page, ARTIFACTS / "dp-1024-refused.png", put_back=False)  # closed next: no second layout
    assert not errors, errors
    context.close()
    assert os.path.getsize(ARTIFACTS / "dp-1440-release.png") > 10_000
