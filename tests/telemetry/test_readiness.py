"""/readyz: 503 while the backend is unreachable and 200 again once it returns (a real Redis stopped and
started on the same port); 503 while starting and draining; /healthz stays liveness throughout."""

from __future__ import annotations

import shutil
import time

import httpx
import pytest

from mcp_kit._telemetry.health import Readiness
from tests.helpers.redis_support import start_redis
from tests.helpers.support import ROOT, http_server

pytestmark = pytest.mark.anyio
SERVER = [str(ROOT / "tests" / "telemetry" / "observed_server.py")]


def wait_for_status(url: str, status: int, within: float = 15.0) -> httpx.Response:
    deadline = time.monotonic() + within
    while True:
        response = httpx.get(url, timeout=5)
        if response.status_code == status or time.monotonic() > deadline:
            return response
        time.sleep(0.1)


def test_readyz_follows_redis_going_away_and_coming_back() -> None:
    redis = start_redis()
    port, workdir = redis.port, redis.workdir
    try:
        with http_server(SERVER, env={"MCP_BACKEND": redis.url}) as base:
            assert httpx.get(f"{base}/readyz").json() == {"status": "ready"}
            redis.stop()
            down = wait_for_status(f"{base}/readyz", 503)
            assert down.status_code == 503 and down.json() == {"status": "backend unreachable"}
            assert httpx.get(f"{base}/healthz").status_code == 200  # alive all the same
            redis = start_redis(port)
            assert wait_for_status(f"{base}/readyz", 200).status_code == 200
    finally:
        redis.stop()
        shutil.rmtree(workdir, ignore_errors=True)
        shutil.rmtree(redis.workdir, ignore_errors=True)


class Backend:
    def __init__(self) -> None:
        self.pings = 0
        self.up = True

    async def ping(self, timeout: float) -> bool:
        self.pings += 1
        return self.up


async def test_readiness_is_starting_then_ready_then_draining_and_pings_at_most_once_a_second() -> None:
    now = [100.0]
    backend = Backend()
    readiness = Readiness(backend, clock=lambda: now[0])
    assert await readiness.status() == (503, "starting")
    readiness.started = True
    assert await readiness.status() == (200, "ready")
    backend.up = False
    for _ in range(20):  # a flood of probes within the second: one PING, the cached verdict
        assert await readiness.status() == (200, "ready")
    now[0] += 1.0
    assert await readiness.status() == (503, "backend unreachable")
    assert backend.pings == 2
    readiness.draining = True
    assert await readiness.status() == (503, "draining")
