"""Tools built when first needed: registration keeps the function, a page builds its own tools only,
validation and schemas are what they were (the golden listings check every reference server's).
"""

from __future__ import annotations

import base64
import logging
import textwrap
import types
from typing import Annotated, Any

import pytest
from pydantic import Field

from mcp_kit import Context, MCPError, MCPServer
from mcp_kit._primitives.tools import ToolRegistry
from mcp_kit.testing import connect

pytestmark = pytest.mark.anyio
VERSION = "2025-11-25"


def many_tools(count: int, page_size: int = 10) -> MCPServer:
    app = MCPServer("many", page_size=page_size)
    for index in range(count):
        def tool(city: str, days: int = 1) -> str:
            return f"{city} {days}"
        tool.__doc__ = f"Tool number {index}."
        app.add_tool(tool, name=f"tool_{index:03d}")
    return app


def built(registry: ToolRegistry) -> list[str]:
    return [tool.name for tool in registry if tool._schema is not None or tool._call is not None]


def cursor(index: int) -> str:
    """A cursor as main has always written them: base64 of the index where the page starts."""
    return base64.urlsafe_b64encode(str(index).encode()).decode()


def test_registration_builds_nothing_and_a_page_builds_only_its_own_tools() -> None:
    app = many_tools(35)
    assert built(app.tools) == []
    page = app.tools.page(VERSION, cursor(10), 10)
    assert [tool["name"] for tool in page["tools"]] == [f"tool_{i:03d}" for i in range(10, 20)]
    assert built(app.tools) == [f"tool_{i:03d}" for i in range(10, 20)]
    assert all(app.tools.get(name)._call is None for name in built(app.tools))  # listing keeps no argument model


@pytest.mark.parametrize(("start", "names", "next_start"), [
    (None, range(0, 10), 10),    # first page
    (10, range(10, 20), 20),     # a middle page
    (30, range(30, 35), None),   # the last page: no nextCursor
    (35, range(0), None),        # the position just past the end: an empty page, as main answered
])
def test_pages_and_their_cursors(start: int | None, names: range, next_start: int | None) -> None:
    app = many_tools(35)
    page = app.tools.page(VERSION, None if start is None else cursor(start), 10)
    assert [tool["name"] for tool in page["tools"]] == [f"tool_{i:03d}" for i in names]
    assert page.get("nextCursor") == (None if next_start is None else cursor(next_start))


@pytest.mark.parametrize("bad", ["not-a-cursor!", cursor(36), cursor(-1), "", 12, "bm90IGEgbnVtYmVy"])
def test_an_invalid_cursor_is_invalid_params_naming_it(bad: Any) -> None:
    with pytest.raises(MCPError) as error:
        many_tools(35).tools.page(VERSION, bad, 10)
    assert error.value.code == -32602 and f"Invalid cursor {bad!r}" in error.value.message


def test_pages_follow_tools_added_and_removed_between_them() -> None:
    app = many_tools(25)
    first = app.tools.page(VERSION, None, 10)
    app.remove_tool("tool_000")
    app.add_tool(lambda: "new", name="added")
    second = app.tools.page(VERSION, first["nextCursor"], 10)
    assert [tool["name"] for tool in second["tools"]] == [f"tool_{i:03d}" for i in range(11, 21)]
    last = app.tools.page(VERSION, second["nextCursor"], 10)
    assert [tool["name"] for tool in last["tools"]][-1] == "added" and "nextCursor" not in last


async def test_every_page_through_the_client_covers_every_tool_once() -> None:
    app = many_tools(35)
    async with connect(app) as client:
        names = [tool["name"] for tool in await client.list_tools()]
    assert names == [f"tool_{i:03d}" for i in range(35)]


def forecast(city: Annotated[str, Field(min_length=2, description="City name")], days: int = 3,
             ctx: Context | None = None) -> dict[str, Any]:
    """Forecast.

    Args:
        days: Days ahead, 1 to 10.
    """
    return {"city": city, "days": days}


@pytest.mark.parametrize("first", ["list", "call"])
async def test_validation_and_schema_are_the_same_whichever_is_built_first(first: str) -> None:
    app = MCPServer("order")
    app.add_tool(forecast)
    async with connect(app) as client:
        if first == "call":
            refused = await client.call_tool("forecast", {"city": "x", "days": "many", "extra": 1})
            listed = (await client.list_tools())[0]
        else:
            listed = (await client.list_tools())[0]
            refused = await client.call_tool("forecast", {"city": "x", "days": "many", "extra": 1})
        ok = await client.call_tool("forecast", {"city": "Paris"})
    assert listed["inputSchema"] == {
        "additionalProperties": False,
        "properties": {"city": {"description": "City name", "minLength": 2, "type": "string"},
                       "days": {"default": 3, "description": "Days ahead, 1 to 10.", "type": "integer"}},
        "required": ["city"], "type": "object"}
    assert listed["description"] == "Forecast."
    assert refused["isError"] is True
    assert refused["content"][0]["text"] == (
        "Invalid arguments for tool 'forecast':\n"
        "- 'city': String should have at least 2 characters (given: 'x'); expected string, min length 2, City name\n"
        "- 'days': Input should be a valid integer, unable to parse string as an integer (given: 'many'); "
        "expected integer, Days ahead, 1 to 10.\n"
        "- 'extra' is not a known argument (known arguments: city, days)")
    assert ok["structuredContent"] == {"city": "Paris", "days": 3}
    tool = app.tools.get("forecast")
    assert tool is not None and tool._call is not None and tool._schema is not None
    assert tool._call.input_schema is tool._schema.input_schema  # one copy, whichever came first


async def test_an_explicit_input_schema_is_listed_and_explains_validation_errors() -> None:
    app = MCPServer("explicit")
    schema = {"type": "object", "properties": {"n": {"type": "integer", "description": "How many", "minimum": 1}},
              "required": ["n"]}

    @app.tool(input_schema=schema)
    def count(n: int) -> str:
        return str(n)

    async with connect(app) as client:
        refused = await client.call_tool("count", {})
        listed = (await client.list_tools())[0]["inputSchema"]
    assert listed == schema
    assert refused["content"][0]["text"].endswith("'n' is required but was not given; expected integer, >= 1, How many")


async def test_a_forward_reference_defined_after_registration_resolves() -> None:
    module = types.ModuleType("late_types")
    exec(textwrap.dedent('''
        from __future__ import annotations
        from pydantic import BaseModel
        from mcp_kit import MCPServer

        app = MCPServer("late")

        @app.tool
        def describe(place: Place) -> str:
            """Say where."""
            return f"{place.name} at {place.lat}"

        class Place(BaseModel):  # defined after the tool was registered
            name: str
            lat: float
    '''), module.__dict__)
    async with connect(module.app) as client:
        result = await client.call_tool("describe", {"place": {"name": "Oslo", "lat": 59.9}})
        listed = (await client.list_tools())[0]
    assert result["content"][0]["text"] == "Oslo at 59.9"
    assert listed["inputSchema"]["properties"]["place"] == {"$ref": "#/$defs/Place"}


async def test_a_tool_whose_signature_cannot_be_built_fails_loudly_and_alone(caplog: pytest.LogCaptureFixture) -> None:
    app = MCPServer("broken")
    app.add_tool(broken_tool)  # its annotation does not resolve yet: checked when first built

    @app.tool
    def fine() -> str:
        return "ok"

    with caplog.at_level(logging.ERROR):
        async with connect(app) as client:
            listed = await client.list_tools()  # the broken tool is left out; the others are listed
            with pytest.raises(MCPError) as calling:
                await client.call_tool("broken_tool", {"x": 1})
            assert (await client.call_tool("fine"))["content"][0]["text"] == "ok"
    assert [tool["name"] for tool in listed] == ["fine"]
    assert calling.value.code == -32603
    assert "tool 'broken_tool': cannot build its argument model" in calling.value.message
    assert "NameError: name 'NoSuchType' is not defined" in calling.value.message
    assert f"{__file__}:{broken_tool.__code__.co_firstlineno}" in calling.value.message  # where to look
    assert "tools/list leaves out" in caplog.text and "tool 'broken_tool': cannot build its schema" in caplog.text


def broken_tool(x: NoSuchType) -> str:  # type: ignore[name-defined]  # noqa: F821
    return "never"
