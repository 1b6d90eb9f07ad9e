"""The legacy HTTP+SSE client transport (protocol 2024-11-05): GET an event stream, POST to the endpoint it names.

The first event (`endpoint`) gives the URL to POST messages to; every answer and notification
then arrives on the event stream. Used for URLs whose path ends in /sse.
"""

from __future__ import annotations

import logging
from types import TracebackType
from urllib.parse import urljoin

import anyio
import httpx
from anyio.abc import TaskGroup

from .._protocol.jsonrpc import Message, Request, decode_message, encode_message
from ._errors import ClientError, ConnectionClosed
from ._http_common import error_answer, http_client, unreachable
from ._sse_events import iter_events
from ._transport import Transport

logger = logging.getLogger("mcp_kit.client")


class LegacySSETransport(Transport):
    """Talks to a server's /sse endpoint."""

    def __init__(self, url: str, *, headers: dict[str, str] | None = None, timeout: float = 30.0,
                 auth: httpx.Auth | None = None) -> None:
        super().__init__()
        self.url = url
        self.description = f"server at {url}"
        self.endpoint: str | None = None
        self.timeout = timeout
        self._client = http_client(headers, timeout, auth)
        self._ready = anyio.Event()
        self._tg: TaskGroup | None = None

    async def __aenter__(self) -> LegacySSETransport:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(self._listen)
        with anyio.move_on_after(self.timeout):
            await self._ready.wait()
        if self.endpoint is None:
            await self.__aexit__(None, None, None)
            raise self.closed_error or ConnectionClosed(f"{self.url} sent no endpoint event within {self.timeout:g} s")
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        if self._tg is not None:
            self._tg.cancel_scope.cancel()
            await self._tg.__aexit__(None, None, None)
            self._tg = None
        with anyio.CancelScope(shield=True):
            await self._client.aclose()
        self.finish(None)
        self.release()

    async def _listen(self) -> None:
        try:
            async with self._client.stream("GET", self.url, headers={"Accept": "text/event-stream"}) as response:
                if response.status_code != 200:
                    body = (await response.aread())[:300].decode("utf-8", "replace")
                    self.finish(ConnectionClosed(f"GET {self.url} answered HTTP {response.status_code}: {body}"))
                    return
                async for event in iter_events(response.aiter_lines()):
                    if event.event == "endpoint":
                        self.endpoint = urljoin(self.url, event.data.strip())
                        self._ready.set()
                    elif event.event == "message":
                        self.deliver(decode_message(event.data))
            self.finish(ConnectionClosed(f"the server at {self.url} closed the event stream"))
        except httpx.HTTPError as exc:
            self.finish(unreachable(self.url, exc))
        except ClientError as exc:  # e.g. the OAuth flow could not obtain a token
            self.finish(exc)
        finally:
            self._ready.set()

    async def send(self, message: Message) -> None:
        self.check_open()
        assert self.endpoint is not None
        try:
            response = await self._client.post(self.endpoint, content=encode_message(message),
                                               headers={"Content-Type": "application/json"})
        except httpx.HTTPError as exc:
            self.finish(unreachable(self.endpoint, exc))
            self.check_open()
            return
        except ClientError as exc:
            self.finish(exc)
            self.check_open()
            return
        if response.status_code >= 400:
            if isinstance(message, Request):
                self.deliver(error_answer(message.id, response.status_code, response.content))
            else:
                logger.warning("the server refused a message: HTTP %d %s", response.status_code, response.text[:200])
