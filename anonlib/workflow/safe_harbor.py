"""Safe Harbor beside expert determination: the risk left after HIPAA Safe Harbor and
after the least-loss generalization meeting k, measured the same way on each release.

``compare_routes(dataset, step, target=...)`` takes the loaded dataset and a
``SafeHarborStep`` and measures two releases of the same records on the same
quasi-identifiers (the dataset's own, and every column Safe Harbor generalizes:
ZIP codes, dates, ages, birth years; none it removes):

- **Safe Harbor**: the step applied, nothing suppressed;
- **optimal generalization** (the expert-determination route): the
  generalization with the least loss meeting k on the original values
  (``anonlib.transformations.generalization.search(..., method="optimal")`` with default
  hierarchies, ``anonlib.core.default_hierarchy``), the records still failing k
  suppressed up to ``max_suppressed``.

For each: records released, k, prosecutor risk (highest 1/k and average
classes/records), the records in classes smaller than k, records suppressed and
the information lost: the non-uniform entropy of every quasi-identifier
(``anonlib.core.metrics.nonuniform_entropy``, a suppressed record counted as
``*``) divided by its value when every value is replaced by ``*`` (0 = nothing
lost, 1 = everything). Every number is measured on the released table.

Example:
    >>> import pandas as pd
    >>> from anonlib.core.dataset import Dataset
    >>> from anonlib.workflow.health_steps import SafeHarborStep
    >>> df = pd.DataFrame({"age": [30, 30, 95, 96, 31, 45], "sex": list("ffmmff")})
    >>> ds = Dataset.from_frame("d", df, {"age": "quasi-identifier", "sex": "quasi-identifier"})
    >>> step = SafeHarborStep.planned(df, reference_year=2024)
    >>> c = compare_routes(ds, step, target=ReleaseTarget(k=2))
    >>> c.safe_harbor.k, c.safe_harbor.records_below_k, c.optimal.k >= 2
    (1, 2, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from ..core.dataset import Dataset, Role
from ..core.default_hierarchy import default_hierarchy
from ..core.equivalence import encode
from ..core.errors import AnonlibError, EmptySelectionError
from ..core.hierarchy import SUPPRESSED
from ..core.metrics import nonuniform_entropy
from ..measures.target import ReleaseTarget
from ..transformations.generalization import release_search
from .health_steps import SafeHarborStep
from .steps import GeneralizationStep, SuppressionStep

DEFAULT_TIME_LIMIT = 30.0  # seconds for the optimal search; past it, the best found (said)
_GENERALIZED = ("zip3", "year", "birth_date", "birth_year", "age")


@dataclass(frozen=True)
class RouteRisk:
    """One release's remaining risk and loss, measured on the released table."""

    route: str
    records: int
    k: int
    prosecutor_highest: float
    prosecutor_average: float
    records_below_k: int
    suppressed: int
    loss: float
    detail: str

    def to_json(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class SafeHarborComparison:
    """Safe Harbor's release beside the optimal generalization's, at target ``k``;
    ``optimal`` is None when the search could not run (``problem`` says why)."""

    quasi_identifiers: tuple[str, ...]
    k: int
    safe_harbor: RouteRisk
    optimal: RouteRisk | None
    problem: str | None = None

    def table(self) -> pd.DataFrame:
        """The two routes side by side, one row each, as a page shows them."""
        routes = [r for r in (self.safe_harbor, self.optimal) if r is not None]
        return pd.DataFrame(
            {
                "route": [r.route for r in routes],
                "records released": [r.records for r in routes],
                "k": [r.k for r in routes],
                "prosecutor: highest": [r.prosecutor_highest for r in routes],
                "prosecutor: average": [r.prosecutor_average for r in routes],
                f"records in classes < {self.k}": [r.records_below_k for r in routes],
                "records suppressed": [r.suppressed for r in routes],
                "information lost (0-1)": [r.loss for r in routes],
                "what changed": [r.detail for r in routes],
            }
        )

    def sentences(self) -> tuple[str, ...]:
        """The comparison in words."""
        sh = self.safe_harbor
        out = [
            f"After Safe Harbor, k = {sh.k} on {', '.join(self.quasi_identifiers)}: {sh.records_below_k:,} of "
            f"{sh.records:,} records are in classes smaller than {self.k} (highest prosecutor risk "
            f"{100 * sh.prosecutor_highest:.1f}%), with {100 * sh.loss:.1f}% of the information lost."
        ]
        if self.optimal is not None:
            op = self.optimal
            out.append(
                f"The optimal generalization meeting k = {self.k} (expert determination) releases {op.records:,} "
                f"records with k = {op.k} ({op.suppressed:,} suppressed), losing {100 * op.loss:.1f}%."
            )
        elif self.problem:
            out.append(f"The optimal generalization could not be computed: {self.problem}")
        return tuple(out)

    def to_json(self) -> dict[str, object]:
        return {
            "quasi_identifiers": list(self.quasi_identifiers),
            "k_target": self.k,
            "safe_harbor": self.safe_harbor.to_json(),
            "optimal": None if self.optimal is None else self.optimal.to_json(),
            "optimal_problem": self.problem,
        }


def comparison_quasi_identifiers(dataset: Dataset, step: SafeHarborStep) -> tuple[str, ...]:
    """The quasi-identifiers both routes are judged on: the dataset's, and every column
    Safe Harbor generalizes (not those it removes), in the file's order."""
    generalized = {c.column for c in step.changes if c.action in _GENERALIZED}
    removed = set(step.withholds)
    wanted = (set(dataset.quasi_identifiers) | generalized) - removed
    return tuple(str(c) for c in dataset.frame.columns if c in wanted and c != dataset.count)


def _route(
    route: str, original: pd.DataFrame, released: pd.DataFrame, qis: Sequence[str], k: int, count, detail: str
) -> RouteRisk:
    """The risk and loss of ``released`` (rows of ``original`` by index; missing rows suppressed)."""
    if released.empty:
        sizes = np.zeros(0, dtype=np.int64)
    else:
        sizes = encode(released, list(qis), count=count).classes().sizes
    weights = np.ones(len(original)) if count is None else original[count].to_numpy(dtype=float)
    records = int(sizes.sum())
    kept = original.index.isin(released.index)
    lost = total = 0.0
    for column in qis:
        before = original[column].astype(str).to_numpy(dtype=object)
        after = np.full(len(original), SUPPRESSED, dtype=object)
        after[kept] = released[column].reindex(original.index[kept]).astype(str).to_numpy(dtype=object)
        lost += nonuniform_entropy(before, after, count=None if count is None else weights.astype(np.int64))
        total += nonuniform_entropy(
            before,
            np.full(len(original), SUPPRESSED, dtype=object),
            count=None if count is None else weights.astype(np.int64),
        )
    present = sizes[sizes > 0]
    return RouteRisk(
        route=route,
        records=records,
        k=int(present.min()) if present.size else 0,
        prosecutor_highest=float(1.0 / present.min()) if present.size else 0.0,
        prosecutor_average=float(present.size / records) if records else 0.0,
        records_below_k=int(present[present < k].sum()),
        suppressed=int(weights.sum() - records),
        loss=float(lost / total) if total > 0 else 0.0,
        detail=detail,
    )


def compare_routes(
    dataset: Dataset,
    step: SafeHarborStep,
    *,
    target: ReleaseTarget,
    time_limit: float | None = DEFAULT_TIME_LIMIT,
) -> SafeHarborComparison:
    """Safe Harbor's release of ``dataset`` beside the optimal generalization's for ``target``
    (module text; both judged in records)."""
    k = target.k
    qis = comparison_quasi_identifiers(dataset, step)
    if not qis:
        raise EmptySelectionError(
            "There is no quasi-identifier to judge the release on: mark the columns an attacker could know."
        )
    count = dataset.count
    original = dataset.frame[[*qis, *([count] if count else [])]]
    applied = step.apply(dataset.frame)[[*qis, *([count] if count else [])]]
    changed = ", ".join(c.column for c in step.changes if c.column in qis) or "none of them"
    harbor = _route("Safe Harbor", original, applied, qis, k, count, f"Safe Harbor generalized {changed}")
    optimal, problem = None, None
    try:
        optimal = _optimal(original, qis, target, count, time_limit)
    except AnonlibError as err:
        problem = str(err)
    return SafeHarborComparison(tuple(qis), k, harbor, optimal, problem)


def _optimal(original: pd.DataFrame, qis, target: ReleaseTarget, count, time_limit) -> RouteRisk:
    counts = original[count].to_numpy() if count else None
    hierarchies = {a: default_hierarchy(original[a], a, counts=counts)[1] for a in qis}
    frame = original.reset_index(drop=True)
    result = release_search(frame, list(qis), hierarchies, "optimal", target=target, count=count, time_limit=time_limit)
    generalize = GeneralizationStep.from_search(result, hierarchies)
    released = generalize.apply(original)
    roles = {c: Role.QUASI_IDENTIFIER for c in qis} | ({count: Role.COUNT} if count else {})
    ds = Dataset(name="optimal", frame=released, roles=roles).validated()
    suppress = SuppressionStep.from_target(target, ds)
    kept = suppress.kept(released)
    proof = (
        "" if result.optimal is None else (", proven optimal" if result.optimal else ", best found in the time limit")
    )
    detail = generalize.describe() + proof
    return _route(
        "optimal generalization (expert determination)", original, released[kept], qis, target.k, count, detail
    )
