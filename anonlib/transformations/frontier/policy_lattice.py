"""The policy lattice of Xia et al. (2013): policies as bit-strings.

A domain of ``n`` totally ordered values has ``n - 1`` boundaries; a policy keeps
(bit 1) or removes (bit 0) each boundary, so it cuts the domain into contiguous
intervals. A policy over several attributes is the concatenation of their
bit-strings. All ones is *bottom* (the original data), all zeros is *top*
(everything merged).

- ``alpha`` precedes ``beta`` (``alpha`` is more general, Definition 3.3) when
  every 1 of ``alpha`` is a 1 of ``beta`` and ``beta`` has at least one more 1.
- ``alpha`` is a GLB of ``beta`` (Definition 3.4) when they differ in exactly one
  bit, which is 0 in ``alpha``.
- A chain (Definition 3.5) is a sequence in which each policy is a GLB of the
  next; it is maximal when it runs from top to bottom.
- ``sublattice(alpha, beta)`` (Definition 3.6) is every policy between an upper
  policy ``alpha`` and a lower policy ``beta`` (both included, as in the paper's
  example). Its policies share the 1s of ``alpha`` and the 0s of ``beta``; the
  other bits are free.
- The Appendix turns each pruned sublattice into a clause (the negation of its
  fixed bits) and finds a new sublattice satisfying every clause with a
  depth-first literal search (Algorithm 3, "SNL").

Bit-strings are numpy boolean arrays here; ``parse`` reads ``"0101"`` or a
sequence of 0/1.

Example (the paper's Figure 3):
    >>> chain = [parse(p) for p in ("0000", "1000", "1100", "1110", "1111")]
    >>> is_maximal_chain(chain)
    True
    >>> sorted(show(p) for p in Sublattice(parse("0001"), parse("1011")).members())
    ['0001', '0011', '1001', '1011']
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from collections.abc import Sequence as SequenceABC
from dataclasses import dataclass

import numpy as np

from ...core.errors import ParameterError


def parse(bits: str | Sequence[int] | np.ndarray) -> np.ndarray:
    """A bit-string as a boolean array, from ``"0101"`` or a sequence of 0/1.

    >>> parse("0101").tolist(), parse([1, 0]).tolist()
    ([False, True, False, True], [True, False])
    """
    if isinstance(bits, str):
        if set(bits) - {"0", "1"}:
            raise ParameterError(f"A policy bit-string holds only 0 and 1; got '{bits}'.")
        return np.frombuffer(bits.encode("ascii"), dtype=np.uint8) == ord("1")
    array = np.asarray(bits)
    if array.ndim != 1:
        raise ParameterError("A policy bit-string must be a flat sequence of 0s and 1s.")
    if array.dtype != bool:
        if array.size and not np.isin(array, (0, 1)).all():
            raise ParameterError("A policy bit-string holds only 0 and 1.")
        array = array.astype(bool)
    return array


def show(bits: np.ndarray) -> str:
    """The bit-string as text.

    >>> show(parse([0, 1, 1]))
    '011'
    """
    return "".join("1" if b else "0" for b in np.asarray(bits, dtype=bool))


def precedes(alpha: np.ndarray, beta: np.ndarray) -> bool:
    """``alpha`` strictly precedes ``beta`` (``alpha`` is more general; Definition 3.3).

    >>> precedes(parse("0001"), parse("1011")), precedes(parse("1011"), parse("0001"))
    (True, False)
    """
    alpha, beta = parse(alpha), parse(beta)
    return bool(np.all(~alpha | beta) and np.any(~alpha & beta))


def is_glb(alpha: np.ndarray, beta: np.ndarray) -> bool:
    """``alpha`` is a greatest lower bound of ``beta``: one bit differs, 0 in ``alpha``.

    >>> is_glb(parse("0100"), parse("0110")), is_glb(parse("0000"), parse("0110"))
    (True, False)
    """
    alpha, beta = parse(alpha), parse(beta)
    differ = alpha != beta
    return bool(differ.sum() == 1 and not alpha[differ][0])


def is_chain(policies: Sequence[np.ndarray]) -> bool:
    """Each policy is a GLB of the next (Definition 3.5).

    >>> is_chain([parse("00"), parse("01"), parse("11")])
    True
    """
    return all(is_glb(a, b) for a, b in zip(policies, policies[1:]))


def is_maximal_chain(policies: Sequence[np.ndarray]) -> bool:
    """A chain from top (all 0) to bottom (all 1).

    >>> is_maximal_chain([parse("01"), parse("11")])
    False
    """
    if not policies:
        return False
    return bool(is_chain(policies) and not parse(policies[0]).any() and parse(policies[-1]).all())


@dataclass(frozen=True, eq=False)
class Sublattice:
    """Every policy between ``upper`` (more general) and ``lower`` (more specific).

    >>> s = Sublattice(parse("00001"), parse("10101"))
    >>> s.free.nonzero()[0].tolist(), s.size
    ([0, 2], 4)
    """

    upper: np.ndarray
    lower: np.ndarray

    def __post_init__(self) -> None:
        upper, lower = parse(self.upper), parse(self.lower)
        if upper.shape != lower.shape or np.any(upper & ~lower):
            raise ParameterError(
                f"A sublattice needs an upper policy more general than its lower one; "
                f"{show(upper)} is not above {show(lower)}."
            )
        object.__setattr__(self, "upper", upper)
        object.__setattr__(self, "lower", lower)

    @property
    def fixed_ones(self) -> np.ndarray:
        """Bits that are 1 in every member (the 1s of the upper policy)."""
        return self.upper

    @property
    def fixed_zeros(self) -> np.ndarray:
        """Bits that are 0 in every member (the 0s of the lower policy)."""
        return ~self.lower

    @property
    def free(self) -> np.ndarray:
        """Bits that vary inside the sublattice."""
        return self.lower & ~self.upper

    @property
    def size(self) -> int:
        """Number of member policies, ``2 ** free bits`` (a Python integer)."""
        return 1 << int(self.free.sum())

    def contains(self, policy: np.ndarray) -> bool:
        """``upper`` precedes-or-equals ``policy`` precedes-or-equals ``lower``.

        >>> Sublattice(parse("0001"), parse("1011")).contains(parse("0011"))
        True
        """
        policy = parse(policy)
        return bool(np.all(~self.upper | policy) and np.all(~policy | self.lower))

    def members(self) -> Iterator[np.ndarray]:
        """Every member policy (only sensible for a few free bits)."""
        free = self.free.nonzero()[0]
        for values in itertools.product((False, True), repeat=len(free)):
            policy = self.upper.copy()
            policy[free] = values
            yield policy

    def clause(self) -> list[tuple[int, int]]:
        """The Appendix's clause: literals ``(bit, value)`` of which a policy
        outside this sublattice satisfies at least one.

        >>> Sublattice(parse("00001"), parse("10101")).clause()
        [(4, 0), (1, 1), (3, 1)]
        """
        ones = [(int(p), 0) for p in self.fixed_ones.nonzero()[0]]
        zeros = [(int(p), 1) for p in self.fixed_zeros.nonzero()[0]]
        return ones + zeros

    def random_chain(self, rng: np.random.Generator) -> Chain:
        """A random maximal chain of the sublattice, walked from ``lower`` up to
        ``upper`` (flip one random free 1 to 0 at each step), ``lower`` first.

        The chain is kept as ``lower`` and the random order of its free bits, so
        it takes O(bits) memory however many bits the lattice has.

        >>> chain = Sublattice(parse("0000"), parse("1111")).random_chain(np.random.default_rng(1))
        >>> is_maximal_chain(list(chain[::-1]))
        True
        """
        return Chain(self.lower, rng.permutation(self.free.nonzero()[0]))


class Chain(SequenceABC):
    """A maximal chain of a sublattice in O(bits) memory: policy ``k`` is ``lower``
    with the first ``k`` bits of ``order`` cleared (``k`` = 0 .. ``len(order)``).

    Indexing gives one policy (a new array); slicing gives a lighter view of the
    same chain; iterating builds each policy from the previous one by flipping
    the bits in between, so a walk over all b + 1 policies costs O(b) memory
    (the old (b x b) boolean matrix took 3 GB at 33k bits).

    >>> chain = Chain(parse("1111"), np.array([2, 0, 3, 1]))
    >>> [show(p) for p in chain]
    ['1111', '1101', '0101', '0100', '0000']
    >>> [show(p) for p in chain[3:0:-2]], len(chain[1:-1]), show(chain[-1])
    (['0100', '1101'], 3, '0000')
    """

    def __init__(self, lower: np.ndarray, order: np.ndarray, positions: range | None = None) -> None:
        self.lower = parse(lower)
        self.order = np.asarray(order, dtype=np.int64)
        self.positions = range(self.order.size + 1) if positions is None else positions

    def __len__(self) -> int:
        return len(self.positions)

    @property
    def shape(self) -> tuple[int, int]:
        """(policies, bits), as the matrix this chain stands for."""
        return (len(self.positions), self.lower.size)

    def policy(self, k: int) -> np.ndarray:
        """Policy ``k`` of the whole chain (``lower`` with ``order[:k]`` cleared)."""
        policy = self.lower.copy()
        policy[self.order[:k]] = False
        return policy

    def __getitem__(self, index):
        if isinstance(index, slice):
            return Chain(self.lower, self.order, self.positions[index])
        return self.policy(self.positions[index])

    def __iter__(self):
        current: np.ndarray | None = None
        previous = 0
        for k in self.positions:
            if current is None:
                current = self.policy(k)
            elif k > previous:
                current[self.order[previous:k]] = False
            else:
                current[self.order[k:previous]] = True  # the free bits are 1 in lower
            previous = k
            yield current.copy()

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        """The chain as a (policies x bits) matrix: for small chains and tests only."""
        matrix = np.array([p for p in self], dtype=bool).reshape(self.shape)
        return matrix if dtype is None else matrix.astype(dtype)


def random_maximal_chain(n_bits: int, rng: np.random.Generator) -> Chain:
    """A random maximal chain of the whole lattice, from bottom to top (RCS).

    >>> chain = random_maximal_chain(4, np.random.default_rng(0))
    >>> chain.shape, is_maximal_chain(list(chain[::-1]))
    ((5, 4), True)
    """
    return Sublattice(np.zeros(n_bits, bool), np.ones(n_bits, bool)).random_chain(rng)


class PrunedSublattices:
    """The pruned list of SHS, kept as clauses for Algorithm 3.

    Clause ``j`` is satisfied by a literal ``(p, 0)`` when bit ``p`` is a fixed 1
    of pruned sublattice ``j``, and by ``(p, 1)`` when it is a fixed 0. The masks
    are stored bit-major and packed eight clauses to a byte, so that "which
    clauses does this literal satisfy" is one contiguous row and b bits x c
    clauses take b * c / 4 bytes; each clause's literals are also kept as arrays.

    >>> pruned = PrunedSublattices(5)
    >>> pruned.add(Sublattice(parse("00001"), parse("10101")))
    >>> len(pruned), pruned.clause(0), pruned.satisfied_by((3, 1)).tolist()
    (1, [(4, 0), (1, 1), (3, 1)], [True])
    """

    def __init__(self, n_bits: int) -> None:
        self.n_bits = n_bits
        self._ones = np.zeros((n_bits, 2), dtype=np.uint8)  # bit j of row p: clause j has p as a fixed 1
        self._zeros = np.zeros((n_bits, 2), dtype=np.uint8)
        self._lengths = np.zeros(16, dtype=np.int64)
        self._literals: list[tuple[np.ndarray, np.ndarray]] = []
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def add(self, sublattice: Sublattice) -> None:
        if self._n == 8 * self._ones.shape[1]:
            grow = self._ones.shape[1]
            self._ones = np.concatenate([self._ones, np.zeros((self.n_bits, grow), np.uint8)], axis=1)
            self._zeros = np.concatenate([self._zeros, np.zeros((self.n_bits, grow), np.uint8)], axis=1)
            self._lengths = np.concatenate([self._lengths, np.zeros(8 * grow, np.int64)])
        j = self._n
        ones = np.flatnonzero(sublattice.fixed_ones)
        zeros = np.flatnonzero(sublattice.fixed_zeros)
        bit = np.uint8(0x80 >> (j & 7))  # np.unpackbits order: the first clause is the high bit
        self._ones[ones, j >> 3] |= bit
        self._zeros[zeros, j >> 3] |= bit
        bits = np.concatenate([ones, zeros])
        values = np.concatenate([np.zeros(ones.size, np.int64), np.ones(zeros.size, np.int64)])
        self._literals.append((bits, values))
        self._lengths[j] = bits.size
        self._n += 1

    def clause(self, j: int) -> list[tuple[int, int]]:
        """Literals of clause ``j`` (fixed 1s negated, then fixed 0s negated)."""
        bits, values = self._literals[j]
        return [(int(b), int(v)) for b, v in zip(bits, values)]

    def literals(self, j: int) -> tuple[np.ndarray, np.ndarray]:
        """Clause ``j``'s literals as arrays (bits, values)."""
        return self._literals[j]

    def satisfied_by(self, literal: tuple[int, int]) -> np.ndarray:
        """Which clauses the literal ``(bit, value)`` satisfies."""
        bit, value = literal
        masks = self._ones if value == 0 else self._zeros
        return np.unpackbits(masks[bit], count=self._n).astype(bool)

    def shortest(self, unsatisfied: np.ndarray) -> int:
        """Index of the shortest clause among the unsatisfied ones."""
        lengths = np.where(unsatisfied, self._lengths[: self._n], np.iinfo(np.int64).max)
        return int(lengths.argmin())


SNL_MAX_DRAWS = 20_000  # literal draws one SNL search may take (about 0.07 s) before giving up


def search_non_overlapping(
    pruned: PrunedSublattices, rng: np.random.Generator, max_draws: int = SNL_MAX_DRAWS
) -> dict[int, int] | None:
    """Algorithm 3 (SNL): literals whose conjunction satisfies every clause.

    Depth-first: take a random untried literal of the shortest unsatisfied
    clause, skip it if it conflicts with the path, and backtrack when a clause
    runs out of literals (``_LiteralDraw`` is the paper's "random literal, then
    remove it from the clause"). Returns
    ``{bit: value}`` (empty when nothing is pruned), or None when the pruned
    sublattices cover the whole lattice, or when ``max_draws`` literal draws found
    no uncovered sublattice: the depth-first search is a satisfiability search, and
    on a nearly covered lattice (a small lattice with most policies evaluated) it
    can backtrack for minutes (12 bits, 2,600 policies: 12 million draws, 86 s).

    The paper's example, ``(B4=1) and (B2=0 or B4=0) and (B1=1 or B2=0 or B3=1)``,
    written as pruned sublattices whose clauses are those three:

    >>> pruned = PrunedSublattices(5)
    >>> pruned.add(Sublattice(parse("00000"), parse("11110")))   # clause B4=1
    >>> pruned.add(Sublattice(parse("00101"), parse("11111")))   # B2=0 or B4=0
    >>> pruned.add(Sublattice(parse("00100"), parse("10101")))   # B1=1 or B2=0 or B3=1
    >>> sorted(search_non_overlapping(pruned, np.random.default_rng(3)).items())
    [(2, 0), (4, 1)]
    """
    if len(pruned) == 0:
        return {}
    path: list[int] = []
    assigned: dict[int, int] = {}
    unsatisfied = [np.ones(len(pruned), dtype=bool)]
    stack = [_LiteralDraw(*pruned.literals(pruned.shortest(unsatisfied[0])))]
    for _ in range(max_draws):
        if not stack:
            return None
        literal = stack[-1].draw(rng)
        if literal is not None:
            bit, value = literal
            if assigned.get(bit, value) != value:  # Conflict(literal, path)
                continue
            path.append(bit)
            assigned[bit] = value
            left = unsatisfied[-1] & ~pruned.satisfied_by(literal)
            unsatisfied.append(left)
            if not left.any():
                return dict(assigned)
            stack.append(_LiteralDraw(*pruned.literals(pruned.shortest(left))))
        else:  # the clause ran out of literals: undo the literal that led here
            stack.pop()
            if path:
                del assigned[path.pop()]
                unsatisfied.pop()
    return None


class _LiteralDraw:
    """A clause's literals drawn at random without replacement. The first draw
    is one random index; the rest (needed only after a conflict or a dead end)
    come from a permutation of the remaining ones."""

    def __init__(self, bits: np.ndarray, values: np.ndarray) -> None:
        self.bits, self.values = bits, values
        self.first: int | None = None
        self.rest: np.ndarray | None = None
        self.position = 0

    def draw(self, rng: np.random.Generator) -> tuple[int, int] | None:
        n = self.bits.size
        if self.first is None:
            if n == 0:
                return None
            self.first = int(rng.integers(n))
            i = self.first
        else:
            if self.rest is None:
                self.rest = rng.permutation(np.delete(np.arange(n), self.first))
            if self.position >= self.rest.size:
                return None
            i = int(self.rest[self.position])
            self.position += 1
        return int(self.bits[i]), int(self.values[i])


def random_sublattice(n_bits: int, literals: dict[int, int], rng: np.random.Generator) -> Sublattice:
    """A random sublattice whose fixed bits include ``literals`` (from SNL).

    A random maximal chain is drawn that sets the literals' 1-bits first and
    their 0-bits last; two policies on it, at random distinct levels inside the
    allowed range, become the upper and lower policies. The number of free bits
    is drawn log-uniformly, so small sublattices (cheap to probe, short chains)
    are common and large ones still occur. When ``literals`` fix every bit the
    result is that single policy.

    >>> s = random_sublattice(6, {0: 1, 5: 0}, np.random.default_rng(2))
    >>> bool(s.upper[0]), bool(s.lower[5]), int(s.free.sum()) >= 1
    (True, False, True)
    """
    ones = np.array([b for b, v in literals.items() if v == 1], dtype=np.int64)
    zeros = np.array([b for b, v in literals.items() if v == 0], dtype=np.int64)
    fixed = np.zeros(n_bits, dtype=bool)
    fixed[ones] = True
    fixed[zeros] = True
    rest = np.flatnonzero(~fixed)
    order = np.concatenate([rng.permutation(ones), rng.permutation(rest), rng.permutation(zeros)])
    span = int(np.floor(np.exp(rng.uniform(0.0, np.log(rest.size + 1)))))
    span = min(max(span, 1), rest.size)  # 0 only when every bit is fixed: a single policy
    start = len(ones) + int(rng.integers(0, rest.size - span + 1))
    upper = np.zeros(n_bits, dtype=bool)
    lower = np.zeros(n_bits, dtype=bool)
    upper[order[:start]] = True
    lower[order[: start + span]] = True
    return Sublattice(upper, lower)
