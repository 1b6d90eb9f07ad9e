"""`--workers 3 --metrics`: the workers share one port, so a scrape reaches any one of them; prometheus_client's
multiprocess mode makes every scrape report the whole deployment's requests."""

from __future__ import annotations

import re

import httpx

from tests.helpers.redis_support import RedisProcess
from tests.helpers.scaleout_client import Session
from tests.helpers.support import ROOT, http_server

SERVER = [str(ROOT / "tests" / "telemetry" / "observed_server.py"), "--workers", "3", "--metrics"]
COUNT = re.compile(r'^mcp_server_operation_duration_seconds_count\{[^}]*gen_ai_tool_name="whoami"[^}]*\} (\S+)$', re.M)


def test_any_workers_scrape_reports_every_workers_requests(redis: RedisProcess) -> None:
    with http_server(SERVER, env={"MCP_BACKEND": redis.url}) as base, \
            httpx.Client(limits=httpx.Limits(max_keepalive_connections=0), timeout=20) as client:
        session = Session(client)  # a new connection per request: the kernel hands each to any worker
        session.open(base)
        pids: set[str] = set()
        calls = 0
        while len(pids) < 3 and calls < 300:
            pids.add(session.tool(base, "whoami"))
            calls += 1
        assert len(pids) == 3, f"{calls} calls reached only {len(pids)} workers"
        for _ in range(6):  # whichever worker answers the scrape, it reports all of them
            text = client.get(f"{base}/metrics").text
            assert sum(float(value) for value in COUNT.findall(text)) == calls, text[:2000]
