"""`TTLCache`: an async memo whose entries expire; concurrent loads of one key run once.

Failures are not cached; `ttl <= 0` caches nothing; past `max_entries` the least recently stored
entries go first. The clock is injectable so tests need not wait.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

import anyio

_MISSING = object()


class TTLCache:
    """Values by key, each fresh for the `ttl` it was loaded with."""

    def __init__(self, *, max_entries: int = 512, clock: Callable[[], float] = time.monotonic) -> None:
        self._entries: OrderedDict[Hashable, tuple[float, Any]] = OrderedDict()
        self._loading: dict[Hashable, anyio.Lock] = {}
        self._max_entries = max_entries
        self._clock = clock

    def __len__(self) -> int:
        return len(self._entries)

    def _fresh(self, key: Hashable) -> Any:
        entry = self._entries.get(key)
        if entry is None:
            return _MISSING
        if self._clock() >= entry[0]:
            del self._entries[key]
            return _MISSING
        return entry[1]

    async def get(self, key: Hashable, ttl: float, load: Callable[[], Awaitable[Any]]) -> Any:
        """The fresh value of `key`, or what `load()` returns (stored for `ttl` seconds)."""
        value = self._fresh(key)
        if value is not _MISSING:
            return value
        lock = self._loading.setdefault(key, anyio.Lock())
        try:
            async with lock:  # a second caller waits for the first load rather than loading again
                value = self._fresh(key)
                if value is not _MISSING:
                    return value
                value = await load()
                if ttl > 0:
                    self._entries[key] = (self._clock() + ttl, value)
                    self._entries.move_to_end(key)
                    while len(self._entries) > self._max_entries:
                        self._entries.popitem(last=False)
                return value
        finally:
            if not lock.locked() and not lock.statistics().tasks_waiting:
                self._loading.pop(key, None)
