"""``anonlib.risk``, a path of the public contract: everything public of ``anonlib.measures.risk``."""

from .measures.risk import *  # noqa: F401,F403
from .measures.risk import __all__  # noqa: F401
