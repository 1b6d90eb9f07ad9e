"""`Timeouts`: a tool call runs at most its limit, then it is stopped and answered `isError`.

The limit of a call: the middleware's per-tool map, else the tool's own (`@app.tool(timeout=...)`),
else the default (`--tool-timeout`). At the deadline an async tool is cancelled; a thread-run tool's
caller is answered while its thread runs on (a thread cannot be stopped: it keeps its place in the
pool's limit until the function returns); a `run_in="process"` tool's worker process is killed and
the pool replaced (`killing_on_cancel`). The run of a task is limited like a plain call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio

from .._app.pipeline import Call, CallNext, Middleware
from .._execution.processes import killing_on_cancel
from .._primitives.content import error_result
from .._telemetry import hooks as telemetry_hooks


def _seconds(value: Any, what: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(f"{what} must be a positive number of seconds or None, not {value!r}")
    return float(value)


class Timeouts(Middleware):
    """Stops tool calls that run past their limit: `default` seconds, or `per_tool[name]`, or the tool's own."""

    def __init__(self, default: float | None = None, per_tool: Mapping[str, float] | None = None) -> None:
        self.default = _seconds(default, "default")
        self.per_tool = {name: _seconds(value, f"per_tool[{name!r}]") for name, value in (per_tool or {}).items()}

    def limit_for(self, app: Any, name: str | None) -> float | None:
        """The limit of a call of tool `name` (None: no limit)."""
        if name is None:
            return None
        if name in self.per_tool:
            return self.per_tool[name]
        tool = app.tools.get(name)
        own = getattr(tool, "timeout", None)
        return own if own is not None else self.default

    async def on_call_tool(self, call: Call, call_next: CallNext) -> Any:
        seconds = self.limit_for(call.app, call.name)
        if seconds is None:
            return await call_next(call)
        result: Any = None
        with killing_on_cancel(), anyio.move_on_after(seconds) as scope:
            result = await call_next(call)
        if not scope.cancelled_caught:
            return result
        telemetry_hooks.count("timeout", "tool")
        shown = f"{seconds:g}"
        return error_result(
            f"Tool '{call.name}' timed out: it ran for its limit of {shown} s and was stopped, so it returned no "
            "result. Try again with a smaller request (fewer items, a narrower range), or ask the server's operator "
            "to raise the limit (--tool-timeout, or the tool's timeout option).")
