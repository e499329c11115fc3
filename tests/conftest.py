"""Fixtures shared by the tests: a project store of their own for every test, and the
real-browser tests' server and Chromium (see ``live_app.py``); the test tiers (markers and
hypothesis profiles).

Tiers. Every test of a module named below is marked here (``pytest_collection_modifyitems``), so
a new test in such a module is in its tier without a decorator:

- ``slow``: not in the developer's fast tier, ``pytest -m "not slow"`` (``python3 tasks.py test
  --fast``); the full suite (``python3 tasks.py test``) runs everything.
- ``browser``: a real server and headless Chromium; ``spark``: a local Spark session;
  ``postgres``: a real PostgreSQL server (tests using the ``postgresql`` fixture); ``dp``:
  OpenDP's differentially private synthesis.

Hypothesis profiles: ``full`` keeps every test's own example count (``@settings(max_examples=N)``);
``fast`` caps them at ``FAST_EXAMPLES``. The profile is ``HYPOTHESIS_PROFILE`` when set, else
``fast`` when the run deselects the slow tests (``-m "not slow"``), else ``full``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings
from live_app import SMALL_SAMPLE, chromium, dashboard_server

BROWSER_MODULES = {
    "test_browser",
    "test_browser_dp",
    "test_browser_health",
    "test_browser_projects",
    "test_browser_sessions",
    "test_browser_tuning",
    "test_browser_onetruth",
    "test_browser_team",
}
SPARK_MODULES = {"test_engine_spark"}
DP_MODULES = {
    "test_browser_dp",
    "test_charts_private",
    "test_cli_synthesize",
    "test_private_accounting",
    "test_private_package",
    "test_private_release",
    "test_synthesis",
}
# AppTest runs of whole pages (every test_page* module) and sessions (seconds each), and the modules found slow with
# --durations: DuckDB against in memory, OpenDP's synthesis, the installed package (bench/NOTES.md
# keeps the timings)
SLOW_MODULES = {
    *BROWSER_MODULES,
    *SPARK_MODULES,
    "test_engine",
    "test_engine_anonymize",
    "test_synthesis",
    "test_cli_synthesize",
    "test_health_cli",
    "test_packaging",
    "test_app",
    "test_fuzz_session",
    "test_pages_on_upload",
    "test_projects_reliability",
    "test_sidebar",
}

# single tests of a fast module that take several seconds (module::name, with or without its parameters)
SLOW_TESTS = {
    "test_projects_store::test_twelve_monthly_deliveries_through_one_project_are_on_record_and_verify",
    "test_optimal::test_arx_adult_benchmark_beats_the_papers_search",
    "test_avector::test_improvement_leading_terms_equal_exact",
    "test_suppression::test_adult_reaches_k5_recounted_by_plain_pandas_with_fewer_records_than_record_suppression",
    "test_hostile::test_hostile_case[vector_of_a_million]",
}

# Seconds a whole module takes on the 2-core machine (--durations; bench/NOTES.md), for the order
# in which workers start: the longest first, so none of them is left to run alone at the end.
LONG_MODULES = {  # seconds each module held its worker in a full run (3 workers, 2 cores)
    "test_synthesis": 135,
    "test_browser": 110,
    "test_browser_onetruth": 100,
    "test_engine": 80,
    "test_browser_dp": 90,
    "test_browser_team": 85,
    "test_browser_tuning": 70,
    "test_engine_spark": 150,  # with the search in people on Spark (moved from test_engine_people_search)
    "test_browser_sessions": 45,
    "test_browser_projects": 95,
    "test_engine_anonymize": 45,
    "test_fuzz_session": 60,
    "test_browser_health": 35,
    "test_projects_integrity": 60,
    "test_cli_synthesize": 50,
    "test_page_private": 30,
}

# Spark's local sessions (the Spark module and the CLI it starts) read tests/spark-conf: JVM options
# for small, short runs (the file says why).
os.environ.setdefault("SPARK_CONF_DIR", str(Path(__file__).resolve().parent / "spark-conf"))

FAST_EXAMPLES = 10
settings.register_profile("full")  # each test's own max_examples (hypothesis's default elsewhere)
settings.register_profile("fast", max_examples=FAST_EXAMPLES)


def _profile(config: pytest.Config) -> str:
    chosen = config.getoption("hypothesis_profile", default=None) or os.environ.get("HYPOTHESIS_PROFILE")
    if chosen:
        return chosen
    expression = (config.getoption("markexpr", default="") or "").replace(" ", "")
    return "fast" if "notslow" in expression else "full"


def pytest_configure(config: pytest.Config) -> None:
    settings.load_profile(_profile(config))
    _wait_for_apptest_runs_on_their_event()
    _compile_apptest_scripts_once()


def _wait_for_apptest_runs_on_their_event() -> None:
    """AppTest waits for each script run by waking every millisecond and scanning the run's whole
    list of events, which grows with every element the page draws: a tenth of the fuzzed session's
    CPU went there. This waits on the run's SHUTDOWN event instead, with the same timeout and the
    same error when it passes."""
    import threading

    from streamlit.runtime.scriptrunner import ScriptRunnerEvent
    from streamlit.testing.v1 import local_script_runner

    def require_widgets_deltas(runner, timeout: float = 3) -> None:
        done = threading.Event()

        def on_event(_sender, event, **_kwargs) -> None:
            if event == ScriptRunnerEvent.SHUTDOWN:
                done.set()

        runner.on_event.connect(on_event, weak=False)
        try:
            if runner.script_stopped() or done.wait(timeout):  # stopped before we listened, or now
                return
        finally:
            runner.on_event.disconnect(on_event)
        runner.request_stop()
        runner.join()
        raise RuntimeError(f"AppTest script run timed out after {timeout}(s)")

    local_script_runner.require_widgets_deltas = require_widgets_deltas


def _compile_apptest_scripts_once() -> None:
    """AppTest makes a new script cache for every run, so every run compiled app.py and its page
    again. One cache per process, keyed by each file's path, size and modification time, compiles
    each script once; a changed file is compiled again."""
    import threading

    from streamlit.runtime.scriptrunner.script_cache import ScriptCache
    from streamlit.testing.v1 import app_test, local_script_runner

    compiled: dict[tuple, object] = {}
    lock = threading.Lock()

    class CompiledOnce(ScriptCache):
        def get_bytecode(self, script_path: str):
            path = os.path.abspath(script_path)
            stat = os.stat(path)
            key = (path, stat.st_size, stat.st_mtime_ns)
            with lock:
                code = compiled.get(key)
            if code is None:
                code = super().get_bytecode(script_path)
                with lock:
                    compiled[key] = code
            return code

    app_test.ScriptCache = CompiledOnce
    local_script_runner.ScriptCache = CompiledOnce


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    fast = settings.get_current_profile_name() == "fast"
    for item in items:
        module = Path(str(item.fspath)).stem
        if module in BROWSER_MODULES:
            item.add_marker(pytest.mark.browser)
        if module in SPARK_MODULES:
            item.add_marker(pytest.mark.spark)
        if module in DP_MODULES:
            item.add_marker(pytest.mark.dp)
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "postgresql" in getattr(item, "fixturenames", ()) or "postgresql" in [
            v for v in params.values() if isinstance(v, str)
        ]:
            item.add_marker(pytest.mark.postgres)
        names = {f"{module}::{item.name}", f"{module}::{getattr(item, 'originalname', item.name)}"}
        page = module.startswith("test_page")  # an AppTest of a whole page
        if page or module in SLOW_MODULES or names & SLOW_TESTS or item.get_closest_marker("postgres"):
            item.add_marker(pytest.mark.slow)
        if fast:
            _cap_examples(item)
    items[:] = _longest_first(items, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))


def _longest_first(items: list[pytest.Item], workers: int) -> list[pytest.Item]:
    """The tests in the order xdist hands them out: each worker gets an equal run of the list
    (work stealing later takes from the ends of the runs), so the long modules (``LONG_MODULES``,
    each kept whole for its module-scoped server) are dealt to the workers longest first, each
    run starting with them, and the other tests fill the runs in their own order."""
    if workers <= 1:
        return items
    present = {_module(i) for i in items} & LONG_MODULES.keys()
    long_ones = sorted(present, key=lambda m: (-LONG_MODULES[m], m))  # the same order in every worker
    load = [0.0] * workers
    dealt: list[list[pytest.Item]] = [[] for _ in range(workers)]
    for module in long_ones:
        w = load.index(min(load))
        load[w] += LONG_MODULES[module]
        dealt[w] += [i for i in items if _module(i) == module]
    rest = [i for i in items if _module(i) not in LONG_MODULES]
    size = len(items) // workers
    for w in range(workers - 1):  # the first runs hold ``size`` tests each, as xdist deals them
        take = max(0, size - len(dealt[w]))
        while 0 < take < len(rest) and _module(rest[take]) == _module(rest[take - 1]):
            take += 1  # a module stays on one worker (its module-scoped fixtures are made once)
        dealt[w] += rest[:take]
        rest = rest[take:]
    dealt[-1] += rest
    return [i for run in dealt for i in run]


def _module(item: pytest.Item) -> str:
    return Path(str(item.fspath)).stem


def _cap_examples(item: pytest.Item) -> None:
    """Under the fast profile, a hypothesis test's own ``max_examples`` is capped at FAST_EXAMPLES
    (an explicit ``@settings(max_examples=N)`` would otherwise outrank the profile)."""
    test = getattr(item, "obj", None)
    own = getattr(test, "_hypothesis_internal_use_settings", None)
    if getattr(test, "is_hypothesis_test", False) and own is not None and own.max_examples > FAST_EXAMPLES:
        test._hypothesis_internal_use_settings = settings(own, max_examples=FAST_EXAMPLES)


@pytest.fixture(autouse=True)
def own_project_store(tmp_path_factory, monkeypatch):
    """Every test gets an empty project store (ANONLIB_HOME in a temporary folder): a dashboard
    session opens the last project of its store, so tests must not see each other's projects,
    nor the user's own store."""
    monkeypatch.delenv("ANONLIB_STORE", raising=False)
    monkeypatch.setenv("ANONLIB_HOME", str(tmp_path_factory.mktemp("anonlib-home")))


@pytest.fixture(scope="module")
def server(request):
    """A dashboard server of this checkout, one per test module; its sessions open on a small
    sample (``SMALL_SAMPLE``), as the modules using it upload their own file (``test_browser``,
    whose tests look at Adult, has a server of its own). A module that never opens the Release
    page says ``PRELOAD = False`` (its libraries are then not imported in the background)."""
    with dashboard_server(first_sample=SMALL_SAMPLE, preload=getattr(request.module, "PRELOAD", True)) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium, one per test module (not per session: test_browser_projects starts
    its own with ``chromium()``, and Playwright's sync API runs one at a time in a process)."""
    with chromium() as instance:
        yield instance


@pytest.fixture(scope="session")
def postgresql():
    """A real PostgreSQL server (``postgres_server.py``), one per test process; its admin URL."""
    from postgres_server import postgresql_server

    with postgresql_server() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path):
    """The URL of an empty project store: a SQLite file, then a database on a real PostgreSQL server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store' / 'projects.sqlite'}"
    from postgres_server import new_database

    return new_database(request.getfixturevalue("postgresql"))
