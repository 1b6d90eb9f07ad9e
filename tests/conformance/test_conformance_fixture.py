"""The conformance fixture exposes what @modelcontextprotocol/conformance checks (in-memory, no Node).

Each assertion mirrors a check of the suite's server scenarios (see conformance/run.sh for the
real suite legs); these run in the ordinary pytest pass so a fixture regression shows up fast.
"""

from __future__ import annotations

import base64
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_kit.testing import connect

sys.path.insert(0, str(Path(__file__).parent))
from fixture_server import JSON_SCHEMA_2020_12, build_app  # noqa: E402

pytestmark = pytest.mark.anyio

HANDSHAKE_TOOLS = [
    "test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource",
    "test_multiple_content_types", "test_tool_with_logging", "test_error_handling", "test_tool_with_progress",
    "test_sampling", "test_elicitation", "test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums",
    "json_schema_2020_12_tool", "test_reconnection",
]


class Recorder:
    """A client-side handler that remembers the request params and answers with `reply`."""

    def __init__(self, reply: dict[str, Any]) -> None:
        self.reply = reply
        self.seen: list[dict[str, Any]] = []

    def __call__(self, params: dict[str, Any]) -> dict[str, Any]:
        self.seen.append(params)
        return self.reply


async def test_tools_listed_with_descriptions_and_simple_text_first() -> None:
    async with connect(build_app(), protocol_version="2025-11-25") as client:
        tools = await client.list_tools()
    names = [tool["name"] for tool in tools]
    assert set(HANDSHAKE_TOOLS) <= set(names)
    assert names[0] == "test_simple_text"  # the 2026 header checks call the first tool with {}
    assert all(tool["description"] and tool["inputSchema"] for tool in tools)
    schema = next(t for t in tools if t["name"] == "json_schema_2020_12_tool")["inputSchema"]
    assert schema == JSON_SCHEMA_2020_12
    header_tool = next(t for t in tools if t["name"] == "test_header_param")["inputSchema"]
    assert header_tool["properties"]["region"]["x-mcp-header"] == "Region"
    assert header_tool["properties"]["region"]["type"] == "string"


async def test_content_tools_return_the_expected_blocks() -> None:
    async with connect(build_app(), protocol_version="2025-11-25") as client:
        text = await client.call_tool("test_simple_text", {})
        image = await client.call_tool("test_image_content", {})
        audio = await client.call_tool("test_audio_content", {})
        embedded = await client.call_tool("test_embedded_resource", {})
        mixed = await client.call_tool("test_multiple_content_types", {})
        error = await client.call_tool("test_error_handling", {})
    assert text["content"] == [{"type": "text", "text": "This is a simple text response for testing."}]
    assert image["content"][0]["mimeType"] == "image/png"
    assert base64.b64decode(image["content"][0]["data"]).startswith(b"\x89PNG\r\n\x1a\n")
    assert audio["content"][0]["mimeType"] == "audio/wav"
    assert base64.b64decode(audio["content"][0]["data"])[8:12] == b"WAVE"
    assert embedded["content"][0]["resource"] == {
        "uri": "test://embedded-resource", "mimeType": "text/plain", "text": "This is an embedded resource content."}
    assert [block["type"] for block in mixed["content"]] == ["text", "image", "resource"]
    assert error["isError"] is True
    assert error["content"][0]["text"] == "This tool intentionally returns an error for testing"


async def test_logging_and_progress_notifications() -> None:
    async with connect(build_app(), protocol_version="2025-11-25") as client:
        await client.set_level("debug")
        await client.call_tool("test_tool_with_logging", {})
        await client.call_tool("test_tool_with_progress", {}, progress_token="progress-test-1")
        logs = [n["params"]["data"] for n in client.notifications_named("notifications/message")]
        progress = [n["params"] for n in client.notifications_named("notifications/progress")]
    assert logs[:3] == ["Tool execution started", "Tool processing data", "Tool execution completed"]
    assert [(p["progressToken"], p["progress"], p["total"]) for p in progress] == [
        ("progress-test-1", 0, 100), ("progress-test-1", 50, 100), ("progress-test-1", 100, 100)]


async def test_sampling_and_elicitation_requests() -> None:
    sampling = Recorder({"role": "assistant", "content": {"type": "text", "text": "from the client"},
                         "model": "test-model", "stopReason": "endTurn"})
    elicitation = Recorder({"action": "accept", "content": {"username": "testuser", "email": "test@example.com"}})
    async with connect(
        build_app(), protocol_version="2025-11-25", sampling=sampling, elicitation=elicitation
    ) as client:
        sampled = await client.call_tool("test_sampling", {"prompt": "Test prompt for sampling"})
        elicited = await client.call_tool("test_elicitation", {"message": "Please provide your information"})
    assert sampling.seen[0]["maxTokens"] == 100
    assert sampling.seen[0]["messages"][0]["content"]["text"] == "Test prompt for sampling"
    assert sampled["content"][0]["text"] == "LLM response: from the client"
    assert elicitation.seen[0]["message"] == "Please provide your information"
    assert elicitation.seen[0]["requestedSchema"]["required"] == ["username", "email"]
    assert "testuser" in elicited["content"][0]["text"]


async def test_elicitation_schemas_for_sep1034_and_sep1330() -> None:
    elicitation = Recorder({"action": "accept", "content": {}})
    async with connect(build_app(), protocol_version="2025-11-25", elicitation=elicitation) as client:
        await client.call_tool("test_elicitation_sep1034_defaults", {})
        await client.call_tool("test_elicitation_sep1330_enums", {})
    defaults = elicitation.seen[0]["requestedSchema"]["properties"]
    assert {k: (v["type"], v["default"]) for k, v in defaults.items()} == {
        "name": ("string", "John Doe"), "age": ("integer", 30), "score": ("number", 95.5),
        "status": ("string", "active"), "verified": ("boolean", True)}
    assert defaults["status"]["default"] in defaults["status"]["enum"]
    enums = elicitation.seen[1]["requestedSchema"]["properties"]
    assert "enum" in enums["untitledSingle"] and "oneOf" not in enums["untitledSingle"]
    assert all({"const", "title"} <= set(item) for item in enums["titledSingle"]["oneOf"])
    assert "enum" not in enums["titledSingle"]
    assert len(enums["legacyEnum"]["enumNames"]) == len(enums["legacyEnum"]["enum"])
    assert enums["untitledMulti"]["items"]["type"] == "string" and "enum" in enums["untitledMulti"]["items"]
    assert all({"const", "title"} <= set(item) for item in enums["titledMulti"]["items"]["anyOf"])


async def test_resources_and_template() -> None:
    async with connect(build_app(), protocol_version="2025-11-25") as client:
        listed = await client.request("resources/list", {})
        text = await client.read_resource("test://static-text")
        binary = await client.read_resource("test://static-binary")
        template = await client.read_resource("test://template/123/data")
        await client.subscribe("test://watched-resource")
        await client.unsubscribe("test://watched-resource")
    uris = {resource["uri"] for resource in listed["resources"]}
    assert {"test://static-text", "test://static-binary", "test://watched-resource"} <= uris
    assert all(resource["name"] for resource in listed["resources"])
    assert text == [{"uri": "test://static-text", "mimeType": "text/plain",
                     "text": "This is the content of the static text resource."}]
    assert binary[0]["mimeType"] == "image/png" and binary[0]["blob"]
    assert template[0]["uri"] == "test://template/123/data" and "123" in template[0]["text"]


async def test_prompts_and_completion() -> None:
    async with connect(build_app(), protocol_version="2025-11-25") as client:
        listed = await client.request("prompts/list", {})
        simple = await client.get_prompt("test_simple_prompt")
        with_args = await client.get_prompt("test_prompt_with_arguments", {"arg1": "testValue1", "arg2": "testValue2"})
        embedded = await client.get_prompt(
            "test_prompt_with_embedded_resource", {"resourceUri": "test://example-resource"}
        )
        image = await client.get_prompt("test_prompt_with_image")
        completion = await client.complete(ref={"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                                           argument={"name": "arg1", "value": "test"})
    assert all(prompt["description"] for prompt in listed["prompts"])
    assert simple["messages"][0]["content"]["text"] == "This is a simple prompt for testing."
    assert with_args["messages"][0]["content"]["text"] == "Prompt with arguments: arg1='testValue1', arg2='testValue2'"
    assert embedded["messages"][0]["content"]["resource"]["uri"] == "test://example-resource"
    assert image["messages"][0]["content"]["type"] == "image" and image["messages"][0]["content"]["mimeType"]
    assert completion["values"] == ["test", "testValue1"]
