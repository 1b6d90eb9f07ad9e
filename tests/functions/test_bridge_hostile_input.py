"""The function-calling bridge against hostile servers and models: references outside the schema are never
resolved, reference fan-out, cycles and deep nesting end in a clear refusal within budget, malformed tool
lists and model responses fail clearly, strict mode never exports a looser contract, one tool's name cannot
block another's, and arguments that cannot be sent are the model's error to fix."""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import mcp_kit.functions as functions
from mcp_kit.functions import (
    OPENAI_NAMES,
    ArgumentChecker,
    GeminiSchemaError,
    NameMap,
    SchemaConversionError,
    StrictSchemaError,
    ToolBridge,
    to_gemini_schema,
    to_strict_schema,
)
from mcp_kit.functions._names import _digest

CONVERTERS = [pytest.param(to_strict_schema, StrictSchemaError, id="strict"),
              pytest.param(to_gemini_schema, GeminiSchemaError, id="gemini")]


class RecordingSession:
    """A ToolSession that lists given tools and sends call arguments as the wire would (UTF-8 JSON)."""

    def __init__(self, tools: list[Any]) -> None:
        self.tools = tools
        self.sent: list[tuple[str, dict[str, Any]]] = []

    async def list_tools(self) -> list[Any]:
        return self.tools

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None, *,
                        timeout: float | None = None) -> dict[str, Any]:
        json.dumps(arguments, ensure_ascii=False, allow_nan=False).encode()  # what the client's encoder does
        self.sent.append((name, dict(arguments or {})))
        return {"content": [{"type": "text", "text": "done"}]}


def call(name: str, arguments: Any) -> dict[str, Any]:
    """A Chat Completions message asking for one call."""
    return {"tool_calls": [{"id": "c1", "type": "function", "function": {"name": name, "arguments": arguments}}]}


@contextlib.contextmanager
def schema_host() -> Iterator[tuple[str, list[str]]]:
    """A loopback HTTP server that serves a schema for any path and records every request."""
    requests: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the http.server hook's name)
            requests.append(self.path)
            body = json.dumps({"const": "FETCHED-FROM-THE-NETWORK"}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", requests
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


# ---------------------------------------------------------------------- references outside the document


@pytest.mark.anyio
async def test_a_file_reference_is_never_read_and_its_content_never_reaches_the_model(tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"const": "TOP-SECRET-CONTENT"}), encoding="utf-8")
    schema = {"type": "object", "properties": {"r": {"$ref": secret.as_uri()}}}
    with pytest.raises(SchemaConversionError, match="points outside this schema"):
        ArgumentChecker(schema)
    session = RecordingSession([{"name": "leaky", "inputSchema": schema}, {"name": "fine"}])
    bridge = await ToolBridge.from_sessions({"s": session})
    assert [tool.name for tool in bridge.tools] == ["fine"]
    (note,) = bridge.skipped
    assert note.tool == "leaky" and "points outside this schema" in note.reason
    turn = await bridge.run_turn("openai", call("leaky", '{"r": "x"}'))
    assert turn.outcomes[0].error_kind == "unknown_tool"
    assert "TOP-SECRET" not in json.dumps(turn.messages) and session.sent == []


def test_no_http_reference_is_fetched_by_argument_checking_or_strict_conversion() -> None:
    with schema_host() as (base, requests):
        hidden = {"type": "object", "properties": {
            "name": {"type": "string", "not": {"$ref": f"{base}/not.json"}},  # a keyword strict mode only describes
            "tag": {"anyOf": [{"type": "integer"}, {"$ref": f"{base}/any.json"}]}}}
        for schema in (hidden, {"type": "object", "properties": {"r": {"$ref": f"{base}/r.json"}}}):
            with pytest.raises(StrictSchemaError, match="points outside this schema"):
                to_strict_schema(schema)
            with pytest.raises(GeminiSchemaError, match="points outside this schema"):
                to_gemini_schema(schema)
            with pytest.raises(SchemaConversionError, match="points outside this schema"):
                ArgumentChecker(schema)
            bridge = ToolBridge({"s": object()}, {"s": [{"name": "t", "inputSchema": schema}]})  # type: ignore[dict-item]
            assert bridge.openai_tools(strict=True) == [] and bridge.tools == []
        assert requests == []


# ---------------------------------------------------------------------- budgets


def fan_out(levels: int) -> dict[str, Any]:
    """Each definition refers to the one below twice (described, so strict mode inlines it): 2**levels paths."""
    defs: dict[str, Any] = {"d0": {"type": "string"}}
    for level in range(1, levels + 1):
        below = f"#/$defs/d{level - 1}"
        defs[f"d{level}"] = {"type": "object", "properties": {"a": {"$ref": below, "description": "left"},
                                                              "b": {"$ref": below, "description": "right"}}}
    return {"type": "object", "properties": {"top": {"$ref": f"#/$defs/d{levels}"}}, "$defs": defs}


@pytest.mark.parametrize(("convert", "error"), CONVERTERS)
def test_reference_fan_out_is_refused_within_budget(convert: Any, error: type[Exception]) -> None:
    started = time.monotonic()
    with pytest.raises(error, match="subschemas|levels|deep"):
        convert(fan_out(22))
    assert time.monotonic() - started < 10  # generous: it takes well under a second; unbounded, minutes


@pytest.mark.parametrize(("convert", "error"), CONVERTERS)
def test_an_allof_cycle_and_deep_nesting_are_refused_not_a_recursion_error(
    convert: Any, error: type[Exception]
) -> None:
    cycle = {"type": "object", "properties": {"x": {"$ref": "#/$defs/a"}},
             "$defs": {"a": {"allOf": [{"$ref": "#/$defs/b"}]}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}}}
    with pytest.raises(error, match="reference cycle"):
        convert(cycle)
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(400):
        deep = {"type": "object", "properties": {"n": deep}}
    with pytest.raises(error, match="levels deep"):
        convert(deep)


# ---------------------------------------------------------------------- malformed tools and responses


@pytest.mark.anyio
async def test_malformed_tools_are_left_out_with_a_reason_and_the_others_exported() -> None:
    listed = [{"inputSchema": {"type": "object"}}, {"name": "list_schema", "inputSchema": [1]}, 5,
              {"name": 7}, {"name": "bad_annotations", "annotations": ["x"]}, {"name": "ok"},
              {"name": "ok", "description": "a second ok"}]
    bridge = await ToolBridge.from_sessions({"s": RecordingSession(listed), "t": RecordingSession("oops")})  # type: ignore[arg-type]
    assert [tool.name for tool in bridge.tools] == ["ok"]
    reasons = [(note.server, note.tool, note.reason) for note in bridge.skipped]
    assert reasons == [("s", "#0", "left out: it has no name"),
                       ("s", "list_schema", "left out: its inputSchema is list, not a JSON object"),
                       ("s", "#2", "left out: it is int, not a JSON object"),
                       ("s", "#3", "left out: its name is not a non-empty string"),
                       ("s", "bad_annotations", "left out: its annotations is list, not a JSON object"),
                       ("s", "ok", "left out: another tool of this server has the same name; the first one is kept"),
                       ("t", None, "its tool list is str, not a list; no tool of it is offered")]
    for format in ("openai", "openai-responses", "anthropic", "gemini"):
        export = bridge.export(format)
        assert len(export.definitions) == 1 and export.notes[:7] == bridge.skipped


@pytest.mark.anyio
@pytest.mark.parametrize(("format", "response", "message"), [
    ("openai", {"tool_calls": 5}, "tool_calls is a number, not a list"),
    ("openai", {"choices": [5]}, "choices[0] is a number, not a JSON object"),
    ("openai", {"tool_calls": ["x"]}, "tool_calls[0] is a string, not a JSON object"),
    ("openai", {"tool_calls": [{"type": "function", "function": 3}]}, "tool_calls[0].function is a number"),
    ("openai", 5, "the response is a number"),
    ("openai-responses", {"output": {"a": 1}}, "output is an object, not a list"),
    ("anthropic", {"content": 5}, "content is a number, not a list"),
    ("anthropic", {"content": [None]}, "content[0] is null, not a JSON object"),
    ("gemini", {"parts": 7}, "parts is a number, not a list"),
    ("gemini", {"candidates": [{"content": []}]}, "content is a list, not a JSON object"),
    ("gemini", {"parts": [{"functionCall": "f"}]}, "parts[0].functionCall is a string"),
])
async def test_a_malformed_model_response_raises_the_bridges_error(format: str, response: Any, message: str) -> None:
    bridge = await ToolBridge.from_sessions({"s": RecordingSession([{"name": "t"}])})
    with pytest.raises(ValueError) as caught:
        await bridge.run_turn(format, response)
    assert isinstance(caught.value, functions.MalformedResponseError) and message in str(caught.value)


# ---------------------------------------------------------------------- strict mode keeps the meaning


def test_strict_mode_refuses_what_it_would_loosen_and_auto_falls_back_per_tool_with_the_reason() -> None:
    typeless_cycle = {"type": "object", "properties": {"x": {"$ref": "#/$defs/a"}}, "required": ["x"],
                      "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}}
    two_unions = {"type": "object", "required": ["x"], "properties": {"x": {"allOf": [
        {"anyOf": [{"type": "integer"}, {"type": "string"}]}, {"oneOf": [{"type": "integer"}, {"type": "boolean"}]}]}}}
    with pytest.raises(StrictSchemaError, match="reference cycle"):
        to_strict_schema(typeless_cycle)
    with pytest.raises(StrictSchemaError, match="combines anyOf and oneOf") as caught:
        to_strict_schema(two_unions)
    assert caught.value.pointer == "/properties/x"
    closed_then_widened = {"type": "object", "required": ["x"], "properties": {"x": {"allOf": [
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": False},
        {"properties": {"b": {"type": "string"}}}]}}}
    with pytest.raises(StrictSchemaError, match="closed object"):
        to_strict_schema(closed_then_widened)
    tools = [{"name": "fine", "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}}},
             {"name": "two_unions", "inputSchema": two_unions}]
    bridge = ToolBridge({"s": object()}, {"s": tools})  # type: ignore[dict-item]
    export = bridge.export("openai", strict="auto")
    fine, unions = (definition["function"] for definition in export.definitions)
    assert fine["strict"] is True and "strict" not in unions
    assert unions["parameters"] == two_unions  # the tool's own contract, sent non-strict
    (note,) = export.notes
    assert (note.server, note.tool) == ("s", "two_unions")
    assert note.reason.startswith("exported without strict mode: tool 'two_unions': #/properties/x: combines anyOf")


# ---------------------------------------------------------------------- names


def test_a_tool_named_like_another_tools_hashed_name_blocks_nothing() -> None:
    long_name = "a" * 70
    squatter = f"{long_name[:55]}_{_digest('victim', long_name)}"  # exactly the victim's hashed name
    pairs = [("victim", long_name), ("squatter", squatter), ("victim", "other")]
    names = NameMap(pairs, OPENAI_NAMES)
    assert len(set(names.names)) == 3 and all(OPENAI_NAMES.is_valid(name) for name in names.names)
    assert names.exported("squatter", squatter) == squatter
    assert names.resolve(names.exported("victim", long_name)) == ("victim", long_name)
    assert NameMap(list(reversed(pairs)), OPENAI_NAMES).exported("victim", long_name) == names.exported(
        "victim", long_name
    )
    (renamed,) = names.renamed
    assert (renamed.server, renamed.tool) == ("victim", long_name) and "taken by another tool's name" in renamed.reason
    sessions: Any = {"victim": object(), "squatter": object()}
    bridge = ToolBridge(
        sessions, {"victim": [{"name": long_name}, {"name": "other"}], "squatter": [{"name": squatter}]}
    )
    export = bridge.export("openai")
    assert len(export.definitions) == 3
    assert [(note.server, note.tool) for note in export.notes] == [("victim", long_name)]


# ---------------------------------------------------------------------- arguments that cannot be sent


@pytest.mark.anyio
@pytest.mark.parametrize(("arguments", "reason"), [
    ('{"a": ' * 100_000 + "1" + "}" * 100_000, "nest too deeply"),
    ('{"a": "\\ud800"}', "lone surrogate"),
    ('{"a": NaN}', "not valid JSON"),
    ({"a": {"b": "\udfff"}}, "lone surrogate"),
    ({"a": float("inf")}, "not a JSON number"),
])
async def test_arguments_that_cannot_be_sent_are_bad_arguments(arguments: Any, reason: str) -> None:
    nested: Any = 1
    for _ in range(100_000):
        nested = {"a": nested}
    session = RecordingSession([{"name": "t", "inputSchema": {"type": "object"}}])
    bridge = await ToolBridge.from_sessions({"s": session})
    for sent in (arguments, nested):
        turn = await bridge.run_turn("openai", call("t", sent))
        (outcome,) = turn.outcomes
        assert outcome.error_kind == "bad_arguments", outcome.text
        assert (reason if sent is arguments else "levels deep") in outcome.text
    assert session.sent == []
