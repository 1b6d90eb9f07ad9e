"""What an MCP extension (SEP-2133) adds to a server, as one object the application consults at fixed seams.

An `Extension` has an identifier (`vendor-prefix/name`) and settings it declares in
`capabilities.extensions` (per protocol version: None leaves it out of that version), may add core
capabilities (2025-11-25 tasks are the core `tasks` capability), methods and client notifications
(served through the same method table and middleware chain as the core methods), and hooks the
core routes call: answer a `tools/call` itself (tasks), answer a `resources/read` itself (skills),
hide tools from a caller (apps: app-only tools from a host without the extension), add `_meta` to
tool and resource definitions, and run work beside the server (`running`). It reads what the
client declared for it with `client_settings(ctx)`.

    class Greeter(Extension):
        id = "com.example/greeter"

        def settings(self, version):
            return {"languages": ["en", "fr"]}

        @method("greeter/hello")
        async def hello(self, params, ctx):
            return {"text": f"hello {params.get('name', 'you')}"}

    app.add_extension(Greeter())

Imports only the errors, versions and the context (for typing); never the application, the session
or a transport: the application imports this.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from .._protocol.errors import MISSING_CLIENT_CAPABILITY, MCPError
from .._protocol.versions import is_stateless

if TYPE_CHECKING:
    from .context import Context

Handler = Callable[[dict[str, Any], "Context"], Awaitable[Any]]
NotificationHandler = Callable[[dict[str, Any], "Context"], Awaitable[None]]
H = TypeVar("H", bound=Callable[..., Any])

# The methods of the core protocol (both eras): no extension may serve them.
CORE_METHODS = frozenset({
    "initialize", "ping", "logging/setLevel", "tools/list", "tools/call", "resources/list", "resources/templates/list",
    "resources/read", "resources/subscribe", "resources/unsubscribe", "prompts/list", "prompts/get",
    "completion/complete", "server/discover", "subscriptions/listen",
})
# The client notifications of the core protocol: no extension may handle them.
CORE_NOTIFICATIONS = frozenset({
    "notifications/initialized", "notifications/cancelled", "notifications/progress", "notifications/message",
    "notifications/roots/list_changed",
})
# SEP-2133: a reverse-DNS vendor prefix, a slash, a name.
EXTENSION_ID = re.compile(r"^[a-z0-9]+(?:[.-][a-z0-9]+)*/[a-z0-9]+(?:[._-][a-z0-9]+)*$")


def method(name: str) -> Callable[[H], H]:
    """Mark an `Extension` method as the handler of the JSON-RPC request `name`: `async def h(self, params, ctx)`."""

    def mark(fn: H) -> H:
        fn.__mcp_method__ = name  # type: ignore[attr-defined]
        return fn

    return mark


def notification(name: str) -> Callable[[H], H]:
    """Mark an `Extension` method as the handler of the client notification `name`: `async def h(self, params, ctx)`."""

    def mark(fn: H) -> H:
        fn.__mcp_notification__ = name  # type: ignore[attr-defined]
        return fn

    return mark


class Extension:
    """Base class of an extension: set `id`, override what it adds (every hook is optional)."""

    id: ClassVar[str] = ""
    # 2026-07-28 results of these methods carry cache hints (`ttlMs`, `cacheScope`)
    cacheable: ClassVar[frozenset[str]] = frozenset()
    # methods whose handlers may ask the client mid-call (2026-07-28: input-required rounds)
    input_round_methods: ClassVar[frozenset[str]] = frozenset()

    app: Any = None  # the application serving it, once added (`bind`)

    def bind(self, app: Any) -> None:
        """Called once by `app.add_extension`: the application it serves from now on."""
        self.app = app

    # ------------------------------------------------------------------ negotiation

    def settings(self, version: str) -> dict[str, Any] | None:
        """What `capabilities.extensions[id]` says in protocol `version`; None: not declared there."""
        return {}

    def server_capabilities(self, version: str) -> dict[str, Any]:
        """Core capabilities the extension adds in `version` (merged into the server's; {} for none)."""
        return {}

    def client_settings(self, ctx: Context) -> dict[str, Any] | None:
        """What this request's client declared for this extension (`capabilities.extensions[id]`), None if nothing.

        Handshake era: the session's `initialize` capabilities; 2026-07-28: the request's own envelope."""
        extensions = ctx.channel.client_capabilities.get("extensions")
        if not isinstance(extensions, Mapping):
            return None
        settings = extensions.get(self.id)
        return dict(settings) if isinstance(settings, Mapping) else ({} if settings is not None else None)

    def require_client(self, ctx: Context, doing: str) -> dict[str, Any]:
        """The client's settings for this extension, or -32021 naming the capability it must declare."""
        settings = self.client_settings(ctx)
        if settings is None:
            raise MCPError(MISSING_CLIENT_CAPABILITY,
                           f"{doing} needs the '{self.id}' extension declared in the client's capabilities.extensions",
                           {"requiredCapabilities": {"extensions": {self.id: {}}}})
        return settings

    @staticmethod
    def stateless(ctx: Context) -> bool:
        """Whether the request is of the 2026-07-28 era (else the handshake era)."""
        return is_stateless(ctx.protocol_version)

    # ------------------------------------------------------------------ methods and notifications

    def methods(self) -> Mapping[str, Handler]:
        """JSON-RPC requests the extension serves: name -> `async handler(params, ctx)`; by default the `@method`s."""
        return self._marked("__mcp_method__")

    def notifications(self) -> Mapping[str, NotificationHandler]:
        """Client notifications it handles: name -> `async handler(params, ctx)`; by default the `@notification`s."""
        return self._marked("__mcp_notification__")

    def _marked(self, mark: str) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for klass in reversed(type(self).__mro__):
            for attr, value in vars(klass).items():
                name = getattr(value, mark, None)
                if isinstance(name, str):
                    found[name] = getattr(self, attr)
        return found

    # ------------------------------------------------------------------ hooks of the core methods

    async def call_tool(self, tool: Any, arguments: dict[str, Any] | None, params: dict[str, Any],
                        ctx: Context) -> dict[str, Any] | None:
        """Answer a `tools/call` of `tool` (after its name, arguments and scopes were checked); None: not mine."""
        return None

    async def read_resource(self, uri: str, ctx: Context) -> dict[str, Any] | None:
        """Answer a `resources/read` of `uri` (the whole result); None: not mine."""
        return None

    def owns_uri(self, uri: str) -> bool:
        """Whether `read_resource` answers `uri` (the audit trail leaves such reads to the extension)."""
        return False

    def tool_visible(self, tool: Any, ctx: Context) -> bool:
        """Whether this request's caller sees `tool` in `tools/list` and may call it (hidden: as if unknown)."""
        return True

    def tool_meta(self, tool: Any) -> dict[str, Any] | None:
        """`_meta` keys this extension adds to `tool`'s definition, or None."""
        return None

    def resource_meta(self, uri: str) -> dict[str, Any] | None:
        """`_meta` keys this extension adds to the listed resource `uri`, or None."""
        return None

    def listed_resources(self, ctx: Context) -> list[dict[str, Any]]:
        """Resources `resources/list` shows this request's caller besides the registered ones (definitions)."""
        return []

    # ------------------------------------------------------------------ running

    @contextlib.asynccontextmanager
    async def running(self, task_group: Any) -> AsyncIterator[None]:
        """Work beside the server while it runs (`task_group` is the application's anyio task group)."""
        yield


def overrides(extension: Extension, hook: str) -> bool:
    """Whether `extension` overrides the hook `hook` of `Extension` (the application keeps only those)."""
    return getattr(type(extension), hook, None) is not getattr(Extension, hook)
