"""JSON-RPC 2.0 envelopes: decode one message, encode one message, the standard error codes.

Knows nothing of MCP. A malformed message becomes an error *value* (`InvalidMessage`) that the
caller sends back; decoding never raises.

Must not import: dispatcher, session, server, transports.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Union

from .._errors import MCPKitError

_orjson: Any
try:  # orjson is several times faster than the stdlib codec
    import orjson as _orjson
except ImportError:  # pragma: no cover - exercised only where orjson is absent
    _orjson = None

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

RequestId = Union[str, int]


@dataclass(slots=True)
class Request:
    """A call that expects exactly one response."""

    id: RequestId
    method: str
    params: dict[str, Any] | None = None


@dataclass(slots=True)
class Notification:
    """A one-way message; never answered."""

    method: str
    params: dict[str, Any] | None = None


@dataclass(slots=True)
class Response:
    """A successful answer to a request."""

    id: RequestId
    result: Any


@dataclass(slots=True)
class ErrorResponse:
    """A failed answer to a request (id is None when the request could not be read)."""

    id: RequestId | None
    code: int
    message: str
    data: Any = None


@dataclass(slots=True)
class InvalidMessage:
    """Something arrived that is not a valid message; `error` is what to send back (or None)."""

    error: ErrorResponse | None


Message = Union[Request, Notification, Response, ErrorResponse]


@dataclass(slots=True)
class Batch:
    """A JSON array of messages (JSON-RPC batch); items that failed to parse are `InvalidMessage`."""

    items: list[Message | InvalidMessage]


Decoded = Union[Message, InvalidMessage, Batch]


class EncodeError(MCPKitError, ValueError):
    """A value cannot be written as JSON (a lone surrogate in a string, a key that is not a string, ...)."""


class JSONRPCError(MCPKitError):
    """Raised by handlers to answer a request with a JSON-RPC error object."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


# ---------------------------------------------------------------------------- codec


def loads(data: bytes | str) -> Any:
    """Parse JSON text; raises ValueError on invalid JSON or invalid UTF-8."""
    if _orjson is not None:
        return _orjson.loads(data)
    if isinstance(data, bytes):
        data = data.decode("utf-8")
    return json.loads(data)


def dumps(obj: Any) -> bytes:
    """Serialise to compact UTF-8 JSON (no trailing newline); raises EncodeError naming what cannot be written."""
    if _orjson is not None:
        try:
            return _orjson.dumps(obj)
        except TypeError:
            pass  # e.g. integers beyond 64 bits; the stdlib handles them
    try:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=_default, allow_nan=False).encode()
    except (TypeError, ValueError, RecursionError) as exc:  # UnicodeEncodeError is a ValueError
        raise EncodeError(_unencodable(obj, exc)) from None


def _unencodable(obj: Any, exc: BaseException) -> str:
    """Where in `obj` the first value JSON cannot carry sits, and why (only called when encoding failed).

    The answer is itself always encodable: surrogates and other oddities are shown escaped.
    """
    stack: list[tuple[str, Any]] = [("", obj)]
    for _ in range(100_000):
        if not stack:
            break
        path, value = stack.pop()
        where = path.lstrip(".") or "the value"
        if isinstance(value, str):
            bad = next((c for c in value if "\ud800" <= c <= "\udfff"), None)
            if bad is not None:
                return _printable(f"{where} holds a lone surrogate {bad!r} (not valid Unicode): {_clip(value)}")
        elif isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
            return _printable(f"{where} is {value!r} (JSON has no NaN or infinity)")
        elif isinstance(value, dict):
            for key in value:
                if isinstance(key, str) and any("\ud800" <= c <= "\udfff" for c in key):
                    return _printable(f"{where} has a key holding a lone surrogate (not valid Unicode): {_clip(key)}")
                if not isinstance(key, (str, int, float, bool)) and key is not None:
                    return _printable(f"{where} has a key JSON cannot carry: {key!r}")
            stack.extend((f"{path}.{key}", item) for key, item in reversed(list(value.items())))
        elif isinstance(value, (list, tuple)):
            stack.extend((f"{path}[{i}]", item) for i, item in reversed(list(enumerate(value))))
    return _printable(f"{type(exc).__name__}: {exc}")


def _clip(text: str) -> str:
    shown = repr(text)
    return shown if len(shown) <= 80 else shown[:77] + "..."


def _printable(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _default(obj: Any) -> Any:
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json", by_alias=True, exclude_none=True)
    raise TypeError(f"{type(obj).__name__} is not JSON serialisable")


# ---------------------------------------------------------------------------- decode


def decode_message(data: bytes | str) -> Decoded:
    """Decode one line/body into a message, a batch, or an `InvalidMessage` carrying the error."""
    try:
        obj = loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        return InvalidMessage(ErrorResponse(None, PARSE_ERROR, f"Parse error: {exc}"))
    if isinstance(obj, list):
        if not obj:
            return InvalidMessage(ErrorResponse(None, INVALID_REQUEST, "Invalid Request: empty batch"))
        return Batch([parse_message(item) for item in obj])
    return parse_message(obj)


def parse_message(obj: Any) -> Message | InvalidMessage:
    """Classify an already-parsed JSON value as a JSON-RPC message."""
    if not isinstance(obj, dict):
        return _invalid(None, "a message must be a JSON object")
    raw_id = obj.get("id")
    msg_id = raw_id if valid_id(raw_id) else None
    if obj.get("jsonrpc") != "2.0":
        return _invalid(msg_id, 'the "jsonrpc" member must be exactly "2.0"')
    error = obj.get("error")
    if isinstance(error, dict) and "method" not in obj and "id" in obj and (raw_id is None or valid_id(raw_id)):
        # an error response; id null answers a request that could not be read (never answer it back)
        return ErrorResponse(raw_id, error.get("code", INTERNAL_ERROR), error.get("message", ""), error.get("data"))
    if "id" in obj and not valid_id(raw_id):
        return _invalid(None, 'the "id" member must be a string or an integer')
    method = obj.get("method")
    if method is not None:
        if not isinstance(method, str):
            return _invalid(msg_id, 'the "method" member must be a string')
        params = obj.get("params")
        if params is not None and not isinstance(params, dict):
            return _invalid(msg_id, 'the "params" member must be an object')
        if "id" in obj:
            return Request(raw_id, method, params)  # type: ignore[arg-type]  # checked by valid_id above
        return Notification(method, params)
    if "result" in obj and "id" in obj:
        return Response(raw_id, obj["result"])  # type: ignore[arg-type]
    return _invalid(msg_id, 'a request needs a "method"; a response needs "result" or "error"')


def valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _invalid(msg_id: RequestId | None, why: str) -> InvalidMessage:
    return InvalidMessage(ErrorResponse(msg_id, INVALID_REQUEST, f"Invalid Request: {why}"))


# ---------------------------------------------------------------------------- encode


def to_wire(message: Message) -> dict[str, Any]:
    """The JSON object for a message."""
    if isinstance(message, Response):
        return {"jsonrpc": "2.0", "id": message.id, "result": message.result}
    if isinstance(message, ErrorResponse):
        error: dict[str, Any] = {"code": message.code, "message": message.message}
        if message.data is not None:
            error["data"] = message.data
        return {"jsonrpc": "2.0", "id": message.id, "error": error}
    if isinstance(message, Request):
        out: dict[str, Any] = {"jsonrpc": "2.0", "id": message.id, "method": message.method}
    else:
        out = {"jsonrpc": "2.0", "method": message.method}
    if message.params is not None:
        out["params"] = message.params
    return out


def encode_message(message: Message | list[Message]) -> bytes:
    """Encode a message (or a batch answer) as compact JSON bytes without a newline."""
    if isinstance(message, list):
        return dumps([to_wire(m) for m in message])
    return dumps(to_wire(message))
