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
  `redis+cluster://host:port` (or `?cluster=1`) for a cluster. Needs `pip install 'mcp-kit-framework[redis]'`.

Must not import: session, server, transports, or anything MCP.
"""

from __future__ import annotations

import importlib.util
from urllib.parse import urlsplit

from .._errors import MCPKitError
from .base import Backend, BackendUnavailable
from .memory import MemoryBackend

REDIS_SCHEMES = ("redis", "rediss", "redis+cluster", "rediss+cluster")
REDIS_EXTRA = "pip install 'redis>=5' (in a clone: pip install -e '.[redis]')"
KNOWN = "memory, redis://host:port/db, rediss://host:port (TLS), unix:///path/to.sock, or redis+cluster://host:port"


class MissingBackendExtra(MCPKitError, ImportError):
    """A Redis backend asked for where the `redis` package is not installed (the message says how to)."""


def check_backend_url(url: str | None) -> None:
    """ValueError in one sentence when `url` is not a backend URL `open_backend` can use (a typo such as
    `redis:/host:port` would otherwise connect to localhost:6379); MissingBackendExtra without redis."""
    if not url or url == "memory" or url.startswith("memory:"):
        return
    scheme, sep, rest = url.partition(":")
    scheme = scheme.lower()
    if not sep or scheme not in (*REDIS_SCHEMES, "unix"):
        raise ValueError(f"unknown backend URL {url!r}: use {KNOWN}")
    if scheme == "unix":
        if not urlsplit(url).path:
            raise ValueError(f"backend {url!r} names no socket path: write unix:///path/to/redis.sock")
    else:
        fixed = f"{scheme}://{rest.lstrip('/')}"
        if not rest.startswith("//"):
            raise ValueError(f"backend {url!r} is not a URL (two slashes after {scheme}:); did you mean {fixed}?")
        parts = urlsplit(url)
        try:
            parts.port  # noqa: B018  # raises ValueError on a port that is not a number or out of range
        except ValueError:
            raise ValueError(f"backend {url!r} has a port that is not a number from 1 to 65535") from None
        if not parts.hostname:
            raise ValueError(f"backend {url!r} names no host: write e.g. {scheme}://127.0.0.1:6379/0")
        database = parts.path.strip("/")
        if database and not (scheme.endswith("+cluster") or database.isdigit()):
            raise ValueError(f"backend {url!r}: the path is the database number (e.g. /0), not {database!r}")
    if importlib.util.find_spec("redis") is None:
        raise MissingBackendExtra(f"the Redis backend ({url}) needs the redis package: {REDIS_EXTRA}")


def open_backend(url: str | None) -> Backend:
    """The backend a URL names: None, "" or "memory" for the in-memory default, else Redis (`check_backend_url`
    says what is wrong with a URL that names neither)."""
    check_backend_url(url)
    if not url or url == "memory" or url.startswith("memory:"):
        return MemoryBackend()
    from .redis_backend import RedisBackend

    return RedisBackend(url)


__all__ = ["Backend", "BackendUnavailable", "MemoryBackend", "MissingBackendExtra", "check_backend_url",
           "open_backend"]
