"""Spans of requests, per OpenTelemetry's MCP conventions: names, attributes, the client's trace context as
parent, errors, the CLIENT span of a question to the client, ctx.trace_headers(), and privacy."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.trace import SpanKind, StatusCode

from mcp_kit import Context, MCPKitError, MCPServer
from mcp_kit.testing import connect
from tests.telemetry.support import CLIENT_SPAN, CLIENT_TRACE, TRACEPARENT, ids, parent_id, recorded

pytestmark = pytest.mark.anyio
NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def make_app() -> MCPServer:
    app = MCPServer("traced")

    @app.tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    @app.tool
    def explode(secret: str) -> str:
        """Fails, naming its argument."""
        raise ValueError(f"cannot handle {secret}")

    @app.tool
    async def headers(ctx: Context) -> dict[str, str]:
        """The trace headers a tool would send upstream."""
        return ctx.trace_headers()

    @app.tool
    async def ask(ctx: Context) -> str:
        """Asks the user."""
        answer = await ctx.elicit("Your name?", NAME_SCHEMA, key="name")
        return f"hello {(answer.content or {}).get('name')}"

    @app.prompt
    def greet(name: str) -> str:
        """A prompt."""
        return f"hi {name}"

    return app


async def test_a_tool_call_is_a_server_span_named_by_method_and_tool_child_of_the_client_context() -> None:
    app = make_app()
    with recorded(app) as seen:
        async with connect(app) as client:
            answer = await client.request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2},
                                                         "_meta": {"traceparent": TRACEPARENT,
                                                                   "tracestate": "rojo=00f067aa0ba902b7"}})
            assert answer["content"][0]["text"] == "3"
            session_id = client.session.session_id
        span = seen.span("tools/call add")
    assert span.kind == SpanKind.SERVER
    assert ids(span)[0] == CLIENT_TRACE and parent_id(span) == CLIENT_SPAN
    attributes = dict(span.attributes or {})
    assert attributes == {
        "mcp.method.name": "tools/call", "mcp.protocol.version": "2025-11-25", "network.transport": "pipe",
        "jsonrpc.request.id": attributes["jsonrpc.request.id"], "mcp.session.id": session_id,
        "gen_ai.tool.name": "add", "gen_ai.operation.name": "execute_tool"}
    assert span.status.status_code == StatusCode.UNSET
    assert seen.span("initialize").attributes["mcp.method.name"] == "initialize"  # type: ignore[index]
    assert seen.span("notifications/initialized").kind == SpanKind.SERVER


async def test_errors_carry_error_type_the_json_rpc_code_or_tool_error_and_no_argument_values() -> None:
    app = make_app()
    with recorded(app) as seen:
        async with connect(app) as client:
            crashed = await client.request("tools/call", {"name": "explode", "arguments": {"secret": "hunter2"}})
            assert crashed["isError"] is True
            with pytest.raises(MCPKitError):
                await client.request("prompts/get", {"name": "greet", "arguments": {"name": 3}})
            with pytest.raises(MCPKitError):
                await client.request("tools/call", {"name": "no-such-tool-hunter2", "arguments": {}})
        exploded = seen.span("tools/call explode")
        prompt = seen.span("prompts/get greet")
        unknown = seen.span("tools/call _OTHER")
    assert exploded.attributes["error.type"] == "tool_error"  # type: ignore[index]
    assert exploded.status.status_code == StatusCode.ERROR
    event = exploded.events[0]
    assert event.name == "exception"
    assert event.attributes["exception.type"] == "builtins.ValueError"  # type: ignore[index]
    assert prompt.attributes["error.type"] == "-32602"  # type: ignore[index]
    assert prompt.attributes["rpc.response.status_code"] == "-32602"  # type: ignore[index]
    assert unknown.attributes["gen_ai.tool.name"] == "_OTHER"  # type: ignore[index]
    for span in seen.spans():  # arguments never reach a span: not as attributes, not in events
        text = repr(dict(span.attributes or {})) + repr([dict(e.attributes or {}) for e in span.events])
        assert "hunter2" not in text, span.name


async def test_a_tool_that_opts_in_records_its_arguments_and_result() -> None:
    app = make_app()
    with recorded(app, capture_tools={"add"}) as seen:
        async with connect(app) as client:
            await client.call_tool("add", {"a": 2, "b": 5})
        span = seen.span("tools/call add")
    assert span.attributes["gen_ai.tool.call.arguments"] == '{"a": 2, "b": 5}'  # type: ignore[index]
    assert '"7"' in str(span.attributes["gen_ai.tool.call.result"])  # type: ignore[index]


async def test_a_question_to_the_client_is_a_client_span_child_of_the_call_its_context_in_meta() -> None:
    app = make_app()
    asked: list[dict[str, Any]] = []

    def elicitation(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"name": "Bo"}}

    with recorded(app) as seen:
        async with connect(app, elicitation=elicitation) as client:
            answer = await client.request("tools/call", {"name": "ask", "arguments": {},
                                                         "_meta": {"traceparent": TRACEPARENT}})
            assert answer["content"][0]["text"] == "hello Bo"
        server = seen.span("tools/call ask")
        question = seen.span("elicitation/create")
    assert question.kind == SpanKind.CLIENT and parent_id(question) == ids(server)[1]
    assert ids(question)[0] == CLIENT_TRACE
    assert question.attributes["mcp.method.name"] == "elicitation/create"  # type: ignore[index]
    traceparent = asked[0]["_meta"]["traceparent"]
    assert traceparent == f"00-{CLIENT_TRACE}-{ids(question)[1]}-01"


async def test_ctx_trace_headers_continue_the_request_span_and_pass_the_client_context_on_without_tracing() -> None:
    app = make_app()
    with recorded(app) as seen:
        async with connect(app) as client:
            answer = await client.request("tools/call", {"name": "headers", "arguments": {},
                                                         "_meta": {"traceparent": TRACEPARENT}})
        span = seen.span("tools/call headers")
    assert f"00-{CLIENT_TRACE}-{ids(span)[1]}-01" in answer["content"][0]["text"]
    async with connect(app) as client:  # no telemetry at all: the client's own context goes on
        answer = await client.request("tools/call", {"name": "headers", "arguments": {},
                                                     "_meta": {"traceparent": TRACEPARENT}})
        assert TRACEPARENT in answer["content"][0]["text"]
        bad = await client.request("tools/call", {"name": "headers", "arguments": {},
                                                  "_meta": {"traceparent": "00-zz-nope-01"}})
        assert bad["content"][0]["text"] == "{}" or "traceparent" not in bad["content"][0]["text"]


async def test_a_hostile_traceparent_starts_a_trace_of_its_own() -> None:
    app = make_app()
    with recorded(app) as seen:
        async with connect(app) as client:
            for hostile in ("00-" + "0" * 32 + "-" + CLIENT_SPAN + "-01", ["not", "a", "string"], "x" * 5000, 7):
                await client.request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 1},
                                                    "_meta": {"traceparent": hostile}})
        spans = seen.spans("tools/call add")
    assert len(spans) == 4 and all(span.parent is None for span in spans)
