"""One upstream session of a proxy: a client connection to the server behind it, kept alive.

`Upstream.run` connects (`mcp_kit.client.connect`), serves until the connection ends, and connects
again with exponential backoff (a stdio server is started again, an HTTP one reconnected; a URL whose
Streamable HTTP `initialize` is refused is tried as legacy HTTP+SSE). A handshake-era downstream
session gets a handshake-era upstream session where the upstream speaks one (`mode="legacy"` first:
subscriptions, the log level and the upstream's own requests then pass as they are); 2026-07-28
requests get whatever the upstream speaks (`mode="auto"`). After a reconnect it restores what the
downstream had set up: the log level and the resource subscriptions. `hold_listen` keeps a downstream
listen stream's subscriptions upstream (a listen of its own, or `resources/subscribe`), through reconnects.

A closed stdio upstream gets `EXIT_GRACE` (0.5 s) to exit on end of input, then SIGTERM and `KILL_GRACE`
(0.5 s), then SIGKILL: the whole stop of an upstream takes about 1 s at most, within the 2 s a host in front of
the proxy gives the proxy to stop (the MCP SDKs' stdio clients do), since an upstream still running when the
proxy is killed would be left behind. Every upstream stops at once, not one after another.

`request` never hangs: it waits for a connection at most `connect_timeout` seconds, and a request in
flight when the connection dies is answered `UpstreamUnavailable` (retryable) at once, as is one
the upstream does not answer within `timeout`. An error the upstream answers (`MCPError`) passes
through unchanged: the upstream is alive and said no.

Imports the client, the errors and the targets.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable
from typing import Any

import anyio

from .._protocol.errors import MCPError, UpstreamUnavailable
from ..client._base import ClientHandler
from ..client._connect import connect
from ..client._errors import ClientError
from ..client._session import ClientSession
from .targets import Target

logger = logging.getLogger("mcp_kit.proxy")

NotificationSink = Callable[[dict[str, Any]], Any]
EXIT_GRACE = 0.5  # seconds a closed stdio upstream gets to exit on end of input, before SIGTERM
KILL_GRACE = 0.5  # seconds it gets after SIGTERM, before SIGKILL


def sane_capabilities(capabilities: Any) -> dict[str, Any]:
    """An upstream's capabilities as the proxy reads them: an object of objects. A capability declared by another
    truthy value (`"tools": true`) is declared with no options; what is not an object at all is none."""
    if not isinstance(capabilities, dict):
        return {}
    return {str(name): value if isinstance(value, dict) else {} for name, value in capabilities.items() if value}


def honored_of(params: Any) -> dict[str, Any]:
    """What an upstream's `notifications/subscriptions/acknowledged` says it honors: a dict, or {} when it is not one
    (a malformed acknowledgement is no acknowledgement)."""
    honored = params.get("notifications") if isinstance(params, dict) else None
    return honored if isinstance(honored, dict) else {}


class Upstream:
    """A lasting connection to one upstream server on behalf of one downstream session (or caller)."""

    def __init__(self, target: Target, *, handlers: dict[str, ClientHandler], on_notification: NotificationSink,
                 timeout: float = 600.0, connect_timeout: float = 15.0, backoff: tuple[float, float] = (0.1, 5.0),
                 client_name: str = "mcp-kit-proxy", mode: str = "auto") -> None:
        self.target = target
        self.mode = mode  # "legacy" first for a handshake-era downstream session; "auto" otherwise
        self.handlers = handlers
        self.on_notification = on_notification
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.backoff = backoff
        self.client_name = client_name
        self.session: ClientSession | None = None
        self.initialize_result: dict[str, Any] = {}
        self.last_error = ""
        self.connects = 0  # how many times a connection was made (restarts show as > 1)
        self.log_level: str | None = None
        self.subscriptions: set[str] = set()  # a handshake-era downstream's resources/subscribe
        self.watched: dict[str, int] = {}  # URIs downstream listen streams hold subscribed (handshake-era upstream)
        self._ready = anyio.Event()
        self._lists_heard = anyio.Event()  # set once this connection hears the upstream's list changes
        self._closed = False
        self._stop = anyio.Event()
        self._legacy_sse = False

    @property
    def name(self) -> str:
        return self.target.description

    async def run(self) -> None:
        """Connect, serve, reconnect with backoff; until `close`. Whatever one session of this upstream raises is
        logged with the upstream's name and ends that session only: the proxy's other work goes on."""
        delay = self.backoff[0]
        while not self._closed:
            try:
                served = await self._serve_once()
            except Exception as exc:  # a hostile or broken upstream: never the end of the proxy
                logger.exception("upstream %s: the session failed", self.name)
                self.last_error = f"the session failed ({type(exc).__name__}: {exc})"
                served = False
            if self._closed:
                break
            if served:
                delay = self.backoff[0]
            logger.warning("upstream %s: %s; connecting again in %.1f s", self.name, self.last_error or "ended", delay)
            with anyio.move_on_after(delay):
                await self._stop.wait()
            delay = min(delay * 2, self.backoff[1])

    async def _serve_once(self) -> bool:
        target = self.target
        env = {**os.environ, **target.env} if target.env else None
        try:
            async with connect(target.where, mode=self.mode, handlers=self.handlers,
                               on_notification=self.on_notification, env=env, cwd=target.cwd,
                               headers=dict(target.headers) or None, timeout=self.timeout,
                               init_timeout=self.connect_timeout, client_name=self.client_name,
                               on_stderr=lambda line: logger.debug("upstream %s: %s", self.name, line),
                               transport="sse" if self._legacy_sse else "auto",
                               exit_grace=EXIT_GRACE, kill_grace=KILL_GRACE) as session:
                self.initialize_result = self._sane(session.initialize_result)
                await self._restore(session)
                self.session = session
                self.connects += 1
                self._ready.set()
                with anyio.CancelScope() as scope:
                    self._scope = scope
                    async with anyio.create_task_group() as tg:
                        if session.stateless_version is not None:  # 2026-07-28: list changes come on a listen stream
                            self._lists_heard = anyio.Event()
                            tg.start_soon(self._listen, session)
                        else:
                            self._lists_heard.set()  # the handshake era: list changes come on the session
                        await session.ended.wait()
                        tg.cancel_scope.cancel()
                self.last_error = str(session.transport.closed_error or "the connection ended")
                return True
        except ClientError as exc:
            self.last_error = str(exc)
            if target.url is not None and not self._legacy_sse and "refused initialize" in str(exc):
                self._legacy_sse = True  # Streamable HTTP refused: the server may be a legacy HTTP+SSE one
            return False
        except MCPError as exc:
            self.last_error = f"the upstream refused to start a session: {exc.message}"
            if self.mode == "legacy":
                self.mode = "auto"  # a 2026-07-28-only server: talk its era
            return False
        except (TimeoutError, OSError) as exc:
            self.last_error = f"{type(exc).__name__}: {exc}"
            return False
        finally:
            self.session = None
            if self._ready.is_set():
                self._ready = anyio.Event()

    @staticmethod
    def _sane(result: Any) -> dict[str, Any]:
        """The upstream's `initialize` (or `server/discover`) answer with the shapes the proxy reads checked."""
        result = dict(result) if isinstance(result, dict) else {}
        result["capabilities"] = sane_capabilities(result.get("capabilities"))
        if not isinstance(result.get("instructions"), str):
            result.pop("instructions", None)
        return result

    async def _restore(self, session: ClientSession) -> None:
        """What the downstream had set up before a reconnect: the log level, the subscriptions."""
        if self.log_level is not None:
            try:
                await session.set_level(self.log_level)
            except MCPError:
                pass
        for uri in sorted(self.subscriptions | set(self.watched)):
            try:
                await session.subscribe(uri)
            except MCPError as exc:
                logger.warning("upstream %s: could not subscribe to %s again: %s", self.name, uri, exc.message)

    async def _listen(self, session: ClientSession) -> None:
        """Hold a `subscriptions/listen` open upstream for list changes (delivered to `on_notification`)."""
        caps = self.initialize_result.get("capabilities") or {}
        wanted = {flag: True for flag, kind in (("toolsListChanged", "tools"), ("promptsListChanged", "prompts"),
                                                ("resourcesListChanged", "resources"))
                  if (caps.get(kind) or {}).get("listChanged")}
        heard = self._lists_heard
        if not wanted:
            heard.set()
            return
        seen = len(session.notifications)

        def agreed(params: dict[str, Any]) -> bool:
            honored = honored_of(params)
            return "resourceSubscriptions" not in honored and any(honored.get(flag) is True for flag in wanted)

        async def acknowledged() -> None:
            with contextlib.suppress(TimeoutError):
                await session.wait_notification("notifications/subscriptions/acknowledged", where=agreed, after=seen,
                                                timeout=self.connect_timeout)
            heard.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(acknowledged)
            try:
                await session.request("subscriptions/listen", {"notifications": wanted}, timeout=float("inf"))
            except (MCPError, ClientError, TimeoutError) as exc:
                logger.debug("upstream %s: no listen stream: %s", self.name, exc)
            finally:
                heard.set()
                tg.cancel_scope.cancel()

    async def hearing_lists(self) -> None:
        """Wait (at most `connect_timeout`) until this session hears the upstream's list changes: at once in the
        handshake era, once its listen stream is acknowledged in 2026-07-28."""
        await self.connected()
        with anyio.move_on_after(self.connect_timeout):
            await self._lists_heard.wait()

    async def hold_listen(self, uris: list[str], ready: Callable[[], None]) -> None:
        """Hold upstream subscriptions to `uris` for a downstream listen stream until cancelled, through
        reconnects: a 2026-07-28 upstream gets a `subscriptions/listen` of its own, a handshake-era one
        `resources/subscribe` (restored by `_restore`). `ready()` once they are in place; what refuses
        them before that (the upstream's `MCPError`, `UpstreamUnavailable`) is raised. The first listen must be
        acknowledged, for exactly `uris`, within `connect_timeout` (after the connection, which waits as long):
        an upstream that acknowledges none, a subset, other URIs or a malformed acknowledgement is
        `UpstreamUnavailable`."""
        session = await self.connected()
        if session.stateless_version is None:
            await self._hold_subscribed(session, uris, ready)
            return
        acked = False
        while True:
            outcome, acked_now = await self._listen_once(session, uris, ready if not acked else None)
            if not (acked or acked_now):
                if isinstance(outcome, MCPError):
                    raise outcome
                if isinstance(outcome, str):
                    raise self.unavailable(outcome)
                raise self.unavailable(f"ended a listen before acknowledging it ({outcome or 'no reason'})")
            acked = True
            if isinstance(outcome, MCPError):  # refused on a later connection: nothing more to hold
                logger.warning("upstream %s: the listen for %s ended: %s", self.name, uris, outcome.message)
                return
            while True:
                if self._closed:
                    return
                if self.session is session:  # the stream ended, the connection did not: listen again shortly
                    with anyio.move_on_after(self.backoff[0]):
                        await self._stop.wait()
                try:
                    session = await self.connected()
                    break
                except UpstreamUnavailable:
                    continue

    async def _listen_once(self, session: ClientSession, uris: list[str],
                           ready: Callable[[], None] | None) -> tuple[Any, bool]:
        """One upstream listen for `uris`, held until it ends: (its error or None, whether it was acknowledged)."""
        ended = anyio.Event()
        outcome: list[Any] = []
        acked: list[bool] = []
        seen = len(session.notifications)

        def agreed(params: dict[str, Any]) -> bool:
            honored = honored_of(params).get("resourceSubscriptions")
            return (isinstance(honored, list) and all(isinstance(uri, str) for uri in honored)
                    and sorted(honored) == sorted(uris))

        async def hold() -> None:
            try:
                await session.request("subscriptions/listen", {"notifications": {"resourceSubscriptions": uris}},
                                      timeout=float("inf"))
                outcome.append(None)
            except (MCPError, ClientError, TimeoutError) as exc:
                outcome.append(exc)
            ended.set()

        async def acknowledged() -> None:
            try:
                await session.wait_notification("notifications/subscriptions/acknowledged", where=agreed, after=seen,
                                                timeout=self.connect_timeout if ready is not None else float("inf"))
            except TimeoutError:  # none, or not what was asked (a subset, other URIs, a malformed one)
                outcome.append(f"did not acknowledge a listen for {', '.join(uris)} within {self.connect_timeout:g} s")
                ended.set()
                return
            acked.append(True)
            if ready is not None:
                ready()

        async with anyio.create_task_group() as tg:
            tg.start_soon(hold)
            tg.start_soon(acknowledged)
            await ended.wait()
            tg.cancel_scope.cancel()
        return (outcome[0] if outcome else None), bool(acked)

    async def _hold_subscribed(self, session: ClientSession, uris: list[str], ready: Callable[[], None]) -> None:
        added: list[str] = []
        try:
            for uri in uris:
                if not self.watched.get(uri) and uri not in self.subscriptions:
                    await session.subscribe(uri)
                self.watched[uri] = self.watched.get(uri, 0) + 1
                added.append(uri)
            ready()
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(2):
                for uri in added:
                    self.watched[uri] -= 1
                    if not self.watched[uri]:
                        del self.watched[uri]
                        if uri not in self.subscriptions and self.session is not None:
                            with contextlib.suppress(MCPError, ClientError, TimeoutError):
                                await self.session.unsubscribe(uri)

    def close(self) -> None:
        self._closed = True
        self._stop.set()
        scope = getattr(self, "_scope", None)
        if scope is not None:
            scope.cancel()

    def unavailable(self, why: str) -> UpstreamUnavailable:
        return UpstreamUnavailable(f"The server behind this proxy ({self.name}) {why}. Try again in a moment; if it "
                                   "keeps failing, the server behind the proxy needs attention.",
                                   source=self.name, retryable=True, retry_after=1.0)

    async def connected(self) -> ClientSession:
        """The live session, waiting up to `connect_timeout` for one; `UpstreamUnavailable` otherwise."""
        if self.session is None:
            with anyio.move_on_after(self.connect_timeout):
                await self._ready.wait()
        session = self.session
        if session is None:
            raise self.unavailable(f"cannot be reached ({self.last_error or 'not connected yet'})")
        return session

    async def request(self, method: str, params: dict[str, Any] | None) -> Any:
        """One request upstream; its answer or its error, `UpstreamUnavailable` when there is none."""
        session = await self.connected()
        try:
            return await session.request(method, params, timeout=self.timeout)
        except ClientError as exc:
            raise self.unavailable(f"went away while answering {method} ({exc}); it is being restarted") from None
        except TimeoutError:
            raise self.unavailable(f"did not answer {method} within {self.timeout:g} s") from None

    async def notify(self, method: str, params: dict[str, Any] | None) -> None:
        session = self.session
        if session is not None:
            try:
                await session.notify(method, params)
            except ClientError:
                pass
