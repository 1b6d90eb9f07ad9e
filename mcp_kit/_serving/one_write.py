"""uvicorn's HTTP protocol with each response's head and first body bytes leaving in one socket write.

uvicorn writes a response's status line and headers as soon as the app sends `http.response.start`,
and its body on the next `http.response.body`: two `send` system calls and two TCP segments for a
reply that is ready at once (nearly every MCP reply), where one would do. `one_write_protocol(base)`
is `base` (uvicorn's httptools or h11 protocol) whose transport holds a response head back until
the next write in the same turn of the event loop and sends both together; a head followed by
nothing (a stream whose first event is not ready) leaves at the end of that turn. Every other
write, and everything else the protocol asks of its transport, goes straight through; closing or
aborting first sends (or drops) what is held. Bytes on the wire and their order are unchanged.

Imports nothing from mcp_kit.
"""

from __future__ import annotations

import asyncio
from typing import Any

_HEAD = b"HTTP/1."


class OneWriteTransport:
    """A transport that sends a response head together with the write that follows it (see the module docstring)."""

    __slots__ = ("_transport", "_held", "_loop")

    def __init__(self, transport: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._held: bytes | None = None
        self._loop = loop

    def write(self, data: bytes) -> None:
        held = self._held
        if held is not None:
            self._held = None
            self._transport.write(held + data)
        elif data.startswith(_HEAD) and data.endswith(b"\r\n\r\n") and not data.startswith(b"HTTP/1.1 100 "):
            self._held = bytes(data)
            self._loop.call_soon(self._flush)
        else:
            self._transport.write(data)

    def writelines(self, chunks: Any) -> None:
        self.write(b"".join(chunks))

    def _flush(self) -> None:
        held = self._held
        if held is not None:
            self._held = None
            if not self._transport.is_closing():
                self._transport.write(held)

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def write_eof(self) -> None:
        self._flush()
        self._transport.write_eof()

    def abort(self) -> None:
        self._held = None
        self._transport.abort()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + (len(self._held) if self._held is not None else 0)

    def __getattr__(self, name: str) -> Any:  # is_closing, get_extra_info, pause_reading, set_protocol, ...
        return getattr(self._transport, name)


def one_write_protocol(base: type[asyncio.Protocol]) -> type[asyncio.Protocol]:
    """`base` (a uvicorn HTTP protocol class) whose connections write each ready reply in one piece."""

    class OneWriteProtocol(base):  # type: ignore[valid-type, misc]
        def connection_made(self, transport: Any) -> None:
            super().connection_made(OneWriteTransport(transport, asyncio.get_running_loop()))

    OneWriteProtocol.__name__ = OneWriteProtocol.__qualname__ = f"OneWrite{base.__name__}"
    return OneWriteProtocol
