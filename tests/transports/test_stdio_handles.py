"""stdio on handles the event loop cannot poll: `/dev/null` and regular files, as nohup, systemd and
`docker run` without `-i` give them. Each runs in every mode (`auto`, and `loop`/`threads` forced):
a handle the loop cannot poll is served by a thread whatever was asked, and nothing aborts.

Regression (hardening issue, item 14): any server died with SIGABRT (exit 134) when stdin or stdout
was `/dev/null`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.stdio_process import DEMO, MODES, ROOT, STATELESS_META, mode_env

ALL_MODES = ("auto", *MODES)
SERVERS = {
    "demo": [sys.executable, str(DEMO)],
    "stock": [sys.executable, "-m", "servers.stock", "--provider", "sample"],
}
UNPOLLABLE = "served by a worker thread"
REFUSED_LOOP = "cannot be served on the event loop as requested"


def run(argv: list[str], mode: str, **streams: Any) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(argv, cwd=ROOT, env=mode_env(mode), timeout=60, **streams)


def session_lines() -> bytes:
    """A handshake-era session and a 2026-07-28 stateless request, one JSON message a line."""
    messages: list[dict[str, Any]] = [
        {
            "jsonrpc": "2.0",
            "id": "init",
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "file", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": "echo",
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "hi"}},
        },
        {
            "jsonrpc": "2.0",
            "id": "slow",
            "method": "tools/call",
            "params": {"name": "slow", "arguments": {"seconds": 0.3}},
        },
        {
            "jsonrpc": "2.0",
            "id": "modern",
            "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": 2, "b": 3}, "_meta": STATELESS_META},
        },
    ]
    return b"".join(json.dumps(m).encode() + b"\n" for m in messages)


def check_answers(output: bytes) -> None:
    answers = {m["id"]: m for m in map(json.loads, output.splitlines())}
    assert set(answers) == {"init", "echo", "slow", "modern"}, output[:2000]
    assert answers["init"]["result"]["protocolVersion"] == "2025-11-25"
    assert answers["echo"]["result"]["content"][0]["text"] == "hi"
    assert answers["slow"]["result"]["content"][0]["text"] == "slept 0.3 s"  # in flight at end of input
    assert answers["modern"]["result"]["structuredContent"] == {"total": 5.0, "terms": 2}
    assert answers["modern"]["result"]["resultType"] == "complete"


def check_mode_log(stderr: bytes, mode: str, handle: str) -> None:
    text = stderr.decode(errors="replace")
    assert "Traceback" not in text, text[-2000:]
    if mode == "loop":
        assert f"{handle} {REFUSED_LOOP}" in text, text[-2000:]
    else:
        assert f"{handle}: {UNPOLLABLE}" in text, text[-2000:]


@pytest.mark.parametrize("server", sorted(SERVERS))
@pytest.mark.parametrize("mode", ALL_MODES)
def test_dev_null_as_stdin_is_the_end_of_input_and_a_clean_exit(server: str, mode: str) -> None:
    done = run(SERVERS[server], mode, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    assert done.stdout == b""
    check_mode_log(done.stderr, mode, "stdin")


SIDE_EFFECT_SERVER = textwrap.dedent('''
    """A server whose tool leaves a trace in a file, so that work done with stdout on /dev/null shows."""
    import sys
    from pathlib import Path

    from mcp_kit import MCPServer

    app = MCPServer("trace")


    @app.tool
    async def mark(text: str) -> str:
        with open(sys.argv[1], "a") as trace:
            trace.write(text + "\\n")
        return "marked"


    if __name__ == "__main__":
        app.run(log_level="debug")
''')


@pytest.mark.parametrize("mode", ALL_MODES)
def test_dev_null_as_stdout_serves_the_session_and_exits_0(mode: str, tmp_path: Path) -> None:
    script, trace = tmp_path / "trace_server.py", tmp_path / "trace.txt"
    script.write_text(SIDE_EFFECT_SERVER)
    calls = b"".join(json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                                 "params": {"name": "mark", "arguments": {"text": f"call {n}"},
                                            "_meta": STATELESS_META}}).encode() + b"\n" for n in (1, 2))
    done = run([sys.executable, str(script), str(trace)], mode, input=calls, stdout=subprocess.DEVNULL,
               stderr=subprocess.PIPE)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    assert trace.read_text() == "call 1\ncall 2\n"
    check_mode_log(done.stderr, mode, "stdout")


@pytest.mark.parametrize("mode", ALL_MODES)
def test_a_regular_file_as_stdin_is_read_to_its_end_and_every_request_answered(mode: str, tmp_path: Path) -> None:
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(session_lines())
    with requests.open("rb") as stdin:
        done = run(SERVERS["demo"], mode, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    check_answers(done.stdout)
    check_mode_log(done.stderr, mode, "stdin")


@pytest.mark.parametrize("mode", ALL_MODES)
def test_a_regular_file_as_stdout_receives_every_answer(mode: str, tmp_path: Path) -> None:
    output = tmp_path / "answers.jsonl"
    with output.open("wb") as stdout:
        done = run(SERVERS["demo"], mode, input=session_lines(), stdout=stdout, stderr=subprocess.PIPE)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    check_answers(output.read_bytes())
    check_mode_log(done.stderr, mode, "stdout")
