"""Risk by the adversary's power: how many people an attacker singles out when they know m of a
person's records, for m = 1, 2, 3, 5 and all (``linkable.md`` part 2, section 7).

A person's history is the multiset of their records' classes on the quasi-identifiers. An
attacker who knows m of them looks for the people whose histories contain those m records
(k^m-anonymity on multisets, Terrovitis et al. 2008); one who knows all of them, for the people
with exactly that history (El Emam et al. 2012). Per power, ``risk_by_power`` counts the people
*unique* (no other person's history holds one of their m-record sub-multisets; for power all,
no other person has their history) and the people *below k* (one of their sub-multisets is held
by fewer than k people, themselves included). The counting is the kernel's
(``anonlib.core.histories.owners_sharing``); a power whose enumeration would pass the work
limit is reported as not counted, with the sentence saying why.

Example (three people: a and b twice in the same two classes, c with one record of each):
    >>> import pandas as pd
    >>> df = pd.DataFrame({"pid": ["a", "a", "b", "b", "c", "c"], "stage": [1, 2, 1, 2, 1, 3]})
    >>> [(r.label, r.people_unique, r.people_below_k) for r in risk_by_power(df, ["stage"], "pid", k=3)]
    [('1', 1, 3), ('2', 1, 3), ('3', 1, 3), ('5', 1, 3), ('all', 1, 3)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.budget import duration_text
from ..core.equivalence import encode, person_codes
from ..core.errors import ParameterError, ProblemTooLargeError
from ..core.histories import adversary_power, check_history_work, history_work, owner_pairs, owners_sharing
from .profile import require_quasi_identifiers

POWERS: tuple[int | None, ...] = (1, 2, 3, 5, None)  # None: the whole history ("all")


@dataclass(frozen=True)
class PowerRisk:
    """People at risk when an attacker knows ``power`` of a person's records (None: all of them):
    ``people`` in all, ``people_unique`` singled out, ``people_below_k`` in fewer than ``k``
    people's histories. ``refused`` holds the sentence when the power was too costly to count
    (the counts are then None)."""

    power: int | None
    k: int
    people: int
    people_unique: int | None
    people_below_k: int | None
    refused: str | None = None

    @property
    def label(self) -> str:
        """The power as the officer reads it: "1", "2", ..., "all"."""
        return "all" if self.power is None else str(self.power)

    @property
    def unique_share(self) -> float | None:
        """Share of people unique (None when not counted)."""
        if self.people_unique is None:
            return None
        return self.people_unique / self.people if self.people else 0.0

    @property
    def below_share(self) -> float | None:
        """Share of people below k (None when not counted)."""
        if self.people_below_k is None:
            return None
        return self.people_below_k / self.people if self.people else 0.0

    def as_dict(self) -> dict[str, object]:
        """``profile --json``'s ``by_power`` entry.

        >>> PowerRisk(None, 5, 10, 2, 4).as_dict()
        {'power': 'all', 'people_unique': 2, 'people_below_k': 4}
        """
        out: dict[str, object] = {
            "power": "all" if self.power is None else self.power,
            "people_unique": self.people_unique,
            "people_below_k": self.people_below_k,
        }
        if self.refused is not None:
            out["refused"] = self.refused
        return out


@dataclass(frozen=True, eq=False)
class PowerSharing:
    """What ``risk_by_power`` counts before k is known, per power: for each of the ``people``, how
    many people's histories hold one of their ``power``-record sub-multisets (``sharing``; None
    when ``refused``). A page keeps it and answers a change of k without counting again."""

    power: int | None
    people: int
    sharing: np.ndarray | None
    refused: str | None = None

    def risk(self, k: int) -> PowerRisk:
        """The people unique and below ``k`` under this power.

        >>> PowerSharing(2, 3, np.array([1, 2, 2])).risk(2).as_dict()
        {'power': 2, 'people_unique': 1, 'people_below_k': 1}
        """
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ParameterError(f"k is a whole number of people, at least 1; got {k}.")
        if self.sharing is None:
            return PowerRisk(self.power, int(k), self.people, None, None, refused=self.refused)
        return PowerRisk(self.power, int(k), self.people, int((self.sharing == 1).sum()), int((self.sharing < k).sum()))


def risk_by_power(
    frame: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    person: str,
    *,
    k: int = 5,
    count: str | None = None,
    powers: Sequence[int | None] = POWERS,
    max_seconds: float | None = None,
) -> tuple[PowerRisk, ...]:
    """Per power of ``powers`` (whole numbers, None for all), the people unique and below ``k``
    on ``quasi_identifiers``, people told apart by ``person`` (see the module text). With
    ``max_seconds`` (a page that must answer at once), a power estimated to take longer is left
    uncounted, saying so."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ParameterError(f"k is a whole number of people, at least 1; got {k}.")
    if not isinstance(frame, pd.DataFrame):  # a table on an engine: counted there (anonlib.engine.owners)
        require_quasi_identifiers(quasi_identifiers)
        return _on_engine(frame, quasi_identifiers, person, k=k, powers=powers, max_seconds=max_seconds)
    shared = sharing_by_power(frame, quasi_identifiers, person, count=count, powers=powers, max_seconds=max_seconds)
    return tuple(s.risk(k) for s in shared)


def sharing_by_power(
    frame: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    person: str,
    *,
    count: str | None = None,
    powers: Sequence[int | None] = POWERS,
    max_seconds: float | None = None,
) -> tuple[PowerSharing, ...]:
    """``risk_by_power``'s counting, before k (``PowerSharing.risk`` applies it): per power, how
    many people share each person's sub-multisets; a power past the work limit (or, with
    ``max_seconds``, estimated to take longer) refused in a sentence."""
    require_quasi_identifiers(quasi_identifiers)
    if person not in frame.columns:
        raise ParameterError(f"'{person}' is not a column of the data.")
    table = encode(frame, list(quasi_identifiers), count=count)
    classes = table.classes()
    codes, n = person_codes(frame[person], person)
    pairs = owner_pairs(classes.ids, classes.n_classes, codes, n, table.weights)
    present = pairs.sizes > 0
    people = int(present.sum())
    out = []
    for value in powers:
        power = adversary_power(value)
        try:
            if power is not None and power > 1:
                check_history_work(pairs.sizes[present], pairs.lengths[present], power=power)
                if max_seconds is not None:
                    work = history_work(pairs.sizes[present], pairs.lengths[present], power=power)
                    if work.seconds > max_seconds:
                        raise ProblemTooLargeError(
                            f"Counting any {power} of a person's records takes about {duration_text(work.seconds)} "
                            "here; it is counted on the Dataset page."
                        )
        except ProblemTooLargeError as error:
            out.append(PowerSharing(power, people, None, refused=str(error)))
            continue
        sharing = owners_sharing(classes.ids, classes.n_classes, codes, n, table.weights, power=power)[present]
        out.append(PowerSharing(power, people, sharing))
    return tuple(out)


def _on_engine(
    table,
    quasi_identifiers: Sequence[str],
    person: str,
    *,
    k: int,
    powers: Sequence[int | None],
    max_seconds: float | None = None,
):
    """``risk_by_power`` of an ``anonlib.engine.EngineTable``: each power's histogram of owners
    sharing, counted by the engine, refused by its own estimate (``history_work(..., engine=True)``)
    past ``max_seconds`` (the work limit when None)."""
    from ..core.budget import MAX_SECONDS
    from ..engine.owners import sharing

    limit = MAX_SECONDS if max_seconds is None else max_seconds

    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ParameterError(f"k is a whole number of people, at least 1; got {k}.")
    out, people = [], None
    for value in powers:
        power = adversary_power(value)
        try:
            shared = sharing(table, quasi_identifiers, person, power=power, max_seconds=limit)
        except ProblemTooLargeError as error:
            out.append((power, str(error)))
            continue
        people = int(shared[:, 1].sum())
        unique, below = int(shared[shared[:, 0] == 1, 1].sum()), int(shared[shared[:, 0] < k, 1].sum())
        out.append((power, (unique, below)))
    if people is None:  # every power refused: the people counted once
        people = int(sharing(table, quasi_identifiers, person)[:, 1].sum())
    return tuple(
        PowerRisk(power, int(k), people, None, None, refused=got)
        if isinstance(got, str)
        else PowerRisk(power, int(k), people, *got)
        for power, got in out
    )
