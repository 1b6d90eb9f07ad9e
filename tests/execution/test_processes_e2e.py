"""`run_in="process"` end to end: the official SDK client against a real server process, over stdio and HTTP.

The server (`process_pool_server.py`) defines its process tools in the script itself, as users do; its
worker processes import the script again. Stopping the server (its client leaving stdin) ends the
worker processes still computing.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.helpers.live_http import until
from tests.helpers.stdio_process import ServerProcess
from tests.helpers.support import ROOT, http_server, process_ended

pytestmark = pytest.mark.anyio
SERVER = ROOT / "tests" / "helpers" / "process_pool_server.py"
WAIT_S = 30.0


async def exercise(session: ClientSession) -> None:
    await session.initialize()
    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert tools["primes_below"].input_schema["required"] == ["limit"]
    assert tools["primes_below"].output_schema is not None
    server_pid = int((await session.call_tool("server_pid", {})).content[0].text)
    results = []

    async def call(limit: int) -> None:
        results.append(await session.call_tool("primes_below", {"limit": limit}))

    async with anyio.create_task_group() as tg:  # several at once: the pool takes two, the rest wait
        for limit in (100, 1000, 10_000, 100_000):
            tg.start_soon(call, limit)
    counts = sorted(result.structured_content["primes"] for result in results)
    assert counts == [25, 168, 1229, 9592]
    workers = {result.structured_content["pid"] for result in results}
    assert server_pid not in workers and 1 <= len(workers) <= 2
    refused = await session.call_tool("primes_below", {"limit": 10**9})
    assert refused.is_error and refused.content[0].text == "limit must be at most 10,000,000"
    invalid = await session.call_tool("primes_below", {"limit": "many"})
    assert invalid.is_error and "Invalid arguments for tool 'primes_below'" in invalid.content[0].text


async def test_process_pool_tools_over_stdio_with_the_sdk_client() -> None:
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER)], cwd=str(ROOT))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await exercise(session)


async def test_process_pool_tools_over_streamable_http_with_the_sdk_client() -> None:
    with http_server([str(SERVER)]) as base:
        async with streamable_http_client(f"{base}/mcp") as (read, write), ClientSession(read, write) as session:
            await exercise(session)


async def test_a_client_leaving_with_process_work_in_flight_stops_server_and_worker(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    server = ServerProcess([sys.executable, str(SERVER)], tmp_path / "stderr.log", "loop")
    try:
        server.initialize()
        server.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                     "params": {"name": "hold", "arguments": {"gate": str(gate)}}})
        await until(Path(f"{gate}.started").exists, "the held call to start", WAIT_S)
        worker = int(Path(f"{gate}.started").read_text())
        assert not process_ended(worker) and worker != server.proc.pid
        server.close_stdin()
        assert await anyio.to_thread.run_sync(lambda: server.proc.wait(WAIT_S)) == 0
        await until(lambda: process_ended(worker), "the worker process to end", WAIT_S)
        server.assert_stdout_is_only_json_lines()
        assert all(message.get("id") != 7 for message in server.backlog)  # never answered: the client had gone
        assert f"holding {gate}" in server.stderr_text()  # the worker's print went to stderr
    finally:
        server.stop()
        if os.path.exists(f"{gate}.started"):
            Path(f"{gate}.release").touch()  # a worker that outlived its server ends at once


async def test_worker_processes_end_when_their_server_is_killed(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    server = ServerProcess([sys.executable, str(SERVER)], tmp_path / "stderr.log", "loop")
    try:
        server.initialize()
        server.send({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
                     "params": {"name": "hold", "arguments": {"gate": str(gate)}}})
        await until(Path(f"{gate}.started").exists, "the held call to start", WAIT_S)
        worker = int(Path(f"{gate}.started").read_text())
        assert not process_ended(worker)
        server.proc.kill()  # no shutdown at all: the pool is never told to stop
        server.proc.wait(WAIT_S)
        await until(lambda: process_ended(worker), "the orphaned worker process to end", WAIT_S)
    finally:
        server.stop()
        Path(f"{gate}.release").touch()
