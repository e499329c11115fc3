"""A recipe meets a later delivery's new values (``linkable.md`` part 2, 7).

A recipe's generalization steps carry the hierarchies of the file it was made from. Before a
later delivery is replayed, ``cover_unseen`` walks the recipe's steps over the delivery and
gives each hierarchy a row for every value it does not list: numbers, codes and dates by the
hierarchy's own rule (``anonlib.core.hierarchy_rules``: a new age falls in its band), new
categories to the top level when the officer chose ``--unseen top``; otherwise a new
category is refused in one sentence naming the column and the value. What was placed is
counted (``UnseenValues``) and stated; the release is then judged as any other.

Example:
    >>> import pandas as pd
    >>> from anonlib.workflow.steps import GeneralizationStep
    >>> h = pd.DataFrame([["20", "[20-24]", "*"], ["23", "[20-24]", "*"]])
    >>> step = GeneralizationStep({"age": 1}, {"age": h})
    >>> steps, seen = cover_steps([step], pd.DataFrame({"age": [20, 27, 27]}))
    >>> steps[0].apply(pd.DataFrame({"age": [20, 27]}))["age"].tolist(), seen[0].records, seen[0].placed
    (['[20-24]', '[25-29]'], 2, 'band')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ..core.dataset import Dataset
from ..core.errors import HierarchyError, ParameterError, join_names
from ..core.hierarchy import distinct_values, uncovered_values, value_key
from ..core.hierarchy_rules import cover_by_rule, cover_top
from ..core.masking import printable
from .recipe import Recipe, RecipeStep
from .steps import BandsStep, GeneralizationStep, Step

UNSEEN_CHOICES = ("refuse", "top")


@dataclass(frozen=True)
class UnseenValues:
    """The values of ``column`` a recipe's hierarchy did not list: the distinct ``values`` (as
    text), the ``records`` holding them, and where they went: ``band`` (the hierarchy's rule:
    bands, masking, dates) or ``top`` (``--unseen top``)."""

    column: str
    values: tuple[str, ...]
    records: int
    placed: str

    def __post_init__(self) -> None:  # in order (numbers by value), whatever order the file had them in
        object.__setattr__(self, "values", tuple(sorted(self.values, key=_order)))

    def to_json(self) -> dict[str, object]:
        """``--json``'s ``unseen`` entry (at most 20 of the values listed)."""
        return {
            "column": self.column,
            "values": list(self.values[:20]),
            "distinct_values": len(self.values),
            "records": self.records,
            "placed": self.placed,
        }

    def sentence(self) -> str:
        """One line for the text output and the notes."""
        where = (
            "placed in its hierarchy's bands by their rule"
            if self.placed == "band"
            else "generalized to its top level (--unseen top)"
        )
        n = len(self.values)
        return (
            f"{self.records:,} record{' holds' if self.records == 1 else 's hold'} {n} value{'s' if n != 1 else ''} of "
            f"{printable(self.column)} the recipe had not seen ({join_names([printable(v) for v in self.values], 3)}): "
            f"{where}."
        )


def _order(text: str) -> tuple[int, float, str]:
    try:
        return (0, float(text), text)
    except ValueError:
        return (1, 0.0, text)


def check_unseen(choice: str | None) -> str:
    """``--unseen``'s value, checked (default ``refuse``)."""
    choice = (choice or "refuse").strip().lower()
    if choice not in UNSEEN_CHOICES:
        raise ParameterError(f"--unseen is 'refuse' or 'top', not '{printable(choice)}'.")
    return choice


def cover_steps(
    steps: Sequence[Step], frame: pd.DataFrame, *, unseen: str = "refuse", count: str | None = None
) -> tuple[tuple[Step, ...], tuple[UnseenValues, ...]]:
    """``steps`` with each generalization's hierarchies covering the values ``frame`` brings to
    it (the steps before it applied first, as a replay applies them), and what was placed.
    ``count`` names ``frame``'s column of records per row. A new category without ``unseen
    == "top"`` is a ``HierarchyError`` naming the column, the value and ``--unseen top``."""
    unseen = check_unseen(unseen)
    last = max((i for i, s in enumerate(steps) if isinstance(s, (GeneralizationStep, BandsStep))), default=-1)
    out, seen = list(steps), []
    for i, step in enumerate(steps[: last + 1]):
        if isinstance(step, GeneralizationStep):
            hierarchies = dict(step.hierarchies)
            changed = False
            for attribute, level in step.levels:
                if level == 0 or attribute not in frame.columns:
                    continue
                counts = frame[count].to_numpy() if count and count in frame.columns else None
                table, placed = cover_hierarchy(
                    step.hierarchy(attribute), frame[attribute], attribute, unseen=unseen, counts=counts
                )
                if placed:
                    seen.extend(placed)
                    hierarchies[attribute] = table
                    changed = True
            if changed:
                step = replace(step, hierarchies=tuple(hierarchies.items()))
                out[i] = step
        elif isinstance(step, BandsStep) and step.column in frame.columns:  # bands over the whole line
            numbers = pd.to_numeric(frame[step.column], errors="coerce")
            outside = (numbers < step.low) | (numbers > step.high)
            if outside.any():
                values = tuple(dict.fromkeys(value_key(v) for v in numbers[outside]))
                weights = frame[count][outside] if count and count in frame.columns else None
                records = int(weights.sum()) if weights is not None else int(outside.sum())
                seen.append(UnseenValues(step.column, values, records, "band"))
                step = step.covering(numbers)
                out[i] = step
        if i < last:
            frame = step.apply(frame)
    return tuple(out), tuple(seen)


def cover_hierarchy(
    table: pd.DataFrame,
    values: pd.Series,
    attribute: str,
    *,
    unseen: str = "refuse",
    counts: np.ndarray | None = None,
    recipe: bool = True,
) -> tuple[pd.DataFrame, tuple[UnseenValues, ...]]:
    """``table`` covering ``values`` (``counts``: the records of each entry) and what it placed:
    numbers, codes and dates by its rule, new categories at the top with ``unseen == "top"``,
    else a ``HierarchyError`` naming the column, the value and ``--unseen top`` (``recipe``: the
    hierarchy is a recipe's, else one the user gave)."""
    missing = uncovered_values(table, values)
    if not missing:
        return table, ()
    table, placed = cover_by_rule(table, missing)
    rest = [m for m in missing if m not in set(placed)]
    records = _records_of(values, counts)
    seen = [UnseenValues(attribute, placed, records(placed), "band")] if placed else []
    if rest:
        if check_unseen(unseen) != "top":
            held = records(rest)
            whose = "The recipe's hierarchy" if recipe else "The hierarchy"
            raise HierarchyError(
                f"{whose} of {printable(attribute)} does not list the value '{printable(rest[0])}'"
                + (f" (nor {join_names([printable(v) for v in rest[1:]], 3)})" if len(rest) > 1 else "")
                + f", held by {held:,} record{'s' if held != 1 else ''} of this file; add --unseen top "
                "to generalize new categories to the top level (counted and stated)"
                + (", or make a new recipe." if recipe else ", or add a row for each.")
            )
        table = cover_top(table, rest)
        seen.append(UnseenValues(attribute, tuple(rest), records(rest), "top"))
    return table, tuple(seen)


def _records_of(values: pd.Series, counts: np.ndarray | None):
    """A function giving the records of ``values`` that are one of some lookup keys."""
    distinct, records = distinct_values(values, counts)
    by_key: dict[str, int] = {}
    for v, n in zip(distinct, np.asarray(records).tolist()):
        key = value_key(v)
        by_key[key] = by_key.get(key, 0) + int(n)
    return lambda keys: sum(by_key.get(k, 0) for k in keys)


def cover_recipe(
    recipe: Recipe, dataset: Dataset, *, unseen: str = "refuse"
) -> tuple[Recipe, tuple[UnseenValues, ...]]:
    """``recipe`` covering the values of ``dataset`` (a later delivery, read by the recipe's
    source) that its hierarchies do not list (``cover_steps``), and what was placed."""
    frame = dataset.assessed_only(recipe.target.sensitive).frame  # as its replay starts
    steps, seen = cover_steps([s.step for s in recipe.steps], frame, unseen=unseen, count=dataset.count)
    if not seen:
        return recipe, ()
    covered = tuple(RecipeStep(step, s.page) for step, s in zip(steps, recipe.steps))
    return replace(recipe, steps=covered), seen
