"""``anonlib.suppression``, a path of the public contract: everything public of ``anonlib.transformations.suppression``."""

from .transformations.suppression import *  # noqa: F401,F403
