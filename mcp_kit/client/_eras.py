"""The client in both protocol eras: the 2026-07-28 envelope, input-required rounds, and `mode="auto"`.

A client in the stateless era (2026-07-28) sends no `initialize`: every request carries the
envelope in `params._meta` (protocol version, client capabilities and info, the log level it opted
in to) and `server/discover` tells it what the server offers. A `tools/call`, `prompts/get` or
`resources/read` may be answered `resultType: "input_required"`: the client answers each of its
`inputRequests` with the handler of that method (sampling, elicitation, roots) and retries the
request with `inputResponses` and the server's `requestState`, for at most `MAX_INPUT_ROUNDS` rounds.

`negotiate_auto` is the connect-time policy of the official SDK's `mode="auto"`: probe
`server/discover` at the newest 2026-07-28 version; anything that is not positive evidence of a
2026-07-28 server (an error answer, an HTTP refusal the transport turned into one, an answer
naming no version we speak) falls back to the `initialize` handshake. Only a -32022 naming
versions none of which we speak, none of them a handshake one, is an incompatibility. A transport
failure (the server is down) is never an era verdict: it propagates.

Imports `_protocol` only.
"""

from __future__ import annotations

import contextvars
from typing import Any, Protocol

import anyio

from .._protocol.errors import UNSUPPORTED_PROTOCOL_VERSION, MCPError
from .._protocol.jsonrpc import INTERNAL_ERROR
from .._protocol.versions import (
    CLIENT_CAPABILITIES_KEY,
    HANDSHAKE_VERSIONS,
    LATEST_STATELESS,
    LOG_LEVEL_KEY,
    PROTOCOL_VERSION_KEY,
    SERVER_INFO_KEY,
    STATELESS_VERSIONS,
)


class EraClient(Protocol):
    """What the era code needs of a client (`BaseClient` is one)."""

    async def answer_question(self, method: Any, params: dict[str, Any]) -> Any: ...

    async def discover(self, version: str, *, timeout: float | None = None) -> dict[str, Any]: ...

    async def handshake(self, *, timeout: float | None = None) -> dict[str, Any]: ...

    def adopt(self, discovered: dict[str, Any], version: str) -> dict[str, Any]: ...


_QUESTION_KEY: contextvars.ContextVar[str | None] = contextvars.ContextVar("mcp_kit_question_key", default=None)


def current_question_key() -> str | None:
    """Inside a handler answering an input round: the key the server gave the question (else None)."""
    return _QUESTION_KEY.get()


CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
MODES = ("legacy", "auto", *STATELESS_VERSIONS)
MAX_INPUT_ROUNDS = 10
INPUT_ROUND_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})
NOT_IN_STATELESS = frozenset({"initialize", "ping", "logging/setLevel", "resources/subscribe",
                              "resources/unsubscribe"})
CAPABILITY_OF_HANDLER = {"elicitation/create": ("elicitation", {"form": {}}),
                         "sampling/createMessage": ("sampling", {}),
                         "roots/list": ("roots", {"listChanged": True})}


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(repr(m) for m in MODES)}; got {mode!r}")
    return mode


def capabilities_of(handlers: dict[str, Any]) -> dict[str, Any]:
    """The client capabilities the registered handlers make true."""
    return dict(CAPABILITY_OF_HANDLER[m] for m in handlers if m in CAPABILITY_OF_HANDLER)


def stamp(params: dict[str, Any] | None, version: str, capabilities: dict[str, Any], client_info: dict[str, Any],
          log_level: str | None) -> dict[str, Any]:
    """`params` with the 2026-07-28 envelope in its `_meta` (what the caller put in `_meta` is kept)."""
    out = dict(params or {})
    meta = dict(out.get("_meta") or {})
    meta.setdefault(PROTOCOL_VERSION_KEY, version)
    meta.setdefault(CLIENT_CAPABILITIES_KEY, capabilities)
    meta.setdefault(CLIENT_INFO_KEY, client_info)
    if log_level is not None:
        meta.setdefault(LOG_LEVEL_KEY, log_level)
    out["_meta"] = meta
    return out


def as_initialize_result(discovered: dict[str, Any], version: str) -> dict[str, Any]:
    """A `server/discover` answer in the shape of an `initialize` answer (what `server_info` etc. read)."""
    info = discovered.get("serverInfo") or (discovered.get("_meta") or {}).get(SERVER_INFO_KEY) or {}
    result = {"protocolVersion": version, "capabilities": discovered.get("capabilities") or {}, "serverInfo": info}
    if discovered.get("instructions"):
        result["instructions"] = discovered["instructions"]
    return result


async def answer_input_rounds(client: EraClient, method: str, params: dict[str, Any], result: Any,
                              send: Any) -> Any:
    """Drive input-required rounds to the final result: answer each question, retry with the answers."""
    for _ in range(MAX_INPUT_ROUNDS):
        if not (isinstance(result, dict) and result.get("resultType") == "input_required"):
            return result
        answers = await answer_all(client, result.get("inputRequests") or {})
        retry = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState")}
        if answers:
            retry["inputResponses"] = answers
        if result.get("requestState") is not None:
            retry["requestState"] = result["requestState"]
        result = await send(method, retry)
    if isinstance(result, dict) and result.get("resultType") == "input_required":
        raise MCPError(INTERNAL_ERROR,
                       f"{method}: the server still asked for input after {MAX_INPUT_ROUNDS} rounds")
    return result


async def answer_all(client: EraClient, questions: dict[str, Any]) -> dict[str, Any]:
    """The answers to one round's questions, asked concurrently (as the server asked them); the first
    handler's failure is raised as it is."""
    answers: dict[str, Any] = {}
    failures: list[Exception] = []

    async def answer(key: str, question: Any) -> None:
        _QUESTION_KEY.set(key)
        question = question if isinstance(question, dict) else {}
        try:
            answers[key] = await client.answer_question(question.get("method"), question.get("params") or {})
        except Exception as exc:
            failures.append(exc)

    async with anyio.create_task_group() as tg:
        for key, question in questions.items():
            tg.start_soon(answer, key, question)
    if failures:
        raise failures[0]
    return answers


async def negotiate_auto(client: EraClient, *, timeout: float | None = None) -> dict[str, Any]:
    """Discover, else initialize (the SDK's `mode="auto"`); returns the server's answer, `initialize`-shaped."""
    version = LATEST_STATELESS
    for attempt in range(2):
        try:
            discovered = await client.discover(version, timeout=timeout)
        except MCPError as exc:
            if exc.code == UNSUPPORTED_PROTOCOL_VERSION:
                supported = _supported(exc.data)
                mutual = [v for v in STATELESS_VERSIONS if v in supported]
                if mutual and attempt == 0:
                    version = mutual[-1]
                    continue
                if supported and not any(v in HANDSHAKE_VERSIONS for v in supported):
                    raise
            return await client.handshake(timeout=timeout)
        offered = discovered.get("supportedVersions") if isinstance(discovered, dict) else None
        mutual = [v for v in STATELESS_VERSIONS if isinstance(offered, list) and v in offered]
        if not mutual:
            return await client.handshake(timeout=timeout)
        return client.adopt(discovered, mutual[-1])
    raise AssertionError("unreachable")


def _supported(data: Any) -> list[str]:
    supported = data.get("supported") if isinstance(data, dict) else None
    return [v for v in supported if isinstance(v, str)] if isinstance(supported, list) else []


