"""Hostile inputs end in time with one sentence or the right numbers (the corpus in tests/hostile/).

Each case runs the command line in this process, as a user would type it, and the
library call behind it: an error case asserts the exact sentence (stderr, exit code 2)
and the error class the library raises; a case that must work asserts the numbers.
Every case has its own time and memory bound (tracemalloc's peak, which counts numpy
arrays), so a guard that lets work start before refusing it fails here.

The loader's malformed files are asserted in tests/core/test_loading.py; the numeric,
combinatorial and command-line classes of the corpus are asserted here.
"""

from __future__ import annotations

import json
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from arca_release import ARCA_ZIP

from anonlib.__main__ import main
from anonlib.core.dataset import Dataset
from anonlib.core.default_hierarchy import default_hierarchy
from anonlib.core.equivalence import equivalence_classes
from anonlib.core.errors import (
    AnonlibError,
    ColumnError,
    HierarchyError,
    ParameterError,
    ProblemTooLargeError,
    RecipeError,
)
from anonlib.core.hierarchy import read_hierarchy_csv
from anonlib.core.loading import load_table
from anonlib.core.samples import load_sample
from anonlib.measures.avector import lex_index
from anonlib.measures.leakage import leakage_table
from anonlib.measures.models import acceptance
from anonlib.measures.profile import risk_profile
from anonlib.measures.risk import population_uniqueness, risk_distribution, risk_from_sizes
from anonlib.transformations.generalization import search
from anonlib.transformations.schedule import assign, make_schedule
from anonlib.transformations.schedule_experiments import PAPER_TABLE10, reproduce_table10
from anonlib.workflow import read_recipe
from anonlib.workflow.report import build_report

HOSTILE = Path(__file__).parents[1] / "hostile"
EXACT = "9,007,199,254,740,992 (the largest number counted exactly)"


def h(name: str) -> str:
    return str(HOSTILE / name)


def frame(name: str) -> pd.DataFrame:
    return load_table(HOSTILE / name).frame


def profile(name: str, qis: list[str], count: str | None = "n"):
    table = frame(name)
    roles = {c: "ignore" for c in table.columns} | {q: "quasi-identifier" for q in qis}
    if count:
        roles[count] = "count"
    return risk_profile(Dataset.from_frame(name, table, roles))


@dataclass(frozen=True)
class Case:
    name: str
    argv: list[str]
    sentence: str | None = None  # the exact error sentence; None: the command works
    error: type[AnonlibError] | None = None  # the class the library call raises
    library: Callable[[], Any] | None = None  # the library call behind the command
    check: Callable[[dict], None] | None = None  # numbers of the command's JSON output
    seconds: float = 15.0
    megabytes: float = 150.0
    files: tuple[str, ...] = field(default=())


def counts_case(file: str, sentence: str, error: type[AnonlibError] = ColumnError) -> Case:
    return Case(
        file,
        ["profile", h(file), "--qi", "zip,sex", "--count", "n"],
        sentence,
        error,
        lambda: profile(file, ["zip", "sex"]),
        files=(file,),
    )


def _exact_classes(out: dict) -> None:
    assert (out["records"], out["classes"], out["k"], out["unique_records"]) == (55, 4, 2, 0)
    assert out["records_below"] == {"<2": 0, "<5": 6, "<10": 15}
    assert out["anonymity_vector"][:9] == [0, 1, 0, 1, 0, 0, 0, 0, 1] and len(out["anonymity_vector"]) == 40


def _regions(out: dict) -> None:
    assert out["matrix"] == [[2, 0], [0, 2], [0, 1]]  # people stay in their region: N -> A, S -> B
    assert (out["anonymity_vector"], out["vector_before"], out["k"]) == ([1, 2], [1, 2], 1)


def _code_as_quasi_identifier(out: dict) -> None:
    # Code's eight whole numbers get doubling bands ([1-2], [1-4]) below *: * is level 3
    assert (out["levels"], out["rows"], out["violations"]) == ({"Code": 3, "Gender": 0}, 4, 0)


def _latin1_hierarchy(out: dict) -> None:
    assert (out["levels"], out["rows"], out["original_violations"], out["violations"]) == ({"city": 1}, 4, 1, 0)


def _utf16_hierarchy(out: dict) -> None:
    assert (out["levels"], out["rows"], out["hierarchies"]) == (
        {"ZIP": 0, "Gender": 1},
        2,
        {"ZIP": "file", "Gender": "default"},
    )


def _privacy_counts(out: dict) -> None:
    assert (out["individuals"], out["protected_share"], out["median_min_ppp"]) == (55, 0.0, 0.0)


ATTRIBUTES_20 = ",".join(f"a{i}" for i in range(20))
BINARY_20 = ",".join(f"b{i}" for i in range(20))
BINARY_REST = ",".join(f"b{i}" for i in range(20, 64))  # kept: released unchanged by a decision


def _exhaustive(table: pd.DataFrame):
    shield = list(table.columns)
    return search(table, shield, 2, {a: default_hierarchy(table[a], a)[1] for a in shield}, "exhaustive")


CASES = [
    # --- record counts: never wrapped, never a class lost ---------------------------------
    counts_case("counts_infinite.csv", "The counts in the record-count column 'n' must be whole numbers; found inf."),
    counts_case("counts_1e400.csv", "The counts in the record-count column 'n' must be whole numbers; found inf."),
    counts_case(
        "counts_10_pow_20.csv", f"The counts in the record-count column 'n' must be at most {EXACT}; found 1e+20."
    ),
    counts_case(
        "counts_sum_past_2_63.csv", f"The counts in the record-count column 'n' must be at most {EXACT}; found 5e+18."
    ),
    counts_case(
        "counts_sum_past_exact.csv", f"The counts in the record-count column 'n' add up to 1.8e+16, more than {EXACT}."
    ),
    counts_case("counts_negative.csv", "The counts in the record-count column 'n' cannot be negative; found -3."),
    counts_case("counts_fraction.csv", "The counts in the record-count column 'n' must be whole numbers; found 2.5."),
    counts_case("counts_text.csv", "The counts in the record-count column 'n' must be whole numbers; found 'many'."),
    counts_case(
        "counts_class_of_a_billion.csv",
        "An anonymity vector of 1,000,000,000 entries would need about 22.4 GB of memory (the limit is 8.0 GB); "
        "its length is the largest class size (1,000,000,000 records); check the record counts.",
        ProblemTooLargeError,
    ),
    Case(
        "counts_exact_classes",
        ["profile", h("counts_exact_classes.csv"), "--qi", "zip,sex", "--count", "n", "--json"],
        check=_exact_classes,
        library=lambda: profile("counts_exact_classes.csv", ["zip", "sex"]),
        files=("counts_exact_classes.csv",),
    ),
    Case(
        "privacy_counts_infinite",
        ["privacy", h("counts_infinite.csv"), "--sensitive", "sex", "--aux", "zip", "--count", "n"],
        "The counts in the record-count column 'n' must be whole numbers; found inf.",
    ),
    Case(
        "privacy_counts_exact",
        ["privacy", h("counts_exact_classes.csv"), "--sensitive", "sex", "--aux", "zip", "--count", "n", "--json"],
        check=_privacy_counts,
    ),
    # --- combinatorial sizes: exact Python integers, refused before work starts -----------
    Case(
        "report_64_binary_columns",
        ["report", h("binary_64_columns.csv"), "--out", "{tmp}/report.html"],
        library=lambda: build_report(Dataset.from_frame("b", frame("binary_64_columns.csv"))),
        files=("binary_64_columns.csv",),
    ),
    Case(
        "leakage_36_columns_sizes_12",
        ["leakage", h("binary_36_columns.csv"), "--sizes", "12"],
        "The leakage of 1,251,677,700 attribute combinations would take about 3 days on this computer "
        "(the limit is 10 minutes); choose fewer attributes or smaller combinations.",
        ProblemTooLargeError,
        lambda: leakage_table(frame("binary_36_columns.csv"), sizes=[12]),
        files=("binary_36_columns.csv",),
    ),
    Case(
        "leakage_size_beyond_columns",
        ["leakage", h("binary_36_columns.csv"), "--sizes", "37"],
        "A combination of 37 attributes needs that many columns; 36 are chosen.",
        ParameterError,
        lambda: leakage_table(frame("binary_36_columns.csv"), sizes=[37]),
    ),
    Case(
        "anonymize_exhaustive_20_attributes",
        ["anonymize", h("attributes_20.csv"), "--shield", ATTRIBUTES_20, "--k", "2", "--method", "exhaustive"],
        "Checking 95,367,431,640,624 generalized tables would take about 946 years on this computer "
        "(the limit is 30 seconds); choose fewer quasi-identifiers or hierarchies with fewer levels, or the IAB "
        "search, which finds the same table counting far fewer.",
        ProblemTooLargeError,
        lambda: _exhaustive(frame("attributes_20.csv")),
        files=("attributes_20.csv",),
    ),
    Case(  # 2^20 tables of 20 records ran for minutes without an estimate saying so
        "anonymize_exhaustive_20_binary_attributes",
        [
            "anonymize",
            h("binary_64_columns.csv"),
            "--shield",
            BINARY_20,
            "--keep",
            BINARY_REST,
            "--k",
            "2",
            "--method",
            "exhaustive",
        ],
        "Checking 1,048,575 generalized tables would take about 5 minutes on this computer (the limit is 30 "
        "seconds); choose fewer quasi-identifiers or hierarchies with fewer levels, or the IAB search, which finds "
        "the same table counting far fewer.",
        ProblemTooLargeError,
        lambda: _exhaustive(frame("binary_64_columns.csv")[BINARY_20.split(",")]),
        seconds=5.0,
    ),
    Case(
        "vector_of_a_million",
        ["vector", "--sizes", "1000000"],
        "The exact lexicographic index of a vector of 1,000,000 people would take about 13 minutes on this computer "
        "(the limit is 10 minutes); exact indices are within reach up to about 850,000 people.",
        ProblemTooLargeError,
        lambda: lex_index((0,) * 999_999 + (1,)),
    ),
    Case(
        "vector_class_of_a_billion",
        ["vector", "--sizes", "1000000000"],
        "An anonymity vector of 1,000,000,000 entries would need about 22.4 GB of memory (the limit is 8.0 GB); "
        "its length is the largest class size (1,000,000,000 records); check the record counts.",
    ),
    Case(
        "index_of_71_trillion_people",
        ["index", "--vector", ",".join(["0"] * 70 + ["1000000000000"])],
        "The exact lexicographic index of a vector of 71,000,000,000,000 people would take about 20,917 million years "
        "on this computer (the limit is 10 minutes); exact indices are within reach up to about 850,000 people.",
    ),
    Case(
        "schedule_200_million_random",
        [
            "schedule",
            "--population",
            h("population_200_million_counted.csv"),
            "--qi",
            "zip",
            "--count",
            "n",
            "--resources",
            h("resources_300_million_seats.csv"),
            "--method",
            "random",
        ],
        "Scheduling 200,000,000 people onto 2 resources with the random method would need about 18.8 GB of memory "
        "(the limit is 8.0 GB); use the heuristic, or schedule one region (--group) at a time.",
        ProblemTooLargeError,
        lambda: make_schedule(
            frame("population_200_million_counted.csv"),
            frame("resources_300_million_seats.csv"),
            ["zip"],
            count="n",
            method="random",
        ),
        files=("population_200_million_counted.csv", "resources_300_million_seats.csv"),
    ),
    # --- numbers that used to wrap or be accepted ------------------------------------------
    Case(
        "capacity_1e30",
        ["schedule", "--freqs", "4,4", "--capacities", "4," + "1" + "0" * 30],
        f"The capacities must be at most {EXACT}; found 1e+30.",
        ParameterError,
        lambda: assign([4, 4], [4, 10**30]),
    ),
    Case(
        "resources_capacity_1e30",
        ["schedule", "--population", h("population_region.csv"), "--resources", h("resources_capacity_1e30.csv")],
        f"The capacities must be at most {EXACT}; found 1e+30.",
        ParameterError,
        lambda: make_schedule(frame("population_region.csv"), frame("resources_capacity_1e30.csv"), ["zip", "sex"]),
        files=("resources_capacity_1e30.csv",),
    ),
    Case(
        "seed_minus_one",
        ["schedule", "--freqs", "4,4,5,2", "--capacities", "4,2,4,3,2", "--method", "random", "--seed", "-1"],
        "The seed must be a whole number from 0 to 4,294,967,295; got -1.",
        ParameterError,
        lambda: assign([4, 4, 5, 2], [4, 2, 4, 3, 2], "random", seed=-1),
    ),
    Case(
        "time_limit_minus_five",
        ["schedule", "--freqs", "4,4,5,2", "--capacities", "4,2,4,3,2", "--method", "optimal", "--time-limit", "-5"],
        "The time limit must be above 0 and at most 600 seconds; got -5.",
        ParameterError,
        lambda: assign([4, 4, 5, 2], [4, 2, 4, 3, 2], "optimal", time_limit=-5),
    ),
    Case(
        "time_limit_nan",
        ["schedule", "--freqs", "4", "--capacities", "4", "--method", "optimal", "--time-limit", "nan"],
        "The time limit must be above 0 and at most 600 seconds; got nan.",
    ),
    Case(
        "k_beyond_exact",
        [
            *ARCA_ZIP,
            "--k",
            "1" + "0" * 23,
        ],
        "k must be a whole number from 1 to 9,007,199,254,740,992; got 100000000000000000000000.",
    ),
    Case(
        "p_not_a_number",
        ["privacy", "--sample", "arca_table1", "--sensitive", "Sex", "--p", "nan"],
        "The threshold p must be at least 0 and below 1; got nan.",
    ),
    Case(
        "vector_entry_1e400",
        ["index", "--vector", "1e400"],
        "The anonymity-vector entries must be whole numbers separated by commas; '1e400' is not one.",
    ),
    Case(
        "class_size_beyond_exact",
        ["vector", "--sizes", "1" + "0" * 23],
        f"Class sizes must be at most {EXACT}; found 1e+23.",
    ),
    # --- misleading messages and tracebacks ---------------------------------------------------
    Case(
        "group_column_kept",
        [
            "schedule",
            "--population",
            h("population_region.csv"),
            "--qi",
            "zip,sex",
            "--resources",
            h("resources_region.csv"),
            "--group",
            "region",
            "--json",
        ],
        check=_regions,
        files=("population_region.csv", "resources_region.csv"),
    ),
    Case(
        "shield_identifier",
        ["anonymize", h("identifier_named_code.csv"), "--shield", "Code", "--k", "2"],
        "Code is marked as an identifier and identifiers are never analysed; to use it in --shield, "
        "add --role Code=quasi-identifier (or sensitive).",
        files=("identifier_named_code.csv",),
    ),
    Case(
        "shield_identifier_with_role",
        [
            "anonymize",
            h("identifier_named_code.csv"),
            "--shield",
            "Code,Gender",
            "--keep",
            "ZIP",
            "--k",
            "2",
            "--role",
            "Code=quasi-identifier",
            "--json",
        ],
        check=_code_as_quasi_identifier,
    ),
    Case(
        "hierarchy_binary",
        [
            "anonymize",
            h("identifier_named_code.csv"),
            "--shield",
            "ZIP",
            "--k",
            "2",
            "--hierarchy",
            f"ZIP={h('binary_junk.png')}",
        ],
        "The hierarchy file is not text (it looks like a binary file such as an image or a spreadsheet); "
        "give an ARX hierarchy as a CSV file with one row per value.",
        HierarchyError,
        lambda: read_hierarchy_csv((HOSTILE / "binary_junk.png").read_bytes()),
    ),
    Case(
        "hierarchy_ragged",
        [
            "anonymize",
            h("identifier_named_code.csv"),
            "--shield",
            "ZIP",
            "--k",
            "2",
            "--hierarchy",
            f"ZIP={h('hierarchy_ragged.csv')}",
        ],
        "Every row of a hierarchy needs the same number of levels; the row of '2' has 2 columns, others have 3.",
        HierarchyError,
        lambda: read_hierarchy_csv((HOSTILE / "hierarchy_ragged.csv").read_bytes()),
        files=("hierarchy_ragged.csv",),
    ),
    Case(
        "hierarchy_utf16",
        [
            "anonymize",
            h("identifier_named_code.csv"),
            "--shield",
            "ZIP,Gender",
            "--k",
            "3",
            "--hierarchy",
            f"ZIP={h('hierarchy_utf16.csv')}",
            "--json",
        ],
        check=_utf16_hierarchy,
        files=("hierarchy_utf16.csv",),
    ),
    Case(
        "hierarchy_latin1",
        [
            "anonymize",
            h("cities_latin1.csv"),
            "--shield",
            "city",
            "--keep",
            "sex",
            "--k",
            "2",
            "--hierarchy",
            f"city={h('hierarchy_latin1.csv')}",
            "--json",
        ],
        check=_latin1_hierarchy,
        files=("cities_latin1.csv", "hierarchy_latin1.csv"),
    ),
    Case(
        "sample_and_file",
        ["profile", h("counts_exact_classes.csv"), "--sample", "adult"],
        "Give either a file or --sample NAME, not both.",
    ),
    Case(
        "repeated_attribute",
        ["leakage", "--sample", "arca_table1", "--attributes", "Age,Age"],
        "Age is named twice in --attributes; name each column once.",
    ),
    # --- the newer commands and entry points: risk, models, apply --------------------------
    Case(
        "sampling_fraction_1e-300",
        ["risk", "--sample", "caballero_table2b", "--qi", "ZIP,Gender", "--sampling-fraction", "1e-300"],
        "A sampling fraction of 1e-300 makes the 15 records a sample of a population of about 1.5e+301 people, "
        f"more than {EXACT}; check the sampling fraction.",
        ParameterError,
        lambda: population_uniqueness([1, 2, 4, 8], 1e-300),
    ),
    Case(
        "sampling_fraction_negative",
        ["risk", "--sample", "caballero_table2b", "--qi", "ZIP", "--sampling-fraction", "-0.5"],
        "The sampling fraction is the share of the population that is in the file, above 0 and at most 1; got -0.5.",
    ),
    Case(
        "suda_rows_negative",
        ["risk", "--sample", "caballero_table2b", "--qi", "ZIP", "--suda", "--suda-rows", "-1", "--json"],
        "The number of minimal uniques listed must be a whole number of at least 0; got -1.",
    ),
    Case(
        "models_k_zero",
        ["models", "--sample", "caballero_table2b", "--qi", "ZIP", "--sensitive", "Gender", "--k", "0"],
        "k must be a whole number of at least 1; got 0.",
        ParameterError,
        lambda: acceptance(load_sample("caballero_table2b").frame, ["ZIP"], k=0),
    ),
    Case(
        "models_l_infinite",
        [
            "models",
            "--sample",
            "caballero_table2b",
            "--qi",
            "ZIP",
            "--sensitive",
            "Gender",
            "--require",
            "distinct_l:Gender=1e400",
        ],
        "l of distinct l-diversity must be a whole number of at least 1; got inf.",
    ),
    Case(
        "recipe_nested_deep",
        ["apply", h("recipe_nested_deep.json"), h("counts_exact_classes.csv")],
        "The recipe is not valid JSON (it is nested too deeply); it may be damaged.",
        RecipeError,
        lambda: read_recipe(HOSTILE / "recipe_nested_deep.json"),
        files=("recipe_nested_deep.json",),
    ),
    Case(
        "unknown_option",
        ["report", "--sample", "arca_table1", "--json"],
        "Unrecognized arguments: --json; see `python -m anonlib report --help`.",
    ),
]


def test_the_corpus_has_at_least_40_files_and_every_one_of_these_is_used() -> None:
    assert len([p for p in HOSTILE.iterdir() if p.is_file()]) >= 40
    used = {f for case in CASES for f in case.files}
    ours = {
        p.name
        for p in HOSTILE.iterdir()
        if p.name.startswith(
            (
                "counts_",
                "binary_6",
                "binary_3",
                "attributes_",
                "resources_",
                "population_",
                "identifier_",
                "hierarchy_",
                "cities_",
                "recipe_",
            )
        )
    }
    assert ours == used, ours ^ used


def _bounded(run: Callable[[], Any], case: Case) -> Any:
    tracemalloc.start()
    started = time.perf_counter()
    try:
        return run()
    finally:
        seconds = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1] / 1024**2
        tracemalloc.stop()
        assert seconds <= case.seconds, f"{case.name}: {seconds:.1f} s (bound {case.seconds} s)"
        assert peak <= case.megabytes, f"{case.name}: {peak:.0f} MB (bound {case.megabytes} MB)"


def _exit_code(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as stop:  # usage errors, as the shell sees them
        return int(stop.code)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_case(case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [a.replace("{tmp}", str(tmp_path)) for a in case.argv]
    code = _bounded(lambda: _exit_code(argv), case)
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    if case.sentence is not None:
        assert (code, err) == (2, f"error: {case.sentence}\n")
    else:
        assert code == 0, err
        if case.check is not None:
            case.check(json.loads(out[out.index("{") :]))
    if case.library is not None:
        if case.error is not None:
            with pytest.raises(case.error) as info:
                _bounded(case.library, case)
            assert str(info.value) == case.sentence
        else:
            _bounded(case.library, case)


def test_the_64_column_report_says_why_it_has_no_generalization(tmp_path: Path) -> None:
    report = build_report(Dataset.from_frame("b", frame("binary_64_columns.csv")))
    notes = {n.section: n.text for n in report.notes}
    assert notes["Suggested generalization"] == (
        "The default hierarchies give 18,446,744,073,709,551,616 possible generalizations, more than the report's "
        "limit of 20,000; use the Leakage & anonymization page with fewer quasi-identifiers."
    )  # np.prod of 64 twos wrapped to 0, which passed the limit
    assert report.risk.records == 20 and report.risk.k == 1 and report.risk.unique_records == 20


def test_exact_counts_keep_every_class() -> None:
    """Counts summing to 2**53 are counted exactly: every class kept, no record lost."""
    big = 2**53 - 10
    table = pd.DataFrame({"zip": ["1", "2", "3", "3"], "n": [big, 3, 4, 3]})
    sizes = equivalence_classes(table, ["zip"], count="n").sizes
    assert sizes.tolist() == [big, 3, 7] and int(sizes.sum()) == 2**53
    small = pd.DataFrame({"zip": ["1", "2", "3", "3"], "n": [100_000, 3, 4, 3]})
    risk = risk_profile(Dataset.from_frame("t", small, {"zip": "quasi-identifier", "n": "count"}))
    assert (risk.records, risk.classes, risk.k, dict(risk.records_below)) == (100_010, 3, 3, {2: 0, 5: 3, 10: 10})


@pytest.mark.parametrize(
    "sizes, sentence",
    [
        ([1, float("inf")], "The class sizes must be whole numbers; found inf."),
        ([float("nan")], "The class sizes must be whole numbers; found nan."),
        ([3, 2**70], f"The class sizes must be at most {EXACT}; found 1.18e+21."),
        ([3, -1], "The class sizes cannot be negative; found -1."),
    ],
)
def test_risk_from_class_sizes_refuses_what_it_cannot_count(sizes: list, sentence: str) -> None:
    for call in (risk_from_sizes, risk_distribution, lambda s: population_uniqueness(s, 0.1)):
        with pytest.raises(ParameterError) as info:
            call(sizes)
        assert str(info.value) == sentence


def test_a_recipe_of_too_many_steps_is_refused_before_any_step_runs(tmp_path: Path, capsys) -> None:
    recipe = tmp_path / "recipe.json"
    assert (
        main(
            [
                "anonymize",
                "--sample",
                "caballero_table2b",
                "--shield",
                "ZIP,Gender,Age",
                "--k",
                "3",
                "--recipe",
                str(recipe),
            ]
        )
        == 0
    )
    data = json.loads(recipe.read_text())
    data["steps"] = data["steps"] * 2_000  # 100,000 of them (60 MB) ran for over 10 minutes before the limit
    recipe.write_text(json.dumps(data))
    capsys.readouterr()
    case = Case("recipe_2000_steps", [], seconds=15.0, megabytes=150.0)
    code = _bounded(lambda: _exit_code(["apply", str(recipe), "--", h("counts_exact_classes.csv")]), case)
    assert (code, capsys.readouterr().err) == (
        2,
        (
            "error: The recipe has 2,000 steps, more than the 1,000 a recipe can hold; it is not a recipe "
            "the dashboard or the command line wrote.\n"
        ),
    )


def test_reproducing_table_10_for_weeks_is_refused_at_once() -> None:
    case = Case("table10", [], seconds=5.0, megabytes=20.0)
    with pytest.raises(ProblemTooLargeError) as info:
        _bounded(
            lambda: reproduce_table10(tuple(PAPER_TABLE10), 10_000, optimal_runs=1_000, optimal_time_limit=600), case
        )
    assert str(info.value) == (
        "Reproducing Table 10 (110,000 random populations and 7,000 optima of up to 600 s each) would take about "
        "49 days on this computer (the limit is 10 minutes); choose fewer runs, fewer optima or a shorter time "
        "limit per optimum."
    )


def test_200000_nested_brackets_in_a_recipe_project_export_or_package_are_one_sentence(tmp_path: Path, capsys) -> None:
    """A project export (and a package's audit.json) nested 200,000 deep ended in "Something
    unexpected went wrong (RecursionError)"."""
    import hashlib
    import zipfile

    deep = "[" * 200_000 + "]" * 200_000
    (tmp_path / "recipe.json").write_text(deep)
    with zipfile.ZipFile(tmp_path / "export.zip", "w") as export:
        export.writestr("project.json", deep)
        export.writestr("SHA256SUMS", f"{hashlib.sha256(deep.encode()).hexdigest()}  project.json\n")
    package = tmp_path / "release.zip"
    assert (
        main(
            [
                "anonymize",
                "--sample",
                "caballero_table2b",
                "--shield",
                "Age",
                "--keep",
                "ZIP,Gender",
                "--k",
                "1",
                "--package",
                str(package),
            ]
        )
        == 0
    )
    with zipfile.ZipFile(package, "a") as archive:
        archive.writestr("audit.json", deep)
    capsys.readouterr()
    for argv, said in (
        (["apply", tmp_path / "recipe.json", h("counts_exact_classes.csv")],
         "The recipe is not valid JSON (it is nested too deeply); it may be damaged."),
        (["projects", "import", tmp_path / "export.zip"],
         "The project export's project.json is not valid JSON (it is nested too deeply); it may be damaged."),
    ):  # fmt: skip
        assert main([str(a) for a in argv]) == 2
        assert capsys.readouterr().err == f"error: {said}\n"
    assert main(["verify", str(package), "--project", "none"]) == 2  # read as no audit entry: one sentence
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Something unexpected" not in err
