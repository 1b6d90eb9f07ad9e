"""Tools: schemas from signatures, worker threads, result normalisation, errors, fields by version."""

from __future__ import annotations

import base64
import threading
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from mcp_kit import (
    Audio,
    CallToolResult,
    Context,
    Image,
    MCPError,
    MCPServer,
    ResourceLink,
    TextContent,
    ToolAnnotations,
    ToolError,
)
from mcp_kit.testing import connect

pytestmark = pytest.mark.anyio

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8


class Weather(BaseModel):
    city: str
    celsius: float


def build_app() -> MCPServer:
    app = MCPServer("tools")

    @app.tool(title="Forecast", read_only=True, open_world=False, icons=[{"src": "https://x/icon.png"}])
    def forecast(
        city: Annotated[str, Field(description="City name, e.g. Paris")],
        days: int = 3,
        units: Literal["metric", "imperial"] = "metric",
        ctx: Context | None = None,
    ) -> Weather:
        """Forecast the weather.

        A longer paragraph about the tool.

        Args:
            city: ignored because Field(description=...) wins.
            days: How many days ahead,
                between 1 and 10.
            units: Unit system.

        Returns:
            The weather.
        """
        return Weather(city=city, celsius=21.5)

    @app.tool
    def where_sync() -> str:
        return threading.current_thread().name

    @app.tool
    async def where_async() -> str:
        return threading.current_thread().name

    @app.tool
    def as_dict(n: int) -> dict[str, Any]:
        return {"n": n, "squares": [n * n]}

    @app.tool
    def as_str() -> str:
        return "plain text"

    @app.tool
    def as_none() -> None:
        return None

    @app.tool
    def as_image() -> Image:
        return Image(PNG, "image/png")

    @app.tool
    def as_png_bytes() -> bytes:
        return PNG

    @app.tool
    def as_mixed() -> list:
        return [
            "intro",
            Image(b"gif-ish", "image/gif"),
            TextContent(type="text", text="outro"),
            Audio(b"RIFF", "audio/wav"),
        ]

    @app.tool
    def as_link() -> ResourceLink:
        return ResourceLink(type="resource_link", uri="file:///a.txt", name="a.txt")

    @app.tool
    def as_result() -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text="custom")], is_error=True)

    @app.tool(structured_output=True)
    def as_int() -> int:
        return 42

    @app.tool(structured_output=True)
    def as_list() -> list[str]:
        return ["a", "b"]

    @app.tool
    def strict(count: Annotated[int, Field(ge=1, le=5)], mode: Literal["fast", "slow"], name: str) -> str:
        return "ok"

    @app.tool
    def refuses() -> str:
        raise ToolError("No ticker 'AAPLE'. Did you mean AAPL (Apple Inc.)?")

    @app.tool
    def crashes() -> str:
        raise ValueError("division by cucumber")

    return app


async def tools_by_name(version: str = "2025-11-25") -> dict[str, dict[str, Any]]:
    async with connect(build_app(), protocol_version=version) as client:
        return {t["name"]: t for t in await client.list_tools()}


# ---------------------------------------------------------------------------- schemas


async def test_schema_from_signature_and_docstring() -> None:
    tool = (await tools_by_name())["forecast"]
    assert tool["description"].startswith("Forecast the weather.")
    assert "A longer paragraph" in tool["description"]
    assert "Args:" not in tool["description"] and "Returns" not in tool["description"]
    schema = tool["inputSchema"]
    assert schema["type"] == "object"
    props = schema["properties"]
    assert props["city"]["description"] == "City name, e.g. Paris"
    assert props["days"]["description"] == "How many days ahead, between 1 and 10."
    assert props["days"]["default"] == 3 and props["days"]["type"] == "integer"
    assert props["units"]["enum"] == ["metric", "imperial"] and props["units"]["default"] == "metric"
    assert props["units"]["description"] == "Unit system."
    assert schema["required"] == ["city"]
    assert "ctx" not in props and "ctx" not in schema["required"]


async def test_output_schema_for_a_model_return() -> None:
    tool = (await tools_by_name())["forecast"]
    assert tool["outputSchema"]["type"] == "object"
    assert set(tool["outputSchema"]["properties"]) == {"city", "celsius"}


async def test_annotations_title_and_icons() -> None:
    tool = (await tools_by_name())["forecast"]
    assert tool["title"] == "Forecast"
    assert tool["annotations"]["readOnlyHint"] is True and tool["annotations"]["openWorldHint"] is False
    assert tool["icons"] == [{"src": "https://x/icon.png"}]


async def test_annotations_object_is_accepted() -> None:
    app = MCPServer("a")

    @app.tool(annotations=ToolAnnotations(destructive_hint=True, idempotent_hint=False))
    def wipe() -> str:
        return "wiped"

    async with connect(app) as client:
        (tool,) = await client.list_tools()
        assert tool["annotations"] == {"destructiveHint": True, "idempotentHint": False}


async def test_fields_by_version() -> None:
    old = (await tools_by_name("2024-11-05"))["forecast"]
    assert not {"annotations", "title", "outputSchema", "icons"} & set(old)
    mid = (await tools_by_name("2025-03-26"))["forecast"]
    assert mid["annotations"]["readOnlyHint"] is True
    assert not {"title", "outputSchema", "icons"} & set(mid)
    june = (await tools_by_name("2025-06-18"))["forecast"]
    assert june["title"] == "Forecast" and "outputSchema" in june and "icons" not in june
    new = (await tools_by_name("2025-11-25"))["forecast"]
    assert "icons" in new


@pytest.mark.parametrize(("version", "structured"), [("2024-11-05", False), ("2025-03-26", False),
                                                     ("2025-06-18", True), ("2025-11-25", True)])
async def test_structured_content_only_from_2025_06_18(version: str, structured: bool) -> None:
    async with connect(build_app(), protocol_version=version) as client:
        result = await client.call_tool("forecast", {"city": "Paris"})
        assert ("structuredContent" in result) is structured
        assert '"celsius": 21.5' in result["content"][0]["text"]


async def test_audio_and_resource_link_downgraded_for_old_versions() -> None:
    async with connect(build_app(), protocol_version="2024-11-05") as client:
        mixed = await client.call_tool("as_mixed")
        assert [b["type"] for b in mixed["content"]] == ["text", "image", "text", "text"]
        assert "audio" in mixed["content"][3]["text"]
        link = await client.call_tool("as_link")
        assert link["content"][0]["type"] == "text" and "file:///a.txt" in link["content"][0]["text"]
    async with connect(build_app(), protocol_version="2025-06-18") as client:
        assert (await client.call_tool("as_link"))["content"][0]["type"] == "resource_link"


# ---------------------------------------------------------------------------- running


async def test_sync_tools_run_in_a_worker_thread_async_ones_on_the_loop() -> None:
    main = threading.current_thread().name
    async with connect(build_app()) as client:
        assert (await client.call_tool("where_sync"))["content"][0]["text"] != main
        assert (await client.call_tool("where_async"))["content"][0]["text"] == main


# ---------------------------------------------------------------------------- results


async def test_model_return_gives_structured_content_and_json_text() -> None:
    async with connect(build_app()) as client:
        result = await client.call_tool("forecast", {"city": "Oslo", "days": 2})
        assert result["isError"] is False
        assert result["structuredContent"] == {"city": "Oslo", "celsius": 21.5}
        assert result["content"][0]["type"] == "text"


async def test_str_dict_and_none_returns() -> None:
    async with connect(build_app()) as client:
        assert await client.call_tool("as_str") == {
            "content": [{"type": "text", "text": "plain text"}],
            "isError": False,
        }
        as_dict = await client.call_tool("as_dict", {"n": 3})
        assert as_dict["structuredContent"] == {"n": 3, "squares": [9]}
        assert '"squares"' in as_dict["content"][0]["text"]
        none = await client.call_tool("as_none")
        assert none["content"] == [] and none["isError"] is False


async def test_image_returns() -> None:
    async with connect(build_app()) as client:
        for name in ("as_image", "as_png_bytes"):
            (block,) = (await client.call_tool(name))["content"]
            assert block == {"type": "image", "data": base64.b64encode(PNG).decode(), "mimeType": "image/png"}


async def test_list_of_content_and_full_result() -> None:
    async with connect(build_app()) as client:
        mixed = (await client.call_tool("as_mixed"))["content"]
        assert [b["type"] for b in mixed] == ["text", "image", "text", "audio"]
        assert mixed[0]["text"] == "intro" and mixed[2]["text"] == "outro"
        assert mixed[1]["mimeType"] == "image/gif" and base64.b64decode(mixed[1]["data"]) == b"gif-ish"
        full = await client.call_tool("as_result")
        assert full["content"] == [{"type": "text", "text": "custom"}] and full["isError"] is True


async def test_full_result_carries_only_fields_of_the_negotiated_version() -> None:
    """mcp_types 2.3 dumps `resultType` (a 2026-07-28 field); a handshake-era answer should not carry it."""
    async with connect(build_app(), protocol_version="2025-11-25") as client:
        full = await client.call_tool("as_result")
        assert set(full) == {"content", "isError"}


async def test_structured_output_wraps_non_object_values() -> None:
    async with connect(build_app()) as client:
        tools = {t["name"]: t for t in await client.list_tools()}
        assert tools["as_int"]["outputSchema"]["properties"]["result"]["type"] == "integer"
        assert (await client.call_tool("as_int"))["structuredContent"] == {"result": 42}


async def test_structured_list_of_strings_carries_structured_content() -> None:
    """A tool that declares an outputSchema must return structuredContent matching it."""
    async with connect(build_app()) as client:
        tools = {t["name"]: t for t in await client.list_tools()}
        assert tools["as_list"]["outputSchema"]["required"] == ["result"]
        result = await client.call_tool("as_list")
        assert result.get("structuredContent") == {"result": ["a", "b"]}


# ---------------------------------------------------------------------------- errors


async def test_validation_error_names_each_field_what_was_given_and_what_is_expected() -> None:
    async with connect(build_app()) as client:
        result = await client.call_tool("strict", {"count": 9, "mode": "turbo", "extra": 1})
        assert result["isError"] is True
        text = result["content"][0]["text"]
        assert "strict" in text
        count_line = next(line for line in text.splitlines() if "'count'" in line)
        assert "given: 9" in count_line and "<= 5" in count_line
        mode_line = next(line for line in text.splitlines() if "'mode'" in line)
        assert "given: 'turbo'" in mode_line and "'fast'" in mode_line and "'slow'" in mode_line
        name_line = next(line for line in text.splitlines() if "'name'" in line)
        assert "required" in name_line and "string" in name_line
        extra_line = next(line for line in text.splitlines() if "'extra'" in line)
        assert "not a known argument" in extra_line


async def test_wrong_type_reports_given_value() -> None:
    async with connect(build_app()) as client:
        text = (await client.call_tool("as_dict", {"n": "seven"}))["content"][0]["text"]
        assert "'n'" in text and "given: 'seven'" in text and "integer" in text


async def test_tool_error_message_is_passed_verbatim() -> None:
    async with connect(build_app()) as client:
        result = await client.call_tool("refuses")
        assert result == {"content": [{"type": "text", "text": "No ticker 'AAPLE'. Did you mean AAPL (Apple Inc.)?"}],
                          "isError": True}


async def test_other_exceptions_become_a_useful_error_result(caplog: pytest.LogCaptureFixture) -> None:
    async with connect(build_app()) as client:
        result = await client.call_tool("crashes")
        assert result["isError"] is True
        text = result["content"][0]["text"]
        assert "crashes" in text and "ValueError" in text and "division by cucumber" in text
        assert "Traceback" not in text
    assert any(r.exc_info for r in caplog.records if "crashes" in r.getMessage())


async def test_unknown_tool_lists_the_tools_that_exist() -> None:
    async with connect(build_app()) as client:
        with pytest.raises(MCPError) as error:
            await client.call_tool("forcast")
        assert error.value.code == -32602
        assert "forcast" in error.value.message
        assert (
            "forecast" in error.value.message and "as_str" in error.value.message and "crashes" in error.value.message
        )


@pytest.mark.parametrize(
    "params", [{}, {"name": 5}, {"name": "as_str", "arguments": [1]}, {"name": "as_str", "arguments": "x"}]
)
async def test_malformed_tools_call_is_invalid_params(params: dict[str, Any]) -> None:
    async with connect(build_app()) as client:
        with pytest.raises(MCPError) as error:
            await client.request("tools/call", params)
        assert error.value.code == -32602


async def test_app_tool_called_with_the_function_keeps_its_options() -> None:
    app = MCPServer("direct")

    async def lookup(code: str) -> str:
        return code

    app.tool(lookup, name="find_code", read_only=True)
    async with connect(app) as client:
        tools = {tool["name"]: tool for tool in await client.list_tools()}
    assert list(tools) == ["find_code"] and tools["find_code"]["annotations"]["readOnlyHint"] is True
