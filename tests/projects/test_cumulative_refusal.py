"""The refusal of a later delivery states the share the limit is judged on (anonlib.projects.linked)."""

from __future__ import annotations

import re

import pandas as pd

from anonlib.core.dataset import Dataset
from anonlib.measures.target import ReleaseTarget
from anonlib.projects.linked import cumulative_refusal


def _check(max_suppressed: float, loaded_persons: int):
    # 10 people, one record each: 6 share age 30, 4 are alone on their ages (failing k = 2)
    frame = pd.DataFrame({"pid": [f"p{i}" for i in range(10)], "age": [30] * 6 + [41, 52, 63, 74]})
    ds = Dataset.from_frame("d", frame, {"pid": "person", "age": "quasi-identifier"})
    target = ReleaseTarget(k=2, max_suppressed=max_suppressed)
    return target.check(ds, loaded_persons=loaded_persons, loaded_records=loaded_persons)


def _share(sentence: str) -> float:
    return float(re.search(r"(\d+(?:\.\d+)?)% of its people", sentence).group(1)) / 100


def test_the_share_stated_counts_those_suppressed_so_far_and_agrees_with_the_verdict():
    # 2 people suppressed earlier in the delivery (12 loaded, 10 left), 4 failing: 6 of 12 = 50%
    check = _check(0.4, loaded_persons=12)
    said = cumulative_refusal(check, "study")
    assert not check.met_after_suppression and check.share_after_suppression == 0.5
    assert "would take out 4 people (50% of its people with those suppressed so far), more than the limit" in said
    assert _share(said) > 0.4  # never a share under the limit said to be more (4 of 12 alone is 33%)
    check = _check(0.6, loaded_persons=12)
    said = cumulative_refusal(check, "study")
    assert check.met_after_suppression and _share(said) == 0.5 <= 0.6 and "would meet it" in said
    check = _check(0.3, loaded_persons=10)  # nothing suppressed so far: 4 of 10
    said = cumulative_refusal(check, "study")
    assert "suppressing them would take out 4 people (40% of its people), more than the limit of 30%" in said
