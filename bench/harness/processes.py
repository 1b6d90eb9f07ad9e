"""Start and stop server processes by PID, and find free loopback ports."""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import IO

logger = logging.getLogger("bench.processes")
_live: dict[int, subprocess.Popen[bytes]] = {}


def spawn(
    argv: list[str], env: dict[str, str], cwd: Path, stderr: IO[bytes], pipes: bool
) -> subprocess.Popen[bytes]:
    """Start `argv`; with `pipes` stdin/stdout are unbuffered pipes (stdio transport), else /dev/null."""
    stream = subprocess.PIPE if pipes else subprocess.DEVNULL
    proc = subprocess.Popen(
        argv,
        stdin=stream,
        stdout=stream,
        stderr=stderr,
        cwd=str(cwd),
        env=env,
        bufsize=0,
        start_new_session=True,
    )
    _live[proc.pid] = proc
    return proc


def stop(proc: subprocess.Popen[bytes], grace_s: float = 3.0) -> int | None:
    """Stop one process by its PID: close its stdin, SIGTERM, wait, SIGKILL, wait. Returns the exit code."""
    try:
        if proc.poll() is None and proc.stdin is not None:
            _close_quietly(proc.stdin)
            _wait_quietly(proc, min(grace_s, 1.0))
        if proc.poll() is None:
            _signal_quietly(proc.pid, signal.SIGTERM)
            if _wait_quietly(proc, grace_s) is None:
                logger.warning(
                    "pid %d ignored SIGTERM for %.1f s; killing", proc.pid, grace_s
                )
        if proc.poll() is None:
            _signal_quietly(proc.pid, signal.SIGKILL)
            proc.wait(timeout=grace_s)
    finally:
        _live.pop(proc.pid, None)
        for stream in (proc.stdout, proc.stdin):
            if stream is not None:
                _close_quietly(stream)
    return proc.returncode


def _close_quietly(stream: IO[bytes]) -> None:
    try:
        stream.close()
    except OSError:
        pass


def _wait_quietly(proc: subprocess.Popen[bytes], timeout_s: float) -> int | None:
    try:
        return proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return None


def _signal_quietly(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def stop_all() -> None:
    """Stop every process spawned here that is still registered (used on exit and on Ctrl-C)."""
    for proc in list(_live.values()):
        stop(proc, grace_s=2.0)


def free_port() -> int:
    """Ask the kernel for a currently unused TCP port on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout_s: float) -> float:
    """Poll until 127.0.0.1:`port` accepts a connection; returns seconds waited. Raises if the process dies or time runs
    out."""
    started = time.perf_counter()
    deadline = started + timeout_s
    while time.perf_counter() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(
                f"server exited with code {proc.returncode} before listening on port {port}"
            )
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return time.perf_counter() - started
        except OSError:
            time.sleep(0.02)
    raise TimeoutError(f"server did not listen on port {port} within {timeout_s:.0f} s")
