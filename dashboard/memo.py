"""Results computed once per input and kept across reruns and sessions, for work that shows progress.

``st.cache_data`` records every element a cached function calls and replays it on a hit: a progress
bar made outside the function cannot be replayed (Streamlit's ``CacheReplayClosureError``, the
"Something unexpected went wrong" a user saw after changing k and back), and one made inside is
replayed stale. So a cached function never calls a Streamlit element; work that reports progress
runs outside any cached function instead, through a ``Memo``: look the input up, and on a miss
compute it with the page's progress callback and keep it.

Work a slider should not wait for (estimated over ``INSTANT_SECONDS``, e.g. the Release view's
classifiers at 10^5 records) goes through ``on_request``: kept results are shown at once, the rest
waits behind a button that says how long it takes, so every control answers within seconds.

The memos live in ``st.cache_resource`` (one per name, shared by the sessions of the server), so
``st.cache_resource.clear()`` empties them as it empties Streamlit's own caches.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

import streamlit as st

from anonlib.core.budget import duration_text

from .progress import throttled

T = TypeVar("T")

INSTANT_SECONDS = 0.5  # work estimated above this is computed on a button press, not on every change


class Memo:
    """A bounded cache: the most recently used ``max_entries`` results by key.

    >>> memo = Memo(max_entries=2)
    >>> memo.get("a") is None
    True
    >>> memo.compute("a", lambda: 1), memo.compute("a", lambda: 2)
    (1, 1)
    >>> memo.compute("b", lambda: 3), memo.compute("c", lambda: 4), memo.get("a")
    (3, 4, None)
    """

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self._values: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any | None:
        """The result kept for ``key``, or None (a result is never None)."""
        with self._lock:
            if key not in self._values:
                return None
            self._values.move_to_end(key)
            return self._values[key]

    def put(self, key: Hashable, value: T) -> T:
        """Keep ``value`` for ``key`` (dropping the least recently used beyond ``max_entries``); return it."""
        with self._lock:
            self._values[key] = value
            self._values.move_to_end(key)
            while len(self._values) > self.max_entries:
                self._values.popitem(last=False)
        return value

    def compute(self, key: Hashable, make: Callable[[], T]) -> T:
        """The result kept for ``key``, made by ``make()`` (outside the lock) when missing."""
        found = self.get(key)
        return found if found is not None else self.put(key, make())

    def clear(self) -> None:
        with self._lock:
            self._values.clear()


@st.cache_resource(show_spinner=False)
def _memos() -> dict[str, Memo]:
    return {}


def memo(name: str, max_entries: int = 16) -> Memo:
    """The server's memo called ``name`` (created on first use with ``max_entries``).

    >>> memo("doctest-memo", 4) is memo("doctest-memo")
    True
    """
    memos = _memos()
    return memos.setdefault(name, Memo(max_entries))


def with_bar(
    name: str,
    key: Hashable,
    make: Callable[[Callable[[float, str], None]], T],
    *,
    text: str = "starting",
    max_entries: int = 16,
) -> T:
    """The result kept in memo ``name`` for ``key``; else ``make(report)`` computed now under a
    progress bar that ``report(share, text)`` moves (throttled), and kept. The bar is gone
    afterwards, also when ``make`` fails. Usage (pages/screening.py)::

        with_bar("screening.table11", (dates, seed), lambda report: table11_synthetic(dates, progress=report))
    """
    found = memo(name, max_entries).get(key)
    if found is not None:
        return found
    bar = st.progress(0.0, text=text)
    try:
        report = throttled(lambda share, words: bar.progress(min(max(float(share), 0.0), 1.0), text=words))
        return memo(name, max_entries).put(key, make(report))
    finally:
        bar.empty()


def on_request(
    name: str,
    key: Hashable,
    make: Callable[[], T],
    *,
    seconds: float,
    what: str,
    button_key: str,
    max_entries: int = 16,
    instant: float | None = None,
) -> T | None:
    """The result kept in memo ``name`` for ``key``; else computed now when its estimate
    ``seconds`` is within ``instant`` (``INSTANT_SECONDS`` unless the page allows more); else a
    button "Compute {what} (about N s)" and None until it is pressed (then computed under a
    spinner and kept). ``tests/dashboard/test_page_frontier.py`` shows a page using it.

    So a page answers a change of any control at once, and work that takes longer is done
    once per input, when asked for.
    """
    kept = memo(name, max_entries).get(key)
    if kept is not None:
        return kept
    instant = INSTANT_SECONDS if instant is None else instant  # read now: a test may change it
    pressed = f"{button_key}:pressed"  # set by the button's callback, kept until the work is done
    if seconds > instant and not st.session_state.get(pressed):
        st.button(
            f"Compute {what} (about {_about(seconds)})",
            key=button_key,
            on_click=st.session_state.__setitem__,
            args=(pressed, True),
        )
        return None
    st.session_state.pop(pressed, None)
    with st.spinner(f"Computing {what}..."):
        return memo(name, max_entries).put(key, make())


def _about(seconds: float) -> str:
    """How long, in the button's words.

    >>> _about(0.7), _about(12)
    ('1 second', '12 seconds')
    """
    return "1 second" if seconds < 1.5 else duration_text(seconds)
