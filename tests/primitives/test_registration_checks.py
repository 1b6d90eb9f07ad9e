"""Mistakes in server code surface where they are made: registration refuses a parameter type without a JSON
Schema, a template variable that matches no parameter, `*args` and `**kwargs`, naming the function's file and
line; and a tool whose schema still cannot be built leaves only itself out of `tools/list`."""

from __future__ import annotations

import datetime
import enum
import logging
import socket
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from mcp_kit import Context, MCPServer
from mcp_kit._primitives.signature import DefinitionError, collecting_problems
from mcp_kit._primitives.tools import Tool
from mcp_kit.testing import connect

pytestmark = pytest.mark.anyio


def line_of(fn: Any) -> str:
    return f"{__file__}:{fn.__code__.co_firstlineno}"


def takes_a_socket(conn: socket.socket) -> str:
    return "never"


def test_a_parameter_type_without_a_json_schema_fails_at_registration_naming_file_and_line() -> None:
    app = MCPServer("t")
    with pytest.raises(DefinitionError) as refused:
        app.add_tool(takes_a_socket)
    message = str(refused.value)
    assert message.startswith(line_of(takes_a_socket) + ": tool 'takes_a_socket': parameter 'conn' is typed "
                              "socket.socket, which has no JSON Schema")
    assert "use a JSON type" in message
    assert app.tools.get("takes_a_socket") is None


class Colour(enum.Enum):
    RED = "red"


class Point(BaseModel):
    x: int


@dataclass
class Span:
    start: datetime.date
    end: datetime.date


class Options(TypedDict):
    verbose: bool


def test_ordinary_types_register_and_build_nothing_at_registration() -> None:
    app = MCPServer("t")

    @app.tool
    def fine(a: int, b: float | None, c: list[dict[str, int]], d: Literal["x", "y"], e: Colour, f: Point,
             g: Annotated[str, Field(max_length=3)], h: datetime.datetime, i: Span, j: Options,
             ctx: Context | None = None, k: Any = None, m: tuple[int, ...] = ()) -> str:
        return "ok"

    tool = app.tools.get("fine")
    assert tool is not None and tool._schema is None and tool._call is None  # still lazy
    assert set(tool.input_schema["properties"]) == set("abcdefghijkm")


@pytest.mark.parametrize("source, piece", [
    ("def tool(*items: str) -> str: ...", "*items cannot be passed by an MCP client"),
    ("def tool(**options: str) -> str: ...", "**options has no JSON Schema"),
    ("def tool(a: int, /) -> str: ...", "a is positional-only"),
])
def test_star_args_star_kwargs_and_positional_only_are_refused(source: str, piece: str) -> None:
    namespace: dict[str, Any] = {}
    exec(compile(source, __file__, "exec"), namespace)
    with pytest.raises(DefinitionError, match=piece.replace("*", r"\*")):
        MCPServer("t").add_tool(namespace["tool"])


def note(title: str) -> str:
    return title


def needs_more(name: str, owner: str) -> str:
    return name + owner


def test_a_template_variable_matching_no_parameter_fails_at_registration() -> None:
    app = MCPServer("t")
    with pytest.raises(DefinitionError) as refused:
        app.resource("notes://{name}")(note)
    assert str(refused.value) == (f"{line_of(note)}: resource template 'notes://{{name}}': {{name}} matches no "
                                  "parameter of note() (its parameters: title); name them alike")
    with pytest.raises(DefinitionError, match=r"needs_more\(\) requires owner, for which the URI has no variable"):
        app.resource("notes://{name}")(needs_more)
    assert not app.resources.templates


def test_templates_that_fit_their_functions_register() -> None:
    app = MCPServer("t")

    @app.resource("files://{+path}")
    def read(path: str, ctx: Context, encoding: str = "utf-8") -> str:
        return path

    @app.resource("any://{a}/{b}")
    def anything(**parts: str) -> str:
        return ",".join(parts)

    assert set(app.resources.templates) == {"files://{+path}", "any://{a}/{b}"}


def test_a_prompt_with_a_type_without_schema_names_file_and_line() -> None:
    def ask(conn: socket.socket) -> str:
        return "never"

    with pytest.raises(DefinitionError, match=f"^{line_of(ask)}: prompt 'ask': parameter 'conn'"):
        MCPServer("t").prompt(ask)


def test_collecting_problems_records_every_one_and_leaves_those_functions_out() -> None:
    with collecting_problems() as found:
        app = MCPServer("t")
        app.add_tool(takes_a_socket)
        app.resource("notes://{name}")(note)

        @app.tool
        def fine() -> str:
            return "ok"

    assert [str(p).split(": ", 1)[0] for p in found] == [line_of(takes_a_socket), line_of(note)]
    assert app.tools.names() == ["fine"] and not app.resources.templates
    with pytest.raises(DefinitionError):  # outside, registration raises again
        app.add_tool(takes_a_socket)


async def test_a_tool_that_slipped_past_registration_never_takes_tools_list_down(
        caplog: pytest.LogCaptureFixture) -> None:
    app = MCPServer("t")
    app.tools.add(Tool("raw", takes_a_socket, Context, executor=app.executors.executor_for(
        takes_a_socket, None, "raw", Context)))  # the registry itself, without make_tool's checks

    @app.tool
    def fine() -> str:
        return "ok"

    with caplog.at_level(logging.ERROR):
        async with connect(app) as client:
            listed = await client.list_tools()
    assert [tool["name"] for tool in listed] == ["fine"]
    assert "tools/list leaves out" in caplog.text and line_of(takes_a_socket) in caplog.text
