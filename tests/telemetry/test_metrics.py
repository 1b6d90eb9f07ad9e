"""Metrics: mcp.server.operation.duration per the conventions, bounded labels (a client cannot add series),
the operator's gauges and counters, and the same numbers in Prometheus' text format."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_kit import MCPKitError, MCPServer
from mcp_kit._telemetry import hooks
from mcp_kit._telemetry.middleware import Telemetry
from mcp_kit.middleware import RateLimit
from mcp_kit.testing import connect
from tests.telemetry.support import recorded

pytestmark = pytest.mark.anyio


def make_app() -> MCPServer:
    app = MCPServer("measured")

    @app.tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    @app.resource("demo://thing")
    def thing() -> str:
        """A resource."""
        return "thing"

    return app


async def test_operation_duration_is_recorded_with_method_tool_error_type_and_version() -> None:
    app = make_app()
    with recorded(app) as seen:
        async with connect(app) as client:
            await client.call_tool("add", {"a": 1, "b": 2})
            await client.call_tool("add", {"a": 1, "b": 3})
            bad = await client.request("tools/call", {"name": "add", "arguments": {"a": "x"}})
            assert bad["isError"] is True
            await client.read_resource("demo://thing")
        points = seen.points("mcp.server.operation.duration")
    by_attributes = {tuple(sorted(dict(p.attributes).items())): p for p in points}
    ok = (("gen_ai.tool.name", "add"), ("mcp.method.name", "tools/call"), ("mcp.protocol.version", "2025-11-25"),
          ("network.transport", "pipe"))
    assert by_attributes[ok].count == 2
    assert list(by_attributes[ok].explicit_bounds) == [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]
    failed = [p for p in points if dict(p.attributes).get("error.type")]
    assert [dict(p.attributes)["error.type"] for p in failed] == ["tool_error"]
    read = [p for p in points if dict(p.attributes)["mcp.method.name"] == "resources/read"]
    assert len(read) == 1 and "mcp.resource.uri" not in dict(read[0].attributes)  # no URI label on metrics


async def test_a_client_inventing_tool_names_and_notifications_adds_no_series() -> None:
    app = make_app()
    with recorded(app) as seen:
        async with connect(app) as client:
            for n in range(60):
                with pytest.raises(MCPKitError):
                    await client.request("tools/call", {"name": f"invented-{n}", "arguments": {}})
                await client.notify(f"notifications/invented-{n}", {})
        points = seen.points("mcp.server.operation.duration")
        spans = seen.spans()
    calls = [p for p in points if dict(p.attributes)["mcp.method.name"] == "tools/call"]
    assert len(calls) == 1 and dict(calls[0].attributes)["gen_ai.tool.name"] == "_OTHER" and calls[0].count == 60
    others = [p for p in points if dict(p.attributes)["mcp.method.name"] == "_OTHER"]
    assert len(others) == 1 and others[0].count == 60
    assert not any("invented" in span.name for span in spans)


async def test_gauges_and_counters_read_what_the_server_counts() -> None:
    app = make_app()
    app.set_builtin_middleware("rate_limit", RateLimit(limits={"add": "1/h"}))
    with recorded(app) as seen:
        async with connect(app) as client:
            await client.call_tool("add", {"a": 1, "b": 2})
            refused = await client.call_tool("add", {"a": 1, "b": 2})
            assert refused["isError"] is True
            await client.subscribe("demo://thing")
            sessions = seen.points("mcp.server.active_sessions")
            subscriptions = seen.points("mcp.server.subscriptions")
            refusals = seen.points("mcp.server.rate_limit.refusals")
            active = seen.points("mcp.server.active_requests")
    assert [p.value for p in sessions] == [1] and [p.value for p in subscriptions] == [1]
    assert [(dict(p.attributes), p.value) for p in refusals] == [({"mcp.method.name": "tools/call"}, 1)]
    assert {p.value for p in active} == {0}  # every request that started has ended
    for name in ("mcp.server.tasks", "mcp.server.listeners", "mcp.server.event_store.size",
                 "mcp.server.sync_threads.queue_depth", "mcp.server.process_pool.queue_depth"):
        assert seen.points(name), name


async def test_the_prometheus_text_has_the_same_numbers_under_prometheus_names() -> None:
    app = make_app()
    telemetry = Telemetry(prometheus=True, from_environment=False)
    app.set_builtin_middleware("telemetry", telemetry)
    try:
        async with connect(app) as client:
            await client.call_tool("add", {"a": 1, "b": 2})
            text = telemetry.prometheus.scrape().decode()
    finally:
        telemetry.uninstall()
        hooks.active = None
    assert ('mcp_server_operation_duration_seconds_count{error_type="",gen_ai_prompt_name="",gen_ai_tool_name="add",'
            'mcp_method_name="tools/call",mcp_protocol_version="2025-11-25",network_transport="pipe"} 1.0') in text
    for name in ("mcp_server_active_requests", "mcp_server_active_sessions", "mcp_server_event_store_size_bytes",
                 "mcp_server_sync_threads_queue_depth", "mcp_server_process_pool_queue_depth",
                 "mcp_server_tasks{mcp_task_state=\"running\"}", "# TYPE mcp_server_timeouts_total counter",
                 "# TYPE mcp_server_session_duration_seconds histogram"):
        assert name in text, name


async def test_the_session_duration_is_recorded_when_a_session_ends() -> None:
    app = make_app()
    with recorded(app) as seen:
        async with connect(app) as client:
            await client.call_tool("add", {"a": 1, "b": 2})
        points: list[Any] = seen.points("mcp.server.session.duration")
    assert len(points) == 1 and points[0].count == 1
    assert dict(points[0].attributes) == {"mcp.protocol.version": "2025-11-25", "network.transport": "pipe"}


async def test_a_tool_stopped_at_its_timeout_counts_as_a_tool_timeout() -> None:
    import anyio

    app = make_app()

    @app.tool(timeout=0.05)
    async def stuck() -> str:
        """Never finishes."""
        await anyio.sleep_forever()
        return "never"

    with recorded(app) as seen:
        async with connect(app) as client:
            stopped = await client.call_tool("stuck", {})
            assert stopped["isError"] is True
            await client.call_tool("add", {"a": 1, "b": 2})
        timeouts = seen.points("mcp.server.timeouts")
    assert [(dict(p.attributes), p.value) for p in timeouts] == [({"mcp.timeout.kind": "tool"}, 1)]
