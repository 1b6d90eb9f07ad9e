"""stdio through worker threads, for handles the event loop cannot poll (see `stdio_mode`).

One daemon thread per direction for the life of the connection, never one per read or write:
- `ThreadedReader` blocks in `os.read` and hands each chunk to the loop, at most `AHEAD` chunks
  ahead of the consumer (a fast peer cannot fill memory). End of input and read errors both end
  the stream.
- `ThreadedWriter` takes what the loop batched in one turn and writes it whole, in order. It tells
  the loop when too much is waiting (`below_limit`) and when everything has been written.

Daemon threads: a read blocked on a peer that never closes stdin, or a write to a peer that never
reads, cannot hold the process when it exits. Everything crosses to the loop through
`call_soon_threadsafe`; loop-side state is only touched on the loop.

Must not import: session, server, other transports.
"""

from __future__ import annotations

import asyncio
import logging
import os
import queue
import sys
import threading

import anyio

logger = logging.getLogger("mcp_kit.stdio")

AHEAD = 4  # chunks the reader thread may read before the loop has taken them


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of `data` to the blocking descriptor `fd`."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _wait_readable(fd: int) -> None:
    """Block until `fd` (left non-blocking by someone else) has data; POSIX only."""
    if sys.platform != "win32":
        import select

        select.select([fd], [], [])


class ThreadedReader:
    """Chunks read from `fd` by a daemon thread; `await read()` returns b"" at end of input."""

    def __init__(self, fd: int, chunk_size: int) -> None:
        self._fd = fd
        self._chunk_size = chunk_size
        self._loop = asyncio.get_running_loop()
        self._chunks: asyncio.Queue[bytes] = asyncio.Queue()
        self._room = threading.Semaphore(AHEAD)
        self._ended = False
        self._thread = threading.Thread(target=self._run, name="mcp_kit stdin reader", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            self._room.acquire()
            chunk = self._read_chunk()
            try:
                self._loop.call_soon_threadsafe(self._chunks.put_nowait, chunk)
            except RuntimeError:  # the loop is closed: nobody is listening any more
                return
            if not chunk:
                return

    def _read_chunk(self) -> bytes:
        while True:
            try:
                return os.read(self._fd, self._chunk_size)
            except BlockingIOError:
                if sys.platform == "win32":
                    raise
                _wait_readable(self._fd)
            except OSError as exc:
                logger.warning("reading stdin failed (%s); treating it as the end of input", exc)
                return b""

    async def read(self) -> bytes:
        if self._ended:
            return b""
        chunk = await self._chunks.get()
        if chunk:
            self._room.release()
        else:
            self._ended = True
        return chunk


class ThreadedWriter:
    """Writes byte strings to `fd` in order from a daemon thread."""

    def __init__(self, fd: int, high_water: int) -> None:
        self._fd = fd
        self._high_water = high_water
        self._loop = asyncio.get_running_loop()
        self._queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._waiting = 0  # bytes handed to the thread and not yet written; loop-side only
        self._broken = False
        self.below_limit = asyncio.Event()  # cleared while more than `high_water` bytes wait
        self.below_limit.set()
        self._all_written = asyncio.Event()
        self._all_written.set()
        self._thread = threading.Thread(target=self._run, name="mcp_kit stdout writer", daemon=True)
        self._thread.start()

    def write(self, data: bytes) -> None:
        """Queue `data` (called on the loop). Dropped once the peer stopped reading."""
        if self._broken:
            return
        self._waiting += len(data)
        self._all_written.clear()
        if self._waiting > self._high_water:
            self.below_limit.clear()
        self._queue.put(data)

    def _run(self) -> None:
        failed: OSError | None = None
        while (data := self._queue.get()) is not None:
            if failed is None:
                try:
                    write_all(self._fd, data)
                except OSError as exc:
                    failed = exc
            try:
                self._loop.call_soon_threadsafe(self._written, len(data), failed)
            except RuntimeError:  # the loop is closed
                return

    def _written(self, size: int, failed: OSError | None) -> None:
        self._waiting -= size
        if failed is not None and not self._broken:
            self._broken = True
            logger.info("stdout is closed (%s); dropping further output", failed)
        if self._broken or self._waiting <= self._high_water // 2:
            self.below_limit.set()
        if self._waiting == 0:
            self._all_written.set()

    async def aclose(self, timeout: float) -> None:
        """Wait up to `timeout` seconds for everything queued to be written, then stop the thread."""
        with anyio.move_on_after(timeout):
            await self._all_written.wait()
        self._queue.put(None)
