"""`--log-format json`: one JSON object per line on stderr, joining traces.

Each line: `time` (ISO 8601, UTC), `level`, `logger`, `message`, and while a request is being served
`trace_id`, `span_id` (its span's; without tracing, the client's from `_meta`), `session_id` (handshake
era) and `subject` (the OAuth caller); `exception` holds a traceback. The per-request log lines of
`--log-requests` are a separate stream of their own and are not formatted here.

Imports the hooks only; OpenTelemetry when it is installed, to read the current span.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

from . import hooks

LOG_FORMATS = ("text", "json")


class JsonLogFormatter(logging.Formatter):
    """Formats a log record as one line of JSON with the trace, span, session and subject of its request."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        scope = hooks.REQUEST.get()
        trace_id, span_id = _current_ids()
        if scope is not None:
            entry["trace_id"] = trace_id or scope.trace_id
            entry["span_id"] = span_id or scope.span_id
            entry["session_id"] = scope.session_id
            entry["subject"] = scope.subject
        elif trace_id is not None:
            entry["trace_id"], entry["span_id"] = trace_id, span_id
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps({key: value for key, value in entry.items() if value is not None}, ensure_ascii=False,
                          default=str)


def _current_ids() -> tuple[str | None, str | None]:
    probe = hooks.active
    if probe is None or not getattr(probe, "tracing", False):  # no spans of ours: nothing current to read
        return None, None
    from opentelemetry import trace

    span_context = trace.get_current_span().get_span_context()
    if not span_context.is_valid:
        return None, None
    return format(span_context.trace_id, "032x"), format(span_context.span_id, "016x")
