"""A real browser on a longitudinal upload with a person column, at 1440 px with each page also
shot at 1024 px (the release does not depend on the width; how the page lays out does): the
Leakage page's preselected generalization, applied and suppressed where the target allows,
meets k = 5 in people within 5% suppressed people (the Leakage page searched in records and
offered an 'optimal' release that failed its own target); the package downloaded from the
Release page verifies against the upload, and k and the people suppressed are recounted with
pandas on the recipe's replay of the upload; the command line's optimum in people is the
page's.

Server, Chromium and helpers are those of ``live_app.py`` (skipped without Chromium).
Screenshots go to $SCREENSHOT_DIR or a new temporary folder.
"""

from __future__ import annotations

import io
import os
import re
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
from live_app import (
    PAGE_TITLES,
    choose_power,
    click,
    click_package,
    enter_number,
    metric,
    open_app,
    open_page,
    set_role,
    shots_at_both_widths,
    upload,
    wait_idle,
)

WIDTHS = (1440, 1024)


QIS = ["age", "sex", "region"]


def panel_csv(seed: int = 47) -> bytes:
    """600 people followed for 1-5 years: person id, age (it moves with the years), sex,
    region, a diagnosis. A class of five records is often fewer than five people."""
    rng = np.random.default_rng(seed)
    rows = []
    for person in range(600):
        age = int(rng.integers(20, 80))
        sex, region = rng.choice(["F", "M"]), rng.choice(["north", "south", "east", "west", "centre"])
        for year in range(int(rng.integers(1, 6))):
            rows.append((f"P{person:05d}", age + year, sex, region, rng.choice(["I10", "E11", "J45", "F32"])))
    frame = pd.DataFrame(rows, columns=["pid", *QIS, "diagnosis"])
    return frame.to_csv(index=False).encode()


def test_the_person_column_path_meets_the_target_in_people_end_to_end(server, browser, tmp_path) -> None:
    from anonlib.core.dataset import Dataset
    from anonlib.core.loading import load_table
    from anonlib.measures.target import ReleaseTarget
    from anonlib.workflow import verify_package
    from anonlib.workflow.recipe import Recipe, apply_recipe
    from anonlib.workflow.suggestions import find_generalizations

    data = panel_csv()
    csv = tmp_path / "panel.csv"
    csv.write_bytes(data)
    source = pd.read_csv(io.BytesIO(data), dtype=str)
    people = source["pid"].nunique()
    shots = Path(os.environ.get("SCREENSHOT_DIR") or tempfile.mkdtemp(prefix="anonlib-onetruth-"))
    shots.mkdir(parents=True, exist_ok=True)
    width = WIDTHS[0]
    context = browser.new_context(viewport={"width": width, "height": 1000}, accept_downloads=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    open_app(page, server)
    upload(page, csv, f"Read {len(source):,} rows and 5 columns")
    sidebar = page.locator('[data-testid="stSidebar"]')
    set_role(page, 1, "person")
    for row in (2, 3, 4):
        set_role(page, row, "quasi-identifier")
    set_role(page, 5, "ignore")
    enter_number(page, "target_k", "5")
    enter_number(page, "target_suppressed", "5")
    assert "(counted in people)" in sidebar.inner_text()

    open_page(page, "Leakage & anonymization")
    page.locator(".st-key-leakage_apply button").first.wait_for(timeout=300_000)
    shots_at_both_widths(page, shots, "onetruth-leakage")
    click(page, "leakage_apply")
    if page.locator(".st-key-sidebar_suppress button").count():
        assert not page.locator(".st-key-sidebar_suppress_cells button").count()  # cells match records
        click(page, "sidebar_suppress")
    text = sidebar.inner_text()
    assert re.search(r"Met: all [\d,]+ people \([\d,]+ records\) are in classes meeting k = 5", text), text
    assert "(counted in people)" in text
    met = re.search(r"Met: all [^.]*\.", text).group(0)
    # a reload mid-work loses nothing the user did: the steps and the verdict come back
    page.reload(wait_until="commit")
    page.get_by_role("heading", name="Leakage & anonymization", exact=True).wait_for(timeout=300_000)
    wait_idle(page, 300_000)
    after = sidebar.inner_text()
    assert met in after and "1. Leakage:" in after, after

    open_page(page, "Release")
    page.get_by_text("Columns released and left out").wait_for(timeout=300_000)
    wait_idle(page, 300_000)
    body = page.locator('[data-testid="stMain"]').inner_text()
    assert "Traceback" not in body and "Something unexpected went wrong" not in body
    shots_at_both_widths(page, shots, "onetruth-release")
    with page.expect_download(timeout=300_000) as download:
        click_package(page)
    package = Path(download.value.path()).read_bytes()
    checks = verify_package(package, data, source_name=csv.name)
    assert checks.failed_parts == (), checks.checks

    # recounted with pandas on the recipe's replay of the upload (the person column kept there)
    recipe = Recipe.loads(zipfile.ZipFile(io.BytesIO(package)).read("recipe.json").decode("utf-8"))
    replay = apply_recipe(recipe, data, name=csv.name)
    assert replay.reproduces
    released = replay.dataset.frame
    assert released.groupby(QIS)["pid"].nunique().min() >= 5
    suppressed = people - released["pid"].nunique()
    assert suppressed / people <= 0.05 and suppressed == replay.check.suppressed_persons
    levels_seen = [tuple(s.step.to_json().get("levels", ()) for s in recipe.steps)]
    linked_journey(page, sidebar, source, shots)
    assert not errors, errors
    context.close()

    # the page's optimum in people is the command line's (the same search, the same target)
    loaded = load_table(data, name=csv.name).frame
    roles = {"pid": "person", **dict.fromkeys(QIS, "quasi-identifier")}
    dataset = Dataset.from_frame(csv.name, loaded, roles)
    frame, _ = dataset.analysis_frame(QIS, person=True)
    from anonlib.core.default_hierarchy import default_hierarchy

    hierarchies = {a: default_hierarchy(frame[a], a)[1] for a in QIS}
    found = find_generalizations(dataset, frame, QIS, hierarchies, target=ReleaseTarget(5, max_suppressed=0.05))
    optimal = found.results["optimal"]
    assert optimal.target.unit == "people"
    released_levels = {item["attribute"]: item["level"] for item in levels_seen[0][0]}
    assert released_levels == optimal.levels  # the page released the optimum in people
    saved = sorted(shots.glob("*-onetruth-*.png"))
    assert len(saved) == 6 and all(p.stat().st_size > 10_000 for p in saved)
    print(f"\nscreenshots: {shots}")


def linked_journey(page, sidebar, source: pd.DataFrame, shots: Path) -> None:
    """The person column released as a pseudonym (``linkable.md``): back to the loaded file, pid
    pseudonymised; the target then counts each person's whole history, the Dataset page's people
    unique on their history are pandas's, the Leakage page's optimum in histories is the command
    line's, the adversary's power survives a reload, and k back and forth on every page with
    linked records raises no error."""
    from anonlib.core.default_hierarchy import default_hierarchy
    from anonlib.measures.target import ReleaseTarget
    from anonlib.transformations.generalization import release_search
    from tests.health_data import history_sharing

    click(page, "sidebar_reset")
    open_page(page, "Dataset")
    page.locator(".st-key-health_pseudonym_apply button").first.click()
    wait_idle(page, 300_000)
    assert "over each person's whole history" in sidebar.inner_text()
    unique = int(metric(page, "people unique on their history").replace(",", ""))
    assert unique == int((history_sharing(source, QIS, "pid") == 1).sum())
    shots_at_both_widths(page, shots, "onetruth-linked-dataset")

    open_page(page, "Leakage & anonymization")
    page.get_by_text("Generalization to apply").wait_for(timeout=300_000)
    wait_idle(page, 300_000)
    shown = page.locator('[data-testid="stMain"]').inner_text()
    frame = source.copy()
    frame["age"] = pd.to_numeric(frame["age"])
    hierarchies = {a: default_hierarchy(frame[a], a)[1] for a in QIS}
    target = ReleaseTarget(5, max_suppressed=0.05, person="pid", linked=("pid",))
    optimum = release_search(frame[["pid", *QIS]], QIS, hierarchies, "optimal", target=target)
    assert f"{optimum.utility:.4f}" in shown, shown[:2000]  # the page's optimum in histories is the library's

    # the adversary knows any 2 of a person's records; a reload keeps the unit and the power
    choose_power(page, "any 2 of a person's records")
    page.reload(wait_until="commit")
    page.get_by_role("heading", name="Leakage & anonymization", exact=True).wait_for(timeout=300_000)
    wait_idle(page, 300_000)
    text = sidebar.inner_text()
    assert "(k = 5 on any 2 of a person's records)" in text, text
    # k back and forth on every page with linked records: no error, the same verdict back
    verdict = re.search(r"(Met|Not met)[^.]*\.", text).group(0)
    for title in PAGE_TITLES:
        open_page(page, title)
        enter_number(page, "target_k", "10")
        enter_number(page, "target_k", "5")
        body = page.locator('[data-testid="stMain"]').inner_text()
        assert "Something unexpected went wrong" not in body and "Traceback" not in body, title
        assert page.locator('[data-testid="stException"]').count() == 0, title
        assert verdict in sidebar.inner_text(), title
