"""`ToolBridge`: the tools of one or more MCP servers, offered to a model API and run when it calls them.

    async with ToolBridge.connect({"stock": "python -m servers.stock", "weather": "http://127.0.0.1:8000/mcp"}) as
    bridge:
        request = {"model": ..., "messages": messages, **bridge.request_options("openai", strict=True)}
        ...                                             # send it with any HTTP client or vendor SDK
        turn = await bridge.run_turn("openai", response)  # runs every tool call of the turn, concurrently
        messages += [assistant_message, *turn.messages]

Formats: "openai" (Chat Completions), "openai-responses", "anthropic", "gemini". Function names are
made valid and unique per format (`names.NameMap`), and map back to (server, tool). Whatever a server
lists is hostile data: a malformed tool (no name, a schema that is not an object, a schema the bridge
will not read: see `_schema_walk`) is left out and noted in `skipped`, and `export` notes every tool left
out, renamed or exported non-strict, so one server's tools never block another's. Must not import the
MCP server side (server, session, transports): this is host code on top of `mcp_kit.client`.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..client import connect as connect_client
from ._arguments import ArgumentChecker
from ._calls import ToolCall, Turn
from ._executor import CallTarget, TurnExecutor
from ._names import NameMap, Prefix
from ._remote import Confirm, RemoteTool, ToolSession
from ._schema_document import SchemaConversionError
from ._strict_schema import StrictSchemaError
from ._vendors import ExportedTool, FunctionFormat, ToolChoice, get_format
from ._vendors.base import description_of

Strict = bool | Literal["auto"]
logger = logging.getLogger("mcp_kit.functions")


@dataclass(frozen=True)
class ExportNote:
    """Something a host should know about one tool's export: left out, renamed, or not strict, and why."""

    server: str
    tool: str | None  # None: the note is about the server's whole tool list
    reason: str

    def __str__(self) -> str:
        return (
            f"server {self.server!r}" + (f", tool {self.tool!r}" if self.tool is not None else "") + f": {self.reason}"
        )


@dataclass(frozen=True)
class Export:
    """One format's tool definitions, and the notes on how they were made."""

    definitions: list[dict[str, Any]]
    notes: list[ExportNote] = field(default_factory=list)


def malformed(definition: Any) -> str | None:
    """Why a listed tool cannot be offered (None: it can): the fields the bridge reads must have their types."""
    if not isinstance(definition, Mapping):
        return f"it is {type(definition).__name__}, not a JSON object"
    name = definition.get("name")
    if not isinstance(name, str) or not name:
        return "it has no name" if name is None else "its name is not a non-empty string"
    for key in ("inputSchema", "annotations"):
        if definition.get(key) is not None and not isinstance(definition[key], Mapping):
            return f"its {key} is {type(definition[key]).__name__}, not a JSON object"
    for key in ("description", "title"):
        if definition.get(key) is not None and not isinstance(definition[key], str):
            return f"its {key} is not a string"
    return None


class ToolBridge:
    """Tools of several MCP servers as function definitions, and the executor of a model's calls."""

    def __init__(self, sessions: Mapping[str, ToolSession], tools: Mapping[str, list[dict[str, Any]]], *,
                 prefix: Prefix = "auto", confirm: Confirm | None = None, call_timeout: float = 60.0) -> None:
        """`sessions` and `tools` by server name; most code uses `connect` or `from_sessions` instead.

        `confirm(request)` is asked before a destructive tool runs (return True to allow it); `prefix="always"`
        prefixes every function name with its server; `call_timeout` bounds each tool call in seconds.
        """
        unknown = set(tools) - set(sessions)
        if unknown:
            raise ValueError(f"tools given for servers without a session: {', '.join(sorted(unknown))}")
        self.sessions = dict(sessions)
        self.prefix: Prefix = prefix
        self.confirm = confirm
        self.call_timeout = call_timeout
        self.tools_changed = False  # set when a server announces notifications/tools/list_changed
        self._set_tools(tools)

    # ------------------------------------------------------------------ building

    @classmethod
    async def from_sessions(cls, sessions: Mapping[str, ToolSession], **options: Any) -> ToolBridge:
        """A bridge over connected sessions (by server name); lists their tools."""
        tools = {name: await session.list_tools() for name, session in sessions.items()}
        return cls(sessions, tools, **options)

    @classmethod
    @contextlib.asynccontextmanager
    async def connect(cls, servers: Mapping[str, str | Sequence[str]], *, timeout: float = 60.0,
                      headers: dict[str, str] | None = None, env: dict[str, str] | None = None,
                      cwd: str | None = None, **options: Any) -> AsyncIterator[ToolBridge]:
        """Connect to each server (a command line for stdio, or a Streamable HTTP / legacy SSE URL) by name.

        `timeout` bounds connecting and each request; `headers` go to HTTP servers, `env`/`cwd` to stdio
        ones. The servers are disconnected (stdio ones stopped) when the block ends.
        """
        holder: list[ToolBridge] = []

        def on_notification(note: dict[str, Any]) -> None:
            if note.get("method") == "notifications/tools/list_changed" and holder:
                holder[0].tools_changed = True

        async with contextlib.AsyncExitStack() as stack:
            sessions: dict[str, ToolSession] = {}
            for name, target in servers.items():
                sessions[name] = await stack.enter_async_context(connect_client(
                    target, timeout=timeout, headers=headers, env=env, cwd=cwd, on_notification=on_notification))
            options.setdefault("call_timeout", timeout)
            bridge = await cls.from_sessions(sessions, **options)
            holder.append(bridge)
            yield bridge

    async def refresh(self) -> None:
        """List every server's tools again (after `tools_changed`, or whenever the host likes)."""
        self._set_tools({name: await session.list_tools() for name, session in self.sessions.items()})
        self.tools_changed = False

    def _set_tools(self, tools: Mapping[str, Any]) -> None:
        """Take each server's tool list; a malformed tool is left out and noted in `skipped`, never fatal."""
        self.tools: list[RemoteTool] = []
        self.skipped: list[ExportNote] = []
        self._checkers: dict[tuple[str, str], ArgumentChecker] = {}
        for server, listed in tools.items():
            if not isinstance(listed, list | tuple):
                self._skip(
                    server, None, f"its tool list is {type(listed).__name__}, not a list; no tool of it is offered"
                )
                continue
            for index, definition in enumerate(listed):
                problem = malformed(definition)
                name = definition.get("name") if isinstance(definition, Mapping) else None
                label = name if isinstance(name, str) else f"#{index}"
                if problem is None and any(t.server == server and t.name == name for t in self.tools):
                    problem = "another tool of this server has the same name; the first one is kept"
                if problem is None:
                    tool = RemoteTool(server, dict(definition))
                    try:
                        checker = ArgumentChecker(tool.input_schema)
                    except SchemaConversionError as exc:
                        problem = f"its input schema cannot be used: {exc}"
                    else:
                        self.tools.append(tool)
                        self._checkers[(server, tool.name)] = checker
                        continue
                self._skip(server, label, f"left out: {problem}")
        self._by_pair = {(tool.server, tool.name): tool for tool in self.tools}
        self._names: dict[str, NameMap] = {}

    def _skip(self, server: str, tool: str | None, reason: str) -> None:
        note = ExportNote(server, tool, reason)
        logger.warning("%s", note)
        self.skipped.append(note)

    # ------------------------------------------------------------------ definitions

    def names(self, format: str) -> NameMap:
        """The function names for `format` (see `names.NameMap`)."""
        rules = get_format(format).rules
        if rules.vendor not in self._names:
            self._names[rules.vendor] = NameMap(self._by_pair, rules, prefix=self.prefix)
        return self._names[rules.vendor]

    def definitions(self, format: str = "openai", *, strict: Strict = False) -> list[dict[str, Any]]:
        """Every tool as `format` defines functions (`export(...).definitions`).

        `strict=True` (OpenAI formats) converts every schema for strict mode and raises StrictSchemaError,
        naming the tool and the JSON Pointer, when one cannot be; `strict="auto"` exports such a tool
        non-strict and notes why in `export(...).notes`. A tool Gemini's schema subset cannot express is left
        out of a Gemini export, noted the same way.
        """
        return self.export(format, strict=strict).definitions

    def export(self, format: str = "openai", *, strict: Strict = False) -> Export:
        """The definitions for `format`, with a note for every tool left out, renamed or exported non-strict."""
        fmt = get_format(format)
        if strict is True and not fmt.supports_strict:
            raise ValueError(f"strict mode is OpenAI's; the {format} format has no strict option here")
        names = self.names(format)
        notes = list(self.skipped)
        notes += [ExportNote(r.server, r.tool, r.reason) for r in names.renamed]
        out = []
        for tool in self.tools:
            exported = ExportedTool(names.exported(tool.server, tool.name), description_of(tool.definition),
                                    tool.input_schema)
            definition = self._definition(fmt, tool, exported, strict, notes)
            if definition is not None:
                out.append(definition)
        return Export(out, notes)

    @staticmethod
    def _definition(fmt: FunctionFormat, tool: RemoteTool, exported: ExportedTool, strict: Strict,
                    notes: list[ExportNote]) -> dict[str, Any] | None:
        try:
            return fmt.definition(exported, strict=bool(strict) and fmt.supports_strict)
        except SchemaConversionError as exc:
            exc.tool = tool.name
            if isinstance(exc, StrictSchemaError) and strict is True:
                raise
            if isinstance(exc, StrictSchemaError):
                notes.append(ExportNote(tool.server, tool.name, f"exported without strict mode: {exc}"))
                return fmt.definition(exported, strict=False)
            notes.append(ExportNote(tool.server, tool.name, f"left out of the {fmt.key} export: {exc}"))
            return None

    def openai_tools(self, *, strict: Strict = False) -> list[dict[str, Any]]:
        """Chat Completions `tools`."""
        return self.definitions("openai", strict=strict)

    def openai_responses_tools(self, *, strict: Strict = False) -> list[dict[str, Any]]:
        """Responses API `tools`."""
        return self.definitions("openai-responses", strict=strict)

    def anthropic_tools(self) -> list[dict[str, Any]]:
        """Messages API `tools`."""
        return self.definitions("anthropic")

    def gemini_tools(self) -> list[dict[str, Any]]:
        """Gemini `tools`: one entry holding every function declaration."""
        return [{"functionDeclarations": self.definitions("gemini")}]

    def request_options(
        self,
        format: str,
        *,
        strict: Strict = False,
        tool_choice: str | Mapping[str, Any] | None = None,
        parallel_tool_calls: bool | None = None,
    ) -> dict[str, Any]:
        """The request fields for the tools and the options, spelled as `format` wants them.

        `tool_choice`: "auto", "required", "none", a tool (its exported name, its own name when only one server
        has it, or "server/tool"), or a vendor-shaped mapping sent unchanged. `parallel_tool_calls` is sent
        as the vendor spells it (Anthropic: `disable_parallel_tool_use`); None leaves the vendor's default.
        """
        fmt = get_format(format)
        tools = self.definitions(format, strict=strict if fmt.supports_strict else False)
        choice: ToolChoice | Mapping[str, Any] | None
        if tool_choice is None or isinstance(tool_choice, Mapping):
            choice = tool_choice
        elif tool_choice in ("auto", "required", "none"):
            choice = ToolChoice(tool_choice)  # type: ignore[arg-type]
        else:
            choice = ToolChoice("named", self._choice_name(format, tool_choice))
        return fmt.request_options(tools, choice, parallel_tool_calls)

    def _choice_name(self, format: str, wanted: str) -> str:
        names = self.names(format)
        server, sep, tool = wanted.partition("/")
        pair = (server, tool) if sep and (server, tool) in self._by_pair else names.resolve(wanted)
        if pair is None:
            raise ValueError(f"tool_choice names no tool: {wanted!r}; the tools are {', '.join(names.names)}")
        return names.exported(*pair)

    # ------------------------------------------------------------------ running a turn

    def calls(self, format: str, response: Any) -> list[ToolCall]:
        """The tool calls in a model response of `format` (whole response or the part holding the calls)."""
        return get_format(format).calls(response)

    async def run_turn(self, format: str, response: Any) -> Turn:
        """Run every tool call in `response` concurrently; the Turn holds outcomes and the messages to send back."""
        fmt = get_format(format)
        calls = fmt.calls(response)
        names = self.names(format)

        def resolve(name: str) -> CallTarget | None:
            pair = names.resolve(name)
            if pair is None:
                return None
            return CallTarget(self._by_pair[pair], self.sessions[pair[0]], self._checkers[pair])

        executor = TurnExecutor(resolve, lambda: names.names, confirm=self.confirm, timeout=self.call_timeout)
        outcomes = await executor.run(calls)
        return Turn(calls, outcomes, fmt.results(outcomes))
