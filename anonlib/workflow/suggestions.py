"""The generalizations a page offers: the searches' results as steps, least damaging first.

Several searches (the optimal one, the paper's IAB, exhaustive and greedy, and the
optimal one on hierarchies that keep every quasi-identifier) often find the same
levels. A privacy officer should see each generalization once, with who found it,
what it costs on the working copy (``step_cost``) and its information loss, the
least loss first; the one preselected is the first that removes no
quasi-identifier (``default_choice``).

Example:
    >>> import pandas as pd
    >>> from anonlib.transformations.anonymize import search
    >>> from anonlib.core.dataset import Dataset
    >>> from anonlib.core.hierarchy import flat_hierarchy
    >>> frame = pd.DataFrame({"a": ["x", "x", "y", "y"], "b": ["u", "v", "u", "v"]})
    >>> ds = Dataset.from_frame("t.csv", frame, {"a": "quasi-identifier", "b": "quasi-identifier"})
    >>> h = {"a": flat_hierarchy(["x", "y"]), "b": flat_hierarchy(["u", "v"])}
    >>> found = {m: search(frame, ["a", "b"], 2, h, method=m) for m in ("optimal", "iab")}
    >>> [(s.found_by, s.result.levels) for s in generalization_suggestions(found, h, ds)]
    [(('optimal', 'iab'), {'a': 0, 'b': 1})]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import pandas as pd

from ..transformations.anonymize import SearchResult
from ..core.dataset import Dataset
from .cost import StepCost, default_choice, step_cost
from .steps import GeneralizationStep


@dataclass(frozen=True, eq=False)
class Suggestion:
    """One distinct generalization found: the search result (of the first search that
    found it), the step that applies it, what it costs on the working copy, and the
    names of every search that found it."""

    result: SearchResult
    step: GeneralizationStep
    cost: StepCost
    found_by: tuple[str, ...]


def generalization_suggestions(found_by: Mapping[str, SearchResult], hierarchies: Mapping[str, pd.DataFrame],
                               dataset: Dataset) -> tuple[Suggestion, ...]:
    """The distinct generalizations of ``found_by`` (who found it -> result), least
    information loss first, then the most distinct combinations kept (results without
    a loss last); a generalization found by several searches is listed once, with
    their names in order.

    >>> import pandas as pd
    >>> from anonlib.transformations.anonymize import search
    >>> from anonlib.core.dataset import Dataset
    >>> from anonlib.core.hierarchy import flat_hierarchy
    >>> frame = pd.DataFrame({"a": ["x", "x", "y"]})
    >>> ds = Dataset.from_frame("t.csv", frame, {"a": "quasi-identifier"})
    >>> h = {"a": flat_hierarchy(["x", "y"])}
    >>> [s.result.levels for s in generalization_suggestions({"greedy": search(frame, ["a"], 3, h, method="greedy")}, h, ds)]
    [{'a': 1}]
    """
    found: dict[tuple, tuple[SearchResult, list[str]]] = {}
    for name, result in found_by.items():
        key = tuple(result.levels.items())
        if key in found:
            found[key][1].append(name)
        else:
            found[key] = (result, [name])
    suggestions = []
    for result, names in found.values():
        step = GeneralizationStep.from_search(result, dict(hierarchies))
        suggestions.append(Suggestion(result, step, step_cost(step, dataset), tuple(names)))
    return tuple(sorted(suggestions, key=lambda s: (s.result.utility if s.result.utility is not None else float("inf"),
                                                    -s.result.rows)))


def preselected(suggestions: tuple[Suggestion, ...]) -> int | None:
    """Index of the suggestion to preselect: the least damaging one that removes no
    quasi-identifier (None when every one turns a quasi-identifier into one value).

    >>> preselected(())
    """
    return default_choice([s.cost for s in suggestions])


def keeping_hierarchies(hierarchies: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The hierarchies without their top levels of a single value (such as ``*``): a
    search on them never removes a quasi-identifier (a hierarchy of one level stays).

    >>> from anonlib.core.hierarchy import flat_hierarchy
    >>> h = pd.DataFrame([["31", "30-39", "*"], ["35", "30-39", "*"], ["47", "40-49", "*"]])
    >>> {a: t.shape[1] for a, t in keeping_hierarchies({"age": h, "sex": flat_hierarchy(["F", "M"])}).items()}
    {'age': 2, 'sex': 1}
    """
    kept = {}
    for attribute, table in hierarchies.items():
        while table.shape[1] > 1 and table.iloc[:, -1].nunique() <= 1:
            table = table.iloc[:, :-1]
        kept[attribute] = table
    return kept


def trims(hierarchies: Mapping[str, pd.DataFrame]) -> bool:
    """Whether keeping every quasi-identifier changes the search: some hierarchy loses a
    top level and some keeps more than one level (else there is nothing to search).

    >>> from anonlib.core.hierarchy import flat_hierarchy
    >>> trims({"sex": flat_hierarchy(["F", "M"])})
    False
    """
    kept = keeping_hierarchies(hierarchies)
    return any(kept[a].shape[1] < hierarchies[a].shape[1] for a in kept) and any(t.shape[1] > 1 for t in kept.values())
