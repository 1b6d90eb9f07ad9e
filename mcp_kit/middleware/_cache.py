"""`ResponseCache`: list and read results kept in the backend, shared by every process, as their cache hints say.

    app.add_middleware(ResponseCache())              # hints from app.cache_ttl_ms / app.cache_scope

`tools/list`, `prompts/list`, `resources/list`, `resources/templates/list` and `resources/read`
are answered from the cache while an entry is fresh. An entry lives the result's `ttlMs` (the
2026-07-28 hint, when its handler set one; else the cache's `ttl_ms`, by default the
application's `cache_ttl_ms`); 0 is not cached. Its `cacheScope` decides who shares it:
"public" entries serve every caller, "private" ones only the caller who got it (`callers.caller_identity`:
OAuth subject, else session, else client address). A result that says "private" where the cache
is "public" is not kept. Keys cover the method, its params (cursor included, `_meta` left out) and
the protocol version, so every era and page has its own entries.

Entries live in the application's backend (`--backend redis://...`: one cache for the
deployment). `notify_resource_updated(uri)` drops that URI's reads, and a change of a list
(tools, prompts, resources: registering or removing one) drops that list, through the backend's
invalidation (every process sees the entries go, and hears it on the bus), before the change is
fanned out to subscribers. Reads answered from the cache still check the caller's OAuth scopes
and still reach the audit trail (which sits outside the cache). Entries are
bounded (`max_entry_bytes` each, `max_entries` per list or URI): a result past them is served,
not kept.

Imports the pipeline, the backends' types, the method table's scope check and the peer facts.
"""

from __future__ import annotations

import functools
import hashlib
import logging
from typing import Any, Literal

import orjson

from .._app.application import Application
from .._app.methods import require_scopes
from .._app.pipeline import Call, CallNext, Middleware
from .._backends.base import Backend, BackendUnavailable, StoreLimitExceeded
from .._protocol.callers import caller_identity

logger = logging.getLogger("mcp_kit.middleware")

LIST_KINDS = {"tools/list": "tools", "prompts/list": "prompts", "resources/list": "resources",
              "resources/templates/list": "resources"}
Scope = Literal["public", "private"]


class ResponseCache(Middleware):
    """List and read results in the backend (see the module docstring)."""

    def __init__(self, *, ttl_ms: int | None = None, scope: Scope | None = None, max_entry_bytes: int = 256 * 1024,
                 max_entries: int = 1000, backend: Backend | None = None) -> None:
        if scope not in (None, "public", "private"):
            raise ValueError(f"cacheScope is 'public' or 'private', not {scope!r}")
        if ttl_ms is not None and ttl_ms < 0:
            raise ValueError("ttl_ms must be 0 or more")
        self.ttl_ms = ttl_ms
        self.scope = scope
        self.max_entry_bytes = max_entry_bytes
        self.max_entries = max_entries
        self.backend = backend
        self._apps: list[Application] = []

    def bind(self, app: Application) -> None:
        """Drop entries when `app` says a resource or a list changed (called when the middleware is added)."""
        if app not in self._apps:
            self._apps.append(app)
            app.change_hooks.append(functools.partial(self._changed, app))

    # ------------------------------------------------------------------ hooks

    async def on_list_tools(self, call: Call, call_next: CallNext) -> Any:
        return await self._cached(call, call_next, "list:tools")

    async def on_list_prompts(self, call: Call, call_next: CallNext) -> Any:
        return await self._cached(call, call_next, "list:prompts")

    async def on_list_resources(self, call: Call, call_next: CallNext) -> Any:
        return await self._cached(call, call_next, "list:resources")

    async def on_list_resource_templates(self, call: Call, call_next: CallNext) -> Any:
        return await self._cached(call, call_next, "list:resources")

    async def on_read_resource(self, call: Call, call_next: CallNext) -> Any:
        uri = call.uri
        if uri is None:
            return await call_next(call)
        return await self._cached(call, call_next, f"read:{uri}")

    # ------------------------------------------------------------------ the cache

    async def _cached(self, call: Call, call_next: CallNext, what: str) -> Any:
        app = call.app
        self.bind(app)
        backend = self.backend or app.backend
        scope: Scope = self.scope or ("public" if app.cache_scope == "public" else "private")
        namespace = f"cache:{what}"
        key = self._key(call, scope)
        try:
            hit = await backend.kv_get(namespace, key)
        except BackendUnavailable as exc:
            logger.warning("response cache skipped for %s: %s", call.method, exc)
            return await call_next(call)
        if hit is not None:
            return self._serve_hit(call, hit)
        result = await call_next(call)
        await self._keep(backend, namespace, key, scope, result, app)
        return result

    def _key(self, call: Call, scope: Scope) -> str:
        params = {name: value for name, value in call.params.items() if name != "_meta"}
        who = caller_identity(call.principal, call.session_id, call.stateless) if scope == "private" else ""
        text = orjson.dumps([call.method, params, call.protocol_version, who], option=orjson.OPT_SORT_KEYS)
        return hashlib.sha256(text).hexdigest()

    def _serve_hit(self, call: Call, hit: bytes) -> Any:
        app = call.app
        if call.method == "resources/read":  # the audit trail (outside this middleware) records it as any read
            require_scopes(call.ctx, app.required_scopes(call.method, call.params), f"Resource {call.uri!r}")
        return orjson.loads(hit)

    async def _keep(self, backend: Backend, namespace: str, key: str, scope: Scope, result: Any,
                    app: Application) -> None:
        if not isinstance(result, dict) or result.get("resultType", "complete") != "complete":
            return
        ttl_ms = result.get("ttlMs")
        if not isinstance(ttl_ms, int) or isinstance(ttl_ms, bool) or ttl_ms < 0:
            ttl_ms = self.ttl_ms if self.ttl_ms is not None else app.cache_ttl_ms
        if ttl_ms <= 0 or (scope == "public" and result.get("cacheScope") == "private"):
            return
        try:
            data = orjson.dumps(result)
            await backend.kv_set(namespace, key, data, ttl_ms / 1000, max_value=self.max_entry_bytes,
                                 max_keys=self.max_entries)
        except (TypeError, StoreLimitExceeded, BackendUnavailable) as exc:
            logger.debug("not cached (%s): %s", namespace[:200], exc)

    # ------------------------------------------------------------------ invalidation

    async def _changed(self, app: Application, kind: str, what: str) -> None:
        namespace = f"cache:read:{what}" if kind == "resource" else f"cache:list:{what}"
        try:
            await (self.backend or app.backend).invalidate(namespace)
        except BackendUnavailable as exc:
            logger.warning("cached %s not dropped (entries expire by their TTL): %s", namespace[:200], exc)
