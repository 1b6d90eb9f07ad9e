"""The audit trail: one record per tool call and per resource read, handed to hooks; a JSON-lines file writer.

`AuditTrail` is the middleware that makes the records (`Application.add_audit_hook` installs it
on the request pipeline, `pipeline.py`). A tool call is recorded where the tool runs: a call that
goes to the task runner is recorded by its run inside the task, not by the request that started it.
It sits outside error masking, so a masked failure is recorded with the error id the client got.

Every record has the same fields; `primitive` says what was used ("tool" or "resource"), `tool`
names the tool (None for a read) and `uri` the resource read (None for a call). Reads are
recorded whether they succeed or fail (a refused read is an `error` with the reason). `subject`
is who called, from the OAuth access token (its `sub`, or `client:<client_id>` for a token
without one); None without OAuth. Records never hold the token itself.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from .._protocol.jsonrpc import JSONRPCError
from ..auth._principal import audit_subject
from ..tasks._wire import asks_for_a_task
from .pipeline import Call, CallNext, Middleware, ToolCrashed

MAX_ARGUMENT_CHARS = 2000


@dataclass(slots=True)
class AuditRecord:
    """What happened in one tool call or resource read."""

    time: str
    session: str
    primitive: str  # "tool" or "resource"
    tool: str | None
    uri: str | None
    arguments: Any
    outcome: str  # "ok" or "error"
    is_error: bool
    error: str | None
    duration_ms: float
    subject: str | None = None  # the OAuth caller (token `sub`, or client:<client_id>); None without OAuth

    @classmethod
    def of(cls, session: str, tool: str, arguments: Any, result: dict[str, Any], seconds: float,
           subject: str | None = None) -> AuditRecord:
        """A tool call and its result."""
        is_error = bool(result.get("isError"))
        error = None
        if is_error:
            texts = [b.get("text", "") for b in result.get("content", []) if b.get("type") == "text"]
            error = " ".join(texts)[:MAX_ARGUMENT_CHARS]
        return cls(
            time=_now(),
            session=session,
            primitive="tool",
            tool=tool,
            uri=None,
            arguments=_truncate(arguments),
            outcome="error" if is_error else "ok",
            is_error=is_error,
            error=error,
            duration_ms=round(seconds * 1000, 3),
            subject=subject,
        )

    @classmethod
    def of_read(cls, session: str, uri: str, error: str | None, seconds: float,
                subject: str | None = None) -> AuditRecord:
        """A resource read; `error` is why it failed (None when it succeeded)."""
        return cls(
            time=_now(),
            session=session,
            primitive="resource",
            tool=None,
            uri=_truncate(uri),
            arguments=None,
            outcome="error" if error is not None else "ok",
            is_error=error is not None,
            error=error[:MAX_ARGUMENT_CHARS] if error is not None else None,
            duration_ms=round(seconds * 1000, 3),
            subject=subject,
        )


ToolCallRecord = AuditRecord  # the earlier name, from when only tool calls were recorded
AuditHook = Callable[[AuditRecord], None]
ToolCallHook = AuditHook


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _truncate(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_ARGUMENT_CHARS:
        return value[:MAX_ARGUMENT_CHARS] + f"... ({len(value)} chars)"
    if isinstance(value, dict):
        return {k: _truncate(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_truncate(v) for v in value]
    return value


class JsonLinesAuditLog:
    """Appends each record as one JSON line; safe to call from several threads."""

    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(path)
        self._lock = threading.Lock()

    def __call__(self, record: AuditRecord) -> None:
        line = json.dumps(asdict(record), ensure_ascii=False, default=str) + "\n"
        # a lone surrogate (a file name that is not UTF-8) is written as its JSON escape: nothing is lost
        with self._lock, open(self.path, "a", encoding="utf-8", errors="backslashreplace") as file:
            file.write(line)


class AuditTrail(Middleware):
    """Records every tool call and resource read (allowed or refused) to the application's audit hooks."""

    def __init__(self, app: Any) -> None:
        self.app = app  # the Application whose hooks get the records

    async def on_call_tool(self, call: Call, call_next: CallNext) -> Any:
        name = call.name
        tool = self.app.tools.get(name) if name is not None else None
        if tool is None:  # unknown: refused before any tool ran (not recorded)
            return await call_next(call)
        if not call.in_task and tool.task_support != "forbidden" and asks_for_a_task(
                call.params, call.protocol_version, call.ctx.channel.client_capabilities):
            return await call_next(call)  # the run inside the task records it
        arguments = call.params.get("arguments")
        started = time.perf_counter()
        try:
            result = await call_next(call)
        except ToolCrashed as crashed:
            self.app.record_tool_call(call.session_id, tool.name, arguments, crashed.result,
                                      time.perf_counter() - started, audit_subject(call.principal))
            raise
        if isinstance(result, dict) and ("content" in result or "isError" in result):
            self.app.record_tool_call(call.session_id, tool.name, arguments, result, time.perf_counter() - started,
                                      audit_subject(call.principal))
        return result

    async def on_read_resource(self, call: Call, call_next: CallNext) -> Any:
        uri = call.uri
        if uri is None or self.app.extension_reads(uri):  # an extension answers it (skills: skill://)
            return await call_next(call)
        started = time.perf_counter()
        subject = audit_subject(call.principal)
        try:
            result = await call_next(call)
        except JSONRPCError as exc:  # refused: not found, outside what the server shows, invalid variables, scopes
            self.app.record_resource_read(call.session_id, uri, exc.message, time.perf_counter() - started, subject)
            raise
        except Exception as exc:
            self.app.record_resource_read(call.session_id, uri, f"{type(exc).__name__}: {exc}",
                                          time.perf_counter() - started, subject)
            raise
        self.app.record_resource_read(call.session_id, uri, None, time.perf_counter() - started, subject)
        return result
