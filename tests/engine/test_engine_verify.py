"""``verify --engine``: the recipe re-applied to the source where it lies, the table the engine writes
compared with the package's byte for byte; the package itself checked in memory (contract round 8)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from anonlib.cli import main


def _run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_verify_on_duckdb_agrees_with_verify_in_memory_and_sees_an_edited_source(tmp_path, capsys):
    rng = np.random.default_rng(4)
    frame = pd.DataFrame(
        {"age": rng.integers(20, 80, 500), "sex": rng.choice(["F", "M"], 500), "dx": rng.choice(["a", "b"], 500)}
    )
    source = tmp_path / "s.csv"
    frame.to_csv(source, index=False)
    package = tmp_path / "p.zip"
    code, _, err = _run(
        ["anonymize", source, "--shield", "age,sex", "--role", "dx=sensitive", "--k", "5", "--package", package], capsys
    )
    assert code == 0, err
    memory = json.loads(_run(["verify", package, source, "--json"], capsys)[1])
    code, out, _ = _run(["verify", package, source, "--engine", "duckdb", "--json"], capsys)
    engine = json.loads(out)
    assert code == 0 and engine["passed"] and memory["passed"]
    assert [c["part"] for c in engine["checks"]] == [c["part"] for c in memory["checks"]]
    (said,) = [c["sentence"] for c in engine["checks"] if c["part"] == "source"]
    assert said == "gives released.csv byte for byte when the recipe is re-applied to it on duckdb"
    # a source with one record changed: the digest and the replay's rows both differ
    frame.loc[0, "age"] = 99 if frame.loc[0, "age"] != 99 else 98
    frame.to_csv(source, index=False)
    code, out, _ = _run(["verify", package, source, "--engine", "duckdb", "--json"], capsys)
    failed = [c["sentence"] for c in json.loads(out)["checks"] if c["part"] == "source" and not c["passed"]]
    assert code == 1 and any("SHA-256 differs" in s for s in failed)
    # the package alone: checked in memory, said so
    code, out, err = _run(["verify", package, "--engine", "duckdb"], capsys)
    assert code == 0 and "checked in memory" in err
