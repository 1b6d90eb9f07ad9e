"""The audit trail: one record per tool call and per resource read, handed to hooks; a JSON-lines file writer.

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
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

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
