"""The MCP methods both protocol eras serve, in one table: method name -> route.

A route is `route(app, params, ctx) -> result`: it reads the request's parameters, works on the
application's registries, and sees its request only through `ctx` (whose scope knows the era:
version, client, how to reach it). Each era adds its own few methods next to the state they
touch: the handshake era's lifecycle and subscriptions in `_eras/session.py`, the stateless era's
`server/discover` and `subscriptions/listen` in `_eras/stateless.py`, which also turns the questions of
`INPUT_ROUND_METHODS` into input-required rounds and adds cache hints to `CACHEABLE` results.

OAuth scopes: a tool, resource or prompt may declare the scopes a caller needs. Over HTTP the
transport refuses a request lacking them with a 403 `insufficient_scope` challenge before it is
dispatched; the routes check again for every request that gets here with an access token
(`ctx.principal`), e.g. inside a batch or over legacy SSE: a tool answers an `isError` result,
a resource or prompt -31002 (`InsufficientScopeError`), both naming the missing scopes. Resource
scopes are checked in `resources.bind_resource`, so subscriptions (both eras) need them too; a
completion for a prompt's or template's arguments needs that primitive's scopes (a mounted proxy's: what
its `scope_map` names, through `Application.required_scopes`). Lists
show every primitive whatever the caller's scopes, so a client can see what a step-up would
unlock, unless the application has `list_by_scope`: then lists show a caller only what its scopes
allow (cursors index that caller's list) and a hidden tool, prompt or resource answers exactly as
one that does not exist. Without OAuth (`ctx.principal` None: stdio, static token, no auth) nothing is checked.

Proxies: on a proxy the routes hand each request to its source, `tools/list` and `tools/call` through its
tool transforms and hiding; an application with a proxy mounted in it lists that proxy's primitives after
its own and routes a request for one it does not serve itself to the proxy's source (`sourced.py`).

Imports the application, the registries and the context; never the session or a transport.
"""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from typing import Any

from .._primitives.completions import CompletionRegistry
from .._primitives.content import error_result
from .._primitives.prompts import render_prompt
from .._primitives.resources import read_resource
from .._primitives.tools import call_tool
from .._protocol.errors import InsufficientScopeError, ResourceNotFound, invalid_params, scope_refusal
from .._protocol.versions import shape_metadata, shape_tool_result
from . import sourced as sources
from .application import Application
from .context import Context
from .pipeline import Call

Route = Callable[[Application, dict[str, Any], Context], Awaitable[Any]]


# ---------------------------------------------------------------------- parameter checks


def check_meta(meta: Any) -> None:
    """-32602 unless `_meta` is an object whose progress token (if any) is a string or a number."""
    if not isinstance(meta, dict):
        raise invalid_params(f"'_meta' must be an object, not {json_type(meta)}")
    token = meta.get("progressToken")
    if token is not None and (isinstance(token, bool) or not isinstance(token, (str, int, float))):
        raise invalid_params(f"'_meta.progressToken' must be a string or a number, not {json_type(token)}")


def json_type(value: Any) -> str:
    """How JSON names the type of `value` ("a string", "an object", ...), for error messages."""
    if isinstance(value, bool):
        return "a boolean"
    return {str: "a string", int: "a number", float: "a number", list: "an array", dict: "an object"}.get(
        type(value), "null" if value is None else type(value).__name__)


def uri_param(params: dict[str, Any]) -> str:
    uri = params.get("uri")
    if not isinstance(uri, str) or not uri:
        raise invalid_params("'uri' is required (a string)")
    return uri


# ---------------------------------------------------------------------- pagination


def paginate(items: list[Any], params: dict[str, Any], page_size: int) -> tuple[list[Any], str | None]:
    """Slice a list by an opaque cursor; an invalid cursor is -32602."""
    cursor = params.get("cursor")
    start = 0
    if cursor is not None:
        try:
            start = int(base64.urlsafe_b64decode(str(cursor).encode()).decode())
        except (ValueError, UnicodeDecodeError):
            raise invalid_params(f"Invalid cursor {cursor!r}: pass back a nextCursor from a previous page") from None
        if start < 0 or start > len(items):
            raise invalid_params(f"Invalid cursor {cursor!r}: it points outside the list")
    end = start + page_size
    next_cursor = base64.urlsafe_b64encode(str(end).encode()).decode() if end < len(items) else None
    return items[start:end], next_cursor


def _page(key: str, items: list[Any], params: dict[str, Any], page_size: int) -> dict[str, Any]:
    page, next_cursor = paginate(items, params, page_size)
    result: dict[str, Any] = {key: page}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result


# ---------------------------------------------------------------------- routes


def visible_to(app: Application, ctx: Context) -> Callable[[Any], bool] | None:
    """With `list_by_scope`, whether the caller's OAuth scopes allow a primitive (an entry with `scopes`);
    None when everything is shown (the option is off, or the request came without an access token)."""
    principal = ctx.principal
    if not app.list_by_scope or principal is None:
        return None
    return lambda entry: not entry.scopes or not principal.missing(entry.scopes)


def tool_visible_to(app: Application, ctx: Context) -> Callable[[Any], bool] | None:
    """`visible_to` for tools, and every extension's `tool_visible` (None when every tool is shown)."""
    by_scope = visible_to(app, ctx)
    filters = app.tool_filters
    if not filters:
        return by_scope

    def visible(tool: Any) -> bool:
        return (by_scope is None or by_scope(tool)) and all(each.tool_visible(tool, ctx) for each in filters)

    return visible


async def _list_tools(app: Application, params: dict[str, Any], ctx: Context) -> Any:
    if app.mounts and sources.has_sources(app):  # a mounted proxy's tools follow this server's own
        own = app.tools.page(ctx.protocol_version, None, len(app.tools) + 1, tool_visible_to(app, ctx))["tools"]
        if app.tool_meta_hooks:
            own = [_with_tool_meta(app, definition) for definition in own]
        return _page("tools", await sources.merged(app, "tools", own, ctx), params, app.page_size)
    result = app.tools.page(ctx.protocol_version, params.get("cursor"), app.page_size, tool_visible_to(app, ctx))
    if app.tool_meta_hooks:  # extensions add _meta keys to the definitions (copies: the registry caches them)
        result["tools"] = [_with_tool_meta(app, definition) for definition in result["tools"]]
    return result


def _with_tool_meta(app: Application, definition: dict[str, Any]) -> dict[str, Any]:
    tool = app.tools.get(definition["name"])
    for each in app.tool_meta_hooks:
        extra = each.tool_meta(tool)
        if extra:
            definition = {**definition, "_meta": {**(definition.get("_meta") or {}), **extra}}
    return definition


async def _call_tool(app: Application, params: dict[str, Any], ctx: Context) -> Any:
    name = params.get("name")
    if not isinstance(name, str):
        raise invalid_params("tools/call needs 'name' (a string)")
    tool = app.tools.get(name)
    if tool is None and app.mounts and sources.has_sources(app):  # a mounted proxy's, if one serves it
        if params.get("arguments") is not None and not isinstance(params.get("arguments"), dict):
            raise invalid_params("'arguments' must be an object")
        answer = await sources.call_tool(app, name, params, ctx)
        if answer is not None:
            return answer
    visible = tool_visible_to(app, ctx)
    if visible is not None and (tool is None or not visible(tool)):  # hidden: exactly as if it did not exist
        raise app.tools.unknown_tool(name, [each.name for each in app.tools if visible(each)])
    if tool is None:
        raise app.tools.unknown_tool(name)
    arguments = params.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        raise invalid_params("'arguments' must be an object")
    if tool.scopes and ctx.principal is not None:  # a caller without a needed scope: refused, as a result
        missing = ctx.principal.missing(tool.scopes)
        if missing:
            return shape_tool_result(error_result(scope_refusal(f"Tool '{name}'", missing)), ctx.protocol_version)
    for extension in app.tool_call_hooks:  # an extension may answer the call itself (tasks: as a task)
        answered = await extension.call_tool(tool, arguments, params, ctx)
        if answered is not None:
            return answered
    result = await call_tool(tool, arguments, ctx, crash=app.pipeline is not None)
    return shape_tool_result(result, ctx.protocol_version)


async def _list_resources(app: Application, params: dict[str, Any], ctx: Context) -> Any:
    version = ctx.protocol_version
    listed = await app.resources.listed()
    for extension in app.resource_listers:  # what an extension lists for this caller (apps: views for hosts)
        listed += extension.listed_resources(ctx)
    visible = visible_to(app, ctx)
    if visible is not None:
        listed = [r for r in listed if _resource_visible(app, visible, r.get("uri"))]
    items = [shape_metadata(r, version) for r in listed]
    if app.resource_meta_hooks:  # extensions add _meta keys to the listed resources
        for index, item in enumerate(items):
            for each in app.resource_meta_hooks:
                extra = each.resource_meta(str(item.get("uri")))
                if extra:
                    item = items[index] = {**item, "_meta": {**(item.get("_meta") or {}), **extra}}
    if app.mounts and sources.has_sources(app):
        items = await sources.merged(app, "resources", items, ctx)
    return _page("resources", items, params, app.page_size)


def _resource_visible(app: Application, visible: Callable[[Any], bool], uri: Any) -> bool:
    found = app.resources.find(uri) if isinstance(uri, str) else None
    return found is None or visible(found[0])


async def _list_templates(app: Application, params: dict[str, Any], ctx: Context) -> Any:
    version = ctx.protocol_version
    visible = visible_to(app, ctx)
    items = [shape_metadata(t.definition(), version) for t in app.resources.templates.values()
             if visible is None or visible(t)]
    if app.mounts and sources.has_sources(app):
        items = await sources.merged(app, "resourceTemplates", items, ctx)
    return _page("resourceTemplates", items, params, app.page_size)


async def _read_resource(app: Application, params: dict[str, Any], ctx: Context) -> Any:
    uri = uri_param(params)
    for extension in app.resource_read_hooks:  # an extension may answer the read itself (skills: skill://)
        answered = await extension.read_resource(uri, ctx)
        if answered is not None:
            return answered
    if app.mounts and sources.has_sources(app) and app.resources.find(uri) is None:  # a mounted proxy's?
        answer = await sources.by_uri(app, "resources/read", params, ctx)
        if answer is not None:
            return answer
    visible = visible_to(app, ctx)
    if visible is not None and not _resource_visible(app, visible, uri):
        raise ResourceNotFound(uri)
    return {"contents": await read_resource(app.resources, uri, ctx)}


def require_scopes(ctx: Context, scopes: tuple[str, ...], what: str) -> None:
    """InsufficientScopeError unless the caller's access token grants `scopes` (nothing to check without OAuth)."""
    if scopes and ctx.principal is not None:
        missing = ctx.principal.missing(scopes)
        if missing:
            raise InsufficientScopeError(what, scopes, missing)


async def _list_prompts(app: Application, params: dict[str, Any], ctx: Context) -> Any:
    version = ctx.protocol_version
    visible = visible_to(app, ctx)
    items = [shape_metadata(p.definition(), version) for p in app.prompts.values() if visible is None or visible(p)]
    if app.mounts and sources.has_sources(app):
        items = await sources.merged(app, "prompts", items, ctx)
    return _page("prompts", items, params, app.page_size)


async def _get_prompt(app: Application, params: dict[str, Any], ctx: Context) -> Any:
    name = params.get("name")
    entry = app.prompts.get(name) if isinstance(name, str) else None
    if entry is None and isinstance(name, str) and app.mounts and sources.has_sources(app):
        answer = await sources.get_prompt(app, name, params, ctx)
        if answer is not None:
            return answer
    visible = visible_to(app, ctx)
    if visible is not None and (entry is None or not visible(entry)):  # hidden: as if it did not exist
        known = ", ".join(p.name for p in app.prompts.values() if visible(p)) or "(none)"
        raise invalid_params(f"Unknown prompt {name!r}. Available prompts: {known}")
    if entry is None:
        known = ", ".join(app.prompts) or "(none)"
        raise invalid_params(f"Unknown prompt {name!r}. Available prompts: {known}")
    require_scopes(ctx, entry.scopes, f"Prompt {name!r}")
    arguments = params.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        raise invalid_params(f"'arguments' must be an object of strings, not {json_type(arguments)}")
    return await render_prompt(entry, arguments, ctx)


async def _complete(app: Application, params: dict[str, Any], ctx: Context) -> Any:
    ref, argument = params.get("ref"), params.get("argument")
    if not isinstance(ref, dict) or not isinstance(argument, dict) or "name" not in argument:
        raise invalid_params("completion/complete needs 'ref' and 'argument' {name, value}")
    context = params.get("context")
    if context is not None and not (isinstance(context, dict) and isinstance(context.get("arguments") or {}, dict)):
        raise invalid_params("'context' must be an object {\"arguments\": {name: value}}")
    if ctx.principal is not None:  # completing a prompt's or template's arguments needs what using it needs
        require_scopes(ctx, app.required_scopes("completion/complete", params), f"Completing {ref.get('type')} "
                       f"{ref.get('name') or ref.get('uri')!r}")
    completions: CompletionRegistry = app.completions
    if app.mounts and sources.has_sources(app) and not (  # a mounted proxy's prompt or template?
            ref.get("name") in app.prompts if ref.get("type") == "ref/prompt"
            else ref.get("uri") in app.resources.templates or ref.get("uri") in app.resources.fixed):
        answer = await sources.complete(app, params, ctx)
        if answer is not None:
            return answer
    return {"completion": await completions.complete(ref, argument, params.get("context"))}


def sourced(method: str, route: Route) -> Route:
    """`route`, unless the application has a `Source` (a proxy): then the source answers (`sources.py`)."""

    async def answer(app: Application, params: dict[str, Any], ctx: Context) -> Any:
        source = app.source
        if source is not None:
            if method in PROXY_TOOLS:  # the proxy's own transforms and hiding (`sourced.py`)
                return await PROXY_TOOLS[method](app, params, ctx)
            return await source.forward(method, params, ctx)
        return await route(app, params, ctx)

    answer.__name__ = getattr(route, "__name__", method)
    return answer


PROXY_TOOLS: dict[str, Route] = {"tools/list": sources.proxy_tools_list, "tools/call": sources.proxy_tools_call}

ROUTES: dict[str, Route] = {
    "tools/list": sourced("tools/list", _list_tools),
    "tools/call": sourced("tools/call", _call_tool),
    "resources/list": sourced("resources/list", _list_resources),
    "resources/templates/list": sourced("resources/templates/list", _list_templates),
    "resources/read": sourced("resources/read", _read_resource),
    "prompts/list": sourced("prompts/list", _list_prompts),
    "prompts/get": sourced("prompts/get", _get_prompt),
    "completion/complete": sourced("completion/complete", _complete),
}


def _endpoint(route: Route) -> Callable[[Call], Awaitable[Any]]:
    def answer(call: Call) -> Awaitable[Any]:
        return route(call.app, call.params, call.ctx)

    return answer


# What answers a `Call` of each route at the end of the middleware chain (built once).
ENDPOINTS: dict[str, Callable[[Call], Awaitable[Any]]] = {method: _endpoint(route) for method, route in ROUTES.items()}

# Methods whose handlers may ask the client mid-call (2026-07-28: through input-required rounds); an
# extension adds its own (`Application.extension_input_rounds`).
INPUT_ROUND_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})
# Methods whose complete results carry cache hints in 2026-07-28 (and `Application.extension_cacheable`).
CACHEABLE = frozenset({"tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"})


def route_of(app: Application, method: str) -> tuple[Route, Callable[[Call], Awaitable[Any]]] | None:
    """The route of `method` and what answers its `Call`: a core method's, else an extension's; None: unknown."""
    route = ROUTES.get(method)
    if route is not None:
        return route, ENDPOINTS[method]
    route = app.extension_routes.get(method)
    if route is not None:
        return route, app.extension_endpoints[method]
    return None
