"""Every dashboard page on a longitudinal panel (spec linkable part 2: within 2 s on the panels'
sizes, or on request): each page's first run on an uploaded panel with its person column (after
the Dataset page, as a user navigates there after the upload), and a change of the sidebar's k
from 5 to 10, timed with Streamlit's AppTest against the 2 s target.

The panels: the real public files in ``/work/panels`` when present (pbcseq: 312 patients,
1,945 visits; nlswork: 4,711 women, 28,534 person-years; never committed), else seeded files
of the same shapes and sizes from ``tests/panel_shapes.py``. Roles: the ones the Dataset page
guesses on upload (the person column included), and a chosen few (``CHOSEN``). Caches are emptied before each
page's benchmark (the Dataset page's run then fills the sidebar's) and the modules a server
imports once are imported before; the k change runs on the opened page, as a user would.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from bench import Benchmark

ROOT = Path(__file__).resolve().parent.parent
PANELS = Path("/work/panels")
TARGET_S = 2.0
TIMEOUT = 600
PAGES = {
    "dataset": ROOT / "app.py",
    "individuals": ROOT / "pages" / "individuals.py",
    "leakage": ROOT / "pages" / "leakage.py",
    "report": ROOT / "pages" / "report.py",
    "release": ROOT / "pages" / "release.py",
    "frontier": ROOT / "pages" / "frontier.py",
    "geography": ROOT / "pages" / "geography.py",
    "screening": ROOT / "pages" / "screening.py",
    "projects": ROOT / "pages" / "projects.py",
}


# "chosen" roles: the person, a few quasi-identifiers and one sensitive attribute (columns every
# page can work on: the guessed roles make every record unique, so the heavy work is refused at once)
CHOSEN = {
    "pbcseq": {
        "id": "person",
        "day": "quasi-identifier",
        "stage": "quasi-identifier",
        "sex": "quasi-identifier",
        "status": "sensitive",
    },
    "nlswork": {
        "idcode": "person",
        "year": "quasi-identifier",
        "birth_yr": "quasi-identifier",
        "race": "quasi-identifier",
        "c_city": "sensitive",
    },
}


def _panel_bytes(name: str) -> tuple[bytes, str]:
    """The panel's CSV bytes and where they came from: the real file, else its synthetic shape."""
    real = PANELS / f"{name}.csv"
    if real.exists():
        return real.read_bytes(), "real"
    sys.path.insert(0, str(ROOT / "tests"))
    from panel_shapes import labour, trial

    frame = trial(people=312) if name == "pbcseq" else labour(people=2_900)
    return frame.to_csv(index=False).encode(), "synthetic"


def _loaded(name: str, roles: str):
    from anonlib.core.dataset import Dataset
    from anonlib.core.loading import load_table
    from anonlib.workflow import Reading

    data, origin = _panel_bytes(name)
    table = load_table(data, name=f"{name}.csv")
    dataset = Dataset.from_frame(f"{name}.csv", table.frame, notes=table.notes, guess_contents=True)
    if roles == "chosen":
        dataset = dataset.with_roles({c: CHOSEN[name].get(c, "ignore") for c in dataset.frame.columns})
    return dataset, Reading.of(table, data), origin


def _warm() -> None:
    """Import what every server process imports once (the dashboard's modules, and the libraries
    ``dashboard.preload`` imports in the background): the figures are the pages' own work."""
    import dashboard.ui  # noqa: F401
    from dashboard.preload import import_all

    import_all()


def _fresh(page: Path, panel):
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    _warm()

    logging.getLogger("streamlit").setLevel(logging.ERROR)  # bare-mode warnings on every run
    st.cache_data.clear()
    st.cache_resource.clear()
    dataset, reading, _ = panel
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.session_state["active_dataset"] = dataset
    at.session_state["active_source"] = f"upload:{dataset.name}"
    at.session_state["active_reading"] = reading
    if page.name != "app.py":  # the Dataset page first (untimed), as after an upload: the sidebar's check is kept
        at.run()
        at.switch_page(f"pages/{page.name}")
    return at


def _outcome(at) -> str:
    if not _has_k(at):
        return "no k control on the page"
    if at.exception:
        return "EXCEPTION " + str(at.exception[0].message)[:80]
    buttons = [b.label for b in at.button if "about" in b.label]
    return ("waits: " + "; ".join(buttons))[:110] if buttons else "answered"


def _open(title: str, page: Path, panel_name: str, roles: str) -> Benchmark:
    def setup():
        return _fresh(page, _loaded(panel_name, roles))

    def run(at):
        at.run()
        return at

    return Benchmark(
        f"pages: {title} open ({panel_name}, {roles} roles)", TARGET_S, setup, run, repeat=1, note=_outcome
    )


def _has_k(at) -> bool:
    return any(n.key == "target_k" for n in at.number_input)


def _k_change(title: str, page: Path, panel_name: str, roles: str) -> Benchmark:
    def setup():
        at = _fresh(page, _loaded(panel_name, roles))
        at.run()
        if _has_k(at) and at.number_input(key="target_k").value != 5:
            at.number_input(key="target_k").set_value(5).run()
        return at

    def run(at):
        if _has_k(at):  # a page that stops before the sidebar (nothing to judge) has no k to change
            at.number_input(key="target_k").set_value(10).run()
        return at

    return Benchmark(
        f"pages: {title} k 5->10 ({panel_name}, {roles} roles)", TARGET_S, setup, run, repeat=1, note=_outcome
    )


BENCHMARKS = [
    make(title, page, panel, roles)
    for panel in ("pbcseq", "nlswork")
    for roles in ("guessed", "chosen")
    for title, page in PAGES.items()
    for make in (_open, _k_change)
]
