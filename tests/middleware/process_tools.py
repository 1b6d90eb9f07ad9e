"""Top-level functions for `run_in="process"` tools of the middleware tests (a worker process imports them)."""

from __future__ import annotations

import time


def sleep_forever() -> str:
    time.sleep(3600)
    return "never"


def quick(n: int) -> int:
    return n + 1
