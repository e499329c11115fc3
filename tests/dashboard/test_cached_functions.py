"""A function cached by Streamlit (``st.cache_data`` / ``st.cache_resource``) never calls a
Streamlit element, directly or through a progress callback it is given.

Streamlit records the elements a cached function calls and replays them on a cache hit; an
element called on a block made outside the function cannot be replayed and the page fails with
``CacheReplayClosureError`` (the Individual privacy page did, after k was changed and back: its
cached computation moved a progress bar made outside it). Work that shows progress is kept in a
``dashboard.memo.Memo`` instead. The real-browser check is ``test_browser_tuning.py``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from dashboard.memo import Memo, memo

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted([*ROOT.glob("pages/*.py"), *ROOT.glob("dashboard/*.py"), ROOT / "app.py"])


def _cached_functions(path: Path) -> list[ast.FunctionDef]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and any(
            "cache_data" in ast.unparse(d) or "cache_resource" in ast.unparse(d) for d in node.decorator_list
        ):
            found.append(node)
    return found


def _problems(function: ast.FunctionDef) -> list[str]:
    problems = []
    arguments = function.args.posonlyargs + function.args.args + function.args.kwonlyargs
    problems += [f"takes a progress callback ({a.arg})" for a in arguments if "progress" in a.arg.lower()]
    for statement in function.body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Call):
                called = ast.unparse(node.func)
                if called.startswith("st.") or ".progress" in called or called.endswith((".update", ".empty")):
                    problems.append(f"calls {called}")
    return problems


def test_the_sources_hold_cached_functions() -> None:
    """The scan below finds what it looks for (a renamed decorator would make it pass vacuously)."""
    names = {f.name for path in SOURCES for f in _cached_functions(path)}
    assert {"_leave_one_out", "_view", "_risk"} <= names


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_no_cached_function_calls_a_streamlit_element(path: Path) -> None:
    problems = [f"{path.name}: {f.name} {p}" for f in _cached_functions(path) for p in _problems(f)]
    assert problems == []


def test_the_scan_catches_a_progress_bar_moved_inside_a_cached_function() -> None:
    source = (
        "@st.cache_data(show_spinner=False)\n"
        "def _privacy(key, _dataset, _progress=None):\n"
        "    bar.progress(0.5)\n"
        "    return compute(_dataset, progress=_progress)\n"
    )
    (function,) = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef)]
    assert _problems(function) == ["takes a progress callback (_progress)", "calls bar.progress"]


def test_a_memo_keeps_the_most_recent_results_and_computes_a_miss_once() -> None:
    calls = []
    kept = Memo(max_entries=2)

    def make(value):
        calls.append(value)
        return value

    assert kept.compute("a", lambda: make(1)) == 1
    assert kept.compute("a", lambda: make(99)) == 1  # a hit: not computed again
    kept.compute("b", lambda: make(2))
    assert kept.get("a") == 1  # used last: "b" is now the oldest
    kept.compute("c", lambda: make(3))
    assert (kept.get("a"), kept.get("b"), kept.get("c")) == (1, None, 3)
    assert calls == [1, 2, 3]


def test_a_named_memo_is_shared_and_emptied_with_streamlits_resource_cache() -> None:
    import streamlit as st

    memo("test-shared", 4).put("key", 7)
    assert memo("test-shared").get("key") == 7
    st.cache_resource.clear()
    assert memo("test-shared").get("key") is None


def _bar_page() -> None:
    """A page computing ``with_bar`` for the session's key; ``fail`` makes the work raise."""
    import streamlit as st

    from dashboard.memo import with_bar

    def work(report):
        st.session_state.setdefault("made", []).append(st.session_state["key"])
        for done in range(1, 4):
            report(done / 3, f"part {done} of 3")
        if st.session_state.get("fail"):
            raise ValueError("the work failed")
        return st.session_state["key"] * 10

    try:
        st.session_state["result"] = with_bar("test-bar", st.session_state["key"], work, text="starting")
    except ValueError as err:
        st.session_state["result"] = str(err)


def test_with_bar_computes_once_per_key_and_leaves_no_bar_even_when_the_work_fails() -> None:
    from streamlit.testing.v1 import AppTest

    memo("test-bar").clear()
    at = AppTest.from_function(_bar_page)
    for key in (1, 2, 1, 2):
        at.session_state["key"] = key
        at.run()
        assert not at.exception and at.session_state["result"] == key * 10
        assert not at.get("progress")  # the bar is emptied once the work is done
    assert at.session_state["made"] == [1, 2]  # keys already seen are read from the memo
    at.session_state["key"], at.session_state["fail"] = 3, True
    at.run()
    assert at.session_state["result"] == "the work failed" and not at.get("progress")
    assert memo("test-bar").get(3) is None and at.session_state["made"] == [1, 2, 3]
