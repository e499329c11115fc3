"""The optimal search when records link (the person column released: a person's whole history, or
any m of their records; a household's members together): on random panels it equals a brute force
that generalizes every node literally and judges each person's history with plain Python
multisets, suppressing whole people until nothing fails; its release is recounted with pandas."""

from __future__ import annotations

import itertools
from collections import Counter

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonlib.core.errors import NoSolutionError
from anonlib.core.hierarchy import flat_hierarchy, interval_hierarchy
from anonlib.measures.target import ReleaseTarget
from anonlib.measures.utility import loss
from anonlib.transformations.generalization import GeneralizationSpace, release_search
from tests.transformations.test_generalization_people import literal

QIS = ["year", "job"]


def histories(table: pd.DataFrame, owner: str) -> dict[str, Counter]:
    return {p: Counter(map(tuple, rows[QIS].astype(str).to_numpy())) for p, rows in table.groupby(owner)}


def failing(hs: dict[str, Counter], k: int, power: int | None) -> set[str]:
    """The owners whose history (power None) or one of whose sub-multisets of min(power, size)
    records is shared by (contained in) fewer than k owners' histories."""
    out = set()
    for p, h in hs.items():
        if power is None:
            shared = sum(1 for g in hs.values() if g == h)
        else:
            size = min(power, sum(h.values()))
            subs = {tuple(s) for s in itertools.combinations(sorted(h.elements()), size)}
            shared = min(sum(1 for g in hs.values() if all(g[c] >= n for c, n in Counter(s).items())) for s in subs)
        if shared < k:
            out.add(p)
    return out


def released_by_reference(table: pd.DataFrame, owner: str, k: int, power: int | None) -> set[str]:
    """Owners suppressed: the failing ones, again on what is left, until nothing fails."""
    gone: set[str] = set()
    while True:
        left = table[~table[owner].isin(gone)]
        if left.empty:
            return gone
        more = failing(histories(left, owner), k, power)
        if not more:
            return gone
        gone |= more


def brute_force(frame, hierarchies, k, limit, power, owner="pid"):
    owners = frame[owner].nunique()
    found = []
    for levels in itertools.product(*(range(hierarchies[a].shape[1]) for a in QIS)):
        table = literal(frame, hierarchies, dict(zip(QIS, levels)))
        gone = released_by_reference(table, owner, k, power)
        if len(gone) <= limit * owners + 1e-9 * owners:
            kept = ~table[owner].isin(gone)
            found.append((loss(frame, table[kept], QIS, hierarchies), levels, gone))
    if not found:
        return None
    least = min(v for v, _, _ in found)
    ties = [(sum(levels), levels, value, gone) for value, levels, gone in found if value <= least + 1e-12]
    _, levels, value, gone = min(ties, key=lambda t: (t[0], t[1]))
    return levels, value, gone


def hierarchies_of(frame):
    return {
        "year": interval_hierarchy(frame["year"], [[(1980, 1982), (1982, 1984)]], top=True),
        "job": flat_hierarchy(sorted(set(frame["job"]))),
    }


@st.composite
def panels(draw, households: bool = False):
    """A few people, each seen in one to four years, their job changing now and then."""
    rows = []
    for p in range(draw(st.integers(2, 9))):
        job = draw(st.sampled_from(["a", "b", "c"]))
        household = f"h{draw(st.integers(0, 3))}"
        for year in draw(st.lists(st.integers(1980, 1983), min_size=1, max_size=4)):
            if draw(st.booleans()):
                job = draw(st.sampled_from(["a", "b", "c"]))
            rows.append({"pid": f"p{p}", "hh": household, "year": year, "job": job})
    return pd.DataFrame(rows)


@settings(max_examples=40, deadline=None)
@given(frame=panels(), k=st.integers(2, 3), limit=st.sampled_from([0.0, 0.3]), power=st.sampled_from([None, 2]))
def test_the_optimal_search_on_histories_equals_brute_force(frame, k, limit, power):
    hierarchies = hierarchies_of(frame)
    target = ReleaseTarget(k, max_suppressed=limit, person="pid", linked=("pid",), power=power)
    expected = brute_force(frame, hierarchies, k, limit, power)
    if expected is None:
        with pytest.raises(NoSolutionError):
            release_search(frame, QIS, hierarchies, "optimal", target=target)
        return
    levels, value, gone = expected
    result = release_search(frame, QIS, hierarchies, "optimal", target=target)
    assert tuple(result.levels.values()) == levels
    assert result.utility == pytest.approx(value, abs=1e-12)
    assert set(frame["pid"]) - set(result.table["pid"]) == gone == set(frame["pid"]) - set(result.table["pid"])
    assert result.suppressed_persons == len(gone)
    # pandas on the released table: every person's history passes as the reference judges it
    assert not failing(histories(result.table, "pid"), k, power)


@settings(max_examples=25, deadline=None)
@given(frame=panels(), k=st.integers(2, 3), power=st.sampled_from([None, 2]))
def test_every_node_of_the_space_judges_histories_as_the_reference(frame, k, power):
    hierarchies = hierarchies_of(frame)
    target = ReleaseTarget(k, max_suppressed=1.0, person="pid", linked=("pid",), power=power)
    space = GeneralizationSpace(frame, QIS, hierarchies, target=target)
    for levels in itertools.product(*(range(m + 1) for m in space.max_levels)):
        table = literal(frame, hierarchies, dict(zip(QIS, levels)))
        gone = released_by_reference(table, "pid", k, power)
        assert space.suppressed_in_unit(levels) == len(gone), levels
        assert set(frame["pid"][space.failing_records(levels)]) == gone, levels


@settings(max_examples=25, deadline=None)
@given(frame=panels(), k=st.integers(2, 3), limit=st.sampled_from([0.0, 0.5]))
def test_households_are_judged_on_their_members_together(frame, k, limit):
    hierarchies = hierarchies_of(frame)
    target = ReleaseTarget(k, max_suppressed=limit, household="hh", linked=("hh",))
    expected = brute_force(frame, hierarchies, k, limit, None, owner="hh")
    if expected is None:
        with pytest.raises(NoSolutionError):
            release_search(frame, QIS, hierarchies, "optimal", target=target)
        return
    levels, value, gone = expected
    result = release_search(frame, QIS, hierarchies, "optimal", target=target)
    assert tuple(result.levels.values()) == levels
    assert set(frame["hh"]) - set(result.table["hh"]) == gone
    signatures = histories(result.table, "hh")
    assert all(sum(1 for g in signatures.values() if g == h) >= k for h in signatures.values())


def test_coarser_history_release_keeps_at_least_as_much_with_power_two():
    """Power 2 asks less than the whole history: the optimum keeps at least as much."""
    rows = [
        {"pid": f"p{p}", "year": 1980 + y, "job": "abc"[(p + y * (p % 3)) % 3]} for p in range(30) for y in range(4)
    ]
    frame = pd.DataFrame(rows)
    hierarchies = hierarchies_of(frame)
    whole = release_search(
        frame, QIS, hierarchies, "optimal", target=ReleaseTarget(3, person="pid", linked=("pid",), max_suppressed=0.1)
    )
    pairs = release_search(
        frame,
        QIS,
        hierarchies,
        "optimal",
        target=ReleaseTarget(3, person="pid", linked=("pid",), max_suppressed=0.1, power=2),
    )
    assert pairs.utility <= whole.utility
