"""Server-sent events: turn the lines of a `text/event-stream` body into events (WHATWG rules)."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass


@dataclass(slots=True)
class ServerSentEvent:
    """One dispatched event; `id` is the last event id seen so far on the stream."""

    event: str
    data: str
    id: str | None = None
    retry: int | None = None


async def iter_events(lines: AsyncIterable[str]) -> AsyncIterator[ServerSentEvent]:
    """Events from a stream of lines (without their line endings); events with empty data are skipped."""
    event, data = "", list[str]()
    last_id: str | None = None
    retry: int | None = None
    async for raw in lines:
        line = raw.rstrip("\r\n")
        if not line:
            if any(data):
                yield ServerSentEvent(event or "message", "\n".join(data), last_id, retry)
            event, data, retry = "", [], None
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
        elif name == "id" and "\x00" not in value:
            last_id = value
        elif name == "retry" and value.isdigit():
            retry = int(value)
    if any(data):
        yield ServerSentEvent(event or "message", "\n".join(data), last_id, retry)
