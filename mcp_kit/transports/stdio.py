"""stdio: newline-delimited UTF-8 JSON-RPC on stdin/stdout.

Efficient by design: stdin and stdout are non-blocking pipes on the event loop (no worker
thread per read or write), and the messages ready in one loop iteration leave in one write.
While serving, file descriptor 1 is pointed at stderr, so a stray `print()` (or a child
process) cannot corrupt the protocol stream; the protocol keeps its own duplicate of stdout.

Must not import: session, server (it moves frames; the caller supplies what to do with them).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import stat
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio

from ..jsonrpc import PARSE_ERROR, ErrorResponse, Message, RequestId, encode_message

logger = logging.getLogger("mcp_kit.stdio")

READ_CHUNK = 1 << 16
MAX_LINE = 64 << 20  # a single message may be up to 64 MiB


class _Oversized(bytes):
    """The type of OVERSIZED: a marker no real line can be."""


OVERSIZED = _Oversized()  # yielded by read_lines in place of a line that was too long (and dropped)


class LineReader:
    """Splits a byte stream into lines without rescanning what was already searched.

    A line longer than the limit is dropped (memory stays bounded) and reported once as OVERSIZED.
    """

    def __init__(self, max_line: int | None = None) -> None:
        self._buffer = bytearray()
        self._scanned = 0
        self._max_line = max_line or MAX_LINE
        self._skipping = False  # inside a line already over the limit: drop up to its newline

    def feed(self, chunk: bytes) -> list[bytes]:
        buffer = self._buffer
        buffer += chunk
        lines: list[bytes] = []
        start = 0
        search_from = self._scanned
        while True:
            end = buffer.find(b"\n", search_from)
            if end < 0:
                break
            if self._skipping or end - start > self._max_line:
                self._skipping = False
                lines.append(OVERSIZED)
            else:
                line = bytes(buffer[start:end])
                if line.endswith(b"\r"):
                    line = line[:-1]
                if line.strip():
                    lines.append(line)
            start = search_from = end + 1
        if start:
            del buffer[:start]
        if len(buffer) > self._max_line:
            self._skipping = True
            buffer.clear()
        self._scanned = len(buffer)
        return lines

    def rest(self) -> bytes | None:
        """A last line without a newline at end of input."""
        if self._skipping:
            self._skipping = False
            return OVERSIZED
        line = bytes(self._buffer).strip()
        self._buffer.clear()
        return line or None


class StdioWriter:
    """Writes messages as lines; everything sent in one loop iteration leaves in one write."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._pending: list[bytes] = []
        self._scheduled = False
        self._transport: asyncio.WriteTransport | None = None
        self._file: Any = None
        self._drained = asyncio.Event()
        self._drained.set()

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        mode = os.fstat(self._fd).st_mode
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode):
            self._file = os.fdopen(self._fd, "wb", buffering=0, closefd=False)
            writer = self

            class _Protocol(asyncio.Protocol):
                def pause_writing(self) -> None:
                    writer._drained.clear()

                def resume_writing(self) -> None:
                    writer._drained.set()

                def connection_lost(self, exc: Exception | None) -> None:
                    writer._drained.set()

            transport, _ = await loop.connect_write_pipe(_Protocol, self._file)
            self._transport = transport
            transport.set_write_buffer_limits(high=4 << 20)

    async def send(self, message: Message | list[Message], related_to: RequestId | None = None) -> None:
        self._pending.append(encode_message(message) + b"\n")
        if not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self.flush)
        if not self._drained.is_set():
            await self._drained.wait()

    def flush(self) -> None:
        self._scheduled = False
        if not self._pending:
            return
        data = b"".join(self._pending) if len(self._pending) > 1 else self._pending[0]
        self._pending.clear()
        if self._transport is not None:
            if not self._transport.is_closing():
                self._transport.write(data)
        else:
            _write_all(self._fd, data)

    async def aclose(self) -> None:
        self.flush()
        if self._transport is not None:
            with anyio.move_on_after(5):
                while self._transport.get_write_buffer_size() and not self._transport.is_closing():
                    await anyio.sleep(0.005)
            self._transport.close()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


async def read_lines(fd: int) -> AsyncIterator[bytes]:
    """Yield complete lines from `fd` without a worker thread when it is a pipe, socket or tty."""
    reader = LineReader()
    mode = os.fstat(fd).st_mode
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode):
        loop = asyncio.get_running_loop()
        stream = asyncio.StreamReader(limit=MAX_LINE)
        pipe = os.fdopen(fd, "rb", buffering=0, closefd=False)
        transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream), pipe)
        try:
            while True:
                chunk = await stream.read(READ_CHUNK)
                if not chunk:
                    break
                for line in reader.feed(chunk):
                    yield line
        finally:
            transport.close()
    else:  # a regular file: reads never block for long
        while True:
            chunk = await anyio.to_thread.run_sync(os.read, fd, READ_CHUNK)
            if not chunk:
                break
            for line in reader.feed(chunk):
                yield line
    last = reader.rest()
    if last:
        yield last


@contextlib.contextmanager
def protocol_stdout() -> Any:
    """Keep a private duplicate of stdout for the protocol and point fd 1 (and sys.stdout) at stderr."""
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    saved_fd = os.dup(1)
    os.dup2(2, 1)
    saved_stdout = sys.stdout
    sys.stdout = sys.stderr
    try:
        yield protocol_fd
    finally:
        sys.stdout = saved_stdout
        os.dup2(saved_fd, 1)
        os.close(saved_fd)
        with contextlib.suppress(OSError):
            os.close(protocol_fd)


FrameHandler = Callable[[bytes], Awaitable[None]]


async def serve_lines(
    on_frame: FrameHandler,
    writer: StdioWriter,
    *,
    stdin_fd: int = 0,
    in_flight: Callable[[], int] = lambda: 0,
    on_close: Callable[[], None] = lambda: None,
    grace: float = 2.0,
) -> None:
    """Read lines until EOF or SIGTERM/SIGINT; then give in-flight work `grace` seconds and stop."""
    async with anyio.create_task_group() as tg:

        async def watch_signals() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                async for signum in signals:
                    logger.info("received %s, shutting down", signal.Signals(signum).name)
                    on_close()
                    tg.cancel_scope.cancel()
                    return

        tg.start_soon(watch_signals)
        async for line in read_lines(stdin_fd):
            if line is OVERSIZED:
                await writer.send(ErrorResponse(None, PARSE_ERROR, f"Parse error: a message over {MAX_LINE} bytes was dropped"))
                continue
            await on_frame(line)
        with anyio.move_on_after(grace):
            while in_flight():
                await anyio.sleep(0.01)
        on_close()
        tg.cancel_scope.cancel()
