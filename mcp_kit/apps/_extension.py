"""MCP Apps (SEP-1865, `io.modelcontextprotocol/ui`, specification 2026-01-26) as an extension.

A view is a `ui://` resource of MIME type `text/html;profile=mcp-app` whose `_meta.ui` carries its
content-security-policy domains, permissions, dedicated domain and border preference; a tool names the
view that renders its results in `_meta.ui.resourceUri`, and who may call it in `_meta.ui.visibility`
("model", "app", or both: the default). The host declares the extension in its client capabilities
(`capabilities.extensions["io.modelcontextprotocol/ui"] = {"mimeTypes": [...]}`); a host that does not
sees the same tools and the same results as without Apps, less the tools only a view may call
(app-only: hidden from its `tools/list`, unknown to its `tools/call`) and no views in `resources/list`
(a `resources/read` of one still answers).

What a view may call back reaches the server through its host as ordinary MCP requests: `tools/call`
of a tool whose visibility includes "app" (the host refuses the others; app-only tools exist only for
hosts that declared the extension) and `resources/read`. The server cannot tell a view's call from the
model's: the host enforces which one may call what.

Imports the extension base, the context and the errors; never the application, the session or a transport.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from .._app.context import Context
from .._app.extension import Extension
from .._protocol.errors import ResourceNotFound

EXTENSION_ID = "io.modelcontextprotocol/ui"
MIME_TYPE = "text/html;profile=mcp-app"
SPEC_VERSION = "2026-01-26"  # the MCP Apps specification this follows
VISIBILITIES = frozenset({"model", "app"})
PERMISSIONS = ("camera", "microphone", "geolocation", "clipboardWrite")

F = TypeVar("F", bound=Callable[..., Any])


class View:
    """One registered view: its `ui://` URI, listing fields, `_meta.ui`, and the function returning its HTML."""

    __slots__ = ("uri", "name", "title", "description", "ui", "render")

    def __init__(self, uri: str, render: Callable[[], Any], *, name: str, title: str | None,
                 description: str | None, ui: dict[str, Any]) -> None:
        self.uri = uri
        self.render = render
        self.name = name
        self.title = title
        self.description = description
        self.ui = ui

    def listing(self) -> dict[str, Any]:
        """The view as `resources/list` shows it."""
        item: dict[str, Any] = {"uri": self.uri, "name": self.name, "mimeType": MIME_TYPE}
        if self.title:
            item["title"] = self.title
        if self.description:
            item["description"] = self.description
        if self.ui:
            item["_meta"] = {"ui": self.ui}
        return item

    async def html(self) -> str:
        """The view's HTML document (the function may be sync or async)."""
        found = self.render()
        if inspect.isawaitable(found):
            found = await found
        if not isinstance(found, str):
            raise TypeError(f"view {self.uri} must return its HTML as a str, not {type(found).__name__}")
        return found


def ui_meta(*, connect_domains: Iterable[str] = (), resource_domains: Iterable[str] = (),
            frame_domains: Iterable[str] = (), base_uri_domains: Iterable[str] = (),
            permissions: Iterable[str] = (), domain: str | None = None,
            prefers_border: bool | None = None) -> dict[str, Any]:
    """A view's `_meta.ui`: only what was given (no CSP at all asks the host for its restrictive default)."""
    ui: dict[str, Any] = {}
    csp = {key: list(values) for key, values in (("connectDomains", connect_domains),
                                                 ("resourceDomains", resource_domains),
                                                 ("frameDomains", frame_domains),
                                                 ("baseUriDomains", base_uri_domains)) if values}
    for origins in csp.values():
        for origin in origins:
            if not isinstance(origin, str) or "://" not in origin:
                raise ValueError(f"CSP domain {origin!r} must be an origin such as 'https://api.example.com'")
    if csp:
        ui["csp"] = csp
    wanted = list(permissions)
    unknown = [each for each in wanted if each not in PERMISSIONS]
    if unknown:
        raise ValueError(f"unknown view permission(s) {unknown}: one of {', '.join(PERMISSIONS)}")
    if wanted:
        ui["permissions"] = {each: {} for each in wanted}
    if domain is not None:
        ui["domain"] = domain
    if prefers_border is not None:
        ui["prefersBorder"] = prefers_border
    return ui


def _visibility(visibility: Iterable[str]) -> tuple[str, ...]:
    chosen = tuple(dict.fromkeys(visibility))
    if not chosen or not set(chosen) <= VISIBILITIES:
        raise ValueError(f"visibility must be 'model', 'app' or both, not {list(chosen)}")
    return chosen


class Apps(Extension):
    """The MCP Apps extension: `apps = app.add_extension(Apps())`, then `@apps.view(...)`, `@apps.tool(...)`.

        apps = app.add_extension(Apps())

        @apps.view("ui://weather/week", name="Week", prefers_border=True)
        def week() -> str:
            return WEEK_HTML                          # a whole HTML document, scripts and styles inline

        apps.link("get_forecast", "ui://weather/week")   # an existing tool, rendered by the view

        @apps.tool(view="ui://weather/week", visibility=["app"])   # only the view calls it
        async def week_data(city: str) -> dict: ...
    """

    id = EXTENSION_ID

    def __init__(self) -> None:
        self.views: dict[str, View] = {}
        self.links: dict[str, dict[str, Any]] = {}  # tool name -> its _meta.ui

    def settings(self, version: str) -> dict[str, Any] | None:
        return {"mimeTypes": [MIME_TYPE]}

    # ------------------------------------------------------------------ registration

    def view(self, uri: str, *, name: str | None = None, title: str | None = None, description: str | None = None,
             connect_domains: Iterable[str] = (), resource_domains: Iterable[str] = (),
             frame_domains: Iterable[str] = (), base_uri_domains: Iterable[str] = (),
             permissions: Iterable[str] = (), domain: str | None = None,
             prefers_border: bool | None = None) -> Callable[[F], F]:
        """Register `fn() -> str` (the view's HTML document) as the view at `uri` (`ui://...`).

        The domains become `_meta.ui.csp` (connect: fetch/XHR/WebSocket; resource: scripts, styles, images,
        fonts, media; frame: nested iframes; base URI); none at all asks the host for its restrictive
        default (no network). `permissions`: camera, microphone, geolocation, clipboardWrite."""
        if not uri.startswith("ui://") or len(uri) <= len("ui://"):
            raise ValueError(f"a view's URI must use the ui:// scheme, not {uri!r}")
        ui = ui_meta(connect_domains=connect_domains, resource_domains=resource_domains, frame_domains=frame_domains,
                     base_uri_domains=base_uri_domains, permissions=permissions, domain=domain,
                     prefers_border=prefers_border)

        def decorate(fn: F) -> F:
            self.views[uri] = View(uri, fn, name=name or fn.__name__, title=title,
                                   description=description or inspect.getdoc(fn), ui=ui)
            if self.app is not None:
                self.app._list_changed("resources")
            return fn

        return decorate

    def link(self, tool: str, view: str | None, *, visibility: Iterable[str] = ("model", "app")) -> None:
        """Mark the registered tool `tool` as rendered by `view` and callable by `visibility`."""
        if self.app is not None and self.app.tools.get(tool) is None:
            raise ValueError(f"no tool {tool!r} is registered; register it before linking it to a view")
        meta: dict[str, Any] = {"visibility": list(_visibility(visibility))}
        if view is not None:
            meta = {"resourceUri": view, **meta}
        self.links[tool] = meta
        if self.app is not None:
            self.app._list_changed("tools")

    def tool(self, fn: Callable[..., Any] | None = None, *, view: str | None = None,
             visibility: Iterable[str] = ("model", "app"), **options: Any) -> Any:
        """`@app.tool` with the view that renders its results and who may call it ("model", "app")."""
        chosen = _visibility(visibility)

        def decorate(f: F) -> F:
            self.app.add_tool(f, **options)
            self.link(options.get("name") or f.__name__, view, visibility=chosen)
            return f

        return decorate(fn) if fn is not None else decorate  # type: ignore[arg-type]

    # ------------------------------------------------------------------ negotiation

    def host_supports(self, ctx: Context) -> bool:
        """Whether this request's host declared MCP Apps with the HTML profile (it renders views)."""
        settings = self.client_settings(ctx)
        if settings is None:
            return False
        types = settings.get("mimeTypes")
        return types is None or (isinstance(types, list) and MIME_TYPE in types)

    # ------------------------------------------------------------------ hooks

    def tool_meta(self, tool: Any) -> dict[str, Any] | None:
        meta = self.links.get(tool.name) if tool is not None else None
        return {"ui": meta} if meta is not None else None

    def tool_visible(self, tool: Any, ctx: Context) -> bool:
        meta = self.links.get(tool.name)
        if meta is None or "model" in meta["visibility"]:
            return True
        return self.host_supports(ctx)  # app-only: only a host that renders views has them

    def listed_resources(self, ctx: Context) -> list[dict[str, Any]]:
        """The views, for a host that renders them (hosts without Apps list the server's resources as before)."""
        return [view.listing() for view in self.views.values()] if self.host_supports(ctx) else []

    async def read_resource(self, uri: str, ctx: Context) -> dict[str, Any] | None:
        if not uri.startswith("ui://"):
            return None
        view = self.views.get(uri)
        if view is None:
            raise ResourceNotFound(uri, f"Resource not found: no view {uri}; resources/list names every view")
        content: dict[str, Any] = {"uri": uri, "mimeType": MIME_TYPE, "text": await view.html()}
        if view.ui:
            content["_meta"] = {"ui": view.ui}
        return {"contents": [content]}
