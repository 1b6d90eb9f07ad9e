"""`mcp-kit run` as a newcomer meets it: a broken file shows its own error, HTTP names the MCP endpoints."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.support import LISTENING, ROOT, ProcessLog, stop

MCP_KIT = [sys.executable, "-m", "mcp_kit"]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*MCP_KIT, "run", *args], capture_output=True, text=True, timeout=60, cwd=tmp_path, env=ENV)


@pytest.mark.parametrize("source, shown", [
    ("from mcp_kit import MCPServer\napp = MCPServer('x')\ndef broken(:\n    pass\n",
     ['  File "{path}", line 3\n    def broken(:\n', "SyntaxError: invalid syntax"]),
    ("from mcp_kit import MCPServer\nimport no_such_module_xyz\napp = MCPServer('x')\n",
     ['Traceback (most recent call last):\n  File "{path}", line 2, in <module>\n    import no_such_module_xyz\n',
      "ModuleNotFoundError: No module named 'no_such_module_xyz'"]),
    ("def build_server():\n    raise RuntimeError('no database')\n",
     ['  File "{path}", line 2, in build_server\n', "RuntimeError: no database"]),
], ids=["syntax-error", "missing-import", "factory-raises"])
def test_a_broken_server_file_shows_its_own_error_not_the_loaders(tmp_path: Path, source: str,
                                                                  shown: list[str]) -> None:
    path = tmp_path / "server.py"
    path.write_text(source, encoding="utf-8")
    done = run(tmp_path, "server.py")
    assert done.returncode == 4, done.stderr
    for piece in shown:
        assert piece.format(path=path) in done.stderr, done.stderr
    assert done.stderr.startswith("mcp-kit: error: ")
    assert "mcp_kit/commands" not in done.stderr and "importlib" not in done.stderr and "cli.py" not in done.stderr
    assert len(done.stderr.splitlines()) <= 7  # python broken.py shows as much; the loader used to add ~20 lines


def test_run_over_http_names_the_mcp_endpoints(tmp_path: Path) -> None:
    (tmp_path / "hello.py").write_text("from mcp_kit import MCPServer\napp = MCPServer('hello')\n", encoding="utf-8")
    process = subprocess.Popen([*MCP_KIT, "run", "hello.py", "--transport", "http", "--port", "0"],
                               cwd=tmp_path, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    log = ProcessLog(process.stderr)
    try:
        port = log.wait_for(LISTENING, 30).group(1)  # the port the system picked, once bound and listening
        log.wait_for(f"Uvicorn running on http://127.0.0.1:{port}", 30)
        assert f"serving MCP on http://127.0.0.1:{port}/mcp (legacy SSE: /sse)" in log.text
    finally:
        stop(process, log)
