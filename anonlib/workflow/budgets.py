"""How much work a page or the report may start: one place for the time limits and sizes the
workflow runs under, so the pages and the report agree.

The library's own limits (work refused as taking hours or exhausting memory) are in
``anonlib.core.budget``; these are the shorter limits of an interactive session, past which
a result is narrowed and says so (the optimal search's best so far, marked not proven; fewer
variables known at once; a subsampled classifier).

Example:
    >>> bands_budget(records=30_162, known=9)
    20
    >>> bands_budget(records=303, known=4)
    400
"""

from __future__ import annotations

import numpy as np

from ..measures.peers import walk_size

PAGE_SEARCH_SECONDS = 20.0  # the optimal search on a page: past it, the best found, said to be unproven
REPORT_SEARCH_SECONDS = 30.0  # the same in the risk report (a batch of sections, not a click)
PRIVACY_SECONDS = 120.0  # individual privacy longer than this is narrowed (fewer variables known at once)
PAGE_PRIVACY_SECONDS = 30.0  # the same on the Individual privacy page (a click, not a batch; a box computes all)
RELEASE_VIEW_SECONDS = 20.0  # the release view's classifier in the report (rows subsampled past it, and said)
STATUS_SECONDS = 1.0  # work estimated above this gets a status box with progress on a page
BAND_CELLS = 4e7  # subset evaluations of one band search on a page (a few seconds)


BAND_WALK_SECONDS = (
    2e-4  # one partition's walk of one combination (Adult, 10^5 records, 9 quasi-identifiers: 5,632 in 1.0 s)
)


def bands_seconds(partitions: int, known: int) -> float:
    """Seconds the band search of ``partitions`` partitions is expected to take: each walks the
    2^(known - 1) combinations of the other known variables, at ``BAND_WALK_SECONDS`` each (the
    walk's bookkeeping outweighs the records counted).

    >>> round(bands_seconds(22, 9), 2)
    1.13
    """
    return partitions * 2 ** max(known - 1, 0) * BAND_WALK_SECONDS


def bands_budget(records: int, known: int) -> int:
    """How many band partitions of a numeric quasi-identifier the Individual privacy page
    evaluates (Kroes et al.'s generalization potential): each costs the records times the
    2^(known - 1) combinations of the other known variables, so about ``BAND_CELLS`` in all,
    at least 20 and at most 400 partitions."""
    return int(np.clip(BAND_CELLS / (max(records, 1) * 2 ** max(known - 1, 0)), 20, 400))


def known_within(needed: float, variables: int, max_known: int | None, seconds: float) -> int | None:
    """How many of ``variables`` quasi-identifiers an adversary may know at once for the walk over
    their combinations (estimated at ``needed`` seconds with at most ``max_known`` known, None: all)
    to fit in ``seconds``: ``max_known`` itself when it fits, else the most that fits (the cost is
    per combination walked, so narrowing scales it exactly), 0 when not even one at a time fits.

    >>> known_within(60.0, 12, None, 120.0) is None, known_within(235.0, 12, None, 120.0)
    (True, 5)
    """
    if needed <= seconds:
        return max_known
    limit = variables if max_known is None else min(int(max_known), variables)
    every = walk_size(variables, max_known)
    return next((k for k in range(limit - 1, 0, -1) if needed * walk_size(variables, k) / every <= seconds), 0)
