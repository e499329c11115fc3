"""What the engine tests share: a recipe made in memory from a bundled sample, the privacy models
they require, released files as sorted text rows, and one command run in memory and on an engine
with the same answer asserted (DuckDB in ``engine/test_engine*.py``, Spark in
``engine/test_engine_spark.py``); random panels and household files with blanks (hypothesis
strategies) and the in-memory kernel's owners sharing each history, which the engines' counts in
people, histories and households are compared with (``engine/test_engine_owners.py`` on DuckDB,
``engine/test_engine_spark.py`` on Spark)."""

from __future__ import annotations

import gzip
import io
import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import strategies as st

from anonlib.__main__ import main
from anonlib.core.dataset import Dataset, Role
from anonlib.core.default_hierarchy import default_hierarchy
from anonlib.core.equivalence import encode, person_codes
from anonlib.core.histories import owners_sharing
from anonlib.core.loading import load_table
from anonlib.core.samples import SAMPLES, load_sample
from anonlib.measures.models import ModelRequirement
from anonlib.workflow import GeneralizationStep, Recipe, ReleaseTarget, WorkingCopy
from anonlib.workflow.steps import SuppressionStep

# differ by design: timings, the engine's own fields, the hierarchies' example values (their
# rows are in value order on an engine, in order of appearance in memory)
VOLATILE = ("seconds", "steps", "engine", "rows_searched", "measured_on", "engine_seconds")


def model_requirements(dataset) -> list[ModelRequirement]:
    first, last = dataset.sensitive[0], dataset.sensitive[-1]
    return [
        ModelRequirement("distinct_l", first, 2),
        ModelRequirement("t_closeness", last, 0.3),
        ModelRequirement("recursive_cl", first, 2, c=3.0),
    ]


def first_records(key: str, records: int, path: Path, title: str | None = None) -> Dataset:
    """A bundled sample's first ``records`` records written to ``path`` as the bundled file is (its
    gzip CSV's first lines, byte for byte), and that file read in memory with the sample's roles."""
    with gzip.open(SAMPLES[key].path, "rb") as whole, gzip.open(path, "wb") as part:
        part.writelines(itertools.islice(whole, records + 1))  # the header and the first records
    table = load_table(path, name=SAMPLES[key].file)
    dataset = Dataset(
        name=title or SAMPLES[key].title,
        frame=table.frame,
        roles={c: Role.IGNORE for c in table.frame.columns} | SAMPLES[key].roles,
        notes=table.notes,
        missing_texts=table.missing_texts,
    ).validated()
    assert dataset.n_records == records
    return dataset


def engine_recipe(key: str, dataset=None) -> Recipe:
    """A recipe with a generalization (default hierarchies) and a suppression step under a
    target with k and privacy models, made in memory from a bundled sample (or ``dataset``, a
    part of it with its roles)."""
    dataset = load_sample(key) if dataset is None else dataset
    qis = list(dataset.quasi_identifiers[:3])
    dataset = dataset.with_roles({c: "ignore" for c in dataset.quasi_identifiers if c not in qis})
    hierarchies = {c: default_hierarchy(dataset.frame[c], c)[1] for c in qis[:1]}
    step = GeneralizationStep(tuple((c, 1) for c in hierarchies), tuple(hierarchies.items()))
    target = ReleaseTarget(
        k=4, requirements=(ModelRequirement("distinct_l", dataset.sensitive[0], 2),), max_suppressed=0.3
    )
    copy = WorkingCopy.start(dataset, target).apply(step, "test")
    copy = copy.apply(SuppressionStep.from_target(target, copy.current), "test")
    return copy.recipe()


def released_rows(data) -> pd.DataFrame:
    """A released CSV (bytes or a path) as sorted text rows, to compare as tables."""
    frame = pd.read_csv(io.BytesIO(data) if isinstance(data, bytes) else data, dtype=str, keep_default_na=False)
    return frame.sort_values(list(frame.columns)).reset_index(drop=True)


def run_json(argv: list[str], capsys) -> tuple[int, dict, str]:
    code = main([*argv, "--json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out[captured.out.index("{") :]), captured.err


def released_table(path: Path) -> pd.DataFrame:
    """A released file (CSV or Parquet) as sorted text rows, to compare as tables."""
    if path.is_dir():  # Spark writes a folder of parts
        parts = [
            pd.read_csv(p, dtype=str, keep_default_na=False)
            for p in sorted(path.glob("part-*.csv"))
            if p.stat().st_size
        ]
        frame = pd.concat(parts, ignore_index=True)
    elif path.suffix == ".parquet":
        frame = pd.read_parquet(path).astype(object).where(lambda f: f.notna(), "").astype(str)
    else:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    return frame.sort_values(list(frame.columns)).reset_index(drop=True)


def same_answer(
    argv: list[str],
    folder: Path,
    capsys,
    *,
    engine: str = "duckdb",
    out: str = "out.csv",
    measured_on: str = "written file",
    engine_argv: tuple[str, ...] = (),
) -> tuple[dict, dict]:
    """Run ``argv`` in memory and on the engine (writing ``out``; ``engine_argv`` added there only,
    e.g. ``--package``); assert the same exit code, statement (utility to 12 digits) and released
    table; return both statements."""
    code, in_memory, _ = run_json([*argv, "--out", str(folder / "memory.csv")], capsys)
    return engine_answer(
        argv, folder, capsys, code, in_memory, engine=engine, out=out, measured_on=measured_on, engine_argv=engine_argv
    )


def engine_answer(
    argv: list[str],
    folder: Path,
    capsys,
    code: int,
    in_memory: dict,
    *,
    engine: str = "duckdb",
    out: str = "out.csv",
    measured_on: str = "written file",
    engine_argv: tuple[str, ...] = (),
) -> tuple[dict, dict]:
    """``same_answer`` given the in-memory run already made (its exit code and statement, its
    release written to ``folder / "memory.csv"``): run ``argv`` on the engine and assert the same."""
    memory_out, engine_out = folder / "memory.csv", folder / f"engine-{out}"
    engine_code, on_engine, err = run_json([*argv, *engine_argv, "--out", str(engine_out), "--engine", engine], capsys)
    assert "Traceback" not in err
    assert engine_code == code
    assert on_engine["engine"] == engine and on_engine["measured_on"] == measured_on
    # a key means one thing in every command: "classes" is a release's classes, never the rows searched
    assert on_engine.get("classes") == in_memory.get("classes") and on_engine["rows_searched"] > 0
    assert len(on_engine["steps"]) == len(in_memory["steps"])
    utility = on_engine.pop("utility"), in_memory.pop("utility")
    assert utility[0] == pytest.approx(utility[1], rel=1e-12, abs=1e-15)
    for key in VOLATILE:
        in_memory.pop(key, None), on_engine.pop(key, None)
    assert on_engine == in_memory
    pd.testing.assert_frame_equal(released_table(engine_out), released_table(memory_out))
    if engine_out.suffix == ".csv":  # the engine writes a CSV as the in-memory release does: the same bytes
        assert engine_out.read_bytes() == memory_out.read_bytes()
    return in_memory, on_engine


# --- random panels and household files with blanks, and the kernel's histories ---------------------

QIS = ["age", "sex"]  # the quasi-identifiers of ``panels`` and ``household_files``
HOUSEHOLDS = ["h1", "h2", "h3", "h4", "h5", "h6", None]


@st.composite
def panels(draw):
    """A panel of 1-30 records of up to 8 people on two quasi-identifiers with blanks, and a count column."""
    n = draw(st.integers(1, 30))
    pid = draw(st.lists(st.sampled_from(["p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8"]), min_size=n, max_size=n))
    age = draw(st.lists(st.one_of(st.none(), st.integers(30, 32)), min_size=n, max_size=n))
    sex = draw(st.lists(st.sampled_from(["f", "m", None]), min_size=n, max_size=n))
    count = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    return pd.DataFrame(
        {"pid": pid, "age": pd.array(age, dtype="Int64"), "sex": pd.array(sex, dtype="string"), "n": count}
    )


@st.composite
def household_files(draw):
    """1-30 records of up to 6 households (a blank now and then) and 8 people, two quasi-identifiers
    with blanks, and a count column (0-3 records per row)."""
    n = draw(st.integers(1, 30))
    blank = draw(st.booleans()) and draw(st.booleans())  # a quarter of the files have a blank household
    hh = draw(st.lists(st.sampled_from(HOUSEHOLDS if blank else HOUSEHOLDS[:-1]), min_size=n, max_size=n))
    pid = draw(st.lists(st.sampled_from([f"p{i}" for i in range(8)]), min_size=n, max_size=n))
    age = draw(st.lists(st.one_of(st.none(), st.integers(30, 32)), min_size=n, max_size=n))
    sex = draw(st.lists(st.sampled_from(["f", "m", None]), min_size=n, max_size=n))
    count = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    return pd.DataFrame(
        {
            "hh": pd.array(hh, dtype="string"),
            "pid": pid,
            "age": pd.array(age, dtype="Int64"),
            "sex": pd.array(sex, dtype="string"),
            "n": count,
        }
    )


def histogram(values: np.ndarray) -> list[list[int]]:
    """``[[value, how many], ...]`` ascending of the positive ``values`` (owners of no record left out)."""
    values = values[values > 0]
    sizes, many = np.unique(values, return_counts=True)
    return [[int(s), int(c)] for s, c in zip(sizes, many)]


def kernel_sharing(frame: pd.DataFrame, owner: str, power, count: str = "n") -> list[list[int]]:
    """The in-memory kernel's owners (of ``owner``) sharing each history on ``QIS`` for an adversary of
    ``power`` (None: the whole history), as the engine's ``sharing`` histogram: ``[[sharing, owners], ...]``."""
    table = encode(frame, QIS, count=count)
    classes = table.classes()
    codes, n = person_codes(frame[owner], owner)
    return histogram(owners_sharing(classes.ids, classes.n_classes, codes, n, table.weights, power=power))


def people_panel(seed: int, records: int, people: int) -> pd.DataFrame:
    """A panel of ``records`` records of up to ``people`` people (``pid``), three quasi-identifiers
    and a count column ``n``: the searches in people on DuckDB and Spark draw from it."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "pid": rng.integers(0, people, records),
            "age": rng.integers(30, 42, records),
            "sex": rng.choice(["f", "m"], records),
            "city": rng.choice(["x", "y", "z", "w"], records),
            "n": rng.integers(1, 4, records),
        }
    )
