"""What a benchmark server registers beyond `echo`/`add`/`bench://static`, chosen by environment variables.

The same plain Python functions go to every framework, so each registers identical tools:

- `BENCH_EXTRA_TOOLS=N`: N generated tools `forecast_00000 ... forecast_<N-1>` (`city: str, days: int = 1`
  -> str), for the tools-registered curve.
- `BENCH_FEATURES=busy`: the sync tool `busy(ms: int) -> str`, which burns `ms` milliseconds of its
  thread's CPU time (a plain `def`: every framework runs it in a worker thread).
- `BENCH_FEATURES=fanout`: the resource `bench://counter` and the tool `bump() -> str`, which tells
  every subscriber of `bench://counter` that it changed (each framework's own call for that).

No framework imports here.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable

STATIC_TEXT = "static resource text for the benchmark"
COUNTER_URI = "bench://counter"
BUSY_DESCRIPTION = "Burn the given number of milliseconds of CPU time in a plain (sync) function."
BUMP_DESCRIPTION = "Tell every subscriber of bench://counter that it changed."


def extra_tool_count() -> int:
    """How many generated tools to register (`BENCH_EXTRA_TOOLS`, default 0)."""
    return int(os.environ.get("BENCH_EXTRA_TOOLS", "0") or 0)


def feature(name: str) -> bool:
    """True when `name` is listed in `BENCH_FEATURES` (comma-separated)."""
    return name in {part.strip() for part in os.environ.get("BENCH_FEATURES", "").split(",")}


def generated_tool(index: int) -> Callable[[str, int], Awaitable[str]]:
    """The index-th generated tool: a coroutine function with its own name and docstring."""

    async def forecast(city: str, days: int = 1) -> str:
        return f"{city}: sunny for {days} day(s)"

    forecast.__name__ = forecast.__qualname__ = f"forecast_{index:05d}"
    forecast.__doc__ = f"Weather forecast for a city (generated tool {index})."
    return forecast


def busy(ms: int) -> str:
    """Burn `ms` milliseconds of this thread's CPU time (time spent waiting for the GIL does not count)."""
    deadline = time.thread_time() + ms / 1000
    while time.thread_time() < deadline:
        pass
    return "done"
