"""`mcp-kit apps preview`: the host page and the sandbox proxy on two loopback origins, `/rpc` relaying to the
server as a host that declared MCP Apps, for the host page only (in a browser: tests/integration/test_apps_browser).
"""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any

import anyio
import httpx
import pytest

from mcp_kit._cli.apps_preview import serve_preview
from tests.fixtures.apps_servers import weather
from tests.helpers.support import ROOT

pytestmark = pytest.mark.anyio


async def test_the_page_the_proxy_and_the_relay() -> None:
    lines: list[str] = []
    announced = anyio.Event()

    def announce(line: str) -> None:
        lines.append(line)
        announced.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(serve_preview, weather, "127.0.0.1", 0, 0, announce)
        with anyio.fail_after(20):
            await announced.wait()
        page, proxy = re.findall(r"http://127\.0\.0\.1:\d+", lines[0])
        assert page != proxy  # two origins
        async with httpx.AsyncClient() as http:
            home = await http.get(page + "/")
            assert home.status_code == 200 and proxy in home.text and f"frame-src {proxy}" in home.headers[
                "content-security-policy"]
            assert (await http.get(proxy + "/")).status_code == 404  # the host page only on its own origin
            sandbox = await http.get(proxy + "/sandbox")
            assert sandbox.status_code == 200
            assert sandbox.headers["content-security-policy"] == f"frame-ancestors {page}"
            assert (await http.get(page + "/sandbox")).status_code == 404
            listed = await http.post(page + "/rpc", json={"method": "tools/list"}, headers={"Origin": page})
            names = [tool["name"] for tool in listed.json()["result"]["tools"]]
            assert "week_view" in names  # connected as a host that renders views: app-only tools are there
            views = await http.post(page + "/rpc", json={"method": "resources/list"}, headers={"Origin": page})
            assert "ui://weather/week" in [r["uri"] for r in views.json()["result"]["resources"]]
            unknown = await http.post(page + "/rpc", json={"method": "nope/nope"}, headers={"Origin": page})
            assert unknown.json()["error"]["code"] == -32601
            for origin in (proxy, "http://evil.example", None):  # another page, or none, may not use the relay
                headers: dict[str, Any] = {"Origin": origin} if origin else {}
                refused = await http.post(page + "/rpc", json={"method": "tools/list"}, headers=headers)
                assert refused.status_code == 403
            bad = await http.post(page + "/rpc", content=b"[1]", headers={"Origin": page})
            assert bad.status_code == 400
        tg.cancel_scope.cancel()


def test_the_command_refuses_a_non_loopback_host() -> None:
    done = subprocess.run([sys.executable, "-m", "mcp_kit", "apps", "preview", "servers.weather", "--host", "0.0.0.0"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "loopback only" in done.stderr
