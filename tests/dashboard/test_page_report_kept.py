"""The Risk report page answers a change of k without building the report from scratch: the
report is kept per working-copy state and p, a new k reuses the sections on the table (individual
privacy above all), and the release package, the printable report and the JSON are built when
downloaded (with the release view), not on every rerun."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import streamlit as st
from streamlit.testing.v1 import AppTest
from uploads import NAME, uploaded

import anonlib.workflow.report as report_module
import dashboard.release_download as release_download
from anonlib.core.default_hierarchy import default_hierarchy
from anonlib.workflow import GeneralizationStep, ReleaseTarget, WorkingCopy
from anonlib.workflow.budgets import RELEASE_VIEW_SECONDS
from anonlib.workflow.release_view import release_view
from anonlib.workflow.report import copy_report
from anonlib.workflow.report_html import render_html

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "report.py")


def generalized() -> WorkingCopy:
    dataset, reading = uploaded()
    _, ages = default_hierarchy(dataset.frame["age"], "age")
    step = GeneralizationStep({"age": 2}, {"age": ages}, method="manual")
    return WorkingCopy.start(dataset, ReleaseTarget(k=2), reading=reading).apply(step, "Leakage & anonymization")


def test_k_back_and_forth_reuses_the_report_and_builds_no_package(monkeypatch) -> None:
    copy = generalized()
    expected = copy_report(copy.with_target(ReleaseTarget(k=5)))  # before counting
    counts = {"privacy": 0, "reports": 0, "packages": 0, "views": 0}

    def counting(name, real):
        def run(*args, **kwargs):
            counts[name] += 1
            return real(*args, **kwargs)

        return run

    monkeypatch.setattr(report_module, "_privacy_section", counting("privacy", report_module._privacy_section))
    monkeypatch.setattr(release_download, "build_report", counting("reports", release_download.build_report))
    monkeypatch.setattr(release_download, "release_package", counting("packages", release_download.release_package))
    monkeypatch.setattr(report_module, "with_release_view", counting("views", report_module.with_release_view))
    st.cache_data.clear()
    st.cache_resource.clear()
    at = AppTest.from_file(PAGE, default_timeout=240)
    at.session_state["active_dataset"] = copy.loaded
    at.session_state["active_source"] = f"upload:{NAME}"
    at.session_state["working_copy"] = copy
    at.session_state["release_target"] = copy.target
    at.run()
    assert not at.exception, at.exception
    assert counts == {"privacy": 1, "reports": 1, "packages": 0, "views": 0}
    shown = {m.label: m.value for m in at.metric}

    at.session_state["release_target"] = ReleaseTarget(k=5)  # as the sidebar's k sets it
    at.run()
    assert not at.exception, at.exception
    assert counts == {"privacy": 1, "reports": 2, "packages": 0, "views": 0}  # privacy reused
    kept = {m.label: m.value for m in at.metric}
    assert kept["distinct combinations kept"] == f"{expected.generalization.rows:,}"
    assert kept["records protected: diagnosis"] == shown["records protected: diagnosis"]

    at.session_state["release_target"] = ReleaseTarget(k=2)  # back: the kept report
    at.run()
    at.run()  # and a rerun with nothing changed
    assert not at.exception, at.exception
    assert counts == {"privacy": 1, "reports": 2, "packages": 0, "views": 0}
    assert {m.label: m.value for m in at.metric} == shown
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels[:3] == ["Release package (zip)", "Printable report (HTML)", "Parameters and results (JSON)"]


def test_the_downloads_hold_the_release_view_the_page_does_not_compute() -> None:
    st.cache_resource.clear()
    copy = generalized()
    shown = release_download.page_report(copy, 0.0)
    assert shown.release_view is None  # the page's report: no classifier run
    full = release_download.full_report(copy, 0.0, report=shown)
    view = release_view(copy, time_limit=RELEASE_VIEW_SECONDS, strict=False)
    assert replace(full.release_view, seconds=0.0, classifier=None) == replace(view, seconds=0.0, classifier=None)
    kept, again = full.release_view.classifier, view.classifier
    if not (kept.timed_out or again.timed_out):  # the same seeded rows, the same numbers
        assert kept.released == again.released
    else:  # on a loaded machine a run is cut to its time limit, and says so: fewer records, never more
        assert min(kept.released.records, again.released.records) < kept.records_released
    assert replace(full, release_view=None) == replace(copy_report(copy), release_view=None)
    assert "What the release is still good for" in render_html(full)
    assert release_download.full_report(copy, 0.0, report=shown) is full  # kept: the three downloads share it
