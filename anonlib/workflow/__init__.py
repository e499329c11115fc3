"""From risk picture to a defensible release (``workflow.md``).

- ``target``: the release target (k, privacy models, suppression limit) and
  its check in records;
- ``steps``: the transformations pages apply (bands, generalization, frontier
  policy, geographic aggregation, suppression), as data that can be re-applied;
- ``local_steps``: local suppression, microaggregation, top and bottom coding;
- ``cost``: what a step costs on the data, said before it is applied;
- ``history``: the working copy (loaded file + steps, undo, reset);
- ``recipe``: the JSON that re-applies a release without the app;
- ``release``: the released table and its one CSV writer;
- ``package``: the zip with the released table, the report and the recipe, stating what it is;
- ``verify``: re-checking a package (digests, the target, the reproduction).

Example:
    >>> import pandas as pd
    >>> from anonlib.core.dataset import Dataset
    >>> ds = Dataset.from_frame("d", pd.DataFrame({"age": [31, 35, 38, 44]}), {"age": "quasi-identifier"})
    >>> copy = WorkingCopy.start(ds, ReleaseTarget(k=2)).apply(BandsStep("age", 10, 1, 31, 44, True), "Individual privacy")
    >>> copy.apply(SuppressionStep.from_target(copy.target, copy.current), "Sidebar").check.met
    False
    >>> copy = WorkingCopy.start(ds, ReleaseTarget(k=2, max_suppressed=0.25))
    >>> copy = copy.apply(BandsStep("age", 10, 1, 31, 44, True), "Individual privacy")
    >>> copy.apply(SuppressionStep.from_target(copy.target, copy.current), "Sidebar").check.sentence()
    'Met: all 3 records are in classes meeting k = 2. 1 record (25%) suppressed so far.'
"""

from ..measures.target import ReleaseTarget, TargetCheck
from .cost import ColumnChange, StepCost, default_choice, step_cost
from .history import AppliedStep, WorkingCopy
from .local_steps import LocalSuppressionStep, MicroaggregationStep, TopBottomStep
from .package import ReleaseStatement, release_package
from .recipe import Reading, Recipe, RecipeStep, Replay, Source, apply_recipe, read_recipe
from .release import default_release_columns, release_csv, release_table
from .steps import (
    AggregationStep,
    AttributeIntervals,
    BandsStep,
    GeneralizationStep,
    PolicyStep,
    Step,
    SuppressionStep,
    step_from_json,
)
from .verify import PartCheck, Verification, verify_package

__all__ = [
    "AggregationStep",
    "AppliedStep",
    "AttributeIntervals",
    "BandsStep",
    "ColumnChange",
    "GeneralizationStep",
    "LocalSuppressionStep",
    "MicroaggregationStep",
    "PartCheck",
    "PolicyStep",
    "Reading",
    "Recipe",
    "RecipeStep",
    "ReleaseStatement",
    "ReleaseTarget",
    "Replay",
    "Source",
    "Step",
    "StepCost",
    "TopBottomStep",
    "Verification",
    "verify_package",
    "SuppressionStep",
    "TargetCheck",
    "WorkingCopy",
    "apply_recipe",
    "default_choice",
    "default_release_columns",
    "read_recipe",
    "release_csv",
    "release_package",
    "release_table",
    "step_cost",
    "step_from_json",
]
