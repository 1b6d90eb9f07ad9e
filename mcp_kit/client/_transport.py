"""What a client transport is: an async context manager that sends messages and delivers decoded ones.

A transport pushes every message it receives onto `incoming`; when the conversation ends it
stores the reason in `closed_error` and closes `incoming`. `protocol_version` is set by the
session after initialize (HTTP transports send it as a header).
"""

from __future__ import annotations

import math
from types import TracebackType

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from .._protocol.jsonrpc import Batch, Decoded, InvalidMessage, Message
from ._errors import ClientError, ConnectionClosed

Incoming = Message | InvalidMessage


class Transport:
    """Base class of the client transports (stdio, Streamable HTTP, legacy HTTP+SSE)."""

    description = "server"

    def __init__(self) -> None:
        self.protocol_version: str | None = None
        self.closed_error: ClientError | None = None
        self._streams: tuple[MemoryObjectSendStream[Incoming], MemoryObjectReceiveStream[Incoming]] | None = None

    def _stream_pair(self) -> tuple[MemoryObjectSendStream[Incoming], MemoryObjectReceiveStream[Incoming]]:
        if self._streams is None:  # made on first use: a transport never entered holds nothing
            self._streams = anyio.create_memory_object_stream[Incoming](math.inf)
        return self._streams

    @property
    def incoming(self) -> MemoryObjectReceiveStream[Incoming]:
        """The messages received, in order; it ends when the conversation does."""
        return self._stream_pair()[1]

    async def send(self, message: Message) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Transport:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        self.finish(None)
        self.release()

    def deliver(self, decoded: Decoded) -> None:
        """Hand a decoded frame (a message, an invalid one, or a batch) to the session."""
        items = decoded.items if isinstance(decoded, Batch) else [decoded]
        for item in items:
            try:
                self._stream_pair()[0].send_nowait(item)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return

    def finish(self, error: ClientError | None) -> None:
        """End the conversation: later sends fail with `error` (or a plain ConnectionClosed)."""
        if self.closed_error is None:
            self.closed_error = error or ConnectionClosed(f"the connection to the {self.description} was closed")
        self._stream_pair()[0].close()  # whoever reads `incoming`, now or later, sees its end

    def release(self) -> None:
        """Free both ends of `incoming`: the conversation is over and nobody reads it any more (end of `__aexit__`)."""
        if self._streams is not None:
            self._streams[0].close()
            self._streams[1].close()

    def check_open(self) -> None:
        """Raise the reason the conversation ended, if it did."""
        if self.closed_error is not None:
            raise self.closed_error

