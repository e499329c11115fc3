"""``anonlib.frontier``, a path of the public contract: everything public of ``anonlib.transformations.frontier``."""

from .transformations.frontier import *  # noqa: F401,F403
from .transformations.frontier import __all__  # noqa: F401
