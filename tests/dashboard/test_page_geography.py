"""AppTest of the Geography page: move the main controls and check the numbers shown."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from anonlib.core.dataset import Dataset
from anonlib.transformations.geo import aggregate, qi_entropy, sample_regions, site_count
from anonlib.transformations.synthetic import PEOPLE_ATTRIBUTES, synthetic_people

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "geography.py")


def unescaped(text: str) -> str:
    """An st.error body as the reader sees it: Markdown backslash escapes removed."""
    return re.sub(r"\\(.)", r"\1", text)


def _metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def _expected(k: int, n_sites: int | None = None, method: str = "balanced", attributes=PEOPLE_ATTRIBUTES):
    regions = sample_regions("tennessee_zcta")
    people = synthetic_people(regions.points, attributes=list(attributes), seed=0)
    if n_sites is None:
        n_sites = site_count(int(people["count"].sum()), regions.n_regions, cutoff=100_000).n_sites
    return aggregate(
        regions.points,
        people,
        region="region_id",
        quasi_identifiers=list(attributes),
        k=k,
        n_sites=n_sites,
        method=method,
        count="count",
        seed=0,
    )


@pytest.fixture(scope="module")
def page() -> AppTest:
    """The default sample (Adult) has no area ids: the page says so and offers the bundled example."""
    at = AppTest.from_file(PAGE, default_timeout=180).run()
    assert not at.exception
    assert at.radio(key="geo_records").value.startswith("Your working copy")
    assert any("Geography needs a column of area ids" in unescaped(i.value) for i in at.info)
    assert not at.metric  # nothing runs on a file without area ids
    at.button(key="geo_use_example").click().run()
    assert not at.exception
    assert at.radio(key="geo_records").value.startswith("Bundled example")
    return at


def test_default_tennessee_run_shows_the_library_numbers(page):
    expected = _expected(5)
    assert _metric(page, "suppressed records") == f"{expected.suppressed:,}"
    assert _metric(page, "aggregated regions") == "63"
    assert _metric(page, "mean distance to site") == f"{expected.mean_distance_km:,.1f} km"
    assert _metric(page, "non-uniform entropy") == f"{expected.nonuniform_entropy:,.0f} bits"
    # Comparison table: one row per method, balanced first.
    table = page.dataframe[0].value
    assert list(table["method"]) == [
        "Balanced density",
        "Anonymity-driven clustering (ADC)",
        "Population-weighted k-means",
    ]
    assert int(table.loc[0, "suppressed records"]) == expected.suppressed
    assert int(table.loc[0, "discernibility"]) == expected.discernibility
    assert table["records"].tolist() == [expected.records] * 3
    assert len(page.get("plotly_chart")) == 2


def test_moving_k_updates_suppression(page):
    page.slider(key="geo_k").set_value(20).run()
    assert not page.exception
    expected = _expected(20)
    assert _metric(page, "suppressed records") == f"{expected.suppressed:,}"
    assert expected.suppressed > _expected(5).suppressed


def test_direct_number_of_sites_and_method(page):
    page.radio(key="geo_site_mode").set_value("chosen directly").run()
    page.slider(key="geo_sites").set_value(30).run()
    page.selectbox(key="geo_method").set_value("kmeans").run()
    assert not page.exception
    expected = _expected(20, n_sites=30, method="kmeans")
    assert _metric(page, "suppressed records") == f"{expected.suppressed:,}"
    assert int(_metric(page, "aggregated regions")) == int((expected.sites["regions"] > 0).sum())


def test_cutoff_models_and_colouring(page):
    page.radio(key="geo_site_mode").set_value("from a population cut-off").run()
    page.selectbox(key="geo_model").set_value("Max-combinations model (ours: G = k x MaxCombs)").run()
    assert not page.exception
    # k = 20, MaxCombs = 2 x 16 x 5 = 160: G = 3,200, S = round(6,339,942 / 3,200) = 1,981 -> clamped to 625.
    assert any("= 1,981" in c.value and "625 regions" in c.value for c in page.caption)
    page.selectbox(key="geo_colour").set_value("suppressed_share").run()
    page.selectbox(key="geo_palette").set_value(page.selectbox(key="geo_palette").options[1]).run()
    assert not page.exception


def test_active_dataset_with_zip_column_and_unmatched_ids():
    regions = sample_regions("tennessee_zcta")
    rng = np.random.default_rng(1)
    zips = rng.choice(regions.points["region_id"].to_numpy(), 3000)
    zips[:4] = ["99999", "99999", "00000", "99999"]
    frame = pd.DataFrame(
        {"zip": zips, "sex": rng.choice(["f", "m"], 3000), "age": rng.integers(20, 80, 3000) // 10 * 10}
    )
    dataset = Dataset.from_frame(
        "clinic", frame, {"zip": "ignore", "sex": "quasi-identifier", "age": "quasi-identifier"}
    )
    at = AppTest.from_file(PAGE, default_timeout=180)
    at.session_state["active_dataset"] = dataset
    at.session_state["active_source"] = "upload:clinic.csv"
    at.run()
    assert not at.exception
    assert at.selectbox(key="geo_region_column").value == "zip"
    unmatched = [unescaped(w.value) for w in at.warning if "are not areas of" in unescaped(w.value)]
    assert len(unmatched) == 1 and unmatched[0].startswith("4 records (0.1%) have area ids") and "99999" in unmatched[0]
    points = regions.points
    kept = frame[~frame["zip"].isin(["99999", "00000"])]
    # The cut-off applies to the 2,996 records linked to an area, not to Tennessee's 6.34 M
    # people (which would give 63 regions for 3,000 records): S = round(2,996 / 100,000) -> 1.
    n_sites = site_count(len(kept), regions.n_regions, cutoff=100_000).n_sites
    assert n_sites == 1
    assert any(c.value.startswith("N = 2,996 records linked to an area;") for c in at.caption)
    expected = aggregate(points, kept, region="zip", quasi_identifiers=["sex", "age"], k=5, n_sites=n_sites)
    assert _metric(at, "suppressed records") == f"{expected.suppressed:,}"
    assert _metric(at, "aggregated regions") == "1"
    assert not [i for i in at.info if "Your release target counts" in i.value]  # counted in records: no note


def test_a_target_in_people_is_told_the_aggregation_counts_records():
    """With a person column the release target counts people, and VBAS counts records per region:
    the page says which unit its suppressed records are in, and runs as before (in records)."""
    regions = sample_regions("tennessee_zcta")
    rng = np.random.default_rng(3)
    people = pd.DataFrame(
        {
            "pid": [f"p{i}" for i in range(600)],
            "zip": rng.choice(regions.points["region_id"].to_numpy(), 600),
            "sex": rng.choice(["f", "m"], 600),
        }
    )
    frame = people.loc[people.index.repeat(rng.integers(1, 4, 600))].reset_index(drop=True)
    frame["age"] = rng.integers(20, 80, len(frame)) // 20 * 20
    roles = {"pid": "person", "zip": "ignore", "sex": "quasi-identifier", "age": "quasi-identifier"}
    at = AppTest.from_file(PAGE, default_timeout=180)
    at.session_state["active_dataset"] = Dataset.from_frame("panel", frame, roles)
    at.session_state["active_source"] = "upload:panel.csv"
    at.run()
    assert not at.exception
    notes = [unescaped(i.value) for i in at.info if "Your release target counts" in unescaped(i.value)]
    assert len(notes) == 1 and notes[0].startswith("Your release target counts people (k = 5); regional aggregation")
    n_sites = site_count(len(frame), regions.n_regions, cutoff=100_000).n_sites
    expected = aggregate(regions.points, frame, region="zip", quasi_identifiers=["sex", "age"], k=5, n_sites=n_sites)
    assert _metric(at, "suppressed records") == f"{expected.suppressed:,}"


def test_all_us_areas_with_a_small_file_scale_the_cutoff_and_warn():
    """The issue's case: 2,000 records over all US ZIP areas. The US population would give
    3,125 regions (98.7% suppressed); the records linked give a handful, and a run that still
    suppresses many records says so and what to change."""
    us = sample_regions("us_zcta").points
    rng = np.random.default_rng(7)
    weights = us["population"].to_numpy(float) / us["population"].sum()
    frame = pd.DataFrame(
        {
            "zip": rng.choice(us["region_id"].to_numpy(), 2000, p=weights),
            "age": rng.integers(18, 90, 2000),
            "sex": rng.choice(["f", "m"], 2000),
            "race": rng.choice(["a", "b", "c", "d", "e"], 2000),
        }
    )
    dataset = Dataset.from_frame("patients", frame)
    at = AppTest.from_file(PAGE, default_timeout=300)
    at.session_state["active_dataset"] = dataset
    at.session_state["active_source"] = "upload:patients.csv"
    at.run()
    assert at.selectbox(key="geo_areas").value == "us_zcta"  # chosen from the zip column's values
    at.selectbox(key="geo_model").set_value("Entropy model (ours: G = k x 2^H)").run()
    assert not at.exception, at.exception
    h = qi_entropy(frame, ["age", "sex", "race"])
    expected_sites = site_count(2000, len(us), model="entropy", k=5, entropy_bits=h).n_sites
    assert expected_sites < 10  # not 3,125
    result = aggregate(
        us, frame, region="zip", quasi_identifiers=["age", "sex", "race"], k=5, n_sites=expected_sites, count=None
    )
    assert _metric(at, "aggregated regions") == f"{int((result.sites['regions'] > 0).sum()):,}"
    assert _metric(at, "suppressed records") == f"{result.suppressed:,}"
    assert result.suppressed_share > 0.05  # age in years x sex x race on 2,000 records: many small groups
    warnings = [unescaped(w.value) for w in at.warning if "are suppressed, more than the 5%" in unescaped(w.value)]
    assert len(warnings) == 1 and warnings[0].startswith(
        f"{100 * result.suppressed_share:.1f}% of the records ({result.suppressed:,} of 2,000) are suppressed"
    )
    assert "coarser quasi-identifiers (e.g. age in bands)" in warnings[0].lower()
    if expected_sites == 1:  # one region already: fewer sites cannot help, and the sentence does not say it would
        assert "fewer sites" not in warnings[0].lower()
    # The aggregation against the release target (k = 5 on zip x age x sex x race): the records
    # failing it are exactly those VBAS suppresses (classes of aggregated region x quasi-identifiers).
    verdict = [
        unescaped(v.value)
        for v in [*at.warning, *at.info, *at.success]
        if unescaped(v.value).startswith("This aggregation against the release target.")
    ]
    assert len(verdict) == 1 and f"{result.suppressed:,} of 2,000 records" in verdict[0], verdict
    if expected_sites == 1:  # zip becomes one value: never applied without saying so
        assert any("removes a quasi-identifier entirely" in w.value for w in at.warning)
    at.button(key="geo_apply").click().run()
    assert not at.exception
    copy = at.session_state["working_copy"]
    assert len(copy.steps) == 1 and copy.steps[0].page == "Geographic aggregation"
    regions_after = copy.current.frame["zip"]
    assert regions_after.nunique() == int((result.sites["regions"] > 0).sum())
    assert (regions_after.to_numpy() == result.mapping.reindex(frame["zip"]).to_numpy()).all()


def test_ids_of_other_areas_name_the_areas_that_hold_them():
    """ZIP codes from all over the US against Tennessee's areas: the error names the fix
    that works (change Areas), not a column choice."""
    frame = pd.DataFrame({"zip": ["10001", "90210", "60601", "02139"] * 3, "sex": ["f", "m", "f"] * 4})
    at = AppTest.from_file(PAGE, default_timeout=180)
    at.session_state["active_dataset"] = Dataset.from_frame("x", frame, {"zip": "ignore", "sex": "quasi-identifier"})
    at.session_state["active_source"] = "upload:x.csv"
    at.run()
    assert at.selectbox(key="geo_areas").value == "us_zcta"  # the ids are found in the right Areas at once
    at.selectbox(key="geo_areas").set_value("tennessee_zcta").run()  # the user insists on Tennessee
    assert not at.exception
    errors = [unescaped(e.value) for e in at.error]
    assert len(errors) == 1
    assert errors[0].startswith("None of the 12 records' area ids in zip")
    assert "4 of these ids are areas of 'All US ZIP areas (33,120 ZCTAs)': choose it under Areas." in errors[0]
    assert not at.metric  # nothing was aggregated


def test_only_columns_of_area_ids_are_offered():
    """A column is offered as area ids only when most of its values are ids of the areas:
    household expenditure whose amounts are sometimes equal to county FIPS codes is not."""
    rng = np.random.default_rng(3)
    spend = rng.choice([37010, 10001, 2.5, 310.75, 9999.5], 60)  # about 40% equal ids of ZIP areas
    frame = pd.DataFrame({"zip": ["37010", "37203"] * 30, "hhexp": spend, "sex": ["f", "m", "f"] * 20})
    at = AppTest.from_file(PAGE, default_timeout=180)
    at.session_state["active_dataset"] = Dataset.from_frame("x", frame, {"sex": "quasi-identifier"})
    at.session_state["active_source"] = "upload:x.csv"
    at.run()
    assert not at.exception
    assert at.selectbox(key="geo_region_column").options == ["zip (100% area ids)"]

    at = AppTest.from_file(PAGE, default_timeout=180)
    at.session_state["active_dataset"] = Dataset.from_frame("y", frame[["hhexp", "sex"]], {"sex": "quasi-identifier"})
    at.session_state["active_source"] = "upload:y.csv"
    at.run()
    assert not at.exception
    infos = [unescaped(i.value) for i in at.info]
    assert any(i.startswith("Geography needs a column of area ids, and this file has none") for i in infos)
    assert any("how" in i or "To add one" in i for i in infos)
    assert not [s for s in at.selectbox if s.key == "geo_region_column"]
    assert not at.metric  # nothing is mapped


def test_app_navigates_to_the_page():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    at.switch_page("pages/geography.py").run()
    assert not at.exception
    assert any(t.value == "Geographic aggregation" for t in at.title)


def test_a_new_working_copy_looks_for_area_columns_without_reading_the_bundled_areas_again(monkeypatch):
    """The bundled areas' ids (about a second to read) are read once per server, not again for every
    new working copy (a panel uploaded, a step applied): the second file's ZIP column is found without them."""
    from anonlib.transformations import geo
    from anonlib.transformations.geo import regions as regions_module

    reads = []

    def counted(key):
        reads.append(key)
        return sample_regions(key)

    monkeypatch.setattr(geo, "sample_regions", counted)
    monkeypatch.setattr(regions_module, "sample_regions", counted)
    zips = sample_regions("tennessee_zcta").points["region_id"].to_numpy()
    rng = np.random.default_rng(3)
    at = AppTest.from_file(PAGE, default_timeout=180)
    for seed in (1, 2):  # two files, two fingerprints
        frame = pd.DataFrame({"zip": rng.choice(zips, 400), "sex": rng.choice(["f", "m"], 400), "seed": seed})
        at.session_state["active_dataset"] = Dataset.from_frame(
            f"clinic{seed}", frame, {"zip": "ignore", "sex": "quasi-identifier", "seed": "ignore"}
        )
        at.session_state["active_source"] = f"upload:clinic{seed}.csv"
        reads.clear()
        at.run()
        assert not at.exception and at.selectbox(key="geo_region_column").value == "zip"
    assert "us_zcta" not in reads and "us_counties" not in reads  # the second file read no bundled ids
