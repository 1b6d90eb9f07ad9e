"""`MaskErrors`: an unexpected exception reaches the client as an error id, never as its text.

A tool that raises `ToolError` or `UpstreamUnavailable`, and every protocol error (`MCPError`),
pass unchanged: their messages are meant for the client. Anything else becomes
`Tool 'x' failed (error id 3f9c...)` (an `isError` result), or a -32603 error naming the resource,
prompt or method and the id; the server log gets the id with the traceback, and the audit trail
(outside this middleware) records the answer with the id.
"""

from __future__ import annotations

import logging
import re
import secrets
from typing import Any

import anyio

from .._app.pipeline import Call, CallNext, Middleware
from .._primitives.content import error_result
from .._primitives.tools import ToolCrashed
from .._protocol.errors import MCPError, ToolError
from .._protocol.jsonrpc import INTERNAL_ERROR, JSONRPCError

logger = logging.getLogger("mcp_kit.errors")
ERROR_ID = re.compile(r"\(error id ([0-9a-f]{12})\)")


def new_error_id() -> str:
    return secrets.token_hex(6)


def error_id_in(text: str) -> str | None:
    """The error id a masked answer carries, None when there is none."""
    found = ERROR_ID.search(text)
    return found.group(1) if found else None


class MaskErrors(Middleware):
    """Replaces the text of unexpected exceptions by an error id (logged with the traceback)."""

    async def on_call_tool(self, call: Call, call_next: CallNext) -> Any:
        try:
            return await call_next(call)
        except ToolCrashed as crashed:
            error_id = new_error_id()
            logger.error("tool %s failed (error id %s)", crashed.tool, error_id, exc_info=crashed.error)
            return error_result(f"Tool '{crashed.tool}' failed (error id {error_id}). The details are in the "
                                "server's log under this id; the call may be retried, or reported with the id.")

    async def on_request(self, call: Call, call_next: CallNext) -> Any:
        try:
            return await call_next(call)
        except (JSONRPCError, ToolCrashed, ToolError, anyio.get_cancelled_exc_class()):
            raise
        except Exception as exc:
            error_id = new_error_id()
            what = (f"Resource {call.uri!r}" if call.method == "resources/read" and call.uri else
                    f"Prompt {call.name!r}" if call.method == "prompts/get" and call.name else call.method)
            logger.error("%s failed (error id %s)", what, error_id, exc_info=exc)
            raise MCPError(INTERNAL_ERROR, f"Internal error: {what} failed (error id {error_id}); the details are in "
                                           "the server's log under this id", {"errorId": error_id}) from None
