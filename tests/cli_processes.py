"""Command-line runs in processes of their own, for the tests that need one (a run killed at a
step, ten runs racing): each process is forked from a server process that imported the command
line once (``multiprocessing``'s forkserver). A fresh interpreter spent 1.2-1.6 CPU-seconds importing
pandas, SQLAlchemy and anonlib before the command's first line (tasks.py), and testing that import
was not the point of these tests: the 6 killed and 2 racing-release tests took 40 CPU-seconds as
``python -m anonlib`` processes, 15 forked (bench/NOTES.md).

Each run is a separate process with its own store connection, as ``python -m anonlib`` is; it
starts with this process's environment plus ``env``, its standard output and error are captured.
"""

from __future__ import annotations

import contextlib
import io
import multiprocessing
import os
import signal
import sys
import time
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

PRELOAD = ["anonlib.cli", "anonlib.projects.releasing"]
# what a release package adds (its report's classifier, scikit-learn: 2 CPU-seconds to import), for callers
# whose runs write packages (``preload``)
PACKAGE_PRELOAD = [
    "anonlib.workflow.release_view",
    "anonlib.workflow.report_html",
    *(f"sklearn.{m}" for m in ("compose", "dummy", "impute", "model_selection", "pipeline", "preprocessing", "tree")),
]


@dataclass(frozen=True)
class Run:
    """One finished run: the process's exit code (``-9`` when killed), the command's return code
    (None when it never returned) and what it wrote."""

    exitcode: int | None
    code: int | None
    out: str
    err: str


WRITING = "writing"  # ``signal_at``'s step: half-way through the one writer's copy of an output (cli.common.write)


def _main(
    index: int, argv: list[str], env: dict[str, str], kill_at: str | None, signal_at, start, results, views
) -> None:
    os.environ.update(env)
    from anonlib.cli import common, main
    from anonlib.projects import releasing

    if views:
        from project_files import use_release_views

        use_release_views(views)

    if kill_at is not None:

        def reached(step: str) -> None:
            if step == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)

        releasing.reached = reached
    if signal_at is not None and signal_at[0] == WRITING:
        copy_out, number = common._copy_out, signal_at[1]

        def interrupted_copy(out, data: bytes) -> None:
            copy_out(out, data[: len(data) // 2])
            out.flush()  # half of it on disk, under its temporary name
            os.kill(os.getpid(), number)
            copy_out(out, data[len(data) // 2 :])

        common._copy_out = interrupted_copy
    elif signal_at is not None:
        step, number = signal_at

        def reached(step_reached: str) -> None:
            if step_reached == step:
                os.kill(os.getpid(), number)

        releasing.reached = reached
    if start is not None:
        start.wait(timeout=120)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    results.put((index, code, out.getvalue(), err.getvalue()))


def run_in_processes(
    argvs: Sequence[Sequence[str]],
    env: Mapping[str, str] | None = None,
    *,
    together: bool = False,
    kill_at: str | None = None,
    signal_at: tuple[str, int] | None = None,
    timeout: float = 300,
    preload: Sequence[str] = (),
    views: Mapping[tuple, object] | None = None,
) -> list[Run]:
    """Run each ``argvs[i]`` as a command line in a process of its own; the runs in ``argvs``'s
    order. ``together``: the processes wait for each other and start their commands at once.
    ``kill_at``: each process kills itself (SIGKILL) when its release reaches that step of
    ``releasing.STEPS``. ``signal_at`` = (step, signal): each process sends itself the signal at
    that step of ``releasing.STEPS``, or half-way through writing an output (``WRITING``). A
    process still running after ``timeout`` seconds is killed (its ``exitcode`` is then -9).
    ``preload``: modules the server imports besides ``PRELOAD`` (e.g. ``PACKAGE_PRELOAD``) when this
    call starts it; a server already running has only what its first caller asked (a run then imports
    the rest itself, the same work in every process). ``views``: release views the caller computed
    (``project_files.known_release_views``), handed to each run for the same release instead of its
    package's cross-validated classifier computed again in every process (the same bytes)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([*PRELOAD, *preload])  # no effect once the server runs
    start = context.Barrier(len(argvs)) if together and len(argvs) > 1 else None
    results = context.Queue()
    processes = [
        context.Process(
            target=_main,
            args=(i, [str(a) for a in argv], dict(env or {}), kill_at, signal_at, start, results, dict(views or {})),
        )
        for i, argv in enumerate(argvs)
    ]
    said: dict[int, tuple] = {}
    deadline = time.monotonic() + timeout
    try:
        with _no_script_as_main():
            for process in processes:
                process.start()
        for process in processes:
            process.join(max(0.0, deadline - time.monotonic()))
        # a process that ended by itself flushed its result into the queue before it ended
        while len(said) < sum(p.exitcode == 0 for p in processes):
            index, *rest = results.get(timeout=10)
            said[index] = tuple(rest)
    finally:
        for process in processes:
            if process.is_alive():
                process.kill()
                process.join()
    return [Run(p.exitcode, *said.get(i, (None, "", ""))) for i, p in enumerate(processes)]


@contextlib.contextmanager
def _no_script_as_main():
    """A page's script run by Streamlit (an AppTest earlier in this process) stays ``__main__``,
    with its file; multiprocessing runs the parent's ``__main__`` file again in every child it
    starts, so each child ran the dashboard's page before its command (and saved the page's
    project into the command's store). The children start from an empty ``__main__``."""
    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main
