"""What an application serves from a `Source` (`sources.py`) rather than from its registries, as it shows it.

Two cases, one rule. A proxy (`app.source`) answers its routes from its source. An application with a
proxy mounted in it (`mounts.py`; at any depth, through plain mounted apps) adds that proxy's tools,
prompts, resources and templates to its own lists, and routes a request for one of them down to the
proxy's source. What the upstream has is known only at run time, so all of this happens per request:

- a mounted proxy's tools and prompts are renamed `{namespace}_{name}` as any mounted primitive is;
  resources and templates keep their URIs (a read, subscription or completion of a URI the application does
  not serve itself goes to each mounted proxy in mount order, until one has it, past an unreachable one;
  an unsubscription goes to the proxy that took the subscription);
- the application's `transform_tool` and `hide_tools` apply to proxied tools as to registered ones, by
  name only (MCP tool definitions carry no tags, and mcp_kit never sends its own `tags`): a list shows the
  transformed definition (`transforms.transformed_definition`), a call of the new name reaches the
  upstream under the old one with its arguments rewritten (hidden, fixed, default, from the request), and
  a hidden tool or the old name of a renamed one answers as an unknown tool;
- a transform naming a tool that neither the application registers nor a complete list from its sources
  shows is logged once (a warning on `mcp_kit.server`) and otherwise waits: the tool is transformed if it
  appears later. A transform that does not fit the upstream tool's schema (an argument it lacks, a required
  argument hidden without a value, a schema whose `properties` is not an object of objects or whose
  `required` is not an array of strings) leaves the tool out, logged once as an error: it is served as
  transformed or not at all. A call checks too, against the schema the upstream lists now (listing first
  when the proxy has none for that tool): a transform with arguments whose tool's schema is unknown or does
  not fit refuses the call as for an unknown tool, so a fixed argument is never sent beside one the
  upstream renamed it to;
- a mounted proxy's tools run as plain calls: the application's `tasks/*` use its own store, which an
  upstream task would not be in, so a call's `task` param and the tasks extension in its capabilities do not
  reach the upstream, the tools are listed without `execution.taskSupport`, and the application declares
  no tasks for them (a tool its upstream runs only as a task is served by the proxy itself, not mounted);
- a name or URI the application serves itself (registered, or from a plain mount) wins over a proxied one,
  and between two mounted proxies the first mounted wins; each shadowed entry is logged once;
- the application's `list_by_scope` and its extensions' tool filters see its own entries only: a proxied
  primitive's scopes are its proxy's `scope_map`, checked by that proxy's source when it is used, and
  asked of it by the application's `required_scopes` (`required_scopes` here), so the HTTP transport's 403
  step-up challenge and a cached read's check cover proxied primitives as they cover the application's own.

Everything the upstream sends is data, never trusted: a list is read at most `MAX_PAGES` pages and
`MAX_ITEMS` entries and stops at a cursor it gave before (each logged once), and what is logged once is
bounded (`MAX_WARNED` keys of at most 200 characters).

Imports the transforms and the protocol's errors and shapes; the application is passed in (`Any`).
"""

from __future__ import annotations

import contextlib
import copy
import logging
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from .._primitives.content import error_result
from .._primitives.transforms import ToolTransform, rewriter, transformed_definition, transformed_schema
from .._protocol.errors import MCPError, ToolError, invalid_params
from .._protocol.versions import shape_tool_result
from ..tasks._wire import TASKS_EXTENSION

logger = logging.getLogger("mcp_kit.server")

Application = Any  # `application.Application`, which imports this module
Rewrite = Callable[[dict[str, Any], Any], dict[str, Any]]
LIST_METHODS = {"tools": "tools/list", "prompts": "prompts/list", "resources": "resources/list",
                "resourceTemplates": "resources/templates/list"}
KEYS = {"tools": "name", "prompts": "name", "resources": "uri", "resourceTemplates": "uriTemplate"}
UNAVAILABLE = -31001  # the server behind a proxy could not be reached
NOT_HERE = (-32002, -32602, -32601)  # resource not found, invalid params (unknown), method not found
MAX_PAGES = 1000  # pages of one list read from a proxy's source
MAX_ITEMS = 10_000  # entries of one list read from a proxy's source (the rest left out, logged once)
MAX_WARNED = 1000  # distinct things logged once per application (names come from upstreams: bounded)


# ---------------------------------------------------------------------- where sources are


def has_sources(app: Application) -> bool:
    """Whether `app` is a proxy or has one mounted in it (at any depth: a flag `mount` keeps, no walk)."""
    return app.source is not None or app.sourced_below


def sourced_mounts(app: Application) -> list[Any]:
    """The mounts of `app` through which a proxy's primitives arrive, in mount order."""
    return [mount for mount in app.mounts if has_sources(mount.child)]


def proxies(app: Application) -> Iterator[Application]:
    """The proxies whose sources serve `app`: itself, or those mounted in it, in mount order."""
    if app.source is not None:
        yield app
        return
    for mount in sourced_mounts(app):
        yield from proxies(mount.child)


def may_serve_tool(app: Application, name: str) -> bool:
    """Whether a tool `name` could come from a source of `app` (a proxy, or a mounted one whose prefix it has)."""
    if app.source is not None:
        return True
    for mount in sourced_mounts(app):
        inner = _inner(mount, name)
        if inner is not None and may_serve_tool(mount.child, inner):
            return True
    return False


def _inner(mount: Any, name: str) -> str | None:
    """`name` (as the parent shows it) as the mounted app names it; None when the mount's prefix does not fit."""
    if not mount.namespace:
        return name
    prefix = f"{mount.namespace}_"
    return name[len(prefix):] if name.startswith(prefix) and len(name) > len(prefix) else None


def _once(app: Application, key: str, level: int, message: str, *args: Any) -> None:
    """Log `message` the first time `key` comes up on `app`. Keys hold upstream names, so both are bounded:
    a key is cut to 200 characters, and past `MAX_WARNED` keys nothing more is logged (but that, once)."""
    key = key[:200]
    if key in app.sourced_warned:
        return
    if len(app.sourced_warned) >= MAX_WARNED:
        if "full" not in app.sourced_warned:
            app.sourced_warned.add("full")
            logger.warning("%s: %d problems with proxied primitives logged; no more are", app.name, MAX_WARNED)
        return
    app.sourced_warned.add(key)
    logger.log(level, message, *(arg[:200] if isinstance(arg, str) else arg for arg in args))


# ---------------------------------------------------------------------- tools as the application shows them


def shown_tools(app: Application, definitions: list[Any], *, complete: bool) -> list[Any]:
    """Proxied tool definitions as `app` shows them: hidden ones out, transforms applied, one per name.
    `complete`: they are every tool the sources have, so a transform naming none of them is logged."""
    renamed = {transform.name: key for key, transform in app.tool_transforms.items()
               if transform.name and transform.name != key}
    out: list[Any] = []
    seen: set[str] = set()
    for definition in definitions:
        name = definition.get("name") if isinstance(definition, dict) else None
        if not isinstance(name, str):
            continue
        if name in app.hidden_tools:
            continue
        if name in renamed:  # a renamed tool takes this name: calls of it reach that one
            _once(app, f"shadowed:{name}", logging.WARNING, "%s: tool %r is not served: transform_tool(%r) renamed "
                  "another tool to its name", app.name, name, renamed[name])
            continue
        transform = app.tool_transforms.get(name)
        if transform is not None:
            try:
                definition = transformed_definition(definition, transform)
            except ValueError as exc:
                app.sourced_unfit.add(name)
                _once(app, f"unfit:{name}", logging.ERROR, "%s: tool %r is not served: %s", app.name, name, exc)
                continue
            app.sourced_unfit.discard(name)
        shown = definition["name"]
        if shown in seen:
            _once(app, f"twice:{shown}", logging.WARNING, "%s: tool %r is listed by two sources; the first is "
                  "served", app.name, shown)
            continue
        seen.add(shown)
        out.append(definition)
    if complete and app.tool_transforms:
        listed = {d["name"] for d in definitions if isinstance(d, dict) and isinstance(d.get("name"), str)}
        own = {(tool.untransformed or tool).name for tool in app.tools}
        for key in app.tool_transforms:
            if key not in listed and key not in own:
                _once(app, f"missing:{key}", logging.WARNING, "%s: transform_tool(%r): no tool of that name is "
                      "registered or listed by the server(s) behind it (they list: %s)", app.name, key,
                      ", ".join(sorted(str(n) for n in listed)) or "(none)")
    return out


def inward_tool(app: Application, name: str) -> tuple[str, Rewrite | None] | None:
    """The name `app`'s transforms started from for tool `name` as shown, with the argument rewrite of its
    transform; None when no such tool is shown (hidden, the old name of a renamed one, a transform not fitting)."""
    original = next((key for key, transform in app.tool_transforms.items()
                     if transform.name == name and key != name), None)
    if original is None:
        transform = app.tool_transforms.get(name)
        if transform is not None and transform.name and transform.name != name:
            return None  # renamed: the old name is not served
        original = name
    if original in app.hidden_tools or original in app.sourced_unfit:
        return None
    transform = app.tool_transforms.get(original)
    return original, rewriter(name, transform.arguments) if transform is not None and transform.arguments else None


def param_headers(app: Application, name: str) -> dict[str, str]:
    """Arguments of proxied tool `name` (as `app` shows it) mirrored into `Mcp-Param-*` headers: the upstream
    schema's, but those a transform on the way hides (the first mount whose prefix fits, as `resolve` without
    a list)."""
    inward = inward_tool(app, name)
    if inward is None:
        return {}
    original, _ = inward
    transform = app.tool_transforms.get(original)
    hidden = {arg for arg, how in transform.arguments.items() if how.is_hidden} if transform is not None else set()
    if app.source is not None:
        found = app.source.param_headers(original)
    else:
        found = {}
        for mount in sourced_mounts(app):
            inner = _inner(mount, original)
            if inner is not None:
                found = param_headers(mount.child, inner)
                break
    return {arg: header for arg, header in found.items() if arg not in hidden}


def required_scopes(app: Application, method: str, params: dict[str, Any]) -> tuple[str, ...]:
    """The OAuth scopes a request for a primitive of `app`'s mounted proxies needs (`Application.required_scopes`
    for one `app` does not serve itself): a tool's or prompt's those of the proxy the first mount whose prefix
    fits leads to, under its name there (through the transforms on the way: a renamed tool needs its upstream
    name's); a URI's those of every mounted proxy whose scope map names it (a read goes to the first that has
    it, which only the upstreams know). A completion needs its prompt's or template's."""
    if method == "completion/complete":
        ref = params.get("ref")
        if not isinstance(ref, dict):
            return ()
        if ref.get("type") == "ref/prompt":
            return required_scopes(app, "prompts/get", {"name": ref.get("name")})
        return required_scopes(app, "resources/read", {"uri": ref.get("uri")})
    if method in ("resources/read", "resources/subscribe"):
        return tuple(dict.fromkeys(scope for proxy in proxies(app)
                                   for scope in proxy.source.required_scopes(method, params)))
    name = params.get("name")
    if method not in ("tools/call", "prompts/get") or not isinstance(name, str):
        return ()
    if app.source is not None:
        return app.required_scopes(method, params)  # the proxy's own transforms, then its scope map
    if method == "tools/call":
        inward = inward_tool(app, name)
        if inward is None:
            return ()
        name = inward[0]
    scopes: list[str] = []  # every mount that could serve the name: which one does is known only upstream
    for mount in sourced_mounts(app):
        inner = _inner(mount, name)
        if inner is not None:
            scopes.extend(required_scopes(mount.child, method, {**params, "name": inner}))
    return tuple(dict.fromkeys(scopes))


# ---------------------------------------------------------------------- lists


async def all_pages(app: Application, key: str, ctx: Any) -> tuple[list[Any], bool]:
    """Every entry of list `key` from the proxy `app`'s source, all its pages, and whether that is all of them
    (an unreachable upstream: what it gave, logged; one without such a list: none)."""
    items: list[Any] = []
    cursor: Any = None
    cursors: set[str] = set()
    for _ in range(MAX_PAGES):
        try:
            page = await app.source.forward(LIST_METHODS[key], {"cursor": cursor} if cursor else {}, ctx)
        except MCPError as exc:
            if exc.code in NOT_HERE:
                return items, True
            logger.warning("%s: %s", app.name, exc.message)
            return items, False
        entries = page.get(key) if isinstance(page, dict) else None
        if isinstance(entries, list):
            items.extend(item for item in entries if isinstance(item, dict))
        if len(items) > MAX_ITEMS:
            _once(app, f"pages:{key}:many", logging.WARNING, "%s: the %s list of the server behind it has more than "
                  "%d entries; the rest are left out", app.name, key, MAX_ITEMS)
            return items[:MAX_ITEMS], False
        cursor = page.get("nextCursor") if isinstance(page, dict) else None
        if not cursor:
            return items, True
        if not isinstance(cursor, str) or cursor in cursors:
            _once(app, f"pages:{key}:cursor", logging.WARNING, "%s: the server behind it pages its %s list with a "
                  "cursor it gave before (or not a string); the list stops there", app.name, key)
            return items, False
        cursors.add(cursor)
    _once(app, f"pages:{key}:pages", logging.WARNING, "%s: the %s list of the server behind it has more than %d "
          "pages; the rest are left out", app.name, key, MAX_PAGES)
    return items, False


async def sourced_items(app: Application, key: str, ctx: Any) -> list[Any]:
    """Every entry of list `key` ("tools", "prompts", "resources", "resourceTemplates") `app` serves from its
    sources, as it shows them: names prefixed by the mounts on the way, tools transformed."""
    return (await _sourced_items(app, key, ctx))[0]


async def _sourced_items(app: Application, key: str, ctx: Any) -> tuple[list[Any], bool]:
    if app.source is not None:
        items, complete = await all_pages(app, key, ctx)
    else:
        items, complete = [], True
        for mount in sourced_mounts(app):
            found, whole = await _sourced_items(mount.child, key, ctx)
            complete = complete and whole
            for item in found:
                if key in ("tools", "prompts") and isinstance(item.get("name"), str):
                    item = {**item, "name": mount.name_in_parent(item["name"])}
                if key == "tools":
                    item = without_task_support(item)
                items.append(item)
    return (shown_tools(app, items, complete=complete) if key == "tools" else items), complete


async def merged(app: Application, key: str, own: list[Any], ctx: Any) -> list[Any]:
    """`own` (what `app` serves itself, as listed) followed by what its mounted proxies serve under other names."""
    field = KEYS[key]
    word = {"tools": "tool", "prompts": "prompt", "resources": "resource", "resourceTemplates": "template"}[key]
    taken = {item.get(field) for item in own if isinstance(item, dict)}
    seen: set[Any] = set()
    out = list(own)
    for item in await sourced_items(app, key, ctx):
        value = item.get(field)
        if not isinstance(value, str):  # what an upstream lists without a name or URI cannot be asked for
            continue
        if value in taken or value in seen:
            whose = f"{app.name!r} serves its own" if value in taken else "another mounted proxy serves one"
            _once(app, f"shadowed:{key}:{value}", logging.WARNING, "%s: %s %r of a mounted proxy is not served: "
                  "%s of that name", app.name, word, value, whose)
            continue
        seen.add(value)
        out.append(item)
    return out


async def proxy_tools_list(app: Application, params: dict[str, Any], ctx: Any) -> Any:
    """A proxy's `tools/list`: the upstream's page with the proxy's transforms and hiding applied."""
    result = await app.source.forward("tools/list", params, ctx)
    if (app.tool_transforms or app.hidden_tools) and isinstance(result, dict):
        complete = not params.get("cursor") and not result.get("nextCursor")
        tools = result.get("tools")
        result = {**result, "tools": shown_tools(app, tools if isinstance(tools, list) else [], complete=complete)}
    return result


# ---------------------------------------------------------------------- requests for one primitive


Step = tuple[Application, str, ToolTransform]  # an application on the way, a tool's name there, its transform


async def resolve(app: Application, kind: str, name: str, ctx: Any
                  ) -> tuple[Application, str, list[Rewrite], list[Step]] | None:
    """Which proxy serves tool or prompt (`kind`) `name` as `app` shows it, under which name there, the
    argument rewrites on the way and the transforms they come from (outermost first); None when no proxy of
    `app` serves it."""
    rewrites: list[Rewrite] = []
    steps: list[Step] = []
    if kind == "tools":
        inward = inward_tool(app, name)
        if inward is None:
            return None
        name, rewrite = inward
        if rewrite is not None:
            rewrites.append(rewrite)
            steps.append((app, name, app.tool_transforms[name]))
    if app.source is not None:
        return app, name, rewrites, steps
    candidates = [(mount, inner) for mount in sourced_mounts(app) if (inner := _inner(mount, name)) is not None]
    if len(candidates) > 1:  # several could: the first whose list has it (as in the merged list)
        for mount, inner in candidates:
            if any(item.get("name") == inner for item in await sourced_items(mount.child, kind, ctx)):
                candidates = [(mount, inner)]
                break
    for mount, inner in candidates[:1]:
        found = await resolve(mount.child, kind, inner, ctx)
        if found is not None:
            return found[0], found[1], rewrites + found[2], steps + found[3]
    return None


async def fits(proxy: Application, name: str, steps: list[Step], ctx: Any) -> bool:
    """Whether the argument transforms on the way (`steps`, outermost first) fit proxied tool `name`'s schema as
    its upstream lists it now (listed first when the proxy has not seen it). An unknown schema does not fit: a
    transform fixing or hiding an argument is applied only where that argument is known to be what it fixes.
    A transform found not to fit leaves the tool out (logged once), as a list finding it would."""
    schemas = getattr(proxy.source, "tool_schemas", None)
    schema = schemas.get(name) if isinstance(schemas, dict) else None
    if schema is None:
        await all_pages(proxy, "tools", ctx)  # the source remembers the schemas it lists
        schemas = getattr(proxy.source, "tool_schemas", None)
        schema = schemas.get(name) if isinstance(schemas, dict) else None
    if schema is None:
        app, original, _ = steps[0]
        _once(app, f"unknown:{original}", logging.ERROR, "%s: tool %r is not served: the server behind it lists no "
              "schema for it, so its transform cannot be checked", app.name, original)
        return False
    for app, original, transform in reversed(steps):  # innermost first: each shows the schema to the next
        try:
            schema = transformed_schema(original, schema, transform)
        except ValueError as exc:
            app.sourced_unfit.add(original)
            _once(app, f"unfit:{original}", logging.ERROR, "%s: tool %r is not served: %s", app.name, original, exc)
            return False
    return True


async def call_tool(app: Application, name: str, params: dict[str, Any], ctx: Any) -> Any:
    """The answer to `tools/call` of `name` from a proxy of `app`; None when none serves it."""
    arguments = params.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        raise invalid_params("'arguments' must be an object")
    found = await resolve(app, "tools", name, ctx)
    if found is None:
        return None
    proxy, inner, rewrites, steps = found
    if any(transform.arguments for _, _, transform in steps) and not await fits(proxy, inner, steps, ctx):
        return None  # served as transformed or not at all
    forwarded = {**params, "name": inner}
    if proxy is not app:  # mounted: a plain call (the parent's tasks/* could not reach an upstream task)
        forwarded.pop("task", None)
        ctx = plain_call(ctx)
    if rewrites:
        arguments = arguments or {}
        try:
            for rewrite in rewrites:
                arguments = rewrite(arguments, ctx)
        except ToolError as exc:
            return shape_tool_result(error_result(str(exc)), ctx.protocol_version)
        forwarded["arguments"] = arguments
    return await proxy.source.forward("tools/call", forwarded, ctx)


class PlainCallChannel:
    """A request's channel as a mounted proxy's upstream sees it: the client's capabilities without the tasks
    extension, so a 2026-07-28 upstream runs the call plainly; everything else is the request's own."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    @property
    def client_capabilities(self) -> Any:
        capabilities = self._inner.client_capabilities
        extensions = capabilities.get("extensions")
        if not isinstance(extensions, dict) or TASKS_EXTENSION not in extensions:
            return capabilities
        return {**capabilities, "extensions": {k: v for k, v in extensions.items() if k != TASKS_EXTENSION}}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def plain_call(ctx: Any) -> Any:
    """`ctx` for a call forwarded to a mounted proxy: its channel a `PlainCallChannel`."""
    other = copy.copy(ctx)
    other.channel = PlainCallChannel(ctx.channel)
    return other


def without_task_support(definition: dict[str, Any]) -> dict[str, Any]:
    """A mounted proxy's tool definition without `execution.taskSupport`: through a plain server it runs
    plainly (the parent declares no tasks for it), so no client asks for a task."""
    execution = definition.get("execution")
    if not isinstance(execution, dict) or "taskSupport" not in execution:
        return definition
    rest = {k: v for k, v in execution.items() if k != "taskSupport"}
    out = {k: v for k, v in definition.items() if k != "execution"}
    return {**out, "execution": rest} if rest else out


async def proxy_tools_call(app: Application, params: dict[str, Any], ctx: Any) -> Any:
    """A proxy's `tools/call`: through its transforms; a hidden tool, or a renamed one's old name, is unknown."""
    name = params.get("name")
    if not isinstance(name, str) or not (app.tool_transforms or app.hidden_tools):
        return await app.source.forward("tools/call", params, ctx)
    answer = await call_tool(app, name, params, ctx)
    if answer is None:
        raise invalid_params(f"Unknown tool '{name}': this server has no tool of that name (see tools/list)")
    return answer


async def get_prompt(app: Application, name: str, params: dict[str, Any], ctx: Any) -> Any:
    """The answer to `prompts/get` of `name` from a proxy of `app`; None when none serves it."""
    found = await resolve(app, "prompts", name, ctx)
    if found is None:
        return None
    proxy, inner, _, _ = found
    return await proxy.source.forward("prompts/get", {**params, "name": inner}, ctx)


async def by_uri(app: Application, method: str, params: dict[str, Any], ctx: Any) -> Any:
    """The answer of the first proxy of `app` that serves the URI in `params` (`resources/read`, a
    subscription); None when none does."""
    found = await served_by_uri(app, method, params, ctx)
    return found[1] if found is not None else None


async def served_by_uri(app: Application, method: str, params: dict[str, Any], ctx: Any,
                        only: Application | None = None) -> tuple[Application, Any] | None:
    """The first proxy of `app` (or just `only`) that serves the URI in `params`, with its answer; None when
    none does (`_first_proxy`)."""
    return await _first_proxy(app, lambda proxy: proxy.source.forward(method, params, ctx), only)


async def watch_sourced(held: contextlib.AsyncExitStack, app: Application, uri: str, listener: Any,
                        ctx: Any) -> None:
    """Hold the subscription to `uri` of a 2026-07-28 listen stream on `app` in `held`: on the first proxy of
    `app` whose source takes it (`_first_proxy`); -32602 when none has it."""
    taken = await _first_proxy(app, lambda proxy: held.enter_async_context(proxy.source.watching([uri], listener,
                                                                                                   ctx)))
    if taken is None:
        raise invalid_params(f"Resource not found: {uri}", {"uri": uri})


async def _first_proxy(app: Application, attempt: Callable[[Application], Awaitable[Any]],
                       only: Application | None = None) -> tuple[Application, Any] | None:
    """The first proxy of `app` (or just `only`) for which `attempt` succeeds, with what it gave; None when each
    says it has no such primitive. An unreachable proxy (-31001) is passed over: the next may have it; when none
    has it, the first unreachable one's error is raised (whether it had it is unknown)."""
    unavailable: MCPError | None = None
    for proxy in proxies(app) if only is None else (only,):
        try:
            return proxy, await attempt(proxy)
        except MCPError as exc:
            if exc.code == UNAVAILABLE:
                unavailable = unavailable or exc
            elif exc.code not in NOT_HERE:
                raise
    if unavailable is not None:
        raise unavailable
    return None


async def complete(app: Application, params: dict[str, Any], ctx: Any) -> Any:
    """The answer to `completion/complete` for a prompt or template a proxy of `app` serves; None: none does."""
    ref = params.get("ref") or {}
    if ref.get("type") == "ref/prompt" and isinstance(ref.get("name"), str):
        found = await resolve(app, "prompts", ref["name"], ctx)
        if found is None:
            return None
        proxy, inner, _, _ = found
        return await proxy.source.forward("completion/complete", {**params, "ref": {**ref, "name": inner}}, ctx)
    return await by_uri(app, "completion/complete", params, ctx)


__all__ = ["by_uri", "call_tool", "complete", "get_prompt", "has_sources", "may_serve_tool", "merged",
           "param_headers", "proxies", "proxy_tools_call", "proxy_tools_list", "required_scopes", "resolve",
           "served_by_uri", "sourced_items", "watch_sourced",
           "sourced_mounts"]
