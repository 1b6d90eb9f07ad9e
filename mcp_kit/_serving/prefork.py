"""`--workers N`: N processes serving one listening socket (pre-fork, POSIX).

The parent (the supervisor) binds the socket once (port 0 works: every worker serves the port it
got), forks N workers that each run their own event loop and uvicorn server on that inherited
socket (the kernel hands each new connection to one of them), forwards SIGINT/SIGTERM to them, and
exits once they all have.

A worker that dies is started again after a backoff that doubles with its recent restarts (from
`RESTART_BACKOFF` up to `RESTART_BACKOFF_MAX` seconds); past `MAX_RESTARTS_PER_WINDOW` restarts
within `RESTART_WINDOW` seconds it waits until the window allows the next one. The rate is bounded,
not the count: a long-lived deployment keeps its N workers. Every restart is logged (stderr), as an
error once a worker keeps failing.

Workers do not outlive the supervisor, however it ends (`kill -9` too): each worker holds the read
end of a pipe whose only write end the supervisor holds; a thread of the worker blocks reading it,
and its end of file (the supervisor is gone) makes the worker stop itself with SIGTERM (uvicorn's
graceful stop), or exit outright `ORPHAN_EXIT_TIMEOUT` seconds later. No polling.

The supervisor waits on one wake-up pipe (`signal.set_wakeup_fd`: a child's exit, a stop signal)
with a timeout only while a restart is due, so a stop during a backoff is handled at once.

Why not uvicorn's own `workers=`: it imports the app from a string in each worker, and
`MCPServer.run()` serves an object built in the calling program (decorated functions, closures)
that cannot be re-imported by name. Why not SO_REUSEPORT: each worker would bind its own socket,
so port 0 would give each a different port, and the kernel's per-socket hashing balances worse
than one shared accept queue.

The processes share nothing in memory: `--workers` above 1 needs a shared backend
(`HttpOptions` refuses the in-memory one).

Imports nothing from mcp_kit.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import signal
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable

logger = logging.getLogger("mcp_kit")

RESTART_WINDOW = 60.0  # seconds over which a worker's restarts are counted
MAX_RESTARTS_PER_WINDOW = 5  # restarts of one worker within the window; further ones wait for it
RESTART_BACKOFF = 0.1  # seconds before the first restart; doubles with each recent one
RESTART_BACKOFF_MAX = 10.0
ORPHAN_EXIT_TIMEOUT = 30.0  # seconds an orphaned worker gets to stop gracefully before it exits outright


def run_worker(index: int, serve: Callable[[], None]) -> int:
    """Run `serve()` as worker `index`; its exit status (1 when it failed, logged)."""
    code = 0
    try:
        serve()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        logger.exception("worker %d failed", index)
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    return code


def watch_supervisor(index: int, supervisor_alive: int) -> threading.Thread:
    """In worker `index`: stop the process once `supervisor_alive` (the read end of a pipe whose write end only
    the supervisor holds) reports end of file, i.e. the supervisor is gone."""
    supervisor = os.getppid()

    def wait_for_end_of_file() -> None:
        with contextlib.suppress(OSError):
            while os.read(supervisor_alive, 1):  # nothing is ever written: this returns at end of file
                pass
        logger.warning("worker %d: its supervisor (pid %d) is gone; stopping", index, supervisor)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(ORPHAN_EXIT_TIMEOUT)  # still here: the graceful stop did not finish
        logger.error("worker %d: not stopped %g s after its supervisor died; exiting", index, ORPHAN_EXIT_TIMEOUT)
        os._exit(1)

    watcher = threading.Thread(target=wait_for_end_of_file, name="mcp_kit supervisor watch", daemon=True)
    watcher.start()
    return watcher


class RestartPacing:
    """When each worker may start again: a doubling backoff, and at most `MAX_RESTARTS_PER_WINDOW` restarts
    of one worker within `RESTART_WINDOW` seconds (read when the pacing is made)."""

    def __init__(self) -> None:
        self.window = RESTART_WINDOW
        self.per_window = MAX_RESTARTS_PER_WINDOW
        self.backoff = RESTART_BACKOFF
        self.backoff_max = RESTART_BACKOFF_MAX
        self._starts: dict[int, deque[float]] = {}  # worker -> when its recent restarts happen

    def next_start(self, index: int, code: int, now: float) -> float:
        """When worker `index`, which just exited with `code`, starts again (logged)."""
        starts = self._starts.setdefault(index, deque())
        while starts and now - starts[0] >= self.window:
            starts.popleft()
        delay = min(self.backoff_max, self.backoff * 2 ** len(starts))
        if len(starts) >= self.per_window:
            delay = max(delay, starts[0] + self.window - now)
            logger.error("worker %d exited (%d); it was restarted %d times in the last %g s: starting it again in "
                         "%.1f s", index, code, len(starts), self.window, delay)
        else:
            logger.warning("worker %d exited (%d); starting it again in %.1f s", index, code, delay)
        starts.append(now + delay)
        return now + delay


def serve_workers(sock: socket.socket, count: int, serve: Callable[[], None],
                  on_exit: Callable[[int], None] | None = None) -> None:
    """Run `serve()` in `count` forked workers sharing `sock`; returns when all have exited.
    `on_exit(pid)` is told of each worker that exited (multiprocess metrics forget its live gauges)."""
    if sys.platform == "win32":  # no fork(): a type checker sees the rest as POSIX-only
        raise SystemExit("--workers needs POSIX fork(); on this system run several processes behind a proxy")
    children: dict[int, int] = {}  # pid -> worker index
    due: dict[int, float] = {}  # worker index -> when it starts again
    pacing = RestartPacing()
    stopping = False
    supervisor_alive, held_by_supervisor = os.pipe()  # end of file for the workers once the supervisor is gone
    wake_read, wake_write = os.pipe()  # a byte per signal (a child exited, or stop)
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)

    def start(index: int) -> None:
        pid = os.fork()
        if pid == 0:  # the worker
            signal.set_wakeup_fd(-1)
            for fd in (held_by_supervisor, wake_read, wake_write):
                os.close(fd)
            for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD):
                signal.signal(signum, signal.SIG_DFL)
            watch_supervisor(index, supervisor_alive)
            os._exit(run_worker(index, serve))
        children[pid] = index

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True
        due.clear()
        for pid in list(children):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    def reap() -> None:
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:  # none left (reaped elsewhere)
                children.clear()
                return
            if pid == 0:
                return
            index = children.pop(pid, -1)
            if on_exit is not None:
                on_exit(pid)
            if not stopping and index >= 0:
                due[index] = pacing.next_start(index, os.waitstatus_to_exitcode(status), time.monotonic())

    previous = {signum: signal.signal(signum, handler) for signum, handler in
                ((signal.SIGINT, stop), (signal.SIGTERM, stop), (signal.SIGCHLD, lambda signum, frame: None))}
    previous_wakeup = signal.set_wakeup_fd(wake_write)
    try:
        for index in range(count):
            start(index)
        while children or due:
            timeout = max(0.0, min(due.values()) - time.monotonic()) if due else None
            select.select([wake_read], [], [], timeout)
            with contextlib.suppress(BlockingIOError):
                while os.read(wake_read, 512):
                    pass
            reap()
            now = time.monotonic()
            for index, when in list(due.items()):
                if when <= now and not stopping and due.pop(index, None) is not None:  # a stop may clear `due`
                    start(index)
    finally:
        signal.set_wakeup_fd(previous_wakeup)
        for signum, handler in previous.items():
            if handler is not None:  # None: not installed from Python, nothing to put back
                signal.signal(signum, handler)
        for fd in (supervisor_alive, held_by_supervisor, wake_read, wake_write):
            os.close(fd)
