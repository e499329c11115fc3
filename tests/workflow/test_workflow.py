"""anonlib.workflow: steps against slow obviously-correct references, the working copy's
undo and reset, the target check in records, recipes (round trip, strict validation,
byte-for-byte reproduction) and the release package."""

from __future__ import annotations

import io
import json
import math
import zipfile
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonlib.core.dataset import Dataset
from anonlib.core.default_hierarchy import default_hierarchy
from anonlib.core.errors import AnonlibError, ColumnError, HierarchyError, RecipeError
from anonlib.core.hierarchy import flat_hierarchy, masking_hierarchy, value_key
from anonlib.core.loading import load_table, to_safe_csv
from anonlib.core.samples import load_sample, sample_path
from anonlib.measures.peers import partitions
from anonlib.transformations.anonymize_experiments import arca_hierarchies
from anonlib.transformations.frontier import prepare
from anonlib.transformations.generalization import GeneralizationSpace, search
from anonlib.transformations.geo import aggregate
from anonlib.workflow import (
    AggregationStep,
    BandsStep,
    GeneralizationStep,
    PolicyStep,
    Reading,
    Recipe,
    ReleaseTarget,
    SuppressionStep,
    WorkingCopy,
    apply_recipe,
    default_choice,
    release_csv,
    release_package,
    step_cost,
    step_from_json,
)
from anonlib.workflow.local_steps import LocalSuppressionStep
from anonlib.workflow.package import package_files
from anonlib.workflow.report import build_report

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def one_sentence(message: str) -> bool:
    """A message a privacy officer reads: one line, no traceback, ends with a full stop."""
    return "\n" not in message and "Traceback" not in message and message.rstrip().endswith(".")


# --------------------------------------------------------------- references


def reference_bands(values, width, offset, low, high):
    """Integer bands by explicit enumeration: band j = [start + j*width, start + (j+1)*width - 1],
    the outer bands cut at [low, high]; the label of the band holding each value."""
    start = low - offset
    bands = []
    lo = start
    while lo <= high:
        bands.append((lo, lo + width - 1))
        lo += width
    out = []
    for v in values:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            out.append(None)
            continue
        for a, b in bands:
            if a <= v <= b:
                a, b = int(max(a, low)), int(min(b, high))
                out.append(f"{a}" if a == b else f"{a}-{b}")
                break
    return out


def reference_generalization(values, rows, level):
    """Row by row: the hierarchy row whose original value is the value's text, its level-j cell."""
    table = {row[0]: row for row in rows}
    return [table[value_key(v)][level] for v in values]


def reference_classes(frame, qis, count=None):
    """Records per class by counting tuples in Python."""
    sizes = Counter()
    keys = [tuple("<NA>" if pd.isna(v) else v for v in row) for row in frame[list(qis)].itertuples(index=False)]
    for i, key in enumerate(keys):
        sizes[key] += 1 if count is None else int(frame[count].iloc[i])
    return keys, sizes


# --------------------------------------------------------------- bands


@FAST
@given(
    values=st.lists(st.integers(0, 120), min_size=1, max_size=60),
    width=st.integers(2, 30),
    offset_seed=st.integers(0, 1000),
)
def test_bands_equal_the_enumerated_reference(values, width, offset_seed):
    offset = offset_seed % width
    low, high = min(values), max(values)
    step = BandsStep("age", width, offset, low, high, True)
    out = step.apply(pd.DataFrame({"age": values}))["age"]
    assert out.tolist() == reference_bands(values, width, offset, low, high)


def test_bands_of_every_kroes_partition_match_the_reference():
    values = np.array([17, 23, 35, 41, 41, 58, 64, 90])
    found, _ = partitions(values, max_categories=6, max_partitions=10_000)
    assert len(found) > 50
    for part in found:
        step = BandsStep.from_partition("age", part)
        got = step.apply(pd.DataFrame({"age": values}))["age"].tolist()
        assert got == reference_bands(values, part.width, part.offset, part.low, part.high)
        assert got == part.apply(pd.Series(values)).tolist()


def test_bands_keep_missing_and_refuse_values_outside_their_range():
    step = BandsStep("age", 10, 0, 30, 59, True)
    frame = pd.DataFrame({"age": pd.array([30, None, 59], dtype="Int64"), "x": [1, 2, 3]})
    out = step.apply(frame)
    assert out["age"].tolist()[0] == "30-39" and pd.isna(out["age"].iloc[1])
    assert frame["age"].tolist()[0] == 30  # the input is never changed
    with pytest.raises(ColumnError, match="outside the range the bands were made for") as err:
        step.apply(pd.DataFrame({"age": [25, 30]}))
    assert one_sentence(str(err.value))
    with pytest.raises(ColumnError, match="not numbers"):
        step.apply(pd.DataFrame({"age": ["thirty"]}))


def test_covering_keeps_the_band_boundaries():
    step = BandsStep("age", 10, 5, 35, 64, True)
    wide = step.covering(pd.Series([12, 99]))
    inner = pd.DataFrame({"age": list(range(40, 60))})  # the bands not cut by the range
    assert wide.apply(inner)["age"].tolist() == step.apply(inner)["age"].tolist()
    assert wide.apply(pd.DataFrame({"age": [12, 99]}))["age"].tolist() == ["12-19", "90-99"]


# --------------------------------------------------------------- generalization


def test_generalization_equals_the_search_table_on_the_papers_example():
    frame = load_sample("arca_table1").frame
    hierarchies = arca_hierarchies(frame)
    space = GeneralizationSpace(frame, ["Zip", "Age", "AC"], hierarchies, target=ReleaseTarget(3), count=None)
    for levels in [(1, 1, 0), (5, 3, 2), (2, 0, 1)]:
        step = GeneralizationStep(tuple(zip(["Zip", "Age", "AC"], levels)), tuple(hierarchies.items()))
        pd.testing.assert_frame_equal(step.apply(frame), space.table(levels))


@FAST
@given(
    zips=st.lists(st.sampled_from(["52000", "52001", "52010", "53111", "60000"]), min_size=1, max_size=40),
    level=st.integers(0, 5),
)
def test_generalization_equals_the_row_by_row_reference(zips, level):
    hierarchy = masking_hierarchy(["52000", "52001", "52010", "53111", "60000"])
    rows = [list(r) for r in hierarchy.itertuples(index=False)]
    step = GeneralizationStep((("zip", level),), (("zip", hierarchy),))
    out = step.apply(pd.DataFrame({"zip": zips}))["zip"].tolist()
    assert out == reference_generalization(zips, rows, level)


def test_generalization_names_a_value_no_hierarchy_covers():
    step = GeneralizationStep((("sex", 1),), (("sex", flat_hierarchy(["F", "M"])),))
    with pytest.raises(HierarchyError, match="does not cover the value 'X'") as err:
        step.apply(pd.DataFrame({"sex": ["F", "X"]}))
    assert one_sentence(str(err.value))


def test_generalization_describes_what_it_removes():
    frame = load_sample("arca_table1").frame
    h = arca_hierarchies(frame)
    step = GeneralizationStep((("Zip", 1), ("Age", 0), ("AC", 2)), tuple(h.items()), method="iab", k=3)
    assert step.removed == ("AC",)
    assert "AC is replaced by Any: the column is effectively removed" in step.describe()
    assert "Zip to level 1 of 5" in step.describe()


# --------------------------------------------------------------- frontier policy


def test_policy_equals_the_frontiers_generalization():
    frame = pd.DataFrame({"age": [30, 40, 50, 60, 30, 41], "race": ["a", "b", "c", "a", "b", "c"]})
    space = prepare(frame, ["age", "race"])
    bits = {"age": [0, 1, 1, 0, 1][: len(space.domains[0]) - 1], "race": [1, 0]}
    flat = space.bits_of(bits)
    step = PolicyStep.from_space(space, flat)
    expected = space.generalize(frame, flat)
    out = step.apply(frame)
    for column in step.columns:
        assert out[column].tolist() == expected[column].tolist()
    assert step.apply(frame)["age"].dtype == "string"


def test_policy_numbers_between_values_of_an_interval_belong_to_it():
    frame = pd.DataFrame({"age": [20, 25, 30, 40]})
    space = prepare(frame, ["age"])
    step = PolicyStep.from_space(space, {"age": [0, 0, 1]})
    assert step.apply(pd.DataFrame({"age": [22, 30, 40]}))["age"].tolist() == ["20-30", "20-30", "40"]
    with pytest.raises(ColumnError, match="fall in no interval") as err:
        step.apply(pd.DataFrame({"age": [35]}))
    assert one_sentence(str(err.value))


def test_policy_categories_are_matched_by_membership():
    frame = pd.DataFrame({"race": ["Asian", "Black", "White"]})
    space = prepare(frame, ["race"])
    step = PolicyStep.from_space(space, {"race": [0, 1]})
    reference = {"Asian": "Asian / Black", "Black": "Asian / Black", "White": "White"}
    values = ["White", "Asian", "Black", "Asian"]
    assert step.apply(pd.DataFrame({"race": values}))["race"].tolist() == [reference[v] for v in values]
    with pytest.raises(ColumnError, match="'Other'"):
        step.apply(pd.DataFrame({"race": ["Other"]}))


# --------------------------------------------------------------- aggregation


def test_aggregation_equals_the_geo_mapping():
    points = pd.DataFrame({"region_id": ["a", "b", "c", "d"], "x": [0.0, 1000.0, 10000.0, 11000.0], "y": [0.0] * 4})
    records = pd.DataFrame({"zip": ["a", "b", "c", "d", "a"], "sex": ["f", "f", "m", "m", "f"]})
    result = aggregate(points, records, region="zip", quasi_identifiers=["sex"], k=2, n_sites=2)
    step = AggregationStep.from_result("zip", result)
    reference = dict(zip(result.mapping.index, result.mapping.to_numpy()))
    assert step.apply(records)["zip"].tolist() == [reference[z] for z in records["zip"]]
    anonymized = result.anonymized_records(records, region="zip", quasi_identifiers=["sex"])
    kept = ~anonymized["suppressed"].to_numpy()
    assert step.apply(records)["zip"][kept].tolist() == anonymized["zip"][kept].tolist()
    with pytest.raises(ColumnError, match="in no aggregated region"):
        step.apply(pd.DataFrame({"zip": ["a", "zz"]}))


def test_aggregation_matches_numeric_area_ids_as_text():
    step = AggregationStep("zip", (("37010", "A1"), ("37011", "A1")))
    out = step.apply(pd.DataFrame({"zip": pd.array([37010, None, 37011], dtype="Int64")}))
    assert out["zip"].tolist() == ["A1", None, "A1"]


# --------------------------------------------------------------- suppression


@FAST
@given(
    rows=st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from("xy"), st.integers(0, 3)), min_size=1, max_size=50),
    k=st.integers(1, 6),
)
def test_suppression_equals_the_counted_reference(rows, k):
    frame = pd.DataFrame(rows, columns=["a", "b", "n"])
    keys, sizes = reference_classes(frame, ["a", "b"], "n")
    # a class without records (counts 0) fails nothing: it holds no one to protect
    expected = frame[[sizes[key] >= k or sizes[key] == 0 for key in keys]].reset_index(drop=True)
    out = SuppressionStep(("a", "b"), k, count="n").apply(frame)
    pd.testing.assert_frame_equal(out, expected)


def test_suppression_with_missing_dropped_judges_complete_rows_only():
    frame = pd.DataFrame({"a": ["x", "x", None, "y"]})
    out = SuppressionStep(("a",), 2, missing="drop").apply(frame)
    assert out["a"].fillna("missing").tolist() == ["x", "x", "missing"]


def test_suppression_steps_judge_the_assessed_records_and_record_extra_columns_only_when_needed():
    """With missing="drop" both suppression steps judge the records the target is checked on: a
    blank in a sensitive column without a model (lab) leaves the record unjudged and unreleased, a
    blank in an ignored column (note) does not. The extra columns go into the step's JSON only
    then, so a recipe written before them reads and writes the same JSON."""
    frame = pd.DataFrame(
        {
            "age": ["30", "30", "30", "40", "40", "40"],
            "dx": list("abcdef"),
            "lab": ["x", "x", None, "x", "x", "x"],
            "note": [None, "p", "p", "p", "p", "p"],
        }
    )
    roles = {"age": "quasi-identifier", "dx": "sensitive", "lab": "sensitive", "note": "ignore"}
    dropping = Dataset.from_frame("d", frame, roles).with_missing("drop")
    target = ReleaseTarget(k=3, max_suppressed=0.5)
    # judged: 30 has 2 records with a lab value (fails k = 3), 40 has 3; the third 30 is not judged
    # (the blank note is the first 30's: written when its record is)
    cases = (
        (SuppressionStep, ["30", "40", "40", "40"], 3, 0),
        (LocalSuppressionStep, ["*", "*", "30", "40", "40", "40"], 5, 1),
    )
    for kind, ages, released, blank_notes in cases:
        step = kind.from_target(target, dropping)
        assert step.also_complete == ("dx", "lab") and step.to_json()["also_complete"] == ["dx", "lab"]
        assert step_from_json(json.loads(json.dumps(step.to_json()))) == step
        assert step.apply(frame)["age"].tolist() == ages
        copy = WorkingCopy.start(dropping, target).apply(step, "test")
        table = copy.release(["age", "dx", "lab", "note"])
        assert copy.check.records == len(table) == released and copy.check.met
        assert table["note"].isna().sum() == blank_notes and table["lab"].notna().all()
        kept = kind.from_target(target, dropping.with_missing("category"))
        assert kept.also_complete == () and "also_complete" not in kept.to_json()
        older = {key: value for key, value in step.to_json().items() if key != "also_complete"}
        assert step_from_json(older) == kind.from_target(target, dropping.with_roles({"dx": "ignore", "lab": "ignore"}))


# --------------------------------------------------------------- target check


@FAST
@given(
    rows=st.lists(
        st.tuples(st.sampled_from("abcd"), st.sampled_from("xy"), st.integers(1, 3)), min_size=1, max_size=40
    ),
    k=st.integers(1, 8),
    limit=st.sampled_from([0.0, 0.05, 0.2, 1.0]),
)
def test_target_check_counts_records_like_the_reference(rows, k, limit):
    frame = pd.DataFrame(rows, columns=["a", "b", "n"])
    ds = Dataset.from_frame("d", frame, {"a": "quasi-identifier", "b": "quasi-identifier", "n": "count"})
    keys, sizes = reference_classes(frame, ["a", "b"], "n")
    failing_classes = {key for key in keys if 0 < sizes[key] < k}
    failing = sum(sizes[key] for key in failing_classes)
    records = int(frame["n"].sum())
    check = ReleaseTarget(k=k, max_suppressed=limit).check(ds)
    assert (check.records, check.failing_records, check.failing_classes) == (records, failing, len(failing_classes))
    assert check.met == (failing == 0)
    assert check.met_after_suppression == (failing / records <= limit)
    assert [n for _, n in check.examples] == sorted(n for n in (sizes[key] for key in failing_classes))[:10]
    assert dict(check.failing).get(f"k = {k}", 0) == failing


def test_target_counts_suppressed_records_against_the_loaded_file():
    ds = Dataset.from_frame("d", pd.DataFrame({"a": list("xxxy")}), {"a": "quasi-identifier"})
    smaller = Dataset.from_frame("d", pd.DataFrame({"a": list("xxx")}), {"a": "quasi-identifier"})
    check = ReleaseTarget(k=2, max_suppressed=0.25).check(smaller, loaded_records=4)
    assert (check.met, check.suppressed_records, check.suppressed_share) == (True, 1, 0.25)
    assert not ReleaseTarget(k=2, max_suppressed=0.2).check(smaller, loaded_records=4).met
    assert ReleaseTarget(k=2).check(ds).examples == (("a=y", 1),)


def test_target_json_round_trip_and_bad_values():
    target = ReleaseTarget(k=4, max_suppressed=0.02)
    assert ReleaseTarget.from_json(json.loads(json.dumps(target.to_json()))) == target
    for bad in (
        {"k": 0, "max_suppressed": 0, "requirements": []},
        {"k": 5, "max_suppressed": 2, "requirements": []},
        {"k": 5, "max_suppressed": 0, "requirements": [], "extra": 1},
        {"k": True, "max_suppressed": 0, "requirements": []},
    ):
        with pytest.raises(RecipeError) as err:
            ReleaseTarget.from_json(bad)
        assert one_sentence(str(err.value))


# --------------------------------------------------------------- cost


def test_cost_says_what_a_suggestion_removes():
    ds = load_sample("arca_table1")
    h = arca_hierarchies(ds.frame)
    keep = GeneralizationStep((("Zip", 1), ("Age", 1), ("AC", 0)), tuple(h.items()))
    drop = GeneralizationStep((("Zip", 5), ("Age", 1), ("AC", 0)), tuple(h.items()))
    costs = [step_cost(drop, ds), step_cost(keep, ds)]
    assert (
        costs[0].removes_quasi_identifier
        and "Zip is replaced by *****: the column is effectively removed." in costs[0].sentences()
    )
    assert not costs[1].removes_quasi_identifier
    assert default_choice(costs) == 1
    zips = ds.frame["Zip"].nunique()
    assert f"Zip: {zips} values become {keep.apply(ds.frame)['Zip'].nunique()}." in costs[1].sentences()
    suppress = step_cost(SuppressionStep(("Zip", "Age", "AC", "Race"), 3, count="#Rec."), ds)
    assert (
        suppress.suppressed_records > 0
        and f"{suppress.suppressed_records} records suppressed" in suppress.sentences()[0]
    )


# --------------------------------------------------------------- working copy


def adult_small() -> Dataset:
    ds = load_sample("adult")
    return Dataset(ds.name, ds.frame.head(400).reset_index(drop=True), ds.roles, notes=ds.notes).validated()


@settings(max_examples=15, deadline=None)
@given(ops=st.lists(st.sampled_from(["bands", "generalize", "suppress", "undo", "reset"]), min_size=1, max_size=8))
def test_undo_restores_the_exact_frame_and_reset_the_loaded_file(ops):
    loaded = adult_small()
    snapshot = loaded.frame.copy(deep=True)
    copy = WorkingCopy.start(loaded, ReleaseTarget(k=3))
    frames = [loaded.frame]
    h = default_hierarchy(loaded.frame["education"], "education")[1]
    for op in ops:
        if op == "bands":
            step = BandsStep("age", 10, 3, 0, 99, True)
        elif op == "generalize":
            step = GeneralizationStep((("education", 1),), (("education", h),))
        elif op == "suppress":
            step = SuppressionStep.from_target(copy.target, copy.current)
        if op in ("bands", "generalize", "suppress"):
            try:
                copy = copy.apply(step, "test")
            except AnonlibError:  # bands on an already banded column: refused, nothing changes
                assert copy.current.frame is frames[-1]
                continue
            frames.append(copy.current.frame)
        elif op == "undo" and copy.steps:
            before = frames[-2].copy(deep=True)
            copy = copy.undo()
            frames.pop()
            assert copy.current.frame is frames[-1]
            pd.testing.assert_frame_equal(copy.current.frame, before)
        elif op == "reset":
            copy = copy.reset()
            frames = [loaded.frame]
            assert copy.current is loaded
    pd.testing.assert_frame_equal(loaded.frame, snapshot)  # the loaded file is never changed
    assert copy.reset().current is loaded


def test_history_records_page_changes_and_risk_in_records():
    loaded = adult_small()
    copy = WorkingCopy.start(loaded, ReleaseTarget(k=5))
    copy = copy.apply(BandsStep("age", 10, 3, 0, 99, True), "Individual privacy")
    copy = copy.apply(SuppressionStep.from_target(copy.target, copy.current), "Sidebar")
    bands, suppression = copy.steps
    assert bands.page == "Individual privacy" and bands.changed_columns == ("age",)
    assert bands.before.failing_records == copy.loaded_check.failing_records > bands.after.failing_records
    assert suppression.suppressed_records == bands.after.failing_records
    assert (
        suppression.after.failing_records == 0
        and suppression.after.suppressed_records == suppression.suppressed_records
    )
    assert not copy.check.met  # the suppression limit is 0
    assert copy.with_target(ReleaseTarget(k=5, max_suppressed=1.0)).check.met
    assert "records failing the target" in bands.summary()


def test_undo_without_steps_is_a_sentence():
    with pytest.raises(AnonlibError) as err:
        WorkingCopy.start(adult_small()).undo()
    assert one_sentence(str(err.value))


# --------------------------------------------------------------- recipes


steps_strategy = st.one_of(
    st.builds(
        lambda w, o, lo, span, i: BandsStep("age", w, o % w, lo, lo + span, i),
        st.integers(1, 50),
        st.integers(0, 100),
        st.integers(-50, 50),
        st.integers(0, 200),
        st.booleans(),
    ),
    st.builds(
        lambda level: GeneralizationStep(
            (("zip", level),), (("zip", masking_hierarchy(["52000", "52100"])),), "iab", 3
        ),
        st.integers(0, 5),
    ),
    st.builds(
        lambda n: AggregationStep("area", tuple((str(i), f"A{i % 3}") for i in range(n)), "balanced", 5),
        st.integers(1, 20),
    ),
    st.builds(
        lambda k, c: SuppressionStep(("age", "sex"), k, count=c), st.integers(1, 9), st.sampled_from([None, "n"])
    ),
    st.just(PolicyStep.from_space(prepare(pd.DataFrame({"age": [20, 25, 30, 40]}), ["age"]), {"age": [0, 0, 1]})),
)


@FAST
@given(steps=st.lists(steps_strategy, max_size=5), k=st.integers(1, 20), limit=st.sampled_from([0.0, 0.01, 0.5]))
def test_recipe_json_round_trips(steps, k, limit):
    for step in steps:
        assert step_from_json(json.loads(json.dumps(step.to_json()))) == step
    ds = Dataset.from_frame(
        "d", pd.DataFrame({"age": [30], "sex": ["f"], "zip": ["52000"], "area": ["1"], "n": [1]}), {"n": "count"}
    )
    from anonlib.workflow.recipe import RecipeStep, Source

    recipe = Recipe(
        Source.of(ds, Reading(",", "utf-8", True)),
        ReleaseTarget(k=k, max_suppressed=limit),
        tuple(RecipeStep(s, f"page {i}") for i, s in enumerate(steps)),
        ("age", "sex", "n"),
        "abc",
        1,
    )
    assert Recipe.loads(recipe.dumps()) == recipe


def write_csv(tmp_path, name: str, frame: pd.DataFrame) -> bytes:
    data = frame.to_csv(index=False).encode("utf-8")
    (tmp_path / name).write_bytes(data)
    return data


def upload(data: bytes, name: str) -> tuple[Dataset, Reading]:
    table = load_table(data, name=name)
    return Dataset.from_frame(name, table.frame, notes=table.notes), Reading.of(table, data)


def small_report():
    """A report of a tiny table: a package test that checks the table and recipe only needs no full report."""
    return build_report(Dataset.from_frame("tiny", pd.DataFrame({"a": [1, 1]})), k=1)


def test_recipe_on_the_original_reproduces_the_released_bytes(tmp_path):
    frame = load_sample("adult").frame.head(3000)
    data = write_csv(tmp_path, "adult.csv", frame)
    loaded, reading = upload(data, "adult.csv")
    roles = {c: "ignore" for c in loaded.frame.columns}
    roles.update(
        {
            "fnlwgt": "identifier",
            "age": "quasi-identifier",
            "sex": "quasi-identifier",
            "race": "quasi-identifier",
            "native-country": "quasi-identifier",
            "occupation": "sensitive",
            "income": "sensitive",
        }
    )
    loaded = loaded.with_roles(roles)
    copy = WorkingCopy.start(loaded, ReleaseTarget(k=5, max_suppressed=0.1), reading=reading)
    copy = copy.apply(BandsStep("age", 10, 7, 17, 90, True), "Individual privacy")
    h = default_hierarchy(loaded.frame["native-country"], "native-country")[1]
    copy = copy.apply(GeneralizationStep((("native-country", 1),), (("native-country", h),), "iab", 5), "Leakage")
    copy = copy.apply(SuppressionStep.from_target(copy.target, copy.current), "Sidebar")
    columns = [
        "age",
        "education",
        "sex",
        "race",
        "marital-status",
        "native-country",
        "occupation",
        "income",
        "capital-gain",
    ]
    files = package_files(copy, columns=columns, report=small_report())
    recipe = Recipe.loads(files.recipe)
    replay = apply_recipe(recipe, tmp_path / "adult.csv")
    assert replay.csv == files.table and replay.same_file and replay.reproduces and replay.check.met
    assert "fnlwgt" not in replay.table.columns and "capital-gain" in replay.table.columns
    assert replay.table["age"].str.contains("-").all()


def test_recipe_with_edited_types_count_column_and_missing_values_reproduces(tmp_path):
    frame = pd.DataFrame(
        {
            "zip": ["02101", "02101", "02102", "02102", None, "02103"],
            "age": [31, 35, 38, 44, 41, 50],
            "dx": ["a", "b", "a", "b", "a", "c"],
            "n": [1, 2, 1, 1, 3, 1],
        }
    )
    data = write_csv(tmp_path, "t.csv", frame)
    loaded, reading = upload(data, "t.csv")
    edits = loaded.role_table()
    edits.loc[edits["column"] == "age", "type"] = "category"
    edits.loc[edits["column"] == "n", "role"] = "count"
    edits.loc[edits["column"] == "zip", "role"] = "quasi-identifier"
    loaded = loaded.with_edits(edits).with_missing("drop")
    h = masking_hierarchy(loaded.frame["zip"].dropna())
    copy = WorkingCopy.start(loaded, ReleaseTarget(k=2), reading=reading)
    copy = copy.apply(GeneralizationStep((("zip", 1),), (("zip", h),)), "Leakage")
    files = package_files(copy, columns=["zip", "dx"], report=small_report())
    replay = apply_recipe(Recipe.loads(files.recipe), data, name="t.csv")
    assert replay.csv == files.table and replay.reproduces
    # the row with a missing ZIP is left out, identical rows merged with their counts added
    assert replay.table.values.tolist() == [["0210*", "a", 2], ["0210*", "b", 3], ["0210*", "c", 1]]
    assert replay.dataset.frame["age"].tolist()[:2] == ["31", "35"]  # the recorded type (text) was set


def test_a_recipe_for_another_layout_is_one_sentence(tmp_path):
    frame = load_sample("arca_table1").frame
    h = arca_hierarchies(frame)
    ds = load_sample("arca_table1")
    copy = WorkingCopy.start(ds, ReleaseTarget(k=3)).apply(
        GeneralizationStep((("Zip", 1), ("Age", 1), ("AC", 0)), tuple(h.items())), "Leakage"
    )
    recipe = copy.recipe()
    missing = frame.drop(columns=["Age"])
    with pytest.raises(ColumnError, match="lacks Age, which the recipe needs") as err:
        apply_recipe(recipe, missing.to_csv(index=False).encode())
    assert one_sentence(str(err.value))
    new_value = frame.assign(Zip=frame["Zip"].replace({52000: 99999}))
    with pytest.raises(HierarchyError, match="does not cover the value '99999'") as err:
        apply_recipe(recipe, new_value.to_csv(index=False).encode())
    assert str(err.value).startswith("Step 1 (") and "\n" not in str(err.value)
    text_age = frame.assign(Age=frame["Age"].astype(str).replace({"35": "thirty-five"}))
    with pytest.raises(ColumnError, match="cannot be made numeric") as err:
        apply_recipe(recipe, text_age.to_csv(index=False).encode())
    assert one_sentence(str(err.value))


def hand_edits() -> list:
    ds = load_sample("arca_table1")
    h = arca_hierarchies(ds.frame)
    copy = WorkingCopy.start(ds, ReleaseTarget(k=3)).apply(
        GeneralizationStep((("Zip", 1), ("Age", 1), ("AC", 0)), tuple(h.items())), "Leakage"
    )
    good = copy.recipe().to_json()

    def edited(change):
        data = json.loads(json.dumps(good))
        change(data)
        return json.dumps(data)

    return [
        "",  # empty file
        json.dumps(good)[:200],  # cut short
        "[1, 2, 3]",
        edited(lambda d: d.update(version=99)),
        edited(lambda d: d.pop("target")),
        edited(lambda d: d["target"].update(k="three")),
        edited(lambda d: d["steps"][0]["step"].update(kind="shuffle")),
        edited(lambda d: d["steps"][0]["step"]["levels"][0].update(level=9)),
        edited(lambda d: d["steps"][0]["step"]["hierarchies"][0]["rows"].pop()),  # a value no longer covered
        edited(lambda d: d["steps"][0]["step"]["hierarchies"][0]["rows"][0].append("extra")),
        edited(lambda d: d["steps"][0]["step"].update(surprise=True)),
        edited(lambda d: d["source"]["columns"][0].update(role="owner")),
        edited(lambda d: d["release"].update(columns=["Nope"])),
        edited(
            lambda d: d["steps"].append(
                {
                    "page": "x",
                    "step": {
                        "kind": "bands",
                        "column": "Age",
                        "width": -1,
                        "offset": 0,
                        "low": 0,
                        "high": 9,
                        "integer": True,
                    },
                }
            )
        ),
    ]


@pytest.mark.parametrize("text", hand_edits())
def test_a_damaged_or_hand_edited_recipe_is_one_sentence(text):
    with pytest.raises(AnonlibError) as err:
        recipe = Recipe.loads(text)
        apply_recipe(recipe, sample_path("arca_table1.csv"))
    assert one_sentence(str(err.value)), str(err.value)


# --------------------------------------------------------------- package


def test_release_package_holds_table_report_and_recipe(tmp_path):
    ds = load_sample("arca_table1")
    h = arca_hierarchies(ds.frame)
    result = search(ds.frame, ["Zip", "Age", "AC"], 3, h, "iab", count="#Rec.")
    copy = WorkingCopy.start(ds.with_roles({"Sex": "ignore", "Race": "ignore", "Weight": "ignore"}), ReleaseTarget(k=3))
    copy = copy.apply(GeneralizationStep.from_search(result, h), "Leakage")
    data = release_package(copy, created="2026-01-02T03:04:05Z")
    assert release_package(copy, created="2026-01-02T03:04:05Z") == data  # deterministic at a given time
    archive = zipfile.ZipFile(io.BytesIO(data))
    assert archive.namelist() == ["released.csv", "report.html", "recipe.json", "README.txt", "SHA256SUMS"]
    table = archive.read("released.csv")
    assert table == release_csv(copy.release())
    values = ["AC", "Age", "Zip", "Genetic risk"]  # the search's table, reduced to the released columns
    reference = result.table.groupby(values, sort=False, dropna=False)["#Rec."].sum().reset_index()
    assert table == to_safe_csv(reference)
    assert "Risk report" in archive.read("report.html").decode()
    recipe = Recipe.loads(archive.read("recipe.json"))
    assert apply_recipe(recipe, sample_path("arca_table1.csv")).csv == table
    assert "python -m anonlib apply recipe.json" in archive.read("README.txt").decode()
