"""The product's version, stated in every release package and report.

The number is the one in ``pyproject.toml`` (a test keeps them equal); an
installed anonlib reports its installed version.

Example:
    >>> PRODUCT.startswith("anonlib ") and VERSION.count(".") == 2
    True
"""

from __future__ import annotations

from importlib import metadata

SOURCE_VERSION = "0.1.0"

try:
    VERSION = metadata.version("anonlib")
except metadata.PackageNotFoundError:  # run from a checkout (the tests, the app)
    VERSION = SOURCE_VERSION
PRODUCT = f"anonlib {VERSION}"
