"""``anonlib.leakage``, a path of the public contract: everything public of ``anonlib.measures.leakage``."""

from .measures.leakage import *  # noqa: F401,F403
