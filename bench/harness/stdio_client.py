"""A minimal synchronous newline-delimited JSON-RPC client for a server spawned on stdio.

Non-blocking pipes plus select() keep every wait bounded by a deadline; requests are pre-encoded
bytes so the client adds as little as possible to what is measured.
"""

from __future__ import annotations

import os
import select
import time
from pathlib import Path
from typing import IO, Any

from . import codec, processes

PROTOCOL_VERSION = "2025-11-25"
READ_CHUNK = 1 << 20


class ServerError(RuntimeError):
    """The server answered with a JSON-RPC error or misbehaved."""


class StdioPeer:
    """One spawned stdio server and the client end of its pipes."""

    def __init__(
        self, argv: list[str], env: dict[str, str], cwd: Path, stderr: IO[bytes]
    ) -> None:
        self.spawned_at = time.perf_counter()
        self.proc = processes.spawn(argv, env, cwd, stderr, pipes=True)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in_fd = self.proc.stdin.fileno()
        self._out_fd = self.proc.stdout.fileno()
        os.set_blocking(self._in_fd, False)
        os.set_blocking(self._out_fd, False)
        self._buffer = bytearray()
        self._next_id = 1
        # Bytes of every JSON-RPC response line read (newline excluded), their count, and the
        # characters their ids take: what `wire_mark`/`bytes_per_reply` turn into bytes per reply.
        self.reply_bytes = 0
        self.reply_count = 0
        self.reply_id_chars = 0

    @property
    def pid(self) -> int:
        """PID of the server process."""
        return self.proc.pid

    def next_id(self) -> int:
        """Allocate a request id."""
        value = self._next_id
        self._next_id += 1
        return value

    def write(self, data: bytes, timeout_s: float = 30.0) -> None:
        """Write all of `data` to the server's stdin within `timeout_s`."""
        view = memoryview(data)
        deadline = time.monotonic() + timeout_s
        while view:
            try:
                written = os.write(self._in_fd, view)
                view = view[written:]
                continue
            except BlockingIOError:
                pass
            except BrokenPipeError as exc:
                raise ServerError(
                    f"server closed stdin (exit code {self.proc.poll()})"
                ) from exc
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("writing to the server's stdin timed out")
            # While the pipe is full, keep draining the server's output so neither side can deadlock.
            readable, _, _ = select.select([self._out_fd], [self._in_fd], [], remaining)
            if readable:
                self._fill(time.monotonic() + 0.0)

    def _fill(self, deadline: float) -> None:
        """Read whatever is available (waiting until `deadline` for the first byte)."""
        while True:
            try:
                chunk = os.read(self._out_fd, READ_CHUNK)
            except BlockingIOError:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return
                readable, _, _ = select.select([self._out_fd], [], [], remaining)
                if not readable:
                    return
                continue
            if not chunk:
                raise ServerError(
                    f"server closed stdout (exit code {self.proc.poll()})"
                )
            self._buffer += chunk
            return

    def read_lines(self, timeout_s: float = 30.0) -> list[bytes]:
        """Return every complete line available, waiting up to `timeout_s` for at least one."""
        deadline = time.monotonic() + timeout_s
        while True:
            end = self._buffer.rfind(b"\n")
            if end >= 0:
                lines = bytes(self._buffer[:end]).split(b"\n")
                del self._buffer[: end + 1]
                return lines
            if time.monotonic() >= deadline:
                raise TimeoutError(
                    f"no message from the server within {timeout_s:.1f} s"
                )
            self._fill(deadline)

    def read_responses(self, timeout_s: float = 30.0) -> list[dict[str, Any]]:
        """Return the JSON-RPC responses available (at least one), answering or skipping anything else."""
        deadline = time.monotonic() + timeout_s
        while True:
            responses: list[dict[str, Any]] = []
            for line in self.read_lines(max(0.0, deadline - time.monotonic())):
                if not line.strip():
                    continue
                message = codec.loads(line)
                if "id" in message and "method" not in message:
                    self.reply_bytes += len(line)
                    self.reply_count += 1
                    self.reply_id_chars += len(codec.dumps(message["id"]))
                if "method" in message:
                    if "id" in message:  # a server->client request we do not support
                        self.write(
                            codec.dumps(
                                {
                                    "jsonrpc": "2.0",
                                    "id": message["id"],
                                    "error": {
                                        "code": -32601,
                                        "message": "not supported",
                                    },
                                }
                            )
                            + b"\n"
                        )
                    continue
                responses.append(message)
            if responses:
                return responses

    def wire_mark(self) -> tuple[int, int, int]:
        """A snapshot of the reply counters, for `bytes_per_reply`."""
        return self.reply_bytes, self.reply_count, self.reply_id_chars

    def bytes_per_reply(self, mark: tuple[int, int, int]) -> float:
        """Mean bytes per response line since `mark`, not counting the characters of the response ids."""
        count = self.reply_count - mark[1]
        if count <= 0:
            return float("nan")
        return ((self.reply_bytes - mark[0]) - (self.reply_id_chars - mark[2])) / count

    def request(
        self, method: str, params: dict[str, Any] | None = None, timeout_s: float = 30.0
    ) -> dict[str, Any]:
        """Send one request and return its result (raises ServerError on an error response)."""
        request_id = self.next_id()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.write(codec.dumps(message) + b"\n", timeout_s)
        deadline = time.monotonic() + timeout_s
        while True:
            for response in self.read_responses(max(0.0, deadline - time.monotonic())):
                if response.get("id") != request_id:
                    raise ServerError(
                        f"unexpected response id {response.get('id')!r} (wanted {request_id})"
                    )
                if "error" in response:
                    raise ServerError(f"{method} failed: {response['error']}")
                return response["result"]

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.write(codec.dumps(message) + b"\n")

    def initialize(self, timeout_s: float = 60.0) -> dict[str, Any]:
        """Run the initialize handshake and send notifications/initialized."""
        result = self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "mcp-bench", "version": "1"},
            },
            timeout_s,
        )
        self.notify("notifications/initialized")
        return result

    def stop(self) -> int | None:
        """Stop the server by PID (close stdin, terminate, kill)."""
        return processes.stop(self.proc)

    def alive(self) -> bool:
        """True while the server process runs."""
        return self.proc.poll() is None


def call_request_bytes(request_id: int, tool: str, arguments: dict[str, Any]) -> bytes:
    """Pre-encode one tools/call request line."""
    return (
        codec.dumps(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": tool, "arguments": arguments},
            }
        )
        + b"\n"
    )
