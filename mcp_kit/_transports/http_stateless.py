"""Streamable HTTP in the 2026-07-28 (stateless) shape, on the same `/mcp` endpoint.

Chosen by the `MCP-Protocol-Version` header (or by a body that carries the stateless envelope:
the endpoint decides, and hands over the body it decoded). POST only; each request stands alone
on a short-lived connection (a session id, if sent, is ignored). The `Mcp-Method` / `Mcp-Name` /
`Mcp-Param-*` headers must agree with the body (-32020, HTTP 400). The reply is JSON when the
answer is the first thing ready, an SSE stream when notifications come first (progress,
`subscriptions/listen`). A client that disconnects, before the first event or while its stream
is open, cancels the request; whatever the request held (its connection, its tasks) is released
when its HTTP exchange ends, however it ends. Requests in flight count against `max_sessions`
(503 beyond). A request's connection lasts one exchange, so the client's address names the caller
for per-caller limits (recorded by the endpoint, `callers.record_client_address`). An answer that is a backend outage
(-32603 with `data.retryAfter`: Redis down) goes out as 503 with `Retry-After`.

Must not import: session, server, or anything MCP but the version and error facts.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from typing import Any

import anyio
import anyio.lowlevel
from starlette.responses import JSONResponse
from starlette.responses import Response as HTTPResponse

from .._protocol.errors import HEADER_MISMATCH, MISSING_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION
from .._protocol.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    Batch,
    Decoded,
    ErrorResponse,
    InvalidMessage,
    Notification,
    Request,
    Response,
    decode_message,
)
from .._protocol.versions import PROTOCOL_VERSION_KEY, STATELESS_VERSIONS, is_stateless
from .event_streams import EventStream
from .http_admission import Admit, rate_refusal
from .http_common import VERSION_HEADER, HTTPRequestLike, is_json
from .http_responses import Finally, followed_stream, too_busy
from .http_scopes import RequiredScopes, caller, scope_refusal
from .http_sessions import SessionTable
from .http_writer import StreamableWriter

NAMED_BY = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri",
            "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}  # SEP-2243, SEP-2663
_BASE64_WRAPPED = re.compile(r"^=\?base64\?(.*)\?=$")
_STATUS = {METHOD_NOT_FOUND: 404, INVALID_PARAMS: 400, INVALID_REQUEST: 400, HEADER_MISMATCH: 400,
           MISSING_CLIENT_CAPABILITY: 400, UNSUPPORTED_PROTOCOL_VERSION: 400}

ParamHeaders = Callable[[str], dict[str, str]]  # tool name -> {argument: header suffix}


def _rpc_error(request_id: Any, code: int, message: str, data: Any = None, status: int | None = None) -> HTTPResponse:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return JSONResponse(
        {"jsonrpc": "2.0", "id": request_id, "error": error}, status_code=status or _STATUS.get(code, 200)
    )


def decode_param_header(value: str) -> str | None:
    """An `Mcp-Param-*` value: literal, or `=?base64?...?=` (None when that wrapper is malformed)."""
    match = _BASE64_WRAPPED.match(value)
    if not match:
        return value
    try:
        return base64.b64decode(match.group(1), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None


def check_headers(request: HTTPRequestLike, message: Request, param_headers: ParamHeaders | None) -> str | None:
    """Why the headers disagree with the body, or None when they agree."""
    method_header = request.headers.get("mcp-method")
    if method_header is None:
        return "the Mcp-Method header is required"
    if method_header.strip() != message.method:
        return f"Mcp-Method header {method_header!r} does not match the body's method {message.method!r}"
    params = message.params or {}
    meta = params.get("_meta")
    meta_version = (
        meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None
    )  # a bad _meta is the session's -32602
    header_version = request.headers.get(VERSION_HEADER)
    if header_version is not None and meta_version is not None and header_version != meta_version:
        return f"MCP-Protocol-Version header {header_version!r} does not match _meta protocolVersion {meta_version!r}"
    named_by = NAMED_BY.get(message.method)
    if named_by is not None:
        name_header = request.headers.get("mcp-name")
        if name_header is None:
            return f"the Mcp-Name header is required for {message.method}"
        if name_header.strip() != str(params.get(named_by, "")):
            return (
                f"Mcp-Name header {name_header.strip()!r} does not match the body's {named_by} {params.get(named_by)!r}"
            )
    if message.method == "tools/call" and param_headers is not None:
        arguments = params.get("arguments")
        if not isinstance(arguments, dict):
            arguments = {}
        for argument, suffix in param_headers(str(params.get("name", ""))).items():
            if argument not in arguments:
                continue
            raw = request.headers.get(f"mcp-param-{suffix.lower()}")
            if raw is None:
                return f"the Mcp-Param-{suffix} header is required (it mirrors argument '{argument}')"
            decoded = decode_param_header(raw.strip())
            if decoded is None:
                return f"the Mcp-Param-{suffix} header has a malformed base64 value"
            if decoded != str(arguments[argument]):
                return f"the Mcp-Param-{suffix} header does not match argument '{argument}'"
    return None


class StatelessHTTP:
    """POST on `/mcp` in the 2026-07-28 shape: one request, one short-lived connection."""

    def __init__(self, table: SessionTable, param_headers: ParamHeaders | None,
                 required_scopes: RequiredScopes | None = None, admit: Admit | None = None) -> None:
        self.table = table
        self.param_headers = param_headers
        self.required_scopes = required_scopes  # OAuth scopes per tool/resource/prompt (http_scopes.py)
        self.admit = admit  # rate limits counted before dispatch (http_admission.py)

    async def serve(self, request: HTTPRequestLike, decoded: Decoded | None = None) -> HTTPResponse:
        """Serve one stateless-era HTTP request; `decoded` is its body when the endpoint already decoded it."""
        if request.method != "POST":
            return HTTPResponse(status_code=405, headers={"Allow": "POST"})
        if not is_json(request):
            return _rpc_error(
                None, INVALID_REQUEST, "Unsupported Media Type: Content-Type must be application/json", status=415
            )
        message = decoded if decoded is not None else decode_message(await request.body())  # too large/slow: 413 / 408
        if isinstance(message, InvalidMessage):
            assert message.error is not None
            return _rpc_error(message.error.id, message.error.code, message.error.message, status=400)
        if isinstance(message, Batch):
            return _rpc_error(None, INVALID_REQUEST, "Invalid Request: protocol 2026-07-28 has no batches", status=400)
        if isinstance(message, (Notification, Response, ErrorResponse)):
            return HTTPResponse(status_code=202)
        request.state.rpc_method = message.method
        mismatch = check_headers(request, message, self.param_headers)
        if mismatch:
            return _rpc_error(message.id, HEADER_MISMATCH, f"Header mismatch: {mismatch}")
        header_version = request.headers.get(VERSION_HEADER)
        if header_version is not None and not is_stateless(header_version):
            return _rpc_error(
                message.id,
                UNSUPPORTED_PROTOCOL_VERSION,
                f"Unsupported protocol version {header_version!r}",
                {"supported": list(STATELESS_VERSIONS), "requested": header_version},
            )
        principal = caller(request)
        if principal is not None:
            refused = scope_refusal(request, principal, message, self.required_scopes)
            if refused is not None:
                return refused
        if self.admit is not None:
            limited = await rate_refusal(self.admit, message, principal, None, STATELESS_VERSIONS[0])
            if limited is not None:
                return limited
        return await self._run(request, message, principal)

    async def _run(self, http_request: HTTPRequestLike, message: Request, principal: object | None = None) -> Any:
        table = self.table
        if table.full():
            return too_busy()
        writer = StreamableWriter(answer_cancelled=False)  # a cancelled stateless request gets no answer
        served = table.open(writer)
        table.stateless.add(served)
        stream = writer.streams.open()
        writer.bind([message], stream)

        def finish() -> None:
            """Release what the request holds (once): stop its work if it is still running, close its connection."""
            if served not in table.stateless:
                return
            table.stateless.discard(served)
            if not stream.finished:
                served.dispatcher.cancel(message.id)
            served.dispatcher.close()

        try:
            await served.dispatcher.feed(message, principal=principal)  # the endpoint recorded the client's address
            if not await _first_event(stream, http_request):
                finish()  # the client left before anything was ready: nobody can receive the answer
                return HTTPResponse(status_code=204)
        except BaseException:
            finish()
            raise
        if stream.finished and len(stream.events) == 1:  # the answer came first: a plain JSON reply
            finish()
            return _json_answer(stream.events[0].data)
        # the client closing the stream ends the exchange: the request is cancelled
        return Finally(followed_stream(stream), finish)


async def _first_event(stream: EventStream, http_request: HTTPRequestLike) -> bool:
    """Wait until the stream has an event (True) or the client disconnected first (False)."""
    await anyio.lowlevel.checkpoint()  # a quick handler has answered by now: no watcher needed
    if stream.events or stream.finished:
        return True
    disconnected = False
    async with anyio.create_task_group() as tg:

        async def watch_disconnect() -> None:
            nonlocal disconnected
            while (await http_request.receive())["type"] != "http.disconnect":
                pass
            disconnected = True
            tg.cancel_scope.cancel()

        tg.start_soon(watch_disconnect)
        await stream.wait_for_event()
        tg.cancel_scope.cancel()
    return not disconnected


def _json_answer(data: bytes) -> HTTPResponse:
    answer = decode_message(data)
    if not isinstance(answer, ErrorResponse):
        return HTTPResponse(data, status_code=200, media_type="application/json")
    retry_after = (
        answer.data.get("retryAfter") if answer.code == INTERNAL_ERROR and isinstance(answer.data, dict) else None
    )
    if isinstance(retry_after, int) and not isinstance(retry_after, bool) and retry_after > 0:  # a backend outage
        return HTTPResponse(data, status_code=503, media_type="application/json",
                            headers={"Retry-After": str(retry_after)})
    return HTTPResponse(data, status_code=_STATUS.get(answer.code, 200), media_type="application/json")
