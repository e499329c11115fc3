"""Project store benchmarks (projects.md): what saving adds to a page run on a 10^5-record file.

Every change in the dashboard (a role, the target, a step, undo, reset) is saved before the
page finishes: the working copy written down as a ``ProjectState`` (source, target, steps)
and one compare-and-set transaction on the SQLite store (WAL, ``synchronous=FULL``). The
file's bytes are written once, when it is uploaded, not on every change. Target: under 50 ms
per change on a 10^5-record file (Diabetes, 101,766 records, with a generalization-sized
history: bands on age and the failing records suppressed). Reported beside it: the upload's
first save (the file's bytes kept) and opening the project again after a reload (the file
read and the steps replayed).
"""

from __future__ import annotations

import tempfile

from anonlib.core.dataset import Dataset
from anonlib.core.loading import load_table
from anonlib.core.samples import SAMPLES, sample_path
from anonlib.projects import ProjectState, ProjectStore
from anonlib.workflow import BandsStep, ReleaseTarget, SuppressionStep, WorkingCopy
from anonlib.workflow.recipe import Reading
from bench import Benchmark

TARGET_S = 0.050


def _setup():
    data = sample_path(SAMPLES["diabetes"].file).read_bytes()
    table = load_table(data, name="diabetes.csv.gz")
    sample = SAMPLES["diabetes"]
    roles = {c: "ignore" for c in table.frame.columns} | dict(sample.roles)
    dataset = Dataset.from_frame("diabetes.csv.gz", table.frame, roles)
    copy = WorkingCopy.start(dataset, ReleaseTarget(k=5, max_suppressed=0.1), reading=Reading.of(table, data))
    qis = dataset.quasi_identifiers
    numeric = next(c for c in qis if dataset.frame[c].dtype.kind in "iu")
    values = dataset.frame[numeric]
    copy = copy.apply(BandsStep(numeric, 10, 0, int(values.min()), int(values.max()), True), "Individual privacy")
    copy = copy.apply(SuppressionStep.from_target(copy.target, copy.current), "Sidebar")
    store = ProjectStore(f"sqlite:///{tempfile.mkdtemp(prefix='anonlib-bench-')}/projects.sqlite")
    ref = store.create("diabetes", ProjectState.of(copy, "upload:diabetes.csv.gz"), data)
    return {"store": store, "ref": [ref], "copy": copy, "data": data, "k": [5]}


def _save_change(inputs) -> int:
    """One change saved as the dashboard saves it: the state of the working copy, then the store."""
    inputs["k"][0] = 4 if inputs["k"][0] == 5 else 5
    copy = inputs["copy"]
    copy = WorkingCopy(copy.loaded, ReleaseTarget(k=inputs["k"][0], max_suppressed=0.1), copy.steps, copy.reading)
    state = ProjectState.of(copy, "upload:diabetes.csv.gz")
    inputs["ref"][0] = inputs["store"].save(inputs["ref"][0], state, "release target set")
    return len(state.dumps())


def _first_save(inputs) -> int:
    inputs["k"][0] += 1  # other bytes each time, so they are written (the store keeps equal files once)
    data = inputs["data"] + str(inputs["k"][0]).encode()
    inputs["store"].create("upload", ProjectState.of(inputs["copy"], "upload:diabetes.csv.gz"), data)
    return len(data)


def _reopen(inputs):
    project = inputs["store"].load(inputs["ref"][0])
    return project.state.restore(inputs["store"].file(project.ref))


BENCHMARKS = [
    Benchmark(
        "project: save one change, 10^5 records (Diabetes, 2 steps)",
        TARGET_S,
        _setup,
        _save_change,
        repeat=25,
        note=lambda n: f"{n:,} bytes of state per change; the file is not written again",
    ),
    Benchmark(
        "project: first save of an upload (the file's bytes kept)",
        None,
        _setup,
        _first_save,
        repeat=3,
        note=lambda n: f"{n / 1e6:.1f} MB written (the file as uploaded)",
    ),
    Benchmark(
        "project: open again after a reload (read the file, replay 2 steps)",
        None,
        _setup,
        _reopen,
        repeat=3,
        note=lambda copy: f"{copy.current.n_records:,} records in the working copy",
    ),
]
