"""The active dataset of a browser session, shared by every page.

A page calls ``active_dataset()``: the dataset the user loaded or edited on the
Dataset page, or, when there is none yet (a page opened first, a new session,
an AppTest of one page), the default bundled sample. Uploaded data lives only
in this session's memory.
"""

from __future__ import annotations

import streamlit as st

from anonlib.core.dataset import Dataset
from anonlib.core.samples import DEFAULT_SAMPLE, load_sample

_KEY = "active_dataset"
_SOURCE_KEY = "active_source"


def active_dataset() -> Dataset:
    """The session's dataset, falling back to the default sample."""
    dataset = st.session_state.get(_KEY)
    if dataset is None:
        dataset = load_sample(DEFAULT_SAMPLE)
        st.session_state[_KEY] = dataset
        st.session_state[_SOURCE_KEY] = f"sample:{DEFAULT_SAMPLE}"
    return dataset


def set_active_dataset(dataset: Dataset, source: str) -> None:
    """Make ``dataset`` the one every page works on; ``source`` says where it came from."""
    st.session_state[_KEY] = dataset
    st.session_state[_SOURCE_KEY] = source


def active_source() -> str:
    """``sample:<key>`` or ``upload:<file name>`` of the active dataset."""
    active_dataset()
    return st.session_state[_SOURCE_KEY]
