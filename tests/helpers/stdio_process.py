"""A stdio server as a real subprocess, fed raw JSON lines through pipes, in a chosen stdio mode.

`MODES` are the two ways mcp_kit serves stdio (`MCP_KIT_STDIO_MODE`): the event loop and worker
threads. `launch_command` starts a server script with a few transport constants changed (shutdown
grace, line limit) or with the Windows signal plan, so those paths run as real processes here.
Every process is stopped by its PID (terminate, wait, kill).
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "demo_server.py"
MODES = ("loop", "threads")
STATELESS_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}

_LAUNCHER = """
import runpy, sys
import mcp_kit._transports.stdio as stdio
import mcp_kit._transports.stop_signals as stop_signals
script, grace, max_line, platform = sys.argv[1:5]
if grace:
    stdio.SHUTDOWN_GRACE = float(grace)
if max_line:
    stdio.MAX_LINE = int(max_line)
if platform:
    plan = stop_signals.signal_plan(platform)
    stop_signals.signal_plan = lambda platform=None: plan
sys.argv = [script, *sys.argv[5:]]
runpy.run_path(script, run_name="__main__")
"""


def launch_command(script: Path = DEMO, *args: str, grace: float | None = None, max_line: int | None = None,
                   signal_platform: str | None = None) -> list[str]:
    """argv running `script` with the shutdown grace, line limit or signal plan (of a `sys.platform`) changed."""
    return [sys.executable, "-c", _LAUNCHER, str(script), "" if grace is None else str(grace),
            "" if max_line is None else str(max_line), signal_platform or "", *args]


def mode_env(mode: str) -> dict[str, str]:
    """The environment of a server forced into `mode`, logging at debug level (which names the mode)."""
    return {**os.environ, "MCP_KIT_STDIO_MODE": mode, "MCP_LOG_LEVEL": "debug"}


def served_by(mode: str) -> str:
    """The debug line a server logs for its stdin in `mode`."""
    return "stdin: served on the event loop" if mode == "loop" else "stdin: served by a worker thread"


class ServerProcess:
    """A server subprocess speaking newline-delimited JSON on its pipes."""

    def __init__(self, command: list[str], stderr_path: Path, mode: str) -> None:
        self.mode = mode
        self.stderr_file = open(stderr_path, "wb")
        self.stderr_path = stderr_path
        self.proc = subprocess.Popen(command, cwd=str(ROOT), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr_file, env=mode_env(mode))
        self.raw_lines: list[bytes] = []
        self.messages: queue.Queue[Any] = queue.Queue()
        self.backlog: list[dict[str, Any]] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in iter(self.proc.stdout.readline, b""):
            self.raw_lines.append(line)
            try:
                self.messages.put(json.loads(line))
            except ValueError:
                self.messages.put({"unparseable": line[:200]})
        self.messages.put(None)  # EOF

    def send_bytes(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_bytes(json.dumps(message).encode() + b"\n")

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def receive(self, timeout: float = 5) -> dict[str, Any] | None:
        return self.messages.get(timeout=timeout)

    def wait_for(self, predicate: Any, timeout: float = 5) -> dict[str, Any]:
        """The first message (including earlier unclaimed ones) for which `predicate` holds."""
        for index, message in enumerate(self.backlog):
            if predicate(message):
                return self.backlog.pop(index)
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no matching message within {timeout} s; got {self.backlog!r:.500}")
            message = self.messages.get(timeout=remaining)
            if message is None:
                raise AssertionError(f"server closed stdout; stderr:\n{self.stderr_text()[-2000:]}")
            if predicate(message):
                return message
            self.backlog.append(message)

    def answer(self, request_id: Any, timeout: float = 5) -> dict[str, Any]:
        return self.wait_for(lambda m: "method" not in m and m.get("id") == request_id, timeout)

    def progress(self, token: Any, timeout: float = 10) -> dict[str, Any]:
        """The next progress notification for `token` (proof that its request is running)."""
        return self.wait_for(lambda m: m.get("method") == "notifications/progress"
                             and m["params"]["progressToken"] == token, timeout)

    def initialize(self, version: str = "2025-11-25") -> dict[str, Any]:
        self.send({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
        result = self.answer("init", timeout=15)["result"]
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.assert_served_in_its_mode()
        return result

    def call(self, request_id: Any, name: str, arguments: dict[str, Any], *, stateless: bool = False,
             progress_token: Any = None) -> None:
        """tools/call in the handshake era, or with `stateless` as a 2026-07-28 request carrying its `_meta`."""
        meta: dict[str, Any] = dict(STATELESS_META) if stateless else {}
        if progress_token is not None:
            meta["progressToken"] = progress_token
        params: dict[str, Any] = {"name": name, "arguments": arguments}
        if meta:
            params["_meta"] = meta
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})

    def stderr_text(self) -> str:
        self.stderr_file.flush()
        return self.stderr_path.read_text(errors="replace")

    def assert_served_in_its_mode(self) -> None:
        """The server logged (at debug level, before reading its first line) the mode it was forced into."""
        assert served_by(self.mode) in self.stderr_text(), self.stderr_text()[-2000:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        self.reader.join(timeout=5)
        self.stderr_file.close()

    def assert_stdout_is_only_json_lines(self) -> None:
        for line in self.raw_lines:
            assert line.endswith(b"\n"), line[:200]
            message = json.loads(line)
            assert isinstance(message, (dict, list)), line[:200]
            for item in message if isinstance(message, list) else [message]:
                assert item.get("jsonrpc") == "2.0", line[:200]
