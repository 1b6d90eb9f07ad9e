"""deploy/systemd/mcp-kit.service: systemd's own checker finds nothing to say, and the command and environment
it gives the server start one that answers /readyz behind a proxy's Host (the unit's ExecStart, run here as a
child process with the unit's Environment lines, on a free port)."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.helpers.redis_support import RedisProcess
from tests.helpers.support import LISTENING, ROOT, ProcessLog, stop

UNIT = ROOT / "deploy" / "systemd" / "mcp-kit.service"


def settings(key: str) -> list[str]:
    return [line.split("=", 1)[1] for line in UNIT.read_text().splitlines() if line.startswith(f"{key}=")]


def unit_environment() -> dict[str, str]:
    env: dict[str, str] = {}
    for line in settings("Environment"):
        env.update(item.split("=", 1) for item in shlex.split(line))
    return env


def test_systemd_analyze_verify_finds_nothing(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed")
    text = UNIT.read_text()
    # the paths a real install has: this interpreter and this checkout (verify checks that they exist)
    text = text.replace("/opt/mcp-kit/.venv/bin/python", sys.executable).replace("/opt/mcp-kit", str(ROOT))
    unit = tmp_path / "mcp-kit.service"
    unit.write_text(text)
    result = subprocess.run([analyze, "verify", "--man=no", str(unit)], capture_output=True, text=True, timeout=60)
    # verify exits 0 even for an unknown key or a bad value, which it reports: nothing may be reported
    assert result.returncode == 0 and not result.stdout.strip() and not result.stderr.strip(), result


def test_the_unit_stops_the_supervisor_gracefully_within_its_grace() -> None:
    assert settings("KillMode") == ["mixed"] and settings("KillSignal") == ["SIGTERM"]
    grace = int(unit_environment().get("MCP_SHUTDOWN_GRACE", "10"))
    assert int(settings("TimeoutStopSec")[0]) > grace
    assert settings("User") == ["mcp"] and settings("NoNewPrivileges") == ["yes"]
    assert "MCP_AUTH_TOKEN" not in UNIT.read_text().replace("(MCP_AUTH_TOKEN", "")  # secrets: the EnvironmentFile


def test_the_units_command_and_environment_serve_readyz_and_the_public_name(redis: RedisProcess) -> None:
    env = unit_environment()
    command = shlex.split(settings("ExecStart")[0])
    assert command[0] == "/opt/mcp-kit/.venv/bin/python"
    public = env["MCP_ALLOWED_HOSTS"].split(",")[0]
    env.update(MCP_PORT="0", MCP_BACKEND=redis.url, MCP_WORKERS="2")  # a free port, this test's Redis
    import os

    process = subprocess.Popen([sys.executable, *command[1:]], cwd=ROOT, env={**os.environ, **env},
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    log = ProcessLog(process.stderr)
    try:
        port = log.wait_for(LISTENING, 60).group(1)
        ready = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=30)
        for _ in range(100):  # bounded: the workers start while the supervisor already listens
            if ready.status_code == 200:
                break
            ready = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=30)
        assert ready.status_code == 200, ready.text
        discover = httpx.post(f"http://127.0.0.1:{port}/mcp", headers={
            "Host": public, "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}, json={
            "jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "unit", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {}}}}, timeout=30)
        assert discover.status_code == 200, discover.text
    finally:
        stop(process, log)
