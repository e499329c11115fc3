"""The session's working copy, shared by every page.

The loaded dataset (an upload, a sample, or the default sample when a page is
opened first) is never changed; every transformation a page applies is a
step of the session's ``anonlib.workflow.WorkingCopy``. Pages use:

- ``active_dataset()``: the dataset to analyse (the working copy's current table);
- ``apply_step(step, page)``: apply a step from a page (recorded in the history);
  ``apply_step_callback`` for a button's ``on_click`` (a refusal is shown in the sidebar);
- ``undo()``, ``reset()``: drop the last step, or every step;
- ``release_target()`` / ``set_release_target(target)``: the one release target (``unit_target()``:
  in the unit of the working copy's release, what pages search and check in);
- ``working_copy()``: the history, the checks, the recipe and the release;
- ``set_active_dataset(dataset, source, reading=None, data=None, keep_file=True)``: load
  a file or sample (or the same one with other roles or types: the steps are then replayed);
- ``project_key()`` / ``set_project_key(key)``: the key of pseudonyms and date shifts
  (the open project's, kept in the project store with it; a key made for the session when
  nothing is saved).

Projects (``anonlib.projects``): every setter above saves the working copy to the
project store before the run ends (a new file or sample starts a new project; the
file's bytes are kept unless the user chose not to). ``begin_run`` (first thing of
every run, ``dashboard.ui.run_with_sidebar``) opens the project of the URL's
``?project=`` or the last one opened when a session starts (a reload, a second tab, a
restarted server), and reloads it when another tab or process saved a newer version,
saying so. A store that cannot be used leaves the session on an unsaved working copy,
said in the sidebar (``store_problem``).
"""

from __future__ import annotations

import json
import os
import threading

import streamlit as st

from anonlib.core.dataset import Dataset
from anonlib.core.errors import AccessError, AnonlibError, ProjectError, StaleProjectError, StoreError
from anonlib.core.samples import DEFAULT_SAMPLE, SAMPLES, load_sample
from anonlib.projects import ProjectRef, ProjectState, ProjectStore, store_url
from anonlib.projects.team import add_owner, is_team, mark_team, require, role_of, visible
from anonlib.workflow import Reading, ReleaseTarget, Step, TargetCheck, WorkingCopy
from anonlib.workflow.keys import new_key

from .team import member, team_mode

_KEY = "active_dataset"  # the loaded dataset (tests and the Dataset page set it)
_SOURCE_KEY = "active_source"
_COPY_KEY = "working_copy"
_TARGET_KEY = "release_target"
_READING_KEY = "active_reading"
_NOTE_KEY = "working_copy_note"
_FRESH_KEY = "working_copy_fresh"  # the next loaded dataset is a new file (not the same one re-roled)
_PROJECT_KEY = "project"  # the session's ProjectRef (None: not saved as a project yet)
_PROBLEM_KEY = "project_store_problem"  # why the working copy is not saved (the store cannot be used)
_OPENED_KEY = "project_opened"  # the session has looked for its project (once, on its first run)
_RELOAD_KEY = "project_reload"  # a save found the project stale: reload it at the start of the next run
SAVED_ORIGINS = ("upload:", "sample:")  # tables a project can read again
_PSEUDONYM_KEY = "project_key"  # the 256-bit key of pseudonyms and date shifts (memory only)
_KEY_MADE = "project_key_made"  # True: made for this session; False: uploaded by the user


def first_sample(environ: dict[str, str] | os._Environ = os.environ) -> str:
    """The sample a session opens before anything is loaded: Adult, or the bundled sample that
    ``ANONLIB_FIRST_SAMPLE`` names (the browser tests that upload their own file at once start
    their servers on a small one; the first look at Adult costs seconds of server and browser).

    >>> first_sample({}), first_sample({"ANONLIB_FIRST_SAMPLE": "caballero_table2b"})
    ('adult', 'caballero_table2b')
    """
    key = environ.get("ANONLIB_FIRST_SAMPLE") or DEFAULT_SAMPLE
    return key if key in SAMPLES else DEFAULT_SAMPLE


def loaded_dataset() -> Dataset:
    """The dataset as loaded (never changed by steps), falling back to the first sample (``first_sample``)."""
    dataset = st.session_state.get(_KEY)
    if dataset is None:
        key = first_sample()
        dataset = load_sample(key)
        st.session_state[_KEY] = dataset
        st.session_state[_SOURCE_KEY] = f"sample:{key}"
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


def set_active_dataset(
    dataset: Dataset,
    source: str,
    reading: Reading | None = None,
    data: bytes | None = None,
    keep_file: bool = True,
) -> None:
    """Load ``dataset`` (from ``source``: ``sample:<key>`` or ``upload:<file name>``);
    ``reading`` says how the file was read (for the recipe), ``data`` is the file's bytes
    (kept in the new project when ``keep_file``). Loading the same source again (other
    roles or types) keeps the steps when they still apply and saves the change to the
    session's project; a new file or sample starts a new project."""
    fresh = reading is not None or source != st.session_state.get(_SOURCE_KEY)
    if fresh:
        st.session_state[_READING_KEY] = reading
    st.session_state[_FRESH_KEY] = fresh
    st.session_state[_KEY] = dataset
    st.session_state[_SOURCE_KEY] = source
    if fresh:
        st.session_state[_PROJECT_KEY] = None
        _save("file loaded", data=data, keep_file=keep_file)
    else:
        _save("columns' types or roles changed")


def active_source() -> str:
    """``sample:<key>`` or ``upload:<file name>`` of the loaded dataset."""
    loaded_dataset()
    return st.session_state[_SOURCE_KEY]


def apply_step(step: Step, page: str) -> WorkingCopy:
    """Apply ``step`` to the working copy from ``page``; raises the step's sentence
    (``AnonlibError``) and leaves the working copy unchanged when it does not apply."""
    copy = working_copy().apply(step, page)
    st.session_state[_COPY_KEY] = copy
    _save(f"step applied from {page}: {step.describe()}")
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
        _save("last step undone")
    return copy


def reset() -> WorkingCopy:
    """Back to the loaded file (the release target is kept)."""
    copy = working_copy().reset()
    st.session_state[_COPY_KEY] = copy
    _save("reset to the loaded file")
    return copy


def unit_target() -> ReleaseTarget:
    """The release target in the unit of the working copy's release (``WorkingCopy.release_target``:
    a person or household column released as a pseudonym links its records): what every search
    and check of a page counts in."""
    return working_copy().release_target


def set_release_target(target: ReleaseTarget) -> None:
    """Set the one release target every page checks against (saved to the project)."""
    st.session_state[_TARGET_KEY] = target
    _save(f"release target set: {target.describe()}")


def target_check() -> TargetCheck | None:
    """The working copy against the release target (None when it cannot be checked:
    ``working_copy().problem`` says why)."""
    return working_copy().check


def take_note() -> str | None:
    """A one-off message about the working copy (a step refused, steps dropped after a data change)."""
    return st.session_state.pop(_NOTE_KEY, None)


# ---------------------------------------------------------------------------- projects

_STORES: dict[str, ProjectStore] = {}
_TEAM_STORES: dict[str, bool] = {}  # whether each store is a team's (anonlib.projects.team.is_team)
_STORES_LOCK = threading.Lock()


def project_store() -> ProjectStore | None:
    """The project store (one per store URL in this server process); None when it cannot be
    used, ``store_problem()`` then saying why in one sentence."""
    try:
        url = store_url()
        with _STORES_LOCK:
            store = _STORES.get(url)
            if store is None:
                store = _STORES[url] = ProjectStore(url)
                if team_mode() and not is_team(store):  # the app signs users in: the store is a team's
                    mark_team(store)
                _TEAM_STORES[url] = is_team(store)  # read once per process, not on every call
        if not team_mode() and _TEAM_STORES.get(url):
            raise StoreError(
                f"The project store {store.where} belongs to a team; this dashboard signs nobody in ([auth] in "
                ".streamlit/secrets.toml), so it does not open it."
            )
        return store
    except StoreError as err:
        st.session_state[_PROBLEM_KEY] = str(err)
        return None


def role() -> str | None:
    """The signed-in user's role in the session's project (None without a team; "owner" for a
    working copy not saved yet: saving it makes them its owner)."""
    if not team_mode():
        return None
    ref, store = st.session_state.get(_PROJECT_KEY), project_store()
    if ref is None or store is None:
        return "owner"
    return role_of(store, ref, member())


def store_problem() -> str | None:
    """Why the working copy is not saved (None when it is, or nothing needs saving yet)."""
    return st.session_state.get(_PROBLEM_KEY)


def current_project() -> ProjectRef | None:
    """The session's project (None until the working copy is saved as one)."""
    return st.session_state.get(_PROJECT_KEY)


def _project_name(copy: WorkingCopy, origin: str) -> str:
    if origin.startswith("sample:") and origin[7:] in SAMPLES:
        return SAMPLES[origin[7:]].title
    return str(copy.loaded.name) or "project"


def _save(change: str, *, data: bytes | None = None, keep_file: bool = True) -> None:
    """Save the working copy to the session's project (a new project when it has none), in
    one transaction, before the run ends. A stale project (saved elsewhere meanwhile) is not
    overwritten: it is reloaded at the start of the next run and the user is told."""
    origin = st.session_state.get(_SOURCE_KEY) or ""
    if not origin.startswith(SAVED_ORIGINS):
        return  # a table made by a test or a page without a file behind it: nothing a project could read again
    store = project_store()
    if store is None:
        return
    ref = st.session_state.get(_PROJECT_KEY)
    try:
        state = ProjectState.of(working_copy(), origin)
        if ref is None:
            ref = store.create(  # with the session's key, when pseudonyms were made before the project was
                _project_name(working_copy(), origin),
                state,
                data,
                keep_file=keep_file,
                change=change,
                key=st.session_state.get(_PSEUDONYM_KEY),
            )
            if team_mode():  # the signed-in user who made it is its owner
                add_owner(store, ref, member())
        else:
            if team_mode():
                require(store, ref, member(), "change")
            ref = store.save(ref, state, change)
        st.session_state[_PROJECT_KEY] = ref
        st.session_state.pop(_PROBLEM_KEY, None)
    except StaleProjectError as err:
        st.session_state[_RELOAD_KEY] = ref.id
        st.session_state[_NOTE_KEY] = f"{err} This tab now shows the latest version."
    except StoreError as err:
        st.session_state[_PROBLEM_KEY] = str(err)
    except AccessError as err:  # a role that may not change the project: nothing saved, said (and logged)
        st.session_state[_NOTE_KEY] = str(err)
    except ProjectError as err:  # deleted elsewhere: the next change starts a new project
        st.session_state[_PROJECT_KEY] = None
        st.session_state[_NOTE_KEY] = str(err)


def _seed_target_widgets(target: ReleaseTarget, sensitive: tuple[str, ...]) -> None:
    """The sidebar's target widgets show ``target`` (they would otherwise set their own values back)."""
    st.session_state["target_k"] = int(target.k)
    st.session_state["target_suppressed"] = 100 * float(target.max_suppressed)
    st.session_state["target_power"] = "all" if target.power is None else int(target.power)
    st.session_state["target_linked"] = bool(target.linked)
    chosen = {r.sensitive: r for r in target.requirements}
    for column in sensitive:
        requirement = chosen.get(column)
        st.session_state[f"target_model:{column}"] = requirement.model if requirement else "none"
        if requirement is not None:
            st.session_state[f"target_value:{column}:{requirement.model}"] = float(requirement.value)
            if requirement.c is not None:
                st.session_state[f"target_c:{column}"] = float(requirement.c)


def _install(ref: ProjectRef, origin: str, copy: WorkingCopy) -> None:
    """Make ``copy`` (the working copy of project ``ref``) this session's working copy."""
    st.session_state[_KEY] = copy.loaded
    st.session_state[_SOURCE_KEY] = origin
    st.session_state[_READING_KEY] = copy.reading
    st.session_state[_TARGET_KEY] = copy.target
    st.session_state[_COPY_KEY] = copy
    st.session_state[_FRESH_KEY] = False
    st.session_state[_PROJECT_KEY] = ref
    _seed_target_widgets(copy.target, copy.loaded.sensitive)
    for key in ("source_kind", "sample_key", "upload_signature", "upload_message"):  # the Dataset page follows
        st.session_state.pop(key, None)


def open_project(project: int | str | ProjectRef, data: bytes | None = None) -> ProjectRef:
    """Open a project of the store in this session (``data``: its file, when the project keeps
    only its fingerprint); raises the sentence (``AnonlibError``) and changes nothing when it
    cannot be opened."""
    store = project_store()
    if store is None:
        raise StoreError(store_problem() or "The project store cannot be used.")
    if team_mode():  # only a member opens it (the refusal is logged)
        project = require(store, project, member(), "read").id
    loaded = store.load(project)
    if data is None and not loaded.state.is_sample:
        data = store.file(loaded.ref)
    copy = loaded.state.restore(data, key=store.key(loaded.ref))
    _install(loaded.ref, loaded.state.origin, copy)
    store.opened(loaded.ref)
    return loaded.ref


def open_copy(
    copy: WorkingCopy, origin: str, data: bytes | None, name: str, keep_file: bool = True, key: bytes | None = None
) -> ProjectRef:
    """Start a new project from a working copy made elsewhere (a recipe or a release package
    re-applied to its file; ``key``: the key its pseudonyms were made with, the project's
    from now on) and open it in this session."""
    store = project_store()
    if store is None:
        raise StoreError(store_problem() or "The project store cannot be used.")
    ref = store.create(
        name, ProjectState.of(copy, origin), data, keep_file=keep_file, change="opened from a recipe", key=key
    )
    _install(ref, origin, copy)
    return ref


def ensure_project() -> ProjectRef | None:
    """The session's project, saving the working copy as one first when it is not yet (e.g. the
    default sample, unchanged, when its release package is offered)."""
    if st.session_state.get(_PROJECT_KEY) is None:
        _save("saved for a release")
    return st.session_state.get(_PROJECT_KEY)


def forget_project() -> None:
    """The session's project was deleted: keep the working copy, unsaved until the next change."""
    st.session_state[_PROJECT_KEY] = None


def rename_current(ref: ProjectRef) -> None:
    """The session's project under its new name (and version) after a rename."""
    current = st.session_state.get(_PROJECT_KEY)
    if current is not None and current.id == ref.id:
        st.session_state[_PROJECT_KEY] = ref


def begin_run() -> None:
    """First thing of every run: on a session's first run open its project (``?project=`` or the
    last one opened); later, reload the project when another tab or process saved a newer
    version; keep ``?project=`` in the address, so a reload opens the same project."""
    note = None
    if not st.session_state.get(_OPENED_KEY):
        st.session_state[_OPENED_KEY] = True
        if _KEY not in st.session_state:
            note = _open_at_start()
    else:
        note = _follow_store()
    if note:
        st.session_state[_NOTE_KEY] = note
    ref = st.session_state.get(_PROJECT_KEY)
    wanted = str(ref.id) if ref is not None else None
    if st.query_params.get("project") != wanted:
        if wanted is None:
            st.query_params.pop("project", None)
        else:
            st.query_params["project"] = wanted


def _open_at_start() -> str | None:
    asked = st.query_params.get("project")
    store = project_store()
    if store is None:
        return None
    try:
        if team_mode():  # the last project this user may open (another member's last is none of theirs)
            mine = visible(store, member())
            last = mine[0].id if mine else None
        else:
            last = store.last_opened()
        wanted = int(asked) if asked and asked.isdigit() else last
        if wanted is None:
            return None
        open_project(wanted)
    except AnonlibError as err:
        return f"The last project could not be opened: {err}"
    return None


def _follow_store() -> str | None:
    """Reload the session's project when its stored version moved on (another tab or process)."""
    ref = st.session_state.get(_PROJECT_KEY)
    if ref is None:
        return None
    store = project_store()
    if store is None:
        return None
    try:
        version = store.version(ref.id)
        if version is None:
            st.session_state[_PROJECT_KEY] = None
            return f"The project '{ref.name}' was deleted in another tab or window; this working copy is not saved."
        reload = st.session_state.pop(_RELOAD_KEY, None) == ref.id
        if version == ref.version and not reload:
            return None
        open_project(ref.id)
    except StoreError as err:
        st.session_state[_PROBLEM_KEY] = str(err)
        return None
    except AnonlibError as err:
        return f"The project '{ref.name}' was changed elsewhere and could not be reloaded: {err}"
    return st.session_state.pop(_NOTE_KEY, None) or (
        f"The project '{ref.name}' was changed in another tab or window; this tab now shows the latest version."
    )


def project_key() -> bytes:
    """The key of this session's pseudonyms and date shifts: the open project's (the project
    store keeps one per project, so a reload, a restarted server and the next delivery use the
    same key), else one made for the session or uploaded (random, 256 bits, in memory only).
    The one function every page gets the key from."""
    ref = st.session_state.get(_PROJECT_KEY)
    store = project_store() if ref is not None else None
    if store is not None:
        try:
            return store.key(ref)
        except AnonlibError:
            pass  # the project is gone or the store failed: the session's key below
    key = st.session_state.get(_PSEUDONYM_KEY)
    if key is None:
        key = st.session_state[_PSEUDONYM_KEY] = new_key()
        st.session_state[_KEY_MADE] = True
    return key


def project_key_origin() -> str:
    """Where the key comes from, as the page says it: ``"project"`` (kept with the open
    project), ``"uploaded"`` (a key file the user gave, session only) or ``"session"`` (made
    for this session: a pseudonym made with it matches no earlier delivery's)."""
    ref = st.session_state.get(_PROJECT_KEY)
    if ref is not None and project_store() is not None:
        return "project"
    project_key()
    return "session" if st.session_state.get(_KEY_MADE, True) else "uploaded"


def set_project_key(key: bytes) -> None:
    """Use ``key`` (from an uploaded key file) for the pseudonyms and date shifts from now on:
    the open project's key becomes it (refused in a sentence while its steps hold pseudonyms
    made with another key), else the session's."""
    ref = st.session_state.get(_PROJECT_KEY)
    store = project_store() if ref is not None else None
    if store is not None:
        store.set_key(ref, bytes(key))
    st.session_state[_PSEUDONYM_KEY] = bytes(key)
    st.session_state[_KEY_MADE] = False


def roles_key(dataset: Dataset) -> str:
    """A cache key of ``dataset``'s roles (which columns are quasi-identifiers, the person: the unit)."""
    return json.dumps({c: str(r) for c, r in dataset.roles.items()}, sort_keys=True)


def target_key(target: ReleaseTarget) -> str:
    """A cache key of the release target (its JSON)."""
    return json.dumps(target.to_json(), sort_keys=True, default=str)
