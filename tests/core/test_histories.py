"""The history kernel (``anonlib.core.histories``) against a slow, obviously correct reference:
each owner's history as a ``Counter`` of its classes, compared by equality (power all) and by
multiset containment of every sub-multiset (power m), on random tables."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonlib.core.errors import ProblemTooLargeError
from anonlib.core.histories import check_history_work, history_ids, history_work, owners_sharing


def _histories(ids, owners, weights, n_owners):
    out = [Counter() for _ in range(n_owners)]
    for c, o, w in zip(ids, owners, weights):
        if w:
            out[o][int(c)] += int(w)
    return out


def _contains(big: Counter, small: Counter) -> bool:
    return all(big[c] >= n for c, n in small.items())


def reference_sharing(ids, owners, weights, n_owners, power):
    """Per owner: owners with the same history (power None), or the fewest owners containing
    one of its sub-multisets of min(power, |history|) records."""
    hs = _histories(ids, owners, weights, n_owners)
    out = []
    for h in hs:
        size = sum(h.values())
        if size == 0:
            out.append(0)
            continue
        if power is None:
            out.append(sum(1 for g in hs if g == h))
            continue
        m = min(power, size)
        elements = sorted(h.elements())
        subs = {tuple(s) for s in itertools.combinations(elements, m)}
        out.append(min(sum(1 for g in hs if _contains(g, Counter(s))) for s in subs))
    return out


@st.composite
def tables(draw):
    n = draw(st.integers(0, 40))
    n_owners = draw(st.integers(1, 12))
    n_classes = draw(st.integers(1, 5))
    ids = draw(st.lists(st.integers(0, n_classes - 1), min_size=n, max_size=n))
    owners = draw(st.lists(st.integers(0, n_owners - 1), min_size=n, max_size=n))
    weights = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    return np.array(ids, dtype=np.int64), n_classes, np.array(owners, dtype=np.int64), n_owners, np.array(weights)


@settings(max_examples=200, deadline=None)
@given(tables(), st.sampled_from([None, 1, 2, 3, 5]))
def test_owners_sharing_equals_the_reference(table, power):
    ids, n_classes, owners, n_owners, weights = table
    got = owners_sharing(ids, n_classes, owners, n_owners, weights, power=power).tolist()
    assert got == reference_sharing(ids, owners, weights, n_owners, power)


@settings(max_examples=100, deadline=None)
@given(tables())
def test_history_ids_group_exactly_the_equal_histories(table):
    ids, n_classes, owners, n_owners, weights = table
    hist, n = history_ids(ids, n_classes, owners, n_owners, weights)
    hs = _histories(ids, owners, weights, n_owners)
    for a in range(n_owners):
        assert (hist[a] == -1) == (sum(hs[a].values()) == 0)
        for b in range(n_owners):
            if hist[a] >= 0 and hist[b] >= 0:
                assert (hist[a] == hist[b]) == (hs[a] == hs[b])
    assert n == len({tuple(sorted(h.items())) for h in hs if h})


@settings(max_examples=100, deadline=None)
@given(tables(), st.sampled_from([None, 1, 2]), st.integers(1, 4))
def test_merging_classes_never_lowers_what_is_shared(table, power, merge):
    """Generalizing merges classes: the owners sharing a history never fall (the search's monotonicity)."""
    ids, n_classes, owners, n_owners, weights = table
    coarse = ids // merge
    fine = owners_sharing(ids, n_classes, owners, n_owners, weights, power=power)
    merged = owners_sharing(coarse, n_classes, owners, n_owners, weights, power=power)
    assert (merged >= fine).all()


def test_power_one_is_the_people_count():
    ids = np.array([0, 0, 1, 1, 2])
    owners = np.array([0, 1, 1, 2, 2])
    assert owners_sharing(ids, 3, owners, 3, power=1).tolist() == [2, 2, 1]  # the fewest people in one of its classes


def test_long_sequences_of_different_lengths_never_collide():
    """Owners whose histories end in different passes keep apart (the prefix numbers of one pass
    are reused by the next)."""
    rng = np.random.default_rng(3)
    owners = np.repeat(np.arange(300), rng.integers(1, 30, 300))
    ids = rng.integers(0, 40, len(owners))
    hist, _ = history_ids(ids, 40, owners, 300)
    hs = _histories(ids, owners, np.ones(len(ids), dtype=int), 300)
    keys = [tuple(sorted(h.items())) for h in hs]
    for a, b in itertools.combinations(range(300), 2):
        assert (hist[a] == hist[b]) == (keys[a] == keys[b])


def test_work_is_estimated_and_refused_in_one_sentence():
    assert history_work(np.array([10] * 100), power=2).operations == 45 * 100
    assert history_work(np.array([1, 3]), power=2).operations == 3 + (1 + 3)  # pairs of the 3, singles of both
    with pytest.raises(ProblemTooLargeError, match="choose a smaller adversary power than 5"):
        check_history_work(np.array([400] * 10_000), power=5)


def test_which_deliveries_a_person_is_in_is_part_of_the_cumulative_history():
    """Four people in an earlier delivery, two of them again with two newcomers, every row alike:
    a, b (both deliveries), e, f (this one only) and c, d (the earlier one only) are three pairs;
    counted without the deliveries e, f, c, d would be four alike and meet k = 3."""
    import pandas as pd

    from anonlib.core.dataset import Dataset
    from anonlib.core.histories import Earlier
    from anonlib.measures.target import ReleaseTarget

    early = pd.DataFrame({"pid": ["a", "b", "c", "d"], "age": ["30-39"] * 4, "sex": ["F"] * 4})
    earlier = Earlier.of([(early, ["age", "sex"], None)], ["pid"])
    new = pd.DataFrame({"pid": ["a", "b", "e", "f"], "age": ["30-39"] * 4, "sex": ["F"] * 4})
    ds = Dataset.from_frame("n", new, {"pid": "person", "age": "quasi-identifier", "sex": "quasi-identifier"})
    for k, met in ((2, True), (3, False)):
        target = ReleaseTarget(k=k, linked=("pid",)).in_unit_of(ds, released=["pid"]).after(earlier)
        check = target.check(ds)
        assert check.met is met
        if not met:
            assert check.persons_in_failing == 4  # e and f fail too: their absence from the earlier file
