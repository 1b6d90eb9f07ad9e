"""Input rounds (2026-07-28 multi-round-trip requests): which questions share a round, and when it closes.

A question the current round cannot answer suspends the branch that asked it; the round closes
once a pass of the event loop brings no new question (no timer, no fixed number of polls).
"""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from mcp_kit import Context, MCPServer
from mcp_kit.testing import connect

pytestmark = pytest.mark.anyio

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}},
}
NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}}


def two_question_app() -> MCPServer:
    app = MCPServer("rounds")

    async def name(ctx: Context) -> str:
        answer = await ctx.elicit("Your name?", NAME_SCHEMA, key="name")
        return str(answer.content["name"]) if answer.content else "?"

    async def word(ctx: Context) -> str:
        return str((await ctx.sample("A word?", key="word")).content.text)  # type: ignore[union-attr]

    @app.tool
    async def with_gather(ctx: Context) -> str:
        """Asks two questions at once with asyncio.gather."""
        return " ".join(await asyncio.gather(name(ctx), word(ctx)))

    @app.tool
    async def with_task_group(ctx: Context) -> str:
        """Asks two questions at once from an anyio task group, one of them after yielding to the event loop."""
        found: dict[str, str] = {}

        async def yielding_word() -> None:
            await anyio.lowlevel.checkpoint()  # one step more than its sibling before the question is asked
            found["word"] = await word(ctx)

        async def plain_name() -> None:
            found["name"] = await name(ctx)

        async with anyio.create_task_group() as tg:
            tg.start_soon(plain_name)
            tg.start_soon(yielding_word)
        return f"{found['name']} {found['word']}"

    @app.tool
    async def after_io(ctx: Context) -> str:
        """Asks its second question only after waiting on (simulated) I/O."""

        async def late_word() -> str:
            await anyio.sleep(0.05)  # the behaviour under test: a branch that waits on something outside
            return await word(ctx)

        return " ".join(await asyncio.gather(name(ctx), late_word()))

    return app


ANSWERS = {"name": {"action": "accept", "content": {"name": "Ada"}},
           "word": {"role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "m"}}


async def call(client: Any, tool: str, **more: Any) -> dict[str, Any]:
    return await client.request("tools/call", {"_meta": META, "name": tool, "arguments": {}, **more})


@pytest.mark.parametrize("tool", ["with_gather", "with_task_group"])
async def test_questions_asked_concurrently_share_one_round(tool: str) -> None:
    async with connect(two_question_app(), initialize=False) as client:
        first = await call(client, tool)
        assert first["resultType"] == "input_required"
        assert set(first["inputRequests"]) == {"name", "word"}
        assert first["inputRequests"]["name"]["method"] == "elicitation/create"
        assert first["inputRequests"]["word"]["method"] == "sampling/createMessage"
        done = await call(client, tool, requestState=first["requestState"], inputResponses=ANSWERS)
        assert done["resultType"] == "complete" and done["content"][0]["text"] == "Ada hello"


async def test_a_question_asked_after_waiting_on_io_comes_in_the_next_round() -> None:
    async with connect(two_question_app(), initialize=False) as client:
        first = await call(client, "after_io")
        assert list(first["inputRequests"]) == ["name"]
        second = await call(client, "after_io", requestState=first["requestState"],
                            inputResponses={"name": ANSWERS["name"]})
        assert list(second["inputRequests"]) == ["word"]
        done = await call(client, "after_io", requestState=second["requestState"],
                          inputResponses={"word": ANSWERS["word"]})
        assert done["content"][0]["text"] == "Ada hello"


async def test_a_round_leaves_no_task_behind() -> None:
    async with connect(two_question_app(), initialize=False) as client:
        before = len(asyncio.all_tasks())
        for _ in range(20):
            assert (await call(client, "with_task_group"))["resultType"] == "input_required"
        assert len(asyncio.all_tasks()) == before
