"""mcp_kit.client against real servers: stdio subprocesses, Streamable HTTP, legacy SSE, and the traps."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_kit import MCPError
from mcp_kit.client import ClientError, ConnectionClosed, ServerNotFound, connect, open_transport
from mcp_kit.client._legacy_sse import LegacySSETransport
from mcp_kit.client._sse_events import iter_events
from mcp_kit.client._stdio import StdioTransport, command_line
from mcp_kit.client._streamable_http import StreamableHTTPTransport
from tests.helpers.client_servers import (
    CHATTY,
    DIES_AT_CALL,
    DIES_AT_INITIALIZE,
    JUNK_THEN_EXIT,
    JUNK_THEN_WAIT,
    SDK_SERVER,
    STOCK,
    script,
)
from tests.helpers.support import ROOT, ProcessLog, http_server, refused_port, stop

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def weather_url() -> Iterator[str]:
    with http_server(["-m", "servers.weather", "--provider", "sample", "--poll-interval", "0.2",
                      "--log-level", "warning"]) as base:
        yield base


# ---------------------------------------------------------------------------- stdio


async def test_stdio_session_lists_calls_reads_and_prompts() -> None:
    async with connect(STOCK, cwd=str(ROOT)) as session:
        assert session.server_info["name"] == "stock"
        assert session.initialize_result["protocolVersion"] == "2025-11-25"
        assert "SAMPLE DATA" in (session.instructions or "")
        tools = {tool["name"] for tool in await session.list_tools()}
        assert {"get_stock_price", "compare_valuation", "search_ticker"} <= tools
        quote = await session.call_tool("get_stock_price", {"ticker": "MSFT"})
        assert quote["isError"] is False and quote["structuredContent"]["ticker"] == "MSFT"
        contents = await session.read_resource("stock://quote/AAPL")
        assert '"ticker": "AAPL"' in contents[0]["text"] or '"ticker":"AAPL"' in contents[0]["text"]
        assert [p["name"] for p in await session.list_prompts()] == ["compare-valuation", "analyze-stock"]
        prompt = await session.get_prompt("analyze-stock", {"ticker": "AAPL"})
        assert "AAPL" in prompt["messages"][0]["content"]["text"]
        await session.ping()


async def test_tool_error_is_a_result_and_protocol_error_raises() -> None:
    async with connect(STOCK, cwd=str(ROOT)) as session:
        result = await session.call_tool("get_stock_price", {"ticker": "AAPLE"})
        assert result["isError"] is True
        assert "Did you mean AAPL" in result["content"][0]["text"]
        with pytest.raises(MCPError) as caught:
            await session.call_tool("no_such_tool", {})
        assert caught.value.code == -32602 and "get_stock_price" in caught.value.message


async def test_subscription_update_reaches_the_notification_callback() -> None:
    notes: list[dict[str, Any]] = []
    command = STOCK + " --poll-interval 0.2"
    async with connect(command, cwd=str(ROOT), on_notification=notes.append) as session:
        await session.subscribe("stock://quote/AAPL")
        note = await session.wait_notification("notifications/resources/updated", timeout=15)
        assert note["params"]["uri"] == "stock://quote/AAPL"
        assert note in notes


async def test_progress_and_log_callbacks(tmp_path: Path) -> None:
    progress: list[tuple[float, float | None, str | None]] = []
    logs: list[dict[str, Any]] = []
    async with connect(script(tmp_path, "sdk_server.py", SDK_SERVER), on_log=logs.append) as session:
        result = await session.call_tool("count", {"n": 3}, on_progress=lambda *args: progress.append(args))
        assert result["content"][0]["text"] == "counted to 3"
        assert progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
        assert any(entry.get("data") == "counted" for entry in logs)


async def test_pagination_is_followed() -> None:
    from mcp_kit.client._base import BaseClient

    class Pages(BaseClient):
        async def request(
            self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = None
        ) -> Any:
            cursor = (params or {}).get("cursor")
            page = {None: ({"tools": [{"name": "a"}], "nextCursor": "2"}),
                    "2": ({"tools": [{"name": "b"}], "nextCursor": "3"}),
                    "3": ({"tools": [{"name": "c"}]})}[cursor]
            return page

    assert [tool["name"] for tool in await Pages().list_tools()] == ["a", "b", "c"]


async def test_the_server_process_is_stopped_on_exit() -> None:
    async with connect(STOCK, cwd=str(ROOT)) as session:
        process = session.transport.process  # type: ignore[attr-defined]
        assert process.returncode is None
    assert process.returncode is not None


async def test_a_server_that_ignores_stdin_eof_is_terminated(tmp_path: Path) -> None:
    stubborn = script(tmp_path, "stubborn.py", CHATTY.replace("for line in sys.stdin:", "import signal, time\n"
                      "for line in iter(sys.stdin.readline, ''):") + "\nwhile True:\n    time.sleep(1)\n")
    async with connect(stubborn) as session:
        process = session.transport.process  # type: ignore[attr-defined]
    assert process.returncode is not None and process.returncode != 0


# ---------------------------------------------------------------------------- the traps


async def test_missing_command_is_reported_in_words() -> None:
    with pytest.raises(ServerNotFound, match="command not found: 'no-such-mcp-server-xyz'"):
        async with connect("no-such-mcp-server-xyz --flag"):
            pass


async def test_missing_executable_path_is_reported(tmp_path: Path) -> None:
    with pytest.raises(ServerNotFound, match="no such file or directory"):
        async with connect(str(tmp_path / "nope" / "server")):
            pass


async def test_server_exiting_during_initialize_shows_its_stderr(tmp_path: Path) -> None:
    with pytest.raises(ConnectionClosed) as caught:
        async with connect(script(tmp_path, "dies.py", DIES_AT_INITIALIZE)):
            pass
    message = str(caught.value)
    assert "exited with status 3" in message
    assert "fatal: FOO_API_KEY is not set" in message
    assert "FOO_API_KEY" in caught.value.stderr_tail


async def test_server_exiting_during_a_call_fails_the_call_promptly(tmp_path: Path) -> None:
    async with connect(script(tmp_path, "fragile.py", DIES_AT_CALL), timeout=30) as session:
        started = time.monotonic()
        with pytest.raises(ConnectionClosed, match="exited with status 7") as caught:
            await session.call_tool("anything", {})
        assert time.monotonic() - started < 15  # not the 30 s request timeout
        assert "crashed while calling the tool" in str(caught.value)
        with pytest.raises(ConnectionClosed):
            await session.list_tools()


async def test_stray_stdout_is_warned_about_but_tolerated(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    async with connect(script(tmp_path, "chatty.py", CHATTY)) as session:
        assert [tool["name"] for tool in await session.list_tools()] == ["hello"]
        assert session.transport.stray_output == ["Starting my server..."]  # type: ignore[attr-defined]
    assert any("non-JSON text to stdout" in record.getMessage() and "Starting my server" in record.getMessage()
               for record in caplog.records)


async def test_stray_stdout_then_exit_names_the_cause(tmp_path: Path) -> None:
    with pytest.raises(ConnectionClosed) as caught:
        async with connect(script(tmp_path, "junk_exit.py", JUNK_THEN_EXIT)):
            pass
    assert "non-JSON text to stdout" in str(caught.value)
    assert "Server ready on stdio!" in str(caught.value)


async def test_stray_stdout_without_an_answer_times_out_with_a_diagnosis(tmp_path: Path) -> None:
    with pytest.raises(ClientError) as caught:
        async with connect(script(tmp_path, "junk_wait.py", JUNK_THEN_WAIT), timeout=1):
            pass
    assert "no answer to initialize within 1 s" in str(caught.value)
    assert "hello, I am not JSON" in str(caught.value)


def test_command_lines_are_split_like_a_shell() -> None:
    assert command_line("python -m 'my server' --x=1") == ["python", "-m", "my server", "--x=1"]
    assert command_line(["a b", "c"]) == ["a b", "c"]
    with pytest.raises(ServerNotFound):
        command_line("  ")


@pytest.mark.parametrize(("line", "argv"), [
    (r"C:\Python311\python.exe -m servers.stock", [r"C:\Python311\python.exe", "-m", "servers.stock"]),
    (r'"C:\Program Files\Python311\python.exe" "D:\my servers\calc.py"',
     [r"C:\Program Files\Python311\python.exe", r"D:\my servers\calc.py"]),
    (r'a\\"b c" d', [r"a\b c", "d"]),              # 2n backslashes before a quote: n, and the quote opens
    (r'a\"b c', ['a"b', "c"]),                       # 2n+1: n and a literal quote
    (r'"say ""hi""" \\server\share\x.py', ['say "hi"', r"\\server\share\x.py"]),
    ('"" x\t y', ["", "x", "y"]),
])
def test_windows_command_lines_keep_their_backslashes(line: str, argv: list[str]) -> None:
    from mcp_kit.client._argv import join_command, split_command

    assert split_command(line, platform="win32") == argv
    assert split_command(join_command(argv, platform="win32"), platform="win32") == argv
    assert split_command(r"C:\x\python.exe", platform="linux") == ["C:xpython.exe"]  # what shlex would have done


def test_targets_choose_their_transport() -> None:
    assert isinstance(open_transport("http://127.0.0.1:1/mcp"), StreamableHTTPTransport)
    assert isinstance(open_transport("https://example.test/mcp/"), StreamableHTTPTransport)
    assert isinstance(open_transport("http://127.0.0.1:1/sse"), LegacySSETransport)
    assert isinstance(open_transport("http://127.0.0.1:1/x/sse/"), LegacySSETransport)
    assert isinstance(open_transport("python -m servers.stock"), StdioTransport)


# ---------------------------------------------------------------------------- HTTP


async def test_streamable_http_session(weather_url: str) -> None:
    async with connect(f"{weather_url}/mcp") as session:
        transport = session.transport
        assert isinstance(transport, StreamableHTTPTransport) and transport.session_id
        assert session.server_info["name"] == "weather"
        assert "get_weather" in {tool["name"] for tool in await session.list_tools()}
        result = await session.call_tool("get_weather", {"city": "Paris"})
        assert result["structuredContent"]["location"]["name"] == "Paris"
        bad = await session.call_tool("get_weather", {"city": "Nowhereville"})
        assert bad["isError"] is True


async def test_streamable_http_concurrent_calls_and_resource_updates(weather_url: str) -> None:
    async with connect(f"{weather_url}/mcp") as session:
        results: dict[str, Any] = {}

        async def fetch(city: str) -> None:
            results[city] = await session.call_tool("get_weather", {"city": city})

        async with anyio.create_task_group() as tg:
            for city in ("London", "Tokyo", "Lima"):
                tg.start_soon(fetch, city)
        assert {r["structuredContent"]["location"]["name"] for r in results.values()} == {"London", "Tokyo", "Lima"}
        await session.subscribe("weather://current/London")
        note = await session.wait_notification("notifications/resources/updated", timeout=15)
        assert note["params"]["uri"] == "weather://current/London"


async def test_legacy_sse_session(weather_url: str) -> None:
    async with connect(f"{weather_url}/sse") as session:
        transport = session.transport
        assert isinstance(transport, LegacySSETransport) and transport.endpoint
        assert "/messages" in transport.endpoint
        result = await session.call_tool("get_weather", {"city": "Oslo"})
        assert result["structuredContent"]["location"]["name"] == "Oslo"
        assert [p["name"] for p in await session.list_prompts()]


async def test_http_endpoint_that_is_not_mcp(weather_url: str) -> None:
    with pytest.raises(ConnectionClosed, match="HTTP 404"):
        async with connect(f"{weather_url}/not-mcp"):
            pass


async def test_unreachable_urls_fail_with_the_reason() -> None:
    with refused_port() as port:
        for path in ("/mcp", "/sse"):
            with pytest.raises(ConnectionClosed, match=f"cannot reach the server at http://127.0.0.1:{port}{path}"):
                async with connect(f"http://127.0.0.1:{port}{path}", timeout=5):
                    pass


async def test_sdk_server_over_streamable_http(tmp_path: Path) -> None:
    path = tmp_path / "sdk_server.py"
    path.write_text(SDK_SERVER, encoding="utf-8")
    process = subprocess.Popen([sys.executable, str(path), "0"], stdout=subprocess.DEVNULL,  # port 0: uvicorn picks
                               stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    log = ProcessLog(process.stderr)
    try:
        port = log.wait_for(r"Uvicorn running on http://127\.0\.0\.1:(\d+)", 30).group(1)  # listening, app started
        async with connect(f"http://127.0.0.1:{port}/mcp", timeout=10) as session:
            assert session.server_info["name"] == "sdk-greeter"
            progress: list[float] = []
            result = await session.call_tool("count", {"n": 2}, on_progress=lambda p, t, m: progress.append(p))
            assert result["content"][0]["text"] == "counted to 2"
            assert progress == [1, 2]
            assert (await session.read_resource("note://hello"))[0]["text"] == "hello from the SDK"
    finally:
        stop(process, log)


# ---------------------------------------------------------------------------- SSE parsing


async def _events(text: str) -> list[Any]:
    async def lines() -> AsyncIterator[str]:
        for line in text.split("\n"):
            yield line

    return [event async for event in iter_events(lines())]


async def test_sse_parser_handles_fields_comments_and_priming_events() -> None:
    events = await _events(": ping\n\nid: 7\nretry: 1000\ndata:\n\nevent: endpoint\ndata: /messages/?s=1\n\n"
                           "id: 8\ndata: {\"a\":\ndata: 1}\r\n\ndata: tail")
    assert [(e.event, e.data, e.id) for e in events] == [
        ("endpoint", "/messages/?s=1", "7"),
        ("message", '{"a":\n1}', "8"),
        ("message", "tail", "8"),
    ]



async def test_the_notification_log_keeps_the_last_ones_and_positions_still_count() -> None:
    from mcp_kit._protocol.jsonrpc import Notification
    from mcp_kit.client._base import BaseClient

    class Quiet(BaseClient):
        notification_limit = 100

    client = Quiet()
    for n in range(10_000):  # a long-lived upstream session's progress
        await client._on_message(Notification("notifications/progress", {"progress": n}))
    assert len(client.notifications) == 10_000  # positions: every one heard
    assert len(list(client.notifications)) == 100  # kept: the last 100
    assert client.notifications[-1]["params"] == {"progress": 9_999}
    assert [n["params"]["progress"] for n in client.notifications[9_998:]] == [9_998, 9_999]
    assert client.notifications[:5] == []  # forgotten
    mark = len(client.notifications)

    async def later() -> None:
        await client._on_message(Notification("notifications/message", {"level": "info", "data": "late"}))

    async with anyio.create_task_group() as tg:
        tg.start_soon(later)
        note = await client.wait_notification("notifications/message", after=mark, timeout=5)
    assert note["params"]["data"] == "late"
    assert (await client.wait_notification("notifications/progress", after=9_950))["params"] == {"progress": 9_950}
    assert len(client.notifications_named("notifications/progress")) == 99


async def test_kill_grace_bounds_the_wait_after_sigterm() -> None:
    from mcp_kit.client import connect as connect_stdio

    async with connect_stdio([sys.executable, "-m", "tests.helpers.rogue_upstream", "stubborn"], mode="auto",
                             exit_grace=0.2, kill_grace=0.2) as session:
        pid = int((await session.call_tool("echo", {"text": "pid"}))["content"][0]["text"])
        began = time.monotonic()
    took = time.monotonic() - began
    assert took < 1.5, f"stopping took {took:.2f} s"
    assert not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"


async def test_a_list_whose_cursor_repeats_ends_there_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    """A server that gives the same cursor again would repeat itself forever: the list ends, and says so."""
    rogue = [sys.executable, "-m", "tests.helpers.rogue_upstream", "pages"]
    with caplog.at_level("WARNING", logger="mcp_kit.client"):
        async with connect(rogue, cwd=str(ROOT), mode="auto") as session:  # it speaks 2026-07-28 only
            with anyio.fail_after(30):
                tools = await session.list_tools()
    assert [tool.get("name") for tool in tools].count("echo") >= 1
    assert [r.getMessage() for r in caplog.records if "a second time; the list ends there" in r.getMessage()]
