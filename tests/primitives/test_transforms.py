"""Tool transforms: renamed, described anew, arguments hidden, fixed, filled from the request or given defaults;
tools hidden by name or tag; on an app's own tools and on mounted ones, with schema and validation following."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_kit import Arg, Context, MCPError, MCPServer
from mcp_kit.testing import connect

pytestmark = pytest.mark.anyio


def forecast_app(seen: list[dict[str, Any]]) -> MCPServer:
    app = MCPServer("weather")

    @app.tool(tags={"public"})
    def get_forecast(city: str, days: int, units: str = "metric", requested_by: str = "nobody") -> str:
        """Forecast for a city.

        Args:
            city: The city.
            days: How many days.
            units: metric or imperial.
            requested_by: Who asked.
        """
        seen.append({"city": city, "days": days, "units": units, "requested_by": requested_by})
        return f"{days} days for {city} in {units} for {requested_by}"

    @app.tool(tags={"internal"})
    def debug_dump() -> str:
        """Internal."""
        return "dump"

    @app.tool
    def reset() -> str:
        """Dangerous."""
        return "reset"

    return app


async def test_a_renamed_tool_with_hidden_fixed_and_defaulted_arguments_shows_and_validates_the_change() -> None:
    seen: list[dict[str, Any]] = []
    app = forecast_app(seen)
    app.transform_tool("get_forecast", new_name="forecast", description="A week of weather for one city.",
                       arguments={"units": Arg(value="imperial"), "days": Arg(default=7, description="1 to 14"),
                                  "requested_by": Arg(from_context=lambda ctx: f"session {ctx.session_id[:4]}")})
    async with connect(app) as client:
        tools = {tool["name"]: tool for tool in await client.list_tools()}
        assert "get_forecast" not in tools
        shown = tools["forecast"]
        assert shown["description"] == "A week of weather for one city."
        schema = shown["inputSchema"]
        assert set(schema["properties"]) == {"city", "days"}
        assert schema["required"] == ["city"]
        assert schema["properties"]["days"]["default"] == 7 and schema["properties"]["days"]["description"] == "1 to 14"

        result = await client.call_tool("forecast", {"city": "Oslo"})
        assert result["isError"] is False
        assert seen[-1]["days"] == 7 and seen[-1]["units"] == "imperial"
        assert seen[-1]["requested_by"].startswith("session ")

        sent_hidden = await client.call_tool("forecast", {"city": "Oslo", "units": "metric"})
        assert sent_hidden["isError"] is True and "no argument 'units'" in sent_hidden["content"][0]["text"]
        invalid = await client.call_tool("forecast", {"city": "Oslo", "days": "many"})
        assert invalid["isError"] is True and "days" in invalid["content"][0]["text"]
        with pytest.raises(MCPError, match="Unknown tool 'get_forecast'"):
            await client.call_tool("get_forecast", {"city": "Oslo", "days": 1})
    assert len(seen) == 1  # the refused calls never reached the function


async def test_a_transform_of_a_mounted_tool_survives_the_mounted_app_changing() -> None:
    seen: list[dict[str, Any]] = []
    weather = forecast_app(seen)
    hub = MCPServer("hub")
    hub.mount(weather, namespace="weather")
    hub.transform_tool("weather_get_forecast", new_name="forecast", arguments={"days": Arg(value=3)})

    @weather.tool
    def later() -> str:
        """Registered after the transform."""
        return "later"

    async with connect(hub) as client:
        names = {tool["name"] for tool in await client.list_tools()}
        assert {"forecast", "weather_later"} <= names and "weather_get_forecast" not in names
        assert (await client.call_tool("forecast", {"city": "Rome"}))["isError"] is False
    assert seen[-1]["days"] == 3


async def test_tools_hidden_by_name_or_tag_are_neither_listed_nor_callable() -> None:
    seen: list[dict[str, Any]] = []
    app = forecast_app(seen)
    app.hide_tools("reset", tags={"internal"})
    async with connect(app) as client:
        assert [tool["name"] for tool in await client.list_tools()] == ["get_forecast"]
        for name in ("reset", "debug_dump"):
            with pytest.raises(MCPError, match=f"Unknown tool '{name}'"):
                await client.call_tool(name)


async def test_a_value_from_the_request_that_cannot_be_had_is_an_error_the_model_can_read() -> None:
    app = MCPServer("who")

    @app.tool
    def whoami(subject: str) -> str:
        """The caller."""
        return subject

    app.transform_tool("whoami", arguments={"subject": Arg(from_context=lambda ctx: ctx.principal.subject)})
    async with connect(app) as client:  # no OAuth here: ctx.principal is None
        result = await client.call_tool("whoami")
    assert result["isError"] is True and "could not fill in its argument 'subject'" in result["content"][0]["text"]
    assert "AttributeError" not in result["content"][0]["text"]


def test_a_transform_that_does_not_fit_the_tool_is_refused_when_made() -> None:
    app = forecast_app([])
    with pytest.raises(ValueError, match="no tool 'nope'"):
        app.transform_tool("nope", new_name="x")
    with pytest.raises(ValueError, match="no argument 'town'.*city, days"):
        app.transform_tool("get_forecast", arguments={"town": Arg(hidden=True)})
    with pytest.raises(ValueError, match="'city' is required, so hiding it needs a value"):
        app.transform_tool("get_forecast", arguments={"city": Arg(hidden=True)})
    with pytest.raises(ValueError, match="a tool of that name exists"):
        app.transform_tool("get_forecast", new_name="reset")
    with pytest.raises(TypeError, match="tags must be a set of strings"):
        app.tool(tags="oops")(lambda: None)


async def test_a_context_parameter_stays_out_of_the_schema_of_a_transformed_tool() -> None:
    app = MCPServer("ctx")

    @app.tool
    async def tagged(label: str, ctx: Context) -> str:
        """Uses the context."""
        return f"{label} {ctx.protocol_version}"

    app.transform_tool("tagged", arguments={"label": Arg(default="x")})
    async with connect(app) as client:
        [tool] = await client.list_tools()
        assert set(tool["inputSchema"]["properties"]) == {"label"} and "required" not in tool["inputSchema"]
        assert (await client.call_tool("tagged"))["content"][0]["text"].startswith("x 20")
