"""The generalization searches with a person column: classes counted in distinct people, a
person failing anywhere suppressed with all their records, the suppression limit a share of
people. The optimal search equals a brute force built on ``acceptance(..., person=)`` and the
loss measured on each node's released table; its released table is recounted with pandas."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonlib.core.default_hierarchy import default_hierarchy
from anonlib.core.errors import ColumnError, NoSolutionError
from anonlib.core.hierarchy import flat_hierarchy, interval_hierarchy
from anonlib.measures.models import ModelRequirement, acceptance
from anonlib.measures.target import ReleaseTarget
from anonlib.measures.utility import loss
from anonlib.transformations.generalization import GeneralizationSpace, search
from tests.health_data import history_sharing, visits


def literal(frame: pd.DataFrame, hierarchies, levels: dict[str, int]) -> pd.DataFrame:
    """Each quasi-identifier replaced by its level-j value, read off the hierarchy with a dict."""
    out = frame.copy()
    for attribute, level in levels.items():
        h = hierarchies[attribute].astype(str)
        mapping = dict(zip(h[0], h[level]))
        out[attribute] = [mapping[str(v)] for v in frame[attribute]]
    return out


def brute_force(frame, qis, k, hierarchies, person, max_suppressed, requirements=()):
    """Every node generalized literally, judged by acceptance(person=), its loss measured on the
    records it releases; the least loss, ties to fewer levels, then the smaller level vector."""
    found = []
    for levels in itertools.product(*(range(hierarchies[a].shape[1]) for a in qis)):
        table = literal(frame, hierarchies, dict(zip(qis, levels)))
        try:
            verdict = acceptance(
                table, qis, k=k, max_suppressed=max_suppressed, person=person, requirements=requirements
            )
        except Exception:  # a model that cannot be judged on what is left
            continue
        if verdict.acceptable:
            value = loss(frame, table[verdict.kept], qis, hierarchies)
            found.append((value, levels, verdict))
    if not found:
        return None
    least = min(v for v, _, _ in found)
    ties = [(sum(levels), levels, value, verdict) for value, levels, verdict in found if value <= least + 1e-12]
    _, levels, value, verdict = min(ties, key=lambda t: (t[0], t[1]))
    return levels, value, verdict


def hierarchies_of(frame: pd.DataFrame, qis: list[str]) -> dict[str, pd.DataFrame]:
    out = {}
    for q in qis:
        values = sorted(set(frame[q].astype(str)))
        if q == "age":
            out[q] = interval_hierarchy(frame[q], [[(0, 40), (40, 120)]], top=True)
        else:
            out[q] = flat_hierarchy(values)
    return out


@st.composite
def longitudinal(draw):
    """A few people, each with one to four visits whose age may differ between visits."""
    people = draw(st.integers(2, 10))
    rows = []
    for p in range(people):
        sex = draw(st.sampled_from(["F", "M"]))
        zip_code = draw(st.sampled_from(["370", "372", "381"]))
        for _ in range(draw(st.integers(1, 4))):
            rows.append({"pid": f"p{p}", "age": draw(st.integers(20, 70)), "sex": sex, "zip": zip_code})
    return pd.DataFrame(rows)


@settings(max_examples=60, deadline=None)
@given(frame=longitudinal(), k=st.integers(2, 3), limit=st.sampled_from([0.0, 0.2, 0.5]))
def test_the_optimal_search_with_people_equals_brute_force(frame, k, limit):
    qis = ["age", "sex", "zip"]
    hierarchies = hierarchies_of(frame, qis)
    expected = brute_force(frame, qis, k, hierarchies, "pid", limit)
    if expected is None:
        with pytest.raises(NoSolutionError):
            search(frame, qis, k, hierarchies, "optimal", max_suppressed=limit, person="pid")
        return
    levels, value, verdict = expected
    result = search(frame, qis, k, hierarchies, "optimal", max_suppressed=limit, person="pid")
    assert tuple(result.levels.values()) == levels
    assert result.utility == pytest.approx(value, abs=1e-12)
    assert result.suppressed == verdict.suppressed_records and result.suppressed_persons == verdict.suppressed_persons
    table = result.table
    assert result.released_k == (table.groupby(qis)["pid"].nunique().min() if len(table) else 0)
    gone = set(frame["pid"]) - set(table["pid"])  # whole people suppressed: none is left half
    assert not (set(table["pid"]) & gone) and len(gone) == result.suppressed_persons


@settings(max_examples=40, deadline=None)
@given(frame=longitudinal(), k=st.integers(2, 3), limit=st.sampled_from([0.0, 0.3]))
def test_every_node_counts_people_as_acceptance_does(frame, k, limit):
    """The space's one rule, node by node, against acceptance(person=) on the literal table."""
    qis = ["age", "sex", "zip"]
    hierarchies = hierarchies_of(frame, qis)
    space = GeneralizationSpace(frame, qis, hierarchies, target=ReleaseTarget(k, max_suppressed=limit, person="pid"))
    reference = GeneralizationSpace(
        frame, qis, hierarchies, target=ReleaseTarget(k, max_suppressed=limit, person="pid"), rollup=False
    )
    for levels in itertools.product(*(range(m + 1) for m in space.max_levels)):
        verdict = acceptance(
            literal(frame, hierarchies, dict(zip(qis, levels))), qis, k=k, max_suppressed=limit, person="pid"
        )
        expected = (verdict.acceptable, verdict.suppressed_records)
        assert space.status(levels, cost=False)[:2] == expected, levels
        assert reference.status(levels, cost=False)[:2] == expected, levels
        assert (space.failing_records(levels) == ~np.asarray(verdict.kept)).all(), levels


def test_people_change_the_answer_on_a_longitudinal_extract():
    """Five visits of one patient are not five people: with the person column the search must
    generalize further (or suppress more) than counting visits would, and every class it
    releases holds at least k distinct patients."""
    frame = visits(seed=3, people=80)
    qis = ["age", "sex", "zip"]
    hierarchies = {
        "age": default_hierarchy(frame["age"], "age")[1],
        "sex": flat_hierarchy(["F", "M"]),
        "zip": pd.DataFrame([[z, z[:3] + "**", "*****"] for z in sorted(set(frame["zip"]))]),
    }
    by_visit = search(frame, qis, 5, hierarchies, "optimal", max_suppressed=0.05)
    by_person = search(frame, qis, 5, hierarchies, "optimal", max_suppressed=0.05, person="mrn")
    assert by_person.released_k == by_person.table.groupby(qis)["mrn"].nunique().min() >= 5
    assert by_visit.table.groupby(qis)["mrn"].nunique().min() < 5  # counting visits leaves classes of fewer people
    assert by_person.utility > by_visit.utility


def test_a_person_column_must_name_every_record():
    frame = pd.DataFrame({"age": [30, 31, 32], "pid": ["a", None, "b"]})
    with pytest.raises(ColumnError, match="blank"):
        search(frame, ["age"], 2, {"age": flat_hierarchy([30, 31, 32])}, "optimal", person="pid")
    with pytest.raises(ColumnError, match="person column"):
        search(frame.fillna("c"), ["age"], 2, {"age": flat_hierarchy([30, 31, 32])}, "optimal", person="age")


def test_people_with_a_model_are_judged_on_what_is_left():
    """With l-diversity the iterated suppression also re-judges the model on the people left;
    the search's node equals the brute force's."""
    rng = np.random.default_rng(7)
    rows = []
    for p in range(14):
        for _ in range(int(rng.integers(1, 3))):
            rows.append(
                {
                    "pid": f"p{p}",
                    "age": int(rng.integers(20, 70)),
                    "sex": str(rng.choice(["F", "M"])),
                    "dx": str(rng.choice(["a", "b", "c"])),
                }
            )
    frame = pd.DataFrame(rows)
    qis = ["age", "sex"]
    hierarchies = hierarchies_of(frame, qis)
    requirements = [ModelRequirement("distinct_l", "dx", 2)]
    expected = brute_force(frame, qis, 2, hierarchies, "pid", 0.3, requirements)
    result = search(frame, qis, 2, hierarchies, "optimal", max_suppressed=0.3, person="pid", requirements=requirements)
    assert expected is not None and tuple(result.levels.values()) == expected[0]
    assert result.utility == pytest.approx(expected[1], abs=1e-12)


def test_anonymize_with_a_person_column_states_people_measured_on_the_file_written(tmp_path, capsys):
    """`anonymize --person mrn --pseudonymize mrn`: the search counts people, and k and the
    people suppressed in --json are those of the written file (pseudonyms stand for people)."""
    import json

    from anonlib.cli import main

    source = tmp_path / "visits.csv"
    visits(seed=1, people=150).to_csv(source, index=False)
    out = tmp_path / "released.csv"
    argv = [
        "anonymize",
        str(source),
        "--shield",
        "age,sex,zip",
        "--keep",
        "visit_date,discharge_date",
        "--k",
        "5",
        "--max-suppressed",
        "0.05",
        "--person",
        "mrn",
        "--pseudonymize",
        "mrn",
        "--key-file",
        str(tmp_path / "k.key"),
        "--out",
        str(out),
        "--json",
    ]
    assert main(argv) == 0
    stated = json.loads(capsys.readouterr().out)
    written = pd.read_csv(out, dtype=str)
    # the person column released as a pseudonym: k counts the people sharing each whole history
    assert stated["unit"] == "histories"
    assert stated["k"] == history_sharing(written, ["age", "sex", "zip"], "mrn").min() >= 5
    assert stated["persons"] == 150 and stated["released_persons"] == written["mrn"].nunique()
    assert stated["suppressed"] == stated["suppressed_persons"] == 150 - written["mrn"].nunique()
    assert stated["records"] == len(pd.read_csv(source))
    assert stated["suppressed_records"] == len(pd.read_csv(source)) - len(written)
