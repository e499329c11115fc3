"""The Release page answers a change of k without measuring the release again: the
distributions, the contingency table and the classifier depend on the released table only
(cached on ``release_key``), and the target's lines are restated (``restated``)."""

from __future__ import annotations

import re
from pathlib import Path

import streamlit as st
from streamlit.testing.v1 import AppTest
from uploads import NAME, uploaded

import anonlib.workflow.release_view as release_view_module
from anonlib.core.default_hierarchy import default_hierarchy
from anonlib.workflow import GeneralizationStep, ReleaseTarget, WorkingCopy

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "release.py")


def test_changing_k_restates_the_target_and_keeps_the_measured_release(monkeypatch) -> None:
    measured = []
    real = release_view_module.release_view

    def counted(*args, **kwargs):
        measured.append(kwargs.get("predict"))
        return real(*args, **kwargs)

    monkeypatch.setattr(release_view_module, "release_view", counted)
    st.cache_data.clear()
    dataset, reading = uploaded()
    _, ages = default_hierarchy(dataset.frame["age"], "age")
    step = GeneralizationStep({"age": 2}, {"age": ages}, method="manual")
    copy = WorkingCopy.start(dataset, ReleaseTarget(k=2), reading=reading).apply(step, "Leakage & anonymization")
    at = AppTest.from_file(PAGE, default_timeout=240)
    at.session_state["active_dataset"] = copy.loaded
    at.session_state["active_source"] = f"upload:{NAME}"
    at.session_state["working_copy"] = copy
    at.session_state["release_target"] = copy.target  # the sidebar's target (dashboard.state)
    at.run()
    assert not at.exception, at.exception
    first = len(measured)
    shown = {m.label: m.value for m in at.metric}
    assert first >= 1 and shown["target met"] == "yes"
    accuracy = shown["trained on the release"]

    for k, met in ((5_000, "no"), (2, "yes")):  # k far above the records, then back
        at.session_state["release_target"] = ReleaseTarget(k=k)  # as the sidebar's k sets it
        at.run()
        assert not at.exception, at.exception
        shown = {m.label: m.value for m in at.metric}
        assert shown["target met"] == met
        assert shown["trained on the release"] == accuracy
        captions = re.sub(r"\\(.)", r"\1", " ".join(c.value for c in at.caption))  # plain() escapes markdown
        assert f"Release target: {ReleaseTarget(k=k).describe()}." in captions
    assert len(measured) == first  # the release was not measured again
