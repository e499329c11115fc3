"""Local suppression, microaggregation and top/bottom coding as steps of the working copy,
in recipes re-applied by ``python -m anonlib apply``, and the ``microaggregate`` command."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from anonlib.__main__ import main
from anonlib.core.dataset import Dataset
from anonlib.core.loading import load_table
from anonlib.core.samples import load_sample
from anonlib.workflow import Reading, ReleaseTarget, WorkingCopy, step_cost, step_from_json
from anonlib.workflow.local_steps import LocalSuppressionStep, MicroaggregationStep, TopBottomStep

QIS = ["age", "sex", "race", "education"]


def wildcard_recount(table: pd.DataFrame, qis, mark="*") -> np.ndarray:
    """Pairwise: records agreeing with each row wherever neither holds the mark (blanks are values)."""
    values = table[qis].astype(str).to_numpy()
    marked = table[qis].astype(object).eq(mark).to_numpy()
    out = np.empty(len(values), dtype=int)
    for i in range(len(values)):
        agree = (values == values[i]) | marked | marked[i]
        out[i] = int(agree.all(axis=1).sum())
    return out


def printed_json(capsys) -> dict:
    out = capsys.readouterr().out
    return json.loads(out[out.index("{") :])  # after the "written ..." line


def adult_file(tmp_path: Path, rows: int, name: str) -> Path:
    frame = load_sample("adult").frame.head(rows)[[*QIS, "hours-per-week", "occupation", "income"]]
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path


def loaded(path: Path) -> tuple[Dataset, Reading]:
    table = load_table(path)
    roles = {c: "quasi-identifier" for c in QIS}
    roles.update({"occupation": "sensitive", "income": "sensitive", "hours-per-week": "sensitive"})
    return Dataset.from_frame(path.name, table.frame, roles), Reading.of(table)


def recipe_with_local_suppression(tmp_path: Path, target_k: int = 5) -> tuple[Path, Path, WorkingCopy]:
    path = adult_file(tmp_path, 1500, "survey.csv")
    dataset, reading = loaded(path)
    copy = WorkingCopy.start(dataset, ReleaseTarget(k=target_k), reading=reading)
    copy = copy.apply(LocalSuppressionStep(tuple(QIS), 5, importance=("sex",)), "Release")
    recipe = tmp_path / "recipe.json"
    recipe.write_text(copy.recipe().dumps(), encoding="utf-8")
    return path, recipe, copy


def test_the_working_copy_meets_k_with_local_suppression_and_undo_restores_the_file(tmp_path):
    _, _, copy = recipe_with_local_suppression(tmp_path)
    released = copy.current.frame
    assert copy.loaded_check.failing_records > 0 and copy.check.met
    assert (wildcard_recount(released, QIS) >= 5).all()
    applied = copy.steps[0]
    marked = released[QIS].astype(object).eq("*").any(axis=1)
    assert applied.cost.records_changed == int(marked.sum()) < copy.loaded_check.failing_records
    assert any("records changed" in s for s in applied.cost.sentences())
    assert applied.suppressed_records == 0 and len(released) == len(copy.loaded.frame)
    for column in ("hours-per-week", "occupation", "income"):
        assert released[column].equals(copy.loaded.frame[column])
    assert copy.undo().current is copy.loaded
    # the cost is known before the step is applied, and equals what applying did
    before = step_cost(applied.step, copy.loaded)
    assert (before.records_changed, before.cells_changed) == (applied.cost.records_changed, applied.cost.cells_changed)


def test_a_recipe_with_local_suppression_gives_a_smaller_delivery_its_own_suppressions(tmp_path, capsys):
    path, recipe, copy = recipe_with_local_suppression(tmp_path)
    out = tmp_path / "same.csv"
    assert main(["apply", str(recipe), str(path), "--out", str(out)]) == 0
    assert "reproduces release yes" in capsys.readouterr().out

    delivery = adult_file(tmp_path, 600, "delivery.csv")
    released = tmp_path / "released.csv"
    assert main(["apply", str(recipe), str(delivery), "--out", str(released), "--json"]) == 0
    result = printed_json(capsys)
    assert result["met"] is True and result["failing_records"] == 0 and result["released_records"] == 600
    table = pd.read_csv(released, dtype=str, keep_default_na=False)
    assert (wildcard_recount(table, QIS) >= 5).all()
    own = LocalSuppressionStep(tuple(QIS), 5, importance=("sex",)).apply(loaded(delivery)[0].frame)
    assert table[QIS].eq("*").equals(own[QIS].astype(object).eq("*").reset_index(drop=True))
    first_rows = copy.current.frame.head(600)[QIS].astype(object).eq("*").reset_index(drop=True)
    assert not table[QIS].eq("*").equals(first_rows)  # recomputed, not the big file's cells

    strict, _ = tmp_path / "strict", None
    strict.mkdir()
    _, strict_recipe, _ = recipe_with_local_suppression(strict, target_k=8)
    assert main(["apply", str(strict_recipe), str(delivery)]) == 1
    printed = capsys.readouterr().out
    assert "result             Not met:" in printed and "failing            k = 8: " in printed


@pytest.mark.skipif(importlib.util.find_spec("duckdb") is None, reason="duckdb is not installed")
def test_an_engine_refuses_local_suppression_with_a_sentence(tmp_path, capsys):
    path, recipe, _ = recipe_with_local_suppression(tmp_path)
    assert main(["apply", str(recipe), str(path), "--engine", "duckdb"]) == 2
    err = capsys.readouterr().err
    assert "recomputed from all records together" in err and "without --engine" in err and "Traceback" not in err


def test_blanks_of_the_file_stay_values_and_are_not_suppressed_twice():
    frame = pd.DataFrame({"a": ["x", "x", None, None, "*"], "b": ["p", "p", "p", "p", "p"]})
    step = LocalSuppressionStep(("a", "b"), 2)
    out = step.apply(frame)
    # the two blanks match each other; the earlier '*' matches every record
    assert out["a"].isna().tolist() == [False, False, True, True, False] and out["a"].tolist()[4] == "*"
    assert out["a"].tolist()[:2] == ["x", "x"] and out["b"].eq("p").all()
    # the blanks are a value: with k = 3 each blank (2 records + the '*') still passes, x too
    assert LocalSuppressionStep(("a", "b"), 3).apply(frame)["a"].eq("*").sum() == 1
    # with k = 4 the x and blank records must give up a cell: b is the only column left to blank
    four = LocalSuppressionStep(("a", "b"), 4, importance=("b",)).apply(frame)
    assert four["a"].eq("*").sum() == 5 and four["a"].isna().sum() == 0
    dropped = LocalSuppressionStep(("a", "b"), 3, missing="drop").apply(frame)
    assert dropped["a"].isna().tolist()[2:4] == [True, True]  # left out of the release, never judged
    assert dropped["a"].eq("*").sum() + dropped["b"].eq("*").sum() >= 1


def test_microaggregation_and_coding_steps_in_the_working_copy_and_as_json():
    frame = load_sample("adult").frame.head(400)[["age", "hours-per-week", "sex"]]
    dataset = Dataset.from_frame(
        "d", frame, {"age": "quasi-identifier", "hours-per-week": "quasi-identifier", "sex": "quasi-identifier"}
    )
    top = TopBottomStep.from_data(frame, "age", top_quantile=0.95, bottom=20)
    mdav = MicroaggregationStep(("age", "hours-per-week"), 3)
    copy = WorkingCopy.start(dataset, ReleaseTarget(k=3)).apply(top, "Release").apply(mdav, "Release")
    assert copy.current.frame["age"].max() <= top.top
    sizes = copy.current.frame.groupby(["age", "hours-per-week"]).size()
    assert sizes.min() >= 3
    cost = copy.steps[1].cost
    assert cost.measures and cost.measures[0][0] == "information loss (SSE/SST)" and 0 < cost.measures[0][1] < 1
    assert top.describe() == f"age top-coded at {top.top:g} and bottom-coded at 20"
    for step in (top, mdav, LocalSuppressionStep(("age",), 2, importance=("age",), missing="drop")):
        assert step_from_json(json.loads(json.dumps(step.to_json()))) == step


def test_damaged_step_entries_are_one_sentence():
    from anonlib.core.errors import RecipeError

    for data in (
        {
            "kind": "local_suppression",
            "quasi_identifiers": [],
            "k": 5,
            "importance": [],
            "count": None,
            "missing": "category",
        },
        {"kind": "microaggregation", "columns": ["a"], "k": 2, "count": None, "statistic": "mode"},
        {"kind": "top_bottom", "column": "a", "top": None, "bottom": None},
    ):
        with pytest.raises(RecipeError, match="The recipe is damaged"):
            step_from_json(data)


def test_microaggregate_command_writes_the_table_and_reports_the_loss(tmp_path, capsys):
    path = adult_file(tmp_path, 300, "survey.csv")
    out = tmp_path / "micro.csv"
    assert (
        main(["microaggregate", str(path), "--columns", "age,hours-per-week", "--k", "4", "--out", str(out), "--json"])
        == 0
    )
    result = printed_json(capsys)
    table = pd.read_csv(out)
    sizes = table.groupby(["age", "hours-per-week"]).size()  # groups of equal records may share values
    assert len(table) == 300 and sizes.min() >= 4 and len(sizes) <= result["groups"]
    assert result["smallest_group"] >= 4 and result["largest_group"] <= 7 and 0 < result["information_loss"] < 1
    assert np.isclose(table["age"].mean(), pd.read_csv(path)["age"].mean())
    assert main(["microaggregate", str(path), "--columns", "sex", "--k", "4"]) == 2
    assert "not a numeric column" in capsys.readouterr().err
