"""Anonymity vectors and generalized k-anonymity (Caballero, Sen, Nygård).

The anonymity vector of a table is ``(k(1), k(2), ..., k(m))`` where ``k(j)`` is
the number of equivalence classes of size ``j`` and ``m`` the largest class
size. Its first non-zero position is the table's k; a lexicographically
smaller vector is *more* anonymous (generalized k-anonymity).

Example:
    >>> anonymity_vector([4, 4, 5, 2])
    (0, 1, 0, 2, 1)
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from .errors import ParameterError


def anonymity_vector(class_sizes: Iterable[int]) -> tuple[int, ...]:
    """Anonymity vector of equivalence classes with the given sizes.

    Sizes of 0 are ignored; trailing zeros are dropped; an empty table gives ``()``.
    ``sum(j * v[j-1]) == sum(class_sizes)`` always holds.

    >>> anonymity_vector([1, 1, 3])
    (2, 0, 1)
    >>> anonymity_vector([])
    ()
    """
    sizes = np.asarray(list(class_sizes) if not isinstance(class_sizes, np.ndarray) else class_sizes)
    if sizes.size == 0:
        return ()
    if not np.issubdtype(sizes.dtype, np.integer):
        if not np.all(np.equal(np.mod(sizes.astype(float), 1), 0)):
            raise ParameterError("Class sizes must be whole numbers.")
        sizes = sizes.astype(np.int64)
    if (sizes < 0).any():
        raise ParameterError("Class sizes cannot be negative.")
    sizes = sizes[sizes > 0]
    if sizes.size == 0:
        return ()
    counts = np.bincount(sizes)[1:]
    return tuple(int(c) for c in counts)


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
