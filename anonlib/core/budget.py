"""Work budgets: estimate what a computation costs before starting it, refuse
what would run for hours or exhaust memory, and report honest progress.

Every combinatorial size (lattice sizes, subset counts, combinations, exact
index sizes) is counted here in Python integers, so it can never wrap around
the way a fixed-width ``numpy`` product does. A capability describes its work
as a ``WorkEstimate`` (what, how many units, seconds and bytes it will take
on this machine class) and calls ``check_work`` before starting; a refusal is
a ``ProblemTooLargeError`` whose sentence says what to narrow.

Long work reports progress through a ``Progress`` callback ``(done, total,
what)`` so a page can show "1,024 of 4,096 combinations" rather than a
spinner, and never says "done" before the last part is finished.

Example:
    >>> lattice_size([3, 4, 2])
    24
    >>> est = WorkEstimate("checking 24 generalizations", operations=24, seconds=0.01, peak_bytes=1_000)
    >>> check_work(est, narrow="choose fewer quasi-identifiers").operations
    24
    >>> big = WorkEstimate("checking 2^64 generalizations", operations=2**64, seconds=1e15, peak_bytes=0)
    >>> check_work(big, narrow="choose fewer quasi-identifiers")
    Traceback (most recent call last):
    ...
    anonlib.core.errors.ProblemTooLargeError: Checking 2^64 generalizations would take about 32 million years on this computer (the limit is 10 minutes); choose fewer quasi-identifiers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .errors import ProblemTooLargeError

#: ``progress(done, total, what)``: called as parts of a long computation finish.
Progress = Callable[[int, int, str], None]

MAX_SECONDS = 600.0  # longest work started without being narrowed (library and CLI)
# longest estimate of a search that counts every node of its lattice (the paper's exhaustive
# method): past it, IAB finds the same table counting a fraction of the nodes, and the optimal
# search proves the least-loss one (20 binary quasi-identifiers: 2^20 nodes, about 2 minutes)
EXHAUSTIVE_SECONDS = 30.0
# longest estimate of a search whose every node compares sub-multisets of people's histories (an
# adversary's power of 2 or more: C(records, power) per person and node), unless its time limit
# says otherwise (``--time-limit``, up to MAX_SECONDS): 10^5 people of 10 records at power 3 are
# about 6 seconds a node, at least 11 nodes on three quasi-identifiers
HISTORY_SEARCH_SECONDS = 60.0
INTERACTIVE_SECONDS = 3.0  # above this a page shows real progress and offers to narrow
MAX_BYTES = 8 * 1024**3  # peak memory a computation may plan to use (a third of this machine class)


@dataclass(frozen=True)
class WorkEstimate:
    """What a computation will cost: ``operations`` is an exact Python integer of
    its dominant unit of work (tables, subsets, cells), ``seconds`` and
    ``peak_bytes`` the estimates derived from it."""

    what: str
    operations: int
    seconds: float
    peak_bytes: int

    @property
    def interactive(self) -> bool:
        """Short enough to run without a progress display."""
        return self.seconds <= INTERACTIVE_SECONDS


def check_work(
    estimate: WorkEstimate,
    *,
    narrow: str,
    max_seconds: float = MAX_SECONDS,
    max_bytes: int = MAX_BYTES,
) -> WorkEstimate:
    """Return ``estimate`` when it fits the limits, else raise
    ``ProblemTooLargeError`` with one sentence: what, how long or how much
    memory, the limit, and ``narrow`` (how to make the request smaller)."""
    what = estimate.what[:1].upper() + estimate.what[1:]
    if estimate.seconds > max_seconds:
        raise ProblemTooLargeError(
            f"{what} would take about {duration_text(estimate.seconds)} on this computer "
            f"(the limit is {duration_text(max_seconds)}); {narrow}."
        )
    if estimate.peak_bytes > max_bytes:
        raise ProblemTooLargeError(
            f"{what} would need about {bytes_text(estimate.peak_bytes)} of memory "
            f"(the limit is {bytes_text(max_bytes)}); {narrow}."
        )
    return estimate


def lattice_size(levels: Iterable[int]) -> int:
    """Number of nodes of a generalization lattice with ``levels[i]`` levels per
    attribute (the product, as an exact Python integer).

    >>> lattice_size([2] * 64) == 2**64
    True
    """
    return math.prod(int(n) for n in levels)


def subset_count(n: int, sizes: Iterable[int] | None = None) -> int:
    """Number of subsets of ``n`` items with the given sizes (all 2^n when None).

    >>> subset_count(36, [12])
    1251677700
    """
    if sizes is None:
        return 1 << int(n)
    return sum(math.comb(int(n), int(s)) for s in sizes)


def duration_text(seconds: float) -> str:
    """A duration in words a person reads at a glance.

    >>> duration_text(0.4), duration_text(90), duration_text(7200), duration_text(3e9)
    ('under a second', '2 minutes', '2 hours', '95 years')
    """
    if not math.isfinite(seconds):
        return "forever"
    for unit, size in (("year", 365.25 * 86400), ("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            return _count_text(seconds / size, unit)
    if seconds < 1:
        return "under a second"
    return _count_text(seconds, "second")


def about_text(seconds: float) -> str:
    """An estimated duration in words: "about" before it, unless it is under a second.

    >>> about_text(0.4), about_text(240)
    ('under a second', 'about 4 minutes')
    """
    text = duration_text(seconds)
    return text if text.startswith("under") else f"about {text}"


def bytes_text(n: int) -> str:
    """A memory size in words.

    >>> bytes_text(3 * 1024**3), bytes_text(5 * 1024**2)
    ('3.0 GB', '5 MB')
    """
    if n >= 1024**3:
        return f"{n / 1024**3:,.1f} GB"
    return f"{max(n, 0) / 1024**2:,.0f} MB"


def _count_text(value: float, unit: str) -> str:
    if value >= 1e6:
        return f"{value / 1e6:,.0f} million {unit}s"
    rounded = round(value)
    return f"{rounded:,} {unit}" + ("" if rounded == 1 else "s")


def report(progress: Progress | None, done: int, total: int, what: str) -> None:
    """Call ``progress`` if there is one (so library code needs no ``if``)."""
    if progress is not None:
        progress(done, total, what)
