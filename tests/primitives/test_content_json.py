"""Tool results carry sets as lists and datetimes as ISO 8601, wherever they sit, never str() of them."""

from __future__ import annotations

import datetime
import uuid
from dataclasses import dataclass

import pytest

from mcp_kit import MCPServer
from mcp_kit.testing import connect

pytestmark = pytest.mark.anyio
WHEN = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)


@dataclass
class Report:
    tags: set[str]
    at: datetime.date


async def test_sets_and_datetimes_in_tool_results_are_json() -> None:
    app = MCPServer("t")

    @app.tool
    def a_set() -> set[int]:
        return {1, 2}

    @app.tool
    def nested() -> dict[str, object]:
        return {"ids": frozenset({7}), "when": WHEN, "day": WHEN.date(), "id": uuid.UUID(int=1)}

    @app.tool
    def a_time() -> datetime.datetime:
        return WHEN

    @app.tool
    def report() -> Report:
        return Report({"x"}, WHEN.date())

    async with connect(app) as client:
        listed = (await client.call_tool("a_set"))["content"][0]["text"]
        nested_result = await client.call_tool("nested")
        timed = (await client.call_tool("a_time"))["content"][0]["text"]
        made = await client.call_tool("report")
    assert sorted(__import__("json").loads(listed)) == [1, 2]
    assert nested_result["structuredContent"] == {"ids": [7], "when": "2026-01-02T03:04:05Z", "day": "2026-01-02",
                                                  "id": "00000000-0000-0000-0000-000000000001"}
    assert timed == "2026-01-02T03:04:05Z"
    assert made["structuredContent"] == {"tags": ["x"], "at": "2026-01-02"}
