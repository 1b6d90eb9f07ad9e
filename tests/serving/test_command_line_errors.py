"""Transport, port and backend settings fail at once in one clear line, never silently or as a traceback;
`app.run()` reads its command line; a stdio server in a terminal says what it waits for."""

from __future__ import annotations

import os
import pty
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.support import LISTENING, ROOT, ProcessLog, stop

SERVER = "from mcp_kit import MCPServer\napp = MCPServer('hello')\n\nif __name__ == '__main__':\n    app.run()\n"


def server(tmp_path: Path) -> Path:
    path = tmp_path / "hello.py"
    path.write_text(SERVER, encoding="utf-8")
    return path


def env(**variables: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("MCP_")}
    return {**base, "PYTHONPATH": str(ROOT), **variables}


def start(tmp_path: Path, *args: str, **variables: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(server(tmp_path)), *args], capture_output=True, text=True,
                          timeout=60, env=env(**variables), stdin=subprocess.DEVNULL)


def test_app_run_reads_transport_and_port_from_its_command_line(tmp_path: Path) -> None:
    process = subprocess.Popen([sys.executable, str(server(tmp_path)), "--transport", "http", "--port", "0"],
                               env=env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    log = ProcessLog(process.stderr)
    try:
        port = int(log.wait_for(LISTENING, 30).group(1))
        assert port != 8000
    finally:
        stop(process, log)


@pytest.mark.parametrize("value", ["bogus", ""])
def test_an_unknown_or_empty_transport_is_an_error_naming_the_choices(tmp_path: Path, value: str) -> None:
    done = start(tmp_path, MCP_TRANSPORT=value)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (f"error: MCP_TRANSPORT={value!r} is not a transport: use one of stdio, http, sse; "
                                   "fix or unset it")


def test_a_port_that_is_not_a_number_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    done = start(tmp_path, "--transport", "http", MCP_PORT="abc")
    assert done.returncode == 2
    assert done.stderr.strip() == ("error: MCP_PORT='abc' is not a port number (0-65535; 0: any free one); "
                                   "fix or unset it")
    flagged = start(tmp_path, "--transport", "http", "--port", "99999")
    assert flagged.returncode == 2 and "'99999' is not a port number" in flagged.stderr
    assert "Traceback" not in flagged.stderr


def test_the_command_line_wins_over_a_bad_environment_value(tmp_path: Path) -> None:
    done = start(tmp_path, "--transport", "stdio", MCP_TRANSPORT="bogus")
    assert done.returncode == 0, done.stderr  # stdin is empty: the server starts and ends


@pytest.mark.parametrize("url, piece", [
    ("redis:/127.0.0.1:16399", "is not a URL (two slashes after redis:); did you mean redis://127.0.0.1:16399?"),
    ("postgres://db", "unknown backend URL 'postgres://db': use memory, redis://host:port/db"),
    ("redis://127.0.0.1:port", "has a port that is not a number"),
    ("redis://:secret@/0", "names no host"),
])
def test_a_malformed_or_unknown_backend_is_one_line(tmp_path: Path, url: str, piece: str) -> None:
    done = start(tmp_path, "--transport", "http", "--port", "0", "--backend", url)
    assert done.returncode == 2
    assert done.stderr.startswith("error: ") and piece in done.stderr and len(done.stderr.splitlines()) == 1


def test_a_missing_redis_package_names_the_fix(tmp_path: Path) -> None:
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text("import sys\nsys.modules['redis'] = None  # as if not installed\n",
                                           encoding="utf-8")
    done = subprocess.run([sys.executable, str(server(tmp_path)), "--transport", "http", "--port", "0",
                           "--backend", "redis://127.0.0.1:1/0"], capture_output=True, text=True, timeout=60,
                          env={**env(), "PYTHONPATH": f"{hide}{os.pathsep}{ROOT}"}, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert done.stderr.strip() == ("error: the Redis backend (redis://127.0.0.1:1/0) needs the redis package: "
                                   "pip install 'redis>=5' (in a clone: pip install -e '.[redis]')")


def test_a_taken_port_names_the_port_and_the_way_out(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        done = start(tmp_path, "--transport", "http", "--port", str(port))
    assert done.returncode == 3
    assert f"error: cannot listen on 127.0.0.1:{port}: address already in use" in done.stderr
    assert "--port 0" in done.stderr and "Errno" not in done.stderr


def test_a_stdio_server_in_a_terminal_says_it_waits_for_a_client(tmp_path: Path) -> None:
    controller, terminal = pty.openpty()
    process = subprocess.Popen([sys.executable, str(server(tmp_path))], stdin=terminal, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, env=env(), text=True)
    os.close(terminal)
    log = ProcessLog(process.stderr)
    try:
        log.wait_for("hello: MCP server on stdio, waiting for a client", 30)
        assert "Ctrl+C stops it" in log.text and "--transport http" in log.text
    finally:
        os.write(controller, b"\x04")  # Ctrl+D: end of input on the terminal
        stop(process, log)
        os.close(controller)


def test_a_stdio_server_on_a_pipe_prints_no_hint(tmp_path: Path) -> None:
    done = start(tmp_path)
    assert done.returncode == 0 and "waiting for a client" not in done.stderr


def test_help_shows_the_defaults(tmp_path: Path) -> None:
    done = start(tmp_path, "--help")
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert "HTTP bind address [env MCP_HOST] (default: 127.0.0.1)" in text
    assert "HTTP port; 0: any free one, logged [env MCP_PORT] (default: 8000)" in text
    assert "[env MCP_MAX_SESSIONS] (default: 1000)" in text and "(default: info)" in text
