"""An in-process transport: messages cross as encoded JSON through memory streams (for tests)."""

from __future__ import annotations

from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from .._protocol.jsonrpc import Message, RequestId, encode_message


class MemoryWriter:
    """A MessageWriter that hands each encoded message to the other side's receive stream."""

    def __init__(self, stream: MemoryObjectSendStream[bytes]) -> None:
        self._stream = stream

    async def send(self, message: Message | list[Message], related_to: RequestId | None = None) -> None:
        try:
            await self._stream.send(encode_message(message))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass


def memory_pipe(buffer: float = float("inf")) -> tuple[MemoryObjectSendStream[bytes], MemoryObjectReceiveStream[Any]]:
    """A one-way pipe of encoded frames."""
    return anyio.create_memory_object_stream[bytes](buffer)
