"""``anonlib.microaggregation``, a path of the public contract: everything public of ``anonlib.transformations.microaggregation``."""

from .transformations.microaggregation import *  # noqa: F401,F403
