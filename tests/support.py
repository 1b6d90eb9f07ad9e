"""Helpers shared by tests: real server subprocesses on 127.0.0.1, stopped by PID."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
COVERAGE_VARIABLES = ("COVERAGE_PROCESS_START", "COVERAGE_FILE")  # set by bin/test to measure every subprocess


def coverage_env() -> dict[str, str]:
    """Coverage's own variables, for a test that starts a process with an otherwise bare environment."""
    return {name: os.environ[name] for name in COVERAGE_VARIABLES if name in os.environ}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate a process we started, by PID; kill it if it does not exit."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@contextlib.contextmanager
def http_server(args: list[str], *, env: dict[str, str] | None = None, ready_timeout: float = 20.0,
                headers: dict[str, str] | None = None) -> Iterator[str]:
    """Run `python ARGS --transport http --port P` and yield its base URL once /healthz answers."""
    port = free_port()
    command = [sys.executable, *args, "--transport", "http", "--host", "127.0.0.1", "--port", str(port)]
    process = subprocess.Popen(command, cwd=ROOT, env={**os.environ, **(env or {})},
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + ready_timeout
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"server exited early: {process.stderr.read().decode()[-2000:]}")
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("server did not become ready")
            time.sleep(0.05)
        yield base
    finally:
        stop(process)
