"""`ProxySource`: the `Source` (`_app/sources.py`) of a proxy; `proxy(target)` builds the `MCPServer`.

Sessions: each downstream handshake-era session gets upstream sessions of its own (one per server
behind the proxy), opened on its first request and closed with it; 2026-07-28 requests, which have no
session, share upstream sessions pooled by the caller's identity (`callers.caller_of`: the OAuth
subject, else the connection, else the client's address), closed after `pool_idle` seconds unused;
each request's own client capabilities travel with it. Callers never share an upstream session.

Passing through, in both directions:
- requests: tools, prompts, resources, templates, completions, subscriptions, the log level; params
  and `_meta` as sent (but the 2026-07-28 envelope, which the upstream client writes for its own era),
  results shaped for the downstream's version;
- the upstream's questions (sampling, elicitation, roots) go to the downstream client through the
  request being forwarded (`ctx.channel.ask`: a round trip, or a 2026-07-28 input round, whose retry
  asks the upstream again and answers from the round); questions asked outside a request go to the
  downstream session;
- progress by token, log messages (the downstream's level applies), resource updates, list changes;
  cancellation (a cancelled downstream request cancels its upstream one).

Subscriptions: a handshake-era session's `resources/subscribe` is forwarded on its own upstream session.
A 2026-07-28 `subscriptions/listen` stream's `resourceSubscriptions` are held upstream, on the caller's
pooled sessions, while the stream is open (`ProxySource.watching`): a 2026-07-28 upstream gets a listen
stream of its own for those URIs, a handshake-era one `resources/subscribe`; the downstream stream is
acknowledged once the upstream has acknowledged (or answered), an upstream refusal (an unknown resource)
answers the downstream listen, as does `UpstreamUnavailable` when the upstream does not acknowledge exactly
those URIs within `connect_timeout` once connected (nothing, a subset, other URIs, a malformed
acknowledgement), and the upstream's updates reach that caller's streams only. List changes come on each
upstream session's own listen stream (or as handshake-era notifications) and reach every listen stream of
the proxy that opted in; a listen stream connects its caller's upstream sessions and is
acknowledged once they hear list changes, so a stream that is a caller's only request hears them too.

Names: one server is proxied as it is. Several (a client configuration) are namespaced by their names:
tool and prompt `files_read_file`, resource `files+file:///tmp/a` (and templates likewise); lists merge
every server's and paginate by the proxy's page size.

Tasks pass through: the upstream runs them, the proxy keeps no task of its own (so a task keeps the
upstream's store, TTL, questions and cancellation, and a tool the upstream runs only as a task works
through the proxy as it does directly). A task-augmented
`tools/call` (2026-07-28: the tasks extension declared in the request's capabilities, which reach the
upstream in its envelope; 2025-11-25: the `task` param) is forwarded as it is, and the upstream's answer
(a task, or a plain result when it runs the call plainly) comes back. `tasks/get`, `tasks/result`,
`tasks/update` and `tasks/cancel` go to the upstream that made the task, on the caller's own upstream
session (the downstream session's, or the caller's pooled one), so its questions during `tasks/result`
reach the downstream client through that request; `tasks/list` lists the caller's (with several servers,
every page of each that declares tasks, at most `TASK_PAGES`, and -32601 when none does); a 2025-11-25
upstream's `notifications/tasks/status` reach the downstream session. With several servers a task id
names its server as a URI does (`files+abc`). The proxy declares tasks (the extension for 2026-07-28,
the `tasks` capability for 2025-11-25) when a server behind it declared either generation; it does not
translate between the generations: each era's task shapes are the upstream's own in that era. A client
of a version without tasks (before 2025-11-25) gets plain calls (its `task` param is dropped) and no
`tasks/*` methods (-32601).

An upstream that fails answers `UpstreamUnavailable`: -31001, or for `tools/call` an `isError` result
with a message a model can act on. `scope_map` gives proxied primitives OAuth scopes (fnmatch patterns on
downstream names and URIs: `write_*=files:write`), checked as mcp_kit checks its own.

The application's tool transforms and hiding (`transform_tool`, `hide_tools`) apply before a request gets
here and after a list comes back (`_app/sourced.py`): `forward` sees a tool under the name this source lists
it by, which is the name `scope_map` matches. Mounted in a plain server, the source serves that server's
sessions: their requests reach `forward` with the parent's context, so upstream sessions are kept per
parent session (or caller), and the parent's `running()` runs this one.

Imports the application layer, the client, the upstream and the tasks' wire names; nothing of a transport.
"""

from __future__ import annotations

import contextlib
import contextvars
import fnmatch
import hashlib
import json
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard

import anyio
from anyio.abc import TaskGroup

from .._app.channel import LOG_LEVELS, RequestChannel
from .._app.context import Context
from .._app.methods import paginate
from .._primitives.content import error_result
from .._protocol.callers import caller_of
from .._protocol.errors import MCPError, UpstreamUnavailable, invalid_params, scope_refusal
from .._protocol.jsonrpc import METHOD_NOT_FOUND
from .._protocol.versions import (
    CLIENT_CAPABILITIES_KEY,
    LOG_LEVEL_KEY,
    PROTOCOL_VERSION_KEY,
    SERVER_INFO_KEY,
    is_stateless,
    shape_metadata,
    shape_tool,
    shape_tool_result,
)
from ..client._eras import current_question_key
from ..tasks._wire import LEGACY_TASKS_VERSION, RELATED_TASK_KEY, TASKS_EXTENSION
from .targets import Target
from .upstream import Upstream

logger = logging.getLogger("mcp_kit.proxy")
REQUEST_CANCELLED = -32800  # the answer to an upstream question whose downstream request ended

CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
ENVELOPE = (PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, LOG_LEVEL_KEY)
LISTS = {"tools/list": "tools", "prompts/list": "prompts", "resources/list": "resources",
         "resources/templates/list": "resourceTemplates"}
TASK_METHODS = frozenset({"tasks/get", "tasks/result", "tasks/update", "tasks/cancel", "tasks/list"})
LEGACY_TASKS_CAPABILITY: dict[str, Any] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
LIST_NAMES = {"tools/list": "name", "prompts/list": "name", "resources/list": "uri",
              "resources/templates/list": "uriTemplate"}  # what names an item of each list
LIST_PAGES = 1000  # the most pages of one upstream's list the proxy follows
TASK_PAGES = 100  # the most pages of one upstream's tasks/list the proxy follows
QUESTIONS = {"sampling/createMessage": "sampling", "elicitation/create": "elicitation", "roots/list": "roots"}
DEFAULT_CAPABILITIES = {"logging": {}, "tools": {"listChanged": True}, "prompts": {"listChanged": True},
                        "resources": {"subscribe": True, "listChanged": True}, "completions": {}}
_CURRENT: contextvars.ContextVar[Forwarded | None] = contextvars.ContextVar("mcp_kit_proxy_call", default=None)


TOOL_SCHEMAS_KEPT = 10_000  # tool schemas kept for the argument checks of transformed calls


@dataclass
class Forwarded:
    """A downstream request being answered upstream: where the upstream's progress, logs and questions go."""

    ctx: Context
    questions: set[anyio.CancelScope] = field(default_factory=set)

    def end(self) -> None:
        for scope in self.questions:  # a question still open (a 2026-07-28 round closed): it ends with the call
            scope.cancel()


class Link:
    """The upstream sessions of one downstream session (or pooled caller), one per server behind the proxy."""

    def __init__(self, source: ProxySource, key: str, capabilities: Mapping[str, Any]) -> None:
        self.source = source
        self.key = key
        self.capabilities = capabilities
        self.home: RequestChannel | None = None  # the downstream session's channel (handshake era)
        self.app: Any = None  # the proxy's application (its listen streams)
        self.upstreams: dict[str | None, Upstream] = {}
        self.calls: list[Forwarded] = []
        self.watchers: dict[tuple[str | None, str], set[Any]] = {}  # (namespace, upstream URI) -> listen streams
        self.streams = 0  # downstream listen streams open on this link
        self.used = time.monotonic()

    def upstream(self, namespace: str | None) -> Upstream:
        upstream = self.upstreams.get(namespace)
        if upstream is None:
            target = self.source.targets[namespace]
            handlers = {method: self._asker(method) for method, capability in QUESTIONS.items()
                        if capability in self.capabilities}
            upstream = Upstream(target, handlers=handlers, timeout=self.source.timeout,
                                mode="legacy" if self.key.startswith("session:") else "auto",
                                on_notification=lambda note: self._on_notification(namespace, note),
                                connect_timeout=self.source.connect_timeout, backoff=self.source.backoff)
            self.upstreams[namespace] = upstream
            self.source.start(upstream)
        return upstream

    @contextlib.asynccontextmanager
    async def watching(self, namespace: str | None, uris: list[str], listener: Any) -> AsyncIterator[None]:
        """Upstream subscriptions to `uris` (the upstream's own URIs) held for one downstream listen stream."""
        upstream = self.upstream(namespace)
        ready = anyio.Event()
        failed: list[Exception] = []
        scope = anyio.CancelScope()

        async def hold() -> None:
            with scope:
                try:
                    await upstream.hold_listen(uris, ready.set)
                except Exception as exc:  # refused (or unreachable): the downstream listen is answered with it
                    failed.append(exc)
                finally:
                    ready.set()

        keys = [(namespace, uri) for uri in uris]
        for key in keys:  # before the upstream acknowledges: an update right after it is not missed
            self.watchers.setdefault(key, set()).add(listener)
        try:
            self.source.spawn(hold)
            with anyio.move_on_after(2 * upstream.connect_timeout + 1):  # hold_listen's own bounds, and a margin
                await ready.wait()
            if failed:
                raise failed[0]
            if not ready.is_set():
                raise upstream.unavailable(f"did not acknowledge a listen for {', '.join(uris)} in time")
            yield
        finally:
            scope.cancel()
            for key in keys:
                listeners = self.watchers.get(key)
                if listeners is not None:
                    listeners.discard(listener)
                    if not listeners:
                        del self.watchers[key]
            self.used = time.monotonic()

    def close(self) -> None:
        for upstream in self.upstreams.values():
            upstream.close()
        for call in self.calls:
            call.end()

    def _current(self) -> Forwarded | None:
        call = _CURRENT.get()
        if call is not None:
            return call
        return self.calls[-1] if self.calls else None

    def _asker(self, method: str) -> Any:
        async def ask(params: dict[str, Any]) -> Any:
            call = _CURRENT.get()
            if call is None and method == "roots/list":  # roots belong to the session, not to a request
                if self.home is None:
                    return {"roots": []}  # 2026-07-28: roots are asked per request, and none asked
                return await self.home.ask(method, params, request_id=None, timeout=60, key=None)
            call = call or self._current()
            if call is None:
                if self.home is None:
                    raise MCPError(METHOD_NOT_FOUND, f"{method}: no downstream request is open to ask through")
                return await self.home.ask(method, params, request_id=None, timeout=300, key=None)
            ctx = call.ctx
            if not ctx.client_supports(QUESTIONS[method]):
                raise MCPError(METHOD_NOT_FOUND, f"the client behind the proxy does not offer {QUESTIONS[method]}")
            with anyio.CancelScope() as scope:
                call.questions.add(scope)
                try:
                    key = current_question_key() or question_key(method, params)  # the upstream's, when it has one
                    return await ctx.channel.ask(method, params, request_id=ctx.request_id, timeout=300, key=key)
                finally:
                    call.questions.discard(scope)
            raise MCPError(REQUEST_CANCELLED, f"{method}: the downstream request ended before the client answered")

        return ask

    async def _on_notification(self, namespace: str | None, note: dict[str, Any]) -> None:
        """An upstream's notification, passed on; one that cannot be (malformed, or the downstream gone) is logged
        and dropped: it never ends the upstream session."""
        try:
            await self._pass_on(namespace, note)
        except Exception as exc:
            logger.warning("proxy: a %s from %s was not passed on: %s: %s", note.get("method"),
                           self.source.targets[namespace].description, type(exc).__name__, exc)

    async def _pass_on(self, namespace: str | None, note: dict[str, Any]) -> None:
        method, params = note["method"], dict(note.get("params") or {})
        names = self.source.names
        if method == "notifications/tools/list_changed":  # the schemas seen may be stale: a call lists again
            prefix = names.outward_name(namespace, "")
            for name in [name for name in self.source.tool_schemas if name.startswith(prefix)]:
                del self.source.tool_schemas[name]
        await self._changed(namespace, method, params)
        if method == "notifications/progress":
            token, progress, total, message = (params.get(key) for key in ("progressToken", "progress", "total",
                                                                           "message"))
            if not is_number(progress):
                return  # no progress to report
            for each in reversed(self.calls):
                if each.ctx.progress_token is not None and each.ctx.progress_token == token:
                    await each.ctx.report_progress(progress, total if is_number(total) else None,
                                                   message if isinstance(message, str) else None)
                    return
            return
        if method == "notifications/message":
            level, from_logger = params.get("level"), params.get("logger")
            params["level"] = level if level in LOG_LEVELS else "info"  # an unknown level: still the upstream's log
            params["logger"] = from_logger if isinstance(from_logger, str) else None
            if params["logger"] is None:
                del params["logger"]
            call = self._current()
            if call is not None:
                await call.ctx.log(params["level"], params.get("data"), params.get("logger"))
            elif self.home is not None:
                await self.home.notify(method, params, None)
            return
        if self.home is None:  # 2026-07-28: list changes go to this process's listen streams
            if method.endswith("/list_changed") and self.app is not None:
                kind = method.split("/")[1]
                for listener in list(self.app.listeners):
                    listener.list_changed(kind)
            elif method == "notifications/resources/updated" and isinstance(params.get("uri"), str):
                for listener in list(self.watchers.get((namespace, params["uri"]), ())):  # this caller's streams
                    listener.resource_updated(names.outward_uri(namespace, params["uri"]))
            return
        if method == "notifications/resources/updated" and isinstance(params.get("uri"), str):
            params["uri"] = names.outward_uri(namespace, params["uri"])
            await self.home.notify(method, params, None)
        elif method == "notifications/tasks/status" and isinstance(params.get("taskId"), str):
            params["taskId"] = names.outward_uri(namespace, params["taskId"])
            await self.home.notify(method, params, None)
        elif method.endswith("/list_changed"):
            await self.home.notify(method, params or None, None)  # type: ignore[arg-type]


    async def _changed(self, namespace: str | None, method: str, params: dict[str, Any]) -> None:
        """A list change or a resource update upstream: the serving application's change hooks (a response
        cache) hear it before its clients do, so the list or read they make on hearing it is not stale."""
        app = self.app
        if app is None or not app.change_hooks:
            return
        if method.endswith("/list_changed"):
            kind, what = "list", method.split("/")[1]
        elif method == "notifications/resources/updated" and isinstance(params.get("uri"), str):
            kind, what = "resource", self.source.names.outward_uri(namespace, params["uri"])
        else:
            return
        for hook in list(app.change_hooks):
            try:
                await hook(kind, what)
            except Exception:
                logger.exception("change hook failed")


def is_number(value: Any) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def question_key(method: str, params: Mapping[str, Any]) -> str:
    """The key of an upstream's question in a 2026-07-28 round: the same question gets the same key on a retry."""
    digest = hashlib.sha256(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()[:16]
    return f"upstream_{method.split('/')[0]}_{digest}"


class Names:
    """The naming rule of a proxy: as it is for one server; `NS_name` and `NS+uri` for several."""

    def __init__(self, namespaces: Sequence[str | None]) -> None:
        self.namespaces = [ns for ns in namespaces if ns is not None]
        self.single = namespaces[0] if len(namespaces) == 1 else None
        self.multiple = len(namespaces) > 1

    def outward_name(self, namespace: str | None, name: str) -> str:
        return f"{namespace}_{name}" if self.multiple and namespace is not None else name

    def outward_uri(self, namespace: str | None, uri: str) -> str:
        return f"{namespace}+{uri}" if self.multiple and namespace is not None else uri

    def inward_name(self, name: Any, what: str) -> tuple[str | None, str]:
        if not isinstance(name, str):
            raise invalid_params(f"{what} needs 'name' (a string)")
        if not self.multiple:
            return self.single, name
        namespace, sep, rest = name.partition("_")
        if sep and namespace in self.namespaces and rest:
            return namespace, rest
        raise invalid_params(f"Unknown {what.split('/')[0].rstrip('s')} {name!r}: names here start with a server's "
                             f"name and '_' ({', '.join(n + '_' for n in self.namespaces)})")

    def inward_task(self, task_id: Any) -> tuple[str | None, str]:
        if not isinstance(task_id, str) or not task_id:
            raise invalid_params("'taskId' is required (the string a task-augmented call returned)")
        if not self.multiple:
            return self.single, task_id
        namespace, sep, rest = task_id.partition("+")
        if sep and namespace in self.namespaces and rest:
            return namespace, rest
        raise invalid_params(f"Unknown task {task_id!r}: task ids here start with a server's name and '+'",
                             {"taskId": task_id})

    def inward_uri(self, uri: Any) -> tuple[str | None, str]:
        if not isinstance(uri, str) or not uri:
            raise invalid_params("'uri' is required (a string)")
        if not self.multiple:
            return self.single, uri
        namespace, sep, rest = uri.partition("+")
        if sep and namespace in self.namespaces and rest:
            return namespace, rest
        raise MCPError(-32002, f"Resource not found: {uri} (URIs here start with a server's name and '+')",
                       {"uri": uri})


class ProxySource:
    """What a proxy's application forwards to: the servers behind it, one upstream session per downstream one."""

    def __init__(self, targets: Mapping[str | None, Target], *, scope_map: Mapping[str, Sequence[str]] | None = None,
                 timeout: float = 600.0, connect_timeout: float = 15.0, backoff: tuple[float, float] = (0.1, 5.0),
                 pool_idle: float = 300.0) -> None:
        self.targets = dict(targets)
        self.names = Names(list(self.targets))
        self.scope_map = {pattern: tuple(scopes) for pattern, scopes in (scope_map or {}).items()}
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.backoff = backoff
        self.pool_idle = pool_idle
        self.links: dict[str, Link] = {}
        self.upstream_capabilities: dict[str | None, dict[str, Any]] = {}
        self.instructions: str | None = None
        self.tool_schemas: dict[str, dict[str, Any]] = {}  # downstream tool name -> inputSchema, as last listed
        # (a server's are forgotten when it says its tools changed)
        self.probe_on_start = True
        self.on_probed: Callable[[], None] | None = None
        self._tg: TaskGroup | None = None

    # ------------------------------------------------------------------ Source

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[ProxySource]:
        async with anyio.create_task_group() as tg:
            self._tg = tg
            tg.start_soon(self._expire_idle)
            try:
                if self.probe_on_start:
                    await self.probe()
                    if self.on_probed is not None:
                        self.on_probed()
                yield self
            finally:
                for link in list(self.links.values()):
                    link.close()
                self.links.clear()
                self._tg = None
                tg.cancel_scope.cancel()

    def start(self, upstream: Upstream) -> None:
        if self._tg is None:
            raise UpstreamUnavailable("the proxy is not running (serve it, or enter app.running())", retryable=True)
        self._tg.start_soon(upstream.run)

    def spawn(self, work: Callable[[], Any]) -> None:
        if self._tg is None:
            raise UpstreamUnavailable("the proxy is not running (serve it, or enter app.running())", retryable=True)
        self._tg.start_soon(work)

    async def probe(self) -> None:
        """Connect to every server once, to declare their capabilities (what is unreachable: everything)."""
        link = Link(self, "probe", {})
        try:
            for namespace in self.targets:
                upstream = link.upstream(namespace)
                try:
                    await upstream.connected()
                except UpstreamUnavailable as exc:
                    logger.warning("proxy: %s", exc.message)
                    continue
                result = upstream.initialize_result
                self.upstream_capabilities[namespace] = dict(result.get("capabilities") or {})
                if "tools" in self.upstream_capabilities[namespace]:
                    with contextlib.suppress(MCPError, AssertionError):  # AssertionError: it pages forever
                        for tool in await upstream.session.list_tools() if upstream.session else []:
                            self._remember(namespace, tool)
                if not self.names.multiple and result.get("instructions"):
                    self.instructions = result["instructions"]
        finally:
            link.close()

    def capabilities(self, version: str) -> dict[str, Any]:
        known = [caps for ns, caps in self.upstream_capabilities.items() if ns in self.targets]
        if len(known) < len(self.targets):
            return json.loads(json.dumps(DEFAULT_CAPABILITIES))
        merged: dict[str, Any] = {"logging": {}}
        for caps in known:
            for key in ("tools", "prompts", "resources", "completions"):
                if key in caps:
                    merged.setdefault(key, {}).update(caps[key] or {})
        if any(declares_tasks(caps) for caps in known):
            if is_stateless(version):  # the upstream runs tasks: declared in the downstream's era
                merged["extensions"] = {TASKS_EXTENSION: {}}
            elif version == LEGACY_TASKS_VERSION:
                declared = [caps["tasks"] for caps in known if isinstance(caps.get("tasks"), dict)]
                merged["tasks"] = declared[0] if len(declared) == 1 else dict(LEGACY_TASKS_CAPABILITY)
        return merged

    def _remember(self, namespace: str | None, tool: Any) -> None:
        """Keep `tool`'s schema, the most recently listed `TOOL_SCHEMAS_KEPT` at most (an upstream may list new
        names on every page: the oldest go, and a transformed call of one lists again)."""
        if isinstance(tool, dict) and isinstance(tool.get("name"), str) and isinstance(tool.get("inputSchema"), dict):
            key = self.names.outward_name(namespace, tool["name"])
            self.tool_schemas.pop(key, None)
            self.tool_schemas[key] = tool["inputSchema"]
            if len(self.tool_schemas) > TOOL_SCHEMAS_KEPT:
                del self.tool_schemas[next(iter(self.tool_schemas))]

    def param_headers(self, name: str) -> dict[str, str]:
        properties = (self.tool_schemas.get(name) or {}).get("properties")
        if not isinstance(properties, dict):  # the upstream's schema: anything may come
            return {}
        return {arg: str(spec["x-mcp-header"]) for arg, spec in properties.items()
                if isinstance(spec, dict) and "x-mcp-header" in spec}

    def required_scopes(self, method: str, params: dict[str, Any]) -> tuple[str, ...]:
        if not self.scope_map:
            return ()
        if method in ("tools/call", "prompts/get"):
            key = params.get("name")
        elif method in ("resources/read", "resources/subscribe"):
            key = params.get("uri")
        else:
            return ()
        if not isinstance(key, str):
            return ()
        scopes = [scope for pattern, needed in self.scope_map.items() if fnmatch.fnmatchcase(key, pattern)
                  for scope in needed]
        return tuple(dict.fromkeys(scopes))

    @contextlib.asynccontextmanager
    async def watching(self, uris: list[str], listener: Any, ctx: Context) -> AsyncIterator[None]:
        """A downstream listen stream's resource subscriptions, held upstream on the caller's sessions while it is
        open; the upstream's updates reach that stream only. Refused as the upstream refuses (-32602 there);
        `UpstreamUnavailable` (-31001) when an upstream does not acknowledge within `connect_timeout` of connecting
        (each upstream's wait is bounded by twice `connect_timeout`, and a second more)."""
        link = self.link_for(ctx)
        link.streams += 1  # a pooled link with a stream open does not expire
        try:
            async with self._watching(link, uris, listener, ctx):
                yield
        finally:
            link.streams -= 1
            link.used = time.monotonic()

    @contextlib.asynccontextmanager
    async def _watching(self, link: Link, uris: list[str], listener: Any, ctx: Context) -> AsyncIterator[None]:
        for namespace in self.targets:  # connected: each upstream session's own listen brings its list changes
            with contextlib.suppress(UpstreamUnavailable):
                await link.upstream(namespace).hearing_lists()
        wanted: dict[str | None, list[str]] = {}
        for uri in uris:
            try:
                namespace, inner = self.names.inward_uri(uri)
            except MCPError as exc:
                raise invalid_params(exc.message, {"uri": uri}) from None
            refused = self._refusal(ctx, "resources/subscribe", {"uri": uri}, f"Resource {uri!r}")
            if refused is not None:
                raise MCPError(-31002, refused, {"error": "insufficient_scope"})
            wanted.setdefault(namespace, []).append(inner)
        async with contextlib.AsyncExitStack() as held:
            for namespace, inner_uris in wanted.items():
                await held.enter_async_context(link.watching(namespace, inner_uris, listener))
            yield

    def session_closed(self, session_id: str) -> None:
        for key in (f"session:{session_id}", f"caller:session:{session_id}"):
            for found in [k for k in self.links if k == key or k.startswith(key + "|")]:
                self.links.pop(found).close()

    # ------------------------------------------------------------------ sessions

    def link_for(self, ctx: Context) -> Link:
        if is_stateless(ctx.protocol_version):  # each request declares its own capabilities: the upstream's
            key = f"caller:{caller_of(ctx)}"     # session offers them all, each question checks its request's
            capabilities: dict[str, Any] = {cap: {} for cap in QUESTIONS.values()}
        else:
            key = f"session:{ctx.session_id}"
            capabilities = {cap: {} for cap in QUESTIONS.values() if ctx.client_supports(cap)}
        link = self.links.get(key)
        if link is None:
            link = self.links[key] = Link(self, key, capabilities)
            link.app = ctx.channel.app
            if not is_stateless(ctx.protocol_version):
                link.home = ctx.channel
        link.used = time.monotonic()
        return link

    async def _expire_idle(self) -> None:
        while True:
            await anyio.sleep(min(30.0, self.pool_idle))
            now = time.monotonic()
            for key, link in list(self.links.items()):
                if (key.startswith("caller:") and not link.calls and not link.streams
                        and now - link.used > self.pool_idle):
                    self.links.pop(key).close()

    # ------------------------------------------------------------------ forwarding

    async def forward(self, method: str, params: dict[str, Any], ctx: Context) -> Any:
        link = self.link_for(ctx)
        version = ctx.protocol_version
        names = self.names
        if method in LISTS:
            return await self._list(link, method, params, ctx)
        if method == "tools/call":
            namespace, name = names.inward_name(params.get("name"), "tools/call")
            refused = self._refusal(ctx, "tools/call", params, f"Tool {params.get('name')!r}")
            if refused is not None:
                return shape_tool_result(error_result(refused), version)
            forwarded = {**params, "name": name}
            if not is_stateless(version) and version != LEGACY_TASKS_VERSION:
                forwarded.pop("task", None)  # a version without tasks: a plain call, as mcp_kit runs its own
            try:
                result = await self._send(link, namespace, method, forwarded, ctx)
            except UpstreamUnavailable as exc:
                return shape_tool_result(error_result(exc.message), version)
            return shape_tool_result(self._outward_task(self._clean(result, version), namespace), version)
        if method == "prompts/get":
            namespace, name = names.inward_name(params.get("name"), "prompts/get")
            refused = self._refusal(ctx, method, params, f"Prompt {params.get('name')!r}")
            if refused is not None:
                raise MCPError(-31002, refused, {"error": "insufficient_scope"})
            return self._clean(await self._send(link, namespace, method, {**params, "name": name}, ctx), version)
        if method in ("resources/read", "resources/subscribe", "resources/unsubscribe"):
            namespace, uri = names.inward_uri(params.get("uri"))
            if method != "resources/unsubscribe":
                refused = self._refusal(ctx, method, params, f"Resource {params.get('uri')!r}")
                if refused is not None:
                    raise MCPError(-31002, refused, {"error": "insufficient_scope"})
            upstream = link.upstream(namespace)
            result = await self._send(link, namespace, method, {**params, "uri": uri}, ctx)
            if method == "resources/subscribe":
                upstream.subscriptions.add(uri)
            elif method == "resources/unsubscribe":
                upstream.subscriptions.discard(uri)
            elif method == "resources/read":
                for item in result.get("contents") or []:
                    if isinstance(item, dict) and isinstance(item.get("uri"), str):
                        item["uri"] = names.outward_uri(namespace, item["uri"])
            return self._clean(result, version)
        if method == "completion/complete":
            ref = dict(params.get("ref") or {})
            if ref.get("type") == "ref/prompt":  # completing needs the scopes of what it completes
                refused = self._refusal(ctx, "prompts/get", {"name": ref.get("name")},
                                        f"Completing prompt {ref.get('name')!r}")
            else:
                refused = self._refusal(ctx, "resources/read", {"uri": ref.get("uri")},
                                        f"Completing resource {ref.get('uri')!r}")
            if refused is not None:
                raise MCPError(-31002, refused, {"error": "insufficient_scope"})
            if ref.get("type") == "ref/prompt":
                namespace, ref["name"] = names.inward_name(ref.get("name"), "prompts/get")
            else:
                namespace, ref["uri"] = names.inward_uri(ref.get("uri"))
            return self._clean(await self._send(link, namespace, method, {**params, "ref": ref}, ctx), version)
        if method in TASK_METHODS:
            return await self._task_method(link, method, params, ctx)
        if method == "logging/setLevel":
            for namespace in self.targets:
                upstream = link.upstream(namespace)
                upstream.log_level = params.get("level")
                with contextlib.suppress(UpstreamUnavailable):
                    session = await upstream.connected()
                    await session.set_level(str(params.get("level")))  # 2026-07-28 upstream: in each envelope
            return {}
        raise MCPError(METHOD_NOT_FOUND, f"Method not found: {method}")

    async def _task_method(self, link: Link, method: str, params: dict[str, Any], ctx: Context) -> Any:
        """`tasks/*`: to the upstream that made the task, on the caller's upstream session (its id names the
        server when there are several: `NS+id`); `tasks/list` merges every page of each server's that declares
        tasks (or was not reached yet), and is -32601 when none does."""
        version = ctx.protocol_version
        if not is_stateless(version) and version != LEGACY_TASKS_VERSION:
            raise MCPError(METHOD_NOT_FOUND, f"Method not found: {method}")  # this version has no tasks
        if method == "tasks/list" and self.names.multiple:
            running = [ns for ns in self.targets if ns not in self.upstream_capabilities  # not reached yet: asked
                       or declares_tasks(self.upstream_capabilities[ns])]
            if not running:
                raise MCPError(METHOD_NOT_FOUND, f"Method not found: {method} (no server behind the proxy runs tasks)")
            tasks: list[Any] = []
            for namespace in running:
                tasks.extend(self._outward_task({"task": task}, namespace)["task"]
                             for task in await self._upstream_tasks(link, namespace, ctx))
            page_items, next_cursor = paginate(tasks, params, ctx.channel.app.page_size)
            merged: dict[str, Any] = {"tasks": page_items}
            if next_cursor is not None:
                merged["nextCursor"] = next_cursor
            return merged
        if method == "tasks/list":
            namespace, forwarded = self.names.single, params
        else:
            namespace, task_id = self.names.inward_task(params.get("taskId"))
            forwarded = {**params, "taskId": task_id}
        result = self._clean(await self._send(link, namespace, method, forwarded, ctx), version)
        if method == "tasks/list":
            return result
        return self._outward_task(result, namespace)

    async def _upstream_tasks(self, link: Link, namespace: str | None, ctx: Context) -> list[Any]:
        """Every task one upstream lists, following its `nextCursor` (at most `TASK_PAGES` pages, and never a
        cursor twice); what it lists before failing (logged) is kept."""
        tasks: list[Any] = []
        cursors: set[str] = set()
        params: dict[str, Any] = {}
        for _ in range(TASK_PAGES):
            try:
                page = await self._send(link, namespace, "tasks/list", params, ctx)
            except MCPError as exc:
                logger.warning("proxy: tasks/list on %s: %s", namespace, exc.message)
                break
            listed = page.get("tasks")
            tasks.extend(task for task in (listed if isinstance(listed, list) else []) if isinstance(task, dict))
            cursor = page.get("nextCursor")
            if not isinstance(cursor, str) or not cursor or cursor in cursors:
                break
            cursors.add(cursor)
            params = {"cursor": cursor}
        else:
            logger.warning("proxy: tasks/list on %s: still paginating after %d pages; the rest is left out",
                           namespace, TASK_PAGES)
        return tasks

    def _outward_task(self, result: dict[str, Any], namespace: str | None) -> dict[str, Any]:
        """A result naming an upstream task, with the task's id as the proxy names it (`NS+id` for several)."""
        if not self.names.multiple:
            return result
        for holder in (result, result.get("task")):  # 2026-07-28's flat task, 2025-11-25's {"task": ...}
            if isinstance(holder, dict) and isinstance(holder.get("taskId"), str):
                holder["taskId"] = self.names.outward_uri(namespace, holder["taskId"])
        meta = result.get("_meta")
        related = meta.get(RELATED_TASK_KEY) if isinstance(meta, dict) else None
        if isinstance(meta, dict) and isinstance(related, dict) and isinstance(related.get("taskId"), str):
            result["_meta"] = {**meta, RELATED_TASK_KEY: {**related, "taskId": self.names.outward_uri(
                namespace, related["taskId"])}}
        return result

    def _refusal(self, ctx: Context, method: str, params: dict[str, Any], what: str) -> str | None:
        needed = self.required_scopes(method, params)
        if needed and ctx.principal is not None:
            missing = ctx.principal.missing(needed)
            if missing:
                return scope_refusal(what, missing)
        return None

    async def _send(self, link: Link, namespace: str | None, method: str, params: dict[str, Any],
                    ctx: Context) -> Any:
        upstream = link.upstream(namespace)
        call = Forwarded(ctx)
        link.calls.append(call)
        reset = _CURRENT.set(call)
        try:
            await upstream.connected()  # the envelope sent depends on the era the upstream session speaks
            result = await upstream.request(method, outbound(params, ctx, upstream, method))
        finally:
            _CURRENT.reset(reset)
            link.calls.remove(call)
            call.end()
            link.used = time.monotonic()
        return result if isinstance(result, dict) else {}

    async def _list(self, link: Link, method: str, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        key = LISTS[method]
        version = ctx.protocol_version
        if not self.names.multiple:
            result = self._clean(await self._send(link, self.names.single, method, params, ctx), version)
            result[key] = self._shaped(method, result.get(key), None, version)
            return result
        items: list[Any] = []
        for namespace in self.targets:
            cursor: Any = None
            cursors: set[str] = set()
            for _ in range(LIST_PAGES):
                page_params = {"cursor": cursor} if cursor else {}
                try:
                    page = await self._send(link, namespace, method, page_params, ctx)
                except UpstreamUnavailable as exc:
                    logger.warning("proxy: %s", exc.message)
                    break
                except MCPError:
                    break  # this server has none of these
                items.extend(self._shaped(method, page.get(key), namespace, version))
                cursor = page.get("nextCursor")
                if not isinstance(cursor, str) or not cursor or cursor in cursors:
                    break  # the end (or a cursor seen before: the rest would be the same again)
                cursors.add(cursor)
        firsts: dict[str, Any] = {}
        for item in items:  # each name once (a page an upstream gave twice): its first
            firsts.setdefault(item[LIST_NAMES[method]], item)
        items = list(firsts.values())
        page_items, next_cursor = paginate(items, params, ctx.channel.app.page_size)
        merged: dict[str, Any] = {key: page_items}
        if next_cursor is not None:
            merged["nextCursor"] = next_cursor
        return merged

    def _shaped(self, method: str, items: Any, namespace: str | None, version: str) -> list[Any]:
        """A page's items as the downstream gets them: only objects with the name (or URI) they are listed by."""
        named = LIST_NAMES[method]
        if not isinstance(items, list):
            return []
        return [self._shape(method, item, namespace, version) for item in items
                if isinstance(item, dict) and isinstance(item.get(named), str)]

    def _shape(self, method: str, item: Any, namespace: str | None, version: str) -> Any:
        if not isinstance(item, dict):
            return item
        if method == "tools/list":
            self._remember(namespace, item)
        item = dict(item)
        if method in ("tools/list", "prompts/list") and isinstance(item.get("name"), str):
            item["name"] = self.names.outward_name(namespace, item["name"])
        elif method == "resources/list" and isinstance(item.get("uri"), str):
            item["uri"] = self.names.outward_uri(namespace, item["uri"])
        elif method == "resources/templates/list" and isinstance(item.get("uriTemplate"), str):
            item["uriTemplate"] = self.names.outward_uri(namespace, item["uriTemplate"])
        return shape_tool(item, version) if method == "tools/list" else shape_metadata(item, version)

    @staticmethod
    def _clean(result: Any, version: str) -> dict[str, Any]:
        """An upstream result without what its era added for itself (a handshake-era downstream gets none)."""
        if not isinstance(result, dict):
            return {}
        out = dict(result)
        meta = out.get("_meta")
        if isinstance(meta, dict) and SERVER_INFO_KEY in meta:
            meta = {k: v for k, v in meta.items() if k != SERVER_INFO_KEY}
            if meta:
                out["_meta"] = meta
            else:
                out.pop("_meta")
        if not is_stateless(version):
            for key in ("resultType", "ttlMs", "cacheScope"):
                out.pop(key, None)
        return out


def declares_tasks(capabilities: Any) -> bool:
    """Whether a server's capabilities declare tasks, in either generation (2025-11-25's `tasks`, the extension)."""
    if not isinstance(capabilities, dict):
        return False
    extensions = capabilities.get("extensions")
    return "tasks" in capabilities or (isinstance(extensions, dict) and TASKS_EXTENSION in extensions)


def outbound(params: dict[str, Any], ctx: Context, upstream: Upstream, method: str = "") -> dict[str, Any]:
    """The params sent upstream: as received, without the downstream's 2026-07-28 envelope (the upstream client
    writes its own) or its input round's answers (but `tasks/update`'s, which are the task's), with the
    downstream's log level when it opted in to logs."""
    out = dict(params)
    if method != "tasks/update":
        out.pop("inputResponses", None)
        out.pop("requestState", None)
    meta = out.get("_meta")
    if isinstance(meta, dict):
        kept = {k: v for k, v in meta.items() if k not in ENVELOPE}
        if kept:
            out["_meta"] = kept
        else:
            out.pop("_meta")
    session = upstream.session
    if session is not None and session.stateless_version is not None:  # a 2026-07-28 upstream: per request
        out.setdefault("_meta", {})[CLIENT_CAPABILITIES_KEY] = dict(ctx.channel.client_capabilities)
        level = ctx.channel.log_threshold
        if level is not None:
            out.setdefault("_meta", {})[LOG_LEVEL_KEY] = level
    return out
