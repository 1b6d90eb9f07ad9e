"""The tool registry: typed functions in, validated calls and normalised results out.

Everything expensive (argument model, input/output schema, wire dicts per protocol version) is
built at registration. A call validates once, runs the function (sync ones in a worker thread)
and turns the result or the failure into a CallToolResult the model can act on.
"""

from __future__ import annotations

import difflib
import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from pydantic import BaseModel, ValidationError

from .auth.scopes import scope_list
from .content import dump_model, error_result, tool_result
from .errors import ToolError, UpstreamUnavailable, invalid_params
from .jsonrpc import JSONRPCError
from .signature import Signature, describe_validation_error, inspect_function, output_schema, parse_docstring
from .threads import run_in_worker
from .versions import shape_tool

logger = logging.getLogger("mcp_kit.tools")


@dataclass(slots=True)
class Tool:
    """A registered tool."""

    name: str
    fn: Callable[..., Any]
    signature: Signature
    description: str
    title: str | None = None
    annotations: dict[str, Any] | None = None
    output_schema: dict[str, Any] | None = None
    wrap_output: bool = False
    icons: list[dict[str, Any]] | None = None
    meta: dict[str, Any] | None = None
    is_async: bool = True
    scopes: tuple[str, ...] = ()  # OAuth scopes a caller's token must grant (HTTP with OAuth only)
    task_support: str = "forbidden"  # "optional" | "required": may (must) run as a task (tasks/ and task_methods.py)
    task_start: str = "auto"  # "explicit": the function runs in the request until it awaits ctx.start_task()
    task_ttl_ms: int | None = None  # None: the server's TaskSettings
    task_poll_interval_ms: int | None = None
    _wire: dict[str, dict[str, Any]] = field(default_factory=dict)

    def definition(self) -> dict[str, Any]:
        """The full (newest-version) wire definition."""
        out: dict[str, Any] = {"name": self.name}
        if self.title:
            out["title"] = self.title
        out["description"] = self.description
        out["inputSchema"] = self.signature.input_schema
        if self.output_schema is not None:
            out["outputSchema"] = self.output_schema
        if self.annotations:
            out["annotations"] = self.annotations
        if self.icons:
            out["icons"] = self.icons
        if self.meta:
            out["_meta"] = self.meta
        if self.task_support != "forbidden":
            out["execution"] = {"taskSupport": self.task_support}  # 2025-11-25 only (versions.shape_tool)
        return out

    def wire(self, version: str) -> dict[str, Any]:
        """The definition shaped for a protocol version (cached)."""
        shaped = self._wire.get(version)
        if shaped is None:
            shaped = self._wire[version] = shape_tool(self.definition(), version)
        return shaped


def make_tool(
    fn: Callable[..., Any],
    context_type: type,
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    annotations: BaseModel | dict[str, Any] | None = None,
    read_only: bool | None = None,
    destructive: bool | None = None,
    idempotent: bool | None = None,
    open_world: bool | None = None,
    structured_output: bool | None = None,
    input_schema: dict[str, Any] | None = None,
    icons: list[dict[str, Any]] | None = None,
    meta: dict[str, Any] | None = None,
    scopes: str | list[str] | tuple[str, ...] | None = None,
    task: str = "forbidden",
    task_start: str = "auto",
    task_ttl_ms: int | None = None,
    task_poll_interval_ms: int | None = None,
) -> Tool:
    """Inspect `fn` once and build its Tool.

    `scopes`: the OAuth scopes a caller needs (checked only when the request came with an OAuth
    access token, see `mcp_kit.auth`). `task`: "forbidden" (default), "optional" or "required":
    whether a call may (must) run as a task, answered at once with a handle the client polls.
    `task_start="explicit"`: the function runs inside the request until it awaits
    `ctx.start_task()` (async functions only).
    """
    if task not in ("forbidden", "optional", "required"):
        raise ValueError(f"task={task!r}: use 'forbidden', 'optional' or 'required'")
    if task_start not in ("auto", "explicit"):
        raise ValueError(f"task_start={task_start!r}: use 'auto' or 'explicit'")
    if task_start == "explicit" and not inspect.iscoroutinefunction(fn):
        raise ValueError("task_start='explicit' needs an async function (it awaits ctx.start_task())")
    docs = parse_docstring(fn)
    signature = inspect_function(fn, context_type, docs)
    if input_schema is not None:
        signature.input_schema = input_schema
    hints = _annotations(annotations, title, read_only, destructive, idempotent, open_world)
    schema, wrap = output_schema(fn, structured_output)
    return Tool(
        name=name or fn.__name__,
        fn=fn,
        signature=signature,
        description=description or docs.description or (name or fn.__name__),
        title=title,
        annotations=hints,
        output_schema=schema,
        wrap_output=wrap,
        icons=icons,
        meta=meta,
        is_async=inspect.iscoroutinefunction(fn),
        scopes=scope_list(scopes, f"tool {name or fn.__name__!r}"),
        task_support=task,
        task_start=task_start,
        task_ttl_ms=task_ttl_ms,
        task_poll_interval_ms=task_poll_interval_ms,
    )


def _annotations(
    annotations: BaseModel | dict[str, Any] | None,
    title: str | None,
    read_only: bool | None,
    destructive: bool | None,
    idempotent: bool | None,
    open_world: bool | None,
) -> dict[str, Any] | None:
    out: dict[str, Any] = {}
    if isinstance(annotations, BaseModel):  # mcp_types.ToolAnnotations
        out.update(dump_model(annotations))
    elif annotations:
        out.update(annotations)
    for key, value in (("readOnlyHint", read_only), ("destructiveHint", destructive),
                       ("idempotentHint", idempotent), ("openWorldHint", open_world)):
        if value is not None:
            out[key] = value
    if title and "title" not in out:
        out["title"] = title
    return out or None


class ToolRegistry:
    """Tools by name, in registration order."""

    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}

    def add(self, tool: Tool) -> None:
        self._tools[tool.name] = tool

    def remove(self, name: str) -> bool:
        return self._tools.pop(name, None) is not None

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __len__(self) -> int:
        return len(self._tools)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._tools.values())

    def param_headers(self, name: str) -> dict[str, str]:
        """Arguments of tool `name` mirrored into `Mcp-Param-*` headers (`x-mcp-header` in its schema)."""
        tool = self._tools.get(name)
        if tool is None:
            return {}
        properties = tool.signature.input_schema.get("properties", {})
        return {arg: str(spec["x-mcp-header"]) for arg, spec in properties.items()
                if isinstance(spec, dict) and "x-mcp-header" in spec}

    def names(self) -> list[str]:
        return list(self._tools)

    def unknown_tool(self, name: str) -> Exception:
        """The error for a name that is not registered: it lists the tools that exist."""
        known = self.names()
        close = difflib.get_close_matches(name, known, n=3)
        hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        listing = ", ".join(known) if known else "(none)"
        return invalid_params(f"Unknown tool '{name}'.{hint} Available tools: {listing}", {"tools": known})


async def call_tool(tool: Tool, arguments: dict[str, Any] | None, context: Any) -> dict[str, Any]:
    """Validate, run, normalise. Failures become `isError: true` results, never exceptions."""
    try:
        kwargs = tool.signature.validate(arguments or {})
    except ValidationError as exc:
        lines = describe_validation_error(exc, tool.signature.input_schema)
        return error_result(f"Invalid arguments for tool '{tool.name}':\n" + "\n".join(lines))
    if tool.signature.context_param:
        kwargs[tool.signature.context_param] = context
    try:
        if tool.is_async:
            value = await tool.fn(**kwargs)
        else:
            value = await run_in_worker(tool.fn, **kwargs)
    except ToolError as exc:
        return error_result(str(exc))
    except UpstreamUnavailable as exc:  # the model can act on it (wait, retry, say so): a result, not a protocol error
        return error_result(exc.message)
    except (anyio.get_cancelled_exc_class(), JSONRPCError):
        raise  # cancellation, and protocol errors the tool chose to raise (e.g. a missing client capability)
    except Exception as exc:
        logger.exception("tool %s raised", tool.name)
        return error_result(f"Tool '{tool.name}' failed: {type(exc).__name__}: {exc}")
    return tool_result(value, tool.output_schema is not None, tool.wrap_output)
