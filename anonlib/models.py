"""``anonlib.models``, a path of the public contract: everything public of ``anonlib.measures.models``."""

from .measures.models import *  # noqa: F401,F403
from .measures.models import __all__  # noqa: F401
