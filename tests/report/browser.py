"""Headless Chromium driven by selenium, with the flags this project's CI machines need."""
from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Callable

import pytest

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--window-size=1400,1000")
ARTIFACTS = Path(__file__).parent / "artifacts"  # gitignored; screenshots kept for a person to look at


def find_browser() -> tuple[str, str]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not chromium or not driver:
        pytest.skip("Chromium and chromedriver are needed (apt-get install chromium chromium-driver; .ci/run installs them)")
    return chromium, driver


def start_chromium():
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    chromium, driver = find_browser()
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in FLAGS:
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="report-chromium-")
    options.add_argument(f"--user-data-dir={profile}")  # a fresh profile: no state from another run
    browser = webdriver.Chrome(service=Service(driver), options=options)
    browser.set_page_load_timeout(60)
    return browser, profile


def wait_for(condition: Callable[[], object], timeout_s: float = 30.0, what: str = "condition"):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
