"""What a client transport is: an async context manager that sends messages and delivers decoded ones.

A transport pushes every message it receives onto `incoming`; when the conversation ends it
stores the reason in `closed_error` and closes `incoming`. `protocol_version` is set by the
session after initialize (HTTP transports send it as a header).
"""

from __future__ import annotations

import math
from types import TracebackType

import anyio

from ..jsonrpc import Batch, Decoded, InvalidMessage, Message
from .errors import ClientError, ConnectionClosed

Incoming = Message | InvalidMessage


class Transport:
    """Base class of the client transports (stdio, Streamable HTTP, legacy HTTP+SSE)."""

    description = "server"

    def __init__(self) -> None:
        self.protocol_version: str | None = None
        self.closed_error: ClientError | None = None
        self._push, self.incoming = anyio.create_memory_object_stream[Incoming](math.inf)

    async def send(self, message: Message) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Transport:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        self.finish(None)

    def deliver(self, decoded: Decoded) -> None:
        """Hand a decoded frame (a message, an invalid one, or a batch) to the session."""
        items = decoded.items if isinstance(decoded, Batch) else [decoded]
        for item in items:
            try:
                self._push.send_nowait(item)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return

    def finish(self, error: ClientError | None) -> None:
        """End the conversation: later sends fail with `error` (or a plain ConnectionClosed)."""
        if self.closed_error is None:
            self.closed_error = error or ConnectionClosed(f"the connection to the {self.description} was closed")
        self._push.close()

    def check_open(self) -> None:
        """Raise the reason the conversation ended, if it did."""
        if self.closed_error is not None:
            raise self.closed_error

