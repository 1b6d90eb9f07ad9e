"""stdio transport, byte for byte: a real subprocess fed raw JSON lines through pipes.

Every test runs twice, once per stdio mode (event loop, worker threads; `MCP_KIT_STDIO_MODE`),
and checks that the server really served that mode. Every process is stopped by its PID
(terminate, wait, kill). Every line the server writes to stdout is checked to be one JSON-RPC message.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.stdio_process import DEMO, MODES, ROOT, ServerProcess, launch_command, mode_env, served_by


@pytest.fixture(params=MODES)
def stdio_mode(request: pytest.FixtureRequest) -> str:
    """Every test here runs on both stdio paths: the event loop and worker threads."""
    return str(request.param)


@pytest.fixture
def spawn(tmp_path: Path, stdio_mode: str) -> Iterator[Any]:
    started: list[ServerProcess] = []

    def start(script: Path = DEMO, **launch: Any) -> ServerProcess:
        """Start `script`; `launch` (grace=, signal_platform=) changes transport constants as `launch_command` does."""
        command = launch_command(script, **launch) if launch else [sys.executable, str(script)]
        server = ServerProcess(command, tmp_path / f"stderr-{len(started)}.log", stdio_mode)
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
        time.sleep(0.02)  # the behaviour under test: each piece arrives in a read of its own
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


@pytest.mark.parametrize("how", ["eof", "sigterm"])
def test_a_call_longer_than_the_grace_does_not_hold_the_exit(spawn: Any, how: str) -> None:
    server = spawn(grace=0.5)
    server.initialize()
    server.call("slow", "slow", {"seconds": 20}, progress_token="slow")
    server.progress("slow")
    if how == "eof":
        server.close_stdin()
    else:
        os.kill(server.proc.pid, signal.SIGTERM)
    assert server.proc.wait(timeout=10) == 0
    server.reader.join(timeout=5)
    assert [m for m in rest(server) if m.get("id") == "slow" and "result" in m] == []
    server.assert_stdout_is_only_json_lines()


def stop_by(server: ServerProcess, how: str) -> None:
    """End the session the way `how` says: close stdin, or send a signal."""
    if how == "eof":
        server.close_stdin()
    else:
        os.kill(server.proc.pid, getattr(signal, how.upper()))


@pytest.mark.parametrize("era", ["handshake", "stateless"])
@pytest.mark.parametrize("how", ["eof", "sigterm", "sigint"])
def test_calls_in_flight_are_answered_then_the_server_exits_0(spawn: Any, era: str, how: str) -> None:
    server = spawn(grace=60)
    stateless = era == "stateless"
    if not stateless:
        server.initialize()
    server.call("short", "slow", {"seconds": 0.5}, stateless=stateless, progress_token="short")
    server.call("longer", "slow", {"seconds": 1.5}, stateless=stateless, progress_token="longer")
    server.progress("short")
    server.progress("longer")
    server.assert_served_in_its_mode()
    stop_by(server, how)
    assert server.answer("short", timeout=30)["result"]["content"][0]["text"] == "slept 0.5 s"
    assert server.answer("longer", timeout=30)["result"]["content"][0]["text"] == "slept 1.5 s"
    assert server.proc.wait(timeout=30) == 0
    server.reader.join(timeout=5)
    server.assert_stdout_is_only_json_lines()
    if how != "eof":
        assert f"received {how.upper()}: answering what is in flight" in server.stderr_text()


def test_a_second_signal_ends_the_grace_at_once(spawn: Any) -> None:
    server = spawn(grace=120)
    server.initialize()
    server.call("slow", "slow", {"seconds": 30}, progress_token="slow")
    server.progress("slow")
    os.kill(server.proc.pid, signal.SIGTERM)
    # both pending at once, Linux would deliver the lower-numbered SIGINT first: the second waits for the first
    wait_for_stderr(server, "received SIGTERM: answering", timeout=30)
    os.kill(server.proc.pid, signal.SIGINT)
    assert server.proc.wait(timeout=20) == 0  # far less than the 120 s grace
    server.reader.join(timeout=5)
    assert [m for m in rest(server) if m.get("id") == "slow" and "result" in m] == []
    stderr = server.stderr_text()
    assert "received SIGTERM: answering" in stderr and "received SIGINT again: exiting now" in stderr


def test_the_windows_signal_path_answers_calls_in_flight_then_exits_0(spawn: Any) -> None:
    """The plan Windows uses (signal.signal handlers marshalled onto the loop), forced here on Linux.

    SIGBREAK does not exist here, so CTRL_C_EVENT's SIGINT stands for both console events.
    """
    server = spawn(grace=60, signal_platform="win32")
    server.initialize()
    server.call("short", "slow", {"seconds": 0.5}, progress_token="short")
    server.progress("short")
    os.kill(server.proc.pid, signal.SIGINT)
    assert server.answer("short", timeout=30)["result"]["content"][0]["text"] == "slept 0.5 s"
    assert server.proc.wait(timeout=30) == 0
    assert "received SIGINT: answering what is in flight" in server.stderr_text()


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
        app.run(log_level="debug")
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
        app.run(log_level="debug")
''')


@pytest.mark.parametrize("how", ["eof", "sigterm"])
def test_exit_is_prompt_even_with_a_sync_tool_blocking_a_worker_thread(spawn: Any, tmp_path: Path, how: str) -> None:
    script = tmp_path / "sync_slow_server.py"
    script.write_text(SYNC_SLOW_SERVER)
    server = spawn(script)
    server.initialize()
    server.call("blocked", "block", {"seconds": 20})
    server.send({"jsonrpc": "2.0", "id": "after", "method": "ping"})
    server.answer("after")  # the call's task ran before this ping's: its function was handed to a worker thread
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


def test_a_line_over_the_size_limit_is_dropped_with_a_parse_error_and_the_session_continues(stdio_mode: str) -> None:
    process = subprocess.Popen(launch_command(max_line=1000), cwd=ROOT, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=mode_env(stdio_mode))
    try:
        out, err = process.communicate(b'{"x": "' + b"y" * 5000 + b'"}\n{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
                                       + b'{"last": "' + b"z" * 5000 + b'"}', timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
    assert served_by(stdio_mode) in err.decode()
    messages = [json.loads(line) for line in out.splitlines()]
    assert {"jsonrpc": "2.0", "id": 1, "result": {}} in messages
    dropped = [m for m in messages if "error" in m]
    assert len(dropped) == 2 and len(messages) == 3  # the line before the ping, and the unterminated one at EOF
    assert all(m["id"] is None and m["error"]["code"] == -32700 and "dropped" in m["error"]["message"] for m in dropped)
    assert process.returncode == 0


def test_line_reader_drops_an_overlong_line_split_across_reads_and_resumes_at_the_next() -> None:
    from mcp_kit._transports.stdio import OVERSIZED, LineReader

    reader = LineReader(max_line=10)
    lines = reader.feed(b"0123456789ABCDEF") + reader.feed(b"still the same line\n{}\n")
    assert len(lines) == 2 and lines[0] is OVERSIZED and lines[1] == b"{}"
