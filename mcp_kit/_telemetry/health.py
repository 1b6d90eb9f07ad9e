"""`/readyz`: whether this process should get traffic now (`/healthz` stays liveness: the process runs).

503 while the application starts (until its lifespan has entered and the backend is attached), while it
drains (from the stop signal, SIGTERM or Ctrl-C, through the shutdown grace), and while the backend is
unreachable (a PING with a short timeout, its verdict kept for a second, so a flood of probes costs Redis
one PING a second); 200 otherwise. The body says which, never more (no addresses, no errors' text).
Like `/healthz`, it needs no credentials (a load balancer's probe has none).

Imports Starlette's response type when it answers (a stdio server imports none of it).
"""

from __future__ import annotations

import time
from typing import Any

PING_TIMEOUT = 0.5  # seconds the backend has to answer a readiness PING
CACHE_SECONDS = 1.0  # how long a PING's verdict stands


class Readiness:
    """The readiness of one HTTP app: started, draining, and the backend's last PING."""

    def __init__(self, backend: Any = None, clock: Any = time.monotonic) -> None:
        self.backend = backend
        self.started = False
        self.draining = False
        self._clock = clock
        self._checked_at = -CACHE_SECONDS
        self._backend_ok = True

    async def backend_reachable(self) -> bool:
        ping = getattr(self.backend, "ping", None)
        if ping is None:  # the in-memory backend: nothing to reach
            return True
        now = self._clock()
        if now - self._checked_at >= CACHE_SECONDS:
            self._checked_at = now  # probes arriving meanwhile use the last verdict: one PING at a time
            self._backend_ok = bool(await ping(PING_TIMEOUT))
            self._checked_at = self._clock()
        return self._backend_ok

    async def status(self) -> tuple[int, str]:
        if self.draining:
            return 503, "draining"
        if not self.started:
            return 503, "starting"
        if not await self.backend_reachable():
            return 503, "backend unreachable"
        return 200, "ready"

    async def endpoint(self, request: Any) -> Any:
        from starlette.responses import JSONResponse

        code, status = await self.status()
        return JSONResponse({"status": status}, status_code=code,
                            headers={"Cache-Control": "no-store"} if code != 200 else None)
