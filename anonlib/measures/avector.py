"""Anonymity vectors and generalized k-anonymity (Caballero, Sen, Nygård).

The anonymity vector of a table is ``(k(1), k(2), ..., k(m))`` where ``k(j)`` is
the number of equivalence classes of size ``j`` and ``m`` the largest class
size. Its first non-zero position is the table's k; a lexicographically
smaller vector is *more* anonymous (generalized k-anonymity).

Vectors of the same population are ranked by their lexicographic index
(``lex_index``: how many of the p(N) possible vectors are less anonymous), and
two schedules are compared by the anonymity ``improvement`` of one over the
other relative to the vector before the schedule. All counts are exact Python
integers.

Example:
    >>> anonymity_vector([4, 4, 5, 2])
    (0, 1, 0, 2, 1)
    >>> lex_index((0, 1, 0, 2, 1)), partition_count(15)
    (154, 176)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from fractions import Fraction

import flint
import numpy as np
import pandas as pd

from ..core.budget import MAX_BYTES, MAX_SECONDS, WorkEstimate, check_work
from ..core.errors import ParameterError
from ..core.numbers import MAX_COUNT, whole_number, whole_numbers


def anonymity_vector(class_sizes: Iterable[int], classes: Iterable[int] | None = None) -> tuple[int, ...]:
    """Anonymity vector of equivalence classes with the given sizes.

    Sizes of 0 are ignored; trailing zeros are dropped; an empty table gives ``()``.
    ``sum(j * v[j-1]) == sum(class_sizes)`` always holds. ``classes`` (optional)
    says how many classes have each size, as ``size_histogram`` gives them. The
    vector has one entry per size up to the largest class, so a class too large
    for memory is refused first (``estimate_anonymity_vector``).

    >>> anonymity_vector([1, 1, 3])
    (2, 0, 1)
    >>> anonymity_vector([1, 3], classes=[2, 1])
    (2, 0, 1)
    >>> anonymity_vector([])
    ()
    """
    values = (
        class_sizes
        if isinstance(class_sizes, (np.ndarray, pd.Series, list, tuple)) or np.ndim(class_sizes) == 0
        else list(class_sizes)
    )
    sizes = whole_numbers(values, "Class sizes", text=False)
    if classes is None:
        multiplicity = np.ones(sizes.shape, dtype=np.int64)
    else:
        multiplicity = np.asarray(list(classes) if not isinstance(classes, np.ndarray) else classes, dtype=np.int64)
        if multiplicity.shape != sizes.shape or (multiplicity < 0).any():
            raise ParameterError("Give one number of classes (0 or more) per class size.")
    keep = (sizes > 0) & (multiplicity > 0)
    if not keep.any():
        return ()
    sizes, multiplicity = sizes[keep], multiplicity[keep]
    largest = int(sizes.max())
    check_work(
        estimate_anonymity_vector(largest),
        narrow=f"its length is the largest class size ({largest:,} records); check the record counts",
    )
    counts = np.zeros(largest + 1, dtype=np.int64)
    np.add.at(counts, sizes, multiplicity)
    return tuple(counts[1:].tolist())


def estimate_anonymity_vector(largest_class: int) -> WorkEstimate:
    """Cost of an anonymity vector whose largest class has ``largest_class`` records:
    one entry per size (a count array, a list and the tuple: 24 bytes each).

    >>> estimate_anonymity_vector(10**9).peak_bytes > MAX_BYTES
    True
    """
    entries = int(largest_class)
    return WorkEstimate(
        f"an anonymity vector of {entries:,} entries",
        operations=entries,
        seconds=entries * 2e-8,
        peak_bytes=24 * entries,
    )


def vector_text(vector: Sequence[int], limit: int = 30) -> str:
    """An anonymity vector as text, cut after ``limit`` entries.

    >>> vector_text((0, 1, 0, 2, 1))
    '(0, 1, 0, 2, 1)'
    >>> vector_text(range(1, 40), limit=3)
    '(1, 2, 3, ...)'
    """
    entries = list(vector)
    shown = ", ".join(str(v) for v in entries[:limit])
    return f"({shown}, ...)" if len(entries) > limit else f"({shown})"


def k_of(vector: Iterable[int]) -> int:
    """k-anonymity of a vector: the position (1-based) of its first non-zero entry.

    >>> k_of((0, 1, 0, 2, 1))
    2
    >>> k_of(())
    0
    """
    for position, entry in enumerate(vector, start=1):
        if entry:
            return position
    return 0


# --- Partitions, the lexicographic index and the anonymity improvement -------------
#
# Each anonymity vector of a population of N people is a partition of N (entry j
# counts the parts equal to j), so there are p(N) vectors. The paper's index of v
# is the number of vectors of the same N that are lexicographically greater
# (less anonymous) than v. Counting them by the position j of the first entry
# where a greater vector w differs (w_j > v_j) gives the closed form
#
#     index(v) = sum_j P_{>=j}(R_j - j * (v_j + 1)),   R_j = N - sum_{i<j} i * v_i,
#
# with P_{>=j}(n) the number of partitions of n into parts >= j. A term with
# n_j = R_j - j(v_j + 1) < j is 1 when n_j == 0 and 0 otherwise; the other terms
# ("non-trivial") are computed exactly in one of two ways, whichever is cheaper:
#
# * small j:  P_{>=j}(n) = sum_i c_j[i] * p(n - i), with c_j the coefficients of
#   prod_{k<j} (1 - x^k) (degree j(j-1)/2) and p(0..M) from one power-series
#   inversion of Euler's pentagonal series (FLINT, Newton iteration);
# * large j:  a partition of n into t parts >= j, minus j from each part, is a
#   partition of n - t*j into at most t parts, so P_{>=j}(n) = sum_t p_{<=t}(n - t*j), with
#   p_{<=t}(m) the partitions of m into at most t parts, tabulated for
#   t <= max n_j / j by strided cumulative sums modulo a few primes (int64),
#   the exact sum recovered by the Chinese remainder theorem.
#
# The split between the two is chosen by a cost estimate, so the work is about
# O(N^1.5) big-integer operations in the worst case and far less for the vectors
# of real schedules (only j up to the largest class size can be non-trivial).

_P_TABLE: list[int] = [1]


def _pentagonal_series(length: int) -> flint.fmpz_poly:
    """prod_{k>=1} (1 - x^k) truncated to ``length`` terms (Euler's pentagonal theorem)."""
    coeffs = [0] * length
    k = 0
    while k * (3 * k - 1) // 2 < length:
        sign = -1 if k % 2 else 1
        coeffs[k * (3 * k - 1) // 2] = sign
        if k * (3 * k + 1) // 2 < length:
            coeffs[k * (3 * k + 1) // 2] = sign
        k += 1
    return flint.fmpz_poly(coeffs)


def partition_table(m: int) -> list[int]:
    """Exact p(0), p(1), ..., p(m) as Python ints (cached; grown on demand).

    Computed as 1 / prod(1 - x^k) by Newton iteration on FLINT polynomials.

    >>> partition_table(10)
    [1, 1, 2, 3, 5, 7, 11, 15, 22, 30, 42]
    """
    global _P_TABLE
    if m < 0:
        return []
    if len(_P_TABLE) <= m:
        length = max(m + 1, 2 * len(_P_TABLE))
        euler = _pentagonal_series(length)
        inverse = flint.fmpz_poly([1])
        done = 1
        while done < length:  # Newton: g <- g * (2 - E g) mod x^(2 done)
            done = min(2 * done, length)
            inverse = inverse.mul_low(2 - euler.mul_low(inverse, done), done)
        coeffs = [int(c) for c in inverse.coeffs()]
        _P_TABLE = coeffs + [0] * (length - len(coeffs))
    return _P_TABLE[: m + 1]


def partition_count(n: int) -> int:
    """Exact number of integer partitions p(n) = number of anonymity vectors of n people.

    >>> partition_count(4)
    5
    >>> partition_count(100)
    190569292
    >>> partition_count(0), partition_count(-3)
    (1, 0)
    """
    n = _whole(n, "n")
    if n < 0:
        return 0
    check_work(estimate_partition_count(n), narrow="the number of vectors grows too fast to count for so many people")
    return int(flint.fmpz(n).partitions_p())


def estimate_partition_count(n: int) -> WorkEstimate:
    """Cost of p(n) with FLINT (measured on 2 cores: 0.45 s at n = 10^10, 18 s
    at 10^12, growing as n^0.8; memory is its ~1.1 sqrt(n) digits).

    >>> estimate_partition_count(10**15).seconds > MAX_SECONDS
    True
    """
    n = max(int(n), 1)
    return WorkEstimate(
        f"counting the anonymity vectors of {n:,} people",
        operations=n,
        seconds=18.0 * (n / 1e12) ** 0.8,
        peak_bytes=int(2 * math.sqrt(n)) + 1_000_000,
    )


def hardy_ramanujan(n: int) -> float:
    """Hardy-Ramanujan approximation of p(n): exp(pi sqrt(2n/3)) / (4 n sqrt(3)).

    A float (``inf`` beyond about n = 2.6 million); for display only.

    >>> round(hardy_ramanujan(5000) / partition_count(5000), 4)
    1.0063
    """
    n = _whole(n, "n")
    if n <= 0:
        return 1.0 if n == 0 else 0.0
    if n > 10**12:  # exp overflows long before; no float division of a huge int
        return math.inf
    exponent = math.pi * math.sqrt(2 * n / 3) - math.log(4 * n * math.sqrt(3))
    return math.exp(exponent) if exponent < 709 else math.inf


def scientific(value: int, digits: int = 4) -> str:
    """An exact integer of any size in scientific notation (no float overflow).

    >>> scientific(partition_count(5000))
    '1.698e+74'
    >>> scientific(42)
    '4.200e+01'
    """
    value = int(value)
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    text = str(abs(value))
    exponent = len(text) - 1
    mantissa = int(text[: digits + 1].ljust(digits + 1, "0")) / 10**digits
    rounded = round(mantissa, digits - 1)
    if rounded >= 10:
        rounded, exponent = rounded / 10, exponent + 1
    return f"{sign}{rounded:.{digits - 1}f}e{'+' if exponent >= 0 else '-'}{abs(exponent):02d}"


def population_of(vector: Sequence[int]) -> int:
    """N = sum_j j * v_j, the population an anonymity vector describes (property P3).

    >>> population_of((0, 1, 0, 2, 1))
    15
    """
    return sum(j * int(v) for j, v in enumerate(_as_vector(vector), start=1))


def lex_compare(v1: Sequence[int], v2: Sequence[int]) -> int:
    """Compare two anonymity vectors lexicographically (missing entries are 0).

    Returns -1 when ``v1`` is smaller (*more* anonymous), 0 when equal, 1 when greater.

    >>> lex_compare((0, 2, 1, 2), (2, 3, 1, 1))
    -1
    >>> lex_compare((5, 2, 2, 0, 0), (5, 2, 2))
    0
    """
    a, b = _trim(_as_vector(v1)), _trim(_as_vector(v2))
    for x, y in zip(a, b):
        if x != y:
            return -1 if x < y else 1
    return (len(a) > len(b)) - (len(a) < len(b))  # the longer one has a later non-zero entry


def more_anonymous(v1: Sequence[int], v2: Sequence[int]) -> bool:
    """True when ``v1`` is strictly more anonymous than ``v2`` (generalized k-anonymity).

    >>> more_anonymous((0, 2, 1, 2), (11, 2))
    True
    """
    return lex_compare(v1, v2) < 0


def lex_index(vector: Sequence[int]) -> int:
    """Exact lexicographic index: how many vectors of the same N are less anonymous.

    0 for ``(N)`` (everyone unique), p(N) - 1 for ``(0, ..., 0, 1)`` (one class).

    >>> lex_index((4,)), lex_index((0, 0, 0, 1))
    (0, 4)
    >>> lex_index((0, 1, 0, 2, 1))
    154
    """
    v = _trim(_as_vector(vector))
    if not v:
        return 0
    check_work(_lex_index_estimate(v), narrow=f"exact indices are within reach up to about {_LEX_INDEX_REACH:,} people")
    trivial, small, large = _index_terms(v)
    return trivial + _small_terms(small) + _large_terms(large)


# the largest M = N - v_1 - 1 within both limits of estimate_lex_index, rounded down
_LEX_INDEX_REACH = int(
    min(4e5 * (MAX_SECONDS / 140.0) ** (1 / 1.9), 4e5 * (MAX_BYTES / 2.3e9) ** (1 / 1.5)) // 50_000 * 50_000
)


def estimate_lex_index(vector: Sequence[int]) -> WorkEstimate:
    """Cost of ``lex_index(vector)``. It is driven by M = N - v_1 - 1, the
    largest n whose partitions the closed form needs (every later term's n is
    smaller): measured on 2 cores, 140 s and 2.3 GB at M = 400,000, growing as
    M^1.9 in time and M^1.5 in memory (the exact table p(0..M)).

    >>> estimate_lex_index((10**6,)).seconds  # everyone unique: the index is 0 at once
    0.0
    >>> estimate_lex_index((0,) * 999_999 + (1,)).seconds > MAX_SECONDS
    True
    """
    return _lex_index_estimate(_trim(_as_vector(vector)))


def _lex_index_estimate(v: tuple[int, ...]) -> WorkEstimate:
    """``estimate_lex_index`` of a vector already checked and trimmed."""
    people = sum(j * x for j, x in enumerate(v, start=1) if x)
    largest = people - (v[0] if v else 0) - 1
    if largest < 1:
        return WorkEstimate("an exact lexicographic index", operations=0, seconds=0.0, peak_bytes=0)
    return WorkEstimate(
        f"the exact lexicographic index of a vector of {people:,} people",
        operations=largest,
        seconds=140.0 * (largest / 4e5) ** 1.9,
        peak_bytes=int(2.3e9 * (largest / 4e5) ** 1.5),
    )


def improvement(v1: Sequence[int], v2: Sequence[int], base: Sequence[int], *, exact: bool | None = None) -> float:
    """Anonymity improvement (index(v1) - index(v2)) / index(base), in [-1, 1].

    0.0 when index(base) == 0. ``exact=None`` computes exactly up to N = 20,000
    and beyond that from the leading terms of each index with a proven bound on
    the rest (relative error below 1e-12), which is fast for any N.

    >>> improvement((0, 2, 1, 2), (2, 3, 1, 1), (0, 1, 0, 2, 1))
    0.42207792207792205
    """
    a, b, c = (_trim(_as_vector(v)) for v in (v1, v2, base))
    sizes = {population_of(a), population_of(b), population_of(c)}
    if len(sizes) != 1:
        raise ParameterError(
            "The three anonymity vectors describe different numbers of people "
            f"({population_of(a)}, {population_of(b)} and {population_of(c)}); "
            "they must come from the same population."
        )
    n = sizes.pop()
    if exact is None:
        exact = n <= EXACT_IMPROVEMENT_LIMIT
    if exact:
        denominator = lex_index(c)
        if denominator == 0:
            return 0.0
        return float(Fraction(lex_index(a) - lex_index(b), denominator))
    terms = _LeadingTerms()
    denominator = terms.difference(c, (n,)) if c != (n,) else 0
    if denominator == 0:
        return 0.0
    return float(Fraction(terms.difference(a, b), denominator))


EXACT_IMPROVEMENT_LIMIT = 20_000


def _whole(value: object, name: str) -> int:
    return whole_number(value, name, minimum=None, maximum=None)


def _as_vector(vector: Sequence[int]) -> tuple[int, ...]:
    entries = vector if isinstance(vector, np.ndarray) or np.ndim(vector) == 0 else list(vector)
    values = whole_numbers(entries, "Anonymity-vector entries", text=False, total=None)
    nonzero = np.flatnonzero(values)
    people = (
        sum((int(j) + 1) * int(values[j]) for j in nonzero)
        if nonzero.size < 10_000
        else int(np.dot(values[nonzero].astype(object), nonzero.astype(object) + 1))
    )
    if people > MAX_COUNT:
        raise ParameterError(
            f"The anonymity vector describes {people:,} people, more than {MAX_COUNT:,} "
            "(the largest number counted exactly)."
        )
    return tuple(values.tolist())


def _trim(vector: tuple[int, ...]) -> tuple[int, ...]:
    end = len(vector)
    while end and vector[end - 1] == 0:
        end -= 1
    return vector[:end]


def _index_terms(v: tuple[int, ...]) -> tuple[int, list[tuple[int, int]], list[tuple[int, int]]]:
    """Split index(v)'s terms: (sum of trivial terms, small-j (j, n) pairs, large-j pairs)."""
    trivial = 0
    pairs: list[tuple[int, int]] = []
    remaining = sum(j * x for j, x in enumerate(v, start=1))
    for j, x in enumerate(v, start=1):
        n = remaining - j * (x + 1)
        if n >= j:
            pairs.append((j, n))
        elif n == 0:
            trivial += 1
        remaining -= j * x
        if remaining < 2 * (j + 1):  # later terms: n < j, and n == 0 only where R_j == j
            for jj in range(j + 1, len(v) + 1):
                if remaining - jj * (v[jj - 1] + 1) == 0:
                    trivial += 1
                remaining -= jj * v[jj - 1]
            break
    if not pairs:
        return trivial, [], []
    # cost estimate: small j costs j^2/2 products; large j shares a table of
    # (max n / j) x (max n) additions. Choose the cheapest split.
    js = np.array([j for j, _ in pairs], dtype=np.float64)
    ns = np.array([n for _, n in pairs], dtype=np.float64)
    small_cost = np.concatenate([[0.0], np.cumsum(js * js / 2)])
    t_max = np.maximum.accumulate((ns // js)[::-1])[::-1]
    n_max = np.maximum.accumulate(ns[::-1])[::-1]
    large_cost = np.concatenate([t_max * n_max * 0.3, [0.0]])
    split = int(np.argmin(small_cost + large_cost))
    return trivial, pairs[:split], pairs[split:]


def _euler_factors(j_max: int) -> list[np.ndarray]:
    """Coefficients of prod_{k<j} (1 - x^k) for j = 1..j_max (index j-1), exact."""
    out = [np.array([1], dtype=object)]
    for k in range(1, j_max):
        prev = out[-1]
        nxt = np.concatenate([prev, np.zeros(k, dtype=object)])
        nxt[k:] -= prev
        out.append(nxt)
    return out


def _small_terms(pairs: list[tuple[int, int]]) -> int:
    """sum of P_{>=j}(n) = sum_i c_j[i] p(n - i) over the given (j, n)."""
    if not pairs:
        return 0
    p = np.array(partition_table(max(n for _, n in pairs)), dtype=object)
    factors = _euler_factors(max(j for j, _ in pairs))
    total = 0
    for j, n in pairs:
        c = factors[j - 1][: n + 1]
        window = p[n - len(c) + 1 : n + 1][::-1]
        total += int(np.dot(c, window))
    return total


def _large_terms(pairs: list[tuple[int, int]]) -> int:
    """sum of P_{>=j}(n) = sum_{t>=1} p_{<=t}(n - t j) over the given (j, n).

    The table p_{<=t}(0..m) is kept modulo a few primes (int64 numpy, one column
    per prime) and the exact sum is recovered by the Chinese remainder theorem:
    the sum is below len(pairs) * p(max n), which the primes' product exceeds.
    """
    if not pairs:
        return 0
    js = np.array([j for j, _ in pairs], dtype=np.int64)
    ns = np.array([n for _, n in pairs], dtype=np.int64)
    counts = ns // js
    t_max, m_max = int(counts.max()), int(ns.max())
    bits = partition_count(m_max).bit_length() + len(pairs).bit_length() + 1
    # cumulative sums of up to m_max + 1 residues must stay below 2**63
    primes = _primes(bits, min(50, 61 - (m_max + 1).bit_length()))
    q = np.array(primes, dtype=np.int64)
    # row t of the table is read at positions n - t*j, for t = 1..n//j of each pair
    owner = np.repeat(np.arange(js.size), counts)
    ts = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts) + 1
    positions = ns[owner] - ts * js[owner]
    order = np.argsort(ts, kind="stable")
    ts, positions = ts[order], positions[order]
    starts = np.searchsorted(ts, np.arange(1, t_max + 2))
    # pass t only needs the positions read at passes >= t (entry m depends on entries <= m)
    last_read = np.full(t_max + 2, -1, dtype=np.int64)
    np.maximum.at(last_read, ts, positions)
    reach = np.maximum.accumulate(last_read[::-1])[::-1] + 1
    table = np.zeros((m_max + 1 + t_max, q.size), dtype=np.int64)
    table[0] = 1  # p_{<=0}: only the empty partition
    total = np.zeros(q.size, dtype=np.int64)
    for t in range(1, t_max + 1):  # p_{<=t} = p_{<=t-1} / (1 - x^t): strided cumulative sums
        grid = table[: -(-int(reach[t]) // t) * t].reshape(-1, t, q.size)
        np.cumsum(grid, axis=0, out=grid)
        np.remainder(grid, q, out=grid)
        read = positions[starts[t - 1] : starts[t]]
        if read.size:
            total = (total + table[read].sum(axis=0) % q) % q
    return _crt([int(r) for r in total], primes)


_PRIME_CACHE: dict[int, list[int]] = {}


def _primes(bits: int, size: int) -> list[int]:
    """Primes just below 2**size whose product has more than ``bits`` bits."""
    found = _PRIME_CACHE.setdefault(size, [])
    candidate = found[-1] - 2 if found else (1 << size) - 1
    while sum(p.bit_length() - 1 for p in found) <= bits:
        while not flint.fmpz(candidate).is_prime():
            candidate -= 2
        found.append(candidate)
        candidate -= 2
    out, product_bits = [], 0
    for p in found:
        if product_bits > bits:
            break
        out.append(p)
        product_bits += p.bit_length() - 1
    return out


def _crt(residues: list[int], primes: list[int]) -> int:
    """The least non-negative integer with these residues (Chinese remainder theorem)."""
    value, modulus = 0, 1
    for r, p in zip(residues, primes):
        value += modulus * ((r - value) * pow(modulus, -1, p) % p)
        modulus *= p
    return value


class _LeadingTerms:
    """Differences of indices from their leading terms, with a proven tail bound.

    Terms P_{>=j}(n) are computed exactly from p(n - i) (FLINT's fast single
    p(n)); after term j, every remaining term of v counts vectors sharing v's
    first j entries, so their sum is below P_{>=j+1}(R_{j+1}). Summation stops
    once the bounds of both vectors are below 1e-15 of the running difference.
    """

    def __init__(self) -> None:
        self._p: dict[int, int] = {}
        self._factors: list[list[int]] = [[1]]

    def _pn(self, n: int) -> int:
        if n < 0:
            return 0
        value = self._p.get(n)
        if value is None:
            value = self._p[n] = int(flint.fmpz(n).partitions_p())
        return value

    def at_least(self, j: int, n: int) -> int:
        """P_{>=j}(n) exactly."""
        if n < 0:
            return 0
        if n < j:
            return 1 if n == 0 else 0
        while len(self._factors) < j:
            k = len(self._factors)
            prev = self._factors[-1]
            nxt = prev + [0] * k
            for i, c in enumerate(prev):
                nxt[i + k] -= c
            self._factors.append(nxt)
        return sum(c * self._pn(n - i) for i, c in enumerate(self._factors[j - 1]) if c and i <= n)

    def difference(self, a: tuple[int, ...], b: tuple[int, ...]) -> int:
        """index(a) - index(b) (exact leading terms; error far below 1e-12 relative)."""
        if a == b:
            return 0
        start = 0
        while start < min(len(a), len(b)) and a[start] == b[start]:
            start += 1
        rest_a = population_of(a) - sum((i + 1) * a[i] for i in range(start))
        rest_b = rest_a
        total = 0
        j = start + 1
        while True:
            xa = a[j - 1] if j <= len(a) else 0
            xb = b[j - 1] if j <= len(b) else 0
            total += self.at_least(j, rest_a - j * (xa + 1)) - self.at_least(j, rest_b - j * (xb + 1))
            rest_a -= j * xa
            rest_b -= j * xb
            if rest_a == 0 and rest_b == 0:
                return total
            bound = self.at_least(j + 1, rest_a) + self.at_least(j + 1, rest_b)
            if total and bound * 10**15 < abs(total):
                return total
            j += 1
