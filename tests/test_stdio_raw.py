"""stdio transport, byte for byte: a real subprocess fed raw JSON lines through pipes.

Every process is stopped by its PID (terminate, wait, kill). Every line the server writes to
stdout is checked to be one JSON-RPC message.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "examples" / "demo_server.py"


class ServerProcess:
    """A server subprocess speaking newline-delimited JSON on its pipes."""

    def __init__(self, script: Path, stderr_path: Path) -> None:
        self.stderr_file = open(stderr_path, "wb")
        self.stderr_path = stderr_path
        self.proc = subprocess.Popen(
            [sys.executable, str(script)], cwd=str(ROOT), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self.stderr_file,
        )
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

    def initialize(self, version: str = "2025-11-25") -> dict[str, Any]:
        self.send({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
        result = self.answer("init", timeout=15)["result"]
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return result

    def call(self, request_id: Any, name: str, arguments: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                   "params": {"name": name, "arguments": arguments}})

    def stderr_text(self) -> str:
        self.stderr_file.flush()
        return self.stderr_path.read_text(errors="replace")

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


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Any]:
    started: list[ServerProcess] = []

    def start(script: Path = DEMO) -> ServerProcess:
        server = ServerProcess(script, tmp_path / f"stderr-{len(started)}.log")
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def test_non_json_and_invalid_utf8_get_parse_errors_and_the_session_continues(spawn: Any) -> None:
    server = spawn()
    server.initialize()
    server.send_bytes(b"this is not json\n")
    first = server.wait_for(lambda m: "error" in m)
    assert first == {"jsonrpc": "2.0", "id": None, "error": first["error"]}
    assert first["error"]["code"] == -32700
    server.send_bytes(b'{"jsonrpc":"2.0","id":1,"method":"ping","x":"\xff\xfe"}\n')
    second = server.wait_for(lambda m: "error" in m)
    assert second["id"] is None and second["error"]["code"] == -32700
    server.send_bytes(b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}\n')
    third = server.wait_for(lambda m: "error" in m)
    assert third["id"] is None and third["error"]["code"] == -32600
    server.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    assert server.answer(2)["result"] == {}
    server.call(3, "echo", {"text": "still here"})
    assert server.answer(3)["result"]["content"][0]["text"] == "still here"
    server.assert_stdout_is_only_json_lines()


def test_crlf_blank_lines_and_split_writes_are_handled(spawn: Any) -> None:
    server = spawn()
    server.initialize()
    server.send_bytes(b'\n\r\n{"jsonrpc":"2.0","id":"crlf","method":"ping"}\r\n')
    assert server.answer("crlf")["result"] == {}
    message = json.dumps({"jsonrpc": "2.0", "id": "split", "method": "ping"}).encode() + b"\n"
    for piece in (message[:7], message[7:20], message[20:]):
        server.send_bytes(piece)
        time.sleep(0.02)
    assert server.answer("split")["result"] == {}
    server.send_bytes(b'{"jsonrpc":"2.0","id":"a","method":"ping"}\n{"jsonrpc":"2.0","id":"b","method":"ping"}\n')
    assert server.answer("a")["result"] == {} and server.answer("b")["result"] == {}
    assert not server.backlog or all("error" not in m for m in server.backlog)


def test_ten_mebibyte_message_round_trips(spawn: Any) -> None:
    server = spawn()
    server.initialize()
    text = ("0123456789abcdef" * 65536) * 10  # 10 MiB
    server.call("big", "echo", {"text": text})
    answer = server.answer("big", timeout=30)
    assert answer["result"]["isError"] is False
    assert answer["result"]["content"][0]["text"] == text
    server.send({"jsonrpc": "2.0", "id": "after", "method": "ping"})
    assert server.answer("after")["result"] == {}
    server.assert_stdout_is_only_json_lines()


def call_until_it_reports_progress(server: ServerProcess, request_id: Any, name: str, arguments: dict[str, Any]) -> None:
    """Call a tool with a progress token and wait for its first progress: the call has started."""
    server.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                 "params": {"name": name, "arguments": arguments, "_meta": {"progressToken": f"{request_id}-progress"}}})
    server.wait_for(lambda m: m.get("method") == "notifications/progress"
                    and m["params"]["progressToken"] == f"{request_id}-progress", timeout=10)


def rest(server: ServerProcess, timeout: float = 10) -> list[dict[str, Any]]:
    """Every message not claimed yet, up to the end of stdout: what waits left in the backlog *and* the queue."""
    unclaimed, server.backlog = server.backlog, []
    deadline = time.monotonic() + timeout
    while (message := server.messages.get(timeout=max(0.0, deadline - time.monotonic()))) is not None:
        unclaimed.append(message)
    return unclaimed


def wait_for_stderr(server: ServerProcess, marker: str, timeout: float = 10) -> None:
    """Wait (bounded) until the server wrote `marker` to stderr."""
    deadline = time.monotonic() + timeout
    while marker not in server.stderr_text():
        assert time.monotonic() < deadline, f"no {marker!r} on stderr within {timeout} s"
        time.sleep(0.02)


def test_stdin_eof_exits_cleanly_even_with_a_slow_tool_in_flight(spawn: Any) -> None:
    server = spawn()
    server.initialize()
    call_until_it_reports_progress(server, "slow", "slow", {"seconds": 20})
    assert server.proc.stdin is not None
    server.proc.stdin.close()
    assert server.proc.wait(timeout=8) == 0  # 20 s of work left: exiting now proves the tool was stopped
    assert [m for m in rest(server) if m.get("id") == "slow" and "result" in m] == []
    server.assert_stdout_is_only_json_lines()


def test_sigterm_exits_cleanly(spawn: Any) -> None:
    server = spawn()
    server.initialize()
    call_until_it_reports_progress(server, "slow", "slow", {"seconds": 20})
    os.kill(server.proc.pid, signal.SIGTERM)
    assert server.proc.wait(timeout=8) == 0
    assert [m for m in rest(server) if m.get("id") == "slow" and "result" in m] == []
    server.assert_stdout_is_only_json_lines()


PRINTING_SERVER = textwrap.dedent('''
    """A server whose tool writes to stdout in every way it can."""
    import os
    import subprocess
    import sys

    from mcp_kit import MCPServer

    app = MCPServer("printer")


    @app.tool
    def noisy() -> str:
        print("print() from a sync tool")
        sys.stdout.write("sys.stdout.write\\n")
        sys.stdout.flush()
        os.write(1, b"os.write to fd 1\\n")
        os.system("echo from os.system")
        subprocess.run([sys.executable, "-c", "print('from a child python')"], check=True)
        return "done"


    @app.tool
    async def noisy_async() -> str:
        print("print() from an async tool", flush=True)
        return "done async"


    if __name__ == "__main__":
        app.run()
''')


def test_output_from_a_tool_does_not_corrupt_stdout(spawn: Any, tmp_path: Path) -> None:
    script = tmp_path / "printing_server.py"
    script.write_text(PRINTING_SERVER)
    server = spawn(script)
    server.initialize()
    server.call(1, "noisy", {})
    assert server.answer(1, timeout=15)["result"]["content"][0]["text"] == "done"
    server.call(2, "noisy_async", {})
    assert server.answer(2)["result"]["content"][0]["text"] == "done async"
    server.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
    assert server.answer(3)["result"] == {}
    assert server.proc.stdin is not None
    server.proc.stdin.close()
    assert server.proc.wait(timeout=8) == 0
    server.reader.join(timeout=5)
    server.assert_stdout_is_only_json_lines()
    stderr = server.stderr_text()
    for expected in ("print() from a sync tool", "sys.stdout.write", "os.write to fd 1", "from os.system",
                     "from a child python", "print() from an async tool"):
        assert expected in stderr


SYNC_SLOW_SERVER = textwrap.dedent('''
    """A server whose only tool blocks a worker thread (and says so on stderr when it starts)."""
    import sys
    import time

    from mcp_kit import MCPServer

    app = MCPServer("sync-slow")


    @app.tool
    def block(seconds: float) -> str:
        print("block started", file=sys.stderr, flush=True)
        time.sleep(seconds)
        return "done"


    if __name__ == "__main__":
        app.run()
''')


@pytest.mark.parametrize("how", ["eof", "sigterm"])
def test_exit_is_prompt_even_with_a_sync_tool_blocking_a_worker_thread(spawn: Any, tmp_path: Path, how: str) -> None:
    script = tmp_path / "sync_slow_server.py"
    script.write_text(SYNC_SLOW_SERVER)
    server = spawn(script)
    server.initialize()
    server.call("blocked", "block", {"seconds": 20})
    wait_for_stderr(server, "block started")
    started = time.monotonic()
    if how == "eof":
        assert server.proc.stdin is not None
        server.proc.stdin.close()
    else:
        os.kill(server.proc.pid, signal.SIGTERM)
    try:
        code = server.proc.wait(timeout=6)
    except subprocess.TimeoutExpired:
        code = None
    assert code == 0, f"still running {time.monotonic() - started:.1f} s after {how} (sync tool thread not abandoned)"
    assert [m for m in rest(server) if m.get("id") == "blocked" and "result" in m] == []


def test_a_line_over_the_size_limit_is_dropped_with_a_parse_error_and_the_session_continues() -> None:
    script = ("import mcp_kit.transports.stdio as stdio; stdio.MAX_LINE = 1000\n"
              "import runpy, sys; sys.argv = ['demo']; runpy.run_path('examples/demo_server.py', run_name='__main__')")
    process = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        out, _ = process.communicate(b'{"x": "' + b"y" * 5000 + b'"}\n{"jsonrpc":"2.0","id":1,"method":"ping"}\n',
                                     timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
    first, second = (json.loads(line) for line in out.splitlines())
    assert first["error"]["code"] == -32700 and "dropped" in first["error"]["message"]
    assert second == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_line_reader_drops_an_overlong_line_split_across_reads_and_resumes_at_the_next() -> None:
    from mcp_kit.transports.stdio import OVERSIZED, LineReader

    reader = LineReader(max_line=10)
    lines = reader.feed(b"0123456789ABCDEF") + reader.feed(b"still the same line\n{}\n")
    assert len(lines) == 2 and lines[0] is OVERSIZED and lines[1] == b"{}"
