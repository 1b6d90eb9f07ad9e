"""Prompts (arguments, required ones enforced, message normalisation) and completion/complete."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import Field

from mcp_kit import AssistantMessage, Image, MCPError, MCPServer, PromptMessage, TextContent, UserMessage
from mcp_kit.testing import connect

pytestmark = pytest.mark.anyio


def build_app() -> MCPServer:
    app = MCPServer("prompts")

    @app.prompt(name="compare", title="Compare two things", description="Compare things.")
    def compare(
        first: Annotated[str, Field(description="The first thing")],
        second: str,
        focus: str | None = None,
    ) -> str:
        """Ignored: the description option wins.

        Args:
            second: The second thing.
        """
        return f"Compare {first} with {second}" + (f", focusing on {focus}" if focus else "")

    @app.prompt
    def dialogue(topic: str) -> list:
        """A short dialogue."""
        return [
            f"Tell me about {topic}",
            AssistantMessage(f"{topic} is interesting."),
            UserMessage(Image(b"\x89PNG\r\n\x1a\n", "image/png")),
            PromptMessage(role="assistant", content=TextContent(type="text", text="done")),
        ]

    @app.prompt
    async def no_args() -> str:
        return "static"

    @app.completion("compare", "first")
    def complete_first(value: str, context: dict[str, str]) -> list[str]:
        return [v for v in ("apple", "apricot", "banana") if v.startswith(value)]

    @app.completion(ref="db://{table}/{column}", argument="column")
    def complete_column(value: str, context: dict[str, str]) -> list[str]:
        columns = {"users": ["id", "name", "email"], "orders": ["id", "total"]}
        return [c for c in columns.get(context.get("table", ""), []) if c.startswith(value)]

    @app.completion("db://{table}/{column}", "table")
    async def complete_table(value: str, context: dict[str, str]) -> list[str]:
        return [f"t{i:03d}" for i in range(150) if f"t{i:03d}".startswith(value)]

    @app.resource("db://{table}/{column}")
    def column(table: str, column: str) -> str:
        return f"{table}.{column}"

    return app


async def test_list_prompts_with_arguments_and_required() -> None:
    async with connect(build_app()) as client:
        prompts = {p["name"]: p for p in await client.list_prompts()}
        assert list(prompts) == ["compare", "dialogue", "no_args"]
        compare = prompts["compare"]
        assert compare["title"] == "Compare two things" and compare["description"] == "Compare things."
        assert compare["arguments"] == [
            {"name": "first", "required": True, "description": "The first thing"},
            {"name": "second", "required": True, "description": "The second thing."},
            {"name": "focus", "required": False},
        ]
        assert prompts["dialogue"]["description"] == "A short dialogue."
        assert prompts["no_args"]["arguments"] == []


async def test_prompt_title_absent_before_2025_06_18() -> None:
    async with connect(build_app(), protocol_version="2025-03-26") as client:
        prompts = {p["name"]: p for p in await client.list_prompts()}
        assert "title" not in prompts["compare"]


async def test_get_prompt_renders_a_user_message() -> None:
    async with connect(build_app()) as client:
        result = await client.get_prompt("compare", {"first": "apples", "second": "pears", "focus": "taste"})
        assert result["messages"] == [
            {"role": "user", "content": {"type": "text", "text": "Compare apples with pears, focusing on taste"}}]
        assert result["description"] == "Compare things."


async def test_missing_required_arguments_are_named() -> None:
    async with connect(build_app()) as client:
        with pytest.raises(MCPError) as error:
            await client.get_prompt("compare", {"second": "pears"})
        assert error.value.code == -32602
        assert "first" in error.value.message and "second" not in error.value.message.split(":")[-1]
        with pytest.raises(MCPError) as both:
            await client.get_prompt("compare", {})
        assert both.value.code == -32602
        assert "first" in both.value.message and "second" in both.value.message


async def test_unknown_argument_and_unknown_prompt_are_invalid_params() -> None:
    async with connect(build_app()) as client:
        with pytest.raises(MCPError) as extra:
            await client.get_prompt("no_args", {"surprise": "x"})
        assert extra.value.code == -32602 and "surprise" in extra.value.message
        with pytest.raises(MCPError) as unknown:
            await client.get_prompt("compair", {})
        assert unknown.value.code == -32602 and "compare" in unknown.value.message


async def test_message_normalisation() -> None:
    async with connect(build_app()) as client:
        messages = (await client.get_prompt("dialogue", {"topic": "owls"}))["messages"]
        assert messages[0] == {"role": "user", "content": {"type": "text", "text": "Tell me about owls"}}
        assert messages[1] == {"role": "assistant", "content": {"type": "text", "text": "owls is interesting."}}
        assert messages[2]["role"] == "user" and messages[2]["content"]["type"] == "image"
        assert messages[2]["content"]["mimeType"] == "image/png"
        assert messages[3] == {"role": "assistant", "content": {"type": "text", "text": "done"}}


# ---------------------------------------------------------------------------- completion


async def test_complete_a_prompt_argument() -> None:
    async with connect(build_app()) as client:
        completion = await client.complete({"type": "ref/prompt", "name": "compare"}, {"name": "first", "value": "ap"})
        assert completion == {"values": ["apple", "apricot"], "total": 2, "hasMore": False}


async def test_complete_a_template_variable_with_context_arguments() -> None:
    async with connect(build_app()) as client:
        ref = {"type": "ref/resource", "uri": "db://{table}/{column}"}
        users = await client.complete(ref, {"name": "column", "value": ""}, context={"table": "users"})
        assert users["values"] == ["id", "name", "email"]
        orders = await client.complete(ref, {"name": "column", "value": "t"}, context={"table": "orders"})
        assert orders["values"] == ["total"]
        none = await client.complete(ref, {"name": "column", "value": ""})
        assert none["values"] == []


async def test_more_than_100_values_are_cut_with_has_more() -> None:
    async with connect(build_app()) as client:
        ref = {"type": "ref/resource", "uri": "db://{table}/{column}"}
        completion = await client.complete(ref, {"name": "table", "value": "t"})
        assert len(completion["values"]) == 100
        assert completion["values"][0] == "t000" and completion["values"][-1] == "t099"
        assert completion["hasMore"] is True and completion["total"] == 150


async def test_completion_without_a_provider_is_empty() -> None:
    async with connect(build_app()) as client:
        completion = await client.complete({"type": "ref/prompt", "name": "dialogue"}, {"name": "topic", "value": "x"})
        assert completion["values"] == []


@pytest.mark.parametrize("params", [{}, {"ref": {"type": "ref/prompt", "name": "compare"}},
                                    {"ref": "compare", "argument": {"name": "first", "value": ""}}])
async def test_malformed_completion_request_is_invalid_params(params: dict[str, Any]) -> None:
    async with connect(build_app()) as client:
        with pytest.raises(MCPError) as error:
            await client.request("completion/complete", params)
        assert error.value.code == -32602
