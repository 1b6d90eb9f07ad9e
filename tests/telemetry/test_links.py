"""Span links: a 2026-07-28 input round's retry links to the round that asked (its context in the signed
request state), a task's run and its tasks/* requests link to the call that created it (its context in the
task record)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcp_kit import Context, MCPServer
from mcp_kit._eras.input_rounds import trace_of_state
from mcp_kit.tasks import TaskRecord
from mcp_kit.tasks._methods import tasks_of
from mcp_kit.testing import connect
from tests.telemetry.support import CLIENT_TRACE, TRACEPARENT, ids, parent_id, recorded

pytestmark = pytest.mark.anyio
TASKS = "io.modelcontextprotocol/tasks"
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {TASKS: {}}}}
NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}}


def make_app(release: anyio.Event) -> MCPServer:
    app = MCPServer("linked")

    @app.tool
    async def ask(ctx: Context) -> str:
        """Asks the user."""
        answer = await ctx.elicit("Your name?", NAME_SCHEMA, key="name")
        return f"hello {(answer.content or {}).get('name')}"

    @app.tool(task="optional")
    async def job(ctx: Context) -> str:
        """Waits to be released."""
        await release.wait()
        return "done"

    return app


async def test_the_retry_of_an_input_round_links_to_the_round_that_asked() -> None:
    app = make_app(anyio.Event())
    with recorded(app) as seen:
        async with connect(app) as client:
            first = await client.request("tools/call", {"name": "ask", "arguments": {},
                                                        "_meta": {**META, "traceparent": TRACEPARENT}})
            assert first["resultType"] == "input_required"
            state = first["requestState"]
            second = await client.request("tools/call", {
                "name": "ask", "arguments": {}, "_meta": {**META}, "requestState": state,
                "inputResponses": {"name": {"action": "accept", "content": {"name": "Bo"}}}})
            assert second["content"][0]["text"] == "hello Bo"
        asking, retry = seen.spans("tools/call ask")
    assert parent_id(asking) is not None and ids(asking)[0] == CLIENT_TRACE
    assert retry.parent is None  # the retry came without a traceparent: its own trace, linked to the asking round
    (link,) = retry.links
    assert (format(link.context.trace_id, "032x"), format(link.context.span_id, "016x")) == ids(asking)
    assert link.attributes["mcp.link.reason"] == "input_round"  # type: ignore[index]
    assert trace_of_state(state) == {"traceparent": f"00-{ids(asking)[0]}-{ids(asking)[1]}-01"}
    assert trace_of_state(state[:-3] + "abc") is None  # a state that does not verify links nowhere


async def test_a_task_run_and_its_polls_link_to_the_call_that_created_it() -> None:
    release = anyio.Event()
    app = make_app(release)
    with recorded(app) as seen:
        async with connect(app) as client:
            created = await client.request("tools/call", {"name": "job", "arguments": {},
                                                          "_meta": {**META, "traceparent": TRACEPARENT}})
            assert created["resultType"] == "task"
            record = await tasks_of(app).store.get(created["taskId"])
            assert isinstance(record, TaskRecord) and record.trace_context is not None
            assert TaskRecord.from_dict(record.to_dict()).trace_context == record.trace_context
            await client.request("tasks/get", {"taskId": created["taskId"], "_meta": META})
            release.set()
            for _ in range(200):
                polled: Any = await client.request("tasks/get", {"taskId": created["taskId"], "_meta": META})
                if polled["status"] == "completed":
                    break
                await anyio.sleep(0.01)
        spans = seen.spans("tools/call job")
        creating = next(span for span in spans if not (span.attributes or {}).get("mcp.task.run"))
        run = next(span for span in spans if (span.attributes or {}).get("mcp.task.run"))
        poll = seen.spans("tasks/get")[0]
    assert record.trace_context == {"traceparent": f"00-{ids(creating)[0]}-{ids(creating)[1]}-01"}
    assert run.attributes["mcp.task.id"] == created["taskId"]  # type: ignore[index]
    assert [(format(link.context.span_id, "016x"), link.attributes["mcp.link.reason"]) for link in run.links] == [
        (ids(creating)[1], "task_created")]
    assert [format(link.context.span_id, "016x") for link in poll.links] == [ids(creating)[1]]


def test_an_older_task_record_without_a_trace_context_still_reads() -> None:
    record = TaskRecord(task_id="t1", status="working", created_at_ms=1, updated_at_ms=1, ttl_ms=1000)
    data = record.to_dict()
    assert "traceContext" not in data and TaskRecord.from_dict(data).trace_context is None
    assert TaskRecord.from_dict({**data, "traceContext": {"traceparent": 5}}).trace_context is None
