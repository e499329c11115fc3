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
    """``update`` called with the first report, then at most once per ``every`` seconds, and
    always with the last one (``done >= total`` of ``(done, total, ...)``, or a share of 1), so a
    bar left on the page ends full.

    >>> seen = []
    >>> report = throttled(lambda done, total: seen.append(done), every=60)
    >>> for part in range(1, 1001):
    ...     report(part, 1000)
    >>> seen
    [1, 1000]
    """
    last = [-float("inf")]

    def report(*args: Any, **kwargs: Any) -> None:
        now = time.monotonic()
        if now - last[0] >= every or _last_part(args):
            last[0] = now
            update(*args, **kwargs)

    return report


def _last_part(args: tuple) -> bool:
    """A report of the end: ``(done, total, ...)`` with ``done >= total``, or a share of 1.

    >>> _last_part((5, 5, "x")), _last_part((4, 5)), _last_part(("stage", 1.0)), _last_part((0.5, "t"))
    (True, False, True, False)
    """
    numbers = [a for a in args if isinstance(a, (int, float)) and not isinstance(a, bool)]
    if len(numbers) >= 2:
        return numbers[0] >= numbers[1]
    return len(numbers) == 1 and numbers[0] >= 1.0
