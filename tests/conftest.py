"""Fixtures shared by every test directory."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest

from schedsim.api.interning import EMPTY_MAP, changed_shared_maps
from schedsim.engine import STORES
from schedsim.testing import StoreFactory

# `schedsim.engine.STORES` (store name, as ``--store`` takes it -> factory) is the one list of
# store implementations: every test that takes the `store_name` or `store` fixture runs once
# per entry, so a store added there runs through all of them. A module that needs the
# mapping at import time (to build parameters) imports it from `schedsim.engine`.


@pytest.fixture(scope="module", params=sorted(STORES))
def store_name(request: pytest.FixtureRequest) -> str:
    """Each name of `schedsim.engine.STORES` in turn (the test id says which)."""
    name: str = request.param
    return name


@pytest.fixture(scope="module")
def store(store_name: str) -> StoreFactory:
    """Each store's factory in turn (``store()`` makes an empty store)."""
    return STORES[store_name]


@pytest.fixture
def stores() -> Mapping[str, StoreFactory]:
    """All of `schedsim.engine.STORES`, for a test that compares the stores within one run."""
    return STORES


@attrs.define
class OpenedReport:
    """An HTML report loaded in headless Chromium: the playwright page, the script errors
    (uncaught exceptions and console errors) and every URL the page requested."""

    tab: Any
    errors: list[str]
    requests: list[str]

    def widths(self, timeout_ms: float = 5000) -> tuple[int, int]:
        """The page's width and the window's (pixels), once the page is no wider than the
        window or after ``timeout_ms`` (plotly resizes its charts to the page a moment after
        drawing them, e.g. when a scroll bar appears)."""
        fits = "document.documentElement.scrollWidth <= window.innerWidth"
        try:
            self.tab.wait_for_function(fits, timeout=timeout_ms)
        except Exception:  # a timeout: the widths say how much is too wide
            pass
        width, window = self.tab.evaluate(
            "() => [document.documentElement.scrollWidth, window.innerWidth]"
        )
        return int(width), int(window)

    @property
    def offline(self) -> bool:
        """Nothing was fetched but the file itself and inline data."""
        return all(u.startswith(("file://", "data:")) for u in self.requests)


@pytest.fixture
def open_report() -> Iterator[Callable[..., OpenedReport]]:
    """``open_report(path, charts, width=1280)`` loads a report in the distribution's
    Chromium (which .ci/run installs) in a ``width`` x 900 window and waits until its
    ``charts`` plotly charts are drawn. Skips, saying why, without Chromium or Playwright."""
    chromium = next(
        (p for p in ("/usr/bin/chromium", "/usr/bin/chromium-browser") if Path(p).exists()),
        shutil.which("chromium"),
    )
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    if chromium is None:
        pytest.skip("no Chromium found (.ci/run installs the Debian package chromium)")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=chromium, args=["--no-sandbox", "--disable-gpu"], headless=True
        )

        def load(path: Path, charts: int, width: int = 1280) -> OpenedReport:
            tab = browser.new_page(viewport={"width": width, "height": 900})
            opened = OpenedReport(tab, [], [])
            tab.on("pageerror", lambda e: opened.errors.append(str(e)))
            tab.on("console", lambda m: opened.errors.append(m.text) if m.type == "error" else None)
            tab.on("request", lambda r: opened.requests.append(r.url))
            tab.goto(path.as_uri())
            tab.wait_for_function(
                f"document.querySelectorAll('.js-plotly-plot').length === {charts}"
            )
            return opened

        try:
            yield load
        finally:
            browser.close()


@pytest.fixture(autouse=True)
def _shared_maps_untouched() -> Iterator[None]:
    """Decoded objects share equal maps (`schedsim.api.interning`): code that wrote into an
    object's map would change every object sharing it. No test may leave a shared map
    changed."""
    yield
    changed = [dict(m) for m in changed_shared_maps()]
    if changed:
        EMPTY_MAP.clear()
        pytest.fail(f"something wrote into an API object's shared map(s): {changed[:3]}")
