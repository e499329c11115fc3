"""``anonlib.anonymize``, a path of the public contract: everything public of ``anonlib.transformations.generalization``."""

from .transformations.generalization import *  # noqa: F401,F403
