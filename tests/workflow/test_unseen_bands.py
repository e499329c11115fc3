"""A recipe's equal-width bands cover a later delivery's numbers past their range, in memory and on
DuckDB alike (anonlib.workflow.unseen; contract: numeric recipe steps never refuse a number)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from anonlib.core.dataset import Dataset
from anonlib.workflow import ReleaseTarget, WorkingCopy
from anonlib.workflow.engine_replay import apply_recipe
from anonlib.workflow.recipe import read_for_recipe
from anonlib.workflow.steps import BandsStep
from anonlib.workflow.unseen import cover_recipe

LABEL = re.compile(r"^(-?\d+)(?:-(-?\d+))?$")


def test_numbers_past_the_bands_range_get_bands_of_the_grid_and_are_counted(tmp_path):
    first = pd.DataFrame({"age": [31, 35, 38, 44, 41]})
    ds = Dataset.from_frame("d.csv", first, {"age": "quasi-identifier"})
    recipe = WorkingCopy.start(ds, ReleaseTarget(k=1)).apply(BandsStep("age", 10, 1, 31, 44, True), "x").recipe()
    later = pd.DataFrame({"age": np.random.default_rng(2).integers(0, 120, 400)})
    later.to_csv(tmp_path / "n.csv", index=False)
    dataset, _ = read_for_recipe(recipe, tmp_path / "n.csv")
    covered, seen = cover_recipe(recipe, dataset)
    outside = ~later["age"].between(31, 44)
    (entry,) = seen
    assert (entry.column, entry.placed, entry.records) == ("age", "band", int(outside.sum()))
    assert set(entry.values) == {str(v) for v in later.loc[outside, "age"]}
    released = covered.replay(dataset).table["age"].astype(str).tolist()
    for label, age in zip(released, later["age"]):  # each label holds its age, on the same grid of width 10
        low, high = LABEL.match(label).groups()
        low, high = int(low), int(high or low)
        assert low <= age <= high
        assert low % 10 == 0 or low == later["age"].min()  # the grid's bands, cut only at the data's ends
        assert (high + 1) % 10 == 0 or high == later["age"].max()
    replay = apply_recipe(recipe, tmp_path / "n.csv", out=tmp_path / "out.csv")
    assert replay.unseen == seen
    on_engine = sorted(pd.read_csv(tmp_path / "out.csv", dtype=str)["age"])
    assert on_engine == sorted(released)
