"""Risk by the adversary's power (``anonlib.measures.power``, ``profile --json`` ``by_power``)
against a pandas recount: each person's history as the sorted tuple of their rows, every
sub-multiset of m of them listed with itertools, and the people holding each counted by pandas'
groupby."""

from __future__ import annotations

import itertools
import json
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from anonlib.cli import main
from anonlib.core.errors import ParameterError
from anonlib.measures.power import POWERS, PowerRisk, risk_by_power


def trial(seed: int = 3, people: int = 60) -> pd.DataFrame:
    """A sequential trial's shape: a few visits per patient (1 to 7), the visit day since
    enrolment in months and the disease stage (1 to 4, rising now and then), some stages blank."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(people):
        stage = int(rng.integers(1, 4))
        for visit in range(int(rng.integers(1, 8))):
            if rng.random() < 0.2:
                stage = min(stage + 1, 4)
            shown = None if rng.random() < 0.05 else stage
            rows.append({"id": p + 1, "month": 6 * visit, "stage": shown})
    return pd.DataFrame(rows)


def pandas_recount(frame: pd.DataFrame, qis: list[str], person: str, power: int | None, k: int) -> tuple[int, int]:
    """(people unique, people below k) as an attacker of ``power`` sees them, counted with pandas."""
    rows = frame[qis].map(lambda v: "<blank>" if pd.isna(v) else str(v)).agg("|".join, axis=1)  # a blank is a value
    history = rows.groupby(frame[person]).agg(lambda r: tuple(sorted(r)))
    if power is None:
        sharing = history.map(history.value_counts())
    else:
        subs = history.map(lambda h: sorted(set(itertools.combinations(h, min(power, len(h))))))
        listed = subs.explode().rename("sub").reset_index()
        histories = history.map(Counter)

        def holders(sub: tuple) -> int:
            need = Counter(sub)
            return int(sum(all(h[c] >= n for c, n in need.items()) for h in histories))

        support = {s: holders(s) for s in listed["sub"].unique()}
        sharing = listed.assign(n=listed["sub"].map(support)).groupby(person)["n"].min()
    return int((sharing == 1).sum()), int((sharing < k).sum())


@pytest.mark.parametrize("seed", [3, 11])
def test_by_power_equals_a_pandas_recount(seed):
    frame = trial(seed)
    got = risk_by_power(frame, ["month", "stage"], "id", k=3)
    assert [r.power for r in got] == list(POWERS)
    for r in got:
        assert r.people == frame["id"].nunique()
        assert (r.people_unique, r.people_below_k) == pandas_recount(frame, ["month", "stage"], "id", r.power, 3)


def test_a_worked_example():
    # a and b: stage 1 then 2; c: stage 1 then 3. Power 1: c is alone in stage 3; power 2 and all: c
    # is the only person with (1, 3); below k = 3 everyone (stage 2 is held by two people only)
    frame = pd.DataFrame({"pid": ["a", "a", "b", "b", "c", "c"], "stage": [1, 2, 1, 2, 1, 3]})
    got = {r.label: (r.people_unique, r.people_below_k) for r in risk_by_power(frame, ["stage"], "pid", k=3)}
    assert got == {"1": (1, 3), "2": (1, 3), "3": (1, 3), "5": (1, 3), "all": (1, 3)}
    got = {r.label: (r.people_unique, r.people_below_k) for r in risk_by_power(frame, ["stage"], "pid", k=2)}
    assert got == {"1": (1, 1), "2": (1, 1), "3": (1, 1), "5": (1, 1), "all": (1, 1)}


def test_bad_k_and_person_are_one_sentence():
    frame = pd.DataFrame({"pid": ["a"], "stage": [1]})
    with pytest.raises(ParameterError, match="k is a whole number"):
        risk_by_power(frame, ["stage"], "pid", k=0)
    with pytest.raises(ParameterError, match="'who' is not a column"):
        risk_by_power(frame, ["stage"], "who")


def test_as_dict_names_the_power():
    assert PowerRisk(2, 5, 9, 1, 3).as_dict() == {"power": 2, "people_unique": 1, "people_below_k": 3}
    assert PowerRisk(None, 5, 9, 4, 6).as_dict()["power"] == "all"


def test_profile_json_by_power_equals_pandas(tmp_path, capsys):
    frame = trial(5)
    source = tmp_path / "trial.csv"
    frame.to_csv(source, index=False)
    assert main(["profile", str(source), "--qi", "month,stage", "--person", "id", "--k", "4", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["by_power_k"] == 4
    assert [e["power"] for e in result["by_power"]] == [1, 2, 3, 5, "all"]
    for entry in result["by_power"]:
        power = None if entry["power"] == "all" else entry["power"]
        expected = pandas_recount(frame, ["month", "stage"], "id", power, 4)
        assert (entry["people_unique"], entry["people_below_k"]) == expected
    # k defaults to 5; without a person column there is no by_power
    assert main(["profile", str(source), "--qi", "month,stage", "--person", "id", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["by_power_k"] == 5
    assert main(["profile", str(source), "--qi", "month,stage", "--json"]) == 0
    assert "by_power" not in json.loads(capsys.readouterr().out)


def test_profile_refuses_a_bad_k(tmp_path, capsys):
    source = tmp_path / "trial.csv"
    trial(5).to_csv(source, index=False)
    assert main(["profile", str(source), "--qi", "month,stage", "--person", "id", "--k", "zero"]) == 2
    err = capsys.readouterr().err
    assert "k" in err and "Traceback" not in err
