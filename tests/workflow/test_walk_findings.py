"""Defects of the library found walking the dashboard with a longitudinal file (a person column,
several records per person, blanks), each with a test that failed before its fix."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pandas as pd

from anonlib.core.dataset import Dataset
from anonlib.workflow import ReleaseTarget, SuppressionStep, WorkingCopy
from anonlib.workflow.health_steps import PseudonymizeStep
from anonlib.workflow.package import release_package
from anonlib.workflow.release_view import column_view
from anonlib.workflow.report import build_report

KEY = bytes(range(32))


def visits() -> Dataset:
    """Six people, two records each; P4 and P5 alone in their age."""
    frame = pd.DataFrame(
        {
            "pid": [f"P{p}" for p in range(6) for _ in range(2)],
            "age": [30] * 8 + [40, 40, 50, 50],
            "diagnosis": list("abababababab"),
        }
    )
    return Dataset.from_frame("v.csv", frame, {"pid": "person", "age": "quasi-identifier", "diagnosis": "sensitive"})


def test_the_package_states_the_target_in_the_unit_it_was_checked_in():
    """The README and the report's Release table stated the sidebar's target without its unit
    ("k = 3, at most 30% of records suppressed") while the release was checked in people, on each
    person's whole history (28.3% of the people, but 37.4% of the records, suppressed)."""
    dataset = visits()
    copy = WorkingCopy.start(dataset, ReleaseTarget(k=2, max_suppressed=0.4))
    copy = copy.apply(PseudonymizeStep.made("pid", KEY), "Dataset")
    copy = copy.apply(SuppressionStep.from_target(copy.release_target, copy.current), "Sidebar")
    assert copy.check.met and copy.release_target.unit == "histories"
    stated = copy.release_target.describe()
    assert stated == "k = 2 people over each person's whole history, at most 40% of people suppressed"
    with zipfile.ZipFile(io.BytesIO(release_package(copy, created="2026-01-01T00:00:00Z"))) as package:
        readme = package.read("README.txt").decode()
        report = package.read("report.html").decode()
    line = next(line for line in readme.splitlines() if line.strip().startswith("release target"))
    assert line.split(maxsplit=2)[2] == stated
    assert "of records suppressed" not in readme
    assert "at most 40% of records suppressed" not in report


def test_the_reports_suggested_generalization_says_its_unit():
    """The report searches the target in people with a person column but its summary said "makes every
    class at least 3 records large" (and "Every class already has at least 3 records") of it."""
    dataset = visits()
    target = ReleaseTarget(k=2)
    raised = build_report(dataset, target=target, max_known=1)
    assert any(level for _, level, _, _ in raised.generalization.levels)
    rule = target.in_unit_of(dataset).rule().rstrip(".")
    assert rule.endswith("holds the records of at least 2 people")
    said = [s for s in raised.sentences if s.startswith("Generalizing ")]
    assert len(said) == 1 and f"meets the release target ({rule}) while keeping" in said[0], said
    assert not any("records large" in s for s in raised.sentences)
    met = build_report(dataset.with_roles({"age": "ignore", "diagnosis": "quasi-identifier"}), target=target)
    assert f"The release target is met as it is ({rule}); no generalization is needed." in met.sentences


def test_the_release_view_counts_the_loaded_records_into_the_top_of_a_hierarchy():
    """The Release page's "age: records per value, loaded file and release" drew no loaded-file bar once
    age was generalized to * (the walk's optimal release): '*' was read as cells suppressed one by one,
    which had no value before, so 0 of the loaded file's 404 records were counted into it."""
    ones = np.ones(4, dtype=int)
    ages = pd.Series([30, 35, 45, 60])
    top = column_view("age", "quasi-identifier", ages, pd.Series(["*"] * 4), ones, ones)
    assert [(c.value, c.before, c.after) for c in top.counts] == [("*", 4, 4)]
    beside = column_view("age", "quasi-identifier", ages, pd.Series(["30-39", "30-39", "*", "60-69"]), ones, ones)
    assert [(c.value, c.before, c.after) for c in beside.counts] == [("30-39", 2, 2), ("60-69", 1, 1), ("*", 0, 1)]
