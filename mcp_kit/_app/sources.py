"""`Source`: where an application's primitives come from when they live behind another server (a proxy).

An application with a `source` serves the methods in `SOURCED_METHODS` from it instead of its own
registries: the routes (`methods.py`), the handshake era's subscription and log-level methods
(`_eras/session.py`) and the tasks extension's `tasks/*` methods (`tasks/_methods.py`) hand each such
request to `source.forward(method, params, ctx)`, behind the request pipeline like any route. A 2026-07-28
`subscriptions/listen` stream's resource subscriptions are held by the source while the stream is open
(`source.watching(uris, listener, ctx)`). The capabilities the application declares and the OAuth scopes
a request needs come from the source too. `mcp_kit._proxy` implements it. `sourced.py` puts the
application's tool transforms and hiding between a proxy's routes and its source, and serves a proxy
mounted in a plain application from that proxy's source, beside the application's own primitives.

Imports only the context (for typing).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .context import Context

SOURCED_METHODS = frozenset({
    "tools/list", "tools/call", "resources/list", "resources/templates/list", "resources/read", "prompts/list",
    "prompts/get", "completion/complete", "resources/subscribe", "resources/unsubscribe", "logging/setLevel",
    "tasks/get", "tasks/result", "tasks/update", "tasks/cancel", "tasks/list",
})


class Source(Protocol):
    """What an application needs of the server its primitives come from."""

    def capabilities(self, version: str) -> dict[str, Any]:
        """The server capabilities to declare at `version`."""
        ...

    def required_scopes(self, method: str, params: dict[str, Any]) -> tuple[str, ...]:
        """The OAuth scopes the request needs (() for none)."""
        ...

    def param_headers(self, name: str) -> dict[str, str]:
        """Arguments of tool `name` mirrored into `Mcp-Param-*` headers (2026-07-28 HTTP)."""
        ...

    async def forward(self, method: str, params: dict[str, Any], ctx: Context) -> Any:
        """The answer to one request of `SOURCED_METHODS`."""
        ...

    def watching(self, uris: list[str], listener: Any, ctx: Context) -> contextlib.AbstractAsyncContextManager[Any]:
        """Entered while a listen stream wants updates of `uris`: each update calls `listener.resource_updated(uri)`.
        Entering raises what refuses the subscription (an unknown resource: -32602)."""
        ...

    def session_closed(self, session_id: str) -> None:
        """A downstream session ended: what was kept for it may go."""
        ...

    def running(self) -> contextlib.AbstractAsyncContextManager[Any]:
        """Entered while the application runs (connections, background work)."""
        ...

