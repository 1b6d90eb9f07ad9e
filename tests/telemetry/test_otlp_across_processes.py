"""Traces across a three-process deployment on a real Redis, exported over OTLP/HTTP to a receiver in the test.

The official SDK client (`mcp` 2.3, a round-robin transport: each HTTP request to the next process) starts a
tool call with a `traceparent` in `_meta`. In 2026-07-28 the call's input round is asked by one process and
its retry served by another: both spans are children of the client's span, and the retry links to the round
that asked. In the handshake era the server's elicitation is a CLIENT span child of the call, answered through
another process. A task created on one process and polled on another: the poll links to the creating call.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client, ClientSession, types
from mcp.client.streamable_http import streamable_http_client

from tests.helpers.redis_support import RedisProcess
from tests.helpers.scaleout_client import RoundRobin, answer_of, port_of
from tests.helpers.support import ROOT, ServerURL, http_server
from tests.telemetry.otlp_receiver import ReceivedSpan, Receiver, otel_environment, otlp_receiver
from tests.telemetry.support import CLIENT_SPAN, CLIENT_TRACE, TRACEPARENT

pytestmark = pytest.mark.anyio
SERVER = [str(ROOT / "tests" / "telemetry" / "observed_server.py")]
TASKS = "io.modelcontextprotocol/tasks"


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    with otlp_receiver() as found:
        yield found


@pytest.fixture(scope="module")
def three(redis: RedisProcess, receiver: Receiver) -> Iterator[list[ServerURL]]:
    with ExitStack() as stack:
        yield [stack.enter_context(http_server(SERVER, env={"MCP_BACKEND": redis.url,
                                                            **otel_environment(receiver, f"p{n}")}))
               for n in (1, 2, 3)]


async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"name": "Ada"})


def in_client_trace(name: str, count: int) -> Any:
    def found(spans: list[ReceivedSpan]) -> list[ReceivedSpan] | None:
        matching = [s for s in spans if s.name == name and s.trace_id == CLIENT_TRACE]
        return matching if len(matching) >= count else None
    return found


async def test_a_2026_input_round_asked_on_one_process_and_retried_on_another_is_one_linked_trace(
        three: list[ServerURL], receiver: Receiver) -> None:
    transport = RoundRobin([port_of(base) for base in three], transport=httpx2.AsyncHTTPTransport())
    async with httpx2.AsyncClient(transport=transport, timeout=30) as http:
        with anyio.fail_after(60):
            async with Client(streamable_http_client(f"{three[0]}/mcp", http_client=http), mode="auto",
                              elicitation_callback=elicit) as client:
                assert client.protocol_version == "2026-07-28"
                result = await client.call_tool("ask", {}, meta={"traceparent": TRACEPARENT})  # type: ignore[arg-type]
    assert result.content[0].text.startswith("hello Ada from ")  # type: ignore[union-attr]
    asking, retry = sorted(receiver.wait_for(in_client_trace("tools/call ask", 2), "two rounds of tools/call ask"),
                           key=lambda span: len(span.links))
    assert asking.parent_span_id == CLIENT_SPAN and retry.parent_span_id == CLIENT_SPAN
    assert asking.service != retry.service  # asked by one process, retried on another
    assert retry.links == [(CLIENT_TRACE, asking.span_id, {"mcp.link.reason": "input_round"})]
    assert asking.attributes["mcp.protocol.version"] == "2026-07-28" and "mcp.session.id" not in asking.attributes


async def test_a_handshake_era_elicitation_is_a_client_span_of_the_call_answered_through_another_process(
        three: list[ServerURL], receiver: Receiver) -> None:
    transport = RoundRobin([port_of(base) for base in three], transport=httpx2.AsyncHTTPTransport())
    async with httpx2.AsyncClient(transport=transport, timeout=30) as http:
        with anyio.fail_after(60):
            async with streamable_http_client(f"{three[0]}/mcp", http_client=http) as (read, write), \
                    ClientSession(read, write, elicitation_callback=elicit) as session:
                await session.initialize()
                result = await session.call_tool("ask", {}, meta={"traceparent": TRACEPARENT})  # type: ignore[arg-type]
    assert result.content[0].text.startswith("hello Ada from ")  # type: ignore[union-attr]

    def chain(spans: list[ReceivedSpan]) -> tuple[ReceivedSpan, ReceivedSpan] | None:
        for call in (s for s in spans if s.name == "tools/call ask" and "mcp.session.id" in s.attributes
                     and s.trace_id == CLIENT_TRACE):
            for question in spans:
                if question.name == "elicitation/create" and question.parent_span_id == call.span_id:
                    return call, question
        return None

    call, question = receiver.wait_for(chain, "a tools/call span with its elicitation/create child")
    assert call.parent_span_id == CLIENT_SPAN and call.kind == 2 and question.kind == 3  # SERVER, CLIENT
    assert question.service == call.service and question.status_code != 2  # answered (not ERROR)
    sent = [port for method, _, port in transport.sent if method == "POST"]
    assert len(set(sent)) == 3  # the answer to the question came in through another process


def test_a_task_polled_on_another_process_links_to_the_call_that_created_it(
        three: list[ServerURL], receiver: Receiver, tmp_path: Any) -> None:
    p1, p2, _ = three
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}}}
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2026-07-28"}
    gate = tmp_path / "gate"
    call_headers = {**headers, "Mcp-Method": "tools/call", "Mcp-Name": "slow_report"}
    created = answer_of(httpx.post(f"{p1}/mcp", headers=call_headers,
                                   json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                                       "name": "slow_report", "arguments": {"gate": str(gate)},
                                       "_meta": {**meta, "traceparent": TRACEPARENT}}}, timeout=20))
    task_id = created["result"]["taskId"]
    polled = answer_of(httpx.post(f"{p2}/mcp", headers={**headers, "Mcp-Method": "tasks/get", "Mcp-Name": task_id},
                                  json={"jsonrpc": "2.0", "id": 2, "method": "tasks/get",
                                        "params": {"taskId": task_id, "_meta": meta}}, timeout=20))
    assert polled.get("result", {}).get("status") == "working", polled
    gate.touch()
    creating = receiver.wait_for(lambda spans: next((s for s in spans if s.name == "tools/call slow_report"
                                                     and s.trace_id == CLIENT_TRACE
                                                     and not s.attributes.get("mcp.task.run")), None), "creating span")
    poll = receiver.wait_for(lambda spans: next((s for s in spans if s.name == "tasks/get" and s.links), None), "poll")
    assert poll.service != creating.service
    assert poll.links == [(CLIENT_TRACE, creating.span_id, {"mcp.link.reason": "task_created"})]
    read = receiver.wait_for(lambda spans: next((s for s in spans if s.name == "redis read task"
                                                 and s.parent_span_id == poll.span_id), None), "the poll's Redis read")
    assert read.kind == 3 and read.attributes == {"db.system.name": "redis", "db.operation.name": "read task"}
    run = receiver.wait_for(lambda spans: next((s for s in spans if s.name == "tools/call slow_report"
                                                and s.attributes.get("mcp.task.run")), None), "the task's run")
    assert run.service == creating.service and (CLIENT_TRACE, creating.span_id) in [link[:2] for link in run.links]
