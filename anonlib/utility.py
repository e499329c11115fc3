"""``anonlib.utility``, a path of the public contract: everything public of ``anonlib.measures.utility``."""

from .measures.utility import *  # noqa: F401,F403
