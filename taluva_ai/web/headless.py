"""The browser board in a headless browser, for its end-to-end tests (tests/test_web_browser.py)
and the screenshots of docs/web.md (experiments/web_screenshots.py): the app served by uvicorn
in a background thread, and Debian's chromium driven by Selenium (the ``test`` extra).

Nothing here is needed to run ``taluva serve``.
"""

from __future__ import annotations

import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: The flags chromium runs with: headless, no sandbox (containers, root), and no network of
#: its own (updates, sync, QUIC).
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage")


def find_chromium() -> tuple[str, str] | None:
    """``(chromium, chromedriver)`` paths on ``PATH``, or None when either is missing."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if browser is None or driver is None:
        return None
    return browser, driver


def missing_reason() -> str | None:
    """Why the browser tests cannot run (one line), or None when they can."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return ("selenium is not installed (pip install selenium, or the test extra: "
                "pip install -e '.[test]')")
    if find_chromium() is None:
        return ("chromium and chromedriver are not installed (Debian: apt-get install "
                "chromium chromium-driver)")
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serve_in_thread(app: Any) -> Iterator[str]:
    """Serve ``app`` with uvicorn on a free port of 127.0.0.1 in a daemon thread; yields the
    base address (``http://127.0.0.1:PORT``); stops the server on exit.

    Raises:
        RuntimeError: the server did not start within 30 s.
    """
    import uvicorn

    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@contextmanager
def chromium(width: int = 1400, height: int = 900) -> Iterator[Any]:
    """A Selenium webdriver of headless chromium (:data:`CHROMIUM_FLAGS`, a fresh profile in
    a temporary directory, the window ``width`` x ``height``); quit on exit.

    Raises:
        RuntimeError: chromium or chromedriver is missing (:func:`missing_reason`).
    """
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    found = find_chromium()
    if found is None:
        raise RuntimeError(missing_reason() or "chromium is missing")
    browser, driver_path = found
    with tempfile.TemporaryDirectory(prefix="taluva-chromium-") as profile:
        opts = webdriver.ChromeOptions()
        opts.binary_location = browser
        for flag in CHROMIUM_FLAGS:
            opts.add_argument(flag)
        opts.add_argument(f"--user-data-dir={profile}")
        opts.add_argument(f"--window-size={width},{height}")
        driver = webdriver.Chrome(options=opts, service=Service(driver_path))
        try:
            yield driver
        finally:
            driver.quit()
