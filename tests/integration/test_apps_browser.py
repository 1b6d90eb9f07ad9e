"""The stock and weather views in a real browser: headless Debian Chromium (Playwright for Python, never a
downloaded browser) against `mcp-kit apps preview`. The view loads in the sandbox proxy's inner sandboxed
iframe, draws from the tool result (its SVG holds one point per bar or day), a click on a range or city calls
the app-only tool and redraws, and every request the page makes stays on loopback (route interception records
each URL). Screenshots go to a temporary folder; their dimensions are compared with the ones in docs/."""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
import shutil
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import pytest

from mcp_kit.apps import EXTENSION_ID, MIME_TYPE
from mcp_kit.testing import connect
from tests.helpers.support import ROOT

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
REQUIRED = os.environ.get("MCP_KIT_REQUIRE_CHROMIUM") == "1"
sync_api = pytest.importorskip("playwright.sync_api") if not REQUIRED else __import__("playwright.sync_api").sync_api
if not Path(CHROMIUM).exists():
    if REQUIRED:
        raise RuntimeError(f"MCP_KIT_REQUIRE_CHROMIUM=1 but {CHROMIUM} is missing (apt-get install chromium)")
    pytest.skip(f"{CHROMIUM} is not installed", allow_module_level=True)

FIXTURE = "tests/fixtures/apps_servers.py"
SHOTS = {"stock": ROOT / "docs" / "apps-stock.png", "weather": ROOT / "docs" / "apps-weather.png"}
TIMEOUT_MS = 20_000
pytestmark = pytest.mark.timeout(180)


def png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n", path
    width, height = struct.unpack(">II", header[16:24])
    return width, height


@pytest.fixture
def preview(request: pytest.FixtureRequest) -> Iterator[str]:
    """`mcp-kit apps preview` over one fixture server; yields the page's URL and stops it by its pid."""
    server = request.param
    process = subprocess.Popen([sys.executable, "-m", "mcp_kit", "apps", "preview", f"{FIXTURE}:{server}", "--port",
                                "0"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # the command prints the address once both listeners are bound
        found = re.search(r"(http://127\.0\.0\.1:\d+)/", line)
        assert found, (line, process.stderr.read() if process.poll() is not None else "")
        yield found.group(1)
    finally:
        process.terminate()
        try:
            process.communicate(timeout=10)  # waits, and closes both pipes
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate(timeout=10)


def expected(server: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """What the fixture server answers (the same fixed clock as the preview's process)."""
    from tests.fixtures import apps_servers

    async def call() -> dict[str, Any]:
        async with connect(getattr(apps_servers, server), extensions={EXTENSION_ID: {"mimeTypes": [MIME_TYPE]}}) as c:
            return (await c.call_tool(tool, arguments))["structuredContent"]  # type: ignore[no-any-return]

    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # Playwright's sync API holds this thread's loop
        return pool.submit(anyio.run, call).result(timeout=60)


class Browser:
    def __init__(self, playwright: Any) -> None:
        self.browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        self.context = self.browser.new_context(viewport={"width": 1000, "height": 900})
        self.urls: list[str] = []
        self.context.route("**/*", self._route)

    def _route(self, route: Any) -> None:
        url = route.request.url
        self.urls.append(url)
        if urlsplit(url).hostname != "127.0.0.1":
            route.abort()  # recorded, and never sent
        else:
            route.continue_()

    def render(self, base: str, view: str, arguments: dict[str, Any]) -> tuple[Any, Any, Any]:
        """Open the preview, call the view's tool with `arguments`; the card, the proxy frame and the view's frame."""
        page = self.context.new_page()
        page.goto(base + "/")
        page.wait_for_selector("body[data-ready=true]", timeout=TIMEOUT_MS)
        card = page.locator(f'section[data-view="{view}"]')
        card.locator("textarea").fill(json.dumps(arguments))
        card.get_by_role("button", name="Call tool and render").click()
        proxy = card.frame_locator("iframe")
        return page, card, proxy.frame_locator("iframe")

    def close(self) -> None:
        self.context.close()
        self.browser.close()


@pytest.fixture
def browser() -> Iterator[Browser]:
    with sync_api.sync_playwright() as playwright:
        opened = Browser(playwright)
        try:
            yield opened
        finally:
            opened.close()


def check_sandboxing(page: Any, card: Any, base: str) -> None:
    outer = card.locator("iframe")
    assert outer.get_attribute("sandbox") == "allow-scripts allow-same-origin"
    proxy_url = outer.get_attribute("src")
    assert proxy_url.endswith("/sandbox") and not proxy_url.startswith(base)  # another origin than the host
    [frame] = [each for each in page.frames if each.url == proxy_url]
    inner = frame.locator("iframe")
    assert inner.get_attribute("sandbox") == "allow-scripts"  # no same-origin: the view's origin is opaque
    view = frame.child_frames[0]
    assert view.evaluate("window.origin") == "null"
    assert "default-src 'none'" in view.evaluate(
        "document.querySelector('meta[http-equiv=Content-Security-Policy]').content")


def finish(browser: Browser, page: Any, card: Any, name: str, tmp_path: Path) -> None:
    log = card.locator("pre").text_content()
    assert '"method":"ui/initialize"' in log and '"method":"ui/notifications/tool-result"' in log
    shot = tmp_path / f"apps-{name}.png"
    card.locator(".frame").screenshot(path=str(shot))
    if os.environ.get("MCP_KIT_APPS_SCREENSHOTS"):  # regenerate docs/ by hand: copy from this folder
        shutil.copy(shot, Path(os.environ["MCP_KIT_APPS_SCREENSHOTS"]) / shot.name)
    width, height = png_size(shot)
    committed_width, committed_height = png_size(SHOTS[name])
    assert width == committed_width and abs(height - committed_height) <= committed_height * 0.15
    leaving = [url for url in browser.urls if urlsplit(url).hostname != "127.0.0.1"]
    assert browser.urls and leaving == []


@pytest.mark.parametrize("preview", ["stock"], indirect=True)
def test_the_stock_chart_renders_and_changes_range(preview: str, browser: Browser, tmp_path: Path) -> None:
    month = expected("stock", "price_chart", {"ticker": "AAPL", "period": "1mo"})
    quarter = expected("stock", "price_chart", {"ticker": "AAPL", "period": "3mo"})
    assert len(quarter["points"]) > len(month["points"]) > 10
    page, card, view = browser.render(preview, "ui://stock/price-chart", {"ticker": "AAPL", "period": "1mo"})
    points = view.locator("svg#chart circle.pt")
    sync_api.expect(points).to_have_count(len(month["points"]), timeout=TIMEOUT_MS)
    sync_api.expect(view.locator("#pe")).to_have_text(f"{month['valuation']['pe_ratio']:.1f}", timeout=TIMEOUT_MS)
    assert "AAPL closed between" in view.locator("#chart-desc").text_content()  # the chart's text alternative
    check_sandboxing(page, card, preview)
    view.get_by_role("button", name="3M").click()
    sync_api.expect(points).to_have_count(len(quarter["points"]), timeout=TIMEOUT_MS)
    sync_api.expect(view.get_by_role("button", name="3M")).to_have_attribute("aria-pressed", "true")
    assert '"name":"price_chart","arguments":{"ticker":"AAPL","period":"3mo"}' in card.locator("pre").text_content()
    finish(browser, page, card, "stock", tmp_path)


@pytest.mark.parametrize("preview", ["weather"], indirect=True)
def test_the_weather_week_renders_and_changes_city(preview: str, browser: Browser, tmp_path: Path) -> None:
    chicago = expected("weather", "week_view", {"city": "Chicago"})
    assert len(chicago["alerts"]) == 1
    page, card, view = browser.render(preview, "ui://weather/week", {"city": "Miami", "days": 7})
    sync_api.expect(view.locator("li.day")).to_have_count(7, timeout=TIMEOUT_MS)
    sync_api.expect(view.locator("svg#temps circle.pt")).to_have_count(7, timeout=TIMEOUT_MS)
    sync_api.expect(view.locator("#heading")).to_have_text("Week in Miami, Florida", timeout=TIMEOUT_MS)
    assert view.locator(".alert").count() == 0
    check_sandboxing(page, card, preview)
    view.get_by_role("button", name="Chicago").click()
    sync_api.expect(view.locator("#heading")).to_have_text("Week in Chicago, Illinois", timeout=TIMEOUT_MS)
    sync_api.expect(view.locator(".alert")).to_have_count(1, timeout=TIMEOUT_MS)
    assert "Winter Storm Watch" in view.locator(".alert").text_content()
    alert_day = chicago["alerts"][0]["effective"][:10]
    highlighted = [i for i, day in enumerate(chicago["daily"]) if day["date"] == alert_day]
    assert highlighted and "has-alert" in view.locator("li.day").nth(highlighted[0]).get_attribute("class")
    sync_api.expect(view.locator("svg#temps circle.pt")).to_have_count(7)
    finish(browser, page, card, "weather", tmp_path)
