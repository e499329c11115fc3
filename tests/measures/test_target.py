"""The release target's check reads the encoding its acceptance run made (``result.encoded``,
which also holds the sensitive columns) to name the failing classes: on random tables, with a
count column, missing values and a person column, the classes it names are those a fresh
encoding of the quasi-identifiers alone names."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from anonlib.measures.models import ModelRequirement, acceptance
from anonlib.measures.target import _failing_classes


@st.composite
def tables(draw):
    rows = draw(st.integers(1, 60))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    frame = pd.DataFrame(
        {
            "zip": rng.choice(["100", "101", "102", None], rows),
            "age": rng.choice([30.0, 41.0, 52.0, np.nan], rows),
            "dx": rng.choice(["flu", "copd", "asthma"], rows),
            "n": rng.integers(1, 4, rows),
            "pid": rng.choice([f"p{i}" for i in range(max(rows // 2, 1))], rows),
        }
    )
    return frame, draw(st.integers(1, 5)), draw(st.booleans()), draw(st.booleans()), draw(st.booleans())


@settings(max_examples=120, deadline=None)
@given(tables())
def test_the_failing_classes_read_from_the_acceptance_encoding_are_those_of_a_fresh_one(case):
    frame, k, with_count, with_person, with_model = case
    qis = ["zip", "age"]
    count = "n" if with_count and not with_person else None
    person = "pid" if with_person else None
    requirements = [ModelRequirement("distinct_l", "dx", 2)] if with_model else []
    result = acceptance(frame, qis, k=k, requirements=requirements, count=count, person=person)
    failing_rows = ~np.asarray(result.kept, dtype=bool)
    reused = _failing_classes(frame, qis, count, failing_rows, person, result.encoded)
    fresh = _failing_classes(frame, qis, count, failing_rows, person)
    assert reused == fresh
    assert reused[0] == 0 or reused[1]  # failing classes are named, none when nothing fails
