"""``anonlib.metrics``, a path of the public contract: everything public of ``anonlib.measures.metrics``."""

from .measures.metrics import *  # noqa: F401,F403
from .measures.metrics import __all__  # noqa: F401
