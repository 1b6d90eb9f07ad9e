"""Helpers shared by tests: real server subprocesses on 127.0.0.1, stopped by PID.

HTTP servers never get a port guessed for them (binding a free port, releasing it and hoping
it is still free when the server binds is a race with every other process on the machine):
`http_server` starts a server on port 0 and reads the address it logs once it listens, and
`listening_socket` binds one the test keeps and hands to the server (`MCP_LISTEN_FD`) when the
port must be known before the server starts. `Meeting` proves calls run at the same time without a clock.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx

ROOT = Path(__file__).resolve().parents[2]
LISTENING = re.compile(r"serving MCP on http://127\.0\.0\.1:(\d+)/mcp")
COVERAGE_VARIABLES = ("COVERAGE_PROCESS_START", "COVERAGE_FILE")  # set by bin/test to measure every subprocess


def coverage_env() -> dict[str, str]:
    """Coverage's own variables, for a test that starts a process with an otherwise bare environment."""
    return {name: os.environ[name] for name in COVERAGE_VARIABLES if name in os.environ}


def process_ended(pid: int) -> bool:
    """Whether process `pid` has ended: gone, or a zombie its parent has not reaped yet (Linux: /proc)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):  # reaped; reading an entry as it vanishes fails with ESRCH
        return True
    return stat.rsplit(")", 1)[-1].split()[0] == "Z"


def stop(process: subprocess.Popen[Any], *readers: ProcessLog | threading.Thread) -> None:
    """Terminate a process we started, by PID; kill it if it does not exit. Its pipes are closed, once
    `readers` (threads or logs reading its pipes) have read to the end."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
    for reader in readers:
        reader.join(timeout=10)
    for pipe in (process.stdin, process.stdout, process.stderr):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()


class ProcessLog:
    """The lines a process writes to a pipe, read as they come (so it never blocks on a full pipe)."""

    def __init__(self, pipe: Any) -> None:
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self._ended = False
        self._reader = threading.Thread(target=self._read, args=(pipe,), daemon=True)
        self._reader.start()

    def _read(self, pipe: Any) -> None:
        for line in pipe:
            with self._changed:
                self.lines.append(line if isinstance(line, str) else line.decode("utf-8", "replace"))
                self._changed.notify_all()
        with self._changed:
            self._ended = True
            self._changed.notify_all()

    @property
    def text(self) -> str:
        with self._changed:
            return "".join(self.lines)

    def wait_for(self, pattern: re.Pattern[str] | str, timeout: float) -> re.Match[str]:
        """The first match of `pattern` in a line; RuntimeError when the output ends or `timeout` passes first."""
        compiled = re.compile(pattern) if isinstance(pattern, str) else pattern
        with self._changed:
            found = self._changed.wait_for(
                lambda: next((m for m in map(compiled.search, self.lines) if m), None) or self._ended, timeout)
            if isinstance(found, re.Match):
                return found
            why = "ended" if self._ended else f"said nothing matching within {timeout:g} s"
            raise RuntimeError(f"the process output {why} (waiting for {compiled.pattern!r}):\n"
                               + "".join(self.lines)[-2000:])

    def join(self, timeout: float = 10.0) -> None:
        self._reader.join(timeout)


@contextlib.contextmanager
def refused_port() -> Iterator[int]:
    """A port on 127.0.0.1 that refuses connections: bound by us (nobody else can take it), never listening."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def listening_socket() -> socket.socket:
    """A socket listening on 127.0.0.1 on a port the system picked, to hand to a server (`MCP_LISTEN_FD`)."""
    sock = socket.create_server(("127.0.0.1", 0))
    sock.set_inheritable(True)
    return sock


class ServerURL(str):
    """A server's base URL, and what the server has logged (`log`)."""

    log: ProcessLog
    process: subprocess.Popen[str]


@contextlib.contextmanager
def http_server(args: list[str], *, env: dict[str, str] | None = None, cwd: Path | str = ROOT,
                listen_on: socket.socket | None = None, ready_timeout: float = 30.0,
                log_level: str = "info") -> Iterator[ServerURL]:
    """Run `python ARGS --transport http` on 127.0.0.1 and yield its base URL once it serves.

    The server binds port 0 (or serves on `listen_on`, a socket the caller keeps) and logs the
    address it listens on; this waits for that line, then for its first `/healthz` answer. The
    URL's `log` has every line the server logs (at `log_level`).
    """
    command = [
        sys.executable,
        *args,
        "--transport",
        "http",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--log-level",
        log_level,
    ]
    pass_fds: tuple[int, ...] = ()
    env = {**os.environ, **(env or {})}
    if listen_on is not None:
        pass_fds = (listen_on.fileno(),)
        env["MCP_LISTEN_FD"] = str(listen_on.fileno())
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True, pass_fds=pass_fds)
    log = ProcessLog(process.stderr)
    try:
        base = ServerURL(f"http://127.0.0.1:{log.wait_for(LISTENING, ready_timeout).group(1)}")
        base.log = log
        base.process = process
        httpx.get(f"{base}/healthz", timeout=ready_timeout).raise_for_status()  # answered once the app has started
        yield base
    finally:
        stop(process, log)


class Meeting:
    """A place where `parties` concurrent calls wait for one another: an event-based proof of concurrency.

    Each call `attend()`s; none returns until all `parties` have arrived, so calls that run one after
    another never get past the first (the test's bounded wait fails instead). No clock is read.
    """

    def __init__(self, parties: int) -> None:
        self.parties = parties
        self.arrived = 0
        self._everyone_here = anyio.Event()

    async def attend(self) -> int:
        """Wait until every party has arrived; returns how many did."""
        self.arrived += 1
        if self.arrived >= self.parties:
            self._everyone_here.set()
        await self._everyone_here.wait()
        return self.arrived
