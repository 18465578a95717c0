"""Screenshots of a built site at 1,400 px in headless Chromium (Debian's; `make screenshots`).

Usage: python scripts/screenshots.py SITE_DIR OUT_DIR [PAGE ...]
Each PAGE (default: the home, summary and readrandom workload pages) is served over HTTP from
SITE_DIR and saved as OUT_DIR/<page name>.png, the page's full height up to MAX_HEIGHT.
"""
from __future__ import annotations

import functools
import http.server
import sys
import threading
from pathlib import Path

from playwright.sync_api import sync_playwright

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WIDTH = 1400
MAX_HEIGHT = 2600  # px: the top of a long page is what a reader sees first
PAGES = ("index.html", "summary.html", "workloads/readrandom.html")


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (stdlib's name)
        """No access log."""


def shoot(site: Path, out: Path, pages: tuple[str, ...]) -> list[Path]:
    handler = functools.partial(QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    out.mkdir(parents=True, exist_ok=True)
    written = []
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            page = browser.new_page(viewport={"width": WIDTH, "height": 900})
            for path in pages:
                page.goto(base + path, wait_until="load")
                page.wait_for_timeout(1500)  # plots draw after DOMContentLoaded
                height = min(MAX_HEIGHT, page.evaluate("document.documentElement.scrollHeight"))
                page.set_viewport_size({"width": WIDTH, "height": height})
                target = out / (Path(path).stem + ".png")
                target.write_bytes(page.screenshot())
                page.set_viewport_size({"width": WIDTH, "height": 900})
                written.append(target)
            browser.close()
    finally:
        server.shutdown()
    return written


def main(argv: list[str]) -> None:
    if len(argv) < 2:
        raise SystemExit(__doc__)
    for path in shoot(Path(argv[0]), Path(argv[1]), tuple(argv[2:]) or PAGES):
        print(f"{path} ({path.stat().st_size / 1024:,.0f} KiB)")


if __name__ == "__main__":
    main(sys.argv[1:])
