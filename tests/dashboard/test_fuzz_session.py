"""Fuzzed sessions: two sessions of 100 seeded random widget actions across every page of the app.

Each AppTest session is driven by a seeded random generator (reproducible: the
same seed and the same pages give the same actions); the two seeds run one after the other
(one session of 1,000 actions was the suite's longest test: 130 s alone, over 400 s
beside the other workers). A page not opened yet is opened first, so each session sees
every page. Each action is one thing a browser user can do, followed by the rerun the
browser would trigger:

- switch to another page (the pages are read from ``app.py``'s ``st.Page`` list);
- change one widget found in the current element tree (main area and sidebar):
  buttons, checkboxes and toggles, selectboxes, radios, multiselects, sliders,
  number inputs (within their bounds; any number when they have none), text
  inputs (numbers, blanks, Markdown, HTML, long text);
- upload a small file from ``tests/hostile`` or ``data/samples`` on any uploader;
- edit a cell of a data editor (role and type changes on the Dataset page),
  picking among the options its column configuration allows.

Widgets are discovered from the tree on every step, so the test follows the
pages as they change. The session fails on any uncaught exception, and on any
``st.error`` that is not one of the typed sentences: the generic sentence of
``dashboard.ui.guarded`` ("Something unexpected went wrong", logged with its
traceback and reported here) and anything that looks like a raw Python message
count as failures. Every defect of the run is collected, then reported together
with the actions that led to it.

Large bundled samples (over ``MAX_SAMPLE_RECORDS`` records) are left out of the
sample choices so the run stays within a minute; ``FUZZ_ALL_SAMPLES=1``
puts them back. ``FUZZ_SEED`` and ``FUZZ_ACTIONS`` choose another run (one session of that
seed; e.g. ``FUZZ_ACTIONS=1000`` for a long one).
"""

from __future__ import annotations

import json
import logging
import math
import mimetypes
import os
import random
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from anonlib.core import budget, samples

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app.py"
SEEDS = [int(os.environ["FUZZ_SEED"])] if "FUZZ_SEED" in os.environ else [20261123, 20261128]
ACTIONS = int(os.environ.get("FUZZ_ACTIONS", "100"))
MAX_SAMPLE_RECORDS = 5_000
UPLOAD_LIMIT = 100_000  # bytes: the small files of the corpus and the samples
RUN_TIMEOUT = 120  # seconds for one rerun; longer counts as a defect (the page hangs)
# Work the library would start is limited to this many seconds during the run (instead of
# budget.MAX_SECONDS, 10 minutes), so a page whose work is estimated refuses at once with
# its sentence, and work started without an estimate shows up as a hang. The optimal
# schedule's solver gets at most SOLVER_SECONDS (its time limit is the user's choice, up
# to 2 minutes; the fuzz is about what the pages do with the answers, not about the solver).
WORK_SECONDS = 1.0
SOLVER_SECONDS = 1.0

PAGES = re.findall(r'st\.Page\(\s*"([^"]+)"', APP.read_text(encoding="utf-8"))
UPLOADS = sorted(
    p
    for folder in (ROOT / "tests" / "hostile", ROOT / "data" / "samples")
    for p in folder.iterdir()
    if p.is_file() and p.suffix != ".py" and p.stat().st_size <= UPLOAD_LIMIT
)
TEXTS = (
    "",
    " ",
    "0",
    "1",
    "-1",
    "2.5",
    "1e400",
    "nan",
    "inf",
    "10000000000000000000000",
    "abc",
    "zip,sex",
    "**bold** [link](http://x)",
    "<b>html</b>",
    "é ü 漢字",
    "x" * 500,
    "\x00",
    "-",
)
WIDGET_KINDS = (
    "button",
    "checkbox",
    "toggle",
    "selectbox",
    "radio",
    "multiselect",
    "select_slider",
    "slider",
    "number_input",
    "text_input",
    "text_area",
    "download_button",
)
GENERIC = "Something unexpected went wrong"
RAW_PYTHON = re.compile(
    r"Traceback|\b[A-Z][A-Za-z]*(Error|Exception)\b(?!\w)|object has no attribute|"
    r"not subscriptable|unsupported operand|index \d+ is out of bounds|invalid literal|NoneType|"
    r"^'[^']*'$|^\d+$"
)


def unescaped(text: str) -> str:
    """An st.error body as the reader sees it: Markdown backslash escapes removed."""
    return re.sub(r"\\(.)", r"\1", text)


def is_typed_sentence(text: str) -> bool:
    """A message a privacy officer can act on: a sentence, not a generic apology or a
    Python message (``KeyError: 'x'``, ``'NoneType' object ...``)."""
    text = unescaped(text).strip()
    if GENERIC in text or RAW_PYTHON.search(text):
        return False
    return len(text) >= 12 and text.rstrip(")'\"”").endswith((".", "?", "!"))


@dataclass
class Defect:
    kind: str  # "exception", "generic error", "raw error", "hang", "widget"
    page: str
    message: str
    step: int
    actions: list[str]
    traceback: str = ""

    def __str__(self) -> str:
        recent = "\n      ".join(self.actions[-6:])
        tb = f"\n    traceback:\n{self.traceback}" if self.traceback else ""
        return (
            f"[{self.kind}] on {self.page} after action {self.step}: {self.message[:500]}\n"
            f"    last actions:\n      {recent}{tb}"
        )


def _send(widget: Any, **value: Any) -> None:
    """Send a choice as the browser does: the option's label (AppTest's own setters map a
    value through the page's ``format_func``, which cannot go from a label back to a value)."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    state = WidgetState(id=widget.id)
    if "string_value" in value:
        state.string_value = value["string_value"]
    else:
        state.string_array_value.data[:] = value["string_array_value"]
    widget._assert_can_interact()
    widget.__class__ = type(type(widget).__name__, (type(widget),), {"_widget_state": property(lambda _: state)})


def _drop_stale_choices(at: AppTest) -> None:
    """A choice widget whose options changed under it (a table re-sorted by another widget)
    is sent empty, as the browser resets it. AppTest would instead pass its old value
    through the page's ``format_func`` to find its label, which fails for a value that is
    no longer an option: a failure of the test harness, not of the page."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    for kind in ("selectbox", "radio", "multiselect", "select_slider"):
        for widget in at.get(kind):
            try:
                widget._widget_state  # noqa: B018
            except Exception:  # noqa: BLE001
                state = WidgetState(id=widget.id)
                widget.__class__ = type(
                    type(widget).__name__, (type(widget),), {"_widget_state": property(lambda _, s=state: s)}
                )


class _Logged(logging.Handler):
    """Collects what ``dashboard.ui.guarded`` logs when it shows the generic sentence."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@dataclass
class Session:
    rng: random.Random
    at: AppTest
    page: str = PAGES[0]
    log: list[str] = field(default_factory=list)
    defects: list[Defect] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    opened: set[str] = field(default_factory=lambda: {PAGES[0]})

    # --- actions -------------------------------------------------------------------
    def candidates(self) -> list[tuple[str, Callable[[], str]]]:
        """Every action possible on the current tree, named for the log."""
        found: list[tuple[str, Callable[[], str]]] = []
        for kind in WIDGET_KINDS:
            for widget in self.at.get(kind):
                if getattr(widget.proto, "disabled", False):
                    continue
                found.append((kind, lambda w=widget, k=kind: self.change(k, w)))
        for uploader in self.at.get("file_uploader"):
            if not getattr(uploader.proto, "disabled", False):
                found.append(("upload", lambda u=uploader: self.upload(u)))
        for editor in self.at.data_editor:
            if editor.key:
                found.append(("edit", lambda e=editor: self.edit(e)))
        return found

    def act(self) -> str:
        if self.rng.random() < 0.08:  # a page not opened yet first, so a short session sees every page
            page = self.rng.choice([p for p in PAGES if p not in self.opened] or PAGES)
            self.opened.add(page)
            self.at.switch_page(page)
            self.page = page
            return f"open {page}"
        options = self.candidates()
        if not options:
            return "rerun"
        # uploads and data edits are few on a page; give them a fair share of the actions
        rare = [o for o in options if o[0] in ("upload", "edit")]
        pool = rare if rare and self.rng.random() < 0.15 else options
        return self.rng.choice(pool)[1]()

    def change(self, kind: str, w: Any) -> str:
        label = f"{kind} {w.key or getattr(w, 'label', '?')!r}"
        rng = self.rng
        if kind in ("button", "download_button"):
            w.click()
            return f"click {label}"
        if kind in ("checkbox", "toggle"):
            w.set_value(not w.value)
            return f"{label} -> {w._value}"
        if kind in ("selectbox", "radio"):
            if not w.options:
                return f"{label}: no options"
            choice = rng.choice(w.options)
            _send(w, string_value=choice)
            return f"{label} -> {choice!r}"
        if kind == "multiselect":
            if not w.options:
                return f"{label}: no options"
            chosen = rng.sample(w.options, rng.randint(0, min(len(w.options), 4)))
            _send(w, string_array_value=chosen)
            return f"{label} -> {chosen!r}"
        if kind == "select_slider":
            options = list(w.proto.options)
            if not options:
                return f"{label}: no options"
            if isinstance(w.value, (list, tuple)):
                lo, hi = sorted(rng.sample(range(len(options)), 2)) if len(options) > 1 else (0, 0)
                w.set_range(options[lo], options[hi])
                return f"{label} -> ({options[lo]!r}, {options[hi]!r})"
            choice = rng.choice(options)
            w.set_value(choice)
            return f"{label} -> {choice!r}"
        if kind == "slider":
            return self.slide(label, w)
        if kind == "number_input":
            return self.number(label, w)
        if kind in ("text_input", "text_area"):
            text = rng.choice(TEXTS)
            w.input(text)
            return f"{label} -> {text[:30]!r}"
        raise AssertionError(kind)

    def slide(self, label: str, w: Any) -> str:
        if w.proto.data_type not in (w.proto.INT, w.proto.FLOAT):
            return f"{label}: not a number slider"
        lo, hi, step = w.proto.min, w.proto.max, w.proto.step or 1
        steps = round((hi - lo) / step)
        picks = [lo + step * self.rng.choice([0, steps, self.rng.randint(0, max(steps, 0))]) for _ in range(2)]
        if w.proto.data_type == w.proto.INT:
            picks = [round(p) for p in picks]
        else:
            picks = [min(hi, round(p, 10)) for p in picks]
        if isinstance(w.value, (list, tuple)):
            a, b = sorted(picks)
            w.set_range(a, b)
            return f"{label} -> ({a}, {b})"
        w.set_value(picks[0])
        return f"{label} -> {picks[0]}"

    def number(self, label: str, w: Any) -> str:
        integer = w.proto.data_type == w.proto.INT
        lo = w.min if w.min is not None else None
        hi = w.max if w.max is not None else None
        step = w.step or 1
        rng = self.rng
        if lo is not None and hi is not None:
            span = int((hi - lo) // step)
            value = lo + step * rng.choice([0, span, 1, rng.randint(0, max(span, 0))])
            value = min(hi, value)
        else:
            # without a bound the browser accepts any number the user types
            base = lo if lo is not None else (hi if hi is not None else 0)
            sign = 1 if lo is not None else (-1 if hi is not None else rng.choice([-1, 1]))
            value = base + sign * rng.choice([0, 1, step, 7, 10**6, 10**9, 10**15, 1e300])
        if integer:  # an integer input cannot hold more than JavaScript's safe integers
            value = int(value) if abs(value) <= 2**53 else int(math.copysign(2**53, value))
        else:
            value = float(value)
        w.set_value(value)
        return f"{label} -> {value!r}"

    def upload(self, uploader: Any) -> str:
        allowed = {t.lstrip(".").lower() for t in uploader.allowed_type}
        files = [p for p in UPLOADS if not allowed or p.name.lower().rsplit(".", 1)[-1] in allowed]
        if not files:
            return f"upload {uploader.key!r}: no file of an accepted type"
        path = self.rng.choice(files)
        mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        uploader.set_value((path.name, path.read_bytes(), mime))
        return f"upload {path.name} on {uploader.key!r}"

    def edit(self, editor: Any) -> str:
        """One cell edit, as the browser's data editor reports it (edits accumulate)."""
        table = editor.value
        if table.empty:
            return f"edit {editor.key!r}: empty table"
        config = json.loads(editor.proto.columns or "{}")
        editable: dict[str, list] = {}
        for name in table.columns:
            column = config.get(f"name:{name}") or config.get(name) or {}
            if column.get("disabled") or editor.proto.disabled:
                continue
            type_config = column.get("type_config") or {}
            if type_config.get("type") == "selectbox":
                editable[name] = list(type_config.get("options") or [])
            elif pd.api.types.is_bool_dtype(table[name]):
                editable[name] = [True, False]
            elif pd.api.types.is_integer_dtype(table[name]):
                editable[name] = [0, 1, -1, 3, 10**6, 10**12, None]  # what a number cell accepts
            elif pd.api.types.is_float_dtype(table[name]):
                editable[name] = [0.0, 0.5, -1.0, 3.0, 1e12, 1e300, None]
            else:
                editable[name] = list(TEXTS) + [None]  # free text, or the cell cleared
        editable = {k: v for k, v in editable.items() if v}
        if not editable:
            return f"edit {editor.key!r}: nothing editable"
        column = self.rng.choice(sorted(editable))
        row = self.rng.randrange(len(table))
        value = self.rng.choice(editable[column])
        state = self.at.session_state[editor.key] if editor.key in self.at.session_state else None
        state = json.loads(json.dumps(state)) if isinstance(state, dict) else {}
        edits = {
            "edited_rows": {int(k): v for k, v in (state.get("edited_rows") or {}).items()},
            "added_rows": [],
            "deleted_rows": [],
        }
        edits["edited_rows"].setdefault(row, {})[column] = value
        self.at.session_state[editor.key] = edits
        return f"edit {editor.key!r} row {row} {column} -> {value!r}"

    # --- checks --------------------------------------------------------------------
    def report(self, defect: Defect) -> None:
        """Keep the first occurrence of each defect (a page error stays on screen until the
        input changes, so the same sentence comes back on every rerun)."""
        if (defect.kind, defect.page, defect.message) not in {(d.kind, d.page, d.message) for d in self.defects}:
            self.defects.append(defect)

    def run_and_check(self, step: int, logged: _Logged) -> bool:
        _drop_stale_choices(self.at)
        started = time.perf_counter()
        try:
            self.at.run(timeout=RUN_TIMEOUT)
        except RuntimeError as err:  # AppTest's timeout: the session cannot go on
            self.report(Defect("hang", self.page, str(err), step, list(self.log)))
            return False
        self.seconds[self.page] = self.seconds.get(self.page, 0.0) + time.perf_counter() - started
        current = self.page
        for exc in self.at.exception:
            self.report(Defect("exception", current, exc.message, step, list(self.log), "\n".join(exc.stack_trace)))
        for record in logged.records:
            tb = logging.Formatter().formatException(record.exc_info) if record.exc_info else ""
            self.report(Defect("generic error", current, record.getMessage(), step, list(self.log), tb))
        logged.records.clear()
        for error in self.at.error:
            if not is_typed_sentence(error.value) and GENERIC not in error.value:
                self.report(Defect("raw error", current, unescaped(error.value), step, list(self.log)))
        return True


@contextmanager
def _small_samples_only() -> Iterator[None]:
    """Leave the large samples out of the run; afterwards every sample is back in its own order
    (monkeypatch.delitem put a removed key back at the end, and the Dataset page lists them in
    order: a later test in the same process found another sample first)."""
    saved = dict(samples.SAMPLES)
    if os.environ.get("FUZZ_ALL_SAMPLES") != "1":
        for key in saved:
            if samples.load_sample(key).n_rows > MAX_SAMPLE_RECORDS:
                del samples.SAMPLES[key]
    try:
        yield
    finally:
        samples.SAMPLES.clear()
        samples.SAMPLES.update(saved)


def _trace(*lines: object) -> None:
    """Follow a long run as it goes: FUZZ_TRACE=path appends each action and defect there."""
    path = os.environ.get("FUZZ_TRACE")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.writelines(f"{line}\n" for line in lines)


def _short_work_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    from anonlib.transformations import schedule, schedule_experiments

    defaults = dict(budget.check_work.__kwdefaults__)
    monkeypatch.setattr(budget.check_work, "__kwdefaults__", defaults | {"max_seconds": WORK_SECONDS})
    compare, table10 = schedule.compare_methods, schedule_experiments.reproduce_table10

    def compare_methods(*args: Any, time_limit: float | None = 10.0, **kwargs: Any) -> Any:
        return compare(*args, time_limit=min(time_limit or SOLVER_SECONDS, SOLVER_SECONDS), **kwargs)

    def reproduce_table10(*args: Any, optimal_time_limit: float = 10.0, **kwargs: Any) -> Any:
        return table10(*args, optimal_time_limit=min(optimal_time_limit, SOLVER_SECONDS), **kwargs)

    monkeypatch.setattr(schedule, "compare_methods", compare_methods)  # the pages import them on every run
    monkeypatch.setattr(schedule_experiments, "reproduce_table10", reproduce_table10)


@contextmanager
def _full_error_details() -> Iterator[None]:
    """Uncaught exceptions keep their message and stack in the report (Streamlit redacts
    them on the page by default)."""
    from streamlit import config

    before = config.get_option("client.showErrorDetails")
    config.set_option("client.showErrorDetails", "full")
    try:
        yield
    finally:
        config.set_option("client.showErrorDetails", before)


def fuzz(seed: int, actions: int) -> Session:
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT)
    # start on a small sample (the default, Adult, has 32,561 records)
    at.session_state["active_dataset"] = samples.load_sample("caballero_table2b")
    at.session_state["active_source"] = "sample:caballero_table2b"
    session = Session(random.Random(seed), at)
    logged = _Logged()
    logger = logging.getLogger("dashboard")
    logger.addHandler(logged)
    try:
        session.run_and_check(0, logged)
        for step in range(1, actions + 1):
            try:
                action = session.act()
            except Exception as err:  # noqa: BLE001 - a widget AppTest cannot drive
                action = f"skipped ({type(err).__name__}: {str(err)[:120]})"
            started = time.perf_counter()
            session.log.append(f"{step}: {action}")
            found = len(session.defects)
            if not session.run_and_check(step, logged):
                break
            session.log[-1] += f"  [{time.perf_counter() - started:.1f} s]"
            _trace(session.log[-1], *session.defects[found:])
    finally:
        logger.removeHandler(logged)
    return session


@pytest.mark.parametrize("seed", SEEDS)
def test_random_actions_end_in_sentences(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    _short_work_budget(monkeypatch)
    started = time.perf_counter()
    with _small_samples_only(), _full_error_details():
        session = fuzz(seed, ACTIONS)
    elapsed = time.perf_counter() - started
    skipped = [entry for entry in session.log if "skipped" in entry]
    timed = [entry for entry in session.log if entry.endswith(" s]")]
    slowest = sorted(timed, key=lambda e: -float(e.rsplit("[", 1)[-1].split(" ")[0]))[:5]
    print(
        f"\nfuzzed session: {ACTIONS} actions, seed {seed}, {elapsed:.0f} s, {len(skipped)} skipped; "
        "seconds per page: "
        + ", ".join(f"{p}: {s:.0f}" for p, s in sorted(session.seconds.items()))
        + "\nslowest actions:\n  "
        + "\n  ".join(slowest)
    )
    assert not session.defects, f"{len(session.defects)} defect(s):\n" + "\n".join(map(str, session.defects))
    pages_seen = {PAGES[0]} | {
        entry.split("open ", 1)[1].split("  [")[0] for entry in session.log if ": open " in entry
    }
    assert pages_seen == set(PAGES), f"pages never opened: {set(PAGES) - pages_seen}"
    assert len(skipped) < ACTIONS // 10, "\n".join(skipped)[:3000]


@pytest.mark.parametrize(
    "text, typed",
    [
        ("k must be a whole number of at least 1; got inf.", True),
        ("The column \\*zip\\* is not in the file.", True),
        ("Something unexpected went wrong while computing. Your data and settings are kept.", False),
        ("KeyError: 'zip'", False),
        ("'NoneType' object has no attribute 'frame'", False),
        ("index 3 is out of bounds for axis 0 with size 3", False),
        ("42", False),
        ("'zip' is not a band; write bands as low-high, for example 20-34.", True),
    ],
)
def test_the_sentence_check_tells_typed_sentences_from_raw_messages(text: str, typed: bool) -> None:
    assert is_typed_sentence(text) is typed
