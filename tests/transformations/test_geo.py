"""VBAS regional aggregation: properties against slow, obviously-correct references."""

from __future__ import annotations

import gzip
import io
import math
import zipfile
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import anonlib.transformations.geo as geo
from anonlib.core.errors import ColumnError, GeometryError, ParameterError
from anonlib.core.metrics import weighted_median
from anonlib.core.samples import sample_path
from anonlib.measures.leakage import partition_entropy
from anonlib.transformations.geo import (
    Regression,
    adc_objective,
    aggregate,
    aggregated_polygons,
    balanced_density,
    choose_crs,
    kmeans_sites,
    max_combinations,
    points_from_lonlat,
    project_lonlat,
    qi_entropy,
    read_regions,
    sample_regions,
    site_count,
)
from anonlib.transformations.geo import adc as geo_adc
from anonlib.transformations.geo import aggregation as geo_aggregation
from anonlib.transformations.synthetic import adult_marginals, synthetic_people, tennessee_zcta_population


def _problem(seed: int, n_regions: int = 40, n_people: int = 600):
    """Random points and records with two quasi-identifiers and a count column."""
    rng = np.random.default_rng(seed)
    points = pd.DataFrame(
        {
            "region_id": [f"z{i:03d}" for i in range(n_regions)],
            "x": rng.uniform(0, 50_000, n_regions),
            "y": rng.uniform(0, 30_000, n_regions),
            "population": rng.integers(0, 500, n_regions),
        }
    )
    records = pd.DataFrame(
        {
            "zip": rng.choice(points["region_id"].to_numpy(), n_people),
            "sex": rng.choice(["f", "m"], n_people),
            "age": rng.choice(["20-29", "30-39", "40-49", "50+"], n_people, p=[0.4, 0.3, 0.2, 0.1]),
            "n": rng.integers(1, 4, n_people),
        }
    )
    return points, records


def _reference_metrics(result, points, records, k):
    """Suppression, DM, compactness and NUE recomputed from the mapping with plain pandas."""
    frame = records.assign(agg=records["zip"].map(result.mapping))
    sizes = frame.groupby(["agg", "sex", "age"], observed=True)["n"].sum()
    n = int(sizes.sum())
    suppressed = int(sizes[sizes < k].sum())
    dm = sum(int(s) ** 2 if s >= k else n * int(s) for s in sizes)
    frame = frame.join(sizes.rename("size"), on=["agg", "sex", "age"])
    frame["gen"] = np.where(frame["size"] < k, "*", frame["agg"])
    pair = frame.groupby(["zip", "gen"])["n"].sum()
    total = frame.groupby("gen")["n"].sum()
    nue = -sum(c * math.log2(c / total[g]) for (z, g), c in pair.items())
    sites = result.sites.loc[result.mapping.to_numpy()]
    compactness = float(
        np.hypot(points["x"].to_numpy() - sites["x"].to_numpy(), points["y"].to_numpy() - sites["y"].to_numpy()).sum()
    )
    return suppressed, dm, compactness, nue


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 300), st.data())
def test_balanced_density_gives_exactly_the_requested_sites(n, data):
    rng = np.random.default_rng(n)
    s = data.draw(st.integers(1, n))
    pop = (rng.pareto(0.8, n) * 100).astype(np.int64) * rng.integers(0, 2, n)  # lumpy, many zeros
    sites = balanced_density(rng.normal(size=n), rng.normal(size=n), pop, s)
    assert sites.shape == (s, 2)
    assert np.isfinite(sites).all()


def test_balanced_density_rows_split_population_evenly():
    # A 10 x 10 grid of equal populations and 4 sites: 2 rows of 2 cells, sites at the quadrant medians.
    gx, gy = np.meshgrid(np.arange(10.0), np.arange(10.0))
    sites = balanced_density(gx.ravel(), gy.ravel(), np.ones(100), 4)
    assert sorted(map(tuple, sites.tolist())) == [(2.0, 2.0), (2.0, 7.0), (7.0, 2.0), (7.0, 7.0)]


def test_balanced_density_rejects_more_sites_than_points():
    with pytest.raises(ParameterError, match="at most 3 sites"):
        balanced_density(np.zeros(3), np.zeros(3), np.ones(3), 4)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(["balanced", "kmeans", "adc"]), st.integers(1, 12), st.integers(1, 6))
def test_every_region_goes_to_its_nearest_site_and_metrics_match_reference(seed, method, n_sites, k):
    points, records = _problem(seed)
    result = aggregate(
        points,
        records,
        region="zip",
        quasi_identifiers=["sex", "age"],
        k=k,
        n_sites=n_sites,
        method=method,
        count="n",
        seed=seed,
    )
    # Nearest site, by brute force over all sites.
    sx, sy = result.sites["x"].to_numpy(), result.sites["y"].to_numpy()
    d = np.hypot(points["x"].to_numpy()[:, None] - sx, points["y"].to_numpy()[:, None] - sy)
    chosen = result.sites.index.get_indexer(result.mapping.to_numpy())
    assert np.allclose(d[np.arange(len(points)), chosen], d.min(axis=1))
    suppressed, dm, compactness, nue = _reference_metrics(result, points, records, k)
    assert result.suppressed == suppressed
    assert result.discernibility == dm
    assert result.compactness == pytest.approx(compactness)
    assert result.nonuniform_entropy == pytest.approx(nue, abs=1e-6)
    assert result.records == int(records["n"].sum())
    assert int(result.sites["suppressed"].sum()) == suppressed
    # Per aggregated region: records and anonymity (smallest class) from a plain groupby.
    frame = records.assign(agg=records["zip"].map(result.mapping))
    per_class = frame.groupby(["agg", "sex", "age"], observed=True)["n"].sum()
    anonymity = per_class.groupby(level=0).min().reindex(result.sites.index, fill_value=0)
    totals = frame.groupby("agg")["n"].sum().reindex(result.sites.index, fill_value=0)
    assert result.sites["anonymity"].tolist() == anonymity.tolist()
    assert result.sites["records"].tolist() == totals.tolist()


def _objective_reference(points, records, sites, k):
    """F = |A| g + (|A| - |A_g|) with region anonymity from a plain groupby."""
    xy = points[["x", "y"]].to_numpy()
    nearest = np.argmin(((xy[:, None, :] - sites[None, :, :]) ** 2).sum(axis=2), axis=1)
    agg = records["zip"].map(dict(zip(points["region_id"], nearest)))
    sizes = records.assign(agg=agg).groupby(["agg", "sex", "age"], observed=True)["n"].sum()
    anonymity = sizes.groupby(level=0).min()
    g = int(anonymity.min())
    return len(anonymity) * g + (len(anonymity) - int((anonymity == g).sum()))


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 10), st.integers(2, 8))
def test_adc_never_lowers_the_objective_of_its_seed(seed, n_sites, k):
    points, records = _problem(seed, n_regions=30, n_people=300)
    seed_sites = balanced_density(points["x"], points["y"], points["population"], n_sites)
    result = aggregate(
        points, records, region="zip", quasi_identifiers=["sex", "age"], k=k, n_sites=n_sites, method="adc", count="n"
    )
    before = _objective_reference(points, records, seed_sites, k)
    after = _objective_reference(points, records, result.sites[["x", "y"]].to_numpy(), k)
    assert after >= before
    trace = result.adc
    assert trace.objectives[0] == before and trace.objectives[-1] == after
    assert all(b > a for a, b in zip(trace.objectives, trace.objectives[1:]))  # strict improvements only
    assert trace.committed == len(trace.objectives) - 1


def test_adc_reports_progress_and_stops_when_nothing_improves():
    points, records = _problem(5, n_regions=30, n_people=300)
    calls = []
    result = aggregate(
        points,
        records,
        region="zip",
        quasi_identifiers=["sex", "age"],
        k=50,
        n_sites=6,
        method="adc",
        count="n",
        progress=lambda *call: calls.append(call),
    )
    assert calls and calls[-1][:2] == (1, 1) and "ADC finished" in calls[-1][2]
    assert all(0 <= done <= total for done, total, _ in calls)
    assert result.adc.converged


def test_adc_objective_examples():
    # g = 2 over 3 non-empty regions, two of them at g: 3 * 2 + (3 - 2) = 7.
    assert adc_objective(np.array([2, 3, 2, 0])) == 7
    # Raising g always wins over the local term.
    assert adc_objective(np.array([3, 3, 3])) > adc_objective(np.array([2, 9, 9]))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=12), st.data())
def test_objective_after_a_move_equals_the_full_objective(anonymity, data):
    """ADC scores a move from F's parts and the changed sites; a full recount agrees."""
    from types import SimpleNamespace

    before = np.array(anonymity, dtype=np.int64)
    rows = np.array(sorted(data.draw(st.sets(st.integers(0, len(before) - 1), max_size=len(before)))), dtype=np.int64)
    after = np.array(data.draw(st.lists(st.integers(0, 6), min_size=len(rows), max_size=len(rows))), dtype=np.int64)
    present, lowest, at_lowest = geo_adc._objective_parts(before)
    state = SimpleNamespace(
        anonymity=before, objective=adc_objective(before), present=present, lowest=lowest, at_lowest=at_lowest
    )
    entry = SimpleNamespace(rows=rows, anonymity=after)
    full = before.copy()
    full[rows] = after
    assert geo_adc._AdcSearch.objective_after(SimpleNamespace(state=state), entry) == adc_objective(full)


def test_unmatched_region_ids_are_named_not_dropped():
    points, records = _problem(1)
    extra = pd.DataFrame({"zip": ["nowhere", "z999"], "sex": ["f", "m"], "age": ["50+", "50+"], "n": [2, 3]})
    bad = pd.concat([records, extra], ignore_index=True)
    with pytest.raises(GeometryError, match=r"5 records .*nowhere, z999"):
        aggregate(points, bad, region="zip", quasi_identifiers=["sex"], k=2, n_sites=3, count="n")
    result = aggregate(
        points, bad, region="zip", quasi_identifiers=["sex"], k=2, n_sites=3, count="n", unmatched="report"
    )
    assert set(result.unmatched) == {"nowhere", "z999"} and result.unmatched_records == 5
    assert result.records == int(records["n"].sum())


def test_numeric_and_text_region_ids_match():
    points = pd.DataFrame({"region_id": ["37010", "37011"], "x": [0.0, 10.0], "y": [0.0, 0.0]})
    records = pd.DataFrame({"zip": [37010, 37011, 37011], "sex": ["f", "f", "m"]})
    result = aggregate(points, records, region="zip", quasi_identifiers=["sex"], k=1, n_sites=2)
    assert result.records == 3 and not result.unmatched


def test_bad_points_tables_are_geometry_errors():
    records = pd.DataFrame({"zip": ["a"], "sex": ["f"]})
    kwargs = dict(region="zip", quasi_identifiers=["sex"], k=1, n_sites=1)
    with pytest.raises(GeometryError, match="missing: y"):
        aggregate(pd.DataFrame({"region_id": ["a"], "x": [0.0]}), records, **kwargs)
    with pytest.raises(GeometryError, match="repeated: a"):
        aggregate(pd.DataFrame({"region_id": ["a", "a"], "x": [0.0, 1.0], "y": [0.0, 1.0]}), records, **kwargs)
    with pytest.raises(GeometryError, match="no usable x/y coordinates: a"):
        aggregate(pd.DataFrame({"region_id": ["a"], "x": [np.nan], "y": [0.0]}), records, **kwargs)
    with pytest.raises(GeometryError, match="empty"):
        aggregate(pd.DataFrame({"region_id": [], "x": [], "y": []}), records, **kwargs)
    points = pd.DataFrame({"region_id": ["a"], "x": [0.0], "y": [0.0]})
    with pytest.raises(ParameterError, match="between 1 and the number of initial regions"):
        aggregate(points, records, region="zip", quasi_identifiers=["sex"], k=1, n_sites=2)
    with pytest.raises(ParameterError, match="method must be one of"):
        aggregate(points, records, region="zip", quasi_identifiers=["sex"], k=1, n_sites=1, method="grid")
    with pytest.raises(ColumnError, match="age"):
        aggregate(points, records, region="zip", quasi_identifiers=["age"], k=1, n_sites=1)
    for bad_k in (0, 2.5, -1):
        with pytest.raises(ParameterError, match=f"k must be a whole number of at least 1; got {bad_k}"):
            aggregate(points, records, region="zip", quasi_identifiers=["sex"], k=bad_k, n_sites=1)


def test_classes_with_no_records_do_not_lower_region_anonymity():
    # Region a: 2 F records and an M row with count 0. The empty M class holds no one:
    # a's anonymity is 2 (as ADC's objective counts it), not 0.
    points = pd.DataFrame({"region_id": ["a", "b"], "x": [0.0, 100.0], "y": [0.0, 0.0]})
    records = pd.DataFrame({"zip": ["a", "a", "b"], "sex": ["F", "M", "M"], "n": [2, 0, 3]})
    for method in ("balanced", "adc"):
        result = aggregate(
            points, records, region="zip", quasi_identifiers=["sex"], k=2, n_sites=2, count="n", method=method
        )
        assert sorted(result.sites["anonymity"].tolist()) == [2, 3]
        assert result.suppressed == 0


def test_whole_float_k_is_the_same_k_throughout():
    # k=2.0 is k=2: suppression, the reported k and discernibility all use the same integer.
    points = pd.DataFrame({"region_id": ["a", "b"], "x": [0.0, 1.0], "y": [0.0, 0.0]})
    records = pd.DataFrame({"zip": ["a", "a", "b", "b", "b"], "sex": ["F", "F", "M", "M", "F"]})
    as_int = aggregate(points, records, region="zip", quasi_identifiers=["sex"], k=2, n_sites=2)
    as_float = aggregate(points, records, region="zip", quasi_identifiers=["sex"], k=2.0, n_sites=2)
    assert as_float.k == 2 and isinstance(as_float.k, int)
    assert (as_float.suppressed, as_float.discernibility) == (as_int.suppressed, as_int.discernibility)
    assert as_int.suppressed == 1  # the lone F in region b


def test_bad_geometry_files_are_geometry_errors():
    with pytest.raises(GeometryError, match="could not be read as GeoJSON"):
        read_regions(b"this is not a map", region_id="id", name="map.geojson")
    with pytest.raises(GeometryError, match="damaged"):
        read_regions(b"\x1f\x8b broken", region_id="id")
    with pytest.raises(GeometryError, match="no column 'county'.*GEO_ID"):
        read_regions(sample_path("us_counties.geojson.gz"), region_id="county")
    empty = (
        b'{"type": "FeatureCollection", "features": [{"type": "Feature", "properties": {"id": "x"}, "geometry": null}]}'
    )
    with pytest.raises(GeometryError, match="no geometry: x"):
        read_regions(empty, region_id="id")
    lines = b'{"type": "FeatureCollection", "features": [{"type": "Feature", "properties": {"id": "x"}, "geometry": {"type": "LineString", "coordinates": [[0, 0], [1, 1]]}}]}'
    with pytest.raises(GeometryError, match="polygons or points"):
        read_regions(lines, region_id="id")


def _county_subset(state: str = "47") -> bytes:
    import geopandas as gpd

    counties = gpd.read_file(io.BytesIO(gzip.decompress(sample_path("us_counties.geojson.gz").read_bytes())))
    return counties[counties["STATE"] == state]


def test_geojson_geopackage_and_zipped_shapefile_read_alike(tmp_path_factory):
    subset = _county_subset()
    geojson = subset.to_json().encode()
    gpkg = io.BytesIO()
    subset.to_file(gpkg, driver="GPKG")
    folder = tmp_path_factory.mktemp("shp")
    subset.to_file(folder / "tn.shp")
    shp = io.BytesIO()
    with zipfile.ZipFile(shp, "w") as archive:
        for file in folder.iterdir():
            archive.write(file, file.name)
    read = [read_regions(raw, region_id="GEO_ID") for raw in (geojson, gpkg.getvalue(), shp.getvalue())]
    assert all(r.n_regions == 95 and r.crs == "EPSG:32616" for r in read)
    for r in read[1:]:
        assert np.allclose(r.points["x"].to_numpy(), read[0].points["x"].to_numpy(), atol=1.0)
    # Every representative point lies inside its own county.
    poly = read[0].polygons
    import shapely

    inside = shapely.contains_xy(
        poly.geometry.to_numpy(), read[0].points["x"].to_numpy(), read[0].points["y"].to_numpy()
    )
    assert inside.all()


def test_counties_dissolve_into_aggregated_polygons():
    regions = sample_regions("us_counties")
    assert regions.n_regions == 3221 and regions.crs == "EPSG:5070"
    assert int(regions.points["population"].sum()) > 300_000_000
    tn = regions.points[regions.points["region_id"].str.startswith("47")]
    people = synthetic_people(tn, attributes=["sex"], seed=2)
    result = aggregate(tn, people, region="region_id", quasi_identifiers=["sex"], k=5, n_sites=8, count="count")
    sub = type(regions)(
        name="tn",
        points=tn,
        crs=regions.crs,
        polygons=regions.polygons[regions.polygons["region_id"].isin(tn["region_id"])],
    )
    shapes = aggregated_polygons(result, sub)
    assert len(shapes) == int((result.sites["regions"] > 0).sum())
    total_area = sub.polygons.geometry.area.sum()
    assert shapes.geometry.area.sum() == pytest.approx(total_area, rel=1e-6)


def test_voronoi_cells_hold_their_points_when_only_points_exist():
    import shapely

    regions = sample_regions("tennessee_zcta")
    people = synthetic_people(regions.points, attributes=["sex"], seed=4)
    result = aggregate(
        regions.points, people, region="region_id", quasi_identifiers=["sex"], k=5, n_sites=20, count="count"
    )
    cells = aggregated_polygons(result, regions)
    assert len(cells) == int((result.sites["regions"] > 0).sum())
    geometry = cells.geometry.loc[result.mapping.to_numpy()].to_numpy()
    inside = shapely.intersects_xy(geometry, regions.points["x"].to_numpy(), regions.points["y"].to_numpy())
    assert inside.all()


def test_tennessee_sample_is_the_papers_setting():
    tn = sample_regions("tennessee_zcta")
    ids = tn.points["region_id"].astype(int)
    assert tn.n_regions == 625 and ids.between(37010, 38589).all()
    assert (tn.points["population"] > 0).all()
    assert 6_300_000 < int(tn.points["population"].sum()) < 6_400_000


def test_qi_entropy_is_the_partition_entropy_of_the_classes():
    # Classes {F,1}: 2 records, {M,1}: 1, {M,2}: 1 -> H = 1.5 bits; zero-count rows add nothing.
    records = pd.DataFrame({"sex": ["F", "M", "M", "F"], "age": [1, 1, 2, 2], "n": [2, 1, 1, 0]})
    assert qi_entropy(records, ["sex", "age"], count="n") == 1.5 == partition_entropy(np.array([2, 1, 1, 0]))


def test_one_tennessee_loader_for_regions_and_zip_codes():
    # 628 ZCTAs in 37010-38589, 3 of them without residents; the regions are the 625 populated ones.
    every = tennessee_zcta_population()
    populated = tennessee_zcta_population(populated_only=True)
    assert (len(every), len(populated)) == (628, 625)
    assert int((every["population"] == 0).sum()) == 3
    assert populated["zip"].tolist() == every.loc[every["population"] > 0, "zip"].tolist()
    tn = sample_regions("tennessee_zcta")
    assert tn.points["region_id"].tolist() == populated["zip"].tolist()
    assert tn.points["population"].tolist() == populated["population"].tolist()
    assert int(tn.points["population"].sum()) == int(every["population"].sum())


def test_projection_gives_metres():
    x, y, crs = project_lonlat(np.array([-86.0, -86.0]), np.array([35.0, 36.0]))
    assert crs == "EPSG:32616" and (y[1] - y[0]) / 1000 == pytest.approx(110.9, abs=0.5)
    assert choose_crs(np.array([5.0, 30.0]), np.array([45.0, 60.0])) == "EPSG:8857"
    with pytest.raises(GeometryError, match="swapped"):
        project_lonlat(np.array([35.0]), np.array([-186.0]))
    table = pd.DataFrame({"id": [1, 2], "lon": [-86.0, -85.0], "lat": [36.0, 36.0]})
    assert points_from_lonlat(table, region_id="id", lon="lon", lat="lat")["region_id"].tolist() == ["1", "2"]


def test_site_count_models():
    assert site_count(6_339_942, 625, cutoff=100_000).n_sites == 63
    assert site_count(6_339_942, 625, cutoff=70_000).n_sites == 91
    assert site_count(100, 625, cutoff=100_000).n_sites == 1  # clamped up
    assert site_count(10**9, 625, cutoff=10).n_sites == 625  # clamped down
    with pytest.raises(ParameterError, match="positive"):
        site_count(100, 5, cutoff=-1)
    with pytest.raises(ParameterError, match="model must be one of"):
        site_count(100, 5, model="magic")
    reg = Regression("linear", "entropy", a=1000.0, b=500.0)
    assert site_count(1_000_000, 625, model="regression", regression=reg, entropy_bits=2.0, max_combs=4).n_sites == 500


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 10))
def test_entropy_model_never_gives_fewer_sites_than_max_combinations(seed, k):
    _, records = _problem(seed, n_people=200)
    h = qi_entropy(records, ["sex", "age"], count="n")
    combos = max_combinations(records, ["sex", "age"])
    assert 2**h <= combos + 1e-9
    by_entropy = site_count(5_000_000, 10_000, model="entropy", k=k, entropy_bits=h).n_sites
    by_combos = site_count(5_000_000, 10_000, model="max_combinations", k=k, max_combs=combos).n_sites
    assert by_entropy >= by_combos


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(-20, 20), st.integers(1, 9)), min_size=1, max_size=25))
def test_weighted_median_matches_expanded_median(pairs):
    values = np.array([p[0] for p in pairs], dtype=float)
    weights = np.array([p[1] for p in pairs])
    expanded = np.sort(np.repeat(values, weights))
    assert weighted_median(values, weights) == expanded[(len(expanded) - 1) // 2]


def test_kmeans_is_seeded():
    points, _ = _problem(9)
    a = kmeans_sites(points["x"], points["y"], points["population"], 5, seed=1)
    b = kmeans_sites(points["x"], points["y"], points["population"], 5, seed=1)
    assert np.array_equal(a, b)


def test_synthetic_people_are_counts_that_sum_to_each_population():
    areas = pd.DataFrame({"region_id": ["a", "b", "c"], "population": [1_000_000, 3, 0]})
    people = synthetic_people(areas, seed=11)
    assert list(people.columns) == ["region_id", "sex", "age_band", "race", "count"]
    totals = people.groupby("region_id", observed=False)["count"].sum()
    assert totals.tolist() == [1_000_000, 3, 0]
    assert (people["count"] > 0).all()
    again = synthetic_people(areas, seed=11)
    pd.testing.assert_frame_equal(people, again)
    # A million people follow Adult's marginals closely.
    big = people[people["region_id"] == "a"]
    male = big.loc[big["sex"] == "Male", "count"].sum() / 1_000_000
    assert male == pytest.approx(float(adult_marginals()["sex"]["Male"]), abs=0.003)
    with pytest.raises(ParameterError, match="attributes"):
        synthetic_people(areas, attributes=["income"])


def test_anonymized_records_mask_suppressed_classes():
    points, records = _problem(3)
    result = aggregate(points, records, region="zip", quasi_identifiers=["sex", "age"], k=8, n_sites=10, count="n")
    out = result.anonymized_records(records, region="zip", quasi_identifiers=["sex", "age"])
    masked = out["suppressed"].to_numpy()
    assert int(out.loc[masked, "n"].sum()) == result.suppressed
    assert (out.loc[masked, ["zip", "sex", "age"]] == "*").all().all()
    assert set(out.loc[~masked, "zip"]) <= set(result.sites.index)


def test_adc_refuses_tables_too_large_for_memory(monkeypatch):
    from anonlib.core.errors import ProblemTooLargeError

    points, records = _problem(2)
    monkeypatch.setattr(geo_aggregation, "ADC_CELL_LIMIT", 10)  # where aggregate reads it
    with pytest.raises(ProblemTooLargeError, match="choose fewer sites"):
        aggregate(
            points, records, region="zip", quasi_identifiers=["sex", "age"], k=2, n_sites=5, method="adc", count="n"
        )


def test_balanced_density_with_lumpy_populations_never_makes_more_rows_than_sites():
    # Tiny points between huge ones make many thin rows; S must still be met exactly.
    y = np.arange(12, dtype=float)
    pop = np.array([1, 1000, 1, 1000, 1, 1000, 1, 1000, 1, 1000, 1, 1000])
    for s in range(1, 13):
        assert balanced_density(np.zeros(12) + y % 3, y, pop, s).shape == (s, 2)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 40), st.integers(2, 9), st.booleans())
def test_adc_equals_the_slow_reference(seed, n_sites, k, clustered):
    """The fast ADC (only nearby points per tried move) makes exactly the reference's moves."""
    points, records = _problem(seed, n_regions=150, n_people=2_000)
    if clustered:  # dense towns and empty land, some regions at the same spot: the grid's hard cases
        rng = np.random.default_rng(seed)
        towns = rng.uniform(0, 50_000, (4, 2))
        pick = rng.integers(0, 4, len(points))
        points["x"] = np.round(towns[pick, 0] + rng.normal(0, 800, len(points)), -2)
        points["y"] = np.round(towns[pick, 1] + rng.normal(0, 800, len(points)), -2)
    run = dict(region="zip", quasi_identifiers=["sex", "age"], k=k, n_sites=n_sites, method="adc", count="n")
    fast = aggregate(points, records, **run)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(geo, "adc_sites", geo.adc_sites_reference)
        slow = aggregate(points, records, **run)
    assert fast.adc == slow.adc
    assert fast.sites[["x", "y"]].equals(slow.sites[["x", "y"]])
    assert fast.suppressed == slow.suppressed and fast.mapping.equals(slow.mapping)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 300), st.integers(1, 25), st.integers(1, 6))
def test_trial_state_counts_equal_a_full_recount(seed, n_points, n_sites, n_classes):
    """A trial state moves records only for the points whose site changed: same matrix as site_class_sizes."""
    rng = np.random.default_rng(seed)
    x, y = rng.uniform(0, 1_000, n_points), rng.uniform(0, 1_000, n_points)
    n_cells = rng.integers(1, 4 * n_points + 1)
    cells = geo_adc.RegionCells(
        region=rng.integers(0, n_points, n_cells),
        qclass=rng.integers(0, n_classes, n_cells),
        size=rng.integers(0, 50, n_cells),
        n_classes=n_classes,
    )
    search = geo_adc._AdcSearch(x, y, cells, rng.uniform(0, 1_000, (n_sites, 2)))
    for _ in range(3):
        moved = search.state.sites.copy()
        moved[rng.integers(0, n_sites)] = rng.uniform(-100, 1_100, 2)
        trial = search.trial(moved)
        np.testing.assert_array_equal(trial.matrix, cells.site_class_sizes(trial.assignment, n_sites))
        search.state = trial


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 300), st.integers(1, 25), st.integers(1, 6), st.integers(1, 20))
def test_moves_scored_together_equal_a_full_reassignment(seed, n_points, n_sites, n_classes, n_moves):
    """Moves scored in one batch: each says exactly which sites change anonymity and to
    what, as a full reassignment of every point with that one site moved does."""
    rng = np.random.default_rng(seed)
    x, y = np.round(rng.uniform(0, 1_000, n_points), -1), rng.uniform(0, 1_000, n_points)
    n_cells = rng.integers(1, 4 * n_points + 1)
    cells = geo_adc.RegionCells(
        region=rng.integers(0, n_points, n_cells),
        qclass=rng.integers(0, n_classes, n_cells),
        size=rng.integers(0, 50, n_cells),
        n_classes=n_classes,
    )
    search = geo_adc._AdcSearch(x, y, cells, rng.uniform(0, 1_000, (n_sites, 2)))
    regions = rng.integers(0, n_sites, n_moves).tolist()
    targets = rng.uniform(-100, 1_100, (n_moves, 2))
    targets[: n_moves // 2] = np.column_stack([x, y])[rng.integers(0, n_points, n_moves // 2)]  # onto a point
    search._score(regions, targets)
    for region, target in zip(regions, targets):
        rows, anonymity, _, _ = search.scored[region, float(target[0]), float(target[1])]
        moved = search.state.sites.copy()
        moved[region] = target
        full = search.trial(moved).anonymity
        search.index.update(search.state.dist)  # the trial's distances were not kept
        expected = search.state.anonymity.copy()
        expected[rows] = anonymity
        np.testing.assert_array_equal(expected, full)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 400), st.integers(1, 30), st.booleans())
def test_point_index_finds_every_point_a_moved_site_can_take(seed, n_points, n_sites, clustered):
    rng = np.random.default_rng(seed)
    scale = 1_000.0 if clustered else 50_000.0
    x, y = np.round(rng.uniform(0, scale, n_points), 0 if clustered else 3), rng.uniform(0, scale, n_points)
    if clustered:
        x[: n_points // 2] = x[0]  # many points on one vertical line
    sites = np.column_stack([rng.uniform(-scale / 10, scale, n_sites), rng.uniform(0, scale, n_sites)])
    index = geo_adc._PointIndex(x, y)
    dist = np.hypot(x[:, None] - sites[:, 0], y[:, None] - sites[:, 1]).min(axis=1)
    index.update(dist)
    targets = np.vstack([rng.uniform(-scale / 5, scale * 1.2, (5, 2)), [[x[0], y[0]]]])
    for batch_cells in (geo.BATCH_CELLS, 1):  # all targets in one chunk, or one target a chunk
        with mock.patch.object(geo, "BATCH_CELLS", batch_cells):
            move, found = index.candidates(targets[:, 0], targets[:, 1])
        assert np.all(np.diff(move) >= 0)  # target by target
        for i, target in enumerate(targets):
            could_move = np.flatnonzero(np.hypot(x - target[0], y - target[1]) < dist)
            mine = found[move == i]
            assert len(set(mine)) == len(mine) and set(could_move) <= set(mine)


def test_estimate_aggregate_counts_rows_and_adc_moves():
    points, records = _problem(3)
    balanced = geo.estimate_aggregate(points, records, quasi_identifiers=["sex", "age"], n_sites=5)
    assert balanced.operations == len(records) and balanced.interactive
    adc = geo.estimate_aggregate(points, records, quasi_identifiers=["sex", "age"], n_sites=5, method="adc")
    assert adc.operations == 5 * geo_aggregation._MOVES_PER_SITE and adc.seconds > balanced.seconds
    assert adc.peak_bytes >= 5 * 2 * 4 * 8  # the sites x classes table (2 sexes x 4 age bands)
    capped = geo.estimate_aggregate(
        points, records, quasi_identifiers=["sex", "age"], n_sites=5_000, method="adc", time_limit=1.0
    )
    assert capped.seconds <= balanced.seconds + 1.0
    with pytest.raises(ParameterError, match="method must be one of"):
        geo.estimate_aggregate(points, records, quasi_identifiers=["sex"], n_sites=5, method="voronoi")


def test_damaged_or_oversized_gzip_boundaries_are_one_sentence():
    """A boundary upload that is damaged gzip, or unpacks past the loader's size limit (a
    decompression bomb), is refused with a GeometryError sentence, never a zlib traceback."""
    import zlib
    from pathlib import Path

    from anonlib.core.loading import DEFAULT_MAX_BYTES

    damaged = (Path(__file__).parents[1] / "hostile" / "corrupt.csv.gz").read_bytes()
    with pytest.raises(GeometryError, match="looks gzip-compressed but is damaged"):
        read_regions(damaged, region_id="GEOID", name="areas.geojson.gz")
    packer = zlib.compressobj(wbits=16 + zlib.MAX_WBITS)
    zeros = b"0" * (1 << 20)
    bomb = b"".join(packer.compress(zeros) for _ in range(DEFAULT_MAX_BYTES // len(zeros) + 1)) + packer.flush()
    assert len(bomb) < DEFAULT_MAX_BYTES // 100
    with pytest.raises(GeometryError, match="areas.geojson.gz' is too large: The file unpacks to more than"):
        read_regions(bomb, region_id="GEOID", name="areas.geojson.gz")


def test_area_columns_read_each_set_of_ids_once_and_find_what_the_share_per_column_finds():
    """area_columns writes each set of area ids as labels once (not once per column): the columns it
    finds, their areas and shares are those area_id_share gives column by column."""
    import numpy as np
    import pandas as pd

    from anonlib.transformations.geo.regions import AREA_SHARE, area_columns, area_id_share

    rng = np.random.default_rng(0)
    areas = {"a": ["37010", "37011", "37012", 1001], "b": [str(i) for i in range(1000, 1100)]}
    frame = pd.DataFrame(
        {
            "zip": rng.choice(["37010", "37011", "37012", "99999"], 400, p=[0.3, 0.3, 0.3, 0.1]),
            "county": rng.choice([1001.0, 1002.0, 1050.0, np.nan], 400),
            "spend": rng.random(400) * 5000,
            "mixed": rng.choice(["1001", "37010", "x"], 400),
        }
    )
    found = area_columns(frame, areas=areas)
    expected = {}
    for column in frame.columns:
        best = max((area_id_share(frame[column], ids), -len(ids), key) for key, ids in areas.items())
        if best[0] > AREA_SHARE:
            expected[column] = (best[2], best[0])
    assert {c: (f.areas, f.share) for c, f in found.items()} == expected
    assert set(expected) == {"zip", "county", "mixed"}  # two of three values are ids of "a"
