"""``anonlib.avector``, a path of the public contract: everything public of ``anonlib.measures.avector``."""

from .measures.avector import *  # noqa: F401,F403
