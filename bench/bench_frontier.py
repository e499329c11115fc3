"""Risk-utility frontier benchmarks (Xia et al. 2013) on Adult + synthetic Tennessee ZIP.

Quasi-identifiers age, sex, race, zip: 72 + 1 + 4 + 604 = 681 bits (the paper
had 739 with ages 0-120 and all ZIPs). The paper's budget is 14,780 policies.
"""

from __future__ import annotations

import numpy as np

from anonlib.core.samples import load_sample
from anonlib.transformations.frontier import Frontier, explore, prepare
from anonlib.transformations.frontier.policy_lattice import random_maximal_chain, random_sublattice
from anonlib.transformations.synthetic import adult_with_zip
from bench import Benchmark

PAPER_BUDGET = 14_780
CHECKPOINTS = (100, 1_000, PAPER_BUDGET)
QIS = ["age", "sex", "race", "zip"]
SMALL_QIS = ["race", "sex", "marital-status", "relationship"]  # 4 + 1 + 6 + 5 = 16 bits


def _space():
    return prepare(adult_with_zip(), QIS)


def _chain(space):
    return space, random_maximal_chain(space.n_bits, np.random.default_rng(0))


def _score_chain(inputs) -> float:
    space, chain = inputs
    for policy in chain:
        space.evaluate(policy)
    return len(chain)


def _areas(result) -> str:
    return ", ".join(f"after {n:,}: {result.area_after(n):.4f}" for n in CHECKPOINTS if n <= result.budget)


def _search_note(result) -> str:
    return (
        f"{result.n_evaluated:,} policies, {len(result.frontier)} on the frontier, "
        f"{1000 * result.seconds / result.n_evaluated:.3f} ms/policy; area {_areas(result)}"
    )


def _compare(space) -> str:
    """Mean area of SHS and RCS after 100 and 1,000 policies over 5 seeds."""
    means = {}
    for method in ("shs", "rcs"):
        runs = [explore(space, method, 1_000, seed=seed) for seed in range(5)]
        means[method] = [np.mean([r.area_after(n) for r in runs]) for n in (100, 1_000)]
    parts = []
    for i, n in enumerate((100, 1_000)):
        shs, rcs = means["shs"][i], means["rcs"][i]
        parts.append(f"after {n:,}: SHS {shs:.4f} vs RCS {rcs:.4f} ({100 * (rcs - shs) / rcs:.0f}% smaller)")
    return "; ".join(parts)


def _heuristic_vs_empirical(space, n_sublattices: int = 150) -> str:
    """Paper Fig. 6: H of a random sublattice against the share of its random
    chain's policies that update the frontier (frontier started from a random
    maximal chain and updated as chains are walked)."""
    rng = np.random.default_rng(0)
    scale = 1.0 / space.top_loss
    frontier = Frontier()

    def score(policy):
        risk, loss = space.evaluate(policy)
        return risk, loss * scale

    for policy in random_maximal_chain(space.n_bits, rng):
        frontier.update(0, *score(policy))
    predicted, observed = [], []
    for _ in range(n_sublattices):
        sub = random_sublattice(space.n_bits, {}, rng)
        predicted.append(frontier.update_probability(score(sub.upper), score(sub.lower)))
        chain = sub.random_chain(rng)
        observed.append(sum(frontier.update(0, *score(p)) for p in chain) / len(chain))
    r = np.corrcoef(predicted, observed)[0, 1]
    return f"{n_sublattices} sublattices: Pearson r(H, E) = {r:.3f} (paper: 0.864)"


BENCHMARKS = [
    Benchmark(
        "frontier: risk+KL along a maximal chain (682 policies, Adult+ZIP)",
        682 * 0.0015,
        lambda: _chain(_space()),
        _score_chain,
        repeat=3,
        reference="target 1.5 ms per policy amortized",
    ),
    Benchmark(
        "frontier: SHS, 14,780 policies, Adult+ZIP (681 bits)",
        20.0,
        _space,
        lambda space: explore(space, "shs", PAPER_BUDGET, seed=1),
        repeat=1,
        note=_search_note,
    ),
    Benchmark(
        "frontier: RCS, 14,780 policies, Adult+ZIP (681 bits)",
        None,
        _space,
        lambda space: explore(space, "rcs", PAPER_BUDGET, seed=1),
        repeat=1,
        note=_search_note,
    ),
    Benchmark(
        "frontier: SHS vs RCS area, 5 seeds x 1,000 policies",
        None,
        _space,
        _compare,
        repeat=1,
        note=str,
        reference="paper Fig. 5: SHS about 28% better after 100",
    ),
    Benchmark(
        "frontier: SHS heuristic H vs empirical update rate (Fig. 6)",
        None,
        _space,
        _heuristic_vs_empirical,
        repeat=1,
        note=str,
    ),
    Benchmark(
        "frontier: exhaustive 2^16 policies, Adult (race, sex, marital, relationship)",
        60.0,
        lambda: prepare(load_sample("adult").frame, SMALL_QIS),
        lambda space: explore(space, "exhaustive"),
        repeat=1,
        note=lambda r: f"{r.n_evaluated:,} policies, {len(r.frontier)} on the frontier, area {r.area:.4f}",
    ),
]
