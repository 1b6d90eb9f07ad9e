"""Top-level functions for `run_in="process"` tools in tests (a worker process imports them by name).

`hold(gate)` coordinates with a test through files: it writes `<gate>.started` (its pid), waits for
`<gate>.release`, then writes `<gate>.finished`. Files, because the test and the tool are in
different processes; the waits are bounded.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from mcp_kit import ToolError

HOLD_LIMIT_S = 60.0


def crunch(n: int) -> dict[str, int]:
    """Sum of the squares below `n`, and the pid of the process that computed it."""
    return {"total": sum(i * i for i in range(n)), "pid": os.getpid()}


def refuse(reason: str) -> str:
    """Fail with a message for the model."""
    raise ToolError(reason)


def explode() -> str:
    """Fail with an unexpected exception."""
    raise ValueError("boom")


class Unrebuildable(Exception):
    """An exception whose pickle cannot be loaded (its constructor needs two arguments)."""

    def __init__(self, code: int, text: str) -> None:
        super().__init__(text)
        self.code = code


def explode_oddly() -> str:
    """Fail with an exception that cannot be pickled back."""
    raise Unrebuildable(7, "odd")


def lock() -> object:
    """Return something that cannot be pickled."""
    return threading.Lock()


def die() -> str:
    """End the worker process abruptly."""
    os._exit(3)


def announce(marker: str) -> None:
    """Write this process's pid to `marker`, whole when it appears (a test reads it as soon as it exists)."""
    Path(f"{marker}.tmp").write_text(str(os.getpid()))
    os.replace(f"{marker}.tmp", marker)


def hold(gate: str) -> str:
    """Announce the start, wait (bounded) until the test releases `gate`, announce the end."""
    base = Path(gate)
    announce(f"{base}.started")
    deadline = time.monotonic() + HOLD_LIMIT_S
    while not Path(f"{base}.release").exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{gate} was never released")
        time.sleep(0.005)
    announce(f"{base}.finished")
    return f"released {base.name}"
