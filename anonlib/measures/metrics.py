"""Public path of the information-loss metrics (``anonlib.measures.metrics`` in the API
contract). They live in the foundation, ``anonlib.core.metrics``, because every
capability uses them; this module only names them where scripts expect them.

Example:
    >>> from anonlib.measures.metrics import discernibility
    >>> discernibility([5, 3, 1, 7], k=3)
    99
"""

from ..core.metrics import discernibility, nonuniform_entropy

__all__ = ["discernibility", "nonuniform_entropy"]
