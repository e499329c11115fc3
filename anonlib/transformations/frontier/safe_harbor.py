"""HIPAA Safe Harbor as a policy of the same space, and the frontier policies that beat it."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...core.equivalence import MISSING_LABEL
from ...core.errors import ParameterError, join_names
from .dominance import strictly_dominates
from .search import FrontierEntry
from .space import SAFE_HARBOR_SMALL_AREA, SAFE_HARBOR_TOP_AGE, PolicySpace

# --- HIPAA Safe Harbor as a policy -------------------------------------------------


@dataclass(frozen=True)
class SafeHarborPolicy:
    """HIPAA Safe Harbor's demographic rules as a policy of the lattice, with
    notes on how exactly the interval model could express them."""

    bits: dict[str, tuple[int, ...]]
    notes: tuple[str, ...]


def _guess(attributes: Sequence[str], word: str) -> str | None:
    hits = [a for a in attributes if word in str(a).lower()]
    return hits[0] if hits else None


def safe_harbor_policy(
    space: PolicySpace,
    *,
    zip_attribute: str | None = None,
    age_attribute: str | None = None,
    zip3_population: Mapping[str, int] | None = None,
    small_area: int = SAFE_HARBOR_SMALL_AREA,
) -> SafeHarborPolicy:
    """Safe Harbor's demographics: ZIP codes to their first 3 digits (3-digit
    areas with fewer than ``small_area`` people merged into "000"), ages of 90
    and over into one group, every other attribute untouched. A missing ZIP stays missing.

    In the interval model ZIP3 is exact (5-digit ZIPs sorted as strings). The
    "000" group is exact only when the small 3-digit areas are neighbours in ZIP
    order; otherwise each run of neighbouring small areas becomes one interval
    (a slightly finer policy than Safe Harbor), and a note says so. Without
    ``zip3_population`` the "000" rule is not applied. Attributes default to the
    first quasi-identifier whose name contains "zip" / "age".

    >>> df = pd.DataFrame({"age": [40, 90, 95], "zip": ["37010", "37011", "37201"]})
    >>> from anonlib.transformations.frontier import prepare
    >>> policy = safe_harbor_policy(prepare(df, ["age", "zip"]))
    >>> policy.bits
    {'age': (1, 0), 'zip': (0, 1)}
    """
    attributes = space.attributes
    zip_attribute = zip_attribute or _guess(attributes, "zip")
    age_attribute = age_attribute or _guess(attributes, "age")
    notes: list[str] = []
    bits = {a: [1] * (len(d) - 1) for a, d in zip(attributes, space.domains)}
    for name, label in ((zip_attribute, "ZIP"), (age_attribute, "age")):
        if name is not None and name not in attributes:
            raise ParameterError(f"The {label} attribute '{name}' is not among the quasi-identifiers.")
    if age_attribute is None:
        notes.append("No age attribute: the 90-and-over rule is not applied.")
    else:
        domain = space.domains[attributes.index(age_attribute)]
        ages = pd.to_numeric(pd.Series(domain, dtype=object), errors="coerce").to_numpy(dtype=float)
        if np.isnan(ages).all():
            notes.append(
                f"'{age_attribute}' holds text (e.g. '{domain[0]}'), not ages in years: the 90-and-over "
                "rule is not applied."
            )
        else:
            old = ages >= SAFE_HARBOR_TOP_AGE  # text values such as "missing" are never old
            bits[age_attribute] = [0 if old[i] and old[i + 1] else 1 for i in range(len(domain) - 1)]
            notes.append(
                f"Ages {SAFE_HARBOR_TOP_AGE} and over: {int(old.sum())} domain value(s) merged into one group."
            )
    if zip_attribute is None:
        notes.append("No ZIP attribute: the 3-digit ZIP rule is not applied.")
    else:
        domain = [str(v) for v in space.domains[attributes.index(zip_attribute)]]
        # a blank ZIP is no 3-digit area (not "mis" of no people): it stays missing, a group of its own
        zip3 = [z if z == MISSING_LABEL else z[:3] for z in domain]
        small = set()
        if zip3_population is not None:
            small = {z for z in set(zip3) if z != MISSING_LABEL and zip3_population.get(z, 0) < small_area}
        group = ["000" if z in small else z for z in zip3]
        bits[zip_attribute] = [0 if group[i] == group[i + 1] else 1 for i in range(len(domain) - 1)]
        runs = sum(1 for i, g in enumerate(group) if g == "000" and (i == 0 or group[i - 1] != "000"))
        if zip3_population is None:
            notes.append("No 3-digit area populations given: the under-20,000 rule is not applied.")
        elif not small:
            notes.append(f"No 3-digit ZIP area here has fewer than {small_area:,} people: nothing goes to 000.")
        elif runs == 1:
            notes.append(f"{len(small)} small 3-digit area(s) ({join_names(sorted(small))}) merged into 000.")
        else:
            notes.append(
                f"{len(small)} small 3-digit areas ({join_names(sorted(small))}) are not neighbours in ZIP "
                f"order, so an interval policy cannot merge them into one 000 group; each of the {runs} "
                "runs of neighbouring small areas is one interval instead (slightly finer than Safe Harbor)."
            )
    return SafeHarborPolicy(bits={a: tuple(b) for a, b in bits.items()}, notes=tuple(notes))


def dominating(frontier: Sequence[FrontierEntry], risk: float, loss: float) -> list[FrontierEntry]:
    """The frontier policies that strictly dominate the point ``(risk, raw loss)``.

    >>> e = FrontierEntry({"a": (0,)}, 0.1, 0.2, 0.5)
    >>> len(dominating([e], 0.2, 0.2)), len(dominating([e], 0.1, 0.2))
    (1, 0)
    """
    return [e for e in frontier if strictly_dominates((e.risk, e.loss), (risk, loss))]


def lattice_size_text(n_bits: int) -> str:
    """``2^n`` in words for the page.

    >>> lattice_size_text(10), lattice_size_text(700)[:8]
    ('1,024', '10^210.7')
    """
    if n_bits <= 40:
        return f"{1 << n_bits:,}"
    return f"10^{n_bits * math.log10(2):.1f}"
