"""A real browser on a longitudinal upload (several visits per person): mark the medical
record number as the person column and the visit date as kept, release the record number as
a pseudonym, shift the dates per person, suppress the people still failing, and see the
target met in people; screenshots of the Dataset and Release pages at 1440 and 1024 px (the
journey runs once, at 1440 px: what it computes does not depend on the width; how the page lays
out does).

Server, Chromium and helpers are those of ``live_app.py`` (skipped without Chromium, as the
other browser tests). Screenshots go to $SCREENSHOT_DIR or a new temporary folder.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from live_app import (
    choose_power,
    click,
    enter_number,
    metric,
    open_app,
    open_page,
    set_role,
    shots_at_both_widths,
    upload,
)

WIDTHS = (1440, 1024)


def _visits_csv(seed: int = 36) -> bytes:
    """80 patients, 1-5 visits each: mrn (leading zeros), visit date, age band, sex, diagnosis."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(80):
        mrn = f"{rng.integers(10**5, 10**6):07d}"
        band, sex = rng.choice(["20-39", "40-59", "60-79"]), rng.choice(["F", "M"])
        start = pd.Timestamp("2021-01-01") + pd.Timedelta(days=int(rng.integers(0, 600)))
        for v in range(int(rng.integers(1, 6))):
            day = start + pd.Timedelta(days=int(35 * v + rng.integers(0, 20)))
            rows.append((mrn, day.strftime("%Y-%m-%d"), band, sex, rng.choice(["I10", "E11", "J45"])))
    frame = pd.DataFrame(rows, columns=["mrn", "visit_date", "age_band", "sex", "diagnosis"])
    return frame.to_csv(index=False).encode()


def test_longitudinal_upload_pseudonym_date_shift_and_target_met_in_people(server, browser, tmp_path) -> None:
    csv = tmp_path / "visits.csv"
    csv.write_bytes(_visits_csv())
    frame = pd.read_csv(csv, dtype=str)
    shots = Path(os.environ.get("SCREENSHOT_DIR") or tempfile.mkdtemp(prefix="anonlib-health-"))
    shots.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": WIDTHS[0], "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc, errors=errors: errors.append(str(exc)))
    open_app(page, server)
    upload(page, csv, f"Read {len(frame):,} rows and 5 columns")
    sidebar = page.locator('[data-testid="stSidebar"]')

    set_role(page, 1, "person")  # mrn: whose record it is
    set_role(page, 2, "keep")  # visit_date: released (shifted), not counted in classes
    assert metric(page, "people") == "80" and metric(page, "records") == f"{len(frame):,}"
    k_people = frame.groupby(["age_band", "sex"])["mrn"].nunique().min()
    assert metric(page, "k (people)") == str(k_people)

    click(page, "health_pseudonym_apply")
    assert "mrn released as a keyed pseudonym" in sidebar.inner_text()
    click(page, "health_shift_apply")
    assert "visit_date shifted by one offset per person (mrn)" in sidebar.inner_text()

    enter_number(page, "target_suppressed", "30")
    # the released pseudonym links each person's visits: the target counts whole histories; an attacker
    # knowing any 1 of a person's visits asks each class to hold 10 people
    assert "person's whole history" in sidebar.inner_text() or "any 1 of a person's records" in sidebar.inner_text()
    choose_power(page, "any 1 of a person's records")  # (the session keeps the last project's target)
    enter_number(page, "target_k", "10")  # some classes hold fewer than 10 people: whole people are suppressed
    assert "Met once" in sidebar.inner_text() or "Met:" in sidebar.inner_text()
    if page.locator(".st-key-sidebar_suppress button").count():
        click(page, "sidebar_suppress")
    text = sidebar.inner_text()
    assert re.search(
        r"Met: all [\d,]+ people \([\d,]+ records\) share any 1 of their records with at least 10", text
    ), text
    assert re.search(r"[\d,]+ people \([\d.]+%; [\d,]+ records\) suppressed so far", text), text
    body = page.locator("body").inner_text()
    assert "Traceback" not in body and "Something unexpected went wrong" not in body
    shots_at_both_widths(page, shots, "health-dataset")

    open_page(page, "Release")
    page.get_by_text("Columns released and left out").wait_for(timeout=120_000)
    body = page.locator("body").inner_text()
    assert "Counted in people:" in body and "Traceback" not in body
    shots_at_both_widths(page, shots, "health-release")
    assert not errors, errors
    context.close()
    saved = sorted(shots.glob("*-health-*.png"))
    assert len(saved) == 4 and all(p.stat().st_size > 10_000 for p in saved)
    print(f"\nscreenshots: {shots}")
