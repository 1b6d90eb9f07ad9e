"""A proxy in front of a hostile upstream (`tests.helpers.rogue_upstream`): whatever the upstream sends, the
proxy keeps serving, and a downstream request it cannot answer gets an error, never a hang."""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import pytest

from mcp_kit import MCPError, proxy
from mcp_kit.testing import connect

pytestmark = pytest.mark.anyio

ROGUE = [sys.executable, "-m", "tests.helpers.rogue_upstream"]


async def echo(client: Any, text: str) -> str:
    return (await client.call_tool("echo", {"text": text}))["content"][0]["text"]


@pytest.mark.parametrize("honored", ["x", ["toolsListChanged"], 3, None, {"toolsListChanged": "yes"},
                                     {"resourceSubscriptions": [1, "hostile://a"]},
                                     {"resourceSubscriptions": "hostile://a"},
                                     {"resourceSubscriptions": [["hostile://a"]]}],
                         ids=["string", "list", "number", "null", "flag-not-bool", "mixed-uris", "uris-not-list",
                              "nested-uris"])
async def test_a_malformed_acknowledgement_does_not_end_the_proxy(honored: Any) -> None:
    app = proxy([*ROGUE, f"bad-ack:{json.dumps(honored)}"], connect_timeout=1.0)
    async with connect(app, stateless=True) as client:
        assert await echo(client, "before") == "before"
        with anyio.fail_after(20), pytest.raises(MCPError) as caught:
            await client.request("subscriptions/listen",
                                 {"notifications": {"resourceSubscriptions": ["hostile://a"]}}, timeout=float("inf"))
        assert caught.value.code == -31001
        assert await echo(client, "after") == "after"


@pytest.mark.parametrize("mode", ["silent", "subset"])
async def test_a_listen_the_upstream_never_acknowledges_is_answered_unavailable(mode: str) -> None:
    app = proxy([*ROGUE, mode], connect_timeout=1.0)
    async with connect(app, stateless=True) as client:
        with anyio.fail_after(20), pytest.raises(MCPError) as caught:
            await client.request("subscriptions/listen",
                                 {"notifications": {"resourceSubscriptions": ["hostile://a", "hostile://b"]}},
                                 timeout=float("inf"))
        assert caught.value.code == -31001
        assert "acknowledge" in caught.value.message
        assert await echo(client, "still here") == "still here"


async def test_an_upstream_session_that_raises_is_logged_and_connected_again(caplog: pytest.LogCaptureFixture) -> None:
    from mcp_kit._proxy.targets import Target
    from mcp_kit._proxy.upstream import Upstream

    attempts: list[int] = []

    class Breaking(Upstream):
        async def _serve_once(self) -> bool:
            attempts.append(1)
            if len(attempts) == 1:
                raise AttributeError("'str' object has no attribute 'get'")  # what a parsing slip raises
            self.close()
            return True

    upstream = Breaking(Target(command=("hostile",)), handlers={}, on_notification=lambda note: None,
                        backoff=(0.01, 0.01))
    with anyio.fail_after(10):
        await upstream.run()
    assert len(attempts) == 2
    assert "AttributeError" in upstream.last_error
    assert any("hostile" in record.getMessage() and record.exc_info for record in caplog.records)


def servers(**modes: str) -> dict[str, Any]:
    return {"mcpServers": {name: {"command": sys.executable, "args": ["-m", "tests.helpers.rogue_upstream", mode]}
                           for name, mode in modes.items()}}


async def test_tasks_list_with_several_servers_follows_each_upstreams_pages() -> None:
    async with connect(proxy(servers(a="tasks:3", b="tasks:-2", c="silent"), connect_timeout=5.0),
                       stateless=True) as client:
        ids: list[str] = []
        params: dict[str, Any] = {}
        with anyio.fail_after(30):
            while True:
                page = await client.request("tasks/list", params)
                ids.extend(task["taskId"] for task in page["tasks"])
                if not page.get("nextCursor"):
                    break
                params = {"cursor": page["nextCursor"]}
    assert sorted(ids) == ["a+t0", "a+t1", "a+t2", "b+t0", "b+t1"]  # b's cursor loop ends; c has no tasks


async def test_tasks_list_with_several_servers_none_with_tasks_is_method_not_found() -> None:
    async with connect(proxy(servers(a="silent", b="silent"), connect_timeout=5.0), stateless=True) as client:
        with pytest.raises(MCPError) as caught:
            await client.request("tasks/list", {})
        assert caught.value.code == -32601


async def test_an_upstream_ignoring_its_input_and_sigterm_is_stopped_within_a_hosts_grace() -> None:
    import os
    import time

    from tests.helpers.support import process_ended
    from tests.proxy.test_proxy_shutdown import HOST_GRACE

    async with connect(proxy([*ROGUE, "stubborn"], connect_timeout=5.0), stateless=True) as client:
        pid = int(await echo(client, "pid"))
        assert not process_ended(pid)
        began = time.monotonic()
    took = time.monotonic() - began
    assert process_ended(pid)
    assert took < HOST_GRACE, f"the proxy took {took:.2f} s to stop an upstream that ignores stdin EOF and SIGTERM"
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


@pytest.mark.parametrize("capabilities", [[], "x",
                                          {"tools": "yes", "resources": [1], "extensions": 3, "logging": None}],
                         ids=["list", "string", "values-not-objects"])
async def test_malformed_upstream_capabilities_are_read_as_objects(capabilities: Any) -> None:
    app = proxy([*ROGUE, f"caps:{json.dumps(capabilities)}"], connect_timeout=5.0)
    async with connect(app, stateless=True) as client:
        declared = client.initialize_result["capabilities"]
        assert all(isinstance(value, dict) for value in declared.values())
        assert "instructions" not in client.initialize_result
        assert await echo(client, "fine") == "fine"


@pytest.mark.parametrize("stateless", [True, False], ids=["2026-07-28", "handshake"])
async def test_malformed_upstream_logs_and_progress_do_not_fail_the_call(stateless: bool) -> None:
    progress: list[Any] = []
    async with connect(proxy([*ROGUE, "noisy"], connect_timeout=5.0), stateless=stateless) as client:
        await client.set_level("debug")
        for text in ("one", "two"):
            result = await client.call_tool("echo", {"text": text}, on_progress=lambda *a: progress.append(a))
            assert result["content"][0]["text"] == text
            assert not result.get("isError")
        logged = [n["params"] for n in client.notifications_named("notifications/message")]
        assert {"level": "info", "data": {"x": 1}} in [{k: p.get(k) for k in ("level", "data")} for p in logged]
        assert all("logger" not in p for p in logged)


@pytest.mark.parametrize("several", [False, True], ids=["one-server", "several"])
async def test_an_upstream_list_of_malformed_items_and_a_cursor_loop(several: bool) -> None:
    app = proxy(servers(a="pages", b="silent") if several else [*ROGUE, "pages"], connect_timeout=5.0)
    async with connect(app, stateless=True) as client:
        with anyio.fail_after(30):
            if several:
                names = [tool["name"] for tool in await client.list_tools()]
                assert names == ["a_echo", "b_echo"]
            else:
                page = await client.request("tools/list", {})
                assert [tool["name"] for tool in page["tools"]] == ["echo"]
