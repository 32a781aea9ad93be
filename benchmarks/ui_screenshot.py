"""Take the README's screenshot of the browser view's search page in headless Chromium.

``python -m octomem.benchmarks.ui_screenshot [--out benchmarks/results/ui/search.png]``
stores a small project memory in a temporary directory (a few decisions, facts and
preferences in both scopes, one of them superseded; the default embedder unless
``--set`` says otherwise), starts ``octomem ui`` over it on a free loopback port, and
saves Debian's Chromium's rendering of a search with its explain table. Nothing is
downloaded: the browser is ``/usr/bin/chromium`` driven by ``/usr/bin/chromedriver``.
"""

from __future__ import annotations

import shutil
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

from octomem.engine.memory.facade import open_memory
from octomem.engine.settings import parse_overrides
from octomem.mcp_server.loader import MemoryLoader
from octomem.mcp_server.ui.options import UiOptions
from octomem.mcp_server.ui.server import prepare_ui

from .arguments import bench_parser, existing_file, run_main

#: The search shown.
QUERY = "how do we deploy billing?"
#: ``(text, kind, scope, tags)`` stored for the picture, oldest first.
STATEMENTS = [
    ("Deploys go out on Tuesdays from the main branch", "DECISION", "local", ["deploy"]),
    ("Billing deploys wait until the invoice run at 02:00 UTC has finished", "RULE", "local",
     ["billing", "deploy"]),
    ("The billing service renders invoices through the PDF service on port 7000", "FACT",
     "local", ["billing"]),
    ("Staging is reset every Monday at 06:00 UTC", "FACT", "local", ["staging"]),
    ("Prefer small commits whose message says why", "PREFERENCE", "global", []),
    ("Run the billing tests before any deploy that touches invoices", "RULE", "global",
     ["billing", "deploy"]),
    ("Answer in English, with code blocks for commands", "PREFERENCE", "global", []),
]
#: The statement later replaced, and what replaced it (kept as history).
SUPERSEDED = ("Deploys go out on Tuesdays from the main branch",
              "Deploys go out on Tuesdays and Thursdays from the main branch, after CI is green")
#: Browser window for the picture, CSS pixels.
WINDOW = (1400, 900)


def seed(overrides: dict[str, Any], project: Path, global_root: Path) -> None:
    """Store :data:`STATEMENTS` and supersede the first one with :data:`SUPERSEDED`."""
    memory = open_memory(None, overrides, project, global_root)
    try:
        ids = {text: memory.remember(text, scope, kind, tags).document.id
               for text, kind, scope, tags in STATEMENTS}
        memory.remember(SUPERSEDED[1], kind="DECISION", tags=["deploy"],
                        supersedes=ids[SUPERSEDED[0]])
    finally:
        memory.close()


def take(out: Path, chromium: str, driver: str, overrides: dict[str, Any] | None = None,
         query: str = QUERY) -> Path:
    """Store the demo memory, serve the view, save the search page's screenshot to ``out``.

    :param chromium: the browser binary; :param driver: its chromedriver.
    :returns: ``out`` (a PNG of :data:`WINDOW`).
    """
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    work = Path(tempfile.mkdtemp(prefix="octomem-shot-"))
    project, global_root = work / "project", work / "global"
    project.mkdir()
    settings = {"data_dir": str(work / "data"), **(overrides or {})}
    seed(settings, project, global_root)
    loader = MemoryLoader(partial(open_memory, None, settings, project, global_root))
    server = prepare_ui(loader, UiOptions(port=0)).start()
    loader.start()
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                 f"--window-size={WINDOW[0]},{WINDOW[1]}", f"--user-data-dir={work / 'profile'}"):
        options.add_argument(flag)
    browser = webdriver.Chrome(service=Service(driver), options=options)
    try:
        browser.get(f"{server.url}?q={query.replace(' ', '+')}&top_k=6")
        out.parent.mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(out))
    finally:
        browser.quit()
        server.stop()
        loader.close(10.0)
        shutil.rmtree(work, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> None:
    """Parse arguments and take the screenshot."""
    parser = bench_parser("ui_screenshot", __doc__)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/ui/search.png"))
    parser.add_argument("--chromium", type=existing_file, default="/usr/bin/chromium")
    parser.add_argument("--chromedriver", type=existing_file, default="/usr/bin/chromedriver")
    parser.add_argument("--set", dest="pairs", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args(argv)
    path = take(args.out, args.chromium, args.chromedriver, parse_overrides(args.pairs))
    print(f"saved {path}")


if __name__ == "__main__":
    run_main(main, "python -m octomem.benchmarks.ui_screenshot")
