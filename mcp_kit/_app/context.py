"""What a running handler may do: report progress, log to the client, elicit, sample, list roots.

A `Context` is injected into any tool, resource, or prompt function that has a parameter
annotated with it. It is never part of a tool's schema. It holds what is particular to its
request (id, `_meta`, progress token, who sent it) and delegates everything that depends on the
protocol era to the request's scope (`channel.py`).

Imports nothing from mcp_kit but `scope`, `state`, `jsonrpc` and the telemetry hooks (and, for typing only,
`auth.principal`; `auth.facade` lazily, for `upstream_token`): never the session.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from .._protocol.jsonrpc import RequestId
from .._telemetry import hooks as telemetry_hooks
from .channel import LOG_LEVELS, RequestChannel
from .state import State, session_state, user_state

if TYPE_CHECKING:
    from mcp_types import CreateMessageResult, ElicitResult, Root

    from ..auth._facade import UpstreamToken
    from ..auth._principal import AccessToken


class Context:
    """The handle a handler gets on its request and its client."""

    __slots__ = ("channel", "request_id", "meta", "progress_token", "principal", "_state", "_owner")

    principal: AccessToken | None
    """Who sent the request: the caller's validated OAuth access token (subject, client_id, scopes,
    claims, expires_at; never the token string), or None when the server does not use OAuth (stdio,
    a static `--auth-token`, no authentication)."""

    def __init__(self, channel: RequestChannel, request_id: RequestId | None, meta: dict[str, Any] | None,
                 principal: object | None = None) -> None:
        self.channel = channel
        self.request_id = request_id
        self.meta = meta or {}
        self.progress_token = self.meta.get("progressToken")
        self.principal = principal  # type: ignore[assignment]  # the transport passes what the OAuth guard validated
        self._state: State | None = None
        self._owner: Any = None  # a mounted app whose primitive this request runs (see `for_owner`)

    async def upstream_token(self) -> UpstreamToken:
        """The caller's token at the identity provider they signed in with (a server behind `FacadeConfig`).

        For a tool that calls the provider's API on the caller's behalf (`headers={"Authorization":
        token.authorization}`); refreshed first when it is about to expire. The token stays on the
        server: never return it, log it or put it in a result. Raises `UpstreamTokenUnavailable`
        (an `isError` result saying why) without a facade sign-in, after revocation, or when the
        provider refuses the refresh.
        """
        from ..auth._facade import upstream_token_of

        return await upstream_token_of(self.principal)

    @property
    def session_id(self) -> str:
        return self.channel.session_id

    @property
    def lifespan_state(self) -> Any:
        """What the lifespan of the server that registered the running tool, resource or prompt yielded."""
        owner = self._owner
        return owner.lifespan_state if owner is not None else self.channel.lifespan_state

    def for_owner(self, app: Any) -> Context:
        """This request's context for a primitive of the mounted `app` (its own lifespan state)."""
        if self._owner is app:
            return self
        other = copy.copy(self)
        other._owner = app
        return other

    @property
    def protocol_version(self) -> str:
        return self.channel.protocol_version

    @property
    def state(self) -> State:
        """This client's state: async `get`/`set`/`delete` of JSON values with a TTL, kept in the backend
        (per session in the handshake era; per signed client-held handle in 2026-07-28: see `state.py`)."""
        if self._state is None:
            app = self.channel.app
            self._state = session_state(self, app.backend, app.state_limits)
        return self._state

    @property
    def user_state(self) -> State:
        """The OAuth subject's state, the same on every session and process; `StateUnavailable` without OAuth."""
        app = self.channel.app
        return user_state(self, app.backend, app.state_limits)

    @property
    def is_cancelled(self) -> bool:
        """True once the client cancelled this request, or its task was cancelled or expired."""
        return self.channel.was_cancelled(self.request_id if self.request_id is not None else "")

    @property
    def task_id(self) -> str | None:
        """The id of the task this call runs as; None when it is not (or not yet) a task."""
        return getattr(self.channel, "task_id", None)

    async def start_task(self, status_message: str | None = None) -> str | None:
        """Run the rest of this call as a task: the client gets the task's handle now (tools with
        `task_start="explicit"`). A no-op returning None when the call cannot become a task."""
        start = getattr(self.channel, "start_task", None)
        return None if start is None else await start(status_message)

    def trace_headers(self) -> dict[str, str]:
        """The W3C trace context (`traceparent`, `tracestate`) that continues this request's trace, as HTTP
        headers for a call the handler makes: `httpx.get(url, headers=ctx.trace_headers())`.

        With tracing on: the request's own span (a child of the client's); off: the client's own context
        from `_meta`, passed on; {} when there is none."""
        return telemetry_hooks.trace_headers(self.meta)

    def client_supports(self, capability: str) -> bool:
        """Whether the client declared `capability` ("sampling", "elicitation", "roots", ...)."""
        return capability in self.channel.client_capabilities

    # ------------------------------------------------------------------ notifications

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Send `notifications/progress` for this request (nothing when the client gave no token).

        In a task it also sets the task's status message (`message`, else "progress/total").
        """
        if self.progress_token is None and self.task_id is None:
            return
        params: dict[str, Any] = {"progress": progress}
        if self.progress_token is not None:
            params["progressToken"] = self.progress_token
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self.channel.notify("notifications/progress", params, self.request_id)

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send a log message to the client if its level passes the client's filter."""
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}")
        threshold = self.channel.log_threshold
        if threshold is None or LOG_LEVELS.index(level) < LOG_LEVELS.index(threshold):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger:
            params["logger"] = logger
        await self.channel.notify("notifications/message", params, self.request_id)

    async def debug(self, data: Any, logger: str | None = None) -> None:
        await self.log("debug", data, logger)

    async def info(self, data: Any, logger: str | None = None) -> None:
        await self.log("info", data, logger)

    async def warning(self, data: Any, logger: str | None = None) -> None:
        await self.log("warning", data, logger)

    async def error(self, data: Any, logger: str | None = None) -> None:
        await self.log("error", data, logger)

    async def ping(self, timeout: float = 10.0) -> None:
        """Check that the client is alive (a server-to-client `ping`; a no-op in the stateless era)."""
        await self.channel.ping(request_id=self.request_id, timeout=timeout)

    def close_sse_stream(self) -> bool:
        """Streamable HTTP: end this request's SSE response now; the client resumes it with GET + Last-Event-ID.

        Useful for long calls behind proxies that cut idle connections (2025-11-25 polling).
        Returns False on transports without such streams.
        """
        return self.request_id is not None and self.channel.close_stream(self.request_id)

    # ------------------------------------------------------------------ questions to the client

    async def elicit(self, message: str, schema: type[BaseModel] | dict[str, Any], *, key: str | None = None,
                     timeout: float = 300.0) -> ElicitResult:
        """Ask the user for structured input through the client (form mode).

        `key` names the question in a 2026-07-28 input-required result (default: elicitation_N).
        """
        self._require("elicitation", "ask the user for input")
        requested = schema if isinstance(schema, dict) else _flat_schema(schema)
        params = {"mode": "form", "message": message, "requestedSchema": requested}
        answer = await self.channel.ask(
            "elicitation/create", params, request_id=self.request_id, timeout=timeout, key=key
        )
        from mcp_types import ElicitResult  # once answered: a 2026-07-28 first round ends in `ask`, without them

        return ElicitResult.model_validate(answer)

    async def sample(
        self,
        prompt: str | list[dict[str, Any]],
        *,
        max_tokens: int = 512,
        system_prompt: str | None = None,
        key: str | None = None,
        timeout: float = 300.0,
        **extra: Any,
    ) -> CreateMessageResult:
        """Ask the client's model to generate a message."""
        self._require("sampling", "ask the client's model")
        messages = (
            [{"role": "user", "content": {"type": "text", "text": prompt}}] if isinstance(prompt, str) else prompt
        )
        params: dict[str, Any] = {"messages": messages, "maxTokens": max_tokens, **extra}
        if system_prompt is not None:
            params["systemPrompt"] = system_prompt
        answer = await self.channel.ask("sampling/createMessage", params, request_id=self.request_id, timeout=timeout,
                                      key=key)
        from mcp_types import CreateMessageResult  # once answered, as in `elicit`

        return CreateMessageResult.model_validate(answer)

    async def list_roots(self, *, key: str | None = None) -> list[Root]:
        """The client's roots ([] when it offers none). Cached until the client says they changed.

        A 2026-07-28 request other than tools/call, prompts/get and resources/read (e.g.
        `subscriptions/listen`) cannot ask the client anything: it gets [], as from a client without
        roots, and the server falls back to its own bounds.
        """
        return await self.channel.list_roots(request_id=self.request_id, key=key)

    def _require(self, capability: str, doing: str) -> None:
        if not self.client_supports(capability):
            raise self.channel.missing_capability(capability, doing)


def _flat_schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    return schema
