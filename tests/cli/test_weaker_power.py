"""A delivery refused under a strong adversary power names the weaker power that would release it."""

from __future__ import annotations

import json

import pandas as pd

from anonlib.cli import main


def test_a_refusal_under_a_strong_power_names_the_weaker_power_that_would_release(tmp_path, capsys):
    """c's three visits set c apart under power all (even at *); any 2 of anyone's visits are shared."""
    frame = pd.DataFrame({"pid": list("aabbcccdd"), "stage": [1, 2, 1, 2, 1, 2, 2, 2, 2]})
    frame.to_csv(tmp_path / "v.csv", index=False)
    argv = ["anonymize", str(tmp_path / "v.csv"), "--person", "pid", "--pseudonymize", "pid", "--shield", "stage"]
    argv += ["--k", "2", "--key-file", str(tmp_path / "k"), "--out", str(tmp_path / "o.csv")]
    assert main([*argv, "--power", "all"]) == 2
    err = capsys.readouterr().err
    assert not (tmp_path / "o.csv").exists() and err.count("error:") == 1
    assert err.strip().endswith("At adversary power 2 (an attacker who knows any 2 of a person's records) it would "
                                "release with an information loss of 0.00: add --power 2.")  # fmt: skip
    assert main([*argv, "--power", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["utility"] == 0.0
