"""Which adversary power to defend: the least damaging release under each, and the suggestion.

Under power all (the attacker knows a person's whole history) a trial's visits make every
person unique whatever the generalization, and the release keeps nothing (loss 1); under power 1
it keeps almost everything but defends against little. ``least_damaging_by_power`` finds, per
power m = 1, 2, 3, 5 and all, the optimal search's release of the quasi-identifiers under the
target (k, suppression limit) with the person's records linked; ``suggested_power`` applies the
one rule the package and the pages state (``SUGGESTION_RULE``): the strongest power whose least
damaging release meets the target with an information loss of at most ``LOSS_CEILING``.

Example (four people with two visits each: stage 1, 2, 3 alone keeps every one at k = 2 on any
one visit; two visits together need the stages banded):
    >>> import pandas as pd
    >>> from anonlib.core.default_hierarchy import default_hierarchy
    >>> frame = pd.DataFrame({"pid": list("aabbccdd"), "stage": [1, 2, 1, 2, 1, 3, 2, 3]})
    >>> h = {"stage": default_hierarchy(frame["stage"], "stage")[1]}
    >>> found = least_damaging_by_power(frame, ["stage"], h, "pid", k=2, max_suppressed=0.0)
    >>> [(r.label, r.loss) for r in found]
    [('1', 0.0), ('2', 0.375), ('3', 0.375), ('5', 0.375), ('all', 0.375)]
    >>> suggested_power(found).label
    'all'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import pandas as pd

from ..core.errors import AnonlibError
from ..measures.power import POWERS
from ..measures.target import ReleaseTarget
from ..transformations.generalization import release_search

LOSS_CEILING = 0.6  # the most a suggested release may lose (Iyengar's loss metric, 0 to 1)
FIRST_DELIVERY_POWER = 2  # suggested when every person has one record (see SUGGESTION_RULE)
SUGGESTION_RULE = (
    "The suggested adversary power is the strongest (all of a person's records, then 5, 3, 2, 1) whose least "
    f"damaging release meets the target with an information loss of at most {LOSS_CEILING:g}. Where every person "
    f"has one record (a first delivery: every power gives the same release), it is {FIRST_DELIVERY_POWER}, the "
    "weakest power that still links a person's records across deliveries: later deliveries add records to the same "
    "people, and a stronger power refuses most of them."
)


@dataclass(frozen=True)
class PowerRelease:
    """The least damaging release under ``power`` (None: all): its information ``loss`` (0 to 1),
    the hierarchy ``levels``, whether it ``met`` the target and the people it suppressed; or, when
    no release was found, ``refused`` (one sentence) and the rest empty."""

    power: int | None
    loss: float | None
    levels: Mapping[str, int] | None
    met: bool
    suppressed_people: int | None
    refused: str | None = None

    @property
    def label(self) -> str:
        return "all" if self.power is None else str(self.power)

    @property
    def keeps_something(self) -> bool:
        """Whether the release keeps something of the quasi-identifiers (loss below 1)."""
        return self.met and self.loss is not None and self.loss < 1.0

    def as_dict(self) -> dict[str, object]:
        """For JSON: power, loss, levels, met, suppressed people (and why it was refused)."""
        out: dict[str, object] = {
            "power": "all" if self.power is None else self.power,
            "loss": self.loss,
            "levels": dict(self.levels) if self.levels is not None else None,
            "met": self.met,
            "suppressed_people": self.suppressed_people,
        }
        if self.refused is not None:
            out["refused"] = self.refused
        return out


def least_damaging_by_power(
    frame: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    hierarchies: Mapping[str, pd.DataFrame],
    person: str,
    *,
    k: int,
    max_suppressed: float,
    count: str | None = None,
    powers: Sequence[int | None] = POWERS,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[PowerRelease, ...]:
    """Per power of ``powers``, the optimal search's release with ``person``'s records linked (see
    the module text); a power the search cannot serve (too costly, no release) says why in one
    sentence. ``progress(done, total)`` after each power."""
    out = []
    for i, power in enumerate(powers):
        target = ReleaseTarget(k=k, max_suppressed=max_suppressed, person=person, linked=(person,), power=power)
        try:
            result = release_search(
                frame, list(quasi_identifiers), dict(hierarchies), "optimal", target=target, count=count
            )
        except AnonlibError as error:
            out.append(PowerRelease(target.power, None, None, False, None, refused=str(error)))
        else:
            out.append(
                PowerRelease(
                    target.power,
                    None if result.utility is None else float(result.utility),
                    dict(result.levels),
                    True,
                    int(result.suppressed_persons or 0),
                )
            )
        if progress is not None:
            progress(i + 1, len(powers))
    return tuple(out)


def suggested_power(
    releases: Sequence[PowerRelease], ceiling: float = LOSS_CEILING, *, one_record_each: bool = False
) -> PowerRelease | None:
    """The release of the strongest power meeting the target within ``ceiling`` of loss, or, when
    every person has one record (``one_record_each``: see ``one_record_per_person``), that of
    power ``FIRST_DELIVERY_POWER`` if it does (``SUGGESTION_RULE``); None when no power's does.

    On one record per person every power's release is the same, so the strongest would always be
    "all"; but a series of deliveries adds records to the same people, and under power all a yearly
    panel's later deliveries are refused (nlswork's 15 years: 11.2% of person-years released at
    power all, 52.6% at 3, 92.4% at 2; docs/linkable.md).

    >>> rs = [PowerRelease(2, 0.5, {}, True, 0), PowerRelease(3, 0.58, {}, True, 0), PowerRelease(None, 1.0, {}, True, 0)]
    >>> suggested_power(rs).label
    '3'
    >>> same = [PowerRelease(p, 0.2, {}, True, 0) for p in (1, 2, 3, 5, None)]
    >>> suggested_power(same).label, suggested_power(same, one_record_each=True).label
    ('all', '2')
    """

    def strength(r: PowerRelease) -> float:
        return float("inf") if r.power is None else float(r.power)

    fitting = [r for r in releases if r.met and r.loss is not None and r.loss <= ceiling]
    if one_record_each:
        first = [r for r in fitting if r.power == FIRST_DELIVERY_POWER]
        if first:
            return first[0]
    return max(fitting, key=strength) if fitting else None


def one_record_per_person(frame: pd.DataFrame, person: str, count: str | None = None) -> bool:
    """Whether every person of ``frame`` has one record (``count``: the records each row stands for).

    >>> one_record_per_person(pd.DataFrame({"pid": ["a", "b"]}), "pid")
    True
    >>> one_record_per_person(pd.DataFrame({"pid": ["a", "a"]}), "pid")
    False
    >>> one_record_per_person(pd.DataFrame({"pid": ["a"], "n": [2]}), "pid", "n")
    False
    """
    if count is None:
        return bool(frame[person].is_unique)
    return bool((frame.groupby(person, dropna=False, sort=False)[count].sum() <= 1).all())


def weaker_power_sentence(
    frame: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    hierarchies: Mapping[str, pd.DataFrame],
    target: ReleaseTarget,
    *,
    method: str = "optimal",
    count: str | None = None,
    measure: str = "loss",
) -> str:
    """When no release meets ``target`` (its records linked, earlier deliveries included): the
    strongest weaker adversary power at which one would within the suggestion's loss ceiling
    (``LOSS_CEILING``; else the strongest whose release keeps something), with its loss and the
    option to ask for it, or that none would. The sentence a refused delivery ends with, so the officer sees the
    figure that would meet it.

    >>> import pandas as pd
    >>> from anonlib.core.default_hierarchy import default_hierarchy
    >>> frame = pd.DataFrame({"pid": list("aabbcccdd"), "stage": [1, 2, 1, 2, 1, 2, 2, 2, 2]})
    >>> h = {"stage": default_hierarchy(frame["stage"], "stage")[1]}
    >>> everything = ReleaseTarget(k=2, person="pid", linked=("pid",))  # c's three visits set c apart
    >>> print(weaker_power_sentence(frame, ["stage"], h, everything))
    At adversary power 2 (an attacker who knows any 2 of a person's records) it would release with an information loss of 0.00: add --power 2.
    """
    current = target.power
    weaker = [p for p in POWERS if p is not None and (current is None or p < current)]
    found: list[tuple[int, float]] = []  # (power, loss) of the releases that keep something, strongest first
    for power in sorted(weaker, reverse=True):
        try:
            result = release_search(
                frame,
                list(quasi_identifiers),
                dict(hierarchies),
                method,
                target=replace(target, power=power),
                count=count,
                measure=measure,
            )
        except AnonlibError:
            continue
        loss = 0.0 if result.utility is None else float(result.utility)
        if loss >= 1.0:  # it would keep nothing of the quasi-identifiers: not a release to point to
            continue
        found.append((power, loss))
        if loss <= LOSS_CEILING:  # the suggestion's own rule: the strongest within the ceiling
            break
    if not found:
        return "No weaker adversary power releases it either."
    power, loss = next(((p, x) for p, x in found if x <= LOSS_CEILING), found[0])
    return (
        f"At adversary power {power} (an attacker who knows any {power} of a person's records) it would release "
        f"with an information loss of {loss:.2f}: add --power {power}."
    )
