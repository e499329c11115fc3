"""The risk report states the kept columns with what an attacker who knows them finds."""

from __future__ import annotations

import numpy as np
import pandas as pd

from anonlib.core.dataset import Dataset
from anonlib.workflow import ReleaseTarget, WorkingCopy
from anonlib.workflow.report import copy_report


def test_the_report_counts_records_unique_once_the_kept_columns_are_added():
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"age": rng.integers(30, 36, 80), "born": rng.integers(1950, 1960, 80), "dx": "a"})
    ds = Dataset.from_frame("d", frame, {"age": "quasi-identifier", "born": "keep", "dx": "sensitive"})
    report = copy_report(WorkingCopy.start(ds, ReleaseTarget(k=2)))
    alone = int((frame.groupby(["age", "born"])["age"].transform("size") == 1).sum())
    expected = (
        f"Kept unchanged, not counted by the target: born; with them an attacker finds {alone} of 80 records unique."
    )
    assert report.sentences[-1] == expected and alone > 0
    without = Dataset.from_frame("d", frame, {"age": "quasi-identifier", "born": "ignore", "dx": "sensitive"})
    assert not any("Kept unchanged" in s for s in copy_report(WorkingCopy.start(without, ReleaseTarget(k=2))).sentences)
