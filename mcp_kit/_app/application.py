"""What an MCP server is made of: its registries, the facts derived from them, and the state its sessions share.

`Application` holds the tools, resources, templates, prompts and completions (registries in
`_primitives/tools.py`, `_primitives/resources.py`, `_primitives/prompts.py`, `_primitives/completions.py`), derives
capabilities and server
info, fans notifications out to the connected sessions and `subscriptions/listen` streams, keeps
the audit trail, serves its extensions (`extension.py`: tasks, skills and any the user adds) and runs the
lifespan. `MCPServer` (`_serving/server.py`) is this plus how to serve it.

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
from .._primitives.transforms import Arg, ToolTransform, check_arguments, transformed_tool
from .._protocol.dispatcher import after_answer
from .._protocol.errors import MCPError
from .._protocol.versions import shape_capabilities, shape_server_info
from ..skills import EXTENSION_ID as SKILLS_EXTENSION
from ..skills import Skill, SkillCatalog
from ..skills._methods import Skills
from ..tasks import TaskSettings, TaskStore
from ..tasks._methods import Tasks
from ..tasks._store import DEFAULT_MAX_TASKS_PER_CALLER
from .audit import AuditHook, AuditRecord, AuditTrail, JsonLinesAuditLog
from .context import Context
from .extension import CORE_METHODS, CORE_NOTIFICATIONS, EXTENSION_ID, Extension, overrides
from .mounts import KINDS, Mount, check_mountable
from .pipeline import Call, Middleware, Pipeline, build_pipeline
from .sourced import has_sources, inward_tool, may_serve_tool, proxies
from .sourced import param_headers as sourced_param_headers
from .sourced import required_scopes as sourced_required_scopes
from .sources import Source
from .state import StateLimits
from .subscriptions import DEFAULT_MAX_PER_SESSION, DEFAULT_MAX_TOTAL, SubscriptionHub

logger = logging.getLogger("mcp_kit.server")

F = TypeVar("F", bound=Callable[..., Any])
A = TypeVar("A", bound="Application")
E = TypeVar("E", bound=Extension)
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
        # SEP-2133 extensions by id, and what they add at each seam (filled by add_extension)
        self.extensions: dict[str, Extension] = {}
        self.extension_routes: dict[str, Callable[[Any, dict[str, Any], Context], Awaitable[Any]]] = {}
        self.extension_endpoints: dict[str, Callable[[Call], Awaitable[Any]]] = {}
        self.extension_notifications: dict[str, Callable[[dict[str, Any], Context], Awaitable[None]]] = {}
        self.extension_cacheable: set[str] = set()
        self.extension_input_rounds: set[str] = set()
        self.tool_call_hooks: list[Extension] = []
        self.resource_read_hooks: list[Extension] = []
        self.tool_filters: list[Extension] = []
        self.tool_meta_hooks: list[Extension] = []
        self.resource_meta_hooks: list[Extension] = []
        self.resource_listers: list[Extension] = []
        self.backend: Backend = MemoryBackend()  # ctx.state, rate limits, the response cache; `attached` shares it
        self.state_limits = StateLimits()
        # awaited before a change on this process is fanned out: ("resource", uri) or ("list", "tools"|...)
        self.change_hooks: list[Callable[[str, str], Awaitable[None]]] = []
        self.list_by_scope = list_by_scope
        self.source: Source | None = None  # a proxy: the primitives live on another server (`sources.py`)
        self.mask_errors = mask_errors
        self.middleware: list[Middleware] = []  # the server's own, in order (after the built-ins)
        self.builtin_middleware: dict[str, Middleware] = {}  # by slot (BUILTIN_ORDER)
        self.pipeline: Pipeline | None = None  # the composed chain; None: no middleware, routes called directly
        for each in middleware:
            self.add_middleware(each)
        self.mounts: list[Mount] = []  # apps mounted here (`mount`)
        self.mounted_in: list[Mount] = []  # where this app is mounted
        self.sourced_below = False  # a proxy is mounted here, at some depth (kept by `mount`; `sourced.has_sources`)
        self.skill_sources: list[tuple[Any, str | None, bool]] = []  # add_skills calls, repeated by the parents
        self.watchers: list[tuple[str, Callable[..., Any]]] = []  # (template, fn), also given to the parents
        self.tool_transforms: dict[str, ToolTransform] = {}  # by the name the tool has before the transform
        self.hidden_tools: set[str] = set()
        self.hidden_tags: set[str] = set()
        self.sourced_warned: set[str] = set()  # what `sourced.py` logged once (shadowed names, unknown transforms)
        self.sourced_unfit: set[str] = set()  # proxied tools whose transform does not fit their schema: not served
        self._lifespan = lifespan
        self._running = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        # tasks are an extension like any other; every application has one, made from the task options
        self.add_extension(Tasks(task_store, task_settings, max_running=max_running_tasks,
                                 max_tasks_per_caller=max_tasks_per_caller))

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
        name = options.get("name") or fn.__name__
        for mount in self.mounted_in:  # a name a parent already holds elsewhere: refused before anything changes
            mount.check("tools", name)
        executor = self.executors.executor_for(fn, run_in, name, Context)
        try:
            tool = make_tool(fn, Context, executor=executor, **options)
        except DefinitionError as exc:
            report(exc)  # raises, but inside `collecting_problems()` (mcp-kit check): recorded, tool left out
            return
        old = self.tool_transforms.get(name)
        if old is not None and old.name:  # replaced: the renamed entry of the old one goes too
            self.tools.remove(old.name)
        placed = self.transformed(tool)
        if placed is not None:
            self.tools.add(placed)
        if options.get("timeout") is not None and "timeouts" not in self.builtin_middleware:
            from ..middleware._timeouts import Timeouts  # a tool's own limit needs the middleware enforcing it

            self.set_builtin_middleware("timeouts", Timeouts())
        self._list_changed("tools")

    def remove_tool(self, name: str) -> None:
        if self.tools.remove(name):
            self._list_changed("tools")

    def add_skills(self, path: Any, *, prefix: str | None = None, strict: bool = True) -> list[Skill]:
        """Serve the Agent Skills under `path` (SEP-2640): every directory with a `SKILL.md` is a skill.

        Each file is a `skill://<prefix>/<name>/<file>` resource; `skills/list`, `skills/get` and
        `resources/directory/read` enumerate them. `prefix` ("acme/billing") adds an organisational
        path. Raises `SkillError` listing every problem (with `strict=False`: leaves bad skills
        out, logging why). Files are read now (a snapshot); connected clients hear
        `resources/list_changed`. Returns the skills added.
        """
        skills = self.extensions.get(SKILLS_EXTENSION)
        if not isinstance(skills, Skills):
            skills = Skills(SkillCatalog(page_size=min(self.page_size, 50)))
            self.add_extension(skills)
        added = skills.catalog.add_directory(path, prefix=prefix, strict=strict)
        self.skill_sources.append((path, prefix, strict))
        for mount in self.mounted_in:  # the servers this one is mounted in serve its skills too
            mount.parent.add_skills(path, prefix=prefix, strict=strict)
        self._list_changed("resources")
        return added

    # ------------------------------------------------------------------ extensions

    def add_extension(self, extension: E) -> E:
        """Serve `extension` (SEP-2133): its settings in `capabilities.extensions`, its methods and
        notifications through the method table and the middleware chain, its hooks. Returns it.

        Add extensions before serving. A second extension with the same id replaces the first; a method
        the core protocol or another extension already serves is a ValueError."""
        if not isinstance(extension, Extension):
            raise TypeError(f"add_extension takes an mcp_kit.extensions.Extension, not {type(extension).__name__}")
        if not EXTENSION_ID.match(extension.id or ""):
            raise ValueError(f"extension id {extension.id!r} is not of the form 'vendor-prefix/name' "
                             "(e.g. 'com.example/greeter')")
        methods = dict(extension.methods())
        notifications = dict(extension.notifications())
        previous = self.extensions.get(extension.id)
        replaced = {*previous.methods(), *previous.notifications()} if previous is not None else set()
        taken = [name for name in methods
                 if name in CORE_METHODS or (name in self.extension_routes and name not in replaced)]
        taken += [name for name in notifications
                  if name in CORE_NOTIFICATIONS or (name in self.extension_notifications and name not in replaced)]
        if taken:
            raise ValueError(f"extension {extension.id!r} cannot serve {taken[0]!r}: "
                             "the core protocol or another extension serves it")
        if previous is not None:
            self._forget(previous)
        extension.bind(self)
        self.extensions[extension.id] = extension
        for name, handler in methods.items():
            self.extension_routes[name] = _route(handler)
            self.extension_endpoints[name] = _endpoint(handler)
        self.extension_notifications.update(notifications)
        self.extension_cacheable.update(extension.cacheable)
        self.extension_input_rounds.update(extension.input_round_methods)
        for hook, hooks in (("call_tool", self.tool_call_hooks), ("read_resource", self.resource_read_hooks),
                            ("tool_visible", self.tool_filters), ("tool_meta", self.tool_meta_hooks),
                            ("resource_meta", self.resource_meta_hooks),
                            ("listed_resources", self.resource_listers)):
            if overrides(extension, hook):
                hooks.append(extension)
        return extension

    def _forget(self, extension: Extension) -> None:
        for name in extension.methods():
            self.extension_routes.pop(name, None)
            self.extension_endpoints.pop(name, None)
        for name in extension.notifications():
            self.extension_notifications.pop(name, None)
        for hooks in (self.tool_call_hooks, self.resource_read_hooks, self.tool_filters, self.tool_meta_hooks,
                      self.resource_meta_hooks, self.resource_listers):
            if extension in hooks:
                hooks.remove(extension)

    def extension(self, extension_id: str) -> Extension | None:
        """The extension with `extension_id` this application serves, or None."""
        return self.extensions.get(extension_id)

    def extension_reads(self, uri: str) -> bool:
        """Whether an extension answers `resources/read` of `uri` itself (skills: `skill://`)."""
        return any(each.owns_uri(uri) for each in self.resource_read_hooks)

    def resource(self, uri: str, **options: Any) -> Callable[[F], F]:
        """Register a resource; a URI with `{variables}` registers a template.

        Options: name, title, description, mime_type, icons, annotations, meta.
        """

        def decorate(fn: F) -> F:
            for mount in self.mounted_in:
                mount.check("resources", uri)
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

            self._add_watcher(template, checked)
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
            for mount in self.mounted_in:
                mount.check("prompts", entry.name)
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
            self._completions_changed()
            return fn

        return decorate

    def on_roots_changed(self, fn: F) -> F:
        """Call `fn(session)` whenever a client's roots were (re)fetched."""
        self.roots_hooks.append(fn)
        return fn

    # ------------------------------------------------------------------ composition

    def mount(self, app: Application, namespace: str | None = None) -> None:
        """Serve everything `app` registers, now and later, as part of this server (see `_app/mounts.py`).

        Tools and prompts appear as `{namespace}_{name}` (unprefixed without a namespace), resources and
        templates under their own URIs, to any depth; a name or URI already taken here is refused with
        `MountCollision` naming both sources. `app`'s lifespan runs with this server's; `ctx.lifespan_state`
        in its tools is its own. Calls pass through this server's middleware.

        `app` may be a proxy (`MCPServer.proxy`): its upstream's primitives are listed and routed by the same
        rule, per request (`_app/sourced.py`); its upstream connections open and close with this server's
        `running()`, and the upstream's list changes reach this server's clients. Its names are known only
        when the upstream lists them, so a collision with a name of this server's own is settled then: this
        server's own entry is served and the proxied one left out, logged once. A proxy cannot be the parent.
        """
        if not isinstance(app, Application):
            raise TypeError(f"mount() takes an MCPServer, not {type(app).__name__}")
        check_mountable(self, app, namespace)
        mount = Mount(self, app, namespace)
        for kind in KINDS:  # every collision found before anything changes
            mount.check(kind)
        self.mounts.append(mount)
        app.mounted_in.append(mount)
        if app.source is not None or app.sourced_below:
            self._mark_sourced_below()
        changed = [kind for kind in KINDS if mount.sync(kind)]
        self.resources.listers.append(mount.list_resources())
        for template, fn in app.watchers:
            self._add_watcher(template, fn)
        for path, prefix, strict in app.skill_sources:
            self.add_skills(path, prefix=prefix, strict=strict)
        self._completions_changed()
        for kind in changed:
            self._list_changed(kind)

    def _mark_sourced_below(self) -> None:
        """This server, and every one it is mounted in, has a proxy mounted at some depth."""
        if not self.sourced_below:
            self.sourced_below = True
            for mount in self.mounted_in:
                mount.parent._mark_sourced_below()

    def transform_tool(self, name: str, *, new_name: str | None = None, description: str | None = None,
                       arguments: dict[str, Arg] | None = None) -> None:
        """Show tool `name` changed: renamed, described anew, arguments hidden, fixed or given defaults (`Arg`).

        Works on this server's tools and on mounted ones (by their name here); the schema and validation
        follow, and a later re-registration or mount update keeps the transform. Connected clients hear
        `tools/list_changed`.

        On a proxy, and for a tool of a mounted proxy (`up_add`), the tool is known only once the upstream
        lists it, so the transform is kept without that check (the `Arg`s are checked in themselves): lists
        show the tool transformed, and calls of the new name reach the upstream under the old one with the
        arguments filled in. A transform naming a tool the upstream does not list is logged once as a warning
        (`mcp_kit.server`), when a complete list lacks it; one that does not fit the upstream tool's schema
        (or a schema not of the shape a transform works on) leaves the tool unserved, logged once as an
        error. A call checks a transform with arguments again, against the schema the upstream lists now,
        and is refused as for an unknown tool when it does not fit or the schema is unknown (see
        `_app/sourced.py`).
        """
        current = self.tools.get(name)
        base = (current.untransformed or current) if current is not None else None
        if base is None:
            for tool in self.tools:
                if tool.untransformed is not None and tool.untransformed.name == name:
                    current, base = tool, tool.untransformed
        if (base is None or current is None) and may_serve_tool(self, name):  # a proxied tool: checked when listed
            check_arguments(name, dict(arguments or {}))
            if new_name and new_name != name and self.tools.get(new_name) is not None:
                raise ValueError(f"transform_tool: {name!r} cannot be renamed {new_name!r}: a tool of that name "
                                 "exists")
            self.tool_transforms[name] = ToolTransform(new_name, description, dict(arguments or {}))
            self.sourced_unfit.discard(name)
            self.sourced_warned -= {f"unfit:{name}", f"missing:{name}"}
            self._list_changed("tools")
            return
        if base is None or current is None:
            known = ", ".join(self.tools.names()) or "(none)"
            raise ValueError(f"transform_tool: no tool {name!r} is registered (tools: {known})")
        transform = ToolTransform(new_name, description, dict(arguments or {}))
        replacement = transformed_tool(base, transform)  # checked before anything changes
        if new_name and new_name != current.name and self.tools.get(new_name) is not None:
            raise ValueError(f"transform_tool: {name!r} cannot be renamed {new_name!r}: a tool of that name exists")
        self.tool_transforms[base.name] = transform
        self.tools.remove(current.name)
        self.tools.add(replacement)
        self._list_changed("tools")

    def hide_tools(self, *names: str, tags: set[str] | frozenset[str] | tuple[str, ...] = ()) -> None:
        """Neither list nor serve the tools named (here, mounted ones included) or carrying one of `tags`;
        a call of one answers as for a tool that does not exist.

        Proxied tools (on a proxy, or of a mounted one) are hidden by name only: an MCP tool definition carries
        no tags (mcp_kit never sends its `tags`), so a proxy refuses `tags` with a ValueError."""
        if tags and self.source is not None:
            raise ValueError("hide_tools: a proxy's tools carry no tags (tool definitions from the server behind it "
                             "have none); hide them by name: hide_tools('name', ...)")
        self.hidden_tools.update(names)
        self.hidden_tags.update(tags)
        for tool in list(self.tools):
            if self.transformed(tool.untransformed or tool) is None:
                self.tools.remove(tool.name)
        self._list_changed("tools")

    def transformed(self, tool: Any) -> Any:
        """`tool` as this server shows it: None when hidden, else with its transform applied."""
        if tool.name in self.hidden_tools or (self.hidden_tags and tool.tags & self.hidden_tags):
            return None
        transform = self.tool_transforms.get(tool.name)
        return transformed_tool(tool, transform) if transform is not None else tool

    def _add_watcher(self, template: str, fn: Callable[..., Any]) -> None:
        self.watchers.append((template, fn))
        self.hub.add_watcher(template, fn)
        for mount in self.mounted_in:
            mount.parent._add_watcher(template, fn)

    def _completions_changed(self) -> None:
        for mount in self.mounted_in:
            mount.sync_completions()
            mount.parent._completions_changed()

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

        A primitive of a mounted proxy (a name or URI this server does not serve itself) needs what that
        proxy's `scope_map` says, through the transforms on the way (`sourced.required_scopes`); on a proxy
        a completion needs the scopes of the prompt or template it completes, as here.
        """
        if self.source is not None:
            if method == "completion/complete":
                return sourced_required_scopes(self, method, params)
            if method == "tools/call" and isinstance(params.get("name"), str) and (self.tool_transforms
                                                                                  or self.hidden_tools):
                inward = inward_tool(self, params["name"])  # the scope map names the tool as the upstream does
                if inward is None:
                    return ()
                params = {**params, "name": inward[0]}
            return self.source.required_scopes(method, params)
        if self.mounts and has_sources(self) and not self._serves(method, params):
            return sourced_required_scopes(self, method, params)
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

    def _serves(self, method: str, params: dict[str, Any]) -> bool:
        """Whether the primitive a request names is this server's own (registered, or of a plain mount), as the
        routes decide before asking a mounted proxy (anything but a primitive's request: True)."""
        if method == "tools/call":
            return not isinstance(params.get("name"), str) or self.tools.get(params["name"]) is not None
        if method == "prompts/get":
            return not isinstance(params.get("name"), str) or params["name"] in self.prompts
        if method in ("resources/read", "resources/subscribe"):
            uri = params.get("uri")
            return not isinstance(uri, str) or self.resources.find(uri) is not None or self.extension_reads(uri)
        if method == "completion/complete":
            ref = params.get("ref")
            if not isinstance(ref, dict):
                return True
            key = ref.get("name") if ref.get("type") == "ref/prompt" else ref.get("uri")
            if not isinstance(key, str):
                return True
            if ref.get("type") == "ref/prompt":
                return key in self.prompts
            return key in self.resources.templates or key in self.resources.fixed
        return True

    def param_headers(self, name: str) -> dict[str, str]:
        """Arguments of tool `name` mirrored into `Mcp-Param-*` headers (a proxied one's: from the upstream's schema,
        but those a transform hides)."""
        if self.source is not None or (self.mounts and self.tools.get(name) is None and has_sources(self)):
            return sourced_param_headers(self, name)  # a proxied tool's, as the transforms on the way show it
        return self.tools.param_headers(name)

    def declared_scopes(self) -> tuple[str, ...]:
        """Every scope a registered tool, resource, template or prompt asks for, in registration order."""
        entries = [*self.tools, *self.resources.fixed.values(), *self.resources.templates.values(),
                   *self.prompts.values()]
        return tuple(dict.fromkeys(scope for entry in entries for scope in entry.scopes))

    # ------------------------------------------------------------------ protocol facts

    def capabilities(self, version: str) -> dict[str, Any]:
        """Capabilities derived from what is registered (a proxy's: those of the server behind it)."""
        if self.source is not None:
            return shape_capabilities(self.source.capabilities(version), version)
        caps: dict[str, Any] = {"logging": {}}
        if len(self.tools):
            caps["tools"] = {"listChanged": True}
        if self.resources:
            caps["resources"] = {"subscribe": True, "listChanged": True}
        if self.prompts:
            caps["prompts"] = {"listChanged": True}
        if self.completions:
            caps["completions"] = {}
        for proxy in proxies(self) if self.mounts else ():  # a mounted proxy serves what its upstream does
            for key, value in proxy.source.capabilities(version).items():
                if key in ("tools", "prompts", "resources", "completions"):
                    caps[key] = {**(caps.get(key) or {}), **(value or {})}
        extensions: dict[str, Any] = {}
        for extension in self.extensions.values():
            for key, value in extension.server_capabilities(version).items():
                caps[key] = {**caps[key], **value} if isinstance(caps.get(key), dict) else value
            settings = extension.settings(version)
            if settings is not None:
                extensions[extension.id] = settings
        if extensions:
            caps["extensions"] = extensions
        return shape_capabilities(caps, version)

    def info(self, version: str) -> dict[str, Any]:
        return shape_server_info({"name": self.name, "version": self.version, "title": self.title,
                                  "websiteUrl": self.website_url, "icons": self.icons}, version)

    # ------------------------------------------------------------------ notifications

    def notify_resource_updated(self, uri: str) -> None:
        """Tell every client subscribed to `uri` that it changed (`notifications/resources/updated`).

        Safe to call from the event loop and from any thread (sync tools run in worker threads). Called
        while a request is handled on the loop, the subscribers are told once its answer is on its way
        (`dispatcher.after_answer`): fan-out to many never holds up the caller.
        """
        if not after_answer(lambda: self._resource_updated(uri)):
            self._resource_updated(uri)

    def _resource_updated(self, uri: str) -> None:
        if self.change_hooks:  # the hooks first (the response cache drops the URI), then the subscribers hear it
            self._on_loop(self._after_changes, "resource", uri, self.hub.publish)
        else:
            self._on_loop(self.hub.publish, uri)
        for mount in self.mounted_in:  # the servers this one is mounted in have subscribers too
            mount.parent.notify_resource_updated(uri)

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
        for mount in self.mounted_in:  # the parents mirror the change at once (collisions were checked before)
            if mount.sync(kind):
                mount.parent._list_changed(kind)
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
                if self.source is not None:
                    await stack.enter_async_context(self.source.running())
                if self._lifespan is not None:
                    self.lifespan_state = await stack.enter_async_context(self._lifespan(self))
                for mount in self.mounts:  # a mounted app's lifespan and background work run with this one's
                    await stack.enter_async_context(mount.child.running())
                async with anyio.create_task_group() as tg:
                    self.hub.attach(tg)
                    try:
                        async with contextlib.AsyncExitStack() as extensions:
                            for extension in list(self.extensions.values()):
                                await extensions.enter_async_context(extension.running(tg))
                            yield self
                    finally:
                        self.hub.attach(None)
                        tg.cancel_scope.cancel()
        finally:
            self._running = 0
            self._loop = None
            self.executors.shutdown()


def _route(handler: Callable[[dict[str, Any], Context], Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    """An extension's handler as a route of the method table: `route(app, params, ctx)`."""

    def route(app: Any, params: dict[str, Any], ctx: Context) -> Awaitable[Any]:
        return handler(params, ctx)

    return route


def _endpoint(handler: Callable[[dict[str, Any], Context], Awaitable[Any]]) -> Callable[[Call], Awaitable[Any]]:
    """What answers a `Call` of an extension's method at the end of the middleware chain."""

    def answer(call: Call) -> Awaitable[Any]:
        return handler(call.params, call.ctx)

    return answer


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
