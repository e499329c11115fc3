"""Every count names its unit (linkable.md part 2, 5): a person column searched but not released."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from anonlib.cli import main


def _visits(tmp_path):
    rng = np.random.default_rng(8)
    people = rng.integers(0, 60, 300)
    frame = pd.DataFrame(
        {
            "pid": [f"p{p}" for p in people],
            "age": 30 + people % 23,
            "sex": np.where(people % 2, "F", "M"),
            "dx": rng.choice(["flu", "copd"], 300),
        }
    )
    path = tmp_path / "visits.csv"
    frame.to_csv(path, index=False)
    return frame, path


def test_a_search_in_people_states_people_though_the_file_is_recounted_in_records(tmp_path, capsys):
    frame, path = _visits(tmp_path)
    argv = ["anonymize", str(path), "--person", "pid", "--shield", "age,sex", "--role", "dx=sensitive", "--k", "3"]
    assert main([*argv, "--max-suppressed", "0.5", "--out", str(tmp_path / "o.csv"), "--json"]) == 0
    stated = json.loads(capsys.readouterr().out)
    written = pd.read_csv(tmp_path / "o.csv")
    assert "pid" not in written.columns  # the person column is not released
    assert stated["unit"] == "people" and stated["target"].startswith("k = 3 people")
    assert stated["persons"] == frame["pid"].nunique()
    assert stated["suppressed"] == stated["suppressed_persons"] == stated["persons"] - stated["released_persons"]
    assert stated["records"] == len(frame) and stated["released_records"] == len(written)
    assert stated["suppressed_records"] == len(frame) - len(written)
    assert 0 < stated["released_persons"] <= stated["persons"]
    assert main([*argv, "--max-suppressed", "0.5"]) == 0
    out = capsys.readouterr().out
    lines = {line[:18].strip(): line[18:].strip() for line in out.splitlines()}
    assert lines["suppressed people"] == f"{stated['suppressed_persons']:,} of {stated['persons']:,}"
    assert lines["suppressed records"] == f"{stated['suppressed_records']:,} of {len(frame):,}"
    assert lines["k (as released)"] == f"{stated['k']:,} people"


def test_profile_with_a_person_counts_each_field_in_people_as_pandas_does(tmp_path, capsys):
    frame, path = _visits(tmp_path)
    assert main(["profile", str(path), "--qi", "age,sex", "--person", "pid", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    # pandas: a class's people; a person is in a class of fewer than t people when one of their records is
    people_in_class = frame.groupby(["age", "sex"])["pid"].transform("nunique")
    smallest = people_in_class.groupby(frame["pid"]).min()
    history = frame.groupby("pid").apply(lambda g: tuple(sorted(zip(g["age"], g["sex"]))))
    sharing = history.map(history.value_counts())
    assert got["unit"] == "people" and got["person"] == "pid"
    assert (got["records"], got["persons"]) == (len(frame), frame["pid"].nunique())
    assert got["k"] == int(people_in_class.min())
    assert (
        got["unique_people"] == got["unique_records"] == int((smallest == 1).sum())
    )  # unique_records: the contract's name
    assert got["people_below"] == {f"<{t}": int((smallest < t).sum()) for t in (2, 5, 10)} == got["records_below"]
    assert got["people_unique_on_history"] == int((sharing == 1).sum())
    assert got["people_in_histories_below"] == {f"<{t}": int((sharing < t).sum()) for t in (2, 5, 10)}
