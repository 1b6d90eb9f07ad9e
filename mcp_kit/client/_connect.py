"""`connect(target)`: pick the transport for a command line or URL, run the handshake, yield the session.

    TARGET                                   transport
    "python -m servers.stock" / ["python",...]  stdio subprocess
    http(s)://host/mcp                       Streamable HTTP
    http(s)://host/sse                       legacy HTTP+SSE (a path ending in /sse)
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from urllib.parse import urlsplit

import anyio
import httpx

from .._protocol.versions import LATEST_HANDSHAKE, is_stateless
from ._base import ClientHandler
from ._eras import check_mode
from ._legacy_sse import LegacySSETransport
from ._session import ClientSession, LogCallback, NotificationCallback
from ._stdio import EXIT_GRACE, StdioTransport
from ._streamable_http import StreamableHTTPTransport
from ._transport import Transport


def is_url(target: str | Sequence[str]) -> bool:
    return isinstance(target, str) and target.strip().lower().startswith(("http://", "https://"))


def open_transport(target: str | Sequence[str], *, env: dict[str, str] | None = None, cwd: str | None = None,
                   headers: dict[str, str] | None = None, on_stderr: Callable[[str], None] | None = None,
                   timeout: float = 30.0, auth: httpx.Auth | None = None, transport: str = "auto",
                   exit_grace: float = EXIT_GRACE, kill_grace: float = EXIT_GRACE) -> Transport:
    """The (not yet entered) transport for `target`: a URL, or a command line as a string or argv list.

    `auth` authorizes HTTP requests (e.g. `mcp_kit.client.oauth.OAuth`); stdio takes credentials from `env`.
    `transport` "sse" talks legacy HTTP+SSE to a URL whatever its path ("auto": a path ending in /sse does).
    `exit_grace`: the seconds a stdio server gets to exit once its stdin is closed, before SIGTERM; `kill_grace`:
    after SIGTERM, before SIGKILL.
    """
    if is_url(target):
        assert isinstance(target, str)
        url = target.strip()
        if transport == "sse" or urlsplit(url).path.rstrip("/").endswith("/sse"):
            return LegacySSETransport(url, headers=headers, timeout=timeout, auth=auth)
        return StreamableHTTPTransport(url, headers=headers, timeout=timeout, auth=auth)
    return StdioTransport(target, env=env, cwd=cwd, on_stderr=on_stderr, exit_grace=exit_grace,
                          kill_grace=kill_grace)


@contextlib.asynccontextmanager
async def connect(target: str | Sequence[str], *, timeout: float = 60.0, init_timeout: float | None = None,
                  protocol_version: str = LATEST_HANDSHAKE, handlers: dict[str, ClientHandler] | None = None,
                  on_log: LogCallback | None = None, on_notification: NotificationCallback | None = None,
                  on_stderr: Callable[[str], None] | None = None, env: dict[str, str] | None = None,
                  cwd: str | None = None, headers: dict[str, str] | None = None,
                  client_name: str = "mcp-kit", auth: httpx.Auth | None = None,
                  mode: str = "legacy", transport: str = "auto",
                  exit_grace: float = EXIT_GRACE, kill_grace: float = EXIT_GRACE) -> AsyncIterator[ClientSession]:
    """Connect to the server at `target` and yield an initialized `ClientSession`.

    `mode` picks the era: "legacy" (the default: the `initialize` handshake at `protocol_version`), "auto"
    (`server/discover` at 2026-07-28 first, falling back to `initialize`, as the official SDK's `mode="auto"`),
    or "2026-07-28" (discover only). `session.era` says which one was agreed.

    `timeout` bounds every request (and connecting); `init_timeout` the handshake (default: `timeout`).
    A stdio server is stopped on exit: stdin closed, `exit_grace` seconds, SIGTERM, `kill_grace` seconds, SIGKILL.
    Raises `ServerNotFound` / `ConnectionClosed` / `ClientError` when the server cannot be reached.
    """
    check_mode(mode)
    if is_stateless(protocol_version):
        mode = protocol_version
    opened = open_transport(target, env=env, cwd=cwd, headers=headers, on_stderr=on_stderr, timeout=timeout,
                            auth=auth, transport=transport, exit_grace=exit_grace,
                            kill_grace=kill_grace)
    try:
        async with opened, anyio.create_task_group() as tg:
            session = ClientSession(opened, handlers=handlers, on_log=on_log, on_notification=on_notification,
                                    client_name=client_name)
            session.default_timeout = timeout
            session.handshake_version = protocol_version if not is_stateless(protocol_version) else LATEST_HANDSHAKE
            tg.start_soon(session.run)
            try:
                await session.negotiate(mode, timeout=init_timeout)
                yield session
            finally:
                tg.cancel_scope.cancel()
    except BaseExceptionGroup as group:  # the task group wraps what the body raised; callers want it bare
        raise sole_exception(group) from None


def sole_exception(group: BaseExceptionGroup) -> BaseException:
    """The one exception inside (nested) single-member groups, else the group itself."""
    error: BaseException = group
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error
