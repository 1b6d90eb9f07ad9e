"""mcp_kit.client in both eras: `mode="auto"` discovers, falls back to initialize, answers input-required rounds.

Proven against the official SDK 2.3 `MCPServer` (stdio and Streamable HTTP, each era) and against mcp_kit
itself (stdio and HTTP, each era), plus a handshake-only server that knows no `server/discover`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_kit import MCPError
from mcp_kit.client import connect
from tests.helpers.client_servers import script
from tests.helpers.sdk_upstream import serve_http
from tests.helpers.support import ROOT, http_server

pytestmark = pytest.mark.anyio

SDK_STDIO = [sys.executable, "-m", "tests.helpers.sdk_upstream"]
KIT_STDIO = [sys.executable, "-m", "tests.helpers.kit_upstream"]
ANSWER_NAME = {"elicitation/create": lambda params: {"action": "accept", "content": {"name": "Ada"}}}
HANDSHAKE_ONLY = '''
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if msg["method"] == "initialize":
        result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "old", "version": "1"}}
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
    elif msg["method"] == "tools/list":
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": []}}), flush=True)
    else:
        error = {"code": -32601, "message": "Method not found"}
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": error}), flush=True)
'''


@pytest.fixture(scope="module")
def sdk_url() -> Iterator[str]:
    with serve_http() as url:
        yield url


@pytest.fixture(scope="module")
def kit_url() -> Iterator[str]:
    with http_server(["-m", "tests.helpers.kit_upstream"]) as base:
        yield f"{base}/mcp"


def text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


async def walk(target: Any, mode: str, era: str) -> None:
    async with connect(target, mode=mode, handlers=ANSWER_NAME, cwd=str(ROOT)) as session:
        assert session.era == era
        assert session.server_capabilities.get("tools") is not None
        assert text(await session.call_tool("add", {"a": 2, "b": 3})) == "5"
        assert text(await session.call_tool("ask_name", {})) == "hello Ada"  # a round trip, or an input round
        prompt = await session.get_prompt("greet", {"who": "Bo"})
        assert "Bo" in prompt["messages"][0]["content"]["text"]
        assert {t["name"] for t in await session.list_tools()} >= {"add", "ask_name"}
        await session.ping()


@pytest.mark.parametrize(("mode", "era"), [("legacy", "handshake"), ("auto", "2026-07-28")])
async def test_sdk_server_over_stdio_in_both_eras(mode: str, era: str) -> None:
    await walk(SDK_STDIO, mode, era)


@pytest.mark.parametrize(("mode", "era"), [("legacy", "handshake"), ("auto", "2026-07-28")])
async def test_sdk_server_over_http_in_both_eras(sdk_url: str, mode: str, era: str) -> None:
    await walk(sdk_url, mode, era)


@pytest.mark.parametrize(("mode", "era"), [("legacy", "handshake"), ("auto", "2026-07-28"),
                                           ("2026-07-28", "2026-07-28")])
async def test_mcp_kit_server_over_stdio_in_both_eras(mode: str, era: str) -> None:
    await walk(KIT_STDIO, mode, era)


@pytest.mark.parametrize(("mode", "era"), [("legacy", "handshake"), ("auto", "2026-07-28")])
async def test_mcp_kit_server_over_http_in_both_eras(kit_url: str, mode: str, era: str) -> None:
    await walk(kit_url, mode, era)


async def test_auto_falls_back_to_initialize_when_discover_is_unknown(tmp_path: Any) -> None:
    async with connect(script(tmp_path, "old.py", HANDSHAKE_ONLY), mode="auto") as session:
        assert session.era == "handshake"
        assert session.initialize_result["protocolVersion"] == "2025-06-18"
        assert await session.list_tools() == []


async def test_stateless_mode_refuses_a_handshake_only_server(tmp_path: Any) -> None:
    with pytest.raises(MCPError) as caught:
        async with connect(script(tmp_path, "old.py", HANDSHAKE_ONLY), mode="2026-07-28"):
            pass
    assert caught.value.code == -32601


async def test_log_level_travels_in_the_envelope_in_2026() -> None:
    logs: list[dict[str, Any]] = []
    async with connect(KIT_STDIO, mode="auto", on_log=logs.append, cwd=str(ROOT)) as session:
        await session.call_tool("shout", {"words": "quiet"})
        assert logs == []  # 2026-07-28: no logLevel in the envelope, no log messages
        await session.set_level("info")
        await session.call_tool("shout", {"words": "loud"})
        assert [entry["data"] for entry in logs] == ["loud"]


def test_an_unknown_mode_is_refused() -> None:
    import anyio

    async def enter() -> None:
        async with connect(KIT_STDIO, mode="modern"):
            pass

    with pytest.raises(ValueError, match="mode must be one of"):
        anyio.run(enter)
