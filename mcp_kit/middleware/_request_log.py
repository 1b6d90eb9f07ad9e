"""`RequestLog`: one JSON line per request on stderr: what, who, how long, how it ended.

Each line: time, method, the tool / uri / prompt, session, subject (the OAuth caller), duration_ms,
outcome ("ok", "tool_error" for an `isError` result, "error", "cancelled"), the JSON-RPC code and
the error id of a masked failure, and `in_task` for the run of a task. Arguments are never logged
unless asked for, per tool: `arguments={"search": True}` logs them as they are,
`arguments={"login": lambda args: {"user": args.get("user")}}` logs what the function returns; a
`redact(tool, arguments)` function decides for every tool not named there (return None to log none).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, TextIO

import anyio

from .._app.pipeline import Call, CallNext, Middleware
from .._protocol.jsonrpc import JSONRPCError
from ..auth._principal import audit_subject
from ._masking import error_id_in

Redaction = Callable[[dict[str, Any]], Any]


class RequestLog(Middleware):
    """Writes one JSON line per request to `stream` (default: stderr)."""

    def __init__(self, stream: TextIO | None = None, *, arguments: Mapping[str, bool | Redaction] | None = None,
                 redact: Callable[[str, dict[str, Any]], Any] | None = None) -> None:
        self.stream = stream
        self.arguments = dict(arguments or {})
        self.redact = redact

    def _arguments(self, call: Call) -> Any:
        name = call.name
        if name is None or call.method not in ("tools/call", "prompts/get"):
            return None
        rule = self.arguments.get(name)
        if rule is True:
            return call.arguments
        if callable(rule):
            return rule(call.arguments)
        if rule is None and self.redact is not None:
            return self.redact(name, call.arguments)
        return None

    async def on_request(self, call: Call, call_next: CallNext) -> Any:
        started = time.perf_counter()
        entry: dict[str, Any] = {"time": datetime.now(UTC).isoformat(timespec="milliseconds"), "method": call.method}
        if call.method in ("tools/call", "prompts/get") and call.name is not None:
            entry["tool" if call.method == "tools/call" else "prompt"] = call.name
        elif call.uri is not None:
            entry["uri"] = call.uri
        try:
            result = await call_next(call)
        except JSONRPCError as exc:
            self._write(entry, call, started, "error", code=exc.code, error_id=error_id_in(exc.message))
            raise
        except anyio.get_cancelled_exc_class():
            self._write(entry, call, started, "cancelled")
            raise
        except BaseException:
            self._write(entry, call, started, "error")
            raise
        if isinstance(result, dict) and result.get("isError") is True:
            texts = " ".join(b.get("text", "") for b in result.get("content") or () if isinstance(b, dict))
            self._write(entry, call, started, "tool_error", error_id=error_id_in(texts))
        else:
            self._write(entry, call, started, "ok")
        return result

    def _write(self, entry: dict[str, Any], call: Call, started: float, outcome: str, *, code: int | None = None,
               error_id: str | None = None) -> None:
        entry["session"] = call.session_id
        entry["subject"] = audit_subject(call.principal)
        entry["duration_ms"] = round((time.perf_counter() - started) * 1000, 3)
        entry["outcome"] = outcome
        if code is not None:
            entry["code"] = code
        if error_id is not None:
            entry["error_id"] = error_id
        if call.in_task:
            entry["in_task"] = True
        try:
            arguments = self._arguments(call)
        except Exception as exc:  # a redaction function that fails logs no arguments
            arguments = f"<redaction failed: {type(exc).__name__}>"
        if arguments is not None:
            entry["arguments"] = arguments
        stream = self.stream or sys.stderr
        try:
            stream.write(json.dumps(entry, ensure_ascii=False, default=str) + "\n")
            stream.flush()
        except (OSError, ValueError):  # stderr closed: the request is answered all the same
            pass
