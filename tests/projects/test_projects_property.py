"""Property: any sequence of up to 50 actions (upload, roles, target, steps, undo, reset,
release), each saved as the dashboard saves it, then the store reopened: the project gives
the same working copy and the same released bytes, and every release recorded verifies."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from project_files import delivery, loaded

from anonlib.core.errors import AnonlibError
from anonlib.projects import ProjectState, ProjectStore, audit_entries, record_table, verify_entry
from anonlib.projects import store as store_module
from anonlib.workflow import BandsStep, ReleaseTarget, SuppressionStep, WorkingCopy, release_csv
from anonlib.workflow.release import digest

ACTIONS = st.one_of(
    st.tuples(st.just("upload"), st.integers(0, 3)),
    st.tuples(
        st.just("role"),
        st.sampled_from(["age", "sex", "zip", "dx"]),
        st.sampled_from(["quasi-identifier", "sensitive", "ignore", "identifier"]),
    ),
    st.tuples(st.just("target"), st.integers(1, 6), st.sampled_from([0.0, 0.05, 0.3, 1.0])),
    st.tuples(st.just("bands"), st.sampled_from([5, 10, 25])),
    st.tuples(st.just("suppress")),
    st.tuples(st.just("undo")),
    st.tuples(st.just("reset")),
    st.tuples(st.just("release")),
)


class Session:
    """What a dashboard session does, action by action, saving each change to the store."""

    def __init__(self, store: ProjectStore) -> None:
        self.store = store
        self.copy: WorkingCopy | None = None
        self.ref = None
        self.data: bytes | None = None
        self.releases: dict[int, str] = {}

    def _save(self, change: str) -> None:
        state = ProjectState.of(self.copy, "upload:survey.csv")
        self.ref = self.store.save(self.ref, state, change)

    def act(self, action: tuple) -> None:
        kind = action[0]
        if kind == "upload":
            self.data = delivery(action[1], rows=60)
            dataset, reading = loaded(self.data)
            target = self.copy.target if self.copy is not None else ReleaseTarget()
            self.copy = WorkingCopy.start(dataset, target, reading=reading)
            self.ref = self.store.create("survey", ProjectState.of(self.copy, "upload:survey.csv"), self.data)
            return
        if self.copy is None:
            return
        copy = self.copy
        try:
            if kind == "role":
                changed = copy.loaded.with_roles({action[1]: action[2]})
                try:
                    copy = copy.rebase(changed)
                except AnonlibError:  # the steps no longer fit: dropped, as the dashboard drops them
                    copy = WorkingCopy.start(changed, copy.target, reading=copy.reading)
            elif kind == "target":
                copy = copy.with_target(ReleaseTarget(k=action[1], max_suppressed=action[2]))
            elif kind == "bands":
                ages = copy.current.frame["age"].dropna()
                if ages.dtype.kind not in "iu" or ages.empty:
                    return
                copy = copy.apply(BandsStep("age", action[1], 0, int(ages.min()), int(ages.max()), True), "Individuals")
            elif kind == "suppress":
                copy = copy.apply(SuppressionStep.from_target(copy.target, copy.current), "Sidebar")
            elif kind == "undo":
                if not copy.steps:
                    return
                copy = copy.undo()
            elif kind == "reset":
                copy = copy.reset()
            elif kind == "release":
                recipe = copy.recipe()
                table = release_csv(copy.release(recipe.columns))
                entry = record_table(self.store, self.ref, recipe, table, source=self.data, user="test")
                self.releases[entry.id] = digest(table)
                return
        except AnonlibError:  # a step or a release refused with a sentence: the working copy is unchanged
            return
        self.copy = copy
        self._save(kind)


def _released(copy: WorkingCopy) -> bytes | None:
    try:
        return release_csv(copy.release(copy.recipe().columns))
    except AnonlibError:
        return None


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(actions=st.lists(ACTIONS, max_size=50))
def test_any_sequence_of_actions_reopens_as_it_was(tmp_path_factory, actions):
    url = f"sqlite:///{tmp_path_factory.mktemp('property') / 'projects.sqlite'}"
    session = Session(ProjectStore(url))
    for action in actions:
        session.act(action)
    store_module._ENGINES.pop(url).dispose()
    reopened = ProjectStore(url)
    if session.copy is None:
        assert reopened.summaries() == []
        return
    project = reopened.load(session.ref.id)
    assert project.ref == session.ref
    restored = project.state.restore(reopened.file(project.ref))
    copy = session.copy
    assert restored.loaded.fingerprint == copy.loaded.fingerprint
    assert dict(restored.loaded.roles) == dict(copy.loaded.roles)
    assert restored.target == copy.target
    assert [a.summary() for a in restored.steps] == [a.summary() for a in copy.steps]
    assert restored.current.frame.equals(copy.current.frame)
    assert _released(restored) == _released(copy)
    entries = {e.id: e for e in audit_entries(reopened)}
    assert sorted(entries) == sorted(session.releases)
    for entry_id, table_digest in session.releases.items():
        assert entries[entry_id].released_sha256 == table_digest
        checks = {c.part: c.passed for c in verify_entry(reopened, entry_id).checks}
        # re-applied to the kept file, the recipe writes the same bytes; the target is judged as it was
        assert checks == {"released.csv": True, "target": entries[entry_id].met}
