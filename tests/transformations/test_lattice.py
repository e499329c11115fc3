"""Policy-lattice chains and pruned clauses in O(bits) memory: the same chains as the
old (bits x bits) construction for fixed seeds, and the packed clause masks equal a
plain boolean reference."""

from __future__ import annotations

import tracemalloc

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from anonlib.transformations.frontier.policy_lattice import (
    Chain,
    PrunedSublattices,
    Sublattice,
    is_chain,
    is_maximal_chain,
    random_maximal_chain,
    random_sublattice,
)


def old_random_chain(sub: Sublattice, rng: np.random.Generator) -> np.ndarray:
    """The construction chains replaced: (bits + 1) x bits boolean masks."""
    free = sub.free.nonzero()[0]
    order = rng.permutation(free)
    chain = np.repeat(sub.lower[None, :], len(order) + 1, axis=0)
    steps = np.arange(1, len(order) + 1)
    cleared = steps[:, None] > np.arange(len(order))[None, :]
    chain[1:, order] = ~cleared
    return chain


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 60), st.integers(0, 10_000), st.booleans())
def test_chains_equal_the_old_construction_for_fixed_seeds(n_bits, seed, whole):
    rng = np.random.default_rng(seed)
    sub = Sublattice(np.zeros(n_bits, bool), np.ones(n_bits, bool)) if whole else random_sublattice(n_bits, {}, rng)
    state = rng.bit_generator.state
    chain = sub.random_chain(rng)
    rng.bit_generator.state = state
    old = old_random_chain(sub, rng)
    assert isinstance(chain, Chain) and chain.shape == old.shape
    assert (np.array(chain) == old).all()
    assert all((p == q).all() for p, q in zip(chain, old))  # iteration
    for k in (0, len(old) - 1, len(old) // 2, -1):
        assert (chain[k] == old[k]).all()  # indexing
    for part in (slice(1, -1), slice(None, None, -1), slice(len(old) - 1, 0, -2), slice(2, None, 3)):
        assert (np.array(chain[part]).reshape(-1, n_bits) == old[part]).all()  # views, walked both ways
    assert chain[0].tolist() == sub.lower.tolist() and chain[-1].tolist() == sub.upper.tolist()
    assert is_chain(list(chain[::-1]))
    if whole:
        assert is_maximal_chain(list(chain[::-1]))
        assert (
            random_maximal_chain(n_bits, np.random.default_rng(seed)).order
            == np.random.default_rng(seed).permutation(n_bits)
        ).all()


def test_a_walk_over_a_wide_lattice_takes_memory_linear_in_bits():
    """33,000 bits (all US ZIP areas): the old masks took about 3 GB, a walk now a few arrays of b."""
    bits = 33_000
    tracemalloc.start()
    chain = random_maximal_chain(bits, np.random.default_rng(0))
    ones = 0
    for i, policy in enumerate(chain[::1000]):  # noqa: B007 (i is read after the loop)
        ones += int(policy.sum())
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert i == 33 and ones == sum(bits - 1000 * j for j in range(34))
    assert peak < 40 * bits  # the order (8 bytes a bit) and a few boolean policies


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 30), st.integers(0, 40), st.integers(0, 10_000))
def test_packed_clauses_equal_a_boolean_reference(n_bits, n_clauses, seed):
    rng = np.random.default_rng(seed)
    pruned = PrunedSublattices(n_bits)
    ones, zeros = [], []
    for _ in range(n_clauses):
        sub = random_sublattice(n_bits, {}, rng)
        pruned.add(sub)
        ones.append(sub.fixed_ones)
        zeros.append(sub.fixed_zeros)
    assert len(pruned) == n_clauses
    for bit in range(n_bits):
        assert pruned.satisfied_by((bit, 0)).tolist() == [bool(o[bit]) for o in ones]
        assert pruned.satisfied_by((bit, 1)).tolist() == [bool(z[bit]) for z in zeros]


def test_snl_gives_up_after_max_draws():
    """The paper's example needs two literals: one draw is not enough, and SNL says so with None
    instead of searching on (a nearly covered lattice can take millions of draws)."""
    from anonlib.transformations.frontier.policy_lattice import (
        PrunedSublattices,
        Sublattice,
        parse,
        search_non_overlapping,
    )

    pruned = PrunedSublattices(5)
    pruned.add(Sublattice(parse("00000"), parse("11110")))
    pruned.add(Sublattice(parse("00101"), parse("11111")))
    pruned.add(Sublattice(parse("00100"), parse("10101")))
    assert search_non_overlapping(pruned, np.random.default_rng(3), max_draws=1) is None
    assert sorted(search_non_overlapping(pruned, np.random.default_rng(3)).items()) == [(2, 0), (4, 1)]
