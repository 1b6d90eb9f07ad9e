"""`--workers N`: N processes serving one listening socket (pre-fork, POSIX).

The parent binds the socket once (port 0 works: every worker serves the port it got), forks N
workers that each run their own event loop and uvicorn server on that inherited socket (the
kernel hands each new connection to one of them), forwards SIGINT/SIGTERM to them, and exits
once they all have; a worker that dies is started again, at most `MAX_RESTARTS` times.

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

import logging
import os
import signal
import socket
import sys
import time
from collections.abc import Callable

logger = logging.getLogger("mcp_kit")

MAX_RESTARTS = 10


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


def serve_workers(sock: socket.socket, count: int, serve: Callable[[], None],
                  on_exit: Callable[[int], None] | None = None) -> None:
    """Run `serve()` in `count` forked workers sharing `sock`; returns when all have exited.
    `on_exit(pid)` is told of each worker that exited (multiprocess metrics forget its live gauges)."""
    if sys.platform == "win32":  # no fork(): a type checker sees the rest as POSIX-only
        raise SystemExit("--workers needs POSIX fork(); on this system run several processes behind a proxy")
    children: dict[int, int] = {}
    stopping = False

    def start(index: int) -> None:
        pid = os.fork()
        if pid == 0:  # the worker
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os._exit(run_worker(index, serve))
        children[pid] = index

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True
        for pid in list(children):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    for index in range(count):
        start(index)
    restarts = 0
    while children:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        index = children.pop(pid, -1)
        if on_exit is not None:
            on_exit(pid)
        if stopping or index < 0:
            continue
        code = os.waitstatus_to_exitcode(status)
        if restarts >= MAX_RESTARTS:
            logger.error("worker %d exited (%d); not restarted: %d restarts already", index, code, restarts)
            continue
        restarts += 1
        logger.warning("worker %d exited (%d); starting it again", index, code)
        time.sleep(min(5.0, 0.1 * 2 ** restarts))
        start(index)
