"""The audit trail: one record per tool call, handed to hooks; a JSON-lines file writer."""

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
class ToolCallRecord:
    """What happened in one tool call."""

    time: str
    session: str
    tool: str
    arguments: Any
    outcome: str
    is_error: bool
    error: str | None
    duration_ms: float

    @classmethod
    def of(cls, session: str, tool: str, arguments: Any, result: dict[str, Any], seconds: float) -> ToolCallRecord:
        is_error = bool(result.get("isError"))
        error = None
        if is_error:
            texts = [b.get("text", "") for b in result.get("content", []) if b.get("type") == "text"]
            error = " ".join(texts)[:MAX_ARGUMENT_CHARS]
        return cls(
            time=datetime.now(UTC).isoformat(timespec="milliseconds"),
            session=session,
            tool=tool,
            arguments=_truncate(arguments),
            outcome="error" if is_error else "ok",
            is_error=is_error,
            error=error,
            duration_ms=round(seconds * 1000, 3),
        )


ToolCallHook = Callable[[ToolCallRecord], None]


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

    def __call__(self, record: ToolCallRecord) -> None:
        line = json.dumps(asdict(record), ensure_ascii=False, default=str) + "\n"
        with self._lock, open(self.path, "a", encoding="utf-8") as file:
            file.write(line)
