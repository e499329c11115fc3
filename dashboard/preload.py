"""Libraries a page loads on its first use, imported once per server process in the background.

OpenDP, mbi and JAX (the Release page's private section) and scikit-learn (its classifiers) take
about two seconds to import; without this, the first opening of the Release page after the server
starts waited for them. The thread imports them in the order the pages do (``require_opendp``:
mbi, then OpenDP, then Polars), so a page importing one of them meanwhile waits for the same module
lock instead of importing it twice, and no two threads wait on each other's locks.
``ANONLIB_PRELOAD=0`` leaves them to the pages that use them (the browser tests that never open
the Release page start their servers so: the imports cost about 5 CPU-seconds a server).
"""

from __future__ import annotations

import importlib
import logging
import os
import threading

import streamlit as st

LIBRARIES = ("mbi", "opendp.prelude", "polars", "sklearn.tree", "sklearn.model_selection", "sklearn.preprocessing")

log = logging.getLogger("dashboard")


def import_all(names: tuple[str, ...] = LIBRARIES) -> list[str]:
    """Import ``names`` in order; the ones that are not installed (the private release is an
    optional extra) are skipped. The names imported.

    >>> import_all(("json", "no_such_library_here"))
    ['json']
    """
    done = []
    for name in names:
        try:
            importlib.import_module(name)
            done.append(name)
        except Exception:  # noqa: BLE001 - not installed or broken: the page says so when it needs it
            log.debug("preloading %s failed", name, exc_info=True)
    return done


@st.cache_resource(show_spinner=False)
def preload() -> threading.Thread | None:
    """Start importing ``LIBRARIES`` in a background thread, once per server process (none when
    ``ANONLIB_PRELOAD`` is ``0``)."""
    if os.environ.get("ANONLIB_PRELOAD") == "0":
        return None
    thread = threading.Thread(target=import_all, name="anonlib-preload", daemon=True)
    thread.start()
    return thread
