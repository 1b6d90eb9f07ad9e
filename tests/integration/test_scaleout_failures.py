"""What a three-process deployment does when one process dies, and when Redis stops and comes back.

Each test starts its own Redis and servers (it breaks them on purpose).
"""

from __future__ import annotations

import shutil
import signal
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.helpers.redis_support import RedisProcess, redis_server, require_redis, start_redis
from tests.helpers.scaleout_client import HEAD, META, MODERN, Session, answer_of, servers
from tests.helpers.support import ServerURL


@pytest.fixture
def redis() -> Iterator[RedisProcess]:
    require_redis()
    with redis_server() as server:
        yield server


@pytest.fixture
def three(redis: RedisProcess) -> Iterator[list[ServerURL]]:
    with servers(redis.url) as bases:
        yield bases


def test_killing_process_2_loses_no_session(three: list[ServerURL]) -> None:
    p1, p2, p3 = three
    with httpx.Client(timeout=20) as client:
        opened = {}
        for base in (p1, p2, p3):
            session = Session(client)
            session.open(base)
            session.notify(base, "notifications/initialized")
            session.call(base, "logging/setLevel", {"level": "error"})
            opened[base] = session
        assert opened[p2].tool(p2, "whoami") == str(p2.process.pid)  # process 2 serves before it dies
        p2.process.send_signal(signal.SIGKILL)
        p2.process.wait(10)
        with pytest.raises(httpx.TransportError):
            client.post(f"{p2}/mcp", headers=opened[p1].headers(), json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        for session in opened.values():  # every session, the one opened on process 2 too, lives on 1 and 3
            assert session.tool(p1, "whoami") == str(p1.process.pid)
            assert session.tool(p3, "whoami") == str(p3.process.pid)


def test_redis_stopping_gives_clear_errors_within_a_bound_and_service_recovers(redis: RedisProcess,
                                                                               three: list[ServerURL]) -> None:
    p1, p2, _ = three
    with httpx.Client(timeout=30) as client:
        session = Session(client)
        session.open(p1)
        session.notify(p2, "notifications/initialized")
        assert session.tool(p2, "whoami")
        redis.stop()

        started = time.monotonic()
        refused = session.post(p1, "tools/list")
        assert time.monotonic() - started < 15  # bounded (the Redis timeout, 2 s, plus retries): never a hang
        assert refused.status_code == 503 and refused.headers["retry-after"] == "2"
        assert "Redis" in refused.json()["error"]["message"]

        fresh = Session(client)
        answer = fresh.open(p2)  # a new session cannot be recorded: a JSON-RPC error, not a hang
        assert answer["error"]["code"] == -32603 and "session store is unavailable" in answer["error"]["message"]

        stateless = client.post(
            f"{p1}/mcp",
            headers={**HEAD, "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "whoami"},
            json={
                "jsonrpc": "2.0",
                "id": 5,
                "method": "tools/call",
                "params": {"name": "whoami", "arguments": {}, "_meta": META},
            },
        )
        assert answer_of(stateless)["result"]["content"][0]["text"] == str(p1.process.pid)  # needs no shared state

        back = start_redis(redis.port)  # the same address; its data is gone (no persistence in the tests)
        try:
            p1.log.wait_for("bus reconnected to Redis", 30)
            again = Session(client)
            again.open(p1)
            again.notify(p2, "notifications/initialized")
            assert again.tool(p2, "whoami") == str(p2.process.pid)
            assert again.tool(p1, "whoami") == str(p1.process.pid)
        finally:
            back.stop()
            shutil.rmtree(back.workdir, ignore_errors=True)
