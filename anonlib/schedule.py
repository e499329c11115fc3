"""``anonlib.schedule``, a path of the public contract: everything public of ``anonlib.transformations.schedule``."""

from .transformations.schedule import *  # noqa: F401,F403
from .transformations.schedule import __all__  # noqa: F401
