"""The contract's functions (a table's α, l, t, δ, β in one call each) and every model
at once for the pages, the report and the command line (``model_values``, ``model_table``)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...core.cells import is_number_column
from ...core.equivalence import encode
from ...core.errors import EmptySelectionError
from ...core.numbers import whole_number
from .per_class import (
    HierarchyLevels,
    class_alpha,
    class_beta,
    class_delta,
    class_distinct,
    class_entropy,
    class_recursive_c,
    class_t,
    distance_kind,
    hierarchy_levels,
    worst,
)
from .requirements import ModelRequirement, checked_requirements, class_passes
from .summaries import (
    MODEL_NAMES,
    SensitiveCounts,
    checked_columns,
    counts_from_table,
    sensitive_counts,
)

# --------------------------------------------------------------------------- the contract's functions


def alpha(df: pd.DataFrame, quasi_identifiers: Sequence[str], sensitive: str, *, count: str | None = None) -> float:
    """α of (α,k)-anonymity: the largest share of one sensitive value in a class (Wong et al. 2006).

    >>> alpha(pd.DataFrame({"zip": [1, 1, 1, 2], "dx": ["a", "a", "b", "b"]}), ["zip"], "dx")
    1.0
    """
    s = sensitive_counts(df, quasi_identifiers, sensitive, count=count)
    return worst(class_alpha(s), s)


def l_diversity(df: pd.DataFrame, quasi_identifiers: Sequence[str], sensitive: str, *, count: str | None = None) -> int:
    """Distinct l-diversity: the fewest distinct sensitive values in a class (Machanavajjhala et al. 2007).

    >>> l_diversity(pd.DataFrame({"zip": [1, 1, 1, 2], "dx": ["a", "a", "b", "b"]}), ["zip"], "dx")
    1
    """
    s = sensitive_counts(df, quasi_identifiers, sensitive, count=count)
    return int(worst(class_distinct(s).astype(np.float64), s, largest=False))


def entropy_l_diversity(
    df: pd.DataFrame, quasi_identifiers: Sequence[str], sensitive: str, *, count: str | None = None
) -> float:
    """Entropy l-diversity: exp of the smallest class entropy (natural log), not floored;
    the table is entropy-l-diverse for every l up to it (Machanavajjhala et al. 2007, Def. 4.1).

    >>> entropy_l_diversity(pd.DataFrame({"zip": [1, 1, 1, 1], "dx": list("aabb")}), ["zip"], "dx")
    2.0
    """
    s = sensitive_counts(df, quasi_identifiers, sensitive, count=count)
    return float(np.exp(worst(class_entropy(s), s, largest=False)))


def recursive_c(
    df: pd.DataFrame, quasi_identifiers: Sequence[str], sensitive: str, l: int, *, count: str | None = None
) -> float:
    """Recursive (c,l)-diversity for a given l: the largest r1 / (r_l + ... + r_m) over
    classes, counts sorted decreasing (Machanavajjhala et al. 2007, Def. 4.2). The table
    is recursive (c,l)-diverse for every c above it; infinite when a class has fewer than l values.

    >>> df = pd.DataFrame({"zip": [1] * 10, "dx": list("aaaaabbbcc")})
    >>> recursive_c(df, ["zip"], "dx", 2), recursive_c(df, ["zip"], "dx", 3)
    (1.0, 2.5)
    """
    s = sensitive_counts(df, quasi_identifiers, sensitive, count=count)
    return worst(class_recursive_c(s, l), s)


def t_closeness(
    df: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    sensitive: str,
    *,
    hierarchy: pd.DataFrame | None = None,
    count: str | None = None,
    distance: str | None = None,
) -> float:
    """t of t-closeness: the largest Earth Mover's Distance between a class's and the
    table's distribution of ``sensitive`` (Li, Li & Venkatasubramanian 2007).

    Numbers use the ordered distance, other values the equal distance, and an
    ARX-layout ``hierarchy`` the hierarchical distance; ``distance`` overrides.

    >>> df = pd.DataFrame({"zip": [1, 1, 2, 2], "dx": ["a", "b", "a", "a"]})
    >>> t_closeness(df, ["zip"], "dx")
    0.25
    """
    s = sensitive_counts(df, quasi_identifiers, sensitive, count=count)
    levels = None if hierarchy is None else hierarchy_levels(hierarchy, s.labels, sensitive)
    return worst(class_t(s, distance, levels), s)


def delta_disclosure(
    df: pd.DataFrame, quasi_identifiers: Sequence[str], sensitive: str, *, count: str | None = None
) -> float:
    """δ of δ-disclosure privacy: the largest abs(ln(p_class(s) / p_table(s))) over classes
    and the values present in them (Brickell & Shmatikov 2008).

    >>> round(delta_disclosure(pd.DataFrame({"zip": [1, 1, 2, 2], "dx": ["a", "b", "a", "a"]}), ["zip"], "dx"), 4)
    0.6931
    """
    s = sensitive_counts(df, quasi_identifiers, sensitive, count=count)
    return worst(class_delta(s), s)


def beta_likeness(
    df: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    sensitive: str,
    *,
    count: str | None = None,
    enhanced: bool = False,
) -> float:
    """β of β-likeness: the largest relative gain (p_class - p) / p over values with
    p_class > p (Cao & Karras 2012). ``enhanced``: the same, or infinite when some
    gain exceeds -ln p (enhanced β-likeness caps each value's gain there, so no β is met).

    >>> df = pd.DataFrame({"zip": [1, 1, 2, 2], "dx": ["a", "b", "a", "a"]})
    >>> beta_likeness(df, ["zip"], "dx"), beta_likeness(df, ["zip"], "dx", enhanced=True)
    (1.0, inf)
    """
    s = sensitive_counts(df, quasi_identifiers, sensitive, count=count)
    return worst(class_beta(s, enhanced), s)


# --------------------------------------------------------------------------- every model at once (pages, report, CLI)


@dataclass(frozen=True)
class ModelValues:
    """Every model's value for one sensitive attribute (the table's worst class).

    ``recursive_c`` is for ``recursive_l``; ``t_distance`` says which distance t used;
    ``enhanced_beta`` is infinite when some gain exceeds its -ln p cap.
    """

    sensitive: str
    records: int
    classes: int
    values: int
    k: int
    alpha: float
    distinct_l: int
    entropy_l: float
    recursive_l: int
    recursive_c: float
    t: float | None
    t_distance: str
    delta: float
    beta: float
    enhanced_beta: float

    def as_dict(self) -> dict[str, object]:
        """Plain values for JSON (infinity as the text "inf").

        >>> model_values(pd.DataFrame({"z": [1, 1], "s": ["a", "b"]}), ["z"], "s").as_dict()["distinct_l"]
        2
        """
        return {k: ("inf" if isinstance(v, float) and math.isinf(v) else v) for k, v in self.__dict__.items()}


def model_values(
    df: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    sensitive: str,
    *,
    count: str | None = None,
    recursive_l: int = 2,
    hierarchy: pd.DataFrame | None = None,
    engine=None,
) -> ModelValues:
    """Every model of one sensitive attribute from one pass of the counting kernel.
    t is None when the attribute has a single value (t-closeness needs two).
    ``df`` may also be a path or a table on a data engine (``anonlib.engine``), or
    ``engine="duckdb"``/``"spark"`` be given: the cells are then counted there.

    >>> v = model_values(pd.DataFrame({"zip": [1, 1, 2, 2], "dx": ["a", "b", "a", "a"]}), ["zip"], "dx")
    >>> v.k, v.alpha, v.distinct_l, v.t, v.t_distance
    (2, 1.0, 1, 0.25, 'equal')
    """
    if engine is not None or not isinstance(df, pd.DataFrame):  # the cells from one group-by on the engine
        from ...engine import WEIGHT, as_engine_table, summary_frame

        cells, _ = summary_frame(as_engine_table(df, engine), [*quasi_identifiers, sensitive], count=count)
        return model_values(
            cells, list(quasi_identifiers), sensitive, count=WEIGHT, recursive_l=recursive_l, hierarchy=hierarchy
        )
    s = sensitive_counts(df, quasi_identifiers, sensitive, count=count)
    levels = None if hierarchy is None else hierarchy_levels(hierarchy, s.labels, sensitive)
    return _values_of(s, sensitive, recursive_l, levels)


def _values_of(s: SensitiveCounts, sensitive: str, recursive_l: int, levels: HierarchyLevels | None) -> ModelValues:
    distance = distance_kind(s, None, levels)
    recursive_l = whole_number(recursive_l, "l of recursive (c,l)-diversity", minimum=1, maximum=None)
    return ModelValues(
        sensitive=sensitive,
        records=s.records,
        classes=int(s.present.sum()),
        values=int((s.value_totals > 0).sum()),
        k=int(worst(s.class_sizes.astype(np.float64), s, largest=False)),
        alpha=worst(class_alpha(s), s),
        distinct_l=int(worst(class_distinct(s).astype(np.float64), s, largest=False)),
        entropy_l=float(np.exp(worst(class_entropy(s), s, largest=False))),
        recursive_l=recursive_l,
        recursive_c=worst(class_recursive_c(s, recursive_l), s),
        t=worst(class_t(s, distance, levels), s) if s.n_values >= 2 else None,
        t_distance=distance,
        delta=worst(class_delta(s), s),
        beta=worst(class_beta(s), s),
        enhanced_beta=worst(class_beta(s, enhanced=True), s),
    )


# the ModelValues field of each model, in the order tables list them
_VALUE_FIELDS = {
    "alpha": "alpha",
    "distinct_l": "distinct_l",
    "entropy_l": "entropy_l",
    "recursive_cl": "recursive_c",
    "t_closeness": "t",
    "delta_disclosure": "delta",
    "beta_likeness": "beta",
    "enhanced_beta_likeness": "enhanced_beta",
}
MODEL_TABLE_COLUMNS = ("sensitive", "model", "name", "value", "required", "failing_records")


def model_table(
    df: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    sensitive: Sequence[str],
    *,
    count: str | None = None,
    requirements: Iterable[ModelRequirement] = (),
    recursive_l: int = 2,
    hierarchies: Mapping[str, pd.DataFrame] | None = None,
) -> pd.DataFrame:
    """Per sensitive attribute, every model's value (the table's worst class) and, for the
    models switched on in ``requirements`` (a release target's), the records in classes
    failing them: the Dataset page's table and the report's. One row per attribute and
    model; columns ``sensitive``, ``model`` (key), ``name``, ``value`` (recursive (c,l): c
    for the required l, else for ``recursive_l``; t: None with a single value; β may be
    infinite), ``required`` (the requirement in words, "" when not switched on) and
    ``failing_records`` (<NA> when not switched on). ``hierarchies`` maps a sensitive
    attribute to its ARX hierarchy (hierarchical t-closeness; a requirement's own wins).

    >>> df = pd.DataFrame({"zip": [1, 1, 1, 2, 2], "dx": ["a", "b", "c", "a", "a"]})
    >>> t = model_table(df, ["zip"], ["dx"], requirements=[ModelRequirement("distinct_l", "dx", 2)])
    >>> t.loc[t["model"] == "distinct_l", ["value", "required", "failing_records"]].values.tolist()
    [[1, 'distinct 2-diversity of dx', 2]]
    >>> int(t["failing_records"].isna().sum())  # the models not switched on
    7
    """
    if isinstance(sensitive, str):
        sensitive = [sensitive]
    sensitive = list(dict.fromkeys(sensitive))
    requirements = checked_requirements(requirements)
    unknown = [r.sensitive for r in requirements if r.sensitive not in sensitive]
    sensitive += list(dict.fromkeys(unknown))
    if not sensitive:
        raise EmptySelectionError("Mark at least one sensitive attribute to see its privacy models.")
    qis = checked_columns(df, quasi_identifiers, sensitive, count)
    table = encode(df, [*qis, *sensitive], count=count)
    classes = table.classes(qis)
    hierarchies = dict(hierarchies or {})
    rows: list[dict[str, object]] = []
    for attribute in sensitive:
        s = counts_from_table(table, classes, attribute, is_number_column(df[attribute]))
        required = {r.model: r for r in requirements if r.sensitive == attribute}
        t_rule = required.get("t_closeness")
        hierarchy = (
            t_rule.hierarchy if t_rule is not None and t_rule.hierarchy is not None else hierarchies.get(attribute)
        )
        levels = None if hierarchy is None else hierarchy_levels(hierarchy, s.labels, attribute)
        l_rule = required.get("recursive_cl")
        values = _values_of(s, attribute, int(l_rule.value) if l_rule is not None else recursive_l, levels)
        for model, field_name in _VALUE_FIELDS.items():
            rule = required.get(model)
            failing = pd.NA
            if rule is not None:
                fails = ~class_passes(rule, s, levels if model == "t_closeness" else None)
                failing = int(s.class_sizes[fails].sum())
            rows.append(
                {
                    "sensitive": attribute,
                    "model": model,
                    "name": MODEL_NAMES[model],
                    "value": getattr(values, field_name),
                    "required": "" if rule is None else rule.describe(),
                    "failing_records": failing,
                }
            )
    out = pd.DataFrame(rows, columns=list(MODEL_TABLE_COLUMNS))
    out["value"] = pd.Series([r["value"] for r in rows], dtype=object)  # l stays a whole number
    out["failing_records"] = out["failing_records"].astype("Int64")
    return out
