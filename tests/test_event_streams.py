"""The per-session SSE event store: resumable positions, bounded memory."""

from __future__ import annotations

import pytest

from mcp_kit.transports.event_streams import SessionStreams

pytestmark = pytest.mark.anyio


def test_finished_streams_are_forgotten_oldest_first_within_the_budget() -> None:
    store = SessionStreams(max_events=10, max_bytes=1 << 20)
    live = store.open()
    live.append(b"in progress")
    for _ in range(50):
        stream = store.open()
        stream.append(b"x" * 10)
        stream.finish()
    assert store.total_events <= 12
    assert live.id in store.streams  # a stream still in progress is never dropped
    assert sum(len(s.events) for s in store.streams.values()) == store.total_events


def test_byte_budget_bounds_large_messages() -> None:
    store = SessionStreams(max_events=1000, max_bytes=4096)
    for _ in range(20):
        stream = store.open()
        stream.append(b"y" * 1024)
        stream.finish()
    store.open()
    assert store.total_bytes <= 4096 + 1024


async def test_resume_after_the_front_was_forgotten_keeps_absolute_positions() -> None:
    store = SessionStreams()
    stream = store.open("standalone")
    events = [stream.append(str(i).encode()) for i in range(6)]
    stream.forget_oldest(3)
    position = stream.index_after(events[3].id)
    stream.finish()
    assert [e.data async for e in stream.follow(position)] == [b"4", b"5"]
    assert store.find_event(events[4].id) == (stream, position + 1)
