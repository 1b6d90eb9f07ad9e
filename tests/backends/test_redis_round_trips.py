"""The Redis backend's budget on the hot path: a handshake-era call costs at most one Redis round trip.

A real redis-server counts the commands it runs (`INFO commandstats`); a Streamable HTTP session (SSE and
JSON replies) makes calls after the handshake, and the commands counted over them, divided by the calls,
must not exceed one (one command per call is at most one round trip).
"""

from __future__ import annotations

import subprocess

import httpx
import pytest

from mcp_kit import MCPServer
from tests.helpers.redis_support import REDIS_CLI, redis_server, require_redis
from tests.helpers.scaleout_client import Session
from tests.helpers.uvicorn_thread import bound_socket, serve

CALLS = 20


def command_counts(port: int) -> dict[str, int]:
    """Commands redis-server ran so far, by name (its `INFO commandstats`)."""
    assert REDIS_CLI is not None
    out = subprocess.run([REDIS_CLI, "-p", str(port), "INFO", "commandstats"], capture_output=True, text=True,
                         timeout=10, check=True).stdout
    counts = {}
    for line in out.splitlines():
        if line.startswith("cmdstat_"):
            name, _, rest = line.partition(":")
            counts[name.removeprefix("cmdstat_")] = int(rest.split(",")[0].partition("=")[2])
    return counts


def build() -> MCPServer:
    app = MCPServer("round-trips")

    @app.tool
    async def echo(text: str) -> str:
        """Echo."""
        return text

    return app


@pytest.mark.parametrize("json_response", [False, True], ids=["sse", "json"])
def test_a_handshake_era_call_costs_at_most_one_redis_command(json_response: bool) -> None:
    require_redis()
    with redis_server() as redis, httpx.Client(timeout=10) as client:
        sock, _ = bound_socket()
        app = build().asgi(host="127.0.0.1", backend=redis.url, json_response=json_response)
        with serve(app, sock) as url:
            session = Session(client)
            session.open(url)
            assert session.notify(url, "notifications/initialized").status_code == 202
            assert session.tool(url, "echo", {"text": "warm"}) == "warm"
            before = command_counts(redis.port)
            for index in range(CALLS):
                assert session.tool(url, "echo", {"text": str(index)}) == str(index)
            after = command_counts(redis.port)
    ran = {name: after[name] - before.get(name, 0) for name in after if name != "info"}
    ran = {name: count for name, count in ran.items() if count}
    assert sum(ran.values()) <= CALLS, ran
