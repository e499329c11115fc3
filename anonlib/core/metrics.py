"""Information-loss metrics shared by the pages: discernibility, non-uniform entropy
and the weighted median.

Both follow the standard forms used by ARX (and by Croft et al., Eqs. 21-23,
whose equations were lost in extraction; see ``docs/geo.md``):

- **Discernibility** (DM): every record in a released class of size ``|e| >= k``
  is indistinguishable from ``|e|`` records, costing ``|e|`` each, so the class
  costs ``|e|^2``; every record of a suppressed class (``|e| < k``) is
  indistinguishable from all ``N`` records, so it costs ``N * |e|``.
- **Non-uniform entropy** (NUE): per record, the information lost when its
  original value is replaced by a generalized one,
  ``-log2 Pr(original value | generalized value)``, summed over records (bits).
  A suppressed record's generalized value is ``"*"``.

Example:
    >>> discernibility([5, 3, 1, 7], k=3)
    99
    >>> round(nonuniform_entropy(["r1"] * 3 + ["r2"] + ["r3"] * 2 + ["r4"] * 2,
    ...                          ["A"] * 4 + ["B"] * 4), 5)
    7.24511
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from .equivalence import Classes, combine, encode_column, record_counts
from .errors import ColumnError, ParameterError
from .numbers import whole_number, whole_numbers


def whole_k(k: object) -> int:
    """``k`` as an int, or ``ParameterError`` unless it is a whole number from 1
    to ``MAX_COUNT`` (the most records counted exactly).

    >>> whole_k(3), whole_k(4.0)
    (3, 4)
    >>> whole_k(2.5)
    Traceback (most recent call last):
    ...
    anonlib.core.errors.ParameterError: k must be a whole number of at least 1; got 2.5.
    """
    return whole_number(k, "k", minimum=1)


def discernibility(class_sizes: Iterable[int], k: int) -> int:
    """Discernibility metric: ``sum_{|e|>=k} |e|^2 + sum_{|e|<k} N*|e|`` (exact integer).

    ``class_sizes`` are the record counts of the equivalence classes; ``N`` is
    their total. Classes of size 0 cost nothing.

    >>> discernibility([5, 3, 1, 7], k=3)
    99
    >>> discernibility([2, 2], k=1)
    8
    """
    k = whole_k(k)
    listed = isinstance(class_sizes, (np.ndarray, list, tuple)) or np.ndim(class_sizes) == 0
    sizes = whole_numbers(class_sizes if listed else list(class_sizes), "Equivalence-class sizes", text=False)
    total = int(sizes.sum())
    kept = sizes[sizes >= k]
    dropped = sizes[sizes < k]
    # Python integers: a sum of squares of large classes can pass 2**63.
    return _sum_squares(kept) + total * int(dropped.sum())


def _sum_squares(sizes: np.ndarray) -> int:
    """Exact ``sum(s**2)`` (grouped by distinct size, so few Python multiplications)."""
    values, counts = np.unique(sizes, return_counts=True)
    return sum(int(v) * int(v) * int(c) for v, c in zip(values, counts))


def nonuniform_entropy(
    original: Sequence[object], generalized: Sequence[object], *, count: Sequence[int] | None = None
) -> float:
    """Non-uniform entropy in bits: ``-sum_i log2 Pr(original_i | generalized_i)``.

    ``original`` and ``generalized`` are equal-length label sequences (one per
    record, or per row with ``count`` records); suppressed records carry ``"*"``
    as their generalized label. Probabilities are taken over all records with
    the same generalized label. ``count`` must have one whole number of 0 or
    more per label.

    >>> nonuniform_entropy(["a", "b"], ["*", "*"])
    2.0
    >>> nonuniform_entropy(["a", "b"], ["a", "b"])
    0.0
    >>> round(nonuniform_entropy(["a", "b"], ["*", "*"], count=[1, 3]), 6)
    3.245112
    """
    for values in (original, generalized):
        if values is None or isinstance(values, (str, bytes)) or np.ndim(values) != 1:
            raise ParameterError("The original and generalized values must each be a list of labels.")
    if len(original) != len(generalized):
        raise ParameterError(
            f"The original and generalized values must have the same length; got {len(original)} "
            f"and {len(generalized)}."
        )
    orig_codes, orig_labels = encode_column(np.asarray(original, dtype=object))
    gen_codes, gen_labels = encode_column(np.asarray(generalized, dtype=object))
    weights = None
    if count is not None:
        if isinstance(count, (str, bytes)) or len(count) != len(original):
            raise ColumnError(
                f"The record counts must have one number per value; got {len(count)} counts for {len(original)} values."
            )
        # The kernel's validation of a record-count column (whole numbers, 0 or more).
        weights = record_counts(pd.DataFrame({"count": pd.Series(list(count), dtype=object)}), "count")
    return nonuniform_entropy_codes(orig_codes, len(orig_labels), gen_codes, len(gen_labels), weights)


def nonuniform_entropy_codes(
    original: np.ndarray,
    n_original: int,
    generalized: np.ndarray,
    n_generalized: int,
    weights: np.ndarray | None = None,
) -> float:
    """Non-uniform entropy from integer codes (the vectorized core of ``nonuniform_entropy``).

    Counts pairs (original, generalized) and generalized values with the
    counting kernel; the sum is ``-sum_pairs n_pair * log2(n_pair / n_generalized)``.

    >>> round(nonuniform_entropy_codes(np.array([0, 0, 1]), 2, np.array([0, 0, 0]), 1), 6)
    2.754888
    """
    if len(original) == 0:
        return 0.0
    pair_ids, n_pairs = combine([generalized, original], [n_generalized, n_original])
    pairs = Classes.from_ids(pair_ids, n_pairs, weights)
    gen = Classes.from_ids(np.asarray(generalized, dtype=np.int64), n_generalized, weights)
    # The generalized value of each pair: any row of the pair tells it.
    pair_gen = np.zeros(n_pairs, dtype=np.int64)
    pair_gen[pair_ids] = generalized
    n_pair = pairs.sizes.astype(np.float64)
    n_gen = gen.sizes[pair_gen].astype(np.float64)
    present = n_pair > 0
    return float(-(n_pair[present] * np.log2(n_pair[present] / n_gen[present])).sum()) + 0.0


def weighted_median(values: np.ndarray, weights: np.ndarray) -> float:
    """The weighted median: the smallest value whose cumulative weight reaches half the total.

    Croft et al.'s Eqs. 18-19 (ADC site moves) and the peers page's summaries
    both use this lower weighted median; with unit weights it is the lower median.

    >>> weighted_median(np.array([1.0, 2.0, 10.0]), np.array([1, 1, 5]))
    10.0
    >>> weighted_median(np.array([1.0, 2.0]), np.array([1, 1]))
    1.0
    >>> weighted_median(np.array([]), np.array([]))
    nan
    """
    values = np.asarray(values)
    if values.size == 0:
        return float("nan")
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(np.asarray(weights, dtype=float)[order])
    at = np.searchsorted(cumulative, cumulative[-1] / 2.0)
    return float(values[order][min(int(at), values.size - 1)])
