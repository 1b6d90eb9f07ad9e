"""A small time-to-live cache with an injectable clock."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any


class TTLCache:
    """Maps keys to values that expire `ttl` seconds after they were stored."""

    def __init__(self, max_entries: int = 512, clock: Callable[[], float] = time.monotonic) -> None:
        self._entries: OrderedDict[Hashable, tuple[float, Any]] = OrderedDict()
        self._max_entries = max_entries
        self._clock = clock

    def get(self, key: Hashable) -> Any | None:
        """The stored value, or None when absent or expired."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        expires_at, value = entry
        if self._clock() >= expires_at:
            del self._entries[key]
            return None
        return value

    def put(self, key: Hashable, value: Any, ttl: float) -> None:
        """Store value for ttl seconds (ttl <= 0 stores nothing); evicts the oldest beyond max_entries."""
        if ttl <= 0:
            return
        self._entries[key] = (self._clock() + ttl, value)
        self._entries.move_to_end(key)
        while len(self._entries) > self._max_entries:
            self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)
