"""Geo benchmarks: VBAS on Tennessee ZIP areas and on all US ZIP areas (synthetic people as counts).

Peak memory is the process's peak resident set (``resource.getrusage``), an
upper bound on what the benchmarked work needed (it includes everything the
runner loaded before).
"""

from __future__ import annotations

import resource
import sys

from anonlib.transformations.geo import aggregate, aggregated_polygons, sample_regions, site_count
from anonlib.transformations.synthetic import synthetic_people
from bench import Benchmark

US_CENSUS_CUTOFF = 100_000


def _peak_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def _tennessee(attributes: tuple[str, ...]):
    regions = sample_regions("tennessee_zcta")
    people = synthetic_people(regions.points, attributes=attributes, seed=0)
    return regions, people, list(attributes)


def _run(inputs, method: str = "balanced", k: int = 5, progress=None):
    regions, people, qis = inputs
    n_sites = site_count(int(people["count"].sum()), regions.n_regions, cutoff=US_CENSUS_CUTOFF).n_sites
    return aggregate(
        regions.points,
        people,
        region="region_id",
        quasi_identifiers=qis,
        k=k,
        n_sites=n_sites,
        method=method,
        count="count",
        progress=progress,
    )


def _note(result) -> str:
    return (
        f"{result.records:,} people, {len(result.mapping):,} areas -> {result.n_sites:,} sites, "
        f"suppressed {result.suppressed:,} ({100 * result.suppressed_share:.4f}%), DM {result.discernibility:.3e}, "
        f"NUE {result.nonuniform_entropy:.4e} bits; peak RSS {_peak_mb():,.0f} MB"
    )


def _us_setup():
    return sample_regions("us_zcta")


def _us_end_to_end(regions):
    """Generate 312 M synthetic people as counts (3 QIs) and aggregate them."""
    people = synthetic_people(regions.points, seed=0)
    return _run((regions, people, ["sex", "age_band", "race"]))


def _adc(inputs):
    calls = []
    result = _run(inputs, method="adc", progress=lambda done, total, what: calls.append(done))
    return result, len(calls)


def _adc_note(pair) -> str:
    result, calls = pair
    trace = result.adc
    return (
        f"{trace.passes} passes, {trace.committed} of {trace.tried} moves committed, F {trace.objectives[0]:,} -> "
        f"{trace.objectives[-1]:,}, {calls} progress updates; suppressed {result.suppressed:,}"
    )


def _counties():
    regions = sample_regions("us_counties")
    return regions, synthetic_people(regions.points, seed=0), ["sex", "age_band", "race"]


def _adc_counties(inputs):
    regions, people, qis = inputs
    calls = []
    result = aggregate(
        regions.points,
        people,
        region="region_id",
        quasi_identifiers=qis,
        k=5,
        n_sites=300,
        method="adc",
        count="count",
        max_passes=5,
        progress=lambda done, total, what: calls.append(done),
    )
    return result, len(calls)


BENCHMARKS = [
    Benchmark(
        "geo: Tennessee 625 ZCTAs, 6.3 M people (sex x age band), balanced + metrics",
        2.0,
        lambda: _tennessee(("sex", "age_band")),
        _run,
        note=_note,
    ),
    Benchmark(
        "geo: all US 33,120 ZCTAs, 312 M people (3 QIs), generate + balanced + metrics",
        30.0,
        _us_setup,
        _us_end_to_end,
        repeat=3,
        note=_note,
    ),
    Benchmark(
        "geo: ADC on Tennessee (sex x age band x race, k=5), with progress",
        30.0,
        lambda: _tennessee(("sex", "age_band", "race")),
        _adc,
        repeat=3,
        note=_adc_note,
    ),
    Benchmark(
        "geo: ADC on Tennessee (sex x age band, k=5), with progress",
        30.0,
        lambda: _tennessee(("sex", "age_band")),
        _adc,
        repeat=3,
        note=_adc_note,
    ),
    Benchmark(
        "geo: Tennessee Voronoi cells for the map (63 sites)",
        None,
        lambda: (sample_regions("tennessee_zcta"), _run(_tennessee(("sex", "age_band")))),
        lambda pair: aggregated_polygons(pair[1], pair[0]),
        repeat=3,
        note=lambda cells: f"{len(cells)} cells",
    ),
    Benchmark(
        "geo: ADC on US counties (3,221 areas, 300 sites, 3 QIs, 5 passes)",
        None,
        _counties,
        _adc_counties,
        repeat=1,
        note=_adc_note,
    ),
]
