"""A raw stdio peer for fault tests: a server subprocess fed bytes, its stdout read line by line.

Every line the server writes must be one JSON-RPC message; anything else is recorded as
`{"unparseable": ...}` so a test can fail on it. The process is stopped by its PID.
"""

from __future__ import annotations

import json
import queue
import re
import subprocess
import sys
import threading
import time
from typing import Any

from tests.helpers.support import ROOT, ProcessLog, stop

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "fault", "version": "1"}},
}


class StdioPeer:
    """`python -m MODULE` on pipes."""

    def __init__(self, module: str = "tests.helpers.fault_server", *args: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", module, *args], cwd=ROOT, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self._lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.stderr = ProcessLog(self.proc.stderr)
        self.backlog: list[dict[str, Any]] = []
        self._stdout_reader = threading.Thread(target=self._read_stdout, daemon=True)
        self._stdout_reader.start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in iter(self.proc.stdout.readline, b""):
            try:
                message = json.loads(line)
            except ValueError:
                message = {"unparseable": line[:300].decode("utf-8", "replace")}
            self._lines.put(message if isinstance(message, (dict, list)) else {"unparseable": repr(message)})
        self._lines.put(None)

    def stderr_text(self) -> str:
        return self.stderr.text

    def wait_stderr(self, text: str, timeout: float = 10.0) -> None:
        """Return once the server has logged a line containing `text` (stderr is read by another thread)."""
        self.stderr.wait_for(re.escape(text), timeout)

    def send_bytes(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: Any) -> None:
        self.send_bytes(json.dumps(message).encode() + b"\n")

    def next(self, deadline: float) -> Any:
        """The next message from the server; AssertionError at the deadline or at end of output."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(f"no message in time; stderr tail:\n{self.stderr_text()[-1500:]}")
        try:
            message = self._lines.get(timeout=remaining)
        except queue.Empty:
            raise AssertionError(f"no message in time; stderr tail:\n{self.stderr_text()[-1500:]}") from None
        if message is None:
            raise AssertionError(
                f"the server closed stdout (exit {self.proc.poll()}); stderr:\n{self.stderr_text()[-2000:]}"
            )
        return message

    def answer(self, request_id: Any, timeout: float = 10.0) -> dict[str, Any]:
        """The answer to `request_id` (other messages are kept in `backlog`)."""
        for index, message in enumerate(self.backlog):
            if isinstance(message, dict) and "method" not in message and message.get("id") == request_id:
                return self.backlog.pop(index)
        deadline = time.monotonic() + timeout
        while True:
            message = self.next(deadline)
            if isinstance(message, dict) and "method" not in message and message.get("id") == request_id:
                return message
            self.backlog.append(message)

    def initialize(self) -> dict[str, Any]:
        self.send(INITIALIZE)
        answer = self.answer("init")
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def alive(self) -> bool:
        """The server still answers a ping."""
        self.send({"jsonrpc": "2.0", "id": "alive?", "method": "ping"})
        return self.answer("alive?").get("result") == {}

    def close(self) -> None:
        stop(self.proc, self.stderr, self._stdout_reader)  # pipes closed once both readers have read to the end
