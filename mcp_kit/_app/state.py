"""`ctx.state` and `ctx.user_state`: small JSON values a handler keeps between requests, in the backend.

    count = await ctx.state.get("count", 0)
    await ctx.state.set("count", count + 1, ttl=600)

- `ctx.state` belongs to the client's conversation: in the handshake era its session (every
  process of a deployment sees the session's values: they live in the backend); in 2026-07-28,
  which has no sessions, a state handle the server signs and the client carries: the first write
  of a request without one makes one, and the result's `_meta` carries it back under
  `STATE_HANDLE_KEY`; a client that sends it in later requests' `_meta` gets the same state. A
  handle that was altered or forged is ignored (a new one is made on the next write).
- `ctx.user_state` belongs to the OAuth subject, whatever the session or process; without OAuth
  there is no user to keep it for: `StateUnavailable`.

Values are JSON (what `orjson` writes); each is at most `StateLimits.max_value_bytes` encoded and
each state holds at most `max_keys` keys: past either, `set` raises `StateTooLarge` and changes
nothing. Every value lives `ttl` seconds (`StateLimits.ttl` unless given) after it was written.

Imports the backends' types, the caller rule and input rounds' signing key; never the context (which
imports this: a handler's `Context` is passed in).
"""

from __future__ import annotations

import secrets
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from .._backends.base import StoreLimitExceeded
from .._eras.input_rounds import sign_handle, verify_handle
from .._errors import MCPKitError
from .._protocol.callers import caller_identity
from .._protocol.versions import is_stateless

if TYPE_CHECKING:
    from .._backends.base import Backend

STATE_HANDLE_KEY = "io.github.mcp-kit/state"  # in `_meta`: the 2026-07-28 state handle
_MISSING = object()


class StateTooLarge(StoreLimitExceeded):
    """A state write over its bounds: a value over `max_value_bytes` encoded, or a key past `max_keys`."""


class StateUnavailable(MCPKitError):
    """State that cannot exist for this request: `ctx.user_state` without an OAuth caller."""


@dataclass(frozen=True)
class StateLimits:
    """How long state values live (seconds) and how large one state may grow."""

    ttl: float = 3600.0
    max_value_bytes: int = 16 * 1024
    max_keys: int = 100

    def __post_init__(self) -> None:
        if self.ttl <= 0 or self.max_value_bytes < 1 or self.max_keys < 1:
            raise ValueError("state limits need a ttl above 0, and max_value_bytes and max_keys of at least 1")


class State:
    """One namespace of JSON values in the backend, with async `get`, `set` and `delete`."""

    __slots__ = ("_backend", "_namespace", "_limits", "_on_first_write")

    def __init__(self, backend: Backend, namespace: str | None, limits: StateLimits,
                 on_first_write: Any = None) -> None:
        self._backend = backend
        self._namespace = namespace  # None: a 2026-07-28 state without a handle yet
        self._limits = limits
        self._on_first_write = on_first_write  # () -> namespace: makes the handle

    async def get(self, key: str, default: Any = None) -> Any:
        """The value of `key`, or `default` when it was never set, expired, or was deleted."""
        if self._namespace is None:
            return default
        data = await self._backend.kv_get(self._namespace, key)
        return default if data is None else orjson.loads(data)

    async def set(self, key: str, value: Any, ttl: float | None = None) -> None:
        """Keep `value` (JSON) under `key` for `ttl` seconds; `StateTooLarge` past the limits (nothing changes)."""
        try:
            data = orjson.dumps(value)
        except TypeError as exc:
            raise TypeError(f"state values are JSON; {key!r} cannot be written: {exc}") from None
        limits = self._limits
        if self._namespace is None:
            self._namespace = self._on_first_write()
        try:
            await self._backend.kv_set(self._namespace, key, data, ttl if ttl is not None else limits.ttl,
                                       max_value=limits.max_value_bytes, max_keys=limits.max_keys)
        except StoreLimitExceeded as exc:
            what = (f"a value of {len(data)} bytes is over the {limits.max_value_bytes}-byte limit"
                    if exc.limit == "value" else f"this state already holds {limits.max_keys} keys, its limit")
            raise StateTooLarge(f"state {key!r} not written: {what}; keep less, or delete keys first",
                                limit=exc.limit, bound=exc.bound) from None

    async def delete(self, key: str) -> None:
        if self._namespace is not None:
            await self._backend.kv_delete(self._namespace, key)


class HandleSlot:
    """Where a 2026-07-28 request's new state handle waits to be put in its result's `_meta`."""

    __slots__ = ("handle",)

    def __init__(self) -> None:
        self.handle: str | None = None


NEW_HANDLE: ContextVar[HandleSlot | None] = ContextVar("mcp_kit_state_handle", default=None)


def session_state(ctx: Any, backend: Backend, limits: StateLimits) -> State:
    """`ctx.state` (see the module docstring)."""
    if not is_stateless(ctx.protocol_version):
        return State(backend, f"state:s:{ctx.session_id}", limits)
    carried = ctx.meta.get(STATE_HANDLE_KEY)
    handle_id = verify_handle("state", carried) if isinstance(carried, str) else None
    if handle_id is not None:
        return State(backend, f"state:h:{handle_id}", limits)
    slot = NEW_HANDLE.get()

    def first_write() -> str:
        new_id = secrets.token_urlsafe(18)
        if slot is not None:
            slot.handle = sign_handle("state", new_id)
        return f"state:h:{new_id}"

    return State(backend, None, limits, first_write)


def user_state(ctx: Any, backend: Backend, limits: StateLimits) -> State:
    """`ctx.user_state` (see the module docstring)."""
    if ctx.principal is None:
        raise StateUnavailable("ctx.user_state needs an OAuth caller (it is kept per subject) and this request has "
                               "none; use ctx.state, which is kept per session")
    return State(backend, f"state:u:{caller_identity(ctx.principal, None, False)}", limits)
