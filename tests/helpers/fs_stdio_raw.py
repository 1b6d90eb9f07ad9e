"""A filesystem server as a real stdio subprocess, spoken to in raw JSON lines (test helper)."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


class RawServer:
    """`python -m servers.filesystem --root ROOT`, messages written and read as JSON lines."""

    def __init__(self, root: Path, *extra: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "servers.filesystem", "--root", str(root), *extra], cwd=REPO,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.stderr: list[bytes] = []
        self.seen: list[dict[str, Any]] = []  # messages read while waiting for another answer
        self._readers = [threading.Thread(target=self._pump, daemon=True),
                         threading.Thread(target=self._drain_stderr, daemon=True)]
        for reader in self._readers:
            reader.start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def _drain_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr.append(line)

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def receive(self, timeout: float) -> dict[str, Any]:
        """The next message; AssertionError when none comes within `timeout` seconds."""
        try:
            return json.loads(self.lines.get(timeout=timeout))
        except queue.Empty:
            raise AssertionError(f"no message within {timeout} s; stderr: {b''.join(self.stderr)[-2000:]!r}") from None

    def answer(self, request_id: Any, timeout: float) -> dict[str, Any]:
        """The response to `request_id`, reading (and keeping in `seen`) whatever comes before it."""
        def is_answer(message: dict[str, Any]) -> bool:
            return message.get("id") == request_id and ("result" in message or "error" in message)

        for message in self.seen:
            if is_answer(message):
                self.seen.remove(message)
                return message
        deadline = time.monotonic() + timeout
        while True:
            message = self.receive(max(0.01, deadline - time.monotonic()))
            if is_answer(message):
                return message
            self.seen.append(message)

    def initialize(self) -> None:
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
        assert "result" in self.answer(0, 30)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call(self, request_id: int, tool: str, arguments: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                   "params": {"name": tool, "arguments": arguments}})

    def close(self) -> None:
        """Close stdin (a clean end for the server), then stop it by PID if it lingers; its pipes are closed."""
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        for reader in self._readers:  # both end at the end of output, which the exit brought
            reader.join(timeout=10)
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()

    def __enter__(self) -> RawServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
