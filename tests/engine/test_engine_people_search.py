"""The optimal search in people and histories with every node counted by DuckDB
(``anonlib.workflow.engine_people``) finds what the in-memory search finds: the same node, the
same people and records suppressed, the same k among the people kept and the same cost (the
utility of the records kept to the last representable digit), on random panels with a count
column, in people and on histories (whole, and any 2 records), k 2-4, several suppression limits
and measures. The same search with every node counted by Spark is in ``test_engine_spark.py``
(the module holding the process's Spark session: one JVM for both)."""

from __future__ import annotations

import pandas as pd
import pytest
from engine_cases import people_panel
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonlib import engine as eng
from anonlib.core.default_hierarchy import default_hierarchy
from anonlib.core.errors import NoSolutionError
from anonlib.engine.owners_out import owners_out
from anonlib.measures.target import ReleaseTarget
from anonlib.transformations.generalization import release_search
from anonlib.workflow import engine_people
from anonlib.workflow.engine_people import people_search, supported

SHIELD = ["age", "sex", "city"]


@pytest.fixture(scope="module")
def duck():
    with eng.connect("duckdb", memory_limit="1GB") as engine:
        yield engine


def _hierarchies(frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    return {a: default_hierarchy(sorted(frame[a].unique()), a)[1] for a in SHIELD}


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.integers(0, 10**6),
    st.sampled_from([("people", None), ("histories", None), ("histories", 2)]),
    st.integers(2, 4),
    st.sampled_from([0.0, 0.1, 0.3]),
    st.sampled_from(["loss", "discernibility", "aecs"]),
    st.booleans(),
)
def test_the_engine_search_in_people_finds_the_in_memory_node(
    duck, monkeypatch, seed, unit_power, k, limit, measure, tree
):
    frame = people_panel(seed, 120, 30)
    unit, power = unit_power
    linked = ("pid",) if unit == "histories" else ()
    target = ReleaseTarget(k, max_suppressed=limit, person="pid", linked=linked, power=power)
    assert supported(target, "optimal") and target.unit == unit
    hierarchies = _hierarchies(frame)
    try:
        memory = release_search(frame, SHIELD, hierarchies, target=target, count="n", measure=measure)
    except NoSolutionError as refused:
        with pytest.raises(NoSolutionError) as also:
            people_search(eng.from_frame(frame, duck).with_roles({"n": "count"}), SHIELD, hierarchies, target)
        assert str(also.value) == str(refused)
        return
    # ``tree``: the tree will be read (--json): the walk counts its root exactly as it passes it, and
    # reading the tree counts no node again; its root's figures are memory's
    counts = []
    monkeypatch.setattr(engine_people, "owners_out", lambda *a, **kw: counts.append(1) or owners_out(*a, **kw))
    table = eng.from_frame(frame, duck).with_roles({"n": "count"})
    found = people_search(table, SHIELD, hierarchies, target, measure=measure, tree=tree)
    walked = len(counts)
    engine = found.result
    assert engine.levels == memory.levels
    assert (engine.suppressed_persons, engine.suppressed) == (memory.suppressed_persons, memory.suppressed)
    assert found.persons == memory.persons == frame["pid"].nunique()
    assert found.k == memory.released_k
    assert (engine.optimal, engine.bound) == (memory.optimal, memory.bound)
    assert engine.utility == pytest.approx(memory.utility, rel=1e-12, abs=1e-12)
    if tree:
        root, truth = engine.tree[0], memory.tree[0]
        assert len(counts) == walked
        assert (root.rows, root.violations, root.suppressed) == (truth.rows, truth.violations, truth.suppressed)


def test_what_the_engine_does_not_count_node_by_node():
    assert supported(ReleaseTarget(3, person="pid"), "optimal")
    assert supported(ReleaseTarget(3, person="pid", linked=("pid",), power=1), "optimal")
    assert supported(ReleaseTarget(3, person="pid", linked=("pid",), power=2), "optimal")
    assert supported(ReleaseTarget(3, person="pid", linked=("pid",), power=5), "optimal")
    assert not supported(ReleaseTarget(3, person="pid", linked=("pid",), power=6), "optimal")
    assert not supported(ReleaseTarget(3, person="pid"), "iab")
    assert not supported(ReleaseTarget(3), "optimal")


@pytest.mark.parametrize("power", [None, "all", "1", "2"])
def test_the_command_counted_node_by_node_releases_what_memory_releases(tmp_path, capsys, monkeypatch, power):
    """``anonymize --engine duckdb --person`` past ``MAX_CLASSES`` (here 10) searches node by node on the
    engine, and past ``MAX_OWNER_ROWS`` the engine decides the people suppressed and checks the table
    as written without bringing rows back; it states and writes what memory does: in people (the person column withheld), and on
    histories with the person pseudonymized (power all, 1 and 2), a kept column's risk measured."""
    from engine_cases import same_answer

    from anonlib.workflow import engine_people, engine_replay, engine_search

    monkeypatch.setattr(engine_search, "MAX_CLASSES", 10)
    monkeypatch.setattr(engine_replay, "MAX_OWNER_ROWS", 10)  # the release's people and its check decided there too
    decided = []
    monkeypatch.setattr(
        engine_replay,
        "failing_owners",
        lambda *a, _f=engine_replay.failing_owners, **k: decided.append(1) or _f(*a, **k),
    )
    searched = []  # the engine's search in people ran (not the class table's)
    monkeypatch.setattr(
        engine_people,
        "people_search",
        lambda *a, _s=engine_people.people_search, **k: searched.append(1) or _s(*a, **k),
    )
    path = tmp_path / "panel.csv"
    frame = people_panel(5, 200, 150).drop(columns="n")
    frame.to_csv(path, index=False)
    argv = ["anonymize", str(path), "--shield", "age,sex", "--person", "pid", "--keep", "city", "--k", "4"]
    argv += ["--max-suppressed", "0.3"]
    if power is not None:
        key = tmp_path / "project.key"
        key.write_text("3c" * 32 + "\n")
        key.chmod(0o600)
        argv += ["--pseudonymize", "pid", "--key-file", str(key), "--power", power]
    memory, engine = same_answer(argv, tmp_path, capsys)
    assert engine["unit"] == memory["unit"] == ("people" if power is None else "histories")
    assert engine["suppressed_persons"] == {None: 3, "all": 10, "1": 3, "2": 0}[power]  # people suppressed whole
    # the release's step suppresses the people the search found at its node (not counted again); the
    # table as written is then checked by the engine (in people the file withholds the person: its
    # check is in records, in memory)
    assert searched == [1] and len(decided) == (0 if power is None else 1)


def test_histories_too_slow_to_compare_in_memory_are_counted_node_by_node(tmp_path, capsys, monkeypatch):
    """Within ``MAX_CLASSES`` the search reads the class table into memory; when comparing its
    histories on any 2 records there would take longer than allowed (at 5·10^6 records of 5·10^5
    people: about 3 minutes against the minute, bench/NOTES.md), the engine counts each node's people
    instead, and releases what memory releases given the time."""
    import importlib

    from engine_cases import engine_answer, run_json

    from anonlib.__main__ import main
    from anonlib.workflow import engine_people

    path = tmp_path / "panel.csv"
    people_panel(5, 200, 150).drop(columns="n").to_csv(path, index=False)
    key = tmp_path / "project.key"
    key.write_text("3c" * 32 + "\n")
    key.chmod(0o600)
    argv = ["anonymize", str(path), "--shield", "age,sex", "--person", "pid", "--keep", "city", "--k", "4"]
    argv += ["--max-suppressed", "0.3", "--pseudonymize", "pid", "--key-file", str(key), "--power", "2"]
    code, in_memory, _ = run_json([*argv, "--out", str(tmp_path / "memory.csv")], capsys)
    assert code == 0 and in_memory["unit"] == "histories"
    search = importlib.import_module("anonlib.transformations.generalization.search")  # the module, not its function
    monkeypatch.setattr(search, "HISTORY_SEARCH_SECONDS", 1e-9)  # no comparison in memory is fast enough
    assert main([*argv, "--out", str(tmp_path / "refused.csv")]) == 2
    refused = capsys.readouterr().err
    assert "would take" in refused and not (tmp_path / "refused.csv").exists()
    searched = []
    monkeypatch.setattr(
        engine_people,
        "people_search",
        lambda *a, _s=engine_people.people_search, **k: searched.append(1) or _s(*a, **k),
    )
    # the same statement and table as memory's (``engine_answer``), the engine's search having run
    _, engine = engine_answer(argv, tmp_path, capsys, code, in_memory)
    assert searched == [1] and engine["suppressed_persons"] == in_memory["suppressed_persons"]


def test_past_the_limit_another_target_is_one_sentence_at_once(tmp_path, capsys, monkeypatch):
    from anonlib.__main__ import main
    from anonlib.workflow import engine_search

    monkeypatch.setattr(engine_search, "MAX_CLASSES", 10)
    path = tmp_path / "panel.csv"
    people_panel(5, 200, 150).drop(columns="n").to_csv(path, index=False)
    out = tmp_path / "out.csv"
    argv = ["anonymize", str(path), "--shield", "age,sex", "--person", "pid", "--keep", "city"]
    argv += ["--k", "4", "--power", "6"]
    key = tmp_path / "project.key"
    key.write_text("3c" * 32 + "\n")
    key.chmod(0o600)
    argv += ["--pseudonymize", "pid", "--key-file", str(key)]  # the person released: histories
    code = main([*argv, "--out", str(out), "--engine", "duckdb"])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists() and "Traceback" not in err
    assert "distinct (person, row) pairs on age, sex, more than the 10 the search brings into memory" in err
    assert "not with k = 4 people on any 6 of a person's records" in err


def test_histories_hashing_alike_send_the_walk_again_with_every_node_verified(duck, monkeypatch):
    # The walk on whole histories groups them by their hashes alone, then counts its node exactly; with
    # every history hashing alike (its records' count left to tell them apart) that count differs, and
    # the walk runs again with every node verified: the in-memory node, people and cost all the same.
    from anonlib.engine import owners as owners_module
    from anonlib.workflow import engine_people

    frame = people_panel(5, 150, 100)  # its optimum lies below the top: (4, 0, 1), 23 people suppressed
    target = ReleaseTarget(3, max_suppressed=0.3, person="pid", linked=("pid",))
    hierarchies = _hierarchies(frame)
    memory = release_search(frame, SHIELD, hierarchies, target=target, count="n")
    assert memory.levels != {a: len(h.columns) - 1 for a, h in hierarchies.items()}
    monkeypatch.setattr(owners_module, "HASH_PRIMES", (1, 1))
    asked, real = [], engine_people.owners_out
    monkeypatch.setattr(engine_people, "owners_out", lambda *a, **kw: asked.append(kw.get("verify")) or real(*a, **kw))
    found = people_search(eng.from_frame(frame, duck).with_roles({"n": "count"}), SHIELD, hierarchies, target)
    assert False in asked and True in asked  # hashed only first, then every node verified
    engine = found.result
    assert engine.levels == memory.levels
    assert (engine.suppressed_persons, engine.suppressed, found.k) == (
        memory.suppressed_persons,
        memory.suppressed,
        memory.released_k,
    )
    assert engine.utility == pytest.approx(memory.utility, rel=1e-12, abs=1e-12)


def test_a_search_on_any_2_records_is_estimated_as_the_counts_it_makes(duck, monkeypatch):
    """One count of a panel's pairs fits the limit, the search's ``SEARCH_COUNTS`` do not: the search is refused at
    once in one sentence (before any node is counted), while ``sharing`` still counts once."""
    from anonlib.core import histories
    from anonlib.core.errors import ProblemTooLargeError
    from anonlib.engine.owners import SEARCH_COUNTS, sharing

    frame = people_panel(3, 40, 30)
    table = eng.from_frame(frame, duck).with_roles({"n": "count"})
    records = frame.groupby("pid")["n"].sum()
    rows = frame.drop_duplicates(["pid", *SHIELD]).groupby("pid").size()[records.index]
    work = histories.history_work(records.to_numpy(), rows.to_numpy(), 2, engine=True)
    # one count estimated at 1000 / SEARCH_COUNTS s (the limit is 600 s), the search at SEARCH_COUNTS times that
    assert 1000 / SEARCH_COUNTS <= 600
    monkeypatch.setattr(histories, "ENGINE_SECONDS_PER_TUPLE_ITEM", 1000 / SEARCH_COUNTS / (2 * work.operations))
    assert sharing(table, SHIELD, "pid", power=2)[:, 1].sum() == frame["pid"].nunique()
    target = ReleaseTarget(2, person="pid", linked=("pid",), power=2)
    with pytest.raises(ProblemTooLargeError) as refused:
        people_search(table, SHIELD, _hierarchies(frame), target)
    assert str(refused.value) == (
        f"Comparing {work.operations:,} combinations of 2 records on the engine about {SEARCH_COUNTS} times over "
        "(the search counts each generalization it tries) would take about 17 minutes on this computer "
        "(the limit is 10 minutes); choose a smaller adversary power than 2, or fewer quasi-identifiers."
    )


def test_a_report_count_that_fails_leaves_nothing_written(tmp_path, capsys, monkeypatch):
    # the root's count for --json (the bottom of the lattice in people) runs out of the engine's
    # memory, as DuckDB did at 10^8 records at power 2: one sentence, exit 2, no release left behind
    from anonlib.__main__ import main
    from anonlib.core.errors import EngineError
    from anonlib.workflow import engine_people, engine_search

    monkeypatch.setattr(engine_search, "MAX_CLASSES", 10)

    def out_of_memory(*a, **k):
        raise EngineError("The duckdb engine could not run the query: Out of Memory Error.")

    monkeypatch.setattr(engine_people, "rows_in_classes", out_of_memory)
    path = tmp_path / "panel.csv"
    people_panel(5, 200, 150).drop(columns="n").to_csv(path, index=False)
    out = tmp_path / "out.csv"
    argv = ["anonymize", str(path), "--shield", "age,sex", "--person", "pid", "--keep", "city", "--k", "4"]
    code = main([*argv, "--max-suppressed", "0.3", "--out", str(out), "--json", "--engine", "duckdb"])
    err = capsys.readouterr().err
    assert code == 2 and "Out of Memory Error" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["panel.csv"]  # nothing written, no temporary left
