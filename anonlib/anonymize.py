"""``anonlib.anonymize``, a path of the public contract: everything public of ``anonlib.transformations.anonymize``."""

from .transformations.anonymize import *  # noqa: F401,F403
