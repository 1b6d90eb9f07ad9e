"""The per-session SSE event store: resumable positions, bounded memory."""

from __future__ import annotations

import pytest

from mcp_kit._transports.event_streams import SessionStreams

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


def test_a_json_reply_is_never_kept() -> None:
    store = SessionStreams()
    stream = store.open(resumable=False)
    stream.append(b"answer", answer=True)
    stream.finish()
    assert stream.id not in store.streams and store.total_bytes == 0 and store.budget.total_bytes == 0


def test_kept_events_hold_copies_not_the_encoders_buffer() -> None:
    store = SessionStreams()
    data = b"x" * 100
    event = store.open().append(data)
    assert event.data == data and event.data is not data


def test_replies_written_whole_are_kept_only_among_the_last_few() -> None:
    from mcp_kit._transports.event_streams import KEEP_WRITTEN

    store = SessionStreams()
    written = []
    for _ in range(KEEP_WRITTEN + 5):
        stream = store.open()
        stream.append(b"reply", answer=True)
        stream.finish()
        stream.discard()  # its reply went out in one write
        written.append(stream.id)
    assert [s for s in written if s in store.streams] == written[-KEEP_WRITTEN:]
    assert store.forgotten(f"{written[0]}-2")  # complete, and known to be gone
    assert not store.forgotten("s999-1") and not store.forgotten("other-1")


def test_finished_streams_go_after_their_grace_and_the_server_budget_bounds_all_sessions() -> None:
    from mcp_kit._transports.event_streams import StoreBudget

    budget = StoreBudget(max_bytes=1000)
    first, second = SessionStreams(budget=budget, grace=0.0), SessionStreams(budget=budget)
    old = first.open()
    old.append(b"a" * 10)
    old.finish()
    first.open()  # past its grace (0 s): forgotten when the next stream opens
    assert old.id not in first.streams
    for _ in range(5):
        stream = second.open()
        stream.append(b"b" * 300)
        stream.finish()
    second.open()
    assert budget.total_bytes <= 1000 + 300  # the server-wide bound holds across sessions
