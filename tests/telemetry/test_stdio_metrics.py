"""A stdio server's metrics on a loopback port of their own (`--metrics-port`), behind the loopback
Host/Origin guard; the stdio protocol stream is untouched."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx

from tests.helpers.support import ROOT, ProcessLog, stop

SERVER = str(ROOT / "tests" / "telemetry" / "observed_server.py")


def send(process: subprocess.Popen[str], message: dict[str, object]) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps(message) + "\n")
    process.stdin.flush()


def test_a_stdio_server_serves_metrics_on_its_loopback_port() -> None:
    process = subprocess.Popen([sys.executable, SERVER, "--transport", "stdio", "--metrics-port", "0",
                                "--log-level", "info"], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    out, err = ProcessLog(process.stdout), ProcessLog(process.stderr)
    try:
        port = int(err.wait_for(r"serving metrics on http://127\.0\.0\.1:(\d+)/metrics", 30).group(1))
        send(process, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
        out.wait_for(r'"id": ?1', 30)
        send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        send(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                       "params": {"name": "whoami", "arguments": {}}})
        out.wait_for(r'"id": ?2', 30)
        text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
        assert ('gen_ai_tool_name="whoami",mcp_method_name="tools/call",mcp_protocol_version="2025-11-25",'
                'network_transport="pipe"} 1.0') in text
        assert httpx.get(f"http://127.0.0.1:{port}/metrics", headers={"Host": "evil.example"}).status_code == 403
        assert httpx.get(f"http://127.0.0.1:{port}/other").status_code == 404
        assert all(line.startswith("{") for line in out.lines if line.strip())  # stdout: protocol messages only
    finally:
        stop(process, out, err)
