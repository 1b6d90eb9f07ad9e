"""How each stdio handle is served: on the event loop, or by a worker thread.

The event loop can serve a handle only when the OS can poll it: pipes, sockets and terminals on
Linux and macOS. It cannot on Windows (the Proactor loop cannot read the anonymous pipes a desktop
app hands a child process), nor for `/dev/null`, regular files and character devices without poll
support, which is what `nohup`, systemd units and `docker run` without `-i` give a server. Handing
such a handle to the loop fails late and hard (uvloop aborts the process; asyncio fails inside a
callback), so the question is answered here first: only pipes, sockets and terminals qualify, and
only once the platform's own selector (epoll on Linux, kqueue on macOS) has accepted the handle.

`MCP_KIT_STDIO_MODE=auto|loop|threads` (or the `mode` argument of `choose_mode`) forces the choice,
so that both paths run in tests on any system. A forced `loop` on a handle the loop cannot poll
is refused with a warning and served by a thread instead: a working server beats an aborted one.

Must not import: session, server, other transports.
"""

from __future__ import annotations

import logging
import os
import selectors
import stat
import sys
from collections.abc import Mapping
from typing import Literal

logger = logging.getLogger("mcp_kit.stdio")

StdioMode = Literal["loop", "threads"]
MODE_ENV = "MCP_KIT_STDIO_MODE"
REQUESTS = ("auto", "loop", "threads")


def requested_mode(explicit: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """`auto`, `loop` or `threads`: the explicit argument, else the environment, else `auto`."""
    environ = os.environ if environ is None else environ
    value = (explicit or environ.get(MODE_ENV) or "auto").strip().lower()
    if value not in REQUESTS:
        source = "mode" if explicit else MODE_ENV
        raise ValueError(f"{source} must be one of {', '.join(REQUESTS)}; got {value!r}")
    return value


def why_loop_cannot_serve(fd: int, *, writing: bool, platform: str | None = None) -> str | None:
    """None when the event loop can poll `fd`; otherwise, in words, why it cannot."""
    if (platform or sys.platform) == "win32":
        return "on Windows the event loop cannot poll console handles or anonymous pipes"
    try:
        mode = os.fstat(fd).st_mode
    except OSError as exc:
        return f"it cannot be inspected ({exc.strerror})"
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)):
        return "it is a regular file" if stat.S_ISREG(mode) else "it is not a pipe, socket or terminal"
    if stat.S_ISCHR(mode) and not os.isatty(fd):  # /dev/null and kin: which of them kqueue/epoll accept varies
        return "it is a device other than a terminal"
    selector = selectors.DefaultSelector()
    try:
        selector.register(fd, selectors.EVENT_WRITE if writing else selectors.EVENT_READ)
    except (OSError, ValueError) as exc:
        return f"the OS cannot poll it ({getattr(exc, 'strerror', None) or exc})"
    finally:
        selector.close()
    return None


def choose_mode(fd: int, *, writing: bool, mode: str | None = None, platform: str | None = None) -> StdioMode:
    """`loop` when the event loop can serve `fd` (and threads are not forced), else `threads`."""
    request = requested_mode(mode)
    name = "stdout" if writing else "stdin"
    if request == "threads":
        reason: str | None = "threads were requested"
    else:
        reason = why_loop_cannot_serve(fd, writing=writing, platform=platform)
    if reason is None:
        logger.debug("%s: served on the event loop", name)
        return "loop"
    if request == "loop":
        logger.warning(
            "%s cannot be served on the event loop as requested: %s; served by a worker thread", name, reason
        )
    else:
        logger.debug("%s: served by a worker thread (%s)", name, reason)
    return "threads"
