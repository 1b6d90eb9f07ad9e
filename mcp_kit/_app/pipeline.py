"""The request pipeline: middleware around every MCP method, composed once, the same in both eras.

Every request a session serves (stdio, Streamable HTTP, legacy SSE, each item of a batch, a
2026-07-28 request, each round of an input-required request) reaches its method through one
seam: the era code builds a `Call` (method, params, `Context`) and hands it to the application's
`Pipeline`, whose chain ends in the method's route. The run of a `tools/call` that became a task
passes through the chain once more, inside the task (`Call.in_task` True).

A `Middleware` overrides the hooks it needs; each takes the call and `call_next` and may answer
early (return a result), refuse (raise `MCPError`; a tool call may also answer an `isError`
result), or change the params (`call.replace(params=...)`) and the result. `on_request` sees
every request and wraps the middleware's own specific hook (`on_call_tool`, ...); middleware
apply in order, the first outermost. Notifications from the client pass `on_notification`.

A middleware raising `ToolError` (or `UpstreamUnavailable`) for a `tools/call` answers an `isError`
result with its message, as a tool raising it does. A tool that raises an unexpected exception (anything but
`ToolError`, `UpstreamUnavailable` and
protocol errors) makes `call_next` raise `ToolCrashed` inside the chain: a middleware may answer
otherwise (error masking does); past the outermost middleware it becomes the `isError` result
(`ToolCrashed.result`) a server without middleware answers.

The chain of each method is built when middleware is added, never per request, and only from
the hooks a middleware overrides. With no middleware the application's `pipeline` is None and
the era code calls the route directly: one attribute check.

Imports the context, the tools (`ToolCrashed`), content, errors and versions: never the application
(which imports this), the session or a transport.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._primitives.content import error_result
from .._primitives.tools import ToolCrashed
from .._protocol.errors import MCPError, ToolError, UpstreamUnavailable
from .._protocol.jsonrpc import INTERNAL_ERROR
from .._protocol.versions import is_stateless
from .context import Context

logger = logging.getLogger("mcp_kit.tools")
CallNext = Callable[["Call"], Awaitable[Any]]

# The specific hook of each method; every other method has only `on_request`.
METHOD_HOOKS: dict[str, str] = {
    "tools/call": "on_call_tool",
    "resources/read": "on_read_resource",
    "prompts/get": "on_get_prompt",
    "tools/list": "on_list_tools",
    "resources/list": "on_list_resources",
    "resources/templates/list": "on_list_resource_templates",
    "prompts/list": "on_list_prompts",
    "completion/complete": "on_complete",
    "initialize": "on_initialize",
}
HOOKS = ("on_request", "on_notification", *METHOD_HOOKS.values())


@dataclass(frozen=True, slots=True)
class Call:
    """One request (or client notification) on its way through the middleware chain.

    `params` is the request's params object (`{}` when it had none); `ctx` is the `Context` its
    handler gets (principal, session id, protocol version, request id; `ctx.request_id` is None
    for a notification). `in_task` is True for the run of a `tools/call` that became a task (its
    `ctx.task_id` names the task). Change what reaches the inner layers with `replace`.
    """

    method: str
    params: dict[str, Any]
    ctx: Context
    app: Any = field(repr=False, compare=False)  # the `MCPServer` serving the call
    in_task: bool = False
    _answer: Callable[[Call], Awaitable[Any]] | None = field(default=None, repr=False, compare=False)

    def replace(self, **changes: Any) -> Call:
        """A copy with `changes` (e.g. `params={...}`); what answers it stays the same."""
        return dataclasses.replace(self, **changes)

    @property
    def name(self) -> str | None:
        """The tool's or prompt's name (`tools/call`, `prompts/get`), else None."""
        name = self.params.get("name")
        return name if isinstance(name, str) else None

    @property
    def uri(self) -> str | None:
        """The resource URI (`resources/read`, `resources/subscribe`, ...), else None."""
        uri = self.params.get("uri")
        return uri if isinstance(uri, str) else None

    @property
    def arguments(self) -> dict[str, Any]:
        """The call's arguments (`tools/call`, `prompts/get`); {} when none were given."""
        arguments = self.params.get("arguments")
        return arguments if isinstance(arguments, dict) else {}

    @property
    def protocol_version(self) -> str:
        return self.ctx.protocol_version

    @property
    def stateless(self) -> bool:
        """True for a 2026-07-28 request, False for the handshake era."""
        return is_stateless(self.ctx.protocol_version)

    @property
    def session_id(self) -> str:
        return self.ctx.session_id

    @property
    def principal(self) -> Any:
        """The caller's OAuth access token (`mcp_kit.AccessToken`), None without OAuth."""
        return self.ctx.principal


class Middleware:
    """Base class of a middleware: override the hooks you need (each is optional and async).

        class Refuse(Middleware):
            async def on_call_tool(self, call, call_next):
                if call.name == "drop_tables":
                    raise ToolError("not today")
                return await call_next(call)

    A hook returns the result (its own, or `await call_next(call)`'s, changed or not) or raises.
    Hooks a subclass does not override cost nothing: they are left out of the chain.
    """

    async def on_request(self, call: Call, call_next: CallNext) -> Any:
        """Every request, whatever its method; wraps this middleware's specific hook."""
        return await call_next(call)

    async def on_notification(self, call: Call, call_next: CallNext) -> Any:
        """Every notification from the client (`notifications/initialized`, `.../cancelled`, ...)."""
        return await call_next(call)

    async def on_call_tool(self, call: Call, call_next: CallNext) -> Any:
        return await call_next(call)

    async def on_read_resource(self, call: Call, call_next: CallNext) -> Any:
        return await call_next(call)

    async def on_get_prompt(self, call: Call, call_next: CallNext) -> Any:
        return await call_next(call)

    async def on_list_tools(self, call: Call, call_next: CallNext) -> Any:
        return await call_next(call)

    async def on_list_resources(self, call: Call, call_next: CallNext) -> Any:
        return await call_next(call)

    async def on_list_resource_templates(self, call: Call, call_next: CallNext) -> Any:
        return await call_next(call)

    async def on_list_prompts(self, call: Call, call_next: CallNext) -> Any:
        return await call_next(call)

    async def on_complete(self, call: Call, call_next: CallNext) -> Any:
        return await call_next(call)

    async def on_initialize(self, call: Call, call_next: CallNext) -> Any:
        return await call_next(call)


def _answer(call: Call) -> Awaitable[Any]:
    """The innermost step: what answers the call (its route)."""
    assert call._answer is not None, "a Call built without what answers it"
    return call._answer(call)


def _step(hook: Callable[[Call, CallNext], Awaitable[Any]], inner: CallNext) -> CallNext:
    def step(call: Call) -> Awaitable[Any]:
        return hook(call, inner)

    return step


def _overrides(middleware: Middleware, hook: str) -> bool:
    return getattr(type(middleware), hook, None) is not getattr(Middleware, hook)


def compose(middleware: Sequence[Middleware], hook: str | None, outer: str = "on_request") -> CallNext:
    """The chain for one method: each middleware's `outer` hook around its `hook`, the first outermost."""
    chain: CallNext = _answer
    for each in reversed(middleware):
        if hook is not None and _overrides(each, hook):
            chain = _step(getattr(each, hook), chain)
        if _overrides(each, outer):
            chain = _step(getattr(each, outer), chain)
    return chain


class Pipeline:
    """The composed chains of one application's middleware: one per method with a hook, one for the rest."""

    __slots__ = ("middleware", "_chains", "_default", "_notification")

    def __init__(self, middleware: Sequence[Middleware]) -> None:
        for each in middleware:
            if not isinstance(each, Middleware):
                raise TypeError(f"middleware must be instances of mcp_kit.Middleware, not {type(each).__name__}")
        self.middleware = tuple(middleware)
        self._chains = {method: compose(self.middleware, hook) for method, hook in METHOD_HOOKS.items()}
        self._default = compose(self.middleware, None)
        self._notification = compose(self.middleware, None, outer="on_notification")

    async def handle(self, call: Call) -> Any:
        """Answer a request through the chain of its method.

        What escapes the chain is answered as a tool's own failure would be: for `tools/call`, a
        `ToolCrashed` is its `isError` result, a `ToolError` or `UpstreamUnavailable` an `isError`
        result with its message; elsewhere a `ToolError` is a -32603 error with its message.
        """
        try:
            return await self._chains.get(call.method, self._default)(call)
        except ToolCrashed as crashed:  # no middleware answered for it: the result a plain server gives
            logger.error("tool %s raised", crashed.tool, exc_info=crashed.error)
            return crashed.result
        except ToolError as exc:
            if call.method == "tools/call":
                return error_result(str(exc))
            raise MCPError(INTERNAL_ERROR, str(exc)) from None
        except UpstreamUnavailable as exc:
            if call.method == "tools/call":
                return error_result(exc.message)
            raise

    async def notify(self, call: Call) -> None:
        """Pass a client notification through the chain."""
        await self._notification(call)


def build_pipeline(middleware: Sequence[Middleware]) -> Pipeline | None:
    """The pipeline of `middleware`; None when there is none (the era code then calls routes directly)."""
    return Pipeline(middleware) if middleware else None
