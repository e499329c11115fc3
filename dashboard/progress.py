"""Progress shown in the browser without flooding it.

A computation reports progress for each part it finishes (``anonlib.core.budget.Progress``): 258
combinations of quasi-identifiers on Adult, thousands of policies on the frontier. Moving a
Streamlit progress bar sends one message to the browser, which redraws the bar each time: a
quarter-second computation reporting 258 parts kept the Individual privacy page busy for seconds
at 10^5 records. ``throttled`` passes on at most one report per ``every`` seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

EVERY_SECONDS = 0.25  # a bar moving four times a second reads as continuous progress


def throttled(update: Callable[..., Any], every: float = EVERY_SECONDS) -> Callable[..., None]:
    """``update`` called with the first report, then at most once per ``every`` seconds.

    >>> seen = []
    >>> report = throttled(seen.append, every=60)
    >>> for part in range(1000):
    ...     report(part)
    >>> seen
    [0]
    """
    last = [-float("inf")]

    def report(*args: Any, **kwargs: Any) -> None:
        now = time.monotonic()
        if now - last[0] >= every:
            last[0] = now
            update(*args, **kwargs)

    return report
