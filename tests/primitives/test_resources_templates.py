"""A resource template's URI variables are validated exactly like tool arguments.

One annotated type (`Annotated[str, Field(max_length=..., pattern=...)]`) constrains a tool argument and a
template variable alike. Values are checked after percent-decoding and before the template function runs
(nor does a watcher start for a URI that would be refused), and a bad value is -32602 naming the variable,
what was given and what is expected. The reference servers' own tests check that no upstream call happens.
"""

from __future__ import annotations

from typing import Annotated, Any

import anyio
import pytest
from pydantic import Field

from mcp_kit import MCPError, MCPServer
from mcp_kit.testing import connect
from tests.helpers.fault_server import build

pytestmark = pytest.mark.anyio

REFUSED = {
    "traversal, percent-encoded": "fault://item/%2E%2E%2Fetc",
    "slash once decoded": "fault://item/a%2Fb",
    "backslash": "fault://item/a%5Cb",
    "5000 characters": "fault://item/" + "a" * 5000,
    "upper case": "fault://item/ABC",
}


@pytest.mark.parametrize("uri", REFUSED.values(), ids=REFUSED.keys())
async def test_template_variables_are_validated_like_tool_arguments(uri: str) -> None:
    app = build()
    async with connect(app) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource(uri)
        value = uri.removeprefix("fault://item/")
        tool = await client.call_tool(
            "lookup", {"code": value.replace("%2E", ".").replace("%2F", "/").replace("%5C", "\\")}
        )
    error = caught.value
    assert error.code == -32602
    assert "'code'" in error.message and "fault://item/{code}" in error.message
    assert "expected string" in error.message and "1-8 lower-case letters or digits" in error.message
    assert error.data["invalid"]["code"]["pattern"] == "^[a-z0-9]+$" and error.data["invalid"]["code"]["maxLength"] == 8
    assert len(error.message) < 1000  # a 5000-character value is not echoed back whole
    assert app.item_reads == []  # the template function never ran
    assert tool["isError"] is True and "'code'" in tool["content"][0]["text"]  # the tool refuses the same values


async def test_valid_template_variables_reach_the_function_decoded() -> None:
    app = build()
    async with connect(app) as client:
        read = await client.read_resource("fault://item/ab%31")
    assert read[0]["text"] == "item ab1" and app.item_reads == ["ab1"]


async def test_template_variables_are_converted_to_their_annotated_type() -> None:
    app = MCPServer("typed")

    @app.resource("page://{number}")
    def page(number: Annotated[int, Field(ge=1, le=10)]) -> str:
        """A numbered page."""
        return f"page {number + 1 - 1} of type {type(number).__name__}"

    async with connect(app) as client:
        assert (await client.read_resource("page://7"))[0]["text"] == "page 7 of type int"
        for bad in ("0", "11", "seven"):
            with pytest.raises(MCPError) as caught:
                await client.read_resource(f"page://{bad}")
            assert caught.value.code == -32602 and "'number'" in caught.value.message


async def test_a_watcher_never_starts_for_a_uri_the_template_refuses() -> None:
    app = build()
    watched: list[str] = []
    started = anyio.Event()

    @app.watcher("fault://item/{code}")
    async def watch(uri: str, code: str) -> None:
        watched.append(code)
        started.set()
        await anyio.sleep_forever()

    async with connect(app) as client:
        try:  # refused outright, or accepted without a watcher: either way nothing runs for it
            await client.request("resources/subscribe", {"uri": "fault://item/%2E%2E%2Fetc"})
        except MCPError as exc:
            assert exc.code == -32602
        await client.request("resources/subscribe", {"uri": "fault://item/ok1"})
        with anyio.fail_after(5):
            await started.wait()  # the valid subscription's watcher runs: watchers do start
        assert watched == ["ok1"]
        assert app.hub.watching("fault://item/ok1") and not app.hub.watching("fault://item/%2E%2E%2Fetc")


async def test_a_watcher_that_reports_readiness_keeps_its_signature() -> None:
    """The validity check wrapped around a watcher must not hide its parameters (e.g. `task_status`)."""
    import inspect

    app = build()

    @app.watcher("fault://item/{code}")
    async def watch(uri: str, code: str, task_status: Any = None) -> None:
        await anyio.sleep_forever()

    wrapped = app.hub._watchers[-1][1]
    assert "task_status" in inspect.signature(wrapped).parameters
