"""What the AppTest page tests share: a page that applies a step through the state API (the
sidebar's tests and the Projects page's), and the Release page on the uploaded-like file with a
generalization applied (the Release page's tests and its private section's)."""

from __future__ import annotations

import re
from pathlib import Path

from streamlit.testing.v1 import AppTest
from uploads import NAME, uploaded

from anonlib.core.default_hierarchy import default_hierarchy
from anonlib.workflow import GeneralizationStep, ReleaseTarget, WorkingCopy

ROOT = Path(__file__).resolve().parent.parent
PAGE = str(ROOT / "pages" / "release.py")
TIMEOUT = 240

# A page that applies a step through the state API (as the reworked pages will).
SCRIPT = """
import streamlit as st
from anonlib.core.hierarchy import flat_hierarchy
from anonlib.workflow import GeneralizationStep
from dashboard.state import active_dataset, apply_step_callback
from dashboard.ui import run_with_sidebar

def page():
    st.title("Test page")
    st.text(f"current: {sorted(active_dataset().frame['Gender'].astype(str).unique())}")
    step = GeneralizationStep((("Gender", 1),), (("Gender", flat_hierarchy(["female", "male"])),))
    st.button("Generalize gender", key="apply_gender", on_click=apply_step_callback, args=(step, "Test page"))

run_with_sidebar([st.Page(page, title="Test page")])
"""


def unescaped(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def generalized() -> WorkingCopy:
    """The upload with age generalized by its default hierarchy (10-year bands) and ZIP masked one digit."""
    dataset, reading = uploaded()
    _, ages = default_hierarchy(dataset.frame["age"], "age")
    _, zips = default_hierarchy(dataset.frame["zip"], "zip")
    step = GeneralizationStep({"age": 2, "zip": 1}, {"age": ages, "zip": zips}, method="manual")
    return WorkingCopy.start(dataset, ReleaseTarget(), reading=reading).apply(step, "Leakage & anonymization")


def page_with(copy: WorkingCopy, path: str = PAGE) -> AppTest:
    at = AppTest.from_file(path, default_timeout=TIMEOUT)
    at.session_state["active_dataset"] = copy.loaded  # as the Dataset page's upload sets it
    at.session_state["active_source"] = f"upload:{NAME}"
    at.session_state["working_copy"] = copy
    at.run()
    assert not at.exception, at.exception
    return at
