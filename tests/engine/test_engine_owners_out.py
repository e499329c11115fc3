"""The owners a node suppresses, counted by the engine (``anonlib.engine.owners_out``), equal a
slow, obviously-correct reference: Python dictionaries over the records, a person's history a
``Counter`` of (class, records), the people rule applied again until nothing fails. Random
panels with blanks and a count column, random coarsenings of their rows, k 2-4; and the hashes
forced to collide (every history hashing alike) changes nothing."""

from __future__ import annotations

from collections import Counter, defaultdict
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from engine_cases import QIS, panels
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonlib import engine as eng
from anonlib.engine import owners as owners_module
from anonlib.engine import owners_out as owners_out_module
from anonlib.engine.owners_out import Finer, owner_rows, owners_out

PRIMES = owners_module.HASH_PRIMES


@pytest.fixture(scope="module")
def duck():
    with eng.connect("duckdb", memory_limit="1GB") as engine:
        yield engine


def _row_key(values) -> tuple:
    return tuple(None if pd.isna(v) else v for v in values)


def reference(frame: pd.DataFrame, rows: pd.DataFrame, classes: np.ndarray, k: int, histories: bool, power=None):
    """(owners, records, kept per row, paid Counter, k among the owners kept) by dictionaries over the
    records (count 0 left out); ``power`` m: on any m of a history, each owner's sub-multisets listed."""
    klass = {_row_key(r): int(c) for r, c in zip(rows[QIS].itertuples(index=False), classes)}
    at = {_row_key(r): i for i, r in enumerate(rows[QIS].itertuples(index=False))}
    pairs: dict[tuple, int] = defaultdict(int)  # (owner, row) -> records
    for pid, *values, n in frame[["pid", *QIS, "n"]].itertuples(index=False):
        if n > 0:
            pairs[(pid, _row_key(values))] += int(n)
    history: dict[str, Counter] = defaultdict(Counter)
    for (pid, row), n in pairs.items():
        history[pid][klass[row]] += n
    if power is not None:
        # every sub-multiset of each size up to m of each history (a class repeated at most m times),
        # and the size the owner is judged on: min(m, its records)
        held = {
            p: {
                t
                for size in range(1, power + 1)
                for t in combinations(sorted(c for c, n in h.items() for _ in range(min(n, power))), size)
            }
            for p, h in history.items()
        }
        judged = {p: {t for t in ts if len(t) == min(power, sum(history[p].values()))} for p, ts in held.items()}
        gone = set()
        while True:
            support = Counter(t for p, ts in held.items() if p not in gone for t in ts)
            failing = {p for p in held if p not in gone and min(support[t] for t in judged[p]) < k}
            if not failing:
                break
            gone |= failing
    elif histories:
        alike = Counter(frozenset(h.items()) for h in history.values())
        gone = {p for p, h in history.items() if alike[frozenset(h.items())] < k}
    else:
        gone: set = set()
        while True:
            people: dict[int, set] = defaultdict(set)
            for p, h in history.items():
                if p not in gone:
                    for c in h:
                        people[c].add(p)
            failing = {p for c, ps in people.items() if len(ps) < k for p in ps}
            if not failing:
                break
            gone |= failing
    kept = np.zeros(len(rows), dtype=np.int64)
    paid: Counter = Counter()
    for (pid, row), n in pairs.items():
        if pid in gone:
            paid[(at[row], n)] += 1
        else:
            kept[at[row]] += n
    records = sum(n for (pid, _), n in pairs.items() if pid in gone)
    left = {p: h for p, h in history.items() if p not in gone}
    if power is not None:
        smallest = min((support[t] for p in left for t in judged[p]), default=0)
    elif histories:
        smallest = min((alike[frozenset(h.items())] for h in left.values()), default=0)
    else:
        per_class = Counter(c for h in left.values() for c in h)
        smallest = min(per_class.values(), default=0)
    return len(gone), records, kept, paid, smallest


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(panels(), st.integers(2, 4), st.booleans(), st.integers(1, 3), st.booleans(), st.integers(0, 8))
def test_owners_out_equals_the_reference(duck, monkeypatch, frame, k, histories, width, collide, limit):
    # collide: every element hashes to 0 modulo 1, every owner's hashes alike, told apart exactly (set
    # at each example: the fixture's patch outlives one)
    monkeypatch.setattr(owners_module, "HASH_PRIMES", (1, 1) if collide else PRIMES)
    table = eng.from_frame(frame, duck).with_roles({"n": "count"})
    rows = owner_rows(table, QIS, "pid")
    classes = np.arange(len(rows)) % width  # a coarsening: rows fall into ``width`` classes
    found = owners_out(table, QIS, "pid", rows, classes, k, histories=histories)
    owners, records, kept, paid, smallest = reference(frame, rows, classes, k, histories)
    assert (found.owners, found.records, found.smallest) == (owners, records, smallest)
    assert found.kept.tolist() == kept.tolist()
    assert Counter({(int(a), int(w)): int(c) for a, w, c in found.paid}) == paid
    assert int(found.kept.sum()) + found.records == int(frame["n"].sum())  # every record kept or suppressed
    assert found.exact and found.verified
    if histories:
        # whole histories grouped by their linear hashes alone (a search's walk, not verified): the
        # truth with the engine's hashes; with every history hashing alike, a lower bound
        hashed = owners_out(table, QIS, "pid", rows, classes, k, histories=True, verify=False)
        assert hashed.exact and not hashed.verified
        if collide:
            assert hashed.owners <= owners and hashed.records <= records
        else:
            assert (hashed.owners, hashed.records, hashed.smallest) == (owners, records, smallest)
            assert hashed.kept.tolist() == kept.tolist()
            assert Counter({(int(a), int(w)): int(c) for a, w, c in hashed.paid}) == paid
    # a search keeping each node's (owner, class) pairs: a finer node first (a row's number modulo
    # 2·width says its number modulo width), asking only whether more than ``limit`` of its owners go:
    # its count may stop at a lower bound past the limit (hashes merge histories, a pass of the people
    # rule finds some of them), never above the truth, and is the truth when it says it is
    fine = np.arange(len(rows)) % (2 * width)
    truth = reference(frame, rows, fine, k, histories)
    limit = min(limit, truth[0] - 1)  # mostly below the truth, so that the bound has something to stop at
    finer = Finer(table)
    bounded = owners_out(table, QIS, "pid", rows, fine, k, histories=histories, enough=lambda n: n > limit, finer=finer)
    if bounded.exact:
        assert (bounded.owners, bounded.records, bounded.smallest) == (truth[0], truth[1], truth[4])
    else:
        assert limit < bounded.owners <= truth[0] and bounded.records <= truth[1]
    # then this node, grouped from the finer one's pairs: the same answer as from the (owner, row) pairs
    rolled = owners_out(table, QIS, "pid", rows, classes, k, histories=histories, finer=finer)
    finer.close()
    assert finer.rolled == (1 if len(set(classes)) < len(rows) else 0)  # where not each row its own class
    assert (rolled.owners, rolled.records, rolled.smallest) == (found.owners, found.records, found.smallest)
    assert rolled.kept.tolist() == found.kept.tolist()
    assert Counter(map(tuple, rolled.paid.tolist())) == Counter(map(tuple, found.paid.tolist()))


# the sub-multisets kept with their holders (``_fragile``): never (no budget), those held by k at most
# (the others' holders looked for the slow way), every one held by fewer than k + 64
FRAGILE = [(0.0, 64), (100.0, 1), (100.0, 64)]


def keep_fragile(monkeypatch, share: float, window: int) -> None:
    monkeypatch.setattr(owners_out_module, "FRAGILE_SHARE", share)
    monkeypatch.setattr(owners_out_module, "FRAGILE_WINDOW", window)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    panels(), st.integers(2, 4), st.sampled_from([2, 3]), st.integers(1, 3), st.integers(0, 8), st.sampled_from(FRAGILE)
)
def test_owners_out_on_any_m_records_equals_the_reference(duck, monkeypatch, frame, k, power, width, limit, fragile):
    keep_fragile(monkeypatch, *fragile)
    table = eng.from_frame(frame, duck).with_roles({"n": "count"})
    rows = owner_rows(table, QIS, "pid")
    classes = np.arange(len(rows)) % width
    found = owners_out(table, QIS, "pid", rows, classes, k, histories=True, power=power)
    owners, records, kept, paid, smallest = reference(frame, rows, classes, k, True, power)
    assert (found.owners, found.records, found.smallest) == (owners, records, smallest)
    assert found.kept.tolist() == kept.tolist()
    assert Counter({(int(a), int(w)): int(c) for a, w, c in found.paid}) == paid
    assert found.exact
    # asked whether the bottom fails but never failing it: counted in two parts, the sub-multisets
    # led by one row in ``LEADS`` first, then the rest (every row a class: many leading rows); the truth
    bottom = np.arange(len(rows))
    parts = owners_out(table, QIS, "pid", rows, bottom, k, histories=True, power=power, enough=lambda n: False)
    owners, records, kept, _, smallest = reference(frame, rows, bottom, k, True, power)
    assert (parts.owners, parts.records, parts.smallest, parts.exact) == (owners, records, smallest, True)
    assert parts.kept.tolist() == kept.tolist()
    # asked only whether more than ``limit`` owners go: a lower bound past it, else the truth
    fine = np.arange(len(rows)) % (2 * width)
    truth = reference(frame, rows, fine, k, True, power)
    limit = min(limit, truth[0] - 1)
    bounded = owners_out(table, QIS, "pid", rows, fine, k, histories=True, power=power, enough=lambda n: n > limit)
    if bounded.exact:
        assert (bounded.owners, bounded.records, bounded.smallest) == (truth[0], truth[1], truth[4])
    else:
        assert limit < bounded.owners <= truth[0] and bounded.records <= truth[1]


@pytest.mark.parametrize("fragile", FRAGILE)
def test_removing_owners_on_any_2_records_cascades(duck, monkeypatch, fragile):
    keep_fragile(monkeypatch, *fragile)
    # k 2: b alone holds {1, 3} and goes first; then a alone holds {1, 2}, and goes; c and d share {3, 4}
    frame = pd.DataFrame({"pid": list("aabbbccdd"), "age": [1, 2, 1, 2, 3, 3, 4, 3, 4]})
    table = eng.from_frame(frame, duck)
    rows = owner_rows(table, ["age"], "pid")
    found = owners_out(table, ["age"], "pid", rows, np.arange(len(rows)), 2, histories=True, power=2)
    assert (found.owners, found.records, found.smallest) == (2, 5, 2)
    assert dict(zip(rows["age"].tolist(), found.kept.tolist())) == {1: 0, 2: 0, 3: 2, 4: 2}


@pytest.mark.parametrize("fragile", FRAGILE)
def test_a_later_pass_looks_at_each_row_of_a_sub_multiset_below_k(duck, monkeypatch, fragile):
    keep_fragile(monkeypatch, *fragile)
    # k 2: b alone holds {1, 5} and goes first; then a alone holds {5, 6}, whose rows c, d, e and f
    # hold too ({5, 7} and {6, 8} twice): a is found on both rows of {5, 6}, and goes
    frame = pd.DataFrame(
        {"pid": list("aabbbccddeeff"), "age": [5, 6, 1, 5, 6, 5, 7, 5, 7, 6, 8, 6, 8]}
    )  # fmt: skip
    table = eng.from_frame(frame, duck)
    rows = owner_rows(table, ["age"], "pid")
    found = owners_out(table, ["age"], "pid", rows, np.arange(len(rows)), 2, histories=True, power=2)
    assert (found.owners, found.records, found.smallest) == (2, 5, 2)
    assert dict(zip(rows["age"].tolist(), found.kept.tolist())) == {1: 0, 5: 2, 6: 2, 7: 2, 8: 2}


def test_a_worked_node(duck):
    # a and b were seen at 30 and 31, c at 30 and 32; d at 31 only
    frame = pd.DataFrame({"pid": list("aabbccd"), "age": [30, 31, 30, 31, 30, 32, 31], "n": [1] * 7})
    table = eng.from_frame(frame, duck).with_roles({"n": "count"})
    rows = owner_rows(table, ["age"], "pid")
    assert sorted(rows["age"].tolist()) == [30, 31, 32] and rows["anonlib_weight"].tolist() == [
        {30: 3, 31: 3, 32: 1}[a] for a in rows["age"]
    ]
    exact = np.arange(len(rows))
    # in people, k 2: 32 holds c alone, c goes; then 30 holds a and b, 31 a, b and d: nothing more
    people = owners_out(table, ["age"], "pid", rows, exact, 2, histories=False)
    assert (people.owners, people.records) == (1, 2)
    # on whole histories: a and b share {30, 31}; c and d are alone
    whole = owners_out(table, ["age"], "pid", rows, exact, 2, histories=True)
    assert (whole.owners, whole.records) == (2, 3)
    by_age = dict(zip(rows["age"].tolist(), whole.kept.tolist()))
    assert by_age == {30: 2, 31: 2, 32: 0}


@pytest.mark.parametrize("packed", [True, False])
def test_a_sub_multiset_below_k_is_anchored_on_its_rarest_row(duck, packed):
    # rows 1, 3 and 4 are held by 5, 2 and 7 owners: {1, 3} and {1, 1, 3} are looked for among the
    # holders of 3, {1, 4} among those of 1, {4} among those of 4
    from anonlib.engine.owners import PART, SHARED
    from anonlib.engine.owners_out import ANCHOR, _anchored

    values, power = 10, 3
    sets = [(1,), (3,), (4,), (1, 3), (1, 1, 3), (1, 4), (4,)]
    counts = [5, 2, 7, 1, 1, 1, 7]
    if packed:
        label = ("anonlib_label",)
        labels = {label[0]: [int("".join(map(str, s))) for s in sets]}  # in base 10: the rows as digits
    else:
        label = tuple(f"anonlib_k{j}" for j in range(power))
        labels = {c: [s[j] if j < len(s) else -1 for s in sets] for j, c in enumerate(label)}
    frame = pd.DataFrame({PART: [len(s) for s in sets], **labels, SHARED: counts})
    held = eng.from_frame(frame.iloc[:6], duck).raw
    below = eng.from_frame(frame.iloc[3:].drop(columns=SHARED), duck).raw
    found = duck.run(_anchored(below, held, label, values, power)).to_pandas().sort_values([PART, *label])
    assert found[ANCHOR].tolist() == [4, 3, 1, 3]  # {4}; {1, 3}, {1, 4}; {1, 1, 3}
