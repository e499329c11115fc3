"""``anonlib.geo``, a path of the public contract: everything public of ``anonlib.transformations.geo``."""

from .transformations.geo import *  # noqa: F401,F403
from .transformations.geo import __all__  # noqa: F401
