"""Blanks are a value like any other in histories and across deliveries (``anonlib.core.histories``):
random two-delivery panels with a blank possible in every quasi-identifier, judged by the kernel as
the release target judges them (the earlier delivery as ``Earlier``, the owners coded jointly), and
recounted by pandas with each blank filled by a marker no value takes."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonlib.core.equivalence import encode
from anonlib.core.errors import AnonlibError, ColumnError
from anonlib.core.histories import Earlier, joint_codes, owners_sharing, released_classes

BLANK = "<blank>"  # the recount's marker: the drawn values are letters and digits only


@st.composite
def panels(draw):
    """Two deliveries of one panel: a person column (never blank), a text and a numeric
    quasi-identifier, each blank anywhere, as ``load_table`` reads them (string and float dtypes)."""
    rows = []
    for delivery in (0, 1):
        n = draw(st.integers(0, 25))
        for _ in range(n):
            rows.append(
                (
                    delivery,
                    f"p{draw(st.integers(0, 7))}",
                    draw(st.sampled_from(["a", "b", None])),
                    draw(st.sampled_from([1.0, 2.5, None])),
                )
            )
    frame = pd.DataFrame(rows, columns=["delivery", "pid", "city", "age"])
    frame["pid"] = frame["pid"].astype("string")
    frame["city"] = frame["city"].astype("string")
    frame["age"] = frame["age"].astype("float64")
    return frame


def kernel_sharing(frame: pd.DataFrame, power: int | None) -> dict[str, int]:
    """Per person, the people sharing their cumulative history, as the target computes it."""
    first = frame[frame["delivery"] == 0].reset_index(drop=True)
    new = frame[frame["delivery"] == 1].reset_index(drop=True)
    earlier = Earlier.of([(first, ["city", "age"], None)], ["pid"])
    new_codes, old_codes, n_people = joint_codes(new["pid"], earlier, "pid")
    new_classes = encode(new, ["city", "age"]).classes().ids if len(new) else np.zeros(0, dtype=np.int64)
    offset = int(new_classes.max()) + 1 if len(new_classes) else 0
    old_classes = pd.factorize(pd.Series(earlier.classes, dtype=object))[0] + offset
    ids = np.concatenate([new_classes, old_classes]).astype(np.int64)
    owners = np.concatenate([new_codes, old_codes]).astype(np.int64)
    sharing = owners_sharing(ids, int(ids.max()) + 1 if len(ids) else 1, owners, n_people, power=power)
    names = pd.concat([new["pid"], pd.Series(earlier.owners["pid"])], ignore_index=True)
    return {str(p): int(sharing[o]) for p, o in zip(names, owners)}


def pandas_sharing(frame: pd.DataFrame, power: int | None) -> dict[str, int]:
    """The same by pandas: each record (delivery, city, age) with blanks filled by a marker, a
    person's history the Counter of their records."""
    filled = frame.astype({"city": object, "age": object}).fillna(BLANK)
    histories = {str(p): Counter(zip(g["delivery"], g["city"], g["age"].astype(str))) for p, g in filled.groupby("pid")}
    out = {}
    for person, h in histories.items():
        if power is None:
            out[person] = sum(1 for g in histories.values() if g == h)
        else:  # power 1: the fewest people sharing one of the person's records
            out[person] = min(sum(1 for g in histories.values() if g[r]) for r in h)
    return out


@settings(max_examples=150, deadline=None)
@given(panels(), st.sampled_from([None, 1]))
def test_cumulative_histories_with_blanks_equal_a_pandas_recount(frame, power):
    if frame.empty:
        return
    assert kernel_sharing(frame, power) == pandas_sharing(frame, power)


def test_a_blank_is_its_own_class_and_never_another_value():
    frame = pd.DataFrame(
        {
            "city": pd.array(["a", None, None, "nan", "<NA>"], dtype="string"),
            "age": [1.0, np.nan, np.nan, 1.0, 1.0],
        }
    )
    classes = released_classes(frame, ["city", "age"])
    assert pd.factorize(classes)[0].tolist() == [0, 1, 1, 2, 3]  # the two blank rows together, "nan" apart


def test_earlier_delivery_with_blanks_is_judged_with_a_later_one():
    first = pd.DataFrame({"pid": pd.array(["x", "y"], dtype="string"), "res": pd.array([None, "n"], dtype="string")})
    earlier = Earlier.of([(first, ["res"], None)], ["pid"])
    assert sorted(earlier.classes.tolist()) == ["0\x1f0", "0\x1f1"]  # the blank a class of its own
    new, old, n = joint_codes(pd.Series(["y", "z"], dtype="string"), earlier, "pid")
    assert (new.tolist(), old.tolist(), n) == ([0, 1], [2, 0], 3)


def test_a_blank_person_stays_refused_in_one_sentence():
    earlier = Earlier.of([(pd.DataFrame({"pid": ["x"], "res": ["n"]}), ["res"], None)], ["pid"])
    with pytest.raises(ColumnError) as err:
        joint_codes(pd.Series(["x", None], dtype="string"), earlier, "pid")
    message = str(err.value)
    assert isinstance(err.value, AnonlibError)
    assert message == (
        "The person column 'pid' is blank in 1 record; every record needs the person it belongs to "
        "(fill them in, or choose another person column)."
    )
