"""The two commands a newcomer needs, on any machine with Python 3.11 and pip.

    python3 tasks.py run    # set up .venv, install, start the dashboard (sample loaded)
    python3 tasks.py test   # set up .venv, install test tools, lint (ruff), run every test
    python3 tasks.py test --fast  # the same without the slow tests (pytest -m "not slow"): a few minutes
    python3 tasks.py bench  # run the benchmarks (after either of the above)
    python3 tasks.py screenshot  # regenerate docs/screenshot.png in headless Chromium

Only the standard library is used here, so it works before anything is installed.
Installs are repeated only when a requirements file changes.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")


def _ensure_venv(requirements: str) -> None:
    if sys.version_info < (3, 11):
        sys.exit(f"Python 3.11 or newer is needed; this is {sys.version.split()[0]}.")
    if not PYTHON.exists():
        print("Creating the virtual environment in .venv ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    nodeps = ROOT / "requirements-nodeps.txt" if requirements != "requirements.txt" else None
    files = [ROOT / "requirements.txt"] + ([ROOT / requirements, nodeps] if nodeps else [])
    digest = hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()
    stamp = VENV / f".installed-{requirements}"
    if stamp.exists() and stamp.read_text() == digest:
        return
    print(f"Installing {requirements} into .venv (first time only) ...", flush=True)
    _install("-r", str(ROOT / requirements))
    if nodeps:  # test-only peers whose own pins conflict with ours (see the file)
        _install("--no-deps", "-r", str(nodeps))
    stamp.write_text(digest)


# uv installs the same pinned packages as pip, downloading and unpacking them side by side: on a
# fresh 2-core machine the test requirements took 81 s with pip (without the no-deps peer) and
# 26 s with uv (uv itself and that peer included). uv comes from the package index through pip; where it cannot be had or cannot reach
# the index (uv does not read pip's configuration), pip installs.
UV = "uv==0.13.9"


def _install(*args: str) -> None:
    """``pip install *args`` into .venv, done by uv (put into .venv by pip first) when it can."""
    pip = [str(PYTHON), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    uv = BIN / ("uv.exe" if os.name == "nt" else "uv")
    if uv.exists() or subprocess.call([*pip, UV]) == 0:
        if subprocess.call([str(uv), "pip", "install", "-q", "--python", str(PYTHON), *args]) == 0:
            return
    print("uv could not install this; pip installs instead (slower).", flush=True)
    subprocess.check_call([*pip, *args])


def run() -> int:
    _ensure_venv("requirements.txt")
    print("Starting the dashboard on http://localhost:8501 (Ctrl+C to stop) ...", flush=True)
    return subprocess.call([str(PYTHON), "-m", "streamlit", "run", str(ROOT / "app.py")], cwd=ROOT)


def lint() -> int:
    """ruff's lint and format checks ([tool.ruff] in pyproject.toml); 0 when both are clean."""
    ruff = [str(PYTHON), "-m", "ruff"]
    checked = subprocess.call([*ruff, "check", "."], cwd=ROOT)
    formatted = subprocess.call([*ruff, "format", "--check", "."], cwd=ROOT)
    if checked or formatted:
        print(
            "ruff found problems (above): `.venv/bin/ruff check --fix .` and `.venv/bin/ruff format .` "
            "mend most of them.",
            flush=True,
        )
    return checked or formatted


def test(extra: list[str]) -> int:
    """Lint, then every test; with ``--fast`` the fast tier only (``-m "not slow"``: no browser,
    Spark, PostgreSQL or whole-page AppTest runs, and hypothesis's fast profile; tests/conftest.py)."""
    _ensure_venv("requirements-dev.txt")
    if lint():
        return 1
    fast = "--fast" in extra
    extra = [a for a in extra if a != "--fast"]
    # Tests run side by side (pytest-xdist) in one worker more than there are cores, up to five: a
    # browser test mostly waits for its own server and Chromium, and the extra worker uses that
    # time. Each worker takes the next test when it is free (work stealing: a heavy file no longer
    # holds one worker while the others wait). "-n 0" runs serially.
    workers = (
        []
        if any(a == "-n" or a.startswith(("-n", "--numprocesses")) for a in extra)
        else ["-n", str(min(5, (os.cpu_count() or 1) + 1)), "--dist", "worksteal"]
    )
    tier = ["-m", "not slow"] if fast else []
    # Compiled bytecode is kept (__pycache__, ignored by git) even where PYTHONDONTWRITEBYTECODE is
    # set: every Python process of a run (workers, dashboard servers, command lines) would compile
    # the checkout again (importing the command line and the dashboard: 1.58 -> 1.22 CPU-s once
    # cached) and re-rewrite the test modules' asserts (a collection: 9.9 -> 4.1 CPU-s).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return subprocess.call([str(PYTHON), "-m", "pytest", *workers, *tier, "--durations=20", *extra], cwd=ROOT, env=env)


def bench(extra: list[str]) -> int:
    _ensure_venv("requirements.txt")
    return subprocess.call([str(PYTHON), "-m", "bench", *extra], cwd=ROOT)


def screenshot() -> int:
    """The README's picture, taken by Debian's headless Chromium (docs/make_screenshot.py)."""
    _ensure_venv("requirements-dev.txt")
    return subprocess.call([str(PYTHON), str(ROOT / "docs" / "make_screenshot.py")], cwd=ROOT)


def main(argv: list[str]) -> int:
    commands = {
        "run": lambda: run(),
        "test": lambda: test(argv[1:]),
        "bench": lambda: bench(argv[1:]),
        "screenshot": lambda: screenshot(),
    }
    if not argv or argv[0] not in commands:
        print(__doc__)
        return 2
    return commands[argv[0]]()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
