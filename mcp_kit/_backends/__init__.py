"""The backend seam: where state that more than one process must see lives.

A backend bundles one small protocol per concern (`base.py`): the session registry, the event
log for resumption, the bus, deployment-wide leases, the shared request-state key, token buckets
(rate limits), and a small key-value store with TTLs, write-if-absent, take-once and invalidation
(response cache, state, the OAuth facade's codes, clients and refresh tokens); the
Redis `TaskStore` of `mcp_kit.tasks` lives in `tasks/_redis_store.py`. Two implementations:

- `MemoryBackend` (`memory.py`), the default: one process, nothing shared, nothing to install;
  the transports skip every backend call on the hot path (`backend.shared` is False).
- `RedisBackend` (`redis_backend.py`): every process of a deployment on one Redis (or Redis
  Cluster), chosen by URL (`open_backend`): `redis://`, `rediss://` (TLS), `unix://`, and
  `redis+cluster://host:port` (or `?cluster=1`) for a cluster. Needs `pip install 'mcp-kit[redis]'`.

Must not import: session, server, transports, or anything MCP.
"""

from __future__ import annotations

from .base import Backend, BackendUnavailable
from .memory import MemoryBackend


def open_backend(url: str | None) -> Backend:
    """The backend a URL names: None, "" or "memory" for the in-memory default, else Redis."""
    if not url or url == "memory" or url.startswith("memory:"):
        return MemoryBackend()
    scheme = url.split(":", 1)[0].lower()
    if scheme not in ("redis", "rediss", "unix", "redis+cluster", "rediss+cluster"):
        raise ValueError(f"unknown backend URL {url!r}: use memory, redis://host:port/db, rediss://..., unix:///path, "
                         "or redis+cluster://host:port")
    from .redis_backend import RedisBackend

    return RedisBackend(url)


__all__ = ["Backend", "BackendUnavailable", "MemoryBackend", "open_backend"]
