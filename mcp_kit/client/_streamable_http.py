"""The Streamable HTTP client transport: POST each message; answers come back as JSON or as an SSE stream.

The session id the server assigns at initialize is sent on every later request, and so is the
negotiated protocol version. After `notifications/initialized` a GET stream is opened for the
server's own messages (resource updates, log messages); a server that does not offer one (405)
is fine. Leaving sends DELETE so the server can drop the session at once.
"""

from __future__ import annotations

import base64
import logging
from types import TracebackType
from typing import Any

import anyio
import httpx
from anyio.abc import TaskGroup

from .._protocol.jsonrpc import (
    INTERNAL_ERROR,
    ErrorResponse,
    Message,
    Notification,
    Request,
    Response,
    decode_message,
    encode_message,
)
from .._protocol.versions import PROTOCOL_VERSION_KEY, carries_envelope, is_stateless
from ._errors import ClientError, ConnectionClosed
from ._http_common import error_answer, http_client, is_jsonrpc_error, unreachable
from ._sse_events import iter_events
from ._transport import Transport

logger = logging.getLogger("mcp_kit.client")

ACCEPT_BOTH = "application/json, text/event-stream"
NAMED_BY = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}  # the Mcp-Name header's source


def header_value(text: str) -> str:
    """A header value as 2026-07-28 sends it: literal when printable ASCII, else `=?base64?...?=`."""
    if text.isascii() and text.isprintable() and text == text.strip():
        return text
    return f"=?base64?{base64.b64encode(text.encode()).decode()}?="


def stateless_headers(request: Request) -> dict[str, str]:
    """The headers of a 2026-07-28 request: its version, method and (for named methods) name; no session."""
    params = request.params or {}
    headers = {"Accept": ACCEPT_BOTH, "MCP-Protocol-Version": str(params["_meta"][PROTOCOL_VERSION_KEY]),
               "Mcp-Method": request.method}
    name = params.get(NAMED_BY.get(request.method, ""))
    if isinstance(name, str):
        headers["Mcp-Name"] = header_value(name)
    return headers


class StreamableHTTPTransport(Transport):
    """Talks to one MCP endpoint URL (e.g. http://127.0.0.1:8000/mcp)."""

    def __init__(self, url: str, *, headers: dict[str, str] | None = None, timeout: float = 30.0,
                 auth: httpx.Auth | None = None) -> None:
        super().__init__()
        self.url = url
        self.description = f"server at {url}"
        self.session_id: str | None = None
        self._client = http_client(headers, timeout, auth)
        self._tg: TaskGroup | None = None
        self._posts: dict[Any, anyio.CancelScope] = {}  # 2026-07-28 requests in flight (cancelled by closing)

    async def __aenter__(self) -> StreamableHTTPTransport:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        with anyio.CancelScope(shield=True):
            if self.session_id is not None and self.closed_error is None:
                with anyio.move_on_after(2):
                    try:
                        await self._client.delete(self.url, headers=self._headers())
                    except (httpx.HTTPError, ClientError):
                        pass
        if self._tg is not None:
            self._tg.cancel_scope.cancel()
            await self._tg.__aexit__(None, None, None)
        with anyio.CancelScope(shield=True):
            await self._client.aclose()
        self.finish(None)
        self.release()

    def _headers(self, accept: str = ACCEPT_BOTH) -> dict[str, str]:
        headers = {"Accept": accept}
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version is not None:
            headers["MCP-Protocol-Version"] = self.protocol_version
        return headers

    # ------------------------------------------------------------------ sending

    async def send(self, message: Message) -> None:
        self.check_open()
        assert self._tg is not None
        if isinstance(message, Request):
            self._tg.start_soon(self._post, message)  # answers may take long; the caller waits on the session
            return
        if is_stateless(self.protocol_version):  # 2026-07-28 HTTP has no client notifications: closing cancels
            if isinstance(message, Notification) and message.method == "notifications/cancelled":
                scope = self._posts.get((message.params or {}).get("requestId"))
                if scope is not None:
                    scope.cancel()
            return
        await self._post(message)
        self.check_open()
        if isinstance(message, Notification) and message.method == "notifications/initialized":
            self._tg.start_soon(self._listen)

    async def _post(self, message: Message) -> None:
        if isinstance(message, Request) and carries_envelope(message.params):
            with anyio.CancelScope() as scope:
                self._posts[message.id] = scope
                try:
                    await self._post_with(message, {**stateless_headers(message), "Content-Type": "application/json"})
                finally:
                    self._posts.pop(message.id, None)
            return
        await self._post_with(message, {**self._headers(), "Content-Type": "application/json"})

    async def _post_with(self, message: Message, headers: dict[str, str]) -> None:
        request = self._client.build_request("POST", self.url, content=encode_message(message), headers=headers)
        try:
            response = await self._client.send(request, stream=True)
        except httpx.HTTPError as exc:
            self.finish(unreachable(self.url, exc))
            return
        except ClientError as exc:  # e.g. the OAuth flow could not obtain a token
            self.finish(exc)
            return
        try:
            await self._handle_response(message, response)
        except httpx.HTTPError as exc:
            if isinstance(message, Request):
                self.deliver(ErrorResponse(message.id, INTERNAL_ERROR, f"the HTTP response broke off: {exc}"))
        finally:
            await response.aclose()

    async def _handle_response(self, message: Message, response: httpx.Response) -> None:
        session_id = response.headers.get("mcp-session-id")
        if session_id and self.session_id is None:
            self.session_id = session_id
        request_id = message.id if isinstance(message, Request) else None
        if response.status_code >= 400:
            body = await response.aread()
            answer = error_answer(request_id, response.status_code, body) if request_id is not None else None
            if response.status_code == 404 and self.session_id is not None and request_id is None:
                self.finish(ConnectionClosed(f"the server at {self.url} ended the session (HTTP 404)"))
            elif isinstance(message, Request) and message.method == "initialize":
                assert answer is not None  # no session without a handshake: a connection failure, not an answer
                hint = "" if is_jsonrpc_error(body) else ("; is this the MCP endpoint? (mcp_kit servers answer "
                                                          "at /mcp, legacy clients at /sse)")
                self.finish(ConnectionClosed(f"{self.url} refused initialize: {answer.message}{hint}"))
            elif answer is not None:
                self.deliver(answer)
            else:
                logger.warning("the server refused a %s: HTTP %d %s", getattr(message, "method", "message"),
                               response.status_code, body[:200].decode("utf-8", "replace"))
            return
        content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type == "text/event-stream":
            answered = await self._read_events(response, request_id)
            if request_id is not None and not answered:
                self.deliver(
                    ErrorResponse(request_id, INTERNAL_ERROR, "the server closed the response stream before answering")
                )
        elif content_type == "application/json":
            body = await response.aread()
            if body.strip():
                self.deliver(decode_message(body))
        elif request_id is not None:
            self.deliver(
                ErrorResponse(
                    request_id,
                    INTERNAL_ERROR,
                    f"unexpected HTTP response: {response.status_code} {content_type or 'no content type'}",
                )
            )

    async def _read_events(self, response: httpx.Response, request_id: Any) -> bool:
        """Deliver the messages of an SSE body; True once the answer to `request_id` went by."""
        answered = False
        async for event in iter_events(response.aiter_lines()):
            if event.event != "message":
                continue
            decoded = decode_message(event.data)
            if isinstance(decoded, (Response, ErrorResponse)) and decoded.id == request_id:
                answered = True
            self.deliver(decoded)
        return answered

    # ------------------------------------------------------------------ the server's own stream

    async def _listen(self) -> None:
        """Read the GET stream (server-initiated messages) until it ends; absent streams are fine."""
        try:
            async with self._client.stream("GET", self.url, headers=self._headers("text/event-stream")) as response:
                if response.status_code != 200:
                    logger.debug("no server stream: GET answered %d", response.status_code)
                    return
                await self._read_events(response, None)
        except (httpx.HTTPError, ClientError) as exc:
            logger.debug("the server stream ended: %s", exc)
