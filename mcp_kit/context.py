"""What a running handler may do: report progress, log to the client, elicit, sample, list roots.

A `Context` is injected into any tool, resource, or prompt function that has a parameter
annotated with it. It is never part of a tool's schema.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from .errors import ToolError
from .jsonrpc import JSONRPCError, RequestId

if TYPE_CHECKING:
    from mcp_types import CreateMessageResult, ElicitResult, Root

    from .mrtr import Rounds
    from .session import Session

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


class Context:
    """The handle a handler gets on its request and its client."""

    __slots__ = ("session", "request_id", "progress_token", "meta", "rounds")

    def __init__(self, session: Session, request_id: RequestId | None, meta: dict[str, Any] | None,
                 rounds: Rounds | None = None) -> None:
        self.session = session
        self.request_id = request_id
        self.meta = meta or {}
        self.progress_token = self.meta.get("progressToken")
        self.rounds = rounds  # set for 2026-07-28 requests: questions become an input-required result

    @property
    def session_id(self) -> str:
        return self.session.session_id

    @property
    def lifespan_state(self) -> Any:
        return self.session.server.lifespan_state

    @property
    def protocol_version(self) -> str:
        return self.session.version_for(self.meta)

    @property
    def is_cancelled(self) -> bool:
        """True once the client cancelled this request (the task is also being cancelled)."""
        return self.request_id is not None and self.session.was_cancelled(self.request_id)

    def client_supports(self, capability: str) -> bool:
        """Whether the client declared `capability` ("sampling", "elicitation", "roots", ...)."""
        return capability in self.session.client_capabilities_for(self.meta)

    # ------------------------------------------------------------------ notifications

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Send `notifications/progress` for this request (nothing when the client gave no token)."""
        if self.progress_token is None:
            return
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self.session.notify("notifications/progress", params, related_to=self.request_id)

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send a log message to the client if its level passes the client's filter."""
        await self.session.log(level, data, logger, related_to=self.request_id, meta=self.meta)

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
        if self.rounds is None:
            await self._ask("ping", {}, timeout, None)

    def close_sse_stream(self) -> bool:
        """Streamable HTTP: end this request's SSE response now; the client resumes it with GET + Last-Event-ID.

        Useful for long calls behind proxies that cut idle connections (2025-11-25 polling).
        Returns False on transports without such streams.
        """
        return self.request_id is not None and self.session.close_stream(self.request_id)

    # ------------------------------------------------------------------ questions to the client

    async def elicit(self, message: str, schema: type[BaseModel] | dict[str, Any], *, key: str | None = None,
                     timeout: float = 300.0) -> ElicitResult:
        """Ask the user for structured input through the client (form mode).

        `key` names the question in a 2026-07-28 input-required result (default: elicitation_N).
        """
        self._require("elicitation", "ask the user for input")
        requested = schema if isinstance(schema, dict) else _flat_schema(schema)
        params = {"mode": "form", "message": message, "requestedSchema": requested}
        from mcp_types import ElicitResult

        return ElicitResult.model_validate(await self._ask("elicitation/create", params, timeout, key))

    async def sample(self, prompt: str | list[dict[str, Any]], *, max_tokens: int = 512, system_prompt: str | None = None,
                     key: str | None = None, timeout: float = 300.0, **extra: Any) -> CreateMessageResult:
        """Ask the client's model to generate a message."""
        self._require("sampling", "ask the client's model")
        messages = [{"role": "user", "content": {"type": "text", "text": prompt}}] if isinstance(prompt, str) else prompt
        params: dict[str, Any] = {"messages": messages, "maxTokens": max_tokens, **extra}
        if system_prompt is not None:
            params["systemPrompt"] = system_prompt
        from mcp_types import CreateMessageResult

        return CreateMessageResult.model_validate(await self._ask("sampling/createMessage", params, timeout, key))

    async def list_roots(self, *, key: str | None = None) -> list[Root]:
        """The client's roots ([] when it offers none). Cached until the client says they changed."""
        if self.rounds is None:
            return await self.session.list_roots()
        if not self.client_supports("roots"):
            return []
        from mcp_types import Root

        result = await self.rounds.ask("roots/list", {}, key)
        return [Root.model_validate(root) for root in result.get("roots", [])]

    def _require(self, capability: str, doing: str) -> None:
        if self.client_supports(capability):
            return
        if self.rounds is not None:
            from .modern import missing_capability

            raise missing_capability(capability)
        raise ToolError(f"This operation needs to {doing}, but the client did not declare the '{capability}' capability.")

    async def _ask(self, method: str, params: dict[str, Any], timeout: float, key: str | None) -> Any:
        if self.rounds is not None:
            return await self.rounds.ask(method, params, key)
        try:
            return await self.session.ask(method, params, timeout=timeout, related_to=self.request_id)
        except TimeoutError as exc:
            raise ToolError(str(exc)) from None
        except JSONRPCError as exc:
            raise ToolError(f"The client refused {method}: {exc.message}") from None


def _flat_schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    return schema
