"""Running one model turn's tool calls against MCP servers: all at once, every outcome as data.

    outcomes = await TurnExecutor(resolve, available).run(calls)

Each call is resolved to (server, tool), its arguments parsed, restored from strict mode and validated,
a destructive tool confirmed through the hook, then called. Calls run concurrently; outcomes come back in
call order. Whatever goes wrong with one call (an unknown tool, bad JSON, invalid arguments, a refusal,
`isError`, a JSON-RPC error, a server that is gone, a timeout, even a bug here) becomes that call's error
outcome, with a message the model can act on; it never aborts the turn or the other calls. Messages do
not echo a server's stderr or internals to the model.

Must not import the vendor modules or the bridge: it is handed a resolver.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import anyio

from .._protocol.errors import MCPError
from ..client._errors import ClientError
from ._arguments import ArgumentChecker, ArgumentError, parse_arguments
from ._calls import ErrorKind, ToolCall, ToolOutcome, result_text
from ._remote import Confirm, ConfirmationRequest, RemoteTool, ToolSession

logger = logging.getLogger("mcp_kit.functions")


@dataclass(frozen=True)
class CallTarget:
    """Where a function name leads: the tool, the session of its server, the tool's argument checker."""

    tool: RemoteTool
    session: ToolSession
    checker: ArgumentChecker


class TurnExecutor:
    """Executes the tool calls of one turn; `resolve` maps an exported name to its target (or None)."""

    def __init__(self, resolve: Callable[[str], CallTarget | None], available: Callable[[], list[str]], *,
                 confirm: Confirm | None = None, timeout: float = 60.0) -> None:
        self.resolve = resolve
        self.available = available
        self.confirm = confirm
        self.timeout = timeout
        self._asking = anyio.Lock()  # one confirmation question at a time

    async def run(self, calls: Sequence[ToolCall]) -> list[ToolOutcome]:
        outcomes: list[ToolOutcome | None] = [None] * len(calls)

        async def run_one(index: int, call: ToolCall) -> None:
            try:
                outcomes[index] = await self.execute(call)
            except Exception as exc:  # a bug of ours must not cost the other calls their results
                logger.exception("tool call %s failed in the host", call.name)
                outcomes[index] = failure(call, "internal_error", f"The host failed while running this call ({exc}). "
                                                                  "Try again or use another tool.")

        async with anyio.create_task_group() as tg:
            for index, call in enumerate(calls):
                tg.start_soon(run_one, index, call)
        return [outcome for outcome in outcomes if outcome is not None]

    async def execute(self, call: ToolCall) -> ToolOutcome:
        target = self.resolve(call.name)
        if target is None:
            names = ", ".join(self.available()) or "none"
            return failure(call, "unknown_tool", f"Unknown tool {call.name!r}. The tools that exist are: {names}.")
        tool = target.tool
        try:
            arguments = target.checker.check(parse_arguments(call.arguments))
        except ArgumentError as exc:
            return failure(call, "bad_arguments", str(exc), tool)
        if tool.destructive and self.confirm is not None and not await self.confirmed(call, tool, arguments):
            return failure(call, "declined", f"The user declined to run {tool.name} (it may change or delete data). "
                                             "Do not call it again unless the user asks; say what you wanted to do.",
                           tool, arguments)
        try:
            result = await target.session.call_tool(tool.name, arguments, timeout=self.timeout)
        except MCPError as exc:
            return failure(call, "protocol_error", f"The server refused the call: {exc.message} "
                                                   f"(JSON-RPC error {exc.code}).", tool, arguments)
        except ClientError as exc:  # the reason (exit status, stderr tail) is for the host's log, not the model
            logger.warning("server %r is gone; %s failed: %s", tool.server, tool.name, exc)
            return failure(call, "server_gone", f"The server {tool.server!r} cannot be reached any more (it exited or "
                                                "closed the connection); its tools are unavailable for now.",
                           tool, arguments)
        except TimeoutError:
            return failure(call, "timeout", f"{tool.name} gave no answer within {self.timeout:g} s and was "
                                            "cancelled. Try again later or with a smaller request.", tool, arguments)
        is_error = bool(result.get("isError"))
        return ToolOutcome(call, result_text(result), is_error, "tool_error" if is_error else None, tool.server,
                           tool.name, arguments, result)

    async def confirmed(self, call: ToolCall, tool: RemoteTool, arguments: dict[str, object]) -> bool:
        assert self.confirm is not None
        request = ConfirmationRequest(tool.server, tool.name, dict(arguments), tool.annotations, call.id)
        async with self._asking:
            try:
                answer = self.confirm(request)
                if inspect.isawaitable(answer):
                    answer = await answer
            except Exception:
                logger.exception("the confirmation hook failed for %s; the call is not made", tool.name)
                return False
        return answer is True


def failure(call: ToolCall, kind: ErrorKind, text: str, tool: RemoteTool | None = None,
            arguments: dict[str, object] | None = None) -> ToolOutcome:
    return ToolOutcome(call, text, True, kind, tool.server if tool else None, tool.name if tool else None,
                       dict(arguments) if arguments is not None else None)
