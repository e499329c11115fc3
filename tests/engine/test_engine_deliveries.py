"""Later deliveries into a project through ``--engine duckdb`` (scale.md part 2): a
delivery whose pseudonyms link to the project's earlier ones is judged on each person's history
across them, the earlier releases as per-person signatures (``Earlier.signatures``) and the new
delivery's records in the engine. The verdicts, the people suppressed, the exit codes, ``--json``
and the audit entries equal the in-memory path's on the same store (copied after the first
delivery, so both hold the same key and the same earlier releases)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from anonlib.__main__ import main
from anonlib.core.histories import Earlier

# what only the engine states, or states in its own order (the example value, the sum's last bit);
# apply on an engine does not compare the file with the recipe's (None)
ENGINE_ONLY = {
    "engine",
    "rows_searched",
    "engine_seconds",
    "seconds",
    "measured_on",
    "steps",
    "utility",
    "same_file",
    "reproduces_release",
}


def _panel(seed: int, n: int = 120, people: int = 50) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "pid": [f"p{i}" for i in rng.integers(0, people, n)],
            "age": rng.integers(30, 50, n),
            "sex": rng.choice(["f", "m"], n),
            "city": rng.choice(["x", "y", ""], n),  # blanks kept as released
        }
    )


def _run(home: Path, argv, capsys, monkeypatch) -> tuple[int, str, str]:
    monkeypatch.setenv("ANONLIB_HOME", str(home))
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _rows(path: Path) -> pd.DataFrame:
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    return table.sort_values(list(table.columns)).reset_index(drop=True)


def _entries(home: Path, capsys, monkeypatch) -> list[dict]:
    entries = json.loads(_run(home, ["audit", "--json"], capsys, monkeypatch)[1])
    # the hashes of bytes written in each path's own row order; the engine names the file without its folder
    drop = ("sha256", "time", "parts", "hash", "id", "written_by", "source_name")
    return [{k: v for k, v in e.items() if not any(d in k for d in drop)} for e in entries]


def _deliveries(
    tmp_path, capsys, monkeypatch, options, seeds=(0, 1, 2), commands=("anonymize", "apply"), n=(120, 120, 120)
) -> list[tuple[int, int, dict]]:
    """The first delivery in memory, the store copied, then each later one in memory into one store
    and through DuckDB into the other: their exit codes and in-memory ``--json`` ({} when refused),
    the same outcome asserted on both."""
    memory, engine = tmp_path / "memory", tmp_path / "engine"
    files = []
    for i, seed in enumerate(seeds):
        files.append(tmp_path / f"d{i}.csv")
        _panel(seed, n[i]).to_csv(files[-1], index=False)
    argv = ["--shield", "age,sex,city", "--person", "pid", "--pseudonymize", "pid", "--k", "3"]
    argv += ["--project", "panel", *options]
    first = ["anonymize", files[0], *argv, "--recipe", tmp_path / "r.json", "--out", tmp_path / "first.csv"]
    assert _run(memory, first, capsys, monkeypatch)[0] == 0
    assert len(_entries(memory, capsys, monkeypatch)) == 1  # recorded: the later deliveries link to it
    shutil.copytree(memory, engine)
    codes = []
    for i, path in enumerate(files[1:], start=1):
        for command in commands:
            head = ["anonymize", path, *argv] if command == "anonymize" else ["apply", tmp_path / "r.json", path]
            head += ["--project", "panel"] if command == "apply" else []
            m, e = tmp_path / f"m{i}{command}.csv", tmp_path / f"e{i}{command}.csv"
            cm, om, em = _run(memory, [*head, "--json", "--out", m], capsys, monkeypatch)
            ce, oe, ee = _run(engine, [*head, "--json", "--out", e, "--engine", "duckdb"], capsys, monkeypatch)
            assert cm == ce and "Traceback" not in ee, (em, ee)
            if cm == 2:  # refused in the same sentence, nothing written
                said = [line for line in em.splitlines() if line.startswith("error: ")]
                assert said == [line for line in ee.splitlines() if line.startswith("error: ")]
                assert not m.exists() and not e.exists()
                codes.append((i, cm, {}))
                continue
            jm, je = json.loads(om), json.loads(oe)
            codes.append((i, cm, jm))
            assert {k: v for k, v in jm.items() if k not in ENGINE_ONLY} == {
                k: v for k, v in je.items() if k not in ENGINE_ONLY
            }
            assert jm.get("utility") == pytest.approx(je.get("utility"))
            assert _rows(m).equals(_rows(e))  # the same people suppressed, the same released rows
            assert m.read_bytes() == e.read_bytes()  # written byte for byte as in memory
            for a, b in zip(_entries(memory, capsys, monkeypatch), _entries(engine, capsys, monkeypatch), strict=True):
                assert a == b, {k: (a.get(k), b.get(k)) for k in set(a) | set(b) if a.get(k) != b.get(k)}
    return codes


@pytest.mark.parametrize(
    "options, seeds, codes",
    [
        (["--power", "1", "--max-suppressed", "0.5"], (0, 1, 2), [0, 0, 0, 0]),
        # whole histories: the search finds a release, the first delivery's recipe fails them (refused)
        (["--max-suppressed", "0.9"], (3, 4), [0, 2]),
    ],
)
def test_later_deliveries_through_duckdb_are_judged_as_in_memory(options, seeds, codes, tmp_path, capsys, monkeypatch):
    done = _deliveries(tmp_path, capsys, monkeypatch, options, seeds, n=(100, 200, 200))
    assert [code for _, code, _ in done] == codes
    made = [j for _, _, j in done if j]
    # each judged with every delivery recorded before it (the first, then each command's)
    assert [j["earlier_deliveries"] for j in made] == list(range(1, len(made) + 1))
    assert any(j["persons"] > j["released_persons"] for j in made)  # people suppressed, the same on both


def test_a_later_delivery_over_the_limit_is_refused_through_duckdb_as_in_memory(tmp_path, capsys, monkeypatch):
    # the first delivery's levels applied to a later one of more records per person: their whole
    # histories across both fail k for more people than the limit allows, refused in one sentence
    options = ["--max-suppressed", "0.5"]
    codes = _deliveries(tmp_path, capsys, monkeypatch, options, seeds=(0, 1), commands=("apply",), n=(100, 400))
    assert [(i, code) for i, code, _ in codes] == [(1, 2)]


def test_signatures_are_the_earlier_records_summed_per_person_and_class():
    frame = pd.DataFrame({"pid": ["a", "a", "b", "a"], "age": ["1", "1", "2", None], "n": [1, 2, 1, 1]})
    earlier = Earlier.of([(frame, ["age"], "n"), (frame.iloc[:1], ["age"], None)], ["pid"])
    s = earlier.signatures()
    assert s.deliveries == 2 and len(s.weights) == 4 and int(s.weights.sum()) == int(earlier.weights.sum()) == 6
    summed = pd.Series(s.weights, index=pd.MultiIndex.from_arrays([s.owners["pid"], s.classes])).to_dict()
    assert summed == {("a", "0\x1f0"): 3, ("b", "0\x1f1"): 1, ("a", "0\x1f2"): 1, ("a", "1\x1f0"): 1}


@settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 10**6), power=st.sampled_from(["1", "2"]))
# the second delivery holds an age (36) the first one's recipe did not list: `apply --engine`
# placed it in its band on the engine but not in the in-memory copy its package describes, and
# refused where memory released (found by this test in a full run)
@example(seed=1116, power="1")
def test_random_panels_judged_the_same_through_duckdb(seed, power, tmp_path_factory, capsys, monkeypatch):
    tmp_path = tmp_path_factory.mktemp("panel")
    _deliveries(tmp_path, capsys, monkeypatch, ["--power", power, "--max-suppressed", "0.6"], seeds=(seed, seed + 1))
