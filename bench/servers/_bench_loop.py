"""Applies the event-loop choice `BENCH_LOOP` on import; imported before any framework so every server honours it.

- `BENCH_LOOP=uvloop` (or unset): uvloop's event-loop policy is installed, so every asyncio loop a
  framework creates (anyio.run, asyncio.run, uvicorn) is a uvloop loop, and httptools must be
  importable, so uvicorn's `http="auto"` picks it (it is not imported here: a stdio server never
  loads it). Fails loudly when either is missing.
- `BENCH_LOOP=asyncio`: `uvloop` and `httptools` are made unimportable (None in `sys.modules`), so every
  framework falls back exactly as it does in an environment without them: the stdlib asyncio loop and
  uvicorn's h11 parser.

The harness checks from outside (/proc/PID/maps) which of the two native modules each server loaded.
No framework imports here.
"""

from __future__ import annotations

import os
import sys

CHOICES = ("uvloop", "asyncio")


def choice() -> str:
    """The requested event loop: `uvloop` (default) or `asyncio`."""
    value = os.environ.get("BENCH_LOOP", "uvloop")
    if value not in CHOICES:
        raise SystemExit(f"BENCH_LOOP must be one of {', '.join(CHOICES)}, not {value!r}")
    return value


def apply() -> str:
    """Make the choice effective for this process; returns it."""
    value = choice()
    if value == "asyncio":
        for name in ("uvloop", "httptools"):
            if sys.modules.get(name) is not None:
                raise SystemExit(f"BENCH_LOOP=asyncio: {name} was imported before the choice was applied")
            sys.modules[name] = None  # type: ignore[assignment]  # `import name` now raises ImportError
        return value
    import asyncio
    import importlib.util

    import uvloop

    if importlib.util.find_spec("httptools") is None:  # found, not imported: stdio servers never load it
        raise SystemExit("BENCH_LOOP=uvloop needs httptools (uvicorn's http='auto' picks it when importable)")
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    return value


apply()
