"""The session's working copy, shared by every page.

The loaded dataset (an upload, a sample, or the default sample when a page is
opened first) is never changed; every transformation a page applies is a
step of the session's ``anonlib.workflow.WorkingCopy``. Pages use:

- ``active_dataset()``: the dataset to analyse (the working copy's current table);
- ``apply_step(step, page)``: apply a step from a page (recorded in the history);
  ``apply_step_callback`` for a button's ``on_click`` (a refusal is shown in the sidebar);
- ``undo()``, ``reset()``: drop the last step, or every step;
- ``release_target()`` / ``set_release_target(target)``: the one release target;
- ``working_copy()``: the history, the checks, the recipe and the release;
- ``set_active_dataset(dataset, source, reading=None)``: load a file or sample
  (or the same one with other roles or types: the steps are then replayed);
- ``project_key()`` / ``set_project_key(key)``: the key of pseudonyms and date shifts.

Uploaded data lives only in this session's memory, and so does the project key: until
projects keep one key each, a key is made for the session (or the user uploads the key
file of earlier deliveries); a pseudonym is the same across deliveries only under the
same key, which the page says, and the key file is the user's to download and keep.
"""

from __future__ import annotations

import streamlit as st

from anonlib.core.dataset import Dataset
from anonlib.core.errors import AnonlibError
from anonlib.core.samples import DEFAULT_SAMPLE, load_sample
from anonlib.workflow import Reading, ReleaseTarget, Step, TargetCheck, WorkingCopy
from anonlib.workflow.keys import new_key

_KEY = "active_dataset"  # the loaded dataset (tests and the Dataset page set it)
_SOURCE_KEY = "active_source"
_COPY_KEY = "working_copy"
_TARGET_KEY = "release_target"
_READING_KEY = "active_reading"
_NOTE_KEY = "working_copy_note"
_FRESH_KEY = "working_copy_fresh"  # the next loaded dataset is a new file (not the same one re-roled)
_PROJECT_KEY = "project_key"  # the 256-bit key of pseudonyms and date shifts (memory only)
_KEY_MADE = "project_key_made"  # True: made for this session; False: uploaded by the user


def loaded_dataset() -> Dataset:
    """The dataset as loaded (never changed by steps), falling back to the default sample."""
    dataset = st.session_state.get(_KEY)
    if dataset is None:
        dataset = load_sample(DEFAULT_SAMPLE)
        st.session_state[_KEY] = dataset
        st.session_state[_SOURCE_KEY] = f"sample:{DEFAULT_SAMPLE}"
    return dataset


def release_target() -> ReleaseTarget:
    """The session's release target (k = 5, no model, no suppression until the user sets it)."""
    target = st.session_state.get(_TARGET_KEY)
    if target is None:
        target = st.session_state[_TARGET_KEY] = ReleaseTarget()
    return target


def working_copy() -> WorkingCopy:
    """The session's working copy of the loaded dataset, under the release target."""
    loaded = loaded_dataset()
    target = release_target()
    copy = st.session_state.get(_COPY_KEY)
    if copy is None or copy.loaded is not loaded:
        copy = _follow(copy, loaded)
    if copy.target != target:
        copy = copy.with_target(target)
    st.session_state[_COPY_KEY] = copy
    return copy


def _follow(copy: WorkingCopy | None, loaded: Dataset) -> WorkingCopy:
    """A working copy of a newly set loaded dataset. The same source with other roles
    or types keeps its steps (replayed; dropped with a note when they no longer fit);
    a new file or sample starts without steps."""
    reading = st.session_state.get(_READING_KEY)
    fresh = st.session_state.pop(_FRESH_KEY, True)
    if copy is not None and copy.steps and not fresh:
        try:
            return copy.rebase(loaded, reading)
        except AnonlibError as err:
            st.session_state[_NOTE_KEY] = (
                f"The {len(copy.steps)} applied step(s) no longer fit the changed data and were dropped: {err}"
            )
    return WorkingCopy.start(loaded, release_target(), reading=reading)


def active_dataset() -> Dataset:
    """The dataset every page analyses: the working copy's current table (the loaded
    dataset when no step is applied)."""
    return working_copy().current


def set_active_dataset(dataset: Dataset, source: str, reading: Reading | None = None) -> None:
    """Load ``dataset`` (from ``source``: ``sample:<key>`` or ``upload:<file name>``);
    ``reading`` says how the file was read (for the recipe). Loading the same source
    again (other roles or types) keeps the steps when they still apply."""
    fresh = reading is not None or source != st.session_state.get(_SOURCE_KEY)
    if fresh:
        st.session_state[_READING_KEY] = reading
    st.session_state[_FRESH_KEY] = fresh
    st.session_state[_KEY] = dataset
    st.session_state[_SOURCE_KEY] = source


def active_source() -> str:
    """``sample:<key>`` or ``upload:<file name>`` of the loaded dataset."""
    loaded_dataset()
    return st.session_state[_SOURCE_KEY]


def apply_step(step: Step, page: str) -> WorkingCopy:
    """Apply ``step`` to the working copy from ``page``; raises the step's sentence
    (``AnonlibError``) and leaves the working copy unchanged when it does not apply."""
    copy = working_copy().apply(step, page)
    st.session_state[_COPY_KEY] = copy
    return copy


def apply_step_callback(step: Step, page: str) -> None:
    """``apply_step`` for a button's ``on_click``: a step that does not apply leaves the
    working copy unchanged and its sentence is shown in the sidebar (``take_note``)."""
    try:
        apply_step(step, page)
    except AnonlibError as err:
        st.session_state[_NOTE_KEY] = f"The step from {page} was not applied: {err}"


def undo() -> WorkingCopy:
    """Drop the last step (nothing happens when there is none)."""
    copy = working_copy()
    if copy.steps:
        copy = copy.undo()
        st.session_state[_COPY_KEY] = copy
    return copy


def reset() -> WorkingCopy:
    """Back to the loaded file (the release target is kept)."""
    copy = working_copy().reset()
    st.session_state[_COPY_KEY] = copy
    return copy


def set_release_target(target: ReleaseTarget) -> None:
    """Set the one release target every page checks against."""
    st.session_state[_TARGET_KEY] = target


def target_check() -> TargetCheck | None:
    """The working copy against the release target (None when it cannot be checked:
    ``working_copy().problem`` says why)."""
    return working_copy().check


def take_note() -> str | None:
    """A one-off message about the working copy (a step refused, steps dropped after a data change)."""
    return st.session_state.pop(_NOTE_KEY, None)


def project_key() -> bytes:
    """The key of this session's pseudonyms and date shifts: the one the user uploaded, or
    one made for the session (random, 256 bits, in memory only). The one function every
    page gets the key from (a project store will keep one key per project)."""
    key = st.session_state.get(_PROJECT_KEY)
    if key is None:
        key = st.session_state[_PROJECT_KEY] = new_key()
        st.session_state[_KEY_MADE] = True
    return key


def project_key_made_here() -> bool:
    """Whether the key was made for this session (not uploaded): it is then new, and a
    pseudonym made with it matches no earlier delivery's."""
    project_key()
    return bool(st.session_state.get(_KEY_MADE, True))


def set_project_key(key: bytes) -> None:
    """Use ``key`` (from an uploaded key file) for the pseudonyms and date shifts from now on."""
    st.session_state[_PROJECT_KEY] = bytes(key)
    st.session_state[_KEY_MADE] = False
