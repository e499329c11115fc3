"""A release target's privacy models: ``ModelRequirement``, whether they are monotone,
which classes fail them, and the acceptance test that suppresses those classes' records
within a limit (ARX's record suppression)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from ...core.cells import is_number_column
from ...core.equivalence import (
    EncodedTable,
    encode,
    encode_column,
    persons_failing,
    persons_per_class,
    record_counts,
)
from ...core.errors import ParameterError, join_names, require_columns
from ...core.histories import Earlier, joint_codes, rows_short
from ...core.metrics import whole_k
from ...core.numbers import whole_number
from .per_class import (
    HierarchyLevels,
    class_alpha,
    class_beta,
    class_delta,
    class_distinct,
    class_entropy,
    class_t,
    hierarchy_levels,
    recursive_parts,
)
from .summaries import (
    MODEL_NAMES,
    MODELS,
    MONOTONE,
    TOLERANCE,
    SensitiveCounts,
    checked_columns,
    counts_from_table,
    model_number,
)

# --------------------------------------------------------------------------- requirements and acceptance


@dataclass(frozen=True)
class ModelRequirement:
    """One switched-on privacy model for one sensitive attribute.

    ``value`` is α (share, 0 < α <= 1), l (distinct: whole, >= 1; entropy: >= 1),
    l of recursive (c,l) (whole, >= 1, with ``c`` > 0), t (0..1), δ (> 0) or β (> 0).
    ``hierarchy`` (t-closeness only, ARX layout) selects the hierarchical distance.

    >>> r = ModelRequirement("distinct_l", "diagnosis", 3)
    >>> r.describe(), r.monotone
    ('distinct 3-diversity of diagnosis', True)
    >>> ModelRequirement.from_json(r.to_json()) == r
    True
    """

    model: str
    sensitive: str
    value: float
    c: float | None = None
    hierarchy: pd.DataFrame | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.model not in MODEL_NAMES:
            raise ParameterError(f"'{self.model}' is not a privacy model; use one of {join_names(MODELS)}.")
        if not isinstance(self.sensitive, str) or not self.sensitive:
            raise ParameterError("Name the sensitive attribute the privacy model protects.")
        name = MODEL_NAMES[self.model]
        value = model_number(self.value, f"The value of {name}")
        if self.model in ("distinct_l", "recursive_cl"):
            value = float(whole_number(value, f"l of {name}", minimum=1, maximum=None))
        checks = {
            "alpha": (0.0 < value <= 1.0, "α must be above 0 and at most 1"),
            "distinct_l": (value >= 1, "l must be at least 1"),
            "entropy_l": (value >= 1.0 and math.isfinite(value), "l must be at least 1"),
            "recursive_cl": (value >= 1, "l must be at least 1"),
            "t_closeness": (0.0 <= value <= 1.0, "t must be between 0 and 1"),
            "delta_disclosure": (value > 0.0 and math.isfinite(value), "δ must be above 0"),
            "beta_likeness": (value > 0.0 and math.isfinite(value), "β must be above 0"),
            "enhanced_beta_likeness": (value > 0.0 and math.isfinite(value), "β must be above 0"),
        }
        ok, sentence = checks[self.model]
        if not ok:
            raise ParameterError(f"For {name} of {self.sensitive}, {sentence}; got {value:g}.")
        object.__setattr__(self, "value", value)
        if self.model == "recursive_cl":
            c = model_number(self.c, f"c of {name}") if self.c is not None else None
            if c is None or not (c > 0 and math.isfinite(c)):
                raise ParameterError(f"Recursive (c,l)-diversity of {self.sensitive} needs a constant c above 0.")
            object.__setattr__(self, "c", c)
        elif self.c is not None:
            raise ParameterError(f"Only recursive (c,l)-diversity takes a constant c, not {name}.")
        if self.hierarchy is not None and self.model != "t_closeness":
            raise ParameterError(f"Only t-closeness takes a hierarchy, not {name}.")

    def describe(self) -> str:
        """The requirement in words, e.g. ``'0.2-closeness of diagnosis'``."""
        v, s = f"{self.value:g}", self.sensitive
        if self.model == "recursive_cl":
            return f"recursive ({self.c:g}, {v})-diversity of {s}"
        if self.model == "t_closeness" and self.hierarchy is not None:
            return f"{v}-closeness of {s} (hierarchical distance)"
        return {
            "alpha": f"(α = {v})-anonymity of {s}",
            "distinct_l": f"distinct {v}-diversity of {s}",
            "entropy_l": f"entropy {v}-diversity of {s}",
            "t_closeness": f"{v}-closeness of {s}",
            "delta_disclosure": f"{v}-disclosure privacy of {s}",
            "beta_likeness": f"basic {v}-likeness of {s}",
            "enhanced_beta_likeness": f"enhanced {v}-likeness of {s}",
        }[self.model]

    @property
    def monotone(self) -> bool:
        """Whether the requirement can only get easier to meet when classes merge by
        generalization: if two classes meet it, so does their union.

        - α: the union's share of each value is a weighted mean of the two shares, so
          the largest share cannot grow.
        - distinct l: the union holds every value of either class.
        - entropy l: entropy is concave, so the union's entropy is at least the
          weighted mean of the two (Machanavajjhala et al., Section 5).
        - recursive (c,l): shown monotone by Machanavajjhala et al. (Section 5): the
          union's counts are sums, r1 grows by at most the larger r1 and the tail by at
          least the tails.
        - t-closeness: the EMD to a fixed distribution is convex in the class
          distribution, so the union is at most the weighted mean of the two distances.
        - β-likeness (basic and enhanced): each value's share in the union is a
          weighted mean, so no gain grows, and the caps per value (-ln p) stay fixed.
        - δ-disclosure over the values present is NOT monotone: a value rare in one
          class and absent from the other becomes present with a tiny share in the
          union, and abs(ln(q/p)) of it can exceed δ.
        """
        return MONOTONE[self.model]

    @property
    def monotone_with_suppression(self) -> bool:
        """Whether a class meeting the requirement still meets it after absorbing any
        other class, even one that fails it. Only then does merging never increase
        the suppressed records, so a search with a suppression limit may prune on it.
        True for distinct l only (the union keeps the passing class's values); a
        class failing α, entropy l, (c,l), t or β can drag a passing one over the limit."""
        return self.model == "distinct_l"

    def to_json(self) -> dict:
        """Plain values (the hierarchy as a list of rows of text)."""
        return {
            "model": self.model,
            "sensitive": self.sensitive,
            "value": self.value,
            "c": self.c,
            "hierarchy": None if self.hierarchy is None else self.hierarchy.astype(str).values.tolist(),
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ModelRequirement:
        """The requirement written by ``to_json``; a sentence when a field is wrong."""
        if not isinstance(d, Mapping) or "model" not in d or "sensitive" not in d or "value" not in d:
            raise ParameterError("A privacy model needs a model name, a sensitive attribute and a value.")
        rows = d.get("hierarchy")
        hierarchy = None
        if rows is not None:
            if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows):
                raise ParameterError("A hierarchy is a list of rows of text.")
            hierarchy = pd.DataFrame(rows, dtype=object)
        return cls(str(d["model"]), str(d["sensitive"]), d["value"], d.get("c"), hierarchy)


def requirements_monotone(requirements: Iterable[ModelRequirement], max_suppressed: float = 0.0) -> bool:
    """Whether a generalization of an acceptable table is always acceptable, so a
    search may prune by monotonicity: every requirement monotone and, with a
    suppression limit above 0, monotone with suppression too (k always is).

    >>> requirements_monotone([ModelRequirement("entropy_l", "dx", 2)]), requirements_monotone([ModelRequirement("entropy_l", "dx", 2)], 0.05)
    (True, False)
    """
    requirements = list(requirements)
    if max_suppressed > 0:
        return all(r.monotone and r.monotone_with_suppression for r in requirements)
    return all(r.monotone for r in requirements)


def class_passes(
    requirement: ModelRequirement, s: SensitiveCounts, hierarchy: HierarchyLevels | None = None
) -> np.ndarray:
    """Per class, whether it meets the requirement (classes without records pass).

    >>> s = SensitiveCounts.from_cells([0, 0, 1], [0, 1, 0], [1, 1, 2], ["a", "b"])
    >>> class_passes(ModelRequirement("distinct_l", "dx", 2), s).tolist()
    [True, False]
    """
    m, v = requirement.model, requirement.value
    if m == "alpha":
        ok = class_alpha(s) <= v + TOLERANCE
    elif m == "distinct_l":
        ok = class_distinct(s) >= v
    elif m == "entropy_l":
        ok = class_entropy(s) >= math.log(v) - TOLERANCE
    elif m == "recursive_cl":
        r1, tail = recursive_parts(s, int(v))
        ok = r1 < requirement.c * tail
    elif m == "t_closeness":
        if hierarchy is None and requirement.hierarchy is not None:
            hierarchy = hierarchy_levels(requirement.hierarchy, s.labels, requirement.sensitive)
        ok = class_t(s, None, hierarchy) <= v + TOLERANCE
    elif m == "delta_disclosure":
        ok = class_delta(s) < v
    elif m == "beta_likeness":
        ok = class_beta(s) <= v + TOLERANCE
    else:  # enhanced β-likeness: each gain within min(β, -ln p)
        q, p = s._class_share, s.table_distribution[s.cell_value]
        over = (q > p) & ((q - p) / p > np.minimum(v, -np.log(p)) + TOLERANCE)
        ok = np.bincount(s.cell_class, weights=over, minlength=s.n_classes) == 0
    return np.asarray(ok, dtype=bool) | ~s.present


@dataclass(frozen=True)
class Acceptance:
    """Whether a table meets k and the requirements after suppressing the records of
    every class that fails one of them, with the suppressed share within the limit.

    ``failing`` lists, per criterion (``"k = 5"`` or a requirement's description), the
    records in classes failing it (a class may fail several); ``kept`` says per row
    whether its class meets everything.

    With a person column, k counts distinct persons per class and a person fails as a
    whole (all their records are suppressed when one of them fails); ``persons`` and
    ``suppressed_persons`` count them, and the share and the limit are in persons.
    Removing a person's other records can leave another class short, so what
    suppression removes can be more than what fails at first: ``persons_in_failing`` and
    ``records_in_failing`` count the people with a record in a failing class, and the
    records in failing classes, of the table as it is.
    """

    acceptable: bool
    records: int
    suppressed_records: int
    suppressed_share: float
    failing: tuple[tuple[str, int], ...]
    kept: np.ndarray = field(compare=False, repr=False)
    persons: int | None = None
    suppressed_persons: int | None = None
    persons_in_failing: int | None = None
    records_in_failing: int | None = None
    encoded: EncodedTable | None = field(default=None, compare=False, repr=False)  # the table judged, encoded
    stuck: int = 0  # owners failing over their cumulative history with no record here (earlier deliveries)


def acceptance(
    frame: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    *,
    k: int = 1,
    requirements: Iterable[ModelRequirement] = (),
    max_suppressed: float = 0.0,
    count: str | None = None,
    engine=None,
    encoded: EncodedTable | None = None,
    person: str | None = None,
    household: str | None = None,
    linked: Sequence[str] = (),
    power: int | None = None,
    earlier: Earlier | None = None,
) -> Acceptance:
    """Suppress the records of every class failing k or a requirement; acceptable when
    the suppressed share is at most ``max_suppressed`` (a share of records, 0..1).
    ``frame`` may also be a path or a table on a data engine (``anonlib.engine``).
    ``encoded`` is the kernel's encoding of ``frame`` holding the quasi-identifiers and the
    models' columns with sorted labels (``encode``), read when given instead of encoding again.
    With ``person`` (a column of ``frame``), k counts distinct persons, a person fails
    when any of their records does, and the share is of persons (see ``Acceptance``).

    ``linked`` names the person and household columns whose records an attacker can put
    together (released in any form): k then counts each person's whole history (or, with
    ``power`` = m, any m of their records; ``anonlib.core.histories``), and a household column
    among them counts households by their members' records together; whole households are
    then suppressed, and ``persons`` and its kin count households. ``earlier`` records (a
    project's earlier deliveries, kept as released) make the histories cumulative (``Owners``).

    >>> df = pd.DataFrame({"zip": [1, 1, 1, 2, 2], "dx": ["a", "b", "c", "a", "a"]})
    >>> a = acceptance(df, ["zip"], k=2, requirements=[ModelRequirement("distinct_l", "dx", 2)], max_suppressed=0.4)
    >>> a.acceptable, a.suppressed_records, a.failing, a.kept.tolist()
    (True, 2, (('k = 2', 0), ('distinct 2-diversity of dx', 2)), [True, True, True, False, False])
    >>> visits = pd.DataFrame({"zip": [1, 1, 1, 2, 1], "pid": ["a", "a", "b", "b", "c"]})
    >>> p = acceptance(visits, ["zip"], k=2, person="pid")
    >>> p.kept.tolist(), p.suppressed_records, p.persons, p.suppressed_persons
    ([True, True, False, False, True], 2, 3, 1)
    """
    if person is not None and (engine is not None or not isinstance(frame, pd.DataFrame)):
        raise ParameterError("Counting people needs the table in memory; leave out the engine for a person column.")
    if engine is not None or not isinstance(frame, pd.DataFrame):
        # The engine sends back the (class, sensitive value) cells; ``kept`` is then per cell, not
        # per record (the records stay where they are; workflow.engine_replay suppresses them there).
        from ...engine import WEIGHT, as_engine_table, summary_frame

        table = as_engine_table(frame, engine)
        sensitives = [r.sensitive for r in requirements if isinstance(r, ModelRequirement)]
        cells, _ = summary_frame(table, [*quasi_identifiers, *sensitives], count=count)
        return acceptance(
            cells, list(quasi_identifiers), k=k, requirements=requirements, max_suppressed=max_suppressed, count=WEIGHT
        )
    k = whole_k(k)
    limit = suppression_limit(max_suppressed)
    requirements = checked_requirements(requirements)
    sensitives = list(dict.fromkeys(r.sensitive for r in requirements))
    qis = checked_columns(frame, quasi_identifiers, sensitives, count)
    table = encode(frame, [*qis, *sensitives], count=count) if encoded is None else encoded
    classes = table.classes(qis)
    counts = {s: counts_from_table(table, classes, s, is_number_column(frame[s])) for s in sensitives}
    if person is not None or household is not None:
        for column, what in ((person, "the person column"), (household, "the household column")):
            if column is not None and (column in qis or column in sensitives or column == count):
                raise ParameterError(
                    f"'{column}' is {what}; it cannot also be a quasi-identifier, sensitive or the count."
                )
        weights = None if count is None else record_counts(frame, count)
        owners = Owners.of(frame, person, household, linked, power, earlier, weights=weights)
        if owners is not None:
            return replace(
                _person_acceptance(frame, qis, classes, owners, k, requirements, counts, limit, count), encoded=table
            )
    failed, failing = classes_failing(classes.sizes, k, requirements, counts)
    records = int(classes.sizes.sum())
    suppressed = int(classes.sizes[failed].sum())
    return Acceptance(
        acceptable=within_limit(suppressed, records, limit),
        records=records,
        suppressed_records=suppressed,
        suppressed_share=suppressed / records if records else 0.0,
        failing=failing,
        kept=~failed[classes.ids],
        encoded=table,
    )


@dataclass(frozen=True)
class Owners:
    """Whom a release target counts when records belong to people: ``unit`` (the person or the
    household column, suppressed whole) with its code per record; ``linked``, the kinds of owner
    whose records link (code per record, how many), each judged on its history at ``power``
    (``anonlib.core.histories.rows_short``); none linked: k counts distinct people per class.

    With ``earlier`` records (a project's earlier deliveries under linked pseudonyms,
    ``anonlib.core.histories.Earlier``) the histories are cumulative: the earlier records join
    them in classes of their own (``earlier_ids``), their owners coded with this table's
    (``earlier_unit``, ``earlier_kinds``); they are kept as released, so an owner failing is
    suppressed from this table only, and one failing with no record here cannot be helped
    (``stuck``). ``here`` is the owners of this table (the base of the suppressed share).

    A row of no records (a count column's 0) names no one, as the engines read it
    (``anonlib.engine.owners``): it is in no owner's history and no class's people, never fails,
    and an owner whose rows all hold no records is not counted in ``here``."""

    codes: np.ndarray
    n: int
    linked: tuple[tuple[np.ndarray, int], ...] = ()
    power: int | None = None
    here: int = 0
    earlier_ids: np.ndarray | None = None
    n_earlier: int = 0
    earlier_weights: np.ndarray | None = None
    earlier_unit: np.ndarray | None = None
    earlier_kinds: tuple[np.ndarray, ...] = ()

    @classmethod
    def of(
        cls,
        frame: pd.DataFrame,
        person: str | None,
        household: str | None,
        linked: Sequence[str],
        power: int | None,
        earlier: Earlier | None = None,
        *,
        weights: np.ndarray | None = None,
    ) -> Owners | None:
        """The owners of ``frame``'s records (None: counted in records: no person column and no
        household linked), with the ``earlier`` records when they link; ``weights``: the records
        each row stands for (None: one each)."""
        linked = tuple(linked)
        kinds = [c for c in (household, person) if c is not None and c in linked]
        unit = household if household is not None and household in linked else person
        if unit is None:
            return None
        require_columns(frame, [unit, *kinds])
        if not kinds:
            earlier = None
        codes = {c: joint_codes(frame[c], earlier, c) for c in dict.fromkeys([unit, *kinds])}
        held = np.ones(len(frame), dtype=bool) if weights is None else np.asarray(weights) > 0
        here = _persons_in(held, codes[unit][0], codes[unit][2])
        if earlier is None:
            return cls(codes[unit][0], codes[unit][2], tuple((codes[c][0], codes[c][2]) for c in kinds), power, here)
        ids, labels = encode_column(earlier.classes, ordered=False)
        n_earlier = len(labels)
        return cls(
            codes[unit][0],
            codes[unit][2],
            tuple((codes[c][0], codes[c][2]) for c in kinds),
            power,
            here,
            ids,
            n_earlier,
            earlier.weights,
            codes[unit][1],
            tuple(codes[c][1] for c in kinds),
        )

    def _cumulative(self, ids, n_classes, weights, k, rows) -> tuple[np.ndarray, np.ndarray]:
        """Per row of ``rows``, and per earlier record, whether its owner's cumulative history fails."""
        all_ids = np.concatenate([ids, n_classes + self.earlier_ids])
        all_weights = np.concatenate([np.asarray(weights, dtype=np.int64), self.earlier_weights])
        kinds = [(np.concatenate([codes[rows], old]), n) for (codes, n), old in zip(self.linked, self.earlier_kinds)]
        short = rows_short(all_ids, n_classes + self.n_earlier, kinds, k, all_weights, power=self.power)
        return short[: len(ids)], short[len(ids) :]

    def short_rows(self, ids: np.ndarray, n_classes: int, weights: np.ndarray, k: int, rows: np.ndarray) -> np.ndarray:
        """Per row of ``rows`` (the records left), whether it fails k: its owner's history is
        shared by fewer than k (linked; cumulative with earlier records, an owner failing through
        them fails here too), or its class holds fewer than k people. A row of no records never fails
        and counts for no one."""
        held = np.asarray(weights) > 0
        if not held.all():  # judged on the rows holding records only
            out = np.zeros(len(held), dtype=bool)
            out[held] = self.short_rows(ids[held], n_classes, weights[held], k, rows[held])
            return out
        if self.linked and self.earlier_ids is not None:
            new, old = self._cumulative(ids, n_classes, weights, k, rows)
            if old.any():
                failing = np.zeros(self.n, dtype=bool)
                failing[self.earlier_unit[old]] = True
                new = new | failing[self.codes[rows]]
            return new
        if self.linked:
            kinds = [(codes[rows], n) for codes, n in self.linked]
            return rows_short(ids, n_classes, kinds, k, weights, power=self.power)
        people = persons_per_class(ids, n_classes, self.codes[rows], self.n)
        return ((people > 0) & (people < k))[ids]

    def stuck(self, ids: np.ndarray, n_classes: int, weights: np.ndarray, k: int, rows: np.ndarray) -> int:
        """Owners whose cumulative history fails with none of their records left in this table
        (``rows``): kept as released earlier, nothing here can help them (0 without earlier records)."""
        if self.earlier_ids is None or not self.linked:
            return 0
        held = np.asarray(weights) > 0  # a row of no records is no record left
        ids, weights, rows = ids[held], np.asarray(weights)[held], rows[held]
        _, old = self._cumulative(ids, n_classes, weights, k, rows)
        failing = np.zeros(self.n, dtype=bool)
        failing[self.earlier_unit[old]] = True
        failing[self.codes[rows]] = False
        return int(failing.sum())


def _person_acceptance(frame, qis, classes, owners: Owners, k, requirements, counts, limit, count) -> Acceptance:
    """``acceptance`` counted in people (or households, ``owners``): a class fails k when it
    holds fewer than k distinct persons, or, with linked records, an owner fails when its history
    is shared by fewer than k (the models judge the classes' records as usual), and every record
    of a failing person (household) is suppressed. Removing a person's other records can leave
    another class (or containing history) short, so the rule is applied again on what is left
    until nothing fails (each pass removes at least one person, so it ends). The classes of the
    records left are the same classes (fewer people in them): only the models' summaries are
    counted again, when there are models."""
    codes, n_persons = owners.codes, owners.n
    weights = np.ones(len(frame), dtype=np.int64) if count is None else record_counts(frame, count)
    everyone = np.arange(len(frame))
    failed, failing = _person_pass(classes.ids, classes.n_classes, weights, owners, everyone, k, requirements, counts)
    in_failing_persons, in_failing_records = _persons_in(failed, codes, n_persons), int(weights[failed].sum())
    out = persons_failing(failed, codes, n_persons)
    sensitives = list(dict.fromkeys(r.sensitive for r in requirements))
    # whole histories compared exactly, whole owners removed: the others' histories stay as they are,
    # so one pass is the answer (no model judged again, no other kind of owner, no earlier records)
    once = owners.power is None and len(owners.linked) == 1 and not requirements and owners.earlier_ids is None
    once = once and owners.linked[0][0] is owners.codes
    while out.any() and not out.all() and not once:
        rest = np.flatnonzero(~out)
        part_counts = counts
        if requirements:  # the models' summaries of the records left
            part = frame.iloc[rest]
            table = encode(part, [*qis, *sensitives], count=count)
            part_classes = table.classes(qis)
            part_counts = {s: counts_from_table(table, part_classes, s, is_number_column(part[s])) for s in sensitives}
            ids, n_classes = part_classes.ids, part_classes.n_classes
        else:
            ids, n_classes = classes.ids[rest], classes.n_classes
        again, _ = _person_pass(ids, n_classes, weights[rest], owners, rest, k, requirements, part_counts)
        if not again.any():
            break
        out[rest] = persons_failing(again, codes[rest], n_persons)
        out = persons_failing(out, codes, n_persons)
    gone = _persons_in(out, codes, n_persons)
    here = owners.here
    rest = np.flatnonzero(~out)
    stuck = owners.stuck(classes.ids[rest], classes.n_classes, weights[rest], k, rest)
    return Acceptance(
        acceptable=within_limit(gone, here, limit) and stuck == 0,
        records=int(weights.sum()),
        suppressed_records=int(weights[out].sum()),
        suppressed_share=gone / here if here else 0.0,
        failing=failing,
        kept=~out,
        persons=here,
        suppressed_persons=gone,
        persons_in_failing=in_failing_persons,
        records_in_failing=in_failing_records,
        stuck=stuck,
    )


def _persons_in(rows: np.ndarray, codes: np.ndarray, n_persons: int) -> int:
    """Distinct persons among the rows marked (each person marked once: no sort of the codes).

    >>> _persons_in(np.array([True, True, False, True]), np.array([2, 2, 0, 1]), 3)
    2
    """
    marked = np.zeros(max(int(n_persons), 1), dtype=bool)
    marked[codes[rows]] = True
    return int(np.count_nonzero(marked))


def _person_pass(ids, n_classes, weights, owners: Owners, rows, k, requirements, counts) -> tuple[np.ndarray, tuple]:
    """Per row (of ``rows``, the records left), whether it fails k (in people, or on its owner's
    history) or its class fails a requirement (on its records); and the records failing each
    criterion."""
    sizes = np.bincount(ids, weights=weights, minlength=n_classes).astype(np.int64)
    failed, failing = classes_failing(sizes, 1, requirements, counts)
    short = owners.short_rows(ids, n_classes, weights, k, rows)
    if k > 1:
        failing = ((f"k = {k}", int(weights[short].sum())),) + failing
    return failed[ids] | short, failing


def suppression_limit(value: object) -> float:
    """A suppression limit checked: a share of records between 0 and 1.

    >>> suppression_limit(0.05)
    0.05
    """
    limit = model_number(value, "The suppression limit")
    if not 0.0 <= limit <= 1.0:
        raise ParameterError(f"The suppression limit is a share of records between 0 and 1; got {limit:g}.")
    return limit


def within_limit(suppressed: int, records: int, limit: float) -> bool:
    """Whether ``suppressed`` of ``records`` records is a share of at most ``limit``
    (with a margin of 10^-9 records per record for the float product).

    >>> within_limit(5, 100, 0.05), within_limit(6, 100, 0.05)
    (True, False)
    """
    return suppressed <= limit * records + 1e-9 * max(records, 1)


def checked_requirements(requirements: Iterable[ModelRequirement]) -> tuple[ModelRequirement, ...]:
    """The requirements as a tuple; a sentence when one is not a ``ModelRequirement``."""
    requirements = tuple(requirements)
    for r in requirements:
        if not isinstance(r, ModelRequirement):
            raise ParameterError("Each privacy model must be given as a ModelRequirement.")
    return requirements


def classes_failing(
    class_sizes: np.ndarray,
    k: int,
    requirements: Sequence[ModelRequirement],
    counts: Mapping[str, SensitiveCounts],
    hierarchies: Sequence[HierarchyLevels | None] | None = None,
) -> tuple[np.ndarray, tuple[tuple[str, int], ...]]:
    """Per class, whether it fails k or a requirement, and per criterion the records in
    classes failing it (``Acceptance.failing``). ``counts`` maps each requirement's
    sensitive attribute to its summaries over these classes; ``hierarchies`` (aligned
    with ``requirements``) may hold t-closeness hierarchies already matched to the labels.
    The one rule behind ``acceptance`` and the generalization search.

    >>> s = SensitiveCounts.from_cells([0, 0, 1], [0, 1, 0], [1, 1, 2], ["a", "b"])
    >>> failed, failing = classes_failing(s.class_sizes, 2, [ModelRequirement("distinct_l", "dx", 2)], {"dx": s})
    >>> failed.tolist(), failing
    ([False, True], (('k = 2', 0), ('distinct 2-diversity of dx', 2)))
    """
    failed = (class_sizes > 0) & (class_sizes < k)
    failing: list[tuple[str, int]] = []
    if k > 1:
        failing.append((f"k = {k}", int(class_sizes[failed].sum())))
    for i, r in enumerate(requirements):
        fails = ~class_passes(r, counts[r.sensitive], None if hierarchies is None else hierarchies[i])
        failing.append((r.describe(), int(class_sizes[fails].sum())))
        failed |= fails
    return failed, tuple(failing)
