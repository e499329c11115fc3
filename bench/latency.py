"""How long a user waits in a real browser: ``python -m bench.latency [--records N] [--person] [--panel CSV] [--out CSV]``.

Starts the dashboard (``tests/live_app.py``: this checkout's server and Debian's headless
Chromium), uploads the Adult sample resampled to ``--records`` records (10^5 by default; with
``--person`` a first column ``person_id`` holding 3 records per person, marked as the person),
then on every page: opens it, changes the release target's k 5 → 10 → 5 → 10 → 5 in the sidebar
and moves every slider of the page a step and back. ``--panel FILE`` uploads that file instead
(a longitudinal panel: its person column is guessed on upload). Each answer is timed from the
change until the page is idle (no running indicator, spinner or stale element) and compared with
the target: 2 s at 10^5 records, 10 s at 10^6 (``docs/scale.md``; issue "sliders that answer within 2 s").
Needs the test tools (``python3 tasks.py test`` installs them) and Chromium.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from live_app import (  # noqa: E402
    PAGE_TITLES,
    chromium,
    dashboard_server,
    move_sliders,
    open_app,
    open_timed,
    set_k,
    set_role,
    upload,
)

from anonlib.core.samples import load_sample  # noqa: E402

ERRORS = ("Something unexpected went wrong", "Traceback")


def target_seconds(records: int) -> float:
    """2 s up to 10^5 records, 10 s at 10^6 (linear in between on a log scale would be a guess: the
    targets are the issue's two points)."""
    return 2.0 if records <= 100_000 else 10.0


def probe(records: int, person: bool, panel: Path | None = None) -> list[tuple[str, str, float, str]]:
    """(page, change, seconds, error or '') for every change on every page; ``panel``: upload this
    CSV file as it is (its roles, the person column included, as the Dataset page guesses them)."""
    rows: list[tuple[str, str, float, str]] = []
    if panel is None:
        frame = load_sample("adult").frame.sample(n=records, replace=True, random_state=0).reset_index(drop=True)
        if person:
            frame.insert(0, "person_id", [f"P{i // 3:06d}" for i in range(records)])
    with tempfile.TemporaryDirectory() as folder, dashboard_server() as url, chromium() as browser:
        csv = panel if panel is not None else Path(folder) / f"adult_{records}.csv"
        if panel is None:
            frame.to_csv(csv, index=False)
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        open_app(page, url)
        started = time.perf_counter()
        upload(page, csv, f"Read {records:,} rows")
        rows.append(("Dataset", "upload", time.perf_counter() - started, ""))
        if person and panel is None:
            set_role(page, 1, "person")
            counted = "people" in page.locator('[data-testid="stSidebar"]').inner_text()
            rows.append(("Dataset", "person role", 0.0, "" if counted else "the target is not counted in people"))
        for title in PAGE_TITLES:
            changes = [("open", open_timed(page, title))]
            for value in (10, 5, 10, 5):
                changes.append((f"k → {value}", set_k(page, value)))
            changes += move_sliders(page)
            for change, seconds in changes:
                body = page.locator('[data-testid="stMain"]').inner_text()
                error = next((words for words in ERRORS if words in body), "")
                rows.append((title, change, seconds, error))
                print(f"{title:<26} {change:<44} {seconds:6.2f} s {error}", flush=True)
        page.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.latency", description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--person", action="store_true", help="add a person column (3 records per person)")
    parser.add_argument("--panel", type=Path, help="upload this CSV file instead (e.g. a longitudinal panel)")
    parser.add_argument("--out", type=Path, help="also write the table as CSV")
    args = parser.parse_args(argv)
    if args.panel is not None:
        with args.panel.open(encoding="utf-8") as lines:
            args.records = sum(1 for _ in lines) - 1  # its rows, for the page's "Read N rows" and the target
    target = target_seconds(args.records)
    rows = probe(args.records, args.person, args.panel)
    slow = [r for r in rows if r[2] > target and r[1] != "upload"]  # an upload is not a control
    errors = [r for r in rows if r[3]]
    print("-" * 90)
    print(
        f"{len(rows)} answers at {args.records:,} records{' with a person column' if args.person else ''}: "
        f"{len(slow)} over the {target:g} s target, {len(errors)} with an error; slowest "
        + ", ".join(f"{p} {c} {s:.2f} s" for p, c, s, _ in sorted(rows, key=lambda r: -r[2])[:3])
    )
    if args.out:
        args.out.write_text(
            "page,change,seconds,error\n" + "".join(f'"{p}","{c}",{s:.2f},"{e}"\n' for p, c, s, e in rows),
            encoding="utf-8",
        )
    return 1 if slow or errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
