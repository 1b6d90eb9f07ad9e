"""`RateLimit`: token-bucket rate limits per caller, per tool or method, counted in the backend.

    app.add_middleware(RateLimit("10/s", limits={"search": "5/m", "resources/read": "100/m"}))

Each request takes one token from one bucket: its tool's limit (`tools/call` of that tool) if
there is one, else its method's, else the default; none of them: not counted. Buckets are per
caller (`callers.caller_identity`: the OAuth subject, else the handshake-era session, else the client's
address) and live in the application's backend, so with `--backend redis://...` every process
of the deployment counts into the same bucket: a limit of 10/s on three processes is 10/s.

A refused request is not run. A tool call answers an `isError` result saying when to try again
(the model reads it and can wait); any other method fails with `RateLimited` (-31003, `retryAfter`
seconds in `data`). Over HTTP a lone request other than a tool call is counted before it is
dispatched and refused with 429 and `Retry-After` (`admit_http`). The run of a tool call that
became a task is not counted again, nor are `initialize`, `ping` and `server/discover`. When the
backend cannot be reached, requests go through (logged): a rate limit never takes a server down.

Imports the pipeline, the backends' types, the error facts and the peer facts.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from typing import Any

from .._app.pipeline import Call, CallNext, Middleware
from .._backends.base import Backend, BackendUnavailable
from .._primitives.content import error_result
from .._protocol.callers import ADMITTED, caller_identity
from .._protocol.errors import RateLimited
from .._protocol.versions import is_stateless, shape_tool_result
from .._telemetry import hooks as telemetry_hooks
from ._rates import Rate, parse_limit, parse_rate

logger = logging.getLogger("mcp_kit.middleware")

EXEMPT = frozenset({"initialize", "ping", "server/discover"})
RETRY_AFTER_KEY = "io.github.mcp-kit/retryAfter"  # a refused tool call's `_meta`: seconds to wait


def _rate(value: str | Rate, burst: float | None) -> Rate:
    return value if isinstance(value, Rate) else parse_rate(value, burst)


class RateLimit(Middleware):
    """Rate limits per caller (see the module docstring).

    `default`: the rate of every request without its own limit (None: those are not limited);
    `limits`: rates by tool name or by method (`tools/list`, `resources/read`, ...); `burst`: the
    burst of each rate written without one (default: its count); `backend`: where buckets live
    (default: the application's backend, shared when the server runs with one).
    """

    def __init__(self, default: str | Rate | None = None, *, limits: Mapping[str, str | Rate] | None = None,
                 burst: float | None = None, backend: Backend | None = None) -> None:
        self.default = _rate(default, burst) if default is not None else None
        self.limits = {target: _rate(rate, burst) for target, rate in (limits or {}).items()}
        self.backend = backend

    @classmethod
    def from_specs(cls, specs: list[str], burst: float | None = None) -> RateLimit:
        """From command-line specs `[TARGET=]RATE` (`--rate-limit`); ValueError naming a bad one."""
        default: Rate | None = None
        limits: dict[str, Rate] = {}
        for spec in specs:
            target, rate = parse_limit(spec, burst)
            if target is None:
                default = rate
            else:
                limits[target] = rate
        return cls(default, limits=limits)

    def rule_for(self, method: str, params: Mapping[str, Any]) -> tuple[str, Rate] | None:
        """(bucket target, rate) for a request, or None when no limit applies."""
        if method in EXEMPT:
            return None
        if method == "tools/call":
            name = params.get("name")
            if isinstance(name, str) and name in self.limits:
                return f"tool:{name}", self.limits[name]
        if method in self.limits:
            return method, self.limits[method]
        return ("*", self.default) if self.default is not None else None

    async def take(self, backend: Backend, method: str, params: Mapping[str, Any], caller: str
                   ) -> tuple[Rate, float] | None:
        """(rate, seconds to wait) when the request is over its limit; None when it may go on (a token taken)."""
        rule = self.rule_for(method, params)
        if rule is None:
            return None
        target, rate = rule
        try:
            taken = await backend.take(f"rl:{target}:{caller}", rate.per_second, rate.burst)
        except BackendUnavailable as exc:
            logger.warning("rate limit %s not applied to %s: %s", rate, method, exc)
            return None
        return None if taken.allowed else (rate, max(0.001, round(taken.retry_after, 3)))

    async def on_request(self, call: Call, call_next: CallNext) -> Any:
        if call.in_task or self in ADMITTED.get():
            return await call_next(call)
        backend = self.backend or call.app.backend
        caller = caller_identity(call.principal, call.session_id, call.stateless)
        over = await self.take(backend, call.method, call.params, caller)
        if over is None:
            return await call_next(call)
        refused = refusal(call.method, call.params, *over)
        if call.method == "tools/call":
            result = error_result(refused.message)
            result["_meta"] = {RETRY_AFTER_KEY: refused.retry_after}
            return shape_tool_result(result, call.protocol_version)
        raise refused

    async def admit_http(self, backend: Backend, method: str, params: Mapping[str, Any], principal: Any,
                         session_id: str | None, version: str | None) -> RateLimited | None:
        """For the HTTP transport, before it dispatches a lone request: the refusal when it is over its limit
        (answered 429), else None: counted here, and marked so `on_request` does not count it again. Tool
        calls are left to `on_request` (they answer `isError`)."""
        if method == "tools/call":
            return None
        stateless = version is not None and is_stateless(version)
        over = await self.take(backend, method, params, caller_identity(principal, session_id, stateless))
        if over is None:
            if self.rule_for(method, params) is not None:
                ADMITTED.set((*ADMITTED.get(), self))
            return None
        return refusal(method, params, *over)


def refusal(method: str, params: Mapping[str, Any], rate: Rate, wait: float) -> RateLimited:
    """The error refusing a request over `rate`, saying when to try again."""
    what = f"tool {params.get('name')!r}" if method == "tools/call" else method
    logger.info("%s refused: over its rate limit %s", what, rate)
    telemetry_hooks.count("rate_limited", method)
    return RateLimited(f"Rate limit reached: {what} allows {rate} per caller. Try again in {_seconds(wait)}; "
                       "nothing was run.", retry_after=wait, limit=str(rate))


def _seconds(value: float) -> str:
    if value >= 120:
        return f"{math.ceil(value / 60)} min"
    return f"{value:.3g} s" if value < 10 else f"{math.ceil(value)} s"
