"""Regenerate ``docs/screenshot.png``: the README's picture of the dashboard as it is today.

Run ``python3 tasks.py screenshot`` (or this file with the project's Python). It starts the
dashboard of this checkout on the bundled Adult sample, drives Debian's headless Chromium
(``/usr/bin/chromium``, ``apt-get install chromium``; ``CHROMIUM_PATH`` overrides) through
the start of a release, and saves the Dataset page's first screen:

1. the release target in the sidebar: k = 5, at most 10% suppressed records;
2. a step from Individual privacy: the best age bands, applied with one click;
3. a step from the sidebar: suppress the records that still fail the target;
4. back on the Dataset page, whose risk (and the sidebar's list of steps) is the
   working copy's.

The browser tests share the server and browser set-up (``tests/live_app.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from live_app import chromium, click, dashboard_server, enter_number, open_app, open_page  # noqa: E402

OUT = ROOT / "docs" / "screenshot.png"
VIEWPORT = {"width": 1440, "height": 1320}
TIMEOUT_MS = 300_000


def main() -> int:
    with dashboard_server() as url, chromium() as browser:
        context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1)
        page = context.new_page()
        open_app(page, url, TIMEOUT_MS)
        enter_number(page, "target_k", "5")
        enter_number(page, "target_suppressed", "10")
        open_page(page, "Individual privacy", TIMEOUT_MS)
        page.locator(".st-key-peers_apply button").first.wait_for(timeout=TIMEOUT_MS)
        click(page, "peers_apply")
        click(page, "sidebar_suppress")
        open_page(page, "Dataset", TIMEOUT_MS)
        sidebar = page.locator('[data-testid="stSidebar"]').inner_text()
        if "1. Individual privacy" not in sidebar or "2. Sidebar" not in sidebar:
            raise SystemExit(f"The steps did not reach the sidebar:\n{sidebar}")
        page.mouse.move(0, 0)  # no hover tooltip in the picture
        page.wait_for_timeout(500)
        page.screenshot(path=str(OUT))
        context.close()
    print(f"written {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
