"""`poll_for_changes`: the body of a watcher for data that can only be polled.

    @app.watcher("price://{ticker}")
    async def watch_price(uri: str, ticker: str) -> None:
        await poll_for_changes(lambda: fetch_price(ticker), lambda: app.notify_resource_updated(uri),
                               every=15, what=uri, stop_on=(UnknownTicker,))

The watcher runs only while someone is subscribed (see `MCPServer.watcher`), so the source is
polled only then. Imports nothing from mcp_kit.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio

T = TypeVar("T")

logger = logging.getLogger("mcp_kit.polling")


def _same(value: Any) -> Any:
    return value


async def poll_for_changes(fetch: Callable[[], Awaitable[T]], on_change: Callable[[], None], *, every: float,
                           key: Callable[[T], Any] = _same, stop_on: tuple[type[BaseException], ...] = (),
                           what: str = "") -> None:
    """Call `fetch()` every `every` seconds and `on_change()` each time `key(result)` differs from the last one.

    The first result only sets the baseline. A failure of `fetch` is logged and the next poll
    comes as usual, except one of `stop_on` (say, "no such ticker"), which ends the watch with a
    warning. Runs until cancelled (or stopped): use it as the body of an `@app.watcher` function.
    """
    last: Any = None
    seen = False
    while True:
        try:
            current = key(await fetch())
        except stop_on as exc:
            logger.warning("stopped watching %s: %s", what or "a resource", exc)
            return
        except Exception as exc:
            logger.warning("polling %s failed: %s", what or "a resource", exc)
        else:
            if seen and current != last:
                on_change()
            last, seen = current, True
        await anyio.sleep(every)  # the behaviour: the source is polled every `every` seconds
