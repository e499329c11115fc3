"""A delivery refused under a strong adversary power names the weaker power that would release it."""

from __future__ import annotations

import json
import zipfile
from dataclasses import replace

import numpy as np
import pandas as pd

from anonlib.cli import main
from anonlib.core.default_hierarchy import default_hierarchy
from anonlib.core.errors import AnonlibError
from anonlib.measures.target import ReleaseTarget
from anonlib.transformations.generalization import release_search
from anonlib.workflow.power_choice import LOSS_CEILING, weaker_power_sentence


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


def test_a_first_delivery_of_one_record_each_suggests_power_2(tmp_path, capsys):
    """On one record per person every power gives the same release; the package and the command
    say that power 2 is the one suggested for the deliveries that follow (SUGGESTION_RULE)."""
    frame = pd.DataFrame({"pid": [f"p{i}" for i in range(12)], "stage": [1, 2, 3] * 4})
    frame.to_csv(tmp_path / "y1.csv", index=False)
    argv = ["anonymize", str(tmp_path / "y1.csv"), "--person", "pid", "--pseudonymize", "pid", "--shield", "stage"]
    argv += ["--k", "2", "--key-file", str(tmp_path / "k"), "--out", str(tmp_path / "o.csv")]
    said = (
        "Every person has one record in this delivery, so every adversary power gives this same release; deliveries "
        "that add records to the same people are judged on their histories, and power 2 is the one suggested for "
        "them (--power 2)."
    )
    assert main([*argv, "--package", str(tmp_path / "p.zip")]) == 0  # the default power: all
    assert f"note: {said}" in capsys.readouterr().err
    readme = zipfile.ZipFile(tmp_path / "p.zip").read("README.txt").decode()
    assert said in " ".join(readme.split())  # the README wraps its lines
    assert main([*argv, "--power", "2"]) == 0
    assert said not in capsys.readouterr().err
    # two records for one person: no longer a first delivery of one record each
    pd.concat([frame, frame.head(1)]).to_csv(tmp_path / "y1.csv", index=False)
    assert main([*argv, "--max-suppressed", "0.2"]) == 0 and said not in capsys.readouterr().err


def test_the_weaker_power_named_is_the_strongest_within_the_suggestions_ceiling():
    """weaker_power_sentence names the strongest weaker power whose release loses at most
    LOSS_CEILING, else the strongest that keeps something: compared with each power searched."""
    rng = np.random.default_rng(3)
    for _ in range(4):
        rows = [(f"p{p}", int(rng.integers(0, 6)), int(rng.integers(1, 5))) for p in range(40) for _ in range(4)]
        frame = pd.DataFrame(rows, columns=["pid", "day", "stage"])
        hierarchies = {a: default_hierarchy(frame[a], a)[1] for a in ("day", "stage")}
        target = ReleaseTarget(k=3, max_suppressed=0.05, person="pid", linked=("pid",))
        losses = {}
        for power in (5, 3, 2, 1):
            try:
                found = release_search(
                    frame, ["day", "stage"], hierarchies, "optimal", target=replace(target, power=power)
                )
            except AnonlibError:
                continue
            losses[power] = float(found.utility or 0.0)
        keeping = [p for p in (5, 3, 2, 1) if p in losses and losses[p] < 1.0]
        within = [p for p in keeping if losses[p] <= LOSS_CEILING]
        sentence = weaker_power_sentence(frame, ["day", "stage"], hierarchies, target)
        if not keeping:
            assert sentence == "No weaker adversary power releases it either."
            continue
        power = (within or keeping)[0]
        assert sentence.endswith(f"information loss of {losses[power]:.2f}: add --power {power}.")
