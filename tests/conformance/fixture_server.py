"""The fixture server for the official MCP conformance suite (@modelcontextprotocol/conformance).

It exposes exactly the tools, resources, templates and prompts the suite's server scenarios call
(0.1.16 and 0.2.0-alpha.12; names and contents from the scenario sources, see
/tmp/notes/conformance.md), written with mcp_kit's public API only.

    python tests/conformance/fixture_server.py --transport http --host 127.0.0.1 --port 8000
    python tests/conformance/fixture_server.py              # stdio

conformance/run.sh starts it and runs every suite leg against it.
"""

from __future__ import annotations

import argparse
import logging
import struct
import zlib
from pathlib import Path
from typing import Annotated, Any

import anyio
from pydantic import Field

from mcp_kit import (
    Audio,
    Context,
    Image,
    MCPError,
    MCPServer,
    ToolError,
    UserMessage,
    add_run_arguments,
)

logger = logging.getLogger("conformance.fixture")
SKILLS = Path(__file__).resolve().parent / "skills"  # SEP-2640: the first skill by URI has a subdirectory
# The protocol models (EmbeddedResource, PromptMessage, ...) are imported inside the few tools and prompts that
# return them: importing them takes a third of this server's start, and the stdio and proxy legs of
# conformance/run.sh start one server per session (about a hundred a run).


# ---------------------------------------------------------------- test media


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def red_pixel_png() -> bytes:
    """A valid 1x1 red PNG."""
    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # 1x1, 8-bit RGB
    pixels = zlib.compress(b"\x00\xff\x00\x00")  # filter byte + one red pixel
    return b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", header) + _png_chunk(b"IDAT", pixels) + _png_chunk(b"IEND", b"")


def silent_wav() -> bytes:
    """A valid WAV: 8 kHz mono 16-bit PCM, one silent sample."""
    samples = b"\x00\x00"
    fmt = struct.pack("<HHIIHH", 1, 1, 8000, 16000, 2, 16)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(samples)) + samples
    return b"RIFF" + struct.pack("<I", len(body)) + body


PNG = red_pixel_png()
WAV = silent_wav()

# ---------------------------------------------------------------- schemas the suite checks verbatim

SEP1034_DEFAULTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"],
                   "default": "active"},
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
    "required": [],
}

SEP1330_ENUMS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "description": "Untitled single-select",
                           "enum": ["option1", "option2", "option3"]},
        "titledSingle": {"type": "string", "description": "Titled single-select", "oneOf": [
            {"const": "value1", "title": "First Option"},
            {"const": "value2", "title": "Second Option"},
            {"const": "value3", "title": "Third Option"},
        ]},
        "legacyEnum": {"type": "string", "description": "Legacy titled enum", "enum": ["opt1", "opt2", "opt3"],
                       "enumNames": ["Option One", "Option Two", "Option Three"]},
        "untitledMulti": {"type": "array", "description": "Untitled multi-select",
                          "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
        "titledMulti": {"type": "array", "description": "Titled multi-select", "items": {"anyOf": [
            {"const": "value1", "title": "First Choice"},
            {"const": "value2", "title": "Second Choice"},
            {"const": "value3", "title": "Third Choice"},
        ]}},
    },
    "required": [],
}

JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        },
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}

NAME_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def elicitation_summary(action: str, content: Any) -> str:
    return f"Elicitation completed: action={action}, content={content}"


# ---------------------------------------------------------------- the app


def build_app() -> MCPServer:
    """The conformance fixture app (registration order = tools/list order)."""
    app = MCPServer("mcp-kit-conformance-fixture", version="1.0.0",
                    instructions="Fixture server for the MCP conformance suite.")
    _register_content_tools(app)
    _register_client_feature_tools(app)
    _register_schema_tools(app)
    _register_stateless_era_tools(app)
    _register_resources(app)
    _register_prompts(app)
    _register_task_tools(app)
    app.add_skills(SKILLS)
    return app


def _register_content_tools(app: MCPServer) -> None:
    # test_simple_text stays first: 2026-07-28 header checks call the first listed tool with {}.
    @app.tool
    def test_simple_text() -> str:
        """Returns a simple text response."""
        return "This is a simple text response for testing."

    @app.tool
    def test_image_content() -> Image:
        """Returns a 1x1 red PNG image."""
        return Image(PNG, "image/png")

    @app.tool
    def test_audio_content() -> Audio:
        """Returns a tiny WAV audio clip."""
        return Audio(WAV, "audio/wav")

    @app.tool
    def test_embedded_resource() -> Any:
        """Returns an embedded text resource."""
        from mcp_kit import EmbeddedResource, TextResourceContents

        return EmbeddedResource(type="resource", resource=TextResourceContents(
            uri="test://embedded-resource", mimeType="text/plain", text="This is an embedded resource content."))

    @app.tool
    def test_multiple_content_types() -> list[Any]:
        """Returns text, an image and an embedded resource."""
        from mcp_kit import EmbeddedResource, TextResourceContents

        return [
            "Multiple content types test:",
            Image(PNG, "image/png"),
            EmbeddedResource(type="resource", resource=TextResourceContents(
                uri="test://mixed-content-resource", mimeType="application/json", text='{"test":"data","value":123}')),
        ]

    @app.tool
    async def test_tool_with_logging(ctx: Context) -> str:
        """Sends three info log messages while it runs."""
        await ctx.info("Tool execution started")
        await anyio.sleep(0.05)
        await ctx.info("Tool processing data")
        await anyio.sleep(0.05)
        await ctx.info("Tool execution completed")
        return "Tool with logging executed successfully"

    @app.tool
    def test_error_handling() -> str:
        """Always fails with a tool error."""
        raise ToolError("This tool intentionally returns an error for testing")

    @app.tool
    async def test_tool_with_progress(ctx: Context) -> str:
        """Reports progress 0, 50 and 100 out of 100."""
        for step, progress in enumerate((0, 50, 100)):
            if step:
                await anyio.sleep(0.05)
            await ctx.report_progress(progress, 100)
        return "Tool with progress executed successfully"

    @app.tool
    async def test_reconnection(ctx: Context) -> str:
        """Closes its SSE response stream mid-call so the client resumes with Last-Event-ID (SEP-1699)."""
        await ctx.info("Before disconnect")
        if not ctx.close_sse_stream():
            logger.info("test_reconnection: this transport has no SSE response stream to close")
        await anyio.sleep(0.2)
        await ctx.info("After reconnect")
        return "Reconnection test completed"


def _register_client_feature_tools(app: MCPServer) -> None:
    @app.tool
    async def test_sampling(prompt: Annotated[str, Field(description="The prompt to send to the LLM")],
                            ctx: Context) -> str:
        """Asks the client's model to answer the prompt (sampling/createMessage)."""
        result = await ctx.sample(prompt, max_tokens=100)
        text = getattr(result.content, "text", None) or str(result.content)
        return f"LLM response: {text}"

    @app.tool
    async def test_elicitation(message: Annotated[str, Field(description="The message to show the user")],
                               ctx: Context) -> str:
        """Asks the user for a username and an email (elicitation/create)."""
        schema = {
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"},
            },
            "required": ["username", "email"],
        }
        result = await ctx.elicit(message, schema=schema)
        return f"User response: action={result.action}, content={result.content}"

    @app.tool
    async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
        """Elicits with default values for every primitive type (SEP-1034)."""
        result = await ctx.elicit("Please review and update the form fields with defaults",
                                  schema=SEP1034_DEFAULTS_SCHEMA)
        return elicitation_summary(result.action, result.content)

    @app.tool
    async def test_elicitation_sep1330_enums(ctx: Context) -> str:
        """Elicits with all five enum schema variants (SEP-1330)."""
        result = await ctx.elicit("Please select options from the enum fields", schema=SEP1330_ENUMS_SCHEMA)
        return elicitation_summary(result.action, result.content)


def _register_schema_tools(app: MCPServer) -> None:
    @app.tool(name="json_schema_2020_12_tool", description="Tool with JSON Schema 2020-12 features",
              input_schema=JSON_SCHEMA_2020_12)
    def json_schema_2020_12_tool(name: str | None = None, address: dict[str, Any] | None = None,
                                 contactMethod: str | None = None, phone: str | None = None,  # noqa: N803
                                 email: str | None = None) -> str:
        return f"JSON Schema 2020-12 tool called for {name or 'anonymous'}"

    @app.tool
    def test_header_param(
        region: Annotated[str, Field(description="Region, mirrored in the Mcp-Param-Region header",
                                     json_schema_extra={"x-mcp-header": "Region"})],
    ) -> str:
        """Echoes a parameter that clients also send as the Mcp-Param-Region header (SEP-2243)."""
        return f"region={region}"


def _register_stateless_era_tools(app: MCPServer) -> None:
    """Diagnostic tools the 2026-07-28 scenarios call (server-stateless, input-required-result-*)."""

    @app.tool
    async def test_missing_capability(ctx: Context) -> str:
        """Needs the sampling capability; a client without it must get -32021."""
        result = await ctx.sample("Say hello", max_tokens=20)
        return f"sampled: {getattr(result.content, 'text', '')}"

    @app.tool
    async def test_logging_tool(ctx: Context) -> str:
        """Logs at info level; nothing is sent when the request set no log level."""
        await ctx.info("test_logging_tool ran")
        return "logged"

    @app.tool
    async def test_streaming_elicitation(ctx: Context) -> str:
        """Elicits a name (an input-required result in the stateless era, never a request on the stream)."""
        result = await ctx.elicit("What is your name?", schema=NAME_SCHEMA)
        return f"Hello, {(result.content or {}).get('name', 'stranger')}!"

    def dynamic_tool() -> str:
        """Registered and removed by test_trigger_tool_change."""
        return "dynamic"

    def dynamic_prompt() -> str:
        """Registered and removed by test_trigger_prompt_change."""
        return "dynamic"

    @app.tool
    def test_trigger_tool_change() -> str:
        """Adds and removes a tool, so listeners get notifications/tools/list_changed."""
        app.add_tool(dynamic_tool, name="test_dynamic_tool")
        app.remove_tool("test_dynamic_tool")
        return "tool list changed"

    @app.tool
    def test_trigger_prompt_change() -> str:
        """Adds and removes a prompt, so listeners get notifications/prompts/list_changed."""
        app.prompt(dynamic_prompt, name="test_dynamic_prompt")
        app.remove_prompt("test_dynamic_prompt")
        return "prompt list changed"

    # input-required-result-* (SEP-2322): in the handshake era these are plain elicit/sample/roots
    # tools; in 2026-07-28 mcp_kit turns each ctx question into an input request.
    @app.tool
    async def test_input_required_result_elicitation(ctx: Context) -> str:
        """Asks for the user's name, then greets them."""
        result = await ctx.elicit("What is your name?", schema=NAME_SCHEMA, key="user_name")
        return f"Hello, {(result.content or {}).get('name')}!"

    @app.tool
    async def test_input_required_result_sampling(ctx: Context) -> str:
        """Asks the client's model for the capital of France."""
        result = await ctx.sample("What is the capital of France?", max_tokens=100, key="capital_question")
        return f"Model said: {getattr(result.content, 'text', '')}"

    @app.tool
    async def test_input_required_result_list_roots(ctx: Context) -> str:
        """Lists the client's roots."""
        roots = await ctx.list_roots(key="client_roots")
        return "Roots: " + ", ".join(str(root.uri) for root in roots)

    @app.tool
    async def test_input_required_result_request_state(ctx: Context) -> str:
        """Asks for a confirmation; the answer arrives with the echoed request state."""
        result = await ctx.elicit("Please confirm", schema={
            "type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}, key="confirm")
        return f"state-ok: confirmed={(result.content or {}).get('ok')}"

    @app.tool
    async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
        """Asks for a name, a model greeting and the roots at once."""
        answers: dict[str, Any] = {}

        async def ask_name() -> None:
            answers["name"] = await ctx.elicit("What is your name?", schema=NAME_SCHEMA)

        async def ask_model() -> None:
            answers["greeting"] = await ctx.sample("Generate a greeting", max_tokens=50)

        async def ask_roots() -> None:
            answers["roots"] = await ctx.list_roots()

        async with anyio.create_task_group() as tg:
            for ask in (ask_name, ask_model, ask_roots):
                tg.start_soon(ask)
        return f"Got {len(answers)} answers: name, greeting and {len(answers['roots'])} root(s)"

    @app.tool
    async def test_input_required_result_multi_round(ctx: Context) -> str:
        """Asks two questions one after the other."""
        name = await ctx.elicit("Step 1: What is your name?", schema=NAME_SCHEMA, key="step1")
        color = await ctx.elicit("Step 2: What is your favorite color?", schema={
            "type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}, key="step2")
        return f"{(name.content or {}).get('name')} likes {(color.content or {}).get('color')}"

    @app.tool
    async def test_input_required_result_tampered_state(ctx: Context) -> str:
        """Asks for a confirmation; a forged request state must be refused."""
        result = await ctx.elicit("Please confirm", schema={
            "type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}, key="confirm")
        return f"confirmed={(result.content or {}).get('ok')}"

    @app.tool
    async def test_input_required_result_capabilities(ctx: Context) -> str:
        """Asks only through the capabilities the client declared."""
        parts = []
        if ctx.client_supports("elicitation"):
            answer = await ctx.elicit("What is your name?", schema=NAME_SCHEMA)
            parts.append(f"name={(answer.content or {}).get('name')}")
        if ctx.client_supports("sampling"):
            reply = await ctx.sample("Say hello", max_tokens=20)
            parts.append(f"model={getattr(reply.content, 'text', '')}")
        return ", ".join(parts) or "client declared neither elicitation nor sampling"


def _register_resources(app: MCPServer) -> None:
    @app.resource("test://static-text", name="static-text", description="A static text resource",
                  mime_type="text/plain")
    def static_text() -> str:
        return "This is the content of the static text resource."

    @app.resource("test://static-binary", name="static-binary", description="A static binary resource (PNG)",
                  mime_type="image/png")
    def static_binary() -> bytes:
        return PNG

    @app.resource("test://template/{id}/data", name="template-data", description="Data for an id",
                  mime_type="application/json")
    def template_data(id: str) -> dict[str, Any]:  # noqa: A002 - the template variable is named id
        return {"id": id, "templateTest": True, "data": f"Data for ID: {id}"}

    @app.resource("test://watched-resource", name="watched-resource", description="A resource clients subscribe to",
                  mime_type="text/plain")
    def watched_resource() -> str:
        return "Watched resource content"


def _register_prompts(app: MCPServer) -> None:
    @app.prompt
    def test_simple_prompt() -> str:
        """A simple prompt without arguments."""
        return "This is a simple prompt for testing."

    @app.prompt
    def test_prompt_with_arguments(
        arg1: Annotated[str, Field(description="First test argument")],
        arg2: Annotated[str, Field(description="Second test argument")],
    ) -> str:
        """A prompt with two required arguments."""
        return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"

    @app.prompt
    def test_prompt_with_embedded_resource(
        resourceUri: Annotated[str, Field(description="URI of the resource to embed")],  # noqa: N803
    ) -> list[Any]:
        """A prompt that embeds a resource."""
        from mcp_kit import EmbeddedResource, PromptMessage, TextResourceContents

        embedded = EmbeddedResource(type="resource", resource=TextResourceContents(
            uri=resourceUri, mimeType="text/plain", text="Embedded resource content for testing."))
        return [PromptMessage(role="user", content=embedded), "Please process the embedded resource above."]

    @app.prompt
    def test_prompt_with_image() -> list[Any]:
        """A prompt with an image."""
        return [UserMessage(Image(PNG, "image/png")), "Please analyze the image above."]

    @app.prompt
    async def test_input_required_result_prompt(ctx: Context) -> str:
        """A prompt that first asks the user for context (SEP-2322)."""
        answer = await ctx.elicit(
            "What context should the prompt use?",
            schema={"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]},
            key="user_context",
        )
        return f"Use this context: {(answer.content or {}).get('context')}"

    @app.completion(ref="test_prompt_with_arguments", argument="arg1")
    def complete_arg1(value: str, context: dict[str, str]) -> list[str]:
        return [v for v in ("paris", "park", "party", "test", "testValue1") if v.startswith(value)]


def _register_task_tools(app: MCPServer) -> None:
    """The tools of the tasks extension scenarios (io.modelcontextprotocol/tasks, SEP-2663)."""

    @app.tool
    def greet(name: str) -> str:
        """Greet someone (a plain tool: never a task)."""
        return f"Hello, {name}!"

    @app.tool(task="optional")
    async def slow_compute(seconds: Annotated[float, Field(ge=0, le=600)], label: str = "") -> str:
        """Wait `seconds`, then answer (runs as a task when the client supports tasks)."""
        await anyio.sleep(seconds)
        return f"Computed {label or 'result'} after {seconds:g} s"

    @app.tool(task="required")
    async def failing_job() -> str:
        """Run about a second, then fail with a tool error (runs only as a task)."""
        await anyio.sleep(1)
        raise ToolError("The job failed: the input data is inconsistent")

    @app.tool(task="optional")
    async def protocol_error_job() -> str:
        """Fail with a JSON-RPC error."""
        raise MCPError(-32603, "The job hit an internal error")

    @app.tool(task="optional")
    async def confirm_delete(filename: str, ctx: Context) -> str:
        """Ask the user to confirm, then (pretend to) delete `filename`."""
        answer = await ctx.elicit(f"Delete {filename}?", schema={
            "type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]})
        if answer.action == "accept" and (answer.content or {}).get("confirm"):
            return f"Deleted {filename}"
        return f"Kept {filename}"

    @app.tool(task="optional")
    async def multi_input(ctx: Context) -> str:
        """Ask two questions at once; answer when both are answered."""
        schema = {"type": "object", "properties": {"value": {"type": "string"}}}
        answers: list[Any] = [None, None]

        async def ask(index: int, key: str) -> None:
            answers[index] = await ctx.elicit(f"Value for {key}?", schema=schema, key=key)

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask, 0, "first")
            tg.start_soon(ask, 1, "second")
        return "Both answered: " + ", ".join(str(a.action) for a in answers)

    @app.tool(task="required", task_start="explicit")
    async def test_tool_with_task(ctx: Context) -> str:
        """Ask for a user name (a multi-round-trip round), then run as a task that greets them."""
        answer = await ctx.elicit("What is your name?", schema={
            "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}, key="user_name")
        name = (answer.content or {}).get("name", "stranger")
        await ctx.start_task(f"Greeting {name}")
        await anyio.sleep(0.1)
        return f"Hello from the task, {name}!"


def main() -> None:
    parser = argparse.ArgumentParser(prog="fixture_server.py", description=__doc__.splitlines()[0])
    add_run_arguments(parser)
    build_app().run_from_args(parser.parse_args())


if __name__ == "__main__":
    main()
