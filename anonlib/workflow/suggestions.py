"""The generalizations a page offers: the searches' results as steps, least damaging first.

Several searches (the optimal one, the paper's IAB, exhaustive and greedy, and the
optimal one on hierarchies that keep every quasi-identifier) often find the same
levels. A privacy officer should see each generalization once, with who found it,
what it costs on the working copy (``step_cost``) and its information loss, the
least loss first; the one preselected is the first that removes no
quasi-identifier (``default_choice``).

Example:
    >>> import pandas as pd
    >>> from anonlib.transformations.generalization import release_search
    >>> from anonlib.core.dataset import Dataset
    >>> from anonlib.core.hierarchy import flat_hierarchy
    >>> frame = pd.DataFrame({"a": ["x", "x", "y", "y"], "b": ["u", "v", "u", "v"]})
    >>> ds = Dataset.from_frame("t.csv", frame, {"a": "quasi-identifier", "b": "quasi-identifier"})
    >>> h = {"a": flat_hierarchy(["x", "y"]), "b": flat_hierarchy(["u", "v"])}
    >>> found = {m: release_search(frame, ["a", "b"], h, m, target=ReleaseTarget(2)) for m in ("optimal", "iab")}
    >>> [(s.found_by, s.result.levels) for s in generalization_suggestions(found, h, ds)]
    [(('optimal', 'iab'), {'a': 0, 'b': 1})]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import pandas as pd

from ..core.budget import WorkEstimate, lattice_size
from ..core.dataset import Dataset
from ..core.errors import AnonlibError
from ..core.hierarchy import level_words
from ..measures.target import ReleaseTarget
from ..measures.utility import measure_value
from ..transformations.generalization import (
    METHOD_NAMES,
    SEARCH_METHODS,
    GeneralizationSpace,
    NoSolutionError,
    SearchResult,
    estimate_search,
    release_search,
)
from .budgets import PAGE_SEARCH_SECONDS
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


def generalization_suggestions(
    found_by: Mapping[str, SearchResult], hierarchies: Mapping[str, pd.DataFrame], dataset: Dataset
) -> tuple[Suggestion, ...]:
    """The distinct generalizations of ``found_by`` (who found it -> result), least
    information loss first, then the most distinct combinations kept (results without
    a loss last); a generalization found by several searches is listed once, with
    their names in order.

    >>> import pandas as pd
    >>> from anonlib.transformations.generalization import release_search
    >>> from anonlib.core.dataset import Dataset
    >>> from anonlib.core.hierarchy import flat_hierarchy
    >>> frame = pd.DataFrame({"a": ["x", "x", "y"]})
    >>> ds = Dataset.from_frame("t.csv", frame, {"a": "quasi-identifier"})
    >>> h = {"a": flat_hierarchy(["x", "y"])}
    >>> greedy = release_search(frame, ["a"], h, "greedy", target=ReleaseTarget(3))
    >>> [s.result.levels for s in generalization_suggestions({"greedy": greedy}, h, ds)]
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
    return tuple(
        sorted(
            suggestions,
            key=lambda s: (s.result.utility if s.result.utility is not None else float("inf"), -s.result.rows),
        )
    )


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


@dataclass(frozen=True)
class KeepingNeed:
    """What keeping every quasi-identifier would take: at the coarsest levels that keep
    them all (``levels``, read as ``words``), ``failing`` of ``records`` records are in
    classes failing k and the models. With k and monotone models no generalization that
    keeps every column leaves fewer, so allowing that share of suppressed records is the
    least that lets the search keep every column."""

    levels: dict[str, int]
    words: dict[str, str]
    failing: int
    records: int
    k: int
    suffices: bool = True  # False: suppressing them still fails a model judged on the records left
    k_only: bool = True  # no privacy model in the target: the classes fail k alone
    unit: str = "records"  # what ``failing`` and ``records`` count: "records" or "people"

    @property
    def share(self) -> float:
        return self.failing / self.records if self.records else 0.0

    def sentence(self) -> str:
        """The page's sentence (plain text with data values: render it escaped).

        >>> KeepingNeed({"age": 2}, {"age": "17 → [0-49]"}, 3, 200, 5).sentence()
        'Even at the coarsest levels that keep every quasi-identifier (age 17 → [0-49]), 3 of 200 records (1.5%) stay in classes failing k = 5: allowing at least 1.5% suppressed records (sidebar) lets the search keep every column; finer or wider hierarchies or fewer quasi-identifiers may help too.'
        """
        levels = ", ".join(f"{a} {w}" for a, w in self.words.items())
        percent = _share_text(self.share)
        unit = self.unit
        if not self.suffices:
            return (
                f"Even at the coarsest levels that keep every quasi-identifier ({levels}), {self.failing:,} of "
                f"{self.records:,} {unit} stay in classes failing the target, and suppressing them leaves "
                "records that still fail a privacy model: finer or wider hierarchies or fewer quasi-identifiers "
                "are needed to keep every column."
            )
        failing = f"k = {self.k}" if self.k_only else "the target"
        stay = "stay in classes" if unit == "records" else "would be suppressed (whole people) for classes"
        return (
            f"Even at the coarsest levels that keep every quasi-identifier ({levels}), {self.failing:,} of "
            f"{self.records:,} {unit} ({percent}) {stay} failing {failing}: allowing at least "
            f"{percent} suppressed {unit} (sidebar) lets the search keep every column; finer or wider "
            "hierarchies or fewer quasi-identifiers may help too."
        )


def _share_up(share: float) -> float:
    """A share rounded up to a tenth of a percent (so allowing it is enough).

    >>> _share_up(91 / 6000)
    0.016
    """
    return math.ceil(share * 1000 - 1e-9) / 1000


def _share_text(share: float) -> str:
    """``_share_up`` as a percentage."""
    return f"{_share_up(share) * 100:g}%"


def keeping_need(
    frame: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    hierarchies: Mapping[str, pd.DataFrame],
    *,
    target: ReleaseTarget,
    count: str | None = None,
) -> KeepingNeed:
    """The records failing the target at the coarsest generalization that keeps every
    quasi-identifier (one class count).

    >>> from anonlib.core.hierarchy import flat_hierarchy
    >>> frame = pd.DataFrame({"a": ["x", "x", "y"], "b": ["u", "u", "v"]})
    >>> h = {"a": flat_hierarchy(["x", "y"]), "b": flat_hierarchy(["u", "v"])}
    >>> need = keeping_need(frame, ["a", "b"], h, target=ReleaseTarget(2))
    >>> need.failing, need.records, need.words
    (1, 3, {'a': 'kept', 'b': 'kept'})
    """
    kept = keeping_hierarchies({a: hierarchies[a] for a in quasi_identifiers})
    top = tuple(kept[a].shape[1] - 1 for a in quasi_identifiers)
    strict = replace(target, max_suppressed=0.0)  # what fails before anything is suppressed
    lattice = GeneralizationSpace(frame, quasi_identifiers, kept, target=strict, count=count)
    failing = lattice.suppressed_in_unit(top)  # in the target's unit: people with a person column
    base = lattice.n_persons if target.person is not None else lattice.records
    suffices = True
    if target.requirements and failing:  # t-closeness and the like are judged again on the records left
        share = _share_up(failing / base)
        again = GeneralizationSpace(
            frame, quasi_identifiers, kept, target=replace(target, max_suppressed=min(share, 1.0)), count=count
        )
        suffices = again.status(top, cost=False)[0]
    return KeepingNeed(
        dict(zip(quasi_identifiers, top)),
        {a: level_words(kept[a], level) for a, level in zip(quasi_identifiers, top)},
        int(failing),
        base,
        target.k,
        suffices,
        not target.requirements,
        target.whole,
    )


KEEPING = "Optimal keeping every quasi-identifier"  # who found a generalization on the trimmed hierarchies


@dataclass(frozen=True, eq=False)
class Generalizations:
    """What a page offers for one release target: each search's result (``results``, by method),
    the sentence of each search that was skipped or found nothing (``notes``), the distinct
    generalizations as steps, least loss first (``suggestions``), the one preselected (None
    when each removes a quasi-identifier), and, when no generalization keeps every
    quasi-identifier, what keeping them would take (``keeping_need``)."""

    results: Mapping[str, SearchResult]
    notes: tuple[str, ...]
    suggestions: tuple[Suggestion, ...]
    preselected: int | None
    keeping_need: KeepingNeed | None = None

    @property
    def needed(self) -> bool:
        """Whether any search raised a level (else the quasi-identifiers already meet k)."""
        return any(v for s in self.suggestions for v in s.result.levels.values())


# Measured at 10^5 records of Adult (8 quasi-identifiers, a lattice of 12,150 generalizations of
# which the page's searches count about 300 tables), 2 shared cores lightly loaded: 1.3-2.0 s for
# all of them, a row's share being the same whatever the lattice beyond a few hundred tables;
# counted in people (3 records per person) 3.5-4.5 s, about 2.7 times as much (every class's
# people counted, the suppressed people's other records followed).
_SEARCH_SECONDS_PER_ROW = 1.4e-5
_TABLES_MEASURED = 300
_PERSON_FACTOR = 2.7


def estimate_generalizations(
    frame: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    hierarchies: Mapping[str, pd.DataFrame],
    *,
    by_person: bool = False,
) -> WorkEstimate:
    """What ``find_generalizations`` may cost on ``frame``: the tables its searches count
    (a few hundred at most on a large lattice, all of a small one) times the rows of the
    table, by person when the target counts people (``by_person``), in seconds on this
    machine class.

    >>> from anonlib.core.hierarchy import flat_hierarchy
    >>> frame = pd.DataFrame({"a": ["x", "y"] * 50_000})
    >>> e = estimate_generalizations(frame, ["a"], {"a": flat_hierarchy(["x", "y"])})
    >>> e.operations, round(e.seconds, 4)
    (2, 0.0093)
    """
    qis = list(quasi_identifiers)
    lattice = lattice_size(int(hierarchies[a].shape[1]) if a in hierarchies else 1 for a in qis)
    tables = min(lattice, _TABLES_MEASURED)
    rows = int(frame.shape[0])
    seconds = _SEARCH_SECONDS_PER_ROW * rows * tables / _TABLES_MEASURED * (_PERSON_FACTOR if by_person else 1.0)
    what = f"searching generalizations of {len(qis)} quasi-identifier{'s' if len(qis) != 1 else ''}"
    return WorkEstimate(what, operations=tables, seconds=seconds, peak_bytes=rows * 8 * (len(qis) + 6))


def find_generalizations(
    dataset: Dataset,
    frame: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    hierarchies: Mapping[str, pd.DataFrame],
    *,
    target: ReleaseTarget,
    measure: str = "loss",
    methods: Sequence[str] = SEARCH_METHODS,
    time_limit: float = PAGE_SEARCH_SECONDS,
) -> Generalizations:
    """Run the searches a page offers on ``frame`` (the working copy's records) for ``target``
    counted in the dataset's unit (people through its person role: ``ReleaseTarget.in_unit_of``)
    and turn their results into suggestions: every method of ``methods`` (exhaustive only when its estimate is
    interactive; a search that finds nothing is a note), and, when a hierarchy's top level would
    remove a quasi-identifier, the optimal search on hierarchies without it (its loss measured with
    the full hierarchies, as every other's). Greedy's results come last, so a generalization it
    shares with another search is listed under that search's name.

    >>> from anonlib.core.hierarchy import flat_hierarchy
    >>> frame = pd.DataFrame({"a": ["x", "x", "y", "y"], "b": ["u", "v", "u", "v"]})
    >>> ds = Dataset.from_frame("t.csv", frame, {"a": "quasi-identifier", "b": "quasi-identifier"})
    >>> h = {"a": flat_hierarchy(["x", "y"]), "b": flat_hierarchy(["u", "v"])}
    >>> found = find_generalizations(ds, frame, ["a", "b"], h, target=ReleaseTarget(k=2))
    >>> [(s.found_by[0], s.result.levels) for s in found.suggestions]
    [('Optimal (least loss, proven)', {'a': 0, 'b': 1}), ('Greedy (Method 2)', {'a': 1, 'b': 0})]
    >>> found.preselected is None  # each turns a quasi-identifier into one value
    True
    """
    qis = list(quasi_identifiers)
    target = target.in_unit_of(dataset)
    settings = {"count": dataset.count, "target": target}
    results: dict[str, SearchResult] = {}
    notes: list[str] = []
    for method in methods:
        if method == "exhaustive":
            estimate = estimate_search(frame, qis, hierarchies, method)
            if not estimate.interactive:
                notes.append(
                    f"Exhaustive search skipped: {estimate.what} would take too long here; IAB finds the same optimum."
                )
                continue
        try:
            results[method] = release_search(
                frame,
                qis,
                hierarchies,
                method,
                measure=measure,
                time_limit=time_limit if method == "optimal" else None,
                **settings,
            )
        except AnonlibError as err:
            notes.append(f"{METHOD_NAMES[method]}: {err}")
    found_by = {METHOD_NAMES[m]: r for m, r in results.items() if m != "greedy"}
    need = None
    if any(v for r in results.values() for v in r.levels.values()) and trims(hierarchies):
        kept = keeping_hierarchies(hierarchies)
        try:
            keeping = release_search(
                frame, list(kept), kept, "optimal", measure=measure, time_limit=time_limit, **settings
            )
            # its loss measured with the full hierarchies, as every other candidate's
            found_by[KEEPING] = replace(
                keeping,
                utility=measure_value(frame, keeping.table, list(kept), hierarchies, measure, count=dataset.count),
            )
        except NoSolutionError:
            need = keeping_need(frame, qis, hierarchies, target=target, count=dataset.count)
    found_by.update({METHOD_NAMES[m]: r for m, r in results.items() if m == "greedy"})
    suggestions = generalization_suggestions(found_by, hierarchies, dataset) if found_by else ()
    return Generalizations(results, tuple(notes), suggestions, preselected(suggestions), need)
