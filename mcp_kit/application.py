"""What an MCP server is made of: its registries, the facts derived from them, and the state its sessions share.

`Application` holds the tools, resources, templates, prompts and completions (registries in
`tools.py`, `resources.py`, `prompts.py`, `completions.py`), derives capabilities and server
info, fans notifications out to the connected sessions and `subscriptions/listen` streams, keeps
the audit trail and runs the lifespan. `MCPServer` (`server.py`) is this plus how to serve it.

The session layer depends on this module, never on `server.py`, so serving (`runner.py`, the
transports) can sit above the session without an import cycle. It never touches bytes or
streams, and imports neither the session, the server, the runner nor any transport.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol, TypeVar, overload

import anyio

from .audit import AuditHook, AuditRecord, JsonLinesAuditLog
from .completions import CompletionRegistry
from .context import Context
from .errors import MCPError
from .prompts import PromptEntry, make_prompt
from .resources import ResourceRegistry, make_resource, set_validator, validate_variables
from .subscriptions import DEFAULT_MAX_PER_SESSION, DEFAULT_MAX_TOTAL, SubscriptionHub
from .tools import ToolRegistry, make_tool
from .versions import shape_capabilities, shape_server_info

logger = logging.getLogger("mcp_kit.server")

F = TypeVar("F", bound=Callable[..., Any])
A = TypeVar("A", bound="Application")
Lifespan = Callable[[Any], contextlib.AbstractAsyncContextManager[Any]]  # called with the server


class ListChangeListener(Protocol):
    """A connected session or `subscriptions/listen` stream: told when a list of primitives changed."""

    def list_changed(self, kind: str) -> None: ...


class Application:
    """An MCP server's tools, resources, templates, prompts and completions, and the state its sessions share."""

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        title: str | None = None,
        instructions: str | None = None,
        lifespan: Lifespan | None = None,
        website_url: str | None = None,
        icons: list[dict[str, Any]] | None = None,
        page_size: int = 100,
        cache_ttl_ms: int = 60_000,
        cache_scope: str = "private",
        max_subscriptions_per_session: int = DEFAULT_MAX_PER_SESSION,
        max_subscriptions: int = DEFAULT_MAX_TOTAL,
    ) -> None:
        self.name = name
        self.version = version
        self.title = title
        self.instructions = instructions
        self.website_url = website_url
        self.icons = icons
        self.page_size = page_size
        self.cache_ttl_ms = cache_ttl_ms  # 2026-07-28 cache hints on lists and reads
        self.cache_scope = cache_scope
        self.listeners: set[ListChangeListener] = set()  # 2026-07-28 subscriptions/listen streams
        self.relay_list_changed: Callable[[str], None] | None = None  # tells the other processes (shared backend)
        self.tools = ToolRegistry()
        self.resources = ResourceRegistry()
        self.prompts: dict[str, PromptEntry] = {}
        self.completions = CompletionRegistry()
        self.hub = SubscriptionHub(max_subscriptions_per_session, max_subscriptions)
        self.sessions: set[ListChangeListener] = set()  # connected handshake-era sessions
        self.tool_hooks: list[AuditHook] = []  # audit hooks: tool calls and resource reads
        self.roots_hooks: list[Callable[[Any], Any]] = []
        self.lifespan_state: Any = None
        self._lifespan = lifespan
        self._running = 0
        self._loop: asyncio.AbstractEventLoop | None = None

    # ------------------------------------------------------------------ registration

    @overload
    def tool(self, fn: F) -> F: ...

    @overload
    def tool(self, fn: None = None, **options: Any) -> Callable[[F], F]: ...

    def tool(self, fn: Callable[..., Any] | None = None, **options: Any) -> Any:
        """Register a function as a tool: `@app.tool` or `@app.tool(name=..., read_only=True, ...)`."""
        if fn is not None:
            self.add_tool(fn)
            return fn

        def decorate(f: F) -> F:
            self.add_tool(f, **options)
            return f

        return decorate

    def add_tool(self, fn: Callable[..., Any], **options: Any) -> None:
        """Register (or replace) a tool; connected clients hear `tools/list_changed`."""
        self.tools.add(make_tool(fn, Context, **options))
        self._list_changed("tools")

    def remove_tool(self, name: str) -> None:
        if self.tools.remove(name):
            self._list_changed("tools")

    def resource(self, uri: str, **options: Any) -> Callable[[F], F]:
        """Register a resource; a URI with `{variables}` registers a template.

        Options: name, title, description, mime_type, icons, annotations, meta.
        """

        def decorate(fn: F) -> F:
            self.resources.add(make_resource(fn, uri, Context, **options))
            self._list_changed("resources")
            return fn

        return decorate

    def remove_resource(self, uri: str) -> None:
        if self.resources.remove(uri):
            self._list_changed("resources")

    def resource_validator(self, uri: str) -> Callable[[F], F]:
        """Check URIs of the resource or template `uri` without reading them: `fn(**variables[, ctx])`.

        It runs before every read and every subscription (`resources/subscribe`, `subscriptions/listen`),
        so a URI a read would refuse gets the same error when subscribed to. Raise `ResourceNotFound`
        (or another `MCPError`) to refuse; return to accept. Register the resource first.
        """

        def decorate(fn: F) -> F:
            entry = self.resources.fixed.get(uri) or self.resources.templates.get(uri)
            if entry is None:
                raise ValueError(f"no resource or template {uri!r} is registered; register it before its validator")
            set_validator(entry, fn, Context)
            return fn

        return decorate

    def resource_lister(self, fn: F) -> F:
        """Register a function returning extra resources for `resources/list`, computed per request."""
        self.resources.listers.append(fn)
        return fn

    def watcher(self, template: str) -> Callable[[F], F]:
        """Run `fn(uri, **variables)` while at least one client is subscribed to a URI matching `template`.

        When `template` is also a registered resource template, a URI whose variables fail its
        parameters' validation is never watched (so never polled upstream).
        """

        def decorate(fn: F) -> F:
            @functools.wraps(fn)  # keeps fn's signature visible to the hub
            async def checked(uri: str, **variables: Any) -> None:
                entry = self.resources.templates.get(template)
                if entry is not None:
                    try:
                        validate_variables(entry, uri, {name: variables[name] for name in entry.variables if name in variables})
                    except MCPError as exc:
                        logger.warning("not watching %s: %s", uri[:200], exc.message.replace("\n", " "))
                        return
                await fn(uri, **variables)

            self.hub.add_watcher(template, checked)
            return fn

        return decorate

    @overload
    def prompt(self, fn: F) -> F: ...

    @overload
    def prompt(self, fn: None = None, **options: Any) -> Callable[[F], F]: ...

    def prompt(self, fn: Callable[..., Any] | None = None, **options: Any) -> Any:
        """Register a prompt: `@app.prompt` or `@app.prompt(name=..., title=..., description=...)`."""

        def decorate(f: F) -> F:
            entry = make_prompt(f, Context, **options)
            self.prompts[entry.name] = entry
            self._list_changed("prompts")
            return f

        return decorate(fn) if fn is not None else decorate

    def remove_prompt(self, name: str) -> None:
        if self.prompts.pop(name, None) is not None:
            self._list_changed("prompts")

    def completion(self, ref: str, argument: str) -> Callable[[F], F]:
        """Register `fn(value, context_arguments) -> list[str]` completing a prompt argument or template variable."""

        def decorate(fn: F) -> F:
            self.completions.add(ref, argument, fn)
            return fn

        return decorate

    def on_roots_changed(self, fn: F) -> F:
        """Call `fn(session)` whenever a client's roots were (re)fetched."""
        self.roots_hooks.append(fn)
        return fn

    # ------------------------------------------------------------------ audit trail

    def add_audit_hook(self, hook: AuditHook) -> None:
        """Call `hook(record)` after every tool call and every resource read, allowed or refused.

        An `AuditRecord` has the same fields for both: time, session, primitive ("tool" or
        "resource"), tool or uri, arguments, outcome, error, duration.
        """
        self.tool_hooks.append(hook)

    add_tool_call_hook = add_audit_hook  # the earlier name; it also receives resource reads

    def enable_audit_log(self, path: str) -> None:
        """Append one JSON line per tool call and per resource read to `path`."""
        self.add_audit_hook(JsonLinesAuditLog(path))

    def record_tool_call(self, session_id: str, tool: str, arguments: Any, result: dict[str, Any], seconds: float) -> None:
        self._audit(AuditRecord.of(session_id, tool, arguments, result, seconds))

    def record_resource_read(self, session_id: str, uri: str, error: str | None, seconds: float) -> None:
        self._audit(AuditRecord.of_read(session_id, uri, error, seconds))

    def _audit(self, record: AuditRecord) -> None:
        for hook in self.tool_hooks:
            try:
                hook(record)
            except Exception:
                logger.exception("audit hook failed")

    # ------------------------------------------------------------------ protocol facts

    def capabilities(self, version: str) -> dict[str, Any]:
        """Capabilities derived from what is registered."""
        caps: dict[str, Any] = {"logging": {}}
        if len(self.tools):
            caps["tools"] = {"listChanged": True}
        if self.resources:
            caps["resources"] = {"subscribe": True, "listChanged": True}
        if self.prompts:
            caps["prompts"] = {"listChanged": True}
        if self.completions:
            caps["completions"] = {}
        return shape_capabilities(caps, version)

    def info(self, version: str) -> dict[str, Any]:
        return shape_server_info({"name": self.name, "version": self.version, "title": self.title,
                                  "websiteUrl": self.website_url, "icons": self.icons}, version)

    # ------------------------------------------------------------------ notifications

    def notify_resource_updated(self, uri: str) -> None:
        """Tell every client subscribed to `uri` that it changed (`notifications/resources/updated`).

        Safe to call from the event loop and from any thread (sync tools run in worker threads).
        """
        self._on_loop(self.hub.publish, uri)

    def _on_loop(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run `fn` inside a task on the server's event loop: now when already in one, else scheduled there.

        Called from worker threads (sync tools) and plain loop callbacks too. `fn` must run inside a
        task, not a bare callback: what it starts (`TaskGroup.start_soon`) needs to know the running
        async library, which sniffio, when installed, reads from the current task.
        """
        loop = self._loop
        if loop is None:
            fn(*args)
            return
        try:
            current = asyncio.get_running_loop()
        except RuntimeError:
            current = None
        if current is loop and asyncio.current_task() is not None:
            fn(*args)
        elif current is loop:
            loop.create_task(_call(fn, *args))
        else:
            asyncio.run_coroutine_threadsafe(_call(fn, *args), loop)

    def _list_changed(self, kind: str) -> None:
        self._on_loop(self._send_list_changed, kind)

    def _send_list_changed(self, kind: str) -> None:
        self.deliver_list_changed(kind)
        if self.relay_list_changed is not None:
            self.relay_list_changed(kind)

    def deliver_list_changed(self, kind: str) -> None:
        """Tell this process's sessions and listen streams that the list of `kind` changed."""
        for session in list(self.sessions):
            session.list_changed(kind)
        for listener in list(self.listeners):
            listener.list_changed(kind)

    def roots_changed(self, session: Any) -> None:
        for hook in self.roots_hooks:
            try:
                hook(session)
            except Exception:
                logger.exception("roots hook failed")

    # ------------------------------------------------------------------ running

    @contextlib.asynccontextmanager
    async def running(self: A) -> AsyncIterator[A]:
        """Enter the lifespan and start background work (watchers); re-entrant."""
        if self._running:
            self._running += 1
            try:
                yield self
            finally:
                self._running -= 1
            return
        self._running = 1
        self._loop = asyncio.get_running_loop()
        try:
            async with contextlib.AsyncExitStack() as stack:
                if self._lifespan is not None:
                    self.lifespan_state = await stack.enter_async_context(self._lifespan(self))
                async with anyio.create_task_group() as tg:
                    self.hub.attach(tg)
                    try:
                        yield self
                    finally:
                        self.hub.attach(None)
                        tg.cancel_scope.cancel()
        finally:
            self._running = 0
            self._loop = None


async def _call(fn: Callable[..., Any], *args: Any) -> None:
    """Call `fn` from inside a task (see `Application._on_loop`)."""
    try:
        fn(*args)
    except Exception:
        logger.exception("error while delivering a server notification")
