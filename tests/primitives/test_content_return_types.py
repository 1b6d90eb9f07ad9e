"""A tool whose return type is content (`Image`, `Audio`, `EmbeddedResource`, `TextContent`, `CallToolResult`, ...)
advertises no output schema: its result travels as content blocks, and an output schema would promise structured
content that never comes. Before, each such tool listed the model's schema as `outputSchema`, and the official
Python SDK client refused every call to it ("has an output schema but did not return structured content")."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Annotated, Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from pydantic import BaseModel

from mcp_kit import (
    Audio,
    CallToolResult,
    EmbeddedResource,
    Image,
    ImageContent,
    MCPServer,
    ResourceLink,
    TextContent,
    TextResourceContents,
)
from mcp_kit._primitives.signature import DefinitionError
from mcp_kit.testing import connect
from tests.helpers.support import ROOT

pytestmark = pytest.mark.anyio
PNG = b"\x89PNG\r\n\x1a\n"
RETURNS: list[tuple[Any, Any, str]] = [
    (Image, lambda: Image(PNG, "image/png"), "image"),
    (Annotated[Image, "a chart"], lambda: Image(PNG, "image/png"), "image"),
    (Audio, lambda: Audio(b"RIFF0000WAVE", "audio/wav"), "audio"),
    (EmbeddedResource, lambda: EmbeddedResource(type="resource", resource=TextResourceContents(uri="n://1", text="t")),
     "resource"),
    (TextContent, lambda: TextContent(type="text", text="hi"), "text"),
    (ImageContent, lambda: ImageContent(type="image", data="iVBORw0KGgo=", mimeType="image/png"), "image"),
    (ResourceLink, lambda: ResourceLink(type="resource_link", uri="n://1", name="one"), "resource_link"),
    (CallToolResult, lambda: CallToolResult(content=[TextContent(type="text", text="hi")]), "text"),
]


class Quote(BaseModel):
    ticker: str
    price: float


@pytest.mark.parametrize(("annotation", "make", "block"), RETURNS)
async def test_a_tool_returning_content_lists_no_output_schema(annotation: Any, make: Any, block: str) -> None:
    app = MCPServer("t")

    async def produce() -> Any:
        return make()

    produce.__annotations__["return"] = annotation
    app.add_tool(produce)
    async with connect(app) as client:
        [listed] = await client.list_tools()
        result = await client.call_tool("produce", {})
    assert "outputSchema" not in listed, listed
    assert "structuredContent" not in result and [c["type"] for c in result["content"]] == [block]


async def test_a_tool_returning_data_keeps_its_output_schema() -> None:
    app = MCPServer("t")

    @app.tool
    async def quote() -> Quote:
        return Quote(ticker="AAPL", price=1.5)

    async with connect(app) as client:
        [listed] = await client.list_tools()
        result = await client.call_tool("quote", {})
    assert listed["outputSchema"]["properties"]["price"] == {"type": "number"}
    assert result["structuredContent"] == {"ticker": "AAPL", "price": 1.5}


def test_structured_output_on_a_content_return_is_refused_at_registration() -> None:
    app = MCPServer("t")

    async def chart() -> Image:
        return Image(PNG, "image/png")

    with pytest.raises(DefinitionError) as refused:
        app.add_tool(chart, structured_output=True)
    assert str(refused.value).startswith(f"{__file__}:{chart.__code__.co_firstlineno}: tool 'chart': "
                                         "structured_output=True, but the return type is content")


async def test_the_official_sdk_client_calls_tools_returning_content_after_listing_them(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(textwrap.dedent('''
        from mcp_kit import EmbeddedResource, Image, MCPServer, TextResourceContents

        app = MCPServer("content")

        @app.tool
        def chart() -> Image:
            """A chart."""
            return Image(b"\\x89PNG\\r\\n\\x1a\\n", "image/png")

        @app.tool
        def note() -> EmbeddedResource:
            """A note."""
            return EmbeddedResource(type="resource", resource=TextResourceContents(uri="n://1", text="t"))

        app.run()
    '''))
    params = StdioServerParameters(command=sys.executable, args=[str(script)], cwd=str(ROOT))
    with anyio.fail_after(60):
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            assert [tool.output_schema for tool in listed.tools] == [None, None]
            chart = await session.call_tool("chart", {})
            note = await session.call_tool("note", {})
    assert not chart.is_error and [c.type for c in chart.content] == ["image"]
    assert not note.is_error and [c.type for c in note.content] == ["resource"]
