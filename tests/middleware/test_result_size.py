"""`ResultSizeLimit`: text cut with a marker, never mid-character; structured content never cut."""

from __future__ import annotations

import pytest

from mcp_kit import MCPServer
from mcp_kit.middleware import ResultSizeLimit
from mcp_kit.middleware._result_size import cut_text
from mcp_kit.testing import connect

pytestmark = pytest.mark.anyio


def build(limit: ResultSizeLimit) -> MCPServer:
    app = MCPServer("sized", middleware=[limit])

    @app.tool(structured_output=False)
    def big(n: int) -> str:
        return "é😀x" * n

    @app.tool
    def table(n: int) -> dict[str, list[int]]:
        return {"rows": list(range(n))}

    return app


async def test_text_over_the_limit_is_cut_with_a_marker_saying_how_much_and_how_to_get_the_rest() -> None:
    async with connect(build(ResultSizeLimit(100))) as client:
        result = await client.call_tool("big", {"n": 1000})
        small = await client.call_tool("big", {"n": 10})
    first, marker = result["content"]
    assert len(first["text"]) == 100 and first["text"] == ("é😀x" * 1000)[:100]
    assert "3,000 characters" in marker["text"] and "2,900 were left out" in marker["text"]
    assert "page or an offset" in marker["text"]
    assert small["content"] == [{"type": "text", "text": "é😀x" * 10}]


async def test_structured_content_is_not_cut_but_refused_in_words() -> None:
    async with connect(build(ResultSizeLimit(50, per_tool={"big": None}))) as client:
        result = await client.call_tool("table", {"n": 1000})
        uncut = await client.call_tool("big", {"n": 100})
    assert result["isError"] is True and "structured content" in result["content"][0]["text"]
    assert "structuredContent" not in result
    assert len(uncut["content"]) == 1 and len(uncut["content"][0]["text"]) == 300  # no limit for this tool


def test_a_cut_never_splits_a_surrogate_pair() -> None:
    paired = "ab\ud83d\ude00cd"  # a pair as two code points (as a str built with surrogatepass holds it)
    assert cut_text(paired, 3) == "ab" and cut_text(paired, 4) == "ab\ud83d\ude00" and cut_text("abc", 0) == ""
