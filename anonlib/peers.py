"""``anonlib.peers``, a path of the public contract: everything public of ``anonlib.measures.peers``."""

from .measures.peers import *  # noqa: F401,F403
from .measures.peers import __all__  # noqa: F401
