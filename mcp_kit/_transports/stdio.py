"""stdio: newline-delimited UTF-8 JSON-RPC on stdin/stdout.

Efficient by design: where the OS can poll them (pipes, sockets, terminals on Linux and macOS),
stdin and stdout are non-blocking handles on the event loop, with no worker thread per read or
write. Where it cannot (Windows, `/dev/null`, regular files, unpollable devices), one daemon thread
per direction serves them instead (`stdio_threads`); `stdio_mode.choose_mode` decides, per handle,
and `MCP_KIT_STDIO_MODE=loop|threads` forces it. Either way the messages ready in one loop
iteration leave in one write.

While serving, file descriptor 1 is pointed at stderr, so a stray `print()` (or a child process)
cannot corrupt the protocol stream; the protocol keeps its own duplicate of stdout.

Backpressure: reading waits while the frame handler does (the dispatcher's `feed_frame` waits while
the connection has its maximum of requests in flight), and little is read ahead of it (on the loop,
at most two chunks buffered before the pipe stops being read; in threads, `stdio_threads.AHEAD`
chunks): what a peer pipelines beyond that stays in the pipe, and the peer's writes block.

Shutdown is the same on every system: end of input or a stop signal (`stop_signals`) ends reading,
requests in flight get `grace` seconds to be answered, then the connection closes and what was
written is flushed (waited on, with a deadline).

Must not import: session, server (it moves frames; the caller supplies what to do with them).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio

from .._protocol.jsonrpc import PARSE_ERROR, ErrorResponse, Message, RequestId, encode_message
from .stdio_mode import StdioMode, choose_mode
from .stdio_threads import ThreadedReader, ThreadedWriter, write_all
from .stop_signals import watch_stop_signals

logger = logging.getLogger("mcp_kit.stdio")

READ_CHUNK = 1 << 16
MAX_LINE = 64 << 20  # a single message may be up to 64 MiB
WRITE_HIGH_WATER = 4 << 20  # senders wait while more than this is buffered for stdout
CLOSE_TIMEOUT = 5.0  # how long closing waits for buffered output to reach the peer
SHUTDOWN_GRACE = 2.0  # seconds in-flight requests get to finish after end of input or a stop signal


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
    """Writes messages as lines; everything sent in one loop iteration leaves in one write.

    `mode` is `loop`, `threads` or None (then `choose_mode` decides, honouring MCP_KIT_STDIO_MODE).
    """

    def __init__(self, fd: int, mode: str | None = None) -> None:
        self._fd = fd
        self._requested = mode
        self.mode: StdioMode | None = None  # set by start()
        self._pending: list[bytes] = []
        self._scheduled = False
        self._transport: asyncio.WriteTransport | None = None
        self._threaded: ThreadedWriter | None = None
        self._file: Any = None
        self._drained = asyncio.Event()
        self._drained.set()
        self._closed = asyncio.Event()

    async def start(self) -> None:
        self.mode = choose_mode(self._fd, writing=True, mode=self._requested)
        if self.mode == "threads":
            self._threaded = ThreadedWriter(self._fd, WRITE_HIGH_WATER)
            self._drained = self._threaded.below_limit
            return
        loop = asyncio.get_running_loop()
        self._file = os.fdopen(self._fd, "wb", buffering=0, closefd=False)
        writer = self

        class _Protocol(asyncio.Protocol):
            def pause_writing(self) -> None:
                writer._drained.clear()

            def resume_writing(self) -> None:
                writer._drained.set()

            def connection_lost(self, exc: Exception | None) -> None:
                writer._drained.set()
                writer._closed.set()

        transport, _ = await loop.connect_write_pipe(_Protocol, self._file)
        self._transport = transport
        transport.set_write_buffer_limits(high=WRITE_HIGH_WATER)

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
        elif self._threaded is not None:
            self._threaded.write(data)
        else:  # not started: write in place
            write_all(self._fd, data)

    async def aclose(self, timeout: float = CLOSE_TIMEOUT) -> None:
        """Flush, wait (at most `timeout` seconds) until the output has left, and close."""
        self.flush()
        if self._transport is not None:
            self._transport.close()  # writes what it still buffers, then reports connection_lost
            with anyio.move_on_after(timeout):
                await self._closed.wait()
            if not self._closed.is_set():
                logger.warning("stdout did not take the last %d bytes within %g s; dropping them",
                               self._transport.get_write_buffer_size(), timeout)
                self._transport.abort()
        elif self._threaded is not None:
            await self._threaded.aclose(timeout)


async def read_lines(fd: int, mode: str | None = None) -> AsyncIterator[bytes]:
    """Yield complete lines from `fd`: on the event loop where it can poll `fd`, else from a thread."""
    reader = LineReader()
    if choose_mode(fd, writing=False, mode=mode) == "loop":
        loop = asyncio.get_running_loop()
        stream = asyncio.StreamReader(limit=READ_CHUNK)  # it stops reading the pipe past 2 * limit buffered
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
    else:
        chunks = ThreadedReader(fd, READ_CHUNK)
        while True:
            chunk = await chunks.read()
            if not chunk:
                break
            for line in reader.feed(chunk):
                yield line
    last = reader.rest()
    if last is not None:  # OVERSIZED is an empty bytes: test for None, not truth
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


async def _nothing_in_flight() -> None:
    return None


async def serve_lines(
    on_frame: FrameHandler,
    writer: StdioWriter,
    *,
    stdin_fd: int = 0,
    mode: str | None = None,
    wait_idle: Callable[[], Awaitable[None]] = _nothing_in_flight,
    on_close: Callable[[], None] = lambda: None,
    grace: float | None = None,
) -> None:
    """Read lines until end of input or a stop signal; then give in-flight work `grace` seconds.

    Reading waits while `on_frame` does: a dispatcher's `feed_frame` waits while its connection has
    the maximum of requests in flight, and so nothing more is read until one of them ends.

    `wait_idle` returns once nothing is in flight. A second stop signal ends the grace at once.
    `grace` defaults to SHUTDOWN_GRACE.
    """
    grace = SHUTDOWN_GRACE if grace is None else grace
    reading = anyio.CancelScope()
    finishing = anyio.CancelScope()
    signals_seen = 0

    def on_signal(name: str) -> None:
        nonlocal signals_seen
        signals_seen += 1
        if signals_seen == 1:
            logger.info("received %s: answering what is in flight (at most %g s), then exiting", name, grace)
        else:
            logger.info("received %s again: exiting now", name)
            finishing.cancel()
        reading.cancel()

    async with anyio.create_task_group() as tg:
        tg.start_soon(watch_stop_signals, on_signal)
        with reading:
            async for line in read_lines(stdin_fd, mode):
                if line is OVERSIZED:
                    await writer.send(
                        ErrorResponse(None, PARSE_ERROR, f"Parse error: a message over {MAX_LINE} bytes was dropped")
                    )
                    continue
                await on_frame(line)
        with finishing, anyio.move_on_after(grace):
            await wait_idle()
        on_close()
        tg.cancel_scope.cancel()
