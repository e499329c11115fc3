"""What the real-browser tests share: Debian's Chromium, a dashboard server started from
this checkout, and waiting for Streamlit to finish a run.

Needs Chromium at /usr/bin/chromium (``.ci/run`` installs it). Without it the browser
tests are skipped with a message, except in CI (``CI=true``), where they fail. The
fixtures ``server`` and ``browser`` are registered in ``conftest.py``.
"""

from __future__ import annotations

import itertools
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The pages' titles in the sidebar's order, as app.py declares them (st.Page(..., title=...)).
PAGE_TITLES = re.findall(r'st\.Page\([^)]*title="([^"]+)"', (ROOT / "app.py").read_text(encoding="utf-8"))
CHROMIUM = Path(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def require_chromium() -> None:
    if CHROMIUM.exists():
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but Chromium is missing at {CHROMIUM}; .ci/run should have installed it.")
    pytest.skip(f"Real-browser test skipped: no Chromium at {CHROMIUM} (apt-get install chromium).")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# The sample a session of a test's server opens before anything is loaded, for tests that upload
# their own file at once (``dashboard_server(first_sample=SMALL_SAMPLE)``): 15 records instead of
# Adult's 32,561, whose first look (the Dataset page drawn on it) cost the server and Chromium
# about 4 CPU-seconds more per session opened (measured: 23.6 against 19.5 for a first session).
SMALL_SAMPLE = "caballero_table2b"


@contextmanager
def dashboard_server(
    home: Path | None = None,
    port: int | None = None,
    secrets: Path | None = None,
    first_sample: str | None = None,
    preload: bool = True,
) -> Iterator[str]:
    """Start ``streamlit run app.py`` on a free port (or ``port``) and yield its URL once
    /_stcore/health answers. Its project store is in ``home`` (default: a new temporary
    folder, so every server starts with no project); ``secrets``: the secrets.toml it reads
    (e.g. an ``[auth]`` section: sign-in, ``test_browser_team``); ``first_sample``: the sample a
    new session opens (``ANONLIB_FIRST_SAMPLE``; default: the app's own, Adult); ``preload=False``:
    the Release page's libraries are not imported in the background (``ANONLIB_PRELOAD=0``), for
    tests that never open it. The server's
    output goes to a temporary log file, never to a pipe nobody reads (a full pipe blocks the
    server mid-test)."""
    require_chromium()
    port = port or _free_port()
    with tempfile.TemporaryDirectory() as fresh, tempfile.TemporaryFile() as log:
        env = {
            **os.environ,
            "STREAMLIT_SERVER_PORT": str(port),
            "STREAMLIT_SERVER_HEADLESS": "true",
            "ANONLIB_HOME": str(home or fresh),
        }
        env.pop("ANONLIB_STORE", None)
        env.pop("ANONLIB_FIRST_SAMPLE", None)
        if first_sample is not None:
            env["ANONLIB_FIRST_SAMPLE"] = first_sample
        env["ANONLIB_PRELOAD"] = "1" if preload else "0"
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                "app.py",
                "--server.port",
                str(port),
                *(["--secrets.files", str(secrets)] if secrets is not None else []),
            ],  # fmt: skip
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        url = f"http://localhost:{port}"
        try:
            deadline = time.time() + 90
            while time.time() < deadline:
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                        if response.read().strip() == b"ok":
                            break
                except OSError:
                    time.sleep(0.5)
            else:
                log.seek(0)
                pytest.fail(
                    f"The dashboard did not answer /_stcore/health within 90 s:\n"
                    f"{log.read().decode(errors='replace')[-2000:]}"
                )
            yield url
        finally:
            # a server that served a session does not end on SIGTERM within 10 s (measured; without a
            # session it takes 3-4 s): what it saved is in its store already, so it is killed after 3 s
            proc.terminate()
            try:
                proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)


# Streamlit's endless "running" animations (the status widget's icon, spinners, skeletons) held
# still: while the server works, they kept Chromium drawing frames, about 0.08 CPU-seconds a second
# (1.1 -> 0.3 CPU-s in 10 s of a run, measured), on a machine the suite keeps busy. Nothing else
# moves differently: transitions and the animations that end are left alone.
_STILL_CSS = (
    '[data-testid="stStatusWidget"], [data-testid="stStatusWidget"] *, [data-testid="stSpinner"], '
    '[data-testid="stSpinner"] *, [data-testid="stSkeleton"], [data-testid="stSkeleton"] * '
    "{ animation-play-state: paused !important; } "
    # the status widget's running man is no CSS animation: a timer swaps its picture five times a
    # second while the script runs, each swap drawn again (about 0.06 CPU-seconds of Chromium a
    # second of a run, measured); not drawn, it costs nothing. Only the picture: the widget stays,
    # and wait_idle reads it
    '[data-testid="stStatusWidgetRunningIcon"] { display: none !important; }'
)
STILL = (
    "document.addEventListener('DOMContentLoaded', () => { const style = document.createElement('style'); "
    f"style.textContent = {_STILL_CSS!r}; document.head.appendChild(style); }});"
)
# The page notes when a message from the server last arrived (``window.anonlibHeard``), so that
# ``wait_idle`` can wait for its quiet moment inside the page: asked from here, every look cost a
# round trip through Playwright (0.52 s per wait for 0.3 s of quiet on a browser test, measured).
HEARD = (
    "window.anonlibHeard = performance.now(); (() => { const Socket = window.WebSocket; "
    "window.WebSocket = class extends Socket { constructor(...args) { super(...args); "
    "this.addEventListener('message', () => { window.anonlibHeard = performance.now(); }); } }; })();"
)


# Tabs of one browser context that show pages of one site (every server here is on localhost) share
# one renderer process: its scripts compiled once, a second tab of the dashboard cost Chromium about
# 5.7 CPU-seconds instead of 10.5 (measured). For a test whose sessions are tabs of one context
# (``chromium(SHARED_TABS)``); tabs of other contexts never share a process.
SHARED_TABS = ("--process-per-site",)


@contextmanager
def chromium(extra_args: tuple[str, ...] = ()) -> Iterator[object]:
    """A headless Chromium driven by Playwright (``extra_args``: more of its flags, e.g. ``SHARED_TABS``);
    its pages hold Streamlit's running animations still (``STILL``) and are watched (``watch``)."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        instance = p.chromium.launch(executable_path=str(CHROMIUM), args=[*CHROMIUM_ARGS, *extra_args])
        make_page, make_context = instance.new_page, instance.new_context

        def new_page(*args, **kwargs):
            page = make_page(*args, **kwargs)
            page.add_init_script(STILL)
            page.add_init_script(HEARD)
            return watch(page)

        def new_context(*args, **kwargs):
            context = make_context(*args, **kwargs)
            context.add_init_script(STILL)
            context.add_init_script(HEARD)
            context.on("page", watch)
            return context

        instance.new_page, instance.new_context = new_page, new_context  # every page is watched
        try:
            yield instance
        finally:
            instance.close()


class Frames:
    """How many messages the server has sent a page over its websocket."""

    def __init__(self) -> None:
        self.count = 0

    def seen(self, _payload: object) -> None:
        self.count += 1


def watch(page):
    """Count the messages the server sends ``page`` (every websocket it opens, reloads included),
    so that ``wait_idle`` knows when a run has begun (when the server has gone quiet, the page
    itself notes: ``HEARD``). Pages of ``chromium()``'s browser are watched from their creation."""
    if getattr(page, "anonlib_frames", None) is None:
        page.anonlib_frames = frames = Frames()
        page.on("websocket", lambda socket: socket.on("framereceived", frames.seen))
    return page


def frames_sent(page) -> int:
    """How many messages the server has sent ``page`` so far."""
    return _frames(page).count


def _frames(page) -> Frames:
    frames = getattr(page, "anonlib_frames", None)
    if frames is None:  # its websocket may already be open: too late to count its messages
        raise AssertionError("The page is not watched: make it with the browser of live_app.chromium().")
    return frames


def open_app(page, url: str, timeout_ms: int = 300_000) -> None:
    """Open the dashboard and wait for the Dataset page (a busy server answers late)."""
    page.goto(url, wait_until="commit", timeout=timeout_ms)
    page.get_by_role("heading", name="Dataset", exact=True).wait_for(timeout=timeout_ms)
    wait_idle(page, timeout_ms)


def open_page(page, title: str, timeout_ms: int = 300_000) -> None:
    """Open a page from the sidebar's navigation and wait for its heading and its run."""
    page.locator('[data-testid="stSidebarNavLink"]', has_text=title).first.click()
    page.get_by_role("heading", name=title, exact=True).first.wait_for(timeout=timeout_ms)
    wait_idle(page, timeout_ms)


UPLOAD = '.st-key-upload input[type="file"]'  # the Dataset page's file (other uploaders: a key file, hierarchies)


def upload(page, path: Path, read: str, timeout_ms: int = 300_000) -> None:
    """On the Dataset page: choose "Upload a file", upload ``path`` through the file input and
    wait until the page says what it read (``read``, e.g. "Read 15 rows and 4 columns")."""
    press(page, page.get_by_text("Upload a file"), timeout_ms)
    page.locator(UPLOAD).wait_for(state="attached", timeout=timeout_ms)  # a busy server is slow
    page.locator(UPLOAD).set_input_files(str(path))
    page.get_by_text(read).wait_for(timeout=timeout_ms)
    wait_idle(page, timeout_ms)


_CALM = (  # nothing is running, stale, spinning or loading
    "!document.querySelector('[data-testid=\"stStatusWidget\"]')"
    " && !document.querySelector('[data-stale=\"true\"]')"
    " && !document.querySelector('[data-testid=\"stSpinner\"]')"
    " && !document.querySelector('[data-testid=\"stSkeleton\"]')"
)
BUSY = "() => " + _CALM  # for wait_for_function: true once the page is no longer busy
IDLE = _CALM + " && document.querySelector('[data-testid=\"stApp\"]')?.dataset.testScriptState === 'notRunning'"
QUIET_IDLE = 0.3  # seconds since the server's last message or the first idle look, before a page counts as idle
ANSWER_SECONDS = 3.0  # how long an action's rerun may take to begin (a change to the same value starts none)
# Looked at by the page itself every 50 ms: false while busy or not yet quiet, else how many
# milliseconds ago it first looked idle (after its last busy look) or last heard from the server,
# whichever came later. A wait's start counts as a busy look (``wait``: a new number per wait).
QUIET = (
    "({quiet, wait}) => { const now = performance.now(); "
    "if (window.anonlibWait !== wait) { window.anonlibWait = wait; window.anonlibCalm = undefined; } "
    "if (!(" + IDLE + ")) { window.anonlibCalm = undefined; return false; } "
    "window.anonlibCalm ??= now; "
    "const ago = now - Math.max(window.anonlibCalm, window.anonlibHeard ?? 0); return ago >= quiet ? ago : false; }"
)
_WAITS = itertools.count()


def wait_idle(page, timeout_ms: int = 180_000, since: int | None = None) -> float:
    """Wait until Streamlit has finished running the script; the moment (``time.perf_counter``)
    the page first looked idle after its last busy look, or last heard from the server if later.

    After an action (``since``: ``frames_sent`` just before it), first until the server answers
    it (up to ``ANSWER_SECONDS``); then until the app says its script is not running, nothing is
    stale or spinning, and neither that nor a message from the server changed for ``QUIET_IDLE``
    seconds. The page itself looks every 50 ms (``wait_for_function``, ``QUIET``) and keeps the
    time of its first idle look and of the server's last message (``HEARD``): asking it from here
    every 50 ms cost Chromium, Playwright's driver and this process about 0.08 CPU-seconds a second
    of waiting, and each look from here added a round trip to the quiet wait."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    frames = _frames(page)
    started = time.perf_counter()
    if since is not None:
        while frames.count == since and time.perf_counter() - started < ANSWER_SECONDS:
            page.wait_for_timeout(25)
    timeout = max(started + timeout_ms / 1000 - time.perf_counter(), 0.001) * 1000
    try:
        quiet = page.wait_for_function(
            QUIET, arg={"quiet": QUIET_IDLE * 1000, "wait": next(_WAITS)}, polling=50, timeout=timeout
        )
    except PlaywrightTimeout:
        raise TimeoutError(f"the page was still busy after {timeout_ms / 1000:.0f} s") from None
    return time.perf_counter() - quiet.json_value() / 1000


def click(page, key: str, timeout_ms: int = 300_000) -> None:
    """Click the button with this Streamlit key and wait for the rerun."""
    press(page, page.locator(f".st-key-{key} button").first, timeout_ms)


def press(page, target, timeout_ms: int = 300_000) -> None:
    """Click ``target`` (a Playwright locator: a button, a checkbox's label) and wait for the rerun it starts."""
    since = frames_sent(page)
    target.click()
    wait_idle(page, timeout_ms, since)


def enter_number(page, key: str, value: str, timeout_ms: int = 300_000) -> None:
    """Type ``value`` into the number input with this Streamlit key, press Enter and wait for the rerun."""
    box = page.locator(f".st-key-{key} input").first
    since = frames_sent(page) if box.input_value() != value else None  # the same value: no rerun
    box.fill(value)
    box.press("Enter")
    wait_idle(page, timeout_ms, since)


def full_screenshot(page, path: Path, timeout_ms: int = 300_000, put_back: bool = True) -> None:
    """A screenshot of the whole main section: the window grown to its height (the section
    scrolls inside, not the document), charts given time to follow, then the window put back
    (``put_back=False``: left grown, for a caller who sets the next size itself: every change
    of the window lays the page and its charts out again, about 1 CPU-second of Chromium's)."""
    height = page.evaluate("document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    width = page.viewport_size["width"]
    page.set_viewport_size({"width": width, "height": max(1000, min(int(height) + 40, 16_000))})
    page.wait_for_timeout(500)  # plotly charts follow the new size
    page.wait_for_function(BUSY, timeout=timeout_ms)
    page.screenshot(path=str(path), full_page=True)
    if put_back:
        page.set_viewport_size({"width": width, "height": 1000})


def shots_at_both_widths(page, folder: Path, name: str, timeout_ms: int = 300_000) -> None:
    """The page at 1024 px, then back at 1440 px, each a full screenshot ``{width}-{name}.png``
    (a journey runs once at 1440 px; how each look lays out is seen at both widths). From the
    grown window of the first shot straight to 1440 px: one change of the window fewer."""
    for width in (1024, 1440):
        page.set_viewport_size({"width": width, "height": 1000})
        wait_idle(page, timeout_ms)
        full_screenshot(page, folder / f"{width}-{name}.png", timeout_ms, put_back=width == 1440)


ROW_HEIGHT = 35  # header and rows of the Dataset page's column editor


def set_role(page, row: int, role: str, timeout_ms: int = 300_000) -> None:
    """Choose ``role`` for the ``row``-th column (1-based) in the Dataset page's column editor,
    at any window width: click that row's first cell, move two cells right (type, then role)
    with the keyboard, open the dropdown with Enter and choose the role once it is listed.

    The editor is a canvas. On a busy machine a click can land while it is redrawn, or a key
    can be lost, and the wrong cell's dropdown (or none) opens: it is closed and tried again.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    # the role editor (its key starts with "roles-"), not a table above it such as the HIPAA flags
    editor = page.locator('[class*="st-key-roles-"] [data-testid="stDataFrame"]').first
    dropdown = page.locator('[id^="gdg-overlay"] input[role="combobox"]')
    option = page.locator('[id^="react-select-"][role="option"]', has_text=role).first
    for attempt in range(6):
        wait_idle(page, timeout_ms)
        editor.scroll_into_view_if_needed()  # the page is taller than the window: click where it is
        box = editor.bounding_box()
        page.mouse.click(box["x"] + 20, box["y"] + ROW_HEIGHT * row + ROW_HEIGHT // 2)
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        page.keyboard.press("Enter")
        try:
            dropdown.wait_for(timeout=10_000)
            shown = page.locator('[id^="gdg-overlay"] [class*="singleValue"]')
            current = shown.first.inner_text().strip() if shown.count() else None
            page.keyboard.type(role)  # only the role column's dropdown lists it (the type column's does not)
            option.wait_for(timeout=5_000)
            break
        except PlaywrightTimeout as err:
            if attempt == 5:
                raise AssertionError(f"the role cell of row {row} in the column editor did not offer {role!r}") from err
            page.keyboard.press("Escape")
            page.keyboard.press("Escape")
    since = frames_sent(page) if current != role else None  # the same role again starts no run
    page.keyboard.press("Enter")
    dropdown.wait_for(state="hidden", timeout=10_000)
    wait_idle(page, timeout_ms, since)


def metric(page, label: str) -> str:
    """The value of the metric with this label."""
    label_node = page.locator('[data-testid="stMetricLabel"]').get_by_text(label, exact=True)
    box = page.locator('[data-testid="stMetric"]').filter(has=label_node).first
    return box.locator('[data-testid="stMetricValue"]').inner_text().strip()


def settled(page, timeout_ms: int = 300_000, since: int | None = None) -> float:
    """Seconds from now (just after a change; ``since``: ``frames_sent`` before it) until the page
    answered: the last moment it looked busy or heard from the server (``wait_idle``)."""
    started = time.perf_counter()
    return max(wait_idle(page, timeout_ms, since) - started, 0.0)


def open_timed(page, title: str, timeout_ms: int = 300_000) -> float:
    """Open a page from the sidebar's navigation; the seconds until it answered (``settled``). The
    new page's heading is waited for first: between the old page clearing and the new page's run
    starting, the app reads as not running for a moment."""
    started = time.perf_counter()
    page.locator('[data-testid="stSidebarNavLink"]', has_text=title).first.click()
    page.get_by_role("heading", name=title, exact=True).first.wait_for(timeout=timeout_ms)
    return wait_idle(page, timeout_ms) - started


def set_k(page, value: int, timeout_ms: int = 300_000) -> float:
    """Type k into the sidebar's release target; the seconds until the page answered."""
    box = page.locator(".st-key-target_k input").first
    since = frames_sent(page) if box.input_value() != str(value) else None
    box.fill(str(value))
    box.press("Enter")
    return settled(page, timeout_ms, since)


SLIDERS = '[data-testid="stMain"] [data-testid="stSlider"]'


def move_sliders(page, timeout_ms: int = 300_000) -> list[tuple[str, float]]:
    """Move every visible slider of the main area one step right and back with the keyboard (a
    range slider by its first handle, the hidden range input a keyboard user focuses); per move,
    its label and the seconds until the page answered. A slider at its right end moves left and back."""
    moves: list[tuple[str, float]] = []
    wait_idle(page, timeout_ms)
    for i in range(page.locator(SLIDERS).count()):
        slider = page.locator(SLIDERS).nth(i)
        handle = slider.locator('input[type="range"]')
        if not slider.is_visible() or not handle.count():  # in a closed expander or another tab
            continue
        label = slider.locator('[data-testid="stWidgetLabel"]').first.inner_text().strip() or f"slider {i + 1}"
        value, top = handle.first.evaluate("e => [e.value, e.max]")
        for key in ("ArrowLeft", "ArrowRight") if value == top else ("ArrowRight", "ArrowLeft"):
            handle = page.locator(SLIDERS).nth(i).locator('input[type="range"]').first
            handle.focus()
            since = frames_sent(page)
            handle.press(key)
            moves.append((f"{label} {'→' if key == 'ArrowRight' else '←'}", settled(page, timeout_ms, since)))
    return moves


def click_package(page, timeout_ms: int = 300_000) -> None:
    """Click the "Release package (zip)" button; a working copy missing its target first shows a
    warning and a tick beside it ("Download it anyway, ..."), which is ticked (and said: the page
    showed why)."""
    anyway = page.locator('[class*="st-key-"][class*="-anyway"] label').first
    if anyway.count():
        anyway.click()
        wait_idle(page, timeout_ms)
    page.get_by_role("button", name="Release package (zip)").first.click()


def choose_power(page, option: str, timeout_ms: int = 300_000) -> None:
    """Choose what an attacker knows in the sidebar's release target ("any 2 of a person's records")."""
    page.locator(".st-key-target_power").click()
    page.get_by_role("option", name=option).click()
    wait_idle(page, timeout_ms)
