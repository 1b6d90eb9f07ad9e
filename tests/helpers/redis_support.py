"""Real Redis servers for the scale-out tests: one on a free loopback port, or a 3-node Redis Cluster.

`redis-server --port 0` is not supported, so a port is picked by binding port 0, and the server
is started on it; a start that fails with "Address already in use" (another program took the
port in between) is retried on a new port. Readiness is a `PING` answered `PONG`. Every server is
stopped by its PID. Without `redis-server` the tests that need it are skipped, unless
`MCP_KIT_REQUIRE_REDIS=1` (set by `.ci/run`) turns the skip into a failure.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

REDIS_SERVER = shutil.which("redis-server")
STARTED_WORKDIRS: list[Path] = []  # every server's directory this process made: conftest checks they are gone
REDIS_CLI = shutil.which("redis-cli")


def require_redis() -> str:
    """The redis-server path; skips (or fails under MCP_KIT_REQUIRE_REDIS=1) when it is not installed."""
    if REDIS_SERVER and REDIS_CLI:
        return REDIS_SERVER
    reason = "redis-server is not installed (apt-get install -y redis-server); .ci/run installs it"
    if os.environ.get("MCP_KIT_REQUIRE_REDIS") == "1":
        pytest.fail(reason + ", and MCP_KIT_REQUIRE_REDIS=1 says these tests must run")
    pytest.skip(reason)


def _free_port(also_bus: bool = False) -> int:
    """A port free now on 127.0.0.1 (and, for a cluster node, port + 10000 too)."""
    for _ in range(50):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        if not also_bus or port + 10000 > 65535:
            if not also_bus:
                return port
            continue
        try:
            with socket.socket() as bus:
                bus.bind(("127.0.0.1", port + 10000))
        except OSError:
            continue
        return port
    raise RuntimeError("no free port pair found")


def ping(port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class RedisProcess:
    """One redis-server on 127.0.0.1."""

    def __init__(self, port: int, process: subprocess.Popen[bytes], workdir: Path) -> None:
        self.port = port
        self.process = process
        self.workdir = workdir

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


def start_redis(port: int | None = None, *, cluster: bool = False, attempts: int = 10) -> RedisProcess:
    """Start redis-server on `port` (a free one when None), ready when it answers PING."""
    binary = require_redis()
    last = ""
    for _ in range(attempts):
        chosen = port if port is not None else _free_port(also_bus=cluster)
        workdir = Path(tempfile.mkdtemp(prefix=f"mcp-kit-redis-{chosen}-"))
        command = [binary, "--port", str(chosen), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                   "--dir", str(workdir), "--protected-mode", "no"]
        if cluster:
            command += ["--cluster-enabled", "yes", "--cluster-config-file", str(workdir / "nodes.conf"),
                        "--cluster-node-timeout", "2000"]
        log_path = workdir / "redis.log"
        with open(log_path, "wb") as log:
            process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if process.poll() is not None:
                break
            if ping(chosen):
                STARTED_WORKDIRS.append(workdir)
                return RedisProcess(chosen, process, workdir)
            time.sleep(0.05)
        if process.poll() is None:
            process.kill()
        process.wait(10)
        out = log_path.read_text(errors="replace")
        shutil.rmtree(workdir, ignore_errors=True)
        last = out[-2000:]
        if "Address already in use" not in out:
            break
        time.sleep(0.2)
    raise RuntimeError(f"redis-server did not start: {last}")


@contextmanager
def redis_server() -> Iterator[RedisProcess]:
    server = start_redis()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(server.workdir, ignore_errors=True)


@contextmanager
def redis_cluster(nodes: int = 3) -> Iterator[list[RedisProcess]]:
    """A Redis Cluster of `nodes` masters on loopback, ready (cluster_state:ok)."""
    require_redis()
    started: list[RedisProcess] = []
    try:
        for _ in range(nodes):
            started.append(start_redis(cluster=True))
        addresses = [f"127.0.0.1:{node.port}" for node in started]
        subprocess.run([REDIS_CLI or "redis-cli", "--cluster", "create", *addresses, "--cluster-replicas", "0",
                        "--cluster-yes"], check=True, capture_output=True, timeout=60)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            info = subprocess.run([REDIS_CLI or "redis-cli", "-p", str(started[0].port), "cluster", "info"],
                                  capture_output=True, text=True, timeout=10).stdout
            if "cluster_state:ok" in info:
                break
            time.sleep(0.1)
        else:
            raise RuntimeError("the Redis Cluster did not become ready")
        yield started
    finally:
        for node in started:
            node.stop()
            shutil.rmtree(node.workdir, ignore_errors=True)
