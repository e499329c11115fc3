"""The Release page's classifier waits behind a button saying how long it takes when its estimate is
over ``dashboard.memo.INSTANT_SECONDS`` (10^5 records; here the threshold is set to 0 instead of
building a big table), is computed once on the press, and is kept: reruns and a change of k do not
compute it again, and the distributions are shown meanwhile."""

from __future__ import annotations

import re
from pathlib import Path

import streamlit as st
from streamlit.testing.v1 import AppTest
from uploads import NAME, uploaded

import anonlib.workflow.release_view as release_view_module
import dashboard.memo
from anonlib.core.default_hierarchy import default_hierarchy
from anonlib.workflow import GeneralizationStep, ReleaseTarget, WorkingCopy
from anonlib.workflow.release_view import classifier_seconds, release_view

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "release.py")


def generalized() -> WorkingCopy:
    dataset, reading = uploaded()
    _, ages = default_hierarchy(dataset.frame["age"], "age")
    step = GeneralizationStep({"age": 2}, {"age": ages}, method="manual")
    return WorkingCopy.start(dataset, ReleaseTarget(k=2), reading=reading).apply(step, "Leakage & anonymization")


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def compute_buttons(at: AppTest) -> list:
    return [b for b in at.button if b.label.startswith("Compute the classifier comparison")]


def test_the_classifier_waits_for_its_button_then_is_kept(monkeypatch) -> None:
    computed = []
    real = release_view_module.release_classifier

    def counted(*args, **kwargs):
        computed.append(args[1] if len(args) > 1 else kwargs.get("predict"))
        return real(*args, **kwargs)

    monkeypatch.setattr(release_view_module, "release_classifier", counted)
    monkeypatch.setattr(dashboard.memo, "INSTANT_SECONDS", 0.0)  # as if the table were 10^5 records
    st.cache_data.clear()
    st.cache_resource.clear()
    copy = generalized()
    at = AppTest.from_file(PAGE, default_timeout=240)
    at.session_state["active_dataset"] = copy.loaded
    at.session_state["active_source"] = f"upload:{NAME}"
    at.session_state["working_copy"] = copy
    at.session_state["release_target"] = copy.target
    at.run()
    assert not at.exception, at.exception
    # the distributions are there, the classifier is not: a button says how long it takes
    assert "records in the release" in metrics(at) and "trained on the release" not in metrics(at)
    assert at.get("plotly_chart")  # the distribution chart
    (button,) = compute_buttons(at)
    seconds = classifier_seconds(copy, copy.loaded_records, time_limit=20.0)
    assert re.fullmatch(r"Compute the classifier comparison \(about \d+ seconds?\)", button.label)
    assert ("1 second" in button.label) == (seconds < 1.5)
    assert computed == []

    button.click().run()
    assert not at.exception, at.exception
    expected = release_view(copy).classifier
    shown = metrics(at)
    assert shown["trained on the release"] == f"{100 * expected.released.mean:.1f}%"
    assert shown["trained on the loaded file"] == f"{100 * expected.original.mean:.1f}%"
    assert any(s.value == f"Predicting {expected.column}" for s in at.subheader)
    assert len(computed) == 1 and not compute_buttons(at)

    at.run()  # a rerun with nothing changed
    at.session_state["release_target"] = ReleaseTarget(k=3)  # and a change of k (the sidebar's)
    at.run()
    assert not at.exception, at.exception
    assert metrics(at)["trained on the release"] == f"{100 * expected.released.mean:.1f}%"
    assert len(computed) == 1 and not compute_buttons(at)  # kept, not computed again

    at.selectbox(key="release_predict").set_value("sex").run()  # another column: its own button
    assert not at.exception and "trained on the release" not in metrics(at) and compute_buttons(at)
    assert len(computed) == 1


def test_a_small_table_shows_the_classifier_without_a_click() -> None:
    st.cache_resource.clear()
    copy = generalized()
    assert classifier_seconds(copy, copy.loaded_records) < dashboard.memo.INSTANT_SECONDS
    at = AppTest.from_file(PAGE, default_timeout=240)
    at.session_state["active_dataset"] = copy.loaded
    at.session_state["active_source"] = f"upload:{NAME}"
    at.session_state["working_copy"] = copy
    at.run()
    assert not at.exception and not compute_buttons(at)
    assert "trained on the release" in metrics(at)
