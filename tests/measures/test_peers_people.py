"""Look-alikes among other people's records: with a person column, a record's peers are the record
itself and the records of other people matching it (``anonlib.measures.peers``), checked against a
slow reference that loops over the records, on small random panels."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonlib.core.errors import ColumnError
from anonlib.core.samples import load_sample
from anonlib.measures.peers import (
    generalization_potential,
    leave_one_out,
    min_poac,
    min_ppp,
    minimum_over_subsets,
    npp,
    peer_measures,
    poac,
    pp,
    ppp,
    privacy_matrix,
)


def _reference(frame, s, known, weights, persons, measure, q):
    """The rule written plainly, one record at a time: the peers of record i are i itself (once)
    and every record of another person agreeing with i on ``known``; dom(s) is the whole table's."""
    rows = frame.to_dict("records")
    domain = sorted(set(frame[s]))
    out = []
    for i, r in enumerate(rows):
        others = [j for j, o in enumerate(rows) if persons[j] != persons[i] and all(o[c] == r[c] for c in known)]
        n_a = 1 + sum(weights[j] for j in others)
        n_sa = 1 + sum(weights[j] for j in others if rows[j][s] == r[s])
        if measure == "ppp":
            out.append(1.0 - n_sa / n_a)
        elif measure == "npp":
            out.append(n_a - n_sa)
        else:
            considered = 0
            for v in domain:
                if v != r[s] and sum(weights[j] for j in others if rows[j][s] == v) / n_a > q:
                    considered += 1
            out.append(considered / (len(domain) - 1) if len(domain) > 1 else 0.0)
    return np.array(out)


def _subsets(aux, include_empty):
    sizes = range(0 if include_empty else 1, len(aux) + 1)
    return [c for k in sizes for c in itertools.combinations(aux, k)]


@st.composite
def panels(draw, max_columns: int = 4):
    """Up to 14 records of up to 5 people, 2 to ``max_columns`` variables of 1 to 4 values, maybe counted."""
    n = draw(st.integers(1, 14))
    m = draw(st.integers(2, max_columns))
    data = {f"v{j}": draw(st.lists(st.integers(0, draw(st.integers(0, 3))), min_size=n, max_size=n)) for j in range(m)}
    data["pid"] = draw(st.lists(st.integers(0, draw(st.integers(0, 4))), min_size=n, max_size=n))
    frame = pd.DataFrame(data)
    counts = draw(st.one_of(st.none(), st.lists(st.integers(1, 3), min_size=n, max_size=n)))
    if counts is not None:
        frame["n"] = counts
    return frame, ("n" if counts is not None else None)


def _parts(frame, count):
    variables = [c for c in frame.columns if c not in ("pid", count)]
    weights = [1] * len(frame) if count is None else frame[count].tolist()
    return variables, weights, frame["pid"].tolist()


@settings(max_examples=40, deadline=None)
@given(panels(), st.booleans(), st.sampled_from([0.0, 0.2, 0.3, 0.5]))
def test_minimum_among_other_people_equals_the_reference(table, include_empty, q):
    frame, count = table
    variables, weights, persons = _parts(frame, count)
    s, aux = variables[0], variables[1:]
    subsets = _subsets(aux, include_empty)
    for measure in ("ppp", "poac"):
        each = np.vstack([_reference(frame, s, sub, weights, persons, measure, q) for sub in subsets])
        expected = each.min(axis=0)
        res = minimum_over_subsets(frame, s, aux, measure, q, include_empty=include_empty, count=count, person="pid")
        np.testing.assert_allclose(res.values, expected, rtol=0, atol=1e-12)
        for i in range(len(frame)):  # the reported worst subset attains the minimum, and no smaller one does
            attaining = [sub for k, sub in enumerate(subsets) if abs(each[k, i] - expected[i]) < 1e-12]
            assert res.worst_subset(i) in attaining
            assert len(res.worst_subset(i)) == min(len(sub) for sub in attaining)
    got = min_poac(frame, s, aux, q, include_empty=include_empty, count=count, person="pid")
    np.testing.assert_array_equal(got, res.values)


@settings(max_examples=40, deadline=None)
@given(panels(), st.sampled_from([0.0, 0.25, 0.5]))
def test_one_set_of_known_variables_equals_the_reference(table, q):
    frame, count = table
    variables, weights, persons = _parts(frame, count)
    s, known = variables[0], variables[1:]
    m = peer_measures(frame, s, known, q, count=count, person="pid")
    np.testing.assert_allclose(m.ppp, _reference(frame, s, known, weights, persons, "ppp", q), atol=1e-12)
    np.testing.assert_array_equal(m.npp, _reference(frame, s, known, weights, persons, "npp", q))
    np.testing.assert_allclose(m.poac, _reference(frame, s, known, weights, persons, "poac", q), atol=1e-12)
    np.testing.assert_array_equal(ppp(frame, s, known, count=count, person="pid"), m.ppp)
    np.testing.assert_array_equal(npp(frame, s, known, count=count, person="pid"), m.npp)
    np.testing.assert_array_equal(poac(frame, s, known, q, count=count, person="pid"), m.poac)
    # PPP is the sum of PP over the false values, among other people's records too
    total = sum(
        np.where(frame[s].to_numpy() != v, pp(frame, s, known, v, count=count, person="pid"), 0.0)
        for v in sorted(set(frame[s]))
    )
    np.testing.assert_allclose(total, m.ppp, atol=1e-12)


@settings(max_examples=20, deadline=None)
@given(panels(max_columns=4), st.sampled_from(["ppp", "poac"]), st.booleans())
def test_matrix_and_leave_one_out_among_other_people_equal_the_reference(table, measure, include_empty):
    frame, count = table
    variables, weights, persons = _parts(frame, count)
    res = privacy_matrix(frame, variables, measure, q=0.0, include_empty=include_empty, count=count, person="pid")
    for v, s in enumerate(variables):
        aux = [c for c in variables if c != s]
        each = np.vstack(
            [_reference(frame, s, sub, weights, persons, measure, 0.0) for sub in _subsets(aux, include_empty)]
        )
        np.testing.assert_allclose(res.values[v], each.min(axis=0), rtol=0, atol=1e-12)
        np.testing.assert_array_equal(res.npp[v], _reference(frame, s, aux, weights, persons, "npp", 0.0))
    s, aux = variables[0], variables[1:]
    lo = leave_one_out(frame, s, aux, measure, count=count, person="pid")
    np.testing.assert_allclose(lo.full, _reference(frame, s, aux, weights, persons, measure, 0.0), atol=1e-12)
    for j, left in enumerate(aux):
        fewer = [c for c in aux if c != left]
        np.testing.assert_allclose(
            lo.without[j], _reference(frame, s, fewer, weights, persons, measure, 0.0), atol=1e-12
        )


@settings(max_examples=25, deadline=None)
@given(panels(), st.sampled_from([0.0, 0.3]))
def test_each_record_its_own_person_changes_nothing(table, q):
    """Without a count column, a person column naming every record once is the paper's setting:
    the results are identical to those without a person column, bit for bit."""
    frame, _ = table
    frame = frame.drop(columns=[c for c in ("n",) if c in frame.columns]).assign(pid=range(len(frame)))
    variables = [c for c in frame.columns if c != "pid"]
    s, aux = variables[0], variables[1:]
    for measure in ("ppp", "poac"):
        alone = minimum_over_subsets(frame, s, aux, measure, q)
        named = minimum_over_subsets(frame, s, aux, measure, q, person="pid")
        np.testing.assert_array_equal(named.values, alone.values)
        np.testing.assert_array_equal(named.worst, alone.worst)
    np.testing.assert_array_equal(
        privacy_matrix(frame, variables, "ppp", person="pid").values, privacy_matrix(frame, variables, "ppp").values
    )


def test_a_tiny_panel_by_hand():
    """Person A visits twice at (30, F) with flu and with a cold; B once at (30, F) with flu; C twice
    at (40, M) with flu; D once at (40, M) with a cold. Counting rows, as the paper does, every record
    is protected (minimum PPP 1/3, 2/3, 1/3, 1/3, 1/3, 2/3). Among other people's records:
    - A's flu visit at (30, F): itself and B's flu: PPP 0 - protected only by A's own cold visit;
    - A's cold visit: itself and B's flu (1/2); knowing nothing: itself, B, C, C (flu), D (cold): 3/5;
    - B's flu: itself and A's two visits (1/3) - A's cold visit is another person's record for B;
    - each of C's flu visits: itself and D's cold (1/2); knowing nothing: 2 of 5 differ (2/5);
    - D's cold: itself and C's two flu visits (2/3), knowing nothing also 2/3.
    So 5 of 6 records are protected (83.3%) instead of 6 of 6."""
    df = pd.DataFrame(
        {
            "pid": list("AABCCD"),
            "age": [30, 30, 30, 40, 40, 40],
            "sex": list("FFFMMM"),
            "dx": ["flu", "cold", "flu", "flu", "flu", "cold"],
        }
    )
    rows = min_ppp(df, "dx", ["age", "sex"])
    people = min_ppp(df, "dx", ["age", "sex"], person="pid")
    np.testing.assert_allclose(rows, [1 / 3, 2 / 3, 1 / 3, 1 / 3, 1 / 3, 2 / 3])
    np.testing.assert_allclose(people, [0, 1 / 2, 1 / 3, 2 / 5, 2 / 5, 2 / 3])
    assert (rows > 0).mean() == 1.0 and (people > 0).mean() == 5 / 6
    # PoAC (q = 0): A's flu visit sees no cold among other people at (30, F)
    assert min_poac(df, "dx", ["age", "sex"], person="pid").tolist() == [0.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    assert npp(df, "dx", ["age", "sex"], person="pid").tolist() == [0, 1, 1, 1, 1, 2]
    # the bands' baseline is the same minimum
    assert generalization_potential(df, "dx", ["age", "sex"], "age", person="pid").baseline == pytest.approx(5 / 6)


def test_without_a_person_column_the_paper_s_examples_are_unchanged():
    table1 = load_sample("kroes_table1_option2").frame[["Diagnosis", "Gender", "Age"]]
    m = peer_measures(table1, "Diagnosis", ["Gender", "Age"], person=None)
    assert (m.ppp[0], m.npp[0], m.poac[0]) == (0.5, 1, 0.5)  # Alice, Example 3
    res = privacy_matrix(table1, ["Diagnosis", "Gender", "Age"], "poac", q=0.0, person=None)
    assert res.values[:, 2].tolist() == [0.0, 1.0, 0.5]  # individual 3, Fig. 1


def test_the_person_column_is_checked():
    df = pd.DataFrame({"pid": ["a", None, "b"], "s": ["x", "y", "x"], "a": [1, 1, 2]})
    with pytest.raises(ColumnError, match="blank in 1 record"):
        min_ppp(df, "s", ["a"], person="pid")
    with pytest.raises(ColumnError, match="person column"):
        min_ppp(df, "s", ["a", "pid"], person="pid")
    with pytest.raises(ColumnError, match="nope"):
        ppp(df, "s", ["a"], person="nope")
