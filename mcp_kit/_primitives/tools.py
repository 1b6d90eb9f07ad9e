"""The tool registry: typed functions in, validated calls and normalised results out.

Registration keeps the function and its options and nothing else, so a server with thousands of
tools starts at once. What a tool needs is built the first time it is needed and kept:
`Tool.schema()` (description, input and output schema) for `tools/list`, `Tool.call_plan()` (the
argument model) for `tools/call`. The argument model (about 12 KiB) is kept only for tools that are
called; listing keeps the schema (about 1 KiB) and lets the model built for it go. Nothing is built
per call. A call validates once, runs the function (plain functions in a worker thread or process,
see `_execution/executors.py`) and turns the result or the failure into a CallToolResult the model can act on.

`ToolRegistry.page` builds only the page it returns.
"""

from __future__ import annotations

import difflib
import inspect
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
from pydantic import BaseModel, ValidationError

from .._errors import MCPKitError
from .._protocol.errors import ToolError, UpstreamUnavailable, invalid_params
from .._protocol.jsonrpc import JSONRPCError
from .._protocol.versions import shape_tool
from ..auth._scopes import scope_list
from .content import dump_model, error_result, tool_result
from .cursors import decode_index_cursor, encode_index_cursor
from .signature import (
    DefinitionError,
    Signature,
    check_signature,
    describe_validation_error,
    inspect_function,
    output_schema,
    parse_docstring,
    where,
)

if TYPE_CHECKING:
    from .._execution.executors import Executor

logger = logging.getLogger("mcp_kit.tools")


class ToolDefinitionError(DefinitionError):
    """A tool's signature cannot be turned into a schema or an argument model (a bug in the server's code)."""


class ToolCrashed(MCPKitError):
    """Inside the middleware chain: the tool raised an unexpected exception (`error`, also `__cause__`).

    `result` is the `isError` result the client gets when no middleware answers otherwise.
    """

    def __init__(self, tool: str, error: BaseException, result: dict[str, Any]) -> None:
        super().__init__(f"Tool '{tool}' failed: {type(error).__name__}: {error}")
        self.tool = tool
        self.error = error
        self.result = result


@dataclass(slots=True)
class ToolSchema:
    """What `tools/list` says about a tool."""

    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None


@dataclass(slots=True)
class CallPlan:
    """What `tools/call` needs: the argument model, the schema its errors are explained with, result shaping."""

    signature: Signature
    input_schema: dict[str, Any]
    structured: bool
    wrap_output: bool


class Tool:
    """A registered tool: its function and options; schema and argument model built when first needed."""

    __slots__ = (
        "name",
        "fn",
        "title",
        "annotations",
        "icons",
        "meta",
        "is_async",
        "executor",
        "scopes",
        "task_support",
        "task_start",
        "task_ttl_ms",
        "task_poll_interval_ms",
        "timeout",
        "tags",
        "owner",
        "source",
        "untransformed",
        "rewrite",
        "_context_type",
        "_description",
        "_input_schema",
        "_structured",
        "_output",
        "_schema",
        "_call",
        "_wire",
    )

    def __init__(self, name: str, fn: Callable[..., Any], context_type: type, *, description: str | None = None,
                 title: str | None = None, annotations: dict[str, Any] | None = None,
                 input_schema: dict[str, Any] | None = None, structured_output: bool | None = None,
                 icons: list[dict[str, Any]] | None = None, meta: dict[str, Any] | None = None,
                 executor: Executor | None = None, scopes: tuple[str, ...] = (), task_support: str = "forbidden",
                 task_start: str = "auto", task_ttl_ms: int | None = None,
                 task_poll_interval_ms: int | None = None, timeout: float | None = None,
                 tags: frozenset[str] = frozenset()) -> None:
        self.name = name
        self.fn = fn
        self.title = title
        self.annotations = annotations
        self.icons = icons
        self.meta = meta
        self.is_async = executor is None
        self.executor = executor
        self.scopes = scopes  # OAuth scopes a caller's token must grant (HTTP with OAuth only)
        self.task_support = task_support  # "optional" | "required": may (must) run as a task (tasks/_methods.py)
        self.task_start = task_start  # "explicit": the function runs in the request until it awaits ctx.start_task()
        self.task_ttl_ms = task_ttl_ms  # None: the server's TaskSettings
        self.task_poll_interval_ms = task_poll_interval_ms
        self.timeout = timeout  # seconds a call may run (the timeouts middleware enforces it); None: the default
        self.tags = tags  # labels the server's author gives (hide_tools(tags=...)); never sent to clients
        self.owner: Any = None  # a mounted tool: the app whose lifespan state its function sees (_app/mounts.py)
        self.source: Tool | None = None  # a mounted tool: the mounted app's own entry it mirrors
        self.untransformed: Tool | None = None  # a transformed tool: what it was before (_primitives/transforms.py)
        self.rewrite: Callable[[dict[str, Any], Any], dict[str, Any]] | None = None  # a transform's argument rewrite
        self._context_type = context_type
        self._description = description
        self._input_schema = input_schema
        self._structured = structured_output
        self._output: tuple[dict[str, Any] | None, bool] | None = None
        self._schema: ToolSchema | None = None
        self._call: CallPlan | None = None
        self._wire: dict[str, dict[str, Any]] | None = None

    # ------------------------------------------------------------------ what tools/list shows

    def schema(self) -> ToolSchema:
        """Description, input and output schema (built on first use)."""
        return self._schema or self._build_schema()

    @property
    def description(self) -> str:
        return self.schema().description

    @property
    def input_schema(self) -> dict[str, Any]:
        if self._schema is not None:
            return self._schema.input_schema
        if self._call is not None:
            return self._call.input_schema
        return self._build_schema().input_schema

    @property
    def output_schema(self) -> dict[str, Any] | None:
        return self.schema().output_schema

    def definition(self) -> dict[str, Any]:
        """The full (newest-version) wire definition."""
        schema = self.schema()
        out: dict[str, Any] = {"name": self.name}
        if self.title:
            out["title"] = self.title
        out["description"] = schema.description
        out["inputSchema"] = schema.input_schema
        if schema.output_schema is not None:
            out["outputSchema"] = schema.output_schema
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
        if self._wire is None:
            self._wire = {}
        shaped = self._wire.get(version)
        if shaped is None:
            shaped = self._wire[version] = shape_tool(self.definition(), version)
        return shaped

    def _build_schema(self) -> ToolSchema:
        try:
            docs = parse_docstring(self.fn)
            if self._input_schema is not None:
                input_schema = self._input_schema
            elif self._call is not None:
                input_schema = self._call.input_schema
            else:  # the model built for the schema is not kept: a call builds (and keeps) its own
                input_schema = inspect_function(self.fn, self._context_type, docs).input_schema
            schema, _ = self._output_info()
        except Exception as exc:
            raise self._cannot_build("its schema", exc) from exc
        self._schema = ToolSchema(self._description or docs.description or self.name, input_schema, schema)
        return self._schema

    # ------------------------------------------------------------------ what tools/call needs

    def call_plan(self) -> CallPlan:
        """The argument model and result shaping (built on first use)."""
        return self._call or self._build_call()

    @property
    def signature(self) -> Signature:
        return self.call_plan().signature

    def _build_call(self) -> CallPlan:
        try:
            signature = inspect_function(self.fn, self._context_type)
            schema, wrap = self._output_info()
        except Exception as exc:
            raise self._cannot_build("its argument model", exc) from exc
        if self._input_schema is not None:
            signature.input_schema = self._input_schema
        elif self._schema is not None:
            signature.input_schema = self._schema.input_schema  # equal; keep one copy
        if signature.context_param and self.executor is not None and not self.executor.accepts_context:
            raise ToolDefinitionError(
                f"tool {self.name!r} cannot run in a process: it takes a Context, which "
                "lives in the server's process; drop the Context parameter or use run_in='thread'"
            )
        self._call = CallPlan(signature, signature.input_schema, schema is not None, wrap)
        return self._call

    def _output_info(self) -> tuple[dict[str, Any] | None, bool]:
        if self._output is None:
            self._output = output_schema(self.fn, self._structured)
        return self._output

    def _cannot_build(self, what: str, error: Exception) -> ToolDefinitionError:
        if isinstance(error, DefinitionError):
            return ToolDefinitionError(str(error))
        return ToolDefinitionError(f"{where(self.fn)}: tool {self.name!r}: cannot build {what} from the function's "
                                   f"signature: {type(error).__name__}: {error}")


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
    executor: Executor | None = None,
    scopes: str | list[str] | tuple[str, ...] | None = None,
    task: str = "forbidden",
    task_start: str = "auto",
    task_ttl_ms: int | None = None,
    task_poll_interval_ms: int | None = None,
    timeout: float | None = None,
    tags: set[str] | frozenset[str] | list[str] | tuple[str, ...] | None = None,
) -> Tool:
    """The Tool for `fn`: options checked and kept; schema and model are built when first needed.

    `executor` runs a plain function (a worker thread or process pool); None for a coroutine function.
    `scopes`: the OAuth scopes a caller needs (checked only when the request came with an OAuth access
    token, see `mcp_kit.auth`). `task`: "forbidden" (default), "optional" or "required": whether a call
    may (must) run as a task, answered at once with a handle the client polls. `task_start="explicit"`:
    the function runs inside the request until it awaits `ctx.start_task()` (async functions only).
    `timeout`: seconds a call may run before it is stopped and answered `isError` (enforced by
    `mcp_kit.middleware.Timeouts`, which `--tool-timeout` installs; None: the server's default).
    `tags`: labels for the server's own use (`hide_tools(tags=...)`); clients never see them.
    """
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
        raise ValueError(f"timeout={timeout!r}: a positive number of seconds, or None")
    if task not in ("forbidden", "optional", "required"):
        raise ValueError(f"task={task!r}: use 'forbidden', 'optional' or 'required'")
    if task_start not in ("auto", "explicit"):
        raise ValueError(f"task_start={task_start!r}: use 'auto' or 'explicit'")
    if task_start == "explicit" and not inspect.iscoroutinefunction(fn):
        raise ValueError("task_start='explicit' needs an async function (it awaits ctx.start_task())")
    if executor is None and not inspect.iscoroutinefunction(fn):
        raise TypeError(
            f"tool {name or fn.__name__!r}: a plain (def) function needs an executor (a worker thread or process pool)"
        )
    try:
        check_signature(fn, context_type, f"tool {name or fn.__name__!r}", structured=structured_output)
    except DefinitionError as exc:
        raise ToolDefinitionError(str(exc)) from None
    hints = _annotations(annotations, title, read_only, destructive, idempotent, open_world)
    return Tool(
        name or fn.__name__,
        fn,
        context_type,
        description=description,
        title=title,
        annotations=hints,
        input_schema=input_schema,
        structured_output=structured_output,
        icons=icons,
        meta=meta,
        executor=executor,
        scopes=scope_list(scopes, f"tool {name or fn.__name__!r}"),
        task_support=task,
        task_start=task_start,
        task_ttl_ms=task_ttl_ms,
        task_poll_interval_ms=task_poll_interval_ms,
        timeout=timeout,
        tags=_tags(tags, name or fn.__name__),
    )


def _tags(tags: Any, tool: str) -> frozenset[str]:
    if tags is None:
        return frozenset()
    if isinstance(tags, str) or not all(isinstance(tag, str) for tag in tags):
        raise TypeError(f"tool {tool!r}: tags must be a set of strings, not {tags!r}")
    return frozenset(tags)


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
        self._ordered: list[Tool] | None = None  # the listing order, rebuilt after a change

    def add(self, tool: Tool) -> None:
        self._tools[tool.name] = tool
        self._ordered = None

    def remove(self, name: str) -> bool:
        self._ordered = None
        return self._tools.pop(name, None) is not None

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __len__(self) -> int:
        return len(self._tools)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def page(self, version: str, cursor: Any, size: int,
             visible: Callable[[Tool], bool] | None = None) -> dict[str, Any]:
        """The `tools/list` result for the page at `cursor` (None: the first): its tools shaped for `version`
        and `nextCursor` when more follow. Builds the schemas of this page's tools only; -32602 for a bad cursor.
        `visible` keeps only the tools a caller may see: cursors index that caller's list."""
        ordered = self._ordered
        if ordered is None:
            ordered = self._ordered = list(self._tools.values())
        if visible is not None:
            ordered = [tool for tool in ordered if visible(tool)]
        start = decode_index_cursor(cursor, len(ordered))
        end = start + size
        result: dict[str, Any] = {"tools": [wire for tool in ordered[start:end]
                                            if (wire := _listed(tool, version)) is not None]}
        if end < len(ordered):
            result["nextCursor"] = encode_index_cursor(end)
        return result

    def param_headers(self, name: str) -> dict[str, str]:
        """Arguments of tool `name` mirrored into `Mcp-Param-*` headers (`x-mcp-header` in its schema)."""
        tool = self._tools.get(name)
        if tool is None:
            return {}
        properties = tool.input_schema.get("properties", {})
        return {arg: str(spec["x-mcp-header"]) for arg, spec in properties.items()
                if isinstance(spec, dict) and "x-mcp-header" in spec}

    def names(self) -> list[str]:
        return list(self._tools)

    def unknown_tool(self, name: str, known: list[str] | None = None) -> Exception:
        """The error for a name that is not registered: it lists the tools that exist (`known`: those the caller
        may see)."""
        known = self.names() if known is None else known
        close = difflib.get_close_matches(name, known, n=3)
        hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        listing = ", ".join(known) if known else "(none)"
        return invalid_params(f"Unknown tool '{name}'.{hint} Available tools: {listing}", {"tools": known})


def _listed(tool: Tool, version: str) -> dict[str, Any] | None:
    """A tool's listing entry; a tool whose schema cannot be built is left out (logged), never the whole list."""
    try:
        return tool.wire(version)
    except ToolDefinitionError as exc:
        logger.error("tools/list leaves out %s", exc)
        return None


async def call_tool(tool: Tool, arguments: dict[str, Any] | None, context: Any, *,
                    crash: bool = False) -> dict[str, Any]:
    """Validate, run, normalise. Failures become `isError: true` results, never exceptions; with `crash`
    (inside a middleware chain) an unexpected exception raises `ToolCrashed` carrying that result."""
    plan = tool._call or tool.call_plan()
    if tool.owner is not None:  # a mounted tool sees its own app's lifespan state
        context = context.for_owner(tool.owner)
    if tool.rewrite is not None:  # a transformed tool: hidden and fixed arguments filled in
        try:
            arguments = tool.rewrite(arguments or {}, context)
        except ToolError as exc:
            return error_result(str(exc))
    try:
        kwargs = plan.signature.validate(arguments or {})
    except ValidationError as exc:
        lines = describe_validation_error(exc, plan.input_schema)
        return error_result(f"Invalid arguments for tool '{tool.name}':\n" + "\n".join(lines))
    if plan.signature.context_param:
        kwargs[plan.signature.context_param] = context
    try:
        if tool.executor is None:
            value = await tool.fn(**kwargs)
        else:
            value = await tool.executor.run(tool.fn, kwargs)
    except ToolError as exc:
        return error_result(str(exc))
    except UpstreamUnavailable as exc:  # the model can act on it (wait, retry, say so): a result, not a protocol error
        return error_result(exc.message)
    except (anyio.get_cancelled_exc_class(), JSONRPCError):
        raise  # cancellation, and protocol errors the tool chose to raise (e.g. a missing client capability)
    except Exception as exc:
        result = error_result(f"Tool '{tool.name}' failed: {type(exc).__name__}: {exc}")
        if crash:
            raise ToolCrashed(tool.name, exc, result) from exc
        logger.exception("tool %s raised", tool.name)
        return result
    return tool_result(value, plan.structured, plan.wrap_output)
