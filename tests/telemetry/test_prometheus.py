"""A real Prometheus server scraping a three-process deployment on a real Redis: the operation-duration
histogram sums every process's requests, and the in-flight gauge shows a call while it runs."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.helpers.redis_support import RedisProcess
from tests.helpers.scaleout_client import Session
from tests.helpers.support import ROOT, ServerURL, http_server
from tests.telemetry.prometheus_support import prometheus, require_prometheus

SERVER = [str(ROOT / "tests" / "telemetry" / "observed_server.py"), "--metrics"]


@pytest.fixture(scope="module")
def three(redis: RedisProcess) -> Iterator[list[ServerURL]]:
    require_prometheus()
    with http_server(SERVER, env={"MCP_BACKEND": redis.url}) as p1, \
            http_server(SERVER, env={"MCP_BACKEND": redis.url}) as p2, \
            http_server(SERVER, env={"MCP_BACKEND": redis.url}) as p3:
        yield [p1, p2, p3]


def test_prometheus_sees_every_process_requests_and_the_in_flight_gauge(three: list[ServerURL], tmp_path: Path) -> None:
    targets = [base.removeprefix("http://") for base in three]
    with prometheus(targets) as server, httpx.Client() as client:
        session = Session(client)
        session.open(three[0])
        pids = {session.tool(base, "whoami") for base in three for _ in range(3)}  # one session on every process
        assert len(pids) == 3
        per_tool = 'mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",gen_ai_tool_name="whoami"}'
        assert server.wait_for_value(f"sum({per_tool})", 9.0) == 9.0
        assert server.wait_for_value(f"count(count by (instance) ({per_tool}))", 3.0) == 3.0
        buckets = server.query('sum by (le) (mcp_server_operation_duration_seconds_bucket{gen_ai_tool_name="whoami"})')
        assert {entry["metric"]["le"] for entry in buckets} >= {"0.01", "0.1", "1.0", "300.0", "+Inf"}

        gate = tmp_path / "gate"
        held: list[str] = []
        caller = threading.Thread(target=lambda: held.append(session.tool(three[1], "slow_report",
                                                                          {"gate": str(gate)})))
        caller.start()
        try:
            in_flight = 'sum(mcp_server_active_requests{mcp_method_name="tools/call"})'
            assert server.wait_for_value(in_flight, 1.0) == 1.0
        finally:
            gate.touch()
            caller.join(timeout=30)
        assert held and held[0].startswith("report from ")
        assert server.wait_for_value(in_flight, 0.0) == 0.0
        up = server.query("up")
        assert len(up) == 3 and all(entry["value"][1] == "1" for entry in up)
