"""Stop signals on every system, delivered to one callback on the event loop.

- Linux and macOS: SIGTERM and SIGINT through anyio's signal receiver (the loop's own handlers).
- Windows: the asyncio loop has no signal handlers there, and SIGTERM cannot be caught (killing a
  process is `TerminateProcess`). What a console process can catch is CTRL_C_EVENT (SIGINT) and
  CTRL_BREAK_EVENT (SIGBREAK): `signal.signal` handlers run on the main thread between bytecodes, so
  they hand the event to the loop with `call_soon_threadsafe`. (Desktop apps stop a server by
  closing its stdin; that end of input is the transport's business.)

If the receiver cannot be installed (another loop, or not the main thread), the handlers are tried;
if those cannot be either, no signal is watched and end of input still stops the server.

The decision is `signal_plan(platform)`, a plain value, so it is tested with the platform faked.
Must not import: session, server, other transports.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import FrameType
from typing import Any, Literal

import anyio

logger = logging.getLogger("mcp_kit.stdio")

SignalWay = Literal["receiver", "handlers"]


@dataclass(frozen=True)
class SignalPlan:
    """Which signals stop the server, and how they are caught."""

    way: SignalWay
    names: tuple[str, ...]

    def signals(self) -> list[signal.Signals]:
        """The named signals this system has."""
        return [getattr(signal, name) for name in self.names if hasattr(signal, name)]


def signal_plan(platform: str | None = None) -> SignalPlan:
    """How this system (or the given `sys.platform` value) delivers a request to stop."""
    if (platform or sys.platform) == "win32":
        return SignalPlan("handlers", ("SIGINT", "SIGBREAK"))
    return SignalPlan("receiver", ("SIGTERM", "SIGINT"))


async def watch_stop_signals(on_signal: Callable[[str], None], plan: SignalPlan | None = None) -> None:
    """Call `on_signal(name)` on the loop for every stop signal, until cancelled."""
    plan = plan or signal_plan()
    signals = plan.signals()
    if plan.way == "receiver":
        with contextlib.ExitStack() as stack:
            try:
                received = stack.enter_context(anyio.open_signal_receiver(*signals))
            except (NotImplementedError, RuntimeError, ValueError) as exc:
                logger.debug("no signal receiver here (%s); using signal handlers", exc)
            else:
                async for signum in received:
                    on_signal(signal.Signals(signum).name)
                return
    with _signal_handlers(signals, on_signal) as installed:
        if not installed:
            logger.debug("stop signals cannot be caught here; end of input still stops the server")
        await anyio.sleep_forever()


@contextlib.contextmanager
def _signal_handlers(signals: list[signal.Signals], on_signal: Callable[[str], None]) -> Iterator[bool]:
    """Install `signal.signal` handlers that pass each signal to the running loop; restore on exit."""
    loop = asyncio.get_running_loop()

    def handler(signum: int, frame: FrameType | None) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is already closed
            loop.call_soon_threadsafe(on_signal, signal.Signals(signum).name)

    previous: dict[signal.Signals, Any] = {}
    try:
        for signum in signals:
            previous[signum] = signal.signal(signum, handler)
    except ValueError as exc:  # not the main thread
        logger.debug("cannot install signal handlers: %s", exc)
    try:
        yield bool(previous)
    finally:
        for signum, old in previous.items():
            with contextlib.suppress(ValueError, TypeError):
                signal.signal(signum, old)
