"""What an MCP server is made of: its registries, the facts derived from them, and the state its sessions share.

`Application` holds the tools, resources, templates, prompts and completions (registries in
`_primitives/tools.py`, `_primitives/resources.py`, `_primitives/prompts.py`, `_primitives/completions.py`), derives
capabilities and server
info, fans notifications out to the connected sessions and `subscriptions/listen` streams, keeps
the audit trail and runs the lifespan. `MCPServer` (`_serving/server.py`) is this plus how to serve it.

The session layer depends on this module, never on `_serving/server.py`, so serving (`_serving/serve.py`, the
transports) can sit above the session without an import cycle. It never touches bytes or
streams, and imports neither the session, the server, the serving code nor any transport.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, Protocol, TypeVar, overload

import anyio

from .._backends.base import Backend
from .._backends.memory import MemoryBackend
from .._execution.executors import Executors, RunIn
from .._execution.threads import DEFAULT_SWITCH_INTERVAL
from .._primitives.completions import CompletionRegistry
from .._primitives.prompts import PromptEntry, make_prompt
from .._primitives.resources import ResourceRegistry, make_resource, set_validator, validate_variables
from .._primitives.signature import DefinitionError, report
from .._primitives.tools import ToolRegistry, make_tool
from .._protocol.errors import MCPError
from .._protocol.versions import is_stateless, shape_capabilities, shape_server_info
from ..skills import EXTENSION_ID as SKILLS_EXTENSION
from ..skills import Skill, SkillCatalog
from ..tasks import InMemoryTaskStore, TaskSettings, TaskStore
from ..tasks._runner import TaskRunner
from ..tasks._store import DEFAULT_MAX_TASKS_PER_CALLER
from ..tasks._wire import TASKS_EXTENSION
from .audit import AuditHook, AuditRecord, AuditTrail, JsonLinesAuditLog
from .context import Context
from .pipeline import Middleware, Pipeline, build_pipeline
from .state import StateLimits
from .subscriptions import DEFAULT_MAX_PER_SESSION, DEFAULT_MAX_TOTAL, SubscriptionHub

logger = logging.getLogger("mcp_kit.server")

F = TypeVar("F", bound=Callable[..., Any])
A = TypeVar("A", bound="Application")
# Where the built-in middleware sit in the chain, outermost first; the server's own middleware follow them.
BUILTIN_ORDER = ("telemetry", "request_log", "audit", "rate_limit", "mask_errors", "result_size", "cache", "timeouts")
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
        task_store: TaskStore | None = None,
        task_settings: TaskSettings | None = None,
        max_running_tasks: int = 100,
        max_tasks_per_caller: int = DEFAULT_MAX_TASKS_PER_CALLER,
        max_sync_threads: int | None = None,
        max_tool_processes: int | None = None,
        switch_interval: float | None = DEFAULT_SWITCH_INTERVAL,
        middleware: Sequence[Middleware] = (),
        list_by_scope: bool = False,
        mask_errors: bool | None = None,
    ) -> None:
        """`middleware`: run around every request, in order, the first outermost (see `add_middleware`);
        `list_by_scope`: lists show a caller only what its OAuth scopes allow, and a hidden tool answers as an
        unknown one; `mask_errors`: unexpected exceptions reach clients as an error id only (None: over HTTP
        yes, over stdio no; see `mcp_kit.middleware.MaskErrors`).
        `max_sync_threads`: plain (def) tools running at once, each on a worker thread (default
        min(32, CPUs + 4)); `max_tool_processes`: the process pool of `run_in="process"` tools (default: the
        CPUs); `switch_interval`: the interpreter's GIL switch interval while a sync tool has been running for
        5 ms or more (None: leave it alone).
        See `_execution/threads.py` and `_execution/processes.py`.

        `max_running_tasks`: task functions running at once (more tasks wait, `working`, for a place);
        `max_tasks_per_caller`: tasks one caller (`callers.caller_identity`) may hold in the default
        stores (in memory, or Redis with a shared backend) until they expire; a `task_store` you pass
        keeps its own limits."""
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
        self.executors = Executors(max_sync_threads, max_tool_processes, switch_interval)
        self.resources = ResourceRegistry()
        self.prompts: dict[str, PromptEntry] = {}
        self.completions = CompletionRegistry()
        self.hub = SubscriptionHub(max_subscriptions_per_session, max_subscriptions)
        self.sessions: set[ListChangeListener] = set()  # connected handshake-era sessions
        self.audit_hooks: list[AuditHook] = []  # audit hooks: tool calls and resource reads
        self.roots_hooks: list[Callable[[Any], Any]] = []
        self.lifespan_state: Any = None
        self.max_tasks_per_caller = max_tasks_per_caller
        self.task_store: TaskStore = (task_store if task_store is not None
                                      else InMemoryTaskStore(max_tasks_per_caller=max_tasks_per_caller))
        self.task_store_given = task_store is not None  # False: a shared backend may replace the default store
        self.task_settings = task_settings or TaskSettings()
        self.task_runner = TaskRunner(self.task_store, max_running=max_running_tasks)
        self.skills: SkillCatalog | None = None  # SEP-2640 skills, once add_skills was called
        self.backend: Backend = MemoryBackend()  # ctx.state, rate limits, the response cache; `attached` shares it
        self.state_limits = StateLimits()
        # awaited before a change on this process is fanned out: ("resource", uri) or ("list", "tools"|...)
        self.change_hooks: list[Callable[[str, str], Awaitable[None]]] = []
        self.list_by_scope = list_by_scope
        self.mask_errors = mask_errors
        self.middleware: list[Middleware] = []  # the server's own, in order (after the built-ins)
        self.builtin_middleware: dict[str, Middleware] = {}  # by slot (BUILTIN_ORDER)
        self.pipeline: Pipeline | None = None  # the composed chain; None: no middleware, routes called directly
        for each in middleware:
            self.add_middleware(each)
        self._lifespan = lifespan
        self._running = 0
        self._loop: asyncio.AbstractEventLoop | None = None

    # ------------------------------------------------------------------ registration

    @overload
    def tool(self, fn: F, **options: Any) -> F: ...

    @overload
    def tool(self, fn: None = None, **options: Any) -> Callable[[F], F]: ...

    def tool(self, fn: Callable[..., Any] | None = None, **options: Any) -> Any:
        """Register a function as a tool: `@app.tool` or `@app.tool(name=..., read_only=True, ...)`.

        A plain (def) function runs on a worker thread; `run_in="process"` runs it in the server's process
        pool instead (CPU-heavy work: a top-level, picklable function taking picklable arguments).
        """
        if fn is not None:  # `app.tool(fn)` or `app.tool(fn, name=...)`: registered now, options included
            self.add_tool(fn, **options)
            return fn

        def decorate(f: F) -> F:
            self.add_tool(f, **options)
            return f

        return decorate

    def add_tool(self, fn: Callable[..., Any], *, run_in: RunIn | None = None, **options: Any) -> None:
        """Register (or replace) a tool; connected clients hear `tools/list_changed`."""
        executor = self.executors.executor_for(fn, run_in, options.get("name") or fn.__name__, Context)
        try:
            tool = make_tool(fn, Context, executor=executor, **options)
        except DefinitionError as exc:
            report(exc)  # raises, but inside `collecting_problems()` (mcp-kit check): recorded, tool left out
            return
        self.tools.add(tool)
        if options.get("timeout") is not None and "timeouts" not in self.builtin_middleware:
            from ..middleware._timeouts import Timeouts  # a tool's own limit needs the middleware enforcing it

            self.set_builtin_middleware("timeouts", Timeouts())
        self._list_changed("tools")

    def remove_tool(self, name: str) -> None:
        if self.tools.remove(name):
            self._list_changed("tools")

    def use_task_store(self, store: TaskStore) -> None:
        """Keep tasks in `store` from now on (before any task starts): how a shared backend makes a task
        started on one process visible, cancellable and fetchable on every other."""
        self.task_store = store
        self.task_runner.store = store

    def add_skills(self, path: Any, *, prefix: str | None = None, strict: bool = True) -> list[Skill]:
        """Serve the Agent Skills under `path` (SEP-2640): every directory with a `SKILL.md` is a skill.

        Each file is a `skill://<prefix>/<name>/<file>` resource; `skills/list`, `skills/get` and
        `resources/directory/read` enumerate them. `prefix` ("acme/billing") adds an organisational
        path. Raises `SkillError` listing every problem (with `strict=False`: leaves bad skills
        out, logging why). Files are read now (a snapshot); connected clients hear
        `resources/list_changed`. Returns the skills added.
        """
        if self.skills is None:
            self.skills = SkillCatalog(page_size=min(self.page_size, 50))
            self.resources.listers.append(self.skills.resources)
        added = self.skills.add_directory(path, prefix=prefix, strict=strict)
        self._list_changed("resources")
        return added

    def supports_tasks(self) -> bool:
        """Whether some tool may run as a task (then the tasks capability and methods exist)."""
        return any(tool.task_support != "forbidden" for tool in self.tools)

    def resource(self, uri: str, **options: Any) -> Callable[[F], F]:
        """Register a resource; a URI with `{variables}` registers a template.

        Options: name, title, description, mime_type, icons, annotations, meta.
        """

        def decorate(fn: F) -> F:
            try:
                entry = make_resource(fn, uri, Context, **options)
            except DefinitionError as exc:
                report(exc)
                return fn
            self.resources.add(entry)
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
                        validate_variables(
                            entry, uri, {name: variables[name] for name in entry.variables if name in variables}
                        )
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
            try:
                entry = make_prompt(f, Context, **options)
            except DefinitionError as exc:
                report(exc)
                return f
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

    # ------------------------------------------------------------------ middleware

    def add_middleware(self, middleware: Middleware) -> None:
        """Run `middleware` around every request from now on, inside the middleware added before it.

        The chain is composed here, once, not per request. A middleware with a `bind(app)` method
        is told the application it serves (the response cache listens for changes through it).
        """
        if not isinstance(middleware, Middleware):
            raise TypeError(f"add_middleware takes an mcp_kit.Middleware, not {type(middleware).__name__}")
        self.middleware.append(middleware)
        _bind(middleware, self)
        self._compose()

    def set_builtin_middleware(self, slot: str, middleware: Middleware | None) -> None:
        """Put (or, with None, remove) a built-in middleware in its fixed place of the chain (`BUILTIN_ORDER`)."""
        if slot not in BUILTIN_ORDER:
            raise ValueError(f"unknown built-in middleware slot {slot!r}; one of {', '.join(BUILTIN_ORDER)}")
        if middleware is None:
            self.builtin_middleware.pop(slot, None)
        else:
            self.builtin_middleware[slot] = middleware
            _bind(middleware, self)
        self._compose()

    def mask_errors_for(self, transport: str) -> None:
        """Install error masking for serving over `transport` ("stdio", "http") unless told otherwise."""
        wanted = self.mask_errors if self.mask_errors is not None else transport != "stdio"
        if wanted and "mask_errors" not in self.builtin_middleware:
            from ..middleware._masking import MaskErrors

            self.set_builtin_middleware("mask_errors", MaskErrors())

    def _compose(self) -> None:
        builtins = [self.builtin_middleware[slot] for slot in BUILTIN_ORDER if slot in self.builtin_middleware]
        self.pipeline = build_pipeline([*builtins, *self.middleware])

    # ------------------------------------------------------------------ audit trail

    def add_audit_hook(self, hook: AuditHook) -> None:
        """Call `hook(record)` after every tool call and every resource read, allowed or refused.

        An `AuditRecord` has the same fields for both: time, session, primitive ("tool" or
        "resource"), tool or uri, arguments, outcome, error, duration, and the OAuth subject.
        """
        self.audit_hooks.append(hook)
        if "audit" not in self.builtin_middleware:
            self.set_builtin_middleware("audit", AuditTrail(self))

    def enable_audit_log(self, path: str) -> None:
        """Append one JSON line per tool call and per resource read to `path`."""
        self.add_audit_hook(JsonLinesAuditLog(path))

    def record_tool_call(self, session_id: str, tool: str, arguments: Any, result: dict[str, Any], seconds: float,
                         subject: str | None = None) -> None:
        self._audit(AuditRecord.of(session_id, tool, arguments, result, seconds, subject))

    def record_resource_read(self, session_id: str, uri: str, error: str | None, seconds: float,
                             subject: str | None = None) -> None:
        self._audit(AuditRecord.of_read(session_id, uri, error, seconds, subject))

    def _audit(self, record: AuditRecord) -> None:
        for hook in self.audit_hooks:
            try:
                hook(record)
            except Exception:
                logger.exception("audit hook failed")

    # ------------------------------------------------------------------ OAuth scopes

    def required_scopes(self, method: str, params: dict[str, Any]) -> tuple[str, ...]:
        """The OAuth scopes the tool, resource or prompt a request names needs (() for every other request).

        `tools/call`, `resources/read` and `resources/subscribe`, `prompts/get`, and `completion/complete`
        (for the prompt or template whose arguments it completes).

        The HTTP transport asks this before dispatching a request with an access token, so a caller
        lacking them gets a 403 `insufficient_scope` challenge it can step up with. With `list_by_scope` a
        tool, prompt or resource the caller may not use is hidden instead: no challenge names it (the
        route answers as for one that does not exist).
        """
        if self.list_by_scope and method in ("tools/call", "prompts/get", "resources/read"):
            return ()
        if method == "tools/call":
            name = params.get("name")
            tool = self.tools.get(name) if isinstance(name, str) else None
            return tool.scopes if tool is not None else ()
        if method in ("resources/read", "resources/subscribe"):
            uri = params.get("uri")
            return self.resources.scopes_for(uri) if isinstance(uri, str) else ()
        if method == "prompts/get":
            name = params.get("name")
            entry = self.prompts.get(name) if isinstance(name, str) else None
            return entry.scopes if entry is not None else ()
        if method == "completion/complete":  # completing a prompt's or template's arguments needs its scopes
            ref = params.get("ref")
            if not isinstance(ref, dict):
                return ()
            key = ref.get("name") if ref.get("type") == "ref/prompt" else ref.get("uri")
            if not isinstance(key, str):
                return ()
            found = (self.prompts.get(key) if ref.get("type") == "ref/prompt"
                     else self.resources.templates.get(key) or self.resources.fixed.get(key))
            return found.scopes if found is not None else ()
        return ()

    def declared_scopes(self) -> tuple[str, ...]:
        """Every scope a registered tool, resource, template or prompt asks for, in registration order."""
        entries = [*self.tools, *self.resources.fixed.values(), *self.resources.templates.values(),
                   *self.prompts.values()]
        return tuple(dict.fromkeys(scope for entry in entries for scope in entry.scopes))

    # ------------------------------------------------------------------ protocol facts

    def capabilities(self, version: str) -> dict[str, Any]:
        """Capabilities derived from what is registered."""
        caps: dict[str, Any] = {"logging": {}}
        if len(self.tools):
            caps["tools"] = {"listChanged": True}
        if self.resources or self.skills is not None:
            caps["resources"] = {"subscribe": True, "listChanged": True}
        if self.prompts:
            caps["prompts"] = {"listChanged": True}
        if self.completions:
            caps["completions"] = {}
        extensions: dict[str, Any] = {}
        if self.supports_tasks():
            if version == "2025-11-25":  # experimental tasks of the core protocol
                caps["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
            elif is_stateless(version):  # the io.modelcontextprotocol/tasks extension (SEP-2663)
                extensions[TASKS_EXTENSION] = {}
        if self.skills is not None and (version == "2025-11-25" or is_stateless(version)):
            extensions[SKILLS_EXTENSION] = {"directoryRead": True}
        if extensions:
            caps["extensions"] = extensions
        return shape_capabilities(caps, version)

    def info(self, version: str) -> dict[str, Any]:
        return shape_server_info({"name": self.name, "version": self.version, "title": self.title,
                                  "websiteUrl": self.website_url, "icons": self.icons}, version)

    # ------------------------------------------------------------------ notifications

    def notify_resource_updated(self, uri: str) -> None:
        """Tell every client subscribed to `uri` that it changed (`notifications/resources/updated`).

        Safe to call from the event loop and from any thread (sync tools run in worker threads).
        """
        if self.change_hooks:  # the hooks first (the response cache drops the URI), then the subscribers hear it
            self._on_loop(self._after_changes, "resource", uri, self.hub.publish)
        else:
            self._on_loop(self.hub.publish, uri)

    def _after_changes(self, kind: str, what: str, then: Callable[[str], None]) -> None:
        """Await the change hooks for a change of `kind` ("resource" or "list") on this process, then `then(what)`."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not serving yet: nothing to tell
            then(what)
            return
        loop.create_task(self._run_changes(kind, what, then))

    async def _run_changes(self, kind: str, what: str, then: Callable[[str], None]) -> None:
        for hook in list(self.change_hooks):
            try:
                await hook(kind, what)
            except Exception:
                logger.exception("change hook failed")
        then(what)

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
        if self.change_hooks:
            self._after_changes("list", kind, self._fan_out_list_changed)
        else:
            self._fan_out_list_changed(kind)

    def _fan_out_list_changed(self, kind: str) -> None:
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
                    self.task_runner.attach(tg)
                    try:
                        yield self
                    finally:
                        self.hub.attach(None)
                        self.task_runner.attach(None)
                        await self.task_runner.shutdown()
                        tg.cancel_scope.cancel()
        finally:
            self._running = 0
            self._loop = None
            self.executors.shutdown()


def _bind(middleware: Middleware, app: Application) -> None:
    bind = getattr(middleware, "bind", None)
    if callable(bind):
        bind(app)


async def _call(fn: Callable[..., Any], *args: Any) -> None:
    """Call `fn` from inside a task (see `Application._on_loop`)."""
    try:
        fn(*args)
    except Exception:
        logger.exception("error while delivering a server notification")
